"""``pokersquares demo``: the main job -- train a placement agent for a few minutes, then evaluate it.

1. Trains the fast vectorised masked PPO (``agents/fast_ppo.py``) on ``PokerSquares-v0``
   for ``--steps`` vector-env steps (25 card placements and one reset step a game; default 2.5M: 155 s at
   about 16k steps/s on the 2-core Intel machine of the README's latest figure, about 6 minutes at 6-7k steps/s on
   earlier 2-core machines), or until ``--minutes`` of wall-clock time (default 10) if that comes first, writing a normal
   run folder.  A step budget makes the result the same on a slower machine (and, for a seed, reproducible); the
   time limit only guards against a very slow one.  Its rewards are shaped
   (``--shaping``, :mod:`agents.shaping`) by the self-play line values that ``expectimax`` plays on:
   the game's line points plus the change each placement makes to the estimated worth of the
   unfinished lines.  That leaves every game's return equal to its score minus a constant, so the
   best policies are unchanged, but credit arrives at once instead of when a line completes;
   unshaped, four minutes of PPO is not enough for a reliable policy.
2. Plays it, the baselines (random, greedy, rules) and ``expectimax`` -- two-ply search on
   hand-abstraction values learned by Monte Carlo self-play, trained on first use (about half a
   minute with the compiled kernels) -- on the same seeded deals through the evaluation harness,
   and prints the summary and the paired differences.  ``--no-search`` leaves ``expectimax`` out.

With ``POKERSQUARES_TINY=1`` (set by the test command) the budgets shrink to seconds (the time limit then
governs unless ``--steps`` is given).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

from agents.config import train_seed_arg
from pokersquares_env.cli import int_at_least, positive_float

HELP = "train a placement agent for a few minutes, then evaluate it against baselines on common deals"

BASELINES = ["random", "greedy", "rules"]


DEFAULT_STEPS = 2_500_000  # with reward shaping, runs of 2M steps and more beat `rules` (README)
DEFAULT_MINUTES = 10.0


def _steps(text: str) -> int:
    """An ``argparse`` type: a whole number of steps >= 1, in plain or float notation (``2500000``, ``2.5e6``)."""
    try:
        value = int(text)  # whole numbers exactly, however large
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: expected a number of steps >= 1 (e.g. 2.5e6)") from None
    if not ((isinstance(value, int) or math.isfinite(value)) and value >= 1 and value == int(value)):  # nan, inf, 1.5
        raise argparse.ArgumentTypeError(f"{text}: expected a whole number of steps >= 1 (e.g. 2.5e6)")
    return int(value)


def _tiny() -> bool:
    return os.environ.get("POKERSQUARES_TINY", "") not in ("", "0")


def add_arguments(parser) -> None:
    """Options of ``pokersquares demo``."""
    parser.add_argument("--steps", type=_steps, default=None,
                        help=f"PPO training steps (vector-env steps: 26 a game, 25 card placements and a reset; "
                             f"e.g. 2.5e6; default {DEFAULT_STEPS:.2g}, 2.5-6 min on 2 cores, by machine); "
                             "training stops at --minutes if that comes first")
    parser.add_argument("--minutes", type=positive_float, default=None,
                        help="wall-clock limit of the training (default 10; 0.1 when POKERSQUARES_TINY=1, where the "
                             "limit governs unless --steps is given)")
    parser.add_argument("--scoring", default="american",
                        help="point system used as reward and for the evaluation: american, english or a JSON file "
                             "(default american)")
    parser.add_argument("--games", type=int_at_least(1), default=None, help="common deals per agent (default 500; 20 when tiny)")
    parser.add_argument("--seed", type=train_seed_arg, default=0,
                        help="training and evaluation seed, 0..4294967295 (default 0)")
    parser.add_argument("--out", default="runs/demo", help="run folder (model, logs, evaluation outputs; default "
                                                           "runs/demo)")
    parser.add_argument("--jobs", type=int_at_least(1), default=1, help="processes for the evaluation (default 1)")
    parser.add_argument("--torch-threads", type=int_at_least(1), default=None,
                        help="torch threads for the training (default 2, or 1 on a 1-core machine); a seeded run "
                             "reproduces its model only with the same thread count")
    from agents.shaping import SHAPINGS

    parser.add_argument("--shaping", choices=list(SHAPINGS), default=None,
                        help="potential-based reward shaping of the PPO run (default tables: the self-play line "
                             "values, trained on first use and cached; heuristic when POKERSQUARES_TINY=1)")
    parser.add_argument("--search", action=argparse.BooleanOptionalAction, default=True,
                        help="also evaluate expectimax on self-play-learned value tables (trained on first use, 30-40 s, "
                             "then cached; default on)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bars of the training and the "
                                                                    "evaluation")


DEMO_MARK = "demo.json"  # written into --out: the run there is the demo's own, which a later demo may replace


def _check_demo_folder(out: Path) -> None:
    """Refuse an ``--out`` that holds a training run the demo did not write (the demo replaces only its own)."""
    from agents.train import run_files_in

    found = run_files_in(out)
    if found and not (out / DEMO_MARK).is_file():
        raise ValueError(f"--out {str(out)!r} holds a training run the demo did not write ({', '.join(found)}): "
                         f"choose another --out (the demo replaces only its own run)")


def run(args) -> int:
    """Train, evaluate, print; returns the exit status."""
    from agents.config import ConfigError, TrainConfig, check_trainer_installed
    from agents.evaluation import check_out_dir, evaluate, prepare_out_dir, usable_cpus
    from agents.train import train
    from pokersquares_env.scoring import point_system

    tiny = _tiny()
    minutes = args.minutes if args.minutes is not None else (0.1 if tiny else DEFAULT_MINUTES)
    steps = args.steps if args.steps is not None else (None if tiny else DEFAULT_STEPS)  # None: the time governs
    games = args.games if args.games is not None else (20 if tiny else 500)
    out = Path(args.out)
    shaping = args.shaping or ("heuristic" if tiny else "tables")
    options = dict(
        algo="fast-ppo",
        scoring=args.scoring,
        # without a step budget (tiny mode), one that ~12k steps/s reach in the time, so the progress bar means something
        timesteps=steps or max(10_000, int(minutes * 60 * 12_000)),
        time_limit=minutes * 60.0,
        anneal_by="first" if steps is None else "steps",  # a step budget: no wall-clock in the run, it reproduces
        seed=args.seed,
        out=str(out),
        eval_every=10**12 if tiny else 200_000,
        eval_games=50 if tiny else 200,
        checkpoint_every=10**12 if tiny else 1_000_000,
        final_eval_games=0,  # evaluated below, beside the baselines
        num_envs=64 if tiny else None,
        shaping=shaping,
        # the demo has the machine to itself: two torch threads trained 1.49 times the steps per second of one on
        # a 2-core machine (medians of 3 runs, benchmarks/ppo_threads.py); more threads were not measured
        torch_threads=args.torch_threads or min(2, usable_cpus()),
        progress=not args.no_progress,
    )
    try:
        point_system(args.scoring)  # a bad system is named now, not after the training
        resolved = TrainConfig(**options).resolved()  # and so is any training option (the seed: at most 2**32 - 1)
        check_trainer_installed("fast-ppo")  # and torch missing, before --out is made or marked
        check_out_dir(args.out, name="--out")  # and an empty --out (Path('') would be the current folder)
        prepare_out_dir(out, name="--out")  # and an --out that is a file
        _check_demo_folder(out)  # and one that holds a training run the demo did not write
    except (ValueError, TypeError) as exc:  # ConfigError is a ValueError; a point file's non-number is a TypeError
        print(f"pokersquares demo: {exc}", file=sys.stderr)
        return 2
    from agents.train import planned_steps

    planned = planned_steps(resolved)  # fast-ppo trains whole updates: the budget rounded up to them
    budget = (f"{minutes:g} min" if steps is None else f"{planned:,} steps"
              + (f" ({steps:,} asked, rounded up to whole updates)" if planned != steps else "")
              + f" (at most {minutes:g} min)")
    print(f"[1/2] training fast masked PPO on PokerSquares-v0 ({args.scoring} reward, shaping={shaping}) for "
          f"{budget} -> {out}")
    if shaping == "tables":  # train (or load) the self-play line values now, outside the PPO time budget
        from agents.shaping import LinePotential

        LinePotential.make("tables", args.scoring)
    from agents.train import clear_run

    clear_run(out)  # the demo's own run (_check_demo_folder: never another one) and its mark, then the new run's mark
    (out / DEMO_MARK).write_text(json.dumps({"written_by": "pokersquares demo"}) + "\n")
    try:
        result = train(**options, overwrite=True)  # nothing left to replace: the mark stays
    except ConfigError as exc:  # what only the run folder can tell (checked above as far as it can be)
        print(f"pokersquares demo: {exc}", file=sys.stderr)
        return 2
    if getattr(result, "interrupted", False):  # Ctrl-C: stop here (no evaluation of an unfinished run)
        print(f"pokersquares demo: Ctrl-C stopped the training at step {result.steps:,}; its checkpoint and model "
              f"are kept in {out} (continue it with `pokersquares train --out {out} --resume`); nothing was "
              f"evaluated", file=sys.stderr)
        return 130
    print(f"      trained {result.steps:,} steps in {result.seconds:.0f} s; model: {result.model_path}")
    if steps is not None and result.steps < planned:
        print(f"      the {minutes:g}-minute limit stopped it before {planned:,} steps: the result is weaker than "
              f"on a faster machine (pass --minutes to allow more time)")
    agents = [f"fastppo:{out}"] + BASELINES
    if args.search:
        agents.append("expectimax:games=3000" if tiny else "expectimax")
    print(f"[2/2] evaluating {', '.join(agents)} on {games} common deals (seed {args.seed})")
    ev = evaluate(agents, games=games, seed=args.seed, scoring=args.scoring, jobs=args.jobs,
                  out_dir=str(out / "evaluation"), progress=not args.no_progress)
    print()
    print(ev.table())
    for row in ev.paired():
        if row["a"] == agents[0]:
            if row["deals"] < 2:  # no spread, so no interval (the summary table's ci95 says n/a)
                print(f"{row['a']} - {row['b']}: {row['mean_diff']:+.2f} on {row['deals']} shared deal (no interval)")
                continue
            print(f"{row['a']} - {row['b']}: {row['mean_diff']:+.2f} ± {row['ci95']:.2f} (95% CI over {row['deals']} shared deals)")
    print(f"\noutputs (records, tables, plots): {out / 'evaluation'}")
    return 0
