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


def run(cfg: Config, inputs: dict[str, Any], folder: Path, resume: bool) -> int:
    from ..loop import train

    train_cfg = from_dict({**{k: v for k, v in to_dict(cfg).items() if k != "kind"}, **inputs})
    ckpts = folder / "checkpoints"
    started = ckpts.is_dir() and any(ckpts.glob("*.safetensors"))
    return train(train_cfg, folder, resume=resume and started,
                 command="smear-train pipeline stage " + folder.name, overwrite=not (resume and started))
