"""Training configuration: one documented field per option, validated before any training starts.

``TrainConfig`` is the single description of a training run, shared by the three
trainers (``maskable-ppo``, ``dqn`` and ``fast-ppo``) in the CleanRL ``Args``
style.  Options left as ``None`` take the chosen algorithm's default when the
config is resolved (:meth:`TrainConfig.resolved`); the resolved config is what a
run folder stores as ``config.json``, so a run can be repeated or resumed exactly.
Configs round-trip through JSON and YAML (:meth:`TrainConfig.save`, :meth:`TrainConfig.load`).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import os
import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from pokersquares_env._files import object_without_repeats, replace_text
from pokersquares_env.cli import EXTRAS, int_between

__all__ = ["ALGOS", "TrainConfig", "ConfigError", "TrainingDiverged", "check_finite", "diverged", "ALGO_DEFAULTS",
           "ALGO_OPTIONS", "UnusedOptionWarning", "MAX_SEED", "MissingExtraError", "PACKAGES", "TRAINER_MODULES",
           "check_dqn_budget", "check_installed", "check_trainer_installed", "dqn_min_timesteps", "installed",
           "read_json", "scoring_path_near", "train_seed_arg", "unused_options"]

#: training algorithms: name -> one-line description
ALGOS: dict[str, str] = {
    "maskable-ppo": "MaskablePPO from sb3-contrib on PokerSquares-v0 (masks at training and inference)",
    "dqn": "masked double DQN (single file, torch): argmax and bootstrap targets over legal cells only",
    "fast-ppo": "single-file CleanRL-style masked PPO stepping the native vector env",
}

NETS = ("mlp", "lines")
VECTORIZATION = ("native", "sync")
ANNEAL_BY = ("first", "steps")


class ConfigError(ValueError):
    """A training option has a bad value (the message names the option, the value and what was expected)."""


class TrainingDiverged(RuntimeError):
    """A run's weights became NaN or infinite (:func:`check_finite`): it stops there, before it checkpoints or saves
    them, so the run folder keeps its last good checkpoint (the message names the step and the options to lower)."""


def diverged(cfg: "TrainConfig", step: int, what: str) -> TrainingDiverged:
    """The :class:`TrainingDiverged` of a run whose ``what`` (weights, scores) went non-finite at ``step``."""
    return TrainingDiverged(
        f"{cfg.algo} diverged at step {step:,}: {what} hold NaN or infinity (learning_rate={cfg.learning_rate:g}, "
        f"max_grad_norm={cfg.max_grad_norm:g}): expected finite values; lower --learning-rate (or --max-grad-norm) "
        f"and train again (nothing of this update was saved: the run folder keeps what it held before it, its last "
        f"checkpoint if it took one)")


def check_finite(model: Any, cfg: "TrainConfig", step: int, probe: Any = None) -> None:
    """Raise :class:`TrainingDiverged` unless every parameter of the torch ``model`` is finite and so are its outputs
    on the observations ``probe`` (weights finite but so large that the scores overflow): checked after each update,
    before the weights are played, logged or checkpointed.  A run whose weights went NaN would otherwise fail later
    in torch's sampling, or play on silently."""
    import torch

    for name, param in model.named_parameters():
        if not bool(torch.isfinite(param).all()):
            raise diverged(cfg, step, f"the weights {name!r} after an update")
    if probe is not None:
        with torch.no_grad():
            outputs = model(probe)
        for output in outputs if isinstance(outputs, (tuple, list)) else (outputs,):
            if not bool(torch.isfinite(output).all()):
                raise diverged(cfg, step, "the network's outputs after an update")


class UnusedOptionWarning(UserWarning):
    """An option given for a training run that its algorithm does not use (:func:`unused_options`)."""


class MissingExtraError(ConfigError, ImportError):
    """A package of an optional extra that a job needs is not installed (:func:`check_installed`): raised before the
    job writes anything, naming the package and the ``pip install`` that adds it.  A :class:`ConfigError` (the command
    line says it in one line, exit status 2) and an ``ImportError`` (what importing the package would raise)."""


#: the pip name of each optional module the jobs check for (:data:`pokersquares_env.cli.EXTRAS`: the extra that
#: installs it)
PACKAGES: dict[str, str] = {"torch": "torch", "stable_baselines3": "stable-baselines3", "sb3_contrib": "sb3-contrib",
                            "numba": "numba"}

#: the modules each trainer (and the agent that plays its model) imports: all in the ``train`` extra
TRAINER_MODULES: dict[str, tuple[str, ...]] = {
    "maskable-ppo": ("torch", "stable_baselines3", "sb3_contrib"),
    "dqn": ("torch",),
    "fast-ppo": ("torch",),
}


def installed(module: str) -> bool:
    """Whether the top-level ``module`` can be imported, as far as finding it tells (it is not imported)."""
    import importlib.util
    import sys

    if module in sys.modules:  # imported already, or None: an import of it fails
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a finder refusing it, a broken entry
        return False


def check_installed(what: str, modules: tuple[str, ...] | list[str]) -> None:
    """Raise :class:`MissingExtraError` if one of ``modules`` (top-level names of :data:`PACKAGES`) is not installed:
    ``'<what> needs sb3-contrib: pip install "pokersquares_env[train]"'``.  Called before a job writes anything, so a
    missing extra leaves no half-made folder behind."""
    missing = [m for m in modules if not installed(m)]
    if not missing:
        return
    extras = ",".join(dict.fromkeys(EXTRAS[m] for m in missing))
    error = MissingExtraError(f"{what} needs {', '.join(PACKAGES.get(m, m) for m in missing)}: "
                              f'pip install "pokersquares_env[{extras}]"')
    error.name = missing[0]
    raise error


def check_trainer_installed(algo: str) -> None:
    """Raise :class:`MissingExtraError` if the trainer of ``algo`` cannot be imported (:data:`TRAINER_MODULES`)."""
    check_installed(algo, TRAINER_MODULES.get(algo, ()))


#: the largest training seed: SB3 seeds NumPy's legacy generator, which takes 32 bits
MAX_SEED = 2**32 - 1


#: the ``argparse`` type of every training seed option (``--seed`` of train and demo, the experiments' ``--seed`` and
#: ``--seeds``): an integer from 0 to :data:`MAX_SEED` (what :class:`TrainConfig` takes), so a bad seed is a usage
#: error (exit 2) naming the value, before any work starts -- one check and one message for both bounds
train_seed_arg = int_between(0, MAX_SEED)
train_seed_arg.__name__ = "train_seed_arg"


#: per-algorithm defaults for the options left as ``None``
ALGO_DEFAULTS: dict[str, dict[str, Any]] = {
    "maskable-ppo": dict(
        net="mlp", hidden=[256, 256], learning_rate=3e-4, num_envs=8, num_steps=256, minibatch_size=256,
        update_epochs=4, ent_coef=0.01, gamma=1.0, max_grad_norm=0.5,
    ),
    "dqn": dict(
        net="lines", hidden=[64, 64], learning_rate=5e-4, num_envs=64, num_steps=1, minibatch_size=256,
        update_epochs=1, ent_coef=0.0, gamma=1.0, max_grad_norm=10.0,
    ),
    "fast-ppo": dict(
        net="lines", hidden=[64, 64], learning_rate=2e-3, num_envs=256, num_steps=50, minibatch_size=1600,
        update_epochs=4, ent_coef=0.001, gamma=1.0, max_grad_norm=0.5,
    ),
}

#: defaults that depend on the network as well: maskable-ppo's MLP default ([256, 256]) would make a slow lines net, so
#: ``--net lines`` alone gets fast-ppo's lines sizes, and fast-ppo's learning rate: at SB3's 3e-4 the lines net had
#: 44.3 and 36.0 after 1M steps (seeds 0, 1), at 2e-3 89.2 and 70.6 (docs/training.md, "Which hyperparameter held
#: MaskablePPO back"); the MLP learns nothing in 100k steps at 3e-4 or 1e-3, so its default stays SB3's
NET_DEFAULTS: dict[tuple[str, str], dict[str, Any]] = {("maskable-ppo", "lines"): dict(hidden=[64, 64],
                                                                                      learning_rate=2e-3)}


#: the options only some algorithms use: option -> the algorithms that use it (every other option is used by all)
ALGO_OPTIONS: dict[str, tuple[str, ...]] = {
    **{name: ("dqn",) for name in ("buffer_size", "learning_starts", "target_tau", "epsilon_start", "epsilon_end",
                                   "exploration_fraction")},
    **{name: ("maskable-ppo", "fast-ppo") for name in ("gae_lambda", "clip_coef", "vf_coef", "ent_coef")},
    "anneal_by": ("fast-ppo", "dqn"),  # SB3 anneals maskable-ppo's learning rate over its steps
}


def _dqn_iterations(cfg: "TrainConfig") -> tuple[int, int]:
    """A dqn config's ``num_envs`` and ``num_steps``, its own or the algorithm's defaults."""
    n = cfg.num_envs if cfg.num_envs is not None else ALGO_DEFAULTS["dqn"]["num_envs"]
    every = cfg.num_steps if cfg.num_steps is not None else ALGO_DEFAULTS["dqn"]["num_steps"]
    return n, every


def dqn_min_timesteps(cfg: "TrainConfig") -> int:
    """The fewest steps a dqn run of ``cfg`` (validated) must take to train, in whole iterations of ``num_envs``
    steps: through the first iteration that trains once ``learning_starts`` steps are taken (what
    :func:`check_dqn_budget` asks of ``timesteps``).  ``agents.dqn`` trains after its iteration k (1, 2, ...;
    k * num_envs steps taken) when k * num_envs >= learning_starts and k % num_steps == 0."""
    n, every = _dqn_iterations(cfg)
    return -(-max(1, -(-cfg.learning_starts // n)) // every) * every * n


def check_dqn_budget(cfg: "TrainConfig", advice: str | None = None) -> None:
    """Refuse a dqn config (validated) whose run ends before ``learning_starts`` steps, or before the first iteration
    that trains once they are taken (:func:`dqn_min_timesteps`): it would take no gradient step.
    Checked by :func:`agents.train.train` before anything is written (not by :meth:`TrainConfig.validate`, so that a
    config validated for something else than training it -- an experiment's, a sweep's -- is not refused).
    ``advice`` replaces the message's closing advice (the options of ``pokersquares train``), for a command with
    other options."""
    if cfg.algo != "dqn":
        return
    n, every = _dqn_iterations(cfg)
    steps = max(1, -(-cfg.timesteps // n)) * n  # whole iterations of num_envs (agents.train.planned_steps)
    if cfg.learning_starts > steps:
        raise ConfigError(
            f"learning_starts={cfg.learning_starts}: dqn learns only once learning_starts steps are taken, and the run "
            f"takes {steps:,} (timesteps={cfg.timesteps}), so it would train nothing: expected learning_starts at most "
            f"the steps of the run ({advice or 'lower --learning-starts or raise --timesteps'})")
    least = dqn_min_timesteps(cfg)  # the first training iteration must come within the run's iterations
    if least > steps:
        raise ConfigError(
            f"num_steps={every}: dqn trains every num_steps iterations of num_envs={n} steps once learning_starts="
            f"{cfg.learning_starts} steps are taken, first after {least:,} steps, and the run takes {steps:,} "
            f"(timesteps={cfg.timesteps}), so it would train nothing: expected a run of at least {least:,} steps "
            f"({advice or 'lower --num-steps or --learning-starts, or raise --timesteps'})")


def unused_options(algo: str, given: dict[str, Any]) -> list[str]:
    """One line for each option in ``given`` that ``algo`` does not use (:data:`ALGO_OPTIONS`) and that is set to
    something other than :class:`TrainConfig`'s default (or the algorithm's own default): the run ignores it."""
    defaults = TrainConfig().to_dict()
    lines = []
    for name, value in given.items():
        users = ALGO_OPTIONS.get(name)
        if users is None or algo in users or value == defaults.get(name) \
                or value == ALGO_DEFAULTS.get(algo, {}).get(name, defaults.get(name)):
            continue
        lines.append(f"{name}={value!r} is a {' and '.join(users)} option; {algo} does not use it")
    return lines


@dataclass
class TrainConfig:
    """Every option of a training run (``pokersquares train --help`` lists the same ones)."""

    # --- what to train --------------------------------------------------------
    algo: str = "maskable-ppo"
    """training algorithm: 'maskable-ppo', 'dqn' or 'fast-ppo'"""
    scoring: str = "american"
    """point system used as reward: 'american', 'english' or a JSON file of category -> points"""
    jokers: int = 0
    """wild jokers in the deck (0, 1 or 2)"""
    placement: str = "free"
    """placement rule: 'free' or 'adjacent'"""
    first_cell: Any = None
    """cell the first card must go to: None, 'center', 'top-left', a cell index 0-24 or coordinates such as 'c3'"""
    reward_mode: str = "line"
    """'line' (a line's points when it completes) or 'terminal' (the whole score at the end)"""
    reward_scale: Any = "normalized"
    """reward multiplier, or 'normalized' (divide by the expected random-play score of the system)"""
    shaping: str = "none"
    """potential-based reward shaping: 'none', 'heuristic' (hand-set line values) or 'tables' (self-play line
    values, trained on first use and cached); see agents.shaping"""
    timesteps: int = 100_000
    """total environment steps to train for: card placements, and for fast-ppo and dqn also the step that resets each
    finished game (their vector env resets it on the next step, so a game takes 26 of their steps; maskable-ppo's SB3
    adapter resets in the game's last step, 25)"""
    seed: int = 0
    """seed of the environments, the network initialisation and the sampling"""
    out: str = "runs/run"
    """run folder: model, config.json, TensorBoard logs, checkpoints, curve.csv, evaluation"""

    # --- network and optimiser (None: the algorithm's default) ------------------
    net: str | None = None
    """network: 'mlp' (flat observation) or 'lines' (row/column-structured, shared across cells; maskable-ppo: as an SB3
    policy, hidden 64 64 unless given)"""
    hidden: list[int] | None = None
    """hidden layer sizes"""
    learning_rate: float | None = None
    """Adam learning rate"""
    anneal_lr: bool = True
    """decay the learning rate linearly over the run: fast-ppo and dqn to 0.02 x learning_rate (never below), maskable-ppo (SB3) to about 0"""
    num_envs: int | None = None
    """parallel games"""
    num_steps: int | None = None
    """PPO: steps per game per rollout; DQN: vector steps (each num_envs environment steps) between training rounds"""
    minibatch_size: int | None = None
    """samples per gradient step"""
    update_epochs: int | None = None
    """PPO: passes over each rollout (fast-ppo: whole minibatches only, so each pass leaves out the valid samples past
    the last whole minibatch, a different part each pass; maskable-ppo: every sample); DQN: gradient steps per
    training round"""
    gamma: float | None = None
    """discount factor (1.0 suits this fixed-length, 25-step game)"""
    gae_lambda: float = 0.95
    """PPO: GAE lambda"""
    clip_coef: float = 0.2
    """PPO: surrogate clipping coefficient"""
    ent_coef: float | None = None
    """PPO: entropy bonus coefficient"""
    vf_coef: float = 0.5
    """PPO: value loss coefficient"""
    max_grad_norm: float | None = None
    """gradient clipping norm (the global norm of all gradients)"""

    # --- DQN only ---------------------------------------------------------------
    buffer_size: int = 200_000
    """DQN: replay buffer capacity (transitions)"""
    learning_starts: int = 5_000
    """DQN: environment steps before learning starts"""
    target_tau: float = 0.01
    """DQN: soft target-network update rate per gradient step"""
    epsilon_start: float = 1.0
    """DQN: initial exploration rate (random legal cell)"""
    epsilon_end: float = 0.02
    """DQN: final exploration rate"""
    exploration_fraction: float = 0.3
    """DQN: fraction of the run over which epsilon decays linearly"""

    # --- evaluation, logging, checkpoints ----------------------------------------
    eval_every: int = 50_000
    """evaluate the greedy policy every this many steps (0: never during training)"""
    eval_games: int = 200
    """games (fixed seeded deals) per evaluation during training"""
    eval_seed: int = 10_000
    """seed of the evaluation deals"""
    checkpoint_every: int = 100_000
    """save a checkpoint every this many steps (0: never)"""
    final_eval_games: int = 1_000
    """games of the final evaluation through the harness on common deals (0: skip)"""
    final_eval_seed: int = 0
    """seed of the final evaluation's common deals"""
    vectorization: str = "native"
    """'native' (the batched vector env; for SB3 through pokersquares_env.sb3) or 'sync' (single envs side by side)"""
    time_limit: float = 0.0
    """stop training after this many wall-clock seconds (0: no limit); the model is saved and evaluated as usual"""
    anneal_by: str = "first"
    """what fast-ppo's and dqn's learning rate anneals over: 'first' (whichever of the step budget and time_limit runs out first) or 'steps' (the step budget alone; time_limit then only stops the run, and a seeded run that its step budget ends is reproducible)"""
    torch_threads: int = 1
    """torch CPU threads (keep small on shared machines)"""
    progress: bool = True
    """show a tqdm progress bar"""

    # ------------------------------------------------------------------ helpers
    def rules_kwargs(self) -> dict[str, Any]:
        """The environment keyword arguments of the game rules and reward."""
        return dict(
            scoring=self.scoring, jokers=self.jokers, placement=self.placement, first_cell=self.first_cell,
            reward_mode=self.reward_mode, reward_scale=self.reward_scale,
        )

    def resolved(self) -> "TrainConfig":
        """A validated copy with every ``None`` option set to the algorithm's default, and ``first_cell`` in one
        spelling (a cell index or None: ``'center'``, ``'c3'`` and ``12`` are the same rule)."""
        self.validate_algo()
        defaults = {**ALGO_DEFAULTS[self.algo],
                    **NET_DEFAULTS.get((self.algo, self.net if isinstance(self.net, str) else None), {})}
        cfg = dataclasses.replace(self, hidden=list(self.hidden) if isinstance(self.hidden, (list, tuple)) else self.hidden)
        for name, value in defaults.items():
            if getattr(cfg, name) is None:
                setattr(cfg, name, list(value) if isinstance(value, list) else value)
        cfg.validate()
        from pokersquares_env.core import Rules

        cfg.first_cell = Rules(jokers=cfg.jokers, placement=cfg.placement, first_cell=cfg.first_cell).first_cell
        return cfg

    def validate_algo(self) -> None:
        """Check the algorithm name."""
        if not isinstance(self.algo, str) or self.algo not in ALGOS:
            raise ConfigError(f"algo={self.algo!r}: expected one of {sorted(ALGOS)}")

    def validate(self) -> None:
        """Raise :class:`ConfigError` naming the first bad option (call before any training starts)."""
        self.validate_algo()
        _check_scoring(self.scoring)
        if self.jokers not in (0, 1, 2) or isinstance(self.jokers, bool):
            raise ConfigError(f"jokers={self.jokers!r}: expected 0, 1 or 2")
        if self.placement not in ("free", "adjacent"):
            raise ConfigError(f"placement={self.placement!r}: expected 'free' or 'adjacent'")
        try:
            from pokersquares_env.core import Rules

            Rules(jokers=self.jokers, placement=self.placement, first_cell=self.first_cell)
        except (ValueError, TypeError) as exc:  # the message names first_cell and its value already
            raise ConfigError(str(exc)) from None
        if self.reward_mode not in ("line", "terminal"):
            raise ConfigError(f"reward_mode={self.reward_mode!r}: expected 'line' or 'terminal'")
        from agents.shaping import SHAPINGS

        if self.shaping not in SHAPINGS:
            raise ConfigError(f"shaping={self.shaping!r}: expected 'none', 'heuristic' or 'tables'")
        if self.reward_scale != "normalized" and not _positive(self.reward_scale):
            raise ConfigError(f"reward_scale={self.reward_scale!r}: expected a positive number or 'normalized'")
        _int(self, "timesteps", 1, MAX_SIZES["timesteps"])
        _int(self, "seed", 0, MAX_SEED)  # SB3 seeds NumPy's legacy generator, which takes 32 bits
        if not isinstance(self.out, str) or not self.out:
            raise ConfigError(f"out={self.out!r}: expected a folder path")
        if self.net is not None and self.net not in NETS:
            raise ConfigError(f"net={self.net!r}: expected one of {list(NETS)}")
        if self.hidden is not None:
            if (
                not isinstance(self.hidden, (list, tuple))
                or not self.hidden
                or not all(isinstance(h, int) and not isinstance(h, bool) and h > 0 for h in self.hidden)
            ):
                raise ConfigError(f"hidden={self.hidden!r}: expected a non-empty list of positive layer sizes")
            if len(self.hidden) > MAX_LAYERS or max(self.hidden) > MAX_LAYER_SIZE:
                raise ConfigError(f"hidden={self.hidden!r}: expected at most {MAX_LAYERS} layers of at most "
                                  f"{MAX_LAYER_SIZE} units each")
        for name in ("learning_rate", "gamma", "ent_coef"):
            value = getattr(self, name)
            if value is None:
                continue
            if name == "ent_coef":
                ok = _number(value) and value >= 0
            elif name == "gamma":
                ok = _number(value) and 0 < value <= 1
            else:
                ok = _positive(value)
            if not ok:
                raise ConfigError(f"{name}={value!r}: expected {_EXPECT[name]}")
        for name in ("num_envs", "num_steps", "minibatch_size", "update_epochs"):
            if getattr(self, name) is not None:
                _int(self, name, 1, MAX_SIZES.get(name))
        if not (_number(self.gae_lambda) and 0 <= self.gae_lambda <= 1):
            raise ConfigError(f"gae_lambda={self.gae_lambda!r}: expected a number in [0, 1]")
        for name in ("clip_coef", "vf_coef", "max_grad_norm"):
            if name == "max_grad_norm" and self.max_grad_norm is None:
                continue
            if not _positive(getattr(self, name)):
                raise ConfigError(f"{name}={getattr(self, name)!r}: expected a positive number")
        _int(self, "buffer_size", 1, MAX_SIZES["buffer_size"])
        _int(self, "learning_starts", 0)
        for name in ("target_tau", "epsilon_start", "epsilon_end", "exploration_fraction"):
            value = getattr(self, name)
            if not (_number(value) and 0 <= value <= 1):
                raise ConfigError(f"{name}={value!r}: expected a number in [0, 1]")
        from agents.evaluation import MAX_GAMES  # an evaluation keeps every game's record in memory

        for name in ("eval_every", "checkpoint_every", "final_eval_games", "eval_seed", "final_eval_seed"):
            _int(self, name, 0, MAX_GAMES if name.endswith("games") else None)
        _int(self, "eval_games", 1, MAX_GAMES)
        _int(self, "torch_threads", 1, MAX_TORCH_THREADS)
        if not (_number(self.time_limit) and self.time_limit >= 0):
            raise ConfigError(f"time_limit={self.time_limit!r}: expected a number of seconds >= 0 (0: no limit)")
        if self.anneal_by not in ANNEAL_BY:
            raise ConfigError(f"anneal_by={self.anneal_by!r}: expected one of {list(ANNEAL_BY)}")
        if self.vectorization not in VECTORIZATION:
            raise ConfigError(f"vectorization={self.vectorization!r}: expected one of {list(VECTORIZATION)}")
        if not isinstance(self.anneal_lr, bool) or not isinstance(self.progress, bool):
            bad = "anneal_lr" if not isinstance(self.anneal_lr, bool) else "progress"
            raise ConfigError(f"{bad}={getattr(self, bad)!r}: expected true or false")
        if self.algo in ("fast-ppo", "maskable-ppo") and self.minibatch_size is not None and self.num_envs and self.num_steps:
            if self.minibatch_size > self.num_envs * self.num_steps:
                raise ConfigError(
                    f"minibatch_size={self.minibatch_size}: expected at most num_envs * num_steps = "
                    f"{self.num_envs * self.num_steps}"
                )
        if self.algo == "maskable-ppo":
            # sb3-contrib normalises each minibatch's advantages by their std, which is NaN for one sample, and SB3
            # keeps the partial last minibatch: a one-sample minibatch turns the weights into NaN (or raises mid-run)
            defaults = ALGO_DEFAULTS["maskable-ppo"]
            mb, envs, steps = (getattr(self, name) if getattr(self, name) is not None else defaults[name]
                               for name in ("minibatch_size", "num_envs", "num_steps"))
            rollout = envs * steps
            if mb == 1 or rollout % mb == 1:
                why = ("every minibatch is one sample" if mb == 1 else
                       f"the rollout of num_envs * num_steps = {envs} * {steps} = {rollout} samples leaves a last "
                       f"minibatch of one sample")
                raise ConfigError(
                    f"minibatch_size={mb} with num_envs={envs}, num_steps={steps}: {why}, whose advantage "
                    f"normalisation (std of one value) makes maskable-ppo's weights NaN: expected a minibatch_size "
                    f"of at least 2 for which num_envs * num_steps % minibatch_size is not 1")
        # the environment itself is the final judge of the rule and reward options
        try:
            import gymnasium as gym

            import pokersquares_env  # noqa: F401  (registers PokerSquares-v0)

            gym.make("PokerSquares-v0", **self.rules_kwargs()).close()
        except (ValueError, TypeError, OSError) as exc:
            raise ConfigError(f"bad rule or reward option: {exc}") from None

    # ------------------------------------------------------------ round trip
    def to_dict(self) -> dict[str, Any]:
        """The options as a plain JSON-compatible dict."""
        out = dataclasses.asdict(self)
        if isinstance(out["hidden"], tuple):  # a list as JSON writes it; any other value stays as given (and bad)
            out["hidden"] = list(out["hidden"])
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "config") -> "TrainConfig":
        """A config from a dict; unknown keys are an error naming them."""
        if not isinstance(data, dict):
            raise ConfigError(f"{where}: expected a mapping of option -> value, got {type(data).__name__}")
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names, key=str)  # a YAML key may be a number: 7: 1
        if unknown:
            raise ConfigError(f"{where}: unknown option(s) {unknown}; expected some of {sorted(names)}")
        data = dict(data)
        if isinstance(data.get("hidden"), tuple):
            data["hidden"] = list(data["hidden"])
        for f in fields(cls):  # a whole number in float notation (2e6 in a config file) is that integer, as on the CLI
            value = data.get(f.name)
            if f.type in ("int", "int | None") and isinstance(value, float) and value.is_integer():
                data[f.name] = int(value)
        return cls(**data)

    def save(self, path: str | os.PathLike) -> Path:
        """Write the config as JSON, or YAML when the file name ends in .yaml/.yml."""
        path = Path(path)
        if path.suffix in (".yaml", ".yml"):
            text = _yaml().safe_dump(self.to_dict(), sort_keys=False)
        else:
            text = json.dumps(self.to_dict(), indent=2) + "\n"
        replace_text(path, text)  # through a temporary file: a kill mid-write leaves the old one
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> "TrainConfig":
        """Read a config saved by :meth:`save` (JSON or YAML by file extension)."""
        data = read_config_file(path, "config file")
        return cls.from_dict(data, where=f"config file {str(Path(path))!r}")


_EXPECT = {
    "learning_rate": "a positive number",
    "gamma": "a number in (0, 1]",
    "ent_coef": "a non-negative number",
}


def _number(value: Any) -> bool:
    """A finite int or float (not a bool); an int too large for a float (YAML reads ``1e400`` as one) is not."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _positive(value: Any) -> bool:
    return _number(value) and value > 0


#: Sanity bounds on sizes (far beyond any machine's use, below the values at which numpy or torch fail with an
#: overflow or dimension error, or the thread library crashes), so that an absurd value is named before a run folder is
#: made rather than failing inside the run.
MAX_SIZES = {"num_envs": 2**20, "num_steps": 2**20, "minibatch_size": 2**30, "update_epochs": 10**6,
             "buffer_size": 2**30, "timesteps": 2**62}  # within int64, where the trainers count steps
MAX_LAYERS, MAX_LAYER_SIZE = 64, 2**16
MAX_TORCH_THREADS = 256


def _int(cfg: TrainConfig, name: str, minimum: int, maximum: int | None = None) -> None:
    value = getattr(cfg, name)
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum or (maximum is not None
                                                                                     and value > maximum):
        bound = f">= {minimum}" if maximum is None else f"{minimum}..{maximum}"
        raise ConfigError(f"{name}={value!r}: expected an integer {bound}")


def scoring_path_near(value: Any, base: str | os.PathLike, *, absolute: bool = False, strict: bool = False) -> Any:
    """A point-system file name of a config file, found where it is: ``value`` unchanged when it is found relative to
    the current folder (made absolute only with ``absolute=True``, e.g. for Ray trials that run elsewhere), else the
    absolute path of ``base / value`` when it is found next to the config file (``base``, its folder); built-in names,
    absolute paths, non-strings and names found in neither place are returned unchanged (validation then names
    them), except that with ``strict=True`` a relative file name (ending in ``.json`` or holding a folder) found in
    neither place is a :class:`ConfigError` naming both paths looked at.  A run stores the name as given, so a run
    folder moved or copied with its point-system file still resumes."""
    from pokersquares_env.scoring import POINT_SYSTEMS

    if not isinstance(value, str) or not value or value in POINT_SYSTEMS:
        return value
    if Path(value).exists():  # a folder too: point_system then says it is one, instead of "does not exist"
        return str(Path(value).resolve()) if absolute else value
    if (Path(base) / value).exists():
        return str((Path(base) / value).resolve())
    file_like = value.lower().endswith(".json") or "/" in value or os.sep in value
    if strict and file_like and not Path(value).is_absolute():
        here, near = str(Path(value).resolve()), str((Path(base) / value).resolve())
        where = (f"in the current folder, where the config file is ({here!r})" if here == near else
                 f"in the current folder ({here!r}) and next to the config file ({near!r})")
        raise ConfigError(f"scoring={value!r}: point system file {value!r} does not exist: looked {where}: expected "
                          f"'american', 'english' or the path of a JSON file")
    return value


def _check_scoring(spec: Any) -> None:
    from pokersquares_env.scoring import point_system

    if not isinstance(spec, str) or not spec:
        raise ConfigError(f"scoring={spec!r}: expected 'american', 'english' or a JSON file path")
    try:
        point_system(spec)
    except (ValueError, TypeError, OSError, KeyError) as exc:
        raise ConfigError(f"scoring={spec!r}: {exc}") from None


def read_config_file(path: str | os.PathLike, label: str, error: type[Exception] = ConfigError) -> Any:
    """The parsed content of a JSON or YAML file (by extension), or ``error`` naming ``label`` and the file when it is
    missing, a folder, not UTF-8 text or malformed.  An ``ImportError`` says when YAML needs PyYAML."""
    if not os.fspath(path).strip():  # Path('') is the current folder: name what was given
        raise error(f"{label} {os.fspath(path)!r}: expected the path of a JSON or YAML file")
    path = Path(path)
    if not path.is_file():
        what = "is not a file" if path.exists() else "does not exist"
        raise error(f"{label} {str(path)!r} {what}: expected a JSON or YAML file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{label} {str(path)!r} cannot be read ({exc}): expected JSON or YAML text") from None
    is_yaml = path.suffix in (".yaml", ".yml")
    yaml = _yaml() if is_yaml else None  # PyYAML missing: its own ImportError, not "could not be parsed as YAML"
    parse = (lambda t: yaml.load(t, Loader=_yaml_loader())) if is_yaml else \
        functools.partial(json.loads, object_pairs_hook=functools.partial(object_without_repeats, complain=_key_twice))
    try:
        return parse(text)
    except Exception as exc:  # noqa: BLE001 - any parse error becomes one clear message
        how = "YAML" if is_yaml else "JSON (a .yaml or .yml name is read as YAML)"
        raise error(f"{label} {str(path)!r} could not be parsed as {how}: {_one_line(exc)}") from None


def _one_line(exc: Exception) -> str:
    """A parse error in one line: PyYAML's own message spans several (the text's name, a copy of the line, a caret),
    so its problem, context and position are given instead (lines and columns from 1, as JSON's are)."""
    mark = getattr(exc, "problem_mark", None)
    if mark is None:
        return " ".join(str(exc).split())
    where = f"line {mark.line + 1} column {mark.column + 1}"
    context = getattr(exc, "context", None)
    return f"{exc.problem} ({context}) at {where}" if context else f"{exc.problem} at {where}"


#: a number in e-notation as YAML 1.2 (and JSON) read it: 3e-4, 2e6, 2.5e6, 1E+3 (PyYAML's YAML 1.1 reads these
#: as text unless they have a dot and a signed exponent)
_E_NUMBER = re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$")


def _key_twice(key: str) -> ValueError:
    return ValueError(f"key {key!r} is given twice in one mapping: expected each option once (the last would win, "
                      f"silently)")


def _yaml_loader():
    """PyYAML's safe loader, reading e-notation numbers (``3e-4``, ``2e6``) as numbers rather than text: an integer
    when the text has no dot and a non-negative exponent and the number has at most 19 digits (``2e6`` is 2000000,
    exactly), else a float (``1e400`` is ``inf``); a key given
    twice in one mapping is refused (PyYAML keeps the last)."""
    yaml = _yaml()

    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            keys = [self.construct_object(key_node, deep=deep) for key_node, _ in node.value]
            for i, key in enumerate(keys):
                if isinstance(key, str) and key in keys[:i]:
                    raise _key_twice(key)
            return super().construct_mapping(node, deep=deep)

    def construct(loader, node):
        text = loader.construct_scalar(node).replace("_", "")
        mantissa, _, exponent = text.lower().partition("e")
        if "." not in mantissa and 0 <= int(exponent) and len(mantissa) + int(exponent) <= 19:
            return int(mantissa) * 10 ** int(exponent)
        return float(text)  # also a whole number of more than 19 digits: 1e400 is inf, named as such, not 10**400

    Loader.add_implicit_resolver("tag:pokersquares:e-number", _E_NUMBER, list("-+0123456789."))
    Loader.add_constructor("tag:pokersquares:e-number", construct)
    return Loader


def _yaml():
    try:
        import yaml
    except ImportError:  # pragma: no cover - pyyaml ships with the train extra
        raise ImportError('YAML configs need PyYAML: pip install "pokersquares_env[train]" (a sweep needs '
                          '"pokersquares_env[distributed]", which has it too), or write the config as JSON') from None
    return yaml


def point_table(scoring: Any) -> dict[str, Any] | None:
    """The point system ``scoring`` names as JSON (``PointSystem.to_json``), read now; None if it cannot be read (a
    file gone since the run was validated).  Runs keep it beside their models: a config names a file by the path
    given, relative to the folder training started in."""
    from pokersquares_env.scoring import point_system

    try:
        return point_system(scoring).to_json()
    except (TypeError, ValueError, OSError):
        return None


def read_json(path: str | os.PathLike) -> Any:
    """The JSON content of ``path``, or None when it is missing, unreadable or not JSON (the marks, markers and
    records that only say whether a folder or a trial is done or whose it is)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return None
