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
  ``argmin`` of ``rank * 32 + card`` (``max``: ``argmax`` of ``rank * 32 + 31 - card``).

The play rules (lead, follow, feed the partner, safe winners) are written over (rows, 32) boolean card
arrays decoded from the observation columns, one branch of the heuristic at a time, each row taking the
first branch of the heuristic that applies. The heuristic never draws from its generator, so neither does
this. ``tests/test_batched_agents.py`` checks the actions against ``HeuristicAgent.act`` on tens of
thousands of states of every phase and several rule options.
"""

from __future__ import annotations

import numpy as np

from ..actions import DISCARD_ACTION_BASE, NUM_ACTIONS, PLAY_ACTION_BASE, TRUMP_ACTION_BASE
from ..cards import NUM_CARDS, RANK_10, RANK_ACE, RANK_GAME_VALUE, RANK_JACK
from ..config import HIGH_LOW_VALUES, KITTY_SIZE_VALUES, SmearRules
from ..observation import (
    BIDDER,
    BIDS,
    HAND,
    KITTY,
    NUM_BID_STATES,
    PLAYED_BY,
    TRICK,
    TRICK_LEADER,
    TRUMP_,
    VOIDS,
)
from .batched import _check_start, _SlotTable, check_batch
from .heuristic import (
    _BID_MARGIN,
    _JACK_WEIGHT,
    _MIN_ESTIMATE,
    _STUCK_EXTRA,
    HeuristicAgent,
    keep_value,
    suit_estimate,
)

__all__ = ["BatchedHeuristicAgent"]

_CARD = np.arange(NUM_CARDS)
_SUIT = _CARD >> 3
_RANK = _CARD & 7
_GV = np.array(RANK_GAME_VALUE)[_RANK]
_IS_TEN = _RANK == RANK_10
_IS_JACK = _RANK == RANK_JACK
_BIG = np.int64(1 << 40)
# bit c: the cards of c's suit above c (R12 order within a suit)
_ABOVE = np.array([(0xFF << (8 * (c >> 3))) & ~((1 << (c + 1)) - 1) for c in range(NUM_CARDS)],
                  dtype=np.int64)
_HIGH_FIRST = _RANK * NUM_CARDS + (NUM_CARDS - 1 - _CARD)  # argmax: the highest rank, then the lowest id


def _ordinals(values: np.ndarray) -> np.ndarray:
    """Each value's rank among the distinct values (equal values get equal ranks; order kept)."""
    return np.searchsorted(np.unique(values), values).astype(np.int64)


def _card_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Ordinal tables of the heuristic's per-card values (see the module docstring):
    throw[is_trump, rank, boss], feed[is_trump, rank, boss], feed_positive[...], keep[rank, suit holding]."""
    h = HeuristicAgent()
    throw = np.zeros((2, 8, 2))
    feed = np.zeros((2, 8, 2))
    for t in (0, 1):
        trump = 0 if t else 1  # card c below is of suit 0
        for r in range(8):
            for boss in (0, 1):
                out = 0 if boss or r == 7 else 1 << 7  # the ace of suit 0 is above the card (an ace: boss)
                throw[t, r, boss] = h._throw_cost(r, trump, 0, out)
                feed[t, r, boss] = h._feed_value(r, trump, out)
    keep = np.full((8, 256), np.inf)
    for r in range(8):
        for byte in range(256):
            if byte >> r & 1:
                keep[r, byte] = keep_value(r, byte)
    return (_ordinals(throw.ravel()).reshape(2, 8, 2), _ordinals(feed.ravel()).reshape(2, 8, 2),
            (feed > 0), _ordinals(keep.ravel()).reshape(8, 256))


_THROW_ORD, _FEED_ORD, _FEED_POS, _KEEP_ORD = _card_tables()
_KEEP_KEY = _KEEP_ORD * NUM_CARDS  # + card id added per row
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


def _bits(block: np.ndarray) -> np.ndarray:
    """(n, 32) bool -> (n,) int64 masks (bit i = column i)."""
    return np.packbits(block, axis=1, bitorder="little").view("<u4")[:, 0].astype(np.int64)


def _first(cand: np.ndarray) -> np.ndarray:
    """Index of the first True per row (0 where none)."""
    return np.argmax(cand, axis=1)


def _last(cand: np.ndarray) -> np.ndarray:
    """Index of the last True per row (n-1 where none)."""
    return cand.shape[1] - 1 - np.argmax(cand[:, ::-1], axis=1)


def _argmin_key(cand: np.ndarray, key: np.ndarray) -> np.ndarray:
    return np.argmin(np.where(cand, key, _BIG), axis=1)


class BatchedHeuristicAgent:
    """:class:`~smear_env.agents.heuristic.HeuristicAgent` for many rows at once (numpy array rules; see the
    module docstring). Each slot plays under the rules of its ``start_game``, as the per-seat agent does;
    ``bid_margin`` / ``min_estimate`` are the per-seat agent's parameters."""

    vectorised = True

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

    # ------------------------------------------------------------------ entry point
    def act_batch(self, obs: np.ndarray, mask: np.ndarray, slots: np.ndarray) -> np.ndarray:
        obs, mask, slots = check_batch(self.name, obs, mask, slots)
        n = slots.size
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        code = self._slots.codes(slots, code_of=int)
        first = np.argmax(mask, axis=1)
        out = first.copy()  # a row with one legal action plays it (HeuristicAgent._choose)
        many = mask.sum(axis=1) > 1
        kind = np.searchsorted(np.array([TRUMP_ACTION_BASE, DISCARD_ACTION_BASE, PLAY_ACTION_BASE]), first,
                               side="right")
        for k, fn in enumerate((self._bid, self._trump, self._discard, self._play)):
            rows = np.flatnonzero(many & (kind == k))
            if rows.size:
                out[rows] = fn(obs, mask, rows, code[rows])
        return out.astype(np.int64)

    # ------------------------------------------------------------------ bidding (R6-R8)
    @staticmethod
    def _suit_estimates(hand: np.ndarray, code: np.ndarray, kitty: int) -> np.ndarray:
        """(n, 4) suit_estimate of each suit of the (n, 32) bool hands (kitty 0: none, 1: kitty_size)."""
        byte = np.packbits(hand, axis=1, bitorder="little").astype(np.int64)  # (n, 4) holding per suit
        aces = byte >> RANK_ACE & 1
        tens = byte >> RANK_10 & 1
        side_aces = aces.sum(axis=1, keepdims=True) - aces
        side_tens = tens.sum(axis=1, keepdims=True) - tens
        est = np.empty(byte.shape)
        for c in np.unique(code).tolist():
            sel = code == c
            est[sel] = _estimates(c)[kitty][byte[sel], side_aces[sel], side_tens[sel]]
        return est

    @staticmethod
    def _best_suit(est: np.ndarray, cand: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(estimate, suit) of the best candidate suit per row; ties to the higher suit (max of tuples)."""
        masked = np.where(cand, est, -np.inf)
        suit = 3 - np.argmax(masked[:, ::-1], axis=1)
        return masked[np.arange(est.shape[0]), suit], suit

    def _bid(self, obs: np.ndarray, mask: np.ndarray, rows: np.ndarray, code: np.ndarray) -> np.ndarray:
        hand = obs[rows, HAND : HAND + NUM_CARDS] > 0.5
        est, _ = self._best_suit(self._suit_estimates(hand, code, 1), np.packbits(hand, axis=1,
                                                                                  bitorder="little") != 0)
        state = np.argmax(obs[rows, BIDS : BIDS + 4 * NUM_BID_STATES].reshape(-1, 4, NUM_BID_STATES) > 0.5,
                          axis=2)  # 0 not acted, 1 pass, 2.. bid 2..
        bids = np.where(state >= 2, state, 0)
        high = bids.max(axis=1)
        stuck = ~mask[rows, 0]
        margin = self.bid_margin + np.where(stuck, _STUCK_EXTRA, 0.0)
        want = np.minimum(4, np.floor(est - margin)).astype(np.int64)
        partner_high = (high > 0) & (bids[:, 2] == high)
        want = np.where((est < self.min_estimate) | (partner_high & (est - margin < high + 1.5)), 0, want)
        bid = (want >= 2) & (want > high)
        return np.where(bid, want - 1, np.where(stuck, np.argmax(mask[rows], axis=1), 0))

    # ------------------------------------------------------------------ trump (R10)
    def _trump(self, obs: np.ndarray, mask: np.ndarray, rows: np.ndarray, code: np.ndarray) -> np.ndarray:
        hand = obs[rows, HAND : HAND + NUM_CARDS] > 0.5
        est = self._suit_estimates(hand, code, 0)
        _, suit = self._best_suit(est, mask[rows, TRUMP_ACTION_BASE : TRUMP_ACTION_BASE + 4])
        return TRUMP_ACTION_BASE + suit

    # ------------------------------------------------------------------ discards (R11)
    def _discard(self, obs: np.ndarray, mask: np.ndarray, rows: np.ndarray, code: np.ndarray) -> np.ndarray:
        legal = mask[rows, DISCARD_ACTION_BASE : DISCARD_ACTION_BASE + NUM_CARDS]
        hand = obs[rows, HAND : HAND + NUM_CARDS] > 0.5
        trump = self._trump_suit(obs, rows)
        is_t = _SUIT[None, :] == trump[:, None]
        # only trumps left: the cheapest throw with nothing outstanding (every card is boss)
        throw_key = _THROW_ORD[is_t.astype(np.int64), _RANK[None, :], 1] * NUM_CARDS + _CARD
        byte = np.packbits(hand, axis=1, bitorder="little").astype(np.int64)
        keep_key = _KEEP_KEY[_RANK[None, :], byte[:, _SUIT]] + _CARD
        all_trump = (legal & is_t).any(axis=1)
        key = np.where(all_trump[:, None], throw_key, keep_key)
        return DISCARD_ACTION_BASE + _argmin_key(legal, key)

    @staticmethod
    def _trump_suit(obs: np.ndarray, rows: np.ndarray) -> np.ndarray:
        block = obs[rows, TRUMP_ : TRUMP_ + 4] > 0.5
        return np.where(block.any(axis=1), np.argmax(block, axis=1), -1)

    # ------------------------------------------------------------------ play (R12)
    def _play(self, obs: np.ndarray, mask: np.ndarray, rows: np.ndarray, code: np.ndarray) -> np.ndarray:
        legal = mask[rows, PLAY_ACTION_BASE : PLAY_ACTION_BASE + NUM_CARDS]
        hand = obs[rows, HAND : HAND + NUM_CARDS] > 0.5
        seen = (obs[rows, KITTY : PLAYED_BY + 4 * NUM_CARDS] > 0.5).reshape(-1, 6, NUM_CARDS).any(axis=1)
        outstanding = ~hand & ~seen  # not ours, not played, not in the kitty or the discards
        out_bits = _bits(outstanding)
        higher = (out_bits[:, None] & _ABOVE[None, :]) != 0  # an outstanding card of the suit beats it
        trump = self._trump_suit(obs, rows)
        is_t = _SUIT[None, :] == trump[:, None]
        # throw cost per card (the ordinal key of _throw_cost, ties to the lower card id)
        throw_key = _THROW_ORD[is_t.astype(np.int64), _RANK[None, :], (~higher).astype(np.int64)] * NUM_CARDS
        throw_key += _CARD
        leader_block = obs[rows, TRICK_LEADER : TRICK_LEADER + 4] > 0.5
        leads = ~leader_block.any(axis=1)
        result = np.empty(rows.size, dtype=np.int64)
        i_lead = np.flatnonzero(leads)
        i_follow = np.flatnonzero(~leads)
        voids = (obs[rows, VOIDS : VOIDS + 16] > 0.5).reshape(-1, 4, 4)
        if i_lead.size:
            result[i_lead] = self._lead(
                obs, rows[i_lead], code[i_lead], legal[i_lead], hand[i_lead], outstanding[i_lead],
                higher[i_lead], trump[i_lead], is_t[i_lead], throw_key[i_lead], voids[i_lead],
            )
        if i_follow.size:
            result[i_follow] = self._follow(
                obs, rows[i_follow], legal[i_follow], outstanding[i_follow], higher[i_follow],
                trump[i_follow], is_t[i_follow], throw_key[i_follow], voids[i_follow],
                np.argmax(leader_block[i_follow], axis=1),
            )
        return PLAY_ACTION_BASE + result

    @staticmethod
    def _trump_lead(cards: np.ndarray, higher: np.ndarray) -> np.ndarray:
        """HeuristicAgent._trump_lead for rows whose candidate cards (one suit) are ``cards``."""
        n = cards.shape[0]
        top = _last(cards)
        plain = cards & ~(_IS_TEN | _IS_JACK)[None, :]
        low = np.where(plain.any(axis=1), _first(plain), _first(cards))
        return np.where(higher[np.arange(n), top], low, top)

    def _lead(self, obs, rows, code, legal, hand, outstanding, higher, trump, is_t, throw_key, voids):
        n = rows.size
        ar = np.arange(n)
        choice = np.full(n, -1, dtype=np.int64)
        # R10 with kitty_size 0: the bidder's first lead names trump (the best suit among the legal cards)
        no_trump = trump < 0
        if no_trump.any():
            i = np.flatnonzero(no_trump)
            est = self._suit_estimates(hand[i], code[i], 0)
            suits_legal = np.packbits(legal[i], axis=1, bitorder="little") != 0
            _, suit = self._best_suit(est, suits_legal)
            cards = legal[i] & (_SUIT[None, :] == suit[:, None])
            choice[i] = self._trump_lead(cards, higher[i])
        my_trumps = legal & is_t
        has_trumps = my_trumps.any(axis=1)
        n_trumps = my_trumps.sum(axis=1)
        all_trumps = has_trumps & ~(legal & ~is_t).any(axis=1)
        out_trumps = (outstanding & is_t).any(axis=1)
        tcol = np.maximum(trump, 0)
        opp_trump_void = voids[ar, 1, tcol] & voids[ar, 3, tcol]
        bidder_block = obs[rows, BIDDER : BIDDER + 4] > 0.5
        we_bid = bidder_block[:, 0] | bidder_block[:, 2]
        trump_lead = self._trump_lead(my_trumps, higher)
        top = _last(my_trumps)
        undecided = (choice < 0) & ~no_trump
        c1 = undecided & all_trumps
        choice[c1] = trump_lead[c1]
        undecided &= ~c1
        pull = undecided & has_trumps & out_trumps & ~opp_trump_void
        top_boss = pull & ~higher[ar, top]
        choice[top_boss] = top[top_boss]
        c3 = pull & ~top_boss & we_bid & (n_trumps >= 3)
        choice[c3] = trump_lead[c3]
        undecided &= ~top_boss & ~c3
        # a side card that is top of its suit, if the opponents can still follow it
        opp_void = voids[:, 1, :] | voids[:, 3, :]  # (n, 4) by suit
        side = legal & ~is_t & ~higher & ~(opp_void[:, _SUIT] & out_trumps[:, None])
        has_side = side.any(axis=1)
        best_side = np.argmax(np.where(side, _HIGH_FIRST[None, :], -1), axis=1)
        c4 = undecided & has_side & (_RANK[best_side] != RANK_10)
        choice[c4] = best_side[c4]
        undecided &= ~c4
        cheap = _argmin_key(legal, throw_key)
        choice[undecided] = cheap[undecided]
        return choice

    def _follow(self, obs, rows, legal, outstanding, higher, trump, is_t, throw_key, voids, leader):
        n = rows.size
        ar = np.arange(n)
        trick_block = (obs[rows, TRICK : TRICK + 4 * NUM_CARDS] > 0.5).reshape(-1, 4, NUM_CARDS)
        seat_card = np.argmax(trick_block, axis=2)  # (n, 4) card of each rel seat (if it played)
        pos = (4 - leader) & 3  # cards on the table before ours (the observer, rel seat 0, plays next)
        cards = seat_card[ar[:, None], (leader[:, None] + np.arange(3)[None, :]) & 3]  # (n, 3) in play order
        present = np.arange(3)[None, :] < pos[:, None]
        # the winning card so far (R12)
        wi = np.zeros(n, dtype=np.int64)
        best = cards[:, 0].copy()
        for k in (1, 2):
            c = cards[:, k]
            cs, bs = c >> 3, best >> 3
            beats = present[:, k] & np.where(cs == bs, c > best, cs == trump)
            wi = np.where(beats, k, wi)
            best = np.where(beats, c, best)
        win_seat = (leader + wi) & 3
        jack_card = np.where(trump >= 0, trump * 8 + RANK_JACK, -1)
        jack_in = ((cards == jack_card[:, None]) & present).any(axis=1)
        trick_value = (_GV[cards] * present).sum(axis=1) + np.where(jack_in, _JACK_WEIGHT, 0.0)
        # safe(c): no opponent still to act can beat c. After us only rel seats 1..3-pos play, so the only
        # opponent who may still act is the left one (rel 1), when pos <= 2.
        opp_after = pos <= 2
        v1 = voids[:, 1, :]  # (n, 4) suits the left opponent has shown void in
        tcol = np.maximum(trump, 0)
        v1_trump = v1[ar, tcol] & (trump >= 0)
        v1_suit = v1[:, _SUIT]  # (n, 32)
        out_trumps = (outstanding & is_t).any(axis=1) & (trump >= 0)
        safe_trump = ~higher | v1_trump[:, None]
        safe_side = ~(higher & ~v1_suit) & ~((out_trumps & ~v1_trump)[:, None] & v1_suit)
        safe = ~opp_after[:, None] | np.where(is_t, safe_trump, safe_side)
        choice = np.full(n, -1, dtype=np.int64)
        cheap = _argmin_key(legal, throw_key)
        # partner winning: feed points if the partner's card holds, else play cheap
        partner = win_seat == 2
        if partner.any():
            i = np.flatnonzero(partner)
            boss_i = (~higher[i]).astype(np.int64)
            t_i = is_t[i].astype(np.int64)
            fkey = _FEED_ORD[t_i, _RANK[None, :], boss_i] * NUM_CARDS + (NUM_CARDS - 1 - _CARD)
            feed = np.argmax(np.where(legal[i], fkey, -1), axis=1)
            jr = np.arange(i.size)
            feed_ok = safe[i, best[i]] & _FEED_POS[t_i[jr, feed], _RANK[feed], boss_i[jr, feed]]
            choice[i] = np.where(feed_ok, feed, cheap[i])
        # winners: cards that beat the best card (same suit and higher, or a trump over a non-trump)
        best_suit = best >> 3
        same = _SUIT[None, :] == best_suit[:, None]
        winners = legal & np.where(same, _CARD[None, :] > best[:, None], is_t & (best_suit != trump)[:, None])
        undecided = ~partner & winners.any(axis=1)
        pool = winners & safe
        has_pool = pool.any(axis=1)
        is_jack = _CARD[None, :] == jack_card[:, None]
        pts = pool & (_IS_TEN[None, :] | is_jack)
        c_pts = undecided & has_pool & pts.any(axis=1)
        pts_key = np.where(is_jack, _JACK_WEIGHT, _GV[None, :]) * NUM_CARDS + (NUM_CARDS - 1 - _CARD)
        best_pts = np.argmax(np.where(pts, pts_key, -1), axis=1)
        choice[c_pts] = best_pts[c_pts]
        non_trump = pool & ~is_t
        c_nt = undecided & has_pool & ~c_pts & non_trump.any(axis=1)
        choice[c_nt] = _argmin_key(non_trump, throw_key)[c_nt]
        c_low = undecided & has_pool & ~c_pts & ~c_nt & (trick_value > 0)
        choice[c_low] = _argmin_key(pool, throw_key)[c_low]
        plain = winners & ~_IS_TEN[None, :] & ~is_jack
        c_try = undecided & ~has_pool & (trick_value >= 10) & plain.any(axis=1)
        choice[c_try] = _argmin_key(plain, throw_key)[c_try]
        rest = choice < 0
        choice[rest] = cheap[rest]
        return choice


assert NUM_ACTIONS == PLAY_ACTION_BASE + NUM_CARDS
