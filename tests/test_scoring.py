import json
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pokersquares_env.cards import parse_cards
from pokersquares_env.scoring import (
    CATEGORY_KEYS,
    POINT_SYSTEMS,
    HandCategory,
    PointSystem,
    expected_random_score,
    grid_hands,
    hand_category,
    line_points,
    point_system,
    score_grid,
    score_grids,
    score_hand,
)
from reference import achievable, best_points, concrete_category

RUSSIAN_EXAMPLE = "8♠ Д♠ 10♠ 4♠ 2♠ / 9♣ Д♣ 10♣ В♣ К♣ / Т♦ 8♦ 10♦ 4♣ 5♣ / Т♥ Д♥ 10♥ В♥ К♥ / 3♠ 6♥ 7♦ 4♥ 5♠"
H = HandCategory


def test_worked_example_from_the_russian_source():
    assert score_grid(RUSSIAN_EXAMPLE, "english") == 113
    assert score_grid(RUSSIAN_EXAMPLE, "american") == 302
    assert grid_hands(RUSSIAN_EXAMPLE) == [
        "flush", "straight_flush", "high_card", "royal_flush", "straight",
        "one_pair", "three_of_a_kind", "four_of_a_kind", "full_house", "two_pair",
    ]
    assert line_points(RUSSIAN_EXAMPLE, "english") == [5, 30, 0, 30, 12, 1, 6, 16, 10, 3]


def test_point_tables_match_the_sources():
    am, en = POINT_SYSTEMS["american"], POINT_SYSTEMS["english"]
    assert [am[k] for k in ("royal_flush", "straight_flush", "four_of_a_kind", "full_house", "flush",
                            "straight", "three_of_a_kind", "two_pair", "one_pair")] == [100, 75, 50, 25, 20, 15, 10, 5, 2]
    assert [en[k] for k in ("royal_flush", "straight_flush", "four_of_a_kind", "full_house", "flush",
                            "straight", "three_of_a_kind", "two_pair", "one_pair")] == [30, 30, 16, 10, 5, 12, 6, 3, 1]
    assert en["five_of_a_kind"] == 20
    # American five of a kind is the library's choice (not in the sources): 60, between 50 and 75.
    assert am["five_of_a_kind"] == 60
    assert score_hand("7♣ 7♦ 7♥ 7♠ JK", "american") == 60
    assert set(am) == set(CATEGORY_KEYS) == set(en)


@pytest.mark.parametrize(
    "hand, category",
    [
        ("Ts Js Qs Ks As", H.ROYAL_FLUSH),
        ("9s Ts Js Qs Ks", H.STRAIGHT_FLUSH),
        ("As 2s 3s 4s 5s", H.STRAIGHT_FLUSH),  # steel wheel
        ("7c 7d 7h 7s 2c", H.FOUR_OF_A_KIND),
        ("7c 7d 7h 2s 2c", H.FULL_HOUSE),
        ("7c 7d 2h 2s 3c", H.TWO_PAIR),
        ("2c 9c Jc 4c 6c", H.FLUSH),
        ("Ah 2c 3d 4s 5h", H.STRAIGHT),  # wheel: ace low
        ("Th Jc Qd Ks Ah", H.STRAIGHT),  # broadway: ace high
        ("Qh Kc Ad 2s 3h", H.HIGH_CARD),  # no wrap-around
        ("Kh Ac 2d 3s 4h", H.HIGH_CARD),
        ("7c 7d 7h 2s 3c", H.THREE_OF_A_KIND),
        ("7c 7d 9h 2s 3c", H.ONE_PAIR),
        ("7c 8d 9h Js Qc", H.HIGH_CARD),
    ],
)
def test_categories_and_edge_cases(hand, category):
    assert hand_category(hand) == category
    assert hand_category(hand) == concrete_category(parse_cards(hand))
    assert score_hand(hand, "american") == POINT_SYSTEMS["american"][category.key]


def test_no_cards_have_no_category():
    assert hand_category([]) is None
    assert hand_category("") is None


def test_royal_is_not_scored_as_straight_flush():
    assert score_hand("Ts Js Qs Ks As", "american") == 100
    assert score_hand("9s Ts Js Qs Ks", "american") == 75


def test_joker_five_of_a_kind():
    assert hand_category("7c 7d 7h 7s JK") == H.FIVE_OF_A_KIND
    assert score_hand("7c 7d 7h 7s JK", "english") == 20
    assert score_hand("7c 7d 7h JK JK", "english") == 20


def test_joker_plays_the_best_card_of_the_line():
    assert hand_category("2s 3s 4s 9s JK", "english") == H.FLUSH  # no straight window holds 2,3,4,9
    assert hand_category("2h 3h 4h 6d JK", "english") == H.STRAIGHT  # joker as a 5; no flush (6♦)
    assert hand_category("5s 6s 8s JK JK", "english") == H.STRAIGHT_FLUSH  # jokers as 7♠ and 9♠
    assert hand_category("Ts Js Qs JK JK") == H.ROYAL_FLUSH
    assert hand_category("5h 5d 6c 7s JK") == H.THREE_OF_A_KIND  # a pair rules out the straight
    assert hand_category("5h 5d 6c 6s JK") == H.FULL_HOUSE


def test_a_joker_may_be_one_card_in_its_row_and_another_in_its_column():
    """Each line is a hand of its own (the README's reading): the joker on a1 is T♠ in row 1 and a 7 in column a."""
    grid = "JK Ks Qs Js As / 7c 2d 3d 4d 9h / 7d 2c 3c 4c 9c / 7h 2h 3h 4h 9d / 7s 5d 5c 5h 6d"
    hands = grid_hands(grid, "american")
    assert hands[0] == "royal_flush" and hands[5] == "five_of_a_kind"
    assert score_grid(grid, "american") == 210
    # Were the joker one card for both lines, the two lines would make at most 150 (T♠: royal flush and four
    # 7s), so the grid at most 200: 10 less than the 160 the per-line reading gives them.
    codes = parse_cards(grid)
    row, column = codes[1:5], [codes[c] for c in (5, 10, 15, 20)]
    american = POINT_SYSTEMS["american"]
    one_card = max(american[concrete_category(row + [x]).key] + american[concrete_category(column + [x]).key]
                   for x in range(52))
    assert one_card == 150 and line_points(grid, "american")[0] + line_points(grid, "american")[5] == 160


def test_points_tie_goes_to_the_higher_category():
    # English pays 30 for both: the joker as A♠ (royal) or 9♠ (straight flush); the higher category is reported.
    assert score_hand("T♠ J♠ Q♠ K♠ JK", "english") == 30
    assert hand_category("T♠ J♠ Q♠ K♠ JK", "english") == H.ROYAL_FLUSH


def test_jokers_complete_only_a_royal_flush_from_ace_king_queen():
    # A-K-Q fit only the royal window, so two jokers cannot make a (non-royal) straight flush of them, even
    # where a straight flush would be worth more than a royal one.
    table = dict(POINT_SYSTEMS["american"], straight_flush=200)
    assert hand_category("A♠ K♠ Q♠ JK JK", table) == H.ROYAL_FLUSH
    assert score_hand("A♠ K♠ Q♠ JK JK", table) == 100
    # ... while K-Q-J also fit 9-K: there the straight flush is reachable and wins.
    assert hand_category("K♠ Q♠ J♠ JK JK", table) == H.STRAIGHT_FLUSH
    assert score_hand("K♠ Q♠ J♠ JK JK", table) == 200


def test_without_a_system_the_highest_reachable_category_is_reported():
    # 2♠ 9♠ K♠ + two jokers: a flush (jokers as spades) or trips (jokers pairing a card); no straight window.
    assert hand_category("2♠ 9♠ K♠ JK JK") == H.FLUSH  # system=None: the highest category
    assert hand_category("2♠ 9♠ K♠ JK JK", "american") == H.FLUSH  # 20 > 10
    assert hand_category("2♠ 9♠ K♠ JK JK", "english") == H.THREE_OF_A_KIND  # 6 > 5: worth most, not highest


def test_joker_prefers_straight_under_english_and_flush_under_american():
    # Two jokers with 2♠ 3♠ 4♥: straight (12 English / 15 American) or trips (6 / 10) -- no flush.
    # With three suited cards the jokers can make a flush (5 / 20) or a straight flush; use a table
    # where straight-flush is impossible: 2♠ 3♠ 9♠ can flush but not straight.
    # The decisive case: a custom table where straight > flush vs flush > straight.
    line = "2s 3s 4s 6h JK"  # straight (joker as 5) or pair; flush impossible
    assert score_hand(line, "english") == 12
    mixed = {"straight": 12, "flush": 20, "straight_flush": 0, "royal_flush": 0, "four_of_a_kind": 16,
             "full_house": 10, "three_of_a_kind": 6, "two_pair": 3, "one_pair": 1}
    line = "2s 3s 4s 6s JK"  # joker: 5♠ makes a straight flush (worth 0 here), 5♥ a straight, K♠ a flush
    assert hand_category(line, mixed) == H.FLUSH
    assert score_hand(line, mixed) == 20
    mixed2 = dict(mixed, flush=5)
    assert hand_category(line, mixed2) == H.STRAIGHT
    assert score_hand(line, mixed2) == 12


cards_without_repeats = st.lists(st.integers(0, 53), min_size=0, max_size=5, unique=True)


@settings(max_examples=300, deadline=None)
@given(cards_without_repeats)
def test_tables_agree_with_the_plain_definition(cards):
    # Every line of 0-5 cards, jokers included: the table's category set equals brute force.
    from pokersquares_env.scoring import LINE_MASK, line_keys

    padded = np.array(cards + [-1] * (5 - len(cards)))
    mask = int(LINE_MASK[int(line_keys(padded))])
    assert {HandCategory(c) for c in range(11) if mask >> c & 1} == achievable(cards)
    for name in ("american", "english"):
        assert score_hand(cards, name) == best_points(cards, POINT_SYSTEMS[name])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 53), min_size=5, max_size=5, unique=True),
       st.dictionaries(st.sampled_from(CATEGORY_KEYS), st.integers(-50, 50)))
def test_custom_tables_take_the_best_joker_choice(cards, overrides):
    table = dict(POINT_SYSTEMS["english"], **overrides)
    assert score_hand(cards, table) == best_points(cards, table)


grids = st.permutations(list(range(54))).map(lambda p: p[:25])


@settings(max_examples=100, deadline=None)
@given(grids, st.permutations(range(5)), st.permutations(range(5)))
def test_grid_score_invariant_under_row_column_permutation_and_transpose(cards, rows, cols):
    g = np.array(cards).reshape(5, 5)
    for system in ("american", "english"):
        base = score_grid(g, system)
        assert score_grid(g[list(rows)], system) == base
        assert score_grid(g[:, list(cols)], system) == base
        assert score_grid(g.T, system) == base


@settings(max_examples=30, deadline=None)
@given(st.lists(grids, min_size=1, max_size=8))
def test_score_grids_matches_score_grid(boards):
    arr = np.array(boards)
    for system in ("american", "english"):
        assert score_grids(arr, system).tolist() == [score_grid(b, system) for b in boards]
        assert score_grids(arr.reshape(-1, 5, 5), system).tolist() == [score_grid(b, system) for b in boards]


def test_incomplete_grids_score_rank_groups_only():
    grid = [-1] * 25
    for cell, card in zip(range(4), parse_cards("7c 7d 7h 2s"), strict=True):
        grid[cell] = card  # four cards of row 1: trips
    grid[5:10] = parse_cards("2c 3c 4c 5c")[:4] + [-1]  # four-card straight flush draw: nothing
    assert line_points(grid, "american")[:2] == [10, 0]
    assert grid_hands(grid)[2] == "none"  # an empty line has no hand
    assert score_grid(grid, "american") == 10


def test_game_hands_name_only_complete_lines_unless_partial():
    from pokersquares_env.core import PokerSquaresGame

    game = PokerSquaresGame()
    state = game.init(parse_cards("7♣ 7♦ K♠") + [c for c in range(52) if c not in parse_cards("7♣ 7♦ K♠")])
    for cell in (0, 1, 24):  # 7♣ on a1, 7♦ on b1 (row 1), K♠ alone on e5
        game.apply(state, cell)
    assert game.hands(state) == ["none"] * 10  # no line is complete yet
    partial = game.hands(state, partial=True)
    assert partial[0] == "one_pair"  # row 1: 7♣ 7♦
    assert partial[4] == "high_card" and partial[5] == "high_card"  # one-card lines: row 5 (K♠), col a (7♣)
    assert partial[9] == "high_card" and partial[2] == "none"  # col e (K♠); row 3 is empty
    assert game.line_points(state, partial=True)[0] == 2 and game.line_points(state)[0] == 0


def test_random_play_expectation_matches_neller():
    # Published: 14.415 American, 7.676 English (Neller; exact expectation of random play).
    assert expected_random_score("american") == pytest.approx(14.415, abs=5e-4)
    assert expected_random_score("english") == pytest.approx(7.676, abs=5e-4)
    assert expected_random_score("american", jokers=np.int64(1)) == expected_random_score("american", jokers=1)
    for bad, error in ((1.0, TypeError), (True, TypeError), ("1", TypeError), (3, ValueError)):
        with pytest.raises(error, match=f"jokers={bad!r}: expected 0, 1 or 2"):  # before: a deep TypeError, or True as 1
            expected_random_score("american", jokers=bad)


def test_point_system_specs(tmp_path):
    assert point_system("American").name == "american"
    ps = point_system("english", win_threshold=60)
    assert ps.win_threshold == 60 and ps["straight"] == 12
    assert point_system("american").win_threshold == 100 and point_system("english").win_threshold == 70
    table = {k: 1 for k in CATEGORY_KEYS if k not in ("high_card", "five_of_a_kind")}
    custom = point_system(table)
    assert custom["high_card"] == 0 and custom["five_of_a_kind"] == custom["four_of_a_kind"]
    # distinct values: the missing five of a kind takes four of a kind's points (50), not another category's
    no_five = {k: v for k, v in POINT_SYSTEMS["american"].items() if k != "five_of_a_kind"}
    assert point_system(no_five)["five_of_a_kind"] == 50
    assert score_hand("7♣ 7♦ 7♥ 7♠ JK", no_five) == 50
    path = tmp_path / "pps.json"
    path.write_text(json.dumps({"name": "flat", "points": table, "win_threshold": 5}))
    loaded = point_system(str(path))
    assert loaded.name == "flat" and loaded.win_threshold == 5
    assert point_system(loaded.to_json()) == loaded
    assert isinstance(PointSystem.from_spec("english"), PointSystem)


@pytest.mark.parametrize(
    "table, message",
    [
        ({"royal_flush": 1}, "missing hand categories"),
        (dict(POINT_SYSTEMS["american"], bogus=3), "unknown hand category 'bogus'"),
        (dict(POINT_SYSTEMS["american"], flush="many"), "'many' is not a number"),
        (dict(POINT_SYSTEMS["american"], flush=float("nan")), "not finite"),
        (dict(POINT_SYSTEMS["american"], flush=True), "not a number"),
    ],
)
def test_invalid_tables_raise_clear_errors(table, message):
    with pytest.raises((ValueError, TypeError), match=message):
        point_system(table)


def test_unknown_system_name_and_broken_file(tmp_path):
    with pytest.raises(ValueError, match="unknown point system 'klingon'"):
        point_system("klingon")
    with pytest.raises(ValueError, match="point system file '.*missing.json' does not exist"):
        point_system(str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        point_system(str(bad))
    folder = tmp_path / "folder.json"
    folder.mkdir()
    with pytest.raises(ValueError, match="folder.json' cannot be read"):
        point_system(str(folder))
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"flush": "\xff"}')
    with pytest.raises(ValueError, match="latin.json' is not UTF-8"):
        point_system(str(latin))


def test_a_wrapped_table_with_a_misspelt_key_is_refused():
    table = dict(POINT_SYSTEMS["american"])
    with pytest.raises(ValueError, match="unknown key 'win_treshold'.*'win_threshold'"):
        point_system({"name": "x", "points": table, "win_treshold": 5})
    with pytest.raises(ValueError, match="unknown key 'point'"):
        point_system({"name": "x", "point": table})
    with pytest.raises(ValueError, match="'points' is None: expected a mapping"):
        point_system({"name": "x", "win_threshold": 5})
    assert point_system({"name": "x", "points": table, "win_threshold": 5}).win_threshold == 5


@pytest.mark.parametrize("wrapper", [{"win_threshold": 70}, {"name": "mine"}, {"name": "mine", "win_threshold": 70}])
def test_a_plain_table_with_a_wrapper_key_is_told_to_put_its_categories_under_points(tmp_path, wrapper):
    """Before, a plain table with ``win_threshold`` or ``name`` beside its categories was refused as having an
    "unknown key 'flush'", a valid category; the error now says the categories go under ``'points'``."""
    table = dict(POINT_SYSTEMS["english"])
    keys = " and ".join(repr(k) for k in ("name", "win_threshold") if k in wrapper)
    expected = (rf"point system: {keys} beside hand categories \(.*flush.*\): a table with 'name' or 'win_threshold' "
                r"puts its categories under 'points': \{\"name\": \.\.\., \"points\": \{\.\.\.\}, ")
    with pytest.raises(ValueError, match=expected) as caught:
        point_system({**table, **wrapper})
    assert "unknown key" not in str(caught.value)
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps({**table, **wrapper}))
    with pytest.raises(ValueError, match=rf"point system file '.*mixed.json': {expected}"):
        point_system(str(path))
    wrapped = point_system({"points": table, **wrapper})  # the wrapped form is read as before
    assert wrapped.as_dict() == point_system(table).as_dict()
    assert wrapped.win_threshold == (70 if "win_threshold" in wrapper else None)
    assert wrapped.name == wrapper.get("name", "custom")


def test_bad_grids_raise():
    with pytest.raises(ValueError, match="expected 25"):
        score_grid(list(range(24)))
    with pytest.raises(ValueError, match="appears twice"):
        score_grid([0] * 25)
    with pytest.raises(ValueError, match="out of range"):
        score_grid(list(range(24)) + [99])
    with pytest.raises(ValueError):
        score_grids(np.zeros((3, 24), dtype=int))


@pytest.mark.parametrize("shape", [(2, 3, 25), (3, 5, 5, 5), (25,), (1, 5, 25)])
def test_score_grids_refuses_shapes_other_than_n_by_25_or_n_by_5_by_5(shape):
    with pytest.raises(ValueError, match=r"expected \(N, 25\) or \(N, 5, 5\)"):
        score_grids(np.full(shape, -1))


def test_score_grids_refuses_a_card_twice_as_score_grid_does():
    """Four 2♣ are not four of a kind: a board holding a card twice is named, not scored."""
    ok = np.array([[0, 13, 26, 39, 1] + [-1] * 20, [-1] * 25])  # a real four of a kind; an empty board
    assert score_grids(ok).tolist() == [50.0, 0.0]
    bad = np.array([[-1] * 25, [0, 0, 0, 0, 1] + [-1] * 20])
    with pytest.raises(ValueError, match=r"board 1 holds card 2♣ \(code 0\) twice"):
        score_grids(bad)
    with pytest.raises(ValueError, match=r"board 0 holds card JK \(code 53\) twice"):
        score_grids(np.array([[53, 53] + list(range(23))]))


def test_a_point_table_naming_a_hand_twice_or_too_large_a_value_is_refused():
    twice = dict(POINT_SYSTEMS["american"])
    twice["One Pair"] = 3  # the same hand as one_pair, in another spelling: which one was meant?
    with pytest.raises(ValueError, match=r"hand category 'one_pair' is given twice \(as 'one_pair' and as 'One Pair'\)"):
        point_system(twice)
    by_index = {1: 3, **POINT_SYSTEMS["american"]}  # HandCategory 1 is one pair; before: "(as 'one_pair' too)"
    with pytest.raises(ValueError, match=r"hand category 'one_pair' is given twice \(as 1 and as 'one_pair'\)"):
        point_system(by_index)
    huge = dict(POINT_SYSTEMS["american"], one_pair=10**400)
    with pytest.raises(ValueError, match=r"\['one_pair'\]: points 1000.* is too large for a float"):
        point_system(huge)


def test_point_table_values_are_bounded_so_that_scores_stay_finite_and_exact(tmp_path):
    """Before, every category at 1e308 passed: ``solve --scoring`` then crashed with an OverflowError and
    ``evaluate`` printed inf and nan."""
    for value in (1e308, -1e13, 10**12 + 1):
        with pytest.raises(ValueError, match=r"\['royal_flush'\]: points .* is too large: expected at most 1e\+12"):
            point_system(dict(POINT_SYSTEMS["american"], royal_flush=value))
    path = tmp_path / "huge.json"
    path.write_text(json.dumps({k: 1e308 for k in POINT_SYSTEMS["american"]}))
    with pytest.raises(ValueError, match=r"points 1e\+308 is too large"):
        point_system(str(path))
    edge = point_system(dict(POINT_SYSTEMS["american"], royal_flush=10**12, one_pair=-(10**12)))
    assert edge["royal_flush"] == 1e12 and edge["one_pair"] == -1e12
    assert score_hand("As Ks Qs Js Ts", edge) == 10**12 and score_grid(RUSSIAN_EXAMPLE, edge) == 200  # exact: 1e12 - 1e12
    # A PointSystem built directly gets the same checks as a table read by point_system.
    with pytest.raises(ValueError, match=r"point system 'x'\['high_card'\]: points 1e\+300 is too large"):
        PointSystem("x", (1e300,) * len(CATEGORY_KEYS), None)
    with pytest.raises(TypeError, match=r"point system 'x'\['high_card'\]: points 'a' is not a number"):
        PointSystem("x", ("a",) * len(CATEGORY_KEYS), None)


def test_a_bad_win_threshold_is_called_a_threshold_not_points():
    """Before, ``point_system("american", win_threshold="abc")`` (and so ``gym.make(..., win_threshold="abc")``) said
    "win_threshold: points 'abc' is not a number", and a table's threshold "win_threshold: points ..." likewise."""
    with pytest.raises(TypeError, match=r"^win_threshold: value 'abc' is not a number$"):
        point_system("american", win_threshold="abc")
    with pytest.raises(ValueError, match=r"^win_threshold: value inf is not finite$"):
        point_system("english", win_threshold=float("inf"))
    with pytest.raises(TypeError, match=r"^point system 'm': win_threshold 'x' is not a number$"):
        point_system({"name": "m", "points": {"one_pair": 1}, "win_threshold": "x"})


def test_a_point_system_built_directly_checks_its_name_points_and_threshold():
    """Before, PointSystem("m", pts, "100") was accepted and the 25th step failed comparing a float with a str; a NaN
    threshold made every game lost; PointSystem("m", 5) failed with "object of type 'int' has no len()"."""
    pts = point_system("american").points
    for bad, error, match in (
        (("m", pts, "100"), TypeError, r"point system 'm': win_threshold '100' is not a number: expected a number"),
        (("m", pts, float("nan")), ValueError, r"win_threshold nan is not finite"),
        (("m", pts, True), TypeError, r"win_threshold True is not a number"),
        (("m", 5), TypeError, r"point system 'm': points 5 is not a sequence: expected 11 numbers"),
        (("m", "abcdefghijk"), TypeError, r"points 'abcdefghijk' is not a sequence"),
        ((7, pts), TypeError, r"point system name 7: expected a non-empty string"),
        (("", pts), ValueError, r"point system name '': expected a non-empty string"),  # a TypeError before
        (("  ", pts), ValueError, r"point system name '  ': expected a non-empty string"),
    ):
        with pytest.raises(error, match=match):
            PointSystem(*bad)
    assert PointSystem("m", list(pts), 100).win_threshold == 100


def test_a_custom_table_cannot_take_a_built_in_name(tmp_path):
    """Before, {"name": "american", "points": <flush 200>} kept the name: evaluations labelled its scores American
    (beside a different mean_american) and dropped the real American comparison."""
    table = dict(POINT_SYSTEMS["american"], flush=200)
    with pytest.raises(ValueError, match=r"point system named 'American' with other points than the american table "
                                         r"\(flush 200, not 20\): expected the american values under that name"):
        point_system({"name": "American", "points": table})
    # the built-in name with the built-in points stays, also with another threshold
    assert point_system({"name": "english", "points": dict(POINT_SYSTEMS["english"])}).points == \
        point_system("english").points
    assert point_system("american", win_threshold=300).name == "american"
    # a plain table in a file whose stem is a built-in name is named by the whole file name unless it is that table
    other = tmp_path / "american.json"
    other.write_text(json.dumps(table))
    assert point_system(str(other)).name == "american.json"
    other.write_text(json.dumps(dict(POINT_SYSTEMS["american"])))
    assert point_system(str(other)).name == "american"


def test_a_built_in_table_under_its_name_is_that_system(tmp_path):
    """Before, {"name": "american", "points": <the American table>} and a file American.json holding the table had
    no win threshold (the built-in has 100), and the file's system was named 'American'."""
    american, english = dict(POINT_SYSTEMS["american"]), dict(POINT_SYSTEMS["english"])
    for spec in ({"name": "american", "points": american}, {"name": " American ", "points": american}):
        assert point_system(spec) == point_system("american")
        assert point_system(spec).name == "american" and point_system(spec).win_threshold == 100
    assert point_system({"name": "ENGLISH", "points": english}).win_threshold == 70
    # a threshold given, None included, stays
    assert point_system({"name": "american", "points": american, "win_threshold": None}).win_threshold is None
    assert point_system({"name": "american", "points": american, "win_threshold": 150}).win_threshold == 150
    assert point_system(point_system("american", win_threshold=None).to_json()).win_threshold is None
    path = tmp_path / "American.json"
    path.write_text(json.dumps(american))
    assert point_system(str(path)) == point_system("american")
    path.write_text(json.dumps({"points": american, "win_threshold": 120}))
    assert point_system(str(path)).name == "american" and point_system(str(path)).win_threshold == 120
    wrapped = tmp_path / "mine.json"
    wrapped.write_text(json.dumps({"name": "English", "points": english}))
    assert point_system(str(wrapped)) == point_system("english")
    # built directly, the name is the built-in's too (the threshold is the one given)
    assert PointSystem("American", point_system("american").points).name == "american"
    # other points under a built-in name are still refused
    with pytest.raises(ValueError, match=r"point system named 'English' with other points than the english table"):
        point_system({"name": "English", "points": dict(english, flush=6)})


def test_a_point_system_stores_its_points_as_a_tuple_of_python_numbers():
    """Before, the points were kept as given: an array made == raise "truth value ... is ambiguous", a list made the
    system unhashable and unequal to the same tuple, the list could be changed after the checks, and numpy values
    did not serialise to JSON."""
    values = list(range(11))
    systems = [PointSystem("x", np.arange(11)), PointSystem("x", values), PointSystem("x", tuple(range(11)))]
    assert systems[0] == systems[1] == systems[2]
    assert len({hash(s) for s in systems}) == 1
    assert all(type(s.points) is tuple and all(type(p) is int for p in s.points) for s in systems)
    values[1] = 99
    assert systems[1]["one_pair"] == 1 and score_hand("7c 7d", systems[1]) == 1
    odd = PointSystem("y", (np.float32(2.5), *np.arange(10, dtype=np.int16)), np.int64(5))
    assert type(odd.points[0]) is float and type(odd.points[1]) is int and type(odd.win_threshold) is int
    assert json.loads(json.dumps(odd.to_json())) == {"name": "y", "points": dict(zip(CATEGORY_KEYS, [2.5, *range(10)])),
                                                     "win_threshold": 5}
    assert type(PointSystem("z", values, np.float64(7.5)).win_threshold) is float
    assert point_system(odd.to_json()) == odd


def test_a_point_file_naming_a_key_twice_is_refused(tmp_path):
    """Before, the last of two values for a key silently won."""
    path = tmp_path / "dup.json"
    path.write_text('{"royal_flush": 100, "royal_flush": 5, "straight_flush": 75, "four_of_a_kind": 50, '
                    '"full_house": 25, "flush": 20, "straight": 15, "three_of_a_kind": 10, "two_pair": 5, '
                    '"one_pair": 2}')
    with pytest.raises(ValueError, match=r"point system file '.*dup.json': key 'royal_flush' is given twice"):
        point_system(str(path))
    path.write_text(json.dumps({"name": "x", "points": dict(POINT_SYSTEMS["american"])})[:-1] + ', "name": "y"}')
    with pytest.raises(ValueError, match=r"point system file '.*dup.json': key 'name' is given twice"):
        point_system(str(path))


def test_a_point_file_nested_too_deeply_is_named_not_a_traceback(tmp_path, capsys):
    """Before, RecursionError: a traceback and exit 1 from evaluate, play, solve, train, demo and experiment."""
    from pokersquares_env.cli import main

    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match=r"point system file '.*deep.json': JSON nested too deeply to read"):
        point_system(str(path))
    assert main(["evaluate", "--agent", "random", "--games", "1", "--scoring", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "nested too deeply" in err and "Traceback" not in err and err.count("\n") == 1


def test_a_bad_value_in_a_point_file_names_the_file_and_the_key(tmp_path):
    """Before, a NaN said "point table['flush']: points nan is not finite" (which file?) and a 5,000-digit integer
    gave Python's bare "Exceeds the limit (4300 digits) for integer string conversion"."""
    text = json.dumps(dict(POINT_SYSTEMS["american"], flush=12345))
    path = tmp_path / "odd.json"
    path.write_text(text.replace("12345", "NaN"))
    with pytest.raises(ValueError, match=r"point system file '.*odd.json': point table\['flush'\]: points nan is not "
                                         r"finite"):
        point_system(str(path))
    path.write_text(text.replace("12345", "1" + "0" * 5000))
    with pytest.raises(ValueError, match=r"point system file '.*odd.json': 'flush' is a 5001-digit integer"):
        point_system(str(path))
    path.write_text(json.dumps({"name": "x", "points": dict(POINT_SYSTEMS["american"]), "win_threshold": 12345})
                    .replace("12345", "-" + "9" * 4400))
    with pytest.raises(ValueError, match=r"odd.json': 'win_threshold' is a 4400-digit integer"):
        point_system(str(path))
    path.write_text(json.dumps({"name": "x", "points": dict(POINT_SYSTEMS["american"], flush="many")}))
    with pytest.raises(TypeError, match=r"point system file '.*odd.json': point system 'x'\['flush'\]: points 'many'"):
        point_system(str(path))


def test_a_wrapped_table_names_itself_with_a_string_or_not_at_all(tmp_path):
    """Before, {"name": None, ...} was named 'None' and {"name": 5, ...} '5'."""
    table = dict(POINT_SYSTEMS["american"], flush=21)
    assert point_system({"name": None, "points": table}).name == "custom"
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"name": None, "points": table}))
    assert point_system(str(path)).name == "mine"  # as a table without a name is named after its file
    for bad in (5, ["x"], True):
        with pytest.raises(ValueError, match=rf"point system: 'name' is {re.escape(repr(bad))}: expected a string"):
            point_system({"name": bad, "points": table})


@pytest.mark.parametrize("hand", [47, None, 2.5])
def test_a_hand_that_is_not_a_list_of_cards_is_named(hand):
    """Before: a bare "TypeError: 'int' object is not iterable"."""
    for function in (hand_category, score_hand):
        with pytest.raises(TypeError, match=rf"hand {re.escape(repr(hand))}: expected up to 5 cards \(text or codes\)"):
            function(hand)


def test_score_grids_names_a_code_too_large_for_int64_as_it_is():
    """Before, 2**63 + 5 in a uint64 array was named as the code -9223372036854775803."""
    with pytest.raises(ValueError, match=rf"boards hold card code {2**63 + 5}: expected -1 \(empty\) or 0..53"):
        score_grids(np.full((1, 25), 2**63 + 5, dtype=np.uint64))
    with pytest.raises(ValueError, match=r"boards hold card code 54: expected"):
        score_grids(np.array([[54] + [-1] * 24], dtype=np.int8))
    assert score_grids(np.array([list(range(25))], dtype=np.uint64)).tolist() == [score_grid(list(range(25)))]


def test_fractional_tables_add_the_lines_in_one_order_everywhere():
    """score_grid, score_grids and line_points agree bit for bit under fractions (rows then columns, left to right);
    before, score_grid's numpy sum gave 1.8000000000000003 where the game's gave 1.8000000000000005."""
    table = {"high_card": 0.1, "one_pair": 0.2, "two_pair": 0.3, "three_of_a_kind": 0.3, "straight": 0.3,
             "flush": 0.3, "full_house": 0.3, "four_of_a_kind": 0.3, "straight_flush": 0.3, "royal_flush": 0.3}
    board = list(range(25))
    total = 0.0
    for points in line_points(board, table):
        total += points
    assert score_grid(board, table) == total == 1.8000000000000005
    assert score_grids(np.array([board, board[::-1]]), table).tolist() == [total, score_grid(board[::-1], table)]


@settings(max_examples=60, deadline=None)
@given(threshold=st.one_of(st.integers(-50, 300), st.floats(-50, 300, allow_nan=False)),
       scores=st.lists(st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=True, allow_infinity=True),
                                 st.sampled_from([0.9999999999999999, 0.6000000000000001, 2.0**53 + 2, -0.0])),
                       min_size=1, max_size=40))
def test_won_on_an_array_is_won_of_each_score(threshold, scores):
    """won() of an array compares whole scores as an array (the vector env's final infos: it was a Python loop over
    every game) and must still give exactly what points_level gives score by score."""
    system = PointSystem("m", point_system("american").points, threshold)
    array = np.array(scores, dtype=np.float64)
    expected = [system.won(float(s)) for s in array]
    assert system.won(array).tolist() == expected
    if len(array) % 2 == 0:
        assert system.won(array.reshape(2, -1)).ravel().tolist() == expected


def test_hand_category_names_are_read_in_any_spelling_and_a_bool_is_not_a_category():
    """``from_key`` takes a category's key in any case, with spaces or hyphens and around spaces; an int only in
    range (the error names the range); True is no category (bool is an int, but no table means hand 1 by True)."""
    for spelling in ("full_house", "Full House", " full house ", "FULL-HOUSE", H.FULL_HOUSE, 6, np.int8(6)):
        assert H.from_key(spelling) is H.FULL_HOUSE
    assert H.FULL_HOUSE.label == "Full house" and H.ROYAL_FLUSH.label == "Royal flush"
    assert H.FULL_HOUSE.key == "full_house"
    with pytest.raises(ValueError, match=r"^hand category 11 out of range: expected 0\.\.10$"):
        H.from_key(11)
    for bad in (True, False):
        with pytest.raises(ValueError, match=rf"unknown hand category {bad}: expected one of high_card, "):
            H.from_key(bad)
    with pytest.raises(ValueError, match="unknown hand category True"):
        point_system("american")[True]


def test_a_hand_of_four_cards_and_a_joker_makes_only_rank_groups():
    """An incomplete line scores its rank groups only, jokers included: a joker beside 2♠ 3♠ 4♠ pairs one of them
    (no straight, flush or straight flush needs five cards)."""
    assert hand_category("2s 3s 4s JK") == H.ONE_PAIR and score_hand("2s 3s 4s JK") == 2
    assert hand_category("Ts Js Qs Ks JK") == H.ROYAL_FLUSH  # five cards: the flushes count
    assert hand_category("7c 7d 7h JK") == H.FOUR_OF_A_KIND and hand_category("2s 3s JK JK") == H.THREE_OF_A_KIND


def test_more_than_five_cards_are_not_a_hand():
    with pytest.raises(ValueError, match=r"^hand has 6 cards: expected at most 5$"):
        hand_category("2c 3c 4c 5c 6c 7c")
    with pytest.raises(ValueError, match=r"^hand has 6 cards: expected at most 5$"):
        score_hand(list(range(6)))


def test_scores_default_to_american_and_are_ints_under_whole_points():
    """Without a system the American table scores (the documented default); whole points give ints, fractional
    points floats."""
    grid = list(range(25))
    assert score_hand("7c 7d 7h 2s 2c") == 25 and line_points(RUSSIAN_EXAMPLE) == line_points(RUSSIAN_EXAMPLE,
                                                                                               "american")
    assert score_grid(RUSSIAN_EXAMPLE) == 302
    assert type(score_hand("7c 7d 7h 2s 2c")) is int and type(score_grid(grid)) is int
    assert all(type(p) is int for p in line_points(grid, "english"))
    tenths = {key: 0.5 for key in CATEGORY_KEYS}
    assert type(score_hand("7c 7d", tenths)) is float and type(score_grid(grid, tenths)) is float
    assert all(type(p) is float for p in line_points(grid, tenths))
    assert type(score_hand("7c 7d", PointSystem("halves", [2.0] * 11))) is int  # whole floats are whole points


def test_a_grid_of_text_with_other_than_25_cards_is_refused():
    short = RUSSIAN_EXAMPLE[:RUSSIAN_EXAMPLE.rindex(" ")]  # the last card cut: 24 cards
    for function in (score_grid, line_points, grid_hands):
        with pytest.raises(ValueError, match=r"^grid has 24 cards: expected 25 \(row-major, -1 for an empty cell\)$"):
            function(short)


def test_score_grids_refuses_codes_below_empty_and_non_integer_arrays():
    with pytest.raises(ValueError, match=r"^boards hold card code -2: expected -1 \(empty\) or 0\.\.53$"):
        score_grids(np.array([[-2] + list(range(24))]))
    with pytest.raises(TypeError, match=r"^boards have dtype float64: expected integer card codes$"):
        score_grids(np.array([list(range(25))], dtype=np.float64))
    assert score_grids(np.full((2, 25), -1)).tolist() == [0.0, 0.0]


def test_expected_random_score_is_exact():
    """10 lines times the exact mean hand value: 10 when every hand is worth 1, and 10 times the chance of one pair
    (1,098,240 of the 2,598,960 hands) when only a pair pays."""
    assert expected_random_score({key: 1 for key in CATEGORY_KEYS}) == 10.0
    only_pair = dict.fromkeys(CATEGORY_KEYS, 0) | {"one_pair": 1}
    assert expected_random_score(only_pair) == pytest.approx(10 * 1_098_240 / 2_598_960, rel=1e-12)


def test_reward_scale_factor_takes_a_positive_number_or_the_normalized_scale():
    from pokersquares_env.scoring import reward_scale_factor

    assert reward_scale_factor(2, "american") == 2.0 and type(reward_scale_factor(2, "american")) is float
    assert reward_scale_factor("normalized", "english") == 1 / expected_random_score("english")
    for bad in (0, -1.5, True, 10**400, float("inf"), float("nan"), "2", None):
        with pytest.raises(ValueError, match=rf"^reward_scale={re.escape(repr(bad))}: expected a positive finite "
                                             r"number or 'normalized'$"):
            reward_scale_factor(bad, "american")
    zeros = dict.fromkeys(CATEGORY_KEYS, 0)
    with pytest.raises(ValueError, match=r"expected random-play score, which is 0\.000 under 'custom': pass a "
                                         r"positive number instead"):
        reward_scale_factor("normalized", zeros)


def test_a_point_system_needs_exactly_one_value_per_category():
    for count in (10, 12):
        with pytest.raises(ValueError, match=rf"^point system 'm': expected 11 values, got {count}$"):
            PointSystem("m", tuple(range(count)))


def test_a_built_in_name_refuses_lower_points_too_and_names_at_most_three():
    american = dict(POINT_SYSTEMS["american"])
    with pytest.raises(ValueError, match=r"\(flush 19, not 20\): expected the american values"):
        point_system({"name": "american", "points": dict(american, flush=19)})
    three = dict(american, flush=19, straight=14, two_pair=4)
    with pytest.raises(ValueError, match=r"\(two_pair 4, not 5; straight 14, not 15; flush 19, not 20\): expected"):
        point_system({"name": "american", "points": three})
    with pytest.raises(ValueError, match=r"\(one_pair 1, not 2; two_pair 4, not 5; straight 14, not 15; \.\.\.\): "
                                         r"expected"):
        point_system({"name": "american", "points": dict(three, one_pair=1)})
    with pytest.raises(ValueError, match=r"\(flush 20\.5, not 20\)"):
        PointSystem("American", tuple(dict(american, flush=20.5)[k] for k in CATEGORY_KEYS))


def test_as_dict_gives_whole_points_as_ints():
    system = PointSystem("m", [float(v) for v in range(10)] + [2.5])
    assert system.as_dict() == dict(zip(CATEGORY_KEYS, [*range(10), 2.5]))
    assert all(type(v) is int for v in list(system.as_dict().values())[:10])
    assert json.dumps(system.to_json()["points"]) == json.dumps(dict(zip(CATEGORY_KEYS, [*range(10), 2.5])))


def test_without_a_threshold_no_score_is_won_and_scores_compare_to_nine_decimals():
    free = point_system("american", win_threshold=None)
    assert free.won(10**6) is False
    assert free.won(np.array([0.0, 500.0, 10.0**9])).tolist() == [False, False, False]
    one = point_system("american", win_threshold=1)
    assert one.won(1 - 1e-10) and not one.won(1 - 1e-8)  # 9 decimals: 0.9999999999 ties 1, 0.99999999 does not
    assert one.won(np.array([1 - 1e-10, 1 - 1e-8])).tolist() == [True, False]


def test_a_built_in_name_is_read_with_spaces_around_it_and_a_missing_json_file_is_named(tmp_path, monkeypatch):
    assert point_system(" English ") == point_system("english")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=r"^point system file 'nosuch\.json' does not exist: expected 'american'"):
        point_system("nosuch.json")
    with pytest.raises(ValueError, match=r"^unknown point system 'nosuch': expected 'american'"):
        point_system("nosuch")


def test_a_built_in_file_with_a_null_threshold_has_no_threshold(tmp_path):
    """The docstring: a table named 'american' by its file's stem takes the built-in threshold unless it gives a
    "win_threshold", null included."""
    path = tmp_path / "american.json"
    path.write_text(json.dumps({"points": dict(POINT_SYSTEMS["american"]), "win_threshold": None}))
    system = point_system(str(path))
    assert system.name == "american" and system.win_threshold is None


def test_a_wrapped_table_whose_points_are_not_a_mapping_is_named():
    for bad in ([1, 2], "flush", 5):
        with pytest.raises(ValueError, match=rf"^point system: 'points' is {re.escape(repr(bad))}: expected a mapping "
                                             r"of category to points$"):
            point_system({"name": "x", "points": bad})


def test_a_hand_may_be_a_numpy_array_of_codes_of_any_shape():
    """A row cut from an (N, 25) or 5x5 board array, 1-D or not, is a hand of its codes."""
    board = np.array(parse_cards("7c 7d 7h 7s Ac 2c 3d 4d 5d 6h"), dtype=np.int64).reshape(2, 5)
    assert score_hand(board[0]) == 50 and score_hand(board[:1]) == 50
    assert hand_category(board[1:].astype(np.uint8)) == H.STRAIGHT
    with pytest.raises(ValueError, match=r"^hand has 10 cards: expected at most 5$"):
        score_hand(board)


def test_bad_scores_and_hands_are_refused_with_the_value_named():
    """Before: ``PointSystem(..., 10**400)`` raised a bare OverflowError, ``won(None)`` a bare TypeError,
    ``won("abc")`` numpy's 'could not convert string to float', ragged ``score_grids`` numpy's 'inhomogeneous
    shape', and ``score_hand({0: 1})`` scored the dict's keys."""
    american = point_system("american")
    with pytest.raises(ValueError, match=r"point system 'm': win_threshold 1000.* is too large for a float: "
                                         r"expected a finite number or None"):
        PointSystem("m", american.points, 10**400)
    system = point_system("american", win_threshold=100)
    for bad in (None, "abc", True, [1, "x"], object()):
        with pytest.raises((TypeError, ValueError), match=r"expected a number or an array of numbers") as err:
            system.won(bad)
        assert repr(bad)[:8] in str(err.value)
    assert system.won(10**400) is True and system.won(-(10**400)) is False  # past floats: still ordered
    assert system.won(np.array(120.0)) is True and system.won(np.array(99)) is False  # a 0-d array is a number
    with pytest.raises(ValueError, match=r"boards are ragged .*expected \(N, 25\) or \(N, 5, 5\)"):
        score_grids([[0] * 25, [1] * 24])
    for bad in ({0: 1}, {"2c": 1}):
        with pytest.raises(TypeError, match=r"hand \{.*\}: expected up to 5 cards"):
            score_hand(bad)
    assert score_hand({"Ah", "Ad"}) == score_hand(["Ah", "Ad"])  # a set of cards is still a hand


def test_point_systems_of_the_same_points_share_their_tables_read_only():
    """Each game record read from a file makes its own point system; their tables are built once per points table
    (before, 4-6 ms each: reading 6,000 records took 24 s) and cannot be changed through one of them."""
    import numpy as np
    import pytest

    from pokersquares_env.scoring import point_system

    a, b = point_system("american"), point_system(point_system("american").to_json())
    assert a is not b and a.best_points is b.best_points and a.best_category is b.best_category
    with pytest.raises(ValueError, match="read-only"):
        a.best_points[3] = 1.0
    assert np.array_equal(a.line_points_table, b.line_points_table)
    assert point_system("english").best_points is not a.best_points


# ---- from a mutation audit of scoring.py ----------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(1, 25), (25, 1), (5, 5, 1)])
def test_score_grid_refuses_shapes_other_than_25_or_5_by_5(shape):
    grid = np.arange(25).reshape(shape)
    for score in (score_grid, line_points, grid_hands):
        with pytest.raises(ValueError, match=rf"^grid has shape {re.escape(str(shape))}: expected 25 card codes "
                                             r"row-major or a 5x5 array$"):
            score(grid)


def test_a_win_threshold_of_zero_is_a_threshold_not_none():
    system = point_system("american", win_threshold=0)
    assert system.win_threshold == 0 and system.won(0) and not system.won(-1)
    assert point_system({"name": "m", "points": dict(POINT_SYSTEMS["english"]), "win_threshold": 0}).won(0)


def test_a_missing_point_file_with_an_upper_case_suffix_is_named_as_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=r"^point system file 'NOSUCH\.JSON' does not exist: expected 'american'"):
        point_system("NOSUCH.JSON")


@pytest.mark.parametrize("content, kind", [([1, 2], "list"), ("american", "str"), (5, "int")])
def test_a_point_file_holding_no_json_object_is_named(tmp_path, content, kind):
    path = tmp_path / "table.json"
    path.write_text(json.dumps(content))
    with pytest.raises(ValueError, match=rf"^point system file '.*table\.json': expected a JSON object, got {kind}$"):
        point_system(str(path))


def test_won_without_a_threshold_keeps_the_shape_of_the_scores():
    free = point_system("american", win_threshold=None)
    won = free.won(np.full((2, 3), 500.0))
    assert won.shape == (2, 3) and won.dtype == bool and not won.any()
