"""Per-move decision time of agents through the public agent API (``agent.act(observation)``).

Every agent in ``--agents`` plays the same positions: ``--hands`` hands of heuristic play (default rules,
scores as in a game to 1000), every decision of every seat, forced single-action ones included (a
checkpoint agent still runs its network on them). Prints, per agent, the number of decisions and the
mean, median, p99 and worst milliseconds per move (wall clock, one process, one thread).

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/agent_latency.py --agents default scratch heuristic``
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from smear_env.agents.registry import make_agent
from smear_env.core.config import SmearRules
from smear_env.engine.game import HAND_OVER, Game
from smear_env.engine.observation import observe


def positions(hands: int, seed: int, rules: SmearRules) -> list[tuple[int, dict]]:
    """(seat, observation) of every decision of ``hands`` hands played by four heuristic seats."""
    agents = [make_agent("heuristic", rules) for _ in range(4)]
    for i, a in enumerate(agents):
        a.start_game(i, rules, np.random.default_rng([seed, i]))
    g = Game(rules, seed=seed)
    out: list[tuple[int, dict]] = []
    done = 0
    while done < hands:
        if g.phase == HAND_OVER:
            done += 1
            g.start_next_hand()
            continue
        s = g.current_player
        o = observe(g, s)
        out.append((s, o))
        g.apply(agents[s].act(o))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agents", nargs="+", default=["default", "heuristic"])
    ap.add_argument("--hands", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rules = SmearRules()  # the shipped checkpoints' rules
    pos = positions(args.hands, args.seed, SmearRules(target_score=1000))  # no game ends within the hands
    print(f"{len(pos)} decisions of {args.hands} hands; load average {os.getloadavg()[0]:.1f}")
    for spec in args.agents:
        agents = [make_agent(spec, rules) for _ in range(4)]
        for i, a in enumerate(agents):
            a.start_game(i, rules, np.random.default_rng([args.seed, i]))
        ts = []
        for seat, o in pos:
            t0 = time.perf_counter()
            agents[seat].act(o)
            ts.append(time.perf_counter() - t0)
        ts.sort()
        print(f"{spec:<12} n={len(ts):5d} mean={1e3 * statistics.mean(ts):6.3f} ms "
              f"median={1e3 * statistics.median(ts):6.3f} ms "
              f"p99={1e3 * ts[int(0.99 * (len(ts) - 1))]:6.3f} ms "
              f"max={1e3 * ts[-1]:6.3f} ms")


if __name__ == "__main__":
    main()
