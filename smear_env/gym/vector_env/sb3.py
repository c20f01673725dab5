"""Stable-Baselines3 ``VecEnv`` over :class:`~smear_env.gym.vector_env.SmearVectorEnv` (N games on the batched
engine in this process): ``MaskablePPO("MlpPolicy", SmearSB3VecEnv(256, opponents="heuristic"))`` trains on
it unchanged (sb3-contrib reads the masks through ``env_method("action_masks")``; :meth:`action_masks` gives
them directly).

SB3's conventions: observations are the flat ``(N, 493)`` array; ``step_wait`` returns ``(obs, rewards,
dones, infos)`` with ``infos`` a list of N dicts; a game whose episode ended has already begun its next one
(SB3 autoresets in the same step too) and its info holds ``terminal_observation`` (the vector env's
``final_obs``) and ``TimeLimit.truncated`` (cut off by ``max_cycles`` / ``max_hands``, not ended naturally).
Every info also holds ``action_mask``. ``seed(s)`` applies at the next ``reset()``, as in SB3's own VecEnvs;
a seed that is no integer in ``0 <= s < 2**64`` is refused at once (``TypeError`` / ``ValueError``).
The vector env underneath runs in ``AutoresetMode.SAME_STEP`` (what SB3 expects).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices

from ...core.seeding import check_seed
from . import SmearVectorEnv

__all__ = ["SmearSB3VecEnv"]


class SmearSB3VecEnv(VecEnv):
    """SB3 ``VecEnv`` of ``num_envs`` games (see the module docstring); ``kwargs`` are
    :class:`~smear_env.gym.vector_env.SmearVectorEnv`'s (``obs_format`` is always ``"flat"``,
    ``autoreset_mode`` always ``SAME_STEP``), or pass a built ``env=SmearVectorEnv(..., obs_format="flat",
    autoreset_mode="SameStep")``."""

    def __init__(self, num_envs: int = 1, *, env: SmearVectorEnv | None = None, **kwargs: Any) -> None:
        if env is None:
            env = SmearVectorEnv(num_envs, obs_format="flat", autoreset_mode=AutoresetMode.SAME_STEP,
                                 **kwargs)
        elif kwargs:
            raise ValueError(f"give either env= or the env's options, not both (got {sorted(kwargs)})")
        if env.obs_format != "flat":
            raise ValueError("SmearSB3VecEnv needs a SmearVectorEnv with obs_format='flat'")
        if env.autoreset_mode is not AutoresetMode.SAME_STEP:
            raise ValueError("SmearSB3VecEnv needs a SmearVectorEnv with autoreset_mode='SameStep' "
                             f"(SB3 resets in the same step), got {env.autoreset_mode.value!r}")
        self.venv = env
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)
        self._actions: np.ndarray | None = None
        self._seed: int | None = None

    # ------------------------------------------------------------------ VecEnv API
    def reset(self) -> np.ndarray:
        seed, self._seed = self._seed, None
        obs, _ = self.venv.reset(seed=seed)
        self._reset_seeds()
        self._reset_options()
        return obs

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        seed = check_seed(seed)  # TypeError / ValueError at once, naming the allowed range
        self._seed = seed
        return [seed] * self.num_envs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        actions, self._actions = self._actions, None
        obs, rewards, terminated, truncated, info = self.venv.step(actions)
        dones = terminated | truncated
        mask = info["action_mask"]
        infos: list[dict[str, Any]] = [{"action_mask": m} for m in mask]
        ended = np.flatnonzero(dones)
        if ended.size:
            final = info["final_obs"]
            for i in ended.tolist():
                infos[i]["terminal_observation"] = final[i]
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return obs, rewards.astype(np.float32, copy=False), dones, infos

    def action_masks(self) -> np.ndarray:
        """(N, 72) bool legal actions of every game's learner (what MaskablePPO asks for)."""
        return self.venv.action_masks()

    def close(self) -> None:
        self.venv.close()

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == "action_masks" or hasattr(self.venv, attr_name)

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        value = getattr(self.venv, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        raise AttributeError(f"SmearSB3VecEnv: the games share one batched table; cannot set {attr_name!r} "
                             "per game")

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        idx = list(self._get_indices(indices))
        if method_name == "action_masks":
            masks = self.venv.action_masks()
            return [masks[i] for i in idx] if indices is not None else list(masks)
        raise AttributeError(f"SmearSB3VecEnv: env_method supports only 'action_masks', not {method_name!r}")

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]
