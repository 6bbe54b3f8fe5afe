"""Does adding more independent advantage estimates lift ``search``?  (Issue 5's 127 target.)

``search`` plays the candidate maximising the sum of two advantage estimates:
two-ply expectimax on the learned tables (``E``) and rollouts by the one-ply
policy on the same tables (``M``).  Their errors are partly independent, which
is why the sum beats either alone.  This script adds a second pair from other
tables (by default the shipped tuned tables, whose biases differ): it plays

    E_first + E_second + M_first + M_second

(each term weighted by ``--weights``) over the union of both sides' ``candidates``
best cells, the rollouts of both sides on the same random orders of the true
unseen cards, against ``search`` with the same ``depth``, ``candidates`` and
``rollouts``, on the same common deals, and prints the paired difference::

    python benchmarks/search_ensemble.py --games 2000 --seed 2024 --jobs 2 --out runs/ensemble

With ``--weights 1,0,1,0`` the ensemble plays exactly the games of
``search:depth=D,...`` (the tests check this).  Needs the compiled kernels (numba).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

# Run as a script, this file's folder comes first on sys.path and benchmarks/agents.py would hide the agents package.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))

import numpy as np  # noqa: E402

from agents.base import Agent  # noqa: E402
from agents.search import RolloutSearchAgent  # noqa: E402

_TABLE_OPTIONS = {"tables", "games", "phases", "features", "cache"}


def _weights(text: Any) -> tuple[float, float, float, float]:
    """``"a,b,c,d"`` or ``"a/b/c/d"`` -> the weights of E_first, E_second, M_first, M_second."""
    try:
        out = tuple(float(p) for p in str(text).replace("/", ",").split(","))
    except ValueError:
        out = ()
    if len(out) != 4 or not all(np.isfinite(w) and w >= 0 for w in out) or not any(out):
        raise ValueError(f"weights={text!r}: expected 4 numbers >= 0 (E_first, E_second, M_first, M_second), "
                         "not all 0")
    return out  # type: ignore[return-value]


class EnsembleAgent(Agent):
    """Two ``search:depth=D`` agents on different tables, their four advantage estimates added.

    ``second``: ``"tuned"`` (the shipped tuned tables; default table options only) or a saved ``.npz``.  The
    other options (``games``, ``phases``, ``features``, ``cache``, ``tables``) choose the first side's tables as for
    ``search``.
    """

    name = "ensemble"
    uses_obs = False

    def __init__(self, *, system: Any = None, rules: Any = None, seed: int | None = None, candidates: int = 4,
                 rollouts: int = 512, depth: int = 8, weights: Any = "1,1,1,1", second: str = "tuned",
                 **table_options: Any) -> None:
        super().__init__(seed)
        self.weights = _weights(weights)
        unknown = sorted(set(table_options) - _TABLE_OPTIONS)
        if unknown:
            raise ValueError(f"ensemble options {unknown}: expected only candidates, rollouts, depth, weights, "
                             f"second and the table options {sorted(_TABLE_OPTIONS)}")
        common = dict(system=system, rules=rules, seed=seed, candidates=candidates, rollouts=rollouts, depth=depth,
                      backend="numba")
        self.first = RolloutSearchAgent(**common, **table_options)
        if second == "tuned":
            self.second = RolloutSearchAgent(**common, tuned=True, **table_options)
        elif isinstance(second, str) and second.endswith(".npz"):
            self.second = RolloutSearchAgent(**common, tables=second,
                                             **{k: v for k, v in table_options.items() if k != "tables"})
        else:
            raise ValueError(f"second={second!r}: expected 'tuned' or a saved tables file (.npz)")

    def act(self, obs, info, game, state) -> int:
        from agents._fast import rollout_means

        we1, we2, wm1, wm2 = self.weights
        sides = (self.first, self.second)
        values = [s._compiled(game, state, 2, s.candidates) for s in sides]
        legal = np.flatnonzero(~np.isnan(values[0]))
        total = we1 * values[0] + we2 * values[1]
        steps = 24 - len(state.placements)
        cells: list[int] = []  # the first side's best cells in its order, then the second side's others
        for side, v, used in zip(sides, values, (we1 or wm1, we2 or wm2), strict=True):
            if used:
                best = legal[np.argsort(-v[legal], kind="stable")][: side.candidates]
                cells += [int(c) for c in best if c not in cells]
        if len(legal) == 1 or steps <= 0 or len(cells) == 1:
            return int(cells[0])
        cells_a = np.array(cells, dtype=np.int64)
        unseen = np.array(game.unseen(state), dtype=np.int64)
        orders = unseen[np.argsort(self.rng.random((self.first.rollouts, unseen.size)), axis=1)[:, :steps]]
        score = total[cells_a]
        adjacent = game.rules.placement == "adjacent"
        for side, w in zip(sides, (wm1, wm2), strict=True):
            if w:
                c = side._compiled
                means = rollout_means(side._roll_flat, c.phases, c.nout, side._points, state, cells_a, state.card,
                                      orders, adjacent, game.rules.first_cell, side.depth)
                score = score + w * means
        return int(cells_a[int(np.argmax(score))])


def main(argv: list[str] | None = None) -> int:
    from pokersquares_env.cli import int_at_least, seed_arg

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int_at_least(1), default=2000)
    parser.add_argument("--seed", type=seed_arg, default=2024)
    parser.add_argument("--scoring", default="american")
    parser.add_argument("--jobs", type=int_at_least(1), default=1)
    parser.add_argument("--depth", type=int_at_least(0), default=8)
    parser.add_argument("--candidates", type=int_at_least(1), default=4)
    parser.add_argument("--rollouts", type=int_at_least(1), default=512)
    parser.add_argument("--weights", default="1,1,1,1", help="E_first,E_second,M_first,M_second")
    parser.add_argument("--second", default="tuned", help="'tuned' or a tables .npz")
    parser.add_argument("--options", default="", help="table options for both sides, e.g. games=2000,phases=4")
    parser.add_argument("--out", default=None)
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)

    from agents.evaluation import check_out_dir, evaluate
    from agents.registry import check_spec, make_agent, register_agent
    from agents.stats import fmt

    if args.out:  # before the tables are made and any game is played
        try:
            check_out_dir(args.out, foreign=False, name="--out")
        except ValueError as exc:
            parser.error(str(exc))
    register_agent("ensemble", EnsembleAgent, kind="params")
    opts = f"depth={args.depth},candidates={args.candidates},rollouts={args.rollouts}"
    opts += f",{args.options}" if args.options else ""
    base = f"search:{opts}"
    ensemble = f"ensemble:{opts},weights={args.weights.replace(',', '/')},second={args.second}"
    try:
        _weights(args.weights)
        for spec in (base, ensemble):
            check_spec(spec)
            make_agent(spec, system=args.scoring)  # every option, the point system and both tables, checked now
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    res = evaluate([base, ensemble], games=args.games, seed=args.seed, scoring=args.scoring, jobs=args.jobs,
                   progress=not args.no_progress)
    if args.out:
        res.save(args.out)
    print(res.brief(), end="")
    pair = res.paired()[0]
    print(f"ensemble - search: {0.0 - pair['mean_diff']:+.2f} +- {fmt(pair['ci95'])} on {pair['deals']} common deals")
    return 1 if any(row["errors"] for row in res.summary) else 0


if __name__ == "__main__":
    raise SystemExit(main())
