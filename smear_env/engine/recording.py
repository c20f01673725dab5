"""The ``smear-record/1`` writer, once for every engine: hand and game objects from plain values.

The single game (:meth:`smear_env.engine.game.Game.to_record`) and the batched engine
(``VectorGame(record=True)``) both build their records here; :mod:`smear_env.engine.record` validates, saves,
loads and replays them (the schema is ``smear_env/schema/game-record.schema.json``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.cards import CARD_NAMES, SUIT_CHARS

FORMAT = "smear-record/1"
POINT_NAMES = ("high", "low", "jack", "game")
Trick = tuple[int, Sequence[int], Sequence[int], int]
"""A finished trick: (leader, seats in play order, cards in play order, winner)."""


def _names(cards: Sequence[int]) -> list[str]:
    n = CARD_NAMES
    return [n[c] for c in cards]


def team_or_none(team: int) -> int | None:
    """A team of :mod:`smear_env.core.rules` (-1: nobody) as a record's team (None: nobody)."""
    return None if team < 0 else team


def hand_result(points: Sequence[int], card_points: Sequence[int], made: bool, change: Sequence[int],
                scores: Sequence[int]) -> dict[str, Any]:
    """The result fields of a scored hand (R13-R20): ``points`` the team (-1 nobody) winning High, Low, Jack
    and Game, ``card_points`` per team, ``made`` the contract, ``change`` and ``scores`` per team."""
    return {
        "points": {n: team_or_none(int(p)) for n, p in zip(POINT_NAMES, points, strict=True)},
        "card_points": [int(x) for x in card_points],
        "made_contract": bool(made),
        "score_change": [int(x) for x in change],
        "scores": [int(x) for x in scores],
    }


def hand_record(
    dealer: int,
    deal: Sequence[Sequence[int]],
    stock: Sequence[int],
    bids: Sequence[tuple[int, int]],
    kitty_size: int,
    *,
    thrown_in: bool = False,
    bidder: int | None = None,
    contract: int | None = None,
    kitty: Sequence[int] = (),
    trump: int = -1,
    discards: Sequence[int] = (),
    tricks: Sequence[Trick] = (),
    current_trick: Sequence[tuple[int, int]] = (),
    result: dict[str, Any] | None = None,
    incomplete: bool = False,
) -> dict[str, Any]:
    """One hand as a smear-record/1 ``hand`` object. ``deal``: the four hands as dealt (card ids);
    ``stock``: in order, the kitty first (R9); ``bids``: (seat, bid) in order, bid 0 a pass; ``bidder``
    None while bidding; ``tricks``: the finished tricks; ``current_trick``: (seat, card) of the trick on
    the table; ``result``: :func:`hand_result` of a scored hand; ``incomplete``: a hand in progress."""
    rec: dict[str, Any] = {
        "dealer": dealer,
        "deal": [_names(h) for h in deal],
        "stock": _names(stock),
        "bids": [{"seat": s, "bid": b if b else "pass"} for s, b in bids],
    }
    if thrown_in:
        rec["thrown_in"] = True
        return rec
    if incomplete:
        rec["incomplete"] = True
    if bidder is not None:
        rec["bidder"] = bidder
        rec["contract"] = contract
        if kitty_size:
            rec["kitty"] = _names(kitty)
        if trump >= 0:
            rec["trump"] = SUIT_CHARS[trump]
        if kitty_size:
            rec["discards"] = _names(discards)
        rec["tricks"] = [
            {
                "leader": leader,
                "plays": [{"seat": s, "card": CARD_NAMES[c]} for s, c in zip(seats, cards, strict=True)],
                "winner": w,
            }
            for leader, seats, cards, w in tricks
        ]
        if current_trick:
            rec["current_trick"] = [{"seat": s, "card": CARD_NAMES[c]} for s, c in current_trick]
    if result is not None and not incomplete:
        rec.update(result)
    return rec


def game_record(rules: dict[str, Any], seed: int | None, hands: list[dict[str, Any]],
                final_scores: Sequence[int], winner: int | None,
                players: Sequence[str] | None = None) -> dict[str, Any]:
    """A game as a smear-record/1 object: ``rules`` (``SmearRules.to_dict()``), the ``hands`` of
    :func:`hand_record`; a game without a ``winner`` is marked truncated (R21), a finished game never is
    (the schema's rule)."""
    rec: dict[str, Any] = {
        "format": FORMAT,
        "rules": rules,
        "seed": seed,
        "hands": hands,
        "final_scores": [int(x) for x in final_scores],
        "winner": winner,
        "truncated": winner is None,
    }
    if players is not None:
        rec["players"] = list(players)
    return rec
