"""The batched collector: the games every stage that learns from play records, on the batched table.

A :class:`Collector` is ``lanes`` games on a :class:`~smear_env.tables.batched_table.BatchedTable`, every lane
stepped at once: :meth:`Collector.turn` observes each lane's seat to act and asks the players, the caller
reads what it records (and may change the actions played), :meth:`Collector.step` plays them. Its users:
the win model's games (:mod:`training.winprob`), the advantage round's values (:mod:`training.advantage`)
and the batched imitation warm start (:mod:`training.algorithms.imitation`).

The players are one of two kinds:

* a team and an opponent (``opponent`` given): batched agents holding seats 0 and 2 and seats 1 and 3,
  whose slots are the seats 0-3 (started once, as :func:`smear_env.agents.registry.rollout_players` makes
  them), asked by :func:`~smear_env.agents.rollout.team_actions` (rows with one legal action are not asked
  of an agent that does not draw);
* one agent in all four seats (``opponent`` None): the table's player, each lane's slots ``4 * lane +
  seat`` started by the table at every new game.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from smear_env.core.config import SmearRules
from smear_env.tables.batched_table import LEARNER, BatchedStep, BatchedTable
from smear_env.tables.table import TableOptions

PLAIN = TableOptions(max_cycles=None, max_hands=200)
"""The engine's own games: no decision cut-off, games cut off at 200 hands (R21)."""


class Collector:
    """``lanes`` games of ``team`` against ``opponent`` (or of ``team`` alone) on the batched table, deals
    from ``seed`` (see the module docstring); a context manager that closes the players."""

    def __init__(self, lanes: int, rules: SmearRules, seed: int, team: Any, opponent: Any = None,
                 options: TableOptions = PLAIN) -> None:
        self.team, self.opponent = team, opponent
        players = [team] if opponent is None else [LEARNER]  # a learner key: the caller decides
        self.table = BatchedTable(lanes, players, np.zeros(4, dtype=np.int64), rules, options, seed=seed)
        self.vg = self.table.vg
        self._slots = np.arange(lanes, dtype=np.int64) << 2

    def turn(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(observations, legal masks, seats to act, the players' actions) of every lane."""
        from smear_env.agents.rollout import team_actions

        vg = self.vg
        obs, mask, seat = vg.observe(), vg.legal_mask(), vg.to_act.copy()
        if self.opponent is None:
            return obs, mask, seat, self.team.act_batch(obs, mask, self._slots + seat)
        return obs, mask, seat, team_actions(self.team, self.opponent, obs, mask, seat)

    def step(self, actions: np.ndarray) -> BatchedStep:
        """Play ``actions`` (one a lane) and what they end: hands, games, the next deals."""
        return self.table.apply(None, actions)

    def close(self) -> None:
        for agent in (self.team, self.opponent):
            if agent is not None:
                agent.close()

    def __enter__(self) -> Collector:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
