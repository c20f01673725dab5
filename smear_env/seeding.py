"""Seed checks shared by the public seed entries (``raw_env().reset(seed=...)``,
``SmearSingleSeatEnv.reset(seed=...)``, a record's ``seed`` field).

A seed is ``None`` (fresh OS entropy) or an integer ``0 <= seed < 2**64``: a Python ``int`` or a numpy
integer, never a ``bool``, a float or a string. The upper bound is the range of one unsigned 64-bit word,
the widest seed every part of the project (the batched engine included) keeps exactly; numpy itself would
take larger integers, but a seed that some component silently folds onto another one is worse than an
error. A bad seed raises ``TypeError`` (wrong type) or ``ValueError`` (out of range) naming the value and
the allowed range, before anything changes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .actions import short_repr

SEED_LIMIT = 2**64
"""Seeds are integers in ``0 .. SEED_LIMIT - 1``."""
SEED_RANGE = "an integer 0 <= seed < 2**64, or None"


def check_seed(seed: Any, name: str = "seed") -> int | None:
    """``seed`` as a plain ``int`` (or ``None``); ``TypeError`` / ``ValueError`` naming it and the allowed
    range (:data:`SEED_RANGE`) otherwise."""
    if seed is None:
        return None
    if isinstance(seed, bool | np.bool_) or not isinstance(seed, int | np.integer):
        raise TypeError(f"{name} must be {SEED_RANGE}; got {short_repr(seed)} ({type(seed).__name__})")
    value = int(seed)
    if not 0 <= value < SEED_LIMIT:
        raise ValueError(f"{name} must be {SEED_RANGE}; got {short_repr(value)}")
    return value


__all__ = ["SEED_LIMIT", "SEED_RANGE", "check_seed"]
