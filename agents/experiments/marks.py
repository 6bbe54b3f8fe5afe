"""The experiments' own folders: each experiment marks its ``--out`` and every run folder it trains, and replaces only
what it marked.

An experiment trains into ``OUT/<algo>`` or ``OUT/runs/<name>`` and, run again into the same ``OUT``, replaces (or
reuses) its own runs there.  Before training, :func:`mark_run` writes :data:`RUN_MARK` (naming the experiment) into
the run folder; :func:`check_own_runs`, called before any slow work, refuses a folder holding a training run
(:data:`agents.train.RUN_FILES`) without that mark -- a run trained by hand, copied in, or written by another
experiment -- so an experiment never replaces a run it did not write (as ``pokersquares train`` refuses one
without ``--overwrite`` and the demo one without its ``demo.json``).  ``pokersquares train --overwrite`` removes the
mark with the run it replaces.

The experiment folder itself (``OUT``: results, plots, ``evaluation/``) is marked by :data:`ROOT_MARK`, the
experiment's record of its options with a ``written_by`` key (:func:`write_root_mark`); :func:`check_own_root` refuses
a non-empty ``OUT`` that is not the same experiment's (an ``experiment.json`` of an older version, without the key, is
recognised by its contents) and an ``OUT/evaluation`` holding files no evaluation writes.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from agents.config import read_json

__all__ = ["ROOT_MARK", "RUN_MARK", "check_own_root", "check_own_runs", "clear_outputs", "finished_run", "mark_run",
           "read_json", "recorded_run", "REUSED_NOTE", "say_reused", "write_root_mark", "written_by"]

#: written into every run folder an experiment trains: ``{"written_by": "pokersquares experiment NAME"}``
RUN_MARK = "experiment_run.json"
#: written into the experiment folder before any training: ``{"written_by": ..., <the experiment's options>}``
ROOT_MARK = "experiment.json"


def written_by(experiment: str) -> str:
    """The ``written_by`` value of an experiment's mark (``experiment`` as its CLI name, e.g. ``reward-shaping``)."""
    return f"pokersquares experiment {experiment}"


def _mark_of(folder: Path) -> Any:
    data = read_json(folder / RUN_MARK)
    return data.get("written_by") if isinstance(data, dict) else None


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
    """Create ``folder`` if need be, remove the run there (the experiment's own: :func:`check_own_runs` said so) and
    mark it as ``experiment``'s run folder, before the new run writes anything."""
    from agents.train import clear_run

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    clear_run(folder)  # so that train(overwrite=True) finds nothing to replace and keeps the new mark
    (folder / RUN_MARK).write_text(json.dumps({"written_by": written_by(experiment)}) + "\n")


def write_root_mark(root: str | Path, experiment: str, about: dict[str, Any]) -> Path:
    """Write :data:`ROOT_MARK` into the experiment folder ``root``: ``written_by`` and the options ``about``."""
    path = Path(root) / ROOT_MARK
    path.write_text(json.dumps({"written_by": written_by(experiment), **about}, indent=2) + "\n")
    return path


def clear_outputs(root: str | Path, files: Iterable[str]) -> None:
    """Remove the previous outputs of the experiment folder ``root`` -- ``files`` (results, plots) and the harness
    folder ``evaluation/`` -- before :func:`write_root_mark` records new options, so that an interrupted or failed run
    never leaves results of other options beside them (:func:`check_own_root` said the folder is the experiment's)."""
    import shutil

    root = Path(root)
    for name in files:
        path = root / name
        if path.is_file() or path.is_symlink():
            path.unlink()
    evaluation = root / "evaluation"
    if evaluation.is_dir() and not evaluation.is_symlink():
        shutil.rmtree(evaluation)
    elif evaluation.is_symlink():
        evaluation.unlink()


def check_own_root(root: str | Path, experiment: str, older: Callable[[Path], bool] | None = None) -> None:
    """Raise ValueError unless the experiment folder ``root`` may take ``experiment``'s outputs (checked before any
    training): it is new, empty, or the same experiment's -- its :data:`ROOT_MARK` says so, or, for a folder an older
    version wrote (no ``written_by``), ``older(root)`` recognises it by its contents.  Its ``evaluation/`` must also
    hold only what an evaluation writes (:func:`agents.evaluation.check_out_dir` with ``foreign=False``)."""
    from agents.evaluation import check_out_dir

    root = Path(root)
    if not root.is_dir():
        return  # new (a file is named by check_out_dir, called before)
    try:
        entries = sorted(os.listdir(root))
    except OSError as exc:
        raise ValueError(f"{str(root)!r}: cannot list it ({exc.strerror or exc})") from None
    if not entries:
        return
    mark = read_json(root / ROOT_MARK)
    own = isinstance(mark, dict) and mark.get("written_by") == written_by(experiment)
    if not own and not (isinstance(mark, dict) and "written_by" in mark) and older is not None:
        own = older(root)
    if not own:
        shown = ", ".join(e + ("/" if (root / e).is_dir() else "") for e in entries[:5])
        shown += f" and {len(entries) - 5} more" if len(entries) > 5 else ""
        whose = (f"its {ROOT_MARK} names {mark.get('written_by')!r}" if isinstance(mark, dict) and "written_by" in mark
                 else f"no {ROOT_MARK} of it")
        raise ValueError(
            f"{str(root)!r} is not a folder of the {experiment} experiment ({whose}; it holds {shown}): expected a new "
            f"or empty folder, or the --out of an earlier {experiment} run (whose results are replaced); choose "
            f"another --out")
    check_out_dir(root / "evaluation", foreign=False, name="the experiment's evaluation folder")


def finished_run(folder: Path, train_cfg: Any, who: str) -> bool:
    """Whether ``folder`` holds a finished run of exactly ``train_cfg`` (so it need not be trained again): its model,
    ``config.json`` equal to the config (but for ``out`` and ``progress``) and ``progress.json`` at the budget.  A damaged
    ``config.json`` or ``progress.json`` makes the run unfinished (trained again), with a note naming the file; so does
    a ``point_system.json`` (the points the run trained for) missing, damaged or other than the points ``scoring``
    names now (``config.json`` names a point-system file by its path: the file may have been edited since).  ``who``:
    the experiment, as the notes name it."""
    from agents.config import ConfigError, TrainConfig, point_table
    from agents.train import MODEL_FILE, POINT_SYSTEM_FILE, _read_progress, planned_steps

    folder = Path(folder)
    paths = [folder / MODEL_FILE[train_cfg.algo], folder / "config.json", folder / "progress.json"]
    if not all(p.is_file() for p in paths):
        return False
    try:
        stored = TrainConfig.load(paths[1]).to_dict()
        steps = _read_progress(paths[2], who)["steps"]
    except ConfigError as exc:
        print(f"note: {exc}; the run in {str(folder)!r} is trained again", file=sys.stderr, flush=True)
        return False
    wanted = train_cfg.resolved()
    # the folder is the run's by where it is: `out` spelled otherwise (relative, absolute) is the same run
    same = {**stored, "progress": None, "out": None} == {**wanted.to_dict(), "progress": None, "out": None}
    if not (same and steps >= planned_steps(wanted)):  # the budget, rounded up to the trainer's whole units
        return False
    points = folder / POINT_SYSTEM_FILE
    try:
        stored_points = json.loads(points.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # missing, unreadable or not JSON
        print(f"note: {str(points)!r} cannot be read ({exc.strerror if isinstance(exc, OSError) else exc}): the points "
              f"the run trained for are unknown; the run in {str(folder)!r} is trained again", file=sys.stderr,
              flush=True)
        return False
    now = point_table(wanted.scoring)
    if now is None or stored_points != json.loads(json.dumps(now)):
        print(f"note: {str(points)!r}: the run trained for other points than scoring={wanted.scoring!r} names now; "
              f"the run in {str(folder)!r} is trained again", file=sys.stderr, flush=True)
        return False
    return True


#: The footnote of a results table holding rows marked ``(reused)``.
REUSED_NOTE = ("(reused): a finished run of the same config found in the run folder, not trained by this call; its "
               "training seconds are those it recorded then (another process, load or machine).")


def say_reused(who: str, folder: Any, what: str = "run") -> None:
    """Say on stderr that the experiment ``who`` reuses the finished ``what`` in ``folder`` instead of training it."""
    print(f"{who}: reusing the finished {what} in {folder} (the same config; --retrain trains it again)",
          file=sys.stderr, flush=True)


def recorded_run(folder: Any, who: str) -> dict[str, Any]:
    """A finished run's steps and training seconds, as its ``progress.json`` recorded them (the run's own clock, the
    same for a run trained now and one reused); a ConfigError naming the file starts with ``who``."""
    from agents.train import _read_progress

    done = _read_progress(Path(folder) / "progress.json", who)
    return {"steps": done["steps"], "seconds": done["seconds"]}
