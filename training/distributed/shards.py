"""Shard functions of the deterministic stages, for :meth:`training.distributed.pool.WorkerPool.map`: each
shard carries its own seed, so its result is the same on any worker, local or on Ray.

- :func:`evaluation_shard`: a duplicate match's figures (``smear_env.evaluation.run_match``);
- :func:`training.expert_iteration.search_shard`: an expert-iteration round's searched games and their targets
  (:func:`training.expert_iteration.generate`), returned as arrays, so no node needs the driver's disk;
- the win model's games: :func:`training.winprob.collect` itself is a shard function;
- :func:`plan`: the (games, seed) of each share of a stage's games (:func:`even_shares`,
  :func:`training.winprob.shard_seeds`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from smear_env.core.config import SmearRules
from smear_env.evaluation import run_match
from smear_env.evaluation.batched import even_shares


def plan(games: int, seed: int, shards: int, unit: int = 1) -> list[tuple[int, int]]:
    """(games, seed) of each of ``shards`` shares of ``games`` (whole ``unit``s each: 2 for duplicate pairs;
    empty shares left out): the seeds of :func:`training.winprob.shard_seeds`, so the work depends on
    ``seed`` and ``shards``, never on the workers."""
    from training.winprob import shard_seeds  # lazy: heavy (torch)

    if games < 1 or shards < 1 or unit < 1 or games % unit:
        raise ValueError(f"games must be a positive multiple of {unit} and shards >= 1, "
                         f"not {games} and {shards}")
    return [(n * unit, s) for n, s in zip(even_shares(games // unit, shards), shard_seeds(seed, shards),
                                          strict=True) if n > 0]


def evaluation_shard(team_a: str, team_b: str, games: int, seed: int, rules: dict[str, Any] | None = None,
                     max_hands: int = 200) -> dict[str, Any]:
    """The summary of a duplicate match of ``games`` games on deal seed ``seed`` (without its wall time)."""

    r = run_match(team_a, team_b, games=games, rules=SmearRules(**(rules or {})), seed=seed,
                  max_hands=max_hands)
    return {k: v for k, v in r.summary().items() if k != "seconds"}


def same_targets(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    """Whether two targets dicts hold the same arrays, bit for bit."""
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
