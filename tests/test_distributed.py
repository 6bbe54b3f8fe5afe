"""Ray back end of the evaluation harness and Ray Tune sweeps (need the ``distributed`` extra).

One embedded Ray (2 CPUs) serves the whole module; budgets are tiny so the module stays fast on 2 shared cores.
"""

from __future__ import annotations

import json
import logging
import os
import sys

import pytest

ray = pytest.importorskip(
    "ray", reason='Ray is not installed: these tests need the distributed extra, pip install "pokersquares_env[distributed]"'
)
pytest.importorskip(
    "ray.tune", reason='Ray Tune is not installed: these tests need the distributed extra, pip install "pokersquares_env[distributed]"'
)

from agents.evaluation import evaluate  # noqa: E402

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
    crash_dir = tmp_path_factory.mktemp("crash")
    os.environ[CRASH_MARKER_ENV] = str(crash_dir)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    _register_test_agents()
    if ray.is_initialized():
        ray.shutdown()
    ray.init(
        num_cpus=2, include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False,
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


def test_ray_evaluation_equals_local(local_ray):
    specs = ["greedy", "random", "mc:rollouts=2,rollout=heuristic"]
    kw = dict(games=12, seed=7, scoring="english", rules={"jokers": 1}, progress=False)
    on_ray = evaluate(specs, backend="ray", chunk_size=5, **kw)
    local = evaluate(specs, backend="local", **kw)
    assert _without_timing(on_ray.records) == _without_timing(local.records)
    assert _without_timing_summary(on_ray.summary) == _without_timing_summary(local.summary)
    assert on_ray.paired() == local.paired()
    assert sorted((r["agent"], r["deal"]) for r in on_ray.records) == [(a, i) for a in sorted(specs) for i in range(12)]


def test_lost_worker_keeps_finished_games(local_ray, caplog):
    """A worker that dies mid-chunk loses no finished game: only unfinished deals run again, results unchanged."""
    crash_dir = local_ray
    games = 8
    with caplog.at_level(logging.WARNING, logger="agents.distributed"):
        result = evaluate(["crash-once:after=3"], games=games, seed=11, backend="ray", chunk_size=games,
                          progress=False)
    assert (crash_dir / "crashed").exists(), "the test agent never crashed its worker"
    assert any("resubmitting its 5 unfinished deals" in r.getMessage() for r in caplog.records)
    assert not result.errors and len(result.records) == games
    played = (crash_dir / "played.log").read_text().splitlines()
    assert len(played) == games and len(set(played)) == games  # the 3 finished games were not played again
    greedy = evaluate(["greedy"], games=games, seed=11, progress=False)
    assert [r["placements"] for r in result.records] == [r["placements"] for r in greedy.records]


def test_cli_ray_backend(local_ray, capsys):
    from pokersquares_env.cli import main

    assert main(["evaluate", "--agent", "rules", "--games", "6", "--backend", "ray", "--format", "json",
                 "--no-progress"]) == 0
    row = json.loads(capsys.readouterr().out.splitlines()[0])
    local = evaluate("rules", games=6, progress=False).summary[0]
    assert row["mean"] == pytest.approx(local["mean"]) and row["games"] == 6
    assert main(["evaluate", "--agent", "rules", "--address", "127.0.0.1:1"]) == 2
    assert "needs --backend ray" in capsys.readouterr().err
