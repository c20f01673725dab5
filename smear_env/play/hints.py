"""Hints: what other agents would do in a seat's place, with their probabilities where they have them.

A hint agent sees exactly what the seat sees (:func:`smear_env.table.agent_action` on the seat's
view). A checkpoint agent (any agent with a ``policy.logits(obs, mask)``) also gives its probability for
every legal action (the masked softmax of its logits); the others give their choice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..actions import action_name
from ..agents.base import Agent
from ..config import SmearRules
from ..game import Game
from ..table import agent_action


def action_probabilities(agent: Any, observation: dict[str, Any]) -> dict[int, float] | None:
    """A checkpoint agent's probability for each legal action of ``observation`` (the masked softmax of its
    policy logits), or ``None`` for an agent without a policy."""
    policy = getattr(agent, "policy", None)
    logits_fn = getattr(policy, "logits", None)
    if not callable(logits_fn):
        return None
    mask = np.asarray(observation["action_mask"])
    obs = np.asarray(observation["observation"])
    logits = np.asarray(logits_fn(obs[None], mask[None])[0], dtype=np.float64)
    legal = np.flatnonzero(mask)
    z = logits[legal] - logits[legal].max()
    p = np.exp(z)
    p /= p.sum()
    return {int(a): float(q) for a, q in zip(legal, p, strict=True)}


def probabilities_at(agent: Any, game: Game, seat: int) -> dict[int, float] | None:
    """:func:`action_probabilities` for ``seat`` in ``game`` (its own observation only)."""
    if not callable(getattr(getattr(agent, "policy", None), "logits", None)):
        return None
    from ..observation import observe

    return action_probabilities(agent, observe(game, seat))


class Hinter:
    """Agents built from ``specs`` (separate from the players), asked for advice on a seat's decision."""

    def __init__(self, specs: Sequence[str], rules: SmearRules, seed: int | None = None) -> None:
        from ..agents.registry import make_agent

        self.rules = rules
        self.agents: list[Agent] = [make_agent(s, rules) for s in specs]
        self._rng = np.random.default_rng(seed)
        self._started: dict[int, int] = {}

    def hint(self, game: Game, seat: int) -> list[dict[str, Any]]:
        """For each hint agent: ``{"agent", "id", "name", "probabilities"}``; ``probabilities`` lists the
        legal actions by decreasing probability (``[{"id", "name", "p"}]``) or is None."""
        out = []
        for i, agent in enumerate(self.agents):
            if self._started.get(i) != seat:  # (re)start for this seat
                agent.start_game(seat, self.rules, np.random.default_rng(self._rng.integers(2**63)))
                self._started[i] = seat
            action = int(agent_action(agent, game, seat))
            probs = probabilities_at(agent, game, seat)
            out.append({
                "agent": agent.name,
                "id": action,
                "name": action_name(action),
                "probabilities": None if probs is None else [
                    {"id": a, "name": action_name(a), "p": round(p, 4)}
                    for a, p in sorted(probs.items(), key=lambda kv: -kv[1])
                ],
            })
        return out
