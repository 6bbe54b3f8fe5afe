"""The ``search`` agent: expectimax:ply=2 re-rated by rollouts (legal play and fair play are in test_agents.py)."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.base import visible_view
from helpers import play_game
from pokersquares_env.core import PokerSquaresGame, Rules

SMALL = "games=2000,phases=4"


@pytest.fixture(autouse=True)
def _table_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path_factory.getbasetemp() / "pscache"))


def _midgame(game, seed=2, moves=8):
    state = game.init(game.deal(np.random.default_rng(seed)), validate=False)
    helper = make_agent("greedy")
    for _ in range(moves):
        game.apply(state, helper.act(None, None, game, state))
    return state


@pytest.mark.parametrize("rules", [Rules(), Rules(jokers=1), Rules(jokers=2, placement="adjacent"),
                                   Rules(placement="adjacent", first_cell="center")],
                         ids=["plain", "j1", "j2-adjacent", "adjacent-center"])
def test_same_seed_same_game(rules):
    game = PokerSquaresGame(rules)
    deck = game.deal(np.random.default_rng(4))
    spec = f"search:rollouts=6,candidates=3,{SMALL}"
    a = play_game(make_agent(spec, rules=rules, seed=11), game, deck)
    b = play_game(make_agent(spec, rules=rules, seed=11), game, deck)
    assert a == b and len(a[0]) == 25


def test_weight_zero_or_one_candidate_is_expectimax_ply2():
    game = PokerSquaresGame()
    deck = game.deal(np.random.default_rng(5))
    ref = play_game(make_agent(f"expectimax:ply=2,{SMALL}", seed=0), game, deck)[0]
    assert play_game(make_agent(f"search:weight=0,{SMALL}", seed=0), game, deck)[0] == ref
    assert play_game(make_agent(f"search:candidates=1,rollouts=2,{SMALL}", seed=0), game, deck)[0] == ref


def test_action_values_rerate_only_the_candidates():
    game = PokerSquaresGame()
    state = _midgame(game)
    ply2 = make_agent(f"expectimax:ply=2,{SMALL}").action_values(None, None, game, state)
    agent = make_agent(f"search:candidates=3,rollouts=16,{SMALL}", seed=1)
    values = agent.action_values(None, None, game, state)
    legal = ~np.isnan(ply2)
    assert np.array_equal(np.isnan(values), ~legal)
    changed = np.flatnonzero(legal & ~np.isclose(values, ply2))
    top3 = np.argsort(-np.where(legal, ply2, -np.inf), kind="stable")[:3]
    assert set(changed) <= set(top3[1:])  # expectimax's favourite is the anchor and keeps its value
    cell = make_agent(f"search:candidates=3,rollouts=16,{SMALL}", seed=1).act(None, None, game, state)
    assert cell in top3 and values[cell] == np.nanmax(values[top3])


def test_weight_scales_the_rollout_advantage():
    """A mutation audit found `weight` ignored (weight=2 playing as weight=1) unseen: E + weight * (M - M(anchor))."""
    game = PokerSquaresGame()
    state = _midgame(game)
    ply2 = make_agent(f"expectimax:ply=2,{SMALL}").action_values(None, None, game, state)
    one = make_agent(f"search:candidates=3,rollouts=16,weight=1,{SMALL}", seed=1).action_values(None, None, game, state)
    two = make_agent(f"search:candidates=3,rollouts=16,weight=2,{SMALL}", seed=1).action_values(None, None, game, state)
    half = make_agent(f"search:candidates=3,rollouts=16,weight=0.5,{SMALL}", seed=1).action_values(None, None, game,
                                                                                                   state)
    legal = ~np.isnan(ply2)
    assert np.abs(one[legal] - ply2[legal]).max() > 0.1  # the rollouts moved something
    assert np.allclose(two[legal] - ply2[legal], 2 * (one[legal] - ply2[legal]))
    assert np.allclose(half[legal] - ply2[legal], 0.5 * (one[legal] - ply2[legal]))


def test_reads_no_hidden_future():
    game = PokerSquaresGame(Rules(jokers=2))
    state = _midgame(game, seed=6, moves=12)
    spec = f"search:rollouts=8,{SMALL}"
    for trial in range(3):
        other = visible_view(state, np.random.default_rng(50 + trial))
        assert other.deck != state.deck
        assert (make_agent(spec, rules=game.rules, seed=3).act(None, None, game, state.copy())
                == make_agent(spec, rules=game.rules, seed=3).act(None, None, game, other))


@pytest.mark.parametrize("option, message", [
    ("candidates=0", "candidates=0: expected a positive integer"),
    ("rollouts=-2", "rollouts=-2: expected a positive integer"),
    ("rollouts=1.5", "rollouts=1.5: expected a positive integer"),
    ("rollouts=true", "rollouts=True: expected a positive integer"),
    ("weight=-1", "weight=-1: expected a finite number >= 0"),
    ("weight=abc", "weight='abc': expected a finite number >= 0"),
    ("features=bogus", "features='bogus'"),
    ("ply=1", "ply=1: expected 2 or 3"),  # search re-rates two-ply cells: one-ply E is not an option
    ("weight=inf", "weight=inf: expected a finite number >= 0"),
    ("weight=true", "weight=True: expected a finite number >= 0"),
])
def test_bad_options_are_rejected(option, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        make_agent(f"search:{option},{SMALL}")


def test_tables_of_another_point_system_are_rejected(tmp_path):
    from agents.tables import train_tables

    path = tmp_path / "english.npz"
    train_tables("english", games=500, phases=2, features="outs").save(path)
    with pytest.raises(ValueError, match="trained for point system 'english'"):
        make_agent(f"search:tables={path}", system="american")


def _small_tables(tmp_path, name="main.npz", **train):
    from agents.tables import train_tables

    path = tmp_path / name
    vt = train_tables("american", games=2000, phases=4, features="outs", **train)
    vt.save(path)
    return vt, path


def _flat_tables(tmp_path, vt):
    """The path of ``vt`` with every line worth 0, saved in ``tmp_path``."""
    from agents.tables import ValueTables

    flat = tmp_path / "flat.npz"
    ValueTables(np.zeros_like(vt.values), vt.counts, vt.system, vt.rules, vt.games, vt.seed, "flat").save(flat)
    return flat


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_rollout_tables_steer_only_the_rollouts(tmp_path, backend):
    if backend == "numba":
        pytest.importorskip("numba")

    vt, main = _small_tables(tmp_path)
    flat = _flat_tables(tmp_path, vt)  # every line worth 0: rollouts fill the first legal cell; expectimax unchanged
    game = PokerSquaresGame()
    state = _midgame(game, seed=3, moves=6)
    spec = f"search:candidates=4,rollouts=32,backend={backend},tables={main}"
    plain = make_agent(spec, seed=2).action_values(None, None, game, state)
    same = make_agent(f"{spec},rollout_tables={main}", seed=2).action_values(None, None, game, state)
    other = make_agent(f"{spec},rollout_tables={flat}", seed=2).action_values(None, None, game, state)
    np.testing.assert_array_equal(same, plain)  # the same tables given twice: the same moves
    ply2 = make_agent(f"expectimax:ply=2,backend={backend},tables={main}").action_values(None, None, game, state)
    legal = np.flatnonzero(~np.isnan(ply2))
    top = legal[np.argsort(-ply2[legal], kind="stable")[:4]]
    rest = np.setdiff1d(legal, top)
    np.testing.assert_allclose(other[rest], ply2[rest])  # non-candidates keep their expectimax values
    assert not np.allclose(other[top[1:]], plain[top[1:]])  # the weaker rollout policy rates the candidates anew


def test_rollout_tables_errors_name_the_problem(tmp_path):
    _, main = _small_tables(tmp_path)
    from agents.tables import train_tables

    p2 = tmp_path / "p2.npz"
    train_tables("american", games=500, phases=2, features="outs").save(p2)
    with pytest.raises(ValueError, match=r"rollout_tables=.*p2\.npz.*expected the same features and phases"):
        make_agent(f"search:tables={main},rollout_tables={p2}")
    en = tmp_path / "en.npz"
    train_tables("english", games=500, phases=4, features="outs").save(en)
    with pytest.raises(ValueError, match="trained for point system 'english'"):
        make_agent(f"search:tables={main},rollout_tables={en}", system="american")
    pytest.importorskip("numba")
    with pytest.raises(ValueError, match="rollout_tables needs rollout='ply1'"):
        make_agent(f"search:tables={main},rollout_tables={main},rollout=ply2")


@pytest.mark.parametrize("backend, other", [("numpy", "straights"), ("numba", "claims"), ("numba", "none")])
def test_rollout_tables_of_other_features_are_refused_naming_both_files(tmp_path, backend, other):
    """Only the number of dimensions and the phases were compared: outs and claims tables (4-d both) passed, and the
    kernels read one by the other's buckets (a segmentation fault), as numpy read straights tables by outs buckets."""
    if backend == "numba":
        pytest.importorskip("numba")
    from agents.tables import train_tables

    _, main = _small_tables(tmp_path)
    path = tmp_path / f"{other}.npz"
    train_tables("american", games=500, phases=4, features=other).save(path)
    for tables, rollout, (tf, rf) in ((main, path, ("outs", other)), (path, main, (other, "outs"))):
        if backend == "numpy" and tf == "claims":
            continue
        with pytest.raises(ValueError) as error:
            make_agent(f"search:tables={tables},rollout_tables={rollout},rollouts=4,candidates=2,backend={backend}")
        message = str(error.value)
        assert (f"rollout_tables={str(rollout)!r} hold features={rf!r} with 4 phases" in message
                and f"but tables={str(tables)!r} hold features={tf!r} with 4 phases" in message
                and "expected the same features and phases" in message), message


def test_defaults_are_the_documented_ones():
    """docs/agents.md and the docstring: candidates 4, rollouts 512, weight 1.0, ply 2, rollout and reply ply1, endgame
    and depth 0, American points (a mutation audit found changed defaults unseen)."""
    from agents.search import RolloutSearchAgent

    agent = RolloutSearchAgent(games=2000, phases=4)
    assert agent.system.name == "american" and agent.rules == Rules()
    assert (agent.candidates, agent.rollouts, agent.weight, agent.ply) == (4, 512, 1.0, 2)
    assert (agent.rollout, agent.reply, agent.endgame, agent.depth) == ("ply1", "ply1", 0, 0)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_forced_moves_and_the_last_card_use_no_rollouts(backend):
    """"Forced moves and the last card use no rollouts": their values are expectimax's and the agent's generator is
    not drawn from (a mutation audit found rollouts run, and random orders drawn, for a forced move unseen)."""
    if backend == "numba":
        pytest.importorskip("numba")
    game = PokerSquaresGame(Rules(first_cell="center"))  # the first move is forced
    state = game.init(game.deal(np.random.default_rng(8)), validate=False)
    agent = make_agent(f"search:rollouts=4,candidates=3,backend={backend},{SMALL}", rules=game.rules, seed=0)
    ply2 = make_agent(f"expectimax:ply=2,backend={backend},{SMALL}", rules=game.rules)
    helper = make_agent("greedy")
    forced = 0
    while not state.terminal:
        if len(game.legal_cells(state)) == 1:
            forced += 1
            before = agent.rng.bit_generator.state
            cell, values = agent.act_with_values(None, None, game, state.copy())
            assert agent.rng.bit_generator.state == before
            np.testing.assert_array_equal(values, ply2.action_values(None, None, game, state.copy()))
            assert cell == game.legal_cells(state)[0]
        game.apply(state, helper.act(None, None, game, state))
    assert forced >= 2  # the first card and the last


def test_endgame_takes_up_to_five_empty_cells():
    """``endgame`` runs from 0 (off) to 5 empty cells, 5 included (a mutation audit found 5 refused unseen)."""
    pytest.importorskip("numba")
    assert make_agent(f"search:endgame=5,rollouts=2,{SMALL}").endgame == 5
    with pytest.raises(ValueError, match="endgame=6: expected an integer from 0"):
        make_agent(f"search:endgame=6,rollouts=2,{SMALL}")


def test_ply3_with_weight_zero_is_expectimax_ply3_on_the_candidates():
    """``ply=3``: E is three-ply expectimax for the candidates (two-ply's best cells); with ``weight=0`` the values are
    expectimax:ply=3's with ``top`` the number of candidates (a mutation audit found ply=3 ignored unseen)."""
    pytest.importorskip("numba")
    game = PokerSquaresGame()
    state = _midgame(game, seed=4, moves=14)
    want = make_agent(f"expectimax:ply=3,top=3,{SMALL}").action_values(None, None, game, state)
    got = make_agent(f"search:ply=3,weight=0,candidates=3,rollouts=2,{SMALL}", seed=0).action_values(None, None,
                                                                                                        game, state)
    np.testing.assert_array_equal(got, want)
    assert np.isfinite(got).sum() == 3 and not np.array_equal(
        got, make_agent(f"expectimax:ply=2,{SMALL}").action_values(None, None, game, state))


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("seed, moves", [(10, 12), (1, 23)], ids=["midgame", "two-cells-left"])
def test_candidates_are_rerated_by_the_same_rollouts_of_the_unseen_cards(tmp_path, backend, seed, moves):
    """Each candidate's rollouts play the same random orders of ``game.unseen`` (common random numbers), one game at a
    time here, greedy on the tables to the end; values are ``E(c) + weight * (M(c) - M(b))`` with ``b`` expectimax's
    favourite, down to a choice of two cells (a mutation audit found orders that were not permutations of the unseen
    cards, fresh orders per candidate on numpy, and a choice of two cells left to expectimax, unseen)."""
    import copy

    from agents.batch import Batch

    if backend == "numba":
        pytest.importorskip("numba")
    vt, path = _small_tables(tmp_path)
    game = PokerSquaresGame()
    state = _midgame(game, seed=seed, moves=moves)
    agent = make_agent(f"search:candidates=3,rollouts=6,weight=1.5,backend={backend},tables={path}", seed=3)
    rng = copy.deepcopy(agent.rng)
    values, cells = agent.rate(game, state.copy())
    ply2 = make_agent(f"expectimax:ply=2,backend={backend},tables={path}").action_values(None, None, game, state)
    legal = np.flatnonzero(~np.isnan(ply2))
    assert list(cells) == list(legal[np.argsort(-ply2[legal], kind="stable")[:3]])
    unseen = np.array(game.unseen(state))
    orders = np.argsort(rng.random((6, unseen.size)), axis=1)[:, :24 - len(state.placements)]
    means = []
    for cell in cells:
        finals = []
        for order in unseen[orders]:
            b = Batch.from_state(state, 1)
            b.place(np.array([cell]), np.array([state.card]))
            b.play_out(order[None], vt.values)
            finals.append(vt.system.line_points_table[b.keys()].sum())
        means.append(np.mean(finals))
    means = np.array(means)
    assert len(set(means)) == len(cells) and len(set(ply2[cells])) == len(cells)  # no two candidates alike
    np.testing.assert_allclose(values[cells], ply2[cells] + 1.5 * (means - means[0]), rtol=0, atol=1e-9)
    rest = np.setdiff1d(legal, cells)
    np.testing.assert_array_equal(values[rest], ply2[rest])


def test_reply_ply2_plays_on_the_main_tables_beside_rollout_tables(tmp_path):
    """``reply=ply2``: the reply to the candidate is two-ply expectimax on ``tables``, the later moves one-ply on
    ``rollout_tables``.  On tables worth 0 everywhere the reply would play the first legal cell as the one-ply policy
    does; on the main tables it changes the estimate (a mutation audit found the reply played on the rollout tables
    unseen)."""
    pytest.importorskip("numba")

    vt, main = _small_tables(tmp_path)
    flat = _flat_tables(tmp_path, vt)
    game = PokerSquaresGame()
    state = _midgame(game, seed=10, moves=12)
    spec = f"search:candidates=3,rollouts=8,tables={main},rollout_tables={flat}"
    plain = make_agent(spec, seed=2).action_values(None, None, game, state)
    reply = make_agent(f"{spec},reply=ply2", seed=2).action_values(None, None, game, state)
    legal = ~np.isnan(plain)
    assert np.array_equal(np.isnan(reply), ~legal) and not np.allclose(reply[legal], plain[legal])


def test_endgame_follows_the_adjacency_rule():
    """``endgame``'s exact expectimax plays by the game's placement rule: with cells 0, 1, 5 and 6 left empty, cell 0
    touches no card and is illegal under ``placement=adjacent`` (a mutation audit found the exact values computed under
    free placement, rating cell 0, unseen)."""
    pytest.importorskip("numba")
    from agents._fast import exact_values

    rules = Rules(placement="adjacent")
    game = PokerSquaresGame(rules)
    state = game.init(game.deal(np.random.default_rng(12)), validate=False)
    for cell in range(24, 1, -1):
        if cell not in (5, 6):
            game.apply(state, cell)
    assert game.legal_cells(state) == [1, 5, 6]
    values = make_agent(f"search:endgame=4,rollouts=2,{SMALL}", rules=rules, seed=0).action_values(None, None, game,
                                                                                                     state)
    assert np.flatnonzero(~np.isnan(values)).tolist() == [1, 5, 6]
    points = game.system.line_points_table
    np.testing.assert_array_equal(values, exact_values(points, state, game.unseen(state), True, None))


def test_numpy_numbers_are_taken_as_the_python_numbers_they_hold():
    """Before, ``weight=np.int64(2)`` was refused as "expected a finite number >= 0" (it is one), while the counts took
    numpy integers; a numpy bool is no weight."""
    from agents.search import RolloutSearchAgent

    options = dict(games=2000, phases=4)
    agent = RolloutSearchAgent(weight=np.int64(2), candidates=np.int64(3), **options)
    assert (agent.weight, agent.candidates) == (2.0, 3) and type(agent.weight) is float
    assert RolloutSearchAgent(weight=np.float32(0.5), **options).weight == 0.5
    with pytest.raises(ValueError, match=r"weight=(?:np\.)?True_?: expected a finite number >= 0"):
        RolloutSearchAgent(weight=np.True_, **options)
