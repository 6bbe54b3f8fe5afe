"""The speed benchmark runs end to end and prints every row it promises (figures are not asserted: timing is noisy)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import statistics
import sys
from pathlib import Path

import pytest

from helpers import needs

ROOT = Path(__file__).resolve().parents[1]


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@needs("tqdm")
def test_speed_benchmark_prints_the_table(capsys):
    speed = load("speed")
    assert speed.main(["--quick", "--repeats", "1", "--seconds", "0.02"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and not line.startswith("| what")]
    labels = [row.split(" | ")[0][2:] for row in rows]
    assert labels[0] == "FrozenLake-v1, gym.make (reference)"
    for n in speed.VECTOR_SIZES:
        assert any(label.startswith(f"PokerSquaresVectorEnv N={n} (") for label in labels), n
    assert any("copy=False" in label for label in labels)
    for row in rows:
        ratio = row.split(" | ")[2]
        if row.startswith("| score_grids"):  # lines scored, not env steps: no ratio to FrozenLake's steps
            assert ratio == "n/a"
        else:
            assert float(ratio) > 0
    assert out.index("load average before the first round: ") < out.index("| what")
    assert "before the first round, " in out and " after the last; " in out
    # --backend numpy: every vector row on numpy, and no other backend's row
    assert speed.main(["--quick", "--repeats", "1", "--seconds", "0.02", "--no-extra", "--backend", "numpy"]) == 0
    out = capsys.readouterr().out
    vector = [line for line in out.splitlines() if line.startswith("| PokerSquaresVectorEnv")]
    assert len(vector) == len(speed.VECTOR_SIZES) and all("(numpy)" in line for line in vector)
    assert "vector env backend: numpy (--backend numpy)" in out


def test_residuals_analysis_runs_and_the_richer_fit_is_reported(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path))
    residuals = load("residuals")
    assert residuals.main(["--games", "60", "--table-games", "2000"]) == 0
    out = capsys.readouterr().out
    assert "60 games, american" in out and "over 1500 positions" in out
    sds = [float(line.rsplit(" ", 1)[1]) for line in out.splitlines() if "held-out residual sd" in line]
    assert len(sds) == 2 and all(sd > 0 for sd in sds)


def test_residuals_network_option(capsys, tmp_path, monkeypatch):
    import pytest

    pytest.importorskip("torch")
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path))
    residuals = load("residuals")
    assert residuals.main(["--games", "40", "--table-games", "2000", "--mlp", "2"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.strip().startswith("network, epoch")]
    assert [line.split(":")[0].strip() for line in lines] == ["network, epoch 1", "network, epoch 2"]


def test_residual_board_features_count_what_they_say():
    import numpy as np

    from agents.batch import Batch

    residuals = load("residuals")
    b = Batch(1)
    # nine hearts (suit 2, ranks 2..10): columns 0-3 collect them (3, 2, 2, 2 cards: 2+3+3+3 = 11 claimed, 4 unseen),
    # rows 0 and 1 hold four each (1 + 1 claimed), row 2 one (not yet a claim)
    for cell, card in zip([0, 5, 10, 1, 6, 2, 7, 3, 8], range(26, 35), strict=True):
        b.place(np.array([cell]), np.array([card]))
    f = residuals.board_features(b)[0]
    np.testing.assert_array_equal(f, [0, 2, 1, 7, 4, 1, 0, 0, 0, 0, 0])
    b.place(np.array([4]), np.array([0]))  # a club in row 0: the row dies for flushes; no pair, straight 2-6 dead
    f = residuals.board_features(b)[0]
    assert f[1] == 1 and f[8] == 0  # one live row left; row 0 is full, so not an open dead line


def _small_tables(tmp_path, seed):
    from agents.tables import train_tables

    path = tmp_path / f"tables{seed}.npz"
    train_tables("american", games=2000, phases=4, seed=seed).save(path)
    return str(path)


def _placements(agent, game, deck):
    from helpers import play_game

    return play_game(agent, game, deck)[0]


def _check_search_variant(variant, opts, stream, same, other):
    """Under plain rules, jokers and adjacent placement, on two deals each: ``variant(rules=, seed=, **opts,
    **same)`` places every card where ``search`` does; with ``**other`` it plays legal games, the same twice for a
    seed, that differ from ``search``'s somewhere."""
    import contextlib

    import numpy as np
    import pytest

    from agents.search import RolloutSearchAgent
    from pokersquares_env.core import PokerSquaresGame, Rules

    differs = False
    for rules in (Rules(), Rules(jokers=2), Rules(placement="adjacent", first_cell="center")):
        game = PokerSquaresGame(rules)
        # the small tables were trained without jokers: every agent built for the jokers' game says so
        said = (pytest.warns(RuntimeWarning, match=r"trained with jokers=0, but the game has jokers=2")
                if rules.jokers else contextlib.nullcontext())
        with said:
            for d in range(2):
                deck = game.deal(np.random.default_rng([stream, d]))
                base = _placements(RolloutSearchAgent(rules=rules, seed=d, backend="numba", **opts), game, deck)
                assert _placements(variant(rules=rules, seed=d, **opts, **same), game, deck) == base
                runs = [_placements(variant(rules=rules, seed=d, **opts, **other), game, deck) for _ in range(2)]
                assert runs[0] == runs[1] and sorted(runs[0]) == list(range(25))
                differs |= runs[0] != base
    assert differs


def test_search_ensemble_with_one_side_is_search_and_with_both_plays_legally(tmp_path, monkeypatch):
    """``benchmarks/search_ensemble.py``: weights 1,0,1,0 play exactly ``search:depth=D``'s games (plain rules, jokers,
    adjacent placement); the full ensemble plays legal, reproducible games that differ from them somewhere."""
    import pytest

    pytest.importorskip("numba")
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path / "cache"))
    ens = load("search_ensemble")
    first, second = _small_tables(tmp_path, 0), _small_tables(tmp_path, 1)
    opts = {"candidates": 3, "rollouts": 16, "depth": 3, "tables": first}
    _check_search_variant(ens.EnsembleAgent, opts, 5, {"weights": "1,0,1,0", "second": second}, {"second": second})


def test_search_ensemble_script_reports_the_paired_difference_and_rejects_bad_options(tmp_path, monkeypatch, capsys):
    import json

    import pytest

    pytest.importorskip("numba")
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path / "cache"))
    ens = load("search_ensemble")
    second = _small_tables(tmp_path, 1)
    args = ["--games", "3", "--rollouts", "8", "--depth", "2", "--options", "games=2000,phases=4", "--second", second,
            "--no-progress"]
    assert ens.main(args + ["--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "ensemble - search:" in out and "on 3 common deals" in out
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert len(summary) == 2 and all(row["games"] == 3 for row in summary)
    with pytest.raises(ValueError, match=r"weights='1,1': expected 4 numbers"):
        ens.EnsembleAgent(weights="1,1", second=second, games=2000, phases=4)
    with pytest.raises(ValueError, match=r"second='best': expected 'tuned' or a saved tables file"):
        ens.EnsembleAgent(second="best", games=2000, phases=4)
    with pytest.raises(ValueError, match=r"ensemble options \['ply'\]"):
        ens.EnsembleAgent(second=second, ply=3, games=2000, phases=4)
    assert ens.main(args + ["--weights", "0,0,0,0"]) == 2
    assert "weights='0,0,0,0': expected 4 numbers >= 0" in capsys.readouterr().err


def test_frontier_reads_evaluation_folders_and_rejects_damaged_ones(tmp_path, capsys):
    import json

    import pytest

    from agents.evaluation import evaluate

    pytest.importorskip("matplotlib")
    frontier = load("frontier")
    a = evaluate(["random", "greedy"], games=4, seed=3, out_dir=tmp_path / "a", progress=False)
    evaluate(["random"], games=4, seed=5, out_dir=tmp_path / "b", progress=False)
    rows = frontier.load_run(str(tmp_path / "a"))
    by_agent = {r["agent"]: r for r in rows}
    for s in a.summary:
        row = by_agent[s["agent"]]
        assert (row["mean"], row["ci95"], row["games"], row["seed"]) == (s["mean_american"], s["ci95_american"], 4, 3)
    assert frontier.load_run(str(tmp_path / "a" / "summary.json"), "english")[0]["mean"] == a.summary[0]["mean_english"]

    # a, the same folder again (dropped), and b on other deals (said so)
    out = tmp_path / "plot" / "frontier.png"
    assert frontier.main([str(tmp_path / "a"), str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(out),
                          "--min-mean", "30"]) == 0
    text = capsys.readouterr().out
    table = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| agent")]
    assert len(table) == 3  # random and greedy of a, random of b
    times = [float(line.split(" | ")[2]) for line in table]
    assert times == sorted(times)
    assert text.count("dropped: already given on the same deals") == 2
    assert "do not share their deals" in text and "(3, 4)" in text and "(5, 4)" in text
    assert out.stat().st_size > 0

    # the same agent and deals, played for English: other games, kept, and the note says so
    evaluate(["random"], games=4, seed=3, scoring="english", out_dir=tmp_path / "en", progress=False)
    rows, notes = frontier.collect([str(tmp_path / "en"), str(tmp_path / "a")])
    assert sorted(r["played"] for r in rows) == ["american", "american", "english"]
    assert any("played for different point systems" in n for n in notes)

    (tmp_path / "b" / "games.jsonl").write_text("")  # no records: the seed is unknown, the rows stay
    assert [r["seed"] for r in frontier.load_run(str(tmp_path / "b"))] == [None]

    # damaged or missing input: exit status 2 and an error that names the file
    assert frontier.main([str(tmp_path / "missing")]) == 2
    assert "missing" in capsys.readouterr().err
    (tmp_path / "a" / "summary.json").write_text("[{\"agent\": ")
    with pytest.raises(ValueError, match=r"summary.json' is not valid JSON"):
        frontier.load_run(str(tmp_path / "a"))
    (tmp_path / "a" / "summary.json").write_text(json.dumps([{"agent": "x", "games": 4}]))
    with pytest.raises(ValueError, match=r"entry 0: missing \['seconds_per_game', 'mean_american', 'ci95_american'\]"):
        frontier.load_run(str(tmp_path / "a"))
    (tmp_path / "a" / "summary.json").write_text("{}")
    with pytest.raises(ValueError, match="expected a non-empty JSON list"):
        frontier.load_run(str(tmp_path / "a"))


def test_search_noisy_at_temp_0_is_search_and_noisy_rollouts_play_legal_reproducible_games(tmp_path, monkeypatch):
    """``benchmarks/search_noisy.py``: ``temp=0`` plays exactly ``search``'s games under plain rules, jokers and
    adjacent placement; with noise the games stay legal and reproducible for a seed, and differ somewhere."""
    import pytest

    pytest.importorskip("numba")
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path / "cache"))
    noisy = load("search_noisy")
    opts = {"candidates": 3, "rollouts": 16, "tables": _small_tables(tmp_path, 0)}
    _check_search_variant(noisy.NoisySearchAgent, opts, 6, {"temp": 0}, {"temp": 5})
    with pytest.raises(ValueError, match=r"temp=-1: expected a finite number >= 0"):
        noisy.NoisySearchAgent(temp=-1, **opts)
    with pytest.raises(ValueError, match=r"noisy-search options \['depth'\]"):
        noisy.NoisySearchAgent(depth=8, **opts)


def test_search_noisy_script_reports_each_temperature_against_search(tmp_path, monkeypatch, capsys):
    import json

    import pytest

    pytest.importorskip("numba")
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path / "cache"))
    noisy = load("search_noisy")
    args = ["--temps", "0", "5", "--games", "3", "--options", "games=2000,phases=4,rollouts=8", "--no-progress"]
    assert noisy.main(args + ["--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    # temp=0 plays search's very games (the docstring's claim, on the command line too)
    assert "noisy-search:games=2000,phases=4,rollouts=8,temp=0 - search: +0.00 " in out
    assert "noisy-search:games=2000,phases=4,rollouts=8,temp=5 - search:" in out
    assert out.count("on 3 common deals") == 2
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary[0]["agent"] == "search:games=2000,phases=4,rollouts=8" and len(summary) == 3
    assert noisy.main(args[:5] + ["--options", "games=2000,depth=4", "--no-progress"]) == 2
    assert "noisy-search options ['depth']" in capsys.readouterr().err
    for bad in (["--games", "0"], ["--jobs", "-1"], ["--temps", "-1"], ["--temps", "inf"]):
        with pytest.raises(SystemExit) as exc:
            noisy.main(args[:5] + bad + ["--out", str(tmp_path / "bad")])
        assert exc.value.code == 2
        assert f"argument {bad[0]}: {bad[1]}: expected" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        noisy.main(args[:5] + ["--temps", "3", "3.0", "--out", str(tmp_path / "bad")])
    assert exc.value.code == 2 and "--temps 3 3: expected each temperature once" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()


def test_td_search_without_local_games_is_search_and_with_them_plays_legal_reproducible_games(tmp_path, monkeypatch):
    """``benchmarks/td_search.py``: ``local=0`` plays exactly ``search``'s (and ``expectimax``'s) games; with local
    games the tables change only where those games went, and play stays legal and reproducible under every rule."""
    import numpy as np
    import pytest

    pytest.importorskip("numba")
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path / "cache"))
    td = load("td_search")
    opts = {"candidates": 3, "rollouts": 16, "tables": _small_tables(tmp_path, 0)}
    _check_search_variant(td.TDSearchAgent, opts, 7, {"local": 0}, {"local": 60, "epsilon": 0.3})

    from agents.expectimax import ExpectimaxAgent
    from pokersquares_env.core import PokerSquaresGame

    game = PokerSquaresGame()
    deck = game.deal(np.random.default_rng(3))
    plain = ExpectimaxAgent(tables=opts["tables"], backend="numba")
    assert _placements(td.TDExpectimaxAgent(tables=opts["tables"], local=0), game, deck) == _placements(
        plain, game, deck)

    state = game.init(deck)
    for _ in range(6):
        game.apply(state, plain.act(None, {}, game, state))
    c = plain._compiled
    points = plain.system.line_points_table
    unseen = np.array(game.unseen(state), dtype=np.int64)

    def local(prior, seed=0, games=200):
        return td.local_tables(c.flat, c.phases, c.nout, points, state, unseen, games, 0.2, prior,
                               np.random.default_rng(seed), False, None)

    out = local(1.0)
    changed = np.flatnonzero(out != c.flat)
    assert 0 < changed.size < 200 * 19 * 10 + 1  # at most one entry per line, move and game
    # each changed entry is a blend of the global value and line scores in [0, the best line's points]
    lo, hi = np.minimum(c.flat[changed], 0), np.maximum(c.flat[changed], points.max())
    assert np.all(out[changed] >= lo - 1e-9) and np.all(out[changed] <= hi + 1e-9)
    assert np.array_equal(out, local(1.0)) and not np.array_equal(out, local(1.0, seed=1))
    np.testing.assert_allclose(local(1e12), c.flat, atol=1e-6)  # an overwhelming prior keeps the global values
    assert state.card not in unseen and len(state.placements) == 6  # state and inputs untouched
    for bad, match in (({"local": -1}, "local=-1: expected an integer >= 0"),
                       ({"epsilon": 2}, "epsilon=2: expected a number from 0 to 1"),
                       ({"prior": 0}, "prior=0: expected a finite number > 0")):
        with pytest.raises(ValueError, match=match):
            td.TDSearchAgent(**opts, **bad)
    with pytest.raises(ValueError, match=r"td-search options \['rollout'\]"):
        td.TDSearchAgent(rollout="ply2", **opts)
    with pytest.raises(ValueError, match="ply 1 or 2 only"):
        td.TDExpectimaxAgent(tables=opts["tables"], ply=3)


def test_td_search_script_reports_paired_differences(tmp_path, monkeypatch, capsys):
    import json

    import pytest

    pytest.importorskip("numba")
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path / "cache"))
    td = load("td_search")
    args = ["--agents", "expectimax:games=2000,phases=4", "td-expectimax:games=2000,phases=4,local=30",
            "--games", "3", "--no-progress"]
    assert td.main(args + ["--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "expectimax:games=2000,phases=4 - td-expectimax:games=2000,phases=4,local=30: " in out
    assert "on 3 deals" in out
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert [row["agent"] for row in summary] == args[1:3] and all(row["errors"] == 0 for row in summary)
    tables = sorted((tmp_path / "cache" / "tables").iterdir())
    assert td.main(["--agents", "td-search:local=-2", "--games", "1", "--no-progress"]) == 2
    assert "local=-2: expected an integer >= 0" in capsys.readouterr().err
    assert sorted((tmp_path / "cache" / "tables").iterdir()) == tables  # refused before any table was trained
    # an agent named twice: a usage error (before, a ValueError traceback from the harness)
    err = _usage_error(td.main, ["--agents", "expectimax", "expectimax", "--games", "1"], capsys)
    assert "--agents expectimax expectimax: expected each agent once" in err


def test_ppo_threads_benchmark_reports_every_run_and_the_ratio(tmp_path, capsys):
    pytest.importorskip("torch", reason="it times fast-ppo: the train extra")
    bench = load("ppo_threads")
    out = tmp_path / "threads.json"
    assert bench.main(["--threads", "1", "2", "--seconds", "0.5", "--repeats", "2", "--shaping", "heuristic",
                       "--num-envs", "32", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    runs = [line for line in text.splitlines() if line.startswith("| ") and line.count("|") == 4
            and line.split("|")[1].strip().isdigit() and len(line.split("|")[2].strip()) == 1]
    assert [r.split("|")[2].strip() for r in runs] == ["1", "2", "2", "1"]  # the order alternates per round
    summary = json.loads(out.read_text())
    assert [row["threads"] for row in summary["results"]] == [1, 2]
    assert summary["results"][0]["ratio"] == 1.0
    for row in summary["results"]:
        assert len(row["runs"]) == 2 and all(rate > 0 for rate in row["runs"])
        assert row["median_steps_per_s"] == statistics.median(row["runs"])
    with pytest.raises(SystemExit) as bad:
        bench.main(["--threads", "2", "2"])
    assert bad.value.code == 2 and "expected each count once" in capsys.readouterr().err


def _by_deck(folder, agent, system):
    """Deck -> score of ``agent`` in ``folder``'s games.jsonl, read straight from the records (no script code)."""
    import json

    out = {}
    for line in (folder / "games.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["agent"] == agent and "error" not in rec["meta"]:
            out.setdefault(tuple(rec["deck"]), rec["score"] if system == "played" else rec["scores"][system])
    return out


def test_pair_runs_pools_and_pairs_by_deck_across_runs(tmp_path, capsys):
    """``benchmarks/pair_runs.py``: games of several evaluate runs keyed by deck; pooled and paired figures equal
    those computed directly from the records; a deck repeated for an agent is kept once; bad folders are refused."""
    import json

    import numpy as np

    from agents.evaluation import evaluate
    from agents.stats import mean_ci95

    pair = load("pair_runs")
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    evaluate(["random", "greedy"], games=5, seed=3, out_dir=a, progress=False)
    evaluate(["greedy", "rules"], games=5, seed=3, out_dir=b, progress=False)  # greedy repeats a's games
    evaluate(["rules", "random"], games=4, seed=8, out_dir=c, progress=False)  # other deals

    for system in ("played", "english"):
        rules = {**_by_deck(b, "rules", system), **_by_deck(c, "rules", system)}
        rand = {**_by_deck(a, "random", system), **_by_deck(c, "random", system)}
        assert len(rules) == len(rand) == 9 and set(rules) == set(rand)
        diffs = np.array([rules[d] - rand[d] for d in rules], dtype=float)
        args = [str(a), str(b), str(c), "--agent", "rules", "--agent", "random"]
        assert pair.main(args + ["--scoring", system]) == 0
        out = capsys.readouterr().out
        name = "american" if system == "played" else system
        for agent, scores in (("rules", rules), ("random", rand)):
            v = np.array(list(scores.values()), dtype=float)
            line = next(x for x in out.splitlines() if x.startswith(f"{agent}: "))
            assert line == (f"{agent}: {v.mean():.2f} +- {mean_ci95(v):.2f} (95% CI {v.mean() - mean_ci95(v):.2f} to "
                            f"{v.mean() + mean_ci95(v):.2f}), std {v.std(ddof=1):.2f}, n 9 deals ({name})")
        line = next(x for x in out.splitlines() if x.startswith("rules - random: "))
        assert line.startswith(f"rules - random: {diffs.mean():+.2f} +- {mean_ci95(diffs):.2f} on 9 common deals "
                               f"({name}; std of the differences {diffs.std(ddof=1):.2f}; "
                               f"rules better on {(diffs > 0).sum()}, random better on {(diffs < 0).sum()}, "
                               f"ties {(diffs == 0).sum()})")
        cells = [[x.strip() for x in r.strip("|").split("|")] for r in out.splitlines() if r.startswith("| ")]
        rows = {r[0]: r[1:] for r in cells}
        assert rows["folder"] == ["deal seed(s)", "rules games", "random games"]
        assert rows[str(a)] == ["3", "0", "5"] and rows[str(b)] == ["3", "5", "0"] and rows[str(c)] == ["8", "4", "4"]
        assert rows["all"] == ["", "9", "9"]

    # the data behind the print: the harness's own summary and paired rows
    res = pair.pair_runs([str(a), str(b), str(c)], ["rules", "random"], "american")
    assert [r["games"] for r in res["pooled"]] == [9, 9] and res["paired"]["deals"] == 9
    assert res["pooled"][0]["mean"] == pytest.approx(np.mean(list(_by_deck(b, "rules", "american").values())
                                                             + list(_by_deck(c, "rules", "american").values())))

    # greedy played seed 3 in a and in b: kept once, and the note says the games were the same
    assert pair.main([str(a), str(b), "--agent", "greedy"]) == 0
    out = capsys.readouterr().out
    g = np.array(list(_by_deck(a, "greedy", "played").values()), dtype=float)
    assert f"greedy: {g.mean():.2f} +- {mean_ci95(g):.2f}" in out and "n 5 deals" in out
    assert f"greedy: 5 deck(s) of {b} were already read from {a}: kept those of {a} (5 identical game(s), 0 " in out
    assert "5 (5 repeated, left out)" not in out and "0 (5 repeated, left out)" in out

    # refused, with exit status 2 and the folder named: another point system (played scores), a file that is not
    # the harness's, a damaged score, an agent the runs do not hold, no deck in common
    e = tmp_path / "e"
    evaluate(["rules"], games=2, seed=3, scoring="english", out_dir=e, progress=False)
    assert pair.main([str(b), str(e), "--agent", "rules"]) == 2
    assert "different point systems" in capsys.readouterr().err
    assert pair.main([str(b), str(e), "--agent", "rules", "--scoring", "american"]) == 0
    assert "played for different point systems" in capsys.readouterr().out
    bad = tmp_path / "bad"
    bad.mkdir()
    rec = json.loads((c / "games.jsonl").read_text().splitlines()[0])
    (bad / "games.jsonl").write_text(json.dumps({**rec, "meta": {}}) + "\n")
    assert pair.main([str(a), str(bad), "--agent", "random"]) == 2
    err = capsys.readouterr().err
    assert f"'{bad}' is not an evaluation run" in err and "meta.deal" in err
    (bad / "games.jsonl").write_text(json.dumps({**rec, "score": rec["score"] + 1}) + "\n")
    assert pair.main([str(bad), "--agent", rec["agent"]]) == 2
    assert f"'{bad}' holds a damaged record" in capsys.readouterr().err
    assert pair.main([str(a), "--agent", "mc"]) == 2
    assert "the runs hold greedy, random" in capsys.readouterr().err
    assert pair.main([str(a), str(c), "--agent", "greedy", "--agent", "rules"]) == 2
    assert "played no deck in common" in capsys.readouterr().err
    assert pair.main([str(tmp_path / "missing"), "--agent", "random"]) == 2
    assert "missing" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        pair.main([str(a), "--agent", "random", "--agent", "random"])
    assert "expected one agent, or two different ones" in capsys.readouterr().err


def _odd_raiser():
    """An agent that raises on the third move of deals whose first card is odd (for pair_runs' raised counts)."""
    from agents import Agent

    class OddRaiser(Agent):
        name = "odd_raiser_pair_runs"
        uses_obs = False

        def act(self, obs, info, game, state):
            if state.num_placed == 2 and state.deck[0] % 2:
                raise RuntimeError("boom")
            return game.legal_cells(state)[0]

    return OddRaiser()


def test_pair_runs_refuses_runs_of_other_rules_and_counts_each_folders_games(tmp_path, capsys, monkeypatch):
    """Runs played under other rules (jokers) are refused, not pooled; the contributions table gives a folder's deal
    seed even when it lacks the agent asked for, counts the games that raised and the repeated decks, and totals the
    games kept only (an audit found each unchecked)."""
    import shutil

    from agents import registry
    from agents.evaluation import evaluate

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    registry.register_agent("odd_raiser_pair_runs", lambda system=None, rules=None, seed=None: _odd_raiser(),
                            kind="params")
    pair = load("pair_runs")
    a, j, r, r2 = tmp_path / "a", tmp_path / "j", tmp_path / "r", tmp_path / "r2"
    evaluate(["random"], games=3, seed=3, out_dir=a, progress=False)
    evaluate(["random"], games=3, seed=3, out_dir=j, progress=False, rules={"jokers": 1})
    assert pair.main([str(a), str(j), "--agent", "random"]) == 2
    assert "pool runs of one rule set" in capsys.readouterr().err
    evaluate(["greedy", "odd_raiser_pair_runs"], games=6, seed=3, out_dir=r, progress=False)
    raised = sum(1 for line in (r / "games.jsonl").read_text().splitlines() if "error" in json.loads(line)["meta"])
    assert 0 < raised < 6
    kept = 6 - raised
    shutil.copytree(r, r2)

    def table_rows():
        return {c[0]: c[1:] for c in ([x.strip() for x in line.strip("|").split("|")]
                                      for line in capsys.readouterr().out.splitlines() if line.startswith("| "))}

    assert pair.main([str(a), str(r), "--agent", "random"]) == 0
    assert table_rows()[str(r)] == ["3", "0"]  # its deal seed, though it holds no game of random
    assert pair.main([str(r), str(r2), "--agent", "odd_raiser_pair_runs"]) == 0
    rows = table_rows()
    assert rows[str(r)] == ["3", f"{kept} ({raised} raised, left out)"]
    assert rows[str(r2)] == ["3", f"0 ({kept} repeated, {raised} raised, left out)"]
    assert rows["all"] == ["", str(kept)]  # the repeated decks are kept once


def test_pair_runs_names_the_per_system_folders_of_a_pps_output(tmp_path, capsys):
    """Before, the output folder of ``pokersquares evaluate --pps`` (its games are in per-system sub-folders) was
    said not to be an evaluate output at all; now the error says it is a --pps output and names the folders to
    give, and one of them pairs as any evaluate output."""
    from agents.evaluation import evaluate_pps

    pair = load("pair_runs")
    out = tmp_path / "pps"
    evaluate_pps(["random", "greedy"], systems=["american", "english"], games=2, seed=3, out_dir=out, progress=False)
    assert pair.main([str(out), "--agent", "random"]) == 2
    err = capsys.readouterr().err
    assert f"'{out}' is the output of 'pokersquares evaluate --pps'" in err
    assert f"({str(out / 'american')!r}, {str(out / 'english')!r})" in err
    assert "cannot read it" not in err
    assert pair.main([str(out / "english"), "--agent", "random", "--agent", "greedy"]) == 0
    assert "n 2 deals (english)" in capsys.readouterr().out
    # a folder without games.jsonl that no --pps evaluation wrote is still refused as before
    (tmp_path / "empty").mkdir()
    assert pair.main([str(tmp_path / "empty"), "--agent", "random"]) == 2
    assert "cannot read it" in capsys.readouterr().err


def test_ppo_threads_cuts_the_minibatch_to_one_update_for_few_envs():
    """``--num-envs 16`` gives 800-step updates, under fast-ppo's 1,600-step minibatch: the script uses one minibatch
    per update instead of failing with a ConfigError traceback (and leaves the default alone otherwise)."""
    from agents.config import TrainConfig

    bench = load("ppo_threads")
    assert bench.minibatch_for(None) is None and bench.minibatch_for(32) is None and bench.minibatch_for(256) is None
    assert bench.minibatch_for(16) == 800 and bench.minibatch_for(1) == 50
    cfg = TrainConfig(algo="fast-ppo", num_envs=16, minibatch_size=bench.minibatch_for(16)).resolved()
    assert cfg.minibatch_size == cfg.num_envs * cfg.num_steps == 800


def test_step_breakdown_prints_every_piece_and_its_remainder(capsys):
    breakdown = load("step_breakdown")
    assert breakdown.main(["--num-envs", "64", "--games", "1", "--repeats", "1", "--backend", "numpy"]) == 0
    out = capsys.readouterr().out
    rows = {line.split(" | ")[0][2:]: line.split(" | ") for line in out.splitlines()
            if line.startswith("| ") and not line.startswith("| piece")}
    assert list(rows) == ["policy (argmax over the masks)", "update (board, lines, observation)", "observation copy",
                          "info dict", "dealing", "the rest (step's own Python, resets, checks)", "whole step"]
    ns = {name: float(cells[1]) for name, cells in rows.items()}
    assert all(ns[name] > 0 for name in ns if not name.startswith("the rest"))
    assert abs(sum(v for k, v in ns.items() if k != "whole step") - ns["whole step"]) < 0.5  # the rest: the remainder
    assert rows["whole step"][2].startswith("100%") and "x FrozenLake" in out and "backend numpy" in out
    with pytest.raises(SystemExit):
        breakdown.main(["--num-envs", "0"])


def test_render_speed_times_a_cold_frame_and_the_median_of_warm_ones(capsys):
    pytest.importorskip("PIL")
    bench = load("render_speed")
    assert bench.main(["--frames", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"first frame \(cold caches\): \d+\.\d ms", lines[0]), lines[0]
    assert re.fullmatch(r"later frames: median \d+\.\d\d ms, min \d+\.\d\d ms, max \d+\.\d\d ms over 3 frames",
                        lines[1]), lines[1]
    bench.clear_caches()  # the cold frame is cold: every cache it names is empty
    from pokersquares_env import render

    assert all(cache.cache_info().currsize == 0 for cache in render._CACHES)
    with pytest.raises(SystemExit):
        bench.main(["--frames", "0"])


def test_step_breakdown_times_the_numba_update_and_copy_as_one_pass(capsys):
    """The numba kernels fill the step's fresh observation as they update it: one row times both, as ``step`` runs
    them (a separate copy row would time a copy that ``step`` no longer makes)."""
    pytest.importorskip("numba")
    breakdown = load("step_breakdown")
    assert breakdown.main(["--num-envs", "64", "--games", "1", "--repeats", "1", "--backend", "numba"]) == 0
    out = capsys.readouterr().out
    rows = [line.split(" | ")[0][2:] for line in out.splitlines()
            if line.startswith("| ") and not line.startswith("| piece")]
    assert rows == ["policy (argmax over the masks)", "update and observation copy (one pass)", "info dict",
                    "dealing", "the rest (step's own Python, resets, checks)", "whole step"]
    assert "backend numba" in out


def test_shaping_cost_times_each_shaping_and_gives_the_ratio(capsys, tmp_path, monkeypatch):
    pytest.importorskip("torch", reason="its one real run trains fast-ppo: the train extra")
    shaping_cost = load("shaping_cost")
    runs = []

    def fake_run(shaping, timesteps, folder, seed=0):  # the table, not the training, is under test here
        runs.append((shaping, timesteps))
        return {"none": 2.0, "heuristic": 3.0}[shaping]

    monkeypatch.setattr(shaping_cost, "timed_run", fake_run)
    assert shaping_cost.main(["--timesteps", "30000", "--repeats", "2", "--shapings", "none", "heuristic"]) == 0
    out = capsys.readouterr().out
    assert runs == [("none", 20000), ("heuristic", 20000)] + [("none", 30000), ("heuristic", 30000)] * 2
    assert "| none | 2.00 | 2.00, 2.00 | 1.000 |" in out and "| heuristic | 3.00 | 3.00, 3.00 | 1.500 |" in out
    # one real run: the training call the script makes is a valid one
    assert shaping_cost.__dict__["timed_run"] is fake_run
    monkeypatch.undo()
    seconds = shaping_cost.timed_run("heuristic", 1000, tmp_path / "run")
    assert seconds > 0 and (tmp_path / "run" / "model.pt").is_file()


@pytest.mark.parametrize("features", ["none", "outs"])
def test_td_tables_records_the_self_play_lines_and_refines_only_visited_incomplete_lines(tmp_path, features):
    """``benchmarks/td_tables.py``: its kernel plays the games ``agents._fast.self_play`` plays and records the same
    line indices (and the greedy move's where the game explored); refinement moves only entries the games visited,
    never a complete line's points, reproducibly for a seed."""
    import numpy as np

    pytest.importorskip("numba")
    from agents import _fast
    from agents.tables import ValueTables, train_tables

    td = load("td_tables")
    base = train_tables("american", games=2000, phases=4, features=features)
    points = base.system.line_points_table
    rng = np.random.default_rng(1)
    n = 64
    decks = np.argsort(rng.random((n, 52)), axis=1).astype(np.int64)
    explore, noise = rng.random((n, 25)) < 0.3, rng.random((n, 25))
    rec, _ = _fast.self_play(base.values, decks, ply=1, explore=explore, noise=noise, points=points)
    vf, phases, nout = _fast.tables_flat(base.values)
    mine, greedy = np.zeros((n, 25, 10), np.int64), np.zeros((n, 25, 10), np.int64)
    td._play_td(decks, explore, noise, vf, phases, nout, False, -1, mine, greedy)
    assert np.array_equal(mine, rec) and np.array_equal(greedy[~explore], rec[~explore])
    assert (greedy[explore] != rec[explore]).any()

    def refine(target, seed=0):
        return td.refine(base, games=300, batch=100, epsilon=0.2, memory=50, seed=seed, target=target,
                         progress=False).values

    out = refine("greedy")
    changed = out != base.values
    complete = np.zeros(base.values.shape, dtype=bool)
    complete[np.arange(base.values.shape[0]) // 264 == 5] = True
    assert changed.any() and not (changed & complete).any()
    assert np.array_equal(out, refine("greedy")) and not np.array_equal(out, refine("greedy", seed=1))
    assert not np.array_equal(out, refine("actual"))
    path = tmp_path / "base.npz"
    base.save(path)
    assert td.main(["--tables", str(path), "--games", "200", "--batch", "100", "--out", str(tmp_path / "td.npz")]) == 0
    assert ValueTables.load(tmp_path / "td.npz").values.shape == base.values.shape


def test_frontier_and_pair_runs_read_a_one_game_run_and_an_agent_that_finished_no_game(tmp_path, capsys):
    """Before, frontier.py crashed on ``float(None)``: the null ci95 of a 1-game run, the null mean of an agent that
    failed every game; pair_runs printed the std of one game as 0.00."""
    import pytest

    from agents import Agent, register_agent
    from agents.evaluation import evaluate

    pytest.importorskip("matplotlib")

    class NeverPlays(Agent):
        uses_obs = False

        def act(self, obs, info, game, state):
            raise RuntimeError("never plays")

    register_agent("bench-never-plays", lambda system=None, rules=None, seed=None: NeverPlays(seed), kind="params")
    evaluate(["greedy", "random", "bench-never-plays"], games=1, seed=4, out_dir=tmp_path / "one", progress=False)
    frontier = load("frontier")
    out = tmp_path / "frontier.png"
    assert frontier.main([str(tmp_path / "one"), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| agent")]
    assert len(rows) == 2 and all(" ± n/a | " in line for line in rows)
    assert f"note: bench-never-plays in {tmp_path / 'one'} left out: no finished game (no mean to draw)" in text
    assert out.stat().st_size > 0

    pair = load("pair_runs")
    assert pair.main([str(tmp_path / "one"), "--agent", "greedy", "--agent", "random"]) == 0
    text = capsys.readouterr().out
    assert "std n/a, n 1 deals" in text and "std of the differences n/a" in text and "std 0.00" not in text


def _usage_error(main, argv, capsys) -> str:
    """``main(argv)`` stops with argparse's usage error (exit status 2); its message."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2, exc.value.code
    return capsys.readouterr().err


def test_td_tables_refuses_bad_options_before_any_game_and_writes_only_finite_tables(tmp_path, monkeypatch, capsys):
    """``benchmarks/td_tables.py``: before, ``--games -5`` wrote the tables unchanged (with 399,995 games in their
    metadata), ``--epsilon 7`` raised an IndexError, ``--memory -3`` wrote NaN tables and ``--batch 0`` looped for
    ever; refined tables that are not finite were written as well."""
    import numpy as np

    pytest.importorskip("numba")
    from agents.tables import ValueTables

    td = load("td_tables")
    tables = _small_tables(tmp_path, 0)
    out = tmp_path / "td.npz"
    out.write_bytes(b"an earlier file")
    args = ["--tables", tables, "--out", str(out)]
    for bad, expected in ((["--games", "-5"], "argument --games: -5: expected an integer >= 1"),
                          (["--epsilon", "7"], "argument --epsilon: 7: expected a probability from 0 to 1"),
                          (["--epsilon", "nan"], "argument --epsilon: nan: expected a probability from 0 to 1"),
                          (["--memory", "-3"], "argument --memory: -3: expected a finite number > 0"),
                          (["--batch", "0"], "argument --batch: 0: expected an integer >= 1")):
        assert expected in _usage_error(td.main, args + bad, capsys)
        assert out.read_bytes() == b"an earlier file"
    assert "--out" in _usage_error(td.main, ["--tables", tables, "--out", str(tmp_path)], capsys)
    assert "--scoring 'foo'" in _usage_error(td.main, ["--scoring", "foo", "--out", str(out)], capsys)
    with pytest.raises(ValueError, match="batch=0: expected an integer >= 1"):
        td.refine(ValueTables.load(tables), games=10, batch=0, epsilon=0.2, memory=50, seed=0, progress=False)

    base = ValueTables.load(tables)

    def broken(tables, **kwargs):  # what a refinement gone wrong would give
        values = tables.values.copy()
        values.reshape(-1)[:3] = np.nan
        return ValueTables(values, tables.counts, tables.system, tables.rules, tables.games, tables.seed)

    monkeypatch.setattr(td, "refine", broken)
    assert td.main(args + ["--games", "10"]) == 1
    assert "3 values that are not finite" in capsys.readouterr().err
    assert out.read_bytes() == b"an earlier file"
    monkeypatch.undo()
    assert td.main(args + ["--games", "100", "--batch", "50"]) == 0
    refined = ValueTables.load(out)
    assert refined.games == base.games + 100 and np.isfinite(refined.values).all()


def test_td_tables_refuses_tables_of_a_layout_its_self_play_cannot_take(tmp_path, monkeypatch, capsys):
    """Before, ``--tables`` of ``features=straights`` loaded, and the first batch of self-play ended in a ValueError
    traceback from the compiled kernels."""
    pytest.importorskip("numba")
    from agents.tables import train_tables

    td = load("td_tables")
    tables = tmp_path / "straights.npz"
    train_tables("american", games=1000, phases=4, features="straights").save(tables)
    monkeypatch.setattr(td, "refine", lambda *a, **k: pytest.fail("self-play started"))
    err = _usage_error(td.main, ["--tables", str(tables), "--out", str(tmp_path / "td.npz"), "--games", "1"], capsys)
    assert f"--tables {str(tables)!r}: value tables of shape (1584, 2, 4, 90): the compiled kernels take" in err
    assert not (tmp_path / "td.npz").exists()


def test_agents_benchmark_checks_every_system_and_agent_before_the_first_game(tmp_path, capsys):
    """``benchmarks/agents.py``: before, ``--systems american,foo`` played the whole American evaluation and then
    raised on 'foo', an agent that could not be built for the second system was found only after the first system's
    games, and ``--games 0`` / ``--jobs 0`` ended in tracebacks."""
    from agents import register_agent
    from agents.registry import make_agent

    bench = load("agents")

    def american_only(system=None, rules=None, seed=None):
        if system.name == "english":
            raise ValueError("plays American only")
        return make_agent("random", system=system, rules=rules, seed=seed)

    register_agent("bench-american-only", american_only, kind="params")
    out = tmp_path / "ag"
    base = ["--agent", "random", "--games", "2", "--no-progress", "--out", str(out)]
    err = _usage_error(bench.main, base + ["--systems", "american,foo"], capsys)
    assert "--systems 'american,foo'" in err and "'foo'" in err
    err = _usage_error(bench.main, ["--agent", "bench-american-only", *base[2:], "--systems", "american,english"],
                       capsys)
    assert "'bench-american-only' cannot be built for point system 'english'" in err and "American only" in err
    assert "unknown agent 'nope'" in _usage_error(bench.main, ["--agent", "nope", *base[2:]], capsys)
    assert "expected each point system once" in _usage_error(bench.main, base + ["--systems", "english,English"],
                                                               capsys)
    for flag in ("--games", "--jobs"):
        assert f"argument {flag}: 0: expected an integer >= 1" in _usage_error(bench.main, base + [flag, "0"], capsys)
    assert not out.exists()
    assert bench.main(base + ["--systems", "english"]) == 0
    assert "## english: 2 common deals" in capsys.readouterr().out
    assert (out / "english" / "games.jsonl").is_file() and (out / "benchmark.json").is_file()
    assert bench.main(base + ["--systems", "english"]) == 0  # its own folder: written again
    capsys.readouterr()
    # a system folder of someone else's files is refused before any game, as `pokersquares evaluate --out` does;
    # before, its games.jsonl was replaced without a word
    mine = out / "american"
    mine.mkdir()
    (mine / "games.jsonl").write_text("my data\n")
    (mine / "notes.txt").write_text("notes\n")
    err = _usage_error(bench.main, base + ["--systems", "american"], capsys)
    assert "holds entries no evaluation writes (notes.txt)" in err
    assert (mine / "games.jsonl").read_text() == "my data\n"
    # an empty --out names no folder: before, the run played and wrote nothing, exit 0
    assert "expected a folder path" in _usage_error(bench.main, base[:-1] + ["", "--systems", "english"], capsys)


def test_search_experiments_checks_the_probe_options_before_the_baseline(monkeypatch, capsys):
    """``benchmarks/search_experiments.py``: before, ``--probe kk=2`` (or ``k=0``) was refused only after the whole
    ``expectimax:ply=2`` baseline had played, as a RuntimeError traceback."""
    bench = load("search_experiments")
    played = []
    monkeypatch.setattr(bench, "_scores", lambda spec, *args: played.append(spec) or (None, 0.0))
    for probe, expected in (("kk=2", "unknown option(s) kk"), ("k=0", "k=0: expected an integer from 1 to 25"),
                            ("r=abc", "r='abc': expected an integer >= 2"), ("margin=x", "margin='x': expected a "
                                                                                         "finite number")):
        err = _usage_error(bench.main, ["--probe", probe, "--games", "4"], capsys)
        assert f"--probe {probe!r}" in err and expected in err
    assert "--scoring 'foo'" in _usage_error(bench.main, ["--probe", "k=2", "--scoring", "foo"], capsys)
    assert played == []
    with pytest.raises(ValueError, match="end=5: expected an integer from 0 to 4"):
        bench.ProbeAgent(end=5)


@needs("tqdm")
def test_soliter_and_solver_refuse_bad_options_with_a_usage_error(tmp_path, capsys):
    """Before, ``soliter.py --free-cells -1`` / ``--seed0 -1`` and ``solver.py --restarts 0`` (or an unknown
    ``--systems``) ended in tracebacks."""
    soliter, solver = load("soliter"), load("solver")
    assert "--free-cells -1" in _usage_error(soliter.main, ["--deals", "1", "--free-cells", "-1"], capsys)
    assert "argument --seed0: -1: expected an integer >= 0" in _usage_error(soliter.main, ["--seed0", "-1"], capsys)
    assert "argument --max-steps: 0: expected an integer >= 1" in _usage_error(soliter.main, ["--max-steps", "0"],
                                                                                capsys)
    assert "argument --restarts: 0: expected an integer >= 1" in _usage_error(solver.main, ["--restarts", "0"], capsys)
    assert "argument --rounds: -1: expected an integer >= 0" in _usage_error(solver.main, ["--rounds", "-1"], capsys)
    assert "argument --anneal-steps: 0: expected" in _usage_error(solver.main, ["--anneal-steps", "0"], capsys)
    err = _usage_error(solver.main, ["--restarts", "30000", "--verify", "1"], capsys)
    assert "--restarts 30000" in err and "4 x --restarts" in err
    assert "--systems 'foo'" in _usage_error(solver.main, ["--systems", "american", "foo"], capsys)
    assert "expected each point system once" in _usage_error(solver.main, ["--systems", "english", "English"], capsys)


@needs("tqdm")
def test_solver_needs_a_deal_and_counts_of_at_least_zero(tmp_path, capsys):
    """Before, ``solver.py --deals 0`` printed NaN means, exited 0 and wrote bare NaN into its JSON file."""
    solver = load("solver")
    out = tmp_path / "s.json"
    for bad, expected in ((["--deals", "0"], "argument --deals: 0: expected an integer >= 1"),
                          (["--deals", "-3"], "argument --deals: -3: expected an integer >= 1"),
                          (["--verify", "-1"], "argument --verify: -1: expected an integer >= 0"),
                          (["--bounds", "-1"], "argument --bounds: -1: expected an integer >= 0")):
        assert expected in _usage_error(solver.main, bad + ["--out", str(out)], capsys)
    assert not out.exists()


@needs("tqdm")
def test_solver_docstring_calls_the_re_solve_share_an_upper_estimate():
    """A heavier search that finds nothing better does not prove the default's score optimal: the share of such deals
    is at least the share where the default solver is optimal (an upper, optimistic estimate), not a lower one."""
    doc = " ".join(load("solver").__doc__.split())
    assert "lower estimate" not in doc
    assert "is an upper (optimistic) estimate of how often the default solver is optimal" in doc


@needs("tqdm")
def test_soliter_solver_and_ppo_threads_write_their_json_into_a_new_folder(tmp_path, monkeypatch, capsys):
    """Before, ``--out`` (``--json``) in a folder that did not exist failed only after the whole run, losing it."""
    soliter, solver, threads = load("soliter"), load("solver"), load("ppo_threads")
    out = tmp_path / "new" / "deeper" / "soliter.json"
    assert soliter.main(["--deals", "1", "--time-limit", "0.2", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["summary"]["deals"] == 1 and os.listdir(out.parent) == ["soliter.json"]
    out = tmp_path / "new2" / "solver.json"
    solver.main(["--deals", "1", "--systems", "american", "--restarts", "2", "--rounds", "1", "--anneal-steps", "50",
                 "--verify", "0", "--out", str(out)])
    assert json.loads(out.read_text())["results"][0]["deals"] == 1 and os.listdir(out.parent) == ["solver.json"]
    capsys.readouterr()

    runs = []
    monkeypatch.setattr(threads, "measure", lambda n, seconds, **kw: runs.append(n) or 1000.0 * n)
    out = tmp_path / "new3" / "threads.json"
    assert threads.main(["--threads", "1", "2", "--repeats", "1", "--shaping", "none", "--json", str(out)]) == 0
    assert [row["ratio"] for row in json.loads(out.read_text())["results"]] == [1.0, 2.0]
    assert os.listdir(out.parent) == ["threads.json"]
    runs.clear()
    for main, argv in ((threads.main, ["--shaping", "none", "--json", str(tmp_path)]),
                       (soliter.main, ["--deals", "1", "--out", str(tmp_path)]),
                       (solver.main, ["--deals", "1", "--out", str(tmp_path)])):
        assert f"{tmp_path!s}' is a folder" in _usage_error(main, argv, capsys)
    assert runs == []


@needs("tqdm")
def test_soliter_reports_a_replay_cut_short_by_max_steps(capsys):
    """Before, a ``--max-steps`` below a plan's length aborted with "the plan ... does not win on replay", blaming
    the solver for the replay's step limit."""
    soliter = load("soliter")
    err = _usage_error(soliter.main, ["--deals", "1", "--time-limit", "0.2", "--max-steps", "10"], capsys)
    assert "seed 0: the replay stopped at --max-steps 10, before the end of the solver's plan of " in err
    assert "does not win" not in err


def test_the_search_ply3_row_cites_the_runs_that_pair_it():
    """docs/agents.md's ``search:ply=3`` row gives a difference against ``search``; the device run it cited (ply3)
    plays only ``expectimax`` and ``search:ply=3``: the row must also name the run that played ``search`` on those
    deals and the ``pair_runs.py`` command that pairs them."""
    import re
    import shlex

    script = (ROOT / "benchmarks" / "device_agents.sh").read_text(encoding="utf-8")
    plays = {case: (folder, agents.split()) for case, folder, agents in
             re.findall(r'^\s*(\w+)\) run (\w+) \w+ "\$\{GAMES:-\d+\}" ([^;]+?) ;;', script, re.M)}
    assert set(plays) == {"english", "american", "ply3"}
    row = next(line for line in (ROOT / "docs" / "agents.md").read_text(encoding="utf-8").splitlines()
               if line.startswith("| `search:ply=3`"))
    assert "against `search`" in row
    device = re.search(r"`bash benchmarks/device_agents\.sh (\S+) \d+ ([\w ]+)`", row)
    pair = re.search(r"`python benchmarks/pair_runs\.py ([^`]+)`", row)
    assert device and pair, row
    out, cases = device.group(1), device.group(2).split()
    argv = shlex.split(pair.group(1))
    folders = [a for i, a in enumerate(argv) if not a.startswith("--") and (i == 0 or argv[i - 1] != "--agent")]
    agents = [argv[i + 1] for i, a in enumerate(argv) if a == "--agent"]
    assert agents == ["search:ply=3", "search"]
    made = {f"{out}/{plays[case][0]}": plays[case][1] for case in cases}
    assert set(folders) <= set(made), (folders, made)
    for agent in agents:
        assert any(agent in made[folder] for folder in folders), agent


def test_speed_no_extra_keeps_the_numpy_comparison_row(capsys):
    """``--no-extra`` skips the copy=False and SyncVectorEnv rows, as its help says; before, it dropped the plain
    numpy comparison row too."""
    pytest.importorskip("numba")
    speed = load("speed")
    assert speed.main(["--quick", "--repeats", "1", "--seconds", "0.02", "--no-extra", "--backend", "numba"]) == 0
    labels = [line.split(" | ")[0][2:] for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert "PokerSquaresVectorEnv N=4096 (numpy)" in labels
    assert not any("copy=False" in label or label.startswith("SyncVectorEnv") for label in labels)


@needs("tqdm")
def test_memory_quick_sets_only_what_is_not_given(capsys):
    """Before, ``--quick`` replaced ``--steps`` and ``--every`` even when they were given."""
    memory = load("memory")
    argv = ["--num-envs", "64", "--steps", "640", "--every", "320", "--backend", "numpy", "--tolerance", "1e9"]
    assert memory.main(argv + ["--quick"]) == 0
    out = capsys.readouterr().out
    assert "N=64: 640 sub-env steps (10 calls)" in out
    assert [line.split(" | ")[0] for line in out.splitlines() if line.startswith("| ") and "MiB" not in line
            and not line.startswith("|---")] == ["| 320", "| 640"]
    # --every: the quick 1e5, above the 1,280 steps: one RSS sample measures no growth, so it is refused (it printed
    # "growth +0.00 MiB over 0 further sub-env steps" and "flat")
    message = _usage_error(memory.main, ["--num-envs", "64", "--steps", "1280", "--quick", "--backend", "numpy"],
                           capsys)
    assert ("--steps 1280 with --every 100000 at --num-envs 64: fewer than two RSS samples, so no growth can be "
            "measured; expected --steps above --every") in message
    assert "expected --steps above --every" in _usage_error(memory.main, ["--num-envs", "64", "--steps", "100",
                                                                           "--every", "1e9"], capsys)
    # steps that are not whole calls are rounded down, and the run says so
    assert memory.main(["--num-envs", "64", "--steps", "700", "--every", "320", "--backend", "numpy",
                        "--tolerance", "1e9"]) == 0
    assert "N=64: 640 sub-env steps (10 calls) (--steps 700 rounded down to whole calls of 64)" in \
        capsys.readouterr().out


def test_shaping_cost_prints_the_steps_run_and_refuses_a_repeated_shaping(capsys, monkeypatch):
    """Before, the table's heading gave ``--timesteps`` though fast-ppo rounds a run up to whole updates, and
    ``--shapings none none`` was timed twice under one name."""
    shaping_cost = load("shaping_cost")
    monkeypatch.setattr(shaping_cost, "timed_run", lambda shaping, timesteps, folder, seed=0: 1.0)
    assert shaping_cost.main(["--timesteps", "30000", "--repeats", "1", "--shapings", "none"]) == 0
    out = capsys.readouterr().out
    assert "fast-ppo, 38,400 steps a run (--timesteps 30,000 rounded up to whole updates of 12,800 steps)" in out
    assert shaping_cost.main(["--timesteps", "25600", "--repeats", "1", "--shapings", "none"]) == 0
    assert "fast-ppo, 25,600 steps a run, medians" in capsys.readouterr().out
    err = _usage_error(shaping_cost.main, ["--shapings", "none", "tables", "none"], capsys)
    assert "--shapings none tables none: expected each shaping once" in err


def test_step_breakdown_the_rest_is_the_whole_median_less_the_pieces_medians(monkeypatch, capsys):
    """The printed rows add up to the whole step: before, ``the rest`` was the median of each round's remainder, which
    is not the whole step's median less the pieces' medians."""
    breakdown = load("step_breakdown")
    pieces = ["policy (argmax over the masks)", "update (board, lines, observation)", "observation copy", "info dict",
              "dealing"]
    rounds = iter([[10, 70, 60, 2, 30, 290], [12, 76, 62, 2, 36, 280], [14, 80, 50, 3, 40, 300],
                   [11, 75, 61, 2, 35, 283]])  # the warm-up first; seconds * 1e9 per sub-env step * num_envs (1)

    def fake(num_envs, games, backend):
        *parts, whole = next(rounds)
        out = {name: ns * 1e-9 for name, ns in zip(pieces, parts, strict=True)}
        out["the rest (step's own Python, resets, checks)"] = (whole - sum(parts)) * 1e-9  # as the old measure did
        return {**out, "whole step": whole * 1e-9}

    monkeypatch.setattr(breakdown, "measure", fake)
    assert breakdown.main(["--num-envs", "1", "--repeats", "3", "--backend", "numpy"]) == 0
    rows = {line.split(" | ")[0][2:]: float(line.split(" | ")[1]) for line in capsys.readouterr().out.splitlines()
            if line.startswith("| ") and not line.startswith("| piece")}
    assert rows["whole step"] == 283.0  # the median of 280, 300 and 283; the pieces' medians: 12, 76, 61, 2, 36
    assert rows["the rest (step's own Python, resets, checks)"] == 283.0 - (12 + 76 + 61 + 2 + 36)  # not 99, the
    assert sum(rows.values()) == 2 * rows["whole step"]  # median of the rounds' remainders 92, 113 and 99


def _never(*args, **kwargs):
    raise AssertionError("ran before the options were checked")


def _theta_file(tmp_path) -> str:
    """A one-bin ``theta.json`` as ``pokersquares experiment tune-tables`` writes it (every multiplier 1)."""
    from agents.tuning import CLASS_NAMES

    path = tmp_path / "theta.json"
    path.write_text(json.dumps({name: {"row": [1.0], "column": [1.0]} for name in CLASS_NAMES}))
    return str(path)


@pytest.mark.parametrize(("script", "under"), [(name, under) for name in ("search_noisy", "search_ensemble",
                                                                          "td_search", "tune_ply2")
                                               for under in (False, True)] + [("td_tables", True)])
def test_out_is_checked_before_any_table_or_game(script, under, tmp_path, monkeypatch, capsys):
    """Before, an ``--out`` that is a file (or lies under one) was found only after every game had been played, the
    tables refined or the tuning run: NotADirectoryError or FileExistsError, the run lost."""
    pytest.importorskip("numba")
    import agents.evaluation
    import agents.tables
    import agents.tuning

    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(agents.evaluation, "evaluate", _never)
    monkeypatch.setattr(agents.tables, "load_or_train", _never)
    monkeypatch.setattr(agents.tuning, "tune_tables", _never)
    bench = load(script)
    blocker = tmp_path / "afile"
    blocker.write_text("not a folder")
    out = str(blocker / ("x.npz" if script == "td_tables" else "x") if under else blocker)
    if script == "td_tables":  # --out names the tables file (an existing file is replaced): only under a file
        monkeypatch.setattr(bench, "refine", _never)
        argv = ["--tables", _small_tables(tmp_path, 0), "--games", "2", "--batch", "2"]
    else:
        argv = {"search_noisy": ["--temps", "0", "--games", "1", "--options", "games=2000,phases=4", "--no-progress"],
                "search_ensemble": ["--games", "1", "--options", "games=2000,phases=4", "--no-progress"],
                "td_search": ["--agents", "expectimax:games=2000,phases=4", "--games", "1", "--no-progress"],
                "tune_ply2": ["--init", _theta_file(tmp_path), "--table-games", "2000"]}[script]
    err = _usage_error(bench.main, argv + ["--out", out], capsys)
    assert f"--out {out!r}" in err and ("is a file" in err or "cannot create" in err)
    assert blocker.read_text() == "not a folder"
    assert not (tmp_path / "cache").exists()  # no table made either


def test_search_ensemble_checks_its_counts_scoring_and_second_tables_before_playing(tmp_path, monkeypatch, capsys):
    """Before, ``--games 0``, ``--jobs 0``, ``--depth -1``, ``--rollouts 0``, ``--scoring foo`` and a missing
    ``--second`` file ended in tracebacks once the evaluation began."""
    pytest.importorskip("numba")
    import agents.evaluation

    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(agents.evaluation, "evaluate", _never)
    ens = load("search_ensemble")
    for flag, bad, low in (("--games", "0", 1), ("--jobs", "0", 1), ("--depth", "-1", 0), ("--rollouts", "0", 1),
                           ("--candidates", "0", 1)):
        assert f"argument {flag}: {bad}: expected an integer >= {low}" in _usage_error(ens.main, [flag, bad], capsys)
    args = ["--games", "1", "--options", f"tables={_small_tables(tmp_path, 0)}", "--no-progress"]
    assert ens.main(args + ["--scoring", "foo"]) == 2
    assert "'foo'" in capsys.readouterr().err
    missing = tmp_path / "nothere.npz"
    assert ens.main(args + ["--second", str(missing)]) == 2
    assert str(missing) in capsys.readouterr().err


def test_tune_ply2_checks_its_counts_before_the_tables_and_writes_strict_json(tmp_path, monkeypatch, capsys):
    """Before, ``--eval-games 0`` wrote bare NaN into result.json, ``--eval-games -3`` raised after the whole tuning
    and ``--table-games 0`` was silently replaced by the default."""
    pytest.importorskip("numba")
    import agents.tables

    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path / "cache"))
    tune = load("tune_ply2")
    theta = _theta_file(tmp_path)
    out = tmp_path / "tuned"
    with monkeypatch.context() as m:
        m.setattr(agents.tables, "load_or_train", _never)
        for flag, bad, low in (("--eval-games", "0", 2), ("--eval-games", "1", 2), ("--eval-games", "-3", 2),
                               ("--table-games", "0", 1)):
            err = _usage_error(tune.main, ["--init", theta, flag, bad, "--out", str(out)], capsys)
            assert f"argument {flag}: {bad}: expected an integer >= {low}" in err
    assert not out.exists()
    argv = ["--init", theta, "--generations", "1", "--population", "2", "--elite", "1", "--games", "4",
            "--eval-games", "2", "--table-games", "2000", "--out", str(out)]
    assert tune.main(argv) == 0

    def refuse(name):
        raise ValueError(f"bare {name} in result.json")

    result = json.loads((out / "result.json").read_text(), parse_constant=refuse)
    assert result["evaluation"]["games"] == 2 and result["args"]["table_games"] == 2000
    assert sorted(os.listdir(out)) == ["result.json", "tables.npz"]
    # a folder holding other files is refused before the tables: before, a user's tables.npz there was replaced
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "tables.npz").write_bytes(b"their tables")
    (theirs / "notes.txt").write_text("notes")
    with monkeypatch.context() as m:
        m.setattr(agents.tables, "load_or_train", _never)
        err = _usage_error(tune.main, argv[:-1] + [str(theirs)], capsys)
    assert "holds entries this script does not write (notes.txt)" in err
    assert (theirs / "tables.npz").read_bytes() == b"their tables"


def test_tune_ply2_without_numba_says_so_before_the_tables(tmp_path, monkeypatch, capsys):
    """Without numba the base tables trained (tens of seconds) before tune_tables raised; now a usage error first."""
    import agents.tables

    tune = load("tune_ply2")
    monkeypatch.setitem(sys.modules, "numba", None)  # an import of numba fails, as on an install without the extra
    monkeypatch.setattr(agents.tables, "load_or_train", _never)
    out = tmp_path / "tuned"
    err = _usage_error(tune.main, ["--init", _theta_file(tmp_path), "--out", str(out)], capsys)
    assert 'benchmarks/tune_ply2.py needs numba: pip install "pokersquares_env[fast]"' in err
    assert not out.exists()


def test_pair_runs_refuses_a_record_without_rules_or_point_system(tmp_path, capsys):
    """Before, a record lacking ``rules`` or ``point_system`` ended in a KeyError traceback."""
    from agents.evaluation import evaluate

    pair = load("pair_runs")
    evaluate(["random"], games=1, seed=3, out_dir=tmp_path / "a", progress=False)
    rec = json.loads((tmp_path / "a" / "games.jsonl").read_text().splitlines()[0])
    bad = tmp_path / "bad"
    bad.mkdir()
    for key in ("rules", "point_system"):
        (bad / "games.jsonl").write_text(json.dumps({k: v for k, v in rec.items() if k != key}) + "\n")
        assert pair.main([str(bad), "--agent", "random"]) == 2
        err = capsys.readouterr().err
        assert f"'{bad}' is not an evaluation run" in err and f"({key} is None:" in err


def test_td_search_prior_must_be_finite_and_options_not_bools():
    """Before, ``prior=inf`` was taken (every local table entry then NaN), and so were ``True`` and ``False``."""
    import math

    pytest.importorskip("numba")
    td = load("td_search")
    assert td._local_options(5, 0.1, 20, 22) == (5, 0.1, 20.0, 22)
    for args, match in (((5, 0.1, math.inf, 22), "prior=inf: expected a finite number > 0"),
                        ((5, 0.1, math.nan, 22), "prior=nan: expected a finite number > 0"),
                        ((5, 0.1, True, 22), "prior=True: expected"), ((5, True, 20, 22), "epsilon=True: expected")):
        with pytest.raises(ValueError, match=match):
            td._local_options(*args)


@pytest.mark.parametrize("value", ["none", "abc", "2.5", "26", "-1", "true"])
def test_td_search_names_a_bad_last_before_any_table(value, monkeypatch, capsys):
    """Before, ``last`` went through ``int()`` unchecked: ``last=none`` ended in a TypeError traceback, ``last=abc``
    in "invalid literal for int()" (not naming the option) and ``last=2.5`` was cut to 2."""
    pytest.importorskip("numba")
    td = load("td_search")
    monkeypatch.setattr("agents.tables.load_or_train", lambda *a, **k: pytest.fail("tables loaded"))
    for agent in ("td-search", "td-expectimax"):
        assert td.main(["--agents", f"{agent}:last={value}", "--games", "1", "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert re.search(r"last=\S+: expected an integer from 0 to 25", err) and err.count("\n") == 1, err


def test_device_agents_checks_every_run_name_and_jobs_before_running_any(tmp_path):
    """Before, each run name was checked as its turn came: ``english american amercan`` ran the first two (hours on
    the device) before refusing the third; a JOBS of 0 or ``x`` was passed on to every run."""
    import shutil
    import subprocess

    if shutil.which("bash") is None or shutil.which("timeout") is None:
        pytest.skip("needs bash and timeout")
    script = str(ROOT / "benchmarks" / "device_agents.sh")
    env = {**os.environ, "PYTHON": "true"}  # a run then plays nothing and succeeds
    out = tmp_path / "dev"
    for argv, expected in ((["1", "english", "american", "amercan"], "unknown run amercan: expected english, "
                                                                     "american or ply3"),
                           (["0", "english"], "JOBS 0: expected a positive integer"),
                           (["x2", "english"], "JOBS x2: expected a positive integer")):
        proc = subprocess.run(["bash", script, str(out), *argv], env=env, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and expected in proc.stderr, proc.stderr
        assert "rc=" not in proc.stdout and not out.exists()
    for var, value, expected in (("GAMES", "abc", "GAMES=abc: expected a positive integer"),
                                 ("LIMIT", "0", "LIMIT=0: expected a positive integer"),
                                 ("PACK", str(tmp_path / "nowhere"), "expected a folder that exists")):
        proc = subprocess.run(["bash", script, str(out), "1", "english"], env={**env, var: value},
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and expected in proc.stderr, proc.stderr
        assert not out.exists()
    proc = subprocess.run(["bash", script, str(out), "2", "american"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("american rc=0 "), proc.stdout + proc.stderr
    # a run that fails makes the script fail (before: exit 0 whatever the runs did)
    proc = subprocess.run(["bash", script, str(out), "2", "american", "english"], env={**env, "PYTHON": "false"},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "american rc=1 " in proc.stdout and "english rc=1 " in proc.stdout


def test_search_experiments_prints_the_t_interval_of_the_paired_difference(monkeypatch, capsys):
    """Before, the paired difference's interval was the normal one (1.96 standard errors), narrower than the t
    interval every other figure uses, most so on few deals."""
    import numpy as np

    from agents.stats import mean_ci95

    bench = load("search_experiments")
    base = np.array([100.0, 110.0, 90.0, 120.0])
    var = base + np.array([1.0, 2.0, 3.0, 4.0])
    monkeypatch.setattr(bench, "_scores", lambda spec, *args: (var, 0.5) if spec.startswith("probe") else (base, 0.25))
    assert bench.main(["--probe", "k=2", "--games", "4"]) == 0
    out = capsys.readouterr().out
    assert f"paired +2.50 +- {mean_ci95(var - base):.2f} |" in out and "+- 2.05 |" in out  # z: 1.27


def test_speed_refuses_seconds_that_are_not_finite_and_times_only_the_sync_steps(monkeypatch, capsys):
    """Before, ``--seconds nan`` / ``inf`` ended in tracebacks, and the SyncVectorEnv row timed ``env.close()``
    with the steps."""
    from types import SimpleNamespace

    import numpy as np

    speed = load("speed")
    for bad in ("nan", "inf", "0"):
        err = _usage_error(speed.main, ["--quick", "--seconds", bad], capsys)
        assert f"argument --seconds: {bad}: expected a finite number > 0" in err
    assert "argument --repeats: 0: expected an integer >= 1" in _usage_error(speed.main, ["--repeats", "0"], capsys)

    now = [0.0]

    class FakeVec:  # each step takes 1 s of the fake clock, closing 1000 s
        def reset(self, seed=None):
            return None, {"action_mask": np.ones((4, 25), dtype=np.int8)}

        def step(self, actions):
            now[0] += 1.0
            return None, None, None, None, {"action_mask": np.ones((4, 25), dtype=np.int8)}

        def close(self):
            now[0] += 1000.0

    monkeypatch.setattr(speed, "gym", SimpleNamespace(make_vec=lambda *args, **kwargs: FakeVec()))
    monkeypatch.setattr(speed, "time", SimpleNamespace(perf_counter=lambda: now[0]))
    assert speed.time_sync(4, 10) == 4.0  # 40 sub-env steps in 10 s, not in 1010 s


def test_memory_refuses_counts_and_a_tolerance_that_are_not_finite(capsys):
    """Before, ``--steps nan`` / ``--every inf`` ended in tracebacks and ``--tolerance nan`` never failed."""
    memory = load("memory")
    base = ["--num-envs", "64", "--steps", "640", "--every", "320", "--backend", "numpy"]
    for flag, bad, expected in (("--steps", "nan", "expected a finite number > 0"), ("--every", "inf", "expected a finite number > 0"),
                                ("--tolerance", "nan", "expected a finite number >= 0"),
                                ("--tolerance", "-1", "expected a finite number >= 0"),
                                ("--num-envs", "0", "expected an integer >= 1")):
        assert f"argument {flag}: {bad}: {expected}" in _usage_error(memory.main, base + [flag, bad], capsys)


def test_step_breakdown_counts_the_update_on_placing_steps_and_reports_a_missing_backend(monkeypatch, capsys):
    """``step`` updates the boards on 25 steps of a game's 26 (not on the reset step): before, the update piece was
    its time per placement, 1/25 too high per step; and ``--backend numba`` without numba was a raw ImportError."""
    from types import SimpleNamespace

    breakdown = load("step_breakdown")
    clock = iter(range(1_000_000))  # every reading one second after the last: each placement takes 1 s
    monkeypatch.setattr(breakdown, "time", SimpleNamespace(perf_counter=lambda: float(next(clock))))
    per_step = breakdown.measure(2, 1, "numpy")
    assert per_step["update (board, lines, observation)"] == pytest.approx(25 / 26 / 2)

    def no_numba(num_envs, backend="auto", **kwargs):
        raise ImportError("backend='numba' needs numba")

    monkeypatch.setattr(breakdown, "PokerSquaresVectorEnv", no_numba)
    assert "--backend numba: backend='numba' needs numba" in _usage_error(breakdown.main, ["--backend", "numba"],
                                                                          capsys)


def test_frontier_checks_out_before_the_table_and_reports_a_damaged_entry(tmp_path, capsys):
    """Before, ``--out x`` wrote x.png but printed "wrote x", ``--out x.txt`` or an --out under a file raised after
    the table was printed, and a summary entry with ``"games": null`` was a TypeError traceback."""
    pytest.importorskip("matplotlib")
    from agents.evaluation import evaluate

    frontier = load("frontier")
    run = tmp_path / "a"
    evaluate(["random"], games=2, seed=3, out_dir=run, progress=False)
    blocker = tmp_path / "afile"
    blocker.write_text("not a folder")
    for out, expected in ((tmp_path / "plot", "expected the path of a .png or .svg image"),
                          (tmp_path / "plot.txt", "expected the path of a .png or .svg image"),
                          (tmp_path, "is a folder"), (blocker / "plot.png", "cannot create its folder")):
        with pytest.raises(SystemExit) as exc:
            frontier.main([str(run), "--out", str(out)])
        captured = capsys.readouterr()
        assert exc.value.code == 2 and f"--out {str(out)!r}" in captured.err and expected in captured.err
        assert "| agent" not in captured.out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "afile"]
    out = tmp_path / "plots" / "frontier.SVG"
    assert frontier.main([str(run), "--out", str(out)]) == 0
    assert f"wrote {out}\n" in capsys.readouterr().out and out.stat().st_size > 0
    with pytest.raises(ValueError, match="expected the path of a .png or .svg image"):
        frontier.plot(frontier.load_run(str(run)), str(tmp_path / "plot"), "american")

    summary = json.loads((run / "summary.json").read_text())
    (run / "summary.json").write_text(json.dumps([{**summary[0], "games": None}]))
    assert frontier.main([str(run), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "summary.json', entry 0:" in err and "expected a number of games" in err


def test_shaping_cost_times_a_run_by_its_own_clock(tmp_path, monkeypatch):
    """Before, a run was timed from outside ``train()``, so each timed ``tables`` run paid for loading the tables."""
    import time
    from types import SimpleNamespace

    import agents.train

    shaping_cost = load("shaping_cost")
    calls = []

    def fake_train(**kwargs):
        calls.append(kwargs)
        time.sleep(0.05)  # loading the potential's tables: before the run's own clock starts
        return SimpleNamespace(seconds=1.25)

    monkeypatch.setattr(agents.train, "train", fake_train)
    assert shaping_cost.timed_run("tables", 1000, tmp_path / "run") == 1.25
    assert calls[0]["shaping"] == "tables" and calls[0]["timesteps"] == 1000


def test_residuals_refuses_bad_options_with_a_usage_error(tmp_path, monkeypatch, capsys):
    """Before, ``--scoring foo`` and ``--table-games 0`` ended in ValueError tracebacks and ``--mlp -2`` fitted
    nothing, silently."""
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path))
    residuals = load("residuals")
    base = ["--games", "10", "--table-games", "2000"]
    assert "--scoring 'foo': unknown point system" in _usage_error(residuals.main, base + ["--scoring", "foo"], capsys)
    for flag, bad, expected in (("--table-games", "0", "an integer >= 1"), ("--table-games", "-5", "an integer >= 1"),
                                ("--mlp", "-2", "an integer >= 0")):
        assert f"argument {flag}: {bad}: expected {expected}" in _usage_error(residuals.main, base + [flag, bad], capsys)
    assert not any(tmp_path.iterdir())  # no tables trained


def test_agents_benchmark_writes_strict_json(tmp_path, capsys):
    """Before, benchmark.json was written with a plain ``json.dump``: the NaN interval of a one-game run as bare
    ``NaN``, which strict JSON readers refuse."""
    bench = load("agents")
    out = tmp_path / "ag"
    assert bench.main(["--agent", "random", "--games", "1", "--systems", "english", "--no-progress",
                       "--out", str(out)]) == 0

    def refuse(name):
        raise ValueError(f"bare {name} in benchmark.json")

    data = json.loads((out / "benchmark.json").read_text(), parse_constant=refuse)
    row = data["rows"][0]
    assert (data["games"], row["agent"], row["system"], row["ci95"]) == (1, "random", "english", None)
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_td_search_runs_on_two_processes(tmp_path, capsys):
    """Before, ``--jobs 2`` always failed: the warm-up move in the parent started the local play's OpenMP threads,
    and the forked workers died at once ("fork() called from a process already using GNU OpenMP")."""
    import subprocess
    import sys

    pytest.importorskip("numba")
    env = {**os.environ, "POKERSQUARES_CACHE": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "td_search.py"), "--agents",
                           "expectimax:games=2000,phases=4", "td-expectimax:games=2000,phases=4,local=30",
                           "--games", "2", "--jobs", "2", "--no-progress"], env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "on 2 deals" in proc.stdout and "0 errors" in proc.stdout


def test_agents_benchmark_resumes_a_stopped_or_shorter_run_playing_only_the_rest(tmp_path, monkeypatch, capsys):
    import agents.evaluation as ev

    bench = load("agents")
    out = tmp_path / "bench"
    base = ["--agent", "greedy", "--systems", "american", "--jobs", "1", "--no-progress", "--out", str(out)]
    assert bench.main([*base, "--games", "4"]) == 0
    played = []
    real = ev.run_chunk
    monkeypatch.setattr(ev, "run_chunk", lambda spec, deals, config: played.extend(deals) or real(spec, deals, config))
    assert bench.main([*base, "--games", "6", "--resume"]) == 0
    assert played == [4, 5]
    games = [json.loads(line)["meta"]["deal"] for line in (out / "american" / "games.jsonl").read_text().splitlines()]
    assert games == list(range(6))
    (out / "american" / ev.JOURNAL).write_text("", encoding="utf-8")  # as a run stopped before its first chunk
    err = _usage_error(bench.main, [*base, "--games", "6"], capsys)
    assert "holds an unfinished evaluation: games.partial.jsonl with 0 finished games; expected --resume" in err
    assert "--resume needs --out DIR" in _usage_error(bench.main, ["--agent", "greedy", "--resume"], capsys)


def test_agents_benchmark_prints_n_a_for_what_one_game_cannot_give(capsys):
    """``benchmarks/agents.py --games 1``: the interval and the std of one game cannot be computed; the table said
    ``+-nan | nan`` (the harness's summary.md and benchmark.json say n/a and null)."""
    bench = load("agents")
    assert bench.main(["--agent", "greedy", "--games", "1", "--systems", "american", "--no-progress"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| greedy |")]
    assert len(rows) == 1 and "nan" not in rows[0] and rows[0].count("n/a") == 2, rows


def test_search_ensemble_prints_no_interval_and_no_negative_zero_for_one_tied_deal(tmp_path, monkeypatch, capsys):
    """``benchmarks/search_ensemble.py --games 1``: the paired difference's interval over one deal printed as
    ``+- nan``; and with weights 1,0,1,0 (search's very games) the zero difference printed as ``-0.00``."""
    pytest.importorskip("numba")
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path / "cache"))
    ens = load("search_ensemble")
    second = _small_tables(tmp_path, 1)
    assert ens.main(["--games", "1", "--rollouts", "8", "--depth", "2", "--options", "games=2000,phases=4",
                     "--second", second, "--weights", "1,0,1,0", "--no-progress"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("ensemble - search:"))
    assert "nan" not in line and "n/a" in line, line
    assert line.startswith("ensemble - search: +0.00 "), line


def test_search_noisy_prints_no_interval_for_one_deal(tmp_path, monkeypatch, capsys):
    """``benchmarks/search_noisy.py --games 1``: the paired difference's interval over one deal printed as
    ``+- nan``."""
    pytest.importorskip("numba")
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path / "cache"))
    noisy = load("search_noisy")
    assert noisy.main(["--temps", "0", "--games", "1", "--options", "games=2000,phases=4,rollouts=8",
                       "--no-progress"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if " - search: " in x)
    assert "nan" not in line and "n/a" in line and "on 1 common deals" in line, line


def test_td_search_prints_no_interval_for_one_deal(tmp_path, monkeypatch, capsys):
    """``benchmarks/td_search.py --games 1``: the paired difference's interval over one deal printed as
    ``+- nan``."""
    pytest.importorskip("numba")
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path / "cache"))
    td = load("td_search")
    assert td.main(["--agents", "expectimax:games=2000,phases=4", "td-expectimax:games=2000,phases=4,local=30",
                    "--games", "1", "--no-progress"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.endswith("on 1 deals"))
    assert "nan" not in line and "n/a" in line, line


@needs("tqdm")
def test_solver_benchmark_gives_no_spread_for_one_deal_and_no_mean_gain_without_a_re_solve(tmp_path, capsys):
    """``benchmarks/solver.py --deals 1``: the standard error of one deal's score cannot be computed, but the line
    said ``± 0.00`` (and the JSON 0.0); with ``--verify 0`` the mean gain of no re-solved deal said ``0.00``."""
    solver = load("solver")
    out = tmp_path / "s.json"
    solver.main(["--deals", "1", "--systems", "american", "--restarts", "1", "--rounds", "1", "--anneal-steps", "10",
                 "--verify", "0", "--out", str(out)])
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert "± 0.00" not in line and line.count("± n/a") == 2, line
    assert "on 0/0 deals (mean gain n/a)" in line, line
    result = json.loads(out.read_text())["results"][0]
    assert (result["solver_sem"], result["anneal_sem"], result["verify_mean_gain"]) == (None, None, None)


def test_frontier_labels_touch_neither_each_other_nor_the_other_points_error_bars(tmp_path, monkeypatch):
    """Before, each label went above or below its point by one rule, and in docs/images/frontier.png the labels of
    ``search`` and ``search:depth=8,candidates=8`` (0.58 and 0.59 s a game) touched, and ``search:depth=8``'s lay
    across the error bar of the point beside it.  The rows are those of that image."""
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    frontier = load("frontier")
    saved = []
    real_save = Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda self, path, **kw: (saved.append(self), real_save(self, path, **kw))[1])
    figures = [("rules", 110.22, 1.17, 0.0009), ("expectimax:ply=1", 121.39, 1.36, 0.0011),
               ("expectimax", 123.21, 1.35, 0.0054), ("expectimax:tuned=true", 123.79, 1.37, 0.0056),
               ("fastppo:runs/long_shaped", 118.16, 1.29, 0.0093), ("mc", 120.86, 1.39, 0.12),
               ("search:depth=8", 124.66, 1.36, 0.29), ("search", 124.57, 1.35, 0.57),
               ("search:depth=8,candidates=8", 125.00, 0.95, 0.58)]
    rows = [{"agent": a, "mean": m, "ci95": c, "seconds": t, "games": 2000, "seed": 2024} for a, m, c, t in figures]
    frontier.plot(rows, str(tmp_path / "frontier.png"), "american")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = saved[0]
    ax = fig.axes[0]
    renderer = FigureCanvasAgg(fig).get_renderer()
    boxes = {t.get_text(): t.get_window_extent(renderer) for t in ax.texts}
    assert sorted(boxes) == sorted(a for a, *_ in figures)
    names = list(boxes)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            assert not boxes[a].overlaps(boxes[b]), (a, b)
    for a, mean, ci, seconds in figures:  # a label lies across no other point's error bar
        (x0, y0), (_, y1) = ax.transData.transform([(seconds, mean - ci), (seconds, mean + ci)])
        for b, box in boxes.items():
            if b != a:
                assert not (box.x0 < x0 < box.x1 and box.y0 < y1 and y0 < box.y1), (b, "across the bar of", a)


SCRIPTS = sorted(p.stem for p in (ROOT / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("name", SCRIPTS)
def test_every_benchmark_runs_as_a_script_from_any_folder(name, tmp_path):
    """As the docs run them (``python benchmarks/NAME.py``): the script's folder then comes first on sys.path, where
    benchmarks/agents.py would hide the agents package. Before, solver.py failed so at import ("'agents' is not a
    package"), which the tests above, loading the modules by path, could not see."""
    import subprocess

    from helpers import skip_for_a_missing_extra

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / f"{name}.py"), "--help"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env=env)
    missing = re.search(r"ModuleNotFoundError: No module named '([\w.]+)'", proc.stderr)
    if proc.returncode and missing:
        skip_for_a_missing_extra(ModuleNotFoundError(name=missing.group(1)), f"benchmarks/{name}.py")
    assert proc.returncode == 0 and proc.stdout.startswith(f"usage: {name}.py"), proc.stderr


@pytest.mark.parametrize("value", ["nan", "inf", "abc"])
def test_frontier_refuses_a_min_mean_that_is_not_a_finite_number(value, tmp_path, capsys):
    """Before, ``--min-mean nan`` was taken: every agent was then "below" it, listed in the title and none drawn."""
    frontier = load("frontier")
    err = _usage_error(frontier.main, [str(tmp_path), "--min-mean", value, "--out", str(tmp_path / "f.png")], capsys)
    assert f"argument --min-mean: {value!r}: expected a finite number (points)" in err
    assert not (tmp_path / "f.png").exists()
