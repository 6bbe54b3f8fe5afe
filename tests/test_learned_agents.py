"""Learned agents (``fastppo:``, ``dqn:``) loaded from saved models: deterministic ties, refused diverged weights.

The models are untrained networks saved as the trainers save them (no training: these tests take seconds)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason='learned agents need torch: pip install "pokersquares_env[train]"')

from agents.evaluation import evaluate  # noqa: E402
from agents.registry import make_agent  # noqa: E402


def _untrained_model(folder: Path, algo: str = "fast-ppo", seed: int = 0) -> Path:
    """A run folder holding the ``model.pt`` of an untrained ``algo`` network (weights drawn from ``seed``)."""
    from agents.config import TrainConfig
    from agents.fast_ppo import make_net, save_model

    cfg = TrainConfig(algo=algo, out=str(folder)).resolved()
    folder.mkdir(parents=True, exist_ok=True)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = make_net(cfg.net, cfg.hidden)
    save_model(folder / "model.pt", model, cfg)
    return folder


def _untrained_maskable_ppo(folder: Path) -> Path:
    """A folder holding the ``model.zip`` of an untrained sb3-contrib MaskablePPO (skips without sb3-contrib)."""
    sb3_contrib = pytest.importorskip("sb3_contrib")
    import gymnasium as gym

    import pokersquares_env  # noqa: F401 - registers PokerSquares-v0

    folder.mkdir(parents=True, exist_ok=True)
    sb3_contrib.MaskablePPO("MlpPolicy", gym.make("PokerSquares-v0"), n_steps=16, batch_size=16, seed=0,
                            device="cpu").save(folder / "model.zip")
    return folder


def _strip(records):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in records]


@pytest.mark.parametrize("algo, prefix", [("fast-ppo", "fastppo"), ("dqn", "dqn")])
def test_jobs_do_not_change_the_games_of_a_learned_agent(tmp_path, monkeypatch, algo, prefix):
    """Before: the agent took ``np.nanargmax`` of the network's scores, and cells it scores alike (symmetric cells
    of an early board) differ only by float noise that depends on torch's thread count: ``--jobs 1`` (this process's
    threads) and ``--jobs 2`` (one thread per worker) played different games on the same deals."""
    import agents.evaluation as ev

    spec = f"{prefix}:{_untrained_model(tmp_path / algo, algo)}"
    monkeypatch.setattr(ev, "usable_cpus", lambda: 2)  # two workers even on a one-CPU machine
    threads = torch.get_num_threads()
    torch.set_num_threads(2)  # this process sums in another order than the one-thread workers
    try:
        one = evaluate(spec, games=8, seed=3, progress=False, jobs=1)
    finally:
        torch.set_num_threads(threads)
    two = evaluate(spec, games=8, seed=3, progress=False, jobs=2, chunk_size=4)
    assert not one.errors and not two.errors
    assert _strip(one.records) == _strip(two.records)


class _FixedScores(torch.nn.Module):
    """A stand-in network scoring every observation with the same row of ``scores`` (float64, no rounding)."""

    def __init__(self, scores):
        super().__init__()
        self.scores = torch.as_tensor(scores, dtype=torch.float64)

    def forward(self, obs):
        return self.scores.expand(obs.shape[0], -1), None


def test_scores_within_float_noise_pick_the_lowest_cell_and_real_differences_the_best(tmp_path):
    """Before: of two cells scored 0.5 and 0.5 + 1e-8 (float noise) the higher won, so the thread count chose the
    cell; now the lowest of the cells within the tolerance, in ``act`` and ``act_batch`` alike."""
    from pokersquares_env.core import PokerSquaresGame
    from pokersquares_env.env import encode_observation, mask_array

    agent = make_agent(f"fastppo:{_untrained_model(tmp_path / 'm')}")
    game = PokerSquaresGame()
    state = game.init(game.deal(np.random.default_rng(0)))
    obs = encode_observation(game, state)
    mask = mask_array(game.legal_mask(state))
    scores = np.zeros(25)
    scores[[3, 7, 9]] = [0.5, 0.5 + 1e-8, 0.5 - 1e-8]
    agent.model = _FixedScores(scores)
    assert agent.act(obs, {"action_mask": mask}) == 3
    assert list(agent.act_batch(np.stack([obs, obs]), np.stack([mask, mask]))) == [3, 3]
    # an illegal cell is never played, however it is scored
    no3 = mask.copy()
    no3[3] = 0
    assert agent.act(obs, {"action_mask": no3}) == 7
    assert list(agent.act_batch(obs[None], no3[None])) == [7]
    # a real difference still decides
    scores[7] = 0.5 + 1e-3
    agent.model = _FixedScores(scores)
    assert agent.act(obs, {"action_mask": mask}) == 7
    assert list(agent.act_batch(obs[None], mask[None])) == [7]


def test_best_cells_tolerance_is_relative_to_the_best_score():
    from agents.learned import best_cells

    nan = np.nan
    values = np.array([[nan, 1000.0, 1000.0 + 1e-3, 999.0],  # 1e-3 is within 1e-5 of 1000: a tie
                       [nan, 0.5, 0.5 + 1e-3, nan],  # 1e-3 is beyond 1e-5 of 1: the higher
                       [-np.inf, nan, -np.inf, nan]])  # every legal cell as bad as can be: the lowest legal one
    assert list(best_cells(values)) == [1, 2, 0]
    with pytest.raises(ValueError, match="every legal cell a NaN score"):
        best_cells(np.full((1, 25), nan))


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_a_model_with_non_finite_weights_is_refused_when_loaded(tmp_path, bad):
    """Before: a diverged model (NaN weights) loaded, then failed every game of an evaluation, move by move, with
    numpy's "All-NaN slice encountered"."""
    folder = _untrained_model(tmp_path / "run", "dqn")
    blob = torch.load(folder / "model.pt", weights_only=True)
    name = sorted(blob["state_dict"])[-1]
    blob["state_dict"][name] = blob["state_dict"][name].clone()
    blob["state_dict"][name].view(-1)[:2] = bad
    torch.save(blob, folder / "model.pt")
    message = (rf"model.pt': tensor '{name}' holds 2 non-finite value\(s\) \(NaN or infinity\) of \d+: the training "
               rf"diverged; expected finite weights")
    with pytest.raises(ValueError, match=message):
        make_agent(f"dqn:{folder}")
    spec = re.escape(f"dqn:{folder}")
    with pytest.raises(ValueError, match=rf"agent spec '{spec}' cannot be built: ValueError: .*{message}"):
        evaluate(["random", f"dqn:{folder}"], games=2, progress=False)


def test_best_cells_tolerance_is_at_least_absolute_near_zero_and_every_row_needs_a_number():
    from agents.learned import best_cells

    nan = np.nan
    assert list(best_cells(np.array([[0.0, 1e-8, nan], [nan, -1e-8, 0.0]]))) == [0, 1]  # float noise around 0: ties
    with pytest.raises(ValueError, match="every legal cell a NaN score"):
        best_cells(np.array([[1.0, 2.0], [nan, nan]]))  # one row without a number is enough


def test_a_batch_row_without_a_legal_cell_does_not_stop_the_others(tmp_path):
    from pokersquares_env.core import PokerSquaresGame
    from pokersquares_env.env import encode_observation, mask_array

    agent = make_agent(f"fastppo:{_untrained_model(tmp_path / 'm')}")
    game = PokerSquaresGame()
    state = game.init(game.deal(np.random.default_rng(0)))
    obs, mask = encode_observation(game, state), mask_array(game.legal_mask(state))
    scores = np.zeros(25)
    scores[[3, 7]] = [0.5, 0.9]
    agent.model = _FixedScores(scores)
    no7 = mask.copy()
    no7[7] = 0
    assert list(agent.act_batch(np.stack([obs, obs]), np.stack([no7, np.zeros_like(mask)]))) == [3, 7]


def test_trained_game_reads_the_run_folder_of_its_own_algorithm_only(tmp_path):
    import json

    from agents.learned import trained_game
    from pokersquares_env.core import Rules

    (tmp_path / "config.json").write_text(json.dumps({"algo": "dqn", "jokers": 1, "scoring": "english"}))
    assert trained_game(tmp_path / "model.zip", "maskable-ppo") is None  # another algorithm's run
    rules, system = trained_game(tmp_path / "model.pt", "dqn")
    assert rules == Rules(jokers=1) and system.name == "english"
    rules, system = trained_game(tmp_path / "model.pt", "fast-ppo", config={"algo": "fast-ppo"})
    assert rules == Rules() and system.name == "american"  # no scoring recorded: American, the default


def test_another_game_warning_names_five_of_a_kind_points_in_a_game_with_jokers_once_a_model(monkeypatch):
    import warnings

    import agents.learned
    from agents.learned import warn_if_other_game
    from pokersquares_env.core import Rules
    from pokersquares_env.scoring import point_system

    monkeypatch.setattr(agents.learned, "_WARNED", set())
    ones = {"one_pair": 1, "two_pair": 2, "three_of_a_kind": 3, "straight": 4, "flush": 5, "full_house": 6,
            "four_of_a_kind": 7, "straight_flush": 8, "royal_flush": 9}
    trained = (Rules(), point_system(ones))  # no jokers; five of a kind at four of a kind's 7
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            warn_if_other_game("fastppo:run", trained, point_system({**ones, "five_of_a_kind": 20}), {"jokers": 1})
    assert len(caught) == 1
    assert "rules plain (here jokers=1) and 'custom' points (here 'custom')" in str(caught[0].message)


def test_trained_game_reads_the_run_above_a_checkpoint_and_its_point_system_file(tmp_path):
    import json

    from agents.learned import trained_game
    from pokersquares_env.core import Rules
    from pokersquares_env.scoring import point_system

    table = point_system({"one_pair": 1, "two_pair": 2, "three_of_a_kind": 3, "straight": 4, "flush": 5,
                          "full_house": 6, "four_of_a_kind": 7, "straight_flush": 8, "royal_flush": 9})
    (tmp_path / "config.json").write_text(json.dumps({"algo": "dqn", "placement": "adjacent", "first_cell": "center",
                                                      "scoring": "/elsewhere/points.json"}))
    (tmp_path / "point_system.json").write_text(json.dumps(table.to_json()))
    for model in (tmp_path / "model.pt", tmp_path / "checkpoints" / "model.pt"):
        rules, system = trained_game(model, "dqn")
        assert rules == Rules(placement="adjacent", first_cell="center") and system.points == table.points


def test_best_cells_never_picks_an_unscored_cell_when_the_best_is_infinite():
    import warnings

    from agents.learned import best_cells

    nan, inf = np.nan, np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # before: numpy's 'invalid value encountered in subtract' (inf - inf)
        assert list(best_cells(np.array([[nan, -inf, nan, -inf], [nan, 1.0, inf, inf]]))) == [1, 2]


@pytest.mark.parametrize("learned", ["fastppo", "ppo"])
def test_a_learned_agent_refuses_a_missing_or_misshapen_observation_naming_the_expected_shape(tmp_path, learned):
    """Before: obs=None without game and state was an AttributeError ('NoneType' object has no attribute 'board'),
    and an observation of the wrong shape torch's or SB3's own error."""
    if learned == "ppo":
        agent = make_agent(f"ppo:{_untrained_maskable_ppo(tmp_path / 'p')}")
    else:
        agent = make_agent(f"fastppo:{_untrained_model(tmp_path / 'm')}")
    info = {"action_mask": np.ones(25, dtype=np.int8)}
    with pytest.raises(ValueError, match=r"obs=None without the game and state .*expected the env's observation "
                                         r"\(shape \(522,\)\) or game= and state="):
        agent.act(None, info)
    for bad, shape in ((np.zeros(3, np.float32), r"\(3,\)"), (np.zeros((1, 522), np.uint8), r"\(1, 522\)")):
        with pytest.raises(ValueError, match=rf"observation of shape {shape}: expected the env's observation, "
                                             r"shape \(522,\)"):
            agent.act(bad, info)
    with pytest.raises(ValueError, match=r"observation of <U1 values: expected the env's observation"):
        agent.act(np.array(["x"] * 522), info)
    from pokersquares_env.core import PokerSquaresGame
    from pokersquares_env.env import encode_observation

    game = PokerSquaresGame()
    state = game.init(game.deal(np.random.default_rng(1)))
    obs = encode_observation(game, state)  # a good observation, as a list too, still plays a legal cell
    assert agent.act(obs, info) == agent.act(list(obs), info) == agent.act(None, None, game, state)


def test_a_learned_agent_on_a_finished_game_says_the_game_is_over(tmp_path):
    from pokersquares_env.core import PokerSquaresGame

    agent = make_agent(f"fastppo:{_untrained_model(tmp_path / 'm')}")
    game = PokerSquaresGame()
    state = game.init(game.deal(np.random.default_rng(0)))
    while not state.terminal:
        game.apply(state, game.legal_cells(state)[0])
    for call in (agent.act, agent.action_values):
        with pytest.raises(ValueError, match=r"the game is over \(25 cards placed\)"):
            call(None, None, game, state)
    with pytest.raises(ValueError, match=r"info\['action_mask'\] marks no legal cell: the game is over"):
        agent.act(None, {"action_mask": np.zeros(25, dtype=np.int8)})  # no state: the mask says so


def test_learned_agents_are_compared_with_the_game_they_were_trained_for(tmp_path, monkeypatch):
    """A torch model file holds its point system; a ppo run folder its config.json.  Named by their spec."""
    import json
    import warnings

    import agents.learned
    from agents.config import TrainConfig
    from agents.fast_ppo import make_net, save_model
    from pokersquares_env.core import Rules
    from pokersquares_env.scoring import point_system

    monkeypatch.setattr(agents.learned, "_WARNED", set())
    cfg = TrainConfig(algo="fast-ppo", out=str(tmp_path)).resolved()  # American by its config
    save_model(tmp_path / "model.pt", make_net(cfg.net, cfg.hidden), cfg, point_system=point_system("english").to_json())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agent = make_agent(f"fastppo:{tmp_path}", system="english")
        agents.learned.warn_if_other_game("plain", (Rules(), point_system("american")), None, None)  # the defaults
    assert agent.name == f"fastppo:{tmp_path}"
    with pytest.warns(RuntimeWarning, match=rf"fastppo:{re.escape(str(tmp_path))} was trained for 'english' points "
                                            r"\(here 'american'\)"):
        make_agent(f"fastppo:{tmp_path}")

    class Loaded:  # stands in for the MaskablePPO model a ppo run folder holds
        def __init__(self, path, name=None, seed=None):
            self.path, self.name = Path(path) / "model.zip", name

    monkeypatch.setattr(agents.learned, "MaskablePPOAgent", Loaded)
    (tmp_path / "config.json").write_text(json.dumps({"algo": "maskable-ppo", "jokers": 1}))
    with pytest.warns(RuntimeWarning, match=r"ppo:.* was trained for rules jokers=1 \(here plain\)"):
        agents.learned.load_ppo(str(tmp_path))


@pytest.mark.parametrize("change, message", [
    ({"hidden": [0, 64]}, r"records hidden=\[0, 64\]: expected a non-empty list of positive layer sizes"),
    ({"hidden": [True, 64]}, r"records hidden=\[True, 64\]: expected a non-empty list of positive layer sizes"),
    ({"hidden": None}, r"is not a fast-ppo or dqn model file \(it lacks net, hidden and state_dict\)"),
])
def test_a_model_file_recording_bad_layer_sizes_or_none_is_named(tmp_path, change, message):
    """A zero or boolean layer size, or no ``hidden`` at all, is named as such (a mutation audit let them through to
    torch's own errors, or a KeyError, unseen).  ``None`` here: the key is left out."""
    from agents.fast_ppo import load_policy

    path = _untrained_model(tmp_path / "run") / "model.pt"
    blob = torch.load(path, weights_only=True)
    blob.update(change)
    if change.get("hidden", 0) is None:
        del blob["hidden"]
    torch.save(blob, path)
    with pytest.raises(ValueError, match=r"model.pt'.* " + message):
        load_policy(path)


def test_only_a_weights_only_refusal_counts_as_a_file_holding_code():
    """``unsafe_objects`` names a file refused for the objects it holds, and nothing else: another kind of error
    whose text looks alike is a damaged or foreign file ("")."""
    import pickle

    from agents.fast_ppo import load_failure, unsafe_objects

    text = ("Weights only load failed. Re-running with weights_only=False runs arbitrary code.\n"
            "Unsupported global: GLOBAL posix.mkdir was not an allowed global\nCheck the documentation of torch.load")
    assert "holds Python objects other than tensors" in unsafe_objects(pickle.UnpicklingError(text))
    assert unsafe_objects(RuntimeError(text)) == ""
    assert load_failure(RuntimeError(text)) == "RuntimeError: Unsupported global: GLOBAL posix.mkdir was not an " \
                                               "allowed global"


def test_weights_that_do_not_fit_are_named_by_the_first_two_misfits_and_a_count_of_the_rest(tmp_path):
    """Torch's list of misfit weights is cut to its first two, with how many more there are (a mutation audit
    dropped the count unseen)."""
    from agents.fast_ppo import load_policy

    path = _untrained_model(tmp_path / "run") / "model.pt"
    blob = torch.load(path, weights_only=True)
    torch.save({**blob, "hidden": [8, 8]}, path)
    with pytest.raises(ValueError, match=r"hidden=\[8, 8\] network it records \(RuntimeError: size mismatch for "
                                         r"line\.0\.weight: .* size mismatch for line\.0\.bias: [^:]* \(and \d+ more\)\): "
                                         r"expected the model\.pt a fast-ppo or dqn run saved, undamaged"):
        load_policy(path)


def test_a_learned_agent_takes_the_observation_as_booleans(tmp_path):
    """The observation is 0/1 flags; given as a bool array (``obs.astype(bool)``) it is still numbers to the network
    and plays the cell the uint8 observation plays, rather than being refused as a non-numeric observation."""
    from pokersquares_env.core import PokerSquaresGame
    from pokersquares_env.env import encode_observation, mask_array

    agent = make_agent(f"fastppo:{_untrained_model(tmp_path / 'm')}")
    game = PokerSquaresGame()
    state = game.init(game.deal(np.random.default_rng(2)))
    obs = encode_observation(game, state)
    info = {"action_mask": mask_array(game.legal_mask(state))}
    assert agent.act(obs.astype(bool), info) == agent.act(obs, info)


def test_a_ppo_agent_plays_its_batches_greedily_as_act_does(tmp_path):
    """``act_batch`` (the batched ``policy_fn``) takes the policy's most likely cell, as ``act`` does: the same
    observation repeated gets one cell, every time, not a sample of an untrained (nearly uniform) policy."""
    from agents.learned import policy_fn
    from pokersquares_env.core import PokerSquaresGame
    from pokersquares_env.env import encode_observation, mask_array

    agent = make_agent(f"ppo:{_untrained_maskable_ppo(tmp_path / 'p')}")
    game = PokerSquaresGame()
    state = game.init(game.deal(np.random.default_rng(3)))
    obs, mask = encode_observation(game, state), mask_array(game.legal_mask(state))
    cells = policy_fn(agent)(np.stack([obs] * 32), np.stack([mask] * 32))
    assert cells.tolist() == [agent.act(obs, {"action_mask": mask})] * 32
