"""smear_v0 for Ray RLlib (new API stack; tested with ray 2.60, ``pip install "smear-rl[rllib]"``).

RLlib's own ``PettingZooEnv`` wrapper runs the AEC env, but its action-masking RLModule
(``ActionMaskingTorchRLModule``) reads the observation under the key ``observations`` while PettingZoo's
classic envs name it ``observation``; :class:`SmearMultiAgentEnv` is the adapter (and steps the raw env
directly, without PettingZoo's wrappers). It is registered with Ray Tune as ``"smear_v0"`` when this module is
imported, so RLlib's own example code runs with one import::

    import smear_env.envs.integrations.rllib  # registers "smear_v0"
    from ray.rllib.algorithms.ppo import PPOConfig  # lazy: heavy (RLlib's PPO), only to build a learner
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    config = PPOConfig().environment("smear_v0").rl_module(rl_module_spec=RLModuleSpec(
        module_class=ActionMaskingTorchRLModule))

The adapter rather than an observation option on ``smear_v0``: PettingZoo's classic convention names the key
``observation`` and every other PettingZoo client (Tianshou's ``PettingZooEnv``, TorchRL's
``PettingZooWrapper``, SuperSuit, AgileRL) reads that name, and ``PettingZooEnv`` would also credit each
agent only the rewards of its own step, not those its team earns while the other seats move.

:class:`SmearMultiAgentEnv` (``MultiAgentEnv``), turn-based:
    * agents ``player_0`` .. ``player_3``; each ``reset``/``step`` returns the observation of the one agent
      to act: ``{"observations": Box(float32, (493,)), "action_mask": Box(0, 1, (72,), float32)}``;
    * rewards as :mod:`smear_env.envs.aec` (options ``episode``, ``reward``): every reward an agent's team
      earns after its action is handed to it with its next observation, so RLlib credits it to that action;
      when the episode ends, all four agents get their last observation, their outstanding reward and
      ``terminated`` (``truncated`` after ``max_cycles``, R21);
    * ``env_config``: every option of ``smear_v0.env()`` (rule options, ``episode``, ``reward``,
      ``max_cycles``) plus ``reward_scale`` (a multiplier, default 1) and ``obs_scale`` (a per-feature
      multiplier of the observation vector, length 493, default none) for trainers that normalise.

Policies (``policies=``): ``"shared"`` (one module plays all four seats: self-play) or ``"team"`` (module
``team_0`` for ``player_0``/``player_2``, ``team_1`` for ``player_1``/``player_3``).

    from smear_env.envs.integrations.rllib import ppo_config
    algo = ppo_config({"kitty_size": 2}, policies="shared", hidden_sizes=[128, 128]).build_algo()
    print(algo.train()["env_runners"]["num_env_steps_sampled_lifetime"])

The env is registered with Ray Tune as :data:`ENV_NAME` on import (and by :func:`register`, which
:func:`ppo_config` calls: a Ray worker that did not import this module registers it there too);
RLlib on a Ray cluster needs ``smear-rl`` installed on every node (the env and module classes are imported
there by name).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from ...core.actions import NUM_ACTIONS
from ...engine.observation import OBS_SIZE, observation_bounds
from ..aec import AGENTS, raw_env

ENV_NAME = "smear_v0"
OBS_KEY = "observations"
MASK_KEY = "action_mask"
POLICY_MODES = ("shared", "team")


def module_ids(policies: str = "shared") -> list[str]:
    """The RLModule ids of a policy mode: ``["shared"]`` or ``["team_0", "team_1"]``."""
    if policies == "shared":
        return ["shared"]
    if policies == "team":
        return ["team_0", "team_1"]
    raise ValueError(f"policies={policies!r} is not allowed; allowed values: 'shared', 'team'")


def policy_mapping_fn(policies: str = "shared") -> Any:
    """RLlib's ``policy_mapping_fn(agent_id, episode, **kwargs) -> module id`` for a policy mode."""
    module_ids(policies)  # validates
    if policies == "shared":
        return _map_shared
    return _map_team


def _map_shared(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    return "shared"


def _map_team(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    return f"team_{AGENTS.index(agent_id) & 1}"


class _LegalDiscrete(spaces.Discrete):
    """``Discrete(72)`` whose ``sample()`` without a mask draws a legal action of its agent when that agent
    is to act (RLlib's env checker steps sampled actions); pickled (sent to other Ray workers) as a plain
    ``Discrete``."""

    def __init__(self, n: int, env: SmearMultiAgentEnv, agent: str) -> None:
        super().__init__(n)
        self._env = weakref.ref(env)
        self._agent = agent

    def sample(self, mask: Any = None, probability: Any = None) -> np.int64:
        env = self._env()
        if mask is None and probability is None and env is not None and env.env.game is not None:
            legal = env.env.observe(self._agent)["action_mask"]
            if legal.any():
                return super().sample(mask=legal)
        return super().sample(mask=mask, probability=probability)

    def __reduce__(self) -> tuple:
        return (spaces.Discrete, (int(self.n),))


class SmearMultiAgentEnv(MultiAgentEnv):
    """smear_v0 as an RLlib ``MultiAgentEnv`` (see the module docstring)."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        opts = dict(config or {})  # an EnvContext is a dict with extra attributes
        self.reward_scale = float(opts.pop("reward_scale", 1.0))
        scale = opts.pop("obs_scale", None)
        self.obs_scale = None if scale is None else np.asarray(scale, dtype=np.float32)
        if self.obs_scale is not None and self.obs_scale.shape != (OBS_SIZE,):
            raise ValueError(
                f"env_config obs_scale must have {OBS_SIZE} values, got shape {self.obs_scale.shape}")
        self.env = raw_env(**opts)
        low, high = observation_bounds(self.env.rules, self.env.max_cycles)  # tight, per feature
        if self.obs_scale is not None:
            low, high = np.minimum(low * self.obs_scale, high * self.obs_scale), np.maximum(
                low * self.obs_scale, high * self.obs_scale)
        obs_space = spaces.Dict({
            OBS_KEY: spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32),
            MASK_KEY: spaces.Box(0.0, 1.0, (NUM_ACTIONS,), dtype=np.float32),
        })
        self.agents = self.possible_agents = list(AGENTS)
        self.observation_spaces = dict.fromkeys(AGENTS, obs_space)
        self.action_spaces = {a: _LegalDiscrete(NUM_ACTIONS, self, a) for a in AGENTS}
        self._owed = dict.fromkeys(AGENTS, 0.0)

    def _observe(self, agent: str) -> dict[str, np.ndarray]:
        o = self.env.observe(agent)
        obs = o["observation"] if self.obs_scale is None else o["observation"] * self.obs_scale
        return {OBS_KEY: obs, MASK_KEY: o["action_mask"].astype(np.float32)}

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        self.env.reset(seed=seed)
        self._owed = dict.fromkeys(AGENTS, 0.0)
        agent = self.env.agent_selection
        return {agent: self._observe(agent)}, {}

    def step(self, action_dict: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        env = self.env
        agent = env.agent_selection
        if agent not in action_dict:
            raise ValueError(f"{agent} is to act but action_dict has actions for {sorted(action_dict)}")
        env.step(int(action_dict[agent]))
        for a, r in env.rewards.items():
            self._owed[a] += r * self.reward_scale
        terminated = any(env.terminations.values())
        truncated = any(env.truncations.values())
        if terminated or truncated:
            obs = {a: self._observe(a) for a in AGENTS}
            rew = dict(self._owed)
            self._owed = dict.fromkeys(AGENTS, 0.0)
            term = dict.fromkeys(AGENTS, terminated) | {"__all__": terminated}
            trunc = dict.fromkeys(AGENTS, truncated) | {"__all__": truncated}
            return obs, rew, term, trunc, {}
        nxt = env.agent_selection
        rew = {nxt: self._owed[nxt]}
        self._owed[nxt] = 0.0
        return {nxt: self._observe(nxt)}, rew, {"__all__": False}, {"__all__": False}, {}

    def render(self) -> Any:
        return self.env.render()


def env_creator(config: dict[str, Any] | None = None) -> SmearMultiAgentEnv:
    return SmearMultiAgentEnv(config)


def register() -> str:
    """Register :class:`SmearMultiAgentEnv` with Ray Tune under :data:`ENV_NAME`; returns the name."""
    from ray.tune.registry import register_env  # lazy: heavy (Ray Tune), only to register

    register_env(ENV_NAME, env_creator)
    return ENV_NAME


def module_spec(policies: str = "shared", hidden_sizes: Sequence[int] = (256, 256),
                activation: str = "relu") -> Any:
    """The ``MultiRLModuleSpec``: RLlib's ``ActionMaskingTorchRLModule`` (PPO, logits of illegal actions
    pushed to the float minimum) per module id, an MLP policy and a separate MLP value network of
    ``hidden_sizes`` with ``activation`` ("relu" or "tanh"), a linear head on each."""
    # lazy: heavy (RLlib's torch modules), only to build a learner
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    if activation not in ("relu", "tanh"):
        raise ValueError(
            f"activation {activation!r} is not allowed with RLlib; allowed values: 'relu', 'tanh'")
    model_config = {"fcnet_hiddens": [int(h) for h in hidden_sizes], "fcnet_activation": activation,
                    "vf_share_layers": False, "head_fcnet_hiddens": []}
    return MultiRLModuleSpec(rl_module_specs={
        mid: RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config=dict(model_config))
        for mid in module_ids(policies)
    })


def ppo_config(env_config: dict[str, Any] | None = None, *, policies: str = "shared",
               hidden_sizes: Sequence[int] = (256, 256), activation: str = "relu", **training: Any) -> Any:
    """A ``PPOConfig`` for smear_v0: the registered env, the masked module spec and the policy mapping of
    ``policies``; ``training`` goes to ``PPOConfig.training`` (``lr``, ``train_batch_size_per_learner``,
    ``minibatch_size``, ``num_epochs``, ...). Change anything else on the returned config before
    ``build_algo()``.

    The env runners' ``sample_timeout_s`` is ``None`` (wait for the samples): PPO samples in turn with its
    update, and with RLlib's 60 s default a runner slowed by a loaded machine has its samples thrown away, so
    ``train()`` returns a result without ``env_runners`` and trains on nothing."""
    from ray.rllib.algorithms.ppo import PPOConfig  # lazy: heavy (RLlib's PPO), only to build a learner

    cfg = (
        PPOConfig()
        .environment(register(), env_config=dict(env_config or {}))
        .env_runners(sample_timeout_s=None)
        .multi_agent(policies=set(module_ids(policies)), policy_mapping_fn=policy_mapping_fn(policies))
        .rl_module(rl_module_spec=module_spec(policies, hidden_sizes, activation))
    )
    if training:
        cfg = cfg.training(**training)
    return cfg


register()

__all__ = ["ENV_NAME", "SmearMultiAgentEnv", "env_creator", "module_ids", "module_spec", "policy_mapping_fn",
           "ppo_config", "register"]
