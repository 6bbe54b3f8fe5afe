"""Tune the expectimax agents' value tables by direct policy search, then measure them on held-out deals.

:func:`tune_tables_experiment` loads (or trains) the default tables of
``expectimax`` for a point system (:func:`agents.tables.load_or_train` with
the agent's defaults), runs :func:`agents.tuning.tune_tables` in two stages
(one multiplier per line class and row/column; then refined per third of the
game) and plays the untuned and the tuned tables with one- and two-ply
expectimax on the same held-out deals (decks of another seed than any
generation's).  Outputs (in ``out``): ``tables.npz`` (usable as
``expectimax:tables=OUT/tables.npz`` or ``search:tables=...``),
``theta.json``, ``history.json``, ``results.md`` / ``results.json`` and
``curve.png`` (each generation's mean against the untuned tables' on its
deals).
"""

from __future__ import annotations

import json
import math
import os
import shlex
import time
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["MAX_GAMES", "MAX_POPULATION", "MAX_TABLES_GAMES", "OUTPUTS", "tune_tables_experiment"]

#: the files a run writes into its folder (besides experiment.json); a rerun removes them before it starts
OUTPUTS = ("tables.npz", "theta.json", "history.json", "results.md", "results.json", "curve.png", "scoring.json")
#: most deals of a generation (``games``) and held-out deals (``eval_games``): every deal of them is held in memory
#: at once (about 1.3 KB each: 13 GB at the bound), 500 times the default 20,000
MAX_GAMES = 10**7
#: most candidates per generation (``population``): each plays every deal of the generation
MAX_POPULATION = 10**5
#: most self-play games of the tables (``tables_games``): 2,500 times the agent's 400,000
MAX_TABLES_GAMES = 10**9


def _scoring_arg(scoring: Any, system: Any, folder: Path) -> str:
    """What ``pokersquares evaluate --scoring`` takes for ``system``, recorded and printed: the name of a built-in
    system, else the JSON file ``scoring`` named (as given), else (a mapping or ``PointSystem``) ``scoring.json``
    written into ``folder``."""
    from pokersquares_env.scoring import POINT_SYSTEMS, point_system

    if system.name in POINT_SYSTEMS and tuple(point_system(system.name).points) == tuple(system.points):
        return system.name
    path = folder / "scoring.json"
    if isinstance(scoring, (str, os.PathLike)):
        if Path(scoring).resolve() == path.resolve():  # the file a rerun cleared (OUTPUTS): written again, not lost
            path.write_text(json.dumps(system.to_json(), indent=1) + "\n")
        return os.fspath(scoring)
    path.write_text(json.dumps(system.to_json(), indent=1) + "\n")
    return str(path)


def _paired(base: np.ndarray, tuned: np.ndarray) -> dict[str, float]:
    from agents.experiments.reward_shaping import _stats

    diff = _stats(tuned - base)
    return {"games": int(base.size), "base": float(base.mean()), "tuned": float(tuned.mean()),
            "base_ci95": _stats(base)["ci95"], "tuned_ci95": _stats(tuned)["ci95"],
            "difference": diff["mean"], "difference_ci95": diff["ci95"]}


def tune_tables_experiment(
    out: str = "runs/tune_tables",
    *,
    scoring: str = "american",
    rules: Any = None,
    ply: int = 1,
    generations: int = 25,
    refine: int = 20,
    population: int = 60,
    elite: int = 12,
    games: int = 20_000,
    sigma: float = 0.3,
    eval_games: int = 20_000,
    eval_seed: int = 99,
    seed: int = 0,
    tables_games: int | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Tune ``scoring``'s default expectimax tables for ``ply``-ply play; measure ply 1 and 2 on held-out deals.

    Stage 1 runs ``generations`` generations with one multiplier per class and row/column (starting spread
    ``sigma``); stage 2 (``refine`` generations, 0 to skip) starts from it with one multiplier per third of the
    game (spread ``sigma / 3``).  ``eval_games`` held-out deals (two-ply on half of them) give the paired
    differences.  ``rules`` (a :class:`~pokersquares_env.core.Rules` or a spec of ``Rules.parse``, such as
    ``"jokers=2,placement=adjacent"``; default the plain rules) are the rules tables, tuning and held-out deals
    use.  ``tables_games`` overrides the size of the tables' training (tests; default: the agent's).  Needs numba
    (the ``fast`` extra): without it a ValueError says so before anything is written or trained.
    """
    from agents.evaluation import check_out_dir, check_positive_int, check_seed, prepare_out_dir, pyplot
    from agents.expectimax import DEFAULT_FEATURES, DEFAULT_GAMES, DEFAULT_PHASES
    from agents.experiments.marks import check_own_root, write_root_mark
    from agents.experiments.reward_shaping import rules_note
    from agents.tables import load_or_train
    from agents.tuning import CLASS_NAMES, check_compiled, check_options, play_scores, random_decks, tune_tables
    from pokersquares_env.core import Rules
    from pokersquares_env.scoring import point_system

    system = point_system(scoring)  # ValueError names a bad system
    rules = Rules() if rules is None else Rules.parse(rules)  # ValueError names a bad option
    for name, value in (("refine", refine), ("eval_games", eval_games)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0 or (name == "eval_games" and value < 2):
            raise ValueError(f"{name}={value!r}: expected an integer >= {2 if name == 'eval_games' else 0}")
    check_options(ply=ply, generations=generations, population=population, elite=elite, games=games, sigma=sigma)
    check_seed(seed)
    check_seed(eval_seed, "eval_seed")
    if tables_games is not None:
        tables_games = check_positive_int(tables_games, "tables_games")
    # sizes beyond what memory (the deals of a generation, the held-out deals) or time could hold: named here, not
    # by numpy ("Maximum allowed dimension exceeded", a MemoryError) after the tables were trained and files written
    for name, value, low, high, what in (
            ("games", games, 1, MAX_GAMES, "deals per generation, all held in memory"),
            ("eval_games", eval_games, 2, MAX_GAMES, "held-out deals, all held in memory"),
            ("population", population, 1, MAX_POPULATION, "candidates per generation"),
            ("tables_games", tables_games, 1, MAX_TABLES_GAMES, "self-play games of the tables")):
        if value is not None and value > high:
            raise ValueError(f"{name}={value!r}: expected an integer from {low} to {high:,} ({what})")
    folder = Path(check_out_dir(out, name="out"))
    check_own_root(folder, "tune-tables", _older_root)  # never results in another's folder (an evaluation, a run)
    check_compiled("tune-tables")  # numba missing: said before the folder is made or marked and the tables trained
    folder = Path(prepare_out_dir(folder, name="out"))  # before the tables are trained, not after
    for name in OUTPUTS:  # an earlier run's results: gone before the mark names the new options (if this run fails,
        (folder / name).unlink(missing_ok=True)  # the folder holds no results of other options than its mark's)
    scoring_arg = _scoring_arg(scoring, system, folder)
    write_root_mark(folder, "tune-tables", {
        "scoring": scoring_arg, "points": system.as_dict(), "rules": rules.to_json(), "ply": ply,
        "generations": generations, "refine": refine, "population": population, "elite": elite, "games": games,
        "sigma": sigma, "eval_games": eval_games, "eval_seed": eval_seed, "seed": seed, "tables_games": tables_games})
    base = load_or_train(system, rules, games=DEFAULT_GAMES if tables_games is None else tables_games, phases=DEFAULT_PHASES,
                         features=DEFAULT_FEATURES, progress=progress)
    start = time.perf_counter()
    common = {"ply": ply, "population": population, "elite": elite, "games": games, "progress": progress}
    first = tune_tables(base, generations=generations, sigma=sigma, bins=1, seed=seed, **common)
    history = [dict(r, stage=1) for r in first.history]
    result = first
    if refine:
        result = tune_tables(base, generations=refine, sigma=sigma / 3, bins=3, init=first.theta, seed=seed + 1,
                             **common)
        history += [dict(r, stage=2, generation=r["generation"] + generations) for r in result.history]
    seconds = time.perf_counter() - start
    result.tables.policy = (f"{base.policy}+cem(ply={ply},stages={generations}+{refine},population={population},"
                            f"games={games})")
    result.tables.save(folder / "tables.npz")

    decks = random_decks(base.rules, eval_games, [eval_seed, 93])
    evaluation = {}
    ply2_games = max(2, eval_games // 2)  # at least two: an interval needs two deals
    for p, n in ((1, eval_games), (2, ply2_games)):
        evaluation[f"ply={p}"] = _paired(play_scores(base.values, decks[:n], base, p),
                                         play_scores(result.tables.values, decks[:n], base, p))
    theta = result.theta
    theta_json = {name: {"row": theta[i, 0].round(4).tolist(), "column": theta[i, 1].round(4).tolist()}
                  for i, name in enumerate(CLASS_NAMES)}
    summary = {"scoring": scoring_arg, "points": system.as_dict(), "rules": rules.to_json(), "ply": ply, "generations": generations,
               "refine": refine, "population": population, "elite": elite, "games": games, "sigma": sigma, "seed": seed,
               "eval_games": eval_games, "eval_seed": eval_seed, "seconds": seconds,
               "tables": str(folder / "tables.npz"), "evaluation": evaluation}
    spec = rules.to_spec()
    lines = [f"# Tuned tables ({system.name}{rules_note(rules)}, tuned for ply={ply}; {seconds / 60:.1f} min)", "",
             f"Held-out deals: {eval_games} decks of seed {eval_seed} (two-ply on the first {ply2_games}).", "",
             "| player | games | untuned | tuned | paired difference |", "|---|---|---|---|---|"]
    for name, e in evaluation.items():
        lines.append(f"| expectimax:{name} | {e['games']} | {e['base']:.2f} +- {e['base_ci95']:.2f} | "
                     f"{e['tuned']:.2f} +- {e['tuned_ci95']:.2f} | {e['difference']:+.2f} +- "
                     f"{e['difference_ci95']:.2f} |")
    lines += ["", "Multipliers exp(theta) (row / column; per third of the game where refined):", "",
              "| class | rows | columns |", "|---|---|---|"]
    for i, name in enumerate(CLASS_NAMES):
        row = " ".join(f"{math.exp(v):.2f}" for v in theta[i, 0])
        col = " ".join(f"{math.exp(v):.2f}" for v in theta[i, 1])
        lines.append(f"| {name} | {row} | {col} |")
    agent = shlex.quote(f"expectimax:tables={folder / 'tables.npz'}")
    lines += ["", f"Play them: `pokersquares evaluate --agent {agent} --scoring {shlex.quote(scoring_arg)}"
              f"{' --rules ' + spec if spec else ''}`"]
    table = "\n".join(lines)
    summary["table"] = table
    (folder / "results.md").write_text(table + "\n")
    (folder / "results.json").write_text(json.dumps({k: v for k, v in summary.items() if k != "table"}, indent=1))
    (folder / "theta.json").write_text(json.dumps(theta_json, indent=1))
    (folder / "history.json").write_text(json.dumps(history, indent=1))

    plt = pyplot("tuning curves")
    fig, ax = plt.subplots(figsize=(6, 3.5))
    gens = [r["generation"] for r in history]
    ax.plot(gens, [r["base"] for r in history], label="untuned tables", color="0.5")
    ax.plot(gens, [r["mean_theta"] for r in history], label="tuned (current mean)")
    if refine:
        ax.axvline(generations - 0.5, color="0.8", linestyle=":")
    ax.set_xlabel("generation")
    ax.set_ylabel(f"mean {system.name} score, ply={ply}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(folder / "curve.png", dpi=110)
    plt.close(fig)
    return summary


def _older_root(root: Path) -> bool:
    """Whether ``root`` is a tune-tables folder of an older version (before its ``experiment.json``): a
    ``results.json`` of the experiment's summary beside its ``tables.npz``."""
    from agents.experiments.marks import read_json

    data = read_json(root / "results.json")
    return (isinstance(data, dict) and {"ply", "generations", "refine", "population", "evaluation"} <= set(data)
            and (root / "tables.npz").is_file())
