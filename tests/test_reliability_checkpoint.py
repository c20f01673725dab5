"""Hostile checkpoints (issue 20, item 12 and "Small"): overflowing weights, non-float tensors, directories,
damaged headers, repeated / non-finite metadata. Built with numpy only (no torch)."""

from __future__ import annotations

import json
import struct
import warnings

import numpy as np
import pytest
from safetensors import safe_open
from safetensors.numpy import save_file

from smear_env.agents.checkpoint import (
    LOGIT_LIMIT,
    CheckpointError,
    NumpyPolicy,
    check_finite_logits,
    load_agent,
    read_checkpoint,
)
from smear_env.agents.registry import make_agent
from smear_env.agents.shipped import shipped_path
from smear_env.engine.game import Game
from smear_env.engine.observation import observe

SRC = shipped_path("default")


def _shipped() -> tuple[dict[str, np.ndarray], dict[str, str]]:
    with safe_open(str(SRC), framework="np") as f:
        return {k: f.get_tensor(k) for k in f.keys()}, dict(f.metadata())  # noqa: SIM118


def _write(path, tensors, header) -> str:
    save_file(tensors, str(path), metadata=header)
    return str(path)


def _obs() -> dict[str, np.ndarray]:
    game = Game(seed=3)
    return observe(game, game.to_act)


def test_overflowing_finite_weights_rejected_at_load(tmp_path):
    t, h = _shipped()
    t["policy.pi_body.0.weight"] = t["policy.pi_body.0.weight"] * np.float32(1e30)  # finite, overflows
    assert np.isfinite(t["policy.pi_body.0.weight"]).all()
    p = _write(tmp_path / "big.safetensors", t, h)
    with pytest.raises(CheckpointError, match=r"big\.safetensors.*overflow float32 at run time"):
        load_agent(p)


def test_nonfinite_logits_at_run_time_raise_naming_the_checkpoint():
    agent = load_agent(SRC)
    obs = _obs()
    hostile = dict(obs, observation=np.full_like(obs["observation"], 3e38))  # far outside the space
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # np.errstate: no RuntimeWarning spam, one clear error
        with pytest.raises(CheckpointError, match=r"smear_v0_default\.safetensors.*NaN or infinite logits"):
            agent.act(hostile)
    assert agent.act(obs) in np.flatnonzero(obs["action_mask"])  # in-space observations still play


def test_check_finite_logits_guard():
    check_finite_logits(np.zeros((2, 72), dtype=np.float32), "checkpoint 'x'")
    bad = np.zeros((3, 72), dtype=np.float32)
    bad[1, 5] = np.nan
    with pytest.raises(CheckpointError, match=r"checkpoint 'x'.*1 of 3 observations"):
        check_finite_logits(bad, "checkpoint 'x'")


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.bool_])
def test_non_float_weights_rejected_at_load(tmp_path, dtype):
    t, h = _shipped()
    t["policy.pi_head.weight"] = np.ones_like(t["policy.pi_head.weight"], dtype=dtype)
    p = _write(tmp_path / "int.safetensors", t, h)
    with pytest.raises(CheckpointError, match=r"pi_head\.weight has dtype .*must be floating point"):
        load_agent(p)


def test_non_float_bias_rejected_at_load(tmp_path):
    t, h = _shipped()
    t["policy.pi_body.0.bias"] = np.zeros(t["policy.pi_body.0.bias"].shape, dtype=np.int32)
    p = _write(tmp_path / "intbias.safetensors", t, h)
    with pytest.raises(CheckpointError, match=r"pi_body\.0\.bias has dtype int32"):
        load_agent(p)


@pytest.mark.parametrize("value", [np.nan, np.inf, 1e300])
def test_non_finite_weights_rejected_at_load(tmp_path, value):
    t, h = _shipped()
    w = t["policy.pi_body.2.weight"].astype(np.float64)
    w[0, 0] = value  # 1e300: finite in float64, infinite in float32
    t["policy.pi_body.2.weight"] = w
    p = _write(tmp_path / "nan.safetensors", t, h)
    with pytest.raises(CheckpointError, match=r"pi_body\.2\.weight holds NaN, infinite"):
        load_agent(p)


def test_shipped_checkpoints_are_far_below_the_logit_limit():
    for name in ("default", "scratch"):
        assert load_agent(shipped_path(name)).policy.logit_bound() < LOGIT_LIMIT / 1e15


def test_directory_as_checkpoint_says_so(tmp_path):
    d = tmp_path / "run.safetensors"
    d.mkdir()
    with pytest.raises(CheckpointError, match="is a directory, not a checkpoint file"):
        read_checkpoint(d)
    with pytest.raises(ValueError, match="is a directory, not a checkpoint file"):
        make_agent(str(d))
    with pytest.raises(CheckpointError, match="does not exist"):
        read_checkpoint(tmp_path / "missing.safetensors")


def _raw_parts() -> tuple[bytes, dict, bytes]:
    raw = SRC.read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    return raw, json.loads(raw[8:8 + n]), raw[8 + n:]


def _with_header(header: dict, body: bytes) -> bytes:
    b = json.dumps(header).encode()
    b += b" " * (-len(b) % 8)
    return struct.pack("<Q", len(b)) + b + body


def _hostile_files() -> dict[str, bytes]:
    raw, header, body = _raw_parts()
    n = len(raw) - len(body) - 8
    meta_text = header["__metadata__"]["smear"]
    out = {
        "empty": b"",
        "seven bytes": b"\x01" * 7,
        "truncated header": raw[: 8 + n // 2],
        "truncated data": raw[:-100],
        "header length 2**63": struct.pack("<Q", 2**63) + raw[8:],
        "header length past the end": struct.pack("<Q", n + 10**6) + raw[8:],
    }

    def meta(text: str) -> bytes:
        return _with_header(dict(header, __metadata__={"smear": text}), body)

    out["metadata NaN"] = meta(meta_text[:-1] + ',"elapsed_s":NaN}')
    out["metadata Infinity in rules"] = meta(
        meta_text.replace('"target_score":', '"target_score":Infinity,"x":', 1))
    out["metadata repeated key"] = meta(meta_text[:-1] + ',"format":"smear-checkpoint/1"}')
    out["metadata 5000-digit int"] = meta(meta_text[:-1] + ',"step":' + "9" * 5000 + "}")
    out["metadata nested 100000 deep"] = meta("[" * 100000 + "]" * 100000)
    out["metadata unicode junk"] = meta("\udcff\u202e" + meta_text)
    return out


@pytest.mark.parametrize("name", list(_hostile_files()))
def test_damaged_or_hostile_files_are_checkpoint_errors(tmp_path, name):
    data = _hostile_files()[name]
    p = tmp_path / "x.safetensors"
    p.write_bytes(data.encode() if isinstance(data, str) else data)
    with pytest.raises(CheckpointError, match=r"x\.safetensors"):
        load_agent(p)


def test_repeated_metadata_key_is_rejected_not_last_wins(tmp_path):
    data = _hostile_files()["metadata repeated key"]
    p = tmp_path / "dup.safetensors"
    p.write_bytes(data)
    with pytest.raises(CheckpointError, match="duplicate key 'format'"):
        read_checkpoint(p)


def test_direct_numpy_policy_with_int_weights_rejected():
    t, h = _shipped()
    policy = {k[len("policy."):]: v for k, v in t.items() if k.startswith("policy.")}
    policy["obs_scale"] = policy["obs_scale"].astype(np.int32)
    net = json.loads(h["smear"])["network"]
    with pytest.raises(CheckpointError, match=r"mine: obs_scale has dtype int32"):
        NumpyPolicy(policy, net, where="mine")


@pytest.mark.parametrize("temperature", [0.0, -1.0, float("nan"), float("inf"), True])
def test_sampling_temperature_must_be_finite_positive(temperature):
    with pytest.raises(ValueError, match="temperature must be a finite number > 0"):
        load_agent(SRC, greedy=False, temperature=temperature)
