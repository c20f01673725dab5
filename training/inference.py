"""Train a card-location inference model (:mod:`smear_env.agents.inference`) on games of chosen policies.

The games are played on the batched engine: ``--team`` at seats 0 and 2, ``--opponent`` at 1 and 3 (agent
specs that do not draw, so the games depend only on the seed). Every decision of a ``--team`` seat in the
chosen phases is a row: its observation and, as labels, the true place of each card it cannot see
(:func:`~smear_env.agents.inference.true_locations`). The model (an MLP, ReLU) is fitted by cross-entropy
on the hidden cards; the held-out log-loss is reported next to that of the "size prior" (each place in
proportion to how many hidden cards it holds, voids respected), so the file says how much it learned.

    python -m training.inference --team default --opponent heuristic --hands 40000 --seed 91001 \\
        --out runs/inference.safetensors [--hidden 256 256 --epochs 4 --lr 1e-3 --phases trump+discard+play]

The model reads the team's own view of the opponents: trained on games against the heuristic, it knows
how the heuristic bids and plays, which is what a search that models the heuristic as the other team uses.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from smear_env.agents.inference import KIND, KNOWN, NUM_LOCATIONS, true_locations
from smear_env.agents.rollout import PHASES as PHASE_CODES
from smear_env.cards import NUM_CARDS
from smear_env.config import SmearRules
from smear_env.observation import OBS_SCALE, OBS_SIZE, SLICES

from .checkpoint import base_metadata, save_tensors


def generate(team: str, opponent: str, hands: int, seed: int, rules: SmearRules,
             phases: Sequence[int], lanes: int = 512) -> dict[str, np.ndarray]:
    """Rows (``obs`` float16 (n, 493), ``labels`` int8 (n, 32)) of ``team``'s decisions in ``phases`` over
    at least ``hands`` hands played on ``lanes`` lanes of the batched engine."""
    from smear_env.agents.rollout import rollout_players, team_actions
    from smear_env.vector import VectorGame

    a, b = rollout_players(team, opponent, rules)
    vg = VectorGame(lanes, rules, seed=seed)
    obs_rows, label_rows = [], []
    done_hands = 0
    codes = np.asarray(list(phases))
    try:
        while done_hands < hands:
            obs = vg.observe()
            mask = vg.legal_mask()
            seat = vg.to_act.copy()
            own = (seat & 1) == 0
            keep = np.flatnonzero(own & np.isin(vg.phase, codes))
            if keep.size:
                obs_rows.append(obs[keep].astype(np.float16))
                label_rows.append(true_locations(vg.hands[keep], vg.played_by[keep], vg.discards[keep],
                                                 vg.bidder[keep], vg.phase[keep], seat[keep]))
            res = vg.step(team_actions(a, b, obs, mask, seat))
            done_hands += int((res.hand_over | res.thrown_in).sum())
    finally:
        a.close()
        b.close()
    return {"obs": np.concatenate(obs_rows), "labels": np.concatenate(label_rows)}


class InferenceNet(torch.nn.Module):
    """The trainable twin of :class:`~smear_env.agents.inference.InferenceModel` (same tensor names)."""

    def __init__(self, hidden_sizes: Sequence[int]) -> None:
        super().__init__()
        sizes = [OBS_SIZE, *hidden_sizes, NUM_CARDS * NUM_LOCATIONS]
        pairs = zip(sizes[:-1], sizes[1:], strict=True)
        self.layers = torch.nn.ModuleList(torch.nn.Linear(i, o) for i, o in pairs)
        self.register_buffer("scale", torch.from_numpy(np.asarray(OBS_SCALE, dtype=np.float32)))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        x = obs * self.scale
        for layer in self.layers[:-1]:
            x = torch.relu(layer(x))
        return self.layers[-1](x).view(-1, NUM_CARDS, NUM_LOCATIONS)

    def tensors(self) -> dict[str, torch.Tensor]:
        return {f"inference.{i}.{p}": getattr(layer, p) for i, layer in enumerate(self.layers)
                for p in ("weight", "bias")}


def prior_log_loss(obs: np.ndarray, labels: np.ndarray) -> float:
    """Mean log-loss over the hidden cards of the size prior: a card's place in proportion to the number
    of hidden cards each place holds (the labels' counts), zero where the place's seat is void in the
    card's suit."""
    hidden = labels != KNOWN
    sizes = np.stack([(labels == j).sum(axis=1) for j in range(NUM_LOCATIONS)], axis=1).astype(float)
    voids = obs[:, SLICES["voids"]].reshape(-1, 4, 4).astype(bool)  # by rel seat, suit
    suit = np.arange(NUM_CARDS) >> 3
    w = np.repeat(sizes[:, None, :], NUM_CARDS, axis=1)  # (n, 32, 5)
    for j in range(3):
        w[:, :, j] *= ~voids[:, j + 1][:, suit]
    w /= np.maximum(w.sum(axis=2, keepdims=True), 1e-12)
    p = np.take_along_axis(w, np.maximum(labels, 0)[:, :, None].astype(np.int64), axis=2)[:, :, 0]
    return float(-np.log(np.maximum(p[hidden], 1e-12)).mean())


def fit(data: dict[str, np.ndarray], hidden_sizes: Sequence[int], epochs: int, lr: float, batch: int,
        seed: int, holdout: float = 0.05, log: Any = print) -> tuple[InferenceNet, dict[str, float]]:
    """Fit an :class:`InferenceNet` by cross-entropy on the hidden cards; returns it and the held-out
    log-loss of the model and of the size prior, per hidden card."""
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    n = data["labels"].shape[0]
    perm = rng.permutation(n)
    n_val = max(1, int(n * holdout))
    val, train = perm[:n_val], perm[n_val:]
    obs = torch.from_numpy(data["obs"])
    labels = torch.from_numpy(data["labels"].astype(np.int64))
    net = InferenceNet(hidden_sizes)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    steps_total = epochs * ((train.size + batch - 1) // batch)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0 - s / max(1, steps_total))

    def loss_of(idx: torch.Tensor) -> torch.Tensor:
        logits = net(obs[idx].float())
        return torch.nn.functional.cross_entropy(logits.reshape(-1, NUM_LOCATIONS), labels[idx].reshape(-1),
                                                 ignore_index=KNOWN)

    def held_out() -> float:
        with torch.no_grad():
            return float(np.mean([loss_of(torch.from_numpy(val[i:i + 8192])).item()
                                  for i in range(0, val.size, 8192)]))

    for epoch in range(epochs):
        order = torch.from_numpy(rng.permutation(train))
        losses = []
        for start in range(0, order.numel(), batch):
            loss = loss_of(order[start:start + batch])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            losses.append(loss.item())
        log(f"epoch {epoch + 1}: train log-loss {np.mean(losses):.4f}, held-out {held_out():.4f}")
    prior = prior_log_loss(data["obs"][val].astype(np.float32), data["labels"][val])
    return net, {"held_out_log_loss": held_out(), "prior_log_loss": prior, "rows": float(n)}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m training.inference", description=__doc__.split("\n\n")[0])
    ap.add_argument("--team", default="default", help="agent spec of the observers (seats 0 and 2)")
    ap.add_argument("--opponent", default="heuristic", help="agent spec of the other team (seats 1, 3)")
    ap.add_argument("--hands", type=int, default=40000, help="hands of games to learn from")
    ap.add_argument("--phases", default="trump+discard+play", help="'+'-joined of " + ", ".join(PHASE_CODES))
    ap.add_argument("--hidden", type=int, nargs="+", default=[256, 256])
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    phases = args.phases.split("+")
    bad = [p for p in phases if p not in PHASE_CODES]
    if bad:
        ap.error(f"--phases: {bad} not among {sorted(PHASE_CODES)}")
    if args.hands < 1 or args.epochs < 1 or any(h < 1 for h in args.hidden):
        ap.error("--hands, --epochs and --hidden must be >= 1")
    torch.set_num_threads(1)
    rules = SmearRules()
    t0 = time.monotonic()
    data = generate(args.team, args.opponent, args.hands, args.seed, rules, [PHASE_CODES[p] for p in phases])
    t_gen = time.monotonic() - t0
    print(f"{data['labels'].shape[0]} rows from {args.hands} hands in {t_gen:.0f} s", flush=True)
    net, res = fit(data, args.hidden, args.epochs, args.lr, args.batch, args.seed)
    record = {"team": args.team, "opponent": args.opponent, "hands": args.hands, "phases": phases,
              "epochs": args.epochs, "lr": args.lr, "batch": args.batch, "seed": args.seed,
              "command": " ".join(["python -m training.inference", *(argv or sys.argv[1:])]),
              **res, "seconds": round(time.monotonic() - t0, 1)}
    meta = base_metadata(rules, {"hidden_sizes": list(args.hidden), "activation": "relu"}, KIND, 0,
                         training=record)
    meta["kind"] = KIND
    save_tensors(args.out, net.tensors(), meta)
    print(f"wrote {args.out}: {res}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
