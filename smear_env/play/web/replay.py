"""Replay frames of a smear-record/1 game (:func:`replay_frames`, every hand face up) and record uploads
(:func:`parse_upload`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ...core.actions import action_name, bid_action, discard_action, play_action, trump_action
from ...core.cards import CARD_NAMES, SUIT_CHARS, cards_of, parse_card
from ...core.config import RuleOptionError, SmearRules
from ...engine.game import Game, IllegalActionError, Phase
from ...engine.record import RecordMismatchError, RecordValidationError, replay, validate_record
from ..explain import point_details
from ..hints import probabilities_at
from .api import ApiError, NotJsonError, parse_json_text

MAX_RECORD_HANDS = 500
"""Most hands an uploaded record may hold (a served or evaluated game stops at 200 by default): a longer
one is refused before it is validated."""
MAX_REPLAY_HANDS = 60
"""Hands of a record turned into replay frames per request (``?hand_from=`` pages through the rest)."""


class CheckpointSource(Protocol):
    """What replay frames ask of a server: the checkpoint agent of a player's name (:class:`Server`)."""

    def checkpoint_agent(self, name: str, rules: SmearRules) -> Any: ...


def replay_frames(record: dict[str, Any], server: CheckpointSource | None = None, hand_from: int = 0,
                  max_hands: int = MAX_REPLAY_HANDS, validated: bool = False) -> dict[str, Any]:
    """The decisions of hands ``hand_from .. hand_from + max_hands - 1`` of a smear-record/1 game with all
    hands face up: a list of frames, one per state (the deal of each hand, then after each action), and a
    score line for every hand (with the cards and players that won each point). For players that are
    checkpoints this server offers, each of their decisions carries the action probabilities. The record is
    first replayed whole to validate it, unless ``validated`` says that was done."""
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
    return [CARD_NAMES[c] for c in cards]


def _phase(g: Any) -> str:
    return Phase(g.phase).name


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
    hands = rec.get("hands") if isinstance(rec, dict) else None
    if isinstance(hands, list) and len(hands) > MAX_RECORD_HANDS:
        raise ApiError(413, f"the record holds {len(hands)} hands; an uploaded record may hold at most "
                            f"{MAX_RECORD_HANDS}")

    try:
        validate_record(rec)
    except RecordValidationError as e:
        raise ApiError(400, str(e)) from None
    return rec


def upload_frames(rec: Any, server: CheckpointSource | None, hand_from: int,
                  validated: bool) -> dict[str, Any]:
    """The replay frames of an uploaded record; ApiError (400) when it does not replay."""
    try:
        return replay_frames(rec, server, hand_from, validated=validated)
    except (RecordMismatchError, RuleOptionError, IllegalActionError, ValueError) as e:
        raise ApiError(400, f"the record does not replay: {e}") from None
