"""Where a training step's time goes: engine, baseline agents, observation encoding, network forward, PPO
update and the trainer's own bookkeeping, for one trainer driven directly (no warm start, no evaluation,
no checkpoints).

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/train_profile.py --config configs/quickstart.yaml --seconds 45
    PYTHONPATH=. .venv/bin/python benchmarks/train_profile.py --config configs/scratch.yaml --seconds 45
    PYTHONPATH=. .venv/bin/python benchmarks/train_profile.py --config configs/quickstart.yaml \\
        --set algorithm.name=vector_ppo --set selfplay.opponents.heuristic=0 --seconds 45

Each category is timed by wrapping its functions with a timer that counts *exclusive* time (a wrapped
call inside another, e.g. the engine's legal actions inside the observation encoder, is counted once, in
its own category). "bookkeeping" is what is left of the rollout (the trainer's Python loop, trajectories,
rewards, game set-up; for ``ppo`` also the table layer's own work); "PPO update" is the update step
(forward + backward + Adam over the epochs).
Rates are learner decisions (the trained-on samples) per second of wall clock and of process CPU time;
the wrappers add about a microsecond per call. ``--cprofile N`` also prints cProfile's top N functions.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from typing import Any

import numpy as np

_STACK: list[list[float]] = []  # [start, child time] of the timed calls in progress
TOTALS: dict[str, float] = {}


def _timed(category: str, fn: Any) -> Any:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        frame = [time.perf_counter(), 0.0]
        _STACK.append(frame)
        try:
            return fn(*args, **kwargs)
        finally:
            _STACK.pop()
            elapsed = time.perf_counter() - frame[0]
            TOTALS[category] = TOTALS.get(category, 0.0) + elapsed - frame[1]
            if _STACK:
                _STACK[-1][1] += elapsed

    return wrapper


def _patch(owner: Any, name: str, category: str) -> None:
    setattr(owner, name, _timed(category, getattr(owner, name)))


def instrument(algorithm: str) -> None:
    """Wrap the functions of each category for ``algorithm`` ("ppo" or "vector_ppo")."""
    from training import policy as policy_module
    from training.algorithms import ppo
    from training.algorithms.ppo_update import PPOUpdate
    from training.policy import SmearPolicy

    _patch(SmearPolicy, "act", "network forward (rollout)")
    # network.suit_canonical: choosing each row's suit order is numpy work on the observation
    _patch(policy_module, "suit_orders", "observation encoding")
    _patch(PPOUpdate, "__call__", "PPO update")  # the update component of ppo and vector_ppo
    if algorithm == "ppo":
        from smear_env.engine.game import Game
        from smear_env.tables import table

        for name in ("apply", "legal_actions", "start_next_hand", "_deal_hand", "__init__"):
            _patch(Game, name, "engine")
        _patch(table, "agent_action", "baseline agents")
        for name in ("encode_game", "action_mask"):
            _patch(table, name, "observation encoding")
        _patch(ppo.PPOTrainer, "collect", "bookkeeping")
    elif algorithm == "vector_ppo":
        from smear_env.engine.vector import VectorGame
        from training.algorithms import vector_ppo

        for name in ("step", "legal_mask", "__init__"):
            _patch(VectorGame, name, "engine")
        _patch(VectorGame, "observe", "observation encoding")
        _patch(vector_ppo, "random_actions", "baseline agents")
        _patch(vector_ppo, "decode_batch", "baseline agents")  # the heuristic's views
        _patch(vector_ppo.HeuristicAgent, "act_view", "baseline agents")
        _patch(vector_ppo.VectorPPOTrainer, "collect", "bookkeeping")
    else:
        raise SystemExit(f"error: algorithm {algorithm!r}: only ppo and vector_ppo are profiled")


ORDER = ("engine", "baseline agents", "observation encoding", "bookkeeping", "network forward (rollout)",
         "PPO update")
NETWORK = ("network forward (rollout)", "PPO update")


def profile(cfg: Any, seconds: float, cprofile: int = 0) -> dict[str, Any]:
    """Run ``cfg``'s trainer for about ``seconds`` (whole updates); returns the table's figures."""
    import torch

    from training.algorithms import make_trainer

    torch.set_num_threads(cfg.torch_threads)
    torch.manual_seed(cfg.seed)
    instrument(cfg.algorithm.name)
    trainer = make_trainer(cfg, np.random.default_rng(cfg.seed))
    prof = None
    if cprofile:
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    TOTALS.clear()
    w0, c0 = time.perf_counter(), time.process_time()
    next_snap = cfg.selfplay.snapshot_interval
    while time.perf_counter() - w0 < seconds:
        trainer.iterate()
        if trainer.step >= next_snap:
            trainer.add_snapshot()
            next_snap += cfg.selfplay.snapshot_interval
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    if prof is not None:
        import pstats

        prof.disable()
        pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(cprofile)
    timed = sum(TOTALS.values())
    rows = {k: TOTALS.get(k, 0.0) for k in ORDER}
    rows["other (outside the trainer)"] = max(0.0, wall - timed)
    return {
        "algorithm": cfg.algorithm.name, "n_envs": cfg.n_envs, "hidden_sizes": cfg.network.hidden_sizes,
        "shared_trunk": getattr(cfg.network, "shared_trunk", False), "n_epochs": cfg.algorithm.n_epochs,
        "opponents": cfg.selfplay.opponents, "learner_decisions": trainer.step, "updates": trainer.updates,
        "wall_s": wall, "cpu_s": cpu, "decisions_per_s": trainer.step / wall,
        "decisions_per_cpu_s": trainer.step / max(cpu, 1e-9), "seconds": rows,
        "non_network_share": sum(v for k, v in rows.items() if k in ORDER and k not in NETWORK) / timed,
        "load_average": os.getloadavg(),
    }


def table(r: dict[str, Any]) -> str:
    total = sum(r["seconds"].values())
    lines = [
        f"{r['algorithm']}: {r['learner_decisions']:,} learner decisions in {r['wall_s']:.1f} s wall / "
        f"{r['cpu_s']:.1f} s CPU = {r['decisions_per_s']:,.0f}/s wall, {r['decisions_per_cpu_s']:,.0f}/s CPU "
        f"(n_envs {r['n_envs']}, net {r['hidden_sizes']}{' shared' if r['shared_trunk'] else ''}, "
        f"{r['n_epochs']} epochs, load average {r['load_average'][0]:.1f})",
        "| part | seconds | share | µs per learner decision |", "|---|---|---|---|",
    ]
    for k, v in r["seconds"].items():
        lines.append(f"| {k} | {v:.2f} | {v / total:.1%} | {1e6 * v / max(1, r['learner_decisions']):.0f} |")
    lines.append(f"non-network share of the trainer's time: {r['non_network_share']:.1%}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="configs/quickstart.yaml")
    ap.add_argument("--variant")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--seconds", type=float, default=45.0)
    ap.add_argument("--cprofile", type=int, default=0, metavar="N", help="also print cProfile's top N")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = ap.parse_args(argv)
    from training.config import ConfigError, load_config

    try:
        cfg = load_config(args.config, args.overrides, args.variant)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    r = profile(cfg, args.seconds, args.cprofile)
    print(table(r))
    if args.json:
        print(json.dumps(r))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
