"""The web table's Starlette app (:func:`create_app`): its routes, request bodies and limits."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import numpy as np
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ...core.actions import action_name, short_repr
from ...core.config import RuleOptionError, SmearRules
from ...engine.game import IllegalActionError
from ..cli import shipped_agent_path
from ..session import DEFAULT_MAX_HANDS
from .api import ApiError, parse_json_text, parse_move, query_int, scrub
from .games import HostedGame
from .replay import MAX_RECORD_HANDS
from .server import IDLE_TTL, MAX_GAMES_KEPT, Server, replay_job

STATIC = Path(__file__).parent.parent / "static"
MAX_UPLOAD = 5 << 20
"""Largest body of a record upload (``POST /api/replay``)."""
MAX_BODY = 128 << 10
"""Largest body of every other request (a move, a new game: a few hundred bytes)."""
MAX_CHAT_TEXT = 300
MAX_CHAT_KEPT = 100
"""Chat messages a game keeps (the oldest go first)."""
CHAT_BURST = (5, 10.0)
"""At most 5 chat messages per seat in 10 seconds (else 429)."""
JSON_TYPES = ("application/json",)
UPLOAD_TYPES = ("application/json", "text/plain", "application/x-ndjson", "application/jsonl",
                "application/jsonlines", "application/octet-stream")


def create_app(agents: Sequence[str] | None = None, hints: Sequence[str] | None = None,
               max_games: int = MAX_GAMES_KEPT, max_hands: int = DEFAULT_MAX_HANDS,
               idle_ttl: float = IDLE_TTL, reap_every: float | None = None) -> Any:
    """The Starlette app (``app.state.server`` holds the games). While it runs (its lifespan), a thread
    reaps games idle for ``idle_ttl`` seconds every ``reap_every`` seconds (default: a tenth of the TTL,
    between 1 s and 60 s)."""
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

    def since_of(request: Request, table: HostedGame) -> int | None:
        return query_int(request, "since", len(table.log), what=" (the log's length)")

    def config(request: Request, raw: bytes) -> Any:
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

    def human_seat(table: HostedGame, seat: int | None) -> int:
        """The seat of a link that may act: not a spectator's, not one whose person left (it only watches)."""
        if seat is None:
            raise ApiError(403, "this is a spectator link: it can watch, not play", legal_actions=[])
        if seat in table.left:
            raise ApiError(403, f"you left seat {seat + 1}: an agent plays it now and this link only watches",
                           legal_actions=[])
        return seat

    def game_over(table: HostedGame) -> ApiError:
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
            spec = server.checked_spec("agent", body.get("agent"), s.rules, server.default_spec(s.rules))
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

    def finished(table: HostedGame) -> dict[str, Any]:
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
    first = ["default"] if shipped_agent_path() is not None else []
    return list(dict.fromkeys([*first, "heuristic", "random", "pimc"]))
