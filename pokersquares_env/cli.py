"""The ``pokersquares`` command line: one entry point, a sub-command per job.

Each sub-command lives in its own module exposing ``HELP`` (one line),
``add_arguments(parser)`` and ``run(args) -> int``.  Modules are imported only
when their command runs (or for ``--help``), so heavy optional dependencies
(torch, Ray, Pillow) load only where needed.
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import sys

from pokersquares_env.cards import SUIT_LETTERS, SUITS

#: optional module -> the extra of ``pyproject.toml`` that installs it (named when a command finds it missing)
EXTRAS: dict[str, str] = {
    "torch": "train", "stable_baselines3": "train", "sb3_contrib": "train", "tensorboard": "train", "yaml": "train",
    "numba": "fast", "matplotlib": "plot", "pettingzoo": "multiplayer", "PIL": "render", "pygame": "human",
    "moviepy": "video", "ray": "distributed", "scipy": "bounds", "tqdm": "play",
}

#: sub-command -> module implementing it
COMMANDS: dict[str, str] = {
    "demo": "agents.demo",
    "evaluate": "agents.evaluate",
    "play": "pokersquares_env.play",
    "replay": "pokersquares_env.replay",
    "train": "agents.train",
    "experiment": "agents.experiments.cli",
    "sweep": "agents.sweep",
    "solve": "pokersquares_env.shuffle.cli",
    "soliter": "pokersquares_env.soliter.cli",
}


def int_at_least(low: int):
    """An ``argparse`` type: an integer >= ``low``; a bad value is a usage error (exit 2) naming it."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: expected an integer >= {low}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value}: expected an integer >= {low}")
        return value

    parse.__name__ = f"int_at_least_{low}"
    return parse


def int_between(low: int, high: int):
    """An ``argparse`` type: an integer from ``low`` to ``high``; a bad value is a usage error (exit 2) naming it
    and the range."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: expected an integer from {low} to {high}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value}: expected an integer from {low} to {high}")
        return value

    parse.__name__ = f"int_between_{low}_{high}"
    return parse


#: ``argparse`` type of every ``--seed`` option: an integer >= 0 (what NumPy and Gymnasium accept as a seed)
seed_arg = int_at_least(0)


def positive_float(text: str) -> float:
    """An ``argparse`` type: a finite number > 0 (seconds, minutes); a bad value is a usage error naming it."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a finite number > 0") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text}: expected a finite number > 0")
    return value


def ray_address(text: str) -> str:
    """An ``argparse`` type for ``--address``: a Ray address; an empty one is a usage error (it named no cluster and
    quietly meant ``$RAY_ADDRESS`` or an embedded Ray, which leaving the option out says)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"{text!r}: expected a Ray address such as 10.0.0.1:6379, 'auto' or "
                                         f"ray://host:10001 (leave --address out for $RAY_ADDRESS or an embedded Ray)")
    return text


class _SubCommands(argparse._SubParsersAction):
    """Sub-commands whose parser reports the arguments it does not take, with its own usage line (plain argparse
    leaves them to the top-level parser, whose usage line shows none of the sub-command's options)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        super().__call__(parser, namespace, values, option_string)
        leftovers = getattr(namespace, getattr(argparse, "_UNRECOGNIZED_ARGS_ATTR", "_unrecognized_args"), None)
        if leftovers:
            self._name_parser_map[values[0]].error(f"unrecognized arguments: {' '.join(leftovers)}")


class _Parser(argparse.ArgumentParser):
    """The parser of the command and of every sub-command (``add_subparsers`` makes parsers of its parser's class).

    Options must be spelled out: ``--timestep`` is not read as ``--timesteps`` (``allow_abbrev=False``), and an
    unrecognised argument is reported by the sub-command given it (:class:`_SubCommands`).
    """

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self.register("action", "parsers", _SubCommands)


def _given(namespace: argparse.Namespace) -> dict:
    """The options seen so far in this parse, ``dest -> value`` (:class:`StoreOnce`) or ``dest -> spelling``
    (:class:`BoolOnce`), kept on the namespace as ``_given``."""
    given = getattr(namespace, "_given", None)
    if given is None:
        given = {}
        setattr(namespace, "_given", given)
    return given


class StoreOnce(argparse._StoreAction):
    """A plain one-value option that refuses a second value: argparse keeps the last silently, so ``solve --seed 3
    --seed 4`` would solve deal 4 with no word about 3.  Every such option of every sub-command is one
    (:func:`_once_each`); the values given are kept in the namespace's ``_given``.  :meth:`what` names one value in
    the refusal (a subclass may say ``agent`` or ``file``)."""

    def what(self) -> str:
        return "value"

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        given = _given(namespace)
        if self.dest in given:
            expected = (f"one {self.what()}" if self.nargs in (None, "?") else
                        f"it once, followed by all its values ({option_string} {' '.join(map(str, given[self.dest]))} "
                        f"{' '.join(map(str, values))})")
            parser.error(f"{option_string} given twice ({given[self.dest]!r} and {values!r}): expected {expected}")
        given[self.dest] = values
        setattr(namespace, self.dest, values)


class BoolOnce(argparse.BooleanOptionalAction):
    """A ``--flag/--no-flag`` pair that refuses a second mention: argparse keeps the last, so ``demo --search
    --no-search`` skipped the search with no word about the first (2026-12-03).  Either spelling once, or neither."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        given = _given(namespace)
        if self.dest in given:
            first = given[self.dest]
            said = f"{option_string} given twice" if first == option_string else f"{first} and {option_string} given together"
            parser.error(f"{said}: expected one of {' or '.join(self.option_strings)}, once")
        given[self.dest] = option_string
        super().__call__(parser, namespace, values, option_string)


def _once_each(parser: argparse.ArgumentParser) -> None:
    """Make every plain store option of ``parser`` and of its sub-commands refuse a repeat (:class:`StoreOnce`):
    one-value options, optional-value ones (``--pps [SET]``) and those that take several values at once (``--seeds 0
    1``), which argparse would replace with the last occurrence's values, and ``--flag/--no-flag`` pairs
    (:class:`BoolOnce`); append and count options keep adding."""
    for action in parser._actions:
        if type(action) is argparse._StoreAction and action.option_strings:
            action.__class__ = StoreOnce
        elif type(action) is argparse.BooleanOptionalAction:
            action.__class__ = BoolOnce
        elif isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # aliases share one parser
                _once_each(sub)


def _load(name: str):
    try:
        return importlib.import_module(COMMANDS[name])
    except ModuleNotFoundError as exc:
        if exc.name and COMMANDS[name].startswith(exc.name):
            return None
        raise


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser (``only`` loads just one sub-command's module)."""
    parser = _Parser(prog="pokersquares", description="Poker Squares environments, agents and experiments.")
    from pokersquares_env import __version__

    parser.add_argument("--version", action="version", version=f"pokersquares_env {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        if only is not None and name != only:
            sub.add_parser(name, add_help=False)
            continue
        module = _load(name)
        if module is None:
            continue
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        _once_each(p)
        p.set_defaults(_module=module)
    return parser


#: suit symbols as the letters ``parse_card`` reads, for output streams whose encoding has no symbols
_SUIT_LETTERS = dict(zip(SUITS, SUIT_LETTERS, strict=True))


def _suit_letters(exc: UnicodeError) -> tuple[str, int]:
    """A codecs error handler: each suit symbol the stream cannot encode as its letter (``T♠`` -> ``Ts``), any other
    character as ``?``."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    text = exc.object[exc.start:exc.end]
    return "".join(_SUIT_LETTERS.get(ch, "?") for ch in text), exc.end


def _plain_text_streams() -> None:
    """Let standard output and error whose encoding cannot write the suit symbols (a pipe or console in ASCII or
    cp1252) write cards as ``Ts``, ``Ah`` instead of failing with ``UnicodeEncodeError`` mid-command."""
    import codecs

    try:
        codecs.lookup_error("pokersquares-suits")
    except LookupError:
        codecs.register_error("pokersquares-suits", _suit_letters)
    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None)
        if not encoding or not hasattr(stream, "reconfigure"):
            continue  # a StringIO (tests) or a replaced stream: left alone
        try:
            "".join(_SUIT_LETTERS).encode(encoding)
        except UnicodeEncodeError:
            stream.reconfigure(errors="pokersquares-suits")
        except LookupError:
            pass


def _warning_line(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  line: str | None = None) -> str:
    """A warning as the command prints it: one line, without the source file and line that raised it (for a command
    line run those are the ``pokersquares`` script's ``sys.exit(main())``, which tells a user nothing)."""
    return f"pokersquares: {category.__name__}: {message}\n"


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status.

    Run as the command (``argv`` None: the ``pokersquares`` script, ``python -m pokersquares_env``), warnings print
    as one line each.  Called with ``argv`` from Python (tests, notebooks) the caller's warning format is kept."""
    _plain_text_streams()
    if argv is None:
        import warnings

        warnings.formatwarning = _warning_line
    argv = list(sys.argv[1:] if argv is None else argv)
    only = argv[0] if argv and argv[0] in COMMANDS else None
    parser = build_parser(only)
    if only is not None and _load(only) is None:  # said before parsing, which would call the command unknown
        parser.error(f"command {only!r} is not available in this install (module {COMMANDS[only]} missing)")
    args = parser.parse_args(argv)
    if not getattr(args, "_module", None):
        parser.print_help()
        return 0 if not argv else 2
    try:
        return int(args._module.run(args) or 0)
    except ImportError as exc:  # an optional extra not installed that no check caught first: one line, not a traceback
        top = (exc.name or "").split(".")[0]
        if top in ("agents", "pokersquares_env", "benchmarks"):  # the package's own module: a bug, with its traceback
            raise
        command = " ".join(part for part in (args.command, getattr(args, "experiment", None)) if part)
        said = top not in EXTRAS or "pip install" in str(exc)  # the project's own messages name the install
        hint = "" if said else f': pip install "pokersquares_env[{EXTRAS[top]}]"'
        print(f"pokersquares {command}: {exc}{hint}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `pokersquares evaluate ... | head`: the reader left; no traceback
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the final flush does not fail again
        except (OSError, ValueError):
            pass
        return 141


if __name__ == "__main__":
    sys.exit(main())
