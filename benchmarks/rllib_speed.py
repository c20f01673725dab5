"""Training throughput of rllib_ppo next to the native ppo, in the same run, interleaved.

Both trainers get the same config (self-play only, network [128, 128], 16 games x 125 steps = 2,000 decisions
per update, 4 epochs, minibatch 500); the script alternates one update of each for ``--rounds`` rounds after a
warm-up update each, and reports decisions (learner steps, sampling + update) per second. RLlib runs on a
local Ray with ``--runners`` env-runner actors (0: sampling in the driver). Needs ray[rllib] (the RLlib
venv); without it the script says so and exits 0.

    .venv-rllib/bin/python benchmarks/rllib_speed.py [--rounds 3] [--runners 1]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time

import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runners", type=int, default=1, help="RLlib env runners")
    args = ap.parse_args()
    if importlib.util.find_spec("ray") is None:
        print("rllib_speed: skipped (ray[rllib] is not installed; run it with .venv-rllib/bin/python)")
        return 0
    import torch

    from training.algorithms.ppo import PPOTrainer
    from training.algorithms.rllib_ppo import RLlibPPOTrainer
    from training.config import from_dict

    base = {"n_envs": 16, "total_timesteps": 10**7, "seed": 0,
            "algorithm": {"n_steps": 125, "batch_size": 500, "n_epochs": 4, "learning_rate": 3e-4},
            "network": {"hidden_sizes": [128, 128]}, "env": {"episode": "hand", "reward": "score"},
            "selfplay": {"opponents": {"self": 1.0}},
            "ray": {"num_env_runners": args.runners, "num_cpus": os.cpu_count()}}
    torch.set_num_threads(1)
    native = PPOTrainer(from_dict({**base, "algorithm": {**base["algorithm"], "name": "ppo"}}),
                        np.random.default_rng(0))
    rllib = RLlibPPOTrainer(from_dict({**base, "algorithm": {**base["algorithm"], "name": "rllib_ppo"}}),
                            np.random.default_rng(0))
    rates: dict[str, list[float]] = {"ppo": [], "rllib_ppo": []}
    try:
        for r in range(args.rounds + 1):
            for name, tr in (("ppo", native), ("rllib_ppo", rllib)):
                s0, t0 = tr.step, time.perf_counter()
                tr.iterate()
                rate = (tr.step - s0) / (time.perf_counter() - t0)
                if r > 0:  # round 0 warms up (RLlib's first update includes actor start-up work)
                    rates[name].append(rate)
                print(f"round {r} {name}: {tr.step - s0} decisions, {rate:,.0f}/s", file=sys.stderr)
    finally:
        rllib.close()
    out = {k: {"decisions_per_s_mean": round(float(np.mean(v)), 1), "per_round": [round(x, 1) for x in v]}
           for k, v in rates.items()}
    out["ratio_native_over_rllib"] = round(out["ppo"]["decisions_per_s_mean"] /
                                           out["rllib_ppo"]["decisions_per_s_mean"], 2)
    out["cpus"] = os.cpu_count()
    out["load_average"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
