"""Line statistics for agents: the ``LINE_MASK`` key of a line with one more card, and heuristic line values.

These read only the running line statistics kept in
:class:`~pokersquares_env.core.GameState` (cards, jokers, equal-rank pairs,
rank and suit bit sets), so an evaluation costs a few integer operations
and a table look-up.
"""

from __future__ import annotations

import numpy as np

from pokersquares_env.cards import NUM_STANDARD
from pokersquares_env.core import GameState
from pokersquares_env.scoring import FLUSHABLE, WINDOW, HandCategory, PointSystem

__all__ = ["NUM_KEYS", "key_after", "line_key_now", "heuristic_values", "ROW_OF", "COL_OF"]

_WINDOW = WINDOW.tolist()
_FLUSHABLE = FLUSHABLE.tolist()
NUM_KEYS = 6 * 3 * 11 * 4 * 2  # size of LINE_MASK
ROW_OF = tuple(c // 5 for c in range(25))
COL_OF = tuple(5 + c % 5 for c in range(25))


def _key(t: int, k: int, pairs: int, ranks: int, suits: int) -> int:
    return (((t * 3 + k) * 11 + pairs) * 4 + _WINDOW[ranks]) * 2 + _FLUSHABLE[suits]


def line_key_now(state: GameState, line: int) -> int:
    """The ``LINE_MASK`` key of line ``line`` as it stands."""
    return _key(state.line_t[line], state.line_k[line], state.line_pairs[line], state.line_ranks[line],
                state.line_suits[line])


def key_after(state: GameState, line: int, code: int) -> int:
    """The ``LINE_MASK`` key line ``line`` would have with card ``code`` added."""
    if code >= NUM_STANDARD:
        return _key(state.line_t[line] + 1, state.line_k[line] + 1, state.line_pairs[line], state.line_ranks[line],
                    state.line_suits[line])
    rank, suit = code % 13, code // 13
    return _key(
        state.line_t[line] + 1,
        state.line_k[line],
        state.line_pairs[line] + state.rank_counts[line * 13 + rank],
        state.line_ranks[line] | (1 << rank),
        state.line_suits[line] | (1 << suit),
    )


def _key_fields() -> tuple[np.ndarray, ...]:
    idx = np.arange(NUM_KEYS)
    flush = idx % 2
    win = idx // 2 % 4
    pairs = idx // 8 % 11
    k = idx // 88 % 3
    t = idx // 264
    return t, k, pairs, win, flush


KEY_T, KEY_K, KEY_PAIRS, KEY_WINDOW, KEY_FLUSH = _key_fields()


def heuristic_values(system: PointSystem) -> np.ndarray:
    """A hand-set value of every line key, shape ``(NUM_KEYS, 2)`` (``[:, 0]`` rows, ``[:, 1]`` columns).

    A complete line is worth its points.  An incomplete line is worth the rank
    groups it holds plus a share of the flush, straight and straight-flush
    points it can still make, growing with its number of cards; columns
    weigh flush chances more and rows rank groups more (the classic strategy).
    It adapts to any point table and needs no training (the rollout policy of
    ``mc`` and the prior of the learned tables).
    """
    pts = np.asarray(system.points, dtype=np.float64)
    base = system.line_points_table.astype(np.float64)  # rank groups of incomplete lines
    t, pairs, win, flush = KEY_T, KEY_PAIRS, KEY_WINDOW, KEY_FLUSH
    share = np.array([0.0, 0.12, 0.25, 0.45, 0.7, 1.0])[t]
    can_flush = (flush == 1) & (t < 5) & (t > 0)
    can_straight = (win > 0) & (pairs == 0) & (t < 5) & (t > 0)
    f = pts[HandCategory.FLUSH] * share * can_flush
    s = pts[HandCategory.STRAIGHT] * share * can_straight * 0.6
    sf = pts[HandCategory.STRAIGHT_FLUSH] * share ** 2 * (can_flush & can_straight) * 0.3
    # Rank-group upgrades: a pair or trips may still improve.
    up = np.zeros(NUM_KEYS)
    up += (pairs == 1) * (t < 5) * share * 0.5 * (pts[HandCategory.THREE_OF_A_KIND] + pts[HandCategory.TWO_PAIR]) / 2
    up += (pairs == 3) * (t < 5) * share * 0.5 * (pts[HandCategory.FULL_HOUSE] + pts[HandCategory.FOUR_OF_A_KIND]) / 2
    up += (pairs == 2) * (t < 5) * share * 0.4 * pts[HandCategory.FULL_HOUSE]
    rows = base + 0.35 * f + s + sf + up
    cols = base + f + s + sf + 0.6 * up
    complete = t == 5
    rows[complete] = base[complete]
    cols[complete] = base[complete]
    return np.stack([rows, cols], axis=1)
