"""The observation vector: one flat float32 array of named slices, observer-relative (R22, R23).

Built from named terms in the manner of OpenSpiel's hearts observer: each term has a size, offsets are
computed once, and the total is asserted. Seats are relative to the observer: ``0`` self, ``1`` left,
``2`` partner, ``3`` right; teams: ``0`` own team, ``1`` other team. Everything is a 0/1 feature except
the terms marked *raw*, which hold small integers as floats.

=====================  ====  ===================================================================
term                   size  meaning
=====================  ====  ===================================================================
``phase``              6     one-hot Phase (BIDDING, TRUMP, DISCARD, PLAY, HAND_OVER, GAME_OVER)
``to_act``             4     rel seat to act, one-hot; all zero when nobody acts
``dealer``             4     rel seat of the dealer
``scores``             2     *raw* scores: own team, other team (may be negative)
``target_score``       1     *raw* R18 target score
``kitty_size``         4     one-hot kitty_size 0..3 (R9)
``hand``               32    own cards
``bids``               4x5   per rel seat: not acted / pass / bid 2 / bid 3 / bid 4 (R6)
``bidder``             4     rel seat of the bidder, once bidding is over; all zero before
``contract``           3     contract 2 / 3 / 4, once bidding is over
``trump``              4     trump suit C D H S, only once known to the observer (R10, R23)
``kitty``              32    the kitty cards; zero unless the observer is the bidder (R9, R23)
``discards``           32    the bidder's discards; zero unless the observer is the bidder (R11, R23)
``played_by``          4x32  cards each rel seat played this hand (R22)
``won_by_team``        2x32  cards in tricks won this hand by own team, other team
``trick_leader``       4     rel seat that led the current trick; all zero when it has no card
``trick``              4x32  per rel seat, the card it played in the current trick (order: from leader)
``voids``              4x4   per rel seat, suits it has shown void in
``stuck``              1     1 when the observer is a stuck dealer that may not pass (R8 dealer_must_bid)
``hand_sizes``         4     *raw* number of cards each rel seat holds
=====================  ====  ===================================================================

``OBS_SIZE`` = 493; ``SLICES`` maps each term name to its ``slice``.

:data:`LAYOUT` is the layout as data: one :class:`Term` row per term (blocks and their width, kind, the
:class:`~smear_env.engine.infoset.PlayerView` field it holds, how it decodes, whether it is indexed by suit,
its network input scale and its bounds). ``TERMS``, ``SLICES``, the offsets, ``OBS_LOW`` / ``OBS_HIGH``,
``OBS_SCALE``, the suit canonicalisation tables and both decoders (:mod:`smear_env.engine.decoding`) are
derived from it. A new term is one row there and its line in the table above (the docs build checks
the table against ``TERMS``), its ``PlayerView`` field, and its words in the one encoder here
(:func:`feature_parts`, which the single game, a view and the batched engine all call).

:func:`encode` writes a :class:`~smear_env.engine.infoset.PlayerView` (in its relative form);
:func:`smear_env.engine.decoding.decode` is its exact inverse: ``decode(encode(v)) == v.relative()``, the
view's ``legal_actions`` recomputed from the decoded information (R6-R12; the one fact not otherwise in
the view, whether a dealer may pass under R8 ``dealer_must_bid``, is the ``stuck`` bit) or taken from an
action mask when one is passed: ``decode(vec, mask)``.
:func:`observe` builds the PettingZoo dict straight from a game (the fast path the environments use);
it equals ``encode(view_of(game, seat))``.

Encoding speed: all 0/1 features are assembled into one Python int (one bit per vector index) with
precomputed offsets and unpacked with a single ``numpy.unpackbits`` call; the raw terms are then written.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import warnings
from operator import lshift
from typing import Any, NamedTuple

import numpy as np

from ..core.actions import (
    DISCARD_ACTION_BASE,
    MAX_BID,
    MIN_BID,
    NUM_ACTIONS,
    PASS_ACTION,
    PLAY_ACTION_BASE,
    TRUMP_ACTION_BASE,
)
from ..core.cards import HAND_SIZE, NUM_CARDS, NUM_SUITS
from ..core.phases import (
    BIDDING,
    HAND_OVER,
    NOT_ACTED,
    PASSED,
    Phase,
    bid_state,
)
from ..core.rules import trump_known
from .game import Game
from .infoset import PlayerView

NUM_PHASES = len(Phase)
NUM_BID_STATES = 2 + (MAX_BID - MIN_BID + 1)  # not acted, pass, 2, 3, 4
NUM_CONTRACTS = MAX_BID - MIN_BID + 1
MAX_KITTY = 3
RAW_LIMIT = float(2**24)
"""Bound of the raw scores and target: the integers float32 holds exactly."""

# How a term decodes into its PlayerView field (one value per block; a tuple of them when blocks > 1):
AS_ONE_HOT = "one_hot"  # at most one bit per block: ``values[i]`` for bit i, ``absent`` for none
AS_MASK = "mask"  # the block's bits as an int (a card mask, a suit mask)
AS_INTS = "ints"  # small integers as floats: a tuple of ints, one int when the term has size 1
AS_TRICK = "trick"  # one-hot card per relative seat, read in play order from ``trick_leader``
AS_FLAG = "flag"  # one bit that is not a view field (``stuck``: read by decode for the legal actions)
REQUIRED = object()
"""``absent`` of a one-hot term that must have a bit (``phase``): a vector without it is no observation."""
SUIT_CARDS = "cards"  # each block is 32 cards, card id = 8 * suit + rank
SUIT_SUITS = "suits"  # each block is the 4 suits
_SEATS = (0, 1, 2, 3)


class Term(NamedTuple):
    """One term of the observation vector: a row of :data:`LAYOUT`, from which the offsets, bounds,
    :data:`OBS_SCALE`, the suit tables and both decoders are derived."""

    name: str
    blocks: int
    """Number of blocks (relative seats, teams); 1 for most terms."""
    width: int
    """Size of one block."""
    kind: str
    """``"bits"`` (0/1 features) or ``"raw"`` (small integers as floats)."""
    field: str | None
    """The :class:`~smear_env.engine.infoset.PlayerView` field it encodes (relative seats), None for none."""
    decode: str
    """:data:`AS_ONE_HOT`, :data:`AS_MASK`, :data:`AS_INTS`, :data:`AS_TRICK` or :data:`AS_FLAG`."""
    values: tuple[Any, ...] = ()
    """ONE_HOT: the decoded value of each bit of a block."""
    absent: Any = None
    """ONE_HOT: the value of a block with no bit set (:data:`REQUIRED`: an error)."""
    suits: str | None = None
    """Suit-indexed (renamed by suit canonicalisation): :data:`SUIT_CARDS`, :data:`SUIT_SUITS` or None."""
    scale: float = 1.0
    """Multiplier of the network input (:data:`OBS_SCALE`)."""
    low: float = 0.0
    high: float = 1.0
    """Bounds of each index (gymnasium Box spaces)."""

    @property
    def size(self) -> int:
        return self.blocks * self.width


B = "bits"
LAYOUT: tuple[Term, ...] = (
    Term("phase", 1, NUM_PHASES, B, "phase", AS_ONE_HOT, tuple(Phase), REQUIRED),
    Term("to_act", 1, 4, B, "to_act", AS_ONE_HOT, _SEATS, None),
    Term("dealer", 1, 4, B, "dealer", AS_ONE_HOT, _SEATS, 0),
    Term("scores", 1, 2, "raw", "scores", AS_INTS, scale=1 / 16, low=-RAW_LIMIT, high=RAW_LIMIT),
    Term("target_score", 1, 1, "raw", "target_score", AS_INTS, scale=1 / 16, low=1, high=RAW_LIMIT),
    Term("kitty_size", 1, MAX_KITTY + 1, B, "kitty_size", AS_ONE_HOT, tuple(range(MAX_KITTY + 1)), 0),
    Term("hand", 1, NUM_CARDS, B, "hand", AS_MASK, suits=SUIT_CARDS),
    Term("bids", 4, NUM_BID_STATES, B, "bids", AS_ONE_HOT, (None, 0, *range(MIN_BID, MAX_BID + 1)), None),
    Term("bidder", 1, 4, B, "bidder", AS_ONE_HOT, _SEATS, None),
    Term("contract", 1, NUM_CONTRACTS, B, "contract", AS_ONE_HOT, tuple(range(MIN_BID, MAX_BID + 1)), None),
    Term("trump", 1, NUM_SUITS, B, "trump", AS_ONE_HOT, tuple(range(NUM_SUITS)), None, suits=SUIT_SUITS),
    Term("kitty", 1, NUM_CARDS, B, "kitty", AS_MASK, suits=SUIT_CARDS),
    Term("discards", 1, NUM_CARDS, B, "discards", AS_MASK, suits=SUIT_CARDS),
    Term("played_by", 4, NUM_CARDS, B, "played_by", AS_MASK, suits=SUIT_CARDS),
    Term("won_by_team", 2, NUM_CARDS, B, "won_by_team", AS_MASK, suits=SUIT_CARDS),
    Term("trick_leader", 1, 4, B, "trick_leader", AS_ONE_HOT, _SEATS, None),
    Term("trick", 4, NUM_CARDS, B, "trick", AS_TRICK, tuple(range(NUM_CARDS)), None, suits=SUIT_CARDS),
    Term("voids", 4, NUM_SUITS, B, "voids", AS_MASK, suits=SUIT_SUITS),
    Term("stuck", 1, 1, B, None, AS_FLAG),
    Term("hand_sizes", 1, 4, "raw", "hand_sizes", AS_INTS, scale=1 / 9, high=HAND_SIZE + MAX_KITTY),
)
"""The observation layout, in vector order (see the table in the module docstring)."""
del B

TERMS: tuple[tuple[str, int, str], ...] = tuple((t.name, t.size, t.kind) for t in LAYOUT)
"""(name, size, kind) of each term in vector order (what ``obs_layout_hash`` hashes)."""
ENV_VERSION = "smear_v0"
"""The environment's version (PettingZoo's ``_vN``): bumped when the observation layout or the action
layout changes (``smear_env/versioning.py`` pins each version's layout)."""

SLICES: dict[str, slice] = {}
_off = 0
for _t in LAYOUT:
    SLICES[_t.name] = slice(_off, _off + _t.size)
    _off += _t.size
OBS_SIZE = _off
del _off, _t
assert OBS_SIZE == 493, OBS_SIZE
assert SLICES["hand"] == slice(21, 53) and SLICES["hand_sizes"] == slice(489, 493)

# Offsets (start index) of each term, used by the encoders.
PHASE = SLICES["phase"].start
TO_ACT = SLICES["to_act"].start
DEALER = SLICES["dealer"].start
SCORES = SLICES["scores"].start
TARGET = SLICES["target_score"].start
KITTY_SIZE = SLICES["kitty_size"].start
HAND = SLICES["hand"].start
BIDS = SLICES["bids"].start
BIDDER = SLICES["bidder"].start
CONTRACT = SLICES["contract"].start
TRUMP_ = SLICES["trump"].start
KITTY = SLICES["kitty"].start
DISCARDS = SLICES["discards"].start
PLAYED_BY = SLICES["played_by"].start
WON = SLICES["won_by_team"].start
TRICK_LEADER = SLICES["trick_leader"].start
TRICK = SLICES["trick"].start
VOIDS = SLICES["voids"].start
STUCK = SLICES["stuck"].start
HAND_SIZES = SLICES["hand_sizes"].start
_NBYTES = (OBS_SIZE + 7) // 8


def _per_index(attr: str) -> np.ndarray:
    out = np.empty(OBS_SIZE, dtype=np.float32)
    for t in LAYOUT:
        out[SLICES[t.name]] = getattr(t, attr)
    return out


# Bounds of each index (for gymnasium Box spaces): 0/1 features; raw scores and target within +-2**24;
# hand sizes 0..6 + MAX_KITTY.
OBS_LOW = _per_index("low")
OBS_HIGH = _per_index("high")
OBS_SCALE = _per_index("scale")
"""Per-index multiplier of the observation for a network's input (1 for 0/1 features); a copy is
``training.policy.obs_scale()``, which every checkpoint stores as its ``obs_scale``."""


# ------------------------------------------------------------------------------------------ encoding
# The one encoder of every engine: feature_parts gives the 0/1 features as words placed at PART_OFFSETS
# (elementwise on ints or on (N,) arrays), write_raw the raw terms. The single game and a player's view
# gather the words into one Python int (pack_parts, to_vector); the batched engine into 8 int64 words a
# lane (VectorGame.observe).
PART_OFFSETS = (PHASE, HAND, BIDS, BIDDER, KITTY, DISCARDS, PLAYED_BY, PLAYED_BY + 32, PLAYED_BY + 64,
                PLAYED_BY + 96, WON, WON + 32, TRICK_LEADER, TRICK, TRICK + 32, TRICK + 64, TRICK + 96, VOIDS)
"""The vector index of bit 0 of each word of :func:`feature_parts` (a word holds one term or a few
neighbouring ones: phase to kitty_size, bidder to trump, voids and stuck)."""
PART_WIDTHS = (KITTY_SIZE + MAX_KITTY + 1 - PHASE, NUM_CARDS, 4 * NUM_BID_STATES, TRUMP_ + NUM_SUITS - BIDDER,
               NUM_CARDS, NUM_CARDS, *(NUM_CARDS,) * 4, NUM_CARDS, NUM_CARDS, 4, *(NUM_CARDS,) * 4,
               STUCK + 1 - VOIDS)
"""The number of bits of each word of :func:`feature_parts` (at most 32)."""
assert all(SLICES[t.name].start >= PART_OFFSETS[0] for t in LAYOUT) and max(PART_WIDTHS) <= 32
assert sorted(i for o, w in zip(PART_OFFSETS, PART_WIDTHS, strict=True) for i in range(o, o + w)
              if i not in range(SCORES, TARGET + 1)) == sorted(
    i for t in LAYOUT if t.kind == "bits" for i in range(SLICES[t.name].start, SLICES[t.name].stop))
assert NUM_BID_STATES == 5 and bid_state(MIN_BID) == 2 and MAX_KITTY < 4 and TARGET == SCORES + 2
assert CONTRACT == BIDDER + 4 and TRUMP_ == CONTRACT + NUM_CONTRACTS and STUCK == VOIDS + 16


def feature_parts(s: Any, phase: Any, to_act: Any, dealer: Any, kitty_size: Any, hand: Any, bids: Any,
                  bidder: Any, high_bid: Any, trump: Any, card_led: Any, kitty: Any, discards: Any,
                  played_by: Any, won: Any, trick: Any, trick_leader: Any, voids: Any, stuck: Any,
                  rel: Any) -> tuple[Any, ...]:
    """The 0/1 features of seat ``s``'s observation (R22, R23) as the words of :data:`PART_OFFSETS`.

    Seats are absolute, -1 for none: ``bidder`` (the high bidder so far; shown once bidding is over),
    ``trump`` (shown once :func:`~smear_env.core.rules.trump_known`: ``card_led`` any card of the hand was
    led, or the observer is the bidder), ``trick_leader`` (-1 while the trick has no card). ``hand``: the
    observer's cards; ``kitty`` and ``discards`` (card masks) are shown to the bidder only. ``bids``,
    ``played_by``, ``trick`` (the card each seat played to the trick as a card mask, 0 none) and
    ``voids`` are per seat, ``won`` too (the cards won by each seat's team: team 0, 1, 0, 1; an engine's
    ``rel`` may take it per team); ``rel(x)`` gives such a sequence as 4 values from the observer's seat
    on. ``bids`` holds bid states (:func:`smear_env.core.phases.bid_state`); ``stuck`` is
    :func:`smear_env.core.phases.dealer_stuck` of ``s``. Every argument is an int (bool) or an ``(N,)``
    array, elementwise."""
    bidding_over = phase != BIDDING
    has_bidder = bidding_over & (bidder >= 0)  # a thrown-in hand (R8) ends without one
    is_bidder = bidding_over & (bidder == s)
    b0, b1, b2, b3 = rel(bids)
    p0, p1, p2, p3 = rel(played_by)
    t0, t1, t2, t3 = rel(trick)
    v0, v1, v2, v3 = rel(voids)
    w0, w1, _, _ = rel(won)
    # "& 3" keeps a shift defined where the factor after it is 0 (-1: no seat / no trump / no contract);
    # a term's offset is shifted first (_BIT_X << x), one array operation fewer than 1 << (X + x)
    return (
        (1 << phase) | ((_BIT_TO_ACT << ((to_act - s) & 3)) * (phase < HAND_OVER))
        | (_BIT_DEALER << ((dealer - s) & 3)) | (1 << (KITTY_SIZE + kitty_size)),
        hand,
        (1 << b0) | (_BIT_BIDS1 << b1) | (_BIT_BIDS2 << b2) | (_BIT_BIDS3 << b3),
        (((1 << ((bidder - s) & 3)) | (_BIT_CONTRACT << ((high_bid - MIN_BID) & 3))) * has_bidder)
        | ((_BIT_TRUMP << (trump & 3)) * trump_known(trump, is_bidder, card_led)),
        kitty * is_bidder,
        discards * is_bidder,
        p0, p1, p2, p3,
        w0, w1,
        (1 << ((trick_leader - s) & 3)) * (trick_leader >= 0),
        t0, t1, t2, t3,
        v0 | (v1 << 4) | (v2 << 8) | (v3 << 12) | (stuck * _BIT_STUCK),
    )


# bit 0 of a term within its word of feature_parts (word offsets: PHASE, BIDS, BIDDER, VOIDS)
_BIT_TO_ACT, _BIT_DEALER = 1 << (TO_ACT - PHASE), 1 << (DEALER - PHASE)
_BIT_BIDS1, _BIT_BIDS2, _BIT_BIDS3 = (1 << (r * NUM_BID_STATES) for r in (1, 2, 3))
_BIT_CONTRACT, _BIT_TRUMP = 1 << (CONTRACT - BIDDER), 1 << (TRUMP_ - BIDDER)
_BIT_STUCK = 1 << (STUCK - VOIDS)


def write_raw(out: np.ndarray, own: Any, other: Any, target: Any, sizes: Any) -> None:
    """Write the raw terms into an observation (``(OBS_SIZE,)``) or a batch of them (``(N, OBS_SIZE)``):
    the scores of the observer's team and the other team, the target score, the hand sizes of the
    relative seats (4 values, each an int or an ``(N,)`` array)."""
    if out.ndim == 1:
        out[SCORES : TARGET + 1] = (own, other, target)
        out[HAND_SIZES : HAND_SIZES + 4] = sizes
        return
    cols = out.T  # a batch: index by column
    cols[SCORES] = own
    cols[SCORES + 1] = other
    cols[TARGET] = target
    cols[HAND_SIZES : HAND_SIZES + 4] = sizes


def pack_parts(parts: tuple[int, ...]) -> int:
    """The words of :func:`feature_parts` (ints) as one int, bit i = vector index i (the words do not
    overlap, so their sum is their union)."""
    return sum(map(lshift, parts, PART_OFFSETS))


def to_vector(x: int) -> np.ndarray:
    """The float32 observation whose 0/1 features are the bits of ``x`` (raw terms 0)."""
    return np.unpackbits(
        np.frombuffer(x.to_bytes(_NBYTES, "little"), dtype=np.uint8), count=OBS_SIZE, bitorder="little"
    ).astype(np.float32)


def _rotation(s: int) -> Any:
    """``rel`` of :func:`feature_parts` for one observer seat ``s`` (Python sequences)."""
    s1, s2, s3 = (s + 1) & 3, (s + 2) & 3, (s + 3) & 3
    return lambda x: (x[s], x[s1], x[s2], x[s3])


_ROTATIONS = tuple(_rotation(s) for s in range(4))
_NO_TRICK = (0, 0, 0, 0)


def encode(view: PlayerView) -> np.ndarray:
    """The observation vector (float32, ``OBS_SIZE``) of ``view.relative()``."""
    s = view.seat
    t = s & 1
    leader = -1 if view.trick_leader is None else view.trick_leader
    trick = [0, 0, 0, 0]
    for i, c in enumerate(view.trick):
        trick[(leader + i) & 3] = 1 << c
    legal = view.legal_actions
    phase = int(view.phase)
    stuck = view.to_act == s and phase == BIDDING and bool(legal) and PASS_ACTION not in legal
    x = pack_parts(feature_parts(
        s, phase, -1 if view.to_act is None else view.to_act, view.dealer, view.kitty_size, view.hand,
        [bid_state(b) for b in view.bids], -1 if view.bidder is None else view.bidder,
        view.contract or 0, -1 if view.trump is None else view.trump, any(view.played_by), view.kitty,
        view.discards, view.played_by, view.won_by_team * 2, trick, leader if view.trick else -1, view.voids,
        stuck, _ROTATIONS[s],
    ))
    vec = to_vector(x)
    write_raw(vec, view.scores[t], view.scores[1 - t], view.target_score, _ROTATIONS[s](view.hand_sizes))
    return vec


# ------------------------------------------------------------------ suit canonicalisation (networks)
# The four suits play the same role in every rule (R1-R23: no suit ranks above another; trump is chosen), so
# a network may see every observation with its suits renamed into one canonical order and map its action
# logits back. Terms indexed by suit: every 32-card block (card id = 8 * suit + rank) and the 4-suit blocks
# (trump, each seat's voids); actions indexed by suit: trump choices, discards and plays.
SUIT_PERMUTATIONS: tuple[tuple[int, ...], ...] = tuple(
    (a, b, c, d) for a in range(4) for b in range(4) for c in range(4) for d in range(4)
    if len({a, b, c, d}) == 4
)
"""The 24 suit orders; ``order[k]`` is the original suit shown as canonical suit ``k``."""
_CARD_TERMS = tuple(t.name for t in LAYOUT if t.suits == SUIT_CARDS)
_SUIT_TERMS = tuple(t.name for t in LAYOUT if t.suits == SUIT_SUITS)


def _suit_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    obs_src = np.empty((24, OBS_SIZE), dtype=np.int64)
    act_dst = np.empty((24, NUM_ACTIONS), dtype=np.int64)
    code = np.full(256, -1, dtype=np.int64)
    for p, order in enumerate(SUIT_PERMUTATIONS):
        code[order[0] * 64 + order[1] * 16 + order[2] * 4 + order[3]] = p
        src = np.arange(OBS_SIZE)
        for name in _CARD_TERMS:
            sl = SLICES[name]
            for base in range(sl.start, sl.stop, NUM_CARDS):
                for k in range(NUM_SUITS):
                    src[base + 8 * k : base + 8 * k + 8] = np.arange(8) + base + 8 * order[k]
        for name in _SUIT_TERMS:
            sl = SLICES[name]
            for base in range(sl.start, sl.stop, NUM_SUITS):
                src[base : base + NUM_SUITS] = base + np.array(order)
        obs_src[p] = src
        canon = [order.index(s) for s in range(NUM_SUITS)]  # original suit -> canonical suit
        dst = np.arange(NUM_ACTIONS)
        for s in range(NUM_SUITS):
            dst[TRUMP_ACTION_BASE + s] = TRUMP_ACTION_BASE + canon[s]
            for r in range(8):
                dst[DISCARD_ACTION_BASE + 8 * s + r] = DISCARD_ACTION_BASE + 8 * canon[s] + r
                dst[PLAY_ACTION_BASE + 8 * s + r] = PLAY_ACTION_BASE + 8 * canon[s] + r
        act_dst[p] = dst
    return obs_src, act_dst, code


SUIT_OBS_SOURCE, SUIT_ACTION_TARGET, _SUIT_CODE = _suit_tables()
"""Per suit order p: canonical observation column j is original column ``SUIT_OBS_SOURCE[p, j]``; original
action a is canonical action ``SUIT_ACTION_TARGET[p, a]``."""
_RANK_WEIGHTS = (1 << np.arange(8)).astype(np.float64)


def suit_orders(obs: np.ndarray) -> np.ndarray:
    """(B,) index into :data:`SUIT_PERMUTATIONS` of each observation's canonical suit order: trump first
    once the observer knows it, then the suits by the observer's holding in them (more cards first, then
    higher cards), ties in suit order."""
    hand = obs[:, HAND : HAND + NUM_CARDS].reshape(-1, NUM_SUITS, 8) > 0.5
    key = hand.sum(axis=2) * 256.0 + hand @ _RANK_WEIGHTS
    key = np.where(obs[:, TRUMP_ : TRUMP_ + NUM_SUITS] > 0.5, 1e6, key)
    order = np.argsort(-key, axis=1, kind="stable")
    return _SUIT_CODE[order[:, 0] * 64 + order[:, 1] * 16 + order[:, 2] * 4 + order[:, 3]]


# ---------------------------------------------------------------------------- from a game (fast path)
def encode_game(game: Game, seat: int) -> np.ndarray:
    """``encode(view_of(game, seat))`` without building the view (what the environments call)."""
    phase = game.phase
    bids = [NOT_ACTED, NOT_ACTED, NOT_ACTED, NOT_ACTED]
    for b_seat, b in game.bids:
        bids[b_seat] = b or PASSED
    cards = game.trick
    if cards:
        trick = [0, 0, 0, 0]
        for b_seat, c in zip(game.trick_seats, cards):  # noqa: B905 (the same length by construction)
            trick[b_seat] = 1 << c
        leader = game.trick_seats[0]
    else:
        trick, leader = _NO_TRICK, -1
    bidder = game.bidder
    kitty = discards = 0
    if bidder == seat:
        for c in game.kitty:
            kitty |= 1 << c
        for c in game.discards:
            discards |= 1 << c
    rel = _ROTATIONS[seat]
    x = pack_parts(feature_parts(
        seat, phase, game.to_act, game.dealer, game.rules.kitty_size, game.hands[seat], bids,
        -1 if bidder is None else bidder, game.high_bid, game.trump, bool(cards) or bool(game.tricks),
        kitty, discards, game.played_by, game.won * 2, trick, leader, game.voids,
        phase == BIDDING and game.dealer_stuck(seat), rel,
    ))
    vec = to_vector(x)
    t = seat & 1
    scores = game.scores
    write_raw(vec, scores[t], scores[1 - t], game.rules.target_score,
              tuple(map(int.bit_count, rel(game.hands))))
    return vec


def action_mask(game: Game, seat: int) -> np.ndarray:
    """int8 (72,) mask of the legal actions of ``seat``; all zero when ``seat`` is not to act."""
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    if game.phase < HAND_OVER and game.to_act == seat:
        mask.put(game.legal_actions(), 1)
    return mask


def observe(game: Game, seat: int) -> dict[str, Any]:
    """PettingZoo observation dict ``{"observation": float32 (OBS_SIZE,), "action_mask": int8 (72,)}``."""
    return {"observation": encode_game(game, seat), "action_mask": action_mask(game, seat)}


def obs_layout_hash() -> str:
    """Hash of the observation layout; changes whenever a term is added, removed, resized or moved."""
    text = json.dumps([OBS_SIZE, [list(t) for t in TERMS]], separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def describe() -> str:
    """The index-range table of the observation (used in the env docstring and checked by a test)."""
    lines = ["term                 indices      size"]
    for name, size, _kind in TERMS:
        sl = SLICES[name]
        lines.append(f"{name:<20} {sl.start:>3} .. {sl.stop - 1:<5} {size:>4}")
    return "\n".join(lines)


def _hands_bound(max_cycles: int | None) -> int | None:
    """Most hands a game can score within ``max_cycles`` decisions (each scored hand has at least the
    ``4 * HAND_SIZE`` card plays); None without a limit."""
    if max_cycles is None:
        return None
    return int(max_cycles) // (4 * HAND_SIZE) + 1


def observation_bounds(rules: Any = None, max_cycles: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per-index ``(low, high)`` (float32 ``(OBS_SIZE,)``) that hold every observation of a game under
    ``rules`` (a :class:`~smear_env.core.config.SmearRules`; default rules when None) cut off after
    ``max_cycles`` decisions (R21): the ``Box`` of the Gymnasium envs. 0/1 features: ``[0, 1]``;
    ``hand_sizes``: ``[0, HAND_SIZE + MAX_KITTY]``; ``target_score``: ``[0, target_score]``; ``scores``: a
    team moves by at most ``MAX_BID`` points a scored hand either way, so ``[-MAX_BID * H, target_score +
    MAX_BID]`` with ``H`` the most hands ``max_cycles`` allows (``target_score + MAX_BID * H`` above when R19
    ``win_requires_bid`` lets a defending team pass the target uncapped, R20 off), within ``+-2**24``. Every
    bound holds the all-zero vector (the placeholder frameworks fill missing observations with)."""
    from ..core.config import SmearRules

    rules = rules if rules is not None else SmearRules()
    low, high = OBS_LOW.copy(), OBS_HIGH.copy()
    hands = _hands_bound(max_cycles)
    swing = RAW_LIMIT if hands is None else min(float(MAX_BID * hands), RAW_LIMIT)
    target = float(rules.target_score)
    uncapped = rules.win_requires_bid and not rules.cap_defenders
    low[SLICES["scores"]] = -swing
    high[SLICES["scores"]] = min(target + (swing if uncapped else MAX_BID), RAW_LIMIT)
    low[SLICES["target_score"]] = 0.0
    high[SLICES["target_score"]] = target
    return low, high


def normalized_scale(rules: Any = None) -> np.ndarray:
    """Per-index multiplier of the ``normalize=True`` observation (float32 ``(OBS_SIZE,)``): 1 for 0/1
    features, ``1 / target_score`` for ``scores`` and ``target_score`` (1.0 is the target), ``1 / (HAND_SIZE +
    MAX_KITTY)`` for ``hand_sizes``; every feature of a game in progress then lies in about ``[-1, 1.3]``."""
    from ..core.config import SmearRules

    rules = rules if rules is not None else SmearRules()
    scale = np.ones(OBS_SIZE, dtype=np.float32)
    scale[SLICES["scores"]] = 1.0 / rules.target_score
    scale[SLICES["target_score"]] = 1.0 / rules.target_score
    scale[SLICES["hand_sizes"]] = 1.0 / (HAND_SIZE + MAX_KITTY)
    return scale


_DECODER = ("decode", "decode_batch", "legal_actions_of")


def __getattr__(name: str) -> Any:
    """The decoder's functions under this module's name for one more version, with a DeprecationWarning
    naming :mod:`smear_env.engine.decoding`, where they live (it imports this module, so this module
    reaches it only when asked)."""
    if name in _DECODER:
        new = f"{__package__}.decoding"
        warnings.warn(f"{__name__}.{name} moved to {new}.{name}: import it from {new} (the old place goes in "
                      "smear-rl 0.2)", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(new), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
