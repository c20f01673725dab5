"""The phases of a hand and the legal actions in each (R6-R12), written once for every engine.

Like :mod:`smear_env.core.rules`, every function takes plain values and works elementwise on Python ``int`` s
(the single game :mod:`smear_env.engine.game`, a player's view in :mod:`smear_env.engine.observation`) or on
numpy int arrays of one shape (the batched engine :mod:`smear_env.engine.vector`); the card rules themselves
(playable cards, the discard pool, the suits held) are :mod:`smear_env.core.rules`.

The legal actions of one decision are a *bit word* and a *base action*: the actions ``base + i`` for the
set bits ``i`` of ``bits`` (:func:`legal_bits`). ``base`` is 0 for bids and trump (actions 0..7), 8 for
discards (bit = card id) and 40 for plays (bit = card id); :func:`bit_actions` turns a word into action ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum
from typing import Any

import numpy as np

from .actions import DISCARD_ACTION_BASE, MAX_BID, MIN_BID, NUM_ACTIONS, PLAY_ACTION_BASE, TRUMP_ACTION_BASE
from .config import ALL_PASS_DEALER_MUST_BID, SmearRules
from .rules import discard_pool, playable, suits_held


class Phase(IntEnum):
    BIDDING = 0
    TRUMP = 1
    DISCARD = 2
    PLAY = 3
    HAND_OVER = 4
    GAME_OVER = 5


BIDDING, TRUMP, DISCARD, PLAY, HAND_OVER, GAME_OVER = (int(p) for p in Phase)
NUM_PLAYERS = 4

# ------------------------------------------------------------------------------------------------ bidding
NOT_ACTED = 0
PASSED = 1
"""Bid states of a seat in a hand (:func:`bid_state`): 0 not acted, 1 passed, ``b`` (2..4) bid ``b``."""

BID_BITS = tuple(
    sum(1 << (b - MIN_BID + 1) for b in range(max(MIN_BID, high + 1), MAX_BID + 1))
    for high in range(MAX_BID + 1)
)
"""R6: the bid actions (bit ``b - 1`` for a bid ``b``) above each high bid 0..4 (0: nobody bid yet)."""
_BID_BITS_NP = np.array(BID_BITS, dtype=np.int64)
assert BID_BITS[0] == BID_BITS[1] == 0b1110 and BID_BITS[MAX_BID] == 0


def bid_state(bid: int | None) -> int:
    """A seat's bid state from its bid (``None``: not acted, 0: pass, 2..4: a bid)."""
    return NOT_ACTED if bid is None else PASSED if bid == 0 else bid


def high_bid_of(states: Sequence[int]) -> int:
    """R6: the highest bid among the bid states of the four seats (0 when nobody bid)."""
    high = max(states)
    return high if high >= MIN_BID else 0


def bid_bits(high_bid: Any, stuck: Any) -> Any:
    """R6, R8: the legal bidding actions as bits (bit 0 pass, bit ``b - 1`` a bid ``b``): a bid above
    ``high_bid`` (0: nobody bid), and pass unless the dealer is ``stuck``."""
    table = BID_BITS if type(high_bid) is int else _BID_BITS_NP
    return table[high_bid] | (stuck == 0)


def dealer_stuck(rules: SmearRules, phase: Any, to_act: Any, seat: Any, dealer: Any, high_bid: Any) -> Any:
    """R8 ``dealer_must_bid``: ``seat`` is the dealer, to act in the bidding after three passes, and may
    not pass. ``False`` (one bool, for arrays too) under any other ``all_pass`` rule."""
    if rules.all_pass != ALL_PASS_DEALER_MUST_BID:
        return False
    return (phase == BIDDING) & (to_act == seat) & (seat == dealer) & (high_bid == 0)


# -------------------------------------------------------------------------------------------------- kitty
def kitty_cards(stock: Any, kitty_size: int) -> Any:
    """R9: the kitty is the first ``kitty_size`` cards of the stock: a list of card ids from a list, a
    ``(N, kitty_size)`` array from an ``(N, 8)`` array of stocks."""
    return stock[:, :kitty_size] if isinstance(stock, np.ndarray) else stock[:kitty_size]


def card_mask(cards: Any) -> Any:
    """The card mask of card ids: an int from a sequence, an ``(N,)`` array from an ``(N, k)`` array."""
    if isinstance(cards, np.ndarray):
        return np.bitwise_or.reduce(np.left_shift(np.int64(1), cards), axis=1)
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


# ---------------------------------------------------------------------------------------- legal actions
def _bidding(hand: Any, high_bid: Any, stuck: Any, trump: Any, led: Any, first_lead: Any) -> Any:
    return bid_bits(high_bid, stuck)  # R6, R8


def _trump(hand: Any, high_bid: Any, stuck: Any, trump: Any, led: Any, first_lead: Any) -> Any:
    return suits_held(hand) << TRUMP_ACTION_BASE  # R10: a suit in the bidder's hand


def _discard(hand: Any, high_bid: Any, stuck: Any, trump: Any, led: Any, first_lead: Any) -> Any:
    return discard_pool(hand, trump)  # R11


def _play(hand: Any, high_bid: Any, stuck: Any, trump: Any, led: Any, first_lead: Any) -> Any:
    return playable(hand, led, trump, first_lead)  # R10, R12


PHASE_RULES = ((_bidding, 0), (_trump, 0), (_discard, DISCARD_ACTION_BASE), (_play, PLAY_ACTION_BASE))
"""By phase (BIDDING, TRUMP, DISCARD, PLAY): the function giving the legal bits, and the base action."""
_PHASE_BASE = np.array([base for _, base in PHASE_RULES] + [0] * (len(Phase) - PLAY - 1), dtype=np.int64)
"""The base action of each phase (0 once the hand is over), for table lookups."""
_PHASE_IS = np.eye(len(Phase), dtype=np.int64) * -1
"""Row ``p``: -1 (every bit) for phase ``p``, 0 for the others."""


def legal_bits(phase: Any, hand: Any, high_bid: Any, stuck: Any, trump: Any, led: Any, first_lead: Any
               ) -> tuple[Any, Any]:
    """``(bits, base)``: the legal actions ``base + i`` (set bits ``i`` of ``bits``) of the seat to act,
    holding ``hand``, in ``phase`` -- R6/R8 bids above ``high_bid`` (pass unless ``stuck``), R10 a trump
    suit held, R11 the discard pool, R10/R12 the playable cards (``led``: the suit led, -1 when leading;
    ``trump``: -1 while unnamed; ``first_lead``: no trick of the hand finished). ``(0, 0)`` once the hand
    is over. Elementwise on ints or on ``(N,)`` arrays (every argument an array of that shape; ``stuck``
    may be one bool)."""
    if type(phase) is int:
        if phase >= HAND_OVER:
            return 0, 0
        rule, base = PHASE_RULES[phase]
        return rule(hand, high_bid, stuck, trump, led, first_lead), base
    # arrays: most lanes play cards, so the play rule runs on every lane and the others overwrite theirs,
    # each taking the word of its phase's rule through a per-phase mask (0 once the hand is over)
    bits = playable(hand, led, trump, first_lead)
    base = _PHASE_BASE[phase]
    other = (phase != PLAY).nonzero()[0]  # (N,): nonzero without flatnonzero's Python layer
    if other.size:
        ph = phase[other]
        h = hand[other]
        sub_stuck = stuck[other] if isinstance(stuck, np.ndarray) else stuck
        bits[other] = ((bid_bits(high_bid[other], sub_stuck) & _PHASE_IS[BIDDING][ph])
                       | ((suits_held(h) << TRUMP_ACTION_BASE) & _PHASE_IS[TRUMP][ph])
                       | (discard_pool(h, trump[other]) & _PHASE_IS[DISCARD][ph]))
    return bits, base


# Action ids of the set bits of a word, by byte: _ACTIONS_BY_BYTE[base][byte_index][byte_value].
_ACTIONS_BY_BYTE = {
    base: tuple(
        tuple(tuple(base + 8 * i + r for r in range(8) if b >> r & 1) for b in range(256)) for i in range(4)
    )
    for base in (0, DISCARD_ACTION_BASE, PLAY_ACTION_BASE)
}


def bit_actions(bits: int, base: int) -> tuple[int, ...]:
    """The action ids ``base + i`` of the set bits ``i`` of a 32-bit word, ascending."""
    t0, t1, t2, t3 = _ACTIONS_BY_BYTE[base]
    return t0[bits & 255] + t1[bits >> 8 & 255] + t2[bits >> 16 & 255] + t3[bits >> 24]


def bid_actions(high_bid: int, stuck: bool) -> tuple[int, ...]:
    """R6: pass, or a bid higher than every earlier bid (``high_bid``, 0 = none); R8 ``dealer_must_bid``: a
    ``stuck`` dealer may not pass."""
    return bit_actions(bid_bits(high_bid, stuck), 0)


def trump_actions(hand: int) -> tuple[int, ...]:
    """R10: a trump suit among the suits in the bidder's hand after the kitty
    (:func:`~smear_env.core.rules.suits_held`)."""
    return bit_actions(suits_held(hand) << TRUMP_ACTION_BASE, 0)


def discard_actions(hand: int, trump: int) -> tuple[int, ...]:
    """R11: the discard action ids of :func:`~smear_env.core.rules.discard_pool` (a trump only while every
    card is one)."""
    return bit_actions(discard_pool(hand, trump), DISCARD_ACTION_BASE)


def playable_led_card(hand: int, led: int, trump: int, first_lead: bool) -> int:
    """:func:`~smear_env.core.rules.playable` (R10, R12) with the led *card* (-1 when leading) instead of the
    led suit."""
    return playable(hand, led >> 3, trump, first_lead)  # -1 >> 3 == -1: no suit led


def play_actions(hand: int, led: int, trump: int, first_lead: bool) -> tuple[int, ...]:
    """Play action ids of :func:`~smear_env.core.rules.playable` (``led``: the first card of the trick, -1
    when leading)."""
    return bit_actions(playable(hand, led >> 3, trump, first_lead), PLAY_ACTION_BASE)


# ------------------------------------------------------------------------------------- random legal actions
# popcount of a byte; position of the r-th set bit of a byte (0 where there is none)
_POP_BYTE = np.array([b.bit_count() for b in range(256)], dtype=np.int64)
_SELECT_BYTE = np.array(
    [[([i for i in range(8) if b >> i & 1] + [0] * 8)[r] for r in range(8)] for b in range(256)],
    dtype=np.int64,
)


def random_bit_actions(bits: np.ndarray, base: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row of :func:`legal_bits` arrays (one uniform float per row
    from ``rng``): the ``r``-th set bit of ``bits`` from bit 0, ``r = floor(u * count)``; the same draw
    as :func:`random_actions` of the mask."""
    m = bits
    # the r-th set bit of m: find its byte from the bytes' popcounts, then look it up
    pop = _POP_BYTE
    c1 = pop[m & 255]
    c2 = c1 + pop[(m >> 8) & 255]
    c3 = c2 + pop[(m >> 16) & 255]
    r = (rng.random(m.shape[0]) * (c3 + pop[m >> 24])).astype(np.int64)
    byte = (r >= c1).astype(np.int64) + (r >= c2) + (r >= c3)
    before = np.where(byte == 0, 0, np.where(byte == 1, c1, np.where(byte == 2, c2, c3)))
    shift = byte << 3
    return base + shift + _SELECT_BYTE[(m >> shift) & 255, r - before]


def random_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row of a ``(N, 72)`` bool mask (one uniform float per row):
    the ``r``-th legal action in id order, ``r = floor(u * count)``."""
    mask = np.asarray(mask, dtype=bool)
    if mask.ndim != 2:
        raise ValueError(f"mask must have shape (N, {NUM_ACTIONS}), got {mask.shape}")
    packed = np.packbits(mask, axis=1, bitorder="little")
    cum = np.cumsum(_POP_BYTE[packed], axis=1)  # legal actions up to each byte
    counts = cum[:, -1]
    if (counts == 0).any():
        raise ValueError(f"rows {np.flatnonzero(counts == 0)[:8].tolist()} of the mask have no legal action")
    r = (rng.random(mask.shape[0]) * counts).astype(np.int64)
    byte = (cum <= r[:, None]).sum(axis=1)
    rows = np.arange(mask.shape[0])
    before = np.where(byte > 0, cum[rows, byte - 1], 0)
    return (byte << 3) + _SELECT_BYTE[packed[rows, byte], r - before]
