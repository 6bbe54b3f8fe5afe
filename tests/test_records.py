"""Game records: round trips, replays that reproduce the scores, corrupted records, the recording wrapper."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pokersquares_env  # noqa: F401  (registers the envs)
from helpers import needs
from pokersquares_env.core import PokerSquaresGame, Rules
from pokersquares_env.records import (
    GameRecord,
    RecordError,
    append_record,
    load_record,
    load_records,
    read_record,
    save_record,
)
from pokersquares_env.replay import print_replay
from pokersquares_env.wrappers import RecordGames

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def play_random(seed: int, rules: Rules | None = None, system: str = "american", moves: int = 25):
    """A game played by uniformly random legal cells."""
    game = PokerSquaresGame(rules or Rules(), system)
    rng = np.random.default_rng(seed)
    state = game.init(game.deal(rng))
    for _ in range(moves):
        cells = game.legal_cells(state)
        game.apply(state, cells[int(rng.integers(len(cells)))])
    return game, state


@pytest.fixture
def record_dict():
    game, state = play_random(11)
    return GameRecord.from_game(game, state, seed=11, agent="random").to_dict()


# ---- round trips ------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    jokers=st.sampled_from([0, 1, 2]),
    placement=st.sampled_from(["free", "adjacent"]),
    system=st.sampled_from(["american", "english"]),
    moves=st.integers(0, 25),
)
def test_round_trip_preserves_game(seed, jokers, placement, system, moves):
    rules = Rules(jokers=jokers, placement=placement, first_cell="center" if placement == "adjacent" else None)
    game, state = play_random(seed, rules, system, moves)
    record = GameRecord.from_game(game, state, seed=seed, agent="random", meta={"note": "x"})
    data = json.loads(json.dumps(record.to_dict(), ensure_ascii=False))
    back = GameRecord.from_dict(data)
    assert back.rules == rules
    assert back.system.points == game.system.points and back.system.name == game.system.name
    assert back.deck == list(state.deck) and back.placements == list(state.placements)
    assert back.seed == seed and back.agent == "random" and back.meta == {"note": "x"}
    assert back.to_dict() == data
    g2, s2 = back.replay()
    assert s2.board == state.board
    assert data["finished"] == (moves == 25)
    assert data["scores"]["american"] == game.score(state, "american")
    assert data["scores"]["english"] == game.score(state, "english")


def test_save_and_load_files(tmp_path):
    game, state = play_random(5)
    record = GameRecord.from_game(game, state, seed=5)
    path = tmp_path / "sub" / "game.json"
    save_record(record, path)
    assert load_record(path).to_dict() == record.to_dict()
    assert [p.name for p in (tmp_path / "sub").iterdir()] == ["game.json"]  # no temporary left behind


def test_saved_and_appended_records_are_ordinary_files(tmp_path):
    """save_record's temporary file is made 0600 by mkstemp; the saved record gets the usual umask permissions."""
    game, state = play_random(6)
    record = GameRecord.from_game(game, state)
    umask = os.umask(0o022)
    try:
        save_record(record, tmp_path / "game.json")
        append_record(record, tmp_path / "games.jsonl")
    finally:
        os.umask(umask)
    assert (tmp_path / "game.json").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "games.jsonl").stat().st_mode & 0o777 == 0o644


def test_saving_over_a_record_keeps_its_mode_and_a_link_stays_a_link(tmp_path):
    """Before, the atomic rename gave a replaced 0600 record the umask's 0644 and turned a symbolic link into a
    plain file (its target kept the old game)."""
    from pokersquares_env._files import write_json

    first, second = (GameRecord.from_game(*play_random(seed), seed=seed) for seed in (1, 2))
    private = tmp_path / "private.json"
    save_record(first, private)
    private.chmod(0o600)
    save_record(second, private)
    assert private.stat().st_mode & 0o777 == 0o600 and load_record(private).seed == 2
    target, link = tmp_path / "target.json", tmp_path / "link.json"
    save_record(first, target)
    link.symlink_to(target.name)
    save_record(second, link)
    assert link.is_symlink() and load_record(target).seed == 2 and load_record(link).seed == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "private.json", "target.json"]
    data = tmp_path / "data.json"  # the benchmarks' JSON outputs likewise
    write_json(str(data), {"a": 1})
    data.chmod(0o640)
    write_json(str(data), {"a": 2})
    assert data.stat().st_mode & 0o777 == 0o640 and json.loads(data.read_text()) == {"a": 2}


def test_append_record_adds_lines_to_an_existing_jsonl(tmp_path):
    path = tmp_path / "games.jsonl"
    records = [GameRecord.from_game(*play_random(seed), seed=seed) for seed in (1, 2, 3)]
    for record in records:
        append_record(record, path)
    assert path.read_text(encoding="utf-8").count("\n") == 3
    assert [r.to_dict() for r in load_records(path)] == [r.to_dict() for r in records]


# ---- replays ------------------------------------------------------------------------


@pytest.mark.parametrize("system", ["american", "english"])
def test_replay_reproduces_scores(tmp_path, system):
    game, state = play_random(21, system=system)
    record = GameRecord.from_game(game, state, seed=21)
    path = tmp_path / "g.json"
    save_record(record, path)
    loaded = load_record(path)
    g2, s2 = loaded.replay()
    data = json.loads(path.read_text(encoding="utf-8"))
    assert g2.score(s2) == data["score"]
    assert {"american": g2.score(s2, "american"), "english": g2.score(s2, "english")} == data["scores"]
    # The printed replay ends with both scores, and its running total reaches the score.
    import io

    buf = io.StringIO()
    print_replay(loaded, buf)
    text = buf.getvalue()
    fmt = lambda v: str(int(v)) if float(v).is_integer() else f"{v:.2f}"  # noqa: E731
    assert f"Scores: american {fmt(data['scores']['american'])}, english {fmt(data['scores']['english'])}" in text
    moves = [line for line in text.splitlines() if re.match(r"\s*\d+\. ", line)]
    assert len(moves) == 25
    assert moves[-1].endswith(f"total {fmt(data['score'])}")


@needs("PIL")
def test_replay_cli_text_gif_png(tmp_path):
    game, state = play_random(3)
    path = tmp_path / "g.json"
    save_record(GameRecord.from_game(game, state, seed=3, agent="random"), path)
    gif, png = tmp_path / "out.gif", tmp_path / "out.png"
    proc = subprocess.run(
        [sys.executable, "-m", "pokersquares_env", "replay", str(path), "--gif", str(gif), "--png", str(png)],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    from PIL import Image

    with Image.open(gif) as im:
        assert im.n_frames == 26
        assert im.size == (720, 592)
    with Image.open(png) as im:
        assert im.size == (720, 592)


def test_replay_jsonl_index(tmp_path, capsys):
    from pokersquares_env.records import append_record
    from pokersquares_env.replay import load

    path = tmp_path / "games.jsonl"
    records = []
    for seed in (1, 2):
        game, state = play_random(seed)
        records.append(GameRecord.from_game(game, state, seed=seed))
        append_record(records[-1], path)
    assert load(str(path), 1).seed == 2
    assert load(str(path), -2).seed == 1 and load(str(path), -1).seed == 2  # negative indices count from the end
    for out in (2, -3):
        with pytest.raises(RecordError, match="out of range"):
            load(str(path), out)
    single = tmp_path / "one.json"
    save_record(records[0], single)
    assert load(str(single)).seed == 1
    with pytest.raises(RecordError, match=r"--index 1 is out of range: the file holds one record \(a JSON object\)"):
        load(str(single), 1)
    assert load(str(single), -1).seed == 1


def test_a_damaged_jsonl_line_hides_no_other_record(tmp_path):
    """A JSONL file whose last write was cut short used to refuse every record in it: replay now parses only the
    line asked for, and load_records(skip_bad=True) reads the others with a warning naming the damaged line."""
    from pokersquares_env.records import append_record, read_record

    path = tmp_path / "games.jsonl"
    for seed in (1, 2, 3):
        game, state = play_random(seed)
        append_record(GameRecord.from_game(game, state, seed=seed), path)
    text = path.read_text()
    path.write_text(text[:-200])  # the last line cut short
    before = path.read_bytes()
    assert read_record(path, 0).seed == 1 and read_record(path, 1).seed == 2
    _assert_only_line_3_is_refused(path, "not valid JSON")
    game, state = play_random(4)
    append_record(GameRecord.from_game(game, state, seed=4), path)  # starts a new line after the cut one
    assert read_record(path, -1).seed == 4 and path.read_bytes().startswith(before)


def _assert_only_line_3_is_refused(path, why: str) -> None:
    """Line 3 of the JSONL file ``path`` is refused for ``why`` by read_record and load_records; skip_bad keeps the
    records of seeds 1 and 2, with a warning naming the line."""
    with pytest.raises(RecordError, match=rf"games.jsonl:3: {why}"):
        read_record(path, 2)
    with pytest.raises(RecordError, match=rf"games.jsonl:3: {why}"):
        load_records(path)
    with pytest.warns(RuntimeWarning, match=rf"skipped a damaged record: .*games.jsonl:3: {why}"):
        assert [r.seed for r in load_records(path, skip_bad=True)] == [1, 2]


def test_a_jsonl_line_cut_inside_a_suit_symbol_hides_no_other_record(tmp_path):
    """An audit found a write cut short in the middle of a multi-byte suit symbol made the whole file "not UTF-8
    text": only that line is damaged; a bad byte in a single-record file still refuses the file."""
    path = tmp_path / "games.jsonl"
    for seed in (1, 2):
        game, state = play_random(seed)
        append_record(GameRecord.from_game(game, state, seed=seed), path)
    data = path.read_bytes()
    cut = data.index("♠".encode()) + 1
    path.write_bytes(data + data[:cut])  # a third line, cut inside the symbol's bytes
    assert read_record(path, 0).seed == 1 and read_record(path, -2).seed == 2
    _assert_only_line_3_is_refused(path, "not UTF-8 text")
    # the damaged bytes in the middle of an otherwise whole line: that line only
    middle = data.index("♠".encode())
    path.write_bytes(data[:middle] + b"\xff" + data[middle + 1:])
    with pytest.raises(RecordError, match=r"games.jsonl:1: not UTF-8 text"):
        read_record(path, 0)
    assert read_record(path, 1).seed == 2
    single = tmp_path / "one.json"
    save_record(GameRecord.from_game(*play_random(3), seed=3), single)
    text = single.read_bytes()
    single.write_bytes(text[:20] + b"\xff" + text[20:])
    for read in (read_record, load_record):
        with pytest.raises(RecordError, match=r"one.json: not UTF-8 text"):
            read(single)


def test_a_record_file_is_told_by_its_content(tmp_path):
    """A pretty-printed record saved under a .jsonl name (as `play --record x.jsonl` used to write) and a .JSONL
    name in capitals used to be refused or misread by replay's extension check."""
    from pokersquares_env.records import append_record, read_record

    game, state = play_random(5)
    record = GameRecord.from_game(game, state, seed=5)
    save_record(record, tmp_path / "one.jsonl")
    assert read_record(tmp_path / "one.jsonl").seed == 5
    append_record(record, tmp_path / "MANY.JSONL")
    append_record(record, tmp_path / "MANY.JSONL")
    assert read_record(tmp_path / "MANY.JSONL", 1).seed == 5
    (tmp_path / "bad.json").write_text('{"format": ')
    with pytest.raises(RecordError, match=r"bad.json: not valid JSON \(line 1, column 12\)"):
        read_record(tmp_path / "bad.json")
    with pytest.raises(RecordError, match=r"index '1': expected an integer"):
        read_record(tmp_path / "one.jsonl", "1")


def test_huge_integers_in_a_record_are_record_errors(tmp_path):
    """An integer of more digits than Python converts (4,300) was an unhandled ValueError when reading, and a
    huge seed was blamed on 'meta' when writing."""
    from pokersquares_env.records import MAX_SEED_BITS, load_records, read_record

    game, state = play_random(6)
    data = GameRecord.from_game(game, state, seed=6).to_dict()
    text = json.dumps(data).replace('"seed": 6', '"seed": ' + "9" * 5000)
    (tmp_path / "big.json").write_text(text)
    (tmp_path / "big.jsonl").write_text(text + "\n")
    with pytest.raises(RecordError, match=r"big.json: cannot be read as JSON \(.*4300"):
        load_record(tmp_path / "big.json")
    with pytest.raises(RecordError, match=r"big.json: cannot be read as JSON"):
        read_record(tmp_path / "big.json")
    with pytest.raises(RecordError, match=r"big.jsonl:1: cannot be read as JSON"):
        load_records(tmp_path / "big.jsonl")
    with pytest.raises(RecordError, match=rf"field 'seed': an integer of 1,025 bits: expected at most {MAX_SEED_BITS}"):
        GameRecord.from_game(game, state, seed=2**1024)
    record = GameRecord.from_game(game, state, seed=6)
    record.seed = 10**5000
    with pytest.raises(RecordError, match=r"field 'seed': an integer of"):
        save_record(record, tmp_path / "out.json")
    assert not (tmp_path / "out.json").exists()


def test_saving_a_record_with_an_illegal_move_names_the_move(tmp_path):
    """save_record raised the core's IllegalActionError without the move's place, while its docstring promises a
    RecordError naming the field."""
    game, state = play_random(7)
    record = GameRecord.from_game(game, state, seed=7)
    save_record(record, tmp_path / "keep.json")
    before = (tmp_path / "keep.json").read_bytes()
    record.placements[3] = record.placements[2]
    with pytest.raises(RecordError, match=r"field 'placements\[3\]': move 4 cannot be played: cell .* is occupied"):
        save_record(record, tmp_path / "keep.json")
    assert (tmp_path / "keep.json").read_bytes() == before


def test_meta_keys_must_be_strings(tmp_path):
    """meta={1: 'a'} saved silently and loaded back as {'1': 'a'}."""
    game, state = play_random(8)
    for meta, where in (({1: "a"}, "meta"), ({"x": [{"ok": 1}, {2: 0}]}, "meta.x[1]")):
        record = GameRecord.from_game(game, state, meta=meta)
        with pytest.raises(RecordError, match=rf"field '{re.escape(where)}': key .* expected string keys"):
            save_record(record, tmp_path / "m.json")
    assert not (tmp_path / "m.json").exists()


@needs("PIL")
def test_gif_frame_rate_must_be_finite(tmp_path):
    from pokersquares_env.replay import save_gif

    game, state = play_random(2)
    for fps in (0, -1, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="expected a positive finite number"):
            save_gif(GameRecord.from_game(game, state), str(tmp_path / "x.gif"), fps)
    assert not (tmp_path / "x.gif").exists()


@pytest.mark.parametrize(
    "options, message",
    [
        (["--gif", "{tmp}/missing/a.gif"], "--gif '{tmp}/missing/a.gif': the folder '{tmp}/missing' does not exist"),
        (["--png", "{tmp}/missing/a.png"], "--png '{tmp}/missing/a.png': the folder '{tmp}/missing' does not exist"),
        (["--gif", "{tmp}"], "--gif '{tmp}' is a folder: expected a file path"),
        (["--gif", "{tmp}/out.png"], "--gif '{tmp}/out.png' does not end in .gif"),
        (["--png", "{tmp}/out.gif"], "--png '{tmp}/out.gif' does not end in .png"),
        (["--png", "{tmp}/out.jpg"], "--png '{tmp}/out.jpg' does not end in .png"),
        (["--fps", "5"], "--fps needs --gif"),
        (["--png", "{tmp}/out.png", "--fps", "5"], "--fps needs --gif"),
        (["--png", "{tmp}/out.png", "--boards"], "--boards prints the board after every move in the text replay"),
        (["--gif", "{tmp}/out.gif", "--boards"], "--boards prints the board after every move in the text replay"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else None,
)
@needs("PIL")
def test_replay_refuses_a_bad_output_path_before_any_work(tmp_path, capsys, options, message):
    """Before, a missing folder was created, a folder gave an error naming a temporary file, GIF data went into a
    .png file (and PNG into .gif), and --fps without --gif and --boards with --gif or --png were ignored."""
    from pokersquares_env.cli import main

    game, state = play_random(4)
    record = tmp_path / "g.json"
    save_record(GameRecord.from_game(game, state, seed=4), record)
    tmp = str(tmp_path)
    status = main(["replay", str(record), *(o.format(tmp=tmp) for o in options)])
    captured = capsys.readouterr()
    assert status == 2 and captured.out == ""
    assert captured.err.startswith(f"pokersquares replay: {message.format(tmp=tmp)}")
    assert captured.err.count("\n") == 1 and ".replay-" not in captured.err
    assert sorted(os.listdir(tmp_path)) == ["g.json"]  # no folder made, no image written


@needs("PIL")
def test_saving_an_image_names_the_path_asked_for(tmp_path):
    from pokersquares_env.replay import save_png

    game, state = play_random(4)
    record = GameRecord.from_game(game, state)
    with pytest.raises(FileNotFoundError, match="no such folder: '.*missing'"):
        save_png(record, str(tmp_path / "missing" / "x.png"))
    with pytest.raises(IsADirectoryError, match=f"is a folder: expected a file path: '{re.escape(str(tmp_path))}'"):
        save_png(record, str(tmp_path))
    assert os.listdir(tmp_path) == []


@needs("PIL")
def test_replay_gif_frame_rate_and_upper_case_extension(tmp_path, capsys):
    from PIL import Image

    from pokersquares_env.cli import main

    game, state = play_random(4)
    record = tmp_path / "g.json"
    save_record(GameRecord.from_game(game, state, seed=4), record)
    assert main(["replay", str(record), "--gif", str(tmp_path / "a.GIF"), "--fps", "4"]) == 0
    with Image.open(tmp_path / "a.GIF") as im:
        assert im.format == "GIF" and im.info["duration"] == 250


# ---- corrupted records ----------------------------------------------------------------


def _write(tmp_path, data, name="bad.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_bad_json_rejected(tmp_path):
    path = _write(tmp_path, '{"format": "pokersquares-record", "version": 1,')
    with pytest.raises(RecordError, match="not valid JSON"):
        load_record(path)


def test_wrong_version_rejected(tmp_path, record_dict):
    record_dict["version"] = 99
    with pytest.raises(RecordError, match="field 'version'.*99"):
        load_record(_write(tmp_path, record_dict))


def test_bad_card_rejected(tmp_path, record_dict):
    record_dict["deck"][4] = "Z♠"
    with pytest.raises(RecordError, match=r"field 'deck\[4\]'.*Z♠"):
        load_record(_write(tmp_path, record_dict))


@pytest.mark.parametrize("value, message", [(9.5, "9.5 is not a card"), (True, "True is not a card"),
                                            (99, "card code 99 out of range: expected 0..53"),
                                            (54, "card code 54 out of range: expected 0..53")])
def test_non_card_numbers_rejected(record_dict, value, message):
    bad = json.loads(json.dumps(record_dict))
    bad["deck"][0] = value
    with pytest.raises(RecordError, match=rf"field 'deck\[0\]': {message}"):
        GameRecord.from_dict(bad)
    record_dict["placements"][0]["card"] = value
    with pytest.raises(RecordError, match=rf"field 'placements\[0\]\.card': move 1: {message}"):
        GameRecord.from_dict(record_dict)


@pytest.mark.parametrize("version", [True, 1.0, "1"])
def test_version_must_be_the_integer(record_dict, version):
    record_dict["version"] = version
    with pytest.raises(RecordError, match="field 'version'"):
        GameRecord.from_dict(record_dict)


def test_a_point_system_path_in_a_record_is_not_opened(tmp_path, record_dict):
    table = tmp_path / "table.json"
    table.write_text(json.dumps(record_dict["point_system"]))
    record_dict["point_system"] = str(table)
    with pytest.raises(RecordError, match="field 'point_system'.*does not read other files"):
        GameRecord.from_dict(record_dict)
    record_dict["point_system"] = "American"
    assert GameRecord.from_dict(record_dict).system.name == "american"


def test_jsonl_that_is_not_utf8_is_a_record_error(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"\xff\n")
    with pytest.raises(RecordError, match="x.jsonl:1: not UTF-8"):  # the line holding the bytes is named
        load_records(path)
    path.write_text('\n{"format": 1,}\n')
    with pytest.raises(RecordError, match=r"x.jsonl:2: not valid JSON \(column"):
        load_records(path)


@pytest.mark.parametrize("field, value, message", [("seed", True, "expected a non-negative integer or null"),
                                                   ("seed", 1.5, "expected a non-negative integer or null"),
                                                   ("seed", -5, "expected a non-negative integer or null"),
                                                   ("meta", [1, 2], "expected an object"),
                                                   ("meta", False, "expected an object or null, got False"),
                                                   ("agent", [1, 2], "expected a string or null"),
                                                   ("game", "Soliter-v0", "expected 'PokerSquares-v0'")])
def test_seed_and_meta_of_the_wrong_type_rejected(record_dict, field, value, message):
    record_dict[field] = value
    with pytest.raises(RecordError, match=f"field '{field}'.*{message}"):
        GameRecord.from_dict(record_dict)


def test_more_placements_than_cards_rejected(record_dict):
    record_dict["deck"] = record_dict["deck"][:25]
    record_dict["placements"].append({"cell": "a1"})
    with pytest.raises(RecordError, match=r"placements\[25\].*move 26: the deck has only 25 cards"):
        GameRecord.from_dict(record_dict)


def test_card_not_dealt_rejected(record_dict):
    record_dict["placements"][2]["card"] = record_dict["deck"][7]
    with pytest.raises(RecordError, match=r"placements\[2\]\.card.*move 3"):
        GameRecord.from_dict(record_dict)


def test_illegal_placement_names_move(record_dict):
    record_dict["placements"][6]["cell"] = record_dict["placements"][2]["cell"]  # an occupied cell
    with pytest.raises(RecordError, match=r"placements\[6\]\.cell.*illegal placement at move 7.*occupied"):
        GameRecord.from_dict(record_dict)


def test_malformed_cell_rejected(record_dict):
    record_dict["placements"][0]["cell"] = "z9"
    with pytest.raises(RecordError, match=r"placements\[0\]\.cell.*move 1"):
        GameRecord.from_dict(record_dict)


@pytest.mark.parametrize("field", ["score", "scores", "board", "hands", "finished"])
def test_tampered_results_rejected(record_dict, field):
    if field == "finished":
        record_dict["finished"] = not record_dict["finished"]
    elif field == "score":
        record_dict["score"] += 100
    elif field == "scores":
        record_dict["scores"]["english"] += 1
    elif field == "board":
        record_dict["board"][0], record_dict["board"][1] = record_dict["board"][1], record_dict["board"][0]
    else:
        record_dict["hands"][0] = "royal_flush" if record_dict["hands"][0] != "royal_flush" else "one_pair"
    with pytest.raises(RecordError, match=f"field '{field}'.*placements give"):
        GameRecord.from_dict(record_dict)


def test_a_stored_true_or_false_is_not_a_score_of_one_or_zero(record_dict):
    """An audit found "score": false accepted for a score of 0 (Python's False == 0); a number stored as a float of
    the same value (20.0 for 20) is still the same number."""
    rec = GameRecord.from_dict(record_dict)
    partial = GameRecord(rec.rules, rec.system, rec.deck, rec.placements[:2], seed=11).to_dict()
    assert partial["score"] == 0 and partial["scores"] == {"american": 0, "english": 0}
    for field, value in (("score", False), ("scores", {"american": False, "english": 0})):
        with pytest.raises(RecordError, match=f"field '{field}'.*the record says .*False.* but its placements give"):
            GameRecord.from_dict({**partial, field: value})
    assert GameRecord.from_dict({**partial, "score": 0.0}).placements == rec.placements[:2]
    with pytest.raises(RecordError, match="field 'finished'"):
        GameRecord.from_dict({**partial, "finished": 0})


def test_replay_cli_bad_record_exit_2_no_traceback(tmp_path, record_dict):
    record_dict["score"] = 12345
    path = _write(tmp_path, record_dict)
    proc = subprocess.run(
        [sys.executable, "-m", "pokersquares_env", "replay", str(path)],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "field 'score'" in proc.stderr and "12345" in proc.stderr
    assert proc.stdout == ""


# ---- the recording wrapper -----------------------------------------------------------------


def test_record_games_wrapper_records_every_episode(tmp_path):
    env = RecordGames(gym.make("PokerSquares-v0", scoring="english"), tmp_path / "games", jsonl=True, agent="random")
    rng = np.random.default_rng(0)
    finals = []
    for episode in range(3):
        obs, info = env.reset(seed=100 + episode if episode != 1 else None)
        done = False
        while not done:
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            obs, reward, done, truncated, info = env.step(action)
        finals.append(info)
    env.close()
    files = sorted(os.listdir(tmp_path / "games"))
    assert files == ["game-000000.json", "game-000001.json", "game-000002.json", "games.jsonl"]
    lines = load_records(tmp_path / "games" / "games.jsonl")
    for episode, info in enumerate(finals):
        record = load_record(info["record_path"])
        assert info["record_path"].endswith(files[episode])
        assert record.seed == (100 + episode if episode != 1 else None)
        assert record.agent == "random" and record.meta["episode"] == episode
        game, state = record.replay()
        assert game.system.name == "english"
        assert state.board == info["board"] and state.placements == info["placements"]
        assert game.score(state) == info["score"]
        assert lines[episode].to_dict() == record.to_dict()


def test_record_games_seeded_record_replays_env_deck(tmp_path):
    env = RecordGames(gym.make("PokerSquares-v0"), tmp_path, episode_trigger=lambda e: e == 1)
    for episode in range(2):
        obs, info = env.reset(seed=9)
        done = False
        while not done:
            obs, r, done, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        assert ("record_path" in info) == (episode == 1)
    record = load_record(info["record_path"])
    fresh = PokerSquaresGame()
    assert tuple(record.deck) == fresh.deal(np.random.default_rng(9))  # the seed reproduces the deck


def test_record_games_illegal_penalty_episode(tmp_path):
    env = RecordGames(gym.make("PokerSquares-v0", illegal_action="penalty"), tmp_path)
    env.reset(seed=1)
    env.step(0)
    _, _, done, _, info = env.step(0)  # occupied: the episode ends
    assert done
    record = load_record(info["record_path"])
    assert record.placements == [0] and record.meta["illegal_action"].startswith("cell 0")
    assert record.to_dict()["finished"] is False


def test_record_games_rejects_other_envs(tmp_path):
    with pytest.raises(TypeError, match="Poker Squares env"):
        RecordGames(gym.make("CartPole-v1"), tmp_path)
    with pytest.raises(ValueError, match="record nothing"):
        RecordGames(gym.make("PokerSquares-v0"), tmp_path, json_files=False)
    with pytest.raises(TypeError, match="Poker Squares env.*SoliterEnv"):  # it has .game and .state, of another game
        RecordGames(gym.make("Soliter-v0", illegal_action="penalty"), tmp_path / "soliter")


def test_record_games_checks_meta_and_paths_before_any_episode(tmp_path):
    with pytest.raises(TypeError, match=r"meta=\{'s': \{1, 2\}\}: expected JSON-ready values"):
        RecordGames(gym.make("PokerSquares-v0"), tmp_path, meta={"s": {1, 2}})
    with pytest.raises(TypeError, match=r"without NaN or infinity"):  # refused now, not at the first episode's end
        RecordGames(gym.make("PokerSquares-v0"), tmp_path, meta={"lr": float("nan")})
    (tmp_path / "folder.jsonl").mkdir()
    with pytest.raises(ValueError, match="folder.jsonl' is a folder"):
        RecordGames(gym.make("PokerSquares-v0"), tmp_path, jsonl=tmp_path / "folder.jsonl")
    (tmp_path / "afile").write_text("keep")
    with pytest.raises(ValueError, match="afile'.*cannot create it"):
        RecordGames(gym.make("PokerSquares-v0"), tmp_path / "afile")
    assert (tmp_path / "afile").read_text() == "keep"



@pytest.mark.parametrize("meta, where, key", [({"run": {1: "a"}}, "meta.run", "1"), ({1: 2}, "meta", "1"),
                                              ({"a": [{"b": {2.5: 1}}]}, "meta.a[0].b", "2.5")])
def test_record_games_refuses_meta_with_keys_json_would_turn_into_strings_before_any_episode(tmp_path, meta, where,
                                                                                             key):
    """Before, json.dumps took ``{1: ...}`` (writing it as ``{"1": ...}``), so the wrapper was made, and the first
    episode's last step raised the RecordError of the record's save, losing that step's return and the record."""
    with pytest.raises(TypeError, match=re.escape(f"RecordGames meta: field {where!r}: key {key} is of type")):
        RecordGames(gym.make("PokerSquares-v0"), tmp_path / "games", meta=meta)
    assert not (tmp_path / "games").exists()


def test_two_jokers_round_trip_and_plain_jk_text():
    rules = Rules(jokers=2)
    game = PokerSquaresGame(rules)
    deck = [53, 52] + [c for c in range(52)]
    state = game.init(deck)
    for cell in range(25):
        game.apply(state, cell)
    data = GameRecord.from_game(game, state).to_dict()
    assert data["deck"][:2] == ["JK2", "JK1"]
    assert GameRecord.from_dict(data).deck == deck  # exact, joker identities included
    # Records that write both jokers as "JK" still load: successive jokers get successive codes.
    plain = json.loads(json.dumps(data).replace('"JK1"', '"JK"').replace('"JK2"', '"JK"'))
    back = GameRecord.from_dict(plain)
    assert back.deck[:2] == [52, 53] and back.replay()[0].score(back.replay()[1]) == data["score"]


def test_record_games_on_poker_shuffle_arrange(tmp_path):
    env = RecordGames(gym.make("PokerShuffle-v0", mode="arrange"), tmp_path)
    obs, info = env.reset(seed=4)
    done = False
    while not done:
        obs, r, done, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
    record = load_record(info["record_path"])
    game, state = record.replay()
    assert record.meta["env"] == "PokerShuffle-v0"
    assert state.board == info["board"] and game.score(state) == info["score"]


def test_record_games_names_files_by_episode_when_a_trigger_skips_some(tmp_path):
    env = RecordGames(gym.make("PokerSquares-v0"), tmp_path, jsonl=True, episode_trigger=lambda e: e % 2 == 1)
    paths = []
    for episode in range(4):
        obs, info = env.reset(seed=episode)
        done = False
        while not done:
            obs, r, done, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        paths.append(info.get("record_path"))
    assert paths[0] is None and paths[2] is None
    assert os.path.basename(paths[1]) == "game-000001.json" and os.path.basename(paths[3]) == "game-000003.json"
    assert sorted(os.listdir(tmp_path)) == ["game-000001.json", "game-000003.json", "games.jsonl"]
    assert env.recorded == paths[1::2]
    assert [r.meta["episode"] for r in load_records(tmp_path / "games.jsonl")] == [1, 3]
    assert [r.seed for r in load_records(tmp_path / "games.jsonl")] == [1, 3]


def test_record_games_keeps_an_env_name_given_in_meta(tmp_path):
    """meta["env"] is the env id only when the caller's meta does not name the env itself."""
    env = RecordGames(gym.make("PokerSquares-v0"), tmp_path, meta={"env": "my-variant", "run": 7})
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        obs, r, done, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    record = load_record(info["record_path"])
    assert record.meta == {"env": "my-variant", "run": 7, "episode": 0}
    plain = RecordGames(gym.make("PokerSquares-v0"), tmp_path / "plain")
    obs, info = plain.reset(seed=0)
    done = False
    while not done:
        obs, r, done, trunc, info = plain.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert load_record(info["record_path"]).meta == {"env": "PokerSquares-v0", "episode": 0}


def _play_out(env, info, pick=lambda mask: int(np.flatnonzero(mask)[0])):
    done = False
    while not done:
        _, _, done, _, info = env.step(pick(info["action_mask"]))
    return info


def test_swap_mode_record_keeps_the_deal_and_the_swaps_and_replay_says_so(tmp_path):
    """A swap-mode record's placements only lay out the final board; meta holds the deal and the swaps."""
    from io import StringIO

    from pokersquares_env.cards import parse_card
    from pokersquares_env.shuffle import swap_action
    from pokersquares_env.shuffle.env import layout_state

    env = RecordGames(gym.make("PokerShuffle-v0", mode="swap", budget=2), tmp_path)
    _, info = env.reset(seed=3)
    dealt = list(env.unwrapped.cards)
    env.step(swap_action(0, 5))
    _, _, done, _, info = env.step(swap_action(1, 2))
    assert done
    record = load_record(info["record_path"])
    assert record.meta["mode"] == "swap" and record.meta["swaps"] == [[0, 5], [1, 2]]
    assert [parse_card(c) for c in record.meta["dealt"]] == dealt
    # The swaps replayed on the dealt layout give the recorded board, and the dealt layout's score.
    board = list(dealt)
    for i, j in record.meta["swaps"]:
        board[i], board[j] = board[j], board[i]
    game, state = record.replay()
    assert state.board == board == info["board"]
    assert record.meta["dealt_score"] == game.score(layout_state(game, dealt)) == info["dealt_score"]
    out = StringIO()
    print_replay(record, out)
    text = out.getvalue()
    assert "recorded from PokerShuffle-v0 (swap mode)" in text.splitlines()[0]
    assert f"the dealt layout scored {info['dealt_score']:g}; swaps a1<->a2, b1<->c1." in text


def test_arrange_mode_record_names_its_mode_and_keeps_the_dealt_cards(tmp_path):
    from pokersquares_env.cards import parse_card

    env = RecordGames(gym.make("PokerShuffle-v0", mode="arrange"), tmp_path)
    _, info = env.reset(seed=4)
    dealt = list(env.unwrapped.cards)
    info = _play_out(env, info, pick=lambda mask: int(np.flatnonzero(mask)[-1]))
    record = load_record(info["record_path"])
    assert record.meta["mode"] == "arrange" and "swaps" not in record.meta
    assert sorted(parse_card(c) for c in record.meta["dealt"]) == sorted(dealt)
    with pytest.raises(gym.error.ResetNeeded):
        gym.make("PokerShuffle-v0").unwrapped.game_record()


def test_replay_says_why_a_game_ended_early(tmp_path):
    from io import StringIO

    env = RecordGames(gym.make("PokerSquares-v0", illegal_action="penalty"), tmp_path)
    env.reset(seed=1)
    _, _, done, _, info = env.step(-3)  # out of range before any card is placed
    out = StringIO()
    print_replay(load_record(info["record_path"]), out)
    assert out.getvalue().splitlines()[1:] == ["(no moves)", f"Ended by an illegal action: {info['illegal_action']}"]
    env.reset(seed=1)
    env.step(0)
    _, _, done, _, info = env.step(0)
    out = StringIO()
    print_replay(load_record(info["record_path"]), out)
    assert out.getvalue().splitlines()[-1] == "Ended by an illegal action: cell 0 (a1) is occupied by J♣"
    game, state = play_random(2, moves=3)
    record = GameRecord.from_game(game, state, meta={"deal": 17, "eval_seed": 2024, "error": "RuntimeError: boom"})
    out = StringIO()
    print_replay(record, out)
    lines = out.getvalue().splitlines()
    assert lines[0].endswith("american points, deal 17 of evaluation seed 2024")
    assert lines[-1] == "Ended by an error: RuntimeError: boom"



@pytest.mark.parametrize("change, message", [
    (dict(seed=1.5), "field 'seed'"), (dict(seed="7"), "field 'seed'"), (dict(agent=3), "field 'agent'"),
    (dict(meta=[1]), "field 'meta'"), (dict(meta={"x": float("nan")}), "field 'meta': not JSON-ready"),
    (dict(meta={"x": {1, 2}}), "field 'meta': not JSON-ready"),
])
def test_a_record_that_would_not_load_back_is_never_written(tmp_path, change, message):
    """save_record and append_record check the record (as loading would) before touching the file, even when
    its fields were changed after it was made; a record made with such fields is refused at once."""
    game, state = play_random(3)
    good = GameRecord.from_game(game, state, seed=3)
    path, lines = tmp_path / "r.json", tmp_path / "r.jsonl"
    save_record(good, path)
    append_record(good, lines)
    before = path.read_bytes(), lines.read_bytes()
    bad = GameRecord.from_game(game, state, seed=3)
    for key, value in change.items():
        setattr(bad, key, value)
    with pytest.raises(RecordError, match=message):
        save_record(bad, path)
    with pytest.raises(RecordError, match=message):
        append_record(bad, lines)
    assert (path.read_bytes(), lines.read_bytes()) == before
    assert sorted(os.listdir(tmp_path)) == ["r.json", "r.jsonl"]  # no temp file left
    if "not JSON-ready" not in message:  # the type checks also run when a record is made
        with pytest.raises(RecordError, match=message):
            GameRecord(good.rules, good.system, good.deck, good.placements, **{"seed": 3, **change})


def test_a_record_takes_a_numpy_seed_as_an_int():
    game, state = play_random(3)
    record = GameRecord(game.rules, game.system, list(state.deck), list(state.placements), seed=np.int64(3))
    assert type(record.seed) is int and json.loads(json.dumps(record.to_dict()))["seed"] == 3


@pytest.mark.parametrize("content, named", [
    (None, "a .json file holds one game record"),  # a pretty-printed single record (save_record's .json)
    ("compact", "a .json file holds one game record"),  # a single record on one line, which is JSONL-like
    (b"\x00\xff\xfegarbage\n", "not UTF-8"),
    (b"hello world\n", "not valid JSON"),
    (b"\n\n[1, 2]\n", "line 3"),  # JSON, but not a record: named by its line
    (b'{"format": "pokersquares-record", "ver\nhello\n', "line 2: not valid JSON"),  # a cut line, then no record
])
def test_append_record_refuses_a_file_that_is_not_jsonl_records_and_leaves_it(tmp_path, content, named):
    """Before, append_record added a line to any file: to a .json record (which replay then refused: "Extra data"),
    also one written on one line (only a pretty-printed one was refused), or to binary garbage."""
    record = GameRecord.from_game(*play_random(8), seed=8)
    path = tmp_path / ("target.jsonl" if isinstance(content, bytes) else "target.json")
    if content is None:
        save_record(record, path)
    elif content == "compact":
        path.write_text(json.dumps(record.to_dict()))
    else:
        path.write_bytes(content)
    before = path.read_bytes()
    with pytest.raises(RecordError, match=re.escape(named)) as caught:
        append_record(record, path)
    assert str(path) in str(caught.value) and "expected " in str(caught.value)
    assert ("expected a JSONL file of game records" if isinstance(content, bytes) else "expected the name of a .jsonl"
            ) in str(caught.value)
    assert path.read_bytes() == before
    with pytest.raises(RecordError, match="a .json file holds one game record"):  # nor a new file of that name
        append_record(record, tmp_path / "new.JSON")
    assert not (tmp_path / "new.JSON").exists()
    blank = tmp_path / "blank.jsonl"  # empty or blank lines only: a new JSONL file
    blank.write_text("\n \n")
    append_record(record, blank)
    append_record(record, blank)
    assert [r.seed for r in load_records(blank)] == [8, 8]


def test_append_after_a_cut_short_line_starts_a_new_line(tmp_path):
    game, state = play_random(4)
    record = GameRecord.from_game(game, state, seed=4)
    path = tmp_path / "games.jsonl"
    append_record(record, path)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record.to_dict())[:100])  # a write cut short: no newline
    append_record(record, path)
    lines = path.read_text(encoding="utf-8").split("\n")
    assert len(lines) == 4 and lines[-1] == ""
    assert GameRecord.from_dict(json.loads(lines[2])).seed == 4  # the new record is whole, on its own line
    with pytest.raises(RecordError, match=r"games.jsonl:2: not valid JSON"):  # the damaged line is still named
        load_records(path)


@pytest.mark.parametrize("cut", [2, 10, 33, 100, None])
def test_append_after_a_cut_short_first_line_starts_a_new_line(tmp_path, cut):
    """An audit found that a file whose first record's write was cut short could never be appended to again (its
    first line was not a record), though a cut later line was survivable; a RecordGames log or a play --record file
    ended that way.  `cut=None`: the whole record without its newline (the write lost only that)."""
    game, state = play_random(4)
    record = GameRecord.from_game(game, state, seed=4)
    path = tmp_path / "games.jsonl"
    text = json.dumps(record.to_dict(), ensure_ascii=False)
    path.write_text(text[:cut], encoding="utf-8")
    append_record(record, path)
    lines = path.read_text(encoding="utf-8").split("\n")
    assert len(lines) == 3 and lines[0] == text[:cut] and lines[-1] == ""
    assert GameRecord.from_dict(json.loads(lines[1])).seed == 4
    if cut is None:
        assert len(load_records(path)) == 2
    else:  # the cut line is skipped, and said to be
        with pytest.warns(RuntimeWarning, match=r"skipped a damaged record: .*games.jsonl:1: not valid JSON"):
            assert len(load_records(path, skip_bad=True)) == 1
    RecordGames(gym.make("PokerSquares-v0"), tmp_path / "games", jsonl=path)  # the wrapper takes it too


@pytest.mark.parametrize("after", [b"", b"\n", "whole"])
def test_append_after_a_line_cut_inside_a_suit_symbol_starts_a_new_line(tmp_path, after):
    """As docs/playing.md says: before, a first line cut inside a suit symbol's UTF-8 bytes (alone, or with whole
    records after it) made append_record refuse the file as "not UTF-8 text", though load_records read past it."""
    game, state = play_random(4)
    record = GameRecord.from_game(game, state, seed=4)
    line = json.dumps(record.to_dict(), ensure_ascii=False).encode("utf-8")
    cut = line[:line.index("♣".encode("utf-8")) + 1] if "♣".encode("utf-8") in line else \
        line[:line.index("♠".encode("utf-8")) + 1]
    path = tmp_path / "games.jsonl"
    path.write_bytes(cut + (b"\n" + line + b"\n" if after == "whole" else after))
    append_record(record, path)
    with pytest.warns(RuntimeWarning, match=r"skipped a damaged record: .*games.jsonl:1: not UTF-8 text"):
        records = load_records(path, skip_bad=True)
    assert [r.seed for r in records] == ([4, 4] if after == "whole" else [4])
    # a line that is not text elsewhere than a cut at its end is still refused, and the file kept
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(line[:20] + b"\xff" + line[20:] + b"\n")
    before = bad.read_bytes()
    with pytest.raises(RecordError, match=r"bad.jsonl: line 1 is not UTF-8 text"):
        append_record(record, bad)
    assert bad.read_bytes() == before


def test_a_record_refuses_fields_the_format_does_not_have(record_dict):
    """An audit found misspelt fields read silently and lost on the next save: "sede": 7 became no seed."""
    from pokersquares_env.records import FIELDS

    assert set(FIELDS) == set(record_dict) | {"checked"}  # every field to_dict writes, and the optional one
    for extra in ({"sede": 7}, {"note": "x", "agnet": "me"}):
        with pytest.raises(RecordError, match=re.escape(f"unknown field{'s' if len(extra) > 1 else ''} "
                                                        f"{', '.join(map(repr, extra))}: expected only format, ")):
            GameRecord.from_dict({**record_dict, **extra})
    moves = [dict(m) for m in record_dict["placements"]]
    moves[3]["t"] = 1.5
    with pytest.raises(RecordError, match=re.escape("field 'placements[3]': move 4: unknown key 't': expected only "
                                                    "'card' and 'cell'")):
        GameRecord.from_dict({**record_dict, "placements": moves})
    assert GameRecord.from_dict({**record_dict, "meta": {"note": "x"}}).meta == {"note": "x"}


def test_a_record_takes_rule_specs_and_point_system_names():
    game, state = play_random(5, rules=Rules(jokers=2))
    record = GameRecord("jokers=2", "english", list(state.deck), list(state.placements))
    assert record.rules == Rules(jokers=2) and record.system.name == "english"
    assert GameRecord.from_dict(record.to_dict()).rules == Rules(jokers=2)
    with pytest.raises(TypeError, match="rules=3: expected a Rules"):
        GameRecord(3, "american", list(state.deck), list(state.placements))
    with pytest.raises(ValueError, match="jokers"):
        GameRecord("jokers=7", "american", list(state.deck), list(state.placements))


def test_a_plain_joker_after_a_named_one_takes_the_other_joker(record_dict):
    from pokersquares_env.cards import parse_card

    rules = Rules(jokers=2)
    game = PokerSquaresGame(rules)
    rest = list(range(30))
    data = GameRecord(rules, game.system, [53, 52] + rest, list(range(25))).to_dict()
    data["deck"][:2] = ["JK2", "JK"]
    data["placements"][0]["card"], data["placements"][1]["card"] = "JK2", "JK"
    back = GameRecord.from_dict(data)
    assert back.deck[:2] == [53, 52] and parse_card("JK") == 52


def test_record_games_refuses_a_trigger_that_is_not_a_function_before_touching_anything(tmp_path):
    with pytest.raises(TypeError, match="episode_trigger=5: expected a function"):
        RecordGames(gym.make("PokerSquares-v0"), tmp_path / "games", episode_trigger=5)
    assert not (tmp_path / "games").exists()


@pytest.mark.filterwarnings(  # check_env's render check opens render_mode="human" too, here with no display
    "ignore:render_mode='human' found no display:RuntimeWarning")
@pytest.mark.filterwarnings(  # the wrapper is what is checked here, on purpose
    "ignore:.*is different from the unwrapped version:UserWarning")
@needs("PIL")
def test_record_games_passes_gymnasiums_env_checker_and_is_rebuilt_from_its_spec(tmp_path):
    from gymnasium.utils.env_checker import check_env

    env = RecordGames(gym.make("PokerSquares-v0", illegal_action="penalty"), tmp_path / "a", agent="x")
    check_env(env)  # its close check rebuilds the env from env.spec
    again = gym.make(env.spec)
    assert isinstance(again, RecordGames) and again.folder == os.fspath(tmp_path / "a") and again.agent == "x"
    again.close()


def test_replay_shows_free_form_meta_as_it_is_rather_than_misreading_it(tmp_path, capsys):
    """meta is free-form: a swap list of cells off the board or a dealt score that is not a number is shown
    as given, and a record that loads always replays (exit 0, no traceback)."""
    from pokersquares_env.cli import main

    game, state = play_random(6)
    path = tmp_path / "odd.json"
    save_record(GameRecord.from_game(game, state, meta={"mode": "swap", "swaps": [[0, 99], [-1, 3]],
                                                         "dealt_score": "x"}), path)
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Swap mode: swaps [[0, 99], [-1, 3]]." in out and "dealt layout" not in out and "e20" not in out


def test_saving_onto_a_folder_names_the_folder(tmp_path):
    game, state = play_random(2)
    with pytest.raises(IsADirectoryError, match=r"is a folder: expected the path of a JSON file"):
        save_record(GameRecord.from_game(game, state), tmp_path)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("score", ["NaN", [1], None, float("inf"), True])
def test_replay_leaves_out_an_opponent_score_that_is_not_a_number(tmp_path, capsys, score):
    """Before, ``meta.vs.score`` "NaN" ended the replay with a ValueError traceback, and [1] or null with a
    TypeError one; meta is free-form, so the opponent is named without points."""
    from pokersquares_env.cli import main

    game, state = play_random(5)
    path = tmp_path / "vs.json"
    data = GameRecord.from_game(game, state, seed=5).to_dict()
    data["meta"] = {"vs": {"agent": "x", "score": score}}
    path.write_text(json.dumps(data))  # inf is written as Infinity, which json reads back
    assert main(["replay", str(path)]) == 0
    assert capsys.readouterr().out.rstrip().endswith("\nOpponent x")
    data["meta"] = {"vs": {"agent": "x", "score": 49}}
    path.write_text(json.dumps(data))
    assert main(["replay", str(path)]) == 0
    assert capsys.readouterr().out.rstrip().endswith("\nOpponent x: 49 points")


@pytest.mark.parametrize("fps", ["1e-9", "0.0015", "1e9", "200"])
def test_replay_refuses_a_frame_rate_a_gif_cannot_hold(tmp_path, capsys, fps):
    """Before, ``--fps 1e-9`` (or 0.0015) ended in a struct.error traceback and ``--fps 1e9`` wrote 0 ms frames:
    a GIF frame's delay is 10 ms to 655.35 s."""
    from pokersquares_env.cli import main

    game, state = play_random(4)
    record = tmp_path / "g.json"
    save_record(GameRecord.from_game(game, state, seed=4), record)
    assert main(["replay", str(record), "--gif", str(tmp_path / "a.gif"), "--fps", fps]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"pokersquares replay: --fps {float(fps):g}: ") and captured.out == ""
    assert "from 0.001526 to 100" in captured.err and captured.err.count("\n") == 1
    assert sorted(os.listdir(tmp_path)) == ["g.json"]


@needs("PIL")
def test_gif_frame_rates_at_the_limits_of_a_gif_frame_delay(tmp_path):
    from pokersquares_env.replay import MAX_FPS, MIN_FPS, _fps_problem, save_gif

    assert _fps_problem(MAX_FPS) is None and _fps_problem(MIN_FPS) is None and _fps_problem(2.0) is None
    assert _fps_problem(MAX_FPS * 1.2) and _fps_problem(MIN_FPS / 1.01)
    game, state = play_random(2)
    with pytest.raises(ValueError, match=r"fps=1000000.0: a frame delay of 0.001 ms: expected"):
        save_gif(GameRecord.from_game(game, state), str(tmp_path / "x.gif"), 1e6)
    assert not (tmp_path / "x.gif").exists()


# ---- bad input named when given, not when the file is written or read --------------------------------------


def _play_episode(env, seed=1):
    """Play one episode of a recording env with the first legal cell each move; the final info."""
    obs, info = env.reset(seed=seed)
    done = False
    while not done:
        obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        done = terminated or truncated
    return info


def test_record_games_records_no_seed_for_a_deck_given_in_options(tmp_path):
    """An audit found reset(seed=5, options={"deck": d}) recorded seed 5 beside deck d, which is not seed 5's deal,
    and `replay` headed the game "seed 5"; the seed is recorded only when it dealt the deck."""
    from pokersquares_env.core import PokerSquaresGame

    deck = PokerSquaresGame().deal(np.random.default_rng(123))
    env = RecordGames(gym.make("PokerSquares-v0"), tmp_path / "games")
    for options, seed in (({"deck": deck}, None), (None, 5), ({"deck": None}, 5)):
        obs, info = env.reset(seed=5, options=options)
        done = False
        while not done:
            obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
            done = terminated or truncated
        record = load_record(info["record_path"])
        assert record.seed == seed
        if seed is not None:  # the seed's own deal
            env2 = gym.make("PokerSquares-v0")
            env2.reset(seed=seed)
            assert record.deck == list(env2.unwrapped.state.deck)


@pytest.mark.parametrize("agent", [5, ["me"], b"me"])
def test_record_games_refuses_an_agent_that_is_not_a_string_when_made(tmp_path, agent):
    """Before, agent=5 was taken and the 25th step raised a RecordError, losing that step and its record."""
    with pytest.raises(TypeError, match=re.escape(f"agent: expected a string or null, got {agent!r}")):
        RecordGames(gym.make("PokerSquares-v0"), tmp_path / "games", agent=agent)
    assert not (tmp_path / "games").exists()


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(folder=None), TypeError, "folder=None: expected the path of a folder"),
    (dict(folder=3), TypeError, "folder=3: expected the path of a folder"),
    (dict(folder=b"games"), TypeError, "folder=b'games': expected the path of a folder"),
    (dict(folder=""), ValueError, "folder='': expected the path of a folder, not an empty path"),
    (dict(jsonl=1), TypeError, "jsonl=1: expected True, False or the path of a JSONL file"),
    (dict(jsonl=0), TypeError, "jsonl=0: expected True, False or the path of a JSONL file"),
    (dict(jsonl=""), ValueError, "jsonl='': expected True, False or the path of a JSONL file"),
])
def test_record_games_refuses_a_folder_or_jsonl_that_is_not_a_path(tmp_path, kwargs, error, message):
    """Before, folder=None and jsonl=1 gave os.fspath's bare TypeError, and jsonl=0 or '' silently meant no JSONL."""
    kwargs = {"folder": tmp_path / "games", **kwargs}
    with pytest.raises(error, match=re.escape(message)):
        RecordGames(gym.make("PokerSquares-v0"), **kwargs)
    assert os.listdir(tmp_path) == []


def test_record_games_makes_the_folder_of_a_jsonl_path_when_made(tmp_path):
    """Before, a JSONL path in a missing folder was taken; the first episode's end wrote its JSON file, then
    raised FileNotFoundError for the line: the step was lost and nothing was in ``recorded``."""
    lines = tmp_path / "no" / "such" / "games.jsonl"
    env = RecordGames(gym.make("PokerSquares-v0"), tmp_path / "games", jsonl=lines)
    assert (tmp_path / "no" / "such").is_dir()
    info = _play_episode(env)
    assert env.recorded == [info["record_path"]] == [os.fspath(tmp_path / "games" / "game-000000.json")]
    assert [r.to_dict() for r in load_records(lines)] == [load_record(info["record_path"]).to_dict()]


def test_record_games_refuses_a_jsonl_whose_folder_cannot_be_made(tmp_path):
    (tmp_path / "afile").write_text("keep")
    with pytest.raises(ValueError, match=r"jsonl='.*afile/x.jsonl': cannot create its folder"):
        RecordGames(gym.make("PokerSquares-v0"), tmp_path / "games", jsonl=tmp_path / "afile" / "x.jsonl")
    assert sorted(os.listdir(tmp_path)) == ["afile"] and (tmp_path / "afile").read_text() == "keep"


@pytest.mark.parametrize("content", ["hello world\n", '{"format": "pokersquares-game"\n', '{\n  "format": 1\n}\n'])
def test_record_games_refuses_a_jsonl_that_append_record_would_refuse_when_made(tmp_path, content):
    """An audit found that a jsonl= file holding no game records was taken when the wrapper was made, and the first
    episode's last step then raised a RecordError from append_record, losing the step's result."""
    lines = tmp_path / "notes.jsonl"
    lines.write_text(content)
    with pytest.raises(ValueError, match=re.escape(f"jsonl={str(lines)!r}: {lines}: not JSONL of game records (line 1")):
        RecordGames(gym.make("PokerSquares-v0"), tmp_path / "games", jsonl=lines)
    assert sorted(os.listdir(tmp_path)) == ["notes.jsonl"] and lines.read_text() == content


def test_record_games_writes_an_episode_all_or_nothing(tmp_path, monkeypatch):
    """An episode's JSONL line and JSON file are written both or neither: before, the JSON file was written
    first and stayed when the line could not be appended."""
    import pokersquares_env.records as records

    env = RecordGames(gym.make("PokerSquares-v0"), tmp_path / "games", jsonl=True)
    _play_episode(env, seed=1)
    before = sorted(os.listdir(tmp_path / "games")), (tmp_path / "games" / "games.jsonl").read_bytes()

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(records, "append_record", disk_full)
        with pytest.raises(OSError, match="No space left"):
            _play_episode(env, seed=2)
    assert (sorted(os.listdir(tmp_path / "games")), (tmp_path / "games" / "games.jsonl").read_bytes()) == before
    with monkeypatch.context() as patch:
        patch.setattr(records, "save_record", disk_full)
        with pytest.raises(OSError, match="No space left"):
            _play_episode(env, seed=3)
    assert (sorted(os.listdir(tmp_path / "games")), (tmp_path / "games" / "games.jsonl").read_bytes()) == before
    assert len(env.recorded) == 1
    _play_episode(env, seed=4)  # and recording goes on
    assert len(env.recorded) == 2 and len(load_records(tmp_path / "games" / "games.jsonl")) == 2


def test_a_record_reads_a_deck_of_card_text_when_made(tmp_path):
    """Before, a deck of card text (which replay() took) made save_record fail with a TypeError from comparing
    'str' and 'int'; the deck is read as the game reads one and kept as codes."""
    from pokersquares_env.cards import format_cards

    record = GameRecord(Rules(), "american", format_cards(range(52)).split(), [12])
    assert record.deck == list(range(52)) and record.placements == [12]
    save_record(record, tmp_path / "a.json")
    assert load_record(tmp_path / "a.json").to_dict() == record.to_dict()
    assert GameRecord(Rules(jokers=2), "american", ["JK", "JK"] + list(range(30)), []).deck[:2] == [52, 53]
    assert GameRecord(Rules(), "american", np.arange(52), np.array([3, 4])).placements == [3, 4]


@pytest.mark.parametrize("deck, placements, message", [
    (None, [], "field 'deck': expected a list of cards"),
    (5, [], "field 'deck': expected a list of cards"),
    (list(range(20)), [], "field 'deck': deck has 20 cards: expected at least 25"),
    ([1] * 30, [], "field 'deck': deck[1]: card 3♣ (code 1) appears twice"),
    (["T♠", "nope"] + list(range(30)), [], "field 'deck': bad card 'nope'"),
    (list(range(52)) + [52], [], "field 'deck': deck holds joker code 52 but the rules allow 0 joker(s)"),
    (list(range(52)), None, "field 'placements': expected a list of cell indices 0..24, got None"),
    (list(range(52)), "c3", "field 'placements': expected a list of cell indices 0..24, got 'c3'"),
    (list(range(52)), [0, 25], "field 'placements[1]': 25: expected a cell index 0..24"),
    (list(range(52)), [True], "field 'placements[0]': True: expected a cell index 0..24"),
    (list(range(52)), [1.0], "field 'placements[0]': 1.0: expected a cell index 0..24"),
    (list(range(52)), list(range(25)) + [0], "field 'placements': 26 placements: expected at most 25"),
])
def test_a_record_checks_its_deck_and_placements_when_made(tmp_path, deck, placements, message):
    """Before, these were taken and failed later with low-level errors (placements=None: 'NoneType' object is
    not iterable) or not at all until saved."""
    with pytest.raises(RecordError, match=re.escape(message)):
        GameRecord(Rules(), "american", deck, placements)
    good = GameRecord(Rules(), "american", list(range(52)), [0])
    path = tmp_path / "r.json"
    save_record(good, path)
    before = path.read_bytes()
    good.deck, good.placements = deck, placements  # changed after it was made: refused when saved
    with pytest.raises(RecordError, match=re.escape(message)):
        save_record(good, path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["r.json"]


def test_load_records_on_a_pretty_printed_record_says_jsonl_was_expected(tmp_path):
    """Before: 'not valid JSON (column 2): Expecting property name enclosed in double quotes'."""
    path = tmp_path / "game.json"
    save_record(GameRecord.from_game(*play_random(1)), path)
    with pytest.raises(RecordError, match=r"game.json: one JSON object spread over several lines, not JSONL: "
                                          r"expected JSONL, one whole record per line .*load_record"):
        load_records(path)
    path.write_text(path.read_text(encoding="utf-8")[:-20], encoding="utf-8")  # cut short: not JSON at all
    with pytest.raises(RecordError, match=r"game.json:1: not valid JSON .*the line is just '\{'.*load_record"):
        load_records(path)
    path.write_text("[\n" + json.dumps(GameRecord.from_game(*play_random(1)).to_dict()) + "\n]\n")
    with pytest.raises(RecordError, match=r"one JSON array spread over several lines, not JSONL"):
        load_records(path)


@pytest.mark.parametrize("load", [load_record, load_records])
def test_deeply_nested_json_is_a_record_error(tmp_path, load):
    """Before, a RecursionError escaped from the JSON parser."""
    path = tmp_path / "deep.json"
    path.write_text("[" * 100000)
    with pytest.raises(RecordError, match=r"deep.json(:1)?: JSON nested too deeply to read"):
        load(path)


@pytest.mark.parametrize("key, value, message", [
    ("finished", 1, "field 'finished': expected true or false, got 1"),
    ("finished", "true", "field 'finished': expected true or false, got 'true'"),
    ("name", 5, "field 'point_system.name': expected a string, got 5"),
    ("name", None, "field 'point_system.name': expected a string, got None"),
])
def test_finished_and_the_point_system_name_must_have_their_types(record_dict, key, value, message):
    """Before, ``"finished": 1`` (== true) and a point-system name of 5 (read as '5') loaded without complaint."""
    data = json.loads(json.dumps(record_dict))
    if key == "name":
        data["point_system"]["name"] = value
    else:
        data[key] = value
    with pytest.raises(RecordError, match=re.escape(message)):
        GameRecord.from_dict(data)


def test_replay_images_without_pillow_is_a_usage_error(tmp_path, monkeypatch, capsys):
    """Without Pillow, `replay --gif` ended in a traceback (exit 1) after reading the record."""
    from pokersquares_env import cli, render

    def no_pillow():
        raise ImportError('drawing frames needs Pillow: pip install "pokersquares_env[render]"')

    monkeypatch.setattr(render, "_pil", no_pillow)
    for option in ("--gif", "--png"):
        status = cli.main(["replay", str(tmp_path / "missing.json"), option, str(tmp_path / f"x.{option[2:]}")])
        err = capsys.readouterr().err
        assert status == 2 and err == (f"pokersquares replay: {option}: drawing frames needs Pillow: "
                                       f"pip install \"pokersquares_env[render]\"\n")  # before the (missing) record


# ---- Poker Shuffle boards checked by the budget; RecordGames numbering after an earlier run ---------------------

STRAIGHTS = "As Ah Kd Qc Jc Tc 9c 8c 7c 6c 5c 4c 3c 2c Ad Kc Qd Jd Td 9d 8d 7d 6d 5d 4d"


def test_a_board_checked_by_the_budget_is_recorded_with_the_env_scores(tmp_path):
    """Before, the record scored the board as an unfinished Poker Squares game: 0 points, no hands, where the env
    had scored 2 (a pair in an incomplete row), and the replay said it was unfinished with a card to place."""
    from io import StringIO

    from pokersquares_env.shuffle import arrange_action

    env = RecordGames(gym.make("PokerShuffle-v0", budget=2), tmp_path / "a")
    env.reset(options={"cards": STRAIGHTS})
    env.step(arrange_action(0, 0))
    *_, info = env.step(arrange_action(1, 1))
    data = json.loads(open(info["record_path"], encoding="utf-8").read())
    assert (info["score"], info["hands"][0], info["complete"]) == (2.0, "one_pair", False)
    assert (data["score"], data["hands"], data["scores"]) == (2, info["hands"], {"american": 2, "english": 1})
    assert data["checked"] is True and data["finished"] is False and data["meta"]["budget"] == 2
    record = load_record(info["record_path"])
    assert record.checked and record.to_dict() == data
    out = StringIO()
    print_replay(record, out)
    text = out.getvalue()
    assert "Checked after 2 placements: incomplete lines +2" in text and "card to place" not in text
    assert text.splitlines()[-1] == ("Scores: american 2, english 1  (board checked when the budget ran out after 2 "
                                     "placements; incomplete lines score the rank groups they hold)")
    # English points, a longer budget: the record's scores are the env's final info, for both systems
    env = RecordGames(gym.make("PokerShuffle-v0", budget=12, scoring="english"), tmp_path / "b", jsonl=True)
    _, info = env.reset(seed=11)
    info = _play_out(env, info)
    record = load_records(tmp_path / "b" / "games.jsonl")[0]
    data = record.to_dict()
    assert data["score"] == info["score"] == 2 and data["scores"] == info["scores"] and data["hands"] == info["hands"]
    # a full board (budget 25) and an illegal-action ending are not "checked"
    env = RecordGames(gym.make("PokerShuffle-v0", illegal_action="penalty", budget=5), tmp_path / "c")
    env.reset(options={"cards": STRAIGHTS})
    env.step(arrange_action(0, 0))
    *_, info = env.step(arrange_action(1, 0))  # cell a1 is taken
    assert "checked" not in json.loads(open(info["record_path"], encoding="utf-8").read())


def test_the_checked_flag_is_validated_and_cannot_be_dropped(tmp_path):
    from pokersquares_env.shuffle import arrange_action

    env = RecordGames(gym.make("PokerShuffle-v0", budget=2), tmp_path)
    env.reset(options={"cards": STRAIGHTS})
    env.step(arrange_action(0, 0))
    *_, info = env.step(arrange_action(1, 1))
    data = json.loads(open(info["record_path"], encoding="utf-8").read())
    with pytest.raises(RecordError, match=r"field 'hands': .* \(as a board checked before it was full scores: such "
                                          r"a record has \"checked\": true\)"):
        GameRecord.from_dict({k: v for k, v in data.items() if k != "checked"})
    with pytest.raises(RecordError, match=re.escape("field 'checked': expected true or false, got 'yes'")):
        GameRecord.from_dict({**data, "checked": "yes"})
    game, state = play_random(3)
    full = GameRecord.from_game(game, state).to_dict()
    with pytest.raises(RecordError, match=r"field 'checked': true with 25 placements: expected a board checked before"):
        GameRecord.from_dict({**full, "checked": True})
    with pytest.raises(RecordError, match=r"field 'checked': true with 0 placements"):
        GameRecord.from_game(*play_random(3, moves=0), checked=True)
    assert GameRecord.from_dict({**full, "checked": False}).checked is False  # an explicit false reads as absent


def _record_one(env, seed):
    _, info = env.reset(seed=seed)
    return _play_out(env, info)


def test_record_games_numbers_after_an_earlier_run_and_replaces_no_file(tmp_path):
    """Before, a second wrapper on the same folder started again at episode 0 and replaced game-000000.json, while
    the JSONL file kept both games: the files and the lines no longer matched."""
    first = _record_one(RecordGames(gym.make("PokerSquares-v0"), tmp_path, jsonl=True), seed=0)
    kept = open(first["record_path"], encoding="utf-8").read()
    (tmp_path / "other-000007.json").write_text("{}")  # another prefix's files do not count
    env = RecordGames(gym.make("PokerSquares-v0"), tmp_path, jsonl=True)
    second = _record_one(env, seed=1)
    assert os.path.basename(second["record_path"]) == "game-000001.json"
    assert open(first["record_path"], encoding="utf-8").read() == kept
    # a file of the number due written meanwhile (another writer) is kept: the episode takes the next free number
    (tmp_path / "game-000002.json").write_text("not mine")
    third = _record_one(env, seed=2)
    assert os.path.basename(third["record_path"]) == "game-000003.json"
    assert (tmp_path / "game-000002.json").read_text() == "not mine"
    lines = load_records(tmp_path / "games.jsonl")
    assert [r.meta["episode"] for r in lines] == [0, 1, 3] and [r.seed for r in lines] == [0, 1, 2]
    for r in lines:  # each line matches the JSON file of its episode
        assert load_record(tmp_path / f"game-{r.meta['episode']:06d}.json").to_dict() == r.to_dict()


def test_record_games_continues_a_jsonl_only_run_and_triggers_on_its_own_episodes(tmp_path):
    """A review found that with json_files=False a second run repeated meta.episode 0, 1, 2 in the JSONL file, and
    that episode_trigger got the continued file numbers, so `lambda e: e < 2` recorded nothing in a second run."""
    for _ in range(2):
        env = RecordGames(gym.make("PokerSquares-v0"), tmp_path, jsonl=True, json_files=False)
        for seed in range(3):
            _record_one(env, seed=seed)
    assert [r.meta["episode"] for r in load_records(tmp_path / "games.jsonl")] == [0, 1, 2, 3, 4, 5]
    folder = tmp_path / "trig"
    for run in range(2):
        env = RecordGames(gym.make("PokerSquares-v0"), folder, episode_trigger=lambda e: e < 2)
        for seed in range(3):
            _record_one(env, seed=seed)
        assert len(env.recorded) == 2, run  # the first two episodes of each wrapper
    assert sorted(p.name for p in folder.iterdir()) == [f"game-00000{i}.json" for i in (0, 1, 2, 3)]


@pytest.mark.parametrize("prefix", ["a\0b", "a/b"] + ([os.altsep.join("ab")] if os.altsep else []))
def test_record_games_refuses_a_bad_name_prefix_when_made(tmp_path, prefix):
    """Before, a NUL in name_prefix passed the wrapper's check and failed at the first episode's end ("embedded null
    byte"), after the env had moved, losing the record."""
    with pytest.raises(ValueError, match=r"name_prefix='a.*b': expected a non-empty file name prefix"):
        RecordGames(gym.make("PokerSquares-v0"), tmp_path / "games", name_prefix=prefix)
    assert not (tmp_path / "games").exists()


@pytest.mark.parametrize("key", ["episode", "illegal_action"])
def test_record_games_refuses_meta_keys_it_writes_itself(tmp_path, key):
    """Before, a meta["episode"] of the caller's was silently replaced by the episode number (while meta["env"] was
    kept); the keys the wrapper writes are now refused when it is made."""
    with pytest.raises(ValueError, match=rf"meta\['{key}'\]: the records of this env get 'episode', "
                                         rf"'illegal_action' from RecordGames and the env"):
        RecordGames(gym.make("PokerSquares-v0"), tmp_path / "games", meta={key: "mine", "env": "my-variant"})
    assert not (tmp_path / "games").exists()


def test_record_games_refuses_meta_keys_poker_shuffle_writes_itself(tmp_path):
    """Before, a caller's meta {"mode": "arrange", "swaps": []} replaced what a swap-mode game recorded: three swaps
    were played and the record said none (and replay showed none)."""
    env = gym.make("PokerShuffle-v0", mode="swap", budget=3)
    with pytest.raises(ValueError, match=r"meta\['mode'\], meta\['swaps'\]: the records of this env get .*'dealt_score'"):
        RecordGames(env, tmp_path / "games", meta={"swaps": [], "mode": "arrange", "note": "x"})
    assert not (tmp_path / "games").exists()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"meta keys \['dealt_score'\]: a Poker Shuffle record writes"):
        env.unwrapped.game_record(meta={"dealt_score": 999})
    rec = RecordGames(env, tmp_path / "games", meta={"note": "x"})  # other keys are the caller's
    rec.reset(seed=0)
    done = False
    while not done:
        _, _, done, _, info = rec.step(int(np.flatnonzero(rec.unwrapped.action_masks())[0]))
    record = load_record(next((tmp_path / "games").glob("*.json")))
    assert record.meta["note"] == "x" and record.meta["mode"] == "swap" and len(record.meta["swaps"]) == 3


def test_record_games_refuses_a_seed_longer_than_a_record_holds_before_the_episode(tmp_path):
    """Before, ``reset(seed=2**1100)`` was taken and the episode's last step raised RecordError: the final transition
    was lost and no record written (``pokersquares play --record`` refuses such a seed up front)."""
    env = RecordGames(gym.make("PokerSquares-v0"), tmp_path)
    counts = (env.episode_id, env.episode_count)
    with pytest.raises(ValueError, match=r"seed: an integer of 1,101 bits, but a game record holds seeds of at most "
                                         r"1024 bits"):
        env.reset(seed=2**1100)
    assert (env.episode_id, env.episode_count) == counts  # no episode started
    _, info = env.reset(seed=2**1000)
    while True:
        _, _, terminated, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        if terminated:
            break
    assert load_record(info["record_path"]).seed == 2**1000


def test_a_record_naming_a_field_twice_or_missing_its_version_is_named(tmp_path):
    """Before, a key given twice kept its last value silently (scoring and rules files refuse it), and a missing
    "version" or "format" said "got None" where a missing "placements" said "missing"."""
    record = GameRecord.from_game(*play_random(3), seed=3)
    text = json.dumps(record.to_dict())
    twice = text[:-1] + ', "seed": 4}'
    (tmp_path / "twice.json").write_text(twice)
    (tmp_path / "lines.jsonl").write_text(text + "\n" + twice + "\n")
    with pytest.raises(RecordError, match=r"twice.json: key 'seed' is given twice in one JSON object"):
        load_record(tmp_path / "twice.json")
    with pytest.raises(RecordError, match=r"twice.json: key 'seed' is given twice"):
        read_record(tmp_path / "twice.json")
    assert read_record(tmp_path / "lines.jsonl", 0).seed == 3  # the good line reads; the other is named by its line
    with pytest.raises(RecordError, match=r"lines.jsonl:2: key 'seed' is given twice"):
        read_record(tmp_path / "lines.jsonl", 1)
    with pytest.raises(RecordError, match=r"lines.jsonl:2: key 'seed' is given twice"):
        load_records(tmp_path / "lines.jsonl")
    for key in ("version", "format"):
        data = record.to_dict()
        del data[key]
        with pytest.raises(RecordError, match=rf"field '{key}': missing$"):
            GameRecord.from_dict(data)


def test_save_and_append_take_a_records_dict_form_and_refuse_other_objects(tmp_path):
    """Before, the dict form that EvaluationResult.game_records() and to_dict() hand out failed with
    "AttributeError: 'dict' object has no attribute 'check_fields'"; now it is read (and checked) as a record."""
    game, state = play_random(3)
    record = GameRecord.from_game(game, state, seed=3)
    save_record(record.to_dict(), tmp_path / "one.json")
    append_record(record.to_dict(), tmp_path / "many.jsonl")
    assert load_record(tmp_path / "one.json").to_dict() == record.to_dict()
    assert [r.to_dict() for r in load_records(tmp_path / "many.jsonl")] == [record.to_dict()]
    damaged = {**record.to_dict(), "placements": record.to_dict()["placements"][:-1] + [99]}
    with pytest.raises(RecordError, match="placements"):
        save_record(damaged, tmp_path / "bad.json")
    for bad in ([1, 2], "game.json", None):
        with pytest.raises(TypeError, match=r"expected a GameRecord or its dict form"):
            append_record(bad, tmp_path / "many.jsonl")
    assert not (tmp_path / "bad.json").exists()
    assert len(load_records(tmp_path / "many.jsonl")) == 1


def test_a_placement_naming_a_joker_where_the_deck_deals_a_card_is_refused():
    """The two jokers are alike in a placement, but a joker is not any card: a mutation audit found that check
    untested."""
    game, state = play_random(6, rules=Rules(jokers=1))
    data = GameRecord.from_game(game, state, seed=6).to_dict()
    real = next(i for i, c in enumerate(data["deck"][:25]) if not c.startswith("JK"))
    data["placements"][real]["card"] = "JK1"
    with pytest.raises(RecordError, match=re.escape(f"field 'placements[{real}].card'")):
        GameRecord.from_dict(data)


def test_record_games_records_an_episode_cut_off_by_a_time_limit(tmp_path):
    """An episode truncated by ``TimeLimit`` (``max_episode_steps``) is a finished episode too: it is recorded, its
    record holding the cards placed so far (an audit recorded terminated episodes only, unseen)."""
    env = RecordGames(gym.make("PokerSquares-v0", max_episode_steps=3), tmp_path)
    obs, info = env.reset(seed=2)
    for _ in range(3):
        obs, _, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert truncated and not terminated
    assert len(env.recorded) == 1 and info["record_path"] == env.recorded[0]
    assert len(load_record(info["record_path"]).placements) == 3


@needs("PIL")
def test_a_checked_board_replays_as_checked_in_text_frames_png_and_gif(tmp_path):
    """A board checked by the budget with a complete line and an incomplete one: the text adds only the incomplete
    lines' points to the complete ones', the last frame and the PNG are the checked board (partial lines scored, no
    card to place), the first frame's title counts move 0, and the GIF loops for ever."""
    from io import StringIO

    from PIL import Image

    from pokersquares_env.render import draw_board, draw_poker_squares
    from pokersquares_env.replay import _checked_frame, frames, save_gif, save_png
    from pokersquares_env.shuffle import arrange_action

    env = RecordGames(gym.make("PokerShuffle-v0", budget=7), tmp_path / "a")
    env.reset(options={"cards": STRAIGHTS})
    for card, cell in ((0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (14, 5), (13, 10)):  # As Ah Kd Qc Jc in row 1
        *_, info = env.step(arrange_action(card, cell))  # Ad, 2c under As: column a holds a pair, incomplete
    record = load_record(info["record_path"])
    assert record.checked
    out = StringIO()
    print_replay(record, out)
    text = out.getvalue()
    assert "Checked after 7 placements: incomplete lines +2" in text and "total 4" in text
    assert "score (american, checked as it stands): 4   cards placed: 7/25" in text  # the board's total line
    game, state = record.replay()
    shots = frames(record)
    np.testing.assert_array_equal(shots[-1], _checked_frame(game, state, "Replay · move 7/7"))
    assert not np.array_equal(shots[-1], draw_board(state.board, game.system, last_cell=state.placements[-1],
                                                   title="Replay · move 7/7",
                                                   notes=["checked after 7 placements", "(the budget ran out)"]))
    np.testing.assert_array_equal(shots[0], draw_poker_squares(game, game.init(record.deck), title="Replay · move 0/7"))
    save_png(record, str(tmp_path / "end.png"))
    np.testing.assert_array_equal(np.array(Image.open(tmp_path / "end.png").convert("RGB")),
                                  _checked_frame(game, state, "Game"))
    save_gif(record, str(tmp_path / "game.gif"), fps=1.5)
    with Image.open(tmp_path / "game.gif") as gif:
        assert gif.info["loop"] == 0


@pytest.mark.parametrize("delay_ms, stored", [(106.0, 110), (104.9, 100), (109.6, 110), (3333.0, 3330)])
@needs("PIL")
def test_a_gif_frame_delay_is_the_nearest_a_gif_holds(tmp_path, delay_ms, stored):
    """A GIF holds delays in hundredths of a second and Pillow truncates milliseconds to them: 1000 / fps rounded to
    the ms (106) was written as 100 ms; it is rounded to the nearest 10 ms.  The last frame stays at least 3 s."""
    from PIL import Image

    from pokersquares_env.replay import save_gif

    game, state = play_random(3)
    save_gif(GameRecord.from_game(game, state), str(tmp_path / "g.gif"), fps=1000 / delay_ms)
    with Image.open(tmp_path / "g.gif") as gif:
        delays = []
        for i in range(gif.n_frames):
            gif.seek(i)
            delays.append(gif.info["duration"])
    assert delays == [stored] * (len(delays) - 1) + [max(stored, 3000)]


# ---- found by a mutation audit of records.py and wrappers.py ---------------------------------------------------


@pytest.mark.parametrize("bits, ok", [(1024, True), (1025, False)])
def test_a_record_holds_seeds_of_up_to_max_seed_bits(bits, ok):
    game, state = play_random(3)
    seed = 2**bits - 1
    if ok:
        record = GameRecord.from_game(game, state, seed=seed)
        assert GameRecord.from_dict(json.loads(json.dumps(record.to_dict()))).seed == seed
    else:
        with pytest.raises(RecordError, match=f"field 'seed': an integer of {bits:,} bits: expected at most 1024"):
            GameRecord.from_game(game, state, seed=seed)


def test_a_record_keeps_its_meta_when_the_callers_dict_changes():
    game, state = play_random(3)
    meta = {"run": 1}
    record = GameRecord.from_game(game, state, meta=meta)
    meta["run"] = 2
    assert record.meta == {"run": 1}


def test_a_record_without_game_or_meta_fields_loads(record_dict):
    """"game" defaults to PokerSquares-v0 and a missing or null "meta" reads as {}."""
    for key in ("game", "meta"):
        data = {k: v for k, v in record_dict.items() if k != key}
        assert GameRecord.from_dict(data).to_dict() == record_dict
    assert GameRecord.from_dict({**record_dict, "meta": None}).meta == {}


def test_a_record_whose_deck_is_an_object_is_refused(record_dict):
    record_dict["deck"] = {card: 0 for card in record_dict["deck"]}
    with pytest.raises(RecordError, match="field 'deck': expected a list of cards"):
        GameRecord.from_dict(record_dict)


@pytest.mark.parametrize("field, change", [
    ("scores", lambda data: data["scores"].update(other=0)),
    ("scores", lambda data: data["scores"].pop("english")),
    ("hands", lambda data: data["hands"].pop()),
    ("board", lambda data: data["board"].pop()),
], ids=["extra score", "missing score", "short hands", "short board"])
def test_stored_results_with_extra_or_missing_entries_are_refused(record_dict, field, change):
    change(record_dict)
    with pytest.raises(RecordError, match=f"field '{field}'.*placements give"):
        GameRecord.from_dict(record_dict)


@pytest.mark.parametrize("text", ["5", '"a record"', "null"])
def test_a_record_file_holding_no_json_object_is_a_record_error(tmp_path, text):
    with pytest.raises(RecordError, match="expected a JSON object"):
        load_record(_write(tmp_path, text))


def test_a_saved_record_file_ends_with_a_newline(tmp_path):
    save_record(GameRecord.from_game(*play_random(3)), tmp_path / "r.json")
    assert (tmp_path / "r.json").read_text(encoding="utf-8").endswith("}\n")


def test_a_save_that_fails_leaves_no_temporary_file(tmp_path, monkeypatch):
    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", disk_full)
    with pytest.raises(OSError, match="No space left"):
        save_record(GameRecord.from_game(*play_random(3)), tmp_path / "r.json")
    assert os.listdir(tmp_path) == []


def test_read_record_refuses_a_bool_index(tmp_path):
    game, state = play_random(3)
    for seed in (1, 2):
        append_record(GameRecord.from_game(game, state, seed=seed), tmp_path / "r.jsonl")
    with pytest.raises(RecordError, match="index True: expected an integer"):
        read_record(tmp_path / "r.jsonl", True)


def test_record_games_refuses_an_empty_name_prefix_when_made(tmp_path):
    with pytest.raises(ValueError, match="name_prefix='': expected a non-empty file name prefix"):
        RecordGames(gym.make("PokerSquares-v0"), tmp_path / "games", name_prefix="")
    assert not (tmp_path / "games").exists()


@pytest.mark.parametrize("meta", [[], "", 0, ()])
def test_record_games_refuses_an_empty_meta_that_is_not_a_dict(tmp_path, meta):
    with pytest.raises(TypeError, match=re.escape(f"meta={meta!r}: expected a dict")):
        RecordGames(gym.make("PokerSquares-v0"), tmp_path / "games", meta=meta)


def test_record_games_keeps_its_meta_when_the_callers_dict_changes(tmp_path):
    meta = {"run": 1}
    env = RecordGames(gym.make("PokerSquares-v0"), tmp_path, meta=meta)
    meta["run"] = 2
    info = _play_episode(env)
    assert load_record(info["record_path"]).meta == {"run": 1, "env": "PokerSquares-v0", "episode": 0}


def test_record_games_marks_only_the_episode_ended_by_an_illegal_action(tmp_path):
    env = RecordGames(gym.make("PokerSquares-v0", illegal_action="penalty"), tmp_path, meta={"run": 1})
    env.reset(seed=1)
    env.step(0)
    *_, info = env.step(0)  # occupied: the episode ends
    assert "illegal_action" in load_record(info["record_path"]).meta
    info = _play_episode(env, seed=2)
    assert load_record(info["record_path"]).meta == {"run": 1, "env": "PokerSquares-v0", "episode": 1}


@pytest.mark.parametrize("bits, ok", [(1024, True), (1025, False)])
def test_record_games_takes_seeds_of_up_to_max_seed_bits(tmp_path, bits, ok):
    env = RecordGames(gym.make("PokerSquares-v0"), tmp_path)
    seed = 2**bits - 1
    if ok:
        assert load_record(_play_episode(env, seed=seed)["record_path"]).seed == seed
    else:
        with pytest.raises(ValueError, match=f"seed: an integer of {bits:,} bits"):
            env.reset(seed=seed)


def test_record_games_records_no_seed_for_poker_shuffle_cards_given_in_options(tmp_path):
    env = RecordGames(gym.make("PokerShuffle-v0", mode="arrange"), tmp_path)
    for options, seed in (({"cards": STRAIGHTS}, None), (None, 5)):
        _, info = env.reset(seed=5, options=options)
        info = _play_out(env, info)
        assert load_record(info["record_path"]).seed == seed


def test_record_games_jsonl_only_gives_the_jsonl_path_and_ignores_json_files(tmp_path):
    """With json_files=False the final info and ``recorded`` name the JSONL file, and a JSON file of the same
    prefix written meanwhile does not change the episode numbers."""
    env = RecordGames(gym.make("PokerSquares-v0"), tmp_path, jsonl=True, json_files=False)
    (tmp_path / "game-000000.json").write_text("not mine")
    info = _play_episode(env)
    assert info["record_path"] == os.fspath(tmp_path / "games.jsonl") and env.recorded == [info["record_path"]]
    assert [r.meta["episode"] for r in load_records(tmp_path / "games.jsonl")] == [0]


def test_record_games_removes_a_jsonl_file_it_made_when_the_json_file_fails(tmp_path, monkeypatch):
    import pokersquares_env.records as records

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    env = RecordGames(gym.make("PokerSquares-v0"), tmp_path, jsonl=True)
    monkeypatch.setattr(records, "save_record", disk_full)
    with pytest.raises(OSError, match="No space left"):
        _play_episode(env)
    assert os.listdir(tmp_path) == []


def test_record_games_numbers_after_the_highest_whole_jsonl_episode_skipping_damaged_lines(tmp_path):
    game, state = play_random(3)
    lines = tmp_path / "mixed.jsonl"
    for episode in (5, 2):
        append_record(GameRecord.from_game(game, state, meta={"episode": episode}), lines)
    with open(lines, "ab") as fh:
        fh.write(b'[1, 2]\n{"meta": 7}\n\xff\xfe\n')
    env = RecordGames(gym.make("PokerSquares-v0"), tmp_path, jsonl=lines, json_files=False)
    _play_episode(env)
    assert json.loads(lines.read_bytes().splitlines()[-1])["meta"]["episode"] == 6  # appended after the damage
    flagged = tmp_path / "flag.jsonl"  # a meta.episode of true is not episode 1
    append_record(GameRecord.from_game(game, state, meta={"episode": True}), flagged)
    env = RecordGames(gym.make("PokerSquares-v0"), tmp_path, jsonl=flagged, json_files=False)
    _play_episode(env)
    assert read_record(flagged, -1).meta["episode"] == 0


def test_record_games_numbers_after_long_file_numbers_but_not_other_files(tmp_path):
    (tmp_path / "long").mkdir()
    (tmp_path / "long" / "game-1234567.json").write_text("{}")
    info = _play_episode(RecordGames(gym.make("PokerSquares-v0"), tmp_path / "long"))
    assert os.path.basename(info["record_path"]) == "game-1234568.json"
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "game-000009.json.bak").write_text("{}")
    info = _play_episode(RecordGames(gym.make("PokerSquares-v0"), tmp_path / "other"))
    assert os.path.basename(info["record_path"]) == "game-000000.json"


class _BytesPath:
    def __fspath__(self):
        return b"games"


@pytest.mark.parametrize("key", ["folder", "jsonl"])
def test_record_games_refuses_a_path_object_giving_bytes(tmp_path, key, monkeypatch):
    monkeypatch.chdir(tmp_path)
    kwargs = {"folder": "here", key: _BytesPath()}
    with pytest.raises(TypeError, match=f"{key}=.*as text, not bytes"):
        RecordGames(gym.make("PokerSquares-v0"), **kwargs)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("existing", [True, False])
def test_record_games_refuses_a_jsonl_it_cannot_write_when_made(tmp_path, monkeypatch, existing):
    """Simulated (os.access) so that it holds when the tests run as root."""
    lines = tmp_path / "locked" / "games.jsonl"
    lines.parent.mkdir()
    if existing:
        append_record(GameRecord.from_game(*play_random(3)), lines)
    locked = os.fspath(lines if existing else lines.parent)
    access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: os.fspath(path) != locked and access(path, mode, **kw))
    with pytest.raises(ValueError, match="is not writable"):
        RecordGames(gym.make("PokerSquares-v0"), tmp_path / "games", jsonl=lines)


# ---- found by a mutation audit of wrappers.py and cli.py ------------------------------------------------------------


def test_record_games_jsonl_true_is_named_after_the_prefix(tmp_path):
    env = RecordGames(gym.make("PokerSquares-v0"), tmp_path, name_prefix="hand", jsonl=True)
    info = _play_episode(env)
    assert sorted(os.listdir(tmp_path)) == ["hand-000000.json", "hands.jsonl"]
    assert env.jsonl_path == os.path.join(tmp_path, "hands.jsonl")
    assert load_records(tmp_path / "hands.jsonl")[0].to_dict() == load_record(info["record_path"]).to_dict()


def test_record_games_rebuilt_from_its_spec_keeps_the_episode_trigger(tmp_path):
    def trigger(episode):
        return episode % 2 == 1

    env = RecordGames(gym.make("PokerSquares-v0"), tmp_path, episode_trigger=trigger, meta={"run": 3})
    again = gym.make(env.spec)
    assert again.episode_trigger is trigger and again.meta == {"run": 3}
    assert "record_path" not in _play_episode(again)  # episode 0 is not recorded, as the first wrapper's would not be
    again.close()


# ---- a mutation audit of replay.py (2026-12-03) --------------------------------------------------------------------


def test_replay_heading_moves_and_boards(tmp_path):
    """The heading names the player and a first cell of a1 (cell 0) too; moves are numbered from 1; ``boards=True``
    prints the board after every move, and only then."""
    import io

    game, state = play_random(4, rules=Rules(first_cell="top-left"))
    record = GameRecord.from_game(game, state, seed=0, agent="random", meta={"env": "PokerSquares-v0"})
    out = io.StringIO()
    print_replay(record, out)
    text = out.getvalue()
    lines = text.splitlines()
    assert lines[0] == "Poker Squares game record: american points, seed 0, played by random, first card on a1"
    moves = [ln for ln in lines if "->" in ln]
    assert [int(ln.split(".")[0]) for ln in moves] == list(range(1, 26))
    assert moves[0].startswith(" 1. ") and moves[0].split()[3] == "a1"
    assert text.count("score (american)") == 1
    with_boards = io.StringIO()
    print_replay(record, with_boards, boards=True)
    assert with_boards.getvalue().count("score (american)") == 26


def test_replay_of_a_swap_record_with_no_swaps_says_none(tmp_path):
    import io

    game, state = play_random(6)
    out = io.StringIO()
    print_replay(GameRecord.from_game(game, state, meta={"mode": "swap", "swaps": [], "dealt_score": 12}), out)
    assert ("Swap mode: the dealt layout scored 12; swaps none. The moves below lay out the final arrangement cell by "
            "cell.") in out.getvalue().splitlines()


def test_replay_cli_says_on_stderr_that_a_file_cannot_be_read_and_how_many_frames_it_wrote(tmp_path, capsys):
    """A missing file: exit 2 and the reason on standard error, nothing on standard output. --gif: 'wrote X (N
    frames)' at the default 2 frames per second (500 ms a frame, the last held 3 s)."""
    pytest.importorskip("PIL")
    from PIL import Image

    from pokersquares_env.cli import main

    missing = tmp_path / "none.json"
    assert main(["replay", str(missing)]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err == f"pokersquares replay: cannot read {str(missing)!r}: No such file or directory\n"
    game, state = play_random(3)
    path = tmp_path / "g.json"
    save_record(GameRecord.from_game(game, state, seed=3), path)
    gif = tmp_path / "g.gif"
    assert main(["replay", str(path), "--gif", str(gif)]) == 0
    assert capsys.readouterr().out == f"wrote {gif} (26 frames)\n"
    with Image.open(gif) as img:
        assert img.n_frames == 26 and img.info["duration"] == 500


def test_replay_png_is_the_final_board_titled_by_player_and_seed_and_a_failed_write_exits_2(tmp_path, capsys,
                                                                                           monkeypatch):
    pytest.importorskip("PIL")
    from PIL import Image

    from pokersquares_env import replay
    from pokersquares_env.cli import main
    from pokersquares_env.render import draw_poker_squares

    game, state = play_random(3)
    path = tmp_path / "g.json"
    save_record(GameRecord.from_game(game, state, seed=3, agent="random"), path)
    png = tmp_path / "g.png"
    assert main(["replay", str(path), "--png", str(png)]) == 0
    with Image.open(png) as img:
        assert np.array_equal(np.asarray(img.convert("RGB")), draw_poker_squares(game, state, title="random · seed 3"))
    capsys.readouterr()

    def full(path, write):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(replay, "_atomic_image_save", full)
    assert main(["replay", str(path), "--png", str(tmp_path / "h.png")]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err == "pokersquares replay: [Errno 28] No space left on device\n"


def test_replay_names_an_opponent_without_a_score_and_none_without_a_name(tmp_path):
    import io

    game, state = play_random(5)
    for vs, last in (({"agent": "x"}, "Opponent x"), ({"score": 40}, "Scores: ")):
        out = io.StringIO()
        print_replay(GameRecord.from_game(game, state, meta={"vs": vs}), out)
        assert out.getvalue().splitlines()[-1].startswith(last)


def test_write_json_that_fails_leaves_no_temporary_file(tmp_path):
    from pokersquares_env._files import write_json

    with pytest.raises(TypeError):
        write_json(str(tmp_path / "data.json"), {"a": object()})  # not JSON: fails while writing
    assert list(tmp_path.iterdir()) == []


def test_a_temporary_file_whose_mode_cannot_be_set_is_removed(tmp_path, monkeypatch):
    from pokersquares_env import _files

    def refuse(path, mode):
        raise PermissionError(1, "Operation not permitted", path)

    monkeypatch.setattr(_files.os, "chmod", refuse)
    with pytest.raises(PermissionError):
        _files.plain_temp_file(str(tmp_path), ".data.", ".tmp")
    assert list(tmp_path.iterdir()) == []


def test_an_output_file_problem_names_a_folder_and_a_folder_that_cannot_be_made(tmp_path):
    from pokersquares_env._files import output_file_problem

    assert output_file_problem(str(tmp_path), "--out") == (f"--out {str(tmp_path)!r} is a folder: expected the path "
                                                           f"of a JSON file to write")
    assert output_file_problem(str(tmp_path / "new" / "r.json"), "--json") is None and (tmp_path / "new").is_dir()
    (tmp_path / "afile").write_text("x")
    below = str(tmp_path / "afile" / "r.json")
    assert output_file_problem(below, "--json").startswith(f"--json {below!r}: cannot create its folder")


@needs("PIL")
def test_an_output_file_in_a_folder_that_cannot_be_written_is_refused_by_name(tmp_path, monkeypatch, capsys):
    """The benchmarks' ``--out``/``--json`` files and ``replay --gif``/``--png`` name a folder they cannot write in
    before any work (simulated with os.access, which root ignores permissions for), and write nothing."""
    from pokersquares_env._files import output_file_problem
    from pokersquares_env.cli import main

    game, state = play_random(4)
    record = tmp_path / "g.json"
    save_record(GameRecord.from_game(game, state, seed=4), record)
    locked = tmp_path / "locked"
    locked.mkdir()
    access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: os.fspath(path) != str(locked) and access(path, mode,
                                                                                                           **kw))
    out = str(locked / "r.json")
    assert output_file_problem(out, "--out") == f"--out {out!r}: cannot write in its folder {str(locked)!r} (no permission)"
    assert output_file_problem(str(tmp_path / "r.json"), "--out") is None  # the same call where it can write
    for option in ("--gif", "--png"):
        image = str(locked / f"a.{option[2:]}")
        assert main(["replay", str(record), option, image]) == 2
        err = capsys.readouterr().err
        assert err == f"pokersquares replay: {option} {image!r} cannot be written in {str(locked)!r}\n"
    assert list(locked.iterdir()) == []


def test_write_json_follows_a_chain_of_links_to_the_file_and_keeps_every_link(tmp_path):
    """A link to a link is followed to the end: the file at the end gets the new contents and both links stay
    links (following one link only replaced the middle link with a file, leaving the target's old contents)."""
    from pokersquares_env._files import write_json

    target, middle, outer = tmp_path / "target.json", tmp_path / "middle.json", tmp_path / "outer.json"
    write_json(str(target), {"a": 1})
    middle.symlink_to(target.name)
    outer.symlink_to(middle.name)
    write_json(str(outer), {"a": 2})
    assert outer.is_symlink() and middle.is_symlink() and not target.is_symlink()
    assert json.loads(target.read_text()) == {"a": 2}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["middle.json", "outer.json", "target.json"]


def test_a_new_json_file_takes_its_mode_from_the_umask(tmp_path):
    """A new file is 0666 less the umask, as a plainly opened file (not a fixed 0644, nor mkstemp's 0600)."""
    from pokersquares_env._files import write_json

    umask = os.umask(0o027)
    try:
        write_json(str(tmp_path / "a.json"), {"a": 1})
        os.umask(0o002)
        write_json(str(tmp_path / "b.json"), {"b": 1})
    finally:
        os.umask(umask)
    assert (tmp_path / "a.json").stat().st_mode & 0o777 == 0o640
    assert (tmp_path / "b.json").stat().st_mode & 0o777 == 0o664


def test_write_json_that_fails_keeps_the_earlier_file_whole(tmp_path):
    """The write is atomic: data that cannot be written leaves the file before it as it was, not truncated or
    half-written, and no temporary file."""
    from pokersquares_env._files import write_json

    path = tmp_path / "data.json"
    write_json(str(path), {"a": 1})
    before = path.read_bytes()
    with pytest.raises(TypeError):
        write_json(str(path), {"a": 2, "b": object()})
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["data.json"]


def test_write_json_renames_a_temporary_file_from_the_same_folder(tmp_path, monkeypatch):
    """The temporary file is made beside the target, so that the rename into place stays on one file system (and
    is atomic there); one made elsewhere (e.g. the system's temporary folder) could not be renamed over the target
    on another file system."""
    from pokersquares_env import _files

    renamed = []
    replace = os.replace
    monkeypatch.setattr(_files.os, "replace", lambda src, dst: renamed.append((src, dst)) or replace(src, dst))
    _files.write_json(str(tmp_path / "data.json"), {"a": 1})
    [(src, dst)] = renamed
    assert os.path.dirname(os.path.abspath(src)) == str(tmp_path) and dst == str(tmp_path / "data.json")


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts open descriptors in /proc/self/fd")
def test_a_temporary_file_whose_mode_cannot_be_set_leaves_no_descriptor_open(tmp_path, monkeypatch):
    from pokersquares_env import _files

    def refuse(path, mode):
        raise PermissionError(1, "Operation not permitted", path)

    monkeypatch.setattr(_files.os, "chmod", refuse)
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(3):
        with pytest.raises(PermissionError):
            _files.plain_temp_file(str(tmp_path), ".data.", ".tmp")
    assert len(os.listdir("/proc/self/fd")) == before and list(tmp_path.iterdir()) == []


def test_an_output_folder_that_cannot_be_searched_is_refused(tmp_path, monkeypatch):
    """A folder must be writable and searchable (X) to create a file in it: write permission alone is not enough
    (simulated with os.access, since root passes any permission check)."""
    from pokersquares_env._files import output_file_problem

    folder = tmp_path / "noexec"
    folder.mkdir()
    access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: not (os.fspath(path) == str(folder) and mode & os.X_OK)
                        and access(path, mode, **kw))
    path = str(folder / "r.json")
    assert output_file_problem(path, "--out") == (f"--out {path!r}: cannot write in its folder {str(folder)!r} "
                                                  f"(no permission)")
    assert output_file_problem(str(tmp_path / "r.json"), "--out") is None


# ---- from a mutation audit of records.py ----------------------------------------------------------------------------


def test_load_records_cut_tail_leaves_out_only_a_last_line_without_a_newline(tmp_path):
    """cut_tail=True (an evaluation's journal) silently leaves out the one line a kill while appending leaves half
    written: the last, with no newline after it.  The same damage followed by a newline, or on an earlier line, is
    still named."""
    path = tmp_path / "games.jsonl"
    for seed in (1, 2):
        append_record(GameRecord.from_game(*play_random(seed), seed=seed), path)
    whole = path.read_text(encoding="utf-8")
    cut = json.dumps(GameRecord.from_game(*play_random(3), seed=3).to_dict(), ensure_ascii=False)[:100]
    path.write_text(whole + cut, encoding="utf-8")
    assert [r.seed for r in load_records(path, cut_tail=True)] == [1, 2]
    path.write_text(whole + cut + "\n", encoding="utf-8")  # a newline after it: not a write cut short
    with pytest.raises(RecordError, match=r"games.jsonl:3: not valid JSON"):
        load_records(path, cut_tail=True)
    first, second = whole.splitlines(keepends=True)
    path.write_text(first + cut + "\n" + second.rstrip("\n"), encoding="utf-8")  # damage before a whole last line
    with pytest.raises(RecordError, match=r"games.jsonl:2: not valid JSON"):
        load_records(path, cut_tail=True)


def test_append_record_says_the_file_is_left_as_it_was_only_for_a_file_that_exists(tmp_path):
    record = GameRecord.from_game(*play_random(8), seed=8)
    existing = tmp_path / "game.json"
    save_record(record, existing)
    with pytest.raises(RecordError, match=r"game.json: a .json file holds one game record .*; the file is left as it "
                                          r"was$"):
        append_record(record, existing)
    with pytest.raises(RecordError, match=r"new.json: a .json file holds one game record") as caught:
        append_record(record, tmp_path / "new.json")
    assert "left as it was" not in str(caught.value) and not (tmp_path / "new.json").exists()


def test_append_record_names_the_line_that_is_not_utf8(tmp_path):
    record = GameRecord.from_game(*play_random(8), seed=8)
    path = tmp_path / "games.jsonl"
    path.write_bytes(b"\n \n\xff\xfe garbage\n")
    with pytest.raises(RecordError, match=r"games.jsonl: line 3 is not UTF-8 text: expected a JSONL file"):
        append_record(record, path)
    assert path.read_bytes() == b"\n \n\xff\xfe garbage\n"


def test_load_records_on_a_pretty_printed_array_cut_short_says_jsonl_was_expected(tmp_path):
    path = tmp_path / "games.json"
    path.write_text("[\n" + json.dumps(GameRecord.from_game(*play_random(1)).to_dict())[:50] + "\n")
    with pytest.raises(RecordError, match=r"games.json:1: not valid JSON .*the line is just '\['.*load_record"):
        load_records(path)


def test_meta_keys_must_be_strings_at_any_depth(tmp_path):
    record = GameRecord.from_game(*play_random(2), meta={"a": [{"b": {"c": {"d": {7: "x"}}}}]})
    path = tmp_path / "game.json"
    with pytest.raises(RecordError, match=r"field 'meta.a\[0\].b.c.d': key 7 is of type int: expected string keys"):
        save_record(record, path)
    assert not path.exists()


def test_read_record_reads_each_line_of_an_upper_case_jsonl_alone_and_takes_a_numpy_index(tmp_path):
    """A line naming a field twice is refused by its line number and hides no other line, whatever the case of the
    .jsonl suffix."""
    path = tmp_path / "GAMES.JSONL"
    for seed in (1, 2):
        append_record(GameRecord.from_game(*play_random(seed), seed=seed), path)
    first, second = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text(first.replace('"agent": null', '"agent": null, "agent": "x"', 1) + second, encoding="utf-8")
    assert read_record(path, 1).seed == 2 and read_record(path, np.int64(-1)).seed == 2
    with pytest.raises(RecordError, match=r"GAMES.JSONL:1: key 'agent' is given twice"):
        read_record(path, 0)


def test_unknown_rule_options_in_a_record_are_named(record_dict):
    data = json.loads(json.dumps(record_dict))
    data["rules"]["bogus"] = 1
    with pytest.raises(RecordError, match=r"^record: field 'rules': unknown rule options \['bogus'\]$"):
        GameRecord.from_dict(data)


@pytest.mark.parametrize("field, value", [("seed", -1), ("agent", 5), ("meta", [1])])
def test_a_bad_seed_agent_or_meta_in_a_file_names_the_file(tmp_path, record_dict, field, value):
    data = dict(record_dict, **{field: value})
    path = tmp_path / "game.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(RecordError, match=rf"^{re.escape(str(path))}: field '{field}': expected "):
        load_record(path)
    jsonl = tmp_path / "games.jsonl"
    jsonl.write_text("\n" + json.dumps(data, ensure_ascii=False) + "\n", encoding="utf-8")
    with pytest.raises(RecordError, match=rf"^{re.escape(str(jsonl))}:2: field '{field}': expected "):
        load_records(jsonl)


def test_a_record_takes_a_numpy_bool_as_its_checked_flag():
    game, state = play_random(3, moves=10)
    record = GameRecord.from_game(game, state, checked=np.bool_(True))
    assert record.checked is True and record.to_dict()["checked"] is True
    assert GameRecord.from_game(game, state, checked=np.bool_(False)).checked is False


def test_read_record_refuses_a_one_line_jsonl_whose_bytes_are_not_utf8_even_where_json_would_read_them(tmp_path):
    """A bad byte inside a string of free-form meta still parses as JSON once decoded with surrogates: the line is
    refused as damaged, not read as a record holding a lone surrogate."""
    path = tmp_path / "games.jsonl"
    append_record(GameRecord.from_game(*play_random(1), seed=1, meta={"note": "abc"}), path)
    path.write_bytes(path.read_bytes().replace(b'"abc"', b'"a\xffc"'))
    for read in (read_record, load_records):
        with pytest.raises(RecordError, match=r"games.jsonl:1: not UTF-8 text"):
            read(path)


def test_jsonl_lines_may_end_in_any_newline(tmp_path):
    path = tmp_path / "games.jsonl"
    for seed in (1, 2, 3):
        append_record(GameRecord.from_game(*play_random(seed), seed=seed), path)
    lines = path.read_text(encoding="utf-8").splitlines()
    for newline in ("\r\n", "\r"):
        path.write_bytes(newline.join(lines).encode("utf-8") + newline.encode())
        assert [r.seed for r in load_records(path)] == [1, 2, 3]
        assert read_record(path, 1).seed == 2 and read_record(path, -1).seed == 3
