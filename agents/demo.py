"""``pokersquares demo``: the main job -- train a placement agent for a few minutes, then evaluate it.

1. Trains the fast vectorised masked PPO (``agents/fast_ppo.py``) on ``PokerSquares-v0``
   for ``--minutes`` of wall-clock time, writing a normal run folder.  Its rewards are shaped
   (``--shaping``, :mod:`agents.shaping`) by the self-play line values that ``expectimax`` plays on:
   the game's line points plus the change each placement makes to the estimated worth of the
   unfinished lines.  That leaves every game's return equal to its score minus a constant, so the
   best policies are unchanged, but credit arrives at once instead of when a line completes;
   unshaped, four minutes of PPO is not enough for a reliable policy.
2. Plays it, the baselines (random, greedy, rules) and ``expectimax`` -- two-ply search on
   hand-abstraction values learned by Monte Carlo self-play, trained on first use (about half a
   minute with the compiled kernels) -- on the same seeded deals through the evaluation harness,
   and prints the summary and the paired differences.  ``--no-search`` leaves ``expectimax`` out.

With ``POKERSQUARES_TINY=1`` (set by the test command) the budgets shrink to seconds.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from pokersquares_env.cli import int_at_least, positive_float, seed_arg

HELP = "train a placement agent for a few minutes, then evaluate it against baselines on common deals"

BASELINES = ["random", "greedy", "rules"]


def _tiny() -> bool:
    return os.environ.get("POKERSQUARES_TINY", "") not in ("", "0")


def add_arguments(parser) -> None:
    """Options of ``pokersquares demo``."""
    parser.add_argument("--minutes", type=positive_float, default=None, help="training wall-clock budget (default 4; 0.1 when POKERSQUARES_TINY=1)")
    parser.add_argument("--scoring", default="american", help="point system used as reward and for the evaluation")
    parser.add_argument("--games", type=int_at_least(1), default=None, help="common deals per agent (default 500; 20 when tiny)")
    parser.add_argument("--seed", type=seed_arg, default=0, help="training and evaluation seed")
    parser.add_argument("--out", default="runs/demo", help="run folder (model, logs, evaluation outputs)")
    parser.add_argument("--jobs", type=int_at_least(1), default=1, help="processes for the evaluation")
    from agents.shaping import SHAPINGS

    parser.add_argument("--shaping", choices=list(SHAPINGS), default=None,
                        help="potential-based reward shaping of the PPO run (default tables: the self-play line "
                             "values, trained on first use and cached; heuristic when POKERSQUARES_TINY=1)")
    parser.add_argument("--search", action=argparse.BooleanOptionalAction, default=True,
                        help="also evaluate expectimax on self-play-learned value tables (trained on first use, about "
                             "30 s; default on)")


def run(args) -> int:
    """Train, evaluate, print; returns the exit status."""
    from agents.evaluation import evaluate
    from agents.train import train
    from pokersquares_env.scoring import point_system

    tiny = _tiny()
    minutes = args.minutes if args.minutes is not None else (0.1 if tiny else 4.0)
    games = args.games if args.games is not None else (20 if tiny else 500)
    try:
        point_system(args.scoring)  # a bad system is named now, not after the training
    except ValueError as exc:
        print(f"pokersquares demo: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    shaping = args.shaping or ("heuristic" if tiny else "tables")
    print(f"[1/2] training fast masked PPO on PokerSquares-v0 ({args.scoring} reward, shaping={shaping}) for "
          f"{minutes:g} min -> {out}")
    if shaping == "tables":  # train (or load) the self-play line values now, outside the PPO time budget
        from agents.shaping import LinePotential

        LinePotential.make("tables", args.scoring)
    t0 = time.time()
    result = train(
        algo="fast-ppo",
        scoring=args.scoring,
        # a step budget a free 2-core machine reaches in about that time (~12k steps/s), so the
        # progress bar means something; the wall-clock limit stops it first on a slower machine
        timesteps=max(10_000, int(minutes * 60 * 12_000)),
        time_limit=minutes * 60.0,
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
        torch_threads=min(2, os.cpu_count() or 1),
        progress=True,
    )
    print(f"      trained {result.steps:,} steps in {time.time() - t0:.0f} s; model: {result.model_path}")
    agents = [f"fastppo:{out}"] + BASELINES
    if args.search:
        agents.append("expectimax:games=3000" if tiny else "expectimax")
    print(f"[2/2] evaluating {', '.join(agents)} on {games} common deals (seed {args.seed})")
    ev = evaluate(agents, games=games, seed=args.seed, scoring=args.scoring, jobs=args.jobs,
                  out_dir=str(out / "evaluation"), progress=True)
    print()
    print(ev.table())
    for row in ev.paired():
        if row["a"] == agents[0]:
            print(f"{row['a']} - {row['b']}: {row['mean_diff']:+.2f} ± {row['ci95']:.2f} (95% CI over {row['deals']} shared deals)")
    print(f"\noutputs (records, tables, plots): {out / 'evaluation'}")
    return 0
