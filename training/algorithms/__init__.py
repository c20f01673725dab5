"""The algorithm registry and the trainer protocol every algorithm implements.

``ALGORITHMS`` maps the config's ``algorithm.name`` to an :class:`Algorithm`: its trainer class and its
config class (a subclass of :class:`~training.algorithms.config_base.AlgorithmConfig` in a module that imports
neither torch nor sb3, so validating a config imports no trainer), each as ``"module:Class"`` imported when
needed.
Adding an algorithm is its module and one line here (docs/training.md). A trainer owns its policy, optimizer
and opponent pool and collects experience through the table layer (``ppo``:
:class:`smear_env.tables.table.Table` games in lock-step; ``vector_ppo`` and ``dmc``: the batched table;
``maskable_ppo``: the single-seat Gymnasium env; ``rllib_ppo``: RLlib's multi-agent env); :mod:`training.loop`
drives it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import torch

    from ..config import TrainConfig
    from .config_base import AlgorithmConfig


@dataclass(frozen=True)
class Algorithm:
    """One registered algorithm."""

    trainer: str | type
    """Its trainer class (implements :class:`Trainer`; built as ``Class(cfg, rng)``), or ``"module:Class"``
    (a module name starting with "." is relative to this package)."""
    config: str | type
    """Its ``algorithm:`` config class (a subclass of ``AlgorithmConfig``), or ``"module:Class"`` of a module
    that imports neither torch nor sb3."""
    on_ray: str | type | None = None
    """Its trainer when the config's ``ray.address`` is set (actors on a Ray cluster), as ``trainer``; None:
    ``trainer`` wherever ``ray.address`` points."""


ALGORITHMS: dict[str, Algorithm] = {
    "ppo": Algorithm(".ppo:PPOTrainer", ".ppo_config:PPOConfig"),
    "maskable_ppo": Algorithm(".maskable_ppo:MaskablePPOTrainer", ".maskable_ppo_config:MaskablePPOConfig"),
    "vector_ppo": Algorithm(".vector_ppo:VectorPPOTrainer", ".vector_ppo_config:VectorPPOConfig"),
    "rllib_ppo": Algorithm(".rllib_ppo:RLlibPPOTrainer", ".rllib_ppo_config:RLlibPPOConfig"),
    "dmc": Algorithm(".dmc:DMCTrainer", ".dmc_config:DMCConfig", on_ray=".dmc_ray:RayDMCTrainer"),
}


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


def _entry(name: str) -> Algorithm:
    if name not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {name!r}; valid algorithms: {', '.join(ALGORITHMS)}")
    return ALGORITHMS[name]


def _resolve(ref: str | type) -> type:
    if isinstance(ref, type):
        return ref
    module, _, cls = ref.partition(":")
    return getattr(importlib.import_module(module, package=__name__), cls)


def trainer_class(name: str) -> type:
    """The trainer class registered as ``name``; an unknown name is a ``ValueError`` naming the valid ones."""
    return _resolve(_entry(name).trainer)


def config_class(name: str) -> type[AlgorithmConfig]:
    """The ``algorithm:`` config class registered as ``name`` (imports no trainer); an unknown name is a
    ``ValueError`` naming the valid ones."""
    return _resolve(_entry(name).config)


def make_trainer(cfg: TrainConfig, rng: np.random.Generator) -> Trainer:
    """The trainer of ``cfg.algorithm.name`` (its ``on_ray`` trainer where it has one and ``ray.address`` is
    set), built from the config and the run's generator."""
    on_ray = _entry(cfg.algorithm.name).on_ray
    if on_ray is not None and getattr(getattr(cfg, "ray", None), "address", None) is not None:
        return _resolve(on_ray)(cfg, rng)
    return trainer_class(cfg.algorithm.name)(cfg, rng)

