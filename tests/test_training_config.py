"""Training config: YAML default block + variants, --set overrides, validation with clear messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from training.config import (
    ConfigError,
    TrainConfig,
    apply_overrides,
    dump_yaml,
    from_dict,
    help_text,
    load_config,
)
from training.config_files import parse_override, safe_load_bounded
from training.train import main

ROOT = Path(__file__).resolve().parents[1]


def test_shipped_configs_load():
    q = load_config(ROOT / "configs" / "quickstart.yaml")
    d = load_config(ROOT / "configs" / "default.yaml")
    assert q.algorithm.name == "vector_ppo" and d.algorithm.name == "vector_ppo"
    assert load_config(ROOT / "configs" / "dmc.yaml").algorithm.name == "dmc"
    tiny = load_config(ROOT / "configs" / "quickstart.yaml", variant="tiny")
    assert tiny.total_timesteps == 2_000 and tiny.network.hidden_sizes == [32]
    assert tiny.algorithm.learning_rate == q.algorithm.learning_rate  # inherited from default


def test_unknown_top_level_key_names_closest():
    msg = r"unknown config key 'total_timestep'; did you mean 'total_timesteps'\?"
    with pytest.raises(ConfigError, match=msg):
        from_dict({"total_timestep": 5})


def test_misspelled_nested_key_names_closest_dotted():
    with pytest.raises(ConfigError) as e:
        from_dict({"algorithm": {"learning_rte": 1.0e-3}})
    assert "'algorithm.learning_rte'" in str(e.value)
    assert "did you mean 'algorithm.learning_rate'?" in str(e.value)


def test_misspelled_rule_option_names_closest():
    with pytest.raises(ConfigError, match=r"did you mean 'rules.kitty_size'\?"):
        from_dict({"rules": {"kity_size": 2}})


def test_unknown_section():
    with pytest.raises(ConfigError, match=r"unknown config key 'algoritm'; did you mean 'algorithm'\?"):
        from_dict({"algoritm": {"name": "ppo"}})


@pytest.mark.parametrize(
    ("data", "key", "expected"),
    [
        ({"algorithm": {"n_epochs": "four"}}, "algorithm.n_epochs", "expected int"),
        ({"algorithm": {"n_epochs": 2.5}}, "algorithm.n_epochs", "expected int"),
        ({"algorithm": {"anneal_lr": "yes"}}, "algorithm.anneal_lr", "expected bool"),
        ({"network": {"hidden_sizes": 64}}, "network.hidden_sizes", "expected list of int"),
        ({"network": {"hidden_sizes": [64, "x"]}}, "network.hidden_sizes[1]", "expected int"),
        ({"seed": True}, "seed", "expected int"),
        ({"algorithm": {"learning_rate": "fast"}}, "algorithm.learning_rate", "expected float"),
        ({"selfplay": {"opponents": ["self"]}}, "selfplay.opponents", "expected mapping of str to float"),
        ({"eval": "often"}, "eval", "expected a mapping"),
    ],
)
def test_wrong_type_names_key_and_expected_type(data, key, expected):
    with pytest.raises(ConfigError) as e:
        from_dict(data)
    assert repr(key) in str(e.value) and expected in str(e.value)


def test_bad_choice_and_bad_rule_value():
    with pytest.raises(ConfigError, match=r"'algorithm.name': 'dqn' is not one of 'ppo', 'maskable_ppo'"):
        from_dict({"algorithm": {"name": "dqn"}})
    with pytest.raises(ConfigError, match=r"rules.*kitty_size=7"):
        from_dict({"rules": {"kitty_size": 7}})
    with pytest.raises(ConfigError, match=r"'n_envs': expected an integer from 1 to 16384"):
        from_dict({"n_envs": 0})
    with pytest.raises(ConfigError, match=r"'win' needs env.episode 'game'"):
        from_dict({"env": {"reward": "win", "episode": "hand"}})


def test_float_fields_accept_ints_and_yaml_exponent_strings():
    cfg = from_dict({"algorithm": {"learning_rate": "1e-4", "clip_range": 1}})
    assert cfg.algorithm.learning_rate == 1e-4 and isinstance(cfg.algorithm.clip_range, float)


def test_set_overrides_dotted_yaml_scalars():
    assert parse_override("algorithm.learning_rate=1.0e-4") == (["algorithm", "learning_rate"], 1e-4)
    assert parse_override("network.hidden_sizes=[64, 32]") == (["network", "hidden_sizes"], [64, 32])
    assert parse_override("eval.target_score=null") == (["eval", "target_score"], None)
    data = apply_overrides({"algorithm": {"n_epochs": 3, "gamma": 0.9}}, ["algorithm.n_epochs=8", "seed=3"])
    assert data == {"algorithm": {"n_epochs": 8, "gamma": 0.9}, "seed": 3}
    with pytest.raises(ConfigError, match="expected key=value"):
        parse_override("algorithm.n_epochs")
    cfg = load_config(ROOT / "configs" / "quickstart.yaml", ["rules.target_score=7", "algorithm.n_epochs=2"])
    assert cfg.rules.target_score == 7 and cfg.algorithm.n_epochs == 2


def test_file_needs_default_block_and_known_variant(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("total_timesteps: 5\n")
    with pytest.raises(ConfigError, match="'default:' block"):
        load_config(p)
    p.write_text("default: {seed: 1}\nsmall: {seed: 2}\n")
    assert load_config(p, variant="small").seed == 2
    with pytest.raises(ConfigError, match=r"no variant 'smal'; did you mean 'small'\?"):
        load_config(p, variant="smal")


def test_resolved_config_round_trips(tmp_path):
    cfg = load_config(ROOT / "configs" / "default.yaml")
    p = tmp_path / "resolved.yaml"
    p.write_text(dump_yaml(cfg))
    assert load_config(p) == cfg


def test_every_field_documented_and_in_help():
    text = help_text()

    def walk(cls, prefix):
        for name, info in cls.model_fields.items():
            assert info.description, f"{cls.__name__}.{name} has no docstring"
            if hasattr(info.annotation, "model_fields"):
                walk(info.annotation, f"{prefix}{name}.")
            elif name not in ("algorithm", "rules"):
                assert f"  {prefix}{name}: " in text

    walk(TrainConfig, "")


def test_cli_bad_config_is_a_clear_error(tmp_path, capsys):
    p = tmp_path / "bad.yaml"
    p.write_text("default:\n  algorithm:\n    n_epoch: 3\n")
    assert main(["--config", str(p), "--run-dir", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "unknown config key 'algorithm.n_epoch'; did you mean 'algorithm.n_epochs'?" in err
    assert main(["--config", str(p), "--set", "algorithm.n_epoch=3"]) == 2
    assert not (tmp_path / "run").exists()


def test_cli_help_config(capsys):
    assert main(["--help-config"]) == 0
    out = capsys.readouterr().out
    assert "algorithm.learning_rate: float = 0.0003" in out and "selfplay.opponents" in out


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("*.yaml")), ids=lambda p: p.name)
def test_every_variant_of_every_shipped_config_loads_and_validates(path):
    """A variant with a misspelt key or a bad value would only fail when it was run: load them all here."""
    variants = [k for k in safe_load_bounded(path.read_text()) if k != "default"]
    load_config(path)
    for variant in variants:
        assert isinstance(load_config(path, variant=variant), TrainConfig), (path.name, variant)


@pytest.mark.parametrize(("body", "message"), [
    ("seed: " + "9" * 5000, "line 2: an integer of 5,000 digits; at most 40 are read"),
    ("seed: !!python/object/apply:os.system [echo hi]", "could not determine a constructor for the tag"),
    ("seed: .nan", "config key 'seed': expected int, got nan (float)"),
    ("time_limit: .nan", "config key 'time_limit': expected a finite number, got nan"),
    ("env: {score_scale: 1e999}", "config key 'env.score_scale': expected a finite number, got inf"),
    ("a: &a [1, 1]\n  b: [*a, *a]", "YAML aliases (*a) are not allowed"),
    ("seed: 1\n  seed: 2", "line 3: duplicate key 'seed' (first given at line 2)"),
])
def test_hostile_config_files_are_one_line_errors(tmp_path, capsys, body, message):
    """Issue 50 item 8 (the config part): a huge number, a python tag, NaN, an alias bomb or a duplicate key
    is one `smear-train: error:` line naming it, never a traceback, and no run folder is made."""
    p = tmp_path / "bad.yaml"
    p.write_text(f"default:\n  {body}\n")
    assert main(["--config", str(p), "--run-dir", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("smear-train: error: ") and len(err.strip().splitlines()) == 1, err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "run").exists()
