"""A rule-based baseline player that uses only its own information (R22, R23).

The agent reasons on the observer-relative :class:`~smear_env.engine.infoset.PlayerView` (observer = seat 0,
left = 1, partner = 2, right = 3; own team = team 0): ``act(obs)`` decodes the observation vector with
``smear_env.engine.decoding.decode``; :meth:`HeuristicAgent.act_view` takes a relative view directly (the
evaluation loop uses it to skip the encode/decode round trip; both give the same action).

Design (the numbers are hand-tuned estimates, not fitted):

* **Bidding** (R6-R8). For every suit, estimate the points the hand would win with that suit as trump:
  High (R13: the ace; ``in_play`` also a king/queen that the missing higher trumps may not beat), Low
  (R14: the 7; ``in_play`` also an 8/9), Jack (R15: the jack, better with protection) and Game (R16: trump
  length, honours and tens; side tens can be banked by discarding them, R11). The bidder will see
  ``kitty_size`` more cards (R9), so the estimate adds the expected gain of k random unseen cards. Bid the
  floor of the best estimate plus one (the estimate ignores the partner's cards; the offset was tuned in
  duplicate self-play) if it is at least 2 and beats the current bid; a
  partner's bid is only overbid with a clearly stronger hand; a stuck dealer (R8 ``dealer_must_bid``)
  bids conservatively (2 unless the hand is clearly worth more).
* **Trump** (R10): the suit with the best estimate of the hand after the kitty.
* **Discards** (R11; they count for the bidder's Game total, R16): trump is kept; side tens are banked
  (a side ten is beaten by J, Q, K and A, so it is rarely safe in play); then side cards that cannot win
  (short suits first, to make voids for trumping); side aces are kept.
* **Play** (R12). High and Low are fixed by who holds the cards (every dealt card is played), so play
  fights for Jack (R15) and Game (R16): lead the top outstanding trump to pull trump (and the jack) when
  holding it; take tricks that hold points with the cheapest card that wins (and is safe against the
  players still to act when possible); feed tens and the jack of trump to a partner who is safely
  winning; don't trump tricks without points; otherwise throw the card that costs least.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.actions import (
    DISCARD_ACTION_BASE,
    MAX_BID,
    PASS_ACTION,
    PLAY_ACTION_BASE,
    TRUMP_ACTION_BASE,
    bid_action,
    is_bid,
    is_discard,
    is_play,
    is_trump,
)
from ..core.cards import (
    FULL_DECK,
    NUM_SUITS,
    RANK_7,
    RANK_10,
    RANK_ACE,
    RANK_JACK,
    RANK_KING,
    SUIT_MASKS,
)
from ..core.config import HIGH_LOW_ACE_SEVEN, SmearRules
from ..core.rules import RANK_GAME_VALUE, TRICK_KEYS, trick_winner
from ..engine.decoding import decode
from ..engine.infoset import PlayerView

# The three other players hold 18 of the 26 cards an observer has not seen at the deal; the partner 6,
# the opponents 12, the stock 8.
_UNSEEN = 26.0
_P_OPP = 12.0 / _UNSEEN
_P_PARTNER = 6.0 / _UNSEEN
# Bid floor(estimate - margin). The estimate is conservative (it ignores most of what the partner
# brings); a negative margin was tuned by duplicate self-play at default rules, 400 games each:
# -0.5 beat +0.15 88%, -0.8 beat -0.5 73%, -1.0 beat -0.8 57%, -1.25 lost to -1.0 (45%).
HEURISTIC_BID_MARGIN = -1.0
MIN_BID_ESTIMATE = 1.5  # never bid (unless stuck) on a raw estimate below this
STUCK_DEALER_MARGIN = 0.5  # R8 dealer_must_bid: a stuck dealer is more conservative by this much
JACK_WEIGHT = 15.0  # the jack of trump is a whole point: worth more than one ten of Game


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


def best_suit(hand: int, rules: SmearRules, kitty_cards: int = 0, suits: tuple[int, ...] | None = None):
    """``(estimate, suit)`` of the suit with the best :func:`suit_estimate`."""
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


class HeuristicAgent:
    """Rule-based baseline; see the module docstring for the design."""

    name = "heuristic"

    def __init__(
        self,
        rules: SmearRules | None = None,
        bid_margin: float = HEURISTIC_BID_MARGIN,
        min_estimate: float = MIN_BID_ESTIMATE,
    ) -> None:
        self.rules = rules if rules is not None else SmearRules()
        self.bid_margin = float(bid_margin)
        self.min_estimate = float(min_estimate)
        self.seat = 0
        self._rng = np.random.default_rng(0)

    def start_game(self, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        self.seat = seat
        self.rules = rules
        self._rng = rng

    # ------------------------------------------------------------------ entry points
    def act(self, observation: dict[str, Any]) -> int:
        mask = np.asarray(observation["action_mask"])
        view = decode(observation["observation"], mask)
        legal = tuple(int(a) for a in np.flatnonzero(mask))
        return self._choose(view, legal)

    def act_view(self, view: PlayerView) -> int:
        """The action for an observer-relative view (``view_of(game, seat).relative()``)."""
        return self._choose(view, tuple(view.legal_actions))

    def _choose(self, view: PlayerView, legal: tuple[int, ...]) -> int:
        if not legal:
            raise ValueError("HeuristicAgent.act: no legal action (is this agent to act?)")
        if len(legal) == 1:
            return legal[0]
        a0 = legal[0]
        if is_bid(a0):
            action = self._bid(view, legal)
        elif is_trump(a0):
            action = self._trump(view, legal)
        elif is_discard(a0):
            action = self._discard(view, legal)
        elif is_play(a0):
            action = self._play(view, legal)
        else:  # pragma: no cover - the action layout has no other kind
            raise ValueError(f"unknown action kind {a0!r}")
        if action not in legal:  # pragma: no cover - a bug in the rules below
            raise AssertionError(f"heuristic chose illegal action {action} (legal {legal})")
        return action

    # ------------------------------------------------------------------ bidding (R6-R8)
    def _bid(self, view: PlayerView, legal: tuple[int, ...]) -> int:
        rules = self.rules
        est, _ = best_suit(view.hand, rules, kitty_cards=rules.kitty_size)
        high = max((b for b in view.bids if b), default=0)
        stuck = PASS_ACTION not in legal  # R8 dealer_must_bid: the dealer may not pass
        margin = self.bid_margin + (STUCK_DEALER_MARGIN if stuck else 0.0)
        want = min(MAX_BID, int(np.floor(est - margin)))
        partner_high = high > 0 and view.bids[2] == high
        if est < self.min_estimate or (partner_high and est - margin < high + 1.5):
            want = 0  # don't overbid a partner without a clearly better hand
        if want >= 2 and want > high:
            return bid_action(want)
        if stuck:
            return legal[0]  # the lowest bid allowed
        return PASS_ACTION

    # ------------------------------------------------------------------ trump (R10)
    def _trump(self, view: PlayerView, legal: tuple[int, ...]) -> int:
        suits = tuple(a - TRUMP_ACTION_BASE for a in legal)
        _, suit = best_suit(view.hand, self.rules, 0, suits)
        return TRUMP_ACTION_BASE + suit

    # ------------------------------------------------------------------ discards (R11)
    def _discard(self, view: PlayerView, legal: tuple[int, ...]) -> int:
        hand = view.hand
        trump = view.trump if view.trump is not None else -1
        cards = [a - DISCARD_ACTION_BASE for a in legal]
        if any(c >> 3 == trump for c in cards):
            # only trumps left (R11): shed the least useful trump (never A, 7, J, 10 if avoidable)
            return DISCARD_ACTION_BASE + min(cards, key=lambda c: self._throw_cost(c, trump, hand, 0))
        return DISCARD_ACTION_BASE + min(cards, key=lambda c: keep_value(c, hand))

    # ------------------------------------------------------------------ play (R12)
    def _throw_cost(self, c: int, trump: int, hand: int, outstanding: int) -> float:
        """How much it costs to give card ``c`` away in a trick we lose (lower = throw first)."""
        s, r = c >> 3, c & 7
        boss = not (outstanding & SUIT_MASKS[s] & ~((1 << (c + 1)) - 1))
        if s == trump:
            if r == RANK_JACK:
                return 60.0
            cost = 20.0 + 2 * r + RANK_GAME_VALUE[r] * 2
            return cost + (10.0 if boss else 0.0)
        cost = RANK_GAME_VALUE[r] * 2 + 0.1 * r
        if boss:
            cost += 8.0
        return cost

    def _play(self, view: PlayerView, legal: tuple[int, ...]) -> int:
        hand = view.hand
        trick = view.trick
        trump = view.trump if view.trump is not None else -1
        played = view.played_by[0] | view.played_by[1] | view.played_by[2] | view.played_by[3]
        outstanding = FULL_DECK & ~hand & ~played & ~view.discards & ~view.kitty
        cards = [a - PLAY_ACTION_BASE for a in legal]
        if not trick:
            return PLAY_ACTION_BASE + self._lead(view, cards, trump, outstanding)
        return PLAY_ACTION_BASE + self._follow(view, cards, trump, outstanding)

    def _lead(self, view: PlayerView, cards: list[int], trump: int, outstanding: int) -> int:
        hand = view.hand
        if trump < 0:
            # R10 with kitty_size 0: the bidder's first lead names trump.
            _, suit = best_suit(hand, self.rules, 0, tuple({c >> 3 for c in cards}))
            suit_cards = [c for c in cards if c >> 3 == suit]
            return self._trump_lead(suit_cards, suit, outstanding)
        my_trumps = [c for c in cards if c >> 3 == trump]
        out_trumps = outstanding & SUIT_MASKS[trump]
        opp_trump_void = all(view.voids[s] >> trump & 1 for s in (1, 3))
        we_bid = view.bidder is not None and view.bidder % 2 == 0
        if my_trumps and len(my_trumps) == len(cards):
            return self._trump_lead(my_trumps, trump, outstanding)
        if my_trumps and out_trumps and not opp_trump_void:
            top = max(my_trumps)
            if not out_trumps >> top:  # we hold the top outstanding trump: pull trump (and the jack)
                return top
            if we_bid and len(my_trumps) >= 3:
                return self._trump_lead(my_trumps, trump, outstanding)
        # a side card that is top of its suit, if the opponents can still follow it
        side = [c for c in cards if c >> 3 != trump]
        best_side = None
        for c in side:
            s = c >> 3
            higher = outstanding & SUIT_MASKS[s] & ~((1 << (c + 1)) - 1)
            if higher:
                continue
            opp_void = any(view.voids[o] >> s & 1 for o in (1, 3))
            if opp_void and out_trumps:
                continue
            if best_side is None or c & 7 > best_side & 7:
                best_side = c
        if best_side is not None and (best_side & 7) != RANK_10:
            return best_side
        return min(cards, key=lambda c: self._throw_cost(c, trump, hand, outstanding))

    @staticmethod
    def _trump_lead(suit_cards: list[int], suit: int, outstanding: int) -> int:
        top = max(suit_cards)
        if not (outstanding & SUIT_MASKS[suit]) >> top:
            return top  # the boss trump
        # otherwise a low trump that carries no points (keep the ten and the jack back)
        plain = [c for c in suit_cards if (c & 7) not in (RANK_10, RANK_JACK)]
        return min(plain) if plain else min(suit_cards)

    def _follow(self, view: PlayerView, cards: list[int], trump: int, outstanding: int) -> int:
        hand = view.hand
        trick = view.trick
        leader = view.trick_leader if view.trick_leader is not None else 0
        wi = trick_winner(trick, trump)  # R12
        win_seat = (leader + wi) % 4
        best = trick[wi]
        pos = len(trick)  # my position in the trick (0-based)
        after = [(leader + i) % 4 for i in range(pos + 1, 4)]  # seats still to play after me
        opps_after = [s for s in after if s % 2 == 1]
        jack_card = trump * 8 + RANK_JACK if trump >= 0 else -1
        trick_value = sum(RANK_GAME_VALUE[c & 7] for c in trick)
        if jack_card in trick:
            trick_value += JACK_WEIGHT

        def throw(c: int) -> float:
            return self._throw_cost(c, trump, hand, outstanding)

        def safe(c: int) -> bool:
            """No opponent still to act can beat ``c`` (as far as the observer can tell)."""
            if not opps_after:
                return True
            s = c >> 3
            higher_same = outstanding & SUIT_MASKS[s] & ~((1 << (c + 1)) - 1)
            if s == trump:
                return not higher_same or all(view.voids[o] >> trump & 1 for o in opps_after)
            if higher_same and not all(view.voids[o] >> s & 1 for o in opps_after):
                return False
            out_trumps = outstanding & SUIT_MASKS[trump] if trump >= 0 else 0
            if out_trumps and not all(view.voids[o] >> trump & 1 for o in opps_after):
                # an opponent may trump in (R12); likely only when void in the led suit
                return not any(view.voids[o] >> s & 1 for o in opps_after)
            return True

        # Partner winning: feed points if the partner's card holds, else play cheap.
        if win_seat == 2:
            if safe(best):
                feed = max(cards, key=lambda c: self._feed_value(c, trump, outstanding))
                if self._feed_value(feed, trump, outstanding) > 0:
                    return feed
            return min(cards, key=throw)

        keys = TRICK_KEYS[trump][trick[0] >> 3]  # R12: the cards that beat the best card so far
        winners = [c for c in cards if keys[c] > keys[best]]
        if winners:
            pool = [c for c in winners if safe(c)]
            if pool:
                # take the trick with a ten / the jack of our own when that is safe (R15, R16)
                pts = [c for c in pool if (c & 7) == RANK_10 or c == jack_card]
                if pts:
                    return max(pts, key=lambda c: JACK_WEIGHT if c == jack_card else RANK_GAME_VALUE[c & 7])
                non_trump = [c for c in pool if c >> 3 != trump]
                if non_trump:
                    return min(non_trump, key=throw)
                if trick_value > 0:
                    return min(pool, key=throw)  # the lowest winning trump; no trump wasted on empty tricks
            elif trick_value >= 10:
                # nothing safe, but the trick is worth a try with the cheapest winner (not a point card)
                plain = [c for c in winners if (c & 7) != RANK_10 and c != jack_card]
                if plain:
                    return min(plain, key=throw)
        return min(cards, key=throw)

    @staticmethod
    def _feed_value(c: int, trump: int, outstanding: int) -> float:
        """How good it is to give card ``c`` to a partner who wins the trick."""
        s, r = c >> 3, c & 7
        value = float(RANK_GAME_VALUE[r])
        if s == trump:
            if r == RANK_JACK:
                return JACK_WEIGHT
            if r == RANK_10:
                return 10.0
            return -5.0  # keep other trumps
        boss = not (outstanding & SUIT_MASKS[s] & ~((1 << (c + 1)) - 1))
        if boss and r != RANK_10:
            return -1.0  # a winner of its own later
        if r in (RANK_10,):
            return value
        return value - 2.5  # K/Q/J: only worth feeding when there is nothing better


__all__ = ["HeuristicAgent", "suit_estimate", "best_suit"]
