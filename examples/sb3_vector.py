"""Stable-Baselines3 / sb3-contrib: MaskablePPO on the SB3 VecEnv of N games on the batched engine.

    python examples/sb3_vector.py --steps 20000      # CI budget

``SmearSB3VecEnv`` (smear_env.gym.vector_env.sb3) is a ``stable_baselines3`` ``VecEnv`` over the batched
table: MaskablePPO reads the masks through ``env_method("action_masks")`` as it does on any VecEnv. The
learner plays one team (both seats) against random opponents, hand episodes, the per-hand score difference as
reward (times 0.25). At the end the greedy policy plays 400 whole games against random (the first game of each
of 400 lanes) and the win rate is printed with its 95% Wilson interval, beside the untrained network's (greedy
play of any fixed policy already beats random teams often).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import VecMonitor

from smear_env.gym.vector_env import SmearVectorEnv
from smear_env.gym.vector_env.sb3 import SmearSB3VecEnv
from smear_env.tables.stats import wilson_interval


def evaluate(model: MaskablePPO, games: int = 400, seed: int = 1) -> tuple[float, tuple[float, float]]:
    """Greedy win rate (and 95% CI) of the learner's team over the first game of each of ``games`` lanes."""
    env = SmearVectorEnv(games, opponents="random", learning="team", episode="game", reward="win",
                         obs_format="flat")
    obs, info = env.reset(seed=seed)
    result = np.full(games, -1)  # -1 still playing, 1 won, 0 lost
    for _ in range(10_000):  # a game takes a few hundred learner decisions at most
        a, _ = model.predict(obs, action_masks=info["action_mask"], deterministic=True)
        obs, _, term, trunc, info = env.step(a)
        new = (term | trunc) & (result < 0)  # NEXT_STEP: the ending step's info describes the ended game
        result[new] = (info["winner"][new] == info["learner_seat"][new] % 2).astype(int)
        if (result >= 0).all():
            break
    wins = int((result == 1).sum())
    return wins / games, wilson_interval(wins, games)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=200_000, help="learner decisions to train for")
    ap.add_argument("--num-envs", type=int, default=128)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    venv = VecMonitor(SmearSB3VecEnv(args.num_envs, opponents="random", learning="team", episode="hand",
                                     reward="score", score_scale=0.25))
    venv.seed(args.seed)
    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=1024, n_epochs=4, learning_rate=1e-3,
                        gamma=0.99, ent_coef=0.01, seed=args.seed, device="cpu")
    before, _ = evaluate(model)  # the untrained greedy policy (deterministic play already beats random often)
    t0 = time.time()
    model.learn(args.steps)
    train_s = time.time() - t0
    rate, (lo, hi) = evaluate(model)
    print(f"sb3-contrib MaskablePPO on SmearSB3VecEnv({args.num_envs}): {model.num_timesteps} decisions in "
          f"{train_s:.0f} s; greedy team vs random over 400 games: {rate:.1%} [{lo:.1%}, {hi:.1%}] "
          f"(untrained: {before:.1%})")
    return {"decisions": model.num_timesteps, "win_rate": rate, "ci95": (lo, hi),
            "untrained_win_rate": before}


if __name__ == "__main__":
    main()
