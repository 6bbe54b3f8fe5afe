"""Train placement agents: ``pokersquares train`` and :func:`train`.

Three algorithms share one config (:class:`agents.config.TrainConfig`) and one run folder layout:

* ``maskable-ppo``: MaskablePPO from sb3-contrib on ``PokerSquares-v0``, masks at
  training and inference, ``MaskableEvalCallback`` on fixed seeded deals;
* ``dqn``: a masked double DQN (:mod:`agents.dqn`);
* ``fast-ppo``: a CleanRL-style masked PPO on the native vector env (:mod:`agents.fast_ppo`).

The run folder (``--out``)::

    config.json          the resolved config (every option, algorithm defaults filled in)
    point_system.json    the point system as read when the run started (learned agents compare their game with it)
    model.zip|model.pt   the final model (SB3 zip, or torch file for dqn/fast-ppo)
    checkpoints/         step_N.* every ``checkpoint_every`` steps, and latest.* for --resume (dqn: and
                         latest_buffer.npz, its replay buffer)
    tb/                  TensorBoard logs
    curve.csv            step, seconds, episodes, train_score, eval_score, eval_american, eval_english
    evaluation/          the final evaluation through the harness on common deals (summary.json, ...)

``--resume`` continues from ``checkpoints/latest.*`` with the stored config; Ctrl-C
saves a checkpoint and the model before exiting (a second Ctrl-C aborts at once).
A trained model plays through the harness as ``ppo:DIR``, ``dqn:DIR`` or ``fastppo:DIR``.
"""

from __future__ import annotations

import argparse
import csv
import io
import itertools
import json
import math
import os
import shutil
import signal
import sys
import threading
import time
import warnings
import zipfile
from dataclasses import fields
from pathlib import Path
from typing import Any, Callable

import numpy as np

from agents.config import ALGOS, ConfigError, TrainConfig, TrainingDiverged, train_seed_arg
from agents.demo import DEMO_MARK
from agents.demo import _steps as steps_arg
from agents.experiments.marks import RUN_MARK
from agents.shaping import SHAPINGS
from agents.stats import fmt as figure
from pokersquares_env._files import replace_text
from pokersquares_env._progress import progress_bar
from pokersquares_env.cli import seed_arg

__all__ = ["train", "RunFolder", "TrainResult", "add_arguments", "run", "HELP", "AGENT_PREFIX", "eval_decks",
           "planned_steps"]

HELP = "train a placement agent (MaskablePPO, masked DQN or the fast vectorised PPO)"

#: algorithm -> the agent prefix its run folders load under (``pokersquares evaluate --agent PREFIX:DIR``)
AGENT_PREFIX = {"maskable-ppo": "ppo", "dqn": "dqn", "fast-ppo": "fastppo"}
MODEL_FILE = {"maskable-ppo": "model.zip", "dqn": "model.pt", "fast-ppo": "model.pt"}
POINT_SYSTEM_FILE = "point_system.json"  # the run's point system as read when it started (learned agents check it)
#: what a run writes into its folder; a new run refuses a folder holding any of them unless told to overwrite
RUN_FILES = ("config.json", "progress.json", "curve.csv", "model.zip", "model.pt", "checkpoints", "tb", "sb3_eval",
             "evaluation", "point_system.json", "progress.json.tmp", "config.json.tmp", "curve.csv.tmp")
#: marks that make a run folder the demo's or an experiment's own (``agents.demo``, ``agents.experiments.marks``):
#: removed with the run they marked when ``--overwrite`` replaces it, so a run trained by hand there is never theirs
OWNER_MARKS = (RUN_MARK, DEMO_MARK)
#: what a torch checkpoint holds besides state_dict, global_step and optimizer, per algorithm
CHECKPOINT_KEYS = {"fast-ppo": ("update", "torch_rng"), "dqn": ("target",)}
#: progress.json's record of the evaluation, checkpoint and curve-row schedules, so a resumed run keeps them
SCHEDULE_KEYS = ("last_eval_step", "last_ckpt_step", "last_row_step")
#: the attribute of a MaskablePPO checkpoint that holds its progress record (a torch checkpoint: the key "progress")
PROGRESS_ATTRIBUTE = "_pse_progress"
#: options ``--resume`` may change; every other option is the stored run's
RESUME_OPTIONS = ("timesteps", "time_limit", "progress", "out", "final_eval_games", "checkpoint_every")
CURVE_FIELDS = ["step", "seconds", "episodes", "train_score", "eval_score", "eval_american", "eval_english"]


def run_files_in(folder: Path) -> list[str]:
    """The names of :data:`RUN_FILES` that ``folder`` holds (a training run is there if any)."""
    return [name for name in RUN_FILES if (Path(folder) / name).exists()]


def clear_run(folder: str | Path, marks: bool = True) -> list[str]:
    """Remove the training run in ``folder`` (its :data:`RUN_FILES`) and, with ``marks``, the :data:`OWNER_MARKS`
    that claimed it; other files stay.  The names removed."""
    folder = Path(folder)
    removed = []
    for name in (*run_files_in(folder), *(m for m in OWNER_MARKS if marks and (folder / m).exists())):
        path = folder / name
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        removed.append(name)
    return removed


class TrainResult(dict):
    """What :func:`train` returns: ``out``, ``model_path``, ``steps``, ``seconds``, ``interrupted``, ``evaluation``.

    ``seconds`` is this call's wall-clock time of training and saving the run: it leaves out the shaping tables'
    build (before the run's clock starts) and the final evaluation after it.  A resumed run's ``progress.json``
    counts every session's training; ``seconds`` counts this call's only."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def eval_decks(cfg: TrainConfig, games: int, seed: int) -> list[tuple[int, ...]]:
    """``games`` fixed deals drawn from ``seed`` under the config's rules (the evaluation deals during training)."""
    from pokersquares_env.core import Rules, shuffled_deck

    rules = Rules(jokers=cfg.jokers, placement=cfg.placement, first_cell=cfg.first_cell)
    rng = np.random.default_rng(seed)
    return [tuple(int(c) for c in shuffled_deck(rng, rules)) for _ in range(games)]


def _read_progress(path: Path, what: str = "--resume") -> dict[str, Any]:
    """A run folder's ``progress.json`` (steps, seconds, episodes), or a ConfigError naming what is wrong with it
    (its message starts with ``what``: who read the file)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{what}: {str(path)!r} cannot be read ({exc}): expected the JSON object "
                          f"{{\"steps\": N, \"seconds\": S, \"episodes\": E}} the run wrote") from None
    return _check_progress(data, path, what)


def _check_progress(data: Any, path: Path, what: str = "--resume") -> dict[str, Any]:
    """A progress record (progress.json's object, or the copy a checkpoint holds, ``path`` naming where it came
    from) checked field by field: a ConfigError naming the file and the bad field."""
    if not isinstance(data, dict):
        raise ConfigError(f"{what}: {str(path)!r} holds {type(data).__name__}: expected a JSON object with steps, "
                          f"seconds and episodes")
    out = {}
    for key in ("steps", "seconds", "episodes"):
        if key not in data:  # every run wrote all three
            raise ConfigError(f"{what}: {str(path)!r} has no {key}: expected the JSON object "
                              f"{{\"steps\": N, \"seconds\": S, \"episodes\": E}} the run wrote")
        value = data[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise ConfigError(f"{what}: {str(path)!r}: {key}={value!r}: expected a number >= 0")
        out[key] = value
    # where the evaluation, checkpoint and curve schedules stood (written since they are kept across a resume;
    # an older file without them: the steps done, as before)
    for key in SCHEDULE_KEYS:
        value = data.get(key, out["steps"])
        if isinstance(value, bool) or not isinstance(value, int) or not -1 <= value <= out["steps"]:
            raise ConfigError(f"{what}: {str(path)!r}: {key}={value!r}: expected an integer from -1 to the steps "
                              f"done ({out['steps']})")
        out[key] = value
    # the training scores since the last curve row, which the next row averages (written since 2026-12-02)
    recent = data.get("recent", [])
    if not isinstance(recent, list) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in recent):
        raise ConfigError(f"{what}: {str(path)!r}: recent={recent!r}: expected a list of finite numbers (the "
                          f"training scores since the last curve row)")
    out["recent"] = recent
    return out


_UNSET = object()  # a RunFolder's shaping potential not built yet


class RunFolder:
    """The run folder of a training run: config, logs, learning curve, evaluations, checkpoints, Ctrl-C."""

    def __init__(self, cfg: TrainConfig, resume: bool = False, overwrite: bool = False):
        self.cfg = cfg
        self.dir = Path(cfg.out)
        self.resume = resume
        self.overwrite = overwrite
        self._checkpoint: Any = None
        self._checkpoint_step: int | None = None  # the step the latest checkpoint was saved at (--resume)
        self._checkpoint_progress: Any = None  # the progress record it holds (None: saved before they held one)
        #: the progress record of the checkpoint being saved: each trainer's save stores it inside the checkpoint
        self.checkpoint_progress: dict[str, Any] | None = None
        self._buffer: Any = None
        self._torn_curve_row = False  # curve.csv's last row was cut by a kill (found by --resume's check)
        self._resumed_steps: float | None = None
        self.ckpt_dir = self.dir / "checkpoints"
        self.ext = Path(MODEL_FILE[cfg.algo]).suffix
        self.stop_requested = False
        self._writer = None
        self._bar = None
        self._t0 = time.time()
        self._seconds_before = 0.0
        self._episodes = 0
        self._recent: list[float] = []
        self._last_eval_step = 0
        self._last_ckpt_step = 0
        self._last_row_step = -1
        self._last_eval: dict[str, float] = {}
        self._decks = None
        self._old_handler = None
        self._building = False  # building the shaping potential: nothing trained yet, so Ctrl-C stops at once
        self._ep_rate_t = time.time()
        self._ep_rate_n = 0
        self._potential: Any = _UNSET
        self.steps = 0
        #: the point system the run trains for, as read when it started (point_system.json of a resumed run):
        #: what config.json's ``scoring`` named then, recorded in every model file the run saves
        self.point_system: dict[str, Any] | None = None

    # ---------------------------------------------------------------- setup
    def open(self) -> None:
        """Create the folder (or check it for --resume), write config.json and open the logs."""
        if self.dir.exists() and not self.dir.is_dir():
            raise ConfigError(f"out={str(self.dir)!r} is a file: expected a run folder (new or existing)")
        meta = self.dir / "progress.json"
        if self.resume:
            if not self.latest_checkpoint().exists():
                raise ConfigError(f"--resume: no checkpoint {str(self.latest_checkpoint())!r} to resume from (a run that "
                                  f"stopped before saving one, e.g. one that diverged): expected a run folder with "
                                  f"its checkpoint, or train the run again with --overwrite")
            # read before anything is written, so a damaged file leaves the folder as it was
            self._checkpoint = self._read_checkpoint()
            self._buffer = self._read_buffer()
            self._check_curve()
            data = self._resume_progress(_read_progress(meta) if meta.exists() else None)
            if data is not None:
                self._seconds_before = data["seconds"]
                self._episodes = data["episodes"]
                self._last_eval_step, self._last_ckpt_step, self._last_row_step = (data[k] for k in SCHEDULE_KEYS)
                self._recent = [float(v) for v in data["recent"]]
                self._resumed_steps = data["steps"]
            self.point_system = self._check_point_system()
            # the final evaluation described the model before this resume: removed (the run's end writes it anew),
            # so a resume stopped by Ctrl-C or without a final evaluation leaves none that describes another model
            old_eval = self.dir / "evaluation"
            if old_eval.is_dir() and not old_eval.is_symlink():
                shutil.rmtree(old_eval)
            elif old_eval.exists() or old_eval.is_symlink():
                old_eval.unlink()
        else:
            self._clear_old_run()
            from agents.config import point_table

            self.point_system = point_table(self.cfg.scoring)
        try:
            self.ckpt_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"out={str(self.dir)!r}: cannot create the run folder ({exc.strerror or exc})") from None
        self.cfg.save(self.dir / "config.json")
        if self.resume:  # point_system.json stays as the run's start wrote it
            self._trim_curve(self._resumed_steps)
        else:
            self._save_point_system()
        try:
            from torch.utils.tensorboard import SummaryWriter

            self._writer = SummaryWriter(str(self.dir / "tb"))
            self._writer.add_text("config", "```\n" + json.dumps(self.cfg.to_dict(), indent=2) + "\n```")
        except ImportError:  # TensorBoard is optional: the CSV curve is always written
            self._writer = None
        self._install_sigint()

    def _install_sigint(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return

        def handler(signum, frame):
            if self.stop_requested or self._building:  # a second Ctrl-C, or one before training: nothing to save
                raise KeyboardInterrupt
            self.stop_requested = True
            print("\nCtrl-C: saving a checkpoint and the model before exiting (Ctrl-C again to abort)", file=sys.stderr)

        self._old_handler = signal.signal(signal.SIGINT, handler)

    def close(self) -> None:
        """Restore Ctrl-C, close the progress bar and the TensorBoard writer."""
        if self._old_handler is not None:
            signal.signal(signal.SIGINT, self._old_handler)
            self._old_handler = None
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    # ---------------------------------------------------------- checkpoints
    def _save_point_system(self) -> None:
        """``point_system.json``: the table a new run trains for, as read when it started (config.json names a file
        by the path given, relative to the folder the run was started in; learned agents compare their game with
        this).  Written once: a resume keeps it."""
        if self.point_system is not None:  # validated before
            (self.dir / POINT_SYSTEM_FILE).write_text(json.dumps(self.point_system, indent=2) + "\n")

    def _check_point_system(self) -> dict[str, Any] | None:
        """The point system a resumed run trains for: ``point_system.json`` as the run's start wrote it, after
        checking that ``scoring`` still names the same points (a ConfigError naming the file and the points that
        differ if it was edited since); without that file (a run from before it was written), the table read now.
        Checked before --resume writes anything."""
        from agents.config import point_table

        now = point_table(self.cfg.scoring)
        path = self.dir / POINT_SYSTEM_FILE
        if not path.exists():
            return now
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(stored, dict) or not isinstance(stored.get("points"), dict):
                raise ValueError(f"a {type(stored).__name__} without points")
        except (OSError, ValueError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            raise ConfigError(f"--resume: {str(path)!r} cannot be read ({exc}): expected the point system the run "
                              f"wrote when it started") from None
        if now is None:  # the file scoring names is gone since (validated before): the run goes on with its table
            return stored
        diffs = [f"{k}: {now['points'].get(k)!r} (stored: {stored['points'].get(k)!r})"
                 for k in sorted(set(now["points"]) | set(stored["points"]))
                 if now["points"].get(k) != stored["points"].get(k)]
        if now.get("win_threshold") != stored.get("win_threshold"):
            diffs.append(f"win_threshold: {now.get('win_threshold')!r} (stored: {stored.get('win_threshold')!r})")
        if diffs:
            raise ConfigError(f"--resume: scoring={self.cfg.scoring!r} now gives other points than the run trained "
                              f"for, stored in {str(path)!r}: {'; '.join(diffs)}: expected the points the run "
                              f"started with (restore the file, or train a new run with the new points)")
        return stored

    def latest_checkpoint(self) -> Path:
        """Path of the checkpoint --resume continues from."""
        return self.ckpt_dir / f"latest{self.ext}"

    def _clear_old_run(self) -> None:
        """A new run: refuse a folder that holds another run's files, or remove them with ``overwrite`` (and the
        demo's or an experiment's mark of that run: the new run is not theirs)."""
        old = run_files_in(self.dir)
        if not old:
            return
        if not self.overwrite:
            raise ConfigError(f"out={str(self.dir)!r} already holds a training run ({', '.join(old)}): continue it "
                              f"with --resume, replace it with --overwrite, or choose another --out")
        clear_run(self.dir)

    def _read_checkpoint(self) -> Any:
        """The latest checkpoint, read and checked before --resume writes anything (ConfigError if damaged)."""
        path = self.latest_checkpoint()
        if self.ext == ".zip":  # SB3 loads it again itself, with the env; loaded here to find a damaged archive
            if not zipfile.is_zipfile(path):
                raise ConfigError(f"--resume: {str(path)!r} is damaged: expected the zip archive MaskablePPO saved")
            try:
                import torch
                from sb3_contrib import MaskablePPO
            except ImportError:  # the trainer names the missing extra
                return None
            try:
                with torch.random.fork_rng(devices=[]):  # loading draws nothing the run then draws
                    model = MaskablePPO.load(path, device="cpu")
            except Exception as exc:  # noqa: BLE001 - SB3 and torch raise many kinds on a damaged archive
                raise ConfigError(f"--resume: {str(path)!r} cannot be loaded ({type(exc).__name__}: {exc}): expected "
                                  f"the checkpoint MaskablePPO saved") from None
            self._checkpoint_step = int(model.num_timesteps)
            self._checkpoint_progress = model.__dict__.get(PROGRESS_ATTRIBUTE)
            return None
        from agents.fast_ppo import load_failure, safe_load

        try:
            state = safe_load(path)  # weights_only: a checkpoint from elsewhere runs no code it holds
        except Exception as exc:  # noqa: BLE001 - torch raises many kinds on a damaged file
            raise ConfigError(f"--resume: {str(path)!r} cannot be loaded ({load_failure(exc)}): expected the "
                              f"checkpoint the run saved") from None
        needs = ["state_dict", "global_step", "optimizer", *CHECKPOINT_KEYS.get(self.cfg.algo, ())]
        missing = [k for k in needs if not isinstance(state, dict) or k not in state]
        if missing:  # a final model.pt copied over it, say: refused before anything is written
            raise ConfigError(f"--resume: {str(path)!r} is not a {self.cfg.algo} checkpoint (it lacks "
                              f"{', '.join(missing)}): expected the checkpoint the run saved")
        self._check_weights(path, state)
        self._checkpoint_step = state["global_step"]
        self._checkpoint_progress = state.get("progress")
        return state

    def _resume_progress(self, stored: dict[str, Any] | None) -> dict[str, Any] | None:
        """The progress record a resume goes on from: the one saved inside the latest checkpoint, which always
        describes that checkpoint's step.  progress.json (``stored``, already checked) is written just after the
        checkpoint, so a run killed between the two writes leaves it one checkpoint behind, or missing: the
        checkpoint's record is then taken, with a note.  A checkpoint saved before it held its record (older runs)
        must agree with progress.json: refused otherwise, naming both."""
        latest = self.latest_checkpoint()
        own = self._checkpoint_progress
        if own is not None:
            own = _check_progress(own, latest)
            if own["steps"] != self._checkpoint_step:
                raise ConfigError(f"--resume: {str(latest)!r} holds a progress record of step {own['steps']} but "
                                  f"was saved at step {self._checkpoint_step}: expected the checkpoint the run saved")
            if stored is None or stored["steps"] != own["steps"]:
                where = "none" if stored is None else f"step {stored['steps']}"
                print(f"note: --resume: progress.json ({where}) is behind the latest checkpoint (step "
                      f"{own['steps']}), as a run stopped between the two writes leaves it: going on from the "
                      f"checkpoint's own record", file=sys.stderr)
            return own
        if self._checkpoint_step is not None and (stored is None or stored["steps"] != self._checkpoint_step):
            where = "is missing" if stored is None else f"is at step {stored['steps']}"
            raise ConfigError(f"--resume: {str(self.dir / 'progress.json')!r} {where} but {str(latest)!r} was "
                              f"saved at step {self._checkpoint_step} (a run stopped between the two writes, "
                              f"checkpointed before checkpoints held their progress record): expected the two to "
                              f"agree; copy the step_N checkpoint of progress.json's step over {latest.name}, or "
                              f"train the run again with --overwrite")
        return stored

    def _check_weights(self, path: Path, state: dict[str, Any]) -> None:
        """Load a torch checkpoint's weights (and the dqn target's) and optimiser state into the network the stored
        config builds, as the trainer will: a ConfigError naming the file if they do not fit (a damaged checkpoint,
        or a config.json edited since), before --resume writes anything."""
        import torch

        from agents.fast_ppo import make_net

        cfg = self.cfg
        with torch.random.fork_rng(devices=[]):  # building the network draws nothing the run then draws
            try:
                what = "state_dict"
                net = make_net(cfg.net, cfg.hidden)
                net.load_state_dict(state["state_dict"])
                if "target" in state and cfg.algo == "dqn":
                    what = "target"
                    make_net(cfg.net, cfg.hidden).load_state_dict(state["target"])
                what = "optimizer"
                torch.optim.Adam(net.parameters(), lr=cfg.learning_rate).load_state_dict(state["optimizer"])
            except Exception as exc:  # noqa: BLE001 - torch reports missing, unexpected and mis-sized weights its ways
                lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
                why = " ".join(lines[:3]) + (f" (and {len(lines) - 3} more)" if len(lines) > 3 else "")
                raise ConfigError(f"--resume: {str(path)!r}: its {what} does not fit the net={cfg.net!r}, "
                                  f"hidden={list(cfg.hidden)!r} network of the stored config "
                                  f"({type(exc).__name__}: {why}): expected the checkpoint the run saved, with its "
                                  f"config.json unchanged") from None

    def load_checkpoint(self) -> Any:
        """The latest torch checkpoint when resuming (None otherwise)."""
        return self._checkpoint if self.resume else None

    def _read_buffer(self) -> Any:
        """dqn's replay buffer saved with the latest checkpoint (None for other algorithms, or a run checkpointed
        before the buffer was saved), read and checked before --resume writes anything (ConfigError if damaged)."""
        if self.cfg.algo != "dqn":
            return None
        from agents.dqn import BUFFER_FILE, ReplayBuffer
        from pokersquares_env.env import OBS_SIZE

        path = self.ckpt_dir / BUFFER_FILE
        if not path.exists():
            print(f"--resume: no replay buffer {str(path)!r} (a run checkpointed before dqn saved it): resuming with "
                  f"an empty buffer, refilled for learning_starts={self.cfg.learning_starts} steps", file=sys.stderr)
            return None
        try:
            buffer = ReplayBuffer.load(path, self.cfg.buffer_size, OBS_SIZE)
        except ValueError as exc:
            raise ConfigError(f"--resume: {exc}") from None
        step = self._checkpoint["global_step"]
        if buffer.step is not None and buffer.step != step:  # a save interrupted between the two files
            latest = str(self.latest_checkpoint())
            raise ConfigError(f"--resume: {str(path)!r} was saved at step {buffer.step}, but {latest!r} at step {step}: expected the buffer saved with that checkpoint; delete it to resume "
                              f"with an empty buffer")
        return buffer

    def load_buffer(self) -> Any:
        """The replay buffer saved with the latest checkpoint when resuming a dqn run (None otherwise)."""
        return self._buffer if self.resume else None

    def maybe_checkpoint(self, step: int, save: Callable[[Path], None], force: bool = False) -> None:
        """Save ``step_N`` and ``latest`` checkpoints when due (or when forced, e.g. on Ctrl-C)."""
        every = self.cfg.checkpoint_every
        due = every and step - self._last_ckpt_step >= every
        if not (due or force or self.stop_requested):
            return
        if due:  # a forced or Ctrl-C save leaves the step_N schedule as it was (a resumed run keeps it)
            self._last_ckpt_step = step
        # saved inside the checkpoint too: progress.json, written after it, may not be (a kill in between)
        self.checkpoint_progress = self._progress_record(step)
        try:
            if due:
                save(self.ckpt_dir / f"step_{step}{self.ext}")
            save(self.latest_checkpoint())
        finally:
            self.checkpoint_progress = None
        self._write_progress(step)

    def _progress_record(self, step: int) -> dict[str, Any]:
        return {"steps": step, "seconds": self.seconds(), "episodes": self._episodes,
                **dict(zip(SCHEDULE_KEYS, (self._last_eval_step, self._last_ckpt_step, self._last_row_step),
                           strict=True)), "recent": list(self._recent)}

    def _write_progress(self, step: int) -> None:
        """progress.json, through a temporary file: a kill mid-write leaves the previous one whole."""
        replace_text(self.dir / "progress.json", json.dumps(self._progress_record(step)) + "\n")

    def save_final(self, save: Callable[[Path], None]) -> Path:
        """Save the final model and the progress record."""
        path = self.dir / MODEL_FILE[self.cfg.algo]
        save(path)
        self._write_progress(self.steps)
        return path

    # ------------------------------------------------------------- logging
    def progress_fraction(self, step: int) -> float:
        """How far the run is, 0..1: the larger of the step budget and the time budget used (``anneal_by='first'``),
        or the step budget alone (``anneal_by='steps'``: no wall-clock in it, so the run reproduces)."""
        frac = step / max(1, self.cfg.timesteps)
        if self.cfg.time_limit and self.cfg.anneal_by == "first":
            frac = max(frac, self.seconds() / self.cfg.time_limit)
        return min(1.0, frac)

    def spent_before(self) -> bool:
        """Whether earlier sessions of a resumed run already spent the time limit (the trainers then train nothing;
        a new run always trains at least one update, however long its set-up took)."""
        return bool(self.cfg.time_limit) and self._seconds_before >= self.cfg.time_limit

    def out_of_time(self) -> bool:
        """Whether the wall-clock budget (``time_limit``) is spent."""
        return bool(self.cfg.time_limit) and self.seconds() >= self.cfg.time_limit

    def prepare_shaping(self) -> None:
        """Build the config's shaping potential now (``tables``: train or load the self-play tables) and restart the
        run's clock after it, so that building the tables counts neither against ``time_limit`` nor in the run's
        seconds.

        Nothing is trained yet, so Ctrl-C here stops at once (``KeyboardInterrupt``, not a checkpoint after the
        build): a new run's files, which :meth:`open` wrote, are removed, so the same command starts it again without
        ``--overwrite``; a resumed run keeps its checkpoint, and ``--resume`` continues it as before."""
        self._building = True
        try:
            self.shaping_potential()
        except KeyboardInterrupt:
            self.close()  # the TensorBoard writer first: its files are among those removed
            if self.resume:
                said = f"{str(self.dir)!r} is as its last checkpoint left it: --resume continues it"
            else:
                clear_run(self.dir, marks=False)  # only this run's files: a demo's or experiment's mark stays
                said = f"{str(self.dir)!r} holds no run: the same command starts it again"
            print(f"\nCtrl-C while building the shaping potential: stopped before training, nothing saved; {said}",
                  file=sys.stderr)
            raise
        finally:
            self._building = False
        self._t0 = self._ep_rate_t = time.time()

    def shaping_potential(self) -> Any:
        """The config's shaping potential (None without shaping), built once (:meth:`prepare_shaping`)."""
        if self._potential is _UNSET:
            from agents.shaping import potential_for

            self._potential = potential_for(self.cfg)
        return self._potential

    def seconds(self) -> float:
        """Training wall-clock seconds, including earlier sessions of a resumed run."""
        return self._seconds_before + time.time() - self._t0

    def start(self, total: int, done: int = 0) -> None:
        """Open the progress bar for ``total`` steps, ``done`` of them already taken (and say so when a resumed run's
        time limit is already spent: the trainers then train nothing)."""
        self.steps = done
        if self._resumed_steps is None:  # a resumed run keeps the curve-row schedule progress.json recorded
            self._last_row_step = done
        if self.spent_before():
            print(f"--time-limit {self.cfg.time_limit:g} s is already spent ({self._seconds_before:.1f} s trained "
                  f"before this resume): nothing to train; give a larger --time-limit to go on", file=sys.stderr)
        self._bar = progress_bar(self.cfg.progress, total=total, initial=done, unit="step", unit_scale=True,
                                 desc=f"{self.cfg.algo}", dynamic_ncols=True)

    def episodes(self, scores: list[float]) -> None:
        """Record the scores (active system) of finished training games."""
        self._episodes += len(scores)
        self._ep_rate_n += len(scores)
        self._recent.extend(scores)

    def scalars(self, step: int, values: dict[str, float]) -> None:
        """Log scalars to TensorBoard."""
        if self._writer is not None:
            for key, value in values.items():
                self._writer.add_scalar(f"train/{key}", value, step)

    def step(self, step: int, policy: Callable[[np.ndarray, np.ndarray], np.ndarray] | None,
             results: list[dict[str, Any]] | None = None) -> None:
        """Advance to ``step``: evaluate when due (or log ``results``, the final infos of an evaluation the trainer
        played itself on the evaluation deals), append to curve.csv, update the progress bar."""
        delta = step - self.steps
        self.steps = step
        evaluated = False
        if results is not None:
            self._last_eval_step = step
            self.evaluate(step, None, results=results)
            evaluated = True
        elif policy is not None and self.cfg.eval_every and step - self._last_eval_step >= self.cfg.eval_every:
            self._last_eval_step = step
            self.evaluate(step, policy)
            evaluated = True
        train_score = float(np.mean(self._recent)) if self._recent else math.nan
        if evaluated or step - self._last_row_step >= max(1, min(self.cfg.timesteps // 100, 50_000)):
            self._row(step, train_score, self._last_eval if evaluated else {})
            if self._writer is not None and self._recent:
                self._writer.add_scalar("train/episode_score", train_score, step)
            self._recent = []
        if self._bar is not None:
            now = time.time()
            rate = self._ep_rate_n / max(now - self._ep_rate_t, 1e-9)
            if now - self._ep_rate_t > 5:
                self._ep_rate_t, self._ep_rate_n = now, 0
            post = {"eps/s": f"{rate:.0f}"}
            if not math.isnan(train_score):
                post["train"] = f"{train_score:.1f}"
            if self._last_eval:
                post["eval"] = f"{self._last_eval['eval_score']:.1f}"
            self._bar.set_postfix(post, refresh=False)
            self._bar.update(delta)

    def _check_curve(self) -> None:
        """Refuse to resume onto a damaged curve.csv (before anything is written), naming the file and the first bad
        row: the resumed run appends to it, and every row read later (sweeps, plots) must be one a run wrote."""
        path = self.dir / "curve.csv"
        if not path.is_file():
            return
        fix = ("expected the curve a training run writes: repair it, or remove it (the resumed run then starts a new "
               "curve) and resume again; the folder is left as it was")
        try:
            with path.open(newline="") as fh:
                text = fh.read()
            rows = list(csv.reader(text.splitlines()))
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            raise ConfigError(f"--resume: {str(path)!r} cannot be read ({exc}): {fix}") from None
        # a last row without its line end was cut by a kill while it was appended: it lies past the latest
        # checkpoint (rows are written before the checkpoint of their step), so the trim drops it
        self._torn_curve_row = len(rows) > 1 and not text.endswith("\n")
        if self._torn_curve_row:
            rows.pop()
        if not rows or rows[0] != CURVE_FIELDS:
            raise ConfigError(f"--resume: {str(path)!r}: header {rows[0] if rows else 'missing'!r}: expected "
                              f"{','.join(CURVE_FIELDS)}; {fix}")
        for n, row in enumerate(rows[1:], start=1):
            bad = len(row) != len(CURVE_FIELDS)
            if not bad:
                try:
                    bad = not all(math.isfinite(float(v)) for v in row[:3]) or any(
                        v and not math.isfinite(float(v)) for v in row[3:])
                except ValueError:
                    bad = True
            if bad:
                raise ConfigError(f"--resume: {str(path)!r}: row {n}: {','.join(row)!r}: expected "
                                  f"{len(CURVE_FIELDS)} fields ({','.join(CURVE_FIELDS)}), numbers, the scores "
                                  f"possibly empty; {fix}")

    def _trim_curve(self, steps: float | None) -> None:
        """Drop curve.csv rows past ``steps``, the progress a resume starts from: rows a run wrote after its last
        checkpoint before it was killed, which the resumed run writes again."""
        path = self.dir / "curve.csv"
        if (steps is None and not self._torn_curve_row) or not path.is_file():
            return
        with path.open(newline="") as fh:
            rows = list(csv.reader(fh))
        if self._torn_curve_row:  # cut by a kill (_check_curve)
            rows.pop()

        def kept(row: list[str]) -> bool:
            try:
                return steps is None or float(row[0]) <= steps
            except (IndexError, ValueError):
                return True  # the header, or a row this code did not write: left alone

        trimmed = [row for row in rows if kept(row)]
        if len(trimmed) != len(rows) or self._torn_curve_row:
            text = io.StringIO()
            csv.writer(text).writerows(trimmed)
            replace_text(path, text.getvalue())  # a kill mid-rewrite leaves the whole curve

    def _row(self, step: int, train_score: float, ev: dict[str, float]) -> None:
        path = self.dir / "curve.csv"
        new = not path.exists()
        with path.open("a", newline="") as fh:
            w = csv.writer(fh)
            if new:
                w.writerow(CURVE_FIELDS)
            w.writerow([
                step, f"{self.seconds():.1f}", self._episodes,
                "" if math.isnan(train_score) else f"{train_score:.3f}",
                *(f"{ev[k]:.3f}" if k in ev else "" for k in CURVE_FIELDS[4:]),
            ])
        self._last_row_step = step

    def evaluate(self, step: int, policy: Callable[[np.ndarray, np.ndarray], np.ndarray] | None,
                 results: list[dict[str, Any]] | None = None) -> dict[str, float]:
        """Play the greedy policy on the fixed evaluation deals (or take ``results``, the final infos of those games
        played already); log and return the mean scores."""
        if results is None:
            from agents.learned import play_decks

            if self._decks is None:
                self._decks = eval_decks(self.cfg, self.cfg.eval_games, self.cfg.eval_seed)
            env_kwargs = {k: v for k, v in self.cfg.rules_kwargs().items() if k not in ("reward_mode", "reward_scale")}
            results = play_decks(policy, env_kwargs, self._decks)
        ev = {
            "eval_score": float(np.mean([r["score"] for r in results])),
            "eval_american": float(np.mean([r["scores"]["american"] for r in results])),
            "eval_english": float(np.mean([r["scores"]["english"] for r in results])),
        }
        self._last_eval = ev
        if self._writer is not None:
            for key, value in ev.items():
                self._writer.add_scalar(f"eval/{key[5:]}", value, step)
        return ev


def _final_evaluation(cfg: TrainConfig, out: Path, progress: bool, steps: int | None = None) -> Any:
    """Evaluate the run's model through the harness on the common deals (``final_eval_seed``); ``steps``, the steps
    the model was trained for, is recorded in every row of the summary (``model_steps``, also in summary.json)."""
    if not cfg.final_eval_games:
        return None
    from agents.evaluation import evaluate

    spec = f"{AGENT_PREFIX[cfg.algo]}:{out}"
    rules = {"jokers": cfg.jokers, "placement": cfg.placement, "first_cell": cfg.first_cell}
    result = evaluate(
        [spec], games=cfg.final_eval_games, seed=cfg.final_eval_seed, scoring=cfg.scoring, rules=rules,
        out_dir=str(out / "evaluation"), progress=progress,
    )
    summary = result.summary
    if steps is not None:
        for row in summary:
            row["model_steps"] = int(steps)
        path = out / "evaluation" / "summary.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data, list):
                for row in data:
                    if isinstance(row, dict):
                        row["model_steps"] = int(steps)
                path.write_text(json.dumps(data, indent=2) + "\n")
        except (OSError, ValueError):  # the harness wrote no summary.json: the rows returned hold it
            pass
    return summary


def _changes(saved: TrainConfig, key: str, value: Any) -> bool:
    """Whether setting ``key`` to ``value`` changes the stored run's config (compared resolved, as config.json stores
    it: an option left to its algorithm's default, None, agrees with what the run resolved it to)."""
    stored = saved.to_dict()
    if key == "scoring" and value != stored[key]:  # a point system by meaning: 'pts.json' and its absolute path agree
        return not _same_point_system(value, stored[key])
    try:
        return TrainConfig.from_dict({**stored, key: value}).resolved().to_dict()[key] != stored[key]
    except ConfigError:  # a value the stored run's other options do not allow certainly changes it
        return True


def _same_point_system(given: Any, stored: Any) -> bool:
    """Whether two ``scoring`` values name the same point system (the same points, name and win threshold), e.g. a
    file by a relative and by an absolute path, or a file and the table a resumed run read from its
    ``point_system.json``; a value that cannot be read is compared as the text it is."""
    if given == stored:
        return True
    from pokersquares_env.scoring import point_system

    try:
        return point_system(given).to_json() == point_system(stored).to_json()
    except Exception:  # noqa: BLE001 - unreadable (moved, damaged): the texts differ, so it would change
        return False


def _stored_table(saved: TrainConfig, folder: Path) -> str | None:
    """The path of the run's ``point_system.json`` (the table it started with) when its stored ``scoring`` names a
    point-system file that cannot be read from here -- a path relative to the folder the run was started in,
    resumed from another one, or a file gone since -- else None (the stored value is used as it is)."""
    from pokersquares_env.scoring import point_system

    if not isinstance(saved.scoring, str):
        return None
    try:
        point_system(saved.scoring)
        return None
    except Exception:  # noqa: BLE001 - the file cannot be read here: the table the run started with, if it has it
        pass
    table = folder / POINT_SYSTEM_FILE
    try:
        point_system(str(table))
    except Exception:  # noqa: BLE001 - no readable table either: the stored value is named as it is
        return None
    return str(table.resolve())


def _check_resume_budget(cfg: TrainConfig, progress: Path) -> None:
    """Refuse a --resume whose new ``timesteps`` is below the steps the run already took (it would train nothing yet
    rewrite the run's config, model and progress); checked before anything in the folder is written."""
    if not progress.is_file():
        return
    done = _read_progress(progress)["steps"]
    if cfg.timesteps < done:
        raise ConfigError(f"--resume: timesteps={cfg.timesteps} is below the {int(done):,} steps the run in "
                          f"{cfg.out!r} already took: expected a --timesteps of at least that (more, to train longer)")


def resumed_config(config: TrainConfig, given: dict[str, Any]) -> tuple[TrainConfig, TrainConfig]:
    """The config a ``--resume`` of the run in ``config.out`` trains with -- its stored config, with the given
    :data:`RESUME_OPTIONS` (the budget, the display) and the folder where it now is -- and the stored config; a
    ConfigError when there is no run to resume or a ``given`` option would change it."""
    if Path(config.out).exists() and not Path(config.out).is_dir():
        raise ConfigError(f"--resume: out={config.out!r} is a file: expected the folder of the run to resume")
    stored = Path(config.out) / "config.json"
    if not stored.exists():
        raise ConfigError(f"--resume: {str(stored)!r} does not exist (nothing to resume in {config.out!r})")
    try:
        saved = TrainConfig.load(stored)
    except ConfigError as exc:
        raise ConfigError(f"--resume: the stored config {str(stored)!r} holds: {exc}") from None
    original, table = saved.scoring, _stored_table(saved, Path(config.out))
    if table is not None:  # e.g. --scoring pts.json, resumed from another folder: the table the run started with
        saved = TrainConfig.from_dict({**saved.to_dict(), "scoring": table})
        if given.get("scoring") == original:  # the very text the run was started with: no change
            given = {k: v for k, v in given.items() if k != "scoring"}
    stored_options = saved.to_dict()
    changed = sorted(k for k, v in given.items() if k not in RESUME_OPTIONS and _changes(saved, k, v))
    if changed:
        raise ConfigError(f"--resume continues the run in {config.out!r} with its stored options; "
                          + ", ".join(f"{k}={given[k]!r} (stored: {stored_options[k]!r})" for k in changed)
                          + f" would change it: only {', '.join(RESUME_OPTIONS)} may change on --resume")
    try:  # a bad stored value is named with the file that holds it, not as if it were given
        saved.resolved()
    except ConfigError as exc:
        raise ConfigError(f"--resume: the stored config {str(stored)!r} holds: {exc}") from None
    if table is not None:  # said once the resume is known good
        print(f"--resume: scoring={original!r} cannot be read from here (a path is relative to the folder the run "
              f"was started in): the run goes on with the table it started with, {table}", file=sys.stderr,
              flush=True)
    # the stored config wins, except for the budget (raise it to train longer), the display and the folder:
    # a copied or moved run resumes where it now is, not where its config.json says it was
    keep = {k: given[k] for k in RESUME_OPTIONS if k in given}
    merged = TrainConfig.from_dict({**stored_options, **keep, "progress": config.progress, "out": config.out})
    return merged, saved


def train(config: TrainConfig | dict[str, Any] | None = None, *, resume: bool = False, overwrite: bool = False,
          **options: Any) -> TrainResult:
    """Train per ``config`` (a TrainConfig, a dict, or keyword options); returns where the run went and how it did.

    A new run refuses an ``out`` folder that holds another run's files (:data:`RUN_FILES`), unless
    ``overwrite=True``, which removes them first.  ``resume=True`` continues the run in ``out`` from its latest
    checkpoint with its stored config; the options given (keyword ``options``, and the fields of ``config`` that
    differ from :class:`TrainConfig`'s defaults) may change only :data:`RESUME_OPTIONS` (``timesteps`` raised to
    train longer), and any other given option that differs from the stored one is a ConfigError.  A trainer whose
    packages are not installed (torch; sb3-contrib for maskable-ppo) is a :class:`~agents.config.MissingExtraError`
    (a ConfigError naming the extra), raised before anything is written.
    """
    given = dict(options)
    if config is None:
        config = TrainConfig()
    elif isinstance(config, dict):
        config = TrainConfig.from_dict(config)
    elif not isinstance(config, TrainConfig):
        raise ConfigError(f"config={config!r}: expected a TrainConfig, a dict or None")
    given = {**_set_fields(config), **given}
    if options:
        config = TrainConfig.from_dict({**config.to_dict(), **options}, where="train() options")
    if resume:
        config, saved = resumed_config(config, given)
    cfg = config.resolved()  # validates every option before anything starts
    from agents.config import check_dqn_budget, check_trainer_installed

    check_dqn_budget(cfg)  # a dqn run too short to learn anything
    check_trainer_installed(cfg.algo)  # torch (and sb3-contrib) missing: said before the run folder is made
    if not resume:  # a resume's options are the stored run's, warned about when it started
        from agents.config import UnusedOptionWarning, unused_options

        # a warning, not an error: experiments may pass the same options to every algorithm
        for line in unused_options(cfg.algo, given):
            warnings.warn(line, UnusedOptionWarning, stacklevel=2)
    if resume and cfg.timesteps != saved.timesteps:
        _check_resume_budget(cfg, Path(cfg.out) / "progress.json")
    run = RunFolder(cfg, resume=resume, overwrite=overwrite)
    run.open()
    try:  # the shaping tables are built (or loaded) before the clock starts: not part of the run's time
        run.prepare_shaping()
    except BaseException:
        run.close()
        raise
    planned = planned_steps(cfg)
    if planned != cfg.timesteps:
        unit = "iterations of num_envs" if cfg.algo == "dqn" else "updates of num_envs x num_steps"
        print(f"timesteps={cfg.timesteps:,}: {cfg.algo} trains whole {unit} = {planned_steps(cfg, 1):,} steps, so the "
              f"run takes {planned:,} steps", file=sys.stderr)
    t0 = time.time()
    try:
        if cfg.algo == "fast-ppo":
            from agents import fast_ppo

            fast_ppo.train(cfg, run)
        elif cfg.algo == "dqn":
            from agents import dqn

            dqn.train(cfg, run)
        else:
            _train_maskable_ppo(cfg, run)
    finally:
        run.close()
    seconds = time.time() - t0  # this call's training and saving: not the shaping tables, not the final evaluation
    interrupted = run.stop_requested
    evaluation = None
    if not interrupted:
        evaluation = _final_evaluation(cfg, run.dir, cfg.progress, run.steps)
    return TrainResult(
        out=str(run.dir), model_path=str(run.dir / MODEL_FILE[cfg.algo]), steps=run.steps,
        seconds=seconds, interrupted=interrupted, evaluation=evaluation, config=cfg,
    )


def _set_fields(config: TrainConfig) -> dict[str, Any]:
    """The fields of ``config`` that differ from :class:`TrainConfig`'s defaults: the options it was given."""
    defaults = TrainConfig().to_dict()
    return {k: v for k, v in config.to_dict().items() if v != defaults[k]}


def _stop_note(result: Any) -> str:
    """What the summary line adds for a run that stopped short of its budget: Ctrl-C, or its time limit."""
    if result.interrupted:
        return "  (interrupted)"
    cfg = getattr(result, "config", None)
    if cfg is not None and cfg.time_limit and result.steps < planned_steps(cfg):
        return (f"  (stopped by the --time-limit of {cfg.time_limit:g} s, {planned_steps(cfg):,} steps planned; "
                f"--resume --time-limit T goes on)")
    return ""


def planned_steps(cfg: TrainConfig, timesteps: int | None = None) -> int:
    """The steps a run of ``timesteps`` (default ``cfg.timesteps``; ``cfg`` resolved) takes: every trainer steps in
    whole units -- fast-ppo and maskable-ppo in updates of ``num_envs * num_steps`` steps, dqn in iterations of
    ``num_envs`` -- and rounds the budget up to them (unless a time limit or Ctrl-C stops it first).  A config not
    yet resolved (sizes left to the algorithm's defaults, None) is resolved first."""
    if cfg.num_envs is None or (cfg.algo != "dqn" and cfg.num_steps is None):
        cfg = cfg.resolved()
    unit = cfg.num_envs if cfg.algo == "dqn" else cfg.num_envs * cfg.num_steps
    steps = cfg.timesteps if timesteps is None else timesteps
    return max(1, -(-steps // unit)) * unit


# --------------------------------------------------------------- MaskablePPO
def _train_maskable_ppo(cfg: TrainConfig, run: RunFolder) -> None:
    """MaskablePPO (sb3-contrib) on PokerSquares-v0 with masks, MaskableEvalCallback, checkpoints and Ctrl-C."""
    try:
        import torch
        from sb3_contrib import MaskablePPO
        from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback
        from stable_baselines3.common.callbacks import BaseCallback, CallbackList
        from stable_baselines3.common.env_util import make_vec_env
    except ImportError:
        raise ImportError('maskable-ppo needs sb3-contrib: pip install "pokersquares_env[train]"') from None
    import gymnasium as gym

    import pokersquares_env  # noqa: F401
    from agents.fast_ppo import games_state, restore_games

    torch.set_num_threads(cfg.torch_threads)
    kwargs = cfg.rules_kwargs()
    adapter = None  # the native vector env's SB3 adapter, whose games a checkpoint holds (sync envs cannot be pickled)
    if cfg.vectorization == "native":  # the batched vector env behind SB3's VecEnv interface
        from stable_baselines3.common.vec_env import VecMonitor

        from pokersquares_env.sb3 import make_sb3_vec_env

        adapter = make_sb3_vec_env(num_envs=cfg.num_envs, seed=cfg.seed, **kwargs)
        venv = VecMonitor(adapter)  # SB3's episode statistics (rollout/ep_rew_mean), as make_vec_env's Monitor gives
    else:
        venv = make_vec_env("PokerSquares-v0", n_envs=cfg.num_envs, seed=cfg.seed, env_kwargs=kwargs)
    from agents.shaping import shape_sb3_vec_env

    potential = run.shaping_potential()
    if potential is not None:
        venv = shape_sb3_vec_env(venv, potential, cfg.gamma)
    decks = eval_decks(cfg, cfg.eval_games, cfg.eval_seed)

    class FixedDeals(gym.Wrapper):
        """Replays the fixed evaluation deals in order (MaskableEvalCallback's deals), keeping each finished game's
        final info (its scores under both systems): the run folder logs those games instead of playing them again."""

        def __init__(self, env):
            super().__init__(env)
            self.i = 0
            self.finished: list[dict[str, Any]] = []

        def reset(self, *, seed=None, options=None):
            deck = decks[self.i % len(decks)]
            self.i += 1
            return self.env.reset(seed=seed, options={"deck": deck})

        def step(self, action):
            obs, reward, terminated, truncated, info = self.env.step(action)
            if terminated or truncated:
                self.finished.append(info)
            return obs, reward, terminated, truncated, info

        def action_masks(self):
            return self.env.unwrapped.action_masks()

    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    fixed_deals = FixedDeals(gym.make("PokerSquares-v0", **kwargs))
    eval_env = DummyVecEnv([lambda: Monitor(fixed_deals)])

    shaper = venv if potential is not None else None

    def snapshot(model) -> dict[str, Any]:
        """Where the run stands between two rollouts: the games in progress, SB3's last observation and episode
        starts, the shaping potential and the generators torch, numpy and Python draw from (what a checkpoint holds
        beside the weights), and copies of the weights, the optimiser and the run folder's schedules (to go back to
        if the run is cut short before the next rollout starts)."""
        import copy
        import random

        games = None
        if adapter is not None:
            games = games_state(adapter.venv, obs=model._last_obs, starts=model._last_episode_starts,
                                phi=None if shaper is None else shaper.phi)
            if games is not None:
                games["rngs"] = {"torch": torch.get_rng_state(), "numpy": np.random.get_state(),
                                 "python": random.getstate()}
        return {"steps": int(model.num_timesteps), "games": games, "run": run_state(),
                "weights": copy.deepcopy(model.policy.state_dict()),
                "optimizer": copy.deepcopy(model.policy.optimizer.state_dict())}

    def run_state() -> tuple[Any, ...]:
        return (run._episodes, list(run._recent), run._last_eval_step, run._last_ckpt_step, run._last_row_step)

    def go_back(model, snap: dict[str, Any]) -> None:
        """Put the model and the run folder back where they stood at ``snap`` (a rollout's start)."""
        model.policy.load_state_dict(snap["weights"])
        model.policy.optimizer.load_state_dict(snap["optimizer"])
        run._episodes, run._recent, run._last_eval_step, run._last_ckpt_step, run._last_row_step = snap["run"]
        run._recent = list(run._recent)

    def save_at(model, snap: dict[str, Any], path: Path) -> None:
        """Save ``model`` as it stood at ``snap`` (the weights only change between rollouts) with its games and
        the checkpoint's progress record, through a temporary file (SB3 writes the zip in place: a kill mid-save
        would leave no whole checkpoint)."""
        steps = model.num_timesteps
        model.num_timesteps = snap["steps"]
        if snap["games"] is not None:
            model._pse_games = snap["games"]  # SB3 saves the model's attributes; read back by --resume
        if run.checkpoint_progress is not None:
            setattr(model, PROGRESS_ATTRIBUTE, run.checkpoint_progress)
        tmp = path.with_name(path.stem + ".tmp.zip")  # ends in .zip: SB3 adds no suffix
        try:
            model.save(tmp)
            os.replace(tmp, path)
        finally:
            model.num_timesteps = steps
            model.__dict__.pop("_pse_games", None)
            model.__dict__.pop(PROGRESS_ATTRIBUTE, None)

    class RunCallback(BaseCallback):
        """Feeds the run folder: episode scores, progress, curve rows, evaluations and checkpoints.

        Checkpoints are taken between rollouts, and Ctrl-C or a spent --time-limit stops the run there too: the
        weights change only between rollouts, so a checkpoint holds everything a resumed run needs to go on
        exactly as the run never stopped (the games in progress, the generators)."""

        def __init__(self, eval_cb):
            super().__init__()
            self.eval_cb = eval_cb
            self.seen_eval = 0
            self.snap: dict[str, Any] | None = None  # the state at the start of the current rollout
            self.in_rollout = False
            self.rollouts = 0  # finished in this session: a session trains at least one, however long its set-up

        def _on_rollout_start(self) -> None:
            self.snap, self.in_rollout = snapshot(self.model), True
            run.maybe_checkpoint(self.num_timesteps, lambda p: save_at(self.model, self.snap, p))
            self.snap["run"] = run_state()  # with the checkpoint schedule as the checkpoint left it

        def _on_rollout_end(self) -> None:
            self.in_rollout = False
            self.rollouts += 1

        def _on_step(self) -> bool:
            if self.locals.get("n_steps") == 0 and (run.stop_requested or (self.rollouts and run.out_of_time())):
                return False  # at the rollout's first step: the resumed run takes it again from the rollout's start
            infos = self.locals.get("infos", [])
            scores = [float(i["score"]) for i in infos if "score" in i]
            if scores:
                run.episodes(scores)
            if self.eval_cb is not None and len(self.eval_cb.evaluations_timesteps) > self.seen_eval:
                self.seen_eval = len(self.eval_cb.evaluations_timesteps)
                # the eval callback has just played the fixed deals: the run folder logs those games (both
                # systems) rather than playing them a second time, which doubled the evaluations' cost
                games = fixed_deals.finished
                if len(games) == cfg.eval_games:
                    run.step(self.num_timesteps, None, results=games)
                else:  # not the games expected (cannot happen with SB3's evaluate_policy): play them here
                    run._last_eval_step = -10**18
                    run.step(self.num_timesteps, _sb3_policy(self.model))
                    run._last_eval_step = self.num_timesteps
            else:
                run.step(self.num_timesteps, None)
            return True

    eval_cb = None
    if cfg.eval_every:
        eval_cb = MaskableEvalCallback(
            eval_env, n_eval_episodes=cfg.eval_games, eval_freq=max(1, cfg.eval_every // cfg.num_envs),
            deterministic=True, best_model_save_path=None, log_path=str(run.dir / "sb3_eval"), verbose=0,
        )
        # the deals restart from the first one at every evaluation: the same deals each time
        orig = eval_cb._on_step

        def on_step():
            if eval_cb.eval_freq > 0 and eval_cb.n_calls % eval_cb.eval_freq == 0:
                fixed_deals.i, fixed_deals.finished = 0, []
            return orig()

        eval_cb._on_step = on_step
    if run.resume:
        model = MaskablePPO.load(run.latest_checkpoint(), env=venv, tensorboard_log=str(run.dir / "tb"), device="cpu")
        model.__dict__.pop(PROGRESS_ATTRIBUTE, None)  # read by RunFolder.open; each save stores its own
        games = _sb3_games(restore_games({"games": model.__dict__.pop("_pse_games", None)}, cfg, cfg.num_envs),
                           model, shaper is not None)
        if games is not None:  # the games in progress and the generators: the run goes on as if never stopped
            import random

            adapter.venv = games["env"]
            model._last_obs, model._last_episode_starts = games["obs"], games["starts"]
            if shaper is not None:
                shaper.phi = games["phi"]
            torch.set_rng_state(games["rngs"]["torch"])
            np.random.set_state(games["rngs"]["numpy"])
            random.setstate(games["rngs"]["python"])
        else:
            # load() reseeds torch and the env with the run's seed, which would deal the first games again; go on
            # with a seed of the steps done instead (as fast-ppo and dqn do for a checkpoint without its games), so
            # the resumed part plays new deals.
            model.set_random_seed((cfg.seed + 7919 * (int(model.num_timesteps) // cfg.num_envs)) % 2**32)
        if eval_cb is not None:  # evaluations fall on the steps of the run never stopped, after its earlier ones
            eval_cb.n_calls = int(model.num_timesteps) // cfg.num_envs
            _keep_sb3_evaluations(eval_cb, run.dir / "sb3_eval" / "evaluations.npz", int(model.num_timesteps))
    else:
        if cfg.net == "lines":  # fast-ppo's network as SB3's actor-critic (agents/sb3_policy.py)
            from agents.sb3_policy import LinesPolicy

            policy, policy_kwargs = LinesPolicy, {"lines_hidden": list(cfg.hidden)}
        else:
            policy, policy_kwargs = "MlpPolicy", {"net_arch": list(cfg.hidden)}
        model = MaskablePPO(
            policy, venv, learning_rate=_linear(cfg.learning_rate) if cfg.anneal_lr else cfg.learning_rate,
            n_steps=cfg.num_steps, batch_size=cfg.minibatch_size, n_epochs=cfg.update_epochs, gamma=cfg.gamma,
            gae_lambda=cfg.gae_lambda, clip_range=cfg.clip_coef, ent_coef=cfg.ent_coef, vf_coef=cfg.vf_coef,
            max_grad_norm=cfg.max_grad_norm, policy_kwargs=policy_kwargs,
            tensorboard_log=str(run.dir / "tb"), seed=cfg.seed, device="cpu", verbose=0,
        )
    done = int(model.num_timesteps)
    run.start(total=planned_steps(cfg), done=done)  # SB3 rounds the budget up to whole rollouts
    callbacks = [RunCallback(eval_cb)]
    if eval_cb is not None:
        callbacks.insert(0, eval_cb)
    callbacks[-1].seen_eval = len(eval_cb.evaluations_timesteps) if eval_cb is not None else 0
    aborted = False
    try:
        if cfg.timesteps > done and not run.spent_before():  # a resumed run's time limit may already be spent
            import warnings

            # the eval env is a plain DummyVecEnv of one replayed-deal env, the training env the native adapter
            warnings.filterwarnings("ignore", message="Training and eval env are not of the same type")
            model.learn(
                total_timesteps=cfg.timesteps - done, callback=CallbackList(callbacks),
                reset_num_timesteps=not run.resume, tb_log_name="maskable_ppo", progress_bar=False,
            )
    except BaseException:
        aborted = True  # a second Ctrl-C or an error, within a rollout or within the update after it
        raise
    finally:
        cb = callbacks[-1]
        if cb.snap is not None and (cb.in_rollout or aborted):
            # stopped or cut short within a rollout or its update: back to the rollout's start, which a checkpoint
            # holds exactly (within the update the weights are already partly changed)
            snap = cb.snap
            go_back(model, snap)
        else:  # finished, or nothing to train: the state now, between two rollouts
            snap = snapshot(model)
        if model._last_obs is None:  # nothing was trained (a spent time limit): there are no games to hold
            snap["games"] = None
        run.maybe_checkpoint(snap["steps"], lambda p: save_at(model, snap, p), force=True)
        run.steps = snap["steps"]
        run.save_final(lambda p: save_at(model, {**snap, "games": None}, p))
        venv.close()
        eval_env.close()


def _sb3_games(games: dict[str, Any] | None, model: Any, shaped: bool) -> dict[str, Any] | None:
    """``games`` (:func:`agents.fast_ppo.restore_games` of a maskable-ppo checkpoint) if they hold what the run
    goes on with -- SB3's last observation and episode starts for every sub-env, the potential of a shaped run, the
    three generators' states -- else None, saying that the resumed run starts new games."""
    if games is None:
        return None
    n = model.n_envs
    obs, starts, rngs = games.get("obs"), games.get("starts"), games.get("rngs")
    why = None
    if not isinstance(obs, np.ndarray) or obs.shape != (n, *model.observation_space.shape):
        why = f"an observation of shape {getattr(obs, 'shape', None)}, not ({n}, {model.observation_space.shape[0]})"
    elif not isinstance(starts, np.ndarray) or starts.shape != (n,):
        why = f"episode starts of shape {getattr(starts, 'shape', None)}, not ({n},)"
    elif shaped and (not isinstance(games.get("phi"), np.ndarray) or games["phi"].shape != (n,)):
        why = "no shaping potential for every game"
    elif not isinstance(rngs, dict) or not {"torch", "numpy", "python"} <= set(rngs):
        why = "no generator states"
    if why is not None:
        print(f"--resume: the checkpoint holds games that cannot be read ({why}): the resumed run starts new games",
              file=sys.stderr)
        return None
    return games


def _keep_sb3_evaluations(eval_cb: Any, path: Path, steps: int) -> None:
    """Give ``eval_cb`` the evaluations an earlier session logged in ``path`` up to ``steps``, so the resumed run's
    ``sb3_eval/evaluations.npz`` holds them all (an unreadable file: none)."""
    try:
        with np.load(path) as data:
            keep = data["timesteps"] <= steps
            rows = (data["timesteps"][keep], data["results"][keep], data["ep_lengths"][keep])
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return
    eval_cb.evaluations_timesteps = [int(t) for t in rows[0]]
    eval_cb.evaluations_results = [list(r) for r in rows[1]]
    eval_cb.evaluations_length = [list(r) for r in rows[2]]


def _linear(lr: float) -> Callable[[float], float]:
    """SB3's linearly annealed learning rate, clamped at 0: SB3 computes ``progress_remaining`` as 1 - steps taken /
    budget after each rollout, which falls below 0 in the last rollout of a budget rounded up to whole rollouts; a
    negative rate would make that update climb the loss instead of descending it."""
    return lambda progress_remaining: lr * max(progress_remaining, 0.0)


def _sb3_policy(model) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    def act(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        actions, _ = model.predict(obs, action_masks=masks.astype(bool), deterministic=True)
        return np.asarray(actions)

    return act


# ------------------------------------------------------------------- CLI
_CLI_FLAGS = {
    "algo": dict(choices=sorted(ALGOS)),
    "scoring": dict(metavar="american|english|FILE"),
    "jokers": dict(type=int, choices=(0, 1, 2)),  # as play and evaluate
    "placement": dict(choices=["free", "adjacent"]),
    "first-cell": dict(metavar="FIRST_CELL"),  # as play and evaluate
    "reward-mode": dict(choices=["line", "terminal"]),
    "reward-scale": dict(metavar="X|normalized"),
    "shaping": dict(choices=list(SHAPINGS)),
    "timesteps": dict(type=steps_arg),  # 2000000 or 2e6, as demo --steps
    "seed": dict(type=train_seed_arg),  # 0 to 2**32 - 1
    "out": dict(metavar="DIR"),
    "net": dict(choices=["mlp", "lines"]),
    "learning-rate": dict(type=float),
    "num-envs": dict(type=int),
    "num-steps": dict(type=int),
    "minibatch-size": dict(type=int),
    "update-epochs": dict(type=int),
    "ent-coef": dict(type=float),
    "gamma": dict(type=float),
    "gae-lambda": dict(type=float),
    "clip-coef": dict(type=float),
    "vf-coef": dict(type=float),
    "max-grad-norm": dict(type=float),
    "anneal-lr": dict(action=argparse.BooleanOptionalAction),
    "buffer-size": dict(type=int),
    "learning-starts": dict(type=int),
    "target-tau": dict(type=float),
    "epsilon-start": dict(type=float),
    "epsilon-end": dict(type=float),
    "exploration-fraction": dict(type=float),
    "eval-seed": dict(type=seed_arg),
    "eval-every": dict(type=int),
    "eval-games": dict(type=int),
    "checkpoint-every": dict(type=int),
    "final-eval-games": dict(type=int),
    "final-eval-seed": dict(type=seed_arg),
    "vectorization": dict(choices=["native", "sync"]),
    "time-limit": dict(type=float),
    "anneal-by": dict(choices=["first", "steps"]),
    "torch-threads": dict(type=int),
}


def add_arguments(parser) -> None:
    """The ``pokersquares train`` options (each one a :class:`TrainConfig` field, its help ending with its default).

    Every flag's parsed default stays ``None`` ("not given"), so a ``--config`` file is overridden only by the flags
    actually given; the defaults shown are :class:`TrainConfig`'s, and those it leaves to the algorithm are shown
    per algorithm (:data:`agents.config.ALGO_DEFAULTS`).
    """
    from agents.config import ALGO_DEFAULTS, NET_DEFAULTS

    docs = _field_docs()
    base = TrainConfig()

    def shown(value: Any) -> str:
        if isinstance(value, bool):
            return "on" if value else "off"
        if isinstance(value, (list, tuple)):
            return " ".join(shown(v) for v in value)
        return f"{value:g}" if isinstance(value, float) else str(value)

    def with_default(name: str) -> str:
        value = getattr(base, name)
        if value is None and any(name in d for d in ALGO_DEFAULTS.values()):
            per_algo = {algo: shown(d[name]) for algo, d in ALGO_DEFAULTS.items()}
            for (algo, net), over in NET_DEFAULTS.items():  # a default that also depends on --net
                if name in over and shown(over[name]) != per_algo[algo]:
                    per_algo[algo] += f" ({shown(over[name])} with --net {net})"
            if len(set(per_algo.values())) == 1:  # the same for every algorithm
                default = next(iter(per_algo.values()))
            else:
                default = "per --algo, set at run time: " + ", ".join(f"{a} {v}" for a, v in per_algo.items())
        elif name == "first_cell" and value is None:
            default = "anywhere"
        else:
            default = shown(value)
        return f"{docs.get(name, '')} (default {default})"

    for flag, extra in _CLI_FLAGS.items():
        name = flag.replace("-", "_")
        parser.add_argument(f"--{flag}", dest=name, default=None, help=with_default(name), **extra)
    parser.add_argument("--hidden", type=int, nargs="+", default=None, metavar="N", help=with_default("hidden"))
    parser.epilog = ("The defaults shown are TrainConfig's; a --config file replaces them, and the flags given "
                     "replace both. --print-config shows the resolved values.")
    parser.add_argument("--rules", metavar="SPEC", default=None,
                        help="rule options at once: 'jokers=2,placement=adjacent,first_cell=center', a JSON object "
                             "or a JSON file; over the config file; --jokers, --placement and --first-cell may add "
                             "to it but not contradict it")
    parser.add_argument("--config", metavar="FILE", help="a JSON or YAML config file; flags given here override it")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run in --out from its latest checkpoint, with its stored options (only "
                             + ", ".join("--" + k.replace("_", "-") for k in RESUME_OPTIONS if k != "progress")
                             + " and --no-progress may change)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace a run already in --out (without it, such a folder is refused)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--print-config", action="store_true", help="print the resolved config as JSON and exit")


def _field_docs() -> dict[str, str]:
    """Field name -> its documentation line (the string under each TrainConfig field)."""
    import ast
    import inspect

    docs: dict[str, str] = {}
    tree = ast.parse(inspect.getsource(TrainConfig))
    body = tree.body[0].body
    for node, nxt in itertools.pairwise(body):
        if isinstance(node, ast.AnnAssign) and isinstance(nxt, ast.Expr) and isinstance(getattr(nxt, "value", None), ast.Constant):
            docs[node.target.id] = str(nxt.value.value)
    return docs


def _scale(text: str) -> Any:
    if text == "normalized":
        return text
    try:
        return float(text)
    except ValueError:
        raise ConfigError(f"--reward-scale {text!r}: expected a positive number or 'normalized'") from None


def _first_cell(text: str) -> Any:
    if text.lower() == "none":
        return None
    # anything else (also '', or '²', a digit to str.isdigit but not to int()) is for the rules to accept or name
    return int(text) if text.isascii() and text.isdigit() else text


def config_from_args(args, given: dict[str, Any] | None = None) -> TrainConfig:
    """The TrainConfig of parsed ``pokersquares train`` arguments (config file, then flags); ``given``: their
    :func:`given_options`, when already read."""
    return TrainConfig.from_dict({**TrainConfig().to_dict(), **(given_options(args) if given is None else given)})


def given_options(args) -> dict[str, Any]:
    """The options parsed ``pokersquares train`` arguments set: the config file's, then the flags'."""
    base = {}
    if args.config is not None:  # the options the file sets (validated by loading it), not the defaults of the others
        from agents.config import read_config_file, scoring_path_near

        written = read_config_file(args.config, "config file")  # read once: validated, then only its own keys kept
        loaded = TrainConfig.from_dict(written, where=f"config file {str(Path(args.config))!r}").to_dict()
        base = {k: v for k, v in loaded.items() if k in written}
        if "scoring" in base:  # a point-system file named in the config file: found next to it too (as sweep does)
            # strict (a missing file names both places looked in) unless --scoring replaces it
            base["scoring"] = scoring_path_near(base["scoring"], Path(args.config).parent,
                                                strict=getattr(args, "scoring", None) is None)
    if getattr(args, "rules", None) is not None:
        from pokersquares_env.core import Rules

        flags = {"jokers": args.jokers, "placement": args.placement,
                 "first_cell": None if args.first_cell is None else _first_cell(args.first_cell)}
        try:
            Rules.with_options(args.rules, **flags)  # a contradiction between --rules and a flag is an error
            base.update(Rules.spec_options(args.rules))
        except ValueError as exc:
            raise ConfigError(f"--rules: {exc}") from None
    names = {f.name for f in fields(TrainConfig)}
    for name in names:
        value = getattr(args, name, None)
        if value is None:
            continue
        if name == "reward_scale":
            value = _scale(value)
        elif name == "first_cell":
            value = _first_cell(value)
        base[name] = value
    if args.no_progress:
        base["progress"] = False
    return base


def run(args) -> int:
    """Run ``pokersquares train``."""
    try:
        given = given_options(args)  # read once: the config file and --rules are files
        cfg = config_from_args(args, given)
        if args.resume and args.overwrite:
            raise ConfigError("--resume and --overwrite contradict each other: continue the run, or replace it")
        if args.print_config:  # with --resume: the stored config the resume would train with, not the defaults
            if args.resume:
                shown, saved = resumed_config(cfg, given)
                if shown.timesteps != saved.timesteps:  # a budget the resume itself would refuse is refused here too
                    _check_resume_budget(shown, Path(shown.out) / "progress.json")
            else:  # the warnings train() gives a new run; its dqn budget refusal is a warning here (shown as it is)
                from agents.config import check_dqn_budget, unused_options

                shown = cfg
                for line in unused_options(shown.algo, _set_fields(shown)):
                    print(f"pokersquares train: warning: {line}", file=sys.stderr)
                try:
                    check_dqn_budget(shown)
                except ConfigError as exc:
                    print(f"pokersquares train: warning: training this config would be refused: {exc}", file=sys.stderr)
            print(json.dumps(shown.resolved().to_dict(), indent=2))
            return 0
        # --resume refuses a flag that would change the run
        with warnings.catch_warnings():  # an option the algorithm does not use: one line, not Python's two
            shown_before = warnings.showwarning

            def one_line(message, category, filename, lineno, file=None, line=None):
                from agents.config import UnusedOptionWarning

                if issubclass(category, UnusedOptionWarning):
                    print(f"pokersquares train: warning: {message}", file=sys.stderr)
                else:
                    shown_before(message, category, filename, lineno, file, line)

            warnings.showwarning = one_line
            result = train(cfg, resume=args.resume, overwrite=args.overwrite, **(given if args.resume else {}))
    except ConfigError as exc:
        print(f"pokersquares train: {exc}", file=sys.stderr)
        return 2
    except TrainingDiverged as exc:  # a failed run, not a usage error
        print(f"pokersquares train: {exc}", file=sys.stderr)
        return 1
    print(f"run folder: {result.out}  model: {result.model_path}  steps: {result.steps}  "
          f"seconds: {result.seconds:.0f}{_stop_note(result)}")
    if result.evaluation:
        for row in result.evaluation:
            print(
                f"final evaluation ({row.get('games')} games, {row.get('scoring')}): mean {figure(row.get('mean'))} "
                f"+- {figure(row.get('ci95'))}"  # n/a: no interval from one game
            )
    return 130 if result.interrupted else 0
