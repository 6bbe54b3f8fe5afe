"""The speed benchmark runs end to end and prints every row it promises (figures are not asserted: timing is noisy)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_speed_benchmark_prints_the_table(capsys):
    speed = load("speed")
    assert speed.main(["--quick", "--repeats", "1", "--seconds", "0.02"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and not line.startswith("| what")]
    labels = [row.split(" | ")[0][2:] for row in rows]
    assert labels[0] == "FrozenLake-v1, gym.make (reference)"
    for n in speed.VECTOR_SIZES:
        assert any(label.startswith(f"PokerSquaresVectorEnv N={n} (") for label in labels), n
    assert any("copy=False" in label for label in labels)
    for row in rows:
        ratio = float(row.split(" | ")[2])
        assert ratio > 0


def test_residuals_analysis_runs_and_the_richer_fit_is_reported(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path))
    residuals = load("residuals")
    assert residuals.main(["--games", "60", "--table-games", "2000"]) == 0
    out = capsys.readouterr().out
    assert "60 games, american" in out and "over 1500 positions" in out
    sds = [float(line.rsplit(" ", 1)[1]) for line in out.splitlines() if "held-out residual sd" in line]
    assert len(sds) == 2 and all(sd > 0 for sd in sds)


def test_residuals_network_option(capsys, tmp_path, monkeypatch):
    import pytest

    pytest.importorskip("torch")
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path))
    residuals = load("residuals")
    assert residuals.main(["--games", "40", "--table-games", "2000", "--mlp", "2"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.strip().startswith("network, epoch")]
    assert [line.split(":")[0].strip() for line in lines] == ["network, epoch 1", "network, epoch 2"]


def test_residual_board_features_count_what_they_say():
    import numpy as np
    from agents.batch import Batch

    residuals = load("residuals")
    b = Batch(1)
    # nine hearts (suit 2, ranks 2..10): columns 0-3 collect them (3, 2, 2, 2 cards: 2+3+3+3 = 11 claimed, 4 unseen),
    # rows 0 and 1 hold four each (1 + 1 claimed), row 2 one (not yet a claim)
    for cell, card in zip([0, 5, 10, 1, 6, 2, 7, 3, 8], range(26, 35)):
        b.place(np.array([cell]), np.array([card]))
    f = residuals.board_features(b)[0]
    np.testing.assert_array_equal(f, [0, 2, 1, 7, 4, 1, 0, 0, 0, 0, 0])
    b.place(np.array([4]), np.array([0]))  # a club in row 0: the row dies for flushes; no pair, straight 2-6 dead
    f = residuals.board_features(b)[0]
    assert f[1] == 1 and f[8] == 0  # one live row left; row 0 is full, so not an open dead line
