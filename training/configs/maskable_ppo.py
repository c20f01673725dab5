"""The ``algorithm:`` keys of ``maskable_ppo`` (:mod:`training.algorithms.maskable_ppo`; torch-free)."""

from __future__ import annotations

from typing import Literal

from .ppo import PPOConfig


class MaskablePPOConfig(PPOConfig):
    """sb3-contrib MaskablePPO on the single-seat Gymnasium view, one learning seat per env (also reads
    vec_env and selfplay.partner_refresh_interval)."""

    name: Literal["maskable_ppo"] = "maskable_ppo"  # type: ignore[assignment]
    """Algorithm, one of training.algorithms.ALGORITHMS."""

    supports_suit_canonical = False
    supports_init_from = False
