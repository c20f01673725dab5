"""What a config section is made of (torch-free: config validation imports only this and the algorithms'
config classes): :class:`Section`, the bounded number types, :class:`ConfigError` and
:class:`AlgorithmConfig`, which each algorithm subclasses once (its ``algorithm:`` keys, ``supports_*`` flags
and own checks)."""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field


class ConfigError(ValueError):
    """A config file, key or value is invalid; the message names the key."""


MAX_ROLLOUT = 2**18
"""Most learner decisions in one rollout (``algorithm.n_steps * n_envs``): 262,144 decisions hold about
0.5 GB of observations, and ``time_limit`` is checked between updates, so one update is the most it can be
overrun by (the shipped configs use 8,192)."""
MAX_DECISIONS = 10**12
"""Largest learner-decision count of any budget or interval (about 3 years at 10,000 decisions/s)."""

_FLOAT_RE = re.compile(r"^[+-]?(\d[\d_]*\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def yaml_float(v: Any) -> Any:
    """A number written ``1e-4`` (which YAML 1.1 reads as a string) as the float it means."""
    if isinstance(v, str) and _FLOAT_RE.match(v.strip()):
        return float(v.replace("_", ""))
    if isinstance(v, int) and not isinstance(v, bool):
        return float(v)
    return v


Positive = Annotated[float, Field(gt=0), BeforeValidator(yaml_float)]
NonNegative = Annotated[float, Field(ge=0), BeforeValidator(yaml_float)]
Fraction = Annotated[float, Field(ge=0, le=1), BeforeValidator(yaml_float)]
Decisions = Annotated[int, Field(ge=1, le=MAX_DECISIONS)]


class Section(BaseModel):
    """A config section: unknown keys are errors, types are strict (no ``"3"`` for 3, no ``true`` for 1),
    floats finite; each field's docstring is its description."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, use_attribute_docstrings=True,
                              validate_default=False)


class AlgorithmConfig(Section):
    """The ``algorithm:`` section: its ``name`` picks the algorithm, whose config class (a subclass of this
    one) declares the other keys."""

    name: str = "ppo"
    """Algorithm, one of training.algorithms.ALGORITHMS (each one's keys follow as [algorithm: NAME])."""

    # What the algorithm supports of the run config (class attributes, not config keys).
    supports_suit_canonical: ClassVar[bool] = False
    """network.suit_canonical may be true."""
    supports_shared_trunk: ClassVar[bool] = False
    """network.shared_trunk may be true."""
    supports_init_from: ClassVar[bool] = False
    """init_from (start from a checkpoint's policy) may be set."""
    supports_imitation: ClassVar[bool] = True
    """imitation.teacher (the behaviour-cloning warm start) may be set."""
    supports_snapshot: ClassVar[bool] = True
    """selfplay.opponents may draw "snapshot" (a pool of the learner's past selves)."""
    supports_win_bonus: ClassVar[bool] = True
    """env.win_bonus may be non-zero (a game-end bonus in the returns)."""
    opponents: ClassVar[tuple[str, ...] | None] = None
    """The selfplay.opponents keys it can seat with a probability > 0 (None: "self", any agent spec and, with
    supports_snapshot, "snapshot")."""

    def check(self, cfg: Any) -> None:
        """Cross-field checks of this algorithm (ConfigError naming the key) against ``cfg``, the whole run
        config (a :class:`training.config.TrainConfig`, which this layer below it does not import); the base
        has none. Called by that class's cross-field checks after the common ones."""


class UpdateConfig(AlgorithmConfig):
    """The keys of an algorithm that learns from rollouts with gradient steps (every shipped one)."""

    learning_rate: Positive = 3.0e-4
    """Adam learning rate (start value when anneal_lr)."""
    anneal_lr: bool = True
    """Decay the learning rate linearly towards 0 over total_timesteps, never below the algorithm's floor
    (5% of learning_rate for the PPO algorithms, 0 for dmc): :meth:`lr_at`, the one schedule."""
    n_steps: int = Field(128, ge=1, le=100_000)
    """Rollout length per env: each update uses n_steps * n_envs learner decisions."""
    batch_size: int = Field(2048, ge=1, le=MAX_ROLLOUT)
    """Minibatch size of the gradient steps."""
    n_epochs: int = Field(4, ge=1, le=1_000)
    """Passes over each rollout."""
    max_grad_norm: Positive = 0.5
    """Gradient clipping norm."""

    lr_floor: ClassVar[float] = 0.0
    """The smallest learning rate of the schedule, as a share of learning_rate."""

    def lr_at(self, step: int, total: int) -> float:
        """The learning rate after ``step`` of ``total`` learner decisions: with ``anneal_lr``,
        ``learning_rate * max(1 - step / total, lr_floor)`` (computed so), else ``learning_rate``."""
        lr = self.learning_rate * (1.0 - min(1.0, step / total)) if self.anneal_lr else self.learning_rate
        return max(lr, self.learning_rate * self.lr_floor)

    def lr_schedule(self, total: int) -> list[list[float]] | float:
        """:meth:`lr_at` as (step, learning rate) points to interpolate linearly (a framework's own
        schedule, e.g. RLlib's), or the constant learning rate."""
        if not self.anneal_lr:
            return self.learning_rate
        knee = round(total * (1.0 - self.lr_floor))
        inner = [[knee, self.lr_at(knee, total)]] if 0 < knee < total else []
        return [[0, self.learning_rate], *inner, [total, self.lr_at(total, total)]]

    def check(self, cfg: Any) -> None:
        """One rollout (``n_steps * n_envs``) holds at most :data:`MAX_ROLLOUT` decisions."""
        rollout = self.n_steps * cfg.n_envs
        if rollout > MAX_ROLLOUT:
            raise ConfigError(
                f"config keys 'algorithm.n_steps' and 'n_envs': one rollout of {self.n_steps} x "
                f"{cfg.n_envs} = {rollout:,} decisions is more than the {MAX_ROLLOUT:,} allowed (time_limit "
                "is checked between updates; lower n_steps or n_envs)"
            )
