"""The batched table: the table layer (:mod:`smear_env.tables.table`) for N games on the batched engine
(:class:`smear_env.engine.vector.VectorGame`).

It means what :class:`~smear_env.tables.table.Table` means -- the same
:class:`~smear_env.tables.table.TableOptions` (``episode``, ``reward``, ``max_cycles``, ``max_hands``,
``score_scale``, ``win_bonus``), rewards from the same :func:`~smear_env.tables.table.shaped_team_rewards`,
truncation from the same
:func:`~smear_env.tables.table.hands_exhausted` / :func:`~smear_env.tables.table.cycles_exhausted` -- for
every lane (one game per lane) at once, with no Python loop over lanes on the hot path.

Seats and players
-----------------
``players`` is a list; entry ``p`` is either a *batched agent* (an object with ``start_game(slot, seat,
rules, rng)`` and ``act_batch(obs, mask, slots)``: :mod:`smear_env.agents.batched`), which the table
runs itself, or a *learner key* (any ``str``, e.g. :data:`LEARNER`), whose decisions come from the caller.
``seating`` ``(N, 4)`` (or ``(4,)`` for every lane) holds the player index of each seat of each lane;
a row of ``-1`` makes a lane idle (it is never advanced; its rows of every output are meaningless).
A fixed agent's *slot* for a lane and seat is ``4 * lane + seat``; at each new game of a lane the table
calls ``start_game(slot, seat, rules, rng)`` for each of its fixed seats, ``rng = agent_rngs(lane, game,
seat)`` (default ``numpy.random.default_rng([seed, lane, game, seat])``, ``game`` =
``VectorGame.game_index``). ``on_new_games(table, lanes)`` (optional) runs first for lanes whose new game
starts (and for all lanes at construction and ``reset``); it may change ``table.seating[lanes]``
(another opponent per game, or ``-1``: no more games in that lane).

Learner API (what a vector env builds on)
-----------------------------------------
Every active lane must seat at least one learner. The table runs the fixed agents itself until in every
lane a learner is to act, so one seat or one team can learn against fixed opponents (all four seats
learners: self-play, one engine step per call).

``reset(seed=None) -> (obs, mask, info)``
    new games in every lane (``seed``: a new engine seeded so; default: the next games of the current
    one), played up to the first learner decision of each lane.
``step(actions) -> (obs, mask, rewards, terminated, truncated, info)``
    ``actions`` ``(N,)``: the action of the learner to act in each lane. Applies them, then the fixed
    agents' decisions until a learner is to act again in every lane.

``obs`` ``(N, 493)`` float32 and ``mask`` ``(N, 72)`` bool are the observation and legal actions of the
learner seat to act in each lane (``info["seat"]`` which seat, ``info["player"]`` which player index).
``rewards`` ``(N, 4)`` float32 are each seat's rewards earned during the call (all four seats; a
single-seat learner reads its own column: ``rewards[arange(N), seat_of_learner]``). ``terminated`` /
``truncated`` ``(N,)`` bool: the lane's episode ended during the call (a lane's episode is that of all its
seats; with a learner in the lane at most one episode ends per call). **Autoreset is immediate**: after
an episode ends the lane's next episode has begun (the next hand of the same game with ``episode="hand"``,
else a new game), and ``obs`` is already its first learner observation; the state at the end of the
finished episode is never observed (the engine deals at once). ``info`` also holds ``"game_over"``,
``"winner"`` (team, -1 none), ``"final_scores"`` ``(N, 2)`` of a game that ended during the call, and
``"episode_steps"`` (decisions of all seats in the episode before it ended or so far).

Low-level API (evaluation, custom loops)
----------------------------------------
``player_to_act()`` (N,) player index of the seat to act (-1 idle); ``observe(seats=None)``,
``legal_mask()`` as the engine's; ``apply(lanes, actions) -> BatchedStep`` takes one decision in
``lanes`` (increasing lane indices; ``None``: all); ``run_agents(accumulate=None)`` plays the fixed agents
until every active lane waits on a learner or is idle (with no learner anywhere: until every lane is
idle, so an ``on_new_games`` that idles lanes ends it). ``on_step(table, step)`` (optional) sees every
:class:`BatchedStep` before the games that ended in it are replaced. ``records()``: with ``record=True``,
the finished games as ``smear-record/1`` dicts (``VectorGame.records``).

Deals come from the engine's hash of ``seed`` or from ``deals`` (a
:class:`~smear_env.engine.vector.VectorDealSource`, e.g. the duplicate evaluator's deal sequences).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.actions import NUM_ACTIONS
from ..core.config import SmearRules
from ..core.seeding import check_seed
from ..engine.observation import OBS_SIZE
from ..engine.vector import MAX_HANDS_LIMIT, SEAT_SIGN, StepResult, VectorDealSource, VectorGame
from .table import TableOptions, cycles_exhausted, shaped_team_rewards

__all__ = ["LEARNER", "BatchedStep", "BatchedTable"]

LEARNER = "learner"


@dataclass
class BatchedStep:
    """What one :meth:`BatchedTable.apply` did (N rows; rows of lanes not stepped are 0 / False)."""

    lanes: np.ndarray
    """The lanes stepped."""
    result: StepResult
    """The engine's step (hand ends, scores, winner; ``result.scores`` are the final scores of a game that
    ended)."""
    rewards: np.ndarray
    """(N, 4) float32 per seat, in the table's options
    (:func:`~smear_env.tables.table.shaped_team_rewards`)."""
    terminated: np.ndarray
    """(N,) bool: the episode ended naturally (game over, or a scored hand with ``episode="hand"``)."""
    truncated: np.ndarray
    """(N,) bool: the game was cut off (R21: ``max_cycles`` or ``max_hands``) and the episode with it."""
    new_game: np.ndarray
    """(N,) bool: the lane's game ended (over or cut off) and its next game starts after this step."""
    episode_steps: np.ndarray
    """(N,) int64: decisions in each lane's episode, this one included."""


class _Totals:
    """Rewards and episode flags summed over the steps of one learner-API call."""

    def __init__(self, n: int) -> None:
        self.rewards = np.zeros((n, 4), dtype=np.float32)
        self.terminated = np.zeros(n, dtype=bool)
        self.truncated = np.zeros(n, dtype=bool)
        self.game_over = np.zeros(n, dtype=bool)
        self.winner = np.full(n, -1, dtype=np.int64)
        self.final_scores = np.zeros((n, 2), dtype=np.int64)
        self.episode_steps = np.zeros(n, dtype=np.int64)

    def add(self, st: BatchedStep) -> None:
        self.rewards += st.rewards
        self.terminated |= st.terminated
        self.truncated |= st.truncated
        ended = st.terminated | st.truncated
        self.episode_steps[ended] = st.episode_steps[ended]
        over = np.flatnonzero(st.new_game)
        if over.size:
            self.game_over[over] |= st.result.game_over[over]
            self.winner[over] = st.result.winner[over]
            self.final_scores[over] = st.result.scores[over]


class BatchedTable:
    """N games on the batched engine with the table layer's meaning (see the module docstring)."""

    def __init__(
        self,
        num_lanes: int,
        players: Sequence[Any],
        seating: Any,
        rules: SmearRules | None = None,
        options: TableOptions | None = None,
        seed: int = 0,
        *,
        deals: VectorDealSource | None = None,
        record: bool = False,
        agent_rngs: Callable[[int, int, int], np.random.Generator] | None = None,
        on_new_games: Callable[[BatchedTable, np.ndarray], None] | None = None,
        on_step: Callable[[BatchedTable, BatchedStep], None] | None = None,
    ) -> None:
        self.rules = rules if rules is not None else SmearRules()
        self.options = options if options is not None else TableOptions()
        if not isinstance(self.options, TableOptions):
            raise TypeError(f"options must be a TableOptions, not {type(self.options).__name__}")
        self.players = list(players)
        if not self.players:
            raise ValueError("players must name at least one agent or learner key")
        for i, p in enumerate(self.players):
            if not isinstance(p, str) and not callable(getattr(p, "act_batch", None)):
                raise TypeError(f"players[{i}] = {p!r} is neither a learner key (str) nor a batched agent "
                                "(with act_batch)")
        self.is_learner = np.array([isinstance(p, str) for p in self.players] + [False], dtype=bool)
        # index -1 (an idle lane) reads the extra False entry
        self.seed = check_seed(seed, allow_none=False)
        self._deals = deals
        self._record = bool(record)
        self._agent_rngs = agent_rngs
        self.on_new_games = on_new_games
        self.on_step = on_step
        self.num_lanes = int(num_lanes)
        self.vg = self._engine(self.seed)
        n = self.num_lanes
        self._ar = np.arange(n, dtype=np.int64)
        self.seating = np.zeros((n, 4), dtype=np.int64)
        self.set_seating(self._ar, seating)
        self.game_steps = np.zeros(n, dtype=np.int64)
        """Decisions (all seats) in each lane's current game (R21 ``max_cycles``)."""
        self.episode_steps = np.zeros(n, dtype=np.int64)
        self._games_started(self._ar)
        self._fresh = True  # no decision taken since the games were dealt

    # ------------------------------------------------------------------ set-up
    def _engine(self, seed: int) -> VectorGame:
        mh = self.options.max_hands
        return VectorGame(self.num_lanes, self.rules, seed=seed, record=self._record,
                          max_hands=MAX_HANDS_LIMIT - 1 if mh is None else mh, deals=self._deals)

    def set_seating(self, lanes: np.ndarray, seating: Any) -> None:
        """Seat ``seating`` ((4,) or (len(lanes), 4) player indices, or rows of -1: idle) in ``lanes``; takes
        effect at once (call it between games: from ``on_new_games``)."""
        rows = np.asarray(seating)
        if rows.dtype.kind not in "iu" or rows.shape not in ((4,), (len(lanes), 4)):
            raise ValueError(f"seating must be integer player indices of shape (4,) or ({len(lanes)}, 4), "
                             f"got {seating!r}")
        rows = np.broadcast_to(rows, (len(lanes), 4)).astype(np.int64)
        idle = (rows == -1).all(axis=1)
        bad = ~idle[:, None] & ((rows < 0) | (rows >= len(self.players)))
        if bad.any():
            raise ValueError(f"seating: player index {int(rows[bad][0])} is not one of "
                             f"0..{len(self.players) - 1} (or a row of -1 for an idle lane)")
        self.seating[lanes] = rows

    @property
    def active(self) -> np.ndarray:
        """(N,) bool: lanes that are not idle."""
        return self.seating[:, 0] >= 0

    def _games_started(self, lanes: np.ndarray) -> None:
        """New games begin in ``lanes``: the caller's hook, then start_game for the fixed seats."""
        if self.on_new_games is not None:
            self.on_new_games(self, lanes)
        self.game_steps[lanes] = 0
        vg = self.vg
        for lane in lanes.tolist():
            row = self.seating[lane]
            if row[0] < 0:
                continue
            game = int(vg.game_index[lane])
            for seat in range(4):
                p = self.players[row[seat]]
                if isinstance(p, str):
                    continue
                if self._agent_rngs is not None:
                    rng = self._agent_rngs(lane, game, seat)
                else:
                    rng = np.random.default_rng([self.seed, lane, game, seat])
                p.start_game(4 * lane + seat, seat, self.rules, rng)

    # ------------------------------------------------------------------ queries
    def player_to_act(self) -> np.ndarray:
        """(N,) the player index of the seat to act in each lane (-1 where idle)."""
        return self.seating[self._ar, self.vg.to_act]

    @property
    def to_act(self) -> np.ndarray:
        return self.vg.to_act

    def observe(self, seats: np.ndarray | None = None) -> np.ndarray:
        return self.vg.observe(seats)

    def legal_mask(self) -> np.ndarray:
        return self.vg.legal_mask()

    def records(self) -> list[dict[str, Any]]:
        return self.vg.records()

    # ------------------------------------------------------------------ stepping
    def apply(self, lanes: np.ndarray | None, actions: Any) -> BatchedStep:
        """One decision in ``lanes`` (``None``: every lane) and everything it ends: rewards, episode ends,
        R21 cut-offs, next games (see the module docstring)."""
        vg, opts = self.vg, self.options
        res = vg.step(actions, lanes)
        self._fresh = False
        n = self.num_lanes
        idx = self._ar if lanes is None else np.asarray(lanes, dtype=np.int64)
        self.game_steps[idx] += 1
        self.episode_steps[idx] += 1
        rewards = np.zeros((n, 4), dtype=np.float32)
        terminated = np.zeros(n, dtype=bool)
        scored = np.flatnonzero(res.hand_over)
        if scored.size:
            over = res.game_over[scored]
            term = over | (opts.episode == "hand")
            terminated[scored] = term
            margin = res.score_delta[scored, 0] - res.score_delta[scored, 1]
            team0 = shaped_team_rewards(margin, False, res.winner[scored], term, opts)
            rewards[scored] = team0.astype(np.float32)[:, None] * SEAT_SIGN
        engine_new = res.game_over | res.truncated
        cut = np.zeros(n, dtype=bool)
        if opts.max_cycles is not None:
            cut[idx] = cycles_exhausted(self.game_steps[idx], opts.max_cycles)
        truncated = ~terminated & (res.truncated | cut)
        forced = cut & ~engine_new
        new_game = engine_new | forced
        st = BatchedStep(lanes=idx, result=res, rewards=rewards, terminated=terminated, truncated=truncated,
                         new_game=new_game, episode_steps=self.episode_steps.copy())
        if self.on_step is not None:
            self.on_step(self, st)
        ended = np.flatnonzero(terminated | truncated)
        if ended.size:
            self.episode_steps[ended] = 0
        fl = np.flatnonzero(forced)
        if fl.size:
            vg.new_games(fl)
        started = np.flatnonzero(new_game)
        if started.size:
            self._games_started(started)
        return st

    def run_agents(self, accumulate: _Totals | None = None) -> int:
        """Play the fixed agents until every active lane waits on a learner (or is idle); returns the engine
        steps taken. With no learner seated anywhere this plays until every lane is idle."""
        vg = self.vg
        n = self.num_lanes
        steps = 0
        while True:
            who = self.player_to_act()
            fixed = (who >= 0) & ~self.is_learner[who]
            lanes = np.flatnonzero(fixed)
            if not lanes.size:
                return steps
            all_lanes = lanes.size == n
            slots = (lanes << 2) + vg.to_act[lanes]
            wl = who[lanes]
            actions = np.empty(lanes.size, dtype=np.int64)
            # agents with act_packed get the observation bits and legal bits, the others float rows and masks
            acting = [(p, self.players[p]) for p in np.unique(wl).tolist()]
            packed = [getattr(agent, "act_packed", None) for _, agent in acting]
            obs = mask = words = legal = None
            if not all(packed):
                if any(packed):  # both forms from one pass
                    words, obs = vg.observe_both()
                else:
                    obs = vg.observe()
                mask = vg.legal_mask()
                if not all_lanes:
                    obs, mask = obs[lanes], mask[lanes]
            elif any(packed):
                words = vg.observe_words()
            if words is not None:
                bits, base = vg.legal_bits()
                legal = (bits, base) if all_lanes else (bits[lanes], base[lanes])
                if not all_lanes:
                    words = words[lanes]
            for (p, agent), act_packed in zip(acting, packed, strict=True):
                rows = np.flatnonzero(wl == p) if len(self.players) > 1 else slice(None)
                if act_packed is not None:
                    actions[rows] = act_packed(words[rows], legal[0][rows], legal[1][rows], slots[rows])
                else:
                    actions[rows] = agent.act_batch(obs[rows], mask[rows], slots[rows])
            st = self.apply(None if all_lanes else lanes, actions)
            steps += 1
            if accumulate is not None:
                accumulate.add(st)

    # ------------------------------------------------------------------ learner API
    def _check_learners(self) -> None:
        active = self.active
        has = self.is_learner[self.seating].any(axis=1)
        if (active & ~has).any():
            lane = int(np.flatnonzero(active & ~has)[0])
            raise ValueError(f"lane {lane} seats no learner (players {self.seating[lane].tolist()}); the "
                             "learner API needs a learner in every active lane (use run_agents() otherwise)")

    def _learner_view(self, totals: _Totals) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        vg = self.vg
        info = {
            "seat": vg.to_act.copy(), "player": self.player_to_act(), "game_over": totals.game_over,
            "winner": totals.winner, "final_scores": totals.final_scores,
            "episode_steps": np.where(totals.terminated | totals.truncated, totals.episode_steps,
                                      self.episode_steps),
        }
        return vg.observe(), vg.legal_mask(), info

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        """New games in every lane (a new engine when ``seed`` is given), played to the first learner
        decision; returns ``(obs, mask, info)`` (see the module docstring)."""
        if seed is not None:
            self.seed = check_seed(seed, allow_none=False)
            self.vg = self._engine(self.seed)
            self._games_started(self._ar)
        elif not self._fresh:
            self.vg.new_games(self._ar)
            self._games_started(self._ar)
        self._fresh = False
        self.episode_steps[:] = 0
        self._check_learners()
        totals = _Totals(self.num_lanes)
        self.run_agents(totals)
        return self._learner_view(totals)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                          dict[str, Any]]:
        """The learners' ``actions`` (N,) then the fixed agents' until a learner is to act in every lane;
        returns ``(obs, mask, rewards, terminated, truncated, info)`` (see the module docstring)."""
        self._check_learners()
        who = self.player_to_act()
        if not self.is_learner[who].all():
            lane = int(np.flatnonzero(~self.is_learner[who])[0])
            raise RuntimeError(f"lane {lane} is not waiting on a learner: call reset() first")
        totals = _Totals(self.num_lanes)
        totals.add(self.apply(None, actions))
        self.run_agents(totals)
        obs, mask, info = self._learner_view(totals)
        return obs, mask, totals.rewards, totals.terminated, totals.truncated, info


assert OBS_SIZE == 493 and NUM_ACTIONS == 72  # the shapes the module docstring names
