import json
import math

import pytest

pytest.importorskip("torch")


def test_demo_trains_and_evaluates_with_tiny_budgets(tmp_path, monkeypatch, capsys):
    from pokersquares_env.cli import main

    monkeypatch.setenv("POKERSQUARES_TINY", "1")
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--games", "8"]) == 0
    text = capsys.readouterr().out
    assert "| random |" in text and "| greedy |" in text and f"fastppo:{out}" in text
    # the self-play-learned tables are trained on first use and their agent is in the table
    assert "| expectimax:games=3000 |" in text and any((tmp_path / "cache" / "tables").iterdir())
    assert (out / "model.pt").exists() and (out / "config.json").exists()
    summary = (out / "evaluation")
    files = {p.name for p in summary.iterdir()}
    assert any(name.endswith(".jsonl") for name in files), files
    config = json.loads((out / "config.json").read_text())
    assert config["algo"] == "fast-ppo" and config["shaping"] == "heuristic"  # tiny: no table training for it


def test_demo_shapes_rewards_with_the_self_play_tables(tmp_path, monkeypatch, capsys):
    """``--shaping tables`` trains (or loads) the expectimax tables before PPO and shapes with them."""
    import agents.expectimax
    from pokersquares_env.cli import main

    monkeypatch.setenv("POKERSQUARES_TINY", "1")
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(agents.expectimax, "DEFAULT_GAMES", 2000)  # the tables' training, shrunk
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--games", "4", "--no-search", "--minutes", "0.05",
                 "--shaping", "tables"]) == 0
    assert "shaping=tables" in capsys.readouterr().out
    assert json.loads((out / "config.json").read_text())["shaping"] == "tables"
    names = [p.name for p in (tmp_path / "cache" / "tables").iterdir()]
    assert len(names) == 1, names  # trained once, before PPO, and reused by it


def test_demo_no_search_leaves_expectimax_out(tmp_path, monkeypatch, capsys):
    from pokersquares_env.cli import main

    monkeypatch.setenv("POKERSQUARES_TINY", "1")
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path / "cache"))
    assert main(["demo", "--out", str(tmp_path / "demo"), "--games", "4", "--no-search", "--minutes", "0.05"]) == 0
    text = capsys.readouterr().out
    assert "| rules |" in text and "expectimax" not in text
    assert not (tmp_path / "cache").exists()


def test_cli_lists_every_command(capsys):
    from pokersquares_env.cli import COMMANDS, main

    assert main([]) == 0
    text = capsys.readouterr().out
    for name in COMMANDS:
        assert name in text


def test_cli_exits_quietly_when_its_reader_leaves():
    """`pokersquares evaluate ... | head`: the closed pipe ends the command with status 141, not a traceback."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen([sys.executable, "-m", "pokersquares_env.cli", "evaluate", "--agent", "random",
                             "--games", "3", "--no-progress"], cwd=root, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before anything is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert "Traceback" not in err and "BrokenPipeError" not in err


def test_demo_step_budget_stops_training_and_reproduces_the_model(tmp_path, monkeypatch, capsys):
    """``--steps`` governs (whole updates of 64 x 50 steps in tiny mode), and a seed then gives the same model."""
    import torch

    from pokersquares_env.cli import main

    monkeypatch.setenv("POKERSQUARES_TINY", "1")
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path / "cache"))
    weights = []
    for name in ("a", "b"):
        out = tmp_path / name
        assert main(["demo", "--out", str(out), "--games", "4", "--no-search", "--steps", "5e3", "--minutes", "5",
                     "--seed", "3", "--torch-threads", "1"]) == 0
        text = capsys.readouterr().out
        # the budget as trained: rounded up to whole updates, said so before training (it used to say 5,000)
        assert "for 6,400 steps (5,000 asked, rounded up to whole updates) (at most 5 min)" in text
        assert "trained 6,400 steps" in text
        assert "limit stopped it" not in text
        config = json.loads((out / "config.json").read_text())
        assert config["timesteps"] == 5000 and config["torch_threads"] == 1
        weights.append(torch.load(out / "model.pt", weights_only=False)["state_dict"])
    assert weights[0].keys() == weights[1].keys()
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])


def test_demo_says_when_the_time_limit_cut_the_step_budget(tmp_path, monkeypatch, capsys):
    from pokersquares_env.cli import main

    monkeypatch.setenv("POKERSQUARES_TINY", "1")
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path / "cache"))
    assert main(["demo", "--out", str(tmp_path / "demo"), "--games", "4", "--no-search", "--steps", "1e8",
                 "--minutes", "0.02"]) == 0
    text = capsys.readouterr().out
    assert "the 0.02-minute limit stopped it before 100,000,000 steps" in text


@pytest.mark.parametrize("value", ["abc", "0", "1.5", "nan", "-3", "inf", "1e400"])
def test_demo_refuses_a_bad_step_budget(value, capsys):
    from pokersquares_env.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["demo", "--steps", value])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"--steps: {value}" in err.replace("'", "") and "expected a" in err


def test_demo_replaces_its_own_run_but_refuses_another(tmp_path, monkeypatch, capsys):
    from agents.train import train
    from pokersquares_env.cli import main

    monkeypatch.setenv("POKERSQUARES_TINY", "1")
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path / "cache"))
    other = tmp_path / "mine"
    train(algo="fast-ppo", out=str(other), timesteps=416, num_envs=16, num_steps=26, minibatch_size=208,
          hidden=[8], eval_every=0, checkpoint_every=0, final_eval_games=0, progress=False)
    before = {p: p.read_bytes() for p in other.rglob("*") if p.is_file()}
    assert main(["demo", "--out", str(other), "--games", "2", "--no-search", "--minutes", "0.02"]) == 2
    assert "holds a training run the demo did not write" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in other.rglob("*") if p.is_file()} == before  # the run is untouched
    own = tmp_path / "demo"
    for _ in range(2):  # a second demo replaces the first one's run
        assert main(["demo", "--out", str(own), "--games", "2", "--no-search", "--minutes", "0.02"]) == 0
    assert (own / "model.pt").is_file() and (own / "demo.json").is_file()


def test_demo_refuses_a_seed_beyond_32_bits_before_any_work(tmp_path, monkeypatch, capsys):
    """A training seed above 2**32 - 1 is a usage error: nothing written, nothing trained, no traceback."""
    import agents.train
    from pokersquares_env.cli import main

    def no_training(*args, **kwargs):
        raise AssertionError("trained before checking the seed")

    monkeypatch.setenv("POKERSQUARES_TINY", "1")
    monkeypatch.setattr(agents.train, "train", no_training)
    out = tmp_path / "demo"
    with pytest.raises(SystemExit) as exc:
        main(["demo", "--seed", "4294967296", "--out", str(out), "--shaping", "none", "--no-search", "--steps", "1000",
              "--no-progress"])
    assert exc.value.code == 2
    assert "--seed: 4294967296: expected an integer from 0 to 4294967295" in capsys.readouterr().err
    assert not out.exists()


def test_demo_reports_a_training_config_error_without_a_traceback(tmp_path, monkeypatch, capsys):
    import agents.train
    from agents.config import ConfigError
    from pokersquares_env.cli import main

    def refuse(*args, **kwargs):
        raise ConfigError("out='x': some problem only the run folder shows")

    monkeypatch.setenv("POKERSQUARES_TINY", "1")
    monkeypatch.setattr(agents.train, "train", refuse)
    assert main(["demo", "--out", str(tmp_path / "demo"), "--no-search", "--no-progress"]) == 2
    assert capsys.readouterr().err == "pokersquares demo: out='x': some problem only the run folder shows\n"


def test_demo_help_states_every_default():
    from pokersquares_env.cli import build_parser

    parser = build_parser("demo")
    demo = next(a for a in parser._actions if a.dest == "command").choices["demo"]
    for action in demo._actions:
        if action.option_strings and action.dest not in ("help", "no_progress"):
            assert "default" in (action.help or ""), f"{action.option_strings[0]} does not state its default"


def test_demo_names_an_out_that_is_a_file_as_its_option(tmp_path, monkeypatch, capsys):
    """Before: "pokersquares demo: out_dir='afile' is a file" -- the demo's option is --out."""
    from pokersquares_env.cli import main

    monkeypatch.setenv("POKERSQUARES_TINY", "1")
    afile = tmp_path / "afile"
    afile.write_text("keep")
    assert main(["demo", "--out", str(afile), "--no-search", "--no-progress"]) == 2
    assert capsys.readouterr().err == (f"pokersquares demo: --out {str(afile)!r} is a file: expected a folder for "
                                       f"the outputs (new or existing)\n")
    assert afile.read_text() == "keep"


def test_train_overwrite_of_a_demo_run_takes_it_from_the_demo(tmp_path, monkeypatch, capsys):
    """`pokersquares train --overwrite` into the demo's folder removes demo.json with the demo's run, so a later demo
    refuses the hand-trained run instead of replacing it; the demo's own re-run keeps its mark."""
    import agents.fast_ppo
    from pokersquares_env.cli import main

    monkeypatch.setattr(agents.fast_ppo, "train", lambda cfg, run: None)  # the folder is the point, not training
    out = tmp_path / "demo"
    out.mkdir()
    (out / "demo.json").write_text(json.dumps({"written_by": "pokersquares demo"}))
    (out / "config.json").write_text("{}")  # the demo's run
    assert main(["train", "--algo", "fast-ppo", "--out", str(out), "--overwrite", "--final-eval-games", "0",
                 "--no-progress"]) == 0
    assert not (out / "demo.json").exists()
    monkeypatch.setenv("POKERSQUARES_TINY", "1")
    capsys.readouterr()
    assert main(["demo", "--out", str(out), "--no-search", "--no-progress", "--shaping", "none"]) == 2
    assert "holds a training run the demo did not write" in capsys.readouterr().err


def test_demo_stops_with_status_130_when_ctrl_c_stopped_the_training(tmp_path, monkeypatch, capsys):
    """Before, a Ctrl-C that stopped the training went on to the evaluation and exited 0."""
    import agents.evaluation
    import agents.train
    from agents.train import TrainResult
    from pokersquares_env.cli import main

    def interrupted(*args, **kwargs):
        return TrainResult(out=kwargs["out"], model_path=kwargs["out"] + "/model.pt", steps=64, seconds=1.0,
                           interrupted=True, evaluation=None)

    def no_evaluation(*args, **kwargs):
        raise AssertionError("evaluated an interrupted run")

    monkeypatch.setenv("POKERSQUARES_TINY", "1")
    monkeypatch.setattr(agents.train, "train", interrupted)
    monkeypatch.setattr(agents.evaluation, "evaluate", no_evaluation)
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--no-search", "--no-progress", "--shaping", "none"]) == 130
    err = capsys.readouterr().err
    assert "Ctrl-C stopped the training at step 64" in err and "kept in" in err and "--resume" in err


def test_demo_refuses_an_empty_out_and_writes_nothing(tmp_path, monkeypatch, capsys):
    """Before, ``--out ''`` trained into the current folder (Path('') is '.'): model.pt, config.json, checkpoints/,
    tb/, evaluation/ and demo.json beside whatever was there."""
    import agents.train
    from pokersquares_env.cli import main

    monkeypatch.setenv("POKERSQUARES_TINY", "1")
    monkeypatch.setattr(agents.train, "train", lambda *a, **k: pytest.fail("trained into --out ''"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["demo", "--out", "", "--no-search", "--no-progress", "--shaping", "none"]) == 2
    assert capsys.readouterr().err == ("pokersquares demo: --out '': expected a folder path (an empty one names no "
                                       "folder; '.' is the current folder)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_demo_names_a_point_file_with_a_non_number_without_a_traceback(tmp_path, monkeypatch, capsys):
    """Before, exit 1 with a TypeError traceback (the demo caught only ValueError); evaluate, train, ... say it."""
    from pokersquares_env.cli import main

    monkeypatch.setenv("POKERSQUARES_TINY", "1")
    bad = tmp_path / "badval.json"
    bad.write_text(json.dumps({"points": {"flush": "x"}}))
    out = tmp_path / "demo"
    assert main(["demo", "--scoring", str(bad), "--out", str(out), "--no-search", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"pokersquares demo: point system file {str(bad)!r}: ") and err.count("\n") == 1, err
    assert "'x' is not a number" in err and not out.exists()


def test_demo_outside_tiny_mode_trains_its_documented_budget_shaped_by_the_tables(tmp_path, monkeypatch, capsys):
    """Without POKERSQUARES_TINY (``0`` is off), the demo trains 2.5M steps annealed by steps (so a seed reproduces)
    within 10 minutes, shaped by the self-play tables, which are made before the PPO clock starts."""
    import agents.shaping
    import agents.train
    from agents.train import TrainResult
    from pokersquares_env.cli import main

    made, seen = [], {}

    def interrupted(**kwargs):  # stop before the evaluation: the options are the point
        seen.update(kwargs)
        return TrainResult(out=kwargs["out"], model_path=kwargs["out"] + "/model.pt", steps=64, seconds=1.0,
                           interrupted=True, evaluation=None)

    monkeypatch.setenv("POKERSQUARES_TINY", "0")
    monkeypatch.setattr(agents.shaping.LinePotential, "make", staticmethod(lambda *a, **k: made.append(a)))
    monkeypatch.setattr(agents.train, "train", interrupted)
    assert main(["demo", "--out", str(tmp_path / "demo"), "--no-search", "--no-progress"]) == 130
    assert made == [("tables", "american")] and seen["shaping"] == "tables"
    assert seen["timesteps"] == 2_500_000 and seen["anneal_by"] == "steps" and seen["time_limit"] == 600.0
    assert "(at most 10 min)" in capsys.readouterr().out


def test_demo_mark_must_be_a_file(tmp_path, monkeypatch, capsys):
    """A folder named demo.json is no mark of the demo: a run beside it is refused, untouched (not replaced)."""
    from pokersquares_env.cli import main

    monkeypatch.setenv("POKERSQUARES_TINY", "1")
    out = tmp_path / "demo"
    (out / "demo.json").mkdir(parents=True)
    (out / "config.json").write_text("{}")
    assert main(["demo", "--out", str(out), "--no-search", "--no-progress", "--shaping", "none"]) == 2
    assert "holds a training run the demo did not write" in capsys.readouterr().err
    assert (out / "config.json").read_text() == "{}"


def test_demo_evaluates_on_its_seed_and_prints_the_trained_agents_differences(tmp_path, monkeypatch, capsys):
    """The common deals are those of --seed, and the paired differences printed are the trained agent's only."""
    import agents.evaluation
    import agents.train
    from agents.train import TrainResult
    from pokersquares_env.cli import main

    out = tmp_path / "demo"
    spec, seen = f"fastppo:{out}", {}

    class Evaluation:
        def table(self):
            return "| the table |"

        def paired(self):
            return [{"a": spec, "b": "random", "mean_diff": 12.5, "ci95": 1.25, "deals": 3},
                    {"a": "random", "b": "greedy", "mean_diff": -3.0, "ci95": 0.5, "deals": 3}]

    def evaluate(agents, **kwargs):
        seen.update(kwargs, agents=agents)
        return Evaluation()

    monkeypatch.setenv("POKERSQUARES_TINY", "1")
    monkeypatch.setattr(agents.train, "train", lambda **kw: TrainResult(
        out=kw["out"], model_path=kw["out"] + "/model.pt", steps=64, seconds=123.4, interrupted=False, evaluation=None))
    monkeypatch.setattr(agents.evaluation, "evaluate", evaluate)
    assert main(["demo", "--out", str(out), "--seed", "7", "--games", "3", "--no-search", "--no-progress",
                 "--shaping", "none"]) == 0
    assert seen["agents"] == [spec, "random", "greedy", "rules"] and seen["seed"] == 7 and seen["games"] == 3
    text = capsys.readouterr().out
    assert f"{spec} - random: +12.50 ± 1.25 (95% CI over 3 shared deals)" in text and "random - greedy" not in text
    # the training's own seconds, as train() measured them (it printed the whole call's, set-up included)
    assert "trained 64 steps in 123 s; model: " in text
    seen.clear()  # one deal has no spread: no interval (it printed "± nan")
    Evaluation.paired = lambda self: [{"a": spec, "b": "random", "mean_diff": 12.5, "ci95": math.nan, "deals": 1}]
    assert main(["demo", "--out", str(out), "--seed", "7", "--games", "1", "--no-search", "--no-progress",
                 "--shaping", "none"]) == 0
    assert f"{spec} - random: +12.50 on 1 shared deal (no interval)" in capsys.readouterr().out
