"""training.distributed: the settings block, the worker pool (local processes or Ray tasks, results in shard
order) and the deterministic stages' shards giving the same results wherever they run. The Ray tests skip
where ray is absent (``make test-frameworks`` runs them in the RLlib venv)."""

from __future__ import annotations

import dataclasses
import json
import sys

import numpy as np
import pytest

pytest.importorskip("torch")

from smear_env.core.config import SmearRules  # noqa: E402
from tests.ray_helpers import evaluation_shard, local_ray_session, plan, same_targets  # noqa: E402
from training.distributed.pool import LocalPool, open_pool  # noqa: E402
from training.distributed.settings import RaySettings, SettingsError  # noqa: E402
from training.expert_iteration import search_shard  # noqa: E402
from training.winprob import collect, collect_shards  # noqa: E402

RULES = {"target_score": 5}
EVAL_JOBS = [("heuristic", "random", g, s, RULES, 30) for g, s in plan(12, 11, 3, unit=2)]
SEARCH = "rollout:base=heuristic,opponent=heuristic,samples=2,phases=trump"


@pytest.mark.parametrize("bad, message", [
    ({"workers": 0}, "ray.workers must be an integer >= 1, not 0"),
    ({"workers": True}, "ray.workers must be an integer >= 1, not True"),
    ({"max_staleness": -1}, "ray.max_staleness must be an integer >= 0, not -1"),
    ({"max_restarts": -2}, "ray.max_restarts must be an integer >= -1, not -2"),
    ({"address": ""}, "ray.address must be null, 'local', 'auto' or 'host:port', not ''"),
    ({"resources": {}}, "ray.resources must be a non-empty mapping"),
    ({"resources": {"CPU": 0}}, "ray.resources['CPU'] must be a number > 0, not 0"),
    ({"worker": 2}, "ray.worker is not a setting; allowed: address, workers, resources,"),
])
def test_settings_reject_bad_values_in_one_line(bad, message):
    with pytest.raises(SettingsError) as e:
        RaySettings.from_dict(bad)
    assert str(e.value).startswith(message) and "\n" not in str(e.value)


def test_settings_round_trip_and_backend():
    s = RaySettings.from_dict({"address": "auto", "workers": 4, "resources": {"CPU": 2, "smear": 1}})
    assert s.backend == "ray" and s.num_cpus == 2.0 and s.custom_resources == {"smear": 1.0}
    assert RaySettings.from_dict(dataclasses.asdict(s)) == s
    assert RaySettings.from_dict(None).backend == "local"
    with pytest.raises(AttributeError):
        s.workers = 3  # frozen


def test_plan_depends_on_seed_and_shards_only():
    from training.winprob import shard_seeds

    assert plan(12, 11, 3, unit=2) == [(4, s) for s in shard_seeds(11, 3)]
    assert [g for g, _ in plan(10, 1, 3, unit=2)] == [4, 4, 2]
    assert plan(7, 5, 1) == [(7, 5)]
    with pytest.raises(ValueError, match="games must be a positive multiple of 2"):
        plan(7, 5, 2, unit=2)


def test_local_pool_gives_shard_order_whatever_the_workers():
    """Evaluation shards and the win model's game shards: one worker in this process, two spawn processes,
    the same results in shard order; the win-model shards are what winprob's own collect_shards returns."""
    with open_pool(RaySettings(workers=1)) as one:
        a = one.map(evaluation_shard, EVAL_JOBS)
    with LocalPool(RaySettings(workers=2)) as two:
        b = two.map(evaluation_shard, EVAL_JOBS)
        rules = SmearRules(target_score=5)
        jobs = [("heuristic", "heuristic", g, s, rules) for g, s in plan(30, 93, 2)]
        parts = two.map(collect, jobs)
    assert a == b and [r["seed"] for r in a] == [s for _, s, in plan(12, 11, 3, unit=2)]
    assert [r["games"] for r in a] == [4, 4, 4]
    x, y = collect_shards("heuristic", "heuristic", 30, 93, SmearRules(target_score=5), shards=2, workers=1)
    np.testing.assert_array_equal(np.concatenate([p[0] for p in parts]), x)
    np.testing.assert_array_equal(np.concatenate([p[1] for p in parts]), y)


def test_search_shard_is_deterministic_in_its_seed():
    a = search_shard(SEARCH, "heuristic", 2, 7)
    b = search_shard(SEARCH, "heuristic", 2, 7)
    assert a["match"] == b["match"] and a["match"]["rows"] == len(a["targets"]["action"]) > 0
    assert same_targets(a["targets"], b["targets"])


@pytest.fixture
def local_ray(monkeypatch):
    with local_ray_session(monkeypatch, num_cpus=2) as ray:
        ray.cloudpickle.register_pickle_by_value(sys.modules[evaluation_shard.__module__])  # a test helper
        yield ray


def test_ray_pool_equals_local_pool(local_ray):
    """Evaluation, win-model and search shards as Ray tasks: the results of the local pool, in shard order."""
    rules = SmearRules(target_score=5)
    wp_jobs = [("heuristic", "heuristic", g, s, rules) for g, s in plan(30, 93, 2)]
    search_jobs = [(SEARCH, "heuristic", 2, s) for _, s in plan(4, 81, 2, unit=2)]
    with open_pool(RaySettings(workers=1)) as local:
        want_eval = local.map(evaluation_shard, EVAL_JOBS)
        want_wp = local.map(collect, wp_jobs)
        want_search = local.map(search_shard, search_jobs)
    with open_pool(RaySettings(address="auto", workers=2)) as pool:
        assert pool.backend == "ray"
        assert pool.map(evaluation_shard, EVAL_JOBS) == want_eval
        got_wp = pool.map(collect, wp_jobs)
        got_search = pool.map(search_shard, search_jobs)
        assert len(pool.last_nodes) == 2
    for (gx, gy), (wx, wy) in zip(got_wp, want_wp, strict=True):
        np.testing.assert_array_equal(gx, wx)
        np.testing.assert_array_equal(gy, wy)
    for g, w in zip(got_search, want_search, strict=True):
        assert g["match"] == w["match"] and same_targets(g["targets"], w["targets"])
    assert local_ray.is_initialized()  # a pool that joined a running Ray leaves it running


def test_an_expert_iteration_round_on_ray_equals_the_local_round(local_ray, tmp_path):
    """``ray_address``: the round's shares run as Ray tasks; its targets files, match figures (wall time
    aside) and distilled policy equal the local pool's, bit for bit."""
    from safetensors.numpy import load_file

    from training.stages.expert_iteration import Config, run

    common = {"rounds": 1, "games": 2, "workers": 2, "samples": 1, "phases": "trump", "epochs": 1, "seed": 5}
    with pytest.warns(UserWarning, match="advantage correction"):
        assert run(Config(**common), {"init": "default"}, tmp_path / "local", resume=False) == 0
    with pytest.warns(UserWarning, match="advantage correction"):
        assert run(Config(**common, ray_address="auto"), {"init": "default"}, tmp_path / "ray", False) == 0
    for w in range(2):
        a = np.load(tmp_path / "local" / f"targets_1_{w}.npz")
        b = np.load(tmp_path / "ray" / f"targets_1_{w}.npz")
        assert sorted(a.files) == sorted(b.files) and all(np.array_equal(a[k], b[k]) for k in a.files)
    local_log, ray_log = (json.loads((tmp_path / d / "log.jsonl").read_text()) for d in ("local", "ray"))
    for m in local_log["matches"]:
        m.pop("seconds", None)
    assert ray_log["matches"] == local_log["matches"]
    wa = load_file(str(tmp_path / "local" / "final.safetensors"))
    wb = load_file(str(tmp_path / "ray" / "final.safetensors"))
    assert wa.keys() == wb.keys() and all(np.array_equal(wa[k], wb[k]) for k in wa)


def test_an_advantage_values_step_on_ray_equals_the_local_one(local_ray, tmp_path):
    """``ray_address``: the values step's shares (seeds seed + i) run as Ray tasks (``values_shard``); the
    values files hold the arrays of the local pool's, bit for bit."""
    from training.stages.advantage import Config, run

    common = {"positions": 24, "workers": 2, "steps": ["values"], "seed": 7}
    assert run(Config(**common), {"init": "default"}, tmp_path / "local", resume=False) == 0
    assert run(Config(**common, ray_address="auto"), {"init": "default"}, tmp_path / "ray", False) == 0
    for w in range(2):
        a = np.load(tmp_path / "local" / f"values_{w}.npz")
        b = np.load(tmp_path / "ray" / f"values_{w}.npz")
        assert sorted(a.files) == ["mask", "obs", "policy", "value"] == sorted(b.files)
        assert all(np.array_equal(a[k], b[k], equal_nan=k == "value") for k in a.files)
    assert sum(len(np.load(tmp_path / "ray" / f"values_{w}.npz")["policy"]) for w in range(2)) == 24
    local, ray = (json.loads((tmp_path / d / "round.json").read_text())["values"] for d in ("local", "ray"))
    assert local.pop("seconds") >= 0 and ray.pop("seconds") >= 0 and local == ray
