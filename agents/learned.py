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

__all__ = ["MaskablePPOAgent", "TorchPolicyAgent", "load_ppo", "load_dqn", "load_fastppo", "play_decks", "policy_fn"]

from agents.base import Agent as _AgentBase

_PREFIX_ALGO = {"fastppo": "fast-ppo", "dqn": "dqn"}  # agent spec prefix -> the algo a torch model file records


def _model_file(path: str | Path, name: str, prefix: str) -> Path:
    p = Path(path)
    if p.is_dir():
        p = p / name
    if not p.is_file():
        raise FileNotFoundError(f"{prefix}:{path}: no model file {str(p)!r} (expected a run folder holding {name} or the file itself)")
    return p


def _mask_of(info: Any, game: Any, state: Any) -> np.ndarray:
    if isinstance(info, dict) and "action_mask" in info:
        return np.asarray(info["action_mask"]).astype(bool)
    if game is not None and state is not None:
        return np.asarray(game.action_mask(state)).astype(bool)
    raise ValueError("a learned agent needs info['action_mask'] or the game and state to find the legal cells")


def _check_obs(obs: Any, game: Any, state: Any) -> np.ndarray:
    if obs is None:
        from pokersquares_env.env import encode_observation

        return encode_observation(game, state)
    return np.asarray(obs)


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
        obs = _check_obs(obs, game, state)
        mask = _mask_of(info, game, state)
        action, _ = self.model.predict(obs, action_masks=mask, deterministic=True)
        return int(np.asarray(action).reshape(-1)[0])

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Cells for a batch of observations and masks."""
        actions, _ = self.model.predict(np.asarray(obs), action_masks=np.asarray(masks).astype(bool), deterministic=True)
        return np.asarray(actions).reshape(-1)


class TorchPolicyAgent(_AgentBase):
    """A fast-ppo or dqn torch network playing the best-scored legal cell (policy logits or Q-values)."""

    def __init__(self, path: str | Path, prefix: str, name: str | None = None, seed: int | None = None):
        super().__init__(seed)
        from agents.fast_ppo import load_policy

        self.path = _model_file(path, "model.pt", prefix)
        self.model, blob = load_policy(self.path)
        self.algo = blob.get("algo")
        if prefix in _PREFIX_ALGO and self.algo in _PREFIX_ALGO.values() and self.algo != _PREFIX_ALGO[prefix]:
            other = next(k for k, v in _PREFIX_ALGO.items() if v == self.algo)
            raise ValueError(f"{prefix}:{path}: {str(self.path)!r} holds a {self.algo} model: load it as {other}:{path}")
        self.name = name or f"{prefix}:{path}"

    def reset(self) -> None:
        """Nothing to reset: the policy is memoryless."""

    def action_values(self, obs: Any, info: Any = None, game: Any = None, state: Any = None) -> np.ndarray:
        """The network's score of each of the 25 cells (NaN on illegal ones)."""
        import torch

        obs = _check_obs(obs, game, state)
        mask = _mask_of(info, game, state)
        with torch.no_grad():
            scores, _ = self.model(torch.as_tensor(obs[None]))
            values = scores.numpy()[0].astype(np.float64)
        values[~mask] = np.nan
        return values

    def act(self, obs: Any, info: Any = None, game: Any = None, state: Any = None) -> int:
        """The cell the network scores highest among the legal ones."""
        values = self.action_values(obs, info, game, state)
        return int(np.nanargmax(values))

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Cells for a batch of observations and masks."""
        import torch

        from agents.fast_ppo import masked_logits

        with torch.no_grad():
            scores, _ = self.model(torch.as_tensor(np.asarray(obs)))
            return masked_logits(scores, torch.as_tensor(np.asarray(masks).astype(bool))).argmax(-1).numpy()


def load_ppo(path: str, *, system: Any = None, rules: Any = None, seed: int | None = None) -> MaskablePPOAgent:
    """The agent of a MaskablePPO run folder (or model.zip): spec ``ppo:PATH``."""
    return MaskablePPOAgent(path, name=f"ppo:{path}", seed=seed)


def load_dqn(path: str, *, system: Any = None, rules: Any = None, seed: int | None = None) -> TorchPolicyAgent:
    """The agent of a masked-DQN run folder (or model.pt): spec ``dqn:PATH``."""
    return TorchPolicyAgent(path, "dqn", seed=seed)


def load_fastppo(path: str, *, system: Any = None, rules: Any = None, seed: int | None = None) -> TorchPolicyAgent:
    """The agent of a fast-ppo run folder (or model.pt): spec ``fastppo:PATH``."""
    return TorchPolicyAgent(path, "fastppo", seed=seed)


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
