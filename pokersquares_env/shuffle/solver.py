"""The clairvoyant solver: the best arrangement of 25 known cards, and the simulated-annealing baseline.

:func:`solve` is the upper reference for every online Poker Squares agent: no
policy that sees one card at a time can, on average, beat the best arrangement
of the same 25 cards.  It runs an iterated local search on the swap
neighbourhood (exchange two cells) as many independent chains at once, held as
numpy arrays over chains: steepest ascent over all 300 swaps, random kicks of a
few swaps, ascent again, keep unless worse.

Scoring is incremental and table-driven: each line keeps its rank counts (one
4-bit counter per rank packed in an int64), suit counts, joker count, number
of equal-rank pairs and rank bit set, so a swap touches at most four lines and
rescoring one is a handful of integer operations plus one look-up in
``PointSystem.line_points_table`` -- the same tables every other scoring path
of the package uses.

:func:`anneal` is the plain swap-based simulated annealing the solver is
compared against: one chain, one random swap per step, pure Python.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np

from pokersquares_env._adapter import check_number, check_seed
from pokersquares_env.cards import NUM_STANDARD, check_codes, parse_cards
from pokersquares_env.scoring import FLUSHABLE, LINE_CELLS, WINDOW, PointSystem, point_system, score_grid

__all__ = ["anneal", "check_cards", "solve", "upper_bound", "MAX_RESTARTS", "SWAP_PAIRS"]

NUM_CELLS = 25
#: All 300 unordered cell pairs (i < j), the swap neighbourhood.
SWAP_PAIRS = np.array([(i, j) for i in range(NUM_CELLS) for j in range(i + 1, NUM_CELLS)], dtype=np.int64)

_CODES = np.arange(NUM_STANDARD + 2)
_IS_JOKER = (_CODES >= NUM_STANDARD).astype(np.int64)
_RANK = np.where(_IS_JOKER == 1, 0, _CODES % 13).astype(np.int64)
_SUIT = np.where(_IS_JOKER == 1, 0, _CODES // 13).astype(np.int64)
_REAL = 1 - _IS_JOKER
_RANK_NIB = _REAL << (4 * _RANK)  # one 4-bit counter per rank
_SUIT_NIB = _REAL << (4 * _SUIT)  # one 4-bit counter per suit
_RANK_BIT = _REAL << _RANK
_ROW = np.arange(NUM_CELLS) // 5
_COL = 5 + np.arange(NUM_CELLS) % 5
_NIBBLE_LOW = 0x1111  # low bit of each of the 4 suit counters


def check_cards(cards25: Any) -> list[int]:
    """25 distinct card codes from codes, card names (``'T♠'``, ``'JK'``; mixed with codes or not), a card string
    (``'As Kd ...'``) or a 5x5 array."""
    if isinstance(cards25, str):
        codes = parse_cards(cards25)
    elif isinstance(cards25, (Mapping, AbstractSet, bytes, bytearray)) or not isinstance(cards25, (Sequence, np.ndarray)):
        raise TypeError(f"cards {cards25!r}: expected 25 card codes or names (a list, a 5x5 array) or a card string, "
                        f"got {type(cards25).__name__}")
    else:
        arr = cards25 if isinstance(cards25, np.ndarray) else np.asarray(cards25, dtype=object)
        codes = arr.reshape(-1).tolist()  # each entry a code or a name: check_codes names the first bad one
    codes = check_codes(codes, where="cards")
    if len(codes) != NUM_CELLS:
        raise ValueError(f"cards: got {len(codes)} cards: expected exactly 25 distinct cards")
    return codes


def _points_table(system: PointSystem) -> np.ndarray:
    # t = 5 (full lines) slice of the line table: index ((k*11 + pairs)*4 + window)*2 + flushable
    return system.line_points_table.reshape(6, 3, 11, 4, 2)[5].reshape(-1).astype(np.float64)


def _result(grid: np.ndarray, system: PointSystem):
    score = score_grid(grid, system)
    return grid.reshape(5, 5).astype(np.int64), score


# --------------------------------------------------------------------------- vectorized chains


class _Chains:
    """Many full boards at once, with the running statistics of their 10 lines."""

    def __init__(self, boards: np.ndarray, system: PointSystem) -> None:
        self.table = _points_table(system)
        self.board = boards.astype(np.int64)  # (N, 25)
        n = len(boards)
        lines = self.board[:, LINE_CELLS]  # (N, 10, 5)
        self.rc = _RANK_NIB[lines].sum(-1)
        self.sc = _SUIT_NIB[lines].sum(-1)
        self.k = _IS_JOKER[lines].sum(-1)
        self.rbits = np.bitwise_or.reduce(_RANK_BIT[lines], axis=-1)
        counts = (self.rc[..., None] >> (4 * np.arange(13))) & 15
        self.pairs = (counts * (counts - 1) // 2).sum(-1)
        self.pts = self._points(self.k, self.pairs, self.rbits, self.sc)
        self.total = self.pts.sum(-1)
        self.rows = np.arange(n)

    def _points(self, k, pairs, rbits, sc):
        nz = (sc | sc >> 1 | sc >> 2) & _NIBBLE_LOW  # one bit per suit present
        flushable = (nz & (nz - 1)) == 0
        return self.table[((k * 11 + pairs) * 4 + WINDOW[rbits]) * 2 + flushable]

    def propose(self, c: np.ndarray, i: np.ndarray, j: np.ndarray):
        """Score change of swapping cells ``i`` and ``j`` on boards ``c``, and the new stats of the 4 lines touched."""
        a = self.board[c, i]
        b = self.board[c, j]
        lines = np.stack([_ROW[i], _COL[i], _ROW[j], _COL[j]], axis=1)  # (M, 4)
        out = np.stack([a, a, b, b], axis=1)
        inn = np.stack([b, b, a, a], axis=1)
        same_row = (_ROW[i] == _ROW[j])[:, None]
        same_col = (_COL[i] == _COL[j])[:, None]
        shared = np.concatenate([same_row, same_col, same_row, same_col], axis=1)
        inn = np.where(shared, out, inn)  # a line holding both cells keeps its cards
        cc = c[:, None]
        rc = self.rc[cc, lines]
        sc = self.sc[cc, lines]
        k = self.k[cc, lines]
        pairs = self.pairs[cc, lines]
        rbits = self.rbits[cc, lines]
        # take the outgoing card out
        ro = _RANK[out]
        real_o = _REAL[out]
        cnt_o = (rc >> (4 * ro)) & 15
        pairs = pairs - real_o * (cnt_o - 1)
        rc = rc - _RANK_NIB[out]
        sc = sc - _SUIT_NIB[out]
        k = k - _IS_JOKER[out]
        rbits = np.where((real_o == 1) & (cnt_o == 1), rbits & ~_RANK_BIT[out], rbits)
        # put the incoming card in
        ri = _RANK[inn]
        pairs = pairs + _REAL[inn] * ((rc >> (4 * ri)) & 15)
        rc = rc + _RANK_NIB[inn]
        sc = sc + _SUIT_NIB[inn]
        k = k + _IS_JOKER[inn]
        rbits = rbits | _RANK_BIT[inn]
        pts = self._points(k, pairs, rbits, sc)
        old = self.pts[cc, lines]
        # a line listed twice (same row or column) has the same old and new points in both slots
        delta = (pts - old)[:, :2].sum(1) + np.where(same_row[:, 0], 0.0, pts[:, 2] - old[:, 2]) + np.where(
            same_col[:, 0], 0.0, pts[:, 3] - old[:, 3]
        )
        return delta, (lines, rc, sc, k, pairs, rbits, pts)

    def commit(self, c, i, j, delta, stats) -> None:
        """Apply the proposed swaps on boards ``c`` (one per board)."""
        lines, rc, sc, k, pairs, rbits, pts = stats
        cc = c[:, None]
        a = self.board[c, i]
        self.board[c, i] = self.board[c, j]
        self.board[c, j] = a
        self.rc[cc, lines] = rc
        self.sc[cc, lines] = sc
        self.k[cc, lines] = k
        self.pairs[cc, lines] = pairs
        self.rbits[cc, lines] = rbits
        self.pts[cc, lines] = pts
        self.total[c] += delta


def _descend(chains: _Chains, max_rounds: int = 200) -> None:
    """Steepest ascent over all 300 swaps on every board until none improves."""
    n = len(chains.board)
    live = np.arange(n)
    pi, pj = SWAP_PAIRS[:, 0], SWAP_PAIRS[:, 1]
    # a gain counts above float noise: 1e-9, or less for a table of tiny values (1e-10 a hand would else never climb)
    tol = 1e-9 * min(1.0, float(np.abs(chains.table).max()) or 1.0)
    for _ in range(max_rounds):
        if not live.size:
            break
        c = np.repeat(live, len(SWAP_PAIRS))
        i = np.tile(pi, live.size)
        j = np.tile(pj, live.size)
        delta, _ = chains.propose(c, i, j)
        delta = delta.reshape(live.size, -1)
        best = delta.argmax(1)
        gain = delta[np.arange(live.size), best]
        improving = gain > tol
        live = live[improving]
        if not live.size:
            break
        bi, bj = pi[best[improving]], pj[best[improving]]
        d, stats = chains.propose(live, bi, bj)
        chains.commit(live, bi, bj, d, stats)


def _kick(board: np.ndarray, swaps: int, rng: np.random.Generator) -> np.ndarray:
    """Copies of the boards with ``swaps`` random cell exchanges each."""
    board = board.copy()
    rows = np.arange(len(board))
    for _ in range(swaps):
        i = rng.integers(0, NUM_CELLS, size=len(board))
        j = (i + rng.integers(1, NUM_CELLS, size=len(board))) % NUM_CELLS
        a = board[rows, i]
        board[rows, i] = board[rows, j]
        board[rows, j] = a
    return board


#: The most chains :func:`solve` runs (``restarts``): each holds about 1 KB of statistics, so 100,000 chains take
#: some 150 MB; more would only repeat the search at the cost of memory.
MAX_RESTARTS = 100_000
#: Chains climbed together: the steepest ascent scores 300 swaps of every chain at once, so a batch bounds the
#: memory (about 100 MB for 256 chains) and lets ``time_limit`` stop the search between batches.
_BATCH = 256


def _climb(boards: np.ndarray, system: PointSystem) -> tuple[np.ndarray, np.ndarray]:
    """Steepest ascent from each board (a batch of at most ``_BATCH``): the boards reached and their scores."""
    chains = _Chains(boards, system)
    _descend(chains)
    return chains.board, chains.total


def solve(
    cards25: Any,
    system: Any = "american",
    *,
    seed: int | None = 0,
    time_limit: float | None = None,
    restarts: int = 48,
    rounds: int = 40,
    kick: int = 4,
    return_stats: bool = False,
):
    """The best arrangement found of 25 known cards: ``(grid 5x5 of codes, score)``.

    Iterated local search over cell swaps, run as ``restarts`` independent
    chains (1 to :data:`MAX_RESTARTS`): each chain starts from a random layout
    and climbs by steepest ascent over all 300 swaps; then, ``rounds`` times,
    it makes ``kick`` random swaps, climbs again and keeps the new layout
    unless it scores less.  Chains climb in batches of 256.  The result is
    deterministic for a given ``seed`` (whatever the batches) unless
    ``time_limit`` (seconds, counted from the call) stops the search early:
    it is checked after each batch, both while the chains are built and
    climbed the first time and in every round, so the search stops within
    about one batch's climb of the limit (the first batch always runs);
    chains not yet built are left out and a round cut short keeps the
    layouts reached.  ``seed`` is an integer >= 0, or ``None`` for fresh
    entropy from the operating system (a different search on every call).
    ``time_limit`` is a positive number of seconds or ``None`` (no limit).
    ``return_stats`` adds a dict with every chain's final score (how many
    chains reach the best score is evidence of optimality), the rounds every
    chain completed and the seconds taken.
    """
    start = time.perf_counter()
    codes = np.array(check_cards(cards25), dtype=np.int64)
    ps = point_system(system)
    seed = check_seed(seed, " (None: fresh entropy)")
    for name, value, low in (("restarts", restarts, 1), ("rounds", rounds, 0), ("kick", kick, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{name}={value!r}: expected an integer >= {low}")
    if restarts > MAX_RESTARTS:
        raise ValueError(f"restarts={restarts!r}: expected an integer from 1 to {MAX_RESTARTS} (the most chains "
                         f"solve runs)")
    if time_limit is not None:
        _check_time_limit(time_limit, " or None")

    def out_of_time() -> bool:
        return time_limit is not None and time.perf_counter() - start > time_limit

    rng = np.random.default_rng(seed)
    n = int(restarts)
    boards, totals = [], []
    for lo in range(0, n, _BATCH):  # the same permutations, in the same order, whatever the batches
        if lo and out_of_time():
            break
        b, t = _climb(np.stack([codes[rng.permutation(NUM_CELLS)] for _ in range(min(_BATCH, n - lo))]), ps)
        boards.append(b)
        totals.append(t)
    board, total = np.concatenate(boards), np.concatenate(totals)
    done = 0
    for _ in range(int(rounds)):
        if out_of_time():
            break
        kicked = _kick(board, int(kick), rng)  # every chain's kick at once: the same draws whatever the batches
        finished = True
        for lo in range(0, len(board), _BATCH):
            if lo and out_of_time():
                finished = False
                break
            b, t = _climb(kicked[lo:lo + _BATCH], ps)
            keep = t >= total[lo:lo + _BATCH]  # equal scores move too: walks across plateaus
            board[lo:lo + _BATCH][keep] = b[keep]
            total[lo:lo + _BATCH][keep] = t[keep]
        if not finished:
            break
        done += 1
    top = int(np.argmax(total))
    grid, score = _result(board[top], ps)
    if not math.isclose(float(score), float(total[top]), abs_tol=1e-6):  # incremental stats must agree
        raise AssertionError(f"solver bookkeeping drifted: {total[top]} vs rescored {score}")
    if return_stats:
        return grid, score, {
            "chain_scores": sorted(total.tolist(), reverse=True),
            "rounds": done,
            "seconds": time.perf_counter() - start,
        }
    return grid, score


def _check_time_limit(time_limit: Any, alternatives: str = "") -> None:
    """Refuse a ``time_limit`` that is not a positive number of seconds (NaN included), naming it."""
    if isinstance(time_limit, (bool, np.bool_)) or not isinstance(time_limit, (int, float, np.integer, np.floating)):
        raise TypeError(f"time_limit={time_limit!r}: expected a positive number of seconds{alternatives}")
    if not time_limit > 0:  # NaN too
        raise ValueError(f"time_limit={time_limit!r}: expected a positive number of seconds{alternatives}")


def upper_bound(cards25: Any, system: Any = "american", *, time_limit: float = 120.0) -> float:
    """A proven upper bound on the best score of 25 known cards (needs scipy, for the HiGHS MILP solver).

    Any layout's rows and columns are 10 hands with no two cards sharing both
    a row and a column.  Keeping only its scoring hands gives a packing of
    5-card hands into two families (rows, columns) in which every card is in
    at most one hand of each family and every pair of cards in at most one
    hand in all.  The best such packing is at least the best layout's score;
    its linear-programming relaxation (solved by HiGHS) bounds it in turn.
    Only for point systems without negative points.  (The integer program
    itself is too slow to help: branch and bound rarely tightens the LP bound
    within minutes.)
    """
    try:
        from scipy.optimize import Bounds, LinearConstraint, milp
        from scipy.sparse import coo_matrix
    except ImportError:
        raise ImportError(
            'upper_bound needs scipy (HiGHS MILP): pip install "pokersquares_env[bounds]" (or pip install scipy)'
        ) from None
    from pokersquares_env.scoring import line_keys

    codes = np.array(check_cards(cards25), dtype=np.int64)
    ps = point_system(system)
    _check_time_limit(time_limit)
    if min(ps.points) < 0:
        raise ValueError(f"point system {ps.name!r} has negative points: upper_bound needs points >= 0")
    combos = np.array(list(itertools.combinations(range(NUM_CELLS), 5)), dtype=np.int64)
    w = ps.line_points_table[line_keys(codes[combos])]
    combos, w = combos[w > 0], w[w > 0]
    h = len(w)
    if h == 0:
        return 0 if ps.integral else 0.0
    pair_id = np.full((NUM_CELLS, NUM_CELLS), -1, dtype=np.int64)
    pair_id[SWAP_PAIRS[:, 0], SWAP_PAIRS[:, 1]] = np.arange(len(SWAP_PAIRS))
    pairs = np.stack([pair_id[combos[:, a], combos[:, b]] for a, b in itertools.combinations(range(5), 2)], axis=1)
    x, y = np.arange(h), h + np.arange(h)  # variables: hand as a row, hand as a column
    rows_all = np.concatenate([
        combos.reshape(-1),  # each card in at most one row hand
        NUM_CELLS + combos.reshape(-1),  # ... and in at most one column hand
        2 * NUM_CELLS + pairs.reshape(-1),  # two cards share at most one line, row or column
        2 * NUM_CELLS + pairs.reshape(-1),
    ])
    cols_all = np.concatenate([np.repeat(x, 5), np.repeat(y, 5), np.repeat(x, 10), np.repeat(y, 10)])
    n_rows = 2 * NUM_CELLS + len(SWAP_PAIRS)
    a = coo_matrix((np.ones(len(rows_all)), (rows_all, cols_all)), shape=(n_rows, 2 * h)).tocsr()
    sym = np.concatenate([-w, w])[None, :]  # rows worth at least columns (transposing breaks the tie)
    constraints = [LinearConstraint(a, -np.inf, 1.0), LinearConstraint(sym, -np.inf, 0.0)]
    c = -np.concatenate([w, w])
    lp = milp(c=c, constraints=constraints, bounds=Bounds(0, 1), options={"time_limit": float(time_limit)})
    if lp.status != 0:
        raise RuntimeError(f"the LP relaxation did not solve within {time_limit} s (status {lp.status}: {lp.message})")
    bound = -float(lp.fun)
    return math.floor(bound + 1e-6) if ps.integral else bound


# --------------------------------------------------------------------------- baseline


def _line_value(codes: Iterable[int], table: list[float]) -> float:
    """Points of a full line of 5 codes."""
    k = pairs = rbits = sbits = 0
    seen: dict[int, int] = {}
    for code in codes:
        if code >= NUM_STANDARD:
            k += 1
            continue
        r = code % 13
        pairs += seen.get(r, 0)
        seen[r] = seen.get(r, 0) + 1
        rbits |= 1 << r
        sbits |= 1 << (code // 13)
    return table[((k * 11 + pairs) * 4 + _WINDOW[rbits]) * 2 + _FLUSHABLE[sbits]]


_WINDOW = WINDOW.tolist()
_FLUSHABLE = FLUSHABLE.tolist()
_LINES = LINE_CELLS.tolist()
_CELL_LINES = [(c // 5, 5 + c % 5) for c in range(NUM_CELLS)]


def anneal(
    cards25: Any,
    system: Any = "american",
    *,
    seed: int | None = 0,
    steps: int = 50000,
    t_start: float = 1.0,
    t_end: float = 0.05,
):
    """Plain swap-based simulated annealing (the baseline): ``(grid 5x5 of codes, score)``.

    One chain from a random layout; each step swaps two random cells and keeps
    the swap by the Metropolis rule, the temperature falling geometrically
    from ``t_start`` to ``t_end`` times the system's full-house value
    (finite numbers, ``0 < t_end <= t_start``).  ``seed`` is an integer >= 0,
    or ``None`` for fresh entropy.
    """
    codes = check_cards(cards25)
    ps = point_system(system)
    seed = check_seed(seed, " (None: fresh entropy)")
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
        raise ValueError(f"steps={steps!r}: expected a positive integer")
    hot, cold = check_number("t_start", t_start), check_number("t_end", t_end)
    if not 0 < cold <= hot:
        raise ValueError(f"t_start={t_start!r}, t_end={t_end!r}: expected temperatures with 0 < t_end <= t_start "
                         f"(the cooling runs from t_start down to t_end)")
    t_start, t_end = hot, cold
    table = _points_table(ps).tolist()
    rng = np.random.default_rng(seed)
    board = [codes[p] for p in rng.permutation(NUM_CELLS)]
    pts = [_line_value([board[c] for c in cells], table) for cells in _LINES]
    total = best = sum(pts)
    best_board = board.copy()
    unit = abs(ps["full_house"]) or max(abs(p) for p in ps.points) or 1.0
    ratio = (t_end / t_start) ** (1.0 / max(1, steps - 1))
    temp = unit * t_start
    ii = rng.integers(0, NUM_CELLS, size=steps).tolist()
    jj = ((np.array(ii) + rng.integers(1, NUM_CELLS, size=steps)) % NUM_CELLS).tolist()
    uu = rng.random(size=steps).tolist()
    for s in range(steps):
        i, j = ii[s], jj[s]
        touched = set(_CELL_LINES[i]) | set(_CELL_LINES[j])
        board[i], board[j] = board[j], board[i]
        new = {ln: _line_value([board[c] for c in _LINES[ln]], table) for ln in touched}
        delta = sum(new[ln] - pts[ln] for ln in touched)
        if delta >= 0 or uu[s] < math.exp(delta / temp):
            for ln, v in new.items():
                pts[ln] = v
            total += delta
            if total > best:
                best, best_board = total, board.copy()
        else:
            board[i], board[j] = board[j], board[i]
        temp *= ratio
    return _result(np.array(best_board, dtype=np.int64), ps)
