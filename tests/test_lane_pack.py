"""The batched engine packs the observation words two ways by batch size (one gather for few lanes, a
word-by-word loop for many): both must equal the single game's packer bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from smear_env.engine.lane_observation import pack_words
from smear_env.engine.observation import PART_WIDTHS, pack_parts


@pytest.mark.parametrize("n", [1, 5, 256, 257, 700])
def test_pack_words_equals_the_single_game_packer(n: int) -> None:
    rng = np.random.default_rng(n)
    parts = tuple(rng.integers(0, 1 << w, n, dtype=np.int64) for w in PART_WIDTHS)
    for p, w in zip(parts, PART_WIDTHS, strict=True):
        p[0] = (1 << w) - 1  # lane 0: every bit set, the bits that run into the next word included
    words = pack_words(parts, n)
    assert words.shape == (n, 8) and words.dtype == np.int64 and words.flags.c_contiguous
    for lane in range(n):
        expected = pack_parts(tuple(int(p[lane]) for p in parts))
        assert int.from_bytes(words[lane].astype("<i8").tobytes(), "little") == expected, lane
