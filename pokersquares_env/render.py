"""Pictures of Poker Squares boards: RGB frames drawn with Pillow, and a pygame window to show them.

``render_mode="rgb_array"`` of every env in the package returns a frame from
this module; ``render_mode="human"`` shows the same frame in a window::

    frame = draw_poker_squares(game, state)     # uint8 array, shape (592, 720, 3)

A frame shows the 5x5 grid of cards with board coordinates (columns a-e,
rows 1-5), each row's and column's hand and points, the drawn card, how many
cards are left and the total under the active point system.  Under the
adjacency rule (or a fixed first cell) the playable cells are outlined.
:func:`draw_poker_shuffle` shows the dealt cards still to be placed instead of
the drawn card; :func:`multiplayer_frames` draws one frame per player of the
multiplayer game and :func:`draw_multiplayer` (built on :func:`tile_frames`)
puts them side by side.

Pillow is the optional extra ``render`` and pygame the extra ``human``; both
are imported only when a frame is drawn or shown.  Card pictures, fonts and the
empty table are cached, so a frame costs a few milliseconds (fast enough for
``gymnasium.wrappers.RecordVideo``).  Suit symbols are drawn as shapes, so the
frames look the same whatever fonts are installed; text uses DejaVu Sans when
it can be found and Pillow's built-in font otherwise.
"""

from __future__ import annotations

import functools
import os
import weakref
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from pokersquares_env.cards import EMPTY, NUM_STANDARD, RANKS
from pokersquares_env.scoring import CATEGORY_KEYS, LINE_CELLS, HandCategory, line_keys, point_system
from pokersquares_env.text import fmt_points as _fmt

__all__ = [
    "FRAME_SHAPE",
    "Renderer",
    "card_image",
    "multiplayer_frames",
    "draw_board",
    "draw_multiplayer",
    "draw_poker_shuffle",
    "draw_poker_squares",
    "tile_frames",
]

# ---- layout (pixels) -----------------------------------------------------------
CARD_W, CARD_H = 64, 90  # a card on the grid
GAP = 6  # between grid cells
SS = 4  # supersampling factor for card pictures (anti-aliased edges and symbols)
TITLE_H = 34
GRID_X = 30  # left edge of the grid (row numbers sit to its left)
GRID_Y = TITLE_H + 22  # top edge of the grid (column letters sit above it)
GRID_W = 5 * CARD_W + 4 * GAP
GRID_H = 5 * CARD_H + 4 * GAP
ROW_LABEL_X = GRID_X + GRID_W + 12
ROW_LABEL_W = 150
PANEL_X = ROW_LABEL_X + ROW_LABEL_W + 8
PANEL_W = 160
WIDTH = 720  # multiples of 16, which video encoders like
HEIGHT = 592
#: Shape of every frame this module draws: (height, width, 3).
FRAME_SHAPE = (HEIGHT, WIDTH, 3)
BIG_W, BIG_H = 84, 118  # the drawn card in the side panel
MINI_W, MINI_H = 34, 48  # Poker Shuffle's remaining dealt cards

# ---- colours ---------------------------------------------------------------------
FELT = (17, 94, 58)
FELT_DARK = (10, 66, 40)
SLOT = (12, 76, 46)
SLOT_EDGE = (46, 128, 86)
TEXT = (240, 244, 240)
DIM = (160, 196, 172)
GOLD = (255, 214, 64)
PLAYABLE = (255, 214, 64)
LAST = (255, 140, 40)
CARD_FACE = (252, 251, 246)
CARD_EDGE = (120, 120, 120)
RED = (204, 24, 40)
BLACK = (24, 24, 28)
JOKER = (122, 40, 170)

#: Hand names that fit under a column: the row captions' names (:attr:`HandCategory.label`), shortened only where
#: one is wider than the column in the regular 13 px font ("Three of a kind" -> "Trips").
SHORT_LABELS = {
    "high_card": "High card",
    "one_pair": "One pair",
    "two_pair": "Two pair",
    "three_of_a_kind": "Trips",
    "straight": "Straight",
    "flush": "Flush",
    "full_house": "Full house",
    "four_of_a_kind": "Quads",
    "five_of_a_kind": "Five kind",
    "straight_flush": "Str. flush",
    "royal_flush": "Royal flush",
}

_FONT_DIRS = (
    "/usr/share/fonts/truetype/dejavu",
    "/usr/share/fonts/dejavu",
    "/usr/share/fonts/TTF",
    "/usr/local/share/fonts",
    "/Library/Fonts",
    os.path.expanduser("~/.fonts"),
    "C:/Windows/Fonts",
)


def _pil():
    """The PIL modules, or an ImportError naming the extra to install."""
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError as exc:  # pragma: no cover - exercised only without Pillow
        raise ImportError(
            'drawing frames needs Pillow: pip install "pokersquares_env[render]"'
        ) from exc
    return Image, ImageDraw, ImageFont


def _font_candidates(bold: bool, condensed: bool) -> list[str]:
    name = "DejaVuSans" + ("Condensed" if condensed else "") + ("-Bold" if bold else "") + ".ttf"
    plain = "DejaVuSans" + ("-Bold" if bold else "") + ".ttf"
    paths = [os.path.join(d, n) for n in dict.fromkeys((name, plain)) for d in _FONT_DIRS]
    try:  # matplotlib ships DejaVu Sans (not the condensed cut)
        import matplotlib

        paths.append(os.path.join(os.path.dirname(matplotlib.__file__), "mpl-data", "fonts", "ttf", plain))
    except ImportError:
        pass
    return paths


@functools.lru_cache(maxsize=None)
def _font(size: int, bold: bool = False, condensed: bool = False):
    """A TrueType font of ``size`` pixels: DejaVu Sans if found, else Pillow's built-in font."""
    _, _, ImageFont = _pil()
    for path in _font_candidates(bold, condensed):
        if os.path.exists(path):
            try:
                return ImageFont.truetype(path, size)
            except OSError:
                continue
    try:
        return ImageFont.load_default(size=size)  # Pillow >= 10.1 with FreeType
    except (TypeError, OSError, ImportError):
        return ImageFont.load_default()


@functools.lru_cache(maxsize=4096)
def _fit_font(text: str, width: int, size: int, bold: bool = False, condensed: bool = True):
    """The largest font (at most ``size``) in which ``text`` fits ``width`` pixels."""
    while size > 7:
        font = _font(size, bold, condensed)
        if font.getlength(text) <= width:
            return font
        size -= 1
    return _font(size, bold, condensed)


@functools.lru_cache(maxsize=4096)
def _text_mask(text: str, font: Any, anchor: str):
    """``text`` rendered once as a grey-level mask, with its offset from the anchor point."""
    Image, ImageDraw, _ = _pil()
    left, top, right, bottom = font.getbbox(text, anchor=anchor)
    mask = Image.new("L", (max(1, int(right - left)), max(1, int(bottom - top))), 0)
    ImageDraw.Draw(mask).text((-left, -top), text, font=font, fill=255, anchor=anchor)
    return mask, int(left), int(top)


def _text(
    img: Any, xy: tuple[float, float], text: str, font: Any, fill: tuple[int, int, int], anchor: str = "la"
) -> None:
    """Draw ``text`` on ``img`` from a cached mask (drawing text afresh costs most of a frame)."""
    mask, dx, dy = _text_mask(text, font, anchor)
    img.paste(fill, (int(round(xy[0])) + dx, int(round(xy[1])) + dy), mask)


# ---- suit symbols, drawn as shapes in a unit square ------------------------------


def _draw_suit(draw: Any, suit: int, x: float, y: float, size: float, fill: tuple[int, int, int]) -> None:
    """Draw suit ``suit`` (0 clubs, 1 diamonds, 2 hearts, 3 spades) in the square at (x, y) of side ``size``."""

    def p(u: float, v: float) -> tuple[float, float]:
        """A point of the unit square, in pixels."""
        return (x + u * size, y + v * size)

    def disc(u: float, v: float, r: float) -> None:
        """A filled circle of radius ``r`` (unit square) at (u, v)."""
        draw.ellipse([p(u - r, v - r), p(u + r, v + r)], fill=fill)

    if suit == 1:  # diamond
        draw.polygon([p(0.5, 0.0), p(0.88, 0.5), p(0.5, 1.0), p(0.12, 0.5)], fill=fill)
    elif suit == 2:  # heart
        disc(0.29, 0.32, 0.24)
        disc(0.71, 0.32, 0.24)
        draw.polygon([p(0.06, 0.40), p(0.5, 0.2), p(0.94, 0.40), p(0.5, 0.96)], fill=fill)
    elif suit == 3:  # spade
        disc(0.29, 0.58, 0.22)
        disc(0.71, 0.58, 0.22)
        draw.polygon([p(0.5, 0.02), p(0.93, 0.52), p(0.5, 0.68), p(0.07, 0.52)], fill=fill)
        draw.polygon([p(0.5, 0.6), p(0.66, 0.98), p(0.34, 0.98)], fill=fill)
    else:  # club
        disc(0.5, 0.27, 0.21)
        disc(0.27, 0.59, 0.21)
        disc(0.73, 0.59, 0.21)
        disc(0.5, 0.52, 0.12)
        draw.polygon([p(0.5, 0.5), p(0.66, 0.98), p(0.34, 0.98)], fill=fill)


def _draw_star(draw: Any, cx: float, cy: float, r: float, fill: tuple[int, int, int]) -> None:
    pts = []
    for i in range(10):
        ang = np.pi / 2 + i * np.pi / 5
        rad = r if i % 2 == 0 else r * 0.42
        pts.append((cx + rad * np.cos(ang), cy - rad * np.sin(ang)))
    draw.polygon(pts, fill=fill)


# ---- cards -------------------------------------------------------------------------


def _rank_text(code: int) -> str:
    r = RANKS[code % 13]
    return "10" if r == "T" else r


@functools.lru_cache(maxsize=512)
def card_image(code: int, width: int = CARD_W, height: int = CARD_H, background: tuple[int, int, int] = FELT):
    """A PIL picture of card ``code`` (0..53) of the given size, its rounded corners on ``background``."""
    Image, ImageDraw, _ = _pil()
    if not 0 <= int(code) < NUM_STANDARD + 2:
        raise ValueError(f"card code {code!r} out of range: expected 0..51 for cards, 52..53 for jokers")
    W, H = width * SS, height * SS
    u = width / CARD_W * SS  # one layout pixel, scaled to this card size and supersampled
    img = Image.new("RGB", (W, H), background)
    draw = ImageDraw.Draw(img)
    draw.rounded_rectangle([0, 0, W - 1, H - 1], radius=7 * u, fill=CARD_FACE, outline=CARD_EDGE, width=max(1, int(u)))
    joker = code >= NUM_STANDARD
    colour = JOKER if joker else (RED if code // 13 in (1, 2) else BLACK)

    # Corner index (rank over a small suit), drawn top-left and again rotated bottom-right.
    corner = Image.new("L", (W, H), 0)
    cdraw = ImageDraw.Draw(corner)
    if joker:
        font = _font(int(13 * u), bold=True)
        for i, ch in enumerate("JOKER"):
            cdraw.text((9 * u, 5 * u + i * 12 * u), ch, font=font, fill=255, anchor="mt")
    else:
        text = _rank_text(code)
        font = _font(int((17 if len(text) == 1 else 15) * u), bold=True, condensed=len(text) > 1)
        cdraw.text((11 * u, 4 * u), text, font=font, fill=255, anchor="mt")
        _draw_suit(cdraw, code // 13, 5 * u, 23 * u, 12 * u, 255)
    both = corner.copy()
    both.paste(255, (0, 0), corner.rotate(180))
    img.paste(colour, (0, 0), both)

    # Centre: a big suit (pips cards and aces), a framed letter (faces), a star (joker).
    cx, cy = W / 2, H / 2
    if joker:
        _draw_star(draw, cx, cy - 4 * u, 19 * u, colour)
        _draw_star(draw, cx, cy - 4 * u, 8 * u, GOLD)
    else:
        rank = code % 13
        suit = code // 13
        if rank >= 9 and rank <= 11:  # J Q K
            fw, fh = 32 * u, 52 * u
            frame_box = [cx - fw / 2, cy - fh / 2, cx + fw / 2, cy + fh / 2]
            draw.rectangle(frame_box, outline=colour, width=max(1, int(1.5 * u)))
            draw.text((cx, cy - 7 * u), RANKS[rank], font=_font(int(26 * u), bold=True), fill=colour, anchor="mm")
            _draw_suit(draw, suit, cx - 7 * u, cy + 9 * u, 14 * u, colour)
        else:
            s = (34 if rank == 12 else 26) * u
            _draw_suit(draw, suit, cx - s / 2, cy - s / 2, s, colour)
    return img.resize((width, height), Image.Resampling.LANCZOS)


# ---- the table -----------------------------------------------------------------------


def _cell_xy(cell: int) -> tuple[int, int]:
    r, c = divmod(cell, 5)
    return GRID_X + c * (CARD_W + GAP), GRID_Y + r * (CARD_H + GAP)


@functools.lru_cache(maxsize=1)
def _empty_table():
    """The felt, the coordinates and the 25 empty slots (copied for every frame)."""
    Image, ImageDraw, _ = _pil()
    img = Image.new("RGB", (WIDTH, HEIGHT), FELT)
    draw = ImageDraw.Draw(img)
    draw.rectangle([0, 0, WIDTH, TITLE_H], fill=FELT_DARK)
    font = _font(15, bold=True)
    for c in range(5):
        x, _ = _cell_xy(c)
        draw.text((x + CARD_W / 2, GRID_Y - 11), "abcde"[c], font=font, fill=DIM, anchor="mm")
    for r in range(5):
        _, y = _cell_xy(r * 5)
        draw.text((GRID_X / 2, y + CARD_H / 2), str(r + 1), font=font, fill=DIM, anchor="mm")
    for cell in range(25):
        x, y = _cell_xy(cell)
        draw.rounded_rectangle([x, y, x + CARD_W - 1, y + CARD_H - 1], radius=7, fill=SLOT, outline=SLOT_EDGE, width=1)
    draw.line([(PANEL_X - 4, TITLE_H + 8), (PANEL_X - 4, HEIGHT - 8)], fill=FELT_DARK, width=2)
    return img


#: every cache a frame is drawn from (benchmarks/render_speed.py empties them to time a cold frame)
_CACHES = (_font, _fit_font, _text_mask, card_image, _empty_table)

def _label(key: str) -> str:
    return HandCategory.from_key(key).label if key in CATEGORY_KEYS else ""


def _as_board(board: Any) -> list[int]:
    codes = [int(c) for c in np.asarray(board).reshape(-1).tolist()]
    if len(codes) != 25:
        raise ValueError(f"board has {len(codes)} cells: expected 25 card codes row-major (-1 empty)")
    for i, c in enumerate(codes):
        if not EMPTY <= c < NUM_STANDARD + 2:
            raise ValueError(f"board cell {i} holds card code {c}: expected -1 (empty) or 0..53")
    return codes


def _mask_bits(playable: Any) -> int:
    if playable is None:
        return 0
    if isinstance(playable, (int, np.integer)) and not isinstance(playable, bool):
        return int(playable)
    arr = np.asarray(playable).reshape(-1)
    if arr.shape != (25,):
        raise ValueError(f"playable has shape {arr.shape}: expected a 25-bit int or 25 flags")
    return sum(1 << i for i in range(25) if arr[i])


def draw_board(
    board: Any,
    system: Any = "american",
    *,
    drawn: int | None = None,
    remaining: Sequence[int] | None = None,
    cards_left: int | None = None,
    playable: Any = None,
    last_cell: int | None = None,
    partial: bool = False,
    checked: bool = False,
    title: str | None = None,
    notes: Iterable[str] = (),
) -> np.ndarray:
    """An RGB frame (uint8, ``FRAME_SHAPE``) of a board of 25 codes (-1 empty) under ``system``.

    ``drawn`` is the card to place (shown in the side panel) and ``cards_left``
    the count shown under it; ``remaining`` lists dealt cards still to place
    (Poker Shuffle), shown as small cards instead.  ``playable`` (a 25-bit int
    or 25 flags) outlines the playable cells; ``last_cell`` marks the card just
    placed.  Complete lines show their hand and points; incomplete lines show
    the rank groups they hold, greyed, and score only if ``partial`` (the
    Finnish timed-play rule).  ``checked``: the board was checked as it
    stands (Poker Shuffle's budget ran out): scored as ``partial``, and final,
    so a total at the win threshold says WON as a full board's does.
    ``notes`` are extra lines for the side panel.
    """
    partial = partial or checked
    Image, ImageDraw, _ = _pil()
    system = point_system(system)
    codes = _as_board(board)
    img = _empty_table().copy()
    draw = ImageDraw.Draw(img)

    for cell, code in enumerate(codes):
        if code != EMPTY:
            img.paste(card_image(code), _cell_xy(cell))
    bits = _mask_bits(playable) & ~sum(1 << i for i, c in enumerate(codes) if c != EMPTY)
    for cell in range(25):
        if bits >> cell & 1:
            x, y = _cell_xy(cell)
            draw.rounded_rectangle([x, y, x + CARD_W - 1, y + CARD_H - 1], radius=7, outline=PLAYABLE, width=3)
            mx, my = x + CARD_W / 2, y + CARD_H / 2
            draw.ellipse([mx - 4, my - 4, mx + 4, my + 4], fill=PLAYABLE)
    if last_cell is not None and 0 <= last_cell < 25 and codes[last_cell] != EMPTY:
        x, y = _cell_xy(last_cell)
        draw.rounded_rectangle([x - 2, y - 2, x + CARD_W + 1, y + CARD_H + 1], radius=8, outline=LAST, width=3)

    # Lines: hand and points of each row (right of it) and column (below it).
    arr = np.array(codes, dtype=np.int64)
    keys = line_keys(arr[LINE_CELLS])
    counts = (arr[LINE_CELLS] != EMPTY).sum(axis=1)
    cats = system.line_category_table[keys]
    pts = system.line_points_table[keys]
    total = 0.0
    for line in range(10):
        complete = counts[line] == 5
        scored = complete or (partial and counts[line] > 0)
        points = float(pts[line]) if scored else 0.0
        total += points
        scored = complete or (scored and points != 0)  # no "0" under a partial line that holds nothing
        # An incomplete line shows only the rank groups it already holds ("High card" there says nothing).
        shown = cats[line] >= 0 and counts[line] and (complete or cats[line] > 0)
        key = CATEGORY_KEYS[cats[line]] if shown else ""
        if line < 5:
            _, y = _cell_xy(line * 5)
            name = _label(key)
            colour = TEXT if complete else DIM
            if name:
                font = _fit_font(name, ROW_LABEL_W, 15, bold=complete, condensed=False)
                _text(img, (ROW_LABEL_X, y + CARD_H / 2 - 3), name, font=font, fill=colour, anchor="ls")
            if scored:
                _text(img, (ROW_LABEL_X, y + CARD_H / 2 + 3), f"{_fmt(points)} pts", _font(16, True), GOLD, "lt")
        else:
            x, _ = _cell_xy(line - 5)
            y = GRID_Y + GRID_H + 6
            name = SHORT_LABELS.get(key, "")
            if name:
                font = _fit_font(name, CARD_W + GAP - 2, 13, bold=complete)
                _text(img, (x + CARD_W / 2, y), name, font=font, fill=TEXT if complete else DIM, anchor="mt")
            if scored:
                _text(img, (x + CARD_W / 2, y + 17), _fmt(points), font=_font(15, True), fill=GOLD, anchor="mt")

    # Title bar.
    placed = sum(c != EMPTY for c in codes)
    heading = title or "Poker Squares"
    _text(img, (12, TITLE_H / 2), heading, font=_fit_font(heading, 440, 17, True, False),
              fill=TEXT, anchor="lm")
    _text(img, (WIDTH - 12, TITLE_H / 2), f"{placed}/25 placed", font=_font(14), fill=DIM, anchor="rm")

    # Side panel.
    px, y = PANEL_X + 6, TITLE_H + 14
    small = _font(13)
    if remaining is not None:
        rest = list(remaining)
        label = f"Dealt cards to place: {len(rest)}"
        _text(img, (px, y), label, font=_fit_font(label, PANEL_W - 8, 13, False, False), fill=DIM)
        y += 20
        for i, code in enumerate(rest[:28]):
            r, c = divmod(i, 4)
            img.paste(card_image(int(code), MINI_W, MINI_H), (px + c * (MINI_W + 4), y + r * (MINI_H + 4)))
        y += ((min(len(rest), 28) + 3) // 4) * (MINI_H + 4) + 8
    elif drawn is not None or cards_left is not None:
        _text(img, (px, y), "Card to place", font=small, fill=DIM)
        y += 20
        if drawn is not None and drawn != EMPTY:
            img.paste(card_image(int(drawn), BIG_W, BIG_H), (px + (PANEL_W - 12 - BIG_W) // 2, y))
        else:
            draw.rounded_rectangle([px + (PANEL_W - 12 - BIG_W) // 2, y, px + (PANEL_W - 12 + BIG_W) // 2, y + BIG_H],
                                   radius=8, outline=SLOT_EDGE, width=1)
            _text(img, (px + (PANEL_W - 12) / 2, y + BIG_H / 2), "board full", font=small, fill=DIM, anchor="mm")
        y += BIG_H + 10
        if cards_left is not None:
            _text(img, (px, y), f"Cards after it: {cards_left}", font=small, fill=DIM)
            y += 22
    y = max(y, TITLE_H + 250) if (remaining is not None or drawn is not None or cards_left is not None) else y
    _text(img, (px, y), "Total", font=small, fill=DIM)
    _text(img, (px, y + 16), _fmt(total), font=_font(40, True), fill=GOLD)
    y += 64
    sys_line = f"{system.name} points"
    _text(img, (px, y), sys_line, font=_fit_font(sys_line, PANEL_W - 10, 14, False, False), fill=TEXT)
    y += 20
    if system.win_threshold is not None:
        won = (placed == 25 or checked) and system.won(total)
        _text(img, (px, y), f"win at {_fmt(system.win_threshold)}" + ("  WON" if won else ""), font=small,
                  fill=GOLD if won else DIM)
        y += 20
    for note in notes:
        if y > HEIGHT - 20:
            break
        _text(img, (px, y), str(note), font=_fit_font(str(note), PANEL_W - 10, 13, False, True), fill=TEXT)
        y += 19
    return np.array(img)  # a writable array the caller owns (np.asarray of an image is read-only)


def draw_poker_squares(
    game: Any,
    state: Any,
    *,
    legal: bool | None = None,
    title: str | None = None,
    notes: Iterable[str] = (),
) -> np.ndarray:
    """An RGB frame of a Poker Squares game: board, line hands and points, drawn card, cards left, total.

    ``legal`` outlines the playable cells; by default it is on when the rules
    restrict them (adjacent placement, or a fixed first cell before the first card).
    """
    if legal is None:
        legal = game.rules.restricts(len(state.placements))
    last = state.placements[-1] if state.placements else None
    left = len(state.deck) - state.num_placed - (0 if state.terminal else 1)
    return draw_board(
        state.board,
        game.system,
        drawn=None if state.terminal else state.card,
        cards_left=max(0, min(left, 24 - state.num_placed)) if not state.terminal else 0,
        playable=game.legal_mask(state) if legal else 0,
        last_cell=last,
        title=title or f"Poker Squares · {game.system.name}",
        notes=notes,
    )


def draw_poker_shuffle(
    game: Any,
    state: Any,
    remaining: Sequence[int] | None = None,
    *,
    cards: Sequence[int] | None = None,
    placed: Sequence[bool] | None = None,
    mode: str = "arrange",
    budget_left: int | None = None,
    dealt_score: float | None = None,
    partial: bool = True,
    checked: bool = False,
    legal: bool | None = None,
    title: str | None = None,
    notes: Iterable[str] = (),
) -> np.ndarray:
    """An RGB frame of a Poker Shuffle game: the board and the dealt cards still to place.

    ``state`` is the core ``GameState`` (or a board of 25 codes).  The cards
    still to place are ``remaining``, or the ``cards`` whose ``placed`` flag is
    false (arrange mode; swap mode has none).  ``budget_left`` (placements or
    swaps before the board is checked) and ``dealt_score`` (swap mode) go to
    the side panel.  ``partial`` (default on) scores incomplete lines by the
    rank groups they hold, as the Finnish check does, so the total is what the
    board would score if checked now; ``checked``: the budget has checked it
    (:func:`draw_board`).  ``legal`` outlines the playable cells
    (default: when the rules restrict them, in arrange mode).
    """
    if mode not in ("arrange", "swap"):
        raise ValueError(f"mode={mode!r}: expected 'arrange' or 'swap'")
    system = getattr(game, "system", game)
    is_state = hasattr(state, "board") and hasattr(state, "placements")
    board = state.board if is_state else state
    if remaining is None and cards is not None and mode == "arrange":
        flags = list(placed) if placed is not None else [False] * len(cards)
        if len(flags) != len(cards):
            raise ValueError(f"placed has {len(flags)} flags for {len(cards)} cards: expected one per card")
        remaining = [c for c, p in zip(cards, flags, strict=True) if not p]
    playable = 0
    last_cell = None
    if is_state and mode == "arrange" and hasattr(game, "legal_mask"):
        rules = game.rules
        if legal is None:
            legal = rules.restricts(len(state.placements))
        playable = game.legal_mask(state) if legal else 0
        last_cell = state.placements[-1] if state.placements else None
    extra = []
    if dealt_score is not None:
        extra.append(f"dealt layout: {_fmt(dealt_score)} pts")
    if budget_left is not None:
        extra.append(f"{'placements' if mode == 'arrange' else 'swaps'} left: {budget_left}")
    return draw_board(
        board,
        system,
        remaining=remaining if mode == "arrange" else None,
        playable=playable,
        last_cell=last_cell,
        partial=partial,
        checked=checked,
        title=title or f"Poker Shuffle ({mode}) · {point_system(system).name}",
        notes=[*extra, *notes],
    )


def multiplayer_frames(
    game: Any,
    states: dict[str, Any],
    *,
    totals: dict[str, float] | None = None,
    match_points: dict[str, float] | None = None,
    round: int | None = None,
    ended: str | None = None,
) -> dict[str, np.ndarray]:
    """One frame per player of a multiplayer game (the same announced card; each player's own board).  ``ended``: a
    note saying the match ended early (then no cell is outlined as playable)."""
    out = {}
    for agent, state in states.items():
        notes = [] if ended is None else [ended]
        if totals is not None and agent in totals:
            notes.append(f"match total: {_fmt(totals[agent])}")
        if match_points is not None and agent in match_points:
            notes.append(f"match points: {_fmt(match_points[agent])}")
        title = f"{agent}" + (f" · round {round}" if round is not None else "") + f" · {game.system.name}"
        out[agent] = draw_poker_squares(game, state, title=title, notes=notes, legal=False if ended else None)
    return out


def draw_multiplayer(game: Any, states: dict[str, Any], *, columns: int | None = None, **kwargs: Any) -> np.ndarray:
    """Every player's frame (see :func:`multiplayer_frames`) tiled in a grid, as a spectator sees the table."""
    frames = list(multiplayer_frames(game, states, **kwargs).values())
    if columns is None:
        columns = len(frames) if len(frames) <= 2 else (2 if len(frames) == 4 else 3)
    return tile_frames(frames, columns=columns)


def tile_frames(frames: Sequence[np.ndarray], columns: int | None = None, gap: int = 8) -> np.ndarray:
    """Several frames of one shape in a grid (``columns`` per row; all in one row by default)."""
    frames = [np.asarray(f) for f in frames]
    if not frames:
        raise ValueError("tile_frames needs at least one frame")
    shape = frames[0].shape
    for i, f in enumerate(frames):
        if f.shape != shape or f.dtype != np.uint8:
            raise ValueError(f"frame {i} has shape {f.shape} dtype {f.dtype}: expected {shape} uint8 like frame 0")
    columns = len(frames) if columns is None else max(1, int(columns))
    rows = -(-len(frames) // columns)
    h, w = shape[:2]
    out = np.empty((rows * h + (rows - 1) * gap, columns * w + (columns - 1) * gap, 3), dtype=np.uint8)
    out[:] = FELT_DARK
    for i, f in enumerate(frames):
        r, c = divmod(i, columns)
        out[r * (h + gap) : r * (h + gap) + h, c * (w + gap) : c * (w + gap) + w] = f
    return out


# ---- showing frames --------------------------------------------------------------------


class Renderer:
    """Turns frames into the output of ``render()``: the frame itself, or a pygame window.

    ``Renderer("rgb_array").show(frame)`` returns ``frame``;
    ``Renderer("human", title).show(frame)`` draws it in a window (opened on
    first use, resized to the frame) and returns ``None``.
    """

    MODES = ("rgb_array", "human")

    def __init__(self, render_mode: str, title: str = "Poker Squares", fps: float | None = None) -> None:
        if render_mode not in self.MODES:
            raise ValueError(f"render_mode={render_mode!r}: expected one of {self.MODES}")
        self.render_mode = render_mode
        self.title = title
        self.fps = fps
        self._pygame = None
        self._window = None
        self._clock = None
        _pil()  # fail early, naming the extra, if Pillow is missing
        if render_mode == "human":
            try:
                import pygame
            except ImportError as exc:
                raise ImportError(
                    'render_mode="human" needs pygame: pip install "pokersquares_env[human]"'
                ) from exc
            self._pygame = pygame

    def __getstate__(self) -> dict:
        """A copy (``copy.deepcopy``, ``pickle``) without the pygame module, window and clock, which cannot be copied:
        it opens a window of its own when it next shows a frame."""
        state = self.__dict__.copy()
        state.update(_pygame=None, _window=None, _clock=None)
        return state

    def show(self, frame: np.ndarray) -> np.ndarray | None:
        """Return ``frame`` (rgb_array) or show it in the window (human)."""
        frame = np.asarray(frame)
        if frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
            raise ValueError(f"frame has shape {frame.shape} dtype {frame.dtype}: expected HxWx3 uint8")
        if self.render_mode == "rgb_array":
            return frame
        if self._pygame is None:  # a copied renderer: the module was left out of the copy
            import pygame

            self._pygame = pygame
        pygame = self._pygame
        size = (frame.shape[1], frame.shape[0])
        # pygame has one window per process: another renderer may have resized it, or closed it (the display is gone,
        # and the surface kept here would raise "display Surface quit")
        if self._window is None or pygame.display.get_surface() is None or self._window.get_size() != size:
            try:
                pygame.display.init()
                self._window = pygame.display.set_mode(size)
            except pygame.error as exc:
                raise RuntimeError(
                    f"render_mode='human' could not open a window ({exc}); "
                    f"use render_mode='rgb_array' where there is no display"
                ) from None
            driver = pygame.display.get_driver()
            if driver in ("offscreen", "dummy") and os.environ.get("SDL_VIDEODRIVER", "").lower() != driver:
                # SDL fell back to drawing nowhere by itself (no display): a warning, not an error, since
                # Gymnasium's check_env opens every render mode of an env, human included, on headless machines too
                import warnings

                warnings.warn(
                    f"render_mode='human' found no display: SDL fell back to its {driver!r} video driver, which "
                    f"shows nothing; use render_mode='rgb_array' where there is no display, or set "
                    f"SDL_VIDEODRIVER={driver} to draw nowhere on purpose", RuntimeWarning, stacklevel=2)
            pygame.display.set_caption(self.title)
            self._clock = pygame.time.Clock()
            _SHOWING.add(self)
        surface = pygame.surfarray.make_surface(frame.swapaxes(0, 1))
        self._window.blit(surface, (0, 0))
        pygame.event.pump()
        pygame.display.flip()
        if self.fps:
            self._clock.tick(self.fps)
        return None

    def close(self) -> None:
        """Close the window, if one is open and no other renderer shows frames in it: pygame has one window per
        process, which the human-mode envs open at once share (closing it under another made that env's next step
        fail with "display Surface quit" after its move was made)."""
        if self._window is not None:
            self._window = None
            _SHOWING.discard(self)
            if not _SHOWING:
                self._pygame.display.quit()


#: The human-mode renderers whose frames pygame's one window shows (a renderer leaves when it closes or is collected).
_SHOWING: weakref.WeakSet[Renderer] = weakref.WeakSet()
