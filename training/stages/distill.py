"""Stage ``distill``: a policy fine-tuned on recorded search targets (:mod:`training.distill`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from ..configs.base import Positive
from . import StageConfig


class Config(StageConfig):
    """Distillation of a rollout search's recorded choices (``targets_*.npz`` files) into a policy."""

    kind: Literal["distill"] = "distill"
    """Stage kind."""
    init: str | None = None
    """The policy to fine-tune: a stage id, a checkpoint file or a shipped agent (None: the latest policy of
    the stages before)."""
    data: list[str] = Field(min_length=1)
    """Targets files (.npz) of a rollout agent."""
    epochs: int = Field(3, ge=1, le=1_000)
    """Passes over the targets."""
    lr: Positive = 1e-4
    """Learning rate."""
    batch: int = Field(1024, ge=1, le=2**18)
    """Minibatch."""
    seed: int = Field(0, ge=0, le=2**62)
    """Seed of the minibatch order."""
    changed_weight: Positive = 1.0
    """Loss weight of the rows where the search changed the starting policy's action."""
    min_gain: float | None = None
    """Keep only the changes the search valued at least this much above the policy's action (None: all)."""

    inputs = {"init": "policy"}
    latest = ("init",)
    outputs = {"policy": "final.safetensors"}


def run(cfg: Config, inputs: dict[str, Any], folder: Path, resume: bool) -> int:
    from ..distill import distill_file  # lazy: heavy (torch)

    distill_file(inputs["init"], cfg.data, folder / "final.safetensors",
                 **cfg.model_dump(exclude={"kind", "init", "data"}))
    return 0
