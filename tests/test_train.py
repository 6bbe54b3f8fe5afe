"""Training: configs round-trip and are validated up front; each algorithm trains, saves, resumes and plays legally."""

from __future__ import annotations

import json
import math
import os
import re
import signal
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("torch")

from agents.config import ALGOS, ConfigError, TrainConfig  # noqa: E402
from agents.train import train  # noqa: E402

# tiny budgets: every run below takes a few seconds
TINY = {
    "fast-ppo": dict(hidden=[16, 16], num_envs=16, num_steps=26, minibatch_size=208, update_epochs=1, timesteps=1248),
    "dqn": dict(hidden=[16, 16], num_envs=16, learning_starts=400, minibatch_size=64, timesteps=1600),
    "maskable-ppo": dict(hidden=[16, 16], num_envs=2, num_steps=128, minibatch_size=64, update_epochs=1, timesteps=512),
}
COMMON = dict(eval_every=0, checkpoint_every=0, final_eval_games=0, progress=False, seed=3)


def _cfg(algo: str, out, **over) -> TrainConfig:
    return TrainConfig(algo=algo, out=str(out), **{**COMMON, **TINY[algo], **over})


# ---------------------------------------------------------------------------- config
configs = st.builds(
    TrainConfig,
    algo=st.sampled_from(sorted(ALGOS)),
    scoring=st.sampled_from(["american", "english"]),
    jokers=st.integers(0, 2),
    placement=st.sampled_from(["free", "adjacent"]),
    first_cell=st.sampled_from([None, "center", "top-left", 7]),
    reward_mode=st.sampled_from(["line", "terminal"]),
    reward_scale=st.one_of(st.just("normalized"), st.floats(0.01, 10)),
    timesteps=st.integers(1, 10**7),
    seed=st.integers(0, 2**31),
    hidden=st.one_of(st.none(), st.lists(st.integers(1, 512), min_size=1, max_size=3)),
    learning_rate=st.one_of(st.none(), st.floats(1e-6, 1e-1)),
    anneal_lr=st.booleans(),
    time_limit=st.floats(0, 1e5),
    anneal_by=st.sampled_from(["first", "steps"]),
)


@settings(max_examples=25, deadline=None)
@given(cfg=configs, yaml_file=st.booleans())
def test_config_round_trips_through_json_and_yaml(cfg, yaml_file, tmp_path_factory):
    path = tmp_path_factory.mktemp("cfg") / ("c.yaml" if yaml_file else "c.json")
    cfg.save(path)
    assert TrainConfig.load(path) == cfg
    assert TrainConfig.from_dict(json.loads(json.dumps(cfg.to_dict()))) == cfg


def test_resolved_fills_algorithm_defaults_and_keeps_choices():
    cfg = TrainConfig(algo="fast-ppo", learning_rate=0.123).resolved()
    assert cfg.learning_rate == 0.123 and cfg.net == "lines" and cfg.num_envs > 1 and cfg.hidden
    assert TrainConfig(algo="maskable-ppo").resolved().net == "mlp"


@pytest.mark.parametrize(
    "field,value,needle",
    [
        ("algo", "a2c", "algo='a2c'"),
        ("scoring", "klondike", "scoring='klondike'"),
        ("jokers", 3, "jokers=3"),
        ("placement", "diagonal", "placement='diagonal'"),
        ("first_cell", 99, "first_cell=99"),
        ("reward_mode", "dense", "reward_mode='dense'"),
        ("reward_scale", -1.0, "reward_scale=-1.0"),
        ("shaping", "magic", "shaping='magic'"),
        ("timesteps", 0, "timesteps=0"),
        ("learning_rate", -0.1, "learning_rate=-0.1"),
        ("hidden", [64, 0], "hidden=[64, 0]"),
        ("gamma", 1.5, "gamma=1.5"),
        ("net", "transformer", "net='transformer'"),
        ("vectorization", "gpu", "vectorization='gpu'"),
        ("time_limit", -5, "time_limit=-5"),
        ("anneal_by", "wall", "anneal_by='wall'"),
        ("minibatch_size", 10**9, "minibatch_size=1000000000"),
    ],
)
def test_bad_values_fail_before_training_starts(tmp_path, field, value, needle):
    out = tmp_path / "run"
    with pytest.raises(ConfigError) as err:
        train(TrainConfig(**{"algo": "fast-ppo", "out": str(out), field: value}))
    assert needle in str(err.value)
    assert str(err.value).count(needle) == 1  # named once, not 'first_cell=99: first_cell=99: ...'
    assert not out.exists()  # nothing was created: the check came first


@pytest.mark.parametrize(
    "over",
    [
        dict(gamma=1.0), dict(gamma=1e-6), dict(gae_lambda=0.0), dict(gae_lambda=1.0), dict(ent_coef=0.0),
        dict(learning_starts=0), dict(eval_every=0, checkpoint_every=0, final_eval_games=0), dict(eval_games=1),
        dict(num_envs=4, num_steps=5, minibatch_size=20),  # a minibatch may be the whole rollout
        dict(epsilon_start=0.0, epsilon_end=1.0, target_tau=1.0, exploration_fraction=0.0), dict(time_limit=0),
        dict(torch_threads=256), dict(num_envs=2**20, num_steps=1, minibatch_size=2**20), dict(hidden=[2**16] * 64),
    ],
)
def test_boundary_values_are_accepted(over):
    TrainConfig(algo="fast-ppo", **over).resolved()


@pytest.mark.parametrize(
    "over,needle",
    [
        (dict(gamma=0.0), "gamma=0.0: expected a number in (0, 1]"),
        (dict(gae_lambda=-0.01), "gae_lambda=-0.01"),
        (dict(gae_lambda=1.01), "gae_lambda=1.01"),
        (dict(ent_coef=-0.001), "ent_coef=-0.001"),
        (dict(learning_starts=-1), "learning_starts=-1"),
        (dict(eval_games=0), "eval_games=0: expected an integer 1..100000000"),
        (dict(num_envs=4, num_steps=5, minibatch_size=21), "minibatch_size=21: expected at most num_envs * num_steps = 20"),
        (dict(target_tau=1.5), "target_tau=1.5"),
        (dict(seed=2**32), "seed=4294967296: expected an integer 0..4294967295"),  # SB3 would fail mid-setup
        # sanity bounds: before, torch failed inside the run ("Overflow when unpacking long") or the thread library
        # crashed the process (--torch-threads 100000), after the run folder was made
        (dict(torch_threads=257), "torch_threads=257: expected an integer 1..256"),
        (dict(num_envs=2**20 + 1), "num_envs=1048577: expected an integer 1..1048576"),
        (dict(num_steps=2**20 + 1), "num_steps=1048577: expected an integer 1..1048576"),
        (dict(hidden=[2**16 + 1]), "hidden=[65537]: expected at most 64 layers of at most 65536 units each"),
        (dict(hidden=[8] * 65), "expected at most 64 layers"),
        (dict(buffer_size=2**30 + 1), "buffer_size=1073741825: expected an integer 1..1073741824"),
        (dict(buffer_size=0), "buffer_size=0: expected an integer 1..1073741824"),
        # dqn's exploration: before these were tested, an epsilon above 1 or a negative fraction could pass unseen
        (dict(exploration_fraction=1.01), "exploration_fraction=1.01: expected a number in [0, 1]"),
        (dict(exploration_fraction=-0.01), "exploration_fraction=-0.01: expected a number in [0, 1]"),
        (dict(epsilon_start=-0.01), "epsilon_start=-0.01: expected a number in [0, 1]"),
        (dict(epsilon_end=1.01), "epsilon_end=1.01: expected a number in [0, 1]"),
        # a true/false where a number or a flag belongs (e.g. `timesteps: true` in a config file)
        (dict(timesteps=True), "timesteps=True: expected an integer 1..4611686018427387904"),
        (dict(learning_starts=True), "learning_starts=True: expected an integer >= 0"),
        (dict(progress="no"), "progress='no': expected true or false"),
        # an empty out would train into the current folder; an empty or boolean layer list, a gradient clip of 0 and
        # a final evaluation past the harness's bound are named too
        (dict(out=""), "out='': expected a folder path"),
        (dict(hidden=[]), "hidden=[]: expected a non-empty list of positive layer sizes"),
        (dict(hidden=[True, 8]), "hidden=[True, 8]: expected a non-empty list of positive layer sizes"),
        (dict(max_grad_norm=0.0), "max_grad_norm=0.0: expected a positive number"),
        (dict(final_eval_games=10**8 + 1), "final_eval_games=100000001: expected an integer 0..100000000"),
        (dict(anneal_lr="yes"), "anneal_lr='yes': expected true or false"),
    ],
)
def test_values_just_past_a_bound_are_refused(over, needle):
    with pytest.raises(ConfigError) as err:
        TrainConfig(algo="fast-ppo", **over).resolved()
    assert needle in str(err.value)


@pytest.mark.parametrize(
    "over,needle",
    [
        (dict(num_envs=1, num_steps=9, minibatch_size=8), "leaves a last minibatch of one sample"),
        (dict(num_envs=2, num_steps=8, minibatch_size=1), "every minibatch is one sample"),
        (dict(num_envs=1, num_steps=257), "minibatch_size=256 with num_envs=1, num_steps=257"),  # a default minibatch
    ],
)
def test_maskable_ppo_one_sample_minibatches_are_refused(tmp_path, over, needle):
    """Before, SB3 kept a one-sample last minibatch (or every minibatch was one sample) and sb3-contrib normalised its
    advantages by a std of one value: the weights became NaN, or the run raised a raw ValueError mid-training."""
    out = tmp_path / "run"
    with pytest.raises(ConfigError) as err:
        train(TrainConfig(algo="maskable-ppo", out=str(out), timesteps=64, progress=False, **over))
    assert needle in str(err.value) and "minibatch_size=" in str(err.value) and "num_steps=" in str(err.value)
    assert not out.exists()
    for fine in (dict(num_envs=1, num_steps=10, minibatch_size=8), dict(num_envs=2, num_steps=8, minibatch_size=2),
                 dict(num_envs=2, num_steps=8, minibatch_size=16)):
        TrainConfig(algo="maskable-ppo", **fine).resolved()  # a last minibatch of 2 or more samples, or none


def test_maskable_ppo_minibatches_larger_than_the_rollout_are_refused():
    with pytest.raises(ConfigError, match=re.escape("minibatch_size=17: expected at most num_envs * num_steps = 16")):
        TrainConfig(algo="maskable-ppo", num_envs=2, num_steps=8, minibatch_size=17).resolved()


def test_a_config_with_tuple_layers_saves_as_yaml_and_json_and_loads_as_a_list(tmp_path):
    assert TrainConfig(hidden=(8, 8)).to_dict()["hidden"] == [8, 8]  # a plain dict: the list JSON writes
    for name in ("c.yaml", "c.json"):
        path = TrainConfig(algo="dqn", hidden=(8, 8)).save(tmp_path / name)
        assert TrainConfig.load(path).hidden == [8, 8]


def test_whole_numbers_in_float_notation_are_integers_for_every_integer_option():
    """Options whose default is None (num_envs, num_steps, minibatch_size, update_epochs) take 64.0 as 64 too."""
    cfg = TrainConfig.from_dict({"algo": "fast-ppo", "num_envs": 64.0, "num_steps": 5.0, "minibatch_size": 32.0,
                                 "update_epochs": 2.0, "timesteps": 1e3})
    assert (cfg.num_envs, cfg.num_steps, cfg.minibatch_size, cfg.update_epochs, cfg.timesteps) == (64, 5, 32, 2, 1000)
    assert all(type(v) is int for v in (cfg.num_envs, cfg.num_steps, cfg.minibatch_size, cfg.update_epochs))
    cfg.resolved()


@pytest.mark.parametrize("algo,reward_mode", [("dqn", "line"), ("maskable-ppo", "line"), ("fast-ppo", "terminal"),
                                              ("dqn", "terminal")])
def test_other_trainers_train_on_shaped_rewards(tmp_path, monkeypatch, algo, reward_mode):
    """DQN and MaskablePPO shape too: the run trains, saves and its config records the shaping."""
    import agents.shaping

    calls = []
    real = agents.shaping.LinePotential.__call__
    monkeypatch.setattr(agents.shaping.LinePotential, "__call__", lambda self, obs: calls.append(1) or real(self, obs))
    result = train(_cfg(algo, tmp_path / "run", shaping="heuristic", reward_mode=reward_mode))
    assert os.path.exists(result.model_path) and len(calls) >= 20
    assert json.load(open(tmp_path / "run" / "config.json"))["shaping"] == "heuristic"


def test_shaped_fast_ppo_trains_and_learns_from_the_potential(tmp_path, monkeypatch):
    """A shaped run trains and saves; its rewards are the env's plus gamma * phi(s') - phi(s)."""
    from agents import fast_ppo

    seen = []
    real = fast_ppo.shaped_rewards

    def spy(rewards, phi, phi_next, gamma, valid, terminal=None):
        out = real(rewards, phi, phi_next, gamma, valid, terminal)
        seen.append((np.asarray(rewards).copy(), np.asarray(out).copy(), np.asarray(valid).copy()))
        return out

    monkeypatch.setattr(fast_ppo, "shaped_rewards", spy)
    result = train(_cfg("fast-ppo", tmp_path / "run", shaping="heuristic"))
    assert os.path.exists(result.model_path)
    assert len(seen) >= 26
    shaped_steps = [(r, o) for r, o, v in seen if v.all()]
    assert any(not np.allclose(r, o) for r, o in shaped_steps)  # the potential changed some rewards
    assert json.load(open(tmp_path / "run" / "config.json"))["shaping"] == "heuristic"


@pytest.mark.parametrize("algo", ["fast-ppo", "dqn", "maskable-ppo"])
def test_the_shaped_rewards_are_what_the_learner_learns_from(tmp_path, monkeypatch, algo):
    """A review found the shaping tests satisfied by a trainer that computed the shaped rewards and then threw them
    away (only the spy's output, or the potential's calls, were checked).  Here the shaped rewards are shifted by a
    constant in one run and not in the other: the weights must differ, so what the learner stores is the output."""
    import torch

    from agents import dqn, fast_ppo, shaping

    module = {"fast-ppo": fast_ppo, "dqn": dqn, "maskable-ppo": shaping}[algo]  # SB3's: the shaping VecEnv wrapper
    real = module.shaped_rewards

    def weights(name, shift):
        monkeypatch.setattr(module, "shaped_rewards", lambda *a, **k: np.asarray(real(*a, **k)) + shift)
        train(_cfg(algo, tmp_path / name, shaping="heuristic"))
        if algo == "maskable-ppo":
            from sb3_contrib import MaskablePPO

            return MaskablePPO.load(tmp_path / name / "model.zip", device="cpu").policy.state_dict()
        return torch.load(tmp_path / name / "model.pt", map_location="cpu", weights_only=False)["state_dict"]

    plain, shifted, again = weights("a", 0.0), weights("b", 5.0), weights("c", 0.0)
    keys = [k for k, v in plain.items() if isinstance(v, torch.Tensor)]
    assert keys and all(torch.equal(plain[k], again[k]) for k in keys)  # the same run twice: the same weights
    assert not all(torch.equal(plain[k], shifted[k]) for k in keys)  # the shift reached the learner


def test_unknown_config_keys_and_bad_files_are_named(tmp_path):
    with pytest.raises(ConfigError, match="learn_rate"):
        TrainConfig.from_dict({"learn_rate": 1e-3})
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ConfigError, match="bad.json' could not be parsed as JSON"):
        TrainConfig.load(bad)
    yaml_in_txt = tmp_path / "my.txt"
    yaml_in_txt.write_text("algo: dqn\n")
    with pytest.raises(ConfigError, match=r"my.txt' could not be parsed as JSON \(a .yaml or .yml name is read as YAML\)"):
        TrainConfig.load(yaml_in_txt)
    with pytest.raises(ConfigError, match="missing.yaml' does not exist"):
        TrainConfig.load(tmp_path / "missing.yaml")
    (tmp_path / "folder.json").mkdir()
    with pytest.raises(ConfigError, match="folder.json' is not a file"):
        TrainConfig.load(tmp_path / "folder.json")
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"algo": "\xff"}')
    with pytest.raises(ConfigError, match="latin.json' cannot be read"):
        TrainConfig.load(latin)
    with pytest.raises(ConfigError, match="hidden='64': expected a non-empty list"):
        TrainConfig(hidden="64").resolved()


def test_cli_reports_bad_values_and_prints_resolved_config(tmp_path, capsys):
    from pokersquares_env.cli import main

    out = tmp_path / "run"
    assert main(["train", "--algo", "fast-ppo", "--reward-scale", "-2", "--out", str(out)]) == 2
    assert "reward_scale=-2.0" in capsys.readouterr().err and not out.exists()
    assert main(["train", "--algo", "fast-ppo", "--reward-scale", "normalised", "--out", str(out)]) == 2
    assert capsys.readouterr().err == ("pokersquares train: --reward-scale 'normalised': expected a positive number or "
                                       "'normalized'\n") and not out.exists()  # an option named as the others are
    cfg_file = tmp_path / "c.yaml"
    TrainConfig(algo="dqn", timesteps=777).save(cfg_file)
    assert main(["train", "--config", str(cfg_file), "--seed", "9", "--print-config"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["algo"] == "dqn" and printed["timesteps"] == 777 and printed["seed"] == 9
    assert printed["learning_rate"] is not None  # resolved


def test_cli_takes_normalized_none_and_no_progress_as_documented(capsys):
    from pokersquares_env.cli import main

    assert main(["train", "--reward-scale", "normalized", "--first-cell", "None", "--no-progress",
                 "--print-config"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert (printed["reward_scale"], printed["first_cell"], printed["progress"]) == ("normalized", None, False)


def test_train_names_a_config_of_the_wrong_type_and_planned_steps_are_whole_dqn_iterations(tmp_path):
    from agents.train import planned_steps

    with pytest.raises(ConfigError, match=r"^config=5: expected a TrainConfig, a dict or None$"):
        train(5)
    # dqn steps in iterations of num_envs, whatever its num_steps (the iterations between training rounds)
    cfg = TrainConfig(algo="dqn", num_envs=16, num_steps=4, timesteps=100).resolved()
    assert planned_steps(cfg) == 112 and planned_steps(cfg, 16) == 16
    # a config not resolved yet (sizes None: the algorithm's defaults) is resolved first (it was a TypeError,
    # None * None); fast-ppo's default update is 256 envs x 50 steps
    assert planned_steps(TrainConfig(algo="fast-ppo", timesteps=2000)) == 12800
    assert planned_steps(TrainConfig(algo="dqn", timesteps=100, num_envs=16)) == 112


def test_cli_rules_spec_sits_over_the_config_file_under_the_single_flags(tmp_path, capsys):
    from pokersquares_env.cli import main

    cfg_file = tmp_path / "c.json"
    TrainConfig(jokers=1, placement="free").save(cfg_file)

    def printed(*args):
        assert main(["train", "--config", str(cfg_file), *args, "--print-config"]) == 0
        return json.loads(capsys.readouterr().out)

    got = printed("--rules", "jokers=2,first-cell=center")
    assert (got["jokers"], got["placement"], got["first_cell"]) == (2, "free", 12)  # placement from the file
    got = printed("--rules", "jokers=2", "--placement", "adjacent")
    assert (got["jokers"], got["placement"]) == (2, "adjacent")
    assert printed()["jokers"] == 1
    assert main(["train", "--rules", "jokers=2", "--jokers", "1", "--print-config"]) == 2
    assert "jokers=1 contradicts rules 'jokers=2'" in capsys.readouterr().err
    assert main(["train", "--rules", "jokers=2,speed=9", "--print-config"]) == 2
    assert "unknown rule option(s) ['speed']" in capsys.readouterr().err


# ------------------------------------------------------------------------- training
@pytest.mark.parametrize("algo", sorted(ALGOS))
def test_each_algorithm_trains_saves_and_plays_only_legal_cells(tmp_path, algo):
    from agents.evaluation import evaluate
    from agents.registry import make_agent
    from agents.train import AGENT_PREFIX
    from pokersquares_env.core import PokerSquaresGame, Rules

    rules = dict(jokers=1, placement="adjacent") if algo == "fast-ppo" else {}
    out = tmp_path / algo
    result = train(_cfg(algo, out, eval_every=TINY[algo]["timesteps"] // 2, eval_games=4, **rules))
    assert not result.interrupted and result.steps >= TINY[algo]["timesteps"] // 2
    for name in ("config.json", "curve.csv", "progress.json"):
        assert (out / name).is_file(), name
    assert os.path.isfile(result.model_path) and any((out / "tb").iterdir())
    assert TrainConfig.load(out / "config.json").algo == algo
    header, *rows = (out / "curve.csv").read_text().splitlines()
    assert header.startswith("step,seconds,episodes") and rows
    assert any(r.split(",")[4] for r in rows)  # an evaluation row

    spec = f"{AGENT_PREFIX[algo]}:{out}"
    agent = make_agent(spec, rules=rules)
    game = PokerSquaresGame(Rules(**rules))
    rng = np.random.default_rng(0)
    for _ in range(3):
        state = game.init(game.deal(rng))
        agent.reset()
        from pokersquares_env.env import encode_observation, mask_array

        while not state.terminal:
            mask = game.legal_mask(state)
            cell = agent.act(encode_observation(game, state), {"action_mask": mask_array(mask)}, game, state)
            assert mask >> cell & 1, f"{spec} picked illegal cell {cell}"
            game.apply(state, cell)
    res = evaluate([spec], games=4, seed=1, rules=rules, progress=False)
    assert res.summary[0]["errors"] == 0 and res.summary[0]["games"] == 4


@pytest.mark.parametrize("algo", ["fast-ppo", "maskable-ppo"])
def test_resume_continues_from_the_latest_checkpoint(tmp_path, algo):
    out = tmp_path / "run"
    first = train(_cfg(algo, out, checkpoint_every=1))
    done = json.loads((out / "progress.json").read_text())["steps"]
    assert done == first.steps > 0 and (out / "checkpoints").iterdir()
    more = TINY[algo]["timesteps"] * 2
    second = train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=more)
    assert second.steps >= more - TINY[algo].get("num_envs", 1) * TINY[algo].get("num_steps", 1)
    assert second.steps > first.steps
    assert TrainConfig.load(out / "config.json").timesteps == more
    steps = [int(r.split(",")[0]) for r in (out / "curve.csv").read_text().splitlines()[1:]]
    assert steps == sorted(steps) and steps[-1] > first.steps  # the curve goes on where it stopped


def test_resume_without_a_run_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="resume"):
        train(TrainConfig(out=str(tmp_path / "nothing")), resume=True)


def test_resume_of_a_copied_run_stays_in_the_copy(tmp_path):
    import shutil

    first = tmp_path / "run"
    train(_cfg("fast-ppo", first, checkpoint_every=1))
    copy = tmp_path / "copy"
    shutil.copytree(first, copy)
    before = {p.name: p.read_bytes() for p in first.rglob("*") if p.is_file()}
    result = train(TrainConfig(out=str(copy), progress=False), resume=True, timesteps=TINY["fast-ppo"]["timesteps"] * 2)
    assert Path(result.out) == copy and TrainConfig.load(copy / "config.json").out == str(copy)
    assert {p.name: p.read_bytes() for p in first.rglob("*") if p.is_file()} == before  # the original is untouched


@pytest.mark.parametrize("damage", ["{", "[1, 2]", '{"steps": "many"}', '{"seconds": -1}',
                                    '{"steps": 5, "recent": [1, "x"]}', '{"steps": 5, "recent": 3}',
                                    '{"steps": 5, "seconds": Infinity}',
                                    '{"steps": 5, "last_ckpt_step": 9}', '{"steps": 5, "recent": [true]}'])
def test_resume_with_a_damaged_progress_file_is_refused_before_writing(tmp_path, damage):
    out = tmp_path / "run"
    train(_cfg("fast-ppo", out, checkpoint_every=1))
    (out / "progress.json").write_text(damage)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    with pytest.raises(ConfigError, match="progress.json"):
        train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=10**6)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("damage, named", [
    (lambda text: text.replace("step,", "stp,", 1), r"header \['stp'"),
    (lambda text: "", r"header 'missing'"),
    (lambda text: text + "12,3.0\n", r"row \d+: '12,3.0': expected 7 fields"),
    (lambda text: text + "x,1,2,,,,\n", r"row \d+: 'x,1,2,,,,'"),
    (lambda text: text + "5,1,2,abc,,,\n", r"row \d+: '5,1,2,abc,,,'"),
    (lambda text: text + "5,1,2,inf,,,\n", r"row \d+: '5,1,2,inf,,,'"),
])
def test_resume_onto_a_damaged_curve_is_refused_before_writing(tmp_path, damage, named):
    """Before, a resumed run appended its rows to a damaged curve.csv without a word (the sweep then failed on it)."""
    out = tmp_path / "run"
    train(_cfg("fast-ppo", out, checkpoint_every=1))
    curve = out / "curve.csv"
    curve.write_text(damage(curve.read_text()))
    before = _files(out)
    steps = json.loads((out / "progress.json").read_text())["steps"]
    with pytest.raises(ConfigError, match=rf"--resume: '.*curve\.csv': {named}.*the folder is left as it was"):
        train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=steps * 2)
    assert _files(out) == before


@pytest.mark.parametrize("cut", [1, 5])
def test_a_last_curve_row_cut_by_a_kill_is_dropped_by_the_resume(tmp_path, cut):
    """A kill while a row is appended leaves it without its line end (``cut`` characters of it): that row lies past
    the latest checkpoint, so the resume drops it and writes it again, as the run never stopped."""
    straight, out = tmp_path / "straight", tmp_path / "run"
    train(_cfg("fast-ppo", straight, checkpoint_every=1))
    train(_cfg("fast-ppo", out, checkpoint_every=1))
    steps = json.loads((out / "progress.json").read_text())["steps"]
    curve = out / "curve.csv"
    whole = curve.read_text()
    next_row = "9999,1.0,3,50.000,,,\r\n"  # the row of a later step, as the run would have appended it
    curve.write_text(whole + next_row[:cut], newline="")
    train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=steps * 2)
    train(TrainConfig(out=str(straight), progress=False), resume=True, timesteps=steps * 2)

    def rows(path):  # every column but the wall-clock seconds
        return [line.split(",")[:1] + line.split(",")[2:] for line in path.read_text().splitlines()]

    assert rows(curve) == rows(straight / "curve.csv") and curve.read_text().endswith("\n")


def test_resume_onto_a_curve_that_was_removed_starts_a_new_one(tmp_path):
    out = tmp_path / "run"
    train(_cfg("fast-ppo", out, checkpoint_every=1))
    steps = json.loads((out / "progress.json").read_text())["steps"]
    (out / "curve.csv").unlink()
    train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=steps * 2)
    rows = (out / "curve.csv").read_text().splitlines()
    assert rows[0] == "step,seconds,episodes,train_score,eval_score,eval_american,eval_english" and len(rows) >= 2
    assert all(float(row.split(",")[0]) > steps for row in rows[1:])


def _files(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("algo", ["fast-ppo", "dqn"])
def test_a_run_resumes_from_its_end_even_without_a_checkpoint_due(tmp_path, algo):
    """checkpoint_every=0 (or a run shorter than it): the end of the run is still a checkpoint --resume continues."""
    out = tmp_path / "run"
    first = train(_cfg(algo, out))
    assert (out / "checkpoints" / "latest.pt").is_file()
    second = train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=TINY[algo]["timesteps"] * 3)
    assert second.steps > first.steps
    steps = [int(r.split(",")[0]) for r in (out / "curve.csv").read_text().splitlines()[1:]]
    assert steps == sorted(set(steps)) and first.steps in steps  # went on from the end: no step trained twice


def test_dqn_resume_restores_the_replay_buffer_and_learns_at_once(tmp_path, monkeypatch):
    """Before, --resume started dqn with an empty buffer and learned nothing for learning_starts steps."""
    import agents.dqn
    from agents.dqn import BUFFER_FILE, ReplayBuffer
    from pokersquares_env.env import OBS_SIZE

    out = tmp_path / "run"
    first = train(_cfg("dqn", out))
    saved = ReplayBuffer.load(out / "checkpoints" / BUFFER_FILE, TINY["dqn"].get("buffer_size", 200_000), OBS_SIZE)
    assert 0 < saved.size <= first.steps and saved.obs[:saved.size].any()  # the run's own transitions
    old = {name: getattr(saved, name)[:saved.size].copy() for name in ("obs", "action", "reward", "next_mask")}
    sampled_at = []
    original_sample = ReplayBuffer.sample

    def counting(self, n):
        sampled_at.append(self.size)
        return original_sample(self, n)

    monkeypatch.setattr(agents.dqn.ReplayBuffer, "sample", counting)
    N = TINY["dqn"]["num_envs"]
    train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=first.steps + 4 * N)
    assert sampled_at and sampled_at[0] <= saved.size + N  # learned on the first step after the resume
    again = ReplayBuffer.load(out / "checkpoints" / BUFFER_FILE, saved.capacity, OBS_SIZE)
    assert again.size > saved.size
    for name, value in old.items():  # the old transitions are still there, in their places
        np.testing.assert_array_equal(getattr(again, name)[:saved.size], value)

    # a run checkpointed before the buffer was saved resumes with an empty one and refills learning_starts steps
    (out / "checkpoints" / BUFFER_FILE).unlink()
    sampled_at.clear()
    done = json.loads((out / "progress.json").read_text())["steps"]
    train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=done + 4 * N)
    assert not sampled_at  # 4 * N steps < learning_starts=400


def test_replay_buffer_round_trips_and_names_a_damaged_file(tmp_path):
    from agents.dqn import ReplayBuffer

    rng = np.random.default_rng(0)
    buf = ReplayBuffer(10, 6, seed=5)
    for _ in range(3):  # 12 transitions into 10 places: the ring wraps
        buf.add(rng.integers(0, 2, (4, 6)), rng.integers(0, 25, 4), rng.random(4), rng.integers(0, 2, (4, 6)),
                rng.random((4, 25)) < 0.5, rng.random(4) < 0.5)
    path = tmp_path / "b.npz"
    buf.save(path)
    back = ReplayBuffer.load(path, 10, 6)
    assert (back.size, back.pos) == (10, 2)
    for a, b in zip(buf.sample(7), back.sample(7), strict=True):  # same contents, same generator state
        assert a.equal(b)
    with pytest.raises(ValueError, match=r"b.npz' holds capacity 10: expected the replay buffer .*capacity 20"):
        ReplayBuffer.load(path, 20, 6)
    with pytest.raises(ValueError, match=r"holds observations of 6 numbers: .*observations of 7"):
        ReplayBuffer.load(path, 10, 7)
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(ValueError, match="b.npz' cannot be read .*delete it to resume with an empty buffer"):
        ReplayBuffer.load(path, 10, 6)


def test_dqn_resume_with_a_damaged_buffer_is_refused_before_writing(tmp_path):
    from agents.dqn import BUFFER_FILE

    out = tmp_path / "run"
    train(_cfg("dqn", out))
    (out / "checkpoints" / BUFFER_FILE).write_bytes(b"not a zip")
    before = _files(out)
    with pytest.raises(ConfigError, match=f"--resume: .*{BUFFER_FILE}' cannot be read"):
        train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=10**5)
    assert _files(out) == before


def test_a_new_run_refuses_a_folder_holding_a_run_unless_told_to_overwrite(tmp_path):
    out = tmp_path / "run"
    train(_cfg("fast-ppo", out, checkpoint_every=1))
    (out / "notes.txt").write_text("mine")
    before = _files(out)
    with pytest.raises(ConfigError, match="already holds a training run.*--resume.*--overwrite"):
        train(_cfg("fast-ppo", out, scoring="english"))
    assert _files(out) == before  # nothing touched
    train(_cfg("fast-ppo", out, scoring="english"), overwrite=True)
    assert TrainConfig.load(out / "config.json").scoring == "english"
    assert [p.name for p in (out / "checkpoints").iterdir()] == ["latest.pt"]  # the old run's step_N are gone
    assert (out / "notes.txt").read_text() == "mine"  # only the run's own files are replaced


def test_clearing_a_run_removes_its_files_and_owner_marks_and_only_the_links_to_elsewhere(tmp_path):
    """``--overwrite`` clears the old run's files and the demo's or an experiment's mark of it; a run file that is a
    link to a folder elsewhere is removed as a link, the folder it points to is kept."""
    from agents.train import OWNER_MARKS, clear_run

    folder = tmp_path / "run"
    (folder / "checkpoints").mkdir(parents=True)
    (folder / "checkpoints" / "latest.pt").write_bytes(b"x")
    (folder / "config.json").write_text("{}")
    elsewhere = tmp_path / "logs"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("keep")
    (folder / "tb").symlink_to(elsewhere, target_is_directory=True)
    for mark in OWNER_MARKS:
        (folder / mark).write_text("{}")
    (folder / "notes.txt").write_text("mine")
    assert sorted(clear_run(folder)) == sorted(["checkpoints", "config.json", "tb", *OWNER_MARKS])
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]
    assert (elsewhere / "keep.txt").read_text() == "keep"


def test_a_train_result_reads_its_keys_as_attributes_and_has_no_others():
    import copy

    from agents.train import TrainResult

    result = TrainResult(out="runs/x", steps=5)
    assert (result.out, result.steps) == ("runs/x", 5)
    assert not hasattr(result, "evaluation_games") and getattr(result, "missing", None) is None
    assert copy.copy(result) == result


def test_the_final_evaluation_line_prints_no_interval_for_one_game(tmp_path, monkeypatch, capsys):
    """``pokersquares train --final-eval-games 1`` printed "mean 82.00 +- nan"; one game has no interval: n/a."""
    import agents.train as train_module
    from agents.train import TrainResult
    from pokersquares_env.cli import main

    rows = [{"games": 1, "scoring": "american", "mean": 82.0, "ci95": math.nan},
            {"games": 30, "scoring": "english", "mean": 30.5, "ci95": 1.25}]
    monkeypatch.setattr(train_module, "train", lambda cfg, **kw: TrainResult(
        out=cfg.out, model_path=cfg.out + "/model.pt", steps=64, seconds=1.0, interrupted=False, evaluation=rows))
    assert main(["train", "--out", str(tmp_path / "run"), "--final-eval-games", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1:] == ["final evaluation (1 games, american): mean 82.00 +- n/a",
                       "final evaluation (30 games, english): mean 30.50 +- 1.25"]


def test_resume_refuses_options_that_would_change_the_run(tmp_path, capsys):
    from pokersquares_env.cli import main

    out = tmp_path / "run"
    train(_cfg("fast-ppo", out))
    before = _files(out)
    with pytest.raises(ConfigError, match=r"scoring='english' \(stored: 'american'\)"):
        train(TrainConfig(out=str(out), progress=False), resume=True, scoring="english", timesteps=10**4)
    with pytest.raises(ConfigError, match=r"algo='dqn' \(stored: 'fast-ppo'\)"):  # a config's own fields count too
        train(TrainConfig(out=str(out), algo="dqn", progress=False), resume=True)
    assert _files(out) == before
    assert main(["train", "--out", str(out), "--resume", "--hidden", "8", "--no-progress"]) == 2
    assert "hidden=[8] (stored: [16, 16])" in capsys.readouterr().err
    assert main(["train", "--out", str(out), "--resume", "--overwrite"]) == 2
    assert _files(out) == before
    # a budget below the steps already taken would train nothing, yet rewrite config, model and progress: refused
    done = json.loads((out / "progress.json").read_text())["steps"]
    with pytest.raises(ConfigError, match=rf"timesteps=10 is below the {done:,} steps the run in .* already took"):
        train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=10)
    assert main(["train", "--out", str(out), "--resume", "--timesteps", "10", "--no-progress"]) == 2
    assert f"timesteps=10 is below the {done:,} steps" in capsys.readouterr().err
    assert _files(out) == before  # byte for byte
    # a config file counts for the options it sets, resolved as the run stored them (None: the algorithm's default)
    same = tmp_path / "same.yaml"
    same.write_text("algo: fast-ppo\nlearning_rate: null\nhidden: [16, 16]\n")
    steps = str(TINY["fast-ppo"]["timesteps"] * 2)
    assert main(["train", "--out", str(out), "--resume", "--config", str(same), "--timesteps", steps,
                 "--no-progress"]) == 0


def test_training_seeds_are_32_bit_integers_refused_by_the_parser(capsys):
    """One type, one check and one message for both bounds (before: '-1: expected an integer >= 0' from the type, and
    '4294967296: expected an integer >= 0 and <= 4294967295' from a separate argparse action)."""
    import argparse

    from agents.config import MAX_SEED, train_seed_arg
    from pokersquares_env.cli import main

    parser = argparse.ArgumentParser(exit_on_error=False)
    parser.add_argument("--seed", type=train_seed_arg)
    parser.add_argument("--seeds", type=train_seed_arg, nargs="+")
    assert parser.parse_args(["--seed", str(MAX_SEED), "--seeds", "0", "7"]) == argparse.Namespace(
        seed=2**32 - 1, seeds=[0, 7])
    for argv, value in ((["--seed", "4294967296"], "4294967296"), (["--seeds", "0", "4294967296"], "4294967296"),
                        (["--seed", "-1"], "-1"), (["--seeds", "-1"], "-1"), (["--seed", "x"], "'x'")):
        with pytest.raises(argparse.ArgumentError, match=f"{value}: expected an integer from 0 to 4294967295$"):
            parser.parse_args(argv)
    for value in ("4294967296", "-1"):
        with pytest.raises(SystemExit) as exc:
            main(["train", "--seed", value, "--print-config"])
        assert exc.value.code == 2
        assert f"--seed: {value}: expected an integer from 0 to 4294967295\n" in capsys.readouterr().err


@pytest.mark.parametrize(
    "written,needle",
    [
        ({"algo": ["fast-ppo"]}, "algo=['fast-ppo']: expected one of"),
        ({"algo": {"fast-ppo": 1}}, "algo={'fast-ppo': 1}: expected one of"),
        ({"hidden": "64"}, "hidden='64': expected a non-empty list"),  # the string as written, not ['6', '4']
    ],
)
def test_a_config_file_value_of_the_wrong_type_is_named(tmp_path, capsys, written, needle):
    from pokersquares_env.cli import main

    path = tmp_path / "c.json"
    path.write_text(json.dumps(written))
    assert main(["train", "--config", str(path), "--print-config"]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err
    with pytest.raises(ConfigError, match=re.escape(needle)):
        TrainConfig.from_dict(written).resolved()


def test_an_empty_first_cell_is_refused_as_play_and_evaluate_refuse_it(capsys):
    from pokersquares_env.cli import main

    assert main(["train", "--first-cell", "", "--print-config"]) == 2
    assert "first_cell=''" in capsys.readouterr().err
    assert main(["train", "--first-cell", "none", "--print-config"]) == 0  # 'none' still means anywhere
    assert json.loads(capsys.readouterr().out)["first_cell"] is None
    for cell in ("12", "center"):  # a cell number is the number, a name the cell it names (the centre: 12)
        assert main(["train", "--placement", "adjacent", "--first-cell", cell, "--print-config"]) == 0
        assert json.loads(capsys.readouterr().out)["first_cell"] == 12


def test_train_exits_130_when_ctrl_c_stopped_the_run_and_0_when_it_finished(tmp_path, monkeypatch, capsys):
    """As a shell reports SIGINT: an interrupted run (its checkpoint kept) exits 130, a finished one 0 (a mutation
    audit made both 0, unseen)."""
    from types import SimpleNamespace

    import agents.train
    from pokersquares_env.cli import main

    for interrupted, code in ((True, 130), (False, 0)):
        result = SimpleNamespace(out=str(tmp_path), model_path="model.pt", steps=416, seconds=1.0,
                                 interrupted=interrupted, evaluation=None)
        monkeypatch.setattr(agents.train, "train", lambda cfg, **kwargs: result)
        assert main(["train", "--out", str(tmp_path / "run"), "--no-progress"]) == code
        assert ("(interrupted)" in capsys.readouterr().out) is interrupted


def test_a_point_system_file_in_a_config_file_is_found_next_to_it(tmp_path, monkeypatch, capsys):
    from pokersquares_env.cli import main
    from pokersquares_env.scoring import POINT_SYSTEMS

    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "pts.json").write_text(json.dumps({"name": "pts", "points": dict(POINT_SYSTEMS["american"])}))
    (sub / "cfg.json").write_text(json.dumps({"algo": "fast-ppo", "scoring": "pts.json"}))
    monkeypatch.chdir(tmp_path)  # the file is not in the current folder, only next to the config
    assert main(["train", "--config", "sub/cfg.json", "--print-config"]) == 0
    assert json.loads(capsys.readouterr().out)["scoring"] == str((sub / "pts.json").resolve())
    assert main(["train", "--scoring", "pts.json", "--print-config"]) == 2  # a flag is relative to the current folder
    assert "scoring='pts.json'" in capsys.readouterr().err


def test_first_cell_is_stored_in_one_spelling_and_resume_takes_any_of_them():
    from agents.train import _changes

    cfg = TrainConfig(algo="fast-ppo", placement="adjacent", first_cell="center").resolved()
    assert cfg.first_cell == 12 and TrainConfig(algo="fast-ppo", first_cell="anywhere").resolved().first_cell is None
    for same in ("center", "c3", "3c", 12):
        assert not _changes(cfg, "first_cell", same)
    assert _changes(cfg, "first_cell", "top-left") and _changes(cfg, "placement", "free")


def test_resume_with_a_damaged_checkpoint_is_refused_before_writing(tmp_path):
    out = tmp_path / "run"
    train(_cfg("fast-ppo", out))
    (out / "checkpoints" / "latest.pt").write_bytes(b"garbage\n")
    before = _files(out)
    with pytest.raises(ConfigError, match="latest.pt.*cannot be loaded"):
        train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=10**4)
    assert _files(out) == before  # no config.json rewritten, no TensorBoard file added


@pytest.mark.parametrize("algo, damage, needle", [
    ("maskable-ppo", "no policy.pth", r"latest.zip' cannot be loaded"),
    ("fast-ppo", "hidden edited", r"latest.pt': its state_dict does not fit the net='lines', hidden=\[32, 32\]"),
    ("dqn", "target damaged", r"latest.pt': its target does not fit"),
    ("fast-ppo", "optimizer damaged", r"latest.pt': its optimizer does not fit"),
])
def test_a_checkpoint_that_does_not_load_is_refused_before_writing(tmp_path, algo, damage, needle):
    """Before, these passed the check (a zip archive; the keys there) and failed with a raw traceback after
    config.json, point_system.json and the TensorBoard log were written."""
    import zipfile

    import torch

    out = tmp_path / "run"
    train(_cfg(algo, out, final_eval_games=0))
    latest = out / "checkpoints" / ("latest.zip" if algo == "maskable-ppo" else "latest.pt")
    if damage == "no policy.pth":
        with zipfile.ZipFile(latest) as zin:
            kept = {name: zin.read(name) for name in zin.namelist() if name != "policy.pth"}
        with zipfile.ZipFile(latest, "w") as zout:
            for name, data in kept.items():
                zout.writestr(name, data)
    elif damage == "hidden edited":
        stored = json.loads((out / "config.json").read_text())
        (out / "config.json").write_text(json.dumps({**stored, "hidden": [32, 32]}))
    else:
        state = torch.load(latest, weights_only=False)
        key = "target" if damage == "target damaged" else "optimizer"
        state[key] = {"state": {}, "param_groups": []} if key == "optimizer" else {"nothing": torch.zeros(1)}
        torch.save(state, latest)
    before = _files(out)
    with pytest.raises(ConfigError, match=needle):
        train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=10**4)
    assert _files(out) == before  # no config.json, point_system.json or TensorBoard file written


def test_learned_model_loaders_name_a_wrong_or_damaged_model_file(tmp_path):
    from agents.registry import make_agent

    out = tmp_path / "run"
    train(_cfg("fast-ppo", out))
    with pytest.raises(ValueError, match=r"holds a fast-ppo model: load it as fastppo:"):
        make_agent(f"dqn:{out}")
    garbage = tmp_path / "model.pt"
    garbage.write_text("garbage\n")
    with pytest.raises(ValueError, match=r"model.pt' is not a torch model file"):
        make_agent(f"fastppo:{garbage}")
    not_a_zip = tmp_path / "model.zip"
    not_a_zip.write_text("{}")
    with pytest.raises(ValueError, match=r"model.zip' is not a MaskablePPO model"):
        make_agent(f"ppo:{not_a_zip}")


class _Payload:
    """Unpickling this creates the folder ``path``: a stand-in for any code a shared file might run when loaded."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (os.mkdir, (self.path,))


def test_a_model_file_or_checkpoint_holding_code_is_refused_without_running_it(tmp_path, capsys):
    """Before: ``fastppo:``/``dqn:`` loaded with ``weights_only=False``, so a shared model file (or a checkpoint
    given to --resume) ran whatever its pickle called (here it made a folder)."""
    import pickle

    import torch

    from agents.fast_ppo import restore_games
    from agents.registry import make_agent

    out = tmp_path / "run"
    cfg = _cfg("fast-ppo", out, checkpoint_every=TINY["fast-ppo"]["timesteps"] // 2)
    train(cfg)
    ran = tmp_path / "payload_ran"
    model = torch.load(out / "model.pt", weights_only=True)
    evil = tmp_path / "evil.pt"
    torch.save({**model, "extra": _Payload(ran)}, evil)
    for spec in (f"fastppo:{evil}", f"dqn:{evil}"):
        with pytest.raises(ValueError, match=r"evil.pt' is refused: it holds Python objects other than tensors.*"
                                             r"GLOBAL \w+\.mkdir"):
            make_agent(spec)
        assert not ran.exists()
    # --resume: the checkpoint is refused before anything is written
    ckpt = out / "checkpoints" / "latest.pt"
    state = torch.load(ckpt, weights_only=False)
    torch.save({**state, "extra": _Payload(ran)}, ckpt)
    before = _files(out)
    with pytest.raises(ConfigError, match=r"latest.pt' cannot be loaded \(it holds Python objects"):
        train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=10**4)
    assert not ran.exists() and _files(out) == before
    # the pickled games in the checkpoint are only rebuilt from the env's own classes
    games = {**state["games"], "env": pickle.dumps(_Payload(ran))}
    assert restore_games({"games": games}, cfg.resolved(), cfg.num_envs) is None
    assert not ran.exists()
    assert re.search(r"holds games that cannot be read \(UnpicklingError: \w+\.mkdir is not one of the classes",
                     capsys.readouterr().err)


def test_model_files_the_trainers_write_load_with_weights_only(tmp_path):
    """The final model and the checkpoints (numpy arrays of the games in progress) of both torch trainers load
    without ``weights_only=False``."""
    from agents.fast_ppo import load_policy, safe_load

    for algo in ("fast-ppo", "dqn"):
        out = tmp_path / algo
        train(_cfg(algo, out, checkpoint_every=TINY[algo]["timesteps"] // 2))
        load_policy(out / "model.pt")
        state = safe_load(out / "checkpoints" / "latest.pt")
        assert isinstance(state["games"]["obs"], np.ndarray)


def test_a_learned_agent_asked_to_act_on_a_finished_game_says_the_game_is_over(tmp_path):
    """Before: NaN argmax on an all-illegal mask (fastppo, dqn)."""
    from agents.registry import make_agent
    from pokersquares_env.core import PokerSquaresGame

    out = tmp_path / "run"
    train(_cfg("fast-ppo", out))
    agent = make_agent(f"fastppo:{out}")
    game = PokerSquaresGame()
    state = game.init(game.deal(np.random.default_rng(0)))
    for cell in range(25):
        game.apply(state, cell)
    for call in (agent.act, agent.action_values):
        with pytest.raises(ValueError, match=r"the game is over \(25 cards placed\): there is no card to place"):
            call(None, None, game, state)
        with pytest.raises(ValueError, match=r"info\['action_mask'\] marks no legal cell: the game is over"):
            call(np.zeros(522, dtype=np.uint8), {"action_mask": np.zeros(25, dtype=np.int8)})


@pytest.mark.parametrize("change, message", [
    ({"hidden": [8, 8]}, r"its weights do not fit the net='lines', hidden=\[8, 8\] network it records \(RuntimeError: "
                         r"size mismatch"),
    ({"hidden": "abc"}, r"records hidden='abc': expected a non-empty list of positive layer sizes"),
    ({"hidden": []}, r"records hidden=\[\]: expected a non-empty list"),
    ({"net": "cnn"}, r"records net='cnn': expected 'lines' or 'mlp'"),
    ({"net": 3}, r"records net=3: expected 'lines' or 'mlp'"),
    ({"net": "mlp"}, r"do not fit the net='mlp', hidden=\[16, 16\] network it records \(RuntimeError: Missing key"),
    ({"state_dict": {}}, r"do not fit the net='lines', hidden=\[16, 16\] network it records \(RuntimeError: Missing"),
    ({"state_dict": [1, 2]}, r"do not fit .* \(TypeError: state_dict is a list, not a dict of tensors\)"),
])
def test_a_model_file_whose_network_does_not_fit_its_weights_is_named(tmp_path, change, message):
    """Before: only torch.load was checked; a file recording other hidden sizes, another net, an empty state_dict
    or hidden='abc' failed inside torch with its own errors, not naming the file."""
    import torch

    from agents.registry import make_agent

    out = tmp_path / "run"
    train(_cfg("fast-ppo", out))
    bad = tmp_path / "bad.pt"
    torch.save({**torch.load(out / "model.pt", weights_only=True), **change}, bad)
    with pytest.raises(ValueError, match=r"bad.pt'.*" + message):
        make_agent(f"fastppo:{bad}")


def test_an_output_path_that_is_a_file_is_refused(tmp_path):
    target = tmp_path / "afile"
    target.write_text("keep me")
    with pytest.raises(ConfigError, match="afile.*is a file"):
        train(_cfg("fast-ppo", target))
    assert target.read_text() == "keep me"


def test_ctrl_c_saves_a_checkpoint_and_the_model(tmp_path, monkeypatch):
    from agents.train import RunFolder

    original = RunFolder.step
    sent = []

    def step_then_interrupt(self, step, policy):
        original(self, step, policy)
        if not sent:
            sent.append(step)
            os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C does

    monkeypatch.setattr(RunFolder, "step", step_then_interrupt)
    out = tmp_path / "run"
    handler_before = signal.getsignal(signal.SIGINT)
    result = train(_cfg("fast-ppo", out, timesteps=10**6))
    assert result.interrupted and result.steps == sent[0] < 10**6
    assert (out / "model.pt").is_file() and (out / "checkpoints" / "latest.pt").is_file()
    assert signal.getsignal(signal.SIGINT) is handler_before  # the caller's handler restored


def test_a_second_ctrl_c_aborts_at_once(tmp_path, monkeypatch):
    from agents.train import RunFolder

    original = RunFolder.step

    def step_then_interrupt_twice(self, step, policy):
        original(self, step, policy)
        os.kill(os.getpid(), signal.SIGINT)  # the first asks for a checkpoint, the second aborts
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(RunFolder, "step", step_then_interrupt_twice)
    handler_before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        train(_cfg("fast-ppo", tmp_path / "run", timesteps=10**6))
    assert signal.getsignal(signal.SIGINT) is handler_before


def test_flag_help_shows_the_defaults_in_words():
    import argparse

    from agents.train import add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    helps = {a.dest: a.help for a in parser._actions}
    assert helps["first_cell"].endswith("(default anywhere)")
    assert helps["anneal_lr"].endswith("(default on)")


def test_every_config_option_has_a_documented_flag():
    import argparse
    from dataclasses import fields

    from agents.train import add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    dests = {a.dest: a for a in parser._actions}
    for f in fields(TrainConfig):
        if f.name == "progress":
            assert "no_progress" in dests
            continue
        assert f.name in dests, f"no flag for {f.name}"
        assert dests[f.name].help, f"flag for {f.name} is undocumented"


def test_anneal_by_steps_keeps_wall_clock_out_of_the_schedule(tmp_path, monkeypatch):
    """``anneal_by='first'``: the time budget counts once it runs ahead of the steps; ``'steps'``: it never counts."""
    from agents import train as train_module

    now = [1000.0]
    monkeypatch.setattr(train_module.time, "time", lambda: now[0])
    fractions = {}
    for how in ("first", "steps"):
        cfg = TrainConfig(algo="fast-ppo", timesteps=1000, time_limit=100.0, anneal_by=how,
                          out=str(tmp_path / how)).resolved()
        run = train_module.RunFolder(cfg)  # its clock starts now
        now[0] += 50.0  # half the time budget spent, a tenth of the steps
        fractions[how] = run.progress_fraction(100)
    assert fractions == {"first": 0.5, "steps": 0.1}


def test_masked_logits_set_exactly_the_illegal_cells_to_minus_infinity():
    import torch

    from agents.fast_ppo import masked_logits

    scores = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
    mask = torch.tensor([[1, 0, 1], [0, 0, 0], [1, 1, 1]], dtype=torch.int8)
    out = masked_logits(scores, mask)
    assert out[0, 1].item() == float("-inf") and out[0, 0].item() == 1.0 and out[0, 2].item() == 3.0
    assert torch.equal(out[1], scores[1])  # a row without a legal cell is left unmasked (no NaN probabilities)
    assert torch.equal(out[2], scores[2])
    probs = torch.softmax(masked_logits(torch.tensor([[1e6, 0.0]]), torch.tensor([[0, 1]])), -1)
    assert probs.tolist() == [[0.0, 1.0]]  # an illegal cell never gets probability, however high its score


def test_learned_agents_evaluate_in_worker_processes_as_in_one(tmp_path):
    """Building a ppo: agent runs a threaded torch op in the parent; forked workers then hung forever in their
    own (an OpenMP pool inherited broken). Run in a subprocess with a timeout, so a hang fails instead of stalling."""
    import subprocess
    import sys

    specs = []
    for algo, prefix in (("maskable-ppo", "ppo"), ("fast-ppo", "fastppo"), ("dqn", "dqn")):
        train(_cfg(algo, tmp_path / algo))
        specs += ["--agent", f"{prefix}:{tmp_path / algo}"]
    import signal

    outputs = {}
    for jobs in (1, 2):
        child = subprocess.Popen([sys.executable, "-m", "pokersquares_env", "evaluate", *specs, "--games", "4",
                                  "--seed", "0", "--jobs", str(jobs), "--no-progress", "--format", "json"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                                 cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        try:
            out, err = child.communicate(timeout=150)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)  # the workers too
            child.communicate()
            pytest.fail(f"evaluate --jobs {jobs} of learned agents did not finish in 150 s")
        assert child.returncode == 0, err
        rows = [json.loads(line) for line in out.splitlines()]
        outputs[jobs] = [(r["agent"], r["errors"], r["mean"], r["mean_english"]) for r in rows]
    assert outputs[1] == outputs[2] and len(outputs[1]) == 3 and all(e == 0 for _, e, _, _ in outputs[1])


def _stop_halfway(monkeypatch, algo):
    """Make training stop (as Ctrl-C does) once half of ``algo``'s tiny budget is done; the real RunFolder.step."""
    from agents import train as train_module

    real_step = train_module.RunFolder.step
    half = TINY[algo]["timesteps"] // 2

    def stop_halfway(self, step, policy):
        real_step(self, step, policy)
        if step >= half:
            self.stop_requested = True

    monkeypatch.setattr(train_module.RunFolder, "step", stop_halfway)
    return real_step


def _spy_deals(monkeypatch) -> list:
    """The decks the vector env deals from now on, as tuples of codes (filled as it deals)."""
    from pokersquares_env.vector import PokerSquaresVectorEnv

    dealt = []
    real_rows = PokerSquaresVectorEnv._reset_rows

    def spy(self, rows, decks, out=None):
        dealt.extend(tuple(int(c) for c in d) for d in decks)
        return real_rows(self, rows, decks, out)

    monkeypatch.setattr(PokerSquaresVectorEnv, "_reset_rows", spy)
    return dealt


@pytest.mark.parametrize("algo", ["maskable-ppo", "fast-ppo", "dqn"])
def test_a_resumed_run_plays_new_deals(tmp_path, monkeypatch, algo):
    """MaskablePPO.load reseeds the env with the run's seed: a resumed run used to replay the first deals."""
    from agents import train as train_module

    dealt = _spy_deals(monkeypatch)
    real_step = _stop_halfway(monkeypatch, algo)
    out = tmp_path / "run"
    train(_cfg(algo, out))
    first = list(dealt)
    monkeypatch.setattr(train_module.RunFolder, "step", real_step)
    dealt.clear()
    train(TrainConfig(out=str(out), progress=False), resume=True)
    assert first and dealt and not set(first) & set(dealt)


@pytest.mark.parametrize("algo, shaping", [("fast-ppo", "none"), ("dqn", "none"), ("fast-ppo", "heuristic")])
def test_an_interrupted_and_resumed_run_is_the_uninterrupted_run(tmp_path, monkeypatch, capsys, algo, shaping):
    """The checkpoint holds the games in progress (the vector env, the last observation), the generators and, for
    dqn, the replay buffer: a run stopped halfway (as Ctrl-C stops it) and resumed ends with exactly the weights of
    the run never stopped.  Before, the resumed part started new games and the models differed."""
    import torch

    from agents import train as train_module

    straight = train(_cfg(algo, tmp_path / "straight", shaping=shaping))  # shaped: the potential goes on too
    real_step = _stop_halfway(monkeypatch, algo)
    out = tmp_path / "stopped"
    stopped = train(_cfg(algo, out, shaping=shaping))
    assert 0 < stopped.steps < straight.steps
    monkeypatch.setattr(train_module.RunFolder, "step", real_step)
    resumed = train(TrainConfig(out=str(out), progress=False), resume=True)
    assert resumed.steps == straight.steps
    a = torch.load(tmp_path / "straight" / "model.pt", weights_only=False)["state_dict"]
    b = torch.load(out / "model.pt", weights_only=False)["state_dict"]
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert "starts new games" not in capsys.readouterr().err

    # a checkpoint without its games (an older version's) resumes with new games, and says so
    ckpt = torch.load(out / "checkpoints" / "latest.pt", weights_only=False)
    games = ckpt.pop("games")
    torch.save(ckpt, out / "checkpoints" / "latest.pt")
    train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=straight.steps * 2)
    assert "the checkpoint holds no games in progress (saved by an older version): the resumed run starts new " \
           "games" in capsys.readouterr().err
    # games another version pickled, or a damaged pickle: new games too, said so (not a crash mid-run)
    for damage, said in (({"version": "0.0.1"}, "holds games of pokersquares_env '0.0.1', not of this"),
                         ({"env": b"not a pickle"}, "holds games that cannot be read (UnpicklingError")):
        ckpt = torch.load(out / "checkpoints" / "latest.pt", weights_only=False)
        ckpt["games"] = {**games, **damage}
        torch.save(ckpt, out / "checkpoints" / "latest.pt")
        done = json.loads((out / "progress.json").read_text())["steps"]
        train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=done + straight.steps)
        assert said in capsys.readouterr().err


@pytest.mark.parametrize("shaping, net", [("none", "mlp"), ("heuristic", "mlp"), ("none", "lines")])
def test_an_interrupted_and_resumed_maskable_ppo_run_is_the_uninterrupted_run(tmp_path, monkeypatch, capsys, shaping,
                                                                              net):
    """maskable-ppo checkpoints between rollouts with the games in progress, SB3's last observation and the
    generators, and a stop waits for the rollout's end: stopped halfway through its second rollout (as Ctrl-C stops
    it) and resumed, it ends with exactly the weights of the run never stopped.  Before, the resumed part started
    new games from another seed."""
    import zipfile

    from sb3_contrib import MaskablePPO

    from agents import train as train_module

    over = dict(timesteps=768, shaping=shaping, net=net)  # three rollouts of 256 steps; the stop comes at 384
    straight = train(_cfg("maskable-ppo", tmp_path / "straight", **over))
    real_step = train_module.RunFolder.step

    def stop_halfway(self, step, policy):
        real_step(self, step, policy)
        if step >= 384:
            self.stop_requested = True

    monkeypatch.setattr(train_module.RunFolder, "step", stop_halfway)
    out = tmp_path / "stopped"
    stopped = train(_cfg("maskable-ppo", out, **over))
    assert stopped.steps == 512  # the end of the rollout in which the stop came
    assert json.loads((out / "progress.json").read_text())["steps"] == 512
    monkeypatch.setattr(train_module.RunFolder, "step", real_step)
    resumed = train(TrainConfig(out=str(out), progress=False), resume=True)
    assert resumed.steps == straight.steps == 768

    def weights(path):
        return MaskablePPO.load(path, device="cpu").policy.state_dict()

    a, b = weights(tmp_path / "straight" / "model.zip"), weights(out / "model.zip")
    assert a.keys() == b.keys() and all(torch_equal(a[k], b[k]) for k in a)
    assert "starts new games" not in capsys.readouterr().err
    with zipfile.ZipFile(out / "model.zip") as z:  # the final model holds no games; the checkpoint does
        assert b"_pse_games" not in z.read("data")
    with zipfile.ZipFile(out / "checkpoints" / "latest.zip") as z:
        assert b"_pse_games" in z.read("data")

    # a checkpoint without its games (an older version's) resumes with new games, and says so
    old = MaskablePPO.load(out / "checkpoints" / "latest.zip", device="cpu")
    old.__dict__.pop("_pse_games")
    old.save(out / "checkpoints" / "latest.zip")
    train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=1024)
    assert "holds no games in progress (saved by an older version): the resumed run starts new games" \
        in capsys.readouterr().err


def test_maskable_ppo_resume_after_a_hard_abort_keeps_the_curve_the_evaluations_and_the_weights(tmp_path,
                                                                                              monkeypatch, capsys):
    """A second Ctrl-C (or an error) within an update used to leave a checkpoint at the rollout's end with weights
    that had not (or only partly) learned from it: the resumed run differed silently.  The run now goes back to the
    rollout's start.  curve.csv's first row after a resume used to lose the scores of games finished between the
    last row and the checkpoint, and sb3_eval kept only the resumed session's evaluations."""
    import numpy as np
    from sb3_contrib import MaskablePPO

    over = dict(timesteps=1300, num_steps=125, minibatch_size=50, eval_every=200, eval_games=2)
    straight = train(_cfg("maskable-ppo", tmp_path / "straight", **over))
    real_train = MaskablePPO.train
    calls = []

    def boom(self):
        calls.append(1)
        if len(calls) == 3:
            real_train(self)  # a partial update: the weights change, then the abort
            raise KeyboardInterrupt
        return real_train(self)

    monkeypatch.setattr(MaskablePPO, "train", boom)
    out = tmp_path / "aborted"
    with pytest.raises(KeyboardInterrupt):
        train(_cfg("maskable-ppo", out, **over))
    assert json.loads((out / "progress.json").read_text())["steps"] == 500  # the third rollout's start
    monkeypatch.setattr(MaskablePPO, "train", real_train)
    resumed = train(TrainConfig(out=str(out), progress=False), resume=True)
    assert resumed.steps == straight.steps

    def weights(path):
        return MaskablePPO.load(path, device="cpu").policy.state_dict()

    a, b = weights(tmp_path / "straight" / "model.zip"), weights(out / "model.zip")
    assert all(torch_equal(a[k], b[k]) for k in a)

    def curve(folder):  # every column but the wall-clock seconds
        rows = (folder / "curve.csv").read_text().splitlines()
        return [",".join(r.split(",")[:1] + r.split(",")[2:]) for r in rows]

    assert curve(out) == curve(tmp_path / "straight")
    assert any(r.split(",")[3] for r in curve(out)[1:])  # training scores are in it

    def evals(folder):
        with np.load(folder / "sb3_eval" / "evaluations.npz") as d:
            return d["timesteps"].tolist(), d["results"].tolist()

    assert evals(out) == evals(tmp_path / "straight") and len(evals(out)[0]) == 7


def test_maskable_ppo_plays_each_evaluation_once_and_logs_the_callbacks_games(tmp_path, monkeypatch):
    """An audit found every maskable-ppo evaluation played twice: MaskableEvalCallback's games one at a time, then the
    same deals again, batched, for the run folder's curve (both systems), doubling the evaluations' share of the
    run's seconds and steps/s.  The run folder now logs the callback's own games."""
    import csv

    import agents.learned

    def no_replay(*args, **kwargs):
        raise AssertionError("the evaluation deals were played a second time")

    monkeypatch.setattr(agents.learned, "play_decks", no_replay)
    out = tmp_path / "run"
    train(_cfg("maskable-ppo", out, timesteps=1024, num_steps=128, eval_every=256, eval_games=3,
               reward_mode="terminal", reward_scale=1.0))
    with np.load(out / "sb3_eval" / "evaluations.npz") as d:
        steps, results = d["timesteps"].tolist(), d["results"]
    rows = [r for r in csv.DictReader((out / "curve.csv").open()) if r["eval_score"]]
    assert [int(r["step"]) for r in rows] == steps and len(steps) == 4
    # terminal rewards at scale 1 are the games' points: the curve's means are the callback's games' means
    assert [float(r["eval_score"]) for r in rows] == pytest.approx(results.mean(axis=1).tolist(), abs=1e-3)
    assert [float(r["eval_american"]) for r in rows] == [float(r["eval_score"]) for r in rows]
    assert all(float(r["eval_english"]) >= 0 for r in rows)


def test_maskable_ppo_time_limit_trains_one_rollout_and_damaged_games_start_new_ones(tmp_path, capsys):
    """A new run whose set-up outlasts its --time-limit still trains one rollout (as fast-ppo trains one update); a
    checkpoint whose games are damaged resumes with new games and says why, instead of failing mid-run."""
    from sb3_contrib import MaskablePPO

    out = tmp_path / "run"
    first = train(_cfg("maskable-ppo", out, timesteps=10**6, time_limit=0.001))
    assert first.steps == 256
    latest = out / "checkpoints" / "latest.zip"
    done = first.steps
    for damage, said in ((lambda g: g.pop("rngs"), "no generator states"),
                         (lambda g: g.__setitem__("obs", g["obs"][:1]), "an observation of shape (1, 522)"),
                         (None, "str without an env")):
        model = MaskablePPO.load(latest, device="cpu")
        if damage is None:
            model._pse_games = "junk"
        else:
            damage(model._pse_games)
        model.save(latest)
        done += 256
        result = train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=done, time_limit=0)
        assert result.steps == done
        assert f"holds games that cannot be read ({said}" in capsys.readouterr().err


def torch_equal(x, y) -> bool:
    import torch

    return torch.equal(x, y)


@pytest.mark.parametrize("algo", ["fast-ppo", "dqn", "maskable-ppo"])
def test_a_time_limit_stops_training_and_a_spent_one_trains_nothing_on_resume(tmp_path, capsys, algo):
    """Before: maskable-ppo ignored --time-limit (its callback only watched Ctrl-C), and a resumed run whose time
    limit earlier sessions had spent still trained one more update or 25 iterations each time."""
    out = tmp_path / "run"
    steps_annealing = {} if algo == "maskable-ppo" else {"anneal_by": "steps"}  # maskable-ppo has no anneal_by
    first = train(_cfg(algo, out, timesteps=10**7, time_limit=1.0, **steps_annealing))
    assert 0 < first.steps < 10**7
    before = json.loads((out / "progress.json").read_text())
    assert before["seconds"] >= 1.0
    again = train(TrainConfig(out=str(out), progress=False), resume=True)
    assert again.steps == first.steps  # nothing trained
    assert "--time-limit 1 s is already spent (" in capsys.readouterr().err
    # the command's summary line says that the time limit stopped the run (it read like a finished run's)
    from agents.train import TrainResult, _stop_note, planned_steps

    assert _stop_note(first) == (f"  (stopped by the --time-limit of 1 s, {planned_steps(first.config):,} steps "
                                 f"planned; --resume --time-limit T goes on)")
    done = train(_cfg(algo, tmp_path / "done", time_limit=600.0))
    assert _stop_note(done) == "" and _stop_note(TrainResult(done, interrupted=True)) == "  (interrupted)"


def test_resume_keeps_the_evaluation_and_checkpoint_schedules_and_trims_the_curve(tmp_path, monkeypatch):
    """Before: a resumed run counted eval_every and checkpoint_every from the stop (evaluations and step_N
    checkpoints at other steps than the run never stopped), and curve rows written after the last checkpoint of a
    killed run were written again (duplicate, out-of-order steps)."""
    import torch  # noqa: F401  (the trainers need it)

    options = dict(num_envs=8, eval_every=300, checkpoint_every=300, eval_games=4, timesteps=1248)
    straight = tmp_path / "straight"
    train(_cfg("fast-ppo", straight, **options))
    _stop_halfway(monkeypatch, "fast-ppo")
    out = tmp_path / "stopped"
    train(_cfg("fast-ppo", out, **options))
    from agents import train as train_module

    monkeypatch.undo()
    # rows a killed run wrote after its last checkpoint (progress.json stays at that checkpoint)
    done = json.loads((out / "progress.json").read_text())["steps"]
    with (out / "curve.csv").open("a") as fh:
        fh.write(f"{done + 416},1.0,1,,,,\n")
    train(TrainConfig(out=str(out), progress=False), resume=True)

    def schedule(folder):
        rows = [r.split(",") for r in (folder / "curve.csv").read_text().splitlines()[1:]]
        return ([int(r[0]) for r in rows], [int(r[0]) for r in rows if r[4]],
                sorted(p.name for p in (folder / "checkpoints").glob("step_*")))

    steps, evaluated, checkpoints = schedule(out)
    assert steps == sorted(set(steps))  # no step twice, in order
    assert (steps, evaluated, checkpoints) == schedule(straight)
    assert train_module.SCHEDULE_KEYS[0] in json.loads((out / "progress.json").read_text())


def test_a_dqn_buffer_saved_with_another_checkpoint_is_refused(tmp_path):
    """A save interrupted between latest.pt and latest_buffer.npz left a buffer of an older checkpoint, which the
    resume used silently."""
    import torch

    from agents.dqn import BUFFER_FILE

    out = tmp_path / "run"
    train(_cfg("dqn", out))
    ckpt = torch.load(out / "checkpoints" / "latest.pt", weights_only=False)
    ckpt["global_step"] += 16
    torch.save(ckpt, out / "checkpoints" / "latest.pt")
    before = _files(out)
    with pytest.raises(ConfigError, match=rf"{BUFFER_FILE}' was saved at step \d+, but .*latest.pt' at step \d+: "
                                          r"expected the buffer saved with that checkpoint; delete it"):
        train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=10**5)
    assert _files(out) == before


@pytest.mark.parametrize("algo, missing", [("fast-ppo", "optimizer, update, torch_rng"), ("dqn", "optimizer, target")])
def test_a_final_model_copied_over_the_checkpoint_is_refused_before_writing(tmp_path, algo, missing):
    """Before: it passed the check (state_dict and global_step) and failed mid-resume with KeyError 'optimizer'."""
    import shutil

    out = tmp_path / "run"
    train(_cfg(algo, out))
    shutil.copy(out / "model.pt", out / "checkpoints" / "latest.pt")
    before = _files(out)
    with pytest.raises(ConfigError, match=rf"latest.pt' is not a {algo} checkpoint \(it lacks {missing}\)"):
        train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=10**5)
    assert _files(out) == before


def _fake_run(out: Path, cfg: TrainConfig) -> None:
    """A fast-ppo run folder as training leaves it (config, progress, a checkpoint), without training."""
    import torch

    from agents.fast_ppo import make_net

    (out / "checkpoints").mkdir(parents=True)
    resolved = cfg.resolved()
    resolved.save(out / "config.json")
    (out / "progress.json").write_text(json.dumps({"steps": 100, "seconds": 1, "episodes": 1}))
    net = make_net(resolved.net, resolved.hidden)  # weights that fit the config: --resume loads them to check
    torch.save({"state_dict": net.state_dict(), "global_step": 100,
                "optimizer": torch.optim.Adam(net.parameters()).state_dict(), "update": 1, "torch_rng": None},
               out / "checkpoints" / "latest.pt")


def test_resume_with_a_config_naming_a_point_system_file_by_a_relative_path(tmp_path, monkeypatch, capsys):
    """``train --resume --config cfg.json`` whose scoring is 'pts.json' (found in the current folder) agrees with the
    'pts.json' the run stored: a point system is compared by what it is, not by how its path is spelled."""
    from agents import fast_ppo
    from pokersquares_env.cli import main
    from pokersquares_env.scoring import POINT_SYSTEMS

    monkeypatch.chdir(tmp_path)
    (tmp_path / "pts.json").write_text(json.dumps({"name": "pts", "points": dict(POINT_SYSTEMS["american"])}))
    (tmp_path / "cfg.json").write_text(json.dumps({"algo": "fast-ppo", "scoring": "pts.json"}))
    # a new run from the config stores the name as given (found in the current folder), not an absolute path
    assert main(["train", "--config", "cfg.json", "--print-config"]) == 0
    assert json.loads(capsys.readouterr().out)["scoring"] == "pts.json"
    _fake_run(tmp_path / "run", TrainConfig(algo="fast-ppo", scoring="pts.json", out="run", final_eval_games=0))
    seen = []
    monkeypatch.setattr(fast_ppo, "train", lambda cfg, run: seen.append(cfg.scoring))
    assert main(["train", "--config", "cfg.json", "--out", "run", "--resume", "--no-progress"]) == 0, \
        capsys.readouterr().err
    assert seen == ["pts.json"]
    # the same file by its absolute path agrees too; another point system is still refused, naming both values
    absolute = str(tmp_path / "pts.json")
    assert main(["train", "--scoring", absolute, "--out", "run", "--resume", "--no-progress"]) == 0
    (tmp_path / "other.json").write_text(json.dumps({"name": "pts", "points": dict(POINT_SYSTEMS["english"])}))
    assert main(["train", "--scoring", "other.json", "--out", "run", "--resume", "--no-progress"]) == 2
    assert "scoring='other.json' (stored: 'pts.json') would change it" in capsys.readouterr().err
    # a stored file that is gone cannot be compared by meaning: another name for it is a change
    (tmp_path / "pts.json").rename(tmp_path / "moved.json")
    assert main(["train", "--scoring", "moved.json", "--out", "run", "--resume", "--no-progress"]) == 2
    assert "scoring='moved.json' (stored: 'pts.json')" in capsys.readouterr().err
    assert len(seen) == 2


def test_resume_without_a_checkpoint_says_how_to_train_the_run_again(tmp_path, capsys):
    """A run that stopped before its first checkpoint (one that diverged, say) cannot be resumed: the message names
    the missing file and points to --overwrite (it named the file only); nothing in the folder changes."""
    from pokersquares_env.cli import main

    run = tmp_path / "run"
    _fake_run(run, TrainConfig(algo="fast-ppo", out=str(run), final_eval_games=0))
    (run / "checkpoints" / "latest.pt").unlink()
    before = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}
    assert main(["train", "--out", str(run), "--resume", "--no-progress"]) == 2
    assert capsys.readouterr().err == (
        f"pokersquares train: --resume: no checkpoint {str(run / 'checkpoints' / 'latest.pt')!r} to resume from (a run "
        f"that stopped before saving one, e.g. one that diverged): expected a run folder with its checkpoint, or train "
        f"the run again with --overwrite\n")
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()} == before


def test_a_run_started_with_a_relative_scoring_file_resumes_from_another_folder_on_its_stored_table(
        tmp_path, monkeypatch, capsys):
    """A run started with ``--scoring pts.json`` stores the name as given; resumed from another folder, that name
    could not be read, and even the file's absolute path was refused as a change: the run now goes on with the
    table it started with (its point_system.json), saying so, and the same table by any path agrees with it."""
    from agents import fast_ppo
    from pokersquares_env.cli import main
    from pokersquares_env.scoring import POINT_SYSTEMS, point_system

    start, elsewhere = tmp_path / "start", tmp_path / "elsewhere"
    start.mkdir()
    elsewhere.mkdir()
    (start / "pts.json").write_text(json.dumps({"name": "pts", "points": dict(POINT_SYSTEMS["english"])}))
    monkeypatch.chdir(start)
    run = tmp_path / "run"
    _fake_run(run, TrainConfig(algo="fast-ppo", scoring="pts.json", out=str(run), final_eval_games=0))
    (run / "point_system.json").write_text(json.dumps(point_system("pts.json").to_json()))  # as the run's start
    seen = []
    monkeypatch.setattr(fast_ppo, "train", lambda cfg, run_: seen.append(point_system(cfg.scoring).to_json()))
    monkeypatch.chdir(elsewhere)
    assert main(["train", "--out", str(run), "--resume", "--no-progress"]) == 0, capsys.readouterr().err
    table = str((run / "point_system.json").resolve())
    assert capsys.readouterr().err.startswith(
        f"--resume: scoring='pts.json' cannot be read from here (a path is relative to the folder the run was started "
        f"in): the run goes on with the table it started with, {table}\n")
    assert seen == [point_system(str(start / "pts.json")).to_json()]  # the English table, named pts
    assert main(["train", "--scoring", str(start / "pts.json"), "--out", str(run), "--resume", "--no-progress"]) == 0
    capsys.readouterr()
    # the text the run was started with, given again from here, is no change either (it named the stored table)
    monkeypatch.chdir(start)
    _fake_run(tmp_path / "run2", TrainConfig(algo="fast-ppo", scoring="pts.json", out=str(tmp_path / "run2"),
                                             final_eval_games=0))
    (tmp_path / "run2" / "point_system.json").write_text(json.dumps(point_system("pts.json").to_json()))
    monkeypatch.chdir(elsewhere)
    assert main(["train", "--scoring", "pts.json", "--out", str(tmp_path / "run2"), "--resume", "--no-progress"]) == 0
    assert "the run goes on with the table it started with" in capsys.readouterr().err
    assert main(["train", "--scoring", "english", "--out", str(run), "--resume", "--no-progress"]) == 2  # named other
    assert f"scoring='english' (stored: {table!r}) would change it" in capsys.readouterr().err


def test_scoring_path_near_keeps_a_name_found_in_the_current_folder(tmp_path, monkeypatch):
    from agents.config import scoring_path_near

    monkeypatch.chdir(tmp_path)
    (tmp_path / "here.json").write_text("{}")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "near.json").write_text("{}")
    assert scoring_path_near("here.json", tmp_path / "sub") == "here.json"
    assert scoring_path_near("here.json", tmp_path / "sub", absolute=True) == str((tmp_path / "here.json").resolve())
    assert scoring_path_near("near.json", tmp_path / "sub") == str((tmp_path / "sub" / "near.json").resolve())
    assert scoring_path_near("nowhere.json", tmp_path / "sub") == "nowhere.json"
    assert scoring_path_near("english", tmp_path / "sub") == "english"


@pytest.mark.parametrize("algo, prefix", [("fast-ppo", "fastppo"), ("maskable-ppo", "ppo")])
def test_a_learned_agent_played_in_another_game_than_its_training_warns(tmp_path, algo, prefix):
    """A model trained under other rules or point values used to play silently in whatever game it was handed
    (e.g. evaluated without the training's --rules): it now warns, naming both games."""
    import warnings

    from agents.registry import make_agent

    out = tmp_path / "run"
    train(_cfg(algo, out, jokers=2, placement="adjacent", first_cell="center", scoring="english"))
    own = {"jokers": 2, "placement": "adjacent", "first_cell": "center"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # its own game: no warning
        make_agent(f"{prefix}:{out}", system="english", rules=own)
    with pytest.warns(RuntimeWarning, match=r"was trained for rules jokers=2,placement=adjacent.* \(here plain\) "
                                            r"and 'english' points \(here 'american'\)") as record:
        make_agent(f"{prefix}:{out}")
    # reported at the caller's line, not at the registry's (it used to name agents/registry.py)
    assert [w.filename for w in record if "was trained for" in str(w.message)] == [__file__]
    checkpoint = next((out / "checkpoints").glob("latest.*"))  # a checkpoint finds its run's config.json above it
    with pytest.warns(RuntimeWarning, match=r"\(here 'american'\)"):
        make_agent(f"{prefix}:{checkpoint}", rules=own)


def test_the_budget_is_rounded_up_to_whole_updates_and_said_so(tmp_path, capsys):
    """Every trainer steps in whole units (updates of num_envs x num_steps; dqn: iterations of num_envs) and rounds
    --timesteps up to them: the run now says so when it starts (it used to train 6.4 times the budget silently)."""
    from agents.train import planned_steps

    for algo, asked, unit in (("fast-ppo", 500, 16 * 26), ("dqn", 1000, 16), ("maskable-ppo", 300, 2 * 128)):
        cfg = _cfg(algo, tmp_path / algo, timesteps=asked).resolved()
        expected = -(-asked // unit) * unit
        assert planned_steps(cfg) == expected and planned_steps(cfg, unit) == unit
        result = train(cfg)
        assert result.steps == expected  # what the trainer really took
        err = capsys.readouterr().err
        assert f"timesteps={asked:,}: {algo} trains whole " in err and f"run takes {expected:,} steps" in err
    train(_cfg("fast-ppo", tmp_path / "exact", timesteps=16 * 26 * 2))
    assert "trains whole" not in capsys.readouterr().err


@pytest.mark.parametrize("algo, asked", [("fast-ppo", 500), ("dqn", 1000), ("maskable-ppo", 300)])
def test_the_progress_bar_counts_to_the_steps_the_run_takes(algo, asked, tmp_path, monkeypatch):
    """The bar's total is the budget rounded up to whole updates, and it ends full.  maskable-ppo's and dqn's bars
    had the asked budget as their total: tqdm drops a total the count passes, so a finished maskable-ppo run showed
    "201kstep" with no total and no percentage."""
    import agents.train as train_module

    bars = []

    def recording_bar(enabled, **options):
        import io

        from tqdm import tqdm

        bars.append(tqdm(**options, file=io.StringIO()))
        return bars[-1]

    monkeypatch.setattr(train_module, "progress_bar", recording_bar)
    result = train(_cfg(algo, tmp_path / algo, timesteps=asked, progress=True))
    assert result.steps > asked  # rounded up
    assert [(bar.total, bar.n) for bar in bars] == [(result.steps, result.steps)]


def test_resume_into_a_file_names_it(tmp_path):
    path = tmp_path / "afile.txt"
    path.write_text("x")
    with pytest.raises(ConfigError, match=r"--resume: out='.*afile.txt' is a file: expected the folder of the run"):
        train(TrainConfig(out=str(path), progress=False), resume=True)
    assert path.read_text() == "x"


def test_dqn_evaluates_every_eval_every_steps_and_at_the_end(tmp_path):
    """dqn used to evaluate only at its 25-iteration log points (every 1,600 steps at 64 envs), and never at the
    end: --eval-every 1000 over 2,000 steps gave one evaluation."""
    import csv

    out = tmp_path / "run"
    train(_cfg("dqn", out, num_envs=64, timesteps=2000, eval_every=1000, eval_games=2))
    with (out / "curve.csv").open() as fh:
        evals = [int(r["step"]) for r in csv.DictReader(fh) if r["eval_score"]]
    assert evals == [1024, 2048]


def test_timesteps_take_float_notation_as_demo_steps_do(capsys):
    """``train --timesteps 1e6`` used to be refused (``invalid int value``) while ``demo --steps 5e6`` worked."""
    from pokersquares_env.cli import main

    assert main(["train", "--algo", "fast-ppo", "--timesteps", "2.5e6", "--print-config"]) == 0
    assert json.loads(capsys.readouterr().out)["timesteps"] == 2_500_000
    assert main(["train", "--algo", "fast-ppo", "--timesteps", "9007199254740993", "--print-config"]) == 0
    assert json.loads(capsys.readouterr().out)["timesteps"] == 9007199254740993  # exactly, not through a float
    with pytest.raises(SystemExit):
        main(["train", "--timesteps", "1.5", "--print-config"])
    assert "1.5: expected a whole number of steps >= 1" in capsys.readouterr().err


def test_a_learned_agent_knows_its_point_system_wherever_it_is_evaluated_and_warns_once(tmp_path, monkeypatch):
    """The trained point system is the table read when training started (point_system.json in the run folder, and in
    a torch model file), not the path config.json gives relative to where training ran: evaluated from another
    folder, or beside another file of the same name, the comparison used to be lost or wrong.  A model.zip inside
    another algorithm's run folder is not that run's; a table differing only in five of a kind, impossible without
    jokers, is the same game; and the warning comes once a model (the progress bar's import reset Python's memory)."""
    import shutil
    import warnings

    from agents.registry import make_agent
    from pokersquares_env.scoring import POINT_SYSTEMS

    odd = {**dict(POINT_SYSTEMS["american"]), "one_pair": 7}
    (tmp_path / "train_here" / "pts").mkdir(parents=True)
    (tmp_path / "train_here" / "pts" / "odd.json").write_text(json.dumps(odd))
    monkeypatch.chdir(tmp_path / "train_here")
    runs = {}
    for algo in ("fast-ppo", "maskable-ppo"):
        runs[algo] = tmp_path / algo
        train(_cfg(algo, runs[algo], scoring="pts/odd.json"))
    assert json.loads((runs["maskable-ppo"] / "point_system.json").read_text())["points"]["one_pair"] == 7
    elsewhere = tmp_path / "elsewhere" / "pts"
    elsewhere.mkdir(parents=True)
    (elsewhere / "odd.json").write_text(json.dumps(dict(POINT_SYSTEMS["american"])))  # same name, other values
    monkeypatch.chdir(tmp_path / "elsewhere")
    for algo, prefix in (("fast-ppo", "fastppo"), ("maskable-ppo", "ppo")):
        with pytest.warns(RuntimeWarning, match=r"trained for 'odd' points \(here 'american'\)"):
            make_agent(f"{prefix}:{runs[algo]}")
        latest = next((runs[algo] / "checkpoints").glob("latest.*"))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            make_agent(f"{prefix}:{runs[algo]}")  # once a model: no second warning
            # its own game but for five of a kind, which no deal without jokers makes (odd's is 60)
            make_agent(f"{prefix}:{latest}", system=odd | {"five_of_a_kind": 50})
        with pytest.warns(RuntimeWarning, match=r"trained for rules plain \(here jokers=1\)"):
            make_agent(f"{prefix}:{latest}", system=odd | {"five_of_a_kind": 50}, rules={"jokers": 1})
    # a MaskablePPO zip copied into a dqn run's folder is not that run's model: no warning from the dqn's rules
    dqn = tmp_path / "dqn"
    train(_cfg("dqn", dqn, jokers=1))
    (dqn / "extra").mkdir()
    for where in (dqn / "ppo.zip", dqn / "extra" / "ppo.zip"):
        shutil.copy(runs["maskable-ppo"] / "model.zip", where)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            make_agent(f"ppo:{where}", system=odd)


def test_config_missing_point_system_file_is_no_error_when_the_flag_replaces_it(tmp_path, monkeypatch, capsys):
    from pokersquares_env.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.json").write_text(json.dumps({"algo": "fast-ppo", "scoring": "missing.json"}))
    assert main(["train", "--config", "sub/c.json", "--scoring", "english", "--print-config"]) == 0
    assert json.loads(capsys.readouterr().out)["scoring"] == "english"
    assert main(["train", "--config", "sub/c.json", "--print-config"]) == 2
    assert "point system file 'missing.json' does not exist: looked in" in capsys.readouterr().err


def test_config_point_system_file_that_is_a_folder_is_named_as_a_folder(tmp_path, monkeypatch, capsys):
    """A config's scoring naming a folder (``x.json/``) was reported as a file that does not exist."""
    from pokersquares_env.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.json").mkdir()
    (tmp_path / "sub" / "c.json").write_text(json.dumps({"algo": "fast-ppo", "scoring": "x.json"}))
    assert main(["train", "--config", "sub/c.json", "--print-config"]) == 2
    err = capsys.readouterr().err
    assert "x.json' cannot be read (Is a directory)" in err and "does not exist" not in err


@pytest.mark.parametrize("algo", ["fast-ppo", "dqn", "maskable-ppo"])
def test_building_the_shaping_tables_is_not_part_of_the_run_time(tmp_path, monkeypatch, algo):
    """--shaping tables builds its tables before the run's clock starts: before, a slow table training counted in the
    run's seconds (progress.json, the curve, compare-trainers' steps/s) and against --time-limit."""
    import time as time_

    import agents.shaping

    real = agents.shaping.LinePotential.make.__func__
    real_time = time_.time
    built = []

    def slow_tables(cls, kind, system, *args, **kwargs):
        built.append(kind)
        if kind == "tables":  # a table training of 1,000 s, on the clock the run reads (a sleep made the test
            monkeypatch.setattr(time_, "time", lambda: real_time() + 1000.0)  # depend on the machine's load)
            kind = "heuristic"
        return real(cls, kind, system, *args, **kwargs)

    monkeypatch.setattr(agents.shaping.LinePotential, "make", classmethod(slow_tables))
    result = train(_cfg(algo, tmp_path / "run", shaping="tables", time_limit=300.0))
    assert built == ["tables"]  # built once
    assert not result.interrupted
    assert result.steps >= TINY[algo]["timesteps"]  # the time limit was not spent on the tables
    assert result.seconds < 300.0
    assert json.loads((tmp_path / "run" / "progress.json").read_text())["seconds"] < 300.0


def _ctrl_c_while_building_tables(monkeypatch, pressed, ctrl_c=True):
    """``LinePotential.make`` stand-in: Ctrl-C (if ``ctrl_c``) while the ``tables`` are built (``pressed`` counts the
    builds), then the heuristic potential in their place (no table training: the run trains on if not stopped)."""
    import agents.shaping

    real = agents.shaping.LinePotential.make.__func__

    def interrupted_tables(cls, kind, system, *args, **kwargs):
        if kind == "tables":
            pressed.append(kind)
            if ctrl_c:
                os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C does, in the middle of the build
            kind = "heuristic"
        return real(cls, kind, system, *args, **kwargs)

    monkeypatch.setattr(agents.shaping.LinePotential, "make", classmethod(interrupted_tables))


def test_ctrl_c_while_the_shaping_tables_are_built_stops_at_once_and_leaves_no_run(tmp_path, monkeypatch, capsys):
    """Nothing is trained while the shaping tables are built, so Ctrl-C there stops at once: before, it only asked
    for a checkpoint, which came after the whole build (37 s and more) and one update of training.  A new run's files
    are removed, so the same command starts it again without --overwrite; the caller's Ctrl-C handler is back."""
    from agents.train import run_files_in

    pressed = []
    _ctrl_c_while_building_tables(monkeypatch, pressed)
    out = tmp_path / "run"
    (out).mkdir()
    (out / "notes.txt").write_text("mine")
    handler_before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        train(_cfg("fast-ppo", out, shaping="tables", timesteps=10**6))
    assert pressed == ["tables"]
    assert "Ctrl-C while building the shaping potential" in capsys.readouterr().err
    assert run_files_in(out) == [] and (out / "notes.txt").read_text() == "mine"
    assert signal.getsignal(signal.SIGINT) is handler_before
    _ctrl_c_while_building_tables(monkeypatch, pressed, ctrl_c=False)
    result = train(_cfg("fast-ppo", out, shaping="tables"))  # the same command, with no --overwrite
    assert not result.interrupted and result.steps >= TINY["fast-ppo"]["timesteps"]
    assert pressed == ["tables", "tables"]


def test_ctrl_c_while_a_resumed_runs_tables_are_built_keeps_its_checkpoint(tmp_path, monkeypatch, capsys):
    """A resumed run stopped by Ctrl-C while its shaping tables are built keeps the checkpoint it resumed from, and
    --resume then continues it."""
    from agents import train as train_module

    out = tmp_path / "run"
    real_step = _stop_halfway(monkeypatch, "fast-ppo")
    pressed = []
    _ctrl_c_while_building_tables(monkeypatch, pressed, ctrl_c=False)
    first = train(_cfg("fast-ppo", out, shaping="tables"))
    assert first.interrupted
    checkpoint = (out / "checkpoints" / "latest.pt").read_bytes()
    monkeypatch.setattr(train_module.RunFolder, "step", real_step)
    _ctrl_c_while_building_tables(monkeypatch, pressed)
    with pytest.raises(KeyboardInterrupt):
        train(TrainConfig(out=str(out), progress=False), resume=True)
    assert pressed == ["tables", "tables"] and "--resume continues it" in capsys.readouterr().err
    assert (out / "checkpoints" / "latest.pt").read_bytes() == checkpoint
    _ctrl_c_while_building_tables(monkeypatch, pressed, ctrl_c=False)
    result = train(TrainConfig(out=str(out), progress=False), resume=True)
    assert not result.interrupted and result.steps > first.steps and pressed == ["tables"] * 3


def test_the_result_seconds_leave_out_the_final_evaluation(tmp_path, monkeypatch):
    """``TrainResult.seconds`` is the training's time: before, it also counted the final evaluation (and the demo
    printed the whole ``train()`` call's time as "trained N steps in X s")."""
    import time as time_

    import agents.train

    real_time = time_.time

    def slow_evaluation(*args, **kwargs):  # a final evaluation of 1,000 s, on the clock train() reads
        monkeypatch.setattr(time_, "time", lambda: real_time() + 1000.0)
        return []

    monkeypatch.setattr(agents.train, "_final_evaluation", slow_evaluation)
    result = train(_cfg("fast-ppo", tmp_path / "run", final_eval_games=2))
    assert not result.interrupted and result.evaluation == []
    assert 0.0 < result.seconds < 500.0


def test_fast_ppo_with_a_minibatch_of_one_trains_a_finite_model(tmp_path):
    """--minibatch-size 1 is accepted; before, the advantage of a single sample was normalised by its std (NaN) and
    the network's weights became NaN."""
    import torch

    result = train(_cfg("fast-ppo", tmp_path / "run", num_envs=2, num_steps=25, minibatch_size=1, timesteps=50))
    state = torch.load(result.model_path, map_location="cpu", weights_only=False)
    weights = state["state_dict"]
    tensors = [v for v in weights.values() if torch.is_tensor(v) and v.is_floating_point()]
    assert tensors and all(torch.isfinite(t).all() for t in tensors)


def _count_optimizer_steps(monkeypatch) -> list[int]:
    import torch

    calls: list[int] = []
    real = torch.optim.Adam.step
    monkeypatch.setattr(torch.optim.Adam, "step", lambda self, *a, **k: calls.append(1) or real(self, *a, **k))
    return calls


def test_fast_ppo_with_one_step_rollouts_skips_the_rollout_of_autoreset_steps_only(tmp_path, monkeypatch):
    """Before, ``--num-steps 1`` crashed at the 26th update: that rollout holds only the autoreset step, so it had no
    valid sample (a minibatch of 0 and ``range(0, 1, 0)``).  Now that update is skipped, and the run goes on."""
    import torch

    calls = _count_optimizer_steps(monkeypatch)
    out = tmp_path / "run"
    result = train(_cfg("fast-ppo", out, num_envs=4, num_steps=1, minibatch_size=4, update_epochs=2, timesteps=120,
                        hidden=[8, 8], checkpoint_every=4))
    assert result.steps == 120
    assert len(calls) == (30 - 1) * 2  # 30 updates of one whole minibatch each, less the one without a valid sample
    steps = [int(r.split(",")[0]) for r in (out / "curve.csv").read_text().splitlines()[1:]]
    assert 104 in steps and steps[-1] == 120  # the skipped update (steps 101-104) is logged like the others
    state = torch.load(result.model_path, map_location="cpu", weights_only=False)["state_dict"]
    assert all(torch.isfinite(v).all() for v in state.values() if torch.is_tensor(v) and v.is_floating_point())


def test_fast_ppo_optimises_whole_minibatches_only(tmp_path, monkeypatch):
    """Pins the documented behaviour (agents.fast_ppo's docstring, TrainConfig.update_epochs): each epoch takes
    floor(valid samples / minibatch_size) gradient steps and leaves out the rest of the shuffled rollout.  A change
    (e.g. keeping the partial last minibatch) changes the documented figures, so it must be noticed."""
    calls = _count_optimizer_steps(monkeypatch)
    # every 26-step rollout of 4 games holds 4 * 25 valid samples (the 26th step of each game is its autoreset)
    train(_cfg("fast-ppo", tmp_path / "run", num_envs=4, num_steps=26, minibatch_size=30, update_epochs=3,
               timesteps=2 * 4 * 26, hidden=[8, 8]))
    assert len(calls) == 2 * 3 * (100 // 30)  # 2 rollouts x 3 epochs x 3 whole minibatches (10 samples left out)


def test_print_config_with_resume_prints_the_stored_config_it_would_train_with(tmp_path, capsys):
    """Before, `train --out RUN --resume --print-config` printed maskable-ppo's defaults, not the run's config."""
    from pokersquares_env.cli import main

    run = tmp_path / "run"
    run.mkdir()
    _cfg("fast-ppo", run, learning_rate=0.0007).resolved().save(run / "config.json")
    assert main(["train", "--out", str(run), "--resume", "--timesteps", "5000", "--print-config"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["algo"] == "fast-ppo" and shown["learning_rate"] == 0.0007 and shown["hidden"] == [16, 16]
    assert shown["timesteps"] == 5000 and shown["out"] == str(run)  # the budget given; the folder where it is
    assert main(["train", "--out", str(run), "--resume", "--seed", "99", "--print-config"]) == 2  # would change it
    assert "seed=99" in capsys.readouterr().err
    assert not (run / "progress.json").exists() and not (run / "checkpoints").exists()  # nothing written
    # an audit found a budget below the steps taken printed as if the resume would take it, which it refuses
    (run / "progress.json").write_text(json.dumps({"steps": 3328, "seconds": 1.0, "episodes": 128}))
    before = (run / "config.json").read_text()
    assert main(["train", "--out", str(run), "--resume", "--timesteps", "100", "--print-config"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and "timesteps=100 is below the 3,328 steps the run in" in out.err
    assert (run / "config.json").read_text() == before


def test_learning_rate_help_names_the_default_that_depends_on_the_net(capsys):
    """An audit found `train --help` gave maskable-ppo's learning rate as 0.0003 only, while --net lines resolves to
    2e-3 (agents.config.NET_DEFAULTS)."""
    from pokersquares_env.cli import main

    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "maskable-ppo 0.0003 (0.002 with --net lines)" in text
    assert "maskable-ppo 256 256 (64 64 with --net lines)" in text


def test_extending_a_run_anneals_the_learning_rate_over_the_new_budget_as_documented(tmp_path):
    """--resume with a larger --timesteps recomputes fast-ppo's learning-rate schedule over the new budget (the
    docs say so, under --resume); and the options' help says where each trainer's annealing ends."""
    import torch

    from agents.train import _field_docs

    docs = _field_docs()
    assert "0.02 x learning_rate" in docs["anneal_lr"] and "to 0 over" not in docs["anneal_lr"]
    assert "num_envs environment steps" in docs["num_steps"]  # dqn counts vector steps, not env steps
    text = (Path(__file__).resolve().parents[1] / "docs" / "training.md").read_text()
    assert "recomputes its schedules over the new budget" in text and "annealed to zero" not in text

    out = tmp_path / "run"
    cfg = _cfg("fast-ppo", out, checkpoint_every=416)  # 3 updates of 16 x 26 = 416 steps
    train(cfg)
    train(_cfg("fast-ppo", out), resume=True, timesteps=2496)  # extended to 6 updates
    state = torch.load(out / "checkpoints" / "latest.pt", map_location="cpu", weights_only=False)
    lr = state["optimizer"]["param_groups"][0]["lr"]
    rate = TrainConfig(algo="fast-ppo").resolved().learning_rate
    assert lr == pytest.approx(rate * (1 - 2080 / 2496))  # the last update (from step 2080) on the new budget


@pytest.mark.parametrize("algo,given,clipped", [("dqn", None, 10.0), ("dqn", 2.5, 2.5), ("fast-ppo", None, 0.5),
                                                ("fast-ppo", 3.0, 3.0)])
def test_gradients_are_clipped_at_the_max_grad_norm_the_config_records(tmp_path, monkeypatch, algo, given, clipped):
    """``--max-grad-norm`` is the norm used, for every algorithm (DQN once clipped at 20 x the option, silently)."""
    import torch

    seen: list[float] = []
    real = torch.nn.utils.clip_grad_norm_

    def recording(parameters, max_norm, *args, **kwargs):
        seen.append(max_norm)
        return real(parameters, max_norm, *args, **kwargs)

    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", recording)
    cfg = _cfg(algo, tmp_path / "run", **({} if given is None else {"max_grad_norm": given}))
    assert cfg.resolved().max_grad_norm == clipped
    train(cfg)
    assert seen and set(seen) == {clipped}
    assert json.loads((tmp_path / "run" / "config.json").read_text())["max_grad_norm"] == clipped


def test_resume_refuses_a_point_system_file_edited_since_the_run_started(tmp_path, monkeypatch, capsys):
    """Before, --resume compared the scoring path with itself, trained on with the edited points and rewrote
    point_system.json with them; and every model file recorded the file as read at its save."""
    import torch

    from agents.train import RunFolder
    from pokersquares_env.cli import main
    from pokersquares_env.scoring import POINT_SYSTEMS

    monkeypatch.chdir(tmp_path)
    points = dict(POINT_SYSTEMS["american"])
    (tmp_path / "pts.json").write_text(json.dumps({"name": "pts", "points": points}))
    edited = {**points, "flush": 2, "one_pair": 40}
    opened = RunFolder.open

    def open_then_edit(self):  # the file is edited while the run trains: the model records the run's table
        opened(self)
        (tmp_path / "pts.json").write_text(json.dumps({"name": "pts", "points": edited}))

    monkeypatch.setattr(RunFolder, "open", open_then_edit)
    train(_cfg("fast-ppo", "run", scoring="pts.json", checkpoint_every=1))
    monkeypatch.setattr(RunFolder, "open", opened)
    stored = json.loads((tmp_path / "run" / "point_system.json").read_text())
    assert stored["points"]["flush"] == 20
    for name in ("model.pt", "checkpoints/latest.pt"):
        assert torch.load(tmp_path / "run" / name, weights_only=False)["point_system"] == stored
    before = _files(tmp_path / "run")
    with pytest.raises(ConfigError, match=re.escape("point_system.json'") + ".*" +
                       re.escape("flush: 2 (stored: 20); one_pair: 40 (stored: 2)")):
        train(TrainConfig(out="run", progress=False), resume=True, timesteps=2496)
    assert main(["train", "--out", "run", "--resume", "--timesteps", "2496", "--no-progress"]) == 2
    assert "flush: 2 (stored: 20)" in capsys.readouterr().err
    assert _files(tmp_path / "run") == before
    # the points restored: the run resumes, and point_system.json is left as the run's start wrote it
    (tmp_path / "pts.json").write_text(json.dumps({"name": "pts", "points": points}))
    (tmp_path / "run" / "point_system.json").write_text(json.dumps(stored))  # another spelling of the same table
    assert train(TrainConfig(out="run", progress=False), resume=True, timesteps=2496).steps == 2496
    assert (tmp_path / "run" / "point_system.json").read_text() == json.dumps(stored)


def test_resume_refuses_a_point_system_file_whose_win_threshold_was_edited(tmp_path, monkeypatch):
    """The win threshold is part of the points a run trained for: edited since the run started, --resume names it
    (a mutation audit dropped that comparison unseen)."""
    from pokersquares_env.scoring import POINT_SYSTEMS

    monkeypatch.chdir(tmp_path)
    table = {"name": "pts", "points": dict(POINT_SYSTEMS["american"]), "win_threshold": 100}
    (tmp_path / "pts.json").write_text(json.dumps(table))
    train(_cfg("fast-ppo", "run", scoring="pts.json", checkpoint_every=1))
    (tmp_path / "pts.json").write_text(json.dumps({**table, "win_threshold": 150}))
    before = _files(tmp_path / "run")
    with pytest.raises(ConfigError, match=re.escape("win_threshold: 150.0 (stored: 100.0)")):
        train(TrainConfig(out="run", progress=False), resume=True, timesteps=2496)
    assert _files(tmp_path / "run") == before
    # a stored file without its points is named as unreadable, not read into a KeyError
    (tmp_path / "run" / "point_system.json").write_text(json.dumps({"name": "pts", "points": [1, 2]}))
    with pytest.raises(ConfigError, match=re.escape("point_system.json' cannot be read (a dict without points)")):
        train(TrainConfig(out="run", progress=False), resume=True, timesteps=2496)


def test_a_maskable_ppo_checkpoints_games_are_taken_only_when_they_fit_the_run(capsys):
    """A checkpoint's games go on only if every sub-env has its observation, episode start (and potential, when
    shaped) and the three generators' states; otherwise the resumed run says so and starts new games (a mutation
    audit let episode starts of the wrong length through unseen)."""
    from types import SimpleNamespace

    from agents.train import _sb3_games

    model = SimpleNamespace(n_envs=2, observation_space=SimpleNamespace(shape=(522,)))
    rngs = {"torch": 1, "numpy": 2, "python": 3}
    games = {"obs": np.zeros((2, 522), np.float32), "starts": np.zeros(2, bool), "rngs": rngs}
    assert _sb3_games(games, model, shaped=False) is games and capsys.readouterr().err == ""
    for change, why in [({"starts": np.zeros(3, bool)}, "episode starts of shape (3,), not (2,)"),
                        ({"starts": [False, False]}, "episode starts of shape None, not (2,)"),
                        ({"obs": np.zeros((3, 522), np.float32)}, "an observation of shape (3, 522), not (2, 522)"),
                        ({"rngs": {"torch": 1}}, "no generator states")]:
        assert _sb3_games({**games, **change}, model, shaped=False) is None
        assert capsys.readouterr().err == (f"--resume: the checkpoint holds games that cannot be read ({why}): the "
                                           f"resumed run starts new games\n")
    assert _sb3_games(games, model, shaped=True) is None  # a shaped run needs each game's potential
    assert "no shaping potential for every game" in capsys.readouterr().err
    assert _sb3_games({**games, "phi": np.zeros(2)}, model, shaped=True) is not None


def test_resume_removes_the_evaluation_of_the_model_before(tmp_path):
    """Before, a resume without a final evaluation (or stopped by Ctrl-C) left evaluation/ describing the model it
    replaced."""
    out = tmp_path / "run"
    first = train(_cfg("fast-ppo", out, final_eval_games=2))
    summary = json.loads((out / "evaluation" / "summary.json").read_text())
    assert [row["model_steps"] for row in summary] == [1248] and first.evaluation[0]["model_steps"] == 1248
    train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=2496, final_eval_games=0)
    assert not (out / "evaluation").exists()
    again = train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=3744, final_eval_games=2)
    assert [row["model_steps"] for row in json.loads((out / "evaluation" / "summary.json").read_text())] == [3744]
    assert again.evaluation[0]["model_steps"] == 3744


def test_dqn_learning_starts_past_the_run_is_refused(tmp_path):
    """Before, ``--algo dqn --timesteps 3200`` (learning_starts 5000) trained nothing and said nothing.  A run that
    reaches learning_starts on its last iteration trains once, there, and is accepted (it was refused as one that
    would train nothing)."""
    from agents.config import check_dqn_budget

    out = tmp_path / "run"
    with pytest.raises(ConfigError, match=r"learning_starts=5000: .*run takes 3,200 \(timesteps=3200\).*"
                                          r"lower --learning-starts or raise --timesteps"):
        train(TrainConfig(algo="dqn", timesteps=3200, out=str(out), progress=False))
    assert not out.exists()
    # dqn steps in whole iterations of num_envs: 1590 steps are 1600
    check_dqn_budget(TrainConfig(algo="dqn", num_envs=16, timesteps=1590, learning_starts=1600).resolved())
    with pytest.raises(ConfigError, match="learning_starts=1601: .*run takes 1,600.*expected learning_starts at most"):
        check_dqn_budget(TrainConfig(algo="dqn", num_envs=16, timesteps=1590, learning_starts=1601).resolved())
    check_dqn_budget(TrainConfig(algo="fast-ppo", timesteps=3200).resolved())  # not a dqn option
    # a resume whose stored learning_starts the new budget does not pass is refused too, before writing
    train(_cfg("dqn", out))
    before = _files(out)
    stored = json.loads((out / "config.json").read_text())
    (out / "config.json").write_text(json.dumps({**stored, "learning_starts": 1601}))
    with pytest.raises(ConfigError, match="learning_starts=1601"):
        train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=1600)
    (out / "config.json").write_text(json.dumps(stored, indent=2) + "\n")
    assert _files(out) == before


@pytest.mark.parametrize("algo, module, package", [("maskable-ppo", "sb3_contrib", "sb3-contrib"),
                                                    ("maskable-ppo", "stable_baselines3", "stable-baselines3"),
                                                    ("fast-ppo", "torch", "torch"), ("dqn", "torch", "torch")])
def test_a_trainer_whose_extra_is_missing_is_refused_before_anything_is_written(algo, module, package, tmp_path,
                                                                                 monkeypatch):
    """Before, RunFolder.open() wrote config.json, point_system.json and checkpoints/ and only then did the trainer
    import torch or sb3-contrib: the ImportError left a half-made folder that refused the retry."""
    import sys

    from agents.config import MissingExtraError

    out = tmp_path / "run"
    trained = tmp_path / "trained"
    train(_cfg(algo, trained))  # a run to resume
    before = _files(trained)
    monkeypatch.setitem(sys.modules, module, None)  # what an install without the train extra finds
    message = f'{algo} needs {package}: pip install "pokersquares_env[train]"'
    with pytest.raises(MissingExtraError, match=re.escape(message)) as caught:
        train(_cfg(algo, out))
    assert isinstance(caught.value, ConfigError) and isinstance(caught.value, ImportError)
    assert caught.value.name == module
    assert not out.exists()
    with pytest.raises(MissingExtraError, match=re.escape(message)):
        train(TrainConfig(out=str(trained), progress=False), resume=True)
    assert _files(trained) == before


def test_dqn_run_ending_before_its_first_training_iteration_is_refused(tmp_path, monkeypatch):
    """Before, only learning_starts was compared with the run: ``num_envs=64, num_steps=20, learning_starts=0,
    timesteps=640`` ran 10 iterations and trained every 20th, so it took no gradient step and said nothing."""
    from agents.config import check_dqn_budget

    out = tmp_path / "run"
    short = dict(num_envs=64, num_steps=20, learning_starts=0, timesteps=640, hidden=[8, 8])
    with pytest.raises(ConfigError, match=r"num_steps=20: .*learning_starts=0 .*first after 1,280 steps, and the run "
                                          r"takes 640 \(timesteps=640\).*lower --num-steps"):
        train(_cfg("dqn", out, **short))
    assert not out.exists()
    # the first training iteration is the first multiple of num_steps at or past learning_starts: 49 steps of 16 are
    # 4 iterations, the first multiple of 3 past them is 6 (96 steps)
    with pytest.raises(ConfigError, match="first after 96 steps, and the run takes 80"):
        check_dqn_budget(TrainConfig(algo="dqn", num_envs=16, num_steps=3, learning_starts=49, timesteps=80).resolved())
    # a run that reaches its first training iteration at its very end is accepted, and trains there
    calls = _count_optimizer_steps(monkeypatch)
    train(_cfg("dqn", out, **{**short, "timesteps": 1280}))
    assert len(calls) == 1  # update_epochs 1: one gradient step at iteration 20
    calls.clear()
    train(_cfg("dqn", tmp_path / "run2", num_envs=16, num_steps=3, learning_starts=49, timesteps=96, hidden=[8, 8]))
    assert len(calls) == 1


def test_options_the_algorithm_does_not_use_are_warned_about(tmp_path, monkeypatch, capsys):
    """Before, a dqn option given to a PPO (or a PPO option to dqn) was accepted silently."""
    import warnings

    from agents import fast_ppo
    from agents.config import UnusedOptionWarning
    from pokersquares_env.cli import main

    with pytest.warns(UnusedOptionWarning) as caught:
        train(_cfg("fast-ppo", tmp_path / "a", buffer_size=7))
    assert [str(w.message) for w in caught] == ["buffer_size=7 is a dqn option; fast-ppo does not use it"]
    with pytest.warns(UnusedOptionWarning, match=r"^clip_coef=0.3 is a maskable-ppo and fast-ppo option; dqn does "
                                                 r"not use it$"):
        train(_cfg("dqn", tmp_path / "b", clip_coef=0.3))
    # an audit found maskable-ppo took --anneal-by silently: SB3 anneals its learning rate over the steps alone
    with pytest.warns(UnusedOptionWarning, match=r"^anneal_by='steps' is a fast-ppo and dqn option; maskable-ppo "
                                                 r"does not use it$"):
        train(_cfg("maskable-ppo", tmp_path / "e", anneal_by="steps"))
    with warnings.catch_warnings():  # the defaults, and options the algorithm uses: no warning
        warnings.simplefilter("error", UnusedOptionWarning)
        train(_cfg("dqn", tmp_path / "c", ent_coef=0.0, target_tau=0.5, anneal_by="steps"))
    monkeypatch.setattr(fast_ppo, "train", lambda cfg, run: None)
    capsys.readouterr()
    assert main(["train", "--algo", "fast-ppo", "--out", str(tmp_path / "d"), "--epsilon-end", "0.5",
                 "--final-eval-games", "0", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "pokersquares train: warning: epsilon_end=0.5 is a dqn option; fast-ppo does not use it\n" in err
    assert "UnusedOptionWarning" not in err


@pytest.mark.parametrize("algo", ["fast-ppo", "dqn"])
def test_a_diverged_run_stops_with_a_message_and_saves_nothing_of_it(tmp_path, algo, capsys):
    """An audit found that fast-ppo at --learning-rate 1e30 died with torch's bare "probability tensor contains
    either inf, nan or element < 0" traceback (dqn would have played on with NaN weights); the run now stops after
    the update that broke its weights, before they are checkpointed, saying which options to lower."""
    from agents.config import TrainingDiverged
    from pokersquares_env.cli import main

    with pytest.raises(TrainingDiverged, match=rf"^{algo} diverged at step [0-9,]+: .* hold NaN or infinity "
                                               r"\(learning_rate=1e\+30, .*lower --learning-rate"):
        train(_cfg(algo, tmp_path / "a", learning_rate=1e30, checkpoint_every=10**9))
    assert not (tmp_path / "a" / "checkpoints" / "latest.pt").exists()
    assert not (tmp_path / "a" / ("model.pt")).exists()
    capsys.readouterr()
    flags = ["--hidden", "16", "16", "--num-envs", "16", "--minibatch-size", "64" if algo == "dqn" else "208",
             *(["--learning-starts", "400"] if algo == "dqn" else [])]
    assert main(["train", "--algo", algo, "--out", str(tmp_path / "b"), "--learning-rate", "1e30", "--timesteps",
                 "3200", "--final-eval-games", "0", "--no-progress", *flags]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"pokersquares train: {algo} diverged at step ") and "Traceback" not in err
    # a sane run is not stopped by the check
    train(_cfg(algo, tmp_path / "c"))


def test_check_finite_names_the_step_and_the_weights_or_outputs_that_overflowed():
    """Weights finite but so large that the network's outputs overflow stop the run too, when a probe is given."""
    import torch

    from agents.config import TrainingDiverged, check_finite

    cfg = TrainConfig(algo="fast-ppo", learning_rate=0.01, max_grad_norm=0.5)
    net = torch.nn.Linear(4, 2)
    with torch.no_grad():
        net.weight.fill_(1e38)
        net.bias.zero_()
    check_finite(net, cfg, 1234)  # every weight is finite
    with pytest.raises(TrainingDiverged, match=r"^fast-ppo diverged at step 1,234: the network's outputs after an "
                                               r"update hold NaN or infinity \(learning_rate=0.01, max_grad_norm=0.5\)"):
        check_finite(net, cfg, 1234, probe=torch.full((1, 4), 10.0))
    with torch.no_grad():
        net.weight[0, 0] = float("nan")
    with pytest.raises(TrainingDiverged, match=r"^fast-ppo diverged at step 7: the weights 'weight' after an update"):
        check_finite(net, cfg, 7)


def test_a_bad_value_in_the_stored_config_names_the_file(tmp_path):
    """Before, --resume reported it as if it were given (``learning_rate=-1.0: expected ...``)."""
    out = tmp_path / "run"
    train(_cfg("fast-ppo", out))
    stored = json.loads((out / "config.json").read_text())
    (out / "config.json").write_text(json.dumps({**stored, "learning_rate": -1.0}))
    before = _files(out)
    with pytest.raises(ConfigError, match=re.escape(f"--resume: the stored config {str(out / 'config.json')!r} "
                                                    f"holds: learning_rate=-1.0: expected a positive number")):
        train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=2496)
    assert _files(out) == before


def test_dqn_resume_under_sync_vectorization_goes_on_with_the_iteration_and_generator(tmp_path):
    """Before, a sync run (whose checkpoints hold no games) restarted its iteration count and exploration generator
    on --resume, though every checkpoint holds both."""
    import torch

    out = tmp_path / "run"
    train(_cfg("dqn", out, vectorization="sync"))
    first = torch.load(out / "checkpoints" / "latest.pt", weights_only=False)
    assert first["games"] is None and first["iteration"] == 100
    train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=3200)
    assert torch.load(out / "checkpoints" / "latest.pt", weights_only=False)["iteration"] == 200


# ---------------------------------------------------------------------------- maskable-ppo on the lines net


def test_maskable_ppo_lines_net_defaults_to_the_lines_sizes_and_was_refused_before():
    """Before 2026-12-03 ``--algo maskable-ppo --net lines`` was a ConfigError ("supports only 'mlp'")."""
    cfg = TrainConfig(algo="maskable-ppo", net="lines").resolved()
    assert (cfg.net, cfg.hidden) == ("lines", [64, 64])  # not the MLP's [256, 256]
    # fast-ppo's learning rate: at SB3's 3e-4 the lines net learnt a third as fast (docs/training.md)
    assert cfg.learning_rate == 2e-3
    assert TrainConfig(algo="maskable-ppo", net="lines", learning_rate=1e-4).resolved().learning_rate == 1e-4
    mlp = TrainConfig(algo="maskable-ppo").resolved()
    assert mlp.hidden == [256, 256] and mlp.learning_rate == 3e-4  # the MLP defaults are unchanged
    assert TrainConfig(algo="maskable-ppo", net="lines", hidden=[8]).resolved().hidden == [8]


def test_maskable_ppo_trains_the_lines_net_whose_logits_follow_permuted_rows_and_loads_as_an_agent(tmp_path):
    import torch
    from sb3_contrib import MaskablePPO

    from agents.evaluation import evaluate
    from agents.sb3_policy import LinesPolicy
    from pokersquares_env.env import PokerSquaresEnv

    train(_cfg("maskable-ppo", tmp_path / "run", net="lines"))
    model = MaskablePPO.load(tmp_path / "run" / "model.zip", device="cpu")
    policy = model.policy
    assert isinstance(policy, LinesPolicy) and isinstance(policy.action_net, torch.nn.Identity)
    assert sum(p.numel() for p in policy.parameters()) == sum(p.numel() for p in policy.mlp_extractor.parameters())

    env = PokerSquaresEnv()
    obs, _ = env.reset(seed=5)
    for cell in (0, 7, 13, 21):
        obs, *_ = env.step(cell)
    order = [3, 0, 4, 1, 2]  # new row i holds old row order[i]
    cells = [5 * order[r] + c for r in range(5) for c in range(5)]
    permuted = obs.copy()
    permuted[: 25 * 18] = obs[: 25 * 18].reshape(25, 18)[cells].reshape(-1)

    def logits(o):
        with torch.no_grad():
            tensor = policy.obs_to_tensor(o)[0]
            return policy.get_distribution(tensor).distribution.logits[0].numpy(), policy.predict_values(tensor).item()

    (a, value_a), (b, value_b) = logits(obs), logits(permuted)
    np.testing.assert_allclose(b, a[cells], rtol=1e-5, atol=1e-5)  # an MLP's logits would not follow the rows
    assert abs(value_a - value_b) < 1e-5

    result = evaluate([f"ppo:{tmp_path / 'run'}"], games=3, seed=0, progress=False)
    assert result.summary[0]["errors"] == 0 and result.summary[0]["games"] == 3


@pytest.mark.parametrize("bad", ["64", [], [0], [True, 8], [8.5], None])
def test_lines_policy_names_bad_layer_sizes(bad):
    """A string was read character by character ("64" -> layers of 6 and 4)."""
    import gymnasium as gym
    from sb3_contrib import MaskablePPO

    import pokersquares_env  # noqa: F401
    from agents.sb3_policy import LinesPolicy

    with pytest.raises(ValueError, match=re.escape(f"lines_hidden={bad!r}: expected a list of one or more positive")):
        MaskablePPO(LinesPolicy, gym.make("PokerSquares-v0"), n_steps=64, batch_size=32, device="cpu",
                    policy_kwargs={"lines_hidden": bad})


def test_lines_policy_refuses_a_net_arch_it_would_ignore(tmp_path):
    """net_arch sizes SB3's MLP extractor, which LinesPolicy replaces: it was silently ignored.  SB3's default, which
    a saved model stores, still loads."""
    import gymnasium as gym
    from sb3_contrib import MaskablePPO

    import pokersquares_env  # noqa: F401
    from agents.sb3_policy import LinesPolicy

    env = gym.make("PokerSquares-v0")
    with pytest.raises(ValueError, match=re.escape("net_arch=[32, 32]: LinesPolicy's layers are lines_hidden")):
        MaskablePPO(LinesPolicy, env, n_steps=64, batch_size=32, device="cpu", policy_kwargs={"net_arch": [32, 32]})
    model = MaskablePPO(LinesPolicy, env, n_steps=64, batch_size=32, device="cpu", policy_kwargs={"lines_hidden": [8]})
    model.save(tmp_path / "m.zip")
    assert MaskablePPO.load(tmp_path / "m.zip", device="cpu").policy._lines_hidden == [8]


def test_maskable_ppo_never_trains_with_a_negative_learning_rate(tmp_path):
    """SB3's progress_remaining falls below 0 in the last rollout when the budget is rounded up (257 asked, 512
    taken): the annealed rate was lr x (1 - 512/257) < 0, so the last update climbed the PPO loss (-2.98e-4 in the
    saved optimizer).  It is clamped at 0, as an exact budget already ended."""
    from sb3_contrib import MaskablePPO

    out = tmp_path / "run"
    result = train(_cfg("maskable-ppo", out, timesteps=257, num_envs=4, num_steps=64, minibatch_size=64,
                        anneal_lr=True, learning_rate=3e-4))
    assert result.steps == 512
    model = MaskablePPO.load(result.model_path, device="cpu")
    assert model.policy.optimizer.param_groups[0]["lr"] == 0.0
    assert model.lr_schedule(-0.5) == 0.0 and model.lr_schedule(0.5) == pytest.approx(1.5e-4)



@pytest.mark.parametrize("name, text", [("c.json", '{"algo": "fast-ppo", "timesteps": 100, "algo": "dqn"}'),
                                        ("c.yaml", "algo: fast-ppo\ntimesteps: 100\nalgo: dqn\n")])
def test_a_config_file_naming_an_option_twice_is_refused(tmp_path, name, text):
    """Before, the last of the two values won silently (dqn trained where fast-ppo was read first)."""
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError, match=r"key 'algo' is given twice in one mapping: expected each option once"):
        TrainConfig.load(path)
    nested = tmp_path / "n.yaml"  # a list holding one value twice is no repeated key
    nested.write_text("algo: fast-ppo\nhidden: [8, 8]\n")
    assert TrainConfig.load(nested).hidden == [8, 8]


def test_maskable_ppo_logs_sb3s_episode_statistics_on_the_native_env(tmp_path):
    """SB3's own log (tb/maskable_ppo_1) had no rollout/ep_rew_mean on the native vector env (no Monitor, which
    make_vec_env adds on the other path); a VecMonitor inside the shaping wrapper now records the games' rewards."""
    import glob

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out = tmp_path / "run"
    train(_cfg("maskable-ppo", out, timesteps=1024, num_envs=4, num_steps=128, shaping="heuristic",
               reward_scale=1.0))
    (events,) = glob.glob(str(out / "tb" / "maskable_ppo_1" / "events*"))
    log = EventAccumulator(events)
    log.Reload()
    assert {"rollout/ep_rew_mean", "rollout/ep_len_mean"} <= set(log.Tags()["scalars"])
    assert {e.value for e in log.Scalars("rollout/ep_len_mean")} == {25.0}  # whole games of 25 placements
    assert all(0 <= e.value <= 725 for e in log.Scalars("rollout/ep_rew_mean"))  # a grid's points


# ---- fast-ppo's maths (a mutation audit found every change to the GAE and the PPO loss unseen) ---------------------


def test_gae_stops_at_a_game_end_bootstraps_the_last_step_and_adds_the_values():
    torch = pytest.importorskip("torch")
    from agents.fast_ppo import gae

    gamma, lam = 0.9, 0.8
    rew = torch.tensor([[1.0, 0.0], [2.0, 1.0], [4.0, 3.0]])
    done = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]])  # sub-env 0's game ends on step 1
    val = torch.tensor([[0.5, 1.0], [0.25, 2.0], [1.5, 0.5]])
    nxt = torch.tensor([3.0, -1.0])
    adv, ret = gae(rew, done, val, nxt, gamma, lam)
    expected = torch.zeros(3, 2)
    for n in range(2):  # the textbook recursion, written out
        last = 0.0
        for t in (2, 1, 0):
            following = nxt[n] if t == 2 else val[t + 1, n]
            keep = 1.0 - done[t, n]
            delta = rew[t, n] + gamma * following * keep - val[t, n]
            last = delta + gamma * lam * keep * last
            expected[t, n] = last
    assert torch.allclose(adv, expected) and torch.allclose(ret, adv + val)
    assert adv[1, 0] == pytest.approx(2.0 - 0.25)  # the step that ends a game: its reward less its value, nothing more
    assert adv[2, 1] == pytest.approx(3.0 + gamma * -1.0 - 0.5)  # the last step bootstraps from next_value
    assert adv[0, 0] == pytest.approx(1.0 + gamma * 0.25 - 0.5 + gamma * lam * 1.75)  # no reward after the end


def test_ppo_losses_mask_clip_normalise_and_weigh_as_documented():
    torch = pytest.importorskip("torch")
    from agents.fast_ppo import ppo_losses

    scores = torch.tensor([[1.0, 2.0, 0.5, 3.0], [0.0, 0.0, 0.0, 0.0]])
    mask = torch.tensor([[True, True, False, True], [True, False, True, False]])
    act = torch.tensor([1, 2])
    legal_logp = torch.log_softmax(torch.tensor([1.0, 2.0, 3.0]), 0)
    logp_ref = torch.stack([legal_logp[1], torch.log(torch.tensor(0.5))])
    adv, ret, value = torch.tensor([2.0, -1.0]), torch.tensor([1.0, 0.0]), torch.tensor([0.0, 2.0])
    total, pg, v, ent, logp, ratio = ppo_losses(scores, value, mask, act, logp_ref, adv, ret, 0.2, 0.01, 0.5)
    assert total.item() == pytest.approx(pg.item() - 0.01 * ent.item() + 0.5 * v.item())
    double_vf = ppo_losses(scores, value, mask, act, logp_ref, adv, ret, 0.2, 0.01, 1.0)[0]
    assert double_vf.item() == pytest.approx(total.item() + 0.5 * v.item())  # vf_coef weighs the value loss
    assert torch.allclose(logp, logp_ref) and torch.allclose(ratio, torch.ones(2))
    norm = (adv - adv.mean()) / (adv.std() + 1e-8)
    assert pg.item() == pytest.approx(-norm.mean().item())  # ratio 1: minus the mean normalised advantage
    assert v.item() == pytest.approx(0.5 * ((1.0) ** 2 + 2.0 ** 2) / 2)
    uniform_ent = -(legal_logp.exp() * legal_logp).sum() + torch.log(torch.tensor(2.0))
    assert ent.item() == pytest.approx(uniform_ent.item() / 2)  # legal cells only: log 2 for the uniform row
    # an illegal cell's score changes nothing
    bumped = scores.clone()
    bumped[0, 2] += 100.0
    again = ppo_losses(bumped, value, mask, act, logp_ref, adv, ret, 0.2, 0.01, 0.5)
    assert all(torch.allclose(x, y) for x, y in zip(again, (total, pg, v, ent, logp, ratio)))
    # clipping: a ratio of 1.5 counts as 1.2 for a positive advantage, in full for a negative one
    old = logp_ref - torch.log(torch.tensor([1.5, 1.5]))
    _, pg_clip, *_ = ppo_losses(scores, value, mask, act, old, adv, ret, 0.2)
    assert pg_clip.item() == pytest.approx(((-norm[0] * 1.2) + (-norm[1] * 1.5)).item() / 2, rel=1e-5)
    one = ppo_losses(scores[:1], value[:1], mask[:1], act[:1], logp_ref[:1], adv[:1], ret[:1], 0.2)[1]
    assert one.item() == pytest.approx(-2.0)  # one sample: not normalised (its std is NaN)


# ---- dqn's maths (a mutation audit found its target, buffer sampling and target updates unseen) --------------------


class _FixedQ:
    """A stand-in network returning fixed Q-values (and no value head)."""

    def __init__(self, q):
        self.q = q

    def __call__(self, obs):
        return self.q, None


def test_dqn_targets_use_the_online_best_legal_cell_valued_by_the_target_and_stop_at_the_end():
    torch = pytest.importorskip("torch")
    from agents.dqn import dqn_targets

    online = torch.tensor([[9.0, 1.0, 5.0], [0.0, 2.0, 1.0]])  # cell 0 is the online favourite, but illegal in row 0
    target = torch.tensor([[100.0, 10.0, 20.0], [7.0, 30.0, 40.0]])
    mask = torch.tensor([[False, True, True], [True, True, True]])
    rewards, dones = torch.tensor([1.0, 2.0]), torch.tensor([0.0, 0.0])
    y = dqn_targets(_FixedQ(online), _FixedQ(target), rewards, None, mask, dones, 0.5)
    # row 0: online's best legal cell is 2, valued 20 by the target; row 1: online's best is 1, valued 30 (not 40)
    assert y.tolist() == [1.0 + 0.5 * 20.0, 2.0 + 0.5 * 30.0]
    y = dqn_targets(_FixedQ(online), _FixedQ(target), rewards, None, mask, torch.tensor([1.0, 0.0]), 0.5)
    assert y.tolist() == [1.0, 17.0]  # a transition that ended the game: its reward alone


def test_soft_update_moves_the_target_by_tau():
    torch = pytest.importorskip("torch")
    from agents.dqn import soft_update

    online, target = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    before = [p.detach().clone() for p in target.parameters()]
    soft_update(target, online, 0.25)
    for b, p, t in zip(before, online.parameters(), target.parameters()):
        assert torch.allclose(t, 0.75 * b + 0.25 * p)
    soft_update(target, online, 1.0)
    assert all(torch.equal(p, t) for p, t in zip(online.parameters(), target.parameters()))


def test_dqn_defaults_are_the_documented_ones_and_an_unresolved_config_validates():
    """The defaults docs/training.md gives for dqn, as a run resolves them; and ``validate`` takes a config whose
    per-algorithm options are still None (max_grad_norm among them) without asking for them."""
    cfg = TrainConfig(algo="dqn").resolved()
    assert (cfg.net, cfg.hidden, cfg.learning_rate) == ("lines", [64, 64], 5e-4)
    assert (cfg.num_envs, cfg.num_steps, cfg.minibatch_size, cfg.update_epochs) == (64, 1, 256, 1)
    assert (cfg.max_grad_norm, cfg.gamma) == (10.0, 1.0)
    TrainConfig(algo="dqn").validate()
    TrainConfig(algo="fast-ppo").validate()


def test_fast_ppo_defaults_are_the_documented_ones():
    """The fast-ppo hyper-parameters docs/training.md gives as its defaults ("now the fast-ppo defaults")."""
    cfg = TrainConfig(algo="fast-ppo").resolved()
    assert (cfg.net, cfg.hidden, cfg.learning_rate, cfg.ent_coef) == ("lines", [64, 64], 2e-3, 0.001)
    assert (cfg.num_envs, cfg.num_steps, cfg.minibatch_size, cfg.update_epochs) == (256, 50, 1600, 4)


def test_a_resolved_configs_layer_list_is_its_own():
    """Changing the hidden sizes of one resolved config leaves the algorithm's defaults (and other configs) alone."""
    for algo in sorted(ALGOS):
        first = TrainConfig(algo=algo).resolved()
        expected = list(first.hidden)
        first.hidden.append(7)
        assert TrainConfig(algo=algo).resolved().hidden == expected


def test_options_left_to_the_algorithms_default_are_not_warned_about():
    """An option the algorithm does not use is warned about only when set to something other than the default: a
    config file's `ent_coef: null` for dqn (TrainConfig's default) or its own default value is no warning."""
    from agents.config import unused_options

    assert unused_options("dqn", {"ent_coef": None, "clip_coef": 0.2, "buffer_size": 5}) == []
    assert unused_options("fast-ppo", {"buffer_size": 200_000, "ent_coef": None}) == []
    assert unused_options("dqn", {"ent_coef": 0.5}) == [
        "ent_coef=0.5 is a maskable-ppo and fast-ppo option; dqn does not use it"]


def test_the_replay_buffer_keeps_each_transitions_fields_together_and_samples_every_one():
    """What ``add`` stores and ``sample`` returns, field by field: a transition's next observation, reward and end
    must come back with its own observation and cell (an audit swapped reward and done, or stored the observation
    as the next one, unseen), and every stored transition, the last one included, can be drawn."""
    pytest.importorskip("torch")
    from agents.dqn import ReplayBuffer

    n = 10
    buffer = ReplayBuffer(n, 6, seed=0)
    codes = np.arange(n)
    bits = ((codes[:, None] >> np.arange(6)) & 1).astype(np.uint8)  # row i: i in binary
    next_bits = (((codes[:, None] + 17) >> np.arange(6)) & 1).astype(np.uint8)
    masks = np.zeros((n, 25), bool)
    masks[codes, codes] = True
    buffer.add(bits, codes, codes * 1.5, next_bits, masks, codes % 2)
    obs, action, reward, next_obs, next_mask, done = (t.numpy() for t in buffer.sample(4000))
    assert sorted(set(action.tolist())) == list(range(n))  # the last stored transition too
    np.testing.assert_array_equal(obs, bits[action])
    np.testing.assert_array_equal(next_obs, next_bits[action])
    np.testing.assert_array_equal(reward, (action * 1.5).astype(np.float32))
    np.testing.assert_array_equal(done, (action % 2).astype(np.float32))
    np.testing.assert_array_equal(next_mask, masks[action])


def _with_meta(arrays, **changes):
    """The arrays of a saved replay buffer with fields of its JSON ``meta`` changed."""
    return {**arrays, "meta": np.array(json.dumps({**json.loads(str(arrays["meta"])), **changes}))}


def _saved_full_buffer(tmp_path, size, damage):
    """Save a full ReplayBuffer of ``size`` transitions (3 observation bits) to ``tmp_path/b.npz``, rewritten with
    ``damage(arrays)``; return the path."""
    from agents.dqn import ReplayBuffer

    buffer = ReplayBuffer(size, 3, seed=0)
    buffer.add(np.zeros((size, 3), np.uint8), np.arange(size), np.zeros(size), np.zeros((size, 3), np.uint8),
               np.ones((size, 25), bool), np.zeros(size))
    path = tmp_path / "b.npz"
    buffer.save(path)
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    np.savez(path, **damage(arrays))
    return path


def test_a_saved_buffer_whose_ring_position_is_its_capacity_is_refused(tmp_path):
    pytest.importorskip("torch")
    from agents.dqn import ReplayBuffer

    path = _saved_full_buffer(tmp_path, 4, lambda arrays: _with_meta(arrays, pos=4))
    with pytest.raises(ValueError, match="holds ring position 4 and size 4"):
        ReplayBuffer.load(path, 4, 3)


def test_dqn_stores_the_moves_of_the_games_only_and_marks_their_ends(tmp_path):
    """The transitions a run stores: each a move of a game (one more card on the board after it, never the
    autoreset step from a finished board to a new deal), done exactly where the move filled the board, with no
    legal cell after it (an audit stored the reset steps, or the never-set truncation as the end, unseen)."""
    from agents.dqn import BUFFER_FILE, ReplayBuffer
    from pokersquares_env.env import CARD_OFFSET, OBS_SIZE

    out = tmp_path / "run"
    train(_cfg("dqn", out, buffer_size=4000))
    buffer = ReplayBuffer.load(out / "checkpoints" / BUFFER_FILE, 4000, OBS_SIZE)
    size = buffer.size
    assert size == 16 * (100 - 3)  # 100 steps of 16 games, less each game's 3 autoreset steps (26, 52, 78)
    placed = buffer.obs[:size, :CARD_OFFSET].sum(1) // 2
    placed_next = buffer.next_obs[:size, :CARD_OFFSET].sum(1) // 2
    np.testing.assert_array_equal(placed_next, placed + 1)
    assert buffer.obs[:size, CARD_OFFSET:CARD_OFFSET + 18].any(1).all()  # every stored state has a card to place
    ends = placed_next == 25
    assert ends.sum() > 0
    np.testing.assert_array_equal(buffer.done[:size], ends.astype(np.float32))
    assert not buffer.next_mask[:size][ends].any() and buffer.next_mask[:size][~ends].any(1).all()


@pytest.mark.parametrize("schedule", ["greedy", "random", "decaying"])
def test_dqn_explores_with_probability_epsilon(tmp_path, monkeypatch, schedule):
    """A run whose optimiser never steps keeps its first network: at epsilon 0 every stored move is that network's
    best legal cell, at epsilon 1 the moves are random legal cells, most of them not its best, and epsilon falling
    from 1 to 0 over half the run explores early and never after (an audit that flipped the exploration test, random
    with probability 1 - epsilon, went unseen)."""
    import torch

    from agents.dqn import BUFFER_FILE, ReplayBuffer
    from agents.fast_ppo import load_policy
    from pokersquares_env.env import CARD_FEATURES, CARD_OFFSET, NUM_CELLS, OBS_SIZE

    monkeypatch.setattr(torch.optim.Adam, "step", lambda self, closure=None: None)  # the network stays as made
    start, end = {"greedy": (0.0, 0.0), "random": (1.0, 1.0), "decaying": (1.0, 0.0)}[schedule]
    out = tmp_path / "run"
    train(_cfg("dqn", out, buffer_size=4000, epsilon_start=start, epsilon_end=end, exploration_fraction=0.5))
    buffer = ReplayBuffer.load(out / "checkpoints" / BUFFER_FILE, 4000, OBS_SIZE)
    size = buffer.size  # 16 games x 100 steps less the autoreset steps, in the order played (the ring never wraps)
    obs = buffer.obs[:size]
    legal = ~obs[:, :CARD_OFFSET].reshape(size, NUM_CELLS, CARD_FEATURES).any(2)  # the empty cells
    model, _ = load_policy(out / "model.pt")
    with torch.no_grad():
        q = model(torch.as_tensor(obs))[0].numpy().astype(np.float64)
    q[~legal] = -np.inf
    best = q.max(1)
    taken = q[np.arange(size), buffer.action[:size]]
    assert np.isfinite(taken).all()  # always a legal cell
    greedy = taken >= best - 1e-5 * np.maximum(1.0, np.abs(best))
    if schedule == "greedy":
        assert greedy.all()
    elif schedule == "random":
        assert greedy.mean() < 0.3, greedy.mean()  # 0.19 here: a random cell is often tied with the best
    else:
        # the first 10 steps' 160 moves at epsilon 1 to 0.82; from step 50 (800 steps, half the run; 784 moves
        # stored before it, less step 26's autoreset) epsilon is 0
        assert greedy[:160].mean() < 0.4, greedy[:160].mean()  # 0.275 here
        assert greedy[784:].all()


def test_an_evaluation_falls_due_every_eval_every_steps_exactly(tmp_path):
    """With eval_every one rollout (16 games x 26 steps = 416), every rollout ends with an evaluation: at 416, 832
    and 1,248 steps (an audit that waited for more than eval_every steps evaluated at 832 alone, unseen)."""
    out = tmp_path / "run"
    train(_cfg("fast-ppo", out, eval_every=416, eval_games=2))
    header, *rows = (out / "curve.csv").read_text().splitlines()
    column = header.split(",").index("eval_score")
    assert [(r.split(",")[0], r.split(",")[column] != "") for r in rows] == [("416", True), ("832", True),
                                                                           ("1248", True)]


def test_a_progress_file_is_read_with_its_schedules_and_checked_value_by_value(tmp_path):
    """progress.json's schedule positions may be -1 (nothing done yet) up to the steps done, and default to the
    steps done in an older file without them; a bool, a negative or an infinite count is refused naming it (a
    mutation audit let True through as 1, refused -1 and read a missing schedule as 0, unseen)."""
    from agents.config import ConfigError
    from agents.train import SCHEDULE_KEYS, _read_progress

    path = tmp_path / "progress.json"
    path.write_text(json.dumps({"steps": 100, "seconds": 1.5, "episodes": 4}))
    read = _read_progress(path)
    assert {key: read[key] for key in SCHEDULE_KEYS} == dict.fromkeys(SCHEDULE_KEYS, 100)  # an older file
    path.write_text(json.dumps({"steps": 100, "seconds": 1.5, "episodes": 4, **dict.fromkeys(SCHEDULE_KEYS, -1)}))
    assert {key: _read_progress(path)[key] for key in SCHEDULE_KEYS} == dict.fromkeys(SCHEDULE_KEYS, -1)
    for key, value, expected in [("steps", True, "a number >= 0"), ("episodes", -1, "a number >= 0"),
                                 ("seconds", "Infinity", "a number >= 0"),
                                 ("last_eval_step", 101, "an integer from -1 to the steps done (100)"),
                                 ("last_row_step", -2, "an integer from -1 to the steps done (100)")]:
        data = {"steps": 100, "seconds": 1.5, "episodes": 4, key: value}
        path.write_text(json.dumps(data).replace('"Infinity"', "Infinity"))
        shown = "inf" if value == "Infinity" else repr(value)
        with pytest.raises(ConfigError, match=re.escape(f"progress.json': {key}={shown}: expected {expected}")):
            _read_progress(path)
    for key in ("steps", "seconds", "episodes"):  # a missing count is named (it was read as 0)
        data = {"steps": 100, "seconds": 1.5, "episodes": 4}
        del data[key]
        path.write_text(json.dumps(data))
        with pytest.raises(ConfigError, match=re.escape(f"progress.json' has no {key}: expected the JSON object")):
            _read_progress(path)


def test_a_resume_may_keep_the_budget_the_run_already_took_but_not_go_below_it(tmp_path):
    from agents.config import ConfigError
    from agents.train import _check_resume_budget

    progress = tmp_path / "progress.json"
    progress.write_text(json.dumps({"steps": 1248, "seconds": 1.0, "episodes": 48}))
    _check_resume_budget(_cfg("fast-ppo", tmp_path, timesteps=1248), progress)  # a finished run: nothing to train
    with pytest.raises(ConfigError, match="timesteps=1247 is below the 1,248 steps the run"):
        _check_resume_budget(_cfg("fast-ppo", tmp_path, timesteps=1247), progress)


def test_dqn_learns_from_learning_starts_on_and_takes_update_epochs_steps_a_round(tmp_path, monkeypatch):
    """Learning starts on the step that reaches ``learning_starts`` (not one round later), and each round takes
    ``update_epochs`` gradient steps."""
    calls = _count_optimizer_steps(monkeypatch)
    train(_cfg("dqn", tmp_path / "a", num_envs=16, learning_starts=32, timesteps=32, minibatch_size=8))
    assert len(calls) == 1  # one round of one epoch, on the last step: 32 >= 32 (the budget check accepts it)
    calls.clear()
    train(_cfg("dqn", tmp_path / "b", num_envs=16, learning_starts=32, timesteps=96, minibatch_size=8,
               update_epochs=3))
    assert len(calls) == 3 * 5  # rounds at steps 32, 48, 64, 80 and 96


def test_dqn_with_no_exploration_phase_trains(tmp_path):
    """``exploration_fraction=0`` (epsilon at its end value from the first step) is accepted, and must train."""
    result = train(_cfg("dqn", tmp_path / "run", exploration_fraction=0.0, timesteps=480, learning_starts=160))
    assert result.steps == 480


def test_dqn_target_follows_the_online_network_and_the_learning_rate_anneals_to_its_floor(tmp_path):
    """With ``target_tau=1`` the target is a copy of the online network after every gradient step (an audit swapped
    the soft update's direction: the online network was reset to the target, and nothing was learned); with
    ``anneal_lr`` the learning rate ends at 2% of its start."""
    import torch

    from agents.fast_ppo import make_net

    out = tmp_path / "run"
    train(_cfg("dqn", out, target_tau=1.0, anneal_lr=True, learning_rate=0.001))
    ckpt = torch.load(out / "checkpoints" / "latest.pt", map_location="cpu", weights_only=False)
    torch.manual_seed(3)
    start = make_net("lines", [16, 16]).state_dict()  # the weights the run began with (seed 3)
    assert all(torch.equal(ckpt["state_dict"][k], ckpt["target"][k]) for k in start)
    assert any(not torch.equal(ckpt["state_dict"][k], start[k]) for k in start)
    assert ckpt["optimizer"]["param_groups"][0]["lr"] == pytest.approx(0.02 * 0.001)


def test_a_resumed_dqn_without_its_buffer_seeds_a_new_one_from_the_step(tmp_path, monkeypatch):
    """A resume whose buffer file is gone starts an empty buffer seeded with seed + step, not the run's first seed
    (which would draw the first run's sample order again)."""
    from agents import dqn
    from agents.dqn import BUFFER_FILE

    out = tmp_path / "run"
    train(_cfg("dqn", out))
    (out / "checkpoints" / BUFFER_FILE).unlink()
    seeds = []
    real = dqn.ReplayBuffer.__init__

    def spy(self, capacity, obs_size, seed):
        seeds.append(seed)
        real(self, capacity, obs_size, seed)

    monkeypatch.setattr(dqn.ReplayBuffer, "__init__", spy)
    done = json.loads((out / "progress.json").read_text())["steps"]
    train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=done + 16)
    assert seeds == [3 + done]


def test_replay_samples_uniformly_among_the_stored_transitions():
    pytest.importorskip("torch")
    from agents.dqn import ReplayBuffer

    buffer = ReplayBuffer(200, 3, seed=0)
    buffer.add(np.zeros((100, 3), np.uint8), np.arange(100), np.zeros(100), np.zeros((100, 3), np.uint8),
               np.ones((100, 25), bool), np.zeros(100))
    actions = buffer.sample(1000)[1].numpy()
    assert actions.max() < 100 and len(set(actions.tolist())) > 90  # drawn from all 100 stored, none beyond them


def test_checkpoints_fall_on_every_interval_and_the_final_evaluation_plays_its_own_seed(tmp_path):
    """A mutation audit found unseen: `> every` (each step_N checkpoint one interval late, the first skipped), and the
    final evaluation played on eval_seed's deals instead of final_eval_seed's."""
    from agents.evaluation import deal_deck
    from pokersquares_env.cards import parse_card

    out = tmp_path / "run"
    train(_cfg("fast-ppo", out, checkpoint_every=416, final_eval_games=3, final_eval_seed=11, eval_seed=5))
    names = sorted(p.name for p in (out / "checkpoints").glob("step_*"))
    assert names == ["step_1248.pt", "step_416.pt", "step_832.pt"], names
    games = [json.loads(line) for line in (out / "evaluation" / "games.jsonl").read_text().splitlines()]
    decks = {g["meta"]["deal"]: [parse_card(c) for c in g["deck"]] for g in games}
    assert sorted(decks) == [0, 1, 2]
    assert all(decks[d] == list(deal_deck(11, d)) for d in decks)


def test_dqn_exploration_falls_linearly_to_its_end(tmp_path, monkeypatch):
    """epsilon = start + min(1, step / (fraction * timesteps)) * (end - start), as logged (a constant went unseen)."""
    from agents import train as train_module

    logged = []
    real = train_module.RunFolder.scalars

    def spy(self, step, values):
        if "epsilon" in values:
            logged.append((step, values["epsilon"]))
        return real(self, step, values)

    monkeypatch.setattr(train_module.RunFolder, "scalars", spy)
    cfg = _cfg("dqn", tmp_path / "run", epsilon_start=1.0, epsilon_end=0.1, exploration_fraction=0.5)
    train(cfg)
    assert len(logged) >= 2
    explore = 0.5 * cfg.timesteps
    for step, eps in logged:  # logged after the step's N transitions: epsilon was set N steps before
        acted = step - cfg.num_envs
        assert eps == pytest.approx(1.0 + min(1.0, acted / explore) * (0.1 - 1.0))
    assert logged[0][1] > 0.1 + 1e-6 and logged[-1][1] == pytest.approx(0.1)


def test_print_config_warns_of_options_the_algorithm_does_not_use(capsys):
    """--print-config shows the config a run would train with, and now warns as the run would of an option the
    algorithm does not use (it said nothing); a config that uses them all gets no warning."""
    from pokersquares_env.cli import main

    assert main(["train", "--algo", "fast-ppo", "--buffer-size", "7", "--print-config"]) == 0
    out = capsys.readouterr()
    assert out.err == "pokersquares train: warning: buffer_size=7 is a dqn option; fast-ppo does not use it\n"
    assert json.loads(out.out)["buffer_size"] == 7
    assert main(["train", "--algo", "dqn", "--buffer-size", "7", "--print-config"]) == 0
    assert capsys.readouterr().err == ""


def test_print_config_warns_of_a_dqn_run_that_training_would_refuse(capsys):
    """A dqn config whose run ends before learning_starts steps (or before its first training round) is refused by
    ``pokersquares train``; --print-config still shows it, but now says so on stderr (it said nothing)."""
    from pokersquares_env.cli import main

    assert main(["train", "--algo", "dqn", "--timesteps", "1000", "--print-config"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["learning_starts"] == 5000
    assert out.err.startswith("pokersquares train: warning: training this config would be refused: learning_starts=5000")
    assert "takes 1,024 (timesteps=1000)" in out.err and out.err.count("\n") == 1
    args = ["train", "--algo", "dqn", "--num-envs", "64", "--num-steps", "20", "--learning-starts", "0",
            "--timesteps", "640", "--print-config"]
    assert main(args) == 0
    assert "would be refused: num_steps=20" in capsys.readouterr().err
    assert main(args[:-3] + ["--timesteps", "1280", "--print-config"]) == 0  # the first round comes at 1,280 steps
    assert capsys.readouterr().err == ""
    assert main(["train", "--algo", "fast-ppo", "--timesteps", "1000", "--print-config"]) == 0  # dqn only
    assert capsys.readouterr().err == ""


def test_dqn_logs_the_losses_of_its_last_rounds_too(tmp_path, monkeypatch):
    """td_loss was written every 25 iterations only, so the rounds after the last 25th were never logged (a run of
    fewer learning iterations logged none): the remainder is logged at the end."""
    from agents import train as train_module

    logged = []
    real = train_module.RunFolder.scalars

    def spy(self, step, values):
        if "td_loss" in values:
            logged.append(step)
        return real(self, step, values)

    monkeypatch.setattr(train_module.RunFolder, "scalars", spy)
    train(_cfg("dqn", tmp_path / "run", timesteps=640, learning_starts=480))  # 40 iterations; rounds from the 31st
    assert logged == [640]


def test_curve_train_score_is_the_mean_of_the_games_since_the_last_row(tmp_path):
    """train_score is the scores of the games finished since the previous row, not a running mean of the whole run
    (a mutation audit found the window never cleared unseen)."""
    import csv

    from agents import train as train_module

    cfg = TrainConfig(algo="fast-ppo", timesteps=1000, out=str(tmp_path / "run"), eval_every=0, progress=False,
                      checkpoint_every=0, final_eval_games=0).resolved()
    run = train_module.RunFolder(cfg)
    run.open()
    try:
        run.start(total=1000)
        run.episodes([10.0, 20.0])
        run.step(20, None)
        run.episodes([40.0])
        run.step(40, None)
    finally:
        run.close()
    rows = list(csv.DictReader((tmp_path / "run" / "curve.csv").open()))
    assert [float(r["train_score"]) for r in rows] == [15.0, 40.0]


@pytest.mark.parametrize("algo", ["fast-ppo", "dqn"])
def test_a_resume_without_stored_games_deals_new_games_too(tmp_path, monkeypatch, algo):
    """A checkpoint without the games in progress (an older one, or sync vectorization) resumes on fresh deals from a
    seed of its progress, not the first run's deals again (a mutation audit found that path untested, for fast-ppo
    and later for dqn)."""
    import torch

    from agents import train as train_module

    dealt = _spy_deals(monkeypatch)
    real_step = _stop_halfway(monkeypatch, algo)
    out = tmp_path / "run"
    train(_cfg(algo, out))
    first = list(dealt)
    ckpt = torch.load(out / "checkpoints" / "latest.pt", weights_only=False)
    ckpt.pop("games")
    torch.save(ckpt, out / "checkpoints" / "latest.pt")
    monkeypatch.setattr(train_module.RunFolder, "step", real_step)
    dealt.clear()
    train(TrainConfig(out=str(out), progress=False), resume=True)
    assert first and dealt and not set(first) & set(dealt)


def test_fast_ppo_shuffles_its_minibatches_every_epoch(tmp_path, monkeypatch):
    """Each epoch draws its minibatches in a new order (a mutation audit found fixed, unshuffled minibatches unseen)."""
    from agents import fast_ppo

    seen = []
    real = fast_ppo.ppo_losses

    def spy(scores, value, mask, actions, old_logp, *args):
        seen.append(frozenset(old_logp.tolist()))
        return real(scores, value, mask, actions, old_logp, *args)

    monkeypatch.setattr(fast_ppo, "ppo_losses", spy)
    train(_cfg("fast-ppo", tmp_path / "run", timesteps=416, update_epochs=2, minibatch_size=104))
    per_epoch = len(seen) // 2
    assert per_epoch >= 2 and seen[0] != seen[per_epoch]  # the first minibatch of each epoch holds other samples


def test_fast_ppo_bootstraps_each_rollout_and_anneals_by_the_runs_progress(tmp_path, monkeypatch):
    """Two things a mutation audit found unseen: the GAE's bootstrap is the network's value of the observation after
    the rollout (not zero), and the learning rate follows RunFolder.progress_fraction (which counts the time budget
    under anneal_by='first'), not the updates done."""
    import torch

    from agents import fast_ppo
    from agents import train as train_module

    bootstraps, rates = [], []
    real_gae, real_scalars = fast_ppo.gae, train_module.RunFolder.scalars

    def gae_spy(rewards, dones, values, next_value, *args):
        bootstraps.append(next_value.clone())
        return real_gae(rewards, dones, values, next_value, *args)

    def scalars_spy(self, step, values):
        if "learning_rate" in values:
            rates.append(values["learning_rate"])
        return real_scalars(self, step, values)

    monkeypatch.setattr(fast_ppo, "gae", gae_spy)
    monkeypatch.setattr(train_module.RunFolder, "scalars", scalars_spy)
    monkeypatch.setattr(train_module.RunFolder, "progress_fraction", lambda self, step: 0.25)
    cfg = _cfg("fast-ppo", tmp_path / "run", anneal_lr=True, learning_rate=0.004)
    train(cfg)
    assert bootstraps and all(torch.count_nonzero(b) > 0 for b in bootstraps)
    assert rates and all(r == pytest.approx(0.004 * 0.75) for r in rates)


def test_ppo_losses_spread_a_row_without_a_legal_cell_over_every_cell():
    """A row whose mask marks no legal cell is a policy over all the cells (as ``ppo_losses`` documents), not NaN
    (a mutation audit dropped that fallback unseen)."""
    torch = pytest.importorskip("torch")
    from agents.fast_ppo import ppo_losses

    scores = torch.zeros(2, 4)
    mask = torch.tensor([[False] * 4, [True, False, False, False]])
    act = torch.tensor([3, 0])
    zeros = torch.zeros(2)
    _, _, _, ent, logp, ratio = ppo_losses(scores, zeros, mask, act, zeros, zeros, zeros, 0.2)
    assert logp.tolist() == pytest.approx([-np.log(4.0), 0.0])  # uniform over the 4 cells; the one legal cell
    assert ent.item() == pytest.approx(np.log(4.0) / 2)
    assert torch.isfinite(ratio).all()


def test_make_net_names_an_unknown_network():
    pytest.importorskip("torch")
    from agents.fast_ppo import make_net

    with pytest.raises(ValueError, match=r"net='cnn': expected 'lines' or 'mlp'"):
        make_net("cnn", [8])


def test_lines_net_summarises_each_line_by_its_cards_jokers_included_before_and_after_the_drawn_card():
    """LinesNet's line summary (its docstring): the rank, suit and joker counts of each line and how many cards it
    holds, before and after the drawn card joins it (a mutation audit left the jokers out of the count, or added the
    drawn card's features without counting it, unseen)."""
    torch = pytest.importorskip("torch")
    from agents.fast_ppo import LinesNet
    from pokersquares_env.core import PokerSquaresGame, Rules
    from pokersquares_env.env import encode_observation

    game = PokerSquaresGame(Rules(jokers=1))
    deck = [0, 52, 18] + [c for c in range(52) if c not in (0, 18)]  # 2 of clubs, the joker, then 7 of diamonds
    state = game.init(deck, validate=False)
    game.apply(state, 0)  # row 0, column 0
    game.apply(state, 1)  # row 0, column 1: the joker
    obs = torch.as_tensor(encode_observation(game, state))[None]
    net = LinesNet([8, 8])
    summaries = []
    net.line.register_forward_hook(lambda module, args, out: summaries.append(args[0]))
    net(obs)
    x = summaries[0][0]  # (10 lines, before 19 + after 19)
    before, after = x[:, :19], x[:, 19:]
    assert before[:, 18].tolist() == [2, 0, 0, 0, 0, 1, 1, 0, 0, 0]  # cards per row, then per column
    assert (after[:, 18] == before[:, 18] + 1).all()
    assert before[0, 17].item() == 1 and before[0, 0].item() == 1  # row 0: the joker and a 2
    assert (after[:, :18] - before[:, :18] == obs[0, 450:468].float()).all()  # the drawn card (7 of diamonds)


def test_mlp_final_activation_is_a_relu_after_the_last_layer_only_when_asked():
    torch = pytest.importorskip("torch")
    from agents.fast_ppo import _mlp

    torch.manual_seed(0)
    x = torch.randn(64, 3)
    assert (_mlp([3, 8, 4], final_act=True)(x) >= 0).all()  # the line and global embeddings: after a ReLU
    out = _mlp([3, 8, 4], final_act=False)(x)  # the cell scores: any sign
    assert (out < 0).any() and (out > 0).any()


def test_make_env_says_to_use_sync_vectorization_when_the_native_vector_env_is_missing(monkeypatch):
    """A gymnasium error making the native vector env becomes an error naming the way out (a mutation audit let
    gymnasium's own error through unseen); under ``vectorization='sync'`` gymnasium's error is left as it is."""
    import gymnasium as gym

    from agents.fast_ppo import make_env

    def refuse(*args, **kwargs):
        raise gym.error.Error("no vector entry point")

    monkeypatch.setattr(gym, "make_vec", refuse)
    with pytest.raises(RuntimeError, match=r"native vector env is not available \(no vector entry point\); train "
                                           r"with vectorization='sync'"):
        make_env(_cfg("fast-ppo", "unused").resolved(), 2)
    with pytest.raises(gym.error.Error, match="no vector entry point"):
        make_env(_cfg("fast-ppo", "unused", vectorization="sync").resolved(), 2)


def test_restore_games_gives_back_the_saved_games_or_none_with_the_reason(capsys):
    """The games a checkpoint saved come back only into a run of as many games, of this version, holding an env;
    otherwise None with the reason on stderr (a mutation audit dropped the check of the number of games unseen)."""
    pytest.importorskip("torch")
    from agents.fast_ppo import games_state, make_env, restore_games
    from pokersquares_env import __version__

    cfg = _cfg("fast-ppo", "unused").resolved()
    envs = make_env(cfg, 2)
    obs, _ = envs.reset(seed=0)
    games = games_state(envs, obs=obs, phi=None)
    envs.close()
    back = restore_games({"games": games}, cfg, 2)
    assert back["env"].num_envs == 2 and np.array_equal(back["obs"], obs) and back["phi"] is None
    capsys.readouterr()
    cases = [
        ({"games": games}, cfg, 3, "holds games of 2 envs, not 3"),
        ({"games": {**games, "version": "0.0.1"}}, cfg, 2, f"holds games of pokersquares_env '0.0.1', not of this "
                                                          f"{__version__!r}"),
        ({"games": {"obs": obs}}, cfg, 2, "holds games that cannot be read (dict without an env)"),
        ({}, cfg, 2, "holds no games in progress (saved by an older version)"),
        ({}, _cfg("fast-ppo", "unused", vectorization="sync").resolved(), 2,
         "holds no games in progress (sync vectorization)"),
    ]
    for state, config, num_envs, why in cases:
        assert restore_games(state, config, num_envs) is None
        assert f"--resume: the checkpoint {why}: the resumed run starts new games" in capsys.readouterr().err


def test_fast_ppo_with_fewer_valid_samples_than_a_minibatch_takes_them_all_as_one(tmp_path, monkeypatch):
    """``minibatch_size`` may be the whole rollout (num_envs * num_steps), which then holds fewer valid samples (the
    autoreset steps are left out): each epoch takes one gradient step on all of them, not none (a mutation audit
    made such a run learn nothing, unseen)."""
    from agents import fast_ppo

    sizes = []
    real = fast_ppo.ppo_losses

    def spy(scores, *args):
        sizes.append(scores.shape[0])
        return real(scores, *args)

    monkeypatch.setattr(fast_ppo, "ppo_losses", spy)
    train(_cfg("fast-ppo", tmp_path / "run", num_envs=4, num_steps=26, minibatch_size=104, update_epochs=2,
               timesteps=104, hidden=[8, 8]))
    assert sizes == [100, 100]  # 4 games x 25 moves (their 26th step is the autoreset), once per epoch


def test_fast_ppo_logs_the_kl_estimate_and_the_clipped_fraction_of_its_minibatches(tmp_path, monkeypatch):
    """The TensorBoard diagnostics of an update: ``approx_kl`` the mean over its minibatches of CleanRL's estimator
    ``(ratio - 1) - log ratio`` (never negative) and ``clipfrac`` the share of ratios beyond ``1 +- clip_coef`` (a
    mutation audit flipped the estimator's sign, or counted the unclipped ratios, unseen); and the loss it minimises
    weighs the entropy by ``ent_coef`` and the value loss by ``vf_coef`` (an audit swapped the two unseen)."""

    from agents import fast_ppo
    from agents import train as train_module

    kls, clipped, logged, weighed = [], [], [], []
    real, real_scalars = fast_ppo.ppo_losses, train_module.RunFolder.scalars

    def spy(scores, value, mask, actions, old_logp, adv, ret, clip_coef, *args):
        out = real(scores, value, mask, actions, old_logp, adv, ret, clip_coef, *args)
        logp, ratio = out[4].detach(), out[5].detach()
        kls.append(((ratio - 1) - (logp - old_logp)).mean().item())
        clipped.append(((ratio - 1).abs() > clip_coef).float().mean().item())
        total, pg, v, ent = (x.item() for x in out[:4])
        weighed.append(total == pytest.approx(pg - 0.05 * ent + 0.7 * v, rel=1e-5, abs=1e-7))
        return out

    def scalars_spy(self, step, values):
        if "approx_kl" in values:
            logged.append(values)
        return real_scalars(self, step, values)

    monkeypatch.setattr(fast_ppo, "ppo_losses", spy)
    monkeypatch.setattr(train_module.RunFolder, "scalars", scalars_spy)
    train(_cfg("fast-ppo", tmp_path / "run", num_envs=4, num_steps=26, minibatch_size=25, update_epochs=4,
               timesteps=104, hidden=[8, 8], learning_rate=0.05, clip_coef=0.1, ent_coef=0.05, vf_coef=0.7))
    assert len(logged) == 1 and len(kls) == 4 * 4 and all(weighed)
    assert logged[0]["approx_kl"] == pytest.approx(float(np.mean(kls)), abs=1e-9)
    assert logged[0]["clipfrac"] == pytest.approx(float(np.mean(clipped)), abs=1e-9)
    assert min(kls) > -1e-6 and max(kls) > 1e-4  # the policy moved, and the estimate is never negative
    assert 0 < logged[0]["clipfrac"] < 0.5


def test_a_fast_ppo_run_diverging_in_its_last_update_stops_before_saving_it(tmp_path):
    """The weights are checked after every update, the last one included (a mutation audit dropped that check
    unseen: the tests' diverged runs were caught by the next rollout's sampling instead)."""
    from agents.config import TrainingDiverged

    with pytest.raises(TrainingDiverged, match=r"^fast-ppo diverged at step 416: "):
        train(_cfg("fast-ppo", tmp_path / "run", learning_rate=1e30, timesteps=416))
    assert not (tmp_path / "run" / "model.pt").exists()


def test_the_torch_trainers_log_the_scores_of_the_games_that_ended_only():
    """The scores a fast-ppo or dqn step reports to the curve: those of the games the final infos mark as ended (a
    mutation audit took the others' instead, unseen)."""
    pytest.importorskip("torch")
    from agents.fast_ppo import _final_scores

    done = np.array([True, False, True])
    info = {"score": np.array([10.0, 0.0, 7.5]), "_score": np.array([True, False, True])}
    assert _final_scores(info, done) == [10.0, 7.5]
    assert _final_scores({"score": info["score"]}, np.array([False, True, False])) == [0.0]  # no "_score": done
    assert _final_scores({}, done) == []


def test_fast_ppo_cuts_the_advantages_where_each_game_ends(tmp_path, monkeypatch):
    """The dones handed to the GAE mark the step of every game's 25th card, and no other (a mutation audit passed
    no ends at all, letting the advantages run on into the next deal, unseen)."""
    from agents import fast_ppo

    dones = []
    real = fast_ppo.gae

    def spy(rewards, done, *args):
        dones.append(done.clone())
        return real(rewards, done, *args)

    monkeypatch.setattr(fast_ppo, "gae", spy)
    train(_cfg("fast-ppo", tmp_path / "run", num_envs=4, num_steps=26, minibatch_size=50, update_epochs=1,
               timesteps=104, hidden=[8, 8]))
    expected = np.zeros((26, 4))
    expected[24] = 1.0  # steps 0-24 place the 25 cards; step 25 is the autoreset to a new deal
    assert len(dones) == 1 and np.array_equal(dones[0].numpy(), expected)


def test_a_replay_buffer_of_observations_other_than_flags_is_not_saved(tmp_path):
    """The observations are saved packed as bits: one holding a 2 is refused by name, not saved as a 1 (a mutation
    audit dropped the check unseen)."""
    pytest.importorskip("torch")
    from agents.dqn import ReplayBuffer

    buffer = ReplayBuffer(4, 3, seed=0)
    obs = np.array([[0, 1, 2], [1, 1, 0]], np.uint8)
    buffer.add(obs, np.arange(2), np.zeros(2), np.zeros((2, 3), np.uint8), np.ones((2, 25), bool), np.zeros(2))
    with pytest.raises(ValueError, match=r"the replay buffer's obs holds values above 1: expected 0/1 flags"):
        buffer.save(tmp_path / "b.npz")
    assert not (tmp_path / "b.npz").exists()


def test_a_saved_buffer_holding_more_transitions_than_its_capacity_is_refused(tmp_path):
    """A buffer file claiming (and holding) more transitions than its capacity is named, not loaded into a numpy
    broadcasting error (a mutation audit dropped the size bound unseen)."""
    pytest.importorskip("torch")
    from agents.dqn import ReplayBuffer

    path = _saved_full_buffer(tmp_path, 5, lambda arrays: _with_meta(arrays, capacity=4))
    with pytest.raises(ValueError, match="holds ring position 0 and size 5: expected the replay buffer a dqn "
                                         "checkpoint saved \\(capacity 4"):
        ReplayBuffer.load(path, 4, 3)


def test_a_saved_buffer_whose_arrays_differ_in_length_is_refused(tmp_path):
    """A buffer file whose cells (or rewards, ...) are fewer than its transitions is named, not loaded into a numpy
    broadcasting error (a mutation audit dropped the check unseen)."""
    pytest.importorskip("torch")
    from agents.dqn import ReplayBuffer

    path = _saved_full_buffer(tmp_path, 5, lambda arrays: {**arrays, "action": arrays["action"][:4]})
    with pytest.raises(ValueError, match="holds arrays of unequal lengths: expected the replay buffer"):
        ReplayBuffer.load(path, 5, 3)


def test_lines_net_scores_each_cell_from_its_own_row_and_column():
    """LinesNet is equivariant to permuting rows or columns (agents.fast_ppo's docstring): cell ``5 r + c``'s score is
    a function of row ``r``, column ``c`` and the global summary, so permuting the board's rows (or columns) permutes
    the scores the same way and leaves the value alone (a mutation audit scored cell (r, c) from row c and column r,
    unseen: every test of the network trained it or read its line summary only)."""
    torch = pytest.importorskip("torch")
    from agents.fast_ppo import LinesNet
    from pokersquares_env.core import PokerSquaresGame
    from pokersquares_env.env import CARD_FEATURES, CARD_OFFSET, encode_observation

    game = PokerSquaresGame()
    rng = np.random.default_rng(1)
    state = game.init(game.deal(rng), validate=False)
    for _ in range(9):
        game.apply(state, int(rng.choice(game.legal_cells(state))))
    obs = torch.as_tensor(encode_observation(game, state))[None]
    torch.manual_seed(0)
    net = LinesNet([16, 16])
    perm = torch.tensor([3, 0, 4, 1, 2])

    def moved(rows):
        board = obs[:, :CARD_OFFSET].view(1, 5, 5, CARD_FEATURES)
        board = board[:, perm] if rows else board[:, :, perm]
        return torch.cat([board.reshape(1, CARD_OFFSET), obs[:, CARD_OFFSET:]], 1)

    with torch.no_grad():
        scores, value = net(obs)
        grid = scores.view(5, 5)
        for rows in (True, False):
            new_scores, new_value = net(moved(rows))
            want = grid[perm] if rows else grid[:, perm]
            assert torch.allclose(new_scores.view(5, 5), want, atol=1e-6), rows
            assert torch.allclose(new_value, value, atol=1e-6)
    assert grid.std() > 1e-3  # the scores differ from cell to cell: the permutation shows


def test_fast_ppo_regresses_the_value_on_the_rollouts_values_plus_the_advantages(tmp_path, monkeypatch):
    """The value targets are the GAE advantages plus the values the network gave the states in the rollout: before
    the first gradient step of an update, ``ret - adv`` is the network's own value of each sample (a mutation audit
    gave the GAE zero values, making the targets the advantages alone, unseen)."""
    import torch

    from agents import fast_ppo

    first = []
    real = fast_ppo.ppo_losses

    def spy(scores, value, mask, actions, old_logp, adv, ret, *args):
        if not first:
            first.append((value.detach().clone(), adv.clone(), ret.clone()))
        return real(scores, value, mask, actions, old_logp, adv, ret, *args)

    monkeypatch.setattr(fast_ppo, "ppo_losses", spy)
    train(_cfg("fast-ppo", tmp_path / "run", num_envs=4, num_steps=26, minibatch_size=50, timesteps=104,
               hidden=[8, 8]))
    value, adv, ret = first[0]
    assert value.abs().max() > 1e-3  # an untrained value head: not zero
    assert torch.allclose(ret - adv, value, atol=1e-5)


def test_fast_ppo_anneals_the_learning_rate_to_its_floor_not_to_zero(tmp_path, monkeypatch):
    """With ``anneal_lr`` the learning rate of a run at its end is 2% of its start, never below (the module
    docstring; a mutation audit let it fall to 0 unseen: the anneal test stopped at three quarters)."""
    from agents import train as train_module

    rates = []
    real_scalars = train_module.RunFolder.scalars

    def scalars_spy(self, step, values):
        if "learning_rate" in values:
            rates.append(values["learning_rate"])
        return real_scalars(self, step, values)

    monkeypatch.setattr(train_module.RunFolder, "scalars", scalars_spy)
    monkeypatch.setattr(train_module.RunFolder, "progress_fraction", lambda self, step: 1.0)
    train(_cfg("fast-ppo", tmp_path / "run", anneal_lr=True, learning_rate=0.004, timesteps=416))
    assert rates == [pytest.approx(0.004 * 0.02)]


def test_fast_ppo_advantages_use_the_configs_gamma_and_lambda(tmp_path, monkeypatch):
    """With ``gae_lambda=0`` a run's advantages are the one-step TD errors ``r + gamma * V(s') - V(s)`` under the
    config's ``gamma`` (cut where a game ended): a mutation audit handed gamma and gae_lambda to the GAE the other
    way round, unseen (the GAE's own test calls it directly)."""
    import torch

    from agents import fast_ppo

    seen = []
    real = fast_ppo.gae

    def spy(rewards, dones, values, next_value, *args):
        adv, ret = real(rewards, dones, values, next_value, *args)
        seen.append((rewards.clone(), dones.clone(), values.clone(), next_value.clone(), adv.clone()))
        return adv, ret

    monkeypatch.setattr(fast_ppo, "gae", spy)
    train(_cfg("fast-ppo", tmp_path / "run", gamma=0.9, gae_lambda=0.0, num_envs=4, num_steps=26, minibatch_size=50,
               timesteps=104, hidden=[8, 8]))
    rewards, dones, values, next_value, adv = seen[0]
    following = torch.cat([values[1:], next_value[None]])
    assert torch.allclose(adv, rewards + 0.9 * following * (1.0 - dones) - values, atol=1e-6)
    assert following.abs().max() > 1e-3  # the bootstrap counts


def test_dqn_target_starts_as_the_online_network_and_moves_by_target_tau(tmp_path):
    """A new run's target network starts as a copy of the online network and moves ``target_tau`` of the way to it
    after each gradient step: with ``target_tau=0`` it ends as the online network began while that one learned (a
    mutation audit left the target at its own random weights, or copied the online network whatever target_tau,
    unseen: the target test used target_tau=1, where both end the same)."""
    import torch

    from agents.fast_ppo import make_net

    out = tmp_path / "run"
    train(_cfg("dqn", out, target_tau=0.0))
    ckpt = torch.load(out / "checkpoints" / "latest.pt", map_location="cpu", weights_only=False)
    torch.manual_seed(3)
    start = make_net("lines", [16, 16]).state_dict()  # the online network's first weights (seed 3)
    assert all(torch.equal(ckpt["target"][k], start[k]) for k in start)
    assert any(not torch.equal(ckpt["state_dict"][k], start[k]) for k in start)



def test_dqn_regresses_the_taken_cells_q_value_on_the_double_dqn_target(tmp_path, monkeypatch):
    """Each gradient step's TD loss compares, for every sampled transition, the online network's Q-value of the cell
    that transition took with ``r + gamma * Q_target(s', a*)``, ``a*`` the *online* network's best legal cell of
    ``s'`` (double DQN, the module docstring).  A mutation audit used each state's highest Q-value instead of the
    taken cell's, or let the target network pick ``a*`` (plain DQN), unseen: ``dqn_targets``' own test calls it
    directly."""
    import torch

    from agents import dqn

    nets, batches, rounds = [], [], []
    real_make, real_sample, real_loss = dqn.make_net, dqn.ReplayBuffer.sample, torch.nn.functional.smooth_l1_loss

    def make(*args):
        nets.append(real_make(*args))  # the online network, then the target
        return nets[-1]

    def sample(self, n):
        batches.append(real_sample(self, n))
        return batches[-1]

    def loss(q_taken, y, *args, **kwargs):
        obs, action, reward, next_obs, next_mask, done = batches[-1]
        online, target = nets
        with torch.no_grad():  # neither network has stepped since q_taken and y were computed
            taken = online(obs)[0].gather(1, action[:, None]).squeeze(1)
            legal = next_mask | ~next_mask.any(1, keepdim=True)
            best = online(next_obs)[0].masked_fill(~legal, -torch.inf).argmax(1, keepdim=True)
            target_q = target(next_obs)[0]
            want = reward + 1.0 * (1.0 - done) * target_q.gather(1, best).squeeze(1)
            plain = reward + (1.0 - done) * target_q.masked_fill(~legal, -torch.inf).max(1).values
        rounds.append((q_taken.detach().clone(), taken, y.clone(), want, bool((plain - want).abs().max() > 1e-6)))
        return real_loss(q_taken, y, *args, **kwargs)

    monkeypatch.setattr(dqn, "make_net", make)
    monkeypatch.setattr(dqn.ReplayBuffer, "sample", sample)
    monkeypatch.setattr(torch.nn.functional, "smooth_l1_loss", loss)
    train(_cfg("dqn", tmp_path / "run", gamma=1.0))
    assert len(nets) == 2 and len(rounds) > 10
    for q_taken, taken, y, want, _ in rounds:
        assert torch.allclose(q_taken, taken, atol=1e-6)
        assert torch.allclose(y, want, atol=1e-5)
    assert any(told for *_, told in rounds)  # rounds where plain DQN's target would differ


# ------------------------------------------------------------------ from a mutation run of agents/train.py
def test_a_progress_file_whose_recent_scores_are_not_finite_is_refused(tmp_path):
    """progress.json's ``recent`` (the training scores the next curve row averages) must be finite numbers: a NaN
    or an infinite score is refused naming it, as the counts are (a mutation audit read them in, unseen)."""
    from agents.train import _read_progress

    path = tmp_path / "progress.json"
    path.write_text(json.dumps({"steps": 100, "seconds": 1.5, "episodes": 4, "recent": [1.5, 20]}))
    assert _read_progress(path)["recent"] == [1.5, 20]
    for recent in ("[1.5, NaN]", "[Infinity]", "[-Infinity, 2]"):
        path.write_text(f'{{"steps": 100, "seconds": 1.5, "episodes": 4, "recent": {recent}}}')
        with pytest.raises(ConfigError, match=r"progress.json': recent=\[.*\]: expected a list of finite numbers"):
            _read_progress(path)


def test_a_resumed_run_whose_scoring_file_is_gone_goes_on_with_the_table_it_started_with(tmp_path):
    """The point-system file named by ``scoring`` removed once the resume was validated: the run folder goes on with
    the point_system.json the run's start wrote (a mutation audit compared with the missing table and crashed)."""
    from agents.config import point_table
    from agents.train import RunFolder
    from pokersquares_env.scoring import POINT_SYSTEMS

    pts = tmp_path / "pts.json"
    pts.write_text(json.dumps({"name": "pts", "points": dict(POINT_SYSTEMS["english"])}))
    out = tmp_path / "run"
    cfg = TrainConfig(algo="fast-ppo", scoring=str(pts), out=str(out), final_eval_games=0, progress=False)
    _fake_run(out, cfg)
    stored = point_table(str(pts))
    (out / "point_system.json").write_text(json.dumps(stored))
    resolved = cfg.resolved()  # validated while the file was there
    pts.unlink()
    run = RunFolder(resolved, resume=True)
    run.open()
    try:
        assert run.point_system == stored
    finally:
        run.close()
    assert json.loads((out / "point_system.json").read_text()) == stored  # left as the run's start wrote it


def test_a_maskable_ppo_checkpoint_that_is_not_a_zip_archive_is_named_damaged_before_writing(tmp_path):
    out = tmp_path / "run"
    train(_cfg("maskable-ppo", out))
    (out / "checkpoints" / "latest.zip").write_bytes(b"garbage\n")
    before = _files(out)
    with pytest.raises(ConfigError, match=re.escape("latest.zip' is damaged: expected the zip archive MaskablePPO "
                                                    "saved")):
        train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=10**4)
    assert _files(out) == before


def test_weights_that_do_not_fit_are_named_by_the_first_lines_of_torchs_report(tmp_path):
    """The message quotes torch's header and its first two mismatches, then counts the rest (a mutation audit cut
    it to the header alone, unseen)."""
    out = tmp_path / "run"
    train(_cfg("fast-ppo", out))
    stored = json.loads((out / "config.json").read_text())
    (out / "config.json").write_text(json.dumps({**stored, "hidden": [32, 32]}))
    with pytest.raises(ConfigError, match="its state_dict does not fit") as exc:
        train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=10**4)
    message = str(exc.value)
    assert message.count("size mismatch for") == 2 and re.search(r" \(and \d+ more\)\): expected", message)


def test_earlier_sessions_count_against_a_resumed_runs_time_limit_and_the_progress_stays_within_1(tmp_path):
    """A resumed run whose earlier sessions took exactly its time limit has spent it (it trains nothing) and is out of
    time; the progress that anneals the learning rate is at most 1, past the step or the time budget (a mutation
    audit let a limit reached exactly train on, allowed twice the limit, and let the progress pass 1, unseen)."""
    from agents.train import RunFolder

    out = tmp_path / "run"
    _fake_run(out, TrainConfig(algo="fast-ppo", out=str(out), final_eval_games=0, progress=False))  # 1 s so far
    stored = TrainConfig.load(out / "config.json").to_dict()
    for limit, spent in ((1.0, True), (600.0, False)):
        run = RunFolder(TrainConfig.from_dict({**stored, "time_limit": limit, "anneal_by": "first"}), resume=True)
        run.open()
        try:
            assert (run.spent_before(), run.out_of_time()) == (spent, spent)
            assert run.progress_fraction(0) == 1.0 if spent else 0 < run.progress_fraction(0) < 0.01
            assert run.progress_fraction(2 * run.cfg.timesteps) == 1.0
        finally:
            run.close()


def test_resume_refuses_a_given_option_the_stored_run_does_not_allow_as_a_change(tmp_path, capsys):
    """A given option that the stored run's other options make invalid certainly changes the run: refused naming it
    and the stored value, not dropped for the stored one (a mutation audit resumed as if it had not been given)."""
    from pokersquares_env.cli import main

    out = tmp_path / "run"
    out.mkdir()
    TrainConfig(algo="maskable-ppo", num_envs=2, num_steps=8, minibatch_size=16, out=str(out)).resolved().save(
        out / "config.json")
    before = _files(out)
    with pytest.raises(ConfigError, match=re.escape("minibatch_size=17 (stored: 16) would change it")):
        train(TrainConfig(out=str(out), progress=False), resume=True, minibatch_size=17)
    assert main(["train", "--out", str(out), "--resume", "--minibatch-size", "17", "--print-config"]) == 2
    assert "minibatch_size=17 (stored: 16) would change it" in capsys.readouterr().err
    assert _files(out) == before


def test_a_run_moved_to_the_default_folder_resumes_there(tmp_path, monkeypatch, capsys):
    """``pokersquares train --resume`` without --out continues the run in the default folder, runs/run, even when its
    config.json names the folder it was trained in (a mutation audit went back to that one)."""
    from agents import fast_ppo
    from pokersquares_env.cli import main

    monkeypatch.chdir(tmp_path)
    _fake_run(tmp_path / "old", TrainConfig(algo="fast-ppo", out="old", final_eval_games=0))
    (tmp_path / "runs").mkdir()
    (tmp_path / "old").rename(tmp_path / "runs" / "run")
    assert main(["train", "--resume", "--print-config"]) == 0
    assert json.loads(capsys.readouterr().out)["out"] == TrainConfig().out
    seen = []
    monkeypatch.setattr(fast_ppo, "train", lambda cfg, run: seen.append((cfg.out, run.dir)))
    assert main(["train", "--resume", "--no-progress"]) == 0, capsys.readouterr().err
    assert seen == [(TrainConfig().out, Path(TrainConfig().out))]
    assert TrainConfig.load(tmp_path / "runs" / "run" / "config.json").out == TrainConfig().out


def test_a_run_whose_shaping_potential_fails_to_build_gives_ctrl_c_back(tmp_path, monkeypatch):
    """The run folder is open (its Ctrl-C handler installed) when the shaping potential is built: a failure there
    closes it, so Ctrl-C interrupts the caller again (a mutation audit left the run's handler swallowing it)."""
    import agents.shaping

    def fail(cfg):
        raise RuntimeError("no tables")

    monkeypatch.setattr(agents.shaping, "potential_for", fail)
    handler = signal.getsignal(signal.SIGINT)
    with pytest.raises(RuntimeError, match="no tables"):
        train(_cfg("fast-ppo", tmp_path / "run"))
    assert signal.getsignal(signal.SIGINT) is handler


def test_a_maskable_ppo_resume_without_its_games_deals_new_games_too(tmp_path, monkeypatch):
    """MaskablePPO.load reseeds the env with the run's seed; a checkpoint whose games cannot be taken (an older one,
    or games that do not fit) resumes on fresh deals from a seed of its progress, not the first run's deals again (a
    mutation audit reseeded it with the run's seed, unseen)."""
    from agents import train as train_module

    dealt = _spy_deals(monkeypatch)
    real_step = _stop_halfway(monkeypatch, "maskable-ppo")
    out = tmp_path / "run"
    train(_cfg("maskable-ppo", out))
    first = list(dealt)
    monkeypatch.setattr(train_module.RunFolder, "step", real_step)
    monkeypatch.setattr(train_module, "_sb3_games", lambda games, model, shaped: None)  # no games to go on with
    dealt.clear()
    train(TrainConfig(out=str(out), progress=False), resume=True)
    assert first and dealt and not set(first) & set(dealt)


def test_a_resumed_maskable_ppo_run_keeps_the_evaluations_up_to_and_at_its_checkpoint(tmp_path):
    """sb3_eval/evaluations.npz of the resumed run starts with the earlier sessions' evaluations up to the checkpoint's
    step, that step's own included (a mutation audit dropped an evaluation taken at the checkpoint's step)."""
    from types import SimpleNamespace

    from agents.train import _keep_sb3_evaluations

    path = tmp_path / "evaluations.npz"
    np.savez(path, timesteps=np.array([256, 512, 768]), results=np.array([[1.0], [2.0], [3.0]]),
             ep_lengths=np.array([[25], [25], [25]]))
    cb = SimpleNamespace(evaluations_timesteps=[], evaluations_results=[], evaluations_length=[])
    _keep_sb3_evaluations(cb, path, 512)
    assert (cb.evaluations_timesteps, cb.evaluations_results, cb.evaluations_length) == (
        [256, 512], [[1.0], [2.0]], [[25], [25]])
    _keep_sb3_evaluations(cb, tmp_path / "missing.npz", 512)  # unreadable: left as it was
    assert cb.evaluations_timesteps == [256, 512]


def test_resume_refuses_a_flag_given_at_its_default_that_differs_from_the_stored_run(tmp_path, monkeypatch, capsys):
    """``--resume --scoring american`` for a run stored with english is a change although american is the default:
    the flags given count, not only those that differ from the defaults (a mutation audit resumed on english)."""
    from agents import fast_ppo
    from pokersquares_env.cli import main

    out = tmp_path / "run"
    _fake_run(out, TrainConfig(algo="fast-ppo", scoring="english", out=str(out), final_eval_games=0))
    seen = []
    monkeypatch.setattr(fast_ppo, "train", lambda cfg, run: seen.append(cfg.scoring))
    before = _files(out)
    assert main(["train", "--out", str(out), "--resume", "--scoring", "american", "--no-progress"]) == 2
    assert "scoring='american' (stored: 'english') would change it" in capsys.readouterr().err
    assert seen == [] and _files(out) == before


# ------------------------------------------------------------- a hard kill (SIGKILL) at an arbitrary moment
class _Killed(BaseException):
    """Stands for SIGKILL: the folder is copied as it stands at the kill and the process stops (nothing after it
    runs in the copy, not even ``finally`` blocks or the Ctrl-C handler's save)."""


def _killed_copy(src: Path, dst: Path) -> None:
    import shutil

    shutil.copytree(src, dst)


KILL_RUNS = {  # (options, the checkpoint save at which the kill comes: the 2nd of latest)
    "fast-ppo": dict(num_envs=8, eval_every=300, checkpoint_every=300, eval_games=4, timesteps=1248),
    "dqn": dict(eval_every=300, checkpoint_every=300, eval_games=4, timesteps=1600),
    "maskable-ppo": dict(eval_every=300, checkpoint_every=256, eval_games=4, timesteps=1024),
}


def _run_record(folder: Path):
    """What a resumed run must share with the run never stopped: curve.csv's steps and evaluated steps, the step_N
    checkpoints, and progress.json's steps and episodes."""
    rows = [r.split(",") for r in (folder / "curve.csv").read_text().splitlines()[1:]]
    progress = json.loads((folder / "progress.json").read_text())
    return {"curve steps": [int(r[0]) for r in rows], "evaluated": [int(r[0]) for r in rows if r[4]],
            "step checkpoints": sorted(p.name for p in (folder / "checkpoints").glob("step_*")),
            "steps": progress["steps"], "episodes": progress["episodes"]}


@pytest.mark.parametrize("algo, kill_at", [("fast-ppo", 2), ("dqn", 2), ("maskable-ppo", 2), ("fast-ppo", 1)])
def test_a_kill_between_the_latest_checkpoint_and_progress_json_resumes_consistently_or_is_refused(
        tmp_path, monkeypatch, algo, kill_at):
    """RunFolder.maybe_checkpoint saves checkpoints/latest.* (step N), then writes progress.json.  A SIGKILL in
    between leaves latest at step N beside the progress.json of the checkpoint before (step M).  --resume must then
    either go on as the run never stopped (docs/training.md: "curve.csv and checkpoints/ are those of the run never
    stopped") or refuse, naming progress.json / the checkpoint; it must not train on from N with M's episodes,
    schedules and curve trimmed to M (the rows M..N are dropped and never written again).  ``kill_at=1``: killed
    at the run's first checkpoint, before progress.json was ever written: the resume starts the episode count,
    the clock and the schedules from zero at step N."""
    from agents import train as train_module

    options = KILL_RUNS[algo]
    straight = tmp_path / "straight"
    train(_cfg(algo, straight, **options))

    out, killed = tmp_path / "run", tmp_path / "killed"
    real_write = train_module.RunFolder._write_progress
    calls = []

    def write_then_die(self, step):
        calls.append(step)
        if len(calls) == kill_at:  # latest.* of this checkpoint is saved; progress.json still holds the one before
            _killed_copy(self.dir, killed)
            raise _Killed
        real_write(self, step)

    monkeypatch.setattr(train_module.RunFolder, "_write_progress", write_then_die)
    with pytest.raises(_Killed):
        train(_cfg(algo, out, **options))
    monkeypatch.setattr(train_module.RunFolder, "_write_progress", real_write)
    if kill_at == 1:
        assert not (killed / "progress.json").exists() and (killed / "checkpoints" / "latest.pt").exists()
    else:
        kept = json.loads((killed / "progress.json").read_text())["steps"]
        assert kept == calls[0] < calls[1]  # the window: progress.json one checkpoint behind latest.*

    try:
        train(TrainConfig(out=str(killed), progress=False), resume=True)
    except ConfigError as exc:  # refusing is fine, if it names what does not fit
        assert "progress.json" in str(exc)
        return
    assert _run_record(killed) == _run_record(straight)


def test_a_kill_while_maskable_ppo_saves_latest_zip_leaves_the_previous_checkpoint_to_resume_from(tmp_path,
                                                                                                    monkeypatch):
    """fast-ppo and dqn write checkpoints/latest.pt (and the buffer) to a temporary file and rename it, so a kill
    during the save leaves the previous checkpoint whole.  maskable-ppo's checkpoint is SB3's ``model.save``, which
    writes the zip in place: a SIGKILL (or the documented second Ctrl-C, "Ctrl-C again to abort", while the first
    one's checkpoint is being saved) leaves a cut latest.zip, the run's only resumable checkpoint, and --resume can
    only refuse it.  The run should resume from the checkpoint before, as the other trainers do."""
    import io

    from sb3_contrib import MaskablePPO

    options = KILL_RUNS["maskable-ppo"]
    straight = tmp_path / "straight"
    train(_cfg("maskable-ppo", straight, **options))

    out, killed = tmp_path / "run", tmp_path / "killed"
    real_save = MaskablePPO.save
    latest_saves = []

    def save_cut_short(self, path, *args, **kwargs):
        if killed.exists():  # the process is dead: the finally blocks' saves never happen
            raise _Killed
        if not Path(path).name.startswith("latest"):  # latest.zip, or the temporary file it is saved through
            return real_save(self, path, *args, **kwargs)
        latest_saves.append(path)
        if len(latest_saves) < 2:
            return real_save(self, path, *args, **kwargs)
        buf = io.BytesIO()
        real_save(self, buf, *args, **kwargs)
        Path(path).write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])  # what the kill leaves of it
        _killed_copy(out, killed)
        raise _Killed

    monkeypatch.setattr(MaskablePPO, "save", save_cut_short)
    with pytest.raises(_Killed):
        train(_cfg("maskable-ppo", out, **options))
    monkeypatch.setattr(MaskablePPO, "save", real_save)
    assert json.loads((killed / "progress.json").read_text())["steps"] == 256  # the checkpoint before

    resumed = train(TrainConfig(out=str(killed), progress=False), resume=True)
    assert resumed.steps == 1024

    def weights(path):
        return MaskablePPO.load(path, device="cpu").policy.state_dict()

    a, b = weights(straight / "model.zip"), weights(killed / "model.zip")
    assert all(torch_equal(a[k], b[k]) for k in a)


def test_a_checkpoint_without_its_progress_record_must_agree_with_progress_json(tmp_path, capsys):
    """Checkpoints saved before they held their progress record (older runs) resume from progress.json only when
    both describe the same step; otherwise the resume is refused, naming both, before anything is written.  A
    checkpoint with its record goes on from it, with a note, when progress.json is behind."""
    import torch

    out = tmp_path / "run"
    train(_cfg("fast-ppo", out, checkpoint_every=1))
    latest = out / "checkpoints" / "latest.pt"
    state = torch.load(latest, weights_only=False)
    assert state["progress"]["steps"] == state["global_step"] == json.loads((out / "progress.json").read_text())[
        "steps"]
    progress = json.loads((out / "progress.json").read_text())
    behind = {**progress, "steps": progress["steps"] - 1, "last_ckpt_step": 0, "last_eval_step": 0,
              "last_row_step": 0}
    (out / "progress.json").write_text(json.dumps(behind))
    resumed = train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=progress["steps"])
    assert resumed.steps == progress["steps"]
    assert f"progress.json (step {progress['steps'] - 1}) is behind the latest checkpoint" in capsys.readouterr().err
    assert json.loads((out / "progress.json").read_text())["episodes"] == progress["episodes"]

    del state["progress"]  # as a checkpoint of an older run
    torch.save(state, latest)
    (out / "progress.json").write_text(json.dumps(behind))
    before = _files(out)
    with pytest.raises(ConfigError, match=rf"progress\.json' is at step {progress['steps'] - 1} but .*latest\.pt' "
                                          rf"was saved at step {progress['steps']}"):
        train(TrainConfig(out=str(out), progress=False), resume=True, timesteps=progress["steps"] * 2)
    assert _files(out) == before
    (out / "progress.json").write_text(json.dumps(progress))  # agreeing: resumed as before
    assert train(TrainConfig(out=str(out), progress=False), resume=True,
                 timesteps=progress["steps"] * 2).steps == progress["steps"] * 2


@pytest.mark.parametrize("name", ["config.json", "config.yaml"])
def test_a_config_save_stopped_before_it_is_in_place_leaves_the_old_file_whole(tmp_path, monkeypatch, name):
    """TrainConfig.save writes through a temporary file (``--resume`` rewrites config.json on every session): a kill
    before the rename leaves the earlier file whole, not a truncated one the next --resume refuses."""
    import agents.config

    path = tmp_path / name
    TrainConfig(out="a", seed=1).save(path)
    before = path.read_bytes()

    def killed(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(agents.config.os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        TrainConfig(out="b", seed=2).save(path)
    assert path.read_bytes() == before and TrainConfig.load(path).seed == 1


def test_cli_names_a_first_cell_with_a_digit_int_cannot_read(capsys):
    """Before, ``--first-cell ²`` (str.isdigit takes '²') ended in a ValueError traceback from int()."""
    from pokersquares_env.cli import main

    assert main(["train", "--first-cell", "²", "--print-config"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pokersquares train: first_cell='²': expected 'center'") and err.count("\n") == 1
