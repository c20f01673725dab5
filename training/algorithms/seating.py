"""Seating the new games of a batched table (:class:`smear_env.tables.batched_table.BatchedTable`), shared by
the trainers that collect on it (``vector_ppo``, ``dmc``)."""

from __future__ import annotations

from typing import Any

import numpy as np


def seat_opponent_teams(table: Any, lanes: np.ndarray, player: np.ndarray,
                        rng: np.random.Generator) -> np.ndarray:
    """Seat the new games of ``lanes``: the learner's team (0 or 1 per lane, drawn with ``rng``) is played by
    table player 0 (the learner), both seats of the other team by table player ``player[i]``; returns the
    learner's team of each lane."""
    k = len(lanes)
    team = rng.integers(2, size=k)
    rows = np.zeros((k, 4), dtype=np.int64)
    ar = np.arange(k)
    rows[ar, 1 - team] = player
    rows[ar, 3 - team] = player
    table.set_seating(lanes, rows)
    return team
