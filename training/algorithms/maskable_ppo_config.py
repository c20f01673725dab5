"""The ``algorithm:`` keys of ``maskable_ppo`` (:mod:`training.algorithms.maskable_ppo`; torch-free)."""

from __future__ import annotations

from dataclasses import dataclass

from .ppo_config import PPOConfig


@dataclass
class MaskablePPOConfig(PPOConfig):
    """sb3-contrib MaskablePPO on the single-seat Gymnasium view, one learning seat per env (also reads
    vec_env and selfplay.partner_refresh_interval)."""

    name: str = "maskable_ppo"

    supports_suit_canonical = False
    supports_init_from = False
