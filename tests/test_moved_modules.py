"""The modules that moved from the root of smear_env/ into its layer folders (smear_env.MOVED_MODULES):
every old path still imports, for one version, as the same module object with one DeprecationWarning that
names the new path; and nothing of the project imports or names an old path any more.

This is the one file that uses the old paths on purpose (the relayout script leaves it alone)."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import smear_env
from smear_env import MOVED_MODULES, moved_name

ROOT = Path(__file__).resolve().parents[1]
OLD = sorted(f"smear_env.{old}" for old in MOVED_MODULES)


def _forget(name: str) -> None:
    """Drop an old name from the import cache so that importing it goes through the finder again."""
    sys.modules.pop(name, None)
    parent, _, child = name.rpartition(".")
    if parent == "smear_env" and child in vars(smear_env) and child not in ("smear_v0", "versioning"):
        delattr(smear_env, child)


@pytest.mark.parametrize("old", OLD)
def test_an_old_path_is_the_new_module_with_one_warning_naming_it(old):
    new = moved_name(old)
    assert new is not None and new != old
    new_module = importlib.import_module(new)
    _forget(old)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
        again = importlib.import_module(old)
    assert module is new_module is again
    assert module.__name__ == new and module.__spec__.name == new  # the module keeps its own identity
    messages = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    assert messages == [f"{old} moved to {new}: import {new} (the old path goes in smear-rl 0.2)"]


def test_the_import_statements_of_the_old_paths_work_and_warn_at_the_importing_line():
    code = (
        "import smear_env.game\n"
        "from smear_env.cards import to_card\n"
        "from smear_env import observation as O\n"
        "import smear_env.vector_env.sb3 as sb3\n"
        "import smear_env.engine.game, smear_env.core.cards, smear_env.engine.observation\n"
        "import smear_env.gym.vector_env.sb3\n"
        "assert smear_env.game is smear_env.engine.game and to_card is smear_env.core.cards.to_card\n"
        "assert O is smear_env.engine.observation and sb3 is smear_env.gym.vector_env.sb3\n"
        "import smear_env.game\n"  # cached: no second warning
    )
    out = subprocess.run([sys.executable, "-W", "always::DeprecationWarning", "-c", code], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = [ln for ln in out.stderr.splitlines() if "DeprecationWarning" in ln]
    assert lines == [
        "<string>:1: DeprecationWarning: smear_env.game moved to smear_env.engine.game: import "
        "smear_env.engine.game (the old path goes in smear-rl 0.2)",
        "<string>:2: DeprecationWarning: smear_env.cards moved to smear_env.core.cards: import "
        "smear_env.core.cards (the old path goes in smear-rl 0.2)",
        "<string>:3: DeprecationWarning: smear_env.observation moved to smear_env.engine.observation: import "
        "smear_env.engine.observation (the old path goes in smear-rl 0.2)",
        "<string>:4: DeprecationWarning: smear_env.vector_env moved to smear_env.gym.vector_env: import "
        "smear_env.gym.vector_env (the old path goes in smear-rl 0.2)",
        "<string>:4: DeprecationWarning: smear_env.vector_env.sb3 moved to smear_env.gym.vector_env.sb3: "
        "import smear_env.gym.vector_env.sb3 (the old path goes in smear-rl 0.2)",
    ]


def test_the_decoder_is_reached_from_the_observation_module_with_a_warning_naming_its_module():
    from smear_env.engine import decoding, observation

    for name in ("decode", "decode_batch", "legal_actions_of"):
        moved = rf"observation\.{name} moved to smear_env\.engine\.decoding"
        with pytest.warns(DeprecationWarning, match=moved):
            assert getattr(observation, name) is getattr(decoding, name)
    with pytest.raises(AttributeError, match="no attribute 'decodee'"):
        observation.decodee  # noqa: B018
    # through the old module path too: both moves named
    code = ("from smear_env.observation import decode\n"
            "import smear_env.engine.decoding as d\n"
            "assert decode is d.decode\n")
    out = subprocess.run([sys.executable, "-W", "always::DeprecationWarning", "-c", code], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "DeprecationWarning: smear_env.observation moved to smear_env.engine.observation" in out.stderr
    assert ("DeprecationWarning: smear_env.engine.observation.decode moved to smear_env.engine.decoding"
            in out.stderr)


def test_the_names_that_did_not_move_are_left_alone():
    for name in ("smear_env", "smear_env.smear_v0", "smear_env.versioning", "smear_env.agents.registry",
                 "smear_env.engine.game", "smear_env.gamex", "smear_env.envs", "other.game"):
        assert moved_name(name) is None
    assert moved_name("smear_env.integrations.rllib") == "smear_env.envs.integrations.rllib"


def test_every_new_module_exists_and_the_root_keeps_at_most_six_modules():
    for new in MOVED_MODULES.values():
        path = ROOT / "smear_env" / Path(*new.split("."))
        assert path.with_suffix(".py").is_file() or (path / "__init__.py").is_file(), new
    for old in MOVED_MODULES:
        assert not (ROOT / "smear_env" / f"{old}.py").exists() and not (ROOT / "smear_env" / old).exists()
    assert len(list((ROOT / "smear_env").glob("*.py"))) <= 6


# ------------------------------------------------------------------ nothing uses the old paths

DECODER = ("decode", "decode_batch", "legal_actions_of")  # moved from observation into engine.decoding
SCANNED = ("smear_env", "training", "tests", "examples", "benchmarks", "tools")
_NAMES = "|".join(map(re.escape, MOVED_MODULES))
DOTTED = re.compile(rf"(?<![\w.])smear_env\.({_NAMES})(?!\w)")
PATHED = re.compile(rf"(?<![\w.])smear_env/({_NAMES})(?=\.py\b|/)")


def _python_files() -> list[Path]:
    here = Path(__file__).resolve()
    return [p for d in SCANNED for p in sorted((ROOT / d).rglob("*.py")) if p.resolve() != here]


def _imported(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every module an import statement of ``path`` names."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out.append((node.lineno, module))
            out += [(node.lineno, f"{module}.{a.name}") for a in node.names]
    return out


def test_no_module_of_the_project_imports_an_old_path():
    offenders = [f"{p.relative_to(ROOT)}:{line}: {name}" for p in _python_files()
                 for line, name in _imported(p) if moved_name(name) is not None
                 or name.startswith("smear_env.engine.observation.") and name.rpartition(".")[2] in DECODER]
    assert offenders == []


def test_no_file_of_the_project_names_an_old_path():
    """Docstrings, strings, comments and docs name the new paths (CHANGELOG.md keeps its history)."""
    files = [*_python_files(), *sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md",
             ROOT / "mkdocs.yml", ROOT / "pyproject.toml", ROOT / "Makefile", ROOT / ".importlinter",
             *sorted((ROOT / "configs").glob("*.*")), *sorted((ROOT / "smear_env" / "schema").glob("*.json"))]
    offenders = []
    for p in files:
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            if DOTTED.search(line) or PATHED.search(line):
                offenders.append(f"{p.relative_to(ROOT)}:{i}: {line.strip()}")
    assert offenders == []
