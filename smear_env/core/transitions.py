"""The state machine of a hand (R4, R6-R12, R18-R21), written once for every engine.

Each function is one transition: it takes the values of the state it reads and the action, and returns the
values it writes. Like :mod:`smear_env.core.rules` and :mod:`smear_env.core.phases`, every function works
elementwise on Python ``int`` s (the single game :class:`smear_env.engine.game.Game`) or on numpy int arrays
of one shape, one entry per lane (the batched engine :class:`smear_env.engine.vector.VectorGame`): choices
are :func:`~smear_env.core.rules.select`, everything else bit operations and comparisons. The engines keep
only storage (lists and records for the single game, arrays for the batch) and call these for every move:

- :func:`after_bid` (R6-R8, R12): the next seat to bid, or the end of bidding: the contract goes to the
  bidder, who leads (R12), or the hand is thrown in (R8 ``redeal``); then :func:`take_kitty` (R9);
- :func:`after_trump` (R10), :func:`after_discard` (R11);
- :func:`after_play` (R10 with ``kitty_size`` 0, R12): the suit led, the leader, the seat shown void, the
  next seat; when the trick is full, :func:`after_trick` (R12): the winner leads, the hand is over after
  the sixth trick; then :func:`~smear_env.core.rules.score_hand` (R13-R20) and :func:`next_dealer` (R4);
- :func:`truncated` (R21): a game cut off after a number of hands.

A seat is 0..3, ``-1`` "nobody" (no bidder yet, no card led); a suit is 0..3, ``-1`` "none".
"""

from __future__ import annotations

from typing import Any

from .actions import MAX_BID
from .cards import NUM_TRICKS
from .config import SmearRules
from .phases import BIDDING, DISCARD, HAND_OVER, NUM_PLAYERS, PLAY, TRUMP, card_mask, kitty_cards
from .rules import select

TRICK_SIZE = NUM_PLAYERS
"""R12: a trick is one card from each seat."""
assert BIDDING == 0  # after_bid: ``ended * HAND_OVER`` is BIDDING while bidding goes on


def after_bid(rules: SmearRules, seat: Any, bid: Any, dealer: Any, high_bid: Any, bidder: Any
              ) -> tuple[Any, Any, Any, Any, Any]:
    """R6-R8, R12: ``seat`` bids ``bid`` (0 pass, else 2..4, legal: above ``high_bid``); ``bidder`` is the
    seat holding ``high_bid`` (-1 nobody). Bidding ends when the dealer has acted, or at once on a bid of
    4 (R7); with no bid the hand is thrown in (R8; under ``dealer_must_bid`` the dealer may not pass).

    Returns ``(phase, to_act, high_bid, bidder, ended)``: ``BIDDING`` (the next seat bids), ``HAND_OVER``
    (R8: everyone passed, thrown in), ``TRUMP`` (R9, R10: the bidder takes the kitty and names trump) or
    ``PLAY`` (``kitty_size`` 0: the first card led names trump); the next seat to bid, or the bidder once
    there is a contract (R12: the bidder leads; ``seat`` itself after a throw-in); the high bid so far (0:
    nobody bid; the contract once bidding is over, R17) and the seat holding it (-1 nobody); whether bidding
    is over (R7). (A plain tuple, as every transition here: they run on every move of the single game.)"""
    has = bid > 0
    high_bid = select(has, bid, high_bid)
    bidder = select(has, seat, bidder)
    ended = (bid == MAX_BID) | (seat == dealer)  # R7
    contract = ended & (bidder >= 0)
    phase = select(contract, TRUMP if rules.kitty_size else PLAY, ended * HAND_OVER)  # BIDDING is 0
    return phase, select(contract, bidder, (seat + 1 - ended) & 3), high_bid, bidder, ended


def take_kitty(rules: SmearRules, hand: Any, stock: Any) -> tuple[Any, Any]:
    """R9: the bidder's hand with the kitty (the first ``kitty_size`` cards of ``stock``: a list of card ids
    for an int ``hand``, an ``(N, 8)`` array for an ``(N,)`` array), and the kitty's card mask."""
    kitty = card_mask(kitty_cards(stock, rules.kitty_size))
    return hand | kitty, kitty


def after_trump(suit: Any) -> tuple[Any, int]:
    """R10, R11: the bidder names ``suit`` trump; ``(trump, phase)``: the bidder discards next."""
    return suit, DISCARD


def after_discard(rules: SmearRules, hand: Any, card: Any, discarded: Any) -> tuple[Any, Any]:
    """R11: the bidder discards ``card`` from ``hand``, its ``discarded``-th discard (1 for the first);
    ``(hand, phase)``: it plays once ``kitty_size`` cards are discarded."""
    return hand & ~(1 << card), select(discarded == rules.kitty_size, PLAY, DISCARD)


def after_play(rules: SmearRules, seat: Any, card: Any, led: Any, leader: Any, trump: Any,
               trick_len: Any) -> tuple[Any, Any, Any, Any, Any, Any]:
    """R10, R12: ``seat`` plays ``card`` (legal) to a trick of ``trick_len`` cards led in suit ``led``
    (-1: ``seat`` leads) by ``leader``. Returns ``(led, leader, trump, void, trick_len, to_act)``: the suit
    led and the seat that led; trump (R10 with ``kitty_size`` 0: the suit of the first card led); ``void``
    whether the player showed void in the suit led (followed neither it nor trump); the cards in the trick,
    full at :data:`TRICK_SIZE` (then :func:`after_trick`); the next seat while the trick is not full."""
    suit = card >> 3
    lead = led < 0
    led = select(lead, suit, led)
    leader = select(lead, seat, leader)
    if not rules.kitty_size:  # R10: trump is the suit of the first card led
        trump = select(trump < 0, suit, trump)
    void = (suit != led) & (suit != trump)  # never on a lead
    return led, leader, trump, void, trick_len + 1, (seat + 1) & 3


def after_trick(winner: Any, tricks_done: Any) -> tuple[Any, Any, Any, Any]:
    """R12: the seat ``winner`` won the trick (:func:`~smear_env.core.rules.trick_winner`) after
    ``tricks_done`` earlier tricks of the hand. Returns ``(to_act, team, tricks_done, hand_over)``: the
    winner leads the next trick; its team takes the trick's cards; the tricks completed in the hand; whether
    all :data:`~smear_env.core.cards.NUM_TRICKS` are (then the hand is scored, R13-R20)."""
    done = tricks_done + 1
    return winner, winner & 1, done, done == NUM_TRICKS


def next_dealer(dealer: Any, scored: Any) -> Any:
    """R4, R8: the dealer of the next hand: the deal passes left after a scored hand; a thrown-in hand is
    dealt again by the same dealer."""
    return (dealer + scored) & 3


def first_to_bid(dealer: Any) -> Any:
    """R6: bidding starts left of the dealer."""
    return (dealer + 1) & 3


def truncated(hands_dealt: Any, max_hands: int, game_over: Any) -> Any:
    """R21: a game with no winner after ``max_hands`` hands (thrown-in ones included) is cut off."""
    return (game_over == 0) & (hands_dealt >= max_hands)


__all__ = [
    "TRICK_SIZE", "after_bid",
    "after_discard", "after_play", "after_trick", "after_trump", "first_to_bid", "next_dealer", "take_kitty",
    "truncated",
]
