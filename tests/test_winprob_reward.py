"""env.reward "winprob" (vector_ppo): the change of a win-probability model's chance at every scored hand,
and algorithm.value_warmup. The rewards of a game must add up to its result minus the chance at its start."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from smear_env.agents.winprob import load_winprob
from training import winprob as train_wp
from training.config import ConfigError, load_config

ROOT = Path(__file__).resolve().parents[1]
QUICK = str(ROOT / "configs" / "quickstart.yaml")
VEC = ["algorithm.name=vector_ppo", "n_envs=16", "algorithm.n_steps=32", "algorithm.gamma=1.0",
       "algorithm.gae_lambda=1.0", "output.tensorboard=false", "env.episode=hand"]


@pytest.fixture(scope="module")
def model_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("winprob_reward") / "wp.safetensors"
    assert train_wp.main(["--team", "heuristic", "--games", "60", "--steps", "200", "--hidden", "8",
                          "--seed", "3", "--out", str(path)]) == 0
    return path


def _cfg(model_file: Path, *overrides: str):
    return load_config(QUICK, [*VEC, "env.reward=winprob", f"env.winprob={model_file}", *overrides], "tiny")


def _trainer(model_file: Path, *overrides: str):
    from training.algorithms.vector_ppo import VectorPPOTrainer

    return VectorPPOTrainer(_cfg(model_file, *overrides), np.random.default_rng(0))


def test_a_games_rewards_add_up_to_its_result_minus_its_chance_at_the_start(model_file: Path) -> None:
    """Against the heuristic (games end), every finished game: team 0's rewards summed over its hands equal
    1 or 0 (who won) minus the model's chance at 0-0 with the game's first dealer; each hand's reward is the
    change of the chance, so within (-1, 1); both signs occur."""
    tr = _trainer(model_file, "selfplay.opponents={self: 0, random: 0, heuristic: 1}")
    model = load_winprob(model_file, tr.rules)
    n = tr.cfg.n_envs
    vg = tr.vg

    def start_chance(lanes: np.ndarray) -> np.ndarray:  # a game's first hand, before any learner decision
        return model.prob(vg.scores[lanes, 0], vg.scores[lanes, 1], (vg.dealer[lanes] & 1) == 0)

    assert (vg.scores == 0).all()
    start = start_chance(np.arange(n))
    total = np.zeros(n)
    hands: list[float] = []
    finished = 0
    real_step, real_reward = tr.table.step, tr._reward
    ended: dict[str, np.ndarray] = {}

    def step(actions):
        out = real_step(actions)
        ended["over"], ended["winner"], ended["cut"] = out[5]["game_over"], out[5]["winner"], out[4]
        return out

    def reward(lanes, r):
        nonlocal finished, start
        assert r.shape == (n, 4)
        np.testing.assert_array_equal(r[:, 0], r[:, 2])
        np.testing.assert_array_equal(r[:, 1], -r[:, 0])
        hands.extend(r[r[:, 0] != 0, 0].tolist())
        total[:] += r[:, 0]
        over = np.flatnonzero(ended["over"])
        for lane in over.tolist():
            result = 1.0 if ended["winner"][lane] == 0 else 0.0
            assert total[lane] == pytest.approx(result - start[lane], abs=1e-5)
            finished += 1
        cut = np.flatnonzero(ended["cut"] & ~ended["over"])
        new = np.concatenate([over, cut])
        total[new] = 0.0
        start[new] = start_chance(new)
        return real_reward(lanes, r)

    tr.table.step, tr._reward = step, reward
    for _ in range(4):
        tr.collect(2048)
    assert finished >= 16
    h = np.array(hands)
    assert (np.abs(h) < 1).all() and (h > 0).any() and (h < 0).any()


def test_hand_returns_are_the_change_of_the_chance(model_file: Path) -> None:
    """gamma = lambda = 1, hand episodes: a decision's return is its hand's reward, the same for every
    decision of a seat in that hand, so returns lie in (-1, 1) and are not the hand's points."""
    tr = _trainer(model_file, "selfplay.opponents={self: 1, random: 0, heuristic: 0}")
    ret = tr.collect(1024)["ret"]
    assert (np.abs(ret) <= 1).all() and (ret > 0).any() and (ret < 0).any()
    assert not np.allclose(ret, np.round(ret * 4) / 4)  # not a score in quarters of points


def test_value_warmup_starts_the_value_head_at_zero_and_trains_only_it(model_file: Path) -> None:
    tr = _trainer(model_file, "algorithm.value_warmup=100000", "network.shared_trunk=true",
                  "selfplay.opponents={self: 1, random: 0, heuristic: 0}")
    torch.nn.init.normal_(tr.policy.vf_head.weight)
    tr.after_warm_start()
    assert not tr.policy.vf_head.weight.any() and not tr.policy.vf_head.bias.any()
    before = {k: v.clone() for k, v in tr.policy.state_dict().items()}
    out = tr.iterate()
    assert out["train/value_warmup"] == 1.0
    after = tr.policy.state_dict()
    moved = {k for k in before if not torch.equal(before[k], after[k])}
    assert moved == {"vf_head.weight", "vf_head.bias"}
    tr.step = 100_000  # past the warm-up: everything learns
    tr.iterate()
    assert not torch.equal(before["pi_head.weight"], tr.policy.state_dict()["pi_head.weight"])


def test_winprob_reward_config_errors(model_file: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="'env.winprob': env.reward 'winprob' needs the path"):
        load_config(QUICK, [*VEC, "env.reward=winprob"], "tiny")
    with pytest.raises(ConfigError, match="'env.winprob': set only with env.reward 'winprob'"):
        load_config(QUICK, [*VEC, f"env.winprob={model_file}"], "tiny")
    with pytest.raises(ConfigError, match="'env.reward': algorithm 'ppo' does not support it.*vector_ppo"):
        load_config(QUICK, ["env.reward=winprob", f"env.winprob={model_file}"], "tiny")
    with pytest.raises(ConfigError, match="'env.win_bonus': only with env.reward 'score'"):
        _cfg(model_file, "env.win_bonus=1.0")
    # the file is read when the trainer starts (as init_from is), so a config names it before it exists
    with pytest.raises(ConfigError, match="'env.winprob':.*target_score"):
        _trainer(model_file, "rules.target_score=21")
    _cfg(tmp_path / "missing.safetensors")
    with pytest.raises(ConfigError, match="'env.winprob':.*does not exist"):
        _trainer(tmp_path / "missing.safetensors")
    with pytest.raises(ConfigError, match="'env.reward'.*'winprob'"):
        load_config(QUICK, [*VEC, "env.reward=chance"], "tiny")
    with pytest.raises(ConfigError, match="'algorithm.value_warmup'"):
        load_config(QUICK, [*VEC, "algorithm.value_warmup=-1"], "tiny")
