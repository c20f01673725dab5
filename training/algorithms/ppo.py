"""Native PyTorch PPO on the table layer: ``n_envs`` tables stepped in lock-step in one process
(:class:`smear_env.table.Lockstep`), every decision of every seat the learner plays batched through one
forward pass.

Why not only the single-seat env: here the learner collects the experience of *all* seats it plays (four
in pure self-play, its two in games against a pool opponent), with no Gymnasium/VecEnv overhead, so it
gets several times more decisions per second and per game (see checkpoints/README.md for measurements).

Episodes and rewards are the table's (:mod:`smear_env.table`): with ``env.episode="hand"`` each seat's
decisions of one scored hand form an episode whose only reward arrives at the hand's end
(``env.reward="score"``: own team's score change minus the other team's in raw points, times
``env.score_scale``); the game carries on to its target so every score situation is visited. With
``"game"`` the returns run over the whole game (plus ``env.win_bonus``, or ``reward="win"``).

Trajectories still open when a rollout is full carry over to the next rollout (their stored log-probs
keep the PPO ratio exact), so no value bootstrapping across cut episodes is needed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from smear_env.actions import NUM_ACTIONS, PASS_ACTION, TRUMP_ACTION_BASE
from smear_env.observation import OBS_SIZE
from smear_env.table import NEXT_HAND, Lockstep, Step, Table, TableOptions

from ..config import TrainConfig
from ..policy import SmearPolicy
from ..selfplay import SELF, SNAPSHOT, OpponentPool
from .resume_state import restore_trainer_state, trainer_state

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


class PPOTrainer:
    """Rollout collection + PPO updates. ``step`` counts learner decisions trained on."""

    name = "ppo"

    def __init__(self, cfg: TrainConfig, rng: np.random.Generator) -> None:
        self.cfg = cfg
        self.rng = rng
        self.rules = cfg.rules
        a = cfg.algorithm
        self.policy = SmearPolicy(cfg.network.hidden_sizes, cfg.network.activation,
                                  suit_canonical=cfg.network.suit_canonical)
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=a.learning_rate, eps=1e-5)
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
        for i, s in enumerate(self.slots):
            self._new_game(i, s)

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
        cfg = self.cfg
        a = cfg.algorithm
        target = a.n_steps * cfg.n_envs
        self._stats = {}
        batch = self.collect(target)
        n = len(batch["act"])
        frac = min(1.0, self.step / cfg.total_timesteps)
        lr = a.learning_rate * (1.0 - frac) if a.anneal_lr else a.learning_rate
        lr = max(lr, a.learning_rate * 0.05)
        for g in self.optimizer.param_groups:
            g["lr"] = lr
        ent_coef = a.ent_coef
        if a.ent_coef_final is not None:
            ent_coef += (a.ent_coef_final - a.ent_coef) * frac
        t = {k: torch.from_numpy(v) for k, v in batch.items()}
        self.policy.train()
        pg_l, v_l, ent_l, kl_l, clip_l = [], [], [], [], []
        stop = False
        for _epoch in range(a.n_epochs):
            perm = torch.from_numpy(self.rng.permutation(n))
            for start in range(0, n, a.batch_size):
                idx = perm[start:start + a.batch_size]
                logits, value = self.policy(t["obs"][idx], t["mask"][idx])
                logp_all = torch.log_softmax(logits, dim=-1)
                logp = logp_all.gather(1, t["act"][idx, None]).squeeze(1)
                entropy = -(logp_all.exp() * logp_all).sum(-1).mean()
                ratio = torch.exp(logp - t["logp"][idx])
                adv = t["adv"][idx]
                if a.norm_adv and len(idx) > 1:
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg = torch.max(-adv * ratio, -adv * ratio.clamp(1 - a.clip_range, 1 + a.clip_range)).mean()
                vloss = 0.5 * ((value - t["ret"][idx]) ** 2).mean()
                loss = pg + a.vf_coef * vloss - ent_coef * entropy
                self.optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.policy.parameters(), a.max_grad_norm)
                self.optimizer.step()
                with torch.no_grad():
                    lr_ = logp - t["logp"][idx]
                    kl = ((torch.exp(lr_) - 1) - lr_).mean().item()
                pg_l.append(pg.item())
                v_l.append(vloss.item())
                ent_l.append(entropy.item())
                kl_l.append(kl)
                clip_l.append(((ratio - 1).abs() > a.clip_range).float().mean().item())
                if a.target_kl is not None and kl > a.target_kl:
                    stop = True
                    break
            if stop:
                break
        self.step += n
        self.updates += 1
        ret = batch["ret"]
        var = float(np.var(ret))
        ev = float("nan") if var == 0 else 1.0 - float(np.var(ret - batch["val"])) / var
        st = self._stats
        out = {
            "loss/policy": float(np.mean(pg_l)), "loss/value": float(np.mean(v_l)),
            "loss/entropy": float(np.mean(ent_l)), "loss/approx_kl": float(np.mean(kl_l)),
            "loss/clip_fraction": float(np.mean(clip_l)), "loss/explained_variance": ev,
            "train/learning_rate": lr, "train/ent_coef": ent_coef, "train/batch": n,
            "bids/bid_rate": st.get("bid_rate", 0.0), "bids/avg_bid": st.get("avg_bid", 0.0),
        }
        if st.get("contracts"):
            out["bids/contract_success"] = st["made"] / st["contracts"]
            out["bids/avg_contract"] = st["contract_sum"] / st["contracts"]
        if st.get("score_diff_n"):
            out["train/score_diff_per_hand"] = st["score_diff_sum"] / st["score_diff_n"]
        for k in list(st):
            if k.startswith("win_") and not k.endswith("_n") and st.get(k + "_n"):
                out[f"train/{k}"] = st[k] / st[k + "_n"]
        return out

    # ------------------------------------------------------------------ snapshots / state
    def add_snapshot(self) -> None:
        self.pool.add_snapshot(self.step, self.policy)

    def warm_start_policy(self) -> SmearPolicy:
        return self.policy

    def after_warm_start(self) -> None:
        pass

    def eval_policy(self) -> SmearPolicy:
        return self.policy

    def policy_state(self) -> dict[str, torch.Tensor]:
        return dict(self.policy.state_dict())

    def state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """(tensors, JSON-able metadata) of everything needed to resume."""
        return trainer_state(self.optimizer, self.pool, self.rng, self.updates)

    def load_state(self, policy_sd: dict[str, torch.Tensor], tensors: dict[str, torch.Tensor],
                   meta: dict[str, Any], step: int) -> None:
        self.policy.load_state_dict(policy_sd)
        self.updates = restore_trainer_state(self.optimizer, self.pool, self.rng, self.cfg, tensors, meta)
        self.step = int(step)
        for i, s in enumerate(self.slots):  # games in flight are not saved: start fresh ones
            self._new_game(i, s)


assert OBS_SIZE > 0 and NUM_ACTIONS == 72
