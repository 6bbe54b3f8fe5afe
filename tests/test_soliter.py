"""Soliter (Baker's Game family): rules of each variant, masks, errors, determinism, solver, check_env."""

from __future__ import annotations

import itertools
import re
import sys

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st

import pokersquares_env  # noqa: F401  (registers Soliter-v0)
from helpers import needs
from pokersquares_env.cards import parse_card
from pokersquares_env.soliter import (
    VARIANTS,
    IllegalMoveError,
    SoliterEnv,
    SoliterGame,
    Variant,
    card_text,
    get_variant,
    solve,
    solve_result,
)
from pokersquares_env.soliter.rules import EMPTY, MAX_STAGES

C = parse_card


def make(variant="classic", **kw):
    return gym.make("Soliter-v0", variant=variant, **kw).unwrapped


def columns_with_tops(game: SoliterGame, tops: dict[int, list[str]]) -> list[list[int]]:
    """A legal deal (as columns) whose column ``i`` ends with the cards ``tops[i]`` (last = playable)."""
    rest = list(game.deck)
    for cards in tops.values():
        for t in cards:
            rest.remove(C(t) if t != "JK" else 52)
    lengths = [len(c) for c in game.deal(np.random.default_rng(0)).columns]  # the variant's own column lengths
    cols: list[list[int]] = [[] for _ in range(game.num_columns)]
    room = [lengths[i] - len(tops.get(i, [])) for i in range(game.num_columns)]
    k = 0
    for i in range(game.num_columns):
        cols[i] = rest[k : k + room[i]]
        k += room[i]
    for i, cards in tops.items():
        cols[i].extend(C(t) if t != "JK" else 52 for t in cards)
    return cols


def act(game, src, dst):
    return game.encode(src, dst)


# ---------------------------------------------------------------- variants and deals
@pytest.mark.parametrize(
    "name, cards, lengths",
    [
        ("classic", 52, [7, 7, 7, 7, 6, 6, 6, 6]),
        ("36", 36, [6] * 6),
        ("104", 104, [11] * 4 + [10] * 6),
        ("104-aces-kings", 104, [13] * 8),
        ("joker", 53, [7] * 5 + [6] * 3),
        ("multistage", 104, [13] * 8),
    ],
)
def test_variant_deals(name, cards, lengths):
    env = make(name)
    env.reset(seed=1)
    game, state = env.game, env.state
    assert len(game.deck) == cards
    assert [len(c) for c in state.columns[: state.open_columns]] == lengths
    assert sorted(c for col in state.columns for c in col) == sorted(game.deck)


def test_variant_options_and_overrides():
    assert get_variant("36").deck == "36" and SoliterGame("36").levels == 9
    assert SoliterGame("104").num_piles == 8 and SoliterGame("104").num_cells == 8
    ak = SoliterGame("104-aces-kings")
    assert ak.piles == tuple((s, 1) for s in range(4)) + tuple((s, -1) for s in range(4))
    assert ak.num_columns == 8 and ak.variant.num_stages == 2
    assert SoliterGame("multistage").variant.num_stages == 8
    env = make("classic", free_cells=3, columns=10)
    assert env.game.num_cells == 3 and env.game.num_columns == 10
    assert make("joker", jokers=3).game.deck[-3:] == (52, 53, 54)
    assert make("multistage", deck="36", columns=6).game.variant.num_stages == 6
    with pytest.raises(ValueError, match="free_cells=-1"):
        Variant(free_cells=-1)
    with pytest.raises(ValueError, match="unknown Soliter variant 'nope'"):
        get_variant("nope")
    with pytest.raises(TypeError, match="unknown Soliter option"):
        make("classic", freecells=3)
    # a misspelt env option is refused with the env's options listed too, not only the variant's
    with pytest.raises(TypeError, match=r"unknown Soliter option\(s\) \['reward_hom'\]: expected some of the env's "
                                        r"options \['reward_home', 'reward_win', 'reward_step', 'max_steps', "
                                        r"'illegal_action', 'illegal_penalty', 'render_mode'\] or the variant's "
                                        r"options \['column_size', .*'free_cells', .*'stages'\]$"):
        SoliterEnv(reward_hom=1)
    assert SoliterEnv(reward_home=2.0, free_cells=2).reward_home == 2.0


def test_deal_is_deterministic_and_explicit_deals():
    a, b = make(), make()
    oa, _ = a.reset(seed=123)
    ob, _ = b.reset(seed=123)
    assert np.array_equal(oa, ob) and a.state == b.state
    oc, _ = b.reset(seed=124)
    assert not np.array_equal(oa, oc)
    flat = [c for r in range(7) for col in a.state.columns for c in col[r : r + 1]]  # classic deals row by row
    c = make()
    c.reset(options={"deal": flat})
    assert c.state.columns == a.state.columns
    c.reset(options={"deal": [list(col) for col in a.state.columns]})
    assert c.state.columns == a.state.columns
    text = [pokersquares_env.cards.format_card(x) for x in flat]
    c.reset(options={"deal": text})
    assert c.state.columns == a.state.columns
    with pytest.raises(ValueError, match="missing"):
        c.reset(options={"deal": flat[:-1]})
    with pytest.raises(ValueError, match="deal has 3 columns"):
        c.reset(options={"deal": [[0], [1], [2]]})
    # before: an int deal failed with "'int' object is not iterable", and a state beside a deal silently won
    with pytest.raises(TypeError, match=r"deal 5: expected the deck in dealing order"):
        c.reset(options={"deal": 5})
    with pytest.raises(ValueError, match=r"options has both 'deal' and 'state': expected one of them"):
        c.reset(options={"deal": flat, "state": a.state})
    assert c.state.columns == a.state.columns  # the refused resets changed nothing


def test_a_text_deal_takes_the_joker_names_the_env_writes():
    """The env names the jokers JK1, JK2, JK3 (ansi text, legend, errors); a text deal refused JK3 ("bad card
    'JK3'")."""
    game = SoliterGame("joker", jokers=3)
    dealt = game.deal(np.random.default_rng(0))
    named = {52: "JK1", 53: "JK2", 54: "JK3"}
    env = SoliterEnv("joker", jokers=3)
    env.reset(options={"deal": [[named.get(c, card_text(c)) for c in col] for col in dealt.columns]})
    assert env.state.columns == dealt.columns


def test_a_plain_joker_in_a_text_deal_is_the_one_no_numbered_name_takes():
    """As ``parse_cards`` reads ``'JK1 JK'`` ([52, 53]); the deal read both as JK1 and refused the deck."""
    deck = [card_text(c) for c in range(52)]
    state = SoliterGame("joker", jokers=2).init(deck + ["JK1", "JK"])
    assert [c for col in state.columns for c in col if c >= 52] == [52, 53]
    state = SoliterGame("joker", jokers=3).init(deck + ["JK", "JK3", "JK"])  # the plain ones: 52, then 53
    assert [c for col in state.columns for c in col if c >= 52] == [52, 54, 53]
    with pytest.raises(ValueError, match=re.escape("deal[55]: more than 3 jokers")):  # no joker left for it
        SoliterGame("joker", jokers=3).init(deck + ["JK1", "JK2", "JK3", "JK"])


# ---------------------------------------------------------------- classic rules
def test_classic_building_cells_foundations():
    env = make()
    game = env.game
    cols = columns_with_tops(game, {0: ["9♥"], 1: ["T♥"], 2: ["T♠"], 3: ["A♣"], 4: ["2♣"]})
    env.reset(options={"deal": cols})
    cb, pb = game.cell_base, game.pile_base
    legal = set(game.legal_actions(env.state))
    assert act(game, 0, 1) in legal  # 9♥ on T♥: down in suit
    assert act(game, 0, 2) not in legal  # 9♥ on T♠: wrong suit
    with pytest.raises(IllegalMoveError, match=r"9♥ cannot go on T♠.*9♠"):
        env.step(act(game, 0, 2))
    before = env.state
    with pytest.raises(IllegalMoveError, match="does not fit foundation 1"):
        env.step(act(game, 4, pb + 0))  # 2♣ before the ace
    assert env.state == before
    _, r, term, _, info = env.step(act(game, 3, pb + 0))  # A♣ home
    assert r == 1.0 and info["cards_home"] == 1 and not term
    _, r, *_ = env.step(act(game, 4, pb + 0))  # 2♣ home
    assert r == 1.0 and env.state.foundations[0] == 2
    with pytest.raises(IllegalMoveError, match="never leave the foundations"):
        env.step(act(game, pb + 0, cb))
    # free cells hold one card each
    env.step(act(game, 0, cb))
    with pytest.raises(IllegalMoveError, match="already holds 9♥"):
        env.step(act(game, 1, cb))
    env.step(act(game, cb, 1))  # back from the cell onto T♥
    assert env.state.columns[1][-2:] == (C("T♥"), C("9♥")) and env.state.cells[0] == EMPTY


def test_empty_column_takes_any_card():
    env = make(free_cells=8)
    game = env.game
    env.reset(seed=0)
    for k in range(len(env.state.columns[7])):  # empty column 8 into the cells
        env.step(act(game, 7, game.cell_base + k))
    assert env.state.columns[7] == ()
    card = env.state.columns[0][-1]
    assert act(game, 0, 7) in game.legal_actions(env.state)
    env.step(act(game, 0, 7))
    assert env.state.columns[7] == (card,)
    with pytest.raises(ValueError, match="deal column 1 has 52 cards"):
        env.reset(options={"deal": [list(game.deck)] + [[] for _ in range(7)]})


def test_illegal_penalty_mode_and_out_of_range():
    env = make(illegal_action="penalty", illegal_penalty=-3)
    env.reset(seed=0)
    bad = int(np.flatnonzero(env.action_masks() == 0)[0])
    _, r, term, trunc, info = env.step(bad)
    assert r == -3 and term and not trunc and "illegal_action" in info
    env = make()
    env.reset(seed=0)
    with pytest.raises(IllegalMoveError, match="out of range"):
        env.step(10_000)
    for bad in (np.float64(3.0), None, "3"):
        with pytest.raises(IllegalMoveError, match=re.escape(f"action {bad!r} is not an integer")):
            env.step(bad)
    with pytest.raises(gym.error.ResetNeeded):
        make().step(0)


# ---------------------------------------------------------------- masks
@settings(max_examples=15, deadline=None)
@given(variant=st.sampled_from([(name, {}) for name in sorted(VARIANTS)] + [("joker", {"jokers": 3}),
                                                                           ("104", {"jokers": 2})]),
       seed=st.integers(0, 10_000))
def test_mask_matches_legal_moves(variant, seed):
    env = make(variant[0], **variant[1])
    _, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    game = env.game
    for _ in range(12):
        mask = info["action_mask"]
        assert np.array_equal(mask.astype(bool), env.action_masks())
        expect = np.array([game.why_illegal(env.state, a) is None for a in range(game.num_actions)])
        assert np.array_equal(mask.astype(bool), expect)
        moves = {game.encode(s, d) for s, d in game.legal_moves(env.state)}
        assert moves == set(np.flatnonzero(mask).tolist()) - {game.redeal_action}
        legal = np.flatnonzero(mask)
        if not len(legal):
            break
        obs, _r, term, trunc, info = env.step(int(rng.choice(legal)))
        assert env.observation_space.contains(obs)
        in_play = [c for col in env.state.columns for c in col] + [c for c in env.state.cells if c != EMPTY]
        assert len(in_play) + game.cards_home(env.state) == len(game.deck)  # no card made or lost
        assert all(col == () for col in env.state.columns[env.state.open_columns :])
        assert game.check_state(env.state) is env.state  # every position reached passes the reset check
        if term or trunc:
            break


# ---------------------------------------------------------------- 104-aces-kings
def test_aces_kings_foundations_transfer_and_reverse_redeal():
    env = make("104-aces-kings")
    game = env.game
    pb = game.pile_base
    cols = columns_with_tops(game, {0: ["A♥"], 1: ["K♥"], 2: ["Q♥"], 3: ["2♥"], 4: ["J♥"]})
    env.reset(options={"deal": cols})
    env.step(act(game, 0, pb + 2))  # A♥ up
    env.step(act(game, 1, pb + 6))  # K♥ down
    env.step(act(game, 2, pb + 6))  # Q♥ down
    env.step(act(game, 3, pb + 2))  # 2♥ up
    assert game.pile_top(env.state, 6) == C("Q♥")
    env.step(act(game, 4, pb + 6))  # J♥ down
    assert env.state.foundations[2] == 2 and env.state.foundations[6] == 3
    with pytest.raises(IllegalMoveError, match="does not fit the king foundation"):
        env.step(act(game, pb + 2, pb + 6))  # 2♥ onto J♥: not the next
    # a full transfer chain on a hand-built state
    s = env.state._replace(foundations=(0, 0, 5, 0, 0, 0, 8, 0))  # ♥: A..5 up, K..6 down
    assert act(game, pb + 2, pb + 6) in game.legal_actions(s)  # 5♥ passes to the king foundation
    s2, home = game.apply(s, act(game, pb + 2, pb + 6))
    assert home == 0 and s2.foundations[2] == 4 and s2.foundations[6] == 9
    # the redeal: allowed only when no card can go home; reverses the gathered order
    movable = next(s for s in range(100) if env.reset(seed=s) and game.has_foundation_move(env.state))
    assert game.redeal_action not in game.legal_actions(env.state), movable  # (was under an if that never held)
    env.reset(seed=5)
    state = env.state
    blocked = state._replace(foundations=(0,) * 8)
    gathered = [c for col in blocked.columns[: blocked.open_columns] for c in col]
    # put the aces and kings out of reach by checking only the order of the redeal
    nxt = game.redeal(blocked)
    assert nxt.stage == 1
    assert [c for col in nxt.columns for c in col] == gathered[::-1]
    assert [len(c) for c in nxt.columns] == [13] * 8
    assert game.why_illegal(nxt, game.redeal_action).startswith("redeal refused")


# ---------------------------------------------------------------- joker
def test_joker_stands_for_a_card_builds_and_swaps():
    env = make("joker")
    game = env.game
    cols = columns_with_tops(game, {0: ["JK"], 1: ["9♥"], 2: ["8♥"], 3: ["7♥"], 4: ["A♣"]})
    env.reset(options={"deal": cols})
    cb, pb = game.cell_base, game.pile_base
    with pytest.raises(IllegalMoveError, match="joker never goes to a foundation"):
        env.step(act(game, 0, pb + 0))
    # the joker on 9♥ stands for 8♥, which is playable: they swap at once
    env.step(act(game, 0, 1))
    s = env.state
    assert s.columns[1][-2:] == (C("9♥"), C("8♥")) and s.columns[2][-1] == 52 and s.jokers == (-1,)
    # a card on a free joker: 7♣ on JK makes it stand for 8♣ (which is covered by 2♦)
    env.reset(options={"deal": columns_with_tops(game, {0: ["JK"], 1: ["7♣"], 2: ["6♣"], 3: ["8♣", "2♦"]})})
    env.step(act(game, 1, 0))
    assert env.state.jokers == (C("8♣"),)
    with pytest.raises(IllegalMoveError):
        env.step(act(game, 1, 0))  # whatever is now on column 1 is not 6♣
    env.step(act(game, 2, 0))  # 6♣ builds on 7♣ as usual
    assert env.state.columns[0][-3:] == (52, C("7♣"), C("6♣"))
    # 8♣ comes out (2♦ to a cell): it takes the joker's place, the joker takes its place
    env.step(act(game, 3, cb))
    s = env.state
    assert s.columns[0][-3:] == (C("8♣"), C("7♣"), C("6♣"))
    assert s.columns[3][-1] == 52 and s.jokers == (-1,)
    # the free joker may now go onto any card whose lower neighbour is still out
    assert (act(game, 3, 0) in game.legal_actions(s)) == (game.copies_home(s, C("5♣")) == 0)


# ---------------------------------------------------------------- multistage
def test_multistage_redeal_one_column_fewer():
    env = make("multistage")
    game = env.game
    env.reset(seed=9)
    s = env.state
    assert game.redeal_action == env.action_space.n - 1
    nxt = game.redeal(s)
    assert nxt.open_columns == 7 and all(not c for c in nxt.columns[7:])
    assert sorted(c for col in nxt.columns for c in col) == sorted(c for col in s.columns for c in col)
    assert game.redeal(s) == nxt  # the shuffle is a function of the position's seed
    s = nxt
    for _ in range(6):
        s = game.redeal(s)
    assert s.open_columns == 1 and s.stage == 7 and game.check_state(s) is s
    assert "last of 8 stages" in game.why_illegal(s, game.redeal_action)


def test_the_redeal_waits_until_the_game_has_stopped():
    """A redeal needs no move home and no build onto a card; moving a built card to a twin of the card below it, or
    a card to a free cell, does not count (those moves can go back and forth forever)."""
    game = make("multistage").game
    base = game.deal(np.random.default_rng(0))
    tails = [("9♠", "3♦"), ("K♥",), ("6♠", "5♠"), ("6♠",), ("Q♣",), ("T♦",), ("8♥",), ("2♣",)]
    stopped = base._replace(columns=tuple(tuple(C(c) for c in col) for col in tails), cells=(EMPTY,) * 8,
                            foundations=(0,) * 8)
    assert not game.has_foundation_move(stopped) and not game.has_build_move(stopped)
    assert game.can_redeal(stopped) and game.redeal_action in game.legal_actions(stopped)
    assert game.why_illegal(stopped, game.redeal_action) is None
    # a card in a free cell that can be built onto a column: not stopped
    cell = stopped._replace(cells=(C("2♦"),) + (EMPTY,) * 7)
    assert game.has_build_move(cell) and not game.can_redeal(cell)
    assert "can still be built onto another card" in game.why_illegal(cell, game.redeal_action)
    # 5♠ off a card that does not take it, onto the lone 6♠: not stopped
    loose = stopped._replace(columns=((C("9♠"), C("3♦")), (C("K♥"),), (C("9♣"), C("5♠"))) + stopped.columns[3:])
    assert game.has_build_move(loose) and not game.can_redeal(loose)
    # an ace on top: it goes home first
    ace = stopped._replace(columns=stopped.columns[:7] + ((C("2♣"), C("A♥")),))
    assert "a card can still go to a foundation" in game.why_illegal(ace, game.redeal_action)
    # the last stage has no redeal, stopped or not
    last = stopped._replace(stage=game.variant.num_stages - 1)
    assert not game.can_redeal(last) and game.redeal_action not in game.legal_actions(last)
    assert "last of 8 stages" in game.why_illegal(last, game.redeal_action)


def test_a_pass_between_foundations_does_not_hold_back_the_redeal():
    """The source permits ("Допускается") the pass from an ace foundation to its king foundation; before, the redeal
    waited until every pass was made, so ♣ A-8 up and K-9 down had to become 13 cards down before the redeal, and
    the next stage's 9♣ could no longer go up."""
    from collections import Counter

    from pokersquares_env.soliter.rules import SoliterState

    game = make("104-aces-kings").game
    found = (8, 0, 0, 0, 5, 0, 0, 0)  # ♣: A..8 up, K..9 down
    home = Counter(game._home_cards(SoliterState((), (), found, (), 0, 8, 0)))
    rest = list((Counter(game.deck) - home).elements())
    rng = np.random.default_rng(0)
    for _ in range(50):  # a deal of the 91 other cards in which nothing but the pass can move
        order = [rest[i] for i in rng.permutation(len(rest))]
        cols = tuple(tuple(order[i * 13:(i + 1) * 13]) for i in range(7)) + ((),)
        state = game.check_state(SoliterState(cols, (EMPTY,) * 8, found, (), 0, 8, 0))
        moves = game.legal_moves(state)
        if not game.has_build_move(state) and all(d < game.pile_base or s >= game.pile_base for s, d in moves):
            break
    else:
        pytest.fail("no stopped position found")
    pb = game.pile_base
    assert (pb + 0, pb + 4) in moves  # the pass is there to make ...
    assert not game.has_foundation_move(state)  # ... but not owed
    assert game.can_redeal(state) and game.why_illegal(state, game.redeal_action) is None
    nxt = game.redeal(state)
    assert nxt.stage == 1 and nxt.foundations == found


def test_a_joker_never_stands_for_a_card_already_home():
    game = make("joker").game
    state = game.deal(np.random.default_rng(0))
    (hearts,) = game.piles_of_suit[game.suit[C("8♥")]]
    home = list(state.foundations)
    home[hearts] = 7  # A♥..7♥ home: 8♥ is still out, a joker may stand for it on 9♥
    assert game.accepts(state._replace(foundations=tuple(home)), C("9♥"), 52)
    home[hearts] = 8  # 8♥ home too: the joker would stand for a card that is already home
    assert not game.accepts(state._replace(foundations=tuple(home)), C("9♥"), 52)


def test_reset_refuses_a_state_of_another_variant_and_keeps_its_game():
    env = make("classic")
    env.reset(seed=1)
    kept = env.state
    for variant in ("104", "36", "joker"):
        other = make(variant)
        other.reset(seed=0)
        with pytest.raises(ValueError, match="options\\['state'\\].*the 'classic' variant has"):
            env.reset(options={"state": other.state})
    assert env.state is kept
    damaged = kept._replace(columns=(kept.columns[0][1:], *kept.columns[1:]))  # one card lost
    with pytest.raises(ValueError, match="51 cards in play and 0 home: the 'classic' variant has 52"):
        env.reset(options={"state": damaged})
    with pytest.raises(TypeError, match="expected a SoliterState"):
        env.reset(options={"state": "classic"})
    env.reset(options={"state": kept})
    assert env.state is kept and env.step(int(np.flatnonzero(env.action_masks())[0]))


def test_check_state_refuses_a_corrupted_position_naming_the_card():
    game = SoliterGame("joker")
    state = game.deal(np.random.default_rng(4))
    cols = [list(c) for c in state.columns]
    joker_col = next(i for i, c in enumerate(cols) if 52 in c)
    other = (joker_col + 1) % len(cols)
    lost, twin = cols[other][0], cols[other][1]
    cols[other][0] = twin  # the same number of cards, one of them twice and one gone
    dup = state._replace(columns=tuple(tuple(c) for c in cols))
    twin_t, lost_t = re.escape(card_text(twin)), re.escape(card_text(lost))
    with pytest.raises(ValueError, match=f"2 {twin_t} \\(2 in play, 0 home\\) where the deck has 1; missing {lost_t}"):
        game.check_state(dup)
    # the ace of spades claimed home while it is still in play (another card removed to keep the count)
    ace = C("A♠")
    cols = [[c for c in col if c != ace] for col in state.columns]
    cols[joker_col].insert(0, ace)
    removed = next(c for c in cols[other] if c != ace)
    cols[other].remove(removed)
    spades = next(p for p, (suit, _d) in enumerate(game.piles) if suit == game.suit[ace])
    home = tuple(1 if p == spades else 0 for p in range(game.num_piles))
    claimed = state._replace(columns=tuple(tuple(c) for c in cols), foundations=home)
    with pytest.raises(ValueError, match=f"2 A♠ \\(1 in play, 1 home\\).*missing {re.escape(card_text(removed))}"):
        game.check_state(claimed)
    with pytest.raises(ValueError, match="jokers\\[0\\]=99: expected -1 .* or the code of a card"):
        game.check_state(state._replace(jokers=(99,)))
    with pytest.raises(ValueError, match="jokers\\[0\\]=52: expected -1"):
        game.check_state(state._replace(jokers=(52,)))
    with pytest.raises(TypeError, match="columns is a list: expected a tuple"):
        game.check_state(state._replace(columns=list(state.columns)))
    with pytest.raises(TypeError, match="columns\\[0\\] is a list: expected a tuple of card codes"):
        game.check_state(state._replace(columns=tuple(list(c) for c in state.columns)))
    with pytest.raises(TypeError, match="foundations\\[0\\]='1': expected an integer"):
        game.check_state(state._replace(foundations=("1",) + state.foundations[1:]))
    with pytest.raises(ValueError, match="99 is not in the deck"):
        game.check_state(state._replace(cells=(99,) + state.cells[1:]))
    assert game.check_state(state) is state
    assert game.check_state(state._replace(jokers=(C("7♥"),))) is not None  # a joker may stand for a real card
    env = make("joker")
    env.reset(seed=0)
    kept = env.state
    with pytest.raises(ValueError, match="options\\['state'\\]: .*2 A♠"):
        env.reset(options={"state": claimed})
    assert env.state is kept


def test_check_state_and_init_refuse_a_negative_seed():
    """Before, a negative seed was accepted and crashed the first shuffle redeal inside numpy ("expected
    non-negative integer")."""
    game = SoliterGame("multistage")
    state = game.deal(np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"^state: seed=-1: expected a non-negative integer"):
        game.check_state(state._replace(seed=-1))
    with pytest.raises(ValueError, match=r"^seed=-1: expected a non-negative integer"):
        game.init(list(game.deck), seed=-1)
    with pytest.raises(TypeError, match=r"^seed=1\.5: expected a non-negative integer"):
        game.init(list(game.deck), seed=1.5)
    env = make("multistage")
    env.reset(seed=0)
    kept = env.state
    with pytest.raises(ValueError, match=r"options\['state'\]: seed=-7: expected a non-negative integer"):
        env.reset(options={"state": kept._replace(seed=-7)})
    assert env.state is kept
    assert game.redeal(game.check_state(state._replace(seed=0))).stage == 1  # seed 0 is fine
    assert game.init(list(game.deck), seed=np.int64(3)).seed == 3


def test_a_wrong_joker_is_named_with_its_code():
    """Every joker's text is 'JK', so a deal or position with the wrong joker read "missing JK; unexpected JK"."""
    game = SoliterGame("joker")
    deal = [53 if c == 52 else c for c in game.deck]
    with pytest.raises(ValueError, match=r"missing JK \(code 52\); unexpected JK \(code 53\)$"):
        game.init(deal)
    state = game.deal(np.random.default_rng(0))
    swapped = state._replace(columns=tuple(tuple(53 if c == 52 else c for c in col) for col in state.columns))
    with pytest.raises(ValueError, match=r"JK \(code 53\) is not in the deck; missing JK \(code 52\)$"):
        game.check_state(swapped)
    two = SoliterGame("joker", jokers=2)
    state = two.deal(np.random.default_rng(0))
    doubled = state._replace(columns=tuple(tuple(52 if c == 53 else c for c in col) for col in state.columns))
    with pytest.raises(ValueError, match=r"2 JK \(code 52\) \(2 in play, 0 home\) where the deck has 1; "
                                         r"missing JK \(code 53\)$"):
        two.check_state(doubled)


def test_a_failed_reset_leaves_the_random_generator_as_it_was():
    env = make("classic")
    env.reset(seed=1)
    before = env.np_random.bit_generator.state
    damaged = env.state._replace(columns=(env.state.columns[0][1:], *env.state.columns[1:]))
    for options in ({"state": damaged}, {"deal": ["A♠"]}, {"bogus": 1}, {"state": "classic"}):
        with pytest.raises((ValueError, TypeError)):
            env.reset(seed=99, options=options)
        assert env.np_random.bit_generator.state == before, options
    fresh = make("classic")  # an unseeded reset after the failed ones deals as if they never happened
    fresh.reset(seed=1)
    env.reset()
    fresh.reset()
    assert env.state == fresh.state


def test_a_deal_with_no_legal_move_is_skipped_by_reset_and_refused_when_given():
    from gymnasium.utils import seeding

    env = make(free_cells=0)
    skipped = 0
    for seed in range(40):
        _, info = env.reset(seed=seed)
        assert info["action_mask"].any() and env.action_masks().any()
        skipped += info["skipped_deals"]
        rng, _ = seeding.np_random(seed)
        first = env.game.deal(rng)  # the shuffle reset drew first
        assert (env.state == first) == (info["skipped_deals"] == 0)
        if info["skipped_deals"]:
            with pytest.raises(ValueError, match=r"options\['state'\] has no legal move"):
                env.reset(options={"state": first})
    assert skipped > 0  # free_cells=0 deals some dead starts (15.1% of 3,000 shuffles: docs/soliter.md)


def test_truncation_keeps_the_moves_left_and_termination_clears_them():
    env = make(max_steps=3)
    _, info = env.reset(seed=0)
    for _ in range(3):
        _, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert trunc and not term and info["action_mask"].any()
    assert np.array_equal(env.action_masks(), env.game.action_mask(env.state).astype(bool))
    env = make(illegal_action="penalty")
    env.reset(seed=0)
    _, _, term, _, info = env.step(int(np.flatnonzero(env.action_masks() == 0)[0]))
    assert term and not info["action_mask"].any() and not env.action_masks().any()


def test_time_aware_observation_reads_the_step_limit_given_to_make():
    """Soliter truncates itself after max_steps; Gymnasium's TimeAwareObservation needs the limit in the spec,
    which gym.make's max_episode_steps gives (the documented recipe: the same number for both)."""
    import gymnasium as gym
    from gymnasium.wrappers import TimeAwareObservation

    with pytest.raises(ValueError, match="TimeLimit"):
        TimeAwareObservation(gym.make("Soliter-v0"))
    env = TimeAwareObservation(gym.make("Soliter-v0", max_steps=4, max_episode_steps=4))
    obs, info = env.reset(seed=0)
    times = [obs[-1]]
    trunc = False
    while not trunc:
        obs, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        assert not term
        times.append(obs[-1])
    assert times == [0, 1, 2, 3, 4]


# ---------------------------------------------------------------- solver
def _replay(variant, seed, plan, **kw):
    env = make(variant, max_steps=100_000, **kw)
    env.reset(seed=seed)
    info = {"won": False}
    total = 0.0
    for a in plan:
        _o, r, term, trunc, info = env.step(a)
        total += r
        if term or trunc:
            break
    return info["won"], total, env


@pytest.mark.parametrize(
    "variant, seed", [("classic", 0), ("36", 1), ("104", 1), ("104-aces-kings", 1), ("joker", 41), ("multistage", 1)]
)
def test_solver_plans_replay_to_wins(variant, seed):
    env = make(variant)
    env.reset(seed=seed)
    plan = solve(env, max_seconds=5)
    assert plan is not None
    won, total, fresh = _replay(variant, seed, plan)
    assert won and total == fresh.game.num_real + 10.0


def test_solver_from_state_and_unsolvable_deal():
    game = SoliterGame("classic", free_cells=2)
    state = game.deal(np.random.default_rng(3))
    res = solve_result(state, max_seconds=10, game=game)
    assert res.plan is None and res.exhausted  # two cells: this deal has no win
    with pytest.raises(ValueError, match="max_seconds"):
        solve(state, max_seconds=0, game=game)
    with pytest.raises(TypeError, match="expected a Soliter-v0 env"):
        solve("nope")


# ---------------------------------------------------------------- gymnasium
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_check_env(variant):
    env = gym.make("Soliter-v0", variant=variant, illegal_action="penalty", max_steps=50)
    check_env(env.unwrapped, skip_render_check=True)


def test_truncation_and_render():
    env = make(max_steps=3, render_mode="ansi")
    _, info = env.reset(seed=0)
    for _ in range(3):
        legal = np.flatnonzero(info["action_mask"])
        _o, _r, term, trunc, info = env.step(int(legal[-1]))
    assert trunc and not term and info["action_mask"].any()  # truncated, not lost: the moves left stay
    assert "foundations" in env.render()
    pytest.importorskip("PIL")
    env = make(render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.ndim == 3 and frame.shape[2] == 3 and frame.dtype == np.uint8
    assert isinstance(env, SoliterEnv)


def test_cli_show_and_solve(capsys):
    from pokersquares_env.cli import main

    assert main(["soliter", "show", "--seed", "0"]) == 0
    assert "foundations" in capsys.readouterr().out
    assert main(["soliter", "solve", "--seed", "0", "--variant", "36"]) == 0
    assert "replay wins: True" in capsys.readouterr().out


def test_illegal_move_message_names_the_action_not_a_move_count():
    """Before: 'move 2 (column 1 -> column 3)', where 2 is the action number, read like a move count."""
    env = make()
    game = env.game
    env.reset(options={"deal": columns_with_tops(game, {0: ["9♥"], 2: ["T♠"]})})
    with pytest.raises(IllegalMoveError, match=r"^action 2 \(column 1 -> column 3\): 9♥ cannot go on T♠"):
        env.step(act(game, 0, 2))


def _soliter_play(monkeypatch, capsys, text: str, *argv: str):
    import io

    from pokersquares_env.cli import main

    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    seed = [] if "--seed" in argv else ["--seed", "7"]  # classic seed 7 unless the test gives one (a repeat is refused)
    status = main(["soliter", "play", *seed, *argv])
    return status, capsys.readouterr().out


def test_cli_play_echoes_piped_moves_and_reads_commands_in_any_case(monkeypatch, capsys):
    status, out = _soliter_play(monkeypatch, capsys, "foo\nC1 C2\nH\nQ\n")
    assert status == 0
    # the moves read from a pipe are echoed after the prompt, so the transcript reads like a terminal session
    assert "> foo\ncannot read 'foo'" in out
    assert "> C1 C2\nillegal: action 1 (column 1 -> column 2): T♥ cannot go on T♦" in out
    assert "> H\nmoves: 'c3 c5'" in out  # help, not "cannot read 'H'"
    assert out.rstrip().endswith("> Q")  # quit, not "cannot read 'Q'"


def test_cli_play_asks_again_after_an_empty_line(monkeypatch, capsys):
    """As ``pokersquares play`` does; before, an empty line was answered "cannot read ''" and the board again."""
    status, out = _soliter_play(monkeypatch, capsys, "\n  \nq\n")
    assert status == 0 and "cannot read" not in out
    assert out.rstrip().endswith("K♣\n\n> \n>   \n> q")  # the board once, then the prompt again and again


def test_cli_play_says_when_the_input_ends_and_exits_1(monkeypatch, capsys):
    """As ``pokersquares play`` does; before, the end of the input was a silent exit 0."""
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO("c1 f\n"))
    status = __import__("pokersquares_env.cli", fromlist=["main"]).main(["soliter", "play", "--seed", "7"])
    captured = capsys.readouterr()
    assert status == 1
    assert captured.err.strip() == "The input ended before the game was over."  # stderr: not lost in a transcript
    assert "input ended" not in captured.out


def test_cli_play_says_why_the_game_ended(monkeypatch, capsys):
    """Before, a game cut off by the env's step limit, with moves left, ended on a bare "game over"."""
    moves = "c1 f1\n" + "f1 f2\nf2 f1\n" * 600
    status, out = _soliter_play(monkeypatch, capsys, moves)
    assert status == 0
    assert out.rstrip().endswith("game over: the step limit of 1040 moves was reached (moves were left)")


def test_cli_play_hint_says_no_win_exists_only_for_a_proof(monkeypatch, capsys):
    """Before, the hint said "no win found within 2 s" even when the search had proved in a fraction of a second
    that no win exists (classic seed 7)."""
    status, out = _soliter_play(monkeypatch, capsys, "hint\nq\n")
    assert status == 0
    assert "> hint\nno win exists from here (the whole search space was exhausted: a proof" in out
    assert "within 2 s" not in out
    # with a joker the pruned search is no proof: the hint says so
    status, out = _soliter_play(monkeypatch, capsys, "hint\nq\n", "--variant", "36", "--jokers", "1",
                                "--free-cells", "1")
    assert "> hint\nno win found: the solver's pruned search space was exhausted, which is not a proof" in out
    assert "no win exists" not in out
    status, out = _soliter_play(monkeypatch, capsys, "hint\nq\n", "--seed", "0")
    assert re.search(r"> hint\ntry: .* \(win in \d+ moves, ", out)


def test_observations_stay_inside_the_space_at_high_stages_and_with_many_columns():
    """Before, every entry was bounded by 54: the stage of a long game and the columns in play of a ``columns=None``
    deal of 1-card columns (104) fell outside the space, and a stage past 32767 overflowed the int16."""
    for stages, stage in ((200, 60), (200, 199), (MAX_STAGES, MAX_STAGES - 1)):
        env = make("classic", redeal="reverse", stages=stages)
        env.reset(seed=0)
        obs, _ = env.reset(options={"state": env.state._replace(stage=stage)})
        assert obs[-2] == stage and env.observation_space.contains(obs), (stages, stage)
        assert env.observation_space.high[-2] == stages - 1
    env = make("104-aces-kings", column_size=6)  # 18 columns of 6 cards (the last one 2)
    obs, _ = env.reset(seed=0)
    assert obs[-1] == 18 == env.game.num_columns and env.observation_space.contains(obs)
    game = env.game
    high = env.observation_space.high
    assert (high[: game.num_columns * game.max_depth + game.num_cells] == 54).all()
    assert (high[-2 - game.num_piles : -2] == 13).all() and high[-1] == 18 and high[-2] == 1
    assert make("joker", jokers=2).observation_space.high[-4:-2].tolist() == [51, 51]
    assert make("36").observation_space.high[-6:-2].tolist() == [9, 9, 9, 9]
    # a state whose stage or columns the space cannot hold is no state of the variant: refused as before
    with pytest.raises(ValueError, match=r"stage=200: expected .* and 0\.\.199"):
        env = make("classic", redeal="reverse", stages=200)
        env.reset(seed=0)
        env.reset(options={"state": env.state._replace(stage=200)})


@pytest.mark.parametrize("overrides, message", [
    (dict(redeal="reverse", stages=MAX_STAGES + 1), r"stages=32768: expected an integer 1\.\.32767 \(the "
                                                    r"observation holds the stage as an int16\)"),
    (dict(redeal="reverse", stages=40000), r"stages=40000: expected an integer 1\.\.32767"),
    (dict(variant="104-aces-kings", column_size=1), r"column_size=1: expected at least 6 with columns=None \(the "
                                                    r"104 cards in 1-card columns fill 104 columns; a deal lays out "
                                                    r"at most 20\)"),
    (dict(deal="columns", columns=None, column_size=2), r"column_size=2: expected at least 3 with columns=None"),
    (dict(columns=21), r"columns=21: expected an integer 1\.\.20"),
])
def test_too_many_stages_or_columns_are_refused_naming_the_option(overrides, message):
    kw = {"variant": "classic", **overrides}
    with pytest.raises(ValueError, match=message):
        make(**kw)
    with pytest.raises(ValueError, match=message):
        SoliterGame(kw.pop("variant"), **kw)


def test_a_game_of_many_stages_is_built_without_a_layout_per_stage(monkeypatch):
    """Before, the deal depth laid out the deck once per stage: 32767 layouts for ``stages=32767`` (and 10**5
    stages took a second).  Only a shuffle redeal lays out a different number of columns each stage."""
    calls = []
    lay_out = SoliterGame._lay_out
    monkeypatch.setattr(SoliterGame, "_lay_out", lambda self, *a: calls.append(1) or lay_out(self, *a))
    game = SoliterGame("classic", redeal="reverse", stages=MAX_STAGES)
    assert len(calls) <= 2 and game.deal_depth == 7 and game.max_depth == 20
    calls.clear()
    game = SoliterGame("104-aces-kings", stages=MAX_STAGES)
    assert len(calls) <= 2 and game.deal_depth == 13 and game.max_depth == 26
    assert SoliterGame("multistage").deal_depth == 104  # the last stage deals all 104 cards into one column


def test_observation_ends_with_the_stage_and_the_columns_in_play():
    env = make("multistage")
    obs, _ = env.reset(seed=1)
    assert obs[-2] == 0 and obs[-1] == env.state.open_columns == env.game.num_columns
    obs, _ = env.reset(options={"state": env.game.redeal(env.state)})  # stage 2: one column fewer
    assert obs[-2] == 1 and obs[-1] == env.game.num_columns - 1


def _two_deck_position(variant: str, foundations: tuple[int, ...], tail: str):
    """A two-deck position with ``tail`` playable on column 0 and the given foundation counts (the rest is filler)."""
    game = SoliterGame(variant)
    state = game.deal(np.random.default_rng(0))
    king = C("K♠")
    cols = [(king, C(tail))] + [() for _ in state.columns[1:]]
    return game, state._replace(columns=tuple(cols), cells=(EMPTY,) * game.num_cells, foundations=foundations)


@pytest.mark.parametrize(
    "variant, one_two_home, both_twos_home",
    [
        # two ace-up piles per suit: pile 0 holds A♣ 2♣, pile 4 an A♣ (the other 2♣ is out), then 2♣ too
        ("104", (2, 0, 0, 0, 1, 0, 0, 0), (2, 0, 0, 0, 2, 0, 0, 0)),
        # ace-up pile 0 holds A♣ 2♣; the king-down pile 4 holds K♣..3♣ (11 cards), then K♣..2♣ (12 cards)
        ("104-aces-kings", (2, 0, 0, 0, 11, 0, 0, 0), (2, 0, 0, 0, 12, 0, 0, 0)),
    ],
)
def test_solver_sends_a_two_deck_card_home_only_when_both_copies_below_it_are_home(variant, one_two_home,
                                                                                  both_twos_home):
    from pokersquares_env.soliter.solver import _Search

    game, state = _two_deck_position(variant, one_two_home, "3♣")
    search = _Search(game)
    auto = search._auto_fast if search.fast else search._auto  # 104: the fast path; aces-kings: the general one
    assert not search._safe_home(state, C("3♣"))  # one 2♣ is still out: it may yet be built on 3♣
    actions: list[int] = []
    assert auto(state, actions) == state and actions == []  # so 3♣ stays on its column
    game, state = _two_deck_position(variant, both_twos_home, "3♣")
    assert search._safe_home(state, C("3♣"))
    actions = []
    after = auto(state, actions)  # every 2♣ is home: 3♣ goes to pile 0 at once
    assert actions == [game.encode(0, game.pile_base + 0)] and after.columns[0] == (C("K♠"),)
    assert after.foundations == (3,) + both_twos_home[1:]


# ---------------------------------------------------------------- audit fixes: jokers, column depth, messages
def _card(game: SoliterGame, text: str) -> int:
    """A card code from text; ``"JK"`` / ``"JK2"`` are the jokers."""
    return 51 + int(text[2:] or 1) if text.startswith("JK") else C(text)


def _position(game: SoliterGame, cols, cells=(), foundations=None, jokers=None, filler=None):
    """A checked position: ``cols`` (text, first-dealt card first), the cells, foundation counts and joker meanings
    (text or None); the cards left over go under column ``filler`` (default: the last one), a few to a column when
    ``filler`` is a list."""
    foundations = tuple(foundations or (0,) * game.num_piles)
    columns = [[_card(game, t) for t in col] for col in cols] + [[] for _ in range(game.num_columns - len(cols))]
    cell_codes = [_card(game, t) for t in cells] + [EMPTY] * (game.num_cells - len(cells))
    meanings = tuple(EMPTY if y is None else C(y) for y in (jokers or (None,) * len(game.jokers)))
    state = game.deal(np.random.default_rng(0))._replace(
        columns=(), cells=tuple(cell_codes), foundations=foundations, jokers=meanings)
    rest = list(game.deck)
    for c in [c for col in columns for c in col] + [c for c in cell_codes if c != EMPTY] + game._home_cards(state):
        rest.remove(c)
    targets = filler if isinstance(filler, list) else [game.num_columns - 1 if filler is None else filler]
    for k, c in enumerate(rest):
        columns[targets[k % len(targets)]].insert(0, c)
    return game.check_state(state._replace(columns=tuple(tuple(c) for c in columns)))


def _mask_agrees(game: SoliterGame, state) -> np.ndarray:
    """The action mask, checked against ``why_illegal`` and ``legal_moves`` action by action."""
    mask = game.action_mask(state)
    assert np.array_equal(mask.astype(bool), [game.why_illegal(state, a) is None for a in range(game.num_actions)])
    moves = {game.encode(s, d) for s, d in game.legal_moves(state)}
    assert moves == set(np.flatnonzero(mask).tolist()) - {game.redeal_action}
    return mask


def _columns_of(game: SoliterGame, obs: np.ndarray) -> list[tuple[int, ...]]:
    depth = game.max_depth
    return [tuple(int(x) for x in obs[i * depth : (i + 1) * depth] if x != EMPTY) for i in range(game.num_columns)]


def test_a_moving_joker_does_not_count_its_own_meaning_against_an_equivalent_spot():
    """Before: JK1 standing for 8♥ (on 9♥) could not go onto JK2 standing for 9♥, because JK1's own meaning counted
    as "another joker" standing for 8♥; yet JK1 could get there through an empty column.  The same with two decks:
    a joker standing for 8♥ could not pass from one 9♥ to the other while the other 8♥ was home."""
    from pokersquares_env.soliter.solver import _Search

    game = SoliterGame("joker", jokers=2)
    state = _position(game, [["9♥", "JK1"], ["T♥", "JK2"], ["2♣"], []], jokers=("8♥", "9♥"))
    mask = _mask_agrees(game, state)
    assert mask[game.encode(0, 1)] and game.why_illegal(state, game.encode(0, 1)) is None
    assert (0, 1) in _Search(game)._moves(state)  # the solver's joker path sees it too
    after, _ = game.apply(state, game.encode(0, 1))
    # JK1 keeps standing for 8♥; the move exposes 9♥, which JK2 stands for, so 9♥ and JK2 swap at once
    assert after.columns[1][-3:] == (C("T♥"), C("9♥"), 52) and after.columns[0] == (53,)
    assert after.jokers == (C("8♥"), EMPTY)
    _mask_agrees(game, after)
    # two decks, one joker, one 8♥ home: the joker standing for the other 8♥ may pass to the twin 9♥
    game = SoliterGame("104", jokers=1)
    home = (0, 0, 8, 0, 0, 0, 0, 0)  # A♥..8♥ on one heart pile
    state = _position(game, [["9♥", "JK"], ["9♥"], ["2♣"]], foundations=home, jokers=("8♥",), filler=9)
    mask = _mask_agrees(game, state)
    assert mask[game.encode(0, 1)] and game.why_illegal(state, game.encode(0, 1)) is None
    assert game.apply(state, game.encode(0, 1))[0].jokers == (C("8♥"),)
    # another joker's meaning still counts: one deck, JK1 stands for 8♥, so JK2 may not stand for it on JK3 (9♥)
    game = SoliterGame("joker", jokers=3)
    state = _position(game, [["9♥", "JK1"], ["T♥", "JK3"], ["JK2"], ["2♣"]], jokers=("8♥", None, "9♥"))
    assert not _mask_agrees(game, state)[game.encode(2, 1)]
    assert game.why_illegal(state, game.encode(2, 1)).endswith(
        "JK2 cannot go on JK3 (standing for 9♥): there it would stand for 8♥, for which JK1 already stands")


def test_joker_refusals_say_why_and_name_the_cards():
    """Before, every one of these said "the joker cannot stand for a card that is available here"."""
    game = SoliterGame("joker")

    def why(cols, src, dst, **kw):
        return game.why_illegal(_position(game, cols, **kw), game.encode(src, dst))

    assert why([["A♣"], ["JK"]], 1, 0).endswith(
        "JK cannot go on A♣: there it would stand for the card below A♣, and no card is below an ace")
    assert why([["JK"], ["K♥"]], 1, 0).endswith(
        "K♥ cannot go on JK, which stands for nothing: under K♥ it would stand for the card above a king, and there "
        "is none")
    assert why([["3♣"], ["JK"]], 1, 0, foundations=(2, 0, 0, 0)).endswith(
        "JK cannot go on 3♣: there it would stand for 2♣, which is already home")
    assert why([["JK"], ["Q♦"]], 1, 0, jokers=("8♣",)).endswith(
        "Q♦ cannot go on JK (standing for 8♣), which takes only 7♣ (down in suit)")
    assert why([["5♦", "JK"], ["A♠"]], 1, 0, jokers=("2♥",)).endswith(
        "A♠ cannot go on JK (standing for 2♥), which takes only A♥ (down in suit)")
    assert why([["A♣"], ["7♦"]], 1, 0).endswith(  # it said "which takes only nothing (an ace) (down in suit)"
        "7♦ cannot go on A♣, which takes nothing: no card is below an ace")
    assert why([["5♦", "JK"], ["7♦"]], 1, 0, jokers=("A♥",)).endswith(
        "7♦ cannot go on JK (standing for A♥), which takes nothing: no card is below an ace")
    game = SoliterGame("joker", jokers=2)
    assert why([["JK1"], ["JK2"]], 1, 0).endswith(
        "JK2 cannot go on JK1, which stands for nothing: a joker on it would stand for nothing either (only a real "
        "card may go on a joker that stands for nothing)")
    assert why([["9♣", "JK1"], ["JK2"], ["7♣"]], 2, 1, jokers=("8♣", None)).endswith(
        "7♣ cannot go on JK2, which stands for nothing: under 7♣ it would stand for 8♣, for which JK1 already stands")
    game = SoliterGame("104", jokers=1)
    assert why([["3♣"], ["JK"]], 1, 0, foundations=(2, 0, 0, 0, 2, 0, 0, 0), filler=9).endswith(
        "JK cannot go on 3♣: there it would stand for 2♣, but both copies are home")


def test_max_depth_bounds_the_columns_of_every_redeal():
    """Before: with ``deal="columns", columns=None, redeal="shuffle"`` max_depth was 26, but the last stage deals all
    52 cards into one column, which the observation spilled into the next column's slots."""
    env = make("classic", deal="columns", columns=None, redeal="shuffle")
    game = env.game
    state = game.deal(np.random.default_rng(0))
    for _ in range(game.variant.num_stages - 1):
        state = game.redeal(state)
    assert state.open_columns == 1 and len(state.columns[0]) == 52 <= game.max_depth
    obs, _ = env.reset(options={"state": state})
    assert _columns_of(game, obs) == list(state.columns)


def test_a_reverse_redeal_is_laid_out_as_the_variant_deals():
    """The source: the reversed cards are "laid out again", the player "again lays out" the columns.  Before, a
    ``deal="rows"`` variant was redealt in 13-card columns: with ``columns=2``, 13 and 39 cards."""
    for columns in (8, 2):
        game = SoliterGame("classic", redeal="reverse", columns=columns)
        state = game.deal(np.random.default_rng(1))
        nxt = game.redeal(state)
        gathered = [c for col in state.columns for c in col][::-1]
        assert nxt.columns == game.init(gathered).columns and nxt.open_columns == columns
        assert max(len(c) for c in nxt.columns) == -(-52 // columns) == game.deal_depth
    aces_kings = SoliterGame("104-aces-kings")  # deal="columns": 13-card columns as far as the cards go
    state = aces_kings.deal(np.random.default_rng(1))
    state = state._replace(columns=((), state.columns[1][7:]) + state.columns[2:])  # 84 cards left (20 home, say)
    assert [len(c) for c in aces_kings.redeal(state).columns] == [13] * 6 + [6, 0]


def test_a_joker_column_can_outgrow_a_deal_and_a_suit_and_the_observation_holds_it():
    """A joker that swaps onto the end of a run stands for nothing, so a new run starts on it: a column can hold
    more than its deal plus a full suit.  Before, max_depth (21 for ``joker``) assumed it could not, and the
    observation spilled the column into the next one."""
    env = make("joker")
    game = env.game
    spades = ["K♠", "Q♠", "J♠", "T♠", "9♠", "8♠", "7♠", "6♠", "5♠", "4♠", "3♠"]
    state = _position(game, [["2♦", "3♦", *spades], ["JK"], ["K♥", "2♠"], ["Q♥"], ["J♥"], ["T♥"], ["9♥"]],
                      cells=["8♥", "7♥", "6♥", "5♥"], jokers=("2♠",))  # the joker kept 2♠ from A♠, since gone home
    env.reset(options={"state": state})
    cb = game.cell_base
    for src in (2, 3, 4, 5, 6, cb, cb + 1, cb + 2, cb + 3):  # 2♠ swaps with the joker; Q♥ on it; K♥ swaps in ...
        obs, *_ = env.step(game.encode(src, 0))
    col = env.state.columns[0]
    hearts = ["K♥", "Q♥", "J♥", "T♥", "9♥", "8♥", "7♥", "6♥", "5♥"]
    assert [card_text(c) for c in col] == ["2♦", "3♦", *spades, *hearts] and env.state.jokers == (EMPTY,)
    assert len(col) == 22 > 7 + 13 + 1 and game.max_depth == len(game.deck)  # 7 + 13 + 1: the old max_depth
    assert game.check_state(env.state) is env.state
    assert _columns_of(game, obs) == list(env.state.columns)


def test_check_state_refuses_a_column_longer_than_max_depth_and_encode_never_spills():
    from pokersquares_env.soliter.env import encode_observation

    env = make("classic")
    game = env.game
    one = game.init(list(game.deck))._replace(columns=(tuple(game.deck),) + ((),) * 7)
    with pytest.raises(ValueError, match=r"columns\[0\] \(column 1\) has 52 cards: .*holds at most 20"):
        env.reset(options={"state": one})
    with pytest.raises(ValueError, match="column 1 has 52 cards: the observation .* holds at most 20"):
        encode_observation(game, one)
    # 20 cards, but K♠ as the 19th card could take Q♠..2♠ once A♣ and 2♣ were gone: 30 cards
    cols = [[C(t) for t in ("A♣", "2♣")], [], [], [], [], [], [], []]
    rest = [c for c in game.deck if c not in (C("A♣"), C("2♣"), C("K♠"))]
    cols[0] = rest[:17] + [C("K♠")] + cols[0]
    for k, c in enumerate(rest[17:]):
        cols[1 + k % 7].append(c)
    grows = one._replace(columns=tuple(tuple(c) for c in cols))
    with pytest.raises(ValueError, match=r"columns\[0\] \(column 1\) has 20 cards and could grow to 30: its card "
                                         r"18 \(K♠\)"):
        game.check_state(grows)
    # a 90-card column of the two-deck game: before, reset failed with a numpy broadcast error
    env = make("104-aces-kings")
    game = env.game
    state = game.deal(np.random.default_rng(0))
    flat = [c for col in state.columns for c in col]
    long = state._replace(columns=(tuple(flat[:90]), tuple(flat[90:])) + ((),) * 6)
    with pytest.raises(ValueError, match=r"columns\[0\] \(column 1\) has 90 cards: .*holds at most 26"):
        env.reset(options={"state": long})


def test_positions_reached_in_play_pass_the_depth_checks():
    """Random play in variants whose redeals lay out long columns: every position passes check_state, and the
    observation gives back its columns exactly."""
    for kw in ({"redeal": "reverse", "columns": 2}, {"deal": "columns", "columns": None, "redeal": "shuffle"}):
        env = make("classic", **kw)
        game = env.game
        rng = np.random.default_rng(0)
        obs, info = env.reset(seed=0)
        for _ in range(150):
            legal = np.flatnonzero(info["action_mask"])
            if not len(legal):
                break
            redeal = game.redeal_action in legal
            obs, _r, term, trunc, info = env.step(game.redeal_action if redeal else int(rng.choice(legal)))
            assert game.check_state(env.state) is env.state
            assert _columns_of(game, obs) == list(env.state.columns)
            if term or trunc:
                break


def test_deck_may_be_given_as_an_integer():
    """Before: ``deck=36`` failed with "deck=36: expected '52' or '36'"."""
    assert Variant(deck=36, columns=6).deck == "36" and get_variant("classic", deck=np.int64(52)).deck == "52"
    assert make("classic", deck=36, columns=6).game.levels == 9
    with pytest.raises(ValueError, match=r"deck=40: expected '52' or '36' \(the string, or the integer 52 or 36\)"):
        Variant(deck=40)


# ---------------------------------------------------------------- audit fixes: proofs, frames, state checks
def _brute_force_wins(game: SoliterGame, start) -> bool:
    """Whether any sequence of legal actions wins (every action tried, positions compared exactly)."""
    seen, stack = {start}, [start]
    while stack:
        state = stack.pop()
        if game.is_won(state):
            return True
        for a in game.legal_actions(state):
            nxt, _ = game.apply(state, a, check=False)
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return False


@pytest.mark.parametrize("seed", [6, 9, 20, 331, 1019])
def test_an_exhausted_search_with_a_redeal_is_a_proof(seed):
    """A redeal gathers the columns and cells in order, so positions that differ only in their order may redeal
    differently.  Before, the solver keyed them as one position and tried only the first empty column or cell, and
    "proved" deals 20 and 1019 of this variant unsolvable (exhausted=True) though they have wins.  Deal 331 needs
    every move before the last stage as well: with the pruned moves there, it too was "proved" unsolvable."""
    game = SoliterGame("36", redeal="reverse", columns=5, free_cells=2)
    state = game.deal(np.random.default_rng(seed))
    res = solve_result(state, max_seconds=20, game=game)
    wins = _brute_force_wins(game, state)
    assert (res.plan is not None) == wins and res.proved == res.exhausted == (not wins)
    if wins:
        env = SoliterEnv("36", redeal="reverse", columns=5, free_cells=2, max_steps=100_000)
        env.reset(options={"state": state})
        info = {"won": False}
        for a in res.plan:
            *_, info = env.step(a)
        assert info["won"]


def test_an_exhausted_search_is_a_proof_only_where_the_pruning_is_exact():
    """One deck without jokers: exhausted means proved.  With a joker (and with two decks or king foundations) the
    pruned space holds no win, which is no proof: ``proved`` stays False (the CLI's words: the next test)."""
    env = make("36", free_cells=1)
    env.reset(seed=0)
    res = solve_result(env, 5)
    assert res.plan is None and res.exhausted and res.proved and "proved=True" in repr(res)
    env = make("36", jokers=1, free_cells=1)
    env.reset(seed=0)
    res = solve_result(env, 5)
    assert res.plan is None and res.exhausted and not res.proved


def test_cli_solve_says_no_win_exists_only_for_a_proof(capsys):
    from pokersquares_env.cli import main

    assert main(["soliter", "solve", "--variant", "36", "--free-cells", "1", "--seed", "0"]) == 1
    out = capsys.readouterr().out
    assert "no win exists" in out
    assert main(["soliter", "solve", "--variant", "36", "--jokers", "1", "--free-cells", "1", "--seed", "0"]) == 1
    out = capsys.readouterr().out
    assert "no win exists" not in out and "not a proof for this variant" in out


def test_solve_checks_a_bare_state_against_the_rules_it_is_solved_under():
    """Before, a bare state without ``game=`` was solved under classic rules, unchecked: a 36-card deal with a
    57-move win came out "exhausted"."""
    game = SoliterGame("36")
    state = game.deal(np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"state: 6 columns: the 'classic' variant has 8 .*pass game="):
        solve_result(state, 0.5)
    with pytest.raises(ValueError, match=r"the 'classic' variant has 8"):
        solve(state, 0.5, variant="classic")
    assert solve_result(state, 5, variant="36").plan is not None
    res = solve_result(state, 5, game=game)
    assert res.plan is not None and len(res.plan) == 57
    other = SoliterGame("36", free_cells=3)  # the same shape but another cell count: refused
    with pytest.raises(ValueError, match=r"4 cells: the '36' variant has 3"):
        solve(state, 0.5, game=other)
    with pytest.raises(TypeError, match=r"game='36': expected a SoliterGame"):
        solve(state, 0.5, game="36")
    env = make("classic")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"game= has the rules of .*'36'.*, but the env plays .*'classic'"):
        solve(env, 0.5, game=game)


def test_solve_checks_its_budget_naming_the_bad_value():
    """Before: max_nodes='10' failed inside the search, -1 and 1.5 were accepted, and np.float32(1) seconds were
    refused as "expected a positive number"."""
    env = make("classic")
    env.reset(seed=1)
    for bad, kind in (("10", TypeError), (1.5, TypeError), (True, TypeError), (-1, ValueError), (0, ValueError)):
        with pytest.raises(kind, match=re.escape(f"max_nodes={bad!r}: expected a positive integer")):
            solve_result(env, 1.0, max_nodes=bad)
    for bad, kind in (("1", TypeError), (None, TypeError), (0, ValueError), (-2.5, ValueError),
                      (float("nan"), ValueError)):
        with pytest.raises(kind, match=re.escape(f"max_seconds={bad!r}: expected a")):
            solve_result(env, bad)
    assert solve_result(env, np.float32(5), max_nodes=np.int64(100_000)).plan is not None
    assert solve_result(env, float("inf"), max_nodes=3).nodes == 4  # no time limit: the node budget ends it


def _play_frames(env, seed: int, steps: int) -> tuple[list[np.ndarray], list[int]]:
    """The frames of a seeded episode of random legal moves (redealing whenever allowed), and the depth of the
    deepest column of each position."""
    _, info = env.reset(seed=seed)
    game = env.unwrapped.game
    rng = np.random.default_rng(seed)
    frames = [env.render()]
    depths = [max(len(c) for c in env.unwrapped.state.columns)]
    for _ in range(steps):
        legal = np.flatnonzero(info["action_mask"])
        if not len(legal):
            break
        redeal = game.redeal_action is not None and info["action_mask"][game.redeal_action]
        _, _, term, trunc, info = env.step(game.redeal_action if redeal else int(rng.choice(legal)))
        frames.append(env.render())
        depths.append(max(len(c) for c in env.unwrapped.state.columns))
        if term or trunc:
            break
    return frames, depths


@pytest.mark.parametrize("variant, kw, seed", [("classic", {}, 0), ("joker", {"jokers": 2}, 2), ("multistage", {}, 0)])
def test_every_frame_of_an_env_has_the_same_size(variant, kw, seed):
    """Before, the frame's height followed the deepest column, so it changed within an episode and Gymnasium's
    RecordVideo and HumanRendering failed."""
    pytest.importorskip("PIL")
    from pokersquares_env.soliter.viewer import frame_size

    env = make(variant, render_mode="rgb_array", **kw)
    frames, depths = _play_frames(env, seed=seed, steps=200)
    shape = frame_size(env.game) + (3,)
    assert max(depths) > depths[0]  # a column grew deeper than any of the deal
    assert {f.shape for f in frames} == {shape}
    state = env.game.deal(np.random.default_rng(0))
    if env.game.has_redeal:  # the last stages: one or two long columns, drawn squeezed into the same frame
        for _ in range(env.game.variant.num_stages - 2):
            state = env.game.redeal(state)
        assert max(len(c) for c in state.columns) > 26
    env.reset(options={"state": state})
    assert env.render().shape == shape


def test_human_render_mode_shows_a_whole_episode(monkeypatch):
    """``render_mode="human"`` shows every frame in one window; before, ``gym.make`` wrapped the env in
    HumanRendering, which asserted that every frame had the first frame's size, and the first build onto the deepest
    column failed it."""
    from pokersquares_env.soliter.viewer import frame_size

    pytest.importorskip("PIL")
    pytest.importorskip("pygame")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    env = gym.make("Soliter-v0", render_mode="human")
    try:
        _, info = env.reset(seed=0)
        game, state = env.unwrapped.game, env.unwrapped.state
        deepest = max(len(c) for c in state.columns)
        onto = [a for a in np.flatnonzero(info["action_mask"])
                if game.decode(a)[1] < game.num_columns and len(state.columns[game.decode(a)[1]]) == deepest]
        assert onto  # seed 0 has a build onto a 7-card column: the column grows past the deal
        env.step(int(onto[0]))
        rng = np.random.default_rng(0)
        for _ in range(40):
            legal = np.flatnonzero(info["action_mask"])
            _, _, term, trunc, info = env.step(int(rng.choice(legal)))
            if term or trunc:
                break
        assert env.render() is None  # shown, not returned
        height, width = frame_size(env.unwrapped.game)
        assert env.unwrapped._renderer._window.get_size() == (width, height)
    finally:
        env.close()
    assert env.unwrapped._renderer is None  # the window is closed


@pytest.mark.parametrize("how", ["gym.make", "SoliterEnv"])
def test_human_render_mode_without_pygame_names_the_extra(monkeypatch, how):
    """Without pygame, ``gym.make("Soliter-v0", render_mode="human")`` raised Gymnasium's DependencyNotInstalled,
    which told to install ``gymnasium[classic-control]`` (at the first reset), and ``SoliterEnv`` refused the mode;
    both now name the package's extra when the env is made, as ``PokerSquares-v0`` does."""
    pytest.importorskip("PIL")
    monkeypatch.setitem(sys.modules, "pygame", None)  # makes `import pygame` fail
    with pytest.raises(ImportError, match=r'^render_mode="human" needs pygame: pip install "pokersquares_env\[human\]"$'):
        env = gym.make("Soliter-v0", render_mode="human") if how == "gym.make" else SoliterEnv(render_mode="human")
        env.reset(seed=0)


def test_check_state_refuses_cards_in_a_column_out_of_play_and_columns_that_do_not_match_the_stage():
    """Before, a state (or a column deal) with cards in a column out of play was accepted, and the next redeal,
    which gathers only the columns in play, deleted them."""
    env = make("multistage")
    env.reset(seed=0)
    kept = env.state
    with pytest.raises(ValueError, match=r"open_columns=7 at stage 0: expected 8 .*first deal lays out 8 columns"):
        env.reset(options={"state": kept._replace(open_columns=7)})
    with pytest.raises(ValueError, match=r"columns\[7\] \(column 8\) holds 13 cards \(.*\) but is out of play \(7 "
                                         r"columns in play at stage 1\): expected it empty"):
        env.reset(options={"state": kept._replace(stage=1, open_columns=7)})
    assert env.state is kept
    redealt = env.game.redeal(kept)
    assert env.game.check_state(redealt) is redealt
    with pytest.raises(ValueError, match=r"open_columns=8 at stage 1: expected 7 .*each redeal one fewer"):
        env.game.check_state(redealt._replace(open_columns=8))
    # a column deal with cards in a column the first deal does not lay out (9 allowed, 8 dealt)
    env = make("104-aces-kings", columns=9)
    deck = list(env.game.deck)
    cols = [deck[12 * i : 12 * (i + 1)] for i in range(8)] + [deck[96:]]
    with pytest.raises(ValueError, match=r"deal column 9 has 8 cards \(J♠ J♠ Q♠ Q♠ K♠ K♠ A♠ A♠\): expected it "
                                         r"empty, since the first deal of variant '104-aces-kings' lays out 8 "
                                         r"columns \(column 9 is out of play"):
        env.reset(options={"deal": cols})
    state = env.game.deal(np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"columns\[8\] \(column 9\) holds 1 card \(.*\) but is out of play"):
        env.game.check_state(state._replace(columns=state.columns[:7] + (state.columns[7][1:],
                                                                         state.columns[7][:1])))
    # a reverse redeal of 13-card columns lays out as many as the cards fill: 104 cards need 8
    with pytest.raises(ValueError, match=r"open_columns=7 at stage 1: expected 8 in .*the 104 cards in play fill "
                                         r"at least 8"):
        env.game.check_state(state._replace(stage=1, open_columns=7))
    assert env.game.check_state(env.game.redeal(state)) is not None


def test_a_shuffle_redeal_of_a_column_deal_deals_one_column_fewer_each_stage():
    """Before: with ``deal="columns", columns=10`` the first deal laid out 8 columns (104 cards in 13s), stage 2
    laid out 9, and there were 10 stages."""
    game = SoliterGame("multistage", deal="columns", columns=10)
    assert game.variant.first_columns == 8 and game.variant.num_stages == 8
    state = game.deal(np.random.default_rng(0))
    opened = [state.open_columns]
    while state.stage + 1 < game.variant.num_stages:
        state = game.redeal(state)
        assert game.check_state(state) is state
        opened.append(state.open_columns)
    assert opened == [8, 7, 6, 5, 4, 3, 2, 1]
    with pytest.raises(ValueError, match=r"stages=9: expected at most 8 \(the first deal's columns"):
        Variant(decks=2, deal="columns", columns=10, redeal="shuffle", stages=9)


def test_check_state_refuses_a_joker_meaning_that_no_play_can_give():
    """Before: a joker in a free cell standing for a card was accepted, and the first move that exposed that card
    swapped it with a second copy of the joker, losing the card."""
    env = make("joker")
    env.reset(seed=0)
    game, kept = env.game, env.state
    cols = [[c for c in col if c != 52] for col in kept.columns]
    y = cols[0][-2]  # the card under column 1's playable card
    in_cell = kept._replace(columns=tuple(tuple(c) for c in cols), cells=(52,) + kept.cells[1:], jokers=(y,))
    with pytest.raises(ValueError, match=re.escape(f"jokers[0]={y} (JK standing for {card_text(y)}), but JK is in "
                                                   f"cell 1: expected -1")):
        env.reset(options={"state": in_cell})
    assert env.state is kept
    assert game.check_state(in_cell._replace(jokers=(EMPTY,))) is not None  # standing for nothing: fine
    assert game.check_state(kept._replace(jokers=(y,))) is not None  # in a column: fine
    # two jokers standing for the one 8♥ of the deck; a joker standing for a card that is home
    game = SoliterGame("joker", jokers=2)
    both = _position(game, [["9♥", "JK1"], ["T♥", "JK2"], ["2♣"]], jokers=None)
    with pytest.raises(ValueError, match=r"JK1 and JK2 stand for 8♥, which has 1 copy off the foundations"):
        game.check_state(both._replace(jokers=(C("8♥"), C("8♥"))))
    home = _position(game, [["9♥", "JK1"], ["T♥", "JK2"]], foundations=(0, 0, 8, 0), jokers=None)
    with pytest.raises(ValueError, match=r"JK1 stands for 8♥, which has no copy off the foundations"):
        game.check_state(home._replace(jokers=(C("8♥"), EMPTY)))


def test_the_text_board_names_each_joker_as_its_legend_does():
    """Before, the board showed every joker as "JK" while the legend and the messages said JK1, JK2."""
    game = SoliterGame("joker", jokers=2)
    state = _position(game, [["9♥", "JK1"], ["T♥"], ["2♣"]], cells=["JK2"], jokers=("8♥", None))
    text = game.text(state)
    assert re.search(r"^cells:\s+JK2 \.\.", text, re.M) and re.search(r"^\s+\d+\s+JK1\b", text, re.M)
    assert text.rstrip().endswith("jokers: JK1=8♥") and " JK " not in text
    one = SoliterGame("joker")
    assert "JK" in one.text(one.deal(np.random.default_rng(0)))  # a lone joker is plain JK


def test_reset_to_a_won_position_says_it_is_won():
    """Before: "has no legal move: the game is lost before it starts"."""
    env = make("classic")
    env.reset(seed=0)
    kept = env.state
    won = kept._replace(columns=((),) * 8, foundations=(13,) * 4)
    with pytest.raises(ValueError, match=r"options\['state'\] is already won \(all 52 cards are home\)"):
        env.reset(options={"state": won})
    assert env.state is kept


@pytest.mark.filterwarnings(  # check_env's render check opens render_mode="human" too, here with no display
    "ignore:render_mode='human' found no display:RuntimeWarning")
@needs("PIL")
def test_check_env_needs_the_penalty_mode_as_the_docs_say():
    """Gymnasium's check_env steps random actions: with the default illegal_action="raise" the first illegal one
    raises, as docs/soliter.md now says (it only said to use the penalty mode for check_env)."""
    from pathlib import Path

    with pytest.raises(IllegalMoveError):
        check_env(gym.make("Soliter-v0").unwrapped, skip_render_check=True)
    check_env(gym.make("Soliter-v0", illegal_action="penalty").unwrapped)  # default variant, steps and render check
    doc = (Path(__file__).resolve().parents[1] / "docs" / "soliter.md").read_text(encoding="utf-8")
    assert 'with the default `"raise"`, `gymnasium.utils.env_checker.check_env` fails' in doc


@pytest.mark.parametrize("mode", ["raise", "penalty"])
def test_an_int_subclass_action_plays_its_move_and_a_bool_stays_refused(mode):
    """Before, an IntEnum member naming a legal move was refused as illegal (PokerSquares-v0 had been mended, Soliter-v0
    not): under the penalty a legal move ended the episode with the penalty."""
    import enum

    env = gym.make("Soliter-v0", illegal_action=mode)
    _, info = env.reset(seed=0)
    legal = int(np.flatnonzero(info["action_mask"])[0])
    move = enum.IntEnum("Move", {"FIRST": legal}).FIRST
    _, reward, terminated, _, info = env.step(move)
    assert not terminated and "illegal_action" not in info
    assert env.unwrapped.steps == 1
    env.reset(seed=0)
    if mode == "raise":
        with pytest.raises(IllegalMoveError, match=r"action True is not an integer: expected an integer 0\.\.255"):
            env.step(True)
    else:
        _, reward, terminated, _, info = env.step(True)
        assert terminated and "illegal_action" in info


def test_a_deal_given_as_bytes_is_refused_as_the_poker_squares_deck_is():
    """Before, ``bytes(range(52))`` was read as the codes 0..51."""
    env = gym.make("Soliter-v0")
    with pytest.raises(TypeError, match=r"deal b'.*: expected the deck in dealing order .*, got bytes"):
        env.reset(options={"deal": bytes(range(52))})


def test_cli_play_says_why_no_free_cell_or_foundation_takes_a_card(monkeypatch, capsys):
    """Before, `c1 h` (any foundation) said only "no such move is legal now"; each place now gives its reason."""
    status, out = _soliter_play(monkeypatch, capsys, "c1 h\nc1 f\nc2 f\nc3 f\nc4 f\nc5 f\nq\n")
    assert status == 0
    home = next(line for line in out.splitlines() if line.startswith("illegal: no foundation takes it now: "))
    assert home.count("does not fit foundation") == 4 and "which takes A" in home
    cells = next(line for line in out.splitlines() if line.startswith("illegal: no free cell takes it now: "))
    assert cells.count("already holds") == 4


def test_encode_decode_and_card_text_refuse_what_is_not_an_integer():
    """An audit found encode(1.5, 2) returning 26.0, card_text('5') giving '7♣' (int() of anything), and
    decode(576.0) reading a float as the redeal of a multistage game."""
    from pokersquares_env.soliter import SoliterGame, card_text

    game = SoliterGame()
    for bad in (1.5, True, "1"):
        with pytest.raises(TypeError, match=re.escape(f"source {bad!r} is not an integer")):
            game.encode(bad, 2)
    with pytest.raises(TypeError, match="destination 2.0 is not an integer"):
        game.encode(1, 2.0)
    assert game.encode(np.int64(1), 2) == game.encode(1, 2) and type(game.encode(np.int64(1), 2)) is int
    for bad in ("5", 5.9, True):
        with pytest.raises(TypeError, match=re.escape(f"card code {bad!r}: expected an integer")):
            card_text(bad)
    assert card_text(np.int8(5)) == card_text(5)
    multistage = SoliterGame("multistage")
    assert multistage.decode(multistage.redeal_action) is None
    for bad in (float(multistage.redeal_action), "x", 2.0):
        with pytest.raises(TypeError, match=re.escape(f"action {bad!r} is not an integer")):
            multistage.decode(bad)


# ---- pinned by a mutation audit (each test failed on a change that every other test let through) ------------------


def test_joker_swaps_with_its_card_in_a_free_cell():
    """A card in a free cell is playable, so a joker standing for it swaps with it."""
    env = make("joker")
    g = env.game
    env.reset(options={"deal": columns_with_tops(g, {0: ["JK"], 1: ["9♥"], 2: ["8♥"]})})
    env.step(act(g, 2, g.cell_base))  # 8♥ to cell 1
    env.step(act(g, 0, 1))  # JK on 9♥ stands for 8♥, which waits in the cell
    s = env.state
    assert s.columns[1][-2:] == (C("9♥"), C("8♥")) and s.cells[0] == 52 and s.jokers == (-1,)


def test_a_joker_that_moves_stands_for_nothing():
    env = make("joker")
    g = env.game
    env.reset(options={"deal": columns_with_tops(g, {0: ["JK"], 1: ["9♥"], 2: ["8♥", "2♦"]})})
    env.step(act(g, 0, 1))
    assert env.state.jokers == (C("8♥"),)
    env.step(act(g, 1, g.cell_base))  # the joker leaves 9♥ for a cell
    assert env.state.jokers == (-1,)
    g.check_state(env.state)


def test_a_reverse_redeal_gathers_the_columns_then_the_cells_in_order():
    """docs/soliter.md: the columns in play are gathered first, in order, then the free cells."""
    g = SoliterGame("36", redeal="reverse")
    s = g.deal(np.random.default_rng(1))
    a, b = s.columns[0][-1], s.columns[1][-1]
    s, _ = g.move(s, 0, g.cell_base)
    s, _ = g.move(s, 1, g.cell_base + 1)
    nxt = g.redeal(s)
    gathered = [c for col in s.columns[: s.open_columns] for c in col] + [a, b]
    assert nxt.columns == g._lay_out(gathered[::-1], nxt.open_columns)
    assert nxt.columns[0][0] == b and nxt.columns[1][0] == a


def test_a_redeal_clears_what_the_jokers_stand_for():
    env = make("joker", redeal="reverse")
    g = env.game
    env.reset(options={"deal": columns_with_tops(g, {0: ["JK"], 1: ["9♥"], 2: ["8♥", "2♦"]})})
    env.step(act(g, 0, 1))
    assert env.state.jokers == (C("8♥"),)
    assert g.redeal(env.state).jokers == (-1,)


def test_the_solvers_position_key_keeps_the_foundations_the_jokers_and_the_stage():
    """Positions that differ in any of them accept different moves: merging them prunes wins."""
    from pokersquares_env.soliter.solver import _Search

    g = SoliterGame("104-aces-kings")
    search = _Search(g)
    s = g.deal(np.random.default_rng(0))
    assert search._key(s) != search._key(s._replace(stage=1))
    up, both = list(s.foundations), list(s.foundations)
    up[0] = 13  # the same cards home, on the ace pile alone or split between the ace and king piles
    both[0], both[4] = 8, 5
    assert search._key(s._replace(foundations=tuple(up))) != search._key(s._replace(foundations=tuple(both)))
    gj = SoliterGame("joker")
    sj = gj.deal(np.random.default_rng(0))
    assert _Search(gj)._key(sj) != _Search(gj)._key(sj._replace(jokers=(C("8♥"),)))


def test_the_solver_moves_a_card_off_a_two_card_column_into_an_empty_one():
    """Only a lone card need never move to an empty column: pruning more made a winnable deal a 'proof' of none."""
    from pokersquares_env.soliter.rules import SoliterState

    g = SoliterGame("classic", free_cells=0)
    home = [13] * 4
    home[g.suit[C("A♠")]] = 0
    pairs = [("3♠", "K♠"), ("4♠", "Q♠"), ("5♠", "J♠"), ("6♠", "T♠"), ("7♠", "9♠"), ("8♠",)]
    cols = ((C("A♠"), C("2♠")),) + tuple(tuple(C(x) for x in p) for p in pairs) + ((),)
    s = g.check_state(SoliterState(cols, (), tuple(home), (), 0, 8, 0))
    result = solve_result(s, game=g, max_seconds=5)
    assert result.plan is not None and not result.proved


def test_a_given_deal_draws_its_redeal_seed_from_the_reset_seed():
    """A shuffle redeal shuffles by the state's seed; with a given deal that seed comes from the env's generator, so
    the reset seed still decides the redeals (a mutation audit found a fixed seed unseen)."""
    env = SoliterEnv(variant="multistage")
    deal = [list(col) for col in env.game.deal(np.random.default_rng(0)).columns]
    seeds = []
    for seed in (1, 2, 1):
        env.reset(seed=seed, options={"deal": deal})
        seeds.append(env.state.seed)
    assert seeds[0] == seeds[2] != seeds[1]


# ---- pinned by a second mutation audit ------------------------------------------------------------------------------


@pytest.mark.parametrize("overrides, message", [
    (dict(column_size=0), r"column_size=0: expected a positive integer"),
    (dict(deck="36", columns=6, king_foundations=True), r"king_foundations=True: expected False with a 36-card deck"),
    (dict(stages=2), r"stages=2: expected None or 1 when redeal='none'"),
    (dict(deal="columns", columns=3, column_size=17), r"columns=3: expected at least 4 to hold 52 cards"),
    (dict(free_cells=17), r"free_cells=17: expected an integer 0\.\.16"),
])
def test_option_combinations_that_cannot_be_played_are_refused_naming_the_field(overrides, message):
    with pytest.raises(ValueError, match=message):
        Variant(**overrides)


def test_the_documented_bounds_of_columns_and_stages_are_accepted():
    """docs/soliter.md: ``columns`` 1 to 20; with ``"shuffle"``, ``stages`` at most the first deal's columns."""
    assert SoliterGame("classic", columns=20).num_columns == 20
    assert Variant(decks=2, redeal="shuffle", stages=8).num_stages == 8


def test_a_column_deal_deeper_than_any_deal_is_refused():
    game = SoliterGame("classic")
    cols = [list(c) for c in game.deal(np.random.default_rng(0)).columns]
    cols[0].append(cols[7].pop())  # 8 cards in column 1: the classic deal lays out at most 7
    with pytest.raises(ValueError, match=r"deal column 1 has 8 cards: expected at most 7"):
        game.init(cols)


def _classic_with_first_column(col):
    game = SoliterGame("classic")
    others = [c for c in game.deck if c not in col]
    state = game.deal(np.random.default_rng(0))
    return game, state._replace(columns=(tuple(col),) + tuple(tuple(others[i::7]) for i in range(7)))


def test_a_column_one_card_deeper_than_max_depth_is_refused_and_never_encoded():
    from pokersquares_env.soliter.env import encode_observation

    game, deep = _classic_with_first_column(list(range(21)))  # max_depth is 20
    with pytest.raises(ValueError, match=r"columns\[0\] \(column 1\) has 21 cards: a column of the 'classic' variant "
                                         r"holds at most 20"):
        game.check_state(deep)
    with pytest.raises(ValueError, match=r"column 1 has 21 cards: the observation"):
        encode_observation(game, deep)


def test_a_column_that_could_grow_one_card_past_max_depth_is_refused():
    game, state = _classic_with_first_column([C(t) for t in ("2♣", "3♣", "4♣", "5♣", "6♣", "7♣", "8♣", "9♣", "K♠")])
    with pytest.raises(ValueError, match=r"has 9 cards and could grow to 21: its card 9 \(K♠\)"):
        game.check_state(state)


def test_check_state_refuses_a_foundation_count_past_the_king():
    game = SoliterGame("classic")
    state = game.deal(np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"foundations=\(14, 0, 0, 0\): expected counts 0\.\.13"):
        game.check_state(state._replace(foundations=(14, 0, 0, 0)))


def test_a_complete_foundation_is_said_to_take_nothing_more():
    game = SoliterGame("classic")
    state = _position(game, [["2♦"]], foundations=(13, 0, 0, 0), filler=list(range(1, 8)))
    assert game.why_illegal(state, game.encode(0, game.pile_base)).endswith(
        "2♦ does not fit foundation 1 (♣ up), which takes nothing more (complete)")


def test_a_joker_that_kept_its_meaning_on_a_card_that_does_not_take_it_holds_back_the_redeal():
    """A joker keeps the meaning a card on it gave it (8♣ from 7♣) after that card leaves; lying on 5♦, which does
    not take 8♣, it can still be built onto 9♣, so the game has not stopped (interpretation 7)."""
    game = SoliterGame("joker", redeal="reverse")
    state = _position(game, [["5♦", "JK"], ["9♣"], ["K♥"]], jokers=("8♣",), filler=2)
    assert game.encode(0, 1) in game.legal_actions(state)
    assert game.has_build_move(state) and not game.can_redeal(state)
    assert "can still be built onto another card" in game.why_illegal(state, game.redeal_action)


def test_a_won_game_has_no_redeal():
    game = SoliterGame("classic", redeal="reverse")
    won = game.deal(np.random.default_rng(0))._replace(columns=((),) * 8, foundations=(13,) * 4)
    assert game.is_won(won) and not game.can_redeal(won) and game.legal_actions(won) == []
    assert game.why_illegal(won, game.redeal_action) == "redeal refused: the game is won"


def test_a_column_out_of_play_is_neither_a_source_nor_a_destination():
    game = SoliterGame("multistage")
    state = game.redeal(game.deal(np.random.default_rng(0)))  # stage 2: columns 1..7 in play
    to_8, from_8 = game.encode(0, 7), game.encode(7, game.cell_base)
    for action in (to_8, from_8):
        assert game.why_illegal(state, action).endswith("column 8 is not in play in this stage (7 columns)")
    with pytest.raises(IllegalMoveError, match="column 8 is not in play"):
        game.apply(state, to_8)


def test_the_shuffle_of_stage_k_is_drawn_from_the_seed_and_k():
    """docs/soliter.md, interpretation 9: ``numpy.random.default_rng([state.seed, k])``."""
    game = SoliterGame("multistage")
    state = game.deal(np.random.default_rng(0))
    gathered = [c for col in state.columns for c in col]
    cards = [gathered[i] for i in np.random.default_rng([state.seed, 1]).permutation(len(gathered))]
    assert game.redeal(state).columns == tuple(tuple(cards[j::7]) for j in range(7)) + ((),)


def test_the_text_board_counts_the_stages_from_one():
    game = SoliterGame("104-aces-kings")
    state = game.deal(np.random.default_rng(0))
    assert "stage 1/2, 8 columns" in game.text(state)
    assert "stage 2/2, 8 columns" in game.text(game.redeal(state))


def test_encode_and_decode_refuse_a_place_or_an_action_out_of_range():
    game = SoliterGame()  # 16 places, 256 actions, no redeal
    with pytest.raises(ValueError, match=r"move \(0, 16\): places must be 0\.\.15"):
        game.encode(0, 16)
    with pytest.raises(ValueError, match=r"action 256 out of range: expected 0\.\.255"):
        game.decode(256)
    assert game.decode(255) == (15, 15)


def test_place_names_give_each_foundation_its_suit_and_direction():
    game = SoliterGame("104-aces-kings")
    pb = game.pile_base
    assert [game.place_name(p) for p in (0, game.cell_base, pb, pb + 6)] == [
        "column 1", "cell 1", "foundation 1 (♣ up)", "foundation 7 (♥ down)"]


def test_encode_observation_into_a_used_buffer_gives_the_fresh_observation():
    from pokersquares_env.soliter.env import encode_observation

    env = make()
    obs, _ = env.reset(seed=0)
    out = np.full_like(obs, 7)
    assert encode_observation(env.game, env.state, out=out) is out
    assert np.array_equal(out, obs)


def test_max_steps_must_be_positive():
    with pytest.raises(ValueError, match=r"max_steps=0: expected a positive integer"):
        make(max_steps=0)
    assert make(max_steps=1).max_steps == 1


def test_reward_step_is_paid_on_every_step():
    env = make(reward_step=-0.25)
    game = env.game
    env.reset(options={"deal": columns_with_tops(game, {0: ["A♣"], 1: ["9♥"]})})
    _, r, *_ = env.step(act(game, 1, game.cell_base))  # 9♥ to a cell
    assert r == -0.25
    _, r, *_ = env.step(act(game, 0, game.pile_base))  # A♣ home
    assert r == 0.75


def test_editing_the_info_mask_leaves_the_env_alone():
    env = make()
    _, info = env.reset(seed=0)
    legal = env.action_masks().copy()
    info["action_mask"][:] = 0
    assert np.array_equal(env.action_masks(), legal)


def test_a_one_element_array_action_plays_its_move():
    env = make()
    _, info = env.reset(seed=0)
    env.step(np.array([int(np.flatnonzero(info["action_mask"])[0])]))
    assert env.steps == 1


def test_the_default_illegal_penalty_is_minus_ten():
    env = make(illegal_action="penalty")
    env.reset(seed=0)
    _, r, term, _, _ = env.step(int(np.flatnonzero(env.action_masks() == 0)[0]))
    assert r == -10.0 and term


# ---------------------------------------------------------------- mutation audit: solver options, budget, key
def test_solve_passes_its_options_to_the_search_and_unwraps_a_wrapped_env():
    """``solve`` takes an env wrapped or not (the docs), and its ``max_nodes`` and ``variant`` reach the search."""
    wrapped = gym.make("Soliter-v0", variant="classic")
    wrapped.reset(seed=1)
    plan = solve(wrapped, 5)
    assert plan is not None and _replay("classic", 1, plan)[0]
    assert solve(wrapped, float("inf"), max_nodes=3) is None  # the node budget ends it: no plan within 3 positions
    game = SoliterGame("36")
    state = game.deal(np.random.default_rng(3))
    plan = solve(state, 5, variant="36")  # without variant= the 36-card state is refused as not classic
    env = SoliterEnv("36", max_steps=100_000)
    env.reset(options={"state": state})
    info = {"won": False}
    for a in plan:
        *_, info = env.step(a)
    assert info["won"]


def test_solve_defaults_are_the_documented_ones():
    """docs/soliter.md gives the signature of ``solve``; the defaults of ``solve`` and ``solve_result`` match it."""
    import ast
    import inspect
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "soliter.md").read_text(encoding="utf-8")
    line = re.search(r"^`(solve\(.*\)) -> list\[int\] \| None`$", doc, re.M).group(1)
    args = ast.parse(f"def {line}: pass").body[0].args
    documented = {a.arg: ast.literal_eval(d) for a, d in zip(args.args[-len(args.defaults):], args.defaults)}
    documented |= {a.arg: ast.literal_eval(d) for a, d in zip(args.kwonlyargs, args.kw_defaults)}
    assert documented == {"max_seconds": 1.0, "game": None, "variant": "classic", "max_nodes": None}
    for fn in (solve, solve_result):
        params = inspect.signature(fn).parameters
        assert {name: params[name].default for name in documented} == documented, fn.__name__


def test_the_time_budget_ends_the_search_without_a_proof(monkeypatch):
    """Classic deal 2 has no win; proving it takes about 12,000 positions.  A spent time budget is no proof."""
    import types

    import pokersquares_env.soliter.solver as solver_module

    env = make("classic")
    env.reset(seed=2)
    res = solve_result(env, 1e-9)
    # the clock is read every 64 positions: the search stops at the first reading
    assert res.plan is None and res.nodes == 64 and not res.exhausted and not res.proved
    res = solve_result(env, 0.05)
    assert res.plan is None and not res.exhausted and res.seconds >= 0.05
    # a clock that reads 1, 2, 3, ... (one "second" a reading, so no pause of a loaded machine or of the garbage
    # collector moves it; the bound of this check on the real clock failed once for one): started at 1, a budget of
    # 50 ends at the first reading past 51, the 52nd, taken after 51 x 64 positions, and the result says the seconds
    # from start to end, 53 - 1, not twice them or the clock's reading
    readings = itertools.count(1.0)
    monkeypatch.setattr(solver_module, "time", types.SimpleNamespace(process_time=lambda: next(readings)))
    res = solve_result(env, 50)
    assert (res.plan, res.nodes, res.seconds, res.exhausted, res.proved) == (None, 51 * 64, 52.0, False, False)
    monkeypatch.undo()
    res = solve_result(env, float("inf"))
    assert res.plan is None and res.exhausted and res.proved and res.nodes > 1000
    assert "exhausted=True, proved=True" in repr(res)
    res = solve_result(env, float("inf"), max_nodes=10)
    assert "exhausted=False, proved=False" in repr(res)


def test_the_solver_returns_the_auto_moves_that_win_at_once():
    """A position that the safe auto-moves alone win: the plan is those moves, found without expanding a position."""
    from pokersquares_env.soliter.rules import SoliterState

    g = SoliterGame("classic")
    home = [13] * 4
    home[g.suit[C("K♣")]] = 11  # Q♣ and K♣ are out, Q♣ in a cell, K♣ on column 1
    cols = ((C("K♣"),),) + ((),) * 7
    s = g.check_state(SoliterState(cols, (C("Q♣"), EMPTY, EMPTY, EMPTY), tuple(home), (), 0, 8, 0))
    res = solve_result(s, 1.0, game=g)
    pile = g.pile_base + g.suit[C("K♣")]
    assert res.plan == [g.encode(g.cell_base, pile), g.encode(0, pile)] and res.nodes == 0 and not res.exhausted


def test_an_exhausted_search_with_one_deck_and_king_foundations_is_no_proof():
    """King foundations make the pruning inexact even with one deck: ``proved`` stays False (docs/soliter.md)."""
    game = SoliterGame("classic", king_foundations=True, free_cells=1)
    res = solve_result(game.deal(np.random.default_rng(1)), 5, game=game)
    assert res.plan is None and res.exhausted and not res.proved and "exhausted=True, proved=False" in repr(res)


def test_the_solvers_position_key_ignores_the_order_of_columns_and_cells_unless_a_redeal_follows():
    """Columns and cells are interchangeable, so positions differing only in their order are one position; before
    the last stage of a one-deck redeal game the redeal gathers them in order, so there they are not."""
    from pokersquares_env.soliter.solver import _Search

    for game, same in ((SoliterGame("classic"), True), (SoliterGame("36", redeal="reverse", columns=5), False)):
        s = game.deal(np.random.default_rng(0))
        cols = list(s.columns)
        c0, c1 = cols[0][-1], cols[1][-1]
        cols[0], cols[1] = cols[0][:-1], cols[1][:-1]
        a = s._replace(columns=tuple(cols), cells=(c0, EMPTY, c1) + (EMPTY,) * (game.num_cells - 3))
        b = a._replace(cells=(EMPTY, c1, EMPTY, c0) + (EMPTY,) * (game.num_cells - 4))
        swapped = a._replace(columns=(a.columns[2], a.columns[1], a.columns[0]) + a.columns[3:])
        search = _Search(game)
        assert (search._key(a) == search._key(b)) is same
        assert (search._key(a) == search._key(swapped)) is same


def test_an_ace_is_always_safe_to_send_home():
    """Nothing lies below an ace, so the auto-moves send it home at once (also on the joker path)."""
    from pokersquares_env.soliter.solver import _Search

    for variant in ("joker", "104-aces-kings", "classic"):
        game = SoliterGame(variant)
        state = game.deal(np.random.default_rng(0))
        assert _Search(game)._safe_home(state, C("A♥")), variant


def test_solver_keeps_a_two_deck_card_in_a_free_cell_until_both_copies_below_it_are_home():
    """As on a column (the test above): a 3♣ in a free cell waits while one 2♣ is still out."""
    from pokersquares_env.soliter.solver import _Search

    for foundations, sent in (((2, 0, 0, 0, 1, 0, 0, 0), False), ((2, 0, 0, 0, 2, 0, 0, 0), True)):
        game, state = _two_deck_position("104", foundations, "3♣")
        state = state._replace(columns=((C("K♠"),),) + state.columns[1:],
                               cells=(C("3♣"),) + (EMPTY,) * (game.num_cells - 1))
        actions: list[int] = []
        after = _Search(game)._auto_fast(state, actions)
        if sent:
            assert actions == [game.encode(game.cell_base, game.pile_base)] and after.cells[0] == EMPTY
            assert after.foundations[0] == 3
        else:
            assert after == state and actions == []


# ---------------------------------------------------------------- mutation audit: the soliter command
def _cli(*argv: str) -> int:
    from pokersquares_env.cli import main

    return main(["soliter", *argv])


def _fake_search(monkeypatch, plan_of=lambda env: None):
    """Replace the solver the command calls: each call is recorded (the variant, the position and the budget) and
    answered with ``plan_of(env)``, 7 positions and 0.25 CPU s."""
    from pokersquares_env.soliter import solver

    calls = []

    def fake(env, max_seconds=1.0, **kw):
        calls.append((env.game.variant, env.state, max_seconds))
        return solver.SolveResult(plan_of(env), 7, 0.25, False)

    monkeypatch.setattr(solver, "solve_result", fake)
    return calls


def _deal(seed: int, **kw):
    env = make(**kw)
    env.reset(seed=seed)
    return env.state


def test_cli_show_prints_the_deal_of_the_seed_and_options(capsys):
    assert _cli("show") == 0  # the default seed is 0
    assert capsys.readouterr().out == make().game.text(_deal(0)) + "\n"
    assert _cli("show", "--seed", "3", "--free-cells", "0") == 0  # 0 cells is an option given, not the default
    assert capsys.readouterr().out == make(free_cells=0).game.text(_deal(3, free_cells=0)) + "\n"


def test_cli_refuses_variant_options_that_cannot_be_played_with_exit_2(capsys):
    assert _cli("solve", "--variant", "104-aces-kings", "--columns", "7") == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # refused before anything runs
    assert captured.err.strip() == ("pokersquares soliter solve: variant '104-aces-kings': columns=7: expected at least "
                                    "8 to hold 104 cards")


def test_cli_solve_passes_the_deal_and_budget_and_reports_a_spent_budget(monkeypatch, capsys):
    calls = _fake_search(monkeypatch)
    assert _cli("solve", "--seed", "3", "--free-cells", "0") == 1
    out = capsys.readouterr().out
    assert out.endswith("no solution found: budget spent; 7 positions expanded in 0.25 CPU s\n")
    (variant, state, seconds), = calls
    assert variant.free_cells == 0 and state == _deal(3, free_cells=0) and seconds == 1.0  # the default: 1 CPU s
    assert _cli("solve", "--time-limit", "0.5") == 1
    assert calls[-1][1:] == (_deal(0), 0.5)


def test_cli_solve_moves_replay_to_a_win_and_a_plan_that_does_not_win_fails(monkeypatch, capsys):
    """The printed moves, read back as places, win the deal; a plan that does not win exits 1."""
    assert _cli("solve", "--variant", "multistage", "--seed", "1") == 0  # with redeals; replayed with seed 1
    out = capsys.readouterr().out
    assert "replay wins: True" in out and not re.search(r"^ +1\. ", out, re.M)  # no moves without --moves
    assert _cli("solve", "--variant", "multistage", "--seed", "1", "--moves") == 0
    out = capsys.readouterr().out
    moves = int(re.search(r"solved in (\d+) moves", out).group(1))
    lines = re.findall(r"^ *(\d+)\. (.*)$", out, re.M)
    assert [int(n) for n, _ in lines] == list(range(1, moves + 1))
    env = make("multistage", max_steps=100_000)
    env.reset(seed=1)
    game = env.game
    place = {game.place_name(p): p for p in range(game.num_places)}
    info = {"won": False}
    for _n, text in lines:
        action = game.redeal_action if text == "redeal" else game.encode(*(place[t] for t in text.split(" -> ")))
        *_, info = env.step(action)
    assert info["won"] and "redeal" in {text for _n, text in lines}
    _fake_search(monkeypatch, lambda env: [int(np.flatnonzero(env.action_masks())[0])])  # one legal move: no win
    assert _cli("solve", "--seed", "1") == 1
    assert "solved in 1 moves (7 positions, 0.25 CPU s); replay wins: False" in capsys.readouterr().out


def test_cli_bench_solves_the_seeded_deals_within_the_budget_and_reports_a_wilson_interval(monkeypatch, capsys):
    calls = _fake_search(monkeypatch)
    assert _cli("bench", "--no-progress") == 0  # the defaults: 100 deals from seed 0, 1 CPU s each
    assert capsys.readouterr().out == "classic: solved 0/100 = 0.0% (95% CI 0.0-3.7%), 0.250 CPU s per deal\n"
    assert len(calls) == 100 and {c[2] for c in calls} == {1.0}
    assert calls[0][1] == _deal(0) and calls[-1][1] == _deal(99)
    calls.clear()
    assert _cli("bench", "--no-progress", "--seed0", "5", "--deals", "3", "--time-limit", "0.5") == 0
    assert [c[1] for c in calls] == [_deal(5), _deal(6), _deal(7)] and {c[2] for c in calls} == {0.5}
    assert "classic: solved 0/3 = 0.0% (95% CI 0.0-56.2%)" in capsys.readouterr().out
    _fake_search(monkeypatch, lambda env: [int(np.flatnonzero(env.action_masks())[0])])  # a plan that does not win
    assert _cli("bench", "--no-progress", "--seed0", "5", "--deals", "3") == 1
    assert capsys.readouterr().err == "seed 5: plan does not replay to a win\n"


def test_cli_bench_replays_each_plan_with_its_own_seed(capsys):
    assert _cli("bench", "--no-progress", "--variant", "36", "--seed0", "1", "--deals", "3") == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("36: solved 3/3 = 100.0% (95% CI ") and captured.err == ""


def test_cli_play_wins_when_the_solvers_plan_is_typed_in(monkeypatch, capsys):
    """Every kind of place (c1..c8, f1..f4, h1..h4) is read as the place it names: the plan, typed, wins."""
    env = make()
    env.reset(seed=12)
    game = env.game

    def name(p):
        if p < game.cell_base:
            return f"c{p + 1}"
        return f"f{p - game.cell_base + 1}" if p < game.pile_base else f"h{p - game.pile_base + 1}"

    typed = [" ".join(name(p) for p in game.decode(a)) for a in solve(env, 5)]
    assert {"c8", "f4", "h4"} <= set(" ".join(typed).split())  # the last place of each kind is in the plan
    status, out = _soliter_play(monkeypatch, capsys, "\n".join(typed) + "\n", "--seed", "12")
    assert status == 0 and out.startswith("moves: 'c3 c5'") and "illegal" not in out
    assert out.rstrip().endswith("you won!")


def test_cli_play_reads_any_free_cell_and_foundation_and_refuses_what_it_cannot_read(monkeypatch, capsys):
    # classic seed 1: A♥ ends column 3 and A♠ column 4
    moves = "c1 f\nc2 f\nc5 f\nc6 f\nc4 f\nc4 h\nc3 h3\nf c3\nc1 c2 c3\nredeal\nq\n"
    status, out = _soliter_play(monkeypatch, capsys, moves, "--seed", "1")
    assert status == 0
    boards = out.split("\n> ")
    cells = [re.search(r"^cells: +(.*)$", b, re.M).group(1).split() for b in boards[:-1]]  # the last: "q"
    assert cells[1][1:] == ["..", "..", ".."]  # 'c1 f' takes the first free cell
    assert "\n> c4 f\nillegal: no free cell takes it now" in out  # all four are full: not sent home instead
    assert "(1/52 home)" in boards[6] and "(2/52 home)" in boards[7]  # 'c4 h' and 'c3 h3' send the aces home
    assert "> f c3\ncannot read 'f c3': places are c1..c8, f1..f4 (or f), h1..h4 (or h)" in out  # 'f' is no source
    assert "> c1 c2 c3\ncannot read 'c1 c2 c3': expected two places" in out
    assert "> redeal\nthis variant has no redeal\n" in out


def test_the_two_deck_solver_skips_only_a_move_between_the_two_copies_of_a_parent():
    """King-foundation games take the general move list: a card moves onto its parent from under any card but the
    other copy of that parent (that move changes nothing)."""
    from pokersquares_env.soliter.solver import _Search

    game, state = _two_deck_position("104-aces-kings", (0,) * 8, "3♣")
    search = _Search(game)
    onto = state._replace(columns=((C("K♠"), C("3♣")), (C("4♣"),)) + state.columns[2:])
    assert (0, 1) in search._moves(onto)
    between = state._replace(columns=((C("4♣"), C("3♣")), (C("4♣"),)) + state.columns[2:])
    assert (0, 1) not in search._moves(between) and (0, 1) in search._moves(between, every=True)


# ---- pinned by a third mutation audit (rules, env, viewer) ----------------------------------------------------------


def test_a_one_stage_game_has_no_redeal_action():
    """A redeal option with ``stages=1`` leaves nothing to redeal: no action is added for it."""
    plain = SoliterGame("36")
    one = SoliterGame("36", redeal="reverse", stages=1)
    assert one.redeal_action is None and one.num_actions == plain.num_actions == plain.num_places**2
    assert make("36", redeal="reverse", stages=1).action_space.n == plain.num_actions


def test_a_reverse_redeal_of_a_column_deal_lays_out_only_the_columns_its_cards_fill():
    """104-aces-kings with 40 cards left: the redeal lays out 13, 13, 13 and 1 (interpretation 8), and that position
    passes the reset check, which refuses fewer columns in play than the cards fill."""
    game = SoliterGame("104-aces-kings")
    state = _position(game, [], foundations=(8,) * 8, filler=list(range(8)))  # per suit A-8 up, K-6 down: 40 left
    nxt = game.redeal(state)
    assert nxt.stage == 1 and nxt.open_columns == 4
    assert [len(c) for c in nxt.columns] == [13, 13, 13, 1, 0, 0, 0, 0]
    assert game.check_state(nxt) is nxt
    env = make("104-aces-kings")
    env.reset(options={"state": nxt})
    assert env.state == nxt
    with pytest.raises(ValueError, match=r"open_columns=3 at stage 1: expected 4\.\.8"):
        game.check_state(nxt._replace(open_columns=3))


def test_cards_on_a_king_foundation_are_counted_from_the_king():
    """K♥ then Q♥ played to the king foundation: the position counts them as home and passes the reset check."""
    env = make("104-aces-kings")
    game = env.game
    env.reset(options={"deal": columns_with_tops(game, {0: ["K♥"], 1: ["Q♥"]})})
    king_hearts = game.pile_base + game.piles.index((2, -1))
    env.step(act(game, 0, king_hearts))
    assert game.check_state(env.state) is env.state
    env.step(act(game, 1, king_hearts))
    assert game.check_state(env.state) is env.state
    again = make("104-aces-kings")
    again.reset(options={"state": env.state})
    assert again.state == env.state


def _stopped_multistage(changed=None):
    """The stopped position of test_the_redeal_waits_until_the_game_has_stopped, with the columns ``changed``
    ({index: cards}) replaced (unchecked: only the last cards matter here)."""
    game = SoliterGame("multistage")
    tails = [("9♠", "3♦"), ("K♥",), ("6♠", "5♠"), ("6♠",), ("Q♣",), ("T♦",), ("8♥",), ("2♣",)]
    for i, col in (changed or {}).items():
        tails[i] = col
    base = game.deal(np.random.default_rng(0))
    return game, base._replace(columns=tuple(tuple(C(c) for c in col) for col in tails), cells=(EMPTY,) * 8,
                               foundations=(0,) * 8)


def test_a_lone_card_that_can_be_built_onto_a_card_holds_back_the_redeal():
    """A lone card does not lie on a card that takes it, so building it onto one changes the game (interpretation 7):
    lone 4♠ onto 5♠."""
    game, stopped = _stopped_multistage()
    assert game.can_redeal(stopped)
    game, lone = _stopped_multistage({3: ("4♠",)})
    assert game.has_build_move(lone) and not game.can_redeal(lone)
    assert "can still be built onto another card" in game.why_illegal(lone, game.redeal_action)


def test_a_joker_lying_on_a_card_that_takes_it_does_not_hold_back_the_redeal():
    """A joker standing for 8♥ on 9♥ is a built card: that it could also go onto K♥ (as Q♥) or 6♠ (as 5♠) does not
    count, as moving a built card to a twin of its parent does not."""
    game = SoliterGame("multistage", jokers=1)
    cols = [["9♠", "3♦"], ["K♥"], ["6♠", "5♠"], ["6♠"], ["Q♣"], ["T♦"], ["9♥", "JK"], ["2♣"]]
    state = _position(game, cols, jokers=("8♥",), filler=0)
    assert game.encode(6, 1) in game.legal_actions(state)  # the joker may move onto K♥ ...
    assert not game.has_build_move(state) and game.can_redeal(state)  # ... but the game has stopped
    assert game.why_illegal(state, game.redeal_action) is None


def _stuck_but_for_the_redeal():
    """multistage without free cells, 88 cards home (11 on each pile), each column Q over K: no move but the redeal."""
    game = SoliterGame("multistage", free_cells=0)
    cols = [[f"Q{s}", f"K{s}"] for s in "♣♣♦♦♥♥♠♠"]
    return game, _position(game, cols, foundations=(11,) * 8)


def test_a_game_with_only_the_redeal_left_is_not_stuck():
    game, state = _stuck_but_for_the_redeal()
    assert game.legal_moves(state) == [] and game.legal_actions(state) == [game.redeal_action]
    assert not game.is_stuck(state)
    assert game.is_stuck(state._replace(stage=game.variant.num_stages - 1))  # the last stage has no redeal


def test_a_redeal_step_keeps_the_foundations_and_reports_the_new_stage():
    env = make("multistage", free_cells=0)
    game, state = _stuck_but_for_the_redeal()
    _, info = env.reset(options={"state": state})
    assert np.flatnonzero(info["action_mask"]).tolist() == [game.redeal_action]
    obs, reward, term, trunc, info = env.step(game.redeal_action)
    assert reward == 0.0 and not term and not trunc
    assert info["stage"] == 1 and info["cards_home"] == 88 and not info["won"]
    assert env.state.foundations == (11,) * 8 and env.state.open_columns == 7
    assert obs[-2:].tolist() == [1, 7]


def test_the_default_step_limit_is_twenty_steps_per_card():
    assert make().max_steps == 20 * 52
    assert make("36").max_steps == 20 * 36
    assert make("joker", jokers=2).max_steps == 20 * 54
    assert make("104").max_steps == 20 * 104


def test_the_observation_holds_what_each_joker_stands_for():
    from pokersquares_env.soliter.env import encode_observation

    env = make("joker", jokers=2)
    game = env.game
    at = game.num_columns * game.max_depth + game.num_cells + game.num_piles  # the joker entries
    obs, _ = env.reset(options={"deal": columns_with_tops(game, {0: ["JK"], 1: ["7♣"], 2: ["8♣", "2♦"]})})
    assert obs[at : at + 2].tolist() == [-1, -1]
    obs, *_ = env.step(act(game, 1, 0))  # 7♣ on the free joker: it stands for 8♣
    assert env.state.jokers == (C("8♣"), -1)
    assert obs[at : at + 2].tolist() == [C("8♣"), -1]
    assert np.array_equal(encode_observation(game, env.state), obs)


def test_a_joker_never_goes_to_a_foundation_not_even_a_complete_one():
    game = SoliterGame("joker")
    state = _position(game, [["JK"]], foundations=(0, 0, 0, 13), filler=list(range(1, 8)))  # ♠ complete
    mask = _mask_agrees(game, state)
    assert not any(mask[game.encode(0, game.pile_base + p)] for p in range(game.num_piles))
    assert game.why_illegal(state, game.encode(0, game.pile_base + 3)).endswith("a joker never goes to a foundation")


def test_the_text_board_marks_ace_foundations_up_and_king_foundations_down():
    game = SoliterGame("104-aces-kings")
    text = game.text(game.deal(np.random.default_rng(0)))
    assert text.splitlines()[0].startswith("foundations: []^ []^ []^ []^ []v []v []v []v ")


def test_a_frame_has_room_for_the_deepest_first_deal_column_plus_a_full_suit():
    """docs/soliter.md (Rendering): ``frame_rows(game)`` is the deepest column of the first deal plus a full suit."""
    from pokersquares_env.soliter.viewer import frame_rows

    assert frame_rows(SoliterGame("classic")) == 7 + 13
    assert frame_rows(SoliterGame("36")) == 6 + 9
    assert frame_rows(SoliterGame("104")) == 11 + 13


def _frame_and_layout(game, state):
    pytest.importorskip("PIL")
    from pokersquares_env.soliter import viewer

    frame = viewer.draw(game, state)
    return frame, viewer


def test_a_frame_draws_red_diamonds_and_hearts_and_black_clubs_and_spades():
    game = SoliterGame("classic")
    state = game.init(columns_with_tops(game, {0: ["9♣"], 1: ["9♦"], 2: ["9♥"], 3: ["9♠"]}))
    frame, v = _frame_and_layout(game, state)
    red, black = np.array(v._RED), np.array(v._BLACK)
    for i, colour in enumerate([black, red, red, black]):
        x = v.PAD + i * (v.CARD_W + v.PAD)
        y = v.PAD * 2 + v.CARD_H + v.STEP * (len(state.columns[i]) - 1)  # the playable card's top
        corner = frame[y : y + 20, x + v.CARD_W - 20 : x + v.CARD_W]  # where its suit is drawn
        other = red if colour is black else black
        assert (corner == colour).all(axis=-1).sum() > 20, i  # the suit symbol, in the suit's colour
        assert not (corner == other).all(axis=-1).any(), i


def test_a_column_out_of_play_is_not_drawn():
    game = SoliterGame("multistage")
    state = game.redeal(game.deal(np.random.default_rng(0)))  # stage 2: 7 columns in play
    frame, v = _frame_and_layout(game, state)
    x, y0 = v.PAD + 7 * (v.CARD_W + v.PAD), v.PAD * 2 + v.CARD_H
    assert (frame[y0:, x : x + v.CARD_W + 1] == frame[-1, -1]).all()  # the table's colour, no empty-column outline
    assert not (frame[y0:, v.PAD : v.PAD + v.CARD_W + 1] == frame[-1, -1]).all()  # column 1 is drawn


def test_a_column_deeper_than_the_frame_is_squeezed_inside_it():
    game = SoliterGame("multistage")
    state = game.deal(np.random.default_rng(0))
    for _ in range(game.variant.num_stages - 1):
        state = game.redeal(state)  # the last stage: one column of all 104 cards
    frame, v = _frame_and_layout(game, state)
    height = frame.shape[0]
    column = frame[:, v.PAD : v.PAD + v.CARD_W + 1]
    assert (column[height - v.PAD + 1 :] == frame[-1, -1]).all()  # the bottom margin is left free
    assert (column[height - v.PAD - 2, v.CARD_W // 2] == (250, 250, 245)).all()  # the last card ends just above it


def test_an_ace_may_be_built_on_the_lowest_rank_above_it():
    """Interpretation 4: the ace is the bottom rung, so it goes onto a 2 (on a 6 with the 36-card deck)."""
    for variant, lowest in (("classic", "2♣"), ("36", "6♣")):
        game = SoliterGame(variant)
        state = _position(game, [[lowest], ["A♣"]], filler=list(range(2, game.num_columns)))
        assert game.encode(1, 0) in _mask_agrees(game, state).nonzero()[0]


def test_a_numbered_joker_in_a_free_cell_is_named_by_its_number_when_a_move_is_refused():
    """Before, "cell 1 already holds JK" while the board (and every other message) said JK2."""
    env = make("joker", jokers=2, render_mode="ansi")
    game = env.game
    deal = [card_text(c) for c in range(46)] + ["JK1", "JK2"] + [card_text(c) for c in range(46, 52)]
    env.reset(options={"deal": deal})
    column = next(i for i, col in enumerate(env.state.columns) if col and col[-1] == 53)  # JK2 is playable
    env.step(act(game, column, game.cell_base))
    assert re.search(r"^cells: +JK2 ", env.render(), re.M)
    source = next(i for i, col in enumerate(env.state.columns) if col and i != column)
    before = env.state
    with pytest.raises(IllegalMoveError, match=r"cell 1 already holds JK2$"):
        env.step(act(game, source, game.cell_base))
    assert env.state == before


def test_cli_play_answers_a_place_with_a_digit_int_cannot_read(monkeypatch, capsys):
    """Before, 'c² c1' (str.isdigit takes '²') ended the game with a ValueError traceback from int()."""
    status, out = _soliter_play(monkeypatch, capsys, "c² c1\nf² c1\nc1 h²\nq\n", "--seed", "1")
    assert status == 0
    for move in ("c² c1", "f² c1", "c1 h²"):
        assert f"> {move}\ncannot read {move!r}: places are c1..c8" in out


def test_a_bare_state_is_solved_under_the_rules_given_not_the_variant_it_came_from():
    """As docs/soliter.md says: a state does not record its variant, so one of a variant of the same shape passes
    ``check_state`` and is solved under the rules given; with its own ``game=`` the same deal is won."""
    own = SoliterGame("classic", redeal="reverse")
    state = own.deal(np.random.default_rng(2))
    plain = solve_result(state, 30.0)  # as classic, with no redeal
    assert plain.plan is None and plain.proved
    assert solve_result(state, 30.0, game=own).plan is not None
    with pytest.raises(ValueError, match="5 cells: the 'classic' variant has 4"):  # another shape is refused
        solve_result(SoliterGame("classic", free_cells=5).deal(np.random.default_rng(2)), 1.0)
