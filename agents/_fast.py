"""Compiled (numba) twins of the table-driven agents' hot loops: one- and two-ply expectimax, rollouts, self-play.

Optional: this module imports numba (the ``fast`` extra).  Each kernel plays
one board at a time in a compiled loop and reads the same value tables and
line tables as the numpy code in :mod:`agents.batch` and
:mod:`agents.expectimax`, with the same abstraction (``LINE_MASK`` key,
row/column, phase, and the ``outs`` buckets of :func:`agents.batch.outs_index`);
``tests/test_fast.py`` checks the two against each other.  Only tables of
shape ``(NUM_KEYS, 2, phases)`` or ``(NUM_KEYS, 2, phases, NUM_OUTS)`` are
supported (``features="straights"`` stays on the numpy path).

A board is a tuple of small arrays (see :func:`board_from_state`):
``line`` ``(5, 10)`` int64 rows ``t, k, pairs, ranks, suits`` per line,
``cnt`` ``(10, 13)`` rank counts per line, ``seen`` ``(17,)`` standard cards
on the board by rank (0-12) and by suit (13-16), and ``cells`` ``(3,)``:
occupied bit set, frontier bit set, cards placed.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from agents.batch import _FLUSH_SPARE, _RANK_OUTS, FLUSH_BUCKETS, NUM_OUTS, NUM_OUTS_CLAIMS
from agents.lines import NUM_KEYS
from pokersquares_env.cards import NUM_STANDARD
from pokersquares_env.core import ADJACENT, GameState
from pokersquares_env.scoring import FLUSHABLE, WINDOW

__all__ = ["board_from_state", "ply_values", "rollout_means", "self_play", "tables_flat"]

_SUIT_OF = np.full(16, -1, dtype=np.int64)
_SUIT_OF[[1, 2, 4, 8]] = [0, 1, 2, 3]
_ADJ = np.array(ADJACENT, dtype=np.int64)
# Read by the kernels as compiled-in constants (numba freezes global arrays): passing arrays to small compiled
# helpers costs reference counting on every call, several times the helpers' own work.
_WIN = WINDOW.astype(np.int64)
_FLU = FLUSHABLE.astype(np.int64)
_FS = _FLUSH_SPARE.astype(np.int64)
_RO = _RANK_OUTS.astype(np.int64)
_NFS = int(_FS.shape[0])
_NRO = int(_RO.shape[0])


def tables_flat(values: np.ndarray) -> tuple[np.ndarray, int, int]:
    """A value table as the kernels read it: flat float64 in ``(phase, key, row/column, outs)`` order, its number of
    phases and of outs buckets."""
    values = np.asarray(values, dtype=np.float64)
    if values.shape[:2] != (NUM_KEYS, 2):
        raise ValueError(f"value tables of shape {values.shape}: expected ({NUM_KEYS}, 2, phases[, outs])")
    # phase-major, so that the entries one move reads lie close together (a phase is 0.7 MiB, the table 20)
    if values.ndim == 3:
        return np.ascontiguousarray(values.transpose(2, 0, 1)).ravel(), values.shape[2], 1
    if values.ndim == 4 and values.shape[3] in (NUM_OUTS, NUM_OUTS_CLAIMS):
        return np.ascontiguousarray(values.transpose(2, 0, 1, 3)).ravel(), values.shape[2], values.shape[3]
    raise ValueError(f"value tables of shape {values.shape}: the compiled kernels take (keys, 2, phases) or "
                     "(keys, 2, phases, 30 or 54) (features none, outs or claims)")


def board_from_state(state: GameState) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The kernels' board arrays ``(line, cnt, seen, cells)`` for a core game state (its deck is not read)."""
    line = np.array([state.line_t, state.line_k, state.line_pairs, state.line_ranks, state.line_suits],
                    dtype=np.int64)
    cnt = np.asarray(state.rank_counts, dtype=np.int64).reshape(10, 13).copy()
    seen = np.zeros(17, dtype=np.int64)
    for code in state.board:
        if 0 <= code < NUM_STANDARD:
            seen[code % 13] += 1
            seen[13 + code // 13] += 1
    cells = np.array([state.occupied, state.frontier, len(state.placements)], dtype=np.int64)
    return line, cnt, seen, cells


@njit(cache=True, nogil=True)
def _phase(placed, phases):  # pragma: no cover - compiled
    p = placed * phases // 26
    return phases - 1 if p > phases - 1 else p


@njit(cache=True, nogil=True)
def _key(t, k, pairs, ranks, suits):  # pragma: no cover - compiled
    """The ``LINE_MASK``/points-table index of a line from its ``t, k, pairs, ranks, suits``."""
    return (((t * 3 + k) * 11 + pairs) * 4 + _WIN[ranks]) * 2 + _FLU[suits]


@njit(cache=True, nogil=True)
def _legal(cells, adjacent, first_cell, out):  # pragma: no cover - compiled
    """Fill ``out[25]`` with 1 on legal cells; return how many."""
    occ, front, placed = cells[0], cells[1], cells[2]
    n = 0
    for c in range(25):
        ok = ((occ >> c) & 1) == 0
        if placed == 0:
            if first_cell >= 0:
                ok = c == first_cell
        elif adjacent:
            ok = ok and ((front >> c) & 1) == 1
        out[c] = 1 if ok else 0
        if ok:
            n += 1
    return n


@njit(cache=True, nogil=True)
def _prep(line, seen, vf, phases, nout, ph, ur, us, live, base):  # pragma: no cover
    """Per-line data that does not depend on the next card: unseen counts ``ur``/``us``, ``live[0]`` the unseen
    cards sharing a rank with the line, ``live[1]`` its flush claims and ``live[2, :8]`` the claims per kind and
    suit (claims tables only), ``base`` its table row."""
    for r in range(13):
        ur[r] = 4 - seen[r]
    for s in range(4):
        us[s] = 13 - seen[13 + s]
    for li in range(10):
        ranks = line[3, li]
        lv = 0
        for r in range(13):
            if (ranks >> r) & 1:
                lv += ur[r]
        live[0, li] = lv
        key = _key(line[0, li], line[1, li], line[2, li], ranks, line[4, li])
        base[li] = (ph * NUM_KEYS + key) * 2 + (1 if li >= 5 else 0)
    live[1, :] = 0
    live[2, :] = 0
    if nout == NUM_OUTS_CLAIMS:
        # flush claims: live[2, kind * 4 + suit] the cards of ``suit`` that lines of the kind with 2-4 cards, all of
        # that suit, still need; live[1, li] the claims of the other lines of li's kind on li's suit
        for li in range(10):
            t = line[0, li]
            s = _SUIT_OF[line[4, li]]
            if s >= 0 and 2 <= t < 5:
                live[2, (li // 5) * 4 + s] += 5 - t
        for li in range(10):
            t = line[0, li]
            s = _SUIT_OF[line[4, li]]
            if s >= 0 and 0 < t < 5:
                live[1, li] = live[2, (li // 5) * 4 + s] - ((5 - t) if t >= 2 else 0)


@njit(cache=True, nogil=True)
def _outs(t, s, spare_us, lv, claims):  # pragma: no cover - compiled
    """Outs bucket of an open line with one-suit index ``s`` (-1: none), ``spare_us`` unseen of that suit, ``lv``
    live rank outs and ``claims`` (cards of its suit that other lines of its kind still need; claims tables only)."""
    if t <= 0 or t >= 5:
        return 0
    fb = 0
    if s >= 0 and claims > 0:
        sp = spare_us - (5 - t) - claims
        fb = FLUSH_BUCKETS + (0 if sp < 0 else (1 if sp <= 1 else (2 if sp <= 4 else 3)))
    elif s >= 0:
        sp = spare_us - (5 - t) + 13
        if sp < 0:
            sp = 0
        if sp > _NFS - 1:
            sp = _NFS - 1
        fb = _FS[sp]
    if lv > _NRO - 1:
        lv = _NRO - 1
    return fb * 6 + _RO[lv]


@njit(cache=True, nogil=True)
def _deltas(line, cnt, card, vf, phases, nout, ph, ur, us, live,
            base, d):  # pragma: no cover - compiled
    """``d[10]``: how much each line's value rises if ``card`` joins it (``card`` counted as seen either way);
    ``ur``, ``us``, ``live``, ``base`` from :func:`_prep` on the same board."""
    real = card < 52
    ry = card % 13 if real else 0
    sy = card // 13 if real else -1
    for li in range(10):
        t = line[0, li]
        k = line[1, li]
        pairs = line[2, li]
        ranks = line[3, li]
        suits = line[4, li]
        is_col = 1 if li >= 5 else 0
        s = _SUIT_OF[suits]
        inr = (ranks >> ry) & 1 if real else 0
        lv = live[0, li] - inr
        cl = live[1, li]
        if nout == 1:
            before = vf[base[li]]
        else:
            usl = us[s] - (1 if s == sy else 0) if s >= 0 else 0
            before = vf[base[li] * nout + _outs(t, s, usl, lv, cl)]
        t2 = t + 1 if t < 5 else 5
        if real:
            p2 = pairs + cnt[li, ry]
            if p2 > 10:
                p2 = 10
            ranks2 = ranks | (1 << ry)
            suits2 = suits | (1 << sy)
            k2 = k
            if inr == 0:
                lv += ur[ry] - 1
        else:
            p2 = pairs
            ranks2 = ranks
            suits2 = suits
            k2 = k + 1 if k < 2 else 2
        key2 = _key(t2, k2, p2, ranks2, suits2)
        b2 = (ph * NUM_KEYS + key2) * 2 + is_col
        if nout == 1:
            after = vf[b2]
        else:
            s2 = _SUIT_OF[suits2]
            us2 = us[s2] - (1 if s2 == sy else 0) if s2 >= 0 else 0
            if nout == NUM_OUTS_CLAIMS and s2 >= 0:  # the line's suit may be new (it had no card): its claims too
                cl = live[2, is_col * 4 + s2] - ((5 - t) if (s == s2 and 2 <= t < 5) else 0)
            after = vf[b2 * nout + _outs(t2, s2, us2, lv, cl)]
        d[li] = after - before
    if nout == NUM_OUTS_CLAIMS:
        _claim_deltas(line, card, vf, nout, us, live, base, d)


@njit(cache=True, nogil=True)
def _claim_deltas(line, card, vf, nout, us, live, base, d):  # pragma: no cover - compiled
    """Claims tables: add to ``d[L]`` how the other lines of ``L``'s kind change value when ``card`` joins ``L``
    (their flush claims change with ``L``'s: it needs one card fewer of its suit, or stops needing any)."""
    real = card < 52
    ry = card % 13 if real else 0
    sy = card // 13 if real else -1
    for L in range(10):
        tl = line[0, L]
        sl = _SUIT_OF[line[4, L]]
        cb_s = sl if (sl >= 0 and 2 <= tl < 5) else -1
        t2 = tl + 1
        s2 = _SUIT_OF[line[4, L] | (1 << sy)] if real else sl
        ca_s = s2 if (s2 >= 0 and 2 <= t2 < 5) else -1
        if cb_s < 0 and ca_s < 0:
            continue
        x = 0.0
        lo = 0 if L < 5 else 5
        for l2 in range(lo, lo + 5):
            t = line[0, l2]
            if l2 == L or t <= 0 or t >= 5:
                continue
            q = _SUIT_OF[line[4, l2]]
            if q < 0:
                continue
            delta = ((5 - t2) if q == ca_s else 0) - ((5 - tl) if q == cb_s else 0)
            if delta == 0:
                continue
            usl = us[q] - (1 if q == sy else 0)
            lv = live[0, l2] - (((line[3, l2] >> ry) & 1) if real else 0)
            cl = live[1, l2]
            row = base[l2] * nout
            x += vf[row + _outs(t, q, usl, lv, cl + delta)] - vf[row + _outs(t, q, usl, lv, cl)]
        d[L] += x


@njit(cache=True, nogil=True)
def _line_deltas(line, cnt, seen, card, vf, phases, nout, ph, ur, us, d):  # pragma: no cover - compiled
    """``d[10]``: :func:`_deltas` on a board (prepared here)."""
    live = np.empty((3, 10), dtype=np.int64)
    base = np.empty(10, dtype=np.int64)
    _prep(line, seen, vf, phases, nout, ph, ur, us, live, base)
    _deltas(line, cnt, card, vf, phases, nout, ph, ur, us, live,
            base, d)


@njit(cache=True, nogil=True)
def _place(line, cnt, seen, cells, cell, card):  # pragma: no cover - compiled
    real = card < 52
    rank = card % 13
    suit = card // 13
    for li in (cell // 5, 5 + cell % 5):
        line[0, li] += 1
        if real:
            line[2, li] += cnt[li, rank]
            cnt[li, rank] += 1
            line[3, li] |= 1 << rank
            line[4, li] |= 1 << suit
        else:
            line[1, li] += 1
    if real:
        seen[rank] += 1
        seen[13 + suit] += 1
    cells[0] |= 1 << cell
    cells[1] |= _ADJ[cell]
    cells[2] += 1


@njit(cache=True, nogil=True)
def _ply_values(line, cnt, seen, cells, card, unseen, ply, vf, phases, nout, adjacent, first_cell, out):  # pragma: no cover - compiled
    """``out[25]``: ``ply``-ply expectimax value of each cell for ``card`` (NaN where illegal)."""
    placed = cells[2]
    legal = np.zeros(25, dtype=np.int64)
    _legal(cells, adjacent, first_cell, legal)
    ur = np.zeros(13, dtype=np.int64)
    us = np.zeros(4, dtype=np.int64)
    d = np.zeros(10)
    for c in range(25):
        out[c] = np.nan
    if ply <= 1 or placed >= 24 or unseen.shape[0] == 0:
        _line_deltas(line, cnt, seen, card, vf, phases, nout, _phase(placed + 1, phases), ur, us, d)
        for c in range(25):
            if legal[c]:
                out[c] = d[c // 5] + d[5 + c % 5]
        return
    ph = _phase(placed + 2, phases)
    _line_deltas(line, cnt, seen, card, vf, phases, nout, ph, ur, us, d)
    line1 = np.empty_like(line)
    cnt1 = np.empty_like(cnt)
    seen1 = np.empty_like(seen)
    cells1 = np.empty_like(cells)
    legal1 = np.zeros(25, dtype=np.int64)
    d1 = np.zeros(10)
    live = np.empty((3, 10), dtype=np.int64)
    base = np.empty(10, dtype=np.int64)
    m = unseen.shape[0]
    for c in range(25):
        if not legal[c]:
            continue
        first = d[c // 5] + d[5 + c % 5]
        line1[:] = line
        cnt1[:] = cnt
        seen1[:] = seen
        cells1[:] = cells
        _place(line1, cnt1, seen1, cells1, c, card)
        _legal(cells1, adjacent, first_cell, legal1)
        _prep(line1, seen1, vf, phases, nout, ph, ur, us, live, base)
        acc = 0.0
        for j in range(m):
            _deltas(line1, cnt1, unseen[j], vf, phases, nout, ph, ur, us, live, base, d1)
            best = -np.inf
            for c2 in range(25):
                if legal1[c2]:
                    g = d1[c2 // 5] + d1[5 + c2 % 5]
                    if g > best:
                        best = g
            acc += best
        out[c] = first + acc / m


@njit(cache=True, nogil=True)
def _ply3_values(line, cnt, seen, cells, card, unseen, cands, vf, phases, nout, adjacent, first_cell,
                 out):  # pragma: no cover - compiled
    """``out[c]`` for each cell ``c`` in ``cands``: three-ply expectimax value (the gain of ``card`` on ``c``, then
    the mean over every unseen next card of its best two-ply value); other cells untouched."""
    placed = cells[2]
    ph = _phase(placed + 3, phases)
    ur = np.zeros(13, dtype=np.int64)
    us = np.zeros(4, dtype=np.int64)
    d = np.zeros(10)
    _line_deltas(line, cnt, seen, card, vf, phases, nout, ph, ur, us, d)
    m = unseen.shape[0]
    rest = np.empty(max(m - 1, 0), dtype=np.int64)
    line1 = np.empty_like(line)
    cnt1 = np.empty_like(cnt)
    seen1 = np.empty_like(seen)
    cells1 = np.empty_like(cells)
    vals = np.empty(25)
    for c in cands:
        line1[:] = line
        cnt1[:] = cnt
        seen1[:] = seen
        cells1[:] = cells
        _place(line1, cnt1, seen1, cells1, c, card)
        acc = 0.0
        for j in range(m):
            rest[:j] = unseen[:j]
            rest[j:] = unseen[j + 1:]
            _ply_values(line1, cnt1, seen1, cells1, unseen[j], rest, 2, vf, phases, nout, adjacent, first_cell,
                        vals)
            best = -np.inf
            for c2 in range(25):
                if not np.isnan(vals[c2]) and vals[c2] > best:
                    best = vals[c2]
            acc += best
        out[c] = d[c // 5] + d[5 + c % 5] + acc / m


def ply3_values(values_flat: np.ndarray, phases: int, nout: int, state: GameState, unseen, cells,
                adjacent: bool, first_cell: int | None) -> np.ndarray:
    """Three-ply expectimax values of ``cells`` (legal cells of ``state``; NaN elsewhere), on the leaves' phase.

    Only meaningful with at least 3 cards to place (this one and two more); the caller falls back to two plies.
    """
    line, cnt, seen, cl = board_from_state(state)
    out = np.full(25, np.nan)
    _ply3_values(line, cnt, seen, cl, int(state.card), np.asarray(unseen, dtype=np.int64),
                 np.asarray(cells, dtype=np.int64), values_flat, phases, nout, bool(adjacent),
                 -1 if first_cell is None else int(first_cell), out)
    return out


def ply_values(values_flat: np.ndarray, phases: int, nout: int, state: GameState, unseen, ply: int,
               adjacent: bool, first_cell: int | None) -> np.ndarray:
    """Compiled :func:`agents.expectimax.expectimax_values`: each cell's ``ply``-ply value (NaN where illegal)."""
    line, cnt, seen, cells = board_from_state(state)
    out = np.empty(25)
    _ply_values(line, cnt, seen, cells, int(state.card), np.asarray(unseen, dtype=np.int64), int(ply),
                values_flat, phases, nout, bool(adjacent), -1 if first_cell is None else int(first_cell),
                out)
    return out


@njit(cache=True, nogil=True)
def _greedy_cell(line, cnt, seen, cells, card, vf, phases, nout, adjacent, first_cell, legal, ur, us, d, live, base):  # pragma: no cover - compiled
    """The ply-1 greedy cell (first legal cell of highest gain, as ``argmax`` picks it)."""
    _legal(cells, adjacent, first_cell, legal)
    ph = _phase(cells[2] + 1, phases)
    _prep(line, seen, vf, phases, nout, ph, ur, us, live, base)
    _deltas(line, cnt, card, vf, phases, nout, ph, ur, us, live,
            base, d)
    best = -np.inf
    cell = -1
    for c in range(25):
        if legal[c]:
            g = d[c // 5] + d[5 + c % 5]
            if g > best:
                best = g
                cell = c
    return cell


@njit(cache=True, nogil=True)
def _final_score(line, points):  # pragma: no cover - compiled
    """The points of a full board."""
    total = 0.0
    for li in range(10):
        total += points[_key(line[0, li], line[1, li], line[2, li], line[3, li], line[4, li])]
    return total


@njit(cache=True, nogil=True)
def _board_value(line, seen, cells, vf, phases, nout, points, ur, us, live, base):  # pragma: no cover - compiled
    """The board's summed line values: the points of full lines, the table value of the others (at the phase of the
    cards on the board, with the outs of the cards not on it)."""
    ph = _phase(cells[2], phases)
    _prep(line, seen, vf, phases, nout, ph, ur, us, live, base)
    total = 0.0
    for li in range(10):
        t = line[0, li]
        if t >= 5:
            total += points[_key(t, line[1, li], line[2, li], line[3, li], line[4, li])]
        elif nout == 1:
            total += vf[base[li]]
        else:
            s = _SUIT_OF[line[4, li]]
            usl = us[s] if s >= 0 else 0
            total += vf[base[li] * nout + _outs(t, s, usl, live[0, li], live[1, li])]
    return total


@njit(cache=True, nogil=True)
def _rollout_scratch(line, cnt, seen, cells):  # pragma: no cover - compiled
    """The working arrays of one rollout on boards stacked like ``line``: a board (``line``, ``cnt``, ``seen``,
    ``cells``), the legal mask, the unseen ranks and suits, the line gains and :func:`_prep`'s ``live``, ``base``."""
    return (np.empty_like(line[0]), np.empty_like(cnt[0]), np.empty_like(seen[0]), np.empty_like(cells[0]),
            np.zeros(25, dtype=np.int64), np.zeros(13, dtype=np.int64), np.zeros(4, dtype=np.int64), np.zeros(10),
            np.empty((3, 10), dtype=np.int64), np.empty(10, dtype=np.int64))


@njit(cache=True, nogil=True)
def _rollout_totals(line, cnt, seen, cells, orders, vf, phases, nout, adjacent, first_cell, points,
                    out, depth, reply):  # pragma: no cover - compiled
    """``out[i, r]``: final score when board ``i`` (boards stacked on axis 0) is played out greedily on ``orders[r]``;
    with ``depth > 0`` only ``depth`` moves are played and the board's summed line values (:func:`_board_value`)
    stand for the final score.  With ``reply`` of shape ``(boards, 54)`` (not ``(boards, 0)``), the first move of
    every rollout on board ``i`` puts its card on ``reply[i, card]`` instead of the greedy cell."""
    nb = line.shape[0]
    nr = orders.shape[0]
    ln, cn, se, ce, legal, ur, us, d, live, base = _rollout_scratch(line, cnt, seen, cells)
    for job in range(nb * nr):
        i = job // nr
        r = job % nr
        ln[:] = line[i]
        cn[:] = cnt[i]
        se[:] = seen[i]
        ce[:] = cells[i]
        j = 0
        while ce[2] < 25 and (depth <= 0 or j < depth):
            card = orders[r, j]
            if j == 0 and reply.shape[1] > 0:
                c = reply[i, card]
            else:
                c = _greedy_cell(ln, cn, se, ce, card, vf, phases, nout, adjacent, first_cell, legal, ur, us, d, live,
                                 base)
            _place(ln, cn, se, ce, c, card)
            j += 1
        if ce[2] < 25:
            out[i, r] = _board_value(ln, se, ce, vf, phases, nout, points, ur, us, live, base)
        else:
            out[i, r] = _final_score(ln, points)


def _boards_after(state: GameState, cells, card: int):
    """The kernels' board arrays, stacked: board ``i`` is ``state`` with ``card`` on ``cells[i]``."""
    n = len(cells)
    lines, cnts, seens, cls = (np.repeat(x[None], n, 0) for x in board_from_state(state))
    for i, c in enumerate(cells):
        _place(lines[i], cnts[i], seens[i], cls[i], int(c), int(card))
    return lines, cnts, seens, cls


@njit(cache=True, nogil=True)
def _best_cell(vals):  # pragma: no cover - compiled
    """The first cell of highest value (NaN: illegal); -1 if none is legal."""
    best = -np.inf
    cell = -1
    for c in range(25):
        if not np.isnan(vals[c]) and vals[c] > best:
            best = vals[c]
            cell = c
    return cell


@njit(cache=True, nogil=True)
def _reply_cells(line, cnt, seen, cells, cards, unseen, vf, phases, nout, adjacent, first_cell,
                 reply):  # pragma: no cover - compiled
    """``reply[i, card]``: two-ply expectimax's cell on board ``i`` for each ``card`` in ``cards``, the other cards of
    ``unseen`` (ascending, as the agents pass them) being the chance cards."""
    m = unseen.shape[0]
    rest = np.empty(max(m - 1, 0), dtype=np.int64)
    vals = np.empty(25)
    for i in range(line.shape[0]):
        if cells[i, 2] >= 25:
            continue
        for a in range(cards.shape[0]):
            card = cards[a]
            k = 0
            for b in range(m):
                if unseen[b] != card:
                    rest[k] = unseen[b]
                    k += 1
            _ply_values(line[i], cnt[i], seen[i], cells[i], card, rest[:k], 2, vf, phases, nout, adjacent,
                        first_cell, vals)
            reply[i, card] = _best_cell(vals)


def rollout_means(values_flat: np.ndarray, phases: int, nout: int, points: np.ndarray, state: GameState,
                  cells: np.ndarray, card: int, orders: np.ndarray, adjacent: bool,
                  first_cell: int | None, depth: int = 0, reply: tuple[np.ndarray, np.ndarray] | None = None,
                  ) -> np.ndarray:
    """Mean final score of each cell in ``cells`` after ``card`` goes there, over rollouts on ``orders``.

    ``orders`` ``(R, steps)``: the cards to come, one row per rollout (the same rows for every cell).  Rollouts
    play the one-ply greedy policy on the table, like :meth:`agents.batch.Batch.play_out`.  ``depth > 0``
    truncates them after ``depth`` moves and scores the board by its summed line values instead.  ``reply``
    ``(unseen, reply_flat)``: each rollout's first move is two-ply expectimax on ``reply_flat`` (a flat table of
    the same shape), over the ``unseen`` cards (ascending) less the one drawn, instead of one-ply.
    """
    lines, cnts, seens, cls = _boards_after(state, cells, card)
    orders = np.ascontiguousarray(orders, dtype=np.int64)
    adjacent, first = bool(adjacent), -1 if first_cell is None else int(first_cell)
    replies = np.full((len(cells), 0), -1, dtype=np.int64)
    if reply is not None and orders.shape[1] > 0:
        unseen, reply_flat = reply
        replies = np.full((len(cells), 54), -1, dtype=np.int64)
        _reply_cells(lines, cnts, seens, cls, np.unique(orders[:, 0]), np.asarray(unseen, dtype=np.int64),
                     reply_flat, phases, nout, adjacent, first, replies)
    out = np.empty((len(cells), orders.shape[0]))
    _rollout_totals(lines, cnts, seens, cls, orders, values_flat, phases, nout, adjacent, first,
                    np.asarray(points, dtype=np.float64), out, int(depth), replies)
    return out.mean(1)


@njit(cache=True, nogil=True)
def _nth_legal(legal, pick):  # pragma: no cover - compiled
    """The ``pick``-th legal cell (from 0) of the mask ``legal``; -1 if there are fewer."""
    for c in range(25):
        if legal[c]:
            if pick == 0:
                return c
            pick -= 1
    return -1


@njit(cache=True, nogil=True, parallel=True)
def _self_play(decks, explore, noise, ply, vf, phases, nout, adjacent, first_cell, points, rec, final):  # pragma: no cover - compiled
    """Play game ``g`` on ``decks[g]``; ``rec[g, m, l]``: flat table index of line ``l`` after move ``m``."""
    n = decks.shape[0]
    for g in prange(n):
        line = np.zeros((5, 10), dtype=np.int64)
        cnt = np.zeros((10, 13), dtype=np.int64)
        seen = np.zeros(17, dtype=np.int64)
        cells = np.zeros(3, dtype=np.int64)
        vals = np.empty(25)
        legal = np.zeros(25, dtype=np.int64)
        ur = np.zeros(13, dtype=np.int64)
        us = np.zeros(4, dtype=np.int64)
        live = np.empty((3, 10), dtype=np.int64)
        base = np.empty(10, dtype=np.int64)
        rest = np.empty(decks.shape[1], dtype=np.int64)  # the cards still to come, one buffer per game
        for m in range(25):
            card = decks[g, m]
            nleg = _legal(cells, adjacent, first_cell, legal)
            if explore[g, m]:
                cell = _nth_legal(legal, int(noise[g, m] * nleg))
            else:
                # the unseen cards in ascending order, as the agents pass them (GameState order): the chance
                # nodes then sum in the same order, so near-ties break the same way as in the agents
                k = decks.shape[1] - m - 1
                rest[:k] = decks[g, m + 1:]
                if ply >= 2:
                    rest[:k].sort()
                _ply_values(line, cnt, seen, cells, card, rest[:k], ply, vf, phases, nout, adjacent,
                            first_cell, vals)
                cell = -1
                best = -np.inf
                for c in range(25):
                    if legal[c] and vals[c] > best:
                        best = vals[c]
                        cell = c
            _place(line, cnt, seen, cells, cell, card)
            ph = _phase(cells[2], phases)
            _prep(line, seen, vf, phases, nout, ph, ur, us, live, base)
            for li in range(10):
                t = line[0, li]
                s = _SUIT_OF[line[4, li]]
                key = _key(t, line[1, li], line[2, li], line[3, li], line[4, li])
                row = ((key * 2 + (1 if li >= 5 else 0)) * phases + ph) * nout  # the table's own (key, kind, phase) order
                o = _outs(t, s, us[s] if s >= 0 else 0, live[0, li], live[1, li]) if nout > 1 else 0
                rec[g, m, li] = row + o
        for li in range(10):
            final[g, li] = points[_key(line[0, li], line[1, li], line[2, li], line[3, li], line[4, li])]


def self_play(values: np.ndarray, decks: np.ndarray, *, ply: int, explore: np.ndarray, noise: np.ndarray,
              points: np.ndarray, adjacent: bool = False, first_cell: int | None = None):
    """Play ``len(decks)`` games with ``ply``-ply expectimax on ``values`` (a random legal cell where ``explore``).

    Returns ``rec`` ``(N, 25, 10)``, the flat index into ``values`` of every line's abstraction after every
    move, and ``final`` ``(N, 10)``, the points every line ends with.  Games run in parallel threads.
    """
    vf, phases, nout = tables_flat(values)
    n = decks.shape[0]
    rec = np.zeros((n, 25, 10), dtype=np.int64)
    final = np.zeros((n, 10))
    _self_play(np.ascontiguousarray(decks, dtype=np.int64), np.asarray(explore, dtype=np.bool_),
               np.asarray(noise, dtype=np.float64), int(ply), vf, phases, nout, bool(adjacent),
               -1 if first_cell is None else int(first_cell), np.asarray(points, dtype=np.float64),
               rec, final)
    return rec, final


@njit(cache=True, nogil=True)
def _rollout2_totals(line, cnt, seen, cells, perms, steps, vf, phases, nout, adjacent, first_cell, points,
                     out):  # pragma: no cover - compiled
    """Like :func:`_rollout_totals`, but each rollout move is two-ply expectimax over the cards not yet drawn in it
    (``perms[r]``: a whole order of the unseen cards; its first ``steps`` are drawn)."""
    nb = line.shape[0]
    nr = perms.shape[0]
    vals = np.empty(25)
    for job in range(nb * nr):
        i = job // nr
        r = job % nr
        ln = line[i].copy()
        cn = cnt[i].copy()
        se = seen[i].copy()
        ce = cells[i].copy()
        for j in range(steps):
            card = perms[r, j]
            _ply_values(ln, cn, se, ce, card, perms[r, j + 1:], 2, vf, phases, nout, adjacent, first_cell, vals)
            _place(ln, cn, se, ce, _best_cell(vals), card)
        out[i, r] = _final_score(ln, points)


def rollout2_means(values_flat, phases, nout, points, state, cells, card, perms, adjacent, first_cell):
    """Mean final score of each cell in ``cells`` after ``card`` goes there, over rollouts whose moves are two-ply
    expectimax (``perms`` ``(R, unseen)``: whole orders of the unseen cards, the same for every cell)."""
    lines, cnts, seens, cls = _boards_after(state, cells, card)
    out = np.empty((len(cells), perms.shape[0]))
    _rollout2_totals(lines, cnts, seens, cls, np.ascontiguousarray(perms, dtype=np.int64), 24 - len(state.placements),
                     values_flat, phases, nout, bool(adjacent), -1 if first_cell is None else int(first_cell),
                     np.asarray(points, dtype=np.float64), out)
    return out.mean(1)


# --------------------------------------------------------------------------- exact endgame


@njit(cache=True, nogil=True)
def _copy_place(line, cnt, seen, cells, ln, cn, se, ce, cell, card):  # pragma: no cover - compiled
    """Make ``(ln, cn, se, ce)`` the board ``(line, cnt, seen, cells)`` with ``card`` on ``cell``."""
    ln[:] = line
    cn[:] = cnt
    se[:] = seen
    ce[:] = cells
    _place(ln, cn, se, ce, cell, card)


@njit(cache=True, nogil=True)
def _last_card_mean(line, cnt, cell, unseen, used, points):  # pragma: no cover - compiled
    """Mean final score over the cards not ``used`` going on ``cell``, the board's one empty cell."""
    a = cell // 5
    b = 5 + cell % 5
    rest = 0.0
    for li in range(10):
        if li != a and li != b:
            rest += points[_key(line[0, li], line[1, li], line[2, li], line[3, li], line[4, li])]
    total = 0.0
    n = 0
    for j in range(unseen.shape[0]):
        if used[j]:
            continue
        card = unseen[j]
        v = rest
        for li in (a, b):
            t = line[0, li] + 1
            k = line[1, li]
            pairs = line[2, li]
            ranks = line[3, li]
            suits = line[4, li]
            if card < 52:
                pairs += cnt[li, card % 13]
                ranks |= 1 << (card % 13)
                suits |= 1 << (card // 13)
            else:
                k += 1
            v += points[_key(t, k, pairs, ranks, suits)]
        total += v
        n += 1
    return total / n


@njit(cache=True, nogil=True)
def _exact_after(line, cnt, seen, cells, unseen, used, adjacent, first_cell, points):  # pragma: no cover - compiled
    """Exact expected final score of a board before its next card is drawn, playing every later card optimally.

    The next card is uniform over the ``unseen`` cards not marked in ``used``; expectimax to the end.
    """
    if cells[2] >= 25:
        return _final_score(line, points)
    legal = np.zeros(25, dtype=np.int64)
    _legal(cells, adjacent, first_cell, legal)
    if cells[2] == 24:  # the last card has one cell: only its row and column change
        return _last_card_mean(line, cnt, np.argmax(legal), unseen, used, points)
    ln = np.empty_like(line)
    cn = np.empty_like(cnt)
    se = np.empty_like(seen)
    ce = np.empty_like(cells)
    total = 0.0
    n = 0
    for j in range(unseen.shape[0]):
        if used[j]:
            continue
        used[j] = 1
        best = -np.inf
        for c in range(25):
            if legal[c] == 0:
                continue
            _copy_place(line, cnt, seen, cells, ln, cn, se, ce, c, unseen[j])
            v = _exact_after(ln, cn, se, ce, unseen, used, adjacent, first_cell, points)
            if v > best:
                best = v
        used[j] = 0
        total += best
        n += 1
    return total / n


# A separate entry rather than one recursive kernel for both: that made numba crash when it loaded the kernel from its
# cache in a new process (tests/test_fast.py runs a cached load in a fresh interpreter).
@njit(cache=True, nogil=True)
def _exact_values(line, cnt, seen, cells, card, unseen, adjacent, first_cell, points, out):  # pragma: no cover
    legal = np.zeros(25, dtype=np.int64)
    _legal(cells, adjacent, first_cell, legal)
    used = np.zeros(unseen.shape[0], dtype=np.int64)
    ln = np.empty_like(line)
    cn = np.empty_like(cnt)
    se = np.empty_like(seen)
    ce = np.empty_like(cells)
    for c in range(25):
        out[c] = np.nan
        if legal[c] == 0:
            continue
        _copy_place(line, cnt, seen, cells, ln, cn, se, ce, c, card)
        out[c] = _exact_after(ln, cn, se, ce, unseen, used, adjacent, first_cell, points)


def exact_values(points: np.ndarray, state: GameState, unseen, adjacent: bool, first_cell: int | None) -> np.ndarray:
    """``out[25]``: the exact expected final score of placing ``state.card`` on each cell (NaN where illegal).

    Full expectimax to the end of the game over the ``unseen`` cards (each later card uniform over those not yet
    drawn, every later placement optimal), scored by the line-points table ``points``.  The work grows as
    ``(empty cells)! * unseen^(empty cells - 1)``: about 0.5 M final boards with 4 empty cells, 90 M with 5.
    """
    line, cnt, seen, cells = board_from_state(state)
    out = np.empty(25)
    _exact_values(line, cnt, seen, cells, int(state.card), np.asarray(unseen, dtype=np.int64), bool(adjacent),
                  -1 if first_cell is None else int(first_cell), np.asarray(points, dtype=np.float64), out)
    return out
