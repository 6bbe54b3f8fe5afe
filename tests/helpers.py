"""Small helpers shared by several test modules (importable as ``helpers``, see conftest.py)."""

from __future__ import annotations


def cli_status(argv: list[str]) -> int:
    """The exit status of ``pokersquares ARGV``: what ``main`` returns, or the code of argparse's usage error
    (``SystemExit``), so a test need not know which of the two refuses a bad value."""
    from pokersquares_env.cli import main

    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def play_game(agent, game, deck):
    """Play ``deck`` to the end with ``agent`` (checking every cell is legal): ``(placements, score)``."""
    state = game.init(deck, validate=False)
    agent.reset()
    while not state.terminal:
        cell = agent.act(None, None, game, state.copy())
        assert cell in game.legal_cells(state)
        game.apply(state, cell)
    return list(state.placements), game.score(state)


def tune_trial_configs(captured, tmp_path):
    """Every trial config Ray Tune would run from the ``Tuner`` keyword arguments ``captured`` of a stopped
    ``run_sweep``: its search algorithm is asked for each trial, as Tune would (nothing trains, no Ray starts)."""
    from ray.tune.experiment import Experiment

    tune_config = captured["tune_config"]
    search = tune_config.search_alg
    search.add_configurations([Experiment("draws", lambda cfg: None, config=captured["param_space"],
                                          num_samples=tune_config.num_samples, storage_path=str(tmp_path / "tune"))])
    draws = []
    while (trial := search.next_trial()) is not None:
        draws.append(trial.config)
    return draws
