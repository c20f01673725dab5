"""Seed checks shared by the public seed entries (``raw_env().reset(seed=...)``,
``SmearSingleSeatEnv.reset(seed=...)``, a record's ``seed`` field).

A seed is ``None`` (fresh OS entropy) or an integer ``0 <= seed < 2**64``: a Python ``int`` or a numpy
integer, never a ``bool``, a float or a string. The upper bound is the range of one unsigned 64-bit word,
the widest seed every part of the project (the batched engine included) keeps exactly; numpy itself would
take larger integers, but a seed that some component silently folds onto another one is worse than an
error. A bad seed raises :class:`SeedError` (both a ``TypeError`` and a ``ValueError``) naming the value and
the allowed range, before anything changes. The batched engine, its deals and the duplicate evaluator's
deal sequences take the same seeds without ``None`` (``check_seed(seed, allow_none=False)``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .actions import short_repr

SEED_LIMIT = 2**64
"""Seeds are integers in ``0 .. SEED_LIMIT - 1``."""
SEED_RANGE = "an integer 0 <= seed < 2**64, or None"
"""The seeds a public seed entry takes, in words (every seed error names it)."""


class SeedError(TypeError, ValueError):
    """A seed that is not an integer ``0 <= seed < 2**64`` (or ``None`` where that is allowed): a
    ``TypeError`` for its type and a ``ValueError`` for its value, so a caller catching either sees it."""


def check_seed(seed: Any, name: str = "seed", *, allow_none: bool = True) -> int | None:
    """``seed`` as a plain ``int`` (or ``None`` when ``allow_none``); :class:`SeedError` naming ``name``, the
    value and the allowed range (:data:`SEED_RANGE`) otherwise."""
    allowed = SEED_RANGE if allow_none else SEED_RANGE.removesuffix(", or None")
    if seed is None and allow_none:
        return None
    if isinstance(seed, bool | np.bool_) or not isinstance(seed, int | np.integer):
        raise SeedError(f"{name} must be {allowed}; got {short_repr(seed)} ({type(seed).__name__})")
    value = int(seed)
    if not 0 <= value < SEED_LIMIT:
        raise SeedError(f"{name} must be {allowed}; got {short_repr(value)}")
    return value


__all__ = ["SEED_LIMIT", "SEED_RANGE", "SeedError", "check_seed"]
