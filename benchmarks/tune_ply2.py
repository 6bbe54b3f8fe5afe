"""Does tuning the tables for two-ply play beat tuning them for one-ply play?  (Issue 5's 127 target.)

``pokersquares experiment tune-tables`` tunes the multipliers of the value
tables for one-ply expectimax, which is fast enough for 60 candidates on
20,000 deals a generation; the strong agents search two plies.  This script
starts from a one-ply run's ``theta.json`` and continues the cross-entropy
search with two-ply expectimax as the judge (fewer candidates and deals: a
two-ply game costs about 2.3 ms on 2 cores against 25 us), then plays the
untuned, the one-ply-tuned and the two-ply-tuned tables with two-ply
expectimax on the same held-out deals and prints the paired differences::

    python benchmarks/tune_ply2.py --init runs/tune_tables/theta.json --out runs/tune_tables_ply2

(the defaults: 14 generations of 20 candidates on 3,000 deals, spread 0.1;
held-out: 6,000 decks of seed 99, the tune-tables experiment's).  Writes
``tables.npz`` and ``result.json`` (theta, each generation, the evaluation).
Needs the compiled kernels (numba).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path and benchmarks/agents.py would hide the agents package.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))

#: what the script writes into ``--out`` (a rerun replaces them)
OUTPUTS = ("tables.npz", "result.json")

def main(argv: list[str] | None = None) -> int:
    from pokersquares_env.cli import int_at_least, seed_arg

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--init", required=True, help="theta.json of a one-ply tune-tables run (the start)")
    parser.add_argument("--scoring", default="american")
    parser.add_argument("--generations", type=int, default=14)
    parser.add_argument("--population", type=int, default=20)
    parser.add_argument("--elite", type=int, default=5)
    parser.add_argument("--games", type=int, default=3000, help="deals per generation")
    parser.add_argument("--sigma", type=float, default=0.1, help="starting spread around the one-ply theta")
    parser.add_argument("--eval-games", type=int_at_least(2), default=6000,
                        help="held-out deals (at least 2: the paired differences' intervals need two)")
    parser.add_argument("--seed", type=seed_arg, default=11)
    parser.add_argument("--table-games", type=int_at_least(1), default=None,
                        help="size of the tables' training (tests; default: the agents' default tables)")
    parser.add_argument("--out", default="runs/tune_tables_ply2", help="the folder of tables.npz and result.json")
    args = parser.parse_args(argv)

    from agents.evaluation import _jsonable, check_out_dir
    from agents.expectimax import DEFAULT_FEATURES, DEFAULT_GAMES, DEFAULT_PHASES
    from agents.experiments.reward_shaping import _stats
    from agents.tables import load_or_train
    from agents.tuning import (
        check_compiled,
        check_options,
        load_theta,
        play_scores,
        random_decks,
        scale_values,
        tune_tables,
    )
    from pokersquares_env._files import write_json
    from pokersquares_env.core import Rules
    from pokersquares_env.scoring import point_system

    try:  # before the tables are made and the tuning runs
        check_compiled("benchmarks/tune_ply2.py")  # the tuning plays in the compiled kernels: numba
        check_out_dir(args.out, name="--out")
    except ValueError as exc:
        parser.error(str(exc))
    if os.path.isdir(args.out):  # its own two files are replaced; a folder holding anything else is someone's
        others = sorted(set(os.listdir(args.out)) - set(OUTPUTS))
        if others:
            parser.error(f"--out {args.out!r} holds entries this script does not write ({', '.join(others[:5])}): "
                         f"expected a new or empty folder, or one holding only {' and '.join(OUTPUTS)} (replaced)")
    try:
        init = load_theta(args.init)
        check_options(ply=2, generations=args.generations, population=args.population, elite=args.elite,
                      games=args.games, sigma=args.sigma, bins=init.shape[2])
        system = point_system(args.scoring)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    base = load_or_train(system, Rules(), games=args.table_games or DEFAULT_GAMES, phases=DEFAULT_PHASES,
                         features=DEFAULT_FEATURES)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()

    def show(record: dict[str, float]) -> None:
        print(f"generation {record['generation']}: untuned {record['base']:.2f}, current theta "
              f"{record['mean_theta']:.2f}, best {record['best']:.2f} ({time.perf_counter() - start:.0f} s)",
              flush=True)

    result = tune_tables(base, ply=2, generations=args.generations, population=args.population, elite=args.elite,
                         games=args.games, sigma=args.sigma, bins=init.shape[2], init=init, seed=args.seed,
                         callback=show)
    result.tables.save(out / "tables.npz")
    decks = random_decks(base.rules, args.eval_games, [99, 93])
    untuned = play_scores(base.values, decks, base, 2)
    one = play_scores(scale_values(base.values, init), decks, base, 2)
    two = play_scores(result.tables.values, decks, base, 2)
    evaluation = {"games": args.eval_games, "untuned": float(untuned.mean()), "ply1_tuned": float(one.mean()),
                  "ply2_tuned": float(two.mean()), "ply1_tuned_vs_untuned": _stats(one - untuned),
                  "ply2_tuned_vs_untuned": _stats(two - untuned), "ply2_tuned_vs_ply1_tuned": _stats(two - one)}
    print(f"two-ply expectimax on {args.eval_games} held-out deals: untuned {untuned.mean():.2f}, "
          f"one-ply-tuned {one.mean():.2f}, two-ply-tuned {two.mean():.2f}")
    for key in ("ply1_tuned_vs_untuned", "ply2_tuned_vs_untuned", "ply2_tuned_vs_ply1_tuned"):
        print(f"  {key}: {evaluation[key]['mean']:+.2f} +- {evaluation[key]['ci95']:.2f}")
    write_json(str(out / "result.json"), _jsonable({"theta": result.theta.tolist(), "history": result.history,
                                                   "evaluation": evaluation, "args": vars(args)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
