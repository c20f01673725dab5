"""Training configuration: dataclasses with one docstring per field (CleanRL style), YAML loading,
validation and ``--set`` overrides.

A config file is YAML with a ``default:`` block and optional named variants (RL-Zoo style)::

    default:            # the base config; every key optional (missing keys take the defaults below)
      total_timesteps: 2_000_000
      algorithm: {name: ppo, learning_rate: 3.0e-4}
    small:              # a variant: merged over ``default`` when chosen with --variant small
      network: {hidden_sizes: [64, 64]}

The ``algorithm:`` section holds the keys of the algorithm its ``name`` picks: each algorithm declares its
config class (a subclass of :class:`~training.algorithms.config_base.AlgorithmConfig`, in a torch-free
module named by the registry :data:`training.algorithms.ALGORITHMS`) with the docs and bounds of its
fields, what it supports of the other sections (``supports_*`` flags, ``opponents``) and its own checks
(``validate``). This module names no algorithm.

Validation: an unknown or misspelled key is an error naming it and the closest valid key (under
``algorithm:``, a key the chosen algorithm does not have names the algorithm and its keys); a value of the
wrong type or outside its bounds (:data:`BOUNDS`, the one table of lower and upper bounds of the common
sections, and each algorithm config's ``bounds``; every float must be finite, nan and inf are refused) is an
error naming the key and the expected values; what the algorithm does not support is an error naming the
key and the algorithms that do; one rollout (``algorithm.n_steps * n_envs``) holds at most
:data:`MAX_ROLLOUT` decisions; ``selfplay.opponents`` and ``imitation.teacher`` must name agents that can
be built. ``smear-train --help-config`` prints every field with its default, bounds and documentation.

Stored configs (a run folder's ``config.yaml`` read by ``--resume``, a checkpoint's ``training``
metadata) written before the per-algorithm classes hold every algorithm's keys in one flat section: read
with ``stored=True`` (:func:`upgrade_stored`), the other algorithms' keys are dropped when they hold their
old default (:data:`LEGACY_ALGORITHM_DEFAULTS`) and are an error naming them otherwise.

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

from .algorithms import ALGORITHMS, config_class
from .algorithms.config_base import MAX_ROLLOUT, AlgorithmConfig, Bound, ConfigError, bounds_of

DEFAULT_ALGORITHM = "ppo"
"""``algorithm.name`` when a config does not give one."""


# --------------------------------------------------------------------------------------------- sections
@dataclass
class NetworkConfig:
    """The masked policy network: an MLP over the observation vector, 72 action logits (illegal ones masked
    out) and a value head."""

    hidden_sizes: list[int] = field(default_factory=lambda: [256, 256])
    """Hidden layer sizes of the policy MLP and of the value MLP (separate networks)."""
    activation: str = "relu"
    """Activation: "relu", "tanh" or "gelu"."""
    shared_trunk: bool = False
    """The value head sits on the policy MLP (one trunk, about half the network compute) instead of a
    separate value MLP (the algorithms whose "Supports" line under [algorithm: NAME] names it)."""
    suit_canonical: bool = False
    """The network sees each observation with its suits renamed into a canonical order (trump first once
    known, then by the observer's holding) and its suit actions (trump, discard, play) mapped back, so what
    it learns about one suit holds for all four (smear_env.observation.suit_orders; the algorithms whose
    "Supports" line names it)."""


@dataclass
class EnvConfig:
    """How experience is cut into episodes and rewarded: the table options of smear_env.table, which mean the
    same for every algorithm and for the envs."""

    episode: str = "hand"
    """Episode unit for returns: "hand" (each scored hand is an episode; the game carries on across episodes
    to its target, so all score situations are seen) or "game"."""
    reward: str = "score"
    """Reward: "score" (at each scored hand, own team's score change minus the other team's, in raw points,
    times score_scale), "win" (+1 / -1 at the end of the game; needs episode "game") or "winprob" (at each
    scored hand, the change of the own team's chance of winning the game that env.winprob gives: the game's
    result where the hand ends it; a game's rewards sum to its result minus the chance at its start, so this
    is the win objective with a reward at every hand; algorithms whose "Supports" line names it)."""
    score_scale: float = 0.25
    """Factor applied to the "score" reward (raw points) before learning; 0.25 = in units of the 4 points a
    hand awards."""
    win_bonus: float = 0.0
    """Extra reward +win_bonus / -win_bonus to the winning / losing team at the end of a game (with
    reward "score" and episode "game")."""
    max_cycles: int = 2000
    """R21: decisions after which a game is truncated (and a new one starts)."""
    winprob: str | None = None
    """With reward "winprob": the win-probability model (a file of python -m training.winprob, checked against
    the rules); set only with that reward."""


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
    algorithm: AlgorithmConfig = field(default_factory=lambda: config_class(DEFAULT_ALGORITHM)())
    """Algorithm and its hyperparameters (the keys of the algorithm that algorithm.name picks)."""
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
    (NetworkConfig, "activation"): ("relu", "tanh", "gelu"),
    (EnvConfig, "episode"): ("hand", "game"),
    (EnvConfig, "reward"): ("score", "win", "winprob"),
    (TrainConfig, "vec_env"): ("dummy", "subproc"),
}
"""(section, field) -> its allowed values (``algorithm.name``: the registry's names)."""


MAX_DECISIONS = 10**12
"""Largest learner-decision count of any budget or interval (about 3 years at 10,000 decisions/s)."""
# (section, field) -> its bounds: THE table of allowed values of every number field of the common sections
# (checked in build(); printed by --help-config); an algorithm's config class declares the bounds of its own
# fields (AlgorithmConfig.bounds, read through bound_of). Every float must be finite as well (nan / inf are
# refused everywhere).
BOUNDS: dict[tuple[type, str], Bound] = {
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


def _unknown_key(key: str, prefix: str, valid: list[str], valid_text: str | None = None) -> ConfigError:
    """"unknown config key ..." with the closest valid key and ``valid_text`` (default: the valid keys)."""
    full = short_repr(f"{prefix}{key}")
    close = difflib.get_close_matches(str(key)[:100], valid, n=1, cutoff=0.5)
    hint = f"; did you mean {prefix + close[0]!r}?" if close else ""
    if valid_text is None:
        valid_text = f"valid keys{' in ' + prefix.rstrip('.') if prefix else ''}: {', '.join(valid)}"
    return ConfigError(f"unknown config key {full}{hint} ({valid_text})")


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
        if tp is AlgorithmConfig:
            kwargs[key] = build_algorithm(value, full + ".")
            continue
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


def _keys_text(name: str, names: list[str]) -> str:
    return f"the keys of algorithm {name!r}: {', '.join(names)}"


def build_algorithm(data: Any, prefix: str = "algorithm.") -> AlgorithmConfig:
    """The ``algorithm:`` section: an instance of the config class registered for its ``name`` (default
    :data:`DEFAULT_ALGORITHM`), validated like any section. A key the chosen algorithm does not have is an
    error naming the key, the algorithm and its keys."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"config key {prefix.rstrip('.')!r}: expected a mapping (section), got "
                          f"{short_repr(data)}")
    full = f"{prefix}name"
    name = _check_value(full, data.get("name", DEFAULT_ALGORITHM), str)
    if name not in ALGORITHMS:
        raise ConfigError(f"config key {full!r}: {short_repr(name)} is not one of "
                          f"{', '.join(map(repr, ALGORITHMS))}")
    cls = config_class(name)
    names = [f.name for f in dataclasses.fields(cls)]
    for key in data:
        if key not in names:
            owners = [n for n in ALGORITHMS if n != name and key in _field_names(n)]
            if owners:
                raise ConfigError(
                    f"unknown config key {short_repr(prefix + str(key))}: algorithm {name!r} has no key "
                    f"{key!r} (a key of {', '.join(map(repr, owners))}); {_keys_text(name, names)}")
            raise _unknown_key(key, prefix, names, _keys_text(name, names))
    return build(cls, data, prefix)


def _field_names(name: str) -> list[str]:
    """The keys of registered algorithm ``name`` ([] when its config class cannot be imported)."""
    try:
        return [f.name for f in dataclasses.fields(config_class(name))]
    except (ImportError, AttributeError, TypeError, ValueError):
        return []


def _is_int_type(tp: Any) -> bool:
    args = [a for a in typing.get_args(tp) if a is not type(None)] or [tp]
    inner = [typing.get_args(a)[-1] if typing.get_origin(a) in (list, dict) else a for a in args]
    return all(a is int for a in inner)


def bound_of(cls: type, key: str) -> Bound | None:
    """The bounds of field ``cls.key``: from :data:`BOUNDS`, or for an algorithm's config class from its own
    declaration (:func:`~training.algorithms.config_base.bounds_of`); None for a field without bounds."""
    if isinstance(cls, type) and issubclass(cls, AlgorithmConfig):
        return bounds_of(cls).get(key)
    return BOUNDS.get((cls, key))


def bound_text(cls: type, key: str) -> str:
    """What field ``cls.key`` allows, from :func:`bound_of` ("" for a field without bounds)."""
    b = bound_of(cls, key)
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
    b = bound_of(cls, key)
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


def algorithms_with(flag: str) -> list[str]:
    """The registered algorithms whose config class sets ``flag`` (e.g. ``"supports_init_from"``)."""
    return [n for n in ALGORITHMS if getattr(config_class(n), flag)]


def _unsupported(key: str, name: str, flag: str, hint: str = "") -> ConfigError:
    allowed = ", ".join(map(repr, algorithms_with(flag))) or "none"
    return ConfigError(f"config key {key!r}: algorithm {name!r} does not support it (allowed with: "
                       f"{allowed}){hint}")


def _check_winprob(cfg: TrainConfig) -> None:
    """env.reward "winprob" and env.winprob go together, with an algorithm that takes them."""
    env, name = cfg.env, cfg.algorithm.name
    if env.reward != "winprob":
        if env.winprob is not None:
            raise ConfigError(f"config key 'env.winprob': set only with env.reward 'winprob' (env.reward is "
                              f"{env.reward!r}); remove it or set env.reward: winprob")
        return
    if not cfg.algorithm.supports_winprob:
        raise _unsupported("env.reward", name, "supports_winprob", "; set env.reward: score")
    if env.win_bonus != 0:
        raise ConfigError("config key 'env.win_bonus': only with env.reward 'score' (env.reward is "
                          "'winprob')")
    if not env.winprob:
        raise ConfigError("config key 'env.winprob': env.reward 'winprob' needs the path of a "
                          "win-probability model (python -m training.winprob)")
    # (the file itself is read, and checked against the rules, when the trainer starts: like init_from)


def validate(cfg: TrainConfig) -> TrainConfig:
    """Cross-field checks: the common ones, what the algorithm's config class says it supports (its
    ``supports_*`` flags and ``opponents``), then the class's own :meth:`AlgorithmConfig.validate`."""
    alg = cfg.algorithm
    name = alg.name
    if type(alg) is not config_class(name):
        raise ConfigError(f"config section 'algorithm': a {type(alg).__name__} does not hold the keys of "
                          f"algorithm {name!r} ({config_class(name).__name__})")
    if cfg.env.reward == "win" and cfg.env.episode != "game":
        raise ConfigError("config key 'env.reward': 'win' needs env.episode 'game'")
    _check_winprob(cfg)
    if cfg.network.suit_canonical and not alg.supports_suit_canonical:
        raise _unsupported("network.suit_canonical", name, "supports_suit_canonical")
    if cfg.network.shared_trunk and not alg.supports_shared_trunk:
        raise _unsupported("network.shared_trunk", name, "supports_shared_trunk")
    if not cfg.selfplay.opponents:
        raise ConfigError("config key 'selfplay.opponents': needs at least one opponent")
    for k, p in cfg.selfplay.opponents.items():
        if p < 0:
            raise ConfigError(f"config key 'selfplay.opponents.{k}': probability {p} is negative")
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
    alg.validate(cfg)
    return cfg


def to_dict(cfg: Any) -> dict[str, Any]:
    """A plain (YAML/JSON-ready) dict of a config."""
    return dataclasses.asdict(cfg)


def from_dict(data: dict[str, Any], stored: bool = False) -> TrainConfig:
    """The validated config of a mapping; ``stored``: the mapping is a config that smear-train wrote (a run
    folder's ``config.yaml``, a checkpoint's ``training`` metadata), read through :func:`upgrade_stored`."""
    return validate(build(TrainConfig, upgrade_stored(data) if stored else data))


# --------------------------------------------------------------------------------------------- stored configs
LEGACY_ALGORITHM_DEFAULTS: dict[str, Any] = {
    "learning_rate": 3.0e-4, "anneal_lr": True, "n_steps": 128, "batch_size": 2048, "n_epochs": 4,
    "gamma": 1.0, "gae_lambda": 0.95, "clip_range": 0.2, "ent_coef": 0.01, "ent_coef_final": None,
    "vf_coef": 0.5, "max_grad_norm": 0.5, "target_kl": None, "norm_adv": True, "epsilon": 0.05,
}
"""The keys and defaults of the one ``algorithm:`` section of every algorithm that configs stored before the
per-algorithm config classes hold (``to_dict`` of it: run folders' ``config.yaml``, checkpoints' ``training``
metadata, the shipped checkpoints included)."""


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
        return data  # build() names the bad name
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
    path: str | Path | None = None, overrides: list[str] | None = None, variant: str | None = None,
    stored: bool = False,
) -> TrainConfig:
    """Load, merge the variant and ``--set`` overrides, validate. ``stored``: ``path`` is a config that
    smear-train wrote (a run folder's ``config.yaml``, read by ``--resume``): it is read through
    :func:`upgrade_stored` (for the algorithm the overrides leave), the overrides are checked as given."""
    data = load_raw(path, variant) if path is not None else {}
    if stored:
        after = apply_overrides(data, overrides or [])
        section = after.get("algorithm")
        name = section.get("name", DEFAULT_ALGORITHM) if isinstance(section, dict) else None
        data = upgrade_stored(data, name)
    data = apply_overrides(data, overrides or [])
    return from_dict(data)


def dump_yaml(cfg: TrainConfig) -> str:
    """The resolved config as a loadable config file (a single ``default:`` block)."""
    return yaml.safe_dump({"default": to_dict(cfg)}, sort_keys=False)


_FLAGS = (("network.suit_canonical", "supports_suit_canonical"),
          ("network.shared_trunk", "supports_shared_trunk"),
          ("init_from", "supports_init_from"), ("imitation.teacher", "supports_imitation"),
          ("env.reward winprob", "supports_winprob"))
"""(config key, AlgorithmConfig flag) of what an algorithm may or may not support."""


def _supports_text(cls: type[AlgorithmConfig]) -> str:
    """What an algorithm supports of the rest of the config, from its config class's flags."""
    keys = [key for key, flag in _FLAGS if getattr(cls, flag)]
    if cls.opponents is not None:
        opp = ", ".join(cls.opponents)
    else:
        opp = "self, snapshot or any agent spec" if cls.supports_snapshot else "self or any agent spec"
    keys_text = ", ".join(keys) or "none of " + ", ".join(k for k, _ in _FLAGS)
    return f"Supports: {keys_text}; selfplay.opponents: {opp}."


def help_text() -> str:
    """Every field of the config with its type, default and documentation; the ``algorithm:`` section's
    ``name``, then each registered algorithm's keys (a key that reads as an earlier algorithm's is documented
    once)."""
    lines = [
        "Config file: YAML with a 'default:' block (plus optional named variants, chosen with --variant).",
        "Override any field with --set dotted.key=value (value parsed as YAML).",
        "",
    ]

    def field_lines(cls: type, f: dataclasses.Field, prefix: str, value: Any, docs: dict[str, str],
                    choices: tuple[str, ...] | None = None) -> tuple[str, list[str]]:
        """(the line of field ``f``: key, type, default, choices, bounds; its documentation lines)."""
        tp = _hints(cls)[f.name]
        ch = f" (one of {', '.join(choices)})" if choices else ""
        bounds = bound_text(cls, f.name)
        bounds = f" [{bounds}]" if bounds else ""
        doc = docs.get(f.name, "(undocumented)")
        return (f"  {prefix}{f.name}: {type_name(tp)} = {value!r}{ch}{bounds}",
                [f"      {line}" for line in textwrap.wrap(doc, 100)])

    def algorithm_section(prefix: str) -> None:
        name_field = next(f for f in dataclasses.fields(AlgorithmConfig) if f.name == "name")
        head, doc = field_lines(AlgorithmConfig, name_field, prefix, DEFAULT_ALGORITHM,
                                field_docs(AlgorithmConfig), tuple(ALGORITHMS))
        lines.extend([head, *doc])
        seen: dict[tuple[str, tuple[str, ...]], str] = {}  # a key's lines -> the algorithm that printed them
        keys_of: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        for name in ALGORITHMS:
            cls = config_class(name)
            lines.append("")
            summary = f"[algorithm: {name}]  " + " ".join((inspect.getdoc(cls) or "").split())
            lines.extend(textwrap.wrap(summary, 110, initial_indent="  ", subsequent_indent="      "))
            lines.extend(textwrap.wrap(_supports_text(cls), 100, initial_indent="      ",
                                       subsequent_indent="      "))
            docs, default = field_docs(cls), cls()
            keys = [field_lines(cls, f, prefix, getattr(default, f.name), docs)
                    for f in dataclasses.fields(cls) if f.name != "name"]
            keys_of[name] = [(h, tuple(d)) for h, d in keys]
            same = next((o for o, ks in keys_of.items() if o != name and ks == keys_of[name]), None)
            if same is not None:
                lines.append(f"      Keys: those of [algorithm: {same}].")
                continue
            for head, doc in keys:
                first = seen.setdefault((head, tuple(doc)), name)
                lines.extend([head + f"  (as in [algorithm: {first}])"] if first != name else [head, *doc])

    def walk(cls: type, prefix: str, default: Any) -> None:
        docs = field_docs(cls)
        hints = _hints(cls)
        for f in dataclasses.fields(cls):
            tp = hints[f.name]
            value = getattr(default, f.name)
            if tp is AlgorithmConfig:
                lines.append(f"[{prefix}{f.name}]  {docs.get(f.name, '')}")
                algorithm_section(f"{prefix}{f.name}.")
                lines.append("")
                continue
            if dataclasses.is_dataclass(tp):
                lines.append(f"[{prefix}{f.name}]  {docs.get(f.name, '')}")
                walk(tp, f"{prefix}{f.name}.", value)
                lines.append("")
                continue
            head, doc = field_lines(cls, f, prefix, value, docs, CHOICES.get((cls, f.name)))
            lines.extend([head, *doc])

    walk(TrainConfig, "", TrainConfig())
    return "\n".join(lines)
