"""Reproducibility promises: evaluation records, parallel play, table training, the Soliter solver, sweep draws, CLI.

Each test runs the same thing twice (or two ways that must agree) and compares the real outputs; where a seed is
the input, another seed must give another output, so a test cannot pass on a constant.  Budgets are tiny.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from agents.evaluation import evaluate
from agents.tables import improve_tables, train_tables
from helpers import tune_trial_configs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MC = "mc:rollouts=3,candidates=3,games=2000"
SEARCH = "search:rollouts=4,candidates=3,games=2000,phases=4"


@pytest.fixture(autouse=True)
def _table_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path_factory.getbasetemp() / "pscache"))


def _games(result, agent=None):
    """``(agent, deal) -> record`` without the timing, for the given agent or all of them."""
    return {(r["agent"], r["deal"]): {k: v for k, v in r.items() if k != "seconds"}
            for r in result.records if agent is None or r["agent"] == agent}


def _played(games):
    """``(agent, deal) -> (placements, score)``: what was played and what it scored."""
    return {key: (r["placements"], r["score"]) for key, r in games.items()}


# --------------------------------------------------------------------------- evaluation records


def test_the_first_deals_of_a_longer_run_are_the_shorter_run():
    """Records do not depend on ``games``: the first N deals of a 2N-game run are the N-game run, deal by deal."""
    agents = ["random", "greedy", "rules", MC]
    short = _games(evaluate(agents, games=3, seed=7, progress=False))
    long = _games(evaluate(agents, games=6, seed=7, progress=False))
    assert set(short) == {(a, d) for a in agents for d in range(3)}
    assert {key: r for key, r in long.items() if key[1] < 3} == short
    assert _played({key: r for key, r in long.items() if key[1] < 3}) == _played(short)
    other = _games(evaluate(agents, games=3, seed=8, progress=False))
    assert _played(other) != _played(short)  # the seed, not a constant, decides the games


@pytest.mark.parametrize("agent", ["random", "greedy", MC])
def test_an_agent_plays_the_same_games_alone_and_alongside_others(agent):
    """Records do not depend on the agent list: alone, first or last among others, an agent's games are the same."""
    others = [a for a in ("random", "greedy", "rules", MC) if a != agent]
    alone = _games(evaluate([agent], games=4, seed=3, progress=False))
    first = _games(evaluate([agent, *others], games=4, seed=3, progress=False), agent)
    last = _games(evaluate([*others, agent], games=4, seed=3, progress=False), agent)
    assert len(alone) == 4 and all("error" not in r for r in alone.values())
    assert first == alone and last == alone
    assert _played(first) == _played(alone)


# --------------------------------------------------------------------------- processes and chunks


@pytest.mark.parametrize("spec", [MC, SEARCH])
def test_rollout_agents_play_the_same_games_in_any_process_and_chunk(spec):
    """``mc`` and ``search`` (re-seeded per deal) play the same games with jobs=1 or 2 and any chunk size."""
    one = _games(evaluate([spec], games=4, seed=5, progress=False, chunk_size=4))
    assert len(one) == 4 and all("error" not in r for r in one.values())
    for jobs, chunk_size in ((1, 1), (1, 3), (2, 1), (2, 3)):
        other = _games(evaluate([spec], games=4, seed=5, progress=False, jobs=jobs, chunk_size=chunk_size))
        assert other == one, f"jobs={jobs}, chunk_size={chunk_size}"


# --------------------------------------------------------------------------- table training


@pytest.mark.parametrize("features", ["outs", "claims"])
def test_table_training_is_deterministic_for_a_seed(features):
    """``train_tables``: the same seed gives identical values and counts; another seed other values."""
    if features == "claims":
        pytest.importorskip("numba")
    a = train_tables("american", games=1000, phases=2, batch=500, seed=3, features=features)
    b = train_tables("american", games=1000, phases=2, batch=500, seed=3, features=features)
    c = train_tables("american", games=1000, phases=2, batch=500, seed=4, features=features)
    assert a.features == features and a.counts.sum() > 0
    assert np.array_equal(a.values, b.values) and np.array_equal(a.counts, b.counts)
    assert not np.array_equal(a.values, c.values)


def test_policy_iteration_is_deterministic_for_a_seed():
    """``improve_tables``: the same seed gives identical arrays, also on one thread; another seed other arrays."""
    numba = pytest.importorskip("numba")
    base = train_tables("american", games=1000, phases=2, batch=500, seed=3)
    a = improve_tables(base, games=200, batch=100, seed=1)
    b = improve_tables(base, games=200, batch=100, seed=1)
    c = improve_tables(base, games=200, batch=100, seed=2)
    assert np.array_equal(a.values, b.values) and np.array_equal(a.counts, b.counts)
    assert not np.array_equal(a.values, c.values)
    threads = numba.get_num_threads()
    numba.set_num_threads(1)  # games run in parallel threads: their number must not matter
    try:
        single = improve_tables(base, games=200, batch=100, seed=1)
    finally:
        numba.set_num_threads(threads)
    assert np.array_equal(a.values, single.values) and np.array_equal(a.counts, single.counts)


# --------------------------------------------------------------------------- Soliter solver

# deals the solver wins within the node budget: the fast path (classic) and the general one (joker)
SOLVED = [("classic", 1), ("joker", 2)]
NODES = 5000


def _solve(variant, seed, max_nodes=NODES):
    import gymnasium as gym

    import pokersquares_env  # noqa: F401  (registers Soliter-v0)
    from pokersquares_env.soliter import solve_result

    env = gym.make("Soliter-v0", variant=variant).unwrapped
    env.reset(seed=seed)
    # a generous time limit: only the node budget may end the search, so the result is deterministic
    return solve_result(env, max_seconds=120, max_nodes=max_nodes)


@pytest.mark.parametrize("variant, seed", SOLVED)
def test_soliter_solver_is_deterministic(variant, seed):
    """Solving the same seeded deal twice gives the same plan and the same node count."""
    a, b = _solve(variant, seed), _solve(variant, seed)
    assert a.plan is not None and 0 < a.nodes <= NODES
    assert (a.plan, a.nodes, a.exhausted) == (b.plan, b.nodes, b.exhausted)
    other = _solve(variant, seed + 1)
    assert (other.plan, other.nodes) != (a.plan, a.nodes)


def test_soliter_solver_node_budget_cuts_deterministically():
    """A node budget ends the search at the same node every time: a budget one short of the solving search
    finds no plan after exactly ``budget + 1`` nodes, and the solving budget finds the same plan again."""
    full = _solve("classic", 1)
    assert full.plan is not None
    for _ in range(2):
        cut = _solve("classic", 1, max_nodes=full.nodes - 1)
        assert cut.plan is None and cut.nodes == full.nodes and not cut.exhausted
        assert _solve("classic", 1, max_nodes=full.nodes).plan == full.plan


def test_soliter_solver_gives_the_same_plan_in_another_process():
    """The plan and node count do not depend on the process (e.g. its string-hash seed)."""
    full = _solve("classic", 1)
    code = ("import json, sys; sys.path.insert(0, 'tests'); from test_reproducibility import _solve; "
            "r = _solve('classic', 1); print(json.dumps([r.plan, r.nodes]))")
    for hash_seed in ("0", "12345"):
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                             env={**os.environ, "PYTHONHASHSEED": hash_seed}, check=True).stdout
        assert json.loads(out) == [full.plan, full.nodes], f"PYTHONHASHSEED={hash_seed}"


# --------------------------------------------------------------------------- sweep draws


def _sweep_draws(tmp_path, monkeypatch, search_seed):
    """The trial configs ``run_sweep`` would give Ray Tune for a small random search seeded ``search_seed``.

    ``run_sweep`` is stopped at the Tuner (nothing trains, Ray is not started); the search algorithm and
    space it built are then asked for every trial, as Tune would.
    """
    pytest.importorskip("ray.tune")
    from ray import tune

    import agents.distributed
    import agents.sweep
    from agents.sweep import run_sweep

    captured = {}

    class Stop(Exception):
        pass

    class CapturingTuner:
        def __init__(self, trainable, **kwargs):
            captured.update(kwargs)
            raise Stop

    monkeypatch.setattr(agents.distributed, "ensure_ray", lambda *args, **kwargs: False)
    monkeypatch.setattr(agents.sweep, "check_trainers_installed", lambda config: None)  # nothing trains: no torch needed
    monkeypatch.setattr(tune, "Tuner", CapturingTuner)
    config = {
        "name": "draws", "out": str(tmp_path / f"sweep{search_seed}"), "train": {"algo": "fast-ppo"},
        "space": {"reward_mode": ["line", "terminal"], "learning_rate": {"loguniform": [1e-4, 3e-3]},
                  "ent_coef": {"uniform": [0.0, 0.01]}, "num_steps": {"choice": [32, 64]},
                  "seed": {"randint": [0, 1000]}},
        "samples": 3, "search_seed": search_seed,
    }
    with pytest.raises(Stop):
        run_sweep(config, verbose=0)
    return tune_trial_configs(captured, tmp_path)


def test_sweep_trial_draws_are_reproducible_from_the_search_seed(tmp_path, monkeypatch):
    """The same ``search_seed`` draws the same trials; another seed draws others (the grid part stays)."""
    a = _sweep_draws(tmp_path, monkeypatch, 0)
    b = _sweep_draws(tmp_path, monkeypatch, 0)
    c = _sweep_draws(tmp_path, monkeypatch, 1)
    assert len(a) == 6  # 2 grid values x 3 samples
    assert a == b
    assert a != c and [t["reward_mode"] for t in a] == [t["reward_mode"] for t in c]


# --------------------------------------------------------------------------- CLI


def _cli_json(seed, tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "pokersquares_env", "evaluate", "--agent", "greedy", "--agent", "random",
         "--games", "6", "--seed", str(seed), "--format", "json", "--no-progress"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=True,
        env={**os.environ, "POKERSQUARES_CACHE": str(tmp_path)},
    ).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    for row in rows:
        assert row.pop("seconds_per_game") >= 0
    return rows


def test_cli_evaluate_json_is_identical_but_for_timing(tmp_path):
    """Two runs of ``pokersquares evaluate --format json`` print the same JSON apart from ``seconds_per_game``."""
    a, b = _cli_json(4, tmp_path), _cli_json(4, tmp_path)
    assert [(r["agent"], r["games"], r["errors"]) for r in a] == [("greedy", 6, 0), ("random", 6, 0)]
    assert a == b
    assert _cli_json(5, tmp_path) != a
