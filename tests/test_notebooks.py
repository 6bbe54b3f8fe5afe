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
    scratch = tmp_path / "tmp"  # the kernel's temporary folder: the notebooks' tiny runs (tempfile.mkdtemp) go here,
    scratch.mkdir()  # not into the system's /tmp, where every test run left some megabytes
    monkeypatch.setenv("TMPDIR", str(scratch))
    book = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        book, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()  # raises CellExecutionError naming the failing cell
    errors = [o for c in book.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    assert not list(tmp_path.glob("runs")), "tiny runs must write to temporary folders, not ./runs"
    if path.stem != "01_quickstart":  # the two that train write their tiny runs to the temporary folder
        assert list(scratch.glob("ps_*")), sorted(p.name for p in scratch.iterdir())


# ---- runs/ is the repository root's, wherever the kernel starts ------------------------------------------------

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
TINY_EXPERIMENT = dict(timesteps=416, games=10, reward_modes=["line"], train_options=dict(
    hidden=[8, 8], num_envs=16, num_steps=26, minibatch_size=208, update_epochs=1))


def _a_checkout(tmp_path: Path) -> Path:
    """``tmp_path`` laid out as a checkout (a ``pyproject.toml`` and ``notebooks/``); its ``notebooks/`` folder,
    where Jupyter, VS Code and nbclient start a notebook's kernel."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'checkout'\n")
    (tmp_path / "notebooks").mkdir()
    return tmp_path / "notebooks"


def test_notebook_02_writes_its_full_runs_to_the_repository_root_from_notebooks(tmp_path, monkeypatch):
    """Before, OUT was "runs/notebook" relative to the kernel's folder: notebooks/runs/notebook."""
    monkeypatch.chdir(_a_checkout(tmp_path))
    monkeypatch.delenv("POKERSQUARES_TINY", raising=False)  # the full budgets: the first cell trains nothing
    book = nbformat.read(NOTEBOOK_DIR / "02_train_maskable_ppo.ipynb", as_version=4)
    namespace: dict = {}
    code = next(c.source for c in book.cells if c.cell_type == "code")
    exec(compile(code, "02_train_maskable_ppo.ipynb, first cell", "exec"), namespace)  # noqa: S102
    assert Path(namespace["OUT"]) == (tmp_path / "runs" / "notebook").resolve()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notebooks", "pyproject.toml"]


@pytest.mark.slow
def test_notebook_03_loads_the_experiment_made_at_the_repository_root(tmp_path, monkeypatch):
    """``pokersquares experiment reward-shaping`` run at the root writes runs/reward_shaping; the kernel starts in
    notebooks/.  Before, the notebook looked for notebooks/runs/reward_shaping, never found it and silently trained
    the full default experiment there."""
    from agents.experiments.reward_shaping import run_experiment

    notebooks = _a_checkout(tmp_path)
    folder = tmp_path / "runs" / "reward_shaping"
    run_experiment(out=str(folder), seeds=[0], progress=False, **TINY_EXPERIMENT)
    monkeypatch.delenv("POKERSQUARES_TINY", raising=False)  # the full budgets: loading is all the notebook may do
    monkeypatch.setenv("MPLBACKEND", "Agg")
    book = nbformat.read(NOTEBOOK_DIR / "03_english_vs_american.ipynb", as_version=4)
    book.cells.insert(0, nbformat.v4.new_code_cell(
        "import agents.experiments.reward_shaping as _rs\n\n\n"
        "def _no_training(*args, **kwargs):\n"
        "    raise AssertionError(f\"the notebook trained an experiment in {kwargs.get('out')!r}\")\n\n\n"
        "_rs.run_experiment = _no_training"))
    client = nbclient.NotebookClient(
        book, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(notebooks)}}
    )
    client.execute()  # raises CellExecutionError naming the failing cell (the guard's AssertionError, before)
    printed = "".join(o.get("text", "") for o in book.cells[2].outputs)
    assert printed.startswith(f"experiment folder: {folder.resolve()} | steps per run: 416"), printed
    assert list(notebooks.iterdir()) == []
