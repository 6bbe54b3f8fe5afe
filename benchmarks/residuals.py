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
information the line values lack.  With ``--mlp EPOCHS`` (torch) it also
trains a small network (two hidden layers of 256) on every line's value, key
fields and outs buckets, the unseen cards by rank and suit and the cards
placed, and prints its held-out residual sd after each epoch.

Usage::

    python benchmarks/residuals.py --games 20000 --seed 0
    python benchmarks/residuals.py --games 40000 --seed 0 --mlp 8      # the network too (torch)
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
from agents.lines import KEY_FLUSH, KEY_K, KEY_PAIRS, KEY_T, KEY_WINDOW  # noqa: E402
from agents.tables import load_or_train  # noqa: E402
from pokersquares_env.scoring import WINDOW, point_system  # noqa: E402


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


def line_inputs(b: Batch, line_values: np.ndarray) -> np.ndarray:
    """``(N, 104)`` network inputs: per line its value, key fields and outs buckets; unseen ranks and suits; placed."""
    keys, outs, n = b.keys(), b.outs(), b.n
    parts = [line_values / 20, KEY_T[keys] / 5, KEY_K[keys], KEY_PAIRS[keys] / 5, KEY_WINDOW[keys] / 3, KEY_FLUSH[keys],
             outs // 6 / 4, outs % 6 / 5, (4 - b.seen_rank) / 4, (13 - b.seen_suit) / 13, np.full((n, 1), b.placed / 25)]
    return np.concatenate([np.asarray(x, dtype=float).reshape(n, -1) for x in parts], axis=1).astype(np.float32)


def fit_mlp(x: np.ndarray, y: np.ndarray, train: np.ndarray, epochs: int, seed: int) -> list[float]:
    """Held-out residual sd of a two-layer network after each epoch (Adam, batches of 1024)."""
    import torch

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    xt, yt = torch.tensor(x), torch.tensor(y.astype(np.float32))
    net = torch.nn.Sequential(torch.nn.Linear(x.shape[1], 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                              torch.nn.ReLU(), torch.nn.Linear(256, 1))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    fit_idx, held = np.flatnonzero(train), torch.tensor(np.flatnonzero(~train))
    out = []
    for _ in range(epochs):
        order = rng.permutation(fit_idx)
        for i in range(0, len(order), 1024):
            batch = torch.tensor(order[i:i + 1024])
            loss = ((net(xt[batch]).squeeze(1) - yt[batch]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            out.append(float((yt[held] - net(xt[held]).squeeze(1)).std()))
    return out


def main(argv: list[str] | None = None) -> int:
    from pokersquares_env.cli import int_at_least, seed_arg

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=20000)
    p.add_argument("--seed", type=seed_arg, default=0)
    p.add_argument("--epsilon", type=float, default=0.1)
    p.add_argument("--scoring", default="american")
    p.add_argument("--mlp", type=int_at_least(0), default=0, metavar="EPOCHS",
                   help="also fit a small network for this many epochs (torch; 0: none)")
    p.add_argument("--table-games", type=int_at_least(1), default=DEFAULT_GAMES,
                   help="self-play games of the tables (the agents' default; cached after the first run)")
    a = p.parse_args(argv)
    if a.games < 10 or not 0 <= a.epsilon <= 1:
        p.error(f"--games {a.games}, --epsilon {a.epsilon}: expected at least 10 games and 0 <= epsilon <= 1")
    try:
        point_system(a.scoring)
    except (OSError, ValueError) as exc:
        p.error(f"--scoring {a.scoring!r}: {exc}")
    try:
        vt = load_or_train(a.scoring, None, games=a.table_games, phases=DEFAULT_PHASES, features="outs")
    except (OSError, ValueError) as exc:
        p.error(f"the tables of --table-games {a.table_games}: {exc}")
    values, phases = vt.values, vt.values.shape[2]
    rng = np.random.default_rng(a.seed)
    n = a.games
    decks = np.argsort(rng.random((n, 52)), axis=1)
    b = Batch(n)
    feats, board_values, placed, inputs = [], [], [], []
    for j in range(25):
        ph = phase_of(b.placed + 1, phases)
        cells = b.cell_gains(decks[:, j], values, ph).argmax(1)
        explore = rng.random(n) < a.epsilon
        noise = rng.random((n, 25))
        noise[~b.legal()] = -1
        cells[explore] = noise[explore].argmax(1)
        b.place(cells, decks[:, j])
        line_values = values[b.keys(), IS_COL, ph, b.outs()]
        board_values.append(line_values.sum(1))
        feats.append(board_features(b))
        if a.mlp:
            inputs.append(line_inputs(b, line_values))
        placed.append(np.full(n, b.placed))
    final = vt.system.line_points_table[b.keys()].sum(1)
    x, p_ = np.concatenate(feats), np.concatenate(placed)
    y = np.tile(final, 25) - np.concatenate(board_values)
    stage = np.eye(26)[p_]
    bucket = np.eye(5)[np.minimum(p_ // 5, 4)]
    rich = np.concatenate([stage] + [x[:, i:i + 1] * bucket for i in range(x.shape[1])], axis=1)
    train = np.tile(np.arange(n), 25) % 5 != 0  # held out: every fifth game, all its positions
    print(f"{n} games, {a.scoring}, epsilon {a.epsilon}: residual (final - table sum) mean {y.mean():.2f}, "
          f"sd {y.std():.2f} over {len(y)} positions")
    for name, design in (("cards placed only", stage), ("cards placed + board features", rich)):
        w, *_ = np.linalg.lstsq(design[train], y[train], rcond=None)
        print(f"  {name}: held-out residual sd {(y[~train] - design[~train] @ w).std():.3f}")
    if a.mlp:
        for epoch, sd in enumerate(fit_mlp(np.concatenate(inputs), y, train, a.mlp, a.seed), 1):
            print(f"  network, epoch {epoch}: held-out residual sd {sd:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
