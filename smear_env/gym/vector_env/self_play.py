"""Self-play over the batched table, pgx style (:class:`SmearSelfPlayVectorEnv`): all four seats of every
game learn."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from ...core.actions import NUM_ACTIONS
from ...engine.observation import observation_bounds
from ...tables.batched_table import LEARNER, BatchedTable
from .base import (
    VectorEnvBase,
    check_actions,
    check_num_envs,
    check_obs_format,
    single_obs_space,
    vector_options,
)


class SmearSelfPlayVectorEnv(VectorEnvBase):
    """Self-play, pgx style: all four seats of every game are learners (see the module docstring).

    ``reset(seed=None) -> (obs, infos)``; ``step(actions (N,)) -> (obs, rewards (N, 4), terminated (N,),
    truncated (N,), infos)``: one decision in every game (by ``infos["seat"]`` of the previous call),
    ``rewards[:, s]`` what seat ``s`` earned in it (partners equal, teams opposite), autoreset as
    :class:`SmearVectorEnv` (SAME_STEP; ``infos["final_info"]``). ``obs``/``infos["action_mask"]`` are those
    of the seat to act. Not a :class:`gymnasium.vector.VectorEnv` (its rewards are per seat); the spaces and
    ``metadata["autoreset_mode"]`` are there as on one."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, *, obs_format: str = "dict", seed: int | None = None,
                 **kwargs: Any) -> None:
        self.num_envs = check_num_envs(num_envs)
        self.autoreset_mode = AutoresetMode.SAME_STEP
        self.rules, self.table_options = vector_options(kwargs, "SmearSelfPlayVectorEnv")
        self.obs_format = check_obs_format(obs_format)
        self.single_observation_space = single_obs_space(
            self.obs_format, *observation_bounds(self.rules, self.table_options.max_cycles))
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.num_players = 4
        self._seed_rng(seed)
        self._ready = False
        self._mask = np.zeros((self.num_envs, NUM_ACTIONS), dtype=bool)
        self.table = BatchedTable(self.num_envs, [LEARNER], np.zeros(4, dtype=np.int64), self.rules,
                                  self.table_options, seed=self._table_seed())

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        if options:
            raise ValueError(f"SmearSelfPlayVectorEnv.reset takes no options, got {options!r}")
        if seed is not None:
            self._seed_rng(seed)
            obs, mask, info = self.table.reset(seed=self._table_seed())
        else:
            obs, mask, info = self.table.reset()
        self._ready = True
        self._mask = mask
        return self._obs(obs, mask), {"action_mask": mask, "seat": info["seat"]}

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        self._require_reset()
        a = check_actions(actions, self.num_envs)
        obs, mask, rewards, terminated, truncated, info = self.table.step(a)
        ended = terminated | truncated
        infos = {"action_mask": mask, "seat": info["seat"],
                 "final_info": {"game_over": info["game_over"], "winner": info["winner"],
                                "final_scores": info["final_scores"], "episode_steps": info["episode_steps"]},
                 "_final_info": ended}
        self._mask = mask
        return self._obs(obs, mask), rewards, terminated, truncated, infos

    def action_masks(self) -> np.ndarray:
        """(N, 72) bool: the legal actions of the seat to act in each game."""
        self._require_reset()
        return self._mask

    def close(self) -> None:
        pass

