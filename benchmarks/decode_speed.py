"""Observation decoding speed: rows per CPU second of ``decoding.decode`` (with and without the action
mask) and ``decoding.decode_batch``, in the same run, interleaved.

    nice -n 10 .venv/bin/python benchmarks/decode_speed.py [--rows 2000] [--batch 4096] [--rounds 5]

The rows: observations of a ``VectorGame`` in uniformly random play (every phase, every observer seat on
alternate steps, default rules). Each round times every row kind for ``--seconds`` in turn; a rate is the
median over rounds, per process CPU second (``time.process_time``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vector_speed import timed  # noqa: E402  (this folder is on sys.path: rows per CPU second of run())

from smear_env.core.config import SmearRules  # noqa: E402
from smear_env.engine.decoding import decode, decode_batch  # noqa: E402
from smear_env.engine.vector import VectorGame  # noqa: E402


def observations(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(obs, mask)`` of at least ``n`` rows from random play on 256 lanes."""
    vg = VectorGame(256, SmearRules(), seed=seed)
    rng = np.random.default_rng(seed)
    obs, masks = [], []
    step = 0
    while sum(len(o) for o in obs) < n:
        seats = rng.integers(0, 4, 256) if step % 2 else None
        obs.append(vg.observe(seats))
        masks.append(vg.legal_mask() if seats is None else np.zeros((256, 72), dtype=bool))
        vg.step(vg.random_actions(rng))
        step += 1
    return np.concatenate(obs), np.concatenate(masks)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=2000, help="rows decoded one by one per call (default 2000)")
    p.add_argument("--batch", type=int, default=4096, help="rows per decode_batch call (default 4096)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--seconds", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    obs, mask = observations(max(args.rows, args.batch), args.seed)
    one, one_mask = obs[: args.rows], mask[: args.rows]
    big, big_mask = obs[: args.batch], mask[: args.batch]

    def rows_plain() -> int:
        for v in one:
            decode(v)
        return len(one)

    def rows_masked() -> int:
        for v, m in zip(one, one_mask, strict=True):
            decode(v, m)
        return len(one)

    def batch() -> int:
        decode_batch(big, big_mask)
        return len(big)

    kinds = {"decode(vec)": rows_plain, "decode(vec, mask)": rows_masked,
             f"decode_batch B={args.batch}": batch}
    rates: dict[str, list[float]] = {k: [] for k in kinds}
    for _ in range(args.rounds):
        for name, run in kinds.items():
            rates[name].append(timed(run, args.seconds))
    for name, r in rates.items():
        print(f"{name:<22} {statistics.median(r):>10,.0f} rows/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
