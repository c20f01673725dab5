"""The heuristic on numpy arrays of many rows: :class:`BatchedHeuristicAgent` (what the batched table, the
vector env and the batched evaluation use) runs the rules of :mod:`smear_env.agents.heuristic_rules` (whose
docstring describes the design) with the array steps of this module on the :data:`FIELDS` of each row,
read from the rows' observations packed as bits. The same rules on the Python ints of one row are
:mod:`smear_env.agents.heuristic_row` (:func:`choose`, :func:`observation_fields`, :func:`view_fields`,
importable from here too)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.actions import DISCARD_ACTION_BASE, NUM_ACTIONS, PLAY_ACTION_BASE, TRUMP_ACTION_BASE
from ..core.cards import RANK_10, RANK_ACE
from ..core.config import SmearRules
from ..core.rules import trick_key
from ..engine.observation import NUM_BID_STATES
from .heuristic_row import choose, observation_fields, view_fields
from .heuristic_rules import (
    ALL_CARDS,
    CARD_POINTS,
    FIELDS,
    HIGH_RANK,
    LOW4,
    SUIT_MASK,
    SUITS_CARDS,
    bid_rule,
    discard_rule,
    play_rule,
    trump_rule,
)
from .heuristic_values import (
    BID_MARGIN,
    FEED_KEYS,
    FEED_POSITIVE,
    HIGHER_BYTE,
    JACK_WEIGHT,
    KEEP_KEYS,
    MIN_ESTIMATE,
    THROW_KEYS,
    estimate_table,
    rules_code,
)
from .slots import SlotTable, check_batch, check_start, mask_words, no_legal_error

__all__ = ["BatchedHeuristicAgent", "FIELDS", "choose", "observation_fields", "view_fields"]

_I = np.int64
_S = np.arange(4)
_S8 = 8 * _S
_FW = np.array([o // 64 for o, _ in FIELDS])
_FW1 = np.minimum(_FW + 1, 7)  # the next word (a field crossing a word boundary takes its low bits)
_FSH = np.array([o % 64 for o, _ in FIELDS], dtype=np.uint64)
_FSH1 = np.uint64(64) - _FSH  # a shift by 64 gives 0 (numpy's shifts saturate)
_FMASK = np.array([(1 << n) - 1 for _, n in FIELDS], dtype=np.uint64)


# ----------------------------------------------------------------------------------------------- arrays
def _low(x: Any) -> Any:
    """Index of the lowest set bit of each (non-zero, < 2**62) mask."""
    return np.bitwise_count((x & -x) - 1).astype(_I)


def _high(x: Any) -> Any:
    """Index of the highest set bit of each (non-zero, < 2**32) mask."""
    for k in (1, 2, 4, 8, 16):
        x = x | (x >> k)
    return np.bitwise_count(x).astype(_I) - 1


def _bytes(cards: np.ndarray) -> np.ndarray:
    """(n, 4): the rank holding (byte) of each suit of the masks ``cards``."""
    return (cards[:, None] >> _S8) & 255


class _Arrays:
    """The rules' steps on numpy arrays of rows (masks int64, flags bool)."""

    where = staticmethod(np.where)
    low = staticmethod(_low)
    high = staticmethod(_high)
    SUITS_CARDS, LOW4, FEED_POS, SUIT_MASK = SUITS_CARDS, LOW4, FEED_POSITIVE, SUIT_MASK

    @staticmethod
    def popcount(x: np.ndarray) -> np.ndarray:
        return np.bitwise_count(x)

    @staticmethod
    def floor_to_4(x: np.ndarray) -> np.ndarray:
        """min(4, floor(x)) as int64."""
        return np.minimum(4, np.floor(x)).astype(_I)

    @staticmethod
    def any(x: np.ndarray) -> bool:
        return bool(x.any())

    @staticmethod
    def higher(out: np.ndarray) -> np.ndarray:
        """The cards with an outstanding card of their suit above them."""
        return (HIGHER_BYTE[_bytes(out)] << _S8).sum(axis=1)

    @staticmethod
    def bases(trump: np.ndarray, out: Any) -> np.ndarray:
        """(n, 4): per suit the index base of the throw / feed tables (trump or not, outstanding)."""
        return ((trump[:, None] == _S) * 256 + _bytes(out + 0 * trump)) << 8

    @staticmethod
    def min_throw(bases: np.ndarray, cards: np.ndarray) -> np.ndarray:
        """The card of ``cards`` with the least ``throw_cost`` (lowest id among equals; none: garbage)."""
        return (THROW_KEYS[bases + _bytes(cards)] + _S8).min(axis=1) & 31

    @staticmethod
    def card_or_throw(named: np.ndarray, card: Any, bases: np.ndarray, cards: np.ndarray) -> np.ndarray:
        """``card`` where ``named``, else ``min_throw(bases, cards)``."""
        return np.where(named, card, _Arrays.min_throw(bases, cards))

    @staticmethod
    def max_feed(bases: np.ndarray, cards: np.ndarray) -> np.ndarray:
        """The card of ``cards`` with the greatest ``feed_value`` (the lowest id among equals)."""
        k = FEED_KEYS[bases + _bytes(cards)]
        return 31 - (((k + (24 - _S8)) | (k >> 63)).max(axis=1) & 31)  # k = -1 (no card) stays negative

    @staticmethod
    def min_keep(hand: np.ndarray, cards: np.ndarray) -> np.ndarray:
        """The card of ``cards`` with the least ``keep_value`` in ``hand``."""
        return (KEEP_KEYS[(_bytes(hand) << 8) + _bytes(cards)] + _S8).min(axis=1) & 31

    @staticmethod
    def side_key(side: np.ndarray) -> np.ndarray:
        """max over the suits with a card in ``side`` of (top rank * 4 + 3 - suit); negative for none."""
        return (HIGH_RANK[_bytes(side)] * 4 + (3 - _S)).max(axis=1)

    @staticmethod
    def suit_set(cards: np.ndarray) -> np.ndarray:
        return ((_bytes(cards) != 0) << _S).sum(axis=1)

    @staticmethod
    def best_suit(hand: np.ndarray, code: np.ndarray, kitty: int, suits: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
        """(estimate, suit) of the best suit of the 4-bit sets ``suits`` for ``hand`` (``kitty`` 0: no
        kitty cards, 1: ``kitty_size``); ties to the higher suit."""
        byte = _bytes(hand)
        aces = byte >> RANK_ACE & 1
        tens = byte >> RANK_10 & 1
        side_aces = aces.sum(axis=1, keepdims=True) - aces
        side_tens = tens.sum(axis=1, keepdims=True) - tens
        c0 = int(code[0])
        if (code == c0).all():
            est = estimate_table(c0)[kitty][byte, side_aces, side_tens]
        else:
            est = np.empty(byte.shape)
            for c in np.unique(code).tolist():
                sel = code == c
                est[sel] = estimate_table(c)[kitty][byte[sel], side_aces[sel], side_tens[sel]]
        masked = np.where((suits[:, None] >> _S) & 1 == 1, est, -np.inf)
        suit = 3 - np.argmax(masked[:, ::-1], axis=1)
        return masked[np.arange(est.shape[0]), suit], suit

    @staticmethod
    def bids(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(highest bid, partner's bid) from the bids field (0: none)."""
        b = _low(((states[:, None] >> (NUM_BID_STATES * _S)) & 31) | 1 << 8)
        b = np.where((b >= 2) & (b < 8), b, 0)
        return b.max(axis=1), b[:, 2]

    @staticmethod
    def trick(seats: np.ndarray, leader: np.ndarray, trump: np.ndarray, jack_card: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rel seat - 1 of the card winning the trick so far, that card, the trick's value) from the trick
        fields of rel seats 1..3 ((3, n)); a lead row's answers are garbage (a card id all the same)."""
        cards = _low(seats | 1 << 40)  # 40: no card (its trick key is 0, below the card led)
        ar = np.arange(cards.shape[1])
        led = cards[(leader - 1) % 3, ar] >> 3
        wi = np.argmax(trick_key(cards, led, trump), axis=0)
        value = CARD_POINTS[cards].sum(axis=0) + JACK_WEIGHT * (cards == jack_card).any(axis=0)
        return wi, cards[wi, ar] & 31, value


# the kind of decision of a row (by its first legal action and its number of legal actions)
_ONE, _BID, _TRUMP, _DISCARD, _PLAY = range(5)
_KIND_OF_FIRST = np.array([_BID] * TRUMP_ACTION_BASE + [_TRUMP] * (DISCARD_ACTION_BASE - TRUMP_ACTION_BASE)
                          + [_DISCARD] * (PLAY_ACTION_BASE - DISCARD_ACTION_BASE)
                          + [_PLAY] * (NUM_ACTIONS - PLAY_ACTION_BASE), dtype=_I)



# ----------------------------------------------------------------------------------------------- batches
def _fields(words: np.ndarray) -> np.ndarray:
    """(B, len(FIELDS)) int64: the fields of each row of ``words`` ((B, 8) uint64, the rows' 512 bits)."""
    x = (words[:, _FW] >> _FSH) | (words[:, _FW1] << _FSH1)
    return (x & _FMASK).astype(_I)


def _obs_words(obs: np.ndarray) -> np.ndarray:
    """(B, 8) uint64: the 0/1 features of each row as 512 bits (bit i = column i > 0.5)."""
    packed = np.zeros((obs.shape[0], 64), dtype=np.uint8)
    packed[:, : (obs.shape[1] + 7) // 8] = np.packbits(obs > 0.5, axis=1, bitorder="little")
    return packed.view("<u8")


class BatchedHeuristicAgent:
    """:class:`~smear_env.agents.heuristic.HeuristicAgent` for many rows at once (numpy array rules; see the
    module docstring). Each slot plays under the rules of its ``start_game``, as the per-seat agent does;
    ``bid_margin`` / ``min_estimate`` are the per-seat agent's parameters."""

    vectorised = True
    draws = False
    """It never draws from the generators its slots get in ``start_game``."""

    def __init__(self, rules: SmearRules | None = None, name: str = "heuristic",
                 bid_margin: float = BID_MARGIN, min_estimate: float = MIN_ESTIMATE) -> None:
        self.name = name
        self.rules = rules if rules is not None else SmearRules()
        self.bid_margin = float(bid_margin)
        self.min_estimate = float(min_estimate)
        self._slots = SlotTable(name)

    def start_game(self, slot: int, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        check_start(self.name, seat, rules, rng)
        code = rules_code(rules)
        estimate_table(code)  # build the tables now, not in the middle of a batch
        self._slots.set(slot, code, code)

    def close(self) -> None:
        pass

    # ------------------------------------------------------------------ entry points
    def act_batch(self, obs: np.ndarray, mask: np.ndarray, slots: np.ndarray) -> np.ndarray:
        obs, mask, slots = check_batch(self.name, obs, mask, slots, check_empty=False)
        n = slots.size
        if n == 0:
            return np.zeros(0, dtype=_I)
        lo, hi = mask_words(mask)
        count = np.bitwise_count(lo).astype(_I) + np.bitwise_count(hi)
        if (count == 0).any():
            raise no_legal_error(self.name, np.flatnonzero(count == 0), slots)
        lo_i = lo.astype(_I)  # actions 0..63 (bit 63 is action 63, a play: the sign bit)
        first = np.where(lo != 0, _low(lo_i), 64 + _low(hi.astype(_I)))
        # the kind of decision is that of the first legal action; its legal set, by action - base
        base = np.where(first < DISCARD_ACTION_BASE, 0,
                        np.where(first < PLAY_ACTION_BASE, DISCARD_ACTION_BASE, PLAY_ACTION_BASE))
        play_legal = ((lo >> np.uint64(PLAY_ACTION_BASE)) | (hi << np.uint64(64 - PLAY_ACTION_BASE)))
        legal = np.where(base == 0, lo_i & 0xFF, np.where(base == DISCARD_ACTION_BASE,
                                                          (lo_i >> DISCARD_ACTION_BASE) & ALL_CARDS,
                                                          play_legal.astype(_I) & ALL_CARDS))
        return self._act(_obs_words(obs), legal, first, count, slots)

    def act_packed(self, words: np.ndarray, legal: np.ndarray, base: np.ndarray, slots: np.ndarray
                   ) -> np.ndarray:
        """:meth:`act_batch` on the packed form of its arguments (what the batched table gives an agent
        that has this method): ``words`` (B, 8) the observations' 0/1 features as bits
        (:meth:`~smear_env.engine.vector.VectorGame.observe_words`), ``legal`` / ``base`` (B,) int64 the legal
        actions ``base + i`` for the set bits ``i`` of ``legal`` (``base``: 0 bids and trump, 8 discards,
        40 plays). The same actions as ``act_batch`` on the rows they encode."""
        slots = np.asarray(slots, dtype=_I)
        if slots.size == 0:
            return np.zeros(0, dtype=_I)
        legal = np.asarray(legal, dtype=_I)
        count = np.bitwise_count(legal).astype(_I)
        if not count.all():
            raise no_legal_error(self.name, np.flatnonzero(count == 0), slots)
        first = np.asarray(base, dtype=_I) + _low(legal)
        return self._act(np.asarray(words).view(np.uint64), legal, first, count, slots)

    def _act(self, words: np.ndarray, legal: np.ndarray, first: np.ndarray, count: np.ndarray,
             slots: np.ndarray) -> np.ndarray:
        code = self._slots.codes(slots, code_of=int)
        fields = _fields(words)
        out = first.copy()  # a row with one legal action plays it
        kind = _KIND_OF_FIRST[first] * (count > 1)
        present = np.bincount(kind, minlength=5).tolist()
        for k in (_PLAY, _BID, _TRUMP, _DISCARD):
            if not present[k]:
                continue
            rows = None if present[k] == kind.size else (kind == k).nonzero()[0]
            f = fields.T if rows is None else fields[rows].T
            lg = legal if rows is None else legal[rows]
            c = code if rows is None else code[rows]
            if k == _PLAY:
                act = play_rule(_Arrays, f, lg, c)
            elif k == _BID:
                act = bid_rule(_Arrays, f, lg, c, self.bid_margin, self.min_estimate)
            elif k == _TRUMP:
                act = trump_rule(_Arrays, f, lg >> TRUMP_ACTION_BASE, c)
            else:
                act = discard_rule(_Arrays, f, lg)
            if rows is None:
                return act
            out[rows] = act
        return out
