"""Agents: the :class:`Agent` protocol, baselines, and :func:`make_agent` (spec string -> agent).

``PimcAgent`` (``smear_env.agents.pimc``) and checkpoint agents (``smear_env.agents.checkpoint``, numpy
only) are imported lazily by :func:`make_agent`, so importing this package stays light.
"""

from .base import Agent, CallableAgent, RandomAgent, has_view_fast_path
from .heuristic import HeuristicAgent
from .registry import make_agent

__all__ = ["Agent", "CallableAgent", "HeuristicAgent", "RandomAgent", "has_view_fast_path", "make_agent"]
