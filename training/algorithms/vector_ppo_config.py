"""The ``algorithm:`` keys of ``vector_ppo`` (:mod:`training.algorithms.vector_ppo`; torch-free)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .config_base import Bound
from .ppo_config import PPOConfig


@dataclass
class VectorPPOConfig(PPOConfig):
    """The same PPO update as ppo, collecting on the batched engine smear_env.vector (through
    smear_env.batched_table): every lane stepped as arrays, opponents self, snapshot or a spec; optionally
    one trunk for policy and value (network.shared_trunk)."""

    name: str = "vector_ppo"
    oracle_critic: bool = False
    """Learn the values with a perfect-information critic (training.oracle: the observation plus the other
    seats' hands, the kitty and the stock) instead of the policy's value head; the policy still sees only its
    observation, and the critic is used only in training (saved in resume states, never in the policy)."""
    value_warmup: int = 0
    """Learner decisions at the start of the run during which only the value head learns: its last layer,
    which starts from zeros after the warm start (init_from or imitation), or the oracle critic; the policy
    and the trunk are left as they are. For a run that starts from a checkpoint whose values were learned for
    another reward, e.g. env.reward "winprob" after "score"."""

    supports_shared_trunk = True
    supports_winprob = True
    bounds: ClassVar[dict[str, Bound]] = {"value_warmup": Bound(0, 10**12, unit="of learner decisions")}
