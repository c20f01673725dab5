"""Checkpoints: safetensors + JSON metadata round trip, load_agent, clear rejection of mismatches."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from smear_env.agents.checkpoint import CheckpointError, load_agent, obs_layout_hash, read_checkpoint
from smear_env.agents.registry import make_agent
from smear_env.core.config import SmearRules
from smear_env.engine.game import HAND_OVER, Game
from smear_env.engine.observation import OBS_SIZE, observe
from training.checkpoint import base_metadata, load_policy_state, save_tensors
from training.policy import SmearPolicy

RULES = SmearRules()


def _save(path, rules=RULES, meta_patch=None, activation="relu", extra=None):
    torch.manual_seed(0)
    pol = SmearPolicy([32, 16], activation)
    meta = base_metadata(rules, pol.spec(), "ppo", 123, {"seed": 0})
    meta.update(meta_patch or {})
    tensors = {f"policy.{k}": v for k, v in pol.state_dict().items()}
    tensors.update(extra or {})
    save_tensors(path, tensors, meta)
    return pol


def _observations(n_games=3, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for g in range(n_games):
        game = Game(RULES, seed=g)
        for _ in range(60):
            if game.phase == HAND_OVER:
                game.start_next_hand()
                continue
            if game.is_over:
                break
            out.append(observe(game, game.to_act))
            legal = game.legal_actions()
            game.apply(legal[rng.integers(len(legal))])
    return out


@pytest.mark.parametrize("activation", ["relu", "tanh", "gelu"])
def test_round_trip_agent_matches_torch_policy(tmp_path, activation):
    path = tmp_path / "a.safetensors"
    pol = _save(path, activation=activation)
    agent = load_agent(path, RULES)
    assert agent.name == str(path)
    obs = _observations()
    o = np.stack([x["observation"] for x in obs])
    m = np.stack([x["action_mask"] for x in obs])
    want, _, _ = pol.act(o, m, greedy=True)
    got = [agent.act(x) for x in obs]
    assert got == [int(a) for a in want]
    assert all(x["action_mask"][a] == 1 for x, a in zip(obs, got, strict=True))


def test_sampling_agent_is_legal_and_seeded(tmp_path):
    path = tmp_path / "a.safetensors"
    _save(path)
    obs = _observations(1)
    runs = []
    for _ in range(2):
        agent = load_agent(path, RULES, greedy=False)
        agent.start_game(0, RULES, np.random.default_rng(5))
        runs.append([agent.act(x) for x in obs])
    assert runs[0] == runs[1]
    assert all(x["action_mask"][a] == 1 for x, a in zip(obs, runs[0], strict=True))


def test_metadata_and_policy_state_round_trip(tmp_path):
    path = tmp_path / "a.safetensors"
    pol = _save(path)
    tensors, meta = read_checkpoint(path)
    assert meta["env_version"] == "smear_v0" and meta["obs_size"] == OBS_SIZE
    assert meta["obs_layout_hash"] == obs_layout_hash() and meta["num_actions"] == 72
    assert meta["rules"] == RULES.to_dict() and meta["step"] == 123
    assert meta["network"] == {"hidden_sizes": [32, 16], "activation": "relu"}
    sd, _ = load_policy_state(path, RULES)
    for k, v in pol.state_dict().items():
        assert torch.equal(sd[k], v), k


def test_no_pickle_file_is_plain_safetensors(tmp_path):
    path = tmp_path / "a.safetensors"
    _save(path)
    raw = path.read_bytes()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    assert "smear" in header["__metadata__"]
    assert b"\x80\x04\x95" not in raw[:8 + n]  # no pickle protocol-4 stream in the header


def test_rules_mismatch_names_differing_option(tmp_path):
    path = tmp_path / "a.safetensors"
    _save(path, rules=SmearRules(kitty_size=2))
    with pytest.raises(CheckpointError, match=r"kitty_size=2 \(requested: 3\)"):
        load_agent(path, RULES)
    assert load_agent(path).name == str(path)  # no rules given: no rule check
    with pytest.raises(CheckpointError, match="target_score"):
        make_agent(str(path), SmearRules(kitty_size=2, target_score=5))


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"obs_size": OBS_SIZE + 1}, f"observations of size {OBS_SIZE + 1}"),
        ({"obs_layout_hash": "0123456789abcdef"}, "different observation layout"),
        ({"env_version": "smear_v9"}, "made for environment 'smear_v9'"),
        ({"num_actions": 70}, "has 70 actions"),
        ({"format": "other/1"}, "is not 'smear-checkpoint/1'"),
    ],
)
def test_environment_mismatch_rejected(tmp_path, patch, message):
    path = tmp_path / "a.safetensors"
    _save(path, meta_patch=patch)
    with pytest.raises(CheckpointError, match=message):
        load_agent(path, RULES)


def test_corrupt_missing_and_foreign_files(tmp_path):
    path = tmp_path / "a.safetensors"
    _save(path)
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(path.read_bytes()[:200])
    with pytest.raises(CheckpointError, match="corrupt or truncated"):
        load_agent(bad)
    junk = tmp_path / "junk.safetensors"
    junk.write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match="corrupt or truncated"):
        load_agent(junk)
    with pytest.raises(CheckpointError, match="does not exist"):
        load_agent(tmp_path / "nope.safetensors")
    from safetensors.numpy import save_file

    foreign = tmp_path / "foreign.safetensors"
    save_file({"w": np.zeros(3, dtype=np.float32)}, str(foreign))
    with pytest.raises(CheckpointError, match="not a smear-rl checkpoint"):
        load_agent(foreign)
    missing = tmp_path / "missing.safetensors"
    save_tensors(missing, {"policy.obs_scale": np.ones(OBS_SIZE, np.float32)},
                 base_metadata(RULES, {"hidden_sizes": [8], "activation": "relu"}, "ppo", 0))
    with pytest.raises(CheckpointError, match="missing tensor 'pi_body.0.weight'"):
        load_agent(missing)


def test_registry_loads_checkpoint_and_plays(tmp_path):
    from smear_env.evaluation import run_match

    path = tmp_path / "a.safetensors"
    _save(path, rules=SmearRules(target_score=3))
    rules = SmearRules(target_score=3)
    res = run_match(str(path), "random", games=2, rules=rules, seed=1).summary()
    assert res["games"] == 2 and res["team_a"] == str(path)


def test_shipped_agent_loads_under_default_rules():
    """checkpoints/smear_v0_default.safetensors fits this environment (a layout change must retrain it)."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "checkpoints" / "smear_v0_default.safetensors"
    agent = load_agent(path, SmearRules())
    assert SmearRules().differences_from(agent.meta["rules"]) == [] and "state" not in agent.meta
    assert path.stat().st_size < 5_000_000
    for obs in _observations(2):
        assert obs["action_mask"][agent.act(obs)] == 1
    with pytest.raises(CheckpointError, match=r"target_score=15 \(requested: 11\)"):
        load_agent(path, SmearRules(target_score=11))


def test_rules_compared_by_meaning_an_option_missing_from_an_old_checkpoint_is_its_default(tmp_path):
    """A checkpoint written before a rule option existed (its metadata lacks the key) loads under the
    default value of that option and is refused under any other value; a recorded option this version
    does not know is refused too."""
    path = tmp_path / "old.safetensors"
    old_rules = RULES.to_dict()
    del old_rules["cap_defenders"]
    _save(path, meta_patch={"rules": old_rules})
    assert "cap_defenders" not in read_checkpoint(path)[1]["rules"]
    assert load_agent(path, RULES).name == str(path)
    with pytest.raises(CheckpointError, match=r"cap_defenders=False \(requested: True\)"):
        load_agent(path, SmearRules(cap_defenders=True))
    newer = tmp_path / "newer.safetensors"
    _save(newer, meta_patch={"rules": {**RULES.to_dict(), "jokers": 2}})
    with pytest.raises(CheckpointError, match=r"jokers=2 \(not a rule option of this version\)"):
        load_agent(newer, RULES)
