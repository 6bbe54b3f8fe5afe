"""Multiplayer Poker Squares (PettingZoo): same cards, hidden boards, rounds, ranking, target, API tests."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pettingzoo")
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test  # noqa: E402

from pokersquares_env.core import IllegalActionError, PokerSquaresGame, Rules  # noqa: E402
from pokersquares_env.env import UNSEEN_OFFSET, encode_observation  # noqa: E402
from pokersquares_env.multiplayer import env as aec_env  # noqa: E402
from pokersquares_env.multiplayer import parallel_env, rank_points  # noqa: E402


def play(par, seed=0, policy=None):
    """Play a whole match with random legal moves (or ``policy(agent, obs)``); returns every step's data."""
    obs, infos = par.reset(seed=seed)
    rng = np.random.default_rng(seed)
    history = [(obs, None, None, infos)]
    while par.agents:
        actions = {
            a: (policy(a, obs[a]) if policy else int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))))
            for a in par.agents
        }
        obs, rewards, terms, truncs, infos = par.step(actions)
        assert not any(truncs.values())
        history.append((obs, rewards, terms, infos))
    return history


@pytest.mark.filterwarnings(  # PettingZoo's api_test resets with options={"options": ...}, which the env says it ignores
    "ignore:reset options \\['options'\\] ignored:UserWarning",
    # and prefers Box or Discrete observations as NumPy arrays; each is a Dict of the Box and its action mask, as
    # docs/variants.md says (PettingZoo's own masked envs do the same)
    "ignore:Observation space for each agent probably should be:UserWarning",
    "ignore:Observation is not a NumPy array:UserWarning")
def test_api_tests():
    parallel_api_test(parallel_env(num_players=3), num_cycles=60)
    parallel_api_test(
        parallel_env(num_players=2, rounds=2, match_scoring="ranking", placement="adjacent", first_cell="center", jokers=2),
        num_cycles=60,
    )
    parallel_seed_test(lambda: parallel_env(num_players=2, illegal_action="penalty"))
    api_test(aec_env(num_players=2, rounds=2), num_cycles=60)


@pytest.mark.filterwarnings(  # PettingZoo's guess: a 5x5 state with -1 for empty cells is not an image
    "ignore:The state contains negative numbers:UserWarning")
def test_state_space_and_one_space_object_per_agent():
    from pettingzoo.test.state_test import state_test

    state_test(aec_env(num_players=2, jokers=2, illegal_action="penalty"),
               parallel_env(num_players=2, jokers=2, illegal_action="penalty"))
    par = parallel_env(num_players=3)
    par.reset(seed=1)
    assert par.state_space.contains(par.state())
    a, b = par.possible_agents[:2]
    assert par.action_space(a) is par.action_space(a) and par.observation_space(b) is par.observation_space(b)
    assert par.action_space(a) is not par.action_space(b)  # seeding one leaves the other's samples alone
    par.action_space(a).seed(1)
    par.action_space(b).seed(1)
    assert [par.action_space(a).sample() for _ in range(5)] == [par.action_space(b).sample() for _ in range(5)]
    with pytest.raises(ValueError, match="agent 'player_9': expected one of"):
        par.observation_space("player_9")


def test_same_cards_hidden_boards_and_own_rewards():
    par = parallel_env(num_players=3, jokers=1)
    history = play(par, seed=4)
    assert len(history) == 26
    game = PokerSquaresGame(Rules(jokers=1))
    for obs, rewards, terms, infos in history[:-1]:
        cards = {infos[a]["card"] for a in infos}
        assert len(cards) == 1  # everyone gets the same announced card
        for a in infos:
            assert np.array_equal(obs[a]["action_mask"], infos[a]["action_mask"])
            assert obs[a]["observation"].shape == (522,)
    boards = [par.states[a].board for a in par.possible_agents]
    assert len({tuple(b) for b in boards}) > 1  # random players made different boards
    final_obs, _, terms, final_infos = history[-1]
    for a in par.possible_agents:
        # the observation is this player's own board only, plus the unseen cards shared by all
        assert np.array_equal(final_obs[a]["observation"], encode_observation(game, par.states[a]))
        assert all(terms.values())
        total = sum(h[1][a] for h in history[1:])
        assert total == final_infos[a]["score"] == game.score(par.states[a])
        assert final_infos[a]["board"] == par.states[a].board
        assert "boards" not in final_infos[a]
    unseen = {a: final_obs[a]["observation"][UNSEEN_OFFSET:].tobytes() for a in par.possible_agents}
    assert len(set(unseen.values())) == 1


def test_boards_differ_in_observation_when_play_differs():
    par = parallel_env(num_players=2)
    obs, _ = par.reset(seed=1)
    obs, _, _, _, _ = par.step({"player_0": 0, "player_1": 24})
    a, b = obs["player_0"]["observation"], obs["player_1"]["observation"]
    assert a[:18].any() and not a[24 * 18 : 25 * 18].any()
    assert b[24 * 18 : 25 * 18].any() and not b[:18].any()


def test_rank_points_with_ties():
    assert rank_points({"a": 10, "b": 30, "c": 20}) == {"a": 0, "c": 1, "b": 2}
    assert rank_points({"a": 10, "b": 10, "c": 20}) == {"a": 0.5, "b": 0.5, "c": 2}
    assert rank_points({"a": 5, "b": 5, "c": 5, "d": 1}) == {"d": 0, "a": 2, "b": 2, "c": 2}
    assert rank_points({"a": 7}) == {"a": 0}


def test_rounds_totals_and_ranking_standings():
    par = parallel_env(num_players=3, rounds=3, match_scoring="ranking")
    history = play(par, seed=7)
    assert len(history) == 1 + 3 * 25
    round_ends = [h[3] for h in history[1:] if "round_scores" in h[3]["player_0"]]
    assert len(round_ends) == 3
    totals = {a: 0.0 for a in par.possible_agents}
    points = {a: 0.0 for a in par.possible_agents}
    for infos in round_ends:
        scores = infos["player_0"]["round_scores"]
        for a, p in rank_points(scores).items():
            points[a] += p
        for a, s in scores.items():
            totals[a] += s
            assert infos[a]["round_scores"] == scores
    final = history[-1][3]["player_1"]
    assert final["totals"] == totals and final["match_points"] == points
    assert sum(points.values()) == 3 * (0 + 1 + 2)  # ties share, the sum is kept
    leaders = [a for a in par.possible_agents if points[a] == max(points.values())]
    assert final["winners"] == leaders and final["winner"] == (leaders[0] if len(leaders) == 1 else None)
    assert final["standings"][0] in leaders
    # each round dealt a new deck: the 25 cards played differ between rounds (seeded)
    played = [frozenset(infos["player_0"]["board"]) for infos in round_ends]
    assert len(set(played)) == 3
    assert [infos["player_0"]["round_ended"] for infos in round_ends] == [1, 2, 3]
    assert history[25][3]["player_0"]["round"] == 2 and history[26][3]["player_0"]["round"] == 2


def test_target_ends_after_the_round_in_which_it_is_reached():
    par = parallel_env(num_players=2, rounds=None, target=60)
    history = play(par, seed=3)
    round_ends = [h[3]["player_0"] for h in history[1:] if "round_scores" in h[3]["player_0"]]
    totals = [max(info["totals"].values()) for info in round_ends]
    assert totals[-1] >= 60 and all(t < 60 for t in totals[:-1])
    assert len(history) == 1 + 25 * len(round_ends)
    # a review found the winner checked only to be someone: under total scoring it is the highest total
    final = history[-1][3]["player_0"]
    top = max(final["totals"].values())
    assert final["winners"] == [a for a in par.possible_agents if final["totals"][a] == top]
    assert final["winner"] == (final["winners"][0] if len(final["winners"]) == 1 else None)
    assert final["winner"] is not None or len(final["winners"]) > 1


def test_ranking_target_reached_exactly_ends_the_match():
    # player_0 lays the cards row by row, player_1 card i on cell 7 * i mod 25: their scores differ, so round 1
    # gives its winner exactly 1 match point, which reaches target=1 and ends the match there.
    par = parallel_env(num_players=2, rounds=None, match_scoring="ranking", target=1)

    def policy(agent, obs):
        legal = np.flatnonzero(obs["action_mask"])
        step = 25 - len(legal)
        return int(legal[0] if agent == "player_0" else 7 * step % 25)

    history = play(par, seed=0, policy=policy)
    final = history[-1][3]["player_0"]
    scores = final["round_scores"]
    assert scores["player_0"] != scores["player_1"]
    assert len(history) == 1 + 25 and final["round_ended"] == 1 and all(history[-1][2].values())
    assert sorted(final["match_points"].values()) == [0.0, 1.0]
    assert final["winner"] == max(scores, key=scores.get)


def test_ties_share_the_win():
    par = parallel_env(num_players=2, rounds=2, match_scoring="ranking")
    history = play(par, seed=0, policy=lambda agent, obs: int(np.flatnonzero(obs["action_mask"])[0]))
    final = history[-1][3]["player_0"]
    assert final["match_points"] == {"player_0": 1.0, "player_1": 1.0}  # identical play: 0.5 each round
    assert final["winner"] is None and final["winners"] == ["player_0", "player_1"]


def test_illegal_actions():
    par = parallel_env(num_players=2, placement="adjacent", first_cell="top-left")
    par.reset(seed=0)
    with pytest.raises(IllegalActionError, match=r"player_1: cell 5 \(a2\) is not the first cell"):
        par.step({"player_0": 0, "player_1": 5})
    par = parallel_env(num_players=2, illegal_action="penalty")
    par.reset(seed=0)
    par.step({"player_0": 0, "player_1": 0})
    _, rewards, terms, _, infos = par.step({"player_0": 0, "player_1": 1})
    assert rewards == {"player_0": -10.0, "player_1": 0.0} and all(terms.values()) and not par.agents
    assert "occupied" in infos["player_0"]["illegal_action"]


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="match_scoring='elo'"):
        parallel_env(match_scoring="elo")
    with pytest.raises(ValueError, match="num_players=0"):
        parallel_env(num_players=0)
    with pytest.raises(ValueError, match="rounds=None"):
        parallel_env(rounds=None)
    with pytest.raises(ValueError, match="target=100 with rounds=1"):
        parallel_env(target=100)
    for target in (0, -5):  # a target must be positive: 0 would end every match after round 1
        with pytest.raises(ValueError, match=f"target={target}: expected a positive finite number"):
            parallel_env(rounds=3, target=target)
    with pytest.raises(TypeError, match="unknown rule options \\['jokerz'\\]"):
        parallel_env(jokerz=1)
    with pytest.raises(ValueError, match="placement='diagonal'"):
        parallel_env(placement="diagonal")


def test_a_target_that_can_never_be_reached_is_refused():
    """Before, these matches were accepted and never ended (no termination, no truncation)."""
    with pytest.raises(ValueError, match=r"target=1 with match_scoring='ranking' and one player can never be reached"):
        parallel_env(num_players=1, rounds=None, target=1, match_scoring="ranking")
    losing = {k: 0 for k in ("one_pair", "two_pair", "three_of_a_kind", "straight", "flush", "full_house",
                             "four_of_a_kind", "straight_flush", "royal_flush")}
    with pytest.raises(ValueError, match=r"target=100 can never be reached under 'custom', whose best line scores 0"):
        parallel_env(num_players=2, rounds=None, target=100, scoring=losing)
    # reachable ones stay: two players rank, a capped match ends by its rounds, a positive table can reach a total
    parallel_env(num_players=2, rounds=None, target=1, match_scoring="ranking")
    parallel_env(num_players=1, rounds=3, target=1, match_scoring="ranking")
    parallel_env(num_players=2, rounds=None, target=100, scoring=dict(losing, royal_flush=1))


def test_seeded_matches_repeat_exactly():
    # pettingzoo's parallel_seed_test stops after one step (it tests any() of a dict), so check whole matches here
    runs = [play(parallel_env(num_players=2, rounds=2, jokers=1), seed=11) for _ in range(2)]
    for (o1, r1, t1, i1), (o2, r2, t2, i2) in zip(*runs, strict=True):
        assert r1 == r2 and t1 == t2
        for a in o1:
            assert np.array_equal(o1[a]["observation"], o2[a]["observation"])
            assert i1[a]["card"] == i2[a]["card"]
    other = play(parallel_env(num_players=2, rounds=2, jokers=1), seed=12)
    assert [h[3]["player_0"]["card"] for h in other] != [h[3]["player_0"]["card"] for h in runs[0]]


def test_spaces_are_stable_and_do_not_keep_the_env_alive():
    import gc
    import weakref

    env = parallel_env(num_players=2)
    assert env.observation_space("player_1") is env.observation_space("player_1")
    assert env.action_space("player_0") is env.action_space("player_0")
    ref = weakref.ref(env)
    del env
    gc.collect()
    assert ref() is None, "a finished env must be collectable (no per-instance caches held by the class)"


def test_tied_standings_keep_the_player_order():
    # identical play ties every round: the standings list the tied players in seat order, best first
    par = parallel_env(num_players=3, rounds=2)
    history = play(par, seed=2, policy=lambda agent, obs: int(np.flatnonzero(obs["action_mask"])[0]))
    final = history[-1][3]
    for a in par.possible_agents:
        assert final[a]["standings"] == ["player_0", "player_1", "player_2"]
    assert final["player_0"]["winner"] is None and final["player_0"]["winners"] == par.possible_agents


def test_illegal_penalty_end_names_only_the_offender_and_clears_every_mask():
    par = parallel_env(num_players=3, illegal_action="penalty")
    par.reset(seed=0)
    par.step({"player_0": 0, "player_1": 0, "player_2": 0})
    obs, rewards, terms, truncs, infos = par.step({"player_0": 1, "player_1": 0, "player_2": 2})  # player_1: occupied
    assert rewards == {"player_0": 0.0, "player_1": -10.0, "player_2": 0.0}
    assert all(terms.values()) and not any(truncs.values()) and not par.agents
    assert "occupied" in infos["player_1"]["illegal_action"]
    assert "illegal_action" not in infos["player_0"] and "illegal_action" not in infos["player_2"]
    for a, info in infos.items():
        assert info["action_mask"].dtype == np.int8 and not info["action_mask"].any(), a
        # no card announced, as info["card"] == -1 says (an audit found the observation still showed it); the boards
        # (one card each: the ending step places none) and the unseen cards are kept
        assert info["card"] == -1 and not obs[a]["observation"][450:468].any(), a
        assert obs[a]["observation"][:450].sum() == 2 and obs[a]["observation"][468:].sum() > 0, a


def test_illegal_penalty_end_keeps_the_end_of_match_contract():
    """As at a normal end: no legal cell in the observation either, no card announced, and a result --
    the offender forfeits, so the winners are the leaders among the others."""
    par = parallel_env(num_players=3, illegal_action="penalty")
    par.reset(seed=0)
    par.step({"player_0": 0, "player_1": 0, "player_2": 0})
    obs, _, _, _, infos = par.step({"player_0": 1, "player_1": 0, "player_2": 2})  # player_1: occupied
    for a in par.possible_agents:
        assert not obs[a]["action_mask"].any() and infos[a]["card"] == -1, a
        assert infos[a]["winners"] == ["player_0", "player_2"] and infos[a]["winner"] is None, a
    two = parallel_env(num_players=2, illegal_action="penalty")
    two.reset(seed=0)
    two.step({"player_0": 0, "player_1": 0})
    *_, infos = two.step({"player_0": 0, "player_1": 1})  # player_0: occupied
    assert infos["player_1"]["winner"] == "player_1" and infos["player_0"]["winners"] == ["player_1"]


def test_every_player_who_moves_illegally_in_a_step_is_an_offender():
    """Moves are simultaneous: the second illegal move of a step is not let off because the first ended the match."""
    par = parallel_env(num_players=3, illegal_action="penalty")
    par.reset(seed=0)
    par.step({"player_0": 0, "player_1": 0, "player_2": 0})
    _, rewards, _, _, infos = par.step({"player_0": 0, "player_1": 1, "player_2": 0})  # 0 and 2: occupied
    assert rewards == {"player_0": -10.0, "player_1": 0.0, "player_2": -10.0}
    assert "occupied" in infos["player_0"]["illegal_action"] and "occupied" in infos["player_2"]["illegal_action"]
    assert "illegal_action" not in infos["player_1"] and infos["player_1"]["winner"] == "player_1"
    both = parallel_env(num_players=2, illegal_action="penalty")
    both.reset(seed=0)
    both.step({"player_0": 0, "player_1": 0})
    *_, infos = both.step({"player_0": 0, "player_1": 0})  # everyone offends: the standings decide among all
    assert infos["player_0"]["winners"] == ["player_0", "player_1"] and infos["player_0"]["winner"] is None


def test_ansi_render_prints_large_totals_whole():
    """An audit found totals printed with :g, so 1234567 read 1.23457e+06."""
    par = parallel_env(num_players=2, render_mode="ansi")
    par.reset(seed=0)
    par.totals["player_0"], par.match_points["player_1"] = 1234567.0, 2.5
    text = par.render()
    assert "== player_0 (total 1234567, match points 0)" in text and "e+06" not in text
    assert "== player_1 (total 0, match points 2.50)" in text


def test_human_mode_draws_at_every_reset_and_step(monkeypatch):
    """As PokerSquares-v0 does, and PettingZoo expects: no render() call needed."""
    pytest.importorskip("pygame")
    from pokersquares_env import render

    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    shown = []
    monkeypatch.setattr(render.Renderer, "show", lambda self, frame: shown.append(frame.shape))
    par = parallel_env(num_players=2, render_mode="human")
    assert par.metadata["render_fps"] == 4
    par.reset(seed=0)
    par.step({"player_0": 0, "player_1": 1})
    assert len(shown) == 2
    par.close()
    ends = parallel_env(num_players=2, render_mode="human", illegal_action="penalty")
    ends.reset(seed=0)
    ends.step({"player_0": 0, "player_1": 0})
    ends.step({"player_0": 0, "player_1": 1})  # an illegal end is a step too
    assert len(shown) == 5
    ends.close()


def test_step_names_actions_that_are_not_a_dict():
    par = parallel_env(num_players=2)
    par.reset(seed=0)
    with pytest.raises(TypeError, match=r"actions=None: expected a dict of one action per live agent"):
        par.step(None)


def test_step_before_reset_or_after_the_match_needs_a_reset_as_the_single_envs_say():
    from gymnasium.error import ResetNeeded

    par = parallel_env(num_players=2, illegal_action="penalty")
    with pytest.raises(ResetNeeded, match="call reset"):
        par.step({"player_0": 0, "player_1": 0})
    par.reset(seed=0)
    par.step({"player_0": 0, "player_1": 0})
    par.step({"player_0": 0, "player_1": 0})  # both illegal: the match ends
    with pytest.raises(ResetNeeded, match="the match is over"):
        par.step({})


def test_reset_deck_options_deal_the_given_cards_and_bad_ones_change_nothing():
    from pokersquares_env.cards import parse_cards

    first = "As Ks Qs Js Ts 9s 8s 7s 6s 5s 4s 3s 2s Ah Kh Qh Jh Th 9h 8h 7h 6h 5h 4h 3h"
    second = "2c 3c 4c 5c 6c 7c 8c 9c Tc Jc Qc Kc Ac 2d 3d 4d 5d 6d 7d 8d 9d Td Jd Qd Kd"
    par = parallel_env(num_players=2, rounds=3)
    obs, infos = par.reset(seed=4, options={"decks": [first, second]})
    announced = [infos["player_0"]["card"]]
    for _ in range(75):
        actions = {a: int(np.flatnonzero(obs[a]["action_mask"])[0]) for a in par.agents}
        obs, _, _, _, infos = par.step(actions)
        if par.agents:
            announced.append(infos["player_0"]["card"])
    assert announced[:25] == parse_cards(first) and announced[25:50] == parse_cards(second)
    # round 3 is shuffled from the seeded generator, untouched by the given rounds: a plain seed-4 match's first deal
    plain = parallel_env(num_players=2, rounds=3)
    plain.reset(seed=4)
    assert announced[50:] == list(plain.deck[:25])
    par.reset(seed=4, options={"deck": first})
    assert par.deck == tuple(parse_cards(first))
    # a refused reset leaves the match, its deck and its generator as they were
    before = (par.deck, par.round, par.np_random.bit_generator.state, par.agents)
    for bad, err in [
        ({"deck": "As As"}, ValueError), ({"decks": [first, "Zz"]}, ValueError), ({"decks": [first] * 4}, ValueError),
        ({"deck": first, "decks": [first]}, ValueError), ({"decks": "x"}, ValueError), ({"decks": []}, ValueError),
        ({"decks": {first, second}}, ValueError),  # a set has no round order
        (5, TypeError),
    ]:
        with pytest.raises(err, match="deck|options=5|round 2"):
            par.reset(seed=9, options=bad)
        assert (par.deck, par.round, par.np_random.bit_generator.state, par.agents) == before
    with pytest.warns(UserWarning, match=r"reset options \['options'\] ignored"):
        par.reset(seed=0, options={"options": 1})
    # the AEC form passes the options through
    aec = aec_env(num_players=2)
    aec.reset(seed=0, options={"deck": first})
    assert aec.unwrapped.deck == tuple(parse_cards(first))


def test_a_target_only_five_of_a_kind_could_reach_needs_jokers():
    """Before, a table scoring only five of a kind was taken without jokers, and the match never ended."""
    only_five = {k: 0 for k in ("high_card", "one_pair", "two_pair", "three_of_a_kind", "straight", "flush",
                                "full_house", "four_of_a_kind", "straight_flush", "royal_flush")}
    only_five["five_of_a_kind"] = 10
    with pytest.raises(ValueError, match=r"target=100 can never be reached under 'custom', whose best line scores 0 "
                                         r"with jokers=0 \(five_of_a_kind, which scores 10, needs a joker\)"):
        parallel_env(num_players=2, scoring=only_five, rounds=None, target=100, jokers=0)
    assert parallel_env(num_players=2, scoring=only_five, rounds=None, target=100, jokers=1).rules.jokers == 1
    parallel_env(num_players=2, scoring=only_five, rounds=5, target=100)  # a capped match ends by its rounds


def test_the_aec_env_takes_the_arguments_of_parallel_env_positionally_too():
    """Before, env(3) raised "env() takes 0 positional arguments" while parallel_env(3) worked."""
    aec = aec_env(3, "english", 2)
    assert aec.possible_agents == parallel_env(3).possible_agents == ["player_0", "player_1", "player_2"]
    assert aec.unwrapped.point_system.name == "english" and aec.unwrapped.rounds == 2
    with pytest.raises(TypeError, match="multiple values for argument 'num_players'"):
        aec_env(3, num_players=2)


def _first_cells(aec, n):
    """Step the AEC env ``n`` times, each agent on its first legal cell."""
    for _ in range(n):
        aec.step(int(np.flatnonzero(aec.observe(aec.agent_selection)["action_mask"])[0]))


def test_the_aec_form_refuses_an_illegal_action_at_the_offenders_own_step_and_stays_usable():
    """Before, parallel_to_aec buffered player_0's illegal move and raised at player_1's step, blaming player_0 from
    player_1's turn; the bad move stayed buffered, so every later step raised until a reset."""
    aec = aec_env(num_players=2)
    aec.reset(seed=0)
    aec.step(0)
    aec.step(0)  # both on a1
    boards = aec.unwrapped.state().copy()
    with pytest.raises(IllegalActionError, match=r"^player_0: cell 0 \(a1\) is occupied by"):
        aec.step(0)
    assert aec.agent_selection == "player_0" and np.array_equal(aec.unwrapped.state(), boards)
    aec.step(1)  # player_0 tries again, legally
    assert aec.agent_selection == "player_1"
    with pytest.raises(IllegalActionError, match=r"^player_1: cell 0 \(a1\) is occupied by"):
        aec.step(np.int64(0))
    with pytest.raises(IllegalActionError, match=r"^player_1: action None is not an integer cell"):
        aec.step(None)
    assert aec.agent_selection == "player_1" and np.array_equal(aec.unwrapped.state(), boards)
    aec.step(np.array([2]))  # the parallel env's action forms are taken
    state = aec.unwrapped.state()
    assert (state[0, :3] >= 0).tolist() == [True, True, False] and (state[1, :3] >= 0).tolist() == [True, False, True]
    _first_cells(aec, 2 * 23)  # the match plays on to its end
    assert all(aec.terminations.values()) and aec.infos["player_0"]["winners"]


def test_the_aec_form_is_usable_after_the_parallel_step_raises(monkeypatch):
    """An error inside the parallel step (here a made-up one) leaves the last agent to move, with its action not kept."""
    aec = aec_env(num_players=2)
    aec.reset(seed=0)
    aec.step(0)
    par = aec.unwrapped

    def broken(actions):
        raise RuntimeError("boom")

    monkeypatch.setattr(par, "step", broken)
    with pytest.raises(RuntimeError, match="boom"):
        aec.step(5)
    assert aec.agent_selection == "player_1"
    monkeypatch.undo()
    aec.step(3)  # the retry plays: the failed 5 was not kept
    assert aec.agent_selection == "player_0"
    assert par.states["player_0"].placements == [0] and par.states["player_1"].placements == [3]


def test_the_aec_form_under_penalty_ends_the_match_as_the_parallel_env_does():
    """Every illegal move of a step counts (the moves are simultaneous), each offender is penalised and forfeits."""
    aec = aec_env(num_players=3, illegal_action="penalty")
    aec.reset(seed=0)
    for _ in range(3):
        aec.step(0)
    aec.step(0)  # player_0: occupied
    assert aec.agent_selection == "player_1" and not any(aec.terminations.values())
    aec.step(1)
    aec.step(0)  # player_2: occupied
    assert all(aec.terminations.values())
    assert aec.rewards == {"player_0": -10.0, "player_1": 0.0, "player_2": -10.0}
    for a in aec.possible_agents:
        assert aec.infos[a]["winner"] == "player_1" and aec.infos[a]["standings"][0] == "player_1"
    assert "occupied" in aec.infos["player_0"]["illegal_action"] and "illegal_action" not in aec.infos["player_1"]


def test_forfeiting_players_are_last_in_the_standings():
    """Before, the standings at a forfeit still put an offender first while ``winner`` named another player."""
    par = parallel_env(num_players=3, rounds=2, illegal_action="penalty")
    obs, _ = par.reset(seed=0)
    for _ in range(25):  # round 1: player_2 lays its cards elsewhere and leads
        legal = {a: np.flatnonzero(obs[a]["action_mask"]) for a in par.agents}
        obs, *_, infos = par.step({a: int(cells[len(cells) // 2 if a == "player_2" else 0])
                                   for a, cells in legal.items()})
    assert infos["player_0"]["totals"] == {"player_0": 6.0, "player_1": 6.0, "player_2": 12.0}
    assert infos["player_0"]["standings"] == ["player_2", "player_0", "player_1"]
    par.step({"player_0": 0, "player_1": 0, "player_2": 0})
    *_, infos = par.step({"player_0": 0, "player_1": 1, "player_2": 0})  # 0 and 2: occupied, both forfeit
    for a in par.possible_agents:
        assert infos[a]["winner"] == "player_1"
        assert infos[a]["standings"] == ["player_1", "player_2", "player_0"]  # the forfeits last, by their totals


def test_step_names_the_missing_and_unexpected_keys_whatever_their_type():
    """Before, a key that is not a string made the message's sorted() raise TypeError: '<' not supported."""
    par = parallel_env(num_players=2)
    par.reset(seed=0)
    with pytest.raises(ValueError) as err:
        par.step({0: 1, "player_0": 1, "player_1": 2})
    assert str(err.value) == ("actions for ['player_0', 'player_1', 0]: expected exactly the live agents "
                              "['player_0', 'player_1'] (unexpected: [0])")
    with pytest.raises(ValueError) as err:
        par.step({"player_0": 1, None: 3})
    assert str(err.value) == ("actions for ['player_0', None]: expected exactly the live agents "
                              "['player_0', 'player_1'] (missing: ['player_1']; unexpected: [None])")
    assert par.state()[:, 1].tolist() == [-1, -1]  # nothing was played
    par.step({"player_0": 1, "player_1": 2})


FLOAT_TABLE = {"one_pair": 0.1, "two_pair": 0.2, "three_of_a_kind": 0.3, "straight": 0.4, "flush": 0.5,
               "full_house": 0.6, "four_of_a_kind": 0.7, "straight_flush": 0.8, "royal_flush": 0.9}


def test_equal_scores_of_a_float_table_are_a_tie():
    """Scores are float sums: six one-pairs of 0.1 total 0.6 on one board and 0.6000000000000001 on another (their
    lines add up in another order); before, the player ahead by that rounding noise won, and took all of the round's
    ranking points."""
    assert rank_points({"a": 0.6, "b": 0.1 + 0.2 + 0.3, "c": 0.2}) == {"c": 0.0, "a": 1.5, "b": 1.5}
    par = parallel_env(num_players=2, scoring=FLOAT_TABLE)
    final = play(par, seed=161)[-1][3]["player_0"]  # the audit's deal: both boards hold six one-pairs
    assert final["round_scores"]["player_0"] == pytest.approx(final["round_scores"]["player_1"])
    assert final["winner"] is None and final["winners"] == ["player_0", "player_1"]
    assert final["match_points"] == {"player_0": 0.5, "player_1": 0.5}
    assert final["standings"] == ["player_0", "player_1"]
    # a target met up to the rounding of the sums is met: ten one-pairs of 0.1 add up to 0.9999999999999999
    par = parallel_env(num_players=2, scoring=FLOAT_TABLE, rounds=None, target=1)
    par.reset(seed=0, options={"deck": TEN_PAIRS})
    history = [None]
    while par.agents:
        history.append(par.step({a: par.states[a].num_placed for a in par.agents}))
    final = history[-1][4]["player_1"]
    assert final["hands"] == ["one_pair"] * 10 and final["totals"]["player_0"] == pytest.approx(1)
    assert len(history) == 26 and final["round_ended"] == 1 and final["winners"] == ["player_0", "player_1"]


#: a deck whose cards laid row by row make every row and column one pair (and nothing more)
TEN_PAIRS = "8c 5h Ad Ah 4c 6d 6c 7d 3d 2s 8s 6h 3h 4h 8d 3s 2c 2h 6s As 4s 8h Ac 3c 4d"


def test_rank_points_refuses_a_list_of_scores():
    """Before, rank_points([1, 1, 1]) read the scores as players and returned {1: 1.0}; [5, 3, 3] raised IndexError."""
    from pokersquares_env.multiplayer import rank_points

    for scores in ([1, 1, 1], [5, 3, 3], (0.3, 0.3)):
        with pytest.raises(TypeError, match=r"rank_points\(scores=.*expected a mapping of player -> score"):
            rank_points(scores)
    assert rank_points({"a": 5, "b": 3, "c": 3}) == {"b": 0.5, "c": 0.5, "a": 2.0}


def test_rank_points_refuses_a_score_that_is_not_a_finite_number():
    """Before, a NaN score sorted anywhere (``{"a": 1, "b": nan, "c": 0}`` gave c, scoring 0, the most points), and a
    string or None failed inside float() without naming the player."""
    for bad in (float("nan"), float("inf"), "5", None, True, 10**400):
        with pytest.raises(ValueError, match=r"scores\['b'\]=.*expected a finite number"):
            rank_points({"a": 1, "b": bad, "c": 0})
    assert rank_points({"a": np.int64(1), "b": np.float32(2.5), "c": 0}) == {"c": 0.0, "a": 1.0, "b": 2.0}


@pytest.mark.parametrize("illegal_action", ["raise", "penalty"])
def test_aec_a_finished_agent_given_an_action_is_refused_and_the_env_goes_on(illegal_action):
    """Before, PettingZoo's wrapper removed a finished agent's buffered action before it asserted the action was None:
    a bare AssertionError, after which ``step(None)`` raised KeyError and the agents were never removed."""
    a = aec_env(num_players=2, illegal_action=illegal_action)
    a.reset(seed=0)
    while not a.terminations[a.agent_selection]:
        obs, *_ = a.last()
        a.step(int(np.flatnonzero(obs["action_mask"])[0]))
    agent = a.agent_selection
    with pytest.raises(ValueError, match=rf"{agent} is terminated: .*None.*got 0"):
        a.step(0)
    assert a.agent_selection == agent and a.terminations[agent]
    for _ in range(2):
        a.step(None)
    assert a.agents == []


def test_a_target_too_large_for_a_float_is_refused_when_the_env_is_made():
    """Before, ``target=10**400`` was accepted and the match crashed with a bare OverflowError at the end of round 1."""
    with pytest.raises(ValueError, match=r"target=1000+: expected a positive finite number such as 100, 200 or 500"):
        parallel_env(num_players=2, rounds=2, target=10**400)
    parallel_env(num_players=2, rounds=2, target=10**6)


def test_a_ranking_target_counts_match_points_not_summed_scores():
    """An audit found no test telling the two standings apart: target=1 is passed by both after round 1.  Identical
    play gives each of two players 0.5 match points a round, so target=2 takes 4 rounds, while the summed scores pass 2
    in round 1."""
    par = parallel_env(num_players=2, rounds=None, match_scoring="ranking", target=2)
    history = play(par, seed=0, policy=lambda agent, obs: int(np.flatnonzero(obs["action_mask"])[0]))
    final = history[-1][3]["player_0"]
    assert final["round_ended"] == 4 and final["match_points"] == {"player_0": 2.0, "player_1": 2.0}
    assert min(final["totals"].values()) > 2 * 4  # the summed scores passed the target long before


def test_a_refused_seed_leaves_the_match_and_close_closes_the_window(monkeypatch):
    par = parallel_env(num_players=2, rounds=3)
    obs, _ = par.reset(seed=5)
    par.step({a: int(np.flatnonzero(obs[a]["action_mask"])[0]) for a in par.agents})
    before = (par.round, dict(par.totals), par.state().copy(), par.np_random.bit_generator.state)
    with pytest.raises(ValueError, match="seed"):
        par.reset(seed=-1)
    assert (par.round, par.totals, par.np_random.bit_generator.state) == before[:2] + before[3:]
    assert np.array_equal(par.state(), before[2])

    closed = []

    class Window:
        def close(self):
            closed.append(True)

    par._renderer = Window()
    par.close()
    assert closed == [True] and par._renderer is None


@pytest.mark.parametrize("mode", ["ansi", "rgb_array"])
def test_a_match_ended_by_an_illegal_action_renders_as_over(mode):
    """An audit found the match rendered as in progress (the card to place, the playable cells outlined) after an
    illegal action had ended it; the single env says so and outlines nothing."""
    par = parallel_env(num_players=2, render_mode=mode, illegal_action="penalty", placement="adjacent",
                       first_cell="center")
    par.reset(seed=0)
    par.step({"player_0": 12, "player_1": 12})
    playing = par.render()
    par.step({"player_0": 12, "player_1": 13})  # c3 is taken: player_0 ends the match
    assert par.agents == []
    over = par.render()
    if mode == "ansi":
        assert "()" in playing and "card to place" in playing
        assert "()" not in over and "card to place" not in over
        assert over.endswith("match over: ended by an illegal action of player_0")
    else:
        from pokersquares_env.render import draw_multiplayer

        states = {a: par.states[a] for a in par.possible_agents}
        args = dict(totals=par.totals, match_points=par.match_points, round=par.round)
        assert np.array_equal(over, draw_multiplayer(par.game, states, ended="match over: ended by an illegal action "
                                                     "of player_0", **args))
        assert not np.array_equal(over, draw_multiplayer(par.game, states, **args))


def test_a_new_match_starts_from_zero_totals_and_match_points():
    """``reset`` after a finished match clears the running totals and match points (an audit kept them unseen)."""
    par = parallel_env(num_players=2, rounds=1)
    obs, infos = par.reset(seed=0)
    while par.agents:
        obs, _, _, _, infos = par.step({a: int(np.flatnonzero(obs[a]["action_mask"])[0]) for a in par.agents})
    assert any(v != 0 for v in par.totals.values())  # the first match scored
    _, infos = par.reset(seed=1)
    for a in par.possible_agents:
        assert set(infos[a]["totals"].values()) == {0.0} and set(infos[a]["match_points"].values()) == {0.0}


def test_one_given_deck_per_round_plays_every_round_from_its_deck():
    """``decks`` may give every round its deck (as many decks as rounds); an audit refused that case unseen."""
    from pokersquares_env.cards import parse_cards

    first = "As Ks Qs Js Ts 9s 8s 7s 6s 5s 4s 3s 2s Ah Kh Qh Jh Th 9h 8h 7h 6h 5h 4h 3h"
    second = "2c 3c 4c 5c 6c 7c 8c 9c Tc Jc Qc Kc Ac 2d 3d 4d 5d 6d 7d 8d 9d Td Jd Qd Kd"
    par = parallel_env(num_players=2, rounds=2)
    obs, _ = par.reset(seed=0, options={"decks": [first, second]})
    assert par.deck[:25] == tuple(parse_cards(first))
    for _ in range(25):
        obs, *_ = par.step({a: int(np.flatnonzero(obs[a]["action_mask"])[0]) for a in par.agents})
    assert par.round == 2 and par.deck[:25] == tuple(parse_cards(second))


def test_state_before_reset_is_every_board_empty():
    par = parallel_env(num_players=3)
    state = par.state()
    assert state.shape == (3, 25) and (state == -1).all() and par.state_space.contains(state)


def test_round_end_infos_are_each_agents_own():
    """Changing one agent's info leaves the other agents' infos as they were."""
    par = parallel_env(num_players=2)
    history = play(par, seed=0)
    infos = history[-1][3]
    expected = dict(infos["player_1"]["round_scores"])
    infos["player_0"]["round_scores"]["player_1"] = -1.0
    infos["player_0"]["totals"]["player_1"] = -1.0
    assert infos["player_1"]["round_scores"] == expected and infos["player_1"]["totals"] == expected


def test_a_reset_without_a_seed_goes_on_from_the_seeded_generator():
    decks = []
    for _ in range(2):
        par = parallel_env(num_players=2)
        par.reset(seed=4)
        decks.append(par.deck)
        par.reset()
        decks.append(par.deck)
    assert decks[0] == decks[2] and decks[1] == decks[3] and decks[0] != decks[1]


def test_bad_decks_options_name_the_round_and_the_number_of_rounds():
    first = "As Ks Qs Js Ts 9s 8s 7s 6s 5s 4s 3s 2s Ah Kh Qh Jh Th 9h 8h 7h 6h 5h 4h 3h"
    par = parallel_env(num_players=2, rounds=3)
    with pytest.raises(ValueError, match=r"reset option 'decks', round 2: "):
        par.reset(options={"decks": [first, "Zz"]})
    with pytest.raises(ValueError, match=r"holds 4 decks but the match has 3 round\(s\): expected at most 3$"):
        par.reset(options={"decks": [first] * 4})


@pytest.mark.parametrize("kwargs, error, message", [
    ({"num_players": True}, ValueError, r"num_players=True: expected an integer >= 1"),
    ({"rounds": 0}, ValueError, r"rounds=0: expected a positive integer"),
    ({"rounds": True}, ValueError, r"rounds=True: expected a positive integer"),
    ({"rounds": 3, "target": True}, ValueError, r"target=True: expected a positive finite number"),
    ({"illegal_action": "ignore"}, ValueError, r"illegal_action='ignore': expected 'raise' or 'penalty'"),
    ({"render_mode": "bogus"}, ValueError, r"render_mode='bogus': expected None or one of"),
    ({"illegal_penalty": "x"}, TypeError, r"illegal_penalty='x': expected a number"),
])
def test_bools_zero_rounds_and_bad_modes_are_named_when_the_env_is_made(kwargs, error, message):
    """A mutation audit found these checks dropped unseen: True read as 1 player, round or target; rounds=0; an
    unknown illegal_action or render_mode; a penalty that is not a number."""
    with pytest.raises(error, match=message):
        parallel_env(**kwargs)


def test_the_spaces_of_an_unhashable_agent_name_it():
    par = parallel_env(num_players=2)
    for space in (par.observation_space, par.action_space):
        with pytest.raises(ValueError, match=r"agent \['player_0'\]: expected one of \['player_0', 'player_1'\]"):
            space(["player_0"])


def test_boards_with_jokers_are_in_the_state_space():
    par = parallel_env(num_players=2, jokers=2)
    par.reset(seed=0, options={"deck": [52, 53, *range(23)]})  # both jokers first
    par.step({"player_0": 0, "player_1": 24})
    par.step({"player_0": 1, "player_1": 23})
    state = par.state()
    assert sorted(state[state >= 0].tolist()) == [52, 52, 53, 53] and par.state_space.contains(state)


def test_a_reset_after_an_illegal_end_renders_a_match_in_progress():
    par = parallel_env(num_players=2, render_mode="ansi", illegal_action="penalty")
    par.reset(seed=0)
    par.step({"player_0": 0, "player_1": 0})
    par.step({"player_0": 0, "player_1": 1})  # player_0: occupied, the match ends
    assert "ended by an illegal action" in par.render()
    par.reset(seed=1)
    text = par.render()
    assert "ended by an illegal action" not in text and "card to place" in text


def test_the_render_names_every_offender_and_the_round():
    par = parallel_env(num_players=3, rounds=2, render_mode="ansi", illegal_action="penalty")
    obs, _ = par.reset(seed=0)
    assert par.render().startswith("round 1\n")
    for _ in range(25):
        obs, *_ = par.step({a: int(np.flatnonzero(obs[a]["action_mask"])[0]) for a in par.agents})
    assert par.render().startswith("round 2\n")
    par.step({"player_0": 0, "player_1": 0, "player_2": 0})
    par.step({"player_0": 0, "player_1": 1, "player_2": 0})  # 0 and 2: occupied
    assert par.render().endswith("match over: ended by an illegal action of player_0, player_2")


def test_the_deck_option_deals_the_first_round_only():
    """``options["deck"]`` is the first round's cards; the next rounds are shuffled from the seeded generator, as
    rounds past a ``decks`` list are."""
    from pokersquares_env.cards import parse_cards

    first = "As Ks Qs Js Ts 9s 8s 7s 6s 5s 4s 3s 2s Ah Kh Qh Jh Th 9h 8h 7h 6h 5h 4h 3h"
    par = parallel_env(num_players=2, rounds=2)
    obs, _ = par.reset(seed=4, options={"deck": first})
    assert par.deck == tuple(parse_cards(first))
    for _ in range(25):
        obs, *_ = par.step({a: int(np.flatnonzero(obs[a]["action_mask"])[0]) for a in par.agents})
    plain = parallel_env(num_players=2, rounds=2)
    plain.reset(seed=4)
    assert par.round == 2 and par.deck == plain.deck


def test_decks_options_of_an_unlimited_match_and_bad_decks_options_named():
    from pokersquares_env.cards import parse_cards

    first = "As Ks Qs Js Ts 9s 8s 7s 6s 5s 4s 3s 2s Ah Kh Qh Jh Th 9h 8h 7h 6h 5h 4h 3h"
    second = "2c 3c 4c 5c 6c 7c 8c 9c Tc Jc Qc Kc Ac 2d 3d 4d 5d 6d 7d 8d 9d Td Jd Qd Kd"
    par = parallel_env(num_players=2, rounds=None, target=100)  # no limit: any number of decks
    par.reset(seed=0, options={"decks": [first, second, first]})
    assert par.deck == tuple(parse_cards(first))
    with pytest.raises(TypeError, match=r"^reset option 'decks', round 2: deck 5: expected a sequence"):
        par.reset(options={"decks": [first, 5]})
    with pytest.raises(ValueError, match=r"reset option decks='As Ks .*: expected a non-empty list of decks"):
        par.reset(options={"decks": first})  # one deck's text, not a list of decks


def test_infos_match_points_are_each_agents_own():
    par = parallel_env(num_players=2, rounds=2, match_scoring="ranking")
    obs, infos = par.reset(seed=0)
    for _ in range(25):
        obs, _, _, _, infos = par.step({a: int(np.flatnonzero(obs[a]["action_mask"])[0]) for a in par.agents})
    expected = dict(par.match_points)
    infos["player_0"]["match_points"]["player_1"] = -1.0
    assert infos["player_1"]["match_points"] == expected and par.match_points == expected


def test_the_rgb_frame_shows_the_match_points():
    par = parallel_env(num_players=2, render_mode="rgb_array")
    par.reset(seed=0)
    before = par.render()
    par.match_points["player_1"] = 2.5  # the totals stay as they were
    assert not np.array_equal(par.render(), before)


def test_the_unreachable_target_message_prints_large_points_exactly():
    """Before, the five-of-a-kind value was printed with ``:g``: 1234567 read ``1.23457e+06``."""
    only_five = {k: 0 for k in ("high_card", "one_pair", "two_pair", "three_of_a_kind", "straight", "flush",
                                "full_house", "four_of_a_kind", "straight_flush", "royal_flush")}
    only_five["five_of_a_kind"] = 1234567
    with pytest.raises(ValueError, match=r"\(five_of_a_kind, which scores 1234567, needs a joker\)"):
        parallel_env(num_players=2, scoring=only_five, rounds=None, target=100, jokers=0)
