"""make_agent: spec strings -> agents, with clear errors for bad specs and missing checkpoints."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from smear_env.agents import HeuristicAgent, RandomAgent, make_agent, registry
from smear_env.agents.registry import parse_agent_options
from smear_env.core.config import SmearRules


def test_builtin_specs_and_names():
    rules = SmearRules(kitty_size=2)
    r = make_agent("random", rules)
    h = make_agent("heuristic", rules)
    assert isinstance(r, RandomAgent) and r.name == "random"
    assert isinstance(h, HeuristicAgent) and h.name == "heuristic" and h.rules == rules
    assert make_agent(" heuristic ").name == "heuristic"


def test_pimc_options_are_parsed_and_passed(monkeypatch):
    seen = {}

    class FakePimc:
        name = "pimc"

        def __init__(self, rules, **options):
            seen["rules"], seen["options"] = rules, options

    monkeypatch.setattr(registry, "PimcAgent", FakePimc)
    rules = SmearRules(target_score=7)
    a = make_agent("pimc:samples=16,budget_ms=80.5,exact=true", rules)
    assert seen == {"rules": rules, "options": {"samples": 16, "budget_ms": 80.5, "exact": True}}
    assert a.name == "pimc:samples=16,budget_ms=80.5,exact=true"
    make_agent("pimc", rules)
    assert seen["options"] == {}


def test_real_pimc_agent_is_built():
    a = make_agent("pimc:samples=2,budget_ms=5")
    assert type(a).__name__ == "PimcAgent" and a.name == "pimc:samples=2,budget_ms=5"


@pytest.mark.parametrize("spec", ["randomm", "heuristic:x=1", "", "pimc:samples", "pimc:=3", "alpha.beta"])
def test_bad_spec_is_a_value_error_naming_it_and_the_valid_ones(spec):
    with pytest.raises(ValueError) as e:
        make_agent(spec)
    msg = str(e.value)
    assert repr(spec) in msg
    assert "'random'" in msg and "'heuristic'" in msg and "'pimc'" in msg and ".safetensors" in msg


def test_duplicate_option_rejected():
    with pytest.raises(ValueError, match="given twice"):
        parse_agent_options("pimc:a=1,a=2", "a=1,a=2")


def test_missing_checkpoint_is_file_not_found(tmp_path):
    path = str(tmp_path / "nope" / "agent.safetensors")
    with pytest.raises(FileNotFoundError, match="checkpoint .*agent.safetensors.* not found"):
        make_agent(path)


def test_existing_checkpoint_goes_to_checkpoint_load_agent(tmp_path, monkeypatch):
    calls = []

    class Loaded:
        name = "x"

    monkeypatch.setattr(registry, "load_agent", lambda path, rules: calls.append((path, rules)) or Loaded())
    for name in ("a.safetensors", "weights.bin"):  # any existing file counts as a checkpoint path
        p = tmp_path / name
        p.write_bytes(b"")
        rules = SmearRules(kitty_size=1)
        agent = make_agent(str(p), rules)
        assert calls[-1] == (str(p), rules)
        assert agent.name == str(p)


def test_non_string_spec_is_a_type_error():
    with pytest.raises(TypeError, match="agent spec must be a string"):
        make_agent(3)  # type: ignore[arg-type]


def test_shipped_checkpoint_plays_without_torch():
    """A checkpoint plays with numpy only: no module of smear_env imports torch or training/."""
    import subprocess

    code = (
        "import sys; sys.modules['torch'] = None; sys.modules['training'] = None\n"
        "from smear_env.agents import make_agent\n"
        "from smear_env.engine.game import Game\n"
        "from smear_env.engine.observation import observe\n"
        "agent = make_agent('checkpoints/smear_v0_default.safetensors')\n"
        "import numpy as np\n"
        "g = Game(seed=0)\n"
        "agent.start_game(g.current_player, g.rules, np.random.default_rng(1))\n"
        "a = agent.act(observe(g, g.current_player))\n"
        "assert a in g.legal_actions(), a\n"
        "print('ok')\n"
    )
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
