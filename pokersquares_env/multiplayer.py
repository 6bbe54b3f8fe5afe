"""Multiplayer Poker Squares on PettingZoo: one caller announces the cards, every player lays them on a hidden grid.

The party game of the sources (Russian and Finnish texts in ``shared/seeds``):
one player shuffles a deck and announces its cards one at a time; every
player takes the same card from their own sorted deck and places it on their
own 5x5 grid, out of sight of the others.  The highest score wins.  Several
rounds may be played with a new shuffle each, scores summed; or each round
may give match points by rank (lowest 0, next 1, ...); or play may go on
until someone reaches a target such as 100, 200 or 500.

:func:`parallel_env` builds the PettingZoo ``ParallelEnv``; :func:`env` the
AEC form (PettingZoo's ``parallel_to_aec``, with each agent's action checked
at its own step).  pettingzoo is an optional dependency:
``pip install "pokersquares_env[multiplayer]"``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from gymnasium.utils import seeding

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
from pokersquares_env.cards import EMPTY, NUM_CODES
from pokersquares_env.core import NUM_CELLS, GameState, IllegalActionError, PokerSquaresGame, Rules
from pokersquares_env.env import CARD_FEATURES, CARD_OFFSET, OBS_SIZE, encode_observation, mask_array
from pokersquares_env.scoring import HandCategory, point_system, points_level

try:  # optional extra: the module imports without it, building an env needs it
    from pettingzoo import ParallelEnv as _ParallelEnv
    from pettingzoo.utils.conversions import parallel_to_aec_wrapper as _ParallelToAEC
except ImportError:  # pragma: no cover - exercised only where pettingzoo is missing
    _ParallelEnv = _ParallelToAEC = object

__all__ = ["PokerSquaresAECEnv", "PokerSquaresParallelEnv", "env", "parallel_env", "rank_points"]

MATCH_SCORINGS = ("total", "ranking")
_MISSING = 'PokerSquares multiplayer needs pettingzoo: pip install "pokersquares_env[multiplayer]"'


def _require_pettingzoo() -> None:
    if _ParallelEnv is object:
        raise ImportError(_MISSING)



def rank_points(scores: dict[str, float]) -> dict[str, float]:
    """Match points of one round by rank: the lowest score 0, the next 1, and so on; tied players share their places' points.

    Scores equal to 9 decimals tie (float sums of a table such as 0.1, 0.2, ... differ in their last bits).
    ``scores``: a mapping of player -> score (a list is refused: its scores would be read as players)."""
    if not isinstance(scores, Mapping):
        raise TypeError(f"rank_points(scores={scores!r}): expected a mapping of player -> score, e.g. "
                        f"{{'player_0': 120, 'player_1': 95}}")
    for agent, score in scores.items():
        if isinstance(score, (bool, np.bool_)) or not isinstance(score, (int, float, np.integer, np.floating)) \
                or not math.isfinite(_as_float(score)):
            raise ValueError(f"rank_points: scores[{agent!r}]={score!r}: expected a finite number")
    order = sorted(scores, key=lambda a: points_level(scores[a]))
    points: dict[str, float] = {}
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and points_level(scores[order[j + 1]]) == points_level(scores[order[i]]):
            j += 1
        shared = sum(range(i, j + 1)) / (j - i + 1)  # places i..j share their points equally
        for a in order[i : j + 1]:
            points[a] = shared
        i = j + 1
    return points


def parallel_env(
    num_players: int = 2,
    scoring: Any = "american",
    rounds: int | None = 1,
    match_scoring: str = "total",
    target: float | None = None,
    render_mode: str | None = None,
    **rules: Any,
) -> "PokerSquaresParallelEnv":
    """The multiplayer game as a PettingZoo ``ParallelEnv`` (see :class:`PokerSquaresParallelEnv`)."""
    _require_pettingzoo()
    return PokerSquaresParallelEnv(
        num_players=num_players,
        scoring=scoring,
        rounds=rounds,
        match_scoring=match_scoring,
        target=target,
        render_mode=render_mode,
        **rules,
    )


def env(*args: Any, **kwargs: Any):
    """The multiplayer game as a PettingZoo AEC env (:class:`PokerSquaresAECEnv` around :func:`parallel_env`, which
    takes the same arguments, positional or by name: ``env(3)`` is ``env(num_players=3)``), order-enforced as
    PettingZoo's ``parallel_to_aec`` returns it."""
    _require_pettingzoo()
    from pettingzoo.utils.wrappers import OrderEnforcingWrapper

    return OrderEnforcingWrapper(PokerSquaresAECEnv(parallel_env(*args, **kwargs)))



def _as_float(value: Any) -> float:
    """``float(value)``, infinite for an int beyond a float's range (which ``float`` refuses with an OverflowError)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf

class PokerSquaresAECEnv(_ParallelToAEC):
    """The AEC form of :class:`PokerSquaresParallelEnv`: the agents move in turn, and the cycle's last move plays the
    simultaneous step.

    PettingZoo's plain ``parallel_to_aec`` buffers every action until the cycle's last agent moves, so an illegal
    action would be raised only then, from another agent's turn, and stay buffered: every later step would raise
    until a reset.
    Here, under ``illegal_action="raise"``, each action is checked against its agent's board at its own step, and
    an illegal one raises ``IllegalActionError`` naming the agent before anything is buffered: the same agent is
    still to move, and the match goes on from where it was.  Under ``"penalty"`` the actions are buffered as they
    come and the parallel step judges them together, so, as in the parallel env, every player who moved illegally
    in the cycle is penalised and forfeits.  Should the parallel step raise all the same, the last agent is still
    to move and its action is not kept.
    """

    def step(self, action: Any) -> None:
        """Buffer the selected agent's action (checked first under ``illegal_action="raise"``); the cycle's last
        action plays the parallel step."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                # PettingZoo's wrapper drops the agent's buffer before it asserts None, which broke the env for good
                raise ValueError(f"{agent} is {'terminated' if self.terminations[agent] else 'truncated'}: the only "
                                 f"action it takes is None (env.step(None) removes it), got {action!r}")
            return super().step(action)
        par = self.env
        if par.illegal_action == "raise":
            reason = par.game.why_illegal(par.states[agent], _as_cell(action))
            if reason is not None:
                raise IllegalActionError(f"{agent}: {reason}")
        try:
            super().step(action)
        except BaseException:
            # the parallel step checks every action before it changes anything: drop the one just buffered, so the
            # agent, still selected, moves again on an unchanged match
            if self.agent_selection == agent and agent in self._actions:
                self._actions[agent] = None
            raise
        return None


def _as_cell(action: Any) -> Any:
    """A NumPy integer or one-element array as a plain ``int`` (what ``why_illegal`` and ``apply`` take); anything
    else as given, for ``why_illegal`` to name."""
    if isinstance(action, np.ndarray) and action.shape in ((), (1,)):
        action = action.reshape(-1)[0]
    if isinstance(action, np.integer):
        action = int(action)
    return action


class PokerSquaresParallelEnv(_ParallelEnv):
    """Multiplayer Poker Squares: the same announced cards for everyone, each on a hidden board.

    ## Description
    Agents ``player_0 .. player_{n-1}`` play simultaneously.  Each step one
    card of a shuffled deck is announced; every player places it on a free
    cell of its own 5x5 grid.  After 25 steps the round is scored per player
    under the point system.  A match is ``rounds`` rounds (a new shuffle
    each) or, with ``target``, goes on until the round in which someone's
    standing reaches the target.  All single-player rules apply: jokers,
    ``placement="adjacent"`` with ``first_cell``, any point system.

    ## Action Space
    ``Discrete(25)`` per agent: the cell for the announced card, row-major.

    ## Observation Space
    ``Dict(observation=Box(0, 1, (522,), uint8), action_mask=Box(0, 1, (25,), int8))``
    per agent.  ``observation`` is ``PokerSquares-v0``'s vector of the agent's
    own board, the announced card and the unseen cards; other players' boards
    are never in it.  ``action_mask`` marks the legal cells.

    ## Rewards
    Each step, the points of the lines the agent's placement completes on its
    own board (so a round's rewards add up to its score).  Match points and
    standings are reported in the infos, not as rewards.

    ## Episode End
    Every agent terminates together when the match ends.  An illegal action
    raises ``IllegalActionError`` (default) or, with
    ``illegal_action="penalty"``, gives the offender ``illegal_penalty`` and
    ends the match for everyone.  The moves are simultaneous, so every
    player who moved illegally in that step is an offender.  Offenders
    forfeit: ``winner`` and ``winners`` are the leaders among the other
    players by the standings of the finished rounds (among everyone if all
    offended), and the final ``standings`` list the offenders last, in
    their own order by the standings (this library's reading, since the
    sources have no illegal moves).  Never truncated.

    ## Information
    Every step, per agent: ``action_mask`` (int8 (25,)), ``card`` (the
    announced card, the same for all; -1 when over), ``round`` (1-based),
    ``totals`` (everyone's summed scores of finished rounds),
    ``match_points`` (everyone's ranking points so far), ``standings`` (the
    agents in order, best first, by ``match_scoring``; tied agents in seat
    order).  Scores and standings equal to 9 decimals tie, and a standing
    equal to ``target`` to 9 decimals reaches it: they are float sums, which
    under a table such as 0.1, 0.2, ... differ in their last bits.  On the step that
    ends a round also ``score``, ``board`` and ``hands`` of the agent's own
    board, ``round_scores`` (everyone's score of that round) and
    ``round_ended`` (its number; ``round`` is then already the next one, except
    after the match's last round, when the two are equal).  At the
    end of the match also ``winner`` (the leading agent, or ``None`` on a tie)
    and ``winners`` (every leader).

    ## Arguments
    * ``num_players``: 2 or more (1 allowed: the solitaire).
    * ``scoring``: ``"american"``, ``"english"``, a mapping, a JSON path or a ``PointSystem``.
    * ``rounds``: rounds in the match (default 1); ``None`` for no limit (needs ``target``).
    * ``match_scoring``: ``"total"`` (summed scores decide) or ``"ranking"``
      (each round gives the lowest score 0 match points, the next 1, ...,
      tied players share the points of their places; the sum decides).
    * ``target``: end the match after the round in which some standing
      (summed score, or match points under ``"ranking"``) reaches it.  With
      ``rounds=None`` it must be reachable: one player under ``"ranking"``
      (always 0 match points) or, under ``"total"``, a table without a
      positive value for a hand the rules allow (``five_of_a_kind`` needs
      ``jokers``) is refused.  Reachable by some play, not by every play:
      under a table with negative values totals can fall round after round,
      and nothing truncates a match, so pass a cap too (``rounds=100``).
    * ``render_mode``: ``None``, ``"ansi"``, ``"rgb_array"`` or ``"human"`` (every board, as a spectator
      sees them; ``pokersquares_env.render.multiplayer_frames`` gives one frame per player).
    * ``**rules``: ``jokers``, ``placement``, ``first_cell`` (see ``Rules``),
      ``illegal_action`` (``"raise"`` or ``"penalty"``), ``illegal_penalty`` (default -10).

    ## Version History
    * v0: first release.
    """

    metadata = {
        "render_modes": ["ansi", "rgb_array", "human"], "name": "pokersquares_multiplayer_v0", "is_parallelizable": True,
        "render_fps": 4,
    }

    def __init__(
        self,
        num_players: int = 2,
        scoring: Any = "american",
        rounds: int | None = 1,
        match_scoring: str = "total",
        target: float | None = None,
        render_mode: str | None = None,
        illegal_action: str = "raise",
        illegal_penalty: float = -10.0,
        **rules: Any,
    ) -> None:
        _require_pettingzoo()
        if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)) or num_players < 1:
            raise ValueError(f"num_players={num_players!r}: expected an integer >= 1")
        if match_scoring not in MATCH_SCORINGS:
            raise ValueError(f"match_scoring={match_scoring!r}: expected 'total' or 'ranking'")
        if rounds is not None and (isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or rounds < 1):
            raise ValueError(f"rounds={rounds!r}: expected a positive integer, or None for no limit with a target")
        if target is not None and (isinstance(target, bool) or not isinstance(target, (int, float, np.integer, np.floating))
                                   or not 0 < target < math.inf or not math.isfinite(_as_float(target))):
            raise ValueError(f"target={target!r}: expected a positive finite number such as 100, 200 or 500, or None")
        if rounds is None and target is None:
            raise ValueError("rounds=None (no limit) needs a target: pass target=100, 200 or 500, or a number of rounds")
        if target is not None and rounds == 1:
            raise ValueError(
                f"target={target!r} with rounds=1 would end the match after one round: "
                f"pass rounds=None (play until the target) or a larger cap"
            )
        check_choice("illegal_action", illegal_action, ILLEGAL_ACTIONS)
        check_render_mode(render_mode, self.metadata["render_modes"])
        unknown = set(rules) - {"jokers", "placement", "first_cell"}
        if unknown:
            raise TypeError(
                f"unknown rule options {sorted(unknown)}: expected jokers, placement, first_cell, "
                f"illegal_action or illegal_penalty"
            )
        self.rules = Rules(**rules)
        self.point_system = point_system(scoring)
        if rounds is None:  # the target alone ends the match: it must be reachable
            if match_scoring == "ranking" and num_players == 1:
                raise ValueError(f"target={target!r} with match_scoring='ranking' and one player can never be "
                                 f"reached (a lone player ranks last, 0 match points, every round): pass a number "
                                 f"of rounds, match_scoring='total', or more players")
            # the best line a board can hold under the rules: five of a kind needs a joker
            best = max(HandCategory.possible(self.rules.jokers), key=lambda c: self.point_system.points[c])
            if match_scoring == "total" and self.point_system.points[best] <= 0:
                from pokersquares_env.text import fmt_points

                five = self.point_system.points[HandCategory.FIVE_OF_A_KIND]
                jokers = (f" with jokers=0 (five_of_a_kind, which scores {fmt_points(five)}, needs a joker)"
                          if five > 0 and not self.rules.jokers else "")
                raise ValueError(f"target={target!r} can never be reached under {self.point_system.name!r}, whose "
                                 f"best line scores {fmt_points(self.point_system.points[best])}{jokers}: pass a number of "
                                 f"rounds, a table with a positive value for a hand the rules allow, or jokers")
        self.game = PokerSquaresGame(self.rules, self.point_system)
        self.num_players = int(num_players)
        self.rounds = None if rounds is None else int(rounds)
        self.match_scoring = match_scoring
        self.target = target
        self.render_mode = render_mode
        if render_mode == "human":  # now: a missing Pillow or pygame is named when the env is made
            self._renderer = new_renderer("human", self.metadata["name"], self.metadata["render_fps"])
        self.illegal_action = illegal_action
        self.illegal_penalty = check_number("illegal_penalty", illegal_penalty)
        self.possible_agents = [f"player_{i}" for i in range(self.num_players)]
        self.agents: list[str] = []
        self.np_random, _ = seeding.np_random(None)
        # one space object per agent (seeding one agent's space leaves the others' samples alone)
        self._obs_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(0, 1, shape=(OBS_SIZE,), dtype=np.uint8),
                    "action_mask": spaces.Box(0, 1, shape=(NUM_CELLS,), dtype=np.int8),
                }
            )
            for agent in self.possible_agents
        }
        self._act_spaces = {agent: spaces.Discrete(NUM_CELLS) for agent in self.possible_agents}
        #: what :meth:`state` returns: every board, card codes (jokers 52, 53) and -1 for an empty cell
        self.state_space = spaces.Box(EMPTY, NUM_CODES - 1, shape=(self.num_players, NUM_CELLS), dtype=np.int64)
        self.states: dict[str, GameState] = {}
        self._offenders: list[str] = []  # who ended the match with an illegal action (render says so)
        self.round = 0
        self.totals: dict[str, float] = {}
        self.match_points: dict[str, float] = {}
        self.deck: tuple[int, ...] = ()
        self._given_decks: list[tuple[int, ...]] = []  # reset's deck options, one per round from round 1

    # the same objects on every call, as PettingZoo requires (stored once in __init__; no lru_cache, which would
    # keep every env alive for the life of the process)
    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of ``agent`` (alike for all; one object per agent)."""
        return self._space(self._obs_spaces, agent)

    def action_space(self, agent: str) -> spaces.Space:
        """The action space of ``agent`` (alike for all; one object per agent)."""
        return self._space(self._act_spaces, agent)

    def _space(self, spaces_by_agent: dict[str, spaces.Space], agent: str) -> spaces.Space:
        try:
            return spaces_by_agent[agent]
        except (KeyError, TypeError):
            raise ValueError(f"agent {agent!r}: expected one of {self.possible_agents}") from None

    # ------------------------------------------------------------------ match flow
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start a match: round 1, empty boards, and a fresh shuffle for each round.

        ``options["deck"]``: the first round's cards in draw order (as ``PokerSquares-v0``'s ``deck`` option: card
        strings or codes, at least 25 distinct cards of the rules' deck); ``options["decks"]``: one such deck per
        round, in order (rounds past the list are shuffled).  Every deck is checked before anything changes, so a
        refused reset leaves the match and the generator as they were.  Other keys are ignored with a warning
        naming them (PettingZoo's API test passes ``{"options": 1}``).
        """
        decks = self._reset_decks(options)
        seed = check_seed(seed)
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        self._given_decks = decks
        self.agents = list(self.possible_agents)
        self.round = 0
        self.totals = {a: 0.0 for a in self.agents}
        self.match_points = {a: 0.0 for a in self.agents}
        self._offenders = []
        self._start_round()
        infos = {a: self._info(a) for a in self.agents}
        if self.render_mode == "human":
            self.render()
        return {a: self._observe(a) for a in self.agents}, infos

    def _reset_decks(self, options: Any) -> list[tuple[int, ...]]:
        """The checked decks of ``reset(options=...)``, one per round from round 1 (see :meth:`reset`)."""
        options = check_reset_options(options, ("deck", "decks"), unknown="warn")
        deck, decks = options.get("deck"), options.get("decks")
        if deck is not None and decks is not None:
            raise ValueError("reset options 'deck' and 'decks' given together: pass the first round's deck as "
                             "'deck', or every round's in 'decks'")
        if deck is not None:
            return [self.game.check_deck(deck)]
        if decks is None:
            return []
        if not isinstance(decks, (Sequence, np.ndarray)) or isinstance(decks, (str, bytes)) or len(decks) == 0:
            raise ValueError(f"reset option decks={decks!r}: expected a non-empty list of decks, one per round in "
                             f"order")
        if self.rounds is not None and len(decks) > self.rounds:
            raise ValueError(f"reset option 'decks' holds {len(decks)} decks but the match has {self.rounds} "
                             f"round(s): expected at most {self.rounds}")
        checked = []
        for i, d in enumerate(decks):
            try:
                checked.append(self.game.check_deck(d))
            except TypeError as exc:
                raise TypeError(f"reset option 'decks', round {i + 1}: {exc}") from None
            except ValueError as exc:
                raise ValueError(f"reset option 'decks', round {i + 1}: {exc}") from None
        return checked

    def _start_round(self) -> None:
        self.round += 1
        given = self._given_decks
        self.deck = given[self.round - 1] if self.round <= len(given) else self.game.deal(self.np_random)
        self.states = {a: self.game.init(self.deck, validate=False) for a in self.agents}

    def _observe(self, agent: str) -> dict[str, np.ndarray]:
        state = self.states[agent]
        return {
            "observation": encode_observation(self.game, state),
            "action_mask": mask_array(self.game.legal_mask(state)),
        }

    def _standings(self, forfeit: Any = ()) -> list[str]:
        """The agents, best first (ties in seat order); the agents in ``forfeit`` last, as ``winner`` passes them
        over, in their own order by the standings."""
        key = self.totals if self.match_scoring == "total" else self.match_points
        return sorted(self.possible_agents,
                      key=lambda a: (a in forfeit, -points_level(key[a]), self.possible_agents.index(a)))

    def _info(self, agent: str, forfeit: Any = ()) -> dict[str, Any]:
        state = self.states[agent]
        return {
            "action_mask": mask_array(self.game.legal_mask(state)),
            "card": state.card,
            "round": self.round,
            "totals": dict(self.totals),
            "match_points": dict(self.match_points),
            "standings": self._standings(forfeit),
        }

    def step(self, actions: dict[str, Any]):
        """Every live agent places the announced card; returns PettingZoo's five dicts."""
        if not self.agents:
            raise ResetNeeded("call reset() before step(): the match is over or has not started")
        if not isinstance(actions, Mapping):
            raise TypeError(f"actions={actions!r}: expected a dict of one action per live agent {self.agents}")
        missing = [a for a in self.agents if a not in actions]
        extra = [a for a in actions if a not in self.agents]
        if missing or extra:
            def listed(keys: Any) -> str:  # by repr: keys of mixed types (0 and 'player_0') do not sort together
                return "[" + ", ".join(sorted(map(repr, keys))) + "]"

            wrong = "; ".join(f"{what}: {listed(keys)}" for what, keys in (("missing", missing), ("unexpected", extra))
                              if keys)
            raise ValueError(f"actions for {listed(actions)}: expected exactly the live agents {self.agents} ({wrong})")
        cells: dict[str, int] = {}
        offences: dict[str, str] = {}  # the moves are simultaneous: every illegal one counts
        for agent in self.agents:
            action = _as_cell(actions[agent])
            reason = self.game.why_illegal(self.states[agent], action)
            if reason is not None:
                if self.illegal_action == "raise":
                    raise IllegalActionError(f"{agent}: {reason}")
                offences[agent] = reason
            cells[agent] = action
        if offences:
            result = self._illegal_end(offences)
            if self.render_mode == "human":
                self.render()
            return result
        rewards = {a: float(self.game.apply(self.states[a], cells[a])[0]) for a in self.agents}
        round_end: dict[str, dict[str, Any]] = {}
        over = False
        if all(s.terminal for s in self.states.values()):
            round_end, over = self._end_round()
        terminations = {a: over for a in self.agents}
        truncations = {a: False for a in self.agents}
        if over:
            infos = {a: {**self._info(a), **round_end[a], **self._result()} for a in self.agents}
            for info in infos.values():
                info["action_mask"] = np.zeros(NUM_CELLS, dtype=np.int8)
            obs = {a: self._observe(a) for a in self.agents}
            self.agents = []
        else:
            if round_end:
                self._start_round()
            obs = {a: self._observe(a) for a in self.agents}
            infos = {a: {**self._info(a), **round_end.get(a, {})} for a in self.agents}
        if self.render_mode == "human":
            self.render()
        return obs, rewards, terminations, truncations, infos

    def _end_round(self) -> tuple[dict[str, dict[str, Any]], bool]:
        scores = {a: self.game.score(self.states[a]) for a in self.agents}
        for a, p in rank_points(scores).items():
            self.match_points[a] += p
        for a, s in scores.items():
            self.totals[a] += s
        per_agent = {
            a: {
                "score": scores[a],
                "board": list(self.states[a].board),
                "hands": self.game.hands(self.states[a]),
                "round_scores": dict(scores),
                "round_ended": self.round,
            }
            for a in self.agents
        }
        standing = self.totals if self.match_scoring == "total" else self.match_points
        over = (self.rounds is not None and self.round >= self.rounds) or (
            self.target is not None and max(points_level(v) for v in standing.values()) >= points_level(self.target)
        )
        return per_agent, over

    def _result(self, forfeit: Any = ()) -> dict[str, Any]:
        """``winner`` and ``winners``: the leaders by the standings (among the others when the agents in
        ``forfeit`` forfeit; among everyone when all of them do)."""
        standing = self.totals if self.match_scoring == "total" else self.match_points
        left = [a for a in self.possible_agents if a not in forfeit] or list(self.possible_agents)
        best = max(points_level(standing[a]) for a in left)
        winners = [a for a in left if points_level(standing[a]) == best]
        return {"winner": winners[0] if len(winners) == 1 else None, "winners": winners}

    def _illegal_end(self, offences: dict[str, str]):
        """End the match: each offender gets ``illegal_penalty`` and its reason, and forfeits."""
        rewards = {a: (self.illegal_penalty if a in offences else 0.0) for a in self.agents}
        obs = {a: self._observe(a) for a in self.agents}
        infos = {a: {**self._info(a, forfeit=offences), **self._result(forfeit=offences)} for a in self.agents}
        for a in self.agents:  # the match is over: nothing is legal and no card is announced (as the single env)
            obs[a]["action_mask"][:] = 0
            obs[a]["observation"][CARD_OFFSET:CARD_OFFSET + CARD_FEATURES] = 0
            infos[a]["action_mask"] = np.zeros(NUM_CELLS, dtype=np.int8)
            infos[a]["card"] = -1
        for agent, reason in offences.items():
            infos[agent]["illegal_action"] = reason
        self._offenders = list(offences)
        terminations = {a: True for a in self.agents}
        truncations = {a: False for a in self.agents}
        self.agents = []
        return obs, rewards, terminations, truncations, infos

    def state(self) -> np.ndarray:
        """Every board (the global state hidden from the players): (num_players, 25) codes, -1 empty."""
        if not self.states:
            return np.full((self.num_players, NUM_CELLS), EMPTY, dtype=np.int64)
        return np.array([self.states[a].board for a in self.possible_agents], dtype=np.int64)

    def render(self):
        """Every board as text (``render_mode="ansi"``), as a spectator sees them."""
        if not render_ready(self.render_mode, bool(self.states), self.metadata["render_modes"]):
            return None
        # a match ended by an illegal action: said, and no cell shown as playable (none is), as the single env does
        ended = f"match over: ended by an illegal action of {', '.join(self._offenders)}" if self._offenders else None
        if self.render_mode != "ansi":
            from pokersquares_env import render as _render

            if getattr(self, "_renderer", None) is None:
                self._renderer = new_renderer(self.render_mode, self.metadata["name"], self.metadata["render_fps"])
            frame = _render.draw_multiplayer(
                self.game, {a: self.states[a] for a in self.possible_agents}, totals=self.totals,
                match_points=self.match_points, round=self.round, ended=ended,
            )
            return self._renderer.show(frame)
        from pokersquares_env.text import board_text, fmt_points

        parts = [f"round {self.round}"]
        for a in self.possible_agents:  # fmt_points: 1234567, not 1.23457e+06, as :g printed totals
            parts.append(f"== {a} (total {fmt_points(self.totals[a])}, match points "
                         f"{fmt_points(self.match_points[a])})")
            # after an illegal ending no card is to be placed, and no cell is playable
            parts.append(board_text(self.game, self.states[a], card=ended is None,
                                    legal=ended is None and self.game.rules.restricts(len(self.states[a].placements))))
        if ended:
            parts.append(ended)
        return "\n".join(parts)

    def close(self) -> None:
        """Close the render window, if any."""
        if getattr(self, "_renderer", None) is not None:
            self._renderer.close()
            self._renderer = None
