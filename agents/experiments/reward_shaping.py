"""Does the reward's point system matter?  English vs American reward x line vs terminal reward.

For every training system (American, English), reward mode (line, terminal) and
seed, :func:`run_experiment` trains a fast masked PPO agent (:mod:`agents.fast_ppo`)
on the same budget with normalised rewards (``reward_scale="normalized"``: each
system's points divided by its expected random-play score, so both share a
scale).  Every agent then plays the same common deals through the evaluation
harness, and each game is scored under both systems.  Outputs (in ``out``)::

    runs/<system>-<mode>-s<seed>/  the training run folders (model, curve.csv, TensorBoard, ...)
    evaluation/                    the harness output for all agents (games.jsonl, summary, hands)
    results.md                     the tables below, in Markdown
    results.json                   the same numbers
    learning_curves.png            evaluation score during training, under both systems
    hands.png                      hand-category frequencies per training condition

Tables: mean per training condition x evaluation system with two 95%
intervals (:data:`SEEDS_NOTE`): over the training seeds (Student's t over the
seed means) and over the common deals (seeds averaged per deal), with the
seed-to-seed sd; paired differences on common deals (American- minus
English-trained; line minus terminal), with the same two intervals (Welch's t
over the seed means); and the share of lines ending in each hand category.
An interval that cannot be computed (one seed) is ``null`` in results.json.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.stats import fmt, mean_ci95, seed_ci95, t975, welch_ci95  # noqa: F401 - t975 is part of this module's API

__all__ = ["FULL", "SMALL", "ExperimentConfig", "analyse", "rules_options", "run_experiment"]

EVAL_SYSTEMS = ("american", "english")
#: the files the experiment writes into its folder beside ``runs/`` and ``evaluation/`` (a new run removes the old)
OUTPUT_FILES = ("results.md", "results.json", "learning_curves.png", "hands.png")
HAND_COLUMNS = ("high_card", "one_pair", "two_pair", "three_of_a_kind", "straight", "flush", "full_house", "four_of_a_kind",
                "straight_flush", "royal_flush")


@dataclass
class ExperimentConfig:
    """Options of the reward-shaping experiment."""

    out: str = "runs/reward_shaping"
    """experiment folder"""
    systems: list[str] = field(default_factory=lambda: ["american", "english"])
    """point systems used as training reward"""
    reward_modes: list[str] = field(default_factory=lambda: ["line", "terminal"])
    """reward modes: 'line' (points as lines complete) and/or 'terminal' (the score at the end)"""
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2])
    """training seeds per condition (>= 3 for a spread)"""
    timesteps: int = 150_000
    """training steps per run (the same budget for every run)"""
    games: int = 500
    """common evaluation deals per agent"""
    eval_seed: int = 20_260
    """seed of the common evaluation deals"""
    rules: Any = None
    """rule options of every run and of the evaluation deals: a ``Rules``, a spec of ``Rules.parse`` such as
    ``"jokers=2,placement=adjacent,first_cell=center"``, a mapping or a JSON file; ``None``: the plain rules"""
    train_options: dict[str, Any] = field(default_factory=dict)
    """extra TrainConfig options for every run (e.g. hidden, learning_rate, num_envs)"""
    jobs: int = 1
    """evaluation processes"""
    retrain: bool = False
    """train again even when a run folder already holds a finished model"""
    progress: bool = True
    """show progress bars"""

    def validate(self) -> None:
        """Raise ValueError naming the first bad option."""
        if isinstance(self.systems, (list, tuple)):  # before the repeats check: a dict among them is unhashable
            for system in self.systems:
                if not isinstance(system, (str, os.PathLike)):
                    raise ValueError(f"systems: {system!r}: expected 'american', 'english' or a JSON file path")
        for name in ("systems", "reward_modes", "seeds"):
            value = getattr(self, name)
            if not isinstance(value, (list, tuple)) or not value or len(set(value)) != len(value):
                raise ValueError(f"{name}={value!r}: expected a non-empty list without repeats")
        for mode in self.reward_modes:
            if mode not in ("line", "terminal"):
                raise ValueError(f"reward_modes: {mode!r}: expected 'line' or 'terminal'")
        for name in ("timesteps", "games", "jobs"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name}={value!r}: expected a positive integer")
        from agents.evaluation import check_seed

        check_seed(self.eval_seed, "eval_seed")
        reserved = {"scoring", "reward_mode", "seed", "out", "algo", "timesteps", "reward_scale", *RULE_FIELDS}
        if not isinstance(self.train_options, dict) or set(self.train_options) & reserved:
            raise ValueError(f"train_options={self.train_options!r}: may not set {', '.join(sorted(reserved))} "
                             "(the experiment's own options, and `rules` for the rule options)")
        for system in self.systems:  # every run's TrainConfig (its bounds too: num_envs, hidden, ...), before the
            for mode in self.reward_modes:  # experiment folder is made or marked
                for seed in self.seeds:
                    self.train_config(system, mode, seed).resolved()  # validates every option
        slugs: dict[str, str] = {}
        for system in self.systems:  # each system's runs need folders (and table rows) of their own; folder names
            # differing only in case are one folder on a case-insensitive file system (and 'American' is American)
            other = slugs.setdefault(_slug(system).lower(), system)
            if other != system:
                raise ValueError(f"systems: {other!r} and {system!r} would share the run folders "
                                 f"runs/{_slug(system)}-<mode>-s<seed> (a point-system file is named by its file "
                                 f"name without .json): expected systems with different names; rename one file")

    def run_dir(self, system: str, mode: str, seed: int) -> Path:
        """The training run folder of one condition and seed."""
        return Path(self.out) / "runs" / f"{_slug(system)}-{mode}-s{seed}"

    def train_config(self, system: str, mode: str, seed: int):
        """The TrainConfig of one run."""
        from agents.config import TrainConfig

        options = dict(
            algo="fast-ppo", scoring=os.fspath(system), reward_mode=mode, reward_scale="normalized", seed=seed,
            timesteps=self.timesteps, out=str(self.run_dir(system, mode, seed)),
            eval_every=max(1, self.timesteps // 6), eval_games=200, checkpoint_every=0, final_eval_games=0,
            progress=self.progress, **rules_options(self.rules),
        )
        options.update(self.train_options)
        return TrainConfig(**options)


#: the default budget: finishes in minutes on a 2-core machine
SMALL = ExperimentConfig()
#: the documented full budget (about 12 x 3M steps)
FULL = ExperimentConfig(timesteps=3_000_000, games=2_000, out="runs/reward_shaping_full")


#: the TrainConfig fields that are rule options (``Rules.to_json``'s keys)
RULE_FIELDS = ("jokers", "placement", "first_cell")


def rules_options(rules: Any) -> dict[str, Any]:
    """The rule options (``jokers``, ``placement``, ``first_cell``) of ``rules`` -- ``None`` (the plain rules), a
    ``Rules``, or a spec of ``Rules.parse`` -- as TrainConfig and the harness take them; ValueError names a bad one."""
    from pokersquares_env.core import Rules

    return (Rules() if rules is None else Rules.parse(rules)).to_json()


def hand_columns(rules: dict[str, Any]) -> tuple[str, ...]:
    """The hand categories of the hand-share tables: :data:`HAND_COLUMNS`, with five of a kind when jokers are in."""
    if not rules.get("jokers"):
        return HAND_COLUMNS
    i = HAND_COLUMNS.index("four_of_a_kind") + 1
    return (*HAND_COLUMNS[:i], "five_of_a_kind", *HAND_COLUMNS[i:])


def rules_note(rules: Any) -> str:
    """``", rules jokers=1,..."`` for a results heading (``rules``: a ``Rules`` or a spec of ``Rules.parse``), or
    ``""`` under the plain rules (:meth:`Rules.to_spec`: the first cell by name or coordinates)."""
    from pokersquares_env.core import Rules

    spec = Rules.parse(rules).to_spec()
    return f", rules {spec}" if spec else ""


def _conditions_heading(cfg: dict[str, Any]) -> str:
    """The training conditions that ran, for a heading: ``'American vs English reward, line vs terminal'``, or with
    one system or one reward mode e.g. ``'American reward, line vs terminal'``, ``'American reward, line'``."""
    systems = [s.capitalize() if s in EVAL_SYSTEMS else _slug(s) for s in cfg.get("systems", EVAL_SYSTEMS)]
    return f"{' vs '.join(systems)} reward, {' vs '.join(cfg.get('reward_modes', ('line', 'terminal')))}"


def _slug(system: str | os.PathLike) -> str:
    if isinstance(system, os.PathLike):
        system = os.fspath(system)
    if not isinstance(system, str):  # a bad system: validation names it
        return str(system)
    return Path(system).stem if system not in EVAL_SYSTEMS else system


def _finished(folder: Path, train_cfg) -> bool:
    """Whether ``folder`` holds a finished run of exactly ``train_cfg`` (:func:`agents.experiments.marks.finished_run`)."""
    from agents.experiments.marks import finished_run

    return finished_run(folder, train_cfg, "reward-shaping")


def _older_root(root: Path) -> bool:
    """Whether ``root`` is a reward-shaping folder of a version before ``experiment.json`` had ``written_by``: its
    ``experiment.json`` holds :class:`ExperimentConfig`'s options."""
    from agents.experiments.marks import ROOT_MARK, read_json

    data = read_json(root / ROOT_MARK)
    fields_ = {f.name for f in dataclasses.fields(ExperimentConfig)}
    return isinstance(data, dict) and {"systems", "reward_modes", "seeds", "timesteps", "games"} <= set(data) <= fields_


def run_experiment(config: ExperimentConfig | None = None, **options: Any) -> dict[str, Any]:
    """Train every condition x seed, evaluate all agents on common deals, write the tables and plots; the results."""
    from agents.evaluation import check_out_dir, evaluate, prepare_out_dir
    from agents.experiments.marks import (
        check_own_root,
        check_own_runs,
        clear_outputs,
        mark_run,
        say_reused,
        write_root_mark,
    )
    from agents.train import _read_progress, train

    cfg = dataclasses.replace(config or ExperimentConfig(), **options)
    check_out_dir(cfg.out, name="out")  # an empty out is no folder (Path('') would be the current one)
    cfg.validate()
    from agents.config import check_trainer_installed

    check_trainer_installed("fast-ppo")  # torch missing: said before the experiment folder is made or marked
    if any(isinstance(s, os.PathLike) for s in cfg.systems):  # file paths as text in experiment.json and results
        cfg = dataclasses.replace(cfg, systems=[os.fspath(s) for s in cfg.systems])
    cfg = dataclasses.replace(cfg, rules=rules_options(cfg.rules))  # JSON-ready in experiment.json and results
    out = Path(cfg.out)
    check_out_dir(out, name="out")  # ValueError naming an out that is a file, before anything is read or trained
    # which runs to train: a finished run of exactly this config is reused (unless retrain), any other is trained
    # again -- but only in a run folder of this experiment's own (check_own_runs: every planned folder, the reused
    # ones too), before any training starts
    plan = []
    for system in cfg.systems:
        for mode in cfg.reward_modes:
            for seed in cfg.seeds:
                tc = cfg.train_config(system, mode, seed)
                folder = cfg.run_dir(system, mode, seed)
                plan.append((system, mode, seed, tc, folder, cfg.retrain or not _finished(folder, tc)))
    check_own_runs([folder for *_, folder, _todo in plan], "reward-shaping")
    check_own_root(out, "reward-shaping", _older_root)  # and results, plots and evaluation/ only in its own folder
    prepare_out_dir(out, name="out")
    # the previous results describe the previous options: removed with the mark they went with, so an interrupted or
    # failed run leaves none beside the new experiment.json
    clear_outputs(out, OUTPUT_FILES)
    write_root_mark(out, "reward-shaping", dataclasses.asdict(cfg))
    runs = []
    for system, mode, seed, tc, folder, todo in plan:
        if todo:
            if cfg.progress:
                print(f"training {folder.name} ({cfg.timesteps} steps)", flush=True)
            mark_run(folder, "reward-shaping")
            result = train(tc, overwrite=True)  # an unfinished or mismatched run of this experiment
            if result.interrupted:  # said as potential-shaping and compare-trainers say it
                print(f"reward-shaping: Ctrl-C stopped {folder} (step {result.steps:,}); its checkpoint and model are "
                      f"kept; runs finished before it: {len(runs)} (a rerun with the same options reuses them); no "
                      f"results were written", file=sys.stderr, flush=True)
                raise KeyboardInterrupt
        else:
            say_reused("reward-shaping", folder)
        trained = _read_progress(folder / "progress.json", "reward-shaping")["steps"]
        runs.append({"system": system, "mode": mode, "seed": seed, "dir": str(folder),
                     "spec": f"fastppo:{folder}", "steps": trained, "reused": not todo})
    specs = [r["spec"] for r in runs]
    with warnings.catch_warnings():  # by design: every run plays the same deals, scored under both systems
        warnings.filterwarnings("ignore", message=r".* was trained for '.*' points \(here 'american'\)",
                                category=RuntimeWarning)
        ev = evaluate(specs, games=cfg.games, seed=cfg.eval_seed, scoring="american", rules=cfg.rules, jobs=cfg.jobs,
                      out_dir=str(out / "evaluation"), progress=cfg.progress)
    bad = ev.errors
    if bad:
        raise RuntimeError(f"{len(bad)} evaluation games failed, first: {bad[0]}")
    results = analyse(cfg, runs, ev)
    write_outputs(cfg, results)
    return results


def _stats(values: np.ndarray) -> dict[str, float]:
    return {"mean": float(values.mean()), "ci95": mean_ci95(values), "n": int(values.size)}


def analyse(cfg: ExperimentConfig, runs: list[dict[str, Any]], ev: Any) -> dict[str, Any]:
    """The tables of the experiment from the harness result ``ev`` of the agents in ``runs``."""
    conditions = [(s, m) for s in cfg.systems for m in cfg.reward_modes]
    deals = sorted(ev.scores(runs[0]["spec"]))
    # scores[condition][eval_system] -> array (seeds, deals)
    scores: dict[tuple[str, str], dict[str, np.ndarray]] = {}
    for cond in conditions:
        specs = [r["spec"] for r in runs if (r["system"], r["mode"]) == cond]
        scores[cond] = {
            es: np.array([[ev.scores(sp, es)[d] for d in deals] for sp in specs], dtype=np.float64)
            for es in EVAL_SYSTEMS
        }
    table = []
    for cond in conditions:
        row: dict[str, Any] = {"train_system": _slug(cond[0]), "reward_mode": cond[1], "seeds": len(cfg.seeds)}
        for es in EVAL_SYSTEMS:
            arr = scores[cond][es]
            st = _stats(arr.mean(0))  # seeds averaged per deal, as SEEDS_NOTE says (not seeds x deals pooled)
            row[f"{es}_mean"] = st["mean"]
            row[f"{es}_ci95"] = st["ci95"]
            seed_means = arr.mean(1)
            row[f"{es}_seed_sd"] = float(seed_means.std(ddof=1)) if len(seed_means) > 1 else math.nan
            row[f"{es}_ci95_seeds"] = seed_ci95(seed_means)
            row[f"{es}_seed_means"] = [float(x) for x in seed_means]
        table.append(row)

    paired = []

    def pair(a: tuple[str, str], b: tuple[str, str], what: str) -> None:
        for es in EVAL_SYSTEMS:
            d = scores[a][es].mean(0) - scores[b][es].mean(0)  # per deal, seeds averaged
            st = _stats(d)
            paired.append({
                "comparison": what, "a": f"{_slug(a[0])}/{a[1]}", "b": f"{_slug(b[0])}/{b[1]}", "eval_system": es,
                "mean_diff": st["mean"], "ci95": st["ci95"], "deals": st["n"],
                "ci95_seeds": welch_ci95(scores[a][es].mean(1), scores[b][es].mean(1)),
                "a_better": int((d > 0).sum()), "b_better": int((d < 0).sum()),
            })

    if len(cfg.systems) >= 2:
        for mode in cfg.reward_modes:
            for other in cfg.systems[1:]:
                pair((cfg.systems[0], mode), (other, mode), f"{_slug(cfg.systems[0])} - {_slug(other)} reward ({mode})")
    if len(cfg.reward_modes) >= 2:
        for system in cfg.systems:
            pair((system, cfg.reward_modes[0]), (system, cfg.reward_modes[1]),
                 f"{cfg.reward_modes[0]} - {cfg.reward_modes[1]} reward ({_slug(system)})")

    freqs = ev.hand_frequencies()
    columns = hand_columns(rules_options(cfg.rules))
    hands = []
    for cond in conditions:
        specs = [r["spec"] for r in runs if (r["system"], r["mode"]) == cond]
        row = {"train_system": _slug(cond[0]), "reward_mode": cond[1]}
        for kind in ("all", "rows", "columns"):
            for h in columns:
                row[f"{kind}:{h}"] = float(np.mean([freqs[sp][kind][h] for sp in specs]))
        hands.append(row)

    curves = {}
    for cond in conditions:
        per_seed = []
        for r in runs:
            if (r["system"], r["mode"]) != cond:
                continue
            per_seed.append(read_curve(Path(r["dir"]) / "curve.csv"))
        curves[f"{_slug(cond[0])}/{cond[1]}"] = per_seed
    return {
        "config": dataclasses.asdict(cfg), "deals": len(deals), "table": table, "paired": paired, "hands": hands,
        "hand_columns": list(columns), "curves": curves, "runs": runs,
    }


def read_curve(path: Path) -> dict[str, list[float]]:
    """The evaluation rows of a run's curve.csv: step, seconds, eval_score (the run's system), eval_american, eval_english."""
    out: dict[str, list[float]] = {"step": [], "seconds": [], "eval_score": [], "eval_american": [], "eval_english": []}
    if not path.exists():
        return out
    with path.open() as fh:
        for row in csv.DictReader(fh):
            if row.get("eval_american"):
                for key in out:
                    out[key].append(float(row[key]))
    return out


SEEDS_NOTE = (
    "Two 95% intervals. **± seeds** treats the training seeds as the replicates (Student's t over the seed means; "
    "Welch's t for a difference between two conditions): it answers whether the *training procedure* gives better "
    "agents, and with few seeds it is wide. **± deals** (Student's t over the common deals, seeds averaged "
    "per deal) holds the trained agents fixed: it answers only whether *these* agents differ, and leaves out the "
    "seed-to-seed variance. Claims about reward systems need the seed interval."
)


def _steps_note(asked: int, runs: list[dict[str, Any]]) -> str:
    """``'2,000 steps'``, or the steps trained when the trainer rounded the budget up to whole updates."""
    trained = sorted({r["steps"] for r in runs if r.get("steps") is not None})
    if not trained or trained == [asked]:
        return f"{asked:,} steps"
    done = f"{trained[0]:,}" if len(trained) == 1 else f"{trained[0]:,} to {trained[-1]:,}"
    return f"{done} steps ({asked:,} asked, rounded up to whole updates)"


def _reused_note(runs: list[dict[str, Any]]) -> str:
    """``" Reused: ..."`` naming the runs this call did not train (finished runs of the same config found in their
    folders), for the results heading; ``""`` when it trained them all."""
    reused = [Path(r["dir"]).name for r in runs if r.get("reused")]
    if not reused:
        return ""
    return (f" Reused, not trained by this call (finished runs of the same config found in their folders; their "
            f"models are evaluated as trained then): {', '.join(reused)}.")


def _options_note(options: dict[str, Any]) -> str:
    """``", shaping heuristic, num_envs 16"`` -- the extra training options of every run -- for a results heading
    (``""`` without any)."""
    shown = [f"{k} {' '.join(map(str, v)) if isinstance(v, (list, tuple)) else v}" for k, v in options.items()]
    return "".join(f", {s}" for s in shown)


def markdown(results: dict[str, Any]) -> str:
    """The experiment's tables in Markdown."""
    cfg = results["config"]
    columns = results.get("hand_columns", HAND_COLUMNS)
    lines = [
        f"# Reward shaping: {_conditions_heading(cfg)}",
        "",
        (f"fast-ppo, {_steps_note(cfg['timesteps'], results.get('runs', []))} per run, seeds {cfg['seeds']}"
         f"{rules_note(cfg.get('rules') or {})}, "
         f"normalised rewards{_options_note(cfg.get('train_options') or {})}; {results['deals']:,} common deals "
         f"(seed {cfg['eval_seed']}), every game scored under both systems.{_reused_note(results.get('runs', []))}"),
        "",
        "## Mean score",
        "",
        SEEDS_NOTE,
        "",
        "| trained on | reward | American eval: mean ± seeds (± deals) | English eval: mean ± seeds (± deals) |",
        "|---|---|---|---|",
    ]
    for r in results["table"]:
        cells = [
            f"{r[f'{es}_mean']:.2f} ± {fmt(r.get(f'{es}_ci95_seeds'))} (± {fmt(r[f'{es}_ci95'])}; seed sd "
            f"{fmt(r[f'{es}_seed_sd'])})" for es in EVAL_SYSTEMS
        ]
        lines.append(f"| {r['train_system']} | {r['reward_mode']} | {cells[0]} | {cells[1]} |")
    if not results["paired"]:  # one system and one reward mode: nothing to compare
        lines += ["", f"One condition only ({_conditions_heading(cfg)}): no differences between conditions."]
    else:
        lines += ["", "## Differences between conditions", "",
                  "| comparison | eval system | mean diff ± seeds (Welch t) | ± deals (seeds averaged per deal) | "
                  "deals a better / b better |", "|---|---|---|---|---|"]
    for p in results["paired"]:
        lines.append(f"| {p['comparison']} | {p['eval_system']} | {p['mean_diff']:+.2f} ± "
                     f"{fmt(p.get('ci95_seeds'))} | ± {fmt(p['ci95'])} | {p['a_better']} / {p['b_better']} |")
    lines += ["", "## Share of lines ending in each hand (all 10 lines, seeds averaged)", "",
              "| trained on | reward | " + " | ".join(h.replace("_", " ") for h in columns) + " |",
              "|---|---|" + "---|" * len(columns)]
    for r in results["hands"]:
        lines.append(f"| {r['train_system']} | {r['reward_mode']} | "
                     + " | ".join(f"{100 * r['all:' + h]:.2f}%" for h in columns) + " |")
    return "\n".join(lines) + "\n"


def write_outputs(cfg: ExperimentConfig, results: dict[str, Any]) -> list[str]:
    """Write results.md, results.json, learning_curves.png and hands.png into the experiment folder.  results.json is
    strict JSON: an interval that cannot be computed (one seed) is ``null``.  Without matplotlib the plots are skipped
    with a :class:`agents.evaluation.PlotsSkippedWarning` (the results are written)."""
    from agents.evaluation import PlotsSkippedWarning, _jsonable

    out = Path(cfg.out)
    (out / "results.md").write_text(markdown(results))
    (out / "results.json").write_text(json.dumps(_jsonable(results), indent=2, default=float, allow_nan=False) + "\n")
    written = [str(out / "results.md"), str(out / "results.json")]
    try:
        written += plot(results, out)
    except ImportError as exc:  # the results are written: the plots are an extra
        warnings.warn(PlotsSkippedWarning(f"learning_curves.png and hands.png not written: {exc}"), stacklevel=2)
    return written


def plot(results: dict[str, Any], out: Path) -> list[str]:
    """Save the learning curves and the hand-frequency bars as PNG files."""
    from agents.evaluation import pyplot

    plt = pyplot()
    paths = []
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, (name, seeds) in enumerate(results["curves"].items()):
        for j, es in enumerate(EVAL_SYSTEMS):
            ax = axes[j]
            for i, c in enumerate(seeds):
                if c["step"]:
                    ax.plot(c["step"], c[f"eval_{es}"], color=colors[k % len(colors)], alpha=0.8,
                            label=name if i == 0 else None, lw=1.2)
    for j, es in enumerate(EVAL_SYSTEMS):
        axes[j].set_title(f"evaluated under {es} scoring")
        axes[j].set_xlabel("training steps")
        axes[j].set_ylabel("mean score (fixed deals)")
        axes[j].grid(alpha=0.3)
    axes[0].legend(title="trained on / reward", fontsize=8)
    fig.tight_layout()
    paths.append(str(out / "learning_curves.png"))
    fig.savefig(paths[-1], dpi=100)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(11, 4.2))
    rows = results["hands"]
    width = 0.8 / max(1, len(rows))
    columns = results.get("hand_columns", HAND_COLUMNS)
    x = np.arange(len(columns))
    for j, r in enumerate(rows):
        ax.bar(x + j * width, [100 * r["all:" + h] for h in columns], width,
               label=f"{r['train_system']}/{r['reward_mode']}")
    ax.set_xticks(x + 0.4 - width / 2, [h.replace("_", " ") for h in columns], rotation=20, ha="right")
    ax.set_ylabel("% of lines")
    ax.set_yscale("log")
    ax.set_title("What each reward teaches: hand frequencies per line")
    ax.legend(fontsize=8)
    fig.tight_layout()
    paths.append(str(out / "hands.png"))
    fig.savefig(paths[-1], dpi=100)
    plt.close(fig)
    return paths


def load_results(out: str | os.PathLike) -> dict[str, Any]:
    """The results.json of a finished experiment folder."""
    path = Path(out) / "results.json"
    if not path.is_file():
        raise FileNotFoundError(f"{str(path)!r} does not exist: run the experiment first")
    return json.loads(path.read_text())
