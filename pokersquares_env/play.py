"""``pokersquares play``: Poker Squares for a person at a terminal.

The board is printed with coordinates (columns a-e, rows 1-5, so ``c3`` is
the centre), the drawn card, how many cards are left, and each line's hand
and points so far.  The player types a cell such as ``b4``; a malformed or
illegal cell is refused with the reason and the game goes on.  ``q`` quits
(after asking), ``h`` shows help, ``hint`` asks the hint agent again.

* ``--hint AGENT`` shows the agent's choice for every card, with its value
  estimates where it has them (any spec ``agents.make_agent`` accepts).
* ``--vs AGENT`` plays the multiplayer rule of the sources: the agent places
  the same cards on its own hidden board; at the end both boards are shown
  side by side with the winner.
* Each of the two takes one agent (given twice, it is refused), seeded from
  a stream of its own derived from the deal seed, never the deal's.
* ``--record FILE`` saves the finished game as a JSON game record
  (:mod:`pokersquares_env.records`).  The file is written only when the game
  is over, atomically, so quitting, Ctrl-C or the end of the input never
  leave a half-written record.  An existing record there is replaced; any
  other existing file is refused before the game starts.  A ``.jsonl`` file
  collects games instead: each finished game is appended as one line (a
  new file is made; an existing one must hold records, one a line), and
  ``pokersquares replay FILE --index N`` picks one.

Output is plain lines (no cursor movement), so the game works in an 80x24
terminal and through a pipe (``printf 'c3\\nb2\\n...' | pokersquares play``).
Red suits and highlights are coloured only when standard output is a
terminal and ``NO_COLOR`` is unset (``--color always|never`` overrides).
The same ``--seed`` deals the same deck as ``env.reset(seed=...)``.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shlex
import sys
import textwrap
from collections.abc import Callable
from typing import Any, TextIO

import numpy as np

from pokersquares_env.cli import StoreOnce, seed_arg
from pokersquares_env.scoring import points_level
from pokersquares_env.text import fmt_points as _fmt
from pokersquares_env.text import signed_points as _signed

HELP = "play Poker Squares at the terminal (with hints from an agent, or against one)"

_QUIT = {"q", "quit", "exit"}
_HELP_WORDS = {"h", "help", "?"}

HELP_TEXT = """\
Type a cell for the drawn card: column a-e, then row 1-5, e.g. c3 (the centre).
  hint    ask the hint agent again (needs --hint AGENT)
  board   print the board again
  h       this help
  q       quit (asks first; nothing is recorded)
Each row and column scores as a poker hand once it holds five cards."""


def _wrap80(text: str) -> str:
    """``text`` wrapped at 80 characters, the width every line of a turn keeps within (docs/playing.md, "Terminals and
    pipes"); a word longer than that (a long agent spec, junk typed as a move) is kept whole."""
    return "\n".join(textwrap.wrap(text, 80, break_long_words=False, break_on_hyphens=False))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``pokersquares play``."""
    parser.add_argument("--scoring", default="american",
                        help="point system: american (default), english, or a JSON file of points per hand")
    parser.add_argument("--rules", default=None, metavar="SPEC",
                        help="rule options at once: 'jokers=2,placement=adjacent,first_cell=center', a JSON object "
                             "or a JSON file; the three options below may add to it but not contradict it")
    parser.add_argument("--jokers", type=int, default=None, choices=(0, 1, 2), help="wild jokers in the deck (default 0)")
    parser.add_argument("--placement", default=None, choices=("free", "adjacent"),
                        help="'adjacent': every card after the first must touch a placed card (default free)")
    parser.add_argument("--first-cell", default=None,
                        help="where the first card must go: center, top-left or a cell such as c3 (default anywhere)")
    parser.add_argument("--seed", type=seed_arg, default=None, action=_Once,
                        help="deal seed (the same deck as env.reset(seed=S)); default: a fresh one, printed")
    parser.add_argument("--record", metavar="FILE", default=None, action=_Once,
                        help="save the finished game as a JSON record (an existing file must be a game record, "
                             "which is replaced); a .jsonl FILE collects games, one appended per line")
    parser.add_argument("--hint", metavar="AGENT", default=None, action=_Once,
                        help="show this agent's choice for every card")
    parser.add_argument("--vs", metavar="AGENT", default=None, action=_Once,
                        help="play against this agent on the same cards (the multiplayer rule)")
    parser.add_argument("--color", default="auto", choices=("auto", "always", "never"),
                        help="colours: auto (only on a terminal without NO_COLOR), always or never (default auto)")


class _Once(StoreOnce):
    """The shared refusal of a repeated option (``--vs greedy --vs random`` would play against random with no word
    about greedy), naming what the option takes: one agent, one file, one seed."""

    def what(self) -> str:
        return {"hint": "agent", "vs": "agent", "record": "file"}.get(self.dest, self.dest)



# ---- presentation ------------------------------------------------------------------


class _Style:
    """ANSI colours, or nothing."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def _wrap(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled else text

    def bold(self, text: str) -> str:
        """Bold text."""
        return self._wrap("1", text)

    def red(self, text: str) -> str:
        """Red text (red suits, refusals)."""
        return self._wrap("31", text)

    def green(self, text: str) -> str:
        """Green text (points, the winner)."""
        return self._wrap("32", text)

    def dim(self, text: str) -> str:
        """Faint text (hints of lesser importance)."""
        return self._wrap("2", text)

    def card(self, code: int, width: int = 3) -> str:
        """A card padded to ``width`` columns, red suits in red."""
        from pokersquares_env.cards import NUM_STANDARD, format_card

        text = format_card(code).rjust(width)
        return self.red(text) if 0 <= code < NUM_STANDARD and code // 13 in (1, 2) else text


def use_color(choice: str = "auto", stream: TextIO | None = None) -> bool:
    """Whether to colour the output: ``always``, ``never``, or ``auto`` (a terminal and no ``NO_COLOR``)."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    stream = sys.stdout if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("NO_COLOR")


def _is_jsonl(path: str) -> bool:
    return path.lower().endswith(".jsonl")


def _check_records_file(path: str) -> None:
    """A ``RecordError`` unless the JSONL file at ``path`` is empty or holds at least one game record: damaged lines
    among records (a write cut short) are left to ``load_records(skip_bad=True)``, and an appended game starts a new
    line after them."""
    import warnings

    from pokersquares_env.records import RecordError, load_records

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        good = load_records(path, skip_bad=True)
    if caught and not good:
        raise RecordError(str(caught[0].message).removeprefix("skipped a damaged record: "))


def _hand_label(key: str) -> str:
    from pokersquares_env.scoring import CATEGORY_KEYS, HandCategory

    return HandCategory.from_key(key).label if key in CATEGORY_KEYS else "-"


def parse_move(text: str) -> int | None:
    """The cell of ``'b4'`` (or ``'4b'``, spaces allowed), or ``None`` if ``text`` is not a cell (an index such as
    ``'12'`` is not a move)."""
    from pokersquares_env.core import parse_cell

    token = "".join(text.split())
    if len(token) != 2 or token.isdigit():
        return None
    try:
        return parse_cell(token)
    except ValueError:
        return None


def side_by_side(game: Any, states: list[Any], names: list[str], style: _Style | None = None) -> str:
    """Several finished (or unfinished) boards next to each other, then every line's hand and points, and the totals."""
    from pokersquares_env.core import line_name

    style = style or _Style(False)
    width = 24
    out = ["".join(f"{name[:width - 2]:<{width}}" for name in names).rstrip()]
    out.append("".join(f"{'   a   b   c   d   e':<{width}}" for _ in names).rstrip())
    for r in range(5):
        row = []
        for s in states:
            cells = " ".join(style.card(s.board[r * 5 + c]) for c in range(5))
            row.append(f"{r + 1} {cells}" + " " * (width - 2 - 19))
        out.append("".join(row).rstrip())
    out.append("")
    col = 24
    out.append("line   " + "".join(f"{name[:col - 2]:<{col}}" for name in names).rstrip())
    hands = [game.hands(s) for s in states]
    points = [game.line_points(s) for s in states]
    for i in range(10):
        cells = "".join(f"{_hand_label(h[i]):<16}{_fmt(p[i]):>4}    " for h, p in zip(hands, points, strict=True))
        out.append(f"{line_name(i):<7}{cells}".rstrip())
    for system in dict.fromkeys((game.system.name, "american", "english")):
        try:
            totals = [game.score(s, system if system in ("american", "english") else None) for s in states]
        except ValueError:
            continue
        label = f"total {system}"[:22]
        out.append(f"{label:<23}" + "".join(f"{_fmt(t):>4}{'':20}" for t in totals).rstrip())
    return "\n".join(out)


# ---- the game ---------------------------------------------------------------------


class _Quit(Exception):
    """The player chose to stop."""


class TerminalGame:
    """One game of Poker Squares at a terminal (see the module docstring).

    ``read`` is called with a prompt and returns a line (``input`` by
    default; it raises ``EOFError`` at the end of the input), ``out`` is the
    text stream written to, and ``err`` (standard error by default) the one
    that says why a game ended without a result (the input ended, Ctrl-C, the
    record not written).
    """

    def __init__(
        self,
        game: Any,
        deck: Any,
        *,
        seed: int | None = None,
        hint: Any = None,
        vs: Any = None,
        record: str | None = None,
        color: bool = False,
        read: Callable[[str], str] = input,
        out: TextIO | None = None,
        err: TextIO | None = None,
    ) -> None:
        self.game = game
        self.state = game.init(deck)
        self.seed = seed
        self.hint_agent = hint
        self.vs_agent = vs
        self.vs_state = game.init(deck) if vs is not None else None
        self.record_path = record
        self.style = _Style(color)
        self.read = read
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr

    def say(self, text: str = "") -> None:
        """Write a line (or several)."""
        self.out.write(text + "\n")
        self.out.flush()

    def complain(self, text: str) -> None:
        """Write why the game ends without a result (exit status 1 or 130) to ``err``, so that a transcript
        redirected to a file (``play > game.txt``) does not hide it."""
        self.out.flush()
        self.err.write(text + "\n")
        self.err.flush()

    # -- agents
    def _agent_inputs(self, state: Any, agent: Any) -> tuple[Any, dict[str, Any]]:
        from pokersquares_env.env import encode_observation

        info = {"action_mask": self.game.action_mask(state), "card": state.card}
        obs = encode_observation(self.game, state) if getattr(agent, "uses_obs", True) else None
        return obs, info

    def hint_text(self) -> str:
        """The hint agent's choice for the drawn card, with its value estimates where it has them."""
        agent, game, state = self.hint_agent, self.game, self.state
        from pokersquares_env.core import cell_name

        obs, info = self._agent_inputs(state, agent)
        if hasattr(agent, "act_with_values"):  # the values the choice was made from (mc's and search's rollouts)
            choice, values = agent.act_with_values(obs, info, game, state.copy())
        else:  # a duck-typed agent
            choice, values = agent.act(obs, info, game, state.copy()), agent.action_values(obs, info, game, state.copy())
        choice = int(choice)
        name = getattr(agent, "spec", None) or getattr(agent, "name", "agent")
        text = f"hint ({name}): {self.style.bold(cell_name(choice))}"
        if values is not None:
            values = np.asarray(values, dtype=float).reshape(-1)
            legal = [c for c in game.legal_cells(state) if c < values.size and np.isfinite(values[c])]
            legal.sort(key=lambda c: (-values[c], c != choice))  # best first; the chosen cell first among equals
            # As many of the best cells as fit 79 characters: an 80-column terminal that wraps at the 80th does not
            # break the line.
            plain = f"hint ({name}): {cell_name(choice)}"
            for top in range(min(5, len(legal)), 0, -1):
                shown = "  ".join(f"{cell_name(c)} {values[c]:.1f}" for c in legal[:top])
                more = f" (best {top} of {len(legal)} rated)" if len(legal) > top else ""
                if len(plain) + len(shown) + len(more) + 3 <= 79:
                    text += f"   {shown}{more}"
                    break
        return text

    def _agent_move(self) -> None:
        agent, game, state = self.vs_agent, self.game, self.vs_state
        obs, info = self._agent_inputs(state, agent)
        cell = int(agent.act(obs, info, game, state.copy()))
        reason = game.why_illegal(state, cell)
        if reason is not None:
            raise RuntimeError(f"agent {getattr(agent, 'spec', agent)!r} chose an illegal cell: {reason}")
        game.apply(state, cell)

    # -- the loop
    def show_board(self) -> None:
        """Print the board, the drawn card and the lines so far."""
        from pokersquares_env.text import board_text

        n = self.state.num_placed
        self.say(self.style.bold(f"-- card {n + 1} of 25 --"))
        legal = self.game.rules.restricts(len(self.state.placements))  # marked while fewer than the empty cells
        self.say(board_text(self.game, self.state, legal=legal, color=self.style.enabled))

    def ask_cell(self) -> int:
        """Read lines until one names a legal cell (raises ``_Quit``, ``EOFError`` or ``KeyboardInterrupt``)."""
        from pokersquares_env.cards import format_card

        game, state = self.game, self.state
        prompt = f"Place {format_card(state.card)} on (a-e 1-5, h help, q quit): "
        while True:
            text = self.read(prompt).strip()
            low = text.lower()
            if not low:
                continue
            if low in _QUIT:
                answer = self.read("Quit this game? Nothing will be recorded. [y/N] ").strip().lower()
                if answer in ("y", "yes"):
                    raise _Quit
                continue
            if low in _HELP_WORDS:
                self.say(HELP_TEXT)
                continue
            if low in ("b", "board"):
                self.show_board()
                continue
            if low == "hint":
                no_agent = "no hint agent: start the game with --hint AGENT"
                self.say(self.hint_text() if self.hint_agent is not None else no_agent)
                continue
            cell = parse_move(low)
            if cell is None:
                self.say(self.style.red(_wrap80(
                    f"{text!r} is not a cell: type a column a-e and a row 1-5, such as c3 (h for help)")))
                continue
            reason = game.why_illegal(state, cell)
            if reason is not None:
                self.say(self.style.red(_wrap80(f"not allowed: {reason}")))
                continue
            return cell

    def play(self) -> int:
        """Play to the end; the exit status (0 finished or quit, 1 input ended or the record not written,
        130 interrupted)."""
        from pokersquares_env.core import cell_name

        game = self.game
        system = game.system
        rules = game.rules  # the rules shown as `pokersquares replay` shows them
        title = (f"Poker Squares -- {system.name} points"
                 + (f", seed {self.seed}" if self.seed is not None else "")
                 + (f", {rules.jokers} joker(s)" if rules.jokers else "")
                 + (f", {rules.placement} placement" if rules.placement != "free" else "")
                 + (f", first card on {cell_name(rules.first_cell)}" if rules.first_cell is not None else ""))
        # the lines before the first turn are wrapped at 80 characters, the width the turns keep within (docs/playing.md,
        # "Terminals and pipes"); a word longer than that (a long agent spec) is kept whole
        lines = _wrap80(title).splitlines()
        self.say(self.style.bold("Poker Squares") + lines[0][len("Poker Squares"):])
        for line in lines[1:]:
            self.say(line)
        if self.vs_agent is not None:
            name = getattr(self.vs_agent, "spec", None) or self.vs_agent.name
            self.say(_wrap80(f"Against {name}: it places the same cards on its own board, hidden until the end."))
        self.say("Columns a-e, rows 1-5 (c3 is the centre). h for help, q to quit.")
        try:
            while not self.state.terminal:
                self.say()
                self.show_board()
                if self.hint_agent is not None:
                    self.say(self.hint_text())
                cell = self.ask_cell()
                points, completed = game.apply(self.state, cell)
                if completed:
                    from pokersquares_env.core import line_name

                    hands = game.hands(self.state)
                    done = ", ".join(f"{line_name(i)} {_hand_label(hands[i])}" for i in completed)
                    self.say(self.style.green(f"{done}: {_signed(points)} points"))
                if self.vs_agent is not None:
                    self._agent_move()
        except _Quit:
            self.say("Game abandoned; nothing recorded.")
            return 0
        except EOFError:
            self.complain("\nThe input ended before the game was over; nothing recorded.")
            return 1
        except KeyboardInterrupt:
            self.complain("\nInterrupted; nothing recorded.")
            return 130
        return self.finish()

    def finish(self) -> int:
        """Print the final board, every line's hand and the scores; save the record."""
        from pokersquares_env.text import board_text

        game, state = self.game, self.state
        self.say()
        self.say(self.style.bold("== Game over =="))
        meta: dict[str, Any] = {}
        if self.vs_agent is None:
            self.say(board_text(game, state, color=self.style.enabled))
            totals = [f"{game.system.name} {_fmt(game.score(state))}"]
            totals += [f"{s} {_fmt(game.score(state, s))}" for s in ("american", "english") if s != game.system.name]
            self.say(self.style.bold("Scores: " + ", ".join(totals)))
            score = game.score(state)
            threshold = game.system.win_threshold
            if threshold is not None:
                short = f"{_fmt(score)} points: a win needs {_fmt(threshold)} or more under {game.system.name} points."
                won = game.system.won(score)
                self.say(self.style.green(f"You reached {_fmt(threshold)}: a win!") if won else short)
        else:
            name = getattr(self.vs_agent, "spec", None) or self.vs_agent.name
            self.say(side_by_side(game, [state, self.vs_state], ["you", name], self.style))
            mine, theirs = game.score(state), game.score(self.vs_state)
            if points_level(mine) > points_level(theirs):
                verdict = self.style.green(f"You win, {_fmt(mine)} to {_fmt(theirs)}.")
                winner = "you"
            elif points_level(theirs) > points_level(mine):
                verdict = f"{name} wins, {_fmt(theirs)} to {_fmt(mine)}."
                winner = name
            else:
                verdict = f"A tie at {_fmt(mine)}."
                winner = None
            self.say(verdict)
            from pokersquares_env.core import cell_name

            meta["vs"] = {
                "agent": name,
                "placements": [cell_name(c) for c in self.vs_state.placements],
                "score": theirs,
                "scores": {"american": game.score(self.vs_state, "american"),
                           "english": game.score(self.vs_state, "english")},
                "winner": winner,
            }
        if self.record_path:
            from pokersquares_env.records import GameRecord, RecordError, append_record, save_record

            lines = _is_jsonl(self.record_path)
            try:
                record = GameRecord.from_game(game, state, seed=self.seed, agent="human", meta=meta)
                (append_record if lines else save_record)(record, self.record_path)
            except (OSError, RecordError) as exc:  # a record refused (a seed too large) is reported as a failed write
                why = str(exc).removeprefix("record: ")  # the field, named: "field 'seed': ..."
                self.complain(f"could not write the record {self.record_path!r}: {why}")
                return 1
            if lines:
                from pokersquares_env.records import _jsonl_lines, _read_text

                try:  # a damaged line (a write cut short inside a suit symbol) still counts as a line, as replay counts
                    n = len(_jsonl_lines(_read_text(self.record_path, jsonl=True)))
                except OSError:  # appended, but the file cannot be read back now: said without its index
                    self.say(f"Record appended to {self.record_path}")
                    return 0
                self.say(f"Record appended to {self.record_path} as record {n - 1} "
                         f"(pokersquares replay {shlex.quote(self.record_path)} --index {n - 1})")
            else:
                self.say(f"Record written to {self.record_path}")
        return 0


def _echoing_input(prompt: str) -> str:
    """``input``, echoing the line read (input from a pipe is not echoed, so a transcript would lose it)."""
    line = input(prompt)
    sys.stdout.write(line + "\n")
    return line


def _agent_error(flag: str, spec: str, message: str) -> str:
    """``FLAG SPEC: MESSAGE``, the spec said once: a loader's message may start with the spec itself."""
    from agents.registry import without_spec  # only called once the agents package imported

    return f"{flag} {spec.strip() or repr(spec)}: {without_spec(spec, message)}"


def run(args: argparse.Namespace) -> int:
    """Run ``pokersquares play``."""
    from pokersquares_env.core import PokerSquaresGame, Rules
    from pokersquares_env.scoring import point_system

    try:
        rules = Rules.with_options(args.rules, jokers=args.jokers, placement=args.placement,
                                   first_cell=args.first_cell)
        system = point_system(args.scoring)
    except (TypeError, ValueError) as exc:
        print(f"pokersquares play: {exc}", file=sys.stderr)
        return 2
    if args.record is not None:  # checked now, not after the 25 moves of the game it would lose
        if not args.record.strip():
            print(f"pokersquares play: --record {args.record!r}: expected the path of a JSON (or JSONL) file to write",
                  file=sys.stderr)
            return 2
        from pokersquares_env.records import MAX_SEED_BITS

        if args.seed is not None and args.seed.bit_length() > MAX_SEED_BITS:  # any size deals; a record holds less
            print(f"pokersquares play: --seed {args.seed}: an integer of {args.seed.bit_length():,} bits, but a game "
                  f"record holds seeds of at most {MAX_SEED_BITS} bits: expected a smaller seed, or no --record",
                  file=sys.stderr)
            return 2
        from pokersquares_env._files import final_path

        # the folder the record is written in: a symbolic link's target's (a link stays a link), even a missing target
        folder = os.path.dirname(os.path.abspath(final_path(args.record)))
        if os.path.isdir(args.record) or not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            why = "is a folder" if os.path.isdir(args.record) else f"cannot be written in {folder!r}"
            print(f"pokersquares play: --record {args.record!r} {why}: expected the path of a JSON file to write",
                  file=sys.stderr)
            return 2
        # a record is replaced (a JSONL file added to); any other file is kept.  A link to a missing file is a new
        # file at its target.
        if os.path.exists(args.record):
            from pokersquares_env.records import RecordError, _check_append_target, load_record

            lines = _is_jsonl(args.record)
            try:
                if lines:  # a file of records, one a line: a damaged line (a write cut short) is not a reason to refuse
                    _check_records_file(args.record)
                    _check_append_target(args.record)  # but append_record wants the first line to be a record
                else:
                    load_record(args.record)
            except (RecordError, OSError) as exc:
                why = exc if isinstance(exc, RecordError) else f"cannot read it ({exc.strerror or exc})"
                what, done = ("a file of game records, one a line", "added to") if lines else ("a game record",
                                                                                            "replaced")
                print(f"pokersquares play: --record {args.record!r} exists and is not {what}, so it is not {done} "
                      f"({why}): expected a new file or an earlier record", file=sys.stderr)
                return 2
            if lines and not os.access(args.record, os.W_OK):  # appended in place (a .json record is replaced)
                print(f"pokersquares play: --record {args.record!r} is not writable, so the game could not be added "
                      f"to it: expected a file of game records that can be appended to, or a new file",
                      file=sys.stderr)
                return 2
    game = PokerSquaresGame(rules, system)
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    deck = game.deal(np.random.default_rng(seed))
    hint = vs = None
    if args.hint is not None or args.vs is not None:  # '' too: refused below as the spec it is, not skipped
        try:
            from agents import make_agent
        except ImportError as exc:
            print(f"pokersquares play: --hint/--vs need the agents package, which could not be imported ({exc})",
                  file=sys.stderr)
            return 2
        agents = {}
        for stream, (flag, spec) in enumerate((("--hint", args.hint), ("--vs", args.vs)), start=1):
            if spec is None:
                continue
            # A stream of the agent's own, as the evaluation harness seeds its agents (SeedSequence([S, i, 1])): given
            # the deal seed itself, mc's rollouts would shuffle from the very stream that dealt the real deck, and so
            # partly replay the cards to come. Still the same agent for the same seed.
            agent_seed = int(np.random.SeedSequence([seed, stream]).generate_state(1)[0])
            try:
                agents[flag] = make_agent(spec, system=system, rules=rules, seed=agent_seed)
                agents[flag].reset()
            except (ImportError, TypeError, ValueError) as exc:
                print(f"pokersquares play: {_agent_error(flag, spec, str(exc))}", file=sys.stderr)
                return 2
            except Exception as exc:  # noqa: BLE001 - a damaged model file fails in its loader's own way
                print(f"pokersquares play: {flag} {spec}: could not load the agent ({type(exc).__name__}: {exc})",
                      file=sys.stderr)
                return 2
        hint, vs = agents.get("--hint"), agents.get("--vs")
    reconfigure = getattr(sys.stdin, "reconfigure", None)
    if reconfigure is not None and getattr(sys.stdin, "errors", "replace") in ("strict", "surrogateescape"):
        # input the locale's encoding cannot decode is refused as the move it does not name, not a traceback (nor, as
        # under a C or POSIX locale's surrogateescape, echoed back as the raw bytes)
        try:
            reconfigure(errors="replace")
        except (ValueError, OSError):  # a stream that cannot change its error handler now: left as it is
            pass
    read = input if sys.stdin.isatty() else _echoing_input
    session = TerminalGame(game, deck, seed=seed, hint=hint, vs=vs, record=args.record, color=use_color(args.color),
                           read=read)
    try:
        return session.play()
    except BrokenPipeError:  # the reader went away (e.g. piped into head): stop quietly, nothing recorded
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the final flush does not fail again
        except (OSError, ValueError):
            pass
        return 141  # as cli.main returns for every other command (128 + SIGPIPE); 1 says the input ended
