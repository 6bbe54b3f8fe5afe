"""Steps per second of PokerSquares-v0 (single and native vector env) against Gymnasium's FrozenLake-v1.

Run (other people may share the machine: nice it, and quote ratios from one run)::

    nice -n 10 python benchmarks/speed.py            # about a minute
    nice -n 10 python benchmarks/speed.py --quick    # a few seconds
    nice -n 10 python benchmarks/speed.py --backend numpy   # the vector env on plain numpy (a core-only install)

Every figure is the median of ``--repeats`` timed runs, measured in rounds so
that each round times every row once (load changes then hit all rows alike).
The ratio column divides by FrozenLake-v1's median steps/s through ``gym.make``;
the ``score_grids`` row counts lines scored, not env steps, so it has no
like-for-like ratio and prints ``n/a`` there.  The load average is printed
before the first round and after the last.
Policies: FrozenLake always moves down (action 1); Poker Squares plays the
first legal cell, taken from ``info["action_mask"]`` (the vector env does it
for all sub-envs with one ``argmax``).  Vector rows name their backend:
``--backend`` (default ``"auto"``: numba when installed) and, when that is
numba, plain numpy at N=4096 for comparison.
Steps counted: a vector row counts every sub-env step, including the step
that resets a finished game (Gymnasium's next-step autoreset: 26 steps a
game, 25 placements), as a vector-env user's step budget counts them; the
single-env row counts its 25 placements a game (its ``reset()`` calls are
timed, not counted).  Per card placed, a vector row is therefore 25/26 of its
steps/s, about 4% less than printed.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable

import gymnasium as gym
import numpy as np

import pokersquares_env  # noqa: F401  (registers PokerSquares-v0)
from pokersquares_env.scoring import score_grids
from pokersquares_env.vector import BACKENDS, PokerSquaresVectorEnv

VECTOR_SIZES = (1, 64, 1024, 4096, 16384)


def time_frozenlake(steps: int) -> float:
    """FrozenLake-v1 steps/s through ``gym.make`` (the reference)."""
    env = gym.make("FrozenLake-v1")
    env.reset(seed=0)
    start = time.perf_counter()
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(1)
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - start)


def time_single(steps: int) -> float:
    """PokerSquares-v0 steps/s through ``gym.make``, first legal cell."""
    env = gym.make("PokerSquares-v0")
    _, info = env.reset(seed=0)
    mask = info["action_mask"]
    start = time.perf_counter()
    for _ in range(steps):
        _, _, terminated, _, info = env.step(int(mask.argmax()))
        if terminated:
            _, info = env.reset()
        mask = info["action_mask"]
    return steps / (time.perf_counter() - start)


def time_vector(num_envs: int, calls: int, copy: bool = True, backend: str = "auto") -> float:
    """Sub-env steps/s of the native vector env (default observation), first legal cell in every sub-env."""
    env = PokerSquaresVectorEnv(num_envs, copy=copy, backend=backend)
    _, info = env.reset(seed=0)
    start = time.perf_counter()
    for _ in range(calls):
        actions = np.argmax(info["action_mask"].view(bool), axis=1)
        _, _, _, _, info = env.step(actions)
    return num_envs * calls / (time.perf_counter() - start)


def time_sync(num_envs: int, calls: int) -> float:
    """Sub-env steps/s of ``gym.make_vec(..., vectorization_mode="sync")`` (Gymnasium's Python loop)."""
    env = gym.make_vec("PokerSquares-v0", num_envs=num_envs, vectorization_mode="sync")
    _, info = env.reset(seed=0)
    start = time.perf_counter()
    for _ in range(calls):
        actions = np.argmax(info["action_mask"].view(bool), axis=1)
        _, _, _, _, info = env.step(actions)
    seconds = time.perf_counter() - start  # the steps only: closing the env is not timed
    env.close()
    return num_envs * calls / seconds


BOARD_BATCH = 65536


def _random_boards() -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.argsort(rng.random((BOARD_BATCH, 52)), axis=1)[:, :25]


def time_lines(calls: int, boards: list[np.ndarray] = []) -> float:  # noqa: B006 (a cache on purpose)
    """Lines scored per second by ``score_grids`` on a batch of 65,536 full random boards (10 lines each)."""
    if not boards:
        boards.append(_random_boards())
    grids = boards[0]
    start = time.perf_counter()
    for _ in range(calls):
        score_grids(grids, "american")
    return 10 * BOARD_BATCH * calls / (time.perf_counter() - start)


LINES_ROW = "score_grids: lines scored/s"


def loadavg() -> tuple[float, float, float]:
    """The 1, 5 and 15 minute load averages (NaN where the platform has none)."""
    return os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3


def _fmt_load(load: tuple[float, float, float]) -> str:
    return " ".join(f"{x:.1f}" for x in load)


def calibrate(run: Callable[[int], float], per_size: int, seconds: float, start: int) -> int:
    """A work size (steps or calls) that takes about ``seconds``, from one short trial run."""
    rate = run(start)
    return max(1, int(rate * seconds / per_size))


def main(argv: list[str] | None = None) -> int:
    """Run every measurement and print the Markdown table."""
    from pokersquares_env.cli import int_at_least, positive_float

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="0.1 s runs and 3 repeats: a smoke test, not a measurement")
    parser.add_argument("--repeats", type=int_at_least(1), default=None,
                        help="timed runs per row; the table shows medians (default 5, or 3 with --quick)")
    parser.add_argument("--seconds", type=positive_float, default=None,
                        help="target seconds per timed run (default 0.6, or 0.1 with --quick)")
    parser.add_argument("--no-extra", action="store_true",
                        help="skip the copy=False and SyncVectorEnv rows (the numpy comparison row stays)")
    parser.add_argument("--backend", choices=BACKENDS, default="auto",
                        help="the vector env's backend (default auto: numba when installed, else numpy); with "
                             "numba, a plain-numpy row at N=4096 is added for comparison")
    ns = parser.parse_args(argv)
    repeats = ns.repeats if ns.repeats is not None else (3 if ns.quick else 5)
    seconds = ns.seconds if ns.seconds is not None else (0.1 if ns.quick else 0.6)

    from tqdm import tqdm

    load_before = loadavg()
    print(f"load average before the first round: {_fmt_load(load_before)}", flush=True)
    try:
        default = PokerSquaresVectorEnv(1, backend=ns.backend).backend  # what --backend resolves to here
    except (ImportError, ValueError) as exc:
        parser.error(f"--backend {ns.backend}: {exc}")
    print(f"vector env backend: {default} (--backend {ns.backend})", flush=True)
    # (label, function of a work size -> rate, units counted per work size, work size of the trial run)
    rows: list[tuple[str, Callable[[int], float], int, int]] = [
        ("FrozenLake-v1, gym.make (reference)", time_frozenlake, 1, 2000),
        ("PokerSquares-v0, gym.make", time_single, 1, 2000),
    ]
    for n in VECTOR_SIZES:
        rows.append((f"PokerSquaresVectorEnv N={n} ({default})", lambda c, n=n: time_vector(n, c, backend=default), n,
                     max(3, 2000 // n)))
    if default == "numba":  # the plain-numpy comparison row, with or without --no-extra
        rows.append(("PokerSquaresVectorEnv N=4096 (numpy)", lambda c: time_vector(4096, c, backend="numpy"), 4096, 3))
    if not ns.no_extra:
        rows.append((f"PokerSquaresVectorEnv N=4096 ({default}), copy=False",
                     lambda c: time_vector(4096, c, copy=False, backend=default), 4096, 3))
        rows.append(("SyncVectorEnv N=64 (Gymnasium loop)", lambda c: time_sync(64, c), 64, 10))
    rows.append((LINES_ROW, time_lines, 10 * BOARD_BATCH, 1))

    sizes = {label: calibrate(run, per, seconds, start) for label, run, per, start in tqdm(rows, desc="calibrating")}
    results: dict[str, list[float]] = {label: [] for label, *_ in rows}
    for _ in tqdm(range(repeats), desc="rounds"):
        for label, run, _, _ in rows:
            results[label].append(run(sizes[label]))

    load_after = loadavg()
    medians = {label: statistics.median(v) for label, v in results.items()}
    reference = medians[rows[0][0]]
    print(f"\nMachine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"load average {_fmt_load(load_before)} before the first round, {_fmt_load(load_after)} after the last; "
          f"Python {platform.python_version()}, numpy {np.__version__}, gymnasium {gym.__version__}; "
          f"vector env backend {default}; medians of {repeats} runs{' (--quick)' if ns.quick else ''}\n")
    print("| what | steps/s | x FrozenLake-v1 | spread (min-max) |")
    print("|---|---:|---:|---:|")
    for label, *_ in rows:
        values = results[label]
        lines = label == LINES_ROW  # lines scored, not env steps: no like-for-like ratio to FrozenLake's steps
        ratio = "n/a" if lines else f"{medians[label] / reference:.2f}"
        print(f"| {label} | {medians[label]:,.0f}{' lines/s' if lines else ''} | {ratio} | "
              f"{min(values):,.0f}-{max(values):,.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
