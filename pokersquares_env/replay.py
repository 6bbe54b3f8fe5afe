"""``pokersquares replay FILE``: a game record move by move, as text, an animated GIF or a final image.

``FILE`` is a JSON record (:mod:`pokersquares_env.records`) or a JSONL file of
records (``--index`` picks one).  Without ``--gif``/``--png`` the game is
printed move by move: the card, the cell, the lines each move completes with
their points, the running total, and at the end the board with every line's
hand and both scores (``--boards`` prints the board after every move too).
A record of a board checked before it was full (``"checked": true``, a Poker
Shuffle game ended by its budget) says so and scores its incomplete lines as
the env did.
``--gif OUT.gif`` renders every move as a frame of an animated GIF and
``--png OUT.png`` the final board (both need Pillow: the extra ``render``).  An output path that is a folder,
whose folder does not exist or whose name does not end in ``.gif``/``.png`` is refused (exit status 2) before
anything is drawn; so is ``--fps`` without ``--gif``, or one whose frame delay (``1000 / fps`` ms) a GIF cannot
hold (10 ms to 655.35 s).

A damaged or hand-edited record is rejected with the :class:`RecordError`
message, which names the field (and the move), and exit status 2.
"""

from __future__ import annotations

import argparse
import errno
import math
import os
import sys
from typing import Any, TextIO

import numpy as np

from pokersquares_env.text import fmt_points as _fmt
from pokersquares_env.text import signed_points

#: A GIF frame delay is a 16-bit count of hundredths of a second: 10 ms to 655.35 s, so 1000/fps ms must lie there
#: (0 ms, what a higher rate would round to, is shown by most viewers as 100 ms).
MIN_DELAY_MS, MAX_DELAY_MS = 10, 655_350
MIN_FPS, MAX_FPS = 1000 / MAX_DELAY_MS, 1000 / MIN_DELAY_MS

HELP = "replay a game record: print it move by move, or render it to an animated GIF or a final PNG"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``pokersquares replay``."""
    parser.add_argument("file", help="a JSON game record, or a JSONL file of records")
    parser.add_argument("--index", type=int, default=0, help="which record of a JSONL file (default 0, the first)")
    parser.add_argument("--gif", metavar="OUT.gif", default=None, help="write an animated GIF, one frame per move")
    parser.add_argument("--png", metavar="OUT.png", default=None, help="write a PNG of the final board")
    parser.add_argument("--fps", type=float, default=None,
                        help=f"GIF frames per second, {MIN_FPS:.4g} to {MAX_FPS:g} (a frame delay of 10 ms to 655.35 s, "
                             f"what a GIF holds; default 2; needs --gif)")
    parser.add_argument("--boards", action="store_true",
                        help="print the board after every move (text replay only: not with --gif or --png)")


def load(path: str, index: int = 0) -> Any:
    """The record at ``path`` (the ``index``-th of a JSONL file; :func:`pokersquares_env.records.read_record`, which
    parses only that line); raises ``RecordError`` or ``OSError``."""
    from pokersquares_env.records import read_record

    return read_record(path, index)


def print_replay(record: Any, out: TextIO | None = None, *, boards: bool = False) -> None:
    """Print a record move by move, then the final board, every line's hand and both scores."""
    from pokersquares_env.cards import format_card
    from pokersquares_env.core import PokerSquaresGame, cell_name, line_name
    from pokersquares_env.scoring import HandCategory, add_points
    from pokersquares_env.text import board_text

    out = sys.stdout if out is None else out
    rules = record.rules
    game = PokerSquaresGame(record.rules, record.system)
    state = None
    heading = [f"{record.system.name} points"]
    if record.seed is not None:
        heading.append(f"seed {record.seed}")
    if record.agent:
        heading.append(f"played by {record.agent}")
    if rules.jokers:
        heading.append(f"{rules.jokers} joker(s)")
    if rules.placement != "free":
        heading.append(f"{rules.placement} placement")
    if rules.first_cell is not None:
        heading.append(f"first card on {cell_name(rules.first_cell)}")
    more, opening, closing = _meta_notes(record.meta if isinstance(record.meta, dict) else {})
    out.write("Poker Squares game record: " + ", ".join(heading + more) + "\n")
    for note in opening:
        out.write(note + "\n")
    total = 0.0
    previous = None
    for move, st in record.states():
        if move == 0:
            previous = st
            continue
        cell = st.placements[-1]
        card = format_card(st.board[cell])
        hands = game.hands(st)
        before = game.line_points(previous)
        after = game.line_points(st)
        done = [i for i in range(10) if st.line_t[i] == 5 and previous.line_t[i] < 5]
        gained = add_points(after[i] - before[i] for i in done)  # in line order, as apply() adds them
        total += gained
        line = f"{move:2d}. {card:>3} -> {cell_name(cell)}"
        if done:
            names = ", ".join(f"{line_name(i)} {HandCategory.from_key(hands[i]).label}" for i in done)
            line += f"   {names}: {signed_points(gained)}"
        out.write(f"{line:<58} total {_fmt(total)}\n")
        if boards:
            out.write(board_text(game, st) + "\n\n")
        previous, state = st, st
    checked = bool(getattr(record, "checked", False)) and state is not None
    if checked:  # the board was checked as it stood: the incomplete lines' rank groups count too
        extra = game.score(state, partial=True) - game.score(state)
        total += extra
        line = f"Checked after {len(record.placements)} placements: incomplete lines {signed_points(extra)}"
        out.write(f"{line:<58} total {_fmt(total)}\n")
    if state is None:
        out.write("(no moves)\n")
        for note in closing:
            out.write(note + "\n")
        return
    text = board_text(game, state, card=not checked, checked=checked)  # checked: no card to place, partial total
    out.write("\n" + text + "\n")
    scores = [f"{s} {_fmt(game.score(state, s, partial=checked))}" for s in ("american", "english")]
    if record.system.name not in ("american", "english"):
        scores.insert(0, f"{record.system.name} {_fmt(game.score(state, partial=checked))}")
    if checked:
        status = (f"  (board checked when the budget ran out after {state.num_placed} placements; incomplete lines "
                  f"score the rank groups they hold)")
    else:
        status = "" if state.terminal else "  (unfinished game)"
    out.write("Scores: " + ", ".join(scores) + status + "\n")
    for note in closing:
        out.write(note + "\n")
    vs = record.meta.get("vs") if isinstance(record.meta, dict) else None
    if isinstance(vs, dict) and "agent" in vs:  # meta is free-form: a score that is not a finite number is left out
        score = vs.get("score")
        known = isinstance(score, (int, float)) and not isinstance(score, bool) and math.isfinite(score)
        out.write(f"Opponent {vs['agent']}" + (f": {_fmt(score)} points" if known else "") + "\n")


def _meta_notes(meta: dict[str, Any]) -> tuple[list[str], list[str], list[str]]:
    """What a record's ``meta`` adds to its replay: ``(heading parts, opening lines, closing lines)``.

    The heading gets the env the game came from (when not Poker Squares) and
    the evaluation deal (``deal``, ``eval_seed``).  Poker Shuffle
    swap-mode records get a line with their swaps, since their placements
    only lay out the final arrangement.  Closing notes say why a game ended
    early (``illegal_action``, ``error``).
    """
    from pokersquares_env.core import cell_name

    heading: list[str] = []
    env = meta.get("env")
    if env and env != "PokerSquares-v0":
        mode = f" ({meta['mode']} mode)" if meta.get("mode") else ""
        heading.append(f"recorded from {env}{mode}")
    if "deal" in meta:
        seed = f" of evaluation seed {meta['eval_seed']}" if "eval_seed" in meta else ""
        heading.append(f"deal {meta['deal']}{seed}")
    before: list[str] = []
    swaps = meta.get("swaps")
    if meta.get("mode") == "swap" and isinstance(swaps, list):
        try:
            done = ", ".join(f"{cell_name(i)}<->{cell_name(j)}" for i, j in swaps) or "none"
        except (TypeError, ValueError):  # meta is free-form: shown as it is rather than misread
            done = repr(swaps)
        score = meta.get("dealt_score")
        known = isinstance(score, (int, float)) and not isinstance(score, bool) and math.isfinite(score)
        dealt = f"the dealt layout scored {_fmt(score)}; " if known else ""
        before.append(f"Swap mode: {dealt}swaps {done}. The moves below lay out the final arrangement cell by cell.")
    after = [f"Ended by an illegal action: {meta['illegal_action']}"] if "illegal_action" in meta else []
    if "error" in meta:
        after.append(f"Ended by an error: {meta['error']}")
    return heading, before, after


def frames(record: Any) -> list[Any]:
    """One RGB frame per state of the game (the empty board first)."""
    from pokersquares_env.core import PokerSquaresGame
    from pokersquares_env.render import draw_poker_squares

    game = PokerSquaresGame(record.rules, record.system)
    who = f" · {record.agent}" if record.agent else ""
    seed = f" · seed {record.seed}" if record.seed is not None else ""
    shots = []
    for move, state in record.states():
        title = f"Replay{who}{seed} · move {move}/{len(record.placements)}"
        last = move == len(record.placements)
        shots.append(_checked_frame(game, state, title) if last and getattr(record, "checked", False)
                     else draw_poker_squares(game, state, title=title))
    return shots


def _checked_frame(game: Any, state: Any, title: str) -> Any:
    """The frame of a board checked before it was full: incomplete lines scored by their rank groups, no card to
    place."""
    from pokersquares_env.render import draw_board

    return draw_board(state.board, game.system, last_cell=state.placements[-1] if state.placements else None,
                      checked=True, title=title,
                      notes=[f"checked after {state.num_placed} placements", "(the budget ran out)"])


def save_gif(record: Any, path: str, fps: float = 2.0) -> int:
    """Write the game as an animated GIF (the last frame held 3 s); the number of frames.  ``path``'s folder must
    exist (``FileNotFoundError`` otherwise, and ``IsADirectoryError`` for a folder), as for :func:`save_png`."""
    from pokersquares_env.render import _pil

    Image = _pil()[0]
    problem = _fps_problem(fps)
    if problem:
        raise ValueError(f"fps={fps!r}: {problem}")
    shots = frames(record)
    # One palette for the whole animation, from the first, middle and last frames: ten times faster
    # than a palette per frame, and a third of the size.
    sample = np.concatenate([shots[0], shots[len(shots) // 2], shots[-1]], axis=0)
    palette = Image.fromarray(sample).quantize(colors=255, method=Image.Quantize.FASTOCTREE)
    images = [Image.fromarray(f).quantize(palette=palette, dither=Image.Dither.NONE) for f in shots]
    # A GIF stores delays in hundredths of a second (Pillow truncates milliseconds to them): the nearest one
    step = 10 * int(round(1000 / fps / 10))
    durations = [step] * (len(images) - 1) + [max(step, 3000)]
    _atomic_image_save(path, lambda fh: images[0].save(
        fh, format="GIF", save_all=True, append_images=images[1:], duration=durations, loop=0))
    return len(images)


def _fps_problem(fps: Any) -> str | None:
    """Why ``fps`` cannot be a GIF's frame rate (``None`` if it can): it must lie in :data:`MIN_FPS` ..
    :data:`MAX_FPS`, a frame delay of ``1000 / fps`` ms of 10 ms .. 655.35 s (the range of a GIF frame's delay; the
    delay :func:`save_gif` writes, rounded to the nearest 10 ms, too)."""
    expected = (f"expected a positive finite number of frames per second from {MIN_FPS:.4g} to {MAX_FPS:g} (a frame "
                f"delay of {MIN_DELAY_MS} ms to {MAX_DELAY_MS / 1000:g} s, what a GIF holds)")
    if isinstance(fps, bool) or not isinstance(fps, (int, float, np.integer, np.floating)) or not 0 < fps < math.inf:
        return expected
    # The range itself: a rate up to 105 rounds to a 10 ms delay, but is not the rate the GIF plays at.
    if not MIN_FPS <= fps <= MAX_FPS or not MIN_DELAY_MS <= round(1000 / fps) <= MAX_DELAY_MS:
        return f"a frame delay of {1000 / fps:.4g} ms: {expected}"
    return None


def save_png(record: Any, path: str) -> None:
    """Write the final board as a PNG (``path``'s folder must exist)."""
    from pokersquares_env.render import _pil, draw_poker_squares

    Image = _pil()[0]
    game, state = record.replay()
    title = f"{record.agent or 'Game'}" + (f" · seed {record.seed}" if record.seed is not None else "")
    frame = _checked_frame(game, state, title) if getattr(record, "checked", False) \
        else draw_poker_squares(game, state, title=title)
    image = Image.fromarray(frame)
    _atomic_image_save(path, lambda fh: image.save(fh, format="PNG"))


def _atomic_image_save(path: str, write: Any) -> None:
    from pokersquares_env._files import final_path, plain_temp_file

    path = final_path(path)  # a link stays a link; a file replaced keeps its mode
    directory = os.path.dirname(os.path.abspath(path))
    # Named here: otherwise the error would name the temporary file, not the path asked for.
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "is a folder: expected a file path", path)
    if not os.path.isdir(directory):
        raise FileNotFoundError(errno.ENOENT, "no such folder", directory)
    fd, tmp = plain_temp_file(directory, ".replay-", ".tmp", replacing=path)  # readable as a plain file would be
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _output_problem(option: str, path: str) -> str | None:
    """Why ``path`` cannot be the file ``option`` (``--gif``/``--png``) writes, or ``None``: a folder, a name that
    does not end in the option's extension, or a folder that does not exist or cannot be written."""
    ext = "." + option.lstrip("-")
    if os.path.isdir(path):
        return f"{option} {path!r} is a folder: expected a file path"
    if os.path.splitext(path)[1].lower() != ext:
        return f"{option} {path!r} does not end in {ext}: expected the path of a {ext[1:].upper()} file to write"
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        return f"{option} {path!r}: the folder {folder!r} does not exist"
    if not os.access(folder, os.W_OK):
        return f"{option} {path!r} cannot be written in {folder!r}"
    return None


def run(args: argparse.Namespace) -> int:
    """Run ``pokersquares replay``."""
    from pokersquares_env.records import RecordError

    # Usage errors first, before the record is read or a frame drawn.
    if args.fps is not None and not args.gif:
        print("pokersquares replay: --fps needs --gif (it sets the GIF's frame rate)", file=sys.stderr)
        return 2
    if args.boards and (args.gif or args.png):
        print("pokersquares replay: --boards prints the board after every move in the text replay; it does nothing "
              "with --gif or --png, which write images instead of text", file=sys.stderr)
        return 2
    problem = args.fps is not None and _fps_problem(args.fps)
    if problem:
        print(f"pokersquares replay: --fps {args.fps:g}: {problem}", file=sys.stderr)
        return 2
    if args.gif is not None or args.png is not None:
        from pokersquares_env.render import _pil

        try:
            _pil()
        except ImportError as exc:  # said before the record is read, as the other usage errors are
            option = "--gif" if args.gif is not None else "--png"
            print(f"pokersquares replay: {option}: {exc}", file=sys.stderr)
            return 2
    for option, path in (("--gif", args.gif), ("--png", args.png)):
        problem = path is not None and _output_problem(option, path)
        if problem:
            print(f"pokersquares replay: {problem}", file=sys.stderr)
            return 2
    try:
        record = load(args.file, args.index)
    except RecordError as exc:
        print(f"pokersquares replay: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"pokersquares replay: cannot read {args.file!r}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if not args.gif and not args.png:
        try:
            print_replay(record, boards=args.boards)
            sys.stdout.flush()
        except BrokenPipeError:  # e.g. piped into head: stop quietly, with the status of every command
            return _reader_left()
        return 0
    # Both files are written before anything is printed: a reader that left (`| head -c0`) stops neither.
    wrote, problem = [], None
    try:
        if args.gif:
            n = save_gif(record, args.gif, 2.0 if args.fps is None else args.fps)
            wrote.append(f"wrote {args.gif} ({n} frames)")
        if args.png:
            save_png(record, args.png)
            wrote.append(f"wrote {args.png}")
    except (OSError, ValueError) as exc:
        problem = f"pokersquares replay: {exc}"
    try:
        for line in wrote:
            print(line)
        sys.stdout.flush()
    except BrokenPipeError:
        status = _reader_left()
        if problem is None:
            return status
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    return 0


def _reader_left() -> int:
    """Standard output was closed (the output piped into ``head``): point it at the null device, so the final flush
    does not fail again, and return 141, the status of every ``pokersquares`` command then (as ``cli.main``)."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 141
