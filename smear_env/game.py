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
        self.rules = rules if rules is not None else SmearRules()
        if not isinstance(self.rules, SmearRules):
            raise TypeError(f"rules must be a SmearRules, not {type(self.rules).__name__}")
        self.seed = seed if isinstance(seed, int) else None
        self.rng = make_rng(seed)
        self.scores = [int(scores[0]), int(scores[1])]
        self.winner: int | None = None
        self.hand_number = 0
        self.history: list[dict[str, Any]] = []  # records of finished hands (smear-record/1 "hands")
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
        game.rules = rules if rules is not None else SmearRules()
        if not isinstance(game.rules, SmearRules):
            raise TypeError(f"rules must be a SmearRules, not {type(game.rules).__name__}")
        game.seed = seed if isinstance(seed, int) else None
        game.rng = make_rng(seed)
        game.scores = [int(scores[0]), int(scores[1])]
        game.winner = None
        game.hand_number = 0
        game.history = []
        game._deal_hand(_check_seat(dealer, "dealer"), (hands, stock))
        return game

    def _deal_hand(
        self, dealer: int, given: tuple[Sequence[Sequence[int | str]], Sequence[int | str]] | None
    ) -> None:
        """R5: 6 cards each, 8 to the stock; then bidding starts left of the dealer (R6)."""
        if given is None:
            perm = self.rng.permutation(NUM_CARDS).tolist()
            deal = [sorted(perm[i * HAND_SIZE:(i + 1) * HAND_SIZE]) for i in range(NUM_PLAYERS)]
            stock = perm[NUM_PLAYERS * HAND_SIZE:]
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
        g = Game.__new__(Game)
        g.rules = self.rules
        g.seed = self.seed
        g.rng = np.random.Generator(type(self.rng.bit_generator)())
        g.rng.bit_generator.state = self.rng.bit_generator.state
        g.phase = self.phase
        g.scores = self.scores[:]
        g.winner = self.winner
        g.dealer = self.dealer
        g.hand_number = self.hand_number
        g.hands = self.hands[:]
        g.deal = [h[:] for h in self.deal]
        g.stock = self.stock[:]
        g.bids = self.bids[:]
        g.high_bid = self.high_bid
        g.bidder = self.bidder
        g.contract = self.contract
        g.kitty = self.kitty[:]
        g.trump = self.trump
        g.discards = self.discards[:]
        g.trick = self.trick[:]
        g.trick_seats = self.trick_seats[:]
        g.trick_leader = self.trick_leader
        g.tricks = self.tricks[:]
        g.won = self.won[:]
        g.played_by = self.played_by[:]
        g.voids = self.voids[:]
        g.to_act = self.to_act
        g.hand_thrown_in = self.hand_thrown_in
        g.hand_result = self.hand_result
        g.history = self.history[:]
        g._legal = self._legal
        g._next_dealer = self._next_dealer
        return g

    # ------------------------------------------------------------------ queries
    @property
    def current_player(self) -> int | None:
        """The seat to act, or ``None`` in ``HAND_OVER`` / ``GAME_OVER``."""
        return self.to_act if self.phase < HAND_OVER else None

    @property
    def is_over(self) -> bool:
        return self.phase == GAME_OVER

    def legal_actions(self) -> tuple[int, ...]:
        """Legal action ids of the player to act (empty when nobody acts)."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        return legal

    def _compute_legal(self) -> tuple[int, ...]:
        phase = self.phase
        if phase == PLAY:
            return _mask_actions(self._playable(), PLAY_ACTION_BASE)
        if phase == BIDDING:
            # R6: pass, or a bid higher than every earlier bid;
            # R8 dealer_must_bid: a stuck dealer may not pass.
            first = bid_action(self.high_bid + 1) if self.high_bid else bid_action(2)
            bids = tuple(range(first, bid_action(MAX_BID) + 1))
            stuck = (
                self.rules.all_pass == "dealer_must_bid" and self.to_act == self.dealer and self.high_bid == 0
            )
            return bids if stuck else (PASS_ACTION, *bids)
        if phase == TRUMP:
            # R10: a trump suit among the suits in the bidder's hand (after the kitty).
            hand = self.hands[self.to_act]
            return tuple(TRUMP_ACTION_BASE + s for s in range(4) if hand & SUIT_MASKS[s])
        if phase == DISCARD:
            # R11: a trump may be discarded only while every card in the hand is a trump.
            hand = self.hands[self.to_act]
            non_trump = hand & ~SUIT_MASKS[self.trump]
            return _mask_actions(non_trump or hand, DISCARD_ACTION_BASE)
        return ()

    def _playable(self) -> int:
        """R12 (and R10): card mask the player to act may play."""
        hand = self.hands[self.to_act]
        trick = self.trick
        trump = self.trump
        if not trick:
            if not self.tricks and trump >= 0:
                # R10: with kitty_size > 0 the first lead must be of the chosen trump suit.
                return hand & SUIT_MASKS[trump]
            return hand
        led = SUIT_MASKS[trick[0] >> 3]
        follow = hand & led
        if not follow:
            return hand
        if trump >= 0:
            return follow | (hand & SUIT_MASKS[trump])
        return follow  # unreachable: trump is always known once a card is led

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
        by a step limit (R21).
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
            "truncated": bool(truncated) or (self.winner is None),
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
