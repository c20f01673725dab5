"""The bot side of ``smear-bot/1`` (docs/PROTOCOL.md) in Python: any agent of this package as a protocol bot.

``python -m smear_env.agents.protocol SPEC`` (or ``python -m smear_env.agents.serve SPEC``) runs
:func:`serve_agent`; the host side is :mod:`smear_env.agents.protocol`.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np

from ..core.config import SmearRules
from ..engine.observation import encode
from ..engine.seat_view import view_from_json
from .base import has_view_fast_path
from .registry import make_agent

__all__ = ["serve_agent"]


def serve_agent(spec: str, stdin: Any = None, stdout: Any = None) -> None:
    """Run the agent named by ``spec`` (any :func:`~smear_env.agents.registry.make_agent` spec) as a
    ``smear-bot/1`` bot on ``stdin``/``stdout``: each seat view is turned back into a
    :class:`~smear_env.engine.infoset.PlayerView` (:func:`~smear_env.engine.seat_view.view_from_json`) and
    given to the agent exactly as an in-process game gives it, so ``cmd:python -m smear_env.agents.protocol
    heuristic`` plays exactly as ``heuristic`` does."""

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
            answer: dict[str, Any] = {"action": int(action)}
            if "id" in msg:
                answer["id"] = msg["id"]  # echoed: the host checks that the answer is to this request
            stdout.write(json.dumps(answer) + "\n")
            stdout.flush()
        elif kind == "quit":
            break


def main(argv: list[str]) -> None:
    """``python -m smear_env.agents.serve AGENT_SPEC``."""

    if len(argv) != 1:
        sys.exit("usage: python -m smear_env.agents.protocol AGENT_SPEC  (a smear-bot/1 bot on stdin/stdout)")
    serve_agent(argv[0])


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
