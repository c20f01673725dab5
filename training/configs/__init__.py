"""The typed configs of a training run, below the trainers, the stages and the CLI (which import them; they
import none of those, so validating a config imports neither torch nor sb3).

:mod:`training.configs.base` holds what a section is made of (:class:`~training.configs.base.Section`,
:class:`~training.configs.base.AlgorithmConfig`, :class:`~training.configs.base.ConfigError`, the bounded
number types); each algorithm's ``algorithm:`` keys are a module here (``training/configs/NAME.py``), next to
nothing but pydantic. This package is the algorithm registry: :data:`ALGORITHMS` maps the config's
``algorithm.name`` to an :class:`Algorithm`, its trainer class and its config class, each as
``"module:Class"`` imported when needed, so that this layer names the trainers without importing them.
:mod:`training.algorithms` builds the trainers (``make_trainer``) and re-exports the registry.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from .base import AlgorithmConfig

__all__ = ["ALGORITHMS", "Algorithm", "algorithm", "config_class", "resolve"]


@dataclass(frozen=True)
class Algorithm:
    """One registered algorithm."""

    trainer: str | type
    """Its trainer class (implements :class:`training.algorithms.Trainer`; built as ``Class(cfg, rng)``), or
    ``"module:Class"``."""
    config: str | type
    """Its ``algorithm:`` config class (a subclass of ``AlgorithmConfig``), or ``"module:Class"`` of a module
    that imports neither torch nor sb3."""
    on_ray: str | type | None = None
    """Its trainer when the config's ``ray.address`` is set (actors on a Ray cluster), as ``trainer``; None:
    ``trainer`` wherever ``ray.address`` points."""


ALGORITHMS: dict[str, Algorithm] = {
    "ppo": Algorithm("training.algorithms.ppo:PPOTrainer", "training.configs.ppo:PPOConfig"),
    "maskable_ppo": Algorithm("training.algorithms.maskable_ppo:MaskablePPOTrainer",
                              "training.configs.maskable_ppo:MaskablePPOConfig"),
    "vector_ppo": Algorithm("training.algorithms.vector_ppo:VectorPPOTrainer",
                            "training.configs.vector_ppo:VectorPPOConfig"),
    "rllib_ppo": Algorithm("training.algorithms.rllib_ppo:RLlibPPOTrainer",
                           "training.configs.rllib_ppo:RLlibPPOConfig"),
    "dmc": Algorithm("training.algorithms.dmc:DMCTrainer", "training.configs.dmc:DMCConfig",
                     on_ray="training.algorithms.dmc_ray:RayDMCTrainer"),
}


def algorithm(name: str) -> Algorithm:
    """The registry entry of ``name``; an unknown name is a ``ValueError`` naming the valid ones."""
    if name not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {name!r}; valid algorithms: {', '.join(ALGORITHMS)}")
    return ALGORITHMS[name]


def resolve(ref: str | type) -> type:
    """The class ``ref`` names (``"module:Class"``, imported now), or ``ref`` itself when it is a class."""
    if isinstance(ref, type):
        return ref
    module, _, cls = ref.partition(":")
    return getattr(importlib.import_module(module), cls)


def config_class(name: str) -> type[AlgorithmConfig]:
    """The ``algorithm:`` config class registered as ``name`` (imports no trainer); an unknown name is a
    ``ValueError`` naming the valid ones."""
    return resolve(algorithm(name).config)
