"""Per-decision-type diagnostics of a training batch: bid, trump, discard and play decisions apart.

A Smear policy makes four kinds of decision with one network, and they learn at different speeds (the
bidding of a from-scratch learner can collapse while its card play improves: the research log,
``docs/research/training-diagnosis.md``).
These helpers split a batch's numbers by the kind of the action taken -- the action id alone says which
(:mod:`smear_env.core.actions`: bids, then trumps, then discards, then plays) -- and name them
``decisions/<type>/<stat>``:

``share``
    the type's share of the batch's decisions;
``legal``
    the mean number of legal actions at those decisions;
``return``
    the mean return the learner regressed on (or the PPO return target);
``entropy``
    (PPO) the mean entropy of the policy over the legal actions, nats;
``value_error``
    (PPO) mean squared error of the value head against the return; (dmc) of Q(s, a) against the return;
``adv_scale``
    (PPO) the standard deviation of the advantages before normalisation; (dmc) the mean spread max Q - mean Q
    over the legal actions (how much the greedy choice is worth over an average legal one);
``bid/p_pass``, ``bid/p_2``, ``bid/p_3``, ``bid/p_4``
    the bid actions taken.

And, from the hands the learner's seats won the auction (:func:`tally_contracts`, :func:`contract_scalars`),
``bids/contract_success`` (the share of its contracts made), ``bids/avg_contract`` and ``bids/made_at_<k>``
(the share made of its contracts at level k).

The trainers log them with their other scalars (TensorBoard, and train.log's ``train`` records, which
average the updates between two records).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from smear_env.core.actions import DISCARD_ACTION_BASE, PLAY_ACTION_BASE, TRUMP_ACTION_BASE, bid_action

DECISION_TYPES = ("bid", "trump", "discard", "play")
_BASES = np.array([TRUMP_ACTION_BASE, DISCARD_ACTION_BASE, PLAY_ACTION_BASE])
_BID_NAMES = (("pass", bid_action(0)), ("2", bid_action(2)), ("3", bid_action(3)), ("4", bid_action(4)))


def tally_contracts(stats: dict[str, Any], table: Any, scored: np.ndarray) -> None:
    """Add the contracts of the hands ``scored`` (lane indices of a
    :class:`~smear_env.tables.batched_table.BatchedTable` whose hand was just scored) that a learner seat won
    to ``stats``: ``contracts``, ``made``, ``contract_sum`` and, per level k, ``contracts_<k>`` and
    ``made_<k>``."""
    vg = table.vg
    mine = table.is_learner[table.seating[scored, vg.hand_bidder[scored]]]
    if not mine.any():
        return
    lanes = scored[mine]
    level = vg.hand_contract[lanes].astype(np.int64)
    made = vg.hand_made[lanes].astype(bool)
    stats["contracts"] = stats.get("contracts", 0) + int(lanes.size)
    stats["made"] = stats.get("made", 0) + int(made.sum())
    stats["contract_sum"] = stats.get("contract_sum", 0) + int(level.sum())
    for k in np.unique(level).tolist():
        at = level == k
        stats[f"contracts_{k}"] = stats.get(f"contracts_{k}", 0) + int(at.sum())
        stats[f"made_{k}"] = stats.get(f"made_{k}", 0) + int(made[at].sum())


def contract_scalars(st: dict[str, Any]) -> dict[str, float]:
    """The logged scalars of :func:`tally_contracts`'s counts (none without a contract)."""
    if not st.get("contracts"):
        return {}
    out = {"bids/contract_success": st["made"] / st["contracts"],
           "bids/avg_contract": st["contract_sum"] / st["contracts"]}
    for k in (2, 3, 4):
        if st.get(f"contracts_{k}"):
            out[f"bids/made_at_{k}"] = st[f"made_{k}"] / st[f"contracts_{k}"]
    return out


def decision_type(act: np.ndarray) -> np.ndarray:
    """The decision type (index into :data:`DECISION_TYPES`) of each action id in ``act``."""
    return np.searchsorted(_BASES, np.asarray(act), side="right")


class TypeMeans:
    """Means per decision type of per-row values accumulated over minibatches (nothing here touches the
    gradients)."""

    def __init__(self) -> None:
        self.sums: dict[str, np.ndarray] = {}
        self.counts: dict[str, np.ndarray] = {}

    def add(self, name: str, types: np.ndarray, values: Any) -> None:
        """Add per-row ``values`` (a torch tensor, detached here, or an array) of rows of ``types``."""
        v = values.detach().numpy() if hasattr(values, "detach") else np.asarray(values)
        v = v.astype(np.float64)
        s = np.bincount(types, weights=v, minlength=len(DECISION_TYPES))
        c = np.bincount(types, minlength=len(DECISION_TYPES))
        self.sums[name] = self.sums.get(name, 0) + s
        self.counts[name] = self.counts.get(name, 0) + c

    def result(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for name, s in self.sums.items():
            c = self.counts[name]
            for i, t in enumerate(DECISION_TYPES):
                if c[i]:
                    out[f"decisions/{t}/{name}"] = float(s[i] / c[i])
        return out


def batch_stats(act: np.ndarray, mask: np.ndarray, ret: np.ndarray, adv: np.ndarray | None = None
                ) -> dict[str, float]:
    """The batch-level numbers per decision type: share, legal actions, return, (PPO) advantage scale, and
    the bid actions taken."""
    types = decision_type(act)
    n = max(1, len(act))
    legal = mask.sum(axis=1)
    out: dict[str, float] = {}
    for i, t in enumerate(DECISION_TYPES):
        sel = types == i
        k = int(sel.sum())
        out[f"decisions/{t}/share"] = k / n
        if k:
            out[f"decisions/{t}/legal"] = float(legal[sel].mean())
            out[f"decisions/{t}/return"] = float(ret[sel].mean())
            if adv is not None:
                out[f"decisions/{t}/adv_scale"] = float(adv[sel].std())
    bids = act[types == 0]
    if bids.size:
        for name, a in _BID_NAMES:
            out[f"decisions/bid/p_{name}"] = float((bids == a).mean())
    return out


def q_spread(q: Any, mask: Any) -> Any:
    """Per row (torch tensors): max Q minus mean Q over the legal actions (dmc's ``adv_scale``)."""
    import torch  # lazy: heavy (torch)

    with torch.no_grad():
        m = mask.bool()
        qm = torch.where(m, q, torch.zeros_like(q))
        mean = qm.sum(1) / m.sum(1).clamp(min=1)
        best = torch.where(m, q, torch.full_like(q, -torch.inf)).max(1).values
        return best - mean


class TrainLogAverager:
    """Averages the scalars of the updates between two ``train`` records of train.log (``smear-train``)."""

    def __init__(self) -> None:
        self.sums: dict[str, float] = {}
        self.counts: dict[str, int] = {}

    def add(self, metrics: dict[str, float]) -> None:
        for k, v in metrics.items():
            if isinstance(v, int | float) and np.isfinite(v):
                self.sums[k] = self.sums.get(k, 0.0) + float(v)
                self.counts[k] = self.counts.get(k, 0) + 1

    def flush(self) -> dict[str, float]:
        """The means since the last flush (sorted by key), then start again."""
        out = {k: round(self.sums[k] / self.counts[k], 6) for k in sorted(self.sums)}
        self.sums, self.counts = {}, {}
        return out


__all__ = ["DECISION_TYPES", "TrainLogAverager", "TypeMeans", "batch_stats", "decision_type", "q_spread"]
