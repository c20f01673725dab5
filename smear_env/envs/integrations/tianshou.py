"""smear_v0 for Tianshou 2.x (tested with tianshou 2.0.1, ``pip install "smear-rl[tianshou]"``).

Tianshou takes PettingZoo AEC envs through its own ``tianshou.env.PettingZooEnv``, which turns the
``{"observation", "action_mask"}`` observation into ``{"agent_id", "obs", "mask"}``; its DQN policy masks
illegal actions from ``mask`` (greedy and epsilon-greedy alike). This module only assembles those pieces:

    from tianshou.data import Collector, CollectStats
    from tianshou.env import DummyVectorEnv
    from smear_env.envs.integrations.tianshou import masked_dqn, tianshou_env

    envs = DummyVectorEnv([lambda: tianshou_env(kitty_size=2, episode="hand", reward="score")] * 4)
    algo = masked_dqn(tianshou_env(), hidden_sizes=[128, 128])
    Collector[CollectStats](algo, envs).collect(n_episode=8, reset_before_collect=True)

Rewards reach Tianshou as a vector over the four seats at every step (``rew[:, seat]``, ``player_i`` is
seat ``i``). Tianshou stores a turn-based game's transitions in one sequence per env, so a seat's
``obs_next`` is the next *player's* observation -- the same simplification as Tianshou's tic-tac-toe
example; for learning in earnest use ``smear-train`` or RLlib (:mod:`smear_env.envs.integrations.rllib`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tianshou.env import PettingZooEnv

from ..aec import AGENTS
from ..aec import env as smear_env


def tianshou_env(**kwargs: Any) -> PettingZooEnv:
    """Tianshou's ``PettingZooEnv`` around ``smear_v0.env(**kwargs)`` (rule and env options as keywords)."""
    return PettingZooEnv(smear_env(**kwargs))


def masked_dqn(
    env: PettingZooEnv | None = None,
    *,
    policies: str = "shared",
    hidden_sizes: Sequence[int] = (256, 256),
    lr: float = 1e-3,
    gamma: float = 0.99,
    n_step: int = 1,
    target_update_freq: int = 320,
    eps_training: float = 0.1,
    eps_inference: float = 0.0,
    device: str = "cpu",
) -> Any:
    """A ``MultiAgentOffPolicyAlgorithm`` of masked DQNs over the four seats: one DQN for all four
    (``policies="shared"``: self-play) or one per team (``"team"``: ``player_0``/``player_2`` and
    ``player_1``/``player_3``)."""
    # lazy: heavy (Tianshou's torch algorithms), only to build a learner
    from tianshou.algorithm import DQN, MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.utils.net.common import Net

    if policies not in ("shared", "team"):
        raise ValueError(f"policies={policies!r} is not allowed; allowed values: 'shared', 'team'")
    env = env if env is not None else tianshou_env()
    obs_space = env.observation_space["observation"]
    n_actions = int(env.action_space.n)

    def one() -> Any:
        net = Net(state_shape=obs_space.shape, action_shape=n_actions, hidden_sizes=list(hidden_sizes))
        net = net.to(device)
        policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=eps_training,
                                         eps_inference=eps_inference)
        return DQN(policy=policy, optim=AdamOptimizerFactory(lr=lr), gamma=gamma,
                   n_step_return_horizon=n_step, target_update_freq=target_update_freq)

    if policies == "shared":
        shared = one()
        algorithms = [shared] * len(AGENTS)
    else:
        teams = [one(), one()]
        algorithms = [teams[i & 1] for i in range(len(AGENTS))]
    return MultiAgentOffPolicyAlgorithm(algorithms=algorithms, env=env)


__all__ = ["masked_dqn", "tianshou_env"]
