"""The batched engine: N games of Smear held as numpy arrays and stepped together, exactly the rules of
:mod:`smear_env.game` (R1-R21, every :class:`~smear_env.config.SmearRules` option).

Each *lane* holds one game. Every call to :meth:`VectorGame.step` takes one decision in every lane
(the seat to act is ``to_act``); there is no Python loop over lanes on the hot path, only array
operations (a loop runs over the lanes whose hand ends, and only when recording).

Contract
--------
``VectorGame(num_games, rules=SmearRules(), seed=0, record=False, max_hands=200, deals=None)``

``seed`` is an integer 0..2**64 - 1 (anything else, a bool or a float included, is a ``ValueError``);
``deals`` an optional :class:`VectorDealSource` that deals every hand instead of the seed's hash (below).

``to_act``
    ``(N,)`` int64, the seat to act in each lane (somebody always acts: lanes never rest in
    ``HAND_OVER`` or ``GAME_OVER``).
``legal_mask()``
    ``(N, 72)`` bool, the legal actions of the seat to act (the :mod:`smear_env.actions` layout); equal
    to ``observation.action_mask(game, game.to_act)`` of the reference engine.
``observe(seats=None)``
    ``(N, 493)`` float32, identical to ``observation.encode_game(game, seat)`` (= ``encode`` of that
    seat's view); ``seats=None`` observes the seat to act in every lane, an ``(N,)`` array any seat per
    lane.
``step(actions, lanes=None)``
    ``(N,)`` action ids, one per lane; or with ``lanes`` (increasing distinct lane indices, e.g. the
    lanes whose seat to act belongs to some players) ``(len(lanes),)`` actions for those lanes only, the
    others do not move. Returns a :class:`StepResult` (N rows either way). An illegal action in any
    lane raises :class:`VectorIllegalActionError` (an :class:`~smear_env.game.IllegalActionError`)
    naming the lane, the action and its legal actions; no lane moves.
``new_games(lanes)``
    abandon the games in progress in ``lanes`` and start their next games (a table's ``max_cycles``).
``hand_bidder``, ``hand_contract``, ``hand_made``, ``hand_points``
    ``(N,)``, ``(N,)``, ``(N,)`` bool, ``(N, 4)``: the bidder, contract, whether it was made and the team
    that won High, Low, Jack and Game (-1 nobody) of the hand a lane scored in the latest step (valid
    where that step's ``hand_over`` is set; for statistics without records).
``random_actions(rng)``
    a uniformly random legal action per lane from a ``numpy.random.Generator`` (see also
    :func:`random_actions` for any mask).
``records()``
    with ``record=True``: the games finished (or truncated) since the last call, as ``smear-record/1``
    dicts (replayable by :func:`smear_env.record.replay`, valid against ``smear_env/schema``); clears them.

Rewards (the table layer's scale)
---------------------------------
``StepResult.reward_score`` (N, 4) float32: on a step that scored a hand, own team's score change minus
the other team's, in raw points (R17, R20; not divided by anything), for each seat; 0 otherwise
(also 0 on a thrown-in hand).
``StepResult.reward_win`` (N, 4) float32: +1 to the winners and -1 to the losers on the step that ends a
game (R18, R19); 0 otherwise, and 0 when the game is truncated (R21).

``hand_over`` is set on a step that *scored* a hand. A thrown-in hand (R8 ``redeal``) is not scored:
``hand_over`` stays False and ``thrown_in`` is set; the same dealer redeals at once. ``game_over`` is set
when the hand ended the game (``winner`` gives the team), ``truncated`` when the lane reached
``max_hands`` hands (every dealt hand counts, thrown-in ones too, as ``len(Game.history)``; at most
2**24 - 1) without a winner (R21). Either way the lane starts its next game in the same step, so after
``step`` every lane is ready for its next decision.

Deals and seeds
---------------
Deals come from a counter-based hash (splitmix64, :func:`smear_env.rules.hashed_deals`), not from a
shared generator, so a lane's games do not depend on the number of lanes or on the other lanes: hand ``h``
of game ``g`` in lane ``l`` of an engine seeded ``s`` is :func:`lane_deal` ``(s, l, g, h)``, and the first
dealer of that game (R4) comes from the same hash. The reference engine plays exactly the same game from
these deals: :func:`reference_game` builds it (``Game.from_deal``), and each later hand is
``game.start_next_hand(deal=lane_deal(s, l, g, game.hand_number + 1)[1:])``. Records carry
``"seed": null`` (their deals are explicit).

With ``deals=source`` (a :class:`VectorDealSource`) every hand is dealt by ``source.deals(lanes,
games, hands)`` instead (``seed`` is then unused): e.g. the duplicate evaluator's deal sequences
(``smear_env.evaluation.batched``), so a lane plays exactly the reference evaluator's game.

Since a lane deals its next hand inside ``step``, the state at the end of a hand (its last trick on the
table) is never observed; ``StepResult`` reports what that hand scored.

Implementation
--------------
State is a few int64 arrays per lane (``memory_bytes()``: about 470 bytes a lane): hands, cards played,
tricks won, kitty and discards as 32-bit card masks (card id ``suit * 8 + rank``, bit ``card``), plus
small integers (phase, seat to act, bids, trump, trick). Legality is one bit word and a base action
per lane (bits of actions 0-7, of discards by card from 8, or of plays by card from 40): ``legal_mask``
unpacks it, ``step`` tests one bit, ``random_actions`` selects the r-th set bit. ``observe`` assembles
the 0/1 features as 512 bits per lane and unpacks them with one ``numpy.unpackbits``.
The rules themselves (playable cards, discard pool, trick winner, scoring, trump visibility, deals) are
the array forms of :mod:`smear_env.rules`, the functions the reference engine asks too; this module holds
the state machine. ``benchmarks/vector_speed.py`` measures it against the reference engine and the
``raw_env`` loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from . import rules as R
from .actions import DISCARD_ACTION_BASE, NUM_ACTIONS, PLAY_ACTION_BASE, TRUMP_ACTION_BASE, action_name
from .cards import CARD_NAMES, NUM_CARDS, STOCK_SIZE, SUIT_CHARS, cards_of
from .config import ALL_PASS_DEALER_MUST_BID, SmearRules
from .game import (
    BIDDING,
    DISCARD,
    NUM_PLAYERS,
    PLAY,
    POINT_NAMES,
    TRUMP,
    Game,
    IllegalActionError,
    Phase,
)
from .observation import (
    BIDDER,
    BIDS,
    CONTRACT,
    DEALER,
    DISCARDS,
    HAND,
    HAND_SIZES,
    KITTY,
    KITTY_SIZE,
    NUM_BID_STATES,
    OBS_SIZE,
    PHASE,
    PLAYED_BY,
    SCORES,
    STUCK,
    TARGET,
    TO_ACT,
    TRICK,
    TRICK_LEADER,
    TRUMP_,
    VOIDS,
    WON,
)

__all__ = [
    "SEAT_SIGN",
    "StepResult",
    "VectorDealSource",
    "VectorGame",
    "VectorIllegalActionError",
    "check_seed",
    "deck_of",
    "lane_deal",
    "random_actions",
    "reference_game",
]

_I = np.int64
# R6: bid actions 1..3 (bids 2..4) allowed above the high bid, by high bid (0, -, 2, 3).
_BID_BITS = np.array([0b1110, 0, 0b1100, 0b1000, 0], dtype=_I)
SEAT_SIGN = np.array([1, -1, 1, -1], dtype=np.float32)
"""Team 0's reward to each seat: + for seats 0 and 2, - for seats 1 and 3."""
_SEATS = np.arange(NUM_PLAYERS, dtype=_I)
# per-hand integers and their values at a deal
_HAND_FIELDS = {
    "high_bid": 0, "bidder": -1, "kitty": 0, "trump": -1, "discards": 0, "n_discards": 0, "trick_bits": 0,
    "led": -1, "trick_len": 0, "leader": -1, "tricks_done": 0,
}
_HAND_RESET = np.array(list(_HAND_FIELDS.values()), dtype=_I)[:, None]
_SEAT_RESET = np.array([0, -1, 0, 0], dtype=_I)[:, None, None]  # bids, trick, played_by, voids
# the per-lane state arrays besides _per_hand and _per_seat (VectorGame.copy_lanes)
_LANE_STATE = ("game_index", "hand_number", "scores", "dealer", "phase", "to_act", "hands", "deal", "stock",
               "won", "discard_order", "hand_bidder", "hand_contract", "hand_made", "hand_points")
# popcount of a byte; position of the r-th set bit of a byte (0 where there is none)
_POP_BYTE = np.array([b.bit_count() for b in range(256)], dtype=_I)
_SELECT_BYTE = np.array(
    [[([i for i in range(8) if b >> i & 1] + [0] * 8)[r] for r in range(8)] for b in range(256)], dtype=_I
)
_BID_OFFSETS = NUM_BID_STATES * _SEATS  # bit of bid state b of relative seat r: 5 r + b


class VectorIllegalActionError(IllegalActionError):
    """An illegal action in one lane of a :class:`VectorGame`; ``lane``, ``action`` and ``legal`` say which.
    No lane moved."""

    def __init__(self, message: str, lane: int, action: int, legal: tuple[int, ...]) -> None:
        super().__init__(message)
        self.lane = lane
        self.action = action
        self.legal = legal


@dataclass
class StepResult:
    """What one :meth:`VectorGame.step` did in each lane (arrays of N rows; see the module docstring)."""

    hand_over: np.ndarray
    """(N,) bool: a hand was scored in this step (a thrown-in hand is not)."""
    thrown_in: np.ndarray
    """(N,) bool: every player passed and the hand was thrown in (R8 redeal)."""
    game_over: np.ndarray
    """(N,) bool: the scored hand ended the game (R18, R19)."""
    truncated: np.ndarray
    """(N,) bool: the game reached ``max_hands`` hands without a winner (R21)."""
    winner: np.ndarray
    """(N,) int64: winning team where ``game_over``, else -1."""
    score_delta: np.ndarray
    """(N, 2) int64: team score changes of the hand scored in this step (0 elsewhere)."""
    scores: np.ndarray
    """(N, 2) int64: team scores after this step's hand, before a new game resets them (the final scores
    where ``game_over`` or ``truncated``)."""
    reward_score: np.ndarray
    """(N, 4) float32: per seat, own team's score change minus the other's, raw points, on ``hand_over``."""
    reward_win: np.ndarray
    """(N, 4) float32: +1 winners / -1 losers on ``game_over``; 0 otherwise and when truncated."""


# ------------------------------------------------------------------------------------------------ deals
MAX_HANDS_LIMIT = 1 << 24
SEED_LIMIT = 1 << 64


def check_seed(seed: Any) -> int:
    """``seed`` as an int if it is an integer 0..2**64 - 1 (the deal hash's key), else ``ValueError``
    naming it (a bool, float or larger integer is never coerced or masked)."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise ValueError(f"seed must be an integer 0..2**64 - 1, not {seed!r} ({type(seed).__name__})")
    if not 0 <= int(seed) < SEED_LIMIT:
        raise ValueError(f"seed must be an integer 0..2**64 - 1, not {seed!r}")
    return int(seed)


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


def _external_deals(source: VectorDealSource, lanes: np.ndarray, games: np.ndarray,
                    hands: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
    :class:`VectorGame` seeded ``seed``; ``hands`` are 4 sorted lists of 6 card ids, ``stock`` 8 card ids in
    order (the kitty first, R9). ``first_dealer`` is the game's first dealer (R4), meaningful for hand 0."""
    return R.lane_deal(check_seed(seed), lane, game, hand)


def reference_game(rules: SmearRules, seed: int, lane: int, game: int) -> Game:
    """The reference :class:`~smear_env.game.Game` that lane ``lane`` plays as its game ``game``, at the
    start of its first hand. Deal each later hand with
    ``g.start_next_hand(deal=lane_deal(seed, lane, game, g.hand_number + 1)[1:])``."""
    dealer, hands, stock = lane_deal(seed, lane, game, 0)
    return Game.from_deal(hands, stock, dealer, rules)


# ------------------------------------------------------------------------------------------------ helpers
def random_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row of a ``(N, 72)`` bool mask (one uniform float per row):
    the ``r``-th legal action in id order, ``r = floor(u * count)``."""
    mask = np.asarray(mask, dtype=bool)
    if mask.ndim != 2:
        raise ValueError(f"mask must have shape (N, {NUM_ACTIONS}), got {mask.shape}")
    packed = np.packbits(mask, axis=1, bitorder="little")
    cum = np.cumsum(_POP_BYTE[packed], axis=1)  # legal actions up to each byte
    counts = cum[:, -1]
    if (counts == 0).any():
        raise ValueError(f"rows {np.flatnonzero(counts == 0)[:8].tolist()} of the mask have no legal action")
    r = (rng.random(mask.shape[0]) * counts).astype(_I)
    byte = (cum <= r[:, None]).sum(axis=1)
    rows = np.arange(mask.shape[0])
    before = np.where(byte > 0, cum[rows, byte - 1], 0)
    return (byte << 3) + _SELECT_BYTE[packed[rows, byte], r - before]


# ------------------------------------------------------------------------------------------------ engine
class VectorGame:
    """N games of Smear stepped as arrays (see the module docstring for the contract)."""

    def __init__(
        self,
        num_games: int,
        rules: SmearRules | None = None,
        seed: int = 0,
        record: bool = False,
        max_hands: int = 200,
        deals: VectorDealSource | None = None,
    ) -> None:
        if isinstance(num_games, bool) or not isinstance(num_games, int | np.integer) or num_games < 1:
            raise ValueError(f"num_games must be an integer >= 1, not {num_games!r}")
        self.seed = check_seed(seed)
        if (isinstance(max_hands, bool) or not isinstance(max_hands, int | np.integer)
                or not 1 <= max_hands < MAX_HANDS_LIMIT):
            raise ValueError(f"max_hands must be an integer 1..{MAX_HANDS_LIMIT - 1}, not {max_hands!r}")
        self.rules = rules if rules is not None else SmearRules()
        if not isinstance(self.rules, SmearRules):
            raise TypeError(f"rules must be a SmearRules, not {type(self.rules).__name__}")
        if deals is not None and not callable(getattr(deals, "deals", None)):
            raise TypeError(f"deals must be a VectorDealSource (with a deals() method), not {deals!r}")
        n = self.num_games = int(num_games)
        self.deal_source = deals
        self.max_hands = int(max_hands)
        self.recording = bool(record)
        self._k = self.rules.kitty_size
        self._stuck_rule = self.rules.all_pass == ALL_PASS_DEALER_MUST_BID
        self._ar = np.arange(n, dtype=_I)
        self._ar2x = self._ar << 1
        self._ar4 = self._ar << 2
        self._lane_keys = R.lane_keys(self.seed, self._ar)
        z = lambda *shape: np.zeros((n, *shape), dtype=_I)  # noqa: E731
        # per game
        self.game_index = z()  # games started in this lane before the current one
        self.hand_number = z()  # hands dealt in the current game before the current one
        self.scores = z(2)
        # per hand
        self.dealer = z()
        self.phase = z()
        self.to_act = z()
        self.hands = z(4)  # card bitmasks by seat
        self.deal = z(4)  # the hands as dealt (bitmasks)
        self.stock = z(8)  # stock card ids, kitty first (R9)
        # Per-hand integers are rows of one array, per-seat masks planes of another, so that a new deal
        # resets each with one assignment (to _HAND_RESET, _SEAT_RESET).
        self._per_hand = np.zeros((len(_HAND_FIELDS), n), dtype=_I)
        (
            self.high_bid,
            self.bidder,  # high bidder so far (-1 none); the bidder once bidding is over
            self.kitty,
            self.trump,  # -1 until named (R10) or led (kitty_size 0)
            self.discards,
            self.n_discards,
            self.trick_bits,  # the cards of the current trick
            self.led,  # suit led in the current trick, -1 none
            self.trick_len,
            self.leader,  # seat that led the current trick
            self.tricks_done,
        ) = self._per_hand
        self._per_seat = np.zeros((4, n, 4), dtype=_I)
        (
            self.bids,  # bid state by seat: 0 not acted, 1 pass, 2..4 bid
            self.trick,  # card played by each seat in the current trick, -1 none
            self.played_by,
            self.voids,
        ) = self._per_seat
        self.won = z(2)
        self.discard_order = z(3)
        # the hand scored in the latest step of a lane (valid where that step's hand_over is set)
        self.hand_bidder = z()
        self.hand_contract = z()
        self.hand_made = np.zeros(n, dtype=bool)
        self.hand_points = z(4)  # team that won High, Low, Jack, Game (R13-R16); -1 nobody
        self._legal: tuple[np.ndarray, np.ndarray] | None = None
        # flat views of the per-seat / per-team arrays, indexed by 4 * lane + seat (2 * lane + team)
        self._hands_f = self.hands.reshape(-1)
        self._bids_f = self.bids.reshape(-1)
        self._played_f = self.played_by.reshape(-1)
        self._trick_f = self.trick.reshape(-1)
        self._voids_f = self.voids.reshape(-1)
        self._won_f = self.won.reshape(-1)
        if self.recording:
            self._log = z(32)  # actions of the current hand (4 bids + trump + 3 discards + 24 plays)
            self._log_len = z()
            self._trick_winners = z(6)
            self._hand_records: list[list[dict[str, Any]]] = [[] for _ in range(n)]
            self._finished: list[dict[str, Any]] = []
        self._start_hands(self._ar, new_game=np.ones(n, dtype=bool))

    # -------------------------------------------------------------------------------- dealing
    def _start_hands(self, idx: np.ndarray, new_game: np.ndarray) -> None:
        """Deal the current hand of lanes ``idx`` (the first hand of a game where ``new_game``)."""
        if self.deal_source is None:
            perm, first_dealer = R.hashed_deals(self._lane_keys[idx], self.game_index[idx],
                                                 self.hand_number[idx])
        else:
            perm, first_dealer = _external_deals(self.deal_source, idx, self.game_index[idx],
                                                 self.hand_number[idx])
        self.dealer[idx] = np.where(new_game, first_dealer, self.dealer[idx])
        hands, stock = R.deal_masks(perm)  # R5
        self.hands[idx] = hands
        self.deal[idx] = hands
        self.stock[idx] = stock
        self.phase[idx] = BIDDING
        self.to_act[idx] = (self.dealer[idx] + 1) & 3  # R6
        self._per_hand[:, idx] = _HAND_RESET
        self._per_seat[:, idx] = _SEAT_RESET
        self.won[idx] = 0
        if self.recording:
            self._log_len[idx] = 0

    # -------------------------------------------------------------------------------- legality
    def _legal_bits(self) -> tuple[np.ndarray, np.ndarray]:
        """Per lane ``(bits, base)``: the legal actions are ``base + i`` for the set bits ``i`` of ``bits``;
        ``base`` is 0 (bids and trump: actions 0..7), 8 (discards, by card) or 40 (plays, by card)."""
        if self._legal is not None:
            return self._legal
        phase = self.phase
        hand = self._hands_f[self._ar4 + self.to_act]
        # R12, R10: follow the suit led or trump; the first lead (kitty > 0) must be trump.
        bits = R.playable(hand, self.led, self.trump, self.tricks_done == 0)
        base = np.full(self.num_games, PLAY_ACTION_BASE, dtype=_I)
        other = np.flatnonzero(phase != PLAY)
        if other.size:
            ph = phase[other]
            h = hand[other]
            # R6, R8: bids above the high bid; pass unless the dealer is stuck.
            high = self.high_bid[other]
            if self._stuck_rule:
                bid = _BID_BITS[high] | ((self.to_act[other] != self.dealer[other]) | (high != 0))
            else:
                bid = _BID_BITS[high] | 1
            # R10: trump among the suits in hand; R11: a trump only while every card is a trump.
            trump = R.suits_held(h) << TRUMP_ACTION_BASE
            disc = R.discard_pool(h, self.trump[other])
            bits[other] = np.where(ph == BIDDING, bid, np.where(ph == TRUMP, trump, disc))
            base[other] = np.where(ph == DISCARD, DISCARD_ACTION_BASE, 0)
        self._legal = (bits, base)
        return self._legal

    def legal_mask(self) -> np.ndarray:
        """(N, 72) bool: legal actions of the seat to act in each lane."""
        bits, base = self._legal_bits()
        n = self.num_games
        packed = np.empty((n, 9), dtype=np.uint8)  # 72 bits per lane: bits << base
        low = bits.astype(np.uint64) << base.astype(np.uint64)
        packed[:, :8] = low.astype("<u8", copy=False).view(np.uint8).reshape(n, 8)
        packed[:, 8] = np.where(base == PLAY_ACTION_BASE, bits >> (64 - PLAY_ACTION_BASE), 0)
        return np.unpackbits(packed, axis=1, count=NUM_ACTIONS, bitorder="little").view(bool)

    def legal_actions(self, lane: int) -> tuple[int, ...]:
        """Legal action ids of one lane (for messages and tests)."""
        return tuple(int(a) for a in np.flatnonzero(self.legal_mask()[lane]))

    def random_actions(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random legal action in every lane (one uniform float per lane from ``rng``); the
        same draw as :func:`random_actions` of :meth:`legal_mask`, without building the mask."""
        m, base = self._legal_bits()
        # the r-th set bit of m (from bit 0): find its byte from the bytes' popcounts, then look it up
        pop = _POP_BYTE
        c1 = pop[m & 255]
        c2 = c1 + pop[(m >> 8) & 255]
        c3 = c2 + pop[(m >> 16) & 255]
        r = (rng.random(self.num_games) * (c3 + pop[m >> 24])).astype(_I)
        byte = (r >= c1).astype(_I) + (r >= c2) + (r >= c3)
        before = np.where(byte == 0, 0, np.where(byte == 1, c1, np.where(byte == 2, c2, c3)))
        shift = byte << 3
        return base + shift + _SELECT_BYTE[(m >> shift) & 255, r - before]

    def _check_lanes(self, lanes: Any) -> np.ndarray:
        idx = np.asarray(lanes)
        n = self.num_games
        if (idx.ndim != 1 or idx.dtype.kind not in "iu" or (idx.size and (idx[0] < 0 or idx[-1] >= n))
                or (np.diff(idx) <= 0).any()):
            raise ValueError(f"lanes must be a 1-D integer array of distinct lanes 0..{n - 1} in increasing "
                             f"order, got {lanes!r}")
        return idx.astype(_I)

    def _check(self, actions: Any, lanes: np.ndarray | None = None) -> np.ndarray:
        a = np.asarray(actions)
        k = self.num_games if lanes is None else lanes.shape[0]
        if a.shape != (k,):
            raise ValueError(f"actions must have shape ({k},), got {a.shape}")
        if a.dtype.kind not in "iu":
            raise IllegalActionError(f"actions must be integer action ids, not dtype {a.dtype}")
        a = a.astype(_I)
        bits, base = self._legal_bits()
        if lanes is not None:
            bits, base = bits[lanes], base[lanes]
        d = a - base
        ok = (d >= 0) & (d < 32) & (((bits >> np.clip(d, 0, 31)) & 1) == 1)
        if not ok.all():
            row = int(np.flatnonzero(~ok)[0])
            act = int(a[row])
            lane = row if lanes is None else int(lanes[row])
            legal = self.legal_actions(lane)
            names = ", ".join(f"{x} ({action_name(x)})" for x in legal)
            raise VectorIllegalActionError(
                f"lane {lane}: action {act} ({action_name(act)}) is not legal for player "
                f"{int(self.to_act[lane])} in phase {Phase(int(self.phase[lane])).name}; "
                f"legal actions: {names}",
                lane, act, legal,
            )
        return a

    # -------------------------------------------------------------------------------- step
    def step(self, actions: Any, lanes: Any = None) -> StepResult:
        """Take one decision in every lane, or with ``lanes`` (increasing distinct lane indices) only in
        those: ``actions[i]`` is lane ``lanes[i]``'s; the other lanes do not move (see the module
        docstring). Returns a :class:`StepResult` of N rows (rows of lanes not stepped are all 0 /
        False / -1, ``scores`` their current scores)."""
        idx = None if lanes is None else self._check_lanes(lanes)
        a = self._check(actions, idx)
        self._legal = None
        n = self.num_games
        if idx is None:
            phase = self.phase
            if self.recording:
                self._log[self._ar, self._log_len] = a
                self._log_len += 1
            i_play = np.flatnonzero(phase == PLAY)
            i_bid = np.flatnonzero(phase == BIDDING)
            i_trump = np.flatnonzero(phase == TRUMP)
            i_disc = np.flatnonzero(phase == DISCARD)
            a_play, a_bid, a_trump, a_disc = a[i_play], a[i_bid], a[i_trump], a[i_disc]
        else:
            phase = self.phase[idx]
            if self.recording:
                self._log[idx, self._log_len[idx]] = a
                self._log_len[idx] += 1
            s_play, s_bid = np.flatnonzero(phase == PLAY), np.flatnonzero(phase == BIDDING)
            s_trump, s_disc = np.flatnonzero(phase == TRUMP), np.flatnonzero(phase == DISCARD)
            i_play, i_bid, i_trump, i_disc = idx[s_play], idx[s_bid], idx[s_trump], idx[s_disc]
            a_play, a_bid, a_trump, a_disc = a[s_play], a[s_bid], a[s_trump], a[s_disc]
        thrown = np.zeros(n, dtype=bool)
        scored = np.zeros(n, dtype=bool)
        if i_bid.size:
            self._bid(i_bid, a_bid, thrown)
        if i_trump.size:
            self.trump[i_trump] = a_trump - TRUMP_ACTION_BASE
            self.phase[i_trump] = DISCARD
        if i_disc.size:
            self._discard(i_disc, a_disc - DISCARD_ACTION_BASE)
        if i_play.size:
            self._play(i_play, a_play - PLAY_ACTION_BASE, scored)
        res = StepResult(
            hand_over=scored,
            thrown_in=thrown,
            game_over=np.zeros(n, dtype=bool),
            truncated=np.zeros(n, dtype=bool),
            winner=np.full(n, -1, dtype=_I),
            score_delta=np.zeros((n, 2), dtype=_I),
            scores=self.scores.copy(),
            reward_score=np.zeros((n, 4), dtype=np.float32),
            reward_win=np.zeros((n, 4), dtype=np.float32),
        )
        i_scored = np.flatnonzero(scored)
        if i_scored.size:
            self._score(i_scored, res)
        ended = scored | thrown
        if ended.any():
            self._end_hands(np.flatnonzero(ended), res)
        return res

    def _bid(self, idx: np.ndarray, act: np.ndarray, thrown: np.ndarray) -> None:
        seat = self.to_act[idx]
        bid = np.where(act == 0, 0, act + 1)
        self.bids[idx, seat] = np.where(bid == 0, 1, bid)
        has = bid > 0
        self.high_bid[idx] = np.where(has, bid, self.high_bid[idx])
        bidder = np.where(has, seat, self.bidder[idx])
        self.bidder[idx] = bidder
        end = (bid == 4) | (seat == self.dealer[idx])  # R7
        self.to_act[idx] = np.where(end, seat, (seat + 1) & 3)
        if not end.any():
            return
        je = idx[end]
        b = bidder[end]
        out = b < 0
        if out.any():  # R8 redeal: thrown in
            thrown[je[out]] = True
        jb = je[~out]
        b = b[~out]
        if not jb.size:
            return
        self.to_act[jb] = b
        self.leader[jb] = b  # R12: the bidder leads the first trick
        if self._k:
            kitty = np.bitwise_or.reduce(np.left_shift(1, self.stock[jb, : self._k]), axis=1)  # R9
            self.kitty[jb] = kitty
            self.hands[jb, b] |= kitty
            self.phase[jb] = TRUMP
        else:
            self.phase[jb] = PLAY

    def _discard(self, idx: np.ndarray, c: np.ndarray) -> None:
        seat = self.to_act[idx]
        bit = np.left_shift(1, c)
        self.hands[idx, seat] &= ~bit
        self.discards[idx] |= bit
        nd = self.n_discards[idx]
        self.discard_order[idx, nd] = c
        nd = nd + 1
        self.n_discards[idx] = nd
        self.phase[idx] = np.where(nd == self._k, PLAY, DISCARD)

    def _play(self, idx: np.ndarray, c: np.ndarray, scored: np.ndarray) -> None:
        seat = self.to_act[idx]
        fi = (idx << 2) + seat  # flat index of (lane, seat)
        bit = np.left_shift(1, c)
        self._hands_f[fi] ^= bit
        self._played_f[fi] |= bit
        self._trick_f[fi] = c
        suit = c >> 3
        led = self.led[idx]
        lead = led < 0
        led = np.where(lead, suit, led)
        self.led[idx] = led
        self.leader[idx] = np.where(lead, seat, self.leader[idx])
        trump = self.trump[idx]
        if not self._k:
            trump = np.where(trump < 0, suit, trump)  # R10, kitty_size 0: the first card led
            self.trump[idx] = trump
        void = np.flatnonzero((suit != led) & (suit != trump))  # never on a lead
        if void.size:
            self._voids_f[fi[void]] |= np.left_shift(1, led[void])
        tbits = self.trick_bits[idx] | bit
        self.trick_bits[idx] = tbits
        tl = self.trick_len[idx] + 1
        self.trick_len[idx] = tl
        self.to_act[idx] = (seat + 1) & 3
        full = np.flatnonzero(tl == 4)
        if not full.size:
            return
        j = idx[full]
        winner = R.trick_winner(self.trick[j], trump[full], led[full])  # R12: the seat (trick stored by seat)
        self._won_f[(j << 1) + (winner & 1)] |= tbits[full]
        td = self.tricks_done[j]
        if self.recording:
            self._trick_winners[j, td] = winner
        td = td + 1
        self.tricks_done[j] = td
        self.to_act[j] = winner
        self.leader[j] = winner
        self.trick_len[j] = 0
        self.trick_bits[j] = 0
        self.led[j] = -1
        self.trick[j] = -1
        scored[j[td == 6]] = True

    def _score(self, idx: np.ndarray, res: StepResult) -> None:
        """R13-R20 for the lanes ``idx`` whose sixth trick is complete."""
        pb = self.played_by[idx]
        won = self.won[idx]
        bteam = self.bidder[idx] & 1
        contract = self.high_bid[idx]
        sc = R.score_hand(self.rules, self.trump[idx], pb[:, 0] | pb[:, 2], pb[:, 1] | pb[:, 3], won[:, 0],
                          won[:, 1], self.discards[idx], bteam, contract, self.scores[idx, 0],
                          self.scores[idx, 1])
        high, low, jack, game, made, winner = sc.high, sc.low, sc.jack, sc.game, sc.made, sc.winner
        cp0, cp1 = sc.card_points
        change = np.stack(sc.change, axis=1)
        new = np.stack(sc.scores, axis=1)
        self.scores[idx] = new
        res.score_delta[idx] = change
        res.scores[idx] = new
        res.winner[idx] = winner
        self.hand_bidder[idx] = self.bidder[idx]
        self.hand_contract[idx] = contract
        self.hand_made[idx] = made
        self.hand_points[idx] = np.stack([high, low, jack, game], axis=1)
        over = winner >= 0
        res.game_over[idx] = over
        res.reward_score[idx] = (change[:, 0] - change[:, 1]).astype(np.float32)[:, None] * SEAT_SIGN
        if over.any():
            res.reward_win[idx[over]] = np.where(winner[over, None] == 0, SEAT_SIGN, -SEAT_SIGN)
        if self.recording:
            pts = np.stack([high, low, jack, game], axis=1).tolist()
            cps = np.stack([cp0, cp1], axis=1).tolist()
            self._results = {
                lane: (pts[i], cps[i], bool(made[i]), change[i].tolist(), new[i].tolist())
                for i, lane in enumerate(idx.tolist())
            }

    def _end_hands(self, idx: np.ndarray, res: StepResult) -> None:
        """Lanes ``idx`` finished a hand (scored or thrown in): deal the next hand or start a new game."""
        over = res.game_over[idx]
        hn = self.hand_number[idx] + 1  # hands dealt in this game
        trunc = ~over & (hn >= self.max_hands)  # R21
        res.truncated[idx[trunc]] = True
        new_game = over | trunc
        if self.recording:
            self._record_hands(idx, res, new_game)
        self.hand_number[idx] = np.where(new_game, 0, hn)
        self.game_index[idx] += new_game
        self.scores[idx[new_game]] = 0
        # R4: the deal passes left after a scored hand; a thrown-in hand is redealt by the same dealer.
        self.dealer[idx] = (self.dealer[idx] + res.hand_over[idx]) & 3
        self._start_hands(idx, new_game)

    def load_worlds(self, lanes: Any, views: Sequence[Any], deals: Sequence[Any],
                    rng: np.random.Generator) -> None:
        """Put lanes ``lanes`` (increasing distinct indices) into the positions of ``views`` (relative
        :class:`~smear_env.infoset.PlayerView` objects, observer = seat 0, e.g. ``observation.decode``)
        completed by ``deals`` (:class:`~smear_env.infoset.HiddenDeal` objects consistent with them, e.g.
        :func:`~smear_env.infoset.sample_hidden`): what a search agent does to play a sampled world on.

        Everything a lane holds comes from the view and the deal, nothing from the lane's previous state,
        so an observer's search can see no card it does not know. Where neither says which cards are
        which and the observer cannot tell either, ``rng`` chooses: the order of the stock (which of its
        cards are the kitty, while bidding) and, for another seat's contract, which of the bidder's
        cards came from the kitty (the bidder's own observation shows them). The lanes start a new game
        history: ``game_index`` and ``hand_number`` 0, no records (use an engine without ``record``)."""
        idx = self._check_lanes(lanes)
        if not (len(views) == len(deals) == idx.size):
            raise ValueError(f"load_worlds: {idx.size} lanes, {len(views)} views and {len(deals)} deals")
        if self.recording:
            raise ValueError("load_worlds: an engine that records games cannot load positions")
        k = self._k
        m = idx.size
        hand_rows = np.zeros((len(_HAND_FIELDS), m), dtype=_I)
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
            bids = [0 if b is None else (1 if b == 0 else b) for b in v.bids]
            if bidding:
                high = max(bids) if max(bids) >= 2 else 0
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
                    kitty = sum(1 << int(c) for c in rng.choice(had, size=k, replace=False))
                rest = list(cards_of(d.stock))
                rng.shuffle(rest)
                stock_ids = cards_of(kitty) + rest
            discards = v.discards if bidder == 0 else d.discards
            trick = v.trick
            if trick:
                leader = v.trick_leader
            else:
                leader = v.to_act if v.phase == PLAY else (-1 if bidding else bidder)
            tricks_done = (played.bit_count() - len(trick)) // 4
            hand_rows[:, j] = (high, bidder, kitty, -1 if v.trump is None else v.trump, discards,
                               discards.bit_count(), sum(1 << c for c in trick),
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
        self._legal = None
        self.game_index[idx] = 0
        self.hand_number[idx] = 0
        self.phase[idx], self.to_act[idx], self.dealer[idx] = scal[0], scal[1], scal[2]
        self.scores[idx] = scal[3:].T
        self.hands[idx] = hands
        self.deal[idx] = hands | seat_rows[2]
        self.stock[idx] = stock
        self._per_hand[:, idx] = hand_rows
        self._per_seat[:, idx] = seat_rows
        self.won[idx] = won
        self.discard_order[idx] = order

    def copy_lanes(self, lanes: Any, source: VectorGame, source_lanes: Any) -> None:
        """Set lanes ``lanes`` (increasing distinct indices) to the states of ``source``'s lanes
        ``source_lanes`` (any indices, repeats allowed: one position played on several lanes, e.g. once per
        candidate action of a search). ``source`` must have the same rules; neither engine may record."""
        idx = self._check_lanes(lanes)
        src = np.asarray(source_lanes, dtype=_I)
        if src.shape != idx.shape or ((src < 0) | (src >= source.num_games)).any():
            raise ValueError(f"copy_lanes: {idx.size} lanes need as many source lanes in "
                             f"0..{source.num_games - 1}, got {source_lanes!r}")
        if source.rules != self.rules or self.recording or source.recording:
            raise ValueError("copy_lanes: both engines must have the same rules and must not record")
        self._legal = None
        for name in _LANE_STATE:
            getattr(self, name)[idx] = getattr(source, name)[src]
        self._per_hand[:, idx] = source._per_hand[:, src]
        self._per_seat[:, idx] = source._per_seat[:, src]

    def new_games(self, lanes: Any) -> None:
        """Abandon the game in progress in ``lanes`` (increasing distinct lane indices) and start each
        lane's next game (``game_index`` + 1, its first hand dealt as usual). A table uses it to cut a game
        off mid-hand (R21 ``max_cycles``). With ``record=True`` the abandoned game is recorded as
        truncated with the hands it completed (the hand in progress is dropped)."""
        idx = self._check_lanes(lanes)
        if not idx.size:
            return
        self._legal = None
        if self.recording:
            for lane in idx.tolist():
                self._finished.append({
                    "format": "smear-record/1",
                    "rules": self.rules.to_dict(),
                    "seed": None,
                    "hands": self._hand_records[lane],
                    "final_scores": self.scores[lane].tolist(),
                    "winner": None,
                    "truncated": True,
                })
                self._hand_records[lane] = []
        self.hand_number[idx] = 0
        self.game_index[idx] += 1
        self.scores[idx] = 0
        self._start_hands(idx, np.ones(idx.shape[0], dtype=bool))

    # -------------------------------------------------------------------------------- observation
    def observe(self, seats: np.ndarray | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """(N, 493) float32 observations, each equal to ``observation.encode_game(game, seat)``; ``seats``
        (N,) picks the observing seat per lane (default: the seat to act). ``out``: an (N, 493) float32
        array to write them into (e.g. a row block of a rollout buffer) instead of a new array."""
        return self._observe(seats, out)

    def observe_words(self, seats: np.ndarray | None = None) -> np.ndarray:
        """(N, 8) int64: the 0/1 features of :meth:`observe`'s rows as 512 bits, bit ``i`` of a row (bit
        ``i % 64`` of word ``i // 64``) set where column ``i`` is 1; the raw terms (scores, target, hand
        sizes) are 0 bits. The packed form an agent that reads only card and state bits takes, without
        the float rows (``np.unpackbits`` of it, little-endian, is the 0/1 part of ``observe``)."""
        return self._observe(seats, None, "words")

    def _observe(self, seats: np.ndarray | None, out: np.ndarray | None, form: str = "floats") -> Any:
        """``form``: "floats" (:meth:`observe`), "words" (:meth:`observe_words`) or "both" (``(words,
        floats)`` of one pass)."""
        n = self.num_games
        if seats is None:
            s = self.to_act
        else:
            s = np.asarray(seats)
            if s.shape != (n,) or s.dtype.kind not in "iu" or ((s < 0) | (s > 3)).any():
                raise ValueError(f"seats must be an integer array of {n} seats 0..3, got {seats!r}")
            s = s.astype(_I)
        rel = self._ar4[:, None] + ((s[:, None] + _SEATS) & 3)  # flat index of each relative seat
        own = self._ar2x + (s & 1)  # flat index of the observer's team
        other = own ^ 1
        phase = self.phase
        bidding_over = phase != BIDDING
        is_bidder = bidding_over & (self.bidder == s)
        # All 0/1 features as 512 bits (8 little-endian words; bit i = vector index i), unpacked once.
        words = np.zeros((n, 8), dtype=_I)

        def put(offset: int, v: np.ndarray) -> None:  # v: at most 32 bits
            w, sh = divmod(offset, 64)
            words[:, w] |= v << sh
            if sh > 32:
                words[:, w + 1] |= v >> (64 - sh)

        one = np.int64(1)
        words[:, 0] = (
            (one << (PHASE + phase))
            | (one << (TO_ACT + ((self.to_act - s) & 3)))
            | (one << (DEALER + ((self.dealer - s) & 3)))
            | (one << (KITTY_SIZE + self._k))
            | (self._hands_f[self._ar4 + s] << HAND)
        )
        bs = self._bids_f[rel] + _BID_OFFSETS
        put(BIDS, (one << bs[:, 0]) | (one << bs[:, 1]) | (one << bs[:, 2]) | (one << bs[:, 3]))
        trump_known = R.trump_known(self.trump, is_bidder, (self.tricks_done > 0) | (self.trick_len > 0))
        put(BIDDER, np.where(
            bidding_over,
            (one << ((self.bidder - s) & 3)) | (one << (CONTRACT - BIDDER - 2 + self.high_bid)),
            0,
        ) | np.where(trump_known, one << (TRUMP_ - BIDDER + np.maximum(self.trump, 0)), 0))
        put(KITTY, np.where(is_bidder, self.kitty, 0))
        put(DISCARDS, np.where(is_bidder, self.discards, 0))
        pb = self._played_f[rel]
        for r in range(4):
            put(PLAYED_BY + 32 * r, pb[:, r])
        put(WON, self._won_f[own])
        put(WON + 32, self._won_f[other])
        put(TRICK_LEADER, np.where(self.trick_len > 0, one << ((self.leader - s) & 3), 0))
        tr = self._trick_f[rel]
        tr = np.where(tr >= 0, one << np.maximum(tr, 0), 0)
        for r in range(4):
            put(TRICK + 32 * r, tr[:, r])
        v = self._voids_f[rel]
        v = v[:, 0] | (v[:, 1] << 4) | (v[:, 2] << 8) | (v[:, 3] << 12)
        if self._stuck_rule:
            stuck = (phase == BIDDING) & (self.to_act == s) & (s == self.dealer) & (self.high_bid == 0)
            v = v | (stuck.astype(_I) << (STUCK - VOIDS))
        put(VOIDS, v)
        if form == "words":
            return words
        packed = words.astype("<i8", copy=False).view(np.uint8)
        bits = np.unpackbits(packed, axis=1, count=OBS_SIZE, bitorder="little")
        if out is None:
            out = bits.astype(np.float32)
        else:
            if not isinstance(out, np.ndarray) or out.shape != (n, OBS_SIZE) or out.dtype != np.float32:
                raise ValueError(f"out must be a float32 array of shape ({n}, {OBS_SIZE})")
            out[...] = bits
        # raw terms
        scores = self.scores.reshape(-1)
        out[:, SCORES] = scores[own]
        out[:, SCORES + 1] = scores[other]
        out[:, TARGET] = self.rules.target_score
        out[:, HAND_SIZES : HAND_SIZES + 4] = np.bitwise_count(self._hands_f[rel])
        return (words, out) if form == "both" else out

    # -------------------------------------------------------------------------------- records
    def _record_hands(self, idx: np.ndarray, res: StepResult, new_game: np.ndarray) -> None:
        k = self._k
        for i, lane in enumerate(idx.tolist()):
            dealer = int(self.dealer[lane])
            dealt = self.deal[lane].tolist()
            deal = [[CARD_NAMES[c] for c in range(NUM_CARDS) if m >> c & 1] for m in dealt]
            log = self._log[lane, : self._log_len[lane]].tolist()
            nb = 0
            bids = []
            for a in log:
                if a >= TRUMP_ACTION_BASE or nb == 4:
                    break
                bids.append({"seat": (dealer + 1 + nb) & 3, "bid": "pass" if a == 0 else a + 1})
                nb += 1
            rec: dict[str, Any] = {
                "dealer": dealer,
                "deal": deal,
                "stock": [CARD_NAMES[c] for c in self.stock[lane].tolist()],
                "bids": bids,
            }
            if res.thrown_in[lane]:
                rec["thrown_in"] = True
            else:
                bidder = int(self.bidder[lane])
                rec["bidder"] = bidder
                rec["contract"] = int(self.high_bid[lane])
                if k:
                    rec["kitty"] = [CARD_NAMES[c] for c in self.stock[lane, :k].tolist()]
                rec["trump"] = SUIT_CHARS[int(self.trump[lane])]
                if k:
                    rec["discards"] = [CARD_NAMES[c] for c in self.discard_order[lane, :k].tolist()]
                plays = [a - PLAY_ACTION_BASE for a in log[nb + (1 + k if k else 0):]]
                tricks = []
                leader = bidder
                winners = self._trick_winners[lane].tolist()
                for tn in range(6):
                    cards = plays[4 * tn : 4 * tn + 4]
                    tricks.append({
                        "leader": leader,
                        "plays": [
                            {"seat": (leader + j) & 3, "card": CARD_NAMES[c]} for j, c in enumerate(cards)
                        ],
                        "winner": winners[tn],
                    })
                    leader = winners[tn]
                rec["tricks"] = tricks
                pts, cp, made, change, scores = self._results[lane]
                rec["points"] = {n: (None if p < 0 else p) for n, p in zip(POINT_NAMES, pts, strict=True)}
                rec["card_points"] = cp
                rec["made_contract"] = made
                rec["score_change"] = change
                rec["scores"] = scores
            hands = self._hand_records[lane]
            hands.append(rec)
            if new_game[i]:
                winner = int(res.winner[lane])
                self._finished.append({
                    "format": "smear-record/1",
                    "rules": self.rules.to_dict(),
                    "seed": None,
                    "hands": hands,
                    "final_scores": self.scores[lane].tolist(),
                    "winner": winner if winner >= 0 else None,
                    "truncated": winner < 0,
                })
                self._hand_records[lane] = []

    def records(self) -> list[dict[str, Any]]:
        """The games finished or truncated since the last call, as smear-record/1 dicts (then cleared)."""
        if not self.recording:
            raise RuntimeError("records() needs VectorGame(..., record=True)")
        out, self._finished = self._finished, []
        return out

    def memory_bytes(self) -> int:
        """Bytes held by the state arrays (all lanes)."""
        return sum(v.nbytes for v in vars(self).values() if isinstance(v, np.ndarray) and v.base is None)
