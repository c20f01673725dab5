"""Tianshou 2.x: a masked DQN shared by the four seats learns smear_v0 in self-play (tiny budget).

    pip install -c constraints/tianshou.txt -e ".[tianshou]"     # or: make test-tianshou
    python examples/tianshou_dqn.py --steps 2000

The env is Tianshou's own ``PettingZooEnv`` around ``smear_v0.env()``; see
smear_env.envs.integrations.tianshou.
"""

from __future__ import annotations

import argparse
import logging

import numpy as np
import torch
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.trainer import OffPolicyTrainerParams

from smear_env.envs.integrations.tianshou import masked_dqn, tianshou_env


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=2000, help="env steps (decisions) to train for")
    ap.add_argument("--envs", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads (small networks: more threads only contend on a loaded machine)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    # Tianshou's statistics warn about the rewards being vectors over the four seats
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)

    def make() -> object:
        return tianshou_env(kitty_size=2, episode="hand", reward="score")

    np.random.seed(args.seed)  # Tianshou's epsilon-greedy exploration draws from numpy's global generator
    torch.manual_seed(args.seed)
    train_envs, test_envs = DummyVectorEnv([make] * args.envs), DummyVectorEnv([make] * 2)
    train_envs.seed(args.seed)
    test_envs.seed(args.seed + 1)
    algo = masked_dqn(make(), policies="shared", hidden_sizes=[128, 128], lr=1e-3, eps_training=0.1)
    train = Collector[CollectStats](algo, train_envs, VectorReplayBuffer(20_000, len(train_envs)),
                                    exploration_noise=True)
    test = Collector[CollectStats](algo, test_envs)
    train.reset()
    train.collect(n_step=256)
    result = algo.run_training(OffPolicyTrainerParams(
        training_collector=train, test_collector=test, max_epochs=1, epoch_num_steps=args.steps,
        collection_step_num_env_steps=64, test_step_num_episodes=4, batch_size=64,
        update_step_num_gradient_steps_per_sample=0.25, test_in_training=False, show_progress=False,
        verbose=False,
        multi_agent_return_reduction=lambda rews: rews[:, 0],  # team 0's score margin per hand
    ))
    stats = test.collect(n_episode=8, reset_before_collect=True)
    print(f"tianshou masked DQN: {result.train_step} training decisions, {result.update_step} updates; "
          f"{stats.n_collected_episodes} greedy test hands ({stats.n_collected_steps} decisions); "
          f"team 0 score margin per hand {float(np.mean(stats.returns[:, 0])):+.2f}")


if __name__ == "__main__":
    main()
