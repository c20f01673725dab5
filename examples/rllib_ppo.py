"""Ray RLlib: PPO in self-play, one masked policy shared by the four seats (tiny budget), then a duplicate
match of the trained policy against random through smear_env.evaluation.

    pip install -c constraints/rllib.txt -e ".[rllib]"     # or: make test-rllib
    python examples/rllib_ppo.py --iterations 2

The env adapter (RLlib's ``observations`` key), the action-masking RLModule spec and the policy mapping are
in smear_env.envs.integrations.rllib. For real runs use ``smear-train`` with ``algorithm.name: rllib_ppo``.
"""

from __future__ import annotations

import argparse

import numpy as np
import ray
import torch

from smear_env.agents.base import CallableAgent
from smear_env.core.config import SmearRules
from smear_env.envs.integrations.rllib import MASK_KEY, OBS_KEY, ppo_config
from smear_env.evaluation import run_match


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iterations", type=int, default=2, help="PPO iterations (2,000 decisions each)")
    ap.add_argument("--games", type=int, default=20, help="games of the final match against random")
    ap.add_argument("--address", default=None, help="Ray cluster to join ('auto', host:port); default: local")
    args = ap.parse_args()

    rules = SmearRules(kitty_size=2)
    ray.init(address=args.address or "local", num_cpus=None if args.address else 2, include_dashboard=False,
             log_to_driver=False)
    config = (
        ppo_config({"kitty_size": 2, "episode": "hand", "reward": "score", "reward_scale": 0.25},
                   policies="shared", hidden_sizes=[128, 128],
                   lr=3e-4, train_batch_size_per_learner=2000, minibatch_size=500, num_epochs=4)
        .env_runners(num_env_runners=1, num_envs_per_env_runner=4)
        .debugging(seed=0)
    )
    algo = config.build_algo()
    for i in range(args.iterations):
        r = algo.train()
        sampled = r["env_runners"]["num_env_steps_sampled_lifetime"]
        print(f"iteration {i + 1}: {sampled:.0f} decisions sampled")
    module = algo.get_module("shared")

    def act(obs: dict) -> int:  # greedy over the legal actions
        batch = {"obs": {OBS_KEY: torch.from_numpy(obs["observation"][None]),
                         MASK_KEY: torch.from_numpy(obs["action_mask"][None].astype(np.float32))}}
        with torch.no_grad():
            logits = module.forward_inference(batch)["action_dist_inputs"][0].numpy()
        return int(np.argmax(np.where(obs["action_mask"] > 0, logits, -np.inf)))

    res = run_match(lambda: CallableAgent(act, "rllib_ppo"), "random", games=args.games, rules=rules, seed=0,
                    max_hands=50).summary()
    print(f"rllib PPO vs random: win rate {res['win_rate_a']:.0%} over {res['games']} duplicate games, "
          f"score margin per hand {res['margin_per_hand_a']:+.2f}")
    algo.stop()
    ray.shutdown()


if __name__ == "__main__":
    main()
