"""The experiments' own run folders: each training run an experiment starts is marked, and only marked runs are replaced.

An experiment trains into ``OUT/<algo>`` or ``OUT/runs/<name>`` and, run again into the same ``OUT``, replaces (or
reuses) its own runs there.  Before training, :func:`mark_run` writes :data:`RUN_MARK` (naming the experiment) into
the run folder; :func:`check_own_runs`, called before any slow work, refuses a folder holding a training run
(:data:`agents.train.RUN_FILES`) without that mark -- a run trained by hand, copied in, or written by another
experiment -- so an experiment never replaces a run it did not write (as ``pokersquares train`` refuses one
without ``--overwrite`` and the demo one without its ``demo.json``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["RUN_MARK", "check_own_runs", "mark_run", "written_by"]

#: written into every run folder an experiment trains: ``{"written_by": "pokersquares experiment NAME"}``
RUN_MARK = "experiment_run.json"


def written_by(experiment: str) -> str:
    """The ``written_by`` value of an experiment's mark (``experiment`` as its CLI name, e.g. ``reward-shaping``)."""
    return f"pokersquares experiment {experiment}"


def _mark_of(folder: Path) -> Any:
    try:
        return json.loads((folder / RUN_MARK).read_text(encoding="utf-8")).get("written_by")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        return None


def check_own_runs(folders: Iterable[str | Path], experiment: str) -> None:
    """Raise ValueError naming the first folder that holds a training run ``experiment`` did not write (no mark of
    it), with what to do; folders that do not exist, hold no run, or hold the experiment's own run pass."""
    from agents.train import run_files_in

    for folder in map(Path, folders):
        if folder.exists() and not folder.is_dir():
            raise ValueError(f"{str(folder)!r} is a file: expected a run folder of the experiment (new or its own); "
                             f"move the file or choose another --out")
        found = run_files_in(folder) if folder.is_dir() else []
        if found and _mark_of(folder) != written_by(experiment):
            raise ValueError(
                f"{str(folder)!r} holds a training run the {experiment} experiment did not write ({', '.join(found)}; "
                f"no {RUN_MARK} of it): choose another --out, or move that folder away (the experiment replaces "
                f"only its own runs)")


def mark_run(folder: str | Path, experiment: str) -> None:
    """Create ``folder`` if need be and mark it as ``experiment``'s run folder (before the run writes anything)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / RUN_MARK).write_text(json.dumps({"written_by": written_by(experiment)}) + "\n")
