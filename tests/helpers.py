"""Small helpers shared by several test modules (importable as ``helpers``, see conftest.py)."""

from __future__ import annotations


def play_game(agent, game, deck):
    """Play ``deck`` to the end with ``agent`` (checking every cell is legal): ``(placements, score)``."""
    state = game.init(deck, validate=False)
    agent.reset()
    while not state.terminal:
        cell = agent.act(None, None, game, state.copy())
        assert cell in game.legal_cells(state)
        game.apply(state, cell)
    return list(state.placements), game.score(state)
