"""``from smear_env import smear_v0``: the versioned module, as PettingZoo names its environments."""

from smear_env.envs.aec import env, raw_env

__all__ = ["env", "raw_env"]
