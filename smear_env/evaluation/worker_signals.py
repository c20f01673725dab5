"""Ctrl-C and the worker processes of a match: the parent handles it, a worker never prints a traceback.

A Ctrl-C at a terminal is a SIGINT to the whole process group, workers included. A worker ignores it from
its initializer on (:func:`ignore_sigint`); before that (a spawned worker still importing, which takes
seconds on a loaded machine) it would die with a KeyboardInterrupt traceback, or, once the parent has ended
the match, with one about the pool's semaphores. So pools start with :func:`start_pool`: SIGINT is blocked
in this thread while the workers start, they are born with it blocked (a signal mask survives fork and
exec) and keep one that arrives pending until their initializer ignores it; this process notes a Ctrl-C of
those moments and, once the pool exists, terminates it and runs its own SIGINT handler.

``Pool.terminate()`` ends the workers with SIGTERM while it holds the task queue's read lock for good. A
worker whose handler must run (it closes its bots, then exits) can lose that race: a signal that comes just
before the main thread blocks on the lock (the worker going back for its next task) is only noted by Python,
and the handler waits for the lock, for ever. :func:`resend_until_exit` sends the signal again until the
handler has ended the process.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from multiprocessing import resource_tracker
from typing import Any

_MASKS = hasattr(signal, "pthread_sigmask")  # POSIX; elsewhere the workers only ignore SIGINT


def start_pool(make: Callable[[], Any]) -> Any:
    """``make()`` (it creates a ``multiprocessing`` pool, which starts the workers from this thread) with
    SIGINT blocked in this thread and, in this process, only noted: a Ctrl-C that came meanwhile (any thread
    of the process may receive it) then runs the SIGINT handler of before, the pool terminated first. From a
    thread other than the main thread (no signal handler can be set there): ``make()`` alone."""
    if not _MASKS or threading.current_thread() is not threading.main_thread():
        return make()
    # multiprocessing's resource tracker unblocks SIGINT in this thread after it starts its own process:
    # start it first, so that it is already running while the block holds
    resource_tracker.ensure_running()
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        pool = make()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a SIGINT pending in this thread: noted
        signal.signal(signal.SIGINT, previous)
    if caught:
        pool.terminate()
        if callable(previous):
            previous(signal.SIGINT, None)  # e.g. raises KeyboardInterrupt
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt
    return pool


def ignore_sigint() -> None:
    """In a worker's initializer: ignore Ctrl-C (the parent's to handle, then it ends the pool), then
    unblock it, which discards one pending since the worker started."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if _MASKS:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def resend_until_exit(signum: int, every: float = 0.5) -> None:
    """In a worker's initializer, once ``signum`` has a handler that ends the process (and blocks ``signum``
    first: each signal sent again would otherwise run it again inside itself): from the moment the
    signal comes, a thread sends it again to the main thread every ``every`` seconds. The first one may have
    come just before the main thread blocked (on a lock or a pipe) and then only been noted, its handler
    waiting for that call to return; a later one interrupts the call, and the handler runs. The thread learns
    of the signal from Python's wakeup file descriptor (its C handler writes the signal's number there, from
    whichever thread it interrupted) and blocks every signal itself, so they still reach the main thread."""
    if not _MASKS or threading.current_thread() is not threading.main_thread():
        return
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    main = threading.main_thread().ident
    assert main is not None

    def watch() -> None:
        while signum not in os.read(read_fd, 64):
            pass
        while True:  # until the handler ends the process (a daemon thread)
            time.sleep(every)
            signal.pthread_kill(main, signum)

    mask = signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
    try:
        threading.Thread(target=watch, name=f"resend-{signal.Signals(signum).name}", daemon=True).start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
