"""Ray for the Ray tests (they skip where ray is absent): a private one for one test
(:func:`local_ray_session`) or a real local two-node cluster (:func:`two_node_cluster`); and the shards they
map (:func:`plan`, :func:`evaluation_shard`, :func:`same_targets`)."""

from __future__ import annotations

import gc
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from smear_env.core.config import SmearRules
from smear_env.evaluation import run_match
from smear_env.evaluation.batched import even_shares

RAY = shutil.which("ray", path=str(Path(sys.executable).parent)) or "ray"
"""The ``ray`` command of this venv."""
FAST_HEALTH = {"RAY_health_check_period_ms": "500", "RAY_health_check_timeout_ms": "500",
               "RAY_health_check_failure_threshold": "3", "RAY_health_check_initial_delay_ms": "500"}
"""A cluster's environment in which a dead node is noticed in a few seconds, not Ray's default of about 30."""


def plan(games: int, seed: int, shards: int, unit: int = 1) -> list[tuple[int, int]]:
    """(games, seed) of each of ``shards`` shares of ``games`` (whole ``unit``s each: 2 for duplicate pairs;
    empty shares left out), on the seeds of :func:`training.winprob.shard_seeds`."""
    from training.winprob import shard_seeds  # lazy: heavy (torch)

    if games < 1 or shards < 1 or unit < 1 or games % unit:
        raise ValueError(f"games must be a positive multiple of {unit} and shards >= 1, "
                         f"not {games} and {shards}")
    return [(n * unit, s) for n, s in zip(even_shares(games // unit, shards), shard_seeds(seed, shards),
                                          strict=True) if n > 0]


def evaluation_shard(team_a: str, team_b: str, games: int, seed: int, rules: dict[str, Any] | None = None,
                     max_hands: int = 200) -> dict[str, Any]:
    """A pool shard: the summary of a duplicate match of ``games`` games on deal seed ``seed`` (without its
    wall time)."""
    r = run_match(team_a, team_b, games=games, rules=SmearRules(**(rules or {})), seed=seed,
                  max_hands=max_hands)
    return {k: v for k, v in r.summary().items() if k != "seconds"}


def same_targets(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    """Whether two targets dicts hold the same arrays, bit for bit."""
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


@contextmanager
def local_ray_session(monkeypatch: pytest.MonkeyPatch, num_cpus: int) -> Iterator[Any]:
    """``ray.init(address="local", num_cpus=...)`` for the block, shut down after it (the ray module)."""
    ray = pytest.importorskip("ray")
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")  # ray.init would leave "token" set for later tests
    gc.collect()  # handles left by an earlier Ray session of this process must not be freed in this one
    ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        gc.collect()  # no handle of this Ray may be freed in the next one's session (ids repeat)
        ray.shutdown()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(args: list[str], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([RAY, "start", "--block", "--disable-usage-stats", *args], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def _stop(proc: subprocess.Popen) -> None:
    """End a ``ray start --block`` and every process of its group (its node's raylet and workers)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=4)
        except subprocess.TimeoutExpired:
            continue


@contextmanager
def two_node_cluster(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """A real two-node Ray cluster on loopback for the block: a head (``ray start --head``, 3 CPUs) and a
    second node (``ray start --address``, 2 CPUs), each with its own temporary folder, this process joined
    as a driver; both torn down after it, whatever happened. Yields ``address`` (the head's ``host:port``),
    ``head`` and ``other`` (the node ids), ``kill`` (ends the second node) and ``root`` (the folder).

    The driver and both nodes run with ``RAY_AUTH_MODE=disabled``: an earlier ``ray.init`` in the same
    process leaves ``RAY_AUTH_MODE=token`` in its environment, and a driver in token mode on a cluster
    without it found its actors dead on creation ("all references to the actor were removed")."""
    ray = pytest.importorskip("ray")
    from training.distributed.pool import alive_nodes

    root = tempfile.mkdtemp(prefix="srf", dir="/tmp")  # short: Ray's socket paths live under it
    port = _free_port()
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")  # the driver as the nodes
    env = {**os.environ, **FAST_HEALTH}
    head = _start(["--head", "--node-ip-address", "127.0.0.1", "--port", str(port), "--num-cpus", "3",
                   "--include-dashboard", "false", "--temp-dir", f"{root}/h"], env)
    second = None
    gc.collect()  # handles of an earlier Ray in this process must not be freed in this one's session
    try:
        address = f"127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:  # the head answers
            try:
                ray.init(address=address, include_dashboard=False, log_to_driver=False)
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        head_id = ray.get_runtime_context().get_node_id()
        second = _start(["--address", address, "--node-ip-address", "127.0.0.1", "--num-cpus", "2",
                         "--temp-dir", f"{root}/w"], env)
        while len(alive_nodes()) < 2:
            assert time.monotonic() < deadline, "the second node did not join"
            time.sleep(0.3)
        other = next(n for n in alive_nodes() if n != head_id)
        yield {"address": address, "head": head_id, "other": other, "kill": lambda: _stop(second),
               "root": root}
    finally:
        gc.collect()  # no handle of this Ray may be freed in the next one's session (ids repeat)
        ray.shutdown()
        if second is not None:
            _stop(second)
        _stop(head)
        shutil.rmtree(root, ignore_errors=True)
