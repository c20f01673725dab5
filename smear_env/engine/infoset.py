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

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from math import comb

import numpy as np

from ..core.cards import FULL_DECK, HAND_SIZE, STOCK_SIZE
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
        """The same view with seats rotated so the observer is seat 0 (teams: own team = 0); a view of seat 0
        is its own relative form."""
        s = self.seat
        if s == 0:
            return self
        odd = s & 1

        def rot(seq):  # index by relative seat: seq[s], seq[s + 1], ... (mod 4)
            return (*seq[s:], *seq[:s])

        def rs(x: int | None) -> int | None:
            return None if x is None else (x - s) & 3

        # Built field by field (dataclasses.replace costs ten times more): act_view gets one per decision.
        return PlayerView(
            seat=0,
            phase=self.phase,
            to_act=rs(self.to_act),
            dealer=(self.dealer - s) & 3,
            scores=(self.scores[odd], self.scores[1 - odd]),
            target_score=self.target_score,
            kitty_size=self.kitty_size,
            hand=self.hand,
            bids=rot(self.bids),
            bidder=rs(self.bidder),
            contract=self.contract,
            trump=self.trump,
            kitty=self.kitty,
            discards=self.discards,
            played_by=rot(self.played_by),
            won_by_team=(self.won_by_team[odd], self.won_by_team[1 - odd]),
            trick_leader=rs(self.trick_leader),
            trick=self.trick,
            voids=rot(self.voids),
            hand_sizes=rot(self.hand_sizes),
            legal_actions=self.legal_actions,
        )


_PHASES = tuple(Phase)  # Phase by value, without the enum call


def view_of(game: Game, seat: int) -> PlayerView:
    """The information of ``seat`` in ``game`` (R22, R23)."""
    bids: list[int | None] = [None, None, None, None]
    for s, b in game.bids:
        bids[s] = b
    past_bidding = game.phase != BIDDING
    is_bidder = past_bidding and game.bidder == seat
    current = game.current_player
    hands = game.hands
    return PlayerView(
        seat=seat,
        phase=_PHASES[game.phase],
        to_act=current,
        dealer=game.dealer,
        scores=(game.scores[0], game.scores[1]),
        target_score=game.rules.target_score,
        kitty_size=game.rules.kitty_size,
        hand=hands[seat],
        bids=tuple(bids),  # type: ignore[arg-type]
        bidder=game.bidder if past_bidding else None,
        contract=game.contract if past_bidding else None,
        trump=game.trump if game.trump_known_to(seat) else None,
        kitty=sum(1 << c for c in game.kitty) if is_bidder else 0,
        discards=sum(1 << c for c in game.discards) if is_bidder else 0,
        played_by=tuple(game.played_by),  # type: ignore[arg-type]
        won_by_team=(game.won[0], game.won[1]),
        trick_leader=game.trick_leader if game.trick else None,
        trick=tuple(game.trick),
        voids=tuple(game.voids),  # type: ignore[arg-type]
        hand_sizes=(hands[0].bit_count(), hands[1].bit_count(), hands[2].bit_count(), hands[3].bit_count()),
        legal_actions=game.legal_actions() if current == seat else (),
    )


# ============================================================================ info-set sampling
# Everything below is additive: sampling full deals consistent with one player's view, for search agents
# (PIMC). Seats in a sampled deal are the view's seats (absolute for ``view_of``, relative for
# ``view.relative()`` / ``decoding.decode``).


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


def _ways(s: int, caps: tuple[int, ...], counts: tuple[int, ...], allow: tuple[int, ...]) -> int:
    """Number of ways to deal the unknown cards of suits ``s..3`` (``counts[s]`` of each) into slots with
    remaining capacities ``caps``, slot ``j`` taking suit ``t`` only if ``allow[j] >> t & 1``."""
    return _ways_from(caps, counts[s:], tuple(a >> s & 0xF for a in allow))


@lru_cache(maxsize=1 << 18)
def _ways_from(caps: tuple[int, ...], counts: tuple[int, ...], allow: tuple[int, ...]) -> int:
    """:func:`_ways` keyed by only what it depends on (the suits left, first one first; each slot's
    permissions shifted to them), so that many views share its table entries."""
    if not counts:
        return 1 if not any(caps) else 0
    total = 0
    rest_allow = tuple(a >> 1 for a in allow)
    for dist, w in _splits(counts[0], caps, tuple(a & 1 for a in allow)):
        total += w * _ways_from(tuple(c - d for c, d in zip(caps, dist, strict=True)), counts[1:], rest_allow)
    return total


def _distributions(n: int, caps: tuple[int, ...], allow: tuple[int, ...], s: int) -> tuple:
    """All ways to split ``n`` cards of suit ``s`` over the slots (counts per slot) with their multinomial
    weight (number of card-level assignments)."""
    return _splits(n, caps, tuple(a >> s & 1 for a in allow))


@lru_cache(maxsize=1 << 18)
def _splits(n: int, caps: tuple[int, ...], takes: tuple[int, ...]) -> tuple:
    """:func:`_distributions` keyed by whether each slot may take the suit (``takes[j]`` 0 or 1)."""
    out: list[tuple[tuple[int, ...], int]] = []
    m = len(caps)

    def rec(j: int, left: int, acc: list[int], w: int) -> None:
        if j == m:
            if left == 0:
                out.append((tuple(acc), w))
            return
        hi = min(left, caps[j]) if takes[j] else 0
        if j == m - 1:  # the last slot takes what is left, or the split fails
            if left <= hi:
                out.append((tuple(acc) + (left,), w))
            return
        for c in range(hi + 1):
            acc.append(c)
            rec(j + 1, left - c, acc, w * comb(left, c))
            acc.pop()

    rec(0, n, [], 1)
    return tuple(out)


def _slot_plan(unknown: int, slots: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """The unconstrained and the constrained slot indices of :func:`_allocate`'s ``slots``, after checking
    that the slot sizes add up to the unknown cards."""
    if sum(size for size, _ in slots) != unknown.bit_count():
        raise ValueError(
            f"sampler: slot sizes {[s for s, _ in slots]} do not add up to the "
            f"{unknown.bit_count()} unknown cards"
        )
    free = [i for i, (_, forb) in enumerate(slots) if not forb]
    constrained = [i for i, (_, forb) in enumerate(slots) if forb]
    return free, constrained


def _split_weights(s: int, caps: tuple[int, ...], counts: tuple[int, ...], allow: tuple[int, ...]
                   ) -> tuple[tuple, list[int]]:
    """Suit ``s``'s splits over the slots with capacities ``caps`` left, and each one's weight: the number
    of complete assignments that start with it (the exact draw of both samplers)."""
    options = _distributions(counts[s], caps, allow, s)
    return options, [w * _ways(s + 1, tuple(c - d for c, d in zip(caps, dist, strict=True)), counts, allow)
                     for dist, w in options]


def _allocate(unknown: int, slots: list[tuple[int, int]], rng: np.random.Generator) -> list[int] | None:
    """Deal the cards of ``unknown`` into ``slots`` = [(size, forbidden suit bits)], uniformly over all
    assignments that respect the forbidden suits; ``None`` when no assignment exists.

    Constraints are per suit, so the number of assignments depends only on how many cards of each suit go
    to each slot: slots without constraints are merged into one, the per-suit counts are drawn from the
    exact counts (``_ways``), then cards are shuffled within each suit and the merged slot is split
    uniformly.
    """
    free, constrained = _slot_plan(unknown, slots)
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
            options, weights = _split_weights(s, caps, counts, allow)
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


def _hidden_slots(view: PlayerView) -> tuple[int, list[tuple[int, int]], int, bool]:
    """What :func:`sample_hidden` deals: ``(unknown cards, slots, hidden discards, observer is the bidder)``;
    the slots are the other seats' hands (seat order after the observer's), the hidden discards when there
    are any (no trump: R11), and the stock, as :func:`_allocate` takes them."""
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
    slots.append((STOCK_SIZE - (k if bidding_over else 0), 0))
    return unknown, slots, n_disc, is_bidder


def _deal_of(view: PlayerView, got: Sequence[int], n_disc: int, is_bidder: bool) -> HiddenDeal:
    """The :class:`HiddenDeal` of one allocation ``got`` of :func:`_hidden_slots`'s slots."""
    hands = [0, 0, 0, 0]
    hands[view.seat] = view.hand
    for i, s in enumerate(s for s in range(4) if s != view.seat):
        hands[s] = int(got[i])
    discards = view.discards if is_bidder else (int(got[3]) if n_disc else 0)
    return HiddenDeal(hands=tuple(hands), discards=discards, stock=int(got[-1]))  # type: ignore[arg-type]


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
    unknown, slots, n_disc, is_bidder = _hidden_slots(view)
    got = _allocate(unknown, slots, rng)
    if got is None and n_disc and slots[3][1]:
        slots[3] = (n_disc, 0)  # R11 exception: the bidder held more than 6 trumps
        got = _allocate(unknown, slots, rng)
    if got is None:
        raise ValueError(f"no deal is consistent with this view (seat {view.seat}, phase {view.phase.name})")
    return _deal_of(view, got, n_disc, is_bidder)


def sample_hidden_many(view: PlayerView, rng: np.random.Generator, n: int) -> list[HiddenDeal]:
    """``n`` independent deals from :func:`sample_hidden`'s distribution (uniform over the deals consistent
    with ``view``, the same R11 rule), drawn together (:func:`_allocate_many`): the sampler of the rollout
    search, which draws 32 deals of each view. The draws from ``rng`` differ from ``n`` calls of
    :func:`sample_hidden`, so the deals do too; the same generator state gives the same deals."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
        raise ValueError(f"sample_hidden_many: n must be an integer >= 0, not {n!r}")
    unknown, slots, n_disc, is_bidder = _hidden_slots(view)
    got = _allocate_many(unknown, slots, rng, int(n))
    if got is None and n_disc and slots[3][1]:
        slots[3] = (n_disc, 0)  # R11 exception, as in sample_hidden
        got = _allocate_many(unknown, slots, rng, int(n))
    if got is None:
        raise ValueError(f"no deal is consistent with this view (seat {view.seat}, phase {view.phase.name})")
    return [_deal_of(view, row, n_disc, is_bidder) for row in got.tolist()]


_CARD_BITS = np.int64(1) << np.arange(32, dtype=np.int64)


def _allocate_many(unknown: int, slots: list[tuple[int, int]], rng: np.random.Generator, n: int
                   ) -> np.ndarray | None:
    """``n`` draws of :func:`_allocate` at once: an ``(n, len(slots))`` int64 array of card bitmasks, each row
    uniform over the assignments that respect the forbidden suits; ``None`` when none exists.

    The same two stages: per suit, how many of its cards each constrained slot takes (drawn from the exact
    counts, grouped by the capacities left so that equal states share one table), then which cards (a
    uniform shuffle of the suit by random keys); the cards left for the unconstrained slots are split by an
    independent uniform shuffle."""
    free, constrained = _slot_plan(unknown, slots)
    free_label = len(slots)
    label = np.full((n, 32), -1, dtype=np.int64)  # the slot of each card; free_label: an unconstrained one
    cards = np.array([c for c in range(32) if unknown >> c & 1], dtype=np.int64)
    label[:, cards] = free_label
    if constrained and n:
        caps0 = tuple(slots[i][0] for i in constrained) + (sum(slots[i][0] for i in free),)
        allow = tuple((~slots[i][1]) & 0xF for i in constrained) + (0xF,)
        suit_cards = [cards[(cards >> 3) == s] for s in range(4)]
        counts = tuple(len(cs) for cs in suit_cards)
        if _ways(0, caps0, counts, allow) == 0:
            return None
        m = len(caps0)
        slot_of = np.array([*constrained, free_label], dtype=np.int64)
        caps = np.tile(np.array(caps0, dtype=np.int64), (n, 1))
        rows = np.arange(n)[:, None]
        for s in range(4):
            if not counts[s]:
                continue
            dist = np.empty((n, m), dtype=np.int64)
            states, which = np.unique(caps, axis=0, return_inverse=True)
            which = which.reshape(-1)
            for g, state in enumerate(states.tolist()):
                options, weights = _split_weights(s, tuple(state), counts, allow)
                members = np.flatnonzero(which == g)
                total = sum(weights)
                if total < (1 << 62):  # exact integer draws, as in _allocate
                    r = rng.integers(total, size=members.size)
                    k = np.searchsorted(np.cumsum(np.array(weights, dtype=np.int64)), r, side="right")
                else:
                    r = rng.random(members.size) * total
                    k = np.searchsorted(np.cumsum(np.array(weights, dtype=np.float64)), r, side="right")
                dist[members] = np.array([o for o, _ in options], dtype=np.int64)[k]
            caps -= dist
            # a uniform shuffle of the suit: position i of the shuffled cards goes to the slot whose
            # cumulative count first exceeds i
            shuffled = suit_cards[s][np.argsort(rng.random((n, counts[s])), axis=1)]
            ends = np.cumsum(dist, axis=1)[:, None, :]
            pos_slot = (np.arange(counts[s])[None, :, None] >= ends).sum(axis=2)
            label[rows, shuffled] = slot_of[pos_slot]
    if free and n:
        keys = np.where(label == free_label, rng.random((n, 32)), np.inf)
        n_free = sum(slots[i][0] for i in free)
        picked = np.argsort(keys, axis=1)[:, :n_free]
        label[np.arange(n)[:, None], picked] = np.repeat(np.array(free, dtype=np.int64),
                                                         [slots[i][0] for i in free])[None, :]
    out = np.zeros((n, len(slots)), dtype=np.int64)
    for i in range(len(slots)):
        out[:, i] = ((label == i) * _CARD_BITS).sum(axis=1)
    return out
