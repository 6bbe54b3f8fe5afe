"""``PokerShuffle-v0``: Poker Squares with all 25 cards dealt face up (the Finnish and PySol variants)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from pokersquares_env._adapter import (
    ILLEGAL_ACTIONS,
    REWARD_MODES,
    check_choice,
    check_number,
    check_render_mode,
    check_reset_options,
    check_seed,
    new_renderer,
    render_ready,
)
from pokersquares_env.cards import EMPTY, check_index, format_card, format_cards
from pokersquares_env.core import NUM_CELLS, GameState, IllegalActionError, PokerSquaresGame, Rules, cell_name
from pokersquares_env.env import CARD_FEATURES, FEATURE_SLOTS, mask_array
from pokersquares_env.scoring import point_system, reward_scale_factor
from pokersquares_env.shuffle.solver import SWAP_PAIRS, check_cards

__all__ = [
    "ARRANGE_ACTIONS",
    "ARRANGE_OBS_SIZE",
    "PokerShuffleEnv",
    "STOP",
    "SWAP_ACTIONS",
    "SWAP_OBS_SIZE",
    "arrange_action",
    "layout_state",
    "swap_action",
    "swap_cells",
]

MODES = ("arrange", "swap")
ARRANGE_ACTIONS = NUM_CELLS * NUM_CELLS  # 625: 25 * card slot + cell
STOP = len(SWAP_PAIRS)  # 300: the swap-mode action that ends the game
SWAP_ACTIONS = STOP + 1  # 301
BOARD_SIZE = NUM_CELLS * CARD_FEATURES  # 450
ARRANGE_OBS_SIZE = 2 * BOARD_SIZE + NUM_CELLS + 1  # 926: board, cards to place, one-hot placements left
SWAP_BITS = 16
SWAP_OBS_SIZE = BOARD_SIZE + SWAP_BITS  # 466: board, swaps left in binary
MAX_SWAP_BUDGET = (1 << SWAP_BITS) - 1
PYSOL_WIN = 200  # PySol's Poker Shuffle threshold, American points


def _shuffle_threshold(system: Any) -> float | None:
    """The default Poker Shuffle threshold of ``system``: 200 for the American points with their Poker Squares
    threshold, none for the English with theirs, else the system's own (a threshold its maker chose)."""
    for name, shuffle in (("american", PYSOL_WIN), ("english", None)):
        builtin = point_system(name)
        if system.points == builtin.points and system.win_threshold == builtin.win_threshold:
            return shuffle
    return system.win_threshold
_PAIR_INDEX = {(int(i), int(j)): a for a, (i, j) in enumerate(SWAP_PAIRS)}


def arrange_action(slot: int, cell: int) -> int:
    """The arrange-mode action placing dealt card ``slot`` (0..24) on ``cell`` (0..24)."""
    return check_index(slot, "slot", NUM_CELLS) * NUM_CELLS + check_index(cell, "cell", NUM_CELLS)


def swap_action(i: int, j: int) -> int:
    """The swap-mode action exchanging cells ``i`` and ``j`` (any order, i != j)."""
    i, j = check_index(i, "cell", NUM_CELLS), check_index(j, "cell", NUM_CELLS)
    if i == j:
        raise ValueError(f"cells {i!r}, {j!r}: expected two different cells in 0..24")
    return _PAIR_INDEX[(min(i, j), max(i, j))]


def swap_cells(action: int) -> tuple[int, int] | None:
    """The two cells a swap-mode action exchanges (``None`` for the stop action)."""
    action = check_index(action, "swap-mode action", SWAP_ACTIONS, f" ({STOP} = stop)")
    if action == STOP:
        return None
    i, j = SWAP_PAIRS[action]
    return int(i), int(j)


def layout_state(game: PokerSquaresGame, board: list[int]) -> GameState:
    """A core game state with the 25 codes of ``board`` laid on their cells (row-major)."""
    state = game.init(list(board), validate=False)
    for cell in range(NUM_CELLS):
        game._apply_legal(state, cell)
    return state


class PokerShuffleEnv(gym.Env):
    """Poker Shuffle: all 25 cards are dealt face up; arrange them on a 5x5 grid for the best poker hands.

    ## Description
    Poker Squares with full information.  25 cards (from 52, plus 0-2 wild
    jokers) are dealt face up at once and scored, as in ``PokerSquares-v0``,
    by the poker hands of the 5 rows and 5 columns.  Two modes from the sources:

    * ``mode="arrange"`` (Finnish rule: each player is dealt 25 cards and lays
      them out; a placed card never moves).  Each step places one of the
      remaining dealt cards on a free cell.  The placement rules of
      ``PokerSquares-v0`` (``placement="adjacent"``, ``first_cell``) apply.
    * ``mode="swap"`` (Russian rule and PySol's "Poker Shuffle": cards may be
      moved after they are laid).  The cards start laid out in deal order
      (card ``i`` on cell ``i``); each step swaps two cells, or stops.

    ``budget`` is the Finnish "agreed time" after which play is checked
    whether finished or not: in arrange mode the number of placements (the
    board is then scored as it stands; the source does not say how, and the
    library's reading is that a line of fewer than five cards scores
    the pairs, two pairs, threes and fours of a kind it holds; flushes,
    straights and full houses need five cards -- ``score_grid`` scores
    incomplete grids the same way); in swap mode the number of swaps (a
    limit the library adds: the Russian source sets none, and at the default
    100 it never binds, since any arrangement is at most 24 swaps away).

    ## Action Space
    * arrange: ``Discrete(625)``, action ``25 * slot + cell`` places dealt card
      ``slot`` (its index in ``info["cards"]``) on ``cell`` (row-major, cell 12
      is the centre ``c3``).  See :func:`arrange_action`.
    * swap: ``Discrete(301)``, action ``a < 300`` swaps the cells of
      ``SWAP_PAIRS[a]`` (all pairs ``i < j`` in order), action 300 stops.
      See :func:`swap_action` and :func:`swap_cells`.

    Legal actions are given by ``info["action_mask"]`` (int8) and ``action_masks()``.

    ## Observation Space
    Flat ``Box(0, 1, uint8)`` vectors in ``PokerSquares-v0``'s 18-number card
    code (13 rank flags, 4 suit flags ♣ ♦ ♥ ♠, 1 joker flag):

    * arrange, ``(926,)``: ``[0, 450)`` the board, 18 per cell row-major;
      ``[450, 900)`` the dealt cards still to place, 18 per slot (zeros once
      placed); ``[900, 926)`` one-hot of the placements left before the board
      is checked (0..25).
    * swap, ``(466,)``: ``[0, 450)`` the board; ``[450, 466)`` the swaps left,
      16 bits, least significant first.

    ## Starting State
    25 cards drawn from a deck shuffled with ``self.np_random`` (or
    ``reset(options={"cards": [...]})``): an empty board in arrange mode, the
    cards on cells 0..24 in deal order in swap mode.

    ## Rewards
    * arrange, ``reward_mode="line"`` (default): the points of the lines a
      placement completes; on the step that ends the game by the budget, also
      the points of the incomplete lines (rank groups only).  The rewards add
      up to the final score.
    * swap, ``reward_mode="line"``: the change of the board's score made by
      the swap (0 for stop).  The rewards add up to the final score minus the
      score of the dealt layout (``info["dealt_score"]``).
    * ``reward_mode="terminal"``: the whole final score on the last step, 0 before.

    Rewards are multiplied by ``reward_scale`` (a number, or ``"normalized"``
    to divide by the expected score of random play, as in ``PokerSquares-v0``).
    With ``illegal_action="penalty"`` an illegal action ends the episode with
    reward ``illegal_penalty`` (not scaled).

    ## Episode End
    Terminates when the board is full (arrange), on the stop action (swap),
    when the budget is spent (the budget is a rule of the game -- the board is
    checked -- not a time limit, so this is termination), or on an illegal
    action under ``illegal_action="penalty"``.  Never truncated.

    ## Information
    Every step: ``action_mask`` (int8), ``cards`` (the 25 dealt codes, slot
    order), ``budget_left``.  Swap mode also ``dealt_score`` (score of the
    dealt layout).  At the end also ``score`` (active system; when the budget
    checks an incomplete board its incomplete lines count by the rank-group
    rule, after an illegal action only the completed lines), ``scores`` (``{"american": ..., "english": ...}``),
    ``hands`` (10 category keys, rows then columns; ``'none'`` for an empty
    line), ``board`` (25 codes, -1 empty), ``complete`` (board full),
    ``placements`` (arrange: cells in play order) or ``swaps`` (swap: the
    ``(i, j)`` pairs), and ``won``.  An illegal-action ending adds
    ``illegal_action`` (the reason), and its ``won`` is False (a forfeit).

    ## Arguments
    * ``mode``: ``"arrange"`` (default) or ``"swap"``.
    * ``scoring``: ``"american"`` (default), ``"english"``, a mapping, a JSON path or a ``PointSystem``.
    * ``jokers``: 0 (default), 1 or 2 wild jokers in the deck the 25 cards come from.
    * ``budget``: arrange: placements before the board is checked (1..25,
      default ``None`` = 25); swap: swaps allowed (1..65535, default 100).
    * ``placement``, ``first_cell``: arrange-mode placement rules, as in ``PokerSquares-v0``.
    * ``reward_mode``: ``"line"`` or ``"terminal"``; ``reward_scale``: float or ``"normalized"``.
    * ``illegal_action``: ``"raise"`` (default, raises ``IllegalActionError``
      naming the action and why) or ``"penalty"``; ``illegal_penalty`` (default -10).
    * ``win_threshold``: score that wins; by default 200 under the American
      points (PySol's Poker Shuffle) and none under the English (their Poker
      Squares thresholds, 100 and 70, are too low when every card is known); a
      point system given with a threshold of its own (a table file's
      ``win_threshold``, or ``point_system(..., win_threshold=...)`` other than
      those two) keeps it.
    * ``render_mode``: ``None``, ``"ansi"``, ``"rgb_array"`` or ``"human"`` (frames show the cards still to place).

    ## Version History
    * v0: first release.
    """

    metadata = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 4}

    def __init__(
        self,
        mode: str = "arrange",
        scoring: Any = "american",
        jokers: int = 0,
        budget: int | None = None,
        reward_mode: str = "line",
        reward_scale: float | str = 1.0,
        illegal_action: str = "raise",
        illegal_penalty: float = -10.0,
        placement: str = "free",
        first_cell: Any = None,
        win_threshold: Any = "default",
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        if mode not in MODES:
            raise ValueError(f"mode={mode!r}: expected 'arrange' or 'swap'")
        self.rules = Rules(jokers=jokers, placement=placement, first_cell=first_cell)  # names a bad option
        if mode == "swap" and (self.rules.placement != "free" or self.rules.first_cell is not None):
            raise ValueError(
                f"placement={placement!r}, first_cell={first_cell!r}: placement rules apply to mode='arrange' "
                f"only (in swap mode every card is already on the board)"
            )
        self.mode = mode
        system = point_system(scoring)
        if isinstance(win_threshold, str) and win_threshold == "default":  # the built-in systems' Poker Squares thresholds give way to Poker Shuffle's
            system = point_system(system, win_threshold=_shuffle_threshold(system))
        else:
            system = point_system(system, win_threshold=win_threshold)
        self.point_system = system
        self.game = PokerSquaresGame(self.rules, system)
        self.budget = self._check_budget(budget)
        self.reward_mode = check_choice("reward_mode", reward_mode, REWARD_MODES)
        self.illegal_action = check_choice("illegal_action", illegal_action, ILLEGAL_ACTIONS)
        self.illegal_penalty = check_number("illegal_penalty", illegal_penalty)
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])
        self.reward_scale = self._resolve_scale(reward_scale)
        if mode == "arrange":
            self.action_space = spaces.Discrete(ARRANGE_ACTIONS)
            self.observation_space = spaces.Box(0, 1, shape=(ARRANGE_OBS_SIZE,), dtype=np.uint8)
        else:
            self.action_space = spaces.Discrete(SWAP_ACTIONS)
            self.observation_space = spaces.Box(0, 1, shape=(SWAP_OBS_SIZE,), dtype=np.uint8)
        self.state: GameState | None = None
        self.cards: list[int] = []
        self._placed = [False] * NUM_CELLS  # arrange: dealt slot already on the board
        self._swaps: list[tuple[int, int]] = []
        self._left = 0
        self._done = False
        self._score = 0.0
        self._dealt_score = 0.0
        self._renderer = None
        if self.render_mode == "human":  # now: a missing Pillow or pygame is named when the env is made
            self._renderer = new_renderer("human", "PokerShuffle-v0", self.metadata["render_fps"])

    def _check_budget(self, budget: Any) -> int:
        limit = NUM_CELLS if self.mode == "arrange" else MAX_SWAP_BUDGET
        if budget is None:
            return NUM_CELLS if self.mode == "arrange" else 100
        if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or not 1 <= budget <= limit:
            what = "placements" if self.mode == "arrange" else "swaps"
            raise ValueError(f"budget={budget!r}: expected None or an integer 1..{limit} ({what} in mode={self.mode!r})")
        return int(budget)

    def _resolve_scale(self, reward_scale: float | str) -> float:
        return reward_scale_factor(reward_scale, self.point_system, self.rules.jokers)

    # ------------------------------------------------------------------ API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Deal 25 cards face up: a fresh shuffle, or ``options["cards"]`` in the given order."""
        seed = check_seed(seed)
        options = check_reset_options(options, ("cards",))
        cards = None
        if options.get("cards") is not None:
            cards = check_cards(options["cards"])
            self.game.check_deck(cards, where="options['cards']")  # jokers must be allowed by the rules
        super().reset(seed=seed)  # after the options are checked: a refused reset leaves the generator as it was
        if cards is None:
            cards = list(self.game.deal(self.np_random)[:NUM_CELLS])
        self.cards = cards
        self._done = False
        self._swaps = []
        self._left = self.budget
        if self.mode == "arrange":
            self._placed = [False] * NUM_CELLS
            self.state = self.game.init(cards, validate=False)
            self._score = 0.0
        else:
            self.state = layout_state(self.game, cards)
            self._score = self._dealt_score = self.game.score(self.state)
        if self.render_mode == "human":
            self.render()
        return self._observe(), self._info()

    def _mask_bits(self) -> np.ndarray:
        if self._done:
            return np.zeros(self.action_space.n, dtype=np.int8)
        if self.mode == "swap":
            return np.ones(SWAP_ACTIONS, dtype=np.int8)
        cells = mask_array(self.game.legal_mask(self.state))
        slots = np.array([0 if p else 1 for p in self._placed], dtype=np.int8)
        return np.outer(slots, cells).reshape(-1).astype(np.int8)

    def _observe(self) -> np.ndarray:
        obs = np.zeros(self.observation_space.shape, dtype=np.uint8)
        for cell, code in enumerate(self.state.board):
            if code != EMPTY:
                for s in FEATURE_SLOTS[code]:
                    obs[cell * CARD_FEATURES + s] = 1
        if self.mode == "arrange":
            for slot, code in enumerate(self.cards):
                if not self._placed[slot]:
                    for s in FEATURE_SLOTS[code]:
                        obs[BOARD_SIZE + slot * CARD_FEATURES + s] = 1
            obs[2 * BOARD_SIZE + self._left] = 1
        else:
            for b in range(SWAP_BITS):
                obs[BOARD_SIZE + b] = self._left >> b & 1
        return obs

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"action_mask": self._mask_bits(), "cards": list(self.cards), "budget_left": self._left}
        if self.mode == "swap":
            info["dealt_score"] = self._dealt_score
        return info

    def why_illegal(self, action: Any) -> str | None:
        """Why ``action`` is not legal now, or ``None`` if it is."""
        if self.state is None or self._done:
            return "the game is over"
        n = self.action_space.n
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            return f"action {action!r} is not an integer 0..{n - 1}"
        action = int(action)
        if not 0 <= action < n:
            return f"action {action} is out of range 0..{n - 1} (mode={self.mode!r})"
        if self.mode == "swap":
            return None
        slot, cell = divmod(action, NUM_CELLS)
        if self._placed[slot]:
            where = self.state.placements[self.state.deck.index(self.cards[slot])]
            return f"action {action}: card slot {slot} ({format_card(self.cards[slot])}) is already on cell {where} ({cell_name(where)})"
        reason = self.game.why_illegal(self.state, cell)
        return None if reason is None else f"action {action} (slot {slot}, {format_card(self.cards[slot])}): {reason}"

    def step(self, action: Any):
        """Arrange: place a dealt card on a cell; swap: exchange two cells or stop."""
        if self.state is None or self._done:
            raise gym.error.ResetNeeded("call reset() before step(): the episode is over or has not started")
        if isinstance(action, np.ndarray) and action.shape in ((), (1,)) and np.issubdtype(action.dtype, np.integer):
            action = int(action.reshape(-1)[0])
        reason = self.why_illegal(action)
        if reason is not None:
            if self.illegal_action == "raise":
                raise IllegalActionError(reason)
            self._done = True
            # the lines it completed count, as in PokerSquares-v0 and the game record: the board was not checked
            info = self._final_info(partial=False)
            info["illegal_action"] = reason
            info["won"] = False  # a forfeited game is not won, whatever its lines score
            return self._observe(), self.illegal_penalty, True, False, info
        action = int(action)
        return self._arrange(action) if self.mode == "arrange" else self._swap(action)

    def _arrange(self, action: int):
        slot, cell = divmod(action, NUM_CELLS)
        state, code = self.state, self.cards[slot]
        n = state.num_placed
        # The core plays its deck in order: put the chosen card next in the draw order.
        rest = [c for c in state.deck[n:] if c != code]
        state.deck = state.deck[:n] + (code,) + tuple(rest)
        points, _ = self.game.apply(state, cell)
        self._placed[slot] = True
        self._left -= 1
        terminated = self._left == 0 or state.terminal
        if terminated:
            self._done = True
            final = self.game.score(state, partial=True)
            points += final - self.game.score(state)  # incomplete lines, checked as they stand
            reward = final if self.reward_mode == "terminal" else points
            info = self._final_info()
        else:
            reward = points if self.reward_mode == "line" else 0.0
            info = self._info()
        if self.render_mode == "human":
            self.render()
        return self._observe(), reward * self.reward_scale, terminated, False, info

    def _swap(self, action: int):
        pair = swap_cells(action)
        before = self._score
        if pair is not None:
            i, j = pair
            board = list(self.state.board)
            board[i], board[j] = board[j], board[i]
            self.state = layout_state(self.game, board)
            self._score = self.game.score(self.state)
            self._swaps.append(pair)
            self._left -= 1
        terminated = pair is None or self._left == 0
        if terminated:
            self._done = True
            info = self._final_info()
            reward = self._score if self.reward_mode == "terminal" else self._score - before
        else:
            info = self._info()
            reward = self._score - before if self.reward_mode == "line" else 0.0
        if self.render_mode == "human":
            self.render()
        return self._observe(), reward * self.reward_scale, terminated, False, info

    def _final_info(self, partial: bool = True) -> dict[str, Any]:
        """The end-of-game keys; ``partial``: incomplete lines count (a board the budget checked)."""
        state, game = self.state, self.game
        score = game.score(state, partial=partial)
        info = self._info()
        info.update(
            score=score,
            scores={s: game.score(state, s, partial=partial) for s in ("american", "english")},
            hands=game.hands(state, partial=partial),
            board=list(state.board),
            complete=state.terminal,
            won=self.point_system.won(score),
        )
        if self.mode == "arrange":
            info["placements"] = list(state.placements)
        else:
            info["swaps"] = list(self._swaps)
        return info

    #: The ``meta`` keys :meth:`game_record` writes itself (``swaps`` and ``dealt_score`` in swap mode only), so a
    #: caller's ``meta`` may not hold them (``RecordGames`` refuses such a ``meta`` when it is made).
    record_meta_keys = ("mode", "budget", "dealt", "swaps", "dealt_score")

    def game_record(self, *, seed: int | None = None, agent: str | None = None,
                    meta: dict[str, Any] | None = None) -> Any:
        """The current game as a :class:`~pokersquares_env.records.GameRecord` (used by ``RecordGames``).

        The record replays the board as Poker Squares placements; ``meta``
        keeps what only Poker Shuffle has: ``mode``, the ``budget``, the
        ``dealt`` cards in deal order and, in swap mode, the ``swaps`` (cell
        pairs, in order) and the ``dealt_score``, so the game can be told from
        a Poker Squares one and the swaps replayed from the dealt layout.  An
        arrange-mode game ended by the budget before the board was full is
        recorded with ``checked=True``: the record's hands and scores count the
        incomplete lines as the env's final info does.  A ``meta`` holding one
        of :attr:`record_meta_keys` is a ``ValueError`` (it would replace what
        the env records).
        """
        from pokersquares_env.cards import format_card_numbered
        from pokersquares_env.records import GameRecord

        if self.state is None:
            raise gym.error.ResetNeeded("call reset() before game_record()")
        clash = [key for key in self.record_meta_keys if key in (meta or {})]
        if clash:
            raise ValueError(f"meta keys {clash}: a Poker Shuffle record writes {list(self.record_meta_keys)} itself; "
                             f"expected meta without them")
        extra: dict[str, Any] = {"mode": self.mode, "budget": self.budget,
                                 "dealt": [format_card_numbered(c) for c in self.cards]}
        if self.mode == "swap":
            extra["swaps"] = [[int(i), int(j)] for i, j in self._swaps]
            extra["dealt_score"] = self._dealt_score
        return GameRecord.from_game(self.game, self.state, seed=seed, agent=agent, meta={**extra, **(meta or {})},
                                    checked=self._checked())

    def _checked(self) -> bool:
        """The board was checked as it stood: the budget ran out before it was full (not an illegal-action
        ending)."""
        return self.mode == "arrange" and self._done and self._left == 0 and not self.state.terminal

    def action_masks(self) -> np.ndarray:
        """Legal actions as a bool array (the hook sb3-contrib's MaskablePPO calls)."""
        if self.state is None:
            raise gym.error.ResetNeeded("call reset() before action_masks()")
        return self._mask_bits().astype(bool)

    def render(self):
        """Render per ``render_mode``: the board and the cards still to place (or swaps left) as text for ``"ansi"``."""
        if not render_ready(self.render_mode, self.state is not None, self.metadata["render_modes"]):
            return None
        if self.render_mode == "ansi":
            from pokersquares_env.text import board_text, fmt_points

            lines = board_text(self.game, self.state, card=False,  # the cards in hand are listed below instead
                               legal=self.mode == "arrange" and not self._done  # none when over
                               and self.rules.restricts(len(self.state.placements)),
                               checked=self._checked()).splitlines()
            if self.mode == "arrange":
                todo = [c for c, p in zip(self.cards, self._placed, strict=True) if not p]
                lines.append(f"cards to place: {format_cards(todo) or '-'}")
                lines.append(f"placements left before the check: {self._left}")
            else:
                lines.append(f"dealt layout scored {fmt_points(self._dealt_score)}; swaps left: {self._left}")
            return "\n".join(lines)
        from pokersquares_env import render as _render

        if self._renderer is None:
            self._renderer = new_renderer(self.render_mode, "PokerShuffle-v0", self.metadata["render_fps"])
        frame = _render.draw_poker_shuffle(
            self.game, self.state, cards=self.cards, placed=self._placed, mode=self.mode, budget_left=self._left,
            dealt_score=self._dealt_score if self.mode == "swap" else None, legal=False if self._done else None,
            # in play: what the board would score if checked now; over: what it scored (complete lines only after
            # an illegal action, as info["score"])
            partial=not self._done, checked=self._checked(),
        )
        return self._renderer.show(frame)

    def close(self) -> None:
        """Close the render window, if one is open (the env itself holds nothing else to release)."""
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
