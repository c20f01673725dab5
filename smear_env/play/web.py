"""``smear-serve``: a local web table (play against agents in the browser) and a replay viewer.

A Starlette app served by uvicorn, bound to 127.0.0.1 by default; the page is plain HTML/CSS/JS from
``smear_env/play/static`` (no build step). The server keeps each game in memory under an unguessable id
(``secrets.token_urlsafe``); the person plays one seat of it, and every answer about a game holds only that
seat's view (:func:`smear_env.seat_view.seat_view_of`) and the public form of the actions since the
last answer. The full record (every card) is given only once the game is over.

API (JSON; errors are ``{"error": message}`` with a 4xx status, and a move error also lists
``legal_actions``; the game is then unchanged):

=======================================  ====================================================================
``GET  /api/config``                     agents this server offers, rule options and their defaults/choices
``POST /api/games``                      new game ``{"seat", "partner", "opponents", "rules", "seed"}``
``GET  /api/games/{id}``                 the game as the person's seat sees it
``POST /api/games/{id}/actions``         ``{"action": <id or name>}``: the person's move, then the agents'
``POST /api/games/{id}/next``            deal the next hand (after a hand is over)
``GET  /api/games/{id}/hint``            what the hint agents would do, with probabilities when they have them
``POST /api/games/{id}/resign``          end the game now (its record becomes available)
``GET  /api/games/{id}/record``          smear-record/1, once the game is over
``GET  /api/games/{id}/replay``          the replay frames of the game, once it is over
``POST /api/replay``                     the replay frames of an uploaded smear-record/1 file (``?index=k``)
=======================================  ====================================================================

Only the agents given to the server (``--agent``, default: the shipped agent, ``heuristic``, ``random``,
``pimc``) can be chosen from the page: a web request never names a program or a file to run.
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

from ..actions import action_name, parse_action
from ..config import RuleOptionError, SmearRules
from ..game import IllegalActionError
from .session import DEFAULT_MAX_HANDS, Session

STATIC = Path(__file__).parent / "static"
MAX_GAMES = 2000
IDLE_SECONDS = 6 * 3600
MAX_UPLOAD = 5 << 20


class ApiError(Exception):
    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.body = {"error": message, **extra}


class Table:
    """One game of the server: the session, the person's seat, a lock, the hint agents."""

    def __init__(self, session: Session, seat: int, hint_specs: Sequence[str]) -> None:
        self.session = session
        self.seat = seat
        self.lock = threading.Lock()
        self.touched = time.monotonic()
        self.hint_specs = list(hint_specs)
        self._hinter: Any = None

    def state(self, events: list[Any] | None = None) -> dict[str, Any]:
        """What the person's seat may see now, with the public form of ``events``."""
        s = self.session
        if s.over:
            s.close()  # bot processes end with the game
        return {
            "seat": self.seat,
            "players": s.names,
            "hand_number": s.game.hand_number + 1,
            "view": s.view(self.seat),
            "events": s.events_for(self.seat, events or []),
            "over": s.over,
            "truncated": s.truncated,
            "winner": s.game.winner,
            "error": s.error,
        }

    def hints(self) -> list[dict[str, Any]]:
        if self._hinter is None:
            from .hints import Hinter

            self._hinter = Hinter(self.hint_specs, self.session.rules)
        return self._hinter.hint(self.session.game, self.seat)


class Server:
    """The games of one server and what it offers (agents, hint agents, limits)."""

    def __init__(self, agents: Sequence[str], hints: Sequence[str] | None = None, max_games: int = MAX_GAMES,
                 max_hands: int = DEFAULT_MAX_HANDS) -> None:
        if not agents:
            raise ValueError("a server needs at least one agent spec")
        self.agents = list(dict.fromkeys(agents))
        self.hints = list(hints) if hints is not None else self.agents[:1]
        self.max_games = max_games
        self.max_hands = max_hands
        self.games: OrderedDict[str, Table] = OrderedDict()
        self.lock = threading.Lock()
        self._policies: dict[tuple[str, SmearRules], Any] = {}

    # ------------------------------------------------------------------ games
    def table(self, game_id: str) -> Table:
        with self.lock:
            t = self.games.get(game_id)
            if t is None:
                raise ApiError(404, f"no game {game_id!r} on this server (games live in memory and are "
                                    "forgotten when the server stops or after hours unused)")
            self.games.move_to_end(game_id)
            t.touched = time.monotonic()
            return t

    def _agent_spec(self, body: dict[str, Any], key: str, default: str) -> str:
        spec = body.get(key, default)
        if spec is None:
            spec = default
        if spec not in self.agents:
            raise ApiError(400, f"{key}: agent {spec!r} is not offered by this server; choose one of "
                                f"{self.agents}")
        return spec

    def new_game(self, body: Any) -> tuple[str, Table]:
        if not isinstance(body, dict):
            raise ApiError(400, 'the body must be a JSON object like {"seat": 0, "opponents": "heuristic"}')
        allowed = {"seat", "partner", "opponents", "left", "right", "rules", "seed"}
        unknown = sorted(set(body) - allowed)
        if unknown:
            raise ApiError(400, f"unknown field(s) {unknown}; allowed: {sorted(allowed)}")
        seat = body.get("seat", 0)
        if isinstance(seat, bool) or seat not in (0, 1, 2, 3):
            raise ApiError(400, f"seat must be 0, 1, 2 or 3, not {seat!r}")
        rules_in = body.get("rules", {}) or {}
        if not isinstance(rules_in, dict):
            raise ApiError(400, "rules must be an object of rule options")
        try:
            rules = SmearRules.from_dict(rules_in)
        except (RuleOptionError, TypeError) as e:
            raise ApiError(400, str(e)) from None
        seed = body.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ApiError(400, f"seed must be a non-negative integer or null, not {seed!r}")
        default = self.agents[0]
        specs: list[str | None] = [None] * 4
        specs[(seat + 2) % 4] = self._agent_spec(body, "partner", default)
        opp = self._agent_spec(body, "opponents", default)
        specs[(seat + 1) % 4] = self._agent_spec(body, "left", opp)
        specs[(seat + 3) % 4] = self._agent_spec(body, "right", opp)
        from ..agents.registry import make_agent

        try:
            agents = [None if s is None else make_agent(s, rules) for s in specs]
        except (ValueError, FileNotFoundError) as e:  # e.g. a checkpoint trained under other rules
            raise ApiError(400, str(e)) from None
        names = ["you" if s is None else s for s in specs]
        session = Session(agents, rules, seed=seed, max_hands=self.max_hands, names=names)
        table = Table(session, seat, self.hints)
        game_id = secrets.token_urlsafe(18)
        with self.lock:
            self._evict()
            self.games[game_id] = table
        return game_id, table

    def _evict(self) -> None:
        now = time.monotonic()
        while self.games:
            oldest_id, oldest = next(iter(self.games.items()))
            if len(self.games) >= self.max_games or now - oldest.touched > IDLE_SECONDS:
                del self.games[oldest_id]
                oldest.session.close()
            else:
                break

    # ------------------------------------------------------------------ replays
    def checkpoint_agent(self, spec: str, rules: SmearRules) -> Any:
        """A checkpoint agent for replays, only for checkpoints this server offers (cached)."""
        if spec not in self.agents or not spec.endswith(".safetensors"):
            return None
        key = (spec, rules)
        if key not in self._policies:
            from ..agents.registry import make_agent

            try:
                self._policies[key] = make_agent(spec, rules)
            except Exception:  # other rules than it was trained for: no probabilities
                self._policies[key] = None
        return self._policies[key]


def parse_move(body: Any, legal: Sequence[int]) -> int:
    """The action of a move request ``{"action": <id>|"<name>"}``; ApiError naming the legal ones."""
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
        raise ApiError(409 if not legal else 422,
                       f"action {a} ({action_name(a)}) is not legal now; legal actions: {legal_text}",
                       legal_actions=names)
    return a


# ============================================================================ replay frames
def replay_frames(record: dict[str, Any], server: Server | None = None) -> dict[str, Any]:
    """Every decision of a smear-record/1 game with all hands face up: a list of frames, one per state
    (the deal of each hand, then after each action), and a score line per hand. For players that are
    checkpoints this server offers, each of their decisions carries the action probabilities."""
    from ..actions import bid_action, discard_action, play_action, trump_action
    from ..cards import SUIT_CHARS, cards_of, parse_card
    from ..game import Game
    from ..record import replay
    from .hints import probabilities_at

    replay(record)  # validates: raises RecordMismatchError naming the hand and field
    rules = SmearRules.from_dict(record["rules"])
    players = record.get("players") or ["seat 0", "seat 1", "seat 2", "seat 3"]
    agents = [server.checkpoint_agent(p, rules) if server is not None else None for p in players]
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
        if g.hand_thrown_in:
            f["thrown_in"] = True
        frames.append(f)

    for i, h in enumerate(record["hands"]):
        if game is None:
            game = Game.from_deal(h["deal"], h["stock"], h["dealer"], rules)
        else:
            game.start_next_hand(deal=(h["deal"], h["stock"]))
        frame(game, i, None, None, None, None)
        actions = [bid_action(0 if b["bid"] == "pass" else b["bid"]) for b in h["bids"]]
        if "trump" in h and rules.kitty_size:
            actions.append(trump_action(SUIT_CHARS.index(h["trump"])))
            actions += [discard_action(parse_card(c)) for c in h.get("discards", [])]
        plays = [p for t in h.get("tricks", []) for p in t["plays"]] + list(h.get("current_trick", []))
        actions += [play_action(parse_card(p["card"])) for p in plays]
        for a in actions:
            actor = game.current_player
            agent = agents[actor] if actor is not None else None
            probs = probabilities_at(agent, game, actor) if agent is not None else None
            n = len(game.tricks)
            game.apply(a)
            frame(game, i, actor, a, probs, True if len(game.tricks) > n else None)
        hands_summary.append({
            "hand": i, "dealer": h["dealer"], "bidder": h.get("bidder"), "contract": h.get("contract"),
            "trump": h.get("trump"), "thrown_in": bool(h.get("thrown_in")), "points": h.get("points"),
            "score_change": h.get("score_change"), "scores": h.get("scores"),
            "made_contract": h.get("made_contract"), "incomplete": bool(h.get("incomplete")),
        })
    return {"players": players, "rules": record["rules"], "final_scores": record["final_scores"],
            "winner": record["winner"], "frames": frames, "hands": hands_summary,
            "probabilities_for": [p for p, a in zip(players, agents, strict=True) if a is not None]}


def _names(cards: Sequence[int]) -> list[str]:
    from ..cards import CARD_NAMES

    return [CARD_NAMES[c] for c in cards]


def _phase(g: Any) -> str:
    from ..game import Phase

    return Phase(g.phase).name


def parse_upload(text: str, index: int) -> dict[str, Any]:
    """One record of an uploaded file: a JSON record, a JSON array of records, or JSON lines."""
    text = text.strip()
    if not text:
        raise ApiError(400, "the file is empty")
    try:
        doc = json.loads(text)
        recs = doc if isinstance(doc, list) else [doc]
    except json.JSONDecodeError:
        recs = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    recs.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise ApiError(400, f"line {n} is not JSON ({e}): not a smear-record/1 file") from None
    if not 0 <= index < len(recs):
        raise ApiError(400, f"record index {index} is out of range: the file holds {len(recs)} record(s)")
    rec = recs[index]
    from ..record import RecordValidationError, validate_record

    try:
        validate_record(rec)
    except RecordValidationError as e:
        raise ApiError(400, str(e)) from None
    return rec


# ============================================================================ the app
def create_app(agents: Sequence[str] | None = None, hints: Sequence[str] | None = None,
               max_games: int = MAX_GAMES, max_hands: int = DEFAULT_MAX_HANDS) -> Any:
    """The Starlette app (``app.state.server`` holds the games)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import FileResponse, JSONResponse
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    if agents is None:
        agents = default_agents()
    server = Server(agents, hints, max_games=max_games, max_hands=max_hands)

    def ok(body: Any, status: int = 200) -> JSONResponse:
        return JSONResponse(body, status_code=status, headers={"Cache-Control": "no-store"})

    def parse_json(raw: bytes) -> Any:
        if not raw.strip():
            return {}
        try:
            return json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ApiError(400, f"the request body is not JSON: {e}") from None

    def handle(fn: Any, status: int = 200) -> Any:
        """An endpoint running ``fn(request, raw_body)`` in the thread pool (agents may think a while; a
        game's lock is only ever taken there), turning ApiError into its JSON answer."""
        from starlette.concurrency import run_in_threadpool

        async def endpoint(request: Request) -> Any:
            try:
                raw = await request.body()
                if len(raw) > MAX_UPLOAD:
                    raise ApiError(413, f"the request is larger than {MAX_UPLOAD >> 20} MiB")
                return ok(await run_in_threadpool(fn, request, raw), status)
            except ApiError as e:
                return ok(e.body, e.status)
        return endpoint

    def config(request: Request, raw: bytes) -> Any:
        import dataclasses

        rules = {}
        for f in dataclasses.fields(SmearRules):
            choices = f.metadata.get("choices")
            rules[f.name] = {"default": f.default, "type": type(f.default).__name__,
                             "rule": f.metadata.get("rule"), "choices": list(choices) if choices else None}
        return {"agents": server.agents, "hints": server.hints, "rules": rules}

    def new_game(request: Request, raw: bytes) -> Any:
        game_id, table = server.new_game(parse_json(raw))
        with table.lock:
            return {"game_id": game_id, **table.state(table.session.advance())}

    def get_game(request: Request, raw: bytes) -> Any:
        table = server.table(request.path_params["game_id"])
        with table.lock:
            return table.state()

    def act(request: Request, raw: bytes) -> Any:
        table = server.table(request.path_params["game_id"])
        with table.lock:
            s = table.session
            if s.over:
                raise ApiError(409, "the game is over", legal_actions=[])
            if s.hand_over:
                raise ApiError(409, "the hand is over: POST .../next deals the next one", legal_actions=[])
            legal = s.game.legal_actions() if s.to_act() == table.seat else ()
            try:
                body = parse_json(raw)
            except ApiError as e:
                raise ApiError(400, e.body["error"],
                               legal_actions=[{"id": a, "name": action_name(a)} for a in legal]) from None
            action = parse_move(body, legal)
            return table.state(s.act(table.seat, action))

    def next_hand(request: Request, raw: bytes) -> Any:
        table = server.table(request.path_params["game_id"])
        with table.lock:
            try:
                events = table.session.next_hand()
            except IllegalActionError as e:
                raise ApiError(409, str(e)) from None
            return table.state(events)

    def hint(request: Request, raw: bytes) -> Any:
        table = server.table(request.path_params["game_id"])
        with table.lock:
            if table.session.to_act() != table.seat:
                raise ApiError(409, "it is not your turn")
            return {"hints": table.hints()}

    def resign(request: Request, raw: bytes) -> Any:
        table = server.table(request.path_params["game_id"])
        with table.lock:
            s = table.session
            if not s.over:
                s.error = "resigned: the game was ended by the player"
            return table.state()

    def finished(table: Table) -> dict[str, Any]:
        with table.lock:
            if not table.session.over:
                raise ApiError(409, "the record (every card) is available once the game is over; "
                                    "POST .../resign ends it now")
            return table.session.record()

    def record(request: Request, raw: bytes) -> Any:
        return finished(server.table(request.path_params["game_id"]))

    def game_replay(request: Request, raw: bytes) -> Any:
        return replay_frames(finished(server.table(request.path_params["game_id"])), server)

    def upload_replay(request: Request, raw: bytes) -> Any:
        from ..record import RecordMismatchError

        try:
            index = int(request.query_params.get("index", "0"))
        except ValueError:
            raise ApiError(400, "index must be an integer") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ApiError(400, "the file is not UTF-8 text: not a smear-record/1 file") from None
        rec = parse_upload(text, index)
        try:
            return replay_frames(rec, server)
        except (RecordMismatchError, RuleOptionError, IllegalActionError, ValueError) as e:
            raise ApiError(400, f"the record does not replay: {e}") from None

    async def page(request: Request) -> Any:
        name = "replay.html" if request.url.path.startswith("/replay") else "index.html"
        return FileResponse(STATIC / name, headers={"Cache-Control": "no-store"})

    routes = [
        Route("/", page),
        Route("/replay", page),
        Route("/api/config", handle(config)),
        Route("/api/games", handle(new_game, 201), methods=["POST"]),
        Route("/api/games/{game_id}", handle(get_game)),
        Route("/api/games/{game_id}/actions", handle(act), methods=["POST"]),
        Route("/api/games/{game_id}/next", handle(next_hand), methods=["POST"]),
        Route("/api/games/{game_id}/hint", handle(hint)),
        Route("/api/games/{game_id}/resign", handle(resign), methods=["POST"]),
        Route("/api/games/{game_id}/record", handle(record)),
        Route("/api/games/{game_id}/replay", handle(game_replay)),
        Route("/api/replay", handle(upload_replay), methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]

    async def not_found(request: Request, exc: Exception) -> Any:
        return ok({"error": f"no such page or API route: {request.method} {request.url.path}"}, 404)

    async def not_allowed(request: Request, exc: Exception) -> Any:
        return ok({"error": f"method {request.method} is not allowed on {request.url.path}"}, 405)

    app = Starlette(routes=routes, exception_handlers={404: not_found, 405: not_allowed})
    app.state.server = server
    return app


def default_agents() -> list[str]:
    from .cli import default_agent_spec

    spec, _ = default_agent_spec(SmearRules())
    return list(dict.fromkeys([spec, "heuristic", "random", "pimc"]))


# ============================================================================ CLI
def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="smear-serve",
        description="A local web table: play Smear against agents in the browser, and replay recorded games "
                    "(smear-record/1) with every hand face up.",
    )
    ap.add_argument("--host", default="127.0.0.1",
                    help="address to bind (default 127.0.0.1: this machine only)")
    ap.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    ap.add_argument("--agent", action="append", metavar="SPEC",
                    help="an agent players may choose (repeatable; the first is the default opponent; "
                         "default: the shipped agent, heuristic, random, pimc). 'cmd:...' bots too.")
    ap.add_argument("--hint", action="append", metavar="SPEC",
                    help="agent asked by the Hint button (repeatable; default: the first --agent)")
    ap.add_argument("--max-games", type=int, default=MAX_GAMES, help="games kept in memory (oldest go first)")
    ap.add_argument("--max-hands", type=int, default=DEFAULT_MAX_HANDS, help="hands per game at most (R21)")
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
    import uvicorn

    app = create_app(agents, args.hint, max_games=args.max_games, max_hands=args.max_hands)
    print(f"smear-serve: open http://{args.host}:{args.port}/ (replay viewer: /replay); Ctrl-C stops")
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


__all__ = ["Server", "create_app", "main", "replay_frames"]
