"""The bookkeeping every batched agent shares (:mod:`smear_env.agents.batched`,
:mod:`smear_env.agents.heuristic_batched`): checks of a batch's arrays, the two-word form of an action mask,
and the per-slot table a batched agent keeps of its slots."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.actions import NUM_ACTIONS
from ..core.config import SmearRules
from ..engine.observation import OBS_SIZE


def check_batch(name: str, obs: Any, mask: Any, slots: Any, check_empty: bool = True
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(obs, mask as bool, slots as int64)`` after checking their shapes; ``ValueError`` naming the agent
    ``name`` and the bad argument, or (``check_empty``) the first rows that have no legal action."""
    obs = np.asarray(obs)
    mask = np.asarray(mask)
    slots = np.asarray(slots)
    if obs.ndim != 2 or obs.shape[1] != OBS_SIZE:
        raise ValueError(f"agent {name!r}: obs must have shape (B, {OBS_SIZE}), got {obs.shape}")
    b = obs.shape[0]
    if mask.shape != (b, NUM_ACTIONS):
        raise ValueError(f"agent {name!r}: mask must have shape ({b}, {NUM_ACTIONS}), got {mask.shape}")
    if slots.shape != (b,) or (b and slots.dtype.kind not in "iu"):
        raise ValueError(f"agent {name!r}: slots must be a ({b},) integer array, got shape {slots.shape} "
                         f"dtype {slots.dtype}")
    if mask.dtype != np.bool_:
        mask = mask != 0
    if check_empty:
        lo, hi = mask_words(mask)
        empty = (lo | hi) == 0
        if empty.any():
            raise no_legal_error(name, np.flatnonzero(empty), slots)
    return obs, mask, slots.astype(np.int64, copy=False)


def no_legal_error(name: str, rows: np.ndarray, slots: np.ndarray) -> ValueError:
    return ValueError(
        f"agent {name!r}: rows {rows[:8].tolist()} (slots {slots[rows[:8]].tolist()}) have no legal "
        "action (is this agent to act?)"
    )


def mask_words(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A (B, 72) bool mask as two (B,) uint64 words: actions 0..63 (bit a) and 64..71 (bit a - 64)."""
    packed = np.zeros((mask.shape[0], 16), dtype=np.uint8)
    packed[:, :9] = np.packbits(mask, axis=1, bitorder="little")
    words = packed.view("<u8")
    return words[:, 0], words[:, 1]


class SlotTable:
    """Per-slot values: a dict, plus a dense int array of codes for slots 0 .. 2**22 - 1 so that a batch
    looks its slots up with one indexing operation."""

    DENSE_LIMIT = 1 << 22

    def __init__(self, name: str) -> None:
        self.name = name
        self.values: dict[int, Any] = {}
        self._codes = np.full(0, -1, dtype=np.int64)

    def set(self, slot: int, value: Any, code: int = 0) -> None:
        slot = check_slot(self.name, slot)
        self.values[slot] = value
        if 0 <= slot < self.DENSE_LIMIT:
            if slot >= self._codes.size:
                grown = np.full(max(slot + 1, 2 * self._codes.size, 64), -1, dtype=np.int64)
                grown[: self._codes.size] = self._codes
                self._codes = grown
            self._codes[slot] = code

    def get(self, slot: int) -> Any:
        try:
            return self.values[slot]
        except KeyError:
            raise ValueError(self._not_started(slot)) from None

    def codes(self, slots: np.ndarray, code_of: Callable[[Any], int] | None = None) -> np.ndarray:
        """(B,) codes of ``slots``; ``ValueError`` for a slot that has not started a game."""
        if slots.size == 0:
            return np.zeros(0, dtype=np.int64)
        c = self._codes
        if int(slots.min()) >= 0 and int(slots.max()) < c.size:
            out = c[slots]
            if (out < 0).any():
                raise ValueError(self._not_started(int(slots[np.flatnonzero(out < 0)[0]])))
            return out
        fn = code_of if code_of is not None else (lambda v: 0)
        return np.array([fn(self.get(s)) for s in slots.tolist()], dtype=np.int64)

    def _not_started(self, slot: int) -> str:
        return f"agent {self.name!r}: slot {slot} has not started a game (call start_game(slot, ...) first)"


def check_slot(name: str, slot: Any) -> int:
    if isinstance(slot, bool) or not isinstance(slot, int | np.integer):
        raise ValueError(f"agent {name!r}: slot must be an integer, not {slot!r}")
    return int(slot)


def check_start(name: str, seat: Any, rules: Any, rng: Any) -> None:
    if isinstance(seat, bool) or not isinstance(seat, int | np.integer) or not 0 <= seat <= 3:
        raise ValueError(f"agent {name!r}: seat must be 0, 1, 2 or 3, not {seat!r}")
    if not isinstance(rules, SmearRules):
        raise TypeError(f"agent {name!r}: rules must be a SmearRules, not {type(rules).__name__}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"agent {name!r}: rng must be a numpy.random.Generator, not {type(rng).__name__}")
