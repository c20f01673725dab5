"""The single game: one game of Smear, the state machine of :mod:`smear_env.core.transitions` on Python ints
(R1-R21).

Plain Python on small ints and bitmasks; imports neither gymnasium, pettingzoo nor torch. The transitions,
the legal actions (:func:`smear_env.core.phases.legal_bits`) and the card rules (:mod:`smear_env.core.rules`)
are the batched engine's (:mod:`smear_env.engine.vector`), called on ints; this class keeps the state in the
lists that records, observations and search read. The batched engine with one lane plays the same game, at
about a tenth of the speed (``benchmarks/engine_once.py --one-lane``), hence the two storages.

Phases: ``BIDDING`` -> (``TRUMP`` -> ``DISCARD`` when kitty_size > 0) -> ``PLAY`` -> ``HAND_OVER``
(call :meth:`Game.start_next_hand`) or ``GAME_OVER``. A thrown-in hand (R8) also ends in ``HAND_OVER``
with ``hand_thrown_in`` set. All randomness comes from one ``numpy.random.Generator`` owned by the game.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from ..core import phases, transitions
from ..core.actions import (
    DISCARD_ACTION_BASE,
    NUM_ACTIONS,
    PLAY_ACTION_BASE,
    TRUMP_ACTION_BASE,
    action_bid,
    action_id,
    action_name,
    short_repr,
)
from ..core.cards import FULL_DECK, HAND_SIZE, STOCK_SIZE, names, to_card
from ..core.config import SmearRules
from ..core.phases import (  # noqa: F401 (Phase, the phase constants and the legal-action functions are re-exported)
    BIDDING,
    DISCARD,
    GAME_OVER,
    HAND_OVER,
    NUM_PLAYERS,
    PLAY,
    TRUMP,
    Phase,
    bid_actions,
    bit_actions,
    card_mask,
    discard_actions,
    kitty_cards,
    legal_bits,
    play_actions,
    playable_led_card,  # noqa: F401 (re-exported: the led *card*, -1 when leading)
    trump_actions,
)
from ..core.rules import (
    deal_from,  # noqa: F401 (re-exported: it lives in smear_env.core.rules)
    score_hand,
    shuffled_deal,
    trick_winner,
    trump_known,
)
from ..core.transitions import (
    TRICK_SIZE,
    after_bid,
    after_discard,
    after_play,
    after_trick,
    after_trump,
    first_to_bid,
    take_kitty,
)
from .recording import POINT_NAMES, game_record, hand_record, hand_result  # noqa: F401 (POINT_NAMES re-exported)

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
        "to_act", "hand_thrown_in", "hand_result", "_history", "_legal", "_next_dealer",
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
        """A game in a given state, e.g. mid-hand (:meth:`copy` builds its copies with it).

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
            scored = state["phase"] >= HAND_OVER and not state["hand_thrown_in"]
            next_dealer = transitions.next_dealer(state["dealer"], int(scored))
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
        self._history: list[Any] = []  # the finished hands' records, or the calls that build them

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
        self.hands = [card_mask(h) for h in deal]
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
        self.to_act = first_to_bid(dealer)
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
        state = {k: getattr(self, k) for k in STATE_FIELDS if k != "history"}
        state["history"] = self._history  # as it is: records not yet built stay so
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
        """R22: trump is known to everyone once the first card of the hand is led
        (:func:`~smear_env.core.rules.trump_known` of a player who is not the bidder)."""
        return trump_known(self.trump, False, bool(self.tricks) or bool(self.trick))

    def trump_known_to(self, seat: int) -> bool:
        """Whether ``seat`` knows the trump suit: everyone once it is public; the bidder from the moment it
        names it (R10, R23; :func:`~smear_env.core.rules.trump_known`)."""
        return trump_known(
            self.trump, seat == self.bidder and self.phase != BIDDING, bool(self.tricks) or bool(self.trick)
        )

    def dealer_stuck(self, seat: int | None = None) -> bool:
        """R8 ``dealer_must_bid``: ``seat`` (default: the player to act) is the dealer, to act in the
        bidding after three passes, and may not pass (:func:`smear_env.core.phases.dealer_stuck`)."""
        seat = self.to_act if seat is None else seat
        return phases.dealer_stuck(self.rules, self.phase, self.to_act, seat, self.dealer, self.high_bid)

    def legal_actions(self) -> tuple[int, ...]:
        """Legal action ids of the player to act (empty when nobody acts)."""
        legal = self._legal
        if legal is None:
            phase = self.phase
            if phase >= HAND_OVER:
                legal = ()
            else:  # smear_env.core.phases.legal_bits: the one legal-action function of every engine
                trick = self.trick
                legal = bit_actions(*legal_bits(
                    phase, self.hands[self.to_act], self.high_bid, phase == BIDDING and self.dealer_stuck(),
                    self.trump, trick[0] >> 3 if trick else -1, not self.tricks))
            self._legal = legal
        return legal

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
        :func:`~smear_env.core.actions.action_id`); anything else (bools, floats, strings, None, arrays with a
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
        legal = self._legal  # the common case (an int among the cached legal actions) skips _check
        if legal is None or type(action) is not int or action not in legal:
            action = self._check(action)
        self._legal = None
        phase = self.phase
        if phase == PLAY:
            self._play(action - PLAY_ACTION_BASE)
        elif phase == BIDDING:
            self._bid(action_bid(action))
        elif phase == TRUMP:
            self.trump, self.phase = after_trump(action - TRUMP_ACTION_BASE)
        else:
            self._discard(action - DISCARD_ACTION_BASE)

    # Each transition is one function of smear_env.core.transitions (the state machine of every engine);
    # the methods below store what it returns, in the lists the records and observations read.
    def _bid(self, bid: int) -> None:
        seat = self.to_act
        self.bids.append((seat, bid))
        phase, to_act, high_bid, bidder, ended = after_bid(
            self.rules, seat, bid, self.dealer, self.high_bid, -1 if self.bidder is None else self.bidder)
        self.phase = phase
        self.to_act = to_act
        self.high_bid = high_bid
        if bidder >= 0:
            self.bidder = bidder
        if not ended:
            return
        if phase == HAND_OVER:  # R8 redeal: thrown in, same dealer, nothing scored
            self.hand_thrown_in = True
            self._next_dealer = transitions.next_dealer(self.dealer, 0)
            self._history.append(self._hand_record())
            return
        self.contract = high_bid
        self.trick_leader = to_act  # R12: the bidder leads the first trick
        if phase == TRUMP:  # R9: the bidder takes the kitty; R10: then names trump
            self.kitty = kitty_cards(self.stock, self.rules.kitty_size)
            self.hands[bidder] = take_kitty(self.rules, self.hands[bidder], self.stock)[0]

    def _discard(self, c: int) -> None:
        self.discards.append(c)
        seat = self.to_act
        self.hands[seat], self.phase = after_discard(self.rules, self.hands[seat], c, len(self.discards))

    def _play(self, c: int) -> None:
        seat = self.to_act
        bit = 1 << c
        self.hands[seat] ^= bit
        self.played_by[seat] |= bit
        trick = self.trick
        s_led, leader, trump, void, trick_len, to_act = after_play(
            self.rules, seat, c, trick[0] >> 3 if trick else -1, self.trick_leader, self.trump, len(trick))
        self.trick_leader = leader
        self.trump = trump
        if void:
            self.voids[seat] |= 1 << s_led
        trick.append(c)
        seats = self.trick_seats
        seats.append(seat)
        if trick_len < TRICK_SIZE:
            self.to_act = to_act
            return
        winner = seats[trick_winner(trick, trump)]  # R12
        to_act, team, _done, hand_over = after_trick(winner, len(self.tricks))
        self.won[team] |= (1 << trick[0]) | (1 << trick[1]) | (1 << trick[2]) | (1 << trick[3])
        self.tricks.append((leader, tuple(seats), tuple(trick), to_act))
        self.trick = []
        self.trick_seats = []
        self.to_act = to_act
        self.trick_leader = to_act
        if hand_over:
            self._score_hand()

    def _score_hand(self) -> None:
        """R13-R20: :func:`~smear_env.core.rules.score_hand` of the finished hand."""
        played = self.played_by
        bteam = self.bidder & 1
        sc = score_hand(
            self.rules, self.trump, played[0] | played[2], played[1] | played[3], self.won[0], self.won[1],
            sum(1 << c for c in self.discards), bteam, self.contract, self.scores[0], self.scores[1],
        )
        new = list(sc.scores)
        self.scores = new
        self.hand_result = hand_result((sc.high, sc.low, sc.jack, sc.game), sc.card_points, sc.made,
                                       sc.change, new)
        winner = None if sc.winner < 0 else sc.winner
        self._next_dealer = transitions.next_dealer(self.dealer, 1)  # R4
        self._history.append(self._hand_record())
        self.winner = winner
        self.phase = GAME_OVER if winner is not None else HAND_OVER

    # ------------------------------------------------------------------ records
    @property
    def history(self) -> list[dict[str, Any]]:
        """The records of the finished hands (smear-record/1 ``hands``), oldest first. A hand's record is
        built when it is first read: the game keeps the values it is made of (lists that no later move
        changes), so a game whose records nobody reads never spends the time."""
        hist = self._history
        for i, h in enumerate(hist):
            if type(h) is not dict:
                hist[i] = h()
        return hist

    @history.setter
    def history(self, hands: list[dict[str, Any]]) -> None:
        self._history = hands

    def _hand_record(self, incomplete: bool = False) -> partial[dict[str, Any]]:
        """The call that builds this hand as a smear-record/1 ``hand`` object
        (:func:`smear_env.engine.recording.hand_record` of the hand's values as they are now)."""
        bidding_over = self.bidder is not None and self.phase != BIDDING
        return partial(
            hand_record,
            self.dealer, self.deal, self.stock, self.bids, self.rules.kitty_size,
            thrown_in=self.hand_thrown_in,
            bidder=self.bidder if bidding_over else None,
            contract=self.contract,
            kitty=self.kitty,
            trump=self.trump,
            discards=self.discards,
            tricks=self.tricks,
            current_trick=list(zip(self.trick_seats, self.trick, strict=True)),
            result=self.hand_result,
            incomplete=incomplete,
        )

    def to_record(self, players: Sequence[str] | None = None, truncated: bool = False) -> dict[str, Any]:
        """The game so far as a ``smear-record/1`` object (the schema in ``smear_env/schema``).

        A hand in progress is exported with ``incomplete: true``; ``truncated`` marks a game cut off
        by a step limit (R21): every game without a winner is, a finished game never is (the flag is
        ignored once the game is over).
        """
        hands = [_json_copy(h) for h in self.history]  # independent of the game's own history
        if self.phase < HAND_OVER:
            hands.append(self._hand_record(incomplete=True)())
        return game_record(self.rules.to_dict(), self.seed, hands, self.scores, self.winner, players)


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


def __getattr__(name: str) -> Any:
    """Deprecated names of this module (removed in the next minor version), with a DeprecationWarning."""
    if name == "playable":
        warnings.warn(f"{__name__}.playable is deprecated; use playable_led_card (the led card) or "
                      "smear_env.core.rules.playable (the led suit)", DeprecationWarning, stacklevel=2)
        return playable_led_card
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
