"""Benchmark the Soliter solver: solve rate (95% CI) and CPU time per deal on seeded deals.

Deal ``i`` is ``Soliter-v0``'s ``reset(seed=seed0 + i)``.  Each deal gets
``--time-limit`` CPU seconds of ``pokersquares_env.soliter.solve``; every plan
found is replayed in a fresh env with the same seed and must win (a failed
replay aborts the run; so does a replay that ``--max-steps`` cuts short before
the plan's end, with a message that says so).  "Exhausted" counts deals whose
whole pruned search space was searched without a win (proved unsolvable for
one-deck games, where every pruning rule is exact).  ``--out``'s folder is made
before the first deal, and the file is written whole (a temporary file renamed
into place).

    nice -n 10 python benchmarks/soliter.py --deals 1000 --free-cells 4 --time-limit 1
    nice -n 10 python benchmarks/soliter.py --variant 36 --deals 200 --out runs/soliter-36.json

Published (Baker's Game, 4 cells 75.0% / 3 cells 28.9% / 5 cells 97.9% of random
deals, Bryan; 74.3% of Microsoft deals 1..10M, Freecell Solver) figures are
quoted in ``docs/soliter.md``; this script prints only what it measures.
"""

from __future__ import annotations

import argparse
import math
import platform
import statistics
import time

import gymnasium as gym

import pokersquares_env  # noqa: F401  (registers Soliter-v0)
from pokersquares_env._files import output_file_problem, write_json
from pokersquares_env.cli import int_at_least, seed_arg
from pokersquares_env.soliter import VARIANTS, solve_result


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score 95% interval of a proportion."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def replay(make_kwargs: dict, seed: int, plan: list[int]) -> tuple[str, int]:
    """``plan`` replayed in a fresh env dealt with ``seed``: ``("won" | "lost" | "truncated", actions taken)``;
    ``"truncated"`` when the env's step limit ended the episode before the plan's last action."""
    env = gym.make("Soliter-v0", **make_kwargs)
    env.reset(seed=seed)
    info, taken, trunc = {"won": False}, 0, False
    for a in plan:
        _obs, _r, term, trunc, info = env.step(a)
        taken += 1
        if term or trunc:
            break
    env.close()
    if info["won"]:
        return "won", taken
    return ("truncated" if trunc and taken < len(plan) else "lost"), taken






def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print (and optionally save) its figures."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--variant", default="classic", choices=sorted(VARIANTS))
    p.add_argument("--free-cells", type=int, default=None, help="override the variant's free cells")
    p.add_argument("--columns", type=int, default=None, help="override the variant's columns")
    p.add_argument("--jokers", type=int, default=None, help="override the variant's jokers")
    p.add_argument("--deals", type=int, default=1000)
    p.add_argument("--seed0", type=seed_arg, default=0, help="first deal seed")
    p.add_argument("--time-limit", type=float, default=1.0, help="CPU seconds per deal")
    p.add_argument("--max-steps", type=int_at_least(1), default=None, help="env step limit for the replay (default 100,000: the replay checks the solver's "
                   "plan, not the env's RL step limit of 20 per card; a plan it cuts short stops the run)")
    p.add_argument("--out", default=None, help="write the figures and per-deal rows to this JSON file (its folder is "
                   "made first)")
    args = p.parse_args(argv)
    if args.deals < 1:
        p.error(f"--deals {args.deals}: expected at least 1")
    if not args.time_limit > 0:
        p.error(f"--time-limit {args.time_limit}: expected a positive number of seconds")
    kwargs: dict = {"variant": args.variant}
    for name in ("free_cells", "columns", "jokers"):
        if getattr(args, name) is not None:
            kwargs[name] = getattr(args, name)
    if args.max_steps is not None:
        kwargs["max_steps"] = args.max_steps
    else:
        kwargs["max_steps"] = 100_000  # the replay checks the plan, not the RL step limit
    try:
        env = gym.make("Soliter-v0", **kwargs)
    except (ValueError, TypeError) as exc:
        given = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in kwargs.items() if k != "max_steps"
                         or args.max_steps is not None)
        p.error(f"{given}: {exc}")
    if args.out:
        problem = output_file_problem(args.out, "--out")
        if problem:
            p.error(problem)
    from tqdm import tqdm  # here, not at the top: the options parse without the play extra

    rows = []
    bar = tqdm(range(args.seed0, args.seed0 + args.deals), desc=f"soliter {args.variant}", unit="deal")
    solved = 0
    for seed in bar:
        env.reset(seed=seed)
        res = solve_result(env, args.time_limit)
        if res.plan is not None:
            outcome, taken = replay(kwargs, seed, res.plan)
            if outcome == "truncated":  # the step limit, not the solver: say so
                bar.close()
                p.error(f"seed {seed}: the replay stopped at --max-steps {kwargs['max_steps']}, before the end of the "
                        f"solver's plan of {len(res.plan)} actions ({taken} replayed), so the plan was not checked: "
                        f"expected a --max-steps of at least the longest plan (default 100,000)")
            if outcome != "won":
                raise SystemExit(f"seed {seed}: the plan of {len(res.plan)} actions does not win on replay")
            solved += 1
        rows.append({"seed": seed, "solved": res.plan is not None, "moves": None if res.plan is None else len(res.plan),
                     "nodes": res.nodes, "cpu_s": res.seconds, "exhausted": res.exhausted})
        bar.set_postfix(rate=f"{solved / len(rows):.3f}")
    n = len(rows)
    lo, hi = wilson(solved, n)
    times = [r["cpu_s"] for r in rows]
    solved_times = [r["cpu_s"] for r in rows if r["solved"]]
    summary = {
        "variant": args.variant,
        "options": {k: v for k, v in kwargs.items() if k not in ("variant", "max_steps")},
        "deals": n,
        "seed0": args.seed0,
        "time_limit_s": args.time_limit,
        "solved": solved,
        "solve_rate": solved / n,
        "ci95": [lo, hi],
        "exhausted": sum(r["exhausted"] for r in rows),
        "timed_out": sum(1 for r in rows if not r["solved"] and not r["exhausted"]),
        "cpu_s_mean": statistics.fmean(times),
        "cpu_s_median": statistics.median(times),
        "cpu_s_mean_solved": statistics.fmean(solved_times) if solved_times else None,
        "moves_mean": statistics.fmean([r["moves"] for r in rows if r["solved"]]) if solved else None,
        "python": platform.python_version(),
        "when": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    print(
        f"{args.variant} {summary['options']}: solved {solved}/{n} = {100 * solved / n:.1f}% "
        f"(95% CI {100 * lo:.1f}-{100 * hi:.1f}%), exhausted {summary['exhausted']}, timed out {summary['timed_out']}; "
        f"CPU s/deal mean {summary['cpu_s_mean']:.3f}, median {summary['cpu_s_median']:.3f}"
        + (f", mean over solved {summary['cpu_s_mean_solved']:.3f}" if solved_times else "")
        + (f"; plan length mean {summary['moves_mean']:.0f}" if solved else "")
    )
    if args.out:
        write_json(args.out, {"summary": summary, "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
