"""The terminal text of a board and a finished game (pokersquares_env.text), and replay's move lines.

Each test here failed on a change a mutation audit found every other test let through."""

from __future__ import annotations

import io

import numpy as np
import pytest

from pokersquares_env.cards import parse_cards
from pokersquares_env.core import PokerSquaresGame
from pokersquares_env.records import GameRecord
from pokersquares_env.text import board_text, summary_text

# 2♣ 2♦ 3♣ 4♣ 5♣ in row 1 (a pair), then the rest
DECK = parse_cards("2c 2d 3c 4c 5c 7h 8h 9h Th Jh 6s 6h Ks Kh Qs Qh 9s 9d As Ad 3s 3h Jc Jd 8c")


def _played(cells):
    game = PokerSquaresGame()
    state = game.init(DECK)
    for cell in cells:
        game.apply(state, cell)
    return game, state


def test_a_line_of_four_cards_is_shown_in_brackets_and_scores_nothing_yet():
    game, state = _played([0, 1, 2, 3])
    text = board_text(game, state)
    row1 = text.splitlines()[1]
    assert row1.rstrip().endswith("(One pair)")
    assert "score (american): 0 " in text  # the pair of an incomplete line counts nothing until the line is full
    assert "cards placed: 4/25" in text and "cards left after it: 20" in text


def test_cards_left_counts_the_cards_after_the_one_to_place():
    game, state = _played([])
    assert "cards left after it: 24" in board_text(game, state)
    game.apply(state, 0)
    assert "cards left after it: 23" in board_text(game, state)


def test_columns_are_labelled_a_to_e_and_rows_1_to_5():
    game, state = _played([0, 5, 10, 15, 20])  # column a: 2♣ 2♦ 3♣ 4♣ 5♣
    text = board_text(game, state)
    assert "col a: One pair 2" in text and "col e:" not in text
    game, state = _played(range(25))
    lines = summary_text(game, state, "american").splitlines()
    assert [ln.split()[0] + " " + ln.split()[1] for ln in lines[:10]] == [
        "row 1", "row 2", "row 3", "row 4", "row 5", "col a", "col b", "col c", "col d", "col e"]


def test_replay_names_each_completed_line_once_on_the_move_that_completes_it():
    from pokersquares_env.replay import print_replay

    game, state = _played(range(25))
    out = io.StringIO()
    print_replay(GameRecord.from_game(game, state, seed=None), out)
    moves = [ln for ln in out.getvalue().splitlines() if "->" in ln]
    assert len(moves) == 25
    named = [label for ln in moves for label in ("row 1", "row 2", "row 3", "row 4", "row 5", "col a", "col b",
                                                  "col c", "col d", "col e") if label in ln]
    assert sorted(named) == sorted(set(named)) and len(named) == 10


def test_replay_marks_a_record_that_ended_early_as_unfinished():
    from pokersquares_env.replay import print_replay

    game, state = _played(range(10))
    out = io.StringIO()
    print_replay(GameRecord.from_game(game, state, seed=None), out)
    assert "(unfinished game)" in out.getvalue()
    game, state = _played(range(25))
    out = io.StringIO()
    print_replay(GameRecord.from_game(game, state, seed=None), out)
    assert "(unfinished game)" not in out.getvalue()


def test_the_gifs_last_frame_is_held_three_seconds(tmp_path):
    pytest.importorskip("PIL")
    from PIL import Image

    from pokersquares_env.replay import save_gif

    game, state = _played(range(25))
    path = tmp_path / "g.gif"
    save_gif(GameRecord.from_game(game, state, seed=None), str(path), fps=2)
    with Image.open(path) as img:
        assert img.n_frames == 26
        assert img.info["duration"] == 500
        img.seek(img.n_frames - 1)
        assert img.info["duration"] == 3000


def test_evaluate_prints_each_paired_difference_with_its_sign(capsys):
    from agents.evaluation import evaluate
    from pokersquares_env.cli import main

    assert main(["evaluate", "--agent", "rules", "--agent", "random", "--games", "3", "--no-progress"]) == 0
    diff = evaluate(["rules", "random"], games=3, progress=False).paired()[0]["mean_diff"]
    # the command prints three decimals (a two-decimal prefix failed for differences such as +94.667)
    assert diff > 0 and f"rules - random: {diff:+.3f} +- " in capsys.readouterr().out


def test_board_text_for_a_pair_in_a_complete_row():
    game, state = _played(range(5))
    assert board_text(game, state).splitlines()[1].rstrip().endswith("One pair 2")
    assert np.isclose(game.score(state), 2)


def test_color_marks_the_diamonds_and_hearts_and_only_them():
    import re

    game, state = _played(range(25))
    text = board_text(game, state, color=True)
    coloured = re.findall(r"\x1b\[31m *(\S+)\x1b\[0m", text)
    assert len(coloured) == 13 and all(card[-1] in "♦♥" for card in coloured)
    plain = re.sub(r"\x1b\[31m *\S+\x1b\[0m", "", text)
    assert plain.count("♣") + plain.count("♠") == 12 and "♦" not in plain and "♥" not in plain
    assert "\x1b" not in board_text(game, state)


def test_the_score_line_names_the_games_point_system():
    game = PokerSquaresGame(system="english")
    state = game.init(DECK)
    for cell in range(5):
        game.apply(state, cell)
    assert "score (english): 1 " in board_text(game, state)  # a pair: 1 point in English scoring, 2 in American


def test_card_false_leaves_out_the_card_to_place():
    game, state = _played([0, 1])
    assert "card to place: 3♣" in board_text(game, state)
    text = board_text(game, state, card=False)
    assert "card to place" not in text and "cards left" not in text
    assert text.splitlines()[-1].startswith("score (american): 0 ")


def test_summary_of_one_system_given_as_a_table_or_a_file(tmp_path):
    import json

    game, state = _played(range(25))
    table = {"one_pair": 10, "two_pair": 0, "three_of_a_kind": 0, "straight": 0, "flush": 0, "full_house": 0,
             "four_of_a_kind": 0, "straight_flush": 0, "royal_flush": 0}
    lines = summary_text(game, state, table).splitlines()
    assert lines[10:] == ["total custom: 20"]  # two pairs (row 1, column c), the table's one total
    path = tmp_path / "pairs.json"
    path.write_text(json.dumps(table))
    assert summary_text(game, state, path).splitlines()[10:] == ["total pairs: 20"]
    assert summary_text(game, state).splitlines()[10:] == ["total american: 94", "total english: 41"]


def test_points_that_are_not_finite_or_below_four_decimals_read_as_such():
    from pokersquares_env.text import fmt_points

    assert [fmt_points(float("inf")), fmt_points(float("-inf")), fmt_points(float("nan"))] == ["inf", "-inf", "nan"]
    # four decimals keep the fraction: shown to four decimals, not to every digit
    assert fmt_points(1.00012) == "1.0001" and fmt_points(-0.00012) == "-0.0001"


def test_summary_lines_are_aligned_and_an_unfinished_line_has_no_hand():
    game, state = _played(range(25))
    assert summary_text(game, state, "american").splitlines()[:2] == ["row 1  One pair            2",
                                                                      "row 2  Straight flush     75"]
    game, state = _played([0, 1, 2, 3])  # a pair in a row of four: no hand yet, and no points
    lines = summary_text(game, state, "american").splitlines()
    assert lines[0] == "row 1  -                   0" and lines[-1] == "total american: 0"


def test_a_fraction_below_four_decimals_keeps_its_significant_digits():
    """A value whose fraction four decimals would round away is shown to 15 significant digits, not 6: 2.000001
    and 100.0000001 read as themselves, not as the whole numbers 2 and 100."""
    from pokersquares_env.text import fmt_points, signed_points

    assert fmt_points(2.000001) == "2.000001"
    assert fmt_points(100.0000001) == "100.0000001"
    assert signed_points(-100.0000001) == "-100.0000001"
