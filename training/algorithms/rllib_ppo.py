"""``rllib_ppo``: Ray RLlib's PPO (new API stack) on
:class:`smear_env.envs.integrations.rllib.SmearMultiAgentEnv`, driven by the same config as the native
trainers. Needs ``pip install "smear-rl[rllib]"``.

Self-play: one masked policy (RLlib's ``ActionMaskingTorchRLModule``) plays all four seats, so every decision
of every game is a learner decision (``step`` counts them, as the native ``ppo``); ``selfplay.opponents`` must
be ``{self: ...}`` (other opponents and snapshots are refused by the config check; ``imitation.teacher``
warm-starts it). Games are played by ``ray.num_env_runners`` Ray actors (``n_envs`` games split among them)
on a local Ray started for the run or on the cluster at ``ray.address``.

Config mapping: ``n_steps * n_envs`` decisions per update (``train_batch_size_per_learner``), ``batch_size``
(minibatch), ``n_epochs``, ``learning_rate`` (the schedule of ``anneal_lr``), ``ent_coef`` ->
``ent_coef_final``, ``gamma``, ``gae_lambda``, ``clip_range``, ``vf_coef``, ``max_grad_norm``; no KL penalty
(as the native PPO; ``target_kl`` has no RLlib counterpart and is not a key here); ``env.win_bonus`` must be
0. Rewards: ``env.reward="score"`` times ``env.score_scale`` (as the native trainers); observations are scaled
by :func:`training.policy.obs_scale` in the env, which is exactly what :class:`~training.policy.SmearPolicy`
does inside, so the RLlib module converts to a SmearPolicy by renaming its tensors
(:func:`to_smear_state_dict`): every checkpoint in the run folder is a project checkpoint that ``smear-eval``
plays. RLlib's own checkpoint (optimizer, env-runner state; RLlib writes it with pickle, so it is for resuming
this run only, not for sharing) is written next to it, ``<run dir>/rllib/``, for ``--resume``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..config import ConfigError, TrainConfig
from ..policy import ForeignModelPolicy, SmearPolicy, obs_scale

MODULE_ID = "shared"

# RLlib's PPO module (separate actor and critic MLPs, linear heads) -> SmearPolicy: same layer order and
# shapes (nn.Sequential of Linear, activation, ...), only the names differ.
_KEY_MAP = (
    ("encoder.actor_encoder.net.mlp.", "pi_body."),
    ("encoder.critic_encoder.net.mlp.", "vf_body."),
    ("pi.net.mlp.0.", "pi_head."),
    ("vf.net.mlp.0.", "vf_head."),
)


def to_smear_state_dict(rllib_sd: dict[str, Any]) -> dict[str, torch.Tensor]:
    """An RLlib PPO module state dict (``fcnet_hiddens``, ``vf_share_layers=False``, no head hidden layers)
    as a :class:`SmearPolicy` state dict (``obs_scale`` added: the env scaled the observations)."""
    out = {"obs_scale": torch.from_numpy(obs_scale())}
    for k, v in rllib_sd.items():
        for theirs, ours in _KEY_MAP:
            if k.startswith(theirs):
                out[ours + k[len(theirs):]] = torch.as_tensor(np.asarray(v)).clone()
                break
    return out


def from_smear_state_dict(sd: dict[str, torch.Tensor]) -> dict[str, np.ndarray]:
    """The inverse of :func:`to_smear_state_dict` (``obs_scale`` dropped)."""
    out = {}
    for k, v in sd.items():
        for theirs, ours in _KEY_MAP:
            if k.startswith(ours):
                out[theirs + k[len(ours):]] = v.detach().cpu().numpy()
                break
    return out


class RLlibPPOTrainer(ForeignModelPolicy):
    """The trainer protocol of :mod:`training.train` on an RLlib ``Algorithm``."""

    name = "rllib_ppo"

    def __init__(self, cfg: TrainConfig, rng: np.random.Generator) -> None:
        try:
            import ray  # lazy: optional (ImportError guarded)
        except ImportError:
            raise ConfigError('algorithm "rllib_ppo" needs Ray RLlib: pip install "smear-rl[rllib]" '
                              "(with -c constraints/rllib.txt)") from None
        from smear_env.envs.integrations.rllib import ppo_config  # lazy: optional dependency (Ray RLlib)

        net, a = cfg.network, cfg.algorithm  # network.activation: checked by RLlibPPOConfig.validate
        self.cfg = cfg
        self.rng = rng
        self.run_dir: Path | None = None  # set by the caller; RLlib's checkpoint goes to <run_dir>/rllib
        self._own_ray = not ray.is_initialized()
        if self._own_ray:
            r = cfg.ray
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if r.address is None:
                kwargs["num_cpus"] = r.num_cpus
            # None: a new local Ray, as documented (Ray's own None joins any cluster it finds running)
            ray.init(address=r.address or "local", **kwargs)
        total = cfg.total_timesteps
        lr = a.lr_schedule(total)
        ent = a.ent_coef if a.ent_coef_final is None else [[0, a.ent_coef], [total, a.ent_coef_final]]
        env_config = {**cfg.rules.to_dict(), "episode": cfg.env.episode, "reward": cfg.env.reward,
                      "max_cycles": cfg.env.max_cycles, "obs_scale": obs_scale().tolist(),
                      "reward_scale": cfg.env.score_scale if cfg.env.reward == "score" else 1.0}
        runners = cfg.ray.num_env_runners
        per_runner = max(1, cfg.n_envs // max(1, runners))
        config = (
            ppo_config(env_config, policies="shared", hidden_sizes=net.hidden_sizes,
                       activation=net.activation, lr=lr, entropy_coeff=ent, gamma=a.gamma,
                       lambda_=a.gae_lambda, clip_param=a.clip_range,
                       vf_loss_coeff=a.vf_coef, grad_clip=a.max_grad_norm, use_kl_loss=False,
                       train_batch_size_per_learner=a.n_steps * cfg.n_envs, minibatch_size=a.batch_size,
                       num_epochs=a.n_epochs)
            .env_runners(num_env_runners=runners, num_envs_per_env_runner=per_runner,
                         num_cpus_per_env_runner=1)
            .learners(num_learners=0)
            .debugging(seed=int(rng.integers(2**31)))
        )
        self.algo = config.build_algo()
        self.step = 0
        self.updates = 0
        self._warm: SmearPolicy | None = None

    # ------------------------------------------------------------------ weights
    def _rllib_weights(self) -> dict[str, Any]:
        return self.algo.learner_group.get_weights(module_ids=[MODULE_ID])[MODULE_ID]

    def _set_rllib_weights(self, weights: dict[str, Any]) -> None:
        current = self._rllib_weights()
        merged = {k: torch.as_tensor(np.asarray(weights.get(k, v))) for k, v in current.items()}
        self.algo.learner_group.set_weights({MODULE_ID: merged})
        self.algo.env_runner_group.sync_weights(from_worker_or_learner_group=self.algo.learner_group,
                                                inference_only=True)

    def policy_state(self) -> dict[str, torch.Tensor]:
        return to_smear_state_dict(self._rllib_weights())

    def after_warm_start(self) -> None:
        assert self._warm is not None
        self._set_rllib_weights(from_smear_state_dict(self._warm.state_dict()))

    def add_snapshot(self) -> None:
        """Pure self-play: no opponent pool."""

    # ------------------------------------------------------------------ training
    def iterate(self) -> dict[str, float]:
        r = self.algo.train()
        self.updates += 1
        self.step = int(r["env_runners"]["num_env_steps_sampled_lifetime"])
        lm = r.get("learners", {}).get(MODULE_ID, {})
        names = {"policy_loss": "loss/policy", "vf_loss": "loss/value", "entropy": "loss/entropy",
                 "mean_kl_loss": "loss/approx_kl", "vf_explained_var": "loss/explained_variance",
                 "curr_entropy_coeff": "train/ent_coef",
                 "default_optimizer_learning_rate": "train/learning_rate"}
        out = {ours: float(lm[theirs]) for theirs, ours in names.items() if theirs in lm}
        ret = r["env_runners"].get("agent_episode_returns_mean", {}).get("player_0")
        if ret is not None:
            out["train/episode_return_player_0"] = float(ret)
        return out

    # ------------------------------------------------------------------ checkpoints
    def _rllib_dir(self) -> Path:
        if self.run_dir is None:
            raise RuntimeError("RLlibPPOTrainer.run_dir is not set")
        return self.run_dir / "rllib"

    def state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        path = self._rllib_dir()
        self.algo.save_to_path(str(path.resolve()))
        return {}, {"rllib_checkpoint": "rllib", "updates": self.updates,
                    "numpy_rng": self.rng.bit_generator.state}

    def load_state(self, policy_sd: dict[str, torch.Tensor], tensors: dict[str, torch.Tensor],
                   meta: dict[str, Any], step: int) -> None:
        path = self._rllib_dir()
        if (path / "algorithm_state.pkl").exists() or path.is_dir():
            self.algo.restore_from_path(str(path.resolve()))
        else:  # only the project checkpoint: continue from its policy weights
            self._set_rllib_weights(from_smear_state_dict(policy_sd))
        self.updates = int(meta.get("updates", 0))
        if "numpy_rng" in meta:
            self.rng.bit_generator.state = meta["numpy_rng"]
        self.step = int(step)

    def close(self) -> None:
        import ray  # lazy: optional dependency

        self.algo.stop()
        if self._own_ray:
            ray.shutdown()
