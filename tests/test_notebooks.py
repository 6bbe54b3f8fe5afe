"""The notebooks run top to bottom with tiny budgets (POKERSQUARES_TINY=1, as in CI)."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def test_the_three_notebooks_exist():
    names = [p.name for p in NOTEBOOKS]
    for name in ("01_quickstart.ipynb", "02_train_maskable_ppo.ipynb", "03_english_vs_american.ipynb"):
        assert name in names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_with_tiny_budgets(path, tmp_path, monkeypatch):
    monkeypatch.setenv("POKERSQUARES_TINY", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    book = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        book, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()  # raises CellExecutionError naming the failing cell
    errors = [o for c in book.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    assert not list(tmp_path.glob("runs")), "tiny runs must write to temporary folders, not ./runs"
