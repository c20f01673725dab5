"""sb3-contrib MaskablePPO on the single-seat Gymnasium view
(:class:`smear_env.gym.single_seat.SmearSingleSeatEnv`).

One learning seat per env. Its partner is a frozen copy of the current policy (refreshed every
``selfplay.partner_refresh_interval`` learner decisions); its two opponents are drawn per game from the
pool: ``"self"`` (the frozen current copy), ``"snapshot"`` (a frozen past policy) or a baseline agent spec.
All of that lives in :class:`PoolEnv`, a wrapper fed with plain numpy weights through ``env_method`` so it
works with DummyVecEnv and SubprocVecEnv alike. Episodes and rewards are the table's
(:mod:`smear_env.tables.table`, through the env): with ``env.episode="hand"`` each scored hand ends an episode
and SB3's automatic ``reset()`` deals the next hand of the same game; ``env.reward="score"`` rewards are the
raw score difference times ``env.score_scale`` (the native PPO's scale). The observation is scaled by
:func:`training.policy.obs_scale` in the wrapper, which is what :class:`~training.policy.SmearPolicy` does
internally, so the SB3 weights convert to a SmearPolicy checkpoint by renaming keys.

Checkpoints hold the policy in SmearPolicy naming plus the SB3 optimizer state (tensors) -- SB3's own
zip/pickle format is not used.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

from smear_env.agents.checkpoint import NumpyPolicy
from smear_env.agents.registry import make_agent
from smear_env.core.config import SmearRules
from smear_env.gym.single_seat import SmearSingleSeatEnv

from ..config import TrainConfig, from_dict, to_dict
from ..policy import ForeignModelPolicy, from_sb3_state_dict, obs_scale, to_sb3_state_dict
from ..selfplay import SELF, SNAPSHOT, OpponentPool
from .ppo_update import schedules
from .resume_state import restore_trainer_state, trainer_state


def _np_weights(sd: dict[str, torch.Tensor]) -> dict[str, np.ndarray]:
    return {k: v.detach().cpu().numpy().copy() for k, v in sd.items()}


def _sample(policy: NumpyPolicy, obs: dict[str, Any], rng: np.random.Generator) -> int:
    mask = np.asarray(obs["action_mask"]).astype(bool)
    logits = policy.logits(np.asarray(obs["observation"])[None], mask[None])[0]
    z = np.where(mask, logits - logits[mask].max(), -np.inf)
    p = np.exp(z)
    p /= p.sum()
    return int(rng.choice(len(p), p=p))


class _Table:
    """What sits at the table this game (shared by the three non-learning seats of one env)."""

    def __init__(self, names: list[str], probs: np.ndarray, rules: SmearRules, network: dict[str, Any],
                 seed: int) -> None:
        self.names, self.probs, self.rules, self.network = names, probs, rules, network
        self.rng = np.random.default_rng(seed)
        self.current: NumpyPolicy | None = None
        self.snapshots: list[NumpyPolicy] = []
        self.kind = SELF
        self.snap: NumpyPolicy | None = None
        self.agents: dict[tuple[int, str], Any] = {}

    def new_game(self) -> None:
        name = self.names[int(self.rng.choice(len(self.names), p=self.probs))]
        if name == SNAPSHOT and not self.snapshots:
            name = SELF
        self.kind = name
        if name == SNAPSHOT:
            self.snap = self.snapshots[int(self.rng.integers(len(self.snapshots)))]


class _Seat:
    """One non-learning seat: the partner (always the frozen current policy) or an opponent."""

    def __init__(self, table: _Table, slot: int, partner: bool) -> None:
        self.table, self.slot, self.partner = table, slot, partner
        self.name = "partner" if partner else f"opponent{slot}"
        self._agent: Any = None
        self._rng = np.random.default_rng(0)

    def __deepcopy__(self, memo: dict) -> _Seat:  # the env deep-copies agents; share the table instead
        return self

    def start_game(self, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        t = self.table
        if not self.partner and self.slot == 0:
            t.new_game()  # opponents' start_game run before the partner's (left, right, then partner)
        self._rng = rng
        self._agent = None
        if not self.partner and t.kind not in (SELF, SNAPSHOT):
            key = (self.slot, t.kind)
            if key not in t.agents:
                t.agents[key] = make_agent(t.kind, t.rules)
            self._agent = t.agents[key]
            self._agent.start_game(seat, rules, rng)

    def act(self, obs: dict[str, Any]) -> int:
        t = self.table
        if self._agent is not None:
            return int(self._agent.act(obs))
        pol = t.snap if (not self.partner and t.kind == SNAPSHOT) else t.current
        if pol is None:
            legal = np.flatnonzero(obs["action_mask"])
            return int(legal[self._rng.integers(legal.size)])
        return _sample(pol, obs, self._rng)


class PoolEnv(gymnasium.Wrapper):
    """SmearSingleSeatEnv with pool opponents, scaled observations and the table's shaped rewards (score
    rewards times ``env.score_scale``, plus ``env.win_bonus`` at the end of a game)."""

    def __init__(self, cfg_dict: dict[str, Any], seed: int) -> None:
        cfg = from_dict(cfg_dict)
        names = list(cfg.selfplay.opponents)
        p = np.array([cfg.selfplay.opponents[k] for k in names], dtype=np.float64)
        self.table = _Table(names, p / p.sum(), cfg.rules, {"hidden_sizes": cfg.network.hidden_sizes,
                                                            "activation": cfg.network.activation}, seed)
        # the table shapes the rewards (score scale, win bonus): smear_env.tables.table.shaped_team_rewards
        e = cfg.env
        shaping = {"score_scale": e.score_scale, "win_bonus": e.win_bonus} if e.reward == "score" else {}
        env = SmearSingleSeatEnv(
            opponents=[_Seat(self.table, 0, False), _Seat(self.table, 1, False)],
            partner=_Seat(self.table, 0, True),
            rules=cfg.rules, episode=cfg.env.episode, reward=cfg.env.reward, max_cycles=cfg.env.max_cycles,
            **shaping,
        )
        super().__init__(env)
        self.scale = obs_scale()

    def set_weights(self, current: dict[str, np.ndarray], snapshots: list[dict[str, np.ndarray]]) -> None:
        t = self.table
        t.current = NumpyPolicy(current, t.network)
        t.snapshots = [NumpyPolicy(w, t.network) for w in snapshots]

    def action_masks(self) -> np.ndarray:
        return self.env.unwrapped.action_masks()

    def reset(self, **kwargs: Any) -> tuple[np.ndarray, dict]:
        obs, info = self.env.reset(**kwargs)
        return obs * self.scale, info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        obs, r, term, trunc, info = self.env.step(int(action))
        return obs * self.scale, r, term, trunc, info


class _GELUTanh(torch.nn.GELU):
    """GELU in its tanh form, as SmearPolicy uses."""

    def __init__(self) -> None:
        super().__init__(approximate="tanh")


class MaskablePPOTrainer(ForeignModelPolicy):
    name = "maskable_ppo"

    def __init__(self, cfg: TrainConfig, rng: np.random.Generator) -> None:
        self.cfg = cfg
        self.rng = rng
        a = cfg.algorithm
        cfg_dict = to_dict(cfg)
        seeds = [int(s) for s in rng.integers(2**31, size=cfg.n_envs)]
        fns = [lambda s=s: PoolEnv(cfg_dict, s) for s in seeds]
        self.venv = SubprocVecEnv(fns, start_method="spawn") if cfg.vec_env == "subproc" else DummyVecEnv(fns)
        self.venv.seed(int(rng.integers(2**31)))
        act = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh, "gelu": _GELUTanh}[cfg.network.activation]
        hs = list(cfg.network.hidden_sizes)
        self.model = MaskablePPO(
            "MlpPolicy", self.venv, learning_rate=a.learning_rate, n_steps=a.n_steps, batch_size=a.batch_size,
            n_epochs=a.n_epochs, gamma=a.gamma, gae_lambda=a.gae_lambda, clip_range=a.clip_range,
            ent_coef=a.ent_coef, vf_coef=a.vf_coef, max_grad_norm=a.max_grad_norm, target_kl=a.target_kl,
            normalize_advantage=a.norm_adv, seed=int(rng.integers(2**31)), device="cpu", verbose=0,
            policy_kwargs={"net_arch": {"pi": hs, "vf": hs}, "activation_fn": act},
        )
        self.pool = OpponentPool(cfg.selfplay.opponents, cfg.selfplay.pool_size, cfg.rules, rng)
        self.step = 0
        self.updates = 0
        self._last_refresh = 0
        self._push_weights()

    # the canonical (SmearPolicy) view of the SB3 policy
    def policy_state(self) -> dict[str, torch.Tensor]:
        return from_sb3_state_dict(self.model.policy.state_dict())

    def after_warm_start(self) -> None:
        self.model.policy.load_state_dict(to_sb3_state_dict(self._warm.state_dict()), strict=False)
        self._push_weights()

    def _push_weights(self) -> None:
        cur = _np_weights(self.policy_state())
        snaps = [_np_weights(p.state_dict()) for _, p in self.pool.snapshots]
        self.venv.env_method("set_weights", cur, snaps)
        self._last_refresh = self.step

    def add_snapshot(self) -> None:
        self.pool.add_snapshot(self.step, self.eval_policy())
        self._push_weights()

    def iterate(self) -> dict[str, float]:
        cfg, a = self.cfg, self.cfg.algorithm
        m = self.model
        lr, ent = schedules(a, self.step, cfg.total_timesteps)
        m.lr_schedule = lambda _progress: lr
        m.ent_coef = ent
        m.learn(total_timesteps=a.n_steps * cfg.n_envs, reset_num_timesteps=False, log_interval=None,
                progress_bar=False)
        self.step = int(m.num_timesteps)
        self.updates += 1
        if self.step - self._last_refresh >= cfg.selfplay.partner_refresh_interval:
            self._push_weights()
        vals = dict(m.logger.name_to_value)
        m.logger.name_to_value.clear()
        names = {"train/policy_gradient_loss": "loss/policy", "train/value_loss": "loss/value",
                 "train/entropy_loss": "loss/entropy", "train/approx_kl": "loss/approx_kl",
                 "train/clip_fraction": "loss/clip_fraction",
                 "train/explained_variance": "loss/explained_variance"}
        out = {ours: float(vals[theirs]) for theirs, ours in names.items() if theirs in vals}
        if "loss/entropy" in out:
            out["loss/entropy"] = -out["loss/entropy"]
        out["train/learning_rate"] = lr
        out["train/ent_coef"] = ent
        return out

    def state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        return trainer_state(self.model.policy.optimizer, self.pool, self.rng, self.updates)

    def load_state(self, policy_sd: dict[str, torch.Tensor], tensors: dict[str, torch.Tensor],
                   meta: dict[str, Any], step: int) -> None:
        self.model.policy.load_state_dict(to_sb3_state_dict(policy_sd), strict=False)
        self.updates = restore_trainer_state(
            self.model.policy.optimizer, self.pool, self.rng, self.cfg, tensors, meta
        )
        self.step = int(step)
        self.model.num_timesteps = self.step
        self._push_weights()
