"""The algorithm registry and the trainer protocol every algorithm implements.

``ALGORITHMS`` maps the config's ``algorithm.name`` to ``"module:Class"`` of its trainer, imported only
when that algorithm is used (so validating a config imports neither torch nor sb3). Adding an algorithm
is one module with a class that implements :class:`Trainer` and one line here. An unknown name is an
error listing the valid ones (config validation uses the same table).

A trainer collects experience through the table layer (:mod:`smear_env.table`: one game loop, rewards in
raw points, ``env.episode`` meaning the same everywhere) and owns its policy, optimizer and opponent pool;
``smear-train`` (:mod:`training.train`) drives it: warm start, ``iterate()`` until the budget is spent,
snapshots, evaluation, checkpoints and resume.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import torch

    from ..config import TrainConfig

ALGORITHMS: dict[str, str] = {
    "ppo": "training.algorithms.ppo:PPOTrainer",
    "maskable_ppo": "training.algorithms.maskable_ppo:MaskablePPOTrainer",
    "vector_ppo": "training.algorithms.vector_ppo:VectorPPOTrainer",
    "rllib_ppo": "training.algorithms.rllib_ppo:RLlibPPOTrainer",
    "dmc": "training.algorithms.dmc:DMCTrainer",
}


@runtime_checkable
class Trainer(Protocol):
    """What ``smear-train`` needs of an algorithm (``Class(cfg, rng)`` builds it)."""

    name: str
    step: int
    """Learner decisions trained on so far."""

    def iterate(self) -> dict[str, float]:
        """Collect one rollout and update; returns scalars to log (``loss/...``, ``train/...``)."""
        ...

    def add_snapshot(self) -> None:
        """Freeze the current policy into the opponent pool."""
        ...

    def warm_start_policy(self) -> torch.nn.Module:
        """A :class:`~training.policy.SmearPolicy` for the imitation warm start to train in place."""
        ...

    def after_warm_start(self) -> None:
        """Take over the weights of :meth:`warm_start_policy` after the warm start."""
        ...

    def eval_policy(self) -> Any:
        """A policy with ``act(obs, mask, rng, greedy)`` for in-training evaluation."""
        ...

    def policy_state(self) -> dict[str, torch.Tensor]:
        """The policy weights in :class:`~training.policy.SmearPolicy` naming (what a checkpoint plays)."""
        ...

    def state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """(tensors, JSON-able metadata) of everything else needed to resume."""
        ...

    def load_state(self, policy_sd: dict[str, torch.Tensor], tensors: dict[str, torch.Tensor],
                   meta: dict[str, Any], step: int) -> None:
        """Restore from a checkpoint written with :meth:`policy_state` and :meth:`state`."""
        ...


def trainer_class(name: str) -> type:
    """The trainer class registered as ``name``; an unknown name is a ``ValueError`` naming the valid ones."""
    if name not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {name!r}; valid algorithms: {', '.join(ALGORITHMS)}")
    module, _, cls = ALGORITHMS[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def make_trainer(cfg: TrainConfig, rng: np.random.Generator) -> Trainer:
    """The trainer of ``cfg.algorithm.name``, built from the config and the run's generator."""
    return trainer_class(cfg.algorithm.name)(cfg, rng)


__all__ = ["ALGORITHMS", "Trainer", "make_trainer", "trainer_class"]
