#!/usr/bin/env python3
"""A Smear bot speaking the line-based JSON protocol smear-bot/1 (docs/PROTOCOL.md): it plays a uniformly
random legal action. Standard library only -- a bot in any language does the same four things:

1. read one JSON object per line from stdin;
2. on "start_game", remember what it needs (seat, rules, seed);
3. on "act", answer one line {"action": <id>} with an id from view["legal_actions"], and flush;
4. on "quit" or end of input, exit. Ignore message types it does not know.

Try it: smear-eval "cmd:python examples/random_bot.py" heuristic --games 2 --target-score 5
"""

import json
import random
import sys


def main() -> None:
    rng = random.Random(0)
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "start_game":
            rng = random.Random(msg["seed"])  # reproducible: the host hands each game a seed
        elif kind == "act":
            legal = msg["view"]["legal_actions"]  # [{"id": 40, "name": "play 7C"}, ...]
            choice = rng.choice(legal)
            print(json.dumps({"action": choice["id"]}), flush=True)
        elif kind == "quit":
            break


if __name__ == "__main__":
    main()
