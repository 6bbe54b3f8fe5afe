"""Do line values re-learned for the deal at hand lift the search agents?  (Issue 5's 127 target.)

Temporal-difference search (Silver, Sutton and Mueller, 2012) in Monte Carlo
form: before each move, play ``local`` games from the current board to the
end, over random orders of the true unseen cards (the drawn card first),
epsilon-greedily by one-ply play on the current tables, and re-estimate every
line abstraction those games visit as the mean of the points its line ends
with, blended towards the global table value with a prior weight of ``prior``
games.  The learned tables average over every deal that reaches an
abstraction; the local ones only over completions of *this* deal, so they see
which ranks and suits are really left.  The move is then chosen by the agent
named on the command line playing on the local tables (two-ply expectimax for
``td-expectimax``; two-ply expectimax plus one-ply rollouts, both on the local
tables, for ``td-search``)::

    python benchmarks/td_search.py --agents expectimax td-expectimax:local=2000 --games 400 --seed 7

``local=0`` plays exactly the games of the base agent (the tests check this).
Needs the compiled kernels (numba).
"""

from __future__ import annotations

import argparse
import os
import sys

# Run as a script, this file's folder comes first on sys.path and benchmarks/agents.py would hide the agents package.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))

import numpy as np  # noqa: E402
from numba import njit, prange  # noqa: E402

from agents._fast import (  # noqa: E402
    _SUIT_OF,
    _greedy_cell,
    _key,
    _legal,
    _nth_legal,
    _outs,
    _phase,
    _place,
    _prep,
    board_from_state,
    ply_values,
)
from agents.expectimax import ExpectimaxAgent  # noqa: E402
from agents.search import RolloutSearchAgent  # noqa: E402


@njit(nogil=True, parallel=True)
def _local_play(line0, cnt0, seen0, cells0, orders, explore, noise, vf, phases, nout, adjacent, first_cell, points,
                rec, final):  # pragma: no cover - compiled
    """Game ``g`` plays ``orders[g]`` from the board ``line0 ...`` one-ply epsilon-greedily (a random legal cell where
    ``explore[g, m]``); ``rec[g, m, l]``: flat kernel index of line ``l``'s abstraction after move ``m`` (-1 for full
    lines); ``final[g, l]``: the points line ``l`` ends with."""
    n, steps = orders.shape
    for g in prange(n):
        line = line0.copy()
        cnt = cnt0.copy()
        seen = seen0.copy()
        cells = cells0.copy()
        legal = np.zeros(25, dtype=np.int64)
        ur = np.zeros(13, dtype=np.int64)
        us = np.zeros(4, dtype=np.int64)
        d = np.zeros(10)
        live = np.empty((3, 10), dtype=np.int64)
        base = np.empty(10, dtype=np.int64)
        for m in range(steps):
            card = orders[g, m]
            if explore[g, m]:
                cell = _nth_legal(legal, int(noise[g, m] * _legal(cells, adjacent, first_cell, legal)))
            else:
                cell = _greedy_cell(line, cnt, seen, cells, card, vf, phases, nout, adjacent, first_cell, legal, ur,
                                    us, d, live, base)
            _place(line, cnt, seen, cells, cell, card)
            ph = _phase(cells[2], phases)
            _prep(line, seen, vf, phases, nout, ph, ur, us, live, base)
            for li in range(10):
                t = line[0, li]
                if t >= 5:
                    rec[g, m, li] = -1
                    continue
                s = _SUIT_OF[line[4, li]]
                o = _outs(t, s, us[s] if s >= 0 else 0, live[0, li], live[1, li]) if nout > 1 else 0
                rec[g, m, li] = base[li] * nout + o
        for li in range(10):
            final[g, li] = points[_key(line[0, li], line[1, li], line[2, li], line[3, li], line[4, li])]


def local_tables(vf: np.ndarray, phases: int, nout: int, points: np.ndarray, state, unseen: np.ndarray, games: int,
                 epsilon: float, prior: float, rng: np.random.Generator, adjacent: bool,
                 first_cell: int | None) -> np.ndarray:
    """A copy of the flat table ``vf`` whose entries visited by ``games`` completions of ``state`` (the drawn card
    first, then random orders of ``unseen``) are ``(prior * vf + sum of final line points) / (prior + visits)``."""
    line, cnt, seen, cells = board_from_state(state)
    steps = 25 - len(state.placements)
    orders = np.empty((games, steps), dtype=np.int64)
    orders[:, 0] = state.card
    if steps > 1:
        orders[:, 1:] = unseen[np.argsort(rng.random((games, unseen.size)), axis=1)[:, : steps - 1]]
    explore = rng.random((games, steps)) < epsilon
    noise = rng.random((games, steps))
    rec = np.empty((games, steps, 10), dtype=np.int64)
    final = np.empty((games, 10))
    _local_play(line, cnt, seen, cells, orders, explore, noise, vf, phases, nout, bool(adjacent),
                -1 if first_cell is None else int(first_cell), np.asarray(points, dtype=np.float64), rec, final)
    idx = rec.reshape(-1)
    tgt = np.broadcast_to(final[:, None, :], rec.shape).reshape(-1)
    keep = idx >= 0
    idx, tgt = idx[keep], tgt[keep]
    uniq, inv, counts = np.unique(idx, return_inverse=True, return_counts=True)
    sums = np.bincount(inv, weights=tgt, minlength=uniq.size)
    out = vf.copy()
    out[uniq] = (prior * vf[uniq] + sums) / (prior + counts)
    return out


def _local_options(local, epsilon, prior, last):
    if isinstance(local, bool) or not isinstance(local, (int, np.integer)) or local < 0:
        raise ValueError(f"local={local!r}: expected an integer >= 0 (games re-played before each move)")
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0 <= epsilon <= 1:  # NaN too
        raise ValueError(f"epsilon={epsilon!r}: expected a number from 0 to 1")
    if isinstance(prior, bool) or not isinstance(prior, (int, float)) or not (np.isfinite(prior) and prior > 0):
        raise ValueError(f"prior={prior!r}: expected a finite number > 0 (games)")
    if isinstance(last, bool) or not isinstance(last, (int, np.integer)) or not 0 <= last <= 25:
        raise ValueError(f"last={last!r}: expected an integer from 0 to 25 (the most cards placed when the tables are "
                         f"still re-learned)")
    return int(local), float(epsilon), float(prior), int(last)


class _Local:
    """Mixin: ``self._local_flat(game, state)``, the deal's local table (the global one with ``local=0`` or too late
    in the game)."""

    def _local_flat(self, game, state):
        c = self._compiled
        if self.local == 0 or len(state.placements) > self.last:
            return c.flat
        rules = game.rules
        unseen = np.array(game.unseen(state), dtype=np.int64)
        return local_tables(c.flat, c.phases, c.nout, self._points, state, unseen, self.local, self.epsilon,
                            self.prior, self.rng, rules.placement == "adjacent", rules.first_cell)


class TDExpectimaxAgent(_Local, ExpectimaxAgent):
    """``expectimax:ply=2`` on tables re-learned for the deal before each move (``local`` games, ``epsilon``,
    ``prior``; up to ``last`` cards placed)."""

    name = "td-expectimax"

    def __init__(self, *, local: int = 2000, epsilon: float = 0.1, prior: float = 20.0, last: int = 22,
                 **options) -> None:
        if options.get("ply", 2) not in (1, 2) or "backend" in options:
            raise ValueError(f"td-expectimax options {options}: ply 1 or 2 only, compiled backend only")
        local_options = _local_options(local, epsilon, prior, last)  # checked before the base agent loads its tables
        super().__init__(backend="numba", **options)
        self.local, self.epsilon, self.prior, self.last = local_options
        self._points = self.system.line_points_table

    def action_values(self, obs, info, game, state):
        c, rules = self._compiled, game.rules
        flat = self._local_flat(game, state)
        return ply_values(flat, c.phases, c.nout, state, game.unseen(state), self.ply, rules.placement == "adjacent",
                          rules.first_cell)


class TDSearchAgent(_Local, RolloutSearchAgent):
    """``search`` (full one-ply rollouts, compiled) with both ``E`` and the rollouts on the deal's local table."""

    name = "td-search"

    def __init__(self, *, local: int = 2000, epsilon: float = 0.1, prior: float = 20.0, last: int = 22,
                 **options) -> None:
        unsupported = sorted(set(options) & {"ply", "rollout", "endgame", "reply", "backend", "rollout_tables"})
        if unsupported:
            raise ValueError(f"td-search options {unsupported}: not supported")
        local_options = _local_options(local, epsilon, prior, last)  # checked before the base agent loads its tables
        super().__init__(backend="numba", **options)
        self.local, self.epsilon, self.prior, self.last = local_options

    def _expectimax(self, game, state):
        """Two-ply ``E`` on the deal's local table; the rollouts of this move play on it too."""
        c, rules = self._compiled, game.rules
        self._roll_flat = self._local_flat(game, state)
        return ply_values(self._roll_flat, c.phases, c.nout, state, game.unseen(state), 2,
                          rules.placement == "adjacent", rules.first_cell)


def main(argv: list[str] | None = None) -> int:
    from pokersquares_env.cli import int_at_least, seed_arg

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", nargs="+", default=["expectimax", "td-expectimax"])
    parser.add_argument("--games", type=int_at_least(1), default=400)
    parser.add_argument("--seed", type=seed_arg, default=7)
    parser.add_argument("--scoring", default="american")
    parser.add_argument("--jobs", type=int_at_least(1), default=1,
                        help="processes (default 1; above 1 each worker compiles the kernels in its first game, "
                             "which then counts in the seconds a game)")
    parser.add_argument("--out", default=None)
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)

    from agents.evaluation import check_out_dir, evaluate
    from agents.registry import make_agent, register_agent, spec_key
    from agents.stats import fmt

    if args.out is not None:  # before the tables are made and any game is played
        try:
            check_out_dir(args.out, foreign=False, name="--out")
        except ValueError as exc:
            parser.error(str(exc))

    register_agent("td-expectimax", TDExpectimaxAgent, kind="params")
    register_agent("td-search", TDSearchAgent, kind="params")
    try:
        keys = [spec_key(spec) for spec in args.agents]
    except ValueError as exc:
        parser.error(f"--agents: {exc}")
    if len(set(keys)) != len(keys):
        parser.error(f"--agents {' '.join(args.agents)}: expected each agent once")
    from pokersquares_env.core import PokerSquaresGame

    try:
        for spec in args.agents:
            agent = make_agent(spec, system=args.scoring)
            if args.jobs > 1:
                # no move here: the local play's compiled kernel starts OpenMP threads, and a process using GNU
                # OpenMP must not fork the workers (they would die at once); each worker compiles on its first move
                continue
            game = PokerSquaresGame()  # one move compiles the kernels here, not inside the first timed games
            state = game.init(game.deal(np.random.default_rng(0)))
            game.apply(state, agent.act(None, {"action_mask": game.action_mask(state)}, game, state))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    res = evaluate(args.agents, games=args.games, seed=args.seed, scoring=args.scoring, jobs=args.jobs,
                   progress=not args.no_progress)
    if args.out:
        res.save(args.out)
    print(res.brief(), end="")
    for pair in res.paired():
        print(f"{pair['a']} - {pair['b']}: {pair['mean_diff']:+.2f} +- {fmt(pair['ci95'])} on {pair['deals']} deals")
    return 1 if any(row["errors"] for row in res.summary) else 0


if __name__ == "__main__":
    sys.exit(main())
