"""Plain-text views of a Poker Squares board (used by ``render_mode='ansi'`` and the terminal game)."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

from pokersquares_env.cards import EMPTY, format_card
from pokersquares_env.core import GameState, PokerSquaresGame
from pokersquares_env.scoring import CATEGORY_KEYS, HandCategory, PointSystem, point_system


def _hand_label(key: str) -> str:
    return HandCategory.from_key(key).label if key in CATEGORY_KEYS else "-"


def fmt_points(value: float) -> str:
    """Points as text: whole numbers without a decimal point (``5``, ``-2``, ``0``), others with two to four
    decimals (``2.50``, ``0.125``, ``-0.004``), or to 15 significant digits where four decimals would round the
    fraction away (``1e-07``, ``2.00001``), so that a value that is not whole does not read as one (nor as ``-0``); only
    float noise beyond 15 significant digits is not shown (``3.0000000000000004`` is ``3``)."""
    number = float(value)
    if number.is_integer():
        return str(int(number))
    if not math.isfinite(number):
        return str(number)
    text = f"{number:.4f}".rstrip("0")
    if round(number, 4).is_integer():  # a fraction below 4 decimals: shown to 15 significant digits
        return f"{number:.15g}"
    return text + "0" * (2 - len(text.partition(".")[2]))


def signed_points(value: float) -> str:
    """Points gained, with their sign: ``+5``, ``-1``, ``+0``."""
    return ("-" if value < 0 else "+") + fmt_points(abs(value))


_fmt_points = fmt_points


def board_text(game: PokerSquaresGame, state: GameState, *, legal: bool = False, color: bool = False,
               card: bool = True, checked: bool = False) -> str:
    """The board with coordinates (columns a-e, rows 1-5), each line's hand and points, and the total.

    Lines are scored as they stand (incomplete lines show the rank groups they
    hold, in brackets, and count nothing towards the total until complete).
    ``legal`` marks playable empty cells with ``()``; ``color`` adds ANSI colours
    to red suits; ``card=False`` leaves out the card to place (a game over before
    its board is full, or one whose cards are all dealt at once).  ``checked``: the board was checked as it stands
    (Poker Shuffle's budget ran out): the total counts the incomplete lines' rank groups too, and says so.
    """
    partial_pts = game.line_points(state, partial=True)
    partial_hands = game.hands(state, partial=True)
    mask = game.legal_mask(state) if legal else 0

    def card_str(code: int, cell: int, width: int = 3) -> str:
        """The cell's text, right-aligned to ``width`` visible characters (padded before colouring, so colour codes
        take no column)."""
        if code == EMPTY:
            return f"{'()' if mask >> cell & 1 else '..':>{width}}"
        text = f"{format_card(code):>{width}}"
        if color and code < 52 and code // 13 in (1, 2):
            return f"\x1b[31m{text}\x1b[0m"
        return text

    def line_label(i: int) -> str:
        complete = state.line_t[i] == 5
        hand = _hand_label(partial_hands[i]) if state.line_t[i] else "-"
        pts = _fmt_points(partial_pts[i])
        return f"{hand} {pts}" if complete else (f"({hand})" if state.line_t[i] else "")

    lines = ["     a    b    c    d    e"]
    for r in range(5):
        cells = "  ".join(card_str(state.board[r * 5 + c], r * 5 + c) for c in range(5))
        lines.append(f"{r + 1}  {cells}   {line_label(r)}")
    lines.append("")
    for c in range(5):
        label = line_label(5 + c)
        if label:
            lines.append(f"col {'abcde'[c]}: {label}")
    total = game.score(state, partial=checked)
    label = f"{game.system.name}, checked as it stands" if checked else game.system.name
    lines.append(f"score ({label}): {_fmt_points(total)}   cards placed: {state.num_placed}/25")
    if card and not state.terminal:
        lines.append(f"card to place: {card_str(state.card, -1, 0)}   cards left after it: {24 - state.num_placed}")
    return "\n".join(lines)


def summary_text(game: PokerSquaresGame, state: GameState, systems: Any = ("american", "english")) -> str:
    """Every line's hand and the final score under each of ``systems`` (one system alone too: a name, a
    ``PointSystem``, a table or a file path), each labelled by its name."""
    if isinstance(systems, (str, os.PathLike, Mapping, PointSystem)):
        systems = (systems,)
    out = []
    hands = game.hands(state)
    points = game.line_points(state)
    for i in range(10):
        name = f"row {i + 1}" if i < 5 else f"col {'abcde'[i - 5]}"
        out.append(f"{name:6} {_hand_label(hands[i]):16} {_fmt_points(points[i]):>4}")
    for system in map(point_system, systems):
        out.append(f"total {system.name}: {_fmt_points(game.score(state, system))}")
    return "\n".join(out)
