"""In-training evaluation: the greedy policy against a baseline in the duplicate format of
:mod:`smear_env.evaluation` (:func:`~smear_env.evaluation.run_match` on the batched engine, the policy one
batched agent: team A in seats 0/2, then 1/3, on the same deal sequences as ``smear-eval``). For the numbers
of a model card use ``smear-eval`` itself (it plays the checkpoint file through the registry)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from smear_env.core.config import SmearRules
from smear_env.tables.stats import duplicate_win_interval

if TYPE_CHECKING:  # pragma: no cover
    from smear_env.evaluation.results import MatchResult


class GreedyPolicyAgent:
    """A training policy (``policy.act(obs, mask, rng, greedy=True)``) as a batched agent: the greedy
    action of each row; it keeps nothing per slot."""

    vectorised = True
    name = "policy"

    def __init__(self, policy: Any) -> None:
        self.policy = policy

    def start_game(self, slot: int, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        pass

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, slots: np.ndarray) -> np.ndarray:
        act, _, _ = self.policy.act(obs, mask, None, greedy=True)
        return np.asarray(act, dtype=np.int64)

    def close(self) -> None:
        pass


def policy_match(policy: Any, opponent: str, rules: SmearRules, games: int, seed: int) -> MatchResult:
    """The duplicate match of policy (team A, greedy) vs ``opponent`` (agent spec; one that cannot be
    vectorised plays row by row) in ``games`` games (rounded up to whole pairs) on the batched engine."""
    from smear_env.evaluation import run_match

    games = 2 * max(1, (games + 1) // 2)
    return run_match(GreedyPolicyAgent(policy), opponent, games, rules, seed, engine="batched")


def evaluate_policy(policy: Any, opponent: str, rules: SmearRules, games: int = 100,
                    seed: int = 12345) -> dict[str, Any]:
    """:func:`policy_match`'s win rate of the policy (draw = 1/2) with its 95% interval, the mean score
    margin per hand and the games played."""
    res = policy_match(policy, opponent, rules, games, seed)
    win, lo, hi = duplicate_win_interval(res.pair_scores)
    return {"opponent": opponent, "games": res.games, "win_rate": float(win), "ci95": [float(lo), float(hi)],
            "margin_per_hand": int(res.pair_margin.sum()) / max(1, int(res.pair_hands.sum()))}
