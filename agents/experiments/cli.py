"""``pokersquares experiment``: run an experiment (``reward-shaping``: English vs American reward, line vs terminal)."""

from __future__ import annotations

import sys
from typing import Any

from agents.config import train_seed_arg
from agents.demo import _steps as steps_arg
from pokersquares_env.cli import int_at_least, int_between, seed_arg

HELP = ("run an experiment: reward-shaping (English vs American reward x line vs terminal), potential-shaping "
        "(fast-ppo with and without line-value reward shaping), compare-trainers or tune-tables (direct policy "
        "search on expectimax's value tables)")

__all__ = ["HELP", "add_arguments", "run"]

RULES_HELP = ("rule options of every training run and of the common deals, as "
              "'jokers=2,placement=adjacent,first_cell=center', a JSON object or a .json file (default: the plain "
              "rules)")


def add_arguments(parser) -> None:
    """The ``pokersquares experiment`` sub-commands and options."""
    from agents.config import ALGO_DEFAULTS, ALGOS, MAX_SIZES
    from agents.evaluation import MAX_GAMES as MAX_EVAL_GAMES
    from agents.experiments.potential_shaping import MAX_JOBS
    from agents.experiments.tune_tables import MAX_GAMES, MAX_POPULATION, MAX_TABLES_GAMES
    from agents.shaping import SHAPINGS

    fast = ALGO_DEFAULTS["fast-ppo"]  # the reward-shaping runs' algorithm
    sub = parser.add_subparsers(dest="experiment", metavar="EXPERIMENT")
    p = sub.add_parser(
        "reward-shaping",
        help="train with English and American reward (line and terminal) on several seeds; compare on common deals",
        description=(
            "Train fast-ppo agents with American and English reward, line and terminal, >= 3 seeds each, on the "
            "same budget (normalised rewards); evaluate all of them on the same deals under both systems; write "
            "results.md/json, learning_curves.png and hands.png.  The default budget finishes in minutes; --full "
            "is the documented full budget (3M steps per run, 2,000 deals)."
        ),
    )
    p.add_argument("--out", help="experiment folder (default runs/reward_shaping, or runs/reward_shaping_full)")
    p.add_argument("--full", action="store_true", help="the full budget: 3,000,000 steps per run and 2,000 deals")
    p.add_argument("--timesteps", type=steps_arg, help="training steps per run (default 150,000)")
    p.add_argument("--seeds", type=train_seed_arg, nargs="+", metavar="S",
                   help="training seeds, each 0..4294967295 (default 0 1 2)")
    p.add_argument("--games", type=int_between(1, MAX_EVAL_GAMES), help="common evaluation deals (default 500)")
    p.add_argument("--eval-seed", type=seed_arg, help="seed of the common deals (default 20260)")
    p.add_argument("--systems", nargs="+", metavar="SYSTEM", help="training point systems (default american english)")
    p.add_argument("--reward-modes", nargs="+", choices=["line", "terminal"], help="default: line terminal")
    p.add_argument("--hidden", type=int, nargs="+", metavar="N",
                   help="hidden layer sizes of every run (default fast-ppo's, "
                        f"{' '.join(map(str, fast['hidden']))})")
    p.add_argument("--num-envs", type=int_between(1, MAX_SIZES["num_envs"]),
                   help=f"parallel games per run (default fast-ppo's, {fast['num_envs']}); below "
                        f"{fast['minibatch_size'] // fast['num_steps']} the minibatch is capped at the rollout, "
                        f"N x {fast['num_steps']} steps")
    p.add_argument("--minibatch-size", type=int_between(1, MAX_SIZES["minibatch_size"]),
                   help=f"minibatch of every run (default fast-ppo's, {fast['minibatch_size']}, capped at the rollout "
                        f"with --num-envs; 400 learns more per step in short runs: docs/training.md, \"fast-ppo's "
                        f"minibatch\")")
    p.add_argument("--learning-rate", type=float,
                   help=f"learning rate of every run (default fast-ppo's, {fast['learning_rate']:g})")
    p.add_argument("--shaping", choices=list(SHAPINGS),
                   help="potential-based reward shaping of every run (agents/shaping.py; default none)")
    p.add_argument("--rules", metavar="SPEC", help=RULES_HELP)
    p.add_argument("--jobs", type=int_at_least(1), help="evaluation processes (default 1)")
    p.add_argument("--retrain", action="store_true", help="train again even where a finished run exists")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")

    c = sub.add_parser(
        "compare-trainers",
        help="MaskablePPO, masked DQN and fast-ppo on the same budget: learning curves (steps and wall-clock)",
        description="Train MaskablePPO, masked DQN and fast-ppo on the same step budget and rules, then compare their "
                    "learning curves (against steps and wall-clock) and their final scores on common deals.",
    )
    c.add_argument("--out", default="runs/compare_trainers", help="output folder (default runs/compare_trainers)")
    c.add_argument("--timesteps", type=steps_arg, default=200_000, help="training steps per algorithm (default 200,000)")
    c.add_argument("--seed", type=train_seed_arg, default=0,
                   help="training seed of every algorithm, 0..4294967295; the common deals use seed+1 (default 0)")
    c.add_argument("--games", type=int_between(1, MAX_EVAL_GAMES), default=500, help="common evaluation deals (default 500)")
    c.add_argument("--algos", nargs="+", default=["maskable-ppo", "dqn", "fast-ppo"], metavar="ALGO",
                   help=f"algorithms to train, of {', '.join(sorted(ALGOS))} (default maskable-ppo dqn fast-ppo)")
    c.add_argument("--scoring", default="american",
                   help="reward and evaluation point system: american (default), english, or a JSON file")
    c.add_argument("--shaping", default="none", choices=list(SHAPINGS),
                   help="potential-based reward shaping of every run (see agents/shaping.py; default none)")
    c.add_argument("--rules", metavar="SPEC", help=RULES_HELP)
    c.add_argument("--retrain", action="store_true",
                   help="train every algorithm again even where its folder holds a finished run of the same config "
                        "(reused by default)")
    c.add_argument("--net", choices=["mlp", "lines"],
                   help="network of every run (default each algorithm's own: MaskablePPO's MLP, the lines network of "
                        "dqn and fast-ppo); lines gives MaskablePPO fast-ppo's row/column network")
    c.add_argument("--set", dest="set_options", action="append", default=[], type=algo_option,
                   metavar="ALGO.OPTION=VALUE",
                   help="a training option of one algorithm's run, over its defaults (an option of pokersquares "
                        "train, spelt with - or _; VALUE read as JSON, else as a number, else as text; lists as JSON: "
                        "fast-ppo.hidden=[64,64]), e.g. --set fast-ppo.minibatch_size=400 --set dqn.learning_rate=3e-4; "
                        "repeatable; not the options every run shares (budget, time limit, seed, reward, rules, "
                        "evaluations)")
    c.add_argument("--no-progress", action="store_true", help="no progress bars")


    q = sub.add_parser(
        "potential-shaping",
        help="fast-ppo with no, heuristic and self-play-table potential-based reward shaping, on the same budget",
        description="Train fast-ppo with each --shaping on each seed for the same steps; play every model on the same "
                    "deals; write results.md/json (paired differences against no shaping) and curves.png.",
    )
    q.add_argument("--out", default="runs/potential_shaping", help="experiment folder (default runs/potential_shaping)")
    q.add_argument("--shapings", nargs="+", choices=list(SHAPINGS), default=list(SHAPINGS), metavar="SHAPING",
                   help=f"the shapings compared, of {', '.join(SHAPINGS)} (default all; paired against none)")
    q.add_argument("--seeds", type=train_seed_arg, nargs="+", default=[0, 1], metavar="S",
                   help="training seeds, each 0..4294967295 (default 0 1)")
    q.add_argument("--timesteps", type=steps_arg, default=2_000_000, help="training steps per run (default 2,000,000)")
    q.add_argument("--games", type=int_between(1, MAX_EVAL_GAMES), default=500, help="common evaluation deals (default 500)")
    q.add_argument("--eval-seed", type=seed_arg, default=0, help="seed of the common deals (default 0)")
    q.add_argument("--scoring", default="american",
                   help="reward and evaluation point system: american, english or a JSON file (default american)")
    q.add_argument("--rules", metavar="SPEC", help=RULES_HELP)
    q.add_argument("--minibatch-size", type=int_between(1, MAX_SIZES["minibatch_size"]),
                   help=f"minibatch of every run (default fast-ppo's, {fast['minibatch_size']}; 400 learns more per "
                        f"step in short unshaped runs: docs/training.md, \"fast-ppo's minibatch\")")
    q.add_argument("--retrain", action="store_true",
                   help="train every run again even where its folder holds a finished run of the same config "
                        "(reused by default)")
    q.add_argument("--jobs", type=int_between(1, MAX_JOBS), default=1,
                   help=f"training runs at once (processes), 1 to {MAX_JOBS:,}; at most one per run and per CPU this "
                        f"process may use (default 1)")
    q.add_argument("--no-progress", action="store_true", help="no progress bars")

    t = sub.add_parser(
        "tune-tables",
        help="cross-entropy search on expectimax's value tables (per-class multipliers); held-out paired results",
        description="Tune the default expectimax tables of a point system by the cross-entropy method on one "
                    "multiplier per line class and row/column (then per third of the game), playing every "
                    "candidate on the same fresh deals; then play untuned and tuned tables with one- and two-ply "
                    "expectimax on held-out deals.  Writes tables.npz, theta.json, history.json, results.md/json "
                    "and curve.png.  Needs numba (the fast extra).  The defaults take about 16 minutes on 2 cores.",
    )
    t.add_argument("--out", default="runs/tune_tables", help="output folder (default runs/tune_tables)")
    t.add_argument("--scoring", default="american",
                   help="point system: american, english or a JSON file (default american)")
    t.add_argument("--rules", default=None, metavar="SPEC",
                   help="rule options of the tables, the tuning and the held-out deals, as "
                        "'jokers=2,placement=adjacent,first_cell=center', a JSON object or a .json file "
                        "(default: the plain rules)")
    t.add_argument("--ply", type=int, default=1, choices=[1, 2], help="the expectimax depth tuned for (default 1)")
    t.add_argument("--generations", type=int_at_least(1), default=25,
                   help="generations of stage 1 (one multiplier per class; default 25)")
    t.add_argument("--refine", type=int_at_least(0), default=20,
                   help="generations of stage 2 (per third of the game; 0: skip; default 20)")
    t.add_argument("--population", type=int_between(1, MAX_POPULATION), default=60,
                   help=f"candidates per generation, at most {MAX_POPULATION:,} (default 60)")
    t.add_argument("--elite", type=int_at_least(1), default=12,
                   help="best candidates the next generation is fitted to (default 12)")
    t.add_argument("--games", type=int_between(1, MAX_GAMES), default=20_000,
                   help=f"deals every candidate of a generation plays, at most {MAX_GAMES:,} (default 20,000)")
    t.add_argument("--sigma", type=float, default=0.3, help="starting spread of the log-multipliers (default 0.3)")
    t.add_argument("--eval-games", type=int_between(2, MAX_GAMES), default=20_000,
                   help=f"held-out deals, 2 to {MAX_GAMES:,} (two-ply plays half of them; default 20,000)")
    t.add_argument("--eval-seed", type=seed_arg, default=99, help="seed of the held-out deals (default 99)")
    t.add_argument("--seed", type=seed_arg, default=0,
                   help="seed of the search: its candidates and its tuning deals (default 0)")
    t.add_argument("--tables-games", type=int_between(1, MAX_TABLES_GAMES),
                   help=f"self-play games of the tables if they are not cached yet, at most {MAX_TABLES_GAMES:,} "
                        f"(default: the agent's 400,000)")
    t.add_argument("--no-progress", action="store_true", help="no progress bars")


def _check_out(name: str, out: str) -> bool:
    """Whether ``--out`` can be the experiment's folder as far as a path tells (not a file, nor below one); if not,
    the reason is printed, naming ``--out``."""
    from agents.evaluation import check_out_dir

    try:
        check_out_dir(out, name="--out")
    except ValueError as exc:
        print(f"pokersquares experiment {name}: {exc}", file=sys.stderr)
        return False
    return True


def _run_and_print(name: str, call: Any, outputs: str, out: str) -> int:
    """Run one experiment function; print its table and where its outputs went (exit 2 on a bad option)."""
    if not _check_out(name, out):
        return 2
    try:
        result = call()
    except (ValueError, TypeError) as exc:  # TypeError: a point file's non-number, as pokersquares evaluate says it
        print(f"pokersquares experiment {name}: {exc}", file=sys.stderr)
        return 2
    print(result["table"])
    print(f"outputs in {out}: {outputs}")
    return 0


def _potential(args) -> int:
    from agents.experiments.potential_shaping import potential_shaping

    return _run_and_print("potential-shaping", lambda: potential_shaping(
        args.out, shapings=tuple(args.shapings), seeds=tuple(args.seeds), timesteps=args.timesteps,
        games=args.games, eval_seed=args.eval_seed, scoring=args.scoring, rules=args.rules, jobs=args.jobs,
        train_options=None if args.minibatch_size is None else {"minibatch_size": args.minibatch_size},
        progress=not args.no_progress, retrain=args.retrain,
    ), "results.md, results.json, curves.png, experiment.json, evaluation/, runs/", args.out)


def algo_option(text: str) -> tuple[str, str, Any]:
    """``--set ALGO.OPTION=VALUE`` read as ``(algo, option, value)``: VALUE as JSON (``400``, ``3e-4``, ``[64, 64]``,
    ``true``), else as a number Python reads (``.2``), else as the text itself (``lines``).  Which algorithms and
    options exist is checked by the experiment, naming them."""
    import argparse
    import json

    target, eq, value = text.partition("=")
    algo, dot, option = target.rpartition(".")
    if not eq or not dot or not algo or not option or not value:
        raise argparse.ArgumentTypeError(f"{text!r}: expected ALGO.OPTION=VALUE, e.g. fast-ppo.minibatch_size=400")
    try:
        parsed = json.loads(value)
    except ValueError:
        try:
            parsed = float(value)  # a number JSON does not write: .2, 5., nan
        except ValueError:
            parsed = value
    return algo, option.replace("-", "_"), parsed


def _set_options(given: list[tuple[str, str, Any]]) -> dict[str, dict[str, Any]] | None:
    """The ``--set`` options as ``{algo: {option: value}}`` (``None`` if none; a repeated option is an error)."""
    options: dict[str, dict[str, Any]] = {}
    for algo, option, value in given:
        if option in options.setdefault(algo, {}):
            raise ValueError(f"--set {algo}.{option} given more than once: expected each option once")
        options[algo][option] = value
    return options or None


def _compare(args) -> int:
    from agents.experiments.compare_trainers import compare_trainers

    return _run_and_print("compare-trainers", lambda: compare_trainers(
        args.out, timesteps=args.timesteps, seed=args.seed, algos=tuple(args.algos), games=args.games,
        scoring=args.scoring, shaping=args.shaping, rules=args.rules, net=args.net, progress=not args.no_progress,
        retrain=args.retrain, train_options=_set_options(args.set_options),
    ), "comparison.md, comparison.json, trainer_curves.png, experiment.json, evaluation/", args.out)


def _tune(args) -> int:
    from agents.experiments.tune_tables import tune_tables_experiment

    return _run_and_print("tune-tables", lambda: tune_tables_experiment(
        args.out, scoring=args.scoring, rules=args.rules, ply=args.ply, generations=args.generations,
        refine=args.refine, population=args.population, elite=args.elite, games=args.games, sigma=args.sigma,
        eval_games=args.eval_games, eval_seed=args.eval_seed, seed=args.seed, tables_games=args.tables_games,
        progress=not args.no_progress,
    ), "tables.npz, theta.json, history.json, results.md, results.json, curve.png, experiment.json", args.out)


def run(args) -> int:
    """Run ``pokersquares experiment ...``.  Plots skipped without matplotlib (the results are written) are said in one
    warning line on stderr, as ``pokersquares evaluate`` says them."""
    from agents.evaluation import plots_skipped_said_by

    name = getattr(args, "experiment", None) or "experiment"
    with plots_skipped_said_by(f"pokersquares experiment {name}"):
        return _run(args)


def _run(args) -> int:
    if getattr(args, "experiment", None) == "tune-tables":
        return _tune(args)
    if getattr(args, "experiment", None) == "compare-trainers":
        return _compare(args)
    if getattr(args, "experiment", None) == "potential-shaping":
        return _potential(args)
    if getattr(args, "experiment", None) != "reward-shaping":
        print("pokersquares experiment: choose an experiment: reward-shaping, potential-shaping, compare-trainers or "
              "tune-tables", file=sys.stderr)
        return 2
    import dataclasses

    from agents.experiments.reward_shaping import FULL, SMALL, run_experiment

    cfg = dataclasses.replace(FULL if args.full else SMALL)
    over = {
        "out": args.out, "timesteps": args.timesteps, "seeds": args.seeds, "games": args.games,
        "eval_seed": args.eval_seed, "systems": args.systems, "reward_modes": args.reward_modes, "jobs": args.jobs,
        "rules": args.rules,
    }
    cfg = dataclasses.replace(cfg, **{k: v for k, v in over.items() if v is not None})
    train_options = {k: getattr(args, k) for k in ("hidden", "num_envs", "learning_rate", "shaping")
                     if getattr(args, k) is not None}
    if args.minibatch_size is not None:  # as given (a minibatch above the rollout is refused, naming both)
        train_options["minibatch_size"] = args.minibatch_size
    elif isinstance(args.num_envs, int) and args.num_envs >= 1:  # fewer games per rollout: a minibatch that fits it
        from agents.config import ALGO_DEFAULTS

        fast = ALGO_DEFAULTS["fast-ppo"]
        train_options["minibatch_size"] = min(fast["minibatch_size"], args.num_envs * fast["num_steps"])
    cfg = dataclasses.replace(cfg, train_options=train_options, retrain=args.retrain, progress=not args.no_progress)
    if not _check_out("reward-shaping", cfg.out):
        return 2
    try:
        results = run_experiment(cfg)
    except (ValueError, TypeError) as exc:
        print(f"pokersquares experiment reward-shaping: {exc}", file=sys.stderr)
        return 2
    from agents.experiments.reward_shaping import markdown

    print(markdown(results))
    print(f"outputs in {cfg.out}: results.md, results.json, learning_curves.png, hands.png, experiment.json, "
          f"evaluation/, runs/")
    return 0
