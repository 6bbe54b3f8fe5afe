"""The compiled (numba) agent kernels against the numpy code they twin, and policy iteration on the tables."""

from __future__ import annotations

import re

import numpy as np
import pytest

from agents import make_agent
from agents.batch import FLUSH_BUCKETS, NUM_OUTS_CLAIMS, Batch
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
    for a, b in zip(plays[0][1], plays[1][1], strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)


def test_backend_option_errors(tables):
    vt = train_tables("american", games=500, phases=4, features="straights", seed=0)
    with pytest.raises(ValueError, match="features=straights"):
        compiled_values(vt.values, Rules(), "numba")
    assert compiled_values(vt.values, Rules(), "auto") is None  # falls back to numpy quietly
    assert compiled_values(tables(Rules()).values, Rules(), "numpy") is None
    with pytest.raises(ValueError, match="backend='gpu'"):
        make_agent("expectimax:backend=gpu,games=3000,phases=26")


@pytest.mark.parametrize("spec", ["expectimax:ply=1", "expectimax:ply=2", "search:rollouts=8,candidates=3",
                                  "search:rollouts=8,candidates=3,ply=3", "expectimax:ply=3"])
def test_agents_follow_the_games_placement_rules_not_those_they_were_built_with(tables, tmp_path, spec):
    """The compiled kernels kept the placement and first cell of the rules the agent was built with: built for the
    plain rules, expectimax and search played cell 0 as the first card of an adjacent, first-cell-center game (and
    search's E and its rollouts followed different rules).  Both backends follow ``game.rules`` now, and agree."""
    path = tmp_path / "plain.npz"
    tables(Rules()).save(path)  # tables of the plain rules: placement and first cell are not in them
    game = PokerSquaresGame(Rules(placement="adjacent", first_cell="center"))
    plays = {}
    for backend in ("numpy", "numba"):
        if "ply=3" in spec and backend == "numpy":
            continue  # compiled only
        agent = make_agent(f"{spec},tables={path},backend={backend}", seed=4)  # built for the plain rules
        assert agent.rules == Rules() and agent.backend == backend
        state = game.init(game.deal(np.random.default_rng(11)), validate=False)
        while not state.terminal:
            legal = game.legal_cells(state)
            values = agent.action_values(None, None, game, state.copy())
            assert np.flatnonzero(~np.isnan(values)).tolist() == legal  # NaN exactly on the game's illegal cells
            cell = agent.act(None, None, game, state.copy())
            assert cell in legal, f"{backend}: illegal cell {cell} (legal {legal})"
            game.apply(state, cell)
        assert state.placements[0] == 12
        plays[backend] = list(state.placements)
    if len(plays) == 2:
        assert plays["numpy"] == plays["numba"]


@pytest.mark.parametrize("spec", ["expectimax:ply=2", "search:rollouts=4,candidates=2"])
@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_a_game_of_other_jokers_than_the_agent_was_built_for_is_refused(tables, tmp_path, spec, backend):
    """Tables value lines of one deck: an agent built for no jokers played a two-joker game on lines of jokers its
    tables never trained, without a word."""
    path = tmp_path / "plain.npz"
    tables(Rules()).save(path)
    agent = make_agent(f"{spec},tables={path},backend={backend}", seed=4)
    game = PokerSquaresGame(Rules(jokers=2, placement="adjacent"))
    state = game.init(game.deal(np.random.default_rng(3)), validate=False)
    with pytest.raises(ValueError, match=re.escape("the game's rules {'jokers': 2, 'placement': 'adjacent', "
                                                   "'first_cell': None} have jokers=2, but the agent was built for "
                                                   "rules {'jokers': 0, 'placement': 'free', 'first_cell': None}")):
        agent.act(None, None, game, state)
    assert len(state.placements) == 0


def test_compiled_values_refuse_a_game_of_other_jokers(tables):
    """The kernels :func:`compiled_values` returns refuse a game of other jokers than their rules, as documented, not
    only the agents that call them (a mutation audit found the kernels' own check dropped unseen)."""
    run = compiled_values(tables(Rules()).values, Rules(), "numba")
    game = PokerSquaresGame(Rules(jokers=1))
    state = game.init(game.deal(np.random.default_rng(3)), validate=False)
    for ply in (2, 3):
        with pytest.raises(ValueError, match=re.escape("have jokers=1, but the agent was built for rules")):
            run(game, state, ply)


@pytest.mark.parametrize("spec, needs", [("expectimax:ply=3", "ply=3"), ("search:depth=4", "depth=4"),
                                         ("search:ply=3,rollouts=2", "ply=3")])
def test_options_of_the_kernels_with_straights_tables_name_the_real_reason(spec, needs, tmp_path, monkeypatch):
    """With numba installed these said '... needs the compiled backend (numba ...)', and only after training the
    tables: the kernels cannot read straights tables, whatever the backend."""
    import agents.tables

    monkeypatch.setattr(agents.tables, "train_tables", lambda *a, **k: pytest.fail("trained tables"))
    monkeypatch.setattr(agents.tables, "_TRAINED", {}, raising=False)
    with pytest.raises(ValueError, match=re.escape(f"{needs} needs the compiled kernels, which cannot read "
                                                   "features='straights' tables: use features='outs' or 'none'")):
        make_agent(f"{spec},features=straights,games=500,phases=4,cache={tmp_path}")
    vt = train_tables("american", games=500, phases=4, features="straights", seed=0)  # the same from a file
    path = tmp_path / "straights.npz"
    vt.save(path)
    with pytest.raises(ValueError, match=re.escape(f"{needs} needs the compiled kernels, which cannot read "
                                                   "features='straights' tables")):
        make_agent(f"{spec},tables={path}")


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


@pytest.mark.parametrize("features", ["none", "outs"])
@pytest.mark.parametrize("rules", [Rules(), Rules(jokers=1, placement="adjacent", first_cell=12)])
def test_numpy_and_compiled_self_play_credit_the_same_table_entries(tables, features, rules):
    """train_tables credits each batch through numpy play (_numpy_batch), improve_tables and claims tables through the
    kernels (_compiled_batch).  Played greedily on the same decks they must add the same sums and counts to the same
    entries: a mutation audit found that crediting rows' outcomes to the column entries (and back) in train_tables went
    unseen, since the kernel's test re-derived the index itself."""
    from agents import _fast
    from agents.tables import _compiled_batch, _numpy_batch

    vt = tables(rules, features)
    decks = np.argsort(np.random.default_rng(4).random((64, rules.deck_size)), axis=1)
    points = vt.system.line_points_table
    s1, c1 = _numpy_batch(vt.values, decks, rules, points, 0.0, np.random.default_rng(0))
    s2, c2 = _compiled_batch(_fast, vt.values, decks, rules, points, 0.0, 1, np.random.default_rng(0))
    assert c1.sum() == 64 * 25 * 10 and np.array_equal(c1, c2)
    assert np.allclose(s1, s2)
    rows, cols = c1.reshape(vt.values.shape)[:, 0].sum(), c1.reshape(vt.values.shape)[:, 1].sum()
    assert rows == cols == 64 * 25 * 5


def test_batch_play_out_with_exploration_needs_an_rng(tables):
    vt = tables(Rules())
    decks = np.argsort(np.random.default_rng(3).random((4, 52)), axis=1)
    with pytest.raises(ValueError, match=r"epsilon=0.1 plays random cells: expected an rng"):
        Batch(4).play_out(decks, vt.values, epsilon=0.1)
    b = Batch(4)
    b.play_out(decks, vt.values, epsilon=0.1, rng=np.random.default_rng(0))
    assert b.placed == 25 and b.legal().sum() == 0


def test_batch_play_out_explores_with_probability_epsilon():
    """A vanishing ``epsilon`` plays the greedy moves; ``epsilon`` 1 plays random legal cells (others than greedy)."""
    from agents.lines import NUM_KEYS

    values = np.random.default_rng(0).normal(size=(NUM_KEYS, 2, 26))
    decks = np.argsort(np.random.default_rng(3).random((8, 52)), axis=1)
    greedy, rare, always = Batch(8), Batch(8), Batch(8)
    greedy.play_out(decks, values)
    rare.play_out(decks, values, epsilon=1e-12, rng=np.random.default_rng(0))
    always.play_out(decks, values, epsilon=1.0, rng=np.random.default_rng(0))
    assert np.array_equal(rare.keys(), greedy.keys())
    assert not np.array_equal(always.keys(), greedy.keys()) and always.occ.all()


@pytest.mark.parametrize("phases", [3, 4, 7])
def test_self_play_and_batch_play_out_agree_on_tables_of_few_phases(phases):
    """With 26 phases a wrong phase of a board (``placed * phases // 25`` for ``// 26``) changes nothing: the kernels'
    and numpy's phases must agree for tables of few phases too, the entries they read and credit included."""
    from agents import _fast
    from agents.batch import NUM_OUTS
    from agents.lines import NUM_KEYS
    from pokersquares_env.scoring import point_system

    values = np.random.default_rng(phases).normal(size=(NUM_KEYS, 2, phases, NUM_OUTS))
    decks = np.argsort(np.random.default_rng(2).random((24, 52)), axis=1)
    points = point_system("american").line_points_table
    rec, final = _fast.self_play(values, decks, ply=1, explore=np.zeros((24, 25), bool), noise=np.zeros((24, 25)),
                                 points=points)
    b = Batch(24)
    record = []
    b.play_out(decks, values, record=record)
    assert np.array_equal(final, points[b.keys()])
    kind = np.array([0] * 5 + [1] * 5)
    assert [ph for ph, _, _ in record] == [min(phases - 1, (m + 1) * phases // 26) for m in range(25)]
    for m, (ph, keys, outs) in enumerate(record):
        assert np.array_equal(rec[:, m], ((keys * 2 + kind) * phases + ph) * NUM_OUTS + outs)


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
    # counts, seed and ply of the wrong type are named, not a bare TypeError from a comparison
    for kwargs, named in [({"games": "96"}, "games='96'"), ({"games": 96.0}, "games=96.0"),
                          ({"batch": None}, "batch=None"), ({"seed": -1}, "seed=-1"), ({"ply": 2.0}, "ply=2.0"),
                          ({"ply": True}, "ply=True")]:
        with pytest.raises(ValueError, match=re.escape(named)):
            improve_tables(base, **{"games": 10, **kwargs})


def test_improve_tables_exploration_decays_linearly_over_the_batches(tables, monkeypatch):
    """Like train_tables, policy iteration explores with epsilon falling from ``epsilon`` to ``epsilon_end`` by games
    played (a mutation audit found a constant epsilon unseen)."""
    from agents import tables as tables_module

    seen = []

    def spy(fast, values, decks, rules, points, eps, ply, rng):
        seen.append((len(decks), eps, ply))
        return np.zeros(values.size), np.zeros(values.size)

    monkeypatch.setattr(tables_module, "_compiled_batch", spy)
    improve_tables(tables(Rules()), games=100, batch=25, ply=1, epsilon=0.6, epsilon_end=0.2)
    assert [(n, ply) for n, _, ply in seen] == [(25, 1)] * 4
    assert [eps for _, eps, _ in seen] == pytest.approx([0.6, 0.5, 0.4, 0.3])


def test_improve_tables_blends_towards_the_base_values_with_weight_blend(tables):
    """``blend`` is the weight, in games, of ``base``'s value: a huge one leaves every entry at its base value, a
    tiny one moves visited entries to the average points their lines ended with (a mutation audit blended with
    weight 1 whatever ``blend`` said, unseen)."""
    base = tables(Rules())
    kept = improve_tables(base, games=16, batch=16, seed=5, ply=1, blend=1e12)
    np.testing.assert_allclose(kept.values, base.values, rtol=1e-9, atol=1e-9)
    moved = improve_tables(base, games=16, batch=16, seed=5, ply=1, blend=1e-12)
    np.testing.assert_array_equal(moved.counts, kept.counts)
    visited = (moved.counts > 0) & ~(np.arange(base.values.shape[0]) // 264 == 5)[:, None, None, None]
    # a visited entry is then the mean of its lines' final points (whole numbers in American scoring)
    sums = moved.values[visited] * moved.counts[visited]
    np.testing.assert_allclose(sums, np.round(sums), atol=1e-6)
    assert not np.allclose(moved.values[visited], base.values[visited])


# ---------------------------------------------------------------- claims tables: a from-scratch reference

def _ref_entry(lines, li, seen_rank, seen_suit):
    """Line ``li``'s claims-table key and outs bucket, computed from scratch (plain Python)."""
    from agents.batch import _FLUSH_SPARE, _RANK_OUTS, _SUIT_OF, FLUSH_BUCKETS, _keys

    t, k, pairs, ranks, suits = lines[li]
    key = int(_keys(t, k, pairs, ranks, suits))
    o = 0
    if 0 < t < 5:
        live = sum(4 - seen_rank[r] for r in range(13) if ranks >> r & 1)
        rb = _RANK_OUTS[min(live, len(_RANK_OUTS) - 1)]
        s = _SUIT_OF[suits]
        fb = 0
        if s >= 0:
            kind = range(0, 5) if li < 5 else range(5, 10)
            claims = sum(5 - lines[j][0] for j in kind
                         if j != li and 2 <= lines[j][0] < 5 and _SUIT_OF[lines[j][4]] == s)
            spare = 13 - seen_suit[s] - (5 - t)
            if claims:
                sp = spare - claims
                fb = FLUSH_BUCKETS + (0 if sp < 0 else 1 if sp <= 1 else 2 if sp <= 4 else 3)
            else:
                fb = _FLUSH_SPARE[min(max(spare + 13, 0), len(_FLUSH_SPARE) - 1)]
        o = fb * 6 + rb
    return key, o


def _ref_board_value(values, lines, seen_rank, seen_suit, ph):
    """Sum of every line's claims-table value, each line's abstraction computed from scratch (plain Python)."""
    total = 0.0
    for li in range(10):
        key, o = _ref_entry(lines, li, seen_rank, seen_suit)
        total += values[key, int(li >= 5), ph, o]
    return total


def _ref_place(lines, counts, seen_rank, seen_suit, cell, card):
    lines = [list(x) for x in lines]
    counts = [list(x) for x in counts]
    seen_rank, seen_suit = list(seen_rank), list(seen_suit)
    for li in (cell // 5, 5 + cell % 5):
        lines[li][0] += 1
        if card < 52:
            r, s = card % 13, card // 13
            lines[li][2] += counts[li][r]
            counts[li][r] += 1
            lines[li][3] |= 1 << r
            lines[li][4] |= 1 << s
        else:
            lines[li][1] += 1
    return lines, counts, seen_rank, seen_suit


def _ref_seen(seen_rank, seen_suit, card):
    seen_rank, seen_suit = list(seen_rank), list(seen_suit)
    if card < 52:
        seen_rank[card % 13] += 1
        seen_suit[card // 13] += 1
    return seen_rank, seen_suit


def _ref_gains(values, lines, counts, seen_rank, seen_suit, free, card, ph):
    sr, ss = _ref_seen(seen_rank, seen_suit, card)
    now = _ref_board_value(values, lines, sr, ss, ph)
    out = {}
    for c in free:
        after = _ref_place(lines, counts, sr, ss, c, card)
        out[c] = _ref_board_value(values, after[0], sr, ss, ph) - now
    return out


def test_self_play_exploration_takes_every_legal_cell_the_noise_points_at():
    """An exploring move takes the legal cell ``int(noise * legal cells)``: noise just below 1 takes the last free
    cell (a mutation audit never took the last one, unseen)."""
    from agents import _fast
    from agents.lines import NUM_KEYS
    from pokersquares_env.scoring import point_system

    points = point_system("american").line_points_table
    decks = np.argsort(np.random.default_rng(2).random((4, 52)), axis=1)
    _, final = _fast.self_play(np.zeros((NUM_KEYS, 2, 2)), decks, ply=1, explore=np.ones((4, 25), bool),
                               noise=np.full((4, 25), 0.999), points=points)
    game = PokerSquaresGame(Rules())
    for g, deck in enumerate(decks):
        state = game.init([int(c) for c in deck], validate=False)
        for m in range(25):
            game.apply(state, 24 - m)
        assert final[g].tolist() == [points[key] for key in state.line_keys()]


def test_self_play_records_the_claims_buckets_of_a_from_scratch_reference():
    """Self-play on claims tables credits each line's entry with its flush claims bucket (a mutation audit recorded
    every line as unclaimed, unseen: the record tests used outs tables).  Exploring always with noise 0, every move
    takes the first free cell, so the boards are known."""
    from agents import _fast
    from agents.lines import NUM_KEYS
    from pokersquares_env.scoring import point_system

    phases = 3
    values = np.random.default_rng(0).normal(size=(NUM_KEYS, 2, phases, NUM_OUTS_CLAIMS))
    decks = np.argsort(np.random.default_rng(1).random((6, 52)), axis=1)
    rec, _ = _fast.self_play(values, decks, ply=1, explore=np.ones((6, 25), bool), noise=np.zeros((6, 25)),
                             points=point_system("american").line_points_table)
    game = PokerSquaresGame(Rules())
    claimed = 0
    for g, deck in enumerate(decks):
        state = game.init([int(c) for c in deck], validate=False)
        for m in range(25):
            game.apply(state, m)
            lines = list(zip(state.line_t, state.line_k, state.line_pairs, state.line_ranks, state.line_suits,
                             strict=True))
            seen_rank = [sum(1 for c in state.board if 0 <= c < 52 and c % 13 == r) for r in range(13)]
            seen_suit = [sum(1 for c in state.board if 0 <= c < 52 and c // 13 == q) for q in range(4)]
            ph = min(phases - 1, (m + 1) * phases // 26)
            for li in range(10):
                key, o = _ref_entry(lines, li, seen_rank, seen_suit)
                assert rec[g, m, li] == ((key * 2 + int(li >= 5)) * phases + ph) * NUM_OUTS_CLAIMS + o, (g, m, li)
                claimed += o >= FLUSH_BUCKETS * 6
    assert claimed > 0


@pytest.mark.parametrize("rules", [Rules(), Rules(jokers=1)], ids=["plain", "j1"])
def test_claims_tables_match_a_from_scratch_reference(rules):
    from agents import _fast

    vt = train_tables("american", rules, games=4096, phases=26, features="claims", seed=2)
    assert vt.values.shape[3] == 54 and vt.features == "claims"
    flat, phases, nout = _fast.tables_flat(vt.values)
    values = vt.values
    game = PokerSquaresGame(rules)
    checked = 0
    for seed in (3, 4):
        for state in _states(game, seed, every=4):
            placed = len(state.placements)
            if placed < 8 or placed >= 24:
                continue
            lines = list(zip(state.line_t, state.line_k, state.line_pairs, state.line_ranks, state.line_suits,
                             strict=True))
            counts = np.asarray(state.rank_counts).reshape(10, 13).tolist()
            seen_rank = [sum(1 for c in state.board if 0 <= c < 52 and c % 13 == r) for r in range(13)]
            seen_suit = [sum(1 for c in state.board if 0 <= c < 52 and c // 13 == s) for s in range(4)]
            free = game.legal_cells(state)
            got1 = _fast.ply_values(flat, phases, nout, state, game.unseen(state), 1, False, None)
            want1 = _ref_gains(values, lines, counts, seen_rank, seen_suit, free, state.card, placed + 1)
            np.testing.assert_allclose([got1[c] for c in free], [want1[c] for c in free], atol=1e-9)
            got2 = _fast.ply_values(flat, phases, nout, state, game.unseen(state), 2, False, None)
            ph = placed + 2
            first = _ref_gains(values, lines, counts, seen_rank, seen_suit, free, state.card, ph)
            for c in free[:3]:
                sr, ss = _ref_seen(seen_rank, seen_suit, state.card)
                l1, c1, _, _ = _ref_place(lines, counts, sr, ss, c, state.card)
                rest = [x for x in free if x != c]
                second = [max(_ref_gains(values, l1, c1, sr, ss, rest, y, ph).values()) for y in game.unseen(state)]
                np.testing.assert_allclose(got2[c], first[c] + np.mean(second), atol=1e-9)
            checked += 1
    assert checked >= 3


@pytest.mark.parametrize("rules", [Rules(), Rules(jokers=1, placement="adjacent")], ids=["plain", "j1-adjacent"])
def test_three_ply_matches_numpy_two_ply_one_level_down(tables, rules):
    """ply=3 value of a cell = its gain on the leaves' phase + mean over next cards of numpy's best ply=2 value."""
    from agents import _fast

    vt = tables(rules)
    flat, phases, nout = _fast.tables_flat(vt.values)
    game = PokerSquaresGame(rules)
    rng = np.random.default_rng(6)
    deck = list(game.deal(rng))
    state = game.init(deck, validate=False)
    for _ in range(16):
        game.apply(state, int(rng.choice(game.legal_cells(state))))
    unseen = game.unseen(state)
    cells = game.legal_cells(state)[:2]
    got = _fast.ply3_values(flat, phases, nout, state, unseen, cells, rules.placement == "adjacent", rules.first_cell)
    placed = len(state.placements)
    ph3 = min(phases - 1, (placed + 3) * phases // 26)
    b = Batch.from_state(state, 1, placement=rules.placement, first_cell=rules.first_cell)
    first = b.cell_gains(np.array([state.card]), vt.values, ph3)[0]
    order = [deck[i] for i in range(placed + 1)]
    for c in cells:
        best = []
        for y in unseen:
            rest = [z for z in unseen if z != y]
            s1 = game.init(order + [y] + rest, validate=False)
            for cell in list(state.placements) + [c]:
                game.apply(s1, cell)
            best.append(np.nanmax(expectimax_values(vt.values, game, s1, 2)))
        assert got[c] == pytest.approx(first[c] + np.mean(best), abs=1e-9)
    assert np.isnan(np.delete(got, cells)).all()


def test_expectimax_ply3_plays_legal_and_needs_numba(tables):
    game = PokerSquaresGame()
    agent = make_agent("expectimax:ply=3,top=2,games=3000,phases=26", seed=0)
    state = game.init(game.deal(np.random.default_rng(1)), validate=False)
    while not state.terminal:
        values = agent.action_values(None, None, game, state.copy())
        cell = agent.act(None, None, game, state.copy())
        assert cell in game.legal_cells(state)
        if len(state.placements) <= 22:
            assert np.isfinite(values).sum() == min(2, len(game.legal_cells(state)))
            # the re-rated cells are two-ply's best two (a mutation audit found the worst two went unseen)
            ply2 = make_agent("expectimax:ply=2,games=3000,phases=26").action_values(None, None, game, state.copy())
            legal = np.flatnonzero(~np.isnan(ply2))
            best = legal[np.argsort(-ply2[legal], kind="stable")[:2]]
            assert set(np.flatnonzero(np.isfinite(values))) == set(best)
        game.apply(state, cell)
    with pytest.raises(ValueError, match="needs the compiled backend"):
        make_agent("expectimax:ply=3,backend=numpy,games=3000,phases=26")
    with pytest.raises(ValueError, match="top=0"):
        make_agent("expectimax:ply=3,top=0,games=3000,phases=26")


def test_expectimax_ply3_rerates_four_cells_by_default(tables):
    """``top`` defaults to 4, as documented (a mutation audit found another default unseen)."""
    agent = make_agent("expectimax:ply=3,games=3000,phases=26")
    game = PokerSquaresGame()
    state = game.init(game.deal(np.random.default_rng(2)), validate=False)
    for _ in range(6):
        game.apply(state, game.legal_cells(state)[0])
    assert agent.top == 4 and np.isfinite(agent.action_values(None, None, game, state)).sum() == 4


def _ply2_rollout_means(game, vt, deck, state, cells, perms) -> list[float]:
    """The reference for ``rollout=ply2``: each cell's mean final score over rollouts that place the current card on
    it and then draw each order of ``perms``, every move by numpy's expectimax:ply=2 on ``vt``."""
    placed, means = len(state.placements), []
    for c in cells:
        finals = []
        for perm in perms:
            s = game.init(deck[:placed + 1] + list(perm), validate=False)
            for cell in list(state.placements) + [int(c)]:
                game.apply(s, cell)
            while not s.terminal:
                game.apply(s, int(np.nanargmax(expectimax_values(vt.values, game, s, 2))))
            finals.append(game.score(s))
        means.append(float(np.mean(finals)))
    return means


def test_two_ply_rollouts_match_numpy_expectimax_play(tables):
    """rollout=ply2: each rollout move is numpy's expectimax:ply=2 over the cards not yet drawn in that rollout."""
    from agents import _fast

    vt = tables(Rules())
    flat, phases, nout = _fast.tables_flat(vt.values)
    game = PokerSquaresGame()
    rng = np.random.default_rng(8)
    deck = list(game.deal(rng))
    state = game.init(deck, validate=False)
    for _ in range(17):
        game.apply(state, int(rng.choice(game.legal_cells(state))))
    unseen = np.array(game.unseen(state))
    perms = unseen[np.argsort(rng.random((3, unseen.size)), axis=1)]
    cells = np.array(game.legal_cells(state)[:2])
    got = _fast.rollout2_means(flat, phases, nout, vt.system.line_points_table, state, cells, state.card, perms,
                               False, None)
    np.testing.assert_allclose(got, _ply2_rollout_means(game, vt, deck, state, cells, perms))


def test_search_rollout_option(tables):
    game = PokerSquaresGame()
    agent = make_agent("search:rollout=ply2,rollouts=2,candidates=2,games=3000,phases=26", seed=1)
    state = game.init(game.deal(np.random.default_rng(2)), validate=False)
    for _ in range(18):
        game.apply(state, int(np.random.default_rng(len(state.placements)).choice(game.legal_cells(state))))
    while not state.terminal:
        cell = agent.act(None, None, game, state.copy())
        assert cell in game.legal_cells(state)
        game.apply(state, cell)
    with pytest.raises(ValueError, match="rollout='ply3'"):
        make_agent("search:rollout=ply3,games=3000,phases=26")
    with pytest.raises(ValueError, match="needs the compiled backend"):
        make_agent("search:rollout=ply2,backend=numpy,games=3000,phases=26")


@pytest.mark.parametrize("rules, moves", [(Rules(), 19), (Rules(placement="adjacent"), 8)], ids=["plain", "adjacent"])
def test_search_two_ply_rollouts_play_every_candidate_on_the_same_orders_to_the_end(tables, tmp_path, rules, moves):
    """``search:rollout=ply2``: each candidate's rollouts draw the same random orders of the unseen cards, and every
    rollout move is numpy's expectimax:ply=2 under the game's rules over all the cards not yet drawn in that rollout,
    not only those the rollout will still draw (a mutation audit found the orders cut to the cards drawn, and
    rollouts placing cards under free placement in an adjacent game, unseen)."""
    import copy

    vt = tables(rules)
    path = tmp_path / "t.npz"
    vt.save(path)
    game = PokerSquaresGame(rules)
    deck = list(game.deal(np.random.default_rng(5)))
    state = game.init(deck, validate=False)
    for _ in range(moves):
        game.apply(state, int(np.random.default_rng(len(state.placements)).choice(game.legal_cells(state))))
    agent = make_agent(f"search:rollout=ply2,rollouts=2,candidates=2,tables={path}", rules=rules, seed=1)
    rng = copy.deepcopy(agent.rng)
    values, cells = agent.rate(game, state.copy())
    ply2 = make_agent(f"expectimax:ply=2,tables={path}", rules=rules).action_values(None, None, game, state)
    unseen = np.array(game.unseen(state))
    perms = unseen[np.argsort(rng.random((2, unseen.size)), axis=1)]
    means = _ply2_rollout_means(game, vt, deck, state, cells, perms)
    np.testing.assert_allclose(values[cells], ply2[cells] + np.array(means) - means[0], rtol=0, atol=1e-9)
    assert values[cells[1]] != ply2[cells[1]]


# ----------------------------------------------------------------------------- exact endgame


def _exact_reference(board, card, unseen, system, legal_of):
    """Plain-Python expectimax to the end: expected final score of each legal cell for ``card`` (dict)."""
    from pokersquares_env.scoring import score_grid

    def after(b, pool):
        empty = [c for c in range(25) if b[c] == -1]
        if not empty:
            return score_grid(b, system)
        total = 0.0
        for i, u in enumerate(pool):
            rest = pool[:i] + pool[i + 1:]
            best = -np.inf
            for c in legal_of(b):
                nb = list(b)
                nb[c] = u
                best = max(best, after(nb, rest))
            total += best
        return total / len(pool)

    out = {}
    for c in legal_of(board):
        nb = list(board)
        nb[c] = card
        out[c] = after(nb, list(unseen))
    return out


def _endgame_state(game, seed, empty):
    rng = np.random.default_rng(seed)
    state = game.init(game.deal(rng), validate=False)
    while 25 - len(state.placements) > empty:
        game.apply(state, int(rng.choice(game.legal_cells(state))))
    return state


@pytest.mark.parametrize("rules", RULES, ids=IDS)
@pytest.mark.parametrize("system", ["american", "english"])
def test_exact_endgame_matches_plain_python_expectimax(rules, system):
    from agents._fast import exact_values
    from pokersquares_env.core import ADJACENT
    from pokersquares_env.scoring import point_system

    game = PokerSquaresGame(rules)
    ps = point_system(system)

    def legal_of(b):
        empty = [c for c in range(25) if b[c] == -1]
        if rules.placement != "adjacent":
            return empty
        occupied = sum(1 << c for c in range(25) if b[c] != -1)
        return [c for c in empty if any((occupied >> n) & 1 for n in range(25) if (ADJACENT[c] >> n) & 1)]

    for seed, empty in ((1, 1), (2, 2), (3, 3), (4, 3)):
        state = _endgame_state(game, seed, empty)
        unseen = game.unseen(state)
        # a smaller pool keeps the plain-Python reference quick; the kernel takes any list of unseen cards
        pool = unseen[:9] if empty == 3 else unseen
        got = exact_values(ps.line_points_table, state, pool, rules.placement == "adjacent", rules.first_cell)
        want = _exact_reference(list(state.board), state.card, pool, ps, legal_of)
        assert sorted(np.flatnonzero(~np.isnan(got)).tolist()) == sorted(want)
        for c, v in want.items():
            assert got[c] == pytest.approx(v, abs=1e-9), (seed, empty, c)


def test_exact_endgame_last_card_is_the_true_score():
    from agents._fast import exact_values
    from pokersquares_env.scoring import point_system

    game = PokerSquaresGame(Rules())
    state = _endgame_state(game, 9, 1)
    got = exact_values(point_system("american").line_points_table, state, game.unseen(state), False, None)
    (cell,) = np.flatnonzero(~np.isnan(got))
    final = state.copy()
    game.apply(final, int(cell))
    assert got[cell] == game.score(final)


def test_search_endgame_plays_the_exact_best_cell_and_rejects_bad_values(tables, tmp_path):
    from agents._fast import exact_values
    from agents.search import RolloutSearchAgent
    from pokersquares_env.scoring import point_system

    rules = Rules()
    path = tmp_path / "t.npz"
    tables(rules).save(path)
    agent = make_agent(f"search:endgame=3,rollouts=16,tables={path}", system="american", rules=rules, seed=0)
    assert agent.endgame == 3
    game = PokerSquaresGame(rules)
    pts = point_system("american").line_points_table
    for seed in (11, 12, 13):
        state = _endgame_state(game, seed, 3)
        want = exact_values(pts, state, game.unseen(state), False, None)
        assert agent.act(None, {}, game, state) == int(np.nanargmax(want))
    for bad in (-1, 6, 2.5, True):
        with pytest.raises(ValueError, match="endgame="):
            RolloutSearchAgent(system="american", rules=rules, tables=str(path), endgame=bad)
    with pytest.raises(ValueError, match="endgame=2 needs the compiled backend"):
        RolloutSearchAgent(system="american", rules=rules, tables=str(path), endgame=2, backend="numpy")


def test_exact_endgame_kernel_loads_from_numba_cache_in_a_new_process():
    """The endgame kernel recurses; numba can crash loading some recursive kernels from its cache.

    Two fresh interpreters: the first compiles (or loads) and caches, the second must load the cache and agree.
    """
    import subprocess
    import sys

    code = (
        "import numpy as np\n"
        "from agents._fast import exact_values\n"
        "from pokersquares_env.core import PokerSquaresGame, Rules\n"
        "from pokersquares_env.scoring import point_system\n"
        "g = PokerSquaresGame(Rules()); rng = np.random.default_rng(5)\n"
        "s = g.init(g.deal(rng), validate=False)\n"
        "while 25 - len(s.placements) > 3: g.apply(s, int(rng.choice(g.legal_cells(s))))\n"
        "v = exact_values(point_system('american').line_points_table, s, g.unseen(s), False, None)\n"
        "print(repr(float(np.nansum(v))))\n"
    )
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr[-2000:]
    assert runs[0].stdout == runs[1].stdout


@pytest.mark.parametrize("rules", RULES[:2], ids=IDS[:2])
@pytest.mark.parametrize("features", ["outs", "none"])
def test_truncated_rollouts_match_numpy(tables, rules, features):
    """``depth``: ``depth`` greedy moves, then the board's summed line values (points for full lines)."""
    from agents import _fast
    from agents.batch import IS_COL, phase_of

    vt = tables(rules, features)
    game = PokerSquaresGame(rules)
    state = list(_states(game, 5, every=7))[1]  # 7 cards placed
    cells = np.array(game.legal_cells(state)[:3])
    unseen = np.array(game.unseen(state))
    steps = 24 - len(state.placements)
    orders = np.argsort(np.random.default_rng(1).random((30, unseen.size)), axis=1)[:, :steps]
    flat, phases, nout = _fast.tables_flat(vt.values)
    points = vt.system.line_points_table
    full = _fast.rollout_means(flat, phases, nout, points, state, cells, state.card, unseen[orders], False, None)
    for depth in (1, 5):
        got = _fast.rollout_means(flat, phases, nout, points, state, cells, state.card, unseen[orders], False, None,
                                  depth)
        b = Batch.from_state(state, 1).repeat(len(cells))
        b.place(cells, np.full(len(cells), state.card))
        by = b.repeat(len(orders))
        cards = np.tile(unseen[orders], (len(cells), 1))
        for j in range(depth):
            by.place(by.cell_gains(cards[:, j], vt.values, phase_of(by.placed + 1, phases)).argmax(1), cards[:, j])
        ph = phase_of(by.placed, phases)
        keys = by.keys()
        table = vt.values[keys, IS_COL, ph, by.outs()] if features == "outs" else vt.values[keys, IS_COL, ph]
        line_values = np.where(by.t >= 5, points[keys], table)
        want = line_values.sum(1).reshape(len(cells), len(orders)).mean(1)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
        assert not np.allclose(got, full)  # truncation changes the estimate
    deep = _fast.rollout_means(flat, phases, nout, points, state, cells, state.card, unseen[orders], False, None,
                               steps)
    np.testing.assert_array_equal(deep, full)  # a depth past the end of the game is a full rollout


def test_rollout_means_of_the_last_card_is_its_final_score_with_or_without_a_reply():
    """With the board full after ``card`` no card is left to draw (``orders`` of no columns): every rollout is the
    final score, a two-ply ``reply`` included (a mutation audit read the first column of the empty orders)."""
    from agents import _fast
    from agents.lines import NUM_KEYS
    from pokersquares_env.scoring import point_system

    game = PokerSquaresGame(Rules())
    state = _endgame_state(game, 9, 1)
    (cell,) = game.legal_cells(state)
    final = state.copy()
    game.apply(final, int(cell))
    flat, phases, nout = _fast.tables_flat(np.zeros((NUM_KEYS, 2, 2)))
    points = point_system("american").line_points_table
    orders = np.zeros((3, 0), dtype=np.int64)
    for reply in (None, (np.array(sorted(game.unseen(state))), flat)):
        got = _fast.rollout_means(flat, phases, nout, points, state, np.array([cell]), state.card, orders, False,
                                  None, reply=reply)
        assert got.tolist() == [game.score(final)]


def test_a_two_ply_reply_on_the_last_two_cells_plays_the_card_drawn_on_the_cell_left():
    """With two cells free, a rollout's one move is the last card, which the two-ply reply must put on the one cell
    left (a mutation audit computed no reply for boards of 24 cards, unseen)."""
    from agents import _fast
    from agents.lines import NUM_KEYS
    from pokersquares_env.scoring import point_system

    game = PokerSquaresGame(Rules())
    points = point_system("american").line_points_table
    flat, phases, nout = _fast.tables_flat(np.zeros((NUM_KEYS, 2, 2)))
    for seed in range(3):
        state = _endgame_state(game, seed, 2)
        unseen = np.array(sorted(game.unseen(state)))
        orders = np.array([[state.deck[len(state.placements) + 1]]])  # the deal's own last card
        cells = np.array(game.legal_cells(state))
        got = _fast.rollout_means(flat, phases, nout, points, state, cells, state.card, orders, False, None,
                                  reply=(unseen, flat))
        for c, value in zip(cells, got):
            board = state.copy()
            game.apply(board, int(c))
            (last,) = game.legal_cells(board)
            game.apply(board, int(last))
            assert value == game.score(board), (seed, c)


@pytest.mark.parametrize("empty", [6, 3])
def test_truncated_rollouts_score_complete_lines_by_their_points_not_the_table(empty):
    """A truncated rollout scores the board by the points of its complete lines and the table value of the others.
    On an all-zero table (the greedy move then takes the first legal cell) that is the points of the complete lines
    alone (a mutation audit valued complete lines by the table too, and scored a board of one empty cell as a full
    one, unseen: trained tables hold the points of complete lines)."""
    from agents import _fast
    from agents.lines import NUM_KEYS
    from pokersquares_env.scoring import point_system

    game = PokerSquaresGame(Rules())
    points = point_system("american").line_points_table
    flat, phases, nout = _fast.tables_flat(np.zeros((NUM_KEYS, 2, 3)))
    checked = 0
    for seed in range(4):
        state = _endgame_state(game, seed, empty)  # empty=3: the rollout stops with one cell left
        orders = np.array([state.deck[len(state.placements) + 1:]], dtype=np.int64)  # the deal's own next cards
        cells = np.array(game.legal_cells(state))
        got = _fast.rollout_means(flat, phases, nout, points, state, cells, state.card, orders, False, None, depth=1)
        for c, value in zip(cells, got):
            board = state.copy()
            game.apply(board, int(c))
            game.apply(board, int(game.legal_cells(board)[0]))
            want = sum(points[key] for key, t in zip(board.line_keys(), board.line_t) if t == 5)
            assert value == want, (seed, c)
            checked += want > 0
    assert checked > 0


def test_search_depth_truncates_only_the_rollouts_and_rejects_bad_values(tables, tmp_path):
    from agents.search import RolloutSearchAgent

    rules = Rules()
    path = tmp_path / "t.npz"
    tables(rules).save(path)
    game = PokerSquaresGame(rules)
    state = list(_states(game, 6, every=5))[2]  # 10 cards placed: 14 cards to come after this one
    spec = f"search:rollouts=32,candidates=4,tables={path}"
    full = make_agent(spec, seed=1).action_values(None, {}, game, state)
    past_end = make_agent(f"{spec},depth=14", seed=1).action_values(None, {}, game, state)
    np.testing.assert_array_equal(past_end, full)  # depth reaching the last card: the full rollouts
    short = make_agent(f"{spec},depth=3", seed=1).action_values(None, {}, game, state)
    ply2 = make_agent(f"expectimax:ply=2,tables={path}").action_values(None, {}, game, state)
    legal = np.flatnonzero(~np.isnan(ply2))
    top = legal[np.argsort(-ply2[legal], kind="stable")[:4]]
    rest = np.setdiff1d(legal, top)
    np.testing.assert_allclose(short[rest], ply2[rest])  # only the candidates are re-rated
    assert not np.allclose(short[top], full[top])
    for bad in (-1, 2.5, True):
        with pytest.raises(ValueError, match="depth="):
            RolloutSearchAgent(system="american", rules=rules, tables=str(path), depth=bad)
    with pytest.raises(ValueError, match="depth=4 needs the compiled backend"):
        RolloutSearchAgent(system="american", rules=rules, tables=str(path), depth=4, backend="numpy")
    with pytest.raises(ValueError, match="depth needs rollout='ply1'"):
        RolloutSearchAgent(system="american", rules=rules, tables=str(path), depth=4, rollout="ply2")


@pytest.mark.parametrize("rules", RULES, ids=IDS)
def test_reply_ply2_plays_the_first_rollout_move_by_numpy_two_ply_expectimax(tables, rules):
    """``reply``: each rollout's first move (the reply to the candidate) is numpy's expectimax:ply=2 for the drawn card
    over the other unseen cards; the later moves are one-ply, as without it."""
    from agents import _fast
    from agents.batch import IS_COL, phase_of

    vt = tables(rules)
    game = PokerSquaresGame(rules)
    state = list(_states(game, 5, every=7))[1]  # 7 cards placed
    cells = np.array(game.legal_cells(state)[:3])
    unseen = np.array(sorted(game.unseen(state)))
    steps = 24 - len(state.placements)
    orders = np.argsort(np.random.default_rng(3).random((12, unseen.size)), axis=1)[:, :steps]
    flat, phases, nout = _fast.tables_flat(vt.values)
    points = vt.system.line_points_table
    adjacent = rules.placement == "adjacent"
    depth = 3
    got = _fast.rollout_means(flat, phases, nout, points, state, cells, state.card, unseen[orders], adjacent,
                              rules.first_cell, depth, reply=(unseen, flat))
    plain = _fast.rollout_means(flat, phases, nout, points, state, cells, state.card, unseen[orders], adjacent,
                                rules.first_cell, depth)
    placed = len(state.placements)
    want = np.empty(len(cells))
    for i, c in enumerate(cells):
        finals = []
        for order in unseen[orders]:
            # the state after the candidate, with the rollout's first card drawn: numpy two-ply picks the reply
            s = game.init(list(state.deck[:placed + 1]) + list(order), validate=False)
            for cell in list(state.placements) + [int(c)]:
                game.apply(s, cell)
            assert s.card == order[0] and sorted(game.unseen(s)) == sorted(set(unseen) - {order[0]})
            reply = int(np.nanargmax(expectimax_values(vt.values, game, s, 2)))
            b = Batch.from_state(s, 1, placement=rules.placement, first_cell=rules.first_cell)
            b.place(np.array([reply]), np.array([order[0]]))
            for j in range(1, depth):
                b.place(b.cell_gains(np.array([order[j]]), vt.values, phase_of(b.placed + 1, phases)).argmax(1),
                        np.array([order[j]]))
            keys = b.keys()
            table = vt.values[keys, IS_COL, phase_of(b.placed, phases), b.outs()]
            finals.append(float(np.where(b.t >= 5, points[keys], table).sum()))
        want[i] = np.mean(finals)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    assert not np.allclose(got, plain)  # the two-ply reply changes the estimate


def test_search_reply_option(tables, tmp_path):
    from agents.search import RolloutSearchAgent

    rules = Rules(jokers=1, placement="adjacent")
    path = tmp_path / "t.npz"
    tables(rules).save(path)
    game = PokerSquaresGame(rules)
    agent = make_agent(f"search:reply=ply2,depth=4,rollouts=8,candidates=3,tables={path}", rules=rules, seed=1)
    state = game.init(game.deal(np.random.default_rng(4)), validate=False)
    while not state.terminal:
        cell = agent.act(None, None, game, state.copy())
        assert cell in game.legal_cells(state)
        game.apply(state, cell)
    with pytest.raises(ValueError, match="reply='ply3'"):
        RolloutSearchAgent(system="american", rules=rules, tables=str(path), reply="ply3")
    with pytest.raises(ValueError, match="reply='ply2' needs the compiled backend"):
        RolloutSearchAgent(system="american", rules=rules, tables=str(path), reply="ply2", backend="numpy")
    with pytest.raises(ValueError, match="reply='ply2' needs rollout='ply1'"):
        RolloutSearchAgent(system="american", rules=rules, tables=str(path), reply="ply2", rollout="ply2")


def test_tables_flat_refuses_tables_of_another_shape_naming_it():
    """The kernels index the flat table by line key: a table of another number of keys (or of outs buckets) is
    refused naming its shape, never read out of bounds (a mutation audit dropped the key check unseen)."""
    from agents import _fast
    from agents.batch import NUM_OUTS
    from agents.lines import NUM_KEYS

    flat, phases, nout = _fast.tables_flat(np.zeros((NUM_KEYS, 2, 3, NUM_OUTS)))
    assert (flat.shape, phases, nout) == ((NUM_KEYS * 2 * 3 * NUM_OUTS,), 3, NUM_OUTS)
    with pytest.raises(ValueError, match=re.escape(f"value tables of shape (10, 2, 3): expected ({NUM_KEYS}, 2, "
                                                   "phases[, outs])")):
        _fast.tables_flat(np.zeros((10, 2, 3)))
    with pytest.raises(ValueError, match=re.escape(f"value tables of shape ({NUM_KEYS}, 2, 3, 7): the compiled "
                                                   "kernels take")):
        _fast.tables_flat(np.zeros((NUM_KEYS, 2, 3, 7)))


@pytest.mark.parametrize("kinds", [1, 3])
def test_tables_flat_refuses_tables_of_another_number_of_line_kinds(kinds):
    """The second axis is row/column: a table with one or three kinds is refused naming its shape, not read out of
    bounds or misread (a mutation audit checked only the number of keys, unseen)."""
    from agents import _fast
    from agents.lines import NUM_KEYS

    with pytest.raises(ValueError, match=re.escape(f"value tables of shape ({NUM_KEYS}, {kinds}, 3): expected "
                                                   f"({NUM_KEYS}, 2, phases[, outs])")):
        _fast.tables_flat(np.zeros((NUM_KEYS, kinds, 3)))


@pytest.mark.parametrize("first_cell", [0, 12, 24])
def test_compiled_values_on_an_empty_board_take_only_the_first_cell_the_rules_name(first_cell):
    """A first cell of the rules is the only legal cell of the first card, cell 0 (top-left) included (a mutation
    audit read first cell 0 as none, unseen: every test used the centre or cell 12)."""
    from agents import _fast
    from agents.lines import NUM_KEYS

    flat, phases, nout = _fast.tables_flat(np.zeros((NUM_KEYS, 2, 2)))
    game = PokerSquaresGame(Rules(placement="adjacent", first_cell=first_cell))
    state = game.init(list(range(52)), validate=False)
    unseen = sorted(game.unseen(state))
    for ply in (1, 2):
        vals = _fast.ply_values(flat, phases, nout, state, unseen, ply, True, first_cell)
        assert [c for c in range(25) if not np.isnan(vals[c])] == [first_cell]


def test_two_ply_rollout_moves_and_replies_take_the_first_of_tied_cells():
    """Two-ply rollout moves (``rollout2_means``) and two-ply replies (``rollout_means(reply=...)``) take the first
    cell of highest value, as ``argmax`` and the numpy agents do (a mutation audit took the last, unseen).  On an
    all-zero table every cell ties, so each rollout fills the free cells in order."""
    from agents import _fast
    from agents.lines import NUM_KEYS
    from pokersquares_env.scoring import point_system

    game = PokerSquaresGame(Rules())
    points = point_system("american").line_points_table
    flat, phases, nout = _fast.tables_flat(np.zeros((NUM_KEYS, 2, 3)))

    def in_order(state, cell, order):
        """The final score when the drawn card goes on ``cell``, then ``order``'s cards on the first free cell."""
        placed = len(state.placements)
        board = game.init(list(state.deck[:placed + 1]) + [int(x) for x in order], validate=False)
        for c in [*state.placements, int(cell)]:
            game.apply(board, c)
        while not board.terminal:
            game.apply(board, game.legal_cells(board)[0])
        return game.score(board)

    for seed in range(3):
        state = _endgame_state(game, seed, 5)
        unseen = np.array(sorted(game.unseen(state)))
        perms = unseen[np.argsort(np.random.default_rng(seed).random((2, unseen.size)), axis=1)]
        cells = np.array(game.legal_cells(state))
        two_ply = _fast.rollout2_means(flat, phases, nout, points, state, cells, state.card, perms, False, None)
        replied = _fast.rollout_means(flat, phases, nout, points, state, cells, state.card, perms[:, :4], False, None,
                                      reply=(unseen, flat))
        for i, c in enumerate(cells):
            want = np.mean([in_order(state, c, perm[:4]) for perm in perms])
            assert two_ply[i] == want and replied[i] == want, (seed, c)


def test_a_two_ply_reply_averages_over_the_unseen_cards_less_the_one_drawn(tables):
    """``reply``: a rollout's first move is two-ply expectimax for the drawn card over the *other* unseen cards (a
    mutation audit counted the drawn card among the chance cards too, unseen).  That changes a reply rarely (with two
    cells left, never): these boards have replies it changes, checked below; the later moves are one-ply."""
    from agents import _fast

    vt = tables(Rules())
    flat, phases, nout = _fast.tables_flat(vt.values)
    points = vt.system.line_points_table
    game = PokerSquaresGame(Rules())
    told = 0
    for seed in (2, 3):
        state = _endgame_state(game, seed, 4)
        placed = len(state.placements)
        unseen = np.array(sorted(game.unseen(state)))
        orders = np.array([np.roll(unseen, -i)[:3] for i in range(len(unseen))])  # each unseen card drawn first
        cells = np.array(game.legal_cells(state))
        got = _fast.rollout_means(flat, phases, nout, points, state, cells, state.card, orders, False, None,
                                  reply=(unseen, flat))
        for i, c in enumerate(cells):
            finals = []
            for order in orders:
                s = game.init(list(state.deck[:placed + 1]) + [int(x) for x in order], validate=False)
                for cell in [*state.placements, int(c)]:
                    game.apply(s, cell)
                reply = _fast.ply_values(flat, phases, nout, s, unseen[unseen != order[0]], 2, False, None)
                best = int(np.nanargmax(reply))
                counted = int(np.nanargmax(_fast.ply_values(flat, phases, nout, s, unseen, 2, False, None)))
                told += reply[best] - reply[counted] > 1e-9  # counting the drawn card picks a worse cell
                game.apply(s, best)
                while not s.terminal:
                    game.apply(s, int(np.nanargmax(_fast.ply_values(flat, phases, nout, s, [], 1, False, None))))
                finals.append(game.score(s))
            assert got[i] == pytest.approx(np.mean(finals), abs=1e-9), (seed, c)
    assert told > 0
