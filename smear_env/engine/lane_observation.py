"""Observations of the batched engine's lanes: the one encoder of :mod:`smear_env.engine.observation` on
arrays.

:func:`observe_lanes` hands a :class:`~smear_env.engine.vector.VectorGame`'s state (its public per-lane
arrays) to :func:`~smear_env.engine.observation.feature_parts`, the encoder the single game and a player's
view use too, gathers the words into 8 int64 words a lane (512 bits; bit ``i`` = vector index ``i``), unpacks
them with one ``numpy.unpackbits`` and writes the raw terms with
:func:`~smear_env.engine.observation.write_raw`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.phases import NUM_PLAYERS, dealer_stuck
from .observation import OBS_SIZE, PART_OFFSETS, PART_WIDTHS, feature_parts, write_raw

_I = np.int64
_SEATS = np.arange(NUM_PLAYERS, dtype=_I)
WORD_PLACES = tuple((off // 64, off % 64, off % 64 + width > 64)
                    for off, width in zip(PART_OFFSETS, PART_WIDTHS, strict=True))
"""(int64 word, shift, whether it runs into the next word) of each word of ``feature_parts``."""
# pack_words with few lanes: row j of word w is (part << left) >> right -- a part placed in w, the bits
# of a part in w - 1 that run past bit 63 (>> 64 - shift), or padding (>> 63: 0, the parts are below 2**32)
_WORD_ROWS = [[(i, sh, 0) for i, (w_, sh, _) in enumerate(WORD_PLACES) if w_ == w]
              + [(i, 0, 64 - sh) for i, (w_, sh, carry) in enumerate(WORD_PLACES) if carry and w_ + 1 == w]
              for w in range(8)]
_ROWS_PER_WORD = max(map(len, _WORD_ROWS))
_ROW_PART, _ROW_LEFT, _ROW_RIGHT = np.array(
    [row[j] if j < len(row) else (0, 0, 63) for row in _WORD_ROWS for j in range(_ROWS_PER_WORD)], dtype=_I
).T[:, :, None]
_ROW_PART = _ROW_PART[:, 0]
_GATHER_LANES = 256  # above it the word-by-word loop is faster (its arrays stay small)
_CARD_BIT = np.array([1 << c for c in range(32)] + [0], dtype=_I)  # card id -> its bit; -1 (none) -> 0


def pack_words(parts: tuple[Any, ...], n: int) -> np.ndarray:
    """The words of :func:`~smear_env.engine.observation.feature_parts` on ``(N,)`` arrays as ``(N, 8)`` int64
    words (bit ``i % 64`` of word ``i // 64`` = vector index ``i``)."""
    if n <= _GATHER_LANES:  # few lanes: every word's rows in one gather, shifted into place, OR-ed
        rows = np.stack(parts)[_ROW_PART]
        rows <<= _ROW_LEFT
        rows >>= _ROW_RIGHT
        rows = rows.reshape(8, _ROWS_PER_WORD, n)
        words = rows[:, 0] | rows[:, 1]
        for j in range(2, _ROWS_PER_WORD):
            words |= rows[:, j]
        return np.ascontiguousarray(words.T)
    words = np.zeros((8, n), dtype=_I)  # word-major while assembling: each word one contiguous row
    for (w, sh, carry), v in zip(WORD_PLACES, parts, strict=True):
        words[w] |= v << sh if sh else v
        if carry:  # the bits past bit 63 of word w
            words[w + 1] |= v >> (64 - sh)
    return np.ascontiguousarray(words.T)


def observe_lanes(vg: Any, seats: np.ndarray | None, out: np.ndarray | None = None,
                  form: str = "floats") -> Any:
    """The observations of seat ``seats[l]`` (default: the seat to act) in each lane ``l`` of ``vg``.
    ``form``: "floats" (``(N, 493)`` float32, into ``out`` when given), "words" (``(N, 8)`` int64, the 0/1
    features only) or "both" (``(words, floats)`` of one pass)."""
    n = vg.num_games
    if seats is None:
        s = vg.to_act
    else:
        s = np.asarray(seats)
        if s.shape != (n,) or s.dtype.kind not in "iu" or ((s < 0) | (s > 3)).any():
            raise ValueError(f"seats must be an integer array of {n} seats 0..3, got {seats!r}")
        s = s.astype(_I)
    # flat indices of (lane, relative seat r) and (lane, team of relative seat r), row r of each
    rot = (_SEATS[:, None] + s) & 3
    by_seat = np.arange(0, n << 2, 4, dtype=_I) + rot  # (4, N)
    by_team = np.arange(0, n << 1, 2, dtype=_I) + (rot[:2] & 1)  # (2, N): own team, the other

    def rel(x: np.ndarray) -> Any:  # (N, 4) by seat -> (4, N), or (N, 2) by team -> 4 rows
        if x.shape[1] == NUM_PLAYERS:
            return x.reshape(-1)[by_seat]
        t = x.reshape(-1)[by_team]
        return t[0], t[1], t[0], t[1]

    phase, to_act, high_bid, trick_len = vg.phase, vg.to_act, vg.high_bid, vg.trick_len
    hands = rel(vg.hands)
    parts = feature_parts(
        s, phase, to_act, vg.dealer, vg.rules.kitty_size, hands[0], vg.bids, vg.bidder, high_bid, vg.trump,
        (vg.tricks_done | trick_len) != 0, vg.kitty, vg.discards, vg.played_by,
        vg.won, _CARD_BIT[vg.trick], np.where(trick_len > 0, vg.leader, -1), vg.voids,
        dealer_stuck(vg.rules, phase, to_act, s, vg.dealer, high_bid), rel,
    )
    words = pack_words(parts, n)
    if form == "words":
        return words
    bits = np.unpackbits(words.astype("<i8", copy=False).view(np.uint8), axis=1, count=OBS_SIZE,
                         bitorder="little")
    if out is None:
        out = bits.astype(np.float32)
    else:
        if not isinstance(out, np.ndarray) or out.shape != (n, OBS_SIZE) or out.dtype != np.float32:
            raise ValueError(f"out must be a float32 array of shape ({n}, {OBS_SIZE})")
        out[...] = bits
    scores = vg.scores.reshape(-1)[by_team]
    write_raw(out, scores[0], scores[1], vg.rules.target_score, np.bitwise_count(hands))
    return (words, out) if form == "both" else out
