import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pokersquares_env.cards import (
    EMPTY,
    JOKERS,
    check_codes,
    format_card,
    format_cards,
    full_deck,
    parse_card,
    parse_cards,
)


@pytest.mark.parametrize("text", ["T♠", "10♠", "Ts", "10s", "t♠", "TS", "10S", "t\u2660\ufe0f", " T♠ "])
def test_ten_of_spades_spellings(text):
    assert parse_card(text) == 3 * 13 + 8
    assert format_card(parse_card(text)) == "T♠"


def test_russian_ranks_are_cyrillic():
    assert format_card(parse_card("В♣")) == "J♣"
    assert format_card(parse_card("Д♥")) == "Q♥"
    assert format_card(parse_card("К♦")) == "K♦"
    assert format_card(parse_card("Т♠")) == "A♠"  # Cyrillic Т is the ace ...
    assert format_card(parse_card("T♠")) == "T♠"  # ... Latin T is the ten


def test_jokers():
    assert parse_card("JK") == JOKERS[0]
    assert parse_cards("JK 2c JK") == [52, 0, 53]
    assert format_card(53) == "JK"
    with pytest.raises(ValueError, match="more than 2 jokers"):
        parse_cards("JK JK JK")


@pytest.mark.parametrize("bad", ["", "1♠", "Tx", "11s", "ZZ", "T", "♠", "JK3", "10"])
def test_bad_card_names_the_token(bad):
    with pytest.raises(ValueError) as err:
        parse_card(bad)
    assert repr(bad) in str(err.value)


def test_bad_card_in_list_names_the_token():
    with pytest.raises(ValueError, match="'Xq'"):
        parse_cards("2c 3d Xq 4h")


@pytest.mark.parametrize("bad", [None, 5, 3.5])
def test_a_card_list_that_is_no_string_or_iterable_is_named(bad):
    """Before, ``parse_cards(None)`` raised Python's bare "'NoneType' object is not iterable"."""
    with pytest.raises(TypeError, match=rf"bad card list {bad!r}: expected a string of cards .* or an iterable of "
                                        rf"card strings$"):
        parse_cards(bad)


def test_non_string_rejected():
    with pytest.raises(TypeError):
        parse_card(5)


@given(st.integers(0, 53))
def test_format_parse_roundtrip(code):
    text = format_card(code)
    back = parse_card(text)
    assert back == code or (code in JOKERS and back == JOKERS[0])


def test_full_deck_and_formatting():
    assert len(full_deck()) == 52 and len(full_deck(2)) == 54
    assert format_cards([0, 12, 51]) == "2♣ A♣ A♠"
    assert format_card(EMPTY) == ".."
    with pytest.raises(ValueError):
        full_deck(3)


def test_check_codes_rejects_duplicates_and_range():
    with pytest.raises(ValueError, match="appears twice"):
        check_codes([1, 2, 1])
    with pytest.raises(ValueError, match="out of range"):
        check_codes([1, 54])
    with pytest.raises(TypeError, match="not an integer"):
        check_codes([1, 2.5])


def test_check_codes_numbers_plain_jokers_as_parse_cards_does():
    assert check_codes(["JK", "JK", "2c"]) == parse_cards("JK JK 2c") == [52, 53, 0]
    assert check_codes(["JK2", "JK"]) == [53, 52] and check_codes([52, "JK"]) == [52, 53]
    with pytest.raises(ValueError, match=r"cards\[2\]: card JK1 \(code 52\) appears twice"):
        check_codes(["JK", "JK", "JK"])


def test_plain_jokers_take_the_jokers_no_named_joker_takes():
    """'JK2 JK' is both jokers, in either spelling, as a deck list already read it."""
    from pokersquares_env.cards import check_codes

    assert parse_cards("JK2 JK") == [53, 52] and parse_cards("JK JK1") == [53, 52]
    assert parse_cards("JK JK") == [52, 53] == check_codes(["JK", "JK"])
    assert check_codes(["JK2", "JK"]) == [53, 52] == check_codes(["JK", "JK1"])
    assert check_codes(["JK", 52]) == [53, 52]  # an integer code names its joker too
    with pytest.raises(ValueError, match="more than 2 jokers"):
        parse_cards("JK JK JK")
    with pytest.raises(ValueError, match=r"cards\[1\]: card JK1 \(code 52\) appears twice"):
        check_codes(["JK1", "JK1"])
    with pytest.raises(ValueError, match=r"cards\[1\]: card JK2 \(code 53\) appears twice"):  # named as written
        check_codes(["JK2", 53])


@pytest.mark.parametrize("rank, suit, message", [(3.7, 1, "rank index 3.7"), (True, 1, "rank index True"),
                                                 ("3", 1, "rank index '3'"), (3, 4, r"suit index 4: expected an integer 0..3"),
                                                 (13, 0, r"rank index 13: expected an integer 0..12 \(0 = two, 12 = ace\)"),
                                                 (0, -1, r"suit index -1: expected an integer 0..3"),
                                                 (np.int64(13), 0, r"rank index 13: expected"),  # not np.int64(13)
                                                 (np.array(2), np.array(-1), r"suit index -1: expected")])
def test_card_refuses_indices_that_are_not_integers_in_range(rank, suit, message):
    from pokersquares_env.cards import card

    with pytest.raises(TypeError if isinstance(rank, (bool, float, str)) else ValueError, match=message):
        card(rank, suit)
    assert card(np.int64(12), 3) == 51 == card(np.array(12), 3)


@pytest.mark.parametrize("codes, at, value", [(["JK", None], 1, "None"), ([1.5, "JK"], 0, "1.5"), (["JK", True], 1, "True")])
def test_a_bad_code_beside_a_plain_joker_is_named(codes, at, value):
    from pokersquares_env.cards import check_codes

    with pytest.raises(TypeError, match=rf"cards\[{at}\]: card code {value} is not an integer"):
        check_codes(codes)


@pytest.mark.parametrize("jokers, error", [(True, TypeError), (1.0, TypeError), (3, ValueError)])
def test_full_deck_takes_a_joker_count(jokers, error):
    from pokersquares_env.cards import full_deck

    with pytest.raises(error, match=rf"jokers {jokers!r}: expected an integer 0..2"):
        full_deck(jokers)
    assert len(full_deck(np.int64(2))) == 54


@given(st.permutations(range(52)), st.lists(st.booleans(), min_size=25, max_size=25))
def test_a_formatted_board_with_empty_cells_parses_back(cards, empty):
    """format_card(-1) is '..', which parse_cards(..., allow_empty=True) and check_codes(allow_empty=True) read as
    -1, so a board's text round-trips; a plain card list refuses '..', naming it.  Before, '..' was unreadable."""
    board = [EMPTY if e else c for c, e in zip(cards[:25], empty)]
    text = format_cards(board)
    assert parse_cards(text, allow_empty=True) == board == check_codes(text.split(), allow_empty=True)


def test_empty_cell_text_outside_a_grid_is_named():
    from pokersquares_env.scoring import score_grid

    for call in (lambda: parse_card(".."), lambda: parse_cards("A♠ .."), lambda: check_codes(["..", "As"])):
        with pytest.raises(ValueError, match=r"'\.\.' is an empty cell \(format_card\(-1\)\), not a card"):
            call()
    # a partial grid written as text scores its complete lines (here none: a royal flush needs all five)
    assert score_grid("A♠ K♠ Q♠ J♠ T♠ " + " ".join([".."] * 20)) == 100
    assert score_grid("A♠ K♠ Q♠ J♠ .. " + " ".join([".."] * 20)) == 0


@pytest.mark.parametrize("text", ["T♥\ufe0e", "T♥\ufe0f", "10♥\ufe0e", " 10h\ufe0e "])
def test_the_text_presentation_selector_is_dropped_as_the_emoji_one_is(text):
    """Before, U+FE0E after a suit ("T♥︎", as some editors and keyboards write it) was a bad card."""
    assert parse_card(text) == 2 * 13 + 8
    assert parse_cards(f"2c {text} 3d") == [0, 34, 14]


def test_card_errors_name_bytes_the_empty_code_and_the_option():
    """An audit found bytes read as card codes (b"As" -> "card code 65 out of range"), grids told "expected 0..51"
    though -1 (empty) is allowed there, and Poker Shuffle's `cards` option named "deck"."""
    from pokersquares_env.scoring import score_grid, score_hand
    from pokersquares_env.shuffle.env import PokerShuffleEnv

    with pytest.raises(TypeError, match=re.escape("hand b'As': expected card text or codes, got bytes")):
        score_hand(b"As")
    with pytest.raises(ValueError, match=re.escape("grid[0]: card code -2 out of range: expected -1 (empty), 0..51")):
        score_grid([-2] + list(range(1, 25)))
    with pytest.raises(ValueError, match=re.escape("hand[0]: card code -1 out of range: expected 0..51")):
        score_hand([-1, 2])  # a hand holds no empty cells
    with pytest.raises(ValueError, match=re.escape("options['cards'] holds joker code 52 but the rules allow 0")):
        PokerShuffleEnv().reset(options={"cards": list(range(24)) + [52]})


def test_card_lists_separate_on_commas_and_slashes():
    assert parse_cards("2c,3d/4h 5s") == [0, 14, 28, 42] == parse_cards("2c, 3d / 4h,5s")


@pytest.mark.parametrize("text, code", [("в♣", 9), ("д♦", 10 + 13), ("к♥", 11 + 26), ("т♠", 12 + 39),
                                        ("joker", 52), ("JOKER", 52), ("*", 52), ("jkr", 52), ("🃏", 52),
                                        ("🃏\ufe0f", 52)])
def test_lower_case_russian_ranks_and_joker_words(text, code):
    assert parse_card(text) == code


def test_padded_items_of_a_list_read_as_the_trimmed_text():
    """An item with spaces around it means what the trimmed item means: an empty cell, or a named joker."""
    assert parse_cards([" .. ", "As"], allow_empty=True) == [EMPTY, 51]
    assert check_codes([" .. ", "As"], allow_empty=True) == [EMPTY, 51]
    assert check_codes([" JK2 ", "JK"]) == [53, 52] == parse_cards([" JK2 ", "JK"])


def test_a_named_joker_with_a_variation_selector_keeps_its_number_in_a_list():
    """An audit found 'JK2' followed by U+FE0F read as joker 2 alone but renumbered to joker 1 in a list."""
    for selector in ("\ufe0f", "\ufe0e"):
        assert parse_card("JK2" + selector) == 53
        assert parse_cards(["JK2" + selector]) == [53] == check_codes(["JK2" + selector])
        assert parse_cards(["JK2" + selector, "JK"]) == [53, 52] == parse_cards("JK2" + selector + " JK")


def test_check_codes_refuses_byte_strings():
    for raw in (b"As", bytearray(b"As")):
        with pytest.raises(TypeError, match="expected card text or codes"):
            check_codes(raw)
