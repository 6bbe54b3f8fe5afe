"""Issue 5's 127 target: line tables refined by per-line TD(0), off-policy towards the greedy player's values or on-policy.

The default tables (``agents.tables.train_tables``) are Monte Carlo averages: every line abstraction a
self-play game visits is credited with the points its line ends with, under a one-ply player that explores
(a random legal cell with probability 0.5 falling to 0.02).  Those are the values of the exploring player,
and exploring less loses coverage (values learned from near-greedy play lose 13 points; docs/agents.md).

This script starts from the default tables and refines them by temporal differences towards the values of
the *greedy* one-ply player while still exploring (Q-learning on after-states, per line): after every move
``m`` of a self-play game, each line's abstraction is moved towards the value the same line has after the
greedy move for the next card (the cell the greedy player would choose, whether or not the game explored
there), and the last after-state's lines are complete, worth their points.  Each batch of games plays on the
current values; the values are running averages of the batch targets with a memory of ``--memory`` visits.
``--target actual`` moves each line towards its value after the move played instead (on-policy TD(0)).

    python benchmarks/td_tables.py --games 400000 --epsilon 0.2 --out runs/td_greedy.npz
    pokersquares evaluate --agent expectimax --agent expectimax:tables=runs/td_greedy.npz --games 2000 --seed 7

Neither helps (docs/agents.md, "Things tried"): the greedy target loses 6.6 points at one ply and 8.5 at two,
the on-policy one gains 1.1 at one ply and loses 1.3 at two.

Needs numba (the compiled kernels).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))

import numpy as np  # noqa: E402
from numba import njit, prange  # noqa: E402

from agents._fast import (  # noqa: E402
    _SUIT_OF,
    _copy_place,
    _key,
    _legal,
    _nth_legal,
    _outs,
    _phase,
    _place,
    _ply_values,
    _prep,
    tables_flat,
)
from agents.expectimax import DEFAULT_FEATURES, DEFAULT_GAMES, DEFAULT_PHASES  # noqa: E402
from agents.tables import ValueTables, load_or_train  # noqa: E402
from pokersquares_env._files import output_file_problem  # noqa: E402
from pokersquares_env.core import Rules  # noqa: E402
from pokersquares_env.scoring import point_system  # noqa: E402


@njit(nogil=True)
def _record(line, seen, vf, phases, nout, ph, ur, us, live, base, out):  # pragma: no cover - compiled
    """``out[l]``: the flat index (the table's own order) of line ``l``'s abstraction on this board at phase ``ph``."""
    _prep(line, seen, vf, phases, nout, ph, ur, us, live, base)
    for li in range(10):
        t = line[0, li]
        s = _SUIT_OF[line[4, li]]
        key = _key(t, line[1, li], line[2, li], line[3, li], line[4, li])
        row = ((key * 2 + (1 if li >= 5 else 0)) * phases + ph) * nout
        o = _outs(t, s, us[s] if s >= 0 else 0, live[0, li], live[1, li]) if nout > 1 else 0
        out[li] = row + o


@njit(nogil=True, parallel=True)  # no cache: the tests load this script under another module name
def _play_td(decks, explore, noise, vf, phases, nout, adjacent, first_cell, rec, grec):  # pragma: no cover
    """Play game ``g`` one-ply on ``vf`` (a random legal cell where ``explore``).  ``rec[g, m]``: the lines'
    indices after move ``m``; ``grec[g, m]``: after the greedy move ``m`` from the board before it."""
    n = decks.shape[0]
    for g in prange(n):
        line = np.zeros((5, 10), dtype=np.int64)
        cnt = np.zeros((10, 13), dtype=np.int64)
        seen = np.zeros(17, dtype=np.int64)
        cells = np.zeros(3, dtype=np.int64)
        ln = np.zeros((5, 10), dtype=np.int64)
        cn = np.zeros((10, 13), dtype=np.int64)
        se = np.zeros(17, dtype=np.int64)
        ce = np.zeros(3, dtype=np.int64)
        vals = np.empty(25)
        legal = np.zeros(25, dtype=np.int64)
        ur = np.zeros(13, dtype=np.int64)
        us = np.zeros(4, dtype=np.int64)
        live = np.empty((3, 10), dtype=np.int64)
        base = np.empty(10, dtype=np.int64)
        idx = np.empty(10, dtype=np.int64)
        empty = np.empty(0, dtype=np.int64)
        for m in range(25):
            card = decks[g, m]
            nleg = _legal(cells, adjacent, first_cell, legal)
            _ply_values(line, cnt, seen, cells, card, empty, 1, vf, phases, nout, adjacent, first_cell, vals)
            greedy = -1
            best = -np.inf
            for c in range(25):
                if legal[c] and vals[c] > best:
                    best = vals[c]
                    greedy = c
            cell = _nth_legal(legal, int(noise[g, m] * nleg)) if explore[g, m] else greedy
            ph = _phase(m + 1, phases)
            _copy_place(line, cnt, seen, cells, ln, cn, se, ce, greedy, card)
            _record(ln, se, vf, phases, nout, ph, ur, us, live, base, idx)
            grec[g, m, :] = idx
            _place(line, cnt, seen, cells, cell, card)
            _record(line, seen, vf, phases, nout, ph, ur, us, live, base, idx)
            rec[g, m, :] = idx


def refine(tables: ValueTables, *, games: int, batch: int, epsilon: float, memory: float, seed: int,
           target: str = "greedy", progress: bool = True) -> ValueTables:
    """``tables`` refined by ``games`` games of per-line TD(0) (``target``: "greedy", off-policy, or "actual",
    on-policy; see the module docstring): ``games`` and
    ``batch`` integers >= 1, ``epsilon`` a probability, ``memory`` a finite number > 0 (a ``ValueError`` names the
    first that is not)."""
    for name, value in (("games", games), ("batch", batch)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name}={value!r}: expected an integer >= 1")
    if not 0 <= epsilon <= 1:  # NaN too
        raise ValueError(f"epsilon={epsilon!r}: expected a probability from 0 to 1")
    if not (np.isfinite(memory) and memory > 0):
        raise ValueError(f"memory={memory!r}: expected a finite number > 0 (visits)")
    if target not in ("greedy", "actual"):
        raise ValueError(f"target={target!r}: expected 'greedy' or 'actual'")
    values = tables.values.copy()
    shape = values.shape
    flat = values.reshape(-1)
    weight = np.minimum(tables.counts.reshape(-1).astype(float), memory)  # the MC averages count as old visits
    fixed = np.zeros(flat.size, dtype=bool)
    fixed.reshape(shape)[np.arange(shape[0]) // 264 == 5] = True  # complete lines: their points
    rules = tables.rules
    rng = np.random.default_rng([seed, 4242])
    done, t0 = 0, time.time()
    while done < games:
        n = min(batch, games - done)
        decks = np.argsort(rng.random((n, rules.deck_size)), axis=1).astype(np.int64)
        vf, phases, nout = tables_flat(values)
        rec = np.zeros((n, 25, 10), dtype=np.int64)
        grec = np.zeros((n, 25, 10), dtype=np.int64)
        _play_td(decks, rng.random((n, 25)) < epsilon, rng.random((n, 25)), vf, phases, nout,
                 rules.placement == "adjacent", -1 if rules.first_cell is None else int(rules.first_cell), rec, grec)
        idx = rec[:, :24, :].ravel()  # after move 24 every line is complete
        nxt = grec if target == "greedy" else rec  # off-policy (the greedy move's lines) or on-policy TD(0)
        s = np.bincount(idx, weights=flat[nxt[:, 1:, :].ravel()], minlength=flat.size)
        c = np.bincount(idx, minlength=flat.size).astype(float)
        seen = (c > 0) & ~fixed
        flat[seen] = (flat[seen] * weight[seen] + s[seen]) / (weight[seen] + c[seen])
        weight[seen] = np.minimum(weight[seen] + c[seen], memory)
        done += n
        if progress:
            print(f"\r{done:,}/{games:,} games, {time.time() - t0:.0f} s", end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    return ValueTables(values, tables.counts, tables.system, rules, tables.games + games, tables.seed)


def probability(text: str) -> float:
    """An ``argparse`` type: a number from 0 to 1; a bad value is a usage error naming it."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a probability from 0 to 1") from None
    if not 0 <= value <= 1:  # NaN too
        raise argparse.ArgumentTypeError(f"{text}: expected a probability from 0 to 1")
    return value


def main(argv=None) -> int:
    from pokersquares_env.cli import int_at_least, positive_float, seed_arg

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--scoring", default="american", help="the point system of the default tables")
    p.add_argument("--games", type=int_at_least(1), default=400_000,
                   help="self-play games of refinement (at least 1: with none the tables would be written unchanged)")
    p.add_argument("--batch", type=int_at_least(1), default=4096, help="games played on the same values")
    p.add_argument("--epsilon", type=probability, default=0.2, help="probability of a random legal cell (0 to 1)")
    p.add_argument("--memory", type=positive_float, default=2000.0,
                   help="visits a value remembers (running-average cap; a number > 0)")
    p.add_argument("--seed", type=seed_arg, default=0, help="seed of the deals and exploration")
    p.add_argument("--target", choices=("greedy", "actual"), default="greedy",
                   help="the next after-state a line is moved towards: the greedy move's (off-policy) or the move played")
    p.add_argument("--tables", help="the tables to refine (default: the agents' default tables for --scoring)")
    p.add_argument("--out", required=True, help="the .npz file of the refined tables")
    args = p.parse_args(argv)
    if os.path.isdir(args.out):
        p.error(f"--out {args.out!r} is a folder: expected the path of the .npz file to write")
    problem = output_file_problem(args.out, "--out")  # its folder made now, before the tables load and the games
    if problem:
        p.error(problem)
    if args.tables:
        try:
            base = ValueTables.load(args.tables)
            tables_flat(base.values)  # the layout the compiled self-play takes (features=straights is not)
        except (OSError, ValueError) as exc:
            p.error(f"--tables {args.tables!r}: {exc}")
    else:
        try:
            system = point_system(args.scoring)
        except ValueError as exc:
            p.error(f"--scoring {args.scoring!r}: {exc}")
        base = load_or_train(system, Rules(), games=DEFAULT_GAMES, phases=DEFAULT_PHASES, features=DEFAULT_FEATURES)
    refined = refine(base, games=args.games, batch=args.batch, epsilon=args.epsilon, memory=args.memory,
                     seed=args.seed, target=args.target)
    bad = int(np.size(refined.values) - np.isfinite(refined.values).sum())
    if bad:  # tables that would not load back (or would mislead): nothing written
        print(f"error: the refined tables hold {bad} values that are not finite (NaN or infinite); nothing written "
              f"to {args.out}", file=sys.stderr)
        return 1
    refined.save(args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
