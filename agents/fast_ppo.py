"""Fast masked PPO in one file (CleanRL style), stepping the native vector env with many games at once.

Read it top to bottom: the networks, ``make_env``, then one linear training loop
(:func:`train`).  It differs from CleanRL's ``ppo.py`` in these places:

* illegal cells get a logit of ``-inf`` (the mask comes from ``info["action_mask"]``),
  both when sampling and when computing log-probabilities and entropy;
* the vector env resets a finished game on the *next* ``step`` (gymnasium's
  NEXT_STEP autoreset), so that step's transition is marked invalid and left out of
  the loss, and advantages stop at every ``terminated``;
* the default network (``net="lines"``) scores each cell from the contents of its
  row and its column before and after the drawn card goes there, with weights
  shared by all cells and lines, so the policy is equivariant to permuting rows or
  columns (the score is).  ``net="mlp"`` is the plain CleanRL network on the flat observation;
* the value loss is not clipped (CleanRL's ``clip_vloss``), and with ``anneal_lr`` the
  learning rate decays to ``0.02 x learning_rate``, never below (CleanRL's towards 0);
* each epoch takes whole minibatches of ``minibatch_size`` valid samples only:
  ``floor(valid / minibatch_size)`` gradient steps, leaving out the rest of that
  epoch's shuffle (a different part each epoch).  As the autoreset steps are left
  out, the valid samples rarely divide evenly: at the defaults (256 games x 50 steps,
  minibatches of 1,600) a rollout holds 12,288 or 12,544 valid samples, so 7
  minibatches run per epoch and 9-11% of the samples are unused in that epoch.  A rollout
  with fewer valid samples than ``minibatch_size`` takes one gradient step per epoch on
  all of them (the minibatch shrinks to the rollout).  A rollout with no valid sample
  (``num_steps=1`` at the step where every game resets) takes no gradient step.

The run folder matches the other trainers (see :mod:`agents.train`).  Run it with
``pokersquares train --algo fast-ppo ...`` or :func:`agents.train.train`.
"""

from __future__ import annotations

import io
import math
import pickle
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np

from agents.config import TrainConfig, check_finite, diverged
from agents.shaping import shaped_rewards

__all__ = ["LinesNet", "MlpNet", "gae", "games_state", "load_failure", "load_policy", "make_env", "make_net",
           "masked_logits", "ppo_losses", "restore_games", "safe_load", "train", "unsafe_objects"]

CARD = 18
BOARD = 25 * CARD  # 450
UNSEEN = 54


def _torch():
    try:
        import torch
    except ImportError:  # pragma: no cover - torch ships with the train extra
        raise ImportError('the fast trainer needs torch: pip install "pokersquares_env[train]"') from None
    return torch


torch = _torch()
nn = torch.nn


def _mlp(sizes: list[int], final_act: bool = True) -> "nn.Sequential":
    layers: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2 or final_act:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def _line_cells() -> list[list[int]]:
    """The cells of the 10 lines: rows 0-4, then columns 0-4."""
    return [[5 * r + c for c in range(5)] for r in range(5)] + [[5 * r + c for r in range(5)] for c in range(5)]


class LinesNet(nn.Module):
    """Per-cell scores (logits or Q-values) from row/column summaries, plus a state value.

    Each of the 10 lines is summarised by the counts of its ranks, suits and jokers
    before and after the drawn card is added; a shared MLP embeds each summary; a
    cell's score is a shared MLP of its row's and column's embeddings and a global
    embedding of the unseen cards, the drawn card and the mean line embedding.
    """

    def __init__(self, hidden: list[int]):
        super().__init__()
        lines = _line_cells()
        incidence = torch.zeros(10, 25)
        for i, cells in enumerate(lines):
            incidence[i, cells] = 1.0
        self.register_buffer("incidence", incidence, persistent=False)  # line x cell
        h = hidden[0]
        hc = hidden[-1]
        self.line = _mlp([2 * (CARD + 1), *hidden[:-1], h])
        self.glob = _mlp([UNSEEN + CARD + 1 + h, h])
        # the cell head's first layer acts on concat(row, column, global); it is split into three
        # linear maps so each line is projected once, not once per cell (same function, 5x cheaper)
        self.cell_row = nn.Linear(h, hc)
        self.cell_col = nn.Linear(h, hc, bias=False)
        self.cell_glob = nn.Linear(h, hc, bias=False)
        self.cell_out = nn.Linear(hc, 1)
        self.value = _mlp([2 * h, hc, 1], final_act=False)

    def forward(self, obs: "torch.Tensor") -> tuple["torch.Tensor", "torch.Tensor"]:
        """(scores of the 25 cells, state value) for a batch of flat observations."""
        x = obs.float()
        board = x[:, :BOARD].view(-1, 25, CARD)
        card = x[:, BOARD : BOARD + CARD]
        unseen = x[:, BOARD + CARD :]
        lines = torch.matmul(self.incidence, board)  # (B, 10, 18): rank, suit and joker counts per line
        count = lines[..., :13].sum(-1, keepdim=True) + lines[..., 17:18]
        before = torch.cat([lines, count], -1)
        after = before + torch.cat([card, card.new_ones(card.shape[0], 1)], -1)[:, None, :]
        emb = self.line(torch.cat([before, after], -1))  # (B, 10, h)
        pooled = emb.mean(1)
        placed = count[:, :5].sum(1) / 25.0
        g = self.glob(torch.cat([unseen, card, placed, pooled], -1))
        row = self.cell_row(emb[:, :5])  # (B, 5, hc)
        col = self.cell_col(emb[:, 5:])  # (B, 5, hc)
        hidden = torch.relu(row[:, :, None, :] + col[:, None, :, :] + self.cell_glob(g)[:, None, None, :])
        scores = self.cell_out(hidden).reshape(-1, 25)  # cell 5 * r + c
        value = self.value(torch.cat([g, pooled], -1)).squeeze(-1)
        return scores, value


class MlpNet(nn.Module):
    """Separate actor and critic MLPs on the flat 522-number observation (CleanRL's network)."""

    def __init__(self, hidden: list[int], obs_size: int = BOARD + CARD + UNSEEN):
        super().__init__()
        self.actor = _mlp([obs_size, *hidden, 25], final_act=False)
        self.critic = _mlp([obs_size, *hidden, 1], final_act=False)

    def forward(self, obs: "torch.Tensor") -> tuple["torch.Tensor", "torch.Tensor"]:
        """(scores of the 25 cells, state value) for a batch of flat observations."""
        x = obs.float()
        return self.actor(x), self.critic(x).squeeze(-1)


def make_net(net: str, hidden: list[int]) -> "nn.Module":
    """The network called ``net`` ('lines' or 'mlp') with the given hidden sizes."""
    if net == "lines":
        return LinesNet(list(hidden))
    if net == "mlp":
        return MlpNet(list(hidden))
    raise ValueError(f"net={net!r}: expected 'lines' or 'mlp'")


def masked_logits(scores: "torch.Tensor", mask: "torch.Tensor") -> "torch.Tensor":
    """Scores with illegal cells set to -inf (rows without a legal cell are left unmasked)."""
    mask = mask.bool()
    mask = mask | ~mask.any(-1, keepdim=True)
    return scores.masked_fill(~mask, float("-inf"))


def gae(rewards: "torch.Tensor", dones: "torch.Tensor", values: "torch.Tensor", next_value: "torch.Tensor",
        gamma: float, lam: float) -> tuple["torch.Tensor", "torch.Tensor"]:
    """Generalised advantage estimates of a ``(T, N)`` rollout, and the value targets ``advantages + values``.

    ``dones[t]`` marks a step whose game ended, so nothing after it flows back into it: neither the next value nor
    the next advantages.  ``next_value`` is the value of the observation after the last step (the bootstrap)."""
    steps = rewards.shape[0]
    adv = torch.zeros_like(rewards)
    last = torch.zeros_like(next_value)
    for t in reversed(range(steps)):
        nxt = next_value if t == steps - 1 else values[t + 1]
        nonterminal = 1.0 - dones[t]
        delta = rewards[t] + gamma * nxt * nonterminal - values[t]
        last = delta + gamma * lam * nonterminal * last
        adv[t] = last
    return adv, adv + values


def ppo_losses(scores: "torch.Tensor", value: "torch.Tensor", mask: "torch.Tensor", actions: "torch.Tensor",
               old_logp: "torch.Tensor", adv: "torch.Tensor", ret: "torch.Tensor", clip_coef: float,
               ent_coef: float = 0.0, vf_coef: float = 0.5):
    """One minibatch's ``(loss, pg_loss, v_loss, entropy, logp, ratio)``; ``loss = pg_loss - ent_coef * entropy +
    vf_coef * v_loss`` is what the optimiser minimises.

    The policy is the softmax of ``scores`` over the legal cells of ``mask`` (a row with none legal: over every
    cell); ``logp`` is the log-probability of ``actions`` under it and ``ratio`` its ratio to ``old_logp``, the one
    they were sampled with.  Advantages are normalised over the minibatch (one sample is left as it is: its std is
    NaN), the policy loss is PPO's clipped surrogate, the value loss half the mean squared error to ``ret``, and the
    entropy that of the legal cells only."""
    legal = mask | ~mask.any(-1, keepdim=True)
    logp_all = torch.log_softmax(scores.masked_fill(~legal, float("-inf")), -1)
    logp = logp_all.gather(1, actions[:, None]).squeeze(1)
    # entropy over legal cells only (filling before the product keeps gradients finite)
    entropy = -(logp_all.exp() * logp_all.masked_fill(~legal, 0.0)).sum(-1).mean()
    ratio = (logp - old_logp).exp()
    a = adv
    if a.numel() > 1:  # as SB3: one sample has no spread (its std is NaN), so it stays as it is
        a = (a - a.mean()) / (a.std() + 1e-8)
    pg_loss = torch.max(-a * ratio, -a * ratio.clamp(1 - clip_coef, 1 + clip_coef)).mean()
    v_loss = 0.5 * ((value - ret) ** 2).mean()
    return pg_loss - ent_coef * entropy + vf_coef * v_loss, pg_loss, v_loss, entropy, logp, ratio


def make_env(cfg: TrainConfig, num_envs: int):
    """The vector env of ``num_envs`` games under the config's rules and reward."""
    import gymnasium as gym

    import pokersquares_env  # noqa: F401  (registers PokerSquares-v0)

    mode = "vector_entry_point" if cfg.vectorization == "native" else "sync"
    try:
        return gym.make_vec("PokerSquares-v0", num_envs=num_envs, vectorization_mode=mode, **cfg.rules_kwargs())
    except gym.error.Error as exc:
        if mode == "vector_entry_point":
            raise RuntimeError(
                f"the native vector env is not available ({exc}); train with vectorization='sync'"
            ) from None
        raise


def games_state(envs: Any, **arrays: Any) -> dict[str, Any] | None:
    """The games in progress, for a checkpoint: the vector env pickled (its boards, decks and generator) and the
    trainer's arrays that go with it (the last observation, masks, ...); None where the env cannot be pickled
    (``vectorization='sync'``), whose resumed run starts new games."""
    try:
        env = pickle.dumps(envs)
    except Exception:  # noqa: BLE001 - gymnasium's SyncVectorEnv holds local functions
        return None
    from pokersquares_env import __version__

    return {"env": env, "version": __version__,
            **{k: np.array(v) if v is not None else None for k, v in arrays.items()}}


#: the classes and functions the pickled games in progress (:func:`games_state`) are built from: the native vector
#: env, its game, rules and point system, its gymnasium spaces and spec, numpy arrays and generators.  The games are
#: unpickled with these only (:class:`_GamesUnpickler`), so that a checkpoint from elsewhere runs no code on --resume.
_GAMES_GLOBALS: dict[str, set[str]] = {
    "pokersquares_env.vector": {"PokerSquaresVectorEnv"},
    "pokersquares_env.core": {"PokerSquaresGame", "Rules", "GameState"},
    "pokersquares_env.scoring": {"PointSystem", "HandCategory"},
    "gymnasium.envs.registration": {"EnvSpec"},
    "gymnasium.spaces.box": {"Box"},
    "gymnasium.spaces.discrete": {"Discrete"},
    "gymnasium.spaces.multi_discrete": {"MultiDiscrete"},
    "gymnasium.spaces.multi_binary": {"MultiBinary"},
    "numpy": {"dtype", "ndarray"},
    "numpy._core.multiarray": {"_reconstruct", "scalar"},  # numpy 2
    "numpy.core.multiarray": {"_reconstruct", "scalar"},  # numpy 1
    "numpy.random._pickle": {"__bit_generator_ctor", "__generator_ctor"},
    "numpy.random._pcg64": {"PCG64"},
    "numpy.random.bit_generator": {"SeedSequence", "__pyx_unpickle_SeedSequence"},
}


class _GamesUnpickler(pickle.Unpickler):
    """Unpickles the games in progress from :data:`_GAMES_GLOBALS` only: any other class or function named in the
    pickle (``os.system``, say) is refused before it is looked up, let alone called."""

    def find_class(self, module: str, name: str) -> Any:
        """The class ``module.name`` if the allow-list holds it, else an ``UnpicklingError`` naming it."""
        if name in _GAMES_GLOBALS.get(module, ()) or (module == "numpy.dtypes" and name.endswith("DType")):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not one of the classes the games in progress are built "
                                     f"from (checkpoints are loaded without running code they hold)")


def restore_games(state: dict[str, Any] | None, cfg: TrainConfig, num_envs: int) -> dict[str, Any] | None:
    """The games a checkpoint saved (:func:`games_state`), unpickled: a dict with ``env`` and the trainer's arrays,
    or None where the checkpoint holds none (an older version's, or ``vectorization='sync'``), with a note on stderr:
    the resumed run then starts new games."""
    from pokersquares_env import __version__

    if state is None:
        return None
    games = state.get("games")
    why = None
    if games is None:
        why = "holds no games in progress (" + ("sync vectorization" if cfg.vectorization == "sync"
                                                 else "saved by an older version") + ")"
    elif not isinstance(games, dict) or "env" not in games:
        why = f"holds games that cannot be read ({type(games).__name__} without an env)"
    elif games.get("version") != __version__:  # another version's env may not unpickle into this one's
        why = f"holds games of pokersquares_env {games.get('version')!r}, not of this {__version__!r}"
    else:
        try:
            env = _GamesUnpickler(io.BytesIO(games["env"])).load()
        except Exception as exc:  # noqa: BLE001 - a damaged blob fails in many ways
            env, why = None, f"holds games that cannot be read ({type(exc).__name__}: {exc})"
        if why is None and getattr(env, "num_envs", None) != num_envs:
            why = f"holds games of {getattr(env, 'num_envs', None)!r} envs, not {num_envs}"
    if why is not None:
        print(f"--resume: the checkpoint {why}: the resumed run starts new games", file=sys.stderr)
        return None
    return {**games, "env": env}


def _numpy_globals() -> list[Any]:
    """What the numpy arrays a checkpoint holds (the games in progress) unpickle through: the array and dtype
    classes and numpy's array rebuilder (``numpy._core`` in numpy 2, ``numpy.core`` in numpy 1)."""
    try:
        from numpy._core.multiarray import _reconstruct
    except ImportError:  # numpy 1
        from numpy.core.multiarray import _reconstruct
    dtypes = sorted({type(np.dtype(code)) for code in np.typecodes["All"]}, key=lambda t: t.__name__)
    return [_reconstruct, np.ndarray, np.dtype, *(t for t in dtypes if t is not np.dtype)]


def safe_load(path: str | Path) -> Any:
    """``torch.load`` of a model file or checkpoint with ``weights_only=True``: tensors, containers, numbers, text
    and numpy arrays only, so that a file from elsewhere cannot run code when it is loaded (torch refuses anything
    else, e.g. an object whose unpickling would call a function)."""
    with torch.serialization.safe_globals(_numpy_globals()):  # torch >= 2.5 (the package's requirement)
        return torch.load(Path(path), map_location="cpu", weights_only=True)


def _torch_reason(exc: BaseException) -> str:
    """``exc``'s message; for a refusal of ``weights_only`` loading, only torch's reason (not its advice to load
    with ``weights_only=False``, which would run whatever code the file holds)."""
    text = str(exc)
    if "Weights only load failed" not in text:
        return text
    skip = ("Weights only load failed", "Please file an issue", "Check the documentation")
    return " ".join(line.strip() for line in text.splitlines() if line.strip() and not line.startswith(skip))


def unsafe_objects(exc: BaseException) -> str:
    """What a file :func:`safe_load` refused for the objects it holds, in a few words with torch's reason; "" when
    ``exc`` is another failure (a damaged or foreign file)."""
    text = str(exc)
    if (not isinstance(exc, pickle.UnpicklingError) or "Weights only load failed" not in text
            or not any(word in text for word in ("GLOBAL", "global", "allowlisted"))):  # not: a damaged pickle
        return ""
    return (f"it holds Python objects other than tensors, numbers, text and numpy arrays ({_torch_reason(exc)}), "
            f"which loading would have to build or call: model files and checkpoints are loaded without running "
            f"code they hold")


def load_failure(exc: BaseException) -> str:
    """Why :func:`safe_load` failed on a file, for an error message naming it."""
    return unsafe_objects(exc) or f"{type(exc).__name__}: {_torch_reason(exc)}"


def load_policy(path: str | Path) -> tuple["nn.Module", dict[str, Any]]:
    """The network and saved metadata of a torch model file (fast-ppo or dqn ``model.pt``); a ``ValueError`` naming
    the file if it is not one.  The file is read by :func:`safe_load`: loading it runs no code it holds."""
    try:
        blob = safe_load(path)
    except Exception as exc:  # noqa: BLE001 - torch raises many kinds on a file that is not a model
        if unsafe_objects(exc):
            raise ValueError(f"{str(path)!r} is refused: {unsafe_objects(exc)}; expected the model.pt a fast-ppo or "
                             f"dqn run saved") from None
        raise ValueError(f"{str(path)!r} is not a torch model file ({load_failure(exc)}): expected the model.pt a "
                         f"fast-ppo or dqn run saved") from None
    if not isinstance(blob, dict) or not {"net", "hidden", "state_dict"} <= set(blob):
        raise ValueError(f"{str(path)!r} is not a fast-ppo or dqn model file (it lacks net, hidden and state_dict)")
    net, hidden = blob["net"], blob["hidden"]
    if not isinstance(net, str) or net not in ("lines", "mlp"):
        raise ValueError(f"{str(path)!r} records net={net!r}: expected 'lines' or 'mlp' (a fast-ppo or dqn model "
                         f"file)")
    if (not isinstance(hidden, (list, tuple)) or not hidden
            or not all(isinstance(h, int) and not isinstance(h, bool) and h > 0 for h in hidden)):
        raise ValueError(f"{str(path)!r} records hidden={hidden!r}: expected a non-empty list of positive layer "
                         f"sizes (a fast-ppo or dqn model file)")
    model = make_net(net, list(hidden))
    state_dict = blob["state_dict"]
    try:
        if not isinstance(state_dict, dict):
            raise TypeError(f"state_dict is a {type(state_dict).__name__}, not a dict of tensors")
        model.load_state_dict(state_dict)
    except Exception as exc:  # noqa: BLE001 - torch reports missing, unexpected and mis-sized weights its own ways
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        why = " ".join(lines[1:3] or lines) + (f" (and {len(lines) - 3} more)" if len(lines) > 3 else "")
        raise ValueError(f"{str(path)!r}: its weights do not fit the net={net!r}, hidden={list(hidden)!r} network "
                         f"it records ({type(exc).__name__}: {why}): expected the model.pt a fast-ppo or dqn run "
                         f"saved, undamaged") from None
    for name, tensor in state_dict.items():  # a NaN weight would make the agent fail every game, move by move
        if torch.is_tensor(tensor) and tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            bad = int((~torch.isfinite(tensor)).sum())
            raise ValueError(f"{str(path)!r}: tensor {name!r} holds {bad} non-finite value(s) (NaN or infinity) of "
                             f"{tensor.numel()}: the training diverged; expected finite weights (train again, e.g. "
                             f"with a lower learning rate, or load an earlier checkpoint)")
    model.eval()
    return model, blob


_READ_NOW = object()  # save_model: no point system given, read the one cfg.scoring names


def save_model(path: Path, model: "nn.Module", cfg: TrainConfig, *, point_system: Any = _READ_NOW,
               **extra: Any) -> None:
    """Write a torch model file holding the weights and what is needed to rebuild the network.  ``point_system``:
    the table the run trains for, as read when it started (``RunFolder.point_system``; by default the one
    ``cfg.scoring`` names, read now), which learned agents compare their game with."""
    from agents.config import point_table

    if point_system is _READ_NOW:
        point_system = point_table(cfg.scoring)
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(
        {"algo": cfg.algo, "net": cfg.net, "hidden": list(cfg.hidden), "config": cfg.to_dict(),
         "point_system": point_system, "state_dict": model.state_dict(), **extra},
        tmp,
    )
    tmp.replace(path)


def train(cfg: TrainConfig, run: Any) -> "nn.Module":
    """Train with masked PPO; ``run`` (an :class:`agents.train.RunFolder`) logs, evaluates and checkpoints."""
    torch.set_num_threads(cfg.torch_threads)
    torch.manual_seed(cfg.seed)
    N, T = cfg.num_envs, cfg.num_steps
    batch = N * T
    num_updates = max(1, math.ceil(cfg.timesteps / batch))  # at least the step budget, like SB3
    model = make_net(cfg.net, cfg.hidden)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate, eps=1e-5)
    start_update, global_step = 0, 0
    state = run.load_checkpoint()
    if state is not None:
        model.load_state_dict(state["state_dict"])
        optimizer.load_state_dict(state["optimizer"])
        start_update, global_step = state["update"], state["global_step"]
        torch.set_rng_state(state["torch_rng"])
    policy = _greedy_policy(model)
    next_update = start_update

    def save_checkpoint(path: Path) -> None:  # the network, optimiser, torch RNG and the games in progress
        save_model(path, model, cfg, point_system=run.point_system, optimizer=optimizer.state_dict(),
                   update=next_update, global_step=global_step,
                   torch_rng=torch.get_rng_state(),
                   games=games_state(envs, obs=obs.numpy(), mask=mask.numpy(), reset_step=reset_step.numpy(), phi=phi),
                   progress=run.checkpoint_progress)  # --resume goes on from this record

    potential = run.shaping_potential()  # built before the run's clock started (train)
    games = restore_games(state, cfg, N)
    if games is not None:  # the resumed run goes on with the games it was playing: as if never interrupted
        envs, phi = games["env"], games["phi"]
        obs, mask = torch.as_tensor(games["obs"]), torch.as_tensor(games["mask"])
        reset_step = torch.as_tensor(games["reset_step"])
    else:  # a new run, or a checkpoint without its games: new deals from a seed of the run's seed and progress
        envs = make_env(cfg, N)
        obs_np, info = envs.reset(seed=cfg.seed + 7919 * start_update)
        phi = potential(obs_np) if potential is not None else None
        obs = torch.as_tensor(obs_np)
        mask = torch.as_tensor(info["action_mask"]).bool()
        reset_step = torch.zeros(N, dtype=torch.bool)  # the next step only resets these games

    b_obs = torch.zeros((T, N, obs.shape[1]), dtype=torch.uint8)
    b_mask = torch.zeros((T, N, 25), dtype=torch.bool)
    b_act = torch.zeros((T, N), dtype=torch.long)
    b_logp = torch.zeros((T, N))
    b_rew = torch.zeros((T, N))
    b_done = torch.zeros((T, N))
    b_val = torch.zeros((T, N))
    b_valid = torch.zeros((T, N), dtype=torch.bool)

    run.start(total=num_updates * batch, done=global_step)
    try:
        last = start_update if run.spent_before() else num_updates  # a resumed run's time limit may be spent
        for update in range(start_update, last):
            if cfg.anneal_lr:
                optimizer.param_groups[0]["lr"] = cfg.learning_rate * max(0.02, 1.0 - run.progress_fraction(global_step))
            # ---- rollout ---------------------------------------------------------
            for t in range(T):
                b_obs[t] = obs
                b_mask[t] = mask
                b_valid[t] = ~reset_step
                with torch.no_grad():
                    scores, value = model(obs)
                    dist = torch.distributions.Categorical(logits=masked_logits(scores, mask), validate_args=False)
                    try:
                        action = dist.sample()
                    except RuntimeError:  # finite weights so large that the scores overflow: a diverged run
                        if not bool(torch.isfinite(scores).all()):
                            raise diverged(cfg, global_step, "the policy's scores") from None
                        raise
                b_act[t], b_logp[t], b_val[t] = action, dist.log_prob(action), value
                obs_np, reward, terminated, truncated, info = envs.step(action.numpy())
                done = np.logical_or(terminated, truncated)
                if potential is not None:  # r + gamma * phi(s') - phi(s); autoreset steps are left alone
                    phi_next = potential(obs_np)
                    reward = shaped_rewards(reward, phi, phi_next, cfg.gamma, ~reset_step.numpy(), terminated)
                    phi = phi_next
                b_rew[t] = torch.as_tensor(reward, dtype=torch.float32)
                b_done[t] = torch.as_tensor(done, dtype=torch.float32)
                obs = torch.as_tensor(obs_np)
                mask = torch.as_tensor(info["action_mask"]).bool()
                reset_step = torch.as_tensor(done)
                if done.any():
                    run.episodes(_final_scores(info, done))
            global_step += batch
            # ---- advantages (GAE; an episode's end cuts the recursion) -------------
            with torch.no_grad():
                _, next_value = model(obs)
                adv, ret = gae(b_rew, b_done, b_val, next_value, cfg.gamma, cfg.gae_lambda)
            # ---- optimise the policy and value networks ------------------------------
            valid = b_valid.reshape(-1)
            f_obs, f_mask = b_obs.reshape(batch, -1)[valid], b_mask.reshape(batch, 25)[valid]
            f_act, f_logp = b_act.reshape(-1)[valid], b_logp.reshape(-1)[valid]
            f_adv, f_ret = adv.reshape(-1)[valid], ret.reshape(-1)[valid]
            n = f_obs.shape[0]
            mb = min(cfg.minibatch_size, n)
            stats = {"clipfrac": [], "approx_kl": [], "entropy": [], "pg_loss": [], "v_loss": []}
            # a rollout of autoreset steps only (num_steps=1, every game just ended) has no valid sample: nothing to
            # optimise, so the update is skipped (and still logged, stepped and checkpointed)
            epochs = cfg.update_epochs if n > 0 else 0
            for _epoch in range(epochs):
                perm = torch.randperm(n)
                for lo in range(0, n - mb + 1, mb):
                    idx = perm[lo : lo + mb]
                    scores, value = model(f_obs[idx])
                    loss, pg_loss, v_loss, entropy, logp, ratio = ppo_losses(
                        scores, value, f_mask[idx], f_act[idx], f_logp[idx], f_adv[idx], f_ret[idx], cfg.clip_coef,
                        cfg.ent_coef, cfg.vf_coef)
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
                    optimizer.step()
                    with torch.no_grad():
                        stats["approx_kl"].append(((ratio - 1) - (logp - f_logp[idx])).mean().item())
                        stats["clipfrac"].append(((ratio - 1.0).abs() > cfg.clip_coef).float().mean().item())
                    stats["entropy"].append(entropy.item())
                    stats["pg_loss"].append(pg_loss.item())
                    stats["v_loss"].append(v_loss.item())
            if epochs:
                check_finite(model, cfg, global_step, obs)  # before the weights are played, logged or checkpointed
            run.scalars(global_step, {k: float(np.mean(v)) for k, v in stats.items() if v})
            run.scalars(global_step, {"learning_rate": optimizer.param_groups[0]["lr"]})
            run.step(global_step, policy)
            next_update = update + 1
            run.maybe_checkpoint(global_step, save_checkpoint)
            if run.stop_requested or run.out_of_time():
                break
        # so --resume continues from the end, not before it (with the games open: before the env closes)
        run.maybe_checkpoint(global_step, save_checkpoint, force=True)
    finally:
        envs.close()
    run.save_final(lambda path: save_model(path, model, cfg, point_system=run.point_system,
                                           global_step=global_step))
    return model


def _final_scores(info: dict[str, Any], done: np.ndarray) -> list[float]:
    """Scores (active system) of the games that ended this step, from the batched final infos."""
    if "score" in info:
        have = info.get("_score", done)
        return [float(s) for s, h in zip(np.asarray(info["score"]), np.asarray(have), strict=True) if h]
    return []


def _greedy_policy(model: "nn.Module") -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    def act(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            scores, _ = model(torch.as_tensor(obs))
            return masked_logits(scores, torch.as_tensor(masks)).argmax(-1).numpy()

    return act
