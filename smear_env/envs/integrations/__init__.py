"""Adapters for RL frameworks that do not take a PettingZoo AEC env as it is.

* :mod:`smear_env.envs.integrations.rllib` -- Ray RLlib (new API stack): ``SmearMultiAgentEnv`` (a turn-based
  ``MultiAgentEnv`` with RLlib's observation keys ``observations`` / ``action_mask``), the env name
  registration, the action-masking RLModule spec, shared or per-team policy mapping, a ready ``PPOConfig``.
  Needs ``pip install "smear-rl[rllib]"``.
* :mod:`smear_env.envs.integrations.tianshou` -- Tianshou 2.x: its ``PettingZooEnv`` around ``smear_v0.env()``
  and a masked DQN shared by the four seats (or one per team). Needs ``pip install "smear-rl[tianshou]"``.

Frameworks that need no adapter: Stable-Baselines3 / sb3-contrib use the Gymnasium single-seat env
(``gymnasium.make("smear_env/SmearSingleSeat-v0")`` or :class:`smear_env.gym.single_seat.SmearSingleSeatEnv`,
``action_masks()`` for ``MaskablePPO``); anything that speaks PettingZoo AEC uses ``smear_v0.env()``.
SuperSuit's observation wrappers and ``aec_to_parallel`` do not apply: the observations are Dicts (vector +
action mask) and the game is turn-based, as for PettingZoo's own classic card games.

Importing this package imports no framework; each submodule imports its own.
"""

__all__: list[str] = []
