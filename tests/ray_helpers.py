"""Ray for the Ray tests (they skip where ray is absent): a private one for one test
(:func:`local_ray_session`) or a real local two-node cluster (:func:`two_node_cluster`)."""

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

import pytest

RAY = shutil.which("ray", path=str(Path(sys.executable).parent)) or "ray"
"""The ``ray`` command of this venv."""
FAST_HEALTH = {"RAY_health_check_period_ms": "500", "RAY_health_check_timeout_ms": "500",
               "RAY_health_check_failure_threshold": "3", "RAY_health_check_initial_delay_ms": "500"}
"""A cluster's environment in which a dead node is noticed in a few seconds, not Ray's default of about 30."""


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
