"""The one policy interface every agent implements.

An agent acts from what the Gymnasium env hands out (``obs`` and ``info``,
whose ``"action_mask"`` marks the legal cells) and may also read the
structured game: ``game`` is the :class:`~pokersquares_env.core.PokerSquaresGame`
(rules and point system) and ``state`` the :class:`~pokersquares_env.core.GameState`.

Fair play: ``state.deck`` holds the whole draw order, but the future is
hidden in the real game.  Agents read only the board, the drawn card
(``state.card``) and the set of unseen cards (``game.unseen(state)``), never
``state.deck`` beyond the current card.  :func:`visible_view` gives a state
whose future deck order is scrambled, which the tests use to check this.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from pokersquares_env.core import GameState, PokerSquaresGame

__all__ = ["Agent", "RatingAgent", "check_not_over", "legal_cells", "visible_view", "warn_if_other_points"]


def _generator(seed: int | None) -> np.random.Generator:
    """A generator seeded with ``seed``, checked as the harness checks seeds (``True``, ``1.5``, ``"3"`` or ``-1``
    are refused by name, not taken as 1 or left to NumPy's wording)."""
    if seed is not None:
        from agents.evaluation import check_seed

        seed = check_seed(seed)
    return np.random.default_rng(seed)


class Agent(ABC):
    """A Poker Squares player: ``act`` returns the cell (0..24) for the drawn card.

    Subclasses set ``name`` and implement :meth:`act`.  Randomised agents draw
    only from ``self.rng``, which :meth:`seed` resets (the evaluation harness
    seeds every deal, so results do not depend on how deals are split over
    processes).  Search agents may override :meth:`action_values` to expose
    their per-cell estimates (``pokersquares play --hint`` shows them).
    """

    name: str = "agent"
    #: Whether ``act`` reads ``obs``; search agents set False and the harness then passes ``obs=None``.
    uses_obs: bool = True

    def __init__(self, seed: int | None = None) -> None:
        self.rng = _generator(seed)

    def seed(self, seed: int | None) -> None:
        """Re-seed the agent's random generator (``seed``: None or an integer >= 0, else a ``ValueError``)."""
        self.rng = _generator(seed)

    def reset(self) -> None:
        """Forget anything kept from a previous game (called before every game)."""

    @abstractmethod
    def act(self, obs: np.ndarray | None, info: dict[str, Any], game: PokerSquaresGame, state: GameState) -> int:
        """The cell for the drawn card ``state.card``: one of the legal cells."""

    def action_values(
        self, obs: np.ndarray | None, info: dict[str, Any], game: PokerSquaresGame, state: GameState
    ) -> np.ndarray | None:
        """Estimated value of each of the 25 cells (NaN for illegal cells), or ``None`` if the agent has none."""
        if state is not None:  # agents that act from obs and info alone may be called without a state
            check_not_over(state)
        return None

    def act_with_values(
        self, obs: np.ndarray | None, info: dict[str, Any], game: PokerSquaresGame, state: GameState
    ) -> tuple[int, np.ndarray | None]:
        """The cell :meth:`act` plays and the :meth:`action_values` behind it (``pokersquares play --hint`` shows
        both).  This default calls the two with the same random state; agents that rate cells by sampling
        (:class:`RatingAgent`) return both from one evaluation."""
        rng = copy.deepcopy(self.rng)
        cell = self.act(obs, info, game, None if state is None else state.copy())
        after, self.rng = self.rng, rng
        values = self.action_values(obs, info, game, None if state is None else state.copy())
        self.rng = after
        return cell, values

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class RatingAgent(Agent):
    """An agent that rates some cells in one evaluation (:meth:`rate`) and plays the best rated one.

    :meth:`act`, :meth:`action_values` and :meth:`act_with_values` all come from :meth:`rate`, so the values shown
    beside a choice are the ones it was made from (``mc`` and ``search`` sample rollouts, or run for a time budget).
    """

    @abstractmethod
    def rate(self, game: PokerSquaresGame, state: GameState) -> tuple[np.ndarray, np.ndarray]:
        """Per-cell values (NaN where illegal) and the cells rated in full (the best of these is played)."""

    def act_with_values(self, obs, info, game: PokerSquaresGame, state: GameState) -> tuple[int, np.ndarray]:
        """The best rated cell and the values of this one evaluation."""
        check_not_over(state)
        values, cells = self.rate(game, state)
        return int(cells[int(np.argmax(values[cells]))]), values

    def action_values(self, obs, info, game: PokerSquaresGame, state: GameState) -> np.ndarray:
        """Per-cell values of one evaluation (see :meth:`rate`)."""
        check_not_over(state)
        return self.rate(game, state)[0]

    def act(self, obs, info, game: PokerSquaresGame, state: GameState) -> int:
        """The best rated cell."""
        return self.act_with_values(obs, info, game, state)[0]


def warn_if_other_points(agent: Agent, game: PokerSquaresGame | None) -> None:
    """A ``RuntimeWarning`` (once an agent) when ``game`` is scored by other point values than the agent was built
    for (``agent.system``): a table-driven agent values lines by the points it was built for, so it plays the other
    game legally but for its own points.  Five of a kind counts only in a game with jokers.  Cheap on every move: a
    point system already checked (the same object) is not compared again."""
    import warnings

    from pokersquares_env.scoring import HandCategory
    from pokersquares_env.text import fmt_points

    built = getattr(agent, "system", None)
    if game is None or built is None or game.system is built or game.system is agent.__dict__.get("_points_seen"):
        return
    agent._points_seen = game.system  # type: ignore[attr-defined]
    if agent.__dict__.get("_points_warned"):
        return
    here = game.system
    other = [f"{c.name.lower().replace('_', ' ')} {fmt_points(here.points[c])} (built for {fmt_points(built.points[c])})"
             for c in HandCategory.possible(game.rules.jokers) if built.points[c] != here.points[c]]
    if other:
        agent._points_warned = True  # type: ignore[attr-defined]
        warnings.warn(f"{agent.name} was built for point system {built.name!r} but plays a game scored by "
                      f"{here.name!r} ({', '.join(other[:3])}{', ...' if len(other) > 3 else ''}): it plays for the "
                      f"points it was built for; build it with the game's point system to play this game's "
                      f"(make_agent(spec, system=game.system))", RuntimeWarning, stacklevel=_caller_level())


def _caller_level() -> int:
    """The ``stacklevel`` that reports a warning raised in :func:`warn_if_other_points` or :func:`agents.learned.warn_if_other_game` at the first caller outside this
    library (``agents`` and ``pokersquares_env``), e.g. the user's ``make_agent("ppo:...")`` line, rather than at the
    registry's; when every caller is the library's (the command line), at the outermost library frame."""
    import os
    import sys
    from pathlib import Path

    here = Path(__file__).resolve().parent
    roots = (str(here) + os.sep, str(here.parent / "pokersquares_env") + os.sep)
    frame, level = sys._getframe(2), 2  # warn_if_other_game's caller is level 2 from warnings.warn's point of view
    outermost = level
    while frame is not None:
        name = str(Path(frame.f_code.co_filename).resolve())
        if not name.startswith(roots):
            return level
        outermost = level
        frame, level = frame.f_back, level + 1
    return outermost


def check_not_over(state: GameState) -> None:
    """Raise ``ValueError`` if ``state`` has no drawn card to place: its game is over (every agent's ``act`` and
    ``action_values`` check this first, rather than failing on an empty set of legal cells)."""
    if state.terminal:
        raise ValueError(f"the game is over ({len(state.placements)} cards placed): there is no card to place; "
                         f"expected the state of a game in progress (reset the env or deal a new game)")


def legal_cells(info: dict[str, Any] | None, game: PokerSquaresGame, state: GameState) -> list[int]:
    """The legal cells, from ``info["action_mask"]`` when given, else from the game (``ValueError`` once the game is
    over: :func:`check_not_over`)."""
    check_not_over(state)
    if info is not None and "action_mask" in info:
        return np.flatnonzero(np.asarray(info["action_mask"])).tolist()
    return game.legal_cells(state)


def visible_view(state: GameState, rng: np.random.Generator) -> GameState:
    """A copy of ``state`` with the unseen part of the deck shuffled (what an honest agent sees is unchanged)."""
    out = state.copy()
    n = min(len(state.placements) + 1, len(state.deck))
    future = list(state.deck[n:])
    rng.shuffle(future)
    out.deck = tuple(state.deck[:n]) + tuple(future)
    return out
