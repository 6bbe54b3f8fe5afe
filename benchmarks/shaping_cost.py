"""What potential-based reward shaping costs fast-ppo in wall-clock: the same run timed with and without it.

Run (nice it on a shared machine)::

    nice -n 10 python benchmarks/shaping_cost.py                 # about 2 min: 100k steps, 3 rounds
    nice -n 10 python benchmarks/shaping_cost.py --timesteps 20000 --repeats 1   # a smoke test

Each round trains ``agents.train.train(algo="fast-ppo", timesteps=T, shaping=S, eval_every=20000, eval_games=200,
checkpoint_every=0, final_eval_games=0)`` once per shaping of ``--shapings`` (default ``none`` and ``tables``), in
turn, into a temporary folder; a warm-up run of each comes first (the ``tables`` potential's value tables are trained
then, and numba's kernels compiled), and each run is timed by its own clock (``TrainResult.seconds``), which starts
after the potential's tables are loaded, so no timed run pays for them.  The table gives the median seconds of
each shaping and its ratio to the first shaping's; its heading gives the steps a run takes (fast-ppo trains whole
updates of ``num_envs * num_steps`` = 12,800 steps, so ``T`` is rounded up to them: 100,000 asked, 102,400 run).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path and benchmarks/agents.py would hide the agents package.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))


def timed_run(shaping: str, timesteps: int, folder: Path, seed: int = 0) -> float:
    """Seconds of one fast-ppo training run of ``timesteps`` steps with ``shaping``: the run's own clock
    (``TrainResult.seconds``), which starts after the shaping potential is built (its tables loaded), so that no
    timed run pays for them."""
    from agents.train import train

    result = train(algo="fast-ppo", timesteps=timesteps, shaping=shaping, eval_every=20_000, eval_games=200,
                   checkpoint_every=0, final_eval_games=0, progress=False, seed=seed, out=str(folder), overwrite=True)
    return float(result.seconds)


def main(argv: list[str] | None = None) -> int:
    """Time the runs and print the Markdown table."""
    from agents.shaping import SHAPINGS

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--timesteps", type=int, default=100_000, help="steps of every timed run (default 100000)")
    parser.add_argument("--repeats", type=int, default=3, help="rounds; the table shows medians (default 3)")
    parser.add_argument("--shapings", nargs="+", default=["none", "tables"], choices=sorted(SHAPINGS),
                        help="shapings to time; ratios are to the first (default: none tables)")
    ns = parser.parse_args(argv)
    for name in ("timesteps", "repeats"):
        if getattr(ns, name) < 1:
            parser.error(f"--{name} {getattr(ns, name)}: expected a positive integer")
    if len(set(ns.shapings)) != len(ns.shapings):
        parser.error(f"--shapings {' '.join(ns.shapings)}: expected each shaping once")
    from agents.config import TrainConfig
    from agents.train import planned_steps

    cfg = TrainConfig(algo="fast-ppo", timesteps=ns.timesteps).resolved()  # what timed_run trains
    planned = planned_steps(cfg)  # fast-ppo trains whole updates: the budget rounded up to them
    times: dict[str, list[float]] = {s: [] for s in ns.shapings}
    with tempfile.TemporaryDirectory() as tmp:
        for shaping in ns.shapings:  # warm-up: tables trained or loaded, kernels compiled
            timed_run(shaping, min(ns.timesteps, 20_000), Path(tmp) / shaping)
        for r in range(ns.repeats):
            for shaping in ns.shapings:
                times[shaping].append(timed_run(shaping, ns.timesteps, Path(tmp) / shaping))
                print(f"round {r}: {shaping} {times[shaping][-1]:.2f} s", flush=True)
    base = statistics.median(times[ns.shapings[0]])
    rounded = (f" (--timesteps {ns.timesteps:,} rounded up to whole updates of {planned_steps(cfg, 1):,} steps)"
               if planned != ns.timesteps else "")
    print(f"\nfast-ppo, {planned:,} steps a run{rounded}, medians of {ns.repeats} alternating rounds\n")
    print(f"| shaping | seconds (median) | runs | x {ns.shapings[0]} |")
    print("|---|---:|---|---:|")
    for shaping, values in times.items():
        median = statistics.median(values)
        print(f"| {shaping} | {median:.2f} | {', '.join(f'{v:.2f}' for v in values)} | {median / base:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
