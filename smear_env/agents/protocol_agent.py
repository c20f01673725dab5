"""Bots in any language: an :class:`~smear_env.agents.base.Agent` that plays through a child process speaking
the line-based JSON protocol ``smear-bot/1`` (docs/PROTOCOL.md).

Agent spec: ``cmd:<command line>`` (split like a shell would, no shell is run), with options
``cmd[timeout=5,startup_timeout=20]:<command line>`` (seconds, finite, > 0 and at most
:data:`MAX_TIMEOUT`). The process is started at the first game and kept for the following ones, in a
process group of its own (:mod:`smear_env.agents.supervisor`). It receives, one JSON object per line on its
stdin, only what its seat may know:

* ``{"type": "start_game", "protocol": "smear-bot/1", "seat": s, "rules": {...}, "seed": n}`` (no answer);
* ``{"type": "act", "id": k, "view": <smear-seat-view/1>}`` -- answer one line: ``{"action": <id>}`` (or
  ``{"action": <id>, "id": k}``, then checked against the request, or the bare action id);
* ``{"type": "quit"}`` when the host is done (then stdin is closed; the bot has :data:`CLOSE_GRACE`
  seconds to exit before its process group is killed).

A bot that exits, closes a pipe, does not answer within ``timeout`` seconds (``startup_timeout`` for its
first answer), writes anything it was not asked for (an answer before the request, a second answer, an
answer to another request id), a line over 64 KiB, something that is not an action id, or an illegal
action raises :class:`BotError` naming the bot, its seat and what went wrong (with the last lines it wrote to
stderr); its process group is killed. The host decides what that means: ``smear-eval`` stops the match,
``smear-play`` and ``smear-serve`` stop the game (docs/PROTOCOL.md).

This is the host side, which :mod:`smear_env.agents.registry` builds for a ``cmd:`` spec; its names are also
:mod:`smear_env.agents.protocol`'s, the module that holds the bot-side command.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import shutil
import threading
import time
import weakref
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..core.actions import action_name
from ..core.config import SmearRules
from ..engine.decoding import decode
from ..engine.infoset import PlayerView
from ..engine.seat_view import absolute_view, seat_view
from .specs import parse_key_values
from .supervisor import CLOSE_GRACE, MAX_LINE, BotIOError, BotProcess, close_all, describe_status

PROTOCOL = "smear-bot/1"
DEFAULT_TIMEOUT = 10.0
DEFAULT_STARTUP_TIMEOUT = 30.0
MAX_TIMEOUT = 3600.0
"""The largest ``timeout`` / ``startup_timeout`` accepted, in seconds."""
TIMEOUT_OPTIONS = ("timeout", "startup_timeout")
_QUIT = b'{"type":"quit"}\n'
_EXIT_WAIT = 1.0  # after a pipe closes: how long to wait for the exit status before saying "still running"
_SHOWN = 200


class BotError(RuntimeError):
    """A protocol bot failed (crashed, hung, answered garbage or an illegal action)."""

    def __init__(self, message: str, bot: str = "", seat: int | None = None) -> None:
        super().__init__(message)
        self.bot = bot
        self.seat = seat

    def __reduce__(self) -> tuple[Any, ...]:  # picklable across evaluation worker processes, with its notes
        return (BotError, (str(self), self.bot, self.seat), dict(self.__dict__))


def check_timeout(name: str, value: Any, spec: str | None = None) -> float:
    """``value`` as seconds if it is a finite number with 0 < value <= :data:`MAX_TIMEOUT`, else
    ``ValueError`` naming the option, the value and the allowed range."""
    where = f"bot spec {spec!r}: " if spec is not None else ""
    ok = not isinstance(value, bool) and isinstance(value, int | float)
    if ok:
        try:
            seconds = float(value)
        except OverflowError:  # an int too large for a float
            ok = False
        else:
            ok = math.isfinite(seconds) and 0 < seconds <= MAX_TIMEOUT
    if not ok:
        raise ValueError(f"{where}{name} must be a number of seconds > 0 and <= {MAX_TIMEOUT:g}, "
                         f"not {value!r}")
    return seconds


def parse_cmd_spec(spec: str) -> tuple[list[str], dict[str, Any]]:
    """``"cmd[timeout=5]:python bot.py"`` -> (``["python", "bot.py"]``, ``{"timeout": 5.0}``); ValueError
    on anything malformed (an unknown option, a timeout out of range, an empty command, a program not
    found)."""

    text = spec.strip()
    if not text.startswith("cmd"):
        raise ValueError(f"bot spec {spec!r} does not start with 'cmd:' or 'cmd[...]:'")
    if "\x00" in text:
        raise ValueError(f"bot spec {spec!r}: a command line cannot hold a NUL character")
    rest = text[3:]
    options: dict[str, Any] = {}
    if rest.startswith("["):
        close = rest.find("]")
        if close < 0:
            raise ValueError(f"bot spec {spec!r}: '[' without ']' (options look like cmd[timeout=5]:...)")
        options = parse_key_values(spec, rest[1:close], "options look like cmd[timeout=5]:...")
        rest = rest[close + 1:]
    if not rest.startswith(":"):
        raise ValueError(f"bot spec {spec!r}: expected ':' then the command line, e.g. 'cmd:python bot.py'")
    for key, value in options.items():
        if key not in TIMEOUT_OPTIONS:
            raise ValueError(
                f"bot spec {spec!r}: unknown option {key!r}; valid options: {', '.join(TIMEOUT_OPTIONS)}"
            )
        options[key] = check_timeout(key, value, spec)
    try:
        argv = shlex.split(rest[1:])
    except ValueError as e:
        raise ValueError(f"bot spec {spec!r}: cannot split the command line: {e}") from None
    if not argv:
        raise ValueError(f"bot spec {spec!r}: the command line is empty")
    if shutil.which(argv[0]) is None and not os.path.isfile(argv[0]):
        raise ValueError(f"bot spec {spec!r}: program {argv[0]!r} not found")
    return argv, options


def _shown(data: bytes | str) -> str:
    """A bot's output for an error message: its repr (control characters escaped), cut at 200 chars."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            pass
    cut = data[:_SHOWN]
    text = repr(cut)
    return text + ("..." if len(data) > _SHOWN else "")


class ProtocolAgent:
    """An agent whose decisions come from a child process speaking ``smear-bot/1`` (see the module
    docstring).

    :meth:`close` ends the process (``quit``, a short grace, then its process group is killed); it is
    idempotent and may be called from any thread, also while another thread waits for the bot's answer
    (that wait then ends with a :class:`BotError` "was closed by the host" within about 0.1 s, and close()
    returns once the bot is gone). A closed agent starts a new process at its next game. Bots never closed
    are closed when the agent is garbage-collected (killed at once) or at interpreter exit (``quit`` and
    the grace, all bots at once).
    """

    def __init__(self, argv: list[str], name: str | None = None, timeout: float = DEFAULT_TIMEOUT,
                 startup_timeout: float = DEFAULT_STARTUP_TIMEOUT, cwd: str | None = None) -> None:
        if not argv:
            raise ValueError("ProtocolAgent needs a command line")
        self.argv = list(argv)
        self.name = name if name is not None else "cmd:" + shlex.join(argv)
        self.timeout = check_timeout("timeout", timeout)
        self.startup_timeout = check_timeout("startup_timeout", startup_timeout)
        self.cwd = cwd
        self.seat = 0
        self._bot: BotProcess | None = None
        self._answered = False
        self._request = 0
        self._io = threading.RLock()  # held for one exchange with the bot; re-entrant for signal handlers
        self._finalizer: weakref.finalize | None = None
        self.sent: list[dict[str, Any]] = []
        """Every message sent to the bot, when ``keep_messages`` is set (for tests)."""
        self.keep_messages = False

    @classmethod
    def from_spec(cls, spec: str) -> ProtocolAgent:
        argv, options = parse_cmd_spec(spec)
        return cls(argv, name=spec.strip(), **options)

    @property
    def pid(self) -> int | None:
        """The bot's process id (also its process group id) while it runs, else None."""
        bot = self._bot
        return bot.pid if bot is not None else None

    # ------------------------------------------------------------------ process
    def _start(self) -> BotProcess:
        try:
            bot = BotProcess(self.argv, cwd=self.cwd)
        except (OSError, ValueError) as e:
            cmd = shlex.join(self.argv)
            cmd = cmd if len(cmd) <= _SHOWN else cmd[:_SHOWN] + "..."
            raise BotError(f"bot {self.name!r}: cannot start {cmd!r}: {str(e)[:_SHOWN]}", self.name) from None
        self._bot = bot
        self._answered = False
        self._request = 0
        if self._finalizer is not None:
            self._finalizer.detach()
        self._finalizer = weakref.finalize(self, _kill_now, bot)
        self._finalizer.atexit = False  # at exit the supervisor closes every live bot at once, gracefully
        return bot

    def close(self) -> None:
        """Tell the bot to quit, close its stdin, give it :data:`CLOSE_GRACE` seconds to exit, then kill its
        process group. Idempotent and thread-safe (see the class docstring)."""
        bot = self._bot
        if bot is None:
            return
        if not self._io.acquire(blocking=False):
            bot.cancel()  # another thread is talking to the bot: that exchange ends within about 0.1 s
            if not self._io.acquire(timeout=CLOSE_GRACE + 5):  # pragma: no cover - the group is signalled
                return
        try:
            bot, self._bot = self._bot, None
            if bot is not None:
                bot.close(_QUIT, CLOSE_GRACE)
        finally:
            self._io.release()

    def _fail(self, bot: BotProcess, reason: str) -> BotError:
        if self._bot is bot:
            self._bot = None
        bot.close(None, grace=0.0)  # also reads what it still writes to stderr while it is killed
        tail = bot.stderr_tail()
        msg = f"bot {self.name!r} (seat {self.seat}) {reason}"
        if tail:
            msg += "; its last stderr lines:\n" + tail
        return BotError(msg, self.name, self.seat)

    def _io_failure(self, bot: BotProcess, e: BotIOError, doing: str) -> BotError:
        """The BotError for a pipe failure ``e`` while ``doing`` (``"reading its input"`` or
        ``"answering"``)."""
        if bot.cancelled:  # closed from another thread: whatever the pipes say next is due to that
            return self._fail(bot, "was closed by the host")
        if e.kind in ("eof", "closed_input"):
            code = bot.wait_exit(_EXIT_WAIT)
            if code is not None:
                when = "before" if doing == "reading its input" else "instead of"
                return self._fail(bot, f"exited ({describe_status(code)}) {when} {doing}")
            which = "stdout" if e.kind == "eof" else "stdin"
            return self._fail(bot, f"closed its {which} but is still running (it must keep both pipes "
                                   "open until it is told to quit)")
        return self._fail(bot, e.reason)

    def _send(self, msg: dict[str, Any], deadline: float | None = None) -> BotProcess:
        bot = self._bot if self._bot is not None else self._start()
        if self.keep_messages:
            self.sent.append(msg)
        data = (json.dumps(msg, separators=(",", ":")) + "\n").encode()
        limit = self._limit()
        if deadline is None:
            deadline = time.monotonic() + limit
        try:
            bot.write(data, deadline, f"did not read its input within {limit:g} s")
        except BotIOError as e:
            raise self._io_failure(bot, e, "reading its input") from None
        return bot

    def _limit(self) -> float:
        return self.timeout if self._answered else max(self.timeout, self.startup_timeout)

    def _check_quiet(self, bot: BotProcess, before: str) -> None:
        """Protocol error if the bot wrote anything to stdout that was not asked for."""
        try:
            extra = bot.pending()
        except BotIOError as e:
            raise self._io_failure(bot, e, "answering") from None
        if extra:
            raise self._fail(bot, f"wrote {_shown(extra)} {before} (each answer is one line, written "
                                  "after its request; logs go to stderr)")

    # ------------------------------------------------------------------ the Agent protocol
    def start_game(self, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        with self._io:
            self.seat = seat
            self._send({"type": "start_game", "protocol": PROTOCOL, "seat": seat, "rules": rules.to_dict(),
                        "seed": int(rng.integers(2**63))})

    def act(self, observation: dict[str, Any]) -> int:
        return self.act_view(decode(observation["observation"], np.asarray(observation["action_mask"])))

    def act_view(self, view: PlayerView) -> int:
        """Send the seat's view (``view`` relative or absolute) and return the bot's legal answer."""
        return self.act_json(seat_view(absolute_view(view, self.seat)))

    def act_json(self, view_json: dict[str, Any]) -> int:
        """Send a seat-view JSON object and return the bot's answer, checked against its legal actions."""
        with self._io:
            return self._exchange(view_json)

    def _exchange(self, view_json: dict[str, Any]) -> int:
        request = self._request + 1
        bot = self._bot
        if bot is not None:
            self._check_quiet(bot, f"before it was asked (request {request})")
        limit = self._limit()
        deadline = time.monotonic() + limit
        bot = self._send({"type": "act", "id": request, "view": view_json}, deadline)
        self._request = request
        try:
            raw = bot.read_line(deadline, f"did not answer within {limit:g} s")
        except BotIOError as e:
            raise self._io_failure(bot, e, "answering") from None
        self._answered = True
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            line = None
        action, answer_id = _parse_answer(line) if line is not None else (None, None)
        if answer_id is not None and answer_id != request:
            raise self._fail(bot, f"answered {_shown(raw)} to request {request} (its \"id\" must be the "
                                  "request's id)")
        if line is None:
            raise self._fail(bot, f"answered {_shown(raw)}, which is not UTF-8 text")
        if action is None:
            raise self._fail(bot, f"answered {_shown(line.strip())}, which is not an action: expected one "
                                  "line {\"action\": <id>} (or a bare id)")
        if bot.has_output():  # more than one line (or the start of another) for one request
            self._check_quiet(bot, f"after its answer {_shown(raw)} to request {request}")
        legal = [a["id"] for a in view_json["legal_actions"]]
        if action not in legal:
            names = ", ".join(f"{a} ({action_name(a)})" for a in legal)
            raise self._fail(bot, f"answered action {action} ({action_name(action)}), which is not legal; "
                                  f"legal actions: {names}")
        return action


_NO_ID = object()


def _parse_answer(line: str) -> tuple[int | None, Any]:
    """``(action, id)`` of an answer line: ``{"action": a}``, ``{"action": a, "id": k}`` or a bare ``a``;
    ``(None, None)`` if it is none of those; an ``id`` that is present but not an int is returned as is
    (the caller rejects it)."""
    if len(line) > MAX_LINE:
        return None, None
    try:
        msg = json.loads(line)
    except (ValueError, RecursionError):
        return None, None
    answer_id: Any = None
    if isinstance(msg, dict):
        answer_id = msg.get("id", None)
        if "id" in msg and (isinstance(answer_id, bool) or not isinstance(answer_id, int)):
            answer_id = _NO_ID
        msg = msg.get("action")
    if isinstance(msg, bool) or not isinstance(msg, int):
        return None, None
    return msg, answer_id


def _kill_now(bot: BotProcess) -> None:
    """Finalizer of a garbage-collected agent: no grace (a collector must not wait)."""
    bot.close(_QUIT, grace=0.0)


def close_agents(agents: Iterable[Any], grace: float = CLOSE_GRACE) -> None:
    """Close every agent of ``agents`` that has a ``close()``; the protocol bots among them all at once, in
    one shared ``grace`` period (instead of one after another)."""
    bots, others = [], []
    for a in agents:
        if isinstance(a, ProtocolAgent) and a._io.acquire(blocking=False):
            try:
                bot, a._bot = a._bot, None
                if bot is not None:
                    bot.begin_close(_QUIT)
                    bots.append(bot)
            finally:
                a._io.release()
        else:  # busy in another thread (its close() ends that exchange first), or not a protocol agent
            others.append(a)
    close_all(bots, grace=grace)
    for a in others:
        close = getattr(a, "close", None)
        if callable(close):
            close()


__all__ = ["BotError", "MAX_TIMEOUT", "PROTOCOL", "ProtocolAgent", "check_timeout", "close_agents",
           "parse_cmd_spec"]

