"""The observation decoder: an observation vector back to the relative
:class:`~smear_env.engine.infoset.PlayerView` it encodes, one vector (:func:`decode`) or a batch of rows
(:func:`decode_batch`).

:func:`decode` is the exact inverse of :func:`smear_env.engine.observation.encode`:
``decode(encode(v)) == v.relative()``. Every field is read as its :data:`~smear_env.engine.observation.LAYOUT`
row says. The view's ``legal_actions`` come from an action mask when one is passed (``decode(vec, mask)``),
otherwise they are recomputed from the decoded information (:func:`legal_actions_of`: R6-R12; the one fact
not otherwise in the view, whether a dealer may pass under R8 ``dealer_must_bid``, is the ``stuck`` bit).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..core.actions import NUM_ACTIONS
from ..core.cards import NUM_CARDS
from ..core.phases import DISCARD, HAND_OVER, PLAY, bid_state, bit_actions, high_bid_of, legal_bits
from .infoset import PlayerView
from .observation import (
    AS_INTS,
    AS_ONE_HOT,
    AS_TRICK,
    LAYOUT,
    OBS_SIZE,
    REQUIRED,
    SLICES,
    STUCK,
    Term,
)

# Each view field's term with its offset, in LAYOUT order (trick after trick_leader, which it reads).
_FIELD_TERMS = tuple((t, SLICES[t.name].start) for t in LAYOUT if t.field is not None)
_VIEW_FIELDS = tuple(f.name for f in dataclasses.fields(PlayerView))
assert sorted(_VIEW_FIELDS) == sorted(("seat", "legal_actions", *(t.field for t, _ in _FIELD_TERMS))), (
    "every PlayerView field but seat and legal_actions is one term of LAYOUT")
_VIEW_ORDER = tuple(next(i for i, (t, _) in enumerate(_FIELD_TERMS) if t.field == f)
                    for f in _VIEW_FIELDS if f not in ("seat", "legal_actions"))
"""Index into _FIELD_TERMS of each PlayerView field between ``seat`` and ``legal_actions``."""
assert _VIEW_FIELDS[0] == "seat" and _VIEW_FIELDS[-1] == "legal_actions"


def _no_phase() -> ValueError:
    return ValueError("observation term 'phase' has no bit set; is this an observation vector?")


def _decode_one_hot(t: Term, block: int) -> Any:
    """The value of one block of a one-hot term (``block``: its bits as an int)."""
    if not block:
        if t.absent is REQUIRED:
            raise _no_phase() if t.name == "phase" else ValueError(
                f"observation term {t.name!r} has no bit set")
        return t.absent
    if block & (block - 1):
        raise ValueError(
            f"observation term {t.name!r} has {block.bit_count()} bits set; expected at most one")
    return t.values[block.bit_length() - 1]


def decode(vec: np.ndarray, mask: np.ndarray | None = None) -> PlayerView:
    """The relative :class:`PlayerView` an observation vector encodes (exact inverse of :func:`encode`).

    ``legal_actions`` come from ``mask`` (the ``action_mask`` of the same observation) when given;
    otherwise they are recomputed from the decoded view (R6-R12, plus the ``stuck`` bit for R8).
    Every field is read as its :data:`LAYOUT` row says; a one-hot block with more than one bit is an error.
    """
    vec = np.asarray(vec)
    if vec.shape != (OBS_SIZE,):
        raise ValueError(f"observation vector must have shape ({OBS_SIZE},), got {vec.shape}")
    x = int.from_bytes(np.packbits(vec > 0.5, bitorder="little").tobytes(), "little")  # bit i: vec[i] > 0.5
    vals: list[Any] = []
    leader = None
    for t, start in _FIELD_TERMS:
        kind, w = t.decode, t.width
        if kind == AS_INTS:
            v: Any = tuple(int(u) for u in vec[start:start + w]) if w > 1 else int(vec[start])
        elif kind == AS_TRICK:
            trick: list[int] = []
            if leader is not None:
                for i in range(t.blocks):
                    c = _decode_one_hot(t, x >> (start + w * ((leader + i) & 3)) & ((1 << w) - 1))
                    if c is None:
                        break
                    trick.append(c)
            v = tuple(trick)
        else:
            full = (1 << w) - 1
            if kind == AS_ONE_HOT:
                one = [_decode_one_hot(t, x >> (start + w * b) & full) for b in range(t.blocks)]
            else:  # AS_MASK
                one = [x >> (start + w * b) & full for b in range(t.blocks)]
            v = tuple(one) if t.blocks > 1 else one[0]
            if t.field == "trick_leader":
                leader = v
        vals.append(v)
    fields = [vals[i] for i in _VIEW_ORDER]
    if mask is not None:
        return PlayerView(0, *fields, tuple(int(a) for a in np.flatnonzero(np.asarray(mask))))
    view = PlayerView(0, *fields, ())
    return _replace_legal(view, legal_actions_of(view, stuck=bool(vec[STUCK] > 0.5)))


def _batch_one_hot(obs: np.ndarray, start: int, n: int) -> list[int | None]:
    block = obs[:, start : start + n] > 0.5
    idx = block.argmax(axis=1)
    return [int(i) if h else None for i, h in zip(idx.tolist(), block.any(axis=1).tolist(), strict=True)]


def _batch_bits(obs: np.ndarray, start: int, n: int = NUM_CARDS) -> list[int]:
    bits = np.packbits(obs[:, start : start + n] > 0.5, axis=1, bitorder="little")
    padded = np.zeros((bits.shape[0], 8), dtype=np.uint8)
    padded[:, : bits.shape[1]] = bits
    return padded.view("<u8")[:, 0].tolist()


def _batch_values(t: Term, obs: np.ndarray, start: int) -> list[Any]:
    """One block of a one-hot term on every row: the first set bit's value, ``absent`` for none."""
    block = obs[:, start : start + t.width] > 0.5
    idx = block.argmax(axis=1).tolist()
    values, absent = t.values, t.absent
    if absent is REQUIRED:
        if not block.any(axis=1).all():
            raise _no_phase() if t.name == "phase" else ValueError(
                f"observation term {t.name!r} has no bit set")
        return [values[i] for i in idx]
    return [values[i] if h else absent for i, h in zip(idx, block.any(axis=1).tolist(), strict=True)]


def decode_batch(obs: np.ndarray, mask: np.ndarray) -> list[PlayerView]:
    """:func:`decode` of each row of ``obs`` (``(n, OBS_SIZE)``) with the legal actions from the rows of
    ``mask``: the same views, at 2-3x the rate per row of ``decode(vec, mask)`` for 4096 rows
    (``benchmarks/decode_speed.py``).
    Unlike :func:`decode` it does not check that one-hot terms have at most one bit set (it takes the
    first)."""
    obs = np.asarray(obs)
    mask = np.asarray(mask)
    if obs.ndim != 2 or obs.shape[1] != OBS_SIZE or mask.shape != (obs.shape[0], NUM_ACTIONS):
        raise ValueError(f"decode_batch: need obs (n, {OBS_SIZE}) and mask (n, {NUM_ACTIONS}), got "
                         f"{obs.shape} and {mask.shape}")
    n = obs.shape[0]
    if n == 0:
        return []
    cols: list[Any] = []
    leader: list[Any] = [None] * n
    for t, start in _FIELD_TERMS:
        kind, w = t.decode, t.width
        if kind == AS_INTS:
            raw = obs[:, start : start + w].astype(np.int64).tolist()
            col: Any = [tuple(r) for r in raw] if w > 1 else [r[0] for r in raw]
        elif kind == AS_TRICK:
            seat_cards = [_batch_values(t, obs, start + w * b) for b in range(t.blocks)]
            col = []
            for i in range(n):
                ld = leader[i]
                trick: list[int] = []
                if ld is not None:
                    for k in range(t.blocks):
                        c = seat_cards[(ld + k) & 3][i]
                        if c is None:
                            break
                        trick.append(c)
                col.append(tuple(trick))
        else:
            if kind == AS_ONE_HOT:
                blocks = [_batch_values(t, obs, start + w * b) for b in range(t.blocks)]
            else:  # AS_MASK
                blocks = [_batch_bits(obs, start + w * b, w) for b in range(t.blocks)]
            col = list(zip(*blocks, strict=True)) if t.blocks > 1 else blocks[0]
            if t.field == "trick_leader":
                leader = col
        cols.append(col)
    rows, acts = np.nonzero(mask)
    legal: list[tuple[int, ...]] = [()] * n
    if rows.size:
        splits = np.flatnonzero(np.diff(rows)) + 1
        for r0, a in zip(rows[np.r_[0, splits]].tolist(), np.split(acts, splits), strict=True):
            legal[r0] = tuple(a.tolist())
    ordered = [cols[i] for i in _VIEW_ORDER]
    return [PlayerView(0, *fields, lg) for *fields, lg in zip(*ordered, legal, strict=True)]


def _replace_legal(view: PlayerView, legal: tuple[int, ...]) -> PlayerView:
    from dataclasses import replace

    return replace(view, legal_actions=legal)


def legal_actions_of(view: PlayerView, stuck: bool = False) -> tuple[int, ...]:
    """Legal actions of the observer from its own information (R6-R12;
    :func:`smear_env.core.phases.legal_bits`, the engines' own function); ``()`` unless it is to act.

    ``stuck``: the observer is a dealer who may not pass (R8 ``dealer_must_bid``), which the view
    alone does not tell.
    """
    phase = view.phase
    if view.to_act != view.seat or phase >= HAND_OVER:
        return ()
    assert view.trump is not None or phase < DISCARD or (phase == PLAY and not view.trick)
    trick = view.trick
    first_lead = sum(m.bit_count() for m in view.played_by) < 4  # no trick finished yet
    return bit_actions(*legal_bits(
        int(phase), view.hand, high_bid_of([bid_state(b) for b in view.bids]), stuck,
        -1 if view.trump is None else view.trump, trick[0] >> 3 if trick else -1, first_lead))
