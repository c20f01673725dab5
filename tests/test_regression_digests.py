"""Pinned digests: the game loop gives the same games, rewards and trajectories as before it was unified.

Every front end (``smear-eval``, the PettingZoo env, the single-seat env, the trainers' collectors and
in-training evaluation) runs its games through one table layer. These digests were taken on the code
before that refactor; a change of any of them is a behaviour change that needs a reason (update the
digest in the same commit and say why).

Changes so far: the ``smear-eval`` records changed once, when agents' generators became hash-derived
(``smear_env.evaluation.duplicate.agent_rng``) so that they no longer carry the key of the deals; the same
refactor with the old generators reproduced the first digests.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from smear_env.core.config import SmearRules


def _digest(*parts: object) -> str:
    h = hashlib.sha256()
    for p in parts:
        if isinstance(p, np.ndarray):
            h.update(str(p.dtype).encode())
            h.update(np.ascontiguousarray(p).tobytes())
        else:
            h.update(json.dumps(p, sort_keys=True, separators=(",", ":")).encode())
    return h.hexdigest()[:16]


def _eval_records(tmp_path, *argv: str) -> str:
    from smear_env.evaluation.cli import main

    out = tmp_path / "records.jsonl"
    assert main([*argv, "--json", "--records", str(out)]) == 0
    return hashlib.sha256(out.read_bytes()).hexdigest()[:16]


def test_smear_eval_heuristic_vs_random_records(tmp_path, capsys):
    d = _eval_records(tmp_path, "heuristic", "random", "--games", "4", "--seed", "3")
    assert d == "1b44fe3d6bec0d40"


def test_smear_eval_pimc_vs_heuristic_records(tmp_path, capsys):
    d = _eval_records(tmp_path, "pimc:samples=2", "heuristic", "--games", "2", "--seed", "1",
                      "--target-score", "5")
    assert d == "29d034ad659a73a8"


def test_smear_eval_rule_options_records(tmp_path, capsys):
    d = _eval_records(tmp_path, "heuristic", "random", "--games", "2", "--seed", "5", "--kitty-size", "0",
                      "--all-pass", "dealer_must_bid", "--high-low", "in_play", "--win-requires-bid",
                      "--cap-defenders", "--game-point-tie", "bidder", "--target-score", "7",
                      "--max-hands", "6")
    assert d == "8801cb712442ed61"


def _pz_trajectory(reward: str, episode: str, episodes: int, seed: int) -> str:
    from smear_env.envs.aec import raw_env

    env = raw_env(reward=reward, episode=episode, target_score=7)
    rng = np.random.default_rng(seed)
    parts: list[object] = []
    for ep in range(episodes):
        env.reset(seed=seed + ep)
        for agent in env.agent_iter(max_iter=5000):
            obs, rew, term, trunc, _info = env.last()
            parts += [agent, float(rew), bool(term), bool(trunc), obs["observation"]]
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(legal.size)]))
        parts.append(env.unwrapped.record())
    return _digest(*parts)


@pytest.mark.parametrize(("reward", "episode", "episodes", "pin"), [
    ("win", "game", 2, "0697c75b01ed0bb9"),
    ("score", "game", 1, "189c47c77f4e4bea"),
    ("score", "hand", 1, "97e14110e8d6b80d"),
    ("win", "hand", 1, "d4d6cb79a1ca96b3"),
])
def test_pettingzoo_env_trajectory(reward, episode, episodes, pin):
    assert _pz_trajectory(reward, episode, episodes, 11) == pin


def _single_seat_trajectory(reward: str, episode: str, learning: str, episodes: int, seed: int) -> str:
    from smear_env.agents.heuristic import HeuristicAgent
    from smear_env.gym.single_seat import SmearSingleSeatEnv

    rules = SmearRules(target_score=7)
    env = SmearSingleSeatEnv(HeuristicAgent(rules), learning=learning, reward=reward, episode=episode,
                             rules=rules)
    rng = np.random.default_rng(seed)
    parts: list[object] = []
    for ep in range(episodes):
        obs, info = env.reset(seed=seed + ep)
        parts += [obs, int(info["seat"])]
        done = False
        while not done:
            legal = np.flatnonzero(env.action_masks())
            obs, r, term, trunc, info = env.step(int(legal[rng.integers(legal.size)]))
            parts += [obs, float(r), term, trunc, int(info["seat"]), info["scores"].tolist()]
            done = term or trunc
        parts.append(env.record())
    return _digest(*parts)


@pytest.mark.parametrize(("reward", "episode", "learning", "episodes", "pin"), [
    ("win", "game", "seat", 2, "645d3e694615b06b"),
    ("score", "game", "team", 1, "81ad2e0645fff6f7"),
    ("score", "hand", "seat", 1, "aad416b5eb2e147f"),
])
def test_single_seat_env_trajectory(reward, episode, learning, episodes, pin):
    assert _single_seat_trajectory(reward, episode, learning, episodes, 5) == pin


def test_imitation_collector_data():
    pytest.importorskip("torch")
    from training.algorithms.imitation import generate

    data = generate("heuristic", {"target_score": 5}, 300, seed=4, epsilon=0.2)
    assert _digest(data["obs"], data["mask"], data["act"], data["ret"]) == "37b9f172045287df"


def _tiny_cfg(*overrides: str):
    from pathlib import Path

    from training.config import load_config

    quick = Path(__file__).resolve().parents[1] / "configs" / "quickstart.yaml"
    return load_config(quick, ["rules.target_score=5", "output.tensorboard=false", *overrides], "tiny")


@pytest.mark.parametrize(("episode", "reward", "pin"), [
    ("hand", "score", "e53f06b905a0ae6e"),
    ("game", "score", "ab6b9242d1055966"),
])
def test_ppo_collector_batch(episode, reward, pin):
    torch = pytest.importorskip("torch")
    from training.algorithms.ppo import PPOTrainer

    torch.manual_seed(0)
    cfg = _tiny_cfg(f"env.episode={episode}", f"env.reward={reward}", "env.win_bonus=0.5",
                    "n_envs=4",
                    "selfplay.opponents={self: 0.5, heuristic: 0.3, random: 0.2}")
    tr = PPOTrainer(cfg, np.random.default_rng(0))
    batch = tr.collect(250)
    ret = np.round(batch["ret"].astype(np.float64), 4)
    assert _digest(batch["obs"], batch["mask"], batch["act"], ret) == pin


def test_in_training_evaluation():
    torch = pytest.importorskip("torch")
    from training.evaluation import evaluate_policy
    from training.policy import SmearPolicy

    torch.manual_seed(0)
    policy = SmearPolicy([32], "relu").eval()
    r = evaluate_policy(policy, "heuristic", SmearRules(target_score=5), games=4, seed=2)
    r = {k: (round(v, 6) if isinstance(v, float) else v) for k, v in r.items()}
    assert _digest(r) == "4daaf898770a8212"


@pytest.mark.parametrize(("episode", "reward", "pin"), [
    ("hand", "score", "cef3a1b1cf68bd65"),
    ("game", "score", "8a2f6dc54873d666"),
])
def test_vector_ppo_collector_batch(episode, reward, pin):
    """vector_ppo's first rollout batch for a fixed seed (through the batched table, heuristic and random
    opponents, the table's shaped rewards)."""
    torch = pytest.importorskip("torch")
    from training.algorithms.vector_ppo import VectorPPOTrainer

    torch.manual_seed(0)
    cfg = _tiny_cfg("algorithm.name=vector_ppo", f"env.episode={episode}", f"env.reward={reward}",
                    "env.win_bonus=0.5", "n_envs=4",
                    "selfplay.opponents={self: 0.5, heuristic: 0.3, random: 0.2}")
    tr = VectorPPOTrainer(cfg, np.random.default_rng(0))
    batch = tr.collect(250)
    ret = np.round(batch["ret"].astype(np.float64), 4)
    assert _digest(batch["obs"], batch["mask"], batch["act"], ret) == pin
