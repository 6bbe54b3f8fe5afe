"""An SB3 ``VecEnv`` over the native vector env, with the ``action_masks()`` MaskablePPO asks for.

::

    from sb3_contrib import MaskablePPO
    from pokersquares_env.sb3 import PokerSquaresSB3VecEnv

    venv = PokerSquaresSB3VecEnv(num_envs=64, seed=0, scoring="english")
    model = MaskablePPO("MlpPolicy", venv, seed=0).learn(100_000)

Stable-Baselines3 is the optional extra ``train``: ``pip install "pokersquares_env[train]"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from pokersquares_env._adapter import check_seed
from pokersquares_env.vector import PokerSquaresVectorEnv, _check_action_items

__all__ = ["PokerSquaresSB3VecEnv", "make_sb3_vec_env"]

#: What the seed messages add: the adapter's seed seeds the vector env's one generator.
_SEED_NOTE = " (the vector env's one generator deals every sub-env from it)"


def _vec_env_base() -> type:
    try:
        from stable_baselines3.common.vec_env import VecEnv
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            'the SB3 adapter needs stable-baselines3: pip install "pokersquares_env[train]"'
        ) from exc
    return VecEnv


def make_sb3_vec_env(num_envs: int = 8, seed: int | None = None, **rules: Any):
    """An SB3 ``VecEnv`` of ``num_envs`` Poker Squares games (``rules``: the arguments of ``PokerSquares-v0``)."""
    return _adapter_class()(num_envs=num_envs, seed=seed, **rules)


def _per_env(info: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """One dict per sub-env with its ``action_mask`` (int8 (25,)) and ``card``, as each single env's info has them."""
    masks, cards = np.array(info["action_mask"]), info["card"].tolist()  # a copy: the env reuses its buffers
    return [{"action_mask": masks[i], "card": cards[i]} for i in range(n)]


def _plain(value: Any) -> Any:
    """A numpy value as plain Python (lists, ints, floats), as the single env reports it."""
    return value.tolist() if isinstance(value, (np.ndarray, np.generic)) else value


class _Adapter:
    """Presents :class:`PokerSquaresVectorEnv` as a Stable-Baselines3 ``VecEnv``.

    SB3 resets a finished sub-env within the same step and puts its last
    observation in ``infos[i]["terminal_observation"]``; the adapter does that
    with the vector env's ``reset(options={"reset_mask": ...})``.  A finished
    sub-env's ``infos[i]`` also holds the single env's final keys (``score``,
    ``scores``, ``hands``, ``board``, ``placements``, ``won``).
    ``action_masks()`` (and ``env_method("action_masks")``) give the legal
    cells as an ``(N, 25)`` bool array, which sb3-contrib's MaskablePPO uses.
    As with ``DummyVecEnv`` over the single env, every step's ``infos[i]``
    has ``action_mask`` and ``card`` (a finished game's: those of its last
    step, all zeros and -1), and ``reset_infos[i]`` those of the sub-env's
    latest new game.

    Observations are arrays the caller owns even over a vector env made with
    ``copy=False`` (SB3 keeps the last batch while it steps again).

    Seeding: ``seed`` (or SB3's ``venv.seed(s)``, which wins when both are
    given, as an algorithm's own seed should) seeds the vector env's
    generator at the next ``reset()``; see :class:`PokerSquaresVectorEnv`.
    Both are checked when given: a non-negative int or ``None``.
    ``set_options({"deck": d})`` (or a list of one such dict per sub-env) deals
    those draw orders at the next ``reset()``, as SB3's ``set_options`` does;
    a deck gives its cards as codes or text, as the single env's ``deck`` option.
    ``deck=None`` (or no ``deck``) for every sub-env shuffles, as the single
    env does; a deck for some sub-envs and ``None`` for others is refused
    (the one vector env deals either given decks or shuffled ones).
    """

    def __init__(self, num_envs: int | None = None, seed: int | None = None,
                 venv: PokerSquaresVectorEnv | None = None, **rules: Any) -> None:
        seed = check_seed(seed, _SEED_NOTE)  # now, not at the first reset
        if venv is not None:
            if rules:
                raise ValueError(f"pass either venv or rules {sorted(rules)}, not both")
            if not isinstance(venv, PokerSquaresVectorEnv):
                raise TypeError(f"venv={venv!r}: expected a PokerSquaresVectorEnv (or None to make one from num_envs "
                                f"and the rules)")
            if num_envs is not None and (isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer))):
                raise ValueError(f"num_envs={num_envs!r}: expected a positive integer (or None: the venv's)")
            if num_envs is not None and num_envs != venv.num_envs:
                raise ValueError(f"num_envs={num_envs!r} but venv has {venv.num_envs} sub-envs: pass one or the "
                                 f"other, or the same number")
        self.venv = venv if venv is not None else PokerSquaresVectorEnv(8 if num_envs is None else num_envs, **rules)
        # SB3's VecEnv reads ``render_mode`` through get_attr: the vector env's (None, "ansi" or "rgb_array").
        super().__init__(self.venv.num_envs, self.venv.single_observation_space, self.venv.single_action_space)
        self._seed = seed
        self._actions: np.ndarray | None = None

    # ---- the VecEnv API ---------------------------------------------------
    def seed(self, seed: int | None = None):
        """SB3's ``seed``: ``seed`` (a non-negative int, or ``None`` for a random one) seeds the next ``reset()``;
        a bad one is refused here, leaving the seed to come as it was."""
        return super().seed(check_seed(seed, _SEED_NOTE))

    def reset(self):
        """Reset every sub-env (cancelling actions step_async left pending); the batch of first observations."""
        seed = self._seed
        if self._seeds[0] is not None:
            seed = self._seeds[0]  # VecEnv.seed(s) ([s, s+1, ...]) wins over the constructor's seed, as in SB3
        options = self._deck_options()
        obs, info = self.venv.reset(seed=seed, options=options)
        self._actions = None  # a reset cancels actions step_async left pending (VecEnv.reset's contract)
        self.reset_infos = _per_env(info, self.num_envs)
        self._seed = None
        self._reset_seeds()
        self._reset_options()
        return obs if self.venv.copy else obs.copy()  # SB3 keeps it across the next step: never a buffer view

    def _deck_options(self) -> dict[str, Any] | None:
        """The vector env's reset options from SB3's ``set_options`` (per sub-env dicts; only ``deck`` is taken)."""
        given = []
        for i, o in enumerate(self._options):
            if o is not None and not isinstance(o, Mapping):
                raise TypeError(f"set_options: sub-env {i}'s options are {o!r}: expected None or a dict with the key "
                                f"'deck' (a list of one dict per sub-env, or one dict for all)")
            given.append(dict(o or {}))
        if not any(given):
            return None
        unknown = sorted(set().union(*given) - {"deck"}, key=str)  # keys of any type: an int and a str do not sort
        if unknown:
            raise ValueError(f"set_options: unknown reset option(s) {unknown}: expected 'deck' (the draw order of "
                             f"each sub-env)")
        decks = [o.get("deck") for o in given]  # no 'deck' and deck=None both shuffle, as in the single env
        if all(d is None for d in decks):
            return None
        missing = [i for i, d in enumerate(decks) if d is None]
        if missing:
            raise ValueError(f"set_options: 'deck' is given for some sub-envs only (none or None for sub-envs "
                             f"{missing}): the sub-envs share one vector env, which deals either the given decks or "
                             f"shuffled ones; give a deck for every sub-env (a list of one dict each, or one dict for "
                             f"all), or None for all of them to shuffle")
        return {"deck": decks}

    def step_async(self, actions: np.ndarray) -> None:
        """Store the actions for ``step_wait`` (a bool or an int beyond int64 in a list is refused here, naming it)."""
        self._actions = np.asarray(_check_action_items(actions))

    def step_wait(self):
        """Step every sub-env, resetting finished ones at once (SB3 semantics)."""
        if self._actions is None:
            raise RuntimeError("step_wait() called without step_async()")
        obs, reward, terminated, truncated, info = self.venv.step(self._actions)
        self._actions = None
        dones = terminated | truncated
        infos = _per_env(info, self.num_envs)  # a finished game's: its last step's (no legal cell, card -1)
        cut = (truncated & ~terminated).tolist()
        for i, entry in enumerate(infos):  # on every sub-env's info each step, as SB3's DummyVecEnv sets it
            entry["TimeLimit.truncated"] = cut[i]
        if dones.any():
            done_ids = np.flatnonzero(dones)
            last_obs = obs[done_ids]
            final = {key: info[key] for key in ("score", "hands", "board", "placements", "won") if key in info}
            new_obs, new_info = self.venv.reset(options={"reset_mask": dones})
            fresh = _per_env(new_info, self.num_envs)
            for i in done_ids.tolist():  # the new game's first mask and card, where SB3 keeps reset infos
                self.reset_infos[i] = fresh[i]
            if self.venv.copy:
                obs[done_ids] = new_obs[done_ids]
            else:  # a view of the env's buffer, which now holds the new games
                obs = new_obs
            for j, i in enumerate(done_ids.tolist()):  # one dict per finished game, as SB3 expects
                entry = infos[i]
                entry["terminal_observation"] = last_obs[j]
                for key, values in final.items():
                    entry[key] = _plain(values[i])
                if "placements" in entry:  # the cells played, as the single env gives them (the batch pads with -1)
                    entry["placements"] = [c for c in entry["placements"] if c >= 0]
                entry["scores"] = {"american": float(info["scores"]["american"][i]),
                                   "english": float(info["scores"]["english"][i])}
                if "illegal_action" in info and info["_illegal_action"][i]:
                    entry["illegal_action"] = info["illegal_action"][i]
        if not self.venv.copy:
            # SB3 stores this batch as the "last observation" of its rollout buffer only after the next step;
            # a view of the env's buffer would by then hold the next states.
            obs = obs.copy()
        return obs, reward.astype(np.float32), dones, infos

    def close(self) -> None:
        """Close the vector env."""
        self.venv.close()

    def action_masks(self) -> np.ndarray:
        """Legal cells of every sub-env: a bool array of shape (N, 25)."""
        return self.venv.action_masks()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """The vector env's attribute, once per sub-env in ``indices`` (the sub-envs share their settings)."""
        # A sub-env's spaces are the vector env's single ones, as DummyVecEnv's get_attr gives them.
        attr_name = {"observation_space": "single_observation_space",
                     "action_space": "single_action_space"}.get(attr_name, attr_name)
        value = getattr(self.venv, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Set an attribute of the vector env (shared by all sub-envs, so ``indices`` must name every one of them)."""
        ids = list(self._get_indices(indices))
        if not self._covers_all(ids):
            raise ValueError(f"set_attr({attr_name!r}) for sub-envs {ids}: the sub-envs share one vector env; "
                             f"expected all {self.num_envs} (each of 0..{self.num_envs - 1}, in any order)")
        setattr(self.venv, attr_name, value)

    def _covers_all(self, ids: list[int]) -> bool:
        """Whether ``ids`` names every sub-env (in any order, repeats allowed), not just ``num_envs`` of them."""
        return set(ids) == set(range(self.num_envs))

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> Any:
        """``action_masks`` gives the (len(indices), 25) masks, in the order of ``indices``; other methods run once on
        the vector env.

        The sub-envs share one vector env, so any other method needs ``indices`` to cover them all, and
        ``reset``/``step``/``close`` are refused: they would move every game behind SB3's back (use the
        ``VecEnv`` methods).
        """
        ids = list(self._get_indices(indices))
        if method_name == "action_masks":
            return self.venv.action_masks()[ids]  # in the order of ids, repeats kept, as DummyVecEnv gives them
        if method_name in ("reset", "step", "close"):
            raise ValueError(f"env_method({method_name!r}): the sub-envs share one vector env, so this would "
                             f"{method_name} every game without SB3 knowing; call the VecEnv's own {method_name}()")
        if not self._covers_all(ids):
            raise ValueError(f"env_method({method_name!r}) for sub-envs {ids}: the sub-envs share one vector env; "
                             f"expected all {self.num_envs} (each of 0..{self.num_envs - 1}, in any order)")
        result = getattr(self.venv, method_name)(*method_args, **method_kwargs)
        return [result for _ in ids]

    def _get_indices(self, indices: Any) -> list[int]:
        """``indices`` (None for every sub-env, one index, or an iterable of them) as a list of sub-env numbers in
        0..N-1; a negative index counts from the end, as ``DummyVecEnv`` reads it.  A sub-env that does not exist is
        an ``IndexError`` naming it, an index that is not an integer a ``TypeError``."""
        n = self.num_envs
        if indices is None:
            return list(range(n))
        try:
            items = [indices] if isinstance(indices, (int, np.integer)) else list(indices)
        except TypeError:  # not iterable: one index (refused below unless it is an integer)
            items = [indices]
        ids = []
        for i in items:
            if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
                raise TypeError(f"indices={indices!r}: {i!r} is not a sub-env index: expected integers")
            if not -n <= i < n:
                raise IndexError(f"indices={indices!r}: there is no sub-env {int(i)}: expected 0..{n - 1} "
                                 f"(or -{n}..-1 from the end)")
            ids.append(int(i) % n)
        return ids

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        """Sub-envs are never wrapped by Gymnasium wrappers."""
        return [False for _ in self._get_indices(indices)]

    def get_images(self):
        """Every sub-env's RGB frame when the vector env was made with ``render_mode="rgb_array"`` (SB3's
        ``render()`` tiles them), else ``None`` for each."""
        if self.venv.render_mode != "rgb_array":
            return [None for _ in range(self.num_envs)]
        return list(self.venv.render())


def _adapter_class() -> type:
    """``PokerSquaresSB3VecEnv``, built on first use so that importing this module needs no SB3."""
    cls = globals().get("PokerSquaresSB3VecEnv")
    if cls is None:
        cls = type("PokerSquaresSB3VecEnv", (_Adapter, _vec_env_base()),
                   {"__doc__": _Adapter.__doc__, "__module__": __name__})
        globals()["PokerSquaresSB3VecEnv"] = cls
    return cls


def __getattr__(name: str):
    if name == "PokerSquaresSB3VecEnv":
        return _adapter_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
