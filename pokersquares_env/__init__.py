"""pokersquares_env: reinforcement-learning environments for Poker Squares and sibling solitaires.

Importing the package registers the Gymnasium environments:

* ``PokerSquares-v0`` -- the classic game and its placement variants (:class:`pokersquares_env.env.PokerSquaresEnv`;
  ``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")`` gives the native vector env).
* ``PokerShuffle-v0`` -- all 25 cards known: arrange or swap (:class:`pokersquares_env.shuffle.env.PokerShuffleEnv`).
* ``Soliter-v0`` -- the Baker's Game family solitaire (:class:`pokersquares_env.soliter.env.SoliterEnv`).

The multiplayer game is a PettingZoo env: :func:`pokersquares_env.multiplayer.parallel_env`.
"""

from gymnasium.envs.registration import register, registry

from pokersquares_env.cards import format_card, format_cards, parse_card, parse_cards
from pokersquares_env.core import GameState, IllegalActionError, PokerSquaresGame, Rules
from pokersquares_env.scoring import (
    POINT_SYSTEMS,
    HandCategory,
    PointSystem,
    hand_category,
    point_system,
    score_grid,
    score_grids,
    score_hand,
)

__version__ = "0.1.0"

__all__ = [
    "POINT_SYSTEMS",
    "GameState",
    "HandCategory",
    "IllegalActionError",
    "PointSystem",
    "PokerSquaresGame",
    "Rules",
    "format_card",
    "format_cards",
    "hand_category",
    "parse_card",
    "parse_cards",
    "point_system",
    "score_grid",
    "score_grids",
    "score_hand",
]


def _register(env_id: str, **kwargs) -> None:
    if env_id not in registry:
        register(id=env_id, **kwargs)


_register(
    "PokerSquares-v0",
    entry_point="pokersquares_env.env:PokerSquaresEnv",
    vector_entry_point="pokersquares_env.vector:PokerSquaresVectorEnv",
)
_register("Soliter-v0", entry_point="pokersquares_env.soliter.env:SoliterEnv")
_register("PokerShuffle-v0", entry_point="pokersquares_env.shuffle.env:PokerShuffleEnv")
