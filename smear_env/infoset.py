"""What one player may know (R22, R23): :class:`PlayerView`, built from a game by :func:`view_of`.

A view holds the observer's information and nothing more; it is what the observation encoder writes
and what agents reason about. Seats in a view are absolute (``view.seat`` is the observer); use
:meth:`PlayerView.relative` for the observer-relative form (observer = seat 0, left = 1, partner = 2,
right = 3; own team = team 0) that the observation vector holds.

A view keeps who played every card (``played_by``), who won every card (``won_by_team``), the current trick
in play order and the suits each seat has shown void in, but not the order of the finished tricks: that
is all the scoring (R13-R16) and the deal sampler need.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from math import comb

import numpy as np

from .cards import FULL_DECK, HAND_SIZE, STOCK_SIZE
from .game import BIDDING, Game, Phase


@dataclass(frozen=True)
class PlayerView:
    seat: int
    """The observer."""
    phase: Phase
    to_act: int | None
    """Seat to act, or None in HAND_OVER/GAME_OVER."""
    dealer: int
    scores: tuple[int, int]
    """Team scores, indexed by team (team = seat % 2)."""
    target_score: int
    kitty_size: int
    hand: int
    """The observer's cards (bitmask)."""
    bids: tuple[int | None, int | None, int | None, int | None]
    """Per seat this hand: None = not acted yet, 0 = pass, 2..4 = bid (R22)."""
    bidder: int | None
    contract: int | None
    trump: int | None
    """Trump suit 0..3 once known to the observer: the bidder from the trump choice, others from the
    first lead."""
    kitty: int
    """Bitmask of the kitty; 0 unless the observer is the bidder (R23)."""
    discards: int
    """Bitmask of the bidder's discards; 0 unless the observer is the bidder (R23)."""
    played_by: tuple[int, int, int, int]
    """Cards each seat has played this hand (bitmasks, R22)."""
    won_by_team: tuple[int, int]
    """Cards in tricks won by each team this hand."""
    trick_leader: int | None
    """Leader of the current trick, None when no card of it is played."""
    trick: tuple[int, ...]
    """Cards of the current trick in play order."""
    voids: tuple[int, int, int, int]
    """Per seat, 4-bit mask of suits the seat has shown void in by not following suit."""
    hand_sizes: tuple[int, int, int, int]
    legal_actions: tuple[int, ...]
    """Legal action ids when the observer is to act, else empty."""

    def relative(self) -> PlayerView:
        """The same view with seats rotated so the observer is seat 0 (teams: own team = 0)."""
        s = self.seat

        def rot(seq):  # index by relative seat
            return tuple(seq[(r + s) % 4] for r in range(4))

        def rs(x: int | None) -> int | None:
            return None if x is None else (x - s) % 4

        def team_rot(pair):
            return (pair[s & 1], pair[1 - (s & 1)])

        return replace(
            self,
            seat=0,
            to_act=rs(self.to_act),
            dealer=rs(self.dealer),
            scores=team_rot(self.scores),
            bids=rot(self.bids),
            bidder=rs(self.bidder),
            played_by=rot(self.played_by),
            won_by_team=team_rot(self.won_by_team),
            trick_leader=rs(self.trick_leader),
            voids=rot(self.voids),
            hand_sizes=rot(self.hand_sizes),
        )


def view_of(game: Game, seat: int) -> PlayerView:
    """The information of ``seat`` in ``game`` (R22, R23)."""
    bids: list[int | None] = [None, None, None, None]
    for s, b in game.bids:
        bids[s] = b
    is_bidder = game.bidder == seat and game.phase != BIDDING
    trump_known = game.trump_known_to(seat)
    current = game.current_player
    return PlayerView(
        seat=seat,
        phase=Phase(game.phase),
        to_act=current,
        dealer=game.dealer,
        scores=(game.scores[0], game.scores[1]),
        target_score=game.rules.target_score,
        kitty_size=game.rules.kitty_size,
        hand=game.hands[seat],
        bids=tuple(bids),  # type: ignore[arg-type]
        bidder=game.bidder if game.phase != BIDDING else None,
        contract=game.contract if game.phase != BIDDING else None,
        trump=game.trump if trump_known else None,
        kitty=sum(1 << c for c in game.kitty) if is_bidder else 0,
        discards=sum(1 << c for c in game.discards) if is_bidder else 0,
        played_by=tuple(game.played_by),  # type: ignore[arg-type]
        won_by_team=(game.won[0], game.won[1]),
        trick_leader=game.trick_leader if game.trick else None,
        trick=tuple(game.trick),
        voids=tuple(game.voids),  # type: ignore[arg-type]
        hand_sizes=tuple(h.bit_count() for h in game.hands),  # type: ignore[arg-type]
        legal_actions=game.legal_actions() if current == seat else (),
    )


# ============================================================================ info-set sampling
# Everything below is additive: sampling full deals consistent with one player's view, for search agents
# (PIMC). Seats in a sampled deal are the view's seats (absolute for ``view_of``, relative for
# ``view.relative()`` / ``observation.decode``).


@dataclass(frozen=True)
class HiddenDeal:
    """A full assignment of the cards one observer cannot see, consistent with a :class:`PlayerView`.

    Together with the cards already played it accounts for all 32 cards (R2): ``hands`` | ``discards`` |
    ``stock`` | every played card = the deck, all disjoint.
    """

    hands: tuple[int, int, int, int]
    """Current hand of every seat (bitmasks); the observer's own hand is ``view.hand``."""
    discards: int
    """The bidder's discards (R11): the real ones if the observer is the bidder, else sampled; 0 before
    the kitty is taken or with kitty_size 0."""
    stock: int
    """Cards nobody holds or has seen: the 8 stock cards during bidding (R5), afterwards the 8 - k cards
    the bidder did not take (R9). For a bidder observer the kitty is not in it (it is in hand/discards)."""


@lru_cache(maxsize=1 << 16)
def _ways(s: int, caps: tuple[int, ...], counts: tuple[int, ...], allow: tuple[int, ...]) -> int:
    """Number of ways to deal the unknown cards of suits ``s..3`` (``counts[s]`` of each) into slots with
    remaining capacities ``caps``, slot ``j`` taking suit ``t`` only if ``allow[j] >> t & 1``."""
    if s == 4:
        return 1 if not any(caps) else 0
    total = 0
    for dist, w in _distributions(counts[s], caps, allow, s):
        total += w * _ways(s + 1, tuple(c - d for c, d in zip(caps, dist, strict=True)), counts, allow)
    return total


@lru_cache(maxsize=1 << 16)
def _distributions(n: int, caps: tuple[int, ...], allow: tuple[int, ...], s: int) -> tuple:
    """All ways to split ``n`` cards of suit ``s`` over the slots (counts per slot) with their multinomial
    weight (number of card-level assignments)."""
    out: list[tuple[tuple[int, ...], int]] = []
    m = len(caps)

    def rec(j: int, left: int, acc: list[int], w: int) -> None:
        if j == m:
            if left == 0:
                out.append((tuple(acc), w))
            return
        hi = min(left, caps[j]) if allow[j] >> s & 1 else 0
        for c in range(hi + 1):
            acc.append(c)
            rec(j + 1, left - c, acc, w * comb(left, c))
            acc.pop()

    rec(0, n, [], 1)
    return tuple(out)


def _allocate(unknown: int, slots: list[tuple[int, int]], rng: np.random.Generator) -> list[int] | None:
    """Deal the cards of ``unknown`` into ``slots`` = [(size, forbidden suit bits)], uniformly over all
    assignments that respect the forbidden suits; ``None`` when no assignment exists.

    Constraints are per suit, so the number of assignments depends only on how many cards of each suit go
    to each slot: slots without constraints are merged into one, the per-suit counts are drawn from the
    exact counts (``_ways``), then cards are shuffled within each suit and the merged slot is split
    uniformly.
    """
    if sum(size for size, _ in slots) != unknown.bit_count():
        raise ValueError(
            f"sampler: slot sizes {[s for s, _ in slots]} do not add up to the "
            f"{unknown.bit_count()} unknown cards"
        )
    free = [i for i, (_, forb) in enumerate(slots) if not forb]
    constrained = [i for i, (_, forb) in enumerate(slots) if forb]
    out = [0] * len(slots)
    if constrained:
        caps = tuple(slots[i][0] for i in constrained) + (sum(slots[i][0] for i in free),)
        allow = tuple((~slots[i][1]) & 0xF for i in constrained) + (0xF,)
        suit_cards = [[c for c in range(s * 8, s * 8 + 8) if unknown >> c & 1] for s in range(4)]
        counts = tuple(len(cs) for cs in suit_cards)
        if _ways(0, caps, counts, allow) == 0:
            return None
        free_cards: list[int] = []
        for s in range(4):
            options = _distributions(counts[s], caps, allow, s)
            weights = []
            for dist, w in options:
                rest = tuple(c - d for c, d in zip(caps, dist, strict=True))
                weights.append(w * _ways(s + 1, rest, counts, allow))
            total = sum(weights)
            # exact integer draw (the counts can exceed float precision only far beyond 32 cards)
            r = int(rng.integers(total)) if total < (1 << 62) else int(rng.random() * total)
            k = 0
            while r >= weights[k]:
                r -= weights[k]
                k += 1
            dist = options[k][0]
            caps = tuple(c - d for c, d in zip(caps, dist, strict=True))
            cards = suit_cards[s]
            perm = [cards[i] for i in rng.permutation(len(cards))] if len(cards) > 1 else cards
            pos = 0
            for j, d in enumerate(dist):
                chunk = perm[pos:pos + d]
                pos += d
                if j < len(constrained):
                    for c in chunk:
                        out[constrained[j]] |= 1 << c
                else:
                    free_cards.extend(chunk)
    else:
        free_cards = [c for c in range(32) if unknown >> c & 1]
    if free:
        perm = [free_cards[i] for i in rng.permutation(len(free_cards))]
        pos = 0
        for i in free:
            for c in perm[pos:pos + slots[i][0]]:
                out[i] |= 1 << c
            pos += slots[i][0]
    return out


def hidden_discard_count(view: PlayerView) -> int:
    """How many cards the bidder has discarded so far (R11), from any observer's information."""
    if view.bidder is None or view.phase == BIDDING or not view.kitty_size:
        return 0
    b = view.bidder
    return HAND_SIZE + view.kitty_size - view.hand_sizes[b] - view.played_by[b].bit_count()


def sample_hidden(view: PlayerView, rng: np.random.Generator) -> HiddenDeal:
    """A full deal consistent with everything ``view``'s observer has seen (R22, R23), drawn uniformly
    over all such deals (exact, never fails when one exists; the true deal always does).

    Consistency: the observer's own hand; the kitty and discards when the observer is the bidder; no
    played card in any hand; every seat's current hand size; no card of a suit a seat has shown void in
    (``view.voids``); the right number of hidden discards and stock cards. R11: when trump is known, the
    sampled discards of another bidder contain no trump -- a trump may be discarded only when every other
    card in hand is trump, which we treat as impossible unless no deal without it is consistent (then the
    constraint is dropped). Bidding behaviour is not used (no inference from bids).
    """
    seat = view.seat
    k = view.kitty_size
    played = view.played_by[0] | view.played_by[1] | view.played_by[2] | view.played_by[3]
    bidding_over = view.bidder is not None and view.phase != BIDDING
    is_bidder = bidding_over and view.bidder == seat
    known = view.hand | played | (view.discards if is_bidder else 0)
    unknown = FULL_DECK & ~known
    others = [s for s in range(4) if s != seat]
    slots: list[tuple[int, int]] = [(view.hand_sizes[s], view.voids[s] & 0xF) for s in others]
    n_disc = 0
    if bidding_over and not is_bidder and k:
        n_disc = hidden_discard_count(view)
        no_trump = (1 << view.trump) if view.trump is not None else 0
        slots.append((n_disc, no_trump))
    stock_size = STOCK_SIZE - (k if bidding_over else 0)
    slots.append((stock_size, 0))
    got = _allocate(unknown, slots, rng)
    if got is None and n_disc and slots[3][1]:
        slots[3] = (n_disc, 0)  # R11 exception: the bidder held more than 6 trumps
        got = _allocate(unknown, slots, rng)
    if got is None:
        raise ValueError(f"no deal is consistent with this view (seat {seat}, phase {view.phase.name})")
    hands = [0, 0, 0, 0]
    hands[seat] = view.hand
    for i, s in enumerate(others):
        hands[s] = got[i]
    discards = view.discards if is_bidder else (got[3] if n_disc else 0)
    return HiddenDeal(hands=tuple(hands), discards=discards, stock=got[-1])  # type: ignore[arg-type]
