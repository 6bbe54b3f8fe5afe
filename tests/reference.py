"""The plain definition of poker hands (sort and compare), used to test the table-driven scoring."""

from __future__ import annotations

import itertools
from collections import Counter

from pokersquares_env.scoring import HandCategory

STRAIGHTS = [{12, 0, 1, 2, 3}] + [set(range(low, low + 5)) for low in range(9)]


def concrete_category(cards: list[int]) -> HandCategory:
    """Category of a hand of real cards (0-5 cards; duplicates allowed, as jokers may copy a card)."""
    ranks = [c % 13 for c in cards]
    suits = [c // 13 for c in cards]
    counts = sorted(Counter(ranks).values(), reverse=True) + [0, 0]
    if len(cards) == 5:
        if counts[0] == 5:
            return HandCategory.FIVE_OF_A_KIND
        flush = len(set(suits)) == 1
        straight = len(set(ranks)) == 5 and set(ranks) in STRAIGHTS
        if flush and straight:
            return HandCategory.ROYAL_FLUSH if set(ranks) == set(range(8, 13)) else HandCategory.STRAIGHT_FLUSH
        if counts[0] == 4:
            return HandCategory.FOUR_OF_A_KIND
        if counts[0] == 3 and counts[1] == 2:
            return HandCategory.FULL_HOUSE
        if flush:
            return HandCategory.FLUSH
        if straight:
            return HandCategory.STRAIGHT
    if counts[0] == 4:
        return HandCategory.FOUR_OF_A_KIND
    if counts[0] == 3:
        return HandCategory.THREE_OF_A_KIND
    if counts[0] == 2:
        return HandCategory.TWO_PAIR if counts[1] == 2 else HandCategory.ONE_PAIR
    return HandCategory.HIGH_CARD


def achievable(cards: list[int]) -> set[HandCategory]:
    """Every category a line can be, trying all 52 cards for each joker (code >= 52)."""
    real = [c for c in cards if c < 52]
    k = len(cards) - len(real)
    if not cards:
        return set()
    out = set()
    for subs in itertools.product(range(52), repeat=k):
        out.add(concrete_category(real + list(subs)))
    return out


def best_points(cards: list[int], points: dict[str, float]) -> float:
    """The most points the line can make under a table (0 for an empty line)."""
    cats = achievable(cards)
    return max((points[c.key] for c in cats), default=0)
