"""Issue 5: strength against time -- where the agents stand beside the published Poker Squares players.

Reads the output folders of ``pokersquares evaluate --out DIR`` (or of
``benchmarks/agents.py --out DIR``, one folder per point system, and
``benchmarks/search_ensemble.py --out DIR``): each folder's ``summary.json``
gives every agent's mean, 95% interval and seconds per game, and the first
record of its ``games.jsonl`` gives the deal seed and the rules.  It prints a
Markdown table sorted by time and draws the mean +- 95% CI of each agent
against seconds per game (log scale).  Under American scoring the published
players are drawn too, as horizontal lines (they are figures from papers, not
measured here: sources in :data:`ANCHORS`), with the contests' 30-60 s a game
shaded and the issue's 127 target dashed.

Only runs on the same deals compare directly: the table names each run's seed
and number of deals, and the script says so when they differ.  Seconds per
game are what each run recorded (per process; ``--jobs 1`` is one core); they
depend on the machine and its load.  An agent that appears in two runs on the
same deals is kept once (the first run given).  An agent that finished no game has no mean (``null`` in
``summary.json``): it is left out with a note; a run of one game has no interval (``n/a``, no error bar).

Usage::

    python benchmarks/frontier.py runs/frontier_base runs/endgame runs/depth8 runs/depth_8_candidates_8 \\
        --drop search:endgame=4 --min-mean 100 --out docs/images/frontier.png
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Any

# Run as a script, this file's folder comes first on sys.path and its name would hide the agents package.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))

from agents.stats import fmt  # noqa: E402  (after the path fix above)

#: Published American figures: (label, low, high, source).  A single figure has low == high.  Not measured here.
ANCHORS = [
    ("Flat MC with flush playouts (about 121)", 121.0, 121.0, "Neller, Poker Squares contest materials"),
    ("NARL and Expectimax-NARL (123.3 to 125.2, 60 s a game)", 123.3, 125.2, "Neller et al., EAAI-2016"),
    ("BeeMo (126.0, SD 31.5, 1,000 games)", 126.0, 126.0, "Castro-Wunsch et al., CG 2016"),
]
#: The time a game the published contests allowed (seconds): 30 (EAAI-2016) to 60 (Neller's 2013 contest).
CONTEST_SECONDS = (30.0, 60.0)
#: Issue 5's target for the strongest agent (American).
TARGET = 127.0

_KEYS = ("agent", "games", "seconds_per_game")


def _read_json(path: str, what: str) -> Any:
    try:
        with open(path, encoding="utf-8") as fh:
            if what == "record":  # the first record only; an empty file has none
                line = fh.readline()
                return json.loads(line) if line.strip() else None
            return json.loads(fh.read())
    except OSError as exc:
        raise FileNotFoundError(f"{path!r}: cannot read it ({exc.strerror}): expected the output folder of "
                                "'pokersquares evaluate --out DIR'") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path!r} is not valid JSON ({exc.msg}, line {exc.lineno}): expected the {what} written "
                         "by 'pokersquares evaluate --out DIR'") from None


def load_run(path: str, system: str = "american") -> list[dict[str, Any]]:
    """The rows of one evaluation folder (or its ``summary.json``): agent, games, seed, mean, ci95, seconds, run."""
    folder = os.path.dirname(path) if path.endswith(".json") else path
    summary_path = os.path.join(folder, "summary.json")
    summary = _read_json(summary_path, "summary")
    if not isinstance(summary, list) or not summary:
        raise ValueError(f"{summary_path!r}: expected a non-empty JSON list of agent summaries, got "
                         f"{type(summary).__name__}")
    seed, rules = None, None
    games_path = os.path.join(folder, "games.jsonl")
    if os.path.exists(games_path):
        first = _read_json(games_path, "record")
        seed = (first.get("meta") or {}).get("eval_seed") if isinstance(first, dict) else None
        rules = first.get("rules") if isinstance(first, dict) else None
    rows = []
    for i, row in enumerate(summary):
        keys = (*_KEYS, f"mean_{system}", f"ci95_{system}")
        missing = [k for k in keys if not isinstance(row, dict) or k not in row]
        if missing:
            raise ValueError(f"{summary_path!r}, entry {i}: missing {missing}: expected the keys {list(keys)} "
                             f"(is {system!r} one of the systems every game is scored under?)")
        try:
            rows.append({"agent": str(row["agent"]), "games": int(row["games"]), "seed": seed, "rules": rules,
                         "played": str(row.get("scoring")),
                         "mean": _number(row[f"mean_{system}"]), "ci95": _number(row[f"ci95_{system}"]),
                         "seconds": _number(row["seconds_per_game"]), "run": folder})
        except (TypeError, ValueError) as exc:  # e.g. "games": null, a mean that is not a number
            raise ValueError(f"{summary_path!r}, entry {i}: {exc}: expected a number of games and numbers (or null) "
                             f"for {list(keys[2:])}") from None
    return rows


def _number(value: Any) -> float:
    """A summary figure as a float: ``null`` (what the harness writes for NaN: no finished game, or an interval
    over one game) as NaN."""
    return math.nan if value is None else float(value)


def collect(paths: list[str], system: str = "american", drop: list[str] | tuple[str, ...] = ()
            ) -> tuple[list[dict[str, Any]], list[str]]:
    """Every run's rows (an agent already seen on the same deals, or named in ``drop``, is left out) and notes on
    what was left out or differs."""
    rows, notes, seen, used = [], [], set(), set()
    for path in paths:
        for row in load_run(path, system):
            if row["agent"] in drop:
                used.add(row["agent"])
                continue
            if math.isnan(row["mean"]):
                notes.append(f"{row['agent']} in {row['run']} left out: no finished game (no mean to draw)")
                continue
            # the same agent on the same deals, rules and played point system: the same games
            key = (row["agent"], row["games"], row["seed"], json.dumps(row["rules"], sort_keys=True), row["played"])
            if key in seen:
                notes.append(f"{row['agent']} in {row['run']} dropped: already given on the same deals")
                continue
            seen.add(key)
            rows.append(row)
    unknown = [a for a in drop if a not in used]
    if unknown:
        raise ValueError(f"--drop {unknown}: no such agent in the runs given")
    deals = sorted({(r["seed"], r["games"]) for r in rows}, key=str)
    if len(deals) > 1:
        notes.append("the runs do not share their deals (seed, games): "
                     + ", ".join(f"({s}, {g})" for s, g in deals) + "; compare means across them with care")
    rules = sorted({json.dumps(r["rules"], sort_keys=True) for r in rows})
    if len(rules) > 1:
        notes.append("the runs were played under different rules: " + ", ".join(rules))
    played = sorted({r["played"] for r in rows})
    if len(played) > 1:
        notes.append(f"the agents played for different point systems ({', '.join(played)}); every mean here is the "
                     f"{system} score of their games")
    return sorted(rows, key=lambda r: (r["seconds"], r["mean"])), notes


def table(rows: list[dict[str, Any]], system: str) -> str:
    """A Markdown table of the rows, fastest first."""
    lines = [f"| agent | mean {system} ± 95% CI | s/game | deals (seed) | run |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['agent']} | {r['mean']:.2f} ± {fmt(r['ci95'])} | {fmt(r['seconds'], '.4f')} | "
                     f"{r['games']} ({r['seed']}) | {r['run']} |")
    return "\n".join(lines)


#: The image formats ``--out`` may name (by its extension): the file is written under exactly that name.
FORMATS = (".png", ".svg")


def _image_path(out: str) -> bool:
    """Whether ``out`` ends in one of :data:`FORMATS` (else matplotlib would add ``.png`` or refuse the format)."""
    return os.path.splitext(out)[1].lower() in FORMATS


def out_name_problem(out: str) -> str | None:
    """Why ``out`` cannot name the plot (a folder, or not ending in one of :data:`FORMATS`), or ``None``."""
    if os.path.isdir(out):
        return f"--out {out!r} is a folder: expected the path of the image to write ({' or '.join(FORMATS)})"
    if not _image_path(out):
        return f"--out {out!r}: expected the path of a {' or '.join(FORMATS)} image"
    return None


#: Where a point's label may go, in points from the point, tried in this order: (dx, dy, horizontal alignment).
LABEL_SPOTS = [(6, 4, "left"), (6, -10, "left"), (-6, 4, "right"), (-6, -10, "right"), (6, 12, "left"),
               (6, -18, "left"), (-6, 12, "right"), (-6, -18, "right"), (6, 20, "left"), (6, -26, "left")]


def place_labels(fig: Any, ax: Any, labels: list[Any], points: list[tuple[float, float, float]]) -> None:
    """Move each point's label (an annotation at ``points[i] = (x, mean, ci95)``) to the first of
    :data:`LABEL_SPOTS` where it overlaps no label placed before it and no other point's error bar (the spot of
    least overlap if none is free).  Before, two labels could touch, and a label could lie across the error bar of a
    point close in time."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    # the file-only figures of agents.evaluation.pyplot have no canvas that renders: measure the labels with Agg's
    renderer = (fig.canvas if hasattr(fig.canvas, "get_renderer") else FigureCanvasAgg(fig)).get_renderer()
    to_display = ax.transData.transform
    pad = 3 * fig.dpi / 72  # half the cap width, in pixels

    def bar(x: float, y: float, ci: float) -> tuple[float, float, float, float]:
        (x0, y0), (x1, y1) = to_display([(x, y - ci), (x, y + ci)])
        return x0 - pad, min(y0, y1) - pad, x0 + pad, max(y0, y1) + pad

    def overlap(a: tuple[float, ...], b: tuple[float, ...]) -> float:
        w = min(a[2], b[2]) - max(a[0], b[0])
        h = min(a[3], b[3]) - max(a[1], b[1])
        return w * h if w > 0 and h > 0 else 0.0

    bars = [bar(*p) for p in points]
    placed: list[tuple[float, float, float, float]] = []
    order = sorted(range(len(labels)), key=lambda i: -points[i][1])  # the strongest first: they crowd at the top
    for i in order:
        label = labels[i]
        best = None
        for dx, dy, align in LABEL_SPOTS:
            label.set_position((dx, dy))
            label.set_horizontalalignment(align)
            e = label.get_window_extent(renderer)
            box = (e.x0, e.y0, e.x1, e.y1)
            cost = sum(overlap(box, b) for b in placed) + sum(overlap(box, b) for j, b in enumerate(bars) if j != i)
            if best is None or cost < best[0]:
                best = (cost, dx, dy, align, box)
            if cost == 0:
                break
        _, dx, dy, align, box = best
        label.set_position((dx, dy))
        label.set_horizontalalignment(align)
        placed.append(box)


def _finite_float(text: str) -> float:
    """``--min-mean``: a finite number (a NaN would leave every agent below it, so none drawn)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r}: expected a finite number (points)")
    return value


def plot(rows: list[dict[str, Any]], out: str, system: str, *, min_mean: float | None = None,
         anchors: bool = True) -> list[str]:
    """Draw the mean ± CI of each row against seconds per game; the agents below ``min_mean`` are listed, not drawn.
    ``out`` ends in one of :data:`FORMATS` (a ``ValueError`` otherwise); returns the path written."""
    if not _image_path(out):  # matplotlib would write another name, or refuse it
        raise ValueError(f"out={out!r}: expected the path of a {' or '.join(FORMATS)} image")

    from agents.evaluation import pyplot

    plt = pyplot("frontier plots")
    shown = [r for r in rows if min_mean is None or r["mean"] >= min_mean]
    hidden = [r for r in rows if r not in shown]
    fig, ax = plt.subplots(figsize=(10, 6))
    ax.set_xscale("log")
    xs = [max(r["seconds"], 1e-5) if math.isfinite(r["seconds"]) else 1e-5 for r in shown]
    labels, points = [], []
    for r, x in zip(shown, xs, strict=True):
        ci = 0.0 if math.isnan(r["ci95"]) else r["ci95"]  # one game: no interval to draw
        ax.errorbar([x], [r["mean"]], yerr=[ci], fmt="o", color="C0", capsize=3)
        points.append((x, r["mean"], ci))
        # placed once the axes are laid out (place_labels): off each other and off the other points' error bars
        labels.append(ax.annotate(r["agent"], (x, r["mean"]), textcoords="offset points", xytext=LABEL_SPOTS[0][:2],
                                  fontsize=7))
    american = system == "american"
    if american and anchors:
        ax.axvspan(*CONTEST_SECONDS, color="0.85", zorder=0, label="published contests' time a game (30-60 s)")
        for j, (label, lo, hi, source) in enumerate(ANCHORS):
            color = f"C{j + 1}"
            if hi > lo:
                ax.axhspan(lo, hi, color=color, alpha=0.15, label=f"published: {label}; {source}")
            else:
                ax.axhline(lo, color=color, lw=1.2, label=f"published: {label}; {source}")
        ax.axhline(TARGET, color="red", ls="--", lw=1.2, label=f"issue 5 target ({TARGET:g})")
        ax.set_ylim(top=max(ax.get_ylim()[1], TARGET + 0.5))
    right = max(xs + ([CONTEST_SECONDS[1]] if american and anchors else []), default=1.0)
    ax.set_xlim(min(xs, default=1e-3) / 2, right * 2)
    ax.set_xlabel("seconds per game (as recorded by each run; log scale)")
    ax.set_ylabel(f"mean {system} score ± 95% CI")
    deals = sorted({f"{r['games']} deals of seed {r['seed']}" for r in rows})
    title = f"Strength against time ({'; '.join(deals)})"
    if hidden:
        title += "\nnot shown: " + ", ".join(f"{r['agent']} {r['mean']:.1f}" for r in hidden)
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    place_labels(fig, ax, labels, points)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return [out]


def main(argv: list[str] | None = None) -> int:
    """Print the table (and notes) and save the plot; exit status 2 on a bad run folder."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="output folders of 'pokersquares evaluate --out DIR'")
    parser.add_argument("--scoring", default="american", choices=["american", "english"],
                        help="which of the two scores every game has to plot (default american)")
    parser.add_argument("--out", default="runs/frontier.png",
                        help="the image to write, .png or .svg (default runs/frontier.png)")
    parser.add_argument("--min-mean", type=_finite_float, default=None,
                        help="agents with a lower mean are listed in the title instead of drawn")
    parser.add_argument("--drop", action="append", default=[], metavar="AGENT",
                        help="leave this agent out (repeatable; the spec as the run wrote it)")
    parser.add_argument("--no-anchors", action="store_true", help="leave out the published players and the target")
    args = parser.parse_args(argv)
    from pokersquares_env._files import output_file_problem

    problem = out_name_problem(args.out)
    if problem:
        parser.error(problem)
    try:
        rows, notes = collect(args.runs, args.scoring, args.drop)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    problem = output_file_problem(args.out, "--out")  # its folder made (or refused) before the table is printed
    if problem:
        parser.error(problem)
    print(table(rows, args.scoring))
    for note in notes:
        print(f"note: {note}")
    for path in plot(rows, args.out, args.scoring, min_mean=args.min_mean, anchors=not args.no_anchors):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
