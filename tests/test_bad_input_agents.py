"""Bad input to the agents' API is refused before any work, with an error naming the value and what was expected."""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest

import agents.evaluation as ev
from agents import make_agent
from agents.evaluation import evaluate
from agents.lines import NUM_KEYS
from agents.mc import MonteCarloAgent
from agents.registry import check_spec
from agents.tables import ValueTables, load_or_train
from pokersquares_env.core import Rules
from pokersquares_env.scoring import point_system


@pytest.fixture(autouse=True)
def _table_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path_factory.getbasetemp() / "pscache"))


# ---------------------------------------------------------------------------- evaluate


@pytest.mark.parametrize("chunk_size", [-3, 0, 2.5, True, "4"])
def test_evaluate_refuses_a_bad_chunk_size_before_any_game(chunk_size, monkeypatch):
    built = []
    monkeypatch.setattr(ev, "_build_or_raise", lambda *args: built.append(args))
    with pytest.raises(ValueError, match=f"chunk_size={chunk_size!r}: expected a positive integer"):
        evaluate("random", games=2, progress=False, chunk_size=chunk_size)
    assert not built


@pytest.mark.parametrize("progress", ["no", 0, None])
def test_progress_must_be_a_bool_not_a_truthy_word(progress, monkeypatch):
    built = []
    monkeypatch.setattr(ev, "_build_or_raise", lambda *args: built.append(args))
    with pytest.raises(TypeError, match=re.escape(f"progress={progress!r}: expected True or False")):
        evaluate("random", games=2, progress=progress)
    assert not built
    from agents.tables import train_tables

    with pytest.raises(TypeError, match="expected True or False"):
        train_tables("american", games=8, phases=2, batch=8, progress=progress)


def test_evaluate_names_a_bad_backend_option_and_the_valid_ones(monkeypatch):
    built = []
    monkeypatch.setattr(ev, "_build_or_raise", lambda *args: built.append(args))
    with pytest.raises(ValueError, match="unknown option\\(s\\) 'x' for backend 'local', which takes no options"):
        evaluate("random", games=1, progress=False, backend_options={"x": 1})
    with pytest.raises(TypeError, match="backend_options=5: expected None or a dict"):
        evaluate("random", games=1, progress=False, backend_options=5)

    def takes_address(tasks, *, jobs=1, address=None):
        yield from ev._local(tasks, jobs=jobs)

    ev.register_backend("test-address", takes_address)
    with pytest.raises(ValueError, match="'port' for backend 'test-address', which takes address"):
        evaluate("random", games=1, progress=False, backend="test-address", backend_options={"port": 1})
    assert not built
    monkeypatch.undo()
    result = evaluate("random", games=2, progress=False, backend="test-address", backend_options={"address": "a"})
    assert result.summary[0]["games"] == 2


def test_evaluate_says_what_agent_specs_must_be():
    with pytest.raises(TypeError, match="agent_specs=5: expected an agent spec such as 'greedy' or a list"):
        evaluate(5, games=1, progress=False)


# ---------------------------------------------------------------------------- value tables


def _tables(**changes) -> ValueTables:
    rng = np.random.default_rng(0)
    fields = dict(values=rng.random((NUM_KEYS, 2, 2)), counts=np.ones((NUM_KEYS, 2, 2)),
                  system=point_system("english"), rules=Rules(jokers=1), games=10, seed=3)
    fields.update(changes)
    return ValueTables(**fields)


def _write_npz(path, values, counts, meta) -> None:
    with open(path, "wb") as fh:
        np.savez_compressed(fh, values=values, counts=counts, meta=np.array(json.dumps(meta)))


def _meta(**changes):
    meta = {"format": "pokersquares-value-tables", "version": 2, "features": "none",
            "system": point_system("english").to_json(), "rules": Rules().to_json(), "games": 10, "seed": 3,
            "policy": "ply=1"}
    meta.update(changes)
    return {k: v for k, v in meta.items() if v is not None}


def test_damaged_table_files_raise_one_value_error_naming_the_file(tmp_path):
    good = tmp_path / "good.npz"
    _tables().save(good)
    data = good.read_bytes()
    values = np.random.default_rng(0).random((NUM_KEYS, 2, 2))
    damaged = {
        "truncated": (data[: len(data) // 2], "not a valid .npz"),
        "empty": (b"", "not a valid .npz"),
        "zip-garbage": (b"PK\x03\x04garbage", "not a valid .npz"),
    }
    for name, (raw, what) in damaged.items():
        path = tmp_path / f"{name}.npz"
        path.write_bytes(raw)
        with pytest.raises(ValueError, match=f"{name}.npz.*{what}"):
            ValueTables.load(path)
    cases = {
        "list-meta": (values, values, ["x"], "meta is a JSON list: expected an object"),
        "no-system": (values, values, _meta(system=None), "meta lacks system"),
        "games-x": (values, values, _meta(games="x"), "games='x': expected an integer >= 0"),
        "bad-rules": (values, values, _meta(rules={"jokers": 7}), "bad rules .*jokers=7"),
        "unknown-rule": (values, values, _meta(rules={"bogus": 1}), "bad rules .*bogus"),
        "bad-system": (values, values, _meta(system="nope"), "bad point system"),
        "nan": (np.full_like(values, np.nan), values, _meta(), "NaN or infinite: expected finite"),
        "text": (np.full(values.shape, "a"), values, _meta(), "dtype <U1: expected floats"),
        "no-phase": (np.zeros((NUM_KEYS, 2, 0)), np.zeros((NUM_KEYS, 2, 0)), _meta(), "no phase"),
        "counts-shape": (values, values[:, :, :1], _meta(), "counts of shape \\(1584, 2, 1\\)"),
    }
    for name, (vals, counts, meta, what) in cases.items():
        path = tmp_path / f"{name}.npz"
        _write_npz(path, vals, counts, meta)
        with pytest.raises(ValueError, match=f"{name}.npz.*{what}"):
            ValueTables.load(path)
    loaded = ValueTables.load(good)  # a good table still loads, as it was saved
    assert loaded.games == 10 and loaded.seed == 3 and loaded.rules == Rules(jokers=1)
    assert loaded.system.name == "english" and loaded.phases == 2


def test_a_table_file_with_one_bad_value_or_a_bad_meta_field_is_refused(tmp_path):
    values = np.random.default_rng(0).random((NUM_KEYS, 2, 2))
    one_inf = values.copy()
    one_inf[0, 0, 0] = np.inf
    cases = {
        "one-inf": (one_inf, _meta(), "1 of 6336 values are NaN or infinite: expected finite numbers"),
        "games-true": (values, _meta(games=True), "games=True: expected an integer >= 0"),
        "seed-false": (values, _meta(seed=False), "seed=False: expected an integer >= 0"),
        "no-seed": (values, _meta(seed=None), "meta lacks seed: expected what ValueTables.save writes"),
    }
    for name, (vals, meta, what) in cases.items():
        path = tmp_path / f"{name}.npz"
        _write_npz(path, vals, values, meta)
        with pytest.raises(ValueError, match=re.escape(f"value tables {str(path)!r}: {what}")):
            ValueTables.load(path)


def test_a_table_file_without_a_policy_was_learned_by_self_play(tmp_path):
    """Files written before ``policy`` was recorded hold ``train_tables``'s one-ply self-play values."""
    path = tmp_path / "old.npz"
    values = np.random.default_rng(0).random((NUM_KEYS, 2, 2))
    _write_npz(path, values, values, _meta(policy=None))
    assert ValueTables.load(path).policy == "ply=1"


def test_a_table_file_that_is_not_an_npz_gets_our_message_not_numpys_pickle_advice(tmp_path):
    """Before, a junk ``tables=`` file passed on NumPy's 'you can load it unsafely using the allow_pickle= keyword
    argument': advice never to follow for a file of tables."""
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"junk\n")
    objects = tmp_path / "objects.npz"
    np.savez(objects, meta=np.array([{"a": 1}], dtype=object), values=np.zeros(3), counts=np.zeros(3))
    for path, why in ((junk, "not a zip archive \\(an .npz is one\\)"),
                      (objects, "it holds Python objects \\(pickled\\), not arrays of numbers")):
        with pytest.raises(ValueError) as error:
            ValueTables.load(path)
        message = str(error.value)
        assert re.fullmatch(f"value tables {re.escape(repr(str(path)))} are not a valid .npz written by "
                            f"ValueTables.save: {why}", message), message
        assert "allow_pickle" not in message and "unsafely" not in message


def _zip_version_9_9(good: bytes) -> bytes:
    """``good`` with its central directory's "version needed to extract" set to 9.9: zipfile raises
    NotImplementedError."""
    bad = bytearray(good)
    bad[bad.index(b"PK\x01\x02") + 6] = 99
    return bytes(bad)


def _npy_header_without_brace(good: bytes) -> bytes:
    """An .npz whose ``meta.npy`` header lost its closing brace: numpy's header parser raises tokenize.TokenError."""
    import io
    import zipfile

    npy = io.BytesIO()
    np.save(npy, np.zeros(3))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("meta.npy", npy.getvalue().replace(b"), }", b"),  "))
    return buf.getvalue()


@pytest.mark.parametrize("raw", [b"", b"PK\x03\x04garbage", b"not a table", _zip_version_9_9,
                                 _npy_header_without_brace])
def test_a_damaged_cache_entry_is_retrained_and_overwritten(tmp_path, raw, capsys):
    """The last two crashed (NotImplementedError, tokenize.TokenError) instead of being retrained."""
    from agents.tables import _cache_name

    fresh = load_or_train("american", games=200, phases=2, cache=tmp_path)
    path = tmp_path / _cache_name(point_system("american"), Rules(), 200, 2, 0, "none")
    assert path.exists()
    path.write_bytes(raw(path.read_bytes()) if callable(raw) else raw)
    with pytest.raises(ValueError, match=re.escape(f"value tables {str(path)!r} are not a valid .npz written by "
                                                   "ValueTables.save: ")):
        ValueTables.load(path)  # what the cache reads it with: our error, naming the file
    capsys.readouterr()
    again = load_or_train("american", games=200, phases=2, cache=tmp_path)
    assert "training value tables" in capsys.readouterr().err
    assert np.array_equal(again.values, fresh.values)
    assert np.array_equal(ValueTables.load(path).values, fresh.values)  # the entry was replaced
    assert load_or_train("american", games=200, phases=2, cache=tmp_path).games == 200
    assert "training" not in capsys.readouterr().err


@pytest.mark.parametrize("option, value", [("games", 0), ("games", True), ("games", 2.5), ("phases", 0)])
def test_load_or_train_names_a_bad_training_size(tmp_path, option, value):
    with pytest.raises(ValueError, match=f"{option}={value!r}: expected a positive integer"):
        load_or_train("american", cache=tmp_path, **{option: value})
    assert not os.listdir(tmp_path)


# ---------------------------------------------------------------------------- mc


@pytest.mark.parametrize("spec, match", [
    ("mc:seconds=true,rollout=heuristic", "seconds=True: expected a finite positive number"),
    ("mc:seconds=inf,rollout=heuristic", "seconds=inf: expected a finite positive number"),
    ("mc:seconds=nan,rollout=heuristic", "seconds=nan: expected a finite positive number"),
    ("mc:round=-5,rollout=heuristic", "round=-5: expected a positive integer"),
    ("mc:round=2.7,rollout=heuristic", "round=2.7: expected a positive integer"),
    ("mc:round=abc,rollout=heuristic", "round='abc': expected a positive integer"),
    ("mc:round=true,rollout=heuristic", "round=True: expected a positive integer"),
    ("mc:games=0", "games=0: expected a positive integer"),
    ("mc:phases=0", "phases=0: expected a positive integer"),
    ("mc:phases=27", r"phases=27: expected an integer from 1 to 26"),  # a review: phases no game visits
    ("mc:games=true", "games=True: expected a positive integer"),
    # a mutation audit found these accepted unseen: no time, an unknown rollout policy, no cells to roll out
    ("mc:seconds=0,rollout=heuristic", "seconds=0: expected a finite positive number"),
    ("mc:rollout=bogus", "rollout='bogus': expected one of tables, heuristic"),
    ("mc:candidates=0,rollout=heuristic", "candidates=0: expected a positive integer"),
])
def test_mc_refuses_bad_options_before_training(spec, match, monkeypatch):
    import agents.tables

    monkeypatch.setattr(agents.tables, "train_tables", lambda *a, **k: pytest.fail("trained tables"))
    with pytest.raises(ValueError, match=match):
        make_agent(spec)


def test_mc_keeps_good_seconds_and_round():
    agent = MonteCarloAgent(seconds=0.01, round=3, rollout="heuristic")
    assert agent.seconds == 0.01 and agent.round == 3
    agent = MonteCarloAgent(rollout="heuristic")
    assert (agent.rollouts, agent.seconds, agent.round, agent.candidates) == (64, None, 8, 5)
    assert make_agent("mc:rollouts=none,round=none,seconds=0.5,rollout=heuristic").seconds == 0.5  # none: not given
    # numpy numbers count as the numbers they hold (before, candidates=np.int64(3) was "expected a positive integer")
    agent = MonteCarloAgent(rollout="heuristic", candidates=np.int64(3), seconds=np.float32(0.25))
    assert (agent.candidates, agent.seconds) == (3, 0.25) and type(agent.candidates) is int
    with pytest.raises(ValueError, match=r"seconds=(?:np\.)?True_?: expected a finite positive number"):
        MonteCarloAgent(rollout="heuristic", seconds=np.True_)


@pytest.mark.parametrize("spec, message", [
    ("mc:rollout=heuristic,rollouts=100000,seconds=0.01",
     "rollouts=100000 with seconds=0.01: a move runs either a fixed number of rollouts per cell (rollouts) or "
     "rollouts for a time (seconds, added in rounds of round): expected one of them"),
    ("mc:rollout=heuristic,rollouts=64,seconds=2", "rollouts=64 with seconds=2: "),  # given at the default: given
    ("mc:rollout=heuristic,round=3", "round=3 without seconds: round is the number of rollouts added at a time while "
                                     "a seconds budget lasts; expected seconds with it"),
    ("mc:rollout=heuristic,rollouts=10,round=3", "round=3 without seconds"),
    ("expectimax:ply=1,top=9", "top=9 with ply=1: top is the number of best two-ply cells that ply=3 re-rates; "
                               "expected ply=3 with it (or no top)"),
    ("expectimax:top=2", "top=2 with ply=2: "),
])
def test_options_that_would_be_ignored_are_refused_naming_both(spec, message, _no_training):
    """Before: mc ran its time budget whatever rollouts said, round did nothing without seconds, and top did nothing
    below ply=3 -- all silently."""
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        make_agent(spec)


# ---------------------------------------------------------------------------- make_agent


def test_make_agent_names_a_bad_seed_a_repeated_option_and_bad_rules():
    for seed in ("x", -1, True, 1.5):
        with pytest.raises(ValueError, match=f"seed={seed!r}: expected an integer >= 0"):
            make_agent("random", seed=seed)
    with pytest.raises(ValueError, match="option 'rollouts' is given twice"):
        make_agent("mc:rollouts=1,rollouts=2,rollout=heuristic")
    with pytest.raises(ValueError, match="option 'rollouts' is given twice"):
        check_spec("mc:rollouts=1, rollouts=2")  # what evaluate checks before any agent is built
    with pytest.raises(ValueError, match="unknown rule option\\(s\\) \\['bogus'\\]: expected jokers, placement, "
                                         "first_cell"):
        make_agent("random", rules={"bogus": 1})
    assert make_agent("random", seed=np.int64(3), rules={"jokers": 1}) is not None


def test_an_agent_built_or_reseeded_directly_names_a_bad_seed_and_keeps_its_generator():
    """Before: ``Agent.seed(True)`` was taken as 1 and ``seed(1.5)``, ``seed("3")``, ``RandomAgent(seed=-1)`` failed
    in NumPy's words; make_agent's own check was bypassed."""
    from agents.simple import RandomAgent

    agent = RandomAgent(seed=4)
    before = agent.rng.bit_generator.state
    for seed in (True, 1.5, "3", -1):
        with pytest.raises(ValueError, match=f"^seed={re.escape(repr(seed))}: expected an integer >= 0$"):
            RandomAgent(seed=seed)
        with pytest.raises(ValueError, match=f"^seed={re.escape(repr(seed))}: expected an integer >= 0$"):
            agent.seed(seed)
        assert agent.rng.bit_generator.state == before
    agent.seed(np.int64(4))
    agent.seed(None)


@pytest.mark.parametrize("spec, key", [("expectimax:cache=", "cache"), ("mc:rollout=heuristic,cache= ", "cache"),
                                       ("search:tables=,rollouts=4", "tables"),
                                       ("mc:rollout=heuristic,cache= ,rollouts=2", "cache")])
def test_an_option_without_a_value_is_refused(spec, key, _no_training):
    """Before: ``cache=`` was read as '' and silently turned the table cache off (400,000 games retrained on every
    build); ``tables=`` looked for a file named ''."""
    with pytest.raises(ValueError, match=f"option '{key}' has no value: expected {key}=VALUE"):
        make_agent(spec)
    with pytest.raises(ValueError, match="has no value"):
        check_spec(spec)


def test_spec_words_for_booleans_and_none_are_the_documented_ones():
    from agents.registry import parse_spec

    options = parse_spec("mc:a=true,b=YES,c=on,d=false,e=No,f=OFF,g=none,h=Null,i=maybe")[2]
    assert options == {"a": True, "b": True, "c": True, "d": False, "e": False, "f": False, "g": None, "h": None,
                       "i": "maybe"}
    from pathlib import Path

    doc = (Path(__file__).parent.parent / "docs" / "agents.md").read_text()
    assert "`true`/`yes`/`on`" in doc and "`false`/`no`/`off`" in doc and "`none`/`null`" in doc


@pytest.mark.parametrize("spec, message", [("expectimax:ply=true", "ply=True: expected 1, 2 or 3"),
                                           ("expectimax:ply=2.0", "ply=2.0: expected 1, 2 or 3"),
                                           ("search:ply=2.0", "ply=2.0: expected 2 or 3")])
def test_ply_must_be_an_integer(spec, message):
    """True and 2.0 used to pass `ply in (1, 2, 3)` as 1 and 2."""
    with pytest.raises(ValueError, match=re.escape(message)):
        make_agent(spec)


def test_tune_tables_refuses_zero_training_games_instead_of_the_default(tmp_path):
    pytest.importorskip("numba")
    from agents.experiments.tune_tables import tune_tables_experiment

    with pytest.raises(ValueError, match="tables_games=0: expected a positive integer"):
        tune_tables_experiment(str(tmp_path / "t"), tables_games=0, progress=False)
    assert not (tmp_path / "t").exists()


# ---------------------------------------------------------------------------- evaluate: argument types


@pytest.mark.parametrize("call, error, message", [
    (dict(agent_specs=["greedy", ["x"]]), TypeError,
     "agent_specs: ['x'] (list) is not an agent spec: expected a string such as 'greedy'"),
    (dict(agent_specs=("greedy", 5)), TypeError, "agent_specs: 5 (int) is not an agent spec"),
    (dict(backend=["local"]), TypeError, "backend=['local']: expected the name of a back end, one of local"),
    (dict(backend=None), TypeError, "backend=None: expected the name of a back end"),
    (dict(out_dir=5), TypeError, "out_dir=5 (int): expected the path of a folder (a str or os.PathLike)"),
    (dict(out_dir=b"x"), TypeError, "out_dir=b'x' (bytes): expected the path of a folder"),
])
def test_evaluate_names_an_argument_of_the_wrong_type(call, error, message, monkeypatch, tmp_path):
    """These were a bare ``unhashable type: 'list'`` or ``os.fspath`` TypeError naming no argument."""
    built = []
    monkeypatch.setattr(ev, "_build_or_raise", lambda *args: built.append(args))
    monkeypatch.chdir(tmp_path)
    call = dict(call)
    specs = call.pop("agent_specs", "greedy")
    with pytest.raises(error, match=re.escape(message)):
        evaluate(specs, games=1, progress=False, **call)
    with pytest.raises(error, match=re.escape(message)):
        ev.evaluate_pps(specs, systems=["american"], games=1, progress=False, **call)
    assert not built and not os.listdir(tmp_path)


# ---------------------------------------------------------------------------- evaluate_pps: systems


def _table(one_pair: int) -> dict:
    from pokersquares_env.scoring import POINT_SYSTEMS

    return {**POINT_SYSTEMS["american"], "one_pair": one_pair}


@pytest.mark.parametrize("systems, names", [
    ("english", ["english"]),  # was iterated into letters: "unknown point system 'e'"
    (" English ", ["english"]),
    (point_system("english"), ["english"]),
    (_table(3), ["custom"]),
    ({"name": "mine", "points": _table(3)}, ["mine"]),
])
def test_evaluate_pps_takes_one_point_system_as_a_one_system_list(systems, names):
    result = ev.evaluate_pps("greedy", systems=systems, games=1, progress=False)
    assert list(result.results) == names
    assert [row["system"] for row in result.summary] == names


def test_evaluate_pps_takes_a_point_system_file_and_refuses_a_non_system(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(_table(3)))
    assert list(ev.evaluate_pps("greedy", systems=path, games=1, progress=False).results) == ["mine"]
    with pytest.raises(TypeError, match=re.escape("systems=5: expected 'pps', a point system (a name, a mapping")):
        ev.evaluate_pps("greedy", systems=5, games=1, progress=False)


def test_evaluate_pps_tells_different_unnamed_tables_apart(tmp_path):
    """Two different tables without a name were refused as a repeat of 'custom', which they are not."""
    out = tmp_path / "out"
    result = ev.evaluate_pps("greedy", systems=[_table(1), "english", _table(3)], games=1, progress=False,
                             out_dir=out)
    assert list(result.results) == ["custom-1", "english", "custom-2"]
    assert [row["system"] for row in result.summary] == ["custom-1", "english", "custom-2"]
    assert result.results["custom-1"].system.points != result.results["custom-2"].system.points
    assert result.results["custom-2"].system["one_pair"] == 3
    assert {"custom-1", "english", "custom-2"} <= set(os.listdir(out))  # one folder each, none overwritten
    assert (out / "custom-2" / "games.jsonl").exists()
    assert json.loads((out / "evaluation.json").read_text())["systems"] == ["custom-1", "english", "custom-2"]
    # a name already given is skipped
    named = ev.evaluate_pps("greedy", systems=[_table(1), {"name": "custom-1", "points": _table(3)}, _table(5)],
                            games=1, progress=False)
    assert list(named.results) == ["custom-2", "custom-1", "custom-3"]


@pytest.mark.parametrize("systems, message", [
    ([_table(1), "english", dict(_table(1))],
     "systems repeat a point system: 'custom' (systems[0] and systems[2]) have the same points and win threshold"),
    (["american", "english", "american"], "systems repeat a point system: 'american' (systems[0] and systems[2])"),
    ([{"name": "a", "points": _table(1)}, {"name": "b", "points": _table(1)}],
     "systems repeat a point system: 'a' and 'b' (systems[0] and systems[1])"),
    ([{"name": "x", "points": _table(1)}, {"name": "x", "points": _table(2)}],
     "systems: systems[0] and systems[1] are both named 'x' but have different points: expected a distinct name"),
    (["english", {"name": "../up", "points": _table(1)}],  # its results would be saved outside out_dir
     "systems[1] is named '../up': expected a name that can be a folder name"),
    (["english", {"name": "bad\0name", "points": _table(1)}],  # before: "embedded null byte", english played
     "systems[1] is named 'bad\\x00name': expected a name that can be a folder name (no path separators or NUL"),
    (["english", {"name": "x" * 256, "points": _table(1)}],  # before: refused by the OS at its turn, english played
     "systems[1] is named 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'... (256 bytes): expected a name of at most 255"),
    (["english", {"name": "é" * 128, "points": _table(1)}],  # 256 bytes in UTF-8
     "(256 bytes): expected a name of at most 255 bytes"),
])
def test_evaluate_pps_refuses_a_true_repeat_and_a_name_given_to_two_tables(systems, message, monkeypatch, tmp_path):
    played = []
    monkeypatch.setattr(ev, "_evaluate", lambda *args, **kwargs: played.append(kwargs))
    with pytest.raises(ValueError, match=re.escape(message)):
        ev.evaluate_pps("greedy", systems=systems, games=1, progress=False, out_dir=tmp_path / "out")
    assert not played and not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------- table options


@pytest.fixture
def _no_training(monkeypatch):
    import agents.tables

    monkeypatch.setattr(agents.tables, "train_tables", lambda *a, **k: pytest.fail("trained tables"))


@pytest.mark.parametrize("spec, given", [
    ("mc:rollout=heuristic,tables=/nonexistent,features=bogus", "tables='/nonexistent', features='bogus'"),
    ("mc:rollout=heuristic,games=100", "games=100"),
    ("mc:rollout=heuristic,phases=4", "phases=4"),
    ("mc:rollout=heuristic,features=outs", "features='outs'"),
    ("mc:rollout=heuristic,cache=false", "cache=False"),
    ("mc:rollout=heuristic,cache=/tmp/elsewhere", "cache='/tmp/elsewhere'"),
])
def test_mc_refuses_table_options_with_the_heuristic_rollout(spec, given, _no_training):
    """They were silently ignored: the heuristic rollout has no tables for them to choose."""
    with pytest.raises(ValueError, match=re.escape(f"{given} with rollout='heuristic': tables, games, phases, "
                                                   f"features and cache choose the learned tables of "
                                                   f"rollout='tables'")):
        make_agent(spec)


def test_mc_heuristic_still_takes_the_table_options_defaults(_no_training):
    for spec in ("mc:rollout=heuristic", "mc:rollout=heuristic,features=none,cache=true",
                 "mc:seconds=0.04,round=4,rollout=heuristic"):
        assert make_agent(spec).name == "mc"
    assert MonteCarloAgent(rollout="heuristic", features="none", cache=True, tables=None).rollouts == 64


@pytest.mark.parametrize("spec, error, message", [
    ("expectimax:backend=gpu", ValueError, "backend='gpu': expected one of"),
    ("search:backend=gpu,rollouts=2", ValueError, "backend='gpu': expected one of"),
    ("expectimax:ply=3,backend=numpy", ValueError, "ply=3 needs the compiled backend (numba, the fast extra; "
                                                   "backend='numpy'): there is no numpy path for it"),
    ("search:ply=3,endgame=2,backend=numpy", ValueError, "ply=3, endgame=2 needs the compiled backend"),
    ("expectimax:features=claims,backend=numpy", ValueError, "features='claims' needs the compiled backend"),
    ("expectimax:features=straights,ply=3", ValueError, "ply=3 needs the compiled kernels, which cannot read "
                                                        "features='straights' tables"),
    ("search:rollout_tables=/nonexistent/t.npz", FileNotFoundError,
     "rollout_tables='/nonexistent/t.npz': no such file; expected the path of a .npz written by ValueTables.save"),
    ("search:rollout=ply2,rollout_tables=/nonexistent/t.npz", ValueError,
     "rollout_tables needs rollout='ply1' (two-ply rollouts play on the main tables)"),
])
def test_options_the_agent_cannot_play_are_refused_before_the_tables_train(spec, error, message, _no_training,
                                                                           monkeypatch):
    """These were refused only after the (default: 30-60 s) training; a missing rollout_tables file was 'value tables
    ... do not exist', naming no option."""
    import agents.tables

    monkeypatch.setattr(agents.tables, "_TRAINED", {}, raising=False)  # no tables trained earlier in this process
    with pytest.raises(error, match=re.escape(message)):
        make_agent(spec)


@pytest.mark.parametrize("spec, message", [
    ("expectimax:cache=1", "cache=1: expected true, false or a folder (a spec reads a name of digits as a number: "
                           "give ./1 for a folder of that name)"),
    ("mc:cache=1", "cache=1: expected true, false or a folder"),
    ("mc:cache=2.5", "cache=2.5: expected true, false or a folder"),
    ("search:cache=0", "cache=0: expected true, false or a folder"),
    ("expectimax:tables=5", "tables=5: expected the path of a .npz written by ValueTables.save, or none (a spec "
                            "reads a name of digits as a number: give ./5 for a file of that name)"),
    ("expectimax:tables=true", "tables=True: expected the path of a .npz"),
    ("mc:tables=5", "tables=5: expected the path of a .npz"),
    ("search:tables=5", "tables=5: expected the path of a .npz"),
    ("search:rollout_tables=5", "rollout_tables=5: expected the path of a .npz"),
])
def test_cache_and_tables_of_the_wrong_type_are_named(spec, message, _no_training):
    """These were ``TypeError: expected str, bytes or os.PathLike object, not int`` from os.fspath."""
    with pytest.raises(ValueError, match=re.escape(message)):
        make_agent(spec)


def test_load_or_train_and_load_name_a_cache_or_path_of_the_wrong_type(_no_training):
    with pytest.raises(ValueError, match=re.escape("cache=1: expected true, false or a folder")):
        load_or_train("american", games=10, phases=2, cache=1)
    with pytest.raises(TypeError, match=re.escape("value tables path 5: expected the path of a .npz file")):
        ValueTables.load(5)


def test_more_games_than_an_evaluation_can_hold_are_refused_before_any_work(monkeypatch):
    """``--games 10**24`` sat silent while its deal indices filled the memory (2.3 GB in 12 s)."""
    built = []
    monkeypatch.setattr(ev, "_build_or_raise", lambda *args: built.append(args))
    with pytest.raises(ValueError, match=r"games=1000000000000000000000000: expected at most 100,000,000"):
        evaluate("random", games=10**24, progress=False)
    with pytest.raises(ValueError, match=r"games=100000001: expected at most 100,000,000"):
        ev.evaluate_pps("random", games=ev.MAX_GAMES + 1, progress=False)
    assert not built


def test_evaluate_pps_takes_a_system_name_of_255_bytes(monkeypatch):
    """The longest name a folder can have on the usual file systems passes (256 bytes is refused, above)."""
    played = []
    monkeypatch.setattr(ev, "_evaluate", lambda *args, **kwargs: played.append(kwargs))
    ev.evaluate_pps("greedy", systems=["english", {"name": "x" * 255, "points": _table(1)}], games=1, progress=False)
    assert len(played) == 2
