"""Game-aware search: the chance of winning the game from a score, as a search's objective.

The rollout search (:mod:`smear_env.agents.rollout`) values an action by the hand's score difference (R17),
as the training reward does. A game is won at the target score (R18-R20), so a point is worth more at 13-13
than at 0-0, and a safe pass can be worth more than a likely contract when the other team is about to go
out. :class:`WinProbability` holds ``P(own team wins the game | own score, other score, who deals)`` at the
start of a hand: a small numpy MLP fitted by the ``winprob`` stage on games of chosen policies (for
a search that models the heuristic as the other team: games of its own policy against the heuristic). Called
as a rollout objective (``play_out(..., value=model)``), a hand that ends the game is worth its result (1 or
0), a hand that does not is worth the model's chance of winning from the new score with the new dealer.

Files are smear-rl checkpoint files of ``kind`` ``winprob`` (safetensors and JSON metadata, never pickle),
checked against the rules they are used with (the target score, the scoring options).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..core.config import SmearRules
from .checkpoint import CheckpointError, mlp_layers, read_model_file

__all__ = ["KIND", "WinProbability", "load_winprob"]

KIND = "winprob"
"""The ``kind`` of a win-probability file's metadata."""
INPUTS = 3
"""Inputs: own score / target, other score / target, 1 if the own team deals the hand."""


class WinProbability:
    """``P(win)`` of a team at the start of a hand (see the module docstring)."""

    def __init__(self, weights: dict[str, np.ndarray], network: dict[str, Any], target_score: int,
                 where: str = "win-probability model") -> None:
        """``weights``: ``winprob.<i>.weight`` / ``.bias`` per layer (tanh between layers, one output logit);
        ``network``: ``hidden_sizes``."""

        self.network = network
        self.target = float(target_score)
        self.layers = mlp_layers(weights, "winprob", network, INPUTS, 1, where, dtype=np.float64)

    def prob(self, own: np.ndarray, other: np.ndarray, own_deals: np.ndarray) -> np.ndarray:
        """The own team's chance of winning from scores ``own``, ``other`` when it deals (``own_deals``)."""
        x = np.stack([np.asarray(own, float) / self.target, np.asarray(other, float) / self.target,
                      np.asarray(own_deals, float)], axis=1)
        for w, b in self.layers[:-1]:
            x = np.tanh(x @ w.T + b)
        w, b = self.layers[-1]
        return 1.0 / (1.0 + np.exp(-(x @ w.T + b)[:, 0]))

    def team0(self, scores: np.ndarray, dealer: np.ndarray) -> np.ndarray:
        """Team 0's (seats 0 and 2) chance of winning from ``scores`` (k, 2) with ``dealer`` (k,) dealing."""
        return self.prob(scores[:, 0], scores[:, 1], (dealer & 1) == 0)

    def __call__(self, vg: Any, res: Any, lanes: np.ndarray) -> np.ndarray:
        """The value of team 0 (seats 0 and 2) in lanes ``lanes`` of engine ``vg`` whose hand has just
        ended in the step that gave ``res``: the game's result if it ended, else :meth:`prob` of the new
        score with the next hand's dealer (a game cut off at ``max_hands`` counts as 0.5)."""
        v = self.team0(res.scores[lanes], vg.dealer[lanes])
        over = res.game_over[lanes]
        v[over] = (res.winner[lanes][over] == 0).astype(float)
        v[res.truncated[lanes]] = 0.5
        return v


def load_winprob(path: str | Path, rules: Any = None) -> WinProbability:
    """A :class:`WinProbability` from a file written by the ``winprob`` stage (training), checked like a
    policy checkpoint (environment version, rules when given); another kind of file is a
    :class:`~smear_env.agents.checkpoint.CheckpointError` that says so."""

    weights, meta = read_model_file(path, KIND, "a win-probability model", rules)
    target = SmearRules.with_defaults(meta.get("rules") or {})["target_score"]
    try:
        return WinProbability(weights, meta["network"], int(target),
                              where=f"win-probability model {str(path)!r}")
    except ValueError as e:
        raise CheckpointError(str(e)) from None
