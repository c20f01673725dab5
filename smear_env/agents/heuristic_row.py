"""The heuristic on the Python ints of one row (what the per-seat
:class:`~smear_env.agents.heuristic.HeuristicAgent` calls): the rules of
:mod:`smear_env.agents.heuristic_rules` with the int steps of one row (:func:`choose`), and the reading of
one row's :data:`FIELDS` from an observation vector (:func:`observation_fields`) or an observer-relative
view (:func:`view_fields`)."""

from __future__ import annotations

import math
from array import array
from typing import Any

import numpy as np

from ..core.actions import DISCARD_ACTION_BASE, MAX_BID, MIN_BID, PLAY_ACTION_BASE, TRUMP_ACTION_BASE
from ..core.cards import RANK_10, RANK_ACE
from ..core.rules import TRICK_KEYS
from ..engine.infoset import PlayerView
from ..engine.observation import NUM_BID_STATES
from .heuristic_rules import (
    ALL_CARDS,
    CARD_POINTS,
    FIELDS,
    HIGH_RANK,
    LOW4,
    SUIT_MASK,
    SUITS,
    SUITS_CARDS,
    bid_rule,
    discard_rule,
    play_rule,
    trump_rule,
)
from .heuristic_values import (
    BID_MARGIN,
    FEED_KEYS,
    FEED_POSITIVE,
    HIGHER_BYTE,
    JACK_WEIGHT,
    KEEP_KEYS,
    MIN_ESTIMATE,
    THROW_KEYS,
    estimate,
)

__all__ = ["FIELDS", "choose", "observation_fields", "view_fields"]

_FIELD_SHIFTS = [(o, (1 << n) - 1) for o, n in FIELDS]


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
_HIGHER_I, _HIGH_RANK_I, _GV_I = (_int_table(t) for t in (HIGHER_BYTE, HIGH_RANK, CARD_POINTS))
# TRICK_KEYS[trump][led], each by card id with 32..40 (no card) keyed 0
_TRICK_KEYS_I = tuple(tuple(keys + (0,) * 9 for keys in by_led) for by_led in TRICK_KEYS)


class _Ints:
    """The rules' steps on the Python ints and bools of one row."""

    SUITS_CARDS, LOW4, FEED_POS, SUIT_MASK = (t.tolist() for t in (SUITS_CARDS, LOW4, FEED_POSITIVE,
                                                                   SUIT_MASK))
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
        return min(_KEEP_I[(hand >> 8 * s & 255) << 8 | (cards >> 8 * s & 255)] + 8 * s for s in SUITS) & 31

    @staticmethod
    def side_key(side: int) -> int:
        t = _HIGH_RANK_I
        return max(t[side & 255] * 4 + 3, t[side >> 8 & 255] * 4 + 2, t[side >> 16 & 255] * 4 + 1,
                   t[side >> 24 & 255] * 4)

    @staticmethod
    def suit_set(cards: int) -> int:
        return sum(1 << s for s in SUITS if cards >> 8 * s & 255)

    @staticmethod
    def best_suit(hand: int, code: int, kitty: int, suits: int) -> tuple[float, int]:
        aces = [hand >> (8 * s + RANK_ACE) & 1 for s in SUITS]
        tens = [hand >> (8 * s + RANK_10) & 1 for s in SUITS]
        n_aces, n_tens = sum(aces), sum(tens)
        best, suit = -math.inf, -1
        for s in SUITS:
            if suits >> s & 1:
                e = estimate(code, kitty, hand >> 8 * s & 255, n_aces - aces[s], n_tens - tens[s])
                if e >= best:  # ties: the higher suit
                    best, suit = e, s
        return best, suit

    @staticmethod
    def bids(states: int) -> tuple[int, int]:
        b = [_ilow((states >> NUM_BID_STATES * r & 31) | 1 << 8) for r in SUITS]
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
        return bid_rule(_Ints, fields, legal & 0xFF, code, bid_margin, min_estimate)
    if first < DISCARD_ACTION_BASE:
        return trump_rule(_Ints, fields, (legal >> TRUMP_ACTION_BASE) & 0xF, code)
    if first < PLAY_ACTION_BASE:
        return discard_rule(_Ints, fields, (legal >> DISCARD_ACTION_BASE) & ALL_CARDS)
    return play_rule(_Ints, fields, legal >> PLAY_ACTION_BASE, code)
