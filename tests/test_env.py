import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pokersquares_env  # noqa: F401  (registers the envs)
from helpers import needs
from pokersquares_env.cards import NUM_STANDARD, parse_cards
from pokersquares_env.core import IllegalActionError
from pokersquares_env.env import CARD_OFFSET, OBS_SIZE, UNSEEN_OFFSET, encode_observation
from pokersquares_env.scoring import expected_random_score, score_grid

RUSSIAN_EXAMPLE = parse_cards("8♠ Д♠ 10♠ 4♠ 2♠ / 9♣ Д♣ 10♣ В♣ К♣ / Т♦ 8♦ 10♦ 4♣ 5♣ / Т♥ Д♥ 10♥ В♥ К♥ / 3♠ 6♥ 7♦ 4♥ 5♠")


def play(env, policy, seed=None, options=None):
    """Play one episode; the list of (obs, reward, terminated, info) and the reset info."""
    obs, info = env.reset(seed=seed, options=options)
    steps = []
    done = False
    while not done:
        mask = info["action_mask"]
        assert mask.dtype == np.int8 and mask.shape == (25,) and mask.any(), "live state with no legal cell"
        obs, reward, done, truncated, info = env.step(policy(obs, info))
        assert not truncated
        steps.append((obs, reward, done, info))
    return steps


def first_legal(obs, info):
    return int(np.flatnonzero(info["action_mask"])[0])


def make_random_policy(seed):
    rng = np.random.default_rng(seed)
    return lambda obs, info: int(rng.choice(np.flatnonzero(info["action_mask"])))


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"scoring": "english"}, {"jokers": 2, "reward_mode": "terminal"}, {"reward_scale": "normalized"}],
)
def test_passes_gymnasium_and_sb3_env_checkers(kwargs):
    from gymnasium.utils.env_checker import check_env

    check_env(gym.make("PokerSquares-v0", **kwargs).unwrapped, skip_render_check=True)
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    # SB3's checker steps with random actions, so illegal cells must end the episode instead of raising.
    sb3_checker.check_env(gym.make("PokerSquares-v0", illegal_action="penalty", **kwargs))


def test_adjacent_placement_passes_the_checkers_with_the_penalty():
    """Gymnasium's checker steps with a sampled action too; under adjacency most first cells are illegal."""
    from gymnasium.utils.env_checker import check_env

    for first_cell in ("center", "top-left"):
        env = gym.make("PokerSquares-v0", placement="adjacent", first_cell=first_cell, illegal_action="penalty")
        check_env(env.unwrapped, skip_render_check=True)
        sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
        sb3_checker.check_env(env)


def test_worked_example_through_the_env():
    env = gym.make("PokerSquares-v0", scoring="english")
    steps = play(env, lambda obs, info: len(env.unwrapped.state.placements), options={"deck": RUSSIAN_EXAMPLE})
    info = steps[-1][3]
    assert info["score"] == 113 and info["scores"] == {"american": 302, "english": 113}
    assert sum(s[1] for s in steps) == 113
    assert info["hands"][3] == "royal_flush" and info["board"] == RUSSIAN_EXAMPLE
    assert info["won"] is True  # 113 >= 70


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    scoring=st.sampled_from(["american", "english"]),
    reward_mode=st.sampled_from(["line", "terminal"]),
    jokers=st.sampled_from([0, 1, 2]),
)
def test_rewards_sum_to_the_score_and_no_card_appears_twice(seed, scoring, reward_mode, jokers):
    env = gym.make("PokerSquares-v0", scoring=scoring, reward_mode=reward_mode, jokers=jokers)
    steps = play(env, make_random_policy(seed), seed=seed)
    info = steps[-1][3]
    assert len(steps) == 25
    assert sum(s[1] for s in steps) == pytest.approx(info["score"])
    assert info["score"] == score_grid(info["board"], scoring)
    assert len(set(info["board"])) == 25 and min(info["board"]) >= 0
    assert max(info["board"]) < NUM_STANDARD + jokers
    if reward_mode == "terminal":
        assert all(s[1] == 0 for s in steps[:-1])


def test_normalized_reward_scale():
    env = gym.make("PokerSquares-v0", scoring="english", reward_scale="normalized")
    steps = play(env, first_legal, seed=3)
    assert sum(s[1] for s in steps) == pytest.approx(steps[-1][3]["score"] / expected_random_score("english"))


def test_incremental_observation_matches_a_fresh_encoding():
    env = gym.make("PokerSquares-v0", jokers=2)
    obs, info = env.reset(seed=11)
    u = env.unwrapped
    assert obs.shape == (OBS_SIZE,) and obs.dtype == np.uint8
    assert np.array_equal(obs, encode_observation(u.game, u.state))
    assert obs[UNSEEN_OFFSET:].sum() == 53 and obs[CARD_OFFSET : CARD_OFFSET + 18].sum() in (1, 2)
    policy = make_random_policy(0)
    done = False
    while not done:
        obs, _, done, _, info = env.step(policy(obs, info))
        assert np.array_equal(obs, encode_observation(u.game, u.state))
        assert env.observation_space.contains(obs)


def test_same_seed_same_deal_and_deck_option():
    env = gym.make("PokerSquares-v0")
    a = [s[3].get("card") for s in play(env, first_legal, seed=5)]
    b = [s[3].get("card") for s in play(env, first_legal, seed=5)]
    c = [s[3].get("card") for s in play(env, first_legal, seed=6)]
    assert a == b and a != c
    deck = list(range(51, 26, -1))
    steps = play(env, first_legal, options={"deck": deck})
    assert steps[-1][3]["board"] == deck


@pytest.mark.parametrize(
    "deck, message",
    [
        (list(range(24)), "at least 25"),
        ([0] + list(range(24)), "appears twice"),
        (list(range(24)) + [52], "allow 0 joker"),
        (list(range(24)) + ["Zz"], "'Zz'"),
    ],
)
def test_bad_decks_are_refused(deck, message):
    env = gym.make("PokerSquares-v0")
    with pytest.raises(ValueError, match=message):
        env.reset(options={"deck": deck})


def test_illegal_actions_raise_and_leave_the_state_untouched():
    env = gym.make("PokerSquares-v0")
    obs, info = env.reset(seed=0)
    obs, *_ = env.step(7)
    state = env.unwrapped.state.copy()
    for bad, message in [(7, "cell 7 \\(c2\\) is occupied"), (25, "out of range"), (-1, "out of range"),
                         (3.5, "not an integer"), ("a1", "not an integer")]:
        with pytest.raises(IllegalActionError, match=message):
            env.step(bad)
        assert env.unwrapped.state == state
    obs2, *_ = env.step(np.int64(8))  # numpy integers are fine
    assert obs2[8 * 18 : 9 * 18].sum() > 0


def test_penalty_mode_ends_the_episode():
    env = gym.make("PokerSquares-v0", illegal_action="penalty", illegal_penalty=-5)
    env.reset(seed=0)
    env.step(0)
    obs, reward, terminated, truncated, info = env.step(0)
    assert terminated and reward == -5 and "occupied" in info["illegal_action"]
    assert info["score"] == 0 and info["scores"] == {"american": 0, "english": 0}
    # The game is over, so the observation shows no card to place, as info["card"] == -1 says.
    assert info["card"] == -1 and not obs[450:468].any()
    assert obs[:18].any() and obs[468:].sum() == 52 - 2  # the board and the unseen cards stay as they were
    with pytest.raises(gym.error.ResetNeeded):
        env.step(1)


def test_final_info_and_win_threshold():
    env = gym.make("PokerSquares-v0", win_threshold=0)
    info = play(env, first_legal, seed=1)[-1][3]
    assert set(info) >= {"score", "scores", "hands", "board", "won", "action_mask", "placements"}
    assert len(info["hands"]) == 10 and info["won"] is True and not info["action_mask"].any()
    env = gym.make("PokerSquares-v0", win_threshold=10_000)
    assert play(env, first_legal, seed=1)[-1][3]["won"] is False


@pytest.mark.parametrize("threshold, won", [(113, True), (113.5, False), (112, True)])
def test_won_when_the_score_reaches_the_threshold_exactly(threshold, won):
    # The worked example laid out in deal order scores exactly 113 English: "at or above" the threshold wins.
    env = gym.make("PokerSquares-v0", scoring="english", win_threshold=threshold)
    info = play(env, lambda obs, info: len(env.unwrapped.state.placements), options={"deck": RUSSIAN_EXAMPLE})[-1][3]
    assert info["score"] == 113 and info["won"] is won


def test_action_masks_reach_through_gym_make_wrappers():
    env = gym.make("PokerSquares-v0")
    _, info = env.reset(seed=0)
    masks = env.get_wrapper_attr("action_masks")()
    assert masks.dtype == bool and np.array_equal(masks, info["action_mask"].astype(bool))
    sb3_utils = pytest.importorskip("sb3_contrib.common.maskable.utils")
    assert np.array_equal(sb3_utils.get_action_masks(env), masks)


def test_maskable_ppo_trains_a_few_steps():
    sb3_contrib = pytest.importorskip("sb3_contrib")
    env = gym.make("PokerSquares-v0")
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=50, batch_size=25, n_epochs=1, seed=0, device="cpu")
    model.learn(100)
    obs, info = env.reset(seed=0)
    for _ in range(25):
        action, _ = model.predict(obs, action_masks=info["action_mask"].astype(bool), deterministic=True)
        assert info["action_mask"][int(action)] == 1
        obs, _, done, _, info = env.step(int(action))
    assert done


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"scoring": "klingon"}, "unknown point system"),
        ({"jokers": 3}, "jokers=3"),
        ({"reward_mode": "dense"}, "reward_mode='dense'"),
        ({"illegal_action": "ignore"}, "illegal_action='ignore'"),
        ({"reward_scale": -1}, "reward_scale=-1"),
        ({"reward_scale": 0}, "reward_scale=0"),
        ({"placement": "diagonal"}, "placement='diagonal'"),
        ({"first_cell": "middle"}, "first_cell='middle'"),
        ({"render_mode": "bogus"}, "render_mode='bogus'"),
        ({"illegal_penalty": 10**400}, r"illegal_penalty=1000+: expected a finite number \(this one is too large"),
    ],
)
@pytest.mark.filterwarnings(  # gym.make warns of an unknown render_mode before the env refuses it
    "ignore:.*render_mode='bogus' that is not in the possible render_modes:UserWarning")
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        gym.make("PokerSquares-v0", **kwargs)


def test_ansi_render_shows_the_card_and_lines():
    env = gym.make("PokerSquares-v0", render_mode="ansi")
    env.reset(options={"deck": RUSSIAN_EXAMPLE})
    for cell in range(5):
        env.step(cell)
    text = env.render()
    assert "8♠" in text and "Flush 20" in text and "a    b    c    d    e" in text
    assert "card to place: 9♣" in text


@pytest.mark.parametrize("make, options", [
    (lambda: gym.make("PokerSquares-v0"), {"deck": [0] * 25}),
    (lambda: gym.make("PokerSquares-v0"), {"bogus": 1}),
    (lambda: gym.make("PokerShuffle-v0"), {"cards": [0] * 25}),
    (lambda: gym.make("PokerShuffle-v0", mode="swap"), {"cards": "JK " * 25}),
])
def test_a_refused_seeded_reset_leaves_the_generator_and_the_game_as_they_were(make, options):
    import copy

    env = make()
    env.reset(seed=3)
    env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
    generator = copy.deepcopy(env.unwrapped.np_random.bit_generator.state)
    board = list(env.unwrapped.state.board)
    with pytest.raises(ValueError):
        env.reset(seed=99, options=options)
    assert env.unwrapped.np_random.bit_generator.state == generator
    assert list(env.unwrapped.state.board) == board


@pytest.mark.parametrize("make", [
    lambda: gym.make("PokerSquares-v0"),
    lambda: gym.make("PokerShuffle-v0"),
    lambda: gym.make("Soliter-v0"),
    lambda: __import__("pokersquares_env.vector", fromlist=["x"]).PokerSquaresVectorEnv(2),
    lambda: __import__("pokersquares_env.multiplayer", fromlist=["x"]).parallel_env(num_players=2),
], ids=["PokerSquares-v0", "PokerShuffle-v0", "Soliter-v0", "vector", "multiplayer"])
@needs("pettingzoo")
def test_every_env_reads_seeds_alike(make):
    """Before: the single envs took seed=True as 1 and refused numpy integers (Gymnasium's own check), while the
    vector env did the opposite; the multiplayer env took True too."""
    def flat(obs):
        if isinstance(obs, dict):
            return np.concatenate([flat(obs[k]) for k in sorted(obs)])
        return np.ravel(obs).astype(float)

    def first_obs(seed):
        return flat(make().reset(seed=seed)[0])

    assert np.array_equal(first_obs(np.int64(3)), first_obs(3))
    for bad, error in ((True, TypeError), (3.0, TypeError), ("3", TypeError), (-1, ValueError)):
        env = make()
        with pytest.raises(error, match=f"seed={bad!r}: expected a non-negative int or None"):
            env.reset(seed=bad)


@pytest.mark.parametrize("mode", ["raise", "penalty"])
def test_an_int_subclass_action_plays_its_cell_and_a_bool_stays_refused(mode):
    """Before, an IntEnum member on a legal cell was refused as illegal: under the penalty a legal move silently
    ended the episode with the penalty."""
    import enum

    class Cell(enum.IntEnum):
        CENTER = 12

    env = gym.make("PokerSquares-v0", illegal_action=mode)
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(Cell.CENTER)
    assert not terminated and "illegal_action" not in info and reward == 0
    assert env.unwrapped.state.placements == [12] and info["action_mask"][12] == 0
    state = env.unwrapped.state.copy()
    if mode == "raise":
        with pytest.raises(IllegalActionError, match=r"action True is not an integer cell index 0\.\.24"):
            env.step(True)
        assert env.unwrapped.state == state
    else:
        _, reward, terminated, _, info = env.step(True)
        assert terminated and reward == -10 and "action True is not an integer" in info["illegal_action"]


def test_unknown_reset_option_keys_of_mixed_types_are_named():
    """Before, keys that do not sort together (an int and a str) raised "TypeError: '<' not supported"."""
    env = gym.make("PokerSquares-v0")
    obs, _ = env.reset(seed=0)
    with pytest.raises(ValueError, match=r"unknown reset options \[1, 'foo'\]: expected only 'deck'"):
        env.reset(options={1: 0, "foo": 1})
    assert env.unwrapped.state.placements == [] and np.array_equal(env.unwrapped._obs, obs)


def test_a_score_equal_to_the_threshold_to_9_decimals_wins_on_every_path():
    """Ten lines of 0.1 add up to 0.9999999999999999: that reaches a threshold of 1 in the single, vector and
    Poker Shuffle envs' ``won``, the frame's badge and evaluate's ``win_rate``, as in ``play`` and multiplayer (they
    used to compare the raw float, so the same game was won in one place and lost in another)."""
    from agents.evaluation import evaluate
    from pokersquares_env.scoring import CATEGORY_KEYS, point_system
    from pokersquares_env.vector import PokerSquaresVectorEnv

    tenths = {key: 0.1 for key in CATEGORY_KEYS}
    system = point_system(tenths, win_threshold=1)
    assert system.won(0.9999999999999999) and not system.won(0.9999999) and system.won(np.array([1.0, 0.5])).tolist() \
        == [True, False]
    env = gym.make("PokerSquares-v0", scoring=tenths, win_threshold=1)
    env.reset(seed=0)
    info, done = {}, False
    while not done:
        _, _, done, _, info = env.step(int(np.flatnonzero(info.get("action_mask", np.ones(25)))[0]))
    assert info["score"] == 0.9999999999999999 and info["won"] is True
    venv = PokerSquaresVectorEnv(2, scoring=tenths, win_threshold=1)
    venv.reset(seed=0)
    for _ in range(25):
        _, _, term, _, vinfo = venv.step(np.argmax(venv.action_masks(), axis=1))
    assert term.all() and vinfo["score"].tolist() == [0.9999999999999999] * 2 and vinfo["won"].tolist() == [True] * 2
    shuffle = gym.make("PokerShuffle-v0", scoring=tenths, win_threshold=1)
    shuffle.reset(seed=0)
    sinfo, done = {}, False
    while not done:
        _, _, done, _, sinfo = shuffle.step(int(np.flatnonzero(sinfo.get("action_mask", shuffle.unwrapped.action_masks()))[0]))
    assert sinfo["score"] == 0.9999999999999999 and sinfo["won"] is True
    res = evaluate(["random"], games=3, seed=0, scoring=system, progress=False)
    assert res.summary[0]["win_rate"] == 1.0


@pytest.mark.parametrize("env_id", ["PokerSquares-v0", "PokerShuffle-v0"])
def test_a_reward_scale_too_large_for_a_float_is_named(env_id):
    """Before, an int beyond a float's range passed the range check and ``float()`` raised a bare OverflowError."""
    with pytest.raises(ValueError, match=r"reward_scale=1000+: expected a positive finite number or 'normalized'"):
        gym.make(env_id, reward_scale=10**400)
    assert gym.make(env_id, reward_scale=10**6).unwrapped.reward_scale == 1e6


def test_observation_layout_of_a_card_and_a_joker():
    """The documented 18-number code: rank flag (2..A), then suit flag (♣ ♦ ♥ ♠), a joker only its joker flag."""
    env = gym.make("PokerSquares-v0", jokers=2)
    deck = parse_cards("2♣ JK A♠ JK") + list(range(1, 22))
    obs, _ = env.reset(options={"deck": deck})
    card = obs[CARD_OFFSET : CARD_OFFSET + 18]
    assert np.flatnonzero(card).tolist() == [0, 13]  # rank 2, suit ♣
    obs, *_ = env.step(0)
    assert np.flatnonzero(obs[CARD_OFFSET : CARD_OFFSET + 18]).tolist() == [17]  # the first joker (code 52)
    assert np.flatnonzero(obs[0:18]).tolist() == [0, 13]
    obs, *_ = env.step(1)
    assert np.flatnonzero(obs[18:36]).tolist() == [17]
    assert np.flatnonzero(obs[CARD_OFFSET : CARD_OFFSET + 18]).tolist() == [12, 16]  # ace of spades
    obs, *_ = env.step(2)
    assert np.flatnonzero(obs[CARD_OFFSET : CARD_OFFSET + 18]).tolist() == [17]  # the second joker (code 53)


def test_the_reset_info_mask_is_not_changed_by_later_steps():
    env = gym.make("PokerSquares-v0")
    _, info = env.reset(seed=0)
    mask = info["action_mask"]
    _, _, _, _, info1 = env.step(0)
    env.step(1)
    assert mask.all() and info1["action_mask"].tolist() == [0] + [1] * 24


def test_an_illegal_ending_is_a_forfeit_with_an_unscaled_penalty():
    """The penalty is not scaled, the game is not won even when its score reaches the threshold."""
    env = gym.make("PokerSquares-v0", illegal_action="penalty", reward_scale=2.0, win_threshold=0)
    env.reset(seed=0)
    _, reward, *_ = env.step(0)
    assert reward == 0
    _, reward, terminated, _, info = env.step(0)  # its score, 0, reaches the threshold 0: still a forfeit
    assert terminated and reward == -10.0 and info["won"] is False and info["score"] == 0


def test_an_illegal_ending_scores_only_the_completed_lines():
    """Incomplete lines score nothing and their hands say "none", whatever they hold."""
    deck = parse_cards("A♠ A♥ A♦ A♣ K♠ K♥ 2♣ 3♣ 4♦")
    deck += [c for c in range(52) if c not in deck][:16]
    env = gym.make("PokerSquares-v0", illegal_action="penalty")
    env.reset(options={"deck": deck})
    for cell in (0, 1, 2, 3, 10, 11, 12, 13, 14):  # row 1: four aces, incomplete; row 3: a pair of kings
        env.step(cell)
    *_, info = env.step(0)
    assert info["score"] == 2 and info["scores"] == {"american": 2, "english": 1}
    assert info["hands"] == ["none", "none", "one_pair"] + ["none"] * 7


def test_final_info_lists_the_placements_in_play_order():
    env = gym.make("PokerSquares-v0")
    info = play(env, lambda obs, info: 24 - len(env.unwrapped.state.placements), seed=0)[-1][3]
    assert info["placements"] == list(range(24, -1, -1))


def test_ansi_render_after_an_illegal_ending_says_so():
    env = gym.make("PokerSquares-v0", illegal_action="penalty", render_mode="ansi")
    env.reset(seed=0)
    env.step(0)
    assert "illegal action" not in env.render()
    env.step(0)
    assert env.render().endswith("game over: ended by an illegal action")
    env.reset(seed=0)
    for cell in range(25):  # a game played to its end was not ended early
        env.step(cell)
    assert "illegal action" not in env.render()


def test_one_element_integer_arrays_play_their_cell():
    env = gym.make("PokerSquares-v0")
    env.reset(seed=0)
    for action, cell in ((np.array([3]), 3), (np.array(4, dtype=np.int32), 4)):
        _, _, terminated, _, info = env.step(action)
        assert not terminated and env.unwrapped.state.placements[-1] == cell and info["action_mask"][cell] == 0


def test_free_placement_with_a_first_cell_opens_the_board_after_the_first_card():
    env = gym.make("PokerSquares-v0", first_cell="center")
    _, info = env.reset(seed=0)
    assert info["action_mask"].tolist() == [int(c == 12) for c in range(25)]
    _, _, _, _, info = env.step(12)
    assert info["action_mask"].tolist() == [int(c != 12) for c in range(25)]
    assert env.unwrapped.action_masks().tolist() == [c != 12 for c in range(25)]


def test_a_cell_filled_after_the_first_card_stays_refused():
    env = gym.make("PokerSquares-v0")
    env.reset(seed=0)
    for cell in (0, 1, 2):
        env.step(cell)
    state = env.unwrapped.state.copy()
    for cell in (0, 1, 2):
        with pytest.raises(IllegalActionError, match=rf"cell {cell} \(.*\) is occupied"):
            env.step(cell)
    assert env.unwrapped.state == state


def test_an_illegal_ending_clears_a_drawn_joker_from_the_observation():
    env = gym.make("PokerSquares-v0", jokers=2, illegal_action="penalty")
    deck = parse_cards("2♣ JK") + list(range(1, 30))
    env.reset(options={"deck": deck})
    obs, *_ = env.step(0)
    assert obs[CARD_OFFSET + 17] == 1
    obs, _, terminated, _, info = env.step(0)
    assert terminated and info["card"] == -1 and not obs[CARD_OFFSET : CARD_OFFSET + 18].any()


def test_masks_and_render_before_the_first_reset_ask_for_a_reset():
    with pytest.raises(gym.error.ResetNeeded, match="before action_masks"):
        gym.make("PokerSquares-v0").unwrapped.action_masks()
    with pytest.raises(gym.error.ResetNeeded, match=r"call reset\(\) before render\(\)"):
        gym.make("PokerSquares-v0", render_mode="ansi").unwrapped.render()


def test_render_without_a_render_mode_names_the_modes_to_pass():
    env = gym.make("PokerSquares-v0").unwrapped
    env.reset(seed=0)
    with pytest.warns(UserWarning, match=r"pass render_mode='ansi' or 'rgb_array' to make\(\)") as record:
        assert env.render() is None
    assert "'human'" not in str(record[0].message)


@needs("PIL")
def test_human_mode_shows_a_frame_on_every_reset_and_step(monkeypatch):
    import pokersquares_env.env as env_module

    shown = []

    class FakeRenderer:
        def show(self, frame):
            shown.append(np.asarray(frame).shape)

        def close(self):
            pass

    monkeypatch.setattr(env_module, "new_renderer", lambda *args: FakeRenderer())
    env = env_module.PokerSquaresEnv(render_mode="human")
    env.reset(seed=0)
    assert len(shown) == 1 and len(shown[0]) == 3
    env.step(0)
    assert len(shown) == 2


def test_ansi_render_after_an_illegal_ending_marks_no_playable_cell():
    env = gym.make("PokerSquares-v0", placement="adjacent", first_cell="center", illegal_action="penalty",
                   render_mode="ansi")
    env.reset(seed=0)
    env.step(12)
    assert "()" in env.render()  # the cells touching c3 are marked playable
    env.step(0)  # a1 touches no placed card: the game ends
    assert "()" not in env.render()


@pytest.mark.parametrize("penalty, error, message", [
    (True, TypeError, "illegal_penalty=True: expected a number"),
    (float("inf"), ValueError, "illegal_penalty=inf: expected a finite number"),
    (float("-inf"), ValueError, "illegal_penalty=-inf: expected a finite number"),
    (float("nan"), ValueError, "illegal_penalty=nan: expected a finite number"),
])
def test_bad_illegal_penalties_are_named(penalty, error, message):
    with pytest.raises(error, match=message):
        gym.make("PokerSquares-v0", illegal_penalty=penalty)


def test_choice_errors_list_the_choices():
    from pokersquares_env._adapter import check_choice

    with pytest.raises(ValueError, match=r"^mode='x': expected one of 'a', 'b', 'c'$"):
        check_choice("mode", "x", ("a", "b", "c"))
    with pytest.raises(ValueError, match=r"^mode='x': expected 'a' or 'b'$"):
        check_choice("mode", "x", ("a", "b"))
    with pytest.raises(ValueError, match=r"^mode=array\('a', dtype='<U1'\): expected 'a' or 'b'$"):
        check_choice("mode", np.array("a"), ("a", "b"))  # equal to a choice, but not a string


def test_reset_options_may_be_any_mapping():
    from types import MappingProxyType

    deck = list(range(51, 26, -1))
    env = gym.make("PokerSquares-v0")
    _, info = env.reset(options=MappingProxyType({"deck": deck}))
    assert info["card"] == 51
    with pytest.raises(TypeError, match=r"options=\[\('deck', 1\)\]: expected None or a dict"):
        env.reset(options=[("deck", 1)])


@pytest.mark.parametrize("make", ["single", "vector", "shuffle"])
def test_an_array_as_win_threshold_is_named_not_numpys_ambiguity_error(make):
    """Before, ``win_threshold == "default"`` compared a numpy array element-wise and raised numpy's "truth value of
    an array ... is ambiguous"; it is now the same "is not a number" as any other non-number."""
    from pokersquares_env.env import PokerSquaresEnv
    from pokersquares_env.shuffle.env import PokerShuffleEnv
    from pokersquares_env.vector import PokerSquaresVectorEnv

    build = {"single": PokerSquaresEnv, "vector": lambda **kw: PokerSquaresVectorEnv(2, **kw),
             "shuffle": PokerShuffleEnv}[make]
    with pytest.raises(TypeError, match=r"win_threshold: value array\(\[1, 2\]\) is not a number"):
        build(win_threshold=np.array([1, 2]))
    assert build(win_threshold=np.int64(60)).point_system.win_threshold == 60
