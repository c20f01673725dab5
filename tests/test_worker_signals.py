"""worker_signals.resend_until_exit: a SIGTERM that Python only noted (its C handler ran while the main thread
was about to block, or in another thread) still runs the handler that ends a match worker.

The race itself (a signal just before ``sem_wait``) cannot be timed from a test; a signal sent to another
thread of the process leaves the main thread in the same state: its handler noted, the main thread blocked
on a lock that nobody releases (as a pool worker on the task queue's lock that ``Pool.terminate()`` holds)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_SCRIPT = r"""
import multiprocessing as mp, os, signal, sys, threading, time
from smear_env.evaluation.worker_signals import resend_until_exit



def handler(signum, frame):
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})  # as a worker's: sent again, it waits
    print("handler", flush=True)
    time.sleep(float(sys.argv[2]))  # closing the bots: longer than the resending period
    os._exit(3)


signal.signal(signal.SIGTERM, handler)
if sys.argv[1] == "resend":
    resend_until_exit(signal.SIGTERM, every=0.2)
lock = mp.Lock()
lock.acquire()


def other_thread():
    time.sleep(0.3)
    signal.pthread_kill(threading.get_ident(), signal.SIGTERM)  # the C handler runs here; main only notes it


threading.Thread(target=other_thread, daemon=True).start()
print("blocking", flush=True)
lock.acquire()  # nobody releases it
os._exit(0)
"""

pytestmark = pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs pthread_kill")


def _run(mode: str, seconds: float, handler_seconds: float = 0.0) -> tuple[int | None, int]:
    """(exit code or None if still running after ``seconds``, how many times the handler started)."""
    p = subprocess.Popen([sys.executable, "-c", _SCRIPT, mode, str(handler_seconds)], cwd=ROOT,
                         stdout=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    try:
        assert p.stdout is not None and p.stdout.readline() == b"blocking\n"
        try:
            code = p.wait(seconds)
        except subprocess.TimeoutExpired:
            code = None
    finally:
        p.kill()
        p.wait()
    return code, p.stdout.read().count(b"handler\n")


def test_a_noted_sigterm_stays_unhandled_without_resending() -> None:
    """The state the fix is for: the handler noted, never run (the process would block for ever)."""
    assert _run("plain", 2.0) == (None, 0)


def test_resend_until_exit_runs_the_handler_of_a_noted_sigterm() -> None:
    assert _run("resend", 10.0) == (3, 1)


def test_a_handler_that_blocks_the_signal_runs_once_while_it_is_sent_again() -> None:
    """The handler takes 1.5 s (a worker closing its bots), three resending periods: it is not started again
    inside itself."""
    assert _run("resend", 15.0, handler_seconds=1.5) == (3, 1)


def test_resend_until_exit_sends_nothing_before_the_signal_comes() -> None:
    """No signal: the watching thread only waits (the worker blocks as it would, its handler unused)."""
    script = _SCRIPT.replace("threading.Thread(target=other_thread, daemon=True).start()\n", "")
    p = subprocess.Popen([sys.executable, "-c", script, "resend", "0"], cwd=ROOT, stdout=subprocess.PIPE,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    try:
        assert p.stdout is not None and p.stdout.readline() == b"blocking\n"
        with pytest.raises(subprocess.TimeoutExpired):
            p.wait(1.5)
        p.terminate()  # a SIGTERM to the process: the main thread's handler runs at once
        assert p.wait(10) == 3
    finally:
        p.kill()
        p.wait()
