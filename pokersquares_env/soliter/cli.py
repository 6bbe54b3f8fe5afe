"""``pokersquares soliter``: show, solve, benchmark or play Soliter deals from the terminal.

    pokersquares soliter show --seed 7
    pokersquares soliter solve --seed 7 [--variant classic] [--free-cells 3] [--time-limit 1] [--moves]
    pokersquares soliter bench --deals 100 [--variant 36] [--time-limit 1]
    pokersquares soliter play --seed 7
"""

from __future__ import annotations

import argparse
import math
import sys
import time

from pokersquares_env.cli import int_at_least, int_between, positive_float, seed_arg

HELP = "the Soliter solitaire (Baker's Game) and its variants: show a deal, solve it, benchmark the solver, or play"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``soliter`` sub-commands and their options."""
    from pokersquares_env.soliter.rules import MAX_COLUMNS, VARIANTS

    sub = parser.add_subparsers(dest="soliter_command", metavar="ACTION", required=True)

    def each(field: str) -> str:  # "classic 4, 36 4, ...": each variant's value of a field
        return ", ".join(f"{name} {'as many as the cards fill' if getattr(v, field) is None else getattr(v, field)}"
                         for name, v in VARIANTS.items())

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--variant", default="classic", choices=sorted(VARIANTS), help="rules variant (default classic)")
        p.add_argument("--free-cells", type=int_between(0, 16), default=None,
                       help=f"free cells, 0..16 (default: the variant's: {each('free_cells')})")
        p.add_argument("--columns", type=int_between(1, MAX_COLUMNS), default=None,
                       help=f"columns of the first deal, 1..20 and enough to hold the cards (default: the variant's: "
                            f"{each('columns')}; 104-aces-kings deals its cards in 13-card columns, so columns "
                            f"beyond those are not in play)")
        p.add_argument("--jokers", type=int_between(0, 3), default=None,
                       help=f"wild jokers in the deck, 0..3 (default: the variant's: {each('jokers')})")

    def action(name: str, text: str) -> argparse.ArgumentParser:
        # help is %-formatted (so '%%' for a percent sign); the description is printed as it is
        return sub.add_parser(name, help=text, description=(text[0].upper() + text[1:] + ".").replace("%%", "%"))

    p = action("show", "print the deal of a seed")
    common(p)
    p.add_argument("--seed", type=seed_arg, default=0, help="seed of the deal (default 0)")
    p = action("solve", "solve the deal of a seed and check the plan by replaying it")
    common(p)
    p.add_argument("--seed", type=seed_arg, default=0, help="seed of the deal (default 0)")
    p.add_argument("--time-limit", type=positive_float, default=1.0, help="CPU seconds for the search (default 1)")
    p.add_argument("--moves", action="store_true", help="print the plan move by move")
    p = action("bench", "solve rate (95%% CI) and CPU time per deal over seeded deals")
    common(p)
    p.add_argument("--deals", type=int_at_least(1), default=100, help="number of deals (default 100)")
    p.add_argument("--seed0", type=seed_arg, default=0,
                   help="seed of the first deal; the deals are seeds SEED0 .. SEED0+DEALS-1 (default 0)")
    p.add_argument("--time-limit", type=positive_float, default=1.0, help="CPU seconds per deal (default 1)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p = action("play", "play a deal in the terminal (moves like 'c3 c5', 'c1 f', 'f2 h', 'r', 'hint')")
    common(p)
    p.add_argument("--seed", type=seed_arg, default=0, help="seed of the deal (default 0)")


def _make(args: argparse.Namespace, **extra):
    import gymnasium as gym

    import pokersquares_env  # noqa: F401  (registers Soliter-v0)

    kwargs = {"variant": args.variant}
    for name in ("free_cells", "columns", "jokers"):
        if getattr(args, name, None) is not None:
            kwargs[name] = getattr(args, name)
    kwargs.update(extra)
    return gym.make("Soliter-v0", **kwargs).unwrapped, kwargs


def _move_text(game, action: int) -> str:
    move = game.decode(action)
    if move is None:
        return "redeal"
    return f"{game.place_name(move[0])} -> {game.place_name(move[1])}"


def _replay(kwargs: dict, seed: int, plan: list[int]) -> bool:
    import gymnasium as gym

    env = gym.make("Soliter-v0", **{**kwargs, "max_steps": 100_000})
    env.reset(seed=seed)
    info = {"won": False}
    for a in plan:
        _o, _r, term, trunc, info = env.step(a)
        if term or trunc:
            break
    return bool(info["won"])


def run(args: argparse.Namespace) -> int:
    """Run one ``soliter`` action; returns the exit status."""
    from pokersquares_env.soliter.solver import solve_result

    action = args.soliter_command
    try:
        _make(args)  # the variant options (free cells, columns, jokers), checked before anything runs
    except ValueError as exc:
        print(f"pokersquares soliter {action}: {exc}", file=sys.stderr)
        return 2
    if action == "show":
        env, _ = _make(args)
        env.reset(seed=args.seed)
        print(env.game.text(env.state))
        return 0
    if action == "solve":
        env, kwargs = _make(args)
        env.reset(seed=args.seed)
        print(env.game.text(env.state))
        res = solve_result(env, args.time_limit)
        if res.plan is None:
            if res.proved:
                why = "no win exists (the whole search space was exhausted: a proof for this variant)"
            elif res.exhausted:
                why = ("the solver's pruned search space was exhausted, which is not a proof for this variant (two "
                       "decks, jokers or king foundations): a win may still exist")
            else:
                why = "budget spent"
            print(f"no solution found: {why}; {res.nodes} positions expanded in {res.seconds:.2f} CPU s")
            return 1
        ok = _replay(kwargs, args.seed, res.plan)
        print(f"solved in {len(res.plan)} moves ({res.nodes} positions, {res.seconds:.2f} CPU s); replay wins: {ok}")
        if args.moves:
            for i, a in enumerate(res.plan, 1):
                print(f"{i:4d}. {_move_text(env.game, a)}")
        return 0 if ok else 1
    if action == "bench":
        from pokersquares_env._progress import progress_iter

        env, kwargs = _make(args)
        solved = 0
        cpu = 0.0
        seeds = range(args.seed0, args.seed0 + args.deals)
        for seed in seeds if args.no_progress else progress_iter(seeds, desc="soliter", unit="deal"):
            env.reset(seed=seed)
            res = solve_result(env, args.time_limit)
            cpu += res.seconds
            if res.plan is not None:
                if not _replay(kwargs, seed, res.plan):
                    print(f"seed {seed}: plan does not replay to a win", file=sys.stderr)
                    return 1
                solved += 1
        n = args.deals
        p = solved / n
        z = 1.96
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        print(f"{args.variant}: solved {solved}/{n} = {100 * p:.1f}% (95% CI {100 * (centre - half):.1f}-"
              f"{100 * (centre + half):.1f}%), {cpu / n:.3f} CPU s per deal")
        return 0
    return _play(args)


def _parse_place(game, token: str, to: bool) -> int | None:
    token = token.strip().lower()
    if not token:
        return None
    kind, num = token[0], token[1:]
    if num and not (num.isascii() and num.isdigit()):  # '²' is a digit to str.isdigit but not to int()
        return None
    if kind == "c" and num.isdigit() and 1 <= int(num) <= game.num_columns:
        return int(num) - 1
    if kind == "f":
        if num.isdigit() and 1 <= int(num) <= game.num_cells:
            return game.cell_base + int(num) - 1
        if not num and to:
            return -1  # any free cell
    if kind == "h":
        if num.isdigit() and 1 <= int(num) <= game.num_piles:
            return game.pile_base + int(num) - 1
        if not num and to:
            return -2  # any foundation that takes it
    return None


def _play(args: argparse.Namespace) -> int:
    from pokersquares_env.play import _HELP_WORDS, _QUIT, _echoing_input
    from pokersquares_env.soliter.rules import IllegalMoveError
    from pokersquares_env.soliter.solver import solve_result

    env, _ = _make(args, render_mode="ansi")
    env.reset(seed=args.seed)
    game = env.game
    usage = ("moves: 'c3 c5' (column to column), 'c1 f' (to a free cell), 'f2 c4', 'c6 h' (home), 'r' (redeal), "
             "'hint', 'help', 'q'")
    print(usage)
    read = input if sys.stdin.isatty() else _echoing_input  # a piped move is echoed, as `pokersquares play` does
    while True:
        print(env.render())
        if env._done:
            if game.is_won(env.state):
                print("you won!")
            elif game.legal_actions(env.state):
                print(f"game over: the step limit of {env.max_steps} moves was reached (moves were left)")
            else:
                print("game over: no legal move is left")
            return 0
        try:
            line = ""
            while not line:  # an empty line asks again, as `pokersquares play` does
                line = read("> ").strip()
        except EOFError:
            print("\nThe input ended before the game was over.", file=sys.stderr)
            return 1
        command = line.lower()  # 'Q', 'Hint', 'C3 C5' as well
        if command in _QUIT:
            return 0
        if command in _HELP_WORDS:
            print(usage)
            continue
        if command == "hint":
            t0 = time.process_time()
            res = solve_result(env, 2.0)
            if res.plan is not None:
                print(f"try: {_move_text(game, res.plan[0])} (win in {len(res.plan)} moves, "
                      f"{time.process_time() - t0:.2f} s)")
            elif res.proved:
                print("no win exists from here (the whole search space was exhausted: a proof for this variant)")
            elif res.exhausted:
                print("no win found: the solver's pruned search space was exhausted, which is not a proof for this "
                      "variant (two decks, jokers or king foundations): a win may still exist")
            else:
                print("no win found within 2 s")
            continue
        if command in ("r", "redeal"):
            if game.redeal_action is None:
                print("this variant has no redeal")
                continue
            action = game.redeal_action
        else:
            parts = line.split()
            if len(parts) != 2:
                print(f"cannot read {line!r}: expected two places such as 'c3 c5'")
                continue
            src, dst = _parse_place(game, parts[0], False), _parse_place(game, parts[1], True)
            if src is None or dst is None:
                print(f"cannot read {line!r}: places are c1..c{game.num_columns}, f1..f{game.num_cells} (or f), "
                      f"h1..h{game.num_piles} (or h)")
                continue
            if dst < 0:
                legal = [d for s, d in game.legal_moves(env.state) if s == src
                         and (game.cell_base <= d < game.pile_base if dst == -1 else d >= game.pile_base)]
                if not legal:  # say why each place of that kind refuses it
                    places = range(game.cell_base, game.pile_base) if dst == -1 else \
                        range(game.pile_base, game.pile_base + game.num_piles)
                    reasons = [game.why_illegal(env.state, game.encode(src, d)) for d in places]
                    # "action 12 (column 1 -> foundation 1 (♣ up)): T♥ does not fit ..." -> what follows the move
                    shown = list(dict.fromkeys(r.split("): ", 1)[-1] for r in reasons if r))
                    kind = "free cell" if dst == -1 else "foundation"
                    print(f"illegal: no {kind} takes it now: {'; '.join(shown) or 'no such move is legal now'}")
                    continue
                dst = legal[0]
            action = game.encode(src, dst)
        try:
            env.step(action)
        except IllegalMoveError as exc:
            print(f"illegal: {exc}")
