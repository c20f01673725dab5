"""A smear-bot/1 bot that plays the first legal action until its ``AT``-th game (counted from 1 per process),
then misbehaves as ``BEHAVIOUR`` says at its first decision there (tests/test_protocol_hostile.py).

usage: python tests/hostile_bot.py BEHAVIOUR AT LOGFILE

Every process it starts (itself, helpers) appends ``pid pgid role`` to LOGFILE, so a test can check that none
survives; ``quit`` is logged as ``pid quit``. Standard library only, small memory (floods write one 64 KiB
buffer again and again).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time


def log(path: str, text: str) -> None:
    with open(path, "a") as f:
        f.write(text + "\n")


def helper(logfile: str) -> None:
    """Fork a helper that inherits the pipes and outlives its parent, ignoring SIGTERM."""
    code = ("import os, signal, time, sys\n"
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            f"open({logfile!r}, 'a').write(f'{{os.getpid()}} {{os.getpgrp()}} helper\\n')\n"
            "time.sleep(3600)\n")
    subprocess.Popen([sys.executable, "-c", code])  # inherits stdin/stdout/stderr
    time.sleep(0.3)  # let it log itself


def misbehave(kind: str, logfile: str, legal: list[int], request: object) -> None:
    out = sys.stdout
    if kind == "hang":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(3600)
    elif kind == "fork_helper_hang":
        helper(logfile)
        time.sleep(3600)
    elif kind == "fork_helper_exit":  # the bot exits, its helper keeps the pipes open
        helper(logfile)
        os._exit(0)
    elif kind == "flood_stdout":  # one endless line
        chunk = "x" * 65536
        while True:
            out.write(chunk)
            out.flush()
    elif kind == "flood_stderr":  # endless stderr without a newline, never answers
        chunk = "y" * 65536
        while True:
            sys.stderr.write(chunk)
            sys.stderr.flush()
    elif kind == "long_stderr_then_exit":  # 8 MB of stderr on one line, then a failure
        chunk = "z" * 65536
        for _ in range(128):
            sys.stderr.write(chunk)
        sys.stderr.write("\nlast words\n")
        sys.stderr.flush()
        os._exit(3)
    elif kind == "close_stdin":
        os.close(0)
        time.sleep(3600)
    elif kind == "close_stdout":
        os.close(1)
        time.sleep(3600)
    elif kind == "answer_twice":
        out.write(json.dumps({"action": legal[-1]}) + "\n" + json.dumps({"action": legal[0]}) + "\n")
        out.flush()
        return
    elif kind == "answer_twice_late":  # the second answer comes after the next request is sent
        out.write(json.dumps({"action": legal[0], "id": request}) + "\n")
        out.flush()
        time.sleep(0.2)
        out.write(json.dumps({"action": legal[0], "id": request}) + "\n")
        out.flush()
        return
    elif kind == "exit":
        sys.exit(5)
    elif kind == "garbage":
        os.write(1, b"\x00\x1b[2J\xff\xfe garbage {\n")
        return
    elif kind == "non_utf8":
        os.write(1, b'{"action": 0\xff}\n')
        return
    elif kind == "sigstop":
        os.kill(os.getpid(), signal.SIGSTOP)
        time.sleep(3600)
    elif kind == "signal_own_group":  # a Ctrl-C to "its" group: with the host's group shared, the host too
        os.killpg(os.getpgrp(), signal.SIGINT)
        time.sleep(3600)
    elif kind == "escape_stderr":  # terminal escapes in its last words
        sys.stderr.write("\x1b[2J\x1b]0;pwned\x07 cleared your screen\n")
        sys.stderr.flush()
        os._exit(2)
    else:  # pragma: no cover
        raise SystemExit(f"unknown behaviour {kind!r}")


def main() -> None:
    kind, at, logfile = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    log(logfile, f"{os.getpid()} {os.getpgrp()} bot")
    if kind == "fast_exit":
        os._exit(0)
    if kind == "ignore_quit":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    games = 0
    early_sent = False
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "start_game":
            games += 1
            if kind == "answer_early" and games >= at and not early_sent:
                early_sent = True
                print(json.dumps({"action": 0}), flush=True)
        elif msg["type"] == "act":
            legal = [a["id"] for a in msg["view"]["legal_actions"]]
            if games >= at and kind not in ("answer_early", "ignore_quit", "done"):
                misbehave(kind, logfile, legal, msg.get("id"))
                kind = "done"
                continue
            print(json.dumps({"action": legal[0]}), flush=True)
        elif msg["type"] == "quit":
            log(logfile, f"{os.getpid()} quit")
            if kind != "ignore_quit":
                return
    if kind == "ignore_quit":  # ignores end of input (and SIGTERM): only SIGKILL ends it
        time.sleep(3600)


if __name__ == "__main__":
    main()
