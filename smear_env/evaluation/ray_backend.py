"""Duplicate evaluation on Ray: the pairs of a match run as Ray tasks (``smear-eval --backend ray``,
``run_match(..., backend="ray")``). Needs ``ray`` (``pip install "smear-rl[rllib]"``).

Each task plays a contiguous chunk of pairs with the same code as a local worker process (agents built once
per task from the team specs); results are gathered in pair order, so a match gives exactly the same result
(and records) as the local backend for the same seed, whatever the cluster. Without a running Ray, a local
one is started for the match (``address=None``) or the cluster at ``address`` is joined (``"auto"``: the
cluster this machine belongs to, ``ray start``; or ``"host:port"``), and left again at the end. Agent specs
travel as strings: a checkpoint path must exist on every node, a bot command must run on every node.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..core.config import SmearRules
from .pairs import pair_worker_init, pair_worker_run


def _run_chunk(team_a: Any, team_b: Any, rules: dict[str, Any], seed: int, max_hands: int, records: bool,
               pairs: list[int]) -> list[tuple[Any, Any]]:
    pair_worker_init(team_a, team_b, rules, seed, max_hands, records)
    return [pair_worker_run(p) for p in pairs]


def run_pairs(team_a: Any, team_b: Any, rules: SmearRules, seed: int, max_hands: int, records: bool,
              n_pairs: int, address: str | None = None,
              chunk: int | None = None) -> Iterator[tuple[Any, Any]]:
    """Yield each pair's ``(stats, records)`` in pair order, the pairs played as Ray tasks of ``chunk``
    pairs (default: about four tasks per CPU of the cluster, at most 16 pairs each)."""
    import ray  # lazy: optional dependency (the rllib extra)

    started = not ray.is_initialized()
    if started:
        # None means a new local Ray (as documented): Ray's own None joins a cluster it finds running
        ray.init(address=address or "local", include_dashboard=False, log_to_driver=False)
    try:
        if chunk is None:
            cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
            chunk = max(1, min(16, n_pairs // (cpus * 4)))
        task = ray.remote(num_cpus=1)(_run_chunk)
        rules_dict = rules.to_dict()
        refs = [task.remote(team_a, team_b, rules_dict, seed, max_hands, records,
                            list(range(start, min(n_pairs, start + chunk))))
                for start in range(0, n_pairs, chunk)]
        for ref in refs:  # in order: the result does not depend on where or when a task ran
            yield from ray.get(ref)
    finally:
        if started:
            ray.shutdown()
