"""The figures behind docs/ray.md's scaling estimates, measured in one process (no cluster needed):

- a dmc actor's rate: finished learner decisions per second of one actor (``configs/dmc.yaml``'s network and
  opponents, ``--lanes`` lanes, one torch thread), what :class:`training.algorithms.dmc_ray.DMCActor` runs;
- the learner's ingestion ceiling: decisions per second of :meth:`DMCTrainer.learn` on an update's batch
  (``n_steps * n_envs`` decisions), measured interleaved with the actor's;
- the object-store traffic of an update: the weights' bytes and the batch's bytes per decision;
- an expert-iteration round's parts: searched games per second of one shard (the recipe's spec on the shipped
  ``default`` agent) and distillation seconds per target row (the serial part of a round).

    python benchmarks/ray_scale.py --reps 3 --search-games 2 4 --learner-threads 1 2
    .venv-rllib/bin/python benchmarks/ray_scale.py --reps 1 --search-games --end-to-end 1 2
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
import torch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lanes", type=int, default=256, help="lanes of one actor")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--search-games", type=int, nargs="*", default=[2, 4],
                    help="games of each timed search shard (two sizes: a shard's fixed cost; none: skip)")
    ap.add_argument("--learner-threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--end-to-end", type=int, nargs="*", default=[], metavar="ACTORS",
                    help="also: decisions per second of whole updates, dmc in this process and on a local "
                    "Ray with each of these actor counts (needs ray), interleaved")
    ap.add_argument("--updates", type=int, default=3, help="updates timed per end-to-end setting")
    args = ap.parse_args()
    torch.set_num_threads(1)
    from training.algorithms.dmc import DMCTrainer
    from training.algorithms.dmc_ray import numpy_weights, with_lanes
    from training.config import load_config

    cfg = load_config("configs/dmc.yaml")
    actor = DMCTrainer(with_lanes(cfg, args.lanes), np.random.default_rng(args.seed))
    learner = DMCTrainer(with_lanes(cfg, 1), np.random.default_rng(args.seed + 1))
    update = cfg.algorithm.n_steps * cfg.n_envs
    per_collect = cfg.algorithm.n_steps * args.lanes
    actor.collect(per_collect)  # warm-up
    parts = []
    while sum(len(p["act"]) for p in parts) < update:
        parts.append(actor.collect(per_collect))
    batch = {k: np.concatenate([p[k] for p in parts])[:update] for k in parts[0]}
    actor_rates: list[float] = []
    learn_rates: dict[int, list[float]] = {t: [] for t in args.learner_threads}
    for _ in range(args.reps):  # interleaved: actor, learner at each thread count, actor, ...
        torch.set_num_threads(1)
        t0 = time.perf_counter()
        n = len(actor.collect(per_collect)["act"])
        actor_rates.append(n / (time.perf_counter() - t0))
        for threads in args.learner_threads:
            torch.set_num_threads(threads)
            t0 = time.perf_counter()
            learner.learn(batch, {})
            learn_rates[threads].append(len(batch["act"]) / (time.perf_counter() - t0))
    torch.set_num_threads(1)
    weights = numpy_weights(learner.policy)
    out = {
        "load_average": os.getloadavg(),
        "actor_lanes": args.lanes,
        "actor_decisions_per_s": [round(r) for r in actor_rates],
        "learner_decisions_per_s": {f"{t}_threads": [round(r) for r in v] for t, v in learn_rates.items()},
        "update_decisions": len(batch["act"]),
        "weights_bytes": sum(v.nbytes for v in weights.values()),
        "batch_bytes_per_decision": sum(v.nbytes for v in batch.values()) / len(batch["act"]),
    }
    if args.search_games:
        from smear_env.agents.shipped import checkpoint_file
        from training.distill import distill, policy_from_checkpoint
        from training.expert_iteration import search_shard, search_spec

        base = checkpoint_file("default")
        spec = search_spec(base, "heuristic", 32, "trump+discard+play")
        timed = {}
        for games in args.search_games:
            t0 = time.perf_counter()
            res = search_shard(spec, "heuristic", games, 96601)
            timed[games] = (time.perf_counter() - t0, len(res["targets"]["action"]))
        rows = len(res["targets"]["action"])
        data = {k: np.concatenate([v] * max(1, 20000 // rows)) for k, v in res["targets"].items()}
        policy, _ = policy_from_checkpoint(base)
        t0 = time.perf_counter()
        distill(policy, data, 3, 3e-4, 1024, seed=1)
        distill_s = time.perf_counter() - t0
        out.update({"search_seconds_by_games": {g: round(s, 2) for g, (s, _) in timed.items()},
                    "search_rows_by_games": {g: r for g, (_, r) in timed.items()},
                    "distill_rows": len(data["action"]),
                    "distill_seconds_per_row_3_epochs": distill_s / len(data["action"])})
    if args.end_to_end:
        out["end_to_end_decisions_per_s"] = end_to_end(cfg, args.lanes, args.end_to_end, args.updates,
                                                       args.seed)
    out["load_average_end"] = os.getloadavg()
    print(json.dumps(out, indent=1))


def end_to_end(cfg, lanes: int, actor_counts: list[int], updates: int, seed: int) -> dict[str, float]:
    """Decisions trained on per second over ``updates`` updates (after one warm-up update): dmc in this
    process on ``lanes`` lanes, and dmc on a local Ray with ``k`` actors of ``lanes`` lanes each."""
    import ray

    from training.algorithms.dmc import DMCTrainer
    from training.algorithms.dmc_ray import RayDMCTrainer, with_lanes
    from training.distributed.settings import RaySettings

    def rate(tr) -> float:
        tr.iterate()
        step, t0 = tr.step, time.perf_counter()
        for _ in range(updates):
            tr.iterate()
        return (tr.step - step) / (time.perf_counter() - t0)

    out = {"local_dmc": rate(DMCTrainer(with_lanes(cfg, lanes), np.random.default_rng(seed)))}
    ray.init(address="local", include_dashboard=False, log_to_driver=False)
    try:
        for k in actor_counts:
            tr = RayDMCTrainer(with_lanes(cfg, lanes * k), np.random.default_rng(seed),
                               RaySettings(address="auto", workers=k))
            try:
                out[f"ray_{k}_actors"] = rate(tr)
            finally:
                tr.close()
    finally:
        ray.shutdown()
    return {k: round(v) for k, v in out.items()}


if __name__ == "__main__":
    main()
