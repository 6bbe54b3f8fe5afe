"""The compiled (numba) agent kernels against the numpy code they twin, and policy iteration on the tables."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.batch import Batch
from agents.expectimax import compiled_values, expectimax_values
from agents.tables import ValueTables, improve_tables, train_tables
from pokersquares_env.core import PokerSquaresGame, Rules
from pokersquares_env.vector import numba_available

pytestmark = pytest.mark.skipif(not numba_available(), reason="numba not installed (the fast extra)")

RULES = [Rules(), Rules(jokers=2), Rules(placement="adjacent", first_cell="center"), Rules(jokers=1, placement="adjacent")]
IDS = ["plain", "j2", "adjacent-center", "j1-adjacent"]


@pytest.fixture(autouse=True)
def _table_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path_factory.getbasetemp() / "pscache"))


@pytest.fixture(scope="module")
def tables():
    """Small trained tables per rules and features (a few seconds each)."""
    out = {}

    def get(rules, features="outs"):
        key = (rules, features)
        if key not in out:
            out[key] = train_tables("american", rules, games=3000, phases=26, features=features, seed=3)
        return out[key]

    return get


def _states(game, seed, every=3):
    """Positions along a random game (every ``every``-th move), for comparing values."""
    rng = np.random.default_rng(seed)
    state = game.init(game.deal(rng), validate=False)
    while not state.terminal:
        if len(state.placements) % every == 0:
            yield state.copy()
        game.apply(state, int(rng.choice(game.legal_cells(state))))


@pytest.mark.parametrize("rules", RULES, ids=IDS)
@pytest.mark.parametrize("features", ["outs", "none"])
def test_compiled_expectimax_matches_numpy(tables, rules, features):
    vt = tables(rules, features)
    run = compiled_values(vt.values, rules, "numba")
    game = PokerSquaresGame(rules)
    checked = 0
    for seed in (1, 2):
        for state in _states(game, seed):
            for ply in (1, 2):
                want = expectimax_values(vt.values, game, state, ply)
                got = run(game, state, ply)
                assert np.array_equal(np.isnan(want), np.isnan(got))
                np.testing.assert_allclose(got[~np.isnan(want)], want[~np.isnan(want)], rtol=0, atol=1e-9)
                checked += 1
    assert checked >= 16


@pytest.mark.parametrize("rules", RULES, ids=IDS)
def test_compiled_rollouts_match_numpy(tables, rules):
    from agents import _fast

    vt = tables(rules)
    game = PokerSquaresGame(rules)
    state = list(_states(game, 4, every=7))[1]  # 7 cards placed
    legal = game.legal_cells(state)
    cells = np.array(legal[:3])
    unseen = np.array(game.unseen(state))
    steps = 24 - len(state.placements)
    orders = np.argsort(np.random.default_rng(0).random((40, unseen.size)), axis=1)[:, :steps]
    flat, phases, nout = _fast.tables_flat(vt.values)
    points = vt.system.line_points_table
    got = _fast.rollout_means(flat, phases, nout, points, state, cells, state.card, unseen[orders],
                              rules.placement == "adjacent", rules.first_cell)
    b = Batch.from_state(state, 1, placement=rules.placement, first_cell=rules.first_cell).repeat(len(cells))
    b.place(cells, np.full(len(cells), state.card))
    by = b.repeat(len(orders))
    by.play_out(np.tile(unseen[orders], (len(cells), 1)), vt.values)
    want = points[by.keys()].sum(1).reshape(len(cells), len(orders)).mean(1)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)


def test_search_backends_agree(tables):
    game = PokerSquaresGame()
    deck = game.deal(np.random.default_rng(9))
    plays = []
    for backend in ("numpy", "numba"):
        agent = make_agent(f"search:rollouts=16,candidates=3,games=3000,phases=26,backend={backend}", seed=5)
        assert agent.backend == backend
        state = game.init(deck, validate=False)
        values = []
        while not state.terminal:
            values.append(agent.action_values(None, None, game, state.copy()))
            game.apply(state, agent.act(None, None, game, state.copy()))
        plays.append((list(state.placements), values))
    assert plays[0][0] == plays[1][0]
    for a, b in zip(plays[0][1], plays[1][1]):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)


def test_backend_option_errors(tables):
    vt = train_tables("american", games=500, phases=4, features="straights", seed=0)
    with pytest.raises(ValueError, match="features=straights"):
        compiled_values(vt.values, Rules(), "numba")
    assert compiled_values(vt.values, Rules(), "auto") is None  # falls back to numpy quietly
    assert compiled_values(tables(Rules()).values, Rules(), "numpy") is None
    with pytest.raises(ValueError, match="backend='gpu'"):
        make_agent("expectimax:backend=gpu,games=3000,phases=26")


def test_self_play_records_match_batch_play_out(tables):
    """ply=1 greedy self-play in the kernel visits exactly the abstractions Batch.play_out records."""
    from agents import _fast

    vt = tables(Rules())
    rng = np.random.default_rng(2)
    decks = np.argsort(rng.random((32, 52)), axis=1)
    rec, final = _fast.self_play(vt.values, decks, ply=1, explore=np.zeros((32, 25), bool),
                                 noise=np.zeros((32, 25)), points=vt.system.line_points_table)
    b = Batch(32)
    record = []
    b.play_out(decks, vt.values, record=record)
    assert np.array_equal(final, vt.system.line_points_table[b.keys()])
    phases, nout = vt.values.shape[2], vt.values.shape[3]
    kind = np.array([0] * 5 + [1] * 5)
    for m, (ph, keys, outs) in enumerate(record):
        want = (((keys * 2 + kind) * phases + ph) * nout + outs)
        assert np.array_equal(rec[:, m], want)


def test_improve_tables(tables, tmp_path):
    base = tables(Rules())
    a = improve_tables(base, games=96, batch=48, seed=4)
    b = improve_tables(base, games=96, batch=48, seed=4)
    assert np.array_equal(a.values, b.values) and a.policy == "ply=1+ply=2x96"
    assert a.counts.sum() == 96 * 25 * 10  # every line after every move, once
    complete = np.arange(base.values.shape[0]) // 264 == 5
    assert np.array_equal(a.values[complete], base.values[complete])
    unvisited = a.counts == 0
    np.testing.assert_allclose(a.values[unvisited], base.values[unvisited], rtol=1e-12)
    visited = ~unvisited & ~complete[:, None, None, None]
    assert not np.allclose(a.values[visited], base.values[visited])
    path = tmp_path / "t.npz"
    a.save(path)
    loaded = ValueTables.load(path)
    assert loaded.policy == a.policy and np.array_equal(loaded.values, a.values)
    with pytest.raises(ValueError, match="ply=3"):
        improve_tables(base, games=10, ply=3)
    with pytest.raises(ValueError, match="epsilon=1.5"):
        improve_tables(base, games=10, epsilon=1.5)
