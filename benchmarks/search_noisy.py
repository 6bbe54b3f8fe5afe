"""Do noisy rollouts lift ``search``?  (Issue 5's 127 target; a measured negative result.)

``search`` rates its candidate cells by rollouts of the *greedy* one-ply
policy, which is deterministic given the card order: every rollout makes the
same systematic misjudgements.  In Monte Carlo search a stochastic rollout
policy sometimes gives better-balanced estimates than a stronger
deterministic one (simulation balancing), so this script adds Gumbel noise of
scale ``temp`` (in points) to every one-ply gain in the rollouts -- a softmax
policy of temperature ``temp`` -- with the same noise for every candidate in
rollout ``r`` (common random numbers), and plays it against ``search`` on the
same common deals::

    python benchmarks/search_noisy.py --temps 1 3 8 --games 1000 --seed 17 --jobs 2 --out runs/noisy

``temp=0`` plays exactly the games of ``search`` (the tests check this; ``--temps 0`` shows it on the command line,
a paired difference of 0).  Needs the compiled kernels (numba).
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
from numba import njit  # noqa: E402

from agents._fast import _boards_after, _final_score, _greedy_cell, _place, _rollout_scratch  # noqa: E402
from agents.search import RolloutSearchAgent  # noqa: E402


@njit(nogil=True)
def _noisy_cell(line, cnt, seen, cells, card, vf, phases, nout, adjacent, first_cell, legal, ur, us, d, live, base,
                temp):  # pragma: no cover - compiled
    """The one-ply cell of highest gain plus Gumbel noise of scale ``temp`` (``temp=0``: the greedy cell)."""
    cell = _greedy_cell(line, cnt, seen, cells, card, vf, phases, nout, adjacent, first_cell, legal, ur, us, d, live,
                        base)  # fills ``legal`` and the line gains ``d``
    if temp <= 0:
        return cell
    best = -np.inf
    for c in range(25):
        if legal[c]:
            g = d[c // 5] + d[5 + c % 5] - temp * np.log(-np.log(np.random.random() + 1e-300) + 1e-300)
            if g > best:
                best = g
                cell = c
    return cell


@njit(nogil=True)
def _noisy_totals(line, cnt, seen, cells, orders, vf, phases, nout, adjacent, first_cell, points, out, temp,
                  seed):  # pragma: no cover - compiled
    """``out[i, r]``: final score of board ``i`` played out on ``orders[r]`` by the noisy one-ply policy; the noise
    of rollout ``r`` comes from ``seed + r`` whatever the board, so the candidates share it."""
    ln, cn, se, ce, legal, ur, us, d, live, base = _rollout_scratch(line, cnt, seen, cells)
    for r in range(orders.shape[0]):
        for i in range(line.shape[0]):
            np.random.seed(seed + r)
            ln[:] = line[i]
            cn[:] = cnt[i]
            se[:] = seen[i]
            ce[:] = cells[i]
            j = 0
            while ce[2] < 25:
                card = orders[r, j]
                c = _noisy_cell(ln, cn, se, ce, card, vf, phases, nout, adjacent, first_cell, legal, ur, us, d,
                                live, base, temp)
                _place(ln, cn, se, ce, c, card)
                j += 1
            out[i, r] = _final_score(ln, points)


class NoisySearchAgent(RolloutSearchAgent):
    """``search`` (full rollouts, compiled) whose rollouts add Gumbel noise of scale ``temp`` to the one-ply gains."""

    name = "noisy-search"

    def __init__(self, *, temp: float = 1.0, **options) -> None:
        if isinstance(temp, bool) or not isinstance(temp, (int, float)) or not np.isfinite(temp) or temp < 0:
            raise ValueError(f"temp={temp!r}: expected a finite number >= 0 (points)")
        unsupported = sorted(set(options) & {"ply", "rollout", "endgame", "depth", "reply", "backend"})
        if unsupported:
            raise ValueError(f"noisy-search options {unsupported}: not supported (full one-ply rollouts, compiled)")
        super().__init__(backend="numba", **options)
        self.temp = float(temp)

    def _rollout_means(self, game, state, cells, unseen, orders, steps):
        seed = int(self.rng.integers(2**30)) if self.temp > 0 else 0  # temp=0 draws nothing: search's games
        lines, cnts, seens, cls = _boards_after(state, cells, state.card)
        out = np.empty((len(cells), self.rollouts))
        c, rules = self._compiled, game.rules
        _noisy_totals(lines, cnts, seens, cls, np.ascontiguousarray(unseen[orders[:, :steps]]), self._roll_flat,
                      c.phases, c.nout, rules.placement == "adjacent",
                      -1 if rules.first_cell is None else int(rules.first_cell),
                      np.asarray(self._points, dtype=np.float64), out, self.temp, seed)
        return out.mean(1)


def temperature(text: str) -> float:
    """An ``argparse`` type: a noise scale, a finite number >= 0 (0: no noise); a bad value is a usage error."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a finite number >= 0") from None
    if not (np.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"{text}: expected a finite number >= 0")
    return value


def main(argv: list[str] | None = None) -> int:
    from pokersquares_env.cli import int_at_least, seed_arg

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--temps", type=temperature, nargs="+", default=[1.0, 3.0, 8.0],
                        help="noise scales in points (>= 0; 0 plays search's games), one noisy agent each")
    parser.add_argument("--games", type=int_at_least(1), default=1000)
    parser.add_argument("--seed", type=seed_arg, default=17)
    parser.add_argument("--scoring", default="american")
    parser.add_argument("--jobs", type=int_at_least(1), default=1)
    parser.add_argument("--options", default="", help="search options for every agent, e.g. games=2000,phases=4")
    parser.add_argument("--out", default=None)
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    args.temps = [t + 0.0 for t in args.temps]  # -0 is 0
    if len({f"{t:g}" for t in args.temps}) != len(args.temps):  # the agents are named by temp={t:g}
        parser.error(f"--temps {' '.join(f'{t:g}' for t in args.temps)}: expected each temperature once (as the "
                     f"agents name it, to 6 significant digits)")

    from agents.evaluation import check_out_dir, evaluate
    from agents.registry import check_spec, make_agent, register_agent
    from agents.stats import fmt

    if args.out:  # before the tables are made and any game is played
        try:
            check_out_dir(args.out, foreign=False, name="--out")
        except ValueError as exc:
            parser.error(str(exc))
    register_agent("noisy-search", NoisySearchAgent, kind="params")
    extra = f":{args.options}" if args.options else ""
    base = f"search{extra}"
    noisy = [f"noisy-search:{args.options + ',' if args.options else ''}temp={t:g}" for t in args.temps]
    try:
        check_spec(base)
        agent = make_agent(noisy[0], system=args.scoring)  # the options, checked (and the tables made) up front
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from pokersquares_env.core import PokerSquaresGame

    game = PokerSquaresGame()  # one move compiles the kernels here, not inside the first agent's timed games
    state = game.init(game.deal(np.random.default_rng(0)))
    for _ in range(2):
        game.apply(state, agent.act(None, {"action_mask": game.action_mask(state)}, game, state))
    res = evaluate([base, *noisy], games=args.games, seed=args.seed, scoring=args.scoring, jobs=args.jobs,
                   progress=not args.no_progress)
    if args.out:
        res.save(args.out)
    print(res.brief(), end="")
    for pair in res.paired():
        if pair["a"] == base:
            print(f"{pair['b']} - search: {0.0 - pair['mean_diff']:+.2f} +- {fmt(pair['ci95'])} on {pair['deals']} "
                  "common deals")
    return 1 if any(row["errors"] for row in res.summary) else 0


if __name__ == "__main__":
    sys.exit(main())
