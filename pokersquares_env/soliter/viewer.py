"""Pictures of a Soliter position (Pillow, imported lazily).

Every frame of a game has the same size (:func:`frame_size`), as video recorders and Gymnasium's
``HumanRendering`` need: room for :func:`frame_rows` cards a column, and a column deeper than that is drawn with its
cards closer together.
"""

from __future__ import annotations

import numpy as np

from pokersquares_env.cards import SUITS
from pokersquares_env.soliter.rules import EMPTY, SoliterGame, SoliterState, card_text

__all__ = ["draw", "frame_rows", "frame_size"]

CARD_W, CARD_H, STEP, PAD = 44, 60, 18, 8
_RED = (200, 30, 30)
_BLACK = (20, 20, 20)


def _pil():
    try:
        from PIL import Image, ImageDraw
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError('render_mode="rgb_array" needs Pillow: pip install "pokersquares_env[render]"') from exc
    return Image, ImageDraw


def _label(game: SoliterGame, code: int) -> tuple[str, int, tuple[int, int, int]]:
    """Rank text, suit (-1 for a joker) and colour of a card."""
    text = card_text(code)
    if text == "JK":
        return game.card_name(code), -1, (120, 0, 160)
    suit = SUITS.index(text[-1])
    return text[:-1].replace("T", "10"), suit, _RED if suit in (1, 2) else _BLACK


def frame_rows(game: SoliterGame) -> int:
    """The cards a column has room for at the full card step: the deepest column of the first deal plus a full suit
    (what a column of a one-stage game without jokers can reach), at most ``game.max_depth``."""
    n = len(game.deck)
    first = max(len(c) for c in game._lay_out(range(n), game._open_columns(0, n)))
    return max(1, min(game.max_depth, first + game.levels))


def frame_size(game: SoliterGame) -> tuple[int, int]:
    """``(height, width)`` of every frame of ``game``."""
    width = PAD + max(game.num_columns, game.num_cells + game.num_piles) * (CARD_W + PAD)
    return PAD * 3 + CARD_H * 2 + STEP * (frame_rows(game) - 1), width


def draw(game: SoliterGame, state: SoliterState) -> np.ndarray:
    """An RGB picture (uint8, ``(height, width, 3)``, the same size for every position: :func:`frame_size`)."""
    Image, ImageDraw = _pil()
    from pokersquares_env.render import _draw_suit, _font  # the shared card drawing (fonts, suit shapes)

    font, small = _font(15, bold=True), _font(11)
    height, width = frame_size(game)
    room = STEP * (frame_rows(game) - 1)  # the column's span from its first card's top to its last card's top
    img = Image.new("RGB", (width, height), (30, 110, 60))
    pen = ImageDraw.Draw(img)

    def card(x: int, y: int, code: int, outline_only: bool = False, caption: str = "") -> None:
        if outline_only or code == EMPTY:
            pen.rectangle([x, y, x + CARD_W, y + CARD_H], outline=(200, 230, 200))
            if caption:
                pen.text((x + 3, y + CARD_H - 17), caption, fill=(200, 230, 200), font=small)
            return
        pen.rectangle([x, y, x + CARD_W, y + CARD_H], fill=(250, 250, 245), outline=(60, 60, 60))
        text, suit, colour = _label(game, code)
        pen.text((x + 3, y + 1), text, fill=colour, font=font)
        if suit >= 0:
            _draw_suit(pen, suit, x + CARD_W - 17, y + 3, 13, colour)

    x = PAD
    for c in state.cells:
        card(x, PAD, c, caption="cell")
        x += CARD_W + PAD
    for p, (s, d) in enumerate(game.piles):
        top = game.pile_top(state, p)
        card(x, PAD, top, caption="A up" if d > 0 else "K down")
        if top == EMPTY:
            _draw_suit(pen, s, x + CARD_W // 2 - 8, PAD + 8, 16, (200, 230, 200))
        x += CARD_W + PAD
    y0 = PAD * 2 + CARD_H
    for i, col in enumerate(state.columns):
        x = PAD + i * (CARD_W + PAD)
        if i >= state.open_columns:
            continue
        if not col:
            card(x, y0, EMPTY, caption="")
        step = STEP if len(col) < 2 or STEP * (len(col) - 1) <= room else room / (len(col) - 1)  # squeeze a deep one
        for r, code in enumerate(col):
            card(x, y0 + round(r * step), code)
    return np.asarray(img, dtype=np.uint8).copy()
