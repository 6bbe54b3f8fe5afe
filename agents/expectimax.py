"""``expectimax``: one- or two-ply expectimax over the unseen cards, on learned hand-abstraction values."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from agents.base import Agent, check_not_over, warn_if_other_points
from agents.batch import NUM_OUTS, NUM_OUTS_CLAIMS, Batch, phase_of
from agents.tables import tables_for
from pokersquares_env.core import GameState, PokerSquaresGame, Rules
from pokersquares_env.scoring import point_system

__all__ = ["ExpectimaxAgent", "check_game_rules", "compiled_values", "expectimax_values", "tables_and_kernels"]

DEFAULT_GAMES = 400_000
DEFAULT_PHASES = 26
DEFAULT_FEATURES = "outs"
DEFAULT_TOP = 4  # cells ply=3 re-rates


def expectimax_values(table: np.ndarray, game: PokerSquaresGame, state: GameState, ply: int = 2) -> np.ndarray:
    """Value of each of the 25 cells for the drawn card (NaN where illegal) by ``ply``-ply expectimax on ``table``.

    Reads only the board, the drawn card and the unseen cards (never the deck order).
    """
    rules = game.rules
    card = state.card
    b = Batch.from_state(state, 1, placement=rules.placement, first_cell=rules.first_cell)
    legal = np.flatnonzero(b.legal()[0])
    out = np.full(25, np.nan)
    placed = b.placed
    unseen = np.array(game.unseen(state), dtype=np.int64)
    phases = table.shape[2]
    if ply <= 1 or placed >= 24 or unseen.size == 0:
        out[legal] = b.cell_gains(np.array([card]), table, phase_of(placed + 1, phases))[0, legal]
        return out
    ph = phase_of(placed + 2, phases)
    first = b.cell_gains(np.array([card]), table, ph)[0, legal]
    bx = b.repeat(len(legal))
    bx.place(legal, np.full(len(legal), card))
    by = bx.repeat(unseen.size)
    second = by.cell_gains(np.tile(unseen, len(legal)), table, ph).max(1).reshape(len(legal), unseen.size)
    out[legal] = first + second.mean(1)
    return out


#: why the compiled kernels refuse straights tables
_NUMBA_STRAIGHTS = "backend='numba' takes tables with features none, outs or claims, not straights"


def compiled_values(values: np.ndarray, rules: Rules, backend: Any = "auto") -> Callable | None:
    """The compiled (numba) twin of :func:`expectimax_values` for ``values`` and ``rules``, or ``None``.

    ``backend``: ``"numpy"`` (always ``None``), ``"numba"`` (the compiled path, or an error saying why it cannot
    serve these tables) or ``"auto"`` (compiled when numba is installed and the tables are ``features=none`` or
    ``outs``; otherwise ``None``, with a warning if numba failed to compile).  The function returned takes
    ``(game, state, ply[, top])`` and gives the same values as :func:`expectimax_values` (to rounding); it also
    takes ``ply=3``: the ``top`` cells of highest two-ply value are re-rated by three-ply expectimax (every unseen
    card at both chance levels), the other legal cells get ``-inf``.  Its legal cells follow ``game.rules``
    (placement, first cell), as :func:`expectimax_values`'s do; ``rules`` serves only the compile-time probe game.
    A ``game`` of other jokers than ``rules`` is a ``ValueError`` (:func:`check_game_rules`).
    """
    from pokersquares_env.vector import _resolve_backend

    if _resolve_backend(backend) == "numpy":
        return None
    if values.ndim == 4 and values.shape[3] not in (NUM_OUTS, NUM_OUTS_CLAIMS):
        if backend == "numba":
            raise ValueError(f"{_NUMBA_STRAIGHTS}; these have shape {values.shape} (features=straights): use "
                             f"backend='numpy'")
        return None
    try:
        from agents import _fast

        flat, phases, nout = _fast.tables_flat(values)

        def run(game: PokerSquaresGame, state: GameState, ply: int, top: int = 4) -> np.ndarray:
            played = game.rules  # the game's rules, not those the kernels were built with: legality follows them
            check_game_rules(rules, played)
            adjacent, first = played.placement == "adjacent", played.first_cell
            unseen = game.unseen(state)
            values = _fast.ply_values(flat, phases, nout, state, unseen, min(ply, 2), adjacent, first)
            if ply < 3 or len(state.placements) > 22 or not unseen:
                return values
            legal = np.flatnonzero(~np.isnan(values))
            cells = legal[np.argsort(-values[legal], kind="stable")[:top]]
            deep = _fast.ply3_values(flat, phases, nout, state, unseen, cells, adjacent, first)
            out = np.full(25, np.nan)
            out[legal] = -np.inf
            out[cells] = deep[cells]
            return out

        probe = PokerSquaresGame(rules)
        state = probe.init(probe.deal(np.random.default_rng(0)))
        run(probe, state, 2)  # compile now (or load numba's cache), not in the first move
    except Exception as exc:  # noqa: BLE001 - any failure to compile means: use numpy
        if backend == "numba":
            raise
        warnings.warn(f"backend='auto': the compiled expectimax failed ({type(exc).__name__}: {exc}); using numpy",
                      RuntimeWarning, stacklevel=2)
        return None
    run.flat, run.phases, run.nout = flat, phases, nout  # type: ignore[attr-defined]
    return run


def check_game_rules(built: Rules, game_rules: Rules) -> None:
    """A ``ValueError`` naming both when a game's rules have other jokers than the rules an agent (its tables) was
    built for: the tables value lines of another deck.  Placement and first cell may differ (legality follows the
    game)."""
    if game_rules.jokers != built.jokers:
        raise ValueError(f"the game's rules {game_rules.to_json()} have jokers={game_rules.jokers}, but the agent was "
                         f"built for rules {built.to_json()} (jokers={built.jokers}; its value tables are for that "
                         f"deck): build the agent with the game's rules (make_agent(..., rules=game.rules))")


def _needs_compiled_error(needs_compiled: str, backend: Any, features: Any) -> ValueError:
    """The error for options (``needs_compiled``) that have no numpy path, on tables of ``features``."""
    if features == "straights":  # no backend helps: the kernels cannot read straights tables
        return ValueError(f"{needs_compiled} needs the compiled kernels, which cannot read features='straights' "
                          "tables: use features='outs' or 'none' (or tables of those features)")
    return ValueError(f"{needs_compiled} needs the compiled backend (numba, the fast extra; backend={backend!r}): "
                      "there is no numpy path for it")


def tables_and_kernels(system: Any, rules: Rules, *, tables: str | None, games: int, phases: int, features: str,
                       cache: Any, backend: Any, needs_compiled: str = "",
                       tuned: Any = False) -> tuple[Any, Callable | None]:
    """The value tables an agent plays on (:func:`agents.tables.tables_for`) and their compiled kernels
    (:func:`compiled_values`, ``None`` on the numpy path).  ``needs_compiled`` names the options that have no numpy
    path (claims tables always need the kernels); the error says so when the kernels are not there.  A bad
    ``backend``, and options that cannot be served by the backend or features asked for, are refused before any
    tables are trained."""
    from pokersquares_env.vector import _resolve_backend

    resolved = _resolve_backend(backend)  # a bad backend: refused before the tables train
    if tables is None:  # the features of the tables to train (or of the tuned ones) are known now
        wanted = "none" if features is None else features
        needs = ", ".join(filter(None, [needs_compiled, "features='claims'" if wanted == "claims" else ""]))
        if needs and (wanted == "straights" or resolved == "numpy"):
            raise _needs_compiled_error(needs, backend, wanted)
        if wanted == "straights" and backend == "numba":  # before training tables the kernels would then refuse
            raise ValueError(f"{_NUMBA_STRAIGHTS} (features=straights): use backend='numpy' or 'auto'")
    vt = tables_for(system, rules, tables=tables, games=games, phases=phases, features=features, cache=cache,
                    tuned=tuned)
    compiled = compiled_values(vt.values, rules, backend)
    if vt.features == "claims":
        needs_compiled = ", ".join(filter(None, [needs_compiled, "features='claims'"]))
    if compiled is None and needs_compiled:
        raise _needs_compiled_error(needs_compiled, backend, vt.features)
    return vt, compiled


class ExpectimaxAgent(Agent):
    """Expectimax over the unseen cards with learned line values (Neller et al.'s NARL evaluation).

    Options: ``ply`` (1, 2 or 3: three plies for the ``top`` (4) cells of highest two-ply value, compiled backend
    only; ``top`` with another ``ply`` is refused), ``tables`` (a ``.npz`` from ``ValueTables.save``;
    default: trained for the point system and rules on first use and cached; with a file, ``games``, ``phases``,
    ``features`` or ``cache`` given that disagree with it are refused, see :func:`agents.tables.tables_for`),
    ``games`` and ``phases`` (training size when tables are trained),
    ``features`` (``outs``: values also conditioned on the unseen cards that
    still fit each line, see :func:`agents.batch.outs_index`; ``straights``:
    also the straight windows still open; ``claims``: also whether another line contests the flush draw's suit,
    compiled backend only; ``none``: the plain NARL abstraction), ``cache`` (``true``, ``false`` or a folder),
    ``backend`` (``auto``: compiled loops when numba is installed, about 8 times faster, the same values;
    ``numpy``; ``numba``; see :func:`compiled_values`), ``tuned`` (``false``; ``true``: the default tables scaled by
    the multipliers shipped for American and English scoring under the plain rules, see
    :func:`agents.tuning.tuned_tables`; one-ply play on them is about as strong as two-ply play on the learned ones).
    """

    name = "expectimax"
    uses_obs = False

    def __init__(
        self,
        *,
        system: Any = None,
        rules: Rules | dict[str, Any] | str | None = None,
        seed: int | None = None,
        ply: int = 2,
        tables: str | None = None,
        games: int = DEFAULT_GAMES,
        phases: int = DEFAULT_PHASES,
        features: str = DEFAULT_FEATURES,
        cache: Any = True,
        backend: str = "auto",
        top: int | None = None,
        tuned: bool = False,
    ) -> None:
        super().__init__(seed)
        if isinstance(ply, bool) or not isinstance(ply, (int, np.integer)) or ply not in (1, 2, 3):
            raise ValueError(f"ply={ply!r}: expected 1, 2 or 3")
        ply = int(ply)
        if top is not None:  # None: not given, the default
            if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or top < 1:
                raise ValueError(f"top={top!r}: expected a positive integer")
            if ply != 3:  # refused, not ignored
                raise ValueError(f"top={top!r} with ply={ply}: top is the number of best two-ply cells that ply=3 "
                                 f"re-rates; expected ply=3 with it (or no top)")
        self.ply = ply
        self.top = DEFAULT_TOP if top is None else int(top)
        self.system = point_system("american" if system is None else system)
        self.rules = Rules.parse(rules) if rules is not None else Rules()
        self.tables, self._compiled = tables_and_kernels(
            self.system, self.rules, tables=tables, games=games, phases=phases, features=features, cache=cache,
            backend=backend, needs_compiled="ply=3" if ply == 3 else "", tuned=tuned)
        self._values = self.tables.values
        self.backend = "numpy" if self._compiled is None else "numba"

    def action_values(self, obs, info, game: PokerSquaresGame, state: GameState) -> np.ndarray:
        """Expected gain in board value of each cell (NaN where illegal, by ``game.rules``)."""
        check_not_over(state)
        check_game_rules(self.rules, game.rules)
        warn_if_other_points(self, game)
        if self._compiled is not None:
            return self._compiled(game, state, self.ply, self.top)
        return expectimax_values(self._values, game, state, self.ply)

    def act(self, obs, info, game: PokerSquaresGame, state: GameState) -> int:
        """The cell of highest expectimax value."""
        return int(np.nanargmax(self.action_values(obs, info, game, state)))

    def act_with_values(self, obs, info, game: PokerSquaresGame, state: GameState) -> tuple[int, np.ndarray]:
        """The cell and the values it was chosen from, from one evaluation (the values are deterministic)."""
        values = self.action_values(obs, info, game, state)
        return int(np.nanargmax(values)), values
