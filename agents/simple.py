"""Baseline agents: ``random``, ``greedy`` and ``rules``."""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import Agent, legal_cells, warn_if_other_points
from agents.lines import COL_OF, ROW_OF, key_after, line_key_now
from pokersquares_env.cards import NUM_STANDARD
from pokersquares_env.core import GameState, PokerSquaresGame, Rules
from pokersquares_env.scoring import HandCategory, point_system

__all__ = ["GreedyAgent", "RandomAgent", "RuleAgent"]


class RandomAgent(Agent):
    """Uniform over the legal cells (seeded)."""

    name = "random"
    uses_obs = False

    def __init__(self, *, system: Any = None, rules: Rules | None = None, seed: int | None = None) -> None:
        super().__init__(seed)

    def act(self, obs, info, game: PokerSquaresGame, state: GameState) -> int:
        """A uniformly random legal cell."""
        cells = legal_cells(info, game, state)
        return int(cells[int(self.rng.integers(len(cells)))])


class _ScoredAgent(Agent):
    """An agent that plays the legal cell of highest value (ties to the lowest cell)."""

    uses_obs = False

    def _values(self, game: PokerSquaresGame, state: GameState, cells: list[int]) -> list[float]:
        raise NotImplementedError

    def _choose(self, game: PokerSquaresGame, state: GameState, cells: list[int], values: list[float]) -> int:
        """The index in ``cells`` of the cell to play: the first of highest value."""
        return int(np.argmax(values))

    def act(self, obs, info, game: PokerSquaresGame, state: GameState) -> int:
        """The legal cell of highest value."""
        cells = legal_cells(info, game, state)
        warn_if_other_points(self, game)
        values = self._values(game, state, cells)
        return int(cells[self._choose(game, state, cells, values)])

    def action_values(self, obs, info, game: PokerSquaresGame, state: GameState) -> np.ndarray:
        """Per-cell values (NaN for illegal cells)."""
        out = np.full(25, np.nan)
        cells = legal_cells(info, game, state)
        warn_if_other_points(self, game)
        out[cells] = self._values(game, state, cells)
        return out


class GreedyAgent(_ScoredAgent):
    """Maximises the immediate points of the two lines the card joins.

    Complete lines count their points under the point system; incomplete
    lines count the rank groups they hold (pair, two pair, trips, quads),
    valued under the same system.  Ties go to the cell whose column keeps a
    flush open, then to the lowest cell.
    """

    name = "greedy"

    def __init__(self, *, system: Any = None, rules: Rules | None = None, seed: int | None = None) -> None:
        super().__init__(seed)
        self.system = point_system("american" if system is None else system)
        table = self.system.line_points_table
        self._table = table.tolist()
        # gains within this of the best are ties: float rounding only (a few units in the last place of the largest
        # point value), so that scaling every point value by a positive constant changes no move, and a wide table
        # (royal flush 1e10) still tells a pair's points from nothing (integer point values tie exactly)
        self._tie = 64 * np.finfo(np.float64).eps * float(np.abs(table).max())

    def _values(self, game, state, cells):
        code = state.card
        table = self._table
        gains = [0.0] * 10
        for line in range(10):
            if state.line_t[line] < 5:
                gains[line] = table[key_after(state, line, code)] - table[line_key_now(state, line)]
        return [gains[ROW_OF[cell]] + gains[COL_OF[cell]] for cell in cells]

    def _keeps_flush_open(self, state, cell) -> bool:
        code = state.card
        return code >= NUM_STANDARD or state.line_suits[COL_OF[cell]] in (0, 1 << code // 13)

    def _choose(self, game, state, cells, values):
        """The first cell of highest gain whose column keeps a flush open, else the first of highest gain: a true
        tie-break (a bonus added to the gain would outweigh real gains under small point values)."""
        best = max(values) - self._tie
        ties = [i for i, v in enumerate(values) if v >= best]
        return next((i for i in ties if self._keeps_flush_open(state, cells[i])), ties[0])

    def action_values(self, obs, info, game: PokerSquaresGame, state: GameState) -> np.ndarray:
        """Per-cell gains (NaN for illegal cells); a cell whose column keeps a flush open gets a further
        ``64 * eps * max |points|`` (float rounding), far below any real difference of gains, so that cells rank as greedy prefers them."""
        out = super().action_values(obs, info, game, state)
        for cell in np.flatnonzero(~np.isnan(out)):
            if self._keeps_flush_open(state, int(cell)):
                out[cell] += self._tie
        return out


class RuleAgent(_ScoredAgent):
    """The classic strategy: flushes in columns, rank groups in rows.

    Each cell is scored by (a) the rank-group points the card adds to its row,
    or a penalty for a row of distinct ranks growing without a group, and (b)
    whether its column keeps a one-suit flush draw (a bonus growing with the
    draw) or breaks one (a penalty), with a fifth "discard" column preferred
    for cards that fit nowhere.  The weights are the point system's own
    values, so the player leans to flushes under American scoring and to rank
    groups under English.
    """

    name = "rules"

    def __init__(self, *, system: Any = None, rules: Rules | None = None, seed: int | None = None) -> None:
        super().__init__(seed)
        self.system = point_system("american" if system is None else system)
        pts = self.system.points
        self._table = self.system.line_points_table.tolist()
        self._flush = max(0.0, float(pts[HandCategory.FLUSH]))
        pair_like = [pts[HandCategory.ONE_PAIR], pts[HandCategory.TWO_PAIR], pts[HandCategory.THREE_OF_A_KIND]]
        # a small positive weight where rank groups score nothing: relative to the table's scale, so that a table
        # multiplied by any positive factor plays the same moves (a fixed 1e-6 outweighed tables scaled below it)
        scale = max((abs(float(p)) for p in pts), default=0.0) or 1.0
        self._group = max(1e-6 * scale, float(np.mean(pair_like)))

    def _values(self, game, state, cells):
        code = state.card
        table = self._table
        joker = code >= NUM_STANDARD
        suit = -1 if joker else code // 13
        rank = -1 if joker else code % 13
        out = []
        for cell in cells:
            row, col = ROW_OF[cell], COL_OF[cell]
            # (a) rows: rank groups
            gain = table[key_after(state, row, code)] - table[line_key_now(state, row)]
            v = gain
            if not joker and not gain:
                matched = state.rank_counts[row * 13 + rank] > 0
                distinct = bin(state.line_ranks[row]).count("1")
                if not matched:
                    v -= 0.5 * self._group * distinct / 4
            # (b) columns: flushes (column e is the discard column)
            suits, n = state.line_suits[col], state.line_t[col]
            if col == 9:
                v += 0.1 * self._group if suits and (joker or suits != 1 << suit) else 0.0
            elif joker or suits == 0 or suits == 1 << suit:
                owned = 0 if joker else sum(1 for c in range(5, 9) if c != col and state.line_suits[c] == 1 << suit)
                v += self._flush * (n + 1) / 5 * (0.3 if suits == 0 and owned else 1.0)
            else:
                v -= self._flush * (0.6 if bin(suits).count("1") == 1 else 0.1) * n / 5
            # a completed column pays its points at once
            if n == 4:
                v += table[key_after(state, col, code)]
            out.append(v)
        return out
