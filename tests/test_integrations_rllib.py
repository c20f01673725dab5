"""smear_env.envs.integrations.rllib: the RLlib MultiAgentEnv adapter, policy mapping, module spec, and one
PPO iteration on a local Ray. Skipped unless ray[rllib] is installed (``make test-rllib``)."""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

from gymnasium import spaces  # noqa: E402

from smear_env import smear_v0  # noqa: E402
from smear_env.envs.aec import AGENTS  # noqa: E402
from smear_env.envs.integrations.rllib import (  # noqa: E402
    MASK_KEY,
    OBS_KEY,
    SmearMultiAgentEnv,
    module_ids,
    module_spec,
    policy_mapping_fn,
)


def play(env: SmearMultiAgentEnv, seed: int, rng: np.random.Generator) -> tuple[dict, list[int], dict]:
    """Random legal play to the end; (total reward per agent, actions, final terminateds/truncateds)."""
    obs, _ = env.reset(seed=seed)
    totals = dict.fromkeys(AGENTS, 0.0)
    actions = []
    while True:
        (agent,) = obs
        assert set(obs[agent]) == {OBS_KEY, MASK_KEY}
        assert obs[agent][OBS_KEY].dtype == np.float32 and obs[agent][MASK_KEY].dtype == np.float32
        assert env.observation_spaces[agent].contains(obs[agent])
        legal = np.flatnonzero(obs[agent][MASK_KEY])
        a = int(legal[rng.integers(legal.size)])
        actions.append(a)
        obs, rew, term, trunc, _ = env.step({agent: a})
        assert set(rew) <= set(obs)  # a reward only comes with that agent's observation
        for k, r in rew.items():
            totals[k] += r
        if term["__all__"] or trunc["__all__"]:
            assert set(obs) == set(AGENTS)
            return totals, actions, {"term": term, "trunc": trunc}
        assert len(obs) == 1


@pytest.mark.parametrize("reward", ["score", "win"])
def test_rewards_match_the_aec_env_and_partners_share_them(reward):
    opts = {"reward": reward, "target_score": 5, "kitty_size": 2, "max_cycles": 600}
    env = SmearMultiAgentEnv(opts)
    rng = np.random.default_rng(0)
    for seed in range(4):
        totals, actions, ends = play(env, seed, rng)
        ref = smear_v0.raw_env(**opts)
        ref.reset(seed=seed)
        ref_totals = dict.fromkeys(AGENTS, 0.0)
        for a in actions:
            ref.step(a)
            for k, r in ref.rewards.items():
                ref_totals[k] += r
        assert totals == ref_totals
        assert totals["player_0"] == totals["player_2"] and totals["player_1"] == totals["player_3"]
        assert totals["player_0"] == -totals["player_1"]
        assert ends["term"]["__all__"] != ends["trunc"]["__all__"]


def test_reward_and_obs_scale_options():
    scale = np.full(493, 0.5, dtype=np.float32)
    plain = SmearMultiAgentEnv({"episode": "hand", "reward": "score"})
    scaled = SmearMultiAgentEnv({"episode": "hand", "reward": "score", "reward_scale": 0.25,
                                 "obs_scale": scale.tolist()})
    t1, _, _ = play(plain, 7, np.random.default_rng(1))
    t2, _, _ = play(scaled, 7, np.random.default_rng(1))
    assert t2 == {k: v * 0.25 for k, v in t1.items()}
    o1, _ = plain.reset(seed=2)
    o2, _ = scaled.reset(seed=2)
    (agent,) = o1
    assert np.array_equal(o2[agent][OBS_KEY], o1[agent][OBS_KEY] * 0.5)
    with pytest.raises(ValueError, match="493"):
        SmearMultiAgentEnv({"obs_scale": [1.0, 2.0]})


def test_action_space_samples_legal_actions_and_pickles_as_discrete():
    env = SmearMultiAgentEnv({})
    obs, _ = env.reset(seed=0)
    (agent,) = obs
    legal = set(np.flatnonzero(obs[agent][MASK_KEY]).tolist())
    assert {int(env.action_spaces[agent].sample()) for _ in range(50)} <= legal
    copy = pickle.loads(pickle.dumps(env.action_spaces[agent]))
    assert type(copy) is spaces.Discrete and copy == spaces.Discrete(72)


def test_bad_options_and_actions_are_clear_errors():
    with pytest.raises(ValueError, match="kitty_sise"):
        SmearMultiAgentEnv({"kitty_sise": 2})
    env = SmearMultiAgentEnv({})
    obs, _ = env.reset(seed=0)
    (agent,) = obs
    other = next(a for a in AGENTS if a != agent)
    with pytest.raises(ValueError, match=f"{agent} is to act"):
        env.step({other: 0})


def test_policy_mapping_and_module_spec():
    assert module_ids("shared") == ["shared"] and module_ids("team") == ["team_0", "team_1"]
    shared, team = policy_mapping_fn("shared"), policy_mapping_fn("team")
    assert [shared(a, None) for a in AGENTS] == ["shared"] * 4
    assert [team(a, None) for a in AGENTS] == ["team_0", "team_1", "team_0", "team_1"]
    with pytest.raises(ValueError, match="'shared', 'team'"):
        policy_mapping_fn("seat")
    spec = module_spec("team", hidden_sizes=[32], activation="tanh")
    assert set(spec.rl_module_specs) == {"team_0", "team_1"}
    assert spec.rl_module_specs["team_0"].model_config["fcnet_hiddens"] == [32]
    with pytest.raises(ValueError, match="gelu"):
        module_spec(activation="gelu")


def test_ppo_config_waits_for_samples_on_a_loaded_machine():
    from smear_env.envs.integrations.rllib import ppo_config

    cfg = ppo_config({"kitty_size": 2}).env_runners(num_env_runners=2)
    assert cfg.sample_timeout_s is None  # RLlib's 60 s default drops a slow runner's samples


def test_one_ppo_iteration_with_team_policies_on_local_ray():
    import ray

    from smear_env.envs.integrations.rllib import ppo_config

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        algo = (
            ppo_config({"episode": "hand", "reward": "score", "kitty_size": 2}, policies="team",
                       hidden_sizes=[32], train_batch_size_per_learner=256, minibatch_size=128, num_epochs=1)
            .env_runners(num_env_runners=0, num_envs_per_env_runner=1)
            .debugging(seed=0)
            .build_algo()
        )
        result = algo.train()
        assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 256
        assert set(result["learners"]) >= {"team_0", "team_1"}
        algo.stop()
    finally:
        ray.shutdown()


def test_rllibs_own_action_masking_example_runs_after_one_import():
    """RLlib's documented path: the env by name, its own ActionMaskingTorchRLModule, nothing else from this
    project than ``import smear_env.envs.integrations.rllib`` (which registers "smear_v0")."""
    code = """
import ray
import smear_env.envs.integrations.rllib  # noqa: F401
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
config = (PPOConfig().environment("smear_v0", env_config={"episode": "hand"})
          .env_runners(num_env_runners=0, sample_timeout_s=None)
          .multi_agent(policies={"p"}, policy_mapping_fn=lambda agent_id, episode, **kw: "p")
          .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={"p": RLModuleSpec(
              module_class=ActionMaskingTorchRLModule, model_config={"fcnet_hiddens": [32]})}))
          .training(train_batch_size_per_learner=128, minibatch_size=64, num_epochs=1))
algo = config.build_algo()
print(algo.train()["env_runners"]["num_env_steps_sampled_lifetime"])
algo.stop()
ray.shutdown()
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert float(out.stdout.strip().splitlines()[-1]) >= 128
