"""smear_env.envs.integrations.tianshou: Tianshou's PettingZooEnv + masked DQN collect and train on smear_v0.
Skipped unless tianshou is installed (``make test-tianshou``)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tianshou")

from tianshou.data import Collector, CollectStats, VectorReplayBuffer  # noqa: E402
from tianshou.env import DummyVectorEnv  # noqa: E402

from smear_env.envs.aec import AGENTS  # noqa: E402
from smear_env.envs.integrations.tianshou import masked_dqn, tianshou_env  # noqa: E402


def test_env_observation_holds_the_mask_of_the_agent_to_act():
    env = tianshou_env(kitty_size=2)
    obs, _ = env.reset(seed=0)
    assert obs["agent_id"] in AGENTS and obs["obs"].shape == (493,)
    raw = env.env.unwrapped
    assert np.array_equal(np.asarray(obs["mask"]), raw.observe(obs["agent_id"])["action_mask"] == 1)


@pytest.mark.parametrize("policies", ["shared", "team"])
def test_masked_dqn_collects_only_legal_actions_and_updates(policies):
    make = lambda: tianshou_env(kitty_size=2, episode="hand", reward="score")  # noqa: E731
    algo = masked_dqn(make(), policies=policies, hidden_sizes=[32], eps_training=0.5)
    subs = {id(algo.get_algorithm(a)) for a in AGENTS}
    assert len(subs) == (1 if policies == "shared" else 2)
    if policies == "team":
        assert algo.get_algorithm("player_0") is algo.get_algorithm("player_2")
    envs = DummyVectorEnv([make, make])
    envs.seed(0)
    buf = VectorReplayBuffer(2000, 2)
    stats = Collector[CollectStats](algo, envs, buf, exploration_noise=True).collect(
        n_episode=4, reset_before_collect=True)
    assert stats.n_collected_episodes >= 4
    # an illegal action would end a hand through the TerminateIllegalWrapper with -1 to one team only;
    # with legal play partners share every reward and the teams' rewards cancel
    rews = stats.returns
    assert np.array_equal(rews[:, 0], rews[:, 2]) and np.array_equal(rews[:, 0], -rews[:, 1])
    batch, _ = buf.sample(64)
    assert np.asarray(batch.obs.mask)[np.arange(len(batch)), batch.act].all()
    before = [p.detach().clone() for p in algo.parameters()]
    from tianshou.utils.torch_utils import policy_within_training_step

    with policy_within_training_step(algo.policy):
        algo.update(buffer=buf, sample_size=32)
    assert any(not np.array_equal(b.numpy(), p.detach().numpy()) for b, p in zip(before, algo.parameters(),
                                                                                   strict=True))
