"""Fast masked PPO steps per second against the number of torch threads (what the demo's ``torch_threads`` rests on).

Run (on an otherwise idle machine; each run trains for ``--seconds``)::

    python benchmarks/ppo_threads.py                          # threads 1 and 2, 45 s each, 3 rounds: about 5 min
    python benchmarks/ppo_threads.py --threads 1 2 4 --seconds 30 --repeats 2

Every round trains ``fast-ppo`` (the demo's settings: American reward, ``--shaping`` tables) once per thread count,
in an order that alternates from round to round so that a drift of the machine's load does not favour one count,
after an untimed warm-up run. It prints each run's steps per second, then per thread count the median and its ratio to the first count's median
measured in the same rounds. ``--json FILE`` writes the same figures (its folder is made before the first run; the
file is written whole, a temporary file renamed into place). Steps come in whole updates of
``num_envs * num_steps`` (12,800 by default), so short runs are coarse. ``--num-envs`` below 32 makes an update
smaller than fast-ppo's minibatch of 1,600 steps: the minibatch is then the whole update (``num_envs * 50``), and
the script says so.
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

from pokersquares_env._files import output_file_problem, write_json  # noqa: E402
from pokersquares_env.cli import int_at_least, positive_float  # noqa: E402


def minibatch_for(num_envs: int | None) -> int | None:
    """fast-ppo's minibatch size, cut to one update of ``num_envs * num_steps`` steps when that is smaller (None: the
    default, for the default ``num_envs``)."""
    from agents.config import ALGO_DEFAULTS

    defaults = ALGO_DEFAULTS["fast-ppo"]
    if num_envs is None or num_envs * defaults["num_steps"] >= defaults["minibatch_size"]:
        return None
    return num_envs * defaults["num_steps"]


def measure(threads: int, seconds: float, *, shaping: str, num_envs: int | None, out: Path) -> float:
    """Steps per second of one ``fast-ppo`` run of ``seconds`` on ``threads`` torch threads."""
    from agents.train import train

    result = train(
        algo="fast-ppo", scoring="american", shaping=shaping, timesteps=10**9, time_limit=seconds,
        torch_threads=threads, num_envs=num_envs, minibatch_size=minibatch_for(num_envs), out=str(out),
        eval_every=10**12, checkpoint_every=10**12, final_eval_games=0, progress=False,
    )
    return result.steps / result.seconds






def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int_at_least(1), nargs="+", default=[1, 2], metavar="N",
                        help="torch thread counts to compare; the first is the reference (default 1 2)")
    parser.add_argument("--seconds", type=positive_float, default=45.0, help="training time per run (default 45)")
    parser.add_argument("--repeats", type=int_at_least(1), default=3, help="rounds of one run per count (default 3)")
    parser.add_argument("--shaping", choices=["none", "heuristic", "tables"], default="tables",
                        help="reward shaping, as in the demo (default tables; tables train on first use, outside "
                             "the timed runs)")
    parser.add_argument("--num-envs", type=int_at_least(1), default=None, help="sub-envs (default: fast-ppo's 256)")
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    if len(set(args.threads)) != len(args.threads):
        parser.error(f"--threads {' '.join(map(str, args.threads))}: expected each count once")
    from agents.config import ALGO_DEFAULTS, ConfigError, TrainConfig

    minibatch = minibatch_for(args.num_envs)
    if minibatch is not None:
        print(f"--num-envs {args.num_envs}: an update is {minibatch:,} steps, fewer than fast-ppo's minibatch of "
              f"{ALGO_DEFAULTS['fast-ppo']['minibatch_size']:,}: minibatch_size={minibatch:,} (one minibatch per "
              "update epoch)")
    try:  # a bad combination of options fails here, with its message, not as a traceback after the warm-up
        TrainConfig(algo="fast-ppo", scoring="american", shaping=args.shaping, num_envs=args.num_envs,
                    minibatch_size=minibatch).resolved()
    except ConfigError as exc:
        parser.error(f"fast-ppo cannot train with these options: {exc}")
    if args.json:
        problem = output_file_problem(args.json, "--json")
        if problem:
            parser.error(problem)
    if args.shaping == "tables":
        from agents.shaping import LinePotential

        LinePotential.make("tables", "american")  # train or load the tables before any run is timed
    rates: dict[int, list[float]] = {n: [] for n in args.threads}
    print("| round | torch threads | steps/s |")
    print("|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        # untimed warm-up: compiles the env's numba kernels, which would otherwise slow the first run only
        measure(args.threads[0], min(args.seconds, 3.0), shaping=args.shaping, num_envs=args.num_envs,
                out=Path(tmp) / "warm-up")
        for r in range(args.repeats):
            order = args.threads if r % 2 == 0 else args.threads[::-1]
            for n in order:
                rate = measure(n, args.seconds, shaping=args.shaping, num_envs=args.num_envs,
                               out=Path(tmp) / f"r{r}_t{n}")
                rates[n].append(rate)
                print(f"| {r + 1} | {n} | {rate:,.0f} |", flush=True)
    ref = statistics.median(rates[args.threads[0]])
    print()
    print(f"| torch threads | median steps/s | ratio to {args.threads[0]} thread(s) |")
    print("|---|---|---|")
    summary = []
    for n in args.threads:
        med = statistics.median(rates[n])
        summary.append({"threads": n, "median_steps_per_s": med, "ratio": med / ref, "runs": rates[n]})
        print(f"| {n} | {med:,.0f} | {med / ref:.2f} |")
    if args.json:
        write_json(args.json, indent=2, data={"seconds": args.seconds, "shaping": args.shaping, "results": summary})
    return 0


if __name__ == "__main__":
    sys.exit(main())
