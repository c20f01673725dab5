"""The heuristic in batched form (placeholder: row by row until the numpy rules land)."""

from __future__ import annotations

import numpy as np

from ..config import SmearRules
from .batched import _check_start, _SlotTable, check_batch
from .heuristic import HeuristicAgent


class BatchedHeuristicAgent:
    """:class:`~smear_env.agents.heuristic.HeuristicAgent` for many rows."""

    vectorised = False

    def __init__(self, rules: SmearRules | None = None, name: str = "heuristic") -> None:
        self.name = name
        self.rules = rules if rules is not None else SmearRules()
        self._slots = _SlotTable(name)

    def start_game(self, slot: int, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        _check_start(self.name, seat, rules, rng)
        agent = HeuristicAgent(rules)
        agent.start_game(seat, rules, rng)
        self._slots.set(slot, agent)

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, slots: np.ndarray) -> np.ndarray:
        from ..observation import decode_batch

        obs, mask, slots = check_batch(self.name, obs, mask, slots)
        agents = [self._slots.get(s) for s in slots.tolist()]
        views = decode_batch(obs, mask)
        return np.array([a.act_view(v) for a, v in zip(agents, views, strict=True)], dtype=np.int64)

    def close(self) -> None:
        pass
