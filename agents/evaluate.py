"""``pokersquares evaluate``: play agents on common seeded deals and report their scores."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

from pokersquares_env.cli import int_at_least, int_between, ray_address, seed_arg

HELP = "evaluate agents on common seeded deals (summary, per-game records, hand frequencies, paired comparisons)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the command's options to ``parser``."""
    from agents.evaluation import MAX_GAMES

    parser.add_argument("--agent", action="append", required=True, metavar="SPEC",
                        help="agent spec, repeatable: random, greedy, rules, mc, mc:rollouts=200, expectimax:ply=2, "
                             "ppo:PATH, ...")
    parser.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                        help="import MODULE first, repeatable (from the current folder too): a module of yours that "
                             "calls agents.register_agent, so that --agent can name its agents")
    parser.add_argument("--games", type=int_between(1, MAX_GAMES), default=100,
                        help=f"number of deals, 1 to {MAX_GAMES:,} (default 100)")
    parser.add_argument("--seed", type=seed_arg, default=0,
                        help="deal seed: deal i of seed S is the same for every agent (default 0)")
    parser.add_argument("--scoring", default=None,
                        help="point system the agents play for: american (default), english or a JSON file "
                             "(every game is also scored under American and English)")
    parser.add_argument("--scoring-set", "--pps", dest="scoring_set", nargs="?", const="pps", default=None,
                        metavar="SET",
                        help="Parameterized Poker Squares: evaluate under a set of point systems, normalised per "
                             "system; 'pps' (American, English, random, hypercorner, single-hand, Ameritish; in any "
                             "case) or a comma-separated list of names/JSON files")
    parser.add_argument("--rules", default=None, metavar="SPEC",
                        help="rule options at once: 'jokers=2,placement=adjacent,first_cell=center', a JSON object "
                             "or a JSON file (default: 52 cards, free placement); the three options below may add "
                             "to it but not contradict it")
    parser.add_argument("--jokers", type=int, default=None, choices=(0, 1, 2), help="wild jokers in the deck (0)")
    parser.add_argument("--placement", default=None, choices=("free", "adjacent"), help="placement rule (free)")
    parser.add_argument("--first-cell", default=None, help="where the first card goes: center, top-left or a cell")
    parser.add_argument("--jobs", type=int_at_least(1), default=1,
                        help="worker processes (default 1; the local backend runs at most one per CPU); the results "
                             "are the same for any --jobs")
    parser.add_argument("--backend", default="local", help="where chunks run: local (default) or ray")
    parser.add_argument("--address", default=None, type=ray_address,
                        help="--backend ray: address of a running Ray cluster (default: $RAY_ADDRESS, else an "
                             "embedded local Ray with --jobs CPUs, or all the CPUs this process may use when --jobs is 1)")
    parser.add_argument("--chunk-size", type=int_at_least(1), default=None, help="deals per work unit (default: automatic)")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="write evaluation.json, games.jsonl, summary.md/.csv/.json, hands.json/.csv, "
                             "paired.json, errors.json, PNG plots (with matplotlib); DIR must be new, empty or an "
                             "earlier evaluate's output (whose files are replaced)")
    parser.add_argument("--resume", action="store_true",
                        help="reuse the games --out DIR holds (an interrupted run's games.partial.jsonl, a finished "
                             "run's games.jsonl; with --pps, each system's folder's) and play only the agent-deal "
                             "pairs missing: finishes a stopped run, or adds deals or agents to a finished one; needs "
                             "the same --seed, scoring (or --pps set) and rules")
    parser.add_argument("--format", default="table", choices=("table", "json"),
                        help="stdout: a Markdown table or one JSON object per agent (default table)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def run(args: argparse.Namespace) -> int:
    """Run the evaluation; 0 on success, 1 if any game raised."""
    from agents.evaluation import plots_skipped_said_by

    with plots_skipped_said_by("pokersquares evaluate"):  # the plots skipped without matplotlib: one line on stderr
        return _run(args)


def import_modules(modules: list[str], command: str) -> str | None:
    """Import each of ``modules`` (``--import``), the current folder first on the path as ``python -m`` has it; the
    error message for the first that fails, else None."""
    import importlib

    if modules and os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    for name in modules:
        if not name or name.endswith(".py") or not all(part.isidentifier() for part in name.split(".")):
            return (f"{command}: --import {name!r}: expected a module name such as myagents or lab.agents (not a "
                    f"file path)")
        try:
            importlib.import_module(name)
        except Exception as exc:  # its own error, whatever it is: one line naming the module
            return f"{command}: --import {name!r}: cannot import it: {type(exc).__name__}: {exc}"
    return None


class Terminated(KeyboardInterrupt):
    """SIGTERM (a time limit, ``kill``) while the command runs, raised where the command is, as Ctrl-C raises
    ``KeyboardInterrupt``: the same clean-up runs (workers stopped, finished games kept in the journal) and the
    command says where the games are, then exits with 143 (128 + SIGTERM)."""


@contextlib.contextmanager
def _sigterm_stops_like_ctrl_c() -> Iterator[None]:
    """While the block runs, SIGTERM raises :class:`Terminated` in the main thread (pool workers take the default
    again: ``agents.evaluation._one_thread_each``, and one that gets SIGTERM before that, in a process group's
    SIGTERM, ends as by default); the previous handler is put back after.  A SIGTERM ignored by whoever started the
    command (``SIG_IGN``) stays ignored.  POSIX: on Windows, SIGTERM from another process ends it at once."""
    if threading.current_thread() is not threading.main_thread():  # signal handlers live in the main thread only
        yield
        return
    if signal.getsignal(signal.SIGTERM) == signal.SIG_IGN:
        yield
        return
    owner = os.getpid()

    def stop(signum: int, frame: Any) -> None:
        if os.getpid() != owner:  # a forked worker that has not reset it yet: the default action, as it would have
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        raise Terminated

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run(args: argparse.Namespace) -> int:
    from agents.evaluation import OutDirError, WorkerLostError
    from pokersquares_env.core import Rules

    problem = import_modules(args.imports, "pokersquares evaluate")
    if problem:
        print(problem, file=sys.stderr)
        return 2

    try:
        rules = Rules.with_options(args.rules, jokers=args.jokers, placement=args.placement,
                                   first_cell=args.first_cell).to_json()
    except ValueError as exc:
        print(f"pokersquares evaluate: {exc}", file=sys.stderr)
        return 2
    if args.address and args.backend != "ray":
        from agents.evaluation import check_backend_name

        try:  # the unknown name first (--backend RAY), as without --address
            check_backend_name(args.backend)
        except ValueError as exc:
            print(f"pokersquares evaluate: {exc}", file=sys.stderr)
            return 2
        print(f"pokersquares evaluate: --address {args.address!r} needs --backend ray", file=sys.stderr)
        return 2
    if args.resume and args.out is None:
        print("pokersquares evaluate: --resume needs --out DIR, the folder whose games are reused", file=sys.stderr)
        return 2
    if args.out is not None:
        from agents.evaluation import check_out_dir, check_output_entries

        try:  # before any agent is built (tables trained) or folder made
            check_out_dir(args.out, foreign=False, name="--out")
            check_output_entries(args.out, name="--out")
            from agents.evaluation import refuse_journal, refuse_other_kind

            refuse_journal(args.out, name="--out", pps=args.scoring_set is not None, resume=args.resume)
            if args.resume:
                refuse_other_kind(args.out, name="--out", pps=args.scoring_set is not None)
        except ValueError as exc:
            print(f"pokersquares evaluate: {exc}", file=sys.stderr)
            return 2
    if args.backend == "local" and args.jobs > 1:
        from agents.evaluation import local_workers

        workers = local_workers(args.jobs)
        if workers < args.jobs:
            print(f"pokersquares evaluate: warning: --jobs {args.jobs} is more than the {workers} CPUs this process "
                  f"may use: running {workers} worker processes (the results are the same)", file=sys.stderr)
    common = dict(games=args.games, seed=args.seed, rules=rules, jobs=args.jobs, progress=not args.no_progress,
                  backend=args.backend, out_dir=args.out, chunk_size=args.chunk_size,
                  backend_options={"address": args.address} if args.address else None)
    try:
        with _sigterm_stops_like_ctrl_c():
            errors = _evaluate(args, common)
    except OutDirError as exc:  # the folder could not be made or written: named as the option the user gave
        if os.path.abspath(exc.path) == os.path.abspath(args.out):
            print(f"pokersquares evaluate: --out {exc.path!r}: {exc.problem}", file=sys.stderr)
        else:  # a point system's folder inside it (--pps): games of the systems before it may be kept
            print(f"pokersquares evaluate: --out {args.out!r}: the folder {exc.path!r} in it: {exc.problem}"
                  f"{_journal_note(args)}", file=sys.stderr)
        return 2
    except (ValueError, TypeError, ImportError) as exc:
        print(f"pokersquares evaluate: {exc}", file=sys.stderr)
        return 2
    except WorkerLostError as exc:  # a worker process died (e.g. killed for memory): not a usage error
        print(f"pokersquares evaluate: error: {exc}{_journal_note(args)}", file=sys.stderr)
        return 1
    except Terminated:
        print(f"pokersquares evaluate: terminated (SIGTERM){_journal_note(args)}", file=sys.stderr, flush=True)
        return 143
    except KeyboardInterrupt:
        note = _journal_note(args)
        if not note:
            raise  # nothing kept: the command line's one "interrupted" line and exit status for Ctrl-C (130)
        print(f"pokersquares evaluate: interrupted{note}", file=sys.stderr)  # one line, as after SIGTERM
        return 130
    _report_errors(errors)
    return 1 if errors else 0


def _evaluate(args: argparse.Namespace, common: dict[str, Any]) -> list[dict]:
    """Play the evaluation the options ask for and print its results; the games that raised."""
    from agents.evaluation import _check_specs, _jsonable, evaluate, evaluate_pps

    _check_specs(args.agent, name="--agent")  # first, so that its messages name the option
    if args.scoring_set is not None and args.scoring is not None:
        raise ValueError(f"--scoring {args.scoring!r} and --scoring-set/--pps {args.scoring_set!r} contradict each "
                         f"other: the set gives the point systems")
    if args.scoring_set is not None:
        if not args.scoring_set.strip(" ,"):
            raise ValueError(f"--scoring-set {args.scoring_set!r}: expected 'pps' or a comma-separated list of "
                             f"point systems")
        pps = args.scoring_set.strip().lower() == "pps"
        systems = "pps" if pps else [s.strip() for s in args.scoring_set.split(",")]
        result = evaluate_pps(args.agent, systems=systems, resume=args.resume, **common)
        if args.resume:
            _say_resumed(args, result.resumed, len(args.agent) * args.games * len(result.results))
        if args.format == "json":  # one object per agent and system, then one per agent over every system
            for row in result.summary:  # NaN (a figure that cannot be computed) as null: valid JSON
                print(json.dumps(_jsonable(row)))
            for row in result.overall():
                print(json.dumps(_jsonable({**row, "system": "overall"})))
        else:
            print(result.table(), end="")
        errors = [{**e, "system": name} for name, r in result.results.items() for e in r.errors]
    else:
        result = evaluate(args.agent, scoring="american" if args.scoring is None else args.scoring,
                          resume=args.resume, **common)
        if args.resume:
            _say_resumed(args, result.resumed, len(args.agent) * args.games)
        if args.format == "json":
            print(result.json_lines(), end="")
        else:
            print(result.table("markdown"), end="")
            if len(args.agent) > 1:
                print()
                for p in result.paired():
                    if not p["deals"]:
                        print(f"{p['a']} - {p['b']}: no common deals (one of them failed every game)")
                        continue
                    if p["deals"] == 1:  # no spread, so no interval (the summary table's ci95 says n/a)
                        print(f"{p['a']} - {p['b']}: {p['mean_diff']:+.3f} on 1 common deal (no interval from one)")
                        continue
                    print(f"{p['a']} - {p['b']}: {p['mean_diff']:+.3f} +- {p['ci95']:.3f} "
                          f"over {p['deals']} common deals")
        errors = result.errors
    return errors


def _say_resumed(args: argparse.Namespace, reused: int, total: int) -> None:
    print(f"pokersquares evaluate: resumed: {reused} of {total} games reused from {args.out}, {total - reused} played",
          file=sys.stderr)


def _journal_note(args: argparse.Namespace) -> str:
    """For a run that stopped: where its finished games are kept and how to play only the rest ('' without one)."""
    from agents.evaluation import JOURNAL, _journal_games, _subfolder_journals

    if args.out is None:
        return ""
    if args.scoring_set is not None:  # one journal in each system's folder played so far
        paths = _subfolder_journals(args.out)
        if not paths:
            return ""
        where = paths[0] if len(paths) == 1 else f"{JOURNAL} of {len(paths)} point systems' folders in {args.out}"
        return (f"; the {sum(_journal_games(p) for p in paths)} finished games are kept in {where}: the same command "
                f"with --resume plays only the rest")
    path = os.path.join(args.out, JOURNAL)
    if not os.path.isfile(path):
        return ""
    return (f"; the {_journal_games(path)} finished games are kept in {path}: the same command with --resume plays "
            f"only the rest")


def _report_errors(errors: list[dict], limit: int = 20) -> None:
    """Print the games that raised to stderr, one line per agent, point system (``--pps``: each error has a
    ``system``) and message: a message shared by many deals (an agent that a remote worker could not build fails
    every deal of its chunks) is printed once with the number of deals (all are in errors.json)."""
    groups: dict[tuple[str, str | None, str], list[int]] = {}
    for e in errors:
        groups.setdefault((e["agent"], e.get("system"), e["error"]), []).append(int(e["deal"]))
    for n, ((agent, system, message), deals) in enumerate(groups.items()):
        if n == limit:
            rest = sum(len(d) for d in list(groups.values())[limit:])
            where = "errors.json of each system's folder" if system is not None else "errors.json"
            print(f"... and {rest} more failed games (every one is in {where} under --out)", file=sys.stderr)
            break
        where = f"deal {deals[0]}" if len(deals) == 1 else f"deal {deals[0]} and {len(deals) - 1} more deals"
        under = f" under point system {system}" if system is not None else ""
        print(f"error: agent {agent}{under} on {where}: {message}", file=sys.stderr)
