"""The evaluation harness: determinism, common deals, outputs, JSON keys, errors, PPS."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import numpy as np
import pytest

from agents import Agent, register_agent
from agents.evaluation import deal_deck, evaluate, evaluate_pps, pps_systems, run_chunk
from helpers import legend_below_the_axes, needs
from pokersquares_env import cli
from pokersquares_env.records import GameRecord
from pokersquares_env.scoring import expected_random_score

JSON_KEYS = {"agent", "games", "scoring", "mean", "std", "ci95", "min", "max", "win_rate", "seconds_per_game",
             "mean_american", "mean_english"}


class _Raiser(Agent):
    """Raises on the 3rd move of odd deals (identified by the first card, which is all it may look at), or of every
    deal with ``always=True``."""

    name = "raiser"
    uses_obs = False

    def __init__(self, seed=None, always=False):
        super().__init__(seed)
        self.always = always

    def act(self, obs, info, game, state):
        if state.num_placed == 2 and (self.always or state.deck[0] % 2):
            raise RuntimeError("boom")
        return game.legal_cells(state)[0]


register_agent("raiser", lambda system=None, rules=None, seed=None, always=False: _Raiser(seed, always),
               kind="params")


def _strip(records):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in records]


def test_evaluation_is_deterministic_and_independent_of_chunking():
    a = evaluate(["random", "greedy"], games=12, seed=5, progress=False)
    b = evaluate(["random", "greedy"], games=12, seed=5, progress=False, chunk_size=5)
    c = evaluate(["random", "greedy"], games=12, seed=6, progress=False)
    assert _strip(a.records) == _strip(b.records)
    assert _strip(a.records) != _strip(c.records)


def test_multiprocess_jobs_give_the_same_records():
    a = evaluate(["random", "rules"], games=8, seed=1, progress=False)
    b = evaluate(["random", "rules"], games=8, seed=1, progress=False, jobs=2, chunk_size=3)
    assert _strip(a.records) == _strip(b.records)


def test_common_deals_are_common():
    res = evaluate(["random", "greedy", "rules"], games=6, seed=11, progress=False)
    for deal in range(6):
        decks = {tuple(r["deck"]) for r in res.records if r["deal"] == deal}
        assert decks == {deal_deck(11, deal)}
    assert len({tuple(r["deck"]) for r in res.records}) == 6
    # the same deal under any other agent list / chunking
    assert run_chunk("rules", [3], {"seed": 11})[0]["deck"] == list(deal_deck(11, 3))


def test_summary_scores_and_paired_comparisons():
    res = evaluate(["random", "rules"], games=30, seed=2, scoring="english", rules={"jokers": 1}, progress=False)
    rows = {r["agent"]: r for r in res.summary}
    rules_scores = np.array(list(res.scores("rules").values()))
    assert rows["rules"]["mean"] == pytest.approx(rules_scores.mean())
    assert rows["rules"]["std"] == pytest.approx(rules_scores.std(ddof=1))
    # Student's t with 29 degrees of freedom (2.045), not the normal 1.96: 30 games are few
    assert rows["rules"]["ci95"] == pytest.approx(2.045 * rules_scores.std(ddof=1) / math.sqrt(30), rel=1e-3)
    assert rows["rules"]["scoring"] == "english"
    assert rows["rules"]["mean"] == pytest.approx(rows["rules"]["mean_english"])
    assert 0 <= rows["rules"]["win_rate"] <= 1
    # a review found min, max and the per-system intervals checked by key only
    assert rows["rules"]["min"] == rules_scores.min() and rows["rules"]["max"] == rules_scores.max()
    for system in ("american", "english"):
        scores = np.array(list(res.scores("rules", system).values()))
        assert rows["rules"][f"mean_{system}"] == pytest.approx(scores.mean())
        assert rows["rules"][f"ci95_{system}"] == pytest.approx(2.045 * scores.std(ddof=1) / math.sqrt(30), rel=1e-3)
    (pair,) = res.paired()
    assert pair["mean_diff"] == pytest.approx(rows["random"]["mean"] - rows["rules"]["mean"])
    assert pair["deals"] == 30 and pair["a_better"] + pair["ties"] + pair["b_better"] == 30
    freq = res.hand_frequencies()["rules"]
    assert sum(freq["all"].values()) == pytest.approx(1.0)
    assert sum(freq["rows"].values()) == pytest.approx(1.0)
    brief = res.brief().splitlines()
    assert [line.split(":")[0] for line in brief] == ["random", "rules"]
    assert brief[1].startswith(f"rules: {rows['rules']['mean']:.2f} +- {rows['rules']['ci95']:.2f} (")
    assert brief[1].endswith(" s a game, 0 errors)")


def test_win_rate_pairs_and_hand_shares_are_computed_from_the_games():
    """Each figure recomputed from the per-game records: win rate at the threshold, the paired comparison from the
    per-deal differences, and hand shares of rows and columns apart."""
    from agents.evaluation import summarize
    from agents.stats import mean_ci95

    records = [{"agent": "x", "score": s, "scores": {"american": s, "english": 0}, "seconds": 0.1}
               for s in (100, 99, 150)]  # American wins at 100 or more
    assert summarize(records, "x", "american")["win_rate"] == pytest.approx(2 / 3)
    res = evaluate(["random", "greedy"], games=20, seed=4, progress=False)
    (pair,) = res.paired()
    sa, sb = res.scores("random"), res.scores("greedy")
    d = np.array([sa[k] - sb[k] for k in sorted(sa)])
    assert pair["a_better"] == (d > 0).sum() and pair["b_better"] == (d < 0).sum() and pair["ties"] == (d == 0).sum()
    assert pair["std_diff"] == pytest.approx(d.std(ddof=1)) and pair["ci95"] == pytest.approx(mean_ci95(d))
    greedy = [r for r in res.records if r["agent"] == "greedy"]
    freq = res.hand_frequencies()["greedy"]
    for hand in ("one_pair", "flush", "high_card"):
        for kind, lines in (("rows", slice(0, 5)), ("columns", slice(5, 10))):
            expected = sum(r["hands"][lines].count(hand) for r in greedy) / (5 * len(greedy))
            assert freq[kind][hand] == pytest.approx(expected)
    assert freq["rows"] != freq["columns"]  # greedy lays rows and columns differently: the test can tell them apart


def test_random_agent_matches_the_exact_expectation():
    res = evaluate("random", games=300, seed=0, progress=False)
    row = res.summary[0]
    assert abs(row["mean"] - expected_random_score("american")) < 4 * row["ci95"] / 1.96
    assert abs(row["mean_english"] - expected_random_score("english")) < 4 * row["ci95_english"] / 1.96


def test_harness_survives_an_agent_that_raises(tmp_path):
    res = evaluate(["raiser", "greedy"], games=10, seed=3, progress=False, out_dir=tmp_path)
    odd = [d for d in range(10) if deal_deck(3, d)[0] % 2]
    assert odd, "seed 3 should give some odd first cards"
    errors = res.errors
    assert sorted(e["deal"] for e in errors) == odd
    assert all(e["agent"] == "raiser" and "boom" in e["error"] and f"deal {e['deal']}" in e["error"]
               for e in errors)
    rows = {r["agent"]: r for r in res.summary}
    assert rows["greedy"]["games"] == 10 and rows["greedy"]["errors"] == 0
    assert rows["raiser"]["games"] == 10 - len(odd) and rows["raiser"]["errors"] == len(odd)
    assert len(json.loads((tmp_path / "errors.json").read_text())) == len(odd)
    # what a mutation audit found unpinned with errors about: the comparison pairs by deal, over the common deals
    # only, and the hand shares are over the finished games
    sa, sb = res.scores("raiser"), res.scores("greedy")
    assert sorted(sa) == [d for d in range(10) if d not in odd] and sorted(sb) == list(range(10))
    diffs = np.array([sa[d] - sb[d] for d in sorted(sa)])
    (pair,) = res.paired()
    assert pair["deals"] == len(sa) and pair["mean_diff"] == pytest.approx(diffs.mean())
    assert pair["std_diff"] == pytest.approx(diffs.std(ddof=1))
    assert (pair["a_better"], pair["ties"], pair["b_better"]) == (
        int((diffs > 0).sum()), int((diffs == 0).sum()), int((diffs < 0).sum()))
    for kind, total in (("all", 1.0), ("rows", 1.0), ("columns", 1.0)):
        assert sum(res.hand_frequencies()["raiser"][kind].values()) == pytest.approx(total)


def test_paired_counts_ties_apart_and_they_add_up_to_the_deals():
    """A tie counted as a win for `a` went unseen: no tested field had a tied deal."""
    from agents.evaluation import EvaluationResult

    def record(agent, deal, score):
        return {"agent": agent, "deal": deal, "score": score, "scores": {"american": score, "english": score}}

    res = EvaluationResult(["a", "b"], [record("a", 0, 10), record("b", 0, 5), record("a", 1, 7), record("b", 1, 7),
                                        record("a", 2, 1), record("b", 2, 4)], {"scoring": "american"}, 3)
    (pair,) = res.paired()
    assert (pair["a_better"], pair["ties"], pair["b_better"], pair["deals"]) == (1, 1, 1, 3)
    assert pair["mean_diff"] == pytest.approx(2 / 3)


def test_paired_counts_scores_equal_to_9_decimals_as_ties():
    """Under a table of tenths the same hands add up to 0.6 on one board and 0.6000000000000001 on another (the
    lines' order differs); the library compares scores to 9 decimals (``points_level``: ties, wins, thresholds), so
    paired.json's a_better / ties / b_better must count such a deal as a tie, not as a win for one agent."""
    from agents.evaluation import EvaluationResult

    tenths = {"high_card": 0, "one_pair": 0.1, "two_pair": 0.2, "three_of_a_kind": 0.3, "straight": 0.4,
              "flush": 0.5, "full_house": 0.6, "four_of_a_kind": 0.7, "straight_flush": 0.8, "royal_flush": 0.9}
    up, down = 0.1 + 0.2 + 0.3, 0.3 + 0.2 + 0.1  # the same three lines added in two orders (as the library adds)
    assert up != down and round(up, 9) == round(down, 9)

    def record(agent, deal, score):
        return {"agent": agent, "deal": deal, "score": score, "scores": {"american": 7, "english": 3}}

    res = EvaluationResult(["a", "b"], [record("a", 0, up), record("b", 0, down), record("a", 1, 0.9),
                                        record("b", 1, 0.5)], {"scoring": tenths}, 2)
    (pair,) = res.paired()
    assert (pair["a_better"], pair["ties"], pair["b_better"]) == (1, 1, 0)


def test_every_deal_gives_the_agents_a_stream_of_its_own():
    """A mutation audit found that one agent seed for every deal went unseen (chunking still agreed): `random` then
    placed its cards in the same cells on every deal."""
    from agents.evaluation import _agent_seed

    res = evaluate("random", games=6, seed=5, progress=False)
    assert len({tuple(r["placements"]) for r in res.records}) == 6
    assert len({_agent_seed(5, d) for d in range(100)}) == 100
    assert _agent_seed(5, 3) != _agent_seed(3, 5) and _agent_seed(5, 3) != _agent_seed(6, 3)
    # pinned: every recorded evaluation's agent streams (SeedSequence([seed, deal, 1])) come from these
    assert (_agent_seed(0, 0), _agent_seed(2024, 7)) == (3831201730, 2743271640)


def test_an_agent_that_cannot_be_built_fails_before_any_game_and_writes_nothing(tmp_path, capsys):
    """A bad option value (ply=7) stops the run up front: no game, no output folder, the error names the value."""
    out = tmp_path / "out"
    assert cli.main(["evaluate", "--agent", "greedy", "--agent", "expectimax:ply=7", "--games", "3", "--out",
                     str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "agent spec 'expectimax:ply=7' cannot be built" in err and "ply=7: expected 1, 2 or 3" in err
    assert not out.exists()
    with pytest.raises(ValueError, match=r"'expectimax:tables=.*nope.npz' cannot be built: FileNotFoundError"):
        evaluate(["greedy", f"expectimax:tables={tmp_path / 'nope.npz'}"], games=2, progress=False)


def test_a_chunk_whose_agent_cannot_be_built_reports_every_deal():
    """A worker that cannot build its agent (e.g. a remote one) reports the error once per deal of its chunk."""
    recs = run_chunk("expectimax:ply=7", [4, 5], {"seed": 1})
    assert [r["deal"] for r in recs] == [4, 5]
    assert all("could not build agent 'expectimax:ply=7'" in r["error"] and "ply=7" in r["error"] for r in recs)
    assert [tuple(r["deck"]) for r in recs] == [deal_deck(1, 4), deal_deck(1, 5)]


def test_cli_json_output_has_the_documented_keys(capsys):
    rc = cli.main(["evaluate", "--agent", "random", "--agent", "greedy", "--games", "5", "--seed", "1",
                   "--format", "json", "--no-progress"])
    assert rc == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2
    objs = [json.loads(line) for line in lines]
    assert [o["agent"] for o in objs] == ["random", "greedy"]
    for o in objs:
        assert JSON_KEYS <= set(o)
        assert o["games"] == 5 and o["scoring"] == "american"


def test_cli_reports_errors_and_bad_specs(capsys):
    assert cli.main(["evaluate", "--agent", "raiser", "--agent", "random", "--games", "10", "--seed", "3",
                     "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "error: agent raiser on deal" in err and "boom" in err
    odd = [d for d in range(10) if deal_deck(3, d)[0] % 2]
    assert err.count("error: agent raiser on deal") == len(odd)  # each message names its deal, so none is merged
    assert cli.main(["evaluate", "--agent", "raiser:always=true", "--agent", "random", "--games", "2",
                     "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert "raiser:always=true - random: no common deals" in out and "+nan" not in out
    assert cli.main(["evaluate", "--agent", "nosuch", "--games", "2", "--no-progress"]) == 2
    assert "unknown agent 'nosuch'" in capsys.readouterr().err


@needs("matplotlib")
def test_outputs_are_written(tmp_path):
    res = evaluate(["random", "rules"], games=4, seed=0, progress=False)
    written = res.save(tmp_path)
    names = {p.rsplit("/", 1)[-1] for p in written}
    assert {"games.jsonl", "summary.md", "summary.csv", "summary.json", "hands.json", "hands.csv", "paired.json",
            "scores.png", "hands.png"} <= names
    lines = (tmp_path / "games.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 8
    rec = GameRecord.from_dict(json.loads(lines[0]))  # replays and validates the game
    assert rec.agent == "random" and rec.meta["deal"] == 0
    data = json.loads(lines[0])
    assert set(data["scores"]) == {"american", "english"} and len(data["hands"]) == 10
    assert (tmp_path / "summary.csv").read_text().startswith("agent,games,errors,scoring,mean")
    assert (tmp_path / "scores.png").read_bytes()[:4] == b"\x89PNG"


def _greedy_named_by_a_path(path, system=None, rules=None, seed=None):
    from agents import make_agent

    return make_agent("greedy", system=system, rules=rules, seed=seed)


@pytest.mark.parametrize("long_spec", [True, False], ids=["a-tables-path-spec", "seven-short-specs"])
def test_the_plots_legends_sit_below_the_axes_however_long_the_specs(tmp_path, monkeypatch, long_spec):
    """Before, an agent spec holding a tables path (about 100 characters) squeezed scores.png's axes into a sliver
    beside a cut-off legend ("Tight layout not applied"), and hands.png's legend lay over the bars: the legends now
    sit below the axes (long specs folded onto lines), and the figures grow to hold them."""
    pytest.importorskip("matplotlib")
    import warnings

    import agents.registry as registry

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    register_agent("longpath", _greedy_named_by_a_path)
    monkeypatch.chdir(tmp_path)
    long_path = Path("runs/some_long_experiment_folder_name/tune_tables_american_generation_25/tables.npz")
    long_path.parent.mkdir(parents=True)
    for path in (long_path, Path("a"), Path("b")):
        path.write_text("")  # the registered factory reads nothing: a spec names an existing path
    specs = ([f"longpath:{long_path}", "greedy"] if long_spec else
             ["random", "greedy", "rules", "mc:rollouts=2,rollout=heuristic", "mc:rollouts=3,rollout=heuristic",
              "longpath:a", "longpath:b"])
    res = evaluate(specs, games=3, seed=0, progress=False)
    with warnings.catch_warnings():
        # a layout matplotlib cannot make ("Tight layout not applied", "constrained_layout not applied") is a
        # warning: fail on it (and on no other: matplotlib 3.7 with a newer pyparsing warns of deprecations)
        warnings.filterwarnings("error", message=r"(?i).*layout", category=UserWarning)
        for fig in (res.scores_figure(), res.hands_figure()):
            legend = legend_below_the_axes(fig)  # below the axes and their tick labels (over no bar), on the figure
            assert len(legend.get_texts()) == len(specs)
            assert fig.axes[0].get_window_extent().width >= 0.8 * fig.bbox.width  # the axes keep the figure's width
            if long_spec:
                assert max(len(line) for t in legend.get_texts() for line in t.get_text().split("\n")) <= 60


def test_saving_plots_leaves_the_processs_matplotlib_backend_alone(tmp_path):
    """A notebook's inline backend must survive ``evaluate(out_dir=...)`` (and ``train``'s final evaluation):
    the plots were once drawn after ``matplotlib.use("Agg")``, which silenced every later ``plt.show()``."""
    matplotlib = pytest.importorskip("matplotlib")
    before = matplotlib.get_backend()
    matplotlib.use("svg")
    try:
        evaluate(["random"], games=2, seed=0, progress=False, out_dir=tmp_path / "ev")
        assert matplotlib.get_backend() == "svg"
        import matplotlib.pyplot as plt

        assert plt.get_fignums() == []  # the saved figures were never pyplot's
    finally:
        matplotlib.use(before)
    assert (tmp_path / "ev" / "scores.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "ev" / "hands.png").read_bytes()[:4] == b"\x89PNG"


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="games=0"):
        evaluate("random", games=0, progress=False)
    with pytest.raises(ValueError, match="repeat"):
        evaluate(["random", "random"], games=1, progress=False)
    with pytest.raises(ValueError, match="unknown backend 'nope'"):
        evaluate("random", games=1, progress=False, backend="nope")


def test_what_can_be_checked_is_checked_before_any_agent_is_built_or_game_played(tmp_path, monkeypatch, capsys):
    import agents.evaluation as ev

    built, played = [], []
    monkeypatch.setattr(ev, "_build_or_raise", lambda *args: built.append(args))
    with pytest.raises(ValueError, match="unknown backend 'nope'"):
        evaluate("greedy", games=1, progress=False, backend="nope", out_dir=tmp_path / "a")
    assert not built and not (tmp_path / "a").exists()  # no agent built (tables trained), no folder made
    (tmp_path / "afile").write_text("keep")
    with pytest.raises(ValueError, match="afile' is a file"):
        evaluate("greedy", games=1, progress=False, out_dir=tmp_path / "afile")
    assert not built
    monkeypatch.setattr(ev, "evaluate", lambda *args, **kwargs: played.append(kwargs["scoring"].name))
    with pytest.raises(ValueError, match="unknown point system 'nope'"):
        evaluate_pps("greedy", systems=["american", "nope"], games=1, out_dir=tmp_path / "b")
    with pytest.raises(ValueError, match="repeat a point system"):
        evaluate_pps("greedy", systems=["american", "english", "american"], games=1)
    assert not played and not (tmp_path / "b").exists()  # the American games were not played first
    monkeypatch.undo()
    assert cli.main(["evaluate", "--agent", "greedy", "--pps", "--scoring", "english", "--games", "1",
                     "--no-progress"]) == 2
    assert "--scoring 'english' and --scoring-set/--pps 'pps' contradict" in capsys.readouterr().err


@pytest.mark.parametrize("options,message", [
    ({"single_hand": -1}, "single_hand=-1: expected an integer >= 0"),  # was a slice bound: 9 tables
    ({"single_hand": 11}, "single_hand=11: expected at most 10 (the distinct tables"),  # was 10 tables, silently
    ({"hypercorner": -2}, "hypercorner=-2: expected an integer >= 0"),  # was none, silently
    ({"hypercorner": 1025}, "hypercorner=1025: expected at most 1,024"),  # would have drawn forever
    ({"random_tables": 1.5}, "random_tables=1.5: expected an integer >= 0"),  # was Python's 'float' object ...
    ({"ameritish": True}, "ameritish=True: expected an integer >= 0"),
    ({"seed": -1}, "seed=-1: expected an integer >= 0"),  # was NumPy's 'expected non-negative integer'
])
def test_pps_systems_refuses_counts_and_seeds_it_cannot_draw(options, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        pps_systems(**options)
    assert len(pps_systems(0, single_hand=10, hypercorner=0, random_tables=0, ameritish=0)) == 12  # every hand once


def test_pps_systems_and_normalisation(tmp_path):
    systems = pps_systems(0)
    names = [s.name for s in systems]
    assert names[:2] == ["american", "english"]
    assert any(n.startswith("random-") for n in names) and any(n.startswith("hypercorner-") for n in names)
    assert any(n.startswith("ameritish-") for n in names)
    for s in systems:
        if s.name.startswith("hypercorner"):
            assert set(s.points) <= {-1.0, 1.0}
        if s.name.startswith("single-"):
            assert sorted(s.points).count(1.0) >= 1 and set(s.points) <= {0.0, 1.0}
    assert [s.points for s in pps_systems(0)] == [s.points for s in systems]
    drawn = [v for seed in range(60) for s in pps_systems(seed, random_tables=3) if s.name.startswith("random-")
             for v in s.points[:10]]  # the ten challenge hands (five of a kind, jokers only, copies four of a kind)
    assert min(drawn) == -128 and max(drawn) == 127 and all(float(v).is_integer() for v in drawn)
    # the Ameritish tables are drawn last: the other tables do not depend on how many there are
    assert [s.points for s in pps_systems(0, ameritish=0)] == [s.points for s in systems[:-1]]
    res = evaluate_pps(["random", "greedy"], systems=["american", "english"], games=6, seed=1, progress=False,
                       out_dir=tmp_path)
    best = {}
    for row in res.summary:
        best[row["system"]] = max(best.get(row["system"], -1e9), row["normalized"])
    assert all(v == pytest.approx(1.0) for v in best.values())
    # a review found only the best row (1.0 whatever the anchor) checked: every row against the formula, random
    # play's exact expectation as the zero
    from pokersquares_env.scoring import expected_random_score

    for row in res.summary:
        base = expected_random_score(row["system"])
        top = max(r["mean"] for r in res.summary if r["system"] == row["system"])
        assert row["random_expected"] == pytest.approx({"american": 14.415, "english": 7.676}[row["system"]],
                                                       abs=5e-4)
        assert row["normalized"] == pytest.approx((row["mean"] - base) / (top - base))
    assert (tmp_path / "pps.md").exists() and (tmp_path / "american" / "summary.md").exists()


def test_ameritish_tables_lie_between_american_and_english():
    from agents.evaluation import _PPS_HANDS, ameritish_points
    from pokersquares_env.scoring import POINT_SYSTEMS

    rng = np.random.default_rng(3)
    tops = set()
    for _ in range(300):
        pts = ameritish_points(rng)
        assert len(pts) == len(_PPS_HANDS) == 10 and pts[0] == 0
        top = pts[-1]
        tops.add(top)
        assert 30 <= top <= 100
        for i, hand in enumerate(_PPS_HANDS[1:-1], start=1):
            fa = POINT_SYSTEMS["american"][hand] / 100
            fe = POINT_SYSTEMS["english"][hand] / 30
            # rounded to the nearest integer: never more than half a point outside the band
            assert min(fa, fe) * top - 0.5 <= pts[i] <= max(fa, fe) * top + 0.5, (hand, pts)
    assert min(tops) < 40 and max(tops) > 90  # the top value really is drawn over 30..100


def test_pps_tournament_score_is_the_challenges_min_max_scaling():
    """Per system the field's means are scaled to [0, 1] (lowest 0, highest 1); the overall score is their sum."""
    res = evaluate_pps(["random", "rules", "greedy"], systems=["american", "english"], games=8, seed=2,
                       progress=False)
    rows = res.summary
    for system in ("american", "english"):
        means = {r["agent"]: r["mean"] for r in rows if r["system"] == system}
        lo, hi = min(means.values()), max(means.values())
        assert hi > lo
        for r in rows:
            if r["system"] == system:
                assert r["tournament"] == pytest.approx((means[r["agent"]] - lo) / (hi - lo))
        got = sorted(r["tournament"] for r in rows if r["system"] == system)
        assert got[0] == 0.0 and got[-1] == 1.0
    overall = {r["agent"]: r for r in res.overall()}
    for agent, o in overall.items():
        assert o["systems"] == 2
        assert o["tournament_score"] == pytest.approx(sum(r["tournament"] for r in rows if r["agent"] == agent))
        assert o["normalized"] == pytest.approx(np.mean([r["normalized"] for r in rows if r["agent"] == agent]))
    assert overall["random"]["tournament_score"] == 0.0  # random play is the weakest on both systems here
    assert "tournament score (sum)" in res.table()
    # a field of one has no spread: NaN, not a division error
    solo = evaluate_pps(["greedy"], systems=["american"], games=2, seed=2, progress=False)
    assert math.isnan(solo.summary[0]["tournament"])
    # ... and so has its tournament score: NaN (null in JSON), not a sum of nothing printed as 0.000
    assert math.isnan(solo.overall()[0]["tournament_score"]) and "| greedy | 1 | n/a |" in solo.table()


def test_pps_means_equal_to_9_decimals_tie_rather_than_rank_0_and_1(monkeypatch):
    """Means that differ only in a float sum's last bit (0.1 + 0.2 against 0.3) are a tie, as scores are everywhere
    (points_level): no spread to scale, NaN; before, one agent scored 1 and its equal 0."""
    import agents.evaluation as evaluation

    res = evaluate_pps(["random", "greedy"], systems=["american"], games=2, seed=2, progress=False)
    fake = {"random": 0.1 + 0.2, "greedy": 0.3}
    monkeypatch.setattr(evaluation, "_mean_counting_failures", lambda row, failed: fake[row["agent"]])
    rows = res.summary
    assert fake["random"] != fake["greedy"]
    assert all(math.isnan(r["tournament"]) for r in rows)
    fake.update(random=14.415, greedy=14.415 + 1e-13)  # the exact random-play expectation of American, 14.415...
    import pokersquares_env.scoring as scoring

    monkeypatch.setattr(scoring, "expected_random_score", lambda system, jokers: 14.415)  # read at each summary
    assert all(math.isnan(r["normalized"]) for r in res.summary)  # the best no better than random: no span
    fake.update(greedy=20.0)
    ranked = {r["agent"]: r for r in res.summary}
    assert ranked["random"]["tournament"] == 0.0 and ranked["greedy"]["tournament"] == 1.0
    assert ranked["greedy"]["normalized"] == 1.0


class _AlwaysRaises(Agent):
    name = "always_raises"
    uses_obs = False

    def act(self, obs, info, game, state):
        raise RuntimeError("never plays")


register_agent("always_raises", lambda system=None, rules=None, seed=None: _AlwaysRaises(seed), kind="params")


def test_pps_scaling_counts_an_agent_that_failed_every_game_at_the_lowest_score_wherever_it_stands():
    """As the challenge scores a failed game: at the lowest score a grid can get (0 American), so such an agent is
    the field's weakest (it was once left out of the scaling, as if it had not entered)."""
    rows_by_order = []
    for field in (["always_raises", "random", "greedy"], ["random", "greedy", "always_raises"]):
        res = evaluate_pps(field, systems=["american"], games=4, seed=3, progress=False)
        rows_by_order.append({r["agent"]: r for r in res.summary})
    for rows in rows_by_order:
        fails = rows["always_raises"]
        assert math.isnan(fails["mean"]) and fails["errors"] == 4 and fails["failed_score"] == 0
        assert fails["pps_mean"] == 0.0 and fails["tournament"] == 0.0
        assert rows["random"]["tournament"] == pytest.approx(rows["random"]["mean"] / rows["greedy"]["mean"])
        assert rows["greedy"]["tournament"] == 1.0 and rows["greedy"]["normalized"] == 1.0
    timeless = [{a: {k: v for k, v in r.items() if k != "seconds_per_game"} for a, r in rows.items()}
                for rows in rows_by_order]
    assert timeless[0] == timeless[1]


class _Quitter(Agent):
    """greedy, but raising before its last card when the board is heading for a low score."""

    name = "quitter"
    uses_obs = False

    def __init__(self, seed=None, system=None, rules=None):
        super().__init__(seed)
        from agents import make_agent

        self.greedy = make_agent("greedy", system=system, rules=rules, seed=seed)

    def act(self, obs, info, game, state):
        if state.num_placed == 24 and game.score(state) < 40:
            raise RuntimeError("quits a bad deal")
        return self.greedy.act(obs, info, game, state)


register_agent("quitter", lambda system=None, rules=None, seed=None: _Quitter(seed, system, rules), kind="params")


def test_pps_figures_do_not_reward_raising_on_bad_deals():
    """A failed game counts at the system's lowest grid score in ``tournament`` and ``normalized``: an agent that
    raised on its bad deals once had the higher mean over the games it finished, so it won the tournament."""
    res = evaluate_pps(["greedy", "quitter"], systems=["american", "english"], games=40, seed=0, progress=False)
    rows = {(r["agent"], r["system"]): r for r in res.summary}
    quit_am = rows["quitter", "american"]
    assert quit_am["errors"] > 0 and quit_am["mean"] > rows["greedy", "american"]["mean"]  # finished games only
    for system in ("american", "english"):
        q, g = rows["quitter", system], rows["greedy", system]
        n = q["games"] + q["errors"]
        want = ((q["mean"] * q["games"] if q["games"] else 0.0) + q["failed_score"] * q["errors"]) / n
        assert q["pps_mean"] == pytest.approx(want) and g["pps_mean"] == g["mean"]
        assert q["tournament"] == 0.0 and g["tournament"] == 1.0
    assert rows["quitter", "english"]["failed_score"] == 0  # English's lowest hand value, high card, is 0 too
    assert "| agent | system | games | errors |" in res.table()


def test_pps_fails_a_game_at_the_lowest_hand_and_anchors_on_random_play_under_the_rules():
    """Two things a mutation audit found unpinned: the failed-game score is 10 x the *lowest* hand value (which is not
    high card's in a table with a negative hand), and the random baseline of a run with jokers is the joker game's."""
    points = {"high_card": 0, "one_pair": -5, "two_pair": 3, "three_of_a_kind": 4, "straight": 1, "flush": 2,
              "full_house": 6, "four_of_a_kind": 7, "straight_flush": 8, "royal_flush": 9, "five_of_a_kind": 10}
    res = evaluate_pps(["greedy", "quitter"], systems=[points], games=6, seed=0, progress=False,
                       rules={"jokers": 1})
    for row in res.summary:
        assert row["failed_score"] == -50
        assert row["random_expected"] == pytest.approx(expected_random_score(points, 1))
    assert expected_random_score(points, 1) != pytest.approx(expected_random_score(points, 0))


@pytest.mark.parametrize("jokers, failed", [(0, 0), (1, -10000)])
def test_pps_fails_a_game_at_five_of_a_kind_only_where_a_joker_can_make_one(jokers, failed):
    """Without jokers no grid holds five of a kind: before, a table setting it to -1000 failed a game at -10000 even
    there, so two tables of the same jokerless game (differing only in five of a kind) ranked a failing agent apart."""
    american = {"high_card": 0, "one_pair": 2, "two_pair": 5, "three_of_a_kind": 10, "straight": 15, "flush": 20,
                "full_house": 25, "four_of_a_kind": 50, "straight_flush": 75, "royal_flush": 100}
    tables = [{"name": "five", "points": {**american, "five_of_a_kind": -1000}},
              {"name": "plain", "points": {**american, "five_of_a_kind": 60}}]
    res = evaluate_pps(["greedy", "quitter"], systems=tables, games=8, seed=0, progress=False,
                       rules={"jokers": jokers})
    rows = {(r["agent"], r["system"]): r for r in res.summary}
    assert rows["quitter", "five"]["errors"] > 0  # games failed, counted at failed_score
    assert rows["quitter", "five"]["failed_score"] == failed and rows["quitter", "plain"]["failed_score"] == 0
    if not jokers:  # the same game under both tables: the same figures
        for agent in ("greedy", "quitter"):
            for key in ("pps_mean", "tournament", "normalized"):
                a, b = rows[agent, "five"][key], rows[agent, "plain"][key]
                assert a == b or (math.isnan(a) and math.isnan(b)), (agent, key, a, b)



def test_cli_rules_option_equals_the_single_flags_and_refuses_a_contradiction(capsys):
    def run(*extra):
        assert cli.main(["evaluate", "--agent", "random", "--games", "4", "--seed", "2", "--format", "json",
                         "--no-progress", *extra]) == 0
        return json.loads(capsys.readouterr().out)

    spec = run("--rules", "jokers=2,placement=adjacent,first_cell=center")
    flags = run("--jokers", "2", "--placement", "adjacent", "--first-cell", "center")
    mixed = run("--rules", '{"jokers": 2}', "--placement", "adjacent", "--first-cell", "c3")  # additions, same cell
    plain = run()
    assert spec == {**flags, "seconds_per_game": spec["seconds_per_game"]}
    assert mixed["mean"] == spec["mean"] and plain["mean"] != spec["mean"]
    assert cli.main(["evaluate", "--agent", "random", "--rules", "jokers=2", "--jokers", "1"]) == 2
    assert "jokers=1 contradicts rules 'jokers=2' (jokers=2)" in capsys.readouterr().err
    assert cli.main(["evaluate", "--agent", "random", "--rules", "jokers=2,wild=yes"]) == 2
    assert "unknown rule option(s) ['wild']" in capsys.readouterr().err


def test_rules_may_be_a_spec_a_mapping_or_a_rules_object():
    from pokersquares_env.core import Rules

    runs = [evaluate(["random"], games=3, seed=5, rules=rules, progress=False)
            for rules in ("jokers=1,placement=adjacent", {"jokers": 1, "placement": "adjacent"},
                          Rules(jokers=1, placement="adjacent"))]
    scores = [[r["score"] for r in run.records] for run in runs]
    assert scores[0] == scores[1] == scores[2]
    assert all(any(card >= 52 for card in r["deck"]) for r in runs[0].records)  # the deck holds the joker
    with pytest.raises(ValueError, match="jokers=3"):
        evaluate(["random"], games=1, rules="jokers=3", progress=False)


def test_a_bad_out_dir_or_missing_model_is_refused_before_any_game(tmp_path, monkeypatch):
    import agents.evaluation as ev

    played = []
    monkeypatch.setattr(ev, "make_chunks", lambda *a, **k: played.append(1) or [])
    target = tmp_path / "afile"
    target.write_text("keep")
    with pytest.raises(ValueError, match="afile' is a file: expected a folder"):
        evaluate(["random"], games=2, out_dir=target, progress=False)
    with pytest.raises(ValueError, match="afile' is a file"):
        evaluate_pps(["random"], systems=["american"], games=2, out_dir=target, progress=False)
    with pytest.raises(ValueError, match="cannot create it"):
        evaluate(["random"], games=2, out_dir=target / "below", progress=False)
    missing = tmp_path / "no_model"
    with pytest.raises(ValueError, match=f"fastppo:{missing}'.*no file or folder"):
        evaluate(["random", f"fastppo:{missing}"], games=2, progress=False)
    assert played == [] and target.read_text() == "keep"


def test_cli_reports_a_bad_out_dir_as_a_usage_error(tmp_path, capsys):
    target = tmp_path / "afile"
    target.write_text("keep")
    code = cli.main(["evaluate", "--agent", "random", "--games", "2", "--out", str(target), "--no-progress"])
    assert code == 2 and "is a file" in capsys.readouterr().err and target.read_text() == "keep"


def test_an_empty_scoring_set_is_a_usage_error(capsys):
    for empty in ("", " , "):
        assert cli.main(["evaluate", "--agent", "random", "--games", "1", "--scoring-set", empty, "--no-progress"]) == 2
        assert "expected 'pps' or a comma-separated list" in capsys.readouterr().err


def test_progress_bars_need_no_tqdm(monkeypatch):
    """tqdm is not a core dependency: without it, long work runs without a bar instead of failing."""
    import sys

    from pokersquares_env._progress import progress_bar, progress_iter

    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm now raises ImportError
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    assert progress_bar(True, total=3) is None and list(progress_iter(range(3))) == [0, 1, 2]
    res = evaluate(["random"], games=2, seed=1, progress=True)
    assert res.summary[0]["games"] == 2


@needs("tqdm")
def test_without_ipywidgets_the_bar_is_tqdms_text_bar(monkeypatch):
    """tqdm.auto in a Jupyter kernel without ipywidgets warns "IProgress not found" (the warning stored in a
    notebook's outputs, before) and falls back to the text bar; the text bar is taken directly instead."""
    import importlib.util
    import warnings

    import tqdm
    import tqdm.std

    from pokersquares_env import _progress

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "ipywidgets" else real_find_spec(name, *a))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bar = _progress.progress_bar(True, total=3, disable=True)
    assert type(bar).__bases__ == (tqdm.std.tqdm,)  # the text bar (without its monitor thread)
    bar.close()
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: object() if name == "ipywidgets" else real_find_spec(name, *a))
    assert _progress._tqdm_class().__bases__ == (__import__("tqdm.auto", fromlist=["tqdm"]).tqdm,)


def test_a_progress_bar_starts_no_thread_before_evaluate_forks_its_workers():
    """tqdm starts a monitor thread with its first bar; ``evaluate --jobs`` then forked its workers from a process of
    two threads (Python 3.12 warns: "This process is multi-threaded, use of fork() may lead to deadlocks in the
    child").  The library's bars start none.  A new process, so that no earlier bar's monitor is running."""
    import subprocess
    import sys

    pytest.importorskip("tqdm")
    code = ("import threading, time; from pokersquares_env._progress import progress_bar\n"
            "bar = progress_bar(True, total=3, file=open('/dev/null', 'w')); bar.update(1); time.sleep(0.2)\n"
            "print(threading.active_count(), type(bar).monitor)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "None"]


@pytest.mark.parametrize("scoring, blocks", [("american", ["american", "english"]),
                                             ("english", ["english", "american"])])
def test_paired_json_holds_each_comparison_once_per_system(tmp_path, scoring, blocks):
    evaluate(["random", "greedy"], games=3, seed=1, scoring=scoring, out_dir=tmp_path, progress=False)
    paired = json.loads((tmp_path / "paired.json").read_text())
    assert [p["scoring"] for p in paired] == blocks  # the played system first, no block twice


def test_scoring_set_json_output_ends_with_each_agents_overall_scores(capsys):
    assert cli.main(["evaluate", "--agent", "random", "--agent", "greedy", "--games", "2", "--scoring-set",
                     "american,english", "--format", "json", "--no-progress"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["agent"], r["system"]) for r in rows[-2:]] == [("random", "overall"), ("greedy", "overall")]
    assert all({"tournament_score", "normalized", "systems"} <= set(r) for r in rows[-2:])
    assert [r["system"] for r in rows[:-2]].count("american") == 2  # then one row per agent and system


# ---- --out and --jobs: checked before any work -----------------------------------------------------------------


def test_an_out_below_a_file_is_refused_before_any_agent_is_built(tmp_path, monkeypatch, capsys):
    """Before, ``--out afile/sub`` (afile a file) trained the tables, then failed on 'Not a directory'."""
    import agents.evaluation as ev

    built = []
    monkeypatch.setattr(ev, "_build_or_raise", lambda *args: built.append(args))
    (tmp_path / "afile").write_text("keep")
    target = tmp_path / "afile" / "sub"
    with pytest.raises(ValueError, match=f"cannot create it: '{tmp_path / 'afile'}' is a file, not a folder"):
        evaluate(["expectimax:games=3000"], games=2, out_dir=target, progress=False)
    assert cli.main(["evaluate", "--agent", "expectimax:games=3000", "--games", "2", "--no-progress", "--out",
                     str(target)]) == 2
    err = capsys.readouterr().err
    assert err == f"pokersquares evaluate: --out '{target}': cannot create it: '{tmp_path / 'afile'}' is a file, not " \
                  f"a folder\n"
    assert not built and (tmp_path / "afile").read_text() == "keep"


def test_pps_checks_the_agents_before_making_the_out_folder(tmp_path, capsys):
    """Before, ``--agent nosuch --pps --out newpps/deep`` made newpps/deep, then refused the agent."""
    target = tmp_path / "newpps" / "deep"
    with pytest.raises(ValueError, match="unknown agent 'nosuch'"):
        evaluate_pps(["nosuch"], systems=["american"], games=2, out_dir=target, progress=False)
    with pytest.raises(ValueError, match="rollouts=-1"):  # an agent that cannot be built makes no folder either
        evaluate_pps(["mc:rollouts=-1"], systems=["american"], games=2, out_dir=target, progress=False)
    assert cli.main(["evaluate", "--agent", "nosuch", "--pps", "--games", "2", "--out", str(target)]) == 2
    assert "unknown agent 'nosuch'" in capsys.readouterr().err
    assert not (tmp_path / "newpps").exists()


def test_out_refuses_a_folder_of_other_files_and_reruns_into_its_own(tmp_path, monkeypatch, capsys):
    """Before, ``--out other`` replaced a games.jsonl evaluate had not written (and kept notes.txt beside it)."""
    import agents.evaluation as ev

    monkeypatch.setattr(ev.EvaluationResult, "plot", lambda self, out_dir: [])  # plots are not the point here
    other = tmp_path / "other"
    other.mkdir()
    (other / "games.jsonl").write_text("mine\n")
    (other / "notes.txt").write_text("notes\n")
    argv = ["evaluate", "--agent", "greedy", "--games", "2", "--no-progress", "--format", "json"]
    assert cli.main([*argv, "--out", str(other)]) == 2
    err = capsys.readouterr().err
    assert err == (f"pokersquares evaluate: --out '{other}' has no evaluation.json and holds entries no evaluation "
                   f"writes (notes.txt): expected a new or empty folder, or one an earlier evaluate wrote (holding "
                   f"evaluation.json, or only its output files); outputs there would be replaced, so choose another "
                   f"folder\n")
    assert (other / "games.jsonl").read_text() == "mine\n" and sorted(p.name for p in other.iterdir()) == \
        ["games.jsonl", "notes.txt"]
    ours = tmp_path / "ours"
    for _ in range(2):  # a new folder, then the same command again into the folder it wrote
        assert cli.main([*argv, "--out", str(ours)]) == 0
        marker = json.loads((ours / "evaluation.json").read_text())
        assert marker["format"] == "pokersquares-evaluation" and marker["agents"] == ["greedy"] and marker["games"] == 2
        assert len((ours / "games.jsonl").read_text().splitlines()) == 2
    (ours / "mine.txt").write_text("kept")  # a folder an evaluation wrote stays its own
    assert cli.main([*argv, "--out", str(ours)]) == 0 and (ours / "mine.txt").read_text() == "kept"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli.main([*argv, "--out", str(empty)]) == 0 and (empty / "evaluation.json").exists()
    capsys.readouterr()


def test_out_takes_a_folder_an_evaluate_wrote_before_the_marker_existed(tmp_path, monkeypatch, capsys):
    """Before, a folder an evaluate wrote before evaluation.json existed was refused as holding 'files no evaluation
    wrote'; the names known are those the writers use (a real evaluate's and evaluate_pps's outputs, marker removed)."""
    import shutil

    import agents.evaluation as ev

    def plot(self, out_dir):  # the names plot() writes, without matplotlib
        for name in ev.PLOT_FILES:
            Path(out_dir, name).write_text("png")
        return [str(Path(out_dir, name)) for name in ev.PLOT_FILES]

    monkeypatch.setattr(ev.EvaluationResult, "plot", plot)
    monkeypatch.setattr("pokersquares_env.scoring.expected_random_score", lambda *args: 0.0)  # not the point, slow
    old = tmp_path / "old"
    written = evaluate(["random"], games=1, progress=False, out_dir=old)
    pps = tmp_path / "oldpps"
    evaluate_pps(["random"], systems=["american", "english"], games=1, progress=False, out_dir=pps)
    for folder in (old, pps, pps / "american", pps / "english"):
        (folder / "evaluation.json").unlink()  # as an evaluate wrote them before the marker
    assert sorted(p.name for p in old.iterdir()) == sorted([*ev.RESULT_FILES, *ev.PLOT_FILES])
    assert written.summary and sorted(p.name for p in pps.iterdir()) == ["american", "english", "pps.json", "pps.md"]
    for folder in (old, pps):
        assert ev.check_out_dir(folder, foreign=False) == str(folder)
    (pps / "english" / "evaluation.json").write_text(json.dumps({"format": "pokersquares-evaluation"}))
    (pps / "english" / "mine.txt").write_text("a marked sub-folder is an evaluation's own")
    assert ev.check_out_dir(pps, foreign=False) == str(pps)
    argv = ["evaluate", "--agent", "greedy", "--games", "1", "--no-progress", "--format", "json"]
    assert cli.main([*argv, "--out", str(old)]) == 0 and (old / "evaluation.json").exists()
    assert cli.main([*argv, "--scoring-set", "american,english", "--out", str(pps)]) == 0
    # anything else in such a folder (a file, an empty or foreign sub-folder) is refused, naming up to 5 of them
    bad = tmp_path / "bad"
    shutil.copytree(pps, bad)
    (bad / "evaluation.json").unlink()
    for name in ("notes.txt", "a.txt", "b.txt", "c.txt"):
        (bad / name).write_text("mine")
    (bad / "empty").mkdir()
    (bad / "american" / "x.bin").write_text("mine")
    (bad / "american" / "evaluation.json").unlink()
    capsys.readouterr()
    assert cli.main([*argv, "--out", str(bad)]) == 2
    assert capsys.readouterr().err == (
        f"pokersquares evaluate: --out '{bad}' has no evaluation.json and holds entries no evaluation writes (a.txt, "
        f"american/, b.txt, c.txt, empty/ and 1 more): expected a new or empty folder, or one an earlier evaluate "
        f"wrote (holding evaluation.json, or only its output files); outputs there would be replaced, so choose "
        f"another folder\n")
    with pytest.raises(ValueError, match=r"^out_dir='.*bad' has no evaluation.json .*\(a.txt, american/"):
        ev.check_out_dir(bad, foreign=False)
    (bad / "evaluation.json").write_text('{"format": "something else"}')  # not an evaluate's marker: foreign too
    with pytest.raises(ValueError, match=r"empty/ and 2 more\)"):
        ev.check_out_dir(bad, foreign=False)
    # pps.md and pps.json are an evaluation's only at the top: a sub-folder of an unmarked folder holding them is
    # not a per-system folder (those never hold them), so it is the user's
    nested = tmp_path / "nested"
    (nested / "sub").mkdir(parents=True)
    (nested / "sub" / "pps.md").write_text("mine")
    with pytest.raises(ValueError, match=r"holds entries no evaluation writes \(sub/\)"):
        ev.check_out_dir(nested, foreign=False)
    (nested / "sub" / "pps.md").rename(nested / "pps.md")  # at the top it is an evaluation's file
    (nested / "sub").rmdir()
    assert ev.check_out_dir(nested, foreign=False) == str(nested)


def test_local_jobs_are_capped_at_the_cpus_with_a_warning_and_the_same_games(monkeypatch, capsys):
    """Before, ``--jobs 100000 --games 1000`` forked about 1000 workers, one deal each."""
    import agents.evaluation as ev

    seen = []
    local = ev._local

    def recording(tasks, *, jobs=1):
        seen.append((jobs, max(len(t[1]) for t in tasks)))
        return local(tasks, jobs=1)  # in this process: the records do not depend on the workers

    monkeypatch.setattr(ev, "_local", recording)
    monkeypatch.setattr(ev.os, "cpu_count", lambda: 3)
    monkeypatch.setattr(ev.os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    one = evaluate(["random"], games=24, seed=4, progress=False)
    many = evaluate(["random"], games=24, seed=4, progress=False, jobs=100_000)
    assert seen == [(1, 6), (3, 2)]  # three workers, chunks sized for three (not 1-deal chunks for 100,000)
    assert one.records == [dict(r, seconds=o["seconds"]) for r, o in zip(many.records, one.records, strict=True)]
    assert cli.main(["evaluate", "--agent", "random", "--games", "2", "--jobs", "100000", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert err == ("pokersquares evaluate: warning: --jobs 100000 is more than the 3 CPUs this process may use: "
                   "running 3 worker processes (the results are the same)\n")


def test_usable_cpus_follow_the_cpu_affinity(monkeypatch):
    """Before, the local --jobs cap was os.cpu_count(): all the machine's cores, also those this process may not use
    (taskset, a container's cpuset)."""
    import agents.evaluation as ev

    monkeypatch.setattr(ev.os, "cpu_count", lambda: 64)
    monkeypatch.setattr(ev.os, "sched_getaffinity", lambda pid: {0, 5}, raising=False)
    assert ev.usable_cpus() == 2 and ev.local_workers(8) == 2 and ev.local_workers(1) == 1
    monkeypatch.delattr(ev.os, "sched_getaffinity", raising=False)  # a platform without affinity (macOS, Windows)
    assert ev.usable_cpus() == 64 and ev.local_workers(8) == 8
    monkeypatch.setattr(ev.os, "cpu_count", lambda: None)
    assert ev.usable_cpus() == 1


def test_an_agent_that_cannot_be_built_is_named_once(monkeypatch, capsys):
    """Before: "agent spec 'ppo:junk.zip' cannot be built: ValueError: ppo:junk.zip: 'junk.zip' is not ..."."""
    import agents.registry

    def refuse(spec, **kwargs):
        raise ValueError(f"{spec}: 'junk.zip' is not a MaskablePPO model")

    monkeypatch.setattr(agents.registry, "check_model_path", lambda spec: None)
    monkeypatch.setattr(agents.registry, "make_agent", refuse)
    assert cli.main(["evaluate", "--agent", "ppo:junk.zip", "--games", "1", "--no-progress"]) == 2
    assert capsys.readouterr().err == ("pokersquares evaluate: agent spec 'ppo:junk.zip' cannot be built: ValueError: "
                                       "'junk.zip' is not a MaskablePPO model\n")
    # a spec with spaces around it: the loaders name it stripped, and it is still said once (as play says it)
    monkeypatch.setattr(agents.registry, "make_agent",
                        lambda spec, **kwargs: refuse(spec.strip(), **kwargs))
    assert cli.main(["evaluate", "--agent", " ppo:junk.zip ", "--games", "1", "--no-progress"]) == 2
    assert capsys.readouterr().err == ("pokersquares evaluate: agent spec ' ppo:junk.zip ' cannot be built: "
                                       "ValueError: 'junk.zip' is not a MaskablePPO model\n")


# ---- the audit of the evaluation harness (2026-12) ----------------------------------------------------------------


def _american_only(system=None, rules=None, seed=None):
    """An agent that can be built for American scoring only (as ``expectimax:tuned=true`` for American and English)."""
    from agents.simple import GreedyAgent

    if system.name != "american":
        raise ValueError(f"no tables for point system {system.name!r}")
    return GreedyAgent(system=system, rules=rules, seed=seed)


register_agent("american_only", _american_only, kind="params")


def _no_games(monkeypatch):
    """Record every chunk of games made (none may be, when the run is refused up front)."""
    import agents.evaluation as ev

    played = []
    monkeypatch.setattr(ev, "make_chunks", lambda specs, games, size, **k: played.append(list(specs)) or [])
    return played


def test_pps_builds_every_agent_for_every_system_before_the_first_game(tmp_path, monkeypatch, capsys):
    """Before, ``--agent greedy --agent expectimax:tuned=true --pps --out X`` played American and English, then
    stopped on random-1 (exit 2, X made and empty)."""
    played = _no_games(monkeypatch)
    target = tmp_path / "x"
    with pytest.raises(ValueError, match=r"^agent spec 'american_only' cannot be built for point system 'english': "
                                         r"ValueError: no tables for point system 'english'$"):
        evaluate_pps(["greedy", "american_only"], systems=["american", "english"], games=2, out_dir=target,
                     progress=False)
    assert cli.main(["evaluate", "--agent", "greedy", "--agent", "american_only", "--scoring-set", "american,english",
                     "--games", "2", "--out", str(target), "--no-progress"]) == 2
    assert "'american_only' cannot be built for point system 'english'" in capsys.readouterr().err
    assert played == [] and not target.exists()


def test_out_without_matplotlib_skips_the_plots_with_a_warning_and_reports_as_usual(tmp_path, monkeypatch, capsys):
    """Before, ``--out D`` without matplotlib played every game, wrote the text files, then printed only 'plots need
    matplotlib' and returned 2: no summary table, no exit status of the games."""
    import sys

    from agents.evaluation import RESULT_FILES, PlotsSkippedWarning

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails, as without the plot extra
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    out = tmp_path / "d"
    assert cli.main(["evaluate", "--agent", "greedy", "--games", "3", "--out", str(out), "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("| agent | games |") and "| greedy | 3 | 0 |" in captured.out
    assert captured.err == ('pokersquares evaluate: warning: scores.png and hands.png not written: plots need '
                            'matplotlib: pip install "pokersquares_env[plot]"\n')
    assert sorted(p.name for p in out.iterdir()) == sorted(["evaluation.json", *RESULT_FILES])
    assert cli.main(["evaluate", "--agent", "raiser:always=true", "--games", "2", "--out", str(out),
                     "--no-progress"]) == 1  # the games' exit status, as with matplotlib
    assert "error: agent raiser:always=true on deal 0" in capsys.readouterr().err
    with pytest.warns(PlotsSkippedWarning, match=r"pokersquares_env\[plot\]"):
        res = evaluate("greedy", games=2, out_dir=tmp_path / "api", progress=False)
    assert res.summary[0]["games"] == 2 and (tmp_path / "api" / "summary.json").exists()


def _strict_json(line):
    def refuse(constant):
        raise AssertionError(f"{constant} is not JSON: {line}")

    return json.loads(line, parse_constant=refuse)


def test_pps_json_output_is_valid_json(capsys):
    """Before, ``--scoring-set american,english --games 1 --format json`` printed "ci95": NaN."""
    assert cli.main(["evaluate", "--agent", "random", "--agent", "greedy", "--scoring-set", "american,english",
                     "--games", "1", "--format", "json", "--no-progress"]) == 0
    rows = [_strict_json(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 6 and all(r["ci95"] is None for r in rows[:4])


def test_rerunning_into_an_out_folder_removes_the_earlier_runs_outputs_only(tmp_path, monkeypatch):
    """Before, a plain evaluate into an earlier --pps output left its pps.md, pps.json and per-system folders."""
    import agents.evaluation as ev

    monkeypatch.setattr(ev.EvaluationResult, "plot", lambda self, out_dir: [])
    monkeypatch.setattr("pokersquares_env.scoring.expected_random_score", lambda *args: 0.0)  # not the point, slow
    out = tmp_path / "out"
    argv = ["evaluate", "--agent", "greedy", "--games", "1", "--no-progress", "--out", str(out)]
    assert cli.main([*argv, "--scoring-set", "american,english"]) == 0
    (out / "notes.txt").write_text("mine")
    (out / "english" / "notes.txt").write_text("mine too")
    assert cli.main(argv) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(["english", "notes.txt", "evaluation.json",
                                                            *ev.RESULT_FILES])
    assert [p.name for p in (out / "english").iterdir()] == ["notes.txt"]  # only the evaluation's files went
    assert json.loads((out / "evaluation.json").read_text())["scoring"]["name"] == "american"
    # and back: a --pps run into a plain one's folder leaves none of its top-level result files
    assert cli.main([*argv, "--scoring-set", "american,english"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["american", "english", "evaluation.json", "notes.txt", "pps.json",
                                                     "pps.md"]
    assert (out / "english" / "notes.txt").read_text() == "mine too"
    # evaluate(out_dir=) into a folder of other files removes nothing there
    other = tmp_path / "other"
    other.mkdir()
    (other / "pps.md").write_text("mine")
    (other / "keep.txt").write_text("mine")
    evaluate("greedy", games=1, out_dir=other, progress=False)
    assert (other / "pps.md").read_text() == "mine" and (other / "keep.txt").exists()


def test_rerunning_into_an_out_folder_keeps_the_users_sub_folders(tmp_path, monkeypatch):
    """A review found clear_outputs took any sub-folder holding only files of an evaluation's names for a --pps
    system folder and deleted it, with a user's summary.md in it; now only the folders the earlier run's marker lists,
    each with its own marker, are cleared."""
    import agents.evaluation as ev

    monkeypatch.setattr(ev.EvaluationResult, "plot", lambda self, out_dir: [])
    out = tmp_path / "e1"
    argv = ["evaluate", "--agent", "random", "--games", "3", "--no-progress", "--out", str(out)]
    assert cli.main(argv) == 0
    (out / "keep").mkdir()
    (out / "keep" / "games.jsonl").write_text((out / "games.jsonl").read_text())
    (out / "keep" / "summary.md").write_text("mine")
    assert cli.main(argv) == 0
    assert (out / "keep" / "summary.md").read_text() == "mine" and (out / "keep" / "games.jsonl").exists()
    legacy = tmp_path / "legacy"  # no marker: an evaluate's files from before the marker, and a sub-folder
    (legacy / "sub").mkdir(parents=True)
    (legacy / "summary.md").write_text("old")
    (legacy / "sub" / "games.jsonl").write_text("my games")
    assert cli.main([*argv[:-1], str(legacy)]) == 0
    assert (legacy / "sub" / "games.jsonl").read_text() == "my games"


def test_register_agent_refuses_names_not_in_lower_case_and_repeats_are_compared_as_read(capsys):
    """Before, register_agent('Flaky', ...) was accepted but 'Flaky' could never be asked for (unknown agent 'flaky'),
    and ``--agent greedy --agent Greedy`` passed the repeat check and ran greedy twice."""
    from agents.registry import available_agents

    with pytest.raises(ValueError, match=r"agent name 'Flaky': expected a lower-case name such as 'flaky'"):
        register_agent("Flaky", "agents.simple:GreedyAgent", kind="params")
    assert "Flaky" not in available_agents() and "flaky" not in available_agents()
    for specs in (["greedy", "Greedy"], ["greedy", " greedy"], ["mc:rollouts=2,candidates=2", "mc:candidates=2,rollouts=2"]):
        with pytest.raises(ValueError, match=rf"repeat an agent: {specs[0]!r} and {specs[1]!r} name the same agent"):
            evaluate(specs, games=1, progress=False)
    assert cli.main(["evaluate", "--agent", "greedy", "--agent", "Greedy", "--games", "1", "--no-progress"]) == 2
    # the command's message names its option, not the Python parameter (it said "agent_specs [...] repeat an agent")
    err = capsys.readouterr().err
    assert "--agent 'greedy' and --agent 'Greedy' name the same agent" in err and "agent_specs" not in err
    assert cli.main(["evaluate", "--agent", "greedy", "--agent", "greedy", "--games", "1", "--no-progress"]) == 2
    assert "--agent 'greedy' is given twice: each agent must be named once" in capsys.readouterr().err
    assert len(evaluate(["mc:rollouts=2", "mc:rollouts=3"], games=1, progress=False).summary) == 2  # other options


def test_pps_errors_on_stderr_name_their_point_system(capsys):
    """Before, the failed games of every system were reported alike, and grouped across systems."""
    assert cli.main(["evaluate", "--agent", "raiser", "--agent", "random", "--scoring-set", "american,english",
                     "--games", "6", "--seed", "3", "--no-progress"]) == 1
    err = capsys.readouterr().err.splitlines()
    odd = [d for d in range(6) if deal_deck(3, d)[0] % 2]
    assert odd
    for system in ("american", "english"):
        lines = [line for line in err if line.startswith(f"error: agent raiser under point system {system} on deal")]
        assert len(lines) == len(odd), err
    assert len(err) == 2 * len(odd)
    assert cli.main(["evaluate", "--agent", "raiser:always=true", "--scoring-set", "american,english",
                     "--games", "1", "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "raiser:always=true under point system american on deal 0" in err
    assert "raiser:always=true under point system english on deal 0" in err


def test_the_spread_of_fewer_than_two_games_is_not_a_number(tmp_path):
    """Before, the std of one game was reported as 0.0 (a spread measured as none), in the summary and the paired
    comparison; it is NaN, null in JSON."""
    res = evaluate(["random", "greedy"], games=1, progress=False)
    assert all(math.isnan(row["std"]) and math.isnan(row["ci95"]) for row in res.summary)
    assert all(_strict_json(line)["std"] is None for line in res.json_lines().splitlines())
    (pair,) = res.paired()
    assert pair["deals"] == 1 and math.isnan(pair["std_diff"]) and math.isnan(pair["ci95"])
    two = evaluate(["random"], games=2, progress=False).summary[0]
    assert two["std"] == pytest.approx(np.std(list(evaluate("random", games=2, progress=False).scores("random")
                                                    .values()), ddof=1))


def test_a_figure_that_cannot_be_computed_is_printed_n_a_in_the_tables_and_nan_in_csv():
    """The Markdown summary and the one-line brief printed the std and interval of one game as 'nan'; they print
    'n/a', as the paired comparisons and benchmarks/frontier.py do.  The CSV keeps 'nan', which CSV readers take as
    a missing number."""
    res = evaluate(["greedy"], games=1, progress=False)
    (row,) = res.summary
    head, _, cells = res.table().splitlines()
    values = dict(zip([c.strip() for c in head.strip("|").split("|")], [c.strip() for c in cells.strip("|").split("|")]))
    assert values["std"] == values["ci95"] == values["ci95_american"] == values["ci95_english"] == "n/a"
    assert values["mean"] == values["min"] == f"{row['mean']:.3f}" and values["games"] == "1"
    assert "nan" not in res.table()
    csv_row = res.table("csv").splitlines()[1].split(",")
    assert csv_row[5:7] == ["nan", "nan"] and float(csv_row[4]) == row["mean"]
    assert res.brief() == (f"greedy: {row['mean']:.2f} +- n/a ({row['seconds_per_game']:.3f} s a game, "
                           "0 errors)\n")


def test_a_pps_system_named_like_an_output_file_is_refused_before_any_game(tmp_path, monkeypatch):
    """Before, a system named "pps.md" played every game, then crashed writing pps.md over its folder."""
    played = _no_games(monkeypatch)
    points = {"one_pair": 1, "two_pair": 2, "three_of_a_kind": 3, "straight": 4, "flush": 5, "full_house": 6,
              "four_of_a_kind": 7, "straight_flush": 8, "royal_flush": 9}
    for name in ("pps.md", "Summary.JSON", "evaluation.json", "scores.png"):
        with pytest.raises(ValueError, match=rf"systems\[1\] is named {name!r}, the name of a file an evaluation "
                                             r"writes: expected another name"):
            evaluate_pps(["greedy"], systems=["american", {"name": name, "points": points}], games=1,
                         out_dir=tmp_path / "o", progress=False)
    assert played == [] and not (tmp_path / "o").exists()


def test_pps_set_name_is_read_in_any_case_and_all_nan_overall_figures_warn_nothing(monkeypatch, capsys):
    """Before, ``--pps PPS`` was taken as a point system named 'PPS' (unknown), and an agent without a normalised
    figure on any system made numpy warn 'Mean of empty slice'."""
    import warnings

    monkeypatch.setattr("pokersquares_env.scoring.expected_random_score", lambda *args: 0.0)  # not the point, slow
    assert cli.main(["evaluate", "--agent", "greedy", "--pps", "PPS", "--games", "1", "--no-progress"]) == 0
    assert capsys.readouterr().out.count("| greedy |") == 9 + 1  # the nine systems of 'pps', then overall
    res = evaluate_pps(["always_raises"], systems=["american"], games=2, progress=False)  # no figure: no spread
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        overall = {r["agent"]: r for r in res.overall()}
        table = res.table()
    assert math.isnan(overall["always_raises"]["normalized"]) and "always_raises | 1 | n/a | n/a |" in table


_DIES_IN_A_WORKER = """
import os
import sys

import agents.evaluation as ev
from agents.registry import register_agent
from agents.simple import GreedyAgent
from pokersquares_env import cli

PARENT = os.getpid()


class Dies(GreedyAgent):
    def act(self, obs, info, game, state):
        if os.getpid() != PARENT and state.num_placed == 3:
            os._exit(1)  # as a worker process killed for lack of memory
        return super().act(obs, info, game, state)


register_agent("dies", lambda system=None, rules=None, seed=None: Dies(system=system, rules=rules, seed=seed),
               kind="params")
ev.usable_cpus = lambda: 2  # two workers even on a one-CPU machine
try:
    ev.evaluate(["greedy", "dies"], games=4, jobs=2, chunk_size=2, progress=False)
except RuntimeError as exc:
    print(f"{type(exc).__name__}: {exc}")
print("cli exit", cli.main(["evaluate", "--agent", "dies", "--games", "2", "--jobs", "2", "--chunk-size", "1",
                            "--no-progress"]))
"""


def _run_dying_worker_script(script: str, cwd: Path):
    """Run ``script`` (an evaluation whose worker dies) in a child process, so that a hang fails the test instead of
    the suite; its finished process, which must exit 0."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    try:
        done = subprocess.run([sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=180)
    except subprocess.TimeoutExpired:
        pytest.fail("the evaluation hung after a worker process died")
    assert done.returncode == 0, done.stderr[-2000:]
    return done


@pytest.mark.skipif(os.name == "nt", reason="the test agent reaches the workers by fork")
def test_a_worker_process_that_dies_stops_the_evaluation_naming_its_deals(tmp_path):
    """Before, a worker of ``--jobs 2`` that died (an OOM kill, a crash) left multiprocessing.Pool waiting forever for
    its chunk: the evaluation hung.  Run in a child process, so that a hang fails the test instead of the suite."""
    done = _run_dying_worker_script(_DIES_IN_A_WORKER, tmp_path)
    lines = done.stdout.splitlines()
    assert lines[0].startswith("WorkerLostError: a worker process of the local back end (2 workers) died before its "
                               "chunk ended (killed, e.g. for lack of memory, or crashed)"), done.stdout
    assert "agent 'dies' deals 0-3" in lines[0] and "run it with fewer jobs" in lines[0]
    # the command line: one line naming the deals, no traceback, exit status 1
    assert lines[1] == "cli exit 1"
    assert "pokersquares evaluate: error: a worker process of the local back end" in done.stderr
    assert "agent 'dies' deals 0-1" in done.stderr and "Traceback" not in done.stderr


def test_deal_ranges_are_shown_compactly():
    from agents.evaluation import _deal_ranges

    assert _deal_ranges([5, 0, 1, 2, 7, 8, 10]) == "0-2, 5, 7-8, 10"
    assert _deal_ranges([3]) == "3"


def test_evaluate_help_says_what_cpus_the_embedded_ray_gets(monkeypatch, capsys):
    """Before, ``--address``'s help said the embedded Ray gets --jobs CPUs, but with --jobs 1 (the default) it gets
    every core."""
    import types

    import agents.distributed as dist

    with pytest.raises(SystemExit):
        cli.main(["evaluate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "else an embedded local Ray with --jobs CPUs, or all the CPUs this process may use when --jobs is 1)" in text
    # what the code does: ensure_ray's num_cpus (None: all the CPUs this process may use)
    asked = []
    monkeypatch.setattr(dist, "import_ray", lambda what: types.SimpleNamespace(
        is_initialized=lambda: False, cluster_resources=lambda: {"CPU": 64.0}))
    monkeypatch.setattr(dist, "ensure_ray", lambda address, num_cpus, what: asked.append(num_cpus) or True)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    for jobs in (1, 3):
        dist.prepare(["greedy"], jobs=jobs)
    assert asked == [None, 3]


def test_scores_and_paired_read_the_system_in_any_case_and_name_the_choices():
    """``paired("English")`` and ``paired`` of a PPS system's own name once failed with a bare KeyError."""
    res = evaluate(["random", "greedy"], games=3, seed=0, progress=False)
    assert res.paired("English") == res.paired("english") and res.paired("English")[0]["scoring"] == "english"
    assert res.scores("random", "AMERICAN") == res.scores("random") == res.scores("random", "american")
    with pytest.raises(ValueError, match=r"system='hypercorner': expected None or 'american' \(the played system\), "
                                         r"'american' or 'english'"):
        res.paired("hypercorner")
    random_1 = next(ps for ps in pps_systems(0) if ps.name == "random-1")
    pps = evaluate_pps(["random", "greedy"], systems=[random_1], games=2, seed=0, progress=False)
    played = pps.results["random-1"]
    assert played.paired("random-1") == played.paired() and played.paired("Random-1")[0]["scoring"] == "random-1"


class _StopEvaluation(BaseException):
    """Not an ``Exception``: the harness does not record it as a game's error, so it stops the evaluation (as
    Ctrl-C does)."""


class _ThreadCounter(Agent):
    """Records torch's thread count at every move; ``fail="game"`` raises in every game (recorded as an error),
    ``fail="stop"`` stops the whole evaluation."""

    name = "threads"
    uses_obs = False
    seen: list[int] = []

    def __init__(self, seed=None, fail="none"):
        super().__init__(seed)
        self.fail = fail

    def act(self, obs, info, game, state):
        import torch

        _ThreadCounter.seen.append(torch.get_num_threads())
        if self.fail == "game":
            raise RuntimeError("boom")
        if self.fail == "stop":
            raise _StopEvaluation
        return game.legal_cells(state)[0]


register_agent("threads", lambda system=None, rules=None, seed=None, fail="none": _ThreadCounter(seed, fail),
               kind="params")


def test_jobs_1_plays_on_one_torch_thread_and_gives_torch_its_threads_back():
    """A pool worker plays on one torch thread (``_one_thread_each``); before, ``jobs=1`` played in this process with
    torch's default of a thread per core, which made learned agents many times slower on a busy machine (their
    seconds per game were not one core's)."""
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(3)
        for fail in ("none", "game"):
            _ThreadCounter.seen = []
            res = evaluate([f"threads:fail={fail}"], games=3, seed=0, progress=False, chunk_size=2)
            assert len(res.errors) == (3 if fail == "game" else 0)
            assert _ThreadCounter.seen and set(_ThreadCounter.seen) == {1}
            assert torch.get_num_threads() == 3
        _ThreadCounter.seen = []
        with pytest.raises(_StopEvaluation):
            evaluate(["threads:fail=stop"], games=2, seed=0, progress=False)
        assert _ThreadCounter.seen == [1]
        assert torch.get_num_threads() == 3  # given back when the evaluation stops too
    finally:
        torch.set_num_threads(before)


def test_the_pps_set_never_holds_one_table_twice():
    """Seed 274 (and 455, 573, 1584 below 3,000) drew two identical hypercorner tables: one system counted twice in
    the tournament score, where the same list given explicitly is refused ("systems repeat a point system")."""
    for seed in (274, 455, 573, 1584, *range(40)):
        points = [s.points for s in pps_systems(seed)]
        assert len(set(points)) == len(points), seed
    hyper = [s for s in pps_systems(274) if s.name.startswith("hypercorner")]
    assert len(hyper) == 2 and all(set(s.points) <= {-1.0, 1.0} for s in hyper)


CORNER_MODULE = '''
from agents import Agent, register_agent


class CornerAgent(Agent):
    """The first legal cell, or with probability eps a random one."""

    uses_obs = False

    def __init__(self, system=None, rules=None, seed=None, eps=0.0):
        super().__init__(seed)
        self.eps = float(eps)

    def act(self, obs, info, game, state):
        legal = [c for c in range(25) if info["action_mask"][c]]
        return int(self.rng.choice(legal)) if self.rng.random() < self.eps else legal[0]


register_agent("import-corner", CornerAgent, kind="params")
register_agent("import-corner-path", CornerAgent)
'''


def test_evaluate_imports_a_users_module_that_registers_agents(tmp_path, monkeypatch, capsys):
    """Before, an agent of one's own could not be named from the command line at all ("unknown agent")."""
    import sys

    import agents.registry as registry

    monkeypatch.setattr(registry, "_REGISTRY", {name: entry for name, entry in registry._REGISTRY.items()
                                                if not name.startswith("import-corner")})
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", os.getcwd(), str(tmp_path))])
    monkeypatch.delitem(sys.modules, "my_corner_agents", raising=False)
    (tmp_path / "my_corner_agents.py").write_text(CORNER_MODULE)
    monkeypatch.chdir(tmp_path)
    argv = ["evaluate", "--agent", "import-corner:eps=0.2", "--agent", "random", "--games", "6", "--format", "json",
            "--no-progress"]
    assert cli.main(argv) == 2
    assert "unknown agent 'import-corner'" in capsys.readouterr().err
    assert cli.main(["evaluate", "--import", "my_corner_agents", *argv[1:], "--jobs", "2"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["agent"] for r in rows] == ["import-corner:eps=0.2", "random"] and all(r["games"] == 6 for r in rows)
    # the same games on one process
    assert cli.main(["evaluate", "--import", "my_corner_agents", *argv[1:]]) == 0
    assert [json.loads(line)["mean"] for line in capsys.readouterr().out.splitlines()] == [r["mean"] for r in rows]
    for bad, expected in (("no_such_module_here", "--import 'no_such_module_here': cannot import it: "
                                                  "ModuleNotFoundError"),
                          ("my_corner_agents.py", "--import 'my_corner_agents.py': expected a module name")):
        assert cli.main(["evaluate", "--import", bad, *argv[1:]]) == 2
        assert expected in capsys.readouterr().err


def test_an_agent_registered_with_the_default_path_kind_says_so(tmp_path, monkeypatch):
    """Before, a rule agent registered without kind="params" failed with messages about saved models only, or with
    a bare TypeError ("got multiple values for argument 'system'")."""
    import agents.registry as registry
    from agents import make_agent

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    namespace: dict = {}
    exec(CORNER_MODULE, namespace)
    hint = r"'import-corner-path' was registered with kind='path', the default, for saved models.*kind='params'"
    with pytest.raises(ValueError, match=r"expected import-corner-path:PATH .*" + hint):
        make_agent("import-corner-path")
    with pytest.raises(TypeError, match=r"multiple values for argument 'system'.*" + hint):
        make_agent("import-corner-path:eps=0.3")
    with pytest.raises(ValueError, match=r"no file or folder 'eps=0.3'.*" + hint):
        registry.check_model_path("import-corner-path:eps=0.3")
    with pytest.raises(ValueError, match=r"expected ppo:PATH \(the saved model to load\)$"):
        make_agent("ppo")  # a built-in path agent: no hint


def test_the_deal_stream_is_pinned():
    """The decks of a seed are the library's published benchmark (seed 2024's 2,000 deals and the figures measured
    on them): a change of how ``deal_deck`` seeds its generator would silently move every figure and leave runs of
    two versions without a common deal."""
    assert deal_deck(0, 0)[:6] == (11, 3, 20, 13, 2, 48)
    assert deal_deck(2024, 7)[:6] == (44, 9, 26, 43, 17, 40)


def test_summary_figures_of_edge_cases():
    """``win_rate`` is undefined (NaN, JSON null) under a point system without a win threshold, not 0; and
    ``seconds_per_game`` averages the finished games only, not the ones that raised."""
    from agents.evaluation import summarize
    from pokersquares_env.scoring import PointSystem, point_system

    no_threshold = PointSystem("flat", point_system("american").points, win_threshold=None)
    scores = {"american": 10.0, "english": 5.0}
    recs = [{"agent": "a", "deal": 0, "score": 10.0, "scores": scores, "seconds": 1.0},
            {"agent": "a", "deal": 1, "score": 30.0, "scores": scores, "seconds": 3.0},
            {"agent": "a", "deal": 2, "error": "boom", "seconds": 0.0}]
    row = summarize(recs, "a", no_threshold)
    assert math.isnan(row["win_rate"]) and row["games"] == 2 and row["errors"] == 1
    assert row["seconds_per_game"] == 2.0
    assert summarize(recs, "a", "american")["win_rate"] == 0.0  # a threshold of 100: neither game won


def test_an_error_names_the_move_that_raised_and_the_outputs_keep_their_layout(tmp_path):
    """The error message names the move the agent was asked for (the 3rd: two cards placed); summary.csv and
    summary.md have every documented column in order; games.jsonl lists agent by agent, each by deal."""
    res = evaluate(["raiser:always=true", "random"], games=3, seed=0, progress=False)
    errors = [r["error"] for r in res.records if "error" in r]
    assert len(errors) == 3 and all("move 3)" in e and "RuntimeError: boom" in e for e in errors)
    res.save(tmp_path)
    cols = ["agent", "games", "errors", "scoring", "mean", "std", "ci95", "min", "max", "win_rate",
            "seconds_per_game", "mean_american", "ci95_american", "mean_english", "ci95_english"]
    assert (tmp_path / "summary.csv").read_text().splitlines()[0] == ",".join(cols)
    header = (tmp_path / "summary.md").read_text().splitlines()[0]
    assert [c.strip() for c in header.strip("|").split("|")] == cols
    order = [(json.loads(line)["agent"], json.loads(line)["meta"]["deal"])
             for line in (tmp_path / "games.jsonl").read_text().splitlines()]
    assert order == [(a, d) for a in ("raiser:always=true", "random") for d in range(3)]


@needs("matplotlib")
def test_a_rerun_removes_the_earlier_runs_plots(tmp_path):
    """A rerun that writes no plots (as ``--pps``, or without matplotlib) leaves no stale plot of the run before."""
    from agents.evaluation import PLOT_FILES, clear_outputs

    evaluate(["random"], games=2, seed=0, progress=False, out_dir=str(tmp_path))
    assert set(PLOT_FILES) <= set(os.listdir(tmp_path))
    clear_outputs(tmp_path)
    assert not set(PLOT_FILES) & set(os.listdir(tmp_path))


def test_random_tables_span_their_documented_range_and_the_pps_marker_counts_deals(tmp_path):
    """The royal flush of a random table is drawn from 30 to 100, both ends included; a --pps folder's
    evaluation.json gives the deals per agent and system, not the number of records."""
    from agents.evaluation import ameritish_points

    rng = np.random.default_rng(0)
    tops = [ameritish_points(rng)[-1] for _ in range(3000)]  # the royal flush, last
    assert min(tops) == 30 and max(tops) == 100
    evaluate_pps(["random", "greedy"], games=2, seed=0, progress=False, out_dir=str(tmp_path),
                 systems=["american", "english"])
    marker = json.loads((tmp_path / "evaluation.json").read_text())
    assert marker["games"] == 2 and marker["agents"] == ["random", "greedy"]


def test_t975_uses_the_table_up_to_30_degrees_of_freedom():
    from agents.stats import t975

    assert t975(30) == 2.042 and t975(29) == 2.045


def test_the_pps_table_puts_each_figure_under_its_heading():
    """pps.md's cells are the summary's figures under their own headings (an audit swapped two columns unseen)."""
    res = evaluate_pps(["random", "greedy"], games=3, seed=0, progress=False, systems=["american", "english"])
    lines = res.table().splitlines()
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = [dict(zip(header, (c.strip() for c in line.strip("|").split("|")), strict=True)) for line in lines[2:6]]
    keys = {"games": "games", "errors": "errors", "mean": "mean", "ci95": "ci95", "random": "random_expected",
            "tournament": "tournament", "normalized": "normalized"}
    for row, summary in zip(rows, res.summary, strict=True):
        assert (row["agent"], row["system"]) == (summary["agent"], summary["system"])
        for heading, key in keys.items():
            want = summary[key]
            assert row[heading] == (str(want) if isinstance(want, int) else f"{want:.3f}"), heading
    assert len({r["tournament"] for r in rows} | {r["normalized"] for r in rows}) > 2  # the figures differ
    overall = lines[lines.index("| agent | systems | tournament score (sum) | mean normalized |") + 2:]
    for line, want in zip(overall, res.overall(), strict=True):
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells == [want["agent"], str(want["systems"]), f"{want['tournament_score']:.3f}",
                         f"{want['normalized']:.3f}"]


# ---- a second mutation audit of the harness (2026-12-04) ----------------------------------------------------------


class _Inspector(Agent):
    """Checks at every move what the harness hands it (raising on the first difference, so the game is an error):
    the env's observation, the action mask and the drawn card, after a ``reset`` before every game."""

    name = "inspector"
    uses_obs = True

    def __init__(self, seed=None):
        super().__init__(seed)
        self.moves = None  # set by reset()

    def reset(self):
        self.moves = 0

    def act(self, obs, info, game, state):
        from pokersquares_env.env import encode_observation, mask_array

        if self.moves != state.num_placed:
            raise AssertionError(f"not reset before the game: {self.moves} moves, {state.num_placed} cards placed")
        if obs is None or not np.array_equal(obs, encode_observation(game, state)):
            raise AssertionError(f"obs is not the env's observation: {obs!r}")
        if not np.array_equal(info["action_mask"], mask_array(game.legal_mask(state))):
            raise AssertionError(f"action_mask {info['action_mask']!r}")
        if info["card"] != state.card:
            raise AssertionError(f"card {info['card']!r}, drawn {state.card!r}")
        self.moves += 1
        return game.legal_cells(state)[-1]


def test_an_agent_gets_the_envs_observation_mask_and_card_and_a_reset_before_every_game(monkeypatch):
    import agents.registry as registry

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    register_agent("inspector", lambda system=None, rules=None, seed=None: _Inspector(seed), kind="params")
    records = run_chunk("inspector", [0, 1, 2], {"seed": 4})
    assert [r.get("error") for r in records] == [None, None, None]
    assert [r["deal"] for r in records] == [0, 1, 2] and all(len(r["placements"]) == 25 for r in records)


def test_a_failed_games_record_keeps_its_moves_and_its_error(tmp_path):
    """The record of a game that raised holds the cells played before the error, and games.jsonl says the error."""
    res = evaluate(["raiser:always=true"], games=2, seed=0, progress=False)
    assert [len(r["placements"]) for r in res.records] == [2, 2]  # raised on the third move
    res.save(tmp_path, plots=False)
    lines = [json.loads(line) for line in (tmp_path / "games.jsonl").read_text().splitlines()]
    assert [d["meta"]["deal"] for d in lines] == [0, 1]
    assert all("RuntimeError: boom" in d["meta"]["error"] and d["meta"]["eval_seed"] == 0 for d in lines)
    assert [len(d["placements"]) for d in lines] == [2, 2]


def test_a_backend_that_is_not_a_name_or_cannot_be_imported_is_named(monkeypatch):
    import agents.evaluation as ev

    monkeypatch.setattr(ev, "_BACKENDS", dict(ev._BACKENDS))
    with pytest.raises(TypeError, match=r"^backend=5: expected the name of a back end, one of local, ray$"):
        evaluate("random", games=1, progress=False, backend=5)
    ev.register_backend("nofunc", "agents.evaluation:no_such_function")  # the module is there, the function is not
    with pytest.raises(ImportError, match=r"^backend 'nofunc' \(agents.evaluation:no_such_function\) is not "
                                          r"available: .*no_such_function"):
        evaluate("random", games=1, progress=False, backend="nofunc")


def test_the_figures_of_one_game_warn_nothing():
    """One game has no spread (NaN) and that is said without numpy's 'Degrees of freedom <= 0' warning."""
    import warnings

    from agents.evaluation import summarize

    recs = [{"agent": "a", "deal": 0, "score": 12.0, "scores": {"american": 12.0, "english": 3.0}, "seconds": 0.5}]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        row = summarize(recs, "a", "american")
    assert row["mean"] == row["min"] == row["max"] == 12.0 and math.isnan(row["std"]) and math.isnan(row["ci95"])


def test_a_played_system_is_named_in_any_case_and_an_agent_without_games_has_no_hand_shares(tmp_path):
    """``scores``/``paired`` take the played system's own name in any case (a table named 'Flat' as 'flat' too); an
    agent that finished no game has no hand shares (NaN, null in hands.json), not shares of 0."""
    flat = {"name": "Flat", "points": {"one_pair": 1, "two_pair": 1, "three_of_a_kind": 1, "straight": 1, "flush": 1,
                                       "full_house": 1, "four_of_a_kind": 1, "straight_flush": 1, "royal_flush": 1}}
    res = evaluate(["random", "raiser:always=true"], games=2, seed=0, scoring=flat, progress=False)
    assert res.scores("random", "flat") == res.scores("random", "FLAT") == res.scores("random", "Flat") \
        == res.scores("random")
    assert res.paired("flat") == res.paired()
    freq = res.hand_frequencies()
    assert all(math.isnan(v) for kind in freq["raiser:always=true"].values() for v in kind.values())
    assert sum(freq["random"]["all"].values()) == pytest.approx(1.0)
    res.save(tmp_path, plots=False)
    hands = json.loads((tmp_path / "hands.json").read_text())
    assert set(hands["raiser:always=true"]["all"].values()) == {None}


def test_plots_skipped_is_said_every_time_whatever_the_warning_filters(capsys):
    """Within ``plots_skipped_said_by`` a PlotsSkippedWarning is always one line on stderr (even under an 'ignore'
    filter, and again for a second evaluation in the same process); other warnings keep the filters."""
    import warnings

    from agents.evaluation import PlotsSkippedWarning, plots_skipped_said_by

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with plots_skipped_said_by("pokersquares x"):
            for _ in range(2):
                warnings.warn(PlotsSkippedWarning("plots not written"), stacklevel=1)
            warnings.warn(UserWarning("ignored"), stacklevel=1)
    assert capsys.readouterr().err == "pokersquares x: warning: plots not written\n" * 2


def test_the_output_files_hold_the_figures_in_their_documented_form(tmp_path, monkeypatch):
    """summary.md shows floats to 3 decimals; hands.csv holds each agent's shares under their hand headings; a --pps
    system folder holds no plots; an evaluation whose every game raised still draws its plots; an unknown table
    format is refused by name."""
    pytest.importorskip("matplotlib")
    from agents.evaluation import PLOT_FILES, RESULT_FILES

    monkeypatch.setattr("pokersquares_env.scoring.expected_random_score", lambda *args: 0.0)  # not the point, slow

    res = evaluate(["random"], games=3, seed=0, progress=False)
    row = res.summary[0]
    header, _, cells = (line.strip("|").split("|") for line in res.table("markdown").splitlines())
    md = dict(zip((c.strip() for c in header), (c.strip() for c in cells), strict=True))
    assert md["mean"] == f"{row['mean']:.3f}" and md["games"] == "3"
    res.save(tmp_path / "plain", plots=False)
    lines = (tmp_path / "plain" / "hands.csv").read_text().splitlines()
    heads = lines[0].split(",")
    freq = res.hand_frequencies()["random"]
    for line in lines[1:]:
        values = dict(zip(heads, line.split(","), strict=True))
        assert values["agent"] == "random"
        assert all(values[h] == f"{freq[values['lines']][h]:.5f}" for h in heads[2:])
    assert not set(PLOT_FILES) & set(os.listdir(tmp_path / "plain"))
    with pytest.raises(ValueError, match=r"^fmt='html': expected 'markdown' or 'csv'$"):
        res.table("html")
    evaluate_pps(["random"], systems=["american"], games=1, progress=False, out_dir=tmp_path / "pps")
    assert sorted(os.listdir(tmp_path / "pps" / "american")) == sorted(["evaluation.json", *RESULT_FILES])
    failed = evaluate(["raiser:always=true"], games=1, progress=False, out_dir=tmp_path / "failed")
    assert len(failed.errors) == 1 and set(PLOT_FILES) <= set(os.listdir(tmp_path / "failed"))


def test_counts_and_seeds_are_refused_by_name_at_their_bounds(monkeypatch):
    """``games`` runs from 1 to MAX_GAMES and ``seed`` from 0, both ints (a bool is no count or seed); checked
    before any game."""
    from agents.evaluation import MAX_GAMES, check_games, check_positive_int, check_seed

    played = _no_games(monkeypatch)
    for games in (MAX_GAMES + 1, True, 0):
        with pytest.raises(ValueError, match=rf"^games={games!r}: expected "):
            evaluate("random", games=games, progress=False)
    for seed in (-1, True, 1.0):
        with pytest.raises(ValueError, match=rf"^seed={seed!r}: expected an integer >= 0$"):
            evaluate("random", games=1, seed=seed, progress=False)
    assert played == []
    assert check_games(MAX_GAMES) == MAX_GAMES and check_seed(np.int64(0)) == 0
    assert check_positive_int(np.int32(1), "jobs") == 1
    with pytest.raises(ValueError, match=r"^jobs=False: expected a positive integer$"):
        check_positive_int(False, "jobs")


def test_a_registered_back_end_is_prepared_and_run_with_the_jobs_and_its_options(monkeypatch):
    """A back end taking ``**options`` takes any option; its ``prepare`` is asked first with the specs and jobs; a
    back end's ``jobs`` is evaluate's own, never a back-end option."""
    import agents.evaluation as ev

    monkeypatch.setattr(ev, "_BACKENDS", dict(ev._BACKENDS))
    seen = []

    def run(tasks, *, jobs=1, **options):
        seen.append(("run", jobs, options))
        yield from ev._local(tasks, jobs=1)

    run.prepare = lambda specs, *, jobs, **options: seen.append(("prepare", specs, jobs, options))
    ev.register_backend("anything", run)
    res = evaluate(("random", "greedy"), games=2, progress=False, backend="anything", jobs=3,
                   backend_options={"colour": "blue"})
    assert seen == [("prepare", ["random", "greedy"], 3, {"colour": "blue"}), ("run", 3, {"colour": "blue"})]
    assert [r["games"] for r in res.summary] == [2, 2]

    def strict(tasks, *, jobs=1, address=None):
        yield from ev._local(tasks, jobs=1)

    ev.register_backend("strict", strict)
    with pytest.raises(ValueError, match=r"unknown option\(s\) 'jobs' for backend 'strict', which takes address "
                                         r"\(jobs is evaluate's own\)"):
        evaluate("random", games=1, progress=False, backend="strict", backend_options={"jobs": 2})


def test_no_agent_is_refused_and_a_missing_extra_stays_an_import_error(monkeypatch):
    """An empty agent list is a ValueError; an agent whose factory needs a missing extra raises its ImportError (as
    is: the command line says it as one line), not a 'cannot be built' ValueError."""
    import agents.registry as registry

    with pytest.raises(ValueError, match=r"^agent_specs is empty: expected at least one agent spec$"):
        evaluate([], games=1, progress=False)

    def needs_extra(system=None, rules=None, seed=None):
        raise ImportError('this agent needs torch: pip install "pokersquares_env[rl]"')

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    register_agent("needs-extra", needs_extra, kind="params")
    with pytest.raises(ImportError, match=r"^this agent needs torch"):
        evaluate("needs-extra", games=1, progress=False)


def test_a_spec_that_is_not_a_string_is_named_and_the_records_list_agent_by_agent(monkeypatch):
    import agents.evaluation as ev

    with pytest.raises(TypeError, match=r"^agent_specs: 5 \(int\) is not an agent spec: expected a string"):
        evaluate(["random", 5], games=1, progress=False)
    res = evaluate(["greedy", "random"], games=3, seed=0, progress=False, chunk_size=1)
    assert [(r["agent"], r["deal"]) for r in res.records] == [(a, d) for a in ("greedy", "random") for d in range(3)]
    monkeypatch.setattr(ev.os, "sched_getaffinity", lambda pid: {3}, raising=False)  # one CPU of many
    monkeypatch.setattr(ev.os, "cpu_count", lambda: 8)
    assert ev.usable_cpus() == 1 and ev.local_workers(4) == 1


def test_the_progress_bar_counts_every_game_of_every_agent(monkeypatch):
    import agents.evaluation as ev

    bars = []

    class Bar:
        def __init__(self, total):
            self.total, self.done, self.closed = total, 0, False
            bars.append(self)

        def update(self, n):
            self.done += n

        def close(self):
            self.closed = True

    monkeypatch.setattr(ev, "progress_bar", lambda progress, total, **kw: Bar(total) if progress else None)
    evaluate(["random", "greedy"], games=3, progress=True, chunk_size=2)
    (bar,) = bars
    assert (bar.total, bar.done, bar.closed) == (6, 6, True)


def test_pps_makes_the_out_folder_and_builds_each_agent_per_system_before_the_games(tmp_path, monkeypatch):
    """The folder exists from the first game on, and no agent is built again for a system it was built for."""
    import agents.registry as registry
    from agents.simple import GreedyAgent

    out = tmp_path / "out"
    builds, seen = [], []

    class Watcher(GreedyAgent):
        def act(self, obs, info, game, state):
            seen.append((len(builds), out.is_dir()))
            return super().act(obs, info, game, state)

    def build(system=None, rules=None, seed=None):
        builds.append(system.name)
        return Watcher(system=system, rules=rules, seed=seed)

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr("pokersquares_env.scoring.expected_random_score", lambda *args: 0.0)  # not the point, slow
    register_agent("watcher", build, kind="params")
    evaluate_pps("watcher", systems=["american", "english"], games=1, progress=False, out_dir=out)
    # built once per system up front, then once by the chunk that plays each system's games
    assert builds == ["american", "english", "american", "english"]
    assert seen[0] == (3, True) and all(made for _, made in seen)


def test_the_pps_set_of_a_seed_is_pinned_and_single_hand_tables_reach_every_hand():
    """The tables of seed 0 are what every recorded --pps figure was measured on; a single-hand table may score any
    of the ten challenge hands (royal flush too), and scores 1 for that hand only."""
    from agents.evaluation import _PPS_HANDS
    from pokersquares_env.scoring import CATEGORY_KEYS

    systems = {s.name: s.points for s in pps_systems(0)}
    assert list(systems) == ["american", "english", "random-1", "random-2", "hypercorner-1", "hypercorner-2",
                             "single-full_house", "single-two_pair", "ameritish-1"]
    assert systems["random-1"] == (-127.0, -72.0, -29.0, 112.0, -118.0, -45.0, -4.0, 68.0, 68.0, 68.0, 17.0)
    assert systems["ameritish-1"] == (0.0, 2.0, 6.0, 8.0, 15.0, 13.0, 24.0, 37.0, 37.0, 64.0, 72.0)
    singles = {s.name: s.points for seed in range(40) for s in pps_systems(seed) if s.name.startswith("single-")}
    assert sorted(singles) == sorted(f"single-{h}" for h in _PPS_HANDS)
    for name, points in singles.items():
        hand = name.removeprefix("single-")
        ones = {h for h, p in zip(CATEGORY_KEYS, points, strict=True) if p == 1}
        assert ones == ({hand, "five_of_a_kind"} if hand == "four_of_a_kind" else {hand}), name


def test_pps_normalized_is_undefined_where_no_agent_beats_random_play(monkeypatch):
    """``normalized`` is NaN on a system where the best mean is below random play's expectation (a negative span
    would turn the scale upside down), as where it equals it."""
    from agents.evaluation import EvaluationResult, PPSResult
    from pokersquares_env.scoring import point_system

    monkeypatch.setattr("pokersquares_env.scoring.expected_random_score", lambda *args: 10.0)
    config = {"seed": 0, "scoring": point_system("american").to_json(), "rules": {"jokers": 0}}

    def result(scores):
        recs = [{"agent": a, "deal": d, "score": s, "scores": {"american": s, "english": 0.0}, "seconds": 0.1}
                for a, row in scores.items() for d, s in enumerate(row)]
        return EvaluationResult(list(scores), recs, config, 2)

    pps = PPSResult({"below": result({"a": [2.0, 4.0], "b": [6.0, 8.0]}), "level": result({"a": [10.0, 10.0]}),
                     "above": result({"a": [2.0, 4.0], "b": [12.0, 16.0]})})
    rows = {(r["system"], r["agent"]): r for r in pps.summary}
    assert all(math.isnan(rows[k]["normalized"]) for k in (("below", "a"), ("below", "b"), ("level", "a")))
    assert rows["below", "b"]["tournament"] == 1.0 and rows["below", "a"]["tournament"] == 0.0
    assert rows["above", "b"]["normalized"] == 1.0 and rows["above", "a"]["normalized"] == pytest.approx(-7 / 4)


def test_out_dir_names_a_blank_path_an_unwritable_folder_and_a_linked_folder(tmp_path, monkeypatch):
    """A blank path names no folder; a folder that cannot be written in is refused before any work; a link to an
    evaluation's folder inside ``--out`` is no per-system folder of an evaluation (a file of the user's)."""
    from agents.evaluation import check_out_dir

    for blank in ("", "   "):
        with pytest.raises(ValueError, match=rf"^out_dir={blank!r}: expected a folder path"):
            check_out_dir(blank)
    locked = tmp_path / "locked"
    locked.mkdir()
    monkeypatch.setattr(os, "access", lambda path, mode: os.fspath(path) != str(locked))
    with pytest.raises(ValueError, match=r"locked': cannot write in it \(no permission\)$"):
        check_out_dir(locked)
    with pytest.raises(ValueError, match=rf"below': cannot create it in {str(locked)!r} \(no permission\)$"):
        check_out_dir(locked / "below")
    monkeypatch.undo()
    evaluate("random", games=1, progress=False).save(tmp_path / "ev", plots=False)
    (tmp_path / "ev" / "evaluation.json").unlink()  # as an evaluate wrote before the marker: only its files
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "summary.md").write_text("old")
    os.symlink(tmp_path / "ev", tmp_path / "out" / "linked")
    with pytest.raises(ValueError, match=r"holds entries no evaluation writes \(linked\)"):
        check_out_dir(tmp_path / "out", foreign=False)


def test_evaluate_pps_reads_the_set_name_in_any_case(monkeypatch):
    played = _no_games(monkeypatch)
    res = evaluate_pps("greedy", systems=" PPS ", games=1, seed=3, progress=False)
    assert list(res.results) == [s.name for s in pps_systems(3)] and len(played) == len(res.results)


def test_evaluate_pps_refuses_what_names_no_system_or_two_alike_and_numbers_unnamed_tables(monkeypatch):
    """Unnamed tables become custom-1, custom-2, ... skipping a name already given; two tables given one name, a
    name that cannot be a folder, no system at all, or a keyword evaluate_pps sets itself are refused before any
    game."""
    played = _no_games(monkeypatch)
    points = {"one_pair": 1, "two_pair": 2, "three_of_a_kind": 3, "straight": 4, "flush": 5, "full_house": 6,
              "four_of_a_kind": 7, "straight_flush": 8, "royal_flush": 9}
    other = {**points, "royal_flush": 10}
    third = {**points, "royal_flush": 11}
    res = evaluate_pps("greedy", systems=[points, other, {"name": "custom-1", "points": third}], games=1,
                       progress=False)
    assert list(res.results) == ["custom-2", "custom-3", "custom-1"]
    assert res.results["custom-1"].system.points[-1] == 11
    cases = [([], ValueError, r"^systems is empty: expected 'pps' or at least one point system$"),
             ([{"name": "..", "points": points}], ValueError, r"^systems\[0\] is named '\.\.': expected a name that "
                                                               r"can be a folder name"),
             ([{"name": "mine", "points": points}, {"name": "mine", "points": other}], ValueError,
              r"^systems: systems\[0\] and systems\[1\] are both named 'mine' but have different points")]
    for systems, error, message in cases:
        with pytest.raises(error, match=message):
            evaluate_pps("greedy", systems=systems, games=1, progress=False)
    with pytest.raises(TypeError, match=r"unexpected keyword argument\(s\) 'scoring': expected .* \(the systems give "
                                        r"the scoring\)$"):
        evaluate_pps("greedy", systems=["american"], games=1, progress=False, scoring="english")
    assert len(played) == 3  # the three tables of the first run only


def test_evaluate_pps_checks_its_systems_and_options_before_building_an_agent(monkeypatch):
    """A table with American's points but no win threshold is another system; bytes are no system; a bad
    chunk_size is refused before any agent is built (tables trained)."""
    import agents.evaluation as ev
    from pokersquares_env.scoring import PointSystem, point_system

    played = _no_games(monkeypatch)
    no_win = PointSystem("american-nowin", point_system("american").points, None)
    res = evaluate_pps("greedy", systems=["american", no_win], games=1, progress=False)
    assert list(res.results) == ["american", "american-nowin"] and len(played) == 2
    built = []
    monkeypatch.setattr(ev, "_build_or_raise", lambda *args, **kwargs: built.append(args))
    with pytest.raises(TypeError, match=r"^systems=b'pps': expected 'pps', a point system"):
        evaluate_pps("greedy", systems=b"pps", games=1, progress=False)
    with pytest.raises(ValueError, match=r"^chunk_size=0: expected a positive integer$"):
        evaluate_pps("greedy", systems=["american"], games=1, progress=False, chunk_size=0)
    assert built == []


def test_cli_prints_each_comparison_as_a_minus_b_and_reads_a_spaced_scoring_set(monkeypatch, capsys):
    monkeypatch.setattr("pokersquares_env.scoring.expected_random_score", lambda *args: 0.0)  # not the point, slow
    assert cli.main(["evaluate", "--agent", "random", "--agent", "greedy", "--games", "3", "--seed", "1",
                     "--no-progress"]) == 0
    out = capsys.readouterr().out
    (pair,) = evaluate(["random", "greedy"], games=3, seed=1, progress=False).paired()
    assert out.endswith(f"\nrandom - greedy: {pair['mean_diff']:+.3f} +- {pair['ci95']:.3f} over 3 common deals\n")
    # one deal: no interval (was "+- nan over 1 common deals")
    assert cli.main(["evaluate", "--agent", "random", "--agent", "greedy", "--games", "1", "--seed", "1",
                     "--no-progress"]) == 0
    (pair,) = evaluate(["random", "greedy"], games=1, seed=1, progress=False).paired()
    assert capsys.readouterr().out.endswith(f"\nrandom - greedy: {pair['mean_diff']:+.3f} on 1 common deal (no "
                                            f"interval from one)\n")
    assert cli.main(["evaluate", "--agent", "greedy", "--games", "1", "--scoring-set", " american , english ",
                     "--format", "json", "--no-progress"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["system"] for r in rows] == ["american", "english", "overall"]
    assert cli.main(["evaluate", "--agent", "greedy", "--games", "1", "--address", "ray://x:1", "--no-progress"]) == 2
    assert capsys.readouterr().err == "pokersquares evaluate: --address 'ray://x:1' needs --backend ray\n"
    # a misspelt back end is named as such, not as a back end that takes no --address
    assert cli.main(["evaluate", "--agent", "greedy", "--games", "1", "--backend", "RAY", "--address", "ray://x:1",
                     "--no-progress"]) == 2
    assert capsys.readouterr().err == "pokersquares evaluate: unknown backend 'RAY': expected one of local, ray\n"


def test_cli_warns_when_jobs_is_one_more_than_the_cpus(monkeypatch, capsys):
    import agents.evaluation as ev

    local = ev._local
    monkeypatch.setattr(ev, "_local", lambda tasks, *, jobs=1: local(tasks, jobs=1))  # in this process
    monkeypatch.setattr(ev.os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    assert cli.main(["evaluate", "--agent", "random", "--games", "2", "--jobs", "4", "--no-progress"]) == 0
    assert capsys.readouterr().err == ("pokersquares evaluate: warning: --jobs 4 is more than the 3 CPUs this process "
                                       "may use: running 3 worker processes (the results are the same)\n")
    assert cli.main(["evaluate", "--agent", "random", "--games", "2", "--jobs", "3", "--no-progress"]) == 0
    assert capsys.readouterr().err == ""


def test_cli_prints_at_most_20_error_lines_and_counts_the_rest(capsys):
    """Each failed game of raiser:always=true has a message of its own (it names the deal): 20 lines, then the
    number of failed games left; a message shared by several deals is one line counting them."""
    from agents.evaluate import _report_errors

    assert cli.main(["evaluate", "--agent", "raiser:always=true", "--games", "23", "--no-progress"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 21 and all(line.startswith("error: agent raiser:always=true on deal ") for line in err[:20])
    assert err[20] == "... and 3 more failed games (every one is in errors.json under --out)"
    shared = [{"agent": "a", "deal": d, "error": "could not build", "system": "english"} for d in (4, 5, 6)]
    others = [{"agent": "b", "deal": d, "error": "eb" if d < 2 else "ec", "system": "english"} for d in range(3)]
    _report_errors(shared + others, limit=1)  # 3 failed games in 2 lines left out
    assert capsys.readouterr().err == ("error: agent a under point system english on deal 4 and 2 more deals: could "
                                       "not build\n... and 3 more failed games (every one is in errors.json of each "
                                       "system's folder under --out)\n")


def test_cli_passes_scoring_and_address_on_and_refuses_an_import_that_is_no_module_name(monkeypatch, capsys):
    import agents.evaluation as ev

    assert cli.main(["evaluate", "--agent", "greedy", "--games", "1", "--scoring", "english", "--format", "json",
                     "--no-progress"]) == 0
    assert json.loads(capsys.readouterr().out)["scoring"] == "english"
    seen = []

    def fake_ray(tasks, *, jobs=1, address=None):
        seen.append(address)
        yield from ev._local(tasks, jobs=1)

    monkeypatch.setattr(ev, "_BACKENDS", {**ev._BACKENDS, "ray": fake_ray})
    assert cli.main(["evaluate", "--agent", "greedy", "--games", "1", "--backend", "ray", "--address", "ray://x:1",
                     "--no-progress"]) == 0
    assert seen == ["ray://x:1"]
    capsys.readouterr()
    for bad in ("lab/agents", "my-agents", "lab..agents"):
        assert cli.main(["evaluate", "--import", bad, "--agent", "greedy", "--games", "1", "--no-progress"]) == 2
        assert capsys.readouterr().err == (f"pokersquares evaluate: --import {bad!r}: expected a module name such as "
                                           f"myagents or lab.agents (not a file path)\n")


_ONE_CHUNK_LOST = """
import os
import time

import agents.evaluation as ev
from agents.registry import register_agent
from agents.simple import GreedyAgent

PARENT, RECEIVED = os.getpid(), os.path.abspath("first-chunk-received")


class Received:  # the progress bar: the parent has the records of a chunk (deals 0-1, the only one that can end)

    def update(self, n):
        open(RECEIVED, "w").close()

    def close(self):
        pass


class DiesOnDeal2(GreedyAgent):
    def act(self, obs, info, game, state):
        if os.getpid() != PARENT and state.deck == ev.deal_deck(0, 2):
            while not os.path.exists(RECEIVED):  # no race: the worker dies once the other chunk's records are in
                time.sleep(0.01)
            os._exit(1)
        return super().act(obs, info, game, state)


register_agent("dies2", lambda system=None, rules=None, seed=None: DiesOnDeal2(system=system, rules=rules, seed=seed),
               kind="params")
ev.usable_cpus = lambda: 3
ev.progress_bar = lambda *args, **kwargs: Received()
try:
    ev.evaluate(["dies2"], games=4, jobs=3, chunk_size=2, progress=False)
except ev.WorkerLostError as exc:
    print(exc)
"""


@pytest.mark.skipif(os.name == "nt", reason="the test agent reaches the workers by fork")
def test_a_lost_worker_names_the_workers_there_were_and_only_the_deals_left_without_records(tmp_path):
    """Two chunks for jobs=3: two workers; the chunk that finished before the other's worker died is not named."""
    done = _run_dying_worker_script(_ONE_CHUNK_LOST, tmp_path)
    assert done.stdout.startswith("a worker process of the local back end (2 workers) died"), done.stdout
    assert "no records for agent 'dies2' deals 2-3: run it" in done.stdout


def test_progress_must_be_a_bool_numpys_too():
    """``progress="no"`` is refused, naming it, rather than read as true; numpy's bools are bools."""
    from pokersquares_env._progress import check_progress, progress_bar

    assert check_progress(np.bool_(False)) is False and progress_bar(np.bool_(False), total=3) is None
    for value in ("no", 1):
        with pytest.raises(TypeError, match=f"progress={value!r}: expected True or False"):
            progress_bar(value, total=3)


def test_progress_iter_shows_a_bar_while_it_yields_the_items():
    import io

    pytest.importorskip("tqdm")
    from pokersquares_env._progress import progress_iter

    shown = io.StringIO()
    assert list(progress_iter(range(3), file=shown, desc="deals")) == [0, 1, 2]
    assert "deals" in shown.getvalue() and "3/3" in shown.getvalue()


# ---- the command line's own behaviour: what a user sees ------------------------------------------------------------


def test_cli_shows_the_progress_bar_unless_no_progress(capsys):
    pytest.importorskip("tqdm")
    assert cli.main(["evaluate", "--agent", "random", "--games", "2"]) == 0
    err = capsys.readouterr().err
    assert "evaluate: 100%" in err and "2/2" in err
    assert cli.main(["evaluate", "--agent", "random", "--games", "2", "--no-progress"]) == 0
    assert capsys.readouterr().err == ""


def test_cli_runs_one_worker_unless_jobs_is_given(monkeypatch, capsys):
    """--jobs defaults to 1 (as its help says): one worker even where more CPUs could be used."""
    import agents.evaluation as ev

    seen = []
    local = ev._local

    def recording(tasks, *, jobs=1):
        seen.append(jobs)
        return local(tasks, jobs=1)  # in this process

    monkeypatch.setattr(ev, "_local", recording)
    monkeypatch.setattr(ev.os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    assert cli.main(["evaluate", "--agent", "random", "--games", "4", "--no-progress"]) == 0
    assert cli.main(["evaluate", "--agent", "random", "--games", "4", "--jobs", "2", "--no-progress"]) == 0
    assert seen == [1, 2]
    capsys.readouterr()


def test_cli_table_output_ends_with_the_table_or_its_comparisons(monkeypatch, capsys):
    """One agent: the summary table, with no blank line after it (the comparisons and the line before them need two
    agents); --pps: the table as printed, without a blank line either."""
    monkeypatch.setattr("pokersquares_env.scoring.expected_random_score", lambda *args: 0.0)  # not the point, slow
    assert cli.main(["evaluate", "--agent", "greedy", "--games", "2", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| agent | games |") and out.endswith(" |\n") and out.count("\n") == 3
    assert cli.main(["evaluate", "--agent", "greedy", "--games", "1", "--scoring-set", "american,english",
                     "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.endswith(" |\n")  # its last row, with no blank line after it


def test_a_scoring_set_spaced_after_its_commas_reads_each_json_file(tmp_path, monkeypatch, capsys):
    """'american, flat.json' names the file flat.json, not ' flat.json' (which is no file)."""
    monkeypatch.setattr("pokersquares_env.scoring.expected_random_score", lambda *args: 0.0)  # not the point, slow
    points = {"one_pair": 1, "two_pair": 2, "three_of_a_kind": 3, "straight": 4, "flush": 5, "full_house": 6,
              "four_of_a_kind": 7, "straight_flush": 8, "royal_flush": 9}
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps({"name": "flat", "points": points}))
    assert cli.main(["evaluate", "--agent", "greedy", "--games", "1", "--scoring-set", f"american, {flat} ",
                     "--format", "json", "--no-progress"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["system"] for r in rows] == ["american", "flat", "overall"]


def _tree(root: Path) -> dict[str, str]:
    """Every entry under ``root``: files by content, folders and links by kind."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        out[rel] = ("link" if path.is_symlink() else "dir" if path.is_dir() else path.read_bytes().decode("latin-1"))
    return out


def test_a_folder_or_broken_link_where_an_output_file_goes_is_refused_before_any_game(tmp_path, monkeypatch, capsys):
    """Before, a folder named games.jsonl in an earlier evaluation's --out passed the checks; the earlier outputs were
    cleared, every game played, and saving ended in an IsADirectoryError traceback."""
    import agents.evaluation as ev

    out = tmp_path / "out"
    assert cli.main(["evaluate", "--agent", "random", "--games", "2", "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    (out / "games.jsonl").unlink()
    (out / "games.jsonl").mkdir()
    (out / "hands.png").unlink()
    (out / "hands.png").symlink_to(tmp_path / "nowhere.png")
    before = _tree(out)
    played = []
    monkeypatch.setattr(ev, "make_chunks", lambda *a, **k: played.append(1) or [])
    for extra in ([], ["--resume"]):
        code = cli.main(["evaluate", "--agent", "random", "--games", "2", "--out", str(out), "--no-progress", *extra])
        err = capsys.readouterr().err
        assert code == 2 and err == (f"pokersquares evaluate: --out {str(out)!r}: 'games.jsonl' there is a folder: "
                                     f"expected a file (an evaluation writes it), so move it away or choose another "
                                     f"folder\n"), err
    (out / "games.jsonl").rmdir()
    with pytest.raises(ValueError, match=r"out_dir=.*: 'hands.png' there is a broken link: expected a file"):
        evaluate(["random"], games=2, out_dir=out, progress=False)
    assert played == [] and _tree(out) == {k: v for k, v in before.items() if k != "games.jsonl"}


def test_pps_refuses_a_file_where_a_systems_folder_goes_and_a_folder_where_its_file_goes(tmp_path, monkeypatch):
    import agents.evaluation as ev

    played = []
    monkeypatch.setattr(ev, "make_chunks", lambda *a, **k: played.append(1) or [])
    out = tmp_path / "out"
    out.mkdir()
    (out / "english").write_text("mine")
    with pytest.raises(ValueError, match=r"'english' there is a file: expected a folder for that system's results"):
        evaluate_pps(["random"], systems=["american", "english"], games=2, out_dir=out, progress=False)
    (out / "english").unlink()
    (out / "english" / "summary.md").mkdir(parents=True)
    with pytest.raises(ValueError, match=r"'english/summary.md' there is a folder: expected a file"):
        evaluate_pps(["random"], systems=["american", "english"], games=2, out_dir=out, progress=False)
    (out / "pps.md").mkdir()
    with pytest.raises(ValueError, match=r"'pps.md' there is a folder: expected a file"):
        evaluate_pps(["random"], systems=["american", "english"], games=2, out_dir=out, progress=False)
    assert played == [] and _tree(out) == {"english": "dir", "english/summary.md": "dir", "pps.md": "dir"}
