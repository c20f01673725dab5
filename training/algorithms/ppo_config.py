"""The ``algorithm:`` keys of native ``ppo`` (:mod:`training.algorithms.ppo`), and the PPO hyperparameters
that the other PPO trainers share (torch-free: read by config validation)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .config_base import Bound, UpdateConfig


@dataclass
class PPOHyperparameters(UpdateConfig):
    """The clipped-surrogate PPO keys every PPO trainer reads."""

    anneal_lr: bool = True
    """Decay the learning rate linearly towards 0 over total_timesteps, never below 5% of learning_rate."""
    gamma: float = 1.0
    """Discount factor (1.0: an episode is short and the score is what counts)."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    clip_range: float = 0.2
    """PPO clipping of the probability ratio."""
    ent_coef: float = 0.01
    """Entropy bonus coefficient at the start of training."""
    ent_coef_final: float | None = None
    """Entropy coefficient reached linearly at the end of training (None: constant ent_coef)."""
    vf_coef: float = 0.5
    """Value loss coefficient."""

    bounds: ClassVar[dict[str, Bound]] = {
        "gamma": Bound(0.0, 1.0),
        "gae_lambda": Bound(0.0, 1.0),
        "clip_range": Bound(0.0, None, lo_incl=False),
        "ent_coef": Bound(0.0, None),
        "ent_coef_final": Bound(0.0, None),
        "vf_coef": Bound(0.0, None),
    }


@dataclass
class PPOConfig(PPOHyperparameters):
    """Native PyTorch PPO that steps many tables in lock-step (smear_env.table) and learns from every seat
    the learner plays -- all four in pure self-play."""

    name: str = "ppo"
    target_kl: float | None = None
    """Stop the epochs of an update early when the approximate KL exceeds this (None: never)."""
    norm_adv: bool = True
    """Normalize advantages per minibatch."""

    supports_suit_canonical = True
    supports_init_from = True
    bounds: ClassVar[dict[str, Bound]] = {"target_kl": Bound(0.0, None, lo_incl=False)}
