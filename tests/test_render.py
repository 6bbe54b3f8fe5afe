"""Frames: shape and dtype for every env, what they show, human mode, missing extras, speed."""

from __future__ import annotations

import importlib
import os
import sys
import time

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pokersquares_env  # noqa: F401  (registers the envs)
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
def test_rgb_array_frames_of_poker_squares(kwargs):
    env = gym.make("PokerSquares-v0", render_mode="rgb_array", **kwargs)
    frames = play(env)
    assert len(frames) == 26
    for f in frames:
        assert isinstance(f, np.ndarray) and f.dtype == np.uint8 and f.shape == render.FRAME_SHAPE
    assert not np.array_equal(frames[0], frames[1])  # a card appeared
    env.close()


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


def test_every_card_has_its_own_picture():
    pics = {c: np.asarray(render.card_image(c)).tobytes() for c in range(54)}
    assert len(set(pics.values())) == 53 and pics[52] == pics[53]  # the two jokers look alike
    with pytest.raises(ValueError, match="card code 54"):
        render.card_image(54)


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


def test_bad_inputs_named():
    with pytest.raises(ValueError, match="board cell 3 holds card code 99"):
        render.draw_board([-1, -1, -1, 99] + [-1] * 21)
    with pytest.raises(ValueError, match="render_mode='video'"):
        render.Renderer("video")
    with pytest.raises(ValueError, match="render_mode='rgb'"), pytest.warns(UserWarning):
        gym.make("PokerSquares-v0", render_mode="rgb")


def test_human_mode_with_dummy_display(monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    env = gym.make("PokerSquares-v0", render_mode="human")
    env.reset(seed=0)
    assert env.render() is None
    env.step(0)
    renderer = env.unwrapped._renderer
    assert renderer._window.get_size() == (render.WIDTH, render.HEIGHT)
    env.close()


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
def test_missing_extra_is_named(monkeypatch, module, extra):
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail
    if module == "PIL":
        monkeypatch.setitem(sys.modules, "PIL.Image", None)
    with pytest.raises(ImportError, match=rf'pip install "pokersquares_env\[{extra}\]"'):
        render.Renderer("human" if module == "pygame" else "rgb_array")


def test_frames_are_fast_enough_for_video():
    game = PokerSquaresGame(Rules(jokers=1))
    state = game.init(game.deal(np.random.default_rng(2)))
    for cell in range(12):
        game.apply(state, cell)
    render.draw_poker_squares(game, state)  # warm the caches
    start = time.perf_counter()
    for _ in range(20):
        render.draw_poker_squares(game, state)
    per_frame = (time.perf_counter() - start) / 20
    assert per_frame < 0.1, f"{per_frame * 1000:.1f} ms per frame"


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


def test_docs_screenshot_exists():
    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "docs", "images", "board.png")
    if not os.path.exists(path):
        pytest.skip("docs screenshot not generated")
    from PIL import Image

    with Image.open(path) as im:
        assert im.size == (render.WIDTH, render.HEIGHT)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), filled=st.integers(0, 25), partial=st.booleans())
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

    env = RecordVideo(gym.make("PokerSquares-v0", render_mode="rgb_array"), str(tmp_path),
                      episode_trigger=lambda episode: True, disable_logger=True)
    for episode in range(2):
        _, info = env.reset(seed=episode)
        done = False
        while not done:
            _, _, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
            done = terminated or truncated
    env.close()
    clips = sorted(p.name for p in tmp_path.glob("*.mp4"))
    assert clips == ["rl-video-episode-0.mp4", "rl-video-episode-1.mp4"]
    with VideoFileClip(str(tmp_path / clips[0])) as clip:
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


@pytest.mark.parametrize("name", ["PokerSquares-v0", "PokerShuffle-v0", "Soliter-v0", "multiplayer"])
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


def test_black_cards_have_no_red_and_red_cards_do():
    for code in range(52):
        pixels = red_pixels(np.array(render.card_image(code)))
        assert (pixels > 0) == (code // 13 in (1, 2)), code


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
