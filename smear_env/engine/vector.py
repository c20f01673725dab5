"""The batched engine: N games of Smear held as numpy arrays and stepped together, exactly the rules of
:mod:`smear_env.engine.game` (R1-R21, every :class:`~smear_env.core.config.SmearRules` option).

Each *lane* holds one game. Every call to :meth:`VectorGame.step` takes one decision in every lane
(the seat to act is ``to_act``); there is no Python loop over lanes on the hot path, only array
operations (a loop runs over the lanes whose hand ends, and only when recording).

Contract
--------
``VectorGame(num_games, rules=SmearRules(), seed=0, record=False, max_hands=200, deals=None)``

``seed`` is an integer 0..2**64 - 1 (anything else, a bool or a float included, is a
:class:`~smear_env.core.seeding.SeedError`, a ``ValueError``);
``deals`` an optional :class:`VectorDealSource` that deals every hand instead of the seed's hash (below).

``to_act`` ``(N,)`` int64 is the seat to act in each lane (somebody always acts: lanes never rest in
``HAND_OVER`` or ``GAME_OVER``); :meth:`~VectorGame.legal_mask`, :meth:`~VectorGame.observe`,
:meth:`~VectorGame.step`, :meth:`~VectorGame.new_games`, :meth:`~VectorGame.random_actions` and
:meth:`~VectorGame.records` say what they take and give. ``hand_bidder``, ``hand_contract``,
``hand_made``, ``hand_points`` (``(N,)``, ``(N,)``, ``(N,)`` bool, ``(N, 4)``): the bidder, contract,
whether it was made and the team that won High, Low, Jack and Game (-1 nobody) of the hand a lane scored
in the latest step (valid where that step's ``hand_over`` is set; for statistics without records).

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
Deals come from a counter-based hash of the seed, the lane, the game and the hand, so a lane's games do not
depend on the number of lanes or on the other lanes; or, with ``deals=source``, from a
:class:`VectorDealSource` (e.g. the duplicate evaluator's deal sequences). :mod:`smear_env.engine.lane_deals`
says how, and :func:`reference_game` builds the single game a lane plays. Records carry ``"seed": null``
(their deals are explicit).

Since a lane deals its next hand inside ``step``, the state at the end of a hand (its last trick on the
table) is never observed; ``StepResult`` reports what that hand scored.

Implementation
--------------
State is a few int64 arrays per lane (``memory_bytes()``: about 470 bytes a lane): card masks (card id
``suit * 8 + rank``, bit ``card``) and small integers. This module holds the lanes' storage; what every
engine shares it takes from one place: the transitions of the state machine
(:mod:`smear_env.core.transitions`, called on the lanes in each phase), the legal actions as a bit word and
a base action per lane (:func:`smear_env.core.phases.legal_bits`), the observation words
(:func:`smear_env.engine.observation.feature_parts`, gathered by :mod:`smear_env.engine.lane_observation`),
the records (:mod:`smear_env.engine.recording`, through
:mod:`smear_env.engine.lane_records`) and the card rules (:mod:`smear_env.core.rules`).
``benchmarks/engine_once.py`` and ``benchmarks/vector_speed.py`` measure it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core import phases
from ..core import rules as R
from ..core import transitions as T
from ..core.actions import DISCARD_ACTION_BASE, NUM_ACTIONS, PLAY_ACTION_BASE, TRUMP_ACTION_BASE, action_name
from ..core.config import SmearRules
from ..core.phases import (  # noqa: F401 (random_actions re-exported)
    BIDDING,
    DISCARD,
    HAND_OVER,
    NUM_PLAYERS,
    PASSED,
    PLAY,
    TRUMP,
    Phase,
    legal_bits,
    random_actions,
    random_bit_actions,
)
from .game import IllegalActionError
from .lane_deals import (  # noqa: F401 (re-exported: the batched engine's deals)
    SEED_LIMIT,
    VectorDealSource,
    check_seed,
    deck_of,
    lane_deal,
    reference_game,
    source_deals,
)
from .lane_observation import observe_lanes
from .lane_records import LaneRecorder
from .lane_step import SEAT_SIGN, StepResult, VectorIllegalActionError
from .worlds import HAND_FIELDS, world_states

MAX_HANDS_LIMIT = 1 << 24

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
assert PASSED == 1  # VectorGame._bid: a bid action's id + 1 is the seat's bid state
# per-hand integers (worlds.HAND_FIELDS) and their values at a deal
_HAND_RESET = np.array(list(HAND_FIELDS.values()), dtype=_I)[:, None]
_SEAT_RESET = np.array([0, -1, 0, 0], dtype=_I)[:, None, None]  # bids, trick, played_by, voids
# the per-lane state arrays besides _per_hand and _per_seat (VectorGame.copy_lanes)
_LANE_STATE = ("game_index", "hand_number", "scores", "dealer", "phase", "to_act", "hands", "deal", "stock",
               "won", "discard_order", "hand_bidder", "hand_contract", "hand_made", "hand_points")


def _columns(cols: Sequence[np.ndarray]) -> np.ndarray:
    """The (m,) int arrays ``cols`` as the columns of one (m, k) int64 array (np.stack without its Python
    layer)."""
    out = np.empty((cols[0].shape[0], len(cols)), dtype=_I)
    for i, c in enumerate(cols):
        out[:, i] = c
    return out


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
        self.seed = check_seed(seed, allow_none=False)
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
        self._after_bidding = TRUMP if self._k else PLAY  # the phase after a contract (R9, R10)
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
        self._per_hand = np.zeros((len(HAND_FIELDS), n), dtype=_I)
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
        self._recorder = LaneRecorder(n, self.rules) if self.recording else None
        self._start_hands(self._ar, new_game=np.ones(n, dtype=bool))

    # -------------------------------------------------------------------------------- dealing
    def _start_hands(self, idx: np.ndarray, new_game: np.ndarray, games: np.ndarray | None = None,
                     hand_numbers: np.ndarray | None = None, dealer: np.ndarray | None = None) -> None:
        """Deal the current hand of lanes ``idx`` (the first hand of a game where ``new_game``); ``games``,
        ``hand_numbers`` and ``dealer``: the lanes' ``game_index``, ``hand_number`` and ``dealer`` when the
        caller has them at hand."""
        games = self.game_index[idx] if games is None else games
        hand_numbers = self.hand_number[idx] if hand_numbers is None else hand_numbers
        if self.deal_source is None:
            perm, first_dealer = R.hashed_deals(self._lane_keys[idx], games, hand_numbers)
        else:
            perm, first_dealer = source_deals(self.deal_source, idx, games, hand_numbers)
        dealer = np.where(new_game, first_dealer, self.dealer[idx] if dealer is None else dealer)
        self.dealer[idx] = dealer
        hands, stock = R.deal_masks(perm)  # R5
        self.hands[idx] = hands
        self.deal[idx] = hands
        self.stock[idx] = stock
        self.phase[idx] = BIDDING
        self.to_act[idx] = T.first_to_bid(dealer)  # R6
        self._per_hand[:, idx] = _HAND_RESET
        self._per_seat[:, idx] = _SEAT_RESET
        self.won[idx] = 0
        if self._recorder is not None:
            self._recorder.dealt(idx)

    # -------------------------------------------------------------------------------- legality
    def legal_bits(self) -> tuple[np.ndarray, np.ndarray]:
        """Per lane ``(bits, base)``: the legal actions are ``base + i`` for the set bits ``i`` of ``bits``;
        ``base`` is 0 (bids and trump: actions 0..7), 8 (discards, by card) or 40 (plays, by card)
        (:func:`smear_env.core.phases.legal_bits`, the one legal-action function of every engine)."""
        if self._legal is not None:
            return self._legal
        to_act = self.to_act
        stuck = phases.dealer_stuck(self.rules, self.phase, to_act, to_act, self.dealer, self.high_bid)
        self._legal = legal_bits(self.phase, self._hands_f[self._ar4 + to_act], self.high_bid, stuck,
                                 self.trump, self.led, self.tricks_done == 0)
        return self._legal

    def legal_mask(self) -> np.ndarray:
        """(N, 72) bool: legal actions of the seat to act in each lane."""
        bits, base = self.legal_bits()
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
        return random_bit_actions(*self.legal_bits(), rng)

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
        a = a.astype(_I, copy=False)  # read only below
        bits, base = self.legal_bits()
        if lanes is not None:
            bits, base = bits[lanes], base[lanes]
        d = a - base
        ok = (d >= 0) & (d < 32) & (((bits >> (d & 31)) & 1) == 1)  # d & 31: a defined shift
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
            if self._recorder is not None:
                self._recorder.decided(self._ar, a)
            i_play = (phase == PLAY).nonzero()[0]  # of 1-D arrays: flatnonzero without its Python layer
            i_bid = (phase == BIDDING).nonzero()[0]
            i_trump = (phase == TRUMP).nonzero()[0]
            i_disc = (phase == DISCARD).nonzero()[0]
            a_play, a_bid, a_trump, a_disc = a[i_play], a[i_bid], a[i_trump], a[i_disc]
        else:
            phase = self.phase[idx]
            if self._recorder is not None:
                self._recorder.decided(idx, a)
            s_play, s_bid = (phase == PLAY).nonzero()[0], (phase == BIDDING).nonzero()[0]
            s_trump, s_disc = (phase == TRUMP).nonzero()[0], (phase == DISCARD).nonzero()[0]
            i_play, i_bid, i_trump, i_disc = idx[s_play], idx[s_bid], idx[s_trump], idx[s_disc]
            a_play, a_bid, a_trump, a_disc = a[s_play], a[s_bid], a[s_trump], a[s_disc]
        scored, thrown, game_over, truncated = np.zeros((4, n), dtype=bool)  # one allocation, four rows
        if i_bid.size:
            self._bid(i_bid, a_bid, thrown)
        if i_trump.size:
            self.trump[i_trump], self.phase[i_trump] = T.after_trump(a_trump - TRUMP_ACTION_BASE)
        if i_disc.size:
            self._discard(i_disc, a_disc - DISCARD_ACTION_BASE)
        if i_play.size:
            self._play(i_play, a_play - PLAY_ACTION_BASE, scored)
        rewards = np.zeros((2, n, 4), dtype=np.float32)
        res = StepResult(
            hand_over=scored,
            thrown_in=thrown,
            game_over=game_over,
            truncated=truncated,
            winner=np.full(n, -1, dtype=_I),
            score_delta=np.zeros((n, 2), dtype=_I),
            scores=self.scores.copy(),
            reward_score=rewards[0],
            reward_win=rewards[1],
        )
        i_scored = scored.nonzero()[0]
        if i_scored.size:
            self._score(i_scored, res)
        ended = scored | thrown
        if ended.any():
            self._end_hands(ended.nonzero()[0], res)
        return res

    # Each transition is one function of smear_env.core.transitions (the state machine of every engine),
    # called on the lanes in that phase; the methods below store what it returns in the lanes' arrays.
    def _bid(self, idx: np.ndarray, act: np.ndarray, thrown: np.ndarray) -> None:
        seat = self.to_act[idx]
        state = act + 1  # the seat's bid state: PASSED (1) for a pass (action 0), else the bid (action + 1)
        self.bids[idx, seat] = state
        bid = np.where(act == 0, 0, state)
        phase, to_act, high_bid, bidder, ended = T.after_bid(self.rules, seat, bid, self.dealer[idx],
                                                             self.high_bid[idx], self.bidder[idx])
        self.to_act[idx] = to_act
        self.high_bid[idx] = high_bid
        self.bidder[idx] = bidder
        if not ended.any():  # every lane still bidding: the phase stays BIDDING
            return
        self.phase[idx] = phase
        thrown[idx[phase == HAND_OVER]] = True  # R8 redeal
        contract = (phase == self._after_bidding).nonzero()[0]
        if not contract.size:
            return
        jb = idx[contract]
        b = bidder[contract]
        self.leader[jb] = b  # R12: the bidder leads the first trick
        if self._k:  # R9
            self.hands[jb, b], self.kitty[jb] = T.take_kitty(self.rules, self.hands[jb, b], self.stock[jb])

    def _discard(self, idx: np.ndarray, c: np.ndarray) -> None:
        fi = (idx << 2) + self.to_act[idx]
        nd = self.n_discards[idx]
        self.discard_order[idx, nd] = c
        nd = nd + 1
        self.n_discards[idx] = nd
        self.discards[idx] |= np.left_shift(1, c)
        self._hands_f[fi], self.phase[idx] = T.after_discard(self.rules, self._hands_f[fi], c, nd)

    def _play(self, idx: np.ndarray, c: np.ndarray, scored: np.ndarray) -> None:
        seat = self.to_act[idx]
        fi = (idx << 2) + seat  # flat index of (lane, seat)
        bit = np.left_shift(1, c)
        self._hands_f[fi] ^= bit
        self._played_f[fi] |= bit
        self._trick_f[fi] = c
        led, leader, trump, void, trick_len, to_act = T.after_play(
            self.rules, seat, c, self.led[idx], self.leader[idx], self.trump[idx], self.trick_len[idx])
        self.led[idx] = led
        self.leader[idx] = leader
        if not self._k:
            self.trump[idx] = trump
        shown = void.nonzero()[0]
        if shown.size:
            self._voids_f[fi[shown]] |= np.left_shift(1, led[shown])
        tbits = self.trick_bits[idx] | bit
        self.trick_bits[idx] = tbits
        self.trick_len[idx] = trick_len
        self.to_act[idx] = to_act
        full = (trick_len == T.TRICK_SIZE).nonzero()[0]
        if not full.size:
            return
        j = idx[full]
        # R12: the trick is stored by seat, so the index of the winning card is the winning seat
        winner, team, done, hand_over = T.after_trick(R.trick_winner(self.trick[j], trump[full], led[full]),
                                                      self.tricks_done[j])
        self._won_f[(j << 1) + team] |= tbits[full]
        if self._recorder is not None:
            self._recorder.trick_won(j, self.tricks_done[j], winner)
        self.tricks_done[j] = done
        self.to_act[j] = winner
        self.leader[j] = winner
        self.trick_len[j] = 0
        self.trick_bits[j] = 0
        self.led[j] = -1
        self.trick[j] = -1
        scored[j[hand_over]] = True

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
        change = _columns(sc.change)
        new = _columns(sc.scores)
        self.scores[idx] = new
        res.score_delta[idx] = change
        res.scores[idx] = new
        res.winner[idx] = winner
        self.hand_bidder[idx] = self.bidder[idx]
        self.hand_contract[idx] = contract
        self.hand_made[idx] = made
        self.hand_points[idx] = _columns((high, low, jack, game))
        over = winner >= 0
        res.game_over[idx] = over
        res.reward_score[idx] = (change[:, 0] - change[:, 1]).astype(np.float32)[:, None] * SEAT_SIGN
        if over.any():
            res.reward_win[idx[over]] = np.where(winner[over, None] == 0, SEAT_SIGN, -SEAT_SIGN)
        if self._recorder is not None:
            self._recorder.scored(idx, self.hand_points[idx], _columns((cp0, cp1)), made, change, new)

    def _end_hands(self, idx: np.ndarray, res: StepResult) -> None:
        """Lanes ``idx`` finished a hand (scored or thrown in): deal the next hand or start a new game."""
        over = res.game_over[idx]
        hn = self.hand_number[idx] + 1  # hands dealt in this game
        trunc = T.truncated(hn, self.max_hands, over)  # R21
        res.truncated[idx[trunc]] = True
        new_game = over | trunc
        if self._recorder is not None:
            self._recorder.hands_ended(self, idx, res.thrown_in, res.winner, new_game)
        hn = np.where(new_game, 0, hn)
        self.hand_number[idx] = hn
        games = self.game_index[idx] + new_game
        self.game_index[idx] = games
        self.scores[idx[new_game]] = 0
        dealer = T.next_dealer(self.dealer[idx], res.hand_over[idx])  # R4, R8
        self._start_hands(idx, new_game, games, hn, dealer)

    def load_worlds(self, lanes: Any, views: Sequence[Any], deals: Sequence[Any],
                    rng: np.random.Generator) -> None:
        """Put lanes ``lanes`` (increasing distinct indices) into the positions of ``views`` (relative
        :class:`~smear_env.engine.infoset.PlayerView` objects, observer = seat 0, e.g. ``decoding.decode``)
        completed by ``deals`` (:class:`~smear_env.engine.infoset.HiddenDeal` objects consistent with them,
        e.g.
        :func:`~smear_env.engine.infoset.sample_hidden`): what a search agent does to play a sampled world on.

        Everything a lane holds comes from the view and the deal
        (:func:`smear_env.engine.worlds.world_states`), nothing from the lane's previous state, so an
        observer's search can see no card it does not know. Where neither says which cards are which and the
        observer cannot tell either, ``rng`` chooses: the order of the stock (which of its cards are the
        kitty, while bidding) and, for another seat's contract, which of the bidder's cards came from the
        kitty (the bidder's own observation shows them). The lanes start a new game history: ``game_index``
        and ``hand_number`` 0, no records (use an engine without ``record``)."""
        idx = self._check_lanes(lanes)
        if not (len(views) == len(deals) == idx.size):
            raise ValueError(f"load_worlds: {idx.size} lanes, {len(views)} views and {len(deals)} deals")
        if self.recording:
            raise ValueError("load_worlds: an engine that records games cannot load positions")
        w = world_states(views, deals, self._k, rng)
        self._legal = None
        self.game_index[idx] = 0
        self.hand_number[idx] = 0
        self.phase[idx], self.to_act[idx], self.dealer[idx] = w.phase, w.to_act, w.dealer
        self.scores[idx] = w.scores
        self.hands[idx] = w.hands
        self.deal[idx] = w.hands | w.per_seat[2]
        self.stock[idx] = w.stock
        self._per_hand[:, idx] = w.per_hand
        self._per_seat[:, idx] = w.per_seat
        self.won[idx] = w.won
        self.discard_order[idx] = w.discard_order

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
        if self._recorder is not None:
            for lane in idx.tolist():  # truncated (R21): no winner
                self._recorder.game_over(lane, self.scores[lane].tolist(), None)
        self.hand_number[idx] = 0
        self.game_index[idx] += 1
        self.scores[idx] = 0
        self._start_hands(idx, np.ones(idx.shape[0], dtype=bool))

    # -------------------------------------------------------------------------------- observation
    def observe(self, seats: np.ndarray | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """(N, 493) float32 observations, each equal to ``observation.encode_game(game, seat)``; ``seats``
        (N,) picks the observing seat per lane (default: the seat to act). ``out``: an (N, 493) float32
        array to write them into (e.g. a row block of a rollout buffer) instead of a new array."""
        return observe_lanes(self, seats, out)

    def observe_words(self, seats: np.ndarray | None = None) -> np.ndarray:
        """(N, 8) int64: the 0/1 features of :meth:`observe`'s rows as 512 bits, bit ``i`` of a row (bit
        ``i % 64`` of word ``i // 64``) set where column ``i`` is 1; the raw terms (scores, target, hand
        sizes) are 0 bits. The packed form an agent that reads only card and state bits takes, without
        the float rows (``np.unpackbits`` of it, little-endian, is the 0/1 part of ``observe``)."""
        return observe_lanes(self, seats, None, "words")

    def observe_both(self, seats: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(observe_words(seats), observe(seats))`` of one pass."""
        return observe_lanes(self, seats, None, "both")

    # -------------------------------------------------------------------------------- records
    def records(self) -> list[dict[str, Any]]:
        """The games finished or truncated since the last call, as smear-record/1 dicts (then cleared)."""
        if self._recorder is None:
            raise RuntimeError("records() needs VectorGame(..., record=True)")
        return self._recorder.take()

    def memory_bytes(self) -> int:
        """Bytes held by the state arrays (all lanes)."""
        return sum(v.nbytes for v in vars(self).values() if isinstance(v, np.ndarray) and v.base is None)
