"""``smear-serve``: a local web table (people and agents at one table, in the browser) and a replay viewer.

A Starlette app served by uvicorn, bound to 127.0.0.1 by default; the page is plain HTML/CSS/JS from
``smear_env/play/static`` (no build step). The server keeps each game in memory. A game has 1 to 4 people
("human seats"); creating it returns one private link per human seat and one spectator link, each an
unguessable token (``secrets.token_urlsafe``). A seat's link answers with only that seat's view
(:func:`smear_env.engine.seat_view.seat_view_of`) and the public form of every action (the game's log, kept on
the server: a page that reloads gets its history back); a spectator link answers with what has been played
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

The package's modules: :mod:`~smear_env.play.web.routes` (the app and its routes, request limits),
:mod:`~smear_env.play.web.server` (the games a server holds, its agents and hints, the replay worker's jobs),
:mod:`~smear_env.play.web.games` (one game: seats, links, log, chat), :mod:`~smear_env.play.web.replay`
(replay frames, record uploads), :mod:`~smear_env.play.web.api` (errors, JSON bodies, query numbers, moves)
and :mod:`~smear_env.play.web.cli` (``smear-serve``).
"""

from __future__ import annotations

from .api import MAX_JSON_DEPTH, ApiError, NotJsonError, parse_json_text, parse_move, query_int, scrub
from .cli import build_parser, main, port_number
from .games import HostedGame, spectator_view
from .replay import MAX_RECORD_HANDS, MAX_REPLAY_HANDS, parse_upload, replay_frames
from .routes import MAX_BODY, MAX_UPLOAD, create_app, default_agents
from .server import IDLE_TTL, MAX_GAMES_KEPT, Server, replay_job

__all__ = ["IDLE_TTL", "MAX_BODY", "MAX_GAMES_KEPT", "MAX_JSON_DEPTH", "MAX_RECORD_HANDS", "MAX_REPLAY_HANDS",
           "MAX_UPLOAD", "ApiError", "HostedGame", "NotJsonError", "Server", "build_parser", "create_app",
           "default_agents", "main", "parse_json_text", "parse_move", "parse_upload", "port_number",
           "query_int", "replay_frames", "replay_job", "scrub", "spectator_view"]
