import json
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pokersquares_env.cards import parse_cards
from pokersquares_env.core import (
    ADJACENT,
    IllegalActionError,
    PokerSquaresGame,
    Rules,
    cell_name,
    parse_cell,
    shuffled_deck,
)
from pokersquares_env.scoring import add_points, score_grid


def test_cell_coordinates():
    assert parse_cell("c3") == 12 and cell_name(12) == "c3"
    assert parse_cell("a1") == 0 and parse_cell("E5") == 24 and parse_cell(7) == 7
    for bad in ("f1", "a6", "c", "", 25, -1):
        with pytest.raises(ValueError):
            parse_cell(bad)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([0, 1, 2]))
def test_step_is_pure_and_apply_matches_score(seed, jokers):
    rng = np.random.default_rng(seed)
    game = PokerSquaresGame(Rules(jokers=jokers), "english")
    state = game.init(game.deal(rng))
    total = 0.0
    while not state.terminal:
        cell = int(rng.choice(game.legal_cells(state)))
        before = state.copy()
        snapshot = {k: (list(v) if isinstance(v, list) else v) for k, v in vars(state).items()}  # not state.copy():
        nxt, points = game.step(state, cell)  # a copy sharing a list with `state` would change with it
        assert state == before and vars(state) == snapshot  # step does not touch its input
        assert all(getattr(nxt, k) is not v for k, v in vars(state).items() if isinstance(v, list))
        state = nxt
        total += points
    assert total == game.score(state) == score_grid(state.board, "english")
    assert sorted(state.placements) == list(range(25))
    assert len(game.unseen(state)) == 52 + jokers - 25


def test_unseen_excludes_the_drawn_card():
    game = PokerSquaresGame()
    deck = parse_cards("2c 3c 4c 5c 6c 7c 8c 9c Tc Jc Qc Kc Ac 2d 3d 4d 5d 6d 7d 8d 9d Td Jd Qd Kd")
    state = game.init(deck)
    assert deck[0] not in game.unseen(state) and len(game.unseen(state)) == 51
    game.apply(state, 0)
    assert deck[1] not in game.unseen(state) and len(game.unseen(state)) == 50


def test_adjacency_tables():
    assert bin(ADJACENT[12]).count("1") == 8
    assert bin(ADJACENT[0]).count("1") == 3
    assert ADJACENT[0] == (1 << 1) | (1 << 5) | (1 << 6)


def test_rules_validation():
    assert Rules(first_cell="center").first_cell == 12
    assert Rules(first_cell="top-left").first_cell == 0
    assert Rules(first_cell="b2").first_cell == 6
    with pytest.raises(ValueError, match="jokers"):
        Rules(jokers=True)


def test_first_cell_anywhere_none_and_row_first_coordinates():
    """'none' and 'anywhere' (any case) mean no first-cell rule, as the error message and ``--help`` say; a cell may
    be written row first ('3c'), as the terminal game reads a move."""
    for text in ("none", "None", "NONE", "anywhere", " Anywhere "):
        assert Rules(first_cell=text).first_cell is None and Rules(first_cell=text) == Rules()
        assert Rules.parse(f"first_cell={text.strip()}") == Rules()
    assert Rules.with_options(None, first_cell="anywhere") == Rules()
    assert Rules(first_cell="3c").first_cell == 12 and Rules(first_cell="4B").first_cell == parse_cell("b4") == 16
    assert Rules.parse("first-cell=1a") == Rules(first_cell=0)
    for bad in ("nowhere", "6c", "c6", 25, ""):
        with pytest.raises(ValueError, match=r"expected 'center', 'top-left', 'anywhere' or 'none' \(or None\), a "
                                             r"cell index 0..24 or coordinates such as 'c3'"):
            Rules(first_cell=bad)


def test_rules_parse_reads_specs_json_and_files(tmp_path):
    want = Rules(jokers=2, placement="adjacent", first_cell="center")
    assert Rules.parse("jokers=2, placement=adjacent, first-cell=center") == want
    assert Rules.parse('{"jokers": 2, "placement": "adjacent", "first_cell": 12}') == want
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(want.to_json()))
    (tmp_path / "list.json").write_text('["jokers"]')
    (tmp_path / "latin1.json").write_bytes(b'{"jokers": "\xff"}')
    assert Rules.parse(str(path)) == want
    upper = tmp_path / "RULES.JSON"  # before: read as KEY=VALUE pairs ("is not KEY=VALUE")
    upper.write_text(json.dumps(want.to_json()))
    plain = tmp_path / "rules_file"  # an existing file without the extension
    plain.write_text(json.dumps(want.to_json()))
    assert Rules.parse(str(upper)) == want and Rules.parse(str(plain)) == want
    assert Rules.parse(want.to_json()) == want and Rules.parse(want) is want
    assert Rules.parse("first_cell=none") == Rules() and Rules.parse("") == Rules()
    assert Rules.spec_options("first_cell=c3,jokers=1") == {"first_cell": 12, "jokers": 1}  # only what is named
    for bad, message in [("jokers=3", "jokers=3: expected 0, 1 or 2"),
                         ("jokers=two", "jokers='two': expected 0, 1 or 2"),
                         ("jokrs=1", r"unknown rule option\(s\) \['jokrs'\]"),
                         ("jokers", "'jokers' is not KEY=VALUE"),
                         ("jokers=1,jokers=2", "'jokers' is given twice"),
                         ("placement=diagonal", "placement='diagonal': expected 'free' or 'adjacent'"),
                         ("first_cell=z9", "first_cell='z9'"),
                         ("{jokers: 1}", "not valid JSON"),
                         (str(tmp_path / "missing.json"), "missing.json'.*cannot read it"),
                         (str(tmp_path / "latin1.json"), "latin1.json'.*not UTF-8"),
                         (str(tmp_path / "list.json"), "expected KEY=VALUE pairs, a JSON object or a mapping, got list")]:
        with pytest.raises(ValueError, match=message):
            Rules.parse(bad)


def test_rules_parse_reads_the_rules_of_a_saved_record(tmp_path):
    from pokersquares_env.records import GameRecord

    rules = Rules(jokers=1, placement="adjacent", first_cell="center")
    game = PokerSquaresGame(rules)
    state = game.init(shuffled_deck(np.random.default_rng(3), rules))
    while not state.terminal:
        game.apply(state, game.legal_cells(state)[0])
    path = tmp_path / "game.json"
    path.write_text(json.dumps(GameRecord.from_game(game, state).to_dict()))
    assert Rules.parse(str(path)) == rules
    newer = tmp_path / "v2.json"  # a record version this library does not read (replay refuses it too)
    newer.write_text(json.dumps({**GameRecord.from_game(game, state).to_dict(), "version": 2}))
    with pytest.raises(ValueError, match=r"v2.json': a game record of format 'pokersquares-record' version 2: "
                                         r"expected format 'pokersquares-record' version 1"):
        Rules.parse(str(newer))


def test_rules_json_that_cannot_be_read_is_named_not_a_traceback(tmp_path):
    """Before, deep nesting raised RecursionError (a traceback from every command taking --rules), a 5,000-digit
    integer said only "Exceeds the limit (4300 digits)..." without the file, and a key given twice kept its last
    value silently (where ``jokers=1,jokers=2`` is refused)."""
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    big = tmp_path / "big.json"
    big.write_text('{"jokers": ' + "9" * 5000 + "}")
    twice = tmp_path / "twice.json"
    twice.write_text('{"jokers": 2, "jokers": 0}')
    for bad, message in [(str(deep), r"rules file '.*deep.json': JSON nested too deeply to read"),
                         (str(big), r"rules file '.*big.json': cannot be read as JSON \(Exceeds the limit"),
                         (str(twice), r"rules file '.*twice.json': key 'jokers' is given twice"),
                         ('{"jokers": 1, "jokers": 2}', r"""rules '\{"jokers": 1, "jokers": 2\}': key 'jokers' is """
                                                        r"given twice")]:
        with pytest.raises(ValueError, match=message):
            Rules.parse(bad)


def test_illegal_first_cell_message():
    game = PokerSquaresGame(Rules(placement="adjacent", first_cell="center"))
    state = game.init(list(range(25)))
    assert game.legal_cells(state) == [12]
    with pytest.raises(IllegalActionError, match="first card must go on cell 12 \\(c3\\)"):
        game.apply(state, 0)
    game.apply(state, 12)
    with pytest.raises(IllegalActionError, match="touches no placed card"):
        game.apply(state, 0)


@pytest.mark.parametrize("cell", [-1, -25, 25, 99])
def test_apply_names_an_out_of_range_cell_and_leaves_the_state(cell):
    game = PokerSquaresGame()
    state = game.init(list(range(25)))
    game.apply(state, 3)
    before = (list(state.board), list(state.placements))
    with pytest.raises(IllegalActionError, match=f"cell {cell} is out of range"):
        game.apply(state, cell)
    assert (list(state.board), list(state.placements)) == before


def test_shuffled_deck_is_a_permutation():
    deck = shuffled_deck(np.random.default_rng(0), Rules(jokers=1))
    assert sorted(deck.tolist()) == list(range(53))


@pytest.mark.parametrize("rules", [Rules(), Rules(jokers=2), Rules(placement="adjacent", first_cell="center"),
                                   Rules(jokers=1, placement="adjacent"), Rules(first_cell="top-left"),
                                   Rules(first_cell=6)])
def test_rules_to_spec_reads_back(rules):
    spec = rules.to_spec()
    assert Rules.parse(spec) == rules
    # the first cell by name or coordinates, as a user writes it (it used to be first_cell=12)
    assert {12: "first_cell=center", 0: "first_cell=top-left", 6: "first_cell=b2"}.get(rules.first_cell, "") in spec
    assert (spec == "") == (rules == Rules())  # only options that differ from the defaults are named


@pytest.mark.parametrize("jokers", [1.0, "1", None, True])
def test_rules_refuse_jokers_that_are_not_integers(jokers):
    with pytest.raises(ValueError, match=rf"jokers={jokers!r}: expected 0, 1 or 2 \(an integer\)"):
        Rules(jokers=jokers)


def test_rules_store_numpy_joker_counts_as_python_ints():
    import json

    rules = Rules(jokers=np.int64(2))
    assert type(rules.jokers) is int and rules == Rules(jokers=2)
    assert json.loads(json.dumps(rules.to_json())) == {"jokers": 2, "placement": "free", "first_cell": None}


def test_game_takes_rule_specs_and_names_other_rule_types():
    assert PokerSquaresGame("jokers=2").rules == Rules(jokers=2)
    assert PokerSquaresGame({"placement": "adjacent"}).rules == Rules(placement="adjacent")
    with pytest.raises(TypeError, match=r"rules=\[2\]: expected a Rules"):
        PokerSquaresGame([2])


def test_rules_take_any_mapping():
    from types import MappingProxyType

    assert PokerSquaresGame(MappingProxyType({"jokers": 2})).rules == Rules(jokers=2)
    assert Rules.parse(MappingProxyType({"placement": "adjacent"})) == Rules(placement="adjacent")


@pytest.mark.parametrize("text", ["²", "1²", "٣"])
def test_parse_cell_names_digits_that_are_not_ascii(text):
    with pytest.raises(ValueError, match="bad cell"):
        parse_cell(text)


def test_check_deck_reads_a_tuple_deck_as_its_list_form():
    """Before, a deck that is not a list went through numpy, which converts mixed items: a tuple holding bools was
    read as the codes 1 and 0 (the list form is refused), and ('As', 5, ...) reported "bad card '5'"."""
    game = PokerSquaresGame()
    bools = [True, False] + list(range(2, 30))
    for deck in (bools, tuple(bools)):
        with pytest.raises(TypeError, match=r"deck\[0\]: card code True is not an integer"):
            game.check_deck(deck)
    mixed = ("As", 5) + tuple(range(6, 40))
    assert game.check_deck(mixed) == game.check_deck(list(mixed)) == (51, 5) + tuple(range(6, 40))
    assert game.check_deck(range(30)) == tuple(range(30)) == game.check_deck(np.arange(30))


@pytest.mark.parametrize("deck", [np.arange(52).reshape(2, 26), np.arange(30).reshape(5, 6), np.array(7)])
def test_check_deck_refuses_an_array_that_is_not_one_dimensional(deck):
    """Before, a 2-D array was flattened and accepted as a deck."""
    with pytest.raises(ValueError, match=rf"deck has shape {re.escape(str(deck.shape))}: expected a 1-D deck"):
        PokerSquaresGame().check_deck(deck)


@pytest.mark.parametrize("deck", [None, 5, {1, 2}, b"\x00\x01"])
def test_check_deck_names_a_deck_that_is_not_a_sequence(deck):
    with pytest.raises(TypeError, match=rf"deck {re.escape(repr(deck))}: expected a sequence of card codes"):
        PokerSquaresGame().check_deck(deck)


def test_every_path_adds_the_lines_of_a_board_the_same_way():
    """Before, the game added the 10 lines in order and score_grid with numpy's pairwise sum: under a table of
    fractions the same board scored 1.8000000000000005 and 1.8000000000000003."""
    from pokersquares_env.scoring import score_grids

    table = {"high_card": 0.1, "one_pair": 0.2, "two_pair": 0.3, "three_of_a_kind": 0.3, "straight": 0.3,
             "flush": 0.3, "full_house": 0.3, "four_of_a_kind": 0.3, "straight_flush": 0.3, "royal_flush": 0.3}
    game = PokerSquaresGame(system=table)
    state = game.init(list(range(52)))
    for cell in range(25):
        game.apply(state, cell)
    assert game.score(state) == score_grid(state.board, table) == score_grids(np.array([state.board]), table)[0]
    assert game.score(state) == 1.8000000000000005  # rows 1-5 then columns a-e, added left to right
    rng = np.random.default_rng(7)
    values = [0.1, 0.2, 0.3, 0.7, 1.1, 2.3, 1e-3, 0.15, -0.45]
    boards, systems = [], []
    for _ in range(150):
        pts = {k: float(rng.choice(values)) for k in table}
        game = PokerSquaresGame(Rules(jokers=int(rng.integers(3))), pts)
        state = game.init(game.deal(rng))
        while not state.terminal:
            game.apply(state, int(rng.choice(game.legal_cells(state))))
        assert game.score(state) == score_grid(state.board, pts) == game.score(state, partial=True)
        assert game.score(state) == score_grids(np.array([state.board]), pts)[0] == add_points(game.line_points(state))
        boards.append(state.board)
        systems.append(game.system)
    totals = score_grids(np.array(boards), systems[0])
    assert totals.tolist() == [score_grid(b, systems[0]) for b in boards]


def test_a_board_scores_the_same_under_a_python_whose_sum_compensates_rounding(monkeypatch):
    """Python 3.12's ``sum`` of floats compensates rounding (CPython gh-100425): ten lines of 0.1 total 1.0 there.
    Before, the game's score and the env's final infos used ``sum``, so on 3.12 they gave 1.0 and the array paths
    0.9999999999999999 (found running the suite on 3.12).  Here ``sum`` is replaced by a compensated one, as on 3.12,
    and every path must still add the lines left to right."""
    import builtins
    import math

    import gymnasium as gym

    from pokersquares_env.scoring import CATEGORY_KEYS, add_lines, score_grids

    monkeypatch.setattr(builtins, "sum", lambda values, start=0: start + math.fsum(values))
    assert sum([0.1] * 10) == 1.0  # the stand-in compensates, as 3.12's does
    assert add_points([0.1] * 10) == 0.9999999999999999 == add_lines(np.full(10, 0.1))
    tenths = {key: 0.1 for key in CATEGORY_KEYS}
    game = PokerSquaresGame(system=tenths)
    state = game.init(list(range(52)))
    for cell in range(25):
        game.apply(state, cell)
    assert game.score(state) == score_grid(state.board, tenths) == score_grids(np.array([state.board]), tenths)[0] \
        == 0.9999999999999999
    env = gym.make("PokerSquares-v0", scoring=tenths)
    env.reset(seed=0)
    info, done = {}, False
    while not done:
        _, _, done, _, info = env.step(int(np.flatnonzero(info.get("action_mask", np.ones(25)))[0]))
    assert info["score"] == 0.9999999999999999 == score_grid(env.unwrapped.state.board, tenths)
    env.close()


def test_rules_with_options_takes_a_rules_as_parse_does():
    """Before, Rules.with_options(Rules(jokers=1), placement='adjacent') failed: "expected KEY=VALUE pairs, a JSON
    object or a mapping, got Rules", though the docstring sends the spec to parse, which takes a Rules."""
    assert Rules.with_options(Rules(jokers=1), placement="adjacent") == Rules(jokers=1, placement="adjacent")
    assert Rules.with_options(Rules(jokers=1, first_cell="c3"), first_cell="center") == Rules(jokers=1, first_cell=12)
    assert Rules.with_options(Rules(placement="adjacent")) == Rules(placement="adjacent")
    assert Rules.spec_options(Rules(jokers=2, first_cell="a1")) == {"jokers": 2, "first_cell": 0}
    with pytest.raises(ValueError, match=r"jokers=2 contradicts rules Rules\(jokers=1.*\(jokers=1\)"):
        Rules.with_options(Rules(jokers=1), jokers=2)


def test_summary_text_takes_one_system_as_well_as_several():
    """Before, summary_text(game, state, systems="english") iterated the letters: "unknown point system 'e'"."""
    from pokersquares_env.scoring import point_system
    from pokersquares_env.text import summary_text

    game = PokerSquaresGame()
    state = game.init(list(range(52)))
    for cell in range(25):
        game.apply(state, cell)
    english = score_grid(state.board, "english")
    assert summary_text(game, state, "english").splitlines()[-1] == f"total english: {english}"
    assert summary_text(game, state, point_system("english")) == summary_text(game, state, "english")
    assert summary_text(game, state, ("american", "english")).splitlines()[-2:] == [
        f"total american: {score_grid(state.board)}", f"total english: {english}"]


@pytest.mark.parametrize("value, text", [
    (3, "3"), (-2.0, "-2"), (-0.0, "0"), (1e12, "1000000000000"), (2.5, "2.50"), (0.6, "0.60"), (-2.5, "-2.50"),
    (0.125, "0.125"), (2.675, "2.675"), (-0.004, "-0.004"), (0.005, "0.005"), (1e-7, "1e-07"), (-4e-05, "-4e-05"),
    (2.00001, "2.00001"), (1.8000000000000005, "1.80"), (np.float32(0.1), "0.10"),
])
def test_fmt_points_shows_every_value_that_is_not_zero(value, text):
    """Before, two decimals hid values: 1e-7 read '0.00', -0.004 '-0.00', 0.125 '0.12' (so the lines shown did not
    add up to the total shown)."""
    from pokersquares_env.text import fmt_points, signed_points

    assert fmt_points(value) == text
    assert signed_points(value) == ("-" if value < 0 else "+") + text.lstrip("-")


def test_apply_refuses_bools_and_floats_and_the_card_is_none_after_25():
    """Mutants a mutation audit found alive: apply(state, True) placing on cell 1, and state.card giving the 26th
    card of a longer deck once the board is full (it is -1, EMPTY)."""
    from pokersquares_env.core import IllegalActionError

    game = PokerSquaresGame()
    state = game.init(list(range(30)))
    for bad in (True, 1.0):
        with pytest.raises((IllegalActionError, TypeError)):
            game.apply(state, bad)
        assert state.placements == [] and state.board == [-1] * 25
    for cell in range(25):
        game.apply(state, cell)
    assert state.card == -1 and state.terminal


def test_six_cards_are_not_a_hand():
    from pokersquares_env.scoring import hand_category, score_hand

    for call in (score_hand, hand_category):
        with pytest.raises(ValueError, match="hand has 6 cards: expected at most 5"):
            call("As Ks Qs Js Ts 9s")


def test_spellings_of_first_cells_hands_and_a_joker_beyond_the_rules():
    """Names are read as documented whatever their case, spaces, hyphens or underscores (an audit found each
    spelling untested), and a deck holding a joker the rules do not have is refused, naming it."""
    from pokersquares_env.scoring import POINT_SYSTEMS, HandCategory, point_system

    assert Rules(first_cell="Center").first_cell == 12 and Rules(first_cell=" TOP-LEFT ").first_cell == 0
    assert Rules(first_cell="top_left").first_cell == 0
    assert Rules.parse("first_cell=top_left") == Rules(first_cell="top-left")
    assert HandCategory.from_key("Full-House") is HandCategory.FULL_HOUSE
    hyphens = {k.replace("_", "-"): v for k, v in POINT_SYSTEMS["american"].items()}
    assert point_system({"name": "hyphens", "points": hyphens}).points == point_system("american").points
    with pytest.raises(ValueError, match="53"):
        PokerSquaresGame(Rules(jokers=1)).check_deck(list(range(52)) + [53])
    PokerSquaresGame(Rules(jokers=1)).check_deck(list(range(52)) + [52])


def test_parse_cell_refuses_a_bool_and_index_text_past_24():
    """Mutants a mutation audit found alive: parse_cell(True) read as cell 1, parse_cell("25") as cell 25."""
    assert parse_cell("24") == 24 and parse_cell(" 0 ") == 0
    for bad in (True, False, "25", "99"):
        with pytest.raises(ValueError, match=rf"bad cell {re.escape(repr(bad))}: expected a column a-e"):
            parse_cell(bad)


def test_rules_parse_refuses_a_record_whose_version_is_true(tmp_path):
    """JSON ``true`` equals 1 in Python: a record of version ``true`` is no version-1 record."""
    from pokersquares_env.records import GameRecord

    game = PokerSquaresGame(Rules(jokers=1))
    state = game.init(list(range(53)))
    for cell in range(25):
        game.apply(state, cell)
    path = tmp_path / "true.json"
    path.write_text(json.dumps({**GameRecord.from_game(game, state).to_dict(), "version": True}))
    with pytest.raises(ValueError, match=r"a game record of format 'pokersquares-record' version True: expected"):
        Rules.parse(str(path))


def test_rules_restricts_the_playable_cells_only_where_the_rules_say():
    assert not Rules().restricts(0) and not Rules().restricts(7)
    assert Rules(first_cell="center").restricts(0) and not Rules(first_cell="center").restricts(1)
    assert Rules(placement="adjacent").restricts(0) and Rules(placement="adjacent").restricts(9)
    assert Rules(placement="adjacent", first_cell="a1").restricts(3)


def test_rules_with_options_ignores_options_that_are_none():
    assert Rules.with_options("jokers=1", placement=None, first_cell=None) == Rules(jokers=1)
    assert Rules.with_options(None, jokers=None, placement="adjacent") == Rules(placement="adjacent")


def test_rules_parse_tells_files_from_key_value_specs(tmp_path, monkeypatch):
    """A .JSON path (any case) is a file even when its name holds '='; a spec such as 'jokers=2' stays a spec even
    where a file of that name exists; a JSON object with "rules" but no "deck" is no game record."""
    want = Rules(jokers=2, placement="adjacent")
    odd = tmp_path / "set=1.JSON"
    odd.write_text(json.dumps(want.to_json()))
    assert Rules.parse(str(odd)) == want
    monkeypatch.chdir(tmp_path)
    (tmp_path / "jokers=1").write_text("not json")
    assert Rules.parse("jokers=1") == Rules(jokers=1)
    nested = tmp_path / "nested.json"
    nested.write_text(json.dumps({"rules": want.to_json()}))
    with pytest.raises(ValueError, match=r"nested.json': unknown rule option\(s\) \['rules'\]"):
        Rules.parse(str(nested))


def test_rules_parse_errors_name_the_source_once(tmp_path):
    """A key given twice in a rules file is reported as such, not wrapped as 'cannot be read as JSON'; an empty value
    is not KEY=VALUE."""
    twice = tmp_path / "twice.json"
    twice.write_text('{"placement": "free", "placement": "adjacent"}')
    with pytest.raises(ValueError) as info:
        Rules.parse(str(twice))
    assert str(info.value) == (f"rules file {str(twice)!r}: key 'placement' is given twice: expected each option "
                               "once")
    with pytest.raises(ValueError, match=r"rules 'jokers=': 'jokers=' is not KEY=VALUE"):
        Rules.parse("jokers=")


def _played(game, deck, cells):
    state = game.init(deck)
    for cell in cells:
        game.apply(state, cell)
    return state


def test_grid_is_the_board_row_major():
    state = _played(PokerSquaresGame(), list(range(52)), [1, 5])
    grid = state.grid()
    assert grid.shape == (5, 5) and grid[0, 1] == 0 and grid[1, 0] == 1 and grid[0, 0] == -1


def test_why_illegal_names_the_game_over_the_card_and_refuses_arrays_of_one_cell():
    game = PokerSquaresGame()
    state = _played(game, list(range(52)), [2])
    assert game.why_illegal(state, 2) == "cell 2 (c1) is occupied by 2♣"
    assert game.why_illegal(state, np.array(7)) is None
    assert game.why_illegal(state, np.array([7])) == "action array([7]) is not an integer cell index 0..24"
    with pytest.raises(IllegalActionError, match="not an integer cell index"):
        game.apply(state, np.array([7]))
    assert state.placements == [2]
    state = _played(game, list(range(52)), range(25))
    assert game.why_illegal(state, 3) == "the game is over: all 25 cells are filled"
    with pytest.raises(IllegalActionError, match="the game is over"):
        game.apply(state, 3)


def test_apply_returns_both_lines_a_card_completes():
    game = PokerSquaresGame()
    state = _played(game, list(range(52)), range(24))
    points, completed = game.apply(state, 24)
    assert completed == [4, 9] and points == sum(game.line_points(state)[i] for i in (4, 9))
    state = _played(game, list(range(52)), range(4))
    assert game.apply(state, 4) == (game.line_points(state)[0], [0])


def test_partial_reading_of_an_unfinished_board():
    """Incomplete lines score 0 and have no hand unless ``partial`` is set; an empty line has no hand either way."""
    from pokersquares_env.cards import parse_cards

    head = parse_cards("2♣ 2♦")
    game = PokerSquaresGame()
    state = _played(game, head + [c for c in range(52) if c not in head], [0, 1])
    assert game.line_points(state) == [0.0] * 10 and game.score(state) == 0.0
    assert game.hands(state) == ["none"] * 10
    assert game.line_points(state, partial=True) == [2.0] + [0.0] * 9
    assert game.score(state, partial=True) == 2.0 and game.score(state, "english", partial=True) == 1.0
    assert game.hands(state, partial=True) == ["one_pair"] + ["none"] * 4 + ["high_card"] * 2 + ["none"] * 3
    assert game.hands(game.init(list(range(52))), partial=True) == ["none"] * 10


def test_hands_read_the_category_that_scores_best_under_the_system_given():
    """A joker line that can be a straight flush or a flush is a flush where a flush scores more."""
    from pokersquares_env.cards import parse_cards
    from pokersquares_env.scoring import CATEGORY_KEYS

    head = parse_cards("JK 2♣ 3♣ 4♣ 5♣")
    game = PokerSquaresGame(Rules(jokers=1))
    state = _played(game, head + [c for c in range(52) if c not in head], range(5))
    flushes = {key: 1 for key in CATEGORY_KEYS} | {"flush": 50}
    assert game.hands(state)[0] == "straight_flush" and game.hands(state, flushes)[0] == "flush"
    assert game.line_points(state, flushes)[0] == 50.0 and game.score(state, flushes) == 50.0


def test_line_names_and_cells():
    from pokersquares_env.core import line_cells, line_name

    assert [line_name(i) for i in (0, 4, 5, 9)] == ["row 1", "row 5", "col a", "col e"]
    assert line_cells(0) == [0, 1, 2, 3, 4] and line_cells(5) == [0, 5, 10, 15, 20] and line_cells(9)[-1] == 24


def test_rules_with_option_keys_that_are_not_text_are_named():
    """Before, ``Rules.parse({1: 2, "a": 3})`` raised "'<' not supported between instances of 'str' and 'int'"."""
    with pytest.raises(ValueError, match=r"unknown rule option\(s\) \[1, 'a'\]: expected jokers, placement"):
        Rules.parse({1: 2, "a": 3})
