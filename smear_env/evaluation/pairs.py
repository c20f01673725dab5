"""The games of a duplicate pair, shared by every way a match is run (this process, local worker processes,
Ray tasks, the batched engine): the deal sequence of a pair (:class:`DealSequence`), the agents' generators
(:func:`agent_rng`), one game on a table (:func:`play_table`) and the pair runner with the worker-process
functions (:func:`pair_worker_init` / :func:`pair_worker_run`) that :mod:`smear_env.evaluation.duplicate` and
:mod:`smear_env.evaluation.ray_backend` hand to their workers. See :mod:`smear_env.evaluation.duplicate` for
the duplicate format."""

from __future__ import annotations

import hashlib
import os
import signal
from collections.abc import Callable, Sequence
from multiprocessing import util
from typing import Any

import numpy as np

from ..agents.base import Agent
from ..agents.protocol import close_agents
from ..agents.registry import make_agent
from ..agents.supervisor import close_all
from ..core.config import SmearRules
from ..core.rules import shuffled_deal
from ..core.seeding import check_seed
from ..engine.game import NUM_PLAYERS
from ..tables.table import Table, TableOptions, play, start_agents
from .results import GameStats, game_stats
from .worker_signals import ignore_sigint, resend_until_exit

_TAG_DEAL, _TAG_DEALER = 1, 2

TeamSpec = str | Callable[[], Agent]


# ---------------------------------------------------------------------------- deals
class DealSequence:
    """The deals of one duplicate pair: first dealer and deal ``i`` from ``(seed, pair)`` only."""

    def __init__(self, seed: int, pair: int) -> None:
        self.seed = check_seed(seed, allow_none=False)
        self.pair = check_seed(pair, "pair", allow_none=False)
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, _TAG_DEALER, self.pair]))
        self.first_dealer = int(rng.integers(NUM_PLAYERS))  # R4: uniformly at random
        self._cache: dict[int, tuple[list[list[int]], list[int]]] = {}

    def deal(self, i: int) -> tuple[list[list[int]], list[int]]:
        """``(hands, stock)`` of hand ``i`` (R5: 6 cards to each seat, 8 to the stock)."""
        if i not in self._cache:
            rng = np.random.default_rng(np.random.SeedSequence([self.seed, _TAG_DEAL, self.pair, i]))
            self._cache[i] = shuffled_deal(rng)
        return self._cache[i]


def agent_rng(seed: int, pair: int, game: int, seat: int) -> np.random.Generator:
    """The generator an agent gets in ``start_game`` for game ``game`` (0/1) of pair ``pair``, seat ``seat``.

    Its seed sequence holds only a SHA-256 digest of those numbers, never ``[seed, pair, ...]`` itself, so
    an agent cannot read from it the key of :class:`DealSequence` (issue: the generator must not be a key
    to the deals)."""
    key = hashlib.sha256(f"smear-eval/agent/{seed}/{pair}/{game}/{seat}".encode()).digest()
    return np.random.default_rng(np.random.SeedSequence(int.from_bytes(key[:16], "little")))


# ---------------------------------------------------------------------------- one game
def play_table(
    agents: Sequence[Agent],
    rules: SmearRules,
    deals: DealSequence,
    max_hands: int,
    rngs: Sequence[np.random.Generator],
) -> Table:
    """Play one game of ``deals`` on a :class:`~smear_env.tables.table.Table` (truncated after ``max_hands``
    deals); returns the table (its ``game``, ``truncated``)."""
    start_agents(agents, rules, rngs)
    table = Table(rules, TableOptions(max_cycles=None, max_hands=max_hands))
    table.new_game(deals=deals)
    play(table, agents)
    return table


# ---------------------------------------------------------------------------- duplicate pairs
def _build(spec: TeamSpec, rules: SmearRules) -> Agent:
    if isinstance(spec, str):
        return make_agent(spec, rules)
    if callable(spec):
        return spec()
    raise TypeError(f"a team is an agent spec string or a zero-argument agent factory, not {spec!r}")


class PairRunner:
    """Two agent instances per team (one per seat), reused across games."""

    def __init__(self, team_a: TeamSpec, team_b: TeamSpec, rules: SmearRules, seed: int, max_hands: int,
                 records: bool) -> None:
        self.a = [_build(team_a, rules), _build(team_a, rules)]
        self.b = [_build(team_b, rules), _build(team_b, rules)]
        self.rules = rules
        self.seed = seed
        self.max_hands = max_hands
        self.records = records

    def run(self, pair: int) -> tuple[list[GameStats], list[dict[str, Any]] | None]:
        deals = DealSequence(self.seed, pair)
        a, b = self.a, self.b
        seatings = ([a[0], b[0], a[1], b[1]], [b[0], a[0], b[1], a[1]])  # A in 0/2, then A in 1/3
        stats, recs = [], []
        for g, agents in enumerate(seatings):
            rngs = [agent_rng(self.seed, pair, g, s) for s in range(NUM_PLAYERS)]
            try:
                table = play_table(agents, self.rules, deals, self.max_hands, rngs)
            except Exception as e:  # e.g. a protocol bot failed: keep the records of the games finished
                e.finished_records = recs  # type: ignore[attr-defined]
                raise
            game, truncated = table.require_game(), table.truncated
            stats.append(game_stats(game, truncated))
            if self.records:
                rec = game.to_record(players=[x.name for x in agents], truncated=truncated)
                rec["seed"] = self.seed
                rec["duplicate"] = {"pair": pair, "game": g, "team_a_seats": [g, g + 2]}
                recs.append(rec)
        return stats, (recs if self.records else None)

    def close(self) -> None:
        """Close the agents that hold resources (protocol bots: ``quit``, a short grace, then their process
        groups are killed; all at once)."""

        close_agents(self.a + self.b)


_WORKER: PairRunner | None = None


def _close_worker() -> None:
    """Close the worker's bots at its normal exit. SIGTERM (``Pool.terminate()`` reaches a worker that is
    already ending) waits until the bots are closed, instead of starting a second close inside the first."""
    if _WORKER is None:
        return
    masks = hasattr(signal, "pthread_sigmask")
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM}) if masks else set()
    try:
        _WORKER.close()
    finally:
        if masks:  # at a normal exit, a SIGTERM that came meanwhile runs its handler now: nothing left, exit
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def _worker_sigterm(signum: int, frame: Any) -> None:
    """``Pool.terminate()`` ends the workers with SIGTERM, which skips finalizers: close the bots first.
    SIGTERM stays blocked from here to the exit: it is sent again until the worker has ended
    (:func:`resend_until_exit`), and a handler run inside this one would start the closing over."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        _close_worker()
        close_all()  # also the bots whose closing this signal interrupted
    finally:
        os._exit(0)


def pair_pool_init(*args: Any) -> None:
    """Initializer of a local worker process: :func:`pair_worker_init`, and the worker's agents closed however
    it ends (its normal exit runs ``multiprocessing`` finalizers; ``terminate()`` sends SIGTERM)."""

    pair_worker_init(*args)
    util.Finalize(None, _close_worker, exitpriority=100)
    signal.signal(signal.SIGTERM, _worker_sigterm)
    resend_until_exit(signal.SIGTERM)  # the handler runs even if the signal came as the worker blocked


def pair_worker_init(team_a: TeamSpec, team_b: TeamSpec, rules: dict[str, Any], seed: int, max_hands: int,
                 records: bool) -> None:
    global _WORKER
    ignore_sigint()  # Ctrl-C is the parent's to handle (one message, no traceback per worker)
    _WORKER = PairRunner(team_a, team_b, SmearRules.from_dict(rules), seed, max_hands, records)


def pair_worker_run(pair: int) -> tuple[list[GameStats], list[dict[str, Any]] | None]:
    assert _WORKER is not None
    return _WORKER.run(pair)
