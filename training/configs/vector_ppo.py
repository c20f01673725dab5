"""The ``algorithm:`` keys of ``vector_ppo`` (:mod:`training.algorithms.vector_ppo`; torch-free)."""

from __future__ import annotations

from typing import Literal

from .ppo import PPOConfig


class VectorPPOConfig(PPOConfig):
    """The same PPO update as ppo, collecting on the batched engine smear_env.engine.vector (through
    smear_env.tables.batched_table): every lane stepped as arrays, opponents self, snapshot or a spec;
    optionally one trunk for policy and value (network.shared_trunk)."""

    name: Literal["vector_ppo"] = "vector_ppo"  # type: ignore[assignment]
    """Algorithm, one of training.algorithms.ALGORITHMS."""
    overlap: bool = False
    """Collect the next rollout while the last one's update runs in a second thread (both cores of a 2-core
    machine: 1.52x the decisions per second; benchmarks/overlap_speed.py compares the two settings
    interleaved). Each rollout is then played by the policy of one update before (a copy; its stored
    log-probabilities keep the PPO ratio exact to the policy that acted), as in an asynchronous actor-learner
    with a lag of one update. Deterministic for a seed and resumable exactly, but a different run from
    overlap: false."""

    supports_shared_trunk = True
