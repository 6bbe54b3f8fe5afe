"""Issue 5 experiments: search on top of ``expectimax:ply=2``, and retuned tables, paired against ply=2.

None of these reached the target (see docs/agents.md, "Things tried that did
not help"); the script is kept so that those figures can be reproduced.
Every run plays ``expectimax:ply=2`` and the variant on the same common deals
(``agents.evaluation.deal_deck``) and prints the paired mean difference with
its 95% CI.  One process; American scoring unless ``--scoring``.

Usage::

    # rollouts over ply=2's top cells (the 'probe' agent, options below)
    nice -n 10 python benchmarks/search_experiments.py --probe k=3,r=256 --games 400 --seed 7
    # exact expectimax over the last 4 cards, ply=2 before
    nice -n 10 python benchmarks/search_experiments.py --probe end=4,lo=99 --games 400 --seed 7
    # tables trained with other settings (agents.tables.train_tables keywords), then ply=2 on them
    nice -n 10 python benchmarks/search_experiments.py --train '{"epsilon": 0.5, "epsilon_end": 0.0}' --games 400
    # claims tables (contested flush draws; compiled kernels)
    python benchmarks/search_experiments.py --train '{"features": "claims"}' --games 2000
    # one round of policy iteration on two-ply self-play (agents.tables.improve_tables keywords)
    python benchmarks/search_experiments.py --improve '{"games": 61440}' --games 2000

Options of the probe agent (``probe:key=value,...``): ``k`` candidate cells
(ply=2's best), ``r`` rollouts per candidate (random orders of the true
unseen cards, the same for every candidate), ``depth`` moves per rollout
(0: to the end, scored exactly; else the board is then valued by the table,
the sum of its lines' values), ``lo``/``hi`` the range of cards already placed
where rollouts are used (ply=2 elsewhere), ``margin`` (leave ply=2's choice
only if the rollout advantage exceeds ``margin`` standard errors), ``w`` (if
> 0: play the candidate maximising ply=2's advantage plus ``w`` times the
rollout advantage) and ``end`` (exact expectimax over the unseen cards when
at most ``end`` cells are left; up to 4).  Rollouts play ply=1 greedy on the
outs tables.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))

import numpy as np  # noqa: E402

from agents.base import Agent  # noqa: E402
from agents.batch import COL, IS_COL, ROW, Batch, _keys, phase_of  # noqa: E402
from agents.expectimax import DEFAULT_GAMES, DEFAULT_PHASES, expectimax_values  # noqa: E402
from agents.stats import mean_ci95  # noqa: E402
from agents.tables import load_or_train  # noqa: E402
from pokersquares_env.cards import NUM_STANDARD  # noqa: E402
from pokersquares_env.core import Rules  # noqa: E402
from pokersquares_env.scoring import point_system  # noqa: E402

# --------------------------------------------------------------------------- exact endgame

def _final_scores(b: Batch, avail: np.ndarray, unseen: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Boards with 24 cards: mean final score over the available last cards (the last cell is forced)."""
    n = b.n
    idx = np.arange(n)
    free = np.argmax(~b.occ, axis=1)
    keys = b.keys()
    total = points[keys].sum(1).astype(float)
    real = unseen < NUM_STANDARD
    rank = np.where(real, unseen % 13, 0)
    suit = np.where(real, unseen // 13, 0)
    tot = np.repeat(total[:, None], unseen.size, axis=1)
    for line in (ROW[free], COL[free]):
        tot -= points[keys[idx, line]][:, None]
        t = b.t[idx, line][:, None] + 1
        k = b.k[idx, line][:, None] + (~real)[None, :]
        got = b.counts[idx, line][:, rank]
        pairs = np.minimum(b.pairs[idx, line][:, None] + np.where(real[None, :], got, 0), 10)
        ranks = b.ranks[idx, line][:, None] | np.where(real, 1 << rank, 0)[None, :]
        suits = b.suits[idx, line][:, None] | np.where(real, 1 << suit, 0)[None, :]
        tot += points[_keys(t, k, pairs, ranks, suits)]
    return np.where(avail, tot, 0.0).sum(1) / avail.sum(1)


def _expected(b: Batch, avail: np.ndarray, unseen: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Expected final score of each board under optimal play, the next card uniform over its available cards."""
    if b.placed == 24:
        return _final_scores(b, avail, unseen, points)
    n, u, f = b.n, unseen.size, 25 - b.placed
    b1 = b.repeat(u)
    legal = b1.legal()
    free = np.argsort(b1.occ, axis=1, kind="stable")[:, :f]
    ok = np.take_along_axis(legal, free, axis=1)
    b2 = b1.repeat(f)
    b2.place(free.ravel(), np.repeat(np.tile(unseen, n), f))
    av1 = np.repeat(avail, u, axis=0)
    av1[np.arange(n * u), np.tile(np.arange(u), n)] = False
    child = _expected(b2, np.repeat(av1, f, axis=0), unseen, points).reshape(n * u, f)
    best = np.where(ok, child, -np.inf).max(1).reshape(n, u)
    return np.where(avail, best, 0.0).sum(1) / avail.sum(1)


def endgame_values(game, state, points: np.ndarray) -> np.ndarray:
    """Exact expected final score of each legal cell (NaN where illegal); for at most 4 empty cells."""
    rules = game.rules
    b = Batch.from_state(state, 1, placement=rules.placement, first_cell=rules.first_cell)
    legal = np.flatnonzero(b.legal()[0])
    unseen = np.array(game.unseen(state), dtype=np.int64)
    bx = b.repeat(len(legal))
    bx.place(legal, np.full(len(legal), state.card))
    out = np.full(25, np.nan)
    if bx.placed == 25:
        out[legal] = points[bx.keys()].sum(1)
    else:
        out[legal] = _expected(bx, np.ones((len(legal), unseen.size), dtype=bool), unseen, points)
    return out


# --------------------------------------------------------------------------- the probe agent

def check_probe_options(*, k=3, r=128, depth=0, lo=0, hi=25, margin=0.0, w=0.0, end=0) -> None:
    """Raise a ``ValueError`` naming the first option of the probe agent out of its range (builds nothing)."""
    for name, value, low, high in (("k", k, 1, 25), ("r", r, 2, None), ("depth", depth, 0, None), ("lo", lo, 0, None),
                                   ("hi", hi, 0, None), ("end", end, 0, 4)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low or (
                high is not None and value > high):
            want = f"an integer >= {low}" if high is None else f"an integer from {low} to {high}"
            raise ValueError(f"probe: {name}={value!r}: expected {want}")
    for name, value in (("margin", margin), ("w", w)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not np.isfinite(
                value):
            raise ValueError(f"probe: {name}={value!r}: expected a finite number")


class ProbeAgent(Agent):
    """``expectimax:ply=2`` with rollouts over its best cells and/or an exact endgame (see the module docstring)."""

    name = "probe"
    uses_obs = False

    def __init__(self, *, system=None, rules=None, seed=None, k=3, r=128, depth=0, lo=0, hi=25, margin=0.0,
                 w=0.0, end=0):
        super().__init__(seed)
        check_probe_options(k=k, r=r, depth=depth, lo=lo, hi=hi, margin=margin, w=w, end=end)
        self.system = point_system("american" if system is None else system)
        self.rules = rules or Rules()
        self.table = load_or_train(self.system, self.rules, games=DEFAULT_GAMES, phases=DEFAULT_PHASES,
                                   features="outs").values
        self.points = self.system.line_points_table
        self.k, self.r, self.depth, self.lo, self.hi = k, r, depth, lo, hi
        self.margin, self.w, self.end = margin, w, end

    def act(self, obs, info, game, state):
        placed = len(state.placements)
        if self.end and placed >= 25 - self.end:
            return int(np.nanargmax(endgame_values(game, state, self.points)))
        v = expectimax_values(self.table, game, state, 2)
        legal = np.flatnonzero(~np.isnan(v))
        order = legal[np.argsort(-v[legal], kind="stable")]
        best = int(order[0])
        steps = 24 - placed
        if len(legal) == 1 or steps == 0 or not (self.lo <= placed < self.hi):
            return best
        cells = order[: self.k]
        unseen = np.array(game.unseen(state), dtype=np.int64)
        rules = game.rules
        bx = Batch.from_state(state, 1, placement=rules.placement, first_cell=rules.first_cell).repeat(len(cells))
        bx.place(cells, np.full(len(cells), state.card))
        d = steps if self.depth <= 0 else min(self.depth, steps)
        orders = np.argsort(self.rng.random((self.r, unseen.size)), axis=1)[:, :d]
        draws = np.tile(unseen[orders], (len(cells), 1))
        by = bx.repeat(self.r)
        phases = self.table.shape[2]
        for j in range(d):
            gains = by.cell_gains(draws[:, j], self.table, phase_of(by.placed + 1, phases))
            by.place(gains.argmax(1), draws[:, j])
        if by.placed == 25:
            val = self.points[by.keys()].sum(1)
        else:  # truncated: the table's value of the board
            vt = self.table[:, :, phase_of(by.placed, phases)]
            val = vt[by.keys(), IS_COL, by.outs()].sum(1)
        val = val.reshape(len(cells), self.r).astype(float)
        means = val.mean(1)
        if self.w > 0:
            return int(cells[int(np.argmax(v[cells] - v[best] + self.w * (means - means[0])))])
        i = int(np.argmax(means))
        if i == 0:
            return best
        diff = val[i] - val[0]
        se = diff.std(ddof=1) / np.sqrt(self.r)
        return int(cells[i]) if diff.mean() > self.margin * se else best


# --------------------------------------------------------------------------- paired runs

def _scores(spec: str, deals: list[int], seed: int, scoring: str) -> tuple[np.ndarray, float]:
    from agents.evaluation import run_chunk

    recs = run_chunk(spec, deals, {"seed": seed, "scoring": scoring, "rules": {}})
    errors = [r["error"] for r in recs if "error" in r]
    if errors:
        raise RuntimeError(f"{spec}: {errors[0]}")
    return np.array([r["score"] for r in recs], dtype=float), float(np.mean([r["seconds"] for r in recs]))


def main(argv: list[str] | None = None) -> int:
    from agents.registry import check_spec, parse_spec, register_agent
    from agents.tables import improve_tables, train_tables
    from pokersquares_env.cli import seed_arg

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--probe", metavar="OPTIONS", help="options of the probe agent, e.g. k=3,r=256")
    what.add_argument("--train", metavar="JSON", help="train_tables keywords for outs tables (400,000 games, "
                                                      "26 phases unless given), then play ply=2 on them")
    what.add_argument("--improve", metavar="JSON", help="improve_tables keywords (policy iteration on two-ply "
                                                        "self-play, numba) applied to the default outs tables, then "
                                                        "play ply=2 on the result")
    p.add_argument("--games", type=int, default=400)
    p.add_argument("--start", type=int, default=0, help="first deal index")
    p.add_argument("--seed", type=seed_arg, default=7)
    p.add_argument("--scoring", default="american")
    a = p.parse_args(argv)
    register_agent("probe", ProbeAgent, kind="params")
    if a.games < 2 or a.start < 0:
        p.error(f"--games {a.games}, --start {a.start}: expected at least 2 games and a non-negative start")
    try:
        point_system(a.scoring)
    except (ValueError, OSError) as exc:
        p.error(f"--scoring {a.scoring!r}: {exc}")
    if a.probe is not None:  # every option checked now, not after the baseline has played
        try:
            spec = f"probe:{a.probe}" if a.probe else "probe"
            check_spec(spec)
            check_probe_options(**parse_spec(spec)[2])
        except ValueError as exc:
            p.error(f"--probe {a.probe!r}: {exc}")
    for flag in ("train", "improve"):
        text = getattr(a, flag)
        if text is not None:
            try:
                kw = json.loads(text)
            except json.JSONDecodeError as exc:
                p.error(f"--{flag} {text!r}: expected a JSON object of keywords ({exc})")
            if not isinstance(kw, dict):
                p.error(f"--{flag} {text!r}: expected a JSON object of keywords, got {type(kw).__name__}")
    deals = list(range(a.start, a.start + a.games))
    with tempfile.TemporaryDirectory(prefix="tables-") as tmp:
        if a.probe is not None:
            spec = f"probe:{a.probe}" if a.probe else "probe"
        elif a.improve is not None:
            kw = json.loads(a.improve)
            path = os.path.join(tmp, "tables.npz")
            start = time.perf_counter()
            base = load_or_train(a.scoring, None, games=DEFAULT_GAMES, phases=DEFAULT_PHASES, features="outs")
            try:
                improve_tables(base, **kw).save(path)
            except (TypeError, ValueError) as exc:
                p.error(f"--improve {a.improve!r}: {exc} (the keywords of agents.tables.improve_tables)")
            print(f"policy iteration {kw} in {time.perf_counter() - start:.0f} s", flush=True)
            spec = f"expectimax:ply=2,tables={path}"
        else:
            kw = {"games": DEFAULT_GAMES, "phases": DEFAULT_PHASES, "features": "outs", **json.loads(a.train)}
            path = os.path.join(tmp, "tables.npz")
            start = time.perf_counter()
            try:
                train_tables(a.scoring, None, **kw).save(path)
            except (TypeError, ValueError) as exc:
                p.error(f"--train {a.train!r}: {exc} (the keywords of agents.tables.train_tables)")
            print(f"trained {kw} in {time.perf_counter() - start:.0f} s", flush=True)
            spec = f"expectimax:ply=2,tables={path}"
        base, base_s = _scores("expectimax:ply=2", deals, a.seed, a.scoring)
        var, var_s = _scores(spec, deals, a.seed, a.scoring)
    d = var - base
    ci = mean_ci95(d)  # the t interval, as everywhere else
    print(f"{spec} | deals {a.start}..{a.start + a.games - 1} of seed {a.seed}, {a.scoring} | "
          f"mean {var.mean():.2f} ({var_s:.3f} s/game) vs ply=2 {base.mean():.2f} ({base_s:.3f} s/game) | "
          f"paired {d.mean():+.2f} +- {ci:.2f} | better {int((d > 0).sum())}, worse {int((d < 0).sum())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
