"""CleanRL-style masked PPO in one file on the Gymnasium vector env (N games on the batched engine).

    python examples/cleanrl_ppo_vector.py --steps 20000      # CI budget

The learner plays one team (both seats) against random opponents, with hand episodes and the per-hand score
difference as reward (times 0.25). The mask is in the Dict observation (``obs["action_mask"]``, also
``infos["action_mask"]``). Training asks for Gymnasium's SAME_STEP autoreset (``autoreset_mode="SameStep"``;
the env's default is NEXT_STEP): a truncated episode bootstraps from ``infos["final_obs"]``. The evaluation
runs in the default NEXT_STEP mode, where the step that ends a game reports its ``infos["winner"]``: the
greedy policy plays 400 whole games against random (first game of each of 400 lanes) and the win rate is
printed with its 95% Wilson interval, beside the untrained network's (greedy play of any fixed policy already
beats random teams often).
"""

from __future__ import annotations

import argparse
import time

import gymnasium
import numpy as np
import torch
from torch import nn

import smear_env  # noqa: F401  (registers smear_env/SmearSingleSeat-v0 and its vector entry point)
from smear_env.tables.stats import wilson_interval

ENV_ID = "smear_env/SmearSingleSeat-v0"


class Agent(nn.Module):
    def __init__(self, n_obs: int = 493, n_act: int = 72, hidden: int = 128) -> None:
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(n_obs, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                   nn.Linear(hidden, n_act))
        self.critic = nn.Sequential(nn.Linear(n_obs, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                    nn.Linear(hidden, 1))

    def value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x).squeeze(-1)

    def dist(self, x: torch.Tensor, mask: torch.Tensor) -> torch.distributions.Categorical:
        logits = self.actor(x).masked_fill(~mask, -1e8)  # illegal actions get probability 0
        return torch.distributions.Categorical(logits=logits)


def obs_tensors(obs: dict) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.as_tensor(obs["observation"]), torch.as_tensor(obs["action_mask"]).bool()


def evaluate(agent: Agent, games: int = 400, seed: int = 1) -> tuple[float, tuple[float, float]]:
    """Greedy win rate (and 95% CI) of the learner's team over the first game of each of ``games`` lanes."""
    env = gymnasium.make_vec(ENV_ID, num_envs=games, vectorization_mode="vector_entry_point",
                             opponents="random", learning="team", episode="game", reward="win",
                             obs_format="dict")
    obs, _ = env.reset(seed=seed)
    result = np.full(games, -1)  # -1 still playing, 1 won, 0 lost
    for _ in range(10_000):  # a game takes a few hundred learner decisions at most
        with torch.no_grad():
            x, m = obs_tensors(obs)
            a = agent.actor(x).masked_fill(~m, -1e8).argmax(-1).numpy()
        obs, _, term, trunc, info = env.step(a)
        new = (term | trunc) & (result < 0)  # NEXT_STEP: the ending step's info describes the ended game
        result[new] = (info["winner"][new] == info["learner_seat"][new] % 2).astype(int)
        if (result >= 0).all():
            break
    env.close()
    wins = int((result == 1).sum())
    return wins / games, wilson_interval(wins, games)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=200_000, help="learner decisions to train for")
    ap.add_argument("--num-envs", type=int, default=128)
    ap.add_argument("--num-steps", type=int, default=32, help="rollout length per env")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--minibatch", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    gamma, lam, clip, ent_coef, vf_coef = 0.99, 0.95, 0.2, 0.01, 0.5
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # small networks: threads only add overhead
    envs = gymnasium.make_vec(ENV_ID, num_envs=args.num_envs, vectorization_mode="vector_entry_point",
                              opponents="random", learning="team", episode="hand", reward="score",
                              score_scale=0.25, obs_format="dict", autoreset_mode="SameStep")
    assert envs.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    agent = Agent()
    before, _ = evaluate(agent)  # the untrained greedy policy (deterministic play already beats random often)
    opt = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)
    n, t_len = args.num_envs, args.num_steps
    b_obs = torch.zeros(t_len, n, 493)
    b_mask = torch.zeros(t_len, n, 72, dtype=torch.bool)
    b_act, b_logp, b_rew, b_done, b_val, b_boot = (torch.zeros(t_len, n) for _ in range(6))
    obs, _ = envs.reset(seed=args.seed)
    x, m = obs_tensors(obs)
    t0, done_steps = time.time(), 0
    while done_steps < args.steps:
        for t in range(t_len):  # rollout
            with torch.no_grad():
                d = agent.dist(x, m)
                a = d.sample()
                b_obs[t], b_mask[t], b_act[t], b_logp[t], b_val[t] = x, m, a, d.log_prob(a), agent.value(x)
            obs, r, term, trunc, info = envs.step(a.numpy())
            b_rew[t] = torch.as_tensor(r)
            b_done[t] = torch.as_tensor(term | trunc, dtype=torch.float32)
            b_boot[t] = 0.0
            if trunc.any():  # SAME_STEP: the cut-off episode's last observation is in final_obs
                with torch.no_grad():
                    fv = agent.value(torch.as_tensor(info["final_obs"]["observation"]))
                b_boot[t] = torch.where(torch.as_tensor(trunc & ~term), fv, 0.0)
            x, m = obs_tensors(obs)
        done_steps += n * t_len
        with torch.no_grad():  # GAE; next value of step t: the next obs, or (cut off) final_obs, or 0
            adv = torch.zeros(t_len, n)
            last, next_v = torch.zeros(n), agent.value(x)
            for t in reversed(range(t_len)):
                nv = (1 - b_done[t]) * next_v + b_boot[t]
                delta = b_rew[t] + gamma * nv - b_val[t]
                last = delta + gamma * lam * (1 - b_done[t]) * last
                adv[t] = last
                next_v = b_val[t]
            ret = adv + b_val
        f_obs, f_mask = b_obs.reshape(-1, 493), b_mask.reshape(-1, 72)
        f_act, f_logp, f_adv, f_ret = (z.reshape(-1) for z in (b_act, b_logp, adv, ret))
        for _ in range(args.epochs):  # PPO update
            perm = torch.randperm(len(f_act))
            for s in range(0, len(f_act), args.minibatch):
                i = perm[s:s + args.minibatch]
                d = agent.dist(f_obs[i], f_mask[i])
                ratio = (d.log_prob(f_act[i]) - f_logp[i]).exp()
                ad = (f_adv[i] - f_adv[i].mean()) / (f_adv[i].std() + 1e-8)
                pg = -torch.min(ratio * ad, ratio.clamp(1 - clip, 1 + clip) * ad).mean()
                vl = 0.5 * ((agent.value(f_obs[i]) - f_ret[i]) ** 2).mean()
                loss = pg + vf_coef * vl - ent_coef * d.entropy().mean()
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                opt.step()
    envs.close()
    train_s = time.time() - t0
    rate, (lo, hi) = evaluate(agent)
    print(f"cleanrl-style masked PPO: {done_steps} decisions in {train_s:.0f} s; greedy team vs random "
          f"over 400 games: {rate:.1%} [{lo:.1%}, {hi:.1%}] (untrained: {before:.1%})")
    return {"decisions": done_steps, "win_rate": rate, "ci95": (lo, hi), "untrained_win_rate": before}


if __name__ == "__main__":
    main()
