"""``pokersquares sweep CONFIG``: training grids and hyperparameter searches on Ray Tune.

A sweep config (YAML or JSON) names fixed training options and a search space::

    name: reward-shaping            # Tune experiment name (default: the config file's stem)
    out: runs/sweeps/reward-shaping # sweep folder (default runs/sweeps/<name>)
    train:                          # TrainConfig options shared by every trial
      algo: fast-ppo
      timesteps: 200000
      final_eval_games: 500
    space:                          # one entry per varied TrainConfig option
      scoring: [american, english]  # a list: grid search (every value)
      reward_mode: [line, terminal]
      seed: [0, 1, 2, 3, 4]
      learning_rate: {loguniform: [1.0e-4, 3.0e-3]}   # a distribution: random search
      ent_coef: {uniform: [0.0, 0.01]}
      num_steps: {choice: [32, 64]}
    samples: 1                      # Tune num_samples: the grid is repeated this many times, with fresh draws
                                    # (each sample's draws are shared by all its grid values: every seed alike)
    search_seed: 0                  # seed of the random draws (the same config draws the same trials)
    cpus_per_trial: 1
    max_concurrent: null            # at most this many trials at once (null: as many as the CPUs allow)
    metric: mean                    # summary ranking: final evaluation mean (or eval_score, mean_english, ...)

Distributions: ``{choice: [...]}``, ``{uniform: [lo, hi]}``, ``{loguniform: [lo, hi]}``,
``{randint: [lo, hi]}`` (hi excluded), ``{grid: [...]}`` (same as a list).  A sample draws its random values once
and trains them with every grid value (every seed), so the means over seeds pool trials of the same draws.

Every trial calls the normal training entry point (:func:`agents.train.train`) and
writes the usual run folder in ``<out>/trials/<trial>/`` (the folder name is made
from the trial's parameters).  A finished trial leaves ``sweep_trial.json`` there;
when the sweep runs again (after a stop, a crash, or with more values in the
config) a finished trial is not trained again but reports its stored results --
only when it was trained with exactly the trial's training options (``sweep_trial.json`` stores the resolved
config; a changed ``train:`` option trains the trial again) -- and an unfinished trial with a checkpoint of the
same config continues from it.  The sweep folder
receives ``summary.md``/``summary.csv``/``summary.json`` (one row per trial, and
means over seeds per configuration), ``curves.png`` and ``final.png``; Tune's own
records go to ``<out>/tune/``.  The sweep folder must be new, empty or a sweep's own (holding the ``sweep.json``
record of its config that every sweep writes first): any other folder is refused before Ray starts, as its files
would be replaced.

Ray runs embedded on this machine (``--cpus``), or on a cluster with ``--address``
(or ``$RAY_ADDRESS``); on a cluster, ``out`` must be a folder every node can
write (a shared file system).  Needs ``pip install "pokersquares_env[distributed]"``.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import itertools
import json
import math
import os
import re
import signal
import sys
import threading
import time
import typing
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pokersquares_env._files import replace_text

__all__ = ["HELP", "SweepConfig", "SweepResult", "add_arguments", "check_sweep_root", "check_trainers_installed",
           "check_trial_cpus", "load_sweep", "run", "run_sweep", "trial_folder"]

HELP = "run training grids and hyperparameter searches on Ray Tune (resumable; summary table and plots)"

DISTRIBUTIONS = ("choice", "uniform", "loguniform", "randint", "grid")
#: what a trial reports (and the summary shows) besides its parameters
METRICS = ("mean", "ci95", "mean_american", "mean_english", "win_rate", "eval_score", "steps", "seconds",
           "worker_peak_rss_mib")
#: the metrics a sweep may rank trials by (higher is better)
RANK_METRICS = ("mean", "mean_american", "mean_english", "win_rate", "eval_score")
DONE_FILE = "sweep_trial.json"
#: the sweep's record of its config, written into its folder before any trial: a folder holding it is a sweep's own
SWEEP_FILE = "sweep.json"


# --------------------------------------------------------------------------- config


@dataclass
class SweepConfig:
    """A sweep: fixed training options, a search space and how to run it on Ray Tune."""

    name: str = "sweep"
    """Tune experiment name"""
    out: str = ""
    """sweep folder (default runs/sweeps/<name>)"""
    train: dict[str, Any] = field(default_factory=dict)
    """TrainConfig options shared by every trial"""
    space: dict[str, Any] = field(default_factory=dict)
    """varied TrainConfig options: a list (grid) or a {distribution: args} mapping (random)"""
    samples: int = 1
    """Tune num_samples: repeats of the grid, each with fresh random draws"""
    search_seed: int = 0
    """seed of the random draws"""
    cpus_per_trial: float = 1.0
    """CPUs Ray reserves per trial"""
    max_concurrent: int | None = None
    """most trials running at once (None: as many as the CPUs allow)"""
    metric: str = "mean"
    """the figure trials are ranked by (higher is better)"""

    def __post_init__(self) -> None:
        # out left out, empty or null (YAML `out:`): the default folder; a bad name is named by validate
        if (self.out is None or isinstance(self.out, str) and not self.out) and isinstance(self.name, str):
            self.out = os.path.join("runs", "sweeps", self.name)

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "sweep config") -> "SweepConfig":
        """A sweep config from a mapping; unknown keys are an error naming them."""
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected a mapping of sweep options, got {type(data).__name__}")
        names = [f for f in cls.__dataclass_fields__]
        unknown = sorted(set(data) - set(names), key=str)  # a YAML key may be a number: 5: 1
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {unknown}; expected some of {names}")
        cfg = cls(**data)
        cfg.validate(where)
        return cfg

    def to_dict(self) -> dict[str, Any]:
        """The config as a JSON-ready mapping."""
        return asdict(self)

    def validate(self, where: str = "sweep config") -> None:
        """Raise ValueError naming the first bad option (every grid combination is checked as a TrainConfig)."""
        from agents.config import ConfigError, TrainConfig, check_dqn_budget, dqn_min_timesteps, point_table

        if not isinstance(self.name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", self.name or ""):
            raise ValueError(f"{where}: name={self.name!r}: expected letters, digits, '_', '.' or '-'")
        if not isinstance(self.out, str) or not self.out:
            raise ValueError(f"{where}: out={self.out!r}: expected a folder path (text)")
        for key, expected in (("train", "a mapping of TrainConfig options"), ("space", "a mapping of option -> values")):
            if not isinstance(getattr(self, key), dict):
                raise ValueError(f"{where}: {key}={getattr(self, key)!r}: expected {expected}")
        fields_ = set(TrainConfig.__dataclass_fields__)
        for key in ("train", "space"):
            bad = sorted(set(getattr(self, key)) - fields_, key=str)
            if bad:
                raise ValueError(f"{where}: {key}: unknown training option(s) {bad}; expected some of {sorted(fields_)}")
        for key in ("out", "progress"):
            if key in self.space:
                raise ValueError(f"{where}: space: {key!r} cannot vary (each trial gets its own run folder)")
            if key in self.train:  # run_trial sets both for every trial: a value here would be silently ignored
                raise ValueError(
                    f"{where}: train: {key}={self.train[key]!r} cannot be set: " + (
                        f"each trial writes its own run folder, <out>/trials/<trial>, under the sweep's top-level "
                        f"out (now {self.out!r}): expected the folder as the top-level out (or --out), not under train"
                        if key == "out" else
                        "trials train without a progress display: expected no progress option under train"))
        both = sorted(set(self.train) & set(self.space))
        if both:
            raise ValueError(f"{where}: option(s) {both} are both fixed (train) and varied (space): keep one")
        if not self.space:
            raise ValueError(f"{where}: space is empty: expected at least one varied option (e.g. seed: [0, 1])")
        for key, spec in self.space.items():
            _check_dimension(key, spec, where)
        if isinstance(self.samples, bool) or not isinstance(self.samples, int) or self.samples < 1:
            raise ValueError(f"{where}: samples={self.samples!r}: expected a positive integer")
        if isinstance(self.search_seed, bool) or not isinstance(self.search_seed, int) or self.search_seed < 0:
            raise ValueError(f"{where}: search_seed={self.search_seed!r}: expected an integer >= 0")
        if self.samples > 1 and all(_grid_values(v) is not None for v in self.space.values()):
            raise ValueError(f"{where}: samples={self.samples}: the space has no random dimension, so every sample would "
                             f"repeat the same grid trials in the same run folders: expected samples: 1, or a random "
                             f"dimension ({', '.join('{' + d + ': ...}' for d in DISTRIBUTIONS if d != 'grid')})")
        if isinstance(self.cpus_per_trial, bool) or not isinstance(self.cpus_per_trial, (int, float)) or not (
                math.isfinite(self.cpus_per_trial) and self.cpus_per_trial > 0):  # NaN: Ray would wait forever
            raise ValueError(f"{where}: cpus_per_trial={self.cpus_per_trial!r}: expected a positive (finite) number")
        if self.max_concurrent is not None and (
            isinstance(self.max_concurrent, bool) or not isinstance(self.max_concurrent, int) or self.max_concurrent < 1
        ):
            raise ValueError(f"{where}: max_concurrent={self.max_concurrent!r}: expected a positive integer or null")
        if self.metric not in RANK_METRICS:
            raise ValueError(f"{where}: metric={self.metric!r}: expected one of {list(RANK_METRICS)}")
        # every combination of the grid values and of the random options' checked values (every choice, both bounds
        # and a fraction between them, a randint's integers) must be a valid TrainConfig (the first 1000 combinations,
        # then every value at least once), so that a bad value is named here, not by every trial failing inside Ray
        values = {k: _check_values(v) for k, v in self.space.items()}
        first = {k: vs[0] for k, vs in values.items()}
        combos = [dict(zip(values, c, strict=True)) for c in itertools.islice(itertools.product(*values.values()), 1000)]
        combos += [{**first, k: v} for k, vs in values.items() for v in vs[1:]]
        seen = set()
        trained: dict[str, dict[str, Any]] = {}  # resolved config -> the combination that gives it
        for combo in combos:
            key = json.dumps(combo, sort_keys=True, default=repr)
            if key in seen:
                continue
            seen.add(key)
            options = {**self.train, **combo, "out": "_", "progress": False}
            trial = f"{where}: trial {combo}"  # the varied values that make the bad option (it may be a default)
            try:
                resolved = TrainConfig.from_dict(options, where=trial).resolved()
                # a dqn trial whose budget ends before it learns would fail inside Ray, after the others ran
                check_dqn_budget(resolved, f"raise timesteps to at least {dqn_min_timesteps(resolved):,} or lower "
                                           f"learning_starts, under train: or space:")
            except ConfigError as exc:
                text = str(exc)
                raise ValueError(text if text.startswith(trial) else f"{trial}: {text}") from None
            # two spellings of one value (first_cell center and c3, seed 0 and 0.0, scoring american and American)
            # would train the same run twice, in two folders, and count it twice in the means over seeds; the point
            # system is compared by the table it names, as a finished trial's reuse compares it
            same = json.dumps(_equal_form({**_comparable(resolved.to_dict()), "scoring": point_table(resolved.scoring)}),
                              sort_keys=True, default=repr)
            if same in trained:
                raise ValueError(f"{where}: trials {trained[same]} and {combo} train the same config (values that "
                                 f"differ only in how they are written): expected each value once")
            trained[same] = combo


def _equal_form(value: Any) -> Any:
    """``value`` with every whole float written as an int (``0.0`` as ``0``), so that values Python holds equal have
    one JSON text."""
    if isinstance(value, dict):
        return {k: _equal_form(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_equal_form(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _grid_values(spec: Any) -> list | None:
    if isinstance(spec, list):
        return spec
    if isinstance(spec, dict) and list(spec) == ["grid"]:
        return spec["grid"]
    return None


def _check_distinct(key: str, values: list, where: str, kind: str = "grid") -> None:
    """Refuse a grid value given twice (its trials would share one run folder, and one record) and a choice value
    given twice (drawn twice as often, to train the same trials)."""
    seen = set()
    for value in values:
        text = json.dumps(_plain(value), sort_keys=True, default=repr)
        if text in seen:
            why = ("each grid value is one trial, with its own run folder" if kind == "grid" else
                   "a value listed twice is drawn twice as often, and its trials are the same run")
            raise ValueError(f"{where}: space: {key}: value {value!r} given more than once: expected distinct {kind} "
                             f"values ({why})")
        seen.add(text)


def _check_dimension(key: str, spec: Any, where: str) -> None:
    from agents.config import TrainConfig

    if isinstance(spec, list):
        if not spec:
            raise ValueError(f"{where}: space: {key}: an empty list: expected at least one value")
        _check_distinct(key, spec, where)
        return
    if not isinstance(spec, dict) or len(spec) != 1 or next(iter(spec)) not in DISTRIBUTIONS:
        raise ValueError(
            f"{where}: space: {key}={spec!r}: expected a list of values (grid) or one of "
            f"{{{', '.join(d + ': ...' for d in DISTRIBUTIONS)}}}"
        )
    kind, args = next(iter(spec.items()))
    if kind in ("choice", "grid"):
        if not isinstance(args, list) or not args:
            raise ValueError(f"{where}: space: {key}: {kind}={args!r}: expected a non-empty list")
        _check_distinct(key, args, where, kind)
        return
    if kind in ("uniform", "loguniform") and typing.get_type_hints(TrainConfig).get(key) in (int, int | None):
        raise ValueError(f"{where}: space: {key}: {kind}={args!r}: {key} takes whole numbers, and {kind} draws "
                         f"fractions: expected {{randint: [low, high]}} (high excluded) or {{choice: [...]}}")
    ok = isinstance(args, list) and len(args) == 2 and all(
        isinstance(a, (int, float)) and not isinstance(a, bool) and math.isfinite(a) for a in args) and args[0] < args[1]
    if kind == "randint":
        ok = ok and all(isinstance(a, int) for a in args)
    if kind == "loguniform":
        ok = ok and args[0] > 0
    if not ok:
        raise ValueError(f"{where}: space: {key}: {kind}={args!r}: expected [low, high] of finite numbers with low < high"
                         + (" (integers)" if kind == "randint" else "") + (" and low > 0" if kind == "loguniform" else ""))


#: a randint of at most this many integers has every one checked (one inside a range may be refused where both ends
#: pass: num_steps=7 leaves a one-sample minibatch where 4 and 8 do not); a wider one its ends and a spread of values
RANDINT_CHECK_ALL = 256


def _check_values(spec: Any) -> list:
    """The values of a (checked) dimension that validation tries: every grid or choice value; both bounds of a
    uniform or loguniform and a fraction between them (an option that takes whole numbers only, such as first_cell,
    refuses it, as a draw would be refused inside Ray); every integer of a randint of up to
    :data:`RANDINT_CHECK_ALL` (its high is excluded), or 256 values spread evenly from its low to its
    high - 1, both ends included."""
    grid = _grid_values(spec)
    if grid is not None:
        return list(grid)
    kind, args = next(iter(spec.items()))
    if kind == "choice":
        return list(args)
    low, high = args
    if kind == "randint":
        if high - low <= RANDINT_CHECK_ALL:
            return list(range(low, high))
        return sorted({low, high - 1, *(low + (high - 1 - low) * i // 255 for i in range(256))})
    middle = low + (high - low) * 0.381966  # not a whole number for any whole bounds a sweep would use
    return [low, high, middle] if middle != low and middle != high else [low, high]


def load_sweep(path: str | os.PathLike, **overrides: Any) -> SweepConfig:
    """Read a sweep config (YAML or JSON by extension); ``overrides`` replace top-level keys (``out``, ...)."""
    from agents.config import read_config_file

    out = overrides.get("out")
    if isinstance(out, str) and not out.strip():  # given, but no folder: not the config's (or the default) folder
        raise ValueError(f"out={out!r}: expected a folder path (an empty one names no folder; '.' is the current "
                         f"folder)")
    path = Path(path)
    data = read_config_file(path, "sweep config", ValueError)
    if isinstance(data, dict):
        data.setdefault("name", path.stem)
        data.update({k: v for k, v in overrides.items() if v is not None})
        data = _absolute_scoring_paths(data, path.parent)
    return SweepConfig.from_dict(data, where=f"sweep config {str(path)!r}")


def _absolute_scoring_paths(data: dict[str, Any], base: Path, strict: bool = True) -> dict[str, Any]:
    """Point-system JSON files named relative to the config (or the current folder) as absolute paths (the trials
    run in folders of their own, on any node).  ``strict``: a file found in neither place is an error (else it is left
    as given, for validation to name)."""
    from agents.config import scoring_path_near

    def fix(value: Any) -> Any:
        return scoring_path_near(value, base, absolute=True, strict=strict)

    data = dict(data)
    if isinstance(data.get("train"), dict) and "scoring" in data["train"]:
        data["train"] = {**data["train"], "scoring": fix(data["train"]["scoring"])}
    if isinstance(data.get("space"), dict) and "scoring" in data["space"]:
        spec = data["space"]["scoring"]
        if isinstance(spec, list):
            spec = [fix(v) for v in spec]
        elif isinstance(spec, dict) and len(spec) == 1 and isinstance(next(iter(spec.values())), list):
            spec = {k: [fix(v) for v in vs] for k, vs in spec.items()}
        data["space"] = {**data["space"], "scoring": spec}
    return data


def param_space(cfg: SweepConfig) -> dict[str, Any]:
    """The Tune search space of a sweep config."""
    from ray import tune

    out = {}
    for key, spec in cfg.space.items():
        grid = _grid_values(spec)
        if grid is not None:
            out[key] = tune.grid_search(list(grid))
            continue
        kind, args = next(iter(spec.items()))
        out[key] = {"choice": tune.choice, "uniform": tune.uniform, "loguniform": tune.loguniform,
                    "randint": tune.randint}[kind](*(args if kind != "choice" else [args]))
    return out


# --------------------------------------------------------------------------- trials


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def trial_params(cfg: SweepConfig, params: dict[str, Any]) -> dict[str, Any]:
    """A trial's varied options, in the config's order, as plain JSON values."""
    return {k: _plain(params[k]) for k in cfg.space if k in params}


def trial_folder(cfg: SweepConfig, params: dict[str, Any]) -> Path:
    """The run folder of the trial with these varied options (the same options give the same folder, in any order:
    the name lists them in the config's order, and a folder of the same options listed in another order -- the same
    hash of the sorted options, after ``space``'s keys were reordered -- is that trial's)."""
    params = trial_params(cfg, params)

    def show(v: Any) -> str:
        if isinstance(v, float):
            v = f"{v:.4g}"
        elif isinstance(v, str) and os.sep in v:
            v = Path(v).stem
        return re.sub(r"[^A-Za-z0-9_.+-]+", "-", str(v))

    slug = ",".join(f"{k}={show(v)}" for k, v in params.items())[:150]
    digest = hashlib.sha1(json.dumps(params, sort_keys=True).encode()).hexdigest()[:8]
    root = Path(cfg.out).resolve() / "trials"
    folder = root / f"{slug}-{digest}"
    if not folder.exists() and root.is_dir():
        same = sorted(p for p in root.glob(f"*-{digest}") if p.is_dir())
        if len(same) == 1:
            return same[0]
    return folder


def _trial_order(params: dict[str, Any]) -> tuple:
    """The sort key listing trials by their varied options in the config's order: numbers by value (seed 2 before
    seed 10), other values by their JSON text, numbers before other values of the same option."""
    def key(v: Any) -> tuple:
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return (0, float(v), "")
        return (1, 0.0, json.dumps(v, sort_keys=True, default=repr))

    return tuple(key(v) for v in params.values())


def _read_done(folder: Path) -> dict[str, Any] | None:
    """A finished trial's record (``sweep_trial.json``), or None when the trial is not done: no file, or one that is
    damaged -- not a JSON object with ``status: done`` and a ``metrics`` object -- so the trial is trained again."""
    from agents.config import read_json

    data = read_json(folder / DONE_FILE)
    if not isinstance(data, dict) or data.get("status") != "done" or not isinstance(data.get("metrics"), dict):
        return None
    return data


def _last_eval(folder: Path) -> float:
    """The last evaluation score of a trial's ``curve.csv`` (NaN without one)."""
    scores = _curve(folder)[1]
    return scores[-1] if scores else math.nan


def _comparable(config: dict[str, Any]) -> dict[str, Any]:
    """A resolved TrainConfig dict without what does not change the training (the display, the folder's spelling)."""
    return {k: v for k, v in config.items() if k not in ("progress", "out")}


def _wanted_config(train_cfg: Any) -> dict[str, Any]:
    """What a finished trial must have been trained with to be reused: the resolved config (:func:`_comparable`) and
    the point table its ``scoring`` names now (a file's path alone would not see the file's values change)."""
    from agents.config import point_table

    resolved = train_cfg.resolved()
    return {**_comparable(resolved.to_dict()), "point_table": point_table(resolved.scoring)}


def _stored_config(folder: Path, record: dict[str, Any]) -> dict[str, Any] | None:
    """The resolved config a trial was trained with -- the ``config`` of its ``sweep_trial.json`` record, or (a record
    written before it had one, or an unfinished trial) its run folder's ``config.json`` -- with the point table the
    run trained for (its ``point_system.json``); None when the config is not readable."""
    from agents.config import ConfigError, TrainConfig, read_json
    from agents.train import POINT_SYSTEM_FILE

    stored = record.get("config")
    try:
        if isinstance(stored, dict):
            config = _comparable(TrainConfig.from_dict(stored).resolved().to_dict())
        elif (folder / "config.json").is_file():
            config = _comparable(TrainConfig.load(folder / "config.json").resolved().to_dict())
        else:
            return None
    except (ConfigError, ValueError):
        return None
    return {**config, "point_table": read_json(folder / POINT_SYSTEM_FILE)}


def _trial_config(cfg: SweepConfig, params: dict[str, Any]) -> Any:
    """The TrainConfig of the trial with these varied options (writing its own run folder, without progress)."""
    from agents.config import TrainConfig

    folder = trial_folder(cfg, params)
    options = {**cfg.train, **trial_params(cfg, params), "out": str(folder), "progress": False}
    return TrainConfig.from_dict(options, where=f"trial {folder.name}")


def _finished_record(folder: Path, wanted: dict[str, Any]) -> dict[str, Any] | None:
    """The trial's ``sweep_trial.json`` record when it finished with exactly the resolved config ``wanted`` (the
    fixed ``train:`` options too, not only the varied ones); None when there is none, or only a damaged or a stale
    one (another config's results)."""
    done = _read_done(folder)
    return done if done is not None and _stored_config(folder, done) == wanted else None


def run_trial(params: dict[str, Any], sweep: dict[str, Any]) -> dict[str, Any]:
    """Train one trial through :func:`agents.train.train` (or reuse its finished run folder); its metrics."""
    cfg = SweepConfig(**sweep)
    folder = trial_folder(cfg, params)
    # random draws of discrete options can give two trials the same options, so the same run folder: the second waits
    # for the first and then reuses its finished run, instead of training the same folder at once
    with _folder_lock(folder):
        return _run_trial(cfg, params, folder)


@contextlib.contextmanager
def _folder_lock(folder: Path) -> typing.Iterator[None]:
    """Hold an exclusive lock on ``folder``'s trial (a lock file beside it) while the block runs (POSIX ``flock``;
    elsewhere no lock)."""
    try:
        import fcntl
    except ImportError:  # Windows: trials of one folder are not serialised
        yield
        return
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _run_trial(cfg: SweepConfig, params: dict[str, Any], folder: Path) -> dict[str, Any]:
    from agents.experiments.marks import recorded_run
    from agents.train import MODEL_FILE, train

    train_cfg = _trial_config(cfg, params)
    wanted = _wanted_config(train_cfg)
    # a finished trial is reused only when it was trained with exactly this trial's resolved config; any other is
    # trained again
    done = _finished_record(folder, wanted)
    if done is not None:
        return {**done["metrics"], "reused": True}
    # a record left here is stale (another config's, or damaged): removed before training, so that a retrain that
    # fails is never reported with the old results
    (folder / DONE_FILE).unlink(missing_ok=True)
    ext = Path(MODEL_FILE[train_cfg.resolved().algo]).suffix
    resume = ((folder / "checkpoints" / f"latest{ext}").is_file()
              and _stored_config(folder, {}) == wanted)  # an unfinished run of this very config continues
    # a trial that never checkpointed, or one trained with other options, starts over
    result = train(train_cfg, resume=resume, overwrite=not resume)
    if result.interrupted:
        raise RuntimeError(f"trial {folder.name} was interrupted at step {result.steps}; run the sweep again to resume")
    row = (result.evaluation or [{}])[0]
    metrics = {k: _plain(row.get(k, math.nan)) for k in ("mean", "ci95", "mean_american", "mean_english", "win_rate")}
    # the run's own training clock (progress.json), as the experiments report it: not the whole train() call with
    # its final evaluation, and every session of a resumed trial, not the last one alone
    seconds = recorded_run(folder, f"sweep trial {folder.name}")["seconds"]
    metrics.update(eval_score=_last_eval(folder), steps=int(result.steps), seconds=float(seconds),
                   worker_peak_rss_mib=_peak_rss_mib())
    record = {"status": "done", "params": trial_params(cfg, params), "metrics": metrics, "resumed": resume,
              "config": train_cfg.resolved().to_dict(), "finished": time.strftime("%Y-%m-%dT%H:%M:%S")}
    # through a temporary file: a stop mid-write never leaves a half-finished marker
    replace_text(folder / DONE_FILE, json.dumps(_json_safe(record), indent=2) + "\n")
    return {**metrics, "reused": False}


def _peak_rss_mib() -> float:
    """Peak resident memory of this (trial worker) process so far, in MiB (NaN where unknown)."""
    try:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    except (ImportError, OSError):
        return math.nan
    return peak / 1024 if sys.platform != "darwin" else peak / 2**20  # kB on Linux, bytes on macOS


def _tune_trainable(params: dict[str, Any], sweep: dict[str, Any]) -> None:
    """Tune function trainable: run the trial and report its metrics once."""
    from ray import tune

    tune.report(_json_safe(run_trial(params, sweep)))


def _json_safe(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    if isinstance(x, float) and math.isnan(x):
        return None
    return _plain(x)


# --------------------------------------------------------------------------- the sweep


@dataclass
class SweepResult:
    """Every trial of a sweep: its parameters, status, run folder and metrics."""

    config: SweepConfig
    trials: list[dict[str, Any]]

    def rows(self) -> list[dict[str, Any]]:
        """One flat row per trial: trial, status, the varied options, the metrics, folder."""
        out = []
        for t in self.trials:
            row = {"trial": Path(t["folder"]).name, "status": t["status"], **t["params"]}
            # a figure a finished trial could not compute is NaN (n/a), also as its sweep_trial.json stores it (null);
            # a metric a trial does not have (a failed trial's) stays None (a blank cell)
            row.update({m: math.nan if m in t["metrics"] and t["metrics"][m] is None and t["status"] == "done"
                        else t["metrics"].get(m) for m in METRICS})
            row["draws"] = t.get("draws", 1)  # random draws that gave this trial's options (listed once)
            row["folder"] = t["folder"]
            out.append(row)
        return out

    def groups(self) -> list[dict[str, Any]]:
        """Trials pooled over ``seed``: per configuration, the count and mean/std over seeds of each metric."""
        keys = [k for k in self.config.space if k != "seed"]
        pooled: dict[tuple, list[dict[str, Any]]] = {}
        for t in self.trials:
            if t["status"] == "done":
                pooled.setdefault(tuple(json.dumps(t["params"].get(k)) for k in keys), []).append(t)
        out = []
        for key, trials in pooled.items():
            row: dict[str, Any] = dict(zip(keys, (json.loads(v) for v in key), strict=True))
            row["trials"] = len(trials)
            for m in RANK_METRICS:  # every figure a sweep may rank by (its `metric`), win_rate too
                vals = [t["metrics"].get(m) for t in trials]
                vals = np.array([v for v in vals if v is not None and not math.isnan(v)], dtype=float)
                row[m] = float(vals.mean()) if vals.size else math.nan
                row[f"{m}_seed_std"] = float(vals.std(ddof=1)) if vals.size > 1 else math.nan
            out.append(row)
        if not out:  # no trial finished: an empty table, not an error
            return out
        metric = self.config.metric
        return sorted(out, key=lambda r: (math.isnan(_num(r.get(metric))), -_num(r.get(metric))))  # NaN last

    def best(self) -> dict[str, Any] | None:
        """The finished trial with the highest ``metric``."""
        done = [r for r in self.rows() if r["status"] == "done" and not math.isnan(_num(r.get(self.config.metric)))]
        return max(done, key=lambda r: _num(r[self.config.metric])) if done else None

    def table(self, fmt: str = "markdown") -> str:
        """Per-trial table then the table pooled over seeds, as Markdown, or the per-trial table as CSV."""
        rows = [{k: v for k, v in r.items() if k != "folder"} for r in self.rows()]
        if fmt == "csv":
            return _csv(self.rows())
        if fmt != "markdown":
            raise ValueError(f"fmt={fmt!r}: expected 'markdown' or 'csv'")
        text = f"## Sweep {self.config.name}: {len(rows)} trials\n\n" + _markdown(rows)
        if "seed" in self.config.space:
            text += f"\n## Means over seeds (ranked by {self.config.metric})\n\n" + _markdown(self.groups())
        best = self.best()
        if best is not None:
            text += f"\nBest trial by {self.config.metric}: {best['trial']} ({_cell(best[self.config.metric])})\n"
        return text

    def save(self, plots: bool = True) -> list[str]:
        """Write summary.md/.csv/.json (and curves.png, final.png) in the sweep folder; the paths."""
        out = Path(self.config.out)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for name, text in (("summary.md", self.table("markdown")), ("summary.csv", self.table("csv")),
                           ("summary.json", json.dumps(_json_safe({"config": self.config.to_dict(),
                                                                    "trials": self.rows(),
                                                                    "groups": self.groups()}), indent=2) + "\n")):
            (out / name).write_text(text)
            written.append(str(out / name))
        if plots:
            written += self.plot()
        return written

    def plot(self) -> list[str]:
        """``curves.png`` (evaluation score during training, per trial) and ``final.png`` (the ranking ``metric`` of each
        trial).  With ``metric`` mean_american or mean_english the curves are the evaluations under that system (every
        training evaluation scores both), so trials trained for different systems are drawn in the same points."""
        from agents.evaluation import figure_with_legend_below, legend_below, legend_label, pyplot

        plt = pyplot("sweep plots")
        out = Path(self.config.out)
        keys = [k for k in self.config.space if k != "seed"]
        labels = {json.dumps([t["params"].get(k) for k in keys]): ", ".join(
            f"{k}={_short(t['params'].get(k))}" for k in keys) or "all" for t in self.trials}
        colours = {lab: plt.cm.tab10(i % 10) for i, lab in enumerate(labels)}
        curves = []  # (config key, steps, scores) of every trial with a curve
        for t in self.trials:
            steps, scores = _curve(Path(t["folder"]), CURVE_COLUMN.get(self.config.metric, "eval_score"))
            if steps:
                curves.append((json.dumps([t["params"].get(k) for k in keys]), steps, scores))
        shown = list(dict.fromkeys(key for key, _, _ in curves))  # each config once in the legend
        fig, ax = figure_with_legend_below((8, 4.5), [labels[key] for key in shown])
        seen = set()
        for key, steps, scores in curves:
            ax.plot(steps, scores, color=colours[key], alpha=0.8, marker=".",
                    label=legend_label(labels[key]) if key not in seen else None)
            seen.add(key)
        ax.set_xlabel("training steps")
        ax.set_ylabel(CURVE_LABEL.get(self.config.metric, "evaluation score (each trial's point system)"))
        ax.set_title(f"Sweep {self.config.name}: evaluation during training")
        if shown:  # below the axes, over no curve
            legend_below(fig, ax)
        paths = [str(out / "curves.png")]
        fig.savefig(paths[-1], dpi=100)
        plt.close(fig)

        names = list(labels)  # one row a configuration, its label beside it (tilted labels ran into each other)
        fig, ax = plt.subplots(figsize=(8, 1.6 + 0.32 * max(1, len(names))), layout="constrained")
        for y, key in enumerate(names):
            vals = [_num(t["metrics"].get(self.config.metric)) for t in self.trials
                    if json.dumps([t["params"].get(k) for k in keys]) == key and t["status"] == "done"]
            vals = [v for v in vals if not math.isnan(v)]
            if vals:
                ax.barh(y, float(np.mean(vals)), color=colours[key], alpha=0.6)
                ax.scatter(vals, [y] * len(vals), color="black", s=12, zorder=3)
        ax.set_yticks(range(len(names)), [labels[k] for k in names], fontsize=8)
        ax.set_ylim(len(names) - 0.5, -0.5)  # the first configuration on top, as in summary.md
        ax.set_xlabel(f"{self.config.metric} (dots: trials)")
        ax.set_title(f"Sweep {self.config.name}: final scores")
        paths.append(str(out / "final.png"))
        fig.savefig(paths[-1], dpi=100)
        plt.close(fig)
        return paths


def _num(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan


def _short(v: Any) -> str:
    return f"{v:.3g}" if isinstance(v, float) else (Path(v).stem if isinstance(v, str) and os.sep in v else str(v))


#: the curve.csv column curves.png draws for a ranking metric (the others: eval_score, in each trial's own system)
CURVE_COLUMN = {"mean_american": "eval_american", "mean_english": "eval_english"}
CURVE_LABEL = {"mean_american": "evaluation score, American", "mean_english": "evaluation score, English"}


def _curve(folder: Path, column: str = "eval_score") -> tuple[list[float], list[float]]:
    """The steps and ``column`` values of the rows of a trial's ``curve.csv`` that have one; a ValueError naming the
    file and row for a damaged one."""
    steps, scores = [], []
    path = folder / "curve.csv"
    if path.is_file():
        with path.open() as fh:
            for n, row in enumerate(csv.DictReader(fh), start=1):
                if row.get(column):
                    try:
                        step, score = float(row["step"]), float(row[column])
                    except (KeyError, TypeError, ValueError):
                        raise ValueError(
                            f"{str(path)!r}: row {n}: step={row.get('step')!r}, {column}={row[column]!r}: expected "
                            f"numbers under the columns step and {column}, as a training run writes them") from None
                    steps.append(step)
                    scores.append(score)
    return steps, scores


def _cell(v: Any) -> str:
    """A Markdown cell: empty where the row has no value (an option a trial does not set, the metrics of a trial that
    failed), ``n/a`` for a figure that cannot be computed (NaN: the spread of one seed), as the evaluation summaries
    print it."""
    if v is None:
        return ""
    if isinstance(v, float):
        return "n/a" if math.isnan(v) else f"{v:.4g}"
    return str(v)


def _markdown(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "(no trials)\n"
    cols = list(dict.fromkeys(k for r in rows for k in r))
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(_cell(r.get(c)) for c in cols) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _csv(rows: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    cols = list(dict.fromkeys(k for r in rows for k in r))
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    w.writerows([{k: ("" if v is None else v) for k, v in r.items()} for r in rows])
    return buf.getvalue()


def check_trial_cpus(cpus_per_trial: float, cpus: int | None, *, embedded: bool,
                     session_cpus: float | None = None) -> None:
    """Refuse a ``cpus_per_trial`` Ray cannot ever grant (its trials would wait forever).  ``session_cpus``: the CPUs
    of the Ray session already open in this process (``ray.cluster_resources()["CPU"]``), which the sweep then uses
    whatever ``cpus`` and ``embedded`` say.  Otherwise an embedded Ray has ``cpus`` (``--cpus``) or, when None, the
    CPUs :func:`agents.distributed.embedded_cpus` gives it (those this process may use, within a container's
    quota); a cluster to start
    (``embedded=False``: an address or ``$RAY_ADDRESS``) keeps its own resources and is not checked."""
    from agents.distributed import embedded_cpus

    if session_cpus is not None:
        have: float = session_cpus
        what = f"the {have:g} CPUs of the Ray session already open in this process"
        fix = "lower it, or call ray.shutdown() first so that the sweep starts its own Ray"
    elif not embedded:
        return
    else:
        have = cpus if cpus is not None else embedded_cpus()
        what = (f"--cpus {cpus}, all the embedded Ray has" if cpus is not None
                else f"the {have} CPUs this process may use (--cpus not given), all the embedded Ray has")
        fix = "lower it, raise --cpus, or pass --address of a cluster with larger nodes"
    if cpus_per_trial > have:
        raise ValueError(f"cpus_per_trial={cpus_per_trial:g} is more than {what}: no trial could ever start; expected "
                         f"cpus_per_trial <= {have:g} ({fix})")


def _is_sweep_record(data: Any) -> bool:
    """Whether ``data`` (a folder's :data:`SWEEP_FILE`) is the record a sweep writes: a config mapping of the sweep's
    own keys, with its name, folder, training options and space."""
    return isinstance(data, dict) and {"name", "out", "train", "space"} <= set(data) <= set(
        SweepConfig.__dataclass_fields__)


def check_sweep_root(out: str | os.PathLike, *, name: str = "out") -> None:
    """Raise ValueError unless the sweep folder ``out`` may take a sweep's outputs (its summary, plots, ``trials/`` and
    ``tune/``, which replace what is there): it is new, empty, or a sweep's own -- it holds the :data:`SWEEP_FILE` a
    sweep writes before any trial (a sweep run into it again reuses its finished trials).  ``name``: what the
    message calls the folder (``"--out"`` for the option)."""
    from agents.config import read_json

    root = Path(out)
    if not root.is_dir():
        return  # new (a file is named by check_out_dir)
    try:  # less the temporary file sweep.json is written through (left by a stop mid-write)
        entries = sorted(e for e in os.listdir(root) if e != SWEEP_FILE + ".tmp")
    except OSError as exc:
        raise ValueError(f"{_named(name, os.fspath(out))}: cannot list it ({exc.strerror or exc})") from None
    if not entries or _is_sweep_record(read_json(root / SWEEP_FILE)):
        return
    others = [e + ("/" if (root / e).is_dir() else "") for e in entries if e != SWEEP_FILE] or [SWEEP_FILE]
    shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
    whose = (f"its {SWEEP_FILE} is not a sweep's record" if (root / SWEEP_FILE).exists()
             else f"no {SWEEP_FILE} of a sweep")
    raise ValueError(f"{_named(name, os.fspath(out))} is not a sweep's folder ({whose}; it holds {shown}): expected "
                     f"a new or empty folder, or the folder of an earlier sweep (its summary is replaced, its finished "
                     f"trials reused); choose another folder")


def _named(name: str, value: str) -> str:
    """``--out 'x'`` for the option, ``out='x'`` for the config key or parameter."""
    return f"{name} {value!r}" if name.startswith("-") else f"{name}={value!r}"


def check_trainers_installed(config: SweepConfig) -> None:
    """Raise :class:`agents.config.MissingExtraError` if a trainer that the sweep's trials use (the fixed ``algo``,
    or every value of a varied one) cannot be imported here.  Before, a sweep on a machine without torch started
    Ray and reported every trial as failed.  :func:`run_sweep` calls it for an embedded Ray only: the workers of a
    cluster may have packages that the driver lacks."""
    from agents.config import TrainConfig, check_trainer_installed

    algos = _check_values(config.space["algo"]) if "algo" in config.space else [config.train.get("algo", TrainConfig.algo)]
    for algo in dict.fromkeys(algos):
        check_trainer_installed(algo)


def run_sweep(
    config: SweepConfig | dict[str, Any] | str | os.PathLike,
    *,
    address: str | None = None,
    cpus: int | None = None,
    verbose: int = 1,
    plots: bool = True,
) -> SweepResult:
    """Run (or resume) a sweep on Ray Tune and write its summary; every trial and its metrics.

    ``config`` is a :class:`SweepConfig`, a mapping or a YAML/JSON path.  Ray: the
    open session, else ``address``/``$RAY_ADDRESS``, else an embedded Ray with ``cpus`` CPUs.
    Finished trials (``sweep_trial.json`` of the trial's own config in their run folder) are not trained again.
    Point-system files named relative to the current folder (or, for a path, to the config file) are made absolute:
    Tune runs each trial in a folder of its own.
    """
    if isinstance(config, (str, os.PathLike)):
        config = load_sweep(config)
    elif isinstance(config, dict):
        config = SweepConfig.from_dict(_absolute_scoring_paths(config, Path.cwd(), strict=False))
    elif isinstance(config, SweepConfig):
        config.validate()
        fixed = _absolute_scoring_paths({"train": config.train, "space": config.space}, Path.cwd(), strict=False)
        config.train, config.space = fixed["train"], fixed["space"]
    else:
        raise TypeError(f"config={config!r}: expected a SweepConfig, a mapping or a YAML/JSON path")
    from agents.config import ConfigError
    from agents.distributed import ensure_ray, import_ray
    from agents.evaluation import check_out_dir

    check_out_dir(config.out, name="out")  # an out that is a file is named before Ray starts
    check_sweep_root(config.out, name="out")  # and one holding what no sweep wrote (its files would be replaced)

    import_ray("pokersquares sweep")
    try:
        from ray import tune
        from ray.tune.search import BasicVariantGenerator
    except ImportError as exc:
        raise ImportError(f"pokersquares sweep needs Ray Tune ({exc}): pip install \"pokersquares_env[distributed]\"") from None
    import ray

    session = ray.is_initialized()  # e.g. a notebook that evaluated on Ray first: the sweep runs in that session
    embedded = not (address or os.environ.get("RAY_ADDRESS"))
    check_trial_cpus(config.cpus_per_trial, cpus, embedded=embedded,
                     session_cpus=float(ray.cluster_resources().get("CPU", 0)) if session else None)
    if embedded and not session:
        check_trainers_installed(config)  # the trials run here: a missing torch is said once, before Ray starts
    if plots:  # drawn here once every trial has trained: a missing matplotlib is said now, not after hours of trials
        from agents.evaluation import pyplot

        try:
            pyplot("sweep plots")
        except ImportError as exc:
            raise ImportError(f"{exc} (or plots=False, --no-plots on the command line, for the summaries alone)") from None
    ensure_ray(address, cpus, what="pokersquares sweep")
    from agents.evaluation import prepare_out_dir

    out = Path(prepare_out_dir(Path(config.out).resolve(), name="out"))  # ValueError naming an out that is a file
    config.out = str(out)
    # through a temporary file: a stop mid-write leaves the earlier sweep.json, and the folder the sweep's own
    replace_text(out / SWEEP_FILE, json.dumps(config.to_dict(), indent=2) + "\n")
    trainable = tune.with_resources(tune.with_parameters(_tune_trainable, sweep=config.to_dict()),
                                    {"cpu": config.cpus_per_trial})
    tuner = tune.Tuner(
        trainable,
        param_space=param_space(config),
        tune_config=tune.TuneConfig(
            num_samples=config.samples,
            max_concurrent_trials=config.max_concurrent,
            # a sample's random draws are shared by all its grid values: every seed of a sample trains the same draws
            # (the means over seeds pool like with like), and a grid value added later keeps the draws (and folders)
            search_alg=BasicVariantGenerator(random_state=config.search_seed, constant_grid_search=True),
            reuse_actors=True,
            trial_name_creator=lambda trial: trial_folder(config, trial.config).name,
            trial_dirname_creator=lambda trial: trial_folder(config, trial.config).name[-60:],
        ),
        run_config=tune.RunConfig(name=config.name, storage_path=str(out / "tune"), verbose=verbose,
                                  failure_config=tune.FailureConfig(max_failures=1)),
    )
    sigint = signal.getsignal(signal.SIGINT)
    try:
        grid = tuner.fit()
    finally:  # Tune installs its own Ctrl-C handler and leaves it behind: give the caller's back
        if sigint is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, sigint)
    trials = []
    for res in grid:
        params = trial_params(config, res.config)
        folder = trial_folder(config, params)
        try:  # a record counts only when it holds this trial's results (not another config's, left behind)
            done = _finished_record(folder, _wanted_config(_trial_config(config, params)))
        except (ConfigError, ValueError):
            done = None
        status = "done" if done is not None else "error"
        metrics = done["metrics"] if done is not None else {}
        trial = {"params": params, "folder": str(folder), "status": status, "metrics": metrics,
                 "reused": bool((res.metrics or {}).get("reused", False))}
        if res.error is not None:
            trial["error"] = str(res.error).strip().splitlines()[-1][:300]
        trials.append(trial)
    # two random draws with the same options are one trial (one run folder, trained once): listed once, so that the
    # tables and the means over seeds do not count it twice
    unique: dict[str, dict[str, Any]] = {}
    for trial in trials:
        kept = unique.setdefault(trial["folder"], trial)
        if kept is not trial:
            kept["draws"] = kept.get("draws", 1) + 1
            # one draw of the group trained the folder in this run unless every draw reused it (which draw waited
            # for the lock is chance): the folder counts as reused only then
            kept["reused"] = kept["reused"] and trial["reused"]
    repeats = len(trials) - len(unique)
    if repeats:
        print(f"sweep: {repeats} random draw(s) repeated the options of another trial; each such trial is listed and "
              f"counted once (its run folder trained once)", file=sys.stderr)
    trials = list(unique.values())
    trials.sort(key=lambda t: _trial_order(t["params"]))  # whatever order Ray Tune returned them in
    result = SweepResult(config, trials)
    result.save(plots=plots)
    return result


# --------------------------------------------------------------------------- CLI


def add_arguments(parser) -> None:
    """The ``pokersquares sweep`` options."""
    from pokersquares_env.cli import int_at_least, ray_address

    parser.add_argument("config", metavar="CONFIG", help="sweep config, YAML or JSON (train, space, samples, ...)")
    parser.add_argument("--out", default=None,
                        help="sweep folder: new, empty or an earlier sweep's (default: the config's out, or "
                             "runs/sweeps/NAME)")
    parser.add_argument("--address", default=None, type=ray_address,
                        help="address of a running Ray cluster (default: $RAY_ADDRESS, else an embedded local Ray)")
    parser.add_argument("--cpus", type=int_at_least(1), default=None,
                        help="CPUs of the embedded local Ray (default: all the CPUs this process may use)")
    parser.add_argument("--quiet", action="store_true",
                        help="no Tune progress tables (Tune still prints its few start-up lines and where the results "
                             "are)")
    parser.add_argument("--no-plots", action="store_true", help="skip curves.png and final.png")


def run(args) -> int:
    """Run ``pokersquares sweep``: 0 when every trial finished, 1 when some failed, 2 on a bad config."""
    try:
        if args.out is not None:  # named as the option it came from (the config's own out is named `out`)
            from agents.evaluation import check_out_dir

            check_out_dir(args.out, name="--out")
            check_sweep_root(args.out, name="--out")
        config = load_sweep(args.config, out=args.out)
        if args.cpus is not None and args.cpus < 1:
            raise ValueError(f"--cpus {args.cpus}: expected a positive integer")
        result = run_sweep(config, address=args.address, cpus=args.cpus, verbose=0 if args.quiet else 1,
                           plots=not args.no_plots)
    except (ValueError, TypeError, ImportError, ConnectionError) as exc:
        print(f"pokersquares sweep: {exc}", file=sys.stderr)
        return 2
    print(result.table("markdown"), end="")
    reused = sum(t["reused"] for t in result.trials)
    failed = [t for t in result.trials if t["status"] != "done"]
    written = "summary.md, summary.csv, summary.json" + ("" if args.no_plots else ", curves.png, final.png")
    print(f"\n{len(result.trials)} trials ({reused} reused from finished run folders, {len(failed)} failed); "
          f"{written} in {result.config.out}")
    for t in failed:
        print(f"failed: {Path(t['folder']).name}: {t.get('error', 'no sweep_trial.json')}", file=sys.stderr)
    return 1 if failed else 0
