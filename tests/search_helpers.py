"""Helpers of the search tests (rollout search)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from smear_env.core.config import SmearRules
from smear_env.engine.infoset import PlayerView, sample_hidden
from smear_env.engine.vector import VectorGame


def hidden_twins(views: Sequence[PlayerView], rules: SmearRules, rng: np.random.Generator
                 ) -> tuple[VectorGame, VectorGame]:
    """Two tables holding the positions of relative ``views`` (one lane each) completed by two different
    sampled deals: they differ only in cards the player to act cannot see, so it observes the same."""
    tables = []
    for _ in range(2):
        vg = VectorGame(len(views), rules)
        vg.load_worlds(np.arange(len(views)), views, [sample_hidden(v, rng) for v in views], rng)
        tables.append(vg)
    assert (tables[0].hands != tables[1].hands).any()
    assert (tables[0].observe() == tables[1].observe()).all()
    return tables[0], tables[1]
