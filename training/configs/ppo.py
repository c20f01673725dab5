"""The ``algorithm:`` keys of native ``ppo`` (:mod:`training.algorithms.ppo`), and the PPO hyperparameters
that the other PPO trainers share (torch-free: read by config validation)."""

from __future__ import annotations

from typing import Literal

from .base import Fraction, NonNegative, Positive, UpdateConfig


class PPOHyperparameters(UpdateConfig):
    """The clipped-surrogate PPO keys every PPO trainer reads."""

    gamma: Fraction = 1.0
    """Discount factor (1.0: an episode is short and the score is what counts)."""
    gae_lambda: Fraction = 0.95
    """GAE lambda."""
    clip_range: Positive = 0.2
    """PPO clipping of the probability ratio."""
    ent_coef: NonNegative = 0.01
    """Entropy bonus coefficient at the start of training."""
    ent_coef_final: NonNegative | None = None
    """Entropy coefficient reached linearly at the end of training (None: constant ent_coef)."""
    vf_coef: NonNegative = 0.5
    """Value loss coefficient."""

    lr_floor = 0.05


class PPOConfig(PPOHyperparameters):
    """Native PyTorch PPO that steps many tables in lock-step (smear_env.tables.table) and learns from every
    seat the learner plays -- all four in pure self-play."""

    name: Literal["ppo"] = "ppo"
    """Algorithm, one of training.algorithms.ALGORITHMS."""
    target_kl: Positive | None = None
    """Stop the epochs of an update early when the approximate KL exceeds this (None: never)."""
    norm_adv: bool = True
    """Normalize advantages per minibatch."""

    supports_suit_canonical = True
    supports_init_from = True
