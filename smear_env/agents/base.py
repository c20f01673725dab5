"""The one agent interface used everywhere (PettingZoo loops, the single-seat env, evaluation, play).

An agent maps a player's observation -- the PettingZoo dict ``{"observation": ..., "action_mask": ...}``
-- to a legal action id. It is told when a game starts (its seat, the rules and a seeded generator)
and may keep memory for the rest of that game.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..config import SmearRules


@runtime_checkable
class Agent(Protocol):
    name: str

    def start_game(self, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        """Called before the first decision of each game."""
        ...

    def act(self, observation: dict[str, Any]) -> int:
        """A legal action id for this observation (its ``action_mask`` marks the legal ones)."""
        ...


class RandomAgent:
    """Uniform over the legal actions."""

    name = "random"

    def __init__(self) -> None:
        self._rng = np.random.default_rng(0)

    def start_game(self, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        self._rng = rng

    def act(self, observation: dict[str, Any]) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise ValueError("RandomAgent.act: the action mask has no legal action (is this agent to act?)")
        return int(legal[self._rng.integers(legal.size)])
