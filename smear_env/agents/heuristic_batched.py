"""The heuristic in batched form: :class:`~smear_env.agents.heuristic.HeuristicAgent`'s choices for many rows
at once, as numpy array rules over the observation rows (no per-row Python).

Every number the heuristic compares comes from the heuristic's own functions, tabulated once:

* **bidding, trump and the kitty-0 first lead**: :func:`~smear_env.agents.heuristic.suit_estimate` depends on
  a suit only through its 8-bit rank holding and the counts of side aces and side tens (0..3 each), so it is
  tabulated per rule options (``high_low``, ``kitty_size``) for both ``kitty_cards`` it is called with
  (0 and ``kitty_size``); a row looks its four suits up and takes the maximum, ties to the higher suit as
  ``best_suit``'s ``max`` over ``(estimate, suit)`` does;
* **discards and play**: ``_throw_cost`` and ``_feed_value`` depend on a card only through (trump or not,
  rank, whether an outstanding card of its suit is higher), and ``keep_value`` through (rank, the holding of
  its suit). Their values are replaced by their rank among all values of the table (equal values, equal
  rank), so that ``min(cards, key=...)`` -- the first card in id order with the least value -- is the
  least ``rank * 32 + card`` (``max``: the greatest ``rank * 32 + 31 - card``). That least key within one
  suit is tabulated by (trump or not, outstanding cards of the suit, candidate cards of the suit) (keep:
  by the holding and the candidates), so a choice over any card set is four table lookups and three
  ``minimum`` operations per row.

The observation rows are packed into bits once; every card set (hand, legal cards, outstanding cards,
safe cards, winners, ...) is a 32-bit mask per row (card id = bit), and the play rules (lead, follow, feed
the partner, safe winners) are mask operations, one branch of the heuristic at a time, each row taking the
first branch that applies. The heuristic never draws from its generator, so neither does
this. ``tests/test_batched_agents.py`` checks the actions against ``HeuristicAgent.act`` on tens of
thousands of states of every phase and several rule options.
"""

from __future__ import annotations

import numpy as np

from ..actions import DISCARD_ACTION_BASE, NUM_ACTIONS, PLAY_ACTION_BASE, TRUMP_ACTION_BASE
from ..cards import NUM_CARDS, RANK_10, RANK_ACE, RANK_JACK
from ..config import HIGH_LOW_VALUES, KITTY_SIZE_VALUES, SmearRules
from ..observation import (
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
from ..rules import CARD_GAME_POINTS, cards_beating, suit_mask, trick_key
from .heuristic import (
    _BID_MARGIN,
    _JACK_WEIGHT,
    _MIN_ESTIMATE,
    _STUCK_EXTRA,
    HeuristicAgent,
    keep_value,
    suit_estimate,
)
from .slots import _check_start, _SlotTable, check_batch, mask_words, no_legal_error

__all__ = ["BatchedHeuristicAgent"]

_I = np.int64
_FULL = (1 << NUM_CARDS) - 1
_BIG = 1 << 40
_SUITS = range(4)
_TENS = sum(1 << (8 * s + RANK_10) for s in _SUITS)
_TENS_JACKS = _TENS | sum(1 << (8 * s + RANK_JACK) for s in _SUITS)
# by a 4-bit suit set: the cards of those suits
_SUITS_CARDS = np.array([sum(0xFF << (8 * s) for s in _SUITS if v >> s & 1) for v in range(16)], dtype=_I)
# by a suit holding (byte): ranks with a higher card of the byte; the highest rank (-1 for none)
_HIGHER_BYTE = np.array([sum(1 << r for r in range(8) if b >> (r + 1)) for b in range(256)], dtype=_I)
_HIGH_RANK = np.array([b.bit_length() - 1 for b in range(256)], dtype=_I)
_LOW4 = np.array([(v & -v).bit_length() - 1 for v in range(16)], dtype=_I)  # lowest bit of 4, -1 none


def _ordinals(values: np.ndarray) -> np.ndarray:
    """Each value's rank among the distinct values (equal values get equal ranks; order kept)."""
    return np.searchsorted(np.unique(values), values).astype(_I)


def _card_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The heuristic's per-card values as ordinals (see the module docstring), then per suit:

    * ``throw[t, out, cand]``: least ``ord * 32 + rank`` of ``_throw_cost`` over the ranks in ``cand``
      (t: the suit is trump; ``out``: its outstanding cards, which decide whether a card is boss);
    * ``feed[t, out, cand]``: greatest ``ord * 32 + 7 - rank`` of ``_feed_value``, and
      ``feed_pos[t, r, boss]`` whether that value is > 0;
    * ``keep[hold, cand]``: least ``ord * 32 + rank`` of ``keep_value`` (``hold``: the suit's holding).

    Empty ``cand``: ``_BIG`` for a least, -1 for a greatest."""
    h = HeuristicAgent()
    throw = np.zeros((2, 8, 2))
    feed = np.zeros((2, 8, 2))
    for t in (0, 1):
        trump = 0 if t else 1  # the card below is of suit 0
        for r in range(8):
            for boss in (0, 1):
                out = 0 if boss or r == 7 else 1 << 7  # the ace of suit 0 is above it (an ace is boss)
                throw[t, r, boss] = h._throw_cost(r, trump, 0, out)
                feed[t, r, boss] = h._feed_value(r, trump, out)
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
    boss = (_HIGHER_BYTE[:, None] >> ranks[None, :]) & 1 == 0  # (out, rank)
    throw_tbl = np.empty((2, 256, 256), dtype=_I)
    feed_tbl = np.empty((2, 256, 256), dtype=_I)
    for t in (0, 1):
        tk = throw_ord[t][ranks[None, :], boss.astype(_I)] * 32 + ranks[None, :]  # (out, rank)
        throw_tbl[t] = np.where(cand_bits[None, :, :], tk[:, None, :], _BIG).min(axis=2)
        fk = feed_ord[t][ranks[None, :], boss.astype(_I)] * 32 + 7 - ranks[None, :]
        feed_tbl[t] = np.where(cand_bits[None, :, :], fk[:, None, :], -1).max(axis=2)
    kk = keep_ord.T * 32 + ranks[None, :]  # (hold, rank)
    keep_tbl = np.where(cand_bits[None, :, :], kk[:, None, :], _BIG).min(axis=2)
    return throw_tbl.ravel(), feed_tbl.ravel(), feed > 0, keep_tbl.ravel()


_THROW, _FEED, _FEED_POS, _KEEP = _card_tables()
_NUM_CODES = len(HIGH_LOW_VALUES) * len(KITTY_SIZE_VALUES)
_EST: dict[int, np.ndarray] = {}


def _rules_code(rules: SmearRules) -> int:
    return HIGH_LOW_VALUES.index(rules.high_low) * len(KITTY_SIZE_VALUES) + rules.kitty_size


def _estimates(code: int) -> np.ndarray:
    """(2, 256, 4, 4) float64: ``suit_estimate`` of a suit holding with (side aces, side tens), for
    ``kitty_cards`` 0 and ``kitty_size`` (index 0, 1), under the rules of ``code``; cached."""
    table = _EST.get(code)
    if table is None:
        hl, ks = divmod(code, len(KITTY_SIZE_VALUES))
        rules = SmearRules(kitty_size=KITTY_SIZE_VALUES[ks], high_low=HIGH_LOW_VALUES[hl])
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


# ----------------------------------------------------------------------------------------------- bits
# The observation fields the heuristic reads, each at most 32 bits: (offset, width). Field j of a row is
# bits offset_j .. offset_j + width_j - 1 of its 512-bit form.
_F_HAND, _F_KITTY, _F_DISCARDS, _F_PLAYED, _F_TRICK = 0, 1, 2, 3, 7  # played by / trick: 4 each (rel seat)
_F_BIDS, _F_BIDDER, _F_TRUMP, _F_LEADER, _F_VOIDS = 11, 12, 13, 14, 15
_FIELDS = ([(HAND, NUM_CARDS), (KITTY, NUM_CARDS), (DISCARDS, NUM_CARDS)]
           + [(PLAYED_BY + NUM_CARDS * r, NUM_CARDS) for r in range(4)]
           + [(TRICK + NUM_CARDS * r, NUM_CARDS) for r in range(4)]
           + [(BIDS, 4 * NUM_BID_STATES), (BIDDER, 4), (TRUMP_, 4), (TRICK_LEADER, 4), (VOIDS, 16)])
_FW = np.array([o // 64 for o, _ in _FIELDS])
_FW1 = np.minimum(_FW + 1, 7)  # the next word (a field crossing a word boundary takes its low bits)
_FSH = np.array([o % 64 for o, _ in _FIELDS], dtype=np.uint64)
_FSH1 = np.uint64(64) - _FSH  # a shift by 64 gives 0 (numpy's shifts saturate)
_FMASK = np.array([(1 << n) - 1 for _, n in _FIELDS], dtype=np.uint64)
_S = np.arange(4)
_S8 = 8 * _S


def _obs_words(obs: np.ndarray) -> np.ndarray:
    """(B, 8) uint64: the 0/1 features of each row as 512 bits (bit i = column i > 0.5)."""
    packed = np.zeros((obs.shape[0], 64), dtype=np.uint8)
    packed[:, : (obs.shape[1] + 7) // 8] = np.packbits(obs > 0.5, axis=1, bitorder="little")
    return packed.view("<u8")


def _fields(words: np.ndarray) -> np.ndarray:
    """(B, len(_FIELDS)) int64: the fields of ``_FIELDS`` of each row of ``words`` ((B, 8) uint64)."""
    x = (words[:, _FW] >> _FSH) | (words[:, _FW1] << _FSH1)
    return (x & _FMASK).astype(_I)


def _low(x: np.ndarray) -> np.ndarray:
    """Index of the lowest set bit of each (non-zero, < 2**62) mask."""
    return np.bitwise_count((x & -x) - 1).astype(_I)


def _high(x: np.ndarray) -> np.ndarray:
    """Index of the highest set bit of each (non-zero, < 2**32) mask."""
    for k in (1, 2, 4, 8, 16):
        x = x | (x >> k)
    return np.bitwise_count(x).astype(_I) - 1


def _bit(x: np.ndarray, i: np.ndarray) -> np.ndarray:
    """(x >> i) & 1 as bool."""
    return ((x >> i) & 1) == 1


def _one_hot(x: np.ndarray) -> np.ndarray:
    """Index of the lowest set bit of each 4-bit field, -1 for none (decode_batch takes the first)."""
    return _LOW4[x]


def _bytes(cards: np.ndarray) -> np.ndarray:
    """(n, 4): the rank holding (byte) of each suit of the masks ``cards``."""
    return (cards[:, None] >> _S8) & 255


def _suit_bases(trump: np.ndarray, out: np.ndarray) -> np.ndarray:
    """(n, 4): per row and suit, the index base of the suit's throw / feed tables (trump or not,
    outstanding cards)."""
    return ((trump[:, None] == _S) * 256 + _bytes(out)) << 8


def _min_throw(bases: np.ndarray, cards: np.ndarray) -> np.ndarray:
    """The card of ``cards`` with the least ``_throw_cost`` (the lowest id among equals); the rows with
    no card give garbage."""
    return (_THROW[bases + _bytes(cards)] + _S8).min(axis=1) & 31


def _max_feed(bases: np.ndarray, cards: np.ndarray) -> np.ndarray:
    """The card of ``cards`` with the greatest ``_feed_value`` (the lowest id among equals)."""
    k = _FEED[bases + _bytes(cards)]
    return 31 - (((k + (24 - _S8)) | (k >> 63)).max(axis=1) & 31)  # k = -1 (no card) stays negative


def _suit_estimates(hand: np.ndarray, code: np.ndarray, kitty: int) -> np.ndarray:
    """(n, 4) suit_estimate of each suit of the hands (masks); kitty 0: no kitty cards, 1: kitty_size."""
    byte = _bytes(hand)
    aces = byte >> RANK_ACE & 1
    tens = byte >> RANK_10 & 1
    side_aces = aces.sum(axis=1, keepdims=True) - aces
    side_tens = tens.sum(axis=1, keepdims=True) - tens
    c0 = int(code[0])
    if (code == c0).all():
        return _estimates(c0)[kitty][byte, side_aces, side_tens]
    est = np.empty(byte.shape)
    for c in np.unique(code).tolist():
        sel = code == c
        est[sel] = _estimates(c)[kitty][byte[sel], side_aces[sel], side_tens[sel]]
    return est


def _best_suit(est: np.ndarray, cand: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(estimate, suit) of the best candidate suit per row ((n, 4) bool ``cand``); ties to the higher suit,
    as ``max`` over ``(estimate, suit)`` tuples does."""
    masked = np.where(cand, est, -np.inf)
    suit = 3 - np.argmax(masked[:, ::-1], axis=1)
    return masked[np.arange(est.shape[0]), suit], suit


def _suits_of(cards: np.ndarray) -> np.ndarray:
    """(n, 4) bool: the suits with a card in ``cards``."""
    return _bytes(cards) != 0


# the kind of decision of a row (by its first legal action and its number of legal actions)
_ONE, _BID, _TRUMP, _DISCARD, _PLAY = range(5)
_KIND_OF_FIRST = np.array([_BID] * TRUMP_ACTION_BASE + [_TRUMP] * (DISCARD_ACTION_BASE - TRUMP_ACTION_BASE)
                          + [_DISCARD] * (PLAY_ACTION_BASE - DISCARD_ACTION_BASE)
                          + [_PLAY] * (NUM_ACTIONS - PLAY_ACTION_BASE), dtype=_I)


class BatchedHeuristicAgent:
    """:class:`~smear_env.agents.heuristic.HeuristicAgent` for many rows at once (numpy array rules; see the
    module docstring). Each slot plays under the rules of its ``start_game``, as the per-seat agent does;
    ``bid_margin`` / ``min_estimate`` are the per-seat agent's parameters."""

    vectorised = True
    draws = False
    """It never draws from the generators its slots get in ``start_game``."""

    def __init__(self, rules: SmearRules | None = None, name: str = "heuristic",
                 bid_margin: float = _BID_MARGIN, min_estimate: float = _MIN_ESTIMATE) -> None:
        self.name = name
        self.rules = rules if rules is not None else SmearRules()
        self.bid_margin = float(bid_margin)
        self.min_estimate = float(min_estimate)
        self._slots = _SlotTable(name)

    def start_game(self, slot: int, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        _check_start(self.name, seat, rules, rng)
        code = _rules_code(rules)
        _estimates(code)  # build the tables now, not in the middle of a batch
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
        (:meth:`~smear_env.vector.VectorGame.observe_words`), ``legal`` / ``base`` (B,) int64 the legal
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
        out = first.copy()  # a row with one legal action plays it (HeuristicAgent._choose)
        kind = _KIND_OF_FIRST[first] * (count > 1)
        present = np.bincount(kind, minlength=5).tolist()
        kinds = ((_PLAY, self._play), (_BID, self._bid), (_TRUMP, self._trump), (_DISCARD, self._discard))
        for k, fn in kinds:
            if present[k] == kind.size:
                return fn(fields, legal if k != _TRUMP else legal >> 4, code)
            if present[k]:
                rows = (kind == k).nonzero()[0]
                out[rows] = fn(fields[rows], legal[rows] if k != _TRUMP else legal[rows] >> 4, code[rows])
        return out

    # ------------------------------------------------------------------ bidding (R6-R8)
    def _bid(self, fields: np.ndarray, legal: np.ndarray, code: np.ndarray) -> np.ndarray:
        hand = fields[:, _F_HAND]
        est, _ = _best_suit(_suit_estimates(hand, code, 1), _suits_of(hand))
        # per rel seat the bid state (0 not acted, 1 pass, 2.. bid 2..): a bid is the state itself
        states = (fields[:, _F_BIDS, None] >> (NUM_BID_STATES * _S)) & 31
        bids = _low(states | 1 << 8)
        bids = np.where((bids >= 2) & (bids < 8), bids, 0)
        high = bids.max(axis=1)
        stuck = (legal & 1) == 0
        margin = self.bid_margin + np.where(stuck, _STUCK_EXTRA, 0.0)
        want = np.minimum(4, np.floor(est - margin)).astype(_I)
        partner_high = (high > 0) & (bids[:, 2] == high)
        want = np.where((est < self.min_estimate) | (partner_high & (est - margin < high + 1.5)), 0, want)
        bid = (want >= 2) & (want > high)
        return np.where(bid, want - 1, np.where(stuck, _low(legal), 0))

    # ------------------------------------------------------------------ trump (R10)
    def _trump(self, fields: np.ndarray, legal: np.ndarray, code: np.ndarray) -> np.ndarray:
        """``legal``: the legal suits (bit s: suit s)."""
        est = _suit_estimates(fields[:, _F_HAND], code, 0)
        _, suit = _best_suit(est, (legal[:, None] >> _S) & 1 == 1)
        return TRUMP_ACTION_BASE + suit

    # ------------------------------------------------------------------ discards (R11)
    def _discard(self, fields: np.ndarray, legal: np.ndarray, code: np.ndarray) -> np.ndarray:
        hand = fields[:, _F_HAND]
        trump = _one_hot(fields[:, _F_TRUMP])
        # only trumps left: the cheapest throw, with nothing outstanding (every card is boss)
        shed = _min_throw(_suit_bases(trump, np.zeros_like(hand)), legal)
        best = (_KEEP[(_bytes(hand) << 8) + _bytes(legal)] + _S8).min(axis=1)
        all_trump = (legal & suit_mask(trump)) != 0
        return DISCARD_ACTION_BASE + np.where(all_trump, shed, best & 31)

    # ------------------------------------------------------------------ play (R12)
    def _play(self, fields: np.ndarray, legal: np.ndarray, code: np.ndarray) -> np.ndarray:
        """Leads and follows in one pass: each row either names its card (``card``, ``named``) or plays
        the cheapest throw of a card set (``throw``: the legal cards unless a rule narrows them)."""
        hand = fields[:, _F_HAND]
        seen = np.bitwise_or.reduce(fields[:, _F_KITTY:_F_TRICK], axis=1)  # kitty, discards, played
        out = _FULL & ~hand & ~seen  # not ours, not played, not in the kitty or the discards
        higher = (_HIGHER_BYTE[_bytes(out)] << _S8).sum(axis=1)  # cards with a higher outstanding one
        trump = _one_hot(fields[:, _F_TRUMP])
        tmask = suit_mask(trump)
        has_trump = trump >= 0
        tcol = np.maximum(trump, 0)
        voids = fields[:, _F_VOIDS]
        leader = _one_hot(fields[:, _F_LEADER])
        lead = leader < 0
        out_trumps = (out & tmask) != 0

        # ---- lead
        my = legal & tmask
        has = my != 0
        # the trump lead (HeuristicAgent._trump_lead) of the rows' trumps (rows without: garbage)
        top = _high(my | ~has)
        plain = my & ~_TENS_JACKS
        trump_lead = np.where(_bit(higher, top), _low(np.where(plain != 0, plain, my | ~has)), top)
        c1 = lead & has & ((legal & ~tmask) == 0)  # only trumps
        opp_trump_void = _bit(voids, 4 + tcol) & _bit(voids, 12 + tcol)
        pull = lead & ~c1 & has & out_trumps & ~opp_trump_void
        top_boss = pull & ~_bit(higher, top)
        we_bid = (fields[:, _F_BIDDER] & 0b0101) != 0  # rel seat 0 or 2
        c3 = pull & ~top_boss & we_bid & (np.bitwise_count(my) >= 3)
        # a side card that is top of its suit, if the opponents can still follow it
        opp_void = ((voids >> 4) | (voids >> 12)) & 0xF
        side = legal & ~tmask & ~higher & ~(_SUITS_CARDS[opp_void] * out_trumps)
        k = (_HIGH_RANK[_bytes(side)] * 4 + (3 - _S)).max(axis=1)  # the highest rank, then the lowest suit
        c4 = lead & ~c1 & ~top_boss & ~c3 & (k >= 0) & ((k >> 2) != RANK_10)
        card = np.where(c1 | c3, trump_lead, np.where(top_boss, top, 8 * (3 - (k & 3)) + (k >> 2)))
        named = c1 | top_boss | c3 | c4
        no_trump = lead & ~has_trump  # R10 with kitty_size 0: the bidder's first lead names trump
        if no_trump.any():
            i = no_trump.nonzero()[0]
            _, suit = _best_suit(_suit_estimates(hand[i], code[i], 0), _suits_of(legal[i]))
            cards = legal[i] & suit_mask(suit)
            t_top = _high(cards)
            t_plain = cards & ~_TENS_JACKS
            t_low = np.where(t_plain != 0, _low(t_plain), _low(cards))
            card[i] = np.where(_bit(higher[i], t_top), t_low, t_top)
            named[i] = True

        # ---- follow: the cards on the table by rel seat 1..3 (40: none; rel seat 0 plays next)
        trick = _low(fields[:, _F_TRICK + 1:_F_TRICK + 4] | 1 << 40)
        led = trick[np.arange(legal.size), (leader - 1) % 3] >> 3
        # the winning card so far (R12): the highest trick key (an absent card's is 0, below the card led)
        wi = np.argmax(trick_key(trick, led[:, None], trump[:, None]), axis=1)
        best = trick[np.arange(legal.size), wi] & 31  # (a lead row's 40 becomes a card: unused)
        follow = ~lead
        jack_card = np.where(has_trump, trump * 8 + RANK_JACK, -1)
        jack_bit = (1 << tcol * 8 + RANK_JACK) * has_trump
        trick_value = _GV[trick].sum(axis=1) + _JACK_WEIGHT * (trick == jack_card[:, None]).any(axis=1)
        # safe(c): no opponent still to act can beat c. Only the left opponent (rel seat 1) plays after
        # us, and only when they did not lead this trick.
        opp_after = leader != 1
        v1 = (voids >> 4) & 0xF  # suits the left opponent has shown void in
        v1_cards = _SUITS_CARDS[v1]
        v1_trump = _bit(v1, tcol) & has_trump
        safe_trump = tmask & ~(higher * ~v1_trump)
        ruff = out_trumps & ~v1_trump  # an opponent may trump in ...
        safe_side = ~tmask & _FULL & ~(higher & ~v1_cards) & ~(v1_cards * ruff)  # ... if void
        safe = np.where(opp_after, safe_trump | safe_side, _FULL)
        bases = _suit_bases(trump, out)
        # partner winning: feed points if the partner's card holds, else play cheap
        partner = follow & (wi == 1)
        feed = _max_feed(bases, legal)
        feed_pos = _FEED_POS[((feed >> 3) == trump).astype(_I), feed & 7, (~_bit(higher, feed)).astype(_I)]
        fed = partner & _bit(safe, best) & feed_pos
        # winners: cards that beat the best card (same suit and higher, or a trump over a non-trump)
        winners = legal & cards_beating(best, trump)
        active = follow & ~partner & (winners != 0)
        pool = winners & safe
        has_pool = active & (pool != 0)
        pts = pool & (_TENS | jack_bit)
        c_pts = has_pool & (pts != 0)
        non_trump = pool & ~tmask
        c_nt = has_pool & ~c_pts & (non_trump != 0)
        c_low = has_pool & ~c_pts & ~c_nt & (trick_value > 0)
        plain = winners & ~_TENS & ~jack_bit
        c_try = active & (pool == 0) & (trick_value >= 10) & (plain != 0)
        throw = np.where(c_nt, non_trump, np.where(c_low, pool, np.where(c_try, plain, legal)))
        pick = np.where((pts & jack_bit) != 0, jack_card, _low(pts | (pts == 0)))
        card = np.where(fed, feed, np.where(c_pts, pick, card))
        named |= fed | c_pts
        return PLAY_ACTION_BASE + np.where(named, card, _min_throw(bases, throw))


_GV = np.array(list(CARD_GAME_POINTS) + [0] * 9)  # 40: no card
assert NUM_ACTIONS == PLAY_ACTION_BASE + NUM_CARDS
