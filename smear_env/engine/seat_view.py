"""The one JSON form of what a seat may know: ``smear-seat-view/1``, built from a :class:`PlayerView`.

Every front end that shows a seat anything -- the terminal game (``smear-play``), the web table
(``smear-serve``), the bot protocol (docs/PROTOCOL.md) -- serialises the seat's state with
:func:`seat_view` (or :func:`seat_view_of`, which adds the public end-of-hand announcement). The JSON
schema is ``smear_env/schema/seat-view.schema.json``. Seats are absolute (0..3, partners opposite:
team = seat % 2); cards are R3 names (``"TS"``); suits are ``"C" "D" "H" "S"``.

Fields (one per :class:`PlayerView` field, in JSON form): ``seat``, ``team``, ``phase`` (``"BIDDING"``,
``"TRUMP"``, ``"DISCARD"``, ``"PLAY"``, ``"HAND_OVER"``, ``"GAME_OVER"``), ``to_act``, ``dealer``,
``scores`` (by team), ``target_score``, ``kitty_size``, ``hand`` (own cards, sorted by suit then rank),
``bids`` (per seat: ``null`` not acted yet, ``"pass"``, or 2..4), ``bidder``, ``contract``, ``trump``
(once this seat may know it, R10/R23), ``kitty`` and ``discards`` (empty unless this seat is the bidder),
``played_by`` (per seat, the cards it played this hand), ``won_by_team``, ``trick`` (the current trick in
play order: ``{"seat", "card"}``), ``trick_leader``, ``voids`` (per seat, suits shown void), ``hand_sizes``
and ``legal_actions`` (``{"id", "name"}`` when this seat is to act, else empty). ``hand_result`` is present
only in ``HAND_OVER`` / ``GAME_OVER`` views made by :func:`seat_view_of`: the result announced to the
table (R13-R17 points by team, card points, contract made, score change, scores), or
``{"thrown_in": true}`` after an all-pass (R8).

:func:`view_from_json` is the exact inverse of :func:`seat_view` (a bot written in Python can rebuild the
:class:`PlayerView` and run any agent of this package on it). :func:`public_action` is how a seat is told
of another seat's action: bids and card plays are public (R22); a trump choice or a discard by another
seat is reported without naming the suit or card (R23).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from ..core.actions import NUM_ACTIONS, action_name, is_discard, is_trump
from ..core.cards import CARD_NAMES, SUIT_CHARS, cards_of, parse_card
from .game import GAME_OVER, HAND_OVER, Game, Phase
from .infoset import PlayerView, view_of

FORMAT = "smear-seat-view/1"
SCHEMA_RESOURCE = "schema/seat-view.schema.json"
PHASE_NAMES = tuple(p.name for p in Phase)


def _cards(mask: int) -> list[str]:
    """Card names of a mask, sorted by suit (C D H S) then rank (low to high): the card id order."""
    return [CARD_NAMES[c] for c in cards_of(mask)]


def _mask(names: list[str], where: str) -> int:
    if not isinstance(names, list):
        raise ValueError(f"seat view field {where!r} must be a list of card names, not {names!r}")
    m = 0
    for n in names:
        try:
            c = parse_card(n)
        except ValueError as e:
            raise ValueError(f"seat view field {where!r}: {e}") from None
        if m >> c & 1:
            raise ValueError(f"seat view field {where!r}: card {n!r} appears twice")
        m |= 1 << c
    return m


def seat_view(view: PlayerView, *, hand_result: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``smear-seat-view/1`` JSON object of ``view`` (an absolute view, as :func:`view_of` gives).

    ``hand_result`` (the public announcement at the end of a hand) is added as given; use
    :func:`seat_view_of` to get it from a game."""
    seat = view.seat
    trick_seats = (
        [(view.trick_leader + i) % 4 for i in range(len(view.trick))] if view.trick_leader is not None else []
    )
    out: dict[str, Any] = {
        "format": FORMAT,
        "seat": seat,
        "team": seat & 1,
        "phase": PHASE_NAMES[int(view.phase)],
        "to_act": view.to_act,
        "dealer": view.dealer,
        "scores": list(view.scores),
        "target_score": view.target_score,
        "kitty_size": view.kitty_size,
        "hand": _cards(view.hand),
        "bids": [None if b is None else "pass" if b == 0 else b for b in view.bids],
        "bidder": view.bidder,
        "contract": view.contract,
        "trump": None if view.trump is None else SUIT_CHARS[view.trump],
        "kitty": _cards(view.kitty),
        "discards": _cards(view.discards),
        "played_by": [_cards(m) for m in view.played_by],
        "won_by_team": [_cards(m) for m in view.won_by_team],
        "trick_leader": view.trick_leader,
        "trick": [{"seat": s, "card": CARD_NAMES[c]} for s, c in zip(trick_seats, view.trick, strict=True)],
        "voids": [[SUIT_CHARS[s] for s in range(4) if v >> s & 1] for v in view.voids],
        "hand_sizes": list(view.hand_sizes),
        "legal_actions": [{"id": a, "name": action_name(a)} for a in view.legal_actions],
    }
    if hand_result is not None:
        out["hand_result"] = hand_result
    return out


def public_hand_result(game: Game) -> dict[str, Any] | None:
    """What the table is told when a hand ends (``None`` while a hand is in play): the points by team, card
    points, whether the contract was made, the score change and the scores; ``{"thrown_in": True}`` after an
    all-pass (R8). Holds no card."""
    if game.phase not in (HAND_OVER, GAME_OVER):
        return None
    if game.hand_thrown_in:
        return {"thrown_in": True}
    r = game.hand_result
    if r is None:  # pragma: no cover - a played hand is always scored
        return None
    return {
        "points": dict(r["points"]),
        "card_points": list(r["card_points"]),
        "made_contract": bool(r["made_contract"]),
        "score_change": list(r["score_change"]),
        "scores": list(r["scores"]),
    }


def seat_view_of(game: Game, seat: int) -> dict[str, Any]:
    """``seat``'s view of ``game`` as JSON (:func:`seat_view` of :func:`view_of`), with the public
    ``hand_result`` when the hand is over."""
    return seat_view(view_of(game, seat), hand_result=public_hand_result(game))


def absolute_view(view: PlayerView, seat: int) -> PlayerView:
    """The absolute form of a relative view (``view_of(game, seat).relative()``) of ``seat``: the inverse
    of :meth:`PlayerView.relative`."""
    from dataclasses import replace

    if view.seat == seat:
        return view
    if view.seat != 0:
        raise ValueError(f"absolute_view needs a relative view (seat 0), got a view of seat {view.seat}")
    return replace(replace(view, seat=(4 - seat) % 4).relative(), seat=seat)


def _seat_or_none(d: dict[str, Any], key: str) -> int | None:
    v = d.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 4:
        raise ValueError(f"seat view field {key!r} must be a seat 0..3 or null, not {v!r}")
    return v


def view_from_json(d: dict[str, Any]) -> PlayerView:
    """The :class:`PlayerView` of a ``smear-seat-view/1`` object (inverse of :func:`seat_view`); a
    malformed object raises ``ValueError`` naming the field."""
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} object (format {d.get('format') if isinstance(d, dict) else d!r})")
    try:
        phase = Phase[d["phase"]]
        seat = _seat_or_none(d, "seat")
        if seat is None:
            raise ValueError("seat view field 'seat' must be a seat 0..3")
        bids = tuple(None if b is None else 0 if b == "pass" else int(b) for b in d["bids"])
        leader = _seat_or_none(d, "trick_leader")
        trick = tuple(parse_card(t["card"]) for t in d["trick"])
        legal = tuple(int(a["id"]) for a in d["legal_actions"])
        if any(not 0 <= a < NUM_ACTIONS for a in legal):
            raise ValueError(f"seat view field 'legal_actions' holds an id outside 0..{NUM_ACTIONS - 1}")
        return PlayerView(
            seat=seat,
            phase=phase,
            to_act=_seat_or_none(d, "to_act"),
            dealer=int(d["dealer"]),
            scores=(int(d["scores"][0]), int(d["scores"][1])),
            target_score=int(d["target_score"]),
            kitty_size=int(d["kitty_size"]),
            hand=_mask(d["hand"], "hand"),
            bids=bids,  # type: ignore[arg-type]
            bidder=_seat_or_none(d, "bidder"),
            contract=None if d["contract"] is None else int(d["contract"]),
            trump=None if d["trump"] is None else SUIT_CHARS.index(d["trump"]),
            kitty=_mask(d["kitty"], "kitty"),
            discards=_mask(d["discards"], "discards"),
            played_by=tuple(_mask(x, "played_by") for x in d["played_by"]),  # type: ignore[arg-type]
            won_by_team=(_mask(d["won_by_team"][0], "won_by_team"),
                         _mask(d["won_by_team"][1], "won_by_team")),
            trick_leader=leader,
            trick=trick,
            voids=tuple(sum(1 << SUIT_CHARS.index(s) for s in v) for v in d["voids"]),  # type: ignore[arg-type]
            hand_sizes=tuple(int(n) for n in d["hand_sizes"]),  # type: ignore[arg-type]
            legal_actions=legal,
        )
    except (KeyError, IndexError, TypeError) as e:
        raise ValueError(f"malformed {FORMAT} object: {type(e).__name__} {e}") from None


def public_action(seat: int, actor: int, action: int) -> dict[str, Any]:
    """How ``seat`` is told that ``actor`` took ``action``: ``{"seat", "id", "name"}`` for its own actions,
    bids and card plays (R22); ``{"seat", "name": "names trump"}`` / ``"discards a card"`` without the suit
    or card for another seat's trump choice or discard (R23)."""
    if actor != seat and is_trump(action):
        return {"seat": actor, "name": "names trump"}
    if actor != seat and is_discard(action):
        return {"seat": actor, "name": "discards a card"}
    return {"seat": actor, "id": action, "name": action_name(action)}


def known_cards(view: PlayerView) -> int:
    """Mask of every card ``view``'s seat may know the place of (own hand, played cards, and the kitty and
    discards for the bidder): a seat-view JSON never names any other card (used by privacy tests)."""
    played = view.played_by[0] | view.played_by[1] | view.played_by[2] | view.played_by[3]
    return view.hand | played | view.kitty | view.discards


def load_schema() -> dict[str, Any]:
    """The ``smear-seat-view/1`` JSON schema shipped in ``smear_env/schema``."""
    return json.loads(resources.files("smear_env").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def _validator() -> Any:
    import jsonschema

    schema = load_schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def validate_seat_view(d: Any) -> None:
    """Raise ``ValueError`` unless ``d`` conforms to the seat-view schema (needs ``jsonschema``)."""
    errors = sorted(_validator().iter_errors(d), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        path = "/".join(str(p) for p in e.absolute_path) or "<root>"
        raise ValueError(f"seat view does not match {FORMAT} at {path}: {e.message}")


__all__ = [
    "FORMAT", "absolute_view", "known_cards", "load_schema", "public_action", "public_hand_result",
    "seat_view", "seat_view_of", "validate_seat_view", "view_from_json",
]
