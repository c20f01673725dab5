"""Training configuration: one pydantic model per section, one docstring per field (CleanRL style).

A config file is YAML with a ``default:`` block and optional named variants (RL-Zoo style), merged over
``default`` when chosen with ``--variant``; ``--set key.path=value`` overrides one field. The ``algorithm:``
section holds the keys of the algorithm its ``name`` picks (its torch-free config class, named by the registry
:data:`training.configs.ALGORITHMS`, declares them with what it supports of the other sections and its own
checks); this module names no algorithm. Reading files, errors, the JSON Schema and ``--help-config`` are
:mod:`training.config_files`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, Union

import yaml
from pydantic import BeforeValidator, Field, SerializeAsAny, SkipValidation, model_validator

from smear_env.agents.registry import make_agent
from smear_env.core.actions import short_repr
from smear_env.core.config import RuleOptionError, SmearRules

from .config_files import apply_overrides, did_you_mean, help_text_of, load_raw, schema_of, validated
from .configs import ALGORITHMS, config_class
from .configs.base import (
    MAX_DECISIONS,
    MAX_ROLLOUT,
    AlgorithmConfig,
    ConfigError,
    Decisions,
    Fraction,
    NonNegative,
    Positive,
    Section,
    yaml_float,
)

__all__ = ["MAX_DECISIONS", "MAX_ROLLOUT", "ConfigError", "TrainConfig", "apply_overrides", "dump_yaml",
           "from_dict", "help_text", "load_config", "load_raw", "schema", "to_dict"]

DEFAULT_ALGORITHM = "ppo"
"""``algorithm.name`` when a config does not give one."""


class NetworkConfig(Section):
    """The masked policy network: an MLP over the observation vector, 72 action logits (illegal ones masked
    out) and a value head."""

    hidden_sizes: list[Annotated[int, Field(ge=1, le=4_096)]] = Field([256, 256], min_length=1, max_length=8)
    """Hidden layer sizes of the policy MLP and of the value MLP (separate networks)."""
    activation: Literal["relu", "tanh", "gelu"] = "relu"
    """Activation: "relu", "tanh" or "gelu"."""
    shared_trunk: bool = False
    """The value head sits on the policy MLP (one trunk, about half the network compute) instead of a
    separate value MLP (the algorithms whose "Supports" line under [algorithm: NAME] names it)."""
    suit_canonical: bool = False
    """The network sees each observation with its suits renamed into a canonical order (trump first once
    known, then by the observer's holding) and its suit actions (trump, discard, play) mapped back, so what
    it learns about one suit holds for all four (smear_env.engine.observation.suit_orders; the algorithms
    whose "Supports" line names it)."""


class EnvConfig(Section):
    """How experience is cut into episodes and rewarded: the table options of smear_env.tables.table, which
    mean the same for every algorithm and for the envs."""

    episode: Literal["hand", "game"] = "hand"
    """Episode unit for returns: "hand" (each scored hand is an episode; the game carries on across episodes
    to its target, so all score situations are seen) or "game"."""
    reward: Literal["score", "win"] = "score"
    """Reward: "score" (at each scored hand, own team's score change minus the other team's, in raw points,
    times score_scale) or "win" (+1 / -1 at the end of the game; needs episode "game")."""
    score_scale: Positive = 0.25
    """Factor applied to the "score" reward (raw points) before learning; 0.25 = in units of the 4 points a
    hand awards."""
    win_bonus: NonNegative = 0.0
    """Extra reward +win_bonus / -win_bonus to the winning / losing team at the end of a game (with
    reward "score" and episode "game")."""
    max_cycles: int = Field(2000, ge=1, le=1_000_000)
    """R21: decisions after which a game is truncated (and a new one starts)."""


class SelfPlayConfig(Section):
    """Who sits at the table with the learner. The partner is always the current policy; the opponent
    team is drawn per game from ``opponents``."""

    opponents: dict[str, Annotated[float, Field(ge=0, le=1e6), BeforeValidator(yaml_float)]] = Field(
        {"self": 0.5, "snapshot": 0.3, "random": 0.1, "heuristic": 0.1}, min_length=1, max_length=64)
    """Opponent team per game, with (unnormalized) probabilities. Keys: "self" (the current policy at all
    four seats), "snapshot" (a frozen past policy drawn uniformly from the pool; "self" until one exists),
    or an agent spec of smear_env.agents.registry (random, heuristic, pimc, a checkpoint path)."""
    snapshot_interval: Decisions = 250_000
    """Learner decisions between two frozen snapshots added to the pool."""
    pool_size: int = Field(10, ge=1, le=1_000)
    """Most snapshots kept in the pool (oldest dropped first)."""
    partner_refresh_interval: Decisions = 50_000
    """maskable_ppo: learner decisions between refreshes of the frozen copy of the current policy that plays
    the partner seat (native ppo plays the partner with the live policy)."""


class ImitationConfig(Section):
    """Optional warm start before RL: behaviour cloning of a teacher agent's decisions (policy head,
    cross-entropy) and of its hand returns (value head)."""

    teacher: str | None = None
    """Agent spec of the teacher (e.g. "heuristic"); None: no warm start (RL from scratch)."""
    decisions: int = Field(500_000, ge=1, le=5_000_000)
    """Teacher decisions to record (the teacher plays all four seats)."""
    epochs: int = Field(3, ge=1, le=1_000)
    """Passes over the recorded decisions."""
    batch_size: int = Field(1024, ge=1, le=MAX_ROLLOUT)
    """Minibatch size."""
    learning_rate: Positive = 1.0e-3
    """Adam learning rate of the warm start."""
    epsilon: Fraction = 0.0
    """Fraction of teacher decisions replaced by a random legal action while recording (wider coverage)."""
    workers: int = Field(2, ge=1, le=256)
    """Processes that record teacher games (not used with ``batched``)."""
    batched: bool = False
    """Record the teacher on the batched table in the training process (any teacher spec; about 3x faster
    than two worker processes for the heuristic) instead of ``workers`` processes of table games."""


class EvalConfig(Section):
    """Periodic evaluation against baselines during training (greedy policy, seats swapped over paired
    deals)."""

    interval: int = Field(500_000, ge=0, le=MAX_DECISIONS)
    """Learner decisions between evaluations (0: only at the end)."""
    games: int = Field(100, ge=1, le=100_000)
    """Games per opponent per evaluation (rounded up to an even number: each deal is played twice)."""
    opponents: list[str] = Field(["random", "heuristic"], max_length=64)
    """Agent specs to evaluate against (skipped with a warning when a spec is unavailable)."""
    target_score: int | None = Field(None, ge=1, le=2**20)
    """Target score of the evaluation games (None: the rules' target_score)."""


class OutputConfig(Section):
    """Run folder contents."""

    checkpoint_interval: Decisions = 250_000
    """Learner decisions between checkpoints (checkpoints/step_N.safetensors and latest.safetensors)."""
    keep_checkpoints: int = Field(5, ge=0)
    """How many step_N checkpoints to keep (0: all)."""
    tensorboard: bool = True
    """Write TensorBoard logs to <run dir>/tb."""
    progress: bool = True
    """Show a live progress bar (rich)."""


class RayConfig(Section):
    """Where the work of algorithms "rllib_ppo" and "dmc" runs on Ray (the other algorithms ignore this
    section; training.distributed.RaySettings, docs/ray.md)."""

    address: str | None = None
    """Ray cluster. rllib_ppo: None starts a local Ray for the run (stopped at its end). dmc: None trains in
    this process without Ray; "local" starts a private Ray. Both: "auto" joins the cluster this machine
    belongs to (started with `ray start`); "host:port" joins the cluster at that address."""
    num_env_runners: int = Field(1, ge=0, le=1_024)
    """RLlib env-runner actors that play the games (n_envs games split among them); 0 plays them in the
    training process. dmc: its actors when workers is not set."""
    num_cpus: int | None = Field(None, ge=1, le=4_096)
    """CPUs of the local Ray started for the run (None: every CPU of the machine); unused with address."""
    workers: int | None = Field(None, ge=1, le=4_096)
    """dmc on Ray: the actors that play the games (n_envs lanes split among them); None: num_env_runners."""
    resources: dict[str, Annotated[float, Field(gt=0, le=1e6)]] = Field(
        default_factory=lambda: {"CPU": 1.0}, min_length=1, max_length=16)
    """What one Ray task or actor asks for, e.g. {CPU: 1}."""
    max_retries: int = Field(3, ge=0, le=1_000)
    """Ray re-runs a task whose node died this many times."""
    max_restarts: int = Field(-1, ge=-1, le=1_000)
    """Ray restarts a dmc actor whose process or node died this many times (-1: always)."""
    max_staleness: int = Field(1, ge=0, le=1_000)
    """dmc: the learner trains on a batch played at most this many updates behind its weights (0: only on
    batches of its current weights; the actors then wait while it learns)."""


def _default_algorithm() -> AlgorithmConfig:
    return config_class(DEFAULT_ALGORITHM)()


class TrainConfig(Section):
    """A training run."""

    rules: Annotated[SmearRules, SkipValidation] = Field(default_factory=SmearRules)
    """Rule options of the game (RULES.md table)."""
    algorithm: Annotated[SerializeAsAny[AlgorithmConfig], SkipValidation] = Field(
        default_factory=_default_algorithm)
    """Algorithm and its hyperparameters (the keys of the algorithm that algorithm.name picks)."""
    network: NetworkConfig = Field(default_factory=NetworkConfig)
    """Policy network."""
    env: EnvConfig = Field(default_factory=EnvConfig)
    """Episodes and rewards."""
    selfplay: SelfPlayConfig = Field(default_factory=SelfPlayConfig)
    """Opponent pool."""
    imitation: ImitationConfig = Field(default_factory=ImitationConfig)
    """Optional behaviour-cloning warm start."""
    eval: EvalConfig = Field(default_factory=EvalConfig)
    """Periodic evaluation."""
    output: OutputConfig = Field(default_factory=OutputConfig)
    """Checkpoints and logs."""
    ray: RayConfig = Field(default_factory=RayConfig)
    """Ray cluster and workers (rllib_ppo)."""
    total_timesteps: Decisions = 1_000_000
    """Learner decisions (bids, trump choices, discards, card plays) to train for."""
    time_limit: Annotated[float, Field(gt=0, le=1e7), BeforeValidator(yaml_float)] | None = None
    """Stop (and save) after this many seconds, warm start included (None: no limit). Counted per invocation:
    a resumed run gets the full limit again."""
    n_envs: int = Field(64, ge=1, le=16_384)
    """Games played in parallel (vectorized; native ppo batches them in one process)."""
    vec_env: Literal["dummy", "subproc"] = "dummy"
    """maskable_ppo: "dummy" (DummyVecEnv) or "subproc" (SubprocVecEnv, one process per env)."""
    torch_threads: int = Field(1, ge=1, le=256)
    """torch intra-op threads. 1 is fastest on a shared 2-core machine (measured: a 64x493x256 layer takes
    0.27 ms with 1 thread, 12 ms with 2 threads under load); use the second core for a second process."""
    seed: int = Field(0, ge=0, le=2**63 - 1)
    """Seed of every generator of the run (games, opponents, network init)."""
    init_from: str | None = None
    """Start the policy (policy and value weights) from this checkpoint instead of a random initialisation:
    a path or a shipped agent name ("default"). Its network and rules must equal this config's; the step
    count starts at 0 and the checkpoint's own training time is recorded in the run's metadata
    (``init_from``). Not together with ``imitation.teacher``; ignored by ``--resume``."""

    @model_validator(mode="after")
    def _cross_field_checks(self) -> TrainConfig:
        """The common checks, what the algorithm's config class says it supports (its ``supports_*`` flags and
        ``opponents``), the agent specs, then the class's own :meth:`AlgorithmConfig.check`."""
        alg, name, opponents, teacher = self.algorithm, self.algorithm.name, self.selfplay.opponents, \
            self.imitation.teacher
        if type(alg) is not config_class(name):
            raise ConfigError(f"config section 'algorithm': a {type(alg).__name__} does not hold the keys of "
                              f"algorithm {name!r} ({config_class(name).__name__})")
        if self.env.reward == "win" and self.env.episode != "game":
            raise ConfigError("config key 'env.reward': 'win' needs env.episode 'game'")
        if sum(opponents.values()) <= 0:
            raise ConfigError("config key 'selfplay.opponents': probabilities sum to 0")
        for key, used, flag, hint in (
                ("network.suit_canonical", self.network.suit_canonical, "suit_canonical", ""),
                ("network.shared_trunk", self.network.shared_trunk, "shared_trunk", ""),
                ("selfplay.opponents.snapshot", opponents.get("snapshot", 0) > 0, "snapshot", ""),
                ("env.win_bonus", self.env.win_bonus != 0, "win_bonus", "; set env.win_bonus: 0"),
                ("imitation.teacher", teacher is not None, "imitation", "; set imitation.teacher: null"),
                ("init_from", self.init_from is not None, "init_from", "")):
            if used and not getattr(alg, f"supports_{flag}"):
                allowed = [repr(n) for n in ALGORITHMS if getattr(config_class(n), f"supports_{flag}")]
                raise ConfigError(f"config key {key!r}: algorithm {name!r} does not support it (allowed "
                                  f"with: {', '.join(allowed) or 'none'}){hint}")
        bad = [repr(k) for k, p in opponents.items() if p > 0 and k not in (alg.opponents or ())]
        if alg.opponents is not None and bad:
            raise ConfigError(f"config key 'selfplay.opponents': {', '.join(bad)} not available with "
                              f"algorithm {name!r} (allowed: {', '.join(map(repr, alg.opponents or ()))})")
        specs = [(f"selfplay.opponents.{k}", k) for k in opponents if k not in ("self", "snapshot")]
        for key, spec in specs + ([("imitation.teacher", teacher)] if teacher is not None else []):
            try:  # a `cmd:` spec names a command (its program is not started here); another builds an agent
                if spec.startswith("cmd") and not spec.partition(":")[2].strip():
                    raise ValueError(f"agent spec {short_repr(spec)} has no command")
                if not spec.startswith("cmd"):
                    make_agent(spec, self.rules)
            except (ValueError, TypeError, OSError, ImportError) as e:
                text = str(e)
                raise ConfigError(f"config key {key!r}: {text if len(text) <= 500 else text[:497] + '...'}"
                                  ) from None
        if teacher is not None and self.init_from is not None:
            raise ConfigError("config keys 'init_from' and 'imitation.teacher': choose one warm start "
                              "(set imitation.teacher: null to start from the checkpoint)")
        alg.check(self)
        return self


# --------------------------------------------------------------------------------------------- building
def _keys(name: str) -> str:
    return f"the keys of algorithm {name!r}: {', '.join(config_class(name).model_fields)}"


def _section(where: str, data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping (section), got {short_repr(data)}")
    return data


def _rules(data: Any) -> SmearRules:
    for key in _section("config key 'rules'", data):
        if key not in SmearRules.option_names():
            raise did_you_mean(key, "rules.", list(SmearRules.option_names()))
    try:
        return SmearRules.from_dict(data)
    except RuleOptionError as e:
        raise ConfigError(f"config section 'rules': {e}") from None


def _algorithm(data: Any) -> AlgorithmConfig:
    name = _section("config key 'algorithm'", data).get("name", DEFAULT_ALGORITHM)
    if not isinstance(name, str) or name not in ALGORITHMS:
        raise ConfigError(f"config key 'algorithm.name': {short_repr(name)} is not one of "
                          f"{', '.join(map(repr, ALGORITHMS))}")
    for key in data:
        owners = [repr(n) for n in ALGORITHMS if key in config_class(n).model_fields]
        if key not in config_class(name).model_fields and owners:
            raise ConfigError(f"unknown config key {short_repr('algorithm.' + str(key))}: algorithm {name!r} "
                              f"has no key {key!r} (a key of {', '.join(owners)}); {_keys(name)}")
    return validated(config_class(name), {**data, "name": name}, "algorithm.", _keys(name))


def from_dict(data: Any) -> TrainConfig:
    """The validated config of a mapping (the cross-field checks are :class:`TrainConfig`'s)."""
    data = dict(_section("config", {} if data is None else data))
    built = {k: f(data.pop(k)) for k, f in (("rules", _rules), ("algorithm", _algorithm)) if k in data}
    return validated(TrainConfig, {**data, **built})


def to_dict(cfg: Any) -> dict[str, Any]:
    """A plain (YAML/JSON-ready) dict of a config."""
    return cfg.model_dump(mode="python")


# --------------------------------------------------------------------------------------------- files
def load_config(path: str | Path | None = None, overrides: list[str] | None = None,
                variant: str | None = None) -> TrainConfig:
    """Load, merge the variant and ``--set`` overrides, validate (the training keys: a file's ``stages:`` are
    :mod:`training.pipeline`'s)."""
    data = load_raw(path, variant) if path is not None else {}
    data.pop("stages", None)
    return from_dict(apply_overrides(data, [o for o in overrides or [] if not o.startswith("stages.")]))


def dump_yaml(cfg: TrainConfig) -> str:
    """The resolved config as a loadable config file (a single ``default:`` block)."""
    return yaml.safe_dump({"default": to_dict(cfg)}, sort_keys=False)


def schema(stages: dict[str, type] | None = None) -> dict[str, Any]:
    """The JSON Schema of a config file (its ``default:`` block and variants), with every registered
    algorithm and, given, the stages' sections."""
    algorithms = Union[tuple(config_class(n) for n in ALGORITHMS)]  # noqa: UP007
    return schema_of(TrainConfig, algorithms, SmearRules, stages or {})


def help_text(stages: dict[str, type] | None = None) -> str:
    """Every field of the config with its type, default, bounds and documentation: each registered
    algorithm's keys, the training keys, then, given (``training.stages.stage_configs()``), each stage kind's
    section but ``train`` (the training keys)."""
    stages = {k: v for k, v in (stages or {}).items() if k != "train"}
    return help_text_of(TrainConfig, {n: config_class(n) for n in ALGORITHMS}, stages)
