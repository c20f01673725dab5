"""Helpers of the play/protocol/web tests: the cards a seat may know, card names found in any JSON."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from smear_env.core.cards import CARD_NAMES, cards_of
from smear_env.engine.game import BIDDING, Game

_CARD = re.compile(r"(?<![0-9A-Za-z])([789TJQKA][CDHS])(?![0-9A-Za-z])")
_RANDOM_IDS = frozenset({"game_id", "links", "token"})
"""Keys whose values are random url-safe tokens (``secrets.token_urlsafe``: letters, digits, ``-`` and ``_``):
a token such as ``x-7S_q`` is not a card, so their values are not scanned (a flaky false leak otherwise)."""


def known_names(game: Game, seat: int) -> set[str]:
    """R22/R23: the seat's hand, every played card, and the kitty and discards when it is the bidder."""
    m = game.hands[seat] | game.played_by[0] | game.played_by[1] | game.played_by[2] | game.played_by[3]
    if game.bidder == seat and game.phase != BIDDING:
        m |= sum(1 << c for c in game.kitty) | sum(1 << c for c in game.discards)
    return {CARD_NAMES[c] for c in cards_of(m)}


def card_names_in(obj: Any) -> set[str]:
    """Every card name in any string (or key) anywhere in a JSON value ("play JH" counts JH)."""
    out: set[str] = set()
    if isinstance(obj, dict):
        for k, v in obj.items():
            out |= card_names_in(k) | (set() if k in _RANDOM_IDS else card_names_in(v))
    elif isinstance(obj, list):
        for v in obj:
            out |= card_names_in(v)
    elif isinstance(obj, str):
        out |= set(_CARD.findall(obj))
    return out


@contextmanager
def web_client(agents: Sequence[str] = ("heuristic", "random"), hints: Sequence[str] | None = None
               ) -> Iterator[Any]:
    """A Starlette test client of ``smear-serve``'s app (its state as ``client.app_state``)."""
    from starlette.testclient import TestClient

    from smear_env.play.web import create_app

    app = create_app(list(agents)) if hints is None else create_app(list(agents), hints=list(hints))
    with TestClient(app) as c:
        c.app_state = app.state
        yield c


def new_web_game(client: Any, **body: Any) -> dict[str, Any]:
    """``POST /api/games`` (one person against random, a heuristic partner, target 3 unless ``body`` says
    otherwise); the 201 answer."""
    r = client.post("/api/games", json={"opponents": "random", "partner": "heuristic",
                                        "rules": {"target_score": 3}, **body})
    assert r.status_code == 201, r.json()
    return r.json()


@contextmanager
def serve_app(app: Any, log_level: str = "warning") -> Iterator[int]:
    """``app`` served by uvicorn in a thread on a free port of 127.0.0.1 (yielded), stopped on exit."""
    import socket
    import threading
    import time

    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    srv = uvicorn.Server(uvicorn.Config(app, log_level=log_level))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(200):
            if srv.started:
                break
            time.sleep(0.05)
        yield sock.getsockname()[1]
    finally:
        srv.should_exit = True
        thread.join(timeout=10)
        sock.close()
