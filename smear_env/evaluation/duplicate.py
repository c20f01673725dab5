"""The duplicate scheduler: pairs of games with exchanged seats, worker processes, matches and tournaments
(the games of one pair, their deals and the workers' pair runner: :mod:`smear_env.evaluation.pairs`).

**Duplicate format.** Team A plays team B over ``games / 2`` *pairs* of games. Both games of pair ``g``
use one sequence of deals: the same first dealer and, for every hand ``i`` (thrown-in hands count, R8),
the same deal -- ``deal i`` is drawn from ``SeedSequence([seed, 1, g, i])``, independent of how the game
went. In game 1 team A sits in seats 0/2 and team B in 1/3; in game 2 they exchange seats, so each team
receives exactly the cards the other team held (the two games may still last a different number of hands;
hand ``i`` always uses deal ``i``). This cancels most of the luck of the deal. ``--games N`` means N games
in total (N/2 pairs), so N must be even.

Games are played by the table layer (:func:`smear_env.tables.table.play`, ``max_hands`` deals per game, R21:
a game cut off there counts as a draw and is reported as truncated); an agent that offers ``act_view``
(:func:`smear_env.agents.base.has_view_fast_path`) gets ``view_of(game, seat).relative()`` instead of the
observation dict, the same information without the encode/decode round trip. The statistics are in
:mod:`smear_env.evaluation.results`.

Reproducible: the same seed gives identical numbers for any ``--workers`` (each pair's deals and agent
generators derive from ``(seed, pair)`` only; results are combined in pair order). An agent's generator is
derived through a one-way hash (:func:`agent_rng`), so it carries no ``[seed, pair, ...]`` seed sequence
from which the deals could be rebuilt.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..agents.base import Agent
from ..core.config import SmearRules
from ..core.seeding import check_seed
from ..engine.game import NUM_PLAYERS
from ..tables.stats import rate_players
from . import batched, ray_backend
from .pairs import (
    DealSequence,
    PairRunner,
    TeamSpec,
    agent_rng,
    pair_pool_init,
    pair_worker_run,
    play_table,
)
from .results import TAG_BOOT, GameStats, MatchResult, TournamentResult, aggregate, game_stats
from .worker_signals import start_pool

DEFAULT_MAX_HANDS = 200
DEFAULT_GAMES = 200
MAX_GAMES = 10_000_000
"""The most games a command line asks of one matchup (``smear-eval --games``, ``smear-exploit --eval-games`` /
``--final-games``): days of play; each game keeps a few numbers."""
BACKENDS = ("local", "ray")
ENGINES = ("auto", "batched", "reference")
"""``auto``: the batched engine (:mod:`smear_env.evaluation.batched`) when both teams can be vectorised, else
the reference (one game at a time on :class:`~smear_env.tables.table.Table`); ``batched`` forces the batched
engine (a team that cannot be vectorised is seated per slot); ``reference`` forces the reference."""


# ---------------------------------------------------------------------------- one game
def play_game(
    agents: Sequence[Agent],
    rules: SmearRules | None = None,
    seed: int = 0,
    deals: DealSequence | None = None,
    max_hands: int = DEFAULT_MAX_HANDS,
    rngs: Sequence[np.random.Generator] | None = None,
) -> tuple[dict[str, Any], GameStats]:
    """Play one game with ``agents[s]`` in seat ``s``; returns ``(smear-record/1 dict, stats)``.

    Deals come from ``deals`` (default ``DealSequence(seed, 0)``); agents' generators from ``rngs``
    (default derived from ``seed``). At most ``max_hands`` hands are dealt (R21): a game still running
    then is truncated (``winner`` None).
    """
    if len(agents) != NUM_PLAYERS:
        raise ValueError(f"play_game needs {NUM_PLAYERS} agents (one per seat), got {len(agents)}")
    if isinstance(max_hands, bool) or not isinstance(max_hands, int) or max_hands < 1:
        raise ValueError(f"max_hands must be an integer >= 1, not {max_hands!r}")
    rules = rules if rules is not None else SmearRules()
    table = play_table(agents, rules, deals if deals is not None else DealSequence(seed, 0), max_hands,
                       rngs if rngs is not None else [agent_rng(seed, 0, 0, s) for s in range(NUM_PLAYERS)])
    game, truncated = table.require_game(), table.truncated
    record = game.to_record(players=[a.name for a in agents], truncated=truncated)
    return record, game_stats(game, truncated)


def run_match(
    team_a: TeamSpec,
    team_b: TeamSpec,
    games: int = DEFAULT_GAMES,
    rules: SmearRules | None = None,
    seed: int = 0,
    workers: int = 1,
    max_hands: int = DEFAULT_MAX_HANDS,
    records: Callable[[dict[str, Any]], None] | None = None,
    progress: Callable[[int], None] | None = None,
    backend: str = "local",
    ray_address: str | None = None,
    engine: str = "auto",
) -> MatchResult:
    """Duplicate match of ``games`` games (``games / 2`` pairs) between two teams.

    A team is an agent spec (``"heuristic"``, ``"pimc:samples=16"``, a checkpoint path; see
    :func:`smear_env.agents.registry.make_agent`) or a zero-argument factory returning an agent (with
    ``workers > 1`` it must be picklable). Each game's ``smear-record/1`` dict is passed to ``records``
    in order; ``progress(n)`` is called after each pair with the number of games it finished (2).
    ``backend="ray"`` plays the pairs as Ray tasks (:mod:`smear_env.evaluation.ray_backend`; ``workers``
    unused; the cluster at ``ray_address``, or a local Ray): the same result as ``"local"`` for one seed.
    ``engine`` (:data:`ENGINES`): the batched engine plays the same games (the same result) many at a time.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine {engine!r} is not allowed; allowed values: {', '.join(map(repr, ENGINES))}")
    if engine == "batched" and backend != "local":
        raise ValueError(f"engine 'batched' runs on backend 'local', not {backend!r}")
    if backend not in BACKENDS:
        allowed = ", ".join(map(repr, BACKENDS))
        raise ValueError(f"backend {backend!r} is not allowed; allowed values: {allowed}")
    if isinstance(games, bool) or not isinstance(games, int) or games < 2 or games % 2:
        raise ValueError(f"games must be an even integer >= 2 (duplicate pairs of games), not {games!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, not {workers!r}")
    if isinstance(max_hands, bool) or not isinstance(max_hands, int) or max_hands < 1:
        raise ValueError(f"max_hands must be an integer >= 1, not {max_hands!r}")
    seed = check_seed(seed, allow_none=False)
    rules = rules if rules is not None else SmearRules()
    n_pairs = games // 2
    want_records = records is not None
    t0 = time.perf_counter()
    results: list[list[GameStats]] = []

    def take(out: tuple[list[GameStats], list[dict[str, Any]] | None]) -> None:
        stats, recs = out
        results.append(stats)
        if records is not None and recs:
            for r in recs:
                records(r)
        if progress is not None:
            progress(len(stats))

    workers = min(workers, n_pairs)

    use_batched = engine == "batched" or (
        engine == "auto" and backend == "local" and batched.batchable(team_a) and batched.batchable(team_b))
    if use_batched:  # build the agents here first: a bad spec fails fast with its own error
        players = (batched.batched_player(team_a, rules), batched.batched_player(team_b, rules))
        name_a, name_b = players[0].name, players[1].name
    else:
        runner = PairRunner(team_a, team_b, rules, seed, max_hands, want_records)
        name_a, name_b = runner.a[0].name, runner.b[0].name
    try:
        if use_batched:
            if workers == 1:
                batched.play_pairs(team_a, team_b, rules, seed, max_hands, 0, n_pairs, want_records,
                                   players=players, emit=take)
            else:
                for p in players:
                    p.close()
                for out in batched.run_pairs(team_a, team_b, rules, seed, max_hands, n_pairs, want_records,
                                             workers):
                    take(out)
        elif backend == "ray":
            for out in ray_backend.run_pairs(team_a, team_b, rules, seed, max_hands, want_records, n_pairs,
                                             ray_address):
                take(out)
        elif workers == 1:
            for p in range(n_pairs):
                take(runner.run(p))
        else:
            chunk = max(1, min(16, n_pairs // (workers * 8)))
            # one BLAS thread each (worker_pool): single-threaded, terminate()'s SIGTERM runs their handler
            pool = start_pool(lambda: batched.worker_pool(workers, initializer=pair_pool_init, initargs=(
                team_a, team_b, rules.to_dict(), seed, max_hands, want_records)))
            with pool:  # an error (a bot that fails stops the match) terminates the workers
                # ordered: deterministic
                for out in pool.imap(pair_worker_run, range(n_pairs), chunksize=chunk):
                    take(out)
                pool.close()  # a finished match ends them normally: each closes its bots as it exits
                pool.join()
    except Exception as e:  # the match stops; every finished game is still passed to ``records``
        for r in getattr(e, "finished_records", None) or ():
            records(r)  # type: ignore[misc]
        raise
    finally:
        if use_batched:
            if workers == 1:
                for p in players:
                    p.close()
        else:
            runner.close()  # the bots of a one-process match get ``quit`` (the workers close their own)
    scores, margins, hands, totals = aggregate(results)
    return MatchResult(
        team_a=name_a, team_b=name_b, rules=rules, seed=seed, games=games,
        max_hands=max_hands, pair_scores=scores, pair_margin=margins, pair_hands=hands, totals=totals,
        seconds=time.perf_counter() - t0,
    )


# ---------------------------------------------------------------------------- tournaments
def run_tournament(
    players: Sequence[str],
    games: int = DEFAULT_GAMES,
    rules: SmearRules | None = None,
    seed: int = 0,
    workers: int = 1,
    max_hands: int = DEFAULT_MAX_HANDS,
    anchor: str | None = None,
    records: Callable[[dict[str, Any]], None] | None = None,
    progress: Callable[[int], None] | None = None,
    n_boot: int = 500,
    backend: str = "local",
    ray_address: str | None = None,
    engine: str = "auto",
) -> TournamentResult:
    """Every pair of ``players`` plays a duplicate match of ``games`` games (the same deal sequences for
    every matchup); ratings are a Bradley-Terry fit anchored at ``anchor`` (default ``random`` if
    playing, else the first player) = 0."""
    players = [p.strip() for p in players]
    if len(players) < 2:
        raise ValueError(f"a tournament needs at least 2 players, got {players!r}")
    if len(set(players)) != len(players):
        raise ValueError(f"tournament players must be distinct, got {players!r}")
    if anchor is None:
        anchor = "random" if "random" in players else players[0]
    if anchor not in players:
        raise ValueError(f"anchor {anchor!r} is not one of the players {players!r}")
    matches: dict[tuple[int, int], MatchResult] = {}
    for i in range(len(players)):
        for j in range(i + 1, len(players)):
            matches[(i, j)] = run_match(players[i], players[j], games, rules, seed, workers, max_hands,
                                        records, progress, backend, ray_address, engine)
    rng = np.random.default_rng(np.random.SeedSequence([seed, TAG_BOOT, 1]))
    ratings = rate_players(players, {k: m.pair_scores for k, m in matches.items()}, rng,
                           anchor=players.index(anchor), n_boot=n_boot)
    return TournamentResult(players=players, matches=matches, ratings=ratings, anchor=anchor)
