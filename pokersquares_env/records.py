"""Game records: a versioned JSON form of a Poker Squares game, with loading, validation and replay.

A record holds the rules and point system, the seed, the deck order, each
placement in order, and the final board, hands and both scores::

    {
      "format": "pokersquares-record", "version": 1, "game": "PokerSquares-v0",
      "rules": {"jokers": 0, "placement": "free", "first_cell": null},
      "point_system": {"name": "american", "points": {...}, "win_threshold": 100},
      "seed": 7, "agent": "greedy",
      "deck": ["T♠", "4♦", ...],                       # draw order, >= 25 cards
      "placements": [{"card": "T♠", "cell": "c3"}, ...],  # in play order
      "finished": true,
      "board": ["8♠", ...],                             # 25 cells row-major, ".." empty
      "hands": ["flush", ...],                          # rows 1-5 then columns a-e
      "scores": {"american": 302, "english": 113}, "score": 302,
      "meta": {}
    }

A board checked before it was full (Poker Shuffle's ``budget``, the Finnish
"agreed time") also has ``"checked": true``: its hands and scores count the
incomplete lines as the env does (the rank groups they hold, ``partial=True``
in the core).  The field is written only for such a record and reads as
``false`` when absent.

Loading replays every placement through the game core, so a damaged or
hand-edited record is rejected with a :class:`RecordError` that names the
field (and the move number for an illegal placement); the recorded board,
hands and scores must match what the placements give.  Saving writes a
temporary file and renames it, so an interrupted save never leaves a
half-written record.
"""

from __future__ import annotations

import json
import operator
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pokersquares_env._files import final_path, object_without_repeats, plain_temp_file
from pokersquares_env.cards import NUM_CODES, assign_jokers, format_card, format_card_numbered, parse_card
from pokersquares_env.core import (
    NUM_CELLS,
    RECORD_FORMAT,
    RECORD_VERSION,
    GameState,
    IllegalActionError,
    PokerSquaresGame,
    Rules,
    cell_name,
    parse_cell,
)
from pokersquares_env.scoring import POINT_SYSTEMS, point_system

__all__ = [
    "FORMAT",
    "VERSION",
    "GameRecord",
    "RecordError",
    "load_record",
    "load_records",
    "read_record",
    "save_record",
    "append_record",
]

FORMAT = RECORD_FORMAT  # "pokersquares-record"
#: every top-level field a record may have (``checked`` only for a board checked before it was full)
FIELDS = ("format", "version", "game", "rules", "point_system", "seed", "agent", "deck", "placements", "finished",
          "board", "hands", "scores", "score", "meta", "checked")
VERSION = RECORD_VERSION  # 1
#: how every record written by this module begins (``json.dumps`` of ``to_dict()``): the start of a line cut short
_RECORD_START = '{"format": "pokersquares-record"'


class RecordError(ValueError):
    """A record that cannot be read: names the field (and the move) at fault."""


def _record_card(value: Any) -> int:
    """A record's card: its text, or an integer code 0..53 (not a float or a bool)."""
    if isinstance(value, str):
        return parse_card(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{value!r} is not a card: expected its text (e.g. 'T♠', 'JK') or an integer code 0..53")
    if not 0 <= value < NUM_CODES:
        raise ValueError(f"card code {value} out of range: expected 0..{NUM_CODES - 1}")
    return value


def _jsonable_number(x: float) -> float | int:
    return int(x) if float(x).is_integer() else float(x)


#: The largest seed a record holds, in bits (numpy's seed sequences take any size; 128 bits is their usual entropy).
MAX_SEED_BITS = 1024


def _check_fields(seed: Any, agent: Any, meta: Any, fail: Any) -> None:
    """A record's ``seed``, ``agent`` and ``meta``, checked; ``fail(field, message)`` makes the error."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise fail("seed", f"expected a non-negative integer or null, got {seed!r}")
    if seed is not None and seed.bit_length() > MAX_SEED_BITS:  # JSON readers refuse integers of 4,300+ digits
        raise fail("seed", f"an integer of {seed.bit_length():,} bits: expected at most {MAX_SEED_BITS} bits")
    if agent is not None and not isinstance(agent, str):
        raise fail("agent", f"expected a string or null, got {agent!r}")
    if not isinstance(meta, dict):
        raise fail("meta", f"expected an object or null, got {meta!r}")


def _check_checked(checked: Any, placed: int, fail: Any) -> None:
    """A record's ``checked`` flag: a bool, true only for a board of 1..24 placements (one checked before it was
    full); ``fail(field, message)`` makes the error."""
    if not isinstance(checked, bool):
        raise fail("checked", f"expected true or false, got {checked!r}")
    if checked and not 0 < placed < NUM_CELLS:
        raise fail("checked", f"true with {placed} placements: expected a board checked before it was full "
                              f"(1..{NUM_CELLS - 1} placements), or false")


@dataclass
class GameRecord:
    """One Poker Squares game: rules, point system, deck order and placements (see the module docstring).

    ``deck`` is read as the game reads a deck (card text or codes) and kept as codes; ``placements`` are cell
    indices 0..24 in play order.  ``checked`` marks a board checked before it was full (1..24 placements; Poker
    Shuffle's ``budget``): its hands and scores then count incomplete lines by the rank groups they hold.  A bad
    field is a :class:`RecordError` naming it, when the record is made.
    """

    rules: Rules
    system: Any  # PointSystem
    deck: list[int]
    placements: list[int]
    seed: int | None = None
    agent: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    checked: bool = False

    def __post_init__(self) -> None:
        # Rule specs and point-system names are read as the game core reads them; anything else is named now,
        # not when the record is saved.
        if not isinstance(self.rules, Rules):
            if not isinstance(self.rules, (str, dict)):
                raise TypeError(f"rules={self.rules!r}: expected a Rules, a rule spec or a mapping of rule options")
            self.rules = Rules.parse(self.rules)
        self.system = point_system(self.system)
        if self.seed is not None and not isinstance(self.seed, bool) and hasattr(self.seed, "__index__"):
            self.seed = operator.index(self.seed)  # a numpy integer, as an env's seed may be
        self.check_fields()
        self._check_game()

    def _check_game(self) -> None:
        """Check ``deck`` and ``placements`` (a :class:`RecordError` naming the field and the value).

        The deck is read as the game core reads one (card text or codes, at least 25 distinct cards of the rules'
        deck) and kept as a list of codes; the placements must be cell indices 0..24, at most 25 of them.  Their
        legality is checked when the record is replayed (saving replays it).
        """

        def fail(where: str, msg: str) -> RecordError:
            return RecordError(f"record: field {where!r}: {msg}")

        deck = self.deck
        if not isinstance(deck, (str, Sequence, np.ndarray)):
            raise fail("deck", f"expected a list of cards (text such as 'T♠', or codes 0..53), got {deck!r}")
        try:
            self.deck = list(PokerSquaresGame(self.rules, self.system).check_deck(deck))
        except (TypeError, ValueError) as exc:
            raise fail("deck", str(exc)) from None
        placements = self.placements
        if isinstance(placements, str) or not isinstance(placements, (Sequence, np.ndarray)):
            raise fail("placements", f"expected a list of cell indices 0..{NUM_CELLS - 1}, got {placements!r}")
        placements = list(placements)
        if len(placements) > NUM_CELLS:
            raise fail("placements", f"{len(placements)} placements: expected at most {NUM_CELLS}")
        cells = []
        for i, cell in enumerate(placements):
            if isinstance(cell, (bool, np.bool_)) or not isinstance(cell, (int, np.integer)) \
                    or not 0 <= int(cell) < NUM_CELLS:
                raise fail(f"placements[{i}]", f"{cell!r}: expected a cell index 0..{NUM_CELLS - 1} (row-major)")
            cells.append(int(cell))
        self.placements = cells
        if isinstance(self.checked, np.bool_):
            self.checked = bool(self.checked)
        _check_checked(self.checked, len(cells), fail)

    def check_fields(self) -> None:
        """Check ``seed``, ``agent`` and ``meta`` as loading does: a :class:`RecordError` naming the field."""
        _check_fields(self.seed, self.agent, self.meta, lambda where, msg: RecordError(f"record: field {where!r}: {msg}"))

    # ---- building --------------------------------------------------------
    @classmethod
    def from_game(
        cls,
        game: PokerSquaresGame,
        state: GameState,
        *,
        seed: int | None = None,
        agent: str | None = None,
        meta: dict[str, Any] | None = None,
        checked: bool = False,
    ) -> "GameRecord":
        """The record of a game played through ``game`` up to ``state``; ``checked=True`` for a board checked
        before it was full (its incomplete lines then score the rank groups they hold)."""
        return cls(game.rules, game.system, list(state.deck), list(state.placements), seed, agent, dict(meta or {}),
                   checked)

    def replay(self) -> tuple[PokerSquaresGame, GameState]:
        """Play the placements through the game core; the game and the final state."""
        game = PokerSquaresGame(self.rules, self.system)
        state = game.init(self.deck)
        for cell in self.placements:
            game.apply(state, cell)
        return game, state

    def states(self) -> Iterator[tuple[int, GameState]]:
        """Every state of the game in order, with the move number (0 = the empty board)."""
        game = PokerSquaresGame(self.rules, self.system)
        state = game.init(self.deck)
        yield 0, state.copy()
        for i, cell in enumerate(self.placements, start=1):
            game.apply(state, cell)
            yield i, state.copy()

    # ---- JSON --------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form (see the module docstring)."""
        game, state = self.replay()
        partial = self.checked  # a board checked before it was full: incomplete lines count, as the env counts them
        data = {
            "format": FORMAT,
            "version": VERSION,
            "game": "PokerSquares-v0",
            "rules": self.rules.to_json(),
            "point_system": self.system.to_json(),
            "seed": self.seed,
            "agent": self.agent,
            "deck": [format_card_numbered(c) for c in self.deck],
            "placements": [
                {"card": format_card_numbered(self.deck[i]), "cell": cell_name(c)} for i, c in enumerate(self.placements)
            ],
            "finished": state.terminal,
            "board": [format_card_numbered(c) for c in state.board],
            "hands": game.hands(state, partial=partial),
            "scores": {
                "american": _jsonable_number(game.score(state, "american", partial=partial)),
                "english": _jsonable_number(game.score(state, "english", partial=partial)),
            },
            "score": _jsonable_number(game.score(state, partial=partial)),
            "meta": self.meta,
        }
        if self.checked:  # written only when set, so that every other record reads as before
            data["checked"] = True
        return data

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "record") -> "GameRecord":
        """A validated record from its JSON form; raises :class:`RecordError` naming the bad field."""

        def fail(where: str, msg: str) -> RecordError:
            return RecordError(f"{source}: field {where!r}: {msg}")

        if not isinstance(data, dict):
            raise RecordError(f"{source}: expected a JSON object, got {type(data).__name__}")
        for key in ("format", "version"):
            if key not in data:
                raise fail(key, "missing")
        if data.get("format") != FORMAT:
            raise fail("format", f"expected {FORMAT!r}, got {data.get('format')!r}")
        version = data.get("version")
        if isinstance(version, bool) or not isinstance(version, int) or version != VERSION:
            raise fail("version", f"expected {VERSION}, got {data.get('version')!r} (this library reads version {VERSION})")
        if data.get("game", "PokerSquares-v0") != "PokerSquares-v0":
            raise fail("game", f"expected 'PokerSquares-v0' (the game this record format holds), got {data['game']!r}")
        for key in ("rules", "point_system", "deck", "placements"):
            if key not in data:
                raise fail(key, "missing")
        unknown = [key for key in data if key not in FIELDS]
        if unknown:  # a misspelt "sede" would otherwise read as no seed, and be lost on the next save
            raise RecordError(f"{source}: unknown field{'s' if len(unknown) > 1 else ''} "
                              f"{', '.join(map(repr, unknown))}: expected only {', '.join(FIELDS)} (anything else "
                              f"belongs in 'meta')")
        try:
            rules_data = data["rules"]
            if not isinstance(rules_data, dict):
                raise ValueError(f"expected an object, got {type(rules_data).__name__}")
            unknown = set(rules_data) - {"jokers", "placement", "first_cell"}
            if unknown:
                raise ValueError(f"unknown rule options {sorted(unknown)}")
            rules = Rules(**rules_data)
        except (TypeError, ValueError) as exc:
            raise fail("rules", str(exc)) from None
        if isinstance(data["point_system"], str) and data["point_system"].strip().lower() not in POINT_SYSTEMS:
            raise fail("point_system", f"{data['point_system']!r}: expected 'american', 'english' or an object "
                       f"{{name, points, win_threshold}} (a record does not read other files)")
        if isinstance(data["point_system"], dict) and "name" in data["point_system"] \
                and not isinstance(data["point_system"]["name"], str):
            raise fail("point_system.name", f"expected a string, got {data['point_system']['name']!r}")
        try:
            system = point_system(data["point_system"])
        except (TypeError, ValueError) as exc:
            raise fail("point_system", str(exc)) from None
        if not isinstance(data["deck"], list):
            raise fail("deck", "expected a list of cards")
        deck = []
        for i, text in enumerate(data["deck"]):
            try:
                deck.append(_record_card(text))
            except (TypeError, ValueError) as exc:
                raise fail(f"deck[{i}]", str(exc)) from None
        deck = assign_jokers(data["deck"], deck)  # a plain "JK" is a joker no "JK1"/"JK2" names (as parse_cards)
        game = PokerSquaresGame(rules, system)
        try:
            state = game.init(deck)
        except (TypeError, ValueError) as exc:
            raise fail("deck", str(exc)) from None
        if not isinstance(data["placements"], list):
            raise fail("placements", "expected a list of {card, cell} objects")
        cells = []
        for i, move in enumerate(data["placements"]):
            where = f"placements[{i}]"
            if not isinstance(move, dict) or "cell" not in move:
                raise fail(where, "expected an object with 'card' and 'cell'")
            extra = [key for key in move if key not in ("card", "cell")]
            if extra:
                raise fail(where, f"move {i + 1}: unknown key{'s' if len(extra) > 1 else ''} "
                                  f"{', '.join(map(repr, extra))}: expected only 'card' and 'cell'")
            try:
                cell = parse_cell(move["cell"])
            except ValueError as exc:
                raise fail(f"{where}.cell", f"move {i + 1}: {exc}") from None
            if i >= len(deck):
                raise fail(where, f"move {i + 1}: the deck has only {len(deck)} cards")
            if "card" in move:
                try:
                    card = _record_card(move["card"])
                except (TypeError, ValueError) as exc:
                    raise fail(f"{where}.card", f"move {i + 1}: {exc}") from None
                if card != deck[i] and not (card >= 52 and deck[i] >= 52):  # the two jokers are alike
                    raise fail(
                        f"{where}.card",
                        f"move {i + 1} places {format_card(card)} but the deck deals {format_card(deck[i])}",
                    )
            try:
                game.apply(state, cell)
            except IllegalActionError as exc:
                raise fail(f"{where}.cell", f"illegal placement at move {i + 1}: {exc}") from None
            cells.append(cell)
        if "finished" in data and not isinstance(data["finished"], bool):
            raise fail("finished", f"expected true or false, got {data['finished']!r}")
        checked = data.get("checked", False)
        _check_checked(checked, len(cells), fail)
        seed, agent, meta = data.get("seed"), data.get("agent"), data.get("meta")
        meta = {} if meta is None else meta
        _check_fields(seed, agent, meta, fail)  # before the record is built, so that the error names this source
        record = cls(rules, system, deck, cells, seed, agent, meta, checked)
        # The stored results must be what the placements give.
        expected = record.to_dict()
        if isinstance(data.get("board"), list):  # a board may write either joker as plain "JK"
            if len(data["board"]) == len(expected["board"]):
                expected["board"] = [
                    "JK" if t in ("JK1", "JK2") and j == "JK" else t
                    for t, j in zip(expected["board"], data["board"], strict=True)
                ]
        for key in ("board", "hands", "scores", "score", "finished"):
            if key in data and not _same_json(data[key], expected[key]):
                hint = ""
                if not checked and 0 < len(cells) < NUM_CELLS and key in ("hands", "scores", "score") \
                        and data[key] == cls(rules, system, deck, cells, checked=True).to_dict()[key]:
                    hint = ' (as a board checked before it was full scores: such a record has "checked": true)'
                raise fail(key, f"the record says {data[key]!r} but its placements give {expected[key]!r}{hint}")
        return record


def _same_json(given: Any, expected: Any) -> bool:
    """Whether a stored value is the expected one: equal, and ``true``/``false`` never standing for 1 or 0 (Python's
    ``True == 1`` would take ``"score": true`` for a score of 1)."""
    if isinstance(given, bool) or isinstance(expected, bool):
        return isinstance(given, bool) and isinstance(expected, bool) and given == expected
    if isinstance(given, dict) and isinstance(expected, dict):
        return given.keys() == expected.keys() and all(_same_json(given[k], expected[k]) for k in given)
    if isinstance(given, list) and isinstance(expected, list):
        return len(given) == len(expected) and all(_same_json(a, b) for a, b in zip(given, expected))
    return given == expected


# ---- files -------------------------------------------------------------------


def _record_json(record: GameRecord | Mapping[str, Any], indent: int | None = None) -> str:
    """The JSON text of a record (or of its dict form, read by :meth:`GameRecord.from_dict`), checked first, so that
    no file is written that ``load_record`` refuses.

    ``to_dict`` replays the placements through the core (an illegal one raises ``IllegalActionError``);
    ``seed``, ``agent`` and ``meta`` are checked as loading checks them, and ``meta`` must be standard JSON
    (no NaN or infinity): :class:`RecordError` naming the field, before any file is touched.
    """
    if isinstance(record, Mapping):  # a record's dict form (to_dict, or EvaluationResult.game_records()): read it
        record = GameRecord.from_dict(record)
    elif not isinstance(record, GameRecord):
        from pokersquares_env.vector import _brief  # only on this error path: the vector env is not needed here

        raise TypeError(f"record {_brief(record)} ({type(record).__name__}): expected a GameRecord or its dict form "
                        f"(GameRecord.to_dict())")
    record.check_fields()  # again: the fields may have been changed since the record was made
    record._check_game()
    game = PokerSquaresGame(record.rules, record.system)
    state = game.init(record.deck)
    for i, cell in enumerate(record.placements):  # the move that cannot be played is named, as loading names it
        try:
            game.apply(state, cell)
        except (IllegalActionError, ValueError) as exc:
            raise RecordError(f"record: field 'placements[{i}]': move {i + 1} cannot be played: {exc}") from None
    _check_meta_keys(record.meta, "meta")
    data = record.to_dict()
    try:
        return json.dumps(data, ensure_ascii=False, indent=indent, allow_nan=False)
    except RecursionError:
        raise RecordError("record: field 'meta': nested too deeply to write as JSON") from None
    except (TypeError, ValueError) as exc:
        raise RecordError(f"record: field 'meta': not JSON-ready ({exc}): expected JSON values, without NaN or "
                          f"infinity") from None


def _check_meta_keys(value: Any, where: str, depth: int = 0) -> None:
    """Every object key in ``meta`` is a string: JSON would write ``{1: ...}`` as ``{"1": ...}``, and the record
    would load back changed.  (Deeper than JSON can be written is left to ``json.dumps`` to name.)"""
    if depth > 200:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise RecordError(f"record: field {where!r}: key {key!r} is of type {type(key).__name__}: expected "
                                  f"string keys (JSON writes every key as a string, so the record would load back "
                                  f"changed)")
            _check_meta_keys(item, f"{where}.{key}", depth + 1)
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_meta_keys(item, f"{where}[{i}]", depth + 1)


def save_record(record: GameRecord | Mapping[str, Any], path: str | os.PathLike) -> None:
    """Write a record (a :class:`GameRecord` or its dict form) as JSON atomically (a temporary file renamed into place).

    The record is checked to load back first (:class:`RecordError` otherwise), so a file is never replaced by
    one that ``load_record`` refuses.  A record replaced keeps its file mode, and a symbolic link stays a link
    (the file it points to is replaced).
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        raise IsADirectoryError(f"record path {path!r} is a folder: expected the path of a JSON file to write")
    text = _record_json(record, indent=1)
    path = final_path(path)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = plain_temp_file(directory, ".record-", ".tmp", replacing=path)  # a record is an ordinary file
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def append_record(record: GameRecord | Mapping[str, Any], path: str | os.PathLike) -> None:
    """Append a record (a :class:`GameRecord` or its dict form) as one JSON line to a JSONL file (one ``write`` of a
    whole line).

    The record is checked to load back first, as by :func:`save_record`.  An existing non-empty file must be JSONL
    of records: its first non-blank line must be a game record, else a :class:`RecordError` names the file and it is
    left as it was (appending a line to a pretty-printed ``.json`` record or to another file would make it unreadable).
    If the file ends in a partial line (a write cut short), the record starts a new line, so that line alone stays
    damaged: ``load_records`` names it (``skip_bad=True`` reads the others) and :func:`read_record` reads any other
    line.
    """
    line = _record_json(record) + "\n"
    _check_append_target(os.fspath(path))
    with open(path, "a+b") as fh:
        if fh.tell() > 0:
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) != b"\n":
                line = "\n" + line
        fh.write(line.encode("utf-8"))


class _KeyTwice(ValueError):
    """A JSON object of a record naming a key twice (``json`` would keep the last value silently)."""


def _record_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    return object_without_repeats(
        pairs, lambda key: _KeyTwice(f"key {key!r} is given twice in one JSON object: expected each field once"))


def _record_start_cut_in_a_character(raw: bytes) -> bool:
    """Whether ``raw``, a line that is not UTF-8 text, is the start of a record cut short inside a character's bytes
    (a suit symbol's, by an interrupted write): all of it is text but an incomplete character at its end."""
    line = raw.rstrip(b"\r\n")
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason != "unexpected end of data" or exc.end != len(line):
            return False
        text = line[:exc.start].decode("utf-8", errors="strict") if exc.start else ""
        return text.startswith(_RECORD_START)
    return False


def _check_append_target(path: str) -> None:
    """A :class:`RecordError` unless ``path`` is missing, empty (blank lines only) or starts with a JSONL game record:
    its first non-blank line, or the first after lines that begin as a record does and were cut short (an interrupted
    write, which ``load_records`` names; a file of such lines only passes too).  Reading stops at the first record,
    so appending stays cheap in a long file.  A ``.json`` name is refused too: such a file holds one record
    (:func:`save_record`), which a second line would make unreadable."""
    if path.lower().endswith(".json"):
        raise RecordError(f"{path}: a .json file holds one game record (save_record), which lines appended to it "
                          f"would make unreadable: expected the name of a .jsonl file of records, one per line"
                          f"{'; the file is left as it was' if os.path.exists(path) else ''}")
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        return
    expected = "expected a JSONL file of game records, one per line (or a new or empty file)"
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                if _record_start_cut_in_a_character(raw):
                    continue  # as a record's start cut short anywhere else (load_records names it as not UTF-8)
                raise RecordError(f"{path}: line {lineno} is not UTF-8 text: {expected}; the file is left as it "
                                  f"was") from None
            try:
                _record_of_line(path, text, lineno, text.rstrip("\r\n"))
                return
            except RecordError as exc:
                line = text.strip()
                if line.startswith(_RECORD_START) or (len(line) > 1 and _RECORD_START.startswith(line)):
                    continue  # the start of a record, cut short: the next line may be a whole one (a lone "{" is
                    # more likely a pretty-printed file's first line)
                problem = str(exc)  # "PATH:LINE: what" -> "line LINE: what"
                problem = f"line {problem[len(path) + 1:]}" if problem.startswith(f"{path}:") else problem
                raise RecordError(f"{path}: not JSONL of game records ({problem}): {expected}; the file is left as "
                                  f"it was") from None


def load_record(path: str | os.PathLike) -> GameRecord:
    """Read and validate one JSON record file."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh, object_pairs_hook=_record_object)
    except json.JSONDecodeError as exc:
        raise RecordError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}") from None
    except _KeyTwice as exc:
        raise RecordError(f"{path}: {exc}") from None
    except UnicodeDecodeError as exc:
        raise RecordError(f"{path}: not UTF-8 text: {exc}") from None
    except RecursionError:
        raise RecordError(f"{path}: JSON nested too deeply to read: expected a game record object") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise RecordError(f"{path}: cannot be read as JSON ({exc}): expected a game record object") from None
    return GameRecord.from_dict(data, source=path)


_NOT_UTF8 = re.compile("[\udc80-\udcff]")  # bytes that are not UTF-8, as decoded with surrogateescape


def _read_text(path: str, *, jsonl: bool = False) -> str:
    """The file's text (newlines translated as text mode does).  Bytes that are not UTF-8 are a :class:`RecordError`,
    unless ``jsonl``: a JSONL file keeps them as lone surrogates, so that only the lines holding them (a write cut
    short in the middle of a suit symbol) are damaged, and :func:`_record_of_line` names those lines."""
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if not jsonl:
            raise RecordError(f"{path}: not UTF-8 text: {exc}") from None
        text = data.decode("utf-8", "surrogateescape")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _jsonl_lines(text: str) -> list[tuple[int, str]]:
    """The non-blank lines of a JSONL text, with their line numbers."""
    return [(no, line) for no, line in enumerate(text.split("\n"), start=1) if line.strip()]


def _record_of_line(path: str, text: str, lineno: int, line: str) -> GameRecord:
    if _NOT_UTF8.search(line):
        raise RecordError(f"{path}:{lineno}: not UTF-8 text (a write cut short, or damaged bytes): expected a game "
                          f"record object on each line")
    try:
        data = json.loads(line, object_pairs_hook=_record_object)
    except json.JSONDecodeError as exc:
        raise _jsonl_error(path, text, lineno, line, exc) from None
    except _KeyTwice as exc:
        raise RecordError(f"{path}:{lineno}: {exc}") from None
    except RecursionError:
        raise RecordError(f"{path}:{lineno}: JSON nested too deeply to read: expected a game record object "
                          f"on each line") from None
    except ValueError as exc:
        raise RecordError(f"{path}:{lineno}: cannot be read as JSON ({exc}): expected a game record object on each "
                          f"line") from None
    return GameRecord.from_dict(data, source=f"{path}:{lineno}")


def load_records(path: str | os.PathLike, *, skip_bad: bool = False, cut_tail: bool = False) -> list[GameRecord]:
    """Read and validate every record of a JSONL file (one record per line).

    A damaged line is a :class:`RecordError` naming it; with ``skip_bad=True`` it is left out instead, with a
    ``RuntimeWarning`` that names it, so the other records of a file whose last write was cut short can be read.
    ``cut_tail=True`` leaves out, silently, a last line that has no newline after it and cannot be read: the one
    record a process killed while appending (:func:`append_record`, an evaluation's journal) leaves half written;
    every other damaged line is still an error.
    """
    import warnings

    path = os.fspath(path)
    text = _read_text(path, jsonl=True)
    lines = _jsonl_lines(text)
    cut = lines[-1][0] if cut_tail and lines and not text.endswith("\n") else None  # a last line with no newline
    out = []
    for lineno, line in lines:
        try:
            out.append(_record_of_line(path, text, lineno, line))
        except RecordError as exc:
            if lineno == cut:
                continue
            if not skip_bad:
                raise
            warnings.warn(f"skipped a damaged record: {exc}", RuntimeWarning, stacklevel=2)
    return out


def read_record(path: str | os.PathLike, index: int = 0) -> GameRecord:
    """The record of a JSON record file, or the ``index``-th record of a JSONL file (negative: from the end): what
    ``pokersquares replay FILE --index N`` reads.

    A file holding one JSON object (pretty-printed or not, whatever its extension) is a single record, which
    ``index`` 0 or -1 picks.  Otherwise a file whose name ends in ``.jsonl`` (any case) is read as JSONL: only the
    line asked for is parsed and checked, so a damaged line elsewhere (a write cut short) does not hide the other
    records; and any other file is named as :func:`load_record` names what is wrong with it.  Raises
    :class:`RecordError` or ``OSError``.
    """
    path = os.fspath(path)
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
        raise RecordError(f"{path}: index {index!r}: expected an integer")
    text = _read_text(path, jsonl=path.lower().endswith(".jsonl"))
    whole = None
    if not _NOT_UTF8.search(text):  # else a JSONL file with a damaged line: only that line is refused, below
        try:
            whole = json.loads(text, object_pairs_hook=_record_object)
        except _KeyTwice as exc:
            if not path.lower().endswith(".jsonl"):  # a JSONL file's lines are each read (and named) alone, below
                raise RecordError(f"{path}: {exc}") from None
        except (ValueError, RecursionError):
            pass
    if isinstance(whole, dict):
        if index not in (0, -1):
            raise RecordError(f"{path}: --index {index} is out of range: the file holds one record (a JSON object)")
        return GameRecord.from_dict(whole, source=path)
    if not path.lower().endswith(".jsonl"):
        return load_record(path)  # names what is wrong with a .json file
    lines = _jsonl_lines(text)
    if not -len(lines) <= index < len(lines):
        raise RecordError(f"{path}: --index {index} is out of range: the file holds {len(lines)} record(s)")
    lineno, line = lines[index]
    return _record_of_line(path, text, lineno, line)


def _jsonl_error(path: str, text: str, lineno: int, line: str, exc: json.JSONDecodeError) -> RecordError:
    """The error for a line of a JSONL file that is not JSON; a whole (pretty-printed) JSON record is named so."""
    hint = "expected JSONL, one whole record per line (a single .json record file is read with load_record)"
    try:
        whole = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        whole = None
    if isinstance(whole, dict):
        return RecordError(f"{path}: one JSON object spread over several lines, not JSONL: {hint}")
    if isinstance(whole, list):
        return RecordError(f"{path}: one JSON array spread over several lines, not JSONL: expected one whole "
                           f"record object per line")
    message = f"{path}:{lineno}: not valid JSON (column {exc.colno}): {exc.msg}"
    if line.strip() in ("{", "["):
        message += f"; the line is just {line.strip()!r}, as in a pretty-printed JSON file: {hint}"
    return RecordError(message)
