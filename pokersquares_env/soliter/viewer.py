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


def _label(code: int) -> tuple[str, tuple[int, int, int]]:
    text = card_text(code)
    if text == "JK":
        return "JK", (120, 0, 160)
    return text.replace("T", "10"), _RED if text[-1] in (SUITS[1], SUITS[2]) else _BLACK


def draw(game: SoliterGame, state: SoliterState) -> np.ndarray:
    """An RGB picture (uint8, ``(height, width, 3)``) of the position."""
    Image, ImageDraw = _pil()
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
                pen.text((x + 4, y + CARD_H // 2 - 6), caption, fill=(200, 230, 200))
            return
        pen.rectangle([x, y, x + CARD_W, y + CARD_H], fill=(250, 250, 245), outline=(60, 60, 60))
        text, colour = _label(code)
        pen.text((x + 4, y + 2), text, fill=colour)

    x = PAD
    for c in state.cells:
        card(x, PAD, c, caption="cell")
        x += CARD_W + PAD
    for p, (s, d) in enumerate(game.piles):
        top = game.pile_top(state, p)
        card(x, PAD, top, caption=SUITS[s] + ("^" if d > 0 else "v"))
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
