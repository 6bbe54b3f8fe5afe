"""Issue 5 analysis: do board-level features say anything about the final score that the line values do not?

The learned tables value each line on its own.  This plays ``--games`` games
with the one-ply greedy policy on the default outs tables (a random legal cell
with probability ``--epsilon``), and after every move takes the *residual*:
final score minus the summed table values of the board.  It then fits, on
4/5 of the positions, least squares of the residual on (a) the number of
cards placed alone, and (b) that plus board-level features -- per kind (rows,
columns): flush claims beyond the unseen cards of their suits, lines
collecting a suit, suits collected; empty cells in dead lines (no flush, no
straight, no pair; in both or one of its lines), dead lines; open lines with a
pair, per kind -- each interacted with five game stages.  It prints the
residual's standard deviation on the held-out fifth for both fits.  If (b)
is not clearly below (a), those interactions between lines carry no
information the line values lack.

Usage::

    python benchmarks/residuals.py --games 20000 --seed 0
"""

from __future__ import annotations

import argparse
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))

import numpy as np  # noqa: E402

from agents.batch import _SUIT_OF, COL, IS_COL, ROW, Batch, phase_of  # noqa: E402
from agents.expectimax import DEFAULT_GAMES, DEFAULT_PHASES  # noqa: E402
from agents.tables import load_or_train  # noqa: E402
from pokersquares_env.scoring import WINDOW  # noqa: E402


def board_features(b: Batch) -> np.ndarray:
    """``(N, 11)`` board-level features of every board (see the module docstring)."""
    t, suit, us = b.t, _SUIT_OF[b.suits], 13 - b.seen_suit
    f = []
    for kind in (slice(0, 5), slice(5, 10)):
        tk, sk = t[:, kind], suit[:, kind]
        live = (sk >= 0) & (tk >= 2) & (tk < 5)
        claims = np.stack([np.where(live & (sk == s), 5 - tk, 0).sum(1) for s in range(4)], 1)
        f += [np.maximum(0, claims - us).sum(1), live.sum(1), (claims > 0).sum(1)]
    dead = (suit < 0) & ((WINDOW[b.ranks] == 0) | (b.pairs > 0)) & (b.pairs == 0) & (t >= 2) & (t < 5)
    rowd, cold, empty = dead[:, ROW], dead[:, COL], ~b.occ
    f += [(empty & rowd & cold).sum(1), (empty & (rowd ^ cold)).sum(1), dead.sum(1)]
    pairs_open = (b.pairs > 0) & (t < 5)
    f += [pairs_open[:, :5].sum(1), pairs_open[:, 5:].sum(1)]
    return np.stack(f, 1).astype(float)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=20000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--epsilon", type=float, default=0.1)
    p.add_argument("--scoring", default="american")
    p.add_argument("--table-games", type=int, default=DEFAULT_GAMES,
                   help="self-play games of the tables (the agents' default; cached after the first run)")
    a = p.parse_args(argv)
    if a.games < 10 or not 0 <= a.epsilon <= 1:
        p.error(f"--games {a.games}, --epsilon {a.epsilon}: expected at least 10 games and 0 <= epsilon <= 1")
    vt = load_or_train(a.scoring, None, games=a.table_games, phases=DEFAULT_PHASES, features="outs")
    values, phases = vt.values, vt.values.shape[2]
    rng = np.random.default_rng(a.seed)
    n = a.games
    decks = np.argsort(rng.random((n, 52)), axis=1)
    b = Batch(n)
    feats, board_values, placed = [], [], []
    for j in range(25):
        ph = phase_of(b.placed + 1, phases)
        cells = b.cell_gains(decks[:, j], values, ph).argmax(1)
        explore = rng.random(n) < a.epsilon
        noise = rng.random((n, 25))
        noise[~b.legal()] = -1
        cells[explore] = noise[explore].argmax(1)
        b.place(cells, decks[:, j])
        board_values.append(values[b.keys(), IS_COL, ph, b.outs()].sum(1))
        feats.append(board_features(b))
        placed.append(np.full(n, b.placed))
    final = vt.system.line_points_table[b.keys()].sum(1)
    x, p_ = np.concatenate(feats), np.concatenate(placed)
    y = np.tile(final, 25) - np.concatenate(board_values)
    stage = np.eye(26)[p_]
    bucket = np.eye(5)[np.minimum(p_ // 5, 4)]
    rich = np.concatenate([stage] + [x[:, i:i + 1] * bucket for i in range(x.shape[1])], axis=1)
    train = np.arange(len(y)) % 5 != 0
    print(f"{n} games, {a.scoring}, epsilon {a.epsilon}: residual (final - table sum) mean {y.mean():.2f}, "
          f"sd {y.std():.2f} over {len(y)} positions")
    for name, design in (("cards placed only", stage), ("cards placed + board features", rich)):
        w, *_ = np.linalg.lstsq(design[train], y[train], rcond=None)
        print(f"  {name}: held-out residual sd {(y[~train] - design[~train] @ w).std():.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
