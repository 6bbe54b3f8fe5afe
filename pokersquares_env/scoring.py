"""Hand categories, point systems and table-driven scoring of lines and grids.

Every scoring path in the package goes through the same precomputed tables:

1. A line (row or column, 0 to 5 cards) is reduced to five small statistics:
   ``t`` cards, ``k`` jokers, ``P`` equal-rank pairs among the real cards, the
   bit set of real ranks and the bit set of real suits.
2. ``WINDOW[rank_bits]`` says whether the ranks fit a straight window (and
   whether that window is the royal T-J-Q-K-A one); ``FLUSHABLE[suit_bits]``
   says whether the real cards share a suit.
3. ``LINE_MASK[key]`` is the set of hand categories the line can be (a single
   category without jokers; every category reachable by choosing the jokers'
   rank and suit when the line holds jokers).
4. ``PointSystem.best_points[mask]`` is the most points any category in the set
   is worth under that system, so a joker always plays the most valuable card.

The vector env, the single env, the agents and ``score_grids`` all use these
tables; ``tests/reference.py`` holds the plain sort-and-compare definition
they are tested against.

Incomplete lines (for the Finnish "checked after an agreed time" rule used by
Poker Shuffle budgets) score only the rank groups they hold -- pair, two
pair, three and four of a kind (or high card); flushes, straights and full
houses need five cards.  An empty line scores 0 and has no hand.  The source
says unfinished boards are checked, not how an incomplete line scores: this is
the library's reading.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from types import MappingProxyType
from typing import Any, Union

import numpy as np

from pokersquares_env._files import object_without_repeats
from pokersquares_env.cards import EMPTY, NUM_STANDARD, check_codes, format_card, parse_cards

__all__ = [
    "CATEGORY_KEYS",
    "HandCategory",
    "LINE_CELLS",
    "POINT_SYSTEMS",
    "PointSystem",
    "WIN_THRESHOLDS",
    "expected_random_score",
    "reward_scale_factor",
    "grid_hands",
    "hand_category",
    "line_points",
    "point_system",
    "points_level",
    "add_lines",
    "add_points",
    "score_grid",
    "score_grids",
    "score_hand",
]


class HandCategory(IntEnum):
    """Poker hand categories, ordered from worst to best.

    ``FIVE_OF_A_KIND`` (only possible with jokers) sits between four of a kind
    and straight flush, where the Russian source's joker rule puts it in the
    English table (20 points, between 16 and 30).
    """

    HIGH_CARD = 0
    ONE_PAIR = 1
    TWO_PAIR = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    FIVE_OF_A_KIND = 8
    STRAIGHT_FLUSH = 9
    ROYAL_FLUSH = 10

    @property
    def key(self) -> str:
        """The lower-snake name used in point tables, e.g. ``'full_house'``."""
        return self.name.lower()

    @property
    def label(self) -> str:
        """A human name, e.g. ``'Full house'``."""
        return self.name.replace("_", " ").capitalize()

    @classmethod
    def possible(cls, jokers: int) -> tuple["HandCategory", ...]:
        """The categories a line can hold in a game with ``jokers`` jokers: five of a kind needs one."""
        return tuple(c for c in cls if jokers or c != cls.FIVE_OF_A_KIND)

    @classmethod
    def from_key(cls, key: str | int | "HandCategory") -> "HandCategory":
        """The category named by ``key`` (``'full_house'``, ``'Full House'``, a member or its int)."""
        if isinstance(key, HandCategory):
            return key
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            try:
                return cls(int(key))
            except ValueError:
                raise ValueError(f"hand category {key!r} out of range: expected 0..{len(cls) - 1}") from None
        if isinstance(key, str):
            norm = key.strip().lower().replace(" ", "_").replace("-", "_")
            for member in cls:
                if member.key == norm:
                    return member
        raise ValueError(f"unknown hand category {key!r}: expected one of {', '.join(CATEGORY_KEYS)}")


CATEGORY_KEYS: tuple[str, ...] = tuple(c.key for c in HandCategory)
NUM_CATEGORIES = len(HandCategory)
NO_HAND = -1  # category code of an empty line
NO_HAND_KEY = "none"

# Rows 0..4 (top to bottom), then columns 0..4 (left to right); cells row-major.
LINE_CELLS = np.array(
    [[r * 5 + c for c in range(5)] for r in range(5)] + [[r * 5 + c for r in range(5)] for c in range(5)],
    dtype=np.int64,
)
CELL_LINES = tuple((cell // 5, 5 + cell % 5) for cell in range(25))

_AMERICAN = {
    "royal_flush": 100,
    "straight_flush": 75,
    # Not in the sources: the library's choice.  The English table of the sources
    # puts five of a kind between four of a kind and straight flush (20 between
    # 16 and 30).  60 keeps that place (between 50 and 75) and follows the English
    # step over four of a kind (20/16 = 1.25, so 62.5), rounded down to the
    # American table's multiples of 5.  (Wild-card poker usually ranks five of a
    # kind above a straight flush; a custom table gives that order.)
    "five_of_a_kind": 60,
    "four_of_a_kind": 50,
    "full_house": 25,
    "flush": 20,
    "straight": 15,
    "three_of_a_kind": 10,
    "two_pair": 5,
    "one_pair": 2,
    "high_card": 0,
}
_ENGLISH = {
    "royal_flush": 30,
    "straight_flush": 30,
    "five_of_a_kind": 20,  # given by the Russian source for four of a kind plus a joker
    "four_of_a_kind": 16,
    "full_house": 10,
    "flush": 5,
    "straight": 12,
    "three_of_a_kind": 6,
    "two_pair": 3,
    "one_pair": 1,
    "high_card": 0,
}

#: The two point systems of the sources, keyed by category name.  Read-only.
POINT_SYSTEMS: Mapping[str, Mapping[str, int]] = MappingProxyType(
    {"american": MappingProxyType(_AMERICAN), "english": MappingProxyType(_ENGLISH)}
)
#: Default scores at which a game counts as won (PySol's Poker Square; the English threshold "some authors" use).
WIN_THRESHOLDS: Mapping[str, int] = MappingProxyType({"american": 100, "english": 70})

# Categories a custom table may leave out, and how they are then filled in.
_OPTIONAL = {"high_card": lambda pts: 0, "five_of_a_kind": lambda pts: pts["four_of_a_kind"]}

# --------------------------------------------------------------------------- tables


def _popcount(x: int) -> int:
    return bin(x).count("1")


def _build_window_table() -> np.ndarray:
    """WINDOW[rank_bits]: bit 0 if a non-royal straight window holds the ranks, bit 1 if the royal one does."""
    windows = [(1 << 12) | 0b1111]  # the wheel A-2-3-4-5
    windows += [0b11111 << low for low in range(9)]  # 2-6 .. T-A
    royal = 0b11111 << 8
    table = np.zeros(1 << 13, dtype=np.int64)
    for bits in range(1 << 13):
        for w in windows:
            if bits & ~w == 0:
                table[bits] |= 2 if w == royal else 1
    return table


WINDOW = _build_window_table()
FLUSHABLE = np.array([1 if _popcount(s) <= 1 else 0 for s in range(16)], dtype=np.int64)


def _patterns_by_pairs(n: int) -> dict[int, tuple[int, ...]]:
    """Rank multiplicity patterns of ``n`` real cards keyed by their number of equal pairs."""
    out: dict[int, tuple[int, ...]] = {}

    def partitions(rest: int, cap: int) -> Iterable[tuple[int, ...]]:
        if rest == 0:
            yield ()
            return
        for p in range(min(rest, cap), 0, -1):
            for tail in partitions(rest - p, p):
                yield (p,) + tail

    for pattern in partitions(n, 4):
        pairs = sum(p * (p - 1) // 2 for p in pattern)
        assert pairs not in out, "pair count must identify the pattern"
        out[pairs] = pattern
    return out


_PATTERNS = {n: _patterns_by_pairs(n) for n in range(6)}


def _pair_category(pattern: tuple[int, ...]) -> HandCategory:
    p = sorted(pattern, reverse=True) + [0, 0]
    if p[0] >= 5:
        return HandCategory.FIVE_OF_A_KIND
    if p[0] == 4:
        return HandCategory.FOUR_OF_A_KIND
    if p[0] == 3:
        return HandCategory.FULL_HOUSE if p[1] == 2 else HandCategory.THREE_OF_A_KIND
    if p[0] == 2:
        return HandCategory.TWO_PAIR if p[1] == 2 else HandCategory.ONE_PAIR
    return HandCategory.HIGH_CARD


def _with_jokers(pattern: tuple[int, ...], k: int) -> set[tuple[int, ...]]:
    """Every multiplicity pattern reachable by adding ``k`` wild cards to ``pattern``."""
    current = {tuple(sorted(pattern, reverse=True))}
    for _ in range(k):
        nxt = set()
        for pat in current:
            nxt.add(tuple(sorted(pat + (1,), reverse=True)))  # a new rank
            for i in range(len(pat)):  # one more of an existing rank
                grown = list(pat)
                grown[i] += 1
                nxt.add(tuple(sorted(grown, reverse=True)))
        current = nxt
    return current


def _achievable(t: int, k: int, pairs: int, win: int, flushable: int) -> int:
    """Bit set of the categories a line with these statistics can be."""
    n = t - k
    if t == 0 or n < 0 or pairs not in _PATTERNS[n]:
        return 0
    pattern = _PATTERNS[n][pairs]
    if k == 0:
        cat = _pair_category(pattern)
        if t == 5 and cat == HandCategory.HIGH_CARD:  # five distinct ranks
            straight, flush = win != 0, bool(flushable)
            if straight and flush:
                cat = HandCategory.ROYAL_FLUSH if win & 2 else HandCategory.STRAIGHT_FLUSH
            elif flush:
                cat = HandCategory.FLUSH
            elif straight:
                cat = HandCategory.STRAIGHT
        return 1 << cat
    # Jokers: any rank and suit, duplicates of other cards allowed.  A joker can
    # always take a suit that breaks a flush and (with >= 8 unused ranks) a rank
    # that breaks a straight, so every rank-group pattern is reachable as such.
    mask = 0
    for grown in _with_jokers(pattern, k):  # t cards in all: a full house only in a complete line
        mask |= 1 << _pair_category(grown)
    if t == 5:
        if pairs == 0 and win:
            mask |= 1 << HandCategory.STRAIGHT
        if flushable:  # real cards share a suit (so their ranks are distinct)
            mask |= 1 << HandCategory.FLUSH  # a joker duplicating a rank avoids the straight
            if win & 1:
                mask |= 1 << HandCategory.STRAIGHT_FLUSH
            if win & 2:
                mask |= 1 << HandCategory.ROYAL_FLUSH
    return mask


def _build_line_mask() -> np.ndarray:
    table = np.zeros((6, 3, 11, 4, 2), dtype=np.int64)
    for t, k, p, w, f in itertools.product(range(6), range(3), range(11), range(4), range(2)):
        table[t, k, p, w, f] = _achievable(t, k, p, w, f)
    return table.reshape(-1)


LINE_MASK = _build_line_mask()


def line_key(t: int, k: int, pairs: int, rank_bits: int, suit_bits: int) -> int:
    """Index into ``LINE_MASK`` of a line's statistics (works on ints and numpy arrays alike)."""
    return (((t * 3 + k) * 11 + pairs) * 4 + WINDOW[rank_bits]) * 2 + FLUSHABLE[suit_bits]


_CODES_FROM_EMPTY = np.arange(EMPTY, NUM_STANDARD + 2)  # -1 .. 53, indexed by code + 1
_IS_REAL_CODE = (_CODES_FROM_EMPTY >= 0) & (_CODES_FROM_EMPTY < NUM_STANDARD)
_RANK_BIT = np.where(_IS_REAL_CODE, 1 << (_CODES_FROM_EMPTY % 13), 0).astype(np.int64)
_SUIT_BIT = np.where(_IS_REAL_CODE, 1 << (_CODES_FROM_EMPTY // 13 % 4), 0).astype(np.int64)


def line_keys(lines: np.ndarray) -> np.ndarray:
    """``LINE_MASK`` indices of an array of lines (..., L) of card codes, ``EMPTY`` for no card."""
    lines = np.asarray(lines, dtype=np.int64)
    valid = lines >= 0
    joker = lines >= NUM_STANDARD
    t = valid.sum(-1)
    k = joker.sum(-1)
    rank_bits = np.bitwise_or.reduce(_RANK_BIT[lines + 1], axis=-1)
    suit_bits = np.bitwise_or.reduce(_SUIT_BIT[lines + 1], axis=-1)
    width = lines.shape[-1]
    # Empty cells and jokers get distinct dummy ranks 13, 14, ... so that they never make a pair.
    rank = np.where(valid & ~joker, lines % 13, 13 + np.arange(width))
    pairs = np.zeros(t.shape, dtype=np.int64)
    for i in range(width):
        for j in range(i + 1, width):
            pairs += rank[..., i] == rank[..., j]
    return line_key(t, k, pairs, rank_bits, suit_bits)


# --------------------------------------------------------------------------- point systems

SystemSpec = Union[str, Mapping[str, Any], "PointSystem", os.PathLike]
_UNSET: Any = object()


@dataclass(frozen=True)
class PointSystem:
    """Points per hand category, plus the score at which a game counts as won.

    Build one with :func:`point_system` (or ``PointSystem.from_spec``) from a
    name (``'american'``, ``'english'``), a mapping of category names to
    points (negative values allowed), or a JSON file holding such a mapping.

    The points are kept as a tuple of Python numbers (an ``int`` for a value of
    an integer type, numpy's included, a ``float`` otherwise: the built-in
    systems and systems read from a mapping or a file hold floats), and so is
    the threshold, so a system built from a list or an array is hashable, equal
    to the same system built from a tuple and serialisable to JSON; ``2`` and
    ``2.0`` compare equal, so systems that differ only so are equal.  A built-in name (any
    case) must come with that system's points and is kept in lower case.
    """

    name: str
    points: tuple[float, ...]  # indexed by HandCategory
    win_threshold: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise TypeError(f"point system name {self.name!r}: expected a non-empty string")
        if not self.name.strip():  # the right type, a bad value
            raise ValueError(f"point system name {self.name!r}: expected a non-empty string")
        if isinstance(self.points, (str, bytes)) or not isinstance(self.points, (Sequence, np.ndarray)):
            raise TypeError(f"point system {self.name!r}: points {self.points!r} is not a sequence: expected "
                            f"{NUM_CATEGORIES} numbers in HandCategory order")
        if len(self.points) != NUM_CATEGORIES:
            raise ValueError(f"point system {self.name!r}: expected {NUM_CATEGORIES} values, got {len(self.points)}")
        for category, value in zip(HandCategory, self.points):  # as point tables are checked, however it is built
            _number(value, f"point system {self.name!r}[{category.key!r}]", bound=MAX_POINTS)
        if self.win_threshold is not None:
            if isinstance(self.win_threshold, bool) or not isinstance(self.win_threshold, (int, float, np.integer,
                                                                                          np.floating)):
                raise TypeError(f"point system {self.name!r}: win_threshold {self.win_threshold!r} is not a number: "
                                f"expected a number or None")
            try:
                finite = math.isfinite(float(self.win_threshold))
            except OverflowError:  # an int past the float range
                raise ValueError(f"point system {self.name!r}: win_threshold {self.win_threshold!r} is too large for a "
                                 f"float: expected a finite number or None") from None
            if not finite:
                raise ValueError(f"point system {self.name!r}: win_threshold {self.win_threshold!r} is not finite: "
                                 f"expected a finite number or None")
        builtin = self.name.strip().lower()
        if builtin in POINT_SYSTEMS:  # results, thresholds and paired comparisons go by the name
            expected = _from_mapping(POINT_SYSTEMS[builtin], builtin, builtin)
            differ = [f"{c.key} {_fmt_points(v)}, not {_fmt_points(e)}"
                      for c, v, e in zip(HandCategory, self.points, expected) if float(v) != e]
            if differ:
                raise ValueError(f"point system named {self.name!r} with other points than the {builtin} table "
                                 f"({'; '.join(differ[:3])}{'; ...' if len(differ) > 3 else ''}): expected the "
                                 f"{builtin} values under that name, or another name for a custom table")
            object.__setattr__(self, "name", builtin)
        # Checked: now frozen as plain Python numbers (hashable, comparable, JSON-ready, not changed by the caller).
        object.__setattr__(self, "points", tuple(_plain_number(v) for v in self.points))
        if self.win_threshold is not None:
            object.__setattr__(self, "win_threshold", _plain_number(self.win_threshold))

    @classmethod
    def from_spec(cls, spec: SystemSpec, *, win_threshold: Any = _UNSET) -> "PointSystem":
        """A point system from a name, a mapping, a JSON file path or a ``PointSystem``."""
        return point_system(spec, win_threshold=win_threshold)

    def __getitem__(self, category: str | int | HandCategory) -> float:
        return self.points[HandCategory.from_key(category)]

    def as_dict(self) -> dict[str, float]:
        """The table as ``{category key: points}``."""
        return {c.key: (int(self.points[c]) if float(self.points[c]).is_integer() else self.points[c]) for c in HandCategory}

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready description that :func:`point_system` reads back."""
        return {"name": self.name, "points": self.as_dict(), "win_threshold": self.win_threshold}

    def won(self, score: Any) -> Any:
        """Whether ``score`` (a number, or an array of them) reaches the win threshold, both compared to 9 decimals
        (:func:`points_level`): ten lines of 0.1 add up to 0.9999999999999999 and reach a threshold of 1.  Always
        false without a threshold.  A bool for a number, a bool array for an array; anything else is refused."""
        if isinstance(score, np.ndarray) and score.ndim == 0:
            score = score[()]
        if np.ndim(score):
            try:
                scores = np.asarray(score, dtype=np.float64)
            except (TypeError, ValueError, OverflowError):
                raise ValueError(f"scores {score!r}: expected a number or an array of numbers") from None
            if self.win_threshold is None:
                return np.zeros(scores.shape, dtype=bool)
            level = points_level(self.win_threshold)
            # a whole number is its own points_level (exactly, below 2**52): compared as an array, the rest one by one
            whole = np.isfinite(scores) & (np.abs(scores) < 2.0**52)
            whole[whole] = scores[whole] == np.rint(scores[whole])
            out = scores >= level
            for i in np.flatnonzero(~whole.ravel()):
                out.flat[i] = points_level(scores.flat[i]) >= level
            return out
        if isinstance(score, (bool, np.bool_)) or not isinstance(score, (int, float, np.integer, np.floating)):
            raise TypeError(f"score {score!r} is not a number: expected a number or an array of numbers")
        try:
            level = points_level(score)
        except OverflowError:  # an int past the float range: compared as the infinity it rounds towards
            level = math.inf if score > 0 else -math.inf
        return self.win_threshold is not None and level >= points_level(self.win_threshold)

    @property
    def integral(self) -> bool:
        """Whether every value is a whole number (scores are then reported as ints)."""
        return all(float(p).is_integer() for p in self.points)

    @functools.cached_property
    def best_points(self) -> np.ndarray:
        """For each category bit set (0..2047), the most points any member is worth (0 for none)."""
        return self._best_tables[0]

    @functools.cached_property
    def best_category(self) -> np.ndarray:
        """For each category bit set, the category that earns ``best_points`` (ties go to the higher; -1 for none)."""
        return self._best_tables[1]

    @functools.cached_property
    def line_points_table(self) -> np.ndarray:
        """Points of a line indexed directly by its ``LINE_MASK`` key."""
        return self.best_points[LINE_MASK]

    @functools.cached_property
    def line_category_table(self) -> np.ndarray:
        """Category code of a line indexed directly by its ``LINE_MASK`` key (-1 for an empty line)."""
        return self.best_category[LINE_MASK]

    @functools.cached_property
    def _best_tables(self) -> tuple[np.ndarray, np.ndarray]:
        return _best_tables_of(self.points)

    def __repr__(self) -> str:
        return f"PointSystem({self.name!r}, {self.as_dict()!r}, win_threshold={self.win_threshold!r})"


@functools.lru_cache(maxsize=256)
def _best_tables_of(points: tuple[int | float, ...]) -> tuple[np.ndarray, np.ndarray]:
    """:attr:`PointSystem.best_points` and :attr:`PointSystem.best_category` of a points table, read-only and shared
    by every point system of those points (building them takes milliseconds: every game record read from a file
    makes its own point system)."""
    best = np.zeros(1 << NUM_CATEGORIES, dtype=np.float64)
    cat = np.full(1 << NUM_CATEGORIES, NO_HAND, dtype=np.int64)
    for mask in range(1, 1 << NUM_CATEGORIES):
        members = [c for c in range(NUM_CATEGORIES) if mask >> c & 1]
        top = max(members, key=lambda c: (points[c], c))
        best[mask], cat[mask] = points[top], top
    best.flags.writeable = cat.flags.writeable = False
    return best, cat


#: The largest points a hand may be worth, either sign: a board's 10 lines then sum to at most 1e13, far from
#: overflowing in any total, mean or spread the package computes, and exact in a float (below 2**53) when the points
#: are whole numbers.  Fractions (0.1 is not exact in binary) add up with float rounding; every path adds a board's
#: lines in the same order (rows then columns, left to right), so they all give the same total.
MAX_POINTS = 1e12


def _plain_number(value: Any) -> int | float:
    """A checked number as a Python ``int`` (integer types, numpy's included) or ``float`` (anything else)."""
    return int(value) if isinstance(value, (int, np.integer)) else float(value)


def _fmt_points(value: Any) -> str:
    number = float(value)
    return str(int(number)) if number.is_integer() else repr(number)


def _number(value: Any, where: str, *, bound: float | None = None, what: str = "points") -> float:
    """``value`` as a float, or an error naming ``where`` and the value (``what``: the kind of value, as worded)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{where}: {what} {value!r} is not a number")
    try:
        number = float(value)
    except OverflowError:
        raise ValueError(f"{where}: {what} {value!r} is too large for a float") from None
    if not math.isfinite(number):
        raise ValueError(f"{where}: {what} {value!r} is not finite")
    if bound is not None and abs(number) > bound:
        raise ValueError(f"{where}: {what} {value!r} is too large: expected at most {bound:g} either way (so that "
                         f"10 lines of it add up without overflow, and exactly in whole numbers)")
    return number


def _from_mapping(table: Mapping[str, Any], name: str, where: str) -> tuple[float, ...]:
    values: dict[str, float] = {}
    spelled: dict[str, Any] = {}  # each category's key as the table gives it
    for raw_key, raw_value in table.items():
        try:
            key = HandCategory.from_key(raw_key).key
        except ValueError:
            raise ValueError(
                f"{where}: unknown hand category {raw_key!r}; expected one of {', '.join(CATEGORY_KEYS)}"
            ) from None
        if key in values:
            raise ValueError(f"{where}: hand category {key!r} is given twice (as {spelled[key]!r} and as "
                             f"{raw_key!r}): expected each category once")
        values[key] = _number(raw_value, f"{where}[{raw_key!r}]", bound=MAX_POINTS)
        spelled[key] = raw_key
    missing = [k for k in CATEGORY_KEYS if k not in values and k not in _OPTIONAL]
    if missing:
        raise ValueError(
            f"{where}: missing hand categories {', '.join(missing)} "
            f"(every category except {' and '.join(_OPTIONAL)} needs a value)"
        )
    for key, fill in _OPTIONAL.items():
        values.setdefault(key, fill(values))
    return tuple(values[k] for k in CATEGORY_KEYS)


@functools.lru_cache(maxsize=None)
def _builtin(name: str) -> PointSystem:
    return PointSystem(name, _from_mapping(POINT_SYSTEMS[name], name, name), WIN_THRESHOLDS[name])


_WRAPPED_KEYS = {"name", "points", "win_threshold"}


def _is_category(key: Any) -> bool:
    """Whether ``key`` names a hand category (as a key of a plain table may)."""
    try:
        HandCategory.from_key(key)
    except (TypeError, ValueError):
        return False
    return True


def point_system(spec: SystemSpec = "american", *, win_threshold: Any = _UNSET) -> PointSystem:
    """A :class:`PointSystem` from a name, a mapping, a JSON file or a ``PointSystem``.

    A mapping gives points per category key (``'royal_flush'`` ... ``'one_pair'``;
    ``'high_card'`` defaults to 0 and ``'five_of_a_kind'`` to the four-of-a-kind
    value).  A JSON file holds either such a mapping or
    ``{"name": ..., "points": {...}, "win_threshold": ...}``; a key given twice
    is refused, and errors about the file's contents name the file.
    ``win_threshold`` overrides the system's threshold (``None`` for no threshold).

    Names: a wrapped table without a ``"name"`` (or with ``null``) is
    ``'custom'``, and a plain table is ``'custom'`` too, or, read from a file,
    named after the file's stem.  A table named ``'american'`` or
    ``'english'`` (any case, by its ``"name"`` or its file's stem) with that
    system's points *is* that system: it takes the lower-case name and, unless
    it gives a ``"win_threshold"`` (``null`` included), the built-in threshold
    (100, 70).  Other points under a built-in ``"name"`` are refused (results
    are labelled and compared by name); in a file whose stem is a built-in
    name, they are named by the whole file name (``'american.json'``).
    """
    if isinstance(spec, PointSystem):
        system = spec
    elif isinstance(spec, str) and spec.strip().lower() in POINT_SYSTEMS:
        system = _builtin(spec.strip().lower())
    elif isinstance(spec, Mapping):
        if _WRAPPED_KEYS & set(spec):
            categories = [key for key in spec if key not in _WRAPPED_KEYS and _is_category(key)]
            if categories:  # a plain table with a wrapped key beside its categories: say where they go
                wrapped = [key for key in ("name", "points", "win_threshold") if key in spec]
                raise ValueError(
                    f"point system: {' and '.join(map(repr, wrapped))} beside hand categories "
                    f"({', '.join(map(str, categories))}): a table with 'name' or 'win_threshold' puts its categories "
                    f"under 'points': {{\"name\": ..., \"points\": {{...}}, \"win_threshold\": ...}}"
                )
            extra = sorted(map(str, set(spec) - _WRAPPED_KEYS))
            if extra:
                raise ValueError(f"point system: unknown key {extra[0]!r}: expected 'name', 'points' and "
                                 f"'win_threshold' (or a plain table of category to points)")
            if not isinstance(spec.get("points"), Mapping):
                raise ValueError(f"point system: 'points' is {spec.get('points')!r}: expected a mapping of category "
                                 f"to points")
            name = spec.get("name")
            if name is None:
                name = "custom"
            elif not isinstance(name, str):
                raise ValueError(f"point system: 'name' is {name!r}: expected a string (or no name, for 'custom')")
            if "win_threshold" in spec:
                threshold = spec["win_threshold"]
                if threshold is not None:
                    threshold = _number(threshold, f"point system {name!r}", what="win_threshold")
            else:  # a built-in's name (any case) must come with its points, and then has its threshold
                threshold = WIN_THRESHOLDS.get(name.strip().lower())
            system = PointSystem(name, _from_mapping(spec["points"], name, f"point system {name!r}"), threshold)
        else:
            system = PointSystem("custom", _from_mapping(spec, "custom", "point table"), None)
    elif isinstance(spec, (str, os.PathLike)):
        path = os.fspath(spec)
        if not os.path.exists(path):
            looks_like_a_file = path.lower().endswith(".json") or os.sep in path or "/" in path
            raise ValueError(
                (f"point system file {path!r} does not exist" if looks_like_a_file else
                 f"unknown point system {spec!r}") + ": expected 'american', 'english', a mapping of "
                "category to points, or the path of a JSON file holding one"
            )
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh, object_pairs_hook=functools.partial(_json_object, path),
                                 parse_int=_json_int)
        except json.JSONDecodeError as exc:
            raise ValueError(f"point system file {path!r} is not valid JSON: {exc}") from None
        except RecursionError:
            raise ValueError(f"point system file {path!r}: JSON nested too deeply to read: expected a JSON object of "
                             f"category to points") from None
        except UnicodeDecodeError:
            raise ValueError(f"point system file {path!r} is not UTF-8 text: expected a JSON object of category "
                             f"to points") from None
        except OSError as exc:
            raise ValueError(f"point system file {path!r} cannot be read ({exc.strerror or exc}): expected a JSON "
                             f"file of category to points") from None
        if not isinstance(data, Mapping):
            raise ValueError(f"point system file {path!r}: expected a JSON object, got {type(data).__name__}")
        try:
            system = point_system(data)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"point system file {path!r}: {exc}") from None
        if system.name == "custom":  # named after its file (with the extension where the stem is a built-in's name)
            stem = os.path.splitext(os.path.basename(path))[0]
            builtin = stem.strip().lower()
            if builtin in POINT_SYSTEMS and system.points == _builtin(builtin).points:  # the built-in system itself
                threshold = system.win_threshold if "win_threshold" in data else WIN_THRESHOLDS[builtin]
                system = PointSystem(builtin, system.points, threshold)
            else:
                name = os.path.basename(path) if builtin in POINT_SYSTEMS else stem
                system = PointSystem(name, system.points, system.win_threshold)
    else:
        raise TypeError(
            f"point system {spec!r} ({type(spec).__name__}): expected a name, a mapping, a JSON path or a PointSystem"
        )
    if win_threshold is not _UNSET:
        threshold = None if win_threshold is None else _number(win_threshold, "win_threshold", what="value")
        system = PointSystem(system.name, system.points, threshold)
    return system


class _LongInteger:
    """An integer of a JSON file too long for ``int`` to read (Python's limit on digits): named, not read."""

    def __init__(self, text: str) -> None:
        self.digits = len(text.lstrip("-"))

    def __repr__(self) -> str:
        return f"<a {self.digits}-digit integer>"


def _json_int(text: str) -> int | _LongInteger:
    try:
        return int(text)
    except ValueError:  # more digits than sys.get_int_max_str_digits()
        return _LongInteger(text)


def _json_object(path: str, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object of a point system file, refusing a key given twice and an integer too long to read."""
    out = object_without_repeats(
        pairs, lambda key: ValueError(f"point system file {path!r}: key {key!r} is given twice: expected each key once"))
    for key, value in out.items():
        if isinstance(value, _LongInteger):
            raise ValueError(f"point system file {path!r}: {key!r} is a {value.digits}-digit integer: expected a "
                             f"number of at most {MAX_POINTS:g} either way")
    return out


# --------------------------------------------------------------------------- scoring API


def _as_codes(cards: str | Iterable[Any], *, allow_empty: bool, where: str) -> list[int]:
    if isinstance(cards, str):
        cards = parse_cards(cards)
    elif isinstance(cards, np.ndarray):
        cards = cards.reshape(-1).tolist()
    return check_codes(cards if isinstance(cards, (bytes, bytearray)) else list(cards), allow_empty=allow_empty,
                       where=where)


def _hand_key(cards: str | Iterable[Any]) -> int:
    if not isinstance(cards, Iterable) or isinstance(cards, Mapping):  # a dict would be read as its keys
        raise TypeError(f"hand {cards!r}: expected up to 5 cards (text or codes)")
    codes = _as_codes(cards, allow_empty=False, where="hand")
    if len(codes) > 5:
        raise ValueError(f"hand has {len(codes)} cards: expected at most 5")
    padded = codes + [EMPTY] * (5 - len(codes))
    return int(line_keys(np.array(padded)))


def hand_category(cards: str | Iterable[Any], system: SystemSpec | None = None) -> HandCategory | None:
    """The hand category of up to five cards (``None`` for no cards).

    With jokers the answer is the category the jokers make worth most under
    ``system``; with ``system=None`` it is the highest category they can make.
    """
    mask = int(LINE_MASK[_hand_key(cards)])
    if mask == 0:
        return None
    if system is None:
        return HandCategory(mask.bit_length() - 1)
    return HandCategory(int(point_system(system).best_category[mask]))


def score_hand(cards: str | Iterable[Any], system: SystemSpec = "american") -> float:
    """Points of up to five cards under ``system`` (jokers play their best)."""
    ps = point_system(system)
    return _as_number(ps.best_points[LINE_MASK[_hand_key(cards)]], ps)


def _as_number(value: float, ps: PointSystem) -> float:
    return int(value) if ps.integral else float(value)


def _grid_codes(grid: Any) -> np.ndarray:
    if isinstance(grid, str):
        codes = parse_cards(grid, allow_empty=True)
    else:
        arr = np.asarray(grid, dtype=object)
        if arr.shape not in ((25,), (5, 5)):
            raise ValueError(f"grid has shape {arr.shape}: expected 25 card codes row-major or a 5x5 array")
        codes = arr.reshape(-1).tolist()
    if len(codes) != 25:
        raise ValueError(f"grid has {len(codes)} cards: expected 25 (row-major, -1 for an empty cell)")
    return np.array(_as_codes(codes, allow_empty=True, where="grid"), dtype=np.int64)


def line_points(grid: Any, system: SystemSpec = "american") -> list[float]:
    """Points of the 10 lines of a grid: rows 1-5 then columns 1-5."""
    ps = point_system(system)
    keys = line_keys(_grid_codes(grid)[LINE_CELLS])
    return [_as_number(p, ps) for p in ps.line_points_table[keys]]


def grid_hands(grid: Any, system: SystemSpec = "american") -> list[str]:
    """Category keys of the 10 lines of a grid (rows then columns); ``'none'`` for an empty line."""
    ps = point_system(system)
    keys = line_keys(_grid_codes(grid)[LINE_CELLS])
    return [CATEGORY_KEYS[c] if c >= 0 else NO_HAND_KEY for c in ps.line_category_table[keys]]


def add_lines(points: np.ndarray) -> np.ndarray:
    """Totals of (..., 10) line points added left to right (rows 1-5, then columns a-e).

    The one order every path adds a board's lines in (``PokerSquaresGame.score`` with :func:`add_points`, the envs'
    final infos, ``score_grid``, ``score_grids``): under fractional points numpy's pairwise ``sum`` would round
    differently and the same board would score differently on different paths.
    """
    total = np.zeros(points.shape[:-1], dtype=np.float64)  # from 0.0, as add_points starts: bit-identical to it
    for line in range(points.shape[-1]):
        total += points[..., line]
    return total


def add_points(points: Iterable[float]) -> float:
    """``points`` added left to right, one float addition at a time: :func:`add_lines` for a plain sequence.

    Not Python's ``sum``: from Python 3.12 it compensates the rounding of floats (CPython gh-100425), so that under a
    table of tenths ten lines of 0.1 total 1.0 there and 0.9999999999999999 on 3.10 and 3.11 and in every array path.
    Adding in order gives one score for a board on every path and every Python."""
    total = 0.0
    for value in points:
        total += value
    return float(total)


def points_level(points: float) -> float:
    """``points`` rounded to 9 decimals: the form in which scores are compared for ties, wins and thresholds.

    Scores are float sums, so under a table of tenths equal hands can total 0.6 on one board and
    0.6000000000000001 on another, and ten one-pairs of 0.1 total 0.9999999999999999; those tie, and reach a
    threshold of 1."""
    return round(float(points), 9)


def score_grid(grid: Any, system: SystemSpec = "american") -> float:
    """Total points of a grid: 25 codes row-major or 5x5, text allowed, -1 for empty cells.

    The lines are added rows then columns, left to right, as every scoring path adds them (:func:`add_lines`).
    """
    ps = point_system(system)
    keys = line_keys(_grid_codes(grid)[LINE_CELLS])
    return _as_number(add_lines(ps.line_points_table[keys]), ps)


def score_grids(boards: Any, system: SystemSpec = "american") -> np.ndarray:
    """Total points of many boards at once: an (N, 25) or (N, 5, 5) array of codes -> (N,) float64.

    Codes are -1 (empty) or 0..53; a board that holds a card twice is refused, as by :func:`score_grid`.
    """
    ps = point_system(system)
    try:
        arr = np.asarray(boards)
    except ValueError:  # numpy refuses ragged lists
        raise ValueError("boards are ragged (rows of different lengths): expected (N, 25) or (N, 5, 5) card codes") \
            from None
    if not (arr.ndim == 2 and arr.shape[1] == 25 or arr.ndim == 3 and arr.shape[1:] == (5, 5)):
        raise ValueError(f"boards have shape {arr.shape}: expected (N, 25) or (N, 5, 5)")
    if not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"boards have dtype {arr.dtype}: expected integer card codes")
    if arr.size and (arr.min() < EMPTY or arr.max() >= NUM_STANDARD + 2):  # before int64, which could wrap a uint64
        bad = int(arr[(arr < EMPTY) | (arr >= NUM_STANDARD + 2)][0])
        raise ValueError(f"boards hold card code {bad}: expected -1 (empty) or 0..53")
    flat = arr.reshape(arr.shape[0], 25).astype(np.int64)
    ordered = np.sort(flat, axis=1)
    twice = (ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] != EMPTY)
    if twice.any():
        board, at = np.argwhere(twice)[0]
        code = int(ordered[board, at + 1])
        raise ValueError(f"board {board} holds card {format_card(code)} (code {code}) twice: expected distinct cards")
    keys = line_keys(flat[:, LINE_CELLS])
    return add_lines(ps.line_points_table[keys])


# --------------------------------------------------------------------------- exact expectations


@functools.lru_cache(maxsize=4)
def _hand_key_histogram(jokers: int) -> np.ndarray:
    """How many 5-card hands of the deck (52 + ``jokers`` cards) fall on each LINE_MASK key."""
    n = NUM_STANDARD + jokers
    count = math.comb(n, 5)
    hands = np.fromiter(itertools.combinations(range(n), 5), dtype=np.dtype((np.int8, 5)), count=count)
    keys = np.concatenate([line_keys(chunk) for chunk in np.array_split(hands, max(1, count // 500_000))])
    return np.bincount(keys, minlength=LINE_MASK.size)


def expected_random_score(system: SystemSpec = "american", jokers: int = 0) -> float:
    """The exact expected score of play that ignores the cards (e.g. uniform random cells).

    Each line of such a game is a uniformly random 5-card hand of the deck, so
    the expectation is 10 times the mean hand value over all hands.
    """
    if isinstance(jokers, (bool, np.bool_)) or not isinstance(jokers, (int, np.integer)):
        raise TypeError(f"jokers={jokers!r}: expected 0, 1 or 2 (an integer)")
    if jokers not in (0, 1, 2):
        raise ValueError(f"jokers={jokers!r}: expected 0, 1 or 2")
    jokers = int(jokers)
    ps = point_system(system)
    hist = _hand_key_histogram(jokers)
    return float(10.0 * (hist * ps.line_points_table).sum() / hist.sum())


def reward_scale_factor(reward_scale: float | str, system: SystemSpec, jokers: int = 0) -> float:
    """The reward multiplier for ``reward_scale``: a positive number, or ``"normalized"`` (1 / expected random-play score)."""
    if reward_scale == "normalized":
        ps = point_system(system)
        expected = expected_random_score(ps, jokers)
        if expected <= 0:
            raise ValueError(
                f"reward_scale='normalized' divides by the expected random-play score, which is "
                f"{expected:.3f} under {ps.name!r}: pass a positive number instead"
            )
        return 1.0 / expected
    if isinstance(reward_scale, bool) or not isinstance(reward_scale, (int, float, np.integer, np.floating)):
        factor = math.nan
    else:
        try:
            factor = float(reward_scale)
        except OverflowError:  # an int beyond a float's range
            factor = math.inf
    if not 0 < factor < math.inf:
        raise ValueError(f"reward_scale={reward_scale!r}: expected a positive finite number or 'normalized'")
    return factor
