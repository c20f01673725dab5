"""What both vector envs share (:class:`VectorEnvBase`): their option checks, the observation space, the
vectorised random opponent (:class:`VectorRandomAgent`)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from ...core.actions import NUM_ACTIONS
from ...core.config import RuleOptionError, SmearRules
from ...core.seeding import check_seed
from ...engine.vector import random_actions
from ...tables.batched_table import BatchedTable
from ...tables.table import parse_options

OBS_FORMATS = ("dict", "flat")
INFO_KEYS = ("seat", "learner_seat", "scores", "hand_number", "winner", "illegal_action", "action_mask")
"""The info keys of every ``reset`` and ``step`` (the single-seat env's, batched)."""
_EXTRA = {"score_scale": 1.0, "win_bonus": 0.0, "max_hands": None}


def vector_options(kwargs: dict[str, Any], name: str) -> tuple[SmearRules, Any]:
    """The rules and table options of a vector env's keyword arguments (the table layer's, plus
    ``score_scale``, ``win_bonus``, ``max_hands``); ``name`` is the env named in errors."""
    rules, opts, extra = parse_options(kwargs, dict(_EXTRA), name=name)
    return rules, dataclasses.replace(opts, **extra)


def check_num_envs(num_envs: Any) -> int:
    """``num_envs``, an integer >= 1; RuleOptionError otherwise."""
    if isinstance(num_envs, bool) or not isinstance(num_envs, int | np.integer) or num_envs < 1:
        raise RuleOptionError(f"option num_envs={num_envs!r} is not allowed; allowed values: an integer >= 1")
    return int(num_envs)


def check_obs_format(obs_format: Any) -> str:
    """``obs_format``, one of :data:`OBS_FORMATS`; RuleOptionError otherwise."""
    if obs_format not in OBS_FORMATS or not isinstance(obs_format, str):
        raise RuleOptionError(f"option obs_format={obs_format!r} is not allowed; allowed values: "
                              "'dict', 'flat'")
    return obs_format


def single_obs_space(obs_format: str, low: np.ndarray, high: np.ndarray) -> spaces.Space:
    """One game's observation space: the ``Box(low, high)``, in a Dict with the action mask for ``"dict"``."""
    box = spaces.Box(low, high, dtype=np.float32)
    if obs_format == "flat":
        return box
    return spaces.Dict({"observation": box, "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8)})


def check_actions(actions: Any, n: int) -> np.ndarray:
    """``actions`` as an (n,) int64 array; ValueError naming the shape expected otherwise."""
    a = np.asarray(actions)
    if a.shape != (n,) or a.dtype.kind not in "iu":
        raise ValueError(f"actions must have shape ({n},): one integer action id (0..{NUM_ACTIONS - 1}) per "
                         f"game; got shape {a.shape} dtype {a.dtype}")
    return a.astype(np.int64, copy=False)


def reset_mask_of(options: Any, n: int) -> np.ndarray | None:
    """The ``reset_mask`` of ``reset(options=...)`` (None without one); any other option is refused."""
    if not options:
        return None
    if not isinstance(options, dict) or set(options) != {"reset_mask"}:
        raise ValueError(f"SmearVectorEnv.reset takes only options={{'reset_mask': (N,) bool array}}, got "
                         f"{options!r}")
    m = options["reset_mask"]
    if not isinstance(m, np.ndarray) or m.dtype != np.bool_ or m.shape != (n,) or not m.any():
        raise ValueError(f"options['reset_mask'] must be a ({n},) bool numpy array with a True, got "
                         f"{type(m).__name__} {getattr(m, 'shape', '')} {getattr(m, 'dtype', '')}".rstrip())
    return m


AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED)


def check_autoreset_mode(mode: Any) -> AutoresetMode:
    """``mode``, one of :data:`AUTORESET_MODES` (or its string value); RuleOptionError otherwise."""
    found = next((m for m in AUTORESET_MODES if mode is m or (isinstance(mode, str) and mode == m.value)),
                 None)
    if found is None:
        raise RuleOptionError(f"option autoreset_mode={mode!r} is not allowed; allowed values: "
                              "gymnasium.vector.AutoresetMode.NEXT_STEP ('NextStep'), "
                              "AutoresetMode.SAME_STEP ('SameStep'), AutoresetMode.DISABLED ('Disabled')")
    return found




class VectorRandomAgent:
    """Uniformly random legal actions for every row from one generator
    (:func:`smear_env.engine.vector.random_actions`, one uniform draw per row): the vectorised random
    opponent of ``opponents=None``. Unlike
    ``make_batched_agent("random")`` (a generator per game and seat, exactly
    :class:`~smear_env.agents.base.RandomAgent`'s draws, ~1-2 us a row in Python) its draws depend on the
    rows batched together; the distribution is the same."""

    vectorised = True

    def __init__(self, rng: np.random.Generator, name: str = "random") -> None:
        self.name = name
        self.rng = rng

    def start_game(self, slot: int, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        pass

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, slots: np.ndarray) -> np.ndarray:
        return random_actions(mask, self.rng)

    def close(self) -> None:
        pass


class VectorEnvBase:
    """What both vector envs share: options, the table, the observation layout."""

    table: BatchedTable
    num_envs: int
    obs_format: str

    _scale: np.ndarray | None = None

    def _obs(self, obs: np.ndarray, mask: np.ndarray) -> Any:
        if self._scale is not None:
            obs = obs * self._scale
        if self.obs_format == "flat":
            return obs
        return {"observation": obs, "action_mask": mask.astype(np.int8)}

    def _seed_rng(self, seed: int | None) -> None:
        self._rng = np.random.default_rng(check_seed(seed))

    def _table_seed(self) -> int:
        return int(self._rng.integers(2**63))

    def _require_reset(self) -> None:
        if not self._ready:
            raise RuntimeError(f"call reset() before step() on {type(self).__name__}")

