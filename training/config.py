"""Training configuration: dataclasses with one docstring per field (CleanRL style), YAML loading,
validation and ``--set`` overrides.

A config file is YAML with a ``default:`` block and optional named variants (RL-Zoo style)::

    default:            # the base config; every key optional (missing keys take the defaults below)
      total_timesteps: 2_000_000
      algorithm: {name: ppo, learning_rate: 3.0e-4}
    small:              # a variant: merged over ``default`` when chosen with --variant small
      network: {hidden_sizes: [64, 64]}

Validation: an unknown or misspelled key is an error naming it and the closest valid key; a value of the
wrong type or outside its bounds (:data:`BOUNDS`: the one table of lower and upper bounds; every float
must be finite, nan and inf are refused) is an error naming the key and the expected values; one rollout
(``algorithm.n_steps * n_envs``) holds at most :data:`MAX_ROLLOUT` decisions; ``selfplay.opponents`` and
``imitation.teacher`` must name agents that can be built. ``smear-train --help-config`` prints every field
with its default, bounds and documentation.

Files are parsed with a bound: at most :data:`MAX_CONFIG_BYTES` read (of any file: a pipe or device such as
``/dev/zero`` too), nesting at most :data:`MAX_YAML_DEPTH` levels, no YAML aliases (``*name``; a few nested
aliases can expand to gigabytes) and no duplicate keys in a mapping (two ``default:`` blocks, or a key given
twice, is an error naming the key and both lines instead of the last one silently winning). Error messages
echo at most a short prefix of a bad value.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import inspect
import math
import re
import textwrap
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from smear_env.actions import short_repr
from smear_env.config import RuleOptionError, SmearRules

from .algorithms import ALGORITHMS


class ConfigError(ValueError):
    """A config file, key or value is invalid; the message names the key."""


# --------------------------------------------------------------------------------------------- sections
@dataclass
class AlgorithmConfig:
    """The learning algorithm and its hyperparameters."""

    name: str = "ppo"
    """Algorithm, one of training.algorithms.ALGORITHMS: "ppo" (native PyTorch PPO that steps many tables in
    lock-step and learns from every seat the learner plays -- all four in pure self-play), "maskable_ppo"
    (sb3-contrib MaskablePPO on the single-seat Gymnasium view, one learning seat per env), "vector_ppo"
    (the same PPO update, collecting on the batched engine smear_env.vector: every lane stepped as arrays,
    opponents self/snapshot/a spec) or "rllib_ppo" (Ray RLlib's PPO, one masked policy shared by the four
    seats in self-play, sampling on Ray workers: see the ray section; needs pip install "smear-rl[rllib]")."""
    learning_rate: float = 3.0e-4
    """Adam learning rate (start value when anneal_lr)."""
    anneal_lr: bool = True
    """Decay the learning rate linearly to 0 over total_timesteps."""
    n_steps: int = 128
    """Rollout length per env: each update uses n_steps * n_envs learner decisions."""
    batch_size: int = 2048
    """Minibatch size of the gradient steps."""
    n_epochs: int = 4
    """Passes over each rollout."""
    gamma: float = 1.0
    """Discount factor (1.0: an episode is short and the score is what counts)."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    clip_range: float = 0.2
    """PPO clipping of the probability ratio."""
    ent_coef: float = 0.01
    """Entropy bonus coefficient at the start of training."""
    ent_coef_final: float | None = None
    """Entropy coefficient reached linearly at the end of training (None: constant ent_coef)."""
    vf_coef: float = 0.5
    """Value loss coefficient."""
    max_grad_norm: float = 0.5
    """Gradient clipping norm."""
    target_kl: float | None = None
    """Stop the epochs of an update early when the approximate KL exceeds this (None: never)."""
    norm_adv: bool = True
    """Normalize advantages per minibatch."""


@dataclass
class NetworkConfig:
    """The masked policy network: an MLP over the observation vector, 72 action logits (illegal ones masked
    out) and a value head."""

    hidden_sizes: list[int] = field(default_factory=lambda: [256, 256])
    """Hidden layer sizes of the policy MLP and of the value MLP (separate networks)."""
    activation: str = "relu"
    """Activation: "relu", "tanh" or "gelu"."""
    shared_trunk: bool = False
    """vector_ppo: the value head sits on the policy MLP (one trunk, about half the network compute) instead
    of a separate value MLP."""
    suit_canonical: bool = False
    """ppo / vector_ppo: the network sees each observation with its suits renamed into a canonical order
    (trump first once known, then by the observer's holding) and its suit actions (trump, discard, play)
    mapped back, so what it learns about one suit holds for all four (smear_env.observation.suit_orders)."""


@dataclass
class EnvConfig:
    """How experience is cut into episodes and rewarded: the table options of smear_env.table, which mean the
    same for every algorithm and for the envs."""

    episode: str = "hand"
    """Episode unit for returns: "hand" (each scored hand is an episode; the game carries on across episodes
    to its target, so all score situations are seen) or "game"."""
    reward: str = "score"
    """Reward: "score" (at each scored hand, own team's score change minus the other team's, in raw points,
    times score_scale) or "win" (+1 / -1 at the end of the game; needs episode "game")."""
    score_scale: float = 0.25
    """Factor applied to the "score" reward (raw points) before learning; 0.25 = in units of the 4 points a
    hand awards."""
    win_bonus: float = 0.0
    """Extra reward +win_bonus / -win_bonus to the winning / losing team at the end of a game (with
    reward "score" and episode "game")."""
    max_cycles: int = 2000
    """R21: decisions after which a game is truncated (and a new one starts)."""


@dataclass
class SelfPlayConfig:
    """Who sits at the table with the learner. The partner is always the current policy; the opponent
    team is drawn per game from ``opponents``."""

    opponents: dict[str, float] = field(
        default_factory=lambda: {"self": 0.5, "snapshot": 0.3, "random": 0.1, "heuristic": 0.1}
    )
    """Opponent team per game, with (unnormalized) probabilities. Keys: "self" (the current policy at all
    four seats), "snapshot" (a frozen past policy drawn uniformly from the pool; "self" until one exists),
    or an agent spec of smear_env.agents.registry (random, heuristic, pimc, a checkpoint path)."""
    snapshot_interval: int = 250_000
    """Learner decisions between two frozen snapshots added to the pool."""
    pool_size: int = 10
    """Most snapshots kept in the pool (oldest dropped first)."""
    partner_refresh_interval: int = 50_000
    """maskable_ppo: learner decisions between refreshes of the frozen copy of the current policy that plays
    the partner seat (native ppo plays the partner with the live policy)."""


@dataclass
class ImitationConfig:
    """Optional warm start before RL: behaviour cloning of a teacher agent's decisions (policy head,
    cross-entropy) and of its hand returns (value head)."""

    teacher: str | None = None
    """Agent spec of the teacher (e.g. "heuristic"); None: no warm start (RL from scratch)."""
    decisions: int = 500_000
    """Teacher decisions to record (the teacher plays all four seats)."""
    epochs: int = 3
    """Passes over the recorded decisions."""
    batch_size: int = 1024
    """Minibatch size."""
    learning_rate: float = 1.0e-3
    """Adam learning rate of the warm start."""
    epsilon: float = 0.0
    """Fraction of teacher decisions replaced by a random legal action while recording (wider coverage)."""
    workers: int = 2
    """Processes that record teacher games (not used with ``batched``)."""
    batched: bool = False
    """Record the teacher on the batched table in the training process (any teacher spec; about 3x faster
    than two worker processes for the heuristic) instead of ``workers`` processes of table games."""


@dataclass
class EvalConfig:
    """Periodic evaluation against baselines during training (greedy policy, seats swapped over paired
    deals)."""

    interval: int = 500_000
    """Learner decisions between evaluations (0: only at the end)."""
    games: int = 100
    """Games per opponent per evaluation (rounded up to an even number: each deal is played twice)."""
    opponents: list[str] = field(default_factory=lambda: ["random", "heuristic"])
    """Agent specs to evaluate against (skipped with a warning when a spec is unavailable)."""
    target_score: int | None = None
    """Target score of the evaluation games (None: the rules' target_score)."""


@dataclass
class OutputConfig:
    """Run folder contents."""

    checkpoint_interval: int = 250_000
    """Learner decisions between checkpoints (checkpoints/step_N.safetensors and latest.safetensors)."""
    keep_checkpoints: int = 5
    """How many step_N checkpoints to keep (0: all)."""
    tensorboard: bool = True
    """Write TensorBoard logs to <run dir>/tb."""
    progress: bool = True
    """Show a live progress bar (rich)."""


@dataclass
class RayConfig:
    """Where algorithm "rllib_ppo" runs (the other algorithms ignore this section)."""

    address: str | None = None
    """Ray cluster: None starts a local Ray for the run (stopped at its end); "auto" joins the cluster this
    machine belongs to (started with `ray start`); "host:port" joins the cluster at that address."""
    num_env_runners: int = 1
    """RLlib env-runner actors that play the games (n_envs games split among them); 0 plays them in the
    training process."""
    num_cpus: int | None = None
    """CPUs of the local Ray started for the run (None: every CPU of the machine); unused with address."""


@dataclass
class TrainConfig:
    """A training run."""

    rules: SmearRules = field(default_factory=SmearRules)
    """Rule options of the game (RULES.md table)."""
    algorithm: AlgorithmConfig = field(default_factory=AlgorithmConfig)
    """Algorithm and hyperparameters."""
    network: NetworkConfig = field(default_factory=NetworkConfig)
    """Policy network."""
    env: EnvConfig = field(default_factory=EnvConfig)
    """Episodes and rewards."""
    selfplay: SelfPlayConfig = field(default_factory=SelfPlayConfig)
    """Opponent pool."""
    imitation: ImitationConfig = field(default_factory=ImitationConfig)
    """Optional behaviour-cloning warm start."""
    eval: EvalConfig = field(default_factory=EvalConfig)
    """Periodic evaluation."""
    output: OutputConfig = field(default_factory=OutputConfig)
    """Checkpoints and logs."""
    ray: RayConfig = field(default_factory=RayConfig)
    """Ray cluster and workers (rllib_ppo)."""
    total_timesteps: int = 1_000_000
    """Learner decisions (bids, trump choices, discards, card plays) to train for."""
    time_limit: float | None = None
    """Stop (and save) after this many seconds, warm start included (None: no limit). Counted per invocation:
    a resumed run gets the full limit again."""
    n_envs: int = 64
    """Games played in parallel (vectorized; native ppo batches them in one process)."""
    vec_env: str = "dummy"
    """maskable_ppo: "dummy" (DummyVecEnv) or "subproc" (SubprocVecEnv, one process per env)."""
    torch_threads: int = 1
    """torch intra-op threads. 1 is fastest on a shared 2-core machine (measured: a 64x493x256 layer takes
    0.27 ms with 1 thread, 12 ms with 2 threads under load); use the second core for a second process."""
    seed: int = 0
    """Seed of every generator of the run (games, opponents, network init)."""
    init_from: str | None = None
    """Start the policy (policy and value weights) from this checkpoint instead of a random initialisation:
    a path or a shipped agent name ("default"). Its network and rules must equal this config's; the step
    count starts at 0 and the checkpoint's own training time is recorded in the run's metadata
    (``init_from``). Not together with ``imitation.teacher``; ignored by ``--resume``."""


CHOICES: dict[tuple[type, str], tuple[str, ...]] = {
    (AlgorithmConfig, "name"): tuple(ALGORITHMS),
    (NetworkConfig, "activation"): ("relu", "tanh", "gelu"),
    (EnvConfig, "episode"): ("hand", "game"),
    (EnvConfig, "reward"): ("score", "win"),
    (TrainConfig, "vec_env"): ("dummy", "subproc"),
}

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


MAX_DECISIONS = 10**12
"""Largest learner-decision count of any budget or interval (about 3 years at 10,000 decisions/s)."""
MAX_ROLLOUT = 2**18
"""Most learner decisions in one rollout (``algorithm.n_steps * n_envs``): 262,144 decisions hold about
0.5 GB of observations, and ``time_limit`` is checked between updates, so one update is the most it can be
overrun by (the shipped configs use 8,192)."""

# (section, field) -> its bounds: THE table of allowed values of every number field (checked in build();
# printed by --help-config). Every float must be finite as well (nan / inf are refused everywhere).
BOUNDS: dict[tuple[type, str], Bound] = {
    (AlgorithmConfig, "learning_rate"): Bound(0.0, None, lo_incl=False),
    (AlgorithmConfig, "n_steps"): Bound(1, 100_000),
    (AlgorithmConfig, "batch_size"): Bound(1, MAX_ROLLOUT),
    (AlgorithmConfig, "n_epochs"): Bound(1, 1_000),
    (AlgorithmConfig, "gamma"): Bound(0.0, 1.0),
    (AlgorithmConfig, "gae_lambda"): Bound(0.0, 1.0),
    (AlgorithmConfig, "clip_range"): Bound(0.0, None, lo_incl=False),
    (AlgorithmConfig, "ent_coef"): Bound(0.0, None),
    (AlgorithmConfig, "ent_coef_final"): Bound(0.0, None),
    (AlgorithmConfig, "vf_coef"): Bound(0.0, None),
    (AlgorithmConfig, "max_grad_norm"): Bound(0.0, None, lo_incl=False),
    (AlgorithmConfig, "target_kl"): Bound(0.0, None, lo_incl=False),
    (NetworkConfig, "hidden_sizes"): Bound(1, 4_096, max_items=8),
    (EnvConfig, "score_scale"): Bound(0.0, None, lo_incl=False),
    (EnvConfig, "win_bonus"): Bound(0.0, None),
    (EnvConfig, "max_cycles"): Bound(1, 1_000_000),
    (SelfPlayConfig, "opponents"): Bound(0.0, 1e6, max_items=64),
    (SelfPlayConfig, "snapshot_interval"): Bound(1, MAX_DECISIONS),
    (SelfPlayConfig, "pool_size"): Bound(1, 1_000),
    (SelfPlayConfig, "partner_refresh_interval"): Bound(1, MAX_DECISIONS),
    (ImitationConfig, "decisions"): Bound(1, 5_000_000),
    (ImitationConfig, "epochs"): Bound(1, 1_000),
    (ImitationConfig, "batch_size"): Bound(1, MAX_ROLLOUT),
    (ImitationConfig, "learning_rate"): Bound(0.0, None, lo_incl=False),
    (ImitationConfig, "epsilon"): Bound(0.0, 1.0),
    (ImitationConfig, "workers"): Bound(1, 256),
    (EvalConfig, "interval"): Bound(0, MAX_DECISIONS),
    (EvalConfig, "games"): Bound(1, 100_000),
    (EvalConfig, "opponents"): Bound(None, None, max_items=64, min_items=0),
    (EvalConfig, "target_score"): Bound(1, 2**20),
    (OutputConfig, "checkpoint_interval"): Bound(1, MAX_DECISIONS),
    (OutputConfig, "keep_checkpoints"): Bound(0, None),
    (RayConfig, "num_env_runners"): Bound(0, 1_024),
    (RayConfig, "num_cpus"): Bound(1, 4_096),
    (TrainConfig, "total_timesteps"): Bound(1, MAX_DECISIONS),
    (TrainConfig, "time_limit"): Bound(0.0, 1e7, lo_incl=False, unit="of seconds"),
    (TrainConfig, "n_envs"): Bound(1, 16_384),
    (TrainConfig, "torch_threads"): Bound(1, 256),
    (TrainConfig, "seed"): Bound(0, 2**63 - 1),
}

# --------------------------------------------------------------------------------------------- docs
def field_docs(cls: type) -> dict[str, str]:
    """Attribute docstrings (the string literal after each field) of a dataclass, from its source."""
    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass):
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body  # type: ignore[attr-defined]
        for node, nxt in zip(body, body[1:], strict=False):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(nxt, ast.Expr)
                and isinstance(nxt.value, ast.Constant)
                and isinstance(nxt.value.value, str)
            ):
                out[node.target.id] = " ".join(nxt.value.value.split())
    return out


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(type_name(a) for a in typing.get_args(tp))
    if origin is list:
        return f"list of {type_name(typing.get_args(tp)[0])}"
    if origin is dict:
        k, v = typing.get_args(tp)
        return f"mapping of {type_name(k)} to {type_name(v)}"
    if tp is type(None):
        return "null"
    if dataclasses.is_dataclass(tp):
        return "mapping (section)"
    return getattr(tp, "__name__", str(tp))


_FLOAT_RE = re.compile(r"^[+-]?(\d[\d_]*\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def _check_value(key: str, value: Any, tp: Any) -> Any:
    """``value`` checked against ``tp``; returns it (ints accepted for floats, and strings such as "1e-4"
    that PyYAML leaves unparsed for floats). Raises ConfigError naming the key and the expected type."""

    def bad() -> ConfigError:
        got = f"{short_repr(value)} ({type(value).__name__})"
        return ConfigError(f"config key {key!r}: expected {type_name(tp)}, got {got}")

    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(tp):
            try:
                return _check_value(key, value, arg)
            except ConfigError:
                continue
        raise bad()
    if tp is type(None):
        if value is None:
            return None
        raise bad()
    if tp is bool:
        if type(value) is bool:
            return value
        raise bad()
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise bad()
    if tp is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str) and _FLOAT_RE.match(value.strip()):
            return float(value.replace("_", ""))
        raise bad()
    if tp is str:
        if isinstance(value, str):
            return value
        raise bad()
    if origin is list:
        if not isinstance(value, list):
            raise bad()
        (arg,) = typing.get_args(tp)
        return [_check_value(f"{key}[{i}]", v, arg) for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise bad()
        kt, vt = typing.get_args(tp)
        return {
            _check_value(f"{key} (a key)", k, kt): _check_value(f"{key}.{k}", v, vt) for k, v in value.items()
        }
    raise bad()


def _unknown_key(key: str, prefix: str, valid: list[str]) -> ConfigError:
    full = short_repr(f"{prefix}{key}")
    close = difflib.get_close_matches(str(key)[:100], valid, n=1, cutoff=0.5)
    hint = f"; did you mean {prefix + close[0]!r}?" if close else ""
    return ConfigError(
        f"unknown config key {full}{hint} (valid keys{' in ' + prefix.rstrip('.') if prefix else ''}: "
        f"{', '.join(valid)})"
    )


def build(cls: type, data: Any, prefix: str = "") -> Any:
    """An instance of the dataclass ``cls`` from a mapping, validated (see module doc)."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        name = prefix.rstrip(".") or "config"
        raise ConfigError(f"config key {name!r}: expected a mapping (section), got {short_repr(data)}")
    hints = _hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key not in names:
            raise _unknown_key(key, prefix, names)
        tp = hints[key]
        full = f"{prefix}{key}"
        if dataclasses.is_dataclass(tp):
            kwargs[key] = build(tp, value, full + ".")
            continue
        v = _check_value(full, value, tp)
        choices = CHOICES.get((cls, key))
        if choices is not None and v not in choices:
            raise ConfigError(f"config key {full!r}: {v!r} is not one of {', '.join(map(repr, choices))}")
        _check_range(cls, key, full, v, tp)
        kwargs[key] = v
    try:
        return cls(**kwargs)
    except RuleOptionError as e:
        raise ConfigError(f"config section {prefix.rstrip('.')!r}: {e}") from e


def _is_int_type(tp: Any) -> bool:
    args = [a for a in typing.get_args(tp) if a is not type(None)] or [tp]
    inner = [typing.get_args(a)[-1] if typing.get_origin(a) in (list, dict) else a for a in args]
    return all(a is int for a in inner)


def bound_text(cls: type, key: str) -> str:
    """What field ``cls.key`` allows, from :data:`BOUNDS` ("" for a field without bounds)."""
    b = BOUNDS.get((cls, key))
    if b is None:
        return ""
    tp = _hints(cls)[key]
    text = b.text(nullable=type(None) in typing.get_args(tp), integer=_is_int_type(tp))
    if b.max_items is not None:
        each = "" if b.lo is None and b.hi is None else f", each {text}"
        text = f"{b.min_items} to {b.max_items} items{each}"
    return text


def _check_range(cls: type, key: str, full: str, v: Any, tp: Any) -> None:
    """Raise ConfigError when a number of field ``cls.key`` is not finite or outside :data:`BOUNDS` (for a
    list or mapping: each element, and the number of elements)."""
    if isinstance(v, dict):
        items = [(f"{full}.{k}", x) for k, x in v.items()]
    elif isinstance(v, list):
        items = [(f"{full}[{i}]", x) for i, x in enumerate(v)]
    else:
        items = [(full, v)]
    for name, x in items:
        if isinstance(x, float) and not math.isfinite(x):
            raise ConfigError(f"config key {name!r}: expected a finite number, got {x!r}")
    b = BOUNDS.get((cls, key))
    if b is None or v is None:
        return
    if b.max_items is not None and not b.min_items <= len(items) <= b.max_items:
        raise ConfigError(f"config key {full!r}: expected {bound_text(cls, key)}, got {len(items)} items")
    tp = _hints(cls)[key]
    each = b.text(nullable=False, integer=_is_int_type(tp))
    for name, x in items:
        if isinstance(x, int | float) and not b.ok(x):
            want = each if name != full else bound_text(cls, key)
            raise ConfigError(f"config key {name!r}: expected {want}, got {short_repr(x)}")


def check_agent_spec(spec: str, key: str, rules: SmearRules) -> None:
    """Raise ConfigError naming ``key`` unless ``spec`` builds an agent (``cmd:`` bots are not started
    here: only their spec is checked for a command)."""
    if spec.startswith("cmd"):
        if not spec.partition(":")[2].strip():
            raise ConfigError(f"config key {key!r}: agent spec {short_repr(spec)} has no command")
        return
    from smear_env.agents.registry import make_agent

    try:
        make_agent(spec, rules)
    except (ValueError, TypeError, OSError, ImportError) as e:
        text = str(e)
        raise ConfigError(f"config key {key!r}: {text if len(text) <= 500 else text[:497] + '...'}") from None


def validate(cfg: TrainConfig) -> TrainConfig:
    """Cross-field checks."""
    if cfg.env.reward == "win" and cfg.env.episode != "game":
        raise ConfigError("config key 'env.reward': 'win' needs env.episode 'game'")
    if cfg.network.suit_canonical and cfg.algorithm.name not in ("ppo", "vector_ppo"):
        raise ConfigError(f"config key 'network.suit_canonical': algorithm {cfg.algorithm.name!r} does not "
                          f"support it (allowed with: 'ppo', 'vector_ppo')")
    if cfg.algorithm.name != "vector_ppo" and cfg.network.shared_trunk:
        raise ConfigError("config key 'network.shared_trunk': only algorithm 'vector_ppo' supports it")
    if not cfg.selfplay.opponents:
        raise ConfigError("config key 'selfplay.opponents': needs at least one opponent")
    for k, p in cfg.selfplay.opponents.items():
        if p < 0:
            raise ConfigError(f"config key 'selfplay.opponents.{k}': probability {p} is negative")
    if sum(cfg.selfplay.opponents.values()) <= 0:
        raise ConfigError("config key 'selfplay.opponents': probabilities sum to 0")
    for k in cfg.selfplay.opponents:
        if k not in ("self", "snapshot"):
            check_agent_spec(k, f"selfplay.opponents.{k}", cfg.rules)
    if cfg.imitation.teacher is not None:
        check_agent_spec(cfg.imitation.teacher, "imitation.teacher", cfg.rules)
        if cfg.init_from is not None:
            raise ConfigError("config keys 'init_from' and 'imitation.teacher': choose one warm start "
                              "(set imitation.teacher: null to start from the checkpoint)")
    if cfg.init_from is not None and cfg.algorithm.name in ("maskable_ppo", "rllib_ppo"):
        raise ConfigError(f"config key 'init_from': algorithm {cfg.algorithm.name!r} does not support it "
                          f"(allowed with: 'ppo', 'vector_ppo')")
    rollout = cfg.algorithm.n_steps * cfg.n_envs
    if rollout > MAX_ROLLOUT:
        raise ConfigError(
            f"config keys 'algorithm.n_steps' and 'n_envs': one rollout of {cfg.algorithm.n_steps} x "
            f"{cfg.n_envs} = {rollout:,} decisions is more than the {MAX_ROLLOUT:,} allowed (time_limit is "
            "checked between updates; lower n_steps or n_envs)"
        )
    return cfg


def to_dict(cfg: Any) -> dict[str, Any]:
    """A plain (YAML/JSON-ready) dict of a config."""
    return dataclasses.asdict(cfg)


def from_dict(data: dict[str, Any]) -> TrainConfig:
    return validate(build(TrainConfig, data))


# --------------------------------------------------------------------------------------------- files
def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = v
    return out


MAX_CONFIG_BYTES = 1_000_000
"""Largest config file (or ``--set`` value) read."""
MAX_YAML_DEPTH = 20
"""Deepest nesting of mappings / lists in a config (the real ones nest 3 levels)."""


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader without aliases and with a nesting bound (see the module docstring)."""

    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise ConfigError(
                f"line {event.start_mark.line + 1}: YAML aliases (*{str(event.anchor)[:40]}) are not "
                "allowed in config files; write the values out"
            )
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                mark = self.peek_event().start_mark
                raise ConfigError(f"line {mark.line + 1}: nested deeper than {MAX_YAML_DEPTH} levels")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        """A mapping whose keys are all different: a key given twice is an error naming it and its lines
        (PyYAML keeps the last one silently)."""
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # `<<:` merges are overrides by design
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.get(key)
                except TypeError:  # an unhashable key: PyYAML's own error follows
                    continue
                line = key_node.start_mark.line + 1
                if first is not None:
                    raise ConfigError(f"line {line}: duplicate key {short_repr(key, 60)} (first given at "
                                      f"line {first}); give each key once")
                seen[key] = line
        return super().construct_mapping(node, deep)


def safe_load_bounded(text: str) -> Any:
    """``yaml.safe_load`` with the bounds of the module docstring; a violation raises ConfigError (without
    the file name: callers add it), a syntax error ``yaml.YAMLError``."""
    if len(text) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{len(text):,} characters, more than the {MAX_CONFIG_BYTES:,} allowed")
    loader = _BoundedLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def _yaml_error(e: yaml.YAMLError) -> str:
    """A YAML syntax error in one short line (PyYAML quotes the offending line, which may be huge)."""
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or str(e)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return where + short_repr(str(problem), 200).strip("'\"")


def parse_override(item: str) -> tuple[list[str], Any]:
    """``"algorithm.learning_rate=1e-4"`` -> (["algorithm", "learning_rate"], 1e-4); values are YAML
    scalars (or flow collections such as ``[64, 64]``)."""
    shown = short_repr(item)
    if "=" not in item:
        raise ConfigError(f"--set {shown}: expected key=value (e.g. algorithm.learning_rate=1.0e-4)")
    key, raw = item.split("=", 1)
    key = key.strip()
    if not key or any(not part for part in key.split(".")):
        raise ConfigError(f"--set {shown}: bad key {short_repr(key)}")
    try:
        value = safe_load_bounded(raw) if raw.strip() else ""
    except yaml.YAMLError as e:
        raise ConfigError(f"--set {shown}: value is not valid YAML: {_yaml_error(e)}") from None
    except ConfigError as e:
        raise ConfigError(f"--set {shown}: {e}") from None
    return key.split("."), value


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    for item in overrides:
        path, value = parse_override(item)
        patch: Any = value
        for part in reversed(path):
            patch = {part: patch}
        data = deep_merge(data, patch)
    return data


def read_text_bounded(path: Path, what: str, limit: int = MAX_CONFIG_BYTES) -> str:
    """The UTF-8 text of ``path``, reading at most ``limit`` bytes whatever the file is (a regular file, a
    pipe, ``/dev/zero``); ConfigError naming ``what`` when it is larger, unreadable or not UTF-8."""
    try:
        if path.is_dir():
            raise ConfigError(f"cannot read {what}: it is a folder")
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as e:
        raise ConfigError(f"cannot read {what}: {e.strerror or e}") from None
    if len(data) > limit:
        raise ConfigError(f"{what}: more than the {limit:,} allowed bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"cannot read {what}: not UTF-8 text") from None


def load_raw(path: str | Path, variant: str | None = None) -> dict[str, Any]:
    """The raw mapping of a config file: its ``default`` block, merged with ``variant`` if given."""
    path = Path(path)
    text = read_text_bounded(path, f"config file {str(path)!r}")
    try:
        doc = safe_load_bounded(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"config file {str(path)!r} is not valid YAML: {_yaml_error(e)}") from None
    except ConfigError as e:
        raise ConfigError(f"config file {str(path)!r}: {e}") from None
    if not isinstance(doc, dict) or "default" not in doc:
        raise ConfigError(
            f"config file {str(path)!r} must be a mapping with a 'default:' block "
            "(plus optional named variants)"
        )
    data = doc["default"] or {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {str(path)!r}: 'default' must be a mapping")
    if variant is not None:
        variants = [str(k) for k in doc if k != "default"]
        if variant not in doc or variant == "default":
            close = difflib.get_close_matches(variant, variants, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(
                f"config file {str(path)!r} has no variant {short_repr(variant)}{hint} "
                f"(variants: {short_repr(', '.join(variants), 300).strip(chr(39)) or 'none'})"
            )
        over = doc[variant] or {}
        if not isinstance(over, dict):
            raise ConfigError(f"config file {str(path)!r}: variant {variant!r} must be a mapping")
        data = deep_merge(data, over)
    return data


def load_config(
    path: str | Path | None = None, overrides: list[str] | None = None, variant: str | None = None
) -> TrainConfig:
    """Load, merge the variant and ``--set`` overrides, validate."""
    data = load_raw(path, variant) if path is not None else {}
    data = apply_overrides(data, overrides or [])
    return from_dict(data)


def dump_yaml(cfg: TrainConfig) -> str:
    """The resolved config as a loadable config file (a single ``default:`` block)."""
    return yaml.safe_dump({"default": to_dict(cfg)}, sort_keys=False)


def help_text() -> str:
    """Every field of the config with its type, default and documentation."""
    lines = [
        "Config file: YAML with a 'default:' block (plus optional named variants, chosen with --variant).",
        "Override any field with --set dotted.key=value (value parsed as YAML).",
        "",
    ]

    def walk(cls: type, prefix: str, default: Any) -> None:
        docs = field_docs(cls)
        hints = _hints(cls)
        for f in dataclasses.fields(cls):
            tp = hints[f.name]
            value = getattr(default, f.name)
            if dataclasses.is_dataclass(tp):
                lines.append(f"[{prefix}{f.name}]  {docs.get(f.name, '')}")
                walk(tp, f"{prefix}{f.name}.", value)
                lines.append("")
                continue
            choices = CHOICES.get((cls, f.name))
            ch = f" (one of {', '.join(choices)})" if choices else ""
            bounds = bound_text(cls, f.name)
            bounds = f" [{bounds}]" if bounds else ""
            lines.append(f"  {prefix}{f.name}: {type_name(tp)} = {value!r}{ch}{bounds}")
            for doc_line in textwrap.wrap(docs.get(f.name, "(undocumented)"), 100):
                lines.append(f"      {doc_line}")

    walk(TrainConfig, "", TrainConfig())
    return "\n".join(lines)
