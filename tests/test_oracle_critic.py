"""algorithm.oracle_critic (vector_ppo): the privileged features are exactly the other seats' hands, the
kitty and the stock; the critic starts as the policy's value function, is suit-equivariant with
suit_canonical, trains, is saved only in the resume state, and never reaches the policy a checkpoint plays."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from smear_env.agents.checkpoint import load_agent, read_checkpoint
from smear_env.cards import NUM_CARDS
from smear_env.config import SmearRules
from smear_env.observation import SLICES, SUIT_OBS_SOURCE
from smear_env.vector import VectorGame
from training.config import ConfigError, load_config
from training.oracle import PRIV_SIZE, PRIV_SUIT_SOURCE, OracleCritic, privileged_features
from training.policy import SmearPolicy
from training.train import main

ROOT = Path(__file__).resolve().parents[1]
QUICK = str(ROOT / "configs" / "quickstart.yaml")


def _bits(mask: int) -> list[int]:
    return [c for c in range(NUM_CARDS) if mask >> c & 1]


def test_privileged_features_are_the_other_hands_the_kitty_and_the_stock():
    rules = SmearRules(target_score=5)
    vg = VectorGame(32, rules, seed=11)
    rng = np.random.default_rng(0)
    k = rules.kitty_size
    checked = 0
    for _ in range(80):
        lanes = np.arange(32)
        for seat in range(4):
            seats = np.full(32, seat)
            priv = privileged_features(vg, lanes, seats)
            assert priv.shape == (32, PRIV_SIZE) and priv.dtype == np.float32
            for lane in range(0, 32, 7):
                row = priv[lane]
                for r in range(1, 4):
                    got = np.flatnonzero(row[(r - 1) * NUM_CARDS: r * NUM_CARDS]).tolist()
                    assert got == _bits(int(vg.hands[lane, (seat + r) % 4]))
                stock = vg.stock[lane].tolist()
                assert np.flatnonzero(row[96:128]).tolist() == sorted(stock[:k])
                assert np.flatnonzero(row[128:160]).tolist() == sorted(stock[k:])
                # never the deciding seat's own hand (that is in its observation)
                assert not (set(_bits(int(vg.hands[lane, seat]))) & set(np.flatnonzero(row[:96]) % 32))
                checked += 1
        vg.step(vg.random_actions(rng))
    assert checked > 1000


def test_critic_starts_as_the_policys_value_and_is_suit_equivariant():
    torch.manual_seed(0)
    pol = SmearPolicy([32, 32], "relu", shared_trunk=True, suit_canonical=True)
    critic = OracleCritic([32, 32], "relu", suit_canonical=True)
    vg = VectorGame(64, SmearRules(target_score=5), seed=3)
    rng = np.random.default_rng(1)
    obs = torch.from_numpy(vg.observe())
    priv = torch.from_numpy(privileged_features(vg, np.arange(64), vg.to_act))
    critic.init_from_policy(pol)
    with torch.no_grad():
        np.testing.assert_allclose(critic(obs, priv).numpy(), pol.value(obs).numpy(), atol=1e-6)
        noise = torch.rand_like(priv)
        np.testing.assert_allclose(critic(obs, noise).numpy(), pol.value(obs).numpy(), atol=1e-6)
        for m in critic.body:  # then give the privileged inputs weight and check the suit renaming
            if isinstance(m, torch.nn.Linear):
                m.weight.add_(0.1 * torch.randn_like(m.weight))
    checked = 0
    for _ in range(40):
        o = vg.observe()
        pv = privileged_features(vg, np.arange(64), vg.to_act)
        for p in (3, 17, 22):
            o2, pv2 = o[:, SUIT_OBS_SOURCE[p]], pv[:, PRIV_SUIT_SOURCE[p]]
            v1, v2 = critic.values(o, pv), critic.values(o2, pv2)
            hand = o[:, SLICES["hand"]].reshape(-1, 4, 8)
            keys = np.where(o[:, SLICES["trump"]] > 0, 1e6, hand.sum(2) * 256 + hand @ (1 << np.arange(8)))
            ok = np.array([len(set(k.tolist())) == 4 for k in keys])
            np.testing.assert_allclose(v1[ok], v2[ok], atol=1e-5)
            assert not np.allclose(v1, critic.values(o, np.zeros_like(pv)))  # it does read them
            checked += int(ok.sum())
        vg.step(vg.random_actions(rng))
    assert checked > 2000
    with pytest.raises(ValueError, match="suit_canonical"):
        OracleCritic([32, 32], "relu", suit_canonical=False).init_from_policy(pol)


def test_oracle_critic_run_trains_saves_resumes_and_plays_without_it(tmp_path, capsys):
    run = tmp_path / "run"
    base = ["--config", QUICK, "--variant", "tiny", "--set", "rules.target_score=5",
            "--set", "algorithm.name=vector_ppo", "--set", "network.shared_trunk=true",
            "--set", "network.suit_canonical=true", "--set", "algorithm.oracle_critic=true",
            "--set", "output.tensorboard=false"]
    assert main([*base, "--set", "total_timesteps=600", "--run-dir", str(run)]) == 0
    latest = run / "checkpoints" / "latest.safetensors"
    tensors, meta = read_checkpoint(latest)
    critic_keys = [k for k in tensors if k.startswith("critic.")]
    assert critic_keys and not any(k.startswith("policy.") and "critic" in k for k in tensors)
    assert meta["training"]["algorithm"]["oracle_critic"] is True
    before = {k: tensors[k].copy() for k in critic_keys}
    assert main(["--run-dir", str(run), "--resume", "--set", "total_timesteps=1200"]) == 0
    tensors2, meta2 = read_checkpoint(latest)
    assert meta2["step"] >= 1200
    assert any(not np.array_equal(before[k], tensors2[k]) for k in critic_keys)  # the critic trained
    agent = load_agent(latest, SmearRules(target_score=5))  # plays from the policy alone
    vg = VectorGame(4, SmearRules(target_score=5), seed=2)
    assert agent.policy.logits(vg.observe(), vg.legal_mask()).shape == (4, 72)
    # a resume state with no critic weights is refused, naming the cause
    import shutil

    from training.checkpoint import save_tensors

    run2 = tmp_path / "run2"
    shutil.copytree(run, run2)
    for f in (run2 / "checkpoints").glob("*.safetensors"):
        t, m = read_checkpoint(f)
        save_tensors(f, {k: v for k, v in t.items() if not k.startswith("critic.")}, m)
    capsys.readouterr()
    assert main(["--run-dir", str(run2), "--resume", "--set", "total_timesteps=1800"]) != 0
    assert "no critic.* weights" in capsys.readouterr().err


def test_oracle_critic_is_a_vector_ppo_key_only():
    assert load_config(QUICK, ["algorithm.name=vector_ppo", "algorithm.oracle_critic=true"],
                       "tiny").algorithm.oracle_critic is True
    with pytest.raises(ConfigError, match="oracle_critic"):
        load_config(str(ROOT / "configs" / "dmc.yaml"), ["algorithm.oracle_critic=true"])
