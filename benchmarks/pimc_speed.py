"""Per-decision speed of the PIMC agent, by phase.

Plays ``--hands`` hands with four PIMC seats (default rules unless given) and prints, per phase, the number
of searched decisions (forced single-action decisions are not searched and not counted), mean, median, p99
and worst milliseconds per decision, and the overall mean (wall and process CPU time).

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/pimc_speed.py --hands 20 --seed 0``
     (agent options as in the registry: ``--spec pimc:samples=8,budget_ms=30``)
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from smear_env.agents.registry import make_agent
from smear_env.core.config import SmearRules
from smear_env.engine.game import HAND_OVER, Game
from smear_env.engine.observation import observe


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hands", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--spec", default="pimc")
    ap.add_argument("--kitty-size", type=int, default=3)
    args = ap.parse_args(argv)
    rules = SmearRules(kitty_size=args.kitty_size, target_score=1000)
    agents = [make_agent(args.spec, rules) for _ in range(4)]
    for i, a in enumerate(agents):
        a.start_game(i, rules, np.random.default_rng([args.seed, i]))
    g = Game(rules, seed=args.seed)
    done = 0
    decisions = 0
    t0 = time.perf_counter()
    c0 = time.process_time()
    while done < args.hands:
        if g.phase == HAND_OVER:
            done += 1
            g.start_next_hand()
            continue
        s = g.current_player
        g.apply(agents[s].act(observe(g, s)))
        decisions += 1
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    per_phase: dict[str, list[float]] = {}
    for a in agents:
        for phase, ts in a.stats.items():
            per_phase.setdefault(phase, []).extend(ts)
    everything = [t for ts in per_phase.values() for t in ts]
    for phase, ts in sorted(per_phase.items()) + [("ALL searched", everything)]:
        ts = sorted(ts)
        print(f"{phase:<13} n={len(ts):5d} mean={1e3 * statistics.mean(ts):7.2f} ms "
              f"median={1e3 * statistics.median(ts):7.2f} ms "
              f"p99={1e3 * ts[int(0.99 * (len(ts) - 1))]:7.2f} ms "
              f"worst={1e3 * ts[-1]:7.2f} ms")
    print(f"hands={args.hands} decisions={decisions} (incl. forced) wall={wall:.1f} s cpu={cpu:.1f} s; "
          f"mean per decision incl. forced: wall {1e3 * wall / max(decisions, 1):.2f} ms, "
          f"cpu {1e3 * cpu / max(decisions, 1):.2f} ms (per-phase times above are wall: on a loaded "
          "machine scale them by cpu/wall)")


if __name__ == "__main__":
    main()
