"""Batched agents: decisions per CPU second of ``act_batch`` next to the row-by-row form (same run,
interleaved).

    nice -n 10 .venv/bin/python benchmarks/batched_agents_speed.py [--batch 4096] [--rounds 5] [--seconds 1]

The states: ``--batches`` (obs, mask) batches of ``--batch`` rows observed in a ``VectorGame`` driven by the
heuristic (every phase, in the proportions of real games). Rows, each over the same batches:

- ``heuristic row by row``: ``decode_batch(obs, mask)`` then ``HeuristicAgent.act_view`` per row (the path
  ``vector_ppo`` opponents and batched imitation used before ``BatchedHeuristicAgent``);
- ``heuristic batched``: ``BatchedHeuristicAgent.act_batch``;
- ``random batched`` / ``random per row`` (``RandomAgent.act`` per row), and with ``--checkpoint`` (a spec,
  e.g. ``default``) the batched checkpoint player next to ``CheckpointAgent.act`` per row.

Each round times every row for ``--seconds`` in turn; a row's rate is the median over rounds, per process
CPU second (``time.process_time``). The batched heuristic's actions are checked equal to the row-by-row
ones on every batch before timing. Target: batched heuristic >= 20x the row-by-row heuristic at B = 4096.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from smear_env.agents.base import RandomAgent  # noqa: E402
from smear_env.agents.heuristic import HeuristicAgent  # noqa: E402
from smear_env.agents.registry import (
    make_agent,  # noqa: E402
    make_batched_agent,  # noqa: E402
)
from smear_env.core.config import SmearRules  # noqa: E402
from smear_env.engine.decoding import decode_batch  # noqa: E402
from smear_env.engine.vector import VectorGame  # noqa: E402


def timed(run: Callable[[], int], seconds: float) -> float:
    """Decisions per CPU second of repeated ``run()`` calls (each returns its decision count)."""
    decisions = 0
    t0 = time.process_time()
    while True:
        decisions += run()
        elapsed = time.process_time() - t0
        if elapsed >= seconds:
            return decisions / elapsed


def states(batch: int, batches: int, rules: SmearRules, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``batches`` (obs, mask) batches from heuristic play, 7 steps apart."""
    game = VectorGame(batch, rules=rules, seed=seed)
    agent = make_batched_agent("heuristic", rules)
    slots = np.arange(batch)
    for s in slots.tolist():
        agent.start_game(s, 0, rules, np.random.default_rng(s))
    out = []
    for step in range(batches * 7):
        obs, mask = game.observe(), game.legal_mask()
        if step % 7 == 3:
            out.append((obs, mask))
        game.step(agent.act_batch(obs, mask, slots))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--batches", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--checkpoint", default=None, help="also time this checkpoint spec (e.g. default)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rules = SmearRules()
    data = states(args.batch, args.batches, rules, args.seed)
    slots = np.arange(args.batch)
    heur = HeuristicAgent(rules)
    heur.start_game(0, rules, np.random.default_rng(0))
    bheur = make_batched_agent("heuristic", rules)
    brand = make_batched_agent("random", rules)
    rand = RandomAgent()
    rand.start_game(0, rules, np.random.default_rng(0))
    for s in slots.tolist():
        bheur.start_game(s, 0, rules, np.random.default_rng(s))
        brand.start_game(s, 0, rules, np.random.default_rng(s))
    for obs, mask in data:  # exactness first
        want = [heur.act_view(v) for v in decode_batch(obs, mask)]
        if bheur.act_batch(obs, mask, slots).tolist() != want:
            raise SystemExit("batched heuristic differs from the row-by-row heuristic")
    cursor = {"i": 0}

    def nxt() -> tuple[np.ndarray, np.ndarray]:
        cursor["i"] = (cursor["i"] + 1) % len(data)
        return data[cursor["i"]]

    def heur_rows() -> int:
        obs, mask = nxt()
        choose = heur.act_view
        [choose(v) for v in decode_batch(obs, mask)]
        return obs.shape[0]

    def heur_batched() -> int:
        obs, mask = nxt()
        bheur.act_batch(obs, mask, slots)
        return obs.shape[0]

    def rand_rows() -> int:
        obs, mask = nxt()
        m8 = mask.astype(np.int8)
        for i in range(obs.shape[0]):
            rand.act({"observation": obs[i], "action_mask": m8[i]})
        return obs.shape[0]

    def rand_batched() -> int:
        obs, mask = nxt()
        brand.act_batch(obs, mask, slots)
        return obs.shape[0]

    rows: dict[str, Callable[[], int]] = {
        "heuristic row by row (decode_batch + act_view)": heur_rows,
        "heuristic batched (act_batch)": heur_batched,
        "random per row (RandomAgent.act)": rand_rows,
        "random batched (act_batch)": rand_batched,
    }
    if args.checkpoint:
        ck = make_agent(args.checkpoint, rules)
        ck.start_game(0, rules, np.random.default_rng(0))
        bck = make_batched_agent(args.checkpoint, rules)
        for s in slots.tolist():
            bck.start_game(s, 0, rules, np.random.default_rng(s))

        def ck_rows() -> int:
            obs, mask = nxt()
            n = min(obs.shape[0], 512)  # per-row forwards are slow; a slice is enough for the rate
            for i in range(n):
                ck.act({"observation": obs[i], "action_mask": mask[i]})
            return n

        def ck_batched() -> int:
            obs, mask = nxt()
            bck.act_batch(obs, mask, slots)
            return obs.shape[0]

        rows[f"{args.checkpoint} per row (CheckpointAgent.act)"] = ck_rows
        rows[f"{args.checkpoint} batched (act_batch)"] = ck_batched
    rates: dict[str, list[float]] = {k: [] for k in rows}
    for _ in range(args.rounds):
        for name, run in rows.items():
            rates[name].append(timed(run, args.seconds))
    med = {k: statistics.median(v) for k, v in rates.items()}
    phases = np.concatenate([np.argmax(obs[:, :6], axis=1) for obs, _ in data])
    print(f"B = {args.batch}, {len(data)} batches of heuristic play (phase shares: "
          + ", ".join(f"{p}: {np.mean(phases == i):.0%}" for i, p in enumerate(("bid", "trump", "discard",
                                                                                   "play"))) + ")")
    print(f"{'row':<52} {'decisions / CPU s':>18} {'us / decision':>14}")
    for name, r in med.items():
        print(f"{name:<52} {r:>18,.0f} {1e6 / r:>14.2f}")
    names = list(rows)
    print(f"heuristic batched / row by row: {med[names[1]] / med[names[0]]:.1f}x (target >= 20x)")
    print(f"random batched / per row: {med[names[3]] / med[names[2]]:.1f}x")
    if args.checkpoint:
        print(f"{args.checkpoint} batched / per row: {med[names[5]] / med[names[4]]:.1f}x")


if __name__ == "__main__":
    main()
