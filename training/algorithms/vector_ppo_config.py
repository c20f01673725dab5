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
    overlap: bool = False
    """Collect the next rollout while the last one's update runs in a second thread (both cores of a
    2-core machine: stage 1 of make default-90 ran 1.52x the decisions per second; benchmarks/overlap_speed.py
    compares the two settings interleaved). Each
    rollout is then played by the policy of one update before (a copy; its stored log-probabilities keep the
    PPO ratio exact to the policy that acted), as in an asynchronous actor-learner with a lag of one update.
    Deterministic for a seed and resumable exactly, but a different run from overlap: false."""

    supports_shared_trunk = True
