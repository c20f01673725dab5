"""Writing checkpoints (and their torch side): safetensors for every tensor, JSON metadata in the header.

The file format (tensor names, the header's ``smear`` metadata object) is specified in
:mod:`smear_env.agents.checkpoint`, which also reads checkpoints, checks them against the environment and
plays them with numpy (no torch needed to play). This module writes them atomically (:func:`save_tensors`,
:func:`base_metadata`), loads a policy's weights as torch tensors (:func:`load_policy_state`) and exports
the policy alone from a training checkpoint (:func:`export_policy`).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from smear_env.actions import NUM_ACTIONS
from smear_env.agents.checkpoint import (
    ENV_VERSION,
    FORMAT,
    META_KEY,
    check_compatible,
    obs_layout_hash,
    prefixed,
    read_checkpoint,
)
from smear_env.config import SmearRules
from smear_env.observation import OBS_SIZE


def base_metadata(rules: SmearRules, network: dict[str, Any], algorithm: str, step: int,
                  training: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "env_version": ENV_VERSION,
        "obs_size": OBS_SIZE,
        "obs_layout_hash": obs_layout_hash(),
        "num_actions": NUM_ACTIONS,
        "rules": rules.to_dict(),
        "network": network,
        "algorithm": algorithm,
        "step": int(step),
        "training": training or {},
    }


# --------------------------------------------------------------------------------------------- write
def save_tensors(path: str | Path, tensors: dict[str, Any], meta: dict[str, Any]) -> None:
    """Write atomically (temp file in the same folder + os.replace). ``tensors``: name -> torch tensor or
    numpy array."""
    from safetensors.numpy import save_file

    arrays = {}
    for k, v in tensors.items():
        if hasattr(v, "detach"):
            v = v.detach().cpu().contiguous().numpy()
        arrays[k] = np.ascontiguousarray(v)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        save_file(arrays, tmp, metadata={META_KEY: json.dumps(meta)})
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load_policy_state(
    path: str | Path, rules: SmearRules | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(policy state dict as torch tensors, metadata), checked like :func:`load_agent` (needs torch)."""
    import torch

    tensors, meta = read_checkpoint(path)
    check_compatible(meta, path, rules)
    return {k: torch.from_numpy(v.copy()) for k, v in prefixed(tensors, "policy.").items()}, meta


def export_policy(src: str | Path, dst: str | Path, extra_meta: dict[str, Any] | None = None) -> None:
    """Copy only the policy weights (no optimizer, pool or RNG state) of a checkpoint: a small agent file."""
    tensors, meta = read_checkpoint(src)
    meta = dict(meta)
    meta.pop("state", None)
    meta.update(extra_meta or {})
    save_tensors(dst, {k: v for k, v in tensors.items() if k.startswith("policy.")}, meta)
