"""Poker Shuffle: Poker Squares with all 25 cards known, and the clairvoyant solver."""

from pokersquares_env.shuffle.solver import anneal, solve

__all__ = ["anneal", "solve"]
