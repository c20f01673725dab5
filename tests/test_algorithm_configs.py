"""One config class per algorithm (issue 21, training configs): each algorithm's ``algorithm:`` keys, docs,
bounds and capabilities are declared by its own torch-free config class; the cross-field checks name no
algorithm; a new algorithm is its module plus one registry line."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pytest
from pydantic import Field

from training import config as C
from training.algorithms import ALGORITHMS, Algorithm, config_class
from training.config import ConfigError, from_dict, help_text, load_config
from training.config_files import bound_text
from training.configs.base import AlgorithmConfig, Fraction

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ("quickstart", "default", "scratch", "vector_ppo", "dmc", "rllib_ppo")

# A run folder's config.yaml as smear-train wrote it before the per-algorithm config classes (one flat
# algorithm section with every algorithm's keys; no release wrote one): `dump_yaml(load_config(...dmc.yaml))`.
OLD_DMC_RUN_CONFIG = """\
default:
  rules: {kitty_size: 3, target_score: 15, high_low: ace_seven, game_point_tie: nobody, all_pass: redeal,
          win_requires_bid: false, cap_defenders: false}
  algorithm:
    name: dmc
    learning_rate: 0.0003
    anneal_lr: false
    n_steps: 32
    batch_size: 1024
    n_epochs: 1
    gamma: 1.0
    gae_lambda: 0.95
    clip_range: 0.2
    ent_coef: 0.01
    ent_coef_final: null
    vf_coef: 0.5
    max_grad_norm: 1.0
    target_kl: null
    norm_adv: true
    epsilon: 0.05
  network: {hidden_sizes: [256, 256], activation: relu, shared_trunk: false, suit_canonical: true}
  env: {episode: hand, reward: score, score_scale: 0.25, win_bonus: 0.0, max_cycles: 2000}
  selfplay:
    opponents: {self: 0.5, heuristic: 0.4, random: 0.1}
    snapshot_interval: 250000
    pool_size: 10
    partner_refresh_interval: 50000
  imitation: {teacher: null, decisions: 500000, epochs: 3, batch_size: 1024, learning_rate: 0.001,
              epsilon: 0.0, workers: 2, batched: false}
  eval: {interval: 4000000, games: 200, opponents: [random, heuristic], target_score: null}
  output: {checkpoint_interval: 2000000, keep_checkpoints: 0, tensorboard: true, progress: true}
  ray: {address: null, num_env_runners: 1, num_cpus: null}
  total_timesteps: 40000000
  time_limit: 3600.0
  n_envs: 8
  vec_env: dummy
  torch_threads: 1
  seed: 3
  init_from: null
"""


# --------------------------------------------------------------------------------------------- classes
def test_each_algorithm_has_its_own_config_class_with_only_its_keys():
    keys = {name: set(config_class(name).model_fields) for name in ALGORITHMS}
    assert "epsilon" in keys["dmc"] and "epsilon" not in keys["ppo"] | keys["vector_ppo"]
    assert not {"gamma", "clip_range", "ent_coef", "target_kl", "norm_adv"} & keys["dmc"]
    assert {"target_kl", "norm_adv"}.isdisjoint(keys["rllib_ppo"])  # RLlib has no counterpart
    added = {"overlap"}
    assert keys["ppo"] == keys["vector_ppo"] - added == keys["maskable_ppo"]
    for name in ALGORITHMS:
        cls = config_class(name)
        assert issubclass(cls, AlgorithmConfig) and cls().name == name
        cfg = load_config(None, [f"algorithm.name={name}", "selfplay.opponents={self: 1}"])
        assert cfg.algorithm == cls()


ADDED_SINCE_THE_SPLIT = {"dmc": {"bid_epsilon"}, "vector_ppo": {"overlap"}}
"""Keys an algorithm gained after the flat section was split (a shipped checkpoint's config may lack them)."""


def test_every_number_field_has_bounds_and_every_field_a_doc_in_help():
    text = help_text()
    for name in ALGORITHMS:
        cls = config_class(name)
        schema = cls.model_json_schema()
        assert f"[algorithm: {name}]  " in text
        for key, info in cls.model_fields.items():
            assert info.description, f"{cls.__name__}.{key} has no docstring"
            assert f"  algorithm.{key}: " in text
            node = schema["properties"][key]
            kinds = {o.get("type") for o in node.get("anyOf", [node])}
            if kinds & {"integer", "number"}:
                bounds = bound_text(node, schema.get("$defs", {}))
                assert bounds, f"{name}: algorithm.{key} has no bounds"
                assert f"[{bounds}]" in text
    assert "algorithm.epsilon: float = 0.05 [a number from 0 to 1]" in text
    assert "Supports: imitation, suit_canonical, win_bonus." not in text  # dmc: no imitation
    assert "[algorithm: dmc]" in text and "Supports: suit_canonical, win_bonus." in text


def test_the_cross_field_checks_name_no_algorithm():
    """TrainConfig's checks ask the config class (flags, opponents, its own hook): no algorithm name."""
    src = inspect.getsource(C.TrainConfig)
    for name in ALGORITHMS:
        assert f'"{name}"' not in src and f"'{name}'" not in src, name


def test_no_import_cycle_among_the_training_modules():
    from tests.test_import_cycles import cycles, import_graph

    graph = import_graph("training")
    assert "training.configs" in graph["training.config"] and not cycles(graph)


def test_validating_a_config_imports_neither_torch_nor_sb3():
    code = ("import sys; import training.config as c\n"
            "for f in ('quickstart', 'default', 'scratch', 'dmc', 'rllib_ppo'):\n"
            "    c.load_config(f'configs/{f}.yaml')\n"
            "c.help_text()\n"
            "bad = [m for m in ('torch', 'stable_baselines3', 'sb3_contrib', 'ray') if m in sys.modules]\n"
            "print(bad)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_shipped_configs_load_with_the_same_values():
    for name in CONFIGS:
        raw = C.load_raw(ROOT / "configs" / f"{name}.yaml")
        cfg = load_config(ROOT / "configs" / f"{name}.yaml")
        for key, value in raw.get("algorithm", {}).items():
            assert getattr(cfg.algorithm, key) == value, (name, key)


# --------------------------------------------------------------------------------------------- errors
def test_a_key_of_another_algorithm_names_the_key_the_algorithm_and_its_keys():
    with pytest.raises(ConfigError) as e:
        load_config(ROOT / "configs" / "quickstart.yaml", ["algorithm.epsilon=0.1"])
    msg = str(e.value)
    assert "'algorithm.epsilon'" in msg and "algorithm 'vector_ppo' has no key 'epsilon'" in msg
    assert "a key of 'dmc'" in msg and "the keys of algorithm 'vector_ppo': name, learning_rate" in msg
    with pytest.raises(ConfigError, match=r"algorithm 'dmc' has no key 'gamma' \(a key of 'ppo', "):
        load_config(ROOT / "configs" / "dmc.yaml", ["algorithm.gamma=0.9"])
    with pytest.raises(ConfigError, match=r"mean 'algorithm.epsilon'\? \(the keys of algorithm 'dmc'"):
        load_config(ROOT / "configs" / "dmc.yaml", ["algorithm.epsilom=0.1"])


def test_what_an_algorithm_does_not_support_names_the_ones_that_do():
    cases = [
        (["algorithm.name=ppo", "network.shared_trunk=true"],
         "config key 'network.shared_trunk': algorithm 'ppo' does not support it (allowed with: "
         "'vector_ppo')"),
        (["algorithm.name=maskable_ppo", "network.suit_canonical=true"],
         "config key 'network.suit_canonical': algorithm 'maskable_ppo' does not support it (allowed with: "
         "'ppo', 'vector_ppo', 'dmc')"),
        (["algorithm.name=dmc", "selfplay.opponents={self: 1}", "imitation.teacher=heuristic"],
         "config key 'imitation.teacher': algorithm 'dmc' does not support it (allowed with: 'ppo', "
         "'maskable_ppo', 'vector_ppo', 'rllib_ppo'); set imitation.teacher: null"),
        (["algorithm.name=dmc", "selfplay.opponents={self: 0.5, snapshot: 0.5}"],
         "config key 'selfplay.opponents.snapshot': algorithm 'dmc' does not support it (allowed with: "
         "'ppo', 'maskable_ppo', 'vector_ppo')"),
        (["algorithm.name=rllib_ppo", "selfplay.opponents={self: 1}", "init_from=default"],
         "config key 'init_from': algorithm 'rllib_ppo' does not support it (allowed with: 'ppo', "
         "'vector_ppo')"),
        # rllib_ppo refuses what its RLlib PPO does not do (these were once only printed or ignored)
        (["algorithm.name=rllib_ppo", "selfplay.opponents={self: 0.5, heuristic: 0.5}"],
         "config key 'selfplay.opponents': 'heuristic' not available with algorithm 'rllib_ppo' (allowed: "
         "'self')"),
        (["algorithm.name=rllib_ppo", "selfplay.opponents={self: 0.5, snapshot: 0.5}"],
         "config key 'selfplay.opponents.snapshot': algorithm 'rllib_ppo' does not support it (allowed with: "
         "'ppo', 'maskable_ppo', 'vector_ppo')"),
        (["algorithm.name=rllib_ppo", "selfplay.opponents={self: 1}", "env.episode=game", "env.win_bonus=1"],
         "config key 'env.win_bonus': algorithm 'rllib_ppo' does not support it (allowed with: 'ppo', "
         "'maskable_ppo', 'vector_ppo', 'dmc'); set env.win_bonus: 0"),
        (["algorithm.name=rllib_ppo", "selfplay.opponents={self: 1}", "network.activation=gelu"],
         "config key 'network.activation': 'gelu' is not available with rllib_ppo; allowed values: 'relu', "
         "'tanh'"),
    ]
    for over, message in cases:
        with pytest.raises(ConfigError) as e:
            load_config(None, over)
        assert str(e.value) == message
    ok = ["algorithm.name=dmc", "selfplay.opponents={self: 1}", "network.suit_canonical=true",
          "algorithm.epsilon=0.1"]
    assert load_config(None, ok).algorithm.epsilon == 0.1


def test_a_config_section_of_the_wrong_class_is_refused():
    wrong = config_class("dmc").model_construct(name="ppo")
    with pytest.raises(ValueError, match="a DMCConfig does not hold the keys of algorithm 'ppo'"):
        C.TrainConfig(algorithm=wrong)


# --------------------------------------------------------------------------------------------- stored
def test_shipped_checkpoints_stored_configs_load():
    from smear_env.agents.checkpoint import read_checkpoint

    for name in ("smear_v0_default", "smear_v0_scratch"):
        _, meta = read_checkpoint(ROOT / "checkpoints" / f"{name}.safetensors")
        cfg = from_dict(meta["training"])
        assert cfg.algorithm.name in ALGORITHMS
        if meta["algorithm"] in ("distill", "expert_iteration"):  # its stored config trained its init
            assert meta[meta["algorithm"]]
        else:
            assert cfg.algorithm.name == meta["algorithm"]
        stored = meta["training"]["algorithm"]
        new_keys = {k: getattr(config_class(cfg.algorithm.name)(), k)
                    for k in ADDED_SINCE_THE_SPLIT.get(cfg.algorithm.name, ()) if k not in stored}
        assert C.to_dict(cfg)["algorithm"] == {**stored, **new_keys}  # keys added since: their defaults


def test_resume_of_an_old_flat_run_config_names_the_foreign_key(tmp_path, capsys):
    """A run folder's config.yaml of the flat algorithm section (before the per-algorithm config classes; no
    release wrote one) is read like any config: --resume stops with the key of another algorithm named."""
    from training.train import main

    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text(OLD_DMC_RUN_CONFIG)
    assert main(["--resume", "--run-dir", str(run)]) == 2
    err = capsys.readouterr().err
    assert "unknown config key 'algorithm.gamma': algorithm 'dmc' has no key 'gamma' (a key of 'ppo'" in err


# --------------------------------------------------------------------------------------------- new algorithm
class TinyConfig(AlgorithmConfig):
    """A test algorithm: counts decisions without learning."""

    name: Literal["tiny"] = "tiny"
    """Algorithm name."""
    decisions: int = Field(16, ge=1, le=1_000)
    """Learner decisions per iterate()."""
    noise: Fraction | None = None
    """An unused number (null: none)."""

    supports_suit_canonical = True
    opponents = ("self",)

    def check(self, cfg: C.TrainConfig) -> None:
        if cfg.n_envs % 2:
            raise ConfigError("config key 'n_envs': algorithm 'tiny' needs an even number")


class TinyTrainer:
    """The trainer protocol with a fixed policy."""

    name = "tiny"

    def __init__(self, cfg: C.TrainConfig, rng: np.random.Generator) -> None:
        from training.policy import SmearPolicy

        self.cfg, self.rng, self.step = cfg, rng, 0
        self.policy = SmearPolicy(cfg.network.hidden_sizes, cfg.network.activation)

    def iterate(self) -> dict[str, float]:
        self.step += self.cfg.algorithm.decisions
        return {"train/decisions": float(self.cfg.algorithm.decisions)}

    def add_snapshot(self) -> None:
        pass

    def warm_start_policy(self) -> Any:
        return self.policy

    def after_warm_start(self) -> None:
        pass

    def eval_policy(self) -> Any:
        return self.policy

    def policy_state(self) -> dict[str, Any]:
        return dict(self.policy.state_dict())

    def state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        return {}, {}

    def load_state(self, policy_sd: dict[str, Any], tensors: dict[str, Any], meta: dict[str, Any],
                   step: int) -> None:
        self.policy.load_state_dict(policy_sd)
        self.step = step


@pytest.fixture
def tiny_registered(monkeypatch):
    monkeypatch.setitem(ALGORITHMS, "tiny", Algorithm(trainer=TinyTrainer, config=TinyConfig))


def test_a_new_algorithm_is_its_classes_plus_one_registry_line(tiny_registered):
    over = ["algorithm.name=tiny", "selfplay.opponents={self: 1}", "n_envs=4"]
    cfg = load_config(None, [*over, "algorithm.decisions=40", "network.suit_canonical=true"])
    assert type(cfg.algorithm) is TinyConfig and cfg.algorithm.decisions == 40
    assert C.to_dict(cfg)["algorithm"] == {"name": "tiny", "decisions": 40, "noise": None}
    bad = [
        (["algorithm.decisions=0"], "'algorithm.decisions': expected an integer from 1 to 1000, got 0"),
        (["algorithm.noise=2"], "'algorithm.noise': expected a number from 0 to 1 or null"),
        (["algorithm.learning_rate=0.1"], "algorithm 'tiny' has no key 'learning_rate' (a key of 'ppo'"),
        (["selfplay.opponents={self: 1, random: 1}"], "'random' not available with algorithm 'tiny'"),
        (["network.shared_trunk=true"], "algorithm 'tiny' does not support it (allowed with: 'vector_ppo')"),
        (["n_envs=3"], "algorithm 'tiny' needs an even number"),
    ]
    for extra, message in bad:
        with pytest.raises(ConfigError) as e:
            load_config(None, [*over, *extra])
        assert message in str(e.value)
    with pytest.raises(ConfigError, match="'algorithm.name': 'nope' is not one of 'ppo', .*, 'dmc', 'tiny'"):
        load_config(None, ["algorithm.name=nope"])
    text = help_text()
    assert "[algorithm: tiny]  A test algorithm: counts decisions without learning." in text
    assert ("  algorithm.decisions: int = 16 [an integer from 1 to 1000]\n"
            "      Learner decisions per iterate().") in text


def test_smear_train_runs_a_new_algorithm(tiny_registered, tmp_path, capsys):
    pytest.importorskip("torch")
    from smear_env.agents.checkpoint import read_checkpoint
    from training.train import main

    cfgfile = tmp_path / "tiny.yaml"
    cfgfile.write_text("default:\n  algorithm: {name: tiny, decisions: 50}\n  total_timesteps: 100\n"
                       "  n_envs: 2\n  selfplay: {opponents: {self: 1}}\n  network: {hidden_sizes: [8]}\n"
                       "  eval: {opponents: []}\n  output: {tensorboard: false, progress: false}\n")
    run = tmp_path / "run"
    assert main(["--config", str(cfgfile), "--run-dir", str(run)]) == 0, capsys.readouterr().err
    _, meta = read_checkpoint(run / "checkpoints" / "latest.safetensors")
    assert meta["algorithm"] == "tiny" and meta["step"] == 100
    assert meta["training"]["algorithm"] == {"name": "tiny", "decisions": 50, "noise": None}
    assert load_config(run / "config.yaml").algorithm == TinyConfig(decisions=50)


# --------------------------------------------------------------------------------------------- trainers
def test_ppo_update_is_a_component_of_both_ppo_trainers():
    pytest.importorskip("torch")
    from training.algorithms.ppo import PPOTrainer
    from training.algorithms.ppo_update import PPOUpdate
    from training.algorithms.vector_ppo import VectorPPOTrainer

    assert not issubclass(VectorPPOTrainer, PPOTrainer)
    quick = ROOT / "configs" / "quickstart.yaml"
    for cls, over in ((PPOTrainer, ["network.shared_trunk=false"]), (VectorPPOTrainer, [])):
        cfg = load_config(quick, ["n_envs=2", "network.hidden_sizes=[8]", "imitation.teacher=null",
                                  "selfplay.opponents={self: 1}", *over])
        tr = cls(cfg, np.random.default_rng(0))
        assert isinstance(tr.update, PPOUpdate) and tr.update.optimizer is tr.optimizer
        assert tr.update.policy is tr.policy


def test_dmc_builds_with_an_opponent_it_cannot_seat_at_probability_zero():
    """A selfplay.opponents key dmc cannot seat is allowed at probability 0 (validation); the trainer must
    then build too (it raised KeyError)."""
    pytest.importorskip("torch")
    from training.algorithms.dmc import DMCTrainer

    cfg = load_config(None, ["algorithm.name=dmc", "n_envs=4", "network.hidden_sizes=[8]",
                             "selfplay.opponents={self: 1, snapshot: 0}"])
    tr = DMCTrainer(cfg, np.random.default_rng(0))
    assert tr.lane_kind.tolist() == [0, 0, 0, 0]  # self-play in every lane
