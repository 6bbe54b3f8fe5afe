"""The SB3 adapter: a VecEnv with action masks that MaskablePPO trains on directly."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("sb3_contrib")

from stable_baselines3.common.vec_env import VecEnv, VecMonitor  # noqa: E402

from pokersquares_env.sb3 import PokerSquaresSB3VecEnv, make_sb3_vec_env  # noqa: E402
from pokersquares_env.scoring import score_grids  # noqa: E402


def test_is_a_vec_env_with_same_step_resets():
    venv = make_sb3_vec_env(4, seed=3, scoring="english")
    assert isinstance(venv, VecEnv) and isinstance(venv, PokerSquaresSB3VecEnv)
    assert venv.observation_space.shape == (522,) and venv.action_space.n == 25
    obs = venv.reset()
    assert obs.shape == (4, 522)
    total = np.zeros(4)
    for t in range(25):
        masks = venv.env_method("action_masks")
        assert masks.shape == (4, 25) and masks.dtype == bool
        np.testing.assert_array_equal(masks, venv.action_masks())
        obs, reward, dones, infos = venv.step(np.argmax(masks, axis=1))
        total += reward
        assert len(infos) == 4
        # On every sub-env's info at every step, as SB3's DummyVecEnv sets it (before: only on finished games').
        assert [info["TimeLimit.truncated"] for info in infos] == [False] * 4
    assert dones.all()
    # Same-step reset: obs and masks are already those of the new games.
    assert (obs[:, :450] == 0).all() and venv.action_masks().all()
    for i, info in enumerate(infos):
        assert info["terminal_observation"].shape == (522,)
        assert info["terminal_observation"][:450].sum() == 50  # 25 cards, 2 flags each
        assert info["score"] == total[i] == score_grids(np.array([info["board"]]), "english")[0]
        assert set(info["scores"]) == {"american", "english"} and len(info["hands"]) == 10
        assert not info["TimeLimit.truncated"]
    assert venv.env_method("action_masks", indices=[1, 2]).shape == (2, 25)
    assert venv.get_attr("reward_mode") == ["line"] * 4


def test_a_given_venv_is_checked_against_num_envs_and_its_type():
    """Before: num_envs was silently ignored beside a venv, and venv="x" failed with an AttributeError."""
    from pokersquares_env.vector import PokerSquaresVectorEnv

    with pytest.raises(ValueError, match=r"num_envs=4 but venv has 8 sub-envs"):
        PokerSquaresSB3VecEnv(num_envs=4, venv=PokerSquaresVectorEnv(8))
    with pytest.raises(TypeError, match=r"venv='x': expected a PokerSquaresVectorEnv"):
        PokerSquaresSB3VecEnv(venv="x")
    assert PokerSquaresSB3VecEnv(num_envs=8, venv=PokerSquaresVectorEnv(8)).num_envs == 8
    assert PokerSquaresSB3VecEnv(venv=PokerSquaresVectorEnv(3)).num_envs == 3
    assert PokerSquaresSB3VecEnv().num_envs == 8  # the default


def test_seed_reproducible():
    a, b = make_sb3_vec_env(3), make_sb3_vec_env(3)
    a.seed(5)
    b.seed(5)
    np.testing.assert_array_equal(a.reset(), b.reset())


def test_maskable_ppo_learns_and_respects_masks():
    from sb3_contrib import MaskablePPO

    venv = VecMonitor(make_sb3_vec_env(8, seed=0, reward_scale="normalized"))
    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=64, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [32]}, device="cpu")
    model.learn(total_timesteps=512)
    assert model.num_timesteps >= 512
    obs = venv.reset()
    for _ in range(60):  # masked predictions never pick an occupied cell (illegal_action='raise' would raise)
        masks = venv.env_method("action_masks")
        actions, _ = model.predict(obs, action_masks=masks, deterministic=False)
        assert masks[np.arange(8), actions].all()
        obs, _, _, _ = venv.step(actions)


def test_set_options_deals_the_given_decks_at_the_next_reset_only():
    venv = make_sb3_vec_env(2, seed=0)
    first, second = list(range(25)), list(range(25, 50))
    venv.set_options({"deck": first})
    obs = venv.reset()
    assert np.array_equal(obs[0], obs[1])  # one dict: the same deck for every sub-env
    venv.set_options([{"deck": first}, {"deck": second}])
    obs = venv.reset()
    import gymnasium as gym

    single = gym.make("PokerSquares-v0")
    for i, deck in enumerate((first, second)):  # each sub-env starts exactly as the single env on its deck
        assert np.array_equal(obs[i], single.reset(options={"deck": deck + list(range(50, 52))})[0])
    assert not np.array_equal(venv.reset()[0], obs[0])  # the options were used once, then shuffles again
    for bad, message in [({"decks": first}, r"unknown reset option\(s\) \['decks'\]"),
                         ([{"deck": first}, {}], "for some sub-envs only")]:
        venv.set_options(bad)
        with pytest.raises(ValueError, match=message):
            venv.reset()


def test_constructor_seed_seeds_the_first_reset_only():
    venv = make_sb3_vec_env(2, seed=0)
    first = venv.reset()
    np.testing.assert_array_equal(first, make_sb3_vec_env(2, seed=0).reset())  # the seed reproduces the deals
    assert not np.array_equal(venv.reset(), first)  # the next reset shuffles on: new deals, not the seed's again
    later = make_sb3_vec_env(2, seed=3)
    later.seed(0)  # as an SB3 algorithm does with its own seed: it wins over the constructor's
    np.testing.assert_array_equal(later.reset(), first)


def test_finished_games_report_placements_and_only_the_offender_its_illegal_action():
    venv = make_sb3_vec_env(2, seed=0, illegal_action="penalty")
    venv.reset()
    for t in range(24):
        venv.step(np.array([t, t]))
    _, reward, dones, infos = venv.step(np.array([24, 0]))  # game 0 fills its last cell, game 1 plays an occupied one
    assert dones.all() and reward[1] == -10.0
    assert infos[0]["placements"] == list(range(25)) and infos[0]["won"] in (True, False)
    assert infos[1]["placements"] == list(range(24))  # the 24 legal moves before the bad one, as the single env says
    assert "illegal_action" not in infos[0]
    assert "occupied" in infos[1]["illegal_action"]


def test_env_method_masks_follow_the_indices_and_set_attr_needs_every_sub_env():
    venv = make_sb3_vec_env(3, seed=1)
    venv.reset()
    venv.step(np.array([0, 5, 24]))  # each game has a different occupied cell
    masks = venv.action_masks()
    np.testing.assert_array_equal(venv.env_method("action_masks", indices=[2, 1]), masks[[2, 1]])
    np.testing.assert_array_equal(venv.env_method("action_masks", indices=[2]), masks[[2]])
    assert not venv.env_method("action_masks", indices=[2])[0, 24]
    with pytest.raises(ValueError, match="share one vector env"):
        venv.set_attr("reward_mode", "terminal", indices=[0])
    assert venv.get_attr("reward_mode") == ["line"] * 3  # the refused call changed nothing


def test_observations_are_owned_even_over_a_vector_env_without_copies():
    """SB3 stores the last batch in its rollout buffer after the next step: a buffer view would hold the next
    states by then (every stored observation one move late)."""
    venv = make_sb3_vec_env(2, seed=0, copy=False)
    first = venv.reset()
    kept = first.copy()
    venv.step(venv.action_masks().argmax(1))
    np.testing.assert_array_equal(first, kept)
    second, *_ = venv.step(venv.action_masks().argmax(1))
    kept = second.copy()
    venv.step(venv.action_masks().argmax(1))
    np.testing.assert_array_equal(second, kept)


def test_maskable_ppo_stores_the_observations_it_acted_on_without_copies():
    from sb3_contrib import MaskablePPO

    from pokersquares_env.env import UNSEEN_OFFSET

    for copy in (True, False):
        model = MaskablePPO("MlpPolicy", make_sb3_vec_env(2, seed=0, copy=copy), n_steps=8, batch_size=8,
                            n_epochs=1, seed=0)
        model.learn(16)  # one rollout of 8 steps x 2 envs; training flattens the buffer env by env
        stored = model.rollout_buffer.observations.reshape(2, 8, -1)[0]  # env 0: the first 8 moves of its game
        unseen = stored[:, UNSEEN_OFFSET:UNSEEN_OFFSET + 52].sum(1)  # 51 unseen at the first card, then one fewer
        assert unseen.tolist() == [51 - k for k in range(8)], copy


def test_get_attr_gives_a_sub_envs_spaces_and_env_method_refuses_a_part_or_a_reset():
    import gymnasium as gym

    venv = make_sb3_vec_env(3, seed=1)
    venv.reset()
    assert venv.get_attr("observation_space", [0])[0] == venv.observation_space
    assert venv.get_attr("action_space") == [gym.spaces.Discrete(25)] * 3
    venv.step(np.array([0, 5, 24]))
    with pytest.raises(ValueError, match=r"env_method\('reset'\).*call the VecEnv's own reset"):
        venv.env_method("reset", indices=[0])
    with pytest.raises(ValueError, match=r"env_method\('render'\) for sub-envs \[1\]: .*expected all 3"):
        venv.env_method("render", indices=[1])
    assert not venv.action_masks()[:, [0, 5, 24]].diagonal().any()  # the refused calls changed no game


def test_step_and_reset_infos_carry_each_sub_envs_mask_and_card_as_dummy_vec_env_does():
    """As DummyVecEnv over PokerSquares-v0: every step's info has the sub-env's action_mask and card (a finished
    game's those of its last step), and reset_infos the new game's."""
    import gymnasium as gym

    import pokersquares_env  # noqa: F401

    ours = make_sb3_vec_env(2, seed=3)
    ours.reset()
    single = gym.make("PokerSquares-v0")  # the vector env deals what one env deals over successive resets
    for i, (_, info) in enumerate([single.reset(seed=3), single.reset()]):
        assert ours.reset_infos[i]["card"] == info["card"]
        assert np.array_equal(ours.reset_infos[i]["action_mask"], info["action_mask"])
    masks = ours.action_masks()
    for _ in range(25):
        _, _, dones, infos = ours.step(masks.argmax(1))
        masks = ours.action_masks()
        for i in range(2):
            assert infos[i]["action_mask"].dtype == np.int8 and infos[i]["action_mask"].shape == (25,)
            if dones[i]:  # the finished game's last step, as the single env reports it
                assert not infos[i]["action_mask"].any() and infos[i]["card"] == -1
                assert np.array_equal(ours.reset_infos[i]["action_mask"].astype(bool), masks[i])
                assert ours.reset_infos[i]["card"] >= 0
            else:
                assert np.array_equal(infos[i]["action_mask"].astype(bool), masks[i]) and infos[i]["card"] >= 0
    assert dones.all()  # 25 placements end every game
    # the new games' cards: the third and fourth decks a single env deals (a mutation audit found reset_infos left
    # with the first games' cards unseen, since both first masks are all legal)
    single.reset(seed=3)
    single.reset()
    for i in range(2):
        assert ours.reset_infos[i]["card"] == single.reset()[1]["card"]


def test_set_options_takes_decks_as_card_text_like_the_single_env():
    """Before, one dict with a deck of card strings (given to every sub-env) was refused by the vector env's checks
    ("has dtype <U2: expected integer card codes")."""
    import gymnasium as gym

    from pokersquares_env.cards import format_card

    text = [format_card(c) for c in range(51, -1, -1)]
    venv = make_sb3_vec_env(2, seed=0)
    venv.set_options({"deck": text})
    obs = venv.reset()
    single = gym.make("PokerSquares-v0")
    first, _ = single.reset(options={"deck": text})
    assert np.array_equal(obs[0], first) and np.array_equal(obs[1], first)
    venv.set_options([{"deck": text}, {"deck": text[::-1]}])
    obs = venv.reset()
    assert np.array_equal(obs[1], single.reset(options={"deck": text[::-1]})[0])
    venv.set_options([{"deck": text}, {"deck": ["Xx", *text[1:]]}])
    with pytest.raises(ValueError, match=r"options\['deck'\]\[1\]: bad card 'Xx'"):
        venv.reset()


def test_set_options_with_deck_none_shuffles_as_the_single_env_and_a_partial_none_is_refused():
    """Before, ``set_options({"deck": None})`` (the single env's "shuffle") made the next reset fail with
    "options['deck'][0] has shape (): expected a deck of >=25 card codes"."""
    for options in ({"deck": None}, [{"deck": None}, {}], [{"deck": None}, {"deck": None}]):
        venv = make_sb3_vec_env(2, seed=0)
        venv.set_options(options)
        np.testing.assert_array_equal(venv.reset(), make_sb3_vec_env(2, seed=0).reset())  # the seed's own deals
    venv = make_sb3_vec_env(2, seed=0)
    for options, missing in [([{"deck": None}, {"deck": list(range(25))}], 0), ([{"deck": list(range(25))}, {}], 1)]:
        venv.set_options(options)
        with pytest.raises(ValueError, match=rf"for some sub-envs only \(none or None for sub-envs \[{missing}\]\).*"
                                             r"give a deck for every sub-env .*or None for all of them to shuffle"):
            venv.reset()


def test_a_bad_seed_is_refused_when_given_not_at_a_later_reset():
    """Before, ``make_sb3_vec_env(2, seed=-1)`` was made and failed only at its first reset, and ``venv.seed(-5)``
    made every later reset fail."""
    for seed, error in [(-1, ValueError), ("x", TypeError), (1.5, TypeError), (True, TypeError)]:
        with pytest.raises(error, match=rf"seed={seed!r}: expected a non-negative int or None"):
            make_sb3_vec_env(2, seed=seed)
    venv = make_sb3_vec_env(2, seed=3)
    for seed, error in [(-5, ValueError), ("x", TypeError)]:
        with pytest.raises(error, match=rf"seed={seed!r}: expected a non-negative int or None"):
            venv.seed(seed)
    np.testing.assert_array_equal(venv.reset(), make_sb3_vec_env(2, seed=3).reset())  # the constructor's seed stands
    assert venv.seed(np.int64(7)) == [7, 8]  # SB3's seeds, numpy ints too
    np.testing.assert_array_equal(venv.reset(), make_sb3_vec_env(2, seed=7).reset())
    venv.seed(None)  # a random seed, as SB3 gives
    venv.reset()


def test_set_options_names_unknown_keys_of_mixed_types():
    """Before, keys that do not sort together raised "TypeError: '<' not supported" instead of naming them."""
    venv = make_sb3_vec_env(2, seed=0)
    venv.set_options({1: 0, "foo": 1})
    with pytest.raises(ValueError, match=r"unknown reset option\(s\) \[1, 'foo'\]"):
        venv.reset()


def test_env_method_masks_keep_the_order_and_repeats_of_indices_and_set_attr_needs_each_sub_env():
    """Before, indices of the length N (``[2, 1, 0]``, ``[0, 0, 1]``) gave the masks of 0, 1, 2, and set_attr took
    ``[0, 0, 1]`` as "all sub-envs" and changed sub-env 2 too."""
    venv = make_sb3_vec_env(3, seed=1)
    venv.reset()
    venv.step(np.array([0, 5, 24]))  # each game has a different occupied cell
    masks = venv.action_masks()
    np.testing.assert_array_equal(venv.env_method("action_masks", indices=[2, 1, 0]), masks[[2, 1, 0]])
    np.testing.assert_array_equal(venv.env_method("action_masks", indices=[0, 0, 1]), masks[[0, 0, 1]])
    with pytest.raises(ValueError, match=r"set_attr\('reward_scale'\) for sub-envs \[0, 0, 1\]: .*expected all 3"):
        venv.set_attr("reward_scale", 2.0, indices=[0, 0, 1])
    assert venv.get_attr("reward_scale") == [1.0] * 3  # the refused call changed nothing
    with pytest.raises(ValueError, match=r"env_method\('render'\) for sub-envs \[1, 1, 0\]: .*expected all 3"):
        venv.env_method("render", indices=[1, 1, 0])
    venv.set_attr("reward_scale", 2.0, indices=[2, 1, 0])  # every sub-env, in any order
    assert venv.get_attr("reward_scale") == [2.0] * 3


def test_a_bool_in_the_actions_is_refused_as_the_single_env_refuses_it():
    """Before, ``step_async([True, 5])`` played cell 1 (np.asarray read the bool as 1), without a penalty."""
    venv = make_sb3_vec_env(2, seed=0, illegal_action="penalty")
    venv.reset()
    with pytest.raises(TypeError, match=r"actions\[0\] = True: a bool is no cell"):
        venv.step_async([True, 5])
    venv.step_async([1, 5])
    _, rewards, dones, _ = venv.step_wait()
    assert not dones.any() and venv.venv._placed.tolist() == [1, 1]


@pytest.mark.parametrize("options", [[1, 2], ["deck", "deck"]])
def test_set_options_entries_that_are_not_dicts_are_named_at_reset(options):
    """Before: ``TypeError: 'int' object is not iterable`` / "dictionary update sequence element #0 has length 1"."""
    venv = make_sb3_vec_env(2, seed=0)
    venv.set_options(options)
    with pytest.raises(TypeError, match=rf"set_options: sub-env 0's options are {options[0]!r}: expected None or a dict "
                                        rf"with the key 'deck'"):
        venv.reset()


@pytest.mark.parametrize("num_envs", [True, 2.0])
def test_num_envs_beside_a_venv_must_be_an_integer_as_without_one(num_envs):
    from pokersquares_env.vector import PokerSquaresVectorEnv

    with pytest.raises(ValueError, match=rf"num_envs={num_envs!r}: expected a positive integer"):
        PokerSquaresSB3VecEnv(num_envs=num_envs, venv=PokerSquaresVectorEnv(2))
    with pytest.raises(ValueError, match=rf"num_envs={num_envs!r}: expected a positive integer"):
        PokerSquaresSB3VecEnv(num_envs=num_envs)
    assert PokerSquaresSB3VecEnv(num_envs=np.int64(2), venv=PokerSquaresVectorEnv(2)).num_envs == 2


def test_each_finished_game_reports_its_own_terminal_observation_and_final_infos():
    """Games that end at different steps (illegal cells end some early, under the penalty rule) each get their own
    last observation and final scores, as a single env playing the same deck and cells gives them; the new games'
    first observations follow. An audit found ``terminal_observation``, the final keys, the two scores and the new
    observations' order unchecked whenever games did not all end together (SB3 bootstraps values from the terminal
    observation)."""
    from pokersquares_env.env import PokerSquaresEnv

    n = 3
    venv = make_sb3_vec_env(n, seed=5, illegal_action="penalty", illegal_penalty=-2.0)
    obs = venv.reset()
    singles = [PokerSquaresEnv(illegal_action="penalty", illegal_penalty=-2.0) for _ in range(n)]

    def restart(i):
        first, _ = singles[i].reset(options={"deck": list(venv.venv.game_state(i).deck)})
        np.testing.assert_array_equal(obs[i], first)

    for i in range(n):
        restart(i)
    rng = np.random.default_rng(0)
    ended = 0
    for step in range(110):
        masks = venv.action_masks()
        actions = np.argmax(masks * rng.random(masks.shape), axis=1)
        if step % 9 == 4:  # an occupied cell (or cell 0 on an empty board's turn, when it is legal: then no end)
            k = step % n
            taken = np.flatnonzero(~masks[k])
            actions[k] = taken[0] if len(taken) else actions[k]
        obs, rewards, dones, infos = venv.step(actions)
        for i in range(n):
            o, r, terminated, _, info = singles[i].step(int(actions[i]))
            assert rewards[i] == pytest.approx(r) and dones[i] == terminated
            if terminated:
                ended += 1
                np.testing.assert_array_equal(infos[i]["terminal_observation"], o)
                for key in ("score", "scores", "hands", "board", "placements", "won"):
                    assert infos[i][key] == info[key], key
                assert ("illegal_action" in infos[i]) == ("illegal_action" in info)
                restart(i)
            else:
                np.testing.assert_array_equal(obs[i], o)
    assert ended >= 8 and len({s.state.num_placed for s in singles}) > 1  # ends at different times


def test_a_numpy_unsigned_scalar_among_int_actions_is_its_cell():
    """Before, ``step_async([np.uint64(1), 5])`` stored float64 actions, which the vector env then refused."""
    venv = make_sb3_vec_env(2, seed=0)
    venv.reset()
    venv.step_async([np.uint64(1), 5])
    venv.step_wait()
    assert venv.venv._placed.tolist() == [1, 1] and venv.venv._mask[0, 1] == 0 and venv.venv._mask[1, 5] == 0


def test_a_given_venv_refuses_rules_beside_it_and_more_sub_envs_than_it_has():
    """A mutation audit found the rules beside a venv, and a num_envs above the venv's, unchecked: both were ignored."""
    from pokersquares_env.vector import PokerSquaresVectorEnv

    with pytest.raises(ValueError, match=r"pass either venv or rules \['scoring'\], not both"):
        PokerSquaresSB3VecEnv(venv=PokerSquaresVectorEnv(2), scoring="english")
    with pytest.raises(ValueError, match=r"num_envs=4 but venv has 2 sub-envs"):
        PokerSquaresSB3VecEnv(num_envs=4, venv=PokerSquaresVectorEnv(2))


def test_seed_seeds_the_next_reset_only():
    """As SB3's ``seed``: the reset after ``seed(s)`` deals from ``s``, the one after it shuffles on."""
    venv = make_sb3_vec_env(2)
    venv.seed(5)
    first = venv.reset()
    assert not np.array_equal(venv.reset(), first)
    other = make_sb3_vec_env(2)
    other.seed(5)
    np.testing.assert_array_equal(other.reset(), first)


def test_step_wait_needs_a_step_async_before_each_call():
    venv = make_sb3_vec_env(2, seed=0)
    venv.reset()
    with pytest.raises(RuntimeError, match=r"step_wait\(\) called without step_async\(\)"):
        venv.step_wait()
    venv.step_async(np.array([0, 1]))
    venv.step_wait()
    with pytest.raises(RuntimeError, match=r"step_wait\(\) called without step_async\(\)"):
        venv.step_wait()  # the actions were played once, not kept for another step
    assert venv.action_masks().sum(1).tolist() == [24, 24]  # one card placed in each game


def test_rewards_are_float32_as_dummy_vec_env_gives_them():
    venv = make_sb3_vec_env(2, seed=0)
    venv.reset()
    _, reward, _, _ = venv.step(np.array([0, 1]))
    assert reward.dtype == np.float32 and reward.shape == (2,)


def test_env_method_gives_one_result_per_index_and_refuses_close_and_unknown_sub_envs():
    import gymnasium as gym

    venv = make_sb3_vec_env(3, seed=1)
    venv.reset()
    venv.step(np.array([0, 5, 24]))
    states = venv.env_method("game_state", 1)  # run once on the vector env, listed once per sub-env
    assert len(states) == 3 and all(s.placements == [5] for s in states)
    with pytest.raises(ValueError, match=r"env_method\('close'\).*call the VecEnv's own close\(\)"):
        venv.env_method("close")
    venv.step(np.array([1, 6, 23]))  # the refused close left the games playing
    with pytest.raises(ValueError, match=r"set_attr\('reward_scale'\) for sub-envs \[0, 1, 1\]: .*expected all 3"):
        venv.set_attr("reward_scale", 2.0, indices=[0, 1, 1])  # three indices, but not sub-env 2
    assert venv.get_attr("reward_scale") == [1.0] * 3
    assert venv.env_is_wrapped(gym.Wrapper) == [False] * 3 and venv.env_is_wrapped(gym.Wrapper, [2]) == [False]


def test_get_images_gives_every_sub_envs_frame_under_rgb_array_only():
    venv = make_sb3_vec_env(2, seed=0, render_mode="rgb_array")
    venv.reset()
    frames = venv.get_images()
    assert len(frames) == 2 and all(f.ndim == 3 and f.shape[2] == 3 for f in frames)
    plain = make_sb3_vec_env(2, seed=0)
    plain.reset()
    assert plain.get_images() == [None, None]



def test_the_module_names_a_missing_attribute_and_makes_eight_sub_envs_by_default():
    import pokersquares_env.sb3 as sb3

    with pytest.raises(AttributeError, match=r"module 'pokersquares_env.sb3' has no attribute 'PokerSquaresVecEnv'"):
        sb3.PokerSquaresVecEnv  # noqa: B018
    assert make_sb3_vec_env().num_envs == 8


def test_close_closes_the_vector_env():
    venv = make_sb3_vec_env(2, seed=0)
    venv.reset()
    assert not venv.venv.closed
    venv.close()
    assert venv.venv.closed


def test_indices_count_from_the_end_and_a_missing_sub_env_or_a_non_integer_is_named():
    """Indices are read as DummyVecEnv reads them (-1 is the last sub-env); a sub-env that does not exist was numpy's
    'index 5 is out of bounds for axis 0 with size 2' (env_method) or a refusal as not every sub-env (set_attr),
    now an IndexError naming it and the valid range; a bool or a float is not taken for an index."""
    import gymnasium as gym

    venv = make_sb3_vec_env(3, seed=0)
    venv.reset()
    masks = venv.action_masks()
    np.testing.assert_array_equal(venv.env_method("action_masks", indices=[-1, 0]), masks[[2, 0]])
    np.testing.assert_array_equal(venv.env_method("action_masks", indices=np.int64(-3)), masks[[0]])
    venv.set_attr("reward_scale", 2.0, indices=[-1, 0, 1])  # every sub-env
    assert venv.get_attr("reward_scale", indices=-2) == [2.0]
    for call in (lambda: venv.env_method("action_masks", indices=[5]), lambda: venv.get_attr("reward_scale", 3),
                 lambda: venv.env_is_wrapped(gym.Wrapper, [-4]), lambda: venv.set_attr("reward_scale", 1.0, [0, 1, 3])):
        with pytest.raises(IndexError, match=r"there is no sub-env -?\d: expected 0\.\.2 \(or -3\.\.-1 from the end\)$"):
            call()
    for bad in (True, 1.0, "0", [0, None]):
        with pytest.raises(TypeError, match=r"is not a sub-env index: expected integers$"):
            venv.env_method("action_masks", indices=bad)
    assert venv.get_attr("reward_scale") == [2.0] * 3  # the refused set_attr changed nothing


def _lines_policy_states():
    """Four states of one game (0, 3, 7 and 12 cards placed): flat observations and their legal-cell masks."""
    from pokersquares_env.env import PokerSquaresEnv

    env = PokerSquaresEnv()
    obs, _ = env.reset(seed=11)
    states, masks = [], []
    for t in range(13):
        if t in (0, 3, 7, 12):
            states.append(obs.copy())
            masks.append(env.action_masks().copy())
        obs, *_ = env.step(int(np.flatnonzero(env.action_masks())[(5 * t) % env.action_masks().sum()]))
    return np.array(states), np.array(masks)


def test_lines_policy_acts_and_learns_through_the_lines_nets_masked_scores_and_value():
    """The rollout (``policy(obs)``), the update (``evaluate_actions``) and inference (``get_distribution``,
    ``predict_values``) all read the lines net: the log-probabilities are the net's cell scores softmaxed over the
    legal cells, the values are its state value, and both carry gradients back into the net (an actor or critic
    detached, zeroed or read from the wrong output trained or played something else, unseen by the other tests)."""
    import torch

    from agents.sb3_policy import LinesPolicy
    from pokersquares_env.env import PokerSquaresEnv

    space = PokerSquaresEnv()
    torch.manual_seed(0)
    policy = LinesPolicy(space.observation_space, space.action_space, lambda _: 1e-3, lines_hidden=[8])
    obs, masks = _lines_policy_states()
    tensor = torch.as_tensor(obs)
    net = policy.mlp_extractor.net
    with torch.no_grad():
        scores, value = net(tensor)
        expected = torch.log_softmax(scores.masked_fill(~torch.as_tensor(masks), -1e8), -1)
        actions, values, log_prob = policy(tensor, action_masks=masks)
        assert masks[np.arange(4), actions.numpy()].all()  # an occupied cell is never chosen
        torch.testing.assert_close(values[:, 0], value)
        torch.testing.assert_close(log_prob, expected.gather(1, actions[:, None])[:, 0])
        torch.testing.assert_close(policy.predict_values(tensor)[:, 0], value)
        logits = policy.get_distribution(tensor, action_masks=masks).distribution.logits
        torch.testing.assert_close(logits, expected)
    chosen = torch.as_tensor(np.argmax(masks, axis=1))
    values, log_prob, _ = policy.evaluate_actions(tensor, chosen, action_masks=masks)
    torch.testing.assert_close(values[:, 0], value, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(log_prob, expected.gather(1, chosen[:, None])[:, 0], rtol=1e-5, atol=1e-5)
    for loss, head in ((values.sum(), net.value), (log_prob.sum(), net.cell_out)):
        policy.zero_grad()
        loss.backward(retain_graph=True)
        assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in head.parameters())


def test_lines_policy_keeps_pytorchs_initialisation_unless_ortho_init_is_asked_for():
    """As its docstring says: the net starts as fast-ppo's LinesNet does (PyTorch's default initialisation, the
    same weights from the same torch seed), and ``ortho_init=True`` given explicitly is honoured, not overridden."""
    import torch

    from agents.fast_ppo import LinesNet
    from agents.sb3_policy import LinesPolicy
    from pokersquares_env.env import PokerSquaresEnv

    space = PokerSquaresEnv()

    def weights(**kwargs):
        torch.manual_seed(3)
        policy = LinesPolicy(space.observation_space, space.action_space, lambda _: 1e-3, lines_hidden=[8, 8],
                             **kwargs)
        return policy.mlp_extractor.net.state_dict()

    torch.manual_seed(3)
    plain = LinesNet([8, 8]).state_dict()
    default, ortho = weights(), weights(ortho_init=True)
    assert all(torch.equal(default[k], plain[k]) for k in plain)
    assert not all(torch.equal(ortho[k], plain[k]) for k in plain)


def test_lines_policy_refuses_a_net_arch_given_by_position():
    """net_arch is the fourth positional parameter of SB3's policies: given there it is refused as by keyword."""
    import re

    from agents.sb3_policy import LinesPolicy
    from pokersquares_env.env import PokerSquaresEnv

    space = PokerSquaresEnv()
    with pytest.raises(ValueError, match=re.escape("net_arch=[32, 32]: LinesPolicy's layers are lines_hidden")):
        LinesPolicy(space.observation_space, space.action_space, lambda _: 1e-3, [32, 32])


def test_a_lines_policy_saved_alone_loads_with_its_layer_sizes_and_weights(tmp_path):
    """SB3's ``policy.save`` / ``LinesPolicy.load`` (the policy without its algorithm) rebuild the policy from its
    constructor parameters: those hold SB3's default net_arch, which must load, and lines_hidden, without which the
    net came back at 64 64 and its weights did not fit.  (``MaskablePPO.load`` rebuilds from policy_kwargs instead.)"""
    import torch

    from agents.sb3_policy import LinesPolicy
    from pokersquares_env.env import PokerSquaresEnv

    space = PokerSquaresEnv()
    policy = LinesPolicy(space.observation_space, space.action_space, lambda _: 1e-3, lines_hidden=[8])
    policy.save(tmp_path / "policy.pt")
    loaded = LinesPolicy.load(tmp_path / "policy.pt", device="cpu")
    assert loaded._lines_hidden == [8]
    obs, _ = _lines_policy_states()
    tensor = torch.as_tensor(obs)
    with torch.no_grad():
        for a, b in zip(policy.mlp_extractor.net(tensor), loaded.mlp_extractor.net(tensor)):
            torch.testing.assert_close(a, b)


def test_reset_cancels_actions_left_pending_by_step_async():
    """SB3's VecEnv.reset: 'If step_async is still doing work, that work will be cancelled and step_wait() should not
    be called until step_async() is invoked again'.  Before, the actions chosen for the old games were kept and the
    next step_wait() played them on the new ones."""
    venv = make_sb3_vec_env(2, seed=0)
    venv.reset()
    venv.step_async(np.array([0, 1]))
    venv.reset()
    with pytest.raises(RuntimeError, match=r"step_wait\(\) called without step_async\(\)"):
        venv.step_wait()
    assert venv.action_masks().all()  # the new games are untouched
