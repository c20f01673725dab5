"""Optional warm start: behaviour cloning of a teacher agent (e.g. the heuristic) before the RL stage.

The teacher plays all four seats on a :class:`smear_env.table.Table`; every decision is recorded as
(observation, action mask, teacher action) and labelled with the Monte Carlo return of the hand for the
decider's team: the table's "score" reward (own score change minus the other team's, raw points) times
``score_scale`` -- the same scale as the PPO "score" reward (``env.score_scale``). The policy head is
trained with cross-entropy on the teacher's actions and the value head with squared error on the returns,
so PPO starts from the teacher's level with a calibrated critic instead of from a uniform policy.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from smear_env.config import SmearRules
from smear_env.observation import observe
from smear_env.table import Table, TableOptions, agent_action

from ..selfplay import make_baseline


def generate(teacher: str, rules_dict: dict[str, Any], decisions: int, seed: int, epsilon: float = 0.0,
             max_cycles: int = 2000, score_scale: float = 0.25) -> dict[str, np.ndarray]:
    """About ``decisions`` teacher decisions (whole hands), with hand returns. With ``epsilon`` > 0 a
    uniformly random legal action replaces the teacher's that often (it is still labelled with the
    teacher's choice), for a wider coverage of states."""
    rules = SmearRules.from_dict(rules_dict)
    rng = np.random.default_rng(seed)
    agents = [make_baseline(teacher, rules) for _ in range(4)]
    obs, mask, act, ret = [], [], [], []
    n = 0
    table = Table(rules, TableOptions(episode="game", reward="score", max_cycles=max_cycles))
    while n < decisions:
        table.new_game(int(rng.integers(2**63)))
        for s, a in enumerate(agents):
            a.start_game(s, rules, np.random.default_rng(int(rng.integers(2**63))))
        hand_rows: list[tuple[int, int]] = []  # (row index, seat)
        while not table.done:
            game = table.require_game()
            seat = game.to_act
            o = observe(game, seat)
            a = int(agent_action(agents[seat], game, seat))
            obs.append(o["observation"])
            mask.append(o["action_mask"])
            act.append(a)
            ret.append(0.0)
            hand_rows.append((len(act) - 1, seat))
            if epsilon > 0 and rng.random() < epsilon:
                legal = game.legal_actions()
                a = int(legal[rng.integers(len(legal))])
            st = table.apply(a)
            n += 1
            if st.hand is not None:
                if st.hand.scored:
                    for i, s in hand_rows:
                        ret[i] = st.rewards[s] * score_scale
                hand_rows = []
        # rows of an unfinished (truncated) hand keep return 0
    return {
        "obs": np.stack(obs).astype(np.float32), "mask": np.stack(mask).astype(bool),
        "act": np.asarray(act, dtype=np.int64), "ret": np.asarray(ret, dtype=np.float32),
    }


def _gen_star(args: tuple) -> dict[str, np.ndarray]:
    return generate(*args)


def pretrain(policy: torch.nn.Module, teacher: str, rules: SmearRules, decisions: int, epochs: int,
             batch_size: int, learning_rate: float, seed: int, workers: int = 2, epsilon: float = 0.0,
             log: Callable[[dict[str, float], int], None] | None = None,
             score_scale: float = 0.25) -> dict[str, float]:
    """Behaviour-clone ``teacher`` into ``policy`` (in place). Returns final metrics."""
    t0 = time.monotonic()
    per = [decisions // workers + (1 if i < decisions % workers else 0) for i in range(workers)]
    jobs = [(teacher, rules.to_dict(), per[i], seed * 1000 + i, epsilon, 2000, score_scale)
            for i in range(workers)]
    if workers > 1:
        with mp.get_context("spawn").Pool(workers) as pool:
            parts = pool.map(_gen_star, jobs)
    else:
        parts = [_gen_star(jobs[0])]
    data = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    gen_s = time.monotonic() - t0
    n = len(data["act"])
    t = {k: torch.from_numpy(v) for k, v in data.items()}
    opt = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    rng = np.random.default_rng(seed)
    policy.train()
    metrics: dict[str, float] = {}
    step = 0
    for epoch in range(epochs):
        perm = torch.from_numpy(rng.permutation(n))
        ce_l, v_l, acc_l = [], [], []
        for start in range(0, n, batch_size):
            idx = perm[start:start + batch_size]
            logits, value = policy(t["obs"][idx], t["mask"][idx])
            ce = torch.nn.functional.cross_entropy(logits, t["act"][idx])
            vl = 0.5 * ((value - t["ret"][idx]) ** 2).mean()
            loss = ce + vl
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            opt.step()
            ce_l.append(ce.item())
            v_l.append(vl.item())
            acc_l.append((logits.argmax(1) == t["act"][idx]).float().mean().item())
            step += 1
        metrics = {"imitation/cross_entropy": float(np.mean(ce_l)),
                   "imitation/value_loss": float(np.mean(v_l)),
                   "imitation/accuracy": float(np.mean(acc_l)), "imitation/epoch": epoch + 1}
        if log is not None:
            log(metrics, epoch + 1)
    metrics["imitation/decisions"] = n
    metrics["imitation/generate_s"] = gen_s
    metrics["imitation/total_s"] = time.monotonic() - t0
    return metrics
