"""AgileRL clients written from AgileRL's own documentation (skipped unless agilerl is installed: make
test-agilerl, the venv of constraints/agilerl.txt; AgileRL pins pettingzoo<1.27 and tensordict 0.13, which the
TorchRL client's venv cannot share).

Single agent: AgileRL's ``PPO`` on the Gymnasium vector env, trained by its own ``collect_rollouts`` +
``learn()`` loop. AgileRL reads the legal actions from ``info["action_mask"]`` (its documented convention),
which the single-seat and vector envs give at every ``reset`` and ``step``; AgileRL takes the observation a
vector env returns after an episode end as the next episode's first one (same-step autoreset), so the env
runs with ``autoreset_mode="SameStep"``. The vector env raises on an illegal action, so a finished run is one
where every sampled action was legal.

Multi-agent: AgileRL's multi-agent algorithms (IPPO, MADDPG, MATD3) take PettingZoo's parallel API and refuse
an observation holding ``action_mask`` ("AgileRL requires action masks to be defined in the information
dictionary"), while ``smear_v0`` follows PettingZoo's classic convention (the mask inside the ``Dict``
observation, as chess, go and the card games); the test pins that refusal, AgileRL's own limit."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

pytest.importorskip("agilerl")

import torch  # noqa: E402
from agilerl.algorithms import IPPO, PPO  # noqa: E402
from agilerl.rollouts import collect_rollouts  # noqa: E402

import smear_env  # noqa: E402,F401  (registers the env ids)
from smear_env import smear_v0  # noqa: E402

ID = "smear_env/SmearSingleSeat-v0"


def test_ppo_with_info_action_masks_on_the_vector_env():
    torch.manual_seed(0)
    env = gymnasium.make_vec(ID, num_envs=4, vectorization_mode="vector_entry_point", episode="hand",
                             autoreset_mode="SameStep", normalize=True)
    agent = PPO(env.single_observation_space, env.single_action_space, num_envs=env.num_envs, learn_step=64,
                batch_size=64, update_epochs=2, net_config={"encoder_config": {"hidden_size": [64]}})
    before = [p.detach().clone() for p in agent.actor.parameters()]
    state = {}
    scores: list[float] = []
    for _ in range(3):  # three rollouts of 16 steps x 4 envs, each followed by one PPO update
        done_scores, *last = collect_rollouts(agent, env, **state)
        state = dict(zip(("last_obs", "last_done", "last_scores", "last_info"), last, strict=True))
        scores += done_scores
        agent.learn()
    assert scores and all(np.isfinite(scores))  # hands ended and AgileRL scored them
    after = list(agent.actor.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(before, after, strict=True))
    # AgileRL's own action selection with the info mask: only legal actions, also when greedy
    obs, info = env.reset(seed=1)
    for _ in range(30):
        action, *_ = agent.get_action(obs, action_mask=info["action_mask"])
        assert info["action_mask"][np.arange(4), action].all()
        obs, _, _, _, info = env.step(action)
    env.close()


def test_multi_agent_algorithms_refuse_the_classic_observation_mask():
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    env = turn_based_aec_to_parallel(smear_v0.raw_env())
    agent_ids = list(env.possible_agents)
    agent = IPPO([env.observation_space(a) for a in agent_ids], [env.action_space(a) for a in agent_ids],
                 agent_ids=agent_ids)
    obs, infos = env.reset(seed=0)
    with pytest.raises(AssertionError, match="action masks to be defined in the information dictionary"):
        agent.get_action(obs, infos)
