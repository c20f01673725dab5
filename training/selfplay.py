"""The opponent pool (frozen snapshots of the learner + baseline agents) and the table seating.

Each game the learner's team (partner = current policy) meets an opponent team drawn from
``selfplay.opponents``: ``"self"`` (current policy in all four seats), ``"snapshot"`` (a frozen past policy,
uniform over the pool) or an agent spec of :func:`smear_env.agents.registry.make_agent`.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from smear_env.agents.base import Agent
from smear_env.agents.registry import make_agent
from smear_env.core.config import SmearRules

SELF = "self"
SNAPSHOT = "snapshot"


class OpponentPool:
    """Frozen snapshots (policy modules, eval mode) and the opponent distribution."""

    def __init__(self, opponents: dict[str, float], pool_size: int, rules: SmearRules,
                 rng: np.random.Generator) -> None:
        self.names = list(opponents)
        p = np.array([opponents[k] for k in self.names], dtype=np.float64)
        self.probs = p / p.sum()
        self.pool_size = pool_size
        self.rules = rules
        self.rng = rng
        self.snapshots: list[tuple[int, Any]] = []  # (step, frozen policy)
        for name in self.names:  # fail fast on a bad spec
            if name not in (SELF, SNAPSHOT):
                make_agent(name, rules)

    def add_snapshot(self, step: int, policy: Any) -> None:
        frozen = copy.deepcopy(policy).eval()
        for prm in frozen.parameters():
            prm.requires_grad_(False)
        self.snapshots.append((step, frozen))
        if len(self.snapshots) > self.pool_size:
            self.snapshots.pop(0)

    def draw(self) -> tuple[str, int]:
        """(kind, snapshot index): kind is "self", "snapshot" or an agent spec."""
        name = self.names[int(self.rng.choice(len(self.names), p=self.probs))]
        if name == SNAPSHOT:
            if not self.snapshots:
                return SELF, -1
            return SNAPSHOT, int(self.rng.integers(len(self.snapshots)))
        return name, -1

    def new_agent(self, spec: str) -> Agent:
        return make_agent(spec, self.rules)
