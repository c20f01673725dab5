"""The heuristic's numbers (:mod:`smear_env.agents.heuristic` describes the player that uses them): the
estimate of a hand's points with a suit as trump (bidding, trump, the lead that names trump), how much the
bidder wants to keep a side card (discards), what a card costs to throw away, and what it is worth to feed
a partner who wins the trick. The tuned constants live here too, and the tables of these functions that
the rules (:mod:`smear_env.agents.heuristic_rules`) look their choices up in."""

from __future__ import annotations

import functools

import numpy as np

from ..core.cards import NUM_SUITS, RANK_7, RANK_10, RANK_ACE, RANK_JACK, RANK_KING, SUIT_MASKS
from ..core.config import HIGH_LOW_ACE_SEVEN, HIGH_LOW_VALUES, KITTY_SIZE_VALUES, SmearRules
from ..core.rules import RANK_GAME_VALUE

__all__ = ["suit_estimate", "best_suit", "keep_value", "throw_cost", "feed_value", "BID_MARGIN",
           "MIN_ESTIMATE", "STUCK_EXTRA", "JACK_WEIGHT", "HIGHER_BYTE", "THROW_KEYS", "FEED_KEYS",
           "FEED_POSITIVE", "KEEP_KEYS", "rules_code", "estimate_table", "estimate"]

# The three other players hold 18 of the 26 cards an observer has not seen at the deal; the partner 6,
# the opponents 12, the stock 8.
_UNSEEN = 26.0
_P_OPP = 12.0 / _UNSEEN
_P_PARTNER = 6.0 / _UNSEEN
BID_MARGIN = -1.0
"""Bid floor(estimate - margin). The estimate is conservative (it ignores most of what the partner
brings); a negative margin was tuned by duplicate self-play at default rules, 400 games each: -0.5 beat
+0.15 88%, -0.8 beat -0.5 73%, -1.0 beat -0.8 57%, -1.25 lost to -1.0 (45%)."""
MIN_ESTIMATE = 1.5
"""Never bid (unless stuck) on a raw estimate below this."""
STUCK_EXTRA = 0.5
"""R8 dealer_must_bid: a stuck dealer is more conservative by this much."""
JACK_WEIGHT = 15.0
"""The jack of trump is a whole point: worth more than one ten of Game."""


def _rank_bits(hand: int, suit: int) -> int:
    return hand >> (8 * suit) & 0xFF


def suit_estimate(
    hand: int, suit: int, rules: SmearRules, kitty_cards: int = 0, bidder_discards: bool = True
) -> float:
    """Expected points (High + Low + Jack + Game) the observer's team wins with ``suit`` as trump.

    ``kitty_cards`` unseen cards still to come (R9) add their expected gain; ``bidder_discards``
    counts side tens as banked (R11, R16).
    """
    bits = _rank_bits(hand, suit)
    n = bits.bit_count()
    has = [bool(bits >> r & 1) for r in range(8)]
    k = kitty_cards
    p_k = k / _UNSEEN  # chance that one given unseen card arrives in the kitty
    if n == 0 and k == 0:
        return 0.0
    # R13 High
    if rules.high_low == HIGH_LOW_ACE_SEVEN:
        high = 1.0 if has[RANK_ACE] else _P_PARTNER + p_k
    else:
        top = bits.bit_length() - 1
        high = (1.0 - _P_OPP) ** (RANK_ACE - top) if n else _P_PARTNER
        if not has[RANK_ACE]:
            high = min(1.0, high + p_k * (1.0 - high))
    # R14 Low
    if rules.high_low == HIGH_LOW_ACE_SEVEN:
        low = 1.0 if has[RANK_7] else _P_PARTNER + p_k
    else:
        bottom = (bits & -bits).bit_length() - 1 if n else RANK_ACE
        low = (1.0 - _P_OPP) ** (bottom - RANK_7) if n else _P_PARTNER
        if not has[RANK_7]:
            low = min(1.0, low + p_k * (1.0 - low))
    # R15 Jack
    protected = has[RANK_ACE] or has[RANK_KING]
    if has[RANK_JACK]:
        jack = 0.85 if (n >= 3 or protected) and n >= 2 else 0.6 if n >= 2 else 0.4
    else:
        jack = 0.12 + 0.12 * has[RANK_ACE] + 0.08 * has[RANK_KING] + 0.03 * n + p_k * 0.6
    # R16 Game
    side_aces = sum(1 for s in range(NUM_SUITS) if s != suit and hand >> (8 * s + RANK_ACE) & 1)
    side_tens = sum(1 for s in range(NUM_SUITS) if s != suit and hand >> (8 * s + RANK_10) & 1)
    n_exp = n + k * (8 - n) / _UNSEEN
    game = 0.2 + 0.07 * n_exp + 0.1 * has[RANK_ACE] + 0.05 * has[RANK_KING] + 0.12 * has[RANK_10]
    game += 0.05 * side_aces + (0.1 if bidder_discards and rules.kitty_size else -0.04) * side_tens
    game = min(0.9, max(0.1, game))
    return high + low + jack + game


def best_suit(hand: int, rules: SmearRules, kitty_cards: int = 0,
              suits: tuple[int, ...] | None = None) -> tuple[float, int]:
    """``(estimate, suit)`` of the suit with the best :func:`suit_estimate` (ties: the higher suit);
    ``suits``: the candidates (default: the suits of ``hand``)."""
    cand = suits if suits is not None else tuple(s for s in range(NUM_SUITS) if hand & SUIT_MASKS[s])
    return max((suit_estimate(hand, s, rules, kitty_cards), s) for s in cand)


def keep_value(c: int, hand: int) -> float:
    """How much the bidder wants to keep side card ``c`` of ``hand`` when discarding (R11; lowest goes)."""
    s, r = c >> 3, c & 7
    suit_bits = _rank_bits(hand, s)
    if r == RANK_10:
        return -10.0  # bank the ten: it counts for our Game total (R16)
    if r == RANK_ACE:
        return 10.0
    if r == RANK_KING and suit_bits >> RANK_ACE & 1:
        return 4.0
    short = suit_bits.bit_count() == 1  # discarding it makes a void (we may trump that suit)
    base = {RANK_KING: 0.5, 5: 0.3, RANK_JACK: 0.2}.get(r, 1.0 + 0.1 * r)
    return base - (0.8 if short else 0.0)


def _boss(c: int, outstanding: int) -> bool:
    """No outstanding card of ``c`` 's suit is above it."""
    return not (outstanding & SUIT_MASKS[c >> 3] & ~((1 << (c + 1)) - 1))


def throw_cost(c: int, trump: int, outstanding: int) -> float:
    """How much it costs to give card ``c`` away in a trick we lose (lower = throw first); ``trump`` -1
    for none, ``outstanding`` the cards still unseen by the observer."""
    s, r = c >> 3, c & 7
    boss = _boss(c, outstanding)
    if s == trump:
        if r == RANK_JACK:
            return 60.0
        cost = 20.0 + 2 * r + RANK_GAME_VALUE[r] * 2
        return cost + (10.0 if boss else 0.0)
    cost = RANK_GAME_VALUE[r] * 2 + 0.1 * r
    if boss:
        cost += 8.0
    return cost


def feed_value(c: int, trump: int, outstanding: int) -> float:
    """How good it is to give card ``c`` to a partner who wins the trick."""
    s, r = c >> 3, c & 7
    value = float(RANK_GAME_VALUE[r])
    if s == trump:
        if r == RANK_JACK:
            return JACK_WEIGHT
        if r == RANK_10:
            return 10.0
        return -5.0  # keep other trumps
    if _boss(c, outstanding) and r != RANK_10:
        return -1.0  # a winner of its own later
    if r == RANK_10:
        return value
    return value - 2.5  # K/Q/J: only worth feeding when there is nothing better


# ----------------------------------------------------------------------------------------------- tables
_I = np.int64
_BIG = 1 << 40
HIGHER_BYTE = np.array([sum(1 << r for r in range(8) if b >> (r + 1)) for b in range(256)], dtype=_I)
"""By a suit holding (byte): the ranks with a higher card of the byte."""


def _ordinals(values: np.ndarray) -> np.ndarray:
    """Each value's rank among the distinct values (equal values get equal ranks; order kept)."""
    return np.searchsorted(np.unique(values), values).astype(_I)


def _card_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The heuristic's per-card values as ordinals (:mod:`smear_env.agents.heuristic_rules` says why),
    then per suit:

    * ``throw[t, out, cand]``: least ``ord * 32 + rank`` of ``throw_cost`` over the ranks in ``cand``
      (t: the suit is trump; ``out``: its outstanding cards, which decide whether a card is boss);
    * ``feed[t, out, cand]``: greatest ``ord * 32 + 7 - rank`` of ``feed_value``, and
      ``feed_pos[t, r, boss]`` whether that value is > 0;
    * ``keep[hold, cand]``: least ``ord * 32 + rank`` of ``keep_value`` (``hold``: the suit's holding).

    Empty ``cand``: ``_BIG`` for a least, -1 for a greatest."""
    throw = np.zeros((2, 8, 2))
    feed = np.zeros((2, 8, 2))
    for t in (0, 1):
        trump = 0 if t else 1  # the card below is of suit 0
        for r in range(8):
            for boss in (0, 1):
                out = 0 if boss or r == 7 else 1 << 7  # the ace of suit 0 is above it (an ace is boss)
                throw[t, r, boss] = throw_cost(r, trump, out)
                feed[t, r, boss] = feed_value(r, trump, out)
    throw_ord = _ordinals(throw.ravel()).reshape(2, 8, 2)
    feed_ord = _ordinals(feed.ravel()).reshape(2, 8, 2)
    keep = np.full((8, 256), np.inf)
    for r in range(8):
        for hold in range(256):
            if hold >> r & 1:
                keep[r, hold] = keep_value(r, hold)
    keep_ord = _ordinals(keep.ravel()).reshape(8, 256)
    ranks = np.arange(8)
    cand_bits = (np.arange(256)[:, None] >> ranks[None, :]) & 1 == 1  # (cand, rank)
    boss = (HIGHER_BYTE[:, None] >> ranks[None, :]) & 1 == 0  # (out, rank)
    throw_tbl = np.empty((2, 256, 256), dtype=_I)
    feed_tbl = np.empty((2, 256, 256), dtype=_I)
    for t in (0, 1):
        tk = throw_ord[t][ranks[None, :], boss.astype(_I)] * 32 + ranks[None, :]  # (out, rank)
        throw_tbl[t] = np.where(cand_bits[None, :, :], tk[:, None, :], _BIG).min(axis=2)
        fk = feed_ord[t][ranks[None, :], boss.astype(_I)] * 32 + 7 - ranks[None, :]
        feed_tbl[t] = np.where(cand_bits[None, :, :], fk[:, None, :], -1).max(axis=2)
    kk = keep_ord.T * 32 + ranks[None, :]  # (hold, rank)
    keep_tbl = np.where(cand_bits[None, :, :], kk[:, None, :], _BIG).min(axis=2)
    return throw_tbl.ravel(), feed_tbl.ravel(), (feed > 0).ravel(), keep_tbl.ravel()


THROW_KEYS, FEED_KEYS, FEED_POSITIVE, KEEP_KEYS = _card_tables()
"""The tables of :func:`_card_tables`, flat: ``THROW_KEYS[(t * 256 + out) * 256 + cand]``, ``FEED_KEYS``
alike, ``KEEP_KEYS[hold * 256 + cand]``, ``FEED_POSITIVE[t * 16 + rank * 2 + boss]``."""
_EST: dict[int, np.ndarray] = {}
_EST_ONE: dict[int, float] = {}


def rules_code(rules: SmearRules) -> int:
    """The number of the rule options the heuristic depends on (``high_low``, ``kitty_size``)."""
    return HIGH_LOW_VALUES.index(rules.high_low) * len(KITTY_SIZE_VALUES) + rules.kitty_size


@functools.cache
def _rules_of(code: int) -> SmearRules:
    """Rules with the options of ``code`` (the others default: the estimates do not read them)."""
    hl, ks = divmod(code, len(KITTY_SIZE_VALUES))
    return SmearRules(kitty_size=KITTY_SIZE_VALUES[ks], high_low=HIGH_LOW_VALUES[hl])


def estimate_table(code: int) -> np.ndarray:
    """(2, 256, 4, 4) float64: ``suit_estimate`` of a suit holding with (side aces, side tens), for
    ``kitty_cards`` 0 and ``kitty_size`` (index 0, 1), under the rules of ``code``; cached."""
    table = _EST.get(code)
    if table is None:
        rules = _rules_of(code)
        table = np.zeros((2, 256, 4, 4))
        for ki, kc in enumerate((0, rules.kitty_size)):
            for byte in range(256):
                for aces in range(4):
                    for tens in range(4):
                        side = sum(1 << (8 * s + RANK_ACE) for s in range(1, 1 + aces))
                        side |= sum(1 << (8 * s + RANK_10) for s in range(1, 1 + tens))
                        table[ki, byte, aces, tens] = suit_estimate(byte | side, 0, rules, kc)
        _EST[code] = table
    return table


def estimate(code: int, kitty: int, byte: int, aces: int, tens: int) -> float:
    """``estimate_table(code)[kitty, byte, aces, tens]``, computed as the table computes it, on first use
    (one row at a time does not build the whole table)."""
    key = (((code << 1 | kitty) << 8 | byte) << 2 | aces) << 2 | tens
    e = _EST_ONE.get(key)
    if e is None:
        rules = _rules_of(code)
        side = sum(1 << (8 * s + RANK_ACE) for s in range(1, 1 + aces))
        side |= sum(1 << (8 * s + RANK_10) for s in range(1, 1 + tens))
        e = _EST_ONE[key] = suit_estimate(byte | side, 0, rules, rules.kitty_size if kitty else 0)
    return e
