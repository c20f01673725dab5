"""Deals of the batched engine's lanes (R4, R5): from the seed's hash, or from a deal source.

Deals come from a counter-based hash (splitmix64, :func:`smear_env.core.rules.hashed_deals`), not from a
shared generator, so a lane's games do not depend on the number of lanes or on the other lanes: hand ``h``
of game ``g`` in lane ``l`` of an engine seeded ``s`` is :func:`lane_deal` ``(s, l, g, h)``, and the first
dealer of that game (R4) comes from the same hash. The reference engine plays exactly the same game from
these deals: :func:`reference_game` builds it (``Game.from_deal``), and each later hand is
``game.start_next_hand(deal=lane_deal(s, l, g, game.hand_number + 1)[1:])``. Records carry
``"seed": null`` (their deals are explicit).

With ``deals=source`` (a :class:`VectorDealSource`) every hand is dealt by ``source.deals(lanes,
games, hands)`` instead (``seed`` is then unused): e.g. the duplicate evaluator's deal sequences
(``smear_env.evaluation.batched``), so a lane plays exactly the reference evaluator's game.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from ..core import rules as R
from ..core.cards import NUM_CARDS
from ..core.config import SmearRules
from ..core.seeding import SEED_LIMIT, check_seed  # noqa: F401 (SEED_LIMIT re-exported: the deal hash's key range)
from .game import Game

_I = np.int64


class VectorDealSource(Protocol):
    """Deals from outside the engine (e.g. the duplicate evaluator's deal sequences).

    ``deals(lanes, games, hands)`` gets (k,) int64 arrays -- the lanes to deal, the index of the game in
    progress in each (``VectorGame.game_index``) and the hand within that game (``hand_number``: hands
    dealt before it, thrown-in ones included) -- and returns ``(perm, first_dealer)``: ``perm`` (k, 32)
    the deck of each deal (cards 0-5 to seat 0, ..., 18-23 to seat 3, 24-31 the stock in order, kitty
    first; the order within a hand does not matter) and ``first_dealer`` (k,) the game's first dealer
    (R4, used where ``hands == 0``). Calls come in the order the engine deals (lanes ascending within a
    call), so a source may hand out games from a queue when it sees ``hands == 0``."""

    def deals(self, lanes: np.ndarray, games: np.ndarray, hands: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ...


def source_deals(source: VectorDealSource, lanes: np.ndarray, games: np.ndarray,
                 hands: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``source.deals(lanes, games, hands)`` checked: int64 arrays of the promised shapes, each deal a
    permutation of the 32 cards and each first dealer a seat (else ``ValueError`` naming the source)."""
    perm, dealer = source.deals(lanes, games, hands)
    perm = np.asarray(perm, dtype=_I)
    dealer = np.asarray(dealer, dtype=_I)
    k = lanes.shape[0]
    if perm.shape != (k, NUM_CARDS) or dealer.shape != (k,):
        raise ValueError(f"deal source {source!r} returned shapes {perm.shape}, {dealer.shape}; expected "
                         f"({k}, {NUM_CARDS}) and ({k},)")
    if ((dealer < 0) | (dealer > 3)).any() or (np.sort(perm, axis=1) != np.arange(NUM_CARDS)).any():
        raise ValueError(f"deal source {source!r} returned a deal that is not a permutation of the 32 cards "
                         "or a first dealer outside 0..3")
    return perm, dealer


def deck_of(hands: Sequence[Sequence[int]], stock: Sequence[int]) -> list[int]:
    """The ``perm`` row of a :class:`VectorDealSource` for a deal ``(hands, stock)`` (e.g.
    ``DealSequence.deal(i)``): the four hands then the stock."""
    return [c for h in hands for c in h] + list(stock)


def lane_deal(seed: int, lane: int, game: int, hand: int) -> tuple[int, list[list[int]], list[int]]:
    """``(first_dealer, hands, stock)`` of hand ``hand`` of game ``game`` in lane ``lane`` of a
    :class:`~smear_env.engine.vector.VectorGame` seeded ``seed``; ``hands`` are 4 sorted lists of 6 card ids,
    ``stock`` 8 card ids in order (the kitty first, R9). ``first_dealer`` is the game's first dealer (R4),
    meaningful for hand 0."""
    return R.lane_deal(check_seed(seed, allow_none=False), lane, game, hand)


def reference_game(rules: SmearRules, seed: int, lane: int, game: int) -> Game:
    """The reference :class:`~smear_env.engine.game.Game` that lane ``lane`` plays as its game ``game``, at
    the start of its first hand. Deal each later hand with
    ``g.start_next_hand(deal=lane_deal(seed, lane, game, g.hand_number + 1)[1:])``."""
    dealer, hands, stock = lane_deal(seed, lane, game, 0)
    return Game.from_deal(hands, stock, dealer, rules)
