"""The notebooks run top to bottom with tiny budgets (POKERSQUARES_TINY=1, as in CI)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import needs

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
#: the modules of the train extra that a notebook's training needs (the others need only the core and matplotlib)
TRAINS = {"02_train_maskable_ppo": ("torch", "stable_baselines3", "sb3_contrib"), "03_english_vs_american": ("torch",)}


def test_the_three_notebooks_exist():
    names = [p.name for p in NOTEBOOKS]
    assert {f"{stem}.ipynb" for stem in TRAINS} <= set(names)
    for name in ("01_quickstart.ipynb", "02_train_maskable_ppo.ipynb", "03_english_vs_american.ipynb"):
        assert name in names


@pytest.mark.parametrize("path", [pytest.param(p, marks=needs(*TRAINS.get(p.stem, ()))) for p in NOTEBOOKS],
                         ids=[p.stem for p in NOTEBOOKS])
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
    assert Path(namespace["OUT"]) == Path("..", "runs", "notebook")  # relative: printed, it shows no machine's folders
    assert Path(namespace["OUT"]).resolve() == (tmp_path / "runs" / "notebook").resolve()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notebooks", "pyproject.toml"]


@pytest.mark.slow
@needs(*TRAINS["03_english_vs_american"])  # the experiment it loads is trained here first
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
    assert printed.startswith(f"experiment folder: {Path('..', 'runs', 'reward_shaping')} | steps per run: 416"), printed
    assert list(notebooks.iterdir()) == []


# ---- the notebooks are stored executed, so that they read on GitHub without running --------------------------------


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_the_stored_notebooks_were_run_top_to_bottom_at_full_budget_without_errors(path):
    """Stored outputs are what a reader sees on GitHub: every code cell ran, in order, in one kernel, none raised,
    and the figures are there.  Tiny (CI) budgets are not stored: their numbers would mislead.  To refresh them after
    a change: docs/testing.md, "Notebook outputs"."""
    book = nbformat.read(path, as_version=4)
    code = [c for c in book.cells if c.cell_type == "code"]
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1)), "not run top to bottom in one kernel"
    outputs = [o for c in code for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs), "no figure stored"
    text = "".join(o.get("text", "") + o.get("data", {}).get("text/markdown", "") for o in outputs)
    assert "Traceback" not in text
    assert "Warning" not in text, "a warning was stored (e.g. tqdm's IProgress warning without ipywidgets)"
    assert not re.search(r"(?<![\w.])/\S*/runs/", text), "an absolute path of the machine that ran it was stored"
    tiny_marks = {"01_quickstart": "| random | 20 |", "02_train_maskable_ppo": "budget: 2048 steps",
                  "03_english_vs_american": "steps per run: 416"}
    assert tiny_marks[path.stem] not in text, "outputs of a POKERSQUARES_TINY run were stored"


def test_storing_keeps_the_last_state_of_each_progress_bar_line():
    """scripts/run_notebooks.py stores progress bars as a terminal leaves them, not as hundreds of rewrites."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("run_notebooks", NOTEBOOK_DIR.parent / "scripts" / "run_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.settle("\rtrain:  0%| 0/9\rtrain: 50%| 4/9\rtrain: 100%| 9/9\nnext line\n") == \
        "train: 100%| 9/9\nnext line\n"
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x")])
    book.cells[0].outputs = [nbformat.v4.new_output("stream", name="stderr", text="\rbar 1"),
                             nbformat.v4.new_output("stream", name="stderr", text="\rbar 2\n"),
                             nbformat.v4.new_output("stream", name="stdout", text="result 3\n"),
                             nbformat.v4.new_output("stream", name="stdout", text="result 4\n")]
    module.collapse_streams(book)
    assert [(o.name, o.text) for o in book.cells[0].outputs] == [("stderr", "bar 2\n"), ("stdout", "result 3\nresult 4\n")]
