"""The terminal game ``pokersquares play``: a whole game through a pseudo-terminal, pipes, quitting, EOF and Ctrl-C."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys

import pexpect
import pytest

from pokersquares_env.play import TerminalGame, parse_move, use_color
from pokersquares_env.records import load_record

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CELLS = [f"{c}{r}" for r in "12345" for c in "abcde"]  # row by row
PROMPT = r"Place \S+ on \(a-e 1-5, h help, q quit\): "


def spawn(*args: str, env: dict | None = None) -> pexpect.spawn:
    """``python -m pokersquares_env play ARGS`` in an 80x24 pseudo-terminal, with Ctrl-C's default disposition: pytest
    started as a background job of a non-interactive shell inherits SIGINT ignored, and so would the game (Python then
    installs no KeyboardInterrupt handler), as a person's game started that way would."""
    environ = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    environ.update(env or {})
    return pexpect.spawn(
        sys.executable, ["-m", "pokersquares_env", "play", *args], cwd=ROOT, env=environ,
        encoding="utf-8", timeout=60, dimensions=(24, 80),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def no_temporaries(folder) -> bool:
    return not [n for n in os.listdir(folder) if n.startswith(".record-")]


def test_parse_move():
    assert parse_move("c3") == 12 and parse_move(" B4 ") == 16 and parse_move("4b") == 16
    assert parse_move("a1") == 0 and parse_move("e5") == 24
    for bad in ("", "f1", "a6", "a0", "12", "c 3x", "cc"):
        assert parse_move(bad) is None


def test_use_color(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_color("auto", Tty()) and not use_color("auto", io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_color("auto", Tty())
    assert use_color("always", io.StringIO()) and not use_color("never", Tty())


def test_coloured_board_keeps_its_columns():
    """Red cards used to be padded after colouring, so the escape codes filled their padding and the row drifted
    left; with the codes removed, the coloured board reads exactly as the plain one."""
    from pokersquares_env.core import PokerSquaresGame
    from pokersquares_env.text import board_text

    game = PokerSquaresGame()
    state = game.init("Ah Kh Qs Js Td 9c 8c 7h 6s 5d 4c 3c 2h As Ks Qd Jd Th 9s 8s 7s 6c 5c 4d 3s")
    for cell in range(7):
        game.apply(state, cell)
    plain = board_text(game, state, legal=True)
    coloured = board_text(game, state, legal=True, color=True)
    assert "\x1b[31m" in coloured and "\x1b" not in plain
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain
    assert plain.splitlines()[1].startswith("1   A♥   K♥   Q♠   J♠   T♦")


def test_whole_game_through_a_pty(tmp_path):
    record = tmp_path / "game.json"
    child = spawn("--seed", "7", "--record", str(record))
    child.logfile_read = transcript = io.StringIO()
    child.expect("c3 is the centre")
    for i, cell in enumerate(CELLS):
        child.expect(PROMPT)
        if i == 1:  # one illegal entry, refused with the reason; then a malformed one
            child.sendline("a1")
            child.expect(r"not allowed: cell 0 \(a1\) is occupied by")
            child.expect(PROMPT)
            child.sendline("zz")
            child.expect("'zz' is not a cell")
            child.expect(PROMPT)
        child.sendline(cell)
    child.expect(r"Scores: american (\d+), english (\d+)")
    american, english = int(child.match.group(1)), int(child.match.group(2))
    child.expect(r"You reached 100: a win!|(\d+) points: a win needs 100 or more under american points\.")
    assert american >= 100 if child.match.group(1) is None else int(child.match.group(1)) == american < 100
    child.expect("Record written to")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "\x1b[31m" in transcript.getvalue()  # red suits on a terminal
    assert "\x1b[2J" not in transcript.getvalue() and "\x1b[H" not in transcript.getvalue()  # no cursor tricks
    rec = load_record(record)
    game, state = rec.replay()
    assert [c for c in rec.placements] == list(range(25))
    assert rec.seed == 7 and rec.agent == "human"
    assert game.score(state, "american") == american and game.score(state, "english") == english
    assert no_temporaries(tmp_path)


@pytest.mark.parametrize("how", ["eof", "ctrl-c"])
def test_eof_and_ctrl_c_leave_no_record(tmp_path, how):
    record = tmp_path / "game.json"
    child = spawn("--seed", "3", "--record", str(record), env={"NO_COLOR": "1"})
    child.logfile_read = transcript = io.StringIO()
    for cell in CELLS[:4]:
        child.expect(PROMPT)
        child.sendline(cell)
    child.expect(PROMPT)
    if how == "eof":
        child.sendeof()
        child.expect("input ended before the game was over; nothing recorded")
    else:
        # input() writes the prompt before it blocks in read(), and CPython does not look for a signal in between:
        # a SIGINT landing in that window only sets a flag and the read waits on, so a person presses Ctrl-C
        # again. On a loaded machine the test can land there too, and does what the person does.
        child.sendintr()
        if child.expect(["Interrupted; nothing recorded", pexpect.TIMEOUT], timeout=10) == 1:
            child.sendintr()
            child.expect("Interrupted; nothing recorded")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == (1 if how == "eof" else 130)
    assert "Traceback" not in child.before
    assert not record.exists() and no_temporaries(tmp_path)
    assert "\x1b[" not in transcript.getvalue()  # NO_COLOR turns colours off


def test_quit_asks_first(tmp_path):
    lines = ["q", "n", "c3", "q", "y"]
    game, out = _scripted(lines, tmp_path / "g.json")
    assert out.count("Quit this game?") == 2
    assert "Game abandoned; nothing recorded." in out
    assert game.state.num_placed == 1 and not (tmp_path / "g.json").exists()


def _reader(lines, out):
    """An ``input`` stand-in: writes the prompt to ``out``, returns the next line, EOFError after the last."""
    feed = iter(lines)

    def read(prompt):
        out.write(prompt)
        try:
            return next(feed)
        except StopIteration:
            raise EOFError from None

    return read


def _scripted(lines, record=None, **kwargs):
    from pokersquares_env.core import PokerSquaresGame, Rules

    out = io.StringIO()
    read = _reader(lines, out)
    game = PokerSquaresGame(Rules(**kwargs))
    import numpy as np

    session = TerminalGame(game, game.deal(np.random.default_rng(0)), seed=0, record=str(record) if record else None,
                           read=read, out=out)
    session.status = session.play()
    return session, out.getvalue()


def test_end_message_says_what_a_win_needs():
    """Before, a lost game ended with '16 points: 100 wins under american points.', as if 100 had won."""
    import dataclasses

    import numpy as np

    from pokersquares_env.core import PokerSquaresGame

    game = PokerSquaresGame()
    deck = game.deal(np.random.default_rng(0))
    for threshold in (10_000, 0):
        system = dataclasses.replace(game.system, win_threshold=threshold)
        out = io.StringIO()
        moves = iter(CELLS)
        session = TerminalGame(PokerSquaresGame(system=system), deck, seed=0, read=lambda _: next(moves), out=out)
        assert session.play() == 0
        score = session.game.score(session.state)
        last = out.getvalue().splitlines()[-1]
        if threshold:
            assert last == f"{score:g} points: a win needs 10000 or more under american points."
        else:
            assert last == "You reached 0: a win!"


def test_adjacency_rule_refuses_with_reason():
    session, out = _scripted(["a1", "c3", "e5", "b2", "q", "y"], placement="adjacent", first_cell="center")
    assert "not allowed: cell 0 (a1) is not the first cell" in out
    assert "not allowed: cell 24 (e5) touches no placed card" in out
    assert session.state.placements == [12, 6]
    assert "()" in out  # playable cells are marked


def test_piped_game_against_an_agent_with_hints(tmp_path):
    record = tmp_path / "vs.json"
    proc = subprocess.run(
        [sys.executable, "-m", "pokersquares_env", "play", "--seed", "5", "--vs", "greedy", "--hint", "greedy",
         "--scoring", "english", "--record", str(record)],
        input="\n".join(CELLS) + "\n", capture_output=True, text=True, cwd=ROOT, timeout=120,
        env={k: v for k, v in os.environ.items() if k != "NO_COLOR"},
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "\x1b[" not in out  # no colours through a pipe
    assert max(len(line) for line in out.splitlines() if not line.startswith("Record written")) <= 80
    assert len(re.findall(r"^hint \(greedy\): [a-e][1-5]", out, re.M)) == 25
    assert re.search(r"^line\s+you\s+greedy", out, re.M)
    assert re.search(r"(You win|greedy wins|A tie)", out)
    rec = load_record(record)
    vs = rec.meta["vs"]
    assert vs["agent"] == "greedy" and len(vs["placements"]) == 25
    # The opponent played the same cards: replaying its cells on the record's deck gives its score.
    from pokersquares_env.core import PokerSquaresGame, parse_cell

    game = PokerSquaresGame(rec.rules, rec.system)
    state = game.init(rec.deck)
    for cell in vs["placements"]:
        game.apply(state, parse_cell(cell))
    assert game.score(state) == vs["score"]
    mine = game.score(rec.replay()[1])
    winner = "you" if mine > vs["score"] else ("greedy" if vs["score"] > mine else None)
    assert vs["winner"] == winner


@pytest.mark.parametrize(
    "args, message",
    [(["--scoring", "nope"], "unknown point system 'nope'"), (["--vs", "nobody"], "unknown agent 'nobody'"),
     (["--first-cell", "z9"], "first_cell='z9'"),
     (["--rules", "jokers=2", "--jokers", "1"], "jokers=1 contradicts rules 'jokers=2' (jokers=2)"),
     (["--rules", "jokers=2,wild=yes"], "unknown rule option(s) ['wild']")],
)
def test_bad_options_exit_2(args, message):
    proc = subprocess.run([sys.executable, "-m", "pokersquares_env", "play", *args], input="", capture_output=True,
                          text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr


def test_rules_option_sets_the_rules_of_the_game():
    proc = subprocess.run([sys.executable, "-m", "pokersquares_env", "play", "--seed", "3", "--rules",
                           "placement=adjacent,first_cell=center"], input="a1\nc3\nq\ny\n", capture_output=True,
                          text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "adjacent placement" in proc.stdout
    assert "not allowed: cell 0 (a1) is not the first cell" in proc.stdout


def test_bad_models_and_record_paths_are_refused_before_the_game(tmp_path, capsys):
    from pokersquares_env import cli

    damaged = tmp_path / "model.pt"
    damaged.write_bytes(b"not a model")
    (tmp_path / "folder").mkdir()
    for args, message in [(["--vs", f"fastppo:{tmp_path / 'none'}"], "--vs fastppo:"),
                          (["--hint", f"dqn:{damaged}"], "--hint dqn:"),
                          (["--hint", "mc:rollouts=-1"], "--hint mc:rollouts=-1: rollouts=-1"),
                          # an empty spec was taken as no --hint / --vs and the game started without one
                          (["--hint", ""], "--hint '': agent spec '': expected a name such as"),
                          (["--vs", ""], "--vs '': agent spec '': expected a name such as"),
                          (["--record", str(tmp_path / "folder")], "is a folder"),
                          (["--record", str(tmp_path / "none" / "game.json")], "cannot be written in")]:
        assert cli.main(["play", "--seed", "1", *args]) == 2, args
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, (args, err)


def test_header_shows_the_rules_as_replay_does():
    """Before, play's header left out the first-cell rule that replay's header shows."""
    import numpy as np

    from pokersquares_env.core import PokerSquaresGame, Rules
    from pokersquares_env.records import GameRecord
    from pokersquares_env.replay import print_replay

    rules = dict(jokers=1, placement="adjacent", first_cell="center")
    session, out = _scripted(["c3", "q", "y"], **rules)
    header = " ".join(out.splitlines()[:2])  # wrapped at 80 characters, after "first"
    assert header == "Poker Squares -- american points, seed 0, 1 joker(s), adjacent placement, first card on c3"
    game = PokerSquaresGame(Rules(**rules))
    state = game.init(game.deal(np.random.default_rng(0)))
    game.apply(state, 12)
    replayed = io.StringIO()
    print_replay(GameRecord.from_game(game, state, seed=0), replayed)
    assert replayed.getvalue().splitlines()[0].endswith(header.split(" -- ", 1)[1])
    assert "first card on" not in _scripted(["q", "y"])[1].splitlines()[0]  # no rule, nothing said


def test_hint_lists_the_chosen_cell_first_among_equal_values():
    """Before, `hint (mc): b1   a1 106.0  b1 106.0 ...`: ties kept cell order, so the chosen cell came second."""
    import numpy as np

    from pokersquares_env.core import PokerSquaresGame

    class Tied:
        spec, uses_obs = "tied", False

        def act(self, obs, info, game, state):
            return 6  # b2

        def action_values(self, obs, info, game, state):
            values = np.full(25, 5.0)
            values[[0, 3]] = 9.0  # a1 and d1 are better than b2
            return values

    game = PokerSquaresGame()
    session = TerminalGame(game, game.deal(np.random.default_rng(0)), hint=Tied(), out=io.StringIO())
    assert session.hint_text() == "hint (tied): b2   a1 9.0  d1 9.0  b2 5.0  b1 5.0  c1 5.0 (best 5 of 25 rated)"

    class Chosen(Tied):
        def act(self, obs, info, game, state):
            return 3  # d1, tied with a1

    session.hint_agent = Chosen()
    assert session.hint_text().startswith("hint (tied): d1   d1 9.0  a1 9.0  b1 5.0")


def test_hint_values_come_from_the_same_random_draws_as_the_choice():
    """A randomised agent (mc's rollouts): the values shown are the ones the choice was made from, not a fresh draw."""
    import numpy as np

    from agents.base import Agent
    from pokersquares_env.core import PokerSquaresGame

    class Noisy(Agent):
        spec, uses_obs = "noisy", False

        def action_values(self, obs, info, game, state):
            values = np.full(25, np.nan)
            cells = game.legal_cells(state)
            values[cells] = self.rng.normal(size=len(cells))
            return values

        def act(self, obs, info, game, state):
            return int(np.nanargmax(self.action_values(obs, info, game, state)))

    game = PokerSquaresGame()
    session = TerminalGame(game, game.deal(np.random.default_rng(0)), hint=Noisy(seed=1), out=io.StringIO())
    for _ in range(5):
        text = session.hint_text()
        chosen, listed_first = text.split()[2], text.split()[3]
        assert chosen == listed_first


def test_hint_of_a_rating_agent_comes_from_one_evaluation():
    """mc and search rate cells by sampling, or for a time budget: the hint's choice and values come from one
    evaluation even when two would differ whatever their random state."""
    import numpy as np

    from agents.base import RatingAgent
    from pokersquares_env.core import PokerSquaresGame

    clock = np.random.default_rng(99)  # outside the agent's rng, as a time budget is

    class Timed(RatingAgent):
        spec, uses_obs, calls = "timed", False, 0

        def rate(self, game, state):
            Timed.calls += 1
            values = np.full(25, np.nan)
            cells = np.array(game.legal_cells(state))
            values[cells] = clock.normal(size=len(cells))
            return values, cells

    game = PokerSquaresGame()
    session = TerminalGame(game, game.deal(np.random.default_rng(0)), hint=Timed(seed=1), out=io.StringIO())
    for n in range(1, 6):
        text = session.hint_text()
        assert text.split()[2] == text.split()[3] and Timed.calls == n


def _play_in_process(monkeypatch, capsys, text: str, *argv: str):
    from pokersquares_env import cli

    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    status = cli.main(["play", "--color", "never", *argv])
    return status, capsys.readouterr()


def test_record_refuses_an_existing_file_that_is_not_a_record_before_the_game(tmp_path, monkeypatch, capsys):
    """Before, ``--record existing.json`` replaced any file, a JSON file that was not a game record included."""
    other = tmp_path / "existing.json"
    for content in ('{"results": [1, 2, 3]}', "notes\n", ""):
        other.write_text(content)
        status, out = _play_in_process(monkeypatch, capsys, "\n".join(CELLS) + "\n", "--seed", "3", "--record",
                                       str(other))
        assert status == 2 and out.out == "", out
        assert out.err.startswith(f"pokersquares play: --record {str(other)!r} exists and is not a game record")
        assert out.err.count("\n") == 1 and other.read_text() == content  # refused before the game, file kept


def test_record_replaces_an_earlier_record(tmp_path, monkeypatch, capsys):
    record = tmp_path / "game.json"
    for seed in ("3", "4"):
        status, out = _play_in_process(monkeypatch, capsys, "\n".join(CELLS) + "\n", "--seed", seed, "--record",
                                       str(record))
        assert status == 0 and f"Record written to {record}" in out.out, out.err
        assert load_record(record).seed == int(seed) and no_temporaries(tmp_path)


def test_an_agent_error_names_the_spec_once(monkeypatch, capsys):
    """Before: '--hint ppo:junk.zip: ppo:junk.zip: ...', the loader's message starting with the spec again."""
    import agents

    def refuse(spec, **kwargs):
        raise ValueError(f"{spec}: 'junk.zip' is not a MaskablePPO model: expected the model.zip a run saved")

    monkeypatch.setattr(agents, "make_agent", refuse)
    status, out = _play_in_process(monkeypatch, capsys, "", "--seed", "1", "--hint", "ppo:junk.zip")
    assert status == 2
    assert out.err == ("pokersquares play: --hint ppo:junk.zip: 'junk.zip' is not a MaskablePPO model: expected the "
                       "model.zip a run saved\n")


def test_record_to_a_jsonl_file_collects_games_that_replay_reads(tmp_path, monkeypatch, capsys):
    """`--record x.jsonl` used to write a pretty-printed record that `replay x.jsonl` refused as not JSONL."""
    from pokersquares_env import cli
    from pokersquares_env.records import load_records

    record = tmp_path / "mine.jsonl"
    for n, seed in enumerate(("3", "4")):
        status, out = _play_in_process(monkeypatch, capsys, "\n".join(CELLS) + "\n", "--seed", seed, "--record",
                                       str(record))
        assert status == 0 and f"Record appended to {record} as record {n} (pokersquares replay " in out.out, out.err
    assert [r.seed for r in load_records(record)] == [3, 4]
    assert cli.main(["replay", str(record), "--index", "1"]) == 0 and "seed 4" in capsys.readouterr().out
    before = record.read_text()
    other = tmp_path / "notes.jsonl"
    other.write_text("not a record\n")
    status, out = _play_in_process(monkeypatch, capsys, "\n".join(CELLS) + "\n", "--seed", "5", "--record", str(other))
    assert status == 2 and "exists and is not a file of game records, one a line, so it is not added to" in out.err
    assert other.read_text() == "not a record\n" and record.read_text() == before


def test_an_empty_record_path_is_refused(monkeypatch, capsys):
    """`--record ""` used to play the game and record nothing, silently."""
    status, out = _play_in_process(monkeypatch, capsys, "\n".join(CELLS) + "\n", "--seed", "3", "--record", "")
    assert status == 2 and out.out == ""
    assert out.err == "pokersquares play: --record '': expected the path of a JSON (or JSONL) file to write\n"


def test_first_cell_alone_marks_cells_only_before_the_first_card():
    """With --first-cell and free placement, every empty cell was marked () for the whole game."""
    session, out = _scripted(["c3", "a1", "q", "y"], first_cell="center")
    boards = out.split("-- card ")
    assert "()" in boards[1] and "()" not in boards[2]  # the first board marks c3; the next marks nothing
    assert session.state.placements == [12, 0]


def test_negative_points_print_with_one_sign(tmp_path, monkeypatch, capsys):
    """A line worth -1 printed as '+-1' in the game and in replay."""
    from pokersquares_env import cli
    from pokersquares_env.scoring import point_system

    table = tmp_path / "neg.json"
    table.write_text(json.dumps(point_system("american").to_json()["points"] | {"high_card": -1}))
    record = tmp_path / "neg.json.jsonl"
    status, out = _play_in_process(monkeypatch, capsys, "\n".join(CELLS) + "\n", "--seed", "3", "--scoring",
                                   str(table), "--record", str(record))
    assert status == 0 and "+-" not in out.out and re.search(r"High card: -1 points", out.out), out.out
    assert cli.main(["replay", str(record)]) == 0
    text = capsys.readouterr().out
    assert "+-" not in text and re.search(r"High card: -1\b", text)


def test_record_appends_after_a_line_cut_short(tmp_path, monkeypatch, capsys):
    """A review found `--record p.jsonl` refused a file whose last write was cut short, which append_record is made to
    recover from; a file holding no record at all is still refused."""
    from pokersquares_env.records import load_records

    record = tmp_path / "p.jsonl"
    status, _ = _play_in_process(monkeypatch, capsys, "\n".join(CELLS) + "\n", "--seed", "3", "--record", str(record))
    assert status == 0
    with open(record, "a", encoding="utf-8") as fh:
        fh.write('{"format": "pokers')
    status, out = _play_in_process(monkeypatch, capsys, "\n".join(CELLS) + "\n", "--seed", "4", "--record", str(record))
    assert status == 0 and "Record appended to" in out.out, out.err
    with pytest.warns(RuntimeWarning, match="p.jsonl:2: not valid JSON"):
        assert [r.seed for r in load_records(record, skip_bad=True)] == [3, 4]


def test_record_refuses_a_jsonl_file_append_record_would_refuse_before_the_game(tmp_path, monkeypatch, capsys):
    """An audit found that a JSONL file whose *first* line is damaged passed the check before the game (a good record
    follows it) and then lost the game after 25 moves: append_record refuses a file that does not start with a
    record.  Likewise a file that cannot be written to (appended in place, unlike a .json record, which is replaced)."""
    record = tmp_path / "p.jsonl"
    status, _ = _play_in_process(monkeypatch, capsys, "\n".join(CELLS) + "\n", "--seed", "3", "--record", str(record))
    assert status == 0
    good = record.read_text()
    record.write_text("[1, 2]\n" + good)  # (a record cut short is taken: append_record starts a line after it)
    status, out = _play_in_process(monkeypatch, capsys, "\n".join(CELLS) + "\n", "--seed", "4", "--record", str(record))
    assert status == 2 and out.out == "", out
    assert "exists and is not a file of game records" in out.err and "line 1: expected a JSON object" in out.err, out.err
    assert record.read_text() == "[1, 2]\n" + good

    record.write_text(good)
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: False if os.fspath(path) == str(record) and mode == os.W_OK
                        else real_access(path, mode))
    status, out = _play_in_process(monkeypatch, capsys, "\n".join(CELLS) + "\n", "--seed", "4", "--record", str(record))
    assert status == 2 and out.out == "", out
    assert out.err == (f"pokersquares play: --record {str(record)!r} is not writable, so the game could not be added "
                       f"to it: expected a file of game records that can be appended to, or a new file\n")
    assert record.read_text() == good


@pytest.mark.parametrize("errors", ["strict", "surrogateescape"])
def test_undecodable_input_is_refused_as_a_move_not_a_traceback(errors):
    """An audit found that a byte the locale's encoding cannot decode (stdin strict, as in en_US.UTF-8) ended the game
    with a UnicodeDecodeError traceback; it is now refused like any text that names no cell, and the game goes on.
    Under a C locale's surrogateescape a later audit found it shown as '\\udce9' and echoed back as the raw byte."""
    env = {**os.environ, "PYTHONIOENCODING": f"utf-8:{errors}"}
    proc = subprocess.run([sys.executable, "-m", "pokersquares_env", "play", "--seed", "7", "--color", "never"],
                          input=b"c3\n\xe9\nq\ny\n", capture_output=True, cwd=ROOT, env=env, timeout=120)
    out, err = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")
    assert proc.returncode == 0 and "Traceback" not in err, err
    assert "'\ufffd' is not a cell: type a column a-e and a row 1-5" in out and "Game abandoned" in out


@pytest.mark.parametrize("name", ["game.json", "games.jsonl"])
def test_record_through_a_link_to_a_missing_file_writes_the_target(tmp_path, monkeypatch, capsys, name):
    """An audit found a link to a missing file refused as "exists and is not a game record ... (No such file or
    directory)"; a link stays a link, so the record is written at its target, in the target's folder."""
    from pokersquares_env.records import load_records

    (tmp_path / "real").mkdir()
    link = tmp_path / name
    link.symlink_to(tmp_path / "real" / name)
    status, out = _play_in_process(monkeypatch, capsys, "\n".join(CELLS) + "\n", "--seed", "3", "--record", str(link))
    assert status == 0, out.err
    assert link.is_symlink() and (tmp_path / "real" / name).is_file()
    loaded = load_records(link) if name.endswith(".jsonl") else [load_record(link)]
    assert [r.seed for r in loaded] == [3]
    (tmp_path / "gone").mkdir()
    other = tmp_path / ("x" + name)
    other.symlink_to(tmp_path / "gone" / "sub" / name)  # the target's folder is missing: refused before the game
    status, out = _play_in_process(monkeypatch, capsys, "\n".join(CELLS) + "\n", "--seed", "3", "--record", str(other))
    assert status == 2 and out.out == "" and "cannot be written in" in out.err and "sub" in out.err, out.err


def test_a_seed_too_large_for_a_record_is_refused_before_the_game(tmp_path, monkeypatch, capsys):
    """Before, the game was played and then lost to a RecordError traceback: a record holds seeds of at most
    MAX_SEED_BITS bits. Without --record such a seed is fine."""
    from pokersquares_env.records import MAX_SEED_BITS

    big = 2**1100
    record = tmp_path / "g.json"
    status, out = _play_in_process(monkeypatch, capsys, "\n".join(CELLS) + "\n", "--seed", str(big), "--record",
                                   str(record))
    assert status == 2 and out.out == "" and not record.exists()
    assert out.err == (f"pokersquares play: --seed {big}: an integer of 1,101 bits, but a game record holds seeds of "
                       f"at most {MAX_SEED_BITS} bits: expected a smaller seed, or no --record\n")
    status, out = _play_in_process(monkeypatch, capsys, "\n".join(CELLS) + "\n", "--seed", str(2**MAX_SEED_BITS - 1),
                                   "--record", str(record))
    assert status == 0 and load_record(record).seed == 2**MAX_SEED_BITS - 1, out.err
    status, out = _play_in_process(monkeypatch, capsys, "\n".join(CELLS) + "\n", "--seed", str(big))
    assert status == 0 and "Scores: american" in out.out and out.err == ""


def test_a_record_that_cannot_be_saved_is_reported_without_losing_the_game(tmp_path):
    """A RecordError from saving (here a seed too large, given to TerminalGame directly) used to end the game in a
    traceback after the result; now it is reported like a write error, after the result is shown."""
    import numpy as np

    from pokersquares_env.core import PokerSquaresGame

    game = PokerSquaresGame()
    record = tmp_path / "g.json"
    moves = iter(CELLS)
    out, err = io.StringIO(), io.StringIO()
    session = TerminalGame(game, game.deal(np.random.default_rng(0)), seed=2**1100, record=str(record),
                           read=lambda _: next(moves), out=out, err=err)
    assert session.play() == 1
    lines = out.getvalue().splitlines()
    # on standard error, so that `play > transcript.txt` does not hide the failure inside the transcript
    assert err.getvalue().startswith(f"could not write the record {str(record)!r}: field 'seed': an integer of "
                                     f"1,101 bits") and "could not write" not in out.getvalue()
    assert any(line.startswith("Scores: american") for line in lines) and not record.exists()


def test_hint_and_vs_agents_draw_from_streams_of_their_own(monkeypatch, capsys):
    """Before, the agents were seeded with the deal seed: mc's rollout decks came from the same stream as the real
    deck, so its rollouts partly replayed the real future. The agents' streams now differ from the deal's and from
    each other's, and stay the same for the same seed."""
    import numpy as np

    import agents

    made = {}
    real = agents.make_agent

    def spy(spec, **kwargs):
        made[spec] = kwargs["seed"]
        return real(spec, **kwargs)

    monkeypatch.setattr(agents, "make_agent", spy)
    seeds = []
    for _ in range(2):
        made.clear()
        status, _ = _play_in_process(monkeypatch, capsys, "q\ny\n", "--seed", "5", "--hint", "mc", "--vs", "random")
        assert status == 0
        seeds.append(dict(made))
    assert seeds[0] == seeds[1]  # reproducible for a seed
    hint_seed, vs_seed = seeds[0]["mc"], seeds[0]["random"]
    deal = np.random.default_rng(5).random(8)
    assert hint_seed != vs_seed
    for seed in (hint_seed, vs_seed):
        assert not np.isin(np.random.default_rng(seed).random(8), deal).any()


@pytest.mark.parametrize("flag", ["--vs", "--hint"])
def test_a_repeated_agent_flag_is_refused_naming_both(flag, monkeypatch, capsys):
    """Before, `--vs greedy --vs random` played against random, silently dropping greedy."""
    with pytest.raises(SystemExit) as exc:
        _play_in_process(monkeypatch, capsys, "q\ny\n", flag, "greedy", flag, "random")
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"{flag} given twice ('greedy' and 'random'): expected one agent" in err and "Traceback" not in err


@pytest.mark.parametrize("flag, first, second, what", [("--seed", "1", "2", "seed"),
                                                       ("--record", "a.json", "b.json", "file")])
def test_a_repeated_seed_or_record_is_refused_naming_both(flag, first, second, what, monkeypatch, capsys, tmp_path):
    """Before, `--seed 1 --seed 2` dealt seed 2 and `--record a.json --record b.json` wrote only b.json, silently."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        _play_in_process(monkeypatch, capsys, "q\ny\n", flag, first, flag, second)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    shown = (int(first), int(second)) if flag == "--seed" else (first, second)
    assert f"{flag} given twice ({shown[0]!r} and {shown[1]!r}): expected one {what}" in err
    assert not list(tmp_path.iterdir())


def test_a_closed_pipe_exits_141_as_the_other_commands_do():
    """Before, play exited 1 (which says the input ended) when its reader went away."""
    proc = subprocess.Popen([sys.executable, "-m", "pokersquares_env", "play", "--seed", "3"], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().startswith("Poker Squares")
    proc.stdout.close()  # the reader leaves, as `| head -1` does
    _, err = proc.communicate("\n".join(CELLS) + "\n", timeout=60)
    assert proc.returncode == 141 and "Traceback" not in err and "Exception ignored" not in err, err


def _a_record(path) -> str:
    """A finished game (the first legal cell every move) saved as a record at ``path``."""
    import numpy as np

    from pokersquares_env.core import PokerSquaresGame
    from pokersquares_env.records import GameRecord, save_record

    game = PokerSquaresGame()
    state = game.init(game.deal(np.random.default_rng(5)))
    while not game.is_terminal(state):
        game.apply(state, game.legal_cells(state)[0])
    save_record(GameRecord.from_game(game, state, seed=5), path)
    return str(path)


def _replay_to_a_closed_pipe(*args: str, unbuffered: bool = False) -> tuple[int, str]:
    """``pokersquares replay ARGS | head -c0``: the exit status and standard error."""
    environ = dict(os.environ, PYTHONUNBUFFERED="1") if unbuffered else \
        {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    proc = subprocess.Popen([sys.executable, "-m", "pokersquares_env", "replay", *args], cwd=ROOT, env=environ,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdout.close()  # the reader leaves before the first line, as `| head -c0` does
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err


def test_a_closed_pipe_stops_a_text_replay_with_141_as_the_other_commands(tmp_path):
    """Before, replay caught the broken pipe and exited 0, where every other command exits 141."""
    status, err = _replay_to_a_closed_pipe(_a_record(tmp_path / "g.json"), "--boards")
    assert status == 141 and err == "", err


@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "unbuffered"])
def test_a_closed_pipe_still_gets_both_replay_images_written(tmp_path, unbuffered):
    """Before, `replay rec.json --gif A --png B | head -c0` printed "wrote A" as soon as the GIF was written: the
    broken pipe was taken for a write error, so the PNG was never written and replay exited 2 ("[Errno 32] Broken
    pipe"), or, with buffered output, 120 with "Exception ignored" at exit."""
    pytest.importorskip("PIL")
    record = _a_record(tmp_path / "g.json")
    status, err = _replay_to_a_closed_pipe(record, "--gif", str(tmp_path / "a.gif"), "--png", str(tmp_path / "b.png"),
                                           unbuffered=unbuffered)
    assert status == 141 and err == "", err
    assert sorted(os.listdir(tmp_path)) == ["a.gif", "b.png", "g.json"]
    from PIL import Image

    with Image.open(tmp_path / "a.gif") as gif, Image.open(tmp_path / "b.png") as png:
        assert gif.n_frames == 26 and png.size == gif.size


def test_equal_scores_of_a_float_table_are_a_tie_and_reach_an_equal_threshold():
    """Scores are float sums: equal hands can total 0.6 and 0.6000000000000001, and ten one-pairs of 0.1 total
    0.9999999999999999. Before, the first was a win and the second fell short of a threshold of 1."""
    import dataclasses

    import numpy as np

    from pokersquares_env.core import PokerSquaresGame
    from pokersquares_env.scoring import point_system

    table = {"one_pair": 0.1, "two_pair": 0.2, "three_of_a_kind": 0.3, "straight": 0.4, "flush": 0.5,
             "full_house": 0.6, "four_of_a_kind": 0.7, "straight_flush": 0.8, "royal_flush": 0.9}
    game = PokerSquaresGame(system=point_system(table))
    # the audit's deal (the multiplayer env's seed 161 with random legal moves): six one-pairs on each board
    deck = game.deal(np.random.default_rng(161))
    rng = np.random.default_rng(161)
    states = [game.init(deck), game.init(deck)]
    for _ in range(25):
        for state in states:
            game.apply(state, int(rng.choice(np.flatnonzero(game.action_mask(state)))))

    class Scripted:
        spec, uses_obs = "scripted", False

        def __init__(self, cells):
            self.cells = iter(cells)

        def act(self, obs, info, game, state):
            return next(self.cells)

    from pokersquares_env.core import cell_name

    moves = iter(cell_name(c) for c in states[0].placements)
    out = io.StringIO()
    session = TerminalGame(game, deck, vs=Scripted(states[1].placements), read=lambda _: next(moves), out=out)
    assert session.play() == 0
    assert out.getvalue().splitlines()[-1] == "A tie at 0.60."
    ten_pairs = "8c 5h Ad Ah 4c 6d 6c 7d 3d 2s 8s 6h 3h 4h 8d 3s 2c 2h 6s As 4s 8h Ac 3c 4d"  # row by row: 10 pairs
    system = dataclasses.replace(game.system, win_threshold=1)
    moves = iter(CELLS)
    out = io.StringIO()
    session = TerminalGame(PokerSquaresGame(system=system), ten_pairs, read=lambda _: next(moves), out=out)
    assert session.play() == 0
    assert out.getvalue().splitlines()[-1] == "You reached 1: a win!"


def test_a_completed_line_shows_the_points_of_that_move_not_the_total():
    """A mutation audit found the running total in the completion message unseen: the tests completed only a first
    line, whose points are the total.  Row 1 makes a pair (+2), then row 2 a straight flush (+75, not 77)."""
    from pokersquares_env.cards import parse_cards
    from pokersquares_env.core import PokerSquaresGame

    deck = parse_cards("2c 2d 3c 4c 5c 7h 8h 9h Th Jh 6s 6h Ks Kh Qs Qh 9s 9d As Ad 3s 3h Jc Jd 8c")
    out = io.StringIO()
    game = PokerSquaresGame()
    TerminalGame(game, deck, seed=None, read=_reader([f"{c}{r}" for r in (1, 2) for c in "abcde"], out), out=out).play()
    text = out.getvalue()
    assert "row 1 One pair: +2 points" in text and "row 2 Straight flush: +75 points" in text


def test_hints_come_from_the_hint_agent_when_an_opponent_plays_too(monkeypatch, capsys):
    """With --hint and --vs, the hints are the hint agent's (a mutation audit found the opponent's shown unseen: the
    test of both flags used greedy for each)."""
    status, out = _play_in_process(monkeypatch, capsys, "q\ny\n", "--seed", "5", "--hint", "greedy", "--vs", "random")
    assert status == 0 and "hint (greedy)" in out.out and "hint (random)" not in out.out


class _FixedCells:
    """A duck-typed opponent for ``--vs``: plays the cells it is given, in order."""

    uses_obs = False

    def __init__(self, name, cells):
        self.name, self.cells = name, list(cells)

    def act(self, obs, info, game, state):
        return self.cells[state.num_placed]


def test_vs_records_the_winner_you_the_opponent_or_none_on_a_tie(tmp_path):
    """The recorded ``meta["vs"]["winner"]`` follows the verdict in all three outcomes (before, only the outcome the
    piped game happened to have was checked)."""
    import numpy as np

    from pokersquares_env.core import PokerSquaresGame, cell_name

    game = PokerSquaresGame()
    deck = game.deal(np.random.default_rng(3))
    rows_first = list(range(25))
    scattered = [(7 * i) % 25 for i in range(25)]  # not a row or column symmetry of the first order
    by_points = {}
    for order in (rows_first, scattered):
        state = game.init(deck)
        for cell in order:
            game.apply(state, cell)
        by_points[game.score(state)] = order
    assert len(by_points) == 2, "the two orders must score differently on this deal"
    low, high = (by_points[p] for p in sorted(by_points))
    cases = [(high, low, "you", "You win"), (low, high, "rival", "rival wins"), (low, low, None, "A tie at")]
    for k, (mine, theirs, winner, verdict) in enumerate(cases):
        record = tmp_path / f"vs{k}.json"
        out = io.StringIO()
        session = TerminalGame(game, deck, seed=3, vs=_FixedCells("rival", theirs), record=str(record),
                               read=_reader([cell_name(c) for c in mine], out), out=out)
        assert session.play() == 0
        assert verdict in out.getvalue()
        vs = load_record(record).meta["vs"]
        assert vs["winner"] == winner and vs["agent"] == "rival"
        assert vs["placements"] == [cell_name(c) for c in theirs]


# ---- a mutation audit of play.py and replay.py (2026-12-03) -----------------------------------------------------------


def test_every_quit_help_and_board_word_is_read_as_typed_with_spaces_and_capitals():
    """q, quit and exit quit after y or yes (in any case, spaces around them); h, help and ? print the help; b and
    board print the board again; a cell may have spaces inside (``'c 3'``, ``'3 b'``). A mutation audit found every
    word but ``q``/``y`` and ``h`` unseen."""
    from pokersquares_env.play import HELP_TEXT

    for word in ("q", "quit", "exit", " EXIT "):
        for yes in ("y", "yes", "Y", " Yes "):
            session, out = _scripted([word, yes, "c3"])
            assert session.status == 0 and "Game abandoned; nothing recorded." in out, (word, yes)
            assert session.state.num_placed == 0
    session, out = _scripted(["q", "no", "c 3", "3 b", "q", "y"])
    assert session.state.placements == [12, 11] and out.count("Quit this game?") == 2
    for word in ("h", "help", "?", "HELP"):
        session, out = _scripted([word, "q", "y"])
        assert out.count(HELP_TEXT) == 1 and "is not a cell" not in out, word
    assert max(len(line) for line in HELP_TEXT.splitlines()) <= 80  # as every turn's lines (its first line had 89)
    for word in ("b", "board", "Board"):
        session, out = _scripted([word, "q", "y"])
        assert out.count("-- card 1 of 25 --") == 2 and "is not a cell" not in out, word
    session, out = _scripted(["c3", "q", "y"])
    assert "-- card 1 of 25 --" in out and "-- card 2 of 25 --" in out and "-- card 0 " not in out


def test_a_refused_entry_is_quoted_as_typed():
    """The refusal names the text the player typed, capitals included, not the lower-cased form read."""
    session, out = _scripted(["ZZ", "q", "y"])
    assert "'ZZ' is not a cell: type a column a-e and a row 1-5, such as c3 (h for help)" in out


def test_hint_asks_the_hint_agent_again_or_says_there_is_none():
    """``hint`` prints the hint agent's choice again (it is shown once before every card anyway); without --hint it
    says how to get one."""
    import numpy as np

    from pokersquares_env.core import PokerSquaresGame

    class Fixed:
        spec, uses_obs = "fixed", False

        def act(self, obs, info, game, state):
            return 18  # d4

        def action_values(self, obs, info, game, state):
            return None

    game = PokerSquaresGame()
    out = io.StringIO()
    session = TerminalGame(game, game.deal(np.random.default_rng(0)), hint=Fixed(),
                           read=_reader(["hint", "hint", "q", "y"], out), out=out)
    assert session.play() == 0
    assert out.getvalue().count("hint (fixed): d4\n") == 3
    session, out = _scripted(["hint", "q", "y"])
    assert "no hint agent: start the game with --hint AGENT" in out and session.state.num_placed == 0


def test_a_hint_line_fits_80_columns_with_long_values():
    """As many rated cells as fit: values of six characters leave room for three of them, not four (the line would
    be 81 columns)."""
    import numpy as np

    from pokersquares_env.core import PokerSquaresGame

    class Wide:
        spec, uses_obs = "wide", False

        def act(self, obs, info, game, state):
            return 0

        def action_values(self, obs, info, game, state):
            return np.full(25, -123.4)

    game = PokerSquaresGame()
    session = TerminalGame(game, game.deal(np.random.default_rng(0)), hint=Wide(), out=io.StringIO())
    text = session.hint_text()
    assert text == "hint (wide): a1   a1 -123.4  b1 -123.4  c1 -123.4 (best 3 of 25 rated)"
    assert len(text) <= 80


def test_the_input_ending_and_ctrl_c_are_said_on_the_error_stream_and_quitting_on_the_output():
    """Why a game ended without a result goes to ``err`` (a transcript redirected to a file does not hide it); a
    quit is part of the game's transcript. Through a pseudo-terminal the two streams are one, so the tests there
    could not tell."""
    import numpy as np

    from pokersquares_env.core import PokerSquaresGame

    game = PokerSquaresGame()
    deck = game.deal(np.random.default_rng(0))
    for exc, status, message in ((EOFError, 1, "The input ended before the game was over; nothing recorded."),
                                 (KeyboardInterrupt, 130, "Interrupted; nothing recorded.")):
        def read(prompt, exc=exc):
            raise exc

        out, err = io.StringIO(), io.StringIO()
        assert TerminalGame(game, deck, read=read, out=out, err=err).play() == status
        assert err.getvalue() == f"\n{message}\n" and message not in out.getvalue()
    out, err = io.StringIO(), io.StringIO()
    assert TerminalGame(game, deck, read=_reader(["q", "y"], out), out=out, err=err).play() == 0
    assert out.getvalue().endswith("Game abandoned; nothing recorded.\n") and err.getvalue() == ""


def test_vs_names_the_opponent_and_says_the_verdict_with_the_winners_score_first(tmp_path):
    """The header names the opponent; the verdict gives the winner's points first; the record's ``meta.vs.scores``
    holds the opponent's board under each system by name (a mutation audit found all three unseen)."""
    import numpy as np

    from pokersquares_env.core import PokerSquaresGame, cell_name

    game = PokerSquaresGame()
    deck = game.deal(np.random.default_rng(3))
    rows_first = list(range(25))
    scattered = [(7 * i) % 25 for i in range(25)]
    points = {}
    for order in (rows_first, scattered):
        state = game.init(deck)
        for cell in order:
            game.apply(state, cell)
        points[tuple(order)] = state
    (low, low_state), (high, high_state) = sorted(points.items(), key=lambda kv: game.score(kv[1]))
    fmt = lambda p: f"{p:g}"  # noqa: E731
    lo, hi = fmt(game.score(low_state)), fmt(game.score(high_state))
    assert lo != hi
    for mine, theirs, verdict in ((high, low, f"You win, {hi} to {lo}."), (low, high, f"rival wins, {hi} to {lo}.")):
        record = tmp_path / "vs.json"
        out = io.StringIO()
        session = TerminalGame(game, deck, seed=3, vs=_FixedCells("rival", theirs), record=str(record),
                               read=_reader([cell_name(c) for c in mine], out), out=out)
        assert session.play() == 0
        text = out.getvalue()
        assert "Against rival: it places the same cards on its own board, hidden until the end." in text
        assert verdict in text.splitlines()
        their_state = points[tuple(theirs)]
        scores = load_record(record).meta["vs"]["scores"]
        assert scores == {"american": game.score(their_state, "american"),
                          "english": game.score(their_state, "english")}
        assert scores["american"] != scores["english"]


def test_side_by_side_numbers_the_rows_colours_red_suits_and_totals_a_custom_table(tmp_path):
    """The boards of --vs: rows numbered 1-5 under the column letters, diamonds and hearts in red (only they), and
    the total under a custom table by its name, before the American and English totals."""
    from pokersquares_env.cards import parse_cards
    from pokersquares_env.core import PokerSquaresGame
    from pokersquares_env.play import _Style, side_by_side
    from pokersquares_env.scoring import point_system

    table = tmp_path / "mine.json"
    table.write_text(json.dumps(point_system("american").to_json()["points"] | {"one_pair": 7}))
    game = PokerSquaresGame(system=point_system(str(table)))
    cards = "2c 2d 3c 4s 5c 7h 8h 9h Th Jh 6s 6h Ks Kh Qs Qh 9s 9d As Ad 3s 3h Jc Jd 8c"
    state = game.init(parse_cards(cards))
    for cell in range(25):
        game.apply(state, cell)
    text = side_by_side(game, [state, state], ["you", "rival"])
    rows = text.splitlines()
    assert rows[1].split() == ["a", "b", "c", "d", "e"] * 2
    assert [row.split()[0] for row in rows[2:7]] == ["1", "2", "3", "4", "5"]
    assert rows[2].split()[:6] == ["1", "2♣", "2♦", "3♣", "4♠", "5♣"]
    name = game.system.name
    totals = {ln.split()[1]: ln.split()[2:] for ln in rows if ln.startswith("total ")}
    assert list(totals) == [name[:16], "american", "english"]
    assert totals[name[:16]] == [f"{game.score(state):g}"] * 2
    coloured = side_by_side(game, [state], ["you"], _Style(True))
    red = re.findall(r"\x1b\[31m\s*(\S+)\x1b\[0m", coloured)
    assert red and all(card[-1] in "♦♥" for card in red)
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == side_by_side(game, [state], ["you"])
    assert len(red) == sum(1 for card in cards.split() if card[-1] in "dh")


def test_a_jsonl_record_names_the_replay_command_for_it_with_the_path_quoted(tmp_path, monkeypatch, capsys):
    """The message after an appended game gives the replay command that shows it: the record's index, and the path
    quoted for the shell (here it has a space)."""
    from pokersquares_env import cli

    record = tmp_path / "my games.jsonl"
    for n, seed in enumerate(("3", "4")):
        status, out = _play_in_process(monkeypatch, capsys, "\n".join(CELLS) + "\n", "--seed", seed, "--record",
                                       str(record))
        assert status == 0, out.err
        assert out.out.splitlines()[-1] == (f"Record appended to {record} as record {n} "
                                            f"(pokersquares replay '{record}' --index {n})")
    assert cli.main(["replay", str(record), "--index", "1"]) == 0 and "seed 4" in capsys.readouterr().out


def test_record_paths_of_spaces_a_read_only_folder_or_a_seed_one_bit_too_large_are_refused(tmp_path, monkeypatch,
                                                                                             capsys):
    """Before the game, with exit status 2: a --record path of spaces only, a folder that cannot be written in
    (os.access, as root ignores permissions), and a seed of MAX_SEED_BITS + 1 bits (the bound itself is fine)."""
    from pokersquares_env.records import MAX_SEED_BITS

    moves = "\n".join(CELLS) + "\n"
    status, out = _play_in_process(monkeypatch, capsys, moves, "--seed", "3", "--record", "  ")
    assert status == 2 and out.out == ""
    assert out.err == "pokersquares play: --record '  ': expected the path of a JSON (or JSONL) file to write\n"
    record = tmp_path / "g.json"
    status, out = _play_in_process(monkeypatch, capsys, moves, "--seed", str(2**MAX_SEED_BITS), "--record",
                                   str(record))
    assert status == 2 and out.out == "" and f"an integer of {MAX_SEED_BITS + 1:,} bits" in out.err
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: False if os.fspath(path) == str(tmp_path) and mode == os.W_OK
                        else real_access(path, mode))
    status, out = _play_in_process(monkeypatch, capsys, moves, "--seed", "3", "--record", str(record))
    assert status == 2 and out.out == "" and not record.exists()
    assert out.err == (f"pokersquares play: --record {str(record)!r} cannot be written in {str(tmp_path)!r}: expected "
                       f"the path of a JSON file to write\n")


def test_the_header_names_a_first_cell_of_a1_too():
    """The first-cell rule is said for a1 (cell 0) as for any other cell, as replay says it."""
    session, out = _scripted(["q", "y"], first_cell="top-left")
    assert out.splitlines()[0] == "Poker Squares -- american points, seed 0, first card on a1"


def test_an_opponent_choosing_an_illegal_cell_is_named_with_the_reason():
    """A --vs agent's illegal choice is an error naming the agent and why the cell is illegal, not the core's bare
    refusal of the move."""
    import numpy as np

    from pokersquares_env.core import PokerSquaresGame

    class Stubborn(_FixedCells):
        spec = "stubborn"

    game = PokerSquaresGame()
    session = TerminalGame(game, game.deal(np.random.default_rng(0)), vs=Stubborn("stubborn", [0, 0]),
                           read=_reader(["a1", "b1"], io.StringIO()), out=io.StringIO())
    with pytest.raises(RuntimeError, match=r"^agent 'stubborn' chose an illegal cell: cell 0 \(a1\) is occupied"):
        session.play()


# ---- a second mutation audit of play.py ------------------------------------------------------------------------------


def test_a_blank_line_asks_again_without_a_refusal():
    """An empty line (or spaces) is read past, as a slip of the Enter key: no 'is not a cell' refusal."""
    session, out = _scripted(["", "   ", "c3", "q", "y"])
    assert session.state.placements == [12] and "is not a cell" not in out
    assert len(re.findall(PROMPT, out)) == 4  # card 1 three times, card 2 once


def test_a_record_write_that_fails_is_reported_after_the_result(tmp_path):
    """An OSError when the record is written at the end (here a folder was made at its path during the game) is
    reported on the error stream with exit status 1, after the result, as a refused record is; not a traceback."""
    import numpy as np

    from pokersquares_env.core import PokerSquaresGame

    game = PokerSquaresGame()
    record = tmp_path / "g.json"
    record.mkdir()
    out, err = io.StringIO(), io.StringIO()
    session = TerminalGame(game, game.deal(np.random.default_rng(0)), seed=0, record=str(record),
                           read=_reader(CELLS, out), out=out, err=err)
    assert session.play() == 1
    assert err.getvalue().startswith(f"could not write the record {str(record)!r}: ")
    assert "Scores: american" in out.getvalue() and record.is_dir() and not list(record.iterdir())


def test_a_jsonl_suffix_in_capitals_collects_games_too(tmp_path, monkeypatch, capsys):
    """``GAMES.JSONL`` is a file of records, one a line, as ``games.jsonl`` is (not a JSON record replaced each time)."""
    from pokersquares_env.records import load_records

    record = tmp_path / "GAMES.JSONL"
    for n, seed in enumerate(("3", "4")):
        status, out = _play_in_process(monkeypatch, capsys, "\n".join(CELLS) + "\n", "--seed", seed, "--record",
                                       str(record))
        assert status == 0 and f"Record appended to {record} as record {n} " in out.out, out
    assert [r.seed for r in load_records(record)] == [3, 4]


def test_a_jsonl_file_of_no_record_is_refused_with_the_reason_of_its_first_line(tmp_path, monkeypatch, capsys):
    """The reason given is the first damaged line's, as load_records words it (not its warning's wording)."""
    other = tmp_path / "notes.jsonl"
    other.write_text('{"a": 1}\n')
    status, out = _play_in_process(monkeypatch, capsys, "\n".join(CELLS) + "\n", "--seed", "3", "--record", str(other))
    assert status == 2 and out.out == ""
    assert out.err == (f"pokersquares play: --record {str(other)!r} exists and is not a file of game records, one a "
                       f"line, so it is not added to ({other}:1: field 'format': missing): expected a new file or an "
                       f"earlier record\n")


def test_an_existing_file_that_cannot_be_read_is_refused_saying_so(tmp_path, monkeypatch, capsys):
    """An OSError reading an existing --record file (os.access and permissions do not stop root, so the read is made
    to fail) is refused before the game with the system's reason, not the exception's repr."""
    from pokersquares_env import records

    record = tmp_path / "g.json"
    record.write_text("{}")

    def unreadable(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(records, "load_record", unreadable)
    status, out = _play_in_process(monkeypatch, capsys, "\n".join(CELLS) + "\n", "--seed", "3", "--record",
                                   str(record))
    assert status == 2 and out.out == ""
    assert out.err == (f"pokersquares play: --record {str(record)!r} exists and is not a game record, so it is not "
                       f"replaced (cannot read it (Permission denied)): expected a new file or an earlier record\n")


def test_a_read_only_json_record_is_still_replaced(tmp_path, monkeypatch, capsys):
    """Only a .jsonl file is written in place; a .json record is replaced by a new file, so its own permissions do not
    matter (the check of a file that cannot be appended to is for .jsonl files)."""
    record = tmp_path / "g.json"
    moves = "\n".join(CELLS) + "\n"
    assert _play_in_process(monkeypatch, capsys, moves, "--seed", "3", "--record", str(record))[0] == 0
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: False if os.fspath(path) == str(record) and mode == os.W_OK
                        else real_access(path, mode))
    status, out = _play_in_process(monkeypatch, capsys, moves, "--seed", "4", "--record", str(record))
    assert status == 0 and f"Record written to {record}" in out.out, out.err
    assert load_record(record).seed == 4


def test_without_a_seed_a_fresh_one_is_printed_recorded_and_deals_as_env_reset(tmp_path, monkeypatch, capsys):
    """The module's promise: with no --seed a fresh seed is printed (and recorded), and a seed deals the same deck as
    ``env.reset(seed=...)``."""
    from pokersquares_env.env import PokerSquaresEnv

    record = tmp_path / "g.json"
    status, out = _play_in_process(monkeypatch, capsys, "\n".join(CELLS) + "\n", "--record", str(record))
    assert status == 0, out.err
    seed = int(re.fullmatch(r"Poker Squares -- american points, seed (\d+)", out.out.splitlines()[0]).group(1))
    rec = load_record(record)
    env = PokerSquaresEnv()
    env.reset(seed=seed)
    assert rec.seed == seed and list(rec.deck) == list(env.state.deck)


def test_the_agents_are_built_for_the_games_points_and_rules_and_reset_before_it(monkeypatch, capsys):
    """--hint and --vs agents are made with the game's point system and rules (an agent built for others plays for
    other points, or refuses a deck with jokers), and reset before their first move."""
    import agents
    from pokersquares_env.core import Rules

    made = {}

    class Recorder:
        uses_obs = False

        def __init__(self, spec, *, system, rules, seed):
            self.spec, self.system, self.rules, self.resets = spec, system, rules, 0
            made[spec] = self

        def reset(self):
            self.resets += 1

        def act(self, obs, info, game, state):
            assert self.resets == 1, "an agent was asked to move before it was reset"
            return game.legal_cells(state)[0]

        def action_values(self, obs, info, game, state):
            return None

    monkeypatch.setattr(agents, "make_agent", Recorder)
    status, out = _play_in_process(monkeypatch, capsys, "c3\nq\ny\n", "--seed", "5", "--scoring", "english",
                                   "--rules", "jokers=1,placement=adjacent", "--hint", "helper", "--vs", "rival")
    assert status == 0, out.err
    assert sorted(made) == ["helper", "rival"]
    for agent in made.values():
        assert agent.system.name == "english" and agent.rules == Rules(jokers=1, placement="adjacent")
        assert agent.resets == 1


def test_color_always_colours_a_game_through_a_pipe(monkeypatch, capsys):
    """``--color always`` colours output that is not a terminal (and despite NO_COLOR); ``never`` does not."""
    from pokersquares_env import cli

    monkeypatch.setenv("NO_COLOR", "1")
    for choice in ("always", "never"):
        monkeypatch.setattr("sys.stdin", io.StringIO("q\ny\n"))
        assert cli.main(["play", "--seed", "3", "--color", choice]) == 0
        out = capsys.readouterr().out
        assert ("\x1b[1m-- card 1 of 25 --\x1b[0m" in out) == (choice == "always"), choice
        assert ("\x1b[" in out) == (choice == "always"), choice


def test_hint_rates_only_the_cells_with_finite_values_and_names_a_named_agent():
    """Cells the agent leaves unrated (NaN) or rates infinitely are left out; all the rated cells fit, so no 'best N
    of M'; an agent with a name but no spec is called by its name."""
    import numpy as np

    from pokersquares_env.core import PokerSquaresGame

    class Partial:
        name, uses_obs = "partial", False

        def act(self, obs, info, game, state):
            return 2  # c1

        def action_values(self, obs, info, game, state):
            values = np.full(25, np.nan)
            values[[2, 7, 4]] = [3.0, 1.0, np.inf]
            return values

    game = PokerSquaresGame()
    session = TerminalGame(game, game.deal(np.random.default_rng(0)), hint=Partial(), out=io.StringIO())
    assert session.hint_text() == "hint (partial): c1   c1 3.0  c2 1.0"


def test_an_agent_that_reads_observations_gets_the_encoded_board():
    """An agent without ``uses_obs = False`` (a learned policy's way) gets the env's observation of its own board;
    one that says it does not use them gets None."""
    import numpy as np

    from pokersquares_env.core import PokerSquaresGame
    from pokersquares_env.env import encode_observation

    class Watching:
        def __init__(self, name):
            self.name, self.seen = name, []

        def act(self, obs, info, game, state):
            self.seen.append((obs, state.copy()))
            return game.legal_cells(state)[0]

        def action_values(self, obs, info, game, state):
            return None

    class Blind(Watching):
        uses_obs = False

    game = PokerSquaresGame()
    hint, vs, blind = Watching("hint"), Watching("vs"), Blind("blind")
    out = io.StringIO()
    session = TerminalGame(game, game.deal(np.random.default_rng(0)), hint=hint, vs=vs,
                           read=_reader(["e5", "q", "y"], out), out=out)
    assert session.play() == 0
    for agent in (hint, vs):
        assert len(agent.seen) >= 1
        for obs, state in agent.seen:
            assert obs is not None
            np.testing.assert_array_equal(obs, encode_observation(game, state))
    session = TerminalGame(game, game.deal(np.random.default_rng(0)), hint=blind, out=io.StringIO())
    session.hint_text()
    assert blind.seen[0][0] is None


def test_a_coloured_game_colours_each_board_and_every_prompt_names_the_drawn_card():
    """With colours, red suits are red on the board before every card (the card to place included) and on the final
    board; each prompt names the card drawn."""
    from pokersquares_env.cards import format_card, parse_cards
    from pokersquares_env.core import PokerSquaresGame

    deck = parse_cards("Ah 2c 3s 4c 5s 6c 7s 8c 9s Tc Js Qc Ks Ac 2s 3c 4s 5c 6s 7c 8s 9c Ts Jc Qs")
    game = PokerSquaresGame()
    out = io.StringIO()
    assert TerminalGame(game, deck, color=True, read=_reader(CELLS, out), out=out).play() == 0
    text = out.getvalue()
    assert re.findall(r"Place (\S+) on", text) == [format_card(c) for c in deck]
    before_first, after_first = text.split("Place ", 1)
    assert "card to place: \x1b[31mA♥\x1b[0m" in before_first  # the card to place
    assert "\x1b[31m" in after_first.split("-- card 2 of 25 --", 1)[1].split("Place ", 1)[0]  # A♥ on the board
    assert "\x1b[31m" in text.split("== Game over ==", 1)[1].split("Scores: ", 1)[0]  # the final board


def test_side_by_side_keeps_each_board_in_its_24_columns_under_a_long_name():
    """A long agent name (a model's path) is cut to fit its column, and the second board lines up under its name as
    the first does."""
    from pokersquares_env.cards import parse_cards
    from pokersquares_env.core import PokerSquaresGame
    from pokersquares_env.play import side_by_side

    game = PokerSquaresGame()
    state = game.init(parse_cards("2c 2d 3c 4s 5c 7h 8h 9h Th Jh 6s 6h Ks Kh Qs Qh 9s 9d As Ad 3s 3h Jc Jd 8c"))
    for cell in range(25):
        game.apply(state, cell)
    long = "ppo:" + "runs/x" * 8
    rows = side_by_side(game, [state, state], [long, "rival"]).splitlines()
    assert rows[0] == f"{long[:22]}  rival"
    for row in rows[1:7]:  # the column letters and the five rows: the same board twice
        assert row[24:] == row[:24].rstrip() != ""


def test_a_hint_line_stays_within_79_characters_whatever_the_agents_name():
    """The rated cells shown are cut to keep the plain hint line at 79 characters at most (a terminal wrapping at its
    80th column does not break it); the best one is shown whenever it fits."""
    import numpy as np

    from pokersquares_env.core import PokerSquaresGame

    class Named:
        uses_obs = False

        def __init__(self, name):
            self.name = name

        def act(self, obs, info, game, state):
            return 0

        def action_values(self, obs, info, game, state):
            return np.linspace(-100.5, 100.5, 25)[::-1]  # a1 best; every value six characters

    game = PokerSquaresGame()
    deck = game.deal(np.random.default_rng(0))
    lengths = set()
    for size in range(1, 60):
        text = TerminalGame(game, deck, hint=Named("n" * size), out=io.StringIO()).hint_text()
        assert len(text) <= 79, (size, text)
        assert ("a1 100.5" in text) == (size <= 36), (size, text)  # the best cell and "(best 1 of 25 rated)" fit
        lengths.add(len(text))
    assert 79 in lengths  # the limit is reached, not kept far below


def test_the_lines_before_the_first_turn_are_wrapped_at_80_characters(monkeypatch, capsys):
    """The title (point system, seed and every rule) and the --vs line are wrapped at 80 characters, the width the
    turns keep within; before, a long rule set or agent spec made lines of 84 to 89 characters."""
    status, out = _play_in_process(monkeypatch, capsys, "q\ny\n", "--seed", "3", "--scoring", "english", "--rules",
                                   "jokers=2,placement=adjacent,first_cell=center", "--vs", "greedy")
    lines = out.out.splitlines()
    assert status == 0 and max(len(line) for line in lines) <= 80, lines
    assert lines[:3] == [
        "Poker Squares -- english points, seed 3, 2 joker(s), adjacent placement, first",
        "card on c3",
        "Against greedy: it places the same cards on its own board, hidden until the end.",  # 80: one line
    ]
    status, out = _play_in_process(monkeypatch, capsys, "q\ny\n", "--seed", "3", "--vs", "expectimax:ply=1")
    assert out.out.splitlines()[1:3] == [
        "Against expectimax:ply=1: it places the same cards on its own board, hidden",
        "until the end."]
    # a short title and --vs line stay one line each, as before
    status, out = _play_in_process(monkeypatch, capsys, "q\ny\n", "--seed", "3", "--vs", "random")
    assert out.out.splitlines()[:3] == [
        "Poker Squares -- american points, seed 3",
        "Against random: it places the same cards on its own board, hidden until the end.",
        "Columns a-e, rows 1-5 (c3 is the centre). h for help, q to quit."]


def test_a_record_appended_after_a_line_cut_inside_a_suit_symbol_is_counted_not_a_traceback(tmp_path, monkeypatch,
                                                                                           capsys):
    """A JSONL record file whose line was cut inside a suit symbol's bytes is accepted (docs/playing.md) and the game
    appended; counting its records afterwards read the file as strict UTF-8 and ended in a RecordError traceback."""
    from pokersquares_env.records import read_record

    record = tmp_path / "games.jsonl"
    status, out = _play_in_process(monkeypatch, capsys, "\n".join(CELLS) + "\n", "--seed", "3", "--record",
                                   str(record))
    assert status == 0, out.err
    data = record.read_bytes()
    cut = data.index("♥".encode()) + 1  # inside the symbol's three bytes
    record.write_bytes(data + data[:cut] + b"\n" + data)  # a cut write in the middle, then a later append
    status, out = _play_in_process(monkeypatch, capsys, "\n".join(CELLS) + "\n", "--seed", "6", "--record",
                                   str(record))
    assert status == 0 and "Traceback" not in out.err, out.err
    assert out.out.splitlines()[-1] == (f"Record appended to {record} as record 3 (pokersquares replay {record} "
                                        f"--index 3)")
    assert read_record(record, 3).seed == 6 and read_record(record, 2).seed == 3


@pytest.mark.parametrize("rules", ["first_cell=center", "first_cell=top-left", "placement=adjacent,first_cell=center"])
def test_a_refused_cell_is_told_in_lines_of_at_most_80_characters(monkeypatch, capsys, rules):
    """Every refusal the rules can give (a cell other than the first, then an occupied cell, then one that touches no
    placed card) keeps within the 80 columns of a turn; the first-cell refusal was one line of 85 to 87."""
    first = "c3" if "center" in rules else "a1"
    away = [c for c in ("a1", "e5", "a5", "e1") if c != first]
    moves = away + [first, first] + away[:1] + ["q", "y"]
    status, out = _play_in_process(monkeypatch, capsys, "\n".join(moves) + "\n", "--seed", "1", "--rules", rules)
    text = out.out
    assert status == 0 and "is not the first cell" in text and "is occupied by" in text, text
    assert ("touches no placed card" in text) == ("adjacent" in rules)
    assert max(len(line) for line in text.splitlines()) <= 80, text
    # the wrapped refusal still reads as one sentence: the cell it asks for follows on the next line
    want = "cell 12 (c3)" if first == "c3" else "cell 0 (a1)"
    assert f"is not the first cell: the first card must go on {want}" in " ".join(text.split()), text
