"""Faults on a real two-node Ray cluster: a head (``ray start --head``) and a second node (``ray start
--address``) on loopback, each with its own CPUs and temporary folder, torn down in a finally. A search
round's shards and a short dmc run go on together; the second node is killed while it runs a shard and an
actor. The shard map finishes with Ray's task retries and equals the local result bit for bit; the dmc
learner says in the log that it goes on with fewer actors, trains on, and takes the actor back once Ray
restarted it on the head. Skipped where ray is absent (``make test-frameworks`` runs it in the RLlib venv).

The cluster is :func:`tests.ray_helpers.two_node_cluster`'s.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
ray = pytest.importorskip("ray")

from tests.ray_helpers import plan, same_targets, two_node_cluster  # noqa: E402
from training.algorithms.dmc_ray import RayDMCTrainer  # noqa: E402
from training.config import load_config  # noqa: E402
from training.distributed.pool import alive_nodes, open_pool  # noqa: E402
from training.distributed.settings import RaySettings  # noqa: E402
from training.expert_iteration import search_shard  # noqa: E402

SEARCH = "rollout:base=heuristic,opponent=heuristic,samples=2,phases=trump"


def marked_search_shard(marks: str, shard: int, *args):
    """:func:`search_shard`, leaving a file that says which node started shard ``shard``."""
    Path(marks, f"{shard}-{ray.get_runtime_context().get_node_id()}").touch()
    return search_shard(*args)


@pytest.fixture
def two_nodes(monkeypatch):
    with two_node_cluster(monkeypatch) as cluster:
        yield cluster


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
    assert len(alive_nodes()) == 1
