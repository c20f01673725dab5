"""``smear-serve``: a local web table (people and agents at one table, in the browser) and a replay viewer.

A Starlette app served by uvicorn, bound to 127.0.0.1 by default; the page is plain HTML/CSS/JS from
``smear_env/play/static`` (no build step). The server keeps each game in memory. A game has 1 to 4 people
("human seats"); creating it returns one private link per human seat and one spectator link, each an
unguessable token (``secrets.token_urlsafe``). A seat's link answers with only that seat's view
(:func:`smear_env.seat_view.seat_view_of`) and the public form of every action (the game's log, kept on the
server: a page that reloads gets its history back); a spectator link answers with what has been played
only (no hand, kitty or discard). The full record (every card) is given only once the game is over.

API (JSON; errors are ``{"error": message}`` with a 4xx status, and a move error also lists
``legal_actions`` and ``why``; the game is then unchanged). ``{token}`` is a seat's or spectator's link
token; ``?since=N`` on any game request returns the log's events from position N (``seq`` in every answer
is the log's length; pages poll ``GET .../{token}?since=seq`` to see the other seats' moves):

=======================================  ====================================================================
``GET  /api/config``                     agents this server offers, rule options and their defaults/choices
``POST /api/agents``                     ``{"rules"}``: which agents play these rules and why not, the default
``POST /api/games``                      new game ``{"seat" | "humans", "partner", "opponents", "left",
                                         "right", "agents", "rules", "seed"}``: links per human seat
``GET  /api/games/{token}``              the game as the token's seat (or a spectator) sees it
``POST /api/games/{token}/actions``      ``{"action": <id or name>}``: the seat's move, then the agents'
``POST /api/games/{token}/next``         deal the next hand (after a hand is over)
``GET  /api/games/{token}/hint``         every legal move with the shipped agent's probability and its worth
``POST /api/games/{token}/leave``        ``{"agent"}`` (optional): an agent takes this seat over; the link
                                         then only watches (as a spectator's does)
``POST /api/games/{token}/resign``       ``{"agree"}`` (default true): ask to end the game; it ends (its
                                         record becomes available) once every seated person asked
``POST /api/games/{token}/name``         ``{"name"}``: the name this seat's person goes by
``POST /api/games/{token}/chat``         ``{"text"}``: a message to the table (``?chat=N`` on a game
                                         request returns the messages from number N)
``GET  /api/games/{token}/record``       smear-record/1, once the game is over
``GET  /api/games/{token}/replay``       the replay frames of the game, once it is over
``POST /api/replay``                     replay frames of an uploaded smear-record/1 file (``?index=k``,
                                         ``?hand_from=h``: at most ``MAX_REPLAY_HANDS`` hands per request)
=======================================  ====================================================================

People at a table: the person who creates a game receives every seat's link and the spectator link (the
host hands them out; a friend's privacy rests on the host's good faith). Ending a game needs every seated
person: ``/resign`` from one asks the others, and the game ends once all seated people asked (a person
alone ends it at once); every answer then says who ended it (``ended``). A seat whose person left is played
by an agent and its link only watches: it can no longer move, deal, chat, name itself or end the game (403).

Limits: request bodies are read as a stream and refused past ``MAX_UPLOAD`` bytes for a record upload,
``MAX_BODY`` for any other request (413, also when chunked); a body is strict JSON
(:func:`parse_json_text`) nested at most ``MAX_JSON_DEPTH`` deep (checked in linear time), else 400; a
body must be ``application/json`` (the replay upload also takes ``text/plain`` and JSON lines), else 415;
query numbers are ASCII digits in range (:func:`query_int`), else 400; an uploaded record holds at most
``MAX_RECORD_HANDS`` hands (413), and replay work runs in a worker process
(:mod:`smear_env.play.replay_pool`); hints are computed outside the game's lock, kept per position and
seat and limited per seat (:class:`smear_env.play.hints.TableHints`, 429); a game untouched for
``idle_ttl`` seconds is reaped by a background thread, its agents closed (bot processes end).
Everything a browser sees names agents by their shipped or file name, never a server path.

Only the agents given to the server (``--agent``, default: the shipped agent, ``heuristic``, ``random``,
``pimc``) can be chosen from the page, and ``heuristic`` as the fallback for rules a checkpoint does not
play (:mod:`smear_env.play.choices`): a web request never names a program or a file to run.
"""

from __future__ import annotations

import argparse
import json
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..actions import action_name, parse_action, short_repr
from ..config import RuleOptionError, SmearRules
from ..game import IllegalActionError
from .choices import FALLBACK, agent_options, display_name, hint_specs, is_checkpoint, why_not
from .explain import point_details, rule_notes, table_summary, why_illegal
from .hints import TableHints
from .session import DEFAULT_MAX_HANDS, Event, Session

STATIC = Path(__file__).parent / "static"
MAX_GAMES = 2000
IDLE_TTL = 2 * 3600.0
MAX_UPLOAD = 5 << 20
"""Largest body of a record upload (``POST /api/replay``)."""
MAX_BODY = 128 << 10
"""Largest body of every other request (a move, a new game: a few hundred bytes)."""
MAX_RECORD_HANDS = 500
"""Most hands an uploaded record may hold (a served or evaluated game stops at 200 by default): a longer
one is refused before it is validated."""
MAX_JSON_DEPTH = 32
MAX_REPLAY_HANDS = 60
"""Hands of a record turned into replay frames per request (``?hand_from=`` pages through the rest)."""
MAX_HINTERS = 16
MAX_NAME = 20
"""Characters in a player's name at most."""
MAX_CHAT_TEXT = 300
MAX_CHAT_KEPT = 100
"""Chat messages a game keeps (the oldest go first)."""
CHAT_BURST = (5, 10.0)
"""At most 5 chat messages per seat in 10 seconds (else 429)."""
JSON_TYPES = ("application/json",)
UPLOAD_TYPES = ("application/json", "text/plain", "application/x-ndjson", "application/jsonl",
                "application/jsonlines", "application/octet-stream")


class ApiError(Exception):
    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.body = {"error": message, **extra}


def query_int(request: Any, key: str, high: int, default: int | None = None, what: str = "") -> int | None:
    """The query parameter ``key`` as an integer ``0..high`` (``default`` when absent); an ApiError (400)
    naming the parameter and its range for anything else (a sign, a space, ``²``, thousands of digits)."""
    text = request.query_params.get(key)
    if text is None:
        return default
    if not (text.isascii() and text.isdigit()) or len(text) > len(str(high)) or int(text) > high:
        raise ApiError(400, f"{key} must be an integer 0..{high}{what}, not {short_repr(text, 40)}")
    return int(text)


def _int_field(body: dict[str, Any], key: str, value: Any, allowed: Sequence[int]) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value not in allowed:
        raise ApiError(400, f"{key} must be one of {list(allowed)} (an integer), not {value!r}")
    return value


# ============================================================================ one game
class Table:
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
        from ..actions import discard_action, play_action
        from ..cards import CARD_NAMES, cards_of
        from ..game import DISCARD, PLAY

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


# ============================================================================ the server
class Server:
    """The games of one server and what it offers (agents, hint agents, limits)."""

    def __init__(self, agents: Sequence[str], hints: Sequence[str] | None = None, max_games: int = MAX_GAMES,
                 max_hands: int = DEFAULT_MAX_HANDS, idle_ttl: float = IDLE_TTL) -> None:
        if not agents:
            raise ValueError("a server needs at least one agent spec")
        self.specs: dict[str, str] = {}
        """Agent id (what a browser sees and sends: :func:`display_name`) -> spec."""
        for spec in dict.fromkeys(agents):
            name = display_name(spec)
            k, i = name, 2
            while k in self.specs:
                k, i = f"{name}#{i}", i + 1
            self.specs[k] = spec
        self.agents = list(self.specs.values())
        self.hints = list(hints) if hints is not None else list(dict.fromkeys([self.agents[0], "pimc"]))
        self.max_games = max_games
        self.max_hands = max_hands
        self.idle_ttl = idle_ttl
        self.tables: OrderedDict[int, Table] = OrderedDict()
        self.links: dict[str, tuple[Table, int | None]] = {}
        self.lock = threading.Lock()
        self._policies: dict[str, Any] = {}
        self._hinters: OrderedDict[SmearRules, tuple[Any, threading.Lock]] = OrderedDict()
        self.reaped = 0
        from .replay_pool import ReplayPool

        self.replays = ReplayPool(start_replay_worker, (self.agents,))
        """Replay work (uploads, finished games' frames) runs in a worker process."""

    # ------------------------------------------------------------------ agents
    def name_of(self, spec: str) -> str:
        for k, v in self.specs.items():
            if v == spec:
                return k
        return display_name(spec)

    def options(self, rules: SmearRules) -> dict[str, Any]:
        """Which offered agents play ``rules`` (and why not), the default, the hint agents: what the setup
        form shows (:func:`smear_env.play.choices.agent_options`)."""
        opts = agent_options(self.agents, rules)
        hints, notes = hint_specs(self.hints, rules)
        return {
            "agents": [dict(o.to_json(), id=self.name_of(o.spec)) for o in opts],
            "default": self.name_of(self.default_spec(rules)),
            "hint_agents": [self.name_of(h) for h in hints],
            "notes": notes,
        }

    def default_spec(self, rules: SmearRules) -> str:
        """The first offered agent when it plays ``rules``, else :data:`FALLBACK` (as smear-play does)."""
        first = self.agents[0]
        return first if why_not(first, rules) is None else FALLBACK

    def _spec(self, key: str, value: Any, rules: SmearRules, default: str) -> str:
        if value is None:
            return default
        if not isinstance(value, str):
            raise ApiError(400, f"{key} must be an agent name, one of {list(self.specs)}, not {value!r}")
        spec = self.specs.get(value)
        if spec is None and value == FALLBACK:
            spec = FALLBACK
        if spec is None:
            raise ApiError(400, f"{key}: agent {value!r} is not offered by this server; choose one of "
                                f"{list(self.specs)}")
        why = why_not(spec, rules)
        if why is not None:
            raise ApiError(400, f"{key}: {why}; choose one of "
                                f"{[o['id'] for o in self.options(rules)['agents'] if o['playable']]}")
        return spec

    def make_agent(self, spec: str, rules: SmearRules) -> Any:
        """An agent for ``spec``: checkpoints share one loaded policy (read once per server); named by
        :meth:`name_of` (never a path)."""
        from ..agents.registry import make_agent

        if is_checkpoint(spec):
            from ..agents.checkpoint import CheckpointAgent

            with self.lock:
                base = self._policies.get(spec)
            if base is None:
                base = make_agent(spec, rules)
                with self.lock:
                    self._policies[spec] = base
            agent = CheckpointAgent(self.name_of(spec), base.policy, base.meta)
        else:  # a program runs only for a spec given to the server (its --agent), never one from a request
            agent = make_agent(spec, rules, allow_commands=spec in self.agents)
        try:
            agent.name = self.name_of(spec)
        except AttributeError:  # pragma: no cover
            pass
        return agent

    # ------------------------------------------------------------------ games
    def link(self, token: str) -> tuple[Table, int | None]:
        with self.lock:
            hit = self.links.get(token)
            if hit is None:
                raise ApiError(404, "no game for this link on this server (games live in memory: they are "
                                    "forgotten when the server stops or after a while unused)")
            table = hit[0]
            table.touched = time.monotonic()
            self.tables.move_to_end(id(table))
            return hit

    def new_game(self, body: Any) -> tuple[str, Table]:
        if not isinstance(body, dict):
            raise ApiError(400, 'the body must be a JSON object like {"seat": 0, "opponents": "heuristic"}')
        allowed = {"seat", "humans", "partner", "opponents", "left", "right", "agents", "rules", "seed",
                   "names"}
        unknown = sorted(set(body) - allowed)
        if unknown:
            raise ApiError(400, f"unknown field(s) {unknown}; allowed: {sorted(allowed)}")
        humans_in = body.get("humans")
        if humans_in is None:
            seat = _int_field(body, "seat", body.get("seat", 0), (0, 1, 2, 3))
            humans = [seat]
        else:
            if not isinstance(humans_in, list) or not 1 <= len(humans_in) <= 4:
                raise ApiError(400, f"humans must be a list of 1 to 4 distinct seats 0..3, not {humans_in!r}")
            humans = [_int_field(body, "humans[]", h, (0, 1, 2, 3)) for h in humans_in]
            if len(set(humans)) != len(humans):
                raise ApiError(400, f"humans must be distinct seats, not {humans_in!r}")
            seat = _int_field(body, "seat", body.get("seat", humans[0]), humans)
        rules_in = body.get("rules", {})
        if rules_in is None:
            rules_in = {}
        if not isinstance(rules_in, dict):
            raise ApiError(400, f"rules must be an object of rule options (or null for the defaults), not "
                                f"{short_repr(rules_in, 40)}")
        try:
            rules = SmearRules.from_dict(rules_in)
        except (RuleOptionError, TypeError, ValueError) as e:
            raise ApiError(400, str(e)) from None
        seed = body.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)
                                 or not 0 <= seed < 2**63):
            raise ApiError(400, f"seed must be an integer in 0..2**63-1 or null, not {seed!r}")
        default = self.default_spec(rules)
        notes = []
        if default != self.agents[0]:
            notes.append(f"{why_not(self.agents[0], rules)}; {FALLBACK!r} plays the seats left to the "
                         "default")
        specs: list[str | None] = [None] * 4
        opp = self._spec("opponents", body.get("opponents"), rules, default)
        rel = {"partner": 2, "left": 1, "right": 3}
        for key, off in rel.items():
            s = (seat + off) % 4
            if s not in humans:
                specs[s] = self._spec(key, body.get(key), rules, default if key == "partner" else opp)
            elif body.get(key) is not None:
                raise ApiError(400, f"{key}: seat {s} is a human seat")
        agents_in = body.get("agents") or {}
        if not isinstance(agents_in, dict):
            raise ApiError(400, 'agents must be an object {"<seat>": "<agent>"}')
        for k, v in agents_in.items():
            if k not in ("0", "1", "2", "3") or int(k) in humans:
                raise ApiError(400, f"agents: {k!r} is not an agent seat; agent seats: "
                                    f"{[str(s) for s in range(4) if s not in humans]}")
            specs[int(k)] = self._spec(f"agents[{k}]", v, rules, default)
        try:
            agents = [None if s is None else self.make_agent(s, rules) for s in specs]
        except (ValueError, FileNotFoundError) as e:  # a bot that cannot be built
            raise ApiError(400, scrub(str(e), self)) from None
        names_in = body.get("names") or {}
        if not isinstance(names_in, dict):
            raise ApiError(400, 'names must be an object {"<seat>": "<name>"} for human seats')
        chosen = {}
        for k, v in names_in.items():
            if k not in ("0", "1", "2", "3") or int(k) not in humans:
                raise ApiError(400, f"names: {k!r} is not a human seat; human seats: "
                                    f"{[str(h) for h in humans]}")
            chosen[int(k)] = self.player_name(v)
        names = [chosen.get(i, "human") if s is None else self.name_of(s) for i, s in enumerate(specs)]
        session = Session(agents, rules, seed=seed, max_hands=self.max_hands, names=names)
        table = Table(session, specs, notes)
        table.host = seat
        table.named.update(chosen)
        with self.lock:
            evict = self._evict_locked()
            self.tables[id(table)] = table
            for s, t in table.tokens.items():
                self.links[t] = (table, s)
        for t in evict:
            t.close()
        return table.tokens[seat], table

    def player_name(self, value: Any) -> str:
        """A name a person chose: 1 to ``MAX_NAME`` printable characters (spaces inside), not an agent's."""
        import unicodedata

        if not isinstance(value, str):
            raise ApiError(400, f"a name must be a string of 1 to {MAX_NAME} characters, not {value!r}")
        name = " ".join(value.split())
        if not 1 <= len(name) <= MAX_NAME or any(unicodedata.category(ch)[0] == "C" for ch in name):
            raise ApiError(400, f"a name must be 1 to {MAX_NAME} printable characters, not {value[:40]!r}")
        if name in self.specs or name in (FALLBACK, "human"):
            raise ApiError(400, f"{name!r} is an agent's name here; choose another name")
        return name

    def _drop_locked(self, table: Table) -> None:
        self.tables.pop(id(table), None)
        for t in table.tokens.values():
            self.links.pop(t, None)

    def _evict_locked(self) -> list[Table]:
        out = []
        while len(self.tables) >= self.max_games:
            _, oldest = self.tables.popitem(last=False)
            self._drop_locked(oldest)
            out.append(oldest)
        return out

    def reap(self, now: float | None = None) -> int:
        """Forget the games untouched for ``idle_ttl`` seconds and close their agents (bot processes end);
        returns how many."""
        now = time.monotonic() if now is None else now
        gone = []
        with self.lock:
            for table in list(self.tables.values()):
                if now - table.touched > self.idle_ttl:
                    self._drop_locked(table)
                    gone.append(table)
            self.reaped += len(gone)
        for table in gone:
            with table.lock:
                table.close()
        return len(gone)

    def close(self) -> None:
        with self.lock:
            tables = list(self.tables.values())
            self.tables.clear()
            self.links.clear()
            hinters = [h for h, _ in self._hinters.values()]
            self._hinters.clear()
        for t in tables:
            t.close()
        for h in hinters:
            h.close()
        self.replays.close()

    # ------------------------------------------------------------------ hints
    def hint(self, table: Table, seat: int) -> dict[str, Any]:
        """The hint for ``seat``'s decision in ``table``. The game's lock is held only to read the position
        (the answer is computed on a copy of the game, outside it); an answer is kept per position and seat
        (the same question is answered once: the sampled deals come from the game and the decision);
        ApiError 429 when a hint is being computed for the seat or its budget is spent
        (:class:`smear_env.play.hints.TableHints`). Hint agents are built once per rule set, or per seat
        of a game when one is a process (a ``cmd:`` bot sees one seat only)."""
        from .hints import Hinter, HintRefused, runs_a_process

        with table.lock:
            if table.session.to_act() != seat:
                raise ApiError(409, "it is not your turn")
            key = (table.hand_no, len(table.log), table.session.game.hand_number, seat)
            out = table.hints.cached(key)
            if out is not None:
                return out
            try:
                table.hints.begin(seat)
            except HintRefused as e:
                raise ApiError(429, str(e)) from None
            game = table.session.game.copy()
            rules = table.session.rules
            rng = np.random.default_rng([table.hint_seed, len(table.log), seat])
        out = None
        try:
            if any(runs_a_process(h) for h in self.hints):
                try:
                    hinter, lock = table.hints.hinter(seat, lambda: Hinter(self.hints, rules))
                except HintRefused as e:
                    raise ApiError(409, str(e)) from None
            else:
                hinter, lock = self._shared_hinter(rules)
            with lock:
                out = hinter.hint(game, seat, rng)
            for a in out["agents"]:
                a["agent"] = self.name_of(hinter.specs[hinter.names.index(a["agent"])])
            return out
        finally:
            table.hints.end(seat, key, out)

    def _shared_hinter(self, rules: SmearRules) -> tuple[Any, threading.Lock]:
        from .hints import Hinter

        with self.lock:
            entry = self._hinters.get(rules)
            if entry is not None:
                self._hinters.move_to_end(rules)
        if entry is None:
            entry = (Hinter(self.hints, rules), threading.Lock())
            with self.lock:
                self._hinters[rules] = entry
                drop = []
                while len(self._hinters) > MAX_HINTERS:
                    drop.append(self._hinters.popitem(last=False)[1][0])
            for h in drop:
                h.close()
        return entry

    # ------------------------------------------------------------------ replays
    def checkpoint_agent(self, name: str, rules: SmearRules) -> Any:
        """A checkpoint agent for replays, only for checkpoints this server offers and only under the rules
        it plays (else None: no probabilities)."""
        spec = self.specs.get(name)
        if spec is None or not is_checkpoint(spec) or why_not(spec, rules) is not None:
            return None
        try:
            return self.make_agent(spec, rules)
        except Exception:  # pragma: no cover - why_not said it plays these rules
            return None


def scrub(text: str, server: Server | None = None) -> str:
    """``text`` without server paths: agent specs become their names, this folder and home are dropped."""
    import os

    if server is not None:
        for k, spec in sorted(server.specs.items(), key=lambda kv: -len(kv[1])):
            if spec != k:
                text = text.replace(spec, k)
    for root in sorted({os.getcwd(), str(Path(__file__).resolve().parents[2]), os.path.expanduser("~")},
                       key=len, reverse=True):
        if len(root) > 1:
            text = text.replace(root + os.sep, "").replace(root, ".")
    return text


def parse_move(body: Any, legal: Sequence[int], game: Any = None) -> int:
    """The action of a move request ``{"action": <id>|"<name>"}``; ApiError naming the legal ones (and, with
    ``game``, why the move is illegal)."""
    names = [{"id": a, "name": action_name(a)} for a in legal]
    if not isinstance(body, dict) or "action" not in body or len(body) != 1:
        raise ApiError(400, "a move is a JSON object {\"action\": <id or name>}", legal_actions=names)
    a = body["action"]
    if isinstance(a, str):
        try:
            a = parse_action(a.strip())
        except ValueError as e:
            raise ApiError(400, str(e), legal_actions=names) from None
    if isinstance(a, bool) or not isinstance(a, int):
        raise ApiError(400, f"action must be an action id or name, not {a!r}", legal_actions=names)
    if a not in legal:
        legal_text = ", ".join(f"{x['id']} ({x['name']})" for x in names) or "none (not your turn)"
        why = why_illegal(game, a) if game is not None and legal and 0 <= a < 72 else None
        raise ApiError(409 if not legal else 422,
                       f"action {a} ({action_name(a) if 0 <= a < 72 else 'no such action'}) is not legal now"
                       + (f": {why}" if why else "") + f"; legal actions: {legal_text}",
                       legal_actions=names, why=why)
    return a


# ============================================================================ replay frames
def replay_frames(record: dict[str, Any], server: Server | None = None, hand_from: int = 0,
                  max_hands: int = MAX_REPLAY_HANDS, validated: bool = False) -> dict[str, Any]:
    """The decisions of hands ``hand_from .. hand_from + max_hands - 1`` of a smear-record/1 game with all
    hands face up: a list of frames, one per state (the deal of each hand, then after each action), and a
    score line for every hand (with the cards and players that won each point). For players that are
    checkpoints this server offers, each of their decisions carries the action probabilities. The record is
    first replayed whole to validate it, unless ``validated`` says that was done."""
    from ..actions import bid_action, discard_action, play_action, trump_action
    from ..cards import SUIT_CHARS, cards_of, parse_card
    from ..game import Game
    from ..record import replay
    from .hints import probabilities_at

    if not validated:
        replay(record)  # validates: raises RecordMismatchError naming the hand and field
    rules = SmearRules.from_dict(record["rules"])
    players = [str(p) for p in record.get("players") or ["seat 0", "seat 1", "seat 2", "seat 3"]]
    agents = [server.checkpoint_agent(p, rules) if server is not None else None for p in players]
    n_hands = len(record["hands"])
    if not 0 <= hand_from < max(n_hands, 1):
        raise ValueError(f"hand_from {hand_from} is out of range: the record has {n_hands} hand(s)")
    window = range(hand_from, min(n_hands, hand_from + max_hands))
    frames: list[dict[str, Any]] = []
    hands_summary = []
    game: Game | None = None

    def frame(g: Game, i: int, actor: int | None, action: int | None, probs: Any, winner: Any) -> None:
        names = [_names(cards_of(g.hands[s])) for s in range(4)]
        f: dict[str, Any] = {
            "hand": i, "dealer": g.dealer, "phase": _phase(g), "hands": names,
            "bids": [None] * 4, "bidder": g.bidder if g.phase > 0 else None, "contract": g.contract,
            "trump": SUIT_CHARS[g.trump] if g.trump >= 0 else None, "kitty": _names(g.kitty),
            "discards": _names(g.discards), "scores": list(g.scores), "to_act": g.current_player,
            "trick": [{"seat": s, "card": c} for s, c in zip(g.trick_seats, _names(g.trick), strict=True)],
            "tricks_won": [sum(1 for t in g.tricks if t[3] % 2 == team) for team in (0, 1)],
        }
        for s, b in g.bids:
            f["bids"][s] = "pass" if b == 0 else b
        if actor is not None:
            f["actor"] = actor
            f["action"] = action_name(action) if action is not None else None
        if winner is not None:
            _, seats, cards, w = g.tricks[-1]
            f["last_trick"] = {"plays": [{"seat": s, "card": c} for s, c in zip(seats, _names(cards),
                                                                               strict=True)], "winner": w}
        if probs is not None:
            f["probabilities"] = [{"name": action_name(a), "p": round(p, 4)}
                                  for a, p in sorted(probs.items(), key=lambda kv: -kv[1])]
        if g.phase >= 4 and not g.hand_thrown_in and g.hand_result is not None:
            f["hand_result"] = g.hand_result
            f["hand_end"] = point_details(g)
        if g.hand_thrown_in:
            f["thrown_in"] = True
        frames.append(f)

    for i, h in enumerate(record["hands"]):
        if i >= window.stop:
            break
        if game is None:
            game = Game.from_deal(h["deal"], h["stock"], h["dealer"], rules)
        else:
            game.start_next_hand(deal=(h["deal"], h["stock"]))
        shown = i in window
        if shown:
            frame(game, i, None, None, None, None)
        actions = [bid_action(0 if b["bid"] == "pass" else b["bid"]) for b in h["bids"]]
        if "trump" in h and rules.kitty_size:
            actions.append(trump_action(SUIT_CHARS.index(h["trump"])))
            actions += [discard_action(parse_card(c)) for c in h.get("discards", [])]
        plays = [p for t in h.get("tricks", []) for p in t["plays"]] + list(h.get("current_trick", []))
        actions += [play_action(parse_card(p["card"])) for p in plays]
        for a in actions:
            actor = game.current_player
            agent = agents[actor] if actor is not None and shown else None
            probs = probabilities_at(agent, game, actor) if agent is not None else None
            n = len(game.tricks)
            game.apply(a)
            if shown:
                frame(game, i, actor, a, probs, True if len(game.tricks) > n else None)
        summary = {
            "hand": i, "dealer": h["dealer"], "bidder": h.get("bidder"), "contract": h.get("contract"),
            "trump": h.get("trump"), "thrown_in": bool(h.get("thrown_in")), "points": h.get("points"),
            "score_change": h.get("score_change"), "scores": h.get("scores"),
            "made_contract": h.get("made_contract"), "incomplete": bool(h.get("incomplete")),
        }
        if shown:
            summary["hand_end"] = point_details(game)
        hands_summary.append(summary)
    for h in record["hands"][len(hands_summary):]:  # the score lines of the hands after the window
        hands_summary.append({
            "hand": len(hands_summary), "dealer": h["dealer"], "bidder": h.get("bidder"),
            "contract": h.get("contract"), "trump": h.get("trump"), "thrown_in": bool(h.get("thrown_in")),
            "points": h.get("points"), "score_change": h.get("score_change"), "scores": h.get("scores"),
            "made_contract": h.get("made_contract"), "incomplete": bool(h.get("incomplete")),
        })
    return {"players": players, "rules": record["rules"], "final_scores": record["final_scores"],
            "winner": record["winner"], "frames": frames, "hands": hands_summary,
            "hand_from": window.start, "hand_to": window.stop, "hands_total": n_hands,
            "probabilities_for": [p for p, a in zip(players, agents, strict=True) if a is not None]}


def _names(cards: Sequence[int]) -> list[str]:
    from ..cards import CARD_NAMES

    return [CARD_NAMES[c] for c in cards]


def _phase(g: Any) -> str:
    from ..game import Phase

    return Phase(g.phase).name


class NotJsonError(ApiError):
    """A text is not (strict) JSON: a 400."""


def parse_json_text(text: str, what: str = "the request body") -> Any:
    """Strict JSON (:func:`smear_env.jsonsafe.loads_strict`: no repeated key, no NaN, no integer of more
    digits than Python converts) with a nesting bound (``MAX_JSON_DEPTH``, checked first, in time linear in
    the text: json recurses); NotJsonError (400) naming ``what`` otherwise."""
    from ..jsonsafe import JsonError, json_depth, loads_strict

    if json_depth(text) > MAX_JSON_DEPTH:
        raise ApiError(400, f"{what} is JSON nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        return loads_strict(text)
    except JsonError as e:
        raise NotJsonError(400, f"{what} is not JSON: {e}") from None


def parse_upload(text: str, index: int) -> dict[str, Any]:
    """One record of an uploaded file: a JSON record, a JSON array of records, or JSON lines."""
    text = text.strip()
    if not text:
        raise ApiError(400, "the file is empty")
    try:
        doc = parse_json_text(text, "the file")
        recs = doc if isinstance(doc, list) else [doc]
    except NotJsonError as whole:
        lines = text.splitlines()
        if len(lines) < 2:
            raise ApiError(400, f"{whole}: not a smear-record/1 file") from None
        recs = []
        for n, line in enumerate(lines, 1):
            if line.strip():
                try:
                    recs.append(parse_json_text(line, f"line {n}"))
                except NotJsonError as e:
                    raise ApiError(400, f"{e}: not a smear-record/1 file") from None
    if not 0 <= index < len(recs):
        raise ApiError(400, f"record index {index} is out of range: the file holds {len(recs)} record(s)")
    rec = recs[index]
    from ..record import RecordValidationError, validate_record

    hands = rec.get("hands") if isinstance(rec, dict) else None
    if isinstance(hands, list) and len(hands) > MAX_RECORD_HANDS:
        raise ApiError(413, f"the record holds {len(hands)} hands; an uploaded record may hold at most "
                            f"{MAX_RECORD_HANDS}")

    try:
        validate_record(rec)
    except RecordValidationError as e:
        raise ApiError(400, str(e)) from None
    return rec


# ============================================================================ replay worker
REPLAYS_VALIDATED_KEPT = 8
"""Validated records the replay worker keeps, by their bytes' digest (paging through a record with
``?hand_from=`` validates it once)."""
_replay_server: Server | None = None
_replays_validated: OrderedDict[tuple[bytes, int], Any] = OrderedDict()


def start_replay_worker(agents: Sequence[str]) -> None:  # pragma: no cover - runs in the worker process
    """The replay worker's setup: a lower scheduling priority than the server's (on a busy machine the
    server's own requests come first) and a server offering the same agents (for the checkpoints'
    probabilities)."""
    import os

    global _replay_server
    try:
        os.nice(10)
    except OSError:
        pass
    _replay_server = Server(agents, hints=[])


def replay_job(kind: str, payload: Any, index: int, hand_from: int, view_seat: Any,
               server: Server | None = None) -> tuple[int, bytes]:
    """One replay job, as (HTTP status, JSON body): ``kind`` "upload" (``payload`` the uploaded bytes,
    ``index`` the record of the file) or "game" (``payload`` a record the server made). Runs in the worker
    (``server`` None: the worker's server, which offers the same agents) or, for tests, anywhere."""
    import hashlib

    server = server if server is not None else _replay_server
    try:
        if kind == "upload":
            key = (hashlib.sha256(payload).digest(), index)
            rec = _replays_validated.get(key)
            if rec is None:
                try:
                    text = payload.decode("utf-8")
                except UnicodeDecodeError:
                    raise ApiError(400, "the file is not UTF-8 text: not a smear-record/1 file") from None
                rec = parse_upload(text, index)
                out = _upload_frames(rec, server, hand_from, validated=False)
                _replays_validated[key] = rec
                while len(_replays_validated) > REPLAYS_VALIDATED_KEPT:
                    _replays_validated.popitem(last=False)
            else:
                _replays_validated.move_to_end(key)
                out = _upload_frames(rec, server, hand_from, validated=True)
        else:
            try:
                out = replay_frames(payload, server, hand_from)
            except ValueError as e:
                raise ApiError(400, str(e)) from None
            out["view_seat"] = view_seat
        return 200, json.dumps(out).encode()
    except ApiError as e:
        return e.status, json.dumps(e.body).encode()
    except Exception as e:  # a bug: say so without a traceback or a server path
        return 500, json.dumps({"error": f"internal error ({type(e).__name__}): {scrub(str(e), server)}"}
                               ).encode()


def _upload_frames(rec: Any, server: Server | None, hand_from: int, validated: bool) -> dict[str, Any]:
    from ..config import RuleOptionError
    from ..game import IllegalActionError
    from ..record import RecordMismatchError

    try:
        return replay_frames(rec, server, hand_from, validated=validated)
    except (RecordMismatchError, RuleOptionError, IllegalActionError, ValueError) as e:
        raise ApiError(400, f"the record does not replay: {e}") from None


# ============================================================================ the app
def create_app(agents: Sequence[str] | None = None, hints: Sequence[str] | None = None,
               max_games: int = MAX_GAMES, max_hands: int = DEFAULT_MAX_HANDS,
               idle_ttl: float = IDLE_TTL, reap_every: float | None = None) -> Any:
    """The Starlette app (``app.state.server`` holds the games). While it runs (its lifespan), a thread
    reaps games idle for ``idle_ttl`` seconds every ``reap_every`` seconds (default: a tenth of the TTL,
    between 1 s and 60 s)."""
    from contextlib import asynccontextmanager

    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import FileResponse, JSONResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    if agents is None:
        agents = default_agents()
    server = Server(agents, hints, max_games=max_games, max_hands=max_hands, idle_ttl=idle_ttl)
    every = reap_every if reap_every is not None else min(60.0, max(1.0, idle_ttl / 10))

    def ok(body: Any, status: int = 200) -> JSONResponse:
        return JSONResponse(body, status_code=status, headers={"Cache-Control": "no-store"})

    def parse_json(raw: bytes) -> Any:
        if not raw.strip():
            return {}
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ApiError(400, f"the request body is not JSON: not UTF-8 text (byte {e.start})") from None
        return parse_json_text(text)

    async def read_body(request: Request, types: Sequence[str], limit: int = MAX_BODY) -> bytes:
        """The body, read as a stream and refused (413) as soon as it passes ``limit`` bytes; a body of
        another media type than ``types`` is refused (415)."""
        too_big = f"the request is larger than {limit >> 10} KiB" if limit < 1 << 20 else \
            f"the request is larger than {limit >> 20} MiB"
        cl = request.headers.get("content-length")
        if cl is not None:
            cl = cl.strip()
            if not (cl.isascii() and cl.isdigit()):
                raise ApiError(400, f"Content-Length {short_repr(cl, 40)} is not a number")
            if len(cl) > 12 or int(cl) > limit:
                raise ApiError(413, too_big)
        if request.method in ("GET", "HEAD"):
            return b""
        buf = bytearray()
        async for chunk in request.stream():
            buf += chunk
            if len(buf) > limit:
                raise ApiError(413, too_big)
        if buf.strip():
            ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
            if ctype not in types:
                raise ApiError(415, f"Content-Type {ctype or '(none)'!r} is not accepted here; send "
                                    f"{' or '.join(types[:3])}")
        return bytes(buf)

    def handle(fn: Any, status: int = 200, types: Sequence[str] = JSON_TYPES, limit: int = MAX_BODY) -> Any:
        """An endpoint running ``fn(request, raw_body)`` in the thread pool (agents may think a while; a
        game's lock is only ever taken there), turning ApiError into its JSON answer; an unexpected error
        is a JSON 500 naming only its type (no traceback, no path)."""
        from starlette.concurrency import run_in_threadpool

        async def endpoint(request: Request) -> Any:
            try:
                raw = await read_body(request, types, limit)
                out = await run_in_threadpool(fn, request, raw)
                return out if isinstance(out, Response) else ok(out, status)
            except ApiError as e:
                resp = ok(e.body, e.status)
                if e.status == 413:  # the rest of the body is not read: end the connection
                    resp.headers["Connection"] = "close"
                return resp
            except Exception as e:  # a bug: say so without a traceback or a server path
                return ok({"error": f"internal error ({type(e).__name__}): {scrub(str(e), server)}"}, 500)
        return endpoint

    def since_of(request: Request, table: Table) -> int | None:
        return query_int(request, "since", len(table.log), what=" (the log's length)")

    def config(request: Request, raw: bytes) -> Any:
        import dataclasses

        rules = {}
        for f in dataclasses.fields(SmearRules):
            choices = f.metadata.get("choices")
            rules[f.name] = {"default": f.default, "type": type(f.default).__name__,
                             "rule": f.metadata.get("rule"), "choices": list(choices) if choices else None}
        return {"rules": rules, "idle_ttl": server.idle_ttl, **server.options(SmearRules())}

    def agents_for(request: Request, raw: bytes) -> Any:
        body = parse_json(raw)
        if not isinstance(body, dict) or set(body) - {"rules"}:
            raise ApiError(400, 'the body must be {"rules": {...}}')
        rules_in = body.get("rules")
        if rules_in is not None and not isinstance(rules_in, dict):
            raise ApiError(400, f"rules must be an object of rule options (or null for the defaults), not "
                                f"{short_repr(rules_in, 40)}")
        try:
            rules = SmearRules.from_dict(rules_in or {})
        except (RuleOptionError, TypeError, ValueError) as e:
            raise ApiError(400, str(e)) from None
        return server.options(rules)

    def new_game(request: Request, raw: bytes) -> Any:
        token, table = server.new_game(parse_json(raw))
        with table.lock:
            table.record_events(table.session.advance())
            seat = server.links[token][1]
            return {"game_id": token, "links": table.links(), **table.state(seat, 0)}

    def chat_of(request: Request) -> int | None:
        text = request.query_params.get("chat")
        if text is None:
            return None
        if not (text.isascii() and text.isdigit() and len(text) <= 12):
            raise ApiError(400, f"chat must be a non-negative integer (a message number), not {text[:40]!r}")
        return int(text)

    def get_game(request: Request, raw: bytes) -> Any:
        table, seat = server.link(request.path_params["game_id"])
        chat_from = chat_of(request)
        with table.lock:
            return table.state(seat, since_of(request, table), chat_from)

    def human_seat(table: Table, seat: int | None) -> int:
        """The seat of a link that may act: not a spectator's, not one whose person left (it only watches)."""
        if seat is None:
            raise ApiError(403, "this is a spectator link: it can watch, not play", legal_actions=[])
        if seat in table.left:
            raise ApiError(403, f"you left seat {seat + 1}: an agent plays it now and this link only watches",
                           legal_actions=[])
        return seat

    def game_over(table: Table) -> ApiError:
        return ApiError(409, f"the game is over: {table.session.ended}" if table.session.ended
                        else "the game is over", legal_actions=[])

    def act(request: Request, raw: bytes) -> Any:
        table, seat = server.link(request.path_params["game_id"])
        with table.lock:
            seat = human_seat(table, seat)
            since = since_of(request, table)
            before = len(table.log)
            s = table.session
            if s.over:
                raise game_over(table)
            if s.hand_over:
                raise ApiError(409, "the hand is over: POST .../next deals the next one", legal_actions=[])
            legal = s.game.legal_actions() if s.to_act() == seat else ()
            try:
                body = parse_json(raw)
            except ApiError as e:
                raise ApiError(400, e.body["error"],
                               legal_actions=[{"id": a, "name": action_name(a)} for a in legal]) from None
            action = parse_move(body, legal, s.game)
            table.record_events(s.act(seat, action))
            return table.state(seat, before if since is None else since)

    def next_hand(request: Request, raw: bytes) -> Any:
        table, seat = server.link(request.path_params["game_id"])
        with table.lock:
            seat = human_seat(table, seat)
            since = since_of(request, table)
            before = len(table.log)
            if table.session.over:
                raise game_over(table)
            try:
                events = table.session.next_hand()
            except IllegalActionError as e:
                raise ApiError(409, str(e)) from None
            table.record_events(events, new_hand=True)
            return table.state(seat, before if since is None else since)

    def hint(request: Request, raw: bytes) -> Any:
        table, seat = server.link(request.path_params["game_id"])
        seat = human_seat(table, seat)
        try:
            return server.hint(table, seat)  # takes the game's lock only to read the position
        except ApiError:
            raise
        except Exception as e:  # a failing hint agent (e.g. a bot): say so, the game goes on
            raise ApiError(503, f"the hint agents could not answer: {scrub(str(e), server)}") from None

    def leave(request: Request, raw: bytes) -> Any:
        table, seat = server.link(request.path_params["game_id"])
        body = parse_json(raw)
        if not isinstance(body, dict) or set(body) - {"agent"}:
            raise ApiError(400, 'the body must be {} or {"agent": "<agent>"}')
        with table.lock:
            if seat is not None and seat in table.left:
                raise ApiError(409, f"seat {seat + 1} is already played by an agent: you left it")
            seat = human_seat(table, seat)
            s = table.session
            if seat not in s.humans:
                raise ApiError(409, f"seat {seat} is already played by an agent")
            if s.over:
                raise game_over(table)
            if len(s.humans) == 1:
                raise ApiError(409, "you are the last person at this table: end the game instead")
            spec = server._spec("agent", body.get("agent"), s.rules, server.default_spec(s.rules))
            agent = server.make_agent(spec, s.rules)
            since = since_of(request, table)
            before = len(table.log)
            rng = np.random.default_rng(None if s.seed is None else [s.seed, 7, seat])
            table.left.append(seat)
            table.end_votes.discard(seat)
            table.record_events(s.take_over(seat, agent, rng))
            s.names[seat] = server.name_of(spec)
            table.end_if_agreed()  # the people still seated may all have asked to end
            return table.state(seat, before if since is None else since)

    def resign(request: Request, raw: bytes) -> Any:
        """Ask to end the game (``{"agree": true}``, the default; ``false`` withdraws every request): it ends
        once every seated person asked, so a person alone ends it at once."""
        table, seat = server.link(request.path_params["game_id"])
        body = parse_json(raw)
        agree = body.get("agree", True) if isinstance(body, dict) else None
        if not isinstance(body, dict) or set(body) - {"agree"} or not isinstance(agree, bool):
            raise ApiError(400, 'the body must be {}, {"agree": true} (end the game) or {"agree": false} '
                                '(keep playing)')
        with table.lock:
            seat = human_seat(table, seat)
            since = since_of(request, table)
            if not table.session.over:
                if body.get("agree", True):
                    table.end_votes.add(seat)
                    table.end_if_agreed()
                else:
                    table.end_votes.clear()
            return table.state(seat, len(table.log) if since is None else since)

    def set_name(request: Request, raw: bytes) -> Any:
        """``{"name"}``: the name this seat's person goes by at the table (and in the game's record)."""
        table, seat = server.link(request.path_params["game_id"])
        body = parse_json(raw)
        if not isinstance(body, dict) or set(body) != {"name"}:
            raise ApiError(400, 'the body must be {"name": "<your name>"}')
        name = server.player_name(body["name"])
        with table.lock:
            seat = human_seat(table, seat)
            table.named[seat] = name
            table.session.names[seat] = name
            return table.state(seat, len(table.log))

    def chat(request: Request, raw: bytes) -> Any:
        """``{"text"}``: a chat message from this seat's person to the table (bounded, rate-limited; pages
        show it as text, never as markup)."""
        table, seat = server.link(request.path_params["game_id"])
        body = parse_json(raw)
        if not isinstance(body, dict) or set(body) != {"text"} or not isinstance(body["text"], str):
            raise ApiError(400, 'the body must be {"text": "<message>"}')
        text = " ".join(body["text"].split())
        if not 1 <= len(text) <= MAX_CHAT_TEXT:
            raise ApiError(400, f"a message has 1 to {MAX_CHAT_TEXT} characters, not {len(text)}")
        chat_from = chat_of(request)
        with table.lock:
            seat = human_seat(table, seat)
            now = time.monotonic()
            n, window = CHAT_BURST
            times = [t for t in table.chat_times.get(seat, []) if now - t < window]
            if len(times) >= n:
                raise ApiError(429, f"slow down: at most {n} messages in {window:g} seconds")
            table.chat_times[seat] = [*times, now]
            table.chat.append({"n": table.chat_count, "seat": seat, "name": table.who(seat),
                               "text": text})
            table.chat_count += 1
            del table.chat[:-MAX_CHAT_KEPT]
            return table.state(seat, len(table.log), chat_from)

    def finished(table: Table) -> dict[str, Any]:
        with table.lock:
            if not table.session.over:
                raise ApiError(409, "the record (every card) is available once the game is over; "
                                    "POST .../resign ends it now")
            return table.session.record()

    def record(request: Request, raw: bytes) -> Any:
        return finished(server.link(request.path_params["game_id"])[0])

    def hand_from_of(request: Request) -> int:
        return query_int(request, "hand_from", max(MAX_RECORD_HANDS, server.max_hands), 0,
                         " (a hand of the record)")

    def replayed(status: int, body: bytes) -> Response:
        return Response(body, status_code=status, media_type="application/json",
                        headers={"Cache-Control": "no-store"})

    def game_replay(request: Request, raw: bytes) -> Any:
        table, seat = server.link(request.path_params["game_id"])
        rec = finished(table)
        return replayed(*server.replays.run(replay_job, "game", rec, 0, hand_from_of(request), seat))

    def upload_replay(request: Request, raw: bytes) -> Any:
        index = query_int(request, "index", MAX_UPLOAD, 0, " (a record of the file)")
        return replayed(*server.replays.run(replay_job, "upload", raw, index, hand_from_of(request), None))

    async def page(request: Request) -> Any:
        name = "replay.html" if request.url.path.startswith("/replay") else "index.html"
        return FileResponse(STATIC / name, headers={"Cache-Control": "no-store"})

    routes = [
        Route("/", page),
        Route("/replay", page),
        Route("/api/config", handle(config)),
        Route("/api/agents", handle(agents_for), methods=["POST"]),
        Route("/api/games", handle(new_game, 201), methods=["POST"]),
        Route("/api/games/{game_id}", handle(get_game)),
        Route("/api/games/{game_id}/actions", handle(act), methods=["POST"]),
        Route("/api/games/{game_id}/next", handle(next_hand), methods=["POST"]),
        Route("/api/games/{game_id}/hint", handle(hint)),
        Route("/api/games/{game_id}/leave", handle(leave), methods=["POST"]),
        Route("/api/games/{game_id}/resign", handle(resign), methods=["POST"]),
        Route("/api/games/{game_id}/name", handle(set_name), methods=["POST"]),
        Route("/api/games/{game_id}/chat", handle(chat), methods=["POST"]),
        Route("/api/games/{game_id}/record", handle(record)),
        Route("/api/games/{game_id}/replay", handle(game_replay)),
        Route("/api/replay", handle(upload_replay, types=UPLOAD_TYPES, limit=MAX_UPLOAD), methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]

    async def not_found(request: Request, exc: Exception) -> Any:
        return ok({"error": f"no such page or API route: {request.method} {request.url.path}"}, 404)

    async def not_allowed(request: Request, exc: Exception) -> Any:
        return ok({"error": f"method {request.method} is not allowed on {request.url.path}"}, 405)

    @asynccontextmanager
    async def lifespan(app: Any) -> Any:
        stop = threading.Event()

        def reaper() -> None:
            while not stop.wait(every):
                try:
                    server.reap()
                except Exception:  # pragma: no cover - keep reaping
                    pass

        thread = threading.Thread(target=reaper, name="smear-serve reaper", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join(timeout=5)
            server.close()

    app = Starlette(routes=routes, exception_handlers={404: not_found, 405: not_allowed}, lifespan=lifespan)
    app.state.server = server
    return app


def default_agents() -> list[str]:
    """The shipped agent ``default`` (when its file is here), ``heuristic``, ``random``, ``pimc``."""
    from .cli import shipped_agent_path

    first = ["default"] if shipped_agent_path() is not None else []
    return list(dict.fromkeys([*first, "heuristic", "random", "pimc"]))


# ============================================================================ CLI
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
    ap.add_argument("--max-games", type=int, default=MAX_GAMES, help="games kept in memory (oldest go first)")
    ap.add_argument("--max-hands", type=int, default=DEFAULT_MAX_HANDS, help="hands per game at most (R21)")
    ap.add_argument("--idle-ttl", type=float, default=IDLE_TTL,
                    help=f"forget a game untouched this many seconds, closing its bots "
                         f"(default {IDLE_TTL:g})")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    agents = args.agent or default_agents()
    from ..agents.registry import make_agent

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
    import uvicorn

    app = create_app(agents, args.hint, max_games=args.max_games, max_hands=args.max_hands,
                     idle_ttl=args.idle_ttl)
    print(f"smear-serve: open http://{args.host}:{args.port}/ (replay viewer: /replay); Ctrl-C stops")
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


__all__ = ["MAX_BODY", "MAX_JSON_DEPTH", "MAX_RECORD_HANDS", "MAX_REPLAY_HANDS", "MAX_UPLOAD", "Server",
           "create_app", "main", "parse_json_text", "port_number", "query_int", "replay_frames", "replay_job",
           "spectator_view"]
