"""Optional warm start: behaviour cloning of a teacher agent (e.g. the heuristic) before the RL stage.

The teacher plays all four seats on a :class:`smear_env.tables.table.Table`; every decision is recorded as
(observation, action mask, teacher action) and labelled with the Monte Carlo return of the hand for the
decider's team: the table's "score" reward (own score change minus the other team's, raw points) times
``score_scale`` -- the same scale as the PPO "score" reward (``env.score_scale``). The policy head is
trained with cross-entropy on the teacher's actions and the value head with squared error on the returns,
so PPO starts from the teacher's level with a calibrated critic instead of from a uniform policy.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from smear_env.agents.registry import make_agent, make_batched_agent
from smear_env.core.config import SmearRules
from smear_env.engine.observation import observe
from smear_env.engine.vector import random_actions
from smear_env.evaluation.batched import even_shares, worker_pool
from smear_env.tables.table import Table, TableOptions, agent_action

from ..fit import fit


def generate(teacher: str, rules_dict: dict[str, Any], decisions: int, seed: int, epsilon: float = 0.0,
             max_cycles: int = 2000, score_scale: float = 0.25) -> dict[str, np.ndarray]:
    """About ``decisions`` teacher decisions (whole hands), with hand returns. With ``epsilon`` > 0 a
    uniformly random legal action replaces the teacher's that often (it is still labelled with the
    teacher's choice), for a wider coverage of states."""
    rules = SmearRules.from_dict(rules_dict)
    rng = np.random.default_rng(seed)
    agents = [make_agent(teacher, rules) for _ in range(4)]
    obs, mask, act, ret = [], [], [], []
    n = 0
    table = Table(rules, TableOptions(episode="game", reward="score", max_cycles=max_cycles,
                                      score_scale=score_scale))  # the table shapes the returns
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
                        ret[i] = st.rewards[s]
                hand_rows = []
        # rows of an unfinished (truncated) hand keep return 0
    return {
        "obs": np.stack(obs).astype(np.float32), "mask": np.stack(mask).astype(bool),
        "act": np.asarray(act, dtype=np.int64), "ret": np.asarray(ret, dtype=np.float32),
    }


def generate_batched(teacher: str, rules: SmearRules, decisions: int, seed: int, epsilon: float = 0.0,
                     score_scale: float = 0.25, lanes: int = 256,
                     max_cycles: int = 2000) -> dict[str, np.ndarray]:
    """:func:`generate` on the batched table (:class:`smear_env.tables.batched_table.BatchedTable`, ``lanes``
    games stepped together, in this process) for any ``teacher`` spec
    (:func:`~smear_env.agents.batched.make_batched_agent`: vectorised for random, the heuristic and
    checkpoints, row by row for pimc and bots): the same rows and labels -- every decision of the teacher in
    all four seats, the table's "score" reward of the row's hand for the decider's team (times
    ``score_scale``, :func:`~smear_env.tables.table.shaped_team_rewards`) as its return (0 for the passes of a
    thrown-in hand and for a hand cut off by ``max_cycles``). Whole hands only: the rows of hands still
    open when ``decisions`` is reached are dropped."""

    from ..collect import Collector

    agent = make_batched_agent(teacher, rules)
    rng = np.random.default_rng(seed)
    opts = TableOptions(episode="game", reward="score", max_cycles=max_cycles, score_scale=score_scale)
    ar = np.arange(lanes)
    hand_no = np.zeros(lanes, dtype=np.int64)  # hands begun per lane (a thrown-in or cut-off hand counts)
    obs, mask, act, row_lane, row_seat, row_hand = [], [], [], [], [], []
    scored_key, scored_rew = [], []  # lane * 2**32 + hand number -> (4,) scaled point differences
    n = 0
    with Collector(lanes, rules, int(rng.integers(2**62)), agent, options=opts) as col:
        while n < decisions:
            o, m, seat, a = col.turn()
            obs.append(o)
            mask.append(m)
            act.append(a)
            row_lane.append(ar)
            row_seat.append(seat)
            row_hand.append(hand_no.copy())
            played = a
            if epsilon > 0:
                explore = rng.random(lanes) < epsilon
                if explore.any():
                    played = a.copy()
                    played[explore] = random_actions(m[explore], rng)
            st = col.step(played)
            res = st.result
            done = np.flatnonzero(res.hand_over)
            scored_key.append(done * 2**32 + hand_no[done])
            scored_rew.append(st.rewards[done])
            hand_no[res.hand_over | res.thrown_in | (st.new_game & ~res.game_over & ~res.truncated)] += 1
            n += lanes
    lane_a, seat_a, hand_a = np.concatenate(row_lane), np.concatenate(row_seat), np.concatenate(row_hand)
    keep = hand_a < hand_no[lane_a]  # the row's hand has ended (scored, thrown in or cut off)
    keys, rews = np.concatenate(scored_key), np.concatenate(scored_rew)
    order = np.argsort(keys)
    keys, rews = keys[order], rews[order]
    row_key = lane_a * 2**32 + hand_a
    pos = np.minimum(np.searchsorted(keys, row_key), max(len(keys) - 1, 0))
    found = (keys[pos] == row_key) if len(keys) else np.zeros(len(row_key), dtype=bool)
    ret = np.where(found, rews[pos, seat_a] if len(keys) else 0.0, 0.0)
    return {
        "obs": np.concatenate(obs)[keep].astype(np.float32), "mask": np.concatenate(mask)[keep].astype(bool),
        "act": np.concatenate(act)[keep], "ret": ret[keep].astype(np.float32),
    }


def _gen_star(args: tuple) -> dict[str, np.ndarray]:
    return generate(*args)


def pretrain(policy: torch.nn.Module, teacher: str, rules: SmearRules, decisions: int, epochs: int,
             batch_size: int, learning_rate: float, seed: int, workers: int = 2, epsilon: float = 0.0,
             log: Callable[[dict[str, float], int], None] | None = None,
             score_scale: float = 0.25, batched: bool = False) -> dict[str, float]:
    """Behaviour-clone ``teacher`` into ``policy`` (in place). Returns final metrics. ``batched``: record
    the teacher with :func:`generate_batched` (any teacher spec) instead of ``workers`` processes of
    :func:`generate`."""
    t0 = time.monotonic()
    if batched:
        data = generate_batched(teacher, rules, decisions, seed, epsilon, score_scale)
    else:
        per = even_shares(decisions, workers)
        jobs = [(teacher, rules.to_dict(), per[i], seed * 1000 + i, epsilon, 2000, score_scale)
                for i in range(workers)]
        if workers > 1:
            with worker_pool(workers) as pool:
                parts = pool.map(_gen_star, jobs)
        else:
            parts = [_gen_star(jobs[0])]
        data = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    gen_s = time.monotonic() - t0
    n = len(data["act"])
    t = {k: torch.from_numpy(v) for k, v in data.items()}

    def loss(idx: torch.Tensor) -> tuple[torch.Tensor, dict[str, float]]:
        logits, value = policy(t["obs"][idx], t["mask"][idx])
        ce = torch.nn.functional.cross_entropy(logits, t["act"][idx])
        vl = 0.5 * ((value - t["ret"][idx]) ** 2).mean()
        return ce + vl, {"cross_entropy": ce.item(), "value_loss": vl.item(),
                         "accuracy": (logits.argmax(1) == t["act"][idx]).float().mean().item()}

    metrics: dict[str, float] = {}

    def after_epoch(epoch: int, stats: dict[str, list[float]]) -> None:
        nonlocal metrics
        metrics = {f"imitation/{k}": float(np.mean(stats[k]))
                   for k in ("cross_entropy", "value_loss", "accuracy")}
        metrics["imitation/epoch"] = epoch
        if log is not None:
            log(metrics, epoch)

    fit(policy.parameters(), loss, epochs, learning_rate, np.arange(n), batch_size,
        np.random.default_rng(seed), clip=1.0, module=policy, after_epoch=after_epoch)
    metrics["imitation/decisions"] = n
    metrics["imitation/generate_s"] = gen_s
    metrics["imitation/total_s"] = time.monotonic() - t0
    return metrics
