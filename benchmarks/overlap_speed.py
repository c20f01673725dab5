"""Learner decisions per second of ``vector_ppo`` with and without ``algorithm.overlap`` (the update of one
rollout in a worker thread while the next rollout is collected), the two interleaved in the same process.

Each round runs ``--updates`` iterations of a trainer with ``overlap: false`` and then of one with
``overlap: true``, both built from the same config (default: ``configs/default.yaml --variant r90``, the
first stage of ``make default-90``) and started from the same behaviour-cloned weights (``--warm-start``
decisions of the heuristic; 0: random weights), so both play games of the same kind. The first iteration
of each trainer in a round is not timed. Prints decisions per second per round and their ratio, and the
median ratio over the rounds; ``--json FILE`` writes them with the machine's cores and load average.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/overlap_speed.py --rounds 3 --updates 12
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import time

import numpy as np
import torch

from training.algorithms import make_trainer
from training.config import load_config


def rate(trainer, updates: int) -> float:
    """Learner decisions per second over ``updates`` iterations (the first one untimed)."""
    trainer.iterate()
    trainer.finish_update()
    s0, t0 = trainer.step, time.perf_counter()
    for _ in range(updates):
        trainer.iterate()
    trainer.finish_update()  # the last update counts
    return (trainer.step - s0) / (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="configs/default.yaml")
    ap.add_argument("--variant", default="r90")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--updates", type=int, default=12)
    ap.add_argument("--warm-start", type=int, default=100_000, help="heuristic decisions cloned first")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    cfgs = {ov: load_config(args.config, [*args.set, f"algorithm.overlap={str(ov).lower()}"], args.variant)
            for ov in (False, True)}
    weights = None
    if args.warm_start > 0:
        from training.algorithms.imitation import pretrain

        tr = make_trainer(cfgs[False], np.random.default_rng(0))
        im = cfgs[False].imitation
        pretrain(tr.warm_start_policy(), "heuristic", cfgs[False].rules, args.warm_start, 1, im.batch_size,
                 im.learning_rate, 0, 1, im.epsilon, log=lambda *a, **k: None,
                 score_scale=cfgs[False].env.score_scale, batched=True)
        weights = copy.deepcopy(tr.policy.state_dict())
    rounds = []
    for r in range(args.rounds):
        row = {}
        for ov in (False, True):
            tr = make_trainer(cfgs[ov], np.random.default_rng(r))
            if weights is not None:
                tr.policy.load_state_dict(weights)
            row["overlap" if ov else "plain"] = rate(tr, args.updates)
        row["ratio"] = row["overlap"] / row["plain"]
        print(f"round {r + 1}: plain {row['plain']:,.0f}/s, overlap {row['overlap']:,.0f}/s, "
              f"ratio {row['ratio']:.2f}", flush=True)
        rounds.append(row)
    res = {"config": args.config, "variant": args.variant, "set": args.set, "updates": args.updates,
           "rounds": rounds, "median_ratio": statistics.median(r["ratio"] for r in rounds),
           "cores": os.cpu_count(), "loadavg": os.getloadavg()}
    print(f"median ratio {res['median_ratio']:.2f} ({res['cores']} cores, load average "
          f"{res['loadavg'][0]:.2f})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    return res


if __name__ == "__main__":
    main()
