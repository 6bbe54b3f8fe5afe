"""Sweep configs, trial records and summaries (``agents.sweep``) without running Ray: trials are faked, and
``run_sweep`` meets a stand-in Tuner (as in ``tests/test_reproducibility.py``)."""

from __future__ import annotations

import csv
import json
import math
import re
import types
from pathlib import Path

import pytest

from agents.sweep import DONE_FILE, SweepConfig, SweepResult, run_trial, trial_folder
from helpers import legend_below_the_axes, tune_trial_configs

FAST = {"algo": "fast-ppo", "timesteps": 200, "num_envs": 4, "num_steps": 25, "minibatch_size": 50, "hidden": [16],
        "eval_every": 100, "eval_games": 4, "checkpoint_every": 0, "final_eval_games": 6}


def _fixed(space):
    """FAST without the options ``space`` varies."""
    return {k: v for k, v in FAST.items() if k not in space}


class _Stop(Exception):
    pass


def _no_ray(monkeypatch):
    """``run_sweep`` with no Ray started: ensure_ray does nothing and no Ray session is open.  The trainers need not
    be installed either: the stand-in Tuners train nothing (the check has its own test in test_distributed.py)."""
    import ray

    import agents.distributed
    import agents.sweep

    monkeypatch.setattr(agents.distributed, "ensure_ray", lambda *args, **kwargs: False)
    monkeypatch.setattr(agents.sweep, "check_trainers_installed", lambda config: None)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)


def _capture_tuner(monkeypatch):
    """Stop ``run_sweep`` at Ray Tune's Tuner (with no Ray started): the dict it returns gets the Tuner's keywords."""
    pytest.importorskip("ray.tune")
    from ray import tune

    captured = {}

    class CapturingTuner:
        def __init__(self, trainable, **kwargs):
            captured.update(kwargs)
            raise _Stop

    _no_ray(monkeypatch)
    monkeypatch.setattr(tune, "Tuner", CapturingTuner)
    return captured


def _draws(tmp_path, monkeypatch, space, samples, search_seed=0):
    """The trial configs ``run_sweep`` would give Ray Tune for ``space`` (stopped at the Tuner; nothing trains)."""
    pytest.importorskip("ray.tune")

    from agents.sweep import run_sweep

    captured = _capture_tuner(monkeypatch)
    with pytest.raises(_Stop):
        run_sweep({"name": "draws", "out": str(tmp_path / "sw"), "train": {"algo": "fast-ppo"}, "space": space,
                   "samples": samples, "search_seed": search_seed}, verbose=0)
    return tune_trial_configs(captured, tmp_path)


def test_the_search_seed_sets_the_random_draws(tmp_path, monkeypatch):
    """The same search_seed draws the same options again; another draws others (an audit ignored it unseen)."""
    space = {"learning_rate": {"loguniform": [1e-4, 3e-3]}, "seed": [0]}
    first = _draws(tmp_path / "a", monkeypatch, space, samples=2, search_seed=0)
    again = _draws(tmp_path / "b", monkeypatch, space, samples=2, search_seed=0)
    other = _draws(tmp_path / "c", monkeypatch, space, samples=2, search_seed=1)
    rates = [[d["learning_rate"] for d in draws] for draws in (first, again, other)]
    assert rates[0] == rates[1] and rates[0] != rates[2]


# --------------------------------------------------------------------------- random draws shared by the grid


def test_every_seed_of_a_sample_trains_the_same_random_draws(tmp_path, monkeypatch):
    """Before, Tune drew the random options again for every grid value: with seed: [0, 1] each seed got its own
    learning rate, so the means over seeds averaged nothing, and adding a seed drew every trial anew."""
    space = {"learning_rate": {"loguniform": [1e-4, 3e-3]}, "ent_coef": {"uniform": [0.0, 0.01]}, "seed": [0, 1]}
    draws = _draws(tmp_path, monkeypatch, space, samples=3)
    assert [d["seed"] for d in draws] == [0, 1] * 3
    for first, second in zip(draws[::2], draws[1::2], strict=True):  # a sample: seed 0 then seed 1
        assert (first["learning_rate"], first["ent_coef"]) == (second["learning_rate"], second["ent_coef"])
    assert len({d["learning_rate"] for d in draws}) == 3  # the samples still draw afresh
    # a seed added later keeps every earlier trial's draws (and so its run folder): only the new trials train
    more = _draws(tmp_path, monkeypatch, {**space, "seed": [0, 1, 2]}, samples=3)
    assert [d for d in more if d["seed"] != 2] == draws
    # the summary's means over seeds pool both seeds of each sample
    cfg = SweepConfig.from_dict({"name": "g", "out": str(tmp_path / "g"), "train": {"algo": "fast-ppo"},
                                 "space": space, "samples": 3})
    trials = [{"params": d, "folder": str(trial_folder(cfg, d)), "status": "done", "metrics": {"mean": 1.0 + i}}
              for i, d in enumerate(draws)]
    assert [g["trials"] for g in SweepResult(cfg, trials).groups()] == [2, 2, 2]


# --------------------------------------------------------------------------- stale trial records


def _stale_record(tmp_path, sweep, **changed):
    """A finished record in the trial's folder, of the same trial trained with other fixed options (``changed``), in
    the folder of an earlier sweep (its ``sweep.json``)."""
    from agents.config import TrainConfig

    cfg = SweepConfig(**sweep)
    folder = trial_folder(cfg, {"seed": 0})
    folder.mkdir(parents=True)
    (Path(cfg.out) / "sweep.json").write_text(json.dumps(cfg.to_dict()))
    old = TrainConfig.from_dict({**cfg.train, **changed, "seed": 0, "out": str(folder), "progress": False})
    record = {"status": "done", "params": {"seed": 0}, "metrics": {"mean": 123.0}, "config": old.resolved().to_dict()}
    (folder / DONE_FILE).write_text(json.dumps(record))
    _point_system_file(folder, old)
    return folder


def _point_system_file(folder, train_cfg):
    """The ``point_system.json`` a run folder holds: the table its run trained for (a reused trial must match it)."""
    from pokersquares_env.scoring import point_system

    (folder / "point_system.json").write_text(json.dumps(point_system(train_cfg.resolved().scoring).to_json()))


def test_a_failed_retrain_does_not_leave_the_old_configs_record(tmp_path, monkeypatch):
    """Before, a trial retrained with changed options that then failed kept its old ``sweep_trial.json``: the next
    look at the folder (run_sweep's summary) reported the old config's results as this trial's, status done."""
    import agents.train

    sweep = SweepConfig(name="t", out=str(tmp_path / "sw"), train=FAST, space={"seed": [0]}).to_dict()
    folder = _stale_record(tmp_path, sweep, learning_rate=0.005)

    def crash(cfg, **kwargs):
        assert not (folder / DONE_FILE).exists()  # gone before training starts
        raise RuntimeError("simulated crash during training")

    monkeypatch.setattr(agents.train, "train", crash)
    with pytest.raises(RuntimeError, match="simulated crash"):
        run_trial({"seed": 0}, sweep)
    assert not (folder / DONE_FILE).exists()


def test_an_unfinished_retrain_beside_a_stale_record_resumes(tmp_path, monkeypatch):
    """A checkpoint of this very config continues even when an older config's record is still in the folder (a
    retrain stopped by an older version): before, any record blocked the resume and the run started over."""
    import agents.train
    from agents.config import TrainConfig

    sweep = SweepConfig(name="t", out=str(tmp_path / "sw"), train=FAST, space={"seed": [0]}).to_dict()
    folder = _stale_record(tmp_path, sweep, learning_rate=0.005)
    TrainConfig.from_dict({**FAST, "seed": 0, "out": str(folder), "progress": False}).save(
        folder / "config.json")  # the retrain's own config
    (folder / "checkpoints").mkdir()
    (folder / "checkpoints" / "latest.pt").write_bytes(b"checkpoint")
    calls = []

    def fake_train(cfg, **kwargs):
        assert isinstance(cfg, TrainConfig)
        calls.append(kwargs)
        return types.SimpleNamespace(interrupted=True, steps=100)

    monkeypatch.setattr(agents.train, "train", fake_train)
    with pytest.raises(RuntimeError, match="interrupted at step 100"):
        run_trial({"seed": 0}, sweep)
    assert calls == [{"resume": True, "overwrite": False}]
    # a checkpoint of another config (another learning rate) is not continued: that trial starts over
    TrainConfig.from_dict({**FAST, "seed": 0, "out": str(folder), "progress": False, "learning_rate": 0.005}).save(
        folder / "config.json")
    calls.clear()
    with pytest.raises(RuntimeError, match="interrupted at step 100"):
        run_trial({"seed": 0}, sweep)
    assert calls == [{"resume": False, "overwrite": True}]


@pytest.mark.parametrize("stale", [True, False])
def test_run_sweep_counts_only_a_record_of_the_trials_own_config_as_done(tmp_path, monkeypatch, stale):
    """Before, run_sweep counted any ``sweep_trial.json`` as done: a trial that failed beside a stale record (another
    config's) was summarised as done with the old config's results."""
    pytest.importorskip("ray.tune")
    from ray import tune

    from agents.sweep import run_sweep

    config = {"name": "t", "out": str(tmp_path / "sw"), "train": FAST, "space": {"seed": [0]}}
    folder = _stale_record(tmp_path, config, **({"learning_rate": 0.005} if stale else {}))

    class FailedTuner:
        def __init__(self, trainable, **kwargs):
            pass

        def fit(self):
            return [types.SimpleNamespace(config={"seed": 0}, metrics={}, error=RuntimeError("trial crashed"))]

    _no_ray(monkeypatch)
    monkeypatch.setattr(tune, "Tuner", FailedTuner)
    result = run_sweep(config, verbose=0, plots=False)
    [trial] = result.trials
    assert trial["folder"] == str(folder)
    if stale:
        assert trial["status"] == "error" and trial["metrics"] == {}
    else:  # the trial's own finished record still counts
        assert trial["status"] == "done" and trial["metrics"] == {"mean": 123.0}


def test_a_finished_trial_is_not_reused_after_its_point_file_changed(tmp_path, monkeypatch):
    """An audit found a trial trained with `scoring: pts.json` reused after the file's values changed (the config
    names the path, which had not), reporting the old table's results; the run folder's point_system.json is the
    table it trained for, and a trial is reused only when that is the table the file holds now."""
    import agents.train
    from agents.sweep import _trial_config
    from pokersquares_env.scoring import point_system

    table = tmp_path / "pts.json"
    table.write_text(json.dumps(point_system("american").to_json()["points"]))
    sweep = SweepConfig(name="t", out=str(tmp_path / "sw"), train={**FAST, "scoring": str(table)},
                        space={"seed": [0]}).to_dict()
    cfg = SweepConfig(**sweep)
    folder = trial_folder(cfg, {"seed": 0})
    folder.mkdir(parents=True)
    train_cfg = _trial_config(cfg, {"seed": 0})
    record = {"status": "done", "params": {"seed": 0}, "metrics": {"mean": 14.45}, "config": train_cfg.resolved().to_dict()}
    (folder / DONE_FILE).write_text(json.dumps(record))
    _point_system_file(folder, train_cfg)
    assert run_trial({"seed": 0}, sweep) == {"mean": 14.45, "reused": True}  # the same table: reused
    table.write_text(json.dumps({**point_system("american").to_json()["points"], "one_pair": 40}))
    calls = []

    def fake_train(cfg, **kwargs):
        calls.append(kwargs)
        raise RuntimeError("trained again")

    monkeypatch.setattr(agents.train, "train", fake_train)
    with pytest.raises(RuntimeError, match="trained again"):
        run_trial({"seed": 0}, sweep)
    assert calls == [{"resume": False, "overwrite": True}] and not (folder / DONE_FILE).exists()


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(("space", "samples", "message"), [
    ({"seed": [0, 0]}, 1, "space: seed: value 0 given more than once: expected distinct grid values"),
    ({"reward_mode": {"grid": ["line", "terminal", "line"]}}, 1, "space: reward_mode: value 'line' given more than once"),
    ({"hidden": [[16], [16]]}, 1, "space: hidden: value [16] given more than once"),
    ({"update_epochs": {"choice": [1, 1, 2]}}, 2, "space: update_epochs: value 1 given more than once: expected "
                                                  "distinct choice values"),
    ({"reward_mode": ["line", "terminal"]}, 2,
     "samples=2: the space has no random dimension, so every sample would repeat the same grid trials"),
    # an audit found two spellings of one value trained twice, in two folders, and counted twice over seeds
    ({"first_cell": ["center", "c3"], "seed": [0]}, 1,
     "trials {'first_cell': 'center', 'seed': 0} and {'first_cell': 'c3', 'seed': 0} train the same config"),
    ({"seed": [0, 0.0]}, 1, "trials {'seed': 0} and {'seed': 0.0} train the same config"),
    ({"ent_coef": [0, 0.0], "seed": [0]}, 1, "train the same config (values that differ only in how they are written)"),
    # and later, a point system named in two spellings (the same table): before, two folders and two rows of means
    ({"scoring": ["american", "American"]}, 1, "trials {'scoring': 'american'} and {'scoring': 'American'} train the "
                                               "same config"),
])
def test_duplicate_trials_are_refused(space, samples, message):
    """Before, repeated grid values and samples > 1 of a grid-only space were accepted: their trials shared one run
    folder, training over each other and reporting one record twice."""
    with pytest.raises(ValueError, match=re.escape(message)):
        SweepConfig.from_dict({"name": "d", "train": _fixed(space), "space": space, "samples": samples})
    SweepConfig.from_dict({"name": "d", "train": FAST, "space": {"seed": [0, 1], "ent_coef": {"uniform": [0, 0.01]}},
                           "samples": 2})  # a random dimension: each sample draws its own trials
    SweepConfig.from_dict({"name": "d", "train": FAST, "space": {"learning_rate": [0.001, 0.0010001]}})


@pytest.mark.parametrize(("space", "message"), [
    ({"num_steps": {"uniform": [25, 50]}},
     "space: num_steps: uniform=[25, 50]: num_steps takes whole numbers, and uniform draws fractions: expected "
     "{randint: [low, high]}"),
    ({"timesteps": {"loguniform": [100, 1000]}}, "timesteps takes whole numbers"),
    ({"gamma": {"uniform": [0.9, 1.5]}}, "gamma=1.5: expected a number in (0, 1]"),  # the upper bound
    ({"jokers": {"randint": [0, 4]}}, "jokers=3: expected 0, 1 or 2"),  # randint's highest value (high excluded)
    ({"num_steps": {"choice": [25, 0]}}, "num_steps=0: expected an integer "),  # a later choice value
    ({"hidden": {"choice": [[16], [0]]}}, "hidden=[0]: expected a non-empty list"),
    ({"learning_rate": {"uniform": [1e-4, math.inf]}}, "learning_rate: uniform=[0.0001, inf]: expected [low, high] of "
                                                       "finite numbers"),
    ({"learning_rate": {"loguniform": [1e-4, math.inf]}}, "expected [low, high] of finite numbers"),
])
def test_random_dimensions_are_checked_at_every_value(space, message):
    """Before, a random option was checked at its first value (lower bound) only: an upper bound, a later choice or
    a fractional draw for a whole-number option failed every trial inside Ray instead."""
    with pytest.raises(ValueError, match=re.escape(message)):
        SweepConfig.from_dict({"name": "r", "train": _fixed(space), "space": {**space, "seed": [0]}})


def test_values_inside_a_random_range_are_checked_too():
    """An audit found values inside a range failing every such trial inside Ray where both ends pass: a randint's
    every integer is now checked (3 envs x 7 steps = 21 samples leave a one-sample minibatch of 4, where 4 and 8 steps
    do not), and a uniform's fraction (first_cell takes whole cells only, though its field is typed Any)."""
    train = {**FAST, "algo": "maskable-ppo", "num_envs": 3, "minibatch_size": 4}
    train.pop("num_steps")
    with pytest.raises(ValueError, match=r"trial \{'num_steps': 7, 'seed': 0\}: .*minibatch"):
        SweepConfig.from_dict({"name": "r", "train": train, "space": {"num_steps": {"randint": [4, 9]}, "seed": [0]},
                               "samples": 2})
    with pytest.raises(ValueError, match=r"first_cell=9\.16"):
        SweepConfig.from_dict({"name": "r", "train": _fixed({"seed": 0}),
                               "space": {"first_cell": {"uniform": [0, 24]}, "seed": [0]}, "samples": 2})
    SweepConfig.from_dict({"name": "r", "train": _fixed({"num_steps": 0}),  # a wide range: its ends and a spread
                           "space": {"num_steps": {"randint": [25, 2000]}, "seed": [0]}, "samples": 2})


def test_a_bad_trial_is_named_by_its_varied_values():
    """The error named only the option (here fast-ppo's default minibatch_size, which the user never set), not the
    varied value that made it bad (num_steps=4)."""
    with pytest.raises(ValueError, match=re.escape("sweep config: trial {'num_steps': 4, 'seed': 0}: minibatch_size="
                                                   "1600: expected at most num_envs * num_steps = 1024")):
        SweepConfig.from_dict({"name": "t", "train": {"algo": "fast-ppo"},
                               "space": {"num_steps": [50, 4], "seed": [0, 1]}})
    with pytest.raises(ValueError, match=re.escape("trial {'learning_rate': -1.0}: learning_rate=-1.0: expected a "
                                                   "positive number")):
        SweepConfig.from_dict({"name": "t", "train": {"algo": "fast-ppo"}, "space": {"learning_rate": [0.1, -1.0]}})


def test_good_random_dimensions_still_pass():
    space = {"jokers": {"randint": [0, 3]}, "num_steps": {"choice": [25, 50]}, "gamma": {"uniform": [0.9, 1.0]},
             "learning_rate": {"loguniform": [1e-4, 3e-3]}, "seed": [0, 1]}
    assert SweepConfig.from_dict({"name": "r", "train": _fixed(space), "space": space, "samples": 4}).space == space


@pytest.mark.parametrize("cpus", [math.nan, math.inf, -1.0, 0])
def test_cpus_per_trial_must_be_a_positive_finite_number(cpus):
    """Before, ``cpus_per_trial: .nan`` passed every check and the sweep waited forever for a trial to start."""
    with pytest.raises(ValueError, match=re.escape(f"cpus_per_trial={cpus!r}: expected a positive (finite) number")):
        SweepConfig.from_dict({"name": "c", "space": {"seed": [0]}, "cpus_per_trial": cpus})


@pytest.mark.parametrize(("train", "message"), [
    ({"out": "runs/mine"}, "train: out='runs/mine' cannot be set: each trial writes its own run folder, "
                           "<out>/trials/<trial>, under the sweep's top-level out"),
    ({"progress": True}, "train: progress=True cannot be set: trials train without a progress display"),
])
def test_out_and_progress_under_train_are_refused(train, message):
    """Before, ``train: {out: ..., progress: ...}`` was accepted and silently ignored (every trial sets both)."""
    with pytest.raises(ValueError, match=re.escape(message)):
        SweepConfig.from_dict({"name": "o", "train": train, "space": {"seed": [0]}})


# --------------------------------------------------------------------------- point-system files, ranking


def test_run_sweep_makes_relative_point_system_files_absolute(tmp_path, monkeypatch):
    """Before, ``run_sweep`` of a mapping or a SweepConfig kept ``scoring: pts.json`` relative, and every trial (which
    Tune runs in a folder of its own) failed to find it; only ``load_sweep`` made it absolute."""
    pytest.importorskip("ray.tune")

    from agents.sweep import run_sweep
    from pokersquares_env.scoring import point_system

    (tmp_path / "pts.json").write_text(json.dumps(point_system("american").to_json()))
    (tmp_path / "pts2.json").write_text(json.dumps(point_system("english").to_json()))
    monkeypatch.chdir(tmp_path)
    captured = _capture_tuner(monkeypatch)
    absolute = str(tmp_path / "pts.json")
    for config in ({"name": "p", "out": "sw", "train": {**FAST, "scoring": "pts.json"}, "space": {"seed": [0]}},
                   SweepConfig(name="p", out="sw", train={**FAST, "scoring": "pts.json"}, space={"seed": [0]})):
        with pytest.raises(_Stop):
            run_sweep(config, verbose=0)
        assert json.loads((tmp_path / "sw" / "sweep.json").read_text())["train"]["scoring"] == absolute
    with pytest.raises(_Stop):
        run_sweep({"name": "p", "out": "sw", "train": FAST, "space": {"scoring": ["american", "pts2.json"]}}, verbose=0)
    assert json.loads((tmp_path / "sw" / "sweep.json").read_text())["space"]["scoring"] == \
        ["american", str(tmp_path / "pts2.json")]
    assert captured["param_space"]["scoring"] == {"grid_search": ["american", str(tmp_path / "pts2.json")]}


def test_a_sweep_ranked_by_win_rate_ranks_its_means_over_seeds_by_win_rate(tmp_path):
    """Before, ``metric: win_rate`` was accepted but the means over seeds had no win_rate and were ranked by mean."""
    cfg = SweepConfig.from_dict({"name": "w", "out": str(tmp_path / "w"), "train": FAST, "metric": "win_rate",
                                 "space": {"reward_mode": ["line", "terminal"], "seed": [0, 1]}})

    def trial(mode, seed, mean, win_rate):
        return {"params": {"reward_mode": mode, "seed": seed}, "folder": str(Path(tmp_path, f"{mode}{seed}")),
                "status": "done", "metrics": {"mean": mean, "win_rate": win_rate}}

    result = SweepResult(cfg, [trial("line", 0, 100.0, 0.1), trial("line", 1, 100.0, 0.2),
                               trial("terminal", 0, 50.0, 0.9), trial("terminal", 1, 50.0, 0.7)])
    groups = result.groups()
    assert [g["reward_mode"] for g in groups] == ["terminal", "line"]
    assert groups[0]["win_rate"] == pytest.approx(0.8) and groups[1]["win_rate"] == pytest.approx(0.15)
    assert "win_rate" in result.table().split("## Means over seeds")[1]
    # a configuration without the figure ranks last, not anywhere
    result.trials.append(trial("none", 0, 75.0, None))
    cfg.space["reward_mode"] = ["line", "terminal", "none"]
    assert [g["reward_mode"] for g in result.groups()] == ["terminal", "line", "none"]


def test_repeated_draws_count_as_reused_only_when_every_draw_reused_the_folder(tmp_path, monkeypatch):
    """An audit found a folder trained in this very run reported as reused: of two draws of the same options the
    first trained it and the second (waiting for the lock) reused it, and the summary kept whichever came first."""
    pytest.importorskip("ray.tune")
    from ray import tune

    from agents.sweep import _trial_config, run_sweep

    config = {"name": "rep", "out": str(tmp_path / "sw"), "train": _fixed({"update_epochs": 0, "seed": 0}),
              "space": {"update_epochs": {"choice": [1, 2]}, "seed": [0]}, "samples": 2}
    cfg = SweepConfig.from_dict(config)
    params = {"update_epochs": 2, "seed": 0}
    folder = trial_folder(cfg, params)
    folder.mkdir(parents=True)
    (Path(cfg.out) / "sweep.json").write_text(json.dumps(cfg.to_dict()))  # this run's own folder
    train_cfg = _trial_config(cfg, params)
    record = {"status": "done", "params": params, "metrics": {"mean": 20.0}, "config": train_cfg.resolved().to_dict()}
    (folder / DONE_FILE).write_text(json.dumps(record))
    _point_system_file(folder, train_cfg)

    class FakeTuner:
        def __init__(self, trainable, **kwargs):
            pass

        def fit(self):  # the draw listed first reused the folder the second trained, waiting for its lock
            return [types.SimpleNamespace(config=params, metrics={"reused": reused}, error=None)
                    for reused in (True, False)]

    _no_ray(monkeypatch)
    monkeypatch.setattr(tune, "Tuner", FakeTuner)
    [trial] = run_sweep(config, verbose=0, plots=False).trials
    assert trial["draws"] == 2 and trial["reused"] is False


def test_trials_are_listed_by_their_options_whatever_order_ray_returns_them_in(tmp_path, monkeypatch):
    """Tune returns trials in the order they finished; the summary lists them by their varied options, in the config's
    order of options, numbers by value (seed 2 before seed 10, which text order would reverse)."""
    pytest.importorskip("ray.tune")
    from ray import tune

    from agents.sweep import run_sweep

    config = {"name": "order", "out": str(tmp_path / "sw"), "train": _fixed({"learning_rate": 0, "seed": 0}),
              "space": {"learning_rate": [0.01, 0.002], "seed": [10, 2]}}
    finished = [{"learning_rate": lr, "seed": seed} for lr, seed in ((0.01, 2), (0.002, 10), (0.01, 10), (0.002, 2))]

    class FakeTuner:
        def __init__(self, trainable, **kwargs):
            pass

        def fit(self):
            return [types.SimpleNamespace(config=c, metrics={}, error=RuntimeError("x")) for c in finished]

    _no_ray(monkeypatch)
    monkeypatch.setattr(tune, "Tuner", FakeTuner)
    result = run_sweep(config, verbose=0, plots=False)
    expected = [{"learning_rate": 0.002, "seed": 2}, {"learning_rate": 0.002, "seed": 10},
                {"learning_rate": 0.01, "seed": 2}, {"learning_rate": 0.01, "seed": 10}]
    assert [t["params"] for t in result.trials] == expected
    summary = json.loads((tmp_path / "sw" / "summary.json").read_text())
    assert [{k: r[k] for k in ("learning_rate", "seed")} for r in summary["trials"]] == expected
    with open(tmp_path / "sw" / "summary.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["learning_rate"], r["seed"]) for r in rows] == [("0.002", "2"), ("0.002", "10"), ("0.01", "2"),
                                                               ("0.01", "10")]


def test_plots_draw_the_ranking_metric(tmp_path, monkeypatch):
    """An audit found final.png always drew each trial's `mean` in its own point system, so with `metric:
    mean_american` an English-trained agent's bar (7.3 English points) stood beside an American one's 14.45."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.axes import Axes

    cfg = SweepConfig.from_dict({"name": "m", "out": str(tmp_path / "m"), "train": _fixed({"scoring": 0}),
                                 "metric": "mean_american", "space": {"scoring": ["american", "english"],
                                                                      "seed": [0]}})
    (tmp_path / "m").mkdir()
    trials = []
    for system, mean, american in (("american", 14.45, 14.45), ("english", 7.3, 13.45)):
        folder = tmp_path / system
        folder.mkdir()
        (folder / "curve.csv").write_text("step,seconds,episodes,train_score,eval_score,eval_american,eval_english\n"
                                          f"100,1.0,4,,{mean},{american},5.0\n")
        trials.append({"params": {"scoring": system, "seed": 0}, "folder": str(folder), "status": "done",
                       "metrics": {"mean": mean, "mean_american": american}})
    bars, lines, labels = [], [], []
    real_bar, real_plot, real_ylabel, real_xlabel = Axes.barh, Axes.plot, Axes.set_ylabel, Axes.set_xlabel
    monkeypatch.setattr(Axes, "barh", lambda self, y, w, **kw: (bars.append(w), real_bar(self, y, w, **kw))[1])
    monkeypatch.setattr(Axes, "plot", lambda self, x, y, **kw: (lines.append(list(y)), real_plot(self, x, y, **kw))[1])
    monkeypatch.setattr(Axes, "set_ylabel", lambda self, t, **kw: (labels.append(t), real_ylabel(self, t, **kw))[1])
    monkeypatch.setattr(Axes, "set_xlabel", lambda self, t, **kw: (labels.append(t), real_xlabel(self, t, **kw))[1]
                        if "dots" in t else real_xlabel(self, t, **kw))
    SweepResult(cfg, trials).plot()
    assert bars == [pytest.approx(14.45), pytest.approx(13.45)] and lines == [[14.45], [13.45]]
    assert labels == ["evaluation score, American", "mean_american (dots: trials)"]


def test_the_curves_legend_sits_below_the_axes_over_no_curve(tmp_path, monkeypatch):
    """Before, curves.png's legend lay on the axes: a sweep of nine configurations (nine legend entries) covered
    the curves it labels.  The legend now sits below the axes, and the figure grows to hold it."""
    pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rates, clips = [0.0003, 0.001, 0.003], [0.0, 0.01, 0.05]
    cfg = SweepConfig.from_dict({"name": "grid", "out": str(tmp_path / "grid"), "train": _fixed({"scoring": 0}),
                                 "space": {"learning_rate": rates, "ent_coef": clips, "seed": [0]}})
    (tmp_path / "grid").mkdir()
    trials = []
    for i, (lr, clip) in enumerate((lr, clip) for lr in rates for clip in clips):
        folder = tmp_path / f"t{i}"
        folder.mkdir()
        (folder / "curve.csv").write_text("step,seconds,episodes,train_score,eval_score,eval_american,eval_english\n"
                                          + "".join(f"{s},1.0,4,,{100 + i + s / 100},,\n" for s in (100, 200, 300)))
        trials.append({"params": {"learning_rate": lr, "ent_coef": clip, "seed": 0}, "folder": str(folder),
                       "status": "done", "metrics": {"mean": 100.0 + i}})
    saved = {}
    real_save = Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda self, path, **kw: (saved.__setitem__(Path(path).name, self),
                                                                     real_save(self, path, **kw))[1])
    SweepResult(cfg, trials).plot()
    assert len(legend_below_the_axes(saved["curves.png"]).get_texts()) == 9
    # final.png: the nine configurations' labels, tilted below the bars, ran into each other; one row each now
    fig = saved["final.png"]
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    boxes = [t.get_window_extent(canvas.get_renderer()) for t in fig.axes[0].get_yticklabels()]
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()][0] == "learning_rate=0.0003, ent_coef=0"  # on top
    assert len(boxes) == 9 and not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    assert all(fig.bbox.x0 - 1 <= b.x0 and b.y0 >= fig.bbox.y0 - 1 and b.y1 <= fig.bbox.y1 + 1 for b in boxes)
    assert boxes[0].y0 > boxes[-1].y1  # the first configuration on top, as in summary.md


# --------------------------------------------------------------------------- the sweep folder


def _no_ray_start(monkeypatch):
    """Fail the test if the sweep gets as far as starting Ray: the folder checks come first."""
    import agents.distributed

    def no_ray(*args, **kwargs):
        raise AssertionError("Ray started before the sweep folder was checked")

    monkeypatch.setattr(agents.distributed, "import_ray", no_ray)
    monkeypatch.setattr(agents.distributed, "ensure_ray", no_ray)


def _sweep_file(tmp_path, **extra):
    path = tmp_path / "sweep_config.json"
    path.write_text(json.dumps({"name": "t", "train": _fixed({"seed": 0}), "space": {"seed": [0]}, **extra}))
    return path


def _files(folder):
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_sweep_refuses_a_folder_no_sweep_wrote_before_ray_starts(tmp_path, monkeypatch, capsys):
    """Before, ``sweep --out DIR`` wrote summary.md (over the user's own summary.md), sweep.json, trials/ and tune/
    into any folder; evaluate and every experiment refuse a folder they did not write."""
    from pokersquares_env.cli import main

    _no_ray_start(monkeypatch)
    mine = tmp_path / "mine"
    (mine / "sub").mkdir(parents=True)
    (mine / "user.txt").write_text("hi\n")
    (mine / "summary.md").write_text("my notes\n")
    before = _files(mine)
    config = _sweep_file(tmp_path)
    assert main(["sweep", str(config), "--quiet", "--no-plots", "--cpus", "1", "--out", str(mine)]) == 2
    assert capsys.readouterr().err == (
        f"pokersquares sweep: --out {str(mine)!r} is not a sweep's folder (no sweep.json of a sweep; it holds sub/, "
        f"summary.md, user.txt): expected a new or empty folder, or the folder of an earlier sweep (its summary is "
        f"replaced, its finished trials reused); choose another folder\n")
    assert _files(mine) == before and sorted(p.name for p in mine.iterdir()) == ["sub", "summary.md", "user.txt"]
    # the config's own out is named as such; more than five entries: the first five and a count
    for i in range(5):
        (mine / f"n{i}.txt").write_text("x")
    before = _files(mine)
    assert main(["sweep", str(_sweep_file(tmp_path, out=str(mine))), "--quiet", "--cpus", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"pokersquares sweep: out={str(mine)!r} is not a sweep's folder (no sweep.json of a sweep; "
                          f"it holds n0.txt, n1.txt, n2.txt, n3.txt, n4.txt and 3 more)") and err.count("\n") == 1, err
    # a sweep.json that is not a sweep's record (here: a list) makes no sweep folder either
    (mine / "sweep.json").write_text("[1, 2]")
    assert main(["sweep", str(config), "--quiet", "--cpus", "1", "--out", str(mine)]) == 2
    assert "(its sweep.json is not a sweep's record; it holds n0.txt" in capsys.readouterr().err
    assert _files(mine) == {**before, mine / "sweep.json": b"[1, 2]"}


def test_sweep_takes_a_new_or_empty_folder_and_its_own_again(tmp_path, monkeypatch):
    """A new folder, an empty one and an earlier sweep's (its sweep.json; the files it wrote, trials and someone's
    notes beside them) pass the check, and run_sweep gets as far as Ray Tune's Tuner."""
    pytest.importorskip("ray.tune")
    from agents.sweep import check_sweep_root, run_sweep

    check_sweep_root(tmp_path / "new")
    (tmp_path / "empty").mkdir()
    check_sweep_root(tmp_path / "empty", name="--out")
    _capture_tuner(monkeypatch)
    config = {"name": "t", "out": str(tmp_path / "sw"), "train": _fixed({"seed": 0}), "space": {"seed": [0]}}
    with pytest.raises(_Stop):
        run_sweep(config, verbose=0)  # a new folder: sweep.json written before the Tuner
    own = tmp_path / "sw"
    for name in ("summary.md", "summary.csv", "summary.json", "notes.txt"):
        (own / name).write_text("x")
    (own / "trials" / "seed=0-abc").mkdir(parents=True)
    with pytest.raises(_Stop):
        run_sweep({**config, "name": "renamed"}, verbose=0)  # another sweep's config into it: still a sweep's folder
    assert json.loads((own / "sweep.json").read_text())["name"] == "renamed"


def test_sweep_refuses_an_empty_out(tmp_path, monkeypatch, capsys):
    """Before, ``--out ''`` was taken for no --out: the sweep wrote the config's folder (runs/sweeps/<name>)."""
    from agents.sweep import load_sweep
    from pokersquares_env.cli import main

    _no_ray_start(monkeypatch)
    config = _sweep_file(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert main(["sweep", str(config), "--quiet", "--cpus", "1", "--out", ""]) == 2
    assert capsys.readouterr().err == ("pokersquares sweep: --out '': expected a folder path (an empty one names no "
                                       "folder; '.' is the current folder)\n")
    assert list(work.iterdir()) == []
    with pytest.raises(ValueError, match=re.escape("out='': expected a folder path")):
        load_sweep(config, out="")


# --------------------------------------------------------------------------- random draws that repeat a trial


def test_draws_repeating_a_trials_options_are_one_trial_in_the_summary(tmp_path, monkeypatch, capsys):
    """Discrete random draws can repeat: {choice: [1, 2]} with 4 samples drew update_epochs=2 three times, and the
    summary listed that one run folder three times, counting it thrice in the means over seeds."""
    pytest.importorskip("ray.tune")
    from ray import tune

    from agents.sweep import run_sweep

    config = {"name": "rep", "out": str(tmp_path / "sw"), "train": _fixed({"update_epochs": 0, "seed": 0}),
              "space": {"update_epochs": {"choice": [1, 2]}, "seed": [0]}, "samples": 4}
    cfg = SweepConfig.from_dict(config)
    draws = [{"update_epochs": e, "seed": 0} for e in (2, 1, 2, 2)]
    Path(cfg.out).mkdir(parents=True)
    (Path(cfg.out) / "sweep.json").write_text(json.dumps(cfg.to_dict()))  # an earlier run of this sweep
    for epochs in (1, 2):  # each distinct trial finished, as run_trial leaves it
        params = {"update_epochs": epochs, "seed": 0}
        folder = trial_folder(cfg, params)
        folder.mkdir(parents=True)
        from agents.sweep import _trial_config

        train_cfg = _trial_config(cfg, params)
        train_cfg.save(folder / "config.json")
        record = {"status": "done", "params": params, "metrics": {"mean": 10.0 * epochs},
                  "config": train_cfg.resolved().to_dict()}
        (folder / DONE_FILE).write_text(json.dumps(record))
        _point_system_file(folder, train_cfg)

    class FakeTuner:
        def __init__(self, trainable, **kwargs):
            pass

        def fit(self):
            return [types.SimpleNamespace(config=d, metrics={"reused": True}, error=None) for d in draws]

    _no_ray(monkeypatch)
    monkeypatch.setattr(tune, "Tuner", FakeTuner)
    result = run_sweep(config, verbose=0, plots=False)
    assert sorted(t["params"]["update_epochs"] for t in result.trials) == [1, 2]
    assert {t["params"]["update_epochs"]: t.get("draws", 1) for t in result.trials} == {1: 1, 2: 3}
    assert {r["update_epochs"]: r["draws"] for r in result.rows()} == {1: 1, 2: 3}  # summary.json's rows too
    summary = json.loads((Path(cfg.out) / "summary.json").read_text())
    assert sorted(r["draws"] for r in summary["trials"]) == [1, 3]
    assert "2 random draw(s) repeated the options of another trial" in capsys.readouterr().err
    assert [g["trials"] for g in result.groups()] == [1, 1]


def test_trials_of_one_run_folder_take_turns(tmp_path):
    """Two trials with the same options (and so one run folder) used to train it at once, both with overwrite=True:
    the second now waits for the first, then reuses its finished run."""
    import threading
    import time

    from agents.sweep import _folder_lock

    folder = tmp_path / "trials" / "epochs=2"
    entered = threading.Event()

    def second():
        with _folder_lock(folder):
            entered.set()

    with _folder_lock(folder):
        worker = threading.Thread(target=second)
        worker.start()
        time.sleep(0.3)
        assert not entered.is_set()  # held by the first
    worker.join(timeout=10)
    assert entered.is_set()
    with _folder_lock(tmp_path / "trials" / "epochs=1"):  # another folder's lock is another lock
        with _folder_lock(tmp_path / "trials" / "epochs=3"):
            pass


def test_a_dqn_budget_too_short_to_learn_is_refused_before_ray_starts():
    """Before, `train: {algo: dqn, timesteps: 800}` passed validation and every trial failed inside Ray after 40 s
    (exit 1), advising the CLI flags --learning-starts and --timesteps, which a sweep config does not have."""
    with pytest.raises(ValueError, match=r"trial \{'seed': 0\}: learning_starts=.*raise timesteps to at least "
                                         r"[\d,]+ or lower learning_starts, under train: or space:"):
        SweepConfig.from_dict({"name": "d", "train": {"algo": "dqn", "timesteps": 800}, "space": {"seed": [0, 1]}})
    SweepConfig.from_dict({"name": "d", "train": {"algo": "dqn", "timesteps": 800, "learning_starts": 100},
                           "space": {"seed": [0, 1]}})  # learns after 100 steps: accepted



def test_the_means_over_seeds_and_the_best_trial_are_the_right_figures(tmp_path):
    """The spread over seeds is the sample standard deviation (n - 1), "best" is the highest metric, and a trial's
    eval_score is its curve's last evaluation (an audit changed each unseen)."""
    from agents.sweep import _last_eval

    cfg = SweepConfig.from_dict({"name": "s", "out": str(tmp_path / "s"), "train": FAST,
                                 "space": {"reward_mode": ["line", "terminal"], "seed": [0, 1]}})

    def trial(mode, seed, mean):
        return {"params": {"reward_mode": mode, "seed": seed}, "folder": str(Path(tmp_path, f"{mode}{seed}")),
                "status": "done", "metrics": {"mean": mean}}

    result = SweepResult(cfg, [trial("line", 0, 1.0), trial("line", 1, 3.0), trial("terminal", 0, 2.0),
                               trial("terminal", 1, 2.5)])
    line = next(g for g in result.groups() if g["reward_mode"] == "line")
    assert line["mean"] == 2.0 and line["mean_seed_std"] == pytest.approx(2 ** 0.5)
    best = result.best()
    assert (best["reward_mode"], best["seed"], best["mean"]) == ("line", 1, 3.0)
    folder = tmp_path / "curve"
    folder.mkdir()
    (folder / "curve.csv").write_text("step,eval_score\n100,1.0\n200,\n300,5.0\n400,\n")
    assert _last_eval(folder) == 5.0


@pytest.mark.parametrize(("options", "message"), [
    ({"name": "a/b"}, "name='a/b': expected letters, digits, '_', '.' or '-'"),
    ({"space": None}, "space=None: expected a mapping of option -> values"),
    ({"train": ["algo"]}, "train=['algo']: expected a mapping of TrainConfig options"),
    ({"train": {"learning_rat": 0.1}}, "train: unknown training option(s) ['learning_rat']"),
    ({"space": {"out": ["a", "b"]}}, "space: 'out' cannot vary (each trial gets its own run folder)"),
    ({"space": {"progress": [True, False]}}, "space: 'progress' cannot vary"),
    ({"space": {}}, "space is empty: expected at least one varied option"),
    ({"samples": 0}, "samples=0: expected a positive integer"),
    ({"samples": True}, "samples=True: expected a positive integer"),
    ({"search_seed": -1}, "search_seed=-1: expected an integer >= 0"),
    ({"search_seed": True}, "search_seed=True: expected an integer >= 0"),
    ({"max_concurrent": 0}, "max_concurrent=0: expected a positive integer or null"),
    ({"max_concurrent": True}, "max_concurrent=True: expected a positive integer or null"),
    ({"metric": "seconds"}, "metric='seconds': expected one of ['mean', 'mean_american', 'mean_english', 'win_rate', "
                            "'eval_score']"),
])
def test_bad_sweep_options_are_named(options, message):
    """Each bad top-level option is refused, naming the option, its value and what was expected."""
    with pytest.raises(ValueError, match=re.escape(message)):
        SweepConfig.from_dict({"name": "b", "train": _fixed({"seed": 0}), "space": {"seed": [0]}, **options})
    SweepConfig.from_dict({"name": "b", "train": _fixed({"seed": 0}), "space": {"seed": [0]}, "samples": 1,
                           "search_seed": 0, "max_concurrent": 1})  # the good values pass


def test_every_combination_and_every_value_of_a_large_space_is_checked():
    """A bad value is named even when it is bad only in combination with another varied value (neither the first),
    and, in a space of more than 1000 combinations, when it is bad whatever the others are."""
    space = {"num_steps": [25, 10], "num_envs": [4, 2], "seed": [0]}  # 10 steps x 2 envs = 20 < minibatch 40
    with pytest.raises(ValueError, match=re.escape("trial {'num_steps': 10, 'num_envs': 2, 'seed': 0}: "
                                                   "minibatch_size=40: expected at most num_envs * num_steps = 20")):
        SweepConfig.from_dict({"name": "c", "train": {**_fixed(space), "minibatch_size": 40}, "space": space})
    space = {"learning_rate": [0.001, -1.0], "seed": list(range(1000))}
    with pytest.raises(ValueError, match=re.escape("learning_rate=-1.0: expected a positive number")):
        SweepConfig.from_dict({"name": "c", "train": _fixed(space), "space": space})


def test_a_grid_mapping_is_a_grid_and_an_empty_grid_is_refused(tmp_path, monkeypatch):
    """``{grid: [...]}`` is the same as a list: every value is a trial (Tune's grid search), and with no random
    dimension more than one sample is refused; an empty list is named, not an IndexError."""
    space = {"seed": {"grid": [0, 1, 2]}}
    cfg = SweepConfig.from_dict({"name": "g", "train": _fixed(space), "space": space})
    assert [d["seed"] for d in _draws(tmp_path, monkeypatch, space, samples=1)] == [0, 1, 2]
    with pytest.raises(ValueError, match=re.escape("samples=2: the space has no random dimension")):
        SweepConfig.from_dict({**cfg.to_dict(), "samples": 2})
    with pytest.raises(ValueError, match=re.escape("space: seed: an empty list: expected at least one value")):
        SweepConfig.from_dict({"name": "g", "train": _fixed(space), "space": {"seed": []}})



@pytest.mark.parametrize(("key", "spec", "message"), [
    ("ent_coef", {"uniform": [0.0, 0.01], "choice": [0.0]},
     "ent_coef={'uniform': [0.0, 0.01], 'choice': [0.0]}: expected a list of values (grid) or one of {choice: ..., "
     "uniform: ..., loguniform: ..., randint: ..., grid: ...}"),
    ("ent_coef", {"choice": []}, "space: ent_coef: choice=[]: expected a non-empty list"),
    ("ent_coef", {"uniform": [0.0, 0.005, 0.01]},
     "space: ent_coef: uniform=[0.0, 0.005, 0.01]: expected [low, high] of finite numbers with low < high"),
    ("ent_coef", {"uniform": [0.01, 0.01]}, "uniform=[0.01, 0.01]: expected [low, high] of finite numbers with low < "
                                            "high"),
    ("update_epochs", {"randint": [1.5, 4]},
     "space: update_epochs: randint=[1.5, 4]: expected [low, high] of finite numbers with low < high (integers)"),
])
def test_bad_random_dimensions_are_named(key, spec, message):
    """A malformed dimension is named with what was expected, not met by a Python error while its values are
    checked."""
    with pytest.raises(ValueError, match=re.escape(message)):
        SweepConfig.from_dict({"name": "r", "train": _fixed({key: 0}), "space": {key: spec, "seed": [0]}})


def test_a_wide_randint_excludes_its_high():
    """randint's high is excluded, in a wide range (its ends and a spread checked) as in a narrow one: seeds up to
    2**32 - 1 pass, and the value just past the highest one is named when it is in range."""
    SweepConfig.from_dict({"name": "w", "train": {"algo": "fast-ppo"}, "space": {"seed": {"randint": [0, 2 ** 32]}},
                           "samples": 2})
    with pytest.raises(ValueError, match=re.escape("seed=4294967296: expected an integer 0..4294967295")):
        SweepConfig.from_dict({"name": "w", "train": {"algo": "fast-ppo"},
                               "space": {"seed": {"randint": [0, 2 ** 32 + 1]}}, "samples": 2})


def test_a_wide_randint_checks_256_values_spread_evenly_with_both_ends():
    """What the docs say validation tries of a randint wider than 256: 256 values in all, from low to high - 1."""
    from agents.sweep import RANDINT_CHECK_ALL, _check_values

    values = _check_values({"randint": [0, 100_000]})
    assert len(values) == RANDINT_CHECK_ALL == 256 and values == sorted(set(values))
    gaps = [b - a for a, b in zip(values, values[1:])]
    assert values[0] == 0 and values[-1] == 99_999 and max(gaps) <= -(-99_999 // 255)
    assert _check_values({"randint": [3, 3 + 256]}) == list(range(3, 259))  # up to 256: every integer


def test_an_out_emptied_after_the_config_was_made_is_refused():
    """An empty ``out`` given to the config means the default folder; one emptied afterwards (then run) is named."""
    cfg = SweepConfig.from_dict({"name": "e", "out": "", "train": _fixed({"seed": 0}), "space": {"seed": [0]}})
    assert cfg.out == str(Path("runs", "sweeps", "e"))
    cfg.out = ""
    with pytest.raises(ValueError, match=re.escape("out='': expected a folder path (text)")):
        cfg.validate()


def test_load_sweep_finds_a_point_system_file_beside_the_config(tmp_path, monkeypatch):
    """A point-system file named relative to the sweep config's folder is found there (whatever the current folder)
    and made absolute, as each trial runs in a folder of its own."""
    from agents.sweep import load_sweep
    from pokersquares_env.scoring import point_system

    (tmp_path / "cfg").mkdir()
    (tmp_path / "work").mkdir()
    (tmp_path / "cfg" / "pts.json").write_text(json.dumps(point_system("english").to_json()))
    path = tmp_path / "cfg" / "s.json"
    path.write_text(json.dumps({"train": {**_fixed({"seed": 0}), "scoring": "pts.json"}, "space": {"seed": [0]}}))
    monkeypatch.chdir(tmp_path / "work")
    cfg = load_sweep(path)
    assert cfg.train["scoring"] == str(tmp_path / "cfg" / "pts.json") and cfg.name == "s"


def test_a_moved_sweep_folder_reuses_its_finished_trials(tmp_path, monkeypatch):
    """A finished trial's record names the run folder it was written in; the sweep folder moved (or spelled another
    way) trains the same config, so its trials are reused, not trained again."""
    import agents.train

    sweep = SweepConfig(name="t", out=str(tmp_path / "sw"), train=FAST, space={"seed": [0]}).to_dict()
    _stale_record(tmp_path, sweep)  # this very config's record
    (tmp_path / "sw").rename(tmp_path / "moved")

    def fake_train(cfg, **kwargs):
        raise RuntimeError("trained again")

    monkeypatch.setattr(agents.train, "train", fake_train)
    assert run_trial({"seed": 0}, {**sweep, "out": str(tmp_path / "moved")}) == {"mean": 123.0, "reused": True}


def test_trial_folders_show_four_digits_and_plain_values_of_numpy_draws():
    """A float is shown with 4 significant digits; Tune's numpy draws name the same folder (and parameters) as the
    plain values."""
    import numpy as np

    from agents.sweep import trial_params

    cfg = SweepConfig(name="t", out="o", space={"learning_rate": {"uniform": [0.001, 0.002]}, "seed": [0, 1]})
    assert trial_folder(cfg, {"learning_rate": 0.0012344, "seed": 1}).name.startswith("learning_rate=0.001234,seed=1-")
    drawn = {"learning_rate": np.float64(0.0012344), "seed": np.int64(1)}
    assert trial_folder(cfg, drawn) == trial_folder(cfg, {"learning_rate": 0.0012344, "seed": 1})
    params = trial_params(cfg, drawn)
    assert params == {"learning_rate": 0.0012344, "seed": 1} and type(params["seed"]) is int


def test_the_summary_writes_a_missing_figure_as_null_or_n_a(tmp_path):
    """summary.json is strict JSON: a figure that is not a number (one seed's spread, a metric not measured) is
    null, not NaN, which JSON does not have; summary.md prints a figure it cannot compute as n/a, as the evaluation
    summaries do (it left the cell empty before 2026-12-05), and leaves a metric the trial does not have empty;
    summary.csv names each trial's run folder."""
    cfg = SweepConfig.from_dict({"name": "n", "out": str(tmp_path / "n"), "train": FAST, "space": {"seed": [0]}})
    trial = {"params": {"seed": 0}, "folder": str(tmp_path / "t0"), "status": "done",
             "metrics": {"mean": 2.0, "win_rate": math.nan}}
    SweepResult(cfg, [trial]).save(plots=False)

    def no_nan(name):
        raise ValueError(f"{name} in summary.json")

    summary = json.loads((tmp_path / "n" / "summary.json").read_text(), parse_constant=no_nan)
    assert summary["trials"][0]["win_rate"] is None and summary["groups"][0]["mean_seed_std"] is None
    assert summary["groups"][0]["mean"] == 2.0
    md = (tmp_path / "n" / "summary.md").read_text()
    assert "nan" not in md.lower()
    header, _, row = md.splitlines()[2:5]
    cells = dict(zip(header.strip("|").split("|"), row.strip("|").split("|"), strict=True))
    cells = {k.strip(): v.strip() for k, v in cells.items()}
    assert cells["mean"] == "2" and cells["win_rate"] == "n/a" and cells["ci95"] == ""  # NaN / not given
    assert "(ranked by mean)" in md and md.count("n/a") >= 2  # the seed spread of one seed, too
    with open(tmp_path / "n" / "summary.csv", newline="") as f:
        [row] = list(csv.DictReader(f))
    assert row["folder"] == str(tmp_path / "t0") and row["mean"] == "2.0"



def test_a_figure_a_finished_trial_stored_as_null_is_n_a_in_the_summary(tmp_path):
    """sweep_trial.json stores a NaN metric as null (strict JSON), and the summary is rebuilt from it: before, the one
    final-evaluation game's ci95 and the eval_score of a run without evaluations were blank cells (a metric the trial
    does not have) instead of n/a and nan (a figure that cannot be computed), as docs/scaling.md says."""
    cfg = SweepConfig.from_dict({"name": "n", "out": str(tmp_path / "n"), "train": FAST, "space": {"seed": [0, 1]}})
    stored = {"mean": 8.0, "ci95": None, "eval_score": None, "win_rate": 0.0}  # as _run_trial's record holds them
    trials = [{"params": {"seed": 0}, "folder": str(tmp_path / "t0"), "status": "done", "metrics": stored},
              {"params": {"seed": 1}, "folder": str(tmp_path / "t1"), "status": "error", "metrics": {}}]
    SweepResult(cfg, trials).save(plots=False)
    md = (tmp_path / "n" / "summary.md").read_text()
    header, _, done, failed = md.splitlines()[2:6]
    names = [c.strip() for c in header.strip("|").split("|")]
    done_cells = dict(zip(names, (c.strip() for c in done.strip("|").split("|")), strict=True))
    failed_cells = dict(zip(names, (c.strip() for c in failed.strip("|").split("|")), strict=True))
    assert (done_cells["mean"], done_cells["ci95"], done_cells["eval_score"]) == ("8", "n/a", "n/a")
    assert done_cells["mean_english"] == ""  # not in the record at all: a metric the trial does not have
    assert (failed_cells["mean"], failed_cells["ci95"]) == ("", "")  # a failed trial has no figures
    with open(tmp_path / "n" / "summary.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert (rows[0]["ci95"], rows[0]["eval_score"], rows[1]["ci95"]) == ("nan", "nan", "")
    summary = json.loads((tmp_path / "n" / "summary.json").read_text())
    assert summary["trials"][0]["ci95"] is None and summary["trials"][1]["ci95"] is None


def test_plots_skip_the_curve_rows_without_an_evaluation(tmp_path):
    """curve.csv has a row per logged step, its evaluation cells empty between evaluations: curves.png draws the
    evaluated steps only."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    cfg = SweepConfig.from_dict({"name": "c", "out": str(tmp_path / "c"), "train": FAST, "space": {"seed": [0]}})
    folder = tmp_path / "t0"
    folder.mkdir()
    (folder / "curve.csv").write_text("step,train_score,eval_score\n100,1.0,\n200,2.0,5.0\n300,3.0,\n")
    trial = {"params": {"seed": 0}, "folder": str(folder), "status": "done", "metrics": {"mean": 5.0}}
    paths = SweepResult(cfg, [trial]).save()
    assert [Path(p).name for p in paths] == ["summary.md", "summary.csv", "summary.json", "curves.png", "final.png"]
    assert all(Path(p).stat().st_size > 0 for p in paths)


@pytest.mark.parametrize("record", [{"name": "x"}, {"name": "x", "out": "o", "train": {}, "space": {}, "notes": 1}])
def test_a_sweep_json_that_is_not_a_sweep_config_makes_no_sweep_folder(tmp_path, record):
    """Only a sweep's own record (its config: name, out, train and space, and no other keys) makes a folder a
    sweep's; another JSON object called sweep.json does not."""
    from agents.sweep import check_sweep_root

    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "sweep.json").write_text(json.dumps(record))
    (folder / "user.txt").write_text("mine")
    with pytest.raises(ValueError, match=re.escape(f"out={str(folder)!r} is not a sweep's folder (its sweep.json is "
                                                   f"not a sweep's record; it holds user.txt)")):
        check_sweep_root(folder)
    (folder / "sweep.json").write_text(json.dumps({k: record.get(k, {}) for k in ("name", "out", "train", "space")}))
    check_sweep_root(folder)  # a sweep's record: its folder


def test_run_sweep_passes_max_concurrent_and_leaves_a_cluster_its_cpus(tmp_path, monkeypatch):
    """max_concurrent reaches Tune; with $RAY_ADDRESS (a cluster, whose nodes may be larger) cpus_per_trial is not
    checked against this machine's --cpus."""
    pytest.importorskip("ray.tune")
    from agents.sweep import run_sweep

    captured = _capture_tuner(monkeypatch)
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")
    with pytest.raises(_Stop):
        run_sweep({"name": "c", "out": str(tmp_path / "sw"), "train": _fixed({"seed": 0}), "space": {"seed": [0, 1]},
                   "max_concurrent": 3, "cpus_per_trial": 8}, cpus=1, verbose=0)
    assert captured["tune_config"].max_concurrent_trials == 3


def test_run_sweep_gives_back_the_callers_ctrl_c_handler(tmp_path, monkeypatch):
    """Tune installs its own SIGINT handler and leaves it behind: the sweep restores the caller's."""
    import signal

    pytest.importorskip("ray.tune")
    from ray import tune

    from agents.sweep import run_sweep

    class TunerTakingCtrlC:
        def __init__(self, trainable, **kwargs):
            pass

        def fit(self):
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            return []

    def mine(signum, frame):
        pass

    _no_ray(monkeypatch)
    monkeypatch.setattr(tune, "Tuner", TunerTakingCtrlC)
    previous = signal.signal(signal.SIGINT, mine)
    try:
        result = run_sweep({"name": "s", "out": str(tmp_path / "sw"), "train": _fixed({"seed": 0}),
                            "space": {"seed": [0]}}, verbose=0, plots=False)
        assert signal.getsignal(signal.SIGINT) is mine and result.trials == []
    finally:
        signal.signal(signal.SIGINT, previous)


def test_the_sweep_command_exits_1_naming_a_failed_trial(tmp_path, monkeypatch, capsys):
    """``pokersquares sweep`` returns 1 when some trial failed (0 only when every trial finished), and names it."""
    pytest.importorskip("ray.tune")
    from ray import tune

    from pokersquares_env.cli import main

    class FailedTuner:
        def __init__(self, trainable, **kwargs):
            pass

        def fit(self):
            return [types.SimpleNamespace(config={"seed": 0}, metrics={}, error=RuntimeError("boom\ntrial crashed"))]

    _no_ray(monkeypatch)
    monkeypatch.setattr(tune, "Tuner", FailedTuner)
    out = tmp_path / "sw"
    assert main(["sweep", str(_sweep_file(tmp_path)), "--quiet", "--no-plots", "--cpus", "1", "--out", str(out)]) == 1
    captured = capsys.readouterr()
    assert "1 trials (0 reused from finished run folders, 1 failed)" in captured.out
    assert re.search(r"failed: seed=0-[0-9a-f]{8}: trial crashed\n", captured.err), captured.err


# --------------------------------------------------------------------------- what run_sweep hands Ray, what a trial records


def test_run_sweep_checks_a_sweep_config_object_before_ray_starts(tmp_path, monkeypatch):
    """A SweepConfig built in code (not through from_dict, which checks it) is checked by run_sweep: a bad space is
    named before Ray starts and before the sweep folder is made, not by every trial failing inside Ray."""
    from agents.sweep import run_sweep

    _no_ray_start(monkeypatch)
    cfg = SweepConfig(name="v", out=str(tmp_path / "sw"), train=_fixed({"seed": 0}), space={"seed": [0, 0]})
    with pytest.raises(ValueError, match=re.escape("space: seed: value 0 given more than once")):
        run_sweep(cfg, verbose=0)
    assert not (tmp_path / "sw").exists()


def test_run_sweep_gives_ray_its_cpus_and_tune_the_sweeps_name_and_folder(tmp_path, monkeypatch):
    """The embedded Ray gets ``--cpus``, each trial reserves ``cpus_per_trial`` CPUs, and Tune's own records go to
    ``<out>/tune/`` under the sweep's name (beside, not over, trials/ and the summary)."""
    pytest.importorskip("ray.tune")
    from ray import tune

    import agents.distributed
    from agents.sweep import run_sweep

    captured = _capture_tuner(monkeypatch)
    started, reserved = [], []
    monkeypatch.setattr(agents.distributed, "ensure_ray",
                        lambda address, cpus, what: started.append((address, cpus)) or True)
    real = tune.with_resources
    monkeypatch.setattr(tune, "with_resources",
                        lambda trainable, resources: (reserved.append(resources), real(trainable, resources))[1])
    with pytest.raises(_Stop):
        run_sweep({"name": "hand", "out": str(tmp_path / "sw"), "train": _fixed({"seed": 0}), "space": {"seed": [0, 1]},
                   "cpus_per_trial": 2}, cpus=3, verbose=0)
    assert started == [(None, 3)]  # (address, CPUs of the embedded Ray)
    assert reserved == [{"cpu": 2}]
    run_config = captured["run_config"]
    assert run_config.name == "hand"
    assert Path(run_config.storage_path) == (tmp_path / "sw" / "tune").resolve()


def test_run_sweep_makes_point_system_files_of_a_random_dimension_absolute(tmp_path, monkeypatch):
    """``{choice: [...]}`` and ``{grid: [...]}`` of point-system files are made absolute like a list of them: each
    trial runs in a folder of its own, where a relative path names no file."""
    pytest.importorskip("ray.tune")

    from agents.sweep import run_sweep
    from pokersquares_env.scoring import point_system

    (tmp_path / "pts2.json").write_text(json.dumps(point_system("english").to_json()))
    monkeypatch.chdir(tmp_path)
    _capture_tuner(monkeypatch)
    for kind, extra in (("choice", {"seed": [0]}), ("grid", {})):
        with pytest.raises(_Stop):
            run_sweep({"name": "p", "out": "sw", "train": _fixed({"seed": 0}),
                       "space": {"scoring": {kind: ["american", "pts2.json"]}, **extra}}, verbose=0)
        assert json.loads((tmp_path / "sw" / "sweep.json").read_text())["space"]["scoring"] == \
            {kind: ["american", str(tmp_path / "pts2.json")]}


def test_a_trained_trial_reports_and_records_every_figure_of_its_final_evaluation(tmp_path, monkeypatch):
    """Every figure of the final evaluation (each a summary column, and mean_american/mean_english/win_rate ones a
    sweep may rank by) and the curve's last evaluation reach Tune and the trial's record, which a later run reuses."""
    import agents.train

    sweep = SweepConfig(name="t", out=str(tmp_path / "sw"), train=FAST, space={"seed": [0]}).to_dict()
    folder = trial_folder(SweepConfig(**sweep), {"seed": 0})
    row = {"mean": 14.5, "ci95": 0.5, "mean_american": 14.5, "mean_english": 7.25, "win_rate": 0.25}

    def fake_train(cfg, **kwargs):
        out = Path(cfg.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "curve.csv").write_text("step,eval_score\n100,3.0\n200,4.5\n")
        (out / "progress.json").write_text(json.dumps({"steps": 200, "seconds": 1.5, "episodes": 8}))
        _point_system_file(out, cfg)
        # the call's own time counts its final evaluation too: the trial reports the training clock instead
        return types.SimpleNamespace(interrupted=False, steps=200, seconds=2.5, evaluation=[row])

    monkeypatch.setattr(agents.train, "train", fake_train)
    metrics = run_trial({"seed": 0}, sweep)
    expected = {**row, "eval_score": 4.5, "steps": 200, "seconds": 1.5}
    assert {k: metrics.get(k) for k in expected} == expected and metrics["reused"] is False
    record = json.loads((folder / DONE_FILE).read_text())
    assert record["status"] == "done" and record["params"] == {"seed": 0}
    assert {k: record["metrics"].get(k) for k in expected} == expected

    def no_train(cfg, **kwargs):
        raise AssertionError("a finished trial trained again")

    monkeypatch.setattr(agents.train, "train", no_train)
    again = run_trial({"seed": 0}, sweep)
    assert {k: again.get(k) for k in expected} == expected and again["reused"] is True


def test_a_trials_seconds_are_its_runs_training_seconds_fresh_or_resumed(tmp_path):
    """The summary's ``seconds`` of a trial is its run's training clock, the ``seconds`` of the trial folder's
    ``progress.json`` (and curve.csv), as the experiments report it: not the whole ``train()`` call with the final
    evaluation, and, for a trial resumed from its checkpoint, with the sessions before the resume."""
    pytest.importorskip("torch")
    train = {**FAST, "checkpoint_every": 100}
    sweep = SweepConfig(name="t", out=str(tmp_path / "sw"), train=train, space={"seed": [0]}).to_dict()
    folder = trial_folder(SweepConfig(**sweep), {"seed": 0})
    metrics = run_trial({"seed": 0}, sweep)
    progress = json.loads((folder / "progress.json").read_text())
    assert metrics["seconds"] == pytest.approx(progress["seconds"], rel=1e-6)
    # the trial's record lost (as docs/scaling.md's timing run did): the trial resumes from checkpoints/latest
    (folder / DONE_FILE).unlink()
    again = run_trial({"seed": 0}, sweep)
    record = json.loads((folder / DONE_FILE).read_text())
    assert record["resumed"] is True
    progress = json.loads((folder / "progress.json").read_text())
    assert again["steps"] == progress["steps"] == 200
    assert again["seconds"] == pytest.approx(progress["seconds"], rel=1e-6)
    assert record["metrics"]["seconds"] == pytest.approx(progress["seconds"], rel=1e-6)


@pytest.mark.parametrize(("text", "reader"), [
    ("step,eval_score\n100,abc\n", "_last_eval"),
    ("step,eval_score\n100,abc\n", "_curve"),
    ("eval_score\n1.0\n", "_curve"),
])
def test_a_damaged_curve_file_of_a_trial_is_named(tmp_path, text, reader):
    """A finished trial's curve.csv damaged (a value that is no number, a column missing) is read back for the
    summary and the plots of a resumed sweep: an audit found a bare "could not convert string to float: 'abc'"
    (or KeyError: 'step') naming neither the file nor what was expected."""
    import agents.sweep

    (tmp_path / "curve.csv").write_text(text)
    with pytest.raises(ValueError, match=r"curve\.csv"):
        getattr(agents.sweep, reader)(tmp_path)


class _Killed(BaseException):
    """Stands for SIGKILL (or Ctrl-C's KeyboardInterrupt): nothing after it runs."""


def test_a_sweep_killed_while_it_rewrites_its_sweep_json_is_still_taken_as_its_own_folder(tmp_path, monkeypatch):
    """Every run of a sweep (the way to resume one) rewrites sweep.json in place (Path.write_text) before its
    trials.  A kill (or Ctrl-C) in that write leaves it empty or cut short, and the next run refuses the sweep's
    own folder, trials and all: "is not a sweep's folder (its sweep.json is not a sweep's record ...): choose
    another folder" -- the finished trials are then never reused."""
    pytest.importorskip("ray.tune")
    from pathlib import Path

    from agents.sweep import SWEEP_FILE, run_sweep

    _capture_tuner(monkeypatch)
    config = {"name": "t", "out": str(tmp_path / "sw"), "train": _fixed({"seed": 0}), "space": {"seed": [0]}}
    with pytest.raises(_Stop):
        run_sweep(config, verbose=0)  # the first run: sweep.json written, then its trials
    own = tmp_path / "sw"
    (own / "trials" / "seed=0-abc").mkdir(parents=True)
    (own / "trials" / "seed=0-abc" / "sweep_trial.json").write_text('{"status": "done", "metrics": {}}\n')

    real_write_text = Path.write_text

    def killed_mid_write(self, data, *args, **kwargs):
        if self.name.startswith(SWEEP_FILE):  # sweep.json, or the temporary file it is written through
            real_write_text(self, data[: len(data) // 3], *args, **kwargs)  # what the kill leaves of it
            raise _Killed
        return real_write_text(self, data, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", killed_mid_write)
    with pytest.raises(_Killed):
        run_sweep(config, verbose=0)  # run again (to resume it), killed while it rewrites sweep.json
    monkeypatch.setattr(Path, "write_text", real_write_text)
    with pytest.raises(_Stop):  # the next run must still take its own folder (and reuse its trials)
        run_sweep(config, verbose=0)


def test_a_folder_holding_only_the_temporary_sweep_json_of_a_killed_first_run_is_taken(tmp_path):
    from agents.sweep import SWEEP_FILE, check_sweep_root

    (tmp_path / (SWEEP_FILE + ".tmp")).write_text('{"name": ')  # the first run killed while writing sweep.json
    check_sweep_root(tmp_path)
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match=r"is not a sweep's folder \(no sweep\.json of a sweep; it holds notes\.txt\)"):
        check_sweep_root(tmp_path)


@pytest.mark.parametrize("data, message", [
    ({"name": "k", "space": {"seed": [0]}, 5: 1, "foo": 2}, r"sweep config: unknown key\(s\) \[5, 'foo'\]"),
    ({"name": "k", "space": {"seed": [0], "a": [1], 3: [2]}},
     r"sweep config: space: unknown training option\(s\) \[3, 'a'\]"),
    ({"name": "k", "space": {"seed": [0]}, "train": {"timesteps": 100, 7: 1, "zz": 2}},
     r"sweep config: train: unknown training option\(s\) \[7, 'zz'\]"),
])
def test_a_sweep_config_with_keys_that_are_not_text_names_them(data, message):
    """YAML reads ``5: 1`` with the key 5; before, sorting it with the text keys raised "'<' not supported between
    instances of 'int' and 'str'", naming neither the section nor the key."""
    with pytest.raises(ValueError, match=message):
        SweepConfig.from_dict(data)


def test_a_trial_folder_of_the_same_options_listed_in_another_order_is_the_trials(tmp_path):
    """Before, swapping two keys of ``space`` renamed every trial folder (``seed=0,reward_mode=line-1c416950`` beside
    ``reward_mode=line,seed=0-1c416950``: the same hash) and trained every finished trial again."""
    out = str(tmp_path / "s")
    first = SweepConfig.from_dict({"name": "s", "out": out, "train": FAST,
                                   "space": {"reward_mode": ["line", "terminal"], "seed": [0]}})
    swapped = SweepConfig.from_dict({"name": "s", "out": out, "train": FAST,
                                     "space": {"seed": [0], "reward_mode": ["line", "terminal"]}})
    line = {"reward_mode": "line", "seed": 0}
    assert trial_folder(swapped, line).name.startswith("seed=0,reward_mode=line-")  # nothing trained yet: its own
    folder = trial_folder(first, line)
    assert folder.name.startswith("reward_mode=line,seed=0-")
    folder.mkdir(parents=True)
    assert trial_folder(swapped, line) == folder == trial_folder(swapped, {"seed": 0, "reward_mode": "line"})
    terminal = {"reward_mode": "terminal", "seed": 0}
    assert trial_folder(swapped, terminal).name.startswith("seed=0,reward_mode=terminal-")  # another trial's hash
