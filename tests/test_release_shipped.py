"""Shipped agents by name, and the packaging that puts them into the wheel."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest

import smear_env
from smear_env.agents import make_agent
from smear_env.agents import shipped as S
from smear_env.core.config import SmearRules

ROOT = Path(__file__).resolve().parents[1]


def test_every_shipped_agent_has_its_files_in_checkpoints():
    assert "default" in S.SHIPPED_AGENTS
    for name, entry in S.SHIPPED_AGENTS.items():
        assert entry.name == name
        assert (ROOT / "checkpoints" / entry.file).is_file(), entry.file
        assert entry.file.endswith(".safetensors")
        card = (ROOT / "checkpoints" / entry.card).read_text(encoding="utf-8")
        assert entry.file in card, f"the model card {entry.card} does not name {entry.file}"


def test_in_a_clone_the_files_come_from_the_top_level_checkpoints_folder():
    assert S.shipped_dir() == ROOT / "checkpoints"
    assert S.shipped_path("default") == ROOT / "checkpoints" / "smear_v0_default.safetensors"
    assert S.model_card("default").startswith("# Model card")


def test_default_by_name_is_the_same_agent_as_by_path():
    rules = SmearRules()
    by_name = make_agent("default", rules)
    by_path = make_agent(str(ROOT / "checkpoints" / "smear_v0_default.safetensors"), rules)
    assert by_name.name == "default"
    assert type(by_name) is type(by_path)
    from smear_env import smear_v0

    env = smear_v0.env()
    env.reset(seed=3)
    obs = env.observe(env.agent_selection)
    for agent in (by_name, by_path):
        agent.start_game(0, rules, None)
    assert by_name.act(obs) == by_path.act(obs)


def test_shipped_agent_refuses_options_and_other_rules():
    with pytest.raises(ValueError, match="takes no options") as e:
        make_agent("default:greedy=false")
    assert "'default'" in str(e.value)
    with pytest.raises(ValueError, match="kitty_size"):
        make_agent("default", SmearRules(kitty_size=2))


def test_unknown_spec_error_lists_the_shipped_names():
    with pytest.raises(ValueError) as e:
        make_agent("defualt")
    assert "'default'" in str(e.value)
    with pytest.raises(ValueError, match="shipped agents: 'default'"):
        S.shipped_path("nope")


def test_a_path_still_wins_when_it_is_spelled_as_a_path(tmp_path, monkeypatch):
    """A file named like a shipped agent is reachable as ./name; the bare name means the shipped agent."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(ROOT / "checkpoints" / "smear_v0_default.safetensors", tmp_path / "default")
    assert make_agent("./default").name == "./default"
    assert make_agent("default").name == "default"


def test_packaged_folder_is_preferred_over_the_clone(tmp_path, monkeypatch):
    """What an installed wheel sees: smear_env/checkpoints/ inside the package."""
    pkg = tmp_path / "smear_env"
    (pkg / S.PACKAGE_DIR).mkdir(parents=True)
    (pkg / S.PACKAGE_DIR / "README.md").write_text("# Model card: packaged\n")

    class Files:
        def joinpath(self, name):
            return pkg / name

    monkeypatch.setattr(S.resources, "files", lambda package: Files())
    assert S.shipped_dir() == pkg / S.PACKAGE_DIR
    assert S.model_card("default") == "# Model card: packaged\n"
    with pytest.raises(FileNotFoundError, match="smear_v0_default.safetensors"):
        S.shipped_path("default")


def test_wheel_config_maps_checkpoints_into_the_package_and_reads_the_version():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert cfg["build-system"]["build-backend"] == "hatchling.build"
    hatch = cfg["tool"]["hatch"]
    assert "custom" in hatch["build"]["targets"]["wheel"]["hooks"]  # hatch_build.py
    assert hatch["version"]["path"] == "smear_env/__init__.py"
    assert "version" in cfg["project"]["dynamic"] and "version" not in cfg["project"]
    assert smear_env.__version__.count(".") == 2
    hook = (ROOT / "hatch_build.py").read_text()
    assert 'SOURCE = "checkpoints"' in hook and f'TARGET = "smear_env/{S.PACKAGE_DIR}"' in hook
    assert not (ROOT / "smear_env" / S.PACKAGE_DIR).exists(), (
        "smear_env/checkpoints/ must not exist in the source tree: the wheel build creates it"
    )
