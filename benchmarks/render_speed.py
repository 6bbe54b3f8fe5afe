"""Time to draw one frame: the first (cold caches) and the median of later ones.

Run::

    python benchmarks/render_speed.py              # 200 warm frames, jokers=1, 12 cards placed
    python benchmarks/render_speed.py --frames 50

It draws a Poker Squares frame (``render_mode="rgb_array"``) of one game state:
once with the caches of card pictures, fonts, text and the empty table cleared,
then ``--frames`` more times, and prints both figures in milliseconds with the
median of the warm ones.  ``gymnasium.wrappers.RecordVideo`` draws one frame a
step, so the warm figure is what recording a video costs per step.  Needs the
``render`` extra (Pillow).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from pokersquares_env import render
from pokersquares_env.core import PokerSquaresGame, Rules


def clear_caches() -> None:
    """Empty every cache the frames are drawn from, so the next frame is drawn cold."""
    for cache in render._CACHES:
        cache.cache_clear()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--frames", type=int, default=200, help="warm frames to time (default 200)")
    args = p.parse_args(argv)
    if args.frames < 1:
        p.error(f"--frames {args.frames}: expected at least 1")
    game = PokerSquaresGame(Rules(jokers=1))
    state = game.init(game.deal(np.random.default_rng(2)))
    for cell in range(12):
        game.apply(state, cell)
    clear_caches()
    start = time.perf_counter()
    render.draw_poker_squares(game, state)
    cold = time.perf_counter() - start
    warm = []
    for _ in range(args.frames):
        start = time.perf_counter()
        render.draw_poker_squares(game, state)
        warm.append(time.perf_counter() - start)
    print(f"first frame (cold caches): {cold * 1000:.1f} ms")
    print(f"later frames: median {statistics.median(warm) * 1000:.2f} ms, "
          f"min {min(warm) * 1000:.2f} ms, max {max(warm) * 1000:.2f} ms over {args.frames} frames")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
