"""Heavy work of ``smear-serve`` (record uploads: parsing, validating, replaying, making frames) in a worker
process.

That work is pure Python and C parsing that holds the interpreter lock for as long as it runs (a second or
more for a long record); in the server's own process it would delay every other client's request. Here it
runs in one worker process (started on the first job, :mod:`multiprocessing`'s ``spawn``), so the server's
process only hands over the bytes and sends back the finished JSON. At most ``max_pending`` jobs wait or run
at once (more get a 503 at once: "busy, try again"); a job past ``timeout`` seconds ends the worker (the next
job starts a fresh one) and answers 503. A job is a module-level function returning (HTTP status, JSON
bytes), run with the arguments given; the pool knows nothing else of it.
"""

from __future__ import annotations

import json
import multiprocessing
import threading
from collections.abc import Callable, Sequence
from typing import Any

MAX_PENDING = 4
"""Replay jobs waiting or running at once, all clients together."""
TIMEOUT = 60.0
"""Seconds a replay job may take (a record at the upload caps takes a few)."""


class ReplayPool:
    """One worker process for jobs (module docstring), started on the first one with
    ``initializer(*initargs)`` (module-level functions: they are pickled by name)."""

    def __init__(self, initializer: Callable[..., None] | None = None, initargs: Sequence[Any] = (),
                 max_pending: int = MAX_PENDING, timeout: float = TIMEOUT) -> None:
        self.initializer = initializer
        self.initargs = tuple(initargs)
        self.max_pending = max_pending
        self.timeout = timeout
        self._pool: Any = None
        self._lock = threading.Lock()
        self._pending = 0
        self._closed = False

    def run(self, job: Callable[..., tuple[int, bytes]], *args: Any) -> tuple[int, bytes]:
        """(status, JSON body) of ``job(*args)`` in the worker; (503, ...) when the pool is full, the job
        timed out or the worker died."""
        with self._lock:
            if self._closed:
                return _busy("the server is stopping")
            if self._pending >= self.max_pending:
                return _busy(f"the server is busy replaying {self._pending} other record(s); try again in a "
                             "few seconds")
            self._pending += 1
            if self._pool is None:
                ctx = multiprocessing.get_context("spawn")
                self._pool = ctx.Pool(1, initializer=self.initializer, initargs=self.initargs)
            pool = self._pool
        try:
            result = pool.apply_async(job, args)
            try:
                return result.get(self.timeout)
            except multiprocessing.TimeoutError:
                self._restart(pool)
                return _busy(f"the replay took longer than {self.timeout:g} s and was stopped")
            except Exception as e:  # the worker died or could not start
                self._restart(pool)
                return _busy(f"the replay worker failed ({type(e).__name__}); try again")
        finally:
            with self._lock:
                self._pending -= 1

    def _restart(self, pool: Any) -> None:
        with self._lock:
            if self._pool is pool:
                self._pool = None
        pool.terminate()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.terminate()
            pool.join()


def _busy(message: str) -> tuple[int, bytes]:
    return 503, json.dumps({"error": message}).encode()


__all__ = ["MAX_PENDING", "TIMEOUT", "ReplayPool"]
