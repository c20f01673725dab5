"""Training configuration: one pydantic model per section, one docstring per field (CleanRL style).

A config file is YAML with a ``default:`` block and optional named variants (RL-Zoo style)::

    default:            # the base config; every key optional (missing keys take the defaults below)
      total_timesteps: 2_000_000
      algorithm: {name: ppo, learning_rate: 3.0e-4}
    small:              # a variant: merged over ``default`` when chosen with --variant small
      network: {hidden_sizes: [64, 64]}

The ``algorithm:`` section holds the keys of the algorithm its ``name`` picks: each algorithm declares its
config model (a subclass of :class:`~training.algorithms.config_base.AlgorithmConfig`, in a torch-free
module named by the registry :data:`training.algorithms.ALGORITHMS`) with the docs and bounds of its
fields, what it supports of the other sections (``supports_*`` flags, ``opponents``) and its own checks
(``check``). This module names no algorithm. A config may also list the stages of a pipeline
(``stages:``, :mod:`training.stages`); the keys here are those of its training stage.

Reading files, ``--set``, error messages, the JSON Schema and ``--help-config`` are
:mod:`training.config_files`; this module holds the fields and the checks across fields (:func:`validate`).
Stored configs (a run folder's ``config.yaml`` read by ``--resume``, a checkpoint's ``training`` metadata)
written before the per-algorithm classes hold every algorithm's keys in one flat section: read with
``stored=True`` (:func:`upgrade_stored`), the other algorithms' keys are dropped when they hold their old
default (:data:`LEGACY_ALGORITHM_DEFAULTS`) and are an error naming them otherwise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, Union

import yaml
from pydantic import BeforeValidator, Field, SerializeAsAny, SkipValidation

from smear_env.actions import short_repr
from smear_env.agents.registry import make_agent
from smear_env.config import RuleOptionError, SmearRules

from .algorithms import ALGORITHMS, config_class
from .algorithms.config_base import (
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
from .config_files import (
    apply_overrides,
    deep_merge,
    did_you_mean,
    help_text_of,
    load_raw,
    parse_override,
    read_text_bounded,
    safe_load_bounded,
    schema_of,
    validated,
)

__all__ = ["MAX_DECISIONS", "MAX_ROLLOUT", "ConfigError", "TrainConfig", "apply_overrides", "deep_merge",
           "dump_yaml", "from_dict", "help_text", "load_config", "load_raw", "parse_override",
           "read_text_bounded", "safe_load_bounded", "schema", "to_dict", "upgrade_stored", "validate"]

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
    it learns about one suit holds for all four (smear_env.observation.suit_orders; the algorithms whose
    "Supports" line names it)."""


class EnvConfig(Section):
    """How experience is cut into episodes and rewarded: the table options of smear_env.table, which mean the
    same for every algorithm and for the envs."""

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


# --------------------------------------------------------------------------------------------- building
def _rules(data: Any) -> SmearRules:
    if not isinstance(data, dict):
        raise ConfigError(f"config key 'rules': expected a mapping (section), got {short_repr(data)}")
    for key in data:
        if key not in SmearRules.option_names():
            raise did_you_mean(key, "rules.", list(SmearRules.option_names()))
    try:
        return SmearRules.from_dict(data)
    except RuleOptionError as e:
        raise ConfigError(f"config section 'rules': {e}") from None


def _algorithm(data: Any) -> AlgorithmConfig:
    if not isinstance(data, dict):
        raise ConfigError(f"config key 'algorithm': expected a mapping (section), got {short_repr(data)}")
    name = data.get("name", DEFAULT_ALGORITHM)
    if not isinstance(name, str) or name not in ALGORITHMS:
        raise ConfigError(f"config key 'algorithm.name': {short_repr(name)} is not one of "
                          f"{', '.join(map(repr, ALGORITHMS))}")
    cls = config_class(name)
    for key in data:
        owners = [n for n in ALGORITHMS if n != name and key in _field_names(n)]
        if key not in cls.model_fields and owners:
            raise ConfigError(f"unknown config key {short_repr('algorithm.' + str(key))}: algorithm {name!r} "
                              f"has no key {key!r} (a key of {', '.join(map(repr, owners))}); "
                              f"{_keys_text(name, list(cls.model_fields))}")
    return validated(cls, {**data, "name": name}, "algorithm.", _keys_text(name, list(cls.model_fields)))


def _keys_text(name: str, names: list[str]) -> str:
    return f"the keys of algorithm {name!r}: {', '.join(names)}"


def _field_names(name: str) -> list[str]:
    """The keys of registered algorithm ``name`` ([] when its config class cannot be imported)."""
    try:
        return list(config_class(name).model_fields)
    except (ImportError, AttributeError, TypeError, ValueError):
        return []


def from_dict(data: Any, stored: bool = False) -> TrainConfig:
    """The validated config of a mapping; ``stored``: the mapping is a config that smear-train wrote (a run
    folder's ``config.yaml``, a checkpoint's ``training`` metadata), read through :func:`upgrade_stored`."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"config: expected a mapping (section), got {short_repr(data)}")
    data = dict(upgrade_stored(data) if stored else data)
    built = {k: f(data.pop(k)) for k, f in (("rules", _rules), ("algorithm", _algorithm)) if k in data}
    return validate(validated(TrainConfig, {**data, **built}))


def to_dict(cfg: Any) -> dict[str, Any]:
    """A plain (YAML/JSON-ready) dict of a config."""
    return cfg.model_dump(mode="python")


def check_agent_spec(spec: str, key: str, rules: SmearRules) -> None:
    """Raise ConfigError naming ``key`` unless ``spec`` builds an agent (``cmd:`` bots are not started
    here: only their spec is checked for a command)."""
    if spec.startswith("cmd"):
        if not spec.partition(":")[2].strip():
            raise ConfigError(f"config key {key!r}: agent spec {short_repr(spec)} has no command")
        return

    try:
        make_agent(spec, rules)
    except (ValueError, TypeError, OSError, ImportError) as e:
        text = str(e)
        raise ConfigError(f"config key {key!r}: {text if len(text) <= 500 else text[:497] + '...'}") from None


def algorithms_with(flag: str) -> list[str]:
    """The registered algorithms whose config class sets ``flag`` (e.g. ``"supports_init_from"``)."""
    return [n for n in ALGORITHMS if getattr(config_class(n), flag)]


def _unsupported(key: str, name: str, flag: str, hint: str = "") -> ConfigError:
    allowed = ", ".join(map(repr, algorithms_with(flag))) or "none"
    return ConfigError(f"config key {key!r}: algorithm {name!r} does not support it (allowed with: "
                       f"{allowed}){hint}")


def validate(cfg: TrainConfig) -> TrainConfig:
    """Cross-field checks: the common ones, what the algorithm's config class says it supports (its
    ``supports_*`` flags and ``opponents``), then the class's own :meth:`AlgorithmConfig.check`."""
    alg = cfg.algorithm
    name = alg.name
    if type(alg) is not config_class(name):
        raise ConfigError(f"config section 'algorithm': a {type(alg).__name__} does not hold the keys of "
                          f"algorithm {name!r} ({config_class(name).__name__})")
    if cfg.env.reward == "win" and cfg.env.episode != "game":
        raise ConfigError("config key 'env.reward': 'win' needs env.episode 'game'")
    if cfg.network.suit_canonical and not alg.supports_suit_canonical:
        raise _unsupported("network.suit_canonical", name, "supports_suit_canonical")
    if cfg.network.shared_trunk and not alg.supports_shared_trunk:
        raise _unsupported("network.shared_trunk", name, "supports_shared_trunk")
    if sum(cfg.selfplay.opponents.values()) <= 0:
        raise ConfigError("config key 'selfplay.opponents': probabilities sum to 0")
    if cfg.selfplay.opponents.get("snapshot", 0) > 0 and not alg.supports_snapshot:
        raise _unsupported("selfplay.opponents.snapshot", name, "supports_snapshot")
    if cfg.env.win_bonus != 0 and not alg.supports_win_bonus:
        raise _unsupported("env.win_bonus", name, "supports_win_bonus", "; set env.win_bonus: 0")
    if alg.opponents is not None:
        bad = [k for k, p in cfg.selfplay.opponents.items() if k not in alg.opponents and p > 0]
        if bad:
            raise ConfigError(f"config key 'selfplay.opponents': {', '.join(map(repr, bad))} not available "
                              f"with algorithm {name!r} (allowed: {', '.join(map(repr, alg.opponents))})")
    for k in cfg.selfplay.opponents:
        if k not in ("self", "snapshot"):
            check_agent_spec(k, f"selfplay.opponents.{k}", cfg.rules)
    if cfg.imitation.teacher is not None:
        if not alg.supports_imitation:
            raise _unsupported("imitation.teacher", name, "supports_imitation",
                               "; set imitation.teacher: null")
        check_agent_spec(cfg.imitation.teacher, "imitation.teacher", cfg.rules)
        if cfg.init_from is not None:
            raise ConfigError("config keys 'init_from' and 'imitation.teacher': choose one warm start "
                              "(set imitation.teacher: null to start from the checkpoint)")
    if cfg.init_from is not None and not alg.supports_init_from:
        raise _unsupported("init_from", name, "supports_init_from")
    alg.check(cfg)
    return cfg


# --------------------------------------------------------------------------------------------- stored configs
LEGACY_ALGORITHM_DEFAULTS: dict[str, Any] = {
    "learning_rate": 3.0e-4, "anneal_lr": True, "n_steps": 128, "batch_size": 2048, "n_epochs": 4,
    "gamma": 1.0, "gae_lambda": 0.95, "clip_range": 0.2, "ent_coef": 0.01, "ent_coef_final": None,
    "vf_coef": 0.5, "max_grad_norm": 0.5, "target_kl": None, "norm_adv": True, "epsilon": 0.05,
}
"""The keys and defaults of the one ``algorithm:`` section of every algorithm that configs stored before the
per-algorithm config classes hold (run folders' ``config.yaml``, checkpoints' ``training`` metadata, the
shipped checkpoints included)."""


def _same_value(v: Any, default: Any) -> bool:
    if default is None or isinstance(default, bool) or isinstance(v, bool):
        return v is default
    return isinstance(v, int | float) and v == default


def upgrade_stored(data: Any, name: str | None = None) -> Any:
    """A stored config mapping (see :func:`from_dict`) as today's: in its ``algorithm:`` section, a key of the
    old flat section that algorithm ``name`` (default: the section's own ``name``) does not have is dropped
    when it holds the old default (:data:`LEGACY_ALGORITHM_DEFAULTS`), and is a ConfigError naming it
    otherwise (its value would be lost). Anything else is left to validation."""
    if not isinstance(data, dict) or not isinstance(data.get("algorithm"), dict):
        return data
    section = data["algorithm"]
    name = section.get("name", DEFAULT_ALGORITHM) if name is None else name
    if not isinstance(name, str) or name not in ALGORITHMS:
        return data  # validation names the bad name
    names = _field_names(name)
    kept = {}
    for key, v in section.items():
        if key in names or key not in LEGACY_ALGORITHM_DEFAULTS:
            kept[key] = v
        elif not _same_value(v, LEGACY_ALGORITHM_DEFAULTS[key]):
            raise ConfigError(
                f"stored config key 'algorithm.{key}': {short_repr(v)} is not a key of algorithm {name!r}, "
                f"and only the old default {LEGACY_ALGORITHM_DEFAULTS[key]!r} can be dropped without "
                f"changing the run; remove the key to use the config with {name!r} "
                f"({_keys_text(name, names)})")
    return {**data, "algorithm": kept}


# --------------------------------------------------------------------------------------------- files
def load_config(
    path: str | Path | None = None, overrides: list[str] | None = None, variant: str | None = None,
    stored: bool = False,
) -> TrainConfig:
    """Load, merge the variant and ``--set`` overrides, validate (the keys of the training stage: a file's
    ``stages:`` are :func:`training.stages.load_pipeline`'s). ``stored``: ``path`` is a config that
    smear-train wrote (a run folder's ``config.yaml``, read by ``--resume``): it is read through
    :func:`upgrade_stored` (for the algorithm the overrides leave), the overrides are checked as given."""
    data = load_raw(path, variant) if path is not None else {}
    data.pop("stages", None)
    if stored:
        after = apply_overrides(data, overrides or [])
        section = after.get("algorithm")
        name = section.get("name", DEFAULT_ALGORITHM) if isinstance(section, dict) else None
        data = upgrade_stored(data, name)
    return from_dict(apply_overrides(data, [o for o in overrides or [] if not o.startswith("stages.")]))


def dump_yaml(cfg: TrainConfig) -> str:
    """The resolved config as a loadable config file (a single ``default:`` block)."""
    return yaml.safe_dump({"default": to_dict(cfg)}, sort_keys=False)


def algorithm_union() -> Any:
    """The ``algorithm:`` section's type for the JSON Schema: one model per registered algorithm, picked by
    ``name``."""

    classes = tuple(config_class(n) for n in ALGORITHMS)
    return Annotated[Union[classes], Field(discriminator="name")]  # noqa: UP007


def schema(stages: dict[str, type] | None = None) -> dict[str, Any]:
    """The JSON Schema of a config file (its ``default:`` block and variants), with every registered
    algorithm and, given, the stages' sections."""
    return schema_of(TrainConfig, algorithm_union(), SmearRules, stages or {})


def help_text() -> str:
    """Every field of the config with its type, default, bounds and documentation: each registered
    algorithm's ``algorithm:`` keys, the training keys, then each stage kind's section (the ``train`` stage's
    keys are the training keys)."""
    from .stages import stage_configs  # lazy: import cycle (.importlinter)

    stages = {k: v for k, v in stage_configs().items() if k != "train"}
    return help_text_of(TrainConfig, {n: config_class(n) for n in ALGORITHMS}, stages)
