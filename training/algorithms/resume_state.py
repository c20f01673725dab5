"""What both trainers save to resume a run, without pickle: optimizer state, the opponent pool's frozen
snapshots and every generator's state, split into tensors (safetensors) and JSON-able metadata."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..config import TrainConfig
from ..policy import SmearPolicy
from ..selfplay import OpponentPool


def trainer_state(
    optimizer: torch.optim.Optimizer, pool: OpponentPool, rng: np.random.Generator, updates: int
) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """(tensors, metadata) of the optimizer, the snapshot pool and the generators."""
    tensors: dict[str, torch.Tensor] = {}
    osd = optimizer.state_dict()
    scalars: dict[str, Any] = {}
    for pid, st in osd["state"].items():
        for key, v in st.items():
            if torch.is_tensor(v):
                tensors[f"optim.{pid}.{key}"] = v
            else:
                scalars[f"{pid}.{key}"] = v
    for j, (_step, pol) in enumerate(pool.snapshots):
        for k, v in pol.state_dict().items():
            tensors[f"pool.{j}.{k}"] = v
    tensors["rng.torch"] = torch.get_rng_state()
    meta = {
        "optimizer_param_groups": osd["param_groups"],
        "optimizer_scalars": scalars,
        "pool_steps": [s for s, _ in pool.snapshots],
        "numpy_rng": rng.bit_generator.state,
        "pool_rng": pool.rng.bit_generator.state,
        "updates": updates,
    }
    return tensors, meta


def restore_trainer_state(
    optimizer: torch.optim.Optimizer,
    pool: OpponentPool,
    rng: np.random.Generator,
    cfg: TrainConfig,
    tensors: dict[str, torch.Tensor],
    meta: dict[str, Any],
) -> int:
    """Inverse of :func:`trainer_state`; returns the number of updates done."""
    state: dict[int, dict[str, Any]] = {}
    for k, v in tensors.items():
        if k.startswith("optim."):
            _, pid, key = k.split(".", 2)
            state.setdefault(int(pid), {})[key] = v.reshape(()) if key == "step" else v  # Adam's 0-d step
    for k, v in meta.get("optimizer_scalars", {}).items():
        pid, key = k.split(".", 1)
        state.setdefault(int(pid), {})[key] = v
    groups = [
        {k: tuple(v) if k == "betas" else v for k, v in g.items()} for g in meta["optimizer_param_groups"]
    ]
    optimizer.load_state_dict({"state": state, "param_groups": groups})
    pool.snapshots = []
    for j, pstep in enumerate(meta.get("pool_steps", [])):
        sd = {k[len(f"pool.{j}."):]: v for k, v in tensors.items() if k.startswith(f"pool.{j}.")}
        net = cfg.network
        pol = SmearPolicy(net.hidden_sizes, net.activation, shared_trunk=net.shared_trunk,
                          suit_canonical=net.suit_canonical)
        pol.load_state_dict(sd)
        pool.add_snapshot(pstep, pol)
    if "rng.torch" in tensors:
        torch.set_rng_state(tensors["rng.torch"])
    rng.bit_generator.state = meta["numpy_rng"]
    pool.rng.bit_generator.state = meta["pool_rng"]
    return int(meta.get("updates", 0))
