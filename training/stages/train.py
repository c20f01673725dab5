"""Stage ``train``: the RL training of ``smear-train`` (warm start, the algorithm's loop, checkpoints,
evaluations) in the stage's folder; resumes from its latest checkpoint.

Its section holds training-config keys (:class:`training.config.TrainConfig`) merged over the file's
top-level ones, so a pipeline's first training stage is the file's top-level config."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from ..config import TrainConfig, from_dict, to_dict
from . import StageConfig


class Config(TrainConfig, StageConfig):
    """RL training (the keys of the training config, over the file's top-level ones)."""

    kind: Literal["train"] = "train"
    """Stage kind."""

    inputs = {"init_from": "policy"}
    outputs = {"policy": "checkpoints/latest.safetensors"}


def command(cfg: TrainConfig, inputs: dict[str, Any], folder: Path) -> dict[str, Any]:
    data = to_dict(cfg)
    data.pop("kind", None)
    if inputs.get("init_from"):
        data["init_from"] = inputs["init_from"]
    return data


def run(args: dict[str, Any], folder: Path, resume: bool) -> int:
    from ..loop import train

    cfg = from_dict(args)
    ckpts = folder / "checkpoints"
    started = ckpts.is_dir() and any(ckpts.glob("*.safetensors"))
    return train(cfg, folder, resume=resume and started, command="smear-train pipeline stage " + folder.name,
                 overwrite=not (resume and started))
