"""Deep Monte-Carlo (DouZero-style) on the batched table: Q(s, a) regressed on Monte-Carlo returns.

Actors: ``n_envs`` lanes of a :class:`~smear_env.tables.batched_table.BatchedTable` stepped together; every
learner seat of every lane decides in one forward pass of the Q-network, epsilon-greedy
(``algorithm.epsilon``: a uniformly random legal action with that probability, else the legal action of
highest Q; ``algorithm.bid_epsilon``, when set, is that probability at bid decisions). The opponent team
of each game is drawn from ``selfplay.opponents``: ``self`` (the learner in all four seats: every seat's
decisions are training data) or any agent spec of :func:`smear_env.agents.batched.make_batched_agent`
(``heuristic``, ``random``, a checkpoint or shipped agent, ``passer``: vectorised; ``pimc`` and ``cmd:`` bots
row by row), run by the table itself in both seats of the other team. (No ``snapshot``: dmc keeps no pool of
its past selves.) ``smear-exploit --algorithm dmc`` trains a best response this way.

Targets: the return of a decision is the sum of the rewards its seat earns from that decision to the end of
its episode (no discount, no bootstrapping), in the table's meaning of ``env``
(:mod:`smear_env.tables.table`): with ``episode: hand`` / ``reward: score`` the hand's point difference for
the seat's team times ``env.score_scale``; with ``episode: game`` the score differences of the rest of the
game plus ``env.win_bonus`` times the +-1 outcome. A decision's episode must end before it is trained on (open
episodes stay in the buffer, across rollouts); a truncated episode (R21) is dropped.

Learning: each ``iterate()`` collects ``n_steps * n_envs`` finished learner decisions, then ``n_epochs``
passes of minibatches (``batch_size``) of mean-squared error between Q(s, a) of the action taken and its
return (Adam, ``learning_rate``, gradient norm clipped at ``max_grad_norm``).

The network is :class:`~training.policy.SmearPolicy`'s policy MLP (``pi_body`` + ``pi_head``, suit-canonical
when ``network.suit_canonical``); its 72 outputs are the Q-values, saved as the checkpoint's logits. So a
``dmc`` checkpoint is an ordinary smear-rl checkpoint: every player of checkpoints (``smear-eval``, the
batched agents) plays argmax Q over the legal actions (greedy) with no new network kind (a sampling
player would treat Q-values as logits, which is not a policy that DMC learnt).
"""

from __future__ import annotations

import numpy as np
import torch

from smear_env.agents.registry import make_batched_agent
from smear_env.core.actions import NUM_ACTIONS, PASS_ACTION, TRUMP_ACTION_BASE
from smear_env.engine.observation import OBS_SIZE
from smear_env.engine.vector import random_actions
from smear_env.tables.batched_table import LEARNER as LEARNER_KEY
from smear_env.tables.batched_table import BatchedStep, BatchedTable
from smear_env.tables.table import TableOptions

from ..config import ConfigError, TrainConfig
from ..policy import SmearPolicy
from ..selfplay import SELF, OpponentPool
from .decision_stats import TypeMeans, batch_stats, contract_scalars, decision_type, q_spread, tally_contracts
from .resume_state import OwnPolicyTrainer
from .seating import seat_opponent_teams

LEARNER = 0  # the learner's player index at the table; the opponents follow, in the pool's order
MAX_HANDS = 200


class DMCTrainer(OwnPolicyTrainer):
    """Deep Monte-Carlo trainer (see the module docstring). ``step`` counts learner decisions trained on.
    What it can seat and that it has no warm start are declared by its config class
    (:class:`~training.configs.dmc.DMCConfig`) and checked by config validation."""

    name = "dmc"

    def __init__(self, cfg: TrainConfig, rng: np.random.Generator) -> None:  # noqa: D107
        self.cfg = cfg
        self.rng = rng
        self.rules = cfg.rules
        net = cfg.network
        self.policy = SmearPolicy(net.hidden_sizes, net.activation, shared_trunk=True,
                                  suit_canonical=net.suit_canonical)
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=cfg.algorithm.learning_rate)
        self.pool = OpponentPool(cfg.selfplay.opponents, cfg.selfplay.pool_size, cfg.rules, rng)
        # table players: the learner, then one batched agent per opponent spec the pool can draw; _codes maps
        # the pool's entries to them (self-play and probability-0 entries to the learner: never drawn)
        self.opponent_specs = [k for k, p in zip(self.pool.names, self.pool.probs, strict=True)
                               if k != SELF and p > 0]
        self._codes = np.array([1 + self.opponent_specs.index(k) if k in self.opponent_specs else LEARNER
                                for k in self.pool.names], dtype=np.int64)
        self.step = 0
        self.updates = 0
        self.collect_stats: dict[str, float] = {}  # the figures of the last collect's games
        self._start_table()

    # ------------------------------------------------------------------ actors
    def _start_table(self) -> None:
        cfg, n = self.cfg, self.cfg.n_envs
        env = cfg.env
        opts = TableOptions(episode=env.episode, reward=env.reward, max_cycles=env.max_cycles,
                            max_hands=MAX_HANDS, score_scale=env.score_scale, win_bonus=env.win_bonus)
        self.lane_kind = np.zeros(n, dtype=np.int64)
        self.learner_team = np.zeros(n, dtype=np.int64)
        players = [LEARNER_KEY, *(make_batched_agent(k, self.rules) for k in self.opponent_specs)]
        self.table = BatchedTable(n, players, np.zeros(4, dtype=np.int64), self.rules, opts,
                                  seed=int(self.rng.integers(2**62)), on_new_games=self._seat_games,
                                  on_step=self._on_step)
        self._contracts: dict[str, int] = {}
        self.cum = np.zeros((n, 4), dtype=np.float64)  # rewards of each seat in the lane's open episode
        cap = self.cfg.algorithm.n_steps * n + 64 * n
        self.buf = {k: np.zeros((cap, *s), dtype=d) for k, s, d in (
            ("obs", (OBS_SIZE,), np.float32), ("mask", (NUM_ACTIONS,), bool), ("act", (), np.int64),
            ("lane", (), np.int64), ("seat", (), np.int64), ("ep", (), np.int64), ("base", (), np.float64),
            ("ret", (), np.float64))}
        self.ep_of = np.arange(n, dtype=np.int64)  # episode id of each lane's open episode
        self._next_ep = n
        self.n = 0  # entries in the buffer
        self.open_idx = np.zeros(0, dtype=np.int64)  # entries whose episode is still running
        self.obs, self.mask, info = self.table.reset()
        self.seat = info["seat"]

    def _seat_games(self, table: BatchedTable, lanes: np.ndarray) -> None:
        k = len(lanes)
        kinds = self._codes[self.rng.choice(len(self._codes), size=k, p=self.pool.probs)]
        team = seat_opponent_teams(table, lanes, kinds, self.rng)
        self.lane_kind[lanes] = kinds
        self.learner_team[lanes] = team

    def _on_step(self, table: BatchedTable, st: BatchedStep) -> None:
        """Contracts won by learner seats in the hands scored in this step (``bids/*`` scalars)."""
        scored = np.flatnonzero(st.result.hand_over)
        if scored.size:
            tally_contracts(self._contracts, table, scored)

    @torch.no_grad()
    def q_values(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(B, 72) Q-values, illegal actions at -1e9."""
        return self.policy.logits(torch.from_numpy(obs), torch.from_numpy(mask)).numpy()

    def act(self, obs: np.ndarray, mask: np.ndarray, epsilon: float,
            bid_epsilon: float | None = None) -> np.ndarray:
        """Epsilon-greedy actions for (B, 493) / (B, 72); ``bid_epsilon`` (None: ``epsilon``) at bid decisions
        (a bid decision is one whose legal actions are bids)."""
        a = np.argmax(self.q_values(obs, mask), axis=1)
        if bid_epsilon is not None and bid_epsilon != epsilon:
            p = np.where(mask[:, :TRUMP_ACTION_BASE].any(axis=1), bid_epsilon, epsilon)
        else:
            p = epsilon
        if np.any(p > 0):
            explore = self.rng.random(len(a)) < p
            if explore.any():
                a[explore] = random_actions(mask[explore], self.rng)
        return a

    def _store(self, **rows: np.ndarray) -> None:
        b, k = self.buf, len(rows["act"])
        if self.n + k > len(b["act"]):  # grow
            for key, arr in b.items():
                b[key] = np.concatenate([arr, np.zeros_like(arr)])
        idx = np.arange(self.n, self.n + k)
        for key, v in rows.items():
            b[key][idx] = v
        self.open_idx = np.concatenate([self.open_idx, idx])
        self.n += k

    def collect(self, target: int) -> dict[str, np.ndarray]:
        """Play until ``target`` learner decisions have finished episodes; returns them (``obs``, ``mask``,
        ``act``, ``ret``; ``lane``, ``seat`` and ``ep``, the episode id, for diagnostics) and keeps the open
        ones."""
        st: dict[str, int] = {}
        lanes = np.arange(self.cfg.n_envs)
        done_n = 0
        eps, bid_eps = self.cfg.algorithm.epsilon, self.cfg.algorithm.bid_epsilon
        bids = np.zeros(4, dtype=np.int64)
        self._contracts = {}
        b = self.buf
        while done_n < target:
            obs, mask, seat = self.obs, self.mask, self.seat
            a = self.act(obs, mask, eps, bid_eps)
            bids += np.bincount(a[a < TRUMP_ACTION_BASE], minlength=4)[:4]
            self._store(obs=obs, mask=mask, act=a, lane=lanes, seat=seat, ep=self.ep_of,
                        base=self.cum[lanes, seat], ret=np.full(len(a), np.nan))
            b = self.buf
            kind, team = self.lane_kind.copy(), self.learner_team.copy()  # of the games being played
            self.obs, self.mask, rew, term, trunc, info = self.table.step(a)
            self.seat = info["seat"]
            self.cum += rew
            ended = term | trunc
            if not ended.any():
                continue
            oi = self.open_idx
            li = b["lane"][oi]
            close = ended[li]
            ci, li = oi[close], li[close]
            ret = self.cum[li, b["seat"][ci]] - b["base"][ci]
            ret[trunc[li]] = np.inf  # truncated (R21): dropped
            b["ret"][ci] = ret
            done_n += int(np.isfinite(ret).sum())
            self.open_idx = oi[~close]
            self.cum[ended] = 0.0
            k = int(ended.sum())
            self.ep_of[ended] = self._next_ep + np.arange(k)
            self._next_ep += k
            over = np.flatnonzero(info["game_over"])
            for code, name in enumerate(self.opponent_specs, start=1):
                sel = over[kind[over] == code]
                if sel.size:
                    won = int((info["winner"][sel] == team[sel]).sum())
                    st[f"win_{name}"] = st.get(f"win_{name}", 0) + won
                    st[f"win_{name}_n"] = st.get(f"win_{name}_n", 0) + int(sel.size)
        n = self.n
        fin = np.ones(n, dtype=bool)
        fin[self.open_idx] = False
        good = fin & np.isfinite(b["ret"][:n])
        batch = {k: b[k][:n][good] for k in ("obs", "mask", "act", "ret", "lane", "seat", "ep")}
        keep = self.open_idx  # increasing: entries are appended in order
        for key in b:
            b[key][: len(keep)] = b[key][keep]
        self.open_idx = np.arange(len(keep), dtype=np.int64)
        self.n = len(keep)
        n_bids = max(1, int(bids.sum()))
        self.collect_stats = {f"train/bid_share_{name}": float(bids[i] / n_bids)
                       for i, name in enumerate(("pass", "2", "3", "4"))}
        self.collect_stats.update(contract_scalars(self._contracts))
        for name in self.opponent_specs:
            if st.get(f"win_{name}_n"):
                self.collect_stats[f"train/win_rate_vs_{name}"] = st[f"win_{name}"] / st[f"win_{name}_n"]
        return batch

    # ------------------------------------------------------------------ learning
    def iterate(self) -> dict[str, float]:
        batch = self.collect(self.cfg.algorithm.n_steps * self.cfg.n_envs)
        return self.learn(batch, self.collect_stats)

    def learn(self, batch: dict[str, np.ndarray], collect_stats: dict[str, float]) -> dict[str, float]:
        """One update on ``batch`` (what :meth:`collect` returns); its scalars, ``collect_stats`` (the actors'
        figures of the batch: :attr:`collect_stats`) among them."""
        cfg, a = self.cfg, self.cfg.algorithm
        n = len(batch["act"])
        lr = a.lr_at(self.step, cfg.total_timesteps)
        for g in self.optimizer.param_groups:
            g["lr"] = lr
        obs = torch.from_numpy(batch["obs"])
        mask = torch.from_numpy(batch["mask"])
        act = torch.from_numpy(batch["act"])
        ret = torch.from_numpy(batch["ret"].astype(np.float32))
        self.policy.train()
        losses = []
        types = decision_type(batch["act"])
        per_type = TypeMeans()  # per-decision-type Q error and spread (detached; see decision_stats)
        for _ in range(a.n_epochs):
            perm = torch.from_numpy(self.rng.permutation(n))
            for s in range(0, n, a.batch_size):
                idx = perm[s: s + a.batch_size]
                q_all = self.policy.logits(obs[idx], mask[idx])
                q = q_all.gather(1, act[idx, None]).squeeze(1)
                err = (q - ret[idx]) ** 2
                loss = torch.mean(err)
                ti = types[idx.numpy()]
                per_type.add("value_error", ti, err)
                per_type.add("adv_scale", ti, q_spread(q_all, mask[idx]))
                self.optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.policy.parameters(), a.max_grad_norm)
                self.optimizer.step()
                losses.append(loss.item())
        self.policy.eval()
        self.step += n
        self.updates += 1
        is_bid = batch["act"] < TRUMP_ACTION_BASE
        out = {"loss/q_mse": float(np.mean(losses)), "train/return_mean": float(batch["ret"].mean()),
               "train/return_var": float(batch["ret"].var()), "train/lr": lr,
               "train/pass_return": float(batch["ret"][batch["act"] == PASS_ACTION].mean())
               if (batch["act"] == PASS_ACTION).any() else 0.0,
               "train/bid_decisions": float(is_bid.sum())}
        out.update(collect_stats)
        out.update(batch_stats(batch["act"], batch["mask"], batch["ret"]))
        out.update(per_type.result())
        return out

    # ------------------------------------------------------------------ protocol (the rest: OwnPolicyTrainer)
    def add_snapshot(self) -> None:
        """dmc keeps no snapshot pool (its opponents are itself and fixed agents): nothing to do."""

    def warm_start_policy(self) -> SmearPolicy:
        raise ConfigError("algorithm 'dmc' has no imitation warm start (set imitation.teacher: null)")

    def restart_games(self) -> None:
        self._start_table()
