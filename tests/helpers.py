"""Small helpers shared by several test modules (importable as ``helpers``, see conftest.py)."""

from __future__ import annotations


def cli_status(argv: list[str]) -> int:
    """The exit status of ``pokersquares ARGV``: what ``main`` returns, or the code of argparse's usage error
    (``SystemExit``), so a test need not know which of the two refuses a bad value."""
    from pokersquares_env.cli import main

    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def play_game(agent, game, deck):
    """Play ``deck`` to the end with ``agent`` (checking every cell is legal): ``(placements, score)``."""
    state = game.init(deck, validate=False)
    agent.reset()
    while not state.terminal:
        cell = agent.act(None, None, game, state.copy())
        assert cell in game.legal_cells(state)
        game.apply(state, cell)
    return list(state.placements), game.score(state)


def tune_trial_configs(captured, tmp_path):
    """Every trial config Ray Tune would run from the ``Tuner`` keyword arguments ``captured`` of a stopped
    ``run_sweep``: its search algorithm is asked for each trial, as Tune would (nothing trains, no Ray starts)."""
    from ray.tune.experiment import Experiment

    tune_config = captured["tune_config"]
    search = tune_config.search_alg
    search.add_configurations([Experiment("draws", lambda cfg: None, config=captured["param_space"],
                                          num_samples=tune_config.num_samples, storage_path=str(tmp_path / "tune"))])
    draws = []
    while (trial := search.next_trial()) is not None:
        draws.append(trial.config)
    return draws


def sigterm_evaluate(args: list[str], cwd, journal, wait_s: float, exit_s: float, lines: int = 5) -> tuple[int, str]:
    """Run ``pokersquares evaluate ARGS`` in ``cwd`` as a subprocess, send it SIGTERM once ``journal`` holds
    ``lines`` finished games (or after ``wait_s`` seconds, or when it has ended), and wait up to ``exit_s`` seconds
    for it: ``(exit status, its stderr)``, as a time limit stopping the command from outside would see them."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    err_file = Path(cwd) / "stderr.txt"
    with open(err_file, "w", encoding="utf-8") as err_out:
        proc = subprocess.Popen([sys.executable, "-m", "pokersquares_env.cli", "evaluate", *args], cwd=cwd,
                                stdout=subprocess.DEVNULL, stderr=err_out,
                                env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and proc.poll() is None:
        if journal.exists() and journal.read_bytes().count(b"\n") >= lines:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=exit_s)
    return proc.returncode, err_file.read_text(encoding="utf-8")


def legend_below_the_axes(fig):
    """The legend of a one-axes ``fig`` (the figure's, or else the axes'), after checking that the drawn figure
    puts it below the axes and their tick labels (so it covers no curve or bar) and inside the figure."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    (ax,) = fig.axes
    legend = fig.legends[0] if fig.legends else ax.get_legend()
    box, page = legend.get_window_extent(renderer), fig.bbox
    assert box.y1 <= ax.get_tightbbox(renderer).y0 + 1, "the legend overlaps the axes"
    assert page.x0 - 1 <= box.x0 and box.x1 <= page.x1 + 1 and box.y0 >= page.y0 - 1, "the legend leaves the figure"
    return legend


def needs(*modules: str):
    """A mark that skips the test where one of ``modules`` (top-level names of :data:`pokersquares_env.cli.EXTRAS`)
    is not installed, naming it and its extra: the suite then runs on an install with fewer extras
    (``EXTRAS=test bash scripts/test_python.sh``: the core alone).  Under ``POKERSQUARES_NO_SKIP=1`` (CI, every extra)
    a skip fails the run."""
    import importlib.util

    import pytest

    from pokersquares_env.cli import EXTRAS

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    reason = ", ".join(f"{m} (the {EXTRAS[m]} extra)" for m in missing)
    return pytest.mark.skipif(bool(missing), reason=f"needs {reason}")


def missing_extra(exc: ImportError) -> str | None:
    """What ``exc`` says is missing when that is a package of an optional extra, really absent here ("numba, of the
    fast extra"); ``None`` for any other import error (a module of the library's own, a name gone from a module).

    ``exc`` is a ``ModuleNotFoundError`` or the library's ``MissingExtraError`` naming a top-level module of
    :data:`pokersquares_env.cli.EXTRAS`, or one of the library's own messages for a missing extra ('drawing frames
    needs Pillow: pip install "pokersquares_env[render]"'), checked against the modules of that extra."""
    import importlib.util
    import re

    from pokersquares_env.cli import EXTRAS

    name = (exc.name or "").partition(".")[0]
    if name in EXTRAS and importlib.util.find_spec(name) is None:
        return f"{name}, of the {EXTRAS[name]} extra"
    named = re.search(r'pip install "pokersquares_env\[(\w+)\]"', str(exc))
    absent = [m for m, extra in EXTRAS.items() if named and extra == named.group(1)
              and importlib.util.find_spec(m) is None]
    return f"{', '.join(absent)}, of the {named.group(1)} extra" if absent else None


def skip_for_a_missing_extra(exc: ImportError, where: str) -> None:
    """Skip the test when ``exc`` says that a package of an optional extra is not installed (:func:`missing_extra`);
    otherwise return, for the caller to raise.  Under ``POKERSQUARES_NO_SKIP=1`` (CI) a skip fails the run."""
    import pytest

    what = missing_extra(exc)
    if what is not None:
        pytest.skip(f"{where} needs {what}: {exc}")
