"""Soliter ("Солитер", Baker's Game) and its variants: rules, ``Soliter-v0`` env and solver.

* :mod:`.rules` -- :class:`Variant` (rule options as data), :class:`SoliterState`,
  :class:`SoliterGame` (deal, legal moves, apply, redeal; no Gymnasium).
* :mod:`.env` -- :class:`SoliterEnv`, registered as ``Soliter-v0``.
* :mod:`.solver` -- :func:`solve`, a best-first search returning a winning plan.
* :mod:`.cli` -- ``pokersquares soliter {solve,bench,play,show}``.
"""

from pokersquares_env.soliter.env import SoliterEnv
from pokersquares_env.soliter.rules import (
    VARIANTS,
    IllegalMoveError,
    SoliterGame,
    SoliterState,
    Variant,
    card_text,
    get_variant,
)
from pokersquares_env.soliter.solver import SolveResult, solve, solve_result

__all__ = [
    "VARIANTS",
    "IllegalMoveError",
    "SoliterEnv",
    "SoliterGame",
    "SoliterState",
    "SolveResult",
    "Variant",
    "card_text",
    "get_variant",
    "solve",
    "solve_result",
]
