"""Agents: the :class:`Agent` protocol, baselines, and :func:`make_agent` (spec string -> agent).

``PimcAgent`` (``smear_env.agents.pimc``) and checkpoint agents (``smear_env.agents.checkpoint``, numpy
only) are imported lazily by :func:`make_agent`, so importing this package stays light.
:func:`make_batched_agent` gives any agent spec in batched form (:class:`BatchedAgent`,
``smear_env.agents.batched``).
"""

from .base import Agent, CallableAgent, RandomAgent, has_view_fast_path
from .batched import BatchedAgent, PerSlotAgent
from .heuristic import HeuristicAgent
from .registry import can_vectorise, make_agent, make_batched_agent

__all__ = [
    "Agent", "BatchedAgent", "CallableAgent", "HeuristicAgent", "PerSlotAgent", "RandomAgent",
    "can_vectorise", "has_view_fast_path", "make_agent", "make_batched_agent",
]
