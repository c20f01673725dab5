"""Bots in any language: an :class:`~smear_env.agents.base.Agent` that plays through a child process speaking
the line-based JSON protocol ``smear-bot/1`` (docs/PROTOCOL.md).

Agent spec: ``cmd:<command line>`` (split like a shell would, no shell is run), with options
``cmd[timeout=5,startup_timeout=20]:<command line>``. The process is started at the first game and kept
for the following ones. It receives, one JSON object per line on its stdin, only what its seat may know:

* ``{"type": "start_game", "protocol": "smear-bot/1", "seat": s, "rules": {...}, "seed": n}`` (no answer);
* ``{"type": "act", "view": <smear-seat-view/1>}`` -- answer one line: ``{"action": <id>}`` (or the bare id);
* ``{"type": "quit"}`` when the host is done (then stdin is closed; the bot should exit).

A bot that exits, does not answer within ``timeout`` seconds (``startup_timeout`` for its first answer),
answers something that is not an action id, or answers an illegal action raises :class:`BotError` naming
the bot, its seat and what went wrong (with the last lines it wrote to stderr); the process is killed.
The host decides what that means: ``smear-eval`` stops the match, ``smear-play`` and ``smear-serve`` stop
the game (docs/PROTOCOL.md).
"""

from __future__ import annotations

import json
import os
import queue
import shlex
import shutil
import subprocess
import threading
import weakref
from collections import deque
from typing import Any

import numpy as np

from ..actions import action_name
from ..config import SmearRules
from ..infoset import PlayerView
from ..seat_view import absolute_view, seat_view

PROTOCOL = "smear-bot/1"
DEFAULT_TIMEOUT = 10.0
DEFAULT_STARTUP_TIMEOUT = 30.0
_STDERR_LINES = 20
_MAX_LINE = 1 << 16


class BotError(RuntimeError):
    """A protocol bot failed (crashed, hung, answered garbage or an illegal action)."""

    def __init__(self, message: str, bot: str = "", seat: int | None = None) -> None:
        super().__init__(message)
        self.bot = bot
        self.seat = seat

    def __reduce__(self) -> tuple[Any, ...]:  # picklable across evaluation worker processes, with its notes
        return (BotError, (str(self), self.bot, self.seat), dict(self.__dict__))


def parse_cmd_spec(spec: str) -> tuple[list[str], dict[str, Any]]:
    """``"cmd[timeout=5]:python bot.py"`` -> (``["python", "bot.py"]``, ``{"timeout": 5}``); ValueError
    on anything malformed (an unknown option, an empty command, a program not found)."""
    from .registry import parse_options

    text = spec.strip()
    if not text.startswith("cmd"):
        raise ValueError(f"bot spec {spec!r} does not start with 'cmd:' or 'cmd[...]:'")
    rest = text[3:]
    options: dict[str, Any] = {}
    if rest.startswith("["):
        close = rest.find("]")
        if close < 0:
            raise ValueError(f"bot spec {spec!r}: '[' without ']' (options look like cmd[timeout=5]:...)")
        options = parse_options(spec, rest[1:close])
        rest = rest[close + 1:]
    if not rest.startswith(":"):
        raise ValueError(f"bot spec {spec!r}: expected ':' then the command line, e.g. 'cmd:python bot.py'")
    for key, value in options.items():
        if key not in ("timeout", "startup_timeout"):
            raise ValueError(
                f"bot spec {spec!r}: unknown option {key!r}; valid options: timeout, startup_timeout"
            )
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ValueError(f"bot spec {spec!r}: {key} must be a number of seconds > 0, not {value!r}")
    try:
        argv = shlex.split(rest[1:])
    except ValueError as e:
        raise ValueError(f"bot spec {spec!r}: cannot split the command line: {e}") from None
    if not argv:
        raise ValueError(f"bot spec {spec!r}: the command line is empty")
    if shutil.which(argv[0]) is None and not os.path.isfile(argv[0]):
        raise ValueError(f"bot spec {spec!r}: program {argv[0]!r} not found")
    return argv, options


class ProtocolAgent:
    """An agent whose decisions come from a child process speaking ``smear-bot/1`` (see the module
    docstring). Close it with :meth:`close` (also done when it is garbage-collected or at exit)."""

    def __init__(self, argv: list[str], name: str | None = None, timeout: float = DEFAULT_TIMEOUT,
                 startup_timeout: float = DEFAULT_STARTUP_TIMEOUT, cwd: str | None = None) -> None:
        if not argv:
            raise ValueError("ProtocolAgent needs a command line")
        self.argv = list(argv)
        self.name = name if name is not None else "cmd:" + shlex.join(argv)
        self.timeout = float(timeout)
        self.startup_timeout = float(startup_timeout)
        self.cwd = cwd
        self.seat = 0
        self._proc: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: deque[str] = deque(maxlen=_STDERR_LINES)
        self._answered = False
        self._finalizer: weakref.finalize | None = None
        self._threads: list[threading.Thread] = []
        self.sent: list[dict[str, Any]] = []
        """Every message sent to the bot, when ``keep_messages`` is set (for tests)."""
        self.keep_messages = False

    @classmethod
    def from_spec(cls, spec: str) -> ProtocolAgent:
        argv, options = parse_cmd_spec(spec)
        return cls(argv, name=spec.strip(), **options)

    # ------------------------------------------------------------------ process
    def _start(self) -> None:
        try:
            proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, encoding="utf-8", errors="replace", bufsize=1, cwd=self.cwd,
            )
        except OSError as e:
            cmd = shlex.join(self.argv)
            raise BotError(f"bot {self.name!r}: cannot start {cmd!r}: {e}", self.name) from None
        self._proc = proc
        self._lines = queue.Queue()
        self._stderr.clear()
        self._answered = False
        self._threads = [
            threading.Thread(target=_pump, args=(proc.stdout, self._lines.put, True), daemon=True),
            threading.Thread(target=_pump, args=(proc.stderr, self._stderr.append, False), daemon=True),
        ]
        for t in self._threads:
            t.start()
        self._finalizer = weakref.finalize(self, _kill, proc)

    def close(self) -> None:
        """Tell the bot to quit, close its stdin, and end the process (killed if it does not exit in 2 s)."""
        proc = self._proc
        self._proc = None
        if proc is None:
            return
        try:
            if proc.poll() is None and proc.stdin is not None:
                proc.stdin.write(json.dumps({"type": "quit"}) + "\n")
                proc.stdin.flush()
        except OSError:
            pass
        _kill(proc, grace=2.0, threads=self._threads)
        if self._finalizer is not None:
            self._finalizer.detach()

    def _fail(self, reason: str) -> BotError:
        proc = self._proc
        self._proc = None
        if proc is not None:
            _kill(proc, threads=self._threads)
        tail = "".join(self._stderr).strip()
        msg = f"bot {self.name!r} (seat {self.seat}) {reason}"
        if tail:
            msg += "; its last stderr lines:\n" + tail
        return BotError(msg, self.name, self.seat)

    def _send(self, msg: dict[str, Any]) -> None:
        if self._proc is None:
            self._start()
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        if self.keep_messages:
            self.sent.append(msg)
        try:
            proc.stdin.write(json.dumps(msg, separators=(",", ":")) + "\n")
            proc.stdin.flush()
        except OSError:
            raise self._fail(f"exited (code {proc.wait()}) before reading its input") from None

    def _receive(self) -> str:
        limit = self.timeout if self._answered else max(self.timeout, self.startup_timeout)
        try:
            line = self._lines.get(timeout=limit)
        except queue.Empty:
            raise self._fail(f"did not answer within {limit:g} s") from None
        if line is None:
            proc = self._proc
            code = proc.wait(timeout=5) if proc is not None else None
            raise self._fail(f"exited (code {code}) instead of answering")
        self._answered = True
        return line

    # ------------------------------------------------------------------ the Agent protocol
    def start_game(self, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        self.seat = seat
        self._send({"type": "start_game", "protocol": PROTOCOL, "seat": seat, "rules": rules.to_dict(),
                    "seed": int(rng.integers(2**63))})

    def act(self, observation: dict[str, Any]) -> int:
        from ..observation import decode

        return self.act_view(decode(observation["observation"], np.asarray(observation["action_mask"])))

    def act_view(self, view: PlayerView) -> int:
        """Send the seat's view (``view`` relative or absolute) and return the bot's legal answer."""
        return self.act_json(seat_view(absolute_view(view, self.seat)))

    def act_json(self, view_json: dict[str, Any]) -> int:
        """Send a seat-view JSON object and return the bot's answer, checked against its legal actions."""
        self._send({"type": "act", "view": view_json})
        line = self._receive()
        legal = [a["id"] for a in view_json["legal_actions"]]
        action = _parse_answer(line)
        if action is None:
            shown = line.strip()
            shown = shown if len(shown) <= 200 else shown[:200] + "..."
            raise self._fail(f"answered {shown!r}, which is not an action: expected one line "
                             "{\"action\": <id>} (or a bare id)")
        if action not in legal:
            names = ", ".join(f"{a} ({action_name(a)})" for a in legal)
            raise self._fail(f"answered action {action} ({action_name(action)}), which is not legal; "
                             f"legal actions: {names}")
        return action


def _parse_answer(line: str) -> int | None:
    if len(line) > _MAX_LINE:
        return None
    try:
        msg = json.loads(line)
    except ValueError:
        return None
    if isinstance(msg, dict):
        msg = msg.get("action")
    if isinstance(msg, bool) or not isinstance(msg, int):
        return None
    return msg


def _pump(stream: Any, put: Any, eof: bool) -> None:
    """Copy the lines of a child's pipe to ``put``, then ``put(None)`` at end of file when ``eof``."""
    try:
        for line in stream:
            put(line)
    except (OSError, ValueError):
        pass
    if eof:
        put(None)


def _kill(
    proc: subprocess.Popen[str], grace: float = 0.0, threads: list[threading.Thread] | None = None
) -> None:
    """End ``proc`` (after ``grace`` seconds for it to exit by itself), let the pipe readers finish, close
    the pipes."""
    if grace and proc.poll() is None:
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    if proc.poll() is None:
        proc.kill()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover
            pass
    for t in threads or ():
        t.join(timeout=1.0)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass


__all__ = ["BotError", "PROTOCOL", "ProtocolAgent", "parse_cmd_spec"]


# ============================================================================ the bot side, in Python
def serve_agent(spec: str, stdin: Any = None, stdout: Any = None) -> None:
    """Run the agent named by ``spec`` (any :func:`~smear_env.agents.registry.make_agent` spec) as a
    ``smear-bot/1`` bot on ``stdin``/``stdout``: each seat view is turned back into a
    :class:`PlayerView` (:func:`~smear_env.seat_view.view_from_json`) and given to the agent exactly as an
    in-process game gives it, so ``cmd:python -m smear_env.agents.protocol heuristic`` plays exactly as
    ``heuristic`` does."""
    import sys

    from ..agents.base import has_view_fast_path
    from ..observation import encode
    from ..seat_view import view_from_json
    from .registry import make_agent

    stdin = sys.stdin if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    agent: Any = None
    agent_rules: SmearRules | None = None
    for line in stdin:
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "start_game":
            rules = SmearRules.from_dict(msg["rules"])
            if agent is None or agent_rules != rules:
                agent, agent_rules = make_agent(spec, rules), rules
            agent.start_game(msg["seat"], rules, np.random.default_rng(msg["seed"]))
        elif kind == "act":
            view = view_from_json(msg["view"])
            if has_view_fast_path(agent):
                action = agent.act_view(view.relative())
            else:
                mask = np.zeros(72, dtype=np.int8)
                mask[list(view.legal_actions)] = 1
                action = agent.act({"observation": encode(view), "action_mask": mask})
            stdout.write(json.dumps({"action": int(action)}) + "\n")
            stdout.flush()
        elif kind == "quit":
            break


if __name__ == "__main__":
    import sys

    if len(sys.argv) != 2:
        sys.exit("usage: python -m smear_env.agents.protocol AGENT_SPEC  (a smear-bot/1 bot on stdin/stdout)")
    serve_agent(sys.argv[1])
