"""Duplicate evaluation on the batched engine: the games of :mod:`smear_env.evaluation.duplicate`, many at
once on a :class:`~smear_env.tables.batched_table.BatchedTable`.

The same games as the reference evaluator: game ``g`` (0/1) of pair ``p`` is dealt from
``DealSequence(seed, p)`` (hand ``i`` from deal ``i``, thrown-in hands counting; the same first dealer), team
A sits in seats ``g, g + 2``, each fixed seat gets ``agent_rng(seed, p, g, seat)`` in ``start_game``, and a
game is truncated when it would deal its ``max_hands``-th hand (R21). The agents are batched agents
(:func:`smear_env.agents.batched.make_batched_agent`), whose row actions equal their per-seat agents', so
the per-game statistics, the :class:`~smear_env.evaluation.results.MatchResult` and the records are the
reference evaluator's (for any agent whose decisions depend only on its observations and generator).

Each lane of the table plays games from a queue (game ``k`` = pair ``k // 2``, game ``k % 2``), taking the
next one when its game ends; the results are put back in pair order, so they depend neither on the number
of lanes nor on ``workers`` (each worker process plays a contiguous block of pairs).
:func:`smear_env.evaluation.duplicate.run_match` uses this path (``engine="auto"``) when both teams can be
vectorised (:func:`~smear_env.agents.batched.can_vectorise`).
"""

from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..agents.batched import PerSlotAgent
from ..agents.registry import can_vectorise, make_batched_agent
from ..core.config import SmearRules
from ..engine.game import POINT_NAMES
from ..engine.vector import deck_of
from ..tables.batched_table import BatchedTable
from ..tables.table import TableOptions
from .pairs import DealSequence, agent_rng
from .results import GameStats
from .worker_signals import ignore_sigint, start_pool

DEFAULT_LANES = 1024
_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
_NO_DEAL = np.arange(32, dtype=np.int64)  # dealt to lanes that have no game left (they stay idle)


_BLAS_CALLS = (("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
               ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
               ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
               ("openblas_get_num_threads", "openblas_set_num_threads"))


def _openblas_controls() -> list[tuple[Any, Any]]:
    """``(get, set)`` thread-count functions of the OpenBLAS libraries loaded in this process (numpy's
    bundled one), found by name in ``/proc/self/maps``; empty where there is none or no such file."""
    try:
        with open("/proc/self/maps") as f:
            paths = sorted({line.split()[-1] for line in f if "openblas" in line.lower() and "/" in line})
    except OSError:
        return []
    found = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for get, set_ in _BLAS_CALLS:
            g, s = getattr(lib, get, None), getattr(lib, set_, None)
            if g is not None and s is not None:
                g.restype = ctypes.c_int
                s.argtypes = [ctypes.c_int]
                found.append((g, s))
                break
    return found


@contextmanager
def blas_threads(n: int | None) -> Iterator[None]:
    """Limit BLAS to ``n`` threads in this process for the block (``None``: unchanged), then restore the
    previous counts. With ``threadpoolctl`` installed it is used; else numpy's bundled OpenBLAS is told
    directly (Linux; elsewhere nothing changes and ``OPENBLAS_NUM_THREADS=1`` is the way)."""
    if n is None:
        yield
        return
    try:
        from threadpoolctl import threadpool_limits  # type: ignore[import-not-found]  # lazy: optional
    except ImportError:
        threadpool_limits = None
    if threadpool_limits is not None:
        with threadpool_limits(limits=n, user_api="blas"):
            yield
        return
    controls = _openblas_controls()
    saved = [g() for g, _ in controls]
    for _, s in controls:
        s(n)
    try:
        yield
    finally:
        for (_, s), k in zip(controls, saved, strict=True):
            s(k)


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """While it is open, processes started take one BLAS / OpenMP thread (the ``_THREAD_VARS`` of their
    environment are 1; this process's are restored after). A match worker is then single-threaded: the
    parallelism is the processes, and the SIGTERM of ``Pool.terminate()`` reaches its main thread, the
    only one that can run the handler (one delivered to a BLAS thread left a worker blocked on the task
    queue's lock for ever, and the match with it)."""
    saved = {k: os.environ.get(k) for k in _THREAD_VARS}
    os.environ.update({k: "1" for k in _THREAD_VARS})
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def worker_pool(workers: int, **kwargs: Any) -> Any:
    """A ``spawn`` multiprocessing pool of ``workers`` processes with one BLAS / OpenMP thread each
    (:func:`one_blas_thread` while they start; ``kwargs`` go to ``Pool``): the processes are the
    parallelism. A process's OpenBLAS takes its thread count when it loads, so a pool started without this
    runs as many BLAS threads per worker as there are cores, spinning against the other workers (measured:
    the advantage values against random took 352 s where one thread each took 58 s, on 2 cores)."""
    with one_blas_thread():
        return mp.get_context("spawn").Pool(workers, **kwargs)


def even_shares(total: int, parts: int) -> list[int]:
    """``total`` split into ``parts`` shares as even as can be, the first ``total % parts`` one larger: the
    work each pool worker (or each seeded share of a job) gets."""
    return [total // parts + (i < total % parts) for i in range(parts)]


def blas_thread_counts() -> list[int]:
    """The thread count of each OpenBLAS library loaded in this process (empty where none is found): what a
    :func:`worker_pool` worker reports as ``[1]``."""
    return [get() for get, _ in _openblas_controls()]


def batchable(team: Any) -> bool:
    """Whether a team (an agent spec) can be played by the batched evaluator as a vectorised agent."""
    return isinstance(team, str) and can_vectorise(team)


def batched_player(team: Any, rules: SmearRules) -> Any:
    """The batched agent of a team: an agent spec, a batched agent, or a zero-argument factory of
    per-seat agents (seated one per slot, :class:`~smear_env.agents.batched.PerSlotAgent`)."""
    if isinstance(team, str):
        return make_batched_agent(team, rules)
    if callable(getattr(team, "act_batch", None)):
        return team
    if callable(team):
        return PerSlotAgent(team, name=team().name)
    raise TypeError(f"a team is an agent spec string, a batched agent or a zero-argument agent factory, "
                    f"not {team!r}")


class _DuplicateDeals:
    """The :class:`~smear_env.engine.vector.VectorDealSource` of a block of pairs: a lane starting a game
    takes the next game ``k`` of the queue (pair ``first_pair + k // 2``, game ``k % 2``)."""

    def __init__(self, seed: int, first_pair: int, n_games: int, n_lanes: int) -> None:
        self._sequence = DealSequence
        self.seed = seed
        self.first_pair = first_pair
        self.n_games = n_games
        self.next_game = 0
        self.dealt = np.full(n_lanes, -1, dtype=np.int64)  # game k each lane was last given
        self._pairs: dict[int, Any] = {}

    def sequence(self, pair: int) -> Any:
        ds = self._pairs.get(pair)
        if ds is None:
            ds = self._pairs[pair] = self._sequence(self.seed, self.first_pair + pair)
        return ds

    def release(self, pair: int) -> None:
        self._pairs.pop(pair, None)

    def deals(self, lanes: np.ndarray, games: np.ndarray, hands: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        perm = np.empty((len(lanes), 32), dtype=np.int64)
        dealer = np.zeros(len(lanes), dtype=np.int64)
        for i, (lane, h) in enumerate(zip(lanes.tolist(), hands.tolist(), strict=True)):
            if h == 0:
                self.dealt[lane] = self.next_game
                self.next_game += 1
            k = int(self.dealt[lane])
            if k >= self.n_games:
                perm[i] = _NO_DEAL
                continue
            ds = self.sequence(k >> 1)
            perm[i] = deck_of(*ds.deal(h))
            dealer[i] = ds.first_dealer
        return perm, dealer


class _Counts:
    """Per-lane counts of the game in progress, and per-game counts of the finished games."""

    FIELDS = ("score_change", "bids_won", "made", "contract_sum", "points")

    def __init__(self, n: int, n_games: int) -> None:
        self.lane = {f: np.zeros((n, 2), dtype=np.int64) for f in self.FIELDS}
        self.lane_captures = np.zeros((n, 4, 2), dtype=np.int64)
        self.lane_deals = np.zeros(n, dtype=np.int64)
        self.lane_played = np.zeros(n, dtype=np.int64)
        self.lane_thrown = np.zeros(n, dtype=np.int64)
        self.stats: list[GameStats | None] = [None] * n_games


def play_pairs(
    team_a: Any,
    team_b: Any,
    rules: SmearRules,
    seed: int,
    max_hands: int,
    first_pair: int,
    n_pairs: int,
    records: bool = False,
    lanes: int = DEFAULT_LANES,
    on_pair: Callable[[int], None] | None = None,
    players: tuple[Any, Any] | None = None,
    emit: Callable[[tuple[list[GameStats], list[dict[str, Any]] | None]], None] | None = None,
    threads: int | None = 1,
) -> tuple[list[list[GameStats]], list[dict[str, Any]] | None]:
    """Play pairs ``first_pair .. first_pair + n_pairs - 1`` on one batched table of up to ``lanes`` lanes;
    returns ``(per pair [stats of game 0, game 1], records in pair order or None)``, what the reference
    ``PairRunner.run`` gives pair by pair. ``on_pair(p)`` is told when a pair's two games are done
    (pairs finish in any order). ``players``: the two batched agents, already built (else built from the
    specs; they are closed at the end only then). ``emit((stats, records))``: called for each pair in pair
    order as soon as it and every pair before it are done (what the reference scheduler's ``take`` gets),
    so a match stopped early keeps its finished games in order. ``threads``: BLAS threads while it plays
    (:func:`blas_threads`; a checkpoint's forward pass over ~1000 rows with 2 OpenBLAS threads on 2 shared
    cores was measured 11x the CPU time of one thread: 107 vs 9.7 CPU-s for 1,000 default-heuristic
    games); ``None`` leaves them as they are."""
    n_games = 2 * n_pairs
    # at least ~8 games a lane: the last games of a block run on few lanes (every step still costs O(lanes))
    n = max(1, min(int(lanes), max(64, n_games // 8), n_games))
    own = players is None
    a, b = players if players is not None else (batched_player(team_a, rules), batched_player(team_b, rules))
    names = (a.name, b.name)
    source = _DuplicateDeals(seed, first_pair, n_games, n)
    counts = _Counts(n, n_games)
    current = np.full(n, -1, dtype=np.int64)  # game k each lane plays
    recs: dict[int, dict[str, Any]] = {}
    pair_done = np.zeros(n_pairs, dtype=np.int8)
    emitted = [0]  # pairs passed to emit

    def on_new_games(table: BatchedTable, idx: np.ndarray) -> None:
        k = source.dealt[idx]
        current[idx] = k
        live = k < n_games
        rows = np.where((k & 1)[:, None] == 0, np.array([0, 1, 0, 1]), np.array([1, 0, 1, 0]))
        rows[~live] = -1
        table.set_seating(idx, rows)

    # an agent that never draws (``draws`` False: the heuristic, a greedy checkpoint) gets one shared
    # generator instead of its own (building agent_rng's is a SHA-256 and a SeedSequence per seat and game)
    draws = (bool(getattr(a, "draws", True)), bool(getattr(b, "draws", True)))
    unused = np.random.default_rng(0)

    def rngs(lane: int, game: int, seat: int) -> np.random.Generator:
        k = int(current[lane])
        if not draws[(seat + k) & 1]:  # team A (player 0) sits in seats g, g + 2 of game g = k & 1
            return unused
        return agent_rng(seed, first_pair + (k >> 1), k & 1, seat)

    def on_step(table: BatchedTable, st: Any) -> None:
        res, vg, c = st.result, table.vg, counts
        ended = np.flatnonzero(res.hand_over | res.thrown_in)
        if not ended.size:
            return
        c.lane_deals[ended] += 1
        th = np.flatnonzero(res.thrown_in)
        c.lane_thrown[th] += 1
        sc = np.flatnonzero(res.hand_over)
        if sc.size:
            c.lane_played[sc] += 1
            c.lane["score_change"][sc] += res.score_delta[sc]
            team = vg.hand_bidder[sc] & 1
            c.lane["bids_won"][sc, team] += 1
            c.lane["contract_sum"][sc, team] += vg.hand_contract[sc]
            c.lane["made"][sc, team] += vg.hand_made[sc]
            pts = vg.hand_points[sc]
            for p in range(4):
                ok = pts[:, p] >= 0
                lw, w = sc[ok], pts[ok, p]
                c.lane_captures[lw, p, w] += 1
                c.lane["points"][lw, w] += 1
        done = np.flatnonzero(st.new_game)
        if not done.size:
            return
        finished = table.records() if records else None
        for i, lane in enumerate(done.tolist()):
            k = int(current[lane])
            winner = int(res.winner[lane])
            c.stats[k] = GameStats(
                winner=winner if winner >= 0 else None, truncated=bool(res.truncated[lane]),
                deals=int(c.lane_deals[lane]), played=int(c.lane_played[lane]),
                thrown_in=int(c.lane_thrown[lane]),
                final_scores=(int(res.scores[lane, 0]), int(res.scores[lane, 1])),
                **{f: c.lane[f][lane].tolist() for f in _Counts.FIELDS},
                captures={name: c.lane_captures[lane, p].tolist() for p, name in enumerate(POINT_NAMES)},
            )
            if finished is not None:
                g = k & 1
                rec = finished[i]
                rec["players"] = [names[g], names[1 - g], names[g], names[1 - g]]
                rec["seed"] = seed
                rec["duplicate"] = {"pair": first_pair + (k >> 1), "game": g, "team_a_seats": [g, g + 2]}
                recs[k] = rec
            pair = k >> 1
            pair_done[pair] += 1
            if pair_done[pair] == 2:
                source.release(pair)
                if on_pair is not None:
                    on_pair(first_pair + pair)
        while emit is not None and emitted[0] < n_pairs and pair_done[emitted[0]] == 2:
            p = emitted[0]
            emitted[0] += 1
            emit(([c.stats[2 * p], c.stats[2 * p + 1]],  # type: ignore[list-item]
                  [recs[2 * p], recs[2 * p + 1]] if records else None))
        for f in _Counts.FIELDS:
            c.lane[f][done] = 0
        c.lane_captures[done] = 0
        c.lane_deals[done] = c.lane_played[done] = c.lane_thrown[done] = 0

    options = TableOptions(max_cycles=None, max_hands=max_hands)
    try:
        table = BatchedTable(n, [a, b], [0, 1, 0, 1], rules, options, seed=0, deals=source, record=records,
                             agent_rngs=rngs, on_new_games=on_new_games, on_step=on_step)
        with blas_threads(threads):
            table.run_agents()
    except Exception as e:  # keep the records of the games finished, in order, up to the first missing
        done = 2 * emitted[0] if emit is not None else 0  # games already passed to emit
        e.finished_records = [recs[k] for k in sorted(recs) if k >= done]  # type: ignore[attr-defined]
        raise
    finally:
        if own:
            for p in (a, b):
                p.close()
    stats = counts.stats
    assert all(s is not None for s in stats)
    pairs = [[stats[2 * p], stats[2 * p + 1]] for p in range(n_pairs)]
    return pairs, ([recs[k] for k in range(n_games)] if records else None)  # type: ignore[misc]


# ---------------------------------------------------------------------------- worker processes
_ARGS: tuple[Any, ...] | None = None


def _worker_init(*args: Any) -> None:
    global _ARGS
    ignore_sigint()  # Ctrl-C is the parent's to handle
    _ARGS = args


def _worker_run(block: tuple[int, int]) -> tuple[list[list[GameStats]], list[dict[str, Any]] | None]:
    assert _ARGS is not None
    team_a, team_b, rules, seed, max_hands, records, lanes = _ARGS
    return play_pairs(team_a, team_b, SmearRules.from_dict(rules), seed, max_hands, block[0], block[1],
                      records, lanes)


def blocks(n_pairs: int, workers: int, lanes: int = DEFAULT_LANES) -> list[tuple[int, int]]:
    """Contiguous ``(first_pair, n_pairs)`` blocks for ``workers`` processes: two per worker when each
    block still fills its table (``8 * lanes`` games, :func:`play_pairs`' lane count), so a slow block does
    not leave a core idle for long; else one per worker (a table of more lanes costs less per game:
    default-heuristic measured 386 games per CPU second at 1,024 lanes, 341 at 625)."""
    k = workers * (2 if n_pairs >= 8 * lanes * workers else 1)
    k = max(1, min(k, n_pairs))
    edges = np.linspace(0, n_pairs, k + 1).round().astype(int).tolist()
    return [(edges[i], edges[i + 1] - edges[i]) for i in range(k) if edges[i + 1] > edges[i]]


def run_pairs(
    team_a: Any,
    team_b: Any,
    rules: SmearRules,
    seed: int,
    max_hands: int,
    n_pairs: int,
    records: bool,
    workers: int = 1,
    lanes: int = DEFAULT_LANES,
    progress: Callable[[int], None] | None = None,
) -> Any:
    """Yield ``(stats of a pair's two games, its records or None)`` for pairs 0..n_pairs - 1 in order (as
    the reference scheduler's pair runs), playing blocks of pairs on batched tables in ``workers``
    processes (``workers == 1``: in this process)."""
    if workers <= 1:
        def on_pair(_p: int) -> None:
            if progress is not None:
                progress(2)

        stats, recs = play_pairs(team_a, team_b, rules, seed, max_hands, 0, n_pairs, records, lanes, on_pair)
        for p in range(n_pairs):
            yield stats[p], (recs[2 * p: 2 * p + 2] if recs is not None else None)
        return
    parts = blocks(n_pairs, workers, lanes)
    # The processes are the parallelism: one BLAS thread each (a checkpoint's batched forward pass with
    # threads that spin against the other workers was measured 5-8x slower on 2 shared cores).
    pool = start_pool(lambda: worker_pool(min(workers, len(parts)), initializer=_worker_init, initargs=(
        team_a, team_b, rules.to_dict(), seed, max_hands, records, lanes)))
    with pool:
        for stats, recs in pool.imap(_worker_run, parts):  # ordered: deterministic
            for p in range(len(stats)):
                if progress is not None:
                    progress(2)
                yield stats[p], (recs[2 * p: 2 * p + 2] if recs is not None else None)
