"""A smear-bot/1 bot for the protocol fuzz tier (tests/test_fuzz_protocol.py): it answers its first
``legal_first`` requests with their first legal action, then writes the planned byte chunks, one per
request (raw: any bytes, with or without a newline), then ends as planned (``exit``, ``hang`` or ``close``
its stdout).

usage: python tests/fuzz_bot.py PLAN.json PIDFILE   (standard library only)
"""

from __future__ import annotations

import base64
import json
import os
import sys
import time


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        plan = json.load(f)
    with open(sys.argv[2], "a", encoding="utf-8") as f:
        f.write(f"{os.getpid()}\n")
    chunks = [base64.b64decode(c) for c in plan["chunks"]]
    legal_first, end = plan["legal_first"], plan["end"]
    out = sys.stdout.buffer
    answered = 0
    for line in sys.stdin.buffer:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("type") == "quit":
            return
        if msg.get("type") != "act":
            continue
        if answered < legal_first:
            out.write((json.dumps({"action": msg["view"]["legal_actions"][0]["id"]}) + "\n").encode())
        elif chunks:
            out.write(chunks.pop(0))
        elif end == "hang":
            time.sleep(120)
        elif end == "close":
            out.close()
            time.sleep(120)
        else:
            sys.exit(3)
        out.flush()
        answered += 1


if __name__ == "__main__":
    main()
