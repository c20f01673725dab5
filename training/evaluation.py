"""Fast in-training evaluation: the greedy policy against a baseline in the duplicate format of
:mod:`smear_env.evaluation` (same deal sequences: ``DealSequence(seed, pair)``; team A = the policy in seats
0/2, then 1/3), with every game of the match stepped together so the policy runs batched.

The reported numbers use :func:`smear_env.stats.duplicate_win_interval` like ``smear-eval``; for the
numbers of a model card use ``smear-eval`` itself (it plays the checkpoint file through the registry).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from smear_env.config import SmearRules
from smear_env.evaluation import DealSequence, agent_rng
from smear_env.game import GAME_OVER, HAND_OVER, Game
from smear_env.observation import observe
from smear_env.stats import duplicate_win_interval

from .selfplay import agent_action, make_baseline


def evaluate_policy(policy: Any, opponent: str, rules: SmearRules, games: int = 100, seed: int = 12345,
                    max_hands: int = 200) -> dict[str, Any]:
    """Duplicate match policy (team A, greedy) vs ``opponent`` (agent spec). Returns win rate of the policy
    (draw = 1/2) with its 95% interval, mean score margin per hand and games played."""
    n_pairs = max(1, (games + 1) // 2)
    tables = []  # (game, agents by seat or None for policy, pair, game index in pair)
    for p in range(n_pairs):
        deals = DealSequence(seed, p)
        for g in range(2):
            hands, stock = deals.deal(0)
            game = Game.from_deal(hands, stock, deals.first_dealer, rules)
            seats: list[Any] = [None] * 4
            for s in range(4):
                if (s & 1) != g:  # policy's team is seats g, g+2
                    a = make_baseline(opponent, rules)
                    a.start_game(s, rules, agent_rng(seed, p, g, s))
                    seats[s] = a
            tables.append([game, seats, deals, g])
    live = list(range(len(tables)))
    while live:
        rows: list[tuple[int, np.ndarray, np.ndarray]] = []
        still = []
        for t in live:
            game, seats, deals, _g = tables[t]
            while True:
                if game.phase == GAME_OVER:
                    break
                if game.phase == HAND_OVER:
                    nxt = game.hand_number + 1
                    if nxt >= max_hands:
                        break
                    game.start_next_hand(deal=deals.deal(nxt))
                    continue
                agent = seats[game.to_act]
                if agent is None:
                    o = observe(game, game.to_act)
                    rows.append((t, o["observation"], o["action_mask"]))
                    still.append(t)
                    break
                game.apply(agent_action(agent, game, game.to_act))
        if rows:
            obs = np.stack([r[1] for r in rows])
            mask = np.stack([r[2] for r in rows])
            act, _, _ = policy.act(obs, mask, None, greedy=True)
            for (t, _o, _m), a in zip(rows, act, strict=True):
                tables[t][0].apply(int(a))
        live = still
    pair_scores = np.zeros(n_pairs)
    margin = hands = 0
    for idx, (game, _seats, _deals, g) in enumerate(tables):
        mine = g  # policy's engine team
        score = 0.5 if game.winner is None else float(game.winner == mine)
        pair_scores[idx // 2] += score / 2
        for h in game.history:
            if "score_change" in h:
                margin += h["score_change"][mine] - h["score_change"][1 - mine]
                hands += 1
    win, lo, hi = duplicate_win_interval(pair_scores)
    return {"opponent": opponent, "games": 2 * n_pairs, "win_rate": float(win),
            "ci95": [float(lo), float(hi)],
            "margin_per_hand": margin / max(1, hands)}
