"""``mc``: flat Monte Carlo over the true unseen cards with a fast, vectorised rollout policy."""

from __future__ import annotations

import copy
import math
import numbers
import time
from typing import Any

import numpy as np

from agents.base import RatingAgent, warn_if_other_points
from agents.batch import Batch
from agents.expectimax import check_game_rules
from agents.lines import heuristic_values
from pokersquares_env.core import GameState, PokerSquaresGame, Rules
from pokersquares_env.scoring import add_lines, point_system

__all__ = ["MonteCarloAgent"]

ROLLOUT_POLICIES = ("tables", "heuristic")
DEFAULT_ROLLOUTS = 64  # per cell and move, without a time budget
DEFAULT_ROUND = 8  # rollouts added at a time, with a time budget
_NO_CLAIMS = ("mc's rollouts run in numpy, which has no reader for claims tables (the compiled kernels of expectimax "
              "and search do); expected tables of features none, outs or straights")


class MonteCarloAgent(RatingAgent):
    """Flat Monte Carlo: for each legal cell, play the game out many times and keep the best average score.

    Every rollout draws a random order of the true unseen cards (the same
    orders for every candidate cell: common random numbers) and completes the
    board with a greedy rollout policy, all rollouts of a move at once in numpy.
    Only the ``candidates`` cells (default 5) that the rollout policy itself
    rates best are tried, so each gets more rollouts.
    Options: ``rollouts`` per cell and move (default 64), or ``seconds`` per
    move (rollouts are then added in rounds of ``round``, default 8, until the
    time is spent; ``rollouts`` with ``seconds``, or ``round`` without, is
    refused, naming both); ``rollout`` is the policy: ``"tables"`` (greedy on the learned
    line values of :mod:`agents.tables`, trained and cached on first use) or
    ``"heuristic"`` (greedy on hand-set line values, no training); ``tables``,
    ``games``, ``phases``, ``features`` (default ``none``, the faster
    rollout) and ``cache`` choose the tables as for ``expectimax``, with its
    checks (:func:`agents.tables.tables_for`: a file of other point values is
    refused, one of other jokers warned about, options given with ``tables``
    that disagree with the file refused); claims tables are refused (the
    rollouts run in numpy, which cannot read them); with
    ``rollout="heuristic"`` the table options are refused: there are no tables to choose.
    """

    name = "mc"
    uses_obs = False

    def __init__(
        self,
        *,
        system: Any = None,
        rules: Rules | None = None,
        seed: int | None = None,
        rollouts: int | None = None,
        seconds: float | None = None,
        rollout: str = "tables",
        round: int | None = None,
        candidates: int = 5,
        tables: str | None = None,
        games: int | None = None,
        phases: int | None = None,
        features: str = "none",
        cache: Any = True,
    ) -> None:
        super().__init__(seed)
        from agents.evaluation import check_positive_int
        from agents.tables import check_phases

        # None: not given (the default); rollouts counts rollouts without a time budget, round only with one
        given_rollouts, given_round = rollouts, round
        rollouts = DEFAULT_ROLLOUTS if rollouts is None else check_positive_int(rollouts, "rollouts")
        round = DEFAULT_ROUND if round is None else check_positive_int(round, "round")
        # training sizes; none: the default
        games = None if games is None else check_positive_int(games, "games")
        phases = None if phases is None else check_phases(phases)
        if seconds is not None and (isinstance(seconds, (bool, np.bool_)) or not isinstance(seconds, numbers.Real)
                                    or not math.isfinite(seconds) or seconds <= 0):
            raise ValueError(f"seconds={seconds!r}: expected a finite positive number of seconds per move (or none)")
        if seconds is not None and given_rollouts is not None:  # refused, not ignored
            raise ValueError(f"rollouts={given_rollouts!r} with seconds={seconds!r}: a move runs either a fixed number "
                             f"of rollouts per cell (rollouts) or rollouts for a time (seconds, added in rounds of "
                             f"round): expected one of them")
        if seconds is None and given_round is not None:
            raise ValueError(f"round={given_round!r} without seconds: round is the number of rollouts added at a time "
                             f"while a seconds budget lasts; expected seconds with it (or rollouts, for a fixed count, "
                             f"without round)")
        if not isinstance(rollout, str) or rollout not in ROLLOUT_POLICIES:
            raise ValueError(f"rollout={rollout!r}: expected one of {', '.join(ROLLOUT_POLICIES)}")
        from agents.tables import check_cache, check_tables_path

        tables, cache = check_tables_path(tables), check_cache(cache)
        if rollout == "heuristic":  # the table options only choose rollout='tables' tables: refused, not ignored
            given = [f"{key}={value!r}" for key, value, default in (
                ("tables", tables, None), ("games", games, None), ("phases", phases, None),
                ("features", features, "none"), ("cache", cache, True)) if value != default
                and not (key == "features" and value is None)]  # a spec reads features=none as None
            if given:
                raise ValueError(f"{', '.join(given)} with rollout='heuristic': tables, games, phases, features and "
                                 f"cache choose the learned tables of rollout='tables' (the heuristic rollout uses "
                                 f"none): drop them or use rollout=tables")
        self.system = point_system("american" if system is None else system)
        self.rules = Rules.parse(rules) if rules is not None else Rules()
        self._uses_tables = rollout != "heuristic"
        candidates = check_positive_int(candidates, "candidates")
        self.rollouts, self.seconds, self.round = rollouts, None if seconds is None else float(seconds), round
        self.candidates = candidates
        if rollout == "heuristic":
            self._table = heuristic_values(self.system)[:, :, None]
        else:
            from agents.expectimax import DEFAULT_GAMES, DEFAULT_PHASES
            from agents.tables import tables_for

            if features == "claims":  # before any training: claims tables have no numpy path
                raise ValueError(f"features='claims' with mc: {_NO_CLAIMS}")
            # the checks of expectimax and search: the file's point system (an error) and jokers (a warning), and
            # options given with tables= that disagree with the file (an error, not ignored)
            vt = tables_for(self.system, self.rules, tables=tables, games=DEFAULT_GAMES if games is None else games,
                            phases=DEFAULT_PHASES if phases is None else phases, features=features, cache=cache,
                            defaults={"games": DEFAULT_GAMES, "phases": DEFAULT_PHASES, "features": "none",
                                      "cache": True})
            if vt.features == "claims":
                raise ValueError(f"tables={tables!r} hold features='claims' tables: {_NO_CLAIMS}")
            self._table = vt.values
        self._points = self.system.line_points_table

    def _rollout_totals(self, base: Batch, cells: np.ndarray, card: int, unseen: np.ndarray, r: int,
                        rng: np.random.Generator | None = None) -> np.ndarray:
        """``(len(cells), r)`` final scores of ``r`` random completions after putting ``card`` on each cell (random
        orders from ``rng``, default ``self.rng``; none drawn for the last card)."""
        steps = 24 - base.placed
        bx = base.repeat(len(cells))
        bx.place(cells, np.full(len(cells), card))
        if steps == 0:
            return np.repeat(add_lines(self._points[bx.keys()])[:, None], r, axis=1)
        orders = np.argsort((self.rng if rng is None else rng).random((r, unseen.size)), axis=1)[:, :steps]
        draws = np.tile(unseen[orders], (len(cells), 1))
        by = bx.repeat(r)
        by.play_out(draws, self._table)
        return add_lines(self._points[by.keys()]).reshape(len(cells), r)

    def rate(self, game: PokerSquaresGame, state: GameState) -> tuple[np.ndarray, np.ndarray]:
        """Mean rollout score of each cell rolled out; the rollout policy's estimate for the others, anchored on its
        favourite cell's rollouts (NaN where illegal); and the cells rolled out, whose best mean is played.  Every
        value is an expected final score, a forced move's too (its own rollouts; the exact score for the last card)."""
        from agents.batch import phase_of

        rules = game.rules
        if self._uses_tables:  # the learned tables value lines of the deck they were trained on
            check_game_rules(self.rules, rules)
        warn_if_other_points(self, game)
        base = Batch.from_state(state, 1, placement=rules.placement, first_cell=rules.first_cell)
        legal = np.flatnonzero(base.legal()[0])
        out = np.full(25, np.nan)
        card = state.card
        unseen = np.array(game.unseen(state), dtype=np.int64)
        if len(legal) == 1:  # a forced move: still valued as the others are, by its mean final score (exact for the
            # last card), over rollouts drawn from a copy of the generator: the games played stay those of before
            out[legal] = self._rollout_totals(base, legal, card, unseen, self.rollouts, copy.deepcopy(self.rng)).mean(1)
            return out, legal
        prior = base.cell_gains(np.array([card]), self._table, phase_of(base.placed + 1, self._table.shape[2]))[0]
        cells = legal
        if len(legal) > self.candidates:  # keep the rollout policy's best cells (more rollouts each)
            order = np.argsort(-prior[legal], kind="stable")
            cells = np.sort(legal[order[: self.candidates]])
        if self.seconds is None:
            means = self._rollout_totals(base, cells, card, unseen, self.rollouts).mean(1)
        else:
            deadline = time.perf_counter() + self.seconds
            total, n = np.zeros(len(cells)), 0
            while n == 0 or time.perf_counter() < deadline:
                total += self._rollout_totals(base, cells, card, unseen, self.round).sum(1)
                n += self.round
            means = total / n
        # Cells not rolled out: the rollout policy's estimate, anchored on its favourite cell's rollouts.
        top = cells[int(np.argmax(prior[cells]))]
        out[legal] = means[list(cells).index(top)] + prior[legal] - prior[top]
        out[cells] = means
        return out, cells

