"""The ``algorithm:`` keys of ``vector_ppo`` (:mod:`training.algorithms.vector_ppo`; torch-free)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from .config_base import MAX_DECISIONS, ConfigError
from .ppo_config import PPOConfig

if TYPE_CHECKING:
    from ..config import TrainConfig


class VectorPPOConfig(PPOConfig):
    """The same PPO update as ppo, collecting on the batched engine smear_env.vector (through
    smear_env.batched_table): every lane stepped as arrays, opponents self, snapshot or a spec; optionally
    one trunk for policy and value (network.shared_trunk)."""

    name: Literal["vector_ppo"] = "vector_ppo"  # type: ignore[assignment]
    """Algorithm, one of training.algorithms.ALGORITHMS."""
    oracle_critic: bool = False
    """Learn the values with a perfect-information critic (training.oracle: the observation plus the other
    seats' hands, the kitty and the stock) instead of the policy's value head; the policy still sees only its
    observation, and the critic is used only in training (saved in resume states, never in the policy)."""
    value_warmup: int = Field(0, ge=0, le=MAX_DECISIONS)
    """Learner decisions at the start of the run during which only the value head learns: its last layer,
    which starts from zeros after the warm start (init_from or imitation), or the oracle critic; the policy
    and the trunk are left as they are. For a run that starts from a checkpoint whose values were learned for
    another reward, e.g. env.reward "winprob" after "score"."""
    overlap: bool = False
    """Collect the next rollout while the last one's update runs in a second thread (both cores of a 2-core
    machine: 1.52x the decisions per second; benchmarks/overlap_speed.py compares the two settings
    interleaved). Each rollout is then played by the policy of one update before (a copy; its stored
    log-probabilities keep the PPO ratio exact to the policy that acted), as in an asynchronous actor-learner
    with a lag of one update. Deterministic for a seed and resumable exactly, but a different run from
    overlap: false."""

    supports_shared_trunk = True
    supports_winprob = True

    def check(self, cfg: TrainConfig) -> None:
        """The rollout bound, and ``overlap`` without ``oracle_critic`` (the critic values the rollout
        while the update trains it)."""
        super().check(cfg)
        if self.overlap and self.oracle_critic:
            raise ConfigError("config keys 'algorithm.overlap' and 'algorithm.oracle_critic': choose one "
                              "(the oracle critic is not copied for the overlapped rollout); set "
                              "algorithm.overlap: false")
