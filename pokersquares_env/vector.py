"""``PokerSquares-v0`` as a native numpy vector env: N games advanced by a handful of array operations.

With numba installed (the ``fast`` extra) the same updates run as compiled loops (``backend="numba"``).

``gymnasium.make_vec("PokerSquares-v0", num_envs=N, vectorization_mode="vector_entry_point", **rules)``
returns :class:`PokerSquaresVectorEnv`.  Each sub-env plays exactly the game of
:class:`pokersquares_env.env.PokerSquaresEnv` with the same observation,
rewards, masks and final scores; only the bookkeeping is batched.
"""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from pokersquares_env._adapter import check_render_mode, check_reset_options, check_seed, render_ready
from pokersquares_env.cards import NUM_CODES, NUM_STANDARD, check_index, format_card
from pokersquares_env.core import ADJACENT, NUM_CELLS, GameState, IllegalActionError, PokerSquaresGame, Rules, cell_name
from pokersquares_env.env import CARD_FEATURES, CARD_OFFSET, OBS_SIZE, UNSEEN_OFFSET, PokerSquaresEnv, render_game
from pokersquares_env.scoring import CATEGORY_KEYS, FLUSHABLE, NO_HAND_KEY, WINDOW, add_lines, point_system

__all__ = ["PokerSquaresVectorEnv"]

# ---------------------------------------------------------------------------- lookup tables
# A line's running statistics live in two numbers per line:
#   lin   = 264 * t + 88 * k + 8 * pairs   (the linear part of ``scoring.line_key``)
#   combo = rank_bits << 4 | suit_bits      (real cards only)
# so that ``scoring.line_key(t, k, pairs, rank_bits, suit_bits) == lin + WINDOW_FLUSH[combo]``.
_T_STEP, _K_STEP, _PAIR_STEP = 264, 88, 8
_COMPLETE = 5 * _T_STEP  # keys >= 1320 belong to lines of 5 cards
_CODES = np.arange(NUM_CODES)
_IS_REAL = (_CODES < NUM_STANDARD).astype(np.uint8)
#: Counter slot of a card in a line's 14 rank counters (13 ranks, then a joker slot that stays 0).
_RANK_SLOT = np.where(_CODES < NUM_STANDARD, _CODES % 13, 13).astype(np.int64)
_LIN_STEP = np.where(_CODES < NUM_STANDARD, _T_STEP, _T_STEP + _K_STEP).astype(np.int16)
_LIN_STEP_ALL = _LIN_STEP.astype(np.int64)
_COMBO_BITS = np.where(
    _CODES < NUM_STANDARD, (1 << (_CODES % 13 + 4)) | (1 << (_CODES // 13 % 4)), 0
).astype(np.int32)
# The compiled backend reads the two small factors (8 KiB in cache) instead of the 256 KiB product table.
_WINDOW8, _FLUSHABLE8 = WINDOW.astype(np.int8), FLUSHABLE.astype(np.int8)
_WINDOW_FLUSH = (2 * WINDOW[np.arange(1 << 17) >> 4] + FLUSHABLE[np.arange(1 << 17) & 15]).astype(np.int16)
#: The two positions (within an 18-wide card block) set by a card code; a joker sets slot 17 twice.
_SLOT_A = np.where(_CODES < NUM_STANDARD, _CODES % 13, 17).astype(np.int64)
_SLOT_B = np.where(_CODES < NUM_STANDARD, 13 + _CODES // 13 % 4, 17).astype(np.int64)
_ROW_OF = np.arange(NUM_CELLS, dtype=np.int64) // 5
_COL_OF = 5 + np.arange(NUM_CELLS, dtype=np.int64) % 5
# Tables indexed by ``cell * NUM_CODES + code`` (a card on a cell): one gather gives an offset.
_CELL_CODE_CELL = np.repeat(np.arange(NUM_CELLS), NUM_CODES)
_CELL_CODE_CODE = np.tile(_CODES, NUM_CELLS)
_BOARD_A = _CELL_CODE_CELL * CARD_FEATURES + _SLOT_A[_CELL_CODE_CODE]  # observation offsets of the placed card
_BOARD_B = _CELL_CODE_CELL * CARD_FEATURES + _SLOT_B[_CELL_CODE_CODE]
_ROW_COUNT = _ROW_OF[_CELL_CODE_CELL] * 14 + _RANK_SLOT[_CELL_CODE_CODE]  # rank-counter offsets in a board's 10x14
_COL_COUNT = _COL_OF[_CELL_CODE_CELL] * 14 + _RANK_SLOT[_CELL_CODE_CODE]
_CARD_A = CARD_OFFSET + _SLOT_A  # observation offsets of the drawn card
_CARD_B = CARD_OFFSET + _SLOT_B
_UNSEEN = UNSEEN_OFFSET + _CODES
_ADJACENT_ROWS = np.array([[c >> j & 1 for j in range(NUM_CELLS)] for c in ADJACENT], dtype=bool)
_HAND_NAMES = np.array(CATEGORY_KEYS + (NO_HAND_KEY,), dtype=object)  # index -1 is 'none'
# Illegal-action reasons, worded exactly as ``PokerSquaresGame.why_illegal`` words them.
_OCCUPIED_MSG = np.array(
    [[f"cell {c} ({cell_name(c)}) is occupied by {format_card(code)}" for code in range(NUM_CODES)] for c in range(25)],
    dtype=object,
)
_ADJACENT_MSG = np.array([f"cell {c} ({cell_name(c)}) touches no placed card (placement='adjacent')" for c in range(25)],
                         dtype=object)


BACKENDS = ("auto", "numpy", "numba")


def numba_available() -> bool:
    """Whether the compiled backend can be used (numba is installed: the ``fast`` extra)."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def _resolve_backend(backend: Any) -> str:
    """``"numpy"`` or ``"numba"`` for a ``backend`` argument (``"auto"``: numba when installed)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend={backend!r}: expected one of {', '.join(map(repr, BACKENDS))}")
    if backend == "auto":
        return "numba" if numba_available() else "numpy"
    if backend == "numba" and not numba_available():
        raise ImportError(
            "backend='numba' needs numba, which is not installed: pip install 'pokersquares_env[fast]' "
            "(or use backend='numpy', the same games in plain numpy)"
        )
    return backend


def _load_kernels():
    from pokersquares_env import _kernels

    return _kernels


def _complete_points(system) -> np.ndarray:
    """``line_points_table`` with every key of an incomplete line set to 0 (so no completeness test is needed)."""
    table = system.line_points_table.astype(np.float64).copy()
    table[:_COMPLETE] = 0.0
    return table


def _brief(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut to about ``limit`` characters: for error messages that name a bad value."""
    text = " ".join(repr(value).split())  # an array's repr spans lines
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _holds_text(row: Any) -> bool:
    """Whether a row of the ``deck`` option gives its cards as text: a string, or a list or array holding strings."""
    if isinstance(row, str):
        return True
    if isinstance(row, np.ndarray):
        return row.dtype.kind == "U" or (row.dtype == object and any(isinstance(c, str) for c in row.reshape(-1)))
    return isinstance(row, (list, tuple)) and any(isinstance(c, str) for c in row)


def _holds_odd_codes(row: Any) -> bool:
    """Whether a list or tuple row of the ``deck`` option holds a bool or an int beyond int64, which ``np.asarray``
    would read as a code (``True`` as 1) or as a float or object: such rows are checked card by card instead."""
    return isinstance(row, (list, tuple)) and any(
        isinstance(c, (bool, np.bool_)) or (isinstance(c, int) and not _INT64_MIN <= c <= _INT64_MAX) for c in row)


def _check_action_items(actions: Any) -> Any:
    """Refuse, by index, a bool or an int beyond int64 in a list or tuple of actions, before ``np.asarray`` reads a
    bool as cell 0 or 1 and a huge int as a float or an object (the single env refuses both, naming them).

    Returns the actions, a list or tuple with its numpy integer scalars as Python ints: ``np.asarray`` reads
    ``[np.uint64(5), 3]`` as float64, the single env takes ``np.uint64(5)`` as cell 5."""
    if not isinstance(actions, (list, tuple)):
        return actions
    if any(isinstance(a, np.integer) for a in actions):
        actions = [int(a) if isinstance(a, np.integer) else a for a in actions]
    for i, a in enumerate(actions):
        if isinstance(a, (bool, np.bool_)):
            raise TypeError(f"actions[{i}] = {a!r}: a bool is no cell: expected integer cell indices 0..24")
        if isinstance(a, int) and not _INT64_MIN <= a <= _INT64_MAX:
            raise ValueError(f"actions[{i}] = {a}: expected integer cell indices 0..24 (a value this large does not "
                             f"fit an int64)")
    return actions


_INT64_MIN, _INT64_MAX = int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max)
# compared as a uint64: numpy 1.x compares a uint64 array with a Python int (or an int64) as float64, where 2**63 - 1
# rounds up to 2**63, so 2**63 itself would not count as too large
_UINT64_OF_INT64_MAX = np.uint64(_INT64_MAX)


class PokerSquaresVectorEnv(VectorEnv):
    """N games of Poker Squares stepped together in numpy (``PokerSquares-v0``'s ``vector_entry_point``).

    ## Description
    Each sub-env is the game of :class:`~pokersquares_env.env.PokerSquaresEnv`:
    place 25 drawn cards on a 5x5 grid; rows and columns score as poker hands.
    ``step`` and ``reset`` advance all N games with a fixed number of numpy
    gather/scatter operations, or with compiled loops under ``backend="numba"``
    (no Python loop over sub-envs either way).  Each of the 10
    lines of every board keeps running statistics (cards, jokers, equal-rank
    pairs, rank and suit bit sets, rank counts) so that scoring a completed line
    is one look-up in the shared scoring tables (``scoring.line_key`` and
    ``PointSystem.line_points_table``), and the observation is updated in place.

    ## Action Space
    ``MultiDiscrete([25] * N)``: one cell per sub-env, an integer array of shape
    ``(N,)``.  Legal cells are ``info["action_mask"]`` (``(N, 25)`` int8) and
    ``action_masks()`` (``(N, 25)`` bool).

    ## Observation Space
    ``Box(0, 1, (N, 522), uint8)``: row ``i`` is sub-env ``i``'s observation,
    encoded exactly as the single env's (board 25x18, drawn card 18, unseen 54).

    ## Starting State
    Each sub-env starts from an empty board and a deck shuffled from
    ``self.np_random`` (see Seeding), or the deck given in
    ``reset(options={"deck": decks})``, an integer array of shape ``(N, >=25)``
    (or N rows of >=25 codes, of any lengths).

    ## Rewards
    As the single env: line points on the step that completes lines
    (``reward_mode="line"``) or the whole score on the last step
    (``"terminal"``), times ``reward_scale``; ``illegal_penalty`` (unscaled) for an
    illegal action under ``illegal_action="penalty"``.  Rewards are float64.

    ## Episode End
    A sub-env terminates after its 25th placement (or an illegal action under
    ``"penalty"``); never truncated.  Autoreset is ``NEXT_STEP``
    (``metadata["autoreset_mode"]``): the step after a sub-env terminates resets
    it, ignoring its action, and returns its first observation with reward 0
    and ``terminated=False``.

    ## Information
    Every step (and reset): ``action_mask`` (``(N, 25)`` int8) and ``card``
    (``(N,)`` int64: the card to place next, -1 when over), each with its
    Gymnasium ``_key`` presence array (all True).  For the sub-envs that end on
    this step, these keys are filled in and flagged in their ``_key`` arrays:
    ``score`` (float64), ``scores`` (``{"american": ..., "english": ...}`` with
    ``_american``/``_english``), ``hands`` (``(N, 10)`` object array of category
    keys, rows then columns), ``board`` (``(N, 25)`` int8 codes, -1 empty),
    ``placements`` (``(N, 25)`` int8 cells in play order, -1 padded after an
    early end), ``won`` (bool; False after an illegal action) and, for an illegal-action ending,
    ``illegal_action`` (object array of reasons).  Values at unflagged positions
    are 0 or ``None``.

    ## Seeding
    All decks come from the one generator ``self.np_random``: a reset deals the
    sub-envs being reset, in increasing index, one row of
    ``np_random.random(deck_size)`` each, and a deck is the stable argsort of
    its row -- exactly ``core.shuffled_deck``.  So the decks of a vector env
    reset with ``seed=s`` are the decks that a single ``PokerSquares-v0`` reset
    with ``seed=s`` and then reset again without a seed deals, in turn: sub-env
    0's first game, sub-env 1's first game, ..., then the autoresets in index
    order.  (``SyncVectorEnv`` instead seeds sub-env ``i`` with ``s + i``; that
    needs one generator per sub-env, which does not batch.)

    ## Arguments
    ``num_envs`` plus every argument of the single env: ``scoring``, ``jokers``,
    ``reward_mode``, ``reward_scale``, ``illegal_action`` (``"raise"`` raises
    :class:`IllegalActionError` naming the sub-env and why, before any sub-env
    moves), ``illegal_penalty``, ``placement``, ``first_cell``,
    ``win_threshold``.  ``copy`` (default True): return fresh observation
    arrays; ``False`` returns a read-only view of the internal buffer, which the
    next ``step`` overwrites (faster for learners that copy anyway).
    ``backend`` (default ``"auto"``): ``"numpy"`` steps every sub-env with a
    fixed number of numpy array operations; ``"numba"`` runs the same updates
    (same state arrays, same lookup tables) in compiled loops from
    :mod:`pokersquares_env._kernels`, 1.6 to 1.8 times faster at N=4096 (docs/speed.md; needs numba,
    the ``fast`` extra; the first use compiles for about 2 s, then the
    compiled code is cached); ``"auto"`` takes numba when it is installed.
    Both give identical observations, rewards and infos (a test); the chosen
    one is ``self.backend``.
    ``render_mode``: ``None``, ``"ansi"`` or ``"rgb_array"``; ``render()`` then
    returns a tuple of every sub-env's text or RGB frame, drawn as the single
    env draws them (as ``SyncVectorEnv`` does; ``render.tile_frames`` makes one
    image of the frames).  ``game_state(i)`` gives sub-env ``i``'s game as a
    core :class:`~pokersquares_env.core.GameState` for search agents and
    records.  ``max_episode_steps`` (passed by
    ``make_vec``) is accepted and must be ``None`` or at least 25: games end by
    themselves after 25 steps, and the native env has no truncation (the single
    env under ``gym.make(..., max_episode_steps=n)`` with ``n < 25`` is cut off
    by Gymnasium's ``TimeLimit`` wrapper, ``truncated=True``; cut games are not
    Poker Squares games, so the vector env refuses them).

    ``reset(options=...)`` takes ``deck`` (``(N, >=25)`` codes, N rows of
    codes whose lengths may differ, or N card strings: each row a deck of at
    least 25 distinct cards, whose first 25 are dealt) and ``reset_mask`` (``(N,)`` bool: reset only these sub-envs, now,
    leaving the others as they are -- what SB3-style same-step resets need; ``None``, as
    for ``deck``, is the option not given).

    ## Version History
    * v0: first release.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "autoreset_mode": AutoresetMode.NEXT_STEP, "render_fps": 4}

    def __init__(
        self,
        num_envs: int = 1,
        scoring: Any = "american",
        jokers: int = 0,
        reward_mode: str = "line",
        reward_scale: float | str = 1.0,
        illegal_action: str = "raise",
        illegal_penalty: float = -10.0,
        placement: str = "free",
        first_cell: Any = None,
        win_threshold: Any = "default",
        render_mode: str | None = None,
        copy: bool = True,
        max_episode_steps: int | None = None,
        backend: str = "auto",
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs={num_envs!r}: expected a positive integer")
        render_mode = check_render_mode(render_mode, self.metadata["render_modes"])
        if max_episode_steps is not None and (isinstance(max_episode_steps, bool)
                                              or not isinstance(max_episode_steps, (int, np.integer))
                                              or max_episode_steps < NUM_CELLS):
            raise ValueError(f"max_episode_steps={max_episode_steps!r}: expected None or an integer >= 25 (a game is "
                             f"25 steps)")
        if not isinstance(copy, (bool, np.bool_)):
            raise TypeError(f"copy={copy!r}: expected True or False (a bool)")
        # The single env validates and resolves every rule option; share its results.
        proto = PokerSquaresEnv(
            scoring=scoring, jokers=jokers, reward_mode=reward_mode, reward_scale=reward_scale,
            illegal_action=illegal_action, illegal_penalty=illegal_penalty, placement=placement,
            first_cell=first_cell, win_threshold=win_threshold,
        )
        self.num_envs = n = int(num_envs)
        self.rules: Rules = proto.rules
        self.point_system = proto.point_system
        self.reward_mode = proto.reward_mode
        self.reward_scale = proto.reward_scale
        self.illegal_action = proto.illegal_action
        self.illegal_penalty = proto.illegal_penalty
        self.render_mode = render_mode
        self.game = PokerSquaresGame(self.rules, self.point_system)
        self.copy = bool(copy)
        self.backend = _resolve_backend(backend)
        self._backend_asked = backend  # "auto" falls back to numpy where numba fails, here and after unpickling
        self._kernels = None
        self.single_action_space = spaces.Discrete(NUM_CELLS)
        self.action_space = batch_space(self.single_action_space, n)
        self.single_observation_space = proto.observation_space
        self.observation_space = batch_space(self.single_observation_space, n)

        self._points = _complete_points(self.point_system)
        self._american = _complete_points(point_system("american"))
        self._english = _complete_points(point_system("english"))
        self._categories = self.point_system.line_category_table
        self._deck_size = self.rules.deck_size
        self._has_jokers = self.rules.jokers > 0
        self._adjacent = self.rules.placement == "adjacent"
        self._first_cell = self.rules.first_cell
        first_mask = np.ones(NUM_CELLS, dtype=np.int8)
        if self._first_cell is not None:
            first_mask[:] = 0
            first_mask[self._first_cell] = 1
        self._first_mask = first_mask
        fc = self._first_cell
        self._first_msg = np.array(
            [f"cell {c} ({cell_name(c)}) is not the first cell: the first card must go on cell {fc} ({cell_name(fc)})"
             for c in range(NUM_CELLS)] if fc is not None else [""] * NUM_CELLS,
            dtype=object,
        )

        # Flat bases: sub-env i's block starts at i * width in each flat array.
        self._ids = np.arange(n, dtype=np.int64)
        self._obs_base = self._ids * OBS_SIZE
        self._deck_base = self._ids * (NUM_CELLS + 1)
        self._line_base = self._ids * 10
        self._cell_base = self._ids * NUM_CELLS
        self._count_base = self._ids * 140

        self._obs = np.zeros((n, OBS_SIZE), dtype=np.uint8)
        # Column 25 repeats card 24, so "write the next card" needs no branch for finished games.
        self._deck = np.zeros((n, NUM_CELLS + 1), dtype=np.int64)
        self._board = np.full((n, NUM_CELLS), -1, dtype=np.int8)
        self._placements = np.full((n, NUM_CELLS), -1, dtype=np.int8)
        self._placed = np.zeros(n, dtype=np.int64)
        self._mask = np.zeros((n, NUM_CELLS), dtype=np.int8)
        self._frontier = np.zeros((n, NUM_CELLS), dtype=bool)
        self._lin = np.zeros((n, 10), dtype=np.int16)
        self._combo = np.zeros((n, 10), dtype=np.int32)
        self._rank_counts = np.zeros((n, 10, 14), dtype=np.uint8)
        self._prev_done = np.zeros(n, dtype=bool)
        self._any_done = False
        self._card = np.full(n, -1, dtype=np.int64)
        self._all_true = np.ones(n, dtype=bool)
        self._started = False
        self.closed = False
        if self.backend == "numba":
            self._start_kernels(explicit=backend == "numba")

    def __getstate__(self) -> dict[str, Any]:
        # The kernels are a module, which cannot be pickled: a copy (copy.deepcopy, pickle, a process pool)
        # keeps whether it had them and loads them again (numba's cache makes that quick).
        state = dict(self.__dict__)
        state["_kernels"] = state["_kernels"] is not None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._kernels = None
        if state["_kernels"]:
            try:
                self._kernels = _load_kernels()
            except Exception as exc:  # noqa: BLE001 - e.g. unpickled where numba is not installed
                if state.get("_backend_asked", "auto") == "numba":
                    raise
                warnings.warn(f"backend='auto': the numba kernels cannot be loaded here ({type(exc).__name__}: "
                              f"{exc}); the unpickled env runs the numpy backend (the same games)", RuntimeWarning,
                              stacklevel=2)
                self.backend = "numpy"

    def _start_kernels(self, explicit: bool) -> None:
        """Load and compile (or load from numba's cache) the kernels now, on empty inputs of the real dtypes.

        Under ``backend="auto"`` a numba that fails here (say, one too old for this numpy) only warns, and the
        env runs the numpy backend; under ``backend="numba"`` the error propagates.
        """
        try:
            kernels = _load_kernels()
            none = self._ids[:0]
            kernels.count_illegal(none, none, self._mask)
            kernels.reset_rows(none, self._deck[:0, :NUM_CELLS], self._obs, self._deck, self._board,
                               self._placements, self._placed, self._lin, self._combo, self._rank_counts,
                               self._frontier, self._mask, self._first_mask, self._prev_done, self._card, _SLOT_A,
                               _SLOT_B, CARD_OFFSET, UNSEEN_OFFSET, self._deck_size, self._obs, False)
            kernels.first_cards(np.zeros((0, self._deck_size)), np.zeros((0, self._deck_size), dtype=np.int64),
                                NUM_CELLS)
            self._kernels = kernels
            self._advance_compiled(none, none)
        except Exception as exc:  # noqa: BLE001 - any failure to compile means: use numpy
            self._kernels = None
            if explicit:
                raise
            warnings.warn(f"backend='auto': the numba kernels failed to compile ({type(exc).__name__}: {exc}); "
                          f"using the numpy backend", RuntimeWarning, stacklevel=3)
            self.backend = "numpy"

    # ------------------------------------------------------------------ reset
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start new games in all sub-envs (or those in ``options["reset_mask"]``); see Seeding."""
        if self.closed:
            raise gym.error.ClosedEnvironmentError("reset() on a closed vector env: make a new one")
        seed = check_seed(seed, " (one generator deals every sub-env; see the class docstring)")
        options = check_reset_options(options, ("deck", "reset_mask"))
        rows = self._ids
        if options.get("reset_mask") is not None:
            reset_mask = np.asarray(options["reset_mask"])
            if reset_mask.shape != (self.num_envs,) or reset_mask.dtype != np.bool_:
                raise ValueError(
                    f"options['reset_mask'] has shape {reset_mask.shape} and dtype {reset_mask.dtype}: "
                    f"expected a bool array of shape ({self.num_envs},)"
                )
            if not reset_mask.any():  # as Gymnasium's SyncVectorEnv: a reset that resets nothing is a mistake
                raise ValueError("options['reset_mask'] is all False: expected at least one sub-env to reset")
            if not self._started and not reset_mask.all():
                raise ValueError("options['reset_mask'] needs a first reset of every sub-env: call reset() first")
            rows = np.flatnonzero(reset_mask)
        decks = self._check_decks(options["deck"])[rows] if options.get("deck") is not None else None
        # Seeded after the options are checked: a refused reset leaves the generator as it was.
        super().reset(seed=None if seed is None else int(seed))
        if decks is None:
            decks = self._deal(len(rows))
        self._reset_rows(rows, decks)
        self._any_done = bool(self._prev_done.any())
        self._started = True
        return self._observation(), self._info()

    def _deal(self, count: int) -> np.ndarray:
        """``count`` decks (first 25 cards) from ``self.np_random``, as ``core.shuffled_deck`` deals them."""
        keys = self.np_random.random((count, self._deck_size))
        # The stable sort that ``shuffled_deck`` uses is 3x slower; the two differ only where two keys
        # tie (about 1e-13 per deck), so re-sort just the rows where a tie could change the first 25.
        order = np.argsort(keys, axis=1)
        if self._kernels is not None:
            decks, tied = self._kernels.first_cards(keys, order, NUM_CELLS)
        else:
            order = order[:, : NUM_CELLS + 1]
            ranked = np.take_along_axis(keys, order, axis=1)
            tied = (ranked[:, 1:] == ranked[:, :-1]).any(axis=1)
            decks = order[:, :NUM_CELLS]
        if tied.any():
            decks[tied] = np.argsort(keys[tied], axis=1, kind="stable")[:, :NUM_CELLS]
        return decks

    def _check_decks(self, decks: Any) -> np.ndarray:
        """A validated (N, 25) array of the first 25 cards of each given deck.

        The decks are an (N, >=25) array, or N rows whose lengths may differ: each row is a whole deck of at least 25
        distinct cards of the rules' deck, of which the first 25 are dealt.  A row may give its cards as codes or as
        text (one string, or a list or array of card strings, codes mixed in), as the single env's ``deck`` option.
        """
        if isinstance(decks, np.ndarray) and decks.dtype.kind in "UO" and decks.ndim in (1, 2):
            # rows of card text, or deck strings (as Python str), parsed row by row below
            decks = list(decks) if decks.ndim == 2 else decks.tolist()
        if isinstance(decks, (list, tuple)) and len(decks) == self.num_envs and any(
                _holds_text(row) or _holds_odd_codes(row) for row in decks):
            decks = [self._parse_deck(i, row) if _holds_text(row) or _holds_odd_codes(row) else row
                     for i, row in enumerate(decks)]
        try:
            arr = np.asarray(decks)
        except ValueError:  # rows of different lengths: each row is checked alone
            arr = None
        if arr is None or (arr.dtype == object and arr.ndim == 1 and isinstance(decks, (list, tuple))):
            return self._check_ragged_decks(decks)
        if arr.ndim != 2 or arr.shape[0] != self.num_envs or arr.shape[1] < NUM_CELLS:
            given = f" {_brief(decks)}" if arr.ndim < 2 else ""  # a string or a flat list: show what it was
            raise ValueError(f"options['deck']{given} has shape {arr.shape}: expected ({self.num_envs}, >=25), or "
                             f"{self.num_envs} rows of >=25 codes each (a row may be card text: one deck per sub-env)")
        return self._check_deck_rows(arr)

    def _parse_deck(self, i: int, row: Any) -> list[int]:
        """The codes of row ``i`` of the ``deck`` option, given as card text, checked as the single env checks a deck
        (``PokerSquaresGame.check_deck``); its errors name ``options['deck'][i]``."""
        try:
            return list(self.game.check_deck(row))
        except (TypeError, ValueError) as exc:
            where, message = f"options['deck'][{i}]", str(exc)
            # "deck[7]: ..." / "deck has 24 cards ..." name the row; a bad card's own message gets the row in front
            raise type(exc)(where + message[len("deck"):] if message.startswith("deck") else f"{where}: {message}") \
                from None

    def _check_ragged_decks(self, decks: Any) -> np.ndarray:
        """The first 25 cards of N decks of different lengths, each checked as :meth:`_check_deck_rows` checks."""
        if not isinstance(decks, (list, tuple)) or len(decks) != self.num_envs:
            given = f"{len(decks)} rows" if isinstance(decks, (list, tuple)) else repr(decks)
            raise ValueError(f"options['deck'] is {given}: expected {self.num_envs} rows (one deck per sub-env) of "
                             f">=25 codes each")
        out = []
        for i, row in enumerate(decks):
            if row is None:
                raise ValueError(f"options['deck'][{i}] is None: expected a deck of >=25 card codes for every "
                                 f"sub-env (a deck for some sub-envs only is not supported; deck=None shuffles all)")
            try:
                arr = np.asarray(row)
            except ValueError:
                arr = None
            if arr is None or arr.ndim != 1 or len(arr) < NUM_CELLS:
                shape = "ragged" if arr is None else arr.shape
                raise ValueError(f"options['deck'][{i}] has shape {shape}: expected a deck of >=25 card codes")
            out.append(self._check_deck_rows(arr[None, :], first=i))
        return np.concatenate(out)

    def _check_deck_rows(self, arr: np.ndarray, first: int = 0) -> np.ndarray:
        """The first 25 codes of each row of ``arr`` (decks ``first``, ``first + 1``, ... of the option), checked:
        integer codes of the rules' deck, distinct within a row."""
        if not np.issubdtype(arr.dtype, np.integer):
            where = "options['deck']" if first == 0 and len(arr) == self.num_envs else f"options['deck'][{first}]"
            raise TypeError(f"{where} has dtype {arr.dtype}: expected integer card codes")
        bad = (arr < 0) | (arr >= self._deck_size)
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise ValueError(
                f"options['deck'][{first + i}][{j}] = {arr[i, j]}: expected a code of the rules' deck, "
                f"0..{self._deck_size - 1} ({self.rules.jokers} joker(s))"
            )
        arr = arr.astype(np.int64)
        ordered = np.sort(arr, axis=1)
        dup = ordered[:, 1:] == ordered[:, :-1]
        if dup.any():
            i = int(np.flatnonzero(dup.any(axis=1))[0])
            row = arr[i].tolist()
            j = next(j for j, c in enumerate(row) if c in row[:j])  # where the card comes the second time
            raise ValueError(f"options['deck'][{first + i}][{j}]: card {format_card(row[j])} (code {row[j]}) "
                             f"appears twice")
        return arr[:, :NUM_CELLS]

    def _reset_rows(self, rows: np.ndarray, decks: np.ndarray, out: np.ndarray | None = None) -> None:
        """Start the games of sub-envs ``rows`` with ``decks`` (first 25 cards each); the compiled kernel also copies
        their new observation rows into ``out`` when it is given (the numpy backend is never given one)."""
        if self._kernels is not None:
            self._kernels.reset_rows(
                rows, np.ascontiguousarray(decks, dtype=np.int64), self._obs, self._deck, self._board,
                self._placements, self._placed, self._lin, self._combo, self._rank_counts, self._frontier, self._mask,
                self._first_mask, self._prev_done, self._card, _SLOT_A, _SLOT_B, CARD_OFFSET, UNSEEN_OFFSET,
                self._deck_size, self._obs if out is None else out, out is not None,
            )
            return
        full = len(rows) == self.num_envs
        ids = self._ids if full else rows
        rows = slice(None) if full else rows  # whole-array writes are cheaper than row gathers
        self._deck[rows, :NUM_CELLS] = decks
        self._deck[rows, NUM_CELLS] = decks[:, NUM_CELLS - 1]
        self._board[rows] = -1
        self._placements[rows] = -1
        self._placed[rows] = 0
        self._lin[rows] = 0
        self._combo[rows] = 0
        self._rank_counts[rows] = 0
        self._frontier[rows] = False
        self._mask[rows] = self._first_mask
        self._prev_done[rows] = False
        first = decks[:, 0]
        self._card[rows] = first
        obs = self._obs
        obs[rows] = 0
        obs[rows, UNSEEN_OFFSET : UNSEEN_OFFSET + self._deck_size] = 1
        obs[ids, CARD_OFFSET + _SLOT_A[first]] = 1
        obs[ids, CARD_OFFSET + _SLOT_B[first]] = 1
        obs[ids, UNSEEN_OFFSET + first] = 0

    # ------------------------------------------------------------------ step
    def step(self, actions: Any):
        """Place each sub-env's drawn card on its cell in ``actions`` (sub-envs that ended last step reset instead).

        ``actions`` has shape ``(N,)``; a policy's ``(N, 1)`` column of cells is taken as the ``(N,)`` it holds."""
        if self.closed:
            raise gym.error.ClosedEnvironmentError("step() on a closed vector env: make a new one")
        if not self._started:
            raise gym.error.ResetNeeded("call reset() before step()")
        actions = self._check_actions(actions)
        n = self.num_envs
        reward = np.zeros(n, dtype=np.float64)
        terminated = np.zeros(n, dtype=bool)
        prev_done = self._prev_done
        if self._any_done:  # set when a sub-env ended on the last step (saves a scan of prev_done)
            resetting = np.flatnonzero(prev_done)
            rows = np.flatnonzero(~prev_done)
        else:
            resetting, rows = None, self._ids
        cells = actions[rows] if resetting is not None else actions

        illegal = illegal_reasons = None
        if self._kernels is not None and not self._kernels.count_illegal(rows, cells, self._mask):
            legal = None  # every action legal: the compiled check saves four array passes
        else:
            legal = self._legal(rows, cells)
        if legal is not None and not legal.all():
            bad = np.flatnonzero(~legal)
            reasons = self._why_illegal(rows[bad], cells[bad])
            if self.illegal_action == "raise":
                raise IllegalActionError(f"sub-env {int(rows[bad[0]])}: {reasons[0]}")
            illegal, illegal_reasons = rows[bad], reasons
            rows, cells = rows[legal], cells[legal]

        # The step's fresh observation (copy=True): the compiled kernels fill its rows as they update them,
        # instead of a copy of the whole buffer at the end (a 2 MB array at N=4096, which no longer fits the cache).
        out = np.empty_like(self._obs) if self.copy and self._kernels is not None else None
        points, finished = self._advance(rows, cells, out)
        if self.reward_mode == "line":
            if rows is self._ids:
                reward = points * self.reward_scale
            else:
                reward[rows] = points * self.reward_scale
        done_rows = rows[finished]
        if illegal is not None:
            done_rows = np.concatenate((done_rows, illegal))
        if illegal is not None:  # an illegal action ends the game where it stands
            self._mask[illegal] = 0
            self._card[illegal] = -1
            self._obs[illegal, CARD_OFFSET : CARD_OFFSET + CARD_FEATURES] = 0  # as at a normal end
            if out is not None:
                out[illegal] = self._obs[illegal]
        if resetting is not None:
            self._reset_rows(resetting, self._deal(len(resetting)), out)
            self._any_done = False

        info = self._info()
        if len(done_rows):
            score = self._final_info(info, done_rows)
            if self.reward_mode == "terminal":
                reward[done_rows] = score * self.reward_scale
            if illegal is not None:
                reward[illegal] = self.illegal_penalty
                info["won"][illegal] = False  # a forfeited game is not won, as in the single env
                reasons = np.full(n, None, dtype=object)
                reasons[illegal] = illegal_reasons
                present = np.zeros(n, dtype=bool)
                present[illegal] = True
                info["illegal_action"], info["_illegal_action"] = reasons, present
            terminated[done_rows] = True
            self._prev_done[done_rows] = True
        self._any_done = bool(len(done_rows))
        return (self._observation() if out is None else out), reward, terminated, np.zeros(n, dtype=bool), info

    def _legal(self, rows: np.ndarray, cells: np.ndarray) -> np.ndarray:
        """Whether each of ``cells`` (one per sub-env in ``rows``) is in range and legal."""
        in_range = cells.size == 0 or (cells.min() >= 0 and cells.max() < NUM_CELLS)
        cell_base = self._cell_base if rows is self._ids else self._cell_base[rows]
        if in_range:
            return self._mask.reshape(-1)[cell_base + cells] == 1
        legal = (cells >= 0) & (cells < NUM_CELLS)
        legal &= self._mask.reshape(-1)[cell_base + np.where(legal, cells, 0)] == 1
        return legal

    def _check_actions(self, actions: Any) -> np.ndarray:
        actions = _check_action_items(actions)
        arr = np.asarray(actions)
        if arr.shape != (self.num_envs,):
            if arr.shape == (self.num_envs, 1):  # a policy's column of cells; not (1, N), (N, 1, 1) or a scalar
                arr = arr.reshape(self.num_envs)
            else:
                given = "" if isinstance(actions, np.ndarray) else f" {_brief(actions)}"  # an array: its shape says it
                raise ValueError(f"actions{given} have shape {arr.shape}: expected ({self.num_envs},), one cell per "
                                 f"sub-env")
        if not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"actions have dtype {arr.dtype}: expected integer cell indices 0..24")
        if arr.dtype.itemsize == 8 and np.issubdtype(arr.dtype, np.unsignedinteger) and arr.size \
                and arr.max() > _UINT64_OF_INT64_MAX:  # checked before the cast, which would wrap it negative
            i = int(np.argmax(arr > _UINT64_OF_INT64_MAX))
            raise ValueError(f"actions[{i}] = {int(arr[i])}: expected integer cell indices 0..24 (a value this large "
                             f"does not fit an int64)")
        return arr.astype(np.int64, copy=False)

    def _advance(self, rows: np.ndarray, cells: np.ndarray,
                 out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Place the drawn cards of sub-envs ``rows`` on legal ``cells``; their line points and which finished.

        ``out`` (compiled backend only): an array of the observation's shape that receives the updated rows.
        """
        if self._kernels is not None:
            return self._advance_compiled(rows, cells, out)
        full = rows is self._ids  # the usual case: skip gathering the per-env bases
        if full:
            placed, obs_base, deck_base = self._placed, self._obs_base, self._deck_base
            cell_base, line_base, count_base = self._cell_base, self._line_base, self._count_base
        else:
            placed, obs_base, deck_base = self._placed[rows], self._obs_base[rows], self._deck_base[rows]
            cell_base, line_base, count_base = self._cell_base[rows], self._line_base[rows], self._count_base[rows]
        deck = self._deck.reshape(-1)
        code = deck[deck_base + placed]
        cell_code = cells * NUM_CODES + code
        cell_index = cell_base + cells
        self._board.reshape(-1)[cell_index] = code
        self._placements.reshape(-1)[cell_base + placed] = cells
        if full:
            placed += 1
        else:
            placed = placed + 1
            self._placed[rows] = placed
        nxt = deck[deck_base + placed]

        # Observation: the card goes onto its cell; the next card is drawn.  (One 1-D scatter per
        # flag: numpy gathers rows of 2-D tables far slower than it gathers 1-D ones.)
        obs = self._obs.reshape(-1)
        obs[obs_base + _BOARD_A[cell_code]] = 1
        obs[obs_base + _BOARD_B[cell_code]] = 1
        obs[obs_base + _CARD_A[code]] = 0
        obs[obs_base + _CARD_B[code]] = 0
        obs[obs_base + _CARD_A[nxt]] = 1
        obs[obs_base + _CARD_B[nxt]] = 1
        obs[obs_base + _UNSEEN[nxt]] = 0

        # Lines: the row and the column through the cell take the card; complete ones score.
        if self._has_jokers:
            lin_step, is_real = _LIN_STEP[code], _IS_REAL[code]
        else:
            lin_step, is_real = _T_STEP, 1
        combo_bits = _COMBO_BITS[code]
        row_points = self._add_to_line(
            line_base + _ROW_OF[cells], count_base + _ROW_COUNT[cell_code], lin_step, is_real, combo_bits
        )
        col_points = self._add_to_line(
            line_base + _COL_OF[cells], count_base + _COL_COUNT[cell_code], lin_step, is_real, combo_bits
        )
        points = 0.0 + row_points + col_points  # the single env's additions, in its order

        # Legal cells.
        if self._adjacent:
            self._frontier[rows] |= _ADJACENT_ROWS[cells]
            self._mask[rows] = self._frontier[rows] & (self._board[rows] < 0)
        else:
            self._mask.reshape(-1)[cell_index] = 0
            if self._first_cell is not None:
                second = rows[placed == 1]
                if len(second):
                    self._mask[second] = self._board[second] < 0

        finished = placed == NUM_CELLS
        self._card[rows] = nxt
        if finished.any():
            done = rows[finished]
            self._card[done] = -1
            self._obs[done, CARD_OFFSET : CARD_OFFSET + CARD_FEATURES] = 0  # no drawn card at the end
        return points, finished

    def _advance_compiled(self, rows: np.ndarray, cells: np.ndarray,
                          out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``_advance`` by the numba kernel (``backend="numba"``): the same writes, one sub-env at a time."""
        points = np.empty(len(rows), dtype=np.float64)
        finished = np.empty(len(rows), dtype=bool)
        self._kernels.advance(
            rows, cells, self._obs, self._deck, self._board, self._placements, self._placed, self._mask,
            self._frontier, self._lin, self._combo, self._rank_counts, self._card,
            self._points, _WINDOW8, _FLUSHABLE8, _SLOT_A, _SLOT_B, _RANK_SLOT, _LIN_STEP_ALL, _IS_REAL, _COMBO_BITS,
            _ADJACENT_ROWS, self._adjacent, self._first_cell is not None, CARD_OFFSET, UNSEEN_OFFSET,
            points, finished, self._obs if out is None else out, out is not None,
        )
        return points, finished

    def _add_to_line(self, lines: np.ndarray, slots: np.ndarray, lin_step: Any, is_real: Any,
                     combo_bits: np.ndarray) -> np.ndarray:
        """Add one card to each of ``lines`` (flat indices; ``slots``: its rank counters); points of completed ones."""
        counts = self._rank_counts.reshape(-1)
        same_rank = counts[slots]
        counts[slots] = same_rank + is_real
        lin = self._lin.reshape(-1)
        key = lin[lines] + lin_step
        key += same_rank.astype(np.int16) * _PAIR_STEP
        lin[lines] = key
        combo = self._combo.reshape(-1)
        bits = combo[lines] | combo_bits
        combo[lines] = bits
        key += _WINDOW_FLUSH[bits]
        return self._points[key]

    def _why_illegal(self, rows: np.ndarray, cells: np.ndarray) -> np.ndarray:
        """The reasons (worded as the single env's) why ``cells`` are illegal in sub-envs ``rows``."""
        out_of_range = (cells < 0) | (cells >= NUM_CELLS)
        safe = np.where(out_of_range, 0, cells)
        occupant = self._board[rows, safe]
        reasons = np.where(
            occupant >= 0,
            _OCCUPIED_MSG[safe, np.maximum(occupant, 0)],
            _ADJACENT_MSG[safe],
        )
        if self._first_cell is not None:
            first = (self._placed[rows] == 0) & (occupant < 0)
            reasons = np.where(first, self._first_msg[safe], reasons)
        if out_of_range.any():
            reasons = np.where(
                out_of_range,
                np.char.add(np.char.add("cell ", cells.astype(str)), " is out of range 0..24").astype(object),
                reasons,
            )
        return reasons

    # ------------------------------------------------------------------ outputs
    def _observation(self) -> np.ndarray:
        if self.copy:
            return self._obs.copy()
        view = self._obs.view()
        view.flags.writeable = False
        return view

    def _info(self) -> dict[str, Any]:
        present = self._all_true.copy()
        return {
            "action_mask": self._mask.copy(),
            "_action_mask": present,
            "card": self._card.copy(),
            "_card": present.copy(),
        }

    def _final_info(self, info: dict[str, Any], rows: np.ndarray) -> np.ndarray:
        """Add the final scores of sub-envs ``rows`` to ``info``; return their scores under the active system."""
        n = self.num_envs
        every = len(rows) == n  # all games ended together (the usual case): whole arrays, no row gathers
        pick = slice(None) if every else rows
        keys = self._lin[pick].astype(np.int64)
        keys += _WINDOW_FLUSH[self._combo[pick]]
        score = add_lines(self._points[keys])
        american = add_lines(self._american[keys])
        english = add_lines(self._english[keys])
        categories = np.where(keys >= _COMPLETE, self._categories[keys], -1)
        present = np.zeros(n, dtype=bool)
        present[rows] = True

        def full(values: np.ndarray, dtype: Any, shape: tuple[int, ...] = ()) -> np.ndarray:
            if every:
                return values if values.dtype == dtype else values.astype(dtype)
            array = np.zeros((n, *shape), dtype=dtype) if dtype is not object else np.full((n, *shape), None)
            array[rows] = values
            return array

        won = self.point_system.won(np.asarray(score, dtype=np.float64))
        info["score"], info["_score"] = full(score, np.float64), present
        info["scores"] = {
            "american": full(american, np.float64),
            "_american": present.copy(),
            "english": full(english, np.float64),
            "_english": present.copy(),
        }
        info["_scores"] = present.copy()
        info["hands"], info["_hands"] = full(_HAND_NAMES[categories], object, (10,)), present.copy()
        # Copies: the env goes on writing its own board and placements arrays.
        info["board"], info["_board"] = full(self._board[pick].copy(), np.int8, (NUM_CELLS,)), present.copy()
        info["placements"] = full(self._placements[pick].copy(), np.int8, (NUM_CELLS,))
        info["_placements"] = present.copy()
        info["won"], info["_won"] = full(won, bool), present.copy()
        return score[rows] if every else score  # in the order of ``rows`` (illegal endings come last)

    def action_masks(self) -> np.ndarray:
        """Legal cells of every sub-env as a bool array of shape (N, 25) (the hook MaskablePPO calls)."""
        if not self._started:
            raise gym.error.ResetNeeded("call reset() before action_masks()")
        return self._mask.astype(bool)

    def game_state(self, index: int) -> GameState:
        """Sub-env ``index``'s game as a core ``GameState``: its deck and placements so far, replayed (a new object;
        the vector env keeps no ``GameState`` of its own).  After a game ends it is the final position until the
        autoreset; after an illegal-action ending, the position the game stopped at."""
        if not self._started:
            raise gym.error.ResetNeeded("call reset() before game_state()")
        i = check_index(index, "sub-env index", self.num_envs)
        game = self.game
        state = game.init(self._deck[i, :NUM_CELLS].tolist(), validate=False)
        for cell in self._placements[i, : self._placed[i]].tolist():
            game._apply_legal(state, cell)
        return state

    def render(self) -> tuple[Any, ...] | None:
        """Every sub-env rendered per ``render_mode``, as a tuple: board text for ``"ansi"``, an RGB frame (H, W, 3)
        for ``"rgb_array"``; each exactly as the single env renders the same game."""
        if not render_ready(self.render_mode, self._started, self.metadata["render_modes"]):
            return None
        return tuple(
            render_game(self.game, self.game_state(i), self.render_mode,
                        ended_early=bool(self._prev_done[i]) and self._placed[i] < NUM_CELLS)
            for i in range(self.num_envs)
        )

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release: the env holds only numpy arrays."""
