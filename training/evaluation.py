"""Fast in-training evaluation: the greedy policy against a baseline in the duplicate format of
:mod:`smear_env.evaluation` (same deal sequences: ``DealSequence(seed, pair)``; team A = the policy in seats
0/2, then 1/3), every game of the match a :class:`~smear_env.table.Table` in one
:class:`~smear_env.table.Lockstep` so the policy runs batched.

The reported numbers use :func:`smear_env.stats.duplicate_win_interval` like ``smear-eval``; for the
numbers of a model card use ``smear-eval`` itself (it plays the checkpoint file through the registry).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from smear_env.config import SmearRules
from smear_env.evaluation import DealSequence, agent_rng
from smear_env.stats import duplicate_win_interval
from smear_env.table import Lockstep, Table, TableOptions

from .selfplay import make_baseline

POLICY = "policy"  # the Lockstep key of the policy's seats


def evaluate_policy(policy: Any, opponent: str, rules: SmearRules, games: int = 100, seed: int = 12345,
                    max_hands: int = 200) -> dict[str, Any]:
    """Duplicate match policy (team A, greedy) vs ``opponent`` (agent spec). Returns win rate of the policy
    (draw = 1/2) with its 95% interval, mean score margin per hand and games played."""
    n_pairs = max(1, (games + 1) // 2)
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
