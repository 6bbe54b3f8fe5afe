"""Ray back end of the evaluation harness and Ray Tune sweeps (need the ``distributed`` extra).

One embedded Ray (2 CPUs) serves the whole module; budgets are tiny so the module stays fast on 2 shared cores.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import re
import signal
import sys
import time
from pathlib import Path

import pytest

from agents.evaluation import evaluate
from helpers import needs

HAVE_RAY = importlib.util.find_spec("ray") is not None and importlib.util.find_spec("ray.tune") is not None
requires_ray = pytest.mark.skipif(
    not HAVE_RAY,
    reason='Ray / Ray Tune are not installed: these tests need the distributed extra, '
           'pip install "pokersquares_env[distributed]"',
)

CRASH_MARKER_ENV = "POKERSQUARES_TEST_CRASH_DIR"


# --------------------------------------------------------------------------- a worker that dies once


def _crash_once_agent(system=None, rules=None, seed=None, after: int = 2):
    """Greedy play, but the process dies (hard, like a lost node) at its ``after+1``-th game, once per marker dir."""
    from agents.simple import GreedyAgent

    class CrashOnce(GreedyAgent):
        name = "crash-once"

        def __init__(self, **kw):
            super().__init__(**kw)
            self.games = 0

        def reset(self):
            super().reset()
            self.games += 1
            marker = os.path.join(os.environ[CRASH_MARKER_ENV], "crashed")
            if self.games > after and not os.path.exists(marker):
                open(marker, "w").close()
                # The records already yielded reach the driver asynchronously; a pause lets them arrive (a record
                # still in flight when a worker dies is lost with it and its deal is replayed, see the test).
                time.sleep(1.0)
                os._exit(1)

        def act(self, obs, info, game, state):
            if state.num_placed == 0:  # one line per game actually played, to count replays
                with open(os.path.join(os.environ[CRASH_MARKER_ENV], "played.log"), "a") as fh:
                    fh.write(",".join(map(str, state.deck[:5])) + "\n")
            return super().act(obs, info, game, state)

    return CrashOnce(system=system, rules=rules, seed=seed)


def _register_test_agents():
    from agents.registry import register_agent

    register_agent("crash-once", _crash_once_agent, kind="params")


@pytest.fixture(scope="module")
def local_ray(tmp_path_factory):
    """One embedded Ray with 2 CPUs for the whole module; workers know the crash-once test agent."""
    if not HAVE_RAY:
        pytest.skip('Ray is not installed: pip install "pokersquares_env[distributed]"')
    import ray

    crash_dir = tmp_path_factory.mktemp("crash")
    os.environ[CRASH_MARKER_ENV] = str(crash_dir)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    _register_test_agents()
    if ray.is_initialized():
        ray.shutdown()
    ray.init(  # a new local Ray even where `ray start` left a cluster (or a stale /tmp/ray/ray_current_cluster)
        address="local", num_cpus=2, include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False,
        runtime_env={"worker_process_setup_hook": _register_test_agents,
                     "env_vars": {CRASH_MARKER_ENV: str(crash_dir)}},
    )
    yield crash_dir
    ray.shutdown()


def _without_timing(records):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in records]


def _without_timing_summary(rows):
    return [{k: v for k, v in r.items() if k != "seconds_per_game"} for r in rows]


# --------------------------------------------------------------------------- evaluation


@requires_ray
def test_ray_evaluation_equals_local(local_ray):
    specs = ["greedy", "random", "mc:rollouts=2,rollout=heuristic"]
    kw = dict(games=12, seed=7, scoring="english", rules={"jokers": 1}, progress=False)
    on_ray = evaluate(specs, backend="ray", chunk_size=5, **kw)
    local = evaluate(specs, backend="local", **kw)
    assert _without_timing(on_ray.records) == _without_timing(local.records)
    assert _without_timing_summary(on_ray.summary) == _without_timing_summary(local.summary)
    assert on_ray.paired() == local.paired()
    assert sorted((r["agent"], r["deal"]) for r in on_ray.records) == [(a, i) for a in sorted(specs) for i in range(12)]


@requires_ray
def test_list_returning_chunks_for_ray_client_play_the_streamed_games(local_ray):
    """Ray Client (``ray://``) has no streaming tasks (evaluate crashed there with 'ObjectRefGenerator' object has no
    attribute 'binary'): each chunk is then one task returning its records; the games are those of the streaming
    tasks and of the local back end."""
    from agents import distributed
    from pokersquares_env.core import Rules
    from pokersquares_env.scoring import point_system

    config = {"seed": 7, "scoring": point_system("english").to_json(), "rules": Rules(jokers=1).to_json()}
    tasks = [("greedy", [0, 1, 2], config), ("greedy", [3, 4], config), ("random", [0, 1, 2, 3, 4], config)]
    listed = [r for batch in distributed.run_chunks(tasks, streaming=False) for r in batch]
    streamed = [r for batch in distributed.run_chunks(tasks) for r in batch]
    key = lambda r: (r["agent"], r["deal"])  # noqa: E731
    assert _without_timing(sorted(listed, key=key)) == _without_timing(sorted(streamed, key=key))
    assert sorted(map(key, listed)) == [(a, d) for a in ("greedy", "random") for d in range(5)]
    local = evaluate(["greedy", "random"], games=5, seed=7, scoring="english", rules={"jokers": 1}, progress=False)
    assert _without_timing(sorted(listed, key=key)) == _without_timing(sorted(local.records, key=key))


def test_ray_client_sessions_run_list_returning_chunks_and_play_a_lost_one_again(monkeypatch):
    """Through Ray Client each chunk's task returns its records as a list; a chunk whose task fails is played again
    whole within its retries, then the evaluation stops naming its deals (Ray faked)."""
    import types

    from agents import distributed
    from agents.evaluation import WorkerLostError

    bodies, failures = [], {"left": 1}

    def remote(fn):
        bodies.append(fn)
        return types.SimpleNamespace(options=lambda **kw: types.SimpleNamespace(
            remote=lambda spec, deals, config, entry: tuple(deals)))

    def get(ref):
        if 5 in ref and failures["left"]:
            failures["left"] -= 1
            raise _FakeRayError("worker died")
        return [{"deal": d} for d in ref]

    fake = types.SimpleNamespace(exceptions=types.SimpleNamespace(RayError=_FakeRayError), get=get, remote=remote,
                                 wait=lambda refs, num_returns=1: (list(refs)[:1], list(refs)[1:]),
                                 cancel=lambda ref, force=True: None)
    monkeypatch.setattr(distributed, "prepare", lambda *args, **kwargs: fake)
    monkeypatch.setattr(distributed, "_shipped_entries", lambda ray, specs: dict.fromkeys(specs))
    monkeypatch.setattr(distributed, "_warm_agents", lambda tasks: None)
    monkeypatch.setattr(distributed, "_client_mode", lambda ray: True)
    tasks = [("greedy", [0, 1, 2, 3, 4], {"seed": 0}), ("greedy", [5, 6, 7], {"seed": 0})]
    records = [r for batch in distributed.run_chunks(tasks, retries=1) for r in batch]
    assert bodies == [distributed._play_chunk_list] and sorted(r["deal"] for r in records) == list(range(8))
    failures["left"] = 1
    with pytest.raises(WorkerLostError, match=r"deals \[5, 6, 7\] could not be played on Ray after 0 resubmissions"):
        list(distributed.run_chunks(tasks, retries=0))
    monkeypatch.setattr(distributed, "_client_mode", lambda ray: False)
    list(distributed.run_chunks([], retries=0))
    assert bodies[-1] is distributed._play_chunk  # streaming tasks elsewhere


@requires_ray
def test_sigterm_stops_a_ray_evaluation_keeping_its_games_and_saying_so(tmp_path):
    """ray.init's own SIGTERM handler replaced the command's: a time limit's SIGTERM on --backend ray exited 15,
    silently. Now it stops as on the local back end: exit 143, naming the games kept."""
    from agents.evaluation import JOURNAL
    from helpers import sigterm_evaluate

    journal = tmp_path / "run" / JOURNAL
    returncode, err = sigterm_evaluate(["--agent", "greedy", "--games", "3000", "--chunk-size", "1", "--backend", "ray",
                                        "--jobs", "2", "--no-progress", "--out", "run"], tmp_path, journal,
                                       wait_s=180, exit_s=120)
    assert returncode == 143, err
    kept = journal.read_bytes().count(b"\n")
    assert (f"pokersquares evaluate: terminated (SIGTERM); the {kept} finished games are kept in "
            f"{os.path.join('run', JOURNAL)}") in err


@requires_ray
def test_lost_worker_keeps_finished_games(local_ray, caplog):
    """A worker that dies mid-chunk loses no finished game: only unfinished deals run again, results unchanged."""
    crash_dir = local_ray
    games = 8
    with caplog.at_level(logging.WARNING, logger="agents.distributed"):
        result = evaluate(["crash-once:after=3"], games=games, seed=11, backend="ray", chunk_size=games,
                          progress=False)
    assert (crash_dir / "crashed").exists(), "the test agent never crashed its worker"
    resubmitted = [int(m.group(1)) for r in caplog.records
                   if (m := re.search(r"resubmitting its (\d+) unfinished deals", r.getMessage()))]
    # 3 games were finished before the crash; normally all 3 records reached the driver (5 deals resubmitted)
    assert len(resubmitted) == 1 and 5 <= resubmitted[0] < games, resubmitted
    assert not result.errors and len(result.records) == games
    played = (crash_dir / "played.log").read_text().splitlines()
    # only the resubmitted deals were played again: the finished games whose records arrived were kept
    assert len(played) == 3 + resubmitted[0] and len(set(played)) == games
    greedy = evaluate(["greedy"], games=games, seed=11, progress=False)
    assert [r["placements"] for r in result.records] == [r["placements"] for r in greedy.records]


@requires_ray
def test_a_learned_agent_plays_the_same_games_on_ray_as_locally(local_ray, tmp_path):
    """Before, a ``fastppo:`` agent broke near-ties between cells by float noise that depends on torch's thread
    count: a Ray worker (one thread) and this process (two) played different games on the same deals."""
    torch = pytest.importorskip("torch", reason="learned agents need torch (the train extra)")
    from agents.config import TrainConfig
    from agents.fast_ppo import make_net, save_model

    cfg = TrainConfig(algo="fast-ppo", out=str(tmp_path)).resolved()
    with torch.random.fork_rng():
        torch.manual_seed(0)
        save_model(tmp_path / "model.pt", make_net(cfg.net, cfg.hidden), cfg)  # untrained: many near-ties
    spec = f"fastppo:{tmp_path}"
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        local = evaluate(spec, games=6, seed=3, progress=False)
    finally:
        torch.set_num_threads(threads)
    on_ray = evaluate(spec, games=6, seed=3, progress=False, backend="ray", chunk_size=6)
    assert not local.errors and not on_ray.errors
    assert _without_timing(on_ray.records) == _without_timing(local.records)


@requires_ray
def test_cli_ray_backend(local_ray, capsys):
    from pokersquares_env.cli import main

    assert main(["evaluate", "--agent", "rules", "--games", "6", "--backend", "ray", "--format", "json",
                 "--no-progress"]) == 0
    row = json.loads(capsys.readouterr().out.splitlines()[0])
    local = evaluate("rules", games=6, progress=False).summary[0]
    assert row["mean"] == pytest.approx(local["mean"]) and row["games"] == 6
    assert main(["evaluate", "--agent", "rules", "--address", "127.0.0.1:1"]) == 2
    assert "needs --backend ray" in capsys.readouterr().err


def test_without_ray_the_error_names_the_extra(monkeypatch, capsys, tmp_path):
    from agents.distributed import import_ray
    from pokersquares_env.cli import main

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now fails, as when the extra is missing
    with pytest.raises(ImportError, match=r"pokersquares_env\[distributed\]"):
        import_ray()
    with pytest.raises(ImportError, match=r"pokersquares_env\[distributed\]"):
        evaluate("greedy", games=2, backend="ray", progress=False)
    assert main(["evaluate", "--agent", "greedy", "--games", "2", "--backend", "ray", "--no-progress"]) == 2
    assert "pokersquares_env[distributed]" in capsys.readouterr().err
    assert main(["sweep", str(_sweep_file(tmp_path))]) == 2
    assert "pokersquares_env[distributed]" in capsys.readouterr().err


# --------------------------------------------------------------------------- sweeps

TINY_TRAIN = {
    "algo": "fast-ppo", "timesteps": 200, "num_envs": 4, "num_steps": 25, "minibatch_size": 50, "hidden": [16],
    "eval_every": 100, "eval_games": 4, "checkpoint_every": 0, "final_eval_games": 6,
}


def _sweep_file(tmp_path, **extra):
    cfg = {"name": "tiny", "out": str(tmp_path / "sweep"), "train": TINY_TRAIN,
           "space": {"reward_mode": ["line", "terminal"]}, **extra}
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(cfg))
    return path


@requires_ray
@pytest.mark.parametrize("space, module, trainer", [
    ({"seed": [0, 1]}, "torch", "fast-ppo"),  # the fixed algo of train:
    ({"algo": ["fast-ppo", "maskable-ppo"]}, "sb3_contrib", "maskable-ppo"),  # a varied one: every value is checked
])
def test_a_sweep_whose_trainer_is_missing_stops_before_ray_starts(space, module, trainer, tmp_path, monkeypatch,
                                                                   capsys):
    """Before, `pokersquares sweep` without torch started Ray and reported every trial as failed (exit 1)."""
    if module != "torch":  # fast-ppo, checked first, needs torch alone
        pytest.importorskip("torch", reason=f"the case hides {module} alone, with torch installed")
    import ray

    from pokersquares_env.cli import main

    train = {k: v for k, v in TINY_TRAIN.items() if k not in space}
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps({"name": "tiny", "out": str(tmp_path / "sweep"), "train": train, "space": space}))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)  # an embedded Ray: the trials would run here
    monkeypatch.setattr(ray, "init", lambda *a, **k: pytest.fail("Ray was started"))
    monkeypatch.setitem(sys.modules, module, None)  # what an install without the train extra finds
    assert main(["sweep", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"pokersquares sweep: {trainer} needs ") and err.count("\n") == 1, err
    assert 'pip install "pokersquares_env[train]"' in err
    assert not (tmp_path / "sweep").exists()


@requires_ray
def test_a_sweep_without_matplotlib_stops_before_ray_starts_unless_told_no_plots(tmp_path, monkeypatch, capsys):
    """Before, a missing matplotlib was found when the plots were drawn, after every trial had trained: exit 2 (a bad
    config's), no table printed, and the new summaries beside the old plots."""
    import ray

    import agents.sweep
    from pokersquares_env.cli import main

    path = _sweep_file(tmp_path)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(agents.sweep, "check_trainers_installed", lambda config: None)  # torch need not be here

    class Started(Exception):
        pass

    def start(*args, **kwargs):
        raise Started

    monkeypatch.setattr(ray, "init", start)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # what an install without the plot extra finds
    assert main(["sweep", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == ('pokersquares sweep: sweep plots need matplotlib: pip install "pokersquares_env[plot]" (or '
                   'plots=False, --no-plots on the command line, for the summaries alone)\n'), err
    assert not (tmp_path / "sweep").exists()
    with pytest.raises(Started):  # --no-plots: on to Ray
        main(["sweep", str(path), "--quiet", "--no-plots"])


@requires_ray
def test_sweep_runs_and_resumes_without_retraining(local_ray, tmp_path, capsys):
    pytest.importorskip("torch", reason="the trials train fast-ppo: the train extra")
    from agents.sweep import run_sweep
    from pokersquares_env.cli import main

    path = _sweep_file(tmp_path)
    handler_before = signal.getsignal(signal.SIGINT)
    first = run_sweep(path, verbose=0)
    assert signal.getsignal(signal.SIGINT) is handler_before  # Tune's Ctrl-C handler does not outlive the sweep
    assert [t["status"] for t in first.trials] == ["done", "done"]
    assert [t["params"]["reward_mode"] for t in first.trials] == ["line", "terminal"]
    out = tmp_path / "sweep"
    for name in ("summary.md", "summary.csv", "summary.json", "curves.png", "final.png"):
        assert (out / name).stat().st_size > 0
    folders = [Path(t["folder"]) for t in first.trials]
    for folder in folders:  # the usual run folder, from the normal training entry point
        assert {"config.json", "model.pt", "curve.csv", "evaluation", "sweep_trial.json"} <= {p.name for p in folder.iterdir()}
        assert json.loads((folder / "config.json").read_text())["timesteps"] == 200
    summary = json.loads((out / "summary.json").read_text())
    assert [r["mean"] for r in summary["trials"]] == [t["metrics"]["mean"] for t in first.trials]
    assert all(r["steps"] >= 200 for r in summary["trials"])

    # a stopped sweep: the second trial never finished
    (folders[1] / "sweep_trial.json").unlink()
    (folders[1] / "model.pt").unlink()
    before = (folders[0] / "model.pt").stat().st_mtime_ns
    assert main(["sweep", str(path), "--quiet", "--no-plots"]) == 0
    printed = capsys.readouterr().out
    assert "1 reused from finished run folders" in printed
    assert "summary.md, summary.csv, summary.json in" in printed and "curves.png" not in printed  # not written
    assert (folders[0] / "model.pt").stat().st_mtime_ns == before  # the finished trial was not trained again
    assert (folders[1] / "sweep_trial.json").exists() and (folders[1] / "model.pt").exists()
    again = json.loads((out / "summary.json").read_text())["trials"]
    assert again[0]["mean"] == first.trials[0]["metrics"]["mean"]
    assert again[1]["mean"] == first.trials[1]["metrics"]["mean"]  # same seed, same deals: the same result


def test_sweep_config_errors_name_the_problem(tmp_path):
    from agents.sweep import SweepConfig, load_sweep

    with pytest.raises(ValueError, match="unknown key"):
        SweepConfig.from_dict({"name": "x", "spaces": {}})
    with pytest.raises(ValueError, match=r"unknown training option\(s\) \['learning_rat'\]"):
        SweepConfig.from_dict({"space": {"learning_rat": [0.1]}})
    with pytest.raises(ValueError, match="loguniform"):
        SweepConfig.from_dict({"space": {"learning_rate": {"loguniform": [0, 1]}}})
    with pytest.raises(ValueError, match="both fixed"):
        SweepConfig.from_dict({"train": {"seed": 1}, "space": {"seed": [0, 1]}})
    with pytest.raises(ValueError, match="reward_mode='lines'"):
        SweepConfig.from_dict({"space": {"reward_mode": ["line", "lines"]}})
    with pytest.raises(ValueError, match="does not exist"):
        load_sweep(tmp_path / "missing.yaml")
    (tmp_path / "folder.yaml").mkdir()
    with pytest.raises(ValueError, match="folder.yaml' is not a file"):
        load_sweep(tmp_path / "folder.yaml")
    (tmp_path / "latin.json").write_bytes(b'{"space": "\xff"}')
    with pytest.raises(ValueError, match="latin.json' cannot be read"):
        load_sweep(tmp_path / "latin.json")
    # a value of the wrong type is named, key and value, not reported as a Python error
    with pytest.raises(ValueError, match=re.escape("algo=['fast-ppo']: expected one of")):
        SweepConfig.from_dict({"train": {"algo": ["fast-ppo"]}, "space": {"seed": [0]}})
    with pytest.raises(ValueError, match=re.escape("name=['x']: expected letters")):
        SweepConfig.from_dict({"name": ["x"], "space": {"seed": [0]}})
    with pytest.raises(ValueError, match=re.escape("out=5: expected a folder path")):
        SweepConfig.from_dict({"out": 5, "space": {"seed": [0]}})


@needs("yaml")
def test_a_null_sweep_out_means_the_default_folder(tmp_path):
    """Before, YAML ``out:`` (null) was refused ("out=None: expected a folder path"); it means runs/sweeps/<name>."""
    from agents.sweep import SweepConfig, load_sweep

    path = tmp_path / "nullout.yaml"
    path.write_text("out:\nspace:\n  seed: [0]\n")
    assert load_sweep(path).out == os.path.join("runs", "sweeps", "nullout")
    assert SweepConfig.from_dict({"name": "n", "out": None, "space": {"seed": [0]}}).out == \
        os.path.join("runs", "sweeps", "n")
    assert load_sweep(path, out=str(tmp_path / "o")).out == str(tmp_path / "o")  # --out still wins


def test_sweep_out_that_is_a_file_is_named_as_given(tmp_path, capsys):
    """Before: "out_dir='afile' is a file" -- the sweep has no out_dir option; --out, or the config's out."""
    from agents.sweep import run_sweep
    from pokersquares_env.cli import main

    afile = tmp_path / "afile"
    afile.write_text("keep")
    assert main(["sweep", str(_sweep_file(tmp_path)), "--out", str(afile)]) == 2
    assert f"pokersquares sweep: --out {str(afile)!r} is a file: expected a folder" in capsys.readouterr().err
    with pytest.raises(ValueError, match=re.escape(f"out={str(afile)!r} is a file")):
        run_sweep(_sweep_file(tmp_path, out=str(afile)))
    assert afile.read_text() == "keep"


def test_read_done_counts_a_damaged_trial_record_as_unfinished(tmp_path):
    from agents.sweep import DONE_FILE, _read_done

    assert _read_done(tmp_path) is None  # no record
    for damaged in ("[1]", '"done"', "{bad", '{"status": "done"}', '{"status": "done", "metrics": [1]}',
                    '{"status": "running", "metrics": {}}'):
        (tmp_path / DONE_FILE).write_text(damaged)
        assert _read_done(tmp_path) is None, damaged
    (tmp_path / DONE_FILE).write_bytes(b"\xff\xfe")
    assert _read_done(tmp_path) is None
    record = {"status": "done", "metrics": {"mean": 1.5}}
    (tmp_path / DONE_FILE).write_text(json.dumps(record))
    assert _read_done(tmp_path) == record


def test_trial_cpus_beyond_the_embedded_ray_are_refused(monkeypatch):
    from agents.sweep import check_trial_cpus

    with pytest.raises(ValueError, match=r"cpus_per_trial=4 is more than --cpus 1.*expected cpus_per_trial <= 1"):
        check_trial_cpus(4, 1, embedded=True)
    check_trial_cpus(1, 1, embedded=True)
    check_trial_cpus(0.5, 1, embedded=True)
    check_trial_cpus(64, 1, embedded=False)  # a cluster (--address) keeps its own resources
    monkeypatch.setattr(os, "cpu_count", lambda: 64)  # the machine's cores, but this process may use two of them
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    with pytest.raises(ValueError, match=r"cpus_per_trial=3 is more than the 2 CPUs this process may use"):
        check_trial_cpus(3, None, embedded=True)
    check_trial_cpus(2, None, embedded=True)
    # a Ray session already open in this process: its CPUs, whatever --cpus and --address say
    with pytest.raises(ValueError, match=r"cpus_per_trial=4 is more than the 2 CPUs of the Ray session already open"):
        check_trial_cpus(4, None, embedded=False, session_cpus=2.0)
    check_trial_cpus(2, 64, embedded=True, session_cpus=2.0)


def _fake_ray(monkeypatch, *, cpus: float, open_: bool, local: bool = True):
    """agents.distributed on a stand-in ``ray`` module with ``cpus`` CPUs (a session already open with ``open_``,
    started on this machine with ``local``); what it was asked: ``ensure_ray`` calls and ``shutdown``s."""
    import types

    import agents.distributed as dist

    asked = {"ensure_ray": [], "shutdown": 0}

    def ensure_ray(address, num_cpus, what):
        asked["ensure_ray"].append((address, num_cpus))
        return not open_

    def shutdown():
        asked["shutdown"] += 1

    ray = types.SimpleNamespace(is_initialized=lambda: open_, cluster_resources=lambda: {"CPU": cpus, "memory": 1e9},
                                shutdown=shutdown)
    monkeypatch.setattr(dist, "import_ray", lambda what: ray)
    monkeypatch.setattr(dist, "ensure_ray", ensure_ray)
    monkeypatch.setattr(dist, "_session_is_local", lambda ray: local, raising=False)
    monkeypatch.setattr(dist, "_WARNED_CPUS", set(), raising=False)  # no warning given by an earlier test
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    return asked


def test_the_session_joined_at_an_address_is_not_warned_about_when_the_same_address_is_asked_again(monkeypatch,
                                                                                                     caplog):
    """The harness connects before the games and again as it sends them (``--pps``: per point system): every
    ``--backend ray --address X`` run said 'already initialised ... not address X' of the session it had just joined
    at X."""
    import types

    import agents.distributed as dist

    node = object()
    up = {"on": False, "inits": []}

    def init(**kwargs):
        up["on"] = True
        up["inits"].append(kwargs.get("address"))

    ray = types.SimpleNamespace(is_initialized=lambda: up["on"], init=init,
                                _private=types.SimpleNamespace(worker=types.SimpleNamespace(_global_node=node)))
    monkeypatch.setattr(dist, "import_ray", lambda what: ray)
    monkeypatch.setattr(dist, "_check_reachable", lambda address: None)
    monkeypatch.setattr(dist, "_JOINED", {"address": None, "node": None}, raising=False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with caplog.at_level(logging.WARNING, logger="agents.distributed"):
        assert dist.ensure_ray("10.0.0.1:6379") is True
        assert dist.ensure_ray("10.0.0.1:6379") is False and dist.ensure_ray(None) is False
        assert not caplog.records and up["inits"] == ["10.0.0.1:6379"]
        dist.ensure_ray("10.0.0.2:6379")  # another address: the open session is used, and that is said
        assert "using that session, not address '10.0.0.2:6379'" in caplog.text
        caplog.clear()
        ray._private.worker._global_node = object()  # shut down and opened again by the user, elsewhere
        dist.ensure_ray("10.0.0.1:6379")
        assert "not address '10.0.0.1:6379'" in caplog.text


def test_a_growing_clusters_cpus_per_task_warning_comes_once_a_process(monkeypatch, caplog):
    from agents.distributed import prepare

    _fake_ray(monkeypatch, cpus=2.0, open_=False)
    with caplog.at_level(logging.WARNING, logger="agents.distributed"):
        for _ in range(3):  # before the games, as they are sent, and per point system with --pps: it was 2 to 18 lines
            prepare(["greedy"], address="10.0.0.1:6379", cpus_per_task=3)
        prepare(["greedy"], address="10.0.0.1:6379", cpus_per_task=4)
    assert len(re.findall("cpus_per_task=3 is more than", caplog.text)) == 1
    assert len(re.findall("cpus_per_task=4 is more than", caplog.text)) == 1


def test_task_cpus_beyond_the_ray_session_are_refused(monkeypatch, caplog):
    """Before, ``backend_options={"cpus_per_task": 2}`` on a 1-CPU Ray (a session already open, or the embedded one)
    waited forever: no chunk could ever be scheduled."""
    from agents.distributed import prepare

    asked = _fake_ray(monkeypatch, cpus=1.0, open_=True)
    with pytest.raises(ValueError, match=r"cpus_per_task=2 is more than the 1 CPUs of the Ray session already open "
                                         r"in this process: no chunk could ever start; expected cpus_per_task <= 1"):
        prepare(["greedy"], cpus_per_task=2)
    assert asked["shutdown"] == 0  # not this evaluation's session: left as it is
    prepare(["greedy"], cpus_per_task=1)
    prepare(["greedy"], cpus_per_task=0.5)
    # the embedded Ray this evaluation starts: refused, and stopped again
    asked = _fake_ray(monkeypatch, cpus=2.0, open_=False)
    with pytest.raises(ValueError, match=r"cpus_per_task=3 is more than the 2 CPUs of the embedded Ray \(jobs=2\): "
                                         r"no chunk could ever start; expected cpus_per_task <= 2"):
        prepare(["greedy"], jobs=2, cpus_per_task=3)
    assert asked == {"ensure_ray": [(None, 2)], "shutdown": 1}
    with pytest.raises(ValueError, match=r"the 2 CPUs of the embedded Ray \(jobs=1: all the CPUs this process may use\)"):
        prepare(["greedy"], cpus_per_task=3)
    asked = _fake_ray(monkeypatch, cpus=2.0, open_=False)
    prepare(["greedy"])  # jobs=1 (the default) starts Ray on every core: no CPU count is passed to it
    assert asked["ensure_ray"] == [(None, None)]
    # a cluster joined by address, or a session joined to one, may grow (autoscaling): a warning only
    for address, open_, local in (("10.0.0.1:6379", False, True), (None, True, False)):
        asked = _fake_ray(monkeypatch, cpus=2.0, open_=open_, local=local)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="agents.distributed"):
            prepare(["greedy"], address=address, cpus_per_task=3)
        assert asked["shutdown"] == 0
        assert re.search(r"cpus_per_task=3 is more than the 2 CPUs the Ray cluster .* has now: its chunks wait until "
                         r"the cluster grows", caplog.text), caplog.text


@requires_ray
def test_task_cpus_beyond_the_modules_ray_are_refused_before_any_task(local_ray):
    """The real check against the module's embedded 2-CPU Ray (started by ``ray.init`` in this process); ``prepare``
    is what evaluate(backend="ray") runs before any agent is built or task submitted (called here directly, so that
    a missing check fails the test instead of hanging it)."""
    import ray

    from agents.distributed import _session_is_local, prepare

    assert _session_is_local(ray)
    with pytest.raises(ValueError, match=r"cpus_per_task=3 is more than the 2 CPUs of the Ray session already open"):
        prepare(["random"], cpus_per_task=3)
    assert ray.is_initialized()  # the session is left as it was
    assert len(evaluate("random", games=2, backend="ray", backend_options={"cpus_per_task": 2},
                        progress=False).records) == 2


@requires_ray
def test_a_sweep_in_a_process_with_ray_running_checks_that_sessions_cpus(tmp_path, monkeypatch, capsys):
    """Before, the check was skipped when Ray was already initialised (a notebook that ran evaluate(backend="ray")
    first): cpus_per_trial=4 on a 2-CPU embedded Ray waited forever."""
    import ray

    import agents.distributed
    from agents.sweep import run_sweep

    def no_ray(*args, **kwargs):
        raise AssertionError("the sweep went on to Ray before checking its CPUs")

    monkeypatch.setattr(agents.distributed, "ensure_ray", no_ray)
    monkeypatch.setattr(ray, "is_initialized", lambda: True)
    monkeypatch.setattr(ray, "cluster_resources", lambda: {"CPU": 2.0, "memory": 1e9})
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(ValueError, match=r"cpus_per_trial=4 is more than the 2 CPUs of the Ray session already open "
                                         r"in this process: no trial could ever start; expected cpus_per_trial <= 2"):
        run_sweep(_sweep_file(tmp_path, cpus_per_trial=4), verbose=0)
    assert not (tmp_path / "sweep").exists()


def test_benchmark_labels_local_rows_with_the_workers_that_ran(monkeypatch):
    """Before, ``--cpus 4`` on 2 usable CPUs labelled a 2-worker run "--backend local --jobs 4"."""
    import types

    import agents.distributed as dist
    import agents.evaluation as ev

    calls = []

    def fake_evaluate(spec, *, games, seed, backend="local", jobs=1, chunk_size=None, progress=True):
        calls.append((backend, jobs))
        return types.SimpleNamespace(summary=[{"mean": 1.0}])

    monkeypatch.setattr(dist, "import_ray", lambda what: types.SimpleNamespace(is_initialized=lambda: False))
    monkeypatch.setattr(dist, "ensure_ray", lambda **kwargs: True)
    monkeypatch.setattr(dist, "_ray_process_rss", lambda: {"workers": 0, "worker_rss_mean": 0.0,
                                                           "worker_rss_max": 0.0, "services_rss": 0.0})
    monkeypatch.setattr(ev, "evaluate", fake_evaluate)
    monkeypatch.setattr(ev, "usable_cpus", lambda: 2)
    rows = [r["what"] for r in dist.benchmark((("greedy", 10),), cpus=4)]
    assert "greedy, 10 games, --backend local --jobs 1" in rows
    assert "greedy, 10 games, --backend local --jobs 2 (--jobs 4 capped at the usable CPUs)" in rows
    assert "greedy, 10 games, --backend ray --jobs 4" in rows  # Ray's workers are its own CPUs'


def test_bench_prints_large_rates_with_separators_not_in_scientific_notation(monkeypatch, capsys):
    """Before, 2,030 games/s printed as ``2.03e+03`` (``.3g``), where docs/scaling.md quotes ``1,030``."""
    import agents.distributed as dist

    rows = [{"what": "greedy", "seconds": 0.98512, "games_per_s": 2030.4, "mean": 57.875},
            {"what": "RSS", "MiB": 268.6, "max_MiB": 1234567.0}]
    monkeypatch.setattr(dist, "benchmark", lambda agents, cpus: rows)
    assert dist.main(["bench"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2:] == ["| greedy | 0.985 | 2,030 | 57.9 |  |  |", "| RSS |  |  |  | 269 | 1,234,567 |"]
    # a figure is formatted by what it rounds to: 99.96 is "100", 9.9996 is "10.0"
    assert [dist._bench_number(v) for v in (99.96, 99.4, 9.9996, 9.94)] == ["100", "99.4", "10.0", "9.94"]


def test_bench_refuses_bad_counts_and_search_specs_before_ray_starts(monkeypatch, capsys):
    """Before, ``--cpus 0`` ended in a traceback from Ray's start, and a bad ``--search`` spec or game count failed
    only once the embedded Ray had started (about 12 s)."""
    import agents.distributed as dist

    def no_ray(*args, **kwargs):
        raise AssertionError("Ray started before the checks")

    _fake_ray(monkeypatch, cpus=2.0, open_=False)
    monkeypatch.setattr(dist, "ensure_ray", no_ray)
    for argv, message in (
            (["--cpus", "0"], "argument --cpus: 0: expected an integer >= 1"),
            (["--cheap-games", "-5"], "argument --cheap-games: -5: expected an integer >= 1"),
            (["--search-games", "x"], "argument --search-games: 'x': expected an integer >= 1"),
            (["--search", "nosuch"], "unknown agent 'nosuch' in spec 'nosuch'"),
            (["--search", "mc:depth=2"], "agent spec 'mc:depth=2': unknown option(s) depth"),
            (["--search", "mc:rollouts=-3"], "agent spec 'mc:rollouts=-3' cannot be built"),
            (["--search", "fastppo:/no/such/run"], "no file or folder '/no/such/run'")):
        with pytest.raises(SystemExit) as stop:
            dist.main(["bench", *argv])
        err = capsys.readouterr().err
        assert stop.value.code == 2 and message in err and "Traceback" not in err, (argv, err)
    with pytest.raises(ValueError, match=r"cpus=0: expected a positive integer"):
        dist.benchmark(cpus=0)
    with pytest.raises(ValueError, match=r"agents: 0 games of 'greedy': expected a positive integer number of games"):
        dist.benchmark((("greedy", 0),))


@requires_ray
def test_sweep_checks_come_before_ray_starts(tmp_path, monkeypatch, capsys):
    """--out that is a file, and trials an embedded Ray could never run, are refused without starting Ray."""
    import ray

    import agents.distributed
    from pokersquares_env.cli import main

    def no_ray(*args, **kwargs):
        raise AssertionError("Ray started before the checks")

    monkeypatch.setattr(agents.distributed, "ensure_ray", no_ray)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)  # as in a fresh process (the module's Ray may be up)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    path = _sweep_file(tmp_path, cpus_per_trial=4)
    assert main(["sweep", str(path), "--cpus", "1"]) == 2
    assert "cpus_per_trial=4 is more than --cpus 1" in capsys.readouterr().err
    afile = tmp_path / "afile"
    afile.write_text("keep")
    assert main(["sweep", str(_sweep_file(tmp_path)), "--out", str(afile)]) == 2
    assert "is a file" in capsys.readouterr().err and afile.read_text() == "keep"
    assert not (tmp_path / "sweep").exists()


def test_a_sweep_whose_every_trial_failed_still_writes_its_summary(tmp_path):
    """Before, groups() read out[0] before checking for an empty list: table() and save() raised IndexError, so a
    sweep of failed trials printed a traceback and wrote no summary."""
    from agents.sweep import SweepConfig, SweepResult

    cfg = SweepConfig.from_dict({"name": "s", "out": str(tmp_path / "sw"), "train": {"timesteps": 10},
                                 "space": {"seed": [0, 1]}})
    trials = [{"params": {"seed": s}, "folder": str(tmp_path / f"t{s}"), "status": "error", "metrics": {}}
              for s in (0, 1)]
    result = SweepResult(cfg, trials)
    assert result.groups() == [] and result.best() is None
    assert "error" in result.table()
    result.save(plots=False)
    assert all((tmp_path / "sw" / name).is_file() for name in ("summary.md", "summary.csv", "summary.json"))


def test_trial_folders_are_stable_and_distinct():
    from agents.sweep import SweepConfig, trial_folder

    cfg = SweepConfig(name="t", out="o", space={"seed": [0, 1], "learning_rate": {"uniform": [0.001, 0.002]}})
    a = trial_folder(cfg, {"seed": 0, "learning_rate": 0.0015})
    assert a == trial_folder(cfg, {"learning_rate": 0.0015, "seed": 0})
    assert a != trial_folder(cfg, {"seed": 0, "learning_rate": 0.00150001})  # shown alike, kept apart by the digest
    assert a.name.startswith("seed=0,learning_rate=0.0015-")
    # a long value: the name keeps its first 150 characters, then the digest of all of it tells two such trials apart
    long = SweepConfig(name="t", out="o", space={"agent": ["x"]})
    b, c = (trial_folder(long, {"agent": "e" * 300 + end}) for end in "bc")
    slug, digest = b.name.rsplit("-", 1)
    assert slug == "agent=" + "e" * 144 and len(digest) == 8 and b.parent == c.parent
    assert b != c and c.name.startswith(slug + "-")


def test_unreachable_address_fails_fast_with_a_clear_error():
    from agents.distributed import RayConnectionError, _check_reachable

    with pytest.raises(RayConnectionError, match=r"no Ray cluster answers at address '127.0.0.1:1'"):
        _check_reachable("127.0.0.1:1", timeout=2)
    with pytest.raises(ValueError, match="expected host:port"):
        _check_reachable("localhost:http")


# --------------------------------------------------------------------------- agents added by register_agent, addresses


@requires_ray
def test_agents_added_with_register_agent_play_on_ray(local_ray):
    """Before, a Ray worker started with the built-in registry only: an agent added with register_agent failed every
    deal there ("unknown agent"), whether registered as 'module:function' or as a callable."""
    import functools

    from agents.registry import register_agent
    from agents.simple import GreedyAgent

    register_agent("greedy-by-path", "agents.simple:GreedyAgent", kind="params")
    register_agent("greedy-by-callable", functools.partial(GreedyAgent), kind="params")
    specs = ["greedy-by-path", "greedy-by-callable"]
    on_ray = evaluate(specs, games=4, seed=2, backend="ray", chunk_size=2, progress=False)
    assert not on_ray.errors
    greedy = [r["placements"] for r in evaluate("greedy", games=4, seed=2, progress=False).records]
    for spec in specs:
        assert [r["placements"] for r in on_ray.records if r["agent"] == spec] == greedy


@requires_ray
def test_an_agent_a_ray_worker_cannot_load_fails_its_deals_saying_why():
    from agents.distributed import _play_chunk
    from agents.evaluation import deal_deck
    from pokersquares_env.cards import parse_card

    records = list(_play_chunk("lost", [0, 1], {"seed": 1}, ("lost", b"not a pickle", "params")))
    assert [r["deal"] for r in records] == [0, 1]
    for r in records:  # each failed deal's record holds that deal's deck (an audit dealt seed + 1's unseen)
        deck = [c if isinstance(c, int) else parse_card(c) for c in r["deck"]]
        assert tuple(deck) == deal_deck(1, r["deal"])
    assert all(r["error"].startswith("could not build agent 'lost': the callable register_agent was given for 'lost' "
                                     "cannot be loaded on this Ray worker (") for r in records)


@requires_ray
def test_an_agent_ray_cannot_send_is_refused_before_any_agent_is_built(local_ray, tmp_path, monkeypatch):
    import threading

    import agents.evaluation as ev
    from agents.registry import register_agent
    from agents.simple import GreedyAgent

    class Unsendable:  # holds a lock: cannot be pickled for a worker
        def __init__(self):
            self.lock = threading.Lock()

        def __call__(self, system=None, rules=None, seed=None):
            return GreedyAgent(system=system, rules=rules, seed=seed)

    register_agent("unsendable", Unsendable(), kind="params")
    built = []
    monkeypatch.setattr(ev, "_build_or_raise", lambda *args, **kwargs: built.append(args))
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=r"agent spec 'unsendable': agent 'unsendable' was registered with a callable "
                                         r"that cannot be sent to Ray workers \(TypeError: .*lock"):
        evaluate(["greedy", "unsendable"], games=2, backend="ray", out_dir=out, progress=False)
    assert not built and not out.exists()


@requires_ray
def test_a_bad_ray_address_is_named_before_any_agent_is_built_or_folder_made(tmp_path, monkeypatch, capsys):
    """Before, ``--backend ray --address BAD --out D`` built every agent (trained its tables) and made D first."""
    import ray

    import agents.evaluation as ev
    from agents.distributed import RayConnectionError
    from agents.evaluation import evaluate_pps
    from pokersquares_env.cli import main

    built = []
    monkeypatch.setattr(ev, "_build_or_raise", lambda *args, **kwargs: built.append(args))
    monkeypatch.setattr(ray, "is_initialized", lambda: False)  # as in a process that has not joined Ray yet
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    out = tmp_path / "out"
    bad = {"address": "127.0.0.1:1"}
    with pytest.raises(RayConnectionError, match=r"no Ray cluster answers at address '127.0.0.1:1'"):
        evaluate("greedy", games=2, backend="ray", backend_options=bad, out_dir=out, progress=False)
    with pytest.raises(RayConnectionError, match=r"no Ray cluster answers at address '127.0.0.1:1'"):
        evaluate_pps("greedy", systems=["american", "english"], games=2, backend="ray", backend_options=bad,
                     out_dir=out, progress=False)
    assert main(["evaluate", "--agent", "greedy", "--games", "2", "--backend", "ray", "--address", "127.0.0.1:1",
                 "--out", str(out), "--no-progress"]) == 2
    assert "no Ray cluster answers at address '127.0.0.1:1'" in capsys.readouterr().err
    assert not built and not out.exists()


def test_a_finished_trial_is_reused_only_with_the_same_training_options(tmp_path):
    """Before, a trial was keyed on its varied options only: a sweep whose fixed `train:` options changed (more
    timesteps, another learning rate) silently reported the old trials as "reused"."""
    pytest.importorskip("torch", reason="the trial trains fast-ppo: the train extra")
    from agents.sweep import DONE_FILE, SweepConfig, run_trial, trial_folder

    sweep = SweepConfig(name="t", out=str(tmp_path / "sw"), train=dict(TINY_TRAIN, final_eval_games=2),
                        space={"seed": [0]}).to_dict()
    first = run_trial({"seed": 0}, sweep)
    assert first["reused"] is False
    folder = trial_folder(SweepConfig(**sweep), {"seed": 0})
    assert json.loads((folder / DONE_FILE).read_text())["config"]["timesteps"] == 200
    assert run_trial({"seed": 0}, sweep)["reused"] is True  # the same options: reused
    changed = {**sweep, "train": {**sweep["train"], "timesteps": 300, "learning_rate": 0.0005}}
    again = run_trial({"seed": 0}, changed)
    assert again["reused"] is False  # trained again with the new options
    stored = json.loads((folder / "config.json").read_text())
    assert stored["timesteps"] == 300 and stored["learning_rate"] == 0.0005
    assert json.loads((folder / DONE_FILE).read_text())["config"]["learning_rate"] == 0.0005
    assert run_trial({"seed": 0}, changed)["reused"] is True
    # a record of an older version (no config): compared with the run folder's config.json
    record = json.loads((folder / DONE_FILE).read_text())
    del record["config"]
    (folder / DONE_FILE).write_text(json.dumps(record))
    assert run_trial({"seed": 0}, changed)["reused"] is True
    assert run_trial({"seed": 0}, sweep)["reused"] is False


class _FakeRayError(Exception):
    pass


class _FakeStream:
    """A stand-in for a Ray streaming task: yields its deals as the "references" ``get`` turns into records."""

    def __init__(self, deals):
        self.deals = list(deals)

    def __next__(self):
        if not self.deals:
            raise StopIteration
        return self.deals.pop(0)


def _fake_streaming_ray(monkeypatch, get, wait=lambda gens, num_returns=1: (list(gens)[:1], list(gens)[1:]),
                        options=None, cancelled=None):
    """agents.distributed.run_chunks on a faked Ray whose tasks stream their deals through ``get``; ``options`` and
    ``cancelled``: lists that get the keywords each task was given (``.options(...)``) and each task cancelled."""
    import types

    import agents.distributed as distributed

    def task_options(**kw):
        if options is not None:
            options.append(kw)
        return types.SimpleNamespace(remote=lambda spec, deals, config, entry: _FakeStream(deals))

    remote = types.SimpleNamespace(options=task_options)
    fake = types.SimpleNamespace(exceptions=types.SimpleNamespace(RayError=_FakeRayError), wait=wait, get=get,
                                 cancel=lambda gen, force=True: (cancelled if cancelled is not None else []).append(gen),
                                 remote=lambda fn: remote)
    monkeypatch.setattr(distributed, "prepare", lambda *args, **kwargs: fake)
    monkeypatch.setattr(distributed, "_shipped_entries", lambda ray, specs: dict.fromkeys(specs))
    monkeypatch.setattr(distributed, "_warm_agents", lambda tasks: None)
    return distributed


def test_when_ray_gives_up_the_error_names_every_deal_left_without_a_record(monkeypatch):
    """An audit found that a chunk out of resubmissions stopped the evaluation naming only its own deals, while the
    chunks still running or queued were cancelled without a word (the local back end names them all).  Ray is faked
    here: the chunk of deals 10-14 always loses its worker."""
    from agents.evaluation import WorkerLostError

    def get(ref):
        if 10 <= ref < 15:
            raise _FakeRayError("worker died")
        return {"deal": ref}

    def wait(gens, num_returns=1):  # the failing chunk first, while the others are still running
        gens = sorted(gens, key=lambda g: not any(10 <= d < 15 for d in g.deals))
        return gens[:1], gens[1:]

    distributed = _fake_streaming_ray(monkeypatch, get, wait)
    tasks = [("greedy", list(range(lo, lo + 5)), {"seed": 0}) for lo in (0, 5, 10, 15)]
    with pytest.raises(WorkerLostError) as caught:
        list(distributed.run_chunks(tasks, retries=0))
    text = str(caught.value)
    assert text.startswith("agent 'greedy': deals [10, 11, 12, 13, 14] could not be played on Ray after 0 "
                           "resubmissions")
    assert text.endswith("the evaluation stopped there, with no records for agent 'greedy' deals 0-19"), text


def test_a_chunk_that_loses_its_worker_once_is_played_again_within_its_retries(monkeypatch):
    """``retries=1``: a chunk whose worker dies once is sent again and its games come back; with ``retries=0`` the
    same failure stops the evaluation, saying so (Ray faked, as above)."""
    from agents.evaluation import WorkerLostError

    failures = {"left": 1}

    def get(ref):
        if ref == 12 and failures["left"]:
            failures["left"] -= 1
            raise _FakeRayError("worker died")
        return {"deal": ref}

    distributed = _fake_streaming_ray(monkeypatch, get)
    tasks = [("greedy", list(range(lo, lo + 5)), {"seed": 0}) for lo in (0, 5, 10)]
    records = [r for batch in distributed.run_chunks(tasks, retries=1) for r in batch]
    assert sorted(r["deal"] for r in records) == list(range(15))
    failures["left"] = 1
    with pytest.raises(WorkerLostError, match="after 0 resubmissions"):
        list(distributed.run_chunks(tasks, retries=0))


def test_ensure_ray_names_a_bad_cpu_count_and_a_cluster_that_wants_a_token(monkeypatch):
    """A bad num_cpus is named before Ray starts; a cluster refusing this process for want of an auth token ("Auth..."
    in Ray's error, any case) is named with how to give it one."""
    import types

    import agents.distributed as dist

    inits = []

    def init(**kwargs):
        inits.append(kwargs)
        if kwargs.get("address"):
            raise ConnectionError("Authentication required by the cluster")

    ray = types.SimpleNamespace(is_initialized=lambda: False, init=init)
    monkeypatch.setattr(dist, "import_ray", lambda what: ray)
    monkeypatch.setattr(dist, "_check_reachable", lambda address: None)
    monkeypatch.setattr(dist, "_JOINED", {"address": None, "node": None}, raising=False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    for bad in (0, -2, True, 1.5):
        with pytest.raises(ValueError, match=re.escape(f"num_cpus={bad!r}: expected a positive integer or None")):
            dist.ensure_ray(num_cpus=bad)
    assert inits == []
    with pytest.raises(dist.RayConnectionError, match=r"at address '10.0.0.1:6379' .*The cluster wants an auth token"):
        dist.ensure_ray("10.0.0.1:6379")


def test_prepare_names_bad_retries_and_task_cpus(monkeypatch):
    from agents.distributed import prepare

    _fake_ray(monkeypatch, cpus=2.0, open_=True)
    for options, message in (({"retries": -1}, "retries=-1: expected an integer >= 0"),
                             ({"retries": True}, "retries=True: expected an integer >= 0"),
                             ({"cpus_per_task": 0}, "cpus_per_task=0: expected a positive number"),
                             ({"cpus_per_task": True}, "cpus_per_task=True: expected a positive number")):
        with pytest.raises(ValueError, match=re.escape(message)):
            prepare(["greedy"], **options)
    prepare(["greedy"], retries=0, cpus_per_task=0.5)  # no resubmission, half a CPU: fine


def test_a_chunk_that_ends_without_some_records_plays_only_those_again(monkeypatch):
    """A task that ended with deals still lacking a record (here its stream sent deal 2's record again instead of
    deal 3's) is resubmitted with those deals; a record already received is never given twice."""
    sent = {"again": 1}

    def get(ref):
        if ref == 3 and sent["again"]:
            sent["again"] -= 1
            return {"deal": 2}
        return {"deal": ref}

    distributed = _fake_streaming_ray(monkeypatch, get)
    records = [r for batch in distributed.run_chunks([("greedy", list(range(5)), {"seed": 0})], retries=1)
               for r in batch]
    assert sorted(r["deal"] for r in records) == [0, 1, 2, 3, 4]


def test_an_address_does_not_excuse_task_cpus_beyond_the_local_session_already_open(monkeypatch):
    """A local Ray session already open in this process is the one used, whatever address is asked for (or is in
    $RAY_ADDRESS): cpus_per_task beyond its CPUs is refused, not warned about as a cluster that may grow."""
    from agents.distributed import prepare

    _fake_ray(monkeypatch, cpus=1.0, open_=True, local=True)
    with pytest.raises(ValueError, match=r"cpus_per_task=2 is more than the 1 CPUs of the Ray session already open"):
        prepare(["greedy"], address="10.0.0.1:6379", cpus_per_task=2)
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")
    with pytest.raises(ValueError, match=r"cpus_per_task=2 is more than the 1 CPUs of the Ray session already open"):
        prepare(["greedy"], cpus_per_task=2)


def test_a_chunk_given_up_names_each_failure_by_its_first_line(monkeypatch):
    from agents.evaluation import WorkerLostError

    def get(ref):
        raise _FakeRayError("worker died\n  traceback line\nlast line")

    distributed = _fake_streaming_ray(monkeypatch, get)
    with pytest.raises(WorkerLostError, match=re.escape("after 1 resubmissions; failures: ['_FakeRayError: worker "
                                                        "died', '_FakeRayError: worker died']")):
        list(distributed.run_chunks([("greedy", [0, 1], {"seed": 0})], retries=1))


# --------------------------------------------------------------------------- where Ray runs, and what each chunk asks of it


def _recording_ray(monkeypatch, node=None):
    """agents.distributed on a stand-in ``ray`` with no session open; the keywords of each ``ray.init``."""
    import types

    import agents.distributed as dist

    inits = []
    ray = types.SimpleNamespace(is_initialized=lambda: False, init=lambda **kwargs: inits.append(kwargs),
                                _private=types.SimpleNamespace(worker=types.SimpleNamespace(_global_node=node)))
    monkeypatch.setattr(dist, "import_ray", lambda what: ray)
    monkeypatch.setattr(dist, "_JOINED", {"address": None, "node": None}, raising=False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    return dist, inits


def test_ensure_ray_sizes_the_embedded_ray_and_joins_the_cluster_in_ray_address(monkeypatch):
    """The embedded Ray gets the CPUs asked for (``--jobs``, ``--cpus``); ``$RAY_ADDRESS`` names a cluster to join
    (its own resources: no CPU count), and an address given wins over it."""
    dist, inits = _recording_ray(monkeypatch)
    reached = []
    monkeypatch.setattr(dist, "_check_reachable", lambda address: reached.append(address))
    assert dist.ensure_ray(num_cpus=3) is True
    # a new Ray of its own ("local"): plain ray.init joins a cluster `ray start` left on this machine (or tries a dead
    # one's stale /tmp/ray/ray_current_cluster) and then refuses num_cpus
    assert inits == [{"address": "local", "num_cpus": 3, "include_dashboard": False,
                      "logging_level": logging.WARNING}]
    inits.clear()
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")
    assert dist.ensure_ray(num_cpus=3) is True
    assert [i.get("address") for i in inits] == ["10.0.0.1:6379"] and "num_cpus" not in inits[0]
    dist.ensure_ray("10.0.0.2:6379")
    assert [i.get("address") for i in inits] == ["10.0.0.1:6379", "10.0.0.2:6379"]
    assert reached == ["10.0.0.1:6379", "10.0.0.2:6379"]  # each checked before Ray is asked


def test_the_embedded_ray_gets_no_more_cpus_than_ray_detects_in_a_container(monkeypatch):
    """The affinity does not show a container's CPU quota, which Ray reads: the embedded Ray gets the smaller of the
    two (it got the quota alone before 2026-12-04, then briefly the affinity alone); without Ray's helper, the
    affinity."""
    import types

    import agents.evaluation as ev
    from agents.distributed import embedded_cpus

    monkeypatch.setattr(ev, "usable_cpus", lambda: 8)
    quota = types.SimpleNamespace(_private=types.SimpleNamespace(utils=types.SimpleNamespace(get_num_cpus=lambda: 2)))
    assert embedded_cpus(quota) == 2
    wide = types.SimpleNamespace(_private=types.SimpleNamespace(utils=types.SimpleNamespace(get_num_cpus=lambda: 64)))
    assert embedded_cpus(wide) == 8
    assert embedded_cpus(types.SimpleNamespace()) == 8


def test_ray_init_does_not_take_away_the_programs_own_sigterm_handler(monkeypatch):
    """ray.init installs a SIGTERM handler that exits, which replaced the evaluate command's (SIGTERM on --backend
    ray then exited 15 without keeping its word about the finished games): a handler of the program's own, or an
    ignored SIGTERM, is put back; Python's default is left to Ray."""
    dist, inits = _recording_ray(monkeypatch)
    ray = dist.import_ray("x")

    def rays_handler(signum, frame):
        raise SystemExit(signum)

    def init(**kwargs):
        inits.append(kwargs)
        signal.signal(signal.SIGTERM, rays_handler)

    ray.init = init

    def ours(signum, frame):
        pass

    before = signal.getsignal(signal.SIGTERM)
    try:
        for mine, kept in ((ours, ours), (signal.SIG_IGN, signal.SIG_IGN), (signal.SIG_DFL, rays_handler)):
            signal.signal(signal.SIGTERM, mine)
            assert dist.ensure_ray(num_cpus=1) is True and signal.getsignal(signal.SIGTERM) == kept
    finally:
        signal.signal(signal.SIGTERM, before)


def test_the_embedded_ray_gets_the_cpus_this_process_may_use_when_no_count_is_given(monkeypatch):
    """Ray counts every core of the machine, not the process's CPU affinity (``taskset``, a container cpuset), so
    the sweep's check (against the affinity) and the embedded Ray disagreed; ensure_ray now gives it the affinity's
    count."""
    import agents.evaluation as ev

    dist, inits = _recording_ray(monkeypatch)
    monkeypatch.setattr(ev, "usable_cpus", lambda: 1)
    assert dist.ensure_ray() is True and inits[0]["num_cpus"] == 1 and inits[0]["address"] == "local"


def test_an_address_without_a_port_is_left_to_ray(monkeypatch):
    """Only ``host:port`` is probed: ``local``, ``auto`` and ``ray://`` addresses are Ray's to read (``local`` starts a
    new local Ray), not refused as a bad host:port."""
    from agents.distributed import _check_reachable

    for address in ("local", "auto", "ray://10.0.0.1:10001"):
        _check_reachable(address, timeout=0.1)
    dist, inits = _recording_ray(monkeypatch)
    assert dist.ensure_ray("local") is True and [i.get("address") for i in inits] == ["local"]


def test_task_cpus_beyond_a_ray_client_session_are_only_warned_about(monkeypatch, caplog):
    """A session joined through Ray Client (``ray://``: no node of its own in this process) is a cluster elsewhere,
    which may grow: cpus_per_task beyond its CPUs now is warned about, not refused; the same CPUs of a session this
    process started (its head node) can never grow and are refused."""
    import types

    import agents.distributed as dist

    ray = types.SimpleNamespace(is_initialized=lambda: True, cluster_resources=lambda: {"CPU": 2.0},
                                _private=types.SimpleNamespace(worker=types.SimpleNamespace(_global_node=None)))
    monkeypatch.setattr(dist, "import_ray", lambda what: ray)
    monkeypatch.setattr(dist, "ensure_ray", lambda address, num_cpus, what: False)
    monkeypatch.setattr(dist, "_WARNED_CPUS", set(), raising=False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with caplog.at_level(logging.WARNING, logger="agents.distributed"):
        dist.prepare(["greedy"], cpus_per_task=3)
    assert "cpus_per_task=3 is more than the 2 CPUs the Ray cluster this process is connected to has now" in caplog.text
    ray._private.worker._global_node = types.SimpleNamespace(head=True)
    with pytest.raises(ValueError, match=r"cpus_per_task=3 is more than the 2 CPUs of the Ray session already open"):
        dist.prepare(["greedy"], cpus_per_task=3)


def test_chunks_reserve_cpus_per_task_and_are_not_replayed_whole_by_ray(monkeypatch):
    """Each chunk's task asks Ray for ``cpus_per_task`` CPUs (what the check against the session's CPUs promises), and
    Ray's own retries are off: a lost chunk is resubmitted with its unfinished deals only, by run_chunks."""
    options = []
    distributed = _fake_streaming_ray(monkeypatch, lambda ref: {"deal": ref}, options=options)
    records = [r for batch in distributed.run_chunks([("greedy", [0, 1], {"seed": 0})], cpus_per_task=1.5)
               for r in batch]
    assert [r["deal"] for r in records] == [0, 1]
    assert [(o["num_cpus"], o["max_retries"]) for o in options] == [(1.5, 0)]


def test_every_chunk_is_played_a_one_deal_chunk_too(monkeypatch):
    """Chunks of one deal (``chunk_size=1``, or the last of an uneven split) are played like any other; an empty one
    sends no task."""
    distributed = _fake_streaming_ray(monkeypatch, lambda ref: {"deal": ref})
    tasks = [("greedy", [0, 1], {"seed": 0}), ("greedy", [2], {"seed": 0}), ("greedy", [], {"seed": 0}),
             ("random", [0], {"seed": 0})]
    records = [r for batch in distributed.run_chunks(tasks) for r in batch]
    assert sorted(r["deal"] for r in records) == [0, 0, 1, 2]


def test_each_agent_is_warmed_once_per_game_it_plays(monkeypatch):
    """Before the chunks are sent, each agent is built here once per (spec, config) -- so that a learned table is
    trained and cached once, not once on every worker -- and only once however many chunks it has."""
    import agents.distributed as distributed
    import agents.registry

    built = []
    monkeypatch.setattr(agents.registry, "make_agent",
                        lambda spec, *, system, rules, seed: built.append((spec, system.name, seed)))
    american, english = {"seed": 3, "scoring": "american"}, {"seed": 3, "scoring": "english"}
    distributed._warm_agents([("greedy", [0, 1], american), ("greedy", [2, 3], american), ("greedy", [0, 1], english),
                              ("random", [0, 1], american)])
    assert built == [("greedy", "american", 3), ("greedy", "english", 3), ("random", "american", 3)]


def test_a_chunk_that_always_loses_its_worker_is_sent_retries_more_times_then_given_up(monkeypatch):
    """``retries=2``: the chunk is played three times in all (the first and two resubmissions), then the evaluation
    stops saying so -- never resubmitted for ever (Ray faked; a bound turns a runaway loop into a failure)."""
    from agents.evaluation import WorkerLostError

    tries = []

    def get(ref):
        tries.append(ref)
        assert len(tries) <= 10, "resubmitted past its retries"
        raise _FakeRayError("worker died")

    distributed = _fake_streaming_ray(monkeypatch, get)
    with pytest.raises(WorkerLostError, match=r"deals \[4, 5\] could not be played on Ray after 2 resubmissions"):
        list(distributed.run_chunks([("greedy", [4, 5], {"seed": 0})], retries=2))
    assert tries == [4, 4, 4]


def test_a_caller_that_stops_early_cancels_the_chunks_still_running(monkeypatch):
    """A caller that stops reading the records (Ctrl-C, an error in the harness) leaves no chunk playing on: every task
    still running is cancelled, and none that already ended."""
    cancelled = []
    distributed = _fake_streaming_ray(monkeypatch, lambda ref: {"deal": ref}, cancelled=cancelled)
    stream = distributed.run_chunks([("greedy", [0, 1], {"seed": 0}), ("greedy", [2, 3], {"seed": 0}),
                                     ("greedy", [4], {"seed": 0})])
    assert [next(stream)[0]["deal"] for _ in range(3)] == [0, 1, 2]  # the first task ended, the second is playing
    assert cancelled == []
    stream.close()
    assert sorted(task.deals for task in cancelled) == [[3], [4]]  # the deals each cancelled task had still to send


def test_an_address_whose_port_has_a_digit_int_cannot_read_is_named():
    """Before, 'localhost:6²' (str.isdigit takes '²') failed in int() with "invalid literal for int()"."""
    from agents.distributed import RayConnectionError, _check_reachable

    with pytest.raises(RayConnectionError, match=r"Ray address 'localhost:6²': expected host:port"):
        _check_reachable("localhost:6²")


@pytest.mark.parametrize("argv", [["evaluate", "--agent", "greedy", "--games", "1", "--backend", "ray"],
                                  ["evaluate", "--agent", "greedy", "--games", "1"], ["sweep", "config.yaml"]])
@pytest.mark.parametrize("address", ["", "  "])
def test_an_empty_address_is_a_usage_error(argv, address, tmp_path, monkeypatch, capsys):
    """Before, ``--address ''`` named no cluster and quietly meant $RAY_ADDRESS or an embedded Ray (and with the local
    backend passed without the "needs --backend ray" a real address gets)."""
    from helpers import cli_status

    monkeypatch.chdir(tmp_path)
    assert cli_status([*argv, "--address", address]) == 2
    err = capsys.readouterr().err
    assert f"argument --address: {address!r}: expected a Ray address such as 10.0.0.1:6379, 'auto' or ray://host:10001 " \
           f"(leave --address out for $RAY_ADDRESS or an embedded Ray)" in err, err
    assert os.listdir(tmp_path) == []


@requires_ray
def test_ensure_ray_refuses_an_empty_address_before_starting_ray(monkeypatch):
    import ray

    from agents.distributed import RayConnectionError, ensure_ray

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda *a, **k: pytest.fail("Ray was started"))
    with pytest.raises(RayConnectionError, match=r"Ray address '': expected host:port .* or None for \$RAY_ADDRESS"):
        ensure_ray("")
