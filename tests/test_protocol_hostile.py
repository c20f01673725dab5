"""Issue 20: a soak of the bot-protocol host. Each hostile behaviour of tests/hostile_bot.py plays team A of
`smear-eval ... --workers 2` (a separate process, 4 games, a 1 s bot timeout); after each run: the exit
status and the error naming the bot, no traceback, every game the records file can hold is in it and
complete, no process of any bot's process group (nor of smear-eval's) survives, and the peak RSS of
smear-eval, its workers and its bots stays under 300 MB."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from smear_env.engine.record import replay, validate_record

ROOT = Path(__file__).resolve().parents[1]
BOT = ROOT / "tests" / "hostile_bot.py"
PY = sys.executable
RSS_LIMIT_MB = 300
RUN_LIMIT_S = 40

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self") or not hasattr(os, "wait4"),
                                reason="needs Linux /proc and wait4")


@dataclass
class Run:
    rc: int
    err: str
    records: list[dict]
    max_rss_mb: float
    seconds: float
    log: list[str]


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, pgrp) of a process, None if it does not exist."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return fields[0], int(fields[2])


def _live_in_groups(pgids: set[int]) -> list[int]:
    """Live (not zombie) processes whose process group is one of ``pgids``."""
    live = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _stat(int(entry))
            if st is not None and st[0] != "Z" and st[1] in pgids:
                live.append(int(entry))
    return live


def _survivors(pgids: set[int], pids: set[int], seconds: float = 3.0) -> list[int]:
    t0 = time.monotonic()
    while True:
        left = _live_in_groups(pgids) + [p for p in pids if (_stat(p) or ("Z",))[0] != "Z"]
        if not left or time.monotonic() - t0 > seconds:
            return sorted(set(left))
        time.sleep(0.05)


def _spec(kind: str, log: Path, at: int = 2, wrapper: bool = False) -> str:
    cmd = shlex.join([PY, str(BOT), kind, str(at), str(log)])
    if wrapper:
        cmd = shlex.join(["bash", "-c", cmd + "; true"])  # '; true': bash stays as the bot's parent
    return f"cmd[timeout=1,startup_timeout=15]:{cmd}"


# Linux counts a forked child's memory before its exec in ``ru_maxrss``: a child of a large process (a
# pytest worker that has imported torch) reports the parent's size. A small launcher process starts
# smear-eval and reports the rusage it gets from wait4, so the figure is smear-eval's own (and its workers').
_LAUNCHER = (
    "import os, subprocess, sys\n"
    "p = subprocess.Popen(sys.argv[2:])\n"
    "_, status, ru = os.wait4(p.pid, 0)\n"
    "open(sys.argv[1], 'w').write(f'{ru.ru_maxrss} {os.waitstatus_to_exitcode(status)}')\n"
)


def _smear_eval(tmp_path: Path, spec: str, workers: int = 2, games: int = 4) -> Run:
    """Run smear-eval as a child of a small launcher in its own session; the launcher's wait4 gives its
    rusage (the peak RSS of it and every descendant it reaped: workers, bots)."""
    out = tmp_path / "records.jsonl"
    log = tmp_path / "bots.log"
    usage_file = tmp_path / "usage"
    cmd = [PY, "-c", _LAUNCHER, str(usage_file),
           PY, "-m", "smear_env.evaluation.cli", spec, "heuristic", "--games", str(games), "--workers",
           str(workers), "--target-score", "3", "--records", str(out)]
    # PYTHONFAULTHANDLER: a hung run's processes print their stacks on SIGABRT (_stacks)
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="400", PYTHONFAULTHANDLER="1")
    with open(tmp_path / "stderr", "wb") as ferr:
        p = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=ferr,
                             env=env, start_new_session=True)
        t0 = time.monotonic()
        try:
            while True:
                pid, status, usage = os.wait4(p.pid, os.WNOHANG)
                if pid:
                    break
                if time.monotonic() - t0 > RUN_LIMIT_S:
                    pytest.fail(f"smear-eval did not end within {RUN_LIMIT_S} s (the host hangs); the Python "
                                f"stacks of its processes:\n{_stacks(p.pid, tmp_path / 'stderr')}")
                time.sleep(0.05)
        finally:
            if not pid:  # hung: kill it and every bot it started
                os.killpg(p.pid, signal.SIGKILL)
                os.wait4(p.pid, 0)
                _kill_logged(log)
    seconds = time.monotonic() - t0
    assert os.waitstatus_to_exitcode(status) == 0, "the launcher failed"
    max_rss_kb, rc = (int(v) for v in usage_file.read_text().split())
    err = (tmp_path / "stderr").read_text(errors="replace")
    recs = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    return Run(rc, err, recs, max_rss_kb / 1024, seconds,
               log.read_text().splitlines() if log.exists() else [])


def _stacks(launcher: int, stderr: Path) -> str:
    """SIGABRT to each process of the launcher's session but the launcher (smear-eval, its workers, the
    resource tracker: faulthandler prints every thread's stack to the stderr they share); its last part."""
    for pid in _live_in_groups({launcher}):
        if pid != launcher:
            try:
                os.kill(pid, signal.SIGABRT)
            except ProcessLookupError:
                pass
    time.sleep(2.0)
    return stderr.read_text(errors="replace")[-12000:]


def _kill_logged(log: Path) -> None:
    if not log.exists():
        return
    for line in log.read_text().splitlines():
        parts = line.split()
        if len(parts) == 3:
            for p in _live_in_groups({int(parts[1])}):
                os.kill(p, signal.SIGKILL)


def _check_common(run: Run, spec: str) -> None:
    assert "Traceback" not in run.err, run.err
    assert "\x1b" not in run.err  # a bot's output never reaches the terminal unescaped
    assert run.max_rss_mb < RSS_LIMIT_MB, f"peak RSS {run.max_rss_mb:.0f} MB"
    pids = {int(line.split()[0]) for line in run.log if len(line.split()) == 3}
    pgids = {int(line.split()[1]) for line in run.log if len(line.split()) == 3}
    assert pids, "no bot process was started"
    left = _survivors(pgids, pids)
    assert not left, f"processes of the bots' groups survived: {left}"
    for r in run.records:  # every kept game is complete and valid
        validate_record(r)
        replay(r)
        assert r["winner"] is not None and r["players"][r["duplicate"]["team_a_seats"][0]] == spec


def _flat(text: str) -> str:
    return " ".join(text.split())


# behaviour -> the reason smear-eval reports (after "match stopped: bot '<spec>' (seat s) ")
HOSTILE = {
    "hang": r"did not answer within 1 s",
    "fork_helper_hang": r"did not answer within 1 s",
    "fork_helper_exit": r"exited \(code 0\) instead of answering",
    "flood_stdout": r"wrote a line longer than 65536 bytes",
    "flood_stderr": r"did not answer within 1 s",
    "long_stderr_then_exit": r"exited \(code 3\) instead of answering; its last stderr lines: .*last words",
    "close_stdin": r"did not answer within 1 s",
    "close_stdout": r"closed its stdout but is still running",
    "answer_twice": r"wrote '\{\"action\": \d+\}\\n' after its answer",
    "answer_twice_late": r"(before it was asked \(request \d+\)|to request \d+ \(its \"id\" must be)",
    # before it was asked, if it came before the request was sent (else it is taken as the answer, and the
    # bot's real answer is the extra line; without an echoed id the two cannot be told apart)
    "answer_early": r"(before it was asked \(request \d+\)|after its answer|which is not legal)",
    "exit": r"exited \(code 5\) instead of answering",
    "garbage": r"answered b'\\x00\\x1b\[2J\\xff\\xfe garbage \{', which is not UTF-8 text",
    "non_utf8": r"which is not UTF-8 text",
    "sigstop": r"did not answer within 1 s",
    "signal_own_group": r"did not answer within 1 s",
    "escape_stderr": r"exited \(code 2\) instead of answering; its last stderr lines: \\x1b\[2J",
}
FAST_CASES = ("hang", "fork_helper_hang", "flood_stdout", "close_stdout", "answer_twice", "answer_early",
              "exit", "garbage")


def _case(kind: str):
    return pytest.param(kind, marks=() if kind in FAST_CASES else pytest.mark.slow)


@pytest.mark.parametrize("kind", [_case(k) for k in HOSTILE])
def test_hostile_bot_against_smear_eval_with_two_workers(tmp_path, kind):
    """Each bot process plays its first game well and misbehaves at its first decision of the second: both
    workers' bots fail in game 2 of their pair. smear-eval stops with one message naming the bot and the
    reason; the records hold the finished game of pair 0 (the games of pair 1 were still being played by
    the other worker: see docs/PROTOCOL.md); nothing survives; memory stays bounded."""
    log = tmp_path / "bots.log"
    spec = _spec(kind, log)
    run = _smear_eval(tmp_path, spec)
    assert run.rc == 1, run.err
    reason = HOSTILE[kind]
    flat = _flat(run.err)
    assert flat.startswith(f"smear-eval: match stopped: bot {spec!r} (seat "), run.err
    assert re.search(reason, flat), run.err
    _check_common(run, spec)
    assert [(r["duplicate"]["pair"], r["duplicate"]["game"]) for r in run.records] == [(0, 0)]
    assert run.seconds < 25


def test_hostile_bot_behind_a_shell_wrapper_forking_a_helper(tmp_path):
    """Item 1 through smear-eval: `bash -c '...'` around a bot that forks a helper holding the pipes and
    hangs: stopped after the timeout, and the wrapper, the bot and the helper are all gone."""
    log = tmp_path / "bots.log"
    spec = _spec("fork_helper_hang", log, wrapper=True)
    run = _smear_eval(tmp_path, spec)
    assert run.rc == 1 and "did not answer within 1 s" in _flat(run.err), run.err
    assert sum(line.endswith(" helper") for line in run.log) == 2  # one per worker
    _check_common(run, spec)


def test_a_bot_that_exits_at_once(tmp_path):
    """A bot that exits before reading anything: a clear error, no game recorded, nothing left."""
    log = tmp_path / "bots.log"
    spec = _spec("fast_exit", log, at=1)
    run = _smear_eval(tmp_path, spec)
    assert run.rc == 1 and re.search(r"exited \(code 0\) (before reading its input|instead of answering)",
                                     _flat(run.err)), run.err
    _check_common(run, spec)
    assert run.records == []


@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_item6_smear_eval_sends_quit_and_no_bot_survives_even_one_ignoring_it(tmp_path, workers):
    """Item 6: a bot that plays well but ignores `quit`, end of input and SIGTERM: the match completes,
    every bot process was sent `quit`, and all are killed after the grace (the old host never sent quit,
    and with --workers 2 such a bot was orphaned forever)."""
    log = tmp_path / "bots.log"
    spec = _spec("ignore_quit", log)
    run = _smear_eval(tmp_path, spec, workers=workers)
    assert run.rc == 0, run.err
    bots = [line.split()[0] for line in run.log if line.endswith(" bot")]
    quits = [line.split()[0] for line in run.log if line.endswith(" quit")]
    # each worker that plays a pair starts the team's 2 bot seats; with 2 pairs and 2 workers the pool
    # may give both pairs to one worker (scheduling), so 2 or 4 bots: every one of them got quit
    assert len(bots) in {2 * w for w in range(1, workers + 1)} and sorted(quits) == sorted(bots)
    _check_common(run, spec)
    assert len(run.records) == 4


_SIGTERM_WHILE_LOCKED = """
import os, signal, sys, time
from smear_env.agents import supervisor
from smear_env.evaluation import pairs
bot = supervisor.BotProcess([sys.executable, "-c", "import sys, time; sys.stdin.read(); time.sleep(3600)"])
print(bot.proc.pid, flush=True)
signal.signal(signal.SIGTERM, pairs._worker_sigterm)
lock = supervisor._LIVE_LOCK if sys.argv[1] == "live" else bot._signal_lock
with lock:  # where the main thread is when Pool.terminate() interrupts finish_close or kill_group
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(30)
sys.exit(7)
"""


@pytest.mark.parametrize("lock", ["live", "signal"])
def test_worker_sigterm_while_the_main_thread_holds_a_supervisor_lock_still_exits(lock):
    """A match worker's SIGTERM handler closes every live bot in the thread the signal interrupted. If that
    thread held a supervisor lock (closing a bot at the worker's normal exit, when ``Pool.terminate()``
    comes), the handler must not wait for it: the worker exits at once (code 0) and its bot is gone. With
    plain locks the worker hung and ``smear-eval --workers 2`` with it."""
    p = subprocess.Popen([PY, "-c", _SIGTERM_WHILE_LOCKED, lock], cwd=ROOT, stdout=subprocess.PIPE,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)), start_new_session=True)
    try:
        bot_pid = int(p.stdout.readline())
        rc = p.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        pytest.fail("the SIGTERM handler waited for a lock its own thread holds")
    finally:
        p.stdout.close()
    assert rc == 0
    assert _survivors({bot_pid}, {bot_pid}) == []
