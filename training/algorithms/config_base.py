"""The names of :mod:`training.configs.base` (what a config section is made of) at the path they are also
imported from; the configs are the layer below the trainers, which this re-export keeps (it imports
downward)."""

from __future__ import annotations

from ..configs.base import (
    MAX_DECISIONS,
    MAX_ROLLOUT,
    AlgorithmConfig,
    ConfigError,
    Decisions,
    Fraction,
    NonNegative,
    Positive,
    Section,
    UpdateConfig,
    yaml_float,
)

__all__ = ["MAX_DECISIONS", "MAX_ROLLOUT", "AlgorithmConfig", "ConfigError", "Decisions", "Fraction",
           "NonNegative", "Positive", "Section", "UpdateConfig", "yaml_float"]
