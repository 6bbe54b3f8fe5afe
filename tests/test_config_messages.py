"""Messages of training config files (``pokersquares train --config FILE``) that name what is wrong and where."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("yaml")


def _train(capsys, *argv: str) -> tuple[int, str, str]:
    from pokersquares_env.cli import main

    status = main(["train", *argv])
    out = capsys.readouterr()
    return status, out.out, out.err


def test_a_missing_point_system_file_is_named_with_both_places_looked_in(tmp_path, monkeypatch, capsys):
    """Before: only "point system file 'nothere.json' does not exist", though a config file's point-system file is
    looked for in the current folder and then next to the config file."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cfgdir").mkdir()
    (tmp_path / "cfgdir" / "c2.yaml").write_text("scoring: nothere.json\ntimesteps: 100\n")
    status, out, err = _train(capsys, "--config", "cfgdir/c2.yaml", "--print-config")
    assert status == 2 and out == ""
    here, near = (tmp_path / "nothere.json").resolve(), (tmp_path / "cfgdir" / "nothere.json").resolve()
    assert err.startswith("pokersquares train: scoring='nothere.json': point system file 'nothere.json' does not exist")
    assert f"current folder ({str(here)!r})" in err and f"next to the config file ({str(near)!r})" in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_missing_point_system_file_next_to_a_config_in_the_current_folder_is_named_once(tmp_path, monkeypatch,
                                                                                            capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.json").write_text(json.dumps({"scoring": "pts/nothere.json"}))
    status, _, err = _train(capsys, "--config", "c.json", "--print-config")
    path = str((tmp_path / "pts" / "nothere.json").resolve())
    assert status == 2 and f"the current folder, where the config file is ({path!r})" in err
    assert err.count(path) == 1


def test_a_missing_point_system_file_named_in_capitals_or_by_an_absolute_path(tmp_path, monkeypatch, capsys):
    """A `.JSON` name is a file name too (both places are named); an absolute path is looked for only where it
    says, so the message names no config-file folder."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cfgdir").mkdir()
    (tmp_path / "cfgdir" / "c.yaml").write_text("scoring: NOTHERE.JSON\n")
    status, _, err = _train(capsys, "--config", "cfgdir/c.yaml", "--print-config")
    assert status == 2 and "scoring='NOTHERE.JSON': point system file 'NOTHERE.JSON' does not exist" in err
    assert "next to the config file" in err
    absolute = str(tmp_path / "gone" / "nothere.json")
    (tmp_path / "cfgdir" / "c.yaml").write_text(f"scoring: {absolute}\n")
    status, _, err = _train(capsys, "--config", "cfgdir/c.yaml", "--print-config")
    assert status == 2 and f"scoring={absolute!r}" in err
    assert "next to the config file" not in err and "current folder" not in err


def test_an_empty_config_path_is_named_and_a_yml_config_is_read_as_yaml(tmp_path, capsys):
    status, out, err = _train(capsys, "--config", "", "--print-config")
    assert status == 2 and out == ""
    assert "config file '': expected the path of a JSON or YAML file" in err  # not the current folder, '.'
    path = tmp_path / "c.yml"
    path.write_text("algo: dqn\ntimesteps: 777\n")
    status, out, err = _train(capsys, "--config", str(path), "--print-config")
    assert status == 0, err
    assert (json.loads(out)["algo"], json.loads(out)["timesteps"]) == ("dqn", 777)


def test_a_point_system_file_found_in_either_place_still_loads(tmp_path, monkeypatch, capsys):
    from pokersquares_env.scoring import POINT_SYSTEMS

    monkeypatch.chdir(tmp_path)
    (tmp_path / "cfgdir").mkdir()
    (tmp_path / "cfgdir" / "near.json").write_text(json.dumps(dict(POINT_SYSTEMS["english"])))
    (tmp_path / "here.json").write_text(json.dumps(dict(POINT_SYSTEMS["english"])))
    for name, stored in (("near.json", str((tmp_path / "cfgdir" / "near.json").resolve())), ("here.json", "here.json")):
        (tmp_path / "cfgdir" / "c.yaml").write_text(f"scoring: {name}\n")
        status, out, err = _train(capsys, "--config", "cfgdir/c.yaml", "--print-config")
        assert status == 0, err
        assert json.loads(out)["scoring"] == stored


def test_yaml_configs_read_e_notation_as_numbers(tmp_path, capsys):
    """PyYAML (YAML 1.1) reads 3e-4 and 2e6 as text: before, `learning_rate: 3e-4` was "expected a positive number"
    and `timesteps: 2e6` "expected an integer >= 1"; a whole number is exact, as --timesteps 2e6 on the CLI."""
    path = tmp_path / "c.yaml"
    path.write_text("algo: fast-ppo\nlearning_rate: 3e-4\ntimesteps: 2e6\neval_every: 2.5e5\nent_coef: 1E-3\n")
    status, out, err = _train(capsys, "--config", str(path), "--print-config")
    assert status == 0, err
    cfg = json.loads(out)
    assert cfg["learning_rate"] == 3e-4 and cfg["ent_coef"] == 1e-3
    assert cfg["timesteps"] == 2_000_000 and isinstance(cfg["timesteps"], int)
    assert cfg["eval_every"] == 250_000 and isinstance(cfg["eval_every"], int)
    path.write_text("algo: fast-ppo\ntimesteps: 2.5e0\n")  # not a whole number: still named
    status, out, err = _train(capsys, "--config", str(path), "--print-config")
    assert status == 2 and "timesteps=2.5: expected an integer 1..4611686018427387904" in err


def test_sweep_yaml_reads_e_notation_bounds(tmp_path):
    from agents.sweep import load_sweep

    path = tmp_path / "s.yaml"
    path.write_text("train: {algo: fast-ppo, timesteps: 1e3}\nspace:\n  learning_rate: {loguniform: [1e-4, 3e-3]}\n")
    cfg = load_sweep(path)
    assert cfg.space["learning_rate"] == {"loguniform": [1e-4, 3e-3]} and cfg.train["timesteps"] == 1000


def test_the_pyyaml_hint_names_the_extra_a_sweep_needs(monkeypatch, tmp_path):
    """A README walk-through found a core-only `sweep CONFIG.yaml` told to install [train], which has PyYAML but not
    Ray: the sweep then failed again, asking for [distributed]; the hint now names both."""
    import sys

    from agents.config import _yaml

    monkeypatch.setitem(sys.modules, "yaml", None)  # `import yaml` raises ImportError
    with pytest.raises(ImportError, match=r'pokersquares_env\[train\]".*"pokersquares_env\[distributed\]", which has '
                                          r'it too\), or write the config as JSON'):
        _yaml()
    # a YAML file read without PyYAML gets that ImportError as it is (it was wrapped as "could not be parsed as YAML:
    # ...", which reads like a syntax error)
    from agents.config import TrainConfig

    path = tmp_path / "train.yaml"
    path.write_text("algo: fast-ppo\n", encoding="utf-8")
    with pytest.raises(ImportError, match=r'^YAML configs need PyYAML: pip install "pokersquares_env\[train\]"'):
        TrainConfig.load(path)


def test_maskable_ppo_defaults_are_the_documented_ones():
    """SB3's MaskablePPO defaults docs/training.md gives ("learning rate 3e-4, entropy 0.01, 8 envs x 256 steps,
    minibatch 256", "4 epochs"), as a run resolves them: dqn's and fast-ppo's were pinned, maskable-ppo's were not."""
    from agents.config import TrainConfig

    cfg = TrainConfig(algo="maskable-ppo").resolved()
    assert (cfg.net, cfg.hidden, cfg.learning_rate, cfg.ent_coef) == ("mlp", [256, 256], 3e-4, 0.01)
    assert (cfg.num_envs, cfg.num_steps, cfg.minibatch_size, cfg.update_epochs) == (8, 256, 256, 4)
    assert (cfg.max_grad_norm, cfg.gamma) == (0.5, 1.0)
    # the options every algorithm shares keep TrainConfig's documented defaults
    assert (cfg.gae_lambda, cfg.clip_coef, cfg.vf_coef) == (0.95, 0.2, 0.5)
    assert (cfg.buffer_size, cfg.learning_starts, cfg.target_tau) == (200_000, 5_000, 0.01)
    assert (cfg.epsilon_start, cfg.epsilon_end, cfg.exploration_fraction) == (1.0, 0.02, 0.3)


def test_a_resolved_config_owns_a_list_of_the_layers_it_was_given():
    """The layer sizes given (a list, or a tuple as Python code may give them) come back as a list of the resolved
    config's own: changing it leaves the config it was resolved from alone."""
    from agents.config import TrainConfig

    given = TrainConfig(algo="fast-ppo", hidden=[8, 8])
    cfg = given.resolved()
    cfg.hidden.append(4)
    assert given.hidden == [8, 8]
    from_tuple = TrainConfig(algo="dqn", hidden=(16, 8)).resolved()
    assert type(from_tuple.hidden) is list and from_tuple.hidden == [16, 8]


@pytest.mark.parametrize("over", [dict(learning_rate=float("inf")), dict(max_grad_norm=float("inf")),
                                  dict(ent_coef=float("inf")), dict(clip_coef=float("inf")),
                                  dict(time_limit=float("inf")), dict(learning_rate=float("nan")),
                                  dict(learning_rate=True), dict(clip_coef=True), dict(vf_coef=True),
                                  dict(max_grad_norm=True), dict(ent_coef=False), dict(gae_lambda=True),
                                  dict(target_tau=True), dict(time_limit=True), dict(vf_coef=0.0),
                                  dict(vf_coef=-0.5)])
def test_infinite_boolean_and_non_positive_coefficients_are_refused_by_name(over):
    """A float option takes a finite number, never a bool (``true`` in a config file is not 1.0), and vf_coef, like
    clip_coef, must be positive: each is refused naming the option and its value."""
    from agents.config import ConfigError, TrainConfig

    [(name, value)] = over.items()
    with pytest.raises(ConfigError, match=f"^{re.escape(f'{name}={value!r}: expected')}"):
        TrainConfig(algo="fast-ppo", **over).resolved()


def test_a_config_saved_under_a_yml_name_is_written_as_yaml(tmp_path):
    """``save`` writes YAML for .yaml and .yml names alike (a .yml file held JSON, which YAML reads, unseen)."""
    import yaml

    from agents.config import TrainConfig

    cfg = TrainConfig(algo="dqn", hidden=[8, 8], timesteps=777)
    for name in ("c.yml", "c.yaml"):
        text = cfg.save(tmp_path / name).read_text()
        assert not text.lstrip().startswith("{") and "algo: dqn\n" in text and "timesteps: 777\n" in text
        assert yaml.safe_load(text) == cfg.to_dict() and TrainConfig.load(tmp_path / name) == cfg
    text = cfg.save(tmp_path / "c.json").read_text()
    assert json.loads(text) == cfg.to_dict()


def test_read_json_gives_none_for_a_file_that_is_not_utf8_text(tmp_path):
    """The run marks and records read by read_json are None when missing, malformed or not UTF-8 text (the last
    raised UnicodeDecodeError through the callers that test for None)."""
    from agents.config import read_json

    path = tmp_path / "mark.json"
    path.write_bytes(b'{"owner": "\xff"}')
    assert read_json(path) is None
    path.write_text("{not json")
    assert read_json(path) is None
    assert read_json(tmp_path / "missing.json") is None
    path.write_text('{"owner": "me"}')
    assert read_json(path) == {"owner": "me"}


def test_a_trainer_module_whose_import_is_blocked_is_not_installed(monkeypatch):
    """A module set to None in sys.modules (what an install without the extra finds: importing it raises
    ImportError) is missing, whether or not it could be found on the path: the trainer is refused naming it."""
    import sys

    from agents.config import MissingExtraError, check_trainer_installed, installed

    monkeypatch.setitem(sys.modules, "torch", None)
    assert not installed("torch")
    with pytest.raises(MissingExtraError, match=re.escape('dqn needs torch: pip install "pokersquares_env[train]"')):
        check_trainer_installed("dqn")


def test_a_yaml_syntax_error_is_one_line(tmp_path, capsys):
    """An audit found PyYAML's multi-line message (its 'in "<unicode string>", line 2' and a caret under a copy of
    the line) passed on as it is: the command's error is to be one line naming the file, line and column."""
    path = tmp_path / "bad.yaml"
    path.write_text("algo: dqn\n  bad: : indent\n")
    status, out, err = _train(capsys, "--config", str(path), "--print-config")
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert "bad.yaml" in err and "line 2" in err


@pytest.mark.parametrize("name", ["learning_rate", "reward_scale", "time_limit", "gae_lambda", "clip_coef", "vf_coef",
                                  "max_grad_norm", "gamma", "ent_coef"])
def test_a_float_option_of_an_integer_beyond_floats_is_refused_by_name(name):
    """Before, ``math.isfinite(10**400)`` raised OverflowError out of the validation: a traceback, not the option."""
    from agents.config import ConfigError, TrainConfig

    with pytest.raises(ConfigError, match=f"^{re.escape(name)}=1000+: expected"):
        TrainConfig(algo="fast-ppo", **{name: 10**400}).resolved()


@pytest.mark.parametrize("text, shown", [("1e400", "inf"), ("1e5000", "inf"), ("-1e400", "-inf")])
def test_yaml_e_notation_beyond_floats_is_infinite_and_named(text, shown, tmp_path, capsys):
    """Before, ``learning_rate: 1e400`` was read as the integer 10**400 (an OverflowError traceback), and ``1e5000``
    failed even to be shown (Python's 4300-digit limit on int to text)."""
    path = tmp_path / "c.yaml"
    path.write_text(f"algo: fast-ppo\nlearning_rate: {text}\n")
    status, out, err = _train(capsys, "--config", str(path), "--print-config")
    assert status == 2 and err == f"pokersquares train: learning_rate={shown}: expected a positive number\n", err


@pytest.mark.parametrize("timesteps", [2**62 + 1, 10**400])
def test_timesteps_beyond_what_the_trainers_count_in_floats_are_refused_before_the_run_folder(timesteps, tmp_path,
                                                                                            capsys):
    """Before, a 401-digit --timesteps passed validation, made the run folder (config.json, tb/, checkpoints/) and
    failed inside fast-ppo, dqn or SB3 with "int too large to convert to float"."""
    out = tmp_path / "run"
    status, _, err = _train(capsys, "--timesteps", str(timesteps), "--algo", "fast-ppo", "--out", str(out),
                            "--no-progress", "--time-limit", "1", "--final-eval-games", "1")  # (were it taken)
    assert status == 2 and err.startswith(f"pokersquares train: timesteps={timesteps}: expected an integer "
                                          f"1..4611686018427387904") and err.count("\n") == 1, err
    assert not out.exists()
    from agents.config import TrainConfig

    assert TrainConfig(algo="fast-ppo", timesteps=2**62).resolved().timesteps == 2**62  # the bound itself is taken


def test_a_train_config_with_keys_that_are_not_text_names_them(tmp_path, capsys):
    """YAML reads ``7: 1`` with the key 7; before, sorting it with the text keys ended in a TypeError traceback."""
    path = tmp_path / "c.yaml"
    path.write_text("timesteps: 100\n7: 1\nzz: 2\n")
    status, out, err = _train(capsys, "--config", str(path), "--print-config")
    assert status == 2 and err.startswith(f"pokersquares train: config file {str(path)!r}: unknown option(s) "
                                          f"[7, 'zz']; expected some of") and err.count("\n") == 1, err
