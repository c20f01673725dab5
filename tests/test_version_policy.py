"""The version policy (smear_env/versioning.py, CHANGELOG.md): the observation and action layouts are pinned
to the env version, and every place that names a version agrees with it."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import smear_env
import smear_env.envs.aec as env_mod
from smear_env import versioning as V
from smear_env.agents import checkpoint as C
from smear_env.engine import observation as O

ROOT = Path(__file__).resolve().parents[1]


def test_observation_and_action_layout_match_the_pinned_env_version():
    """Fails when the observation layout (or the action ids) changed without an env version bump: add a
    line to ENV_HISTORY (smear_env/versioning.py) with the new env version, and see CHANGELOG.md."""
    assert V.layout_mismatches() == []
    line = V.ENV_HISTORY[-1]
    assert line.env == V.ENV_VERSION == C.ENV_VERSION == O.ENV_VERSION
    assert line.obs_layout_hash == C.obs_layout_hash() == O.obs_layout_hash()


def test_a_changed_observation_layout_is_caught(monkeypatch):
    terms = list(O.TERMS)
    terms[-1], terms[-2] = terms[-2], terms[-1]  # same size, two terms swapped
    monkeypatch.setattr(O, "TERMS", tuple(terms))  # obs_layout_hash lives with the layout
    (msg,) = V.layout_mismatches()
    assert "observation layout changed" in msg and "bump the env version" in msg and "smear_v0" in msg


def test_a_changed_action_layout_is_caught(monkeypatch):
    monkeypatch.setattr(V, "NUM_ACTIONS", 73)
    (msg,) = V.layout_mismatches()
    assert "action layout changed" in msg and "bump the env version" in msg


def test_an_env_version_without_its_pinned_line_is_caught(monkeypatch):
    monkeypatch.setattr(V, "ENV_VERSION", "smear_v1")
    (msg,) = V.layout_mismatches()
    assert "'smear_v1' has no line in ENV_HISTORY" in msg


def test_env_version_names_agree():
    env = V.ENV_VERSION
    assert env_mod.raw_env.metadata["name"] == env
    assert env in smear_env.ENV_IDS and f"smear/{env}" in smear_env.ENV_IDS
    assert importlib.import_module(f"smear_env.{env}").env is env_mod.env
    assert re.fullmatch(r"smear_v\d+", env)


def test_env_docstring_version_history_lists_every_env_version():
    doc = env_mod.__doc__
    history = doc[doc.index("Version history") :]
    for line in V.ENV_HISTORY:
        assert f"{line.env.removeprefix('smear_')}: {line.changes}" in history, line


def test_history_is_in_release_order():
    def key(version: str) -> tuple[int, ...]:
        return tuple(int(p) for p in version.split("."))

    packages = [key(line.package) for line in V.ENV_HISTORY]
    assert packages == sorted(packages) and packages[-1] <= key(smear_env.__version__)
    assert len({line.env for line in V.ENV_HISTORY}) == len(V.ENV_HISTORY)


def test_record_format_is_the_schemas_and_the_games():
    schema = json.loads((ROOT / "smear_env" / "schema" / "game-record.schema.json").read_text())
    assert V.RECORD_FORMAT == "smear-record/1" == schema["$id"] == schema["properties"]["format"]["const"]
    from smear_env import smear_v0

    e = smear_v0.env(target_score=1)
    e.reset(seed=0)
    assert e.unwrapped.record()["format"] == V.RECORD_FORMAT


def test_changelog_names_the_current_versions():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## (\d+\.\d+\.\d+)\b", text, flags=re.M)
    assert releases and releases[0] == smear_env.__version__ == V.PACKAGE_VERSION, (
        "the newest CHANGELOG.md entry must be the package version (smear_env.__version__)"
    )
    newest = text[text.index(f"## {releases[0]}") :]
    for name in (V.ENV_VERSION, V.RECORD_FORMAT, V.CHECKPOINT_FORMAT):
        assert f"`{name}`" in newest, f"the newest CHANGELOG.md entry does not name {name}"
