"""The learned tables (agents.tables): saving, loading and caching them, and the agents' checks of a ``tables=`` file
(search's ``rollout_tables`` are in test_search.py, tune-tables in test_tuning.py)."""

from __future__ import annotations

import json
import os
import re
import threading
import warnings

import numpy as np
import pytest

from agents import make_agent
from agents.batch import NUM_OUTS_CLAIMS
from agents.lines import NUM_KEYS
from agents.tables import ValueTables, _cache_name, load_or_train, train_tables
from pokersquares_env.core import Rules
from pokersquares_env.scoring import point_system

SMALL = dict(games=2000, phases=4)


@pytest.fixture(autouse=True)
def _table_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path_factory.getbasetemp() / "pscache"))


@pytest.fixture(scope="module")
def outs_table() -> ValueTables:
    return train_tables("american", features="outs", **SMALL)


def _leftovers(folder, keep) -> list[str]:
    return sorted(name for name in os.listdir(folder) if name not in keep)


# ----------------------------------------------------------------------------- save: atomic, per writer


def test_concurrent_saves_in_one_process_do_not_collide(tmp_path, monkeypatch, outs_table):
    """Threads of one process saving the same table at once shared one temporary file name (``PATH.PID.tmp.npz``):
    the first rename took it and the others raised FileNotFoundError."""
    path = tmp_path / "t.npz"
    barrier = threading.Barrier(4)
    write = np.savez_compressed

    def write_then_wait(*args, **kwargs):  # every thread has written its file before any renames it
        write(*args, **kwargs)
        barrier.wait(timeout=60)

    monkeypatch.setattr(np, "savez_compressed", write_then_wait)
    errors: list[BaseException] = []

    def save():
        try:
            outs_table.save(path)
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=save) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []
    np.testing.assert_array_equal(ValueTables.load(path).values, outs_table.values)
    assert _leftovers(tmp_path, {"t.npz"}) == []  # no temporary file left behind


def test_a_failed_rename_is_harmless_only_when_the_target_holds_the_table(tmp_path, monkeypatch, outs_table):
    path = tmp_path / "t.npz"
    outs_table.save(path)
    assert ValueTables.load(path).features == "outs"

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied", dst)

    monkeypatch.setattr(os, "replace", refuse)
    outs_table.save(path)  # another writer already put this very table there: nothing lost
    other = ValueTables(outs_table.values + 1.0, outs_table.counts, outs_table.system, outs_table.rules,
                        outs_table.games, outs_table.seed)
    with pytest.raises(PermissionError):
        other.save(path)  # the target holds another table: the failure is not hidden
    assert _leftovers(tmp_path, {"t.npz"}) == []  # and no temporary file is left either way
    np.testing.assert_array_equal(ValueTables.load(path).values, outs_table.values)


@pytest.mark.parametrize("field", ["counts", "games", "seed", "policy"])
def test_a_failed_rename_is_not_hidden_when_the_target_holds_a_table_trained_otherwise(tmp_path, monkeypatch,
                                                                                     outs_table, field):
    """Equal values are not the same table: a target of other counts, games, seed or policy is another writer's
    table, and a failed rename onto it must raise (a mutation audit compared only the values and points, unseen)."""
    import dataclasses

    path = tmp_path / "t.npz"
    outs_table.save(path)
    changed = {"counts": outs_table.counts + 1, "games": outs_table.games + 1, "seed": outs_table.seed + 1,
               "policy": outs_table.policy + "+ply=2x10"}[field]
    other = dataclasses.replace(outs_table, **{field: changed})

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied", dst)

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(PermissionError):
        other.save(path)
    assert _leftovers(tmp_path, {"t.npz"}) == []
    kept = ValueTables.load(path)  # the target is left as it was
    assert (kept.games, kept.seed, kept.policy) == (outs_table.games, outs_table.seed, outs_table.policy)
    np.testing.assert_array_equal(kept.counts, outs_table.counts)


def test_save_names_no_npz_twice_and_keeps_the_mode_of_a_plain_file(tmp_path, outs_table):
    path = tmp_path / "plain"  # no .npz suffix: saved under exactly this name
    outs_table.save(path)
    assert os.listdir(tmp_path) == ["plain"]
    assert ValueTables.load(path).phases == 4
    umask = os.umask(0)
    os.umask(umask)
    assert os.stat(path).st_mode & 0o777 == 0o666 & ~umask


# ----------------------------------------------------------------------------- load: what the meta says is checked


def _rewrite(src, dst, **meta_changes) -> None:
    with np.load(src) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(str(arrays["meta"]))
    meta.update(meta_changes)
    arrays["meta"] = np.array(json.dumps({k: v for k, v in meta.items() if v is not None}))
    with open(dst, "wb") as fh:
        np.savez_compressed(fh, **arrays)


@pytest.mark.parametrize("changes, match", [
    ({"version": 1}, r"format version 1 \(an older version of the package wrote it\): expected version 2"),
    ({"version": 99}, r"format version 99 \(a newer version of the package wrote it\): expected version 2"),
    ({"version": None}, r"format version None \(missing or not a whole number\): expected version 2"),
    ({"version": "2"}, r"format version '2' \(missing or not a whole number\)"),
    ({"version": True}, r"format version True \(missing or not a whole number\)"),
    ({"features": "claims"}, r"meta says features='claims', but values of shape \(1584, 2, 4, 30\) are those of "
                             r"features='outs'"),
    ({"features": "none"}, r"meta says features='none'.*features='outs'"),
    ({"features": None}, r"meta says features=None"),
])
def test_load_checks_the_format_version_and_the_features(tmp_path, outs_table, changes, match):
    good = tmp_path / "good.npz"
    outs_table.save(good)
    bad = tmp_path / "bad.npz"
    _rewrite(good, bad, **changes)
    with pytest.raises(ValueError, match=re.escape(f"value tables '{bad}': ") + match):
        ValueTables.load(bad)
    assert ValueTables.load(good).features == "outs"


def test_load_of_a_missing_file_names_its_whole_path(tmp_path):
    path = tmp_path / "sub" / "nope.npz"
    # the message says what the file must be and how to make one, from Python or from the command line
    with pytest.raises(FileNotFoundError, match=re.escape(f"value tables {str(path)!r} do not exist: expected a .npz "
                                                          "written by ValueTables.save (train_tables(...).save(path) "
                                                          "from Python, or the tables.npz of pokersquares experiment "
                                                          "tune-tables)")):
        ValueTables.load(path)


@pytest.mark.parametrize("key", ["games", "seed"])
def test_load_refuses_a_negative_games_or_seed_naming_it(tmp_path, outs_table, key):
    good = tmp_path / "good.npz"
    outs_table.save(good)
    bad = tmp_path / "bad.npz"
    _rewrite(good, bad, **{key: -1})
    with pytest.raises(ValueError, match=re.escape(f"value tables '{bad}': {key}=-1: expected an integer >= 0")):
        ValueTables.load(bad)


def test_load_refuses_values_of_five_axes_naming_their_shape(tmp_path, outs_table):
    """Values of one axis more than an outs table (whose fourth axis is an outs size) are no table (a mutation audit
    let five axes through, unseen)."""
    good = tmp_path / "good.npz"
    outs_table.save(good)
    with np.load(good) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["values"], arrays["counts"] = arrays["values"][..., None], arrays["counts"][..., None]
    bad = tmp_path / "bad.npz"
    np.savez_compressed(bad, **arrays)
    with pytest.raises(ValueError, match=re.escape(f"value tables '{bad}': expected format 'pokersquares-value-tables' "
                                                   "with values of shape") + r".*got 'pokersquares-value-tables' "
                       + re.escape(f"({NUM_KEYS}, 2, 4, 30, 1)")):
        ValueTables.load(bad)


def test_an_empty_zip_archive_is_not_called_a_non_zip(tmp_path):
    """An empty zip archive (end-of-central-directory record only) is a zip: it lacks the table's arrays, and the
    message must not say it is no zip archive (a mutation audit dropped the empty-archive signature unseen)."""
    import zipfile

    path = tmp_path / "empty.npz"
    with zipfile.ZipFile(path, "w"):
        pass
    assert path.read_bytes()[:4] == b"PK\x05\x06"
    with pytest.raises(ValueError, match=re.escape(f"value tables {str(path)!r} are not a valid .npz written by "
                                                   "ValueTables.save: ")) as error:
        ValueTables.load(path)
    assert "meta" in str(error.value) and "not a zip archive" not in str(error.value)


# ----------------------------------------------------------------------------- load_or_train: the cache


def test_a_cached_table_of_other_options_is_retrained_and_replaced(tmp_path, capsys):
    ps, kw = point_system("american"), dict(games=300, phases=2, cache=tmp_path)
    american = load_or_train(ps, **kw)
    key = tmp_path / _cache_name(ps, Rules(), 300, 2, 0, "none")
    for other, said in ((load_or_train("english", **kw), "points"),
                        (load_or_train(ps, Rules(jokers=1), **kw), "rules"),
                        (load_or_train(ps, games=300, phases=3, cache=tmp_path), "phases"),
                        (load_or_train(ps, games=300, phases=2, features="outs", cache=tmp_path), "features"),
                        (load_or_train(ps, games=301, phases=2, cache=tmp_path), "games")):
        other.save(key)  # a table of other options copied onto the key of the plain American one
        capsys.readouterr()
        got = load_or_train(ps, **kw)
        err = capsys.readouterr().err
        assert "training value tables" in err and f"holds tables trained for other {said}" in err, err
        assert tuple(got.system.points) == tuple(ps.points) and got.rules == Rules() and got.phases == 2
        assert got.features == "none" and got.games == 300
        np.testing.assert_array_equal(got.values, american.values)
        np.testing.assert_array_equal(ValueTables.load(key).values, american.values)  # the entry was replaced
    capsys.readouterr()
    load_or_train(ps, **kw)
    assert "training" not in capsys.readouterr().err  # a good entry is read, not retrained


def test_a_cache_folder_that_is_a_file_warns_and_the_tables_are_still_used(tmp_path, monkeypatch):
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    with pytest.warns(RuntimeWarning, match=re.escape(f"could not cache the value tables in '{afile}'")):
        tables = load_or_train("american", games=300, phases=2, cache=afile)
    assert tables.games == 300 and tables.phases == 2 and afile.read_text() == "not a folder"
    monkeypatch.setenv("POKERSQUARES_CACHE", str(afile))  # the cache root itself a file
    with pytest.warns(RuntimeWarning, match=re.escape(f"could not cache the value tables in '{afile / 'tables'}'")
                      + r" \((NotADirectoryError|FileExistsError): "):
        assert load_or_train("american", games=300, phases=2).games == 300


def test_a_read_only_cache_warns_and_the_tables_are_still_used(tmp_path, monkeypatch):
    def read_only(self, path):
        raise PermissionError(13, "Permission denied", os.fspath(path))

    monkeypatch.setattr(ValueTables, "save", read_only)  # as a read-only folder (tests may run as root)
    with pytest.warns(RuntimeWarning, match=re.escape(f"could not cache the value tables in '{tmp_path}' ")
                      + r"\(PermissionError: .*Permission denied"):
        tables = load_or_train("american", games=300, phases=2, cache=tmp_path)
    assert tables.games == 300 and os.listdir(tmp_path) == []


@pytest.fixture
def trainings(monkeypatch):
    """The ``games`` of every training ``load_or_train`` starts, with no tables kept from earlier tests."""
    import agents.tables

    monkeypatch.setattr(agents.tables, "_TRAINED", {}, raising=False)
    real, calls = agents.tables.train_tables, []

    def counted(*args, **kwargs):
        calls.append(kwargs["games"])
        return real(*args, **kwargs)

    monkeypatch.setattr(agents.tables, "train_tables", counted)
    return calls


def test_uncached_tables_are_trained_once_per_process_not_once_per_evaluation_chunk(trainings, tmp_path, capsys):
    """Evaluation builds a fresh agent for every chunk of deals: with cache=false each trained the tables again
    (five times for four chunks)."""
    from agents.evaluation import evaluate

    spec = "expectimax:games=512,phases=2,features=none,ply=1,backend=numpy"
    capsys.readouterr()
    uncached = evaluate([f"{spec},cache=false"], games=8, jobs=1, chunk_size=2, progress=False)
    assert trainings == [512] and capsys.readouterr().err.count("training value tables") == 1
    cached = evaluate([f"{spec},cache={tmp_path}"], games=8, jobs=1, chunk_size=2, progress=False)
    assert trainings == [512]  # offered to the cache folder, not trained again
    assert len(os.listdir(tmp_path)) == 1
    assert uncached.summary[0]["mean"] == cached.summary[0]["mean"]  # the same tables, the same games


def test_uncached_tables_offered_to_a_cache_folder_stay_kept_for_later_calls_without_one(trainings, tmp_path):
    """Saving kept tables to a folder dropped them from memory: the next ``cache=False`` call trained them again."""
    first = load_or_train("american", games=300, phases=2, seed=4, cache=False)
    load_or_train("american", games=300, phases=2, seed=4, cache=tmp_path)  # offered to the folder
    assert len(os.listdir(tmp_path)) == 1
    again = load_or_train("american", games=300, phases=2, seed=4, cache=False)
    assert trainings == [300]
    np.testing.assert_array_equal(again.values, first.values)


def test_tables_an_unwritable_cache_cannot_take_are_trained_once(trainings, tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    for _ in range(2):  # the warning still comes every time: the folder is asked for and cannot take them
        with pytest.warns(RuntimeWarning, match=re.escape(f"could not cache the value tables in '{afile}'")):
            first = load_or_train("american", games=300, phases=2, seed=4, cache=afile)
    assert trainings == [300]
    first.values[:] = 0.0  # a caller writing to its tables does not change those kept for the next one
    again = load_or_train("american", games=300, phases=2, seed=4, cache=False)
    assert trainings == [300] and again.values.any()
    np.testing.assert_array_equal(again.values, train_tables("american", games=300, phases=2, seed=4).values)
    load_or_train("american", games=300, phases=3, seed=4, cache=False)  # other options: trained
    load_or_train("english", games=300, phases=2, seed=4, cache=False)
    load_or_train("american", Rules(jokers=1), games=300, phases=2, seed=4, cache=False)
    assert trainings == [300] * 4


def test_a_tilde_in_cache_tables_and_the_cache_variable_is_the_home_folder(tmp_path, monkeypatch):
    """``cache=~/x`` made a folder literally named '~' in the working folder."""
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    home.mkdir()
    cwd.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(cwd)
    name = _cache_name(point_system("american"), Rules(), 200, 2, 0, "none")
    tables = load_or_train("american", games=200, phases=2, cache="~/tc")
    assert os.listdir(home / "tc") == [name]
    monkeypatch.setenv("POKERSQUARES_CACHE", "~/pc")
    from agents.tables import cache_dir

    assert cache_dir() == str(home / "pc" / "tables")
    load_or_train("american", games=200, phases=2)
    assert os.listdir(home / "pc" / "tables") == [name]
    tables.save("~/t.npz")
    assert (home / "t.npz").is_file()
    np.testing.assert_array_equal(ValueTables.load("~/t.npz").values, tables.values)
    agent = make_agent("search:tables=~/t.npz,rollout_tables=~/t.npz,rollouts=2,backend=numpy")
    np.testing.assert_array_equal(agent._roll_table, tables.values)
    assert os.listdir(cwd) == []


@pytest.mark.parametrize("rules", ["jokers=1", {"jokers": 1}, Rules(jokers=1)])
def test_rules_may_be_given_as_a_spec_string(tmp_path, rules):
    """A string ('jokers=1') was AttributeError: 'str' object has no attribute 'deck_size'."""
    assert train_tables("american", rules, games=20, phases=1).rules == Rules(jokers=1)
    assert load_or_train("american", rules, games=20, phases=1, cache=tmp_path).rules == Rules(jokers=1)
    path = tmp_path / "j1.npz"
    train_tables("american", Rules(jokers=1), games=20, phases=1).save(path)
    from agents.expectimax import ExpectimaxAgent
    from agents.search import RolloutSearchAgent

    assert ExpectimaxAgent(tables=str(path), rules=rules, backend="numpy").rules == Rules(jokers=1)
    assert RolloutSearchAgent(tables=str(path), rules=rules, backend="numpy").rules == Rules(jokers=1)


# ----------------------------------------------------------------------------- train_tables: its options


@pytest.mark.parametrize("option, value, match", [
    ("games", True, "games=True: expected a positive integer"),
    ("games", 2.5, "games=2.5: expected a positive integer"),
    ("games", 0, "games=0: expected a positive integer"),
    ("phases", 1.0, "phases=1.0: expected a positive integer"),
    ("batch", False, "batch=False: expected a positive integer"),
    ("seed", -1, "seed=-1: expected an integer >= 0"),
    ("blend", 0, "blend=0: expected numbers with 0 <= epsilon, epsilon_end <= 1 and blend > 0"),
    ("blend", -3.0, "blend=-3.0"),
    ("blend", float("nan"), "blend=nan"),
    ("blend", float("inf"), "blend=inf"),
    ("epsilon_end", float("inf"), "epsilon_end=inf"),
    ("epsilon", 1.5, "epsilon=1.5"),
    ("epsilon_end", -0.1, "epsilon_end=-0.1"),
    ("epsilon", "0.5", "epsilon='0.5'"),
])
def test_train_tables_names_a_bad_option(option, value, match):
    with pytest.raises(ValueError, match=match.replace("(", r"\(").replace(")", r"\)")):
        train_tables("american", **{"games": 10, "phases": 2, option: value})


@pytest.mark.parametrize("features", ["none", "outs"])
def test_trained_values_keep_the_prior_where_a_line_was_never_seen_and_the_points_of_complete_lines(features):
    """Values blend towards the phase-free average, then the prior: a line abstraction no game visited in any phase
    (or outs bucket) is worth its prior exactly, and a complete line exactly its points (a mutation audit blended
    without the prior, divided by counts + 1, or fixed the points of the four-card lines instead, all unseen)."""
    from agents.lines import heuristic_values

    ps = point_system("american")
    vt = train_tables(ps, games=60, phases=3, features=features, seed=2)
    counts = vt.counts.reshape(NUM_KEYS, 2, -1).sum(2)
    values = vt.values.reshape(NUM_KEYS, 2, -1)
    complete = np.arange(NUM_KEYS) // 264 == 5
    never = (counts == 0) & ~complete[:, None]
    assert never.sum() > 100 and (counts > 0).any()
    np.testing.assert_allclose(values[never], np.repeat(heuristic_values(ps)[never][:, None], values.shape[2], 1),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(values[complete], np.broadcast_to(ps.line_points_table[complete, None, None],
                                                                    values[complete].shape))


def test_a_cache_or_tables_path_of_a_decimal_number_gets_the_digits_hint():
    """A spec reads ``cache=1.5`` as a float, as it reads ``cache=1`` as an int: both get the hint to write ``./``
    (a mutation audit gave the hint for integers only, unseen)."""
    from agents.tables import check_cache, check_tables_path

    with pytest.raises(ValueError, match=re.escape("cache=1.5: expected true, false or a folder (a spec reads a name "
                                                   "of digits as a number: give ./1.5 for a folder of that name)")):
        check_cache(1.5)
    with pytest.raises(ValueError, match=re.escape("(a spec reads a name of digits as a number: give ./2.5 for a "
                                                   "file of that name)")):
        check_tables_path(2.5)


# ----------------------------------------------------------------------------- tables=FILE in the agents


@pytest.fixture(scope="module")
def saved(tmp_path_factory, outs_table):
    folder = tmp_path_factory.mktemp("saved")
    paths = {"outs": folder / "outs.npz", "english": folder / "english.npz", "claims": folder / "claims.npz"}
    outs_table.save(paths["outs"])
    train_tables("english", games=500, phases=2).save(paths["english"])
    shape = (NUM_KEYS, 2, 4, NUM_OUTS_CLAIMS)  # the layout is all that matters here: no numba needed to write it
    ValueTables(np.zeros(shape), np.zeros(shape), point_system("american"), Rules(), 1, 0).save(paths["claims"])
    return paths


@pytest.mark.parametrize("agent", ["expectimax:backend=numpy", "search:backend=numpy,rollouts=2", "mc:rollouts=2"])
@pytest.mark.parametrize("options, named", [
    ("features=straights", "features='straights'"),
    ("games=5,phases=3", "games=5, phases=3"),
    ("phases=2", "phases=2"),
    ("cache=false", "cache=False"),
    ("cache=none", "cache=None"),
])
def test_options_given_with_a_tables_file_are_refused_not_ignored(saved, agent, options, named):
    with pytest.raises(ValueError, match=re.escape(f"{named} with tables='{saved['outs']}': ")
                       + ".*features='outs', 4 phases"):
        make_agent(f"{agent},tables={saved['outs']},{options}")
    if not agent.startswith("mc"):  # features=none is not their default (mc's is: there it says nothing)
        with pytest.raises(ValueError, match=re.escape(f"features='none' with tables='{saved['outs']}': ")):
            make_agent(f"{agent},tables={saved['outs']},features=none")


@pytest.mark.parametrize("agent", ["expectimax:backend=numpy", "search:backend=numpy,rollouts=2", "mc:rollouts=2"])
def test_options_that_agree_with_the_tables_file_are_taken(saved, agent):
    agent = make_agent(f"{agent},tables={saved['outs']},features=outs,phases=4,games=2000")
    table = agent.tables.values if hasattr(agent, "tables") else agent._table
    assert table.shape == (NUM_KEYS, 2, 4, 30)


def test_mc_checks_a_tables_file_like_expectimax(saved, tmp_path):
    with pytest.raises(ValueError, match=re.escape(f"tables '{saved['english']}' were trained for point system "
                                                   "'english'")):
        make_agent(f"mc:tables={saved['english']}", system="american")
    with pytest.warns(RuntimeWarning, match="trained with jokers=0, but the game has jokers=2"):
        make_agent(f"mc:tables={saved['outs']},rollouts=2", rules=Rules(jokers=2))
    with pytest.raises(ValueError, match=re.escape(f"tables='{saved['claims']}' hold features='claims' tables: mc's "
                                                   "rollouts run in numpy")):
        make_agent(f"mc:tables={saved['claims']}")
    with pytest.raises(ValueError, match="features='claims' with mc: .*no reader for claims tables"):
        make_agent(f"mc:features=claims,cache={tmp_path}")
    assert os.listdir(tmp_path) == []  # refused before any training
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make_agent(f"mc:tables={saved['outs']},rollouts=2")  # a fitting file: no warning



@pytest.mark.parametrize("spec", ["expectimax:features=straights,backend=numba",
                                  "search:features=straights,backend=numba"])
def test_straights_tables_on_the_compiled_backend_are_refused_before_training(spec, tmp_path, monkeypatch):
    """Before, 400,000 games of straights tables were trained and cached, and only then were they refused."""
    pytest.importorskip("numba")
    import agents.expectimax

    def no_training(*args, **kwargs):
        raise AssertionError("tables were trained before the options were refused")

    monkeypatch.setattr(agents.expectimax, "tables_for", no_training)
    with pytest.raises(ValueError, match=r"backend='numba' takes tables with features none, outs or claims, not "
                                         r"straights \(features=straights\): use backend='numpy' or 'auto'"):
        make_agent(f"{spec},cache={tmp_path}")
    assert os.listdir(tmp_path) == []


def test_a_tables_file_is_checked_by_its_points_not_its_name(tmp_path):
    """Two custom tables are both named 'custom': a mutation audit found a check by name alone unseen (the tests
    used english against american, which differ in name too)."""
    from agents.tables import train_tables

    ones = {"one_pair": 1, "two_pair": 2, "three_of_a_kind": 3, "straight": 4, "flush": 5, "full_house": 6,
            "four_of_a_kind": 7, "straight_flush": 8, "royal_flush": 9}
    path = tmp_path / "custom.npz"
    train_tables(ones, games=200, phases=2).save(path)
    make_agent(f"expectimax:tables={path},phases=2,features=none,games=200", system=ones)  # its own points: taken
    with pytest.raises(ValueError, match="were trained for point system 'custom'"):
        make_agent(f"expectimax:tables={path}", system={**ones, "one_pair": 2})


def test_exploration_decays_linearly_over_the_batches(monkeypatch):
    """train_tables explores with epsilon falling from `epsilon` to `epsilon_end` by games played (a mutation audit
    found a constant epsilon unseen)."""
    from agents import tables as tables_module

    seen = []
    real = tables_module._numpy_batch

    def spy(values, decks, rules, points, eps, rng):
        seen.append((len(decks), eps))
        return real(values, decks, rules, points, eps, rng)

    monkeypatch.setattr(tables_module, "_numpy_batch", spy)
    tables_module.train_tables("american", games=1000, batch=250, phases=2, epsilon=0.5, epsilon_end=0.1)
    assert [n for n, _ in seen] == [250] * 4
    assert [eps for _, eps in seen] == pytest.approx([0.5, 0.4, 0.3, 0.2])


def test_custom_point_systems_of_one_name_are_cached_apart(tmp_path, capsys):
    """The cache file name carries the points: two 'custom' systems do not overwrite each other's tables."""
    ones = {"one_pair": 1, "two_pair": 2, "three_of_a_kind": 3, "straight": 4, "flush": 5, "full_house": 6,
            "four_of_a_kind": 7, "straight_flush": 8, "royal_flush": 9}
    a, b = point_system(ones), point_system({**ones, "one_pair": 2})
    assert a.name == b.name == "custom"
    load_or_train(a, games=200, phases=1, cache=tmp_path)
    load_or_train(b, games=200, phases=1, cache=tmp_path)
    assert len(os.listdir(tmp_path)) == 2
    capsys.readouterr()
    assert tuple(load_or_train(a, games=200, phases=1, cache=tmp_path).system.points) == tuple(a.points)
    assert "training" not in capsys.readouterr().err


def test_equal_point_systems_of_ints_and_floats_share_one_cache_file(trainings, tmp_path):
    """A PointSystem built from ints equals point_system's (floats); its tables were cached under another name (the
    points hashed as JSON, 2 against 2.0), so they trained again, and an evaluation, whose chunks rebuild the system
    from JSON (floats), trained twice."""
    from pokersquares_env.scoring import PointSystem

    ints = PointSystem("american", (0, 2, 5, 10, 15, 20, 25, 50, 60, 75, 100), 100)
    floats = point_system("american")
    assert ints == floats  # equal systems, their numbers of other types:
    assert isinstance(ints.points[1], int) and isinstance(floats.points[1], float)
    first = load_or_train(ints, games=300, phases=2, cache=tmp_path)
    again = load_or_train(floats, games=300, phases=2, cache=tmp_path)
    assert trainings == [300] and len(os.listdir(tmp_path)) == 1
    np.testing.assert_array_equal(again.values, first.values)


def test_a_cached_table_of_another_seed_is_retrained_and_replaced(tmp_path, capsys):
    kw = dict(games=200, phases=1, cache=tmp_path)
    mine = load_or_train("american", seed=0, **kw)
    key = tmp_path / _cache_name(point_system("american"), Rules(), 200, 1, 0, "none")
    load_or_train("american", seed=5, **kw).save(key)  # another seed's table copied onto this key
    capsys.readouterr()
    got = load_or_train("american", seed=0, **kw)
    assert "holds tables trained for other seed 5 (not 0)" in capsys.readouterr().err
    assert got.seed == 0 and ValueTables.load(key).seed == 0
    np.testing.assert_array_equal(got.values, mine.values)


def test_tables_cached_under_a_tilde_folder_are_read_back_not_retrained(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    load_or_train("american", games=200, phases=1, cache="~/tc")
    capsys.readouterr()
    assert load_or_train("american", games=200, phases=1, cache="~/tc").games == 200
    assert "training" not in capsys.readouterr().err


def test_a_damaged_cache_entry_is_retrained_and_said_so_even_with_the_tables_in_memory(trainings, tmp_path, capsys):
    load_or_train("american", games=200, phases=1, seed=4, cache=False)  # kept in memory
    path = tmp_path / _cache_name(point_system("american"), Rules(), 200, 1, 4, "none")
    path.write_bytes(b"junk")
    capsys.readouterr()
    load_or_train("american", games=200, phases=1, seed=4, cache=tmp_path)
    err = capsys.readouterr().err
    assert "training value tables" in err and "the cached file cannot be read" in err, err
    assert ValueTables.load(path).games == 200  # replaced


def test_tables_retrained_over_a_damaged_entry_an_unwritable_folder_refuses_are_kept_as_the_newest(
        trainings, tmp_path, monkeypatch):
    """Tables kept in memory and trained again (their cache file damaged, the folder then refusing the new one) count
    as the newest kept: the next new tables drop the oldest others, not them."""
    from agents.tables import _TRAINED_MAX

    for seed in range(_TRAINED_MAX):
        load_or_train("american", games=20, phases=1, seed=seed, cache=False)
    (tmp_path / _cache_name(point_system("american"), Rules(), 20, 1, 0, "none")).write_bytes(b"junk")

    def read_only(self, path):
        raise PermissionError(13, "Permission denied", os.fspath(path))

    with monkeypatch.context() as patch:
        patch.setattr(ValueTables, "save", read_only)
        with pytest.warns(RuntimeWarning, match="could not cache the value tables"):
            load_or_train("american", games=20, phases=1, seed=0, cache=tmp_path)  # damaged: trained again
    assert len(trainings) == _TRAINED_MAX + 1
    load_or_train("american", games=20, phases=1, seed=_TRAINED_MAX, cache=False)  # drops seed 1, the oldest now
    load_or_train("american", games=20, phases=1, seed=0, cache=False)
    assert len(trainings) == _TRAINED_MAX + 2
    load_or_train("american", games=20, phases=1, seed=1, cache=False)
    assert len(trainings) == _TRAINED_MAX + 3


def test_tables_of_other_features_are_cached_and_kept_apart(trainings, tmp_path):
    """Tables differing only in their features are other tables: each has its own cache file and its own entry in
    memory (a mutation audit left the features out of the cache name, unseen: an outs table was then handed out
    for features=none from memory)."""
    none = load_or_train("american", games=20, phases=1, seed=6, cache=False)
    outs = load_or_train("american", games=20, phases=1, seed=6, features="outs", cache=False)
    assert (none.features, outs.features) == ("none", "outs") and trainings == [20, 20]
    assert load_or_train("american", games=20, phases=1, seed=6, cache=False).features == "none"
    assert load_or_train("american", games=20, phases=1, seed=6, features="outs", cache=False).features == "outs"
    assert trainings == [20, 20]
    for features in ("none", "outs"):
        load_or_train("american", games=20, phases=1, seed=6, features=features, cache=tmp_path)
    assert len(os.listdir(tmp_path)) == 2 and trainings == [20, 20]


def test_the_oldest_uncached_tables_are_dropped_first(trainings):
    from agents.tables import _TRAINED_MAX

    for seed in range(_TRAINED_MAX + 1):
        load_or_train("american", games=20, phases=1, seed=seed, cache=False)
    load_or_train("american", games=20, phases=1, seed=_TRAINED_MAX, cache=False)  # the newest: kept
    assert len(trainings) == _TRAINED_MAX + 1
    load_or_train("american", games=20, phases=1, seed=0, cache=False)  # the oldest: dropped, trained again
    assert len(trainings) == _TRAINED_MAX + 2


def test_load_tables_file_names_a_missing_path_by_its_option():
    from agents.tables import load_tables_file

    for name in ("tables", "rollout_tables"):
        with pytest.raises(ValueError, match=re.escape(f"{name}=None: expected the path of a .npz written by "
                                                       "ValueTables.save")):
            load_tables_file("american", None, None, name)


def test_a_tables_file_of_other_jokers_warns_when_no_rules_are_given(tmp_path):
    """No rules is the plain game (no jokers)."""
    from agents.tables import load_tables_file

    path = tmp_path / "j1.npz"
    train_tables("american", Rules(jokers=1), games=20, phases=1).save(path)
    with pytest.warns(RuntimeWarning, match="trained with jokers=1, but the game has jokers=0"):
        load_tables_file("american", None, path)


def test_the_training_seed_chooses_the_self_play_games():
    values = train_tables("american", games=200, phases=1, seed=0).values
    np.testing.assert_array_equal(train_tables("american", games=200, phases=1, seed=0).values, values)
    assert not np.array_equal(train_tables("american", games=200, phases=1, seed=1).values, values)
