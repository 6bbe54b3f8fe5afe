"""Potential-based reward shaping for fast-ppo: ``none`` vs ``heuristic`` vs ``tables`` on the same step budget.

:func:`potential_shaping` trains one fast-ppo run per shaping and seed (same
hyper-parameters, same step budget, rewards normalised as usual), then plays
every model greedily on the same common deals through the harness.  Outputs
(in ``out``): the run folders ``runs/<shaping>_s<seed>``, ``results.md`` /
``results.json`` (mean per run, the mean over seeds per shaping, and each
shaping's paired difference against ``none``, seeds averaged per deal) and
``curves.png`` (the in-training evaluation score against steps).
See :mod:`agents.shaping` for what the potentials are.
"""

from __future__ import annotations

import json
import sys
import warnings
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

import numpy as np

from agents.stats import fmt

__all__ = ["MAX_JOBS", "potential_shaping"]

#: the files the experiment writes into its folder beside ``runs/`` and ``evaluation/`` (a new run removes the old)
OUTPUT_FILES = ("results.md", "results.json", "curves.png")
#: the TrainConfig options the experiment sets itself (with the rule options): ``train_options`` may not set them
RESERVED = ("algo", "scoring", "shaping", "timesteps", "seed", "out")
#: the most ``jobs`` taken (more is a mistake: the runs at once are capped at the runs and the usable CPUs anyway)
MAX_JOBS = 4096


def _train(cfg: Any) -> dict[str, Any]:
    from agents.train import train

    result = train(cfg, overwrite=True)  # the experiment's own run folder (marked, checked by check_own_runs)
    if result.interrupted:
        return {"steps": result.steps, "seconds": result.seconds, "interrupted": True}
    from agents.experiments.marks import recorded_run

    return {**recorded_run(cfg.out, "potential-shaping"), "interrupted": False}


def _stop_if_interrupted(trained: dict[Any, dict[str, Any]], configs: dict[Any, Any]) -> None:
    """Ctrl-C stopped a run: say what was kept and raise KeyboardInterrupt (as reward-shaping does), rather than
    evaluate unfinished runs."""
    stopped = [key for key, r in trained.items() if r.get("interrupted")]
    if stopped:
        names = ", ".join(f"{configs[k].out} (step {trained[k]['steps']:,})" for k in stopped)
        print(f"potential-shaping: Ctrl-C stopped {names}; their checkpoints and models are kept; the runs that "
              f"finished keep theirs; no results were written", file=sys.stderr, flush=True)
        raise KeyboardInterrupt


def potential_shaping(
    out: str = "runs/potential_shaping",
    *,
    shapings: tuple[str, ...] = ("none", "heuristic", "tables"),
    seeds: tuple[int, ...] = (0, 1),
    timesteps: int = 2_000_000,
    games: int = 500,
    eval_seed: int = 0,
    scoring: str = "american",
    rules: Any = None,
    jobs: int = 1,
    eval_points: int = 10,
    train_options: dict[str, Any] | None = None,
    progress: bool = True,
    retrain: bool = False,
) -> dict[str, Any]:
    """Train fast-ppo with each shaping on each seed for ``timesteps`` steps; compare on ``games`` common deals.

    A run folder already holding a finished run of exactly the config asked for (an earlier call's, or one that
    finished before a stop) is reused, saying so on stderr (:func:`agents.experiments.marks.finished_run`);
    ``retrain=True`` trains every run again.  The seconds reported are each run's recorded training clock.

    ``rules``: the rule options of every run, of the ``tables`` potential and of the common deals (a ``Rules`` or a
    spec of ``Rules.parse`` such as ``"jokers=2,placement=adjacent"``; default the plain rules).
    ``jobs``: training runs at once (separate processes, one torch thread each), 1 to :data:`MAX_JOBS`; no more
    processes start than there are runs or usable CPUs (:func:`agents.evaluation.usable_cpus`), and a warning on
    stderr says when the CPUs capped them.  Every config is checked before
    the first run starts; the ``tables`` potential's self-play tables are trained (or loaded) once, up front.
    ``eval_points``: in-training evaluations per run (every ``timesteps // eval_points`` steps).  ``train_options``:
    extra TrainConfig options of every run (e.g. hidden, learning_rate, num_envs; not the experiment's own, nor the
    rule options).  Without matplotlib ``curves.png`` is skipped with a :class:`agents.evaluation.PlotsSkippedWarning`.
    """
    from agents.config import TrainConfig, check_trainer_installed
    from agents.evaluation import (
        PlotsSkippedWarning,
        _jsonable,
        check_out_dir,
        check_positive_int,
        check_seed,
        evaluate,
        prepare_out_dir,
        usable_cpus,
    )
    from agents.experiments.reward_shaping import _stats, read_curve, rules_options, seed_ci95, welch_ci95
    from agents.shaping import SHAPINGS, LinePotential
    from pokersquares_env.core import Rules

    out = check_out_dir(out, name="out")  # an empty out is no folder (Path('') would be the current one)
    if not isinstance(retrain, bool):
        raise TypeError(f"retrain={retrain!r}: expected True or False")
    if not shapings or any(s not in SHAPINGS for s in shapings):
        raise ValueError(f"shapings={list(shapings)!r}: expected some of {list(SHAPINGS)}")
    repeated = [s for i, s in enumerate(shapings) if s in shapings[:i]]
    if repeated:  # one run folder per shaping and seed: a repeat would train (and count) nothing more
        raise ValueError(f"shapings={list(shapings)!r}: {', '.join(map(repr, dict.fromkeys(repeated)))} given more "
                         f"than once: expected distinct shapings, some of {list(SHAPINGS)}")
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds={list(seeds)!r}: expected distinct seeds")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or not 1 <= jobs <= MAX_JOBS:
        raise ValueError(f"jobs={jobs!r}: expected an integer from 1 to {MAX_JOBS:,} (training runs at once)")
    cpus = usable_cpus()
    workers = min(jobs, len(shapings) * len(seeds), cpus)  # processes beyond the runs or the CPUs only compete
    check_positive_int(games, "games")  # the evaluation's options, before any training rather than after it
    check_seed(eval_seed, "eval_seed")
    check_positive_int(eval_points, "eval_points")
    rules = rules_options(rules)
    if train_options is not None and not isinstance(train_options, dict):
        raise ValueError(f"train_options={train_options!r}: expected a dict of TrainConfig options")
    if set(train_options or {}) & {*RESERVED, *rules}:
        raise ValueError(f"train_options={train_options!r}: may not set {', '.join(sorted({*RESERVED, *rules}))} "
                         "(the experiment's own options, and `rules` for the rule options)")
    root = Path(out)
    configs = {}
    for shaping in shapings:
        for seed in seeds:
            options = dict(
                algo="fast-ppo", scoring=scoring, shaping=shaping, timesteps=timesteps, seed=seed,
                out=str(root / "runs" / f"{shaping}_s{seed}"), eval_every=max(1, timesteps // eval_points),
                eval_games=200, checkpoint_every=0, final_eval_games=0, progress=progress and workers == 1, **rules,
            )
            options.update(train_options or {})
            configs[(shaping, seed)] = TrainConfig(**options).resolved()
    check_trainer_installed("fast-ppo")  # torch missing: said before the experiment folder is made or marked
    from agents.experiments import marks
    from agents.experiments.marks import check_own_root, check_own_runs, clear_outputs, mark_run, write_root_mark

    check_own_runs([cfg.out for cfg in configs.values()], "potential-shaping")  # never replace a run it did not write
    check_own_root(root, "potential-shaping", _older_root)  # nor results in a folder of another's
    # the runs to train: a finished run of exactly its config is reused (unless retrain), read before anything is
    # written, and only in the experiment's own run folders (check_own_runs, above)
    pending = {key: cfg for key, cfg in configs.items()
               if retrain or not marks.finished_run(Path(cfg.out), cfg, "potential-shaping")}
    if workers < min(jobs, len(pending)):  # said once every option is known good (as pokersquares evaluate says it)
        print(f"potential-shaping: warning: jobs={jobs} is more than the {cpus} CPUs this process may use: training "
              f"{workers} run{'s' if workers > 1 else ''} at once (the results are the same)", file=sys.stderr,
              flush=True)
    prepare_out_dir(root, name="out")
    clear_outputs(root, OUTPUT_FILES)  # the previous results went with the previous options: none left beside these
    write_root_mark(root, "potential-shaping", {
        "shapings": list(shapings), "seeds": list(seeds), "timesteps": timesteps, "games": games,
        "eval_seed": eval_seed, "scoring": scoring, "rules": rules, "train_options": train_options or {}})
    if any(shaping == "tables" for shaping, _seed in pending):
        LinePotential.make("tables", scoring, Rules(**rules))  # train the tables once, before the runs that share them
    for key, cfg in configs.items():
        if key in pending:
            mark_run(cfg.out, "potential-shaping")
        else:
            marks.say_reused("potential-shaping", cfg.out)
    trained = {key: {**marks.recorded_run(cfg.out, "potential-shaping"), "interrupted": False, "reused": True}
               for key, cfg in configs.items() if key not in pending}
    if workers == 1 or len(pending) <= 1:
        for key, cfg in pending.items():
            trained[key] = {**_train(cfg), "reused": False}
            _stop_if_interrupted(trained, configs)  # the next runs do not start
    else:
        waiting = list(pending.items())
        with ProcessPoolExecutor(max_workers=min(workers, len(pending))) as pool:
            running: dict[Any, Any] = {}  # future -> key, in the order submitted
            stop = False
            try:
                while waiting or running:
                    # a run is submitted only when a worker is free: the pool marks a queued run as started, so
                    # one submitted early could not be cancelled on Ctrl-C (the runs waiting would all start)
                    while waiting and not stop and len(running) < workers:
                        key, cfg = waiting.pop(0)
                        running[pool.submit(_train, cfg)] = key
                    if not running:
                        break
                    done, _ = wait(running, return_when=FIRST_COMPLETED)  # a worker is free as soon as any run ends
                    for future in [f for f in running if f in done]:
                        key = running.pop(future)
                        trained[key] = {**future.result(), "reused": False}
                        stop = stop or trained[key]["interrupted"]  # Ctrl-C: the runs still waiting do not start
            except BaseException:  # Ctrl-C here, or a run that raised: no waiting run starts either
                pool.shutdown(wait=True, cancel_futures=True)
                raise
        _stop_if_interrupted(trained, configs)
    trained = {key: {k: v for k, v in trained[key].items() if k != "interrupted"} for key in configs}
    specs = {key: f"fastppo:{cfg.out}" for key, cfg in configs.items()}
    ev = evaluate(list(specs.values()), games=games, seed=eval_seed, scoring=scoring, rules=rules,
                  out_dir=str(root / "evaluation"), progress=progress)
    if ev.errors:
        raise RuntimeError(f"{len(ev.errors)} evaluation games failed, first: {ev.errors[0]}")
    summary = {s["agent"]: s for s in ev.summary}
    deals = sorted(ev.scores(next(iter(specs.values()))))
    per_deal = {}  # every run's scores on the same deals, in the same order
    for spec in specs.values():
        scores = ev.scores(spec)
        per_deal[spec] = np.array([scores[d] for d in deals], dtype=float)
    runs = []
    for key, cfg in configs.items():
        s = summary[specs[key]]
        runs.append({"shaping": key[0], "seed": key[1], **trained[key], "mean": s["mean"], "ci95": s["ci95"],
                     "curve": read_curve(Path(cfg.out) / "curve.csv")})
    by_shaping = {}
    for shaping in shapings:
        scores = np.mean([per_deal[specs[(shaping, seed)]] for seed in seeds], axis=0)  # seeds averaged per deal
        seed_means = [summary[specs[(shaping, seed)]]["mean"] for seed in seeds]
        row = {"mean": float(scores.mean()), "ci95": _stats(scores)["ci95"], "seed_means": seed_means,
               "ci95_seeds": seed_ci95(seed_means)}
        if "none" in shapings and shaping != "none":
            base = np.mean([per_deal[specs[("none", seed)]] for seed in seeds], axis=0)
            diff = scores - base
            none_means = [summary[specs[("none", seed)]]["mean"] for seed in seeds]
            row["vs_none"] = {"mean_diff": float(diff.mean()), "ci95": _stats(diff)["ci95"],
                              "ci95_seeds": welch_ci95(seed_means, none_means)}
        by_shaping[shaping] = row
    results = {"scoring": scoring, "rules": rules, "timesteps": timesteps, "games": games, "eval_seed": eval_seed,
               "seeds": list(seeds), "train_options": dict(train_options or {}), "runs": runs,
               "shapings": by_shaping}
    root.mkdir(parents=True, exist_ok=True)
    text = markdown(results)
    (root / "results.md").write_text(text)
    # strict JSON: an interval that cannot be computed (one seed) is null
    (root / "results.json").write_text(json.dumps(_jsonable(results), indent=2, allow_nan=False) + "\n")
    try:
        _plot(results, root / "curves.png")
    except ImportError as exc:  # the results are written: the plot is an extra
        warnings.warn(PlotsSkippedWarning(f"curves.png not written: {exc}"), stacklevel=2)
    results["table"] = text
    return results


def _older_root(root: Path) -> bool:
    """Whether ``root`` is a potential-shaping folder an older version wrote (before ``experiment.json``): its
    ``results.json`` holds this experiment's results."""
    from agents.experiments.marks import ROOT_MARK, read_json

    if (root / ROOT_MARK).exists():
        return False
    data = read_json(root / "results.json")
    return isinstance(data, dict) and {"shapings", "runs", "seeds", "eval_seed", "timesteps"} <= set(data)


def markdown(results: dict[str, Any]) -> str:
    """The results as Markdown: per shaping (seeds averaged per deal) and per run."""
    from agents.experiments.marks import REUSED_NOTE
    from agents.experiments.reward_shaping import SEEDS_NOTE, _options_note, _steps_note, rules_note

    lines = [
        (f"# fast-ppo with potential-based reward shaping "
         f"({_steps_note(results['timesteps'], results['runs'])} per run, "
         f"{results['scoring']} reward{rules_note(results.get('rules') or {})}"
         f"{_options_note(results.get('train_options') or {})})"), "",
        f"Greedy policies on {results['games']:,} common deals (harness seed {results['eval_seed']}); "
        f"seeds {', '.join(map(str, results['seeds']))}.", "", SEEDS_NOTE, "",
        "| shaping | mean ± seeds (± deals) | per seed | vs none: ± seeds (Welch t) (± deals) |", "|---|---|---|---|",
    ]
    for shaping, row in results["shapings"].items():
        vs = row.get("vs_none")
        paired = "" if vs is None else f"{vs['mean_diff']:+.2f} ± {fmt(vs.get('ci95_seeds'))} (± {fmt(vs['ci95'])})"
        per_seed = ", ".join("{:.1f}".format(m) for m in row["seed_means"])
        lines.append(f"| {shaping} | {row['mean']:.2f} ± {fmt(row.get('ci95_seeds'))} (± {fmt(row['ci95'])}) | "
                     f"{per_seed} | {paired} |")
    lines += ["", "| run | steps | training s | mean ± 95% CI |", "|---|---|---|---|"]
    for r in results["runs"]:
        reused = " (reused)" if r.get("reused") else ""
        lines.append(f"| {r['shaping']} seed {r['seed']}{reused} | {r['steps']:,} | {r['seconds']:.0f} | "
                     f"{r['mean']:.2f} ± {fmt(r['ci95'])} |")
    if any(r.get("reused") for r in results["runs"]):
        lines += ["", REUSED_NOTE]
    return "\n".join(lines) + "\n"


#: curves.png draws seed number ``i`` (in sorted order) with ``SEED_STYLES[i % 4]`` and ``SEED_MARKERS[i % 5]``.
SEED_STYLES = ("-", "--", ":", "-.")
SEED_MARKERS = ("o", "s", "^", "D", "v")


def _plot(results: dict[str, Any], path: Path) -> None:
    from agents.evaluation import figure_with_legend_below, legend_below

    key = "eval_score"  # each run's own point system (the one it trained for): american, english or a file's
    colours = {"none": "tab:grey", "heuristic": "tab:blue", "tables": "tab:green"}
    runs = [r for r in results["runs"] if r["curve"].get(key)]
    labels = [f"{r['shaping']} (seed {r['seed']})" for r in runs]
    # the colour is the shaping, the line style and marker the seed: the seeds of one shaping were drawn alike, so
    # neither the curves nor the legend told them apart; (style, marker) pairs repeat only after 20 seeds
    seeds = sorted({r["seed"] for r in runs})
    fig, ax = figure_with_legend_below((7, 4.2), labels)  # below the axes: many seeds' entries cover no curve
    for r, label in zip(runs, labels, strict=True):
        i = seeds.index(r["seed"])
        ax.plot(r["curve"]["step"], r["curve"][key], ls=SEED_STYLES[i % 4], marker=SEED_MARKERS[i % 5], ms=4,
                color=colours.get(r["shaping"]), label=label)
    ax.set_xlabel("training steps")
    ax.set_ylabel(f"mean {results['scoring']} score (200 fixed deals)")
    ax.set_title("fast-ppo: reward shaping by line-value potentials")
    ax.grid(alpha=0.3)
    if runs:
        legend_below(fig, ax)
    fig.savefig(path, dpi=100)
