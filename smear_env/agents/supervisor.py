"""A supervised child process for the bot protocol: its own process group, timed and bounded pipe I/O, no
reader threads.

:class:`BotProcess` starts a command in a new session (``start_new_session=True``), so the bot and every
helper it forks share one process group that the host signals as a whole: a ``bash -c '...'`` wrapper or a
forked helper that still holds the pipes is killed with the bot, and closing never waits on a pipe a
grandchild holds open. All I/O is non-blocking and done in the caller's thread with ``poll``:

* every wait has a deadline (:class:`BotIOError` with a reason when it passes);
* a stdout line is limited to :data:`MAX_LINE` bytes *while it is read* (rejected as soon as it passes
  the limit, never buffered whole);
* stderr is read whenever stdout is waited on and kept in a ring of the last :data:`STDERR_KEEP` bytes,
  so a bot flooding it never blocks and never costs more than that much memory;
* closing sends a last line (``quit``), closes stdin, gives the bot ``grace`` seconds to exit, then sends
  SIGTERM (and SIGCONT, for a stopped bot) to the group and SIGKILL right after :data:`KILL_GRACE`.

The group is signalled before the bot's own process is reaped, so its id cannot have been reused by then.
A process that leaves the group on purpose (``setsid`` again) escapes this, as it would any process-group
based supervisor.
"""

from __future__ import annotations

import atexit
import os
import select
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Iterable, Sequence

MAX_LINE = 1 << 16
"""The longest stdout line a bot may write, in bytes (without the newline)."""
STDERR_KEEP = 8192
"""How many bytes of the bot's stderr are kept (the last ones) for error reports."""
STDERR_LINES = 20
"""How many of the kept stderr lines an error report shows."""
CLOSE_GRACE = 1.0
"""Seconds a bot is given to exit after ``quit`` before its process group is killed."""
KILL_GRACE = 0.2
"""Seconds between SIGTERM and SIGKILL to the process group."""
_CHUNK = 1 << 16
_SLICE = 0.1  # longest single poll, so a cancel from another thread is seen quickly
_POSIX = os.name == "posix"
_TOO_LONG = f"wrote a line longer than {MAX_LINE} bytes (an answer is one short JSON line)"
_TOO_MUCH = f"wrote more than {MAX_LINE} bytes to stdout at once (an answer is one short JSON line)"

_LIVE: weakref.WeakSet[BotProcess] = weakref.WeakSet()
_LIVE_LOCK = threading.RLock()
# Both locks are re-entrant: a worker's SIGTERM handler (smear_env.evaluation.pairs._worker_sigterm) closes
# every live bot in the main thread, which the signal may have interrupted while it held one of them (a plain
# Lock would then wait for itself forever: the host hangs).


class BotIOError(Exception):
    """A bot's pipe failed; ``reason`` completes "bot 'x' (seat s) ..."; ``kind`` is one of ``timeout``,
    ``eof``, ``closed_input``, ``too_long``, ``cancelled``."""

    def __init__(self, reason: str, kind: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind


def _set_nonblocking(fd: int) -> None:
    os.set_blocking(fd, False)


def describe_status(code: int | None) -> str:
    """``"code 1"``, ``"killed by signal 9 (SIGKILL)"`` or ``"still running"``."""
    if code is None:
        return "still running"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "?"
        return f"killed by signal {-code} ({name})"
    return f"code {code}"


def _printable(text: str) -> str:
    """``text`` with control characters (terminal escapes) shown as ``\\xNN``; newlines and tabs kept."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in "\n\t" else repr(c)[1:-1] for c in text)


class BotProcess:
    """One bot process (see the module docstring). Not thread-safe by itself except :meth:`cancel` and
    :meth:`kill_group`, which any thread (or a signal handler) may call at any time."""

    def __init__(self, argv: Sequence[str], cwd: str | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.argv = list(argv)
        self.proc = subprocess.Popen(
            self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
            cwd=cwd, env=env, close_fds=True, start_new_session=_POSIX,
        )
        with _LIVE_LOCK:
            _LIVE.add(self)
        self.pid = self.proc.pid
        self.pgid = self.proc.pid if _POSIX else None
        assert self.proc.stdin is not None and self.proc.stdout is not None and self.proc.stderr is not None
        self._in: int | None = self.proc.stdin.fileno()
        self._out_fd: int | None = self.proc.stdout.fileno()
        self._err_fd: int | None = self.proc.stderr.fileno()
        for fd in (self._in, self._out_fd, self._err_fd):
            _set_nonblocking(fd)
        self._out = bytearray()
        self._scanned = 0  # bytes of _out known to hold no newline
        self._err = bytearray()
        self._out_eof = False
        self._err_eof = False
        self._exit_code: int | None = None
        self._reaped = False
        self._cancelled = False
        self._closed = False
        self._signal_lock = threading.RLock()  # re-entrant: see _LIVE_LOCK

    # ------------------------------------------------------------------ state
    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def cancelled(self) -> bool:
        """Whether :meth:`cancel` was called (the host is closing the bot)."""
        return self._cancelled

    def exit_code(self) -> int | None:
        """The bot's exit status once its own process has ended (negative: killed by that signal), without
        reaping it (so its process group id stays reserved); None while it runs."""
        if self._exit_code is not None or self._reaped:
            return self._exit_code
        try:
            info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except (AttributeError, OSError):  # no waitid (or already reaped elsewhere): reap instead
            self._exit_code = self.proc.poll()
            self._reaped = self._exit_code is not None
            return self._exit_code
        if info is None:
            return None
        killed = info.si_code in (os.CLD_KILLED, os.CLD_DUMPED)
        self._exit_code = -info.si_status if killed else info.si_status
        return self._exit_code

    def wait_exit(self, seconds: float) -> int | None:
        """Wait up to ``seconds`` for the bot's own process to end (draining its output meanwhile, so a bot
        blocked on a full pipe can finish); its exit status or None."""
        deadline = time.monotonic() + seconds
        while True:
            code = self.exit_code()
            if code is not None:
                return code
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self._pump(min(left, 0.02), want_out=True, discard_out=True)

    def stderr_tail(self, lines: int = STDERR_LINES) -> str:
        """The last ``lines`` lines of what the bot wrote to stderr (of the last :data:`STDERR_KEEP` bytes),
        with control characters escaped."""
        if not self._closed:
            self._pump(0.0, want_out=False)
        text = self._err.decode("utf-8", "replace")
        return _printable("\n".join(text.strip().splitlines()[-lines:]))

    # ------------------------------------------------------------------ I/O
    def _poll(self, timeout: float, write: bool, want_out: bool) -> list[tuple[int, int]]:
        p = select.poll()
        if write and self._in is not None:
            p.register(self._in, select.POLLOUT)
        if want_out and not self._out_eof and self._out_fd is not None:
            p.register(self._out_fd, select.POLLIN)
        if not self._err_eof and self._err_fd is not None:
            p.register(self._err_fd, select.POLLIN)
        try:
            return p.poll(max(0, int(timeout * 1000 + 0.999)))
        except InterruptedError:  # pragma: no cover - PEP 475 retries; kept for safety
            return []

    def _read(self, fd: int) -> bytes | None:
        """One chunk, b"" at end of file, None when nothing is there."""
        try:
            return os.read(fd, _CHUNK)
        except BlockingIOError:
            return None
        except OSError:
            return b""

    def _pump(self, timeout: float, want_out: bool = True, write: bool = False,
              discard_out: bool = False) -> bool:
        """Wait up to ``timeout`` for output (and for stdin to be writable when ``write``); read what came.
        Returns whether stdin is writable."""
        if self._closed:
            return False
        writable = False
        for fd, ev in self._poll(timeout, write, want_out):
            if fd == self._in:
                writable = True
            elif fd == self._out_fd:
                data = self._read(fd)
                if data == b"":
                    self._out_eof = True
                elif data:
                    if discard_out:
                        continue
                    self._out += data
                    if len(self._out) > MAX_LINE + 1:  # more than any one answer line: never buffered
                        first = self._out.find(b"\n", 0, MAX_LINE + 1)
                        raise BotIOError(_TOO_LONG if first < 0 else _TOO_MUCH, "too_long")
            elif fd == self._err_fd:
                data = self._read(fd)
                if data == b"":
                    self._err_eof = True
                elif data:
                    self._err += data
                    if len(self._err) > STDERR_KEEP:
                        del self._err[:-STDERR_KEEP]
            del ev
        return writable

    def _check(self, deadline: float, what: str) -> float:
        if self._cancelled or self._closed:
            raise BotIOError("was closed by the host", "cancelled")
        left = deadline - time.monotonic()
        if left <= 0:
            raise BotIOError(what, "timeout")
        return left

    def write(self, data: bytes, deadline: float, timeout_text: str) -> None:
        """Write all of ``data`` to the bot's stdin by ``deadline`` (reading its output meanwhile)."""
        view = memoryview(data)
        while view:
            if self._in is None:
                raise BotIOError("closed its input", "closed_input")
            try:
                n = os.write(self._in, view)
                view = view[n:]
                continue
            except BlockingIOError:
                pass
            except OSError:  # EPIPE: nobody reads the bot's stdin any more
                raise BotIOError("closed its input", "closed_input") from None
            left = self._check(deadline, timeout_text)
            self._pump(min(left, _SLICE), write=True)

    def pending(self) -> bytes:
        """Whatever the bot wrote to stdout that has not been read as a line (after a look at the pipe that
        does not wait)."""
        self._pump(0.0)
        return bytes(self._out)

    def has_output(self) -> bool:
        """Whether stdout data beyond the lines read so far has been received."""
        return bool(self._out)

    def read_line(self, deadline: float, timeout_text: str) -> bytes:
        """The next stdout line (without its newline) by ``deadline``; BotIOError on a timeout, end of file
        (kind ``eof``) or a line over :data:`MAX_LINE` bytes."""
        while True:
            i = self._out.find(b"\n", self._scanned)
            if i >= 0:
                line = bytes(self._out[:i])
                del self._out[:i + 1]
                self._scanned = 0
                if len(line) > MAX_LINE:
                    raise BotIOError(_TOO_LONG, "too_long")
                return line
            self._scanned = len(self._out)
            if len(self._out) > MAX_LINE:
                raise BotIOError(_TOO_LONG, "too_long")
            if self._out_eof:
                raise BotIOError("closed its output", "eof")
            left = self._check(deadline, timeout_text)
            if self.exit_code() is not None:  # the bot has exited, a helper may still hold its stdout
                self._pump(0.0)
                if b"\n" in self._out[self._scanned:]:
                    continue
                raise BotIOError("closed its output", "eof")
            self._pump(min(left, _SLICE))

    # ------------------------------------------------------------------ ending
    def cancel(self) -> None:
        """From any thread: make the I/O in progress end (BotIOError ``cancelled``) and signal the group."""
        self._cancelled = True
        self.kill_group(signal.SIGTERM)

    def kill_group(self, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` to the bot's process group (SIGCONT too after SIGTERM, so a stopped bot sees it);
        nothing once the bot's process is reaped."""
        with self._signal_lock:
            if self._reaped:
                return
            try:
                if self.pgid is not None:
                    os.killpg(self.pgid, sig)
                    if sig == signal.SIGTERM:
                        os.killpg(self.pgid, signal.SIGCONT)
                elif sig in (signal.SIGKILL, signal.SIGTERM):  # pragma: no cover - not POSIX
                    self.proc.kill()
            except (ProcessLookupError, PermissionError):
                pass

    def begin_close(self, last_line: bytes | None) -> None:
        """Best effort, without waiting: write ``last_line`` (if the pipe takes it at once), close stdin."""
        if self._closed or self._in is None:
            return
        if last_line and self.exit_code() is None:
            try:
                os.write(self._in, last_line)
            except OSError:
                pass
        fd, self._in = self._in, None
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        except OSError:
            pass
        del fd

    def finish_close(self, deadline: float) -> int | None:
        """Wait until ``deadline`` for the bot to exit, then SIGTERM its group, SIGKILL it after
        :data:`KILL_GRACE`, reap the bot and close the pipes. Idempotent; returns the bot's exit status."""
        if self._closed:
            return self._exit_code
        self.begin_close(None)
        code = self.wait_exit(max(0.0, deadline - time.monotonic()))
        self.kill_group(signal.SIGTERM)
        if code is None:
            code = self.wait_exit(KILL_GRACE)
        self.kill_group(signal.SIGKILL)  # helpers of the group too, even when the bot itself has exited
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - a process that SIGKILL does not end
            pass
        with self._signal_lock:
            self._reaped = self.proc.returncode is not None
        if self._exit_code is None:
            self._exit_code = self.proc.returncode
        self._closed = True
        for stream in (self.proc.stdout, self.proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        self._out_fd = self._err_fd = None
        with _LIVE_LOCK:
            _LIVE.discard(self)
        return self._exit_code

    def close(self, last_line: bytes | None = None, grace: float = CLOSE_GRACE) -> int | None:
        """:meth:`begin_close` then :meth:`finish_close` after at most ``grace`` seconds."""
        self.begin_close(last_line)
        return self.finish_close(time.monotonic() + grace)


def close_all(processes: Iterable[BotProcess] | None = None, last_line: bytes | None = None,
              grace: float = CLOSE_GRACE) -> None:
    """Close several bots at once, sharing one ``grace`` period (default: every live one of this process)."""
    if processes is None:
        with _LIVE_LOCK:
            processes = list(_LIVE)
    procs = [p for p in processes if not p.closed]
    for p in procs:
        p.begin_close(last_line)
    deadline = time.monotonic() + grace
    for p in procs:
        p.finish_close(deadline)


def _close_all_at_exit() -> None:
    close_all(last_line=b'{"type":"quit"}\n')


atexit.register(_close_all_at_exit)

__all__ = ["BotIOError", "BotProcess", "CLOSE_GRACE", "KILL_GRACE", "MAX_LINE", "STDERR_KEEP",
           "close_all", "describe_status"]
