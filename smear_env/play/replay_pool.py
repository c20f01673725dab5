"""Replay work of ``smear-serve`` in a worker process: parsing an uploaded record file, validating the record
(schema and a full replay through the engine) and making its replay frames.

That work is pure Python and C parsing that holds the interpreter lock for as long as it runs (a second or
more for a long record); in the server's own process it would delay every other client's request. Here it
runs in one worker process (started on the first replay, :mod:`multiprocessing`'s ``spawn``), so the
server's process only hands over the bytes and sends back the finished JSON. At most ``max_pending`` jobs
wait or run at once (more get a 503 at once: "busy, try again"); a job past ``timeout`` seconds ends the
worker (the next job starts a fresh one) and answers 503. The worker keeps the last few validated records
(by their bytes' digest), so paging through a long record (``?hand_from=``) validates it once.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

MAX_PENDING = 4
"""Replay jobs waiting or running at once, all clients together."""
TIMEOUT = 60.0
"""Seconds a replay job may take (a record at the upload caps takes a few)."""
VALIDATED_KEPT = 8
"""Validated records the worker keeps (paging through a record validates it once)."""

_worker_server: Any = None
_validated: OrderedDict[tuple[bytes, int], Any] = OrderedDict()


def _start_worker(agents: Sequence[str]) -> None:  # pragma: no cover - runs in the worker process
    global _worker_server
    from .web import Server

    _worker_server = Server(agents, hints=[])


def run_job(kind: str, payload: Any, index: int, hand_from: int, view_seat: Any,
            server: Any = None) -> tuple[int, bytes]:
    """One replay job, as (HTTP status, JSON body): ``kind`` "upload" (``payload`` the uploaded bytes,
    ``index`` the record of the file) or "game" (``payload`` a record the server made). Runs in the worker
    (``server`` None: the worker's server, which offers the same agents) or, for tests, anywhere."""
    from .web import ApiError, parse_upload, replay_frames, scrub

    server = server if server is not None else _worker_server
    try:
        if kind == "upload":
            key = (hashlib.sha256(payload).digest(), index)
            rec = _validated.get(key)
            if rec is None:
                try:
                    text = payload.decode("utf-8")
                except UnicodeDecodeError:
                    raise ApiError(400, "the file is not UTF-8 text: not a smear-record/1 file") from None
                rec = parse_upload(text, index)
                out = _frames(rec, server, hand_from, validated=False)
                _validated[key] = rec
                while len(_validated) > VALIDATED_KEPT:
                    _validated.popitem(last=False)
            else:
                _validated.move_to_end(key)
                out = _frames(rec, server, hand_from, validated=True)
        else:
            try:
                out = replay_frames(payload, server, hand_from)
            except ValueError as e:
                raise ApiError(400, str(e)) from None
            out["view_seat"] = view_seat
        return 200, json.dumps(out).encode()
    except ApiError as e:
        return e.status, json.dumps(e.body).encode()
    except Exception as e:  # a bug: say so without a traceback or a server path
        return 500, json.dumps({"error": f"internal error ({type(e).__name__}): {scrub(str(e), server)}"}
                               ).encode()


def _frames(rec: Any, server: Any, hand_from: int, validated: bool) -> dict[str, Any]:
    from ..config import RuleOptionError
    from ..game import IllegalActionError
    from ..record import RecordMismatchError
    from .web import ApiError, replay_frames

    try:
        return replay_frames(rec, server, hand_from, validated=validated)
    except (RecordMismatchError, RuleOptionError, IllegalActionError, ValueError) as e:
        raise ApiError(400, f"the record does not replay: {e}") from None


class ReplayPool:
    """One worker process for replay jobs (module docstring), started on the first job."""

    def __init__(self, agents: Sequence[str], max_pending: int = MAX_PENDING, timeout: float = TIMEOUT
                 ) -> None:
        self.agents = list(agents)
        self.max_pending = max_pending
        self.timeout = timeout
        self._pool: Any = None
        self._lock = threading.Lock()
        self._pending = 0
        self._closed = False

    def run(self, kind: str, payload: Any, index: int = 0, hand_from: int = 0, view_seat: Any = None
            ) -> tuple[int, bytes]:
        """(status, JSON body) of one job (:func:`run_job`); (503, ...) when the pool is full, the job
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
                self._pool = ctx.Pool(1, initializer=_start_worker, initargs=(self.agents,))
            pool = self._pool
        try:
            job = pool.apply_async(run_job, (kind, payload, index, hand_from, view_seat))
            try:
                return job.get(self.timeout)
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


__all__ = ["MAX_PENDING", "TIMEOUT", "ReplayPool", "run_job"]
