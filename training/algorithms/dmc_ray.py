"""Deep Monte-Carlo (:mod:`training.algorithms.dmc`) as actors and a learner on Ray (DouZero's layout).

``ray.workers`` actors (Ray actors asking for ``ray.resources`` each) play on the batched engine, each with
its share of ``n_envs`` lanes and the learner's latest weights: the learner puts every new version of its
weights in the object store once (a dict of numpy arrays), and each actor's next ``collect`` call carries
the reference and the version number; an actor loads the weights when the version changed, plays until its
share of ``n_steps * n_envs`` finished learner decisions, and returns them with the version it played. The
learner (this process: :class:`RayDMCTrainer`, the trainer ``smear-train`` runs) gathers batches until it has
``n_steps * n_envs`` decisions and makes one update of :meth:`DMCTrainer.learn` on them; a batch played with
weights more than ``ray.max_staleness`` updates old is dropped (counted in ``ray/stale_dropped``). With
``max_staleness`` >= 1 the actors play on while the learner learns (their batches are then one update old);
with 0 they wait for each update.

Faults: an actor whose process or node dies fails its call; the learner says so in the log
(``training.algorithms.dmc_ray``), goes on with the actors it has, and calls the dead one again: Ray restarts
it (up to ``ray.max_restarts`` times; -1: always) on a node with room, and it plays again with fresh games
(seeded from fresh OS entropy when restarted, then on a seed the learner draws). An actor that fails
:data:`GIVE_UP_AFTER` calls in a row (spaced 1, 2, 4, ... s apart) is given up.

Checkpoints and resume are dmc's (:class:`~training.algorithms.resume_state.OwnPolicyTrainer`): the
policy, the optimizer and the generators; games in flight are not saved, a resumed run's actors start fresh
games on seeds drawn from the restored generator. The updates' order depends on which actor answers first,
so two runs differ; a run is the same algorithm as ``dmc`` with batches up to ``max_staleness`` updates old.

``smear-train --config configs/dmc.yaml --set ray.address=auto --set ray.workers=16`` (the cluster this
machine joined) or ``ray.address=local`` (a private Ray on this machine).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import Any

import numpy as np
import torch

from smear_env.evaluation.batched import even_shares

from ..config import TrainConfig
from ..distributed.pool import connect
from ..distributed.settings import RaySettings
from .dmc import DMCTrainer

log = logging.getLogger(__name__)

GIVE_UP_AFTER = 8
"""An actor that fails this many calls in a row without returning a batch is given up (the calls spaced
1, 2, 4, ... seconds apart: about four minutes in all)."""


def ray_settings(cfg: TrainConfig) -> RaySettings:
    """The :class:`RaySettings` of a config's ``ray:`` section (the keys it has, ``num_env_runners`` as
    ``workers`` where it has no ``workers``; defaults for the rest)."""
    section = getattr(cfg, "ray", None)
    keys = [f.name for f in dataclasses.fields(RaySettings)]
    d = {k: v for k in keys if (v := getattr(section, k, None)) is not None}
    if "workers" not in d and getattr(section, "num_env_runners", 0):  # rllib_ppo's name for its actors
        d["workers"] = section.num_env_runners
    return RaySettings.from_dict(d)


def with_lanes(cfg: TrainConfig, lanes: int) -> TrainConfig:
    """A copy of ``cfg`` with ``n_envs = lanes``."""
    return cfg.model_copy(update={"n_envs": lanes})


def numpy_weights(policy: torch.nn.Module) -> dict[str, np.ndarray]:
    """The policy's tensors as numpy arrays (what travels through the object store)."""
    return {k: v.detach().cpu().numpy().copy() for k, v in policy.state_dict().items()}


class DMCActor:
    """One actor: a :class:`DMCTrainer` of ``lanes`` lanes that only collects (run as a Ray actor)."""

    def __init__(self, cfg: TrainConfig, lanes: int, seed: int) -> None:  # noqa: D107
        import ray  # lazy: optional dependency

        torch.set_num_threads(1)
        self.restarted = ray.get_runtime_context().was_current_actor_reconstructed
        if self.restarted:  # not the first incarnation's games again (the learner reseeds it too)
            seed = int(np.random.SeedSequence().generate_state(1)[0])
        self.trainer = DMCTrainer(with_lanes(cfg, lanes), np.random.default_rng(seed))
        self.version = -1
        self.target = cfg.algorithm.n_steps * lanes

    def restart(self, seed: int) -> None:
        """Fresh games on seed ``seed`` (after a resume, or a restart of this actor by Ray)."""
        self.trainer.rng = np.random.default_rng(seed)
        self.trainer.restart_games()

    def collect(self, version: int, weights: dict[str, np.ndarray],
                reseed: int | None = None) -> dict[str, Any]:
        """Play with weights ``version`` until ``target`` learner decisions finished; the batch, the version
        played, the collect figures, the seconds and the decisions made (finished or not)."""
        if reseed is not None:
            self.restart(reseed)
        if version != self.version:
            self.trainer.policy.load_state_dict({k: torch.tensor(v) for k, v in weights.items()})
            self.version = version
        t0 = time.perf_counter()
        batch = self.trainer.collect(self.target)
        restarted, self.restarted = self.restarted, False
        return {"version": version, "batch": batch, "stats": dict(self.trainer.collect_stats),
                "seconds": time.perf_counter() - t0, "restarted": restarted}


class RayDMCTrainer(DMCTrainer):
    """The learner of dmc on Ray (see the module docstring); the trainer protocol of :class:`DMCTrainer`.
    Its own table has one lane and is never played: the actors play."""

    name = "dmc"

    def __init__(self, cfg: TrainConfig, rng: np.random.Generator,
                 settings: RaySettings | None = None) -> None:  # noqa: D107
        import ray  # lazy: optional dependency

        self.settings = settings or ray_settings(cfg)
        if self.settings.address is None:
            raise ValueError("dmc on Ray needs ray.address ('local', 'auto' or 'host:port'), not null")
        super().__init__(with_lanes(cfg, 1), rng)
        self.full_cfg = cfg
        s = self.settings
        self.lanes = [k for k in even_shares(cfg.n_envs, s.workers) if k > 0]
        self._started = connect(s.address)
        actor_cls = ray.remote(DMCActor).options(
            num_cpus=s.num_cpus, num_gpus=s.resources.get("GPU", 0.0), resources=s.custom_resources or None,
            max_restarts=s.max_restarts, max_task_retries=0, scheduling_strategy="SPREAD")
        lane_cfg = with_lanes(cfg, 1)
        self.actors = [actor_cls.remote(lane_cfg, k, int(self.rng.integers(2**62))) for k in self.lanes]
        self.alive = [True] * len(self.actors)
        self.failures = [0] * len(self.actors)
        self.retry_at = [0.0] * len(self.actors)
        self.reseed: list[int | None] = [None] * len(self.actors)
        self.inflight: dict[Any, int] = {}
        self.stale_dropped = 0
        self._weights_version = -1
        self._weights_ref: Any = None
        self.weights_bytes = 0
        log.info("dmc on Ray: %d actors (lanes %s) at %s", len(self.actors), self.lanes, s.address)

    # ------------------------------------------------------------------ weights and calls
    def _weights(self) -> Any:
        import ray  # lazy: optional dependency

        if self._weights_version != self.updates:
            w = numpy_weights(self.policy)
            self._weights_ref = ray.put(w)
            self._weights_version = self.updates
            self.weights_bytes = sum(v.nbytes for v in w.values())
        return self._weights_ref

    def _submit(self, i: int) -> None:
        ref = self.actors[i].collect.remote(self.updates, self._weights(), self.reseed[i])
        self.reseed[i] = None
        self.inflight[ref] = i

    def _fill(self) -> None:
        busy = set(self.inflight.values())
        now = time.monotonic()
        for i, up in enumerate(self.alive):
            if up and i not in busy and now >= self.retry_at[i]:
                self._submit(i)

    def actors_up(self) -> int:
        """The actors that answered their last call."""
        return sum(up and not f for up, f in zip(self.alive, self.failures, strict=True))

    def _failed(self, i: int, err: Exception) -> None:
        self.failures[i] += 1
        self.retry_at[i] = time.monotonic() + 2.0 ** (self.failures[i] - 1)
        if self.failures[i] >= GIVE_UP_AFTER:
            self.alive[i] = False
            log.warning("dmc on Ray: actor %d failed %d calls in a row (%s); given up, going on with %d of "
                        "%d actors", i, self.failures[i], type(err).__name__, self.actors_up(),
                        len(self.actors))
        elif self.failures[i] == 1:
            log.warning("dmc on Ray: actor %d died (%s); going on with %d of %d actors while Ray restarts it",
                        i, type(err).__name__, self.actors_up(), len(self.actors))
            self.reseed[i] = int(self.rng.integers(2**62))
        if not any(self.alive):
            raise RuntimeError("dmc on Ray: every actor is gone; the cluster has no room for any actor")

    def gather(self, target: int) -> tuple[list[dict[str, Any]], dict[str, float]]:
        """Batches until ``target`` learner decisions (fresh enough: ``max_staleness``), and the figures of
        the gathering (``ray/...``)."""
        import ray  # lazy: optional dependency
        from ray.exceptions import ObjectLostError, RayActorError  # lazy: optional dependency

        got: list[dict[str, Any]] = []
        n = 0
        ages: list[int] = []
        t0 = time.perf_counter()
        batch_bytes = 0
        while n < target:
            self._fill()
            if not self.inflight:  # every actor waits for its next try
                wake = min(t for t, up in zip(self.retry_at, self.alive, strict=True) if up)
                time.sleep(max(0.0, wake - time.monotonic()))
                continue
            ready, _ = ray.wait(list(self.inflight), num_returns=1, timeout=1.0)
            for ref in ready:
                i = self.inflight.pop(ref)
                try:
                    res = ray.get(ref)
                except (RayActorError, ObjectLostError) as err:  # its actor died, or its node with its batch
                    self._failed(i, err)
                    continue
                if self.failures[i] or res["restarted"]:
                    self.failures[i] = 0
                    log.warning("dmc on Ray: actor %d is back (restarted by Ray); %d of %d actors up", i,
                                self.actors_up(), len(self.actors))
                age = self.updates - res["version"]
                if age > self.settings.max_staleness:
                    self.stale_dropped += 1
                    continue
                ages.append(age)
                got.append(res)
                n += len(res["batch"]["act"])
                batch_bytes += sum(v.nbytes for v in res["batch"].values())
        if self.settings.max_staleness > 0:  # the actors play on while the learner learns
            self._fill()
        secs = time.perf_counter() - t0
        busy = sum(r["seconds"] for r in got)
        decisions = sum(len(r["batch"]["act"]) for r in got)
        figs = {"ray/actors_up": float(self.actors_up()), "ray/batches": float(len(got)),
                "ray/stale_dropped": float(self.stale_dropped), "ray/batch_age": float(np.mean(ages)),
                "ray/gather_seconds": secs, "ray/batch_bytes": float(batch_bytes),
                "ray/weights_bytes": float(self.weights_bytes),
                "ray/actor_decisions_per_s": decisions / busy if busy > 0 else 0.0}
        return got, figs

    # ------------------------------------------------------------------ learning
    def iterate(self) -> dict[str, float]:
        cfg = self.full_cfg
        got, figs = self.gather(cfg.algorithm.n_steps * cfg.n_envs)
        batch = {k: np.concatenate([r["batch"][k] for r in got]) for k in got[0]["batch"]}
        keys = sorted({k for r in got for k in r["stats"]})
        stats = {k: float(np.mean([r["stats"][k] for r in got if k in r["stats"]])) for k in keys}
        t0 = time.perf_counter()
        out = self.learn(batch, stats)
        figs["ray/learn_seconds"] = time.perf_counter() - t0
        out.update(figs)
        return out

    def restart_games(self) -> None:
        """Fresh games on every actor (after :meth:`load_state`), on seeds of the (restored) generator."""
        super().restart_games()
        actors = getattr(self, "actors", [])
        self.reseed = [int(self.rng.integers(2**62)) for _ in actors]

    def close(self) -> None:
        """Stop the actors (and leave a Ray this trainer started)."""
        import ray  # lazy: optional dependency

        for a in getattr(self, "actors", []):
            ray.kill(a, no_restart=True)
        self.actors = []  # no Ray handle outlives the trainer's Ray (a later Ray would reuse their ids)
        self.inflight = {}
        self._weights_ref = None
        self._weights_version = -1
        if getattr(self, "_started", False):
            ray.shutdown()
            self._started = False

