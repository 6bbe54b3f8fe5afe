"""Pictures of a Soliter position (Pillow, imported lazily)."""

from __future__ import annotations

import numpy as np

from pokersquares_env.cards import SUITS
from pokersquares_env.soliter.rules import EMPTY, SoliterGame, SoliterState, card_text

__all__ = ["draw"]

CARD_W, CARD_H, STEP, PAD = 44, 60, 18, 8
_RED = (200, 30, 30)
_BLACK = (20, 20, 20)


def _pil():
    try:
        from PIL import Image, ImageDraw
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError('render_mode="rgb_array" needs Pillow: pip install "pokersquares_env[render]"') from exc
    return Image, ImageDraw


def _label(code: int) -> tuple[str, int, tuple[int, int, int]]:
    """Rank text, suit (-1 for a joker) and colour of a card."""
    text = card_text(code)
    if text == "JK":
        return "JK", -1, (120, 0, 160)
    suit = SUITS.index(text[-1])
    return text[:-1].replace("T", "10"), suit, _RED if suit in (1, 2) else _BLACK


def draw(game: SoliterGame, state: SoliterState) -> np.ndarray:
    """An RGB picture (uint8, ``(height, width, 3)``) of the position."""
    Image, ImageDraw = _pil()
    from pokersquares_env.render import _draw_suit, _font  # the shared card drawing (fonts, suit shapes)

    font, small = _font(15, bold=True), _font(11)
    top_n = game.num_cells + game.num_piles
    ncols = max(game.num_columns, top_n)
    width = PAD + ncols * (CARD_W + PAD)
    depth = max([len(c) for c in state.columns] + [1])
    height = PAD * 3 + CARD_H * 2 + STEP * (depth - 1)
    img = Image.new("RGB", (width, height), (30, 110, 60))
    pen = ImageDraw.Draw(img)

    def card(x: int, y: int, code: int, outline_only: bool = False, caption: str = "") -> None:
        if outline_only or code == EMPTY:
            pen.rectangle([x, y, x + CARD_W, y + CARD_H], outline=(200, 230, 200))
            if caption:
                pen.text((x + 3, y + CARD_H - 17), caption, fill=(200, 230, 200), font=small)
            return
        pen.rectangle([x, y, x + CARD_W, y + CARD_H], fill=(250, 250, 245), outline=(60, 60, 60))
        text, suit, colour = _label(code)
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
        for r, code in enumerate(col):
            card(x, y0 + r * STEP, code)
    return np.asarray(img, dtype=np.uint8).copy()
