"""Engine speed: decisions/s and games/s for uniformly random legal play (engine alone, one process).

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/engine_speed.py --games 2000 --seed 0 --max-hands 200

Actions are picked with uniform floats pre-drawn from a seeded ``numpy.random.Generator``, so the timing
measures the engine (legal_actions + apply + start_next_hand), not the random number generator. Under
random play a game to target 15 often runs long (random bidders are set again and again, R17), so every
configuration runs with a hand cap (``--max-hands``); games cut off by it are reported as capped (R21).
Rates use the process CPU time (``time.process_time``), which stays meaningful on a shared, loaded machine.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from smear_env.core.config import SmearRules
from smear_env.engine.game import GAME_OVER, HAND_OVER, Game


def run(rules: SmearRules, games: int, seed: int, max_hands: int, chunk: int = 1 << 16) -> dict[str, float]:
    """Play ``games`` random games; returns counts and timings."""
    rng = np.random.default_rng(seed)
    floats = rng.random(chunk).tolist()
    fi = 0
    decisions = hands = finished = capped = 0
    seeds = rng.integers(0, 2**63 - 1, size=games).tolist()
    t0 = time.process_time()
    for s in seeds:
        g = Game(rules, seed=s)
        n_hands = 1
        while True:
            phase = g.phase
            if phase == GAME_OVER:
                finished += 1
                break
            if phase == HAND_OVER:
                if n_hands >= max_hands:
                    capped += 1
                    break
                g.start_next_hand()
                n_hands += 1
                continue
            legal = g.legal_actions()
            if fi == chunk:
                floats = rng.random(chunk).tolist()
                fi = 0
            g.apply(legal[int(floats[fi] * len(legal))])
            fi += 1
            decisions += 1
        hands += n_hands
    elapsed = time.process_time() - t0
    return {
        "games": games, "finished": finished, "capped": capped, "hands": hands,
        "decisions": decisions, "seconds": elapsed,
        "decisions_per_s": decisions / elapsed, "games_per_s": games / elapsed,
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=2000, help="games per configuration (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the numpy Generator (default 0)")
    p.add_argument("--max-hands", type=int, default=200, help="hand cap per game (R21; default 200)")
    args = p.parse_args(argv)
    if args.games < 1 or args.max_hands < 1:
        p.error("--games and --max-hands must be >= 1")
    configs = [
        ("default rules (target 15)", SmearRules()),
        ("target_score=5", SmearRules(target_score=5)),
        ("kitty_size=0, target 15", SmearRules(kitty_size=0)),
    ]
    print(
        f"uniform random legal play, {args.games} games per row, seed {args.seed}, hand cap {args.max_hands}"
        " (rates per CPU second)"
    )
    header = f"{'rules':<28}{'decisions/s':>13}{'games/s':>10}{'hands/game':>12}{'dec/game':>10}{'capped':>8}"
    print(header)
    print("-" * len(header))
    for label, rules in configs:
        r = run(rules, args.games, args.seed, args.max_hands)
        print(
            f"{label:<28}{r['decisions_per_s']:>13,.0f}{r['games_per_s']:>10,.1f}"
            f"{r['hands'] / r['games']:>12.1f}{r['decisions'] / r['games']:>10.1f}{r['capped']:>8d}"
        )


if __name__ == "__main__":
    main()
