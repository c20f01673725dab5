"""The heuristic's rules, written once (:mod:`smear_env.agents.heuristic` describes its design), and the
observation fields they read. They run either on numpy arrays of many rows (the array steps of
:mod:`smear_env.agents.heuristic_batched`: its
:class:`~smear_env.agents.heuristic_batched.BatchedHeuristicAgent` is what the batched table, the vector env
and the batched evaluation use) or on the Python ints of one row (the int steps of
:mod:`smear_env.agents.heuristic_row`: its :func:`~smear_env.agents.heuristic_row.choose` is what the per-seat
:class:`~smear_env.agents.heuristic.HeuristicAgent` calls), so one lane is not a batch of one.

A row is its observation's card and state fields (:data:`FIELDS`: the hand, the kitty and discards, the
cards played by each seat, the current trick by seat, the bids, the bidder, trump, the trick leader, the
voids), each a mask of at most 32 bits (card id = bit), and its legal actions. The rules
(:func:`bid_rule`, :func:`trump_rule`, :func:`discard_rule`, :func:`play_rule`) are written with operators
that mean the same on ints and arrays (``&``, ``|``, ``~`` on masks, comparisons; ``b ^ True`` negates a
bool or a bool array) and the per-suit and table steps of a backend ``ops`` (``where``, the lowest /
highest card of a mask, the tables below). Every branch is computed for every row and each row takes the
first rule that applies, as the heuristic's if/else chain does.

Every number the heuristic compares comes from :mod:`smear_env.agents.heuristic_values`, tabulated once:

* **bidding, trump and the kitty-0 first lead**: ``suit_estimate`` depends on a suit only through its 8-bit
  rank holding and the counts of side aces and side tens (0..3 each), so it is tabulated per rule options
  (``high_low``, ``kitty_size``) for both ``kitty_cards`` it is called with (0 and ``kitty_size``); a row
  looks its four suits up and takes the maximum, ties to the higher suit as ``best_suit`` does;
* **discards and play**: ``throw_cost`` and ``feed_value`` depend on a card only through (trump or not,
  rank, whether an outstanding card of its suit is higher), and ``keep_value`` through (rank, the holding of
  its suit). Their values are replaced by their rank among all values of the table (equal values, equal
  rank), so that ``min(cards, key=...)`` -- the first card in id order with the least value -- is the
  least ``rank * 32 + card`` (``max``: the greatest ``rank * 32 + 31 - card``). That least key within one
  suit is tabulated by (trump or not, outstanding cards of the suit, candidate cards of the suit) (keep:
  by the holding and the candidates), so a choice over any card set is four table lookups and a minimum.

The heuristic never draws from a generator. ``tests/test_heuristic_recorded.py`` checks both backends
against decisions recorded from a separate rule-by-rule implementation (28,672 lane-steps under six rule
options); ``tests/test_heuristic.py`` holds known-answer scenarios.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.actions import DISCARD_ACTION_BASE, PLAY_ACTION_BASE, TRUMP_ACTION_BASE
from ..core.cards import NUM_CARDS, RANK_10, RANK_JACK
from ..core.rules import CARD_GAME_POINTS, cards_beating, suit_mask
from ..engine.observation import (
    BIDDER,
    BIDS,
    DISCARDS,
    HAND,
    KITTY,
    NUM_BID_STATES,
    PLAYED_BY,
    TRICK,
    TRICK_LEADER,
    TRUMP_,
    VOIDS,
)
from .heuristic_values import STUCK_EXTRA

__all__ = ["FIELDS", "bid_rule", "discard_rule", "play_rule", "trump_rule"]

ALL_CARDS = (1 << NUM_CARDS) - 1
SUITS = range(4)
_TENS = sum(1 << (8 * s + RANK_10) for s in SUITS)
_TENS_JACKS = _TENS | sum(1 << (8 * s + RANK_JACK) for s in SUITS)
# the tables both backends index (int64 arrays; the one-row backend takes them as lists or ``array``s)
SUITS_CARDS = np.array([sum(0xFF << (8 * s) for s in SUITS if v >> s & 1) for v in range(16)], dtype=np.int64)
"""By a 4-bit suit set: the cards of those suits."""
HIGH_RANK = np.array([b.bit_length() - 1 for b in range(256)], dtype=np.int64)
"""By a suit holding (byte): the highest rank (-1 for none)."""
LOW4 = np.array([(v & -v).bit_length() - 1 for v in range(16)], dtype=np.int64)
"""By a 4-bit set: its lowest bit (-1 for none)."""
CARD_POINTS = np.array(list(CARD_GAME_POINTS) + [0] * 9)
"""By card id: its game points; 32..40 (no card): 0."""
SUIT_MASK = np.array([0xFF << (8 * s) for s in SUITS] + [0], dtype=np.int64)
"""By suit: its cards; -1 (none): 0."""

FIELDS = ([(HAND, NUM_CARDS), (KITTY, NUM_CARDS), (DISCARDS, NUM_CARDS)]
          + [(PLAYED_BY + NUM_CARDS * r, NUM_CARDS) for r in range(4)]
          + [(TRICK + NUM_CARDS * r, NUM_CARDS) for r in range(4)]
          + [(BIDS, 4 * NUM_BID_STATES), (BIDDER, 4), (TRUMP_, 4), (TRICK_LEADER, 4), (VOIDS, 16)])
"""The observation fields the heuristic reads, as (first column, width): a row's field is the bits of those
columns (the played-by and trick fields per relative seat 0..3)."""
_F_HAND, _F_KITTY, _F_DISCARDS, _F_PLAYED, _F_TRICK = 0, 1, 2, 3, 7
_F_BIDS, _F_BIDDER, _F_TRUMP, _F_LEADER, _F_VOIDS = 11, 12, 13, 14, 15


def bid_rule(ops: Any, f: Any, legal: Any, code: Any, bid_margin: float, min_estimate: float) -> Any:
    """R6-R8; ``legal``: the legal bid actions (bit a: action a)."""
    hand = f[_F_HAND]
    est, _ = ops.best_suit(hand, code, 1, ops.suit_set(hand))
    high, partner = ops.bids(f[_F_BIDS])
    stuck = (legal & 1) == 0  # R8 dealer_must_bid: the dealer may not pass
    margin = bid_margin + ops.where(stuck, STUCK_EXTRA, 0.0)
    want = ops.floor_to_4(est - margin)
    # don't overbid a partner without a clearly better hand
    partner_high = (high > 0) & (partner == high)
    want = ops.where((est < min_estimate) | (partner_high & (est - margin < high + 1.5)), 0, want)
    bid = (want >= 2) & (want > high)
    return ops.where(bid, want - 1, ops.where(stuck, ops.low(legal), 0))


def trump_rule(ops: Any, f: Any, suits: Any, code: Any) -> Any:
    """R10: the legal suit (``suits``: bit s) with the best estimate of the hand after the kitty."""
    _, suit = ops.best_suit(f[_F_HAND], code, 0, suits)
    return TRUMP_ACTION_BASE + suit


def discard_rule(ops: Any, f: Any, legal: Any) -> Any:
    """R11: trump is kept, then side cards by keep value; only trumps left: the cheapest throw, with nothing
    outstanding (every card is boss). ``legal``: the cards that may be discarded."""
    hand = f[_F_HAND]
    trump = ops.LOW4[f[_F_TRUMP]]
    shed = ops.min_throw(ops.bases(trump, 0), legal)
    all_trump = (legal & suit_mask(trump)) != 0
    return DISCARD_ACTION_BASE + ops.where(all_trump, shed, ops.min_keep(hand, legal))


def _low_trump(ops: Any, cards: Any) -> Any:
    """The lowest of the trumps ``cards`` that carries no points (the ten and the jack kept back), else the
    lowest."""
    plain = cards & ~_TENS_JACKS
    return ops.low(ops.where(plain != 0, plain, cards))


def play_rule(ops: Any, f: Any, legal: Any, code: Any) -> Any:
    """R12. Each row either names its card (``card`` where ``named``) or plays the cheapest throw of a card
    set (``throw``: the legal cards unless a rule narrows them)."""
    hand = f[_F_HAND]
    played = f[_F_PLAYED] | f[_F_PLAYED + 1] | f[_F_PLAYED + 2] | f[_F_PLAYED + 3]
    out = ALL_CARDS & ~hand & ~played & ~f[_F_KITTY] & ~f[_F_DISCARDS]  # not ours, played, kitty or discards
    higher = ops.higher(out)
    trump = ops.LOW4[f[_F_TRUMP]]
    tmask = ops.SUIT_MASK[trump]
    leader = ops.LOW4[f[_F_LEADER]]
    lead = leader < 0
    bases = ops.bases(trump, out)
    card, named, throw = 0, False, legal
    if ops.any(lead):
        card, named = _lead_rule(ops, f, legal, code, out, higher, trump, tmask, lead)
    follow = lead ^ True
    if ops.any(follow):
        card, named, throw = _follow_rule(ops, f, legal, out, higher, trump, tmask, leader, bases, follow,
                                          card, named)
    return PLAY_ACTION_BASE + ops.card_or_throw(named, card, bases, throw)


def _lead_rule(ops: Any, f: Any, legal: Any, code: Any, out: Any, higher: Any, trump: Any, tmask: Any,
               lead: Any) -> tuple[Any, Any]:
    """(card, named) of the rows that lead (``lead``)."""
    voids = f[_F_VOIDS]
    out_trumps = (out & tmask) != 0
    my = legal & tmask
    has = my != 0
    card, named = 0, lead & False
    if ops.any(lead & has):
        mine = my | (has ^ True)  # (rows without trumps: garbage)
        top = ops.high(mine)
        top_beaten = (higher >> top) & 1 == 1  # an outstanding trump is above our top one
        c1 = lead & has & ((legal & ~tmask) == 0)  # only trumps
        tcol = trump * (trump > 0)
        opp_trump_void = (voids >> 4 + tcol) & (voids >> 12 + tcol) & 1 == 1
        pull = lead & (c1 ^ True) & has & out_trumps & (opp_trump_void ^ True)
        top_boss = pull & (top_beaten ^ True)  # we hold the top outstanding trump: pull trump
        we_bid = (f[_F_BIDDER] & 0b0101) != 0  # rel seat 0 or 2
        c3 = pull & (top_boss ^ True) & we_bid & (ops.popcount(my) >= 3)
        # the trump lead of c1 and c3: the top trump if no outstanding one beats it, else a low one
        low = (c1 | c3) & top_beaten
        card = ops.where(low, _low_trump(ops, mine), top) if ops.any(low) else top
        named = c1 | top_boss | c3
    undecided = lead & (named ^ True) & (trump >= 0)
    if ops.any(undecided):
        # a side card that is top of its suit, if the opponents can still follow it
        opp_void = ((voids >> 4) | (voids >> 12)) & 0xF
        side = legal & ~tmask & ~higher & ~(ops.SUITS_CARDS[opp_void] * out_trumps)
        k = ops.side_key(side)  # the highest rank, then the lowest suit
        c4 = undecided & (k >= 0) & ((k >> 2) != RANK_10)
        card = ops.where(c4, 8 * (3 - (k & 3)) + (k >> 2), card)
        named = named | c4
    no_trump = lead & (trump < 0)  # R10 with kitty_size 0: the bidder's first lead names trump
    if ops.any(no_trump):
        _, suit = ops.best_suit(f[_F_HAND], code, 0, ops.suit_set(legal))
        cards = legal & suit_mask(suit)
        top = ops.high(cards)
        card = ops.where(no_trump, ops.where((higher >> top) & 1 == 1, _low_trump(ops, cards), top), card)
        named = named | no_trump
    return card, named


def _follow_rule(ops: Any, f: Any, legal: Any, out: Any, higher: Any, trump: Any, tmask: Any, leader: Any,
                 bases: Any, follow: Any, card: Any, named: Any) -> tuple[Any, Any, Any]:
    """(card, named, throw) with the rows that follow (``follow``) decided."""
    has_trump = trump >= 0
    tcol = trump * (trump > 0)
    voids = f[_F_VOIDS]
    jack_card = (trump * 8 + RANK_JACK) * has_trump - (has_trump ^ True)  # -1: no trump
    wi, best, trick_value = ops.trick(f[_F_TRICK + 1:_F_TRICK + 4], leader, trump, jack_card)
    # safe(c): no opponent still to act can beat c. Only the left opponent (rel seat 1) plays after us,
    # and only when they did not lead this trick.
    v1 = (voids >> 4) & 0xF  # suits the left opponent has shown void in
    v1_cards = ops.SUITS_CARDS[v1]
    v1_trump = ((v1 >> tcol) & 1 == 1) & has_trump
    safe_trump = tmask & ~(higher * (v1_trump ^ True))
    ruff = ((out & tmask) != 0) & (v1_trump ^ True)  # an opponent may trump in ...
    safe_side = ~tmask & ALL_CARDS & ~(higher & ~v1_cards) & ~(v1_cards * ruff)  # ... if void
    safe = safe_trump | safe_side | ALL_CARDS * (leader == 1)  # the left opponent led: nobody after us
    throw = legal
    # partner winning: feed points if the partner's card holds, else play cheap
    partner = follow & (wi == 1)
    if ops.any(partner):
        feed = ops.max_feed(bases, legal)
        feed_pos = ops.FEED_POS[((feed >> 3) == trump) * 16 + (feed & 7) * 2 + ((higher >> feed) & 1 == 0)]
        fed = partner & ((safe >> best) & 1 == 1) & feed_pos
        card = ops.where(fed, feed, card)
        named = named | fed
    rest = follow & (partner ^ True)
    if ops.any(rest):
        # winners: cards that beat the best card (same suit and higher, or a trump over a non-trump)
        winners = legal & cards_beating(best, trump)
        active = rest & (winners != 0)
        if ops.any(active):
            jack_bit = (1 << tcol * 8 + RANK_JACK) * has_trump
            pool = winners & safe
            has_pool = active & (pool != 0)
            pts = pool & (_TENS | jack_bit)  # take the trick with a ten / the jack when that is safe
            c_pts = has_pool & (pts != 0)
            non_trump = pool & ~tmask
            c_nt = has_pool & (c_pts ^ True) & (non_trump != 0)
            c_low = has_pool & ((c_pts | c_nt) ^ True) & (trick_value > 0)  # no trump wasted on empty tricks
            plain = winners & ~_TENS & ~jack_bit
            c_try = active & (pool == 0) & (trick_value >= 10) & (plain != 0)  # nothing safe: worth a try
            throw = ops.where(c_nt, non_trump, ops.where(c_low, pool, ops.where(c_try, plain, legal)))
            pick = ops.where((pts & jack_bit) != 0, jack_card, ops.low(pts | (pts == 0)))
            card = ops.where(c_pts, pick, card)
            named = named | c_pts
    return card, named, throw

