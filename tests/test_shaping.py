"""Potential-based reward shaping: the potential reads boards right, vanishes on full boards, and shaping telescopes."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pokersquares_env  # noqa: F401  (registers PokerSquares-v0)
from agents.lines import heuristic_values
from agents.shaping import LinePotential, board_codes, shaped_rewards
from pokersquares_env.scoring import line_keys, point_system


def _random_game(env_kwargs, seed, n=6):
    """Play ``n`` games at once with random legal cells; yield (obs, reward, terminated, info) after each step."""
    envs = gym.make_vec("PokerSquares-v0", num_envs=n, vectorization_mode="vector_entry_point", **env_kwargs)
    obs, info = envs.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps = [(obs, np.zeros(n), np.zeros(n, bool), info)]
    for _ in range(25):
        action = np.array([rng.choice(np.flatnonzero(m)) for m in info["action_mask"]])
        obs, reward, terminated, _, info = envs.step(action)
        steps.append((obs, reward, terminated, info))
    envs.close()
    return steps


@pytest.mark.parametrize("jokers", [0, 2])
def test_board_codes_read_the_board_back_from_observations(jokers):
    steps = _random_game(dict(jokers=jokers), seed=5)
    obs, _, terminated, info = steps[-1]
    assert terminated.all()
    codes = board_codes(obs)
    board = np.asarray(info["board"], dtype=np.int64)
    expected = np.where(board >= 52, 52, board)  # both jokers read as 52 (they are alike)
    np.testing.assert_array_equal(codes, expected)
    assert (board_codes(steps[0][0]) == -1).all()  # the first observation: an empty board
    with pytest.raises(ValueError, match=r"\(3, 7\)"):
        board_codes(np.zeros((3, 7)))


def test_potential_sums_the_incomplete_lines_and_is_zero_on_full_boards():
    values = heuristic_values(point_system("american")) + 1.0  # nonzero on every key
    pot = LinePotential(values, scale=2.0)
    steps = _random_game({}, seed=11)
    assert np.allclose(pot(steps[-1][0]), 0.0)  # every line complete
    obs = steps[12][0]
    lines = board_codes(obs)[:, np.r_[[[5 * r + c for c in range(5)] for r in range(5)],
                                      [[5 * r + c for r in range(5)] for c in range(5)]]]
    keys = line_keys(lines)
    t = (lines >= 0).sum(-1)
    expected = np.zeros(len(obs))
    for g in range(len(obs)):
        for i in range(10):
            if t[g, i] < 5:
                expected[g] += 2.0 * values[keys[g, i], int(i >= 5)]
    np.testing.assert_allclose(pot(obs), expected)
    with pytest.raises(ValueError, match=r"\(5, 2\)"):
        LinePotential(np.zeros((5, 2)))
    with pytest.raises(ValueError, match=r"shaping='magic': expected 'heuristic' or 'tables' \(the potentials of "
                                         r"--shaping heuristic, tables\)"):
        LinePotential.make("magic", "american")
    with pytest.raises(ValueError, match="shaping='none' has no potential: expected 'heuristic' or 'tables'"):
        LinePotential.make("none", "american")  # it used to be refused as if 'none' were not a valid --shaping


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), scoring=st.sampled_from(["american", "english"]), jokers=st.integers(0, 2),
       scale=st.sampled_from([1.0, 0.25]), reward_mode=st.sampled_from(["line", "terminal"]))
def test_shaped_rewards_of_a_game_sum_to_its_score_minus_the_first_potential(seed, scoring, jokers, scale, reward_mode):
    base = heuristic_values(point_system(scoring))
    values = base + np.random.default_rng(seed).normal(size=base.shape)
    pot = LinePotential(values, scale, complete=reward_mode == "terminal")
    steps = _random_game(dict(scoring=scoring, jokers=jokers, reward_scale=scale, reward_mode=reward_mode), seed)
    phi = pot(steps[0][0])
    phi0, total = phi.copy(), np.zeros(len(phi))
    for obs, reward, terminated, _ in steps[1:]:
        phi_next = pot(obs)
        step = shaped_rewards(reward, phi, phi_next, 1.0, np.ones(len(phi), bool), terminated)
        if not terminated.any():  # before the end: the shaping term is the potential's change alone
            np.testing.assert_allclose(step - reward, phi_next - phi)
        total += step
        phi = phi_next
    np.testing.assert_allclose(total, scale * np.asarray(steps[-1][3]["score"]) - phi0, atol=1e-9)


def test_terminal_reward_potential_counts_complete_lines():
    values = heuristic_values(point_system("american")) + 1.0
    full = _random_game({}, seed=2)[-1][0]
    assert np.allclose(LinePotential(values)(full), 0.0)
    # complete=True: a full board is worth its lines' values (complete lines: their points + 1 here)
    hands = line_keys(board_codes(full)[:, np.r_[[[5 * r + c for c in range(5)] for r in range(5)],
                                                 [[5 * r + c for r in range(5)] for c in range(5)]]])
    expected = values[hands, np.array([0] * 5 + [1] * 5)].sum(1)
    np.testing.assert_allclose(LinePotential(values, complete=True)(full), expected)


def test_trainer_potential_follows_the_reward_mode():
    from agents.config import TrainConfig
    from agents.shaping import potential_for

    assert potential_for(TrainConfig(algo="fast-ppo")) is None
    line = potential_for(TrainConfig(algo="fast-ppo", shaping="heuristic", reward_scale=2.0))
    terminal = potential_for(TrainConfig(algo="fast-ppo", shaping="heuristic", reward_scale=2.0, reward_mode="terminal"))
    assert not line.complete and terminal.complete
    np.testing.assert_allclose(line.values[1310:1330], 2.0 * np.where(
        (np.arange(1310, 1330) // 264) == 5, 0.0, heuristic_values(point_system("american"))[1310:1330].T).T)
    np.testing.assert_allclose(terminal.values, 2.0 * heuristic_values(point_system("american")))


def test_autoreset_steps_are_not_shaped():
    r = shaped_rewards(np.array([1.0, 0.0]), np.array([3.0, 0.0]), np.array([5.0, 9.0]), 1.0, np.array([True, False]))
    np.testing.assert_allclose(r, [3.0, 0.0])


def test_table_potential_uses_the_learned_values(tmp_path):
    pot = LinePotential.make("tables", "american", None, 1.0, tables=None, games=2000, phases=2, features="none",
                             cache=str(tmp_path))
    heur = LinePotential.make("heuristic", "american")
    assert pot.values.shape == heur.values.shape and np.isfinite(pot.values).all()
    assert not np.allclose(pot.values, heur.values)
    from agents.lines import KEY_T

    assert (pot.values[KEY_T == 5] == 0).all()
    # each visited incomplete key: its values averaged over phases by visits (a mutation audit found a plain mean
    # unseen); complete keys are 0 here (their points are paid as rewards)
    from agents.tables import tables_for

    vt = tables_for("american", None, tables=None, games=2000, phases=2, features="none", cache=str(tmp_path))
    v, c = vt.values.reshape(vt.values.shape[0], 2, -1), vt.counts.reshape(vt.values.shape[0], 2, -1)
    visited = (c.sum(2) > 0) & (KEY_T < 5)[:, None]
    weighted = (v * c).sum(2) / np.maximum(c.sum(2), 1)
    assert visited.sum() > 50 and np.allclose(pot.values[visited], weighted[visited])
    assert not np.allclose(pot.values[visited], v.mean(2)[visited])


@pytest.mark.parametrize("vectorization", ["native", "sync"])
def test_sb3_wrapper_shapes_rewards_that_telescope_and_keeps_masks(vectorization):
    pytest.importorskip("stable_baselines3")
    from agents.shaping import shape_sb3_vec_env

    n = 3
    if vectorization == "native":
        from pokersquares_env.sb3 import make_sb3_vec_env

        raw, shaped = make_sb3_vec_env(num_envs=n, seed=4), make_sb3_vec_env(num_envs=n, seed=4)
    else:
        from stable_baselines3.common.env_util import make_vec_env

        raw, shaped = (make_vec_env("PokerSquares-v0", n_envs=n, seed=4) for _ in range(2))
    values = heuristic_values(point_system("american")) + 0.5
    pot = LinePotential(values)
    shaped = shape_sb3_vec_env(shaped, pot, gamma=1.0)
    obs_raw, obs = raw.reset(), shaped.reset()
    np.testing.assert_array_equal(obs_raw, obs)
    phi0 = pot(obs)
    rng = np.random.default_rng(0)
    totals_raw, totals = np.zeros(n), np.zeros(n)
    for step in range(25):
        masks = np.stack(shaped.env_method("action_masks"))  # masks pass through the wrapper
        np.testing.assert_array_equal(masks, np.stack(raw.env_method("action_masks")))
        action = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs_raw, r_raw, d_raw, _ = raw.step(action)
        obs, r, d, infos = shaped.step(action)
        np.testing.assert_array_equal(obs_raw, obs)
        totals_raw += r_raw
        totals += r
    assert d.all() and d_raw.all()  # the 25th placement ends every game; obs is the next game's first
    np.testing.assert_allclose(totals, totals_raw - phi0, atol=1e-4)  # shaped return = return - phi(first board); float32
    assert (r != r_raw).any() or np.allclose(phi0, 0)
    raw.close()
    shaped.close()


def test_shaped_line_and_terminal_rewards_are_the_same_sequence():
    """phi_terminal = phi_line + the line points already paid (complete lines are valued at their points, as in the
    heuristic and learned tables), so shaping makes the two reward modes identical."""
    from agents.lines import KEY_T

    values = heuristic_values(point_system("english")) + 0.3 * (KEY_T < 5)[:, None]
    shaped = {}
    for mode in ("line", "terminal"):
        pot = LinePotential(values, complete=mode == "terminal")
        steps = _random_game(dict(scoring="english", reward_mode=mode), seed=9)
        phi, out = pot(steps[0][0]), []
        for obs, reward, terminated, _ in steps[1:]:
            phi_next = pot(obs)
            out.append(shaped_rewards(reward, phi, phi_next, 1.0, np.ones(len(phi), bool), terminated))
            phi = phi_next
        shaped[mode] = np.array(out)
    np.testing.assert_allclose(shaped["line"], shaped["terminal"], atol=1e-9)


def test_discount_multiplies_the_next_potential_only():
    """F = gamma * phi(s') - phi(s) (Ng et al.): with gamma < 1 only the next state's potential is discounted."""
    rewards, phi, phi_next = np.array([1.0, 2.0, 3.0]), np.array([3.0, 4.0, 5.0]), np.array([6.0, 8.0, 10.0])
    out = shaped_rewards(rewards, phi, phi_next, 0.5, np.array([True, True, False]), np.array([False, True, False]))
    np.testing.assert_allclose(out, [1.0 + 0.5 * 6.0 - 3.0, 2.0 - 4.0, 3.0])  # shaped; terminal (phi' = 0); autoreset


def test_board_codes_need_a_batch_of_rows_at_least_a_board_wide():
    obs = _random_game({}, seed=3, n=2)[10][0]
    np.testing.assert_array_equal(board_codes(obs[:, : 25 * 18]), board_codes(obs))  # the board part alone reads
    for bad in (obs[0], obs[None], obs[:, : 25 * 18 - 1]):  # one row, a 3-d stack, a truncated row
        with pytest.raises(ValueError, match="expected"):
            board_codes(bad)


def test_line_values_must_be_finite():
    values = heuristic_values(point_system("american"))
    for bad in (np.nan, np.inf):
        values_bad = values.copy()
        values_bad[7, 1] = bad
        with pytest.raises(ValueError, match="finite"):
            LinePotential(values_bad)


def test_table_potential_of_a_never_visited_key_is_its_plain_mean(tmp_path):
    """Keys that training never visited keep their (prior-blended) values averaged over phases, not 0."""
    from agents.lines import KEY_T
    from agents.tables import tables_for

    pot = LinePotential.make("tables", "american", None, 1.0, tables=None, games=2000, phases=2, features="none",
                             cache=str(tmp_path))
    vt = tables_for("american", None, tables=None, games=2000, phases=2, features="none", cache=str(tmp_path))
    v, c = vt.values.reshape(vt.values.shape[0], 2, -1), vt.counts.reshape(vt.values.shape[0], 2, -1)
    unvisited = (c.sum(2) == 0) & (KEY_T < 5)[:, None]
    assert unvisited.sum() > 50 and (v.mean(2)[unvisited] != 0).any()
    np.testing.assert_allclose(pot.values[unvisited], v.mean(2)[unvisited])


def test_trainer_table_potential_is_trained_for_the_configs_rules(monkeypatch):
    from types import SimpleNamespace

    import agents.tables
    from agents.config import TrainConfig
    from agents.lines import NUM_KEYS
    from agents.shaping import potential_for
    from pokersquares_env.core import Rules

    seen = []

    def fake_tables_for(system, rules, **options):  # no training: the rules asked for are what is checked
        seen.append(rules)
        return SimpleNamespace(values=np.ones((NUM_KEYS, 2, 3)), counts=np.ones((NUM_KEYS, 2, 3)))

    monkeypatch.setattr(agents.tables, "tables_for", fake_tables_for)
    potential_for(TrainConfig(algo="fast-ppo", shaping="tables", jokers=2, placement="adjacent", first_cell=12,
                              reward_scale=1.0))
    assert seen == [Rules(jokers=2, placement="adjacent", first_cell=12)]


def test_sb3_wrapper_defaults_to_no_discount_and_keeps_the_reward_dtype():
    pytest.importorskip("stable_baselines3")
    from agents.shaping import shape_sb3_vec_env
    from pokersquares_env.sb3 import make_sb3_vec_env

    raw, venv = make_sb3_vec_env(num_envs=2, seed=7), make_sb3_vec_env(num_envs=2, seed=7)
    pot = LinePotential(heuristic_values(point_system("american")) + 0.5)
    shaped = shape_sb3_vec_env(venv, pot)  # gamma=1: the shaped return is the return minus phi(first board)
    raw.reset()
    phi0 = pot(shaped.reset())
    rng = np.random.default_rng(1)
    total_raw, total = np.zeros(2), np.zeros(2)
    for _ in range(25):
        action = np.array([rng.choice(np.flatnonzero(m)) for m in np.stack(shaped.env_method("action_masks"))])
        r_raw, r = raw.step(action)[1], shaped.step(action)[1]
        assert r.dtype == r_raw.dtype
        total_raw += r_raw
        total += r
    np.testing.assert_allclose(total, total_raw - phi0, atol=1e-4)
    raw.close()
    shaped.close()


def test_trainer_potential_values_lines_by_the_configs_point_system():
    """--scoring english shapes with the English line values (not the American ones)."""
    from agents.config import TrainConfig
    from agents.lines import KEY_T
    from agents.shaping import potential_for

    for scoring in ("english", "american"):
        pot = potential_for(TrainConfig(algo="fast-ppo", shaping="heuristic", scoring=scoring, reward_scale=1.0))
        expected = np.where((KEY_T == 5)[:, None], 0.0, heuristic_values(point_system(scoring)))
        np.testing.assert_allclose(pot.values, expected)


def test_table_potential_takes_the_scale_and_the_terminal_reward_mode(tmp_path):
    """The tables potential is scaled like the heuristic one, and under complete=True (reward_mode='terminal') it
    values complete lines too (at their learned values), as the heuristic one does."""
    from agents.lines import KEY_T

    options = dict(tables=None, games=2000, phases=2, features="none", cache=str(tmp_path))
    pot = LinePotential.make("tables", "american", None, 1.0, **options)
    half = LinePotential.make("tables", "american", None, 0.5, **options)
    np.testing.assert_allclose(half.values, 0.5 * pot.values)
    terminal = LinePotential.make("tables", "american", None, 0.5, complete=True, **options)
    assert terminal.complete and not pot.complete
    np.testing.assert_allclose(terminal.values[KEY_T < 5], half.values[KEY_T < 5])
    assert (pot.values[KEY_T == 5] == 0).all() and (terminal.values[KEY_T == 5] != 0).any()


def test_table_potential_trains_into_the_shared_table_cache(tmp_path, monkeypatch):
    """By default the tables potential caches its training where the agents' tables go (POKERSQUARES_CACHE), so a
    second run (or the expectimax agent with the same options) reuses it instead of retraining."""
    import os

    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path))
    first = LinePotential.make("tables", "american", None, 1.0, tables=None, games=1000, phases=2, features="none")
    assert len(os.listdir(tmp_path / "tables")) == 1
    again = LinePotential.make("tables", "american", None, 1.0, tables=None, games=1000, phases=2, features="none")
    np.testing.assert_array_equal(first.values, again.values)


def test_sb3_wrapper_discounts_the_next_potential_by_its_gamma():
    pytest.importorskip("stable_baselines3")
    from agents.shaping import shape_sb3_vec_env
    from pokersquares_env.sb3 import make_sb3_vec_env

    raw, venv = make_sb3_vec_env(num_envs=2, seed=3), make_sb3_vec_env(num_envs=2, seed=3)
    pot = LinePotential(heuristic_values(point_system("american")) + 0.5)
    shaped = shape_sb3_vec_env(venv, pot, gamma=0.5)
    raw.reset()
    phi = pot(shaped.reset())
    rng = np.random.default_rng(2)
    for _ in range(3):  # no game ends: each shaped reward is r + 0.5 * phi(s') - phi(s)
        action = np.array([rng.choice(np.flatnonzero(m)) for m in np.stack(shaped.env_method("action_masks"))])
        r_raw = raw.step(action)[1]
        obs, r, done, _ = shaped.step(action)
        assert not done.any()
        phi_next = pot(obs)
        np.testing.assert_allclose(r, r_raw + 0.5 * phi_next - phi, rtol=1e-5, atol=1e-5)
        phi = phi_next
    raw.close()
    shaped.close()


@pytest.mark.parametrize("scale, error, message", [(float("nan"), ValueError, "scale=nan: expected a finite number"),
                                                   (float("inf"), ValueError, "scale=inf: expected a finite number"),
                                                   ("2", TypeError, "scale='2': expected a number"),
                                                   (True, TypeError, "scale=True: expected a number")])
def test_line_potential_refuses_a_scale_that_is_not_a_finite_number(scale, error, message):
    """A NaN or infinite scale made every potential NaN or infinite, silently; a string failed in float()."""
    with pytest.raises(error, match=re.escape(message)):
        LinePotential(heuristic_values(point_system("american")), scale=scale)
    assert LinePotential(heuristic_values(point_system("american")), scale=np.float32(0.5)).values.dtype == np.float64
