"""``pokersquares solve``: the best arrangement of 25 known cards (Poker Shuffle's clairvoyant solver)."""

from __future__ import annotations

import argparse
import json
import sys

from pokersquares_env.cli import int_at_least, int_between, positive_float, seed_arg
from pokersquares_env.shuffle.solver import MAX_RESTARTS
from pokersquares_env.text import fmt_points

HELP = "arrange 25 known cards for the best score (given cards or a seeded deal)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``pokersquares solve``."""
    parser.add_argument("cards", nargs="*", help="25 cards such as 'As Kd 10h ...' (default: a seeded deal)")
    parser.add_argument("--seed", type=seed_arg, default=0,
                        help="seed of the deal (when no cards are given) and of the search (default 0)")
    parser.add_argument("--jokers", type=int, default=None, choices=(0, 1, 2),
                        help="jokers in the deck of a seeded deal (default 0); given cards hold their own (JK), so "
                             "--jokers with cards is refused")
    parser.add_argument("--scoring", default="american",
                        help="american (default), english, or a JSON point table")
    parser.add_argument("--restarts", type=int_between(1, MAX_RESTARTS), default=48,
                        help=f"independent search chains, 1 to {MAX_RESTARTS:,} (default 48)")
    parser.add_argument("--rounds", type=int_at_least(0), default=40,
                        help="kick-and-climb rounds per chain (default 40)")
    parser.add_argument("--time-limit", type=positive_float, default=None, metavar="SECONDS",
                        help="stop the whole search (building the chains and the rounds, checked after each batch "
                             "of 256 chains) after about this many seconds and print the best found so far "
                             "(default: no limit)")
    parser.add_argument("--baseline", action="store_true", help="also run the simulated-annealing baseline")
    parser.add_argument("--json", action="store_true", help="print a JSON object instead of text")


def run(args: argparse.Namespace) -> int:
    """Solve and print the grid, its hands and its score."""
    import numpy as np

    from pokersquares_env.cards import format_card, format_cards, parse_cards
    from pokersquares_env.core import Rules, shuffled_deck
    from pokersquares_env.scoring import HandCategory, grid_hands, line_points, point_system, points_level
    from pokersquares_env.shuffle.solver import anneal, check_cards, solve

    if args.cards and args.jokers is not None:
        print(f"pokersquares solve: error: --jokers {args.jokers} applies only to a seeded deal: the {len(args.cards)} "
              "cards given hold their own jokers (write one as JK)", file=sys.stderr)
        return 2
    try:
        system = point_system(args.scoring)
        cards = check_cards(parse_cards(" ".join(args.cards))) if args.cards else None
    except (ValueError, TypeError) as exc:
        print(f"pokersquares solve: error: {exc}", file=sys.stderr)
        return 2
    if cards is None:
        cards = shuffled_deck(np.random.default_rng(args.seed), Rules(jokers=args.jokers or 0))[:25].tolist()
    grid, score, stats = solve(
        cards, system, seed=args.seed, restarts=args.restarts, rounds=args.rounds, time_limit=args.time_limit,
        return_stats=True,
    )
    flat = grid.reshape(-1).tolist()
    result = {
        "cards": format_cards(cards),
        "scoring": system.name,
        "grid": [format_cards(row) for row in grid.tolist()],
        "score": score,
        "hands": grid_hands(flat, system),
        "line_points": line_points(flat, system),
        # the chains' running totals and score_grid add in different orders: equal to 9 decimals, as scores tie
        "chains_at_best": sum(points_level(s) == points_level(score) for s in stats["chain_scores"]),
        "chains": len(stats["chain_scores"]),
        "rounds": stats["rounds"],
        "seconds": round(stats["seconds"], 3),
    }
    if args.baseline:
        _, base = anneal(cards, system, seed=args.seed)
        result["baseline_score"] = base
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
        return 0
    print(f"cards:   {result['cards']}")
    points = result["line_points"]
    hands = [HandCategory.from_key(h).label for h in result["hands"]]  # "Two pair", as play and replay print them
    for r, row in enumerate(grid.tolist()):
        print("  " + " ".join(f"{format_card(c):>3}" for c in row) + f"   {hands[r]} {fmt_points(points[r])}")
    print("  " + " ".join(f"{fmt_points(points[5 + c]):>3}" for c in range(5)) + "   (columns)")
    print(f"columns: {', '.join(hands[5:])}")
    print(f"score ({system.name}): {fmt_points(score)}   "
          f"({result['chains_at_best']}/{result['chains']} chains reached it, {result['seconds']:.2f} s)")
    if result["chains"] < args.restarts or result["rounds"] < args.rounds:
        print(f"--time-limit {args.time_limit:g} stopped the search: {result['chains']} of {args.restarts} chains "
              f"built, {result['rounds']} of {args.rounds} rounds completed")
    if args.baseline:
        print(f"simulated-annealing baseline: {fmt_points(result['baseline_score'])}")
    return 0
