"""Potential-based reward shaping for the trainers: ``r + gamma * phi(s') - phi(s)`` with a line-value potential.

Ng, Harada and Russell (1999) showed that adding ``F = gamma * phi(s') - phi(s)``
to every reward leaves the optimal policies of an MDP unchanged, for any
potential ``phi`` of the state that is 0 at the end.  With ``gamma = 1`` (the
default of every trainer here) the shaping terms of a game telescope to
``-phi(s_0)``, the same constant for every game, so a game's shaped return is
its score minus a constant: only *when* credit arrives changes.  Line rewards
arrive when a row or column completes, often twenty moves after the placement
that made or broke it; the shaped reward credits a placement at once with the
change it makes to the board's estimated worth.

The potential here is the expected final points of the board's incomplete
lines, ``phi(s) = scale * sum over incomplete lines of V[key(line), is_column]``,
read from the observation alone (so it works for any env that emits
``PokerSquares-v0`` observations).  ``V`` is
:func:`agents.lines.heuristic_values` (``shaping="heuristic"``, no training) or
the phase-free average of learned self-play tables (``shaping="tables"``, see
:mod:`agents.tables`).  Complete lines count 0 (their points are the env's own
reward), so ``phi`` is 0 on a full board.  Under ``reward_mode="terminal"`` no line's points arrive before the
end, so there the potential also counts complete lines (at their points) and a finished game's potential is taken
as 0: the last step's reward is then the score minus the potential before it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.batch import IS_COL
from agents.lines import KEY_T, NUM_KEYS, heuristic_values
from pokersquares_env._adapter import check_number
from pokersquares_env.scoring import line_keys, point_system

__all__ = ["SHAPINGS", "LinePotential", "board_codes", "potential_for", "shape_sb3_vec_env", "shaped_rewards"]

SHAPINGS = ("none", "heuristic", "tables")
_CARD = 18
_LINES = np.array([[5 * r + c for c in range(5)] for r in range(5)] + [[5 * r + c for r in range(5)] for c in range(5)])


def board_codes(obs: np.ndarray) -> np.ndarray:
    """The ``(N, 25)`` card codes (-1 empty, 52 a joker) of a batch of flat ``PokerSquares-v0`` observations."""
    obs = np.asarray(obs)
    if obs.ndim != 2 or obs.shape[1] < 25 * _CARD:
        raise ValueError(f"observations of shape {obs.shape}: expected (N, >= {25 * _CARD}) flat PokerSquares-v0 rows")
    board = obs[:, : 25 * _CARD].reshape(-1, 25, _CARD)
    occupied = board.any(-1)
    code = 13 * board[..., 13:17].argmax(-1) + board[..., :13].argmax(-1)
    code = np.where(board[..., 17] > 0, 52, code)
    return np.where(occupied, code, -1).astype(np.int64)


class LinePotential:
    """``phi(obs)``: ``scale`` times the summed values of the incomplete lines of each board.

    ``values``: an array ``(NUM_KEYS, 2)`` of line values (rows, columns) by ``LINE_MASK`` key. ``scale``: a finite
    number (a ``TypeError`` or ``ValueError`` names anything else). ``complete=True`` also counts complete lines, at
    their values (for ``reward_mode="terminal"``, where no line's points are paid before the end: the potential then
    tracks the whole expected score, and the trainers take the potential after a game's last step as 0).
    """

    def __init__(self, values: np.ndarray, scale: float = 1.0, complete: bool = False) -> None:
        values = np.asarray(values, dtype=np.float64)
        if values.shape != (NUM_KEYS, 2) or not np.isfinite(values).all():
            raise ValueError(f"line values of shape {values.shape}: expected finite values of shape ({NUM_KEYS}, 2)")
        scale = check_number("scale", scale)  # a NaN or infinite scale would make every potential NaN
        self.complete = bool(complete)
        self.values = (values if complete else np.where((KEY_T == 5)[:, None], 0.0, values)) * scale

    @classmethod
    def make(cls, kind: str, system: Any, rules: Any = None, scale: float = 1.0, complete: bool = False,
             **table_options: Any) -> "LinePotential":
        """The potential called ``kind`` (``heuristic`` or ``tables``) for point system ``system``.

        ``tables``: the tables :func:`agents.tables.tables_for` gives for ``table_options`` (by default those of
        the ``expectimax`` agent, so the two share one cached training).
        """
        ps = point_system(system)
        if kind == "heuristic":
            return cls(heuristic_values(ps), scale, complete)
        if kind == "tables":
            from agents.expectimax import DEFAULT_FEATURES, DEFAULT_GAMES, DEFAULT_PHASES
            from agents.tables import tables_for
            from pokersquares_env.core import Rules

            options = dict(tables=None, games=DEFAULT_GAMES, phases=DEFAULT_PHASES, features=DEFAULT_FEATURES,
                           cache=True)
            vt = tables_for(ps, rules or Rules(), **{**options, **table_options})
            v = vt.values.reshape(NUM_KEYS, 2, -1)
            c = vt.counts.reshape(NUM_KEYS, 2, -1)
            n = c.sum(2)
            mean = (v * c).sum(2) / np.maximum(n, 1e-9)  # visit-weighted over phases (and outs buckets)
            flat = v.mean(2)  # never-visited keys: the plain mean of their (prior-blended) values
            return cls(np.where(n > 0, mean, flat), scale, complete)
        if kind == "none":  # a valid --shaping, but one with no potential to make
            raise ValueError("shaping='none' has no potential: expected 'heuristic' or 'tables' (a caller given "
                             "'none' shapes nothing and makes no LinePotential)")
        raise ValueError(f"shaping={kind!r}: expected 'heuristic' or 'tables' (the potentials of --shaping "
                         f"{', '.join(k for k in SHAPINGS if k != 'none')})")

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """``(N,)`` potentials of a batch of flat observations."""
        keys = line_keys(board_codes(obs)[:, _LINES])  # (N, 10)
        return self.values[keys, IS_COL].sum(1)


def shaped_rewards(rewards: np.ndarray, phi: np.ndarray, phi_next: np.ndarray, gamma: float,
                   valid: np.ndarray, terminal: np.ndarray | None = None) -> np.ndarray:
    """``rewards + gamma * phi_next - phi`` where ``valid`` (no shaping on autoreset steps, which start a new game);
    ``phi_next`` counts as 0 where ``terminal`` (a finished game's potential is 0 by definition)."""
    if terminal is not None:
        phi_next = np.where(terminal, 0.0, phi_next)
    return np.where(valid, rewards + gamma * phi_next - phi, rewards)


def potential_for(cfg: Any) -> LinePotential | None:
    """The potential of a training config's ``shaping`` (``None`` for ``"none"``), in the env's scaled reward units."""
    if cfg.shaping == "none":
        return None
    from pokersquares_env.core import Rules
    from pokersquares_env.scoring import reward_scale_factor

    scale = reward_scale_factor(cfg.reward_scale, cfg.scoring, cfg.jokers)
    rules = Rules(jokers=cfg.jokers, placement=cfg.placement, first_cell=cfg.first_cell)
    return LinePotential.make(cfg.shaping, cfg.scoring, rules, scale, complete=cfg.reward_mode == "terminal")


def shape_sb3_vec_env(venv: Any, potential: LinePotential, gamma: float = 1.0) -> Any:
    """``venv`` (a Stable-Baselines3 ``VecEnv`` of ``PokerSquares-v0`` games) with shaped rewards.

    SB3 vector envs reset a finished game within the same step (the observation returned is the next game's first
    one), so a finishing step's target potential is 0 (a full board's) and the stored potential restarts from the
    new game's first observation.  Action masks and every other attribute pass through (``VecEnvWrapper``).
    """
    from stable_baselines3.common.vec_env import VecEnvWrapper

    class PotentialShapingVecEnv(VecEnvWrapper):
        """Adds ``gamma * phi(s') - phi(s)`` to every reward (see :mod:`agents.shaping`)."""

        def __init__(self, venv: Any) -> None:
            super().__init__(venv)
            self.phi: np.ndarray | None = None

        def reset(self) -> Any:
            obs = self.venv.reset()
            self.phi = potential(obs)
            return obs

        def step_wait(self) -> Any:
            obs, rewards, dones, infos = self.venv.step_wait()
            phi_next = potential(obs)  # where done: the next game's first board (the finished one counts as 0)
            shaped = shaped_rewards(rewards, self.phi, phi_next, gamma, np.ones(len(rewards), dtype=bool), dones)
            self.phi = phi_next
            return obs, shaped.astype(np.asarray(rewards).dtype), dones, infos

    return PotentialShapingVecEnv(venv)
