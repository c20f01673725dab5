"""Training configuration: dataclasses with one docstring per field (CleanRL style), YAML loading,
validation and ``--set`` overrides.

A config file is YAML with a ``default:`` block and optional named variants (RL-Zoo style)::

    default:            # the base config; every key optional (missing keys take the defaults below)
      total_timesteps: 2_000_000
      algorithm: {name: ppo, learning_rate: 3.0e-4}
    small:              # a variant: merged over ``default`` when chosen with --variant small
      network: {hidden_sizes: [64, 64]}

Validation: an unknown or misspelled key is an error naming it and the closest valid key; a value of the
wrong type or outside its range (:data:`RANGES`; every float must be finite) is an error naming the key
and the expected values; ``selfplay.opponents`` and ``imitation.teacher`` must name agents that can be
built. ``smear-train --help-config`` prints every field with its default and documentation.

Files are parsed with a bound: at most :data:`MAX_CONFIG_BYTES`, nesting at most :data:`MAX_YAML_DEPTH`
levels, and no YAML aliases (``*name``; a few nested aliases can expand to gigabytes). Error messages
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
    opponents self/snapshot/random) or "rllib_ppo" (Ray RLlib's PPO, one masked policy shared by the four
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
    epsilon: float = 0.05
    """dmc: probability that an actor takes a uniformly random legal action instead of the highest-Q one."""


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
    """Record the teacher on the batched engine in the training process (teacher "heuristic" or "random"
    only; about 3x faster than two worker processes) instead of ``workers`` processes of table games."""


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

# (section, field) -> (low, high, low inclusive, high inclusive, text); None: unbounded on that side.
RANGES: dict[tuple[type, str], tuple[float | None, float | None, bool, bool, str]] = {
    (AlgorithmConfig, "learning_rate"): (0.0, None, False, False, "a number > 0"),
    (AlgorithmConfig, "gamma"): (0.0, 1.0, True, True, "a number in [0, 1]"),
    (AlgorithmConfig, "gae_lambda"): (0.0, 1.0, True, True, "a number in [0, 1]"),
    (AlgorithmConfig, "clip_range"): (0.0, None, False, False, "a number > 0"),
    (AlgorithmConfig, "ent_coef"): (0.0, None, True, False, "a number >= 0"),
    (AlgorithmConfig, "ent_coef_final"): (0.0, None, True, False, "a number >= 0 or null"),
    (AlgorithmConfig, "vf_coef"): (0.0, None, True, False, "a number >= 0"),
    (AlgorithmConfig, "max_grad_norm"): (0.0, None, False, False, "a number > 0"),
    (AlgorithmConfig, "target_kl"): (0.0, None, False, False, "a number > 0 or null"),
    (AlgorithmConfig, "epsilon"): (0.0, 1.0, True, True, "a number in [0, 1]"),
    (EnvConfig, "win_bonus"): (0.0, None, True, False, "a number >= 0"),
    (EnvConfig, "score_scale"): (0.0, None, False, False, "a number > 0"),
    (ImitationConfig, "learning_rate"): (0.0, None, False, False, "a number > 0"),
    (ImitationConfig, "epsilon"): (0.0, 1.0, True, True, "a number in [0, 1]"),
    (EvalConfig, "interval"): (0, None, True, False, "an integer >= 0"),
    (EvalConfig, "target_score"): (1, 2**20, True, True, "an integer from 1 to 1048576 or null"),
    (OutputConfig, "keep_checkpoints"): (0, None, True, False, "an integer >= 0"),
    (TrainConfig, "time_limit"): (0.0, None, False, False, "a number of seconds > 0 or null"),
    (TrainConfig, "seed"): (0, 2**63 - 1, True, True, "an integer from 0 to 2**63 - 1"),
}

POSITIVE_INTS = {
    (AlgorithmConfig, "n_steps"), (AlgorithmConfig, "batch_size"), (AlgorithmConfig, "n_epochs"),
    (TrainConfig, "n_envs"), (TrainConfig, "torch_threads"), (TrainConfig, "total_timesteps"),
    (EnvConfig, "max_cycles"), (SelfPlayConfig, "snapshot_interval"), (SelfPlayConfig, "pool_size"),
    (SelfPlayConfig, "partner_refresh_interval"), (ImitationConfig, "decisions"), (ImitationConfig, "epochs"),
    (ImitationConfig, "batch_size"), (ImitationConfig, "workers"), (EvalConfig, "games"),
    (OutputConfig, "checkpoint_interval"),
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
        if (cls, key) in POSITIVE_INTS and v < 1:
            raise ConfigError(f"config key {full!r}: expected an integer >= 1, got {v!r}")
        _check_range(cls, key, full, v)
        kwargs[key] = v
    try:
        return cls(**kwargs)
    except RuleOptionError as e:
        raise ConfigError(f"config section {prefix.rstrip('.')!r}: {e}") from e


def _check_range(cls: type, key: str, full: str, v: Any) -> None:
    """Raise ConfigError when a number of field ``cls.key`` is not finite or outside :data:`RANGES`."""
    for x in v.values() if isinstance(v, dict) else v if isinstance(v, list) else [v]:
        if isinstance(x, float) and not math.isfinite(x):
            raise ConfigError(f"config key {full!r}: expected a finite number, got {x!r}")
    spec = RANGES.get((cls, key))
    if spec is None or v is None:
        return
    lo, hi, lo_incl, hi_incl, text = spec
    ok = (lo is None or (v >= lo if lo_incl else v > lo)) and (hi is None or (v <= hi if hi_incl else v < hi))
    if not ok:
        raise ConfigError(f"config key {full!r}: expected {text}, got {short_repr(v)}")


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


VECTOR_OPPONENTS = ("self", "snapshot", "random", "heuristic")
"""Opponents ``vector_ppo`` can seat (batched); others must have probability 0."""


def check_vector_opponents(cfg: TrainConfig) -> None:
    """Raise ConfigError naming the opponents ``vector_ppo`` cannot seat."""
    bad = [k for k, p in cfg.selfplay.opponents.items() if k not in VECTOR_OPPONENTS and p > 0]
    if bad:
        raise ConfigError(
            f"config key 'selfplay.opponents': {', '.join(map(repr, bad))} not available with algorithm "
            f"'vector_ppo' (allowed: {', '.join(map(repr, VECTOR_OPPONENTS))})"
        )


def validate(cfg: TrainConfig) -> TrainConfig:
    """Cross-field checks."""
    if cfg.env.reward == "win" and cfg.env.episode != "game":
        raise ConfigError("config key 'env.reward': 'win' needs env.episode 'game'")
    if cfg.network.suit_canonical and cfg.algorithm.name not in ("ppo", "vector_ppo", "dmc"):
        raise ConfigError(f"config key 'network.suit_canonical': algorithm {cfg.algorithm.name!r} does not "
                          f"support it (allowed with: 'ppo', 'vector_ppo', 'dmc')")
    if cfg.algorithm.name != "vector_ppo":
        if cfg.network.shared_trunk:
            raise ConfigError("config key 'network.shared_trunk': only algorithm 'vector_ppo' supports it")
    else:
        check_vector_opponents(cfg)
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
        if cfg.imitation.batched and cfg.imitation.teacher not in ("heuristic", "random"):
            raise ConfigError(f"config key 'imitation.batched': teacher {cfg.imitation.teacher!r} cannot "
                              f"play on the batched engine (allowed: 'heuristic', 'random'); "
                              f"set batched: false")
        if cfg.init_from is not None:
            raise ConfigError("config keys 'init_from' and 'imitation.teacher': choose one warm start "
                              "(set imitation.teacher: null to start from the checkpoint)")
    if cfg.init_from is not None and cfg.algorithm.name in ("maskable_ppo", "rllib_ppo"):
        raise ConfigError(f"config key 'init_from': algorithm {cfg.algorithm.name!r} does not support it "
                          f"(allowed with: 'ppo', 'vector_ppo')")
    if not cfg.network.hidden_sizes or any(h < 1 for h in cfg.network.hidden_sizes):
        raise ConfigError(
            f"config key 'network.hidden_sizes': expected sizes >= 1, got {cfg.network.hidden_sizes}"
        )
    if cfg.ray.num_env_runners < 0:
        raise ConfigError(
            f"config key 'ray.num_env_runners': expected an integer >= 0, got {cfg.ray.num_env_runners}")
    if cfg.ray.num_cpus is not None and cfg.ray.num_cpus < 1:
        raise ConfigError(
            f"config key 'ray.num_cpus': expected an integer >= 1 or null, got {cfg.ray.num_cpus}")
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


def load_raw(path: str | Path, variant: str | None = None) -> dict[str, Any]:
    """The raw mapping of a config file: its ``default`` block, merged with ``variant`` if given."""
    path = Path(path)
    try:
        if path.is_file() and path.stat().st_size > MAX_CONFIG_BYTES:
            raise ConfigError(
                f"config file {str(path)!r} has {path.stat().st_size:,} bytes, more than the "
                f"{MAX_CONFIG_BYTES:,} allowed"
            )
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        why = e.strerror if isinstance(e, OSError) else "not UTF-8 text"
        raise ConfigError(f"cannot read config file {str(path)!r}: {why}") from None
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
            lines.append(f"  {prefix}{f.name}: {type_name(tp)} = {value!r}{ch}")
            for doc_line in textwrap.wrap(docs.get(f.name, "(undocumented)"), 100):
                lines.append(f"      {doc_line}")

    walk(TrainConfig, "", TrainConfig())
    return "\n".join(lines)
