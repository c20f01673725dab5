"""A private Ray for one test (the Ray pool and dmc-on-Ray tests; they skip where ray is absent)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest


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
