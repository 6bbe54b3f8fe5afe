"""``PokerSquares-v0``: the Gymnasium environment of Poker Squares (poker solitaire)."""

from __future__ import annotations

import operator
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
from pokersquares_env.cards import EMPTY, NUM_CODES, NUM_STANDARD
from pokersquares_env.core import NUM_CELLS, GameState, IllegalActionError, PokerSquaresGame, Rules
from pokersquares_env.scoring import CATEGORY_KEYS, NO_HAND_KEY, add_points, point_system, reward_scale_factor

__all__ = ["PokerSquaresEnv", "OBS_SIZE", "encode_observation", "CARD_FEATURES", "render_game"]

CARD_FEATURES = 18  # 13 rank flags, 4 suit flags, 1 joker flag
BOARD_OFFSET = 0
CARD_OFFSET = NUM_CELLS * CARD_FEATURES  # 450
UNSEEN_OFFSET = CARD_OFFSET + CARD_FEATURES  # 468
OBS_SIZE = UNSEEN_OFFSET + NUM_CODES  # 522


def _feature_slots(code: int) -> tuple[int, ...]:
    if code >= NUM_STANDARD:
        return (17,)
    return (code % 13, 13 + code // 13)


#: FEATURE_SLOTS[code]: the positions (within an 18-wide card block) set for a card code.
FEATURE_SLOTS = tuple(_feature_slots(c) for c in range(NUM_CODES))
# The same as exactly two positions (a joker's one slot twice), for branch-free writes in step().
_SLOT_PAIRS = tuple((s[0], s[-1]) for s in FEATURE_SLOTS)
_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little").astype(np.int8)


def _line_points_list(system: str) -> list[float]:
    """A built-in system's ``line_points_table`` as a list (list look-ups beat numpy scalars)."""
    return point_system(system).line_points_table.tolist()


def mask_array(bits: int) -> np.ndarray:
    """A 25-bit cell set as an int8 array of shape (25,)."""
    return _BYTE_BITS[[bits & 255, bits >> 8 & 255, bits >> 16 & 255, bits >> 24 & 255]].reshape(-1)[:NUM_CELLS]


def encode_observation(game: PokerSquaresGame, state: GameState) -> np.ndarray:
    """The flat uint8 observation of ``state`` (see :class:`PokerSquaresEnv` for the layout)."""
    obs = np.zeros(OBS_SIZE, dtype=np.uint8)
    for cell, code in enumerate(state.board):
        if code != EMPTY:
            for slot in FEATURE_SLOTS[code]:
                obs[BOARD_OFFSET + cell * CARD_FEATURES + slot] = 1
    if not state.terminal:
        for slot in FEATURE_SLOTS[state.card]:
            obs[CARD_OFFSET + slot] = 1
    for code in game.unseen(state):
        obs[UNSEEN_OFFSET + code] = 1
    return obs


def render_game(game: PokerSquaresGame, state: GameState, mode: str, *, ended_early: bool = False) -> Any:
    """One game as ``render_mode`` ``mode`` draws it: the board text (``"ansi"``) or an RGB frame (``"rgb_array"``).

    ``ended_early`` (the game ended on an illegal action) adds a line saying so, since the board still shows the
    card that was to be placed, and marks no cell as playable (no cell is: the action mask is all zeros).
    """
    note = "game over: ended by an illegal action"
    if mode == "ansi":
        from pokersquares_env.text import board_text

        text = board_text(game, state, legal=game.rules.restricts(len(state.placements)) and not ended_early)
        return f"{text}\n{note}" if ended_early else text
    from pokersquares_env import render as _render

    return _render.draw_poker_squares(game, state, notes=(note,) if ended_early else (),
                                      legal=False if ended_early else None)


class PokerSquaresEnv(gym.Env):
    """Poker Squares: place 25 drawn cards on a 5x5 grid to make poker hands in its rows and columns.

    ## Description
    A shuffled deck (52 cards, plus 0-2 wild jokers) is turned up one card at a
    time.  Each card must be placed on a free cell of a 5x5 grid as it is drawn
    and never moves again.  When the grid is full its 5 rows and 5 columns are
    scored as poker hands under the American or English point system (or any
    custom table).  Sources: the Russian and Finnish rules in ``shared/seeds``;
    Neller's Poker Squares contests for the research record.

    ## Action Space
    ``Discrete(25)``: the cell for the drawn card, row-major (cell ``5 * row + col``;
    cell 12 is the centre, ``c3`` in board coordinates).  Only empty cells are
    legal; with ``placement="adjacent"`` only cells touching a placed card; with
    ``first_cell`` set, the first card must go there.  Legal cells are given by
    ``info["action_mask"]`` and ``action_masks()``.

    ## Observation Space
    ``Box(0, 1, (522,), uint8)``, one flat vector that SB3's ``MlpPolicy`` takes as it is:

    * ``[0, 450)``: the board, 18 numbers per cell (row-major), cell ``c`` at
      ``18 * c``: 13 rank flags (2, 3, ..., K, A), 4 suit flags (♣ ♦ ♥ ♠) and a joker
      flag.  An empty cell is all zeros.
    * ``[450, 468)``: the drawn card in the same 18-number code (all zeros after the last step).
    * ``[468, 522)``: the unseen cards, one flag per card code 0..53 (code =
      ``13 * suit + rank``; 52 and 53 are the jokers): 1 if the card is in the
      deck and has not been seen (neither on the board nor the drawn card).
      Card counting changes the value of every partial line.

    ## Starting State
    An empty board and the first card of a deck shuffled with ``self.np_random``
    (or the deck given in ``reset(options={"deck": [...]})``, drawn in that order).

    ## Rewards
    * ``reward_mode="line"`` (default): on the step that completes a row or a
      column, that line's points (both lines' when one card completes two).
    * ``reward_mode="terminal"``: the whole score on the last step, 0 before.

    Either way the rewards of an episode add up to its score (times
    ``reward_scale``; exactly for whole-number points and a power-of-two scale,
    within float rounding otherwise).  ``reward_scale`` is a number, or
    ``"normalized"`` to divide by the exact expected score of random play under
    the active system and rules (14.415 American, 7.676 English without jokers;
    ``scoring.expected_random_score(system, jokers)``), so American and English
    runs share a scale.
    With ``illegal_action="penalty"`` an illegal action ends the episode with
    reward ``illegal_penalty`` (not scaled).

    ## Episode End
    Terminates after the 25th placement (or on an illegal action under
    ``illegal_action="penalty"``).  Never truncated.

    ## Information
    Every step: ``action_mask`` (int8, (25,)), ``card`` (code of the card to
    place next, -1 when over).  At the end also ``score`` (active system),
    ``scores`` (``{"american": ..., "english": ...}``, always both), ``hands``
    (10 category keys, rows then columns), ``board`` (25 codes row-major),
    ``placements`` (cells in play order) and ``won`` (score at or above the
    win threshold, both to 9 decimals: :meth:`PointSystem.won`; False after an illegal action, a forfeit).  An illegal-action ending adds ``illegal_action`` (the reason);
    its scores count the completed lines only, and its ``hands`` say ``"none"``
    for the lines left incomplete.

    ## Arguments
    * ``scoring``: ``"american"`` (default), ``"english"``, a mapping of category
      to points, a JSON file path or a ``PointSystem``.
    * ``jokers``: 0 (default), 1 or 2 wild jokers in the deck.
    * ``placement``: ``"free"`` (default) or ``"adjacent"``; ``first_cell``:
      ``"center"``, ``"top-left"``, a cell index, or ``None`` (default).
    * ``reward_mode``: ``"line"`` or ``"terminal"``; ``reward_scale``: float or ``"normalized"``.
    * ``illegal_action``: ``"raise"`` (default: raise ``IllegalActionError``, which
      names the cell and why, and leave the state untouched) or ``"penalty"``;
      ``illegal_penalty``: the reward of an illegal action (default -10).
    * ``win_threshold``: overrides the system's threshold (100 American, 70 English).
    * ``render_mode``: ``None``, ``"ansi"``, ``"rgb_array"`` or ``"human"``.

    ## Version History
    * v0: first release.
    """

    metadata = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 4}

    def __init__(
        self,
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
    ) -> None:
        super().__init__()
        self.rules = Rules(jokers=jokers, placement=placement, first_cell=first_cell)
        system = point_system(scoring) if isinstance(win_threshold, str) and win_threshold == "default" else point_system(scoring, win_threshold=win_threshold)
        self.game = PokerSquaresGame(self.rules, system)
        self.point_system = system
        self.reward_mode = check_choice("reward_mode", reward_mode, REWARD_MODES)
        self.illegal_action = check_choice("illegal_action", illegal_action, ILLEGAL_ACTIONS)
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])
        self.reward_scale = self._resolve_scale(reward_scale)
        self.illegal_penalty = check_number("illegal_penalty", illegal_penalty)
        self.action_space = spaces.Discrete(NUM_CELLS)
        self.observation_space = spaces.Box(0, 1, shape=(OBS_SIZE,), dtype=np.uint8)
        self.state: GameState | None = None
        self._obs = np.zeros(OBS_SIZE, dtype=np.uint8)
        self._done = False
        self._mask_bits = 0
        self._mask = np.zeros(NUM_CELLS, dtype=np.int8)
        self._free_after_first = self.rules.placement == "free"
        self._start_bits, self._start_mask = 0, mask_array(0)  # the legal cells of an empty board, cached
        self._final_tables = (
            self.game._line_points,
            _line_points_list("american"),
            _line_points_list("english"),
            self.point_system.line_category_table.tolist(),
        )
        self._renderer = None
        if self.render_mode == "human":  # now: a missing Pillow or pygame is named when the env is made
            self._renderer = new_renderer("human", "PokerSquares-v0", self.metadata["render_fps"])

    def _resolve_scale(self, reward_scale: float | str) -> float:
        return reward_scale_factor(reward_scale, self.point_system, self.rules.jokers)

    # ------------------------------------------------------------------ API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start a game: a fresh shuffle, or ``options["deck"]`` drawn in the given order."""
        seed = check_seed(seed)
        options = check_reset_options(options, ("deck",))
        given = self.game.init(options["deck"]) if options.get("deck") is not None else None
        super().reset(seed=seed)  # after the options are checked: a refused reset leaves the generator as it was
        state = given if given is not None else self.game.init(self.game.deal(self.np_random), validate=False)
        self.state = state
        self._done = False
        obs = self._obs
        obs[:] = 0
        obs[UNSEEN_OFFSET : UNSEEN_OFFSET + self.rules.deck_size] = 1
        first = state.card
        for slot in FEATURE_SLOTS[first]:
            obs[CARD_OFFSET + slot] = 1
        obs[UNSEEN_OFFSET + first] = 0
        self._mask_bits = bits = self.game.legal_mask(state)
        if bits != self._start_bits:
            self._start_bits, self._start_mask = bits, mask_array(bits)
        self._mask = self._start_mask.copy()
        info = {"action_mask": self._mask.copy(), "card": first}
        if self.render_mode == "human":
            self.render()
        return obs.copy(), info

    def step(self, action: Any):
        """Place the drawn card on cell ``action``: an int (an ``IntEnum`` member too), a numpy integer or a one-element
        integer array; a bool is no cell and is refused as an illegal action."""
        state = self.state
        if state is None or self._done:
            raise gym.error.ResetNeeded("call reset() before step(): the episode is over or has not started")
        game = self.game
        if type(action) is not int:
            if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
                action = operator.index(action)  # an int subclass (an IntEnum member) or a numpy integer
            elif (isinstance(action, np.ndarray) and action.shape in ((), (1,))
                  and np.issubdtype(action.dtype, np.integer)):
                action = int(action.reshape(-1)[0])
        if type(action) is not int or action < 0 or not (self._mask_bits >> action & 1):
            reason = game.why_illegal(state, action) or (
                f"action {action!r} is not a legal cell now: expected an int 0..24 whose info['action_mask'] "
                f"entry is 1")
            if self.illegal_action == "raise":
                raise IllegalActionError(reason)
            return self._illegal_end(reason)
        bits = self._mask_bits
        placements = state.placements
        deck = state.deck
        slot_a, slot_b = _SLOT_PAIRS[deck[len(placements)]]
        points, _completed = game._apply_legal(state, action)
        obs = self._obs
        base = BOARD_OFFSET + action * CARD_FEATURES
        obs[base + slot_a] = 1
        obs[base + slot_b] = 1
        obs[CARD_OFFSET + slot_a] = 0
        obs[CARD_OFFSET + slot_b] = 0
        placed = len(placements)
        terminated = placed >= NUM_CELLS
        if terminated:
            self._done = True
            info = self._final_info()
            reward = info["score"] if self.reward_mode == "terminal" else points
        else:
            nxt = deck[placed]
            slot_a, slot_b = _SLOT_PAIRS[nxt]
            obs[CARD_OFFSET + slot_a] = 1
            obs[CARD_OFFSET + slot_b] = 1
            obs[UNSEEN_OFFSET + nxt] = 0
            mask = self._mask
            if self._free_after_first and placed > 1:  # free placement: only the chosen cell closes
                self._mask_bits = bits & ~(1 << action)
                mask[action] = 0
            else:
                new_bits = game.legal_mask(state)
                changed = new_bits ^ bits
                while changed:  # usually one cell; a few under the adjacency rule
                    low = changed & -changed
                    cell = low.bit_length() - 1
                    mask[cell] = new_bits >> cell & 1
                    changed ^= low
                self._mask_bits = new_bits
            info = {"action_mask": mask.copy(), "card": nxt}
            reward = points if self.reward_mode == "line" else 0.0
        if self.render_mode == "human":
            self.render()
        return obs.copy(), reward * self.reward_scale, terminated, False, info

    def _illegal_end(self, reason: str):
        self._done = True
        info = self._final_info()
        info["illegal_action"] = reason
        info["won"] = False  # a forfeited game is not won, whatever its lines score (as a multiplayer offender)
        self._obs[CARD_OFFSET : CARD_OFFSET + CARD_FEATURES] = 0  # the game is over: no card to place
        return self._obs.copy(), self.illegal_penalty, True, False, info

    def _final_info(self) -> dict[str, Any]:
        # game.score(state, system) and game.hands(state) for three systems, sharing one pass over the lines.
        state = self.state
        keys = state.line_keys()
        complete = [t == 5 for t in state.line_t]
        active, american_table, english_table, categories = self._final_tables
        score = add_points([active[k] if c else 0.0 for k, c in zip(keys, complete, strict=True)])
        american = add_points([american_table[k] if c else 0.0 for k, c in zip(keys, complete, strict=True)])
        english = add_points([english_table[k] if c else 0.0 for k, c in zip(keys, complete, strict=True)])
        hands = [CATEGORY_KEYS[categories[k]] if c and categories[k] >= 0 else NO_HAND_KEY
                 for k, c in zip(keys, complete, strict=True)]
        return {
            "action_mask": np.zeros(NUM_CELLS, dtype=np.int8),
            "card": EMPTY,
            "score": score,
            "scores": {"american": american, "english": english},
            "hands": hands,
            "board": list(state.board),
            "placements": list(state.placements),
            "won": self.point_system.won(score),
        }

    def action_masks(self) -> np.ndarray:
        """Legal cells as a bool array of shape (25,) (the hook sb3-contrib's MaskablePPO calls)."""
        if self.state is None:
            raise gym.error.ResetNeeded("call reset() before action_masks()")
        return self._mask.astype(bool) if not self._done else np.zeros(NUM_CELLS, dtype=bool)

    def render(self):
        """Render per ``render_mode``: text for ``"ansi"``, an RGB frame for ``"rgb_array"``, a window for ``"human"``."""
        if not render_ready(self.render_mode, self.state is not None, self.metadata["render_modes"]):
            return None
        ended_early = self._done and not self.state.terminal
        if self.render_mode == "ansi":
            return render_game(self.game, self.state, "ansi", ended_early=ended_early)
        if self._renderer is None:
            self._renderer = new_renderer(self.render_mode, "PokerSquares-v0", self.metadata["render_fps"])
        return self._renderer.show(render_game(self.game, self.state, "rgb_array", ended_early=ended_early))

    def close(self) -> None:
        """Close the render window, if one is open (the env itself holds nothing else to release)."""
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
