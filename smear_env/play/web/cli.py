"""``smear-serve``'s command line: the options, their checks, then uvicorn serving :func:`create_app`."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import uvicorn

from ...agents.registry import make_agent
from ...core.actions import short_repr
from ..session import DEFAULT_MAX_HANDS
from .routes import create_app, default_agents
from .server import IDLE_TTL, MAX_GAMES_KEPT


def port_number(text: str) -> int:
    """A TCP port 1..65535 (argparse type: anything else is a one-line usage error)."""
    if not (text.isascii() and text.isdigit()) or len(text) > 5 or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number 1..65535, not {short_repr(text, 40)}")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="smear-serve",
        description="A local web table: play Smear with friends and agents in the browser, and replay "
                    "recorded games (smear-record/1) with every hand face up.",
    )
    ap.add_argument("--host", default="127.0.0.1",
                    help="address to bind (default 127.0.0.1: this machine only)")
    ap.add_argument("--port", type=port_number, default=8000, help="port 1..65535 (default 8000)")
    ap.add_argument("--agent", action="append", metavar="SPEC",
                    help="an agent players may choose (repeatable; the first is the default opponent; "
                         "default: the shipped agent, heuristic, random, pimc). 'cmd:...' bots too.")
    ap.add_argument("--hint", action="append", metavar="SPEC",
                    help="agent asked by the Hint button (repeatable; default: the first --agent and pimc)")
    ap.add_argument("--max-games", type=int, default=MAX_GAMES_KEPT,
                    help="games kept in memory (oldest go first)")
    ap.add_argument("--max-hands", type=int, default=DEFAULT_MAX_HANDS, help="hands per game at most (R21)")
    ap.add_argument("--idle-ttl", type=float, default=IDLE_TTL,
                    help=f"forget a game untouched this many seconds, closing its bots "
                         f"(default {IDLE_TTL:g})")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    agents = args.agent or default_agents()
    for spec in agents + (args.hint or []):
        try:
            a = make_agent(spec)
            close = getattr(a, "close", None)
            if callable(close):
                close()
        except (ValueError, FileNotFoundError) as e:
            ap.error(str(e))
    if args.max_games < 1 or args.max_hands < 1:
        ap.error("--max-games and --max-hands must be >= 1")
    if not 1.0 <= args.idle_ttl <= 30 * 86400:
        ap.error(f"--idle-ttl must be between 1 and {30 * 86400} seconds, not {args.idle_ttl}")
    app = create_app(agents, args.hint, max_games=args.max_games, max_hands=args.max_hands,
                     idle_ttl=args.idle_ttl)
    print(f"smear-serve: open http://{args.host}:{args.port}/ (replay viewer: /replay); Ctrl-C stops")
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0
