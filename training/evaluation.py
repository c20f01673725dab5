"""Fast in-training evaluation: the greedy policy against a baseline in the duplicate format of
:mod:`smear_env.evaluation` (same deal sequences: ``DealSequence(seed, pair)``; team A = the policy in seats
0/2, then 1/3). When the opponent can be vectorised (:func:`smear_env.agents.batched.can_vectorise`:
random, heuristic, checkpoints) the match runs on the batched engine
(:func:`smear_env.evaluation.batched.play_pairs`, the policy one batched agent); otherwise every game is a
:class:`~smear_env.table.Table` in one :class:`~smear_env.table.Lockstep` so the policy still runs batched.
Both play the same games.

The reported numbers use :func:`smear_env.stats.duplicate_win_interval` like ``smear-eval``; for the
numbers of a model card use ``smear-eval`` itself (it plays the checkpoint file through the registry).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from smear_env.agents.registry import can_vectorise, make_batched_agent
from smear_env.config import SmearRules
from smear_env.evaluation import DealSequence, agent_rng
from smear_env.evaluation.batched import play_pairs
from smear_env.evaluation.results import aggregate
from smear_env.stats import duplicate_win_interval
from smear_env.table import Lockstep, Table, TableOptions

from .selfplay import make_baseline

POLICY = "policy"  # the Lockstep key of the policy's seats


class GreedyPolicyAgent:
    """A training policy (``policy.act(obs, mask, rng, greedy=True)``) as a batched agent: the greedy
    action of each row; it keeps nothing per slot."""

    vectorised = True

    def __init__(self, policy: Any, name: str = POLICY) -> None:
        self.policy = policy
        self.name = name

    def start_game(self, slot: int, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        pass

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, slots: np.ndarray) -> np.ndarray:
        act, _, _ = self.policy.act(obs, mask, None, greedy=True)
        return np.asarray(act, dtype=np.int64)

    def close(self) -> None:
        pass


def evaluate_policy(policy: Any, opponent: str, rules: SmearRules, games: int = 100, seed: int = 12345,
                    max_hands: int = 200, engine: str = "auto") -> dict[str, Any]:
    """Duplicate match policy (team A, greedy) vs ``opponent`` (agent spec). Returns win rate of the policy
    (draw = 1/2) with its 95% interval, mean score margin per hand and games played. ``engine``: "auto"
    (batched when the opponent can be vectorised), "batched" or "reference" (the Lockstep of tables)."""

    if engine not in ("auto", "batched", "reference"):
        raise ValueError(f"engine {engine!r} is not allowed; allowed values: 'auto', 'batched', 'reference'")
    n_pairs = max(1, (games + 1) // 2)
    if engine == "batched" or (engine == "auto" and can_vectorise(opponent)):
        opp = make_batched_agent(opponent, rules)
        try:
            pairs, _ = play_pairs(POLICY, opponent, rules, seed, max_hands, 0, n_pairs,
                                  players=(GreedyPolicyAgent(policy), opp))
        finally:
            opp.close()
        pair_scores, margins, hands_, _ = aggregate(pairs)
        win, lo, hi = duplicate_win_interval(pair_scores)
        return {"opponent": opponent, "games": 2 * n_pairs, "win_rate": float(win),
                "ci95": [float(lo), float(hi)],
                "margin_per_hand": int(margins.sum()) / max(1, int(hands_.sum()))}
    options = TableOptions(max_cycles=None, max_hands=max_hands)
    tables: list[Table] = []
    seats: list[list[Any]] = []
    for p in range(n_pairs):
        deals = DealSequence(seed, p)
        for g in range(2):  # the policy's team is seats g, g + 2
            table = Table(rules, options)
            table.new_game(deals=deals)
            row: list[Any] = [POLICY] * 4
            for s in range(4):
                if (s & 1) != g:
                    a = make_baseline(opponent, rules)
                    a.start_game(s, rules, agent_rng(seed, p, g, s))
                    row[s] = a
            tables.append(table)
            seats.append(row)
    lock = Lockstep(tables, seats)
    while pending := lock.pending():
        idx = pending[POLICY]
        obs, mask = lock.observations(idx)
        act, _, _ = policy.act(obs, mask, None, greedy=True)
        lock.apply(idx, act)
    pair_scores = np.zeros(n_pairs)
    margin = hands = 0
    for k, table in enumerate(tables):
        game, mine = table.require_game(), k % 2  # the policy's engine team
        score = 0.5 if game.winner is None else float(game.winner == mine)
        pair_scores[k // 2] += score / 2
        for h in game.history:
            if "score_change" in h:
                margin += h["score_change"][mine] - h["score_change"][1 - mine]
                hands += 1
    win, lo, hi = duplicate_win_interval(pair_scores)
    return {"opponent": opponent, "games": 2 * n_pairs, "win_rate": float(win),
            "ci95": [float(lo), float(hi)],
            "margin_per_hand": margin / max(1, hands)}
