"""Fuzz tier (issue 50): checkpoint files with tampered bytes, header lengths, headers and metadata
(hypothesis). Loading any of them gives a working agent (its move is legal) or one CheckpointError line naming
the file; never another exception, a traceback's worth of text, a hang, or a file written beside it.
Examples per test: ``SMEAR_FUZZ_EXAMPLES`` (default 25, the CI size)."""

from __future__ import annotations

import json
import os
import struct
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from smear_env.agents.checkpoint import CheckpointError, load_agent
from smear_env.agents.shipped import shipped_path
from smear_env.engine.game import Game
from smear_env.engine.observation import observe

EXAMPLES = int(os.environ.get("SMEAR_FUZZ_EXAMPLES", "25"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SLOW = 10.0
SRC = shipped_path("default")
pytestmark = pytest.mark.skipif(not SRC.exists(), reason="the shipped checkpoint is not in this checkout")

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=15,
)


def _parts() -> tuple[dict, bytes]:
    raw = SRC.read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    return json.loads(raw[8:8 + n]), raw[8 + n:]


def _file(header: dict, body: bytes) -> bytes:
    b = json.dumps(header).encode()
    b += b" " * (-len(b) % 8)
    return struct.pack("<Q", len(b)) + b + body


def _load(data: bytes) -> None:
    """Load ``data`` as a checkpoint file in a fresh folder: an agent that moves legally, or one line."""
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "fuzzed.safetensors"
        p.write_bytes(data)
        t0 = time.perf_counter()
        try:
            agent = load_agent(p)
            game = Game(seed=3)
            obs = observe(game, game.to_act)
            action = agent.act(obs)
            assert obs["action_mask"][action], "a loaded agent made an illegal move"
        except CheckpointError as e:
            msg = str(e)
            assert "fuzzed.safetensors" in msg and "Traceback" not in msg, msg
            assert msg.count("\n") == 0 and len(msg) < 2000, msg
        assert time.perf_counter() - t0 < SLOW, "loading took too long"
        assert sorted(os.listdir(d)) == ["fuzzed.safetensors"], "something was written beside the file"


@FUZZ
@given(flips=st.lists(st.tuples(st.integers(0, 20000), st.integers(0, 255)), min_size=1, max_size=8))
def test_flipped_bytes_in_the_header_region(flips):
    data = bytearray(SRC.read_bytes())
    n = 8 + struct.unpack("<Q", data[:8])[0]
    for pos, value in flips:
        data[pos % (n + 64)] = value
    _load(bytes(data))


@FUZZ
@given(cut=st.integers(0, 40000), length=st.one_of(st.integers(0, 2**64 - 1), st.integers(0, 40000)))
def test_truncated_files_and_any_declared_header_length(cut, length):
    raw = SRC.read_bytes()
    _load(raw[:cut])
    _load(struct.pack("<Q", length) + raw[8:])


@FUZZ
@given(data=st.data())
def test_tampered_metadata_values(data):
    header, body = _parts()
    meta = json.loads(header["__metadata__"]["smear"])
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        node, key = meta, None
        while True:  # walk down to a random field
            keys = list(node) if isinstance(node, dict) else list(range(len(node)))
            if not keys:
                break
            key = data.draw(st.sampled_from(keys), label="key")
            child = node[key]
            if not (isinstance(child, dict | list) and child) or data.draw(st.booleans(), label="stop"):
                break
            node = child
        if key is None:
            continue
        if data.draw(st.booleans(), label="delete") and isinstance(node, dict):
            del node[key]
        else:
            node[key] = data.draw(json_values, label="value")
    text = json.dumps(meta, allow_nan=True)
    header = dict(header, __metadata__={"smear": text})
    _load(_file(header, body))


@FUZZ
@given(where=st.floats(0, 1), insert=st.one_of(
    st.text(max_size=40),
    st.sampled_from(['"' + '\\"' * 30000, "[" * 5000, '{"a":' * 2000, "9" * 5000, ',"format":"x"', "NaN",
                     '\\', '"\ud800"', "\x00"])))
def test_tampered_metadata_text(where, insert):
    header, body = _parts()
    text = header["__metadata__"]["smear"]
    at = int(where * len(text))
    header = dict(header, __metadata__={"smear": text[:at] + insert + text[at:]})
    _load(_file(header, body))


@FUZZ
@given(extra=st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=3),
       tensor=st.sampled_from(["policy.net.0.weight", "policy.net.0.bias", "nope"]),
       dtype=st.sampled_from(["F32", "F16", "I64", "BOOL", "X"]),
       shape=st.lists(st.integers(0, 300), max_size=3))
def test_tampered_tensor_table(extra, tensor, dtype, shape):
    header, body = _parts()
    header = dict(header, __metadata__={**header["__metadata__"], **extra})
    if tensor in header:
        header[tensor] = dict(header[tensor], dtype=dtype, shape=shape)
    else:
        header[tensor] = {"dtype": dtype, "shape": shape, "data_offsets": [0, int(np.prod(shape or [1])) * 4]}
    _load(_file(header, body))
