"""The rules of RULES.md as tables and pure functions on card bitmasks, written once for every engine.

Each function takes plain values -- card ids, suits, 32-bit card masks (bit ``card`` set, card id
``suit * 8 + rank``, :mod:`smear_env.core.cards`), team indices, scores -- and works elementwise on either
Python ``int`` s (the reference engine :mod:`smear_env.engine.game`, the solver, the agents) or numpy integer
arrays of one shape (the batched engine :mod:`smear_env.engine.vector`). The same expression serves both: bit
operations and comparisons, with lookups in tables that exist as a tuple (for ``int`` s) and as a numpy
array (for arrays) built from one definition, and :func:`select` where a choice is needed. Results have the
type of the inputs (``int`` / ``bool`` for scalars; int64 / bool arrays for arrays).

Conventions: a suit is 0..3 (``C D H S``) and ``-1`` means "none" (no trump named yet, no card led);
a team is 0 (seats 0, 2) or 1 (seats 1, 3) and ``-1`` means "nobody" (a point nobody wins). Rule options
come from :class:`~smear_env.core.config.SmearRules`: every function whose result depends on an option takes
the ``rules`` object itself (not one option's value), so an option added later is read here and nowhere
else -- its callers (engines, solver, agents) pass ``rules`` unchanged. Options are compared with the
constants of :mod:`smear_env.core.config`.

What lives here: R5 deals (a shuffled deck from a generator, or from a counter-based hash),
R10/R12 playable cards, R11 the discard pool, R12 trick-winning keys and the trick winner, R13/R14 High
and Low under both ``high_low`` options, R15 Jack, R16 card points and the Game point, R17 the contract,
R18-R20 scores and the winner of a hand, R22/R23 trump visibility. The state machine (whose turn, which
phase) is :mod:`smear_env.core.transitions`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, TypeVar

import numpy as np

from .cards import HAND_SIZE, NUM_CARDS, NUM_RANKS, RANK_7, RANK_ACE, RANK_JACK, SUIT_MASKS
from .config import GAME_POINT_TIE_BIDDER, HIGH_LOW_ACE_SEVEN, SmearRules

IntOrArray = TypeVar("IntOrArray", int, np.ndarray)
NUM_PLAYERS = 4
NOBODY = -1
"""The team of a point nobody wins (R13-R16), and the winner of a hand that ends no game (R18)."""


# ---------------------------------------------------------------------------------------------- tables
# R16: game-point value of each rank (7 8 9 T J Q K A): A 4, K 3, Q 2, J 1, 10 10, others 0.
RANK_GAME_VALUE = (0, 0, 0, 10, 1, 2, 3, 4)
CARD_GAME_POINTS = tuple(RANK_GAME_VALUE[c & 7] for c in range(NUM_CARDS))
"""R16 value of each card id."""
GAME_POINTS_BY_BYTE = tuple(
    sum(RANK_GAME_VALUE[r] for r in range(NUM_RANKS) if b >> r & 1) for b in range(256)
)
"""R16 total of the cards of one suit, indexed by the suit's 8-bit rank mask."""
SUIT_MASK_OR_NONE = (*SUIT_MASKS, 0)
"""Card mask of each suit; index -1 (no suit) gives 0."""
HIGH_BIT_BY_BYTE = tuple(1 << (b.bit_length() - 1) if b else 0 for b in range(256))
"""The highest set bit of a byte (0 for 0): the highest rank of a suit's rank mask."""
ABOVE_IN_SUIT = tuple(SUIT_MASKS[c >> 3] & ~((2 << c) - 1) for c in range(NUM_CARDS))
"""R12 order within a suit: the mask of the cards of each card's suit ranking above it."""


class _Tables(NamedTuple):
    suit_mask: Any
    game_points_by_byte: Any
    high_bit_by_byte: Any
    above_in_suit: Any


_PY = _Tables(SUIT_MASK_OR_NONE, GAME_POINTS_BY_BYTE, HIGH_BIT_BY_BYTE, ABOVE_IN_SUIT)
_NP = _Tables(*(np.array(t, dtype=np.int64) for t in _PY))


def _tables(x: Any) -> _Tables:
    """The tuple tables for a Python int, the numpy ones for anything else (arrays, numpy scalars)."""
    return _PY if type(x) is int else _NP


def select(cond: Any, a: Any, b: Any) -> Any:
    """``a`` where ``cond`` holds, else ``b``: a conditional on scalars, :func:`numpy.where` on arrays."""
    if type(a) is int and type(b) is int and (type(cond) is bool or type(cond) is int):  # the engine's case
        return a if cond else b
    if isinstance(cond, np.ndarray) or isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.where(cond, a, b)
    return a if cond else b


def suit_mask(suit: IntOrArray) -> IntOrArray:
    """Card mask of ``suit`` (0..3); 0 for -1 (no suit)."""
    return _tables(suit).suit_mask[suit]


def popcount(mask: IntOrArray) -> IntOrArray:
    """Number of cards in ``mask``."""
    return mask.bit_count() if type(mask) is int else np.bitwise_count(mask).astype(np.int64)


# ----------------------------------------------------------------------------------------- R16 points
def game_points(mask: IntOrArray) -> IntOrArray:
    """R16: card-point total of the cards in ``mask`` (ace 4, king 3, queen 2, jack 1, ten 10)."""
    t = GAME_POINTS_BY_BYTE if type(mask) is int else _NP.game_points_by_byte
    return t[mask & 0xFF] + t[mask >> 8 & 0xFF] + t[mask >> 16 & 0xFF] + t[mask >> 24 & 0xFF]


def game_point_team(points0: IntOrArray, points1: IntOrArray, bidder_team: IntOrArray,
                    rules: SmearRules) -> IntOrArray:
    """R16: the team winning the Game point from the two teams' card points (the bidder's team counting
    its discards); on a tie the bidder's team with ``game_point_tie="bidder"``, else nobody (-1)."""
    tie = bidder_team if rules.game_point_tie == GAME_POINT_TIE_BIDDER else NOBODY
    # (team 1 has more) + (a tie) * tie-winner: 0, 1 or the tie's team, as int or int64 array
    return (points1 > points0) + (points0 == points1) * tie


# -------------------------------------------------------------------------------------- R12 tricks
def trick_key(card: IntOrArray, led: IntOrArray, trump: IntOrArray) -> IntOrArray:
    """R12: the strength of ``card`` in a trick whose led suit is ``led``, with trump suit ``trump``
    (-1: none): its rank (0..7), plus 64 for a trump, or 32 for a card of the suit led. The highest key in
    a trick wins it; keys are 0..71."""
    s = card >> 3
    is_trump = s == trump
    return (card & 7) + 32 * ((s == led) | is_trump) + 32 * is_trump


TRICK_KEYS = tuple(
    tuple(tuple(trick_key(c, led, trump) for c in range(NUM_CARDS)) for led in (0, 1, 2, 3, -1))
    for trump in (0, 1, 2, 3, -1)
)
"""``TRICK_KEYS[trump][led][card]`` = :func:`trick_key` (index -1 = no suit), for table lookups."""


def trick_winner(cards: Any, trump: Any, led: Any = None) -> Any:
    """R12: the index of the card winning a trick -- the highest trump, else the highest card of the suit
    led (default: the suit of ``cards[0]``, the first card played). ``cards``: a sequence of card ids (a
    partial trick gives the card winning so far) with int ``trump`` and ``led``; or an ``(N, k)`` int array
    with ``(N,)`` arrays ``trump`` and ``led`` (e.g. a trick stored by seat, ``led`` given), giving an
    ``(N,)`` array of indices."""
    if type(cards) is not list and isinstance(cards, np.ndarray):
        led = cards[:, :1] >> 3 if led is None else np.asarray(led)[:, None]
        return np.argmax(trick_key(cards, led, np.asarray(trump)[:, None]), axis=1)
    keys = TRICK_KEYS[trump][cards[0] >> 3 if led is None else led]
    best = 0
    best_key = keys[cards[0]]
    for i in range(1, len(cards)):
        k = keys[cards[i]]
        if k > best_key:
            best, best_key = i, k
    return best


def cards_beating(best: IntOrArray, trump: IntOrArray) -> IntOrArray:
    """R12: the mask of the cards that would take a trick from ``best``, the card winning it so far (a card
    of the suit led, or a trump): the higher cards of its suit, and every trump when it is not one -- the
    cards whose :func:`trick_key` is greater than ``best`` 's."""
    t = _tables(best)
    return t.above_in_suit[best] | (t.suit_mask[trump] & (((best >> 3) != trump) * -1))


def playable(hand: IntOrArray, led: IntOrArray, trump: IntOrArray, first_lead: Any) -> IntOrArray:
    """R12 (and R10): the mask of the cards of ``hand`` that may be played. ``led``: the suit led in this
    trick, -1 when leading; ``trump``: -1 while not yet named; ``first_lead``: no trick of the hand is
    finished yet. A leader plays any card, except that the first lead of a hand with a named trump
    (kitty_size > 0) must be a trump (R10); a follower holding the suit led plays that suit or a trump,
    otherwise any card. The result is 0 only for an empty hand or a first lead without a trump in hand
    (which a real deal never gives)."""
    if type(hand) is int and type(led) is int:  # the same rule on ints, branch by branch (engine, solver)
        if led >= 0:
            lmask = SUIT_MASK_OR_NONE[led]
            return hand & (lmask | SUIT_MASK_OR_NONE[trump]) if hand & lmask else hand
        return hand & SUIT_MASK_OR_NONE[trump] if first_lead and trump >= 0 else hand
    sm = _NP.suit_mask
    tmask = sm[trump]
    lmask = sm[led]
    restrict = ((hand & lmask) != 0) | ((led < 0) & first_lead & (trump >= 0))
    return hand & ~(~(tmask | lmask) & (restrict * -1))


def suits_held(hand: IntOrArray) -> IntOrArray:
    """R10: the 4-bit mask of the suits with a card in ``hand`` (the bidder's trump choices)."""
    return (((hand & 0xFF) != 0) | ((hand & 0xFF00) != 0) << 1
            | ((hand & 0xFF0000) != 0) << 2 | ((hand & 0xFF000000) != 0) << 3) * 1


def discard_pool(hand: IntOrArray, trump: IntOrArray) -> IntOrArray:
    """R11: the cards of ``hand`` the bidder may discard -- the non-trumps, or every card when all of them
    are trumps."""
    tmask = _tables(hand).suit_mask[trump]
    return hand & ~(tmask & (((hand & ~tmask) != 0) * -1))


# ------------------------------------------------------------------------------ R13-R15 point cards
def point_team(card_bit: IntOrArray, team0: IntOrArray, team1: IntOrArray) -> IntOrArray:
    """The team (0/1) whose card mask holds ``card_bit``, -1 when neither does (or ``card_bit`` is 0)."""
    return 2 * ((team1 & card_bit) != 0) + ((team0 & card_bit) != 0) - 1


def high_low_bits(trump: IntOrArray, in_play: IntOrArray, rules: SmearRules) -> tuple[Any, Any]:
    """R13/R14: the bits of the High and the Low card of a hand with trump suit ``trump`` (0..3), whose
    cards played (or still to be played) are ``in_play``. ``high_low="ace_seven"``: the ace and the 7 of
    trump; ``"in_play"``: the highest and the lowest trump in ``in_play`` (the same card when only one
    is; 0 for both when none is)."""
    shift = trump << 3
    if rules.high_low == HIGH_LOW_ACE_SEVEN:
        return (1 << RANK_ACE) << shift, (1 << RANK_7) << shift
    tp = (in_play >> shift) & 0xFF
    return _tables(tp).high_bit_by_byte[tp] << shift, (tp & -tp) << shift


def high_low_teams(trump: IntOrArray, team0: IntOrArray, team1: IntOrArray, rules: SmearRules
                   ) -> tuple[Any, Any]:
    """R13/R14: the teams (-1: nobody) winning High and Low, from the cards each team played (or holds
    and will play: the solver's view of a whole hand)."""
    high, low = high_low_bits(trump, team0 | team1, rules)
    return point_team(high, team0, team1), point_team(low, team0, team1)


def jack_bit(trump: IntOrArray) -> IntOrArray:
    """R15: the bit of the jack of trump."""
    return (1 << RANK_JACK) << (trump << 3)


def points_out_of_play(cards: IntOrArray, trump: IntOrArray, rules: SmearRules) -> IntOrArray:
    """R13-R15: how many of the High, Low and Jack points nobody can win when only ``cards`` are (or will
    be) played: with ``"ace_seven"`` each of the ace, 7 and jack of trump missing from ``cards``; with
    ``"in_play"`` High and Low when no trump is in ``cards``, and the Jack when the jack of trump is not.
    0 while trump is unknown (-1)."""
    known = trump >= 0
    t = trump & 3
    jack = 1 * ((cards & jack_bit(t)) == 0)
    if rules.high_low == HIGH_LOW_ACE_SEVEN:
        high, low = high_low_bits(t, 0, rules)
        missing = 1 * ((cards & high) == 0) + ((cards & low) == 0) + jack  # 1 *: ints, not numpy bools
    else:
        missing = 2 * ((cards & _tables(t).suit_mask[t]) == 0) + jack
    return known * missing


# ------------------------------------------------------------------------------------ R17-R20 scores
def contract_made(points: IntOrArray, contract: IntOrArray, rules: SmearRules) -> IntOrArray:
    """R17: the bidder's team made its contract with ``points`` points won."""
    return points >= contract


def contract_change(points: IntOrArray, contract: IntOrArray, rules: SmearRules, made: Any = None
                    ) -> IntOrArray:
    """R17: the bidder team's score change: all its ``points`` when it made the contract, else minus the
    contract. ``made`` overrides the test ``points >= contract`` (e.g. an estimate with a safety margin)."""
    if made is None:
        made = contract_made(points, contract, rules)
    return made * (points + contract) - contract


def capped_defender_score(old: IntOrArray, change: IntOrArray, rules: SmearRules) -> IntOrArray:
    """R20 ``cap_defenders``: a defending team's new score -- ``old + change``, but never above
    ``target_score`` as a result of the hand (a score already above it stays)."""
    target_score = rules.target_score
    new = old + change
    return select(new > target_score, select(old > target_score, old, target_score), new)


class HandScore(NamedTuple):
    """The scoring of one hand (R13-R20); each field an int (or bool) or an array of them, teams 0/1."""

    high: Any
    """R13: team winning High, -1 nobody."""
    low: Any
    """R14: team winning Low, -1 nobody."""
    jack: Any
    """R15: team winning Jack, -1 nobody."""
    game: Any
    """R16: team winning Game, -1 nobody."""
    card_points: tuple[Any, Any]
    """R16: card points of team 0 and team 1 (the bidder's team with its discards)."""
    made: Any
    """R17: the bidder's team made its contract."""
    change: tuple[Any, Any]
    """R17, R20: score change of team 0 and team 1."""
    scores: tuple[Any, Any]
    """Scores of team 0 and team 1 after the hand."""
    winner: Any
    """R18, R19: the team that won the game with this hand, -1 nobody."""


def score_hand(rules: SmearRules, trump: Any, played0: Any, played1: Any, won0: Any, won1: Any,
               discards: Any, bidder_team: Any, contract: Any, score0: Any, score1: Any) -> HandScore:
    """R13-R20: the scoring of a finished hand. ``played0`` / ``played1``: the cards each team played;
    ``won0`` / ``won1``: the cards in the tricks each team won; ``discards``: the bidder's discards (they
    count for its team's card points, R16); ``score0`` / ``score1``: the scores before the hand."""
    # Each choice is one select (a conditional on ints, one numpy.where on arrays).
    high_bit, low_bit = high_low_bits(trump, played0 | played1, rules)
    jack_card = jack_bit(trump)
    high = select(played0 & high_bit, 0, select(played1 & high_bit, 1, NOBODY))  # R13
    low = select(played0 & low_bit, 0, select(played1 & low_bit, 1, NOBODY))  # R14
    jack = select(won0 & jack_card, 0, select(won1 & jack_card, 1, NOBODY))  # R15
    b0 = bidder_team == 0
    disc = game_points(discards)
    cp0 = game_points(won0) + select(b0, disc, 0)  # R16: the discards count for the bidder's team
    cp1 = game_points(won1) + select(b0, 0, disc)
    game = game_point_team(cp0, cp1, bidder_team, rules)
    # points won; 1 * makes ints of numpy bools (whose + is a logical or)
    wp0 = 1 * (high == 0) + (low == 0) + (jack == 0) + (game == 0)
    wp1 = 1 * (high == 1) + (low == 1) + (jack == 1) + (game == 1)
    points_b = select(b0, wp0, wp1)
    made = contract_made(points_b, contract, rules)  # R17
    change_b = contract_change(points_b, contract, rules, made)
    change_d = select(b0, wp1, wp0)
    old_b = select(b0, score0, score1)
    old_d = select(b0, score1, score0)
    target = rules.target_score
    if rules.cap_defenders:  # R20
        change_d = capped_defender_score(old_d, change_d, rules) - old_d
    new_b = old_b + change_b
    new_d = old_d + change_d
    if rules.win_requires_bid:  # R19: only the bidder's team, having made its contract
        winner = select(made & (new_b >= target), bidder_team, NOBODY)
    else:  # R18: the bidder's team first when both reach the target
        winner = select(new_b >= target, bidder_team, select(new_d >= target, 1 - bidder_team, NOBODY))
    change0 = select(b0, change_b, change_d)
    change1 = select(b0, change_d, change_b)
    return HandScore(high, low, jack, game, (cp0, cp1), made, (change0, change1),
                     (score0 + change0, score1 + change1), winner)


# ------------------------------------------------------------------------------ R22/R23 information
def trump_known(trump: Any, is_bidder: Any, card_led: Any) -> Any:
    """R22/R23: whether an observer knows the trump suit: once it is named (``trump`` >= 0) the bidder
    knows it (``is_bidder``: the observer is the bidder, bidding over), everyone once the first card of
    the hand is led (``card_led``)."""
    return (trump >= 0) & (is_bidder | card_led)


# --------------------------------------------------------------------------------------------- R5 deals
def deal_from(perm: Sequence[int]) -> tuple[list[list[int]], list[int]]:
    """R5: a shuffled deck (a permutation of the 32 card ids) as ``(hands, stock)``: 6 cards to each seat in
    turn (each hand sorted), the last 8 to the stock in order (the kitty is its first cards, R9)."""
    hands = [sorted(perm[i * HAND_SIZE:(i + 1) * HAND_SIZE]) for i in range(NUM_PLAYERS)]
    return hands, list(perm[NUM_PLAYERS * HAND_SIZE:])


def deal_masks(perm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """R5 on an ``(N, 32)`` array of permutations: ``(hands, stock)`` -- the ``(N, 4)`` hand masks (cards
    0-5 of a row to seat 0, ..., 18-23 to seat 3) and the ``(N, 8)`` stock cards in order."""
    perm = np.asarray(perm, dtype=np.int64)
    hands = np.bitwise_or.reduce(np.left_shift(1, perm[:, :24]).reshape(-1, NUM_PLAYERS, HAND_SIZE), axis=2)
    return hands, perm[:, 24:]


def shuffled_deal(rng: np.random.Generator) -> tuple[list[list[int]], list[int]]:
    """A uniformly random deal (R5) from ``rng``: :func:`deal_from` of ``rng.permutation(32)``."""
    return deal_from(rng.permutation(NUM_CARDS).tolist())


# Counter-based deals (splitmix64): a deal that depends only on (seed, lane, game, hand), for engines
# that deal many games at once in any order.
_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_CARD_STEPS = (np.arange(1, NUM_CARDS + 1, dtype=np.uint64) * _GAMMA)[None, :]


def mix64(z: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser on a uint64 array (wrapping arithmetic)."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def lane_keys(seed: int, lanes: np.ndarray) -> np.ndarray:
    """One uint64 key per lane (an int array) of an engine seeded ``seed``."""
    base = mix64(np.full(lanes.shape, np.uint64(seed & 0xFFFFFFFFFFFFFFFF)) + _GAMMA)
    return mix64(base + (lanes.astype(np.uint64) + np.uint64(1)) * _GAMMA)


def hashed_deals(keys: np.ndarray, games: np.ndarray, hands: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """R4/R5: ``(permutations (k, 32) of the deck, first dealers (k,))`` of hand ``hands`` of game ``games``
    in the lanes of ``keys`` (:func:`lane_keys`); :func:`deal_masks` / :func:`deal_from` deal a permutation.
    Each hand is keyed by splitmix64 of its lane key and (game, hand), and its 32 cards are ordered by the
    next 32 outputs of a splitmix64 stream from that key; the first dealer of a game comes from the same
    key."""
    counter = (games.astype(np.uint64) << np.uint64(24)) + hands.astype(np.uint64) + np.uint64(1)
    key = mix64(keys + counter * _GAMMA)
    perm = np.argsort(mix64(key[:, None] + _CARD_STEPS), axis=1, kind="stable")
    dealer = (mix64(key ^ _M1) >> np.uint64(62)).astype(np.int64)
    return perm.astype(np.int64), dealer


def lane_deal(seed: int, lane: int, game: int, hand: int) -> tuple[int, list[list[int]], list[int]]:
    """``(first_dealer, hands, stock)`` of :func:`hashed_deals` for one (seed, lane, game, hand): ``hands``
    are 4 sorted lists of 6 card ids, ``stock`` 8 card ids in order (the kitty first, R9);
    ``first_dealer`` is the game's first dealer (R4), meaningful for hand 0."""
    one = np.array([0], dtype=np.int64)
    perm, dealer = hashed_deals(lane_keys(seed, one + lane), one + game, one + hand)
    hands_, stock = deal_from(perm[0].tolist())
    return int(dealer[0]), hands_, stock
