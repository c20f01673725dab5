"""Native PyTorch PPO on the table layer: ``n_envs`` tables stepped in lock-step in one process
(:class:`smear_env.tables.table.Lockstep`), every decision of every seat the learner plays batched through one
forward pass.

Why not only the single-seat env: here the learner collects the experience of *all* seats it plays (four
in pure self-play, its two in games against a pool opponent), with no Gymnasium/VecEnv overhead, so it
gets several times more decisions per second and per game (see checkpoints/README.md for measurements).

Episodes and rewards are the table's (:mod:`smear_env.tables.table`): with ``env.episode="hand"`` each seat's
decisions of one scored hand form an episode whose only reward arrives at the hand's end
(``env.reward="score"``: own team's score change minus the other team's in raw points, times
``env.score_scale``); the game carries on to its target so every score situation is visited. With
``"game"`` the returns run over the whole game (plus ``env.win_bonus``, or ``reward="win"``).

Trajectories still open when a rollout is full carry over to the next rollout (their stored log-probs
keep the PPO ratio exact), so no value bootstrapping across cut episodes is needed. The update is the shared
component :class:`~training.algorithms.ppo_update.PPOUpdate`; the ``algorithm:`` keys are
:class:`~training.configs.ppo.PPOConfig`'s.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from smear_env.core.actions import NUM_ACTIONS, PASS_ACTION, TRUMP_ACTION_BASE
from smear_env.engine.observation import OBS_SIZE
from smear_env.tables.table import NEXT_HAND, Lockstep, Step, Table, TableOptions

from ..config import TrainConfig
from ..policy import SmearPolicy
from ..selfplay import SELF, SNAPSHOT, OpponentPool
from .ppo_update import PPOUpdate, ppo_iteration
from .resume_state import OwnPolicyTrainer

LEARNER = -1  # controller code of a learner seat; >= 0 is a snapshot index; an Agent object otherwise


class _Traj:
    __slots__ = ("obs", "mask", "act", "logp", "val", "rew")

    def __init__(self) -> None:
        self.obs: list[np.ndarray] = []
        self.mask: list[np.ndarray] = []
        self.act: list[int] = []
        self.logp: list[float] = []
        self.val: list[float] = []
        self.rew: list[float] = []


class _Slot:
    __slots__ = ("table", "ctrl", "trajs", "kind")

    def __init__(self, table: Table) -> None:
        self.table = table
        self.ctrl: list[Any] = [LEARNER] * 4  # changed in place: the Lockstep's seating of this table
        self.trajs: dict[int, _Traj] = {}
        self.kind = SELF


class PPOTrainer(OwnPolicyTrainer):
    """Rollout collection on lock-step tables + the PPO update component. ``step`` counts learner decisions
    trained on."""

    name = "ppo"

    def __init__(self, cfg: TrainConfig, rng: np.random.Generator) -> None:
        self.cfg = cfg
        self.rng = rng
        self.rules = cfg.rules
        self.policy = SmearPolicy(cfg.network.hidden_sizes, cfg.network.activation,
                                  suit_canonical=cfg.network.suit_canonical)
        self.update = PPOUpdate(self.policy, cfg.algorithm, cfg.total_timesteps, rng)
        self.optimizer = self.update.optimizer
        self.pool = OpponentPool(cfg.selfplay.opponents, cfg.selfplay.pool_size, cfg.rules, rng)
        self.step = 0
        self.updates = 0
        self._agents: dict[tuple[int, int, str], Any] = {}
        env = cfg.env
        shaping = ({"score_scale": env.score_scale, "win_bonus": env.win_bonus} if env.reward == "score"
                   else {})
        options = TableOptions(episode=env.episode, reward=env.reward, max_cycles=env.max_cycles, **shaping)
        self.slots = [_Slot(Table(self.rules, options)) for _ in range(cfg.n_envs)]
        self.lock = Lockstep([s.table for s in self.slots], [s.ctrl for s in self.slots], self._on_step)
        self._ready: list[dict[str, np.ndarray]] = []
        self._ready_n = 0
        self._stats: dict[str, float] = {}
        self.restart_games()

    # ------------------------------------------------------------------ games
    def _new_game(self, i: int, slot: _Slot) -> None:
        slot.table.new_game(int(self.rng.integers(2**63)))
        slot.trajs = {}
        kind, k = self.pool.draw()
        slot.kind = kind
        slot.ctrl[:] = [LEARNER] * 4
        if kind != SELF:
            team = int(self.rng.integers(2))
            for seat in (1 - team, 3 - team):
                if kind == SNAPSHOT:
                    slot.ctrl[seat] = k
                else:
                    key = (i, seat, kind)
                    if key not in self._agents:
                        self._agents[key] = self.pool.new_agent(kind)
                    agent = self._agents[key]
                    agent.start_game(seat, self.rules, np.random.default_rng(int(self.rng.integers(2**63))))
                    slot.ctrl[seat] = agent
        for seat in range(4):
            if slot.ctrl[seat] is LEARNER:
                slot.trajs[seat] = _Traj()

    def _finish(self, traj: _Traj) -> None:
        n = len(traj.act)
        if n == 0:
            return
        a = self.cfg.algorithm
        val = np.asarray(traj.val, dtype=np.float32)
        rew = np.asarray(traj.rew, dtype=np.float32)
        adv = np.zeros(n, dtype=np.float32)
        last = 0.0
        for t in range(n - 1, -1, -1):
            nv = val[t + 1] if t + 1 < n else 0.0
            delta = rew[t] + a.gamma * nv - val[t]
            last = delta + a.gamma * a.gae_lambda * last
            adv[t] = last
        self._ready.append({
            "obs": np.stack(traj.obs), "mask": np.stack(traj.mask).astype(bool),
            "act": np.asarray(traj.act, dtype=np.int64), "logp": np.asarray(traj.logp, dtype=np.float32),
            "val": val, "adv": adv, "ret": adv + val,
        })
        self._ready_n += n

    def _end_episodes(self, slot: _Slot) -> None:
        for seat, traj in slot.trajs.items():
            self._finish(traj)
            slot.trajs[seat] = _Traj()

    def _on_step(self, i: int, st: Step) -> None:
        """After every step of table ``i``: rewards into the learner's trajectories, statistics, episode
        ends, and what starts next (the next hand of the game, or a new game)."""
        if st.hand is None and not st.done:
            return
        slot = self.slots[i]
        env = self.cfg.env
        hand = st.hand
        stats = self._stats
        if hand is not None and hand.scored:
            if slot.ctrl[hand.bidder] is LEARNER:
                stats["contracts"] = stats.get("contracts", 0) + 1
                stats["made"] = stats.get("made", 0) + int(hand.result["made_contract"])
                stats["contract_sum"] = stats.get("contract_sum", 0) + hand.contract
            stats["hands"] = stats.get("hands", 0) + 1
            if env.reward == "score":  # the table's shaped reward: scale and win bonus included
                for seat, traj in slot.trajs.items():
                    if traj.rew:
                        traj.rew[-1] += st.rewards[seat]
            if slot.kind != SELF:
                lt = slot.ctrl.index(LEARNER) & 1
                stats["score_diff_sum"] = stats.get("score_diff_sum", 0.0) + hand.margin(lt)
                stats["score_diff_n"] = stats.get("score_diff_n", 0) + 1
        over = hand is not None and hand.game_over
        if over and env.episode == "game" and env.reward == "win":
            for seat, traj in slot.trajs.items():
                if traj.rew:
                    traj.rew[-1] += st.rewards[seat]  # the table's +-1 to the game's winners
        if over and slot.kind != SELF:
            key = f"win_{slot.kind}"
            stats[key] = stats.get(key, 0) + int(hand.winner == slot.ctrl.index(LEARNER) & 1)
            stats[key + "_n"] = stats.get(key + "_n", 0) + 1
        if st.done:
            self._end_episodes(slot)
            if st.next == NEXT_HAND:
                slot.table.next_episode()
            else:
                self._new_game(i, slot)

    # ------------------------------------------------------------------ rollout
    def collect(self, target: int) -> dict[str, np.ndarray]:
        policy = self.policy
        policy.eval()
        bids = passes = bid_sum = 0
        lock = self.lock
        while self._ready_n < target:
            pending = lock.pending()  # baseline agents act; every table then waits on a network
            order = ([LEARNER] if LEARNER in pending else []) + [k for k in pending if k != LEARNER]
            moves: list[tuple[list[int], np.ndarray]] = []
            for key in order:
                idx = pending[key]
                obs, mask = lock.observations(idx)
                if key is not LEARNER:
                    act, _, _ = self.pool.snapshots[key][1].act(obs, mask, self.rng)
                    moves.append((idx, act))
                    continue
                act, logp, val = policy.act(obs, mask, self.rng)
                for j, i in enumerate(idx):
                    tr = self.slots[i].trajs[self.slots[i].table.to_act]
                    a = int(act[j])
                    tr.obs.append(obs[j])
                    tr.mask.append(mask[j])
                    tr.act.append(a)
                    tr.logp.append(float(logp[j]))
                    tr.val.append(float(val[j]))
                    tr.rew.append(0.0)
                    if a < TRUMP_ACTION_BASE:
                        if a == PASS_ACTION:
                            passes += 1
                        else:
                            bids += 1
                            bid_sum += a + 1
                moves.append((idx, act))
            for idx, act in moves:
                lock.apply(idx, act)
        batch = {k: np.concatenate([d[k] for d in self._ready]) for k in self._ready[0]}
        self._ready = []
        self._ready_n = 0
        st = self._stats
        st["bid_rate"] = bids / max(1, bids + passes)
        st["avg_bid"] = bid_sum / max(1, bids)
        return batch

    # ------------------------------------------------------------------ update
    def iterate(self) -> dict[str, float]:
        return ppo_iteration(self)

    # ------------------------------------------------------------------ state
    def restart_games(self) -> None:
        for i, s in enumerate(self.slots):
            self._new_game(i, s)


assert OBS_SIZE > 0 and NUM_ACTIONS == 72
