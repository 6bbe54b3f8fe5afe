"""Trained models as agents: the ``ppo:``, ``dqn:`` and ``fastppo:`` loaders, and batched play on fixed deals.

``pokersquares evaluate --agent ppo:runs/x`` loads ``runs/x/model.zip`` (a MaskablePPO
run folder, or the zip itself); ``dqn:PATH`` and ``fastppo:PATH`` load ``model.pt``.
Every learned agent plays greedily among the legal cells only: the mask comes from
``info["action_mask"]`` (MaskablePPO's ``predict(..., action_masks=...)``; a ``-inf``
score on illegal cells for the torch networks).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

__all__ = ["MaskablePPOAgent", "TorchPolicyAgent", "best_cells", "load_ppo", "load_dqn", "load_fastppo", "play_decks",
           "policy_fn", "trained_game", "warn_if_other_game"]

from agents.base import Agent as _AgentBase
from agents.base import _caller_level, check_not_over

_PREFIX_ALGO = {"fastppo": "fast-ppo", "dqn": "dqn"}  # agent spec prefix -> the algo a torch model file records


def _model_file(path: str | Path, name: str, prefix: str) -> Path:
    p = Path(path)
    if p.is_dir():
        p = p / name
    if not p.is_file():
        raise FileNotFoundError(f"{prefix}:{path}: no model file {str(p)!r} (expected a run folder holding {name} or the file itself)")
    return p


def _mask_of(info: Any, game: Any, state: Any) -> np.ndarray:
    if state is not None:
        check_not_over(state)
    if isinstance(info, dict) and "action_mask" in info:
        mask = np.asarray(info["action_mask"]).astype(bool)
    elif game is not None and state is not None:
        mask = np.asarray(game.action_mask(state)).astype(bool)
    else:
        raise ValueError("a learned agent needs info['action_mask'] or the game and state to find the legal cells")
    if not mask.any():
        raise ValueError("info['action_mask'] marks no legal cell: the game is over (no card to place); expected the "
                         "info of a game in progress")
    return mask


def _check_obs(obs: Any, game: Any, state: Any) -> np.ndarray:
    """``obs`` as an array of the env's observation shape, or encoded from ``game`` and ``state`` when it is None."""
    from pokersquares_env.env import OBS_SIZE, encode_observation

    if obs is None:
        if game is None or state is None:
            raise ValueError("a learned agent got obs=None without the game and state to encode one from: expected "
                             f"the env's observation (shape ({OBS_SIZE},)) or game= and state=")
        return encode_observation(game, state)
    try:
        arr = np.asarray(obs)
    except ValueError:  # ragged
        arr = np.asarray(obs, dtype=object)
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"a learned agent got an observation of {arr.dtype} values: expected the env's observation, "
                         f"numbers of shape ({OBS_SIZE},)")
    if arr.shape != (OBS_SIZE,):
        raise ValueError(f"a learned agent got an observation of shape {arr.shape}: expected the env's observation, "
                         f"shape ({OBS_SIZE},)")
    return arr


class MaskablePPOAgent(_AgentBase):
    """A MaskablePPO model (sb3-contrib) playing greedily among the legal cells."""

    def __init__(self, path: str | Path, name: str | None = None, seed: int | None = None):
        super().__init__(seed)
        try:
            from sb3_contrib import MaskablePPO
        except ImportError:
            raise ImportError('ppo: agents need sb3-contrib: pip install "pokersquares_env[train]"') from None
        self.path = _model_file(path, "model.zip", "ppo")
        try:
            self.model = MaskablePPO.load(self.path, device="cpu")
        except Exception as exc:  # noqa: BLE001 - SB3 raises many kinds on a file that is not its zip
            raise ValueError(f"ppo:{path}: {str(self.path)!r} is not a MaskablePPO model ({type(exc).__name__}: {exc}): "
                             f"expected the model.zip a maskable-ppo run saved") from None
        self.name = name or f"ppo:{path}"

    def reset(self) -> None:
        """Nothing to reset: the policy is memoryless."""

    def act(self, obs: Any, info: Any = None, game: Any = None, state: Any = None) -> int:
        """The cell the policy picks for the drawn card (always a legal one)."""
        mask = _mask_of(info, game, state)  # first: a finished game is named before its observation is encoded
        obs = _check_obs(obs, game, state)
        action, _ = self.model.predict(obs, action_masks=mask, deterministic=True)
        return int(np.asarray(action).reshape(-1)[0])

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Cells for a batch of observations and masks."""
        actions, _ = self.model.predict(np.asarray(obs), action_masks=np.asarray(masks).astype(bool), deterministic=True)
        return np.asarray(actions).reshape(-1)


#: Scores this close to a row's best (relative to it, at least this much absolute) count as tied with it: the float
#: noise of a network's output, which depends on torch's thread count and batch size (about 1e-8 here), is far below.
TIE_TOLERANCE = 1e-5


def best_cells(values: np.ndarray, tol: float = TIE_TOLERANCE) -> np.ndarray:
    """Per row of ``values`` (NaN on illegal cells), the lowest cell whose value is within ``tol * max(1, |best|)`` of
    the row's best; a ``ValueError`` for a row without a number.  Cells a network scores alike (the symmetric cells
    of an empty board) differ only by float noise that depends on torch's thread count and batch size, so
    ``np.nanargmax`` made ``--jobs 1``, ``--jobs 2`` and ``--backend ray`` play different games; this choice does
    not depend on them."""
    values = np.asarray(values, dtype=np.float64)
    scored = ~np.isnan(values)
    if not scored.any(axis=-1).all():
        raise ValueError("the network gave every legal cell a NaN score: expected a model with finite weights")
    filled = np.where(scored, values, -np.inf)
    best = filled.max(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore"):  # inf - inf where the best is infinite: that row keeps the best itself
        floor = np.where(np.isfinite(best), best - tol * np.maximum(1.0, np.abs(best)), best)
    return (scored & (filled >= floor)).argmax(axis=-1)


class TorchPolicyAgent(_AgentBase):
    """A fast-ppo or dqn torch network playing the best-scored legal cell (policy logits or Q-values)."""

    def __init__(self, path: str | Path, prefix: str, name: str | None = None, seed: int | None = None):
        super().__init__(seed)
        from agents.fast_ppo import load_policy

        self.path = _model_file(path, "model.pt", prefix)
        self.model, blob = load_policy(self.path)
        self.algo = blob.get("algo")
        self.config = blob.get("config")  # the training config: the game the network learned
        self.table = blob.get("point_system")  # and its point system as read then (older files: none)
        if prefix in _PREFIX_ALGO and self.algo in _PREFIX_ALGO.values() and self.algo != _PREFIX_ALGO[prefix]:
            other = next(k for k, v in _PREFIX_ALGO.items() if v == self.algo)
            raise ValueError(f"{prefix}:{path}: {str(self.path)!r} holds a {self.algo} model: load it as {other}:{path}")
        self.name = name or f"{prefix}:{path}"

    def reset(self) -> None:
        """Nothing to reset: the policy is memoryless."""

    def action_values(self, obs: Any, info: Any = None, game: Any = None, state: Any = None) -> np.ndarray:
        """The network's score of each of the 25 cells (NaN on illegal ones)."""
        import torch

        mask = _mask_of(info, game, state)  # first: a finished game is named before its observation is encoded
        obs = _check_obs(obs, game, state)
        with torch.no_grad():
            scores, _ = self.model(torch.as_tensor(obs[None]))
            values = scores.numpy()[0].astype(np.float64)
        values[~mask] = np.nan
        return values

    def act(self, obs: Any, info: Any = None, game: Any = None, state: Any = None) -> int:
        """The cell the network scores highest among the legal ones."""
        values = self.action_values(obs, info, game, state)
        return int(best_cells(values[None])[0])

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Cells for a batch of observations and masks."""
        import torch

        masks = np.asarray(masks).astype(bool)
        masks = masks | ~masks.any(-1, keepdims=True)  # a row without a legal cell: every cell, as before
        with torch.no_grad():
            scores, _ = self.model(torch.as_tensor(np.asarray(obs)))
        values = scores.numpy().astype(np.float64)
        values[~masks] = np.nan
        return best_cells(values)


def trained_game(model_path: str | Path, algo: str, config: dict[str, Any] | None = None,
                 table: dict[str, Any] | None = None) -> tuple[Any, Any] | None:
    """The rules and point system an ``algo`` model was trained for, or None where they cannot be told.

    ``config`` and ``table``: the training config and point system a torch model file holds.  Otherwise the run
    folder's ``config.json`` and ``point_system.json``: beside the model, or above ``checkpoints/`` for a
    checkpoint; a ``config.json`` of another algorithm's run is not this model's.  The point system is None when
    neither the table nor a built-in name gives it (``config.json`` names a file by the path given where the
    training started, which need not be found from here)."""
    from agents.config import read_json as read
    from pokersquares_env.core import Rules
    from pokersquares_env.scoring import POINT_SYSTEMS, point_system

    model_path = Path(model_path)
    if config is None:
        folder = model_path.parent.parent if model_path.parent.name == "checkpoints" else model_path.parent
        config = read(folder / "config.json")
        if not isinstance(config, dict) or config.get("algo") != algo:
            return None
        table = read(folder / "point_system.json")
    if not isinstance(config, dict):
        return None
    try:
        rules = Rules(**{k: config[k] for k in ("jokers", "placement", "first_cell") if k in config})
    except (TypeError, ValueError):
        return None
    scoring = config.get("scoring", "american")
    spec = table if isinstance(table, dict) else scoring if isinstance(scoring, str) and scoring in POINT_SYSTEMS \
        else None
    try:
        system = None if spec is None else point_system(spec)
    except (TypeError, ValueError, OSError):
        system = None
    return rules, system


_WARNED: set[str] = set()  # models warned about in this process (forked workers inherit it: one warning a run)


def warn_if_other_game(name: str, trained: tuple[Any, Any] | None, system: Any, rules: Any) -> None:
    """A ``RuntimeWarning`` (once a model and process) when a learned agent plays another game than it was trained
    for (``trained``, from :func:`trained_game`): other rules, or other point values for a hand the rules allow.  It
    still plays (the masks keep it legal), but a learned policy does not adapt to the game it is handed as the
    table-driven agents do."""
    import warnings

    from pokersquares_env.core import Rules
    from pokersquares_env.scoring import HandCategory, point_system

    if trained is None or name in _WARNED:
        return
    t_rules, t_system = trained
    here_rules = Rules() if rules is None else Rules.parse(rules)
    here_system = point_system("american" if system is None else system)
    other = []
    if here_rules != t_rules:
        other.append(f"rules {t_rules.to_spec() or 'plain'} (here {here_rules.to_spec() or 'plain'})")
    if t_system is not None:
        hands = HandCategory.possible(t_rules.jokers or here_rules.jokers)  # a joker in one game or the other
        if any(t_system.points[c] != here_system.points[c] for c in hands):
            other.append(f"{t_system.name!r} points (here {here_system.name!r})")
    if other:
        _WARNED.add(name)
        warnings.warn(f"{name} was trained for {' and '.join(other)}: it plays this game with the policy it learned "
                      f"for that one (give it the training's rules and point system to play its own game)",
                      RuntimeWarning, stacklevel=_caller_level())


def load_ppo(path: str, *, system: Any = None, rules: Any = None, seed: int | None = None) -> MaskablePPOAgent:
    """The agent of a MaskablePPO run folder (or model.zip): spec ``ppo:PATH``.  Warns when ``system`` or ``rules``
    differ from the run's (:func:`warn_if_other_game`)."""
    agent = MaskablePPOAgent(path, name=f"ppo:{path}", seed=seed)
    warn_if_other_game(agent.name, trained_game(agent.path, "maskable-ppo"), system, rules)
    return agent


def load_dqn(path: str, *, system: Any = None, rules: Any = None, seed: int | None = None) -> TorchPolicyAgent:
    """The agent of a masked-DQN run folder (or model.pt): spec ``dqn:PATH``.  Warns as :func:`load_ppo`."""
    agent = TorchPolicyAgent(path, "dqn", seed=seed)
    warn_if_other_game(agent.name, trained_game(agent.path, "dqn", agent.config, agent.table), system, rules)
    return agent


def load_fastppo(path: str, *, system: Any = None, rules: Any = None, seed: int | None = None) -> TorchPolicyAgent:
    """The agent of a fast-ppo run folder (or model.pt): spec ``fastppo:PATH``.  Warns as :func:`load_ppo`."""
    agent = TorchPolicyAgent(path, "fastppo", seed=seed)
    warn_if_other_game(agent.name, trained_game(agent.path, "fast-ppo", agent.config, agent.table), system, rules)
    return agent


def policy_fn(agent: Any) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """A batched ``(obs, masks) -> cells`` function of a learned agent."""
    return agent.act_batch


def play_decks(
    policy: Callable[[np.ndarray, np.ndarray], np.ndarray],
    env_kwargs: dict[str, Any],
    decks: Sequence[Sequence[int]],
) -> list[dict[str, Any]]:
    """Play one game per deck with a batched policy; the final info (score, scores, hands, ...) of each game."""
    import gymnasium as gym

    import pokersquares_env  # noqa: F401

    envs = [gym.make("PokerSquares-v0", **env_kwargs).unwrapped for _ in decks]
    obs, masks = [], []
    for env, deck in zip(envs, decks, strict=True):
        o, info = env.reset(options={"deck": list(deck)})
        obs.append(o)
        masks.append(info["action_mask"])
    results: list[dict[str, Any]] = [{} for _ in decks]
    live = list(range(len(decks)))
    obs_arr, mask_arr = np.stack(obs), np.stack(masks).astype(bool)
    while live:
        actions = np.asarray(policy(obs_arr[live], mask_arr[live])).reshape(-1)
        still = []
        for i, a in zip(live, actions, strict=True):
            o, _r, term, trunc, info = envs[i].step(int(a))
            if term or trunc:
                results[i] = info
            else:
                obs_arr[i], mask_arr[i] = o, info["action_mask"].astype(bool)
                still.append(i)
        live = still
    return results
