"""Shared pieces of the property-based fuzz tier (tests/test_fuzz_*.py): the example count, a wall-clock
bound for every case, and the values a careless user or an attacker types.

``SMEAR_FUZZ_EXAMPLES`` (default :data:`DEFAULT_EXAMPLES`) sets how many examples each fuzz test draws; the
default keeps the whole tier well under a minute on 2 shared cores; ``SMEAR_FUZZ_EXAMPLES=2000`` is a long
run on demand (``make fuzz``). The examples are a fixed sequence (``derandomize``) unless
``SMEAR_FUZZ_SEED=N`` is given, so CI is reproducible and other seeds explore further.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, seed, settings
from hypothesis import strategies as st

DEFAULT_EXAMPLES = 12
CASE_SECONDS = 60.0
"""The wall-clock bound of one case (a loaded 2-core machine included); past it the case fails."""


def fuzz_examples() -> int:
    """``SMEAR_FUZZ_EXAMPLES`` as a positive integer (a bad value is a usage error naming it)."""
    raw = os.environ.get("SMEAR_FUZZ_EXAMPLES", str(DEFAULT_EXAMPLES))
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise pytest.UsageError(f"SMEAR_FUZZ_EXAMPLES={raw!r} is not a positive integer (e.g. 12, 500)")
    return value


def fuzz_settings() -> Callable[[Any], Any]:
    """The decorator of a fuzz test (put under ``@given``): :func:`fuzz_examples` examples, no per-example
    deadline (the wall clock is bounded by :func:`time_bound`), a fixed example sequence unless
    ``SMEAR_FUZZ_SEED=N`` picks another one (reproducible with the same N)."""
    raw = os.environ.get("SMEAR_FUZZ_SEED")
    if raw is not None and not raw.isdigit():
        raise pytest.UsageError(f"SMEAR_FUZZ_SEED={raw!r} is not a non-negative integer")
    chosen = settings(max_examples=fuzz_examples(), deadline=None, derandomize=raw is None, database=None,
                      suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                             HealthCheck.data_too_large])

    def apply(test: Any) -> Any:
        test = chosen(test)
        return test if raw is None else seed(int(raw))(test)

    return apply


class CaseTimeout(Exception):
    """A fuzz case ran past its wall-clock bound (a hang)."""


@contextlib.contextmanager
def time_bound(seconds: float = CASE_SECONDS) -> Iterator[None]:
    """Raise :class:`CaseTimeout` in the block once ``seconds`` have passed (SIGALRM; main thread only,
    elsewhere the block runs unbounded)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum: int, frame: object) -> None:
        raise CaseTimeout(f"the case ran past {seconds:g} s")

    old = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


# What people type where a number, a name or a path is expected.
NUMBERS = st.sampled_from([
    "0", "1", "2", "-1", "3", "7", "nan", "-nan", "inf", "-inf", "1e309", "1e-320", "0.5", "-0", "+4",
    "1_000", "0x10", "100000000000000000000", "1000000000000", str(2**63), str(2**64), "9" * 5000, "²", "٣",
    "1.0", "", " ", "  2 ", "true", "None", "1/2",
])
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40).filter(
    lambda s: "\x00" not in s)
AGENTS = st.sampled_from([
    "random", "heuristic", "passer", "pimc", "pimc:samples=2", "pimc:samples=0", "pimc:samples=100000000",
    "pimc:samples=nan", "pimc:budget_ms=-1", "pimc:bogus=1", "pimc:samples", "pimc:=",
    "pimc:samples=1,samples=2",
    "cmd:", "cmd: ", "cmd:no-such-program-xyz", "cmd[timeout=0]:python", "cmd[timeout=nan]:python",
    "cmd[timeout=1e9]:python", "cmd[bogus=1]:python", "cmd[timeout=1:python", "cmd:'unclosed", "nosuchagent",
    "x.safetensors", "/nonexistent/x.safetensors", "/dev/null", ".", "", " ", "random ", "RANDOM",
])
PATHS = st.sampled_from([
    "out.json", "sub/out.json", "runs/a", "/nonexistent/dir/x.json", "/dev/null", ".", "", "x" * 300,
    "a\nb", "-", "runs", "deep/er/path",
])

