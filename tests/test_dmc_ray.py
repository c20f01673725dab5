"""dmc on Ray (training.algorithms.dmc_ray): actors with versioned weights from the object store, a learner
that trains on fresh-enough batches, goes on when an actor dies and takes it back once Ray restarted it,
checkpoints and resume. Skipped where ray is absent (``make test-frameworks`` runs it in the RLlib venv)."""

from __future__ import annotations

import logging
import time

import numpy as np
import pytest

pytest.importorskip("torch")

from tests.ray_helpers import local_ray_session  # noqa: E402
from training.algorithms import make_trainer  # noqa: E402
from training.algorithms.dmc import DMCTrainer  # noqa: E402
from training.config import load_config  # noqa: E402
from training.distributed.settings import RaySettings  # noqa: E402

TINY = ["n_envs=8", "algorithm.n_steps=4", "algorithm.batch_size=64", "network.hidden_sizes=[32]"]


def _cfg(*overrides: str):
    return load_config("configs/dmc.yaml", [*TINY, *overrides])


def test_dmc_without_ray_address_is_the_local_trainer():
    tr = make_trainer(_cfg(), np.random.default_rng(0))
    assert type(tr) is DMCTrainer


@pytest.fixture
def local_ray(monkeypatch):
    with local_ray_session(monkeypatch, num_cpus=3) as ray:
        yield ray


def _same_weights(a, b) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(bool((sa[k] == sb[k]).all()) for k in sa)


def test_dmc_on_ray_trains_survives_an_actor_death_and_resumes(local_ray, caplog):
    from training.algorithms.dmc_ray import RayDMCTrainer

    caplog.set_level(logging.WARNING, logger="training.algorithms.dmc_ray")
    cfg = _cfg("ray.address=auto")
    tr = make_trainer(cfg, np.random.default_rng(5))
    assert isinstance(tr, RayDMCTrainer)
    tr.close()
    settings = RaySettings(address="auto", workers=2, max_staleness=1)
    tr = RayDMCTrainer(cfg, np.random.default_rng(5), settings)
    try:
        assert tr.lanes == [4, 4]
        m = tr.iterate()
        assert tr.step >= 4 * 8 and tr.updates == 1 and np.isfinite(m["loss/q_mse"])
        assert m["ray/actors_up"] == 2 and m["ray/batch_age"] <= 1 and m["ray/batches"] >= 1
        weights = tr.policy.state_dict().values()
        assert m["ray/weights_bytes"] == sum(v.numel() * v.element_size() for v in weights)
        # an actor's process dies: the learner says so, goes on with the other, and takes it back
        local_ray.kill(tr.actors[0], no_restart=False)
        t0 = time.monotonic()
        while "actor 0 is back (restarted by Ray)" not in caplog.text and time.monotonic() - t0 < 120:
            m = tr.iterate()  # the other actor plays meanwhile
        assert "actor 0 is back (restarted by Ray); 2 of 2 actors up" in caplog.text
        if "actor 0 died (" in caplog.text:  # its call failed (else Ray ran it again on the new actor)
            assert "going on with 1 of 2 actors while Ray restarts it" in caplog.text
        m = tr.iterate()
        assert m["ray/actors_up"] == 2 and tr.updates >= 3
        # checkpoint and resume as dmc: policy, optimizer, generators
        tensors, meta = tr.state()
        policy_sd, step = tr.policy_state(), tr.step
    finally:
        tr.close()
    tr2 = RayDMCTrainer(cfg, np.random.default_rng(99), settings)
    try:
        tr2.load_state(policy_sd, tensors, meta, step)
        assert tr2.updates == tr.updates and tr2.step == step and _same_weights(tr2.policy, tr.policy)
        assert all(s is not None for s in tr2.reseed)  # the actors start fresh games on restored seeds
        tr2.iterate()
        assert tr2.updates == tr.updates + 1 and tr2.step > step
    finally:
        tr2.close()
