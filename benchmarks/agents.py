"""Benchmark the agents on common seeded deals under American and English scoring, beside the published anchors.

Usage (the figures in docs/agents.md were made with these)::

    A="--agent random --agent greedy --agent rules --agent expectimax:ply=1 --agent expectimax:ply=2"
    nice -n 10 python benchmarks/agents.py $A --games 2000 --jobs 1 --out runs/bench
    nice -n 10 python benchmarks/agents.py --agent mc --games 1000 --jobs 1 --out runs/bench-mc

Prints, per point system, a Markdown table of mean +- 95% CI and mean seconds
per game (per process: with ``--jobs 1`` that is one core), then the published
anchors (American scoring).  ``--out`` keeps every output of the evaluation.
Every point system of ``--systems``, every agent (built once for each system)
and every output folder is checked before the first game: a bad one is a
usage error (exit status 2) naming it, and nothing is played or written.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

# Run as a script, this file's folder comes first on sys.path and its name would hide the agents package.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))

DEFAULT_AGENTS = ["random", "greedy", "rules", "expectimax:ply=1", "expectimax:ply=2", "mc"]

#: Published figures (American scoring), labelled with their sources.  Not measured here.
PUBLISHED = [
    ("Random play", "14.42 (SD 7.68)", "Neller, 10,000 games; exact expectation 14.415; English 7.676"),
    ("Simple rule player", "48.99", "Neller, Poker Squares contest materials"),
    ("Flush-columns player", "83.80", "Neller, Poker Squares contest materials"),
    ("Flat MC with flush playouts", "about 121", "Neller, Poker Squares contest materials"),
    ("NARL and Expectimax-NARL", "123.3 to 125.2", "Neller et al., EAAI-2016; 1,000 to 10,000 games, 60 s a game"),
    ("BeeMo", "126.0 (SD 31.5)", "Castro-Wunsch et al., CG 2016; 1,000 games"),
    ("Theoretical maximum of one grid", "725", "quoted from issue 5; four royal-flush rows, a straight-flush row, "
                                                "four-of-a-kind columns (checked with score_grid)"),
]


def check_options(parser: argparse.ArgumentParser, agents: list[str], systems: str, out: str | None,
                  resume: bool = False) -> list[str]:
    """The point systems ``--systems`` names, once every system, every agent (built for every system, so its
    tables are made now) and every output folder has been checked: a usage error names the first that is not
    good, before the first game."""
    from agents.evaluation import check_out_dir, refuse_journal
    from agents.registry import check_model_path, check_spec, make_agent, spec_key
    from pokersquares_env.scoring import point_system

    names = systems.split(",")
    resolved = []
    for name in names:
        try:
            resolved.append(point_system(name))
        except (ValueError, OSError) as exc:
            parser.error(f"--systems {systems!r}: {name!r}: {exc}")
    keys = [(tuple(ps.points), ps.win_threshold) for ps in resolved]
    if len(set(keys)) != len(keys) or len({n.strip().lower() for n in names}) != len(names):
        parser.error(f"--systems {systems!r}: expected each point system once")
    seen: dict = {}
    for spec in agents:
        try:
            check_spec(spec)
            check_model_path(spec)
            key = spec_key(spec)
        except ValueError as exc:
            parser.error(f"--agent {spec!r}: {exc}")
        if key in seen:
            parser.error(f"--agent {seen[key]!r} and --agent {spec!r} name the same agent: expected each agent once")
        seen[key] = spec
    for name, ps in zip(names, resolved, strict=True):
        for spec in agents:
            try:
                make_agent(spec, system=ps)
            except Exception as exc:  # any failure to build: no game of it could be played
                parser.error(f"--agent {spec!r} cannot be built for point system {name!r}: {exc}")
        if out is not None:  # '' too: it names no folder
            try:
                check_out_dir(out, name="--out")
                # each system's folder takes an evaluation's outputs: a folder of other files is refused, as by
                # `pokersquares evaluate --out`, instead of having its games.jsonl replaced
                check_out_dir(os.path.join(out, name), foreign=False, name="--out")
                if not resume:  # a stopped run's games there: kept for --resume, not overwritten
                    refuse_journal(os.path.join(out, name), name="--out")
            except ValueError as exc:
                parser.error(str(exc))
    return names


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; prints the tables."""
    from pokersquares_env.cli import int_at_least, seed_arg

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", action="append", help=f"agent spec (repeatable; default {DEFAULT_AGENTS})")
    parser.add_argument("--games", type=int_at_least(1), default=2000)
    parser.add_argument("--seed", type=seed_arg, default=2024)
    parser.add_argument("--jobs", type=int_at_least(1), default=1)
    parser.add_argument("--systems", default="american,english",
                        help="comma-separated point systems, each evaluated in turn (default american,english)")
    parser.add_argument("--out", default=None)
    parser.add_argument("--resume", action="store_true",
                        help="reuse the games each system's folder under --out holds (a stopped run's journal, a "
                             "finished run's games.jsonl) and play only the rest: pokersquares evaluate --resume")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    if args.resume and args.out is None:
        parser.error("--resume needs --out DIR, the folder whose games are reused")
    from agents.evaluation import _jsonable, evaluate
    from agents.stats import fmt
    from pokersquares_env._files import write_json
    from pokersquares_env.scoring import expected_random_score

    agents = args.agent or DEFAULT_AGENTS
    systems = check_options(parser, agents, args.systems, args.out, resume=args.resume)
    rows = []
    for system in systems:
        start = time.perf_counter()
        res = evaluate(agents, games=args.games, seed=args.seed, scoring=system, jobs=args.jobs,
                       progress=not args.no_progress, out_dir=os.path.join(args.out, system) if args.out else None,
                       resume=args.resume)
        wall = time.perf_counter() - start
        print(f"\n## {system}: {args.games} common deals (seed {args.seed}), jobs={args.jobs}, wall {wall:.0f} s")
        print(f"exact expectation of random play: {expected_random_score(system):.3f}\n")
        print("| agent | games | mean | 95% CI | std | min | max | win rate | s/game |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in res.summary:
            print(f"| {r['agent']} | {r['games']} | {r['mean']:.2f} | +-{fmt(r['ci95'])} | {fmt(r['std'])} | "
                  f"{r['min']:.0f} | {r['max']:.0f} | {r['win_rate']:.3f} | {r['seconds_per_game']:.4f} |")
            rows.append({"system": system, **r})
        if res.errors:
            print(f"\n{len(res.errors)} games raised; first: {res.errors[0]}", file=sys.stderr)
    print("\n## Published anchors (American scoring; not measured here)\n")
    print("| player | mean | source |\n|---|---|---|")
    for name, mean, source in PUBLISHED:
        print(f"| {name} | {mean} | {source} |")
    if args.out:  # whole (atomic) and strict JSON: NaN (the interval of one game) as null, as the harness writes it
        write_json(os.path.join(args.out, "benchmark.json"),
                   _jsonable({"games": args.games, "seed": args.seed, "jobs": args.jobs, "rows": rows}), indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
