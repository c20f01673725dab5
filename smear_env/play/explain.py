"""Words for players: why a move is illegal, which card won each point, what a hand's table shows so far.

:func:`why_illegal` names the rule a move breaks. Legality itself is the engine's (the pure rule
functions of :mod:`smear_env.engine.game`: :func:`~smear_env.engine.game.playable_led_card`,
:func:`~smear_env.engine.game.discard_actions`, :func:`~smear_env.engine.game.bid_actions`,
:func:`~smear_env.engine.game.trump_actions`); this module only words which of their cases applies.
:func:`point_details` and :func:`table_summary` hold public information only (cards played, who won
tricks, the announced result, R22/R23).
"""

from __future__ import annotations

from typing import Any

from ..core.actions import (
    action_bid,
    action_card,
    action_name,
    is_bid,
    is_discard,
    is_play,
    is_trump,
)
from ..core.cards import CARD_NAMES, SUIT_SYMBOLS
from ..core.rules import game_points, high_low_bits, jack_bit
from ..engine.game import (
    BIDDING,
    DISCARD,
    GAME_OVER,
    HAND_OVER,
    PLAY,
    TRUMP,
    Game,
    bid_actions,
    discard_actions,
    playable_led_card,
)

SUIT_WORDS = ("clubs", "diamonds", "hearts", "spades")


def card_text(c: int | str) -> str:
    """``"TH"`` or its id -> ``"10♥"``."""
    name = CARD_NAMES[c] if isinstance(c, int) else c
    return ("10" if name[0] == "T" else name[0]) + SUIT_SYMBOLS["CDHS".index(name[1])]


def move_text(action: int) -> str:
    """``play 10♥``, ``trump ♥``, ``bid 3``, ``pass``, ``discard 8♣``."""
    name = action_name(action)
    if is_play(action) or is_discard(action):
        return f"{name.split()[0]} {card_text(action_card(action))}"
    if is_trump(action):
        return f"trump {SUIT_SYMBOLS['CDHS'.index(name.split()[1])]}"
    return name


def why_illegal(game: Game, action: int) -> str | None:
    """Why ``action`` is not legal for the player to act in ``game`` (None when it is legal), in words:
    e.g. "trump (♥) was led: you hold trump, so you must play trump (R12)"."""
    if action in game.legal_actions():
        return None
    phase = game.phase
    seat = game.to_act
    if phase >= HAND_OVER or seat is None:
        return "nobody acts now: the hand is over"
    hand = game.hands[seat]
    if phase == BIDDING:
        if not is_bid(action):
            return "it is the bidding: bid or pass (R6)"
        b = action_bid(action)
        stuck = game.dealer_stuck()
        if b == 0 and stuck:
            return "everybody else passed and the dealer must bid (R8, dealer must bid)"
        if action not in bid_actions(game.high_bid, stuck):
            return f"a bid must be higher than the highest bid so far ({game.high_bid}) (R6)"
        return "not a bid you can make now (R6)"
    if phase == TRUMP:
        if not is_trump(action):
            return "you won the bid: name trump first (R10)"
        return "trump must be a suit you hold (R10)"
    if phase == DISCARD:
        if not is_discard(action):
            return f"discard {game.rules.kitty_size - len(game.discards)} more card(s) first (R11)"
        c = action_card(action)
        if not hand >> c & 1:
            return f"you do not hold {card_text(c)}"
        if action not in discard_actions(hand, game.trump):
            return "a trump may be discarded only when every card left in your hand is a trump (R11)"
        return "not a card you can discard now (R11)"
    if phase == PLAY:
        if not is_play(action):
            return "it is the play: play a card (R12)"
        c = action_card(action)
        if not hand >> c & 1:
            return f"you do not hold {card_text(c)}"
        led = game.trick[0] if game.trick else -1
        ok = playable_led_card(hand, led, game.trump, not game.tricks)
        if ok >> c & 1:  # pragma: no cover - the engine said it is illegal
            return None
        trump = game.trump
        if led < 0:  # leading: only the first lead of a hand is restricted
            return (f"the first lead of the hand must be a trump ({SUIT_SYMBOLS[trump]}): the bidder named "
                    f"{SUIT_WORDS[trump]} (R10)")
        ls = led >> 3
        if ls == trump:
            return (f"trump ({SUIT_SYMBOLS[ls]}) was led: you hold trump, so you must play trump (R12)")
        return (f"{SUIT_WORDS[ls]} ({SUIT_SYMBOLS[ls]}) were led: you hold {SUIT_WORDS[ls]}, so you must "
                f"follow suit or play a trump ({SUIT_SYMBOLS[trump]}) (R12)")
    return None  # pragma: no cover


def _who_played(game: Game, c: int) -> int | None:
    for s in range(4):
        if game.played_by[s] >> c & 1:
            return s
    return None


def _trick_winner_of(game: Game, c: int) -> int | None:
    for _, _, cards, w in game.tricks:
        if c in cards:
            return w
    return None


def point_details(game: Game) -> dict[str, Any] | None:
    """After a scored hand: for each point (high, low, jack, game) the team that won it (as the engine
    scored it), and the card and the seat that played it (jack: also the seat that won the trick); card
    points per team (the bidder's team's include its discards, R16: ``discard_points`` of them). Public
    information (every card named was played; of the discards only their total counts). None before the
    hand ends or after a thrown-in hand."""
    if game.phase not in (HAND_OVER, GAME_OVER) or game.hand_thrown_in or game.hand_result is None:
        return None
    r = game.hand_result
    trump = game.trump
    played = game.played_by[0] | game.played_by[1] | game.played_by[2] | game.played_by[3]
    high_bit, low_bit = high_low_bits(trump, played, game.rules)  # R13, R14 (either option)

    def played_card(bit: int) -> int | None:
        return bit.bit_length() - 1 if played & bit else None

    high_c, low_c, jack_c = played_card(high_bit), played_card(low_bit), played_card(jack_bit(trump))
    out: dict[str, Any] = {}
    for key, c in (("high", high_c), ("low", low_c), ("jack", jack_c)):
        d: dict[str, Any] = {"team": r["points"][key], "card": None if c is None else CARD_NAMES[c],
                             "played_by": None if c is None else _who_played(game, c)}
        if key == "jack" and c is not None:
            d["won_by"] = _trick_winner_of(game, c)
        out[key] = d
    bteam = (game.bidder or 0) & 1  # R16: the bidder's team's card points hold its discards (public: the
    # announced total less the tricks' cards, never which cards)
    out["game"] = {"team": r["points"]["game"], "card_points": list(r["card_points"]),
                   "discard_points": int(r["card_points"][bteam]) - game_points(game.won[bteam])}
    return {
        "points": out,
        "bidder": game.bidder,
        "contract": game.contract,
        "trump": "CDHS"[trump],
        "made_contract": bool(r["made_contract"]),
        "score_change": list(r["score_change"]),
        "scores": list(r["scores"]),
    }


def rule_notes(game: Game) -> list[dict[str, Any]]:
    """The rule options that bite now, in words a player reads where it happens: the dealer stuck with a bid
    (R8 ``dealer_must_bid``), a team at the target that does not win because it did not make its own bid
    (R19 ``win_requires_bid``), defenders' points not counted above the target (R20 ``cap_defenders``).
    Each note is ``{"rule", "team", "text"}``; ``{team}`` in the text stands for the team (a page names it
    from its own seat). Public information only."""
    rules = game.rules
    notes: list[dict[str, Any]] = []
    if game.phase == BIDDING and game.to_act is not None and game.dealer_stuck():
        notes.append({"rule": "R8", "team": None,
                      "text": "The three others passed: the dealer may not pass and must bid at least 2 "
                              "(rule: when all four pass, the dealer must bid)."})
    r = game.hand_result if game.phase in (HAND_OVER, GAME_OVER) and not game.hand_thrown_in else None
    if rules.cap_defenders and r is not None and game.bidder is not None:
        d = 1 - (game.bidder & 1)
        won = sum(1 for k in ("high", "low", "jack", "game") if r["points"][k] == d)
        lost = won - int(r["score_change"][d])
        if lost > 0:
            notes.append({"rule": "R20", "team": d,
                          "text": f"{{team}} defended: their score stops at the target "
                                  f"({rules.target_score}), "
                                  f"so {lost} of their {won} point(s) this hand did not count (rule: "
                                  "defenders' score capped at the target)."})
    if rules.win_requires_bid and game.phase != GAME_OVER:
        for t in (0, 1):
            if game.scores[t] >= rules.target_score:
                notes.append({"rule": "R19", "team": t,
                              "text": f"{{team}} reached {game.scores[t]} of {rules.target_score} but wins "
                                      "only "
                                      "in a hand it bids and makes (rule: win only on your own bid): play "
                                      "goes on."})
    return notes


def table_summary(game: Game) -> dict[str, Any]:
    """The public state of the hand so far: tricks won per team, card points captured in tricks per team
    (R16, discards not included: they are hidden), the tricks of the hand (leader, plays, winner), the
    last complete trick, and who led the current trick."""
    tricks = [{"leader": leader, "plays": [{"seat": s, "card": CARD_NAMES[c]} for s, c in zip(seats, cards,
                                                                                               strict=True)],
               "winner": w} for leader, seats, cards, w in game.tricks]
    won = [0, 0]
    for t in tricks:
        won[t["winner"] & 1] += 1
    return {
        "tricks_won": won,
        "card_points": [game_points(game.won[0]), game_points(game.won[1])],
        "tricks": tricks,
        "last_trick": tricks[-1] if tricks else None,
        "leader": game.trick_leader if game.phase == PLAY or game.trick else None,
    }


__all__ = ["card_text", "move_text", "point_details", "rule_notes", "table_summary", "why_illegal"]

