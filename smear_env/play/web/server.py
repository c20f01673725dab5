"""The web table's server state (:class:`Server`): the games it holds and their links, the agents and hint
agents it offers, its limits; and the replay worker's jobs (:func:`replay_job`)."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
import unicodedata
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...agents.checkpoint import CheckpointAgent
from ...agents.registry import make_agent
from ...core.actions import short_repr
from ...core.config import RuleOptionError, SmearRules
from ..choices import FALLBACK, agent_options, display_name, hint_specs, is_checkpoint, why_not
from ..hints import Hinter, HintRefused, runs_a_process
from ..replay_pool import ReplayPool
from ..session import DEFAULT_MAX_HANDS, Session
from .api import ApiError, int_field, scrub
from .games import HostedGame
from .replay import parse_upload, replay_frames, upload_frames

MAX_GAMES_KEPT = 2000
"""Games a server keeps in memory (``--max-games``; the least recently used go first)."""
IDLE_TTL = 2 * 3600.0
MAX_HINTERS = 16
MAX_NAME = 20
"""Characters in a player's name at most."""


class Server:
    """The games of one server and what it offers (agents, hint agents, limits)."""

    def __init__(self, agents: Sequence[str], hints: Sequence[str] | None = None,
                 max_games: int = MAX_GAMES_KEPT, max_hands: int = DEFAULT_MAX_HANDS,
                 idle_ttl: float = IDLE_TTL) -> None:
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
        self.tables: OrderedDict[int, HostedGame] = OrderedDict()
        self.links: dict[str, tuple[HostedGame, int | None]] = {}
        self.lock = threading.Lock()
        self._policies: dict[str, Any] = {}
        self._hinters: OrderedDict[SmearRules, tuple[Any, threading.Lock]] = OrderedDict()
        self.reaped = 0
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

    def checked_spec(self, key: str, value: Any, rules: SmearRules, default: str) -> str:
        """The spec of the agent a request names for ``key`` (``default`` when None); ApiError (400) when
        this server does not offer it or it does not play ``rules``."""
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
        if is_checkpoint(spec):
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
    def link(self, token: str) -> tuple[HostedGame, int | None]:
        with self.lock:
            hit = self.links.get(token)
            if hit is None:
                raise ApiError(404, "no game for this link on this server (games live in memory: they are "
                                    "forgotten when the server stops or after a while unused)")
            table = hit[0]
            table.touched = time.monotonic()
            self.tables.move_to_end(id(table))
            return hit

    def new_game(self, body: Any) -> tuple[str, HostedGame]:
        if not isinstance(body, dict):
            raise ApiError(400, 'the body must be a JSON object like {"seat": 0, "opponents": "heuristic"}')
        allowed = {"seat", "humans", "partner", "opponents", "left", "right", "agents", "rules", "seed",
                   "names"}
        unknown = sorted(set(body) - allowed)
        if unknown:
            raise ApiError(400, f"unknown field(s) {unknown}; allowed: {sorted(allowed)}")
        humans_in = body.get("humans")
        if humans_in is None:
            seat = int_field(body, "seat", body.get("seat", 0), (0, 1, 2, 3))
            humans = [seat]
        else:
            if not isinstance(humans_in, list) or not 1 <= len(humans_in) <= 4:
                raise ApiError(400, f"humans must be a list of 1 to 4 distinct seats 0..3, not {humans_in!r}")
            humans = [int_field(body, "humans[]", h, (0, 1, 2, 3)) for h in humans_in]
            if len(set(humans)) != len(humans):
                raise ApiError(400, f"humans must be distinct seats, not {humans_in!r}")
            seat = int_field(body, "seat", body.get("seat", humans[0]), humans)
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
        opp = self.checked_spec("opponents", body.get("opponents"), rules, default)
        rel = {"partner": 2, "left": 1, "right": 3}
        for key, off in rel.items():
            s = (seat + off) % 4
            if s not in humans:
                specs[s] = self.checked_spec(key, body.get(key), rules, default if key == "partner" else opp)
            elif body.get(key) is not None:
                raise ApiError(400, f"{key}: seat {s} is a human seat")
        agents_in = body.get("agents") or {}
        if not isinstance(agents_in, dict):
            raise ApiError(400, 'agents must be an object {"<seat>": "<agent>"}')
        for k, v in agents_in.items():
            if k not in ("0", "1", "2", "3") or int(k) in humans:
                raise ApiError(400, f"agents: {k!r} is not an agent seat; agent seats: "
                                    f"{[str(s) for s in range(4) if s not in humans]}")
            specs[int(k)] = self.checked_spec(f"agents[{k}]", v, rules, default)
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
        table = HostedGame(session, specs, notes)
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
        if not isinstance(value, str):
            raise ApiError(400, f"a name must be a string of 1 to {MAX_NAME} characters, not {value!r}")
        name = " ".join(value.split())
        if not 1 <= len(name) <= MAX_NAME or any(unicodedata.category(ch)[0] == "C" for ch in name):
            raise ApiError(400, f"a name must be 1 to {MAX_NAME} printable characters, not {value[:40]!r}")
        if name in self.specs or name in (FALLBACK, "human"):
            raise ApiError(400, f"{name!r} is an agent's name here; choose another name")
        return name

    def _drop_locked(self, table: HostedGame) -> None:
        self.tables.pop(id(table), None)
        for t in table.tokens.values():
            self.links.pop(t, None)

    def _evict_locked(self) -> list[HostedGame]:
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
    def hint(self, table: HostedGame, seat: int) -> dict[str, Any]:
        """The hint for ``seat``'s decision in ``table``. The game's lock is held only to read the position
        (the answer is computed on a copy of the game, outside it); an answer is kept per position and seat
        (the same question is answered once: the sampled deals come from the game and the decision);
        ApiError 429 when a hint is being computed for the seat or its budget is spent
        (:class:`smear_env.play.hints.TableHints`). Hint agents are built once per rule set, or per seat
        of a game when one is a process (a ``cmd:`` bot sees one seat only)."""
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


REPLAYS_VALIDATED_KEPT = 8
"""Validated records the replay worker keeps, by their bytes' digest (paging through a record with
``?hand_from=`` validates it once)."""
_replay_server: Server | None = None
_replays_validated: OrderedDict[tuple[bytes, int], Any] = OrderedDict()


def start_replay_worker(agents: Sequence[str]) -> None:  # pragma: no cover - runs in the worker process
    """The replay worker's setup: a lower scheduling priority than the server's (on a busy machine the
    server's own requests come first) and a server offering the same agents (for the checkpoints'
    probabilities)."""
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
                out = upload_frames(rec, server, hand_from, validated=False)
                _replays_validated[key] = rec
                while len(_replays_validated) > REPLAYS_VALIDATED_KEPT:
                    _replays_validated.popitem(last=False)
            else:
                _replays_validated.move_to_end(key)
                out = upload_frames(rec, server, hand_from, validated=True)
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
