"""Stand-in for ``smear_env.agents.batched`` (the batched agent interface, BATCHED_API.md) until that
module lands: the same names, only ``random`` vectorised, the per-slot fallback for every other spec.
Delete this module at merge (``smear_env.evaluation.batched`` imports the real one first)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..agents.base import Agent
from ..config import SmearRules
from ..infoset import PlayerView  # noqa: F401  (the fallback's act_view path decodes views)


class BatchedRandom:
    """Per-slot generators; row i draws exactly what ``RandomAgent.act`` draws for that slot."""

    name = "random"
    vectorised = True

    def __init__(self) -> None:
        self._rngs: dict[int, np.random.Generator] = {}

    def start_game(self, slot: int, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        self._rngs[int(slot)] = rng

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, slots: np.ndarray) -> np.ndarray:
        out = np.empty(len(slots), dtype=np.int64)
        for i, slot in enumerate(slots.tolist()):
            legal = np.flatnonzero(mask[i])
            if legal.size == 0:
                raise ValueError(f"agent {self.name!r}: row {i} has no legal action")
            out[i] = legal[self._rngs[slot].integers(legal.size)]
        return out

    def close(self) -> None:
        pass


class PerSlotAgent:
    """Fallback: one per-seat Agent per slot (created lazily by ``factory``), called row by row."""

    vectorised = False

    def __init__(self, factory: Callable[[], Agent], name: str) -> None:
        self._factory = factory
        self.name = name
        self._agents: dict[int, Agent] = {}

    def start_game(self, slot: int, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        agent = self._agents.get(int(slot))
        if agent is None:
            agent = self._agents[int(slot)] = self._factory()
        agent.start_game(seat, rules, rng)

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, slots: np.ndarray) -> np.ndarray:
        out = np.empty(len(slots), dtype=np.int64)
        for i, slot in enumerate(slots.tolist()):
            if not mask[i].any():
                raise ValueError(f"agent {self.name!r}: row {i} has no legal action")
            out[i] = self._agents[slot].act({"observation": obs[i], "action_mask": mask[i].astype(np.int8)})
        return out

    def close(self) -> None:
        for a in self._agents.values():
            close = getattr(a, "close", None)
            if callable(close):
                close()
        self._agents.clear()


def make_batched_agent(spec: str, rules: SmearRules | None = None) -> Any:
    from ..agents.registry import make_agent

    rules = rules if rules is not None else SmearRules()
    name = make_agent(spec, rules).name  # checks the spec
    if spec.strip() == "random":
        return BatchedRandom()
    return PerSlotAgent(lambda: make_agent(spec, rules), name)


def can_vectorise(spec: str) -> bool:
    return isinstance(spec, str) and spec.strip() == "random"
