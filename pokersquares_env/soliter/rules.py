"""Soliter rules: the variant options (data) and the pure game core (no Gymnasium).

Soliter ("Солитер", I. Konstantinov, *Nauka i Zhizn* No. 11, 1968) is the
open solitaire known elsewhere as Baker's Game: the whole deck is dealt face
up into columns; the last card of a column is playable; cards build down in
suit on the columns and up in suit from the aces on the foundations; free cells
hold one card each; an emptied column takes any card.

Cards use the shared codes of :mod:`pokersquares_env.cards` (``13 * suit + rank``,
rank 0 = two .. 12 = ace).  Two-deck variants simply hold each code twice.
Jokers are codes 52, 53 and 54 (a 55-card deck has three).

Everything here is plain data: a :class:`Variant` (frozen dataclass of rule
options), a :class:`SoliterState` (immutable named tuple) and a
:class:`SoliterGame` that lists legal moves and applies them.  The Gymnasium
adapter is :mod:`pokersquares_env.soliter.env`; the solver is
:mod:`pokersquares_env.soliter.solver`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, NamedTuple

import numpy as np

from pokersquares_env.cards import EMPTY, NUM_STANDARD, RANKS, SUITS, parse_card

__all__ = [
    "EMPTY",
    "JOKER_CODES",
    "MAX_COLUMNS",
    "MAX_STAGES",
    "VARIANTS",
    "IllegalMoveError",
    "SoliterGame",
    "SoliterState",
    "Variant",
    "card_text",
    "get_variant",
]

#: joker codes: the shared deck has two (52, 53); Soliter allows a third (54).
JOKER_CODES = (52, 53, 54)
_CODES = NUM_STANDARD + len(JOKER_CODES)  # 55 table entries
#: rank indices (shared code, 0 = two .. 12 = ace) from the lowest rung (ace) to the king.
FULL_LADDER = (12, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
SHORT_LADDER = (12, 4, 5, 6, 7, 8, 9, 10, 11)  # the 36-card deck: A 6 7 8 9 T J Q K
#: the most columns a deal may lay out (``columns``, or with ``columns=None`` as many as the cards fill)
MAX_COLUMNS = 20
#: the most stages a game may have: the observation holds the stage (0-based) as an int16
MAX_STAGES = 2**15 - 1


class IllegalMoveError(ValueError):
    """A move that the rules refuse; the message says which move and why."""


def card_text(code: int) -> str:
    """The text of a Soliter card code (``'T♠'``; any joker is ``'JK'``; an empty place ``'..'``)."""
    if not _is_int(code):  # int() would read '5' or 5.9 as 5
        raise TypeError(f"card code {code!r}: expected an integer (0..51, 52..54 for jokers, {EMPTY} for empty)")
    code = int(code)
    if code == EMPTY:
        return ".."
    if code in JOKER_CODES:
        return "JK"
    if not 0 <= code < NUM_STANDARD:
        raise ValueError(f"card code {code!r} out of range: expected 0..51, or 52..54 for jokers")
    return RANKS[code % 13] + SUITS[code // 13]


def _code_text(code: int) -> str:
    """A card code in an error message: its text, a joker with its code (``'JK (code 53)'``: every joker's text is
    ``'JK'``, so a wrong joker would read "missing JK; unexpected JK"), or any other number as it is."""
    if code in JOKER_CODES:
        return f"JK (code {code})"
    return card_text(code) if 0 <= code < NUM_STANDARD else str(int(code))


#: the names the env writes for its jokers when the deck has more than one, read back in a text deal
_NUMBERED_JOKERS = {f"jk{n}": code for n, code in enumerate(JOKER_CODES, start=1)}


def _name_jokers(codes: list[int | None], wheres: list[str]) -> list[int]:
    """``codes`` with each plain joker (``None``) given, in order, a joker code that no numbered joker of the deal
    (``'JK1'``..``'JK3'`` or its code) takes, as :func:`pokersquares_env.cards.assign_jokers` reads ``'JK1 JK'``."""
    free = iter([j for j in JOKER_CODES if j not in codes])
    out = []
    for code, where in zip(codes, wheres, strict=True):
        if code is None:
            code = next(free, None)
            if code is None:
                raise ValueError(f"{where}: more than {len(JOKER_CODES)} jokers")
        out.append(code)
    return out


@dataclass(frozen=True)
class Variant:
    """The rule options of one Soliter variant (data, not a subclass).

    Attributes:
        name: a label (``"classic"``, ``"36"``, ... or ``"custom"``).
        deck: ``"52"`` (two to ace) or ``"36"`` (six to ace); the integers 52 and 36 are
            accepted and stored as these strings.
        decks: how many such decks are shuffled together (1 or 2).
        jokers: wild jokers added to the deck (0..3).
        columns: columns of the first deal, at most :data:`MAX_COLUMNS`; ``None`` with ``deal="columns"``
            means as many ``column_size``-card columns as the cards fill (at most :data:`MAX_COLUMNS` too).
        free_cells: free cells, each holding one card.
        deal: ``"rows"`` (card ``i`` to column ``i % columns``, classic) or
            ``"columns"`` (``column_size`` cards to a column, then the next).
        column_size: cards per column with ``deal="columns"``.
        king_foundations: besides one ace foundation per suit (building up),
            one king foundation per suit building down, and a card may pass
            from the ace foundation to the king foundation of its suit.
        redeal: ``"none"``, ``"reverse"`` (gather the columns in order, the last
            card becomes the first, deal again unshuffled) or ``"shuffle"``
            (gather, shuffle, deal into one column fewer).  A redeal lays the
            cards out the way ``deal`` says, as the first deal did ("the player
            again lays out"): with ``deal="rows"`` row by row over the columns in
            play (``"reverse"``: all ``columns``; ``"shuffle"``: one fewer each
            stage); with ``deal="columns"`` ``column_size`` cards to a column
            (``"reverse"``: as many columns as the cards fill; ``"shuffle"``: the
            columns in play, the last one taking every card left over, so with
            few columns it can be long).  :attr:`SoliterGame.max_depth` bounds
            every column of every stage.
        stages: number of deals in a game, at most :data:`MAX_STAGES` (the observation holds the stage as an
            int16); ``None`` = 1 without redeal, 2 for ``"reverse"``, :attr:`first_columns` (down to one column)
            for ``"shuffle"``.
    """

    name: str = "custom"
    deck: str = "52"
    decks: int = 1
    jokers: int = 0
    columns: int | None = 8
    free_cells: int = 4
    deal: str = "rows"
    column_size: int = 13
    king_foundations: bool = False
    redeal: str = "none"
    stages: int | None = None

    def __post_init__(self) -> None:
        def bad(field: str, expected: str) -> None:
            raise ValueError(f"variant {self.name!r}: {field}={getattr(self, field)!r}: expected {expected}")

        if _is_int(self.deck) and int(self.deck) in (52, 36):
            object.__setattr__(self, "deck", str(int(self.deck)))  # deck=36 means deck="36"
        if self.deck not in ("52", "36"):
            bad("deck", "'52' or '36' (the string, or the integer 52 or 36)")
        if not _is_int(self.decks) or self.decks not in (1, 2):
            bad("decks", "1 or 2")
        if not _is_int(self.jokers) or not 0 <= self.jokers <= len(JOKER_CODES):
            bad("jokers", f"an integer 0..{len(JOKER_CODES)}")
        if not _is_int(self.free_cells) or not 0 <= self.free_cells <= 16:
            bad("free_cells", "an integer 0..16")
        if self.deal not in ("rows", "columns"):
            bad("deal", "'rows' or 'columns'")
        if not _is_int(self.column_size) or self.column_size < 1:
            bad("column_size", "a positive integer")
        if self.columns is None:
            if self.deal != "columns":
                bad("columns", "a positive integer (None only with deal='columns')")
            if self.max_columns > MAX_COLUMNS:
                bad("column_size", f"at least {math.ceil(self.num_cards / MAX_COLUMNS)} with columns=None (the "
                                   f"{self.num_cards} cards in {self.column_size}-card columns fill "
                                   f"{self.max_columns} columns; a deal lays out at most {MAX_COLUMNS})")
        elif not _is_int(self.columns) or not 1 <= self.columns <= MAX_COLUMNS:
            bad("columns", f"an integer 1..{MAX_COLUMNS} (or None with deal='columns')")
        if self.redeal not in ("none", "reverse", "shuffle"):
            bad("redeal", "'none', 'reverse' or 'shuffle'")
        if not isinstance(self.king_foundations, bool):
            bad("king_foundations", "True or False")
        if self.king_foundations and self.deck != "52":
            bad("king_foundations", "False with a 36-card deck")
        if self.stages is not None and (not _is_int(self.stages) or not 1 <= self.stages <= MAX_STAGES):
            bad("stages", f"an integer 1..{MAX_STAGES} (the observation holds the stage as an int16) or None")
        if self.redeal == "none" and self.stages not in (None, 1):
            bad("stages", "None or 1 when redeal='none'")
        if self.deal == "columns" and self.columns is not None and self.columns * self.column_size < self.num_cards:
            bad("columns", f"at least {math.ceil(self.num_cards / self.column_size)} to hold {self.num_cards} cards")
        if self.redeal == "shuffle" and self.stages is not None and self.stages > self.first_columns:
            bad("stages", f"at most {self.first_columns} (the first deal's columns: one column fewer each stage)")

    @property
    def num_cards(self) -> int:
        """Cards in the deck, jokers included."""
        return (52 if self.deck == "52" else 36) * self.decks + self.jokers

    @property
    def max_columns(self) -> int:
        """Columns of the first deal (the most there ever are)."""
        if self.columns is not None:
            return self.columns
        return math.ceil(self.num_cards / self.column_size)

    @property
    def first_columns(self) -> int:
        """Columns the first deal lays out: ``columns`` with ``deal="rows"``; with ``deal="columns"``, as many
        ``column_size``-card columns as the cards fill (at most ``columns``)."""
        if self.deal == "rows":
            return self.max_columns
        return min(self.max_columns, max(1, math.ceil(self.num_cards / self.column_size)))

    @property
    def num_stages(self) -> int:
        """Deals in a game (1 when there is no redeal)."""
        if self.stages is not None:
            return self.stages
        return {"none": 1, "reverse": 2, "shuffle": self.first_columns}[self.redeal]

    def with_options(self, **overrides: Any) -> Variant:
        """This variant with some options replaced (unknown names raise ``TypeError``)."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise TypeError(f"unknown Soliter option(s) {unknown}: expected some of {sorted(known - {'name'})}")
        return replace(self, **overrides)


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


#: The variants of the source (``shared/seeds/soliter-ru.txt``), by name.
VARIANTS: dict[str, Variant] = {
    "classic": Variant("classic"),
    "36": Variant("36", deck="36", columns=6, free_cells=4),
    "104": Variant("104", decks=2, columns=10, free_cells=8),
    "104-aces-kings": Variant(
        "104-aces-kings", decks=2, columns=None, free_cells=8, deal="columns", king_foundations=True, redeal="reverse"
    ),
    "joker": Variant("joker", jokers=1),
    "multistage": Variant("multistage", decks=2, columns=8, free_cells=8, redeal="shuffle"),
}


def get_variant(variant: str | Variant = "classic", **overrides: Any) -> Variant:
    """The :class:`Variant` named ``variant`` (or given), with ``overrides`` applied."""
    if isinstance(variant, Variant):
        base = variant
    elif isinstance(variant, str) and variant in VARIANTS:
        base = VARIANTS[variant]
    else:
        raise ValueError(f"unknown Soliter variant {variant!r}: expected one of {sorted(VARIANTS)} or a Variant")
    return base.with_options(**overrides) if overrides else base


class SoliterState(NamedTuple):
    """One position (immutable; hashable).

    Attributes:
        columns: one tuple per column (``max_columns`` of them), bottom card
            (the first dealt, covered by the rest) first; the last card is the
            playable one (the source's «нижняя», "bottom", card).  Columns at index
            ``open_columns`` and above are out of play in this stage.
        cells: one code per free cell, ``EMPTY`` (-1) when free.
        foundations: the number of cards on each foundation pile (see
            :attr:`SoliterGame.piles` for each pile's suit and direction).
        jokers: for each joker in the deck (codes 52, 53, 54), the code of the
            card it stands for, or -1 while it stands for nothing.
        stage: 0 for the first deal, +1 per redeal.
        open_columns: columns in play in this stage.
        seed: seed of the shuffles of later stages (``redeal="shuffle"``).
    """

    columns: tuple[tuple[int, ...], ...]
    cells: tuple[int, ...]
    foundations: tuple[int, ...]
    jokers: tuple[int, ...]
    stage: int
    open_columns: int
    seed: int


class SoliterGame:
    """The rules of one :class:`Variant`: deal, legal moves, apply a move, redeal.

    A move is a pair ``(source, destination)`` of *places*: columns
    ``0..C-1``, then free cells ``C..C+F-1``, then foundation piles
    ``C+F..C+F+P-1`` (``C = max_columns``, ``F = free_cells``, ``P`` piles).
    An action number is ``source * places + destination``; with a redeal
    variant the last action number, :attr:`redeal_action`, is the redeal.
    """

    def __init__(self, variant: str | Variant = "classic", **overrides: Any) -> None:
        v = get_variant(variant, **overrides)
        self.variant = v
        ladder = FULL_LADDER if v.deck == "52" else SHORT_LADDER
        self.levels = len(ladder)
        self.num_columns = v.max_columns
        self.num_cells = v.free_cells
        # foundation piles: (suit, +1) builds up from the ace, (suit, -1) down from the king
        if v.king_foundations:
            self.piles = tuple((s, 1) for s in range(4)) + tuple((s, -1) for s in range(4))
        else:
            self.piles = tuple((s, 1) for _ in range(v.decks) for s in range(4))
        self.num_piles = len(self.piles)
        self.num_places = self.num_columns + self.num_cells + self.num_piles
        self.cell_base = self.num_columns
        self.pile_base = self.num_columns + self.num_cells
        self.has_redeal = v.redeal != "none" and v.num_stages > 1
        self.redeal_action = self.num_places**2 if self.has_redeal else None
        self.num_actions = self.num_places**2 + (1 if self.has_redeal else 0)
        # per-code tables (index 0..54)
        self.level = [0] * _CODES  # rung on the ladder: 1 = ace .. levels = king; 0 = joker / not in deck
        self.suit = [-1] * _CODES
        self.below = [-1] * _CODES  # the card one rung lower in suit (what may be built on it)
        self.above = [-1] * _CODES  # the card one rung higher in suit (what it may be built on)
        self.card_at = {}  # (suit, level) -> code
        for s in range(4):
            for i, r in enumerate(ladder):
                code = 13 * s + r
                self.level[code] = i + 1
                self.suit[code] = s
                self.card_at[s, i + 1] = code
                if i > 0:
                    self.below[code] = 13 * s + ladder[i - 1]
                if i + 1 < len(ladder):
                    self.above[code] = 13 * s + ladder[i + 1]
        self.jokers = JOKER_CODES[: v.jokers]
        self.deck = tuple(sorted(self.card_at[s, lv] for s in range(4) for lv in range(1, self.levels + 1))) * v.decks
        self.deck = tuple(sorted(self.deck)) + self.jokers
        self.num_real = len(self.deck) - len(self.jokers)
        self._deck_count = Counter(self.deck)
        self.piles_of_suit = [[p for p, (s, _d) in enumerate(self.piles) if s == suit] for suit in range(4)]
        #: the most cards a deal of any stage lays out in one column
        self.deal_depth = self._deal_depth()
        #: the most cards a column can ever hold (the observation's slots per column)
        self.max_depth = self._max_depth()

    # ------------------------------------------------------------------ deal
    def _deal_depth(self) -> int:
        """The most cards a deal of any stage lays out in one column (a redeal deals fewer cards, never deeper).

        Each distinct layout is dealt once: only a shuffle redeal (at most :attr:`Variant.first_columns` stages) lays
        out a different number of columns each stage; every other redeal lays them out as its first redeal did."""
        n, v = len(self.deck), self.variant
        stages = v.num_stages if v.redeal == "shuffle" else min(v.num_stages, 2)
        widths = {self._open_columns(stage, n) for stage in range(stages)}
        return max(max(len(c) for c in self._lay_out(range(n), width)) for width in widths)

    def _max_depth(self) -> int:
        """The most cards a column can ever hold.

        Without jokers a column is a dealt part (at most :attr:`deal_depth` cards) and on it a run built down in
        suit (at most ``levels`` cards), so ``deal_depth + levels`` bounds it.  A joker breaks that bound: a joker that
        swaps onto the end of a run stands for nothing, so any card but a king may start a new run on it, and a
        column can gather run after run; with jokers the bound is the whole deck.  No column holds more than the
        deck."""
        n = len(self.deck)
        if self.jokers:
            return n
        return min(n, self.deal_depth + self.levels)

    def shuffled_deck(self, rng: np.random.Generator) -> list[int]:
        """The deck in a random dealing order drawn from ``rng``."""
        order = rng.permutation(len(self.deck))
        return [self.deck[i] for i in order]

    def deal(self, rng: np.random.Generator) -> SoliterState:
        """A random first deal, drawn from ``rng`` (the seed of later shuffles too)."""
        return self.init(self.shuffled_deck(rng), seed=int(rng.integers(2**31)))

    def _open_columns(self, stage: int, cards: int) -> int:
        """The columns a deal of ``cards`` cards in stage ``stage`` lays out (see :attr:`Variant.redeal`)."""
        v = self.variant
        if stage > 0 and v.redeal == "shuffle":
            return v.first_columns - stage  # one column fewer than the stage before
        if v.deal == "rows":
            return self.num_columns
        return min(self.num_columns, max(1, math.ceil(cards / v.column_size)))

    def _lay_out(self, cards: Sequence[int], open_columns: int) -> tuple[tuple[int, ...], ...]:
        """``cards`` dealt as the variant deals: row by row over ``open_columns`` columns, or ``column_size`` to a
        column (the last column in play taking whatever is left over)."""
        v = self.variant
        cols: list[list[int]] = [[] for _ in range(self.num_columns)]
        if v.deal == "rows":
            for i, c in enumerate(cards):
                cols[i % open_columns].append(c)
        else:
            for i, c in enumerate(cards):
                cols[min(i // v.column_size, open_columns - 1)].append(c)
        return tuple(tuple(c) for c in cols)

    def init(self, deal: Sequence[Any] | Sequence[Sequence[Any]], seed: int = 0) -> SoliterState:
        """The starting state of an explicit deal.

        ``deal`` is either the deck in dealing order (codes or text such as
        ``"T♠"``, ``"10s"``, ``"JK"``), laid out as the variant deals, or a list of
        ``max_columns`` columns, each listed from its bottom card to its playable
        card.  Either way it must hold exactly the variant's deck.  ``seed`` (a non-negative integer) seeds the
        shuffles of later stages (``redeal="shuffle"``).
        """
        if not _is_int(seed):
            raise TypeError(f"seed={seed!r}: expected a non-negative integer (the seed of later stages' shuffles)")
        if seed < 0:
            raise ValueError(f"seed={seed!r}: expected a non-negative integer (the seed of later stages' shuffles)")
        if isinstance(deal, str):
            deal = deal.replace(",", " ").split()
        if isinstance(deal, (Mapping, bytes, bytearray)) or not isinstance(deal, (Sequence, np.ndarray)):
            raise TypeError(f"deal {deal!r}: expected the deck in dealing order (a list of cards, or text) or a list "
                            f"of columns, got {type(deal).__name__}")
        deal = list(deal)
        nested = bool(deal) and all(isinstance(c, (list, tuple, np.ndarray)) for c in deal)
        if nested:
            if len(deal) != self.num_columns:
                raise ValueError(
                    f"deal has {len(deal)} columns: expected {self.num_columns} for variant {self.variant.name!r}"
                )
            wheres = [f"deal[{i}][{j}]" for i, col in enumerate(deal) for j in range(len(col))]
            flat = _name_jokers([self._code(c, w) for c, w in zip((c for col in deal for c in col), wheres)], wheres)
            cards = iter(flat)
            cols = tuple(tuple(next(cards) for _ in col) for col in deal)
        else:
            wheres = [f"deal[{i}]" for i in range(len(deal))]
            flat = _name_jokers([self._code(c, w) for c, w in zip(deal, wheres)], wheres)
            cols = None
        self._check_deck(flat)
        if cols is not None:
            longest = self.deal_depth
            for i, col in enumerate(cols):
                if len(col) > longest:
                    raise ValueError(f"deal column {i + 1} has {len(col)} cards: expected at most {longest} "
                                     f"(the deepest column a deal of any stage of variant {self.variant.name!r} "
                                     f"lays out)")
        open_cols = self._open_columns(0, len(flat))
        if cols is None:
            cols = self._lay_out(flat, open_cols)
        else:
            out = (f"column {self.num_columns} is" if open_cols + 1 == self.num_columns
                   else f"columns {open_cols + 1}..{self.num_columns} are")
            for i, col in enumerate(cols[open_cols:], start=open_cols):
                if col:
                    raise ValueError(
                        f"deal column {i + 1} has {len(col)} card{'' if len(col) == 1 else 's'} "
                        f"({' '.join(self.card_name(c) for c in col)}): "
                        f"expected it empty, since the first deal of variant {self.variant.name!r} lays out "
                        f"{open_cols} columns ({out} out of play; a redeal gathers only the columns in play)")
        state = SoliterState(
            columns=cols,
            cells=(EMPTY,) * self.num_cells,
            foundations=(0,) * self.num_piles,
            jokers=(-1,) * len(self.jokers),
            stage=0,
            open_columns=open_cols,
            seed=int(seed),
        )
        return state

    def _code(self, c: Any, where: str) -> int | None:
        """A card of a deal as its code; ``None`` for a plain joker (``'JK'``), whose code :func:`_name_jokers`
        gives; ``'JK1'``..``'JK3'`` are the jokers the env names so."""
        if isinstance(c, str):
            token = c.strip()
            if token.lower() in ("jk", "joker", "*", "🃏"):
                return None
            if token.lower() in _NUMBERED_JOKERS:
                return _NUMBERED_JOKERS[token.lower()]
            try:
                return parse_card(token)
            except ValueError as exc:
                raise ValueError(f"{where}: {exc}") from None
        if not _is_int(c):
            raise TypeError(f"{where}: card {c!r} is neither a card code nor card text such as 'T♠'")
        return int(c)

    def _check_deck(self, flat: list[int]) -> None:
        got = Counter(flat)
        if got != self._deck_count:
            missing = sorted((self._deck_count - got).elements())
            extra = sorted((got - self._deck_count).elements())
            parts = []
            if missing:
                parts.append("missing " + " ".join(_code_text(c) for c in missing[:12]))
            if extra:
                parts.append("unexpected " + " ".join(_code_text(c) for c in extra[:12]))
            raise ValueError(
                f"deal of {len(flat)} cards does not match the {self.variant.name!r} deck of {len(self.deck)} "
                f"cards: {'; '.join(parts)}"
            )

    def check_state(self, state: Any, where: str = "state") -> SoliterState:
        """``state`` if it is a position of this variant, else an error naming what is wrong: its shape, its types
        (tuples of int codes, as play makes them), the cards in play and home (exactly the variant's deck) and the
        jokers' meanings."""
        if not isinstance(state, SoliterState):
            raise TypeError(f"{where}={state!r}: expected a SoliterState")
        name = self.variant.name
        for field in ("columns", "cells", "foundations", "jokers"):
            value = getattr(state, field)
            if not isinstance(value, tuple):
                raise TypeError(f"{where}: {field} is a {type(value).__name__}: expected a tuple (a position is "
                                f"immutable and hashable)")
        for i, col in enumerate(state.columns):
            if not isinstance(col, tuple):
                raise TypeError(f"{where}: columns[{i}] is a {type(col).__name__}: expected a tuple of card codes")
        shape = {"columns": self.num_columns, "cells": self.num_cells, "foundations": self.num_piles,
                 "jokers": len(self.jokers)}
        for field, size in shape.items():
            if len(getattr(state, field)) != size:
                raise ValueError(f"{where}: {len(getattr(state, field))} {field}: the {name!r} variant has {size} "
                                 f"(a position of another variant?)")
        entries = [(f"columns[{i}][{j}]", c) for i, col in enumerate(state.columns) for j, c in enumerate(col)]
        entries += [(f"{field}[{i}]", v) for field in ("cells", "foundations", "jokers")
                    for i, v in enumerate(getattr(state, field))]
        entries += [(field, getattr(state, field)) for field in ("stage", "open_columns", "seed")]
        for at, value in entries:
            if not _is_int(value):
                raise TypeError(f"{where}: {at}={value!r}: expected an integer")
        if state.seed < 0:
            raise ValueError(f"{where}: seed={state.seed}: expected a non-negative integer (the seed of later "
                             f"stages' shuffles)")
        for i, col in enumerate(state.columns):
            if len(col) > self.max_depth:
                raise ValueError(f"{where}: columns[{i}] (column {i + 1}) has {len(col)} cards: a column of the "
                                 f"{name!r} variant holds at most {self.max_depth} (game.max_depth)")
        if not 1 <= state.open_columns <= self.num_columns or not 0 <= state.stage < self.variant.num_stages:
            raise ValueError(f"{where}: open_columns={state.open_columns}, stage={state.stage}: expected 1.."
                             f"{self.num_columns} and 0..{self.variant.num_stages - 1} in the {name!r} variant")
        if any(not 0 <= n <= self.levels for n in state.foundations):
            raise ValueError(f"{where}: foundations={state.foundations}: expected counts 0..{self.levels}")
        real = set(self.card_at.values())
        for i, y in enumerate(state.jokers):
            if y != EMPTY and y not in real:
                raise ValueError(f"{where}: jokers[{i}]={y!r}: expected -1 (standing for nothing) or the code of a "
                                 f"card of the {name!r} deck (0..51) that the joker stands for")
        loose = [c for col in state.columns for c in col] + [c for c in state.cells if c != EMPTY]
        in_play, home = Counter(loose), Counter(self._home_cards(state))
        got = in_play + home
        if got != self._deck_count:
            parts = []
            for c in sorted(got - self._deck_count):
                if c not in self._deck_count:
                    parts.append(f"{_code_text(c)} is not in the deck")
                else:
                    parts.append(f"{got[c]} {_code_text(c)} ({in_play[c]} in play, {home[c]} home) where the deck has "
                                 f"{self._deck_count[c]}")
            missing = sorted((self._deck_count - got).elements())
            if missing:
                more = " ..." if len(missing) > 12 else ""
                parts.append("missing " + " ".join(_code_text(c) for c in missing[:12]) + more)
            raise ValueError(f"{where}: {len(loose)} cards in play and {sum(state.foundations)} home: the {name!r} "
                             f"variant has {len(self.deck)} cards: {'; '.join(parts)}")
        self._check_open_columns(state, where, len(loose))
        self._check_joker_meanings(state, where)
        if not self.jokers and self.max_depth < len(self.deck):
            # Without jokers a column only grows by a run built down in suit on its last card, so a column whose k-th
            # card has rung r can reach k + r - 1 cards; a position that could outgrow max_depth is no position of
            # this variant (none that play reaches can).
            for i, col in enumerate(state.columns):
                reach, k = max((k + 1 + self.level[c] - 1, k) for k, c in enumerate(col)) if col else (0, 0)
                if reach > self.max_depth:
                    raise ValueError(
                        f"{where}: columns[{i}] (column {i + 1}) has {len(col)} cards and could grow to {reach}: "
                        f"its card {k + 1} ({card_text(col[k])}) could take a run of {self.level[col[k]] - 1} cards "
                        f"once the cards above it are gone, and a column of the {name!r} variant holds at most "
                        f"{self.max_depth} (game.max_depth)")
        return state

    def _check_open_columns(self, state: SoliterState, where: str, in_play: int) -> None:
        """The columns in play must be as many as the deal of ``state.stage`` lays out, and the others empty."""
        v, stage, oc = self.variant, state.stage, state.open_columns
        first = v.first_columns
        if stage == 0:
            low = high = first
            why = f"the first deal lays out {first} columns"
        elif v.redeal == "shuffle":
            low = high = first - stage
            why = f"the first deal lays out {first} columns and each redeal one fewer"
        elif v.deal == "rows":
            low = high = self.num_columns
            why = f"every deal lays out all {self.num_columns} columns"
        else:  # a reverse redeal of column_size-card columns: as many as the cards then in play filled
            low, high = self._open_columns(stage, in_play), first
            why = (f"a redeal lays out {v.column_size}-card columns as far as the cards go, and the {in_play} cards "
                   f"in play fill at least {low}")
        if not low <= oc <= high:
            expected = str(low) if low == high else f"{low}..{high}"
            raise ValueError(f"{where}: open_columns={oc} at stage {stage}: expected {expected} in the "
                             f"{v.name!r} variant ({why})")
        for i, col in enumerate(state.columns[oc:], start=oc):
            if col:
                cards = " ".join(self.card_name(c) for c in col)
                n = f"{len(col)} card{'' if len(col) == 1 else 's'}"
                raise ValueError(f"{where}: columns[{i}] (column {i + 1}) holds {n} ({cards}) but is out "
                                 f"of play ({oc} columns in play at stage {stage}): expected it empty (its cards "
                                 f"could never be played, and a redeal gathers only the columns in play)")

    def _check_joker_meanings(self, state: SoliterState, where: str) -> None:
        """A joker stands for a card only in a column in play (a joker that moves stands for nothing until placed on a
        column, so never in a free cell), and only for a card with a copy off the foundations that no other joker
        stands for."""
        in_column = {c for col in state.columns[: state.open_columns] for c in col if c >= NUM_STANDARD}
        for j, y in enumerate(state.jokers):
            if y == EMPTY:
                continue
            joker = NUM_STANDARD + j
            if joker not in in_column:
                place = next((f"cell {i + 1}" for i, c in enumerate(state.cells) if c == joker), "a column out of play")
                raise ValueError(f"{where}: jokers[{j}]={y} ({self.card_name(joker)} standing for {card_text(y)}), but "
                                 f"{self.card_name(joker)} is in {place}: expected -1 (a joker stands for a card only "
                                 f"in a column it was placed on; in a free cell it stands for nothing)")
        for y, n in Counter(y for y in state.jokers if y != EMPTY).items():
            free = self.variant.decks - self.copies_home(state, y)
            if n > free:
                names = " and ".join(self.card_name(NUM_STANDARD + j) for j, m in enumerate(state.jokers) if m == y)
                copies = "no copy" if free == 0 else f"{free} cop{'y' if free == 1 else 'ies'}"
                raise ValueError(f"{where}: {names} stand{'s' if n == 1 else ''} for {card_text(y)}, which has "
                                 f"{copies} off the foundations: expected each joker's card to have a copy off the "
                                 f"foundations that no other joker stands for")

    def _home_cards(self, state: SoliterState) -> list[int]:
        """The cards on the foundations (each pile holds the first ``count`` rungs from its end of the ladder)."""
        out = []
        for (s, d), count in zip(self.piles, state.foundations, strict=True):
            rungs = range(1, count + 1) if d > 0 else range(self.levels - count + 1, self.levels + 1)
            out += [self.card_at[s, lv] for lv in rungs]
        return out

    # ------------------------------------------------------------------ queries
    def place_name(self, place: int) -> str:
        """A readable name of a place: ``'column 3'``, ``'cell 2'``, ``'foundation 3 (♥ up)'`` (numbers 1-based;
        a foundation's suit and direction: ``down`` for the king foundations of ``king_foundations=True``)."""
        if 0 <= place < self.cell_base:
            return f"column {place + 1}"
        if self.cell_base <= place < self.pile_base:
            return f"cell {place - self.cell_base + 1}"
        if self.pile_base <= place < self.num_places:
            s, d = self.piles[place - self.pile_base]
            return f"foundation {place - self.pile_base + 1} ({SUITS[s]} {'up' if d > 0 else 'down'})"
        return f"place {place}"

    def encode(self, source: int, destination: int) -> int:
        """The action number of the move ``source -> destination``."""
        n = self.num_places
        for name, place in (("source", source), ("destination", destination)):
            if not _is_int(place):
                raise TypeError(f"move ({source!r}, {destination!r}): {name} {place!r} is not an integer: expected a "
                                f"place 0..{n - 1}")
        if not (0 <= source < n and 0 <= destination < n):
            raise ValueError(f"move ({source}, {destination}): places must be 0..{n - 1}")
        return int(source) * n + int(destination)

    def decode(self, action: int) -> tuple[int, int] | None:
        """The ``(source, destination)`` of an action number (``None`` for the redeal)."""
        if not _is_int(action):  # before comparing: 576.0 == 576 would read a float as the redeal
            raise TypeError(f"action {action!r} is not an integer: expected 0..{self.num_actions - 1}")
        if self.has_redeal and action == self.redeal_action:
            return None
        if not 0 <= action < self.num_places**2:
            raise ValueError(f"action {action!r} out of range: expected 0..{self.num_actions - 1}")
        return divmod(int(action), self.num_places)

    def is_won(self, state: SoliterState) -> bool:
        """Whether every card but the jokers is on the foundations."""
        return sum(state.foundations) == self.num_real

    def cards_home(self, state: SoliterState) -> int:
        """Cards on the foundations."""
        return sum(state.foundations)

    def pile_needs(self, state: SoliterState, pile: int) -> int:
        """The ladder rung the pile takes next (0 when full)."""
        count = state.foundations[pile]
        if count >= self.levels:
            return 0
        return count + 1 if self.piles[pile][1] > 0 else self.levels - count

    def pile_top(self, state: SoliterState, pile: int) -> int:
        """The code of a pile's top card (``EMPTY`` when empty)."""
        count = state.foundations[pile]
        if count == 0:
            return EMPTY
        s, d = self.piles[pile]
        return self.card_at[s, count if d > 0 else self.levels - count + 1]

    def copies_home(self, state: SoliterState, code: int) -> int:
        """How many copies of a card are on the foundations."""
        lv, n = self.level[code], 0
        for p in self.piles_of_suit[self.suit[code]]:
            count = state.foundations[p]
            if self.piles[p][1] > 0:
                n += count >= lv
            else:
                n += count >= self.levels - lv + 1
        return n

    def identity(self, state: SoliterState, code: int) -> int:
        """The card a code plays as: itself, or the card a joker stands for (-1: none)."""
        if code >= NUM_STANDARD:
            return state.jokers[code - NUM_STANDARD]
        return code

    def _joker_may_stand(self, state: SoliterState, code: int, mover: int = EMPTY) -> bool:
        """Whether a joker may stand for ``code``: some copy of it is off the foundations with no joker standing for
        it.  ``mover`` is the joker being placed: its own current meaning is disregarded (it gives it up by moving)."""
        if code < 0:
            return False
        free = self.variant.decks - self.copies_home(state, code)
        return free > sum(1 for j, y in enumerate(state.jokers) if y == code and NUM_STANDARD + j != mover)

    def accepts(self, state: SoliterState, tail: int, card: int) -> bool:
        """Whether ``card`` may be built on the column tail ``tail`` (``EMPTY``: an empty column).

        A joker ``card`` is judged as it will be once moved: standing for nothing, so its current meaning does not
        count against the meaning it would take here (moving it on to an equivalent spot is legal)."""
        if tail == EMPTY:
            return True
        if tail < NUM_STANDARD:
            if card < NUM_STANDARD:
                return self.below[tail] == card
            return self._joker_may_stand(state, self.below[tail], card)
        y = state.jokers[tail - NUM_STANDARD]
        if y >= 0:
            if card < NUM_STANDARD:
                return self.below[y] == card
            return self._joker_may_stand(state, self.below[y], card)
        if card >= NUM_STANDARD:
            return False  # a joker on a joker that stands for nothing would stand for nothing
        return self._joker_may_stand(state, self.above[card])

    def card_name(self, code: int) -> str:
        """:func:`card_text`, with the jokers numbered (``'JK2'``) when the deck has more than one."""
        if code in JOKER_CODES and len(self.jokers) > 1:
            return f"JK{code - NUM_STANDARD + 1}"
        return card_text(code)

    def _why_not_onto(self, state: SoliterState, tail: int, card: int) -> str:
        """Why ``card`` may not be built on the column tail ``tail`` (where :meth:`accepts` says no), naming both."""
        name = self.card_name(card)
        if tail < NUM_STANDARD:
            on, y = card_text(tail), tail
        else:
            y = state.jokers[tail - NUM_STANDARD]
            on = f"{self.card_name(tail)} (standing for {card_text(y)})" if y >= 0 else self.card_name(tail)
        if card < NUM_STANDARD:
            if y >= 0:  # a real card, or a joker standing for one
                if self.below[y] < 0:  # nothing builds on the lowest rank
                    return f"{name} cannot go on {on}, which takes nothing: no card is below an ace"
                return f"{name} cannot go on {on}, which takes only {card_text(self.below[y])} (down in suit)"
            if self.above[card] < 0:
                return (f"{name} cannot go on {on}, which stands for nothing: under {name} it would stand for the "
                        f"card above a king, and there is none")
            return (f"{name} cannot go on {on}, which stands for nothing: under {name} it would stand for "
                    f"{self._why_no_stand(state, self.above[card])}")
        if y < 0:
            return (f"{name} cannot go on {on}, which stands for nothing: a joker on it would stand for nothing "
                    f"either (only a real card may go on a joker that stands for nothing)")
        if self.below[y] < 0:
            return (f"{name} cannot go on {on}: there it would stand for the card below {card_text(y)}, and no card "
                    f"is below an ace")
        return f"{name} cannot go on {on}: there it would stand for {self._why_no_stand(state, self.below[y], card)}"

    def _why_no_stand(self, state: SoliterState, code: int, mover: int = EMPTY) -> str:
        """``code`` and why no joker may stand for it now (``mover``: the joker being placed, disregarded)."""
        what = card_text(code)
        home = self.copies_home(state, code)
        others = [self.card_name(NUM_STANDARD + j) for j, y in enumerate(state.jokers)
                  if y == code and NUM_STANDARD + j != mover]
        if self.variant.decks == 1:
            return f"{what}, which is already home" if home else f"{what}, for which {others[0]} already stands"
        parts = []
        if home:
            parts.append("both copies are home" if home >= self.variant.decks else "one copy is home")
        if others:
            parts.append(f"{' and '.join(others)} already stand{'s' if len(others) == 1 else ''} for "
                         f"{'one' if len(others) == 1 else 'both'}")
        return f"{what}, but {' and '.join(parts)}"

    def _pile_for(self, state: SoliterState, card: int) -> list[int]:
        if card >= NUM_STANDARD:
            return []
        lv = self.level[card]
        return [p for p in self.piles_of_suit[self.suit[card]] if self.pile_needs(state, p) == lv]

    def legal_moves(self, state: SoliterState) -> list[tuple[int, int]]:
        """Every legal ``(source, destination)`` move (the redeal is separate: :meth:`can_redeal`)."""
        moves: list[tuple[int, int]] = []
        cols, cells = state.columns, state.cells
        n_open = state.open_columns
        tails = [col[-1] if col else EMPTY for col in cols[:n_open]]
        empty_cell = [self.cell_base + i for i, c in enumerate(cells) if c == EMPTY]
        sources = [(i, t) for i, t in enumerate(tails) if t != EMPTY]
        sources += [(self.cell_base + i, c) for i, c in enumerate(cells) if c != EMPTY]
        for src, card in sources:
            for p in self._pile_for(state, card):
                moves.append((src, self.pile_base + p))
            for j, t in enumerate(tails):
                if j != src and self.accepts(state, t, card):
                    moves.append((src, j))
            for dst in empty_cell:
                if dst != src:
                    moves.append((src, dst))
        if self.variant.king_foundations:
            for s in range(4):
                up, down = s, 4 + s
                if state.foundations[up] and self.pile_needs(state, down) == state.foundations[up]:
                    moves.append((self.pile_base + up, self.pile_base + down))
        return moves

    def has_foundation_move(self, state: SoliterState) -> bool:
        """Whether some card can go to a foundation now from a column or a free cell.  (The pass of an ace
        foundation's top card to its king foundation in ``104-aces-kings`` does not count: the source only permits
        it -- "Допускается перекладка" -- so it never has to be made before a redeal, which it would cost the ace
        foundation's cards.)"""
        return any(dst >= self.pile_base and src < self.pile_base for src, dst in self.legal_moves(state))

    def _rests(self, state: SoliterState, col: tuple[int, ...]) -> bool:
        """Whether a column's playable card lies on a card that takes it (moving it would only shift a built run)."""
        if len(col) < 2:
            return False
        under, card = col[-2], col[-1]
        if card >= NUM_STANDARD:  # a joker rests when it stands for the card that fits there
            y, u = state.jokers[card - NUM_STANDARD], self.identity(state, under)
            return y >= 0 and u >= 0 and self.below[u] == y
        return self.accepts(state, under, card)

    def has_build_move(self, state: SoliterState) -> bool:
        """Whether a card can be built onto another card in a way that changes the game: from a free cell, or from a
        column where it does not already lie on a card that takes it.  (Moves to free cells and empty columns, and
        moving a built card to a twin of the card it lies on, can go back and forth forever and do not count.)"""
        cols = state.columns[: state.open_columns]
        tails = [col[-1] if col else EMPTY for col in cols]
        sources = [(i, col[-1]) for i, col in enumerate(cols) if col and not self._rests(state, col)]
        sources += [(-1, c) for c in state.cells if c != EMPTY]
        return any(j != src and t != EMPTY and self.accepts(state, t, card)
                   for src, card in sources for j, t in enumerate(tails))

    def can_redeal(self, state: SoliterState) -> bool:
        """Whether the redeal is allowed: a redeal variant, stages left, and the game has stopped -- no card can go
        to a foundation and none can be built onto another card (:meth:`has_build_move`)."""
        return (
            self.has_redeal
            and state.stage + 1 < self.variant.num_stages
            and not self.is_won(state)
            and not self.has_foundation_move(state)
            and not self.has_build_move(state)
        )

    def legal_actions(self, state: SoliterState) -> list[int]:
        """Every legal action number, the redeal included when allowed."""
        n = self.num_places
        acts = [s * n + d for s, d in self.legal_moves(state)]
        if self.can_redeal(state):
            acts.append(self.redeal_action)
        return acts

    def action_mask(self, state: SoliterState) -> np.ndarray:
        """Legal actions as an int8 array of shape ``(num_actions,)``."""
        mask = np.zeros(self.num_actions, dtype=np.int8)
        acts = self.legal_actions(state)
        if acts:
            mask[acts] = 1
        return mask

    def why_illegal(self, state: SoliterState, action: Any) -> str | None:
        """Why ``action`` is illegal in ``state`` (``None`` if it is legal)."""
        if not _is_int(action):
            return f"action {action!r} is not an integer: expected an integer 0..{self.num_actions - 1}"
        if not 0 <= int(action) < self.num_actions:
            return f"action {action!r} out of range: expected an integer 0..{self.num_actions - 1}"
        action = int(action)
        if self.has_redeal and action == self.redeal_action:
            if state.stage + 1 >= self.variant.num_stages:
                return f"redeal refused: this is the last of {self.variant.num_stages} stages"
            if self.is_won(state):
                return "redeal refused: the game is won"
            if self.has_foundation_move(state):
                return "redeal refused: a card can still go to a foundation"
            if self.has_build_move(state):
                return ("redeal refused: a card can still be built onto another card (from a free cell, or off a card "
                        "that does not take it), so the game has not stopped")
            return None
        src, dst = divmod(action, self.num_places)
        what = f"action {action} ({self.place_name(src)} -> {self.place_name(dst)})"
        if src == dst:
            return f"{what}: source and destination are the same place"
        card = self._card_at_place(state, src)
        if src < self.cell_base and src >= state.open_columns:
            return f"{what}: {self.place_name(src)} is not in play in this stage ({state.open_columns} columns)"
        if dst < self.cell_base and dst >= state.open_columns:
            return f"{what}: {self.place_name(dst)} is not in play in this stage ({state.open_columns} columns)"
        if card == EMPTY:
            return f"{what}: {self.place_name(src)} is empty"
        if src >= self.pile_base:
            if not self.variant.king_foundations:
                return f"{what}: cards never leave the foundations in this variant"
            p, q = src - self.pile_base, dst - self.pile_base
            if self.piles[p][1] < 0 or not (0 <= q < self.num_piles and self.piles[q] == (self.piles[p][0], -1)):
                return f"{what}: a foundation card may only pass from an ace foundation to the king foundation of its suit"
            need = self.pile_needs(state, q)
            return None if need == self.level[card] else (
                f"{what}: {card_text(card)} does not fit the king foundation, which takes "
                f"{card_text(self.card_at[self.piles[q][0], need]) if need else 'nothing more'}"
            )
        name = self.card_name(card)
        if dst >= self.pile_base:
            if card >= NUM_STANDARD:
                return f"{what}: a joker never goes to a foundation"
            p = dst - self.pile_base
            s, _d = self.piles[p]
            need = self.pile_needs(state, p)
            if s != self.suit[card] or need != self.level[card]:
                takes = card_text(self.card_at[s, need]) if need else "nothing more (complete)"
                return f"{what}: {name} does not fit {self.place_name(dst)}, which takes {takes}"
            return None
        if dst >= self.cell_base:
            occupant = state.cells[dst - self.cell_base]
            return None if occupant == EMPTY else f"{what}: {self.place_name(dst)} already holds {self.card_name(occupant)}"
        col = state.columns[dst]
        tail = col[-1] if col else EMPTY
        if self.accepts(state, tail, card):
            return None
        return f"{what}: {self._why_not_onto(state, tail, card)}"

    def _card_at_place(self, state: SoliterState, place: int) -> int:
        if place < self.cell_base:
            col = state.columns[place]
            return col[-1] if col else EMPTY
        if place < self.pile_base:
            return state.cells[place - self.cell_base]
        return self.pile_top(state, place - self.pile_base)

    # ------------------------------------------------------------------ apply
    def apply(self, state: SoliterState, action: int, check: bool = True) -> tuple[SoliterState, int]:
        """The state after ``action`` and the number of cards it put on the foundations.

        Raises :class:`IllegalMoveError` (naming the move and the reason) if the
        action is illegal and ``check`` is true.
        """
        if check:
            reason = self.why_illegal(state, action)
            if reason is not None:
                raise IllegalMoveError(reason)
        if self.has_redeal and action == self.redeal_action:
            return self.redeal(state), 0
        src, dst = divmod(action, self.num_places)
        return self.move(state, src, dst)

    def move(self, state: SoliterState, src: int, dst: int) -> tuple[SoliterState, int]:
        """Apply a legal move (unchecked) and return ``(new_state, cards put on the foundations)``."""
        cols, cells, found, jokers = state.columns, state.cells, state.foundations, state.jokers
        cb, pb = self.cell_base, self.pile_base
        new_cols = new_cells = new_found = None
        # take the card
        if src < cb:
            col = cols[src]
            card = col[-1]
            new_cols = list(cols)
            new_cols[src] = col[:-1]
        elif src < pb:
            card = cells[src - cb]
            new_cells = list(cells)
            new_cells[src - cb] = EMPTY
        else:
            card = self.pile_top(state, src - pb)
            new_found = list(found)
            new_found[src - pb] -= 1
        if card >= NUM_STANDARD and jokers[card - NUM_STANDARD] >= 0:
            jokers = list(jokers)
            jokers[card - NUM_STANDARD] = -1  # a joker that moves stands for nothing until placed
            jokers = tuple(jokers)
        home = 0
        # put it down
        if dst < cb:
            if new_cols is None:
                new_cols = list(cols)
            target = new_cols[dst]
            if target:
                tail = target[-1]
                if card >= NUM_STANDARD:  # the joker takes the meaning of the card one rung below the tail
                    jokers = list(jokers)
                    jokers[card - NUM_STANDARD] = self.below[self.identity(state._replace(jokers=tuple(jokers)), tail)]
                    jokers = tuple(jokers)
                elif tail >= NUM_STANDARD and jokers[tail - NUM_STANDARD] < 0:
                    jokers = list(jokers)
                    jokers[tail - NUM_STANDARD] = self.above[card]
                    jokers = tuple(jokers)
            new_cols[dst] = target + (card,)
        elif dst < pb:
            if new_cells is None:
                new_cells = list(cells)
            new_cells[dst - cb] = card
        else:
            if new_found is None:
                new_found = list(found)
            new_found[dst - pb] += 1
            home = 0 if src >= pb else 1
        new = SoliterState(
            tuple(new_cols) if new_cols is not None else cols,
            tuple(new_cells) if new_cells is not None else cells,
            tuple(new_found) if new_found is not None else found,
            jokers,
            state.stage,
            state.open_columns,
            state.seed,
        )
        if jokers and any(y >= 0 for y in jokers):
            new = self._swap_jokers(new)
        return new, home

    def _swap_jokers(self, state: SoliterState) -> SoliterState:
        """Swap each joker with the card it stands for once that card is playable."""
        for j, y in enumerate(state.jokers):
            if y < 0:
                continue
            joker = NUM_STANDARD + j
            where = None
            for i in range(state.open_columns):
                col = state.columns[i]
                if col and col[-1] == y:
                    where = ("col", i)
                    break
            if where is None:
                for i, c in enumerate(state.cells):
                    if c == y:
                        where = ("cell", i)
                        break
            if where is None:
                continue
            cols = [list(c) for c in state.columns]
            cells = list(state.cells)
            # the joker's own place (it is in a column: only placed jokers stand for a card)
            for ci, col in enumerate(cols):
                if joker in col:
                    col[col.index(joker)] = y
                    break
            if where[0] == "col":
                cols[where[1]][-1] = joker
            else:
                cells[where[1]] = joker
            jokers = list(state.jokers)
            jokers[j] = -1
            state = state._replace(columns=tuple(tuple(c) for c in cols), cells=tuple(cells), jokers=tuple(jokers))
        return state

    def redeal(self, state: SoliterState) -> SoliterState:
        """The next stage's deal: gather the cards not on the foundations and lay them out again."""
        v = self.variant
        gathered = [c for col in state.columns[: state.open_columns] for c in col]
        gathered += [c for c in state.cells if c != EMPTY]
        stage = state.stage + 1
        if v.redeal == "reverse":
            cards = gathered[::-1]  # the last card gathered becomes the first dealt
        else:
            rng = np.random.default_rng([state.seed, stage])
            cards = [gathered[i] for i in rng.permutation(len(gathered))]
        open_cols = self._open_columns(stage, len(cards))  # laid out again as the first deal was
        return SoliterState(
            self._lay_out(cards, open_cols),
            (EMPTY,) * self.num_cells,
            state.foundations,
            (-1,) * len(state.jokers),
            stage,
            open_cols,
            state.seed,
        )

    def is_stuck(self, state: SoliterState) -> bool:
        """Whether no legal action is left (the game is then lost unless already won)."""
        return not self.legal_moves(state) and not self.can_redeal(state)

    # ------------------------------------------------------------------ text
    def text(self, state: SoliterState) -> str:
        """A plain-text picture of the position."""
        lines = []
        pile_txt = []
        for p, (s, d) in enumerate(self.piles):
            top = self.pile_top(state, p)
            pile_txt.append(f"{card_text(top) if top != EMPTY else '[]'}{'^' if d > 0 else 'v'}")
        lines.append("foundations: " + " ".join(pile_txt) + f"   ({self.cards_home(state)}/{self.num_real} home)")
        lines.append("cells:       " + " ".join(self.card_name(c) for c in state.cells))
        if self.has_redeal:
            lines.append(f"stage {state.stage + 1}/{self.variant.num_stages}, {state.open_columns} columns")
        cols = state.columns[: state.open_columns]
        depth = max((len(c) for c in cols), default=0)
        lines.append("      " + " ".join(f"{i + 1:>3}" for i in range(len(cols))))
        for r in range(depth):
            row = []
            for col in cols:
                row.append(f"{self.card_name(col[r]):>3}" if r < len(col) else "   ")
            lines.append(f"{r + 1:>4}  " + " ".join(row).rstrip())
        if any(y >= 0 for y in state.jokers):
            lines.append("jokers: " + ", ".join(f"{self.card_name(NUM_STANDARD + i)}={card_text(y)}"
                                                for i, y in enumerate(state.jokers) if y >= 0))
        return "\n".join(lines)


def deck_codes(variant: str | Variant = "classic") -> list[int]:
    """The card codes of a variant's deck (two-deck variants list each code twice)."""
    return list(SoliterGame(variant).deck)

