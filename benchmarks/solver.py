"""Benchmark the clairvoyant Poker Shuffle solver against plain simulated annealing on the same deals.

For each point system and each seeded deal (the first 25 cards of a shuffled
52-card deck), it runs ``pokersquares_env.shuffle.solve`` and the baseline
``pokersquares_env.shuffle.anneal`` and reports the mean scores, the mean time
per deal, how often the solver wins/ties/loses against the baseline, and how
many of the solver's independent chains reach its best score.  On the first
``--verify`` deals it reruns the solver with a different seed and four times
the chains: the share of deals where that heavier search finds nothing better
is an upper (optimistic) estimate of how often the default solver is optimal,
since every deal the default solves optimally is among them, but a heavier
search that finds nothing better does not prove the score optimal.  On the
first ``--bounds`` deals it computes a proven upper bound on the best score
(``pokersquares_env.shuffle.solver.upper_bound``: the LP relaxation of a
hand-packing program; needs scipy), so the true optimum lies between the
solver's score and the bound.  Every option and point system is checked
before the first deal, ``--out``'s folder is made then, and the file is
rewritten whole (a temporary file renamed into place) after each system.

    nice -n 10 python benchmarks/solver.py --deals 200 --out runs/solver.json
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

# Run as a script, this file's folder comes first on sys.path and its agents.py would hide the agents package.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))

import numpy as np  # noqa: E402

from agents.stats import fmt  # noqa: E402
from pokersquares_env._files import output_file_problem, write_json  # noqa: E402
from pokersquares_env.core import Rules, shuffled_deck  # noqa: E402
from pokersquares_env.scoring import point_system, points_level  # noqa: E402
from pokersquares_env.shuffle import anneal, solve  # noqa: E402
from pokersquares_env.shuffle.solver import MAX_RESTARTS, upper_bound  # noqa: E402


def deal(seed: int, index: int) -> np.ndarray:
    """The 25 cards of deal ``index`` of benchmark seed ``seed``."""
    return shuffled_deck(np.random.default_rng([seed, index]), Rules())[:25]


def run_system(system: str, args: argparse.Namespace) -> dict:
    """Solver and baseline figures over ``args.deals`` deals under one point system."""
    from tqdm import tqdm  # here, not at the top: the options parse without the play extra

    rows = []
    for d in tqdm(range(args.deals), desc=system, unit="deal"):
        cards = deal(args.seed, d)
        t0 = time.process_time()
        _, s_score, stats = solve(cards, system, seed=d, restarts=args.restarts, rounds=args.rounds, return_stats=True)
        t1 = time.process_time()
        _, a_score = anneal(cards, system, seed=d, steps=args.anneal_steps)
        t2 = time.process_time()
        at_best = sum(points_level(x) == points_level(s_score) for x in stats["chain_scores"]) / len(stats["chain_scores"])
        row = {"deal": d, "solver": float(s_score), "anneal": float(a_score), "solver_s": t1 - t0,
               "anneal_s": t2 - t1, "chains_at_best": at_best}
        if d < args.verify:
            _, v_score = solve(cards, system, seed=10_000 + d, restarts=4 * args.restarts, rounds=args.rounds)
            row["verify"] = float(v_score)
        if d < args.bounds:
            t3 = time.process_time()
            row["upper_bound"] = float(upper_bound(cards, system))
            row["bound_s"] = time.process_time() - t3
        rows.append(row)
    solver = np.array([r["solver"] for r in rows])
    base = np.array([r["anneal"] for r in rows])
    verified = [r for r in rows if "verify" in r]
    bounded = [r for r in rows if "upper_bound" in r]
    out = {
        "system": system,
        "deals": len(rows),
        "solver_mean": solver.mean(),
        "solver_sem": solver.std(ddof=1) / np.sqrt(len(rows)) if len(rows) > 1 else None,
        "anneal_mean": base.mean(),
        "anneal_sem": base.std(ddof=1) / np.sqrt(len(rows)) if len(rows) > 1 else None,
        "solver_cpu_s_per_deal": float(np.mean([r["solver_s"] for r in rows])),
        "anneal_cpu_s_per_deal": float(np.mean([r["anneal_s"] for r in rows])),
        "solver_better": int((solver > base).sum()),
        "tie": int((solver == base).sum()),
        "anneal_better": int((solver < base).sum()),
        "mean_chains_at_best": float(np.mean([r["chains_at_best"] for r in rows])),
        "verify_deals": len(verified),
        "verify_not_improved": sum(r["verify"] <= r["solver"] for r in verified),
        "verify_mean_gain": (float(np.mean([max(0.0, r["verify"] - r["solver"]) for r in verified]))
                             if verified else None),
        "bound_deals": len(bounded),
        "bound_solver_mean": float(np.mean([r["solver"] for r in bounded])) if bounded else None,
        "bound_mean": float(np.mean([r["upper_bound"] for r in bounded])) if bounded else None,
        "bound_closed": sum(r["upper_bound"] == r["solver"] for r in bounded),
        "rows": rows,
    }
    return out






def check_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """What the counts' types do not check, checked before the first deal: chains within the solver's limit (four
    times as many for ``--verify``), each point system known and given once, and for ``--bounds`` scipy and
    points >= 0; a usage error names the first that is not."""
    if args.restarts > MAX_RESTARTS:
        parser.error(f"--restarts {args.restarts}: expected an integer from 1 to {MAX_RESTARTS:,} (the most chains "
                     f"the solver runs)")
    if args.verify > 0 and 4 * args.restarts > MAX_RESTARTS:
        parser.error(f"--restarts {args.restarts} with --verify {args.verify}: the re-solve runs 4 x --restarts "
                     f"chains, at most {MAX_RESTARTS:,}: expected --restarts <= {MAX_RESTARTS // 4:,} (or --verify 0)")
    keys = []
    for name in args.systems:
        try:
            ps = point_system(name)
        except (ValueError, OSError) as exc:
            parser.error(f"--systems {name!r}: {exc}")
        if args.bounds > 0 and min(ps.points) < 0:
            parser.error(f"--systems {name!r} with --bounds {args.bounds}: the upper bound needs points >= 0")
        keys.append((tuple(ps.points), ps.win_threshold))
    if len(set(keys)) != len(keys):
        parser.error(f"--systems {' '.join(args.systems)}: expected each point system once")
    if args.bounds > 0:
        try:
            import scipy.optimize  # noqa: F401
        except ImportError:
            parser.error(f"--bounds {args.bounds}: the upper bound needs scipy (pip install scipy), or --bounds 0")


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print one summary line per system."""
    from pokersquares_env.cli import int_at_least, seed_arg

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int_at_least(1), default=200, help="seeded deals per system")
    parser.add_argument("--systems", nargs="+", default=["american", "english"], help="point systems")
    parser.add_argument("--seed", type=seed_arg, default=0, help="benchmark seed (deal d uses rng([seed, d]))")
    parser.add_argument("--restarts", type=int_at_least(1), default=48, help="solver chains")
    parser.add_argument("--rounds", type=int_at_least(0), default=40, help="solver kick-and-climb rounds")
    parser.add_argument("--anneal-steps", type=int_at_least(1), default=50_000, help="baseline annealing steps")
    parser.add_argument("--verify", type=int_at_least(0), default=16,
                        help="deals re-solved with 4x chains and another seed")
    parser.add_argument("--bounds", type=int_at_least(0), default=0,
                        help="deals given a proven LP upper bound (needs scipy)")
    parser.add_argument("--out", default=None, help="JSON file for the per-deal results (its folder is made first)")
    args = parser.parse_args(argv)
    check_options(parser, args)
    if args.out:
        problem = output_file_problem(args.out, "--out")
        if problem:
            parser.error(problem)
    results = []
    for system in args.systems:
        r = run_system(system, args)
        results.append(r)
        print(
            f"{system}: solver {r['solver_mean']:.2f} ± {fmt(r['solver_sem'])} "
            f"({r['solver_cpu_s_per_deal']:.2f} CPU s/deal) | SA baseline {r['anneal_mean']:.2f} "
            f"± {fmt(r['anneal_sem'])} "
            f"({r['anneal_cpu_s_per_deal']:.2f} CPU s/deal) | solver better/tie/worse "
            f"{r['solver_better']}/{r['tie']}/{r['anneal_better']} | chains at best {r['mean_chains_at_best']:.0%} | "
            f"4x re-solve found nothing better on {r['verify_not_improved']}/{r['verify_deals']} deals "
            f"(mean gain {fmt(r['verify_mean_gain'])})",
            flush=True,
        )
        if r["bound_deals"]:
            print(
                f"{system}: on {r['bound_deals']} deals solver mean {r['bound_solver_mean']:.2f} <= optimum <= "
                f"upper-bound mean {r['bound_mean']:.2f} (gap {r['bound_mean'] - r['bound_solver_mean']:.2f}); "
                f"bound met (solver proven optimal) on {r['bound_closed']}",
                flush=True,
            )
        if args.out:  # after each system, so a long run keeps what it has measured
            write_json(args.out, {"args": vars(args), "python": platform.python_version(), "results": results})


if __name__ == "__main__":
    main()
