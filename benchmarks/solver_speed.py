"""Speed of the perfect-information solver from the first lead of a hand.

Random deals (default rules): random bidding until someone bids, the bidder names a trump it holds (the
suit it holds most of) and discards at random; then the whole play phase (6 tricks) is solved with
``solve`` (root value) and ``solve_all_moves`` (every legal first lead). Reports mean / median / worst
CPU milliseconds per solve (``time.process_time``: meaningful on a shared, loaded machine; compare two
versions in one run, interleaved) and the total. ``--node-cap N`` measures the capped (estimating)
solver the PIMC agent uses.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/solver_speed.py --deals 1000 --seed 0``
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from smear_env.agents.solver import SolverState, solve, solve_all_moves
from smear_env.core.actions import TRUMP_ACTION_BASE
from smear_env.core.cards import SUIT_MASKS
from smear_env.core.config import SmearRules
from smear_env.engine.game import HAND_OVER, PLAY, TRUMP, Game


def first_lead_state(rules: SmearRules, rng: np.random.Generator) -> SolverState:
    while True:
        g = Game(rules, seed=int(rng.integers(1 << 62)))
        while g.phase not in (PLAY, HAND_OVER):
            la = g.legal_actions()
            if g.phase == TRUMP:
                hand = g.hands[g.to_act]
                g.apply(max(la, key=lambda a: (hand & SUIT_MASKS[a - TRUMP_ACTION_BASE]).bit_count()))
            else:
                g.apply(la[int(rng.integers(len(la)))])
        if g.phase == PLAY:
            return SolverState.from_game(g)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--deals", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kitty-size", type=int, default=3)
    ap.add_argument("--node-cap", type=int, default=None, help="node cap per root move (default: exact)")
    args = ap.parse_args(argv)
    rules = SmearRules(kitty_size=args.kitty_size)
    rng = np.random.default_rng(args.seed)
    states = [first_lead_state(rules, rng) for _ in range(args.deals)]
    for name, fn in (("solve", solve), ("solve_all_moves", solve_all_moves)):
        times = []
        for st in states:
            t0 = time.process_time()
            fn(st, node_cap=args.node_cap)
            times.append(time.process_time() - t0)
        print(
            f"{name:<16} deals={len(times)} mean={1e3 * statistics.mean(times):.2f} ms "
            f"median={1e3 * statistics.median(times):.2f} ms "
            f"p99={1e3 * sorted(times)[int(0.99 * (len(times) - 1))]:.2f} ms worst={1e3 * max(times):.2f} ms "
            f"total={sum(times):.3f} CPU s"
        )


if __name__ == "__main__":
    main()
