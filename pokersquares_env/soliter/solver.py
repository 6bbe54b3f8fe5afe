"""A best-first solver for Soliter (Baker's Game) and its variants.

:func:`solve` searches from a position for a winning sequence of env actions.
It is a greedy best-first search over canonical positions:

* **Auto-moves.** After every move, cards that are *safe* to send home go to
  the foundations at once (as ordinary actions in the plan).  A card is safe
  when every copy of the card one rung below it in its suit is already home:
  then nothing can ever be built on it, so keeping it out only costs.  In a
  one-deck game every foundation move is safe.
* **Pruning and move order.** Only the first empty column and the first empty
  free cell are tried (they are interchangeable); a lone card never moves to
  an empty column; no cell-to-cell moves.  Moves onto columns come before
  moves to empty columns, which come before moves to free cells.
* **Deduplication.** Positions are keyed with the columns and the free cells
  sorted (column order and cell order do not matter), so each position is
  expanded once.
* **Redeals.** A redeal gathers the columns and the cells in order, so before
  the last stage their order matters: there, in one-deck games without jokers
  or king foundations, positions keep their order in the key and every legal
  move is tried (none of the pruning above).
* **Heuristic.** ``2 * cards not home + cards lying above a lower card of their
  own suit (each must move at least once more) + 0.5 * occupied free cells +
  0.5 * cards lying above a card the foundations take next``, smaller first;
  the per-column part is cached per column.

The redeal of a multistage variant is a move like any other (tried last); the
shuffle of a later stage is a function of the position (its ``seed``), so the
solver plans through it knowing the next deal (it is clairvoyant there).

:attr:`SolveResult.proved` says whether an exhausted search proves that no win
exists: it does in one-deck games without jokers or king foundations, where
every pruning rule is exact.  Elsewhere (two decks, jokers, king foundations)
``exhausted`` only says that the pruned space holds no win.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from typing import Any

import numpy as np

from pokersquares_env._adapter import check_number
from pokersquares_env.soliter.rules import EMPTY, SoliterGame, SoliterState

__all__ = ["solve", "SolveResult", "solve_result"]

NUM_STANDARD = 52


class SolveResult:
    """What a search found: ``plan`` (actions or ``None``), ``nodes`` (positions taken off the queue: those expanded,
    plus the one at which a spent budget stopped the search, e.g. 4 for ``max_nodes=3``), ``seconds``, ``exhausted``
    and ``proved``.

    ``exhausted``: the whole reachable pruned space was searched and holds no win.  ``proved``: ``exhausted``, and
    the pruning is exact for the game (one deck, no jokers, no king foundations), so no win exists at all."""

    __slots__ = ("plan", "nodes", "seconds", "exhausted", "proved")

    def __init__(self, plan: list[int] | None, nodes: int, seconds: float, exhausted: bool,
                 proved: bool = False) -> None:
        self.plan = plan
        self.nodes = nodes
        self.seconds = seconds
        self.exhausted = exhausted  # the whole reachable (pruned) space was searched: no win there
        self.proved = proved and exhausted  # ... and the pruning is exact: no win exists

    def __repr__(self) -> str:
        moves = None if self.plan is None else len(self.plan)
        return (f"SolveResult(moves={moves}, nodes={self.nodes}, seconds={self.seconds:.3f}, "
                f"exhausted={self.exhausted}, proved={self.proved})")


def _resolve(env_or_state: Any, game: SoliterGame | None, variant: Any) -> tuple[SoliterGame, SoliterState]:
    if game is not None and not isinstance(game, SoliterGame):
        raise TypeError(f"game={game!r}: expected a SoliterGame (the rules to solve under) or None")
    target = getattr(env_or_state, "unwrapped", env_or_state)
    if isinstance(target, SoliterState):
        if game is None:
            game = SoliterGame(variant)
            hint = (f"; without game= the state is solved under the rules of variant={variant!r}: pass "
                    f"game=SoliterGame(...) of the variant the state comes from")
        else:
            hint = "; pass the SoliterGame the state comes from as game="
        try:
            return game, game.check_state(target, "state")
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{exc}{hint}") from None
    env_game, state = getattr(target, "game", None), getattr(target, "state", None)
    if isinstance(env_game, SoliterGame) and isinstance(state, SoliterState):
        if game is not None and game.variant != env_game.variant:
            raise ValueError(f"game= has the rules of {game.variant}, but the env plays {env_game.variant}: expected "
                             f"game=None with an env (the env's own game is used)")
        return env_game, state
    raise TypeError(
        f"solve() got {type(env_or_state).__name__}: expected a Soliter-v0 env after reset() or a SoliterState"
    )


def solve(
    env_or_state: Any,
    max_seconds: float = 1.0,
    *,
    game: SoliterGame | None = None,
    variant: Any = "classic",
    max_nodes: int | None = None,
) -> list[int] | None:
    """A winning list of env actions from the env's (or given) position, or ``None`` within the budget.

    A bare ``SoliterState`` is solved under ``game`` (default: ``SoliterGame(variant)``) after
    ``game.check_state``, which refuses a state of another shape or deck; a state does not record its variant, so
    pass the ``game`` it comes from: one of another variant with the same shape (``redeal=``, for example) would be
    solved under the wrong rules."""
    return solve_result(env_or_state, max_seconds, game=game, variant=variant, max_nodes=max_nodes).plan


def solve_result(
    env_or_state: Any,
    max_seconds: float = 1.0,
    *,
    game: SoliterGame | None = None,
    variant: Any = "classic",
    max_nodes: int | None = None,
) -> SolveResult:
    """Like :func:`solve`, with the search statistics (:class:`SolveResult`)."""
    seconds = _check_budget(max_seconds, max_nodes)
    game, state = _resolve(env_or_state, game, variant)
    return _Search(game).run(state, seconds, None if max_nodes is None else int(max_nodes))


def _check_budget(max_seconds: Any, max_nodes: Any) -> float:
    """``max_seconds`` as a float (a positive number, ``math.inf`` for no time limit; numpy numbers too), after
    checking ``max_nodes`` (``None`` or a positive integer); a ``TypeError`` or ``ValueError`` naming the bad one."""
    if isinstance(max_seconds, (float, np.floating)) and max_seconds == math.inf:
        seconds = math.inf
    else:
        seconds = check_number("max_seconds", max_seconds)
        if not seconds > 0:
            raise ValueError(f"max_seconds={max_seconds!r}: expected a positive number of CPU seconds")
    if max_nodes is not None:
        if isinstance(max_nodes, bool) or not isinstance(max_nodes, (int, np.integer)):
            raise TypeError(f"max_nodes={max_nodes!r}: expected a positive integer (positions to expand) or None")
        if max_nodes < 1:
            raise ValueError(f"max_nodes={max_nodes!r}: expected a positive integer (positions to expand) or None")
    return seconds


class _Search:
    """One search over one game's rules (tables cached as locals for speed)."""

    w_home = 2.0  # per card not home
    w_block = 1.0  # per card lying above a lower card of its suit
    w_cell = 0.5  # per occupied free cell
    w_depth = 0.5  # per card above a card the foundations take next (one-deck ace-up games)
    w_stage = 0.0  # bonus per stage reached (redeal variants; +5 and +20 and -20 all did worse on multistage)

    def __init__(self, game: SoliterGame) -> None:
        self.game = game
        self.fast = not game.jokers and not game.variant.king_foundations
        self.col_cost: dict[tuple[int, ...], int] = {}
        self.wanted_cache: dict[tuple[int, ...], dict[int, int]] = {}
        self.decks = game.variant.decks
        v = game.variant
        #: whether an exhausted search proves that no win exists: the pruning (below) is exact in one-deck games
        #: without jokers or king foundations
        self.exact = v.decks == 1 and not game.jokers and not v.king_foundations
        #: the stages whose positions keep their column and cell order (and try every move): a redeal gathers the
        #: columns and the cells in order, so before the last stage their order matters (exact games only)
        self.ordered_below = v.num_stages - 1 if self.exact and game.has_redeal else 0

    # ---------------------------------------------------------------- helpers
    def _column_cost(self, col: tuple[int, ...]) -> int:
        cost = self.col_cost.get(col)
        if cost is None:
            level, suit = self.game.level, self.game.suit
            mins = [99, 99, 99, 99]
            cost = 0
            for c in col:
                if c >= NUM_STANDARD:
                    continue
                s, lv = suit[c], level[c]
                if mins[s] < lv:
                    cost += 1
                else:
                    mins[s] = lv
            self.col_cost[col] = cost
        return cost

    def _h(self, state: SoliterState) -> float:
        g = self.game
        col_cost = self.col_cost
        blockers = 0
        for col in state.columns:
            c = col_cost.get(col)
            blockers += self._column_cost(col) if c is None else c
        used = sum(1 for c in state.cells if c != EMPTY)
        if self.w_depth:
            wanted = self._wanted(state.foundations)
            depth = 0
            for col in state.columns:
                for k, c in enumerate(col):
                    if c in wanted:
                        depth += len(col) - 1 - k
            blockers += self.w_depth * depth
        return (self.w_home * (g.num_real - sum(state.foundations)) + self.w_block * blockers + self.w_cell * used
                - self.w_stage * state.stage)

    def _key(self, state: SoliterState) -> tuple:
        cols = state.columns[: state.open_columns]
        if state.stage < self.ordered_below:
            return (cols, state.cells, state.stage)
        key = (tuple(sorted(cols)), tuple(sorted(state.cells)), state.stage)
        if self.decks > 1 or self.game.variant.king_foundations:
            key += (state.foundations,)
        if state.jokers:
            key += (state.jokers,)
        return key

    def _safe_home(self, state: SoliterState, card: int) -> bool:
        g = self.game
        if card >= NUM_STANDARD:
            return False
        low = g.below[card]
        return low < 0 or g.copies_home(state, low) >= self.decks

    def _auto(self, state: SoliterState, actions: list[int]) -> SoliterState:
        """Send safe cards home until none is left; appends the actions taken."""
        g = self.game
        n, cb, pb = g.num_places, g.cell_base, g.pile_base
        moved = True
        while moved:
            moved = False
            for i in range(state.open_columns):
                col = state.columns[i]
                if col:
                    card = col[-1]
                    piles = g._pile_for(state, card)
                    if piles and (len(piles) == 1 or not g.variant.king_foundations) and self._safe_home(state, card):
                        state, _ = g.move(state, i, pb + piles[0])
                        actions.append(i * n + pb + piles[0])
                        moved = True
            for i, card in enumerate(state.cells):
                if card != EMPTY:
                    piles = g._pile_for(state, card)
                    if piles and (len(piles) == 1 or not g.variant.king_foundations) and self._safe_home(state, card):
                        state, _ = g.move(state, cb + i, pb + piles[0])
                        actions.append((cb + i) * n + pb + piles[0])
                        moved = True
        return state

    def _wanted(self, found: tuple[int, ...]) -> dict[int, int]:
        """Card code -> a pile that takes it next (no-joker ace-up games)."""
        wanted = self.wanted_cache.get(found)
        if wanted is not None:
            return wanted
        wanted = {}
        card_at, levels = self.game.card_at, self.game.levels
        for p, (s, d) in enumerate(self.game.piles):
            f = found[p]
            if f < levels:
                wanted.setdefault(card_at[s, f + 1 if d > 0 else levels - f], p)
        self.wanted_cache[found] = wanted
        return wanted

    def _auto_fast(self, state: SoliterState, actions: list[int]) -> SoliterState:
        """:meth:`_auto` for games without jokers or king foundations."""
        g = self.game
        n, cb, pb = g.num_places, g.cell_base, g.pile_base
        cols, cells, found = state.columns, state.cells, state.foundations
        oc = state.open_columns
        level, suit, piles_of_suit = g.level, g.suit, g.piles_of_suit
        one_deck = self.decks == 1
        wanted = self._wanted(found)
        for c in cells:
            if c in wanted:
                break
        else:
            for i in range(oc):
                col = cols[i]
                if col and col[-1] in wanted:
                    break
            else:
                return state
        changed = False
        moved = True
        while moved:
            moved = False
            for i in range(oc):
                col = cols[i]
                while col and col[-1] in wanted:
                    c = col[-1]
                    if not one_deck and any(found[q] < level[c] - 1 for q in piles_of_suit[suit[c]]):
                        break
                    p = wanted[c]
                    if not changed:
                        cols, cells, found, changed = list(cols), list(cells), list(found), True
                    col = col[:-1]
                    cols[i] = col
                    found[p] += 1
                    actions.append(i * n + pb + p)
                    wanted = self._wanted(tuple(found))
                    moved = True
            for i in range(len(cells)):
                c = cells[i]
                if c != EMPTY and c in wanted:
                    if not one_deck and any(found[q] < level[c] - 1 for q in piles_of_suit[suit[c]]):
                        continue
                    p = wanted[c]
                    if not changed:
                        cols, cells, found, changed = list(cols), list(cells), list(found), True
                    cells[i] = EMPTY
                    found[p] += 1
                    actions.append((cb + i) * n + pb + p)
                    wanted = self._wanted(tuple(found))
                    moved = True
        if not changed:
            return state
        return SoliterState(tuple(cols), tuple(cells), tuple(found), state.jokers, state.stage, oc, state.seed)

    def _children_fast(self, state: SoliterState) -> list[tuple[SoliterState, list[int]]]:
        """Pruned, ordered successor positions for games without jokers or king foundations."""
        g = self.game
        n, cb, pb = g.num_places, g.cell_base, g.pile_base
        cols, cells, found = state.columns, state.cells, state.foundations
        oc = state.open_columns
        above = g.above
        wanted = self._wanted(found)
        tail_cols: dict[int, list[int]] = {}
        first_empty_col = -1
        for i in range(oc):
            col = cols[i]
            if col:
                tail_cols.setdefault(col[-1], []).append(i)
            elif first_empty_col < 0:
                first_empty_col = i
        first_empty_cell = -1
        for i, c in enumerate(cells):
            if c == EMPTY:
                first_empty_cell = i
                break
        home, onto, to_empty, to_cell = [], [], [], []
        St = SoliterState
        jk, stage, seed = state.jokers, state.stage, state.seed
        two = self.decks > 1
        for i in range(oc):
            col = cols[i]
            if not col:
                continue
            c = col[-1]
            rest = col[:-1]
            if c in wanted:
                p = wanted[c]
                nc = list(cols)
                nc[i] = rest
                nf = list(found)
                nf[p] += 1
                home.append((St(tuple(nc), cells, tuple(nf), jk, stage, oc, seed), [i * n + pb + p]))
            for j in tail_cols.get(above[c], ()):
                if two and rest and rest[-1] == above[c]:
                    continue  # from one copy of its parent to the other: pointless
                nc = list(cols)
                nc[i] = rest
                nc[j] = cols[j] + (c,)
                onto.append((St(tuple(nc), cells, found, jk, stage, oc, seed), [i * n + j]))
            if first_empty_col >= 0 and rest:
                nc = list(cols)
                nc[i] = rest
                nc[first_empty_col] = (c,)
                to_empty.append((St(tuple(nc), cells, found, jk, stage, oc, seed), [i * n + first_empty_col]))
            if first_empty_cell >= 0:
                nc = list(cols)
                nc[i] = rest
                ncell = list(cells)
                ncell[first_empty_cell] = c
                to_cell.append((St(tuple(nc), tuple(ncell), found, jk, stage, oc, seed), [i * n + cb + first_empty_cell]))
        for k, c in enumerate(cells):
            if c == EMPTY:
                continue
            ncell = list(cells)
            ncell[k] = EMPTY
            ncell = tuple(ncell)
            if c in wanted:
                p = wanted[c]
                nf = list(found)
                nf[p] += 1
                home.append((St(cols, ncell, tuple(nf), jk, stage, oc, seed), [(cb + k) * n + pb + p]))
            for j in tail_cols.get(above[c], ()):
                nc = list(cols)
                nc[j] = cols[j] + (c,)
                onto.append((St(tuple(nc), ncell, found, jk, stage, oc, seed), [(cb + k) * n + j]))
            if first_empty_col >= 0:
                nc = list(cols)
                nc[first_empty_col] = (c,)
                to_empty.append((St(tuple(nc), ncell, found, jk, stage, oc, seed), [(cb + k) * n + first_empty_col]))
        return home + onto + to_empty + to_cell

    def _moves(self, state: SoliterState, every: bool = False) -> list[tuple[int, int]]:
        """Candidate moves in the order they are tried (pruned of symmetric and pointless ones unless ``every``)."""
        g = self.game
        cb, pb = g.cell_base, g.pile_base
        home, onto, to_empty, to_cell = [], [], [], []
        if every:
            for src, dst in g.legal_moves(state):
                if dst >= pb:
                    home.append((src, dst))
                elif dst >= cb:
                    to_cell.append((src, dst))
                elif state.columns[dst]:
                    onto.append((src, dst))
                else:
                    to_empty.append((src, dst))
            return home + onto + to_empty + to_cell
        first_empty_col = -1
        first_empty_cell = -1
        for i in range(state.open_columns):
            if not state.columns[i]:
                first_empty_col = i
                break
        for i, c in enumerate(state.cells):
            if c == EMPTY:
                first_empty_cell = cb + i
                break
        for src, dst in g.legal_moves(state):
            if dst >= pb:
                home.append((src, dst))
            elif dst >= cb:
                if src < cb and dst == first_empty_cell:
                    to_cell.append((src, dst))
            elif not state.columns[dst]:
                if dst == first_empty_col and not (src < cb and len(state.columns[src]) == 1):
                    to_empty.append((src, dst))
            else:
                if src < cb and self.decks > 1:
                    col = state.columns[src]
                    if len(col) > 1 and col[-2] == state.columns[dst][-1]:
                        continue  # from one copy of its parent to the other: pointless
                onto.append((src, dst))
        return home + onto + to_empty + to_cell

    # ---------------------------------------------------------------- search
    def run(self, start: SoliterState, max_seconds: float, max_nodes: int | None) -> SolveResult:
        """Best-first search from ``start`` until a win, an exhausted search, ``max_seconds`` of CPU time or
        ``max_nodes`` expanded positions."""
        g = self.game
        t0 = time.process_time()
        deadline = t0 + max_seconds
        n = g.num_places
        first: list[int] = []
        root = (self._auto_fast if self.fast else self._auto)(start, first)
        if g.is_won(root):
            return SolveResult(first, 0, time.process_time() - t0, False)
        root_key = self._key(root)
        parent: dict[tuple, tuple[tuple | None, list[int]]] = {root_key: (None, first)}
        counter = itertools.count()
        heap = [(self._h(root), 0, root_key, root)]
        nodes = 0
        fast = self.fast
        key_of, h_of, move = self._key, self._h, g.move
        auto = self._auto_fast if fast else self._auto
        redeal = g.redeal_action
        ordered_below = self.ordered_below
        while heap:
            _f, _tie, key, state = heapq.heappop(heap)
            nodes += 1
            if nodes & 63 == 0 and time.process_time() > deadline:
                return SolveResult(None, nodes, time.process_time() - t0, False)
            if max_nodes is not None and nodes > max_nodes:
                return SolveResult(None, nodes, time.process_time() - t0, False)
            ordered = state.stage < ordered_below
            if fast and not ordered:
                children = self._children_fast(state)
            else:
                children = []
                for src, dst in self._moves(state, ordered):
                    child, _ = move(state, src, dst)
                    children.append((child, [src * n + dst]))
            if redeal is not None and g.can_redeal(state):
                children.append((g.redeal(state), [redeal]))
            for child, acts in children:
                child = auto(child, acts)
                ck = key_of(child)
                if ck in parent:
                    continue
                parent[ck] = (key, acts)
                if g.is_won(child):
                    return SolveResult(self._plan(parent, ck), nodes, time.process_time() - t0, False)
                heapq.heappush(heap, (h_of(child), -next(counter), ck, child))
        return SolveResult(None, nodes, time.process_time() - t0, True, self.exact)

    @staticmethod
    def _plan(parent: dict, key: tuple) -> list[int]:
        chunks = []
        while key is not None:
            key, acts = parent[key]
            chunks.append(acts)
        plan: list[int] = []
        for acts in reversed(chunks):
            plan.extend(acts)
        return plan
