"""The one agent interface used everywhere (PettingZoo loops, the single-seat env, evaluation, play).

An agent maps a player's observation -- the PettingZoo dict ``{"observation": ..., "action_mask": ...}``
-- to a legal action id. It is told when a game starts (its seat, the rules and a seeded generator)
and may keep memory for the rest of that game.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from ..core.config import SmearRules

if TYPE_CHECKING:  # pragma: no cover
    from ..engine.infoset import PlayerView


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

    def act_view(self, view: PlayerView) -> int:
        """Optional fast path (see :func:`has_view_fast_path`): same draw as :meth:`act` on the same state."""
        legal = view.legal_actions
        if not legal:
            raise ValueError("RandomAgent.act_view: the view has no legal action (is this agent to act?)")
        return int(legal[self._rng.integers(len(legal))])


class CallableAgent:
    """Adapter: an agent from a plain function ``fn(observation_dict) -> action`` (no memory, no rng)."""

    def __init__(self, fn: Callable[[dict[str, Any]], int], name: str = "callable") -> None:
        if not callable(fn):
            raise TypeError(f"CallableAgent needs a callable, not {type(fn).__name__}")
        self._fn = fn
        self.name = name

    def start_game(self, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        pass

    def act(self, observation: dict[str, Any]) -> int:
        return int(self._fn(observation))


def has_view_fast_path(agent: Any) -> bool:
    """Whether ``agent`` offers ``act_view(relative_view) -> int``: an optional extension of the protocol
    for agents that reason on the decoded :class:`~smear_env.engine.infoset.PlayerView` anyway. It must return
    exactly what ``act(observe(game, seat))`` returns (``view`` is ``view_of(game, seat).relative()``,
    which equals ``decoding.decode(obs, mask)``); evaluation uses it to skip encoding."""
    return callable(getattr(agent, "act_view", None))
