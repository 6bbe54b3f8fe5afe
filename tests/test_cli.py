"""The ``pokersquares`` command line: every seed option takes only integers >= 0, refused before anything runs."""

from __future__ import annotations

import argparse
import re

import pytest

from helpers import cli_status
from pokersquares_env.cli import COMMANDS, build_parser, main, seed_arg


def _actions(parser: argparse.ArgumentParser, path: str = "pokersquares"):
    """Every option of a parser and its sub-commands, as ``(command path, action)``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _actions(sub, f"{path} {name}")
        else:
            yield path, action


#: the options that seed a training run: at most 32 bits (agents.config.MAX_SEED), as TrainConfig takes
TRAINING_SEEDS = {"pokersquares train --seed", "pokersquares demo --seed", "pokersquares experiment reward-shaping --seeds",
                  "pokersquares experiment potential-shaping --seeds", "pokersquares experiment compare-trainers --seed"}


def test_every_seed_option_of_every_command_uses_the_seed_type():
    from agents.config import train_seed_arg

    seen = []
    for path, action in _actions(build_parser()):
        if "seed" in action.dest:
            name = f"{path} {action.option_strings[0]}"
            seen.append(name)
            expected = train_seed_arg if name in TRAINING_SEEDS else seed_arg
            assert action.type is expected, f"{name}: type {action.type}, expected {expected.__name__}"
            # the type is the one check of the value (a store that refuses a repeat, as play's do, is a store)
            assert issubclass(action.__class__, (argparse._StoreAction, argparse._StoreTrueAction)), \
                f"{name}: the type is the one check (no action of its own)"
    assert TRAINING_SEEDS <= set(seen)
    # the scan reached the nested sub-commands (experiment, soliter), not only the top level
    assert {"pokersquares evaluate --seed", "pokersquares soliter bench --seed0",
            "pokersquares experiment reward-shaping --eval-seed", "pokersquares train --seed"} <= set(seen)
    assert {path.split()[1] for path in seen} >= set(COMMANDS) - {"replay", "sweep"}


def test_every_default_a_help_text_states_is_the_default_used():
    """An option's "(default X)" is the value it takes when not given: argparse's default, or for ``train`` and
    ``experiment reward-shaping`` (whose options default to None) the config field it fills.  Checked wherever X is a
    plain value (a number, a word, a path, a list of them); texts such as "0, the first" are read by eye."""
    from agents.config import TrainConfig
    from agents.experiments.reward_shaping import ExperimentConfig

    configs = {"pokersquares train": TrainConfig(), "pokersquares experiment reward-shaping": ExperimentConfig()}

    def shown(value):
        if isinstance(value, bool):
            return "on" if value else "off"
        if isinstance(value, (list, tuple)):
            return " ".join(map(shown, value))
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return str(value)

    checked = []
    for path, action in _actions(build_parser()):
        said = re.search(r"\(default ([^;()]*)(?:\)|$)|default ([^;()]*)\)?$", action.help or "")
        if not action.option_strings or said is None:
            continue
        text = said.group(1) if said.group(1) is not None else said.group(2)
        if re.fullmatch(r"\d{1,3}(,\d{3})+", text):
            text = text.replace(",", "")  # 200,000
        if not re.fullmatch(r"[-\w./]+( [-\w./]+)*", text):
            continue
        default = action.default
        if default is None and path in configs and hasattr(configs[path], action.dest):
            default = getattr(configs[path], action.dest)
        if default is None:
            continue  # set from elsewhere (the rules' own defaults, the machine)
        name = f"{path} {action.option_strings[0]}"
        assert shown(default) == text, f"{name}: the help says default {text}, the default is {default!r}"
        checked.append(name)
    assert len(checked) >= 80, checked  # the scan reached every command, the nested ones too
    assert {"pokersquares experiment compare-trainers --timesteps", "pokersquares train --timesteps",
            "pokersquares experiment reward-shaping --timesteps", "pokersquares soliter bench --deals"} <= set(checked)


def test_seed_type_accepts_integers_from_zero_and_names_bad_text():
    assert seed_arg("0") == 0 and seed_arg("2024") == 2024
    for text, shown in (("-1", "-1"), ("1.5", "'1.5'"), ("seven", "'seven'")):
        with pytest.raises(argparse.ArgumentTypeError, match=f"^{shown}: expected an integer >= 0$"):
            seed_arg(text)


@pytest.mark.parametrize(
    "argv",
    [
        ["evaluate", "--agent", "greedy", "--games", "2", "--seed", "-1"],
        ["demo", "--seed", "-1"],
        ["play", "--seed", "-1"],
        ["solve", "--seed", "-1"],
        ["soliter", "show", "--seed", "-1"],
        ["soliter", "bench", "--seed0", "-1", "--deals", "2"],
        ["experiment", "reward-shaping", "--seeds", "0", "-1"],
        ["experiment", "potential-shaping", "--eval-seed", "-1"],
        ["experiment", "tune-tables", "--seed", "-1"],
        ["train", "--seed", "-1", "--timesteps", "10"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_a_negative_seed_exits_2_with_its_value_and_writes_nothing(argv, tmp_path, monkeypatch, capsys):
    training = argv[0] in ("demo", "train") or "--seeds" in argv  # a training seed: also at most 2**32 - 1
    expected = "expected an integer from 0 to 4294967295" if training else "expected an integer >= 0"
    _refused(argv, "-1", expected, tmp_path, monkeypatch, capsys)


@pytest.mark.parametrize(
    "argv,value,expected",
    [
        (["demo", "--jobs", "0"], "0", "expected an integer >= 1"),
        (["demo", "--minutes", "-1"], "-1", "expected a finite number > 0"),
        (["demo", "--games", "0"], "0", "expected an integer >= 1"),
        (["demo", "--scoring", "klondike"], "klondike", "expected 'american', 'english'"),
        (["solve", "--restarts", "0"], "0", "expected an integer from 1 to 100000"),
        (["solve", "--restarts", "100001"], "100001", "expected an integer from 1 to 100000"),
        (["solve", "--rounds", "-1"], "-1", "expected an integer >= 0"),
        (["solve", "--time-limit", "nan"], "nan", "expected a finite number > 0"),
        (["soliter", "solve", "--time-limit", "-1"], "-1", "expected a finite number > 0"),
        (["soliter", "bench", "--deals", "0"], "0", "expected an integer >= 1"),
        (["soliter", "show", "--free-cells", "-3"], "--free-cells: -3", "expected an integer from 0 to 16"),
        (["soliter", "play", "--columns", "0"], "--columns: 0", "expected an integer from 1 to 20"),
        (["soliter", "solve", "--jokers", "4"], "--jokers: 4", "expected an integer from 0 to 3"),
        # every bounded count of every command is a usage error naming the option (2026-12-03; before, evaluate,
        # the experiments and soliter named the Python keyword, games=0, and demo the option)
        (["evaluate", "--agent", "random", "--games", "0"], "--games: 0", "expected an integer from 1 to 100000000"),
        (["evaluate", "--agent", "random", "--games", str(10**8 + 1)], f"--games: {10**8 + 1}",
         "expected an integer from 1 to 100000000"),
        (["evaluate", "--agent", "random", "--jobs", "0"], "--jobs: 0", "expected an integer >= 1"),
        (["evaluate", "--agent", "random", "--chunk-size", "0"], "--chunk-size: 0", "expected an integer >= 1"),
        (["experiment", "reward-shaping", "--games", "0"], "--games: 0", "expected an integer from 1 to"),
        (["experiment", "reward-shaping", "--jobs", "0"], "--jobs: 0", "expected an integer >= 1"),
        (["experiment", "compare-trainers", "--games", "0"], "--games: 0", "expected an integer from 1 to"),
        (["experiment", "potential-shaping", "--games", "0"], "--games: 0", "expected an integer from 1 to"),
        (["experiment", "potential-shaping", "--jobs", "0"], "--jobs: 0", "expected an integer from 1 to 4096"),
        (["experiment", "tune-tables", "--generations", "0"], "--generations: 0", "expected an integer >= 1"),
        (["experiment", "tune-tables", "--elite", "0"], "--elite: 0", "expected an integer >= 1"),
        (["experiment", "tune-tables", "--population", "0"], "--population: 0", "expected an integer from 1 to"),
        (["experiment", "tune-tables", "--tables-games", "0"], "--tables-games: 0", "expected an integer from 1 to"),
        (["sweep", "sweep.yaml", "--cpus", "0"], "--cpus: 0", "expected an integer >= 1"),
    ],
    ids=lambda v: " ".join(v[:3]) if isinstance(v, list) else None,
)
def test_a_bad_number_is_a_usage_error_before_any_work(argv, value, expected, tmp_path, monkeypatch, capsys):
    """Before, these ran for minutes (demo --jobs 0 trained first) or ended in a traceback."""
    _refused(argv, value, expected, tmp_path, monkeypatch, capsys)


def _refused(argv, value, expected, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    if argv[0] in ("evaluate", "demo", "experiment", "train"):
        argv = [*argv, "--out", str(out)]
    assert cli_status(argv) == 2  # main's status or argparse's usage error
    err = capsys.readouterr().err
    assert value in err and expected in err and "Traceback" not in err
    assert not out.exists() and not any(tmp_path.iterdir())


def _parsers(parser: argparse.ArgumentParser, path: str = "pokersquares"):
    """The parser of the command and of every sub-command, as ``(command path, parser)``."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{path} {name}")


def test_no_parser_takes_abbreviated_options():
    paths = []
    for path, parser in _parsers(build_parser()):
        paths.append(path)
        assert parser.allow_abbrev is False, path
    assert {"pokersquares", "pokersquares play", "pokersquares experiment reward-shaping",
            "pokersquares soliter bench"} <= set(paths)


@pytest.mark.parametrize(
    "argv,usage,unknown",
    [
        (["play", "--colour", "never"], "usage: pokersquares play ", "--colour never"),
        (["evaluate", "--agent", "greedy", "--gmes", "5"], "usage: pokersquares evaluate ", "--gmes 5"),
        (["replay", "game.json", "--gif", "a.gif", "--fp", "3"], "usage: pokersquares replay ", "--fp 3"),
        # an abbreviation is an unknown option: before, --timestep was read as --timesteps and 12 runs started
        (["experiment", "reward-shaping", "--timestep", "10"], "usage: pokersquares experiment reward-shaping ",
         "--timestep 10"),
        (["soliter", "show", "--sed", "3"], "usage: pokersquares soliter show ", "--sed 3"),
        (["evaluate", "--agen", "greedy"], "usage: pokersquares evaluate ", None),
        (["--colour", "play"], "usage: pokersquares [-h]", "--colour"),  # an unknown top-level option: top usage
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else None,
)
def test_an_unknown_option_is_reported_with_the_usage_of_its_command(argv, usage, unknown, tmp_path, monkeypatch,
                                                                     capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(usage)
    if unknown is not None:
        assert err.rstrip().endswith(f"error: unrecognized arguments: {unknown}")
    assert not any(tmp_path.iterdir())


def test_first_cell_none_and_anywhere_are_accepted_by_play(monkeypatch, capsys):
    """Before, ``--first-cell none`` was refused with a message that listed None as valid."""
    import io

    for value in ("none", "Anywhere", "3c"):
        monkeypatch.setattr("sys.stdin", io.StringIO(""))
        assert main(["play", "--seed", "1", "--color", "never", "--first-cell", value]) == 1  # the input ended
        captured = capsys.readouterr()
        assert "The input ended" in captured.err and "refused" not in captured.err and "error" not in captured.err


#: every command and sub-command (a new one must be added here, and so gets the help checks below)
COMMAND_PATHS = [
    "pokersquares", "pokersquares demo", "pokersquares evaluate", "pokersquares play", "pokersquares replay",
    "pokersquares train", "pokersquares experiment", "pokersquares experiment reward-shaping",
    "pokersquares experiment compare-trainers", "pokersquares experiment potential-shaping",
    "pokersquares experiment tune-tables", "pokersquares sweep", "pokersquares solve", "pokersquares soliter",
    "pokersquares soliter show", "pokersquares soliter solve", "pokersquares soliter bench",
    "pokersquares soliter play",
]


def _parser_at(path: str) -> argparse.ArgumentParser:
    found = dict(_parsers(build_parser()))
    if path not in found:
        pytest.skip(f"{path}: not available in this install")
    return found[path]


def test_the_help_checks_cover_every_command():
    assert {path for path, _ in _parsers(build_parser())} == set(COMMAND_PATHS)


@pytest.mark.parametrize("path", COMMAND_PATHS)
def test_every_command_has_a_description_and_every_option_a_help(path):
    """Before, `soliter show|solve|bench|play --help` had no description and --seed, --deals, --seed0 there (and
    experiment compare-trainers --seed/--algos/--scoring, tune-tables --seed) no help."""
    parser = _parser_at(path)
    assert (parser.description or "").strip(), f"{path}: no description"
    assert "%%" not in parser.format_help(), f"{path}: a literal '%%' in its help"
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                assert (choice.help or "").strip(), f"{path} {choice.dest}: no help line in the list"
        else:
            assert (action.help or "").strip() and action.help != argparse.SUPPRESS, \
                f"{path} {action.option_strings or action.dest}: no help"


def test_train_help_shows_every_default_and_matches_play_and_evaluate():
    """Before, `train --help` showed no default at all, --jokers had no choices and --first-cell read CELL."""
    import dataclasses

    from agents.config import ALGO_DEFAULTS, TrainConfig

    fields = {f.name for f in dataclasses.fields(TrainConfig)}
    train = {a.dest: a for a in _parser_at("pokersquares train")._actions}
    for name, action in train.items():
        if action.option_strings and name in fields:
            assert "(default " in action.help, f"--{name}: no default in its help"
            assert action.default is None  # a --config file is overridden only by the flags given
    assert train["algo"].help.endswith("(default maskable-ppo)")
    assert train["timesteps"].help.endswith(f"(default {TrainConfig().timesteps})")
    assert train["anneal_lr"].help.endswith("(default on)")
    assert train["first_cell"].help.endswith("(default anywhere)")
    # the options each algorithm sets at run time say so, with each algorithm's value, not one wrong number
    lr = train["learning_rate"].help
    assert "per --algo" in lr and all(f"{a} {d['learning_rate']:g}" in lr for a, d in ALGO_DEFAULTS.items())
    assert "maskable-ppo 256 256" in train["hidden"].help
    for other in ("pokersquares play", "pokersquares evaluate"):
        theirs = {a.dest: a for a in _parser_at(other)._actions}
        for name in ("jokers", "first_cell", "placement"):
            assert list(train[name].choices or []) == list(theirs[name].choices or []), (other, name)
            assert (train[name].metavar or name.upper()) == (theirs[name].metavar or name.upper()), (other, name)


@pytest.mark.parametrize("path, options", [
    ("pokersquares evaluate", ["--seed", "--format"]),
    ("pokersquares play", ["--color"]),
    ("pokersquares solve", ["--seed", "--scoring", "--restarts", "--rounds", "--time-limit"]),
    *[(f"pokersquares soliter {a}", ["--free-cells", "--columns", "--jokers"]) for a in ("show", "solve", "bench", "play")],
])
def test_these_options_state_their_default_in_their_help(path, options):
    """Before, none of these said what happens when the option is left out."""
    helps = {o: a.help for a in _parser_at(path)._actions for o in a.option_strings}
    for option in options:
        assert re.search(r"\((?:[^()]*; )?default\b[^()]*\)", helps[option]), f"{path} {option}: {helps[option]!r}"
    if path.startswith("pokersquares soliter"):  # the variant's value, and the range each option takes
        assert "0..16" in helps["--free-cells"] and "classic 4" in helps["--free-cells"]
        assert "1..20" in helps["--columns"] and "0..3" in helps["--jokers"] and "joker 1" in helps["--jokers"]


def test_compare_trainers_takes_a_point_system_file_as_train_does(tmp_path, capsys):
    """--scoring names a point system or a JSON file, as train's does; a bad one is named before any training."""
    scoring = {a.dest: a for a in _parser_at("pokersquares experiment compare-trainers")._actions}["scoring"]
    assert scoring.choices is None and "JSON file" in scoring.help
    out = tmp_path / "cmp"
    assert main(["experiment", "compare-trainers", "--scoring", str(tmp_path / "nope.json"), "--out", str(out),
                 "--no-progress"]) == 2
    assert "nope.json" in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize("path", ["pokersquares demo", "pokersquares evaluate", "pokersquares train",
                                  "pokersquares experiment reward-shaping", "pokersquares experiment compare-trainers",
                                  "pokersquares experiment potential-shaping", "pokersquares experiment tune-tables",
                                  "pokersquares soliter bench"])
def test_every_command_with_a_progress_bar_can_hide_it(path):
    assert "--no-progress" in _parser_at(path)._option_string_actions


def test_soliter_bench_no_progress_hides_the_bar(capsys):
    # the default 1 CPU s a deal: both deals solve in under 10 ms.  A limit of 0.05 s failed under xdist after the
    # training tests (1 of 2 solved with the bar, 2 of 2 without): a full garbage collection of that worker, which
    # can fall inside a search, takes 0.155 CPU s (measured), and so does not fit in it
    args = ["soliter", "bench", "--deals", "2"]
    assert main([*args, "--no-progress"]) == 0
    quiet = capsys.readouterr()
    assert "classic: solved" in quiet.out and quiet.err == ""
    pytest.importorskip("tqdm")
    assert main(args) == 0
    shown = capsys.readouterr()
    assert shown.out.split(",")[0] == quiet.out.split(",")[0] and "soliter" in shown.err  # the same result; a bar


def test_demo_no_progress_reaches_the_training_and_the_evaluation(tmp_path, monkeypatch, capsys):
    """`demo --no-progress` is passed to train() and evaluate() (the progress options of the code it calls)."""
    pytest.importorskip("torch", reason="the demo checks for its trainer's torch first: the train extra")
    seen = {}

    class Trained:
        steps, model_path, seconds = 64, "model.pt", 1.0

    class Evaluated:
        def table(self):
            return "table"

        def paired(self):
            return []

    def train(**kw):
        seen["train"] = kw["progress"]
        return Trained()

    def evaluate(agents, **kw):
        seen["evaluate"] = kw["progress"]
        return Evaluated()

    monkeypatch.setattr("agents.train.train", train)
    monkeypatch.setattr("agents.evaluation.evaluate", evaluate)
    base = ["demo", "--shaping", "heuristic", "--no-search", "--out", str(tmp_path / "demo")]
    assert main([*base, "--no-progress"]) == 0
    assert seen == {"train": False, "evaluate": False}
    assert main(base) == 0
    assert seen == {"train": True, "evaluate": True}


#: a command that needs the train extra -> (the module made missing, the trainer named): on the core install these
#: crashed with an ImportError traceback and left a half-made --out (checkpoints/, config.json, a mark) that then
#: blocked a retry ("already holds a run"; --resume: "no checkpoint")
MISSING_EXTRA = [
    (["train", "--timesteps", "1000"], "sb3_contrib", "maskable-ppo"),
    (["train", "--algo", "fast-ppo", "--timesteps", "1000"], "torch", "fast-ppo"),
    (["train", "--algo", "dqn", "--timesteps", "10000"], "torch", "dqn"),
    (["demo", "--games", "2"], "torch", "fast-ppo"),
    (["experiment", "reward-shaping", "--timesteps", "100", "--games", "2"], "torch", "fast-ppo"),
    (["experiment", "potential-shaping", "--timesteps", "100", "--games", "2"], "torch", "fast-ppo"),
    (["experiment", "compare-trainers", "--algos", "fast-ppo", "maskable-ppo", "--timesteps", "100", "--games", "2"],
     "sb3_contrib", "maskable-ppo"),
]


@pytest.mark.parametrize("argv, module, trainer", MISSING_EXTRA, ids=lambda v: " ".join(v) if isinstance(v, list) else v)
def test_a_missing_train_extra_is_one_line_with_exit_2_and_writes_nothing(argv, module, trainer, tmp_path, monkeypatch,
                                                                           capsys):
    import sys

    if module != "torch" and "fast-ppo" in argv:  # fast-ppo is checked first, and it needs torch alone
        pytest.importorskip("torch", reason=f"the case hides {module} alone, with torch installed")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("POKERSQUARES_CACHE", str(tmp_path / "cache"))
    monkeypatch.setitem(sys.modules, module, None)  # what the core install finds: `import sb3_contrib` fails
    out = tmp_path / "out"
    assert main([*argv, "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    command = " ".join(argv[:2] if argv[0] == "experiment" else argv[:1])
    assert err.startswith(f"pokersquares {command}: {trainer} needs ") and err.count("\n") == 1, err
    assert {"sb3_contrib": "sb3-contrib", "torch": "torch"}[module] in err
    assert err.endswith(': pip install "pokersquares_env[train]"\n'), err
    assert not out.exists()  # nothing half-made: installing the extra and running the same command again works
    assert sorted(p.name for p in tmp_path.iterdir()) in ([], ["cache"])


def test_an_import_error_no_check_caught_is_one_line_naming_the_extra(monkeypatch, capsys):
    """Before, an optional package missing at run time ended any command with a traceback."""
    import agents.demo
    import agents.experiments.cli

    def missing(name):
        def run(*args, **kwargs):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

        return run

    monkeypatch.setattr(agents.demo, "run", missing("numba"))
    assert main(["demo"]) == 2
    assert capsys.readouterr().err == ("pokersquares demo: No module named 'numba': "
                                       'pip install "pokersquares_env[fast]"\n')
    monkeypatch.setattr(agents.experiments.cli, "_tune", missing("numba.core"))
    assert main(["experiment", "tune-tables"]) == 2
    assert capsys.readouterr().err == ("pokersquares experiment tune-tables: No module named 'numba.core': "
                                       'pip install "pokersquares_env[fast]"\n')

    def hinted(*args, **kwargs):  # a message that names its install already is not given a second one
        raise ImportError('maskable-ppo needs sb3-contrib: pip install "pokersquares_env[train]"')

    monkeypatch.setattr(agents.demo, "run", hinted)
    assert main(["demo"]) == 2
    assert capsys.readouterr().err == ('pokersquares demo: maskable-ppo needs sb3-contrib: '
                                       'pip install "pokersquares_env[train]"\n')
    # a module of the package's own that fails to import is a bug: its traceback is kept
    monkeypatch.setattr(agents.demo, "run", missing("agents.nowhere"))
    with pytest.raises(ModuleNotFoundError, match="agents.nowhere"):
        main(["demo"])


@pytest.mark.parametrize("argv, option", [
    (["solve", "--seed", "3", "--seed", "4", "--restarts", "2"], "--seed"),
    (["evaluate", "--agent", "random", "--games", "2", "--games", "3"], "--games"),
    (["train", "--timesteps", "100", "--timesteps", "200", "--print-config"], "--timesteps"),
    (["experiment", "reward-shaping", "--timesteps", "10", "--timesteps", "20"], "--timesteps"),
    (["soliter", "show", "--seed", "1", "--seed", "2"], "--seed"),
])
def test_a_one_value_option_given_twice_is_refused_naming_both(argv, option, capsys):
    """argparse kept the last value silently (``solve --seed 3 --seed 4`` solved deal 4); only ``play`` refused."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"{option} given twice" in err and "expected one value" in err, err


@pytest.mark.parametrize("argv, option, expected", [
    (["experiment", "reward-shaping", "--seeds", "0", "1", "--seeds", "2"], "--seeds",
     "([0, 1] and [2]): expected it once, followed by all its values (--seeds 0 1 2)"),
    (["train", "--hidden", "32", "32", "--hidden", "8", "--print-config"], "--hidden", "([32, 32] and [8])"),
    (["experiment", "potential-shaping", "--shapings", "none", "--shapings", "tables"], "--shapings",
     "(['none'] and ['tables'])"),
    (["experiment", "compare-trainers", "--algos", "dqn", "--algos", "fast-ppo"], "--algos", "(['dqn'] and ['fast-ppo'])"),
    (["evaluate", "--agent", "random", "--pps", "english", "--pps", "american"], "--pps",
     "('english' and 'american'): expected one value"),
])
def test_an_option_of_several_values_given_twice_is_refused_naming_both(argv, option, expected, capsys):
    """argparse replaced the first occurrence's values with the last's: ``--seeds 0 1 --seeds 2`` trained seed 2 only,
    ``evaluate --pps english --pps american`` evaluated American only."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert f"{option} given twice {expected}" in capsys.readouterr().err


@pytest.mark.parametrize("argv, said", [
    (["demo", "--search", "--no-search"], "--search and --no-search given together"),
    (["demo", "--no-search", "--search"], "--no-search and --search given together"),
    (["demo", "--no-search", "--no-search"], "--no-search given twice"),
    (["train", "--anneal-lr", "--no-anneal-lr", "--print-config"], "--anneal-lr and --no-anneal-lr given together"),
])
def test_a_flag_and_its_negation_are_refused_together(argv, said, capsys):
    """argparse kept the last of ``--search --no-search`` silently, as it kept the last of a repeated value."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    flag = argv[1].replace("--no-", "--")
    assert f"{said}: expected one of {flag} or --no-{flag[2:]}, once" in capsys.readouterr().err


def test_a_flag_pair_given_once_still_sets_its_value(capsys):
    assert main(["train", "--no-anneal-lr", "--print-config"]) == 0
    assert '"anneal_lr": false' in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["evaluate", "--agent", "random", "--games", "1", "--scoring", ""], "unknown point system ''"),
    (["train", "--config", "", "--print-config"], "config file '': expected the path of a JSON or YAML file"),
])
def test_empty_text_is_refused_not_taken_as_not_given(argv, message, capsys):
    """``evaluate --scoring ''`` played American and ``train --config ''`` read no config, where every other command
    refuses an empty --scoring."""
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_options_that_take_several_values_may_still_repeat(capsys):
    assert main(["evaluate", "--agent", "random", "--agent", "greedy", "--games", "1", "--no-progress",
                 "--format", "json"]) == 0
    assert [line.split('"agent": ')[1].split(",")[0] for line in capsys.readouterr().out.splitlines()] == [
        '"random"', '"greedy"']


@pytest.mark.parametrize("argv", [["solve", "--seed", "3"], ["soliter", "show", "--seed", "3"]], ids=" ".join)
def test_output_in_ascii_writes_suits_as_letters_instead_of_failing(argv, tmp_path):
    """A pipe or console whose encoding has no suit symbols (PYTHONIOENCODING=ascii, a Windows cp1252 console) made
    every command that prints cards fail with UnicodeEncodeError mid-output; the suits are now written as the letters
    parse_card reads (T♠ -> Ts)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    done = subprocess.run([sys.executable, "-m", "pokersquares_env", *argv], capture_output=True, env=env,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr.decode("ascii", "replace")
    text = done.stdout.decode("ascii")  # pure ASCII: no symbol was written
    assert re.search(r"\b[2-9TJQKA][shdc]\b", text), text
    assert b"UnicodeEncodeError" not in done.stderr
    utf8 = subprocess.run([sys.executable, "-m", "pokersquares_env", *argv], capture_output=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONIOENCODING": "utf-8"}, timeout=120)
    def untimed(out: str) -> str:
        return re.sub(r"\d+\.\d+ s\b", "N s", out)  # solve prints its seconds

    # the same text, but for the suits
    assert untimed(utf8.stdout.decode("utf-8").translate(str.maketrans("♠♥♦♣", "shdc"))) == untimed(text)


def test_run_as_the_command_a_warning_is_one_line_without_the_script_line(monkeypatch, capsys):
    """Before, `pokersquares evaluate --agent fastppo:RUN --scoring english` printed the warning as
    "/.../bin/pokersquares:6: RuntimeWarning: ..." followed by the script's "sys.exit(main())"."""
    import sys
    import warnings

    monkeypatch.setattr(warnings, "formatwarning", warnings.formatwarning)  # restored after the test
    before = warnings.formatwarning
    assert main(["solve", "--seed", "1"]) == 0  # called from Python: the caller's format is kept
    assert warnings.formatwarning is before
    monkeypatch.setattr(sys, "argv", ["pokersquares", "solve", "--seed", "1"])
    assert main() == 0  # as the command
    capsys.readouterr()
    line = warnings.formatwarning(RuntimeWarning("fastppo:run was trained for 'american' points"), RuntimeWarning,
                                  "/venv/bin/pokersquares", 6, "sys.exit(main())")
    assert line == "pokersquares: RuntimeWarning: fastppo:run was trained for 'american' points\n"


# ---- found by a mutation audit of cli.py ---------------------------------------------------------------------------


def test_a_bounded_integer_takes_both_ends_and_names_bad_text():
    from pokersquares_env.cli import int_between

    parse = int_between(1, 3)
    assert [parse("1"), parse("3")] == [1, 3]  # both ends are in the range
    for text, shown in (("0", "0"), ("4", "4"), ("1.5", "'1.5'"), ("two", "'two'")):
        with pytest.raises(argparse.ArgumentTypeError, match=f"^{re.escape(shown)}: expected an integer from 1 to 3$"):
            parse(text)


def test_a_positive_number_refuses_zero_and_infinity_naming_the_text_given():
    from pokersquares_env.cli import positive_float

    assert positive_float("0.5") == 0.5 and positive_float("1e-9") == 1e-9
    for text, shown in (("0", "0"), ("-1", "-1"), ("inf", "inf"), ("1e999", "1e999"), ("nan", "nan"),
                        ("soon", "'soon'")):
        with pytest.raises(argparse.ArgumentTypeError, match=f"^{re.escape(shown)}: expected a finite number > 0$"):
            positive_float(text)


def test_version_names_the_package_and_its_version(capsys):
    from pokersquares_env import __version__

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == f"pokersquares_env {__version__}\n"


def test_a_command_whose_module_is_not_installed_is_left_out(monkeypatch, capsys):
    """A command whose module is missing from the install is left out of the list (the others still run, and running
    it is a usage error); a module that is there but fails on a missing import of its own is not hidden."""
    monkeypatch.setitem(COMMANDS, "ghost", "pokersquares_env.no_such_command")
    assert "ghost" not in build_parser().format_help()
    assert main(["solve", "--seed", "1", "--restarts", "2", "--json"]) == 0
    capsys.readouterr()
    for argv in (["ghost"], ["ghost", "--steps", "5"]):  # before, argparse's "invalid choice: 'ghost'" came first
        with pytest.raises(SystemExit) as exc:
            main(argv)
        err = capsys.readouterr().err
        assert exc.value.code == 2 and "Traceback" not in err and err.endswith(
            "error: command 'ghost' is not available in this install (module pokersquares_env.no_such_command "
            "missing)\n")

    import importlib

    real = importlib.import_module

    def broken(name, *args):
        if name == "pokersquares_env.broken_command":
            raise ModuleNotFoundError("No module named 'some_dependency'", name="some_dependency")
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", broken)
    monkeypatch.setitem(COMMANDS, "ghost", "pokersquares_env.broken_command")
    with pytest.raises(ModuleNotFoundError, match="some_dependency"):
        build_parser()


def test_an_import_error_of_a_module_no_extra_installs_is_one_line_without_a_hint(monkeypatch, capsys):
    import agents.demo

    def run(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'someplugin'", name="someplugin")

    monkeypatch.setattr(agents.demo, "run", run)
    assert main(["demo"]) == 2
    assert capsys.readouterr().err == "pokersquares demo: No module named 'someplugin'\n"


def test_ctrl_c_in_a_command_is_one_line_on_stderr_and_status_130(monkeypatch, capsys):
    import agents.demo

    def run(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(agents.demo, "run", run)
    assert main(["demo"]) == 130
    captured = capsys.readouterr()
    assert captured.err == "interrupted\n" and captured.out == ""


def test_the_suit_letters_error_handler_writes_each_symbol_as_its_letter():
    from pokersquares_env.cli import _plain_text_streams

    _plain_text_streams()  # registers the handler
    assert "A♠ T♥♦♣ – x".encode("ascii", "pokersquares-suits") == b"As Thdc ? x"


def test_errors_in_ascii_write_suits_as_letters_too(tmp_path):
    """Standard error is made to write suits as letters as standard output is: a card named in an error message."""
    import os
    import subprocess
    import sys

    cards = "As As Kd Qd Jd Td 9d 8d 7d 6d 5d 4d 3d 2d Ac Kc Qc Jc Tc 9c 8c 7c 6c 5c 4c".split()
    done = subprocess.run([sys.executable, "-m", "pokersquares_env", "solve", *cards], capture_output=True,
                          env={**os.environ, "PYTHONIOENCODING": "ascii"}, cwd=tmp_path, timeout=120)
    err = done.stderr.decode("ascii")
    assert done.returncode == 2 and "card As (code 51) appears twice" in err and "Traceback" not in err, err


def test_only_the_command_run_as_the_command_sets_the_one_line_warning_format(monkeypatch, capsys):
    """The format is checked against one set here: a test run earlier may have left the command's format behind."""
    import sys
    import warnings

    from pokersquares_env.cli import _warning_line

    def callers_format(*args, **kwargs):
        return "the caller's format\n"

    monkeypatch.setattr(warnings, "formatwarning", callers_format)
    assert main(["solve", "--seed", "1", "--restarts", "2"]) == 0  # called from Python
    assert warnings.formatwarning is callers_format
    monkeypatch.setattr(sys, "argv", ["pokersquares", "solve", "--seed", "1", "--restarts", "2"])
    assert main() == 0  # as the command
    assert warnings.formatwarning is _warning_line
