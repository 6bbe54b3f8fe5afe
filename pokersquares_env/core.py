"""The Poker Squares game core: rules, state, legal cells, placement and score.

No Gymnasium here.  The Gymnasium env, the vector env, the PettingZoo
multiplayer env, Poker Shuffle and the search agents all play through
:class:`PokerSquaresGame`, which works over a plain :class:`GameState`.

The state keeps running statistics for each of the 10 lines (cards, jokers,
equal-rank pairs, rank and suit bit sets), so placing a card and scoring the
lines it completes costs a few integer operations and one table look-up.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pokersquares_env._files import object_without_repeats
from pokersquares_env.cards import (
    EMPTY,
    JOKERS,
    NUM_CODES,
    NUM_STANDARD,
    check_codes,
    check_index,
    format_card,
    parse_cards,
)
from pokersquares_env.scoring import (
    CATEGORY_KEYS,
    CELL_LINES,
    FLUSHABLE,
    LINE_CELLS,
    NO_HAND_KEY,
    WINDOW,
    PointSystem,
    add_points,
    point_system,
)

_WINDOW = WINDOW.tolist()
_FLUSHABLE = FLUSHABLE.tolist()


def _scalar_key(t: int, k: int, pairs: int, rank_bits: int, suit_bits: int) -> int:
    """``scoring.line_key`` on plain ints (list look-ups: several times faster than numpy scalars)."""
    return (((t * 3 + k) * 11 + pairs) * 4 + _WINDOW[rank_bits]) * 2 + _FLUSHABLE[suit_bits]

__all__ = [
    "ADJACENT",
    "FIRST_CELLS",
    "GameState",
    "IllegalActionError",
    "NUM_CELLS",
    "PokerSquaresGame",
    "Rules",
    "cell_name",
    "parse_cell",
    "shuffled_deck",
]

NUM_CELLS = 25
CENTER = 12
TOP_LEFT = 0
FIRST_CELLS = {"center": CENTER, "centre": CENTER, "top-left": TOP_LEFT, "top_left": TOP_LEFT}


def _neighbours(cell: int) -> int:
    r, c = divmod(cell, 5)
    bits = 0
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            rr, cc = r + dr, c + dc
            if (dr or dc) and 0 <= rr < 5 and 0 <= cc < 5:
                bits |= 1 << (rr * 5 + cc)
    return bits


#: ADJACENT[cell]: bit set of the up to 8 cells touching ``cell`` by a side or a corner.
ADJACENT = tuple(_neighbours(c) for c in range(NUM_CELLS))
ALL_CELLS = (1 << NUM_CELLS) - 1


class IllegalActionError(ValueError):
    """An action that the rules do not allow in the current state."""


def cell_name(cell: int) -> str:
    """Board coordinates of a cell index: columns a-e, rows 1-5 (cell 12 is ``'c3'``)."""
    r, c = divmod(check_index(cell, "cell", NUM_CELLS), 5)
    return f"{'abcde'[c]}{r + 1}"


def parse_cell(text: str | int) -> int:
    """The cell index of ``'c3'``-style coordinates (column then row; ``'3c'``, row first, too) or of an index 0..24."""
    if isinstance(text, (int, np.integer)) and not isinstance(text, bool):
        if 0 <= int(text) < NUM_CELLS:
            return int(text)
        raise ValueError(f"cell {text!r} out of range: expected 0..24 (row-major)")
    if isinstance(text, str):
        token = text.strip().lower()
        if len(token) == 2 and token[0] in "12345" and token[1] in "abcde":
            token = token[::-1]  # row first, as the terminal game also reads a move
        if len(token) == 2 and token[0] in "abcde" and token[1] in "12345":
            return (int(token[1]) - 1) * 5 + "abcde".index(token[0])
        if token.isascii() and token.isdigit() and 0 <= int(token) < NUM_CELLS:
            return int(token)
    raise ValueError(f"bad cell {text!r}: expected a column a-e and a row 1-5 such as 'c3', or an index 0..24")



def _rules_json_object(source: str, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object of a rules spec or file, refusing a key given twice (as ``jokers=1,jokers=2`` is refused)."""
    return object_without_repeats(
        pairs, lambda key: ValueError(f"{source}: key {key!r} is given twice: expected each option once"))


#: The format and version of the game records this library writes and reads (``pokersquares_env.records``, which
#: builds on this module, takes them from here, so that the core imports nothing above it).
RECORD_FORMAT = "pokersquares-record"
RECORD_VERSION = 1


def _check_record_version(source: str, data: dict[str, Any]) -> None:
    """A game record read for its rules must be one this library reads (``replay`` refuses the others too)."""
    version = data.get("version")
    if data.get("format") != RECORD_FORMAT or version != RECORD_VERSION or isinstance(version, bool):
        raise ValueError(f"{source}: a game record of format {data.get('format')!r} version {version!r}: "
                         f"expected format {RECORD_FORMAT!r} version {RECORD_VERSION} (the records this library "
                         f"reads), or a rules object such as " '{"jokers": 2, "placement": "adjacent"}')

@dataclass(frozen=True)
class Rules:
    """Rule options of a Poker Squares game (point systems are separate: see ``PointSystem``).

    * ``jokers``: 0, 1 or 2 wild jokers in the deck.
    * ``placement``: ``'free'`` (any empty cell) or ``'adjacent'`` (every card
      after the first must touch a placed card by a side or a corner).
    * ``first_cell``: where the first card must go -- ``'center'`` (Russian
      rule, cell c3), ``'top-left'`` (Finnish rule, cell a1), a cell index or
      coordinates, or ``None`` for anywhere.
    """

    jokers: int = 0
    placement: str = "free"
    first_cell: int | None = None

    def __post_init__(self) -> None:
        jokers = self.jokers
        if isinstance(jokers, bool) or not isinstance(jokers, (int, np.integer)) or jokers not in (0, 1, 2):
            raise ValueError(f"jokers={jokers!r}: expected 0, 1 or 2 (an integer)")
        object.__setattr__(self, "jokers", int(jokers))  # a numpy integer would not serialise to JSON
        if self.placement not in ("free", "adjacent"):
            raise ValueError(f"placement={self.placement!r}: expected 'free' or 'adjacent'")
        fc = self.first_cell
        if isinstance(fc, str) and fc.strip().lower() in ("none", "anywhere"):
            fc = None  # as a command line's --first-cell and a --rules spec give it
        if fc is not None:
            if isinstance(fc, str) and fc.strip().lower() in FIRST_CELLS:
                fc = FIRST_CELLS[fc.strip().lower()]
            else:
                try:
                    fc = parse_cell(fc)
                except ValueError:
                    raise ValueError(
                        f"first_cell={self.first_cell!r}: expected 'center', 'top-left', 'anywhere' or 'none' "
                        f"(or None), a cell index 0..24 or coordinates such as 'c3'"
                    ) from None
        object.__setattr__(self, "first_cell", fc)

    @property
    def deck_size(self) -> int:
        """Number of cards in the deck (52 plus jokers)."""
        return NUM_STANDARD + self.jokers

    def restricts(self, placed: int) -> bool:
        """Whether these rules leave fewer cells playable than the empty ones after ``placed`` cards: always under
        adjacent placement, and before the first card with a fixed first cell.  Boards mark the playable cells then."""
        return self.placement == "adjacent" or (self.first_cell is not None and placed == 0)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready description (``Rules(**d)`` reads it back)."""
        return {"jokers": self.jokers, "placement": self.placement, "first_cell": self.first_cell}

    def to_spec(self) -> str:
        """The ``KEY=VALUE`` spec :meth:`parse` reads back, naming only the options that differ from the defaults
        (``""`` for the plain rules), as a command line's ``--rules`` takes it: the first cell by name (``center``,
        ``top-left``) or by coordinates (``b2``), as the terminal game shows cells."""
        default = Rules().to_json()
        parts = []
        for key, value in self.to_json().items():
            if value == default[key]:
                continue
            if key == "first_cell":
                value = {None: "none", CENTER: "center", TOP_LEFT: "top-left"}.get(value) or cell_name(value)
            parts.append(f"{key}={value}")
        return ",".join(parts)

    @classmethod
    def parse(cls, spec: "str | dict[str, Any] | Rules") -> "Rules":
        """Rules from a spec: ``"jokers=2,placement=adjacent,first_cell=center"`` (``first-cell`` and ``none`` are
        accepted too), a JSON object (``to_json``'s form, as game records store it), the path of a JSON file
        holding one or of a saved game record (its ``rules``), or a mapping; options not named keep their defaults.  Errors name the bad part and what was
        expected."""
        return spec if isinstance(spec, Rules) else cls(**cls.spec_options(spec))

    @classmethod
    def with_options(cls, spec: "str | dict[str, Any] | Rules | None" = None, **options: Any) -> "Rules":
        """The rules of ``spec`` (see :meth:`parse`; ``None``: the defaults) with ``options`` added; options that are
        ``None`` are ignored.  An option that contradicts one the spec names (a ``Rules`` names those that differ
        from the defaults) is an error naming both (a command line's ``--rules`` and its single flags)."""
        given = cls.spec_options(spec) if spec is not None else {}
        extra = cls.spec_options({k: v for k, v in options.items() if v is not None})
        for key, value in extra.items():
            if key in given and given[key] != value:
                raise ValueError(f"{key}={options[key]!r} contradicts rules {spec!r} ({key}={given[key]!r})")
        return cls(**{**given, **extra})

    @classmethod
    def spec_options(cls, spec: "str | dict[str, Any] | Rules") -> dict[str, Any]:
        """The options a spec of :meth:`parse` names, validated and normalised (``to_json``'s values); a ``Rules``
        names the options that differ from the defaults, as :meth:`to_spec` writes them."""
        if isinstance(spec, Rules):
            default = Rules().to_json()
            return {key: value for key, value in spec.to_json().items() if value != default[key]}
        source = f"rules {spec!r}"
        if isinstance(spec, str):
            text = spec.strip()
            if text.startswith("{") or text.lower().endswith(".json") or ("=" not in text and os.path.isfile(text)):
                if not text.startswith("{"):
                    source = f"rules file {text!r}"
                read_object = functools.partial(_rules_json_object, source)
                try:
                    if text.startswith("{"):
                        spec = json.loads(text, object_pairs_hook=read_object)
                    else:
                        with open(text, encoding="utf-8") as fh:
                            spec = json.load(fh, object_pairs_hook=read_object)
                        if isinstance(spec, dict) and "deck" in spec and isinstance(spec.get("rules"), dict):
                            _check_record_version(source, spec)
                            spec = spec["rules"]  # a saved game record: the rules it was played under
                except RecursionError:
                    raise ValueError(f"{source}: JSON nested too deeply to read: expected an object such as "
                                     '{"jokers": 2, "placement": "adjacent", "first_cell": "center"}') from None
                except OSError as exc:
                    raise ValueError(f"{source}: cannot read it ({exc.strerror})") from None
                except UnicodeDecodeError:
                    raise ValueError(f"{source}: not UTF-8 text: expected a JSON object such as "
                                     '{"jokers": 2, "placement": "adjacent", "first_cell": "center"}') from None
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{source}: not valid JSON ({exc.msg}): expected an object such as "
                                     '{"jokers": 2, "placement": "adjacent", "first_cell": "center"}') from None
                except ValueError as exc:  # an integer of more digits than Python reads
                    if str(exc).startswith(source):  # _rules_json_object's own, already naming the source
                        raise
                    raise ValueError(f"{source}: cannot be read as JSON ({exc}): expected an object such as "
                                     '{"jokers": 2, "placement": "adjacent", "first_cell": "center"}') from None
            else:
                pairs: dict[str, Any] = {}
                for part in filter(None, (p.strip() for p in text.split(","))):
                    key, eq, value = part.partition("=")
                    if not eq or not key.strip() or not value.strip():
                        raise ValueError(f"{source}: {part!r} is not KEY=VALUE: expected e.g. "
                                         "'jokers=2,placement=adjacent,first_cell=center', a JSON object "
                                         "or the path of a .json file")
                    key, value = key.strip().replace("-", "_"), value.strip()
                    if key in pairs:
                        raise ValueError(f"{source}: {key!r} is given twice")
                    if key == "jokers":
                        try:
                            value = int(value)
                        except ValueError:
                            raise ValueError(f"{source}: jokers={value!r}: expected 0, 1 or 2") from None
                    pairs[key] = value  # first_cell=none is read by Rules itself
                spec = pairs
        if isinstance(spec, Mapping):
            spec = dict(spec)
        if not isinstance(spec, dict):
            raise ValueError(f"{source}: expected KEY=VALUE pairs, a JSON object or a mapping, "
                             f"got {type(spec).__name__}")
        unknown = sorted(set(spec) - {"jokers", "placement", "first_cell"}, key=str)  # keys of any type
        if unknown:
            raise ValueError(f"{source}: unknown rule option(s) {unknown}: expected jokers, placement, first_cell")
        full = cls(**spec).to_json()
        return {key: full[key] for key in spec}


def shuffled_deck(rng: np.random.Generator, rules: Rules) -> np.ndarray:
    """A uniformly shuffled deck of the rules' cards (argsort of uniform keys, so it batches the same way)."""
    return np.argsort(rng.random(rules.deck_size), kind="stable").astype(np.int64)


@dataclass
class GameState:
    """A plain, copyable game state.

    ``deck`` is the draw order (the first 25 cards are played), ``board`` the
    25 cells row-major (``-1`` empty), ``placements`` the cells filled so far
    in order.  The ``line_*`` lists are running statistics of the 10 lines
    (rows 0-4, then columns 0-4) used for table-driven scoring.

    Build one with :meth:`PokerSquaresGame.init`, which checks the deck (at
    least 25 distinct cards of the rules' deck) and fills the statistics; a
    ``GameState`` built field by field is taken as given, unchecked, since
    search copies states in its inner loops.
    """

    deck: tuple[int, ...]
    board: list[int] = field(default_factory=lambda: [EMPTY] * NUM_CELLS)
    placements: list[int] = field(default_factory=list)
    occupied: int = 0
    frontier: int = 0
    line_t: list[int] = field(default_factory=lambda: [0] * 10)
    line_k: list[int] = field(default_factory=lambda: [0] * 10)
    line_pairs: list[int] = field(default_factory=lambda: [0] * 10)
    line_ranks: list[int] = field(default_factory=lambda: [0] * 10)
    line_suits: list[int] = field(default_factory=lambda: [0] * 10)
    rank_counts: list[int] = field(default_factory=lambda: [0] * 130)

    @property
    def num_placed(self) -> int:
        """How many cards are on the board."""
        return len(self.placements)

    @property
    def card(self) -> int:
        """The drawn card waiting to be placed (``-1`` once the board is full)."""
        n = len(self.placements)
        return self.deck[n] if n < NUM_CELLS else EMPTY

    @property
    def terminal(self) -> bool:
        """Whether all 25 cells are filled."""
        return len(self.placements) >= NUM_CELLS

    def copy(self) -> "GameState":
        """An independent copy (for search)."""
        return GameState(
            self.deck,
            self.board.copy(),
            self.placements.copy(),
            self.occupied,
            self.frontier,
            self.line_t.copy(),
            self.line_k.copy(),
            self.line_pairs.copy(),
            self.line_ranks.copy(),
            self.line_suits.copy(),
            self.rank_counts.copy(),
        )

    def line_keys(self) -> list[int]:
        """``LINE_MASK`` indices of the 10 lines as they stand."""
        return [
            _scalar_key(self.line_t[i], self.line_k[i], self.line_pairs[i], self.line_ranks[i], self.line_suits[i])
            for i in range(10)
        ]

    def seen(self) -> set[int]:
        """Codes of the cards seen so far: the board and the drawn card."""
        s = set(self.deck[: min(len(self.placements) + 1, NUM_CELLS)])
        return s

    def grid(self) -> np.ndarray:
        """The board as a 5x5 array of codes."""
        return np.array(self.board, dtype=np.int64).reshape(5, 5)


class PokerSquaresGame:
    """The rules of Poker Squares as pure functions over :class:`GameState`.

    ``init(deck)`` starts a game; ``legal_mask``/``legal_cells`` give the cells
    the drawn card may go to; ``step`` returns a new state (``apply`` changes
    a state in place, for speed); ``line_points``, ``score`` and ``hands``
    read the board under the game's point system (or any other).
    """

    def __init__(self, rules: Rules | None = None, system: Any = "american") -> None:
        if rules is None:
            rules = Rules()
        elif isinstance(rules, (str, Mapping)):
            rules = Rules.parse(rules)
        elif not isinstance(rules, Rules):
            raise TypeError(f"rules={rules!r}: expected a Rules, a spec such as 'jokers=2,placement=adjacent', "
                            f"a mapping of rule options or None")
        self.rules = rules
        self.system: PointSystem = point_system(system)
        self._line_points = self.system.line_points_table.tolist()

    # ---- dealing ---------------------------------------------------------
    def check_deck(self, deck: Sequence[Any], *, where: str = "deck") -> tuple[int, ...]:
        """A validated draw order: at least 25 distinct cards of the rules' deck.

        ``deck`` is text, a sequence (list, tuple, range) of codes or card texts, or a 1-D integer array; every
        sequence is read item by item as a list is (an array only is converted by numpy).  ``where`` names it in
        errors (an option's name).
        """
        if isinstance(deck, str):
            deck = parse_cards(deck)
        elif isinstance(deck, np.ndarray):
            if deck.ndim != 1:
                raise ValueError(f"{where} has shape {deck.shape}: expected a 1-D deck of card codes (the draw order)")
            deck = deck.tolist()
        elif isinstance(deck, (bytes, bytearray)) or not isinstance(deck, Sequence):
            raise TypeError(f"{where} {deck!r}: expected a sequence of card codes or texts (the draw order), or text, "
                            f"got {type(deck).__name__}")
        codes = check_codes(list(deck), where=where)
        if len(codes) < NUM_CELLS:
            raise ValueError(f"{where} has {len(codes)} cards: expected at least 25")
        jokers = [c for c in codes if c >= NUM_STANDARD]
        allowed = JOKERS[: self.rules.jokers]
        bad = [c for c in jokers if c not in allowed]
        if bad:
            raise ValueError(
                f"{where} holds joker code {bad[0]} but the rules allow {self.rules.jokers} joker(s) "
                f"(codes {list(allowed) or 'none'})"
            )
        return tuple(codes)

    def deal(self, rng: np.random.Generator) -> tuple[int, ...]:
        """A shuffled deck drawn from ``rng``."""
        return tuple(shuffled_deck(rng, self.rules).tolist())

    def init(self, deck: Sequence[Any], *, validate: bool = True) -> GameState:
        """A new game that will draw ``deck`` in order (``validate=False`` trusts a deck from ``deal``)."""
        return GameState(self.check_deck(deck) if validate else tuple(deck))

    # ---- legality --------------------------------------------------------
    def legal_mask(self, state: GameState) -> int:
        """Bit set of the cells where the drawn card may go (0 once the board is full)."""
        n = len(state.placements)
        if n >= NUM_CELLS:
            return 0
        free = ALL_CELLS & ~state.occupied
        if not n:
            fc = self.rules.first_cell
            return free & (1 << fc) if fc is not None else free
        if self.rules.placement == "adjacent":
            return free & state.frontier
        return free

    def legal_cells(self, state: GameState) -> list[int]:
        """The cells where the drawn card may go, in increasing order."""
        mask = self.legal_mask(state)
        cells = []
        while mask:
            low = mask & -mask
            cells.append(low.bit_length() - 1)
            mask ^= low
        return cells

    def action_mask(self, state: GameState) -> np.ndarray:
        """The legal cells as an int8 array of shape (25,)."""
        mask = self.legal_mask(state)
        return np.array([(mask >> c) & 1 for c in range(NUM_CELLS)], dtype=np.int8)

    def why_illegal(self, state: GameState, cell: Any) -> str | None:
        """Why ``cell`` is not a legal action now, or ``None`` if it is."""
        if isinstance(cell, (bool, np.bool_)) or not isinstance(cell, (int, np.integer)):
            if isinstance(cell, np.ndarray) and cell.shape == () and np.issubdtype(cell.dtype, np.integer):
                cell = int(cell)
            else:
                return f"action {cell!r} is not an integer cell index 0..24"
        cell = int(cell)
        if state.terminal:
            return "the game is over: all 25 cells are filled"
        if not 0 <= cell < NUM_CELLS:
            return f"cell {cell} is out of range 0..24"
        name = f"cell {cell} ({cell_name(cell)})"
        if state.occupied >> cell & 1:
            return f"{name} is occupied by {format_card(state.board[cell])}"
        if not self.legal_mask(state) >> cell & 1:
            if not state.placements:
                fc = self.rules.first_cell
                return f"{name} is not the first cell: the first card must go on cell {fc} ({cell_name(fc)})"
            return f"{name} touches no placed card (placement='adjacent')"
        return None

    # ---- transitions -----------------------------------------------------
    def apply(self, state: GameState, cell: int) -> tuple[float, list[int]]:
        """Place the drawn card on ``cell`` in place; the points and indices of the lines it completes.

        Over a game these points add up to :meth:`score` exactly under a table of whole numbers (within float
        rounding under fractions).

        Raises :class:`IllegalActionError` (naming the cell and the reason) and
        leaves ``state`` untouched if the move is illegal.
        """
        if type(cell) is not int or cell < 0 or not (self.legal_mask(state) >> cell & 1):  # no shift by a negative
            reason = self.why_illegal(state, cell)
            if reason is not None:
                raise IllegalActionError(reason)
        return self._apply_legal(state, int(cell))

    def _apply_legal(self, state: GameState, cell: int) -> tuple[float, list[int]]:
        # The hot path of every env and search agent: locals and straight-line code for the two lines.
        placements = state.placements
        code = state.deck[len(placements)]
        state.board[cell] = code
        placements.append(cell)
        state.occupied |= 1 << cell
        state.frontier |= ADJACENT[cell]
        row, col = CELL_LINES[cell]
        if code >= NUM_STANDARD:
            line_k = state.line_k
            line_k[row] += 1
            line_k[col] += 1
        else:
            rank = code % 13
            counts, pairs = state.rank_counts, state.line_pairs
            i = row * 13 + rank
            pairs[row] += counts[i]
            counts[i] += 1
            i = col * 13 + rank
            pairs[col] += counts[i]
            counts[i] += 1
            rank_bit, suit_bit = 1 << rank, 1 << code // 13
            ranks, suits = state.line_ranks, state.line_suits
            ranks[row] |= rank_bit
            ranks[col] |= rank_bit
            suits[row] |= suit_bit
            suits[col] |= suit_bit
        line_t = state.line_t
        points = 0.0
        completed: list[int] = []
        t = line_t[row] = line_t[row] + 1
        if t == 5:
            completed.append(row)
            points += self._line_points[self._key(state, row)]
        t = line_t[col] = line_t[col] + 1
        if t == 5:
            completed.append(col)
            points += self._line_points[self._key(state, col)]
        return points, completed

    @staticmethod
    def _key(state: GameState, line: int) -> int:
        return _scalar_key(
            state.line_t[line],
            state.line_k[line],
            state.line_pairs[line],
            state.line_ranks[line],
            state.line_suits[line],
        )

    def step(self, state: GameState, cell: int) -> tuple[GameState, float]:
        """The state after placing the drawn card on ``cell``, and the points of the lines it completes."""
        nxt = state.copy()
        points, _ = self.apply(nxt, cell)
        return nxt, points

    # ---- reading the board ----------------------------------------------
    def line_points(self, state: GameState, system: Any = None, *, partial: bool = False) -> list[float]:
        """Points of the 10 lines (rows then columns) under ``system`` (default: the game's).

        Incomplete lines score 0 unless ``partial`` is set, in which case they
        score the rank groups they hold (the library's reading of the Finnish
        timed-play rule, which checks unfinished boards without saying how an
        incomplete line scores).
        """
        table = self.system.line_points_table if system is None else point_system(system).line_points_table
        keys = state.line_keys()
        return [
            float(table[k]) if (partial or state.line_t[i] == 5) else 0.0 for i, k in enumerate(keys)
        ]

    def score(self, state: GameState, system: Any = None, *, partial: bool = False) -> float:
        """Total points of the board under ``system`` (default: the game's).

        The 10 lines are added in one fixed order, rows 1-5 then columns a-e, left to right, as
        :func:`~pokersquares_env.scoring.score_grid` and ``score_grids`` add them, so every path gives the same
        float for a board, fractional tables included.  The points :meth:`apply` returns (an env's rewards) add up
        to this score exactly under a table of whole numbers; under fractions they are added in placement order, so
        their sum may differ from it by float rounding in the last bits.
        """
        return add_points(self.line_points(state, system, partial=partial))  # left to right on every Python

    def hands(self, state: GameState, system: Any = None, *, partial: bool = False) -> list[str]:
        """Category keys of the 10 lines; ``'none'`` for a line not yet scored."""
        table = self.system.line_category_table if system is None else point_system(system).line_category_table
        out = []
        for i, k in enumerate(state.line_keys()):
            c = int(table[k])
            out.append(CATEGORY_KEYS[c] if c >= 0 and (partial or state.line_t[i] == 5) else NO_HAND_KEY)
        return out

    def unseen(self, state: GameState) -> list[int]:
        """Codes of the deck's cards not yet seen (not on the board, not the drawn card)."""
        seen = state.seen()
        return [c for c in range(self.rules.deck_size) if c not in seen]

    def is_terminal(self, state: GameState) -> bool:
        """Whether the game is over."""
        return state.terminal


def line_cells(line: int) -> list[int]:
    """The 5 cells of line ``line`` (0-4 rows, 5-9 columns)."""
    return LINE_CELLS[line].tolist()


def line_name(line: int) -> str:
    """A human name for a line: ``'row 1'`` .. ``'col e'``."""
    return f"row {line + 1}" if line < 5 else f"col {'abcde'[line - 5]}"


_ = NUM_CODES  # re-exported for adapters that size observations
