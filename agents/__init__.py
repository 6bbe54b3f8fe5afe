"""Poker Squares agents and the evaluation harness.

* :class:`Agent` -- the one policy interface (``reset``, ``act``, ``action_values``).
* :func:`make_agent` -- an agent from a spec such as ``"mc:rollouts=200"`` or ``"ppo:PATH"``;
  :func:`available_agents` lists the names, :func:`register_agent` adds one.
* :func:`agents.evaluation.evaluate` -- common-deal evaluation of several agents.
"""

from agents.base import Agent
from agents.registry import available_agents, make_agent, register_agent

__all__ = ["Agent", "available_agents", "make_agent", "register_agent"]
