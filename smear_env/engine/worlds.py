"""Positions for search: the batched engine's per-lane state of a player's view completed by a hidden deal.

:func:`world_states` turns relative :class:`~smear_env.engine.infoset.PlayerView` objects (observer = seat 0)
and :class:`~smear_env.engine.infoset.HiddenDeal` objects consistent with them into the arrays
:meth:`smear_env.engine.vector.VectorGame.load_worlds` writes into its lanes. Everything comes from the view
and the deal; where neither says which cards are which and the observer cannot tell either, the generator
chooses (the order of the stock, which of another bidder's cards came from the kitty).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ..core.cards import STOCK_SIZE, cards_of
from ..core.phases import BIDDING, PLAY, bid_state, card_mask, high_bid_of

HAND_FIELDS = {
    "high_bid": 0, "bidder": -1, "kitty": 0, "trump": -1, "discards": 0, "n_discards": 0, "trick_bits": 0,
    "led": -1, "trick_len": 0, "leader": -1, "tricks_done": 0,
}
"""The batched engine's per-hand integers (rows of its per-hand array, in this order) and their values at
a deal."""
_I = np.int64


class WorldStates(NamedTuple):
    """The state of ``m`` lanes (see :class:`smear_env.engine.vector.VectorGame`): rows of its arrays."""

    phase: np.ndarray
    to_act: np.ndarray
    dealer: np.ndarray
    scores: np.ndarray
    """(m, 2)"""
    hands: np.ndarray
    """(m, 4) card masks."""
    stock: np.ndarray
    """(m, 8) card ids, the kitty first (R9)."""
    per_hand: np.ndarray
    """(len(HAND_FIELDS), m)."""
    per_seat: np.ndarray
    """(4, m, 4): bid states, the trick by seat (-1 none), cards played, voids."""
    won: np.ndarray
    """(m, 2)"""
    discard_order: np.ndarray
    """(m, 3)"""


def world_states(views: Sequence[Any], deals: Sequence[Any], kitty_size: int,
                 rng: np.random.Generator) -> WorldStates:
    """The lane states of ``views`` (relative views, observer = seat 0, with a seat to act) completed by
    ``deals``; ``rng`` chooses what neither tells (see the module docstring)."""
    k = kitty_size
    m = len(views)
    hand_rows = np.zeros((len(HAND_FIELDS), m), dtype=_I)
    seat_rows = np.zeros((4, m, 4), dtype=_I)
    scal = np.zeros((5, m), dtype=_I)  # phase, to_act, dealer, score 0, score 1
    hands = np.zeros((m, 4), dtype=_I)
    stock = np.zeros((m, STOCK_SIZE), dtype=_I)
    won = np.zeros((m, 2), dtype=_I)
    order = np.zeros((m, 3), dtype=_I)
    for j, (v, d) in enumerate(zip(views, deals, strict=True)):
        if v.seat != 0 or v.to_act is None:
            raise ValueError("load_worlds: views must be relative (observer = seat 0) with a seat to act")
        bidding = v.phase == BIDDING
        bids = [bid_state(b) for b in v.bids]
        if bidding:
            high = high_bid_of(bids)
            bidder = bids.index(high) if high else -1
        else:
            high, bidder = int(v.contract), int(v.bidder)
        played = v.played_by[0] | v.played_by[1] | v.played_by[2] | v.played_by[3]
        if bidding or not k:
            kitty = 0
            pool = list(cards_of(d.stock))
            rng.shuffle(pool)
            stock_ids = pool if bidding else [0] * k + pool
        else:
            if bidder == 0:
                kitty = v.kitty
            else:  # which k of the bidder's cards were the kitty: the observer cannot tell
                had = cards_of(d.hands[bidder] | d.discards | v.played_by[bidder])
                kitty = card_mask(int(c) for c in rng.choice(had, size=k, replace=False))
            rest = list(cards_of(d.stock))
            rng.shuffle(rest)
            stock_ids = cards_of(kitty) + rest  # R9: the kitty is the first cards of the stock
        discards = v.discards if bidder == 0 else d.discards
        trick = v.trick
        if trick:
            leader = v.trick_leader
        else:
            leader = v.to_act if v.phase == PLAY else (-1 if bidding else bidder)
        tricks_done = (played.bit_count() - len(trick)) // 4
        hand_rows[:, j] = (high, bidder, kitty, -1 if v.trump is None else v.trump, discards,
                           discards.bit_count(), card_mask(trick),
                           trick[0] >> 3 if trick else -1, len(trick), leader, tricks_done)
        seat_rows[0, j] = bids
        seat_rows[1, j] = -1
        for i, c in enumerate(trick):
            seat_rows[1, j, (leader + i) & 3] = c
        seat_rows[2, j] = v.played_by
        seat_rows[3, j] = v.voids
        scal[:, j] = (int(v.phase), v.to_act, v.dealer, v.scores[0], v.scores[1])
        hands[j] = d.hands
        stock[j, : len(stock_ids)] = stock_ids
        won[j] = v.won_by_team
        ids = cards_of(discards)
        order[j, : len(ids)] = ids
    return WorldStates(scal[0], scal[1], scal[2], scal[3:].T, hands, stock, hand_rows, seat_rows, won, order)
