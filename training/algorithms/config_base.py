"""What an algorithm's config class is made of (torch-free: config validation imports only this and the
algorithms' config classes).

Each algorithm declares, in a module that imports neither torch nor sb3, one dataclass of its ``algorithm:``
keys: a subclass of :class:`AlgorithmConfig` with one docstring per field (``--help-config`` prints them),
the bounds of its number fields (:attr:`AlgorithmConfig.bounds`), what else of the run config it supports
(the ``supports_*`` flags and :attr:`AlgorithmConfig.opponents`) and, if it needs them, cross-field checks
of its own (:meth:`AlgorithmConfig.validate`). The registry (:data:`training.algorithms.ALGORITHMS`) names
it next to the trainer; :func:`training.config.validate` asks the class and names no algorithm.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:  # pragma: no cover
    from ..config import TrainConfig


class ConfigError(ValueError):
    """A config file, key or value is invalid; the message names the key."""


MAX_ROLLOUT = 2**18
"""Most learner decisions in one rollout (``algorithm.n_steps * n_envs``): 262,144 decisions hold about
0.5 GB of observations, and ``time_limit`` is checked between updates, so one update is the most it can be
overrun by (the shipped configs use 8,192)."""


@dataclass(frozen=True)
class Bound:
    """The allowed values of a number field (of each element, for a list or mapping field)."""

    lo: float | None
    """Smallest value (None: unbounded below)."""
    hi: float | None
    """Largest value (None: unbounded above)."""
    lo_incl: bool = True
    hi_incl: bool = True
    unit: str = ""
    """Said after "a number" in messages, e.g. "of seconds"."""
    max_items: int | None = None
    """List / mapping fields: most elements (None: not bounded)."""
    min_items: int = 1
    """List / mapping fields with max_items: fewest elements."""

    def text(self, nullable: bool = False, integer: bool = False) -> str:
        """``"an integer from 1 to 16384"``, ``"a number in (0, 1]"``, ...: what the error messages say."""
        kind = ("an integer" if integer else "a number") + (f" {self.unit}" if self.unit else "")
        lo, hi = (_fmt_bound(x) for x in (self.lo, self.hi))
        if self.lo is not None and self.hi is not None:
            if integer and self.lo_incl and self.hi_incl:
                out = f"{kind} from {lo} to {hi}"
            else:
                out = f"{kind} in {'[' if self.lo_incl else '('}{lo}, {hi}{']' if self.hi_incl else ')'}"
        elif self.lo is not None:
            out = f"{kind} {'>=' if self.lo_incl else '>'} {lo}"
        elif self.hi is not None:
            out = f"{kind} {'<=' if self.hi_incl else '<'} {hi}"
        else:
            out = kind
        return out + (" or null" if nullable else "")

    def ok(self, v: float) -> bool:
        lo, hi = self.lo, self.hi
        return ((lo is None or (v >= lo if self.lo_incl else v > lo))
                and (hi is None or (v <= hi if self.hi_incl else v < hi)))


def _fmt_bound(x: float | None) -> str:
    if x is None:
        return ""
    if float(x).is_integer():
        n = int(x)
        if n == 2**63 - 1:
            return "2**63 - 1"
        if n >= 10**6 and str(n).rstrip("0") == "1":
            return f"10**{len(str(n)) - 1}"
        return str(n)
    return repr(float(x))


@dataclass
class AlgorithmConfig:
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
    supports_winprob: ClassVar[bool] = False
    """env.reward may be "winprob" (the change of a win-probability model's chance at each scored hand)."""
    opponents: ClassVar[tuple[str, ...] | None] = None
    """The selfplay.opponents keys it can seat with a probability > 0 (None: "self", any agent spec and, with
    supports_snapshot, "snapshot")."""
    bounds: ClassVar[dict[str, Bound]] = {}
    """Field name -> its bounds, for the number fields this class declares (a subclass adds its own; see
    :func:`bounds_of`)."""

    def validate(self, cfg: TrainConfig) -> None:
        """Cross-field checks of this algorithm (ConfigError naming the key); the base has none. Called by
        :func:`training.config.validate` after the common checks."""


def bounds_of(cls: type) -> dict[str, Bound]:
    """Field name -> bounds of an algorithm config class, its base classes' declarations included."""
    out: dict[str, Bound] = {}
    for klass in reversed(cls.__mro__):
        out.update(vars(klass).get("bounds", {}))
    return out


@dataclass
class UpdateConfig(AlgorithmConfig):
    """The keys of an algorithm that learns from rollouts with gradient steps (every shipped one)."""

    learning_rate: float = 3.0e-4
    """Adam learning rate (start value when anneal_lr)."""
    anneal_lr: bool = True
    """Decay the learning rate linearly over total_timesteps."""
    n_steps: int = 128
    """Rollout length per env: each update uses n_steps * n_envs learner decisions."""
    batch_size: int = 2048
    """Minibatch size of the gradient steps."""
    n_epochs: int = 4
    """Passes over each rollout."""
    max_grad_norm: float = 0.5
    """Gradient clipping norm."""

    bounds: ClassVar[dict[str, Bound]] = {
        "learning_rate": Bound(0.0, None, lo_incl=False),
        "n_steps": Bound(1, 100_000),
        "batch_size": Bound(1, MAX_ROLLOUT),
        "n_epochs": Bound(1, 1_000),
        "max_grad_norm": Bound(0.0, None, lo_incl=False),
    }

    def validate(self, cfg: TrainConfig) -> None:
        """One rollout (``n_steps * n_envs``) holds at most :data:`MAX_ROLLOUT` decisions."""
        rollout = self.n_steps * cfg.n_envs
        if rollout > MAX_ROLLOUT:
            raise ConfigError(
                f"config keys 'algorithm.n_steps' and 'n_envs': one rollout of {self.n_steps} x "
                f"{cfg.n_envs} = {rollout:,} decisions is more than the {MAX_ROLLOUT:,} allowed (time_limit "
                "is checked between updates; lower n_steps or n_envs)"
            )
