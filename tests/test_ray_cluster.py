"""The trainers through ``smear-train`` on a real two-node Ray cluster (a head and a second node on
loopback: :func:`tests.ray_helpers.two_node_cluster`): ``dmc`` with ``ray.address=auto`` trains on Ray
actors and ends with its checkpoints; a pipeline whose expert-iteration and advantage stages have the
head's address as ``ray_address`` runs their shares on both nodes, with the files of the same pipeline on
local processes. Each ``smear-train`` is a process of its own (``training.train.main`` with the
``training`` loggers' INFO lines on stderr), joining the cluster as its own driver. Skipped where ray is
absent (``make test-frameworks`` runs it in the RLlib venv)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("ray")

from tests.ray_helpers import two_node_cluster  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CLI = ("import logging, sys; logging.basicConfig(format='%(name)s: %(message)s'); "
       "logging.getLogger('training').setLevel(logging.INFO); "
       "from training.train import main; sys.exit(main(sys.argv[1:]))")
TINY_DMC = ["n_envs=8", "algorithm.n_steps=4", "algorithm.batch_size=32", "network.hidden_sizes=[32]",
            "total_timesteps=64", "time_limit=null", "rules.target_score=5", "eval.interval=0",
            "eval.games=2", "eval.opponents=[random]", "output.checkpoint_interval=32",
            "output.tensorboard=false", "output.progress=false"]
PIPELINE = """default:
  stages:
    search: {{kind: expert_iteration, init: default, rounds: 1, games: 2, workers: 2, samples: 1,
              phases: trump, epochs: 1, seed: 5, ray_address: {address}}}
    values: {{kind: advantage, positions: 24, workers: 2, epochs: 1, seed: 7, ray_address: {address}}}
"""


@pytest.fixture
def two_nodes(monkeypatch):
    with two_node_cluster(monkeypatch) as cluster:
        yield cluster


def smear_train(args: list[str], **env: str) -> subprocess.CompletedProcess:
    """``smear-train ARGS`` in a process of its own (``env`` added to this one's); it must succeed."""
    p = subprocess.run([sys.executable, "-c", CLI, *args], cwd=ROOT, env={**os.environ, **env},
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"smear-train {args} failed ({p.returncode}):\n{p.stderr[-5000:]}"
    return p


def test_smear_train_dmc_with_ray_address_auto_trains_on_the_clusters_actors(two_nodes, tmp_path):
    run = tmp_path / "dmc"
    sets = [*TINY_DMC, "ray.address=auto", "ray.workers=2"]
    # "auto": the cluster this machine joined; RAY_ADDRESS is how a process finds it here
    p = smear_train(["--config", "configs/dmc.yaml", "--run-dir", str(run),
                     *[a for s in sets for a in ("--set", s)]], RAY_ADDRESS=two_nodes["address"])
    assert "dmc on Ray: 2 actors (lanes [4, 4]) at auto" in p.stderr
    assert "done: " in p.stderr
    steps = sorted(int(f.stem.split("_")[1]) for f in (run / "checkpoints").glob("step_*.safetensors"))
    assert steps and steps[-1] >= 64 and (run / "checkpoints" / "latest.safetensors").is_file()
    records = [json.loads(line) for line in (run / "train.log").read_text().splitlines()]
    train = [r["train"] for r in records if "train" in r]
    assert train and all(t["ray/actors_up"] == 2 for t in train)
    assert all(t["ray/batches"] >= 1 and np.isfinite(t["loss/q_mse"]) for t in train)


def _same_file(a: Path, b: Path) -> bool:
    """Whether two .npz files hold the same arrays, or two .safetensors files the same tensors (NaN = NaN)."""
    from safetensors.numpy import load_file

    x, y = (dict(np.load(f)) if f.suffix == ".npz" else load_file(str(f)) for f in (a, b))
    return x.keys() == y.keys() and all(
        np.array_equal(x[k], y[k], equal_nan=x[k].dtype.kind == "f") for k in x)


def test_expert_iteration_and_advantage_stages_on_the_cluster_equal_the_local_pipeline(two_nodes, tmp_path):
    for name, address in (("ray", two_nodes["address"]), ("local", "null")):
        (tmp_path / f"{name}.yaml").write_text(PIPELINE.format(address=address))
    ray_run = smear_train(["--config", str(tmp_path / "ray.yaml"), "--run-dir", str(tmp_path / "ray")])
    local_run = smear_train(["--config", str(tmp_path / "local.yaml"), "--run-dir", str(tmp_path / "local")])
    # on the cluster: each stage's two shares were Ray tasks, one on each node
    assert "ray pool: 2 shards of search_shard on 2 node(s)" in ray_run.stderr
    assert "ray pool: 2 shards of values_shard on 2 node(s)" in ray_run.stderr
    assert "ray pool" not in local_run.stderr

    def same(stage: str, file: str) -> bool:
        return _same_file(*(tmp_path / d / "stages" / stage / file for d in ("ray", "local")))

    # expert iteration: the round's targets, match figures (wall time aside) and distilled policy
    assert same("01-search", "targets_1_0.npz") and same("01-search", "targets_1_1.npz")
    ray_log, local_log = (json.loads((tmp_path / d / "stages" / "01-search" / "log.jsonl").read_text())
                          for d in ("ray", "local"))
    for m in local_log["matches"]:
        m.pop("seconds")
    assert ray_log["matches"] == local_log["matches"] and ray_log["distill"] == local_log["distill"]
    assert same("01-search", "final.safetensors")
    # advantage: the values of each share and the correction fitted on them
    assert same("02-values", "values_0.npz") and same("02-values", "values_1.npz")
    assert same("02-values", "final.safetensors")
