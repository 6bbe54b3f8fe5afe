"""The three trainers on the same budget: MaskablePPO (SB3), masked DQN and the fast vectorised PPO.

:func:`compare_trainers` trains each algorithm for the same number of steps with
the same seed and the same in-training evaluation deals, one after the other,
then plays every model on the same common deals through the harness.  Outputs
(in ``out``): the run folders, ``comparison.md`` / ``comparison.json`` (final
scores, steps per second, wall-clock) and ``trainer_curves.png`` (evaluation score
against steps and against wall-clock seconds).
"""

from __future__ import annotations

import json
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

from agents.stats import fmt

OUTPUT_FILES = ("comparison.md", "comparison.json", "trainer_curves.png")  # the results, removed before a rerun
#: the TrainConfig options the comparison sets for every run alike (with the rule options): the same budget (a
#: time limit would cut one run short of it), seed, reward and in-training evaluations; ``train_options`` may not set
#: them
RESERVED = ("algo", "scoring", "shaping", "reward_mode", "reward_scale", "timesteps", "time_limit", "seed", "out",
            "eval_every", "eval_games", "eval_seed", "checkpoint_every", "final_eval_games", "final_eval_seed",
            "progress")
#: where the comparison's own options are given instead (the others are the experiment's alone)
_SHARED_FLAGS = {"scoring": "--scoring", "shaping": "--shaping", "timesteps": "--timesteps", "seed": "--seed",
                 "jokers": "--rules", "placement": "--rules", "first_cell": "--rules"}

__all__ = ["RESERVED", "compare_trainers"]


def compare_trainers(
    out: str = "runs/compare_trainers",
    *,
    timesteps: int = 200_000,
    seed: int = 0,
    algos: tuple[str, ...] = ("maskable-ppo", "dqn", "fast-ppo"),
    games: int = 500,
    eval_points: int = 5,
    scoring: str = "american",
    shaping: str = "none",
    rules: Any = None,
    net: str | None = None,
    train_options: dict[str, dict[str, Any]] | None = None,
    progress: bool = True,
    retrain: bool = False,
) -> dict[str, Any]:
    """Train each algorithm on the same budget and compare learning curves and final scores on common deals.

    ``timesteps``: each run's budget (rounded up to its whole updates); ``seed``: the seed of every run (the common
    deals are the harness's deals of ``seed + 1``); ``algos``: the algorithms compared, each once; ``games``: the
    common deals of the final score.  ``eval_points``: in-training evaluations per run (every
    ``timesteps // eval_points`` steps, 200 deals each), a positive integer.
    ``scoring``: the reward and evaluation point system: ``"american"``, ``"english"`` or a JSON point-system file.
    ``shaping``: the potential-based reward shaping of every run (:mod:`agents.shaping`; default none).
    ``rules``: the rule options of every run and of the common deals (a ``Rules`` or a spec of ``Rules.parse``
    such as ``"jokers=2,placement=adjacent"``; default the plain rules).
    ``net``: the network of every run, ``"mlp"`` or ``"lines"`` (default ``None``: each algorithm's own, MaskablePPO's
    MLP and the lines network of dqn and fast-ppo); with ``"lines"`` MaskablePPO trains ``agents.sb3_policy``'s
    ``LinesPolicy``.  ``train_options``: more :class:`~agents.config.TrainConfig` options of single runs, as
    ``{algo: {option: value}}`` (e.g. ``{"fast-ppo": {"minibatch_size": 400}}``; the command line's
    ``--set fast-ppo.minibatch_size=400``), over the algorithm's defaults; ``train_options[algo]`` may set that run's
    ``net``.  The options the comparison holds equal for every run (:data:`RESERVED`: budget, seed, reward,
    evaluations) and the rule options may not be set, and every key must be one of ``algos``.

    A run folder (``out/<algo>``) already holding a finished run of exactly the config asked for (an earlier
    comparison's, or one stopped after that algorithm finished) is reused, saying so on stderr, and its training
    seconds are those it recorded; ``retrain=True`` trains every algorithm again.  Any other run of the experiment is
    trained from the start.  The seconds compared are each run's training clock (``progress.json``), which starts
    after its reward-shaping potential is built.
    """
    from agents.config import (
        ALGOS,
        ConfigError,
        TrainConfig,
        check_dqn_budget,
        check_trainer_installed,
        dqn_min_timesteps,
    )
    from agents.evaluation import _jsonable, check_out_dir, check_positive_int, evaluate, prepare_out_dir
    from agents.experiments.marks import (
        REUSED_NOTE,
        check_own_root,
        check_own_runs,
        clear_outputs,
        finished_run,
        mark_run,
        recorded_run,
        say_reused,
        write_root_mark,
    )
    from agents.experiments.reward_shaping import read_curve, rules_note, rules_options
    from agents.train import AGENT_PREFIX, train
    from pokersquares_env.scoring import point_system

    out = check_out_dir(out, name="out")  # an empty out is no folder (Path('') would be the current one)
    if not isinstance(retrain, bool):
        raise TypeError(f"retrain={retrain!r}: expected True or False")
    check_positive_int(games, "games")  # before any training, not after it
    check_positive_int(eval_points, "eval_points")
    if isinstance(algos, str) or not algos:
        raise ValueError(f"algos={algos!r}: expected a non-empty list of algorithms, of {sorted(ALGOS)}")
    for algo in algos:
        if not isinstance(algo, str) or algo not in ALGOS:
            raise ValueError(f"algos: {algo!r}: expected some of {sorted(ALGOS)}")
    repeated = sorted({a for a in algos if list(algos).count(a) > 1})
    if repeated:  # one run folder (and one evaluation spec) per algorithm
        raise ValueError(f"algos={list(algos)!r}: {', '.join(map(repr, repeated))} given more than once: expected "
                         f"each algorithm once")
    rules = rules_options(rules)
    nets = {} if net is None else {"net": net}  # TrainConfig checks the value, naming it, before any run
    train_options = _check_train_options(train_options, algos, rules)
    root = Path(out)
    configs = []

    def config(algo: str, own: dict[str, Any]) -> TrainConfig:  # checked, the point system too
        return TrainConfig(
            algo=algo, scoring=scoring, shaping=shaping, timesteps=timesteps, seed=seed, out=str(root / algo),
            eval_every=max(1, timesteps // eval_points), eval_games=200, checkpoint_every=0, final_eval_games=0,
            progress=progress, **{**rules, **nets, **own},
        ).resolved()

    for algo in algos:  # every config is checked before the first run
        own = train_options.get(algo, {})
        try:
            configs.append(config(algo, own))
        except ConfigError as exc:  # named with its run if the run's own options cause it (a bad value, or one a
            # default must fit, as minibatch_size must fit num_envs): the run's config without them is valid
            if not own:
                raise
            try:
                config(algo, {})
            except ConfigError:
                raise exc from None  # a shared value is wrong too: said as it is
            raise ConfigError(f"the {algo} run (its options: train_options, --set): {exc}") from None
        # a dqn budget too short to learn is refused now, not after the other runs
        check_dqn_budget(configs[-1], f"raise --timesteps to at least {dqn_min_timesteps(configs[-1]):,}, to reach "
                                      f"dqn's learning_starts ({configs[-1].learning_starts:,}), or lower "
                                      f"learning_starts: --set dqn.learning_starts=N")
    for cfg in configs:  # and a trainer whose packages are missing (sb3-contrib, torch), before anything is written
        check_trainer_installed(cfg.algo)
    check_out_dir(root, name="out")  # an out that is a file is named before any training
    check_own_runs([cfg.out for cfg in configs], "compare-trainers")  # never replace a run it did not write
    check_own_root(root, "compare-trainers", _older_root)  # nor results in a folder of another's (a run folder)
    # which runs to train: a finished run of exactly its config is reused (unless retrain); read before anything is
    # written, and only in the experiment's own run folders (check_own_runs, above)
    todo = {cfg.algo: retrain or not finished_run(Path(cfg.out), cfg, "compare-trainers") for cfg in configs}
    prepare_out_dir(root, name="out")
    clear_outputs(root, OUTPUT_FILES)  # the previous comparison went with the previous options: none left beside these
    write_root_mark(root, "compare-trainers", {"timesteps": timesteps, "seed": seed, "algos": list(algos),
                                               "games": games, "scoring": scoring, "shaping": shaping,
                                               "rules": rules, "net": net, "train_options": train_options})
    system = point_system(scoring).name
    if shaping == "tables" and any(todo.values()):  # train (or load) the tables once, before the first run is timed (each run's clock
        from agents.shaping import LinePotential  # starts after its own potential is built, from this cache)
        from pokersquares_env.core import Rules

        LinePotential.make("tables", scoring, Rules(**rules))
    rows = []
    for cfg in configs:
        if todo[cfg.algo]:
            mark_run(cfg.out, "compare-trainers")
            result = train(cfg, overwrite=True)  # the experiment's own run folder (check_own_runs)
            if result.interrupted:  # Ctrl-C: stop here, as reward-shaping does (no comparison of unfinished runs)
                print(f"compare-trainers: Ctrl-C stopped the {cfg.algo} run at step {result.steps:,}; its checkpoint "
                      f"and model are kept in {cfg.out}; no comparison was written; the algorithms finished before "
                      f"it are reused by the same command", file=sys.stderr, flush=True)
                raise KeyboardInterrupt
        else:
            say_reused("compare-trainers", cfg.out, f"{cfg.algo} run")
        done = recorded_run(cfg.out, "compare-trainers")  # steps and training seconds
        rows.append({"algo": cfg.algo, "net": cfg.net, "options": train_options.get(cfg.algo, {}),
                     "steps": done["steps"], "seconds": done["seconds"],
                     "steps_per_second": done["steps"] / max(done["seconds"], 1e-9),
                     "spec": f"{AGENT_PREFIX[cfg.algo]}:{cfg.out}", "reused": not todo[cfg.algo]})
    ev = evaluate([r["spec"] for r in rows], games=games, seed=seed + 1, scoring=scoring, rules=rules,
                  out_dir=str(root / "evaluation"), progress=progress)
    summary = {s["agent"]: s for s in ev.summary}
    for r in rows:
        s = summary[r["spec"]]
        r.update(mean=s["mean"], ci95=s["ci95"], errors=s["errors"], games=s["games"])
        r["curve"] = read_curve(root / r["algo"] / "curve.csv")
    lines = [
        (f"# Trainers on the same budget ({timesteps:,} steps asked, each rounded up to its whole updates: the steps "
         f"column; seed {seed}, {system} reward, shaping {shaping}"
         f"{rules_note(rules)})"), "",
        f"Final score: greedy policy, {games:,} common deals (harness seed {seed + 1}).", "",
        *_options_lines(train_options, algos),
        "| algorithm | network | steps | training s | steps/s | final mean ± 95% CI |", "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['algo']}{' (reused)' if r['reused'] else ''} | {r['net']} | {r['steps']:,} | "
                     f"{r['seconds']:.0f} | {r['steps_per_second']:.0f} | {r['mean']:.2f} ± {fmt(r['ci95'])} |")  # n/a: 1 deal
    if any(r["reused"] for r in rows):
        lines += ["", REUSED_NOTE]
    (root / OUTPUT_FILES[0]).write_text("\n".join(lines) + "\n")
    (root / OUTPUT_FILES[1]).write_text(json.dumps(_jsonable(rows), indent=2, allow_nan=False) + "\n")
    _plot(rows, root / OUTPUT_FILES[2], system)
    return {"rows": rows, "rules": rules, "table": "\n".join(lines) + "\n"}


def _check_train_options(train_options: Any, algos: tuple[str, ...], rules: dict[str, Any]) -> dict[str, dict]:
    """``train_options`` checked: ``{algo: {option: value}}`` of the algorithms compared, with TrainConfig options
    the comparison leaves to each run (a copy; ``{}`` for ``None``).  The values themselves are checked by
    TrainConfig, naming them, before any run starts."""
    from agents.config import ALGO_OPTIONS, ConfigError, TrainConfig

    if train_options is None:
        return {}
    if not isinstance(train_options, dict):
        raise ValueError(f"train_options={train_options!r}: expected a dict of algorithm -> {{option: value}}")
    names = {f.name for f in fields(TrainConfig)}
    checked = {}
    for algo, extra in train_options.items():
        if algo not in algos:
            raise ValueError(f"options of a {algo!r} run (train_options, --set): not an algorithm of this "
                             f"comparison; expected some of {list(algos)}")
        if not isinstance(extra, dict):
            raise ValueError(f"options of the {algo} run (train_options[{algo!r}]={extra!r}): expected a dict of "
                             f"option -> value")
        where = f"options of the {algo} run (train_options, --set)"
        own = {n for n in names - {*RESERVED, *rules} if algo in ALGO_OPTIONS.get(n, (algo,))}  # it may set
        unknown = sorted(set(extra) - names, key=str)
        if unknown:
            raise ConfigError(f"{where}: unknown option(s) {unknown}; expected some of {sorted(own)}")
        held = sorted(set(extra) & {*RESERVED, *rules})
        if held:
            flags = sorted({_SHARED_FLAGS[n] for n in held if n in _SHARED_FLAGS})
            how = f" (give {' and '.join(flags)})" if flags else ""
            raise ValueError(f"{where}: may not set {', '.join(held)}: the comparison sets "
                             f"{'it' if len(held) == 1 else 'them'} for every run alike{how}")
        unused = sorted(set(extra) - own)
        if unused:  # the run would ignore them (and a changed value would retrain it for nothing)
            users = "; ".join(f"{n} is an option of {' and '.join(ALGO_OPTIONS[n])} only" for n in unused)
            raise ConfigError(f"{where}: {users}: {algo} does not use {'it' if len(unused) == 1 else 'them'}")
        checked[algo] = dict(extra)
    return checked


def _options_lines(train_options: dict[str, dict], algos: tuple[str, ...]) -> list[str]:
    """The heading's lines naming the options given to single runs (none: no lines)."""
    given = [f"{algo} " + ", ".join(f"{k}={json.dumps(v)}" for k, v in train_options[algo].items())
             for algo in algos if train_options.get(algo)]
    return [f"Options of single runs (over their defaults): {'; '.join(given)}.", ""] if given else []


def _older_root(root: Path) -> bool:
    """Whether ``root`` is a compare-trainers folder of an older version: an ``experiment.json`` of its options
    without ``written_by``, or (before that file) a ``comparison.json`` of its rows."""
    from agents.experiments.marks import ROOT_MARK, read_json

    data = read_json(root / ROOT_MARK)
    if isinstance(data, dict):
        return {"timesteps", "seed", "algos", "games"} <= set(data)
    rows = read_json(root / "comparison.json")
    return (isinstance(rows, list) and bool(rows)
            and all(isinstance(r, dict) and {"algo", "steps", "spec"} <= set(r) for r in rows))


def _plot(rows: list[dict[str, Any]], path: Path, system: str) -> None:
    """Each run's in-training evaluation score (its own point system) against steps and against seconds."""
    from agents.evaluation import pyplot

    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for r in rows:
        c = r["curve"]
        axes[0].plot(c["step"], c["eval_score"], marker="o", label=r["algo"])
        axes[1].plot(c["seconds"], c["eval_score"], marker="o", label=r["algo"])
    axes[0].set_xlabel("training steps")
    axes[1].set_xlabel("wall-clock seconds")
    for ax in axes:
        ax.set_ylabel(f"mean {system} score (fixed deals)")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
