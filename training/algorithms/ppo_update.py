"""The PPO update that ``ppo`` and ``vector_ppo`` share, as a component each trainer owns (they differ only
in how they collect the rollout).

:class:`PPOUpdate` holds the Adam optimizer of a policy and, for one rollout batch (``obs``, ``mask``,
``act``, ``logp``, ``val``, ``adv``, ``ret``: see the trainers' ``collect``), sets the learning rate and
entropy coefficient (:func:`schedules`, which ``maskable_ppo`` uses too), then runs ``n_epochs`` passes of
shuffled minibatches with the clipped surrogate, the value loss and the entropy bonus, gradient-norm
clipping and the ``target_kl`` early stop. :func:`ppo_iteration` is a PPO trainer's ``iterate()``;
:func:`rollout_stats` turns its collection statistics into the logged scalars.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ..configs.ppo import PPOConfig
from .decision_stats import TypeMeans, batch_stats, contract_scalars, decision_type


def schedules(a: PPOConfig, step: int, total_timesteps: int) -> tuple[float, float]:
    """(learning rate, entropy coefficient) of a PPO update after ``step`` learner decisions: with
    ``anneal_lr`` the learning rate is :meth:`~training.configs.base.AlgorithmConfig.lr_at`'s;
    the entropy coefficient moves linearly to ``ent_coef_final`` when it is given."""
    frac = min(1.0, step / total_timesteps)
    lr = a.lr_at(step, total_timesteps)
    ent_coef = a.ent_coef
    if a.ent_coef_final is not None:
        ent_coef += (a.ent_coef_final - a.ent_coef) * frac
    return lr, ent_coef


class PPOUpdate:
    """PPO on rollout batches for ``policy`` (a :class:`~training.policy.SmearPolicy`), configured by a
    :class:`~training.configs.ppo.PPOConfig`; minibatches are shuffled with ``rng``."""

    def __init__(self, policy: torch.nn.Module, a: PPOConfig, total_timesteps: int,
                 rng: np.random.Generator) -> None:
        self.policy = policy
        self.a = a
        self.total_timesteps = total_timesteps
        self.rng = rng
        self.params = list(policy.parameters())
        self.optimizer = torch.optim.Adam(self.params, lr=a.learning_rate, eps=1e-5)

    def __call__(self, batch: dict[str, np.ndarray], step: int) -> dict[str, float]:
        """Update the policy on ``batch`` (``step``: learner decisions trained on before it); returns the
        losses and schedules to log."""
        a = self.a
        n = len(batch["act"])
        lr, ent_coef = schedules(a, step, self.total_timesteps)
        for g in self.optimizer.param_groups:
            g["lr"] = lr
        t = {k: torch.from_numpy(v) for k, v in batch.items()}
        self.policy.train()
        pg_l, v_l, ent_l, kl_l, clip_l = [], [], [], [], []
        types = decision_type(batch["act"])
        per_type = TypeMeans()  # per-decision-type entropy and value error (detached; see decision_stats)
        stop = False
        for _epoch in range(a.n_epochs):
            perm = torch.from_numpy(self.rng.permutation(n))
            for start in range(0, n, a.batch_size):
                idx = perm[start:start + a.batch_size]
                logits, value = self.policy(t["obs"][idx], t["mask"][idx])
                logp_all = torch.log_softmax(logits, dim=-1)
                logp = logp_all.gather(1, t["act"][idx, None]).squeeze(1)
                ent_rows = -(logp_all.exp() * logp_all).sum(-1)
                entropy = ent_rows.mean()
                ratio = torch.exp(logp - t["logp"][idx])
                adv = t["adv"][idx]
                if a.norm_adv and len(idx) > 1:
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg = torch.max(-adv * ratio, -adv * ratio.clamp(1 - a.clip_range, 1 + a.clip_range)).mean()
                err = (value - t["ret"][idx]) ** 2
                vloss = 0.5 * err.mean()
                loss = pg + a.vf_coef * vloss - ent_coef * entropy
                self.optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.params, a.max_grad_norm)
                self.optimizer.step()
                with torch.no_grad():
                    lr_ = logp - t["logp"][idx]
                    kl = ((torch.exp(lr_) - 1) - lr_).mean().item()
                pg_l.append(pg.item())
                v_l.append(vloss.item())
                ent_l.append(entropy.item())
                kl_l.append(kl)
                clip_l.append(((ratio - 1).abs() > a.clip_range).float().mean().item())
                ti = types[idx.numpy()]
                per_type.add("entropy", ti, ent_rows)
                per_type.add("value_error", ti, err)
                if a.target_kl is not None and kl > a.target_kl:
                    stop = True
                    break
            if stop:
                break
        ret = batch["ret"]
        var = float(np.var(ret))
        ev = float("nan") if var == 0 else 1.0 - float(np.var(ret - batch["val"])) / var
        out = {
            "loss/policy": float(np.mean(pg_l)), "loss/value": float(np.mean(v_l)),
            "loss/entropy": float(np.mean(ent_l)), "loss/approx_kl": float(np.mean(kl_l)),
            "loss/clip_fraction": float(np.mean(clip_l)), "loss/explained_variance": ev,
            "train/learning_rate": lr, "train/ent_coef": ent_coef, "train/batch": n,
        }
        out.update(batch_stats(batch["act"], batch["mask"], ret, batch["adv"]))
        out.update(per_type.result())
        return out


def ppo_iteration(trainer: Any, update: Callable[[dict[str, np.ndarray], int], dict[str, float]] | None = None
                  ) -> dict[str, float]:
    """One ``iterate()`` of a PPO trainer (``ppo``, ``vector_ppo``): clear its collection statistics
    (``_stats``), collect ``n_steps * n_envs`` learner decisions (``collect``), update with its
    :class:`PPOUpdate` (``update``) and count the decisions and the update; returns the scalars to log.
    ``update``: called as ``update(batch, step)`` in place of ``trainer.update``, returning the scalars to
    log (``vector_ppo``'s overlap submits the update to a thread and returns the previous one's)."""
    cfg = trainer.cfg
    trainer._stats = {}
    batch = trainer.collect(cfg.algorithm.n_steps * cfg.n_envs)
    out = (trainer.update if update is None else update)(batch, trainer.step)
    trainer.step += len(batch["act"])
    trainer.updates += 1
    out.update(rollout_stats(trainer._stats))
    return out


def rollout_stats(st: dict[str, Any]) -> dict[str, float]:
    """The logged scalars of a PPO trainer's collection statistics (bids, contracts, score difference per
    hand and win rates against the pool's opponents)."""
    out = {"bids/bid_rate": st.get("bid_rate", 0.0), "bids/avg_bid": st.get("avg_bid", 0.0)}
    out.update(contract_scalars(st))
    if st.get("score_diff_n"):
        out["train/score_diff_per_hand"] = st["score_diff_sum"] / st["score_diff_n"]
    for k in list(st):
        if k.startswith("win_") and not k.endswith("_n") and st.get(k + "_n"):
            out[f"train/{k}"] = st[k] / st[k + "_n"]
    return out
