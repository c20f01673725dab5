"""One game of the web table (:class:`HostedGame`): its session, human seats, link tokens, log, chat and
lock, and what a seat or a spectator may see of it."""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Sequence
from typing import Any

from ...core.actions import discard_action, play_action
from ...core.cards import CARD_NAMES, cards_of
from ...engine.game import DISCARD, PLAY
from ..explain import point_details, rule_notes, table_summary, why_illegal
from ..hints import TableHints
from ..session import Event, Session
from .api import scrub


class HostedGame:
    """One game of the server: the session, the human seats and their link tokens, the spectator token,
    the log of every action (public forms are made per seat on the way out), a lock."""

    def __init__(self, session: Session, specs: Sequence[str | None], notes: Sequence[str]) -> None:
        self.session = session
        self.specs = list(specs)
        self.notes = list(notes)
        self.lock = threading.Lock()
        self.touched = time.monotonic()
        self.tokens: dict[int | None, str] = {s: secrets.token_urlsafe(18) for s in session.humans}
        self.tokens[None] = secrets.token_urlsafe(18)  # the spectator link
        self.left: list[int] = []
        self.log: list[tuple[int, Event]] = []
        """(hand number, event) for every action of the game."""
        self.hand_no = session.game.hand_number
        self.hint_seed = secrets.randbits(64) if session.seed is None else session.seed
        self.hints = TableHints()
        """Hint answers kept per position and seat, per-seat limits, per-seat hint bots."""
        self.closed = False
        self.host: int = session.humans[0] if session.humans else 0
        """The seat of the person who created the game (it received every seat's link)."""
        self.named: dict[int, str] = {}
        """Names the people chose for their seats."""
        self.end_votes: set[int] = set()
        """Seats of the people who asked to end the game: it ends once every seated person has."""
        self.ended_by: list[int] | None = None
        self.chat: list[dict[str, Any]] = []
        self.chat_count = 0
        self.chat_times: dict[int, list[float]] = {}

    def links(self) -> dict[str, Any]:
        """Relative links: one per human seat, and the spectator's."""
        return {"seats": {str(s): f"/?game={t}" for s, t in self.tokens.items() if s is not None},
                "spectator": f"/?game={self.tokens[None]}"}

    def record_events(self, events: list[Event], new_hand: bool = False) -> None:
        if new_hand:
            self.hand_no += 1
        for e in events:
            self.log.append((self.hand_no, e))
            if e[3]:  # thrown in (R8): the same dealer deals again at once
                self.hand_no += 1

    def state(self, seat: int | None, since: int | None, chat_from: int | None = None) -> dict[str, Any]:
        """What ``seat`` (None: a spectator) may see now, with the log's events from ``since`` and the chat
        messages from number ``chat_from`` (default: every message kept). A seat that left sees what a
        spectator sees (``left_seat`` says which seat it was)."""
        s = self.session
        if s.over and not self.closed:
            self.close()  # bot processes end with the game
        game = s.game
        left_seat = seat if seat is not None and seat in self.left else None
        if left_seat is not None:
            seat = None
        if since is None:
            since = len(self.log)
        events = []
        for hand, e in self.log[since:]:
            (pub,) = s.events_for(-1 if seat is None else seat, [e])
            pub["hand"] = hand + 1
            events.append(pub)
        view = s.view(seat) if seat is not None else spectator_view(s)
        first = self.chat_count - len(self.chat)
        return {
            "seat": seat,
            "spectator": seat is None,
            "left_seat": left_seat,
            "host": self.host,
            "players": s.names,
            "named": [self.named.get(x) for x in range(4)],
            "humans": list(s.humans),
            "left": list(self.left),
            "end_votes": sorted(self.end_votes),
            "ended_by": self.ended_by,
            "ended": s.ended,
            "chat": self.chat[max(0, (chat_from or 0) - first):],
            "chat_count": self.chat_count,
            "unplayable": self.unplayable(seat),
            "rule_notes": rule_notes(game),
            "hand_number": game.hand_number + 1,
            "view": view,
            "events": events,
            "seq": len(self.log),
            "table": table_summary(game),
            "hand_end": point_details(game),
            "over": s.over,
            "truncated": s.truncated,
            "winner": game.winner,
            "error": None if s.error is None else scrub(s.error),
            "notes": self.notes,
        }

    def close(self) -> None:
        self.closed = True
        self.session.close()
        self.hints.close()

    def unplayable(self, seat: int | None) -> dict[str, str]:
        """For the seat to act in the play or the discard: each card of its hand it may not play (discard)
        now, with the rule that says why (:func:`smear_env.play.explain.why_illegal`)."""
        s = self.session
        game = s.game
        if seat is None or s.to_act() != seat or game.phase not in (PLAY, DISCARD):
            return {}
        make = play_action if game.phase == PLAY else discard_action
        legal = set(game.legal_actions())
        out = {}
        for c in cards_of(game.hands[seat]):
            a = make(c)
            if a not in legal:
                out[CARD_NAMES[c]] = why_illegal(game, a) or "not a legal move now"
        return out

    def who(self, seat: int) -> str:
        """A seat in words for every page: ``Alice (seat 1)``."""
        return f"{self.named.get(seat) or self.session.names[seat]} (seat {seat + 1})"

    def end_if_agreed(self) -> None:
        """End the game once every seated person asked to (a person alone ends it at once)."""
        s = self.session
        if s.over or not self.end_votes or not set(s.humans) <= self.end_votes:
            return
        self.ended_by = sorted(self.end_votes)
        s.end("the game was ended by " + " and ".join(self.who(x) for x in self.ended_by))


def spectator_view(session: Session) -> dict[str, Any]:
    """A seat view holding only what has been played: a non-bidder's view (trump only once led, R23)
    without its hand (``hand``, ``kitty``, ``discards`` empty, no legal actions, ``seat`` null)."""
    game = session.game
    ref = 0 if game.bidder is None else (game.bidder + 1) % 4
    v = session.view(ref)
    v.update(seat=None, team=0, hand=[], kitty=[], discards=[], legal_actions=[])
    return v
