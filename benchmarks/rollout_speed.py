"""Speed of rollout search (:mod:`smear_env.agents.rollout`): searched decisions and rollout decisions
per second, by phase.

Takes positions from ``--games`` lanes of the batched engine played by the heuristic (only decisions with
more than one legal action), groups them by phase, and times :func:`rollout_values` on each group with
``--samples`` deals per position, the base checkpoint for the searcher's team and the heuristic for the
others: the work the ``rollout:`` agent does per call. Prints, per phase, positions, wall and CPU seconds,
positions/s and rollout decisions/s (every decision of every played-out hand).

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/rollout_speed.py --games 256 --samples 32``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from smear_env.agents import rollout as ro
from smear_env.agents.registry import rollout_players
from smear_env.core.config import SmearRules
from smear_env.engine.decoding import decode_batch
from smear_env.engine.vector import VectorGame


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=256)
    ap.add_argument("--samples", type=int, default=32)
    ap.add_argument("--base", default="default")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rules = SmearRules()
    team, opp = rollout_players(args.base, "heuristic", rules)
    vg = VectorGame(args.games, rules, seed=args.seed)
    rows: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {c: [] for c in ro.PHASES.values()}
    for _ in range(40):  # about one hand and a half of positions
        obs, mask = vg.observe(), vg.legal_mask()
        many = mask.sum(1) > 1
        for i in np.flatnonzero(many):
            rows[int(vg.phase[i])].append((obs[i], mask[i]))
        vg.step(opp.act_batch(obs, mask, vg.to_act))
    print(f"rollout search: {args.samples} deals per position, base {args.base!r}, opponents heuristic")
    print("| phase | positions | wall s | CPU s | positions/s | rollout decisions/s |")
    print("|---|---|---|---|---|---|")
    for name, code in ro.PHASES.items():
        got = rows[code]
        if not got:
            continue
        obs = np.stack([o for o, _ in got])
        mask = np.stack([m for _, m in got])
        views = decode_batch(obs, mask)
        rngs = [np.random.default_rng(i) for i in range(len(views))]
        stats: dict[str, int] = {}
        t0, c0 = time.perf_counter(), time.process_time()
        ro.rollout_values(rules, views, mask, team, opp, args.samples, rngs, stats)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(f"| {name} | {len(views)} | {wall:.2f} | {cpu:.2f} | {len(views) / wall:.1f} | "
              f"{stats['rollout_decisions'] / wall:,.0f} |")


if __name__ == "__main__":
    main()
