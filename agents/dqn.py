"""Masked double DQN in one file (CleanRL style) on the vector env.

The value-based counterpart of :mod:`agents.fast_ppo`, sharing its networks: the
network's 25 per-cell scores are Q-values.  Masks enter in three places, and
only there:

* acting: the greedy cell is the argmax over legal cells, and exploration draws a
  uniformly random *legal* cell;
* the bootstrap target: ``r + gamma * Q_target(s', argmax_{a' legal in s'} Q(s', a'))``
  (double DQN), with the legal cells of ``s'`` stored in the replay buffer;
* evaluation and play (:class:`agents.learned.TorchPolicyAgent`).

The transition of the vector env's reset step (NEXT_STEP autoreset) is never
stored.  ``--resume`` restores the networks, the optimiser, the step count, the
exploration generator, the games in progress (:func:`agents.fast_ppo.games_state`) and
the replay buffer, so a stopped and resumed run is the run never stopped: every
``latest`` checkpoint writes the buffer's filled part, its ring position and its
sampling generator beside it (``checkpoints/latest_buffer.npz``, :data:`BUFFER_FILE`),
so a resumed run samples from the transitions it had and goes on learning at once.  A run checkpointed before that file existed resumes with an empty
buffer and refills ``learning_starts`` steps first, as before.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from agents.config import TrainConfig, check_finite
from agents.fast_ppo import (
    _final_scores,
    _greedy_policy,
    games_state,
    make_env,
    make_net,
    masked_logits,
    restore_games,
    save_model,
    torch,
)
from agents.shaping import shaped_rewards
from agents.train import planned_steps
from pokersquares_env.env import OBS_SIZE

__all__ = ["BUFFER_FILE", "ReplayBuffer", "dqn_targets", "soft_update", "train"]

#: the replay buffer saved beside ``checkpoints/latest.pt`` (in the checkpoints folder)
BUFFER_FILE = "latest_buffer.npz"
_BUFFER_ARRAYS = ("obs", "next_obs", "next_mask", "action", "reward", "done")
_BITS = ("obs", "next_obs", "next_mask")

nn = torch.nn


def dqn_targets(q_net: "nn.Module", target: "nn.Module", rewards: "torch.Tensor", next_obs: "torch.Tensor",
                next_mask: "torch.Tensor", dones: "torch.Tensor", gamma: float) -> "torch.Tensor":
    """Double-DQN targets: ``r + gamma * Q_target(s', a*)`` with ``a*`` the online network's best *legal* cell of
    ``s'`` (``next_mask``), and ``r`` alone where the transition ended the game (``dones`` 1)."""
    q_next_online, _ = q_net(next_obs)
    best = masked_logits(q_next_online, next_mask).argmax(-1, keepdim=True)
    q_next, _ = target(next_obs)
    return rewards + gamma * (1.0 - dones) * q_next.gather(1, best).squeeze(1)


def soft_update(target: "nn.Module", online: "nn.Module", tau: float) -> None:
    """Move the target network's weights ``tau`` of the way to the online network's (1: a copy, 0: unchanged)."""
    with torch.no_grad():
        for p, tp in zip(online.parameters(), target.parameters(), strict=True):
            tp.mul_(1.0 - tau).add_(p, alpha=tau)


class ReplayBuffer:
    """A ring buffer of transitions (obs, cell, reward, next obs, next legal cells, terminated)."""

    def __init__(self, capacity: int, obs_size: int, seed: int):
        self.capacity = capacity
        self.obs = np.zeros((capacity, obs_size), dtype=np.uint8)
        self.next_obs = np.zeros((capacity, obs_size), dtype=np.uint8)
        self.next_mask = np.zeros((capacity, 25), dtype=bool)
        self.action = np.zeros(capacity, dtype=np.int64)
        self.reward = np.zeros(capacity, dtype=np.float32)
        self.done = np.zeros(capacity, dtype=np.float32)
        self.size = 0
        self.pos = 0
        self.step: int | None = None  # the checkpoint step a loaded buffer was saved with
        self.rng = np.random.default_rng(seed)

    def add(self, obs, action, reward, next_obs, next_mask, done) -> None:
        """Append a batch of transitions (overwriting the oldest when full)."""
        n = len(action)
        idx = (self.pos + np.arange(n)) % self.capacity
        self.obs[idx], self.action[idx], self.reward[idx] = obs, action, reward
        self.next_obs[idx], self.next_mask[idx], self.done[idx] = next_obs, next_mask, done
        self.pos = int((self.pos + n) % self.capacity)
        self.size = min(self.capacity, self.size + n)

    def save(self, path: str | Path, step: int | None = None) -> None:
        """Write the filled part of the buffer, its ring position and its generator's state to ``path`` (an ``.npz``;
        written to a temporary file first, so an interruption leaves the previous file whole).  ``step``, the
        training step of the checkpoint it goes with, is stored so that a resume can tell a buffer of another
        checkpoint."""
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp.npz")
        arrays = {name: getattr(self, name)[:self.size] for name in _BUFFER_ARRAYS}
        for name in _BITS:  # the observations are 0/1 flags: packed 8 to a byte (a full buffer in about 1 s)
            if arrays[name].size and arrays[name].max() > 1:
                raise ValueError(f"the replay buffer's {name} holds values above 1: expected 0/1 flags")
            arrays[name] = np.packbits(arrays[name].astype(bool), axis=1)
        meta = {"capacity": self.capacity, "size": self.size, "pos": self.pos, "obs_size": self.obs.shape[1],
                "rng": self.rng.bit_generator.state, "step": step}
        np.savez(tmp, meta=np.array(json.dumps(meta)), **arrays)
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: str | Path, capacity: int, obs_size: int) -> "ReplayBuffer":
        """The buffer :meth:`save` wrote to ``path``; ValueError naming the file and what is wrong if it is damaged or
        was saved with another ``capacity`` or observation size."""
        path = Path(path)
        expected = (f"expected the replay buffer a dqn checkpoint saved (capacity {capacity}, observations of "
                    f"{obs_size})")
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
                arrays = {name: data[name] for name in _BUFFER_ARRAYS}
            for name in _BITS:
                width = obs_size if name != "next_mask" else 25
                arrays[name] = np.unpackbits(arrays[name], axis=1, count=width).astype(np.uint8)
        except Exception as exc:  # noqa: BLE001 - zip, zlib, KeyError and JSON each fail differently
            raise ValueError(f"{str(path)!r} cannot be read ({type(exc).__name__}: {exc}): {expected}; delete it to "
                             f"resume with an empty buffer") from None
        size = meta.get("size") if isinstance(meta, dict) else None
        problem = None
        if not isinstance(size, int) or meta.get("capacity") != capacity:
            problem = f"capacity {meta.get('capacity') if isinstance(meta, dict) else meta!r}"
        elif not (isinstance(meta.get("pos"), int) and 0 <= meta["pos"] < max(1, capacity) and 0 <= size <= capacity):
            problem = f"ring position {meta.get('pos')!r} and size {size!r}"
        elif meta.get("obs_size") != obs_size or arrays["obs"].shape != (size, obs_size) \
                or arrays["next_obs"].shape != (size, obs_size):
            problem = f"observations of {meta.get('obs_size')!r} numbers"
        elif any(arrays[name].shape[0] != size for name in _BUFFER_ARRAYS) or arrays["next_mask"].shape != (size, 25):
            problem = "arrays of unequal lengths"
        if problem is not None:
            raise ValueError(f"{str(path)!r} holds {problem}: {expected}; delete it to resume with an empty buffer")
        buffer = cls(capacity, obs_size, 0)
        for name in _BUFFER_ARRAYS:
            getattr(buffer, name)[:size] = arrays[name].astype(bool) if name == "next_mask" else arrays[name]
        buffer.size, buffer.pos = size, meta["pos"]
        buffer.step = meta.get("step") if isinstance(meta.get("step"), int) else None
        try:
            buffer.rng.bit_generator.state = meta["rng"]
        except (TypeError, ValueError, KeyError) as exc:
            raise ValueError(f"{str(path)!r} holds a damaged generator state ({exc}): {expected}; delete it to resume "
                             f"with an empty buffer") from None
        return buffer

    def sample(self, n: int) -> tuple["torch.Tensor", ...]:
        """``n`` transitions drawn uniformly with replacement, as tensors."""
        idx = self.rng.integers(0, self.size, n)
        return tuple(
            torch.as_tensor(a[idx])
            for a in (self.obs, self.action, self.reward, self.next_obs, self.next_mask, self.done)
        )


def train(cfg: TrainConfig, run: Any) -> "nn.Module":
    """Train with masked double DQN; ``run`` (an :class:`agents.train.RunFolder`) logs, evaluates and checkpoints."""
    torch.set_num_threads(cfg.torch_threads)
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    N = cfg.num_envs
    q_net = make_net(cfg.net, cfg.hidden)
    target = make_net(cfg.net, cfg.hidden)
    optimizer = torch.optim.Adam(q_net.parameters(), lr=cfg.learning_rate)
    global_step = 0
    state = run.load_checkpoint()
    buffer = run.load_buffer()
    if state is not None:
        q_net.load_state_dict(state["state_dict"])
        optimizer.load_state_dict(state["optimizer"])
        global_step = state["global_step"]
        target.load_state_dict(state["target"])
    else:
        target.load_state_dict(q_net.state_dict())
    resumed_at = global_step
    policy = _greedy_policy(q_net)

    def save_checkpoint(path: Path) -> None:
        save_model(path, q_net, cfg, point_system=run.point_system, optimizer=optimizer.state_dict(),
                   target=target.state_dict(),
                   global_step=global_step, iteration=iteration, rng=rng.bit_generator.state,
                   games=games_state(envs, obs=obs, mask=mask, reset_step=reset_step, phi=phi),
                   progress=run.checkpoint_progress)  # --resume goes on from this record
        if path == run.latest_checkpoint():  # --resume goes on with the transitions it had
            buffer.save(path.with_name(BUFFER_FILE), step=global_step)

    # a resumed run learns at once from a restored buffer; an empty one first refills learning_starts steps
    learn_from = cfg.learning_starts if buffer is not None else resumed_at + cfg.learning_starts
    if buffer is None:
        buffer = ReplayBuffer(cfg.buffer_size, OBS_SIZE, cfg.seed + global_step)

    potential = run.shaping_potential()  # built before the run's clock started (train)
    iteration = 0
    games = restore_games(state, cfg, N)
    if state is not None:  # the exploration generator and the iteration count go on (with or without the games)
        if "rng" in state:
            rng.bit_generator.state = state["rng"]
        iteration = state.get("iteration", iteration)
    if games is not None:  # the games in progress go on
        envs, obs, mask, reset_step, phi = (games[k] for k in ("env", "obs", "mask", "reset_step", "phi"))
    else:  # a new run, or a checkpoint without its games: new deals from a seed of the run's seed and progress
        envs = make_env(cfg, N)
        obs, info = envs.reset(seed=cfg.seed + 7919 * (global_step // N))
        mask = info["action_mask"].astype(bool)
        phi = potential(obs) if potential is not None else None
        reset_step = np.zeros(N, dtype=bool)
    explore_steps = max(1, int(cfg.exploration_fraction * cfg.timesteps))
    run.start(total=planned_steps(cfg), done=global_step)  # iterations of N steps: the budget rounded up
    losses: list[float] = []
    try:
        spent = run.spent_before()  # a resumed run whose time limit earlier sessions spent trains nothing
        while not spent and global_step < cfg.timesteps:
            frac = min(1.0, global_step / explore_steps)
            epsilon = cfg.epsilon_start + frac * (cfg.epsilon_end - cfg.epsilon_start)
            # ---- act: greedy among legal cells, or a random legal cell ----------------
            with torch.no_grad():
                q, _ = q_net(torch.as_tensor(obs))
                greedy = masked_logits(q, torch.as_tensor(mask)).argmax(-1).numpy()
            legal = mask | ~mask.any(1, keepdims=True)
            random_cell = (rng.random((N, 25)) * legal).argmax(1)  # uniform over legal cells
            action = np.where(rng.random(N) < epsilon, random_cell, greedy)
            next_obs, reward, terminated, truncated, info = envs.step(action)
            done = np.logical_or(terminated, truncated)
            next_mask = info["action_mask"].astype(bool)
            keep = ~reset_step  # the reset step's transition is not a move of the game
            if potential is not None:  # r + gamma * phi(s') - phi(s)
                phi_next = potential(next_obs)
                reward = shaped_rewards(reward, phi, phi_next, cfg.gamma, keep, terminated)
                phi = phi_next
            if keep.any():
                buffer.add(obs[keep], action[keep], reward[keep], next_obs[keep], next_mask[keep], terminated[keep])
            if done.any():
                run.episodes(_final_scores(info, done))
            obs, mask, reset_step = next_obs, next_mask, done
            global_step += N
            iteration += 1
            # ---- learn: double-DQN targets over the legal cells of the next state -------
            if global_step >= learn_from and iteration % cfg.num_steps == 0:
                if cfg.anneal_lr:
                    optimizer.param_groups[0]["lr"] = cfg.learning_rate * max(0.02, 1.0 - run.progress_fraction(global_step))
                for _ in range(cfg.update_epochs):
                    b_obs, b_act, b_rew, b_next, b_nmask, b_done = buffer.sample(cfg.minibatch_size)
                    with torch.no_grad():
                        y = dqn_targets(q_net, target, b_rew, b_next, b_nmask, b_done, cfg.gamma)
                    q_all, _ = q_net(b_obs)
                    q_taken = q_all.gather(1, b_act[:, None]).squeeze(1)
                    loss = nn.functional.smooth_l1_loss(q_taken, y)
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(q_net.parameters(), cfg.max_grad_norm)
                    optimizer.step()
                    soft_update(target, q_net, cfg.target_tau)
                    losses.append(loss.item())
                check_finite(q_net, cfg, global_step)  # the weights after every round (a forward pass would cost 20%)
            run.step(global_step, policy)  # curve rows and evaluations at their own cadence (eval_every)
            if iteration % 25 == 0:
                if losses:
                    run.scalars(global_step, {"td_loss": float(np.mean(losses)), "epsilon": epsilon})
                    losses = []
                check_finite(q_net, cfg, global_step, torch.as_tensor(obs))  # and their outputs, before a checkpoint
                run.maybe_checkpoint(global_step, save_checkpoint)
                if run.stop_requested or run.out_of_time():
                    break
        if losses:  # the rounds since the last 25th iteration: logged too (a short run logged none at all)
            run.scalars(global_step, {"td_loss": float(np.mean(losses)), "epsilon": epsilon})
        run.step(global_step, policy)  # an evaluation due at the end
        check_finite(q_net, cfg, global_step, torch.as_tensor(obs))
        # so --resume continues from the end, not before it (with the games open: before the env closes)
        run.maybe_checkpoint(global_step, save_checkpoint, force=True)
    finally:
        envs.close()
    run.save_final(lambda path: save_model(path, q_net, cfg, point_system=run.point_system,
                                           global_step=global_step))
    return q_net
