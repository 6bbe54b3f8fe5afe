"""The adjacent-placement rule (Russian centre start, Finnish top-left start, free start) in core and env."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pokersquares_env  # noqa: F401  (registers the envs)
from pokersquares_env.core import ADJACENT, IllegalActionError, PokerSquaresGame, Rules, cell_name, parse_cell


def touching(a: int, b: int) -> bool:
    """Whether two distinct cells share a side or a corner (plain geometry, independent of ADJACENT)."""
    ra, ca = divmod(a, 5)
    rb, cb = divmod(b, 5)
    return a != b and abs(ra - rb) <= 1 and abs(ca - cb) <= 1


def test_adjacent_table_matches_geometry():
    for a in range(25):
        assert {b for b in range(25) if ADJACENT[a] >> b & 1} == {b for b in range(25) if touching(a, b)}
    assert bin(ADJACENT[12]).count("1") == 8  # the centre touches 8 cells
    assert bin(ADJACENT[0]).count("1") == 3  # a corner touches 3


@pytest.mark.parametrize(
    "first_cell, expected",
    [("center", 12), ("centre", 12), ("top-left", 0), ("c3", 12), ("a1", 0), (7, 7), ("e5", 24), (None, None)],
)
def test_first_mask_from_each_first_cell(first_cell, expected):
    game = PokerSquaresGame(Rules(placement="adjacent", first_cell=first_cell))
    state = game.init(game.deal(np.random.default_rng(0)), validate=False)
    mask = game.action_mask(state)
    if expected is None:
        assert mask.tolist() == [1] * 25
    else:
        assert mask.tolist() == [int(c == expected) for c in range(25)]
        # after the first card, exactly the neighbours of the first cell are legal
        game.apply(state, expected)
        assert set(game.legal_cells(state)) == {b for b in range(25) if touching(expected, b)}


@pytest.mark.parametrize("first_cell, cell", [("center", 12), ("top-left", 0)])
def test_env_first_cell(first_cell, cell):
    env = gym.make("PokerSquares-v0", placement="adjacent", first_cell=first_cell)
    _, info = env.reset(seed=3)
    assert info["action_mask"].tolist() == [int(c == cell) for c in range(25)]
    assert env.unwrapped.action_masks().tolist() == [c == cell for c in range(25)]


def test_first_cell_also_applies_to_free_placement():
    game = PokerSquaresGame(Rules(placement="free", first_cell="center"))
    state = game.init(game.deal(np.random.default_rng(1)), validate=False)
    assert game.legal_cells(state) == [12]
    game.apply(state, 12)
    assert game.legal_cells(state) == [c for c in range(25) if c != 12]  # free afterwards


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    first_cell=st.sampled_from(["center", "top-left", None, 4, 20]),
    jokers=st.sampled_from([0, 1, 2]),
)
def test_every_later_cell_touches_a_placed_card(seed, first_cell, jokers):
    rng = np.random.default_rng(seed)
    game = PokerSquaresGame(Rules(jokers=jokers, placement="adjacent", first_cell=first_cell))
    state = game.init(game.deal(rng), validate=False)
    while not state.terminal:
        legal = game.legal_cells(state)
        placed = state.placements
        assert legal, "a live state must have a legal cell"
        empty = [c for c in range(25) if state.board[c] == -1]
        if placed:
            # legal == the empty cells touching some placed card, nothing more, nothing less
            assert legal == [c for c in empty if any(touching(c, p) for p in placed)]
        cell = int(rng.choice(legal))
        game.apply(state, cell)
    # the order of placements is a connected growth: each card touched an earlier one
    for i, cell in enumerate(state.placements[1:], start=1):
        assert any(touching(cell, p) for p in state.placements[:i])
    assert game.legal_mask(state) == 0


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), first_cell=st.sampled_from(["center", "top-left", None]))
def test_env_masks_agree_and_are_never_empty(seed, first_cell):
    env = gym.make("PokerSquares-v0", placement="adjacent", first_cell=first_cell)
    _, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    game, terminated = env.unwrapped.game, False
    while not terminated:
        mask = info["action_mask"]
        assert mask.dtype == np.int8 and mask.shape == (25,)
        assert mask.any(), "all-zero mask on a live state"
        assert np.array_equal(env.unwrapped.action_masks(), mask.astype(bool))
        assert np.array_equal(mask, game.action_mask(env.unwrapped.state))
        _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert not truncated
    assert not info["action_mask"].any() and not env.unwrapped.action_masks().any()
    assert len(info["placements"]) == 25


def test_illegal_actions_name_the_rule():
    env = gym.make("PokerSquares-v0", placement="adjacent", first_cell="center")
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match=r"cell 0 \(a1\).*first card must go on cell 12 \(c3\)"):
        env.step(0)
    env.step(12)
    with pytest.raises(IllegalActionError, match=r"cell 0 \(a1\) touches no placed card \(placement='adjacent'\)"):
        env.step(0)
    with pytest.raises(IllegalActionError, match=r"cell 12 \(c3\) is occupied"):
        env.step(12)
    env.step(6)  # b2 touches c3; the failed attempts left the state untouched
    assert env.unwrapped.state.placements == [12, 6]
    env.step(0)  # a1 now touches b2


def test_illegal_action_penalty_under_adjacency():
    env = gym.make("PokerSquares-v0", placement="adjacent", first_cell="top-left", illegal_action="penalty")
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(24)
    assert terminated and reward == -10.0
    assert "first card must go on cell 0 (a1)" in info["illegal_action"]


def test_bad_rule_options_are_named():
    with pytest.raises(ValueError, match="placement='diagonal'"):
        Rules(placement="diagonal")
    with pytest.raises(ValueError, match="first_cell='middle'"):
        Rules(placement="adjacent", first_cell="middle")
    with pytest.raises(ValueError, match="first_cell=25"):
        Rules(placement="adjacent", first_cell=25)


@pytest.mark.parametrize("first_cell, cell", [("anywhere", None), ("None", None), ("3c", 12), ("1A", 0)])
def test_env_first_cell_words_and_row_first_cells(first_cell, cell):
    env = gym.make("PokerSquares-v0", placement="adjacent", first_cell=first_cell)
    _, info = env.reset(seed=0)
    assert env.unwrapped.rules.first_cell == cell
    assert info["action_mask"].sum() == (25 if cell is None else 1)


def test_cell_names_round_trip():
    for cell in range(25):
        assert parse_cell(cell_name(cell)) == cell
    assert cell_name(12) == "c3" and cell_name(0) == "a1"
