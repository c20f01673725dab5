"""The heuristic (:mod:`smear_env.agents.heuristic` describes its design): its rules written once, run either
on numpy arrays of many rows (:class:`BatchedHeuristicAgent`, what the batched table, the vector env and the
batched evaluation use) or on the Python ints of one row (:func:`choose`, what the per-seat
:class:`~smear_env.agents.heuristic.HeuristicAgent` calls), so one lane is not a batch of one.

A row is its observation's card and state fields (:data:`FIELDS`: the hand, the kitty and discards, the
cards played by each seat, the current trick by seat, the bids, the bidder, trump, the trick leader, the
voids), each a mask of at most 32 bits (card id = bit), and its legal actions. The rules
(``_bid_rule``, ``_trump_rule``, ``_discard_rule``, ``_play_rule``) are written with operators that mean the
same on ints and arrays (``&``, ``|``, ``~`` on masks, comparisons; ``b ^ True`` negates a bool or a bool
array) and the per-suit and table steps of a backend (:class:`_Arrays` or :class:`_Ints`: ``where``, the
lowest / highest card of a mask, the tables below). Every branch is computed for every row and each row
takes the first rule that applies, as the heuristic's if/else chain does.

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

import math
from array import array
from typing import Any

import numpy as np

from ..core.actions import (
    DISCARD_ACTION_BASE,
    MAX_BID,
    MIN_BID,
    NUM_ACTIONS,
    PLAY_ACTION_BASE,
    TRUMP_ACTION_BASE,
)
from ..core.cards import NUM_CARDS, RANK_10, RANK_ACE, RANK_JACK
from ..core.config import SmearRules
from ..core.rules import CARD_GAME_POINTS, TRICK_KEYS, cards_beating, suit_mask, trick_key
from ..engine.infoset import PlayerView
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
from .heuristic_values import (
    BID_MARGIN,
    FEED_KEYS,
    FEED_POSITIVE,
    HIGHER_BYTE,
    JACK_WEIGHT,
    KEEP_KEYS,
    MIN_ESTIMATE,
    STUCK_EXTRA,
    THROW_KEYS,
    estimate,
    estimate_table,
    rules_code,
)
from .slots import SlotTable, check_batch, check_start, mask_words, no_legal_error

__all__ = ["BatchedHeuristicAgent", "FIELDS", "choose", "observation_fields", "view_fields"]

_I = np.int64
_FULL = (1 << NUM_CARDS) - 1
_SUITS = range(4)
_S = np.arange(4)
_S8 = 8 * _S
_TENS = sum(1 << (8 * s + RANK_10) for s in _SUITS)
_TENS_JACKS = _TENS | sum(1 << (8 * s + RANK_JACK) for s in _SUITS)
# by a 4-bit suit set: the cards of those suits
_SUITS_CARDS = np.array([sum(0xFF << (8 * s) for s in _SUITS if v >> s & 1) for v in range(16)], dtype=_I)
# by a suit holding (byte): the highest rank (-1 for none)
_HIGH_RANK = np.array([b.bit_length() - 1 for b in range(256)], dtype=_I)
_LOW4 = np.array([(v & -v).bit_length() - 1 for v in range(16)], dtype=_I)  # lowest bit of 4, -1 none
_GV = np.array(list(CARD_GAME_POINTS) + [0] * 9)  # by card id; 32..40 (no card): 0
_SUIT_MASK = np.array([0xFF << (8 * s) for s in _SUITS] + [0], dtype=_I)  # by suit; -1 (none): 0

FIELDS = ([(HAND, NUM_CARDS), (KITTY, NUM_CARDS), (DISCARDS, NUM_CARDS)]
          + [(PLAYED_BY + NUM_CARDS * r, NUM_CARDS) for r in range(4)]
          + [(TRICK + NUM_CARDS * r, NUM_CARDS) for r in range(4)]
          + [(BIDS, 4 * NUM_BID_STATES), (BIDDER, 4), (TRUMP_, 4), (TRICK_LEADER, 4), (VOIDS, 16)])
"""The observation fields the heuristic reads, as (first column, width): a row's field is the bits of those
columns (the played-by and trick fields per relative seat 0..3)."""
_F_HAND, _F_KITTY, _F_DISCARDS, _F_PLAYED, _F_TRICK = 0, 1, 2, 3, 7
_F_BIDS, _F_BIDDER, _F_TRUMP, _F_LEADER, _F_VOIDS = 11, 12, 13, 14, 15
_FW = np.array([o // 64 for o, _ in FIELDS])
_FW1 = np.minimum(_FW + 1, 7)  # the next word (a field crossing a word boundary takes its low bits)
_FSH = np.array([o % 64 for o, _ in FIELDS], dtype=np.uint64)
_FSH1 = np.uint64(64) - _FSH  # a shift by 64 gives 0 (numpy's shifts saturate)
_FMASK = np.array([(1 << n) - 1 for _, n in FIELDS], dtype=np.uint64)
_FIELD_SHIFTS = [(o, (1 << n) - 1) for o, n in FIELDS]


# ----------------------------------------------------------------------------------------------- arrays
def _low(x: Any) -> Any:
    """Index of the lowest set bit of each (non-zero, < 2**62) mask."""
    return np.bitwise_count((x & -x) - 1).astype(_I)


def _high(x: Any) -> Any:
    """Index of the highest set bit of each (non-zero, < 2**32) mask."""
    for k in (1, 2, 4, 8, 16):
        x = x | (x >> k)
    return np.bitwise_count(x).astype(_I) - 1


def _bytes(cards: np.ndarray) -> np.ndarray:
    """(n, 4): the rank holding (byte) of each suit of the masks ``cards``."""
    return (cards[:, None] >> _S8) & 255


class _Arrays:
    """The rules' steps on numpy arrays of rows (masks int64, flags bool)."""

    where = staticmethod(np.where)
    low = staticmethod(_low)
    high = staticmethod(_high)
    SUITS_CARDS, LOW4, FEED_POS, SUIT_MASK = _SUITS_CARDS, _LOW4, FEED_POSITIVE, _SUIT_MASK

    @staticmethod
    def popcount(x: np.ndarray) -> np.ndarray:
        return np.bitwise_count(x)

    @staticmethod
    def floor_to_4(x: np.ndarray) -> np.ndarray:
        """min(4, floor(x)) as int64."""
        return np.minimum(4, np.floor(x)).astype(_I)

    @staticmethod
    def any(x: np.ndarray) -> bool:
        return bool(x.any())

    @staticmethod
    def higher(out: np.ndarray) -> np.ndarray:
        """The cards with an outstanding card of their suit above them."""
        return (HIGHER_BYTE[_bytes(out)] << _S8).sum(axis=1)

    @staticmethod
    def bases(trump: np.ndarray, out: Any) -> np.ndarray:
        """(n, 4): per suit the index base of the throw / feed tables (trump or not, outstanding)."""
        return ((trump[:, None] == _S) * 256 + _bytes(out + 0 * trump)) << 8

    @staticmethod
    def min_throw(bases: np.ndarray, cards: np.ndarray) -> np.ndarray:
        """The card of ``cards`` with the least ``throw_cost`` (lowest id among equals; none: garbage)."""
        return (THROW_KEYS[bases + _bytes(cards)] + _S8).min(axis=1) & 31

    @staticmethod
    def card_or_throw(named: np.ndarray, card: Any, bases: np.ndarray, cards: np.ndarray) -> np.ndarray:
        """``card`` where ``named``, else ``min_throw(bases, cards)``."""
        return np.where(named, card, _Arrays.min_throw(bases, cards))

    @staticmethod
    def max_feed(bases: np.ndarray, cards: np.ndarray) -> np.ndarray:
        """The card of ``cards`` with the greatest ``feed_value`` (the lowest id among equals)."""
        k = FEED_KEYS[bases + _bytes(cards)]
        return 31 - (((k + (24 - _S8)) | (k >> 63)).max(axis=1) & 31)  # k = -1 (no card) stays negative

    @staticmethod
    def min_keep(hand: np.ndarray, cards: np.ndarray) -> np.ndarray:
        """The card of ``cards`` with the least ``keep_value`` in ``hand``."""
        return (KEEP_KEYS[(_bytes(hand) << 8) + _bytes(cards)] + _S8).min(axis=1) & 31

    @staticmethod
    def side_key(side: np.ndarray) -> np.ndarray:
        """max over the suits with a card in ``side`` of (top rank * 4 + 3 - suit); negative for none."""
        return (_HIGH_RANK[_bytes(side)] * 4 + (3 - _S)).max(axis=1)

    @staticmethod
    def suit_set(cards: np.ndarray) -> np.ndarray:
        return ((_bytes(cards) != 0) << _S).sum(axis=1)

    @staticmethod
    def best_suit(hand: np.ndarray, code: np.ndarray, kitty: int, suits: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
        """(estimate, suit) of the best suit of the 4-bit sets ``suits`` for ``hand`` (``kitty`` 0: no
        kitty cards, 1: ``kitty_size``); ties to the higher suit."""
        byte = _bytes(hand)
        aces = byte >> RANK_ACE & 1
        tens = byte >> RANK_10 & 1
        side_aces = aces.sum(axis=1, keepdims=True) - aces
        side_tens = tens.sum(axis=1, keepdims=True) - tens
        c0 = int(code[0])
        if (code == c0).all():
            est = estimate_table(c0)[kitty][byte, side_aces, side_tens]
        else:
            est = np.empty(byte.shape)
            for c in np.unique(code).tolist():
                sel = code == c
                est[sel] = estimate_table(c)[kitty][byte[sel], side_aces[sel], side_tens[sel]]
        masked = np.where((suits[:, None] >> _S) & 1 == 1, est, -np.inf)
        suit = 3 - np.argmax(masked[:, ::-1], axis=1)
        return masked[np.arange(est.shape[0]), suit], suit

    @staticmethod
    def bids(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(highest bid, partner's bid) from the bids field (0: none)."""
        b = _low(((states[:, None] >> (NUM_BID_STATES * _S)) & 31) | 1 << 8)
        b = np.where((b >= 2) & (b < 8), b, 0)
        return b.max(axis=1), b[:, 2]

    @staticmethod
    def trick(seats: np.ndarray, leader: np.ndarray, trump: np.ndarray, jack_card: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rel seat - 1 of the card winning the trick so far, that card, the trick's value) from the trick
        fields of rel seats 1..3 ((3, n)); a lead row's answers are garbage (a card id all the same)."""
        cards = _low(seats | 1 << 40)  # 40: no card (its trick key is 0, below the card led)
        ar = np.arange(cards.shape[1])
        led = cards[(leader - 1) % 3, ar] >> 3
        wi = np.argmax(trick_key(cards, led, trump), axis=0)
        value = _GV[cards].sum(axis=0) + JACK_WEIGHT * (cards == jack_card).any(axis=0)
        return wi, cards[wi, ar] & 31, value


# ----------------------------------------------------------------------------------------------- ints
def _ilow(x: int) -> int:
    return (x & -x).bit_length() - 1


def _ihigh(x: int) -> int:
    return x.bit_length() - 1




def _int_table(t: np.ndarray) -> array:
    """An int64 table as an ``array`` (indexing it gives Python ints, for the one-row path)."""
    a = array("q")
    a.frombytes(np.ascontiguousarray(t, dtype=np.int64).tobytes())
    return a


_THROW_I, _FEED_I, _KEEP_I = (_int_table(t) for t in (THROW_KEYS, FEED_KEYS, KEEP_KEYS))
_HIGHER_I, _HIGH_RANK_I, _GV_I = (_int_table(t) for t in (HIGHER_BYTE, _HIGH_RANK, _GV))
# TRICK_KEYS[trump][led], each by card id with 32..40 (no card) keyed 0
_TRICK_KEYS_I = tuple(tuple(keys + (0,) * 9 for keys in by_led) for by_led in TRICK_KEYS)


class _Ints:
    """The rules' steps on the Python ints and bools of one row."""

    SUITS_CARDS, LOW4, FEED_POS, SUIT_MASK = (t.tolist() for t in (_SUITS_CARDS, _LOW4, FEED_POSITIVE,
                                                                   _SUIT_MASK))
    low = staticmethod(_ilow)
    high = staticmethod(_ihigh)

    @staticmethod
    def where(c: bool, a: Any, b: Any) -> Any:
        return a if c else b

    @staticmethod
    def popcount(x: int) -> int:
        return x.bit_count()

    @staticmethod
    def floor_to_4(x: float) -> int:
        return min(4, math.floor(x))

    any = bool

    @staticmethod
    def higher(out: int) -> int:
        return (_HIGHER_I[out & 255] | _HIGHER_I[out >> 8 & 255] << 8 | _HIGHER_I[out >> 16 & 255] << 16
                | _HIGHER_I[out >> 24 & 255] << 24)

    @staticmethod
    def bases(trump: int, out: int) -> tuple[int, int]:
        """(trump, out): the table bases are computed where a choice needs them."""
        return trump, out

    @staticmethod
    def min_throw(bases: tuple[int, int], cards: int) -> int:
        trump, out = bases
        t = _THROW_I
        s = ((cards & -cards).bit_length() - 1) >> 3
        if cards and cards >> 8 * s < 256:  # one suit (a follower's usual case): one lookup
            return t[((trump == s) << 16 | (out >> 8 * s & 255) << 8) + (cards >> 8 * s)] + 8 * s & 31
        return min(t[((trump == 0) << 16 | (out & 255) << 8) + (cards & 255)],
                   t[((trump == 1) << 16 | (out >> 8 & 255) << 8) + (cards >> 8 & 255)] + 8,
                   t[((trump == 2) << 16 | (out >> 16 & 255) << 8) + (cards >> 16 & 255)] + 16,
                   t[((trump == 3) << 16 | (out >> 24 & 255) << 8) + (cards >> 24 & 255)] + 24) & 31

    @staticmethod
    def card_or_throw(named: bool, card: int, bases: tuple[int, int], cards: int) -> int:
        return card if named else _Ints.min_throw(bases, cards)

    @staticmethod
    def max_feed(bases: tuple[int, int], cards: int) -> int:
        trump, out = bases
        t = _FEED_I
        s = ((cards & -cards).bit_length() - 1) >> 3
        if cards and cards >> 8 * s < 256:  # one suit: the greatest key is the card
            return 8 * s + 7 - (t[((trump == s) << 16 | (out >> 8 * s & 255) << 8) + (cards >> 8 * s)] & 7)
        k0 = t[((trump == 0) << 16 | (out & 255) << 8) + (cards & 255)]
        k1 = t[((trump == 1) << 16 | (out >> 8 & 255) << 8) + (cards >> 8 & 255)]
        k2 = t[((trump == 2) << 16 | (out >> 16 & 255) << 8) + (cards >> 16 & 255)]
        k3 = t[((trump == 3) << 16 | (out >> 24 & 255) << 8) + (cards >> 24 & 255)]
        best = max(k0 + 24 if k0 >= 0 else -1, k1 + 16 if k1 >= 0 else -1, k2 + 8 if k2 >= 0 else -1, k3)
        return 31 - (best & 31)

    @staticmethod
    def min_keep(hand: int, cards: int) -> int:
        return min(_KEEP_I[(hand >> 8 * s & 255) << 8 | (cards >> 8 * s & 255)] + 8 * s for s in _SUITS) & 31

    @staticmethod
    def side_key(side: int) -> int:
        t = _HIGH_RANK_I
        return max(t[side & 255] * 4 + 3, t[side >> 8 & 255] * 4 + 2, t[side >> 16 & 255] * 4 + 1,
                   t[side >> 24 & 255] * 4)

    @staticmethod
    def suit_set(cards: int) -> int:
        return sum(1 << s for s in _SUITS if cards >> 8 * s & 255)

    @staticmethod
    def best_suit(hand: int, code: int, kitty: int, suits: int) -> tuple[float, int]:
        aces = [hand >> (8 * s + RANK_ACE) & 1 for s in _SUITS]
        tens = [hand >> (8 * s + RANK_10) & 1 for s in _SUITS]
        n_aces, n_tens = sum(aces), sum(tens)
        best, suit = -math.inf, -1
        for s in _SUITS:
            if suits >> s & 1:
                e = estimate(code, kitty, hand >> 8 * s & 255, n_aces - aces[s], n_tens - tens[s])
                if e >= best:  # ties: the higher suit
                    best, suit = e, s
        return best, suit

    @staticmethod
    def bids(states: int) -> tuple[int, int]:
        b = [_ilow((states >> NUM_BID_STATES * r & 31) | 1 << 8) for r in _SUITS]
        b = [x if 2 <= x < 8 else 0 for x in b]
        return max(b), b[2]

    @staticmethod
    def trick(seats: list[int], leader: int, trump: int, jack_card: int) -> tuple[int, int, float]:
        s1, s2, s3 = seats
        c1 = (s1 & -s1).bit_length() - 1 if s1 else 40
        c2 = (s2 & -s2).bit_length() - 1 if s2 else 40
        c3 = (s3 & -s3).bit_length() - 1 if s3 else 40
        keys = _TRICK_KEYS_I[trump][(c1, c2, c3)[leader - 1] >> 3]  # a follower's leader: rel seat 1..3
        k1, k2, k3 = keys[c1], keys[c2], keys[c3]
        wi = 0 if k1 >= k2 and k1 >= k3 else 1 if k2 >= k3 else 2
        value = _GV_I[c1] + _GV_I[c2] + _GV_I[c3] + (JACK_WEIGHT if jack_card in (c1, c2, c3) else 0.0)
        return wi, (c1, c2, c3)[wi] & 31, value


# ----------------------------------------------------------------------------------------------- rules
def _bid_rule(ops: Any, f: Any, legal: Any, code: Any, bid_margin: float, min_estimate: float) -> Any:
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


def _trump_rule(ops: Any, f: Any, suits: Any, code: Any) -> Any:
    """R10: the legal suit (``suits``: bit s) with the best estimate of the hand after the kitty."""
    _, suit = ops.best_suit(f[_F_HAND], code, 0, suits)
    return TRUMP_ACTION_BASE + suit


def _discard_rule(ops: Any, f: Any, legal: Any) -> Any:
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


def _play_rule(ops: Any, f: Any, legal: Any, code: Any) -> Any:
    """R12. Each row either names its card (``card`` where ``named``) or plays the cheapest throw of a card
    set (``throw``: the legal cards unless a rule narrows them)."""
    hand = f[_F_HAND]
    played = f[_F_PLAYED] | f[_F_PLAYED + 1] | f[_F_PLAYED + 2] | f[_F_PLAYED + 3]
    out = _FULL & ~hand & ~played & ~f[_F_KITTY] & ~f[_F_DISCARDS]  # not ours, played, kitty or discards
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
    safe_side = ~tmask & _FULL & ~(higher & ~v1_cards) & ~(v1_cards * ruff)  # ... if void
    safe = safe_trump | safe_side | _FULL * (leader == 1)  # the left opponent led: nobody after us
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


# the kind of decision of a row (by its first legal action and its number of legal actions)
_ONE, _BID, _TRUMP, _DISCARD, _PLAY = range(5)
_KIND_OF_FIRST = np.array([_BID] * TRUMP_ACTION_BASE + [_TRUMP] * (DISCARD_ACTION_BASE - TRUMP_ACTION_BASE)
                          + [_DISCARD] * (PLAY_ACTION_BASE - DISCARD_ACTION_BASE)
                          + [_PLAY] * (NUM_ACTIONS - PLAY_ACTION_BASE), dtype=_I)


# ----------------------------------------------------------------------------------------------- one row
def observation_fields(observation: np.ndarray) -> list[int]:
    """The :data:`FIELDS` of one observation vector (its 0/1 features, column > 0.5)."""
    bits = int.from_bytes(np.packbits(np.asarray(observation) > 0.5, bitorder="little").tobytes(), "little")
    return [(bits >> o) & m for o, m in _FIELD_SHIFTS]


# a seat's bid (None: not acted, 0: pass, MIN_BID..MAX_BID) -> its bid state (0 not acted, 1 pass, 2.. bids)
_BID_STATE = {None: 0, 0: 1, **{b: 2 + b - MIN_BID for b in range(MIN_BID, MAX_BID + 1)}}


def view_fields(view: PlayerView) -> list[int]:
    """The :data:`FIELDS` of an observer-relative view (what ``observation_fields`` gives for its
    encoding)."""
    trick = [0, 0, 0, 0]
    leader = view.trick_leader
    if leader is not None:
        for i, c in enumerate(view.trick):
            trick[(leader + i) & 3] = 1 << c
    b, n = [_BID_STATE[x] for x in view.bids], NUM_BID_STATES
    bids = 1 << b[0] | 1 << n + b[1] | 1 << 2 * n + b[2] | 1 << 3 * n + b[3]
    v, bidder, trump = view.voids, view.bidder, view.trump
    return [view.hand, view.kitty, view.discards, *view.played_by, *trick, bids,
            0 if bidder is None else 1 << bidder, 0 if trump is None else 1 << trump,
            0 if leader is None else 1 << leader, v[0] | v[1] << 4 | v[2] << 8 | v[3] << 12]


def choose(fields: list[int], legal: int, code: int, bid_margin: float = BID_MARGIN,
           min_estimate: float = MIN_ESTIMATE) -> int:
    """The heuristic's action for one row: its :data:`FIELDS`, its legal actions ``legal`` (bit a: action
    a, not 0), the rules by :func:`rules_code`; ``bid_margin`` / ``min_estimate`` as the agent's."""
    first = _ilow(legal)
    if legal == 1 << first:
        return first  # one legal action
    if first < TRUMP_ACTION_BASE:
        return _bid_rule(_Ints, fields, legal & 0xFF, code, bid_margin, min_estimate)
    if first < DISCARD_ACTION_BASE:
        return _trump_rule(_Ints, fields, (legal >> TRUMP_ACTION_BASE) & 0xF, code)
    if first < PLAY_ACTION_BASE:
        return _discard_rule(_Ints, fields, (legal >> DISCARD_ACTION_BASE) & _FULL)
    return _play_rule(_Ints, fields, legal >> PLAY_ACTION_BASE, code)


# ----------------------------------------------------------------------------------------------- batches
def _fields(words: np.ndarray) -> np.ndarray:
    """(B, len(FIELDS)) int64: the fields of each row of ``words`` ((B, 8) uint64, the rows' 512 bits)."""
    x = (words[:, _FW] >> _FSH) | (words[:, _FW1] << _FSH1)
    return (x & _FMASK).astype(_I)


def _obs_words(obs: np.ndarray) -> np.ndarray:
    """(B, 8) uint64: the 0/1 features of each row as 512 bits (bit i = column i > 0.5)."""
    packed = np.zeros((obs.shape[0], 64), dtype=np.uint8)
    packed[:, : (obs.shape[1] + 7) // 8] = np.packbits(obs > 0.5, axis=1, bitorder="little")
    return packed.view("<u8")


class BatchedHeuristicAgent:
    """:class:`~smear_env.agents.heuristic.HeuristicAgent` for many rows at once (numpy array rules; see the
    module docstring). Each slot plays under the rules of its ``start_game``, as the per-seat agent does;
    ``bid_margin`` / ``min_estimate`` are the per-seat agent's parameters."""

    vectorised = True
    draws = False
    """It never draws from the generators its slots get in ``start_game``."""

    def __init__(self, rules: SmearRules | None = None, name: str = "heuristic",
                 bid_margin: float = BID_MARGIN, min_estimate: float = MIN_ESTIMATE) -> None:
        self.name = name
        self.rules = rules if rules is not None else SmearRules()
        self.bid_margin = float(bid_margin)
        self.min_estimate = float(min_estimate)
        self._slots = SlotTable(name)

    def start_game(self, slot: int, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        check_start(self.name, seat, rules, rng)
        code = rules_code(rules)
        estimate_table(code)  # build the tables now, not in the middle of a batch
        self._slots.set(slot, code, code)

    def close(self) -> None:
        pass

    # ------------------------------------------------------------------ entry points
    def act_batch(self, obs: np.ndarray, mask: np.ndarray, slots: np.ndarray) -> np.ndarray:
        obs, mask, slots = check_batch(self.name, obs, mask, slots, check_empty=False)
        n = slots.size
        if n == 0:
            return np.zeros(0, dtype=_I)
        lo, hi = mask_words(mask)
        count = np.bitwise_count(lo).astype(_I) + np.bitwise_count(hi)
        if (count == 0).any():
            raise no_legal_error(self.name, np.flatnonzero(count == 0), slots)
        lo_i = lo.astype(_I)  # actions 0..63 (bit 63 is action 63, a play: the sign bit)
        first = np.where(lo != 0, _low(lo_i), 64 + _low(hi.astype(_I)))
        # the kind of decision is that of the first legal action; its legal set, by action - base
        base = np.where(first < DISCARD_ACTION_BASE, 0,
                        np.where(first < PLAY_ACTION_BASE, DISCARD_ACTION_BASE, PLAY_ACTION_BASE))
        play_legal = ((lo >> np.uint64(PLAY_ACTION_BASE)) | (hi << np.uint64(64 - PLAY_ACTION_BASE)))
        legal = np.where(base == 0, lo_i & 0xFF, np.where(base == DISCARD_ACTION_BASE,
                                                          (lo_i >> DISCARD_ACTION_BASE) & _FULL,
                                                          play_legal.astype(_I) & _FULL))
        return self._act(_obs_words(obs), legal, first, count, slots)

    def act_packed(self, words: np.ndarray, legal: np.ndarray, base: np.ndarray, slots: np.ndarray
                   ) -> np.ndarray:
        """:meth:`act_batch` on the packed form of its arguments (what the batched table gives an agent
        that has this method): ``words`` (B, 8) the observations' 0/1 features as bits
        (:meth:`~smear_env.engine.vector.VectorGame.observe_words`), ``legal`` / ``base`` (B,) int64 the legal
        actions ``base + i`` for the set bits ``i`` of ``legal`` (``base``: 0 bids and trump, 8 discards,
        40 plays). The same actions as ``act_batch`` on the rows they encode."""
        slots = np.asarray(slots, dtype=_I)
        if slots.size == 0:
            return np.zeros(0, dtype=_I)
        legal = np.asarray(legal, dtype=_I)
        count = np.bitwise_count(legal).astype(_I)
        if not count.all():
            raise no_legal_error(self.name, np.flatnonzero(count == 0), slots)
        first = np.asarray(base, dtype=_I) + _low(legal)
        return self._act(np.asarray(words).view(np.uint64), legal, first, count, slots)

    def _act(self, words: np.ndarray, legal: np.ndarray, first: np.ndarray, count: np.ndarray,
             slots: np.ndarray) -> np.ndarray:
        code = self._slots.codes(slots, code_of=int)
        fields = _fields(words)
        out = first.copy()  # a row with one legal action plays it
        kind = _KIND_OF_FIRST[first] * (count > 1)
        present = np.bincount(kind, minlength=5).tolist()
        for k in (_PLAY, _BID, _TRUMP, _DISCARD):
            if not present[k]:
                continue
            rows = None if present[k] == kind.size else (kind == k).nonzero()[0]
            f = fields.T if rows is None else fields[rows].T
            lg = legal if rows is None else legal[rows]
            c = code if rows is None else code[rows]
            if k == _PLAY:
                act = _play_rule(_Arrays, f, lg, c)
            elif k == _BID:
                act = _bid_rule(_Arrays, f, lg, c, self.bid_margin, self.min_estimate)
            elif k == _TRUMP:
                act = _trump_rule(_Arrays, f, lg >> TRUMP_ACTION_BASE, c)
            else:
                act = _discard_rule(_Arrays, f, lg)
            if rows is None:
                return act
            out[rows] = act
        return out
