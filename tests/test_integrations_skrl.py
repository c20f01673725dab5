"""skrl clients written from skrl's own documentation (skipped unless skrl is installed: make test-clients,
the venv of constraints/clients.txt). Its ``wrap_env`` on the Gymnasium vector env, then its PPO agent with a
``RandomMemory`` and a ``SequentialTrainer``, the models written as skrl documents custom models
(``CategoricalMixin`` / ``DeterministicMixin`` + ``Model``, a ``Dict`` observation space unflattened with
``unflatten_tensorized_space``).

skrl has no action-mask API (its agents and ``CategoricalMixin`` sample from the model's logits as they are),
so the mask is applied where skrl lets a user put it: in the policy model, which reads ``action_mask`` from
the ``obs_format="dict"`` observation and sets the logits of illegal actions to -inf. skrl's wrapper takes
the observation a vector env returns after an episode end as the next episode's first one (same-step
autoreset), so the env runs with ``autoreset_mode="SameStep"``; the env raises on an illegal action
(``illegal_action="raise"``), so a finished run is one where every sampled action was legal.

skrl's multi-agent algorithms (IPPO, MAPPO) take PettingZoo's parallel API only, where every live agent acts
at every step: on ``turn_based_aec_to_parallel(smear_v0.raw_env())`` they run, but each seat's memory holds
every step, the three in which its action is ignored too (its mask is all zero then; the model below lets it
pick any action there). That is skrl's limit for turn-based games, not a masking problem; the single-seat
view above is the path that learns from the learner's own decisions only. ``IPPO_CFG``'s dict-valued defaults
(``*_kwargs``) must be given per agent: skrl 2.1.1 refuses its own empty defaults ("Specified keys (set()) do
not match possible agents")."""

from __future__ import annotations

import gymnasium
import pytest

pytest.importorskip("skrl")

import torch  # noqa: E402
from skrl.agents.torch.ppo import PPO, PPO_CFG  # noqa: E402
from skrl.envs.wrappers.torch import wrap_env  # noqa: E402
from skrl.memories.torch import RandomMemory  # noqa: E402
from skrl.models.torch import CategoricalMixin, DeterministicMixin, Model  # noqa: E402
from skrl.multi_agents.torch.ippo import IPPO, IPPO_CFG  # noqa: E402
from skrl.trainers.torch import SequentialTrainer  # noqa: E402
from skrl.utils.spaces.torch import unflatten_tensorized_space  # noqa: E402

import smear_env  # noqa: E402,F401  (registers the env ids)
from smear_env import smear_v0  # noqa: E402

ID = "smear_env/SmearSingleSeat-v0"


class MaskedPolicy(CategoricalMixin, Model):
    """A categorical policy whose logits are -inf on the actions the observation's ``action_mask`` forbids."""

    def __init__(self, observation_space, action_space, device):
        Model.__init__(self, observation_space=observation_space, action_space=action_space, device=device)
        CategoricalMixin.__init__(self, unnormalized_log_prob=True)
        self.net = torch.nn.Sequential(torch.nn.Linear(493, 64), torch.nn.Tanh(), torch.nn.Linear(64, 72))

    def compute(self, inputs, role=""):
        obs = unflatten_tensorized_space(self.observation_space, inputs["observations"])
        legal = obs["action_mask"] > 0.5
        legal = legal | ~legal.any(-1, keepdim=True)  # none legal: not its turn, action ignored
        return self.net(obs["observation"]).masked_fill(~legal, float("-inf")), {}


class Value(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device):
        Model.__init__(self, observation_space=observation_space, action_space=action_space, device=device)
        DeterministicMixin.__init__(self)
        self.net = torch.nn.Sequential(torch.nn.Linear(493, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))

    def compute(self, inputs, role=""):
        obs = unflatten_tensorized_space(self.observation_space, inputs["observations"])
        return self.net(obs["observation"]), {}


def test_wrap_env_and_masked_ppo_on_the_vector_env():
    torch.manual_seed(0)
    vec = gymnasium.make_vec(ID, num_envs=4, vectorization_mode="vector_entry_point", obs_format="dict",
                             episode="hand", autoreset_mode="SameStep", normalize=True)
    env = wrap_env(vec, wrapper="gymnasium", verbose=False)
    assert env.num_envs == 4 and env.action_space.n == 72
    device = env.device
    models = {"policy": MaskedPolicy(env.observation_space, env.action_space, device),
              "value": Value(env.observation_space, env.action_space, device)}
    cfg = PPO_CFG(rollouts=32, learning_epochs=2, mini_batches=2)
    memory = RandomMemory(memory_size=32, num_envs=env.num_envs, device=device)
    agent = PPO(models=models, memory=memory, cfg=cfg, observation_space=env.observation_space,
                action_space=env.action_space, device=device)
    before = [p.detach().clone() for p in models["policy"].parameters()]
    trainer = SequentialTrainer(cfg={"timesteps": 96, "headless": True, "disable_progressbar": True,
                                     "close_environment_at_exit": False}, env=env, agents=agent)
    trainer.train()  # the env raises on an illegal action: every sampled action was legal
    after = list(models["policy"].parameters())  # three PPO updates changed the policy
    assert any(not torch.equal(a, b) for a, b in zip(before, after, strict=True))
    # the greedy policy of the trained model, stepped by hand through skrl's wrapper, plays legal actions only
    obs, _ = env.reset()
    for _ in range(20):
        with torch.no_grad():
            logits, _ = models["policy"].compute({"observations": obs})
        mask = unflatten_tensorized_space(env.observation_space, obs)["action_mask"].bool()
        actions = logits.argmax(-1)
        assert mask.gather(-1, actions.unsqueeze(-1)).all()
        obs, reward, terminated, truncated, _ = env.step(actions.unsqueeze(-1))
        assert reward.shape == (4, 1) and terminated.shape == (4, 1) and not truncated.any()
    env.close()


def test_wrap_env_and_ippo_on_the_parallel_form():
    """skrl's PettingZoo wrapper (parallel API) and IPPO, one policy and value model per seat."""
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    torch.manual_seed(0)
    env = wrap_env(turn_based_aec_to_parallel(smear_v0.raw_env(episode="hand")), verbose=False)
    assert type(env).__name__ == "PettingZooWrapper" and env.num_agents == 4
    agents = env.possible_agents
    models = {uid: {"policy": MaskedPolicy(env.observation_space(uid), env.action_space(uid), env.device),
                    "value": Value(env.observation_space(uid), env.action_space(uid), env.device)}
              for uid in agents}
    per_agent = {k: {uid: {} for uid in agents} for k in (
        "learning_rate_scheduler_kwargs", "observation_preprocessor_kwargs", "state_preprocessor_kwargs",
        "value_preprocessor_kwargs")}
    agent = IPPO(possible_agents=agents, models=models,
                 memories={uid: RandomMemory(memory_size=32, num_envs=env.num_envs, device=env.device)
                           for uid in agents},
                 cfg=IPPO_CFG(rollouts=32, learning_epochs=2, mini_batches=2, **per_agent),
                 observation_spaces=env.observation_spaces, state_spaces=env.state_spaces,
                 action_spaces=env.action_spaces, device=env.device)
    before = [p.detach().clone() for p in models["player_0"]["policy"].parameters()]
    ends = []
    step = env.step

    def counting_step(actions):
        out = step(actions)
        ends.append(not env.agents)
        return out

    env.step = counting_step
    # raw_env raises on an illegal action: the acting seat's sampled actions were all legal
    SequentialTrainer(cfg={"timesteps": 96, "headless": True, "disable_progressbar": True,
                           "close_environment_at_exit": False}, env=env, agents=agent).train()
    assert len(ends) == 96 and sum(ends) >= 1  # at least one hand ended and skrl reset the env
    after = list(models["player_0"]["policy"].parameters())
    assert any(not torch.equal(a, b) for a, b in zip(before, after, strict=True))
