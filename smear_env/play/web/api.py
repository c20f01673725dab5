"""The web table's request side: errors as JSON answers (:class:`ApiError`), strict JSON bodies
(:func:`parse_json_text`), query numbers (:func:`query_int`), move requests (:func:`parse_move`) and error
texts without server paths (:func:`scrub`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...core.actions import action_name, parse_action, short_repr
from ...core.jsonsafe import JsonError, json_depth, loads_strict
from ..explain import why_illegal

MAX_JSON_DEPTH = 32


class ApiError(Exception):
    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.body = {"error": message, **extra}


class NotJsonError(ApiError):
    """A text is not (strict) JSON: a 400."""


def parse_json_text(text: str, what: str = "the request body") -> Any:
    """Strict JSON (:func:`smear_env.core.jsonsafe.loads_strict`: no repeated key, no NaN, no integer of more
    digits than Python converts) with a nesting bound (``MAX_JSON_DEPTH``, checked first, in time linear in
    the text: json recurses); NotJsonError (400) naming ``what`` otherwise."""
    if json_depth(text) > MAX_JSON_DEPTH:
        raise ApiError(400, f"{what} is JSON nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        return loads_strict(text)
    except JsonError as e:
        raise NotJsonError(400, f"{what} is not JSON: {e}") from None


def query_int(request: Any, key: str, high: int, default: int | None = None, what: str = "") -> int | None:
    """The query parameter ``key`` as an integer ``0..high`` (``default`` when absent); an ApiError (400)
    naming the parameter and its range for anything else (a sign, a space, ``²``, thousands of digits)."""
    text = request.query_params.get(key)
    if text is None:
        return default
    if not (text.isascii() and text.isdigit()) or len(text) > len(str(high)) or int(text) > high:
        raise ApiError(400, f"{key} must be an integer 0..{high}{what}, not {short_repr(text, 40)}")
    return int(text)


def int_field(body: dict[str, Any], key: str, value: Any, allowed: Sequence[int]) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value not in allowed:
        raise ApiError(400, f"{key} must be one of {list(allowed)} (an integer), not {value!r}")
    return value


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


def scrub(text: str, server: Any = None) -> str:
    """``text`` without server paths: agent specs become their names (``server``: a
    :class:`~smear_env.play.web.server.Server`, read for its ``specs``), this folder and home are dropped."""
    if server is not None:
        for k, spec in sorted(server.specs.items(), key=lambda kv: -len(kv[1])):
            if spec != k:
                text = text.replace(spec, k)
    for root in sorted({os.getcwd(), str(Path(__file__).resolve().parents[3]), os.path.expanduser("~")},
                       key=len, reverse=True):
        if len(root) > 1:
            text = text.replace(root + os.sep, "").replace(root, ".")
    return text
