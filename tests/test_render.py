"""Frames: shape and dtype for every env, what they show, human mode, missing extras, speed."""

from __future__ import annotations

import importlib
import os
import sys

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pokersquares_env  # noqa: F401  (registers the envs)
from helpers import needs
from pokersquares_env import render
from pokersquares_env.cards import parse_cards
from pokersquares_env.core import PokerSquaresGame, Rules

RED = np.array(render.RED)
# The Russian source's example board (302 American points).
EXAMPLE = "8♠ Q♠ T♠ 4♠ 2♠  9♣ Q♣ T♣ J♣ K♣  A♦ 8♦ T♦ 4♣ 5♣  A♥ Q♥ T♥ J♥ K♥  3♠ 6♥ 7♦ 4♥ 5♠"


def cell_patch(frame, cell):
    x, y = render._cell_xy(cell)
    return frame[y : y + render.CARD_H, x : x + render.CARD_W]


def red_pixels(patch):
    return int((np.abs(patch.astype(int) - RED).sum(-1) < 60).sum())


def play(env, seed=0, steps=25):
    obs, info = env.reset(seed=seed)
    frames = [env.render()]
    for _ in range(steps):
        obs, r, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        frames.append(env.render())
        if term:
            break
    return frames


@pytest.mark.parametrize(
    "kwargs", [{}, {"jokers": 2, "scoring": "english"}, {"placement": "adjacent", "first_cell": "center"}]
)
@needs("PIL")
def test_rgb_array_frames_of_poker_squares(kwargs):
    env = gym.make("PokerSquares-v0", render_mode="rgb_array", **kwargs)
    frames = play(env)
    assert len(frames) == 26
    for f in frames:
        assert isinstance(f, np.ndarray) and f.dtype == np.uint8 and f.shape == render.FRAME_SHAPE
    assert not np.array_equal(frames[0], frames[1])  # a card appeared
    env.close()


@needs("PIL")
def test_example_board_shows_cards_lines_and_total():
    game = PokerSquaresGame()
    state = game.init(parse_cards(EXAMPLE))
    for cell in range(25):
        game.apply(state, cell)
    frame = render.draw_poker_squares(game, state)
    # Red suits are red, black suits are not; empty slots differ from cards.
    assert red_pixels(cell_patch(frame, 10)) > 30  # A♦
    assert red_pixels(cell_patch(frame, 0)) == 0  # 8♠
    # The picture depends on the total: the same board under English points differs only in the labels.
    english = render.draw_poker_squares(PokerSquaresGame(system="english"), state)
    assert np.array_equal(cell_patch(frame, 0), cell_patch(english, 0))
    assert not np.array_equal(frame[:, render.PANEL_X :], english[:, render.PANEL_X :])


@needs("PIL")
def test_column_captions_use_the_row_captions_names_unless_too_wide():
    """Before, a column said "Pair" where a row said "One pair" (which fits the column as "Two pair" does)."""
    from pokersquares_env.scoring import CATEGORY_KEYS, HandCategory

    if not hasattr(render._font(13), "path"):
        pytest.skip("no TrueType font here: Pillow's bitmap font has other widths")
    column = render.CARD_W + render.GAP - 2  # the width each column caption is fitted to
    assert set(render.SHORT_LABELS) == set(CATEGORY_KEYS)
    for key, short in render.SHORT_LABELS.items():
        full = HandCategory.from_key(key).label
        if short != full:  # shortened only where the row's name is too wide for the column
            assert render._font(13, False, True).getlength(full) > column, key
        assert render._fit_font(short, column, 13, bold=True).size >= 12, key  # legible in the column
    assert render.SHORT_LABELS["one_pair"] == "One pair"


@needs("PIL")
def test_every_card_has_its_own_picture():
    pics = {c: np.asarray(render.card_image(c)).tobytes() for c in range(54)}
    assert len(set(pics.values())) == 53 and pics[52] == pics[53]  # the two jokers look alike
    with pytest.raises(ValueError, match="card code 54"):
        render.card_image(54)


@needs("PIL")
def test_adjacency_marks_playable_cells():
    game = PokerSquaresGame(Rules(placement="adjacent", first_cell="center"))
    state = game.init(game.deal(np.random.default_rng(1)))
    game.apply(state, 12)
    marked = render.draw_poker_squares(game, state)
    plain = render.draw_poker_squares(game, state, legal=False)
    legal = game.legal_mask(state)
    for cell in range(25):
        differs = not np.array_equal(cell_patch(marked, cell), cell_patch(plain, cell))
        assert differs == bool(legal >> cell & 1), cell


@pytest.mark.parametrize("first_move", [12, 0])  # one placement then an illegal one; an illegal first move
@needs("PIL")
def test_a_game_ended_by_an_illegal_action_marks_no_cell_playable(first_move):
    """Once an illegal action ends the game the action mask is all zeros; the text and the frame used to mark the
    cells that were playable before it (8 cells "()" in the text)."""
    kwargs = dict(placement="adjacent", first_cell="center", illegal_action="penalty")
    text_env = gym.make("PokerSquares-v0", render_mode="ansi", **kwargs)
    frame_env = gym.make("PokerSquares-v0", render_mode="rgb_array", **kwargs)
    for env in (text_env, frame_env):
        env.reset(seed=0)
        if first_move == 12:
            env.step(12)
        *_, terminated, _, info = env.step(0)  # a1: not next to the centre
        assert terminated and not info["action_mask"].any()
    text = text_env.render()
    assert text.endswith("game over: ended by an illegal action") and "()" not in text
    game = text_env.unwrapped.game
    plain = render.draw_poker_squares(game, text_env.unwrapped.state, legal=False,
                                      notes=("game over: ended by an illegal action",))
    assert np.array_equal(frame_env.render(), plain)


@needs("PIL")
def test_poker_shuffle_frame_shows_remaining_cards():
    game = PokerSquaresGame()
    cards = parse_cards(EXAMPLE)
    board = [-1] * 25
    board[:10] = cards[:10]
    frame = render.draw_poker_shuffle(game, board, cards[10:])
    fewer = render.draw_poker_shuffle(game, board, cards[10:12])
    assert frame.shape == render.FRAME_SHAPE and frame.dtype == np.uint8
    assert not np.array_equal(frame[:, render.PANEL_X :], fewer[:, render.PANEL_X :])
    complete_only = render.draw_poker_shuffle(game, board, cards[10:], partial=False)
    assert not np.array_equal(complete_only, frame)  # by default incomplete lines score their rank groups (T♠ T♣)


def test_tile_frames_side_by_side():
    a = np.zeros((4, 5, 3), np.uint8)
    b = np.full((4, 5, 3), 255, np.uint8)
    out = render.tile_frames([a, b], gap=2)
    assert out.shape == (4, 12, 3) and (out[:, :5] == 0).all() and (out[:, 7:] == 255).all()
    with pytest.raises(ValueError, match="frame 1"):
        render.tile_frames([a, np.zeros((3, 5, 3), np.uint8)])


@needs("PIL")
def test_bad_inputs_named():
    with pytest.raises(ValueError, match="board cell 3 holds card code 99"):
        render.draw_board([-1, -1, -1, 99] + [-1] * 21)
    with pytest.raises(ValueError, match="render_mode='video'"):
        render.Renderer("video")
    with pytest.raises(ValueError, match="render_mode='rgb'"), pytest.warns(UserWarning):
        gym.make("PokerSquares-v0", render_mode="rgb")


@needs("PIL")
def test_human_mode_with_dummy_display(monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    env = gym.make("PokerSquares-v0", render_mode="human")
    env.reset(seed=0)
    assert env.render() is None
    env.step(0)
    renderer = env.unwrapped._renderer
    assert renderer._window.get_size() == (render.WIDTH, render.HEIGHT)
    env.close()


@needs("PIL", "pygame")
def test_human_envs_share_pygames_one_window_until_the_last_closes(monkeypatch):
    """Before, closing one human-mode env quit pygame's display under every other: the next step of another env
    raised "display Surface quit" after its card was placed, and retrying the move was refused as illegal."""
    import weakref

    import pygame

    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setattr(render, "_SHOWING", weakref.WeakSet())  # no window left open by another test counts
    a = gym.make("PokerSquares-v0", render_mode="human")
    b = gym.make("PokerSquares-v0", render_mode="human")
    soliter = gym.make("Soliter-v0", render_mode="human")  # frames of another size: the window is resized to each
    a.reset(seed=0)
    b.reset(seed=1)
    soliter.reset(seed=0)
    a.close()
    b.step(0)  # shown in the window a shared
    assert b.unwrapped.state.placements == [0] and pygame.display.get_init()
    soliter.step(int(soliter.unwrapped.game.legal_actions(soliter.unwrapped.state)[0]))
    b.step(1)
    assert pygame.display.get_surface().get_size() == (render.WIDTH, render.HEIGHT)
    pygame.display.quit()  # closed by someone else: the next frame opens the window again
    b.step(2)
    assert b.unwrapped.state.placements == [0, 1, 2] and pygame.display.get_init()
    b.close()
    assert pygame.display.get_init()  # the Soliter env still shows its frames there
    soliter.close()
    assert not pygame.display.get_init()  # the last one closes it


@pytest.mark.parametrize("driver", ["offscreen", "dummy"])
def test_human_mode_warns_when_sdl_falls_back_to_drawing_nowhere(monkeypatch, driver):
    """Where there is no display, pygame 2.6 falls back to its offscreen driver by itself: human mode then drew
    nowhere silently.  It now warns (an error would break Gymnasium's check_env, which opens every render mode);
    asked for with SDL_VIDEODRIVER, it is silent."""
    import warnings

    pygame = pytest.importorskip("pygame")
    monkeypatch.delenv("SDL_VIDEODRIVER", raising=False)
    monkeypatch.setattr(pygame.display, "set_mode", lambda size: pygame.Surface(size))  # opens no real window
    monkeypatch.setattr(pygame.display, "set_caption", lambda title: None)
    monkeypatch.setattr(pygame.display, "flip", lambda: None)
    monkeypatch.setattr(pygame.display, "get_driver", lambda: driver)
    env = gym.make("PokerSquares-v0", render_mode="human")
    with pytest.warns(RuntimeWarning, match=rf"found no display: SDL fell back to its '{driver}' video driver.*"
                                            rf"rgb_array.*SDL_VIDEODRIVER={driver}"):
        env.reset(seed=0)
    env.close()
    monkeypatch.undo()  # the real pygame, with the driver asked for
    monkeypatch.setenv("SDL_VIDEODRIVER", driver)
    env = gym.make("PokerSquares-v0", render_mode="human")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env.reset(seed=0)
    assert env.unwrapped._renderer._window.get_size() == (render.WIDTH, render.HEIGHT)
    env.close()


@pytest.mark.parametrize("make", [
    lambda: gym.make("PokerSquares-v0", render_mode="human"),
    lambda: gym.make("PokerShuffle-v0", render_mode="human"),
    lambda: __import__("pokersquares_env.multiplayer", fromlist=["x"]).parallel_env(num_players=2, render_mode="human"),
], ids=["PokerSquares-v0", "PokerShuffle-v0", "multiplayer"])
@needs("PIL", "pettingzoo")
def test_human_windows_run_at_the_metadata_render_fps(monkeypatch, make):
    """Gymnasium's human mode paces frames at metadata["render_fps"]; before, the windows ignored it (no wait)."""
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    env = make()
    env.reset(seed=0)
    env.render()
    base = getattr(env, "unwrapped", env)
    renderer = base._renderer
    assert renderer.fps == base.metadata["render_fps"] == 4
    ticks = []

    class Clock:  # pygame's Clock.tick is read-only: a stand-in records what it is asked to wait for
        def tick(self, fps):
            ticks.append(fps)

    renderer._clock = Clock()
    env.render()
    assert ticks == [4]
    env.close()


@pytest.mark.parametrize("module, extra", [("pygame", "human"), ("PIL", "render")])
@needs("PIL")
def test_missing_extra_is_named(monkeypatch, module, extra):
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail
    if module == "PIL":
        monkeypatch.setitem(sys.modules, "PIL.Image", None)
    with pytest.raises(ImportError, match=rf'pip install "pokersquares_env\[{extra}\]"'):
        render.Renderer("human" if module == "pygame" else "rgb_array")


@needs("PIL")
def test_a_frame_drawn_again_is_drawn_from_the_caches_alone():
    """Card pictures, fonts, text masks and the empty table are drawn once: a frame drawn again misses no cache and
    is the same picture (what keeps a frame at milliseconds for RecordVideo; the time itself is measured by
    ``python benchmarks/render_speed.py``, not asserted here)."""
    cached = render._CACHES
    game = PokerSquaresGame(Rules(jokers=1))
    state = game.init(game.deal(np.random.default_rng(2)))
    for cell in range(12):
        game.apply(state, cell)
    for cache in cached:
        cache.cache_clear()
    first = render.draw_poker_squares(game, state)
    assert all(cache.cache_info().misses > 0 for cache in cached)  # each cache serves this frame
    misses = [cache.cache_info().misses for cache in cached]
    again = render.draw_poker_squares(game, state)
    assert [cache.cache_info().misses for cache in cached] == misses
    np.testing.assert_array_equal(again, first)


@needs("PIL")
def test_poker_shuffle_env_frames():
    for mode in ("arrange", "swap"):
        env = gym.make("PokerShuffle-v0", mode=mode, render_mode="rgb_array")
        obs, info = env.reset(seed=0)
        frames = [env.render()]
        for _ in range(3):
            obs, r, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
            frames.append(env.render())
        for frame in frames:
            assert frame.dtype == np.uint8 and frame.shape == render.FRAME_SHAPE
        assert not np.array_equal(frames[0], frames[-1])
        env.close()


@needs("pettingzoo")
def test_multiplayer_env_frames():
    mp = importlib.import_module("pokersquares_env.multiplayer")  # the package's own module: never skipped
    h, w, _ = render.FRAME_SHAPE
    for players, shape in ((2, (h, 2 * w + 8, 3)), (3, (h, 3 * w + 16, 3)), (4, (2 * h + 8, 2 * w + 8, 3))):
        env = mp.parallel_env(num_players=players, render_mode="rgb_array")
        obs, infos = env.reset(seed=0)
        first = env.render()
        for step in range(2):
            env.step({a: 5 * step + i for i, a in enumerate(env.agents)})
        frame = env.render()
        assert frame.dtype == np.uint8 and frame.shape == shape
        assert not np.array_equal(first, frame)
        env.close()
    # Per-player frames: the same announced card, each player's own board.
    frames = render.multiplayer_frames(env.game, env.states, totals=env.totals, round=env.round)
    assert sorted(frames) == env.possible_agents
    for a, f in frames.items():
        assert f.shape == render.FRAME_SHAPE and f.dtype == np.uint8
        first_cell = env.possible_agents.index(a)  # step 0 put the first card there (not the last, outlined one)
        assert np.array_equal(cell_patch(f, first_cell), np.asarray(render.card_image(env.states[a].board[first_cell])))


@needs("PIL")
def test_docs_screenshot_exists():
    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "docs", "images", "board.png")
    if not os.path.exists(path):
        pytest.skip("docs screenshot not generated")
    from PIL import Image

    with Image.open(path) as im:
        assert im.size == (render.WIDTH, render.HEIGHT)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), filled=st.integers(0, 25), partial=st.booleans())
@needs("PIL")
def test_any_board_draws_deterministically(seed, filled, partial):
    rng = np.random.default_rng(seed)
    board = [-1] * 25
    cells = rng.permutation(25)[:filled]
    cards = rng.permutation(54)[:filled]
    for cell, code in zip(cells, cards, strict=True):
        board[int(cell)] = int(code)
    drawn = int(rng.integers(54))
    frame = render.draw_board(board, "english", partial=partial, drawn=drawn, cards_left=3)
    assert frame.shape == render.FRAME_SHAPE and frame.dtype == np.uint8
    assert np.array_equal(frame, render.draw_board(list(board), "english", partial=partial, drawn=drawn, cards_left=3))
    empty = np.asarray(render._empty_table())
    for cell in range(25):
        patch = cell_patch(frame, cell)
        if board[cell] == -1:
            assert np.array_equal(patch, cell_patch(empty, cell))
        else:
            assert np.array_equal(patch, np.asarray(render.card_image(board[cell])))


def test_record_video_writes_one_clip_per_episode(tmp_path):
    """Gymnasium's RecordVideo (moviepy, extra ``video``) records our rgb_array frames: 26 frames a game."""
    pytest.importorskip("moviepy")
    from gymnasium.wrappers import RecordVideo
    from moviepy import VideoFileClip

    videos = tmp_path / "videos"  # a new folder: RecordVideo warns that it overwrites an existing one
    env = RecordVideo(gym.make("PokerSquares-v0", render_mode="rgb_array"), str(videos),
                      episode_trigger=lambda episode: True, disable_logger=True)
    for episode in range(2):
        _, info = env.reset(seed=episode)
        done = False
        while not done:
            _, _, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
            done = terminated or truncated
    env.close()
    clips = sorted(p.name for p in videos.glob("*.mp4"))
    assert clips == ["rl-video-episode-0.mp4", "rl-video-episode-1.mp4"]
    with VideoFileClip(str(videos / clips[0])) as clip:
        assert clip.fps == env.metadata["render_fps"] == 4
        # the reset frame and one per placement: counted, since a duration within 0.3 s also took 25 or 27 frames
        assert clip.reader.n_frames == 26 and sum(1 for _ in clip.iter_frames()) == 26
        assert clip.duration == pytest.approx(26 / 4, abs=0.1)
        assert clip.size[0] > 100 and clip.size[1] > 100


def _adapters():
    """The four adapters, made by a function of their keyword options."""
    from pokersquares_env.multiplayer import PokerSquaresParallelEnv

    return {
        "PokerSquares-v0": lambda **kw: gym.make("PokerSquares-v0", **kw).unwrapped,
        "PokerShuffle-v0": lambda **kw: gym.make("PokerShuffle-v0", **kw).unwrapped,
        "Soliter-v0": lambda **kw: gym.make("Soliter-v0", **kw).unwrapped,
        "multiplayer": lambda **kw: PokerSquaresParallelEnv(**kw),
    }


@pytest.mark.filterwarnings(  # gym.make warns of an unknown render_mode before the env refuses it
    "ignore:.*render_mode='bogus' that is not in the possible render_modes:UserWarning")
@pytest.mark.parametrize("name", ["PokerSquares-v0", "PokerShuffle-v0", "Soliter-v0", "multiplayer"])
@needs("pettingzoo")
def test_every_adapter_refuses_bad_shared_options_alike(name):
    make = _adapters()[name]
    with pytest.raises(ValueError, match=r"illegal_action='ignore': expected 'raise' or 'penalty'"):
        make(illegal_action="ignore")
    with pytest.raises(ValueError, match=r"illegal_action=\['raise'\]: expected"):
        make(illegal_action=["raise"])
    with pytest.raises(TypeError, match=r"illegal_penalty='-10': expected a number"):
        make(illegal_penalty="-10")
    with pytest.raises(TypeError, match=r"illegal_penalty=True: expected a number"):
        make(illegal_penalty=True)
    with pytest.raises(ValueError, match=r"render_mode='bogus': expected None or one of \['ansi', 'rgb_array'"):
        make(render_mode="bogus")
    for bad in (float("nan"), float("inf"), -np.inf):
        with pytest.raises(ValueError, match=rf"illegal_penalty={bad!r}: expected a finite number"):
            make(illegal_penalty=bad)
    assert make(illegal_penalty=np.float32(-2.5)).illegal_penalty == -2.5  # numpy numbers are numbers
    if name != "Soliter-v0" and name != "multiplayer":
        with pytest.raises(ValueError, match=r"reward_mode='dense': expected 'line' or 'terminal'"):
            make(reward_mode="dense")
        for bad in (float("inf"), float("nan"), 0, -1):
            with pytest.raises(ValueError, match=rf"reward_scale={bad!r}: expected a positive finite number"):
                make(reward_scale=bad)
        assert make(reward_scale=np.float32(2)).reward_scale == 2.0
    if name == "Soliter-v0":
        with pytest.raises(ValueError, match=r"reward_win=nan: expected a finite number"):
            make(reward_win=float("nan"))
    if name == "multiplayer":
        with pytest.raises(ValueError, match=r"target=inf: expected a positive finite number"):
            make(rounds=None, target=float("inf"))
        assert make(rounds=None, target=np.int64(200)).target == 200


@pytest.mark.parametrize("name", ["PokerSquares-v0", "PokerShuffle-v0", "Soliter-v0", "multiplayer"])
@needs("pettingzoo")
def test_render_needs_a_mode_and_a_reset(name):
    make = _adapters()[name]
    with pytest.warns(UserWarning, match=r"without a render_mode; pass render_mode='ansi' or 'rgb_array'"):
        assert make().render() is None
    env = make(render_mode="ansi")
    with pytest.raises(gym.error.ResetNeeded, match=r"call reset\(\) before render\(\)"):
        env.render()
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and text.strip()


@pytest.mark.parametrize("name, keys", [("PokerSquares-v0", "'deck'"), ("PokerShuffle-v0", "'cards'"),
                                        ("Soliter-v0", "'deal' and 'state'")])
def test_reset_options_must_be_a_dict_of_known_keys(name, keys):
    env = _adapters()[name]()
    with pytest.raises(ValueError, match=rf"unknown reset options \['dek'\]: expected only {keys}"):
        env.reset(seed=0, options={"dek": [1, 2]})
    with pytest.raises(TypeError, match=r"options=\['deck'\]: expected None or a dict"):
        env.reset(seed=0, options=["deck"])
    obs, _ = env.reset(seed=0, options={})
    again, _ = env.reset(seed=0, options=None)
    assert np.array_equal(obs, again)


@needs("PIL")
def test_vector_env_rgb_frames_are_the_single_envs_and_sb3_tiles_them():
    from pokersquares_env.env import PokerSquaresEnv
    from pokersquares_env.vector import PokerSquaresVectorEnv

    venv = PokerSquaresVectorEnv(2, backend="numpy", render_mode="rgb_array", jokers=1)
    venv.reset(seed=4)
    venv.step(np.array([6, 18]))
    frames = venv.render()
    assert len(frames) == 2 and all(f.shape == render.FRAME_SHAPE and f.dtype == np.uint8 for f in frames)
    for i, frame in enumerate(frames):
        single = PokerSquaresEnv(render_mode="rgb_array", jokers=1)
        single.reset(options={"deck": list(venv.game_state(i).deck)})
        single.step([6, 18][i])
        np.testing.assert_array_equal(frame, single.render())
    assert not np.array_equal(frames[0], frames[1])
    pytest.importorskip("stable_baselines3")
    from pokersquares_env.sb3 import PokerSquaresSB3VecEnv

    sb3 = PokerSquaresSB3VecEnv(num_envs=2, seed=4, render_mode="rgb_array", jokers=1)
    sb3.reset()
    assert sb3.render_mode == "rgb_array"
    tiled = sb3.render()  # SB3's VecEnv.render tiles get_images(): for two frames, one above the other
    height, width, _ = render.FRAME_SHAPE
    assert tiled.shape == (2 * height, width, 3)
    first, second = sb3.venv.render()
    np.testing.assert_array_equal(tiled[:height], first)
    np.testing.assert_array_equal(tiled[height:], second)
    assert PokerSquaresSB3VecEnv(num_envs=2, seed=4).get_images() == [None, None]  # no render_mode, no frames


@pytest.mark.parametrize("name", ["PokerSquares-v0", "PokerShuffle-v0"])
@needs("PIL")
def test_a_human_mode_env_can_be_copied_and_pickled_after_a_reset(monkeypatch, name):
    """Before, the renderer kept the pygame module: deepcopy and pickle failed with "cannot pickle 'module' object"."""
    import copy
    import pickle

    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    env = gym.make(name, render_mode="human")
    env.reset(seed=0)
    size = env.unwrapped._renderer._window.get_size()
    for other in (copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        renderer = other.unwrapped._renderer
        assert renderer._window is None and renderer.render_mode == "human"  # no window until it shows a frame
        assert other.render() is None  # opens its window again
        assert renderer._window.get_size() == size
        np.testing.assert_array_equal(other.unwrapped.state.deck, env.unwrapped.state.deck)
        other.close()
    env.close()


@pytest.mark.parametrize("fps", ["100.5", "101", "105"])
def test_replay_refuses_a_frame_rate_above_the_documented_100(tmp_path, capsys, fps):
    """``--fps`` is documented as 0.001526 to 100, another value refused.  Before, 100 to 105.26 were taken: their
    delay of 1000/fps ms rounds to 10 ms, so the GIF played at 100 frames per second, not at the rate asked for."""
    pytest.importorskip("PIL")
    from pokersquares_env.cli import main
    from pokersquares_env.records import GameRecord, save_record

    game = PokerSquaresGame()
    state = game.init(game.deal(np.random.default_rng(3)))
    while not game.is_terminal(state):
        game.apply(state, game.legal_cells(state)[0])
    save_record(GameRecord.from_game(game, state, seed=3), tmp_path / "g.json")
    assert main(["replay", str(tmp_path / "g.json"), "--gif", str(tmp_path / "a.gif"), "--fps", fps]) == 2
    captured = capsys.readouterr()
    assert captured.err == (f"pokersquares replay: --fps {float(fps):g}: a frame delay of {1000 / float(fps):.4g} ms: "
                            "expected a positive finite number of frames per second from 0.001526 to 100 (a frame "
                            "delay of 10 ms to 655.35 s, what a GIF holds)\n") and captured.out == ""
    assert sorted(os.listdir(tmp_path)) == ["g.json"]


@needs("PIL")
def test_gif_frame_rates_are_the_documented_range_exactly(tmp_path):
    from pokersquares_env.records import GameRecord
    from pokersquares_env.replay import MAX_FPS, MIN_FPS, _fps_problem, save_gif

    assert (MIN_FPS, MAX_FPS) == (1000 / 655_350, 100)
    for fps in (MIN_FPS, 0.001526, 2, 2.0, np.float32(4), 99.99, 100, MAX_FPS):
        assert _fps_problem(fps) is None, fps
    # just outside the range, though 1000/fps ms rounds to a delay a GIF holds (10 ms, 655350 ms)
    for fps in (MAX_FPS * (1 + 1e-9), 100.001, 105.26, MIN_FPS * (1 - 1e-7), 0.0015259):
        assert _fps_problem(fps).startswith(f"a frame delay of {1000 / fps:.4g} ms: expected"), fps
    game = PokerSquaresGame()
    state = game.init(game.deal(np.random.default_rng(3)))
    with pytest.raises(ValueError, match=r"^fps=101: a frame delay of 9.901 ms: expected .* to 100 "):
        save_gif(GameRecord.from_game(game, state), str(tmp_path / "x.gif"), 101)
    assert not (tmp_path / "x.gif").exists()


@pytest.mark.parametrize("name", ["PokerSquares-v0", "PokerShuffle-v0", "multiplayer"])
def test_human_mode_without_pygame_names_the_extra_when_the_env_is_made(monkeypatch, name):
    """The README says so; before, these three were made without a word and named the extra at the first reset
    (Soliter-v0 already did it when made)."""
    pytest.importorskip("PIL")
    from pokersquares_env.multiplayer import parallel_env

    monkeypatch.setitem(sys.modules, "pygame", None)  # makes `import pygame` fail
    with pytest.raises(ImportError, match=r'^render_mode="human" needs pygame: pip install "pokersquares_env\[human\]"$'):
        if name == "multiplayer":
            parallel_env(num_players=2, render_mode="human")
        else:
            gym.make(name, render_mode="human")


def test_text_boards_mark_a_fixed_first_cell_before_the_first_card():
    """An audit found that the ansi board marked playable cells only under adjacent placement, so a fixed first cell
    (free placement after it) showed every cell alike though only one was playable; the frames and the terminal game
    outlined it.  All of them now ask Rules.restricts."""
    from pokersquares_env.shuffle.env import PokerShuffleEnv
    from pokersquares_env.vector import PokerSquaresVectorEnv

    c3 = "3   ..   ..   ()   ..   .."
    env = gym.make("PokerSquares-v0", render_mode="ansi", first_cell=12)
    env.reset(seed=3)
    assert c3 in env.render() and env.render().count("()") == 1
    env.step(12)
    assert "()" not in env.render()  # free placement afterwards: every empty cell is playable, none is marked
    vec = PokerSquaresVectorEnv(2, render_mode="ansi", first_cell=12)
    vec.reset(seed=3)
    assert all(c3 in text and text.count("()") == 1 for text in vec.render())
    shuffle = PokerShuffleEnv(render_mode="ansi", first_cell=12)
    shuffle.reset(seed=1)
    assert c3 in shuffle.render() and shuffle.render().count("()") == 1
    assert Rules(first_cell=12).restricts(0) and not Rules(first_cell=12).restricts(1)
    assert Rules(placement="adjacent").restricts(5) and not Rules().restricts(0)


@needs("PIL")
def test_frames_are_writable_arrays_the_caller_owns():
    """An audit found rgb_array frames read-only (np.asarray of a Pillow image), unlike Gymnasium's own frames: a
    caller drawing on one got "assignment destination is read-only"."""
    env = gym.make("PokerSquares-v0", render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.flags.writeable
    before = env.render().copy()
    frame[:10, :10] = 255 - frame[:10, :10]  # no error, and the next frame is not drawn over
    assert np.array_equal(env.render(), before)


def _differs(a, b, box):
    x0, y0, x1, y1 = box
    return bool((a[y0:y1, x0:x1] != b[y0:y1, x0:x1]).any())


@needs("PIL")
def test_the_grid_layout_is_row_major_at_fixed_coordinates():
    """Cell 1 (b1) is the second card of the top row, at fixed pixels (the helpers above read positions from
    ``_cell_xy`` itself, so a transposed layout would cancel out there); a card at b1 changes that patch only."""
    x0, y0 = render.GRID_X, render.GRID_Y
    assert render._cell_xy(1) == (x0 + render.CARD_W + render.GAP, y0)
    assert render._cell_xy(5) == (x0, y0 + render.CARD_H + render.GAP)
    empty = render.draw_board([-1] * 25)
    board = [-1] * 25
    board[1] = parse_cards("Ah")[0]
    one = render.draw_board(board)
    b1 = (x0 + render.CARD_W + render.GAP, y0, x0 + 2 * render.CARD_W + render.GAP, y0 + render.CARD_H)
    a2 = (x0, y0 + render.CARD_H + render.GAP, x0 + render.CARD_W, y0 + 2 * render.CARD_H + render.GAP)
    assert _differs(one, empty, b1) and not _differs(one, empty, a2)


@needs("PIL")
def test_black_cards_have_no_red_and_red_cards_do():
    for code in range(52):
        pixels = red_pixels(np.array(render.card_image(code)))
        assert (pixels > 0) == (code // 13 in (1, 2)), code


@needs("PIL")
def test_playable_and_last_move_outlines_sit_on_their_own_cells():
    """Every playable cell is outlined, the 25th too; the last card placed gets the LAST colour around its own cell
    and nowhere else."""
    empty = render.draw_board([-1] * 25)
    outlined = render.draw_board([-1] * 25, playable=[1] * 25)
    for cell in range(25):
        x, y = render._cell_xy(cell)
        assert _differs(outlined, empty, (x, y, x + render.CARD_W, y + render.CARD_H)), cell
    board = [-1] * 25
    board[7] = parse_cards("Ks")[0]
    plain = render.draw_board(board)
    marked = render.draw_board(board, last_cell=7)
    diff = np.argwhere((plain != marked).any(-1))
    x, y = render._cell_xy(7)
    assert diff[:, 1].min() >= x - 2 and diff[:, 1].max() <= x + render.CARD_W + 1
    assert diff[:, 0].min() >= y - 2 and diff[:, 0].max() <= y + render.CARD_H + 1
    assert tuple(marked[y + render.CARD_H // 2, x - 1]) == render.LAST


@needs("PIL")
def test_column_captions_sit_under_their_own_column_and_a_win_is_gold():
    """A complete column a shows its caption under column a, not under b; a winning full board says WON in gold,
    a losing one does not."""
    cards = parse_cards(EXAMPLE)
    board = [-1] * 25
    for r in range(5):
        board[5 * r] = cards[5 * r]  # column a only: 8♠ 9♣ A♦ A♥ 3♠ (a pair)
    empty = render.draw_board([-1] * 25)
    col_a = render.draw_board(board)
    y = render.GRID_Y + render.GRID_H + 2
    xa, _ = render._cell_xy(0)
    xb, _ = render._cell_xy(1)
    assert _differs(col_a, empty, (xa, y, xa + render.CARD_W, y + 36))
    assert not _differs(col_a, empty, (xb + 8, y, xb + render.CARD_W - 8, y + 36))
    gold = np.array(render.GOLD)

    def gold_in_panel_rows(frame):  # the "win at" line: under the total (64 px) and the system's name (20 px)
        panel = frame[render.TITLE_H + 14 + 84:render.TITLE_H + 14 + 104, render.PANEL_X:]
        return int((np.abs(panel.astype(int) - gold).sum(-1) < 30).sum())

    won = render.draw_board(cards, "american")  # 302 points: over 100
    american = PokerSquaresGame().system
    lost = render.draw_board(cards, american.__class__("hard", american.points, win_threshold=1000))
    assert gold_in_panel_rows(won) > 0 and gold_in_panel_rows(lost) == 0


@needs("PIL")
def test_side_panel_and_flags_show_what_they_are_given():
    """The 2 of clubs (code 0) is a card to place, not an empty slot; playable flags are read cell by cell (as the
    same 25-bit int); a row of four cards holding no rank group has no caption yet; a fresh game shows 24 cards
    after the drawn one."""
    empty = [-1] * 25
    x0 = render.PANEL_X
    panel = (x0, render.TITLE_H, render.WIDTH, render.TITLE_H + 250)
    assert _differs(render.draw_board(empty, drawn=0, cards_left=24), render.draw_board(empty, drawn=None,
                                                                                          cards_left=24), panel)
    flags = [0] * 25
    flags[3] = flags[17] = 1
    np.testing.assert_array_equal(render.draw_board(empty, playable=flags),
                                  render.draw_board(empty, playable=(1 << 3) | (1 << 17)))
    four = list(empty)
    four[:4] = parse_cards("2s 5h 9d Kc")  # row 1, four cards, no pair
    _, y = render._cell_xy(0)
    label = (render.ROW_LABEL_X, y, render.ROW_LABEL_X + render.ROW_LABEL_W, y + render.CARD_H)
    assert not _differs(render.draw_board(four), render.draw_board(empty), label)
    game = PokerSquaresGame()
    state = game.init(game.deal(np.random.default_rng(0)))
    np.testing.assert_array_equal(
        render.draw_poker_squares(game, state, title="t"),
        render.draw_board(state.board, game.system, drawn=state.card, cards_left=24, playable=0, title="t"))


@needs("PIL")
def test_poker_shuffle_panel_shows_up_to_28_mini_cards_four_a_row():
    empty = [-1] * 25
    cards = list(range(30))
    px, y = render.PANEL_X + 6, render.TITLE_H + 14 + 20
    full = render.draw_board(empty, remaining=cards[:26])
    fewer = render.draw_board(empty, remaining=cards[:25])  # the same seven rows: the panel below stays put
    x = px + render.MINI_W + 4
    slot = (x, y + 6 * (render.MINI_H + 4), x + render.MINI_W, y + 6 * (render.MINI_H + 4) + render.MINI_H)
    assert _differs(full, fewer, slot)  # the 26th card: the second of the seventh row of four
    five = render.draw_board(empty, remaining=cards[:5])
    four = render.draw_board(empty, remaining=cards[:4])
    second_row_first = (px, y + render.MINI_H + 4, px + render.MINI_W, y + 2 * render.MINI_H + 4)
    assert _differs(five, four, second_row_first)


@needs("PIL")
def test_a_multiplayer_match_that_ended_outlines_no_cell():
    from pokersquares_env.core import Rules

    game = PokerSquaresGame(Rules(placement="adjacent", first_cell="center"))
    deck = game.deal(np.random.default_rng(1))
    states = {"a": game.init(deck), "b": game.init(deck)}
    game.apply(states["a"], 12)
    ended = render.multiplayer_frames(game, states, ended="b played an illegal cell")
    for name, state in states.items():
        plain = render.draw_poker_squares(game, state, legal=False, title=f"{name} · {game.system.name}",
                                          notes=["b played an illegal cell"])
        np.testing.assert_array_equal(ended[name], plain)


# ---- pixels, text and options pinned by a mutation audit ---------------------------------------------------------


def _shows(frame, xy, text, font, fill, anchor="la"):
    """Whether ``text`` in ``font`` is drawn at ``xy`` in ``fill``: every fully inked pixel of its mask is ``fill``."""
    mask, dx, dy = render._text_mask(text, font, anchor)
    ink = np.asarray(mask) == 255
    x, y = int(round(xy[0])) + dx, int(round(xy[1])) + dy
    return bool((frame[y : y + ink.shape[0], x : x + ink.shape[1]][ink] == fill).all())


def _has(patch, colour, tol=0):
    return int((np.abs(patch.astype(int) - np.array(colour)).sum(-1) <= tol).sum())


@needs("PIL")
def test_the_empty_table_has_25_outlined_slots_at_fixed_pixels_a_title_bar_and_a_divider():
    empty = render.draw_board([-1] * 25)
    for cell in range(25):
        r, c = divmod(cell, 5)
        x, y = 30 + 70 * c, 56 + 96 * r  # 64x90 slots 6 px apart, the grid's corner at (30, 56)
        assert tuple(empty[y + 45, x]) == render.SLOT_EDGE and tuple(empty[y + 45, x - 1]) == render.FELT, cell
        assert tuple(empty[y, x + 32]) == render.SLOT_EDGE and tuple(empty[y - 1, x + 32]) == render.FELT, cell
        assert tuple(empty[y + 45, x + 32]) == render.SLOT, cell
    assert tuple(empty[2, render.WIDTH // 2]) == render.FELT_DARK  # the title bar
    assert tuple(empty[render.TITLE_H + 2, render.WIDTH // 2]) == render.FELT
    assert tuple(empty[400, render.PANEL_X - 4]) == render.FELT_DARK  # the panel's divider


@needs("PIL")
def test_coordinates_name_their_own_column_and_row():
    empty = render.draw_board([-1] * 25)
    font = render._font(15, bold=True)
    for c in range(5):
        x, _ = render._cell_xy(c)
        xy = (x + render.CARD_W / 2, render.GRID_Y - 11)
        assert _shows(empty, xy, "abcde"[c], font, render.DIM, "mm"), c
        assert not _shows(empty, xy, "abcde"[4 - c] if c != 2 else "a", font, render.DIM, "mm"), c
    for r in range(5):
        _, y = render._cell_xy(5 * r)
        xy = (render.GRID_X / 2, y + render.CARD_H / 2)
        assert _shows(empty, xy, str(r + 1), font, render.DIM, "mm"), r
        assert not _shows(empty, xy, str(r if r else 2), font, render.DIM, "mm"), r


@needs("PIL")
def test_card_pictures_show_face_corner_indexes_and_centre_marks():
    with pytest.raises(ValueError, match="card code -1 out of range"):
        render.card_image(-1)
    two, ace, king = (np.array(render.card_image(c)) for c in parse_cards("2s As Ks"))
    assert tuple(two[10, 32]) == render.CARD_FACE  # blank face above the centre suit
    ink = lambda p: _has(p, render.BLACK, 60)  # noqa: E731
    # The corner index, top-left and again upside down bottom-right.
    for card in (two, ace, king):
        top_left, bottom_right = card[:40, :18].astype(int), card[-40:, -18:][::-1, ::-1].astype(int)
        assert ink(card[-40:, -18:]) > 20 and np.abs(top_left - bottom_right).mean() < 4
    # Ace: a bigger centre suit than a two's; a king: its letter framed (the frame's top edge 26 px above the centre).
    centre = (slice(22, 68), slice(14, 50))
    assert ink(ace[centre]) > ink(two[centre]) + 50
    assert ink(king[19:21, 20:44]) > 20 and ink(ace[19:21, 20:44]) == 0
    joker = np.array(render.card_image(52))
    assert _has(joker, render.JOKER, 30) > 100 and _has(joker[35:50, 25:40], render.GOLD, 30) > 5  # purple, gold star
    on_blue = np.array(render.card_image(0, background=(0, 0, 255)))
    assert _has(on_blue[:2, :2], (0, 0, 255), 30) and _has(two[:2, :2], render.FELT, 30)


@needs("PIL")
def test_the_ten_shows_10_in_its_corner():
    if not hasattr(render._font(13), "path"):
        pytest.skip("no TrueType font here")
    ten = np.array(render.card_image(parse_cards("Ts")[0]))
    columns = (np.abs(ten[4:16, 2:22].astype(int) - render.BLACK).sum(-1) < 200).any(0)
    runs = int(columns[0]) + int((columns[1:] & ~columns[:-1]).sum())
    assert runs == 2  # "1" and "0", not one "T"


@needs("PIL")
def test_bad_boards_and_flags_are_named():
    with pytest.raises(ValueError, match=r"board has 24 cells: expected 25"):
        render.draw_board([-1] * 24)
    with pytest.raises(ValueError, match="board cell 0 holds card code 54"):
        render.draw_board([54] + [-1] * 24)
    with pytest.raises(ValueError, match=r"playable has shape \(24,\)"):
        render.draw_board([-1] * 25, playable=[1] * 24)


@needs("PIL")
def test_outlines_colour_only_empty_playable_cells_and_the_last_card_placed():
    empty = [-1] * 25
    flags = [0] * 25
    flags[24] = 1
    e5 = render.draw_board(empty, playable=1 << 24)
    np.testing.assert_array_equal(e5, render.draw_board(empty, playable=flags))
    x, y = render._cell_xy(24)
    assert tuple(e5[y + 45, x + 1]) == render.PLAYABLE and tuple(e5[y + 45, x + 32]) == render.PLAYABLE  # edge, dot
    board = list(empty)
    board[0] = board[7] = parse_cards("Ks")[0]
    outlined = render.draw_board(board, playable=[1] * 25)
    for cell in (0, 7):
        assert np.array_equal(cell_patch(outlined, cell), np.asarray(render.card_image(board[cell]))), cell
    np.testing.assert_array_equal(render.draw_board(board, last_cell=12), render.draw_board(board))  # an empty cell
    assert not np.array_equal(render.draw_board(board, last_cell=0), render.draw_board(board))


@needs("PIL")
def test_line_captions_are_grey_until_complete_and_a_partial_line_without_points_shows_none():
    empty = [-1] * 25
    cards = parse_cards(EXAMPLE)
    _, y = render._cell_xy(0)
    row1 = (slice(y, y + render.CARD_H), slice(render.ROW_LABEL_X, render.ROW_LABEL_X + render.ROW_LABEL_W))
    xa, _ = render._cell_xy(0)
    ya = render.GRID_Y + render.GRID_H + 2
    col_a = (slice(ya, ya + 36), slice(xa, xa + render.CARD_W))
    pair = list(empty)
    pair[0], pair[1], pair[5] = parse_cards("Ts Tc 9c")  # row 1: a pair of two cards; column a: two cards, no pair
    pair[10] = parse_cards("9d")[0]  # column a: 9 9 (a pair) now
    frame = render.draw_board(pair)
    assert _has(frame[row1], render.DIM) > 0 and _has(frame[row1], render.TEXT) == 0
    assert _has(frame[col_a], render.DIM) > 0 and _has(frame[col_a], render.TEXT) == 0
    full = render.draw_board(cards)
    assert _has(full[row1], render.TEXT) > 0 and _has(full[row1], render.GOLD) > 0
    assert _has(full[col_a], render.TEXT) > 0 and _has(full[col_a], render.GOLD) > 0
    two = list(empty)
    two[0], two[1] = parse_cards("2s 9h")  # no rank group: a partial check scores 0, and no "0 pts" is shown
    partial, plain = render.draw_board(two, partial=True), render.draw_board(two)
    assert np.array_equal(partial[row1], plain[row1]) and np.array_equal(partial[col_a], plain[col_a])


@needs("PIL")
def test_title_and_placed_count():
    board = [-1] * 25
    board[3] = 0  # the 2 of clubs is a card
    frame = render.draw_board(board)
    xy, font = (render.WIDTH - 12, render.TITLE_H / 2), render._font(14)
    assert _shows(frame, xy, "1/25 placed", font, render.DIM, "rm")
    assert not _shows(frame, xy, "1/24 placed", font, render.DIM, "rm")
    assert not _shows(frame, xy, "0/25 placed", font, render.DIM, "rm")
    bar = (slice(0, render.TITLE_H), slice(0, 400))
    assert not np.array_equal(render.draw_board(board, title="Mine")[bar], frame[bar])
    cards = parse_cards(EXAMPLE)
    cards[24] = -1  # 24 cards, over 100 points: not won yet
    gold = np.array(render.GOLD)
    line = render.draw_board(cards)[render.TITLE_H + 98 : render.TITLE_H + 118, render.PANEL_X :]
    assert int((np.abs(line.astype(int) - gold).sum(-1) < 30).sum()) == 0


@needs("PIL")
def test_side_panel_card_to_place_count_total_and_notes():
    empty = [-1] * 25
    px, y = render.PANEL_X + 6, render.TITLE_H + 14 + 20
    np.testing.assert_array_equal(render.draw_board(empty, drawn=-1, cards_left=0),
                                  render.draw_board(empty, drawn=None, cards_left=0))  # "board full"
    frame = render.draw_board(empty, drawn=17, cards_left=24)
    x = px + (render.PANEL_W - 12 - render.BIG_W) // 2
    np.testing.assert_array_equal(frame[y : y + render.BIG_H, x : x + render.BIG_W],
                                  np.asarray(render.card_image(17, render.BIG_W, render.BIG_H)))
    after = (px, y + render.BIG_H + 10)
    small = render._font(13)
    assert _shows(frame, after, "Cards after it: 24", small, render.DIM)
    assert not _shows(frame, after, "Cards after it: 25", small, render.DIM)
    # The total sits at the same place whatever is above it, in gold.
    below = (slice(render.TITLE_H + 250, None), slice(render.PANEL_X, None))
    np.testing.assert_array_equal(frame[below], render.draw_board(empty, remaining=[1, 2, 3, 4])[below])
    assert _shows(frame, (px, render.TITLE_H + 250 + 16), "0", render._font(40, True), render.GOLD)
    # Every note while it fits, none cut off at the bottom.
    two = render.draw_board(empty, notes=["first", "second"])
    assert not np.array_equal(two, render.draw_board(empty, notes=["first"]))
    plain = render.draw_board(empty, drawn=17, cards_left=24)
    many = render.draw_board(empty, drawn=17, cards_left=24, notes=[f"note {i}" for i in range(40)])
    drawn_rows = np.flatnonzero((many != plain).any(axis=(1, 2)))
    assert drawn_rows.max() < render.HEIGHT - 12  # the last note that fits ends above the bottom edge


@needs("PIL")
def test_poker_shuffle_panel_counts_every_card_and_draws_the_28th():
    empty = [-1] * 25
    cards = list(range(30))
    px, y = render.PANEL_X + 6, render.TITLE_H + 14 + 20
    below = (slice(y + 7 * (render.MINI_H + 4), None), slice(render.PANEL_X, None))
    top = (slice(render.TITLE_H, y), slice(render.PANEL_X, None))
    f25, f28, f30 = (render.draw_board(empty, remaining=cards[:n]) for n in (25, 28, 30))
    np.testing.assert_array_equal(f25[below], f28[below])  # seven rows of four for both
    x = px + 3 * (render.MINI_W + 4)
    slot = (slice(y + 6 * (render.MINI_H + 4), y + 6 * (render.MINI_H + 4) + render.MINI_H), slice(x, x + render.MINI_W))
    np.testing.assert_array_equal(f28[slot], np.asarray(render.card_image(27, render.MINI_W, render.MINI_H)))
    assert not np.array_equal(f28[top], f30[top])  # "Dealt cards to place: 30", though 28 are drawn
    np.testing.assert_array_equal(f28[y:], f30[y:])


@needs("PIL")
def test_draw_poker_shuffle_options():
    game = PokerSquaresGame()
    cards = parse_cards(EXAMPLE)
    board = [-1] * 25
    board[:10] = cards[:10]
    with pytest.raises(ValueError, match="mode='bogus'"):
        render.draw_poker_shuffle(game, board, mode="bogus")
    with pytest.raises(ValueError, match="placed has 2 flags for 3 cards"):
        render.draw_poker_shuffle(game, board, cards=cards[10:13], placed=[True, False])
    np.testing.assert_array_equal(render.draw_poker_shuffle(game, board, cards=cards[10:13], placed=[True, False, False]),
                                  render.draw_poker_shuffle(game, board, cards[11:13]))
    swap = render.draw_poker_shuffle(game, board, cards[10:], mode="swap", budget_left=3)
    np.testing.assert_array_equal(swap, render.draw_board(board, game.system, partial=True, notes=["swaps left: 3"],
                                                          title=f"Poker Shuffle (swap) · {game.system.name}"))
    bar = (slice(0, render.TITLE_H), slice(0, 400))
    assert not np.array_equal(render.draw_poker_shuffle(game, board, title="Mine")[bar],
                              render.draw_poker_shuffle(game, board)[bar])


@needs("PIL")
def test_multiplayer_frames_show_round_and_match_points():
    game = PokerSquaresGame()
    deck = game.deal(np.random.default_rng(1))
    states = {"a": game.init(deck), "b": game.init(deck)}
    frames = render.multiplayer_frames(game, states, totals={"a": 10}, match_points={"a": 2}, round=2)
    np.testing.assert_array_equal(frames["a"], render.draw_poker_squares(
        game, states["a"], title=f"a · round 2 · {game.system.name}", notes=["match total: 10", "match points: 2"]))


@needs("PIL")
def test_tile_frames_and_renderer_check_their_frames():
    a = np.zeros((4, 5, 3), np.uint8)
    out = render.tile_frames([a, a], gap=2)
    assert (out[:, 5:7] == render.FELT_DARK).all()
    assert render.tile_frames([a, a], columns=0, gap=2).shape == (10, 5, 3)  # at least one column
    with pytest.raises(ValueError, match="at least one frame"):
        render.tile_frames([])
    with pytest.raises(ValueError, match="frame 1 has shape .* dtype float64"):
        render.tile_frames([a, a.astype(float)])
    renderer = render.Renderer("rgb_array")
    for bad in (np.zeros((4, 5, 4), np.uint8), np.zeros((4, 5, 3))):
        with pytest.raises(ValueError, match="expected HxWx3 uint8"):
            renderer.show(bad)


def test_human_window_takes_the_title_and_follows_the_frame_size(monkeypatch):
    pygame = pytest.importorskip("pygame")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    renderer = render.Renderer("human", "My table")
    renderer.show(np.zeros((40, 60, 3), np.uint8))
    assert pygame.display.get_caption()[0] == "My table" and renderer._window.get_size() == (60, 40)
    renderer.show(np.zeros((30, 20, 3), np.uint8))
    assert renderer._window.get_size() == (20, 30)
    renderer.close()


@needs("PIL")
def test_a_complete_row_shows_its_hand_and_points_beside_it():
    frame = render.draw_board(parse_cards(EXAMPLE))  # row 1: 8♠ Q♠ T♠ 4♠ 2♠, a flush (20 American points)
    _, y = render._cell_xy(0)
    name = render._fit_font("Flush", render.ROW_LABEL_W, 15, bold=True, condensed=False)
    assert _shows(frame, (render.ROW_LABEL_X, y + render.CARD_H / 2 - 3), "Flush", name, render.TEXT, "ls")
    points = (render.ROW_LABEL_X, y + render.CARD_H / 2 + 3)
    assert _shows(frame, points, "20 pts", render._font(16, True), render.GOLD, "lt")
    assert not _shows(frame, points, "25 pts", render._font(16, True), render.GOLD, "lt")


@needs("PIL")
def test_each_suit_has_its_own_shape_and_a_finished_game_shows_board_full():
    centre = (slice(25, 65), slice(12, 52))
    shapes = [(np.abs(np.array(render.card_image(13 * suit))[centre].astype(int) - render.CARD_FACE).sum(-1) > 150)
              for suit in range(4)]  # the twos of clubs, diamonds, hearts, spades: their ink, whatever its colour
    assert all((shapes[i] != shapes[j]).sum() > 20 for i in range(4) for j in range(i))  # not an edge's few pixels
    game = PokerSquaresGame()
    state = game.init(parse_cards(EXAMPLE))
    for cell in range(25):
        game.apply(state, cell)
    np.testing.assert_array_equal(
        render.draw_poker_squares(game, state, title="t"),
        render.draw_board(state.board, game.system, drawn=None, cards_left=0, last_cell=24, title="t"))


@needs("PIL")
def test_an_empty_list_of_dealt_cards_and_a_system_without_a_win_threshold():
    empty = [-1] * 25
    label = "Dealt cards to place: 0"
    font = render._fit_font(label, render.PANEL_W - 8, 13, False, False)
    assert _shows(render.draw_board(empty, remaining=[]), (render.PANEL_X + 6, render.TITLE_H + 14), label, font,
                  render.DIM)
    american = PokerSquaresGame().system
    free = american.__class__("free", american.points, win_threshold=None)
    frame = render.draw_board(parse_cards(EXAMPLE), free)
    line = frame[render.TITLE_H + 98 : render.TITLE_H + 118, render.PANEL_X :]
    assert _has(line, render.GOLD, 30) == 0 and _has(line, render.DIM, 30) == 0  # no "win at" line
