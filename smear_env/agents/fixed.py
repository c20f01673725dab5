"""Known-answer agents: fixed, trivially exploitable rules, for checking that a learned best response finds
an exploit (:mod:`training.exploit`, ``tests/test_exploit.py``).

* ``passer`` -- :class:`PasserAgent`: the legal action with the lowest id at every decision. By the action
  layout (:mod:`smear_env.core.actions`) that is: pass whenever passing is legal (a stuck dealer, R8, bids the
  lowest bid), name the first legal trump suit, discard and play the legal card with the lowest card id.
  It never contests the auction, so an opponent that bids on its good hands takes every contract.

Deterministic (no generator draws); it keeps nothing between decisions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.config import SmearRules

if TYPE_CHECKING:  # pragma: no cover
    from ..engine.infoset import PlayerView

__all__ = ["PasserAgent"]


class PasserAgent:
    """The lowest legal action id at every decision (see the module docstring)."""

    name = "passer"

    def start_game(self, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        pass

    def act(self, observation: dict[str, Any]) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise ValueError("PasserAgent.act: the action mask has no legal action (is this agent to act?)")
        return int(legal[0])

    def act_view(self, view: PlayerView) -> int:
        """Same choice as :meth:`act` from the decoded view (the evaluator's fast path)."""
        legal = view.legal_actions
        if not legal:
            raise ValueError("PasserAgent.act_view: the view has no legal action (is this agent to act?)")
        return int(min(legal))


