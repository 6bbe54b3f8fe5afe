"""``Soliter-v0``: the Gymnasium environment of Soliter (Baker's Game) and its variants."""

from __future__ import annotations

import dataclasses
import inspect
import operator
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from pokersquares_env._adapter import (
    ILLEGAL_ACTIONS,
    check_choice,
    check_number,
    check_render_mode,
    check_reset_options,
    check_seed,
    new_renderer,
    render_ready,
)
from pokersquares_env.cards import NUM_STANDARD
from pokersquares_env.soliter.rules import (
    EMPTY,
    IllegalMoveError,
    SoliterGame,
    SoliterState,
    Variant,
    get_variant,
)

__all__ = ["SoliterEnv", "encode_observation", "observation_high", "observation_size"]

_MAX_SKIPPED = 1000  # shuffles tried for a deal with a legal move before reset gives up
_HIGH = 54  # the largest card code (the third joker's)


def observation_size(game: SoliterGame) -> int:
    """Length of the flat observation of a game (see :class:`SoliterEnv`)."""
    return game.num_columns * game.max_depth + game.num_cells + game.num_piles + len(game.jokers) + 2


def observation_high(game: SoliterGame) -> np.ndarray:
    """The largest value of each observation entry (int16, layout in :class:`SoliterEnv`): 54 for a column slot or
    free cell (the largest card code), ``game.levels`` for a foundation count, 51 for a joker's meaning (a real
    card), ``num_stages - 1`` for the stage and ``game.num_columns`` for the columns in play."""
    high = np.full(observation_size(game), _HIGH, dtype=np.int16)
    k = game.num_columns * game.max_depth + game.num_cells
    high[k : k + game.num_piles] = game.levels
    k += game.num_piles
    high[k : k + len(game.jokers)] = NUM_STANDARD - 1
    high[-2] = game.variant.num_stages - 1
    high[-1] = game.num_columns
    return high


def encode_observation(game: SoliterGame, state: SoliterState, out: np.ndarray | None = None) -> np.ndarray:
    """The flat int16 observation of ``state`` (layout in :class:`SoliterEnv`)."""
    obs = np.full(observation_size(game), EMPTY, dtype=np.int16) if out is None else out
    if out is not None:
        obs[:] = EMPTY
    depth = game.max_depth
    if len(state.columns) != game.num_columns:
        raise ValueError(f"the state has {len(state.columns)} columns: the observation of the "
                         f"{game.variant.name!r} variant holds {game.num_columns} (game.check_state names what is wrong)")
    for i, col in enumerate(state.columns):
        if len(col) > depth:
            raise ValueError(f"column {i + 1} has {len(col)} cards: the observation of the {game.variant.name!r} "
                             f"variant holds at most {depth} a column (game.max_depth), so this is no position of the "
                             f"variant (game.check_state names what is wrong)")
        if col:
            obs[i * depth : i * depth + len(col)] = col
    k = game.num_columns * depth
    obs[k : k + game.num_cells] = state.cells
    k += game.num_cells
    obs[k : k + game.num_piles] = state.foundations
    k += game.num_piles
    obs[k : k + len(game.jokers)] = state.jokers
    k += len(game.jokers)
    obs[k] = state.stage
    obs[k + 1] = state.open_columns
    return obs


class SoliterEnv(gym.Env):
    """Soliter (Baker's Game): move every card to the foundations, one card at a time.

    ## Description
    The open solitaire "Солитер" (I. Konstantinov, *Nauka i Zhizn* No. 11, 1968;
    source: ``shared/seeds/soliter-ru.txt``), known elsewhere as Baker's Game.
    The deck is dealt face up into columns (classic: 52 cards in 8 columns,
    four of 7 and four of 6).  Only the last card of a column is playable.
    Aces start the foundations, which build up in suit to the king.  A playable
    card may go onto a column whose last card is one rank higher in the same
    suit, into an empty column, or into one of the free cells (one card each;
    classic: 4).  The game is won when all cards are on the foundations.
    Variants (``variant=``): ``"classic"``, ``"36"`` (six to ace, 6 columns),
    ``"104"`` (two decks, 10 columns, 8 cells), ``"104-aces-kings"`` (two decks in
    13-card columns, ace foundations up and king foundations down, two stages),
    ``"joker"`` (wild jokers) and ``"multistage"`` (redeal into one column fewer).
    A joker replaces any card and serves as an extra "reserve": any card but a
    king may go onto a joker that stands for nothing, and a joker may rest in a
    free cell.  ``docs/soliter.md`` lists every rule and interpretation.

    ## Action Space
    ``Discrete(N * N)`` (``+ 1`` with a redeal variant), where the ``N`` places are
    the columns ``0..C-1``, the free cells ``C..C+F-1`` and the foundation piles
    ``C+F..N-1``; action ``source * N + destination`` moves the playable card of
    ``source`` to ``destination`` (classic: ``N = 8 + 4 + 4 = 16``, 256 actions).
    The redeal variants add action ``N * N``, legal only when the rules allow a
    redeal (stages left, and the game has stopped: no card can go to a
    foundation or be built onto another card, :meth:`SoliterGame.can_redeal`).  Legal actions are
    in ``info["action_mask"]`` and ``action_masks()``.

    ## Observation Space
    ``Box(-1, high, (C*D + F + P + J + 2,), int16)``, one flat vector, ``high`` per entry
    (:func:`observation_high`):

    * ``[0, C*D)``: the columns, ``D`` slots each (``D = game.max_depth``, the
      most cards a column can ever hold: the deepest deal of any stage plus a
      full suit, or the whole deck with jokers), column ``c`` at ``D * c``,
      first-dealt (covered) card first, playable card last; a card is its code
      ``13 * suit + rank`` (rank 0 = two .. 12 = ace; jokers 52..54); -1 empty.
      A state with a longer column is refused (``check_state``,
      ``encode_observation``), never cut or spilled into the next column.
      High 54.
    * the ``F`` free cells (code or -1; high 54);
    * the ``P`` foundation piles: the number of cards on each (``game.piles``
      gives each pile's suit and direction; high ``game.levels``, 13 or 9);
    * the ``J`` jokers: the code each stands for, or -1 (high 51);
    * the stage (0-based; high ``num_stages - 1``) and the number of columns
      in play (high ``game.num_columns``).

    ## Starting State
    A deal of the deck shuffled with ``self.np_random`` (or ``options["deal"]``:
    the deck in dealing order, or a list of columns first-dealt card first; or
    ``options["state"]``, a position of this variant).  A shuffled deal with no
    legal move (only possible with ``free_cells=0``: any playable card can go to a
    free cell) is lost before it starts and a reset cannot end an episode, so it
    is skipped and the next shuffle dealt; ``info["skipped_deals"]`` counts them.
    With ``free_cells=0`` 454 of 3,000 shuffles (15.1%, about one in 6.6) have no
    legal move (``docs/soliter.md`` gives the command).  A given deal or state with
    no legal move, or a state already won, is refused.

    ## Rewards
    ``reward_home`` (default +1) per card moved to a foundation (a card passing
    between foundations earns nothing), ``reward_win`` (default +10) on the
    winning move, ``reward_step`` (default 0) on every step.  With
    ``illegal_action="penalty"`` an illegal action ends the episode with reward
    ``illegal_penalty``.

    ## Episode End
    Terminates when the game is won, when no legal action is left (lost), or
    on an illegal action under ``illegal_action="penalty"``.  Truncated after
    ``max_steps`` steps (default 20 per card).

    ## Information
    Every step: ``action_mask`` (int8, ``(num_actions,)``; all zeros once the
    episode has terminated, the moves left when it is truncated), ``won`` (bool),
    ``cards_home`` (cards on the foundations), ``stage``, ``steps``; after
    ``reset``, ``skipped_deals`` too.  An illegal
    action under ``illegal_action="penalty"`` adds ``illegal_action`` (the reason).

    ## Arguments
    * ``variant``: a name above or a :class:`~pokersquares_env.soliter.rules.Variant`.
    * any :class:`~pokersquares_env.soliter.rules.Variant` option as a keyword
      (overrides): ``free_cells``, ``columns``, ``jokers``, ``decks``, ``deck``
      (``"52"`` or ``"36"``; the integers 52 and 36 are accepted too),
      ``deal``, ``column_size``, ``king_foundations``, ``redeal``, ``stages``.
    * ``reward_home``, ``reward_win``, ``reward_step``: the reward terms above.
    * ``max_steps``: the step limit (default ``20 * cards``).
    * ``illegal_action``: ``"raise"`` (default: raise ``IllegalMoveError`` naming the
      move and why; the state is untouched) or ``"penalty"`` (end with ``illegal_penalty``,
      default -10; makes random actions safe, e.g. for ``check_env``).
    * ``render_mode``: ``None``, ``"ansi"`` (text), ``"rgb_array"`` (needs Pillow:
      ``pip install "pokersquares_env[render]"``; every frame of an env has the same size, a deep column is drawn
      squeezed) or ``"human"`` (those frames in a pygame window, shown at every reset and step; needs pygame too:
      ``pip install "pokersquares_env[human]"``, named when the env is made without it).

    ## Version History
    * v0: first release.  2026-12-01 (same id): ``max_depth`` became a true bound on a column's length, which
      changed the observation sizes of ``joker`` (179 -> 435) and ``multistage`` (954 -> 850); a moving joker no
      longer counts its own meaning against the spot it moves to.  2026-12-02 (same id): every ``rgb_array``
      frame of an env has the same size (``RecordVideo`` and ``HumanRendering`` failed once a column grew);
      ``reset(options=...)`` refuses a won position, a state with cards in a column out of play or columns in play
      that do not match its stage, a joker standing for a card in a free cell, and a column deal with cards in a
      column the first deal does not lay out; ``redeal="shuffle"`` with ``deal="columns"`` deals one column fewer
      each stage from the first deal's columns (it dealt ``columns - 1`` in stage 2, more than the first deal).
      Also 2026-12-02: the observation space bounds each entry (``observation_high``) instead of 54 for all, which
      the stage of a game of more than 55 stages and the columns in play of a ``columns=None`` deal of more than 54
      columns exceeded; ``stages`` is at most 32767 and a ``columns=None`` deal at most 20 columns.
      Also 2026-12-02: ``render_mode="human"`` is the env's own (a window, as ``PokerSquares-v0`` opens), so a
      missing pygame is named with the extra to install; before, ``gym.make`` wrapped the env in Gymnasium's
      ``HumanRendering``, whose error told to install ``gymnasium[classic-control]``, and ``SoliterEnv`` refused it.
    """

    metadata = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 4}

    def __init__(
        self,
        variant: Any = "classic",
        reward_home: float = 1.0,
        reward_win: float = 10.0,
        reward_step: float = 0.0,
        max_steps: int | None = None,
        illegal_action: str = "raise",
        illegal_penalty: float = -10.0,
        render_mode: str | None = None,
        **overrides: Any,
    ) -> None:
        super().__init__()
        variant_fields = {f.name for f in dataclasses.fields(Variant)}
        unknown = sorted(set(overrides) - variant_fields)
        if unknown:  # one message listing both kinds of option: a misspelt env option is named with its fix
            env_options = [name for name, param in inspect.signature(SoliterEnv.__init__).parameters.items()
                           if name not in ("self", "variant")
                           and param.kind in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY)]  # not **overrides
            variant_options = sorted(variant_fields - {"name"})
            raise TypeError(f"unknown Soliter option(s) {unknown}: expected some of the env's options {env_options} "
                            f"or the variant's options {variant_options}")
        self.variant = get_variant(variant, **overrides)
        self.game = SoliterGame(self.variant)
        self.reward_home = check_number("reward_home", reward_home)
        self.reward_win = check_number("reward_win", reward_win)
        self.reward_step = check_number("reward_step", reward_step)
        self.illegal_penalty = check_number("illegal_penalty", illegal_penalty)
        if max_steps is None:
            max_steps = 20 * len(self.game.deck)
        if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)) or max_steps < 1:
            raise ValueError(f"max_steps={max_steps!r}: expected a positive integer")
        self.max_steps = int(max_steps)
        self.illegal_action = check_choice("illegal_action", illegal_action, ILLEGAL_ACTIONS)
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])
        self._renderer = None
        if self.render_mode == "human":  # now, so that a missing Pillow or pygame is named before any game
            self._renderer = self._new_renderer()
        self.action_space = spaces.Discrete(self.game.num_actions)
        size = observation_size(self.game)
        self.observation_space = spaces.Box(-1, observation_high(self.game), shape=(size,), dtype=np.int16)
        self.state: SoliterState | None = None
        self.steps = 0
        self._done = False
        self._truncated = False
        self._mask = np.zeros(self.game.num_actions, dtype=np.int8)

    # ------------------------------------------------------------------ API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Deal a new game: shuffled with ``self.np_random``, or ``options["deal"]`` as given.

        Bad ``options`` raise before ``seed`` reseeds ``self.np_random``: a failed reset changes nothing."""
        seed = check_seed(seed)
        options = check_reset_options(options, ("deal", "state"))
        if options.get("state") is not None and options.get("deal") is not None:
            raise ValueError("options has both 'deal' and 'state': expected one of them (a deal starts a new game, a "
                             "state continues a position)")
        given = next((key for key in ("state", "deal") if options.get(key) is not None), None)
        state = None
        if given == "state":
            state = self.game.check_state(options["state"], "options['state']")
        elif given == "deal":
            state = self.game.init(options["deal"])  # checked now; its seed is drawn below, after reseeding
        if state is not None and self.game.is_won(state):
            raise ValueError(f"options[{given!r}] is already won (all {self.game.num_real} cards are home): a reset "
                             f"cannot end an episode; pass a position still to play")
        if state is not None and not self.game.action_mask(state).any():
            raise ValueError(f"options[{given!r}] has no legal move: the game is lost before it starts (a reset "
                             f"cannot end an episode); pass a position with a move")
        super().reset(seed=seed)
        if given == "deal":
            state = state._replace(seed=int(self.np_random.integers(2**31)))
        elif given is None:
            state = self.game.deal(self.np_random)
        mask = self.game.action_mask(state)
        skipped = 0
        while given is None and not mask.any() and skipped < _MAX_SKIPPED:
            skipped += 1  # lost before the first move: a reset cannot end the episode, so deal again
            state = self.game.deal(self.np_random)
            mask = self.game.action_mask(state)
        if not mask.any():
            raise RuntimeError(f"{skipped + 1} shuffled deals in a row had no legal move: the variant's options "
                               f"({self.game.variant.name!r}) leave no playable game")
        self.state = state
        self.steps = 0
        self._done = False
        self._truncated = False
        self._mask = mask
        info = self._info()
        info["skipped_deals"] = skipped
        if self.render_mode == "human":
            self.render()
        return encode_observation(self.game, state), info

    def step(self, action: Any):
        """Play one action: a move ``source * N + destination``, or the redeal.  An int (an ``IntEnum`` member too), a
        numpy integer or a one-element integer array; a bool is no action and is refused as an illegal one."""
        if self.state is None or self._done:
            raise gym.error.ResetNeeded("call reset() before step(): the episode is over or has not started")
        if isinstance(action, np.ndarray) and action.shape in ((), (1,)):
            action = action.reshape(-1)[0]
        if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
            action = operator.index(action)  # an int subclass (an IntEnum member) or a numpy integer: a plain int
        game = self.game
        if type(action) is not int or not 0 <= action < game.num_actions or not self._mask[action]:
            reason = game.why_illegal(self.state, action) or f"action {action!r} is not legal here"
            if self.illegal_action == "raise":
                raise IllegalMoveError(reason)
            self._done = True
            info = self._info()
            info["illegal_action"] = reason
            info["action_mask"] = np.zeros(game.num_actions, dtype=np.int8)
            if self.render_mode == "human":
                self.render()
            return encode_observation(game, self.state), self.illegal_penalty, True, False, info
        state, home = game.apply(self.state, action, check=False)
        self.state = state
        self.steps += 1
        won = game.is_won(state)
        reward = self.reward_step + self.reward_home * home + (self.reward_win if won else 0.0)
        self._mask = game.action_mask(state)
        terminated = won or not self._mask.any()
        truncated = not terminated and self.steps >= self.max_steps
        self._done = terminated or truncated
        self._truncated = truncated
        info = self._info()
        if terminated:  # a truncated game keeps the moves it still had
            info["action_mask"] = np.zeros(game.num_actions, dtype=np.int8)
        if self.render_mode == "human":
            self.render()
        return encode_observation(game, state), reward, terminated, truncated, info

    def _info(self) -> dict[str, Any]:
        state = self.state
        return {
            "action_mask": self._mask.copy(),
            "won": self.game.is_won(state),
            "cards_home": self.game.cards_home(state),
            "stage": state.stage,
            "steps": self.steps,
        }

    def action_masks(self) -> np.ndarray:
        """Legal actions as a bool array (the hook sb3-contrib's MaskablePPO calls)."""
        if self.state is None:
            raise gym.error.ResetNeeded("call reset() before action_masks()")
        if self._done and not self._truncated:
            return np.zeros(self.game.num_actions, dtype=bool)
        return self._mask.astype(bool)

    def render(self):
        """The position as text (``"ansi"``), an RGB array (``"rgb_array"``) or in a window (``"human"``)."""
        if not render_ready(self.render_mode, self.state is not None, self.metadata["render_modes"]):
            return None
        if self.render_mode == "ansi":
            return self.game.text(self.state) + "\n"
        from pokersquares_env.soliter.viewer import draw

        frame = draw(self.game, self.state)
        if self.render_mode != "human":
            return frame
        if self._renderer is None:  # closed, and shown again
            self._renderer = self._new_renderer()
        return self._renderer.show(frame)

    def _new_renderer(self):
        """The pygame window of ``render_mode="human"`` (opened at its first frame); an ``ImportError`` naming the
        extra to install where Pillow or pygame is missing."""
        return new_renderer("human", "Soliter-v0", self.metadata["render_fps"])

    def close(self) -> None:
        """Close the render window, if one is open (the env itself holds nothing else to release)."""
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
