"""Bots in any language, the line-based JSON protocol ``smear-bot/1`` (docs/PROTOCOL.md): the host side,
:class:`ProtocolAgent` and its names (from :mod:`smear_env.agents.protocol_agent`, the agent that the
registry builds for a ``cmd:`` spec), and the documented bot-side command ``python -m
smear_env.agents.protocol SPEC`` (:mod:`smear_env.agents.serve`: any agent of this package as a protocol bot).

This module sits above the registry (the bot side builds its agent from a spec), the host side below it.
"""

from __future__ import annotations

from .protocol_agent import (
    MAX_TIMEOUT,
    PROTOCOL,
    BotError,
    ProtocolAgent,
    check_timeout,
    close_agents,
    parse_cmd_spec,
)

__all__ = ["BotError", "MAX_TIMEOUT", "PROTOCOL", "ProtocolAgent", "check_timeout", "close_agents",
           "parse_cmd_spec"]


if __name__ == "__main__":  # the bot side (smear_env.agents.serve), kept at this documented command
    import sys

    from smear_env.agents.serve import main

    main(sys.argv[1:])
