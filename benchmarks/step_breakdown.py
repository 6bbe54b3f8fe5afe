"""Where a native vector env step's time goes: nanoseconds per sub-env step, piece by piece.

Run (nice it on a shared machine; the pieces are medians of ``--repeats`` rounds, each round timing every piece once)::

    nice -n 10 python benchmarks/step_breakdown.py             # about 20 s
    nice -n 10 python benchmarks/step_breakdown.py --num-envs 1024 --backend numpy

The whole step is ``env.step`` under the speed benchmark's policy (the first legal cell of every sub-env, one
``argmax`` over the masks), timed over whole games.  The pieces, each timed alone on the same env size:

* ``policy``: the ``argmax`` over the masks that picks the cells;
* ``update``: the board update alone (``_advance``: the compiled kernel under numba), timed over the 25 placements
  of a game from an empty board and scaled by 25/26 per sub-env step (``step`` updates the boards on the 25 placing
  steps of a game's 26, not on the reset step);
* ``observation copy``: copying the ``(N, 522)`` observation buffer, which ``step`` returns (``copy=True``), with
  the numpy backend.  The numba kernels copy each row into the step's fresh array as they update it (one pass over
  the memory instead of two), so with numba the two pieces are timed together as ``update and observation copy (one
  pass)``: the kernel writing into a new array, as ``step`` calls it;
* ``info``: building the info dict (masks, cards);
* ``dealing``: dealing the decks of the games that end, exactly as the single env deals them (one deal per 26 sub-env
  steps: 25 placements and the reset step), in the batches a step deals;
* ``the rest``: the whole step less the pieces above (``step``'s own Python, resets, action checks).

Every row but ``the rest`` is the median over the rounds; ``the rest`` is the whole step's median less the sum of the
pieces' medians, so the rows add up to the whole step.  The pieces are timed apart (their own sum need not be the
whole step's time), so ``the rest`` is what is left, not a measurement.
Gymnasium's FrozenLake-v1 (through ``gym.make``, always moving down) is timed in every round too, so that a figure can
be set against the machine's speed at the time: its median steps/s is printed with the table.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

from pokersquares_env.vector import BACKENDS, PokerSquaresVectorEnv

MOVES = 25  # placements of a game; a game takes MOVES + 1 steps with the autoreset step
REST = "the rest (step's own Python, resets, checks)"
WHOLE = "whole step"
FUSED = "update and observation copy (one pass)"


def _timed(run: Callable[[], None], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        run()
    return (time.perf_counter() - start) / calls


def _speed_module():
    """benchmarks/speed.py, loaded by path (its FrozenLake timing is the reference both scripts use)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("bench_speed", Path(__file__).resolve().parent / "speed.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measure(num_envs: int, games: int, backend: str) -> dict[str, float]:
    """One round: seconds per sub-env step of each piece and of the whole step (see the module docstring)."""
    env = PokerSquaresVectorEnv(num_envs, backend=backend)
    obs, info = env.reset(seed=0)
    steps = games * (MOVES + 1)
    start = time.perf_counter()
    for _ in range(steps):
        actions = np.argmax(info["action_mask"].view(bool), axis=1)
        obs, _, _, _, info = env.step(actions)
    whole = (time.perf_counter() - start) / steps
    masks = info["action_mask"]
    policy = _timed(lambda: np.argmax(masks.view(bool), axis=1), steps)

    ids = np.arange(num_envs)
    fused = env._kernels is not None  # the kernels fill the step's fresh observation as they update
    update = 0.0
    for _ in range(games):  # free placement, first legal cell: move k goes to cell k in every sub-env
        env.reset(seed=1)
        for k in range(MOVES):
            cells = np.full(num_envs, k, dtype=np.int64)
            t = time.perf_counter()
            if fused:
                env._advance(ids, cells, np.empty_like(env._obs))
            else:
                env._advance(ids, cells)
            update += time.perf_counter() - t
    update /= games * MOVES  # per placement
    update *= MOVES / (MOVES + 1)  # per step: the reset step of every game's MOVES + 1 updates no board
    pieces = {"policy (argmax over the masks)": policy}
    if fused:
        pieces[FUSED] = update
    else:
        pieces["update (board, lines, observation)"] = update
        pieces["observation copy"] = _timed(env._obs.copy, steps)
    pieces["info dict"] = _timed(env._info, steps)
    batch = max(1, round(num_envs / (MOVES + 1)))  # the decks a step deals, on average
    pieces["dealing"] = _timed(lambda: env._deal(batch), steps)
    per_step = {name: seconds / num_envs for name, seconds in pieces.items()}
    per_step[WHOLE] = whole / num_envs
    env.close()
    return per_step


def main(argv: list[str] | None = None) -> int:
    """Measure and print the Markdown table of nanoseconds per sub-env step."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--num-envs", type=int, default=4096, help="sub-envs (default 4096, the speed target's)")
    parser.add_argument("--games", type=int, default=4, help="games per sub-env per round (default 4)")
    parser.add_argument("--repeats", type=int, default=5, help="rounds; the table shows medians (default 5)")
    parser.add_argument("--backend", choices=BACKENDS, default="auto",
                        help="the vector env's backend (default auto: numba when installed, else numpy)")
    ns = parser.parse_args(argv)
    for name in ("num_envs", "games", "repeats"):
        if getattr(ns, name) < 1:
            parser.error(f"--{name.replace('_', '-')} {getattr(ns, name)}: expected a positive integer")
    try:
        backend = PokerSquaresVectorEnv(1, backend=ns.backend).backend  # what --backend resolves to here
    except (ImportError, ValueError) as exc:
        parser.error(f"--backend {ns.backend}: {exc}")
    measure(ns.num_envs, 1, backend)  # warm-up: kernels loaded, buffers touched
    time_frozenlake = _speed_module().time_frozenlake
    rounds, reference = [], []
    for _ in range(ns.repeats):
        reference.append(time_frozenlake(20_000))
        rounds.append(measure(ns.num_envs, ns.games, backend))
    frozen = statistics.median(reference)
    whole = statistics.median(r[WHOLE] for r in rounds)
    medians = {name: statistics.median(r[name] for r in rounds) for name in rounds[0] if name not in (REST, WHOLE)}
    medians[REST] = whole - sum(medians.values())  # the rows add up to the whole step
    medians[WHOLE] = whole
    print(f"\nN={ns.num_envs}, backend {backend}, {ns.games} games a sub-env a round, medians of {ns.repeats} rounds; "
          f"FrozenLake-v1 {frozen:,.0f} steps/s in the same rounds, so the whole step runs at "
          f"{1 / whole / frozen:.1f}x FrozenLake\n")
    print("| piece | ns per sub-env step | share of the whole step |")
    print("|---|---:|---:|")
    for name, value in medians.items():
        print(f"| {name} | {value * 1e9:.1f} | {value / whole:.0%} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
