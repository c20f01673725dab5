"""The rules engine: one game of Smear as an explicit state machine (R1-R21).

Plain Python on small ints and bitmasks; imports neither gymnasium, pettingzoo nor torch.

Phases: ``BIDDING`` -> (``TRUMP`` -> ``DISCARD`` when kitty_size > 0) -> ``PLAY`` -> ``HAND_OVER``
(call :meth:`Game.start_next_hand`) or ``GAME_OVER``. A thrown-in hand (R8) also ends in ``HAND_OVER``
with ``hand_thrown_in`` set. All randomness comes from one ``numpy.random.Generator`` owned by the game.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum
from typing import Any

import numpy as np

from .actions import (
    DISCARD_ACTION_BASE,
    MAX_BID,
    NUM_ACTIONS,
    PASS_ACTION,
    PLAY_ACTION_BASE,
    TRUMP_ACTION_BASE,
    action_bid,
    action_id,
    action_name,
    bid_action,
    short_repr,
)
from .cards import (
    CARD_NAMES,
    FULL_DECK,
    HAND_SIZE,
    NUM_CARDS,
    NUM_TRICKS,
    RANK_7,
    RANK_ACE,
    RANK_JACK,
    STOCK_SIZE,
    SUIT_MASKS,
    game_points,
    names,
    to_card,
)
from .config import SmearRules


class Phase(IntEnum):
    BIDDING = 0
    TRUMP = 1
    DISCARD = 2
    PLAY = 3
    HAND_OVER = 4
    GAME_OVER = 5


BIDDING, TRUMP, DISCARD, PLAY, HAND_OVER, GAME_OVER = (int(p) for p in Phase)
NUM_PLAYERS = 4
POINT_NAMES = ("high", "low", "jack", "game")
STATE_FIELDS = (
    "phase", "scores", "winner", "dealer", "hand_number", "hands", "deal", "stock", "bids", "high_bid",
    "bidder", "contract", "kitty", "trump", "discards", "trick", "trick_seats", "trick_leader", "tricks",
    "won", "played_by", "voids", "to_act", "hand_thrown_in", "hand_result", "history",
)
"""The state a :class:`Game` is made of besides its rules and generator (:meth:`Game.from_state`)."""


class IllegalActionError(ValueError):
    """An action that is not legal in the current state; the state is left unchanged."""


class GameStateError(RuntimeError):
    """A call that does not fit the phase (e.g. apply() after the game is over)."""


def team_of(seat: int) -> int:
    """R1: team 0 = seats 0 and 2, team 1 = seats 1 and 3."""
    return seat & 1


# Action ids of the set bits of a card mask, by byte: _ACTIONS_BY_BYTE[base][byte_index][byte_value].
_ACTIONS_BY_BYTE = {
    base: tuple(
        tuple(tuple(base + 8 * i + r for r in range(8) if b >> r & 1) for b in range(256)) for i in range(4)
    )
    for base in (DISCARD_ACTION_BASE, PLAY_ACTION_BASE)
}


def _names(cards: Sequence[int]) -> list[str]:
    n = CARD_NAMES
    return [n[c] for c in cards]


def _mask_actions(mask: int, base: int) -> tuple[int, ...]:
    """Action ids ``base + card`` of the cards in ``mask``, ascending."""
    t0, t1, t2, t3 = _ACTIONS_BY_BYTE[base]
    return t0[mask & 255] + t1[mask >> 8 & 255] + t2[mask >> 16 & 255] + t3[mask >> 24]


# ---------------------------------------------------------------------------- rules as pure functions
# The legality rules on plain values, for the engine and for anything that holds only a player's view
# (observation.legal_actions_of); nothing else re-derives them.
def bid_actions(high_bid: int, stuck: bool) -> tuple[int, ...]:
    """R6: pass, or a bid higher than every earlier bid (``high_bid``, 0 = none); R8 ``dealer_must_bid``: a
    ``stuck`` dealer may not pass."""
    first = bid_action(high_bid + 1) if high_bid else bid_action(2)
    bids = tuple(range(first, bid_action(MAX_BID) + 1))
    return bids if stuck else (PASS_ACTION, *bids)


def trump_actions(hand: int) -> tuple[int, ...]:
    """R10: a trump suit among the suits in the bidder's hand (after the kitty)."""
    return tuple(TRUMP_ACTION_BASE + s for s in range(4) if hand & SUIT_MASKS[s])


def discard_actions(hand: int, trump: int) -> tuple[int, ...]:
    """R11: a trump may be discarded only while every card in the hand is a trump."""
    return _mask_actions(hand & ~SUIT_MASKS[trump] or hand, DISCARD_ACTION_BASE)


def playable(hand: int, led: int, trump: int, first_lead: bool) -> int:
    """R12 (and R10): the card mask playable from ``hand``; ``led`` = the first card of the trick (-1 when
    leading), ``trump`` = -1 while unknown, ``first_lead``: no trick of the hand finished yet."""
    if led < 0:
        if first_lead and trump >= 0:
            return hand & SUIT_MASKS[trump]  # R10: with kitty_size > 0 the first lead is of the trump suit
        return hand
    follow = hand & SUIT_MASKS[led >> 3]
    if not follow:
        return hand
    if trump >= 0:
        return follow | (hand & SUIT_MASKS[trump])
    return follow  # unreachable in a game: trump is always known once a card is led


def play_actions(hand: int, led: int, trump: int, first_lead: bool) -> tuple[int, ...]:
    """Play action ids of :func:`playable`."""
    return _mask_actions(playable(hand, led, trump, first_lead), PLAY_ACTION_BASE)


def deal_from(perm: Sequence[int]) -> tuple[list[list[int]], list[int]]:
    """R5: a shuffled deck (a permutation of the 32 card ids) as ``(hands, stock)``: 6 cards to each seat in
    turn, the last 8 to the stock (the kitty is its first cards, R9)."""
    hands = [sorted(perm[i * HAND_SIZE:(i + 1) * HAND_SIZE]) for i in range(NUM_PLAYERS)]
    return hands, list(perm[NUM_PLAYERS * HAND_SIZE:])


def shuffled_deal(rng: np.random.Generator) -> tuple[list[list[int]], list[int]]:
    """A uniformly random deal (R5) from ``rng``: :func:`deal_from` of ``rng.permutation(32)``."""
    return deal_from(rng.permutation(NUM_CARDS).tolist())


def make_rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer)):
        raise TypeError(f"seed must be an int, a numpy Generator or None, not {type(seed).__name__}")
    return np.random.default_rng(seed)


class Game:
    """A game of Smear to ``rules.target_score``.

    Create from a seed (``Game(rules, seed=1)``) or from a given deal (:meth:`from_deal`).
    Drive it with :meth:`legal_actions` and :meth:`apply`; read ``phase``, ``current_player``,
    ``scores``, ``winner``. Attributes are read-only by convention; hands are card bitmasks.
    """

    __slots__ = (
        "rules", "rng", "seed", "phase", "scores", "winner", "dealer", "hand_number",
        "hands", "deal", "stock", "bids", "high_bid", "bidder", "contract", "kitty", "trump",
        "discards", "trick", "trick_seats", "trick_leader", "tricks", "won", "played_by", "voids",
        "to_act", "hand_thrown_in", "hand_result", "history", "_legal", "_next_dealer",
    )

    def __init__(
        self,
        rules: SmearRules | None = None,
        seed: int | np.random.Generator | None = None,
        *,
        dealer: int | None = None,
        scores: tuple[int, int] = (0, 0),
    ) -> None:
        self._setup(rules, seed, scores)
        if dealer is None:
            dealer = int(self.rng.integers(NUM_PLAYERS))  # R4: first dealer uniformly at random
        self._deal_hand(_check_seat(dealer, "dealer"), None)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_deal(
        cls,
        hands: Sequence[Sequence[int | str]],
        stock: Sequence[int | str],
        dealer: int,
        rules: SmearRules | None = None,
        *,
        scores: tuple[int, int] = (0, 0),
        seed: int | np.random.Generator | None = None,
    ) -> Game:
        """A game whose first hand is the given deal (card ids or names like ``"TS"``).

        ``stock`` order matters: the kitty is its first ``kitty_size`` cards (R9). Later hands are
        dealt from ``seed``.
        """
        game = cls.__new__(cls)
        game._setup(rules, seed, scores)
        game._deal_hand(_check_seat(dealer, "dealer"), (hands, stock))
        return game

    @classmethod
    def from_state(
        cls,
        rules: SmearRules | None,
        state: dict[str, Any],
        *,
        seed: int | np.random.Generator | None = None,
        next_dealer: int | None = None,
    ) -> Game:
        """A game in a given state, e.g. mid-hand (for search: :func:`smear_env.infoset.determinize`).

        ``state`` holds every name of :data:`STATE_FIELDS` (the attributes of the same names, taken as
        given: pass copies); ``next_dealer`` is the dealer of the next hand once this one is over (default:
        R4 from the state). Unknown or missing names are an error."""
        missing = [k for k in STATE_FIELDS if k not in state]
        extra = [k for k in state if k not in STATE_FIELDS]
        if missing or extra:
            raise ValueError(f"Game.from_state: missing fields {missing}, unknown fields {extra}")
        game = cls.__new__(cls)
        game._setup(rules, seed, state["scores"])
        for k in STATE_FIELDS:
            setattr(game, k, state[k])
        game._legal = None
        if next_dealer is None:
            d = state["dealer"]
            over = state["phase"] >= HAND_OVER and not state["hand_thrown_in"]
            next_dealer = (d + 1) % NUM_PLAYERS if over else d
        game._next_dealer = next_dealer
        return game

    def _setup(self, rules: SmearRules | None, seed: int | np.random.Generator | None,
               scores: Sequence[int]) -> None:
        """What every constructor sets first: rules, generator, scores, an empty history."""
        self.rules = rules if rules is not None else SmearRules()
        if not isinstance(self.rules, SmearRules):
            raise TypeError(f"rules must be a SmearRules, not {type(self.rules).__name__}")
        self.seed = seed if isinstance(seed, int) else None
        self.rng = make_rng(seed)
        self.scores = [int(scores[0]), int(scores[1])]
        self.winner: int | None = None
        self.hand_number = 0
        self.history: list[dict[str, Any]] = []  # records of finished hands (smear-record/1 "hands")

    def _deal_hand(
        self, dealer: int, given: tuple[Sequence[Sequence[int | str]], Sequence[int | str]] | None
    ) -> None:
        """R5: 6 cards each, 8 to the stock; then bidding starts left of the dealer (R6)."""
        if given is None:
            deal, stock = shuffled_deal(self.rng)
        else:
            deal, stock = _check_deal(*given)
        self.dealer = dealer
        self.deal = deal
        self.stock = stock
        self.hands = [sum(1 << c for c in h) for h in deal]
        self.bids: list[tuple[int, int]] = []
        self.high_bid = 0
        self.bidder: int | None = None
        self.contract: int | None = None
        self.kitty: list[int] = []
        self.trump = -1
        self.discards: list[int] = []
        self.trick: list[int] = []
        self.trick_seats: list[int] = []
        self.trick_leader = -1
        # completed tricks: (leader, seats in play order, cards in play order, winner)
        self.tricks: list[tuple[int, tuple[int, ...], tuple[int, ...], int]] = []
        self.won = [0, 0]
        self.played_by = [0, 0, 0, 0]
        self.voids = [0, 0, 0, 0]
        self.hand_thrown_in = False
        self.hand_result: dict[str, Any] | None = None
        self.phase = BIDDING
        self.to_act = (dealer + 1) % NUM_PLAYERS
        self._legal: tuple[int, ...] | None = None
        self._next_dealer = dealer

    def start_next_hand(
        self, deal: tuple[Sequence[Sequence[int | str]], Sequence[int | str]] | None = None
    ) -> None:
        """Deal the next hand after ``HAND_OVER`` (R4: the deal passes left; a thrown-in hand is redealt
        by the same dealer). ``deal=(hands, stock)`` uses a given deal instead of the generator."""
        if self.phase != HAND_OVER:
            raise GameStateError(f"start_next_hand() needs phase HAND_OVER, not {Phase(self.phase).name}")
        self.hand_number += 1
        self._deal_hand(self._next_dealer, deal)

    def copy(self) -> Game:
        """An independent copy (the generator is copied too, so both continue identically)."""
        rng = np.random.Generator(type(self.rng.bit_generator)())
        rng.bit_generator.state = self.rng.bit_generator.state
        state = {k: getattr(self, k) for k in STATE_FIELDS}
        for k in ("scores", "hands", "stock", "bids", "kitty", "discards", "trick", "trick_seats", "tricks",
                  "won", "played_by", "voids", "history"):
            state[k] = state[k][:]
        state["deal"] = [h[:] for h in self.deal]
        g = Game.from_state(self.rules, state, seed=rng, next_dealer=self._next_dealer)
        g.seed = self.seed
        g._legal = self._legal
        return g

    # ------------------------------------------------------------------ queries
    @property
    def current_player(self) -> int | None:
        """The seat to act, or ``None`` in ``HAND_OVER`` / ``GAME_OVER``."""
        return self.to_act if self.phase < HAND_OVER else None

    @property
    def is_over(self) -> bool:
        return self.phase == GAME_OVER

    @property
    def next_dealer(self) -> int:
        """R4: the dealer of the next hand -- left of the dealer, or the same dealer after a thrown-in hand
        (R8); meaningful once the hand is over."""
        return self._next_dealer

    @property
    def trump_public(self) -> bool:
        """R22: trump is known to everyone once the first card of the hand is led."""
        return self.trump >= 0 and (bool(self.tricks) or bool(self.trick))

    def trump_known_to(self, seat: int) -> bool:
        """Whether ``seat`` knows the trump suit: everyone once it is public; the bidder from the moment it
        names it (R10, R23)."""
        return self.trump >= 0 and (
            (seat == self.bidder and self.phase != BIDDING) or bool(self.tricks) or bool(self.trick)
        )

    def dealer_stuck(self, seat: int | None = None) -> bool:
        """R8 ``dealer_must_bid``: ``seat`` (default: the player to act) is the dealer, to act in the
        bidding after three passes, and may not pass."""
        seat = self.to_act if seat is None else seat
        return (
            self.phase == BIDDING and self.to_act == seat and seat == self.dealer and self.high_bid == 0
            and self.rules.all_pass == "dealer_must_bid"
        )

    def legal_actions(self) -> tuple[int, ...]:
        """Legal action ids of the player to act (empty when nobody acts)."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        return legal

    def _compute_legal(self) -> tuple[int, ...]:
        phase = self.phase
        if phase == PLAY:
            led = self.trick[0] if self.trick else -1
            return play_actions(self.hands[self.to_act], led, self.trump, not self.tricks)
        if phase == BIDDING:
            return bid_actions(self.high_bid, self.dealer_stuck())
        if phase == TRUMP:
            return trump_actions(self.hands[self.to_act])
        if phase == DISCARD:
            return discard_actions(self.hands[self.to_act], self.trump)
        return ()

    def _check(self, action: Any) -> int:
        if self.phase >= HAND_OVER:
            raise GameStateError(
                f"no player acts in phase {Phase(self.phase).name}"
                + ("; call start_next_hand()" if self.phase == HAND_OVER else "; the game is over")
            )
        if type(action) is not int or not 0 <= action < NUM_ACTIONS:  # the common case stays fast
            action = self.check_action_id(action)
        if action not in self.legal_actions():
            raise IllegalActionError(
                f"action {action} ({action_name(action)}) is not legal for player {self.to_act} in phase "
                f"{Phase(self.phase).name}; legal actions: {self._legal_names()}"
            )
        return action

    def check_action_id(self, action: Any) -> int:
        """``action`` as an ``int`` in ``0 .. NUM_ACTIONS - 1`` (any integer-valued scalar:
        :func:`~smear_env.actions.action_id`); anything else (bools, floats, strings, None, arrays with a
        shape, out-of-range ids) raises :class:`IllegalActionError` naming the legal actions. Legality is
        not checked here."""
        a = action_id(action)
        if a is None:
            raise IllegalActionError(
                f"action {short_repr(action)} ({type(action).__name__}) is not an integer action id; "
                f"legal actions: {self._legal_names()}"
            )
        if not 0 <= a < NUM_ACTIONS:
            raise IllegalActionError(
                f"action {short_repr(a)} (no action id: ids are 0..{NUM_ACTIONS - 1}) is not legal; "
                f"legal actions: {self._legal_names()}"
            )
        return a

    def _legal_names(self) -> str:
        return ", ".join(f"{a} ({action_name(a)})" for a in self.legal_actions())

    # ------------------------------------------------------------------ transitions
    def apply(self, action: int) -> None:
        """Apply the action of the player to act. An illegal action raises :class:`IllegalActionError`
        naming it and the legal actions, and changes nothing."""
        action = self._check(action)
        self._legal = None
        phase = self.phase
        if phase == PLAY:
            self._play(action - PLAY_ACTION_BASE)
        elif phase == BIDDING:
            self._bid(action_bid(action))
        elif phase == TRUMP:
            self.trump = action - TRUMP_ACTION_BASE
            self.phase = DISCARD
        else:
            self._discard(action - DISCARD_ACTION_BASE)

    def _bid(self, bid: int) -> None:
        seat = self.to_act
        self.bids.append((seat, bid))
        if bid:
            self.high_bid = bid
            self.bidder = seat
        # R7: bidding ends when the dealer has acted, or at once on a bid of 4.
        if bid == MAX_BID or seat == self.dealer:
            self._end_bidding()
        else:
            self.to_act = (seat + 1) % NUM_PLAYERS

    def _end_bidding(self) -> None:
        if self.bidder is None:
            # R8 redeal: thrown in, same dealer, nothing scored.
            self.hand_thrown_in = True
            self._next_dealer = self.dealer
            self.phase = HAND_OVER
            self.history.append(self._hand_record())
            return
        bidder = self.bidder
        self.contract = self.high_bid
        k = self.rules.kitty_size
        self.to_act = bidder
        self.trick_leader = bidder  # R12: the bidder leads the first trick
        if k:
            # R9: the bidder takes k stock cards; R10: then names trump.
            self.kitty = self.stock[:k]
            for c in self.kitty:
                self.hands[bidder] |= 1 << c
            self.phase = TRUMP
        else:
            self.phase = PLAY

    def _discard(self, c: int) -> None:
        self.hands[self.to_act] &= ~(1 << c)
        self.discards.append(c)
        if len(self.discards) == self.rules.kitty_size:
            self.phase = PLAY

    def _play(self, c: int) -> None:
        seat = self.to_act
        bit = 1 << c
        self.hands[seat] ^= bit
        self.played_by[seat] |= bit
        trick = self.trick
        suit = c >> 3
        if trick:
            led = trick[0] >> 3
            if suit != led and suit != self.trump:
                self.voids[seat] |= 1 << led  # showed void in the suit led
        else:
            self.trick_leader = seat
            if self.trump < 0:
                self.trump = suit  # R10 with kitty_size 0: the first card led shows trump
        trick.append(c)
        self.trick_seats.append(seat)
        if len(trick) < NUM_PLAYERS:
            self.to_act = (seat + 1) % NUM_PLAYERS
            return
        # R12: highest trump, else highest card of the suit led.
        trump = self.trump
        led = trick[0] >> 3
        best = -1
        best_i = 0
        for i, x in enumerate(trick):
            s = x >> 3
            key = (x & 7) + (64 if s == trump else 32 if s == led else 0)
            if key > best:
                best = key
                best_i = i
        winner = self.trick_seats[best_i]
        self.won[winner & 1] |= (1 << trick[0]) | (1 << trick[1]) | (1 << trick[2]) | (1 << trick[3])
        self.tricks.append((self.trick_leader, tuple(self.trick_seats), tuple(trick), winner))
        self.trick = []
        self.trick_seats = []
        self.to_act = winner
        self.trick_leader = winner
        if len(self.tricks) == NUM_TRICKS:
            self._score_hand()

    def _score_hand(self) -> None:
        rules = self.rules
        trump = self.trump
        tmask = SUIT_MASKS[trump]
        played = self.played_by

        def team_that_played(c: int) -> int | None:
            for seat in range(NUM_PLAYERS):
                if played[seat] >> c & 1:
                    return seat & 1
            return None

        if rules.high_low == "ace_seven":
            high = team_that_played(trump * 8 + RANK_ACE)  # R13
            low = team_that_played(trump * 8 + RANK_7)  # R14
        else:
            trumps_played = (played[0] | played[1] | played[2] | played[3]) & tmask
            high = team_that_played(trumps_played.bit_length() - 1) if trumps_played else None
            lowest = (trumps_played & -trumps_played).bit_length() - 1
            low = team_that_played(lowest) if trumps_played else None
        jack_bit = 1 << (trump * 8 + RANK_JACK)
        jack = 0 if self.won[0] & jack_bit else 1 if self.won[1] & jack_bit else None  # R15
        bteam = self.bidder & 1
        card_points = [game_points(self.won[0]), game_points(self.won[1])]
        card_points[bteam] += game_points(sum(1 << c for c in self.discards))  # R16: discards count
        if card_points[0] != card_points[1]:
            game = 0 if card_points[0] > card_points[1] else 1
        else:
            game = bteam if rules.game_point_tie == "bidder" else None
        awarded = {"high": high, "low": low, "jack": jack, "game": game}
        won_points = [0, 0]
        for t in awarded.values():
            if t is not None:
                won_points[t] += 1
        # R17: contract; R20: cap for defenders.
        made = won_points[bteam] >= self.contract
        change = [0, 0]
        change[bteam] = won_points[bteam] if made else -self.contract
        dteam = 1 - bteam
        change[dteam] = won_points[dteam]
        old = self.scores[:]
        new = [old[0] + change[0], old[1] + change[1]]
        if rules.cap_defenders and new[dteam] > rules.target_score:
            new[dteam] = max(old[dteam], rules.target_score)
            change[dteam] = new[dteam] - old[dteam]
        self.scores = new
        # R18/R19: winning.
        target = rules.target_score
        if rules.win_requires_bid:
            winner = bteam if made and new[bteam] >= target else None
        elif new[bteam] >= target:
            winner = bteam  # also when both reached the target: the bidder's team wins
        elif new[dteam] >= target:
            winner = dteam
        else:
            winner = None
        self.hand_result = {
            "points": awarded,
            "card_points": card_points,
            "made_contract": made,
            "score_change": change,
            "scores": new[:],
        }
        self._next_dealer = (self.dealer + 1) % NUM_PLAYERS  # R4
        self.history.append(self._hand_record())
        self.winner = winner
        self.phase = GAME_OVER if winner is not None else HAND_OVER

    # ------------------------------------------------------------------ records
    def _hand_record(self, incomplete: bool = False) -> dict[str, Any]:
        """This hand as a smear-record/1 ``hand`` object."""
        rec: dict[str, Any] = {
            "dealer": self.dealer,
            "deal": [_names(h) for h in self.deal],
            "stock": _names(self.stock),
            "bids": [{"seat": s, "bid": b if b else "pass"} for s, b in self.bids],
        }
        if self.hand_thrown_in:
            rec["thrown_in"] = True
            return rec
        if incomplete:
            rec["incomplete"] = True
        if self.bidder is not None and self.phase != BIDDING:
            rec["bidder"] = self.bidder
            rec["contract"] = self.contract
            if self.rules.kitty_size:
                rec["kitty"] = _names(self.kitty)
            if self.trump >= 0:
                rec["trump"] = "CDHS"[self.trump]
            if self.rules.kitty_size:
                rec["discards"] = _names(self.discards)
            rec["tricks"] = [
                {
                    "leader": leader,
                    "plays": [{"seat": s, "card": CARD_NAMES[c]} for s, c in zip(seats, cards, strict=True)],
                    "winner": w,
                }
                for leader, seats, cards, w in self.tricks
            ]
            if self.trick:
                rec["current_trick"] = [
                    {"seat": s, "card": CARD_NAMES[c]}
                    for s, c in zip(self.trick_seats, self.trick, strict=True)
                ]
        if self.hand_result is not None and not incomplete:
            rec.update(self.hand_result)
        return rec

    def to_record(self, players: Sequence[str] | None = None, truncated: bool = False) -> dict[str, Any]:
        """The game so far as a ``smear-record/1`` object (the schema in ``smear_env/schema``).

        A hand in progress is exported with ``incomplete: true``; ``truncated`` marks a game cut off
        by a step limit (R21): every game without a winner is, a finished game never is (the flag is
        ignored once the game is over).
        """
        hands = [_json_copy(h) for h in self.history]  # independent of the game's own history
        if self.phase < HAND_OVER:
            hands.append(self._hand_record(incomplete=True))
        rec: dict[str, Any] = {
            "format": "smear-record/1",
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "hands": hands,
            "final_scores": self.scores[:],
            "winner": self.winner,
            "truncated": self.winner is None,  # a finished game is never truncated (the schema's rule)
        }
        if players is not None:
            rec["players"] = list(players)
        return rec


def _json_copy(obj: Any) -> Any:
    """Deep copy of JSON-like data (dicts, lists, scalars); much faster than copy.deepcopy."""
    if isinstance(obj, dict):
        return {k: _json_copy(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_json_copy(v) for v in obj]
    return obj


def _check_seat(seat: Any, what: str) -> int:
    if isinstance(seat, bool) or not isinstance(seat, int | np.integer) or not 0 <= seat < NUM_PLAYERS:
        raise ValueError(f"{what} must be a seat 0..3, not {seat!r}")
    return int(seat)


def _check_deal(
    hands: Sequence[Sequence[int | str]], stock: Sequence[int | str]
) -> tuple[list[list[int]], list[int]]:
    if len(hands) != NUM_PLAYERS:
        raise ValueError(f"a deal needs {NUM_PLAYERS} hands, got {len(hands)}")
    deal = []
    for i, h in enumerate(hands):
        cards = [to_card(c) for c in h]
        if len(cards) != HAND_SIZE:
            raise ValueError(f"hand of seat {i} has {len(cards)} cards; R5 deals {HAND_SIZE}")
        deal.append(cards)
    st = [to_card(c) for c in stock]
    if len(st) != STOCK_SIZE:
        raise ValueError(f"the stock has {len(st)} cards; R5 leaves {STOCK_SIZE}")
    mask = 0
    for c in [c for h in deal for c in h] + st:
        if mask >> c & 1:
            raise ValueError(f"card {names([c])[0]} appears twice in the deal")
        mask |= 1 << c
    assert mask == FULL_DECK
    return deal, st
