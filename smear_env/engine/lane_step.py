"""What one :meth:`~smear_env.engine.vector.VectorGame.step` of the batched engine reports: the
:class:`StepResult` of its lanes, the :class:`VectorIllegalActionError` of a lane's illegal action and the
seat signs of team rewards. Importable from :mod:`smear_env.engine.vector` too."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .game import IllegalActionError

SEAT_SIGN = np.array([1, -1, 1, -1], dtype=np.float32)
"""Team 0's reward to each seat: + for seats 0 and 2, - for seats 1 and 3."""


class VectorIllegalActionError(IllegalActionError):
    """An illegal action in one lane of a :class:`~smear_env.engine.vector.VectorGame`; ``lane``, ``action``
    and ``legal`` say which. No lane moved."""

    def __init__(self, message: str, lane: int, action: int, legal: tuple[int, ...]) -> None:
        super().__init__(message)
        self.lane = lane
        self.action = action
        self.legal = legal


@dataclass
class StepResult:
    """What one :meth:`~smear_env.engine.vector.VectorGame.step` did in each lane (arrays of N rows; see the
    docstring of :mod:`smear_env.engine.vector`)."""

    hand_over: np.ndarray
    """(N,) bool: a hand was scored in this step (a thrown-in hand is not)."""
    thrown_in: np.ndarray
    """(N,) bool: every player passed and the hand was thrown in (R8 redeal)."""
    game_over: np.ndarray
    """(N,) bool: the scored hand ended the game (R18, R19)."""
    truncated: np.ndarray
    """(N,) bool: the game reached ``max_hands`` hands without a winner (R21)."""
    winner: np.ndarray
    """(N,) int64: winning team where ``game_over``, else -1."""
    score_delta: np.ndarray
    """(N, 2) int64: team score changes of the hand scored in this step (0 elsewhere)."""
    scores: np.ndarray
    """(N, 2) int64: team scores after this step's hand, before a new game resets them (the final scores
    where ``game_over`` or ``truncated``)."""
    reward_score: np.ndarray
    """(N, 4) float32: per seat, own team's score change minus the other's, raw points, on ``hand_over``."""
    reward_win: np.ndarray
    """(N, 4) float32: +1 winners / -1 losers on ``game_over``; 0 otherwise and when truncated."""
