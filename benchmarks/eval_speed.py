"""Duplicate evaluation speed: ``run_match`` on the batched engine next to the reference engine, in the same
run, with wall seconds, CPU seconds (this process and its finished worker processes, ``os.times``; on a
shared machine the CPU figures are the ones to compare), games per CPU second and decisions per CPU second.

    nice -n 10 .venv/bin/python benchmarks/eval_speed.py [--matches "heuristic random" "default heuristic"]
        [--games 2000] [--reference-games 200] [--workers 1]

For each match: the batched engine plays ``--games`` games, the reference ``--reference-games`` (it is
~10-50x slower), on the same seed (the first ``--reference-games`` games are the same games on both
engines; the summary of those is checked equal). Targets (issue 24, 2 cores): ``default heuristic --games
20000 --workers 2`` <= 60 s and ``heuristic random --games 40000`` <= 60 s.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from smear_env.evaluation.duplicate import run_match  # noqa: E402


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and of its children that have ended."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def timed(team_a: str, team_b: str, games: int, engine: str, workers: int, seed: int
          ) -> tuple[float, float, dict]:
    t0, c0 = time.perf_counter(), cpu_seconds()
    s = run_match(team_a, team_b, games, seed=seed, workers=workers, engine=engine).summary()
    return time.perf_counter() - t0, cpu_seconds() - c0, s


def block(args: argparse.Namespace) -> int:
    """One worker block per match: ``play_pairs`` in this process (one BLAS thread, as in a worker)."""
    from smear_env.core.config import SmearRules
    from smear_env.evaluation.batched import play_pairs

    print(f"{'match':<22}{'games':>7}{'wall s':>8}{'CPU s':>8}{'games/CPU-s':>12}{'decisions/CPU-s':>16}")
    for m in args.matches:
        a, b = m.split()
        t0, c0 = time.perf_counter(), cpu_seconds()
        pairs, _ = play_pairs(a, b, SmearRules(), args.seed, 200, 0, args.games // 2)
        sec, cpu = time.perf_counter() - t0, cpu_seconds() - c0
        decisions = sum(28 * g.played + 4 * g.thrown_in for pair in pairs for g in pair)  # approximate
        print(f"{m:<22}{args.games:>7}{sec:>8.1f}{cpu:>8.1f}{args.games / cpu:>12.0f}"
              f"{decisions / cpu:>16,.0f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--matches", nargs="+", default=["heuristic random", "default heuristic"],
                   help='matches as "TEAM_A TEAM_B" strings')
    p.add_argument("--games", type=int, default=2000, help="games per match on the batched engine")
    p.add_argument("--reference-games", type=int, default=200, help="games per match on the reference")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--block", action="store_true",
                   help="instead: play --games games as one worker block in this process (play_pairs and "
                        "its lane count) and report its CPU seconds; compare two checkouts by PYTHONPATH")
    args = p.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    if args.block:
        return block(args)
    print(f"{'match':<22}{'engine':<11}{'games':>7}{'workers':>8}{'wall s':>8}{'CPU s':>8}{'games/CPU-s':>12}"
          f"{'decisions/CPU-s':>16}")
    for m in args.matches:
        a, b = m.split()
        for engine, games in (("reference", args.reference_games), ("batched", args.games),
                              ("batched", args.reference_games)):
            if games < 2:
                continue
            sec, cpu, s = timed(a, b, games, engine, args.workers, args.seed)
            # approximate decisions: a played hand about 28 (24 plays, bids, trump, discards), a thrown-in 4
            decisions = 28 * s["hands_played"] + 4 * s["hands_thrown_in"]
            print(f"{m:<22}{engine:<11}{games:>7}{args.workers:>8}{sec:>8.1f}{cpu:>8.1f}{games / cpu:>12.0f}"
                  f"{decisions / cpu:>16,.0f}")  # approximate
            if engine == "reference":
                ref = s
            elif games == args.reference_games:
                same = {**s, "seconds": 0} == {**ref, "seconds": 0}
                print(f"{'':<22}batched summary of the same {games} games equals the reference's: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
