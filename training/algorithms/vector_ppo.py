"""PPO self-play on the batched engine (:class:`smear_env.vector.VectorGame`): ``n_envs`` games held as
arrays and stepped together, with no Python loop over games on the hot path.

Each engine step takes one decision in every lane. The seats of a lane are played by the learner (the
current policy), a frozen snapshot of it, the heuristic or the batched random agent; all the learner's
decisions of all lanes go through one forward pass, and the snapshot seats through one pass per snapshot
in play (a rollout starts the snapshot games it deals against one snapshot drawn from the pool, so usually
one). Opponent team per game (``selfplay.opponents``): ``"self"`` (the learner in all four seats),
``"snapshot"``, ``"heuristic"`` or ``"random"``; the partner is always the learner. The heuristic plays
from each seat's own observation row, turned back into its view by
:func:`smear_env.observation.decode_batch` (~25 µs a decision) plus the agent's own ~20 µs, with no
reference game per lane; other per-game agents (pimc, checkpoints, bots) are not offered here (the
in-training evaluation plays any of them).

Rewards, in the table layer's scale: a hand's ``reward_score`` is the raw point difference (own team's
score change minus the other team's), multiplied by ``env.score_scale``; a game's ``reward_win`` is +-1.
``env.episode`` / ``env.reward`` choose the return (the same meanings as native ``ppo``):

* ``hand`` + ``score``: each scored hand is an episode (a thrown-in hand's passes belong to the redealt
  hand's episode), rewarded with its scaled point difference;
* ``game`` + ``score``: the returns run over the whole game (hand differences) plus ``env.win_bonus``
  times the +-1 game outcome at the end (score shaping plus the win);
* ``game`` + ``win``: only the +-1 game outcome.

A game that reaches 200 hands without a winner is truncated (R21) and ends every episode with no win
reward.

Trajectory bookkeeping is numpy arrays indexed by (lane, seat): each stored decision links to the same
seat's next decision; a reward lands on the seat's last decision. Episodes still open when a rollout is
full: with ``hand`` episodes (a few decisions per seat) they carry over whole to the next rollout (their
stored log-probabilities keep the PPO ratio exact), as in native ``ppo``, so no bootstrapping is needed.
With ``game`` episodes most of a game's decisions would be open (about 100k over 256 games; carrying them
was measured about 10x slower), so the rollout is cut instead: each open seat's last decision is
bootstrapped with the value of that seat's current view (``VectorGame.observe(seats)``), and the seat's
next decision starts a new trajectory (rewards in between are left to that bootstrap value, as in any
truncated PPO rollout). The PPO update itself is native ``ppo``'s.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from smear_env.actions import PASS_ACTION, TRUMP_ACTION_BASE
from smear_env.agents.heuristic import HeuristicAgent
from smear_env.observation import OBS_SIZE, decode_batch
from smear_env.vector import VectorGame, random_actions

from ..config import TrainConfig, check_vector_opponents
from ..policy import SmearPolicy
from ..selfplay import SELF, SNAPSHOT, OpponentPool
from .ppo import PPOTrainer
from .resume_state import restore_trainer_state

LEARNER, RANDOM, SNAP, HEUR = 0, 1, 2, 3  # who plays a seat
KINDS = {SELF: LEARNER, SNAPSHOT: SNAP, "random": RANDOM, "heuristic": HEUR}
MAX_HANDS = 200
_BUFFER_KEYS = ("obs", "mask", "act", "logp", "val", "rew", "done", "nxt", "ep")


class VectorPPOTrainer(PPOTrainer):
    """Rollouts on :class:`VectorGame` + native PPO updates (inherited). ``step`` counts learner
    decisions trained on."""

    name = "vector_ppo"

    def __init__(self, cfg: TrainConfig, rng: np.random.Generator) -> None:  # noqa: D107
        check_vector_opponents(cfg)
        self.cfg = cfg
        self.rng = rng
        self.rules = cfg.rules
        a = cfg.algorithm
        net = cfg.network
        self.policy = SmearPolicy(net.hidden_sizes, net.activation, shared_trunk=net.shared_trunk,
                                  suit_canonical=net.suit_canonical)
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=a.learning_rate, eps=1e-5)
        self.pool = OpponentPool(cfg.selfplay.opponents, cfg.selfplay.pool_size, cfg.rules, rng)
        self._kind_codes = np.array([KINDS.get(k, LEARNER) for k in self.pool.names], dtype=np.int8)
        self._heuristic = HeuristicAgent(cfg.rules)  # stateless between decisions: one serves every lane
        self.step = 0
        self.updates = 0
        self._stats: dict[str, float] = {}
        self._start_engine()

    # ------------------------------------------------------------------ games and seats
    def _start_engine(self) -> None:
        n = self.cfg.n_envs
        self.vg = VectorGame(n, self.rules, seed=int(self.rng.integers(2**62)), max_hands=MAX_HANDS)
        self.ctrl = np.zeros((n, 4), dtype=np.int8)  # LEARNER / RANDOM / SNAP per seat
        self.lane_kind = np.zeros(n, dtype=np.int8)  # kind of the opponent team (LEARNER: pure self-play)
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
        self._seat_games(np.arange(n))

    def _seat_games(self, lanes: np.ndarray) -> None:
        """Draw who plays the new games of ``lanes`` (opponent team kind and side)."""
        k = len(lanes)
        if k == 0:
            return
        kinds = self._kind_codes[self.rng.choice(len(self._kind_codes), size=k, p=self.pool.probs)]
        if self._active is None:
            kinds = np.where(kinds == SNAP, LEARNER, kinds)  # no snapshot yet: self-play
        team = self.rng.integers(2, size=k)
        ctrl = np.zeros((k, 4), dtype=np.int8)
        rows = np.arange(k)
        ctrl[rows, 1 - team] = kinds
        ctrl[rows, 3 - team] = kinds
        self.ctrl[lanes] = ctrl
        self.lane_kind[lanes] = kinds
        self.learner_team[lanes] = team
        self.snap_step[lanes] = np.where(kinds == SNAP, -1 if self._active is None else self._active, -1)

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

    # ------------------------------------------------------------------ rollout
    def _store(self, lanes: np.ndarray, seats: np.ndarray, obs: np.ndarray, mask: np.ndarray,
               act: np.ndarray, logp: np.ndarray, val: np.ndarray) -> None:
        b, k = self.buf, len(lanes)
        if self.n + k > len(b["act"]):  # grow (long game episodes can hold many open decisions)
            for key in _BUFFER_KEYS:
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

    def collect(self, target: int) -> dict[str, np.ndarray]:
        vg, env, policy, rng = self.vg, self.cfg.env, self.policy, self.rng
        policy.eval()
        self._choose_snapshot()
        n_lanes = vg.num_games
        ar = np.arange(n_lanes)
        st = self._stats
        bids = passes = bid_sum = 0
        win_w = 1.0 if env.reward == "win" else env.win_bonus
        score_w = env.score_scale if env.reward == "score" else 0.0
        cut = env.episode == "game"  # rollouts are cut and bootstrapped instead of carrying episodes over
        while (self.n if cut else self.ready) < target:
            seat = vg.to_act
            who = self.ctrl[ar, seat]
            obs = vg.observe()
            mask = vg.legal_mask()
            actions = np.empty(n_lanes, dtype=np.int64)
            lrn = np.flatnonzero(who == LEARNER)
            if lrn.size:
                a, logp, val = policy.act(obs[lrn], mask[lrn], rng)
                self._store(lrn, seat[lrn], obs[lrn], mask[lrn], a, logp, val)
                actions[lrn] = a
                is_bid = a < TRUMP_ACTION_BASE
                n_pass = int((a == PASS_ACTION).sum())
                passes += n_pass
                bids += int(is_bid.sum()) - n_pass
                bid_sum += int((a[is_bid & (a != PASS_ACTION)] + 1).sum())
            rnd = np.flatnonzero(who == RANDOM)
            if rnd.size:
                actions[rnd] = random_actions(mask[rnd], rng)
            heu = np.flatnonzero(who == HEUR)
            if heu.size:
                choose = self._heuristic.act_view
                actions[heu] = [choose(v) for v in decode_batch(obs[heu], mask[heu])]
            snp = np.flatnonzero(who == SNAP)
            if snp.size:
                steps = self.snap_step[snp]
                for s in np.unique(steps).tolist():
                    rows = snp[steps == s]
                    actions[rows] = self._snaps[s].act(obs[rows], mask[rows], rng)[0]
            res = vg.step(actions)
            scored = np.flatnonzero(res.hand_over)
            if scored.size:
                if score_w:
                    self._reward(scored, res.reward_score[scored] * score_w)
                vs = scored[self.lane_kind[scored] != LEARNER]
                if vs.size:
                    t = self.learner_team[vs]
                    d = res.score_delta[vs, t] - res.score_delta[vs, 1 - t]
                    st["score_diff_sum"] = st.get("score_diff_sum", 0.0) + float(d.sum())
                    st["score_diff_n"] = st.get("score_diff_n", 0) + int(vs.size)
                st["hands"] = st.get("hands", 0) + int(scored.size)
            ended = res.game_over | res.truncated
            over = np.flatnonzero(res.game_over)
            if over.size and win_w and env.episode == "game":
                self._reward(over, res.reward_win[over] * win_w)
            if env.episode == "hand":  # a thrown-in hand is redealt within the episode (table layer)
                ep_end = np.flatnonzero(res.hand_over | ended)
            else:
                ep_end = np.flatnonzero(ended)
            if ep_end.size:
                self._end_episodes(ep_end)
            new = np.flatnonzero(ended)
            if new.size:
                for kind, name in ((RANDOM, "random"), (SNAP, SNAPSHOT), (HEUR, "heuristic")):
                    sel = over[self.lane_kind[over] == kind]
                    if sel.size:
                        won = res.winner[sel] == self.learner_team[sel]
                        st[f"win_{name}"] = st.get(f"win_{name}", 0) + int(won.sum())
                        st[f"win_{name}_n"] = st.get(f"win_{name}_n", 0) + int(sel.size)
                self._seat_games(new)
        st["bid_rate"] = bids / max(1, bids + passes)
        st["avg_bid"] = bid_sum / max(1, bids)
        return self._take_finished(cut)

    def _bootstrap_values(self) -> np.ndarray:
        """Per buffer entry: the value of the seat's current view for each open seat's last decision, else
        0."""
        boot = np.zeros(self.n, dtype=np.float32)
        lanes_all = self.vg.num_games
        with torch.no_grad():
            for s in range(4):
                lanes = np.flatnonzero(self.last[:, s] >= 0)
                if lanes.size:
                    obs = self.vg.observe(np.full(lanes_all, s, dtype=np.int64))[lanes]
                    boot[self.last[lanes, s]] = self.policy.value(torch.from_numpy(obs)).numpy()
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
        for key in _BUFFER_KEYS:
            b[key][: len(kept)] = b[key][kept]
        links = b["nxt"][: len(kept)]
        b["nxt"][: len(kept)] = np.where(links >= 0, new_index[np.maximum(links, 0)], -1)
        live = self.last >= 0
        self.last[live] = new_index[self.last[live]]
        self.n = len(kept)
        self.ready = 0
        return batch

    # ------------------------------------------------------------------ state
    def load_state(self, policy_sd: dict[str, torch.Tensor], tensors: dict[str, torch.Tensor],
                   meta: dict[str, Any], step: int) -> None:
        self.policy.load_state_dict(policy_sd)
        self.updates = restore_trainer_state(self.optimizer, self.pool, self.rng, self.cfg, tensors, meta)
        self.step = int(step)
        self._start_engine()  # games in flight are not saved: start fresh ones
