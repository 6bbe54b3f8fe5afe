"""Pool and pair agents' games across several ``pokersquares evaluate --out DIR`` runs, matched by deck.

``EvaluationResult.paired`` compares agents within one run.  This script reads
the ``games.jsonl`` of several runs (the harness's records: one
``pokersquares-record`` per game, with ``meta.deal``, ``meta.eval_seed`` and
``meta.seconds``) and keys every game by its deck, so the same deal played in
two runs is matched whatever its seed and index:

* ``--agent A``: A's games from every folder, pooled: mean, std, n and the
  95% t interval of the mean (``agents.stats.mean_ci95``);
* ``--agent A --agent B``: both pooled, and the paired difference A - B over
  the decks both played (mean, its 95% interval from the per-deck
  differences, deals A better / B better / ties), computed by
  ``agents.evaluation.EvaluationResult.paired`` itself;
* a table of which folder (and deal seed) gave how many games of each agent.

A deck that one agent played twice (the same seed run again, or two folders
holding the same run) is kept once, from the first folder given, and a note
says how many were dropped and whether the repeated games were identical.
Games that raised are left out and counted.  Folders whose games were played
under different rules are refused, and so is ``--scoring played`` over runs
played for different point systems.

Usage::

    python benchmarks/pair_runs.py runs/endgame runs/c8_seed7 runs/c8_seed11 runs/search_seed13 --agent search
    python benchmarks/pair_runs.py runs/depth8 runs/endgame --agent search:depth=8 --agent search
    python benchmarks/pair_runs.py runs/depth8_english runs/tuned-english --scoring english \\
        --agent search:depth=8 --agent search
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

# Run as a script, this file's folder comes first on sys.path and benchmarks/agents.py would hide the agents package.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))

from agents.stats import fmt  # noqa: E402  (after the path fix above)

SCORINGS = ("played", "american", "english")


class Run:
    """What one folder gave: its deal seeds, the agents it holds, and per chosen agent the games kept, the games
    dropped as repeated decks and the games that raised.  (A plain class: the tests load this file without
    registering it as a module, which a dataclass needs.)"""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.seeds: set[int] = set()
        self.agents: set[str] = set()
        self.kept: dict[str, int] = {}
        self.repeats: dict[str, int] = {}
        self.errors: dict[str, int] = {}


def games_path(folder: str) -> str:
    """``folder/games.jsonl`` (or ``folder`` itself when it names the file)."""
    return folder if folder.endswith(".jsonl") else os.path.join(folder, "games.jsonl")


def pps_systems(folder: str) -> list[str]:
    """The per-system sub-folders (names) of ``folder`` when a ``pokersquares evaluate --pps`` wrote it: its
    ``evaluation.json`` lists them as ``systems`` and its own folder holds no ``games.jsonl`` (none otherwise)."""
    from agents.evaluation import _marker_systems

    return _marker_systems(folder)


def _harness_problem(data: Any) -> str | None:
    """Why a parsed line is not a record the evaluation harness wrote (None when it is one)."""
    from pokersquares_env.records import FORMAT

    if not isinstance(data, dict):
        return f"a JSON {type(data).__name__}, not a record object"
    if data.get("format") != FORMAT:
        return f"format {data.get('format')!r}, expected {FORMAT!r}"
    if not isinstance(data.get("agent"), str):
        return "no agent"
    meta = data.get("meta")
    if not isinstance(meta, dict):
        return "no meta object"
    for key, kind in (("deal", int), ("eval_seed", int), ("seconds", (int, float))):
        value = meta.get(key)
        if isinstance(value, bool) or not isinstance(value, kind):
            return f"meta.{key} is {value!r}: the harness writes the deal index, the deal seed and the seconds"
    for key in ("rules", "point_system"):  # every record the harness writes holds both, a game that raised too
        if not isinstance(data.get(key), dict):
            return f"{key} is {data.get(key)!r}: the harness writes the rules and the point system as objects"
    if "error" in meta:
        return None
    if data.get("finished") is not True:
        return "an unfinished game that records no error"
    scores = data.get("scores")
    if not isinstance(scores, dict) or not all(isinstance(scores.get(k), (int, float)) for k in ("american", "english")):
        return "no scores {american, english}"
    if not isinstance(data.get("score"), (int, float)):
        return "no score"
    return None


def read_runs(folders: list[str], agents: list[str], scoring: str = "played"
              ) -> tuple[list[dict[str, Any]], list[Run], list[str], dict[str, Any]]:
    """The chosen agents' games from every folder, each deck once per agent.

    Returns the records in the form ``EvaluationResult`` computes from (``agent, deal, deck, placements, score,
    scores, hands, seconds``; ``deal`` is the index of the deck among all decks read, ``score`` the one ``scoring``
    chooses), one :class:`Run` per folder, notes, and the ``EvaluationResult`` config (rules, point system).
    Raises ``ValueError`` (or ``OSError``) naming the folder and line of anything that is not a harness record.
    """
    from pokersquares_env.records import GameRecord, RecordError
    from pokersquares_env.scoring import point_system

    if scoring not in SCORINGS:
        raise ValueError(f"scoring={scoring!r}: expected one of {', '.join(SCORINGS)}")
    named = {json.dumps(point_system(n).to_json(), sort_keys=True): n for n in ("american", "english")}
    deck_ids: dict[tuple[int, ...], int] = {}
    seen: dict[tuple[str, int], tuple[str, list[int]]] = {}  # (agent, deck id) -> (folder, placements)
    records: list[dict[str, Any]] = []
    runs: list[Run] = []
    notes: list[str] = []
    rules_of: dict[str, str] = {}  # rules JSON -> first folder
    played_of: dict[str, str] = {}  # played point system JSON -> first folder
    repeat_notes: dict[tuple[str, str, str], list[int]] = {}  # (agent, folder, earlier folder) -> [same, differ]
    for folder in folders:
        path = games_path(folder)
        pps = pps_systems(folder) if path != folder and not os.path.exists(path) else []
        if pps:
            subfolders = ", ".join(repr(os.path.join(folder, name)) for name in pps)
            raise ValueError(f"{folder!r} is the output of 'pokersquares evaluate --pps', whose games are in its "
                             f"per-system folders, each the same deals played for one point system: expected one of them "
                             f"instead ({subfolders})")
        run = Run(folder)
        runs.append(run)
        try:
            with open(path, encoding="utf-8") as fh:
                lines = fh.read().split("\n")
        except OSError as exc:
            raise OSError(f"{path!r}: cannot read it ({exc.strerror or exc}): expected the output folder of "
                          "'pokersquares evaluate --out DIR'") from None
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path!r}: not UTF-8 text ({exc.reason})") from None
        for lineno, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{folder!r} is not an evaluation run: {where} is not valid JSON ({exc.msg})") from None
            problem = _harness_problem(data)
            if problem:
                raise ValueError(f"{folder!r} is not an evaluation run: {where} is not a harness record ({problem}); "
                                 "expected the games.jsonl that 'pokersquares evaluate --out DIR' writes")
            agent, meta = data["agent"], data["meta"]
            run.agents.add(agent)
            run.seeds.add(meta["eval_seed"])
            if agent not in agents:
                continue
            if "error" in meta:
                run.errors[agent] = run.errors.get(agent, 0) + 1
                continue
            rules = json.dumps(data["rules"], sort_keys=True)
            played = json.dumps(data["point_system"], sort_keys=True)
            # a named system by its name: the shared object keeps its tables, a fresh one per record rebuilds them
            check = {**data, "point_system": named.get(played, data["point_system"])}
            try:
                rec = GameRecord.from_dict(check, source=where)  # replays it: the stored scores are the game's
            except RecordError as exc:
                raise ValueError(f"{folder!r} holds a damaged record: {exc}") from None
            rules_of.setdefault(rules, folder)
            played_of.setdefault(played, folder)
            if len(rules_of) > 1:
                first_rules, first = next(iter(rules_of.items()))
                raise ValueError(f"{folder!r} was played under the rules {rules}, {first!r} under {first_rules}: "
                                 "pool runs of one rule set")
            deck = tuple(rec.deck)
            deck_id = deck_ids.setdefault(deck, len(deck_ids))
            if (agent, deck_id) in seen:
                first, placements = seen[agent, deck_id]
                count = repeat_notes.setdefault((agent, folder, first), [0, 0])
                count[0 if placements == rec.placements else 1] += 1
                run.repeats[agent] = run.repeats.get(agent, 0) + 1
                continue
            seen[agent, deck_id] = (folder, list(rec.placements))
            run.kept[agent] = run.kept.get(agent, 0) + 1
            score = data["score"] if scoring == "played" else data["scores"][scoring]
            records.append({"agent": agent, "deal": deck_id, "deck": list(rec.deck), "placements": rec.placements,
                            "score": score, "scores": data["scores"], "hands": data.get("hands", []),
                            "seconds": float(meta["seconds"])})
    for (agent, folder, first), (same, differ) in repeat_notes.items():
        notes.append(f"{agent}: {same + differ} deck(s) of {folder} were already read from {first}: kept those of "
                     f"{first} ({same} identical game(s), {differ} different)")
    if len(played_of) > 1:
        systems = ", ".join(f"{json.loads(s).get('name', s)} in {f}" for s, f in played_of.items())
        if scoring == "played":
            raise ValueError(f"the runs were played for different point systems ({systems}): their played scores "
                             "do not pool; choose --scoring american or english")
        notes.append(f"the games were played for different point systems ({systems}); every figure here is their "
                     f"{scoring} score")
    if scoring == "played":
        system = json.loads(next(iter(played_of))) if played_of else "american"
    else:
        system = scoring
    config = {"seed": None, "scoring": system, "rules": json.loads(next(iter(rules_of))) if rules_of else {}}
    return records, runs, notes, config


def contributions(runs: list[Run], agents: list[str]) -> str:
    """A Markdown table: per folder, its deal seed(s) and the games of each agent kept (repeats, errors)."""
    lines = ["| folder | deal seed(s) | " + " | ".join(f"{a} games" for a in agents) + " |",
             "|---|---|" + "---:|" * len(agents)]
    for run in runs:
        cells = []
        for a in agents:
            extra = [f"{n} repeated" for n in [run.repeats.get(a, 0)] if n] + \
                    [f"{n} raised" for n in [run.errors.get(a, 0)] if n]
            cells.append(f"{run.kept.get(a, 0)}" + (f" ({', '.join(extra)}, left out)" if extra else ""))
        seeds = ", ".join(map(str, sorted(run.seeds))) or "-"
        lines.append(f"| {run.folder} | {seeds} | " + " | ".join(cells) + " |")
    totals = [str(sum(r.kept.get(a, 0) for r in runs)) for a in agents]
    lines.append("| all | | " + " | ".join(totals) + " |")
    return "\n".join(lines)


def pooled_line(row: dict[str, Any], scoring: str) -> str:
    """``AGENT: MEAN +- CI95 (95% CI LO to HI), std S, n N deals (SCORING)``."""
    lo, hi = row["mean"] - row["ci95"], row["mean"] + row["ci95"]
    return (f"{row['agent']}: {fmt(row['mean'])} +- {fmt(row['ci95'])} (95% CI {fmt(lo)} to {fmt(hi)}), "
            f"std {fmt(row['std'])}, n {row['games']} deals ({scoring})")


def paired_line(p: dict[str, Any]) -> str:
    """``A - B: DIFF +- CI95 on N common deals (...)``."""
    return (f"{p['a']} - {p['b']}: {fmt(p['mean_diff'], '+.2f')} +- {fmt(p['ci95'])} on {p['deals']} common deals "
            f"({p['scoring']}; std of the differences {fmt(p['std_diff'])}; {p['a']} better on {p['a_better']}, "
            f"{p['b']} better on {p['b_better']}, ties {p['ties']})")


def pair_runs(folders: list[str], agents: list[str], scoring: str = "played") -> dict[str, Any]:
    """Everything the script prints, as data: ``pooled`` (one harness summary row per agent), ``paired`` (the
    ``EvaluationResult.paired`` row of A - B, or None), ``runs``, ``notes`` and the ``scoring`` name."""
    from agents.evaluation import EvaluationResult, summarize

    records, runs, notes, config = read_runs(folders, agents, scoring)
    result = EvaluationResult(list(agents), records, config, len({r["deal"] for r in records}))
    missing = [a for a in agents if not any(r["agent"] == a for r in records)]
    if missing:
        held = sorted(set().union(*(run.agents for run in runs)))
        raise ValueError(f"no finished game of {', '.join(map(repr, missing))} in {', '.join(folders)}; "
                         f"the runs hold {', '.join(held) or 'no games'} (give the spec as the run wrote it)")
    name = result.system.name
    pooled = [summarize(records, a, config["scoring"]) for a in agents]
    paired = result.paired()[0] if len(agents) == 2 else None
    if paired is not None and paired["deals"] == 0:
        raise ValueError(f"{agents[0]!r} and {agents[1]!r} played no deck in common in {', '.join(folders)}")
    return {"pooled": pooled, "paired": paired, "runs": runs, "notes": notes, "scoring": name}


def main(argv: list[str] | None = None) -> int:
    """Print the contributions, the pooled figures and the paired difference; exit status 2 on bad input."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", metavar="DIR",
                        help="output folders of 'pokersquares evaluate --out DIR' (or their games.jsonl); of an "
                             "'evaluate --pps', one of its per-system folders")
    parser.add_argument("--agent", action="append", required=True, metavar="SPEC",
                        help="the agent (as the runs wrote its spec); given twice: A, then B for A - B")
    parser.add_argument("--scoring", choices=SCORINGS, default="played",
                        help="which score of each game: the one it was played for (default), or its American or "
                             "English score")
    args = parser.parse_args(argv)
    if len(args.agent) > 2 or len(set(args.agent)) != len(args.agent):
        parser.error(f"--agent {' '.join(args.agent)}: expected one agent, or two different ones (A, then B)")
    try:
        out = pair_runs(args.runs, args.agent, args.scoring)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(contributions(out["runs"], args.agent))
    print()
    for row in out["pooled"]:
        print(pooled_line(row, out["scoring"]))
    if out["paired"] is not None:
        print(paired_line(out["paired"]))
    for note in out["notes"]:
        print(f"note: {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
