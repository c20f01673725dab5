"""The ``algorithm:`` keys of ``vector_ppo`` (:mod:`training.algorithms.vector_ppo`; torch-free)."""

from __future__ import annotations

from dataclasses import dataclass

from .ppo_config import PPOConfig


@dataclass
class VectorPPOConfig(PPOConfig):
    """The same PPO update as ppo, collecting on the batched engine smear_env.vector (through
    smear_env.batched_table): every lane stepped as arrays, opponents self, snapshot or a spec; optionally
    one trunk for policy and value (network.shared_trunk)."""

    name: str = "vector_ppo"

    supports_shared_trunk = True
