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
