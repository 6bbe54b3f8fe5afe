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

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from pokersquares_env.core import GameState, PokerSquaresGame

__all__ = ["Agent", "legal_cells", "visible_view"]


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
        self.rng = np.random.default_rng(seed)

    def seed(self, seed: int | None) -> None:
        """Re-seed the agent's random generator."""
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        """Forget anything kept from a previous game (called before every game)."""

    @abstractmethod
    def act(self, obs: np.ndarray | None, info: dict[str, Any], game: PokerSquaresGame, state: GameState) -> int:
        """The cell for the drawn card ``state.card``: one of the legal cells."""

    def action_values(
        self, obs: np.ndarray | None, info: dict[str, Any], game: PokerSquaresGame, state: GameState
    ) -> np.ndarray | None:
        """Estimated value of each of the 25 cells (NaN for illegal cells), or ``None`` if the agent has none."""
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def legal_cells(info: dict[str, Any] | None, game: PokerSquaresGame, state: GameState) -> list[int]:
    """The legal cells, from ``info["action_mask"]`` when given, else from the game."""
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
