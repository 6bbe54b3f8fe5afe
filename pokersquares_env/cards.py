"""Cards: integer codes, parsing and formatting.

A card is an ``int`` code:

* ``0..51`` -- a French-deck card, ``code = suit * 13 + rank`` with ranks
  ``0..12`` standing for ``2 3 4 5 6 7 8 9 T J Q K A`` and suits ``0..3`` for
  clubs, diamonds, hearts, spades (``♣ ♦ ♥ ♠``).
* ``52`` and ``53`` -- the first and second joker (distinct codes, so that no
  code ever appears twice on a board).
* ``-1`` (:data:`EMPTY`) -- an empty cell.

Parsing accepts the spellings people actually write: ``T♠``, ``10♠``, ``Ts``,
``10s``, ``t♠``, Russian ranks ``В`` (jack), ``Д`` (queen), ``К`` (king),
``Т`` (ace), and ``JK`` for a joker.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "EMPTY",
    "EMPTY_TEXT",
    "JOKERS",
    "NUM_CODES",
    "NUM_STANDARD",
    "RANKS",
    "SUITS",
    "assign_jokers",
    "card",
    "format_card",
    "format_card_numbered",
    "format_cards",
    "full_deck",
    "is_joker",
    "parse_card",
    "parse_cards",
    "rank_of",
    "suit_of",
]

EMPTY = -1
#: the text of an empty cell: what ``format_card(EMPTY)`` writes and ``parse_cards(..., allow_empty=True)`` reads
EMPTY_TEXT = ".."
NUM_STANDARD = 52
JOKERS = (52, 53)
NUM_CODES = 54  # 52 cards + 2 jokers
RANKS = "23456789TJQKA"
SUITS = "♣♦♥♠"
SUIT_LETTERS = "cdhs"

_RANK_ALIASES = {r: i for i, r in enumerate(RANKS)}
_RANK_ALIASES.update({r.lower(): i for i, r in enumerate(RANKS)})
_RANK_ALIASES.update(
    {
        "10": 8,
        # Russian ranks (Cyrillic letters): валет, дама, король, туз.
        "В": 9, "в": 9,
        "Д": 10, "д": 10,
        "К": 11, "к": 11,
        "Т": 12, "т": 12,
    }
)

_SUIT_ALIASES = {}
for _i, (_sym, _letter) in enumerate(zip(SUITS, SUIT_LETTERS, strict=True)):
    _SUIT_ALIASES[_sym] = _i
    _SUIT_ALIASES[_letter] = _i
    _SUIT_ALIASES[_letter.upper()] = _i
# Outline suit symbols (the variation selectors some editors add, U+FE0F emoji and U+FE0E text, are dropped).
_SUIT_ALIASES.update({"♧": 0, "♢": 1, "♡": 2, "♤": 3})

_JOKER_WORDS = {"jk", "joker", "jkr", "*", "🃏"}


def check_index(value: Any, what: str, size: int, expected: str = "") -> int:
    """``value`` as an int in ``0..size-1``: an integer, a numpy integer or a 0-d integer array (as a policy's
    ``predict`` returns one action), not a bool, a float or a string.

    The error (``TypeError`` for a value that is not an integer, ``ValueError`` for one out of range, as
    :func:`check_codes` raises them) names ``what`` and the value, and what was expected (``expected`` adds a
    gloss).
    """
    if isinstance(value, np.ndarray) and value.shape == () and np.issubdtype(value.dtype, np.integer):
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} {value!r}: expected an integer 0..{size - 1}{expected}")
    value = int(value)  # a numpy integer is named as the plain number (13, not np.int64(13))
    if not 0 <= value < size:
        raise ValueError(f"{what} {value}: expected an integer 0..{size - 1}{expected}")
    return value


def card(rank: int, suit: int) -> int:
    """The code of the card with rank index ``rank`` (0=2 .. 12=A) and suit ``suit``."""
    rank = check_index(rank, "rank index", 13, " (0 = two, 12 = ace)")
    return check_index(suit, "suit index", 4, " (♣ ♦ ♥ ♠)") * 13 + rank


def rank_of(code: int) -> int:
    """The rank index (0 = two .. 12 = ace) of a non-joker card code."""
    return code % 13


def suit_of(code: int) -> int:
    """The suit index (0 = ♣, 1 = ♦, 2 = ♥, 3 = ♠) of a non-joker card code."""
    return code // 13


def is_joker(code: int) -> bool:
    """Whether ``code`` is a joker."""
    return code >= NUM_STANDARD


def _check_code(code: int, allow_empty: bool = False) -> int:
    empty = "-1 (empty), " if allow_empty else ""
    if isinstance(code, bool) or not isinstance(code, (int, np.integer)):
        raise TypeError(f"card code {code!r} is not an integer: expected {empty}0..53")
    code = int(code)
    if not 0 <= code < NUM_CODES:
        raise ValueError(f"card code {code!r} out of range: expected {empty}0..51 for cards, 52..53 for jokers")
    return code


def parse_card(text: str) -> int:
    """The code of one card written as text, e.g. ``'T♠'``, ``'10s'``, ``'Д♥'``, ``'JK'``."""
    if not isinstance(text, str):
        raise TypeError(f"card {text!r} is not a string: expected text such as 'T♠', '10s' or 'JK'")
    token = _bare(text)
    if token.lower() in _JOKER_WORDS:
        return JOKERS[0]
    if token.lower() in ("jk1", "jk2"):
        return JOKERS[int(token[-1]) - 1]
    if len(token) >= 2:
        rank_text, suit_text = token[:-1], token[-1]
        if rank_text in _RANK_ALIASES and suit_text in _SUIT_ALIASES:
            return card(_RANK_ALIASES[rank_text], _SUIT_ALIASES[suit_text])
    if token == EMPTY_TEXT:
        raise ValueError(f"{EMPTY_TEXT!r} is an empty cell (format_card(-1)), not a card: only a grid may hold one "
                         f"(parse_cards(text, allow_empty=True), score_grid)")
    raise ValueError(
        f"bad card {text!r}: expected a rank (2-9, 10 or T, J Q K A, or Russian В Д К Т) "
        f"followed by a suit (♣♦♥♠ or c d h s), or 'JK' for a joker"
    )


def parse_cards(text: str | Iterable[str], *, allow_empty: bool = False) -> list[int]:
    """Codes of a whitespace-separated list of cards (``/`` and ``,`` also separate).

    Plain jokers take the joker codes that no ``JK1``/``JK2`` names, in order (:func:`assign_jokers`), so
    ``'JK JK'`` is ``[52, 53]`` and ``'JK2 JK'`` is ``[53, 52]``.  With ``allow_empty``, ``'..'`` (what
    :func:`format_card` writes for an empty cell) is ``EMPTY`` (-1), so ``parse_cards(format_cards(board),
    allow_empty=True)`` gives ``board`` back (jokers aside: both are written ``JK``, and come back as the jokers
    in order).  A card written twice is kept (a deck or grid that uses the cards
    refuses it, naming it).
    """
    if isinstance(text, str):
        tokens = text.replace("/", " ").replace(",", " ").split()
    else:
        try:
            tokens = list(text)
        except TypeError:
            raise TypeError(f"bad card list {text!r}: expected a string of cards (e.g. 'AS KH JK') or an iterable "
                            f"of card strings") from None
    codes = [EMPTY if allow_empty and isinstance(token, str) and token.strip() == EMPTY_TEXT else parse_card(token)
             for token in tokens]
    if sum(is_joker(c) for c in codes) > len(JOKERS):
        raise ValueError(f"bad card list {text!r}: more than {len(JOKERS)} jokers")
    return assign_jokers(tokens, codes)


def _bare(text: str) -> str:
    """A card's text without surrounding space and the variation selectors (U+FE0F, U+FE0E) editors add."""
    return text.strip().replace("\ufe0f", "").replace("\ufe0e", "")


def assign_jokers(items: Sequence[Any], codes: Sequence[int]) -> list[int]:
    """``codes`` (parsed from ``items``) with each plain ``'JK'`` given a joker code no named joker takes.

    ``'JK1'``/``'JK2'`` (or the codes 52/53) name a joker; plain ``'JK'`` items take the joker codes left
    over, in order, so ``'JK2 JK'`` is ``[53, 52]`` and ``'JK JK'`` is ``[52, 53]``.  A plain joker beyond
    the two keeps its parsed code, for the caller's duplicate check to name.
    """
    plain = [i for i, (item, c) in enumerate(zip(items, codes, strict=True))
             if isinstance(item, str) and is_joker(c) and _bare(item).lower() not in ("jk1", "jk2")]
    out = list(codes)
    if plain:  # only integer codes can name a joker (anything else is for the caller's checks to name)
        named = {int(c) for i, c in enumerate(codes) if i not in plain and not isinstance(c, bool)
                 and isinstance(c, (int, np.integer)) and is_joker(c)}
        free = iter([j for j in JOKERS if j not in named])
        for i in plain:
            out[i] = next(free, out[i])
    return out


def format_card(code: int) -> str:
    """The text of a card code, e.g. ``'T♠'``; a joker is ``'JK'`` and an empty cell ``'..'`` (:data:`EMPTY_TEXT`)."""
    if code is not None and not isinstance(code, bool) and isinstance(code, (int, np.integer)) and int(code) == EMPTY:
        return EMPTY_TEXT
    code = _check_code(code)
    if is_joker(code):
        return "JK"
    return RANKS[rank_of(code)] + SUITS[suit_of(code)]


def format_card_numbered(code: int) -> str:
    """The text of a card code with each joker numbered, ``'JK1'``/``'JK2'`` (what a record writes, so that a deck
    round-trips exactly); other cards and an empty cell as :func:`format_card`."""
    text = format_card(code)  # the code checked
    return f"JK{int(code) - NUM_STANDARD + 1}" if text == "JK" else text


def format_cards(codes: Iterable[int], sep: str = " ") -> str:
    """The text of several card codes joined by ``sep``."""
    return sep.join(format_card(c) for c in codes)


def full_deck(jokers: int = 0) -> np.ndarray:
    """All card codes of a deck with ``jokers`` jokers (0, 1 or 2), in code order."""
    jokers = check_index(jokers, "jokers", 3, " (the number of jokers)")
    return np.arange(NUM_STANDARD + jokers, dtype=np.int64)


def check_codes(codes: Sequence[int], *, allow_empty: bool = False, where: str = "cards") -> list[int]:
    """Validated integer card codes (``EMPTY`` allowed if ``allow_empty``); no card twice.

    Text is parsed; a plain ``'JK'`` is a joker that no ``'JK1'``/``'JK2'`` names (:func:`assign_jokers`, as in
    :func:`parse_cards`: ``['JK', 'JK']`` is both jokers).
    """
    if isinstance(codes, (bytes, bytearray)):  # a list of its byte values would read as card codes
        raise TypeError(f"{where} {codes!r}: expected card text or codes, got {type(codes).__name__}")
    items = list(codes)
    codes = assign_jokers(items, [(EMPTY if allow_empty and c.strip() == EMPTY_TEXT else parse_card(c))
                                  if isinstance(c, str) else c for c in items])
    out: list[int] = []
    seen: set[int] = set()
    for i, c in enumerate(codes):
        if allow_empty and not isinstance(c, bool) and isinstance(c, (int, np.integer)) and int(c) == EMPTY:
            out.append(EMPTY)
            continue
        try:
            c = _check_code(c, allow_empty)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{where}[{i}]: {exc}") from None
        if c in seen:
            raise ValueError(f"{where}[{i}]: card {format_card_numbered(c)} (code {c}) appears twice")
        seen.add(c)
        out.append(c)
    return out
