"""The trainers: the protocol every algorithm implements, and building the one a config names.

The registry, ``ALGORITHMS`` (re-exported here from :mod:`training.configs`), maps the config's
``algorithm.name`` to an :class:`Algorithm`: its trainer class (a module of this package) and its config class
(a subclass of :class:`~training.configs.base.AlgorithmConfig` in :mod:`training.configs`, which imports
neither torch nor sb3, so validating a config imports no trainer), each as ``"module:Class"`` imported when
needed. Adding an algorithm is its trainer module here, its config module there and one line in the registry
(docs/training.md). A trainer owns its policy, optimizer
and opponent pool and collects experience through the table layer (``ppo``:
:class:`smear_env.tables.table.Table` games in lock-step; ``vector_ppo`` and ``dmc``: the batched table;
``maskable_ppo``: the single-seat Gymnasium env; ``rllib_ppo``: RLlib's multi-agent env); :mod:`training.loop`
drives it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..configs import ALGORITHMS, Algorithm, algorithm, config_class, resolve

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import torch

    from ..config import TrainConfig

__all__ = ["ALGORITHMS", "Algorithm", "Trainer", "config_class", "make_trainer", "trainer_class"]


@runtime_checkable
class Trainer(Protocol):
    """What ``smear-train`` needs of an algorithm (``Class(cfg, rng)`` builds it)."""

    name: str
    step: int
    """Learner decisions trained on so far."""

    def iterate(self) -> dict[str, float]:
        """Collect one rollout and update; returns scalars to log (``loss/...``, ``train/...``)."""

    def add_snapshot(self) -> None:
        """Freeze the current policy into the opponent pool."""

    def warm_start_policy(self) -> torch.nn.Module:
        """A :class:`~training.policy.SmearPolicy` for the imitation warm start to train in place."""

    def after_warm_start(self) -> None:
        """Take over the weights of :meth:`warm_start_policy` after the warm start."""

    def eval_policy(self) -> Any:
        """A policy with ``act(obs, mask, rng, greedy)`` for in-training evaluation."""

    def policy_state(self) -> dict[str, torch.Tensor]:
        """The policy weights in :class:`~training.policy.SmearPolicy` naming (what a checkpoint plays)."""

    def state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """(tensors, JSON-able metadata) of everything else needed to resume."""

    def load_state(self, policy_sd: dict[str, torch.Tensor], tensors: dict[str, torch.Tensor],
                   meta: dict[str, Any], step: int) -> None:
        """Restore from a checkpoint written with :meth:`policy_state` and :meth:`state`."""


def trainer_class(name: str) -> type:
    """The trainer class registered as ``name``; an unknown name is a ``ValueError`` naming the valid ones."""
    return resolve(algorithm(name).trainer)


def make_trainer(cfg: TrainConfig, rng: np.random.Generator) -> Trainer:
    """The trainer of ``cfg.algorithm.name`` (its ``on_ray`` trainer where it has one and ``ray.address`` is
    set), built from the config and the run's generator."""
    on_ray = algorithm(cfg.algorithm.name).on_ray
    if on_ray is not None and getattr(getattr(cfg, "ray", None), "address", None) is not None:
        return resolve(on_ray)(cfg, rng)
    return trainer_class(cfg.algorithm.name)(cfg, rng)

