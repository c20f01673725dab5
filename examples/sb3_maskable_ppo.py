"""Stable-Baselines3 / sb3-contrib: MaskablePPO on the registered Gymnasium single-seat env (tiny budget).

    make install && .venv/bin/python examples/sb3_maskable_ppo.py --steps 4096

``gymnasium.make("smear_env/SmearSingleSeat-v0", ...)`` is registered by ``import smear_env``; agents may be
given as spec strings (random, heuristic, pimc, a checkpoint path). MaskablePPO reads ``action_masks()``.
"""

from __future__ import annotations

import argparse

import gymnasium
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.evaluation import evaluate_policy
from stable_baselines3.common.env_checker import check_env
from stable_baselines3.common.monitor import Monitor

import smear_env  # noqa: F401  (registers smear_env/SmearSingleSeat-v0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=4096, help="learner decisions to train for")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads (small networks: more threads only contend on a loaded machine)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    def make() -> gymnasium.Env:
        return gymnasium.make("smear_env/SmearSingleSeat-v0", opponents="random", kitty_size=2,
                              episode="hand", reward="score")

    env = make()
    check_env(env.unwrapped)  # SB3's own checker
    model = MaskablePPO("MlpPolicy", env, n_steps=512, batch_size=128, seed=args.seed, device="cpu")
    model.learn(args.steps)
    mean, std = evaluate_policy(model, Monitor(make()), n_eval_episodes=50, deterministic=True,
                                use_masking=True)
    print(f"sb3-contrib MaskablePPO: {model.num_timesteps} decisions trained; score margin per hand against "
          f"random over 50 hands {mean:+.2f} (std {std:.2f})")


if __name__ == "__main__":
    main()
