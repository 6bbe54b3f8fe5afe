"""Direct policy search on value tables (agents.tuning) and the ``tune-tables`` experiment."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.evaluation import deal_deck, evaluate
from agents.lines import KEY_FLUSH, KEY_PAIRS, KEY_T, KEY_WINDOW, NUM_KEYS
from agents.tables import ValueTables, train_tables
from agents.tuning import CLASS_NAMES, line_classes, scale_values
from helpers import needs
from pokersquares_env.core import Rules
from pokersquares_env.scoring import point_system
from pokersquares_env.vector import numba_available

needs_numba = pytest.mark.skipif(not numba_available(), reason="numba not installed (the fast extra)")


@pytest.fixture(autouse=True)
def _table_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path_factory.getbasetemp() / "pscache"))


@pytest.fixture(scope="module")
def small():
    return train_tables("american", Rules(), games=4000, phases=26, features="outs", seed=5)


def test_line_classes_cover_exactly_the_incomplete_lines():
    cls = line_classes()
    assert cls.shape == (NUM_KEYS,)
    incomplete = (KEY_T >= 1) & (KEY_T <= 4)
    assert np.all(cls[incomplete] >= 0) and np.all(cls[~incomplete] == -1)
    assert set(np.unique(cls[incomplete])) == set(range(len(CLASS_NAMES)))
    mid = (KEY_T >= 2) & (KEY_T <= 4)
    assert np.all(cls[mid & (KEY_PAIRS == 1)] == CLASS_NAMES.index("one pair"))
    assert np.all(cls[mid & (KEY_PAIRS == 0) & (KEY_FLUSH == 1) & (KEY_WINDOW == 0)] == CLASS_NAMES.index("flush draw"))
    assert np.all(cls[KEY_T == 1] == CLASS_NAMES.index("one card"))


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_scale_values_touches_only_incomplete_lines_of_each_bin(bins, seed):
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(NUM_KEYS, 2, 26, 3))
    theta = rng.normal(scale=0.5, size=(len(CLASS_NAMES), 2, bins))
    out = scale_values(values, theta)
    cls = line_classes()
    fixed = cls < 0
    np.testing.assert_array_equal(out[fixed], values[fixed])
    # each incomplete key's ratio is exp(theta) of its class, kind and the phase's bin
    key = int(rng.choice(np.flatnonzero(~fixed)))
    kind = int(rng.integers(2))
    phase = int(rng.integers(26))
    ratio = out[key, kind, phase] / values[key, kind, phase]
    np.testing.assert_allclose(ratio, np.exp(theta[cls[key], kind, min(phase * bins // 26, bins - 1)]))
    np.testing.assert_array_equal(scale_values(values, np.zeros((len(CLASS_NAMES), 2))), values)


def test_scale_values_rejects_bad_theta():
    values = np.zeros((NUM_KEYS, 2, 26))
    with pytest.raises(ValueError, match=r"theta of shape \(3, 2\)"):
        scale_values(values, np.zeros((3, 2)))
    with pytest.raises(ValueError, match="finite"):
        scale_values(values, np.full((len(CLASS_NAMES), 2), np.nan))
    with pytest.raises(ValueError, match=r"values of shape \(5, 2, 26\)"):
        scale_values(np.zeros((5, 2, 26)), np.zeros((len(CLASS_NAMES), 2)))


RULES = {"plain": {}, "jokers": {"jokers": 2}, "adjacent": {"placement": "adjacent", "first_cell": 12}}


@needs_numba
@pytest.mark.parametrize("rules", list(RULES.values()), ids=list(RULES))
def test_play_scores_are_the_harness_scores_of_expectimax(small, tmp_path, rules):
    from agents.tuning import play_scores

    base = small if not rules else train_tables("american", Rules(**rules), games=1500, phases=26, features="outs",
                                                 seed=5)
    theta = np.random.default_rng(0).normal(scale=0.3, size=(len(CLASS_NAMES), 2, 3))
    tuned = ValueTables(scale_values(base.values, theta), base.counts, base.system, base.rules, base.games,
                        base.seed)
    path = tmp_path / "tuned.npz"
    tuned.save(path)
    decks = np.array([deal_deck(11, i, rules) for i in range(8)], dtype=np.int64)
    ev = evaluate([f"expectimax:ply=1,tables={path}", f"expectimax:ply=2,tables={path}"], games=8, seed=11,
                  rules=rules, progress=False)
    for ply in (1, 2):
        got = play_scores(tuned.values, decks, tuned, ply)
        want = ev.scores(f"expectimax:ply={ply},tables={path}")
        assert got.tolist() == [want[i] for i in range(8)]


@needs_numba
def test_tuning_repairs_a_broken_table_and_is_deterministic(small):
    from agents.tuning import play_scores, random_decks, tune_tables

    # Columns that value flush draws at a tenth: the classic strategy is broken; the search must mend it.
    broken = np.zeros((len(CLASS_NAMES), 2))
    broken[[1, 2], 1] = np.log(0.1)
    start = ValueTables(scale_values(small.values, broken), small.counts, small.system, small.rules, small.games,
                        small.seed)
    kwargs = {"generations": 6, "population": 12, "elite": 4, "games": 1500, "sigma": 0.5, "seed": 2}
    result = tune_tables(start, **kwargs)
    assert [r["generation"] for r in result.history] == list(range(6))
    assert set(result.history[0]) == {"generation", "base", "mean_theta", "best", "elite", "sigma"}
    assert result.theta.shape == (len(CLASS_NAMES), 2, 1)
    decks = random_decks(small.rules, 3000, [123])
    before = play_scores(start.values, decks, small).mean()
    after = play_scores(result.tables.values, decks, small).mean()
    assert after > before + 10, (before, after)  # measured: 85.3 -> 110.0 (the unbroken table: 107.7)
    assert result.history[-1]["mean_theta"] > result.history[0]["mean_theta"] + 10
    np.testing.assert_array_equal(result.tables.values[KEY_T == 5], start.values[KEY_T == 5])
    assert "cem(ply=1" in result.tables.policy
    again = tune_tables(start, **kwargs)
    np.testing.assert_array_equal(again.theta, result.theta)


@needs_numba
@pytest.mark.parametrize("bad, match", [({"elite": 9, "population": 4}, "elite=9"), ({"games": 0}, "games=0"),
                                        ({"ply": 3}, "ply=3"), ({"sigma": -1.0}, "sigma=-1.0"),
                                        ({"init": np.zeros((2, 2))}, r"init of shape \(2, 2\)"),
                                        # these were a raw TypeError, ply 1 and 'theta must be finite'
                                        ({"sigma": "0.3"}, "sigma='0.3': expected a positive number"),
                                        ({"ply": True}, "ply=True: expected 1 or 2"),
                                        ({"init": np.full((9, 2), np.nan)},
                                         "init: 18 of 18 values are NaN or infinite"),
                                        ({"init": np.zeros((9, 2, 1, 1))}, r"init of shape \(9, 2, 1, 1\)"),
                                        ({"init": np.zeros((9, 2, 2)), "bins": 3}, r"init of shape \(9, 2, 2\)"),
                                        ({"seed": -1}, "seed=-1: expected an integer >= 0")])
def test_tune_tables_rejects_bad_options(small, bad, match):
    from agents.tuning import tune_tables

    with pytest.raises(ValueError, match=match):
        tune_tables(small, **{"generations": 1, "population": 4, "elite": 2, "games": 10, **bad})


@needs_numba
def test_tune_tables_experiment_writes_its_outputs(tmp_path, capsys):
    from pokersquares_env.cli import main

    out = tmp_path / "tune"
    code = main(["experiment", "tune-tables", "--out", str(out), "--generations", "2", "--refine", "1",
                 "--population", "4", "--elite", "2", "--games", "200", "--eval-games", "200", "--tables-games", "3000", "--no-progress"])
    assert code == 0
    for name in ("tables.npz", "theta.json", "history.json", "results.md", "results.json", "curve.png"):
        assert (out / name).exists(), name
    res = json.loads((out / "results.json").read_text())
    assert set(res["evaluation"]) == {"ply=1", "ply=2"}
    assert res["evaluation"]["ply=2"]["games"] == 100
    history = json.loads((out / "history.json").read_text())
    assert [(r["stage"], r["generation"]) for r in history] == [(1, 0), (1, 1), (2, 2)]
    assert set(json.loads((out / "theta.json").read_text())) == set(CLASS_NAMES)
    ValueTables.load(out / "tables.npz")  # a loadable table
    assert "expectimax:ply=1" in capsys.readouterr().out
    from agents.tuning import load_theta

    theta = load_theta(out / "theta.json")  # the file reads back as the theta it was written from
    assert theta.shape == (len(CLASS_NAMES), 2, 3)
    written = json.loads((out / "theta.json").read_text())
    assert theta[2, 1].tolist() == written[CLASS_NAMES[2]]["column"]

    # benchmarks/tune_ply2.py continues the search from it with two-ply play and reports the paired differences
    import importlib.util
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "tune_ply2.py"
    spec = importlib.util.spec_from_file_location("bench_tune_ply2", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out2 = tmp_path / "ply2"
    assert module.main(["--init", str(out / "theta.json"), "--generations", "1", "--population", "3", "--elite", "2",
                        "--games", "30", "--eval-games", "40", "--table-games", "3000", "--out", str(out2)]) == 0
    printed = capsys.readouterr().out
    assert "generation 0:" in printed and "ply2_tuned_vs_ply1_tuned" in printed
    res2 = json.loads((out2 / "result.json").read_text())
    assert res2["evaluation"]["games"] == 40 and np.array(res2["theta"]).shape == theta.shape
    ValueTables.load(out2 / "tables.npz")


@needs("numba")
def test_tune_ply2_script_runs_as_documented_and_rejects_a_damaged_theta_file(tmp_path):
    """``python benchmarks/tune_ply2.py ...`` (a script next to benchmarks/agents.py) finds the agents package, and a
    bad ``--init`` exits with status 2 before any tables are trained or folders made."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    bad = tmp_path / "theta.json"
    bad.write_text("{not json")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, str(root / "benchmarks" / "tune_ply2.py"), "--init", str(bad), "--out",
                           str(out)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert "cannot read it as JSON" in proc.stderr and not out.exists()


@pytest.mark.parametrize("content, match", [
    ("{not json", "cannot read it as JSON"),
    ("[1, 2]", "expected an object of classes, got list"),
    ('{"one card": {"row": [0], "column": [0]}}', "missing"),
    ("BAD_ENTRY", "class 'flush draw' is"),
])
def test_load_theta_names_what_is_wrong(tmp_path, content, match):
    from agents.tuning import load_theta

    good = {name: {"row": [0.1], "column": [-0.1]} for name in CLASS_NAMES}
    if content == "BAD_ENTRY":
        good["flush draw"] = {"row": [0.1, 0.2], "column": [0.0]}
        content = json.dumps(good)
    path = tmp_path / "theta.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=match):
        load_theta(path)
    assert path.read_text() == content  # the file is left as it was


@needs_numba
def test_tune_tables_experiment_takes_rules(tmp_path):
    """``--rules`` reaches the tables, the tuning and the held-out deals, and the command it prints plays them."""
    from pokersquares_env.cli import main
    from pokersquares_env.core import Rules

    out = tmp_path / "tune"
    code = main(["experiment", "tune-tables", "--out", str(out), "--rules", "jokers=1,placement=adjacent",
                 "--generations", "1", "--refine", "0", "--population", "4", "--elite", "2", "--games", "100",
                 "--eval-games", "100", "--tables-games", "2000", "--no-progress"])
    assert code == 0
    want = Rules(jokers=1, placement="adjacent")
    assert ValueTables.load(out / "tables.npz").rules == want
    res = json.loads((out / "results.json").read_text())
    assert Rules(**res["rules"]) == want
    md = (out / "results.md").read_text()
    assert "--rules jokers=1,placement=adjacent" in md
    assert Rules.parse(md.split("--rules ")[1].split("`")[0]) == want  # the printed spec reads back as the rules


@pytest.mark.parametrize("args, match", [(["--scoring", "nope"], "nope"),
                                         (["--rules", "jokers=9"], "jokers"),
                                         (["--rules", "colour=red"], "colour"),
                                         (["--population", "2", "--elite", "3"], "elite=3 is larger"),
                                         (["--refine", "-1"], "--refine: -1")])
def test_tune_tables_experiment_rejects_bad_options_before_any_work(tmp_path, capsys, args, match):
    from helpers import cli_status

    out = tmp_path / "tune"
    # a bad value of one option is argparse's usage error (SystemExit); a bad combination, run's exit status
    assert cli_status(["experiment", "tune-tables", "--out", str(out), "--no-progress", *args]) == 2
    assert match in capsys.readouterr().err
    assert not out.exists()  # checked before tables are trained or the folder is made


@needs_numba
def test_tune_tables_with_a_scoring_file_prints_a_command_that_plays_it(tmp_path, monkeypatch, capsys):
    """``--scoring FILE.json`` was recorded and printed by the system's name (``--scoring custom``), a command that
    fails; the file's path is kept as given."""
    import shlex

    from pokersquares_env.cli import main

    monkeypatch.chdir(tmp_path)
    points = {**point_system("american").as_dict(), "one_pair": 3}
    (tmp_path / "mine.json").write_text(json.dumps(points))
    code = main(["experiment", "tune-tables", "--out", "tune", "--scoring", "mine.json", "--generations", "1",
                 "--refine", "0", "--population", "4", "--elite", "2", "--games", "100", "--eval-games", "100",
                 "--tables-games", "2000", "--no-progress"])
    assert code == 0
    for name in ("experiment.json", "results.json"):
        record = json.loads((tmp_path / "tune" / name).read_text())
        assert record["scoring"] == "mine.json" and record["points"] == point_system("mine.json").as_dict(), name
    command = (tmp_path / "tune" / "results.md").read_text().split("Play them: `")[1].split("`")[0]
    assert "--scoring mine.json" in command
    capsys.readouterr()
    assert main(shlex.split(command)[1:] + ["--games", "2", "--no-progress"]) == 0, capsys.readouterr().err
    assert "tune/tables.npz" in capsys.readouterr().out


@needs_numba  # without numba the experiment stops before the tables (test below)
def test_a_failed_tune_tables_rerun_leaves_no_results_of_the_earlier_options(tmp_path, monkeypatch):
    """The mark of the new options was written before training, beside the earlier run's results: a rerun that
    failed left a folder whose experiment.json contradicted its results.json."""
    import agents.tables
    from agents.experiments.marks import write_root_mark
    from agents.experiments.tune_tables import OUTPUTS, tune_tables_experiment

    out = tmp_path / "tune"
    out.mkdir()
    write_root_mark(out, "tune-tables", {"scoring": "american", "seed": 0})
    for name in OUTPUTS:
        (out / name).write_text("of the earlier run")
    (out / "notes.txt").write_text("the user's")

    def fail(*args, **kwargs):
        raise RuntimeError("training failed")

    monkeypatch.setattr(agents.tables, "load_or_train", fail)
    with pytest.raises(RuntimeError, match="training failed"):
        tune_tables_experiment(str(out), seed=7, generations=1, refine=0, population=4, elite=2, games=10,
                               eval_games=10, progress=False)
    assert sorted(p.name for p in out.iterdir()) == ["experiment.json", "notes.txt"]
    assert json.loads((out / "experiment.json").read_text())["seed"] == 7


def test_tune_tables_without_numba_says_so_before_any_work(small, tmp_path, monkeypatch, capsys):
    """Before, ``pokersquares experiment tune-tables`` without numba wrote experiment.json, trained the base tables
    (tens of seconds), then died with a ModuleNotFoundError traceback from ``agents.tuning``."""
    import sys

    import agents.tables
    from agents.experiments.tune_tables import tune_tables_experiment
    from agents.tuning import tune_tables
    from pokersquares_env.cli import main

    def no_work(*args, **kwargs):
        raise AssertionError("trained the tables before checking for numba")

    monkeypatch.setattr(agents.tables, "load_or_train", no_work)
    monkeypatch.setitem(sys.modules, "numba", None)  # what an install without the fast extra finds
    out = tmp_path / "tune"
    assert main(["experiment", "tune-tables", "--out", str(out), "--no-progress"]) == 2
    assert capsys.readouterr().err == ('pokersquares experiment tune-tables: tune-tables needs numba: '
                                       'pip install "pokersquares_env[fast]"\n')
    assert not out.exists()
    with pytest.raises(ValueError, match=re.escape('tune-tables needs numba: pip install "pokersquares_env[fast]"')):
        tune_tables_experiment(str(out), progress=False)
    assert not out.exists()
    # the search itself, called directly: the same one line before any game is played
    with pytest.raises(ImportError, match=re.escape('tune_tables needs numba: pip install "pokersquares_env[fast]"')):
        tune_tables(small, generations=1, population=4, elite=2, games=10)


def test_tune_tables_help_gives_the_measured_time(capsys):
    from pokersquares_env.cli import main

    with pytest.raises(SystemExit):
        main(["experiment", "tune-tables", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "The defaults take about 16 minutes on 2 cores." in help_text


# ----------------------------------------------------------------------------- shipped tuned tables (tuned=true)

def test_shipped_multipliers_fit_the_agents_default_tables():
    from importlib import resources

    from agents.expectimax import DEFAULT_FEATURES, DEFAULT_GAMES, DEFAULT_PHASES
    from agents.tuning import TUNED_SYSTEMS, load_theta

    for name in TUNED_SYSTEMS:
        path = resources.files("agents") / "data" / f"tuned_{name}.json"
        about = json.loads(path.read_text())["_about"]
        assert about["scoring"] == name
        # re-tune (and re-ship) when the agents' default tables change: the multipliers fit those tables only
        assert about["tables"] == {"games": DEFAULT_GAMES, "phases": DEFAULT_PHASES, "features": DEFAULT_FEATURES,
                                   "seed": 0, "rules": "plain"}
        with resources.as_file(path) as file:
            theta = load_theta(file)
        assert theta.shape == (len(CLASS_NAMES), 2, 3) and np.all(np.abs(theta) < 1.0)


@pytest.fixture
def fake_default_tables(small, monkeypatch):
    """``load_or_train`` returns the small module table (training the real 400,000-game default takes a minute)."""
    import agents.tables

    calls = []

    def fake(system, rules=None, **options):
        calls.append((system.name, options))
        return ValueTables(small.values, small.counts, system, small.rules, small.games, small.seed, small.policy)

    monkeypatch.setattr(agents.tables, "load_or_train", fake)
    return calls


def test_tuned_true_scales_the_default_tables_by_the_shipped_multipliers(small, fake_default_tables, tmp_path):
    from importlib import resources

    from agents import make_agent
    from agents.expectimax import DEFAULT_FEATURES, DEFAULT_GAMES, DEFAULT_PHASES
    from agents.tuning import load_theta, tuned_tables

    with resources.as_file(resources.files("agents") / "data" / "tuned_english.json") as file:
        theta = load_theta(file)
    vt = tuned_tables("english", games=DEFAULT_GAMES, phases=DEFAULT_PHASES, features=DEFAULT_FEATURES)
    np.testing.assert_array_equal(vt.values, scale_values(small.values, theta))
    assert fake_default_tables[-1] == ("english", {"games": DEFAULT_GAMES, "phases": DEFAULT_PHASES, "seed": 0,
                                                   "features": DEFAULT_FEATURES, "cache": True})
    assert vt.policy.endswith("+tuned(english)")
    # the agents' option plays exactly like those tables given as a file
    path = tmp_path / "scaled.npz"
    vt.save(path)
    from pokersquares_env.core import PokerSquaresGame

    game = PokerSquaresGame(system="english")  # the agents' own points: an American game warned that they play for theirs

    def play(agent, seed):
        state = game.init(game.deal(np.random.default_rng(seed)), validate=False)
        agent.reset()
        while not state.terminal:
            game.apply(state, agent.act(None, None, game, state.copy()))
        return list(state.placements)

    for spec in ("expectimax:ply=1,", "expectimax:", "search:rollouts=8,"):
        for seed in (4, 5):
            assert (play(make_agent(f"{spec}tuned=true", system="english", seed=1), seed)
                    == play(make_agent(f"{spec}tables={path}", system="english", seed=1), seed)), spec
    assert make_agent("expectimax:ply=1,tuned=true", system="english").tables.policy.endswith("+tuned(english)")


@pytest.mark.parametrize("rules, match", [("jokers=1", "tuned under the plain rules, not {'jokers': 1"),
                                          ("placement=bogus", "placement='bogus': expected 'free' or 'adjacent'")])
def test_tuned_tables_read_rules_given_as_a_spec_string(fake_default_tables, rules, match):
    """A string was AttributeError ('str' object has no attribute ...) rather than read as rules."""
    from agents.tuning import tuned_tables

    with pytest.raises(ValueError, match=re.escape(match)):
        tuned_tables("american", rules, games=400_000, phases=26, features="outs")
    assert fake_default_tables == []
    assert tuned_tables("american", "jokers=0", games=400_000, phases=26, features="outs").rules == Rules()


@pytest.mark.parametrize("spec, system, rules, match", [
    ("expectimax:tuned=true", {**point_system("american").as_dict(), "one_pair": 3}, Rules(),
     "shipped for american and english only"),
    ("expectimax:tuned=true", "american", Rules(jokers=1), "tuned under the plain rules"),
    ("expectimax:tuned=true,games=2000", "american", Rules(), r"not \{'games': 2000\}"),
    ("search:tuned=true,features=none", "american", Rules(), "features"),
    ("expectimax:tuned=true,tables=x.npz", "american", Rules(), "give one or the other"),
    ("expectimax:tuned=2", "american", Rules(), "tuned=2: expected true or false"),
])
def test_tuned_true_names_what_does_not_fit(fake_default_tables, spec, system, rules, match):
    from agents import make_agent

    with pytest.raises(ValueError, match=match):
        make_agent(spec, system=system, rules=rules)
    assert fake_default_tables == []  # nothing is trained or loaded for a request that cannot be met


def test_a_rerun_scored_by_its_own_scoring_json_writes_it_again(tmp_path):
    """A review found that rerunning tune-tables with --scoring OUT/scoring.json (the command results.md prints for a
    mapping) removed that file with the earlier outputs, so the printed command then named a missing file."""
    from agents.experiments.tune_tables import _scoring_arg
    from pokersquares_env.scoring import point_system

    system = point_system({**point_system("american").as_dict(), "one_pair": 3})
    path = tmp_path / "scoring.json"
    assert _scoring_arg(system.as_dict(), system, tmp_path) == str(path) and path.exists()
    loaded = point_system(str(path))
    path.unlink()  # what a rerun's clearing of OUTPUTS does, after the file was read
    assert _scoring_arg(str(path), loaded, tmp_path) == str(path)
    assert tuple(point_system(str(path)).points) == tuple(system.points)


# ----------------------------------------------------------------------------- a mutation audit's additions

def test_scale_values_names_a_theta_without_bins_and_values_of_other_kinds():
    """A theta of no phase bins or values with other than row and column kinds are refused by name (not a numpy
    IndexError or broadcast error)."""
    with pytest.raises(ValueError, match=r"theta of shape \(9, 2, 0\)"):
        scale_values(np.zeros((NUM_KEYS, 2, 26)), np.zeros((len(CLASS_NAMES), 2, 0)))
    for kinds in (1, 3):
        with pytest.raises(ValueError, match=rf"values of shape \({NUM_KEYS}, {kinds}, 26\)"):
            scale_values(np.zeros((NUM_KEYS, kinds, 26)), np.zeros((len(CLASS_NAMES), 2)))


def test_random_decks_are_seeded_permutations_of_the_rules_deck():
    from agents.tuning import random_decks

    for rules in (Rules(), Rules(jokers=2)):
        decks = random_decks(rules, 5, [4, 92, 0])
        assert decks.shape == (5, rules.deck_size)
        assert all(sorted(row) == list(range(rules.deck_size)) for row in decks.tolist())
        np.testing.assert_array_equal(random_decks(rules, 5, [4, 92, 0]), decks)
        assert not np.array_equal(random_decks(rules, 5, [5, 92, 0]), decks)
    assert (random_decks(Rules(jokers=2), 40, 1) >= 52).any()  # the jokers are dealt too


@pytest.mark.parametrize("bad, match", [({"generations": True}, "generations=True"),
                                        ({"generations": 0}, "generations=0"),
                                        ({"population": 0, "elite": 0}, "population=0"),
                                        ({"bins": 0}, "bins=0"), ({"bins": 1.0}, "bins=1.0"),
                                        ({"sigma": 0.0}, "sigma=0.0"), ({"sigma": float("inf")}, "sigma=inf"),
                                        ({"sigma": float("nan")}, "sigma=nan")])
def test_check_options_names_the_bad_option(bad, match):
    from agents.tuning import check_options

    options = {"ply": 1, "generations": 2, "population": 4, "elite": 2, "games": 10, "sigma": 0.3, "bins": 1}
    with pytest.raises(ValueError, match=re.escape(match)):
        check_options(**{**options, **bad})
    check_options(**{**options, "elite": 4})  # every candidate in the elite is allowed
    check_options(**{**options, "ply": 2, "bins": 3, "sigma": 1})


@pytest.mark.parametrize("change, match", [
    ({"one card": {"row": [], "column": []}}, "class 'one card' is"),
    ({"flush draw": {"row": [True], "column": [0.1]}}, "class 'flush draw' is"),
    ({"two pair": {"row": [float("nan")], "column": [0.1]}}, "class 'two pair' is"),
    ({"dead": {"row": [0.1], "column": "0.1"}}, "class 'dead' is"),
    ({"dead": [0.1, -0.1]}, "class 'dead' is"),
    # rows and columns of different lengths in the first class, or a class of another length than the first
    ({"one card": {"row": [0.1], "column": [0.1, 0.2]}}, "class 'one card' is"),
    ({"flush+straight draw": {"row": [0.1, 0.2], "column": [0.1, 0.2]}}, "class 'flush+straight draw' is"),
    # an integer too large for a float (before: numpy's TypeError, not this ValueError naming the file and class)
    ({"dead": {"row": [10 ** 400], "column": [0.1]}}, "class 'dead' is"),
])
def test_load_theta_refuses_entries_it_cannot_use(tmp_path, change, match):
    from agents.tuning import load_theta

    path = tmp_path / "theta.json"
    path.write_text(json.dumps({**{name: {"row": [0.1], "column": [-0.1]} for name in CLASS_NAMES}, **change}))
    with pytest.raises(ValueError, match=re.escape(match)):
        load_theta(path)


def test_load_theta_reads_every_class_and_names_a_missing_file(tmp_path):
    from agents.tuning import load_theta

    data = {name: {"row": [i, i + 0.5], "column": [-i, -i - 0.5]} for i, name in enumerate(CLASS_NAMES)}
    path = tmp_path / "theta.json"
    path.write_text(json.dumps({"_about": {"note": "ignored"}, **data}))
    theta = load_theta(path)
    assert theta.dtype == np.float64 and theta.shape == (len(CLASS_NAMES), 2, 2)
    for i, name in enumerate(CLASS_NAMES):
        assert theta[i, 0].tolist() == data[name]["row"] and theta[i, 1].tolist() == data[name]["column"]
    missing = tmp_path / "nope.json"
    with pytest.raises(ValueError, match=re.escape(f"theta file {str(missing)!r}: cannot read it as JSON")):
        load_theta(missing)


def test_tuned_tables_check_the_phases_and_pass_the_cache_and_the_tables_fields(small, fake_default_tables):
    from agents.tuning import tuned_tables

    with pytest.raises(ValueError, match=re.escape("not {'phases': 13}")):
        tuned_tables("american", games=400_000, phases=13, features="outs")
    assert fake_default_tables == []
    vt = tuned_tables("american", games=400_000, phases=26, features="outs", cache=False)
    assert fake_default_tables[-1][1]["cache"] is False
    # the tuned tables keep the base tables' counts and provenance; only the values and the policy change
    np.testing.assert_array_equal(vt.counts, small.counts)
    assert (vt.games, vt.seed, vt.rules) == (small.games, small.seed, small.rules)
    assert vt.system.name == "american" and vt.policy == f"{small.policy}+tuned(american)"


def test_tuned_tables_know_a_shipped_system_by_its_points_not_its_name(small, fake_default_tables):
    """A mapping of the american points is the american system: it gets the american multipliers."""
    from agents.tuning import tuned_tables

    mapping = point_system(point_system("american").as_dict())
    assert mapping.name != "american"
    vt = tuned_tables(mapping, games=400_000, phases=26, features="outs")
    want = tuned_tables("american", games=400_000, phases=26, features="outs")
    np.testing.assert_array_equal(vt.values, want.values)
    assert vt.policy.endswith("+tuned(american)")


@needs_numba
@pytest.mark.parametrize("ply, bins, init", [(1, 1, None), (2, 2, "one bin")])
def test_each_generation_plays_the_mean_and_refits_to_the_elite(small, monkeypatch, ply, bins, init):
    """What the docstring promises, read off the candidates and scores the search plays: the current mean is always
    candidate 0, every candidate of a generation (and the untuned tables) plays the same fresh deals, the record holds
    their scores, the next mean is the elite's mean, the spread is the elite's standard deviation plus a small floor
    that shrinks, and the tuned tables are the base scaled by the final mean."""
    import agents.tuning as tuning

    real_scale, real_play = tuning.scale_values, tuning.play_scores
    scaled, plays = [], []

    def scale(values, theta):
        scaled.append(np.array(theta, dtype=np.float64))
        return real_scale(values, theta)

    def play(values, decks, tables, ply_):
        scores = real_play(values, decks, tables, ply_)
        plays.append((values is small.values, decks.copy(), ply_, scores.mean()))
        return scores

    monkeypatch.setattr(tuning, "scale_values", scale)
    monkeypatch.setattr(tuning, "play_scores", play)
    gens, population, elite, games, sigma = 3, 8, 3, (40 if ply == 1 else 8), 0.4
    start = None if init is None else np.random.default_rng(1).normal(scale=0.2, size=(len(CLASS_NAMES), 2))
    records = []
    result = tuning.tune_tables(small, ply=ply, generations=gens, population=population, elite=elite, games=games,
                                sigma=sigma, bins=bins, init=start, seed=3, callback=records.append)
    assert records == result.history and len(records) == gens
    assert len(scaled) == gens * population + 1 and len(plays) == gens * (population + 1)
    mean = np.zeros((len(CLASS_NAMES), 2, bins)) if init is None else np.repeat(start[:, :, None], bins, axis=2)
    std = np.full(mean.shape, sigma)
    floors, decks_by_gen = [], []
    for g, record in enumerate(records):
        thetas = np.array(scaled[g * population:(g + 1) * population])
        gen_plays = plays[g * (population + 1):(g + 1) * (population + 1)]
        assert [p[0] for p in gen_plays] == [False] * population + [True]  # the candidates, then the base
        assert all(p[2] == ply for p in gen_plays)
        decks = gen_plays[0][1]
        assert decks.shape == (games, 52) and all(np.array_equal(p[1], decks) for p in gen_plays)
        decks_by_gen.append(decks)
        fitness = np.array([p[3] for p in gen_plays[:population]])
        np.testing.assert_array_equal(thetas[0], mean)  # the mean itself is candidate 0
        z = (thetas[1:] - mean) / std  # the others are drawn around it with the current spread
        assert 0.5 < z.std() < 1.6, z.std()
        chosen = thetas[np.argsort(-fitness, kind="stable")[:elite]]
        assert record["generation"] == g and record["base"] == gen_plays[-1][3]
        assert record["mean_theta"] == fitness[0] and record["best"] == fitness.max()
        assert record["elite"] == pytest.approx(np.sort(fitness)[::-1][:elite].mean())
        mean = chosen.mean(0)
        floors.append(record["sigma"] - chosen.std(0).mean())
        std = chosen.std(0) + floors[-1]
    if init is None:
        assert records[0]["mean_theta"] == records[0]["base"]  # theta zero: the untuned tables
    assert all(0 < f < 0.1 * sigma for f in floors)  # a small floor on the spread ...
    assert floors == sorted(floors, reverse=True) and floors[0] > floors[-1]  # ... that shrinks
    assert not any(np.array_equal(decks_by_gen[0], d) for d in decks_by_gen[1:])  # fresh deals each generation
    np.testing.assert_allclose(result.theta, mean, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(scaled[-1], result.theta)
    np.testing.assert_array_equal(result.tables.values, real_scale(small.values, result.theta))
    np.testing.assert_array_equal(result.tables.counts, small.counts)
    assert (result.tables.games, result.tables.seed, result.tables.rules) == (small.games, small.seed, small.rules)
    # another seed deals other games
    plays.clear()
    tuning.tune_tables(small, ply=ply, generations=1, population=2, elite=1, games=games, sigma=sigma, bins=bins,
                       seed=4)
    assert not np.array_equal(plays[0][1], decks_by_gen[0])


@needs("matplotlib")
def test_tune_tables_experiment_refines_stage_one_and_pairs_both_plies_on_the_held_out_deals(small, tmp_path,
                                                                                              monkeypatch):
    """What the docstring promises of the two stages and the held-out comparison, read off the calls the experiment
    makes (the search and the games stubbed: the orchestration is the point): stage 2 starts from stage 1's theta with
    a third of its spread, one multiplier per third of the game and the next seed; the untuned and the tuned tables
    play the same held-out deals of ``eval_seed`` (not the search's seed) at ply 1, and the first half at ply 2."""
    import agents.tables
    import agents.tuning
    from agents.experiments.tune_tables import tune_tables_experiment

    loads, searches, plays = [], [], []

    def load(system, rules, **kwargs):
        loads.append(kwargs)
        return small

    def search(base, *, generations, sigma, bins, seed, init=None, **common):
        theta = np.zeros((len(CLASS_NAMES), 2, bins))
        theta[:, 0], theta[:, 1] = 0.1 * (len(searches) + 1), -0.2  # rows and columns told apart
        searches.append({"base": base is small, "generations": generations, "sigma": sigma, "bins": bins,
                         "seed": seed, "init": init, "theta": theta, **common})
        history = [{"generation": g, "base": 1.0, "mean_theta": 2.0} for g in range(generations)]
        return agents.tuning.TuneResult(agents.tuning._scaled_tables(base, theta, "stub"), theta, history)

    def play(values, decks, tables, ply):
        plays.append((values is small.values, decks.copy(), ply))
        spread = np.arange(len(decks), dtype=np.float64)
        return spread if values is small.values else 3 * spread  # the tuned tables: thrice the spread

    monkeypatch.setattr(agents.tables, "load_or_train", load)
    monkeypatch.setattr(agents.tuning, "check_compiled", lambda what: None)  # nothing is played compiled here
    monkeypatch.setattr(agents.tuning, "tune_tables", search)
    monkeypatch.setattr(agents.tuning, "play_scores", play)
    options = dict(generations=2, refine=1, population=4, elite=2, games=10, sigma=0.3, eval_games=10, eval_seed=5,
                   tables_games=123, progress=False)
    summary = tune_tables_experiment(str(tmp_path / "a"), seed=7, **options)

    assert [load["games"] for load in loads] == [123]
    first, second = searches
    assert (first["generations"], first["sigma"], first["bins"], first["seed"], first["init"]) == (2, 0.3, 1, 7, None)
    assert (second["generations"], second["bins"], second["seed"]) == (1, 3, 8)
    assert second["sigma"] == pytest.approx(0.1)
    np.testing.assert_array_equal(second["init"], first["theta"])
    assert all(s["base"] and s["ply"] == 1 and s["population"] == 4 for s in searches)

    assert [(is_base, len(decks), ply) for is_base, decks, ply in plays] == [
        (True, 10, 1), (False, 10, 1), (True, 5, 2), (False, 5, 2)]
    held_out = plays[0][1]
    assert all(np.array_equal(decks, held_out[:len(decks)]) for _, decks, _ in plays)
    for name, n in (("ply=1", 10), ("ply=2", 5)):
        e = summary["evaluation"][name]
        assert e["games"] == n and e["difference"] == pytest.approx(e["tuned"] - e["base"]) == pytest.approx(n - 1)
        assert e["tuned_ci95"] == pytest.approx(3 * e["base_ci95"])
    out = tmp_path / "a"
    assert "Held-out deals: 10 decks of seed 5 (two-ply on the first 5)." in (out / "results.md").read_text()
    written = json.loads((out / "theta.json").read_text())
    assert all(written[c] == {"row": [0.2] * 3, "column": [-0.2] * 3} for c in CLASS_NAMES)
    assert json.loads((out / "experiment.json").read_text())["tables_games"] == 123

    plays.clear()  # another search seed: the same held-out deals
    tune_tables_experiment(str(tmp_path / "b"), seed=8, **options)
    np.testing.assert_array_equal(plays[0][1], held_out)

    # two-ply plays at least two held-out deals (an interval needs two), and results.md said "the first 1" of 3
    summary = tune_tables_experiment(str(tmp_path / "c"), seed=8, **{**options, "eval_games": 3})
    assert summary["evaluation"]["ply=2"]["games"] == 2 and len(plays[-1][1]) == 2
    assert "Held-out deals: 3 decks of seed 5 (two-ply on the first 2)." in (tmp_path / "c" / "results.md").read_text()


class _Reached(Exception):
    """Raised by a stubbed table training: the experiment got past every check of its options."""


def _reach_the_tables(monkeypatch):
    import agents.tables
    import agents.tuning

    def reached(*args, **kwargs):
        raise _Reached

    monkeypatch.setattr(agents.tables, "load_or_train", reached)
    monkeypatch.setattr(agents.tuning, "check_compiled", lambda what: None)  # the checks are the point, not numba


@pytest.mark.parametrize("bad, match", [
    ({"eval_games": 1}, "eval_games=1: expected an integer >= 2"),
    ({"refine": True}, "refine=True: expected an integer >= 0"),
    ({"refine": 1.0}, "refine=1.0: expected an integer >= 0"),
    ({"tables_games": 0}, "tables_games=0"),
    ({"tables_games": True}, "tables_games=True"),
])
def test_tune_tables_experiment_names_a_bad_count_before_any_work(tmp_path, monkeypatch, bad, match):
    from agents.experiments.tune_tables import tune_tables_experiment

    _reach_the_tables(monkeypatch)
    out = tmp_path / "tune"
    with pytest.raises(ValueError, match=re.escape(match)):
        tune_tables_experiment(str(out), **{"generations": 1, "population": 4, "elite": 2, "games": 10, **bad},
                               progress=False)
    assert not out.exists()


def test_tune_tables_experiment_takes_every_size_at_its_bound(tmp_path, monkeypatch):
    from agents.experiments.tune_tables import MAX_GAMES, MAX_POPULATION, MAX_TABLES_GAMES, tune_tables_experiment

    _reach_the_tables(monkeypatch)
    with pytest.raises(_Reached):
        tune_tables_experiment(str(tmp_path / "tune"), generations=1, population=MAX_POPULATION, elite=2,
                               games=MAX_GAMES, eval_games=MAX_GAMES, tables_games=MAX_TABLES_GAMES, progress=False)
