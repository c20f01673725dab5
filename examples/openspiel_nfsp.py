"""OpenSpiel: its NFSP (PyTorch) learns python_smear in self-play through rl_environment, then plays random.

    pip install -c constraints/openspiel.txt -e ".[openspiel]"     # or: make test-openspiel
    python examples/openspiel_nfsp.py --seconds 180

Four NFSP agents (one per seat) train on OpenSpiel's ``rl_environment.Environment`` over games to a low
target (``--target-score``, default 5; R21's ``max_cycles`` bounds the long games of early, random-like play).
Their average policies then play ``--eval-games`` games against uniform random (each team in turn); the
example prints the win rate with its 95% interval. OpenSpiel's NFSP draws from numpy's global generator and
torch's: both are seeded from ``--seed``.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import pyspiel
import torch
from open_spiel.python import rl_environment
from open_spiel.python.pytorch import nfsp

import smear_env.envs.integrations.openspiel  # noqa: F401  (registers python_smear)


def play_against_random(env: rl_environment.Environment, agents: list, team: int, games: int,
                        rng: np.random.Generator) -> tuple[int, int]:
    """(games won, games cut off by ``max_cycles``) of ``team`` (seats team, team + 2: the agents' average
    policies) against uniform random."""
    wins = cut = 0
    for _ in range(games):
        ts = env.reset()
        while not ts.last():
            p = ts.observations["current_player"]
            if p % 2 == team:
                with agents[p].temp_mode_as(nfsp.MODE.AVERAGE_POLICY):
                    action = agents[p].step(ts, is_evaluation=True).action
            else:
                legal = ts.observations["legal_actions"][p]
                action = legal[rng.integers(len(legal))]
            ts = env.step([action])
        wins += ts.rewards[team] > 0
        cut += ts.rewards[team] == 0
    return wins, cut


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=180.0, help="training time budget")
    ap.add_argument("--target-score", type=int, default=5)
    ap.add_argument("--max-cycles", type=int, default=400,
                    help="R21: decisions after which a game is cut off")
    ap.add_argument("--eval-games", type=int, default=100, help="games against random per team")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    np.random.seed(args.seed)  # OpenSpiel's NFSP and its reservoir buffer draw from numpy's global generator
    torch.manual_seed(args.seed)
    params = {"target_score": args.target_score, "max_cycles": args.max_cycles}
    game = pyspiel.load_game("python_smear", params)
    env = rl_environment.Environment(game)
    env.seed(args.seed)
    size = env.observation_spec()["info_state"][0]
    actions = env.action_spec()["num_actions"]
    agents = [nfsp.NFSP(p, state_representation_size=size, num_actions=actions, hidden_layers_sizes=[128],
                        reservoir_buffer_capacity=100_000, anticipatory_param=0.1, batch_size=128,
                        rl_learning_rate=0.01, sl_learning_rate=0.01, min_buffer_size_to_learn=1000,
                        learn_every=64, replay_buffer_capacity=50_000, epsilon_decay_duration=100_000,
                        seed=args.seed + p)
              for p in range(4)]
    start = time.perf_counter()
    episodes = decisions = 0
    while time.perf_counter() - start < args.seconds:
        ts = env.reset()
        while not ts.last():
            p = ts.observations["current_player"]
            ts = env.step([agents[p].step(ts).action])
            decisions += 1
        for agent in agents:
            agent.step(ts)
        episodes += 1
    took = time.perf_counter() - start
    print(f"trained {episodes} games ({decisions} decisions) in {took:.0f} s: "
          f"{decisions / took:.0f} decisions/s")
    rng = np.random.default_rng(args.seed + 1)
    env.seed(args.seed + 1)
    results = [play_against_random(env, agents, team, args.eval_games, rng) for team in (0, 1)]
    wins, cut = sum(r[0] for r in results), sum(r[1] for r in results)
    n = 2 * args.eval_games
    rate = wins / n
    half = 1.96 * math.sqrt(max(rate * (1 - rate), 1e-12) / n)
    print(f"NFSP average policy vs random: won {wins} of {n} games, {100 * rate:.1f}% "
          f"[{100 * max(rate - half, 0):.1f}, {100 * min(rate + half, 1):.1f}] (95%); {cut} cut off by "
          f"max_cycles (not won)")


if __name__ == "__main__":
    main()
