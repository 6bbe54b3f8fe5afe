"""Many Poker Squares games at once in numpy: the engine behind table training, rollouts and expectimax.

A :class:`Batch` holds ``N`` boards that all have the same number of placed
cards (they advance in lock step).  Lines are kept as the core's running
statistics (cards ``t``, jokers ``k``, equal-rank pairs, rank and suit bit
sets, rank counts), so scoring a line or the line it would become with one
more card is a table look-up, vectorised over games, lines and cards.

A *value table* ``V`` has shape ``(NUM_KEYS, 2, phases)``: the value of a line
with ``LINE_MASK`` key ``key``, of kind ``0`` (row) or ``1`` (column), when
``placed`` cards are on the board (``phase = placed * phases // 26``).  A
table of shape ``(NUM_KEYS, 2, phases, NUM_OUTS)`` also conditions on what can
still come (:func:`outs_index`): how many unseen cards still fit the line's
flush, and how many unseen cards share a rank with the line.  A
policy plays the legal cell that most increases the summed value of the
lines the card joins.
"""

from __future__ import annotations

import numpy as np

from pokersquares_env.cards import NUM_STANDARD
from pokersquares_env.core import ADJACENT, GameState
from pokersquares_env.scoring import FLUSHABLE, WINDOW

__all__ = ["Batch", "ROW", "COL", "IS_COL", "phase_of", "outs_index", "NUM_OUTS", "NUM_OUTS_STRAIGHT", "NUM_OUTS_CLAIMS",
           "FLUSH_BUCKETS", "RANK_BUCKETS", "STRAIGHT_BUCKETS"]

ROW = np.array([c // 5 for c in range(25)])
COL = np.array([5 + c % 5 for c in range(25)])
IS_COL = np.array([0] * 5 + [1] * 5)
_ADJ = np.array([[(ADJACENT[c] >> j) & 1 for j in range(25)] for c in range(25)], dtype=bool)
_LINE_CELL = np.zeros((10, 25), dtype=bool)
for _c in range(25):
    _LINE_CELL[ROW[_c], _c] = _LINE_CELL[COL[_c], _c] = True


#: Suit of a one-suit bit set (-1 for none or several suits).
_SUIT_OF = np.full(16, -1, dtype=np.int64)
_SUIT_OF[[1, 2, 4, 8]] = [0, 1, 2, 3]
#: Flush bucket by spare unseen cards of the line's suit (unseen - cards still needed), from -13 up: 0 when
#: the flush is dead, then spare 0 / 1-2 / 3-5 / 6+.
_FLUSH_SPARE = np.array([0] * 13 + [1, 2, 2, 3, 3, 3] + [4] * 20, dtype=np.int64)
#: Rank bucket by unseen cards sharing a rank with the line: 0 / 1 / 2 / 3-4 / 5-7 / 8+.
_RANK_OUTS = np.array([0, 1, 2, 3, 3, 4, 4, 4] + [5] * 50, dtype=np.int64)
FLUSH_BUCKETS = 5
RANK_BUCKETS = 6
NUM_OUTS = FLUSH_BUCKETS * RANK_BUCKETS
#: ``features="claims"`` (compiled kernels only, :mod:`agents._fast`): a flush-live line whose suit other lines of
#: its kind (rows for a row, columns for a column) also collect -- with 2 to 4 cards of it -- gets one of 4 further
#: flush buckets by the spare unseen cards of the suit once every claim is met: < 0 / 0-1 / 2-4 / 5+.
CLAIM_BUCKETS = 4
NUM_OUTS_CLAIMS = (FLUSH_BUCKETS + CLAIM_BUCKETS) * RANK_BUCKETS
#: Straight bucket: how many 5-rank windows (A-5 .. 10-A) hold the line's ranks and have every missing rank
#: still unseen: 0 / 1 / 2+ (0 for lines with a rank group).
STRAIGHT_BUCKETS = 3
NUM_OUTS_STRAIGHT = NUM_OUTS * STRAIGHT_BUCKETS
_WINDOWS = np.array([0b1000000001111] + [0b11111 << i for i in range(9)], dtype=np.int64)
_BITS13 = 1 << np.arange(13, dtype=np.int64)


def outs_index(t, suits, present, unseen_rank, unseen_suit, pairs=None, ranks=None):
    """``(N, 10)`` outs bucket of every line: flush bucket * ``RANK_BUCKETS`` + rank bucket (0 for empty/full lines).

    ``t`` ``(N, 10)`` cards per line, ``suits`` ``(N, 10)`` suit bit sets,
    ``present`` ``(N, 10, 13)`` ranks held, ``unseen_rank`` ``(N, 13)`` and
    ``unseen_suit`` ``(N, 4)`` unseen standard cards.  Given ``pairs`` and
    ``ranks`` (rank bit sets), the index is that times ``STRAIGHT_BUCKETS`` plus
    the straight bucket (``NUM_OUTS_STRAIGHT`` values in all).
    """
    open_ = (t > 0) & (t < 5)
    suit = _SUIT_OF[suits]
    outs = np.take_along_axis(unseen_suit, np.maximum(suit, 0), axis=1)
    spare = outs - (5 - t)
    fb = np.where(open_ & (suit >= 0), _FLUSH_SPARE[np.clip(spare + 13, 0, _FLUSH_SPARE.size - 1)], 0)
    live = np.einsum("nlr,nr->nl", present, unseen_rank)
    rb = np.where(open_, _RANK_OUTS[np.minimum(live, _RANK_OUTS.size - 1)], 0)
    idx = fb * RANK_BUCKETS + rb
    if pairs is None:
        return idx
    avail = (unseen_rank > 0) @ _BITS13  # (N,) ranks with an unseen card
    r = ranks[:, :, None]
    fits = ((r & ~_WINDOWS) == 0) & ((_WINDOWS & ~r & ~avail[:, None, None]) == 0)
    sb = np.where(open_ & (pairs == 0) & (ranks > 0), np.minimum(fits.sum(2), STRAIGHT_BUCKETS - 1), 0)
    return idx * STRAIGHT_BUCKETS + sb


def phase_of(placed: int, phases: int) -> int:
    """The phase index of a board with ``placed`` cards."""
    return min(phases - 1, placed * phases // 26)


def _keys(t, k, pairs, ranks, suits):
    return (((t * 3 + k) * 11 + pairs) * 4 + WINDOW[ranks]) * 2 + FLUSHABLE[suits]


class Batch:
    """``N`` boards in lock step (see the module docstring)."""

    def __init__(self, n: int, *, placement: str = "free", first_cell: int | None = None) -> None:
        self.n = n
        self.placement = placement
        self.first_cell = first_cell
        self.placed = 0
        self.t = np.zeros((n, 10), dtype=np.int64)
        self.k = np.zeros((n, 10), dtype=np.int64)
        self.pairs = np.zeros((n, 10), dtype=np.int64)
        self.ranks = np.zeros((n, 10), dtype=np.int64)
        self.suits = np.zeros((n, 10), dtype=np.int64)
        self.counts = np.zeros((n, 10, 13), dtype=np.int64)
        self.occ = np.zeros((n, 25), dtype=bool)
        self.front = np.zeros((n, 25), dtype=bool)
        self.seen_rank = np.zeros((n, 13), dtype=np.int64)  # standard cards on the board, by rank
        self.seen_suit = np.zeros((n, 4), dtype=np.int64)  # ... and by suit

    @classmethod
    def from_state(cls, state: GameState, n: int, *, placement: str = "free", first_cell: int | None = None) -> "Batch":
        """``n`` copies of a core game state (only its board is read, never its deck)."""
        b = cls(n, placement=placement, first_cell=first_cell)
        b.placed = len(state.placements)
        b.t[:] = state.line_t
        b.k[:] = state.line_k
        b.pairs[:] = state.line_pairs
        b.ranks[:] = state.line_ranks
        b.suits[:] = state.line_suits
        b.counts[:] = np.asarray(state.rank_counts).reshape(10, 13)
        occ = np.array([(state.occupied >> c) & 1 for c in range(25)], dtype=bool)
        front = np.array([(state.frontier >> c) & 1 for c in range(25)], dtype=bool)
        b.occ[:] = occ
        b.front[:] = front
        for code in state.board:
            if 0 <= code < NUM_STANDARD:
                b.seen_rank[:, code % 13] += 1
                b.seen_suit[:, code // 13] += 1
        return b

    def repeat(self, r: int) -> "Batch":
        """A batch holding each game ``r`` times in a row (game ``i`` becomes ``i*r .. i*r+r-1``)."""
        b = Batch(self.n * r, placement=self.placement, first_cell=self.first_cell)
        b.placed = self.placed
        for name in ("t", "k", "pairs", "ranks", "suits", "counts", "occ", "front", "seen_rank", "seen_suit"):
            setattr(b, name, np.repeat(getattr(self, name), r, axis=0))
        return b

    # ---- legality and values ------------------------------------------------
    def legal(self) -> np.ndarray:
        """``(N, 25)`` bool: the legal cells of every game."""
        free = ~self.occ
        if self.placed == 0:
            if self.first_cell is not None:
                out = np.zeros_like(free)
                out[:, self.first_cell] = True
                return out
            return free
        if self.placement == "adjacent":
            return free & self.front
        return free

    def keys(self) -> np.ndarray:
        """``(N, 10)`` ``LINE_MASK`` keys of the lines as they stand."""
        return _keys(self.t, self.k, self.pairs, self.ranks, self.suits)

    def _unseen_after(self, cards: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Unseen standard cards by rank ``(N, 13)`` and suit ``(N, 4)``, once ``cards`` (if given) are seen too."""
        ur = 4 - self.seen_rank
        us = 13 - self.seen_suit
        if cards is not None:
            cards = np.asarray(cards)
            real = cards < NUM_STANDARD
            idx = np.flatnonzero(real)
            ur = ur.copy()
            us = us.copy()
            ur[idx, cards[idx] % 13] -= 1
            us[idx, cards[idx] // 13] -= 1
        return ur, us

    def outs(self, cards: np.ndarray | None = None, straights: bool = False) -> np.ndarray:
        """``(N, 10)`` outs buckets of the lines as they stand, with ``cards`` (if given) counted as seen."""
        ur, us = self._unseen_after(cards)
        extra = (self.pairs, self.ranks) if straights else ()
        return outs_index(self.t, self.suits, (self.counts > 0).astype(np.int64), ur, us, *extra)

    def keys_with(self, cards: np.ndarray, with_outs: bool = False, straights: bool = False):
        """``(N, 10)`` keys each line would have with game ``i``'s card ``cards[i]`` added (full lines clipped).

        With ``with_outs`` also the lines' outs buckets after the card is added
        (a pair of arrays; ``straights``: with the straight bucket).
        """
        cards = np.asarray(cards)
        real = cards < NUM_STANDARD
        rank = np.where(real, cards % 13, 0)
        suit = np.where(real, cards // 13, 0)
        realc = real[:, None]
        t = np.minimum(self.t + 1, 5)
        k = np.minimum(self.k + (~realc), 2)
        got = np.take_along_axis(self.counts, rank[:, None, None].repeat(10, 1), axis=2)[:, :, 0]
        pairs = np.minimum(self.pairs + np.where(realc, got, 0), 10)
        ranks = self.ranks | np.where(realc, (1 << rank)[:, None], 0)
        suits = self.suits | np.where(realc, (1 << suit)[:, None], 0)
        keys = _keys(t, k, pairs, ranks, suits)
        if not with_outs:
            return keys
        present = (self.counts > 0).astype(np.int64)
        present[np.flatnonzero(real), :, rank[real]] = 1
        ur, us = self._unseen_after(cards)
        extra = (pairs, ranks) if straights else ()
        return keys, outs_index(t, suits, present, ur, us, *extra)

    def cell_gains(self, cards: np.ndarray, table: np.ndarray, phase: int) -> np.ndarray:
        """``(N, 25)``: how much placing the card on each cell raises the board value (``-inf`` if illegal)."""
        vt = table[:, :, phase]
        if vt.ndim == 3:  # conditioned on outs
            st = vt.shape[2] == NUM_OUTS_STRAIGHT
            after, outs_after = self.keys_with(cards, with_outs=True, straights=st)
            gain = vt[after, IS_COL, outs_after] - vt[self.keys(), IS_COL, self.outs(cards, straights=st)]
        else:
            gain = vt[self.keys_with(cards), IS_COL] - vt[self.keys(), IS_COL]
        out = gain[:, ROW] + gain[:, COL]
        out[~self.legal()] = -np.inf
        return out

    # ---- moves -------------------------------------------------------------------
    def place(self, cells: np.ndarray, cards: np.ndarray) -> None:
        """Put card ``cards[i]`` on cell ``cells[i]`` of every game ``i`` (cells must be legal)."""
        idx = np.arange(self.n)
        cards = np.asarray(cards)
        real = cards < NUM_STANDARD
        rank = np.where(real, cards % 13, 0)
        suit = np.where(real, cards // 13, 0)
        for lines in (ROW[cells], COL[cells]):
            self.t[idx, lines] += 1
            self.k[idx, lines] += ~real
            got = self.counts[idx, lines, rank]
            self.pairs[idx, lines] += np.where(real, got, 0)
            self.counts[idx, lines, rank] += real
            self.ranks[idx, lines] |= np.where(real, 1 << rank, 0)
            self.suits[idx, lines] |= np.where(real, 1 << suit, 0)
        self.seen_rank[idx, rank] += real
        self.seen_suit[idx, suit] += real
        self.occ[idx, cells] = True
        self.front |= _ADJ[cells]
        self.placed += 1

    def play_out(
        self,
        cards: np.ndarray,
        table: np.ndarray,
        *,
        rng: np.random.Generator | None = None,
        epsilon: float = 0.0,
        record: list | None = None,
    ) -> None:
        """Play every game to the end drawing ``cards[:, j]`` at step ``j``, greedy on ``table``.

        With ``epsilon`` > 0 a random legal cell is played with that probability
        (``rng`` required).  ``record``, if given, receives the ``(N, 10)``
        keys of every line after each move (with the phase), for training; with
        a 4-d ``table`` the entries are ``(phase, keys, outs)``.
        """
        if epsilon > 0 and rng is None:
            raise ValueError(f"epsilon={epsilon!r} plays random cells: expected an rng (a numpy Generator) to draw "
                             f"them")
        phases = table.shape[2]
        j = 0
        while self.placed < 25:
            card = cards[:, j]
            ph = phase_of(self.placed + 1, phases)
            gains = self.cell_gains(card, table, ph)
            cells = gains.argmax(1)
            if epsilon > 0:
                explore = rng.random(self.n) < epsilon
                if explore.any():
                    noise = rng.random((int(explore.sum()), 25))
                    noise[~self.legal()[explore]] = -1.0
                    cells[explore] = noise.argmax(1)
            self.place(cells, card)
            if record is not None:
                record.append((ph, self.keys(), self.outs(straights=table.shape[-1] == NUM_OUTS_STRAIGHT))
                              if table.ndim == 4 else (ph, self.keys()))
            j += 1

    def line_points(self, points_table: np.ndarray) -> np.ndarray:
        """``(N, 10)`` points of every line under a ``line_points_table`` (incomplete lines: rank groups)."""
        return points_table[self.keys()]
