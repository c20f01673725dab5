"""Distil a search agent's choices into a policy: one step of expert iteration.

The rollout search agent (:mod:`smear_env.agents.rollout`, ``rollout:...`` specs) records, with
``agent.recorded = []``, every decision it made in a match: the observation, the legal actions, the action
it took and whether that action came from the search. This module fine-tunes a checkpoint's policy by
cross-entropy on those actions (all of them: the searched decisions teach the improvement, the others keep
the rest of the policy where it was), then writes a checkpoint that plays without search.

    python -m training.distill --init default --data runs/targets_1.npz runs/targets_2.npz \\
        --out runs/distilled.safetensors [--epochs 3 --lr 1e-4 --batch 1024 --seed 0]

``targets`` files are written by :func:`save_targets` (numpy ``.npz``: arrays only, no pickle).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from smear_env.actions import NUM_ACTIONS
from smear_env.observation import OBS_SIZE

from .checkpoint import load_policy_state, save_tensors
from .policy import SmearPolicy

TARGET_KEYS = ("obs", "mask", "action", "searched")


def save_targets(path: str | Path, recorded: Sequence[dict[str, np.ndarray]]) -> int:
    """Write the rows of a rollout agent's ``recorded`` calls to ``path`` (``.npz``); returns the rows."""
    data = {k: np.concatenate([r[k] for r in recorded]) for k in TARGET_KEYS}
    data["obs"] = data["obs"].astype(np.float16)  # 0/1 features and small integers (scores): exact
    np.savez_compressed(path, **data)
    return int(data["action"].size)


def load_targets(paths: Sequence[str | Path]) -> dict[str, np.ndarray]:
    """The rows of ``paths`` concatenated, each file checked (keys, shapes, legal actions)."""
    parts = []
    for p in paths:
        with np.load(p, allow_pickle=False) as z:
            missing = [k for k in TARGET_KEYS if k not in z.files]
            if missing:
                raise ValueError(f"targets file {str(p)!r} lacks {missing}; expected keys "
                                 f"{list(TARGET_KEYS)}")
            d = {k: z[k] for k in TARGET_KEYS}
        n = d["action"].shape[0]
        shapes = [d[k].shape for k in TARGET_KEYS]
        if shapes != [(n, OBS_SIZE), (n, NUM_ACTIONS), (n,), (n,)]:
            raise ValueError(f"targets file {str(p)!r}: shapes {shapes} do not fit {OBS_SIZE} observation "
                             f"columns and {NUM_ACTIONS} actions")
        if not d["mask"][np.arange(n), d["action"]].all():
            raise ValueError(f"targets file {str(p)!r}: a target action is not legal in its row")
        parts.append(d)
    if not parts:
        raise ValueError("distill: no targets files")
    return {k: np.concatenate([d[k] for d in parts]) for k in TARGET_KEYS}


def policy_from_checkpoint(path: str) -> tuple[SmearPolicy, dict[str, Any]]:
    """A trainable :class:`SmearPolicy` holding a checkpoint's policy, and the checkpoint's metadata."""
    state, meta = load_policy_state(path)
    net = meta["network"]
    pol = SmearPolicy(net["hidden_sizes"], net.get("activation", "relu"),
                      shared_trunk=not any(k.startswith("vf_body.") for k in state),
                      suit_canonical=bool(net.get("suit_canonical", False)))
    pol.load_state_dict(state)
    return pol, meta


def distilled_metadata(meta: dict[str, Any], algorithm: str, record: dict[str, Any]) -> dict[str, Any]:
    """The metadata of a checkpoint distilled from one with metadata ``meta``: its network and rules, less
    what described the source agent (shipped name, model card, source, training state), with
    ``algorithm`` and the run's ``record`` under that key."""
    out = {k: v for k, v in meta.items() if k not in ("name", "model_card", "source", "state")}
    out["algorithm"] = algorithm
    out[algorithm] = record
    return out


def distill(policy: SmearPolicy, data: dict[str, np.ndarray], epochs: int, lr: float, batch: int,
            seed: int, holdout: float = 0.05, log: Any = print) -> dict[str, float | None]:
    """Fine-tune ``policy`` (in place) by cross-entropy on ``data``'s actions; returns the held-out
    agreement with the search on its searched rows before and after (None when the held-out rows hold no
    searched decision)."""
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    n = data["action"].size
    perm = rng.permutation(n)
    n_val = int(n * holdout)
    val, train = perm[:n_val], perm[n_val:]
    obs = torch.from_numpy(data["obs"].astype(np.float32))
    mask = torch.from_numpy(data["mask"].astype(bool))
    act = torch.from_numpy(data["action"].astype(np.int64))
    searched = data["searched"].astype(bool)

    def agreement() -> float | None:
        rows = torch.from_numpy(val[searched[val]])
        with torch.no_grad():
            pred = policy.logits(obs[rows], mask[rows]).argmax(1)
        return float((pred == act[rows]).float().mean()) if rows.numel() else None

    before = agreement()
    opt = torch.optim.Adam(policy.parameters(), lr=lr)
    policy.train()
    for epoch in range(epochs):
        order = torch.from_numpy(rng.permutation(train))
        losses = []
        for start in range(0, order.numel(), batch):
            idx = order[start:start + batch]
            loss = torch.nn.functional.cross_entropy(policy.logits(obs[idx], mask[idx]), act[idx])
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            opt.step()
            losses.append(loss.item())
        log(f"epoch {epoch + 1}: cross-entropy {np.mean(losses):.4f}, held-out agreement with the search "
            f"{agreement()}")
    policy.eval()
    return {"agreement_before": before, "agreement_after": agreement(), "rows": float(n),
            "searched_rows": float(searched.sum())}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m training.distill", description=__doc__.split("\n\n")[0])
    ap.add_argument("--init", required=True, help="checkpoint file or shipped agent name to start from")
    ap.add_argument("--data", nargs="+", required=True, help="targets files (.npz) of a rollout agent")
    ap.add_argument("--out", required=True)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    from smear_env.agents.shipped import checkpoint_file

    init = checkpoint_file(args.init)
    t0 = time.monotonic()
    torch.set_num_threads(1)
    policy, meta = policy_from_checkpoint(init)
    data = load_targets(args.data)
    res = distill(policy, data, args.epochs, args.lr, args.batch, args.seed)
    record = {"init": args.init, "data": [str(p) for p in args.data], "epochs": args.epochs, "lr": args.lr,
              "batch": args.batch, "seed": args.seed,
              "command": " ".join(["python -m training.distill", *(argv or sys.argv[1:])]),
              **res, "seconds": round(time.monotonic() - t0, 1)}
    out_meta = distilled_metadata(meta, "distill", record)
    state = {f"policy.{k}": v for k, v in policy.state_dict().items()}
    save_tensors(args.out, state, out_meta)
    print(f"wrote {args.out}: {res}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
