"""One way to spread a stage's work: ``map(fn, shards)`` over local processes or Ray tasks, results in shard
order.

:func:`open_pool` gives a :class:`LocalPool` (``settings.address`` None: ``settings.workers`` spawn
processes with one BLAS thread each, :func:`smear_env.evaluation.batched.worker_pool`; one worker runs the
shards in this process) or a :class:`RayPool` (the cluster at ``settings.address``; each shard one Ray task
asking for ``settings.resources``, re-run up to ``settings.max_retries`` times when its node dies; at most
``settings.workers`` in flight). ``fn`` is a module-level function (both pickle it by reference) called as
``fn(*shard)``; where it is deterministic in its arguments (a shard carries its own seed) the results are
the same on either pool, whatever the worker count, the cluster or the failures on the way.

    with open_pool(RaySettings(address="auto", workers=16)) as pool:
        parts = pool.map(training.winprob.collect, jobs)
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from smear_env.evaluation.batched import worker_pool

from .settings import RaySettings

log = logging.getLogger(__name__)


def call_shard(fn: Callable[..., Any], args: Sequence[Any]) -> Any:
    """``fn(*args)`` with one torch thread (a worker's parallelism is the pool's, as in
    :func:`~smear_env.evaluation.batched.worker_pool`): what every pool worker runs."""
    try:
        import torch  # lazy: optional (ImportError guarded)

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover - torch is a dependency of training
        pass
    return fn(*args)


def _call_shard_star(job: tuple[Callable[..., Any], Sequence[Any]]) -> Any:
    return call_shard(*job)


def _ray_shard(fn: Callable[..., Any], args: Sequence[Any]) -> tuple[str, Any]:
    import ray  # lazy: optional dependency

    return ray.get_runtime_context().get_node_id(), call_shard(fn, args)


class WorkerPool:
    """``map(fn, shards)``: ``[fn(*s) for s in shards]``, spread over workers. A context manager."""

    backend: str
    settings: RaySettings

    def map(self, fn: Callable[..., Any], shards: Sequence[Sequence[Any]]) -> list[Any]:
        raise NotImplementedError

    def close(self) -> None:
        """Free the workers (and leave a Ray this pool started)."""

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LocalPool(WorkerPool):
    """Shards in ``settings.workers`` spawn processes of this machine (started at the first ``map`` with more
    than one shard, kept until :meth:`close`); with one worker, in this process."""

    backend = "local"

    def __init__(self, settings: RaySettings) -> None:  # noqa: D107
        self.settings = settings
        self._pool: Any = None

    def map(self, fn: Callable[..., Any], shards: Sequence[Sequence[Any]]) -> list[Any]:
        jobs = [(fn, tuple(s)) for s in shards]
        if self.settings.workers == 1 or len(jobs) <= 1:
            return [call_shard(f, a) for f, a in jobs]
        if self._pool is None:
            self._pool = worker_pool(self.settings.workers)
        return self._pool.map(_call_shard_star, jobs, chunksize=1)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool.join()
            self._pool = None


def connect(address: str) -> bool:
    """Join the Ray at ``address`` (``"local"``: start a private one) unless this process is in one already;
    whether it joined (and so should leave, :func:`ray.shutdown`)."""
    import ray  # lazy: optional dependency

    if ray.is_initialized():
        return False
    ray.init(address=address, include_dashboard=False, log_to_driver=False)
    return True


def alive_nodes() -> set[str]:
    """The ids of the Ray cluster's live nodes."""
    import ray  # lazy: optional dependency

    return {n["NodeID"] for n in ray.nodes() if n["Alive"]}


class RayPool(WorkerPool):
    """Each shard a Ray task (see the module docstring). ``last_nodes``: the node id that ran each shard of
    the last ``map`` (the node of its last, successful try)."""

    backend = "ray"

    def __init__(self, settings: RaySettings) -> None:  # noqa: D107
        if settings.address is None:
            raise ValueError("RayPool needs ray.address ('local', 'auto' or 'host:port'), not null")
        import ray  # lazy: optional dependency

        self.settings = settings
        self._started = connect(settings.address)
        self._task = ray.remote(_ray_shard).options(
            num_cpus=settings.num_cpus, num_gpus=settings.resources.get("GPU", 0.0),
            resources=settings.custom_resources or None, max_retries=settings.max_retries,
            retry_exceptions=False, scheduling_strategy="SPREAD")
        self.last_nodes: list[str] = []

    def map(self, fn: Callable[..., Any], shards: Sequence[Sequence[Any]]) -> list[Any]:
        import ray  # lazy: optional dependency
        from ray.exceptions import ObjectLostError  # lazy: optional dependency

        t0 = time.monotonic()
        alive = alive_nodes()
        fn_ref = ray.put(fn)
        refs: dict[Any, int] = {}
        out: list[Any] = [None] * len(shards)
        nodes: list[str] = [""] * len(shards)
        todo = list(enumerate(shards))[::-1]
        while todo or refs:
            while todo and len(refs) < self.settings.workers:
                i, s = todo.pop()
                refs[self._task.remote(fn_ref, tuple(s))] = i
            ready, _ = ray.wait(list(refs), num_returns=1)
            for r in ready:
                i = refs.pop(r)
                try:  # a task whose node died while it ran was re-run by Ray (max_retries)
                    nodes[i], out[i] = ray.get(r)
                except ObjectLostError:  # its result was lost with its node before it came here: again
                    log.warning("ray pool: shard %d's result was lost with its node; running it again", i)
                    todo.append((i, shards[i]))
        self.last_nodes = nodes
        lost = sorted(alive - alive_nodes())
        if lost:
            log.warning("ray pool: node(s) %s died during the map of %d shards; Ray re-ran their tasks "
                        "(max_retries=%d) and every shard is done", ", ".join(n[:12] for n in lost),
                        len(shards), self.settings.max_retries)
        log.info("ray pool: %d shards of %s on %d node(s) in %.1f s", len(shards),
                 getattr(fn, "__name__", fn), len(set(nodes)), time.monotonic() - t0)
        return out

    def close(self) -> None:
        if self._started:
            import ray  # lazy: optional dependency

            ray.shutdown()
            self._started = False


def open_pool(settings: RaySettings | None = None) -> WorkerPool:
    """The pool of ``settings`` (None: one local worker, this process)."""
    settings = settings or RaySettings()
    return LocalPool(settings) if settings.backend == "local" else RayPool(settings)
