"""The ``algorithm:`` keys of ``rllib_ppo`` (:mod:`training.algorithms.rllib_ppo`; torch-free)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from .base import ConfigError
from .ppo import PPOHyperparameters

ACTIVATIONS = ("relu", "tanh")
"""network.activation values RLlib's MLP has."""


class RLlibPPOConfig(PPOHyperparameters):
    """Ray RLlib's PPO, one masked policy shared by the four seats in self-play (selfplay.opponents must be
    "self" only), sampling on Ray workers (the ray section); needs pip install "smear-rl[rllib]"."""

    # What RLlib's PPO here does not do is refused, never ignored: other opponents, snapshots, a game-end
    # bonus. (imitation.teacher works: the run's warm start clones into a SmearPolicy, copied into RLlib.)
    supports_snapshot: ClassVar[bool] = False
    supports_win_bonus: ClassVar[bool] = False
    opponents: ClassVar[tuple[str, ...] | None] = ("self",)

    name: Literal["rllib_ppo"] = "rllib_ppo"  # type: ignore[assignment]
    """Algorithm, one of training.algorithms.ALGORITHMS."""

    def check(self, cfg: Any) -> None:
        """network.activation must be one RLlib's MLP has."""
        super().check(cfg)
        if cfg.network.activation not in ACTIVATIONS:
            raise ConfigError(f"config key 'network.activation': {cfg.network.activation!r} is not available "
                              f"with rllib_ppo; allowed values: {', '.join(map(repr, ACTIVATIONS))}")
