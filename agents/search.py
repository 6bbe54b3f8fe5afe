"""``search``: two-ply expectimax whose best cells are re-rated by Monte Carlo rollouts over the true unseen cards."""

from __future__ import annotations

import numbers
import os
from typing import Any

import numpy as np

from agents.base import RatingAgent, warn_if_other_points
from agents.batch import Batch
from agents.expectimax import (
    DEFAULT_FEATURES,
    DEFAULT_GAMES,
    DEFAULT_PHASES,
    check_game_rules,
    expectimax_values,
    tables_and_kernels,
)
from agents.tables import check_tables_path, load_tables_file
from pokersquares_env.core import GameState, PokerSquaresGame, Rules
from pokersquares_env.scoring import point_system

__all__ = ["RolloutSearchAgent"]


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name}={value!r}: expected a positive integer")
    return int(value)


class RolloutSearchAgent(RatingAgent):
    """``expectimax:ply=2`` with its ``candidates`` best cells re-rated by rollouts (two estimates added).

    Each move: the two-ply expectimax value ``E(c)`` of every legal cell is
    computed on the learned line values (:func:`agents.expectimax.expectimax_values`);
    the ``candidates`` cells of highest ``E`` are then each played out
    ``rollouts`` times from the current board, over random orders of the true
    unseen cards (``game.unseen``; the same orders for every candidate, i.e.
    common random numbers), by the one-ply greedy policy on the same tables,
    all at once in numpy.  With ``M(c)`` the mean final score of cell ``c``'s
    rollouts and ``b`` expectimax's favourite cell, the agent plays the
    candidate maximising ``E(c) - E(b) + weight * (M(c) - M(b))``: the two
    advantage estimates (expectimax's table bias and the rollouts' weaker
    policy and sampling noise) are added rather than one replacing the other.
    ``weight=0`` or ``candidates=1`` plays exactly like ``expectimax:ply=2``.
    Forced moves and the last card use no rollouts.

    Options: ``candidates`` (4), ``rollouts`` per candidate and move (512),
    ``weight`` (1.0), ``ply`` (2; 3: ``E`` is three-ply expectimax for the candidates, two-ply's best cells,
    compiled backend only), ``rollout`` (``ply1``; ``ply2``: rollout moves by two-ply expectimax over the cards
    not yet drawn in the rollout, compiled only, about 30 times dearer a rollout), ``endgame`` (0, off; ``n`` from 1
    to 5: once at most ``n`` cells are empty, play by exact expectimax to the end over the true unseen cards, on
    the true points rather than the tables; compiled only; about 20 ms for the move with 4 empty cells, 3 s with 5),
    ``depth`` (0, full rollouts; ``n`` > 0: each rollout plays ``n`` moves, then the board's summed line values --
    the points of full lines, the table values of the others -- stand for its final score; compiled only; ``depth=8``
    plays as strongly as full rollouts at half the time), ``reply`` (``ply1``; ``ply2``: the first move of every
    rollout, the reply to the candidate, is two-ply expectimax on ``tables`` over the unseen cards less the one drawn,
    the later moves one-ply; compiled only; one two-ply evaluation per candidate and possible next card),
    ``rollout_tables`` (a saved ``.npz`` with the same features and phases, e.g. tuned tables from
    ``pokersquares experiment tune-tables``: the rollouts' one-ply policy plays on them, ``E`` stays on ``tables``),
    and the table options of ``expectimax``: ``tables``
    (a saved ``.npz``), ``tuned`` (the shipped tuned tables, American or English, plain rules; both ``E`` and the
    rollouts play on them), ``games``, ``phases``, ``features`` (``outs``) and
    ``cache``.  Only the board, the drawn card and the set of unseen cards
    are read; random orders come from ``self.rng``.  ``backend`` (``auto``, ``numpy`` or ``numba``): with numba
    both the expectimax and the rollouts run as compiled loops (one thread), the same moves several times faster.
    """

    name = "search"
    uses_obs = False

    def __init__(
        self,
        *,
        system: Any = None,
        rules: Rules | dict[str, Any] | str | None = None,
        seed: int | None = None,
        candidates: int = 4,
        rollouts: int = 512,
        weight: float = 1.0,
        tables: str | None = None,
        games: int = DEFAULT_GAMES,
        phases: int = DEFAULT_PHASES,
        features: str = DEFAULT_FEATURES,
        cache: Any = True,
        backend: str = "auto",
        ply: int = 2,
        rollout: str = "ply1",
        endgame: int = 0,
        rollout_tables: str | None = None,
        tuned: bool = False,
        depth: int = 0,
        reply: str = "ply1",
    ) -> None:
        super().__init__(seed)
        if isinstance(ply, bool) or not isinstance(ply, (int, np.integer)) or ply not in (2, 3):
            raise ValueError(f"ply={ply!r}: expected 2 or 3")
        ply = int(ply)
        if rollout not in ("ply1", "ply2"):
            raise ValueError(f"rollout={rollout!r}: expected 'ply1' (one-ply greedy rollouts) or 'ply2'")
        check_tables_path(rollout_tables, "rollout_tables")  # before the main tables are loaded or trained
        if rollout_tables is not None:
            if rollout == "ply2":
                raise ValueError("rollout_tables needs rollout='ply1' (two-ply rollouts play on the main tables)")
            if not os.path.exists(os.path.expanduser(os.fspath(rollout_tables))):
                raise FileNotFoundError(f"rollout_tables={rollout_tables!r}: no such file; expected the path of a "
                                        ".npz written by ValueTables.save (e.g. the tables.npz of pokersquares "
                                        "experiment tune-tables)")
        if isinstance(endgame, bool) or not isinstance(endgame, (int, np.integer)) or not 0 <= endgame <= 5:
            raise ValueError(f"endgame={endgame!r}: expected an integer from 0 (off) to 5 empty cells")
        if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 0:
            raise ValueError(f"depth={depth!r}: expected an integer >= 0 (0: full rollouts)")
        if depth and rollout == "ply2":
            raise ValueError("depth needs rollout='ply1' (two-ply rollouts always play to the end)")
        if reply not in ("ply1", "ply2"):
            raise ValueError(f"reply={reply!r}: expected 'ply1' (the rollouts' first move one-ply, like the rest) or "
                             "'ply2' (two-ply expectimax)")
        if reply == "ply2" and rollout == "ply2":
            raise ValueError("reply='ply2' needs rollout='ply1' (two-ply rollouts already reply by two-ply)")
        self.reply = reply
        self.depth = int(depth)
        self.ply = ply
        self.rollout = rollout
        self.endgame = int(endgame)
        self.candidates = _positive_int("candidates", candidates)
        self.rollouts = _positive_int("rollouts", rollouts)
        if (isinstance(weight, (bool, np.bool_)) or not isinstance(weight, numbers.Real) or not np.isfinite(weight)
                or weight < 0):
            raise ValueError(f"weight={weight!r}: expected a finite number >= 0")
        self.weight = float(weight)
        self.system = point_system("american" if system is None else system)
        self.rules = Rules.parse(rules) if rules is not None else Rules()
        needs = ", ".join(name for name, on in (("ply=3", ply == 3), ("rollout='ply2'", rollout == "ply2"),
                                                (f"endgame={self.endgame}", self.endgame > 0),
                                                (f"depth={self.depth}", self.depth > 0),
                                                ("reply='ply2'", reply == "ply2")) if on)
        vt, self._compiled = tables_and_kernels(self.system, self.rules, tables=tables, games=games, phases=phases,
                                                features=features, cache=cache, backend=backend, needs_compiled=needs,
                                                tuned=tuned)
        self._table = vt.values
        self._points = self.system.line_points_table
        self.backend = "numpy" if self._compiled is None else "numba"
        self._roll_table, self._roll_flat = self._table, None
        if rollout_tables is not None:
            rt = load_tables_file(self.system, self.rules, rollout_tables, "rollout_tables")
            if rt.values.shape != vt.values.shape:  # the kernels read both by the main tables' phases and buckets
                main = f"tables={tables!r}" if tables is not None else (
                    "the tuned tables" if tuned else "the main tables (trained or cached)")
                raise ValueError(f"rollout_tables={rollout_tables!r} hold features={rt.features!r} with {rt.phases} "
                                 f"phases (values of shape {rt.values.shape}), but {main} hold "
                                 f"features={vt.features!r} with {vt.phases} phases ({vt.values.shape}): expected "
                                 f"the same features and phases")
            self._roll_table = rt.values
        if self._compiled is not None:
            from agents._fast import tables_flat

            self._roll_flat = tables_flat(self._roll_table)[0] if rollout_tables is not None else self._compiled.flat

    def rate(self, game: PokerSquaresGame, state: GameState) -> tuple[np.ndarray, np.ndarray]:
        """Expectimax values, plus ``weight`` times the rollout advantage over expectimax's favourite for the
        candidates (NaN where illegal, by ``game.rules``); and the candidate cells, whose best combined score is
        played."""
        rules = game.rules
        check_game_rules(self.rules, rules)
        warn_if_other_points(self, game)
        if 25 - len(state.placements) <= self.endgame:  # exact expectimax to the end of the game
            from agents._fast import exact_values

            values = exact_values(self._points, state, game.unseen(state), rules.placement == "adjacent",
                                  rules.first_cell)
            legal = np.flatnonzero(~np.isnan(values))
            return values, legal[np.argsort(-values[legal], kind="stable")][:1]
        values = self._expectimax(game, state)
        legal = np.flatnonzero(~np.isnan(values))
        order = legal[np.argsort(-values[legal], kind="stable")]
        steps = 24 - len(state.placements)  # cards still to come after this one
        if len(legal) == 1 or steps <= 0 or self.weight == 0 or self.candidates == 1:
            return values, order[:1]
        cells = order[: self.candidates]
        unseen = np.array(game.unseen(state), dtype=np.int64)  # ascending, as the two-ply reply expects
        orders = np.argsort(self.rng.random((self.rollouts, unseen.size)), axis=1)
        means = self._rollout_means(game, state, cells, unseen, orders, steps)
        values[cells] = values[cells] + self.weight * (means - means[0])
        return values, cells

    def _expectimax(self, game: PokerSquaresGame, state: GameState) -> np.ndarray:
        """``E``: each cell's expectimax value on the tables (NaN where illegal; with ``ply=3`` only the candidates
        are finite)."""
        if self._compiled is not None:
            return self._compiled(game, state, self.ply, self.candidates)
        return expectimax_values(self._table, game, state, 2)

    def _rollout_means(self, game: PokerSquaresGame, state: GameState, cells: np.ndarray, unseen: np.ndarray,
                       orders: np.ndarray, steps: int) -> np.ndarray:
        """Mean rollout score of each candidate cell; ``orders``: one permutation of ``unseen``'s indices per rollout
        (the same for every candidate), of which the first ``steps`` cards are still to come."""
        rules = game.rules
        if self.rollout == "ply2":
            from agents._fast import rollout2_means

            c = self._compiled
            return rollout2_means(c.flat, c.phases, c.nout, self._points, state, cells, state.card, unseen[orders],
                                  rules.placement == "adjacent", rules.first_cell)
        orders = orders[:, :steps]
        if self._compiled is not None:
            from agents._fast import rollout_means

            c = self._compiled
            return rollout_means(self._roll_flat, c.phases, c.nout, self._points, state, cells, state.card,
                                 unseen[orders], rules.placement == "adjacent", rules.first_cell, self.depth,
                                 reply=(unseen, c.flat) if self.reply == "ply2" else None)
        bx = Batch.from_state(state, 1, placement=rules.placement, first_cell=rules.first_cell)
        bx = bx.repeat(len(cells))
        bx.place(cells, np.full(len(cells), state.card))
        by = bx.repeat(self.rollouts)
        by.play_out(np.tile(unseen[orders], (len(cells), 1)), self._roll_table)
        return self._points[by.keys()].sum(1).reshape(len(cells), self.rollouts).mean(1)

