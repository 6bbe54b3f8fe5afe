"""Many Poker Squares games at once in numpy: the engine behind table training, rollouts and expectimax.

A :class:`Batch` holds ``N`` boards that all have the same number of placed
cards (they advance in lock step).  Lines are kept as the core's running
statistics (cards ``t``, jokers ``k``, equal-rank pairs, rank and suit bit
sets, rank counts), so scoring a line or the line it would become with one
more card is a table look-up, vectorised over games, lines and cards.

A *value table* ``V`` has shape ``(NUM_KEYS, 2, phases)``: the value of a line
with ``LINE_MASK`` key ``key``, of kind ``0`` (row) or ``1`` (column), when
``placed`` cards are on the board (``phase = placed * phases // 26``).  A
policy plays the legal cell that most increases the summed value of the
lines the card joins.
"""

from __future__ import annotations

import numpy as np

from agents.lines import NUM_KEYS
from pokersquares_env.cards import NUM_STANDARD
from pokersquares_env.core import ADJACENT, GameState
from pokersquares_env.scoring import FLUSHABLE, WINDOW

__all__ = ["Batch", "ROW", "COL", "IS_COL", "phase_of"]

ROW = np.array([c // 5 for c in range(25)])
COL = np.array([5 + c % 5 for c in range(25)])
IS_COL = np.array([0] * 5 + [1] * 5)
_ADJ = np.array([[(ADJACENT[c] >> j) & 1 for j in range(25)] for c in range(25)], dtype=bool)
_LINE_CELL = np.zeros((10, 25), dtype=bool)
for _c in range(25):
    _LINE_CELL[ROW[_c], _c] = _LINE_CELL[COL[_c], _c] = True


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
        return b

    def repeat(self, r: int) -> "Batch":
        """A batch holding each game ``r`` times in a row (game ``i`` becomes ``i*r .. i*r+r-1``)."""
        b = Batch(self.n * r, placement=self.placement, first_cell=self.first_cell)
        b.placed = self.placed
        for name in ("t", "k", "pairs", "ranks", "suits", "counts", "occ", "front"):
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

    def keys_with(self, cards: np.ndarray) -> np.ndarray:
        """``(N, 10)`` keys each line would have with game ``i``'s card ``cards[i]`` added (full lines clipped)."""
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
        return _keys(t, k, pairs, ranks, suits)

    def cell_gains(self, cards: np.ndarray, table: np.ndarray, phase: int) -> np.ndarray:
        """``(N, 25)``: how much placing the card on each cell raises the board value (``-inf`` if illegal)."""
        vt = table[:, :, phase]
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
        keys of every line after each move (with the phase), for training.
        """
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
                record.append((ph, self.keys()))
            j += 1

    def line_points(self, points_table: np.ndarray) -> np.ndarray:
        """``(N, 10)`` points of every line under a ``line_points_table`` (incomplete lines: rank groups)."""
        return points_table[self.keys()]
