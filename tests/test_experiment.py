"""The reward-shaping experiment: a tiny end-to-end run writes consistent tables and plots; bad options are named."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

pytest.importorskip("torch")

from agents.experiments.reward_shaping import (  # noqa: E402
    EVAL_SYSTEMS,
    ExperimentConfig,
    markdown,
    run_experiment,
)
from agents.stats import seed_ci95, welch_ci95  # noqa: E402

TINY_TRAIN = dict(hidden=[8, 8], num_envs=16, num_steps=26, minibatch_size=208, update_epochs=1)


RULES = {"jokers": 1, "placement": "adjacent", "first_cell": 12}


def _played_rules(folder):
    """The rules of every game record in an experiment's evaluation folder (all the same, or the test fails)."""
    games = [json.loads(line) for line in (folder / "evaluation" / "games.jsonl").read_text().splitlines()]
    assert games and all(g["rules"] == games[0]["rules"] for g in games)
    return games[0]["rules"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    import warnings

    out = tmp_path_factory.mktemp("rs")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = run_experiment(
            out=str(out), timesteps=416, seeds=[0, 1, 2], games=6, progress=False, train_options=TINY_TRAIN,
        )
    # English runs play the American-scored deals by design: no warning that they were trained for English
    assert not [w for w in caught if "was trained for" in str(w.message)]
    return out, results


@pytest.fixture
def tiny_rerun(tiny, tmp_path):
    """``tiny`` for a test that runs the experiment again in its folder: the folder is put back as it was after the
    test, so later tests read the module's own results (a rerun with a relative ``out`` rewrites
    evaluation/games.jsonl under relative agent specs, which failed a later test when the order changed)."""
    import shutil

    out, _results = tiny
    shutil.copytree(out, tmp_path / "before")
    yield tiny
    shutil.rmtree(out)
    shutil.copytree(tmp_path / "before", out)


def test_every_condition_and_seed_is_trained_and_evaluated_on_common_deals(tiny):
    out, results = tiny
    assert len(results["runs"]) == 2 * 2 * 3
    for run in results["runs"]:
        cfg = json.loads((out / "runs" / run["dir"].split("/")[-1] / "config.json").read_text())
        assert cfg["scoring"] == run["system"] and cfg["reward_mode"] == run["mode"] and cfg["seed"] == run["seed"]
        assert cfg["reward_scale"] == "normalized" and cfg["timesteps"] == 416
        assert run["steps"] == 416  # one whole update of 16 envs x 26 steps
    assert "fast-ppo, 416 steps per run" in markdown(results)
    from agents.experiments.reward_shaping import _steps_note

    # a budget that is not whole updates is reported as trained, beside what was asked
    assert _steps_note(2000, [{"steps": 12800}] * 2) == "12,800 steps (2,000 asked, rounded up to whole updates)"
    games = [json.loads(line) for line in (out / "evaluation" / "games.jsonl").read_text().splitlines()]
    decks = {}
    for g in games:  # every agent played the same deck on each deal
        deal = g["meta"]["deal"]
        decks.setdefault(deal, g["deck"])
        assert g["deck"] == decks[deal]
    assert len(decks) == 6


def test_table_matches_the_per_game_records(tiny):
    out, results = tiny
    summary = {r["agent"]: r for r in json.loads((out / "evaluation" / "summary.json").read_text())}
    for row in results["table"]:
        specs = [r["spec"] for r in results["runs"]
                 if r["system"] == row["train_system"] and r["mode"] == row["reward_mode"]]
        for es in EVAL_SYSTEMS:
            expected = np.mean([summary[s][f"mean_{es}"] for s in specs])
            assert row[f"{es}_mean"] == pytest.approx(expected)
            assert row[f"{es}_ci95"] > 0
            # the seed interval: Student's t (2 df for 3 seeds) over the seed means
            seed_means = [summary[s][f"mean_{es}"] for s in specs]
            assert row[f"{es}_ci95_seeds"] == pytest.approx(4.303 * np.std(seed_means, ddof=1) / np.sqrt(3))
    table = markdown(results)
    assert "American eval" in table and "Differences between conditions" in table and "flush" in table
    assert "± seeds" in table and "± deals" in table
    assert table.startswith("# Reward shaping: American vs English reward, line vs terminal\n")


def test_heading_names_the_conditions_that_ran(tiny):
    """Before, the heading always said 'English vs American reward, line vs terminal', whatever ran."""
    _, results = tiny
    american = {**results, "config": {**results["config"], "systems": ["american"]},
                "table": [r for r in results["table"] if r["train_system"] == "american"],
                "hands": [r for r in results["hands"] if r["train_system"] == "american"],
                "paired": [p for p in results["paired"] if p["comparison"] == "line - terminal reward (american)"]}
    table = markdown(american)
    assert table.startswith("# Reward shaping: American reward, line vs terminal\n")
    assert "## Differences between conditions" in table and "| line - terminal reward (american) |" in table
    line = {**results, "config": {**results["config"], "reward_modes": ["line"]},
            "paired": [p for p in results["paired"] if p["comparison"].endswith("reward (line)")]}
    assert markdown(line).startswith("# Reward shaping: American vs English reward, line\n")


@pytest.mark.parametrize("rules,note", [
    ("first_cell=center", ", rules first_cell=center"), ("first_cell=12", ", rules first_cell=center"),
    ("placement=adjacent,first_cell=a1", ", rules placement=adjacent,first_cell=top-left"),
    ({"jokers": 2, "first_cell": 6}, ", rules jokers=2,first_cell=b2"), (None, ""), ("first_cell=none", ""),
])
def test_results_headings_show_the_first_cell_by_name(rules, note):
    """Before, a heading said 'first_cell=12' for the centre, a rule no one writes that way."""
    from agents.experiments.reward_shaping import rules_note
    from pokersquares_env.core import Rules

    assert rules_note(rules or {}) == note
    if note:  # still a spec that --rules reads back
        assert Rules.parse(note.removeprefix(", rules ")) == Rules.parse(rules)


def test_paired_differences_are_antisymmetric_in_meaning_and_hands_are_shares(tiny):
    _, results = tiny
    by = {(p["comparison"], p["eval_system"]): p for p in results["paired"]}
    for (comp, es), p in by.items():
        assert p["deals"] == 6 and p["a_better"] + p["b_better"] <= 6
    means = {(r["train_system"], r["reward_mode"]): r for r in results["table"]}
    p = by[("american - english reward (line)", "american")]
    assert p["mean_diff"] == pytest.approx(means[("american", "line")]["american_mean"]
                                           - means[("english", "line")]["american_mean"])
    a, b = means[("american", "line")]["american_seed_means"], means[("english", "line")]["american_seed_means"]
    assert p["ci95_seeds"] == pytest.approx(welch_ci95(a, b))  # Welch's t over the two conditions' seed means
    for row in results["hands"]:
        total = sum(v for k, v in row.items() if k.startswith("all:"))
        assert total == pytest.approx(1.0)  # five of a kind is not a column without jokers: it cannot happen
    assert "five_of_a_kind" not in results["hand_columns"]


def test_outputs_written_and_rerun_reuses_finished_runs(tiny_rerun, monkeypatch, capsys):
    """A rerun reuses every finished run, names each on stderr (as potential-shaping and compare-trainers do) and
    says so in results.json and results.md; the first run trained them all and says nothing of reuse."""
    out, results = tiny_rerun
    assert [r["reused"] for r in results["runs"]] == [False] * 12 and "Reused" not in markdown(results)
    capsys.readouterr()
    for name in ("results.md", "results.json", "learning_curves.png", "hands.png", "experiment.json"):
        assert (out / name).is_file(), name
    import agents.train

    def no_training(*a, **k):
        raise AssertionError("a finished run was trained again")

    monkeypatch.setattr(agents.train, "train", no_training)
    # as if an earlier rerun had been stopped in its evaluation: the journal goes with that folder (not refused)
    (out / "evaluation" / "games.partial.jsonl").write_text('{"stale": true}\n', encoding="utf-8")
    again = run_experiment(out=str(out), timesteps=416, seeds=[0, 1, 2], games=6, progress=False,
                           train_options=TINY_TRAIN)
    assert again["table"] == results["table"]
    assert not (out / "evaluation" / "games.partial.jsonl").exists()
    err = capsys.readouterr().err
    for run in results["runs"]:
        assert (f"reward-shaping: reusing the finished run in {run['dir']} (the same config; --retrain trains it "
                f"again)") in err
    assert err.count("reusing the finished run") == 12
    assert [r["reused"] for r in again["runs"]] == [True] * 12
    assert [r["reused"] for r in json.loads((out / "results.json").read_text())["runs"]] == [True] * 12
    text = (out / "results.md").read_text()
    assert "Reused, not trained by this call" in text and "american-line-s0, american-line-s1" in text


@pytest.mark.parametrize(
    "options,needle",
    [
        (dict(seeds=[]), "seeds=[]"),
        (dict(seeds=[1, 1]), "seeds=[1, 1]"),
        (dict(reward_modes=["dense"]), "'dense'"),
        (dict(systems=["klondike"]), "klondike"),
        (dict(timesteps=0), "timesteps=0"),
        (dict(train_options={"seed": 3}), "train_options"),
        (dict(train_options={"timesteps": 5}), "train_options"),  # the budget the heading names
        (dict(train_options={"reward_scale": 2.0}), "train_options"),  # the "normalised rewards" the heading names
        (dict(systems=["american", {"points": {}}]), "systems: {'points': {}}: expected"),  # was an unhashable TypeError
        (dict(systems=["american", 3]), "systems: 3: expected"),
        (dict(train_options={"learning_rate": -1.0}), "learning_rate=-1.0"),
        (dict(eval_seed=-1), "eval_seed=-1"),
    ],
)
def test_bad_options_are_named_before_anything_runs(tmp_path, options, needle):
    out = tmp_path / "exp"
    with pytest.raises(ValueError) as err:
        run_experiment(ExperimentConfig(out=str(out)), **options)
    assert needle in str(err.value)
    assert not out.exists()


def test_cli_help_lists_the_experiment(capsys):
    from pokersquares_env.cli import main

    with pytest.raises(SystemExit):
        main(["experiment", "reward-shaping", "--help"])
    assert "--full" in capsys.readouterr().out
    assert main(["experiment"]) == 2


def test_reward_shaping_cli_passes_the_shaping_and_the_rules_to_every_run(tmp_path, capsys):
    from pokersquares_env.cli import main

    out = tmp_path / "rs"
    assert main(["experiment", "reward-shaping", "--out", str(out), "--timesteps", "400", "--seeds", "0", "--systems",
                 "american", "--reward-modes", "line", "--games", "2", "--hidden", "8", "8", "--num-envs", "32",
                 "--shaping", "heuristic", "--rules", "jokers=1,placement=adjacent,first_cell=center",
                 "--no-progress"]) == 0
    config = json.loads((out / "runs" / "american-line-s0" / "config.json").read_text())
    assert config["shaping"] == "heuristic"
    assert {k: config[k] for k in RULES} == RULES  # training, evaluation deals and results follow --rules
    assert _played_rules(out) == RULES
    assert json.loads((out / "results.json").read_text())["config"]["rules"] == RULES
    md = (out / "results.md").read_text()
    assert "rules jokers=1,placement=adjacent,first_cell=center" in md  # as --rules said it, not first_cell=12
    # one system and one reward mode: the heading says so, and no empty table of differences
    assert md.startswith("# Reward shaping: American reward, line\n")
    assert "Differences between conditions" not in md and "| comparison |" not in md
    assert "One condition only (American reward, line): no differences between conditions." in md
    assert "hands.png, experiment.json, evaluation/" in capsys.readouterr().out  # every output it wrote is listed
    saved = json.loads((out / "results.json").read_text())
    assert "five_of_a_kind" in saved["hand_columns"] and "five of a kind" in (out / "results.md").read_text()
    for row in saved["hands"]:  # with jokers, five of a kind is a column, and the shares are all of them
        assert sum(v for k, v in row.items() if k.startswith("all:")) == pytest.approx(1.0)
    with pytest.raises(SystemExit):
        main(["experiment", "reward-shaping", "--shaping", "magic"])
    assert "magic" in capsys.readouterr().err
    bad = tmp_path / "bad"
    assert main(["experiment", "reward-shaping", "--out", str(bad), "--rules", "jokers=9"]) == 2
    assert "jokers" in capsys.readouterr().err and not bad.exists()
    with pytest.raises(ValueError, match="may not set"):
        run_experiment(ExperimentConfig(out=str(bad)), train_options={"jokers": 1})
    assert not bad.exists()


def test_compare_trainers_writes_a_table_and_curves(tmp_path):
    from agents.experiments.compare_trainers import compare_trainers

    result = compare_trainers(str(tmp_path), timesteps=832, algos=("fast-ppo",), games=4, eval_points=2,
                              progress=False, train_options={"fast-ppo": TINY_TRAIN})
    row = result["rows"][0]
    assert row["errors"] == 0 and row["games"] == 4 and row["curve"]["step"]
    assert row["steps_per_second"] == pytest.approx(row["steps"] / row["seconds"])
    assert (tmp_path / "trainer_curves.png").is_file() and "| fast-ppo |" in (tmp_path / "comparison.md").read_text()
    # the common deals are the harness's deals of seed + 1 (seed 0 here), as comparison.md says
    from agents.evaluation import deal_deck
    from pokersquares_env.cards import parse_card

    games = [json.loads(line) for line in (tmp_path / "evaluation" / "games.jsonl").read_text().splitlines()]
    assert [[parse_card(c) for c in g["deck"]] for g in games] == [list(deal_deck(1, i)) for i in range(4)]
    with pytest.raises(ValueError, match="a2c"):
        compare_trainers(str(tmp_path / "x"), algos=("a2c",))
    # one deal has no interval: the table says n/a (it said "± nan"); the trained run is reused
    result = compare_trainers(str(tmp_path), timesteps=832, algos=("fast-ppo",), games=1, eval_points=2,
                              progress=False, train_options={"fast-ppo": TINY_TRAIN})
    assert result["rows"][0]["reused"] and result["rows"][0]["games"] == 1
    table = (tmp_path / "comparison.md").read_text()
    assert f"| {result['rows'][0]['mean']:.2f} ± n/a |" in table and "nan" not in table

    def refuse(name):  # comparison.json held a bare NaN, which strict JSON readers refuse (now null)
        raise ValueError(f"bare {name} in comparison.json")

    rows = json.loads((tmp_path / "comparison.json").read_text(), parse_constant=refuse)
    assert rows[0]["games"] == 1 and rows[0]["ci95"] is None


def test_compare_trainers_rerun_removes_the_earlier_comparison_before_training(tmp_path, monkeypatch):
    """An audit found that a rerun into the same folder with other options, stopped during its training, left the
    earlier run's comparison.md/json, plot and evaluation beside the new options' experiment.json."""
    import agents.train
    from agents.experiments.compare_trainers import OUTPUT_FILES, compare_trainers

    compare_trainers(str(tmp_path), timesteps=832, algos=("fast-ppo",), games=4, eval_points=2, seed=7,
                     progress=False, train_options={"fast-ppo": TINY_TRAIN})
    assert all((tmp_path / name).is_file() for name in OUTPUT_FILES) and (tmp_path / "evaluation").is_dir()

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(agents.train, "train", stopped)
    with pytest.raises(KeyboardInterrupt):
        compare_trainers(str(tmp_path), timesteps=832, algos=("fast-ppo",), games=4, eval_points=2, seed=9,
                         progress=False, train_options={"fast-ppo": TINY_TRAIN})
    assert json.loads((tmp_path / "experiment.json").read_text())["seed"] == 9
    assert not any((tmp_path / name).exists() for name in OUTPUT_FILES) and not (tmp_path / "evaluation").exists()


def test_compare_trainers_net_sets_every_runs_network(tmp_path, monkeypatch, capsys):
    """--net lines gives MaskablePPO fast-ppo's row/column network too (it used to compare only SB3's MLP); the
    table names each run's network, and a bad --net is a usage error before anything is written."""
    from agents.experiments import compare_trainers as module
    from pokersquares_env.cli import main

    tiny_sb3 = dict(hidden=[8, 8], num_envs=2, num_steps=64, minibatch_size=64, update_epochs=1)
    result = module.compare_trainers(str(tmp_path / "lines"), timesteps=128, algos=("maskable-ppo", "fast-ppo"),
                                     games=3, eval_points=1, net="lines", progress=False,
                                     train_options={"maskable-ppo": tiny_sb3, "fast-ppo": TINY_TRAIN})
    assert [(r["algo"], r["net"]) for r in result["rows"]] == [("maskable-ppo", "lines"), ("fast-ppo", "lines")]
    stored = json.loads((tmp_path / "lines" / "maskable-ppo" / "config.json").read_text())
    assert stored["net"] == "lines"
    assert "| maskable-ppo | lines |" in (tmp_path / "lines" / "comparison.md").read_text()
    default = module.compare_trainers(str(tmp_path / "own"), timesteps=128, algos=("maskable-ppo",), games=3,
                                      eval_points=1, progress=False, train_options={"maskable-ppo": tiny_sb3})
    assert [r["net"] for r in default["rows"]] == ["mlp"]  # its own (SB3's MlpPolicy)
    seen, real = {}, module.compare_trainers
    monkeypatch.setattr(module, "compare_trainers", lambda out, **kw: seen.update(kw) or {"table": ""})
    assert main(["experiment", "compare-trainers", "--net", "lines", "--out", str(tmp_path / "cli")]) == 0
    assert seen["net"] == "lines"
    with pytest.raises(SystemExit):
        main(["experiment", "compare-trainers", "--net", "cnn", "--out", str(tmp_path / "bad")])
    assert "invalid choice: 'cnn'" in capsys.readouterr().err and not (tmp_path / "bad").exists()
    with pytest.raises(ValueError, match="net=.cnn."):
        real(str(tmp_path / "bad"), net="cnn", progress=False)
    assert not (tmp_path / "bad").exists()


def test_compare_trainers_on_a_custom_point_system_plots_that_system(tmp_path):
    """A JSON point system is the reward and the evaluation; the curves are the run's own eval_score."""
    from agents.experiments.compare_trainers import compare_trainers
    from pokersquares_env.scoring import POINT_SYSTEMS

    table = dict(POINT_SYSTEMS["american"])
    table["one_pair"] = 40  # far from both built-in systems, so a mix-up shows
    spec = tmp_path / "pairs.json"
    spec.write_text(json.dumps({"name": "pairs", "points": table}))
    result = compare_trainers(str(tmp_path / "run"), timesteps=832, algos=("fast-ppo",), games=4, eval_points=2,
                              scoring=str(spec), progress=False, train_options={"fast-ppo": TINY_TRAIN})
    row = result["rows"][0]
    assert row["curve"]["eval_score"] and row["curve"]["eval_score"] != row["curve"]["eval_american"]
    games = [json.loads(line) for line in (tmp_path / "run" / "evaluation" / "games.jsonl").open()]
    assert all(g["point_system"]["name"] == "pairs" for g in games)
    assert row["mean"] == pytest.approx(np.mean([g["score"] for g in games]))
    assert "pairs reward" in result["table"]


def test_potential_shaping_compares_shapings_on_common_deals(tmp_path, monkeypatch):
    import agents.expectimax
    from agents.experiments.potential_shaping import potential_shaping

    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(agents.expectimax, "DEFAULT_GAMES", 2000)  # the tables potential's training, shrunk
    out = tmp_path / "ps"
    result = potential_shaping(str(out), shapings=("none", "tables"), seeds=(0, 1), timesteps=832, games=6,
                               eval_points=2, progress=False, train_options=TINY_TRAIN)
    assert {(r["shaping"], r["seed"]) for r in result["runs"]} == {("none", 0), ("none", 1), ("tables", 0), ("tables", 1)}
    saved = json.loads((out / "results.json").read_text())
    assert saved["shapings"]["tables"]["seed_means"] == [r["mean"] for r in result["runs"] if r["shaping"] == "tables"]
    # the paired difference is the difference of the seed-averaged means (the same deals for every run)
    t, n = saved["shapings"]["tables"], saved["shapings"]["none"]
    assert t["vs_none"]["mean_diff"] == pytest.approx(t["mean"] - n["mean"])
    assert t["ci95_seeds"] == pytest.approx(seed_ci95(t["seed_means"]))  # t with 1 df over the two seeds
    assert t["vs_none"]["ci95_seeds"] == pytest.approx(welch_ci95(t["seed_means"], n["seed_means"]))
    assert "vs_none" not in n
    assert (out / "curves.png").is_file() and "| tables |" in (out / "results.md").read_text()
    for shaping in ("none", "tables"):
        cfg = json.loads((out / "runs" / f"{shaping}_s1" / "config.json").read_text())
        assert cfg["shaping"] == shaping and cfg["timesteps"] == 832
    two = potential_shaping(str(tmp_path / "two"), shapings=("none", "heuristic"), seeds=(3,), timesteps=416, games=4,
                            progress=False, train_options=TINY_TRAIN, jobs=2)  # runs in two processes
    assert [r["steps"] for r in two["runs"]] == [416, 416] and "vs_none" in two["shapings"]["heuristic"]
    with pytest.raises(ValueError, match="magic"):
        potential_shaping(str(tmp_path / "x"), shapings=("magic",))
    with pytest.raises(ValueError, match="seeds"):
        potential_shaping(str(tmp_path / "x"), seeds=(1, 1))
    assert not (tmp_path / "x").exists()


def test_potential_shaping_cli_names_bad_options(tmp_path, capsys):
    from pokersquares_env.cli import main

    out = tmp_path / "ps"
    assert main(["experiment", "potential-shaping", "--seeds", "1", "1", "--out", str(out)]) == 2
    assert "seeds=[1, 1]" in capsys.readouterr().err and not out.exists()
    assert main(["experiment", "compare-trainers", "--algos", "a2c", "--out", str(out)]) == 2
    assert "a2c" in capsys.readouterr().err



def test_compare_trainers_and_potential_shaping_follow_the_rules(tmp_path, monkeypatch, capsys):
    import agents.expectimax
    from agents.experiments.compare_trainers import compare_trainers
    from agents.experiments.potential_shaping import potential_shaping
    from pokersquares_env.cli import main

    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(agents.expectimax, "DEFAULT_GAMES", 2000)  # the tables potential's training, shrunk
    ct = tmp_path / "ct"
    result = compare_trainers(str(ct), timesteps=416, algos=("fast-ppo",), games=2, eval_points=1, progress=False,
                              rules="jokers=1,placement=adjacent,first_cell=c3",
                              train_options={"fast-ppo": TINY_TRAIN})
    assert result["rules"] == RULES and _played_rules(ct) == RULES
    config = json.loads((ct / "fast-ppo" / "config.json").read_text())
    assert {k: config[k] for k in RULES} == RULES
    assert "rules jokers=1" in (ct / "comparison.md").read_text()
    assert json.loads((ct / "experiment.json").read_text())["rules"] == RULES

    ps = tmp_path / "ps"
    result = potential_shaping(str(ps), shapings=("tables",), seeds=(0,), timesteps=416, games=2, eval_points=1,
                               rules=RULES, progress=False, train_options=TINY_TRAIN)
    assert result["rules"] == RULES and _played_rules(ps) == RULES
    config = json.loads((ps / "runs" / "tables_s0" / "config.json").read_text())
    assert {k: config[k] for k in RULES} == RULES
    assert "rules jokers=1,placement=adjacent,first_cell=center" in (ps / "results.md").read_text()
    with pytest.raises(ValueError, match="may not set"):
        potential_shaping(str(tmp_path / "x"), rules=RULES, train_options={"placement": "free"})
    for name in ("potential-shaping", "compare-trainers"):
        capsys.readouterr()
        bad = tmp_path / name
        assert main(["experiment", name, "--out", str(bad), "--rules", "placement=diagonal"]) == 2
        assert "diagonal" in capsys.readouterr().err and not bad.exists()


@pytest.mark.parametrize(
    "experiment,options,needle",
    [
        ("potential", dict(games=0), "games=0"),
        ("potential", dict(eval_seed=-1), "eval_seed=-1"),
        ("compare", dict(games=0), "games=0"),
        ("compare", dict(seed=-2), "seed=-2"),
        ("tune", dict(seed=-1), "seed=-1"),
        ("tune", dict(eval_seed=1.5), "eval_seed=1.5"),
    ],
)
def test_evaluation_options_are_checked_before_any_training(tmp_path, monkeypatch, experiment, options, needle):
    """A bad deal count or seed of the final evaluation is named up front, not after minutes of training."""
    import agents.tables
    import agents.train
    from agents.experiments.compare_trainers import compare_trainers
    from agents.experiments.potential_shaping import potential_shaping
    from agents.experiments.tune_tables import tune_tables_experiment

    def no_work(*args, **kwargs):
        raise AssertionError("trained before checking the options")

    monkeypatch.setattr(agents.train, "train", no_work)
    monkeypatch.setattr(agents.tables, "load_or_train", no_work)
    out = tmp_path / "exp"
    run = {"potential": lambda: potential_shaping(out, shapings=("none",), seeds=(0,), timesteps=2048, **options),
           "compare": lambda: compare_trainers(out, algos=("fast-ppo",), timesteps=2048, **options),
           "tune": lambda: tune_tables_experiment(out, **options)}[experiment]
    with pytest.raises(ValueError, match=re.escape(needle)):
        run()
    assert not out.exists()


def _no_work(monkeypatch):
    """Make any training (of a run or of the tables) fail the test: the checks must come first."""
    import agents.tables
    import agents.train

    def no_work(*args, **kwargs):
        raise AssertionError("trained before checking the options")

    monkeypatch.setattr(agents.train, "train", no_work)
    monkeypatch.setattr(agents.tables, "load_or_train", no_work)


def test_compare_trainers_refuses_a_dqn_budget_too_short_to_learn_before_any_run(tmp_path, monkeypatch, capsys):
    import agents.train
    from agents.experiments.compare_trainers import compare_trainers
    from pokersquares_env.cli import main

    monkeypatch.setattr(agents.train, "train", lambda *a, **k: pytest.fail("trained before refusing dqn's budget"))
    out = tmp_path / "ct"
    with pytest.raises(ValueError, match=r"learning_starts=5000: .*the run takes 3,200"):
        compare_trainers(str(out), algos=("fast-ppo", "dqn"), timesteps=3200)
    assert main(["experiment", "compare-trainers", "--out", str(out), "--algos", "fast-ppo", "dqn",
                 "--timesteps", "3200", "--no-progress"]) == 2
    assert "learning_starts=5000" in capsys.readouterr().err
    assert not out.exists() or not any(out.iterdir())


def test_compare_trainers_advises_the_budget_dqn_needs_not_an_option_it_lacks(tmp_path, monkeypatch, capsys):
    """Before, compare-trainers refused a short dqn budget with "lower --learning-starts or raise --timesteps", and
    it has no --learning-starts option: it now names the --timesteps that would do, and --set for learning_starts."""
    import agents.train
    from agents.config import ConfigError, TrainConfig, check_dqn_budget, dqn_min_timesteps
    from pokersquares_env.cli import main

    monkeypatch.setattr(agents.train, "train", lambda *a, **k: pytest.fail("trained before refusing dqn's budget"))
    out = tmp_path / "ct"
    assert main(["experiment", "compare-trainers", "--algos", "dqn", "fast-ppo", "--timesteps", "2000", "--games", "5",
                 "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "--learning-starts" not in err and err.count("\n") == 1, err
    # dqn's defaults: learning_starts 5000 in whole iterations of 64 steps -> 79 iterations, 5,056 steps
    assert ("(raise --timesteps to at least 5,056, to reach dqn's learning_starts (5,000), or lower learning_starts: "
            "--set dqn.learning_starts=N)") in err, err
    assert not out.exists()
    check_dqn_budget(TrainConfig(algo="dqn", timesteps=5056).resolved())  # that budget does train
    with pytest.raises(ConfigError):
        check_dqn_budget(TrainConfig(algo="dqn", timesteps=5056 - 64).resolved())  # one iteration less does not
    # the advised budget is the least that passes, whichever check refuses (learning_starts, or num_steps)
    for n, every, starts in [(64, 1, 5000), (16, 1, 1600), (64, 20, 0), (16, 3, 49), (7, 4, 100), (1, 1, 3)]:
        cfg = TrainConfig(algo="dqn", num_envs=n, num_steps=every, learning_starts=starts).resolved()
        least = dqn_min_timesteps(cfg)
        check_dqn_budget(TrainConfig(**{**cfg.to_dict(), "timesteps": least}))
        with pytest.raises(ConfigError, match="would train nothing"):
            check_dqn_budget(TrainConfig(**{**cfg.to_dict(), "timesteps": least - n}))


def test_compare_trainers_refuses_a_repeated_algorithm_before_training(tmp_path, monkeypatch, capsys):
    from agents.experiments.compare_trainers import compare_trainers
    from pokersquares_env.cli import main

    _no_work(monkeypatch)
    out = tmp_path / "ct"
    with pytest.raises(ValueError, match=re.escape("algos=['fast-ppo', 'dqn', 'fast-ppo']: 'fast-ppo' given more "
                                                   "than once")):
        compare_trainers(str(out), algos=("fast-ppo", "dqn", "fast-ppo"), timesteps=100)
    assert main(["experiment", "compare-trainers", "--out", str(out), "--algos", "fast-ppo", "fast-ppo",
                 "--timesteps", "100", "--games", "2", "--no-progress"]) == 2
    assert "'fast-ppo' given more than once" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("systems", [["sa/pts.json", "sb/pts.json"], ["american", "american.json"],
                                     ["american", "American"], ["english", "sa/English.json"]])
def test_reward_shaping_refuses_systems_that_would_share_run_folders(tmp_path, monkeypatch, systems):
    from pokersquares_env.scoring import POINT_SYSTEMS

    _no_work(monkeypatch)
    monkeypatch.chdir(tmp_path)
    for name in systems:
        if name.endswith(".json"):
            (tmp_path / name).parent.mkdir(exist_ok=True)
            (tmp_path / name).write_text(json.dumps({"name": "p", "points": dict(POINT_SYSTEMS["american"])}))
    out = tmp_path / "rs"
    with pytest.raises(ValueError, match=re.escape(f"systems: {systems[0]!r} and {systems[1]!r} would share the run "
                                                   "folders")):
        run_experiment(ExperimentConfig(out=str(out), systems=systems, seeds=[0], timesteps=100))
    assert not out.exists()


@pytest.mark.parametrize("experiment", ["compare-trainers", "potential-shaping", "reward-shaping"])
@pytest.mark.parametrize("mark", [None, "pokersquares experiment another"])
def test_experiments_refuse_a_run_folder_they_did_not_write(tmp_path, monkeypatch, capsys, experiment, mark):
    """A run trained by hand (or by another experiment) where an experiment would train is refused, untouched."""
    from pokersquares_env.cli import main

    _no_work(monkeypatch)
    out = tmp_path / "exp"
    folder = out / {"compare-trainers": "fast-ppo", "potential-shaping": "runs/none_s0",
                    "reward-shaping": "runs/american-line-s0"}[experiment]
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}\n")
    (folder / "notes.txt").write_text("mine\n")
    if mark is not None:
        (folder / "experiment_run.json").write_text(json.dumps({"written_by": mark}))  # marks.RUN_MARK
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    args = {"compare-trainers": ["--algos", "fast-ppo"], "potential-shaping": ["--shapings", "none", "--seeds", "0"],
            "reward-shaping": ["--systems", "american", "--reward-modes", "line", "--seeds", "0"]}[experiment]
    assert main(["experiment", experiment, "--out", str(out), "--timesteps", "100", "--games", "2", "--no-progress",
                 *args]) == 2
    err = capsys.readouterr().err
    assert f"{str(folder)!r} holds a training run the {experiment} experiment did not write" in err
    assert "choose another --out" in err and "Traceback" not in err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_own_run_marks(tmp_path):
    from agents.experiments.marks import RUN_MARK, check_own_runs, mark_run

    fresh, other_files, own, foreign = (tmp_path / n for n in ("fresh", "other", "own", "foreign"))
    other_files.mkdir()
    (other_files / "notes.txt").write_text("x")  # no run files: nothing to protect
    mark_run(own, "potential-shaping")
    (own / "model.pt").write_text("x")
    foreign.mkdir()
    (foreign / "progress.json").write_text("{}")
    check_own_runs([fresh, other_files, own], "potential-shaping")
    with pytest.raises(ValueError, match="foreign"):
        check_own_runs([own, foreign], "potential-shaping")
    with pytest.raises(ValueError, match="the reward-shaping experiment did not write"):
        check_own_runs([own], "reward-shaping")  # another experiment's run
    (own / RUN_MARK).write_text("[damaged")
    with pytest.raises(ValueError, match="did not write"):
        check_own_runs([own], "potential-shaping")
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ValueError, match="afile' is a file"):
        check_own_runs([tmp_path / "afile"], "potential-shaping")


def test_reward_shaping_trains_its_own_runs_again(tiny, monkeypatch, tmp_path):
    """Run again with --retrain into its own --out: the marked runs pass the check and are trained again (in a copy of
    the module's experiment folder, which the other tests read unchanged)."""
    import shutil

    import agents.train

    out = tmp_path / "rs"
    shutil.copytree(tiny[0], out)
    fixture = {p: p.read_bytes() for p in tiny[0].rglob("*") if p.is_file()}
    calls = []

    class Stop(Exception):
        pass

    def train_stub(cfg, **kwargs):
        calls.append((cfg.out, kwargs))
        raise Stop

    monkeypatch.setattr(agents.train, "train", train_stub)
    with pytest.raises(Stop):
        run_experiment(out=str(out), timesteps=416, seeds=[0, 1, 2], games=6, progress=False,
                       train_options=TINY_TRAIN, retrain=True)
    assert calls == [(str(out / "runs" / "american-line-s0"), {"overwrite": True})]
    assert {p: p.read_bytes() for p in tiny[0].rglob("*") if p.is_file()} == fixture  # other tests see it unchanged


@pytest.mark.parametrize("damage", ["{bad", "[1]", '{"steps": "x"}', "config"])
def test_a_damaged_run_record_makes_a_reward_shaping_run_unfinished(tmp_path, capsys, damage):
    from agents.config import point_table
    from agents.experiments.reward_shaping import _finished

    cfg = ExperimentConfig(out=str(tmp_path), train_options=TINY_TRAIN)
    tc = cfg.train_config("american", "line", 0)
    folder = tmp_path / "run"
    folder.mkdir()
    tc.resolved().save(folder / "config.json")
    (folder / "model.pt").write_bytes(b"x")
    (folder / "progress.json").write_text(json.dumps({"steps": 10**9, "seconds": 1, "episodes": 1}))
    (folder / "point_system.json").write_text(json.dumps(point_table("american")))  # as train writes it
    assert _finished(folder, tc)
    name = "config.json" if damage == "config" else "progress.json"
    (folder / name).write_text("[1]" if damage == "config" else damage)
    assert not _finished(folder, tc)
    err = capsys.readouterr().err
    assert str(folder / name) in err and "trained again" in err


def test_experiment_help_states_every_default():
    from pokersquares_env.cli import build_parser

    parser = build_parser("experiment")
    sub = next(a for a in parser._actions if a.dest == "command").choices["experiment"]
    experiments = next(a for a in sub._actions if a.dest == "experiment").choices
    for name, p in experiments.items():
        for action in p._actions:
            if action.option_strings and action.nargs != 0:  # options that take a value (not flags)
                assert "default" in (action.help or ""), f"{name} {action.option_strings[0]}: no default stated"
    from agents.experiments.reward_shaping import SMALL

    help_text = experiments["reward-shaping"].format_help()
    assert f"(default {SMALL.eval_seed})" in help_text.replace("\n", " ")


ROOT_ARGS = {"compare-trainers": ["--algos", "fast-ppo"], "potential-shaping": ["--shapings", "none", "--seeds", "0"],
             "reward-shaping": ["--systems", "american", "--reward-modes", "line", "--seeds", "0"],
             "tune-tables": ["--generations", "1", "--refine", "0", "--population", "4", "--elite", "2"]}


def _cli(experiment, out):
    length = [] if experiment == "tune-tables" else ["--timesteps", "100"]  # tune-tables trains no policy
    return ["experiment", experiment, "--out", str(out), *length, "--games", "2", "--no-progress",
            *ROOT_ARGS[experiment]]


@pytest.mark.parametrize("experiment", ["compare-trainers", "potential-shaping", "reward-shaping", "tune-tables"])
def test_experiments_refuse_a_folder_of_anothers_results_before_training(tmp_path, monkeypatch, capsys, experiment):
    """Before, only the run sub-folders were protected: someone else's results.md, results.json and evaluation/ in
    --out were replaced, and compare-trainers --out <a train run folder> replaced that run's evaluation/."""
    from pokersquares_env.cli import main

    _no_work(monkeypatch)
    other = tmp_path / "other"
    (other / "evaluation").mkdir(parents=True)
    for name in ("results.md", "results.json", "evaluation/summary.md", "notes.txt"):
        (other / name).write_text("mine\n")
    run = tmp_path / "run"  # a run trained by hand, with its final evaluation
    (run / "evaluation").mkdir(parents=True)
    for name in ("config.json", "model.pt", "progress.json", "evaluation/games.jsonl"):
        (run / name).write_text("mine\n")
    another = tmp_path / "another"  # another experiment's folder
    another.mkdir()
    stranger = "reward-shaping" if experiment == "tune-tables" else "tune-tables"
    (another / "experiment.json").write_text(json.dumps({"written_by": f"pokersquares experiment {stranger}"}))
    for out, needle in ((other, "no experiment.json of it; it holds evaluation/, notes.txt, results.json, results.md"),
                        (run, "no experiment.json of it; it holds config.json, evaluation/, model.pt, progress.json"),
                        (another, f"its experiment.json names 'pokersquares experiment {stranger}'")):
        before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
        assert main(_cli(experiment, out)) == 2
        err = capsys.readouterr().err
        assert f"{str(out)!r} is not a folder of the {experiment} experiment ({needle}" in err, err
        assert "choose another --out" in err and "Traceback" not in err
        assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    # its own folder (experiment.json written_by it) whose evaluation/ holds files no evaluation writes: refused too
    own = tmp_path / "own"
    (own / "evaluation").mkdir(parents=True)
    (own / "experiment.json").write_text(json.dumps({"written_by": f"pokersquares experiment {experiment}"}))
    (own / "evaluation" / "notes.txt").write_text("mine\n")
    assert main(_cli(experiment, own)) == 2
    err = capsys.readouterr().err
    assert f"the experiment's evaluation folder {str(own / 'evaluation')!r} has no evaluation.json and holds " \
           f"entries no evaluation writes (notes.txt)" in err, err
    assert (own / "evaluation" / "notes.txt").read_text() == "mine\n"


def test_an_older_experiment_folder_is_recognised_by_its_contents(tmp_path):
    from agents.experiments import compare_trainers, potential_shaping, reward_shaping, tune_tables
    from agents.experiments.marks import check_own_root

    def folder(name, files):
        path = tmp_path / name
        path.mkdir()
        for fname, data in files.items():
            (path / fname).write_text(json.dumps(data))
        (path / "results.md").write_text("# results\n")
        return path

    rs = folder("rs", {"experiment.json": {"out": "x", "systems": ["american"], "reward_modes": ["line"],
                                           "seeds": [0], "timesteps": 1, "games": 1, "eval_seed": 0}})
    ct = folder("ct", {"experiment.json": {"timesteps": 1, "seed": 0, "algos": ["dqn"], "games": 1, "scoring": "a"}})
    ct_first = folder("ct_first", {"comparison.json": [{"algo": "dqn", "steps": 1, "spec": "dqn:x", "mean": 1.0}]})
    ps = folder("ps", {"results.json": {"shapings": {}, "runs": [], "seeds": [0], "eval_seed": 0, "timesteps": 1}})
    check_own_root(rs, "reward-shaping", reward_shaping._older_root)
    check_own_root(ct, "compare-trainers", compare_trainers._older_root)
    check_own_root(ct_first, "compare-trainers", compare_trainers._older_root)
    check_own_root(ps, "potential-shaping", potential_shaping._older_root)
    tt = folder("tt", {"results.json": {"ply": 1, "generations": 1, "refine": 0, "population": 4, "evaluation": {}}})
    (tt / "tables.npz").write_bytes(b"x")
    check_own_root(tt, "tune-tables", tune_tables._older_root)
    for path, experiment, older in ((rs, "compare-trainers", compare_trainers._older_root),
                                    (tt, "reward-shaping", reward_shaping._older_root),
                                    (ps, "tune-tables", tune_tables._older_root),
                                    (ct, "reward-shaping", reward_shaping._older_root),
                                    (ps, "compare-trainers", compare_trainers._older_root),
                                    (rs, "potential-shaping", potential_shaping._older_root),
                                    (folder("ct_partial", {"experiment.json": {"timesteps": 1, "seed": 0}}),
                                     "compare-trainers", compare_trainers._older_root)):
        with pytest.raises(ValueError, match=f"is not a folder of the {experiment} experiment"):
            check_own_root(path, experiment, older)
    # contents an older tune-tables run would have, but a mark that names another experiment: the mark decides
    (tt / "experiment.json").write_text(json.dumps({"written_by": "pokersquares experiment reward-shaping"}))
    with pytest.raises(ValueError, match="is not a folder of the tune-tables experiment \\(its experiment.json names "
                                         "'pokersquares experiment reward-shaping'"):
        check_own_root(tt, "tune-tables", tune_tables._older_root)
    (tmp_path / "empty").mkdir()
    check_own_root(tmp_path / "empty", "reward-shaping")  # new or empty: its own from now on
    check_own_root(tmp_path / "new", "reward-shaping")


def test_an_experiment_marks_its_folder_before_training_and_runs_again_into_it(tmp_path, monkeypatch, capsys):
    """experiment.json (with written_by) is written before any training, so an interrupted experiment's folder is
    still its own; its run marks survive the training that replaces the old run there."""
    import agents.fast_ppo
    from agents.experiments.compare_trainers import compare_trainers
    from agents.experiments.marks import RUN_MARK

    class Stop(Exception):
        pass

    def interrupted(cfg, run):
        raise Stop

    monkeypatch.setattr(agents.fast_ppo, "train", interrupted)
    out = tmp_path / "ct"
    for _ in range(2):  # the second time into the folder the first left behind
        with pytest.raises(Stop):
            compare_trainers(str(out), timesteps=416, algos=("fast-ppo",), games=2, progress=False,
                             train_options={"fast-ppo": TINY_TRAIN})
        assert json.loads((out / "experiment.json").read_text())["written_by"] == \
            "pokersquares experiment compare-trainers"
        assert json.loads((out / "fast-ppo" / RUN_MARK).read_text())["written_by"] == \
            "pokersquares experiment compare-trainers"
        assert (out / "fast-ppo" / "config.json").is_file()  # the run had started: its files are the experiment's


def test_a_run_replaced_by_train_overwrite_is_no_longer_the_experiments(tmp_path, monkeypatch, capsys):
    """Before, experiment_run.json survived `pokersquares train --overwrite`, so a run trained by hand there later
    counted as the experiment's own (and was replaced by it)."""
    import agents.fast_ppo
    from agents.experiments.marks import RUN_MARK, check_own_runs, mark_run
    from pokersquares_env.cli import main

    monkeypatch.setattr(agents.fast_ppo, "train", lambda cfg, run: None)  # the run folder is the point, not training
    folder = tmp_path / "exp" / "fast-ppo"
    mark_run(folder, "compare-trainers")
    (folder / "config.json").write_text("{}")  # the experiment's run
    (folder / "notes.txt").write_text("mine")
    check_own_runs([folder], "compare-trainers")
    assert main(["train", "--algo", "fast-ppo", "--out", str(folder), "--overwrite", "--final-eval-games", "0",
                 "--no-progress"]) == 0
    assert not (folder / RUN_MARK).exists() and (folder / "notes.txt").read_text() == "mine"
    with pytest.raises(ValueError, match="the compare-trainers experiment did not write"):
        check_own_runs([folder], "compare-trainers")


@pytest.mark.parametrize("experiment", ["compare-trainers", "potential-shaping", "reward-shaping", "tune-tables"])
def test_an_out_that_is_a_file_is_named_as_the_option_given(tmp_path, monkeypatch, capsys, experiment):
    """Before: "out_dir='afile' is a file" -- no experiment has an out_dir option."""
    from agents.experiments.compare_trainers import compare_trainers
    from pokersquares_env.cli import main

    _no_work(monkeypatch)
    afile = tmp_path / "afile"
    afile.write_text("keep")
    assert main(["experiment", experiment, "--out", str(afile), "--no-progress"]) == 2
    assert capsys.readouterr().err == (f"pokersquares experiment {experiment}: --out {str(afile)!r} is a file: "
                                       f"expected a folder for the outputs (new or existing)\n")
    with pytest.raises(ValueError, match=re.escape(f"out={str(afile)!r} is a file")):  # Python: the parameter
        compare_trainers(str(afile), algos=("fast-ppo",), timesteps=100, games=2)
    assert afile.read_text() == "keep"


@pytest.mark.parametrize("experiment", ["compare-trainers", "potential-shaping"])
def test_ctrl_c_stops_the_experiment_with_status_130(tmp_path, monkeypatch, capsys, experiment):
    """Before, compare-trainers and potential-shaping went on after a Ctrl-C stopped a run: they trained the next
    runs, evaluated unfinished ones and exited 0 (reward-shaping stopped)."""
    import agents.evaluation
    import agents.train
    from agents.train import TrainResult
    from pokersquares_env.cli import main

    calls = []

    def interrupted(cfg, **kwargs):
        calls.append(cfg.out)
        return TrainResult(out=cfg.out, model_path=cfg.out + "/model.pt", steps=416, seconds=1.0, interrupted=True,
                           evaluation=None)

    def no_evaluation(*args, **kwargs):
        raise AssertionError("evaluated an interrupted run")

    monkeypatch.setattr(agents.train, "train", interrupted)
    monkeypatch.setattr(agents.evaluation, "evaluate", no_evaluation)
    out = tmp_path / "x"
    extra = ["--algos", "fast-ppo", "dqn"] if experiment == "compare-trainers" else ["--shapings", "none", "heuristic"]
    assert main(["experiment", experiment, "--out", str(out), "--timesteps", "6400", "--games", "2",
                 "--no-progress", *extra]) == 130  # (dqn needs more steps than its learning_starts, 5000)
    err = capsys.readouterr().err
    assert "Ctrl-C stopped" in err and "kept" in err and "interrupted" in err
    assert len(calls) == 1  # the next run never started
    assert not any((out / name).exists() for name in ("comparison.md", "results.md"))


def test_the_deals_interval_averages_the_seeds_per_deal(tiny):
    """The mean table's ± deals is Student's t over the common deals with the seeds averaged per deal, as the note
    says; before, it pooled seeds x deals as independent games (a narrower interval)."""
    from agents.stats import mean_ci95

    out, results = tiny
    games = [json.loads(line) for line in (out / "evaluation" / "games.jsonl").read_text().splitlines()]
    for row in results["table"]:
        specs = [r["spec"] for r in results["runs"]
                 if r["system"] == row["train_system"] and r["mode"] == row["reward_mode"]]
        for es in EVAL_SYSTEMS:
            per_seed = [[g["scores"][es] for g in games if g["agent"] == s] for s in specs]
            arr = np.array(per_seed, dtype=float)  # (seeds, deals), the deals in the same order for every agent
            assert arr.shape == (3, 6)
            assert row[f"{es}_ci95"] == pytest.approx(mean_ci95(arr.mean(0)))
            assert row[f"{es}_mean"] == pytest.approx(arr.mean())
    assert "seeds averaged per deal" in markdown(results)


def test_reward_shaping_with_few_games_per_rollout_caps_the_minibatch_and_records_its_options(tmp_path, capsys):
    """Before, --num-envs below 32 kept fast-ppo's minibatch of 1,600 and failed with an error naming
    minibatch_size, which the command does not offer; and results.md did not say which training options (--shaping,
    --num-envs, ...) the runs had."""
    from pokersquares_env.cli import main

    out = tmp_path / "rs"
    assert main(["experiment", "reward-shaping", "--out", str(out), "--timesteps", "200", "--seeds", "0", "--systems",
                 "american", "--reward-modes", "line", "--games", "2", "--hidden", "8", "--num-envs", "4",
                 "--shaping", "heuristic", "--no-progress"]) == 0, capsys.readouterr().err
    config = json.loads((out / "runs" / "american-line-s0" / "config.json").read_text())
    assert config["num_envs"] == 4 and config["minibatch_size"] == 4 * config["num_steps"]
    md = (out / "results.md").read_text()
    assert "shaping heuristic" in md and "num_envs 4" in md and "hidden 8" in md
    assert "minibatch_size 200" in md


def test_reward_shaping_takes_a_minibatch_size(tmp_path, capsys):
    """fast-ppo learns more per step with smaller minibatches in short runs (docs/training.md, "fast-ppo's
    minibatch"), and the experiment had no way to give one: --minibatch-size sets every run's; one above the rollout
    is refused before any run, naming both."""
    from pokersquares_env.cli import main

    out = tmp_path / "rs"
    base = ["experiment", "reward-shaping", "--timesteps", "200", "--seeds", "0", "--systems", "american",
            "--reward-modes", "line", "--games", "2", "--hidden", "8", "--num-envs", "4", "--no-progress"]
    assert main([*base, "--out", str(out), "--minibatch-size", "50"]) == 0, capsys.readouterr().err
    config = json.loads((out / "runs" / "american-line-s0" / "config.json").read_text())
    assert config["minibatch_size"] == 50 and "minibatch_size 50" in (out / "results.md").read_text()
    capsys.readouterr()
    assert main([*base, "--out", str(tmp_path / "big"), "--minibatch-size", "400"]) == 2
    err = capsys.readouterr().err
    assert "minibatch_size=400: expected at most num_envs * num_steps = 200" in err, err
    assert not (tmp_path / "big" / "runs").exists()


def test_a_finished_run_is_reused_when_out_is_spelled_otherwise(tiny_rerun, monkeypatch):
    """Before, _finished compared the stored out as text, so `--out rs` after `--out /abs/rs` trained every run
    again."""
    import agents.train

    out, results = tiny_rerun

    def no_training(*a, **k):
        raise AssertionError("a finished run was trained again")

    monkeypatch.setattr(agents.train, "train", no_training)
    monkeypatch.chdir(out.parent)
    again = run_experiment(out=out.name, timesteps=416, seeds=[0, 1, 2], games=6, progress=False,
                           train_options=TINY_TRAIN)
    assert again["table"] == results["table"]


def test_potential_shaping_curves_plot_the_runs_own_point_system(tmp_path, monkeypatch):
    """Before, curves.png plotted eval_english for every scoring but american (a custom point system too)."""
    import matplotlib.axes

    from agents.experiments.potential_shaping import _plot

    plotted = []
    real = matplotlib.axes.Axes.plot

    def spy(self, x, y, *args, **kwargs):
        plotted.append(list(y))
        return real(self, x, y, *args, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "plot", spy)
    curve = {"step": [1, 2], "seconds": [1.0, 2.0], "eval_score": [70.0, 80.0], "eval_american": [30.0, 31.0],
             "eval_english": [10.0, 11.0]}
    results = {"scoring": str(tmp_path / "custom.json"), "runs": [{"shaping": "none", "seed": 0, "curve": curve}]}
    _plot(results, tmp_path / "curves.png")
    assert plotted == [[70.0, 80.0]] and (tmp_path / "curves.png").is_file()


def test_potential_shaping_curves_legend_sits_below_the_axes(tmp_path, monkeypatch):
    """Before, curves.png's legend lay on the axes: with five seeds its fifteen entries covered the curves."""
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from agents.experiments.potential_shaping import _plot
    from helpers import legend_below_the_axes

    saved = []
    real_save = Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda self, path, **kw: (saved.append(self), real_save(self, path, **kw))[1])
    runs = [{"shaping": shaping, "seed": seed, "curve": {"step": [1, 2, 3], "eval_score": [50.0 + seed, 80.0, 100.0]}}
            for shaping in ("none", "heuristic", "tables") for seed in range(5)]
    _plot({"scoring": "american", "runs": runs}, tmp_path / "curves.png")
    assert len(legend_below_the_axes(saved[0]).get_texts()) == 15


def test_potential_shaping_curves_tell_the_seeds_of_a_shaping_apart(tmp_path, monkeypatch):
    """Before, every seed of a shaping was drawn in the same colour, line and marker: the legend listed "none (seed
    0)" and "none (seed 1)" with identical samples, and the curves could not be told apart."""
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from agents.experiments.potential_shaping import _plot

    saved = []
    real_save = Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda self, path, **kw: (saved.append(self), real_save(self, path, **kw))[1])
    seeds = [0, 1, 2, 3, 7, 11]
    runs = [{"shaping": shaping, "seed": seed, "curve": {"step": [1, 2, 3], "eval_score": [50.0 + seed, 80.0, 100.0]}}
            for shaping in ("none", "heuristic", "tables") for seed in seeds]
    _plot({"scoring": "american", "runs": runs}, tmp_path / "curves.png")
    lines = {line.get_label(): line for line in saved[0].axes[0].get_lines()}
    for shaping in ("none", "heuristic", "tables"):
        drawn = [lines[f"{shaping} (seed {seed})"] for seed in seeds]
        assert len({line.get_color() for line in drawn}) == 1  # the colour is the shaping
        looks = {(line.get_linestyle(), line.get_marker()) for line in drawn}
        assert len(looks) == len(seeds), looks  # each seed its own look
    for seed in seeds:  # and a seed looks the same under every shaping
        assert len({(lines[f"{s} (seed {seed})"].get_linestyle(), lines[f"{s} (seed {seed})"].get_marker())
                    for s in ("none", "heuristic", "tables")}) == 1


def test_a_run_trained_for_points_edited_since_is_trained_again(tmp_path, capsys):
    """Before, _finished compared config.json, which names a point-system file by its path: after the file was edited,
    the run trained for the old points was reused."""
    from agents.config import point_table
    from agents.experiments.reward_shaping import _finished
    from pokersquares_env.scoring import POINT_SYSTEMS

    pts = tmp_path / "pts.json"
    pts.write_text(json.dumps({"name": "p", "points": dict(POINT_SYSTEMS["american"])}))
    cfg = ExperimentConfig(out=str(tmp_path), train_options=TINY_TRAIN)
    tc = cfg.train_config(str(pts), "line", 0)
    folder = tmp_path / "run"
    folder.mkdir()
    tc.resolved().save(folder / "config.json")
    (folder / "model.pt").write_bytes(b"x")
    (folder / "progress.json").write_text(json.dumps({"steps": 10**9, "seconds": 1, "episodes": 1}))
    (folder / "point_system.json").write_text(json.dumps(point_table(str(pts)), indent=2) + "\n")  # as train writes
    assert _finished(folder, tc) and capsys.readouterr().err == ""
    pts.write_text(json.dumps({"name": "p", "points": {**POINT_SYSTEMS["american"], "flush": 500}}))
    assert not _finished(folder, tc)
    err = capsys.readouterr().err
    assert str(folder / "point_system.json") in err and "other points" in err and "trained again" in err
    (folder / "point_system.json").unlink()  # the points the run trained for are unknown: trained again
    assert not _finished(folder, tc)
    assert "trained again" in capsys.readouterr().err


def _strict_json(path):
    """The JSON in ``path``, refusing NaN and Infinity (which json.loads accepts, and strict readers do not)."""
    def refuse(token):
        raise AssertionError(f"{path}: {token} is not JSON")

    return json.loads(path.read_text(), parse_constant=refuse)


def test_reward_shaping_without_matplotlib_writes_its_results_and_warns(tmp_path, monkeypatch, capsys):
    """Before, the plots raised ImportError after every run was trained and evaluated (the CLI caught only
    ValueError); and one seed wrote NaN (no seed interval) into results.json, which is not JSON."""
    import sys

    from agents.experiments.reward_shaping import load_results
    from pokersquares_env.cli import main

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as without the plot extra
    out = tmp_path / "rs"
    assert main(["experiment", "reward-shaping", "--out", str(out), "--timesteps", "200", "--seeds", "0", "--systems",
                 "american", "--reward-modes", "line", "--games", "2", "--hidden", "8", "--num-envs", "4",
                 "--no-progress"]) == 0
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if "learning_curves.png" in line]
    assert lines == ["pokersquares experiment reward-shaping: warning: learning_curves.png and hands.png not written: "
                     'plots need matplotlib: pip install "pokersquares_env[plot]"']
    assert "Traceback" not in captured.err and "| american | line |" in captured.out
    assert (out / "results.md").is_file() and not (out / "learning_curves.png").exists()
    saved = _strict_json(out / "results.json")
    assert saved["table"][0]["american_ci95_seeds"] is None and saved["table"][0]["american_seed_sd"] is None
    assert load_results(out) == saved and "n/a" in markdown(saved)  # the readers take null where NaN was


def test_potential_shaping_without_matplotlib_writes_its_results_and_warns(tmp_path, monkeypatch):
    import sys

    from agents.evaluation import PlotsSkippedWarning
    from agents.experiments.potential_shaping import potential_shaping

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out = tmp_path / "ps"
    with (pytest.warns(PlotsSkippedWarning, match="scores.png and hands.png not written"),  # its evaluation's
          pytest.warns(PlotsSkippedWarning, match="curves.png not written")):
        potential_shaping(str(out), shapings=("none",), seeds=(0,), timesteps=416, games=2, eval_points=2,
                          progress=False, train_options=TINY_TRAIN)
    assert (out / "results.md").is_file() and not (out / "curves.png").exists()
    assert not (out / "evaluation" / "scores.png").exists() and (out / "evaluation" / "summary.md").is_file()
    assert _strict_json(out / "results.json")["shapings"]["none"]["ci95_seeds"] is None  # one seed: null, not NaN


@pytest.mark.parametrize("experiment", ["potential-shaping", "reward-shaping"])
def test_a_new_run_removes_the_previous_results_before_training(tiny, tmp_path, monkeypatch, experiment):
    """Before, a rerun stopped (or failed) before its results left the old results, plots and evaluation/ beside the
    new experiment.json, as if they were the new options'."""
    import shutil

    from agents.experiments.potential_shaping import potential_shaping

    out = tmp_path / "exp"
    if experiment == "reward-shaping":
        shutil.copytree(tiny[0], out)
        old = ["results.md", "results.json", "learning_curves.png", "hands.png", "evaluation"]
    else:
        (out / "evaluation").mkdir(parents=True)
        (out / "evaluation" / "summary.json").write_text("[]\n")
        old = ["results.md", "results.json", "curves.png", "evaluation"]
        for name in old[:-1]:
            (out / name).write_text("old\n")
        (out / "experiment.json").write_text(json.dumps({"written_by": "pokersquares experiment potential-shaping"}))
    assert all((out / name).exists() for name in old)
    _no_work(monkeypatch)
    with pytest.raises(AssertionError, match="trained before"):
        if experiment == "reward-shaping":
            run_experiment(out=str(out), timesteps=416, seeds=[0, 1, 2], games=6, progress=False,
                           train_options=TINY_TRAIN, retrain=True)
        else:
            potential_shaping(str(out), shapings=("none",), seeds=(0,), timesteps=416, games=2, progress=False,
                              train_options=TINY_TRAIN)
    assert [name for name in old if (out / name).exists()] == []
    assert json.loads((out / "experiment.json").read_text())["written_by"] == f"pokersquares experiment {experiment}"
    assert (out / "runs").is_dir() or experiment == "potential-shaping"


def test_reward_shaping_refuses_a_finished_run_it_did_not_write(tiny, tmp_path, monkeypatch):
    """Before, only the folders to train were checked: a finished run without the experiment's mark (trained there
    by hand with the same config) was silently reused."""
    import shutil

    from agents.experiments.marks import RUN_MARK

    out = tmp_path / "rs"
    shutil.copytree(tiny[0], out)
    folder = out / "runs" / "american-line-s0"
    (folder / RUN_MARK).unlink()
    _no_work(monkeypatch)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    with pytest.raises(ValueError, match=re.escape(f"{str(folder)!r} holds a training run the reward-shaping "
                                                   "experiment did not write")):
        run_experiment(out=str(out), timesteps=416, seeds=[0, 1, 2], games=6, progress=False, train_options=TINY_TRAIN)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("options,needle", [
    (dict(train_options={"seed": 5}), "train_options={'seed': 5}: may not set"),
    (dict(train_options={"shaping": "none"}), "train_options={'shaping': 'none'}: may not set"),
    (dict(train_options={"scoring": "english"}), "train_options={'scoring': 'english'}: may not set"),
    (dict(train_options={"out": "x"}), "train_options={'out': 'x'}: may not set"),
    (dict(train_options={"algo": "ppo"}), "train_options={'algo': 'ppo'}: may not set"),
    (dict(train_options={"jokers": 1}), "train_options={'jokers': 1}: may not set"),
    (dict(train_options=["hidden"]), "train_options=['hidden']: expected a dict"),
    (dict(eval_points=0), "eval_points=0: expected a positive integer"),
    (dict(eval_points=-3), "eval_points=-3: expected a positive integer"),
    (dict(eval_points=2.5), "eval_points=2.5: expected a positive integer"),
])
def test_potential_shaping_names_bad_options_before_anything_runs(tmp_path, monkeypatch, options, needle):
    """Before, these raised a raw TypeError or ZeroDivisionError, or (negative eval_points) evaluated every update."""
    from agents.experiments.potential_shaping import potential_shaping

    _no_work(monkeypatch)
    out = tmp_path / "ps"
    with pytest.raises(ValueError) as err:
        potential_shaping(str(out), shapings=("none",), seeds=(0,), timesteps=416, games=2, progress=False,
                          **options)
    assert needle in str(err.value)
    assert not out.exists()


def test_potential_shaping_train_options_may_set_the_evaluation_options(tmp_path, monkeypatch):
    """train_options override the options the experiment only defaults (before: a TypeError, given twice)."""
    import agents.train
    from agents.experiments.potential_shaping import potential_shaping

    seen = []

    def stop(cfg, **kwargs):
        seen.append(cfg)
        raise KeyboardInterrupt

    monkeypatch.setattr(agents.train, "train", stop)
    with pytest.raises(KeyboardInterrupt):
        potential_shaping(str(tmp_path / "ps"), shapings=("none",), seeds=(0,), timesteps=416, games=2,
                          progress=False, train_options={**TINY_TRAIN, "eval_games": 7})
    assert seen[0].eval_games == 7 and seen[0].hidden == [8, 8]


# --------------------------------------------------------------------------- audit b2: --out '', point files, bounds


@pytest.mark.parametrize("experiment", ["compare-trainers", "potential-shaping", "reward-shaping", "tune-tables"])
def test_an_empty_out_is_refused_and_nothing_is_written(tmp_path, monkeypatch, capsys, experiment):
    """Before, ``--out ''`` (and ``out=''`` from Python) wrote the experiment's files into the current folder:
    Path('') is '.'."""
    from agents.experiments.compare_trainers import compare_trainers
    from agents.experiments.potential_shaping import potential_shaping
    from agents.experiments.tune_tables import tune_tables_experiment
    from pokersquares_env.cli import main

    _no_work(monkeypatch)
    monkeypatch.chdir(tmp_path)
    assert main(_cli(experiment, "")) == 2
    assert capsys.readouterr().err == (f"pokersquares experiment {experiment}: --out '': expected a folder path (an "
                                       f"empty one names no folder; '.' is the current folder)\n")
    call = {"compare-trainers": lambda: compare_trainers("", algos=("fast-ppo",), timesteps=100, games=2),
            "potential-shaping": lambda: potential_shaping("", shapings=("none",), seeds=(0,), timesteps=100,
                                                           games=2, progress=False),
            "reward-shaping": lambda: run_experiment(out="", systems=["american"], reward_modes=["line"], seeds=[0],
                                                     timesteps=100, games=2, progress=False),
            "tune-tables": lambda: tune_tables_experiment("", generations=1, refine=0, population=4, elite=2,
                                                          games=2, eval_games=2, progress=False)}[experiment]
    with pytest.raises(ValueError, match=re.escape("out='': expected a folder path")):  # Python: the parameter
        call()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("experiment", ["compare-trainers", "potential-shaping", "reward-shaping", "tune-tables"])
def test_a_point_file_with_a_non_number_is_a_usage_error(tmp_path, monkeypatch, capsys, experiment):
    """Before, tune-tables exited 1 with a TypeError traceback (it caught ValueError only); the others said it."""
    from pokersquares_env.cli import main

    _no_work(monkeypatch)
    bad = tmp_path / "badval.json"
    bad.write_text(json.dumps({"points": {"flush": "x"}}))
    out = tmp_path / "out"
    args = _cli(experiment, out)
    if experiment == "reward-shaping":
        args[args.index("--systems") + 1] = str(bad)
    else:
        args += ["--scoring", str(bad)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"pokersquares experiment {experiment}: ") and err.count("\n") == 1, err
    assert f"{str(bad)!r}" in err and "'x' is not a number" in err and "Traceback" not in err
    assert not out.exists()


TUNE_ARGS = {"--generations": "1", "--refine": "0", "--population": "4", "--elite": "2", "--games": "2",
             "--eval-games": "2", "--tables-games": "10"}


@pytest.mark.parametrize(("option", "value", "needle"), [
    ("--games", 10**24, f"games={10**24}: expected an integer from 1 to 10,000,000 (deals per generation"),
    ("--games", 10**13, f"games={10**13}: expected an integer from 1 to 10,000,000"),
    ("--eval-games", 10**24, f"eval_games={10**24}: expected an integer from 2 to 10,000,000 (held-out deals"),
    ("--population", 10**20, f"population={10**20}: expected an integer from 1 to 100,000 (candidates per generation)"),
    ("--tables-games", 10**13, f"tables_games={10**13}: expected an integer from 1 to 1,000,000,000 (self-play games"),
])
def test_tune_tables_refuses_sizes_beyond_its_bounds_before_writing(tmp_path, monkeypatch, capsys, option, value,
                                                                    needle):
    """Before, these gave numpy's "Maximum allowed dimension exceeded" (exit 2) or a MemoryError traceback (exit 1)
    after the tables were trained, leaving experiment.json (and tables.npz) behind."""
    from agents.experiments.tune_tables import tune_tables_experiment
    from pokersquares_env.cli import build_parser, main

    _no_work(monkeypatch)
    out = tmp_path / "tt"
    args = {**TUNE_ARGS, option: str(value)}
    with pytest.raises(SystemExit) as exit_:
        main(["experiment", "tune-tables", "--out", str(out), "--no-progress", *[x for kv in args.items() for x in kv]])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    # the command line refuses it as a usage error naming the option (since 2026-12-03; before, the library's
    # message, naming the keyword); the library keeps its own check, with the reason
    low, high = needle.split("from ")[1].split(" (")[0].replace(",", "").split(" to ")
    assert f"tune-tables: error: argument {option}: {value}: expected an integer from {low} to {high}\n" in err, err
    assert not out.exists()
    keyword = option[2:].replace("-", "_")
    options = {k[2:].replace("-", "_"): int(v) for k, v in TUNE_ARGS.items()}
    with pytest.raises(ValueError, match=re.escape(needle)):
        tune_tables_experiment(str(out), **{**options, keyword: value}, progress=False)
    assert not out.exists()
    # the bounds are stated in --help
    parser = build_parser("experiment")
    experiment = next(a for a in parser._actions if a.dest == "command").choices["experiment"]
    tune = next(a for a in experiment._actions if a.dest == "experiment").choices["tune-tables"]
    help_text = next(a.help for a in tune._actions if option in a.option_strings)
    bound = {"--games": "at most 10,000,000", "--eval-games": "2 to 10,000,000", "--population": "at most 100,000",
             "--tables-games": "at most 1,000,000,000"}[option]
    assert bound in help_text, help_text


def test_potential_shaping_refuses_absurd_jobs_before_writing(tmp_path, monkeypatch, capsys):
    """Before, --jobs 10**24 gave an OverflowError traceback from the process pool, after experiment.json and the run
    folders were written."""
    from agents.experiments.potential_shaping import potential_shaping
    from pokersquares_env.cli import main

    _no_work(monkeypatch)
    out = tmp_path / "ps"
    with pytest.raises(SystemExit) as exit_:  # a usage error naming the option, as every bounded count is
        main(["experiment", "potential-shaping", "--out", str(out), "--timesteps", "64", "--seeds", "0",
              "--shapings", "none", "--games", "1", "--no-progress", "--jobs", str(10**24)])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.endswith(
        f"pokersquares experiment potential-shaping: error: argument --jobs: {10**24}: expected an integer from 1 to "
        f"4096\n")
    assert not out.exists()
    with pytest.raises(ValueError, match=re.escape("jobs=4097: expected an integer from 1 to 4,096")):
        potential_shaping(str(out), shapings=("none",), seeds=(0,), timesteps=64, games=1, jobs=4097, progress=False)
    assert not out.exists()


class _PoolStarted(Exception):
    pass


@pytest.mark.parametrize(("jobs", "seeds", "cpus", "workers", "warned"), [
    (5, (0, 1, 2), 2, 2, True),  # capped at the CPUs: said on stderr
    (6, (0,), 2, None, False),  # one run: trained in this process, no pool (before: 6 processes for one run)
    (2, (0, 1, 2), 4, 2, False),  # as asked
    (8, (0, 1), 4, 4, False),  # capped at the runs (2 shapings x 2 seeds): nothing to say
])
def test_potential_shaping_caps_its_processes_at_the_runs_and_the_cpus(tmp_path, monkeypatch, capsys, jobs, seeds,
                                                                       cpus, workers, warned):
    """Before, --jobs N started N worker processes whatever the runs and the CPUs (--jobs 6 with one run forked 6 on
    a 2-CPU machine); evaluate caps its --jobs at the usable CPUs and says so."""
    import agents.evaluation
    import agents.experiments.potential_shaping as ps
    import agents.train

    pools = []

    class Pool:
        def __init__(self, max_workers=None, **kwargs):
            pools.append(max_workers)
            raise _PoolStarted

    def in_process(cfg, **kwargs):
        raise _PoolStarted

    monkeypatch.setattr(ps, "ProcessPoolExecutor", Pool)
    monkeypatch.setattr(agents.train, "train", in_process)
    monkeypatch.setattr(agents.evaluation, "usable_cpus", lambda: cpus)
    with pytest.raises(_PoolStarted):
        ps.potential_shaping(str(tmp_path / "ps"), shapings=("none", "heuristic") if len(seeds) != 1 else ("none",),
                             seeds=seeds, timesteps=64, games=1, jobs=jobs, progress=False)
    assert pools == ([] if workers is None else [workers])
    err = capsys.readouterr().err
    if warned:
        assert err == (f"potential-shaping: warning: jobs={jobs} is more than the {cpus} CPUs this process may use: "
                       f"training {workers} runs at once (the results are the same)\n")
    else:
        assert "warning" not in err


def test_potential_shaping_refuses_a_repeated_shaping(tmp_path, monkeypatch, capsys):
    """Before, ``--shapings none none`` trained one run and said nothing; a repeated --seeds value was refused."""
    from agents.experiments.potential_shaping import potential_shaping
    from pokersquares_env.cli import main

    _no_work(monkeypatch)
    out = tmp_path / "ps"
    assert main(["experiment", "potential-shaping", "--out", str(out), "--timesteps", "64", "--seeds", "0",
                 "--shapings", "none", "heuristic", "none", "--games", "1", "--no-progress"]) == 2
    assert capsys.readouterr().err == (
        "pokersquares experiment potential-shaping: shapings=['none', 'heuristic', 'none']: 'none' given more than "
        "once: expected distinct shapings, some of ['none', 'heuristic', 'tables']\n")
    assert not out.exists()
    with pytest.raises(ValueError, match=re.escape("'none' given more than once")):
        potential_shaping(str(out), shapings=("none", "none"), seeds=(0,), timesteps=64, games=1, progress=False)
    assert not out.exists()


@pytest.mark.parametrize(("option", "needle"), [
    (["--num-envs", str(10**7)], f"error: argument --num-envs: {10**7}: expected an integer from 1 to 1048576"),
    (["--num-envs", str(10**20)], f"error: argument --num-envs: {10**20}: expected an integer from 1 to 1048576"),
    (["--hidden", "64", str(10**20)], f"{10**20}"),
])
def test_reward_shaping_refuses_training_sizes_beyond_train_configs_bounds_before_writing(tmp_path, monkeypatch,
                                                                                          capsys, option, needle):
    """Before, --num-envs 10**20 gave numpy's "Maximum allowed dimension exceeded" and --hidden 10**20 a torch
    traceback, after experiment.json and runs/ were written.  (Relies on TrainConfig's upper bounds of
    agents/config.py: num_envs at most 2**20.)"""
    from helpers import cli_status

    _no_work(monkeypatch)
    out = tmp_path / "rs"
    # --num-envs is bounded by argparse (a usage error, SystemExit), --hidden by TrainConfig (exit status 2)
    assert cli_status(["experiment", "reward-shaping", "--out", str(out), "--timesteps", "64", "--games", "1",
                       "--systems", "american", "--reward-modes", "line", "terminal", "--seeds", "0", "--no-progress",
                       *option]) == 2
    err = capsys.readouterr().err
    last = err.splitlines()[-1]
    assert last.startswith("pokersquares experiment reward-shaping: ") and needle in last and "Traceback" not in err
    assert not out.exists()
    with pytest.raises(ValueError, match=re.escape(f"num_envs={10**7}")):
        run_experiment(out=str(out), systems=["american"], reward_modes=["line"], seeds=[0], timesteps=64, games=1,
                       progress=False, train_options={"num_envs": 10**7})
    assert not out.exists()


def test_potential_shaping_takes_a_minibatch_size(tmp_path, capsys):
    """potential-shaping took training options only from Python: --minibatch-size sets every run's, results.md says
    so, and one above the rollout is refused before any run, naming both."""
    from pokersquares_env.cli import main

    out = tmp_path / "ps"
    base = ["experiment", "potential-shaping", "--timesteps", "416", "--seeds", "0", "--shapings", "none",
            "--games", "2", "--no-progress"]
    assert main([*base, "--out", str(out), "--minibatch-size", "104"]) == 0, capsys.readouterr().err
    config = json.loads((out / "runs" / "none_s0" / "config.json").read_text())
    assert config["minibatch_size"] == 104
    assert "minibatch_size 104" in (out / "results.md").read_text()
    assert json.loads((out / "results.json").read_text())["train_options"] == {"minibatch_size": 104}
    capsys.readouterr()
    assert main([*base, "--out", str(tmp_path / "big"), "--minibatch-size", "20000"]) == 2
    err = capsys.readouterr().err
    assert "minibatch_size=20000: expected at most num_envs * num_steps = 12800" in err, err
    assert not (tmp_path / "big" / "runs").exists()


def test_reward_shaping_analysis_spreads_over_seeds_by_n_minus_1_and_counts_ties_apart(tmp_path):
    """The seed spread is the sample standard deviation over the seeds' means, and deals where both conditions score
    the same count for neither (an audit changed each unseen)."""
    from agents.experiments.reward_shaping import ExperimentConfig, analyse

    cfg = ExperimentConfig(systems=["american", "english"], reward_modes=["line"], seeds=[0, 1])
    from collections import defaultdict

    (tmp_path / "curve.csv").write_text("step,eval_score,seconds\n100,1.0,1.0\n")
    runs = [{"spec": f"{s}-{seed}", "system": s, "mode": "line", "dir": str(tmp_path)}
            for s in ("american", "english") for seed in (0, 1)]
    table = {"american-0": [10, 20, 30], "american-1": [14, 20, 30],  # seed means 20 and 21.33
             "english-0": [10, 20, 31], "english-1": [14, 20, 29]}  # per deal, seeds averaged: 12 20 30 both

    class Scores:
        def scores(self, spec, system=None):
            return dict(enumerate(table[spec]))

        def hand_frequencies(self):
            return {spec: {kind: defaultdict(float) for kind in ("all", "rows", "columns")} for spec in table}

    result = analyse(cfg, runs, Scores())
    american = next(r for r in result["table"] if r["train_system"] == "american")
    assert american["american_seed_sd"] == pytest.approx(np.std([20.0, 64 / 3], ddof=1))
    pair = next(p for p in result["paired"] if p["eval_system"] == "american")
    assert pair["mean_diff"] == 0 and pair["a_better"] == pair["b_better"] == 0 and pair["deals"] == 3


def test_a_reward_shaping_run_short_of_its_last_update_is_unfinished(tmp_path):
    """A run counts as finished only with every update of its budget taken (its steps rounded up to whole
    rollouts); one update short, it is trained again (an audit let it count as finished, unseen)."""
    from agents.config import point_table
    from agents.experiments.reward_shaping import _finished

    cfg = ExperimentConfig(out=str(tmp_path), train_options=TINY_TRAIN)
    tc = cfg.train_config("american", "line", 0)
    resolved = tc.resolved()
    batch = resolved.num_envs * resolved.num_steps
    needed = -(-resolved.timesteps // batch) * batch
    folder = tmp_path / "run"
    folder.mkdir()
    resolved.save(folder / "config.json")
    (folder / "model.pt").write_bytes(b"x")
    (folder / "point_system.json").write_text(json.dumps(point_table("american")))
    for steps, finished in ((needed, True), (needed - batch, False)):
        (folder / "progress.json").write_text(json.dumps({"steps": steps, "seconds": 1, "episodes": 1}))
        assert _finished(folder, tc) == finished, steps


def test_reward_shaping_cli_full_budget_and_options_given_as_zero_reach_the_experiment(tmp_path, monkeypatch,
                                                                                       capsys):
    """--full is the documented full budget (3M steps, 2,000 deals, its own folder); an option given as 0
    (--eval-seed 0) is kept, not read as absent; --retrain reaches the experiment."""
    from agents.experiments import reward_shaping
    from pokersquares_env.cli import main

    seen = []
    monkeypatch.setattr(reward_shaping, "run_experiment", lambda cfg: seen.append(cfg) or {})
    monkeypatch.setattr(reward_shaping, "markdown", lambda results: "| results |")
    monkeypatch.chdir(tmp_path)
    assert main(["experiment", "reward-shaping", "--full", "--eval-seed", "0", "--retrain", "--no-progress"]) == 0
    assert main(["experiment", "reward-shaping", "--out", "small", "--no-progress"]) == 0
    full, small = seen
    assert (full.timesteps, full.games, full.out, full.eval_seed, full.retrain) == (
        3_000_000, 2_000, "runs/reward_shaping_full", 0, True)
    assert (small.timesteps, small.games, small.out, small.eval_seed, small.retrain) == (
        150_000, 500, "small", 20_260, False)
    assert "outputs in runs/reward_shaping_full:" in capsys.readouterr().out


def test_clearing_an_experiments_outputs_removes_links_not_what_they_point_to(tmp_path):
    """A results file or evaluation/ that is a symbolic link (even a dangling one) is removed as a link; the folder
    it points to is left as it is."""
    from agents.experiments.marks import clear_outputs

    root, elsewhere = tmp_path / "exp", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    (elsewhere / "games.jsonl").write_text("mine\n")
    (root / "results.md").symlink_to(tmp_path / "gone.md")  # dangling
    (root / "evaluation").symlink_to(elsewhere)
    (root / "notes.txt").write_text("kept\n")
    clear_outputs(root, ("results.md", "results.json"))
    assert sorted(p.name for p in root.iterdir()) == ["notes.txt"]
    assert (elsewhere / "games.jsonl").read_text() == "mine\n"


def test_experiments_evaluate_each_run_eval_points_times(tmp_path, monkeypatch, capsys):
    """Every run evaluates every ``timesteps // eval_points`` steps (compare-trainers and potential-shaping alike)."""
    import agents.train
    from agents.experiments.compare_trainers import compare_trainers
    from agents.experiments.potential_shaping import potential_shaping
    from agents.train import TrainResult

    seen = []

    def interrupted(cfg, **kwargs):  # stop after the first run: its config is the point
        seen.append(cfg)
        return TrainResult(out=cfg.out, model_path=cfg.out + "/model.pt", steps=1, seconds=1.0, interrupted=True,
                           evaluation=None)

    monkeypatch.setattr(agents.train, "train", interrupted)
    with pytest.raises(KeyboardInterrupt):
        compare_trainers(str(tmp_path / "ct"), timesteps=1000, eval_points=4, algos=("fast-ppo",), progress=False)
    with pytest.raises(KeyboardInterrupt):
        potential_shaping(str(tmp_path / "ps"), shapings=("none",), seeds=(0,), timesteps=1000, eval_points=4,
                          progress=False)
    assert [cfg.eval_every for cfg in seen] == [250, 250]


def test_compare_trainers_names_algos_given_as_one_string(tmp_path, monkeypatch):
    """``algos="fast-ppo"`` is named whole as the list it should be, not refused letter by letter ('f')."""
    from agents.experiments.compare_trainers import compare_trainers

    _no_work(monkeypatch)
    with pytest.raises(ValueError, match=re.escape("algos='fast-ppo': expected a non-empty list of algorithms")):
        compare_trainers(str(tmp_path / "ct"), algos="fast-ppo", timesteps=100)
    assert not (tmp_path / "ct").exists()


def test_compare_trainers_refuses_rule_options_in_train_options(tmp_path, monkeypatch):
    """One run's train_options may not set a rule option (its deals would differ from the common deals): ``rules``."""
    from agents.experiments.compare_trainers import compare_trainers

    _no_work(monkeypatch)
    with pytest.raises(ValueError, match=re.escape("options of the fast-ppo run (train_options, --set): may not set "
                                                   "jokers: the comparison sets it for every run alike (give "
                                                   "--rules)")):
        compare_trainers(str(tmp_path / "ct"), algos=("fast-ppo",), timesteps=100,
                         train_options={"fast-ppo": {"jokers": 1}})
    assert not (tmp_path / "ct").exists()


@pytest.mark.parametrize("options, message", [
    ({"fast-ppo": {"timesteps": 5}}, "may not set timesteps: the comparison sets it for every run alike (give "
                                     "--timesteps)"),
    ({"fast-ppo": {"seed": 3, "eval_games": 9}}, "may not set eval_games, seed: the comparison sets them for every "
                                                 "run alike (give --seed)"),
    # a time limit would stop one run short of the budget, and another reward mode or scale change its reward
    ({"fast-ppo": {"time_limit": 0.5}}, "may not set time_limit: the comparison sets it for every run alike"),
    ({"fast-ppo": {"reward_mode": "terminal", "reward_scale": 2.5}}, "may not set reward_mode, reward_scale:"),
    # an option of another algorithm only: the run would ignore it (and a changed value retrain it for nothing)
    ({"fast-ppo": {"buffer_size": 100, "epsilon_end": 0.5}}, "options of the fast-ppo run (train_options, --set): "
     "buffer_size is an option of dqn only; epsilon_end is an option of dqn only: fast-ppo does not use them"),
    ({"fast-ppo": {1: 2, "bogus": 3}}, "unknown option(s) [1, 'bogus']"),
    ({"dqn": {"learning_rate": 1e-3}}, "options of a 'dqn' run (train_options, --set): not an algorithm of this "
                                       "comparison; expected some of ['fast-ppo']"),
    ({"fast-ppo": {"minibatchsize": 400}}, "unknown option(s) ['minibatchsize']; expected some of ['anneal_by'"),
    ({"fast-ppo": 400}, "options of the fast-ppo run (train_options['fast-ppo']=400): expected a dict"),
    ({"fast-ppo": {"learning_rate": -1.0}}, "the fast-ppo run (its options: train_options, --set): "
                                            "learning_rate=-1.0: expected a positive number"),
    ({"fast-ppo": {"net": "cnn"}}, "the fast-ppo run (its options: train_options, --set): net='cnn'"),
    # each shared option names the flag that sets it for every run; the others are refused all the same
    ({"fast-ppo": {"scoring": "english"}}, "may not set scoring: the comparison sets it for every run alike (give "
                                           "--scoring)"),
    ({"fast-ppo": {"shaping": "heuristic", "placement": "adjacent"}}, "may not set placement, shaping: the comparison "
                                                                     "sets them for every run alike (give --rules and "
                                                                     "--shaping)"),
    ({"fast-ppo": {"eval_seed": 5}}, "may not set eval_seed: the comparison sets it for every run alike"),
    ({"fast-ppo": {"progress": False}}, "may not set progress: the comparison sets it for every run alike"),
    ({"fast-ppo": {"out": "elsewhere"}}, "may not set out: the comparison sets it for every run alike"),
    ({"fast-ppo": {"buffer_size": 100}}, "buffer_size is an option of dqn only: fast-ppo does not use it"),
    ({"fast-ppo": {"": 1}}, "unknown option(s) ['']"),
    (["fast-ppo"], "train_options=['fast-ppo']: expected a dict of algorithm -> {option: value}"),
])
def test_compare_trainers_refuses_train_options_that_would_break_the_comparison(tmp_path, monkeypatch, options,
                                                                                message):
    """A single run's options may not change what every run shares (budget, seed, evaluations) -- before, a
    ``timesteps`` there trained that run on another budget under the heading's -- nor name an algorithm not compared
    (it was ignored) or an option TrainConfig lacks; all before anything is written."""
    from agents.experiments.compare_trainers import compare_trainers

    _no_work(monkeypatch)
    with pytest.raises(ValueError, match=re.escape(message)):
        compare_trainers(str(tmp_path / "ct"), algos=("fast-ppo",), timesteps=100, train_options=options)
    assert not (tmp_path / "ct").exists()


def _stop_at_the_first_run(monkeypatch):
    """Stub training: keep the config of the first run trained and stop there, as Ctrl-C does (the configs seen)."""
    import agents.train
    from agents.train import TrainResult

    seen = []

    def interrupted(cfg, **kwargs):
        seen.append(cfg)
        return TrainResult(out=cfg.out, model_path=cfg.out + "/model.pt", steps=1, seconds=1.0, interrupted=True,
                           evaluation=None)

    monkeypatch.setattr(agents.train, "train", interrupted)
    return seen


def test_compare_trainers_records_every_option_in_experiment_json_and_a_runs_own_net_is_over_net(tmp_path,
                                                                                                monkeypatch):
    """experiment.json names every option of the comparison (--net and --shaping too), written before the first
    run; a run's own ``net`` (train_options, --set ALGO.net=...) is over --net, as the docstring says."""
    from agents.experiments.compare_trainers import compare_trainers

    seen = _stop_at_the_first_run(monkeypatch)
    out = tmp_path / "ct"
    with pytest.raises(KeyboardInterrupt):
        compare_trainers(str(out), timesteps=1000, seed=4, algos=("fast-ppo",), games=3, scoring="english",
                         shaping="heuristic", net="lines", progress=False,
                         train_options={"fast-ppo": {"net": "mlp", "gamma": 0.9}})
    assert [(cfg.net, cfg.gamma, cfg.shaping, cfg.scoring) for cfg in seen] == [("mlp", 0.9, "heuristic", "english")]
    recorded = json.loads((out / "experiment.json").read_text())
    assert {k: v for k, v in recorded.items() if k != "written_by"} == {
        "timesteps": 1000, "seed": 4, "algos": ["fast-ppo"], "games": 3, "scoring": "english",
        "shaping": "heuristic", "rules": {"jokers": 0, "placement": "free", "first_cell": None}, "net": "lines",
        "train_options": {"fast-ppo": {"net": "mlp", "gamma": 0.9}}}


def test_compare_trainers_names_a_run_only_for_a_bad_value_of_its_own_options(tmp_path, monkeypatch, capsys):
    """A bad value of a run's own option is a ConfigError naming that run; a bad shared value (a --scoring file)
    given beside --set options is said as it is, not blamed on the first run given options (as it was before)."""
    from agents.config import ConfigError
    from agents.experiments.compare_trainers import compare_trainers
    from pokersquares_env.cli import main

    _no_work(monkeypatch)
    out = tmp_path / "ct"
    with pytest.raises(ConfigError, match=re.escape("the fast-ppo run (its options: train_options, --set): "
                                                    "gamma=2.0")):
        compare_trainers(str(out), algos=("fast-ppo",), timesteps=100, train_options={"fast-ppo": {"gamma": 2.0}})
    missing = str(tmp_path / "nope.json")
    with pytest.raises(ConfigError, match="^" + re.escape(f"scoring={missing!r}: point system file")):
        compare_trainers(str(out), algos=("fast-ppo",), timesteps=100, scoring=missing,
                         train_options={"fast-ppo": {"gamma": 0.9}})
    assert main(["experiment", "compare-trainers", "--out", str(out), "--algos", "fast-ppo", "--scoring", missing,
                 "--set", "fast-ppo.gamma=0.9", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"pokersquares experiment compare-trainers: scoring={missing!r}: point system file"), err
    assert "fast-ppo" not in err, err
    assert not out.exists()


def test_compare_trainers_names_the_run_whose_own_option_another_value_must_fit(tmp_path, monkeypatch):
    """An error about a value that must fit a run's own option (fast-ppo's default minibatch_size against the num_envs
    given to it) names that run, among several, though the value named first is not one the run set."""
    from agents.config import ConfigError
    from agents.experiments.compare_trainers import compare_trainers

    _no_work(monkeypatch)
    with pytest.raises(ConfigError, match="^" + re.escape("the fast-ppo run (its options: train_options, --set): "
                                                          "minibatch_size=")):
        compare_trainers(str(tmp_path / "ct"), algos=("dqn", "fast-ppo"), timesteps=10_000,
                         train_options={"dqn": {"num_envs": 2, "learning_starts": 100}, "fast-ppo": {"num_envs": 2}})
    assert not (tmp_path / "ct").exists()


def test_compare_trainers_refuses_a_trainer_that_is_not_installed_before_anything_is_written(tmp_path, monkeypatch,
                                                                                               capsys):
    """A trainer whose packages are missing is refused, naming the pip install, before the first run trains."""
    import sys

    from agents.config import MissingExtraError
    from agents.experiments.compare_trainers import compare_trainers
    from pokersquares_env.cli import main

    _no_work(monkeypatch)
    monkeypatch.setitem(sys.modules, "sb3_contrib", None)  # what an install without the train extra finds
    out = tmp_path / "ct"
    message = 'maskable-ppo needs sb3-contrib: pip install "pokersquares_env[train]"'
    with pytest.raises(MissingExtraError, match=re.escape(message)):
        compare_trainers(str(out), algos=("fast-ppo", "maskable-ppo"), timesteps=128, progress=False)
    assert main(["experiment", "compare-trainers", "--out", str(out), "--algos", "fast-ppo", "maskable-ppo",
                 "--timesteps", "128", "--no-progress"]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_compare_trainers_names_single_runs_options_in_the_order_of_algos_as_json():
    """comparison.md's line of single runs' options: the runs in the order compared, '; ' between them, each value
    as --set reads it (JSON: a text quoted, false), a run without options left out."""
    from agents.experiments.compare_trainers import _options_lines

    options = {"dqn": {"net": "mlp", "anneal_lr": False}, "maskable-ppo": {}, "fast-ppo": {"hidden": [64, 64]}}
    assert _options_lines(options, ("fast-ppo", "maskable-ppo", "dqn")) == [
        'Options of single runs (over their defaults): fast-ppo hidden=[64, 64]; dqn net="mlp", anneal_lr=false.', ""]
    assert _options_lines({"maskable-ppo": {}}, ("maskable-ppo",)) == _options_lines({}, ("dqn",)) == []


def test_compare_trainers_builds_no_shaping_tables_when_every_run_is_reused(tmp_path, monkeypatch):
    """The tables of --shaping tables are built before the first run trains, not when every run is reused."""
    import agents.expectimax
    import agents.shaping
    from agents.experiments.compare_trainers import compare_trainers

    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(agents.expectimax, "DEFAULT_GAMES", 2000)  # the tables potential's training, shrunk
    options = dict(timesteps=416, algos=("fast-ppo",), games=2, eval_points=1, shaping="tables", progress=False,
                   train_options={"fast-ppo": TINY_TRAIN})
    first = compare_trainers(str(tmp_path / "ct"), **options)
    built = []
    monkeypatch.setattr(agents.shaping.LinePotential, "make", lambda *a, **k: built.append(a))
    again = compare_trainers(str(tmp_path / "ct"), **options)
    assert built == [] and [r["reused"] for r in again["rows"]] == [True]
    assert again["rows"][0]["mean"] == first["rows"][0]["mean"]


def test_compare_trainers_set_gives_one_run_its_options_and_the_outputs_name_them(tmp_path, monkeypatch, capsys):
    """``--set ALGO.OPTION=VALUE`` reaches that algorithm's run only (values read as JSON, else as text);
    comparison.md, comparison.json and experiment.json name the options; a bad --set is a usage error."""
    from agents.experiments import compare_trainers as module
    from pokersquares_env.cli import main

    seen, real = {}, module.compare_trainers
    monkeypatch.setattr(module, "compare_trainers", lambda out, **kw: seen.update(kw) or {"table": ""})
    assert main(["experiment", "compare-trainers", "--out", str(tmp_path / "cli"), "--set",
                 "fast-ppo.minibatch_size=400", "--set", "dqn.learning-rate=3e-4", "--set", "fast-ppo.net=lines",
                 "--set", "fast-ppo.hidden=[64, 64]"]) == 0
    assert seen["train_options"] == {"fast-ppo": {"minibatch_size": 400, "net": "lines", "hidden": [64, 64]},
                                     "dqn": {"learning_rate": 3e-4}}
    # numbers JSON does not write are still numbers (before, '.2' was text and refused as not a number)
    assert main(["experiment", "compare-trainers", "--out", str(tmp_path / "cli"), "--set", "fast-ppo.clip_coef=.2",
                 "--set", "fast-ppo.learning_rate=5."]) == 0
    assert seen["train_options"] == {"fast-ppo": {"clip_coef": 0.2, "learning_rate": 5.0}}
    assert main(["experiment", "compare-trainers", "--out", str(tmp_path / "cli")]) == 0
    assert seen["train_options"] is None
    for bad in ("fast-ppo=400", "minibatch_size=400", "fast-ppo.minibatch_size=", ".x=1", "fast-ppo.=400"):
        with pytest.raises(SystemExit):
            main(["experiment", "compare-trainers", "--out", str(tmp_path / "bad"), "--set", bad])
        assert "expected ALGO.OPTION=VALUE" in capsys.readouterr().err
    monkeypatch.setattr(module, "compare_trainers", real)
    assert main(["experiment", "compare-trainers", "--out", str(tmp_path / "bad"), "--set", "fast-ppo.gamma=1",
                 "--set", "fast-ppo.gamma=0.9", "--no-progress"]) == 2
    assert "--set fast-ppo.gamma given more than once" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()

    tiny = {**TINY_TRAIN, "learning_rate": 0.01}
    result = real(str(tmp_path / "ct"), timesteps=416, algos=("fast-ppo",), games=3, eval_points=1, progress=False,
                  train_options={"fast-ppo": tiny})
    stored = json.loads((tmp_path / "ct" / "fast-ppo" / "config.json").read_text())
    assert stored["learning_rate"] == 0.01 and stored["minibatch_size"] == 208
    assert result["rows"][0]["options"] == tiny
    assert json.loads((tmp_path / "ct" / "comparison.json").read_text())[0]["options"] == tiny
    assert json.loads((tmp_path / "ct" / "experiment.json").read_text())["train_options"] == {"fast-ppo": tiny}
    assert ("Options of single runs (over their defaults): fast-ppo hidden=[8, 8], num_envs=16, num_steps=26, "
            "minibatch_size=208, update_epochs=1, learning_rate=0.01.") in (tmp_path / "ct" / "comparison.md").read_text()


def test_a_run_mark_that_is_not_an_object_marks_no_run(tmp_path):
    """A run mark holding the bare ``written_by`` string (not the object ``mark_run`` writes) is no mark: the run there
    is refused like any other run the experiment did not write."""
    from agents.experiments.marks import RUN_MARK, check_own_runs, written_by

    run = tmp_path / "run"
    run.mkdir()
    (run / "model.pt").write_text("x")
    (run / RUN_MARK).write_text(json.dumps(written_by("potential-shaping")))
    with pytest.raises(ValueError, match="the potential-shaping experiment did not write"):
        check_own_runs([run], "potential-shaping")


@pytest.mark.parametrize("count, shown", [
    (5, "a.txt, b.txt, c.txt, d.txt, e.txt)"),
    (6, "a.txt, b.txt, c.txt, d.txt, e.txt and 1 more)"),
    (8, "a.txt, b.txt, c.txt, d.txt, e.txt and 3 more)"),
])
def test_a_refused_experiment_folder_names_its_first_five_entries_and_counts_the_rest(tmp_path, count, shown):
    from agents.experiments.marks import check_own_root

    root = tmp_path / "other"
    root.mkdir()
    for name in "abcdefgh"[:count]:
        (root / f"{name}.txt").write_text("mine\n")
    with pytest.raises(ValueError, match=re.escape(f"(no experiment.json of it; it holds {shown}")):
        check_own_root(root, "reward-shaping")


def test_an_experiment_folder_that_cannot_be_listed_is_named(tmp_path, monkeypatch):
    """An unreadable --out is refused with a ValueError naming it (what the CLI prints as a usage error), not an
    OSError traceback."""
    from agents.experiments import marks

    root = tmp_path / "locked"
    root.mkdir()

    def denied(path):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(marks.os, "listdir", denied)
    with pytest.raises(ValueError, match=re.escape(f"{str(root)!r}: cannot list it (Permission denied)")):
        marks.check_own_root(root, "reward-shaping")


def test_an_older_tune_tables_folder_needs_its_summary_beside_its_tables(tmp_path):
    """An older tune-tables folder (no experiment.json) is recognised by a results.json of the experiment's summary
    *and* a tables.npz beside it: either alone is someone else's folder."""
    from agents.experiments import tune_tables
    from agents.experiments.marks import check_own_root

    summary = {"ply": 1, "generations": 1, "refine": 0, "population": 4, "evaluation": {}}
    for name, results, tables in (("no_tables", summary, False),
                                  ("other_results", {k: v for k, v in summary.items() if k != "evaluation"}, True),
                                  ("a_list", [summary], True)):
        root = tmp_path / name
        root.mkdir()
        (root / "results.json").write_text(json.dumps(results))
        if tables:
            (root / "tables.npz").write_bytes(b"x")
        with pytest.raises(ValueError, match="is not a folder of the tune-tables experiment"):
            check_own_root(root, "tune-tables", tune_tables._older_root)


@pytest.mark.parametrize("options, needle", [
    (dict(shapings=()), "shapings=[]: expected some of ['none', 'heuristic', 'tables']"),
    (dict(seeds=()), "seeds=[]: expected distinct seeds"),
    (dict(jobs=True), "jobs=True: expected an integer from 1 to 4,096"),
    (dict(jobs=0), "jobs=0: expected an integer from 1 to 4,096"),
])
def test_potential_shaping_names_an_empty_or_bad_choice_before_anything_runs(tmp_path, monkeypatch, options, needle):
    from agents.experiments.potential_shaping import potential_shaping

    _no_work(monkeypatch)
    out = tmp_path / "ps"
    with pytest.raises(ValueError, match=re.escape(needle)):
        potential_shaping(str(out), **{"shapings": ("none",), "seeds": (0,), "timesteps": 64, "games": 1, **options},
                          progress=False)
    assert not out.exists()


def test_potential_shaping_takes_jobs_up_to_its_bound_and_says_one_run_at_once(tmp_path, monkeypatch, capsys):
    import agents.evaluation
    import agents.experiments.potential_shaping as ps
    import agents.train

    def in_process(cfg, **kwargs):
        raise _PoolStarted

    monkeypatch.setattr(agents.train, "train", in_process)
    monkeypatch.setattr(agents.evaluation, "usable_cpus", lambda: 1)
    with pytest.raises(_PoolStarted):  # one CPU: the runs are trained one by one, in this process
        ps.potential_shaping(str(tmp_path / "ps"), shapings=("none", "heuristic"), seeds=(0,), timesteps=64, games=1,
                             jobs=ps.MAX_JOBS, progress=False)
    assert capsys.readouterr().err == ("potential-shaping: warning: jobs=4096 is more than the 1 CPUs this process may "
                                       "use: training 1 run at once (the results are the same)\n")


@pytest.mark.parametrize("options, needle", [
    (dict(games=True), "games=True: expected a positive integer"),
    (dict(jobs=True), "jobs=True: expected a positive integer"),
    (dict(games=0), "games=0: expected a positive integer"),
    (dict(jobs=0), "jobs=0: expected a positive integer"),
])
def test_reward_shaping_names_a_bad_count_before_anything_runs(tmp_path, monkeypatch, options, needle):
    _no_work(monkeypatch)
    out = tmp_path / "exp"
    with pytest.raises(ValueError, match=re.escape(needle)):
        run_experiment(ExperimentConfig(out=str(out), timesteps=64, seeds=[0], progress=False), **options)
    assert not out.exists()


@pytest.mark.parametrize("experiment, module, function, argv, expected", [
    ("tune-tables", "tune_tables", "tune_tables_experiment",
     ["--scoring", "english", "--rules", "jokers=1", "--ply", "2", "--generations", "3", "--refine", "0",
      "--population", "5", "--elite", "2", "--games", "7", "--sigma", "0.5", "--eval-games", "9", "--eval-seed", "4",
      "--seed", "6", "--tables-games", "11"],
     dict(scoring="english", rules="jokers=1", ply=2, generations=3, refine=0, population=5, elite=2, games=7,
          sigma=0.5, eval_games=9, eval_seed=4, seed=6, tables_games=11, progress=False)),
    ("potential-shaping", "potential_shaping", "potential_shaping",
     ["--shapings", "none", "tables", "--seeds", "3", "4", "--timesteps", "128", "--games", "7", "--eval-seed", "5",
      "--scoring", "english", "--rules", "jokers=1", "--minibatch-size", "64", "--jobs", "2", "--retrain"],
     dict(shapings=("none", "tables"), seeds=(3, 4), timesteps=128, games=7, eval_seed=5, scoring="english",
          rules="jokers=1", jobs=2, train_options={"minibatch_size": 64}, progress=False, retrain=True)),
    ("compare-trainers", "compare_trainers", "compare_trainers",
     ["--timesteps", "128", "--seed", "3", "--algos", "fast-ppo", "dqn", "--games", "7", "--scoring", "english",
      "--shaping", "heuristic", "--rules", "jokers=1", "--net", "mlp", "--retrain", "--set", "dqn.gamma=0.9"],
     dict(timesteps=128, seed=3, algos=("fast-ppo", "dqn"), games=7, scoring="english", shaping="heuristic",
          rules="jokers=1", net="mlp", progress=False, retrain=True, train_options={"dqn": {"gamma": 0.9}})),
])
def test_every_experiment_option_of_the_command_line_reaches_the_experiment(tmp_path, monkeypatch, capsys, experiment,
                                                                             module, function, argv, expected):
    import importlib

    from pokersquares_env.cli import main

    calls = []

    def record(out, **kwargs):
        calls.append((out, kwargs))
        return {"table": "| the table |"}

    monkeypatch.setattr(importlib.import_module(f"agents.experiments.{module}"), function, record)
    out = str(tmp_path / "exp")
    assert main(["experiment", experiment, "--out", out, "--no-progress", *argv]) == 0
    assert calls == [(out, expected)]
    assert capsys.readouterr().out.startswith("| the table |\noutputs in " + out)


def test_every_reward_shaping_option_of_the_command_line_reaches_the_experiment(tmp_path, monkeypatch, capsys):
    """Each option lands in the config (--num-envs without --minibatch-size: a minibatch that fits the rollout)."""
    from agents.config import ALGO_DEFAULTS
    from agents.experiments import reward_shaping
    from pokersquares_env.cli import main

    seen = []
    monkeypatch.setattr(reward_shaping, "run_experiment", lambda cfg: seen.append(cfg) or {})
    monkeypatch.setattr(reward_shaping, "markdown", lambda results: "| results |")
    out = str(tmp_path / "rs")
    common = ["experiment", "reward-shaping", "--out", out, "--no-progress", "--timesteps", "128", "--seeds", "3", "4",
              "--games", "7", "--eval-seed", "5", "--systems", "english", "--reward-modes", "terminal", "--jobs", "2",
              "--rules", "jokers=1", "--hidden", "8", "8", "--learning-rate", "0.01", "--shaping", "heuristic"]
    fast = ALGO_DEFAULTS["fast-ppo"]
    many = fast["minibatch_size"] // fast["num_steps"] + 1  # games whose rollout is more than the default minibatch
    cases = [(2, [], 2 * fast["num_steps"]), (many, [], fast["minibatch_size"]), (2, ["--minibatch-size", "1000"], 1000)]
    for num_envs, option, _minibatch in cases:
        assert main([*common, "--num-envs", str(num_envs), *option]) == 0
    assert len(seen) == len(cases)
    for cfg, (num_envs, _option, minibatch) in zip(seen, cases):
        assert (cfg.out, cfg.timesteps, cfg.seeds, cfg.games, cfg.eval_seed, cfg.systems, cfg.reward_modes, cfg.jobs,
                cfg.rules, cfg.progress) == (out, 128, [3, 4], 7, 5, ["english"], ["terminal"], 2, "jokers=1", False)
        assert cfg.train_options == {"hidden": [8, 8], "num_envs": num_envs, "learning_rate": 0.01,
                                     "shaping": "heuristic", "minibatch_size": minibatch}


def test_every_reward_shaping_run_evaluates_six_times_and_on_normalised_rewards():
    """The learning curves have six points per run (every timesteps // 6 steps, on 200 deals), the rewards are
    normalised as the results heading says, and the run trains no checkpoints and plays no final evaluation (the
    experiment's own common deals are the final evaluation)."""
    cfg = ExperimentConfig(out="exp", timesteps=600).train_config("english", "terminal", 4).resolved()
    assert (cfg.eval_every, cfg.eval_games, cfg.checkpoint_every, cfg.final_eval_games) == (100, 200, 0, 0)
    assert (cfg.algo, cfg.scoring, cfg.reward_mode, cfg.reward_scale, cfg.seed, cfg.timesteps) == (
        "fast-ppo", "english", "terminal", "normalized", 4, 600)
    assert cfg.out.replace("\\", "/") == "exp/runs/english-terminal-s4"


def test_hand_columns_put_five_of_a_kind_right_after_four_of_a_kind_when_jokers_are_in():
    from agents.experiments.reward_shaping import HAND_COLUMNS, hand_columns

    assert hand_columns({"jokers": 0}) == HAND_COLUMNS
    with_jokers = hand_columns({"jokers": 2})
    assert with_jokers[with_jokers.index("four_of_a_kind"):with_jokers.index("four_of_a_kind") + 3] == (
        "four_of_a_kind", "five_of_a_kind", "straight_flush")
    assert [h for h in with_jokers if h != "five_of_a_kind"] == list(HAND_COLUMNS)


@pytest.mark.parametrize("jobs, progress", [(1, True), (2, False)])
def test_potential_shaping_runs_in_worker_processes_show_no_progress_bars(tmp_path, monkeypatch, jobs, progress):
    """Runs trained side by side in worker processes would draw their bars over each other: only a run trained in
    this process shows its progress."""
    import agents.evaluation
    import agents.experiments.potential_shaping as ps
    import agents.train

    seen = []

    class Pool:
        def __init__(self, max_workers=None, **kwargs):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def submit(self, fn, cfg):
            seen.append(cfg.progress)
            raise _PoolStarted

        def shutdown(self, wait=True, cancel_futures=False):
            pass

    def in_process(cfg, **kwargs):
        seen.append(cfg.progress)
        raise _PoolStarted

    monkeypatch.setattr(ps, "ProcessPoolExecutor", Pool)
    monkeypatch.setattr(agents.train, "train", in_process)
    monkeypatch.setattr(agents.evaluation, "usable_cpus", lambda: 4)
    with pytest.raises(_PoolStarted):
        ps.potential_shaping(str(tmp_path / "ps"), shapings=("none", "heuristic"), seeds=(0,), timesteps=64, games=1,
                             jobs=jobs, progress=True)
    assert seen == [progress]


def test_potential_shaping_records_its_options_before_training(tmp_path, monkeypatch):
    import agents.train
    from agents.experiments.potential_shaping import potential_shaping

    def in_process(cfg, **kwargs):
        raise _PoolStarted

    monkeypatch.setattr(agents.train, "train", in_process)
    out = tmp_path / "ps"
    with pytest.raises(_PoolStarted):
        potential_shaping(str(out), shapings=("none",), seeds=(3,), timesteps=64, games=2, eval_seed=5,
                          scoring="english", train_options={"minibatch_size": 32}, progress=False)
    assert json.loads((out / "experiment.json").read_text()) == {
        "written_by": "pokersquares experiment potential-shaping", "shapings": ["none"], "seeds": [3], "timesteps": 64,
        "games": 2, "eval_seed": 5, "scoring": "english", "rules": {"jokers": 0, "placement": "free", "first_cell": None},
        "train_options": {"minibatch_size": 32}}


def test_an_experiment_json_with_options_reward_shaping_never_had_is_not_an_older_reward_shaping_folder(tmp_path):
    from agents.experiments import reward_shaping
    from agents.experiments.marks import check_own_root

    root = tmp_path / "other"
    root.mkdir()
    (root / "experiment.json").write_text(json.dumps({"systems": ["american"], "reward_modes": ["line"], "seeds": [0],
                                                      "timesteps": 1, "games": 1, "algos": ["dqn"]}))
    with pytest.raises(ValueError, match="is not a folder of the reward-shaping experiment"):
        check_own_root(root, "reward-shaping", reward_shaping._older_root)


def test_potential_shaping_command_line_defaults_reach_the_experiment(tmp_path, monkeypatch):
    """The defaults --help states (all shapings, seeds 0 1, 2,000,000 steps, 500 deals of seed 0, one job)."""
    from agents.experiments import potential_shaping
    from pokersquares_env.cli import main

    calls = []
    monkeypatch.setattr(potential_shaping, "potential_shaping", lambda out, **kw: calls.append(kw) or {"table": ""})
    assert main(["experiment", "potential-shaping", "--out", str(tmp_path / "ps")]) == 0
    (kwargs,) = calls
    assert kwargs == dict(shapings=("none", "heuristic", "tables"), seeds=(0, 1), timesteps=2_000_000, games=500,
                          eval_seed=0, scoring="american", rules=None, jobs=1, train_options=None, progress=True,
                          retrain=False)


def test_reward_shaping_stops_at_a_run_ctrl_c_interrupted(tmp_path, monkeypatch, capsys):
    """A run Ctrl-C stopped ends the experiment (KeyboardInterrupt): the next runs are not trained, nothing evaluated;
    what was kept is said, as potential-shaping and compare-trainers say it (it used to stop without a word)."""
    import agents.train
    from agents.train import TrainResult

    seen = []

    def interrupted(cfg, **kwargs):
        seen.append(cfg.seed)
        return TrainResult(out=cfg.out, model_path=cfg.out + "/model.pt", steps=1, seconds=1.0, interrupted=True,
                           evaluation=None)

    monkeypatch.setattr(agents.train, "train", interrupted)
    out = tmp_path / "rs"
    with pytest.raises(KeyboardInterrupt):
        run_experiment(out=str(out), systems=["american"], reward_modes=["line"], seeds=[0, 1], timesteps=64, games=2,
                       progress=False, train_options=TINY_TRAIN)
    assert seen == [0] and not (out / "evaluation").exists() and not (out / "results.json").exists()
    err = capsys.readouterr().err
    assert f"reward-shaping: Ctrl-C stopped {out}" in err and "(step 1); its checkpoint and model are kept" in err
    assert "runs finished before it: 0 (a rerun with the same options reuses them)" in err
    assert "no results were written" in err


class _FailedEvaluation:
    """What evaluate returns when games failed: only ``errors`` is read before the experiment gives up."""

    errors = ["deal 3: ValueError: boom", "deal 4: ValueError: boom"]


def test_reward_shaping_with_failed_evaluation_games_raises_and_writes_no_results(tiny_rerun, monkeypatch):
    """A failed evaluation game is raised (naming the count and the first), not averaged away into results (a
    mutation audit dropped the check unseen)."""
    import agents.evaluation
    import agents.train

    out, _results = tiny_rerun
    monkeypatch.setattr(agents.train, "train", lambda *a, **k: pytest.fail("a finished run was trained again"))
    monkeypatch.setattr(agents.evaluation, "evaluate", lambda *a, **k: _FailedEvaluation())
    with pytest.raises(RuntimeError, match=r"^2 evaluation games failed, first: deal 3: ValueError: boom$"):
        run_experiment(out=str(out), timesteps=416, seeds=[0, 1, 2], games=6, progress=False,
                       train_options=TINY_TRAIN)
    assert not (out / "results.json").exists() and not (out / "results.md").exists()


def test_potential_shaping_with_failed_evaluation_games_raises_and_writes_no_results(tmp_path, monkeypatch):
    import agents.evaluation
    import agents.experiments.potential_shaping as ps

    monkeypatch.setattr(ps, "_train", lambda cfg: {"steps": 416, "seconds": 0.1, "interrupted": False})
    monkeypatch.setattr(agents.evaluation, "evaluate", lambda *a, **k: _FailedEvaluation())
    out = tmp_path / "ps"
    with pytest.raises(RuntimeError, match=r"^2 evaluation games failed, first: deal 3: ValueError: boom$"):
        ps.potential_shaping(str(out), shapings=("none",), seeds=(0,), timesteps=416, games=2, progress=False,
                             train_options=TINY_TRAIN)
    assert not (out / "results.json").exists() and not (out / "results.md").exists()


def test_the_analysis_pairs_the_first_system_with_every_other_and_averages_hand_shares_over_the_seeds(tmp_path):
    """With three training systems the system comparisons are first - second and first - third, per reward mode; a
    condition's hand shares are the mean over its seeds, not its first seed's (a mutation audit kept only the
    first pair and only the first seed, unseen)."""
    from agents.experiments.reward_shaping import HAND_COLUMNS, analyse

    systems = ["american", "english", "custom"]
    cfg = ExperimentConfig(systems=systems, reward_modes=["line"], seeds=[0, 1])
    runs = [{"system": s, "mode": "line", "seed": seed, "dir": str(tmp_path / f"{s}{seed}"), "spec": f"{s}:{seed}"}
            for s in systems for seed in (0, 1)]
    base = {"american": 100.0, "english": 90.0, "custom": 70.0}

    class Result:  # the harness result analyse reads: scores per deal, hand shares per agent
        def scores(self, spec, system=None):
            s, seed = spec.split(":")
            return {deal: base[s] + int(seed) + deal for deal in range(4)}

        def hand_frequencies(self):
            shares = {}
            for r in runs:
                share = {h: 0.0 for h in HAND_COLUMNS}
                share["one_pair"] = 0.2 + 0.1 * r["seed"]  # seed 0: 0.2, seed 1: 0.3
                shares[r["spec"]] = {kind: dict(share) for kind in ("all", "rows", "columns")}
            return shares

    results = analyse(cfg, runs, Result())
    pairs = {(p["comparison"], p["eval_system"]): p["mean_diff"] for p in results["paired"]}
    assert pairs == {("american - english reward (line)", es): pytest.approx(10.0) for es in EVAL_SYSTEMS} | {
        ("american - custom reward (line)", es): pytest.approx(30.0) for es in EVAL_SYSTEMS}
    assert [row["all:one_pair"] for row in results["hands"]] == [pytest.approx(0.25)] * 3


def test_an_older_potential_shaping_folder_is_known_by_its_full_results_and_no_mark(tmp_path):
    """A folder is an older potential-shaping one (before experiment.json) only if its results.json holds all of
    shapings, runs, seeds, eval_seed and timesteps and it has no experiment.json (a mutation audit loosened both
    checks unseen)."""
    from agents.experiments.marks import ROOT_MARK
    from agents.experiments.potential_shaping import _older_root

    full = {"shapings": {}, "runs": [], "seeds": [0], "eval_seed": 0, "timesteps": 416}
    for name, data, mark, older in [("full", full, False, True), ("marked", full, True, False),
                                    ("shapings-only", {"shapings": {}}, False, False),
                                    ("no-timesteps", {k: v for k, v in full.items() if k != "timesteps"}, False, False)]:
        folder = tmp_path / name
        folder.mkdir()
        (folder / "results.json").write_text(json.dumps(data))
        if mark:
            (folder / ROOT_MARK).write_text(json.dumps({"written_by": "potential-shaping"}))
        assert _older_root(folder) is older, name


def test_compare_trainers_reuses_finished_runs_of_the_same_config_and_retrain_trains_them_again(tmp_path, monkeypatch,
                                                                                               capsys):
    """A stopped comparison keeps the algorithms finished before the stop: the same call trains only the rest."""
    import agents.train
    from agents.experiments import compare_trainers as module

    tiny_sb3 = dict(hidden=[8, 8], num_envs=2, num_steps=64, minibatch_size=64, update_epochs=1)
    options = dict(timesteps=128, algos=("maskable-ppo", "fast-ppo"), games=3, eval_points=1, progress=False,
                   train_options={"maskable-ppo": tiny_sb3, "fast-ppo": TINY_TRAIN})
    real, trained = agents.train.train, []

    def stops_at_fast_ppo(cfg, **kwargs):
        if cfg.algo == "fast-ppo":
            raise KeyboardInterrupt
        trained.append(cfg.algo)
        return real(cfg, **kwargs)

    monkeypatch.setattr(agents.train, "train", stops_at_fast_ppo)
    with pytest.raises(KeyboardInterrupt):
        module.compare_trainers(str(tmp_path), **options)
    first = json.loads((tmp_path / "maskable-ppo" / "progress.json").read_text())

    def counts(cfg, **kwargs):
        trained.append(cfg.algo)
        return real(cfg, **kwargs)

    monkeypatch.setattr(agents.train, "train", counts)
    trained.clear()
    capsys.readouterr()
    result = module.compare_trainers(str(tmp_path), **options)
    assert trained == ["fast-ppo"]  # the finished maskable-ppo run is reused
    assert f"reusing the finished maskable-ppo run in {tmp_path / 'maskable-ppo'}" in capsys.readouterr().err
    rows = {r["algo"]: r for r in result["rows"]}
    assert (rows["maskable-ppo"]["steps"], rows["maskable-ppo"]["seconds"]) == (first["steps"], first["seconds"])
    assert rows["fast-ppo"]["steps"] == json.loads((tmp_path / "fast-ppo" / "progress.json").read_text())["steps"]
    table = (tmp_path / "comparison.md").read_text()
    assert "| maskable-ppo (reused) |" in table and "| fast-ppo |" in table and "(reused): a finished run" in table
    assert [r["reused"] for r in json.loads((tmp_path / "comparison.json").read_text())] == [True, False]

    trained.clear()  # nothing left to train; another budget is another config: trained again
    module.compare_trainers(str(tmp_path), **options)
    assert trained == []
    module.compare_trainers(str(tmp_path), **{**options, "timesteps": 256})
    assert trained == ["maskable-ppo", "fast-ppo"]
    trained.clear()
    module.compare_trainers(str(tmp_path), **{**options, "timesteps": 256}, retrain=True)
    assert trained == ["maskable-ppo", "fast-ppo"]
    with pytest.raises(TypeError, match="retrain='yes'"):
        module.compare_trainers(str(tmp_path), **options, retrain="yes")


@pytest.mark.parametrize("jobs", [1, 2])
def test_potential_shaping_reuses_finished_runs_of_the_same_config_and_retrain_trains_them_again(tmp_path,
                                                                                                monkeypatch, capsys,
                                                                                                jobs):
    """A stopped experiment keeps the runs finished before the stop: the same call trains only the rest (in the
    pool of processes too)."""
    import agents.experiments.potential_shaping as ps

    options = dict(shapings=("none", "heuristic"), seeds=(0,), timesteps=416, games=3, eval_points=1, progress=False,
                   train_options=TINY_TRAIN, jobs=jobs)
    out = tmp_path / "ps"
    real, trained = ps._train, []

    def stops_at_heuristic(cfg):
        if cfg.shaping == "heuristic":
            raise KeyboardInterrupt
        return real(cfg)

    monkeypatch.setattr(ps, "_train", stops_at_heuristic)
    with pytest.raises(KeyboardInterrupt):
        ps.potential_shaping(str(out), **{**options, "jobs": 1})
    first = json.loads((out / "runs" / "none_s0" / "progress.json").read_text())

    def counts(cfg):
        trained.append(cfg.shaping)
        return real(cfg)

    monkeypatch.setattr(ps, "_train", counts)
    capsys.readouterr()
    result = ps.potential_shaping(str(out), **options)
    if jobs == 1:  # (the pool's processes do not see this process's patch: the count is of the one-process path)
        assert trained == ["heuristic"]
    assert f"reusing the finished run in {out / 'runs' / 'none_s0'}" in capsys.readouterr().err
    runs = {r["shaping"]: r for r in result["runs"]}
    assert (runs["none"]["steps"], runs["none"]["seconds"]) == (first["steps"], first["seconds"])
    again = json.loads((out / "runs" / "heuristic_s0" / "progress.json").read_text())
    assert (runs["heuristic"]["steps"], runs["heuristic"]["seconds"]) == (again["steps"], again["seconds"])
    assert (runs["none"]["reused"], runs["heuristic"]["reused"]) == (True, False)
    assert "| none seed 0 (reused) |" in (out / "results.md").read_text()
    trained.clear()
    ps.potential_shaping(str(out), **{**options, "jobs": 1})
    assert trained == []  # everything finished: nothing trained
    ps.potential_shaping(str(out), **{**options, "jobs": 1}, retrain=True)
    assert trained == ["none", "heuristic"]
    with pytest.raises(TypeError, match="retrain=1"):
        ps.potential_shaping(str(out), **options, retrain=1)


def test_potential_shaping_in_a_pool_starts_no_waiting_run_once_ctrl_c_stopped_one(tmp_path, monkeypatch, capsys):
    """With more runs than workers, Ctrl-C used to stop the running ones while those waiting for a worker started
    and trained to the end.  A pool that runs each task as it is given shows which were given to the pool: only as
    many as it has workers, so none waits in its queue, where cancel() cannot reach it."""
    from concurrent.futures import Future

    import agents.experiments.potential_shaping as ps

    started = []

    class Pool:
        def __init__(self, max_workers):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def submit(self, fn, *args):
            future = Future()
            future.set_result(fn(*args))
            return future

        def shutdown(self, wait=True, cancel_futures=False):
            pass

    def train(cfg):
        started.append((cfg.shaping, cfg.seed))
        return {"steps": 26, "seconds": 0.1, "interrupted": True}  # Ctrl-C reached the first run

    monkeypatch.setattr(ps, "ProcessPoolExecutor", Pool)
    monkeypatch.setattr(ps, "_train", train)
    import agents.evaluation

    monkeypatch.setattr(agents.evaluation, "usable_cpus", lambda: 2)  # two workers for the four runs
    with pytest.raises(KeyboardInterrupt):
        ps.potential_shaping(str(tmp_path / "ps"), shapings=("none", "heuristic"), seeds=(0, 1), timesteps=416,
                             games=2, progress=False, train_options=TINY_TRAIN, jobs=2)
    # a run is submitted only when one of the two workers is free: the two under way when Ctrl-C came (both got it),
    # never the two still waiting
    assert started == [("none", 0), ("none", 1)]
    assert "Ctrl-C stopped" in capsys.readouterr().err


class _Evaluated(Exception):
    """Raised where the experiment goes on to evaluate its runs: the training part is done."""


def test_potential_shaping_in_a_pool_gives_the_next_run_to_the_first_worker_free(tmp_path, monkeypatch):
    """Before, the pool waited on the oldest run first: a worker whose shorter run had ended sat idle until the
    oldest one ended too.  Here the oldest run ends only once the third has started (threads stand for the
    processes, so the patched runs are seen); waiting on it first, the third never starts and it waits in vain."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    import agents.evaluation
    import agents.experiments.potential_shaping as ps

    third_started, order, waited = threading.Event(), [], []

    def train(cfg):
        order.append((cfg.shaping, cfg.seed))
        if len(order) == 3:
            third_started.set()
        if (cfg.shaping, cfg.seed) == ("none", 0):  # the oldest: it ends after the third run started
            waited.append(third_started.wait(timeout=10))
        return {"steps": 26, "seconds": 0.1, "interrupted": False}

    def evaluate(*args, **kwargs):
        raise _Evaluated

    monkeypatch.setattr(ps, "ProcessPoolExecutor", ThreadPoolExecutor)
    monkeypatch.setattr(ps, "_train", train)
    monkeypatch.setattr(agents.evaluation, "evaluate", evaluate)
    monkeypatch.setattr(agents.evaluation, "usable_cpus", lambda: 2)
    with pytest.raises(_Evaluated):
        ps.potential_shaping(str(tmp_path / "ps"), shapings=("none", "heuristic"), seeds=(0, 1), timesteps=416,
                             games=2, progress=False, train_options=TINY_TRAIN, jobs=2)
    assert waited == [True]  # the third run started while the oldest was still under way
    assert sorted(order) == [("heuristic", 0), ("heuristic", 1), ("none", 0), ("none", 1)]


@pytest.mark.parametrize("eval_points", [0, -1])
def test_compare_trainers_refuses_bad_eval_points_before_training(tmp_path, eval_points):
    """compare_trainers' ``eval_points`` is checked as potential_shaping's is (a ValueError naming it, before any
    folder is made or run trained): 0 raised ZeroDivisionError, and -1 trained with an evaluation every step."""
    from agents.experiments.compare_trainers import compare_trainers

    out = tmp_path / "ct"
    with pytest.raises(ValueError, match="eval_points"):
        compare_trainers(str(out), timesteps=416, algos=("fast-ppo",), games=2, eval_points=eval_points,
                         progress=False, train_options={"fast-ppo": TINY_TRAIN})
    assert not out.exists()


def test_ctrl_c_in_potential_shaping_with_jobs_starts_no_waiting_run(tmp_path, monkeypatch, capsys):
    """docs/training.md: 'in potential-shaping --jobs N, runs still waiting for a worker do not start'.  With two
    workers and four runs, Ctrl-C stops the two runs under way; the two waiting runs start anyway (the executor had
    already moved them to its call queue, where cancel() cannot reach them) and the command waits for them to train
    to the end before it exits 130."""
    import os
    import time

    import agents.evaluation
    import agents.train
    from agents.train import TrainResult
    from pokersquares_env.cli import main

    started = tmp_path / "started"
    started.mkdir()

    def interrupted(cfg, **kwargs):  # a run that Ctrl-C stops: checkpoint kept, interrupted (in a worker process)
        (started / os.path.basename(cfg.out)).touch()
        time.sleep(0.5)
        return TrainResult(out=cfg.out, model_path=cfg.out + "/model.pt", steps=416, seconds=0.5, interrupted=True,
                           evaluation=None)

    monkeypatch.setattr(agents.train, "train", interrupted)  # forked workers inherit it
    monkeypatch.setattr(agents.evaluation, "usable_cpus", lambda: 2)  # two workers on a one-core test run
    out = tmp_path / "ps"
    assert main(["experiment", "potential-shaping", "--out", str(out), "--shapings", "none", "heuristic", "--seeds",
                 "0", "1", "--timesteps", "6400", "--games", "2", "--jobs", "2", "--no-progress"]) == 130
    assert "Ctrl-C stopped" in capsys.readouterr().err
    assert len(os.listdir(started)) <= 2, f"runs started after the Ctrl-C: {sorted(os.listdir(started))}"
