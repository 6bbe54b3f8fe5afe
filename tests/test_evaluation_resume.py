"""The evaluation journal and ``resume``: a stopped evaluation keeps its finished games and plays only the rest."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import agents.evaluation as ev
from agents.evaluation import JOURNAL, evaluate, evaluate_pps, register_backend
from helpers import sigterm_evaluate
from pokersquares_env.scoring import CATEGORY_KEYS

AGENTS = ["greedy", "rules"]


def _games(folder: Path) -> list[dict]:
    """games.jsonl without the seconds each game took (the only field that differs between runs)."""
    out = []
    for line in (folder / "games.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        record["meta"].pop("seconds")
        out.append(record)
    return out


def _stopping_backend(after: int, played: list):
    """A back end that runs ``after`` chunks through the local one, then stops as Ctrl-C would."""

    def run(tasks, *, jobs=1):
        for n, task in enumerate(tasks):
            if n == after:
                raise KeyboardInterrupt
            played.append((task[0], list(task[1])))
            yield ev.run_chunk(*task)

    return run


def _counting_backend(played: list):
    def run(tasks, *, jobs=1):
        for task in tasks:
            played.append((task[0], list(task[1])))
            yield ev.run_chunk(*task)

    return run


@pytest.fixture
def full(tmp_path):
    """An uninterrupted evaluation: 12 deals of seed 3, chunks of 4."""
    evaluate(AGENTS, games=12, seed=3, chunk_size=4, progress=False, out_dir=tmp_path / "full")
    return tmp_path / "full"


def test_a_stopped_evaluation_keeps_its_games_and_resume_plays_only_the_rest(tmp_path, full):
    played: list = []
    register_backend("stops", _stopping_backend(3, played))
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        evaluate(AGENTS, games=12, seed=3, chunk_size=4, progress=False, out_dir=out, backend="stops")
    assert sorted(os.listdir(out)) == [JOURNAL]  # no outputs yet: only the finished games
    assert len((out / JOURNAL).read_text(encoding="utf-8").splitlines()) == 12  # 3 chunks of 4
    assert played == [("greedy", [0, 1, 2, 3]), ("greedy", [4, 5, 6, 7]), ("greedy", [8, 9, 10, 11])]

    again: list = []
    register_backend("counts", _counting_backend(again))
    result = evaluate(AGENTS, games=12, seed=3, chunk_size=4, progress=False, out_dir=out, backend="counts",
                      resume=True)
    assert again == [("rules", [0, 1, 2, 3]), ("rules", [4, 5, 6, 7]), ("rules", [8, 9, 10, 11])]
    assert result.resumed == 12 and len(result.records) == 24
    assert _games(out) == _games(full)  # the same records as a run that never stopped
    assert not (out / JOURNAL).exists()  # removed once the outputs are written
    assert [r["mean"] for r in result.summary] == [r["mean"] for r in json.loads((full / "summary.json").read_text())]


def test_resume_adds_deals_and_agents_to_a_finished_evaluation(tmp_path, full):
    played: list = []
    register_backend("counts", _counting_backend(played))
    out = tmp_path / "grow"
    evaluate(["greedy"], games=12, seed=3, chunk_size=4, progress=False, out_dir=out)
    evaluate(AGENTS, games=12, seed=3, chunk_size=4, progress=False, out_dir=out, backend="counts", resume=True)
    assert {spec for spec, _ in played} == {"rules"}  # greedy's 12 games reused from games.jsonl
    assert _games(out) == _games(full)
    played.clear()
    result = evaluate(AGENTS, games=16, seed=3, chunk_size=4, progress=False, out_dir=out, backend="counts",
                      resume=True)
    assert played == [("greedy", [12, 13, 14, 15]), ("rules", [12, 13, 14, 15])]
    assert result.resumed == 24 and {r["deal"] for r in result.records} == set(range(16))


def test_games_that_raised_are_played_again_on_resume(tmp_path, monkeypatch):
    out = tmp_path / "err"
    real = ev.run_chunk

    def failing(spec, deals, config):  # deal 2 raises once
        records = real(spec, deals, config)
        return [ev._error_record(r["agent"], r["deal"], r["deck"], [], "boom", 0.0) if r["deal"] == 2 else r
                for r in records]

    register_backend("fails", lambda tasks, *, jobs=1: (failing(*t) for t in tasks))
    first = evaluate(["greedy"], games=4, seed=1, progress=False, out_dir=out, backend="fails")
    assert [e["deal"] for e in first.errors] == [2]
    played: list = []
    register_backend("counts", _counting_backend(played))
    second = evaluate(["greedy"], games=4, seed=1, progress=False, out_dir=out, backend="counts", resume=True)
    assert played == [("greedy", [2])] and not second.errors and second.resumed == 3


def test_a_folder_with_a_journal_is_refused_without_resume_and_left_as_it_is(tmp_path):
    out = tmp_path / "run"
    register_backend("stops", _stopping_backend(1, []))
    with pytest.raises(KeyboardInterrupt):
        evaluate(AGENTS, games=8, seed=3, chunk_size=4, progress=False, out_dir=out, backend="stops")
    before = (out / JOURNAL).read_bytes()
    with pytest.raises(ValueError, match=r"holds an unfinished evaluation: games\.partial\.jsonl with 4 finished "
                                         r"games; expected resume=True"):
        evaluate(AGENTS, games=8, seed=3, progress=False, out_dir=out)
    with pytest.raises(ValueError, match="unfinished evaluation"):
        evaluate_pps(AGENTS, systems=["american", "english"], games=2, progress=False, out_dir=out)
    with pytest.raises(ValueError, match=r"expected evaluate\(\.\.\., resume=True\), not evaluate_pps, to finish"):
        evaluate_pps(AGENTS, systems=["american", "english"], games=8, seed=3, progress=False, out_dir=out,
                     resume=True)  # a plain evaluation's journal: not finished by one over a set of systems
    with pytest.raises(ValueError, match="resume=True needs out_dir"):
        evaluate(AGENTS, games=2, progress=False, resume=True)
    with pytest.raises(ValueError, match="resume=True needs out_dir"):
        evaluate_pps(AGENTS, systems=["american"], games=2, progress=False, resume=True)
    assert (out / JOURNAL).read_bytes() == before and os.listdir(out) == [JOURNAL]


@pytest.mark.parametrize(("change", "match"), [
    ({"seed": 4}, r"was played with seed 3: expected seed 4"),
    ({"scoring": "english"}, r"was played for point system 'american'.*expected 'english'"),
    ({"rules": {"jokers": 2}}, r"was played under rules .*'jokers': 0.*expected .*'jokers': 2"),
    ({"agent_specs": ["greedy"]}, r"agent 'rules', deal 0\).*not a game of this evaluation"),
    ({"games": 6}, r"deal 6\).*not a game of this evaluation \(agents greedy, rules; deals 0-5\)"),
])
def test_resume_refuses_games_of_another_evaluation_and_changes_nothing(tmp_path, full, change, match, monkeypatch):
    built: list = []
    monkeypatch.setattr(ev, "_build_or_raise", lambda *a, **k: built.append(a))
    before = {p.name: p.read_bytes() for p in full.iterdir()}
    kwargs = {"agent_specs": AGENTS, "games": 12, "seed": 3, **change}
    with pytest.raises(ValueError, match=match):
        evaluate(kwargs.pop("agent_specs"), progress=False, out_dir=full, resume=True, **kwargs)
    assert not built  # refused before any agent was built (tables trained)
    assert {p.name: p.read_bytes() for p in full.iterdir()} == before


def test_a_journal_cut_short_by_a_kill_loses_only_its_last_line_and_other_damage_is_named(tmp_path, full):
    out = tmp_path / "cut"
    out.mkdir()
    lines = (full / "games.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)[:5]
    (out / JOURNAL).write_text("".join(lines[:4]) + lines[4][:100], encoding="utf-8")  # the fifth half written
    played: list = []
    register_backend("counts", _counting_backend(played))
    result = evaluate(["greedy"], games=12, seed=3, chunk_size=8, progress=False, out_dir=out, backend="counts",
                      resume=True)
    assert result.resumed == 4 and played == [("greedy", list(range(4, 12)))]

    bad = tmp_path / "bad"
    bad.mkdir()
    text = "".join(lines[:2]) + "{not json\n" + "".join(lines[3:5])
    (bad / JOURNAL).write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=r"games\.partial\.jsonl:3"):
        evaluate(["greedy"], games=12, seed=3, progress=False, out_dir=bad, resume=True)
    assert (bad / JOURNAL).read_text(encoding="utf-8") == text


def test_a_deck_that_is_not_its_deals_is_refused(tmp_path, full):
    out = tmp_path / "deck"
    out.mkdir()
    first, second = (json.loads(line) for line in (full / "games.jsonl").read_text().splitlines()[:2])
    first["meta"]["deal"] = 1  # deal 0's game filed as deal 1
    (out / JOURNAL).write_text(json.dumps(first) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"deal 1\): its deck is not deal 1's of seed 3"):
        evaluate(["greedy"], games=12, seed=3, progress=False, out_dir=out, resume=True)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pokersquares_env.cli", "evaluate", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(
                              Path(__file__).resolve().parents[1])})


def test_the_command_killed_mid_run_then_resumed_gives_the_uninterrupted_games(tmp_path, full):
    """The real case: a run stopped from outside (a time limit's SIGTERM), then the same command with --resume."""
    common = ["--agent", "greedy", "--agent", "rules", "--seed", "3", "--chunk-size", "1", "--no-progress",
              "--out", "run"]
    journal = tmp_path / "run" / JOURNAL
    returncode, err = sigterm_evaluate([*common, "--games", "400"], tmp_path, journal, wait_s=120, exit_s=60)
    assert returncode != 0, "the run ended before it could be stopped"
    kept = journal.read_bytes().count(b"\n")
    assert 5 <= kept < 800 and not (tmp_path / "run" / "games.jsonl").exists()
    # SIGTERM stops the command as Ctrl-C does: it says how many games it kept and where, and exits 128 + 15
    assert returncode == 143, err
    assert err == (f"pokersquares evaluate: terminated (SIGTERM); the {kept} finished games are kept "
                                    f"in {os.path.join('run', JOURNAL)}: the same command with --resume plays only "
                                    f"the rest\n")

    refused = _cli(*common, "--games", "12", cwd=tmp_path)
    assert refused.returncode == 2
    assert f"--out 'run' holds an unfinished evaluation: {JOURNAL} with {kept} finished games; expected --resume" \
        in refused.stderr
    # the same deals as `full`, fewer of them: only the kept games of the first 12 deals count
    (tmp_path / "run" / JOURNAL).write_text(
        "".join(line for line in journal.read_text(encoding="utf-8").splitlines(keepends=True)
                if json.loads(line)["meta"]["deal"] < 12), encoding="utf-8")
    reused = (tmp_path / "run" / JOURNAL).read_bytes().count(b"\n")
    done = _cli(*common, "--games", "12", "--resume", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"resumed: {reused} of 24 games reused from run, {24 - reused} played" in done.stderr
    assert _games(tmp_path / "run") == _games(full)


@pytest.mark.skipif(os.name == "nt", reason="POSIX signals (SIGTERM from another process ends a Windows process)")
def test_sigterm_is_turned_into_a_stop_only_while_the_command_plays_and_pool_workers_take_the_default(monkeypatch):
    """The command's SIGTERM handler raises Terminated (a KeyboardInterrupt, so Ctrl-C's clean-up runs) while it
    plays, and the handler before is put back after; a forked pool worker resets SIGTERM to the default, so that
    stopping the workers (SIGTERM) still ends them."""
    from agents.evaluate import Terminated, _sigterm_stops_like_ctrl_c
    from agents.evaluation import _one_thread_each

    def mine(signum, frame):
        raise AssertionError("the earlier handler ran")

    # _one_thread_each also sets one torch thread, or the thread variables without torch: kept to this test
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setenv("OMP_NUM_THREADS", "4")
    monkeypatch.setenv("MKL_NUM_THREADS", "4")
    before = signal.signal(signal.SIGTERM, mine)
    try:
        with pytest.raises(Terminated), _sigterm_stops_like_ctrl_c():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler raises at once, not after this
        assert issubclass(Terminated, KeyboardInterrupt) and signal.getsignal(signal.SIGTERM) is mine
        _one_thread_each()
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
        # a SIGTERM the command's starter ignores stays ignored
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        with _sigterm_stops_like_ctrl_c():
            assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGTERM)
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
        signal.signal(signal.SIGTERM, mine)
        # a forked child that gets SIGTERM before resetting the handler ends as by default, not with Terminated
        with _sigterm_stops_like_ctrl_c():
            child = os.fork()
            if child == 0:  # pragma: no cover - the child
                try:
                    os.kill(os.getpid(), signal.SIGTERM)
                    time.sleep(5)
                finally:
                    os._exit(3)  # reached only if SIGTERM did not end it (Terminated raised, or nothing)
            _, status = os.waitpid(child, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM
    finally:
        signal.signal(signal.SIGTERM, before)


def test_a_folder_that_cannot_be_made_is_named_as_the_option(tmp_path, monkeypatch, capsys):
    """A --out whose folder cannot be created when the games start is named as the command's option (the Python
    API names its parameter out_dir), and the command exits 2 without a traceback."""
    from agents.evaluation import OutDirError, prepare_out_dir
    from pokersquares_env.cli import main

    def refuse(path, exist_ok=False):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "makedirs", refuse)
    with pytest.raises(OutDirError, match=r"^out_dir='.*new': cannot create it \(Permission denied\)$") as err:
        prepare_out_dir(tmp_path / "new")
    assert (err.value.path, err.value.problem) == (str(tmp_path / "new"), "cannot create it (Permission denied)")
    assert main(["evaluate", "--agent", "greedy", "--games", "1", "--no-progress", "--out",
                 str(tmp_path / "new")]) == 2
    assert capsys.readouterr().err == (f"pokersquares evaluate: --out {str(tmp_path / 'new')!r}: cannot create it "
                                       f"(Permission denied)\n")


def test_a_point_systems_folder_that_cannot_be_made_is_named_with_the_games_kept(tmp_path, monkeypatch, capsys):
    """--pps: a system's folder inside --out that cannot be made (a name too long for the file system) was blamed on
    --out itself, and the games of the systems before it went unmentioned."""
    from pokersquares_env.cli import main

    real = os.makedirs

    def refuse_english(path, exist_ok=False):
        if os.path.basename(os.fspath(path)) == "english":
            raise OSError(36, "File name too long")
        return real(path, exist_ok=exist_ok)

    monkeypatch.setattr(os, "makedirs", refuse_english)
    out = str(tmp_path / "run")
    assert main(["evaluate", "--agent", "greedy", "--games", "2", "--pps", "american,english", "--no-progress",
                 "--out", out]) == 2
    assert capsys.readouterr().err == (
        f"pokersquares evaluate: --out {out!r}: the folder {os.path.join(out, 'english')!r} in it: cannot create it "
        f"(File name too long); the 2 finished games are kept in {os.path.join(out, 'american', JOURNAL)}: the same "
        f"command with --resume plays only the rest\n")


def test_the_command_says_where_the_games_are_kept_when_interrupted(tmp_path, monkeypatch, capsys):
    from pokersquares_env.cli import main

    register_backend("stops", _stopping_backend(2, []))
    rc = main(["evaluate", "--agent", "greedy", "--games", "8", "--chunk-size", "2", "--no-progress", "--backend",
               "stops", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert rc == 130
    assert f"interrupted; the 4 finished games are kept in {tmp_path / 'run' / JOURNAL}: the same command with " \
           f"--resume plays only the rest" in err
    assert main(["evaluate", "--agent", "greedy", "--games", "2", "--resume"]) == 2
    assert "--resume needs --out DIR" in capsys.readouterr().err
    assert main(["evaluate", "--agent", "greedy", "--games", "8", "--chunk-size", "2", "--pps", "american,english",
                 "--resume", "--no-progress", "--out", str(tmp_path / "run")]) == 2
    assert "expected evaluate --resume without --pps to finish it" in capsys.readouterr().err




def test_a_journal_copy_left_half_written_by_a_kill_does_not_block_the_folder(tmp_path, full):
    """Resuming writes the reused games to games.partial.jsonl.tmp and renames it; a kill in between leaves that
    file beside the journal of a run that never wrote its outputs (no evaluation.json): it must not make the folder
    one of "entries no evaluation writes" for the next run."""
    from pokersquares_env.cli import main

    out = tmp_path / "run"
    out.mkdir()
    lines = (full / "games.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (out / JOURNAL).write_text("".join(lines[:3]), encoding="utf-8")
    (out / (JOURNAL + ".tmp")).write_text(lines[0][:50], encoding="utf-8")
    assert main(["evaluate", "--agent", "greedy", "--agent", "rules", "--games", "12", "--seed", "3", "--resume",
                 "--no-progress", "--out", str(out)]) == 0
    assert not (out / (JOURNAL + ".tmp")).exists() and not (out / JOURNAL).exists()
    assert _games(out) == _games(full)


# --------------------------------------------------------------------------- over a set of point systems (--pps)

SYSTEMS = ["american", "english"]


def _stopping_after(chunks: int, played: list):
    """A back end that runs ``chunks`` chunks in all (over every system's evaluation), then stops as Ctrl-C would."""

    def run(tasks, *, jobs=1):
        for task in tasks:
            if len(played) == chunks:
                raise KeyboardInterrupt
            played.append((task[2]["scoring"]["name"], task[0], list(task[1])))
            yield ev.run_chunk(*task)

    return run


def _pps_games(folder: Path) -> dict[str, list[dict]]:
    return {s: _games(folder / s) for s in SYSTEMS}


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def pps_full(tmp_path):
    """An uninterrupted evaluation over American and English: 6 deals of seed 3, chunks of 3."""
    evaluate_pps(AGENTS, systems=SYSTEMS, games=6, seed=3, chunk_size=3, progress=False, out_dir=tmp_path / "pfull")
    return tmp_path / "pfull"


@pytest.fixture
def pps_stopped(tmp_path):
    """The same evaluation stopped after 5 chunks: American's 4 and English's first."""
    played: list = []
    register_backend("stops", _stopping_after(5, played))
    out = tmp_path / "prun"
    with pytest.raises(KeyboardInterrupt):
        evaluate_pps(AGENTS, systems=SYSTEMS, games=6, seed=3, chunk_size=3, progress=False, out_dir=out,
                     backend="stops")
    assert played[-1] == ("english", "greedy", [0, 1, 2])
    return out


def test_a_stopped_pps_evaluation_keeps_each_systems_games_and_resume_plays_only_the_rest(pps_stopped, pps_full):
    out = pps_stopped
    # no outputs yet: each system's finished games, in its folder, and the marker naming the set under way
    assert sorted(os.listdir(out)) == ["american", "english", "evaluation.json"]
    assert json.loads((out / "evaluation.json").read_text())["systems"] == SYSTEMS
    assert [len((out / s / JOURNAL).read_text(encoding="utf-8").splitlines()) for s in SYSTEMS] == [12, 3]
    assert os.listdir(out / "english") == [JOURNAL]

    played: list = []
    register_backend("counts", _counting_backend(played))
    result = evaluate_pps(AGENTS, systems=SYSTEMS, games=6, seed=3, chunk_size=3, progress=False, out_dir=out,
                          backend="counts", resume=True)
    assert played == [("greedy", [3, 4, 5]), ("rules", [0, 1, 2]), ("rules", [3, 4, 5])]  # English's rest only
    assert result.resumed == 15 and [r.resumed for r in result.results.values()] == [12, 3]
    assert _pps_games(out) == _pps_games(pps_full)  # the records of a run that never stopped
    assert not list(out.rglob(JOURNAL))  # removed once the outputs are written

    def figures(folder):
        rows = json.loads((folder / "pps.json").read_text())["systems"]
        return [{k: v for k, v in r.items() if k != "seconds_per_game"} for r in rows]

    assert figures(out) == figures(pps_full)
    # resuming a finished run adds deals: only the new ones are played, under every system
    played.clear()
    grown = evaluate_pps(AGENTS, systems=SYSTEMS, games=7, seed=3, chunk_size=3, progress=False, out_dir=out,
                         backend="counts", resume=True)
    assert played == [("greedy", [6]), ("rules", [6])] * 2 and grown.resumed == 24


def test_a_stopped_pps_folder_is_refused_without_resume_and_by_a_plain_evaluate(pps_stopped):
    out = pps_stopped
    before = _files(out)
    with pytest.raises(ValueError, match=r"holds an unfinished evaluation over point systems american, english: "
                                         r"american/games\.partial\.jsonl, english/games\.partial\.jsonl with 15 "
                                         r"finished games; expected evaluate_pps\(\.\.\., resume=True\) with those "
                                         r"systems"):
        evaluate_pps(AGENTS, systems=SYSTEMS, games=6, seed=3, progress=False, out_dir=out)
    for resume in (False, True):  # a plain evaluation can neither overwrite nor finish them
        with pytest.raises(ValueError, match="unfinished evaluation over point systems american, english"):
            evaluate(AGENTS, games=6, seed=3, progress=False, out_dir=out, resume=resume)
    assert _files(out) == before


@pytest.mark.parametrize(("change", "match"), [
    ({"systems": ["american"]}, r"holds an evaluation over point systems american, english: english not asked for "
                                r"\(systems american\)"),
    ({"seed": 4}, r"american/games\.partial\.jsonl: record 1 .*was played with seed 3: expected seed 4"),
    ({"systems": [*SYSTEMS, {"name": "flat", "points": dict.fromkeys(CATEGORY_KEYS, 1)}]}, None),  # one added: played
    ({"rules": {"jokers": 1}}, r"was played under rules"),
])
def test_pps_resume_refuses_games_of_another_evaluation_before_building_anything(pps_stopped, change, match,
                                                                               monkeypatch):
    out = pps_stopped
    before = _files(out)
    built: list = []
    real = ev._build_or_raise
    monkeypatch.setattr(ev, "_build_or_raise", lambda *a, **k: (built.append(a[0]), real(*a, **k))[1])
    options = {"systems": SYSTEMS, "games": 6, "seed": 3, "chunk_size": 3, **change}
    if match is None:
        result = evaluate_pps(AGENTS, progress=False, out_dir=out, resume=True, **options)
        assert result.resumed == 15 and (out / "flat" / "games.jsonl").is_file() and not list(out.rglob(JOURNAL))
        return
    with pytest.raises(ValueError, match=match):
        evaluate_pps(AGENTS, progress=False, out_dir=out, resume=True, **options)
    assert not built and _files(out) == before  # refused before any agent was built; nothing changed


def test_pps_resume_refuses_a_folder_of_a_plain_evaluation_and_the_other_way_round(tmp_path, full, pps_full):
    before = _files(full)
    with pytest.raises(ValueError, match=r"holds the games\.jsonl of an evaluation under one point system"):
        evaluate_pps(AGENTS, systems=SYSTEMS, games=12, seed=3, progress=False, out_dir=full, resume=True)
    assert _files(full) == before
    before = _files(pps_full)  # a plain resume would find no games at the top, and its outputs would remove these
    with pytest.raises(ValueError, match=r"holds an evaluation over a set of point systems \(american, english\): "
                                         r"resuming an evaluation under one point system cannot add to it; expected "
                                         r"evaluate_pps\(\.\.\., resume=True\) with them"):
        evaluate(AGENTS, games=6, seed=3, progress=False, out_dir=pps_full, resume=True)
    assert _files(pps_full) == before


def test_the_command_stopped_over_a_set_of_systems_says_where_and_resumes(pps_stopped, pps_full, capsys):
    from pokersquares_env.cli import main

    out = pps_stopped.parent / "cli"
    register_backend("stops", _stopping_after(5, []))
    common = ["evaluate", "--agent", "greedy", "--agent", "rules", "--games", "6", "--seed", "3", "--chunk-size", "3",
              "--pps", "american,english", "--no-progress", "--out", str(out)]
    assert main([*common, "--backend", "stops"]) == 130
    assert f"interrupted; the 15 finished games are kept in {JOURNAL} of 2 point systems' folders in {out}: the " \
           f"same command with --resume plays only the rest" in capsys.readouterr().err
    assert main(common) == 2
    assert "expected --pps american,english (the same set) with --resume to finish it" in capsys.readouterr().err
    assert main([*common, "--resume"]) == 0
    assert "resumed: 15 of 24 games reused" in capsys.readouterr().err
    assert _pps_games(out) == _pps_games(pps_full)


def test_a_rerun_that_stops_leaves_only_its_own_games_to_resume(tmp_path, full):
    """A run without resume into an earlier evaluation's folder replaces its outputs: they go before the first game,
    so a stop leaves this run's journal alone, and resuming it is not refused for the earlier run's games."""
    out = tmp_path / "again"
    evaluate(["random"], games=4, seed=3, progress=False, out_dir=out)
    register_backend("stops", _stopping_backend(1, []))
    with pytest.raises(KeyboardInterrupt):
        evaluate(AGENTS, games=12, seed=3, chunk_size=4, progress=False, out_dir=out, backend="stops")
    assert sorted(os.listdir(out)) == [JOURNAL]
    evaluate(AGENTS, games=12, seed=3, chunk_size=4, progress=False, out_dir=out, resume=True)
    assert _games(out) == _games(full)


def test_a_stopped_pps_folder_whose_journals_are_removed_as_advised_takes_a_new_run(pps_stopped, pps_full):
    """The command refuses folders holding entries no evaluation writes; the empty system folders left by removing
    the journals are not such entries, as the folder's evaluation.json lists them."""
    from pokersquares_env.cli import main

    out = pps_stopped
    for system in SYSTEMS:  # "remove those files (and their folders) to start again": the files only, here
        (out / system / JOURNAL).unlink()
    assert main(["evaluate", "--agent", "greedy", "--agent", "rules", "--games", "6", "--seed", "3", "--chunk-size",
                 "3", "--pps", "american,english", "--no-progress", "--out", str(out)]) == 0
    assert _pps_games(out) == _pps_games(pps_full)


def test_journals_in_sub_folders_no_pps_run_lists_are_named_without_claiming_a_pps_run(tmp_path, capsys):
    """benchmarks/agents.py runs a plain evaluation per system folder: a stop there is not a --pps run's."""
    from pokersquares_env.cli import main

    out = tmp_path / "bench"
    register_backend("stops", _stopping_backend(1, []))
    with pytest.raises(KeyboardInterrupt):
        evaluate(AGENTS, games=8, seed=3, chunk_size=4, progress=False, out_dir=out / "english", backend="stops")
    for extra in ([], ["--resume"], ["--pps"]):
        assert main(["evaluate", "--agent", "greedy", "--games", "8", "--no-progress", "--out", str(out), *extra]) == 2
        err = capsys.readouterr().err
        assert (f"--out {str(out)!r} holds unfinished evaluations in its sub-folders: english/{JOURNAL} with 4 "
                f"finished games; expected the command that started them, with --resume, to finish them") in err
        assert "remove that file (and its folder) to start again" in err


def test_the_command_names_out_when_resuming_the_other_kind_of_evaluation(full, pps_full, capsys):
    from pokersquares_env.cli import main

    common = ["evaluate", "--agent", "greedy", "--agent", "rules", "--games", "12", "--seed", "3", "--no-progress",
              "--resume"]
    assert main([*common, "--out", str(pps_full)]) == 2
    assert (f"--out {str(pps_full)!r} holds an evaluation over a set of point systems (american, english): resuming "
            f"an evaluation under one point system cannot add to it; expected --pps american,english with --resume"
            ) in capsys.readouterr().err
    assert main([*common, "--pps", "american,english", "--out", str(full)]) == 2
    assert f"--out {str(full)!r} holds the games.jsonl of an evaluation under one point system" in \
        capsys.readouterr().err


# --------------------------------------------------------------------------- what the command says when it stops


def _losing_backend(after: int):
    """A back end that runs ``after`` chunks through the local one, then loses its worker."""

    def run(tasks, *, jobs=1):
        for n, task in enumerate(tasks):
            if n == after:
                raise ev.WorkerLostError("a worker process died")
            yield ev.run_chunk(*task)

    return run


def test_the_command_says_where_the_games_are_kept_when_a_worker_is_lost(tmp_path, capsys):
    from pokersquares_env.cli import main

    register_backend("loses", _losing_backend(2))
    out = tmp_path / "run"
    assert main(["evaluate", "--agent", "greedy", "--games", "8", "--chunk-size", "2", "--no-progress", "--backend",
                 "loses", "--out", str(out)]) == 1
    assert capsys.readouterr().err == (f"pokersquares evaluate: error: a worker process died; the 4 finished games are "
                                       f"kept in {out / JOURNAL}: the same command with --resume plays only the rest\n")


def test_the_command_interrupted_without_out_says_only_interrupted(capsys):
    from pokersquares_env.cli import main

    register_backend("stops", _stopping_backend(1, []))
    assert main(["evaluate", "--agent", "greedy", "--games", "4", "--chunk-size", "2", "--no-progress", "--backend",
                 "stops"]) == 130
    assert capsys.readouterr().err == "interrupted\n"  # no games kept: nothing to resume


def _interrupted(system=None, rules=None, seed=None):
    raise KeyboardInterrupt  # Ctrl-C while the agent is built (tables trained): before any game or journal


@pytest.mark.parametrize("pps", [[], ["--pps", "american,english"]], ids=["plain", "pps"])
def test_the_command_interrupted_before_its_first_game_names_no_games(pps, tmp_path, monkeypatch, capsys):
    """Before any journal is written (here, into the folder of an earlier run), there is nothing to resume."""
    import agents.registry as registry
    from pokersquares_env.cli import main

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    registry.register_agent("ctrl-c", _interrupted, kind="params")
    out = tmp_path / "run"
    out.mkdir()
    assert main(["evaluate", "--agent", "ctrl-c", "--games", "2", "--no-progress", "--out", str(out), *pps]) == 130
    assert capsys.readouterr().err == "interrupted\n"
    assert os.listdir(out) == []


def test_the_command_stopped_in_its_first_point_system_names_that_systems_journal(tmp_path, capsys):
    from pokersquares_env.cli import main

    register_backend("stops", _stopping_after(1, []))
    out = tmp_path / "cli"
    assert main(["evaluate", "--agent", "greedy", "--games", "6", "--seed", "3", "--chunk-size", "3", "--pps",
                 "american,english", "--no-progress", "--out", str(out), "--backend", "stops"]) == 130
    assert capsys.readouterr().err == (f"pokersquares evaluate: interrupted; the 3 finished games are kept in "
                                       f"{out / 'american' / JOURNAL}: the same command with --resume plays only the "
                                       f"rest\n")  # one line, as after SIGTERM (before: a second "interrupted")


def test_the_command_stopped_with_games_kept_says_so_in_one_line(tmp_path, capsys):
    """Ctrl-C after some games: one line naming the journal, exit 130, as SIGTERM's one line (before: the line, then
    the command line's own "interrupted")."""
    from pokersquares_env.cli import main

    register_backend("stops", _stopping_after(1, []))
    out = tmp_path / "plain"
    assert main(["evaluate", "--agent", "greedy", "--games", "6", "--seed", "3", "--chunk-size", "3", "--no-progress",
                 "--out", str(out), "--backend", "stops"]) == 130
    assert capsys.readouterr().err == (f"pokersquares evaluate: interrupted; the 3 finished games are kept in "
                                       f"{out / JOURNAL}: the same command with --resume plays only the rest\n")


@pytest.mark.parametrize("damage", ['{"format": "pokersq', "[]"])
def test_a_damaged_marker_is_named_as_damaged_not_as_missing(tmp_path, capsys, damage):
    """An audit found a folder whose evaluation.json was cut short refused with "has no evaluation.json and holds
    entries no evaluation writes (evaluation.json)": the file is there, and what is wrong with it goes unsaid."""
    from pokersquares_env.cli import main

    out = tmp_path / "ev"
    assert main(["evaluate", "--agent", "random", "--games", "2", "--out", str(out), "--no-progress"]) == 0
    (out / "evaluation.json").write_text(damage)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    capsys.readouterr()
    status = main(["evaluate", "--agent", "random", "--games", "2", "--out", str(out), "--resume", "--no-progress"])
    err = capsys.readouterr().err
    assert status == 2 and "evaluation.json" in err
    assert "has no evaluation.json" not in err, err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


class _Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs."""


def test_a_kill_while_the_outputs_are_written_resumes_from_the_journal(tmp_path, full, monkeypatch):
    """The journal is removed only once every output is written, so a kill while EvaluationResult.save writes
    games.jsonl (plainly, in place) leaves the whole journal beside a games.jsonl cut mid-line.  The folder holds
    every game; the command without --resume refuses it ("expected --resume to finish it"), but --resume refuses
    the cut games.jsonl as a damaged record ("not valid JSON"), so neither command finishes the run.  --resume
    should finish it from the journal (a games.jsonl whose save was cut short is the evaluation's own, not data)."""
    real_save = ev.EvaluationResult.save

    def save_killed_in_games_jsonl(self, out_dir, **kwargs):
        real_save(self, out_dir, **kwargs)
        # what a kill while writing games.jsonl leaves: the marker, and games.jsonl cut short; nothing after it
        path = Path(out_dir) / "games.jsonl"
        text = path.read_bytes()
        path.write_bytes(text[: len(text) // 2])
        for name in (*ev.RESULT_FILES[1:], *ev.PLOT_FILES):
            (Path(out_dir) / name).unlink(missing_ok=True)
        raise _Killed

    out = tmp_path / "run"
    monkeypatch.setattr(ev.EvaluationResult, "save", save_killed_in_games_jsonl)
    with pytest.raises(_Killed):
        evaluate(AGENTS, games=12, seed=3, chunk_size=4, progress=False, out_dir=out)
    monkeypatch.setattr(ev.EvaluationResult, "save", real_save)
    assert len((out / JOURNAL).read_text(encoding="utf-8").splitlines()) == 24  # every game is kept
    assert not (out / "games.jsonl").read_bytes().endswith(b"\n")

    result = evaluate(AGENTS, games=12, seed=3, chunk_size=4, progress=False, out_dir=out, resume=True)
    assert result.resumed == 24
    assert _games(out) == _games(full) and not (out / JOURNAL).exists()


def _ctrl_c_while_the_marker_is_written(monkeypatch, nth: int = 1):
    """Ctrl-C (a time limit's SIGTERM, a kill) arriving while evaluation.json is written: ``_write_marker`` opens the
    file (truncating it) before it computes the text, so a stop there leaves the marker empty.  Raised on the
    ``nth`` marker written."""
    real = ev._jsonable
    seen = []

    def jsonable(x):
        if isinstance(x, dict) and x.get("format") == ev.MARKER_FORMAT and "version" in x:
            seen.append(1)
            if len(seen) == nth:
                raise KeyboardInterrupt
        return real(x)

    monkeypatch.setattr(ev, "_jsonable", jsonable)


def test_ctrl_c_while_the_outputs_start_to_be_written_leaves_a_folder_resume_finishes(tmp_path, full, monkeypatch,
                                                                                        capsys):
    """Every game is played and kept in the journal; the stop comes as the outputs are written, in the marker
    (evaluation.json, written first, in place).  The command says the games are kept and that --resume plays only
    the rest, but --resume then refuses the folder: its empty evaluation.json is 'damaged or not an evaluation's'."""
    from pokersquares_env.cli import main

    out = tmp_path / "run"
    common = ["evaluate", "--agent", "greedy", "--agent", "rules", "--games", "12", "--seed", "3", "--chunk-size", "4",
              "--no-progress", "--out", str(out)]
    _ctrl_c_while_the_marker_is_written(monkeypatch)
    assert main(common) == 130
    assert "the 24 finished games are kept" in capsys.readouterr().err
    monkeypatch.undo()
    assert main([*common, "--resume"]) == 0, capsys.readouterr().err
    assert _games(out) == _games(full) and not (out / JOURNAL).exists()


def test_ctrl_c_while_a_pps_run_writes_its_outputs_leaves_a_folder_resume_finishes(tmp_path, pps_full, monkeypatch,
                                                                                    capsys):
    """The same over a set of point systems: the stop comes as the top evaluation.json is written again with the
    outputs (its second marker), every system's games in its journal; --resume refuses the folder."""
    from pokersquares_env.cli import main

    out = tmp_path / "prun"
    common = ["evaluate", "--agent", "greedy", "--agent", "rules", "--games", "6", "--seed", "3", "--chunk-size", "3",
              "--pps", "american,english", "--no-progress", "--out", str(out)]
    _ctrl_c_while_the_marker_is_written(monkeypatch, nth=2)  # the first is written before any game
    assert main(common) == 130
    assert "the 24 finished games are kept" in capsys.readouterr().err
    monkeypatch.undo()
    assert main([*common, "--resume"]) == 0, capsys.readouterr().err
    assert _pps_games(out) == _pps_games(pps_full) and not list(out.rglob(JOURNAL))
