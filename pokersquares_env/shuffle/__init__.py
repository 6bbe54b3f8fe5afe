"""Poker Shuffle: Poker Squares with all 25 cards known, and the clairvoyant solver.

* :class:`PokerShuffleEnv` (``PokerShuffle-v0``): modes ``"arrange"`` and ``"swap"``.
* :func:`solve`: the best arrangement found of 25 known cards (the upper
  reference for online agents); :func:`anneal`: the simulated-annealing baseline.
"""

from pokersquares_env.shuffle.env import PokerShuffleEnv, arrange_action, swap_action, swap_cells
from pokersquares_env.shuffle.solver import SWAP_PAIRS, anneal, solve

__all__ = ["SWAP_PAIRS", "PokerShuffleEnv", "anneal", "arrange_action", "solve", "swap_action", "swap_cells"]
