"""Fit a win-probability model (:mod:`smear_env.agents.winprob`) on games of chosen policies.

``team`` (seats 0 and 2) plays ``games`` games against ``opponent`` (1 and 3) on the batched engine; every
hand start of a finished game (its scores and who deals) is a row, labelled by whether ``team`` won that game
(games cut off at ``max_hands`` are dropped). A small tanh MLP is fitted by logistic loss (full batch, Adam);
the file records the held-out log-loss next to that of the constant (the overall win rate).

``shards`` S splits the games into S shares with seeds derived from ``seed`` and the share's index
(:func:`shard_seeds`; one share plays on ``seed`` itself), and ``workers`` W plays the shares in W processes:
the rows, and so the model, depend on the seed and the shares, never on the workers. A pipeline runs it as
its ``winprob`` stage (:mod:`training.stages.winprob`); :func:`fit_file` is the stage's work.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from smear_env.agents.registry import rollout_players
from smear_env.agents.winprob import INPUTS, KIND
from smear_env.core.config import SmearRules
from smear_env.evaluation.batched import even_shares

from . import fit as fitter
from .checkpoint import base_metadata, save_tensors
from .collect import Collector
from .distributed.pool import open_pool
from .distributed.settings import RaySettings


def collect(team: str, opponent: str, games: int, seed: int, rules: SmearRules, lanes: int = 512
            ) -> tuple[np.ndarray, np.ndarray]:
    """(X (n, 3): own score, other score, own team deals; y (n,): ``team`` won) over the hand starts of
    ``games`` finished games (:class:`~training.collect.Collector`)."""

    xs: list[tuple[int, int, int]] = []
    ys: list[int] = []
    with Collector(lanes, rules, seed, *rollout_players(team, opponent, rules)) as col:
        vg = col.vg

        def start(i: int) -> tuple[int, int, int]:
            return int(vg.scores[i, 0]), int(vg.scores[i, 1]), int((vg.dealer[i] & 1) == 0)

        pending = [[start(i)] for i in range(lanes)]
        done = 0
        while done < games:
            res = col.step(col.turn()[3]).result
            for i in np.flatnonzero(res.hand_over | res.thrown_in).tolist():
                if res.game_over[i]:
                    xs += pending[i]
                    ys += [int(res.winner[i] == 0)] * len(pending[i])
                    done += 1
                    pending[i] = [start(i)]
                elif res.truncated[i]:
                    pending[i] = [start(i)]
                else:
                    pending[i].append(start(i))
    return np.array(xs, dtype=np.float32), np.array(ys, dtype=np.float32)


def shard_seeds(seed: int, shards: int) -> list[int]:
    """The deal seed of each of ``shards`` shares of the games: ``seed`` itself for one share, else one drawn
    from ``SeedSequence((seed, i))`` for share ``i`` (not ``seed + i``, which would replay another run's
    games where two runs' seeds are neighbours)."""
    if shards == 1:
        return [seed]
    return [int(np.random.SeedSequence((seed, i)).generate_state(1)[0]) for i in range(shards)]


def collect_shards(team: str, opponent: str, games: int, seed: int, rules: SmearRules, shards: int = 1,
                   workers: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """:func:`collect` over ``shards`` even shares of the games (seeds: :func:`shard_seeds`), played in
    ``workers`` processes (:func:`~training.distributed.pool.open_pool`); the rows in share order, the same
    for any ``workers``."""
    if shards < 1 or workers < 1:
        raise ValueError(f"shards and workers must be >= 1, not {shards} and {workers}")

    plan = zip(even_shares(games, shards), shard_seeds(seed, shards), strict=True)
    jobs = [(team, opponent, n, s, rules) for n, s in plan if n > 0]
    with open_pool(RaySettings(workers=max(1, min(workers, len(jobs))))) as pool:
        parts = pool.map(collect, jobs)
    return np.concatenate([x for x, _ in parts]), np.concatenate([y for _, y in parts])


def fit(x: np.ndarray, y: np.ndarray, hidden_sizes: Sequence[int], target: int, steps: int, seed: int,
        holdout: float = 0.1) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
    """Fit the MLP on rows ``x`` (raw scores), labels ``y``; its tensors and the held-out log-losses.

    A random ``holdout`` share of the rows is held out. The training rows take only a few thousand distinct
    values (scores and dealer), so the loss is computed once per distinct row, weighted by its count, on the
    share of its rows won (:func:`grouped`): the same mean logistic loss over the rows, exactly (it is linear
    in the label), at a small fraction of the cost of every row, so many steps are cheap."""
    torch.manual_seed(seed)
    val, train = fitter.holdout(np.random.default_rng(seed), y.size, holdout, at_least=1)
    scale = np.array([target, target, 1], dtype=np.float32)
    cells, won, count = grouped(x[train], y[train])
    xt = torch.from_numpy(cells / scale)
    yt = torch.from_numpy(won / count)
    wt = torch.from_numpy(count / count.sum())
    xv, yv = torch.from_numpy(x[val] / scale), torch.from_numpy(y[val])
    sizes = [INPUTS, *hidden_sizes, 1]
    layers = [torch.nn.Linear(i, o) for i, o in zip(sizes[:-1], sizes[1:], strict=True)]

    def forward(inp: torch.Tensor) -> torch.Tensor:
        for layer in layers[:-1]:
            inp = torch.tanh(layer(inp))
        return layers[-1](inp)[:, 0]

    bce = torch.nn.functional.binary_cross_entropy_with_logits
    fitter.fit([p for layer in layers for p in layer.parameters()],
               lambda _: (bce(forward(xt), yt, weight=wt, reduction="sum"), {}), steps, 3e-3)
    with torch.no_grad():
        held = float(bce(forward(xv), yv))
    p = float(y[train].mean())
    q = min(max(p, 1e-6), 1 - 1e-6)  # a team that always wins or always loses: a finite constant loss
    const = float(-(y[val] * np.log(q) + (1 - y[val]) * np.log(1 - q)).mean())
    tensors = {f"winprob.{i}.{k}": getattr(layer, k).detach() for i, layer in enumerate(layers)
               for k in ("weight", "bias")}
    return tensors, {"held_out_log_loss": held, "constant_log_loss": const, "win_rate": p,
                     "rows": float(y.size), "distinct_training_rows": float(len(cells))}


def grouped(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(the distinct rows of ``x`` in sorted order, float32; the labels ``y`` summed per distinct row; the
    rows per distinct row): the sufficient statistics of a logistic loss on ``x``, ``y``."""
    cells, inv, count = np.unique(x, axis=0, return_inverse=True, return_counts=True)
    inv = inv.ravel()
    won = np.bincount(inv, weights=y, minlength=len(cells))
    return cells.astype(np.float32), won.astype(np.float32), count.astype(np.float32)


def fit_file(team: str, out: str | Path, *, opponent: str, games: int, hidden: Sequence[int], steps: int,
             seed: int, shards: int, workers: int) -> dict[str, float]:
    """Collect the games (:func:`collect_shards`), fit (:func:`fit`), write the model to ``out``; returns the
    fit's figures."""
    torch.set_num_threads(1)
    rules = SmearRules()
    t0 = time.monotonic()
    x, y = collect_shards(team, opponent, games, seed, rules, shards, workers)
    tensors, res = fit(x, y, hidden, rules.target_score, steps, seed)
    record = {"team": team, "opponent": opponent, "games": games, "steps": steps, "seed": seed,
              "shards": shards, **res, "seconds": round(time.monotonic() - t0, 1)}
    meta = base_metadata(rules, {"hidden_sizes": list(hidden), "activation": "tanh"}, KIND, 0,
                         training=record)
    meta["kind"] = KIND
    save_tensors(out, tensors, meta)
    print(f"wrote {out}: {res}")
    return res
