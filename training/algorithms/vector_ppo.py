"""PPO on the batched table (:class:`smear_env.tables.batched_table.BatchedTable`): ``n_envs`` games on the
batched engine stepped together, with no Python loop over games on the hot path.

The seats of a game are played by the learner (the current policy), by a frozen snapshot of it, or by any
agent spec of :func:`smear_env.agents.batched.make_batched_agent` (``random``, ``heuristic``, a checkpoint
or shipped agent, ``pimc``, a ``cmd:`` bot -- the last two row by row). The opponent team is drawn per game
from ``selfplay.opponents``: ``"self"`` (the learner in all four seats), ``"snapshot"`` (one of the pool's
frozen policies; a rollout starts the snapshot games it deals against one snapshot drawn from the pool) or a
spec; the partner is always the learner. The table runs the opponents itself until a learner is to act in
every game (:meth:`BatchedTable.step`); all the learner's decisions of all games go through one forward
pass, and the snapshot seats through one pass per snapshot in play.

Rewards and episodes are the table layer's (:mod:`smear_env.tables.table`, the same meanings as native
``ppo``): ``env.episode``, ``env.reward``, ``env.score_scale``, ``env.win_bonus`` and ``env.max_cycles`` (R21:
a game is truncated after this many decisions of all seats, which ends every episode in it with no win reward)
are the batched table's :class:`~smear_env.tables.table.TableOptions`; a step's per-seat rewards come from
:func:`~smear_env.tables.table.shaped_team_rewards`. So

* ``hand`` + ``score``: each scored hand is an episode (a thrown-in hand's passes belong to the redealt
  hand's episode), rewarded with its point difference times ``env.score_scale``;
* ``game`` + ``score``: the returns run over the whole game (scaled hand differences) plus
  ``env.win_bonus`` times the +-1 game outcome at the end (score shaping plus the win);
* ``game`` + ``win``: only the +-1 game outcome.

Trajectory bookkeeping is numpy arrays indexed by (lane, seat): each stored decision links to the same
seat's next decision; a reward lands on the seat's last decision. Episodes still open when a rollout is
full: with ``hand`` episodes (a few decisions per seat) they carry over whole to the next rollout (their
stored log-probabilities keep the PPO ratio exact), as in native ``ppo``, so no bootstrapping is needed.
With ``game`` episodes most of a game's decisions would be open (about 100k over 256 games; carrying them
was measured about 10x slower), so the rollout is cut instead: each open seat's last decision is
bootstrapped with the value of that seat's current view (``VectorGame.observe(seats)``), and the seat's
next decision starts a new trajectory (rewards in between are left to that bootstrap value, as in any
truncated PPO rollout). The PPO update itself is native ``ppo``'s: the shared component
:class:`~training.algorithms.ppo_update.PPOUpdate`; the ``algorithm:`` keys are
:class:`~training.configs.vector_ppo.VectorPPOConfig`'s.

With ``algorithm.overlap`` the rollout and the update run at the same time, on two cores: the update of
rollout k runs in a worker thread (torch releases the GIL in its kernels) while the main thread collects
rollout k + 1 with a copy of the policy (the *actor*) as it was before that update; after it the actor takes
the new weights and the next update starts. Every rollout is thus one update behind the learner, which the
stored log-probabilities make exact for the PPO ratio (an asynchronous actor-learner with a lag of one, as in
IMPALA or APPO, without their off-policy corrections: PPO's clipped ratio is one). The minibatch shuffles
then draw from a generator of their own (the rollout's and the update's draws would otherwise interleave by
timing), so the run is deterministic for a seed. What reads the learner -- checkpoints, evaluations,
snapshots -- first waits for the update in flight.
"""

from __future__ import annotations

import copy
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
import torch

from smear_env.agents.registry import make_batched_agent
from smear_env.core.actions import PASS_ACTION, TRUMP_ACTION_BASE
from smear_env.engine.observation import OBS_SIZE
from smear_env.engine.vector import VectorGame
from smear_env.tables.batched_table import LEARNER, BatchedStep, BatchedTable
from smear_env.tables.table import TableOptions

from ..config import TrainConfig
from ..policy import SmearPolicy
from ..selfplay import SELF, SNAPSHOT, OpponentPool
from .decision_stats import tally_contracts
from .ppo_update import PPOUpdate, ppo_iteration
from .resume_state import OwnPolicyTrainer
from .seating import seat_opponent_teams

SNAPSHOT_PLAYER = 1  # player index of the snapshot seats at the table (0: the learner)


class _Snapshots:
    """The pool's frozen policies as one batched agent: a row plays the snapshot its lane's game was dealt
    against (``trainer.snap_step``), sampled with the trainer's generator."""

    name = SNAPSHOT
    vectorised = True

    def __init__(self, trainer: VectorPPOTrainer) -> None:
        self.trainer = trainer

    def start_game(self, slot: int, seat: int, rules: Any, rng: np.random.Generator) -> None:
        pass

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, slots: np.ndarray) -> np.ndarray:
        tr = self.trainer
        steps = tr.snap_step[slots >> 2]
        out = np.empty(len(slots), dtype=np.int64)
        for s in np.unique(steps).tolist():
            rows = np.flatnonzero(steps == s)
            out[rows] = tr._snaps[s].act(obs[rows], mask[rows], tr.rng)[0]
        return out

    def close(self) -> None:
        pass


class VectorPPOTrainer(OwnPolicyTrainer):
    """Rollouts on the batched table + the PPO update component of native ``ppo``. ``step`` counts learner
    decisions trained on."""

    name = "vector_ppo"

    def __init__(self, cfg: TrainConfig, rng: np.random.Generator) -> None:  # noqa: D107
        self.cfg = cfg
        self.rng = rng
        self.rules = cfg.rules
        net = cfg.network
        self.policy = SmearPolicy(net.hidden_sizes, net.activation, shared_trunk=net.shared_trunk,
                                  suit_canonical=net.suit_canonical)
        self.update = PPOUpdate(self.policy, cfg.algorithm, cfg.total_timesteps, rng)
        self.optimizer = self.update.optimizer
        # algorithm.overlap: the update runs in a worker thread while the actor (a copy of the policy, one
        # update behind) collects; the update shuffles with a generator of its own (module docstring)
        self.overlap = bool(cfg.algorithm.overlap)
        self.actor: SmearPolicy | None = None  # made from the policy at the first rollout
        self._executor: ThreadPoolExecutor | None = None
        self._pending: Future[dict[str, float]] | None = None
        self._update_out: dict[str, float] = {}
        if self.overlap:
            self.update.rng = np.random.default_rng(int(rng.integers(2**63)))
        self.pool = OpponentPool(cfg.selfplay.opponents, cfg.selfplay.pool_size, cfg.rules, rng)
        # players at the table: 0 the learner, 1 the snapshots, then one batched agent per opponent spec
        self.players: list[Any] = [LEARNER, _Snapshots(self)]
        player_of = []
        for name, prob in zip(self.pool.names, self.pool.probs, strict=True):
            if name == SELF or prob == 0:  # (never drawn)
                player_of.append(0)
            elif name == SNAPSHOT:
                player_of.append(SNAPSHOT_PLAYER)
            else:
                self.players.append(make_batched_agent(name, cfg.rules))
                player_of.append(len(self.players) - 1)
        self._player_of = np.array(player_of, dtype=np.int64)
        env = cfg.env
        self.table_options = TableOptions(episode=env.episode, reward=env.reward, max_cycles=env.max_cycles,
                                          score_scale=env.score_scale, win_bonus=env.win_bonus)
        self.step = 0
        self.updates = 0
        self._stats: dict[str, float] = {}
        self._start_engine()

    # ------------------------------------------------------------------ games and seats
    @property
    def vg(self) -> VectorGame:
        """The batched engine under the table."""
        return self.table.vg

    def _start_engine(self) -> None:
        n = self.cfg.n_envs
        self.lane_opp = np.full(n, -1, dtype=np.int64)  # pool.names index of the opponents (-1: self-play)
        self.learner_team = np.zeros(n, dtype=np.int64)
        self.snap_step = np.full(n, -1, dtype=np.int64)  # pool step of the snapshot a lane plays
        self._snaps: dict[int, Any] = {}  # step -> frozen policy, for the snapshots lanes play
        self._active: int | None = None  # snapshot that newly dealt snapshot games play
        cap = self.cfg.algorithm.n_steps * n + 64 * n
        self.buf: dict[str, np.ndarray] = {
            "obs": np.zeros((cap, OBS_SIZE), np.float32), "mask": np.zeros((cap, 72), bool),
            "act": np.zeros(cap, np.int64), "logp": np.zeros(cap, np.float32),
            "val": np.zeros(cap, np.float32),
            "rew": np.zeros(cap, np.float32), "done": np.zeros(cap, bool), "nxt": np.full(cap, -1, np.int64),
            "ep": np.zeros(cap, np.int64),
        }
        self.n = 0  # entries in the buffer
        self.last = np.full((n, 4), -1, dtype=np.int64)  # buffer index of each seat's latest open decision
        self.ep_of = np.zeros((n, 4), dtype=np.int64)  # episode id of each seat's open episode
        self.chain = np.zeros((n, 4), dtype=np.int64)  # decisions in each seat's open episode
        self._next_ep = 0
        self.ready = 0  # entries of finished episodes
        self.table = BatchedTable(n, self.players, np.zeros(4, dtype=np.int64), self.rules,
                                  self.table_options, seed=int(self.rng.integers(2**62)),
                                  on_new_games=self._seat_games, on_step=self._on_step)
        self._obs, self._mask, info = self.table.reset()
        self._seat = info["seat"]

    def _seat_games(self, table: BatchedTable, lanes: np.ndarray) -> None:
        """Draw who plays the new games of ``lanes`` (opponent team and side) and seat them."""
        k = len(lanes)
        if k == 0:
            return
        opp = self.rng.choice(len(self.pool.names), size=k, p=self.pool.probs)
        player = self._player_of[opp]
        if self._active is None:
            player = np.where(player == SNAPSHOT_PLAYER, 0, player)  # no snapshot yet: self-play
        team = seat_opponent_teams(table, lanes, player, self.rng)
        self.lane_opp[lanes] = np.where(player == 0, -1, opp)
        self.learner_team[lanes] = team
        active = -1 if self._active is None else self._active
        self.snap_step[lanes] = np.where(player == SNAPSHOT_PLAYER, active, -1)

    def _choose_snapshot(self) -> None:
        snaps = self.pool.snapshots
        if snaps:
            step, pol = snaps[int(self.rng.integers(len(snaps)))]
            self._active = step
            self._snaps[step] = pol
        in_use = set(self.snap_step[self.snap_step >= 0].tolist())
        if self._active is not None:
            in_use.add(self._active)
        self._snaps = {s: p for s, p in self._snaps.items() if s in in_use}

    def _on_step(self, table: BatchedTable, st: BatchedStep) -> None:
        """Statistics of one engine step (before the games that ended in it are replaced)."""
        res, stats = st.result, self._stats
        scored = np.flatnonzero(res.hand_over)
        if scored.size:
            stats["hands"] = stats.get("hands", 0) + int(scored.size)
            tally_contracts(stats, table, scored)
            vs = scored[self.lane_opp[scored] >= 0]
            if vs.size:
                t = self.learner_team[vs]
                d = res.score_delta[vs, t] - res.score_delta[vs, 1 - t]
                stats["score_diff_sum"] = stats.get("score_diff_sum", 0.0) + float(d.sum())
                stats["score_diff_n"] = stats.get("score_diff_n", 0) + int(vs.size)
        over = np.flatnonzero(res.game_over)
        over = over[self.lane_opp[over] >= 0]
        if over.size:
            opp = self.lane_opp[over]
            won = res.winner[over] == self.learner_team[over]
            for o in np.unique(opp).tolist():
                sel = opp == o
                key = f"win_{self.pool.names[o]}"
                stats[key] = stats.get(key, 0) + int(won[sel].sum())
                stats[key + "_n"] = stats.get(key + "_n", 0) + int(sel.sum())

    # ------------------------------------------------------------------ rollout
    def _store(self, lanes: np.ndarray, seats: np.ndarray, obs: np.ndarray, mask: np.ndarray,
               act: np.ndarray, logp: np.ndarray, val: np.ndarray) -> None:
        b, k = self.buf, len(lanes)
        if self.n + k > len(b["act"]):  # grow (long game episodes can hold many open decisions)
            for key in b:
                arr = b[key]
                extra = np.full((len(arr), *arr.shape[1:]), -1 if key == "nxt" else 0, dtype=arr.dtype)
                b[key] = np.concatenate([arr, extra])
        idx = np.arange(self.n, self.n + k)
        b["obs"][idx] = obs
        b["mask"][idx] = mask
        b["act"][idx] = act
        b["logp"][idx] = logp
        b["val"][idx] = val
        b["rew"][idx] = 0.0
        b["done"][idx] = False
        b["nxt"][idx] = -1
        prev = self.last[lanes, seats]
        new_ep = prev < 0
        if new_ep.any():
            self.ep_of[lanes[new_ep], seats[new_ep]] = self._next_ep + np.arange(int(new_ep.sum()))
            self._next_ep += int(new_ep.sum())
        b["nxt"][prev[~new_ep]] = idx[~new_ep]
        b["ep"][idx] = self.ep_of[lanes, seats]
        self.last[lanes, seats] = idx
        self.chain[lanes, seats] += 1
        self.n += k

    def _end_episodes(self, lanes: np.ndarray) -> None:
        last = self.last[lanes]
        open_ = last >= 0
        self.buf["done"][last[open_]] = True
        self.ready += int(self.chain[lanes].sum())
        self.chain[lanes] = 0
        self.last[lanes] = -1

    def _reward(self, lanes: np.ndarray, r: np.ndarray) -> None:
        """Add ``r`` (k, 4) to the latest decision of each learner seat of ``lanes``."""
        last = self.last[lanes]
        ok = last >= 0
        np.add.at(self.buf["rew"], last[ok], r[ok])

    def acting_policy(self) -> SmearPolicy:
        """The policy that plays the learner's seats in rollouts: the learner, or with ``overlap`` its copy
        one update behind."""
        return self.policy if self.actor is None else self.actor  # (an actor exists only with overlap)

    def collect(self, target: int) -> dict[str, np.ndarray]:
        policy, rng = self.acting_policy(), self.rng
        policy.eval()
        self._choose_snapshot()
        ar = np.arange(self.cfg.n_envs)
        st = self._stats
        bids = passes = bid_sum = 0
        cut = self.cfg.env.episode == "game"  # rollouts are cut and bootstrapped instead of carried over
        while (self.n if cut else self.ready) < target:
            obs, mask, seat = self._obs, self._mask, self._seat
            a, logp, val = policy.act(obs, mask, rng)
            self._store(ar, seat, obs, mask, a, logp, val)
            is_bid = a < TRUMP_ACTION_BASE
            n_pass = int((a == PASS_ACTION).sum())
            passes += n_pass
            bids += int(is_bid.sum()) - n_pass
            bid_sum += int((a[is_bid & (a != PASS_ACTION)] + 1).sum())
            self._obs, self._mask, rewards, terminated, truncated, info = self.table.step(a)
            self._seat = info["seat"]
            self._reward(ar, rewards)  # the opponents' seats hold no open decision
            ended = np.flatnonzero(terminated | truncated)
            if ended.size:
                self._end_episodes(ended)
        st["bid_rate"] = bids / max(1, bids + passes)
        st["avg_bid"] = bid_sum / max(1, bids)
        return self._take_finished(cut)

    def _bootstrap_values(self) -> np.ndarray:
        """Per buffer entry: the value of the seat's current view for each open seat's last decision, else
        0."""
        boot = np.zeros(self.n, dtype=np.float32)
        lanes_all = self.cfg.n_envs
        with torch.no_grad():
            for s in range(4):
                lanes = np.flatnonzero(self.last[:, s] >= 0)
                if lanes.size:
                    obs = self.vg.observe(np.full(lanes_all, s, dtype=np.int64))[lanes]
                    boot[self.last[lanes, s]] = self.acting_policy().value(torch.from_numpy(obs)).numpy()
        return boot

    def _take_finished(self, cut: bool = False) -> dict[str, np.ndarray]:
        """The finished episodes' decisions with advantages and returns (GAE over each seat's chain of
        decisions); the open episodes stay in the buffer for the next rollout, or with ``cut`` are
        bootstrapped (see the module docstring) and taken too."""
        b, n = self.buf, self.n
        if cut:
            boot = self._bootstrap_values()
            keep = np.zeros(n, dtype=bool)
            self.last[:] = -1
            self.chain[:] = 0
        else:
            boot = np.zeros(n, dtype=np.float32)
            keep = np.isin(b["ep"][:n], self.ep_of[self.last >= 0])
        fin = np.flatnonzero(~keep)
        a = self.cfg.algorithm
        val, rew, nxt = b["val"][:n], b["rew"][:n], b["nxt"][:n]
        adv = np.zeros(n, dtype=np.float32)
        gl = a.gamma * a.gae_lambda
        nv = np.where(nxt >= 0, val[np.maximum(nxt, 0)], boot).astype(np.float32)
        delta = (rew + a.gamma * nv - val).tolist()
        nxt_l = nxt.tolist()
        adv_l = [0.0] * n
        for i in fin[::-1].tolist():  # a decision's successor always has a larger index
            j = nxt_l[i]
            adv_l[i] = delta[i] + (gl * adv_l[j] if j >= 0 else 0.0)
        adv[:] = adv_l
        batch = {
            "obs": b["obs"][fin], "mask": b["mask"][fin], "act": b["act"][fin], "logp": b["logp"][fin],
            "val": val[fin].copy(), "adv": adv[fin], "ret": adv[fin] + val[fin],
        }
        # compact: move the open episodes' decisions to the front and re-point their links
        kept = np.flatnonzero(keep)
        new_index = np.full(n, -1, dtype=np.int64)
        new_index[kept] = np.arange(len(kept))
        for key in b:
            b[key][: len(kept)] = b[key][kept]
        links = b["nxt"][: len(kept)]
        b["nxt"][: len(kept)] = np.where(links >= 0, new_index[np.maximum(links, 0)], -1)
        live = self.last >= 0
        self.last[live] = new_index[self.last[live]]
        self.n = len(kept)
        self.ready = 0
        return batch

    # ------------------------------------------------------------------ update and state
    def iterate(self) -> dict[str, float]:
        if not self.overlap:
            return ppo_iteration(self)
        if self.actor is None:
            self.actor = copy.deepcopy(self.policy)
        return ppo_iteration(self, update=self._submit_update)  # collects beside the update in flight

    def _submit_update(self, batch: dict[str, np.ndarray], step: int) -> dict[str, float]:
        """``overlap``: wait for the update in flight, copy the learner into the actor, start this batch's
        update in the worker thread; returns the finished update's scalars (none before the first)."""
        out = self.finish_update()
        self.actor.load_state_dict(self.policy.state_dict())
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ppo-update")
        self._pending = self._executor.submit(self._update_in_thread, batch, step)
        return out

    def _update_in_thread(self, batch: dict[str, np.ndarray], step: int) -> dict[str, float]:
        torch.set_num_threads(self.cfg.torch_threads)  # (per thread in torch)
        return self.update(batch, step)

    def finish_update(self) -> dict[str, float]:
        """Wait for the update in flight (``overlap``), if any; the scalars of the updates finished since
        the last call. An update's exception is raised here."""
        self._settled()
        out, self._update_out = self._update_out, {}
        return out

    def _settled(self) -> None:
        """Let the update in flight finish before the learner is read; its scalars go to the next
        ``iterate``."""
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self._update_out = pending.result()

    def add_snapshot(self) -> None:
        self._settled()
        super().add_snapshot()

    def eval_policy(self) -> SmearPolicy:
        self._settled()
        return super().eval_policy()

    def policy_state(self) -> dict[str, torch.Tensor]:
        self._settled()
        return super().policy_state()

    def state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """:meth:`OwnPolicyTrainer.state` plus, with ``overlap``, the actor's weights (``actor.*``) and the
        update's generator."""
        self._settled()
        tensors, meta = super().state()
        if self.overlap:
            meta["update_rng"] = self.update.rng.bit_generator.state
            if self.actor is not None:
                tensors.update({f"actor.{k}": v for k, v in self.actor.state_dict().items()})
        return tensors, meta

    def load_state(self, policy_sd: dict[str, torch.Tensor], tensors: dict[str, torch.Tensor],
                   meta: dict[str, Any], step: int) -> None:
        super().load_state(policy_sd, tensors, meta, step)
        if self.overlap:
            if "update_rng" in meta:
                self.update.rng.bit_generator.state = meta["update_rng"]
            actor = {k[len("actor."):]: v for k, v in tensors.items() if k.startswith("actor.")}
            self.actor = None  # (the next rollout copies the policy) unless the state has the actor
            if actor:
                self.actor = copy.deepcopy(self.policy)
                self.actor.load_state_dict(actor)

    def restart_games(self) -> None:
        self._start_engine()
