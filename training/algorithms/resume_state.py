"""What the trainers save to resume a run, without pickle: optimizer state, the opponent pool's frozen
snapshots and every generator's state, split into tensors (safetensors) and JSON-able metadata; and
:class:`OwnPolicyTrainer`, the trainer-protocol methods of a trainer that owns a
:class:`~training.policy.SmearPolicy` (ppo, vector_ppo, dmc)."""

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


class OwnPolicyTrainer:
    """The :class:`~training.algorithms.Trainer` methods besides ``iterate`` for a trainer that holds its
    own ``policy`` (a SmearPolicy), ``optimizer``, ``pool`` (an OpponentPool), ``rng``, ``cfg``, ``step`` and
    ``updates``, and starts fresh games with :meth:`restart_games` (games in flight are not saved). A mix-in
    with no ``__init__``: the trainer builds all of that itself."""

    policy: SmearPolicy
    optimizer: torch.optim.Optimizer
    pool: OpponentPool
    rng: np.random.Generator
    cfg: TrainConfig
    step: int
    updates: int

    def restart_games(self) -> None:
        """Start fresh games (after :meth:`load_state`)."""
        raise NotImplementedError

    def add_snapshot(self) -> None:
        self.pool.add_snapshot(self.step, self.policy)

    def warm_start_policy(self) -> SmearPolicy:
        return self.policy

    def after_warm_start(self) -> None:
        pass

    def eval_policy(self) -> SmearPolicy:
        return self.policy

    def policy_state(self) -> dict[str, torch.Tensor]:
        return dict(self.policy.state_dict())

    def state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """(tensors, JSON-able metadata) of everything needed to resume."""
        return trainer_state(self.optimizer, self.pool, self.rng, self.updates)

    def load_state(self, policy_sd: dict[str, torch.Tensor], tensors: dict[str, torch.Tensor],
                   meta: dict[str, Any], step: int) -> None:
        self.policy.load_state_dict(policy_sd)
        self.updates = restore_trainer_state(self.optimizer, self.pool, self.rng, self.cfg, tensors, meta)
        self.step = int(step)
        self.restart_games()
