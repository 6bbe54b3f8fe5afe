"""Memory of the native vector env: bytes per sub-env, and resident memory over a long run.

Run (nice it on a shared machine)::

    nice -n 10 python benchmarks/memory.py                      # 10 million sub-env steps, N=1024
    nice -n 10 python benchmarks/memory.py --steps 1e6 --quick  # a short check
    nice -n 10 python benchmarks/memory.py --backend numpy      # the numpy backend (no numba in the process)

It prints the env's own arrays per sub-env, the RSS growth measured when
making an env of ``--num-envs`` sub-envs, then the RSS every ``--every``
sub-env steps of a random-legal-cell policy, and the growth after the first
interval (the warm-up, where numpy's caches and the first final infos settle).
``--backend`` chooses the vector env's backend (default ``auto``: numba when
installed); the resident figures differ by about 150 MiB, what loading numba
and its compiler costs.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys

import numpy as np

from pokersquares_env.vector import BACKENDS, PokerSquaresVectorEnv


def rss_bytes() -> int:
    """Resident set size of this process, from /proc (Linux) or ``resource`` (peak, elsewhere)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # pragma: no cover - not Linux
        import resource

        scale = 1 if sys.platform == "darwin" else 1024
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def state_bytes(env: PokerSquaresVectorEnv) -> int:
    """Bytes of the numpy arrays the env keeps (its whole state and observation buffer)."""
    return sum(value.nbytes for value in vars(env).values() if isinstance(value, np.ndarray))


def mebibytes(text: str) -> float:
    """An ``argparse`` type: a finite number >= 0 (MiB); a bad value is a usage error naming it."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a finite number >= 0 (MiB)") from None
    if not (np.isfinite(value) and value >= 0):  # NaN too: a NaN tolerance would never fail
        raise argparse.ArgumentTypeError(f"{text}: expected a finite number >= 0 (MiB)")
    return value


def main(argv: list[str] | None = None) -> int:
    """Measure and print; exit status 1 if RSS grew by more than ``--tolerance`` after the warm-up."""
    from pokersquares_env.cli import int_at_least, positive_float, seed_arg

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--num-envs", type=int_at_least(1), default=1024, help="sub-envs (default 1024)")
    parser.add_argument("--steps", type=positive_float, default=None, help="sub-env steps in all (default 1e7, or "
                        "1e6 with --quick)")
    parser.add_argument("--every", type=positive_float, default=None,
                        help="print RSS every this many sub-env steps (default 1e6, or 1e5 with --quick)")
    parser.add_argument("--tolerance", type=mebibytes, default=4.0, help="allowed growth after warm-up, MiB (>= 0)")
    parser.add_argument("--quick", action="store_true",
                        help="defaults of 1e6 steps and RSS every 1e5 (for what --steps and --every do not give)")
    parser.add_argument("--seed", type=seed_arg, default=0)
    parser.add_argument("--backend", choices=BACKENDS, default="auto",
                        help="the vector env's backend (default auto: numba when installed, else numpy)")
    ns = parser.parse_args(argv)
    steps = ns.steps if ns.steps is not None else (1e6 if ns.quick else 10e6)
    every = ns.every if ns.every is not None else (1e5 if ns.quick else 1e6)
    n = ns.num_envs
    if n < 1 or steps < n or every < n:
        parser.error(f"--num-envs {n}, --steps {steps:g}, --every {every:g}: expected 1 <= num-envs <= every, steps")
    if int(steps // n) <= max(1, int(every // n)):  # one RSS sample: no growth could be measured, yet "flat" printed
        parser.error(f"--steps {steps:g} with --every {every:g} at --num-envs {n}: fewer than two RSS samples, so no "
                     f"growth can be measured; expected --steps above --every (whole calls of {n} sub-env steps)")

    from tqdm import tqdm

    probe = 16384
    try:  # loads (and, on first use, compiles) the backend before measuring
        warm = PokerSquaresVectorEnv(2, backend=ns.backend)
    except (ImportError, ValueError) as exc:
        parser.error(f"--backend {ns.backend}: {exc}")
    backend = warm.backend  # what "auto" resolved to (numpy if numba failed to compile)
    print(f"backend: {backend} (--backend {ns.backend})")
    warm.reset(seed=0)
    warm.step(np.argmax(warm.action_masks(), axis=1))
    del warm
    gc.collect()
    before = rss_bytes()
    big = PokerSquaresVectorEnv(probe, backend=backend)
    big.reset(seed=ns.seed)
    after = rss_bytes()
    per_env_state = state_bytes(big) / probe
    per_env_rss = (after - before) / probe
    del big
    gc.collect()
    print(f"state arrays: {per_env_state:,.0f} bytes per sub-env (observation buffer 522, rank counters 140, ...)")
    print(f"RSS growth making and resetting N={probe}: {per_env_rss:,.0f} bytes per sub-env")
    print(f"each step also returns new arrays: {522 + 25 + 8 + 8 + 1 + 1:,} bytes per sub-env "
          f"(observation, mask, card, reward, flags), freed when the caller drops them")

    env = PokerSquaresVectorEnv(n, backend=backend)
    _, info = env.reset(seed=ns.seed)
    rng = np.random.default_rng(ns.seed)
    calls = int(steps // n)
    report = max(1, int(every // n))
    samples: list[tuple[int, int]] = []
    rounded = f" (--steps {steps:g} rounded down to whole calls of {n})" if calls * n != steps else ""
    print(f"\nN={n}: {calls * n:,} sub-env steps ({calls:,} calls){rounded}, random legal cells")
    print("| sub-env steps | RSS (MiB) |")
    print("|---:|---:|")
    for call in tqdm(range(1, calls + 1), desc="stepping", mininterval=1.0, file=sys.stderr):
        scores = rng.random((n, 25)) * info["action_mask"]
        _, _, _, _, info = env.step(np.argmax(scores, axis=1))
        if call % report == 0 or call == calls:
            samples.append((call * n, rss_bytes()))
            print(f"| {call * n:,} | {samples[-1][1] / 2**20:.1f} |", flush=True)
    base = samples[0][1]
    peak = max(r for _, r in samples)
    growth = (peak - base) / 2**20
    print(f"\nRSS after the first interval {base / 2**20:.1f} MiB, peak {peak / 2**20:.1f} MiB, "
          f"growth {growth:+.2f} MiB over {samples[-1][0] - samples[0][0]:,} further sub-env steps")
    if growth > ns.tolerance:
        print(f"FAIL: RSS grew {growth:.2f} MiB > tolerance {ns.tolerance} MiB")
        return 1
    print(f"flat: within {ns.tolerance} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
