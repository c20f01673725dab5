"""Duplicate evaluation speed: ``run_match`` on the batched engine next to the reference engine, in the same
run, with games per wall second and decisions per CPU second of this process (workers excluded).

    nice -n 10 .venv/bin/python benchmarks/eval_speed.py [--matches "heuristic random" "default heuristic"]
        [--games 2000] [--reference-games 200] [--workers 1]

For each match: the batched engine plays ``--games`` games, the reference ``--reference-games`` (it is
~10-50x slower), on the same seed (the first ``--reference-games`` games are the same games on both
engines; the summary of those is checked equal). Targets (issue 24, 2 cores): ``default heuristic --games
20000 --workers 2`` <= 60 s and ``heuristic random --games 40000`` <= 60 s.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from smear_env.evaluation.duplicate import run_match  # noqa: E402


def timed(team_a: str, team_b: str, games: int, engine: str, workers: int, seed: int) -> tuple[float, dict]:
    t0 = time.perf_counter()
    s = run_match(team_a, team_b, games, seed=seed, workers=workers, engine=engine).summary()
    return time.perf_counter() - t0, s


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--matches", nargs="+", default=["heuristic random", "default heuristic"],
                   help='matches as "TEAM_A TEAM_B" strings')
    p.add_argument("--games", type=int, default=2000, help="games per match on the batched engine")
    p.add_argument("--reference-games", type=int, default=200, help="games per match on the reference")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    print(f"{'match':<22}{'engine':<11}{'games':>7}{'workers':>8}{'seconds':>9}{'games/s':>9}"
          f"{'hands/s':>9}{'decisions/s':>13}")
    for m in args.matches:
        a, b = m.split()
        for engine, games in (("reference", args.reference_games), ("batched", args.games),
                              ("batched", args.reference_games)):
            if games < 2:
                continue
            sec, s = timed(a, b, games, engine, args.workers, args.seed)
            hands = s["hands_dealt"]
            # approximate decisions: a played hand about 28 (24 plays, bids, trump, discards), a thrown-in 4
            decisions = 28 * s["hands_played"] + 4 * s["hands_thrown_in"]
            print(f"{m:<22}{engine:<11}{games:>7}{args.workers:>8}{sec:>9.1f}{games / sec:>9.0f}"
                  f"{hands / sec:>9.0f}{decisions / sec:>13,.0f}")  # approximate
            if engine == "reference":
                ref = s
            elif games == args.reference_games:
                same = {**s, "seconds": 0} == {**ref, "seconds": 0}
                print(f"{'':<22}batched summary of the same {games} games equals the reference's: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
