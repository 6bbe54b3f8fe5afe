"""The native vector env plays exactly the games of N single envs (obs, rewards, ends, infos, autoreset)."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pokersquares_env  # noqa: F401  (registers PokerSquares-v0)
from pokersquares_env.core import IllegalActionError
from pokersquares_env.env import PokerSquaresEnv
from pokersquares_env.scoring import score_grids
from pokersquares_env.vector import PokerSquaresVectorEnv, numba_available

FINAL_KEYS = ("score", "scores", "hands", "board", "placements", "won")
#: Both implementations of the vector env's step; each must play exactly the single env's games.
BACKENDS = ["numpy", pytest.param("numba", marks=pytest.mark.skipif(not numba_available(), reason="numba not installed"))]


class DeckDealer:
    """The decks a single env seeded with ``seed`` deals, one reset after another."""

    def __init__(self, seed: int, **rules) -> None:
        self.env = PokerSquaresEnv(**rules)
        self.seed = seed

    def next(self) -> list[int]:
        if self.seed is not None:
            self.env.reset(seed=self.seed)
            self.seed = None
        else:
            self.env.reset()
        return list(self.env.state.deck)


def check_info(vinfo: dict, i: int, info: dict) -> None:
    """Sub-env ``i`` of the vector info holds exactly the single env's info."""
    np.testing.assert_array_equal(vinfo["action_mask"][i], info["action_mask"])
    assert vinfo["action_mask"].dtype == np.int8
    assert vinfo["_action_mask"][i] and vinfo["_card"][i]
    assert vinfo["card"][i] == info["card"]
    final = "score" in info
    for key in FINAL_KEYS:
        assert (key in vinfo and bool(vinfo[f"_{key}"][i])) == final, key
    if final:
        assert vinfo["score"][i] == info["score"]
        assert vinfo["scores"]["american"][i] == info["scores"]["american"]
        assert vinfo["scores"]["english"][i] == info["scores"]["english"]
        assert vinfo["scores"]["_american"][i] and vinfo["scores"]["_english"][i]
        assert vinfo["hands"][i].tolist() == info["hands"]
        assert vinfo["board"][i].tolist() == info["board"]
        placements = vinfo["placements"][i].tolist()
        assert placements[: len(info["placements"])] == info["placements"]
        assert all(c == -1 for c in placements[len(info["placements"]) :])
        assert bool(vinfo["won"][i]) == info["won"]
    if "illegal_action" in info:
        assert vinfo["_illegal_action"][i] and vinfo["illegal_action"][i] == info["illegal_action"]
    elif "illegal_action" in vinfo:
        assert not vinfo["_illegal_action"][i]


def play_both(num_envs: int, steps: int, rules: dict, *, seed: int = 0, policy_seed: int = 1,
              illegal_rate: float = 0.0, use_decks: bool = False, backend: str = "numpy") -> int:
    """Step a vector env and N single envs side by side with the same decks; return how many games ended."""
    venv = PokerSquaresVectorEnv(num_envs, backend=backend, **rules)
    assert venv.backend == backend
    singles = [PokerSquaresEnv(**rules) for _ in range(num_envs)]
    # Autoresets deal from the vector env's generator, seeded with ``seed``; given decks come from elsewhere.
    dealer = DeckDealer(seed, **rules)
    if use_decks:
        other = DeckDealer(seed + 1000, **rules)
        decks = [other.next() for _ in range(num_envs)]
        obs, vinfo = venv.reset(seed=seed, options={"deck": np.array(decks)})
    else:
        decks = [dealer.next() for _ in range(num_envs)]
        obs, vinfo = venv.reset(seed=seed)
    infos = []
    for i, env in enumerate(singles):
        o, info = env.reset(options={"deck": decks[i]})
        np.testing.assert_array_equal(obs[i], o)
        check_info(vinfo, i, info)
        infos.append(info)
    rng = np.random.default_rng(policy_seed)
    done = np.zeros(num_envs, dtype=bool)
    ended = 0
    for _ in range(steps):
        actions = np.zeros(num_envs, dtype=np.int64)
        for i in range(num_envs):
            legal = np.flatnonzero(infos[i]["action_mask"])
            if illegal_rate and rng.random() < illegal_rate:
                actions[i] = rng.integers(-2, 27)
            elif len(legal):
                actions[i] = rng.choice(legal)
        obs, reward, term, trunc, vinfo = venv.step(actions)
        assert reward.dtype == np.float64 and term.dtype == bool and not trunc.any()
        for i, env in enumerate(singles):
            if done[i]:  # NEXT_STEP autoreset: this step resets sub-env i and ignores its action
                o, info = env.reset(options={"deck": dealer.next()})
                r, t = 0.0, False
            else:
                o, r, t, _, info = env.step(int(actions[i]))
            np.testing.assert_array_equal(obs[i], o)
            assert reward[i] == r and term[i] == t
            check_info(vinfo, i, info)
            if t:  # no card to place once the game is over, however it ended
                assert info["card"] == -1 and not o[450:468].any()
            infos[i] = info
            ended += t
        done = term.copy()
        np.testing.assert_array_equal(venv.action_masks(), np.array([e.action_masks() for e in singles]))
    return ended


def test_make_vec_returns_native_env():
    venv = gym.make_vec("PokerSquares-v0", num_envs=3, vectorization_mode="vector_entry_point", jokers=1)
    assert isinstance(venv, PokerSquaresVectorEnv)
    assert venv.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    assert venv.rules.jokers == 1 and venv.num_envs == 3
    obs, info = venv.reset(seed=3)
    assert obs.shape == (3, 522) and obs.dtype == np.uint8 and venv.observation_space.contains(obs)
    assert info["action_mask"].shape == (3, 25) and info["action_mask"].dtype == np.int8
    assert venv.action_masks().dtype == bool


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "rules",
    [
        {},
        {"jokers": 2, "scoring": "english", "reward_mode": "terminal"},
        {"placement": "adjacent", "first_cell": "center", "jokers": 1, "reward_scale": "normalized"},
    ],
)
def test_same_trajectories_as_single_envs_seeded(rules, backend):
    # 3 games and a bit per sub-env: covers the autoresets, which deal from the same generator.
    assert play_both(4, 80, rules, seed=7, backend=backend) == 12


@pytest.mark.parametrize("backend", BACKENDS)
def test_same_trajectories_given_decks(backend):
    assert play_both(3, 60, {"first_cell": "top-left"}, seed=5, use_decks=True, backend=backend) >= 6


@pytest.mark.parametrize("backend", BACKENDS)
def test_illegal_actions_penalty_match_single_envs(backend):
    rules = {"illegal_action": "penalty", "illegal_penalty": -3.5, "placement": "adjacent",
             "first_cell": 12, "jokers": 2}
    ended = play_both(5, 70, rules, seed=11, illegal_rate=0.08, backend=backend)
    assert ended > 10  # many games end early on an illegal action, at different times


@pytest.mark.skipif(not numba_available(), reason="numba not installed")
@pytest.mark.parametrize(
    "rules",
    [
        {"reward_mode": "terminal", "scoring": "english"},
        {"placement": "adjacent", "first_cell": "top-left", "jokers": 2},
        {"illegal_action": "penalty", "first_cell": "center", "jokers": 1},
    ],
)
def test_backends_agree_on_many_games(rules):
    """Many sub-envs and games: the compiled and the numpy backend give identical outputs, step by step."""
    n = 300
    envs = [PokerSquaresVectorEnv(n, backend=b, **rules) for b in ("numpy", "numba")]
    outs = [env.reset(seed=3) for env in envs]
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    rng = np.random.default_rng(0)
    for step in range(140):
        mask = outs[0][1]["action_mask"].astype(float)
        actions = np.argmax(mask * rng.random(mask.shape), axis=1)
        if "illegal_action" in rules and step % 7 == 3:
            actions[rng.integers(0, n, 5)] = rng.integers(-1, 26, 5)
        outs = [env.step(actions) for env in envs]
        (oa, ra, ta, _, ia), (ob, rb, tb, _, ib) = outs[0], outs[1]
        np.testing.assert_array_equal(oa, ob)
        np.testing.assert_array_equal(ra, rb)
        np.testing.assert_array_equal(ta, tb)
        assert ia.keys() == ib.keys()
        for key, value in ia.items():
            if isinstance(value, dict):
                for sub in value:
                    np.testing.assert_array_equal(value[sub], ib[key][sub])
            else:
                np.testing.assert_array_equal(value, ib[key], err_msg=key)
        outs = [(o, inf) for o, _, _, _, inf in outs]
    np.testing.assert_array_equal(envs[0].action_masks(), envs[1].action_masks())


def test_backend_argument_is_checked(monkeypatch):
    with pytest.raises(ValueError, match=r"backend='cuda': expected one of 'auto', 'numpy', 'numba'"):
        PokerSquaresVectorEnv(2, backend="cuda")
    import pokersquares_env.vector as vector

    monkeypatch.setattr(vector, "numba_available", lambda: False)
    with pytest.raises(ImportError, match=r"backend='numba' needs numba.*pokersquares_env\[fast\]"):
        PokerSquaresVectorEnv(2, backend="numba")
    assert PokerSquaresVectorEnv(2).backend == "numpy"  # auto falls back to plain numpy


@pytest.mark.skipif(not numba_available(), reason="numba not installed")
def test_auto_backend_falls_back_when_the_kernels_fail(monkeypatch):
    import pokersquares_env.vector as vector

    def broken():
        raise RuntimeError("simulated numba typing error")

    monkeypatch.setattr(vector, "_load_kernels", broken)
    with pytest.warns(RuntimeWarning, match="simulated numba typing error.*numpy backend"):
        env = PokerSquaresVectorEnv(2)
    assert env.backend == "numpy"
    env.reset(seed=0)
    env.step(np.argmax(env.action_masks(), axis=1))
    with pytest.raises(RuntimeError, match="simulated"):
        PokerSquaresVectorEnv(2, backend="numba")


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    num_envs=st.integers(1, 4),
    jokers=st.integers(0, 2),
    placement=st.sampled_from(["free", "adjacent"]),
    first_cell=st.sampled_from([None, "center", "top-left", 7]),
    reward_mode=st.sampled_from(["line", "terminal"]),
    scoring=st.sampled_from(["american", "english", {"royal_flush": 7.25, "straight_flush": -3, "four_of_a_kind": 0.1,
                                                      "full_house": 1.7, "flush": 0.3, "straight": 2.2,
                                                      "three_of_a_kind": -0.7, "two_pair": 0.9, "one_pair": 0.35}]),
    illegal=st.sampled_from([0.0, 0.05]),
    seed=st.integers(0, 2**31),
    backend=st.sampled_from(["numpy", "numba"] if numba_available() else ["numpy"]),
)
def test_property_same_trajectories(num_envs, jokers, placement, first_cell, reward_mode, scoring, illegal, seed,
                                    backend):
    rules = {"jokers": jokers, "placement": placement, "first_cell": first_cell, "reward_mode": reward_mode,
             "scoring": scoring, "reward_scale": 0.3}
    if illegal:
        rules["illegal_action"] = "penalty"
    play_both(num_envs, 55, rules, seed=seed, policy_seed=seed + 1, illegal_rate=illegal, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_final_scores_agree_with_score_grids(backend):
    venv = PokerSquaresVectorEnv(64, scoring="english", backend=backend)
    obs, info = venv.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(25):
        mask = info["action_mask"].astype(float)
        actions = np.argmax(mask * rng.random(mask.shape), axis=1)
        obs, reward, term, trunc, info = venv.step(actions)
    assert term.all() and info["_score"].all()
    np.testing.assert_array_equal(info["score"], score_grids(info["board"], "english"))
    np.testing.assert_array_equal(info["scores"]["american"], score_grids(info["board"], "american"))
    assert not info["action_mask"].any() and (info["card"] == -1).all()
    # The next step resets every sub-env, ignoring the actions.
    obs, reward, term, trunc, info = venv.step(np.full(64, 99))
    assert not reward.any() and not term.any() and "score" not in info
    assert (obs[:, 468:522].sum(1) == 51).all() and info["action_mask"].all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_won_when_the_score_equals_the_threshold(backend):
    # Sub-env 0 lays the worked example in deal order: 113 English, exactly the threshold, so it is won.
    # Sub-env 1 lays the same cards on cells 7 * i mod 25: 49, below it.
    from pokersquares_env.cards import parse_cards

    deck = parse_cards("8♠ Д♠ 10♠ 4♠ 2♠ / 9♣ Д♣ 10♣ В♣ К♣ / Т♦ 8♦ 10♦ 4♣ 5♣ / Т♥ Д♥ 10♥ В♥ К♥ / 3♠ 6♥ 7♦ 4♥ 5♠")
    venv = PokerSquaresVectorEnv(2, scoring="english", win_threshold=113, backend=backend)
    venv.reset(options={"deck": np.array([deck, deck])})
    for step in range(25):
        _, _, term, _, info = venv.step(np.array([step, 7 * step % 25]))
    assert term.all() and info["_won"].all()
    assert info["score"].tolist() == [113, 49]
    assert info["won"].tolist() == [True, False]


@pytest.mark.parametrize("backend", BACKENDS)
def test_illegal_action_raise_names_sub_env_and_leaves_state(backend):
    venv = PokerSquaresVectorEnv(3, first_cell="center", backend=backend)
    obs, info = venv.reset(seed=1)
    with pytest.raises(IllegalActionError, match=r"sub-env 1: cell 0 \(a1\) is not the first cell"):
        venv.step(np.array([12, 0, 12]))
    with pytest.raises(IllegalActionError, match=r"sub-env 2: cell 30 is out of range 0..24"):
        venv.step(np.array([12, 12, 30]))
    obs2, *_ = venv.step(np.array([12, 12, 12]))
    assert (obs2[:, 12 * 18 : 13 * 18].sum(1) >= 1).all()
    with pytest.raises(IllegalActionError, match=r"sub-env 0: cell 12 \(c3\) is occupied by"):
        venv.step(np.array([12, 0, 0]))


def test_bad_constructor_arguments_are_named():
    """Before: max_episode_steps="30" failed comparing str with int, and copy="False" was taken as True."""
    with pytest.raises(ValueError, match=r"max_episode_steps='30': expected None or an integer >= 25"):
        PokerSquaresVectorEnv(2, max_episode_steps="30")
    with pytest.raises(ValueError, match=r"max_episode_steps=24"):
        PokerSquaresVectorEnv(2, max_episode_steps=24)
    with pytest.raises(TypeError, match=r"copy='False': expected True or False"):
        PokerSquaresVectorEnv(2, copy="False")
    assert PokerSquaresVectorEnv(2, copy=np.bool_(False), max_episode_steps=np.int64(30)).copy is False


def test_bad_inputs_are_named():
    venv = PokerSquaresVectorEnv(2)
    with pytest.raises(gym.error.ResetNeeded):
        venv.step(np.zeros(2, dtype=int))
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions have shape \(3,\)"):
        venv.step(np.zeros(3, dtype=int))
    with pytest.raises(TypeError, match="float"):
        venv.step(np.zeros(2))
    with pytest.raises(ValueError, match=r"options\['deck'\] has shape \(1, 52\)"):
        venv.reset(options={"deck": np.arange(52)[None]})
    # a value that is not an array is shown, not only its shape (a string, a dict and None all had "shape ()")
    for bad, shown in (("123", "'123'"), ({"a": 1}, "{'a': 1}"), (None, "None"), ([1, 2, 3], "[1, 2, 3]")):
        with pytest.raises(ValueError, match=re.escape(f"actions {shown} have shape ")):
            venv.step(bad)
    with pytest.raises(ValueError, match=re.escape("options['deck'] 'As Ks Qs' has shape (): expected (2, >=25)")):
        venv.reset(options={"deck": "As Ks Qs"})  # one deck for two sub-envs: the single env's form
    long = list(range(60))
    with pytest.raises(ValueError, match=r"options\['deck'\] \[0, 1, 2, .*\.\.\. has shape \(60,\)"):
        venv.reset(options={"deck": long})
    with pytest.raises(ValueError, match=r"options\['deck'\]\[1\]\[0\] = 52"):
        venv.reset(options={"deck": np.stack([np.arange(52), np.r_[52, np.arange(51)]])})
    with pytest.raises(ValueError, match="twice"):
        venv.reset(options={"deck": np.stack([np.arange(25), np.zeros(25, dtype=int)])})
    with pytest.raises(ValueError, match="unknown reset options"):
        venv.reset(options={"decks": 1})
    with pytest.raises(TypeError, match="seed"):
        venv.reset(seed=[1, 2])
    with pytest.raises(ValueError, match="num_envs"):
        PokerSquaresVectorEnv(0)
    with pytest.raises(ValueError, match="reward_mode"):
        PokerSquaresVectorEnv(2, reward_mode="dense")


def test_reset_mask_resets_only_those_sub_envs_and_decks_as_text():
    venv = PokerSquaresVectorEnv(2)
    text = ["Ac Kc Qc Jc Tc " + " ".join(f"{r}d" for r in "23456789TJQKA") + " " + " ".join(
        f"{r}h" for r in "23456789TJQ"), "2s 3s 4s 5s 6s " + " ".join(f"{r}h" for r in "23456789TJQKA") + " " + " ".join(
        f"{r}d" for r in "23456789TJQ")]
    obs, info = venv.reset(options={"deck": text})
    assert info["card"].tolist() == [12, 39]
    venv.step(np.array([0, 0]))
    obs, info = venv.reset(options={"reset_mask": np.array([False, True])})
    assert info["action_mask"][0, 0] == 0 and info["action_mask"][1].all()
    assert info["card"][0] == 11  # sub-env 0 goes on with its game
    before = venv._obs.copy()
    with pytest.raises(ValueError, match=r"options\['reset_mask'\] is all False: expected at least one"):
        venv.reset(options={"reset_mask": np.zeros(2, dtype=bool)})  # before: a silent no-op (SyncVectorEnv raises)
    np.testing.assert_array_equal(venv._obs, before)


def test_seeded_resets_are_reproducible():
    a, b = PokerSquaresVectorEnv(8), PokerSquaresVectorEnv(8)
    oa, _ = a.reset(seed=42)
    ob, _ = b.reset(seed=42)
    np.testing.assert_array_equal(oa, ob)
    oc, _ = a.reset(seed=43)
    assert not np.array_equal(oa, oc)


@pytest.mark.parametrize("backend", BACKENDS)
def test_copied_observations_are_the_buffer_and_stay_as_returned(backend):
    """``copy=True`` returns each step's observation in a fresh array (the numba kernels fill it as they update each
    row, not by a copy of the buffer at the end): it equals the env's buffer, as ``copy=False`` shows it, on placing,
    illegal-ending and autoreset steps, and later steps never change an array already returned."""
    rules = {"illegal_action": "penalty", "jokers": 1, "placement": "adjacent", "first_cell": "center"}
    fresh = PokerSquaresVectorEnv(40, backend=backend, **rules)
    view = PokerSquaresVectorEnv(40, backend=backend, copy=False, **rules)
    obs, info = fresh.reset(seed=4)
    shown, _ = view.reset(seed=4)
    rng = np.random.default_rng(1)
    returned, saved = [obs], [obs.copy()]
    for step in range(90):
        actions = np.argmax(info["action_mask"] * rng.random((40, 25)), axis=1)
        if step % 9 == 4:
            actions[rng.integers(0, 40, 3)] = rng.integers(-1, 26, 3)  # some games end on an illegal cell
        obs, _, ended, _, info = fresh.step(actions)
        view.step(actions)
        np.testing.assert_array_equal(obs, shown, err_msg=f"step {step}")
        assert obs.flags.writeable and obs.flags.owndata and not np.shares_memory(obs, returned[-1])
        returned.append(obs)
        saved.append(obs.copy())
        if step == 60:
            again = np.arange(40) % 3 == 0
            obs, info = fresh.reset(options={"reset_mask": again})
            view.reset(options={"reset_mask": again})
            np.testing.assert_array_equal(obs, shown)
            returned.append(obs)
            saved.append(obs.copy())
    for i, (got, want) in enumerate(zip(returned, saved, strict=True)):
        np.testing.assert_array_equal(got, want, err_msg=f"observation {i} changed after it was returned")


def test_copy_false_returns_read_only_view():
    venv = PokerSquaresVectorEnv(2, copy=False)
    obs, _ = venv.reset(seed=0)
    assert not obs.flags.writeable
    venv.step(np.argmax(venv.action_masks(), axis=1))
    assert obs[:, :450].sum() == 4  # the view follows the env: one placed card (2 flags) per sub-env


@pytest.mark.parametrize("backend", BACKENDS)
def test_dealing_breaks_tied_keys_like_the_stable_sort(backend):
    class TiedKeys:
        """Keys with ties (about 1e-13 likely from a real generator)."""

        def random(self, shape):
            keys = np.random.default_rng(0).random(shape)
            keys[:, 5] = keys[:, 2]  # tie early in the row
            keys[1, :] = 0.5  # every key tied: the deck is the codes in order
            return keys

    venv = PokerSquaresVectorEnv(3, backend=backend)
    venv._np_random = TiedKeys()
    expected = np.argsort(TiedKeys().random((3, 52)), axis=1, kind="stable")[:, :25]
    np.testing.assert_array_equal(venv._deal(3), expected)
    assert venv._deal(3)[1].tolist() == list(range(25))


def test_a_closed_vector_env_refuses_to_step_or_reset():
    envs = gym.make_vec("PokerSquares-v0", num_envs=2, vectorization_mode="vector_entry_point")
    _, info = envs.reset(seed=0)
    envs.close()
    envs.close()  # closing twice is fine
    with pytest.raises(gym.error.ClosedEnvironmentError, match="step"):
        envs.step(info["action_mask"].argmax(1))
    with pytest.raises(gym.error.ClosedEnvironmentError, match="reset"):
        envs.reset()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_copied_or_pickled_vector_env_plays_on_as_the_original(backend):
    import copy
    import pickle

    env = PokerSquaresVectorEnv(4, backend=backend)
    env.reset(seed=5)
    env.step(np.array([0, 1, 2, 3]))
    for twin in (copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        assert twin.backend == env.backend and (twin._kernels is None) == (backend == "numpy")
        for cells in ([4, 5, 6, 7], [8, 9, 10, 11]):
            a, b = env.step(np.array(cells)), twin.step(np.array(cells))
            np.testing.assert_array_equal(a[0], b[0])
            np.testing.assert_array_equal(a[1], b[1])
        env.reset(seed=5)
        env.step(np.array([0, 1, 2, 3]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_refused_seeded_vector_reset_leaves_the_generator_as_it_was(backend):
    import copy

    env = PokerSquaresVectorEnv(3, backend=backend)
    env.reset(seed=3)
    generator = copy.deepcopy(env.np_random.bit_generator.state)
    with pytest.raises(ValueError):
        env.reset(seed=99, options={"deck": np.zeros((3, 25), dtype=int)})
    with pytest.raises(ValueError):
        env.reset(seed=99, options={"reset_mask": np.ones(2, dtype=bool)})
    assert env.np_random.bit_generator.state == generator
    env.reset(seed=99)
    assert env.np_random.bit_generator.state != generator


@pytest.mark.parametrize("backend", BACKENDS)
def test_ansi_render_and_game_state_match_single_envs(backend):
    """``render()`` gives each sub-env's text exactly as the single env renders the same game, through an
    illegal-action ending (which both say ended the game) and the autoreset; ``game_state(i)`` is that game."""
    rules = {"illegal_action": "penalty", "placement": "adjacent", "first_cell": "center"}
    venv = PokerSquaresVectorEnv(3, backend=backend, render_mode="ansi", **rules)
    singles = [PokerSquaresEnv(render_mode="ansi", **rules) for _ in range(3)]
    venv.reset(seed=5)
    for i, env in enumerate(singles):
        env.reset(options={"deck": list(venv.game_state(i).deck)})
    rng = np.random.default_rng(0)
    done = np.zeros(3, dtype=bool)
    endings = set()
    for step in range(60):
        actions = np.array([rng.integers(0, 25) if step % 9 == 4 and i == 1
                            else rng.choice(np.flatnonzero(e.action_masks())) if not done[i] else 0
                            for i, e in enumerate(singles)])
        _, _, term, _, vinfo = venv.step(actions)
        illegal_now = [False] * 3
        for i, env in enumerate(singles):
            if done[i]:
                env.reset(options={"deck": list(venv.game_state(i).deck)})
            else:
                env.step(int(actions[i]))
                if term[i]:
                    illegal_now[i] = "illegal_action" in vinfo and bool(vinfo["_illegal_action"][i])
                    endings.add("illegal" if illegal_now[i] else "full")
            state, mine = venv.game_state(i), env.state
            assert (state.deck[:25], state.board, state.placements) == (mine.deck[:25], mine.board, mine.placements)
            assert (state.line_t, state.line_k, state.line_ranks) == (mine.line_t, mine.line_k, mine.line_ranks)
        texts = venv.render()
        assert isinstance(texts, tuple) and len(texts) == 3
        assert list(texts) == [env.render() for env in singles]
        for i, text in enumerate(texts):  # only a board an illegal action has just ended says so, on its last line
            assert text.endswith("\ngame over: ended by an illegal action") == illegal_now[i]
            assert ("ended by an illegal action" in text) == illegal_now[i]
        done = term
    assert endings == {"illegal", "full"}


def test_render_and_game_state_refusals():
    venv = PokerSquaresVectorEnv(2, backend="numpy", render_mode="ansi")
    with pytest.raises(gym.error.ResetNeeded, match="reset"):
        venv.render()
    with pytest.raises(gym.error.ResetNeeded, match="reset"):
        venv.game_state(0)
    venv.reset(seed=0)
    with pytest.raises(ValueError, match="sub-env index 2: expected an integer 0..1"):
        venv.game_state(2)
    with pytest.raises(TypeError, match="sub-env index 1.0"):
        venv.game_state(1.0)
    with pytest.raises(ValueError, match=r"render_mode='human': expected None or one of \['ansi', 'rgb_array'\]"):
        PokerSquaresVectorEnv(2, render_mode="human")
    made = gym.make_vec("PokerSquares-v0", num_envs=2, vectorization_mode="vector_entry_point", render_mode="ansi")
    made.reset(seed=0)
    assert made.render_mode == "ansi" and len(made.render()) == 2
    quiet = PokerSquaresVectorEnv(2, backend="numpy")
    quiet.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert quiet.render() is None


@pytest.mark.skipif(not numba_available(), reason="numba not installed")
def test_an_env_pickled_with_numba_unpickles_on_numpy_where_numba_cannot_load(monkeypatch):
    """A training checkpoint holds the pickled env: before, unpickling it where numba is missing raised, so the
    resumed run started new games; under backend='auto' it now plays on with numpy, the same games."""
    import pickle

    from pokersquares_env import vector

    env = PokerSquaresVectorEnv(4, jokers=1)
    obs, info = env.reset(seed=5)
    for _ in range(7):
        obs, _, _, _, info = env.step(np.argmax(info["action_mask"].view(bool), axis=1))
    blob = pickle.dumps(env)
    explicit = pickle.dumps(PokerSquaresVectorEnv(2, backend="numba"))

    def no_numba():
        raise ImportError("No module named 'numba'")

    monkeypatch.setattr(vector, "_load_kernels", no_numba)
    with pytest.warns(RuntimeWarning, match="the unpickled env runs the numpy backend"):
        copy = pickle.loads(blob)
    assert copy.backend == "numpy" and copy._kernels is None
    for _ in range(30):  # the same games, past the autoreset
        actions = np.argmax(info["action_mask"].view(bool), axis=1)
        a, b = env.step(actions), copy.step(actions)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
        info = a[4]
    with pytest.raises(ImportError):  # backend="numba" asked for numba: no silent fallback
        pickle.loads(explicit)


@pytest.mark.parametrize("backend", BACKENDS)
def test_actions_too_large_for_an_int64_are_named_not_wrapped(backend):
    """Before, uint64 actions of 2**63 and more were cast to negative int64 and reported as cell -9223372036854775808."""
    venv = PokerSquaresVectorEnv(3, backend=backend, illegal_action="penalty")
    venv.reset(seed=0)
    before = venv._obs.copy(), venv._placed.copy()
    actions = np.array([0, 1, 2], dtype=np.uint64) + np.uint64(2**63)
    with pytest.raises(ValueError, match=r"actions\[0\] = 9223372036854775808: expected integer cell indices 0\.\.24"):
        venv.step(actions)
    assert (venv._obs == before[0]).all() and (venv._placed == before[1]).all()
    _, reward, terminated, _, info = venv.step(np.array([0, 1, 2], dtype=np.uint64))  # uint64 in range still plays
    assert not terminated.any()


@pytest.mark.parametrize("backend", BACKENDS)
def test_decks_of_different_lengths_deal_their_first_25_cards(backend):
    """Before, rows of >=25 cards but different lengths were refused as ragged, though each may hold >=25 cards."""
    venv = PokerSquaresVectorEnv(2, backend=backend)
    long_row = list(range(51, -1, -1))
    _, info = venv.reset(options={"deck": [list(range(25)), long_row]})
    assert info["card"].tolist() == [0, 51]
    assert venv.game_state(1).deck[:25] == tuple(long_row[:25])
    same = PokerSquaresVectorEnv(2, backend=backend)
    _, same_info = same.reset(options={"deck": np.array([list(range(25)), long_row[:25]])})
    np.testing.assert_array_equal(venv._obs, same._obs)
    before = venv._obs.copy()
    for decks, error, message in [
        ([list(range(25)), list(range(24))], ValueError, r"options\['deck'\]\[1\] has shape \(24,\): expected a deck "
                                                          r"of >=25 card codes"),
        ([list(range(26)), list(range(25)), list(range(30))], ValueError, r"options\['deck'\] is 3 rows: expected 2"),
        ([list(range(25)), [*range(25), 3]], ValueError, r"options\['deck'\]\[1\]\[25\]: card 5♣ \(code 3\) appears "
                                                          r"twice"),
        ([list(range(25)), [*range(25), 60]], ValueError, r"options\['deck'\]\[1\]\[25\] = 60"),
        ([list(range(25)), [0.5] * 26], TypeError, r"options\['deck'\]\[1\] has dtype float64"),
    ]:
        with pytest.raises(error, match=message):
            venv.reset(options={"deck": decks})
    assert (venv._obs == before).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_decks_as_rows_of_card_text_deal_as_the_single_env_does(backend):
    """Before, rows that were lists of card strings were refused ("has dtype <U2: expected integer card codes"),
    though the single env takes a deck as codes or text."""
    from pokersquares_env.cards import format_card

    text = [format_card(c) for c in range(51, -1, -1)]
    venv = PokerSquaresVectorEnv(2, backend=backend)
    _, info = venv.reset(options={"deck": [text, text[::-1]]})
    assert info["card"].tolist() == [51, 0]
    codes = PokerSquaresVectorEnv(2, backend=backend)
    codes.reset(options={"deck": [list(range(51, -1, -1)), list(range(52))]})
    np.testing.assert_array_equal(venv._obs, codes._obs)
    for decks in (np.array([text, text[::-1]]), [text, " ".join(text[::-1])], [text, [text[-1], *range(1, 52)]]):
        venv.reset(options={"deck": decks})  # a str array, a whole row as one string, a row of text and codes
        np.testing.assert_array_equal(venv._obs, codes._obs)
    single = PokerSquaresEnv()
    np.testing.assert_array_equal(single.reset(options={"deck": text})[0], venv._obs[0])
    before = venv._obs.copy()
    for decks, error, message in [
        ([text, ["Xx", *text[1:]]], ValueError, r"options\['deck'\]\[1\]: bad card 'Xx'"),
        ([text, [*text[:25], text[3]]], ValueError, r"options\['deck'\]\[1\]\[25\]: card J♠ \(code 48\) appears twice"),
        ([text, text[:24]], ValueError, r"options\['deck'\]\[1\] has 24 cards: expected at least 25"),
        ([text, ["JK", *text[:30]]], ValueError, r"options\['deck'\]\[1\] holds joker code 52 but the rules allow 0"),
        ([text, [*text[:30], 2.5]], TypeError, r"options\['deck'\]\[1\]\[30\]: card code 2.5 is not an integer"),
        ([text, text, text], ValueError, r"options\['deck'\] has shape \(3, 52\): expected \(2, >=25\)"),
        ([text, text[:30], text], ValueError, r"options\['deck'\] is 3 rows: expected 2"),
    ]:
        with pytest.raises(error, match=message):
            venv.reset(options={"deck": decks})
    assert (venv._obs == before).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_repeated_card_code_is_named_with_its_position_as_for_card_text(backend):
    """Before, decks given as codes said "options['deck'][1] holds card J♠ twice" without where, while card text, the
    single env and docs/speed.md name the position of the second copy."""
    venv = PokerSquaresVectorEnv(2, backend=backend)
    venv.reset(seed=0)
    before = venv._obs.copy()
    bad = list(range(40, 52)) + list(range(13)) + [48]  # J♠ (48) again at position 25, after the 25 dealt
    message = r"options\['deck'\]\[1\]\[25\]: card J♠ \(code 48\) appears twice"
    for decks in (np.array([list(range(26)), bad]), [list(range(26)), bad + [50]]):  # one array, rows of two lengths
        with pytest.raises(ValueError, match=message):
            venv.reset(options={"deck": decks})
    with pytest.raises(ValueError, match=r"^options\['deck'\]\[0\]\[7\]: card 4♣ \(code 2\) appears twice$"):
        venv.reset(options={"deck": np.array([[*range(7), 2, *range(7, 25)]] * 2)})  # the first bad row is named
    with pytest.raises(ValueError, match=r"^deck\[25\]: card J♠ \(code 48\) appears twice$"):
        PokerSquaresEnv().reset(options={"deck": bad})  # the single env's wording
    assert (venv._obs == before).all()


def test_a_none_row_of_decks_is_refused_saying_deck_none_shuffles():
    """Before, ``[None, deck]`` said "options['deck'][0] has shape ()" as if None were a malformed deck."""
    venv = PokerSquaresVectorEnv(2)
    venv.reset(seed=0)
    before = venv._obs.copy()
    for decks in ([None, list(range(25))], [None, None], [list(range(25)), None]):
        where = decks.index(None)
        with pytest.raises(ValueError, match=rf"options\['deck'\]\[{where}\] is None: expected a deck .* for every "
                                             r"sub-env .*deck=None shuffles all"):
            venv.reset(options={"deck": decks})
    assert (venv._obs == before).all()
    venv.reset(options={"deck": None})  # None for the whole option shuffles every sub-env
    assert not (venv._obs == before).all()


def test_unknown_reset_option_keys_of_mixed_types_are_named():
    venv = PokerSquaresVectorEnv(2)
    with pytest.raises(ValueError, match=r"unknown reset options \[1, 'foo'\]"):
        venv.reset(options={1: 0, "foo": 1})


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_a_bool_or_an_int_beyond_int64_in_a_list_of_actions_is_named(backend):
    """Before, np.asarray read ``[True, 5]`` as cells 1 and 5 (a silent move; the single env refuses a bool) and
    ``[2**63, 5]`` as floats ("actions have dtype float64", though only ints were given)."""
    if backend == "numba" and not numba_available():
        pytest.skip("numba is not installed")
    env = PokerSquaresVectorEnv(2, backend=backend, illegal_action="penalty")
    env.reset(seed=0)
    before = env._placed.copy()
    with pytest.raises(TypeError, match=r"actions\[0\] = True: a bool is no cell: expected integer cell indices 0\.\.24"):
        env.step([True, 5])
    with pytest.raises(TypeError, match=r"actions\[1\] = (?:np\.)?False_?: a bool is no cell"):
        env.step((3, np.bool_(False)))
    with pytest.raises(ValueError, match=r"actions\[0\] = 9223372036854775808: expected integer cell indices 0\.\.24 "
                                         r"\(a value this large does not fit an int64\)"):
        env.step([2**63, 5])
    np.testing.assert_array_equal(env._placed, before)  # nothing was played
    env.step([1, 5])
    assert (env._placed == before + 1).all()


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_a_bool_or_a_huge_int_in_a_deck_row_is_named(backend):
    """Before, a deck row ``[True, 2, 3, ...]`` dealt card 1 first (the single env refuses a bool as a card code)."""
    if backend == "numba" and not numba_available():
        pytest.skip("numba is not installed")
    env = PokerSquaresVectorEnv(2, backend=backend)
    with pytest.raises(TypeError, match=r"options\['deck'\]\[0\]\[0\]: card code True is not an integer"):
        env.reset(options={"deck": [[True] + list(range(2, 26))] * 2})
    with pytest.raises(ValueError, match=r"options\['deck'\]\[1\]\[0\]: card code 1180591620717411303424 out of range"):
        env.reset(options={"deck": [list(range(1, 26)), [2**70] + list(range(1, 25))]})
    env.reset(options={"deck": [list(range(1, 26))] * 2})


@pytest.mark.parametrize("backend", ["numpy", "auto"])
def test_terminal_rewards_go_to_their_own_sub_env_when_an_illegal_ending_comes_first(backend):
    """A mutation audit found the final scores' order (illegal endings after the finished games) unchecked: the
    terminal reward of a sub-env that finished could be another's, forfeited, score when a lower index ended by an
    illegal action on the same step."""
    env = PokerSquaresVectorEnv(2, reward_mode="terminal", illegal_action="penalty", backend=backend)
    env.reset(seed=1)
    for cell in range(24):
        env.step(np.array([cell, cell]))
    _, reward, terminated, _, info = env.step(np.array([0, 24]))  # sub-env 0: an occupied cell; sub-env 1: its last
    assert terminated.tolist() == [True, True]
    assert reward[0] == -10 and reward[1] == info["score"][1] and info["score"][0] != info["score"][1]
    assert "illegal_action" in info and info["_illegal_action"].tolist() == [True, False]


def test_a_first_reset_must_reset_every_sub_env():
    with pytest.raises(ValueError, match=r"options\['reset_mask'\] needs a first reset of every sub-env"):
        PokerSquaresVectorEnv(2).reset(options={"reset_mask": np.array([True, False])})


def test_spaces_are_one_cell_per_sub_env():
    venv = PokerSquaresVectorEnv(3, jokers=2)
    assert venv.single_action_space == gym.spaces.Discrete(25)
    assert venv.action_space == gym.spaces.MultiDiscrete([25] * 3)
    assert venv.single_observation_space == PokerSquaresEnv(jokers=2).observation_space
    assert venv.observation_space.shape == (3, 522)


def test_action_masks_before_the_first_reset_are_refused():
    with pytest.raises(gym.error.ResetNeeded, match=r"call reset\(\) before action_masks\(\)"):
        PokerSquaresVectorEnv(2).action_masks()


def test_num_envs_true_is_refused_and_max_episode_steps_of_one_game_is_accepted():
    with pytest.raises(ValueError, match=r"num_envs=True: expected a positive integer"):
        PokerSquaresVectorEnv(True)
    assert PokerSquaresVectorEnv(2, max_episode_steps=25).num_envs == 2  # a game is exactly 25 steps


def test_ints_below_int64_in_actions_or_deck_rows_are_named_as_those_above():
    """The negative side of the int64 range is checked as the positive side: named, not read as an object array."""
    env = PokerSquaresVectorEnv(2, illegal_action="penalty")
    env.reset(seed=0)
    before = env._placed.copy()
    with pytest.raises(ValueError, match=r"actions\[0\] = -1180591620717411303424: expected integer cell indices "
                                         r"0\.\.24 \(a value this large does not fit an int64\)"):
        env.step([-2**70, 5])
    np.testing.assert_array_equal(env._placed, before)
    with pytest.raises(ValueError, match=r"options\['deck'\]\[1\]\[0\]: card code -1180591620717411303424 out of "
                                         r"range"):
        env.reset(options={"deck": [list(range(1, 26)), [-2**70] + list(range(1, 25))]})
    with pytest.raises(TypeError, match=r"options\['deck'\]\[0\]\[0\]: card code (?:np\.)?True_? is not an integer"):
        env.reset(options={"deck": [[np.True_] + list(range(2, 26))] * 2})  # a numpy bool, as a Python one
    with pytest.raises(TypeError, match=r"options\['deck'\]\[1\]\[0\]: card code True is not an integer"):
        env.reset(options={"deck": [tuple(range(1, 26)), (True, *range(2, 26))]})  # rows as tuples, as lists
    with pytest.raises(TypeError, match=r"^options\['deck'\] has dtype float64: expected integer card codes$"):
        env.reset(options={"deck": np.zeros((2, 25))})  # the whole option's fault, not row 0's


def test_deck_codes_out_of_the_rules_deck_are_named_with_its_range():
    env = PokerSquaresVectorEnv(2, backend="numpy")
    with pytest.raises(ValueError, match=r"^options\['deck'\]\[0\]\[3\] = -1: expected a code of the rules' deck, "
                                         r"0\.\.51 \(0 joker\(s\)\)$"):
        env.reset(options={"deck": np.array([[0, 1, 2, -1, *range(4, 25)], list(range(25))])})
    jokers = PokerSquaresVectorEnv(2, jokers=2, backend="numpy")
    with pytest.raises(ValueError, match=r"^options\['deck'\]\[1\]\[0\] = 54: expected a code of the rules' deck, "
                                         r"0\.\.53 \(2 joker\(s\)\)$"):
        jokers.reset(options={"deck": np.array([list(range(25)), [54, *range(1, 25)]])})
    _, info = jokers.reset(options={"deck": np.array([list(range(25)), [53, *range(1, 25)]])})
    assert info["card"].tolist() == [0, 53]


def test_a_one_dimensional_array_deck_is_shown_on_one_line():
    env = PokerSquaresVectorEnv(2)
    with pytest.raises(ValueError, match=r"options\['deck'\] array\(\[ 0, 1, 2, .*\.\.\. has shape \(60,\)") as exc:
        env.reset(options={"deck": np.arange(60)})  # numpy prints this array on several lines
    assert "\n" not in str(exc.value)


def test_an_object_array_or_tuples_of_card_text_deal_as_lists_of_it_do():
    from pokersquares_env.cards import format_card

    text = [format_card(c) for c in range(51, -1, -1)]
    venv, codes = PokerSquaresVectorEnv(2), PokerSquaresVectorEnv(2)
    codes.reset(options={"deck": [list(range(51, -1, -1)), list(range(52))]})
    for decks in (np.array([text, text[::-1]], dtype=object), [tuple(text), tuple(text[::-1])]):
        _, info = venv.reset(options={"deck": decks})
        assert info["card"].tolist() == [51, 0]
        np.testing.assert_array_equal(venv._obs, codes._obs)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_tie_between_the_25th_and_26th_keys_deals_as_the_stable_sort(backend):
    """Which of two tied keys is dealt 25th decides whether a card is dealt at all: the stable sort's choice."""
    class TiedAtTheCut:
        def random(self, shape):
            keys = np.random.default_rng(0).random(shape)
            order = np.argsort(keys, axis=1)
            rows = np.arange(shape[0])
            keys[rows, order[:, 25]] = keys[rows, order[:, 24]]
            return keys

    venv = PokerSquaresVectorEnv(20, backend=backend)
    venv._np_random = TiedAtTheCut()
    keys = TiedAtTheCut().random((20, 52))
    expected = np.argsort(keys, axis=1, kind="stable")[:, :25]
    assert not np.array_equal(np.argsort(keys, axis=1)[:, :25], expected)  # the unstable sort differs somewhere
    np.testing.assert_array_equal(venv._deal(20), expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_reset_mask_must_be_bool_and_may_reset_all_at_first(backend):
    venv = PokerSquaresVectorEnv(2, backend=backend)
    obs, info = venv.reset(seed=3, options={"reset_mask": np.array([True, True])})  # a first reset of every sub-env
    np.testing.assert_array_equal(obs, PokerSquaresVectorEnv(2, backend=backend).reset(seed=3)[0])
    with pytest.raises(ValueError, match=r"options\['reset_mask'\] has shape \(2,\) and dtype int64: expected a bool "
                                         r"array of shape \(2,\)"):
        venv.reset(options={"reset_mask": np.array([0, 1])})  # not read as indices or as a truth mask
    np.testing.assert_array_equal(venv._obs, obs)


@pytest.mark.parametrize("backend", BACKENDS)
def test_reset_mask_with_decks_deals_each_reset_sub_env_its_own_row(backend):
    venv = PokerSquaresVectorEnv(3, backend=backend)
    _, info = venv.reset(seed=0)
    decks = np.array([list(range(25)), list(range(10, 35)), list(range(20, 45))])
    _, again = venv.reset(options={"deck": decks, "reset_mask": np.array([False, False, True])})
    assert again["card"].tolist() == [*info["card"][:2].tolist(), 20]
    assert venv.game_state(2).deck[:25] == tuple(range(20, 45))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_partial_reset_leaves_a_pending_autoreset_pending(backend):
    """A sub-env that ended on the last step and is not in reset_mask still resets on the next step (its action
    ignored), as it would have without the partial reset."""
    venv = PokerSquaresVectorEnv(2, backend=backend)
    venv.reset(seed=0)
    for cell in range(25):
        _, _, term, _, _ = venv.step(np.array([cell, cell]))
    assert term.all()
    venv.reset(options={"reset_mask": np.array([False, True])})
    obs, reward, term, _, info = venv.step(np.array([0, 0]))  # sub-env 0: autoreset, cell 0 ignored
    assert not term.any() and reward[0] == 0
    assert obs[0, :450].sum() == 0 and info["action_mask"][0].all() and venv._placed.tolist() == [0, 1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_illegal_action_raise_names_the_sub_env_while_others_autoreset(backend):
    """The sub-env named is the one whose action is illegal (and the reason is its own), also on a step that
    resets a sub-env of a lower index, whose action is ignored."""
    venv = PokerSquaresVectorEnv(3, backend=backend)
    decks = np.array([list(range(25))] * 3)
    venv.reset(options={"deck": decks})
    venv.step(np.array([0, 0, 0]))
    venv.reset(options={"deck": decks, "reset_mask": np.array([False, True, True])})  # sub-env 0 is a card ahead
    for cell in range(1, 25):
        _, _, term, _, _ = venv.step(np.array([cell, cell - 1, cell - 1]))
    assert term.tolist() == [True, False, False]
    placed = venv._placed.copy()
    with pytest.raises(IllegalActionError, match=r"^sub-env 1: cell 3 \(d1\) is occupied by 5♣$"):
        venv.step(np.array([99, 3, 30]))
    with pytest.raises(IllegalActionError, match=r"^sub-env 2: cell 30 is out of range 0\.\.24$"):
        venv.step(np.array([99, 24, 30]))
    np.testing.assert_array_equal(venv._placed, placed)
    _, _, term, _, _ = venv.step(np.array([99, 24, 24]))
    assert term.tolist() == [False, True, True] and venv._placed.tolist() == [0, 25, 25]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_cell_holding_card_code_0_is_named_as_occupied_by_it(backend):
    venv = PokerSquaresVectorEnv(2, backend=backend, illegal_action="penalty")
    venv.reset(options={"deck": np.array([list(range(25)), list(range(25))])})  # 2♣ (code 0) is dealt first
    venv.step(np.array([7, 8]))
    _, reward, term, _, info = venv.step(np.array([7, 9]))
    assert term.tolist() == [True, False] and reward[0] == -10
    assert info["illegal_action"][0] == "cell 7 (c2) is occupied by 2♣"


@pytest.mark.parametrize("backend", BACKENDS)
def test_infos_stay_as_returned_after_later_steps(backend):
    """Infos are the caller's: the masks, cards, final boards and placements of one step are not the env's
    buffers, which the next steps (placements and the autoreset) go on writing."""
    import copy

    venv = PokerSquaresVectorEnv(2, backend=backend)
    _, info = venv.reset(seed=0)
    returned, saved = [info], [copy.deepcopy(info)]
    for step in range(27):  # 25 placements, both games ending together, then the autoreset and one more
        _, _, _, _, info = venv.step(np.array([step % 25, 24 - step % 25]))
        returned.append(info)
        saved.append(copy.deepcopy(info))
    assert "board" in returned[25] and (returned[25]["board"] >= 0).all()

    def check(got, want, where):
        assert got.keys() == want.keys(), where
        for key, value in want.items():
            if isinstance(value, dict):
                check(got[key], value, f"{where}[{key!r}]")
            else:
                np.testing.assert_array_equal(got[key], value, err_msg=f"{where}[{key!r}] changed")

    for i, (got, want) in enumerate(zip(returned, saved, strict=True)):
        check(got, want, f"info {i}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_uint64_actions_name_the_first_too_large_and_play_int64_max_as_a_cell(backend):
    """2**63 - 1 fits an int64: an out-of-range cell, as the single env says, not a value refused as too large."""
    venv = PokerSquaresVectorEnv(3, backend=backend)
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=r"^actions\[1\] = 9223372036854775808: expected integer cell indices"):
        venv.step(np.array([1, 2**63, 2**64 - 1], dtype=np.uint64))
    with pytest.raises(IllegalActionError, match=r"^sub-env 2: cell 9223372036854775807 is out of range 0\.\.24$"):
        venv.step(np.array([1, 2, 2**63 - 1], dtype=np.uint64))


def test_a_column_of_actions_plays_as_one_cell_per_sub_env():
    """A policy's (N, 1) column of cells is taken as the (N,) actions it holds; other sizes are refused."""
    venv, flat = PokerSquaresVectorEnv(3), PokerSquaresVectorEnv(3)
    venv.reset(seed=2)
    flat.reset(seed=2)
    obs, reward, *_ = venv.step(np.array([[4], [0], [24]]))
    np.testing.assert_array_equal(obs, flat.step(np.array([4, 0, 24]))[0])
    with pytest.raises(ValueError, match=r"actions have shape \(3, 2\): expected \(3,\)"):
        venv.step(np.zeros((3, 2), dtype=int))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(1, 4), (2, 2), (4, 1, 1), (1, 1, 4)])
def test_actions_of_n_cells_in_another_shape_than_a_column_are_refused(backend, shape):
    """As docs/speed.md says: only (N,) and a policy's (N, 1) are played. Before, any shape of N elements was
    flattened and played, (2, 2) for four sub-envs as cells 3, 7, 11, 20 in that order."""
    venv = PokerSquaresVectorEnv(4, backend=backend)
    venv.reset(seed=0)
    before = venv._placements.copy()
    with pytest.raises(ValueError, match=re.escape(f"actions have shape {shape}: expected (4,), one cell per sub-env")):
        venv.step(np.array([3, 7, 11, 20]).reshape(shape))
    np.testing.assert_array_equal(venv._placements, before)  # nothing played
    one = PokerSquaresVectorEnv(1, backend=backend)
    one.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions 3 have shape \(\): expected \(1,\)"):
        one.step(3)  # a bare cell is not a batch of one
    one.step(np.array([[3]]))  # (1, 1): a column of one
    assert one._placements[0, 0] == 3


def test_reset_mask_none_resets_every_sub_env():
    venv = PokerSquaresVectorEnv(2)
    obs, _ = venv.reset(seed=4, options={"reset_mask": None})  # as deck=None: the option not given
    np.testing.assert_array_equal(obs, PokerSquaresVectorEnv(2).reset(seed=4)[0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_copy_false_steps_return_read_only_views_of_the_buffer(backend):
    venv = PokerSquaresVectorEnv(2, backend=backend, copy=False)
    venv.reset(seed=0)
    obs, *_ = venv.step(np.array([0, 1]))
    assert not obs.flags.writeable and obs[:, :450].sum() == 4
    again, *_ = venv.step(np.array([2, 3]))
    assert np.shares_memory(obs, again) and obs[:, :450].sum() == 8  # the next step overwrites it


@pytest.mark.parametrize("backend", BACKENDS)
def test_masks_and_infos_edited_by_the_caller_leave_the_env_as_it_was(backend):
    """``action_masks()`` and every info array are the caller's: editing them changes neither the env nor the
    other arrays of the same info (each ``_key`` presence array is its own)."""
    venv = PokerSquaresVectorEnv(2, backend=backend, illegal_action="penalty")
    venv.reset(options={"deck": np.array([list(range(25))] * 2)})
    masks = venv.action_masks()
    masks[:] = False
    assert venv.action_masks().all()
    venv.step(np.array([0, 24]))
    masks = venv.action_masks()
    venv.step(np.array([1, 23]))
    assert masks[0, 1] and masks[1, 23]  # as returned, before the step
    for step in range(2, 25):
        _, _, term, _, info = venv.step(np.array([step, 24 - step]))
    assert term.all()
    for key in ("_action_mask", "_card", "_score"):
        info[key][:] = False
    assert info["_hands"].all() and info["_board"].all() and info["_won"].all()
    _, _, _, _, info = venv.step(np.array([0, 0]))  # the autoreset
    assert info["_action_mask"].all() and info["_card"].all() and info["action_mask"].all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_unflagged_final_info_values_are_zero_or_none(backend):
    venv = PokerSquaresVectorEnv(2, backend=backend, illegal_action="penalty")
    venv.reset(seed=0)
    venv.step(np.array([0, 0]))
    _, _, term, _, info = venv.step(np.array([0, 1]))  # sub-env 0 forfeits on an occupied cell; 1 plays on
    assert term.tolist() == [True, False]
    assert info["_illegal_action"].tolist() == [True, False] and info["_score"].tolist() == [True, False]
    assert info["illegal_action"][1] is None and all(hand is None for hand in info["hands"][1])
    assert info["score"][1] == 0 and not info["won"][1] and not info["board"][1].any()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_forfeited_game_is_not_won_even_when_its_score_reaches_the_threshold(backend):
    venv = PokerSquaresVectorEnv(2, backend=backend, illegal_action="penalty", win_threshold=0)
    venv.reset(seed=0)
    for step in range(24):
        venv.step(np.array([step, step]))
    _, _, term, _, info = venv.step(np.array([0, 24]))  # sub-env 0 forfeits; 1 completes its board
    assert term.all() and info["_won"].all() and info["score"][0] >= 0
    assert info["won"].tolist() == [False, True]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint64])
def test_decks_of_any_integer_dtype_deal_as_int64_decks(backend, dtype):
    decks = np.array([list(range(27, 52)), list(range(51, 26, -1))])
    venv, wide = PokerSquaresVectorEnv(2, backend=backend), PokerSquaresVectorEnv(2, backend=backend)
    obs, info = venv.reset(options={"deck": decks.astype(dtype)})
    np.testing.assert_array_equal(obs, wide.reset(options={"deck": decks})[0])
    assert info["card"].tolist() == [27, 51]
    for cells in ([0, 1], [2, 3]):
        np.testing.assert_array_equal(venv.step(np.array(cells))[0], wide.step(np.array(cells))[0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_list_of_numpy_unsigned_scalars_and_ints_plays_as_cells(backend):
    """Before, ``step([np.uint64(5), 3])`` was refused as "dtype float64" (numpy reads that mix as floats), though the
    single env takes ``np.uint64(5)`` as cell 5; and ``np.uint64(2**63)`` in such a list got that TypeError instead of
    the ValueError naming it."""
    venv, ints = PokerSquaresVectorEnv(2, backend=backend), PokerSquaresVectorEnv(2, backend=backend)
    venv.reset(seed=3)
    ints.reset(seed=3)
    obs = venv.step([np.uint64(5), 3])[0]
    np.testing.assert_array_equal(obs, ints.step([5, 3])[0])
    before = venv._obs.copy()
    with pytest.raises(ValueError, match=r"^actions\[0\] = 9223372036854775808: expected integer cell indices"):
        venv.step([np.uint64(2**63), 5])
    np.testing.assert_array_equal(venv._obs, before)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_numpy_array_of_deck_strings_deals_as_the_list_of_them(backend):
    """Before, ``deck=np.array([t, t])`` (N deck strings) was refused as "has shape (2,)", while ``[t, t]`` dealt."""
    from pokersquares_env.cards import format_card

    text = [" ".join(format_card(c) for c in range(52)), " ".join(format_card(c) for c in range(51, -1, -1))]
    venv, listed = PokerSquaresVectorEnv(2, backend=backend), PokerSquaresVectorEnv(2, backend=backend)
    _, info = venv.reset(options={"deck": np.array(text)})
    listed.reset(options={"deck": text})
    assert info["card"].tolist() == [0, 51]
    np.testing.assert_array_equal(venv._obs, listed._obs)
    with pytest.raises(ValueError, match=r"options\['deck'\]\[1\]: bad card 'Xx'"):
        venv.reset(options={"deck": np.array([text[0], "Xx " + text[1]])})
    for three in (text + text[:1], np.array(text + text[:1])):  # the same message for the list and the array
        with pytest.raises(ValueError, match=r"^options\['deck'\] \['2♣ 3♣ .* has shape \(3,\): expected \(2, >=25\)"):
            venv.reset(options={"deck": three})
