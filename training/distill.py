"""Distil a search agent's choices into a policy: one step of expert iteration.

The rollout search agent (:mod:`smear_env.agents.rollout`, ``rollout:...`` specs) records, with
``agent.recorded = []``, every decision it made in a match: the observation, the legal actions, the action
it took and whether that action came from the search. This module fine-tunes a checkpoint's policy by
cross-entropy on those actions (all of them: the searched decisions teach the improvement, the others keep
the rest of the policy where it was), then writes a checkpoint that plays without search.

Expert iteration (:mod:`training.expert_iteration`) runs it each round on the round's targets.

``targets`` files are written by :func:`save_targets` (numpy ``.npz``: arrays only, no pickle), with the
search's action values ``q`` (files from before they were recorded have none). A *changed* row is a searched
one whose target is not the starting policy's greedy action: ``changed_weight W`` weighs those rows W in
the loss, and ``min_gain G`` keeps only the changes the search valued at least G above the policy's action
(it needs ``q``). The run reports what the student learned of the changes: the share it now follows on the
training rows and on held-out rows, and the share of held-out unchanged rows it flipped.

A checkpoint with advantage corrections (``corrections``: :mod:`training.advantage`) is distilled as two
things: its *player* (the network with its corrections) is the one that played and searched when the targets
were recorded, and its *network* alone is what the student starts from and is fine-tuned, since one network
cannot hold a second one. So where the correction changed the network's choice, the target is the corrected
choice, which the student learns like any other (a *changed* row where the search looked at it); changed rows
are counted against the network the student starts from. ``load_policy_state`` warns, and the student's
record says ``init_corrections_not_carried_over``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from smear_env.core.actions import NUM_ACTIONS
from smear_env.engine.observation import OBS_SIZE

from . import fit as fitter
from .checkpoint import load_policy_state
from .policy import SmearPolicy

TARGET_KEYS = ("obs", "mask", "action", "searched")
"""The arrays every targets file holds."""
Q_KEY = "q"
"""The optional array of the search's action values ((rows, 72), ``-inf`` where illegal or not searched)."""


def save_targets(path: str | Path, recorded: Sequence[dict[str, np.ndarray]]) -> int:
    """Write the rows of a rollout agent's ``recorded`` calls to ``path`` (``.npz``), with the search's
    values ``q`` when every call recorded them; returns the rows."""
    keys = TARGET_KEYS + ((Q_KEY,) if all(Q_KEY in r for r in recorded) else ())
    data = {k: np.concatenate([r[k] for r in recorded]) for k in keys}
    data["obs"] = data["obs"].astype(np.float16)  # 0/1 features and small integers (scores): exact
    np.savez_compressed(path, **data)
    return int(data["action"].size)


def load_targets(paths: Sequence[str | Path]) -> dict[str, np.ndarray]:
    """The rows of ``paths`` concatenated, each file checked (keys, shapes, legal actions); with the search's
    values ``q`` when every file has them."""
    parts = []
    for p in paths:
        with np.load(p, allow_pickle=False) as z:
            missing = [k for k in TARGET_KEYS if k not in z.files]
            if missing:
                raise ValueError(f"targets file {str(p)!r} lacks {missing}; expected keys "
                                 f"{list(TARGET_KEYS)}")
            d = {k: z[k] for k in TARGET_KEYS}
            if Q_KEY in z.files:
                d[Q_KEY] = z[Q_KEY]
        n = d["action"].shape[0]
        shapes = [d[k].shape for k in TARGET_KEYS]
        if shapes != [(n, OBS_SIZE), (n, NUM_ACTIONS), (n,), (n,)]:
            raise ValueError(f"targets file {str(p)!r}: shapes {shapes} do not fit {OBS_SIZE} observation "
                             f"columns and {NUM_ACTIONS} actions")
        if not d["mask"][np.arange(n), d["action"]].all():
            raise ValueError(f"targets file {str(p)!r}: a target action is not legal in its row")
        if Q_KEY in d and d[Q_KEY].shape != (n, NUM_ACTIONS):
            raise ValueError(f"targets file {str(p)!r}: its {Q_KEY!r} has shape {d[Q_KEY].shape}, not "
                             f"{(n, NUM_ACTIONS)}")
        parts.append(d)
    if not parts:
        raise ValueError("distill: no targets files")
    keys = TARGET_KEYS + ((Q_KEY,) if all(Q_KEY in d for d in parts) else ())
    return {k: np.concatenate([d[k] for d in parts]) for k in keys}


def policy_from_checkpoint(path: str, warn_corrections: bool = True) -> tuple[SmearPolicy, dict[str, Any]]:
    """A trainable :class:`SmearPolicy` holding a checkpoint's policy (without its advantage corrections:
    :func:`~training.checkpoint.load_policy_state`), and the checkpoint's metadata."""
    state, meta = load_policy_state(path, warn_corrections=warn_corrections)
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
    out = {k: v for k, v in meta.items() if k not in ("name", "model_card", "source", "state", "corrections",
                                                      "advantage_rounds")}  # the student is one network
    out["algorithm"] = algorithm
    out[algorithm] = dict(record)
    n = len(meta.get("corrections") or [])
    if n:  # the student started from the init's network alone: say what it did not start from
        out[algorithm]["init_corrections_not_carried_over"] = n
    return out


def greedy_actions(policy: SmearPolicy, obs: torch.Tensor, mask: torch.Tensor,
                   chunk: int = 8192) -> torch.Tensor:
    """The policy's greedy action of each row (argmax over the legal actions), ``chunk`` rows at a time."""
    with torch.no_grad():
        return torch.cat([policy.logits(obs[i:i + chunk], mask[i:i + chunk]).argmax(1)
                          for i in range(0, obs.shape[0], chunk)])


def search_changes(policy: SmearPolicy, data: dict[str, np.ndarray], obs: torch.Tensor | None = None,
                   mask: torch.Tensor | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(which rows the search *changed* -- searched, with a target that is not ``policy``'s greedy action --,
    ``policy``'s greedy action of every row). ``obs``, ``mask``: ``data``'s as torch tensors, when the caller
    already has them."""
    policy.eval()
    obs = torch.from_numpy(data["obs"].astype(np.float32)) if obs is None else obs
    mask = torch.from_numpy(data["mask"].astype(bool)) if mask is None else mask
    start = greedy_actions(policy, obs, mask).numpy()
    return data["searched"].astype(bool) & (start != data["action"]), start


def distill(policy: SmearPolicy, data: dict[str, np.ndarray], epochs: int, lr: float, batch: int,
            seed: int, holdout: float = 0.05, log: Any = print, changed_weight: float = 1.0,
            min_gain: float | None = None) -> dict[str, float | None]:
    """Fine-tune ``policy`` (in place) by cross-entropy on ``data``'s actions.

    A row is *changed* when it was searched and its target is not the starting policy's greedy action.
    ``changed_weight``: the loss weight of a changed row (the others weigh 1). ``min_gain``: keep a change
    only where the search valued it at least this much above the policy's action (needs the targets' ``q``);
    the other changed rows get the policy's own action as their target.

    Returns, besides the row counts, what the student learned of the changes: the share of changed rows
    whose target it now plays, on the training rows (``followed_train``) and on ``holdout`` rows it never
    trained on (``followed_held_out``), and the share of held-out unchanged rows with more than one legal
    action where it no longer plays the starting policy's action (``flipped_held_out``). A change the student
    cannot follow on held-out rows, or a flip, is the search's gain lost in distillation. Shares are None
    where there is no such row."""
    if not changed_weight > 0:
        raise ValueError(f"distill: changed_weight must be > 0, not {changed_weight!r}")
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    n = data["action"].size
    val, train = fitter.holdout(rng, n, holdout)
    is_val = np.zeros(n, dtype=bool)
    is_val[val] = True
    obs = torch.from_numpy(data["obs"].astype(np.float32))
    mask = torch.from_numpy(data["mask"].astype(bool))
    act = torch.from_numpy(data["action"].astype(np.int64))
    changed, start = search_changes(policy, data, obs, mask)
    dropped = 0
    if min_gain is not None:
        if Q_KEY not in data:
            raise ValueError("distill: min_gain needs the search's values, and not every targets file has "
                             f"a {Q_KEY!r} array (files written before they were recorded have none)")
        rows = np.flatnonzero(changed)
        q = data[Q_KEY]
        gain = q[rows, act.numpy()[rows]] - q[rows, start[rows]]
        small = rows[~(gain >= min_gain)]
        act[torch.from_numpy(small)] = torch.from_numpy(start[small])
        changed[small] = False
        dropped = int(small.size)
    weight = torch.from_numpy(np.where(changed, changed_weight, 1.0).astype(np.float32))
    several = data["mask"].sum(axis=1) > 1

    def shares() -> dict[str, float | None]:
        now = greedy_actions(policy, obs, mask).numpy()
        target = act.numpy()

        def share(rows: np.ndarray, hit: np.ndarray) -> float | None:
            return float(hit[rows].mean()) if rows.any() else None

        return {"followed_train": share(changed & ~is_val, now == target),
                "followed_held_out": share(changed & is_val, now == target),
                "flipped_held_out": share(~changed & is_val & several, now != start)}

    learned = shares() if epochs < 1 else {}

    def loss(idx: torch.Tensor) -> tuple[torch.Tensor, dict[str, float]]:
        ce = torch.nn.functional.cross_entropy(policy.logits(obs[idx], mask[idx]), act[idx], reduction="none")
        weighted = (ce * weight[idx]).sum() / weight[idx].sum()
        return weighted, {"loss": weighted.item()}

    def after_epoch(epoch: int, stats: dict[str, list[float]]) -> None:
        policy.eval()
        learned.update(shares())
        log(f"epoch {epoch}: cross-entropy {np.mean(stats['loss']):.4f}, "
            + ", ".join(f"{k} {v if v is None else round(v, 4)}" for k, v in learned.items()))

    fitter.fit(policy.parameters(), loss, epochs, lr, train, batch, rng, clip=1.0, module=policy,
               after_epoch=after_epoch)
    return {"rows": float(n), "searched_rows": float(data["searched"].sum()),
            "changed_rows": float(changed.sum()), "changes_dropped_by_min_gain": float(dropped), **learned}

