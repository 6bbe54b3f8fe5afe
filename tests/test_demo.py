import json

import pytest

pytest.importorskip("torch")


def test_demo_trains_and_evaluates_with_tiny_budgets(tmp_path, monkeypatch, capsys):
    from pokersquares_env.cli import main

    monkeypatch.setenv("POKERSQUARES_TINY", "1")
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--games", "8"]) == 0
    text = capsys.readouterr().out
    assert "| random |" in text and "| greedy |" in text and f"fastppo:{out}" in text
    assert (out / "model.pt").exists() and (out / "config.json").exists()
    summary = (out / "evaluation")
    files = {p.name for p in summary.iterdir()}
    assert any(name.endswith(".jsonl") for name in files), files
    config = json.loads((out / "config.json").read_text())
    assert config["algo"] == "fast-ppo"


def test_cli_lists_every_command(capsys):
    from pokersquares_env.cli import COMMANDS, main

    assert main([]) == 0
    text = capsys.readouterr().out
    for name in COMMANDS:
        assert name in text
