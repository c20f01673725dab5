"""Faults on a real two-node Ray cluster: a head (``ray start --head``) and a second node (``ray start
--address``) on loopback, each with its own CPUs and temporary folder, torn down in a finally. A search
round's shards and a short dmc run go on together; the second node is killed while it runs a shard and an
actor. The shard map finishes with Ray's task retries and equals the local result bit for bit; the dmc
learner says in the log that it goes on with fewer actors, trains on, and takes the actor back once Ray
restarted it on the head. Skipped where ray is absent (``make test-frameworks`` runs it in the RLlib venv).

The driver and both nodes run with ``RAY_AUTH_MODE=disabled``: an earlier ``ray.init`` in the same process
leaves ``RAY_AUTH_MODE=token`` in its environment, and a driver in token mode on a cluster without it found
its actors dead on creation ("all references to the actor were removed").
"""

from __future__ import annotations

import gc
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
ray = pytest.importorskip("ray")

from training.algorithms.dmc_ray import RayDMCTrainer  # noqa: E402
from training.config import load_config  # noqa: E402
from training.distributed.pool import open_pool  # noqa: E402
from training.distributed.settings import RaySettings  # noqa: E402
from training.distributed.shards import plan, same_targets  # noqa: E402
from training.expert_iteration import search_shard  # noqa: E402

SEARCH = "rollout:base=heuristic,opponent=heuristic,samples=2,phases=trump"
RAY = shutil.which("ray", path=str(Path(sys.executable).parent)) or "ray"
# a dead node is noticed in a few seconds, not Ray's default of about 30
FAST_HEALTH = {"RAY_health_check_period_ms": "500", "RAY_health_check_timeout_ms": "500",
               "RAY_health_check_failure_threshold": "3", "RAY_health_check_initial_delay_ms": "500"}


def marked_search_shard(marks: str, shard: int, *args):
    """:func:`search_shard`, leaving a file that says which node started shard ``shard``."""
    Path(marks, f"{shard}-{ray.get_runtime_context().get_node_id()}").touch()
    return search_shard(*args)


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


def _alive_nodes() -> list[str]:
    return [n["NodeID"] for n in ray.nodes() if n["Alive"]]


@pytest.fixture
def two_nodes(monkeypatch):
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
        while len(_alive_nodes()) < 2:
            assert time.monotonic() < deadline, "the second node did not join"
            time.sleep(0.3)
        other = next(n for n in _alive_nodes() if n != head_id)
        yield {"head": head_id, "other": other, "kill": lambda: _stop(second), "root": root}
    finally:
        gc.collect()  # no handle of this Ray may be freed in the next one's session (ids repeat)
        ray.shutdown()
        if second is not None:
            _stop(second)
        _stop(head)
        shutil.rmtree(root, ignore_errors=True)


def test_node_death_mid_stage_loses_nothing(two_nodes, caplog, tmp_path):
    caplog.set_level(logging.INFO, logger="training")
    jobs = [(SEARCH, "heuristic", g, s) for g, s in plan(16, 81, 4, unit=2)]
    want = [search_shard(*j) for j in jobs]  # the local result, in this process

    cfg = load_config("configs/dmc.yaml", ["n_envs=8", "algorithm.n_steps=8", "algorithm.batch_size=64",
                                           "network.hidden_sizes=[32]"])
    tr = RayDMCTrainer(cfg, np.random.default_rng(3), RaySettings(address="auto", workers=2))
    killed = threading.Event()
    try:
        tr.iterate()
        node_of = [ray.get(a.__ray_call__.remote(lambda self: ray.get_runtime_context().get_node_id()))
                   for a in tr.actors]
        assert sorted(node_of) == sorted([two_nodes["head"], two_nodes["other"]])  # SPREAD: one a node
        got: dict[str, list] = {}
        marks = tmp_path / "marks"
        marks.mkdir()

        def search_round() -> None:
            ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
            with open_pool(RaySettings(address="auto", workers=4)) as pool:
                got["out"] = pool.map(marked_search_shard, [(str(marks), i, *j) for i, j in enumerate(jobs)])
                got["nodes"] = pool.last_nodes

        def killer() -> None:
            t0 = time.monotonic()
            while not any(p.name.endswith(two_nodes["other"]) for p in marks.iterdir()):
                if time.monotonic() - t0 > 60:
                    return
                time.sleep(0.05)
            two_nodes["kill"]()
            killed.set()

        threads = [threading.Thread(target=search_round), threading.Thread(target=killer)]
        for t in threads:
            t.start()
        t0 = time.monotonic()
        while not killed.is_set() or "going on with 1 of 2 actors" not in caplog.text:
            assert time.monotonic() - t0 < 90, "the node was not killed, or the learner did not notice"
            tr.iterate()  # the learner trains on through the node's death
        updates_when_down = tr.updates
        for t in threads:
            t.join(timeout=120)
        while "is back (restarted by Ray)" not in caplog.text:
            assert time.monotonic() - t0 < 150, "the actor was not restarted on the head"
            tr.iterate()
        m = tr.iterate()
    finally:
        tr.close()
    # the search round: every shard done, on the head in the end, equal to the local result
    other = two_nodes["other"]
    started_there = {int(p.name.split("-")[0]) for p in marks.iterdir() if p.name.endswith(other)}
    assert started_there and all(got["nodes"][i] == two_nodes["head"] for i in started_there)
    assert f"ray pool: node(s) {other[:12]} died during the map of 4 shards; Ray re-ran" in caplog.text
    for g, w in zip(got["out"], want, strict=True):
        assert g["match"] == w["match"] and same_targets(g["targets"], w["targets"])
    # dmc: noticed, went on with one actor, took the restarted one back
    dead = node_of.index(two_nodes["other"])
    assert f"actor {dead} died (" in caplog.text
    assert f"actor {dead} is back (restarted by Ray); 2 of 2 actors up" in caplog.text
    assert m["ray/actors_up"] == 2 and tr.updates > updates_when_down and np.isfinite(m["loss/q_mse"])
    assert len(_alive_nodes()) == 1
