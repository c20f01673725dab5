"""Duplicate evaluation of agents: where each part lives.

* :mod:`smear_env.evaluation.duplicate` -- the scheduler: pairs of games with the teams' seats exchanged,
  worker processes, :func:`run_match`, :func:`run_tournament`.
* :mod:`smear_env.evaluation.pairs` -- the games of one pair, whichever way a match runs: deal sequences
  (:class:`DealSequence`), the agents' generators (:func:`agent_rng`), one game on the table layer
  (:func:`play_table`, :mod:`smear_env.tables.table`) and the pair runner the worker processes and Ray tasks
  use.
* :mod:`smear_env.evaluation.batched` -- the same pairs and games on the batched engine
  (:mod:`smear_env.engine.vector`), many at a time, when both teams can be vectorised (``engine="auto"``).
* :mod:`smear_env.evaluation.results` -- the statistics of a match (per-game counts, win rate and
  margin intervals, per-team bidding and capture rates) and of a tournament (ratings); the interval
  methods are in :mod:`smear_env.tables.stats`.
* :mod:`smear_env.evaluation.cli` -- the ``smear-eval`` command line.
* :mod:`smear_env.evaluation.ray_backend` -- the pairs of a match as Ray tasks (``--backend ray``).
"""

from __future__ import annotations

from .duplicate import (
    DEFAULT_GAMES,
    DEFAULT_MAX_HANDS,
    DealSequence,
    TeamSpec,
    agent_rng,
    play_game,
    play_table,
    run_match,
    run_tournament,
)
from .results import GameStats, MatchResult, TournamentResult, game_stats

__all__ = [
    "DEFAULT_GAMES", "DEFAULT_MAX_HANDS", "DealSequence", "GameStats", "MatchResult", "TeamSpec",
    "TournamentResult", "agent_rng", "game_stats", "play_game", "play_table", "run_match", "run_tournament",
]
