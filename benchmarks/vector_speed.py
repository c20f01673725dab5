"""Batched engine speed: decisions/s of uniformly random legal play in ``smear_env.engine.vector.VectorGame``
next to the reference engine and the reference ``raw_env`` loop, in the same run, interleaved.

    nice -n 10 .venv/bin/python benchmarks/vector_speed.py [--seconds 1.5] [--rounds 3] [--sizes 64 1024 4096]

Rows (default rules, hand cap ``--max-hands`` 200 everywhere, R21):

- ``reference engine``: one ``Game`` at a time, ``legal_actions`` + ``apply`` (+ ``start_next_hand``),
  the loop of ``benchmarks/engine_speed.py``;
- ``reference raw_env``: the unwrapped PettingZoo env, ``observe(agent)`` (observation + mask) then
  ``step`` for the agent to act, ``reset`` when the game ends;
- ``vector N=..., mask+step``: ``legal_mask()`` (the (N, 72) bool mask), ``random_actions(rng)``,
  ``step``; ``+observe`` adds ``observe()`` ((N, 493) float32 of the seat to act) every step.

Each round times every row for ``--seconds`` in turn; a row's rate is the median over rounds. Rates are
per process CPU second (``time.process_time``), which stays meaningful on a shared machine. Targets (at
the largest N): mask+step >= 10x the reference engine, +observe >= 15x the reference raw_env loop.
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

from smear_env.core.config import SmearRules  # noqa: E402
from smear_env.engine.game import GAME_OVER, HAND_OVER, Game  # noqa: E402
from smear_env.engine.observation import OBS_SIZE  # noqa: E402
from smear_env.engine.vector import VectorGame  # noqa: E402
from smear_env.envs.aec import raw_env  # noqa: E402


def timed(run: Callable[[], int], seconds: float) -> float:
    """Decisions per CPU second of repeated ``run()`` calls (each returns its decision count)."""
    decisions = 0
    t0 = time.process_time()
    while True:
        decisions += run()
        elapsed = time.process_time() - t0
        if elapsed >= seconds:
            return decisions / elapsed


def reference_engine(rules: SmearRules, max_hands: int, seed: int) -> Callable[[], int]:
    rng = np.random.default_rng(seed)
    state = {"game": Game(rules, seed=rng), "hands": 1}

    def run() -> int:
        g = state["game"]
        floats = rng.random(1000).tolist()
        for u in floats:
            phase = g.phase
            while phase >= HAND_OVER:
                if phase == GAME_OVER or state["hands"] >= max_hands:
                    g = state["game"] = Game(rules, seed=rng)
                    state["hands"] = 1
                else:
                    g.start_next_hand()
                    state["hands"] += 1
                phase = g.phase
            legal = g.legal_actions()
            g.apply(legal[int(u * len(legal))])
        return len(floats)

    return run


def reference_env(rules: SmearRules, max_hands: int, seed: int) -> Callable[[], int]:
    env = raw_env(rules=rules, max_cycles=40 * max_hands)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)

    def run() -> int:
        floats = rng.random(1000).tolist()
        for u in floats:
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                env.reset()
                agent = env.agent_selection
            obs = env.observe(agent)
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[int(u * legal.size)]))
        return len(floats)

    return run


def vector(rules: SmearRules, max_hands: int, seed: int, n: int, observe: bool) -> Callable[[], int]:
    vg = VectorGame(n, rules, seed=seed, max_hands=max_hands)
    rng = np.random.default_rng(seed)

    def run() -> int:
        for _ in range(10):
            if observe:
                obs = vg.observe()
                assert obs.shape == (n, OBS_SIZE)
            mask = vg.legal_mask()
            assert mask.shape == (n, 72)
            vg.step(vg.random_actions(rng))
        return 10 * n

    return run


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=1.5, help="CPU seconds per row and round (default 1.5)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3); median reported")
    p.add_argument("--sizes", type=int, nargs="+", default=[64, 1024, 4096], help="lane counts N")
    p.add_argument("--max-hands", type=int, default=200, help="hand cap per game (R21; default 200)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.seconds <= 0 or args.rounds < 1 or args.max_hands < 1 or min(args.sizes) < 1:
        p.error("--seconds must be > 0; --rounds, --max-hands and --sizes must be >= 1")
    rules = SmearRules()
    rows: dict[str, Callable[[], int]] = {
        "reference engine": reference_engine(rules, args.max_hands, args.seed),
        "reference raw_env": reference_env(rules, args.max_hands, args.seed),
    }
    for n in args.sizes:
        rows[f"vector N={n}, mask+step"] = vector(rules, args.max_hands, args.seed, n, observe=False)
        rows[f"vector N={n}, +observe"] = vector(rules, args.max_hands, args.seed, n, observe=True)
    for run in rows.values():  # warm-up
        timed(run, 0.05)
    rates: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(args.rounds):
        for name, run in rows.items():
            rates[name].append(timed(run, args.seconds))
    med = {name: statistics.median(r) for name, r in rates.items()}
    eng, env = med["reference engine"], med["reference raw_env"]
    print(
        f"uniform random legal play, default rules, hand cap {args.max_hands}; decisions per CPU second, "
        f"median of {args.rounds} interleaved rounds of {args.seconds:g} s"
    )
    header = f"{'row':<28}{'decisions/s':>13}{'/ engine':>10}{'/ raw_env':>11}{'spread':>9}"
    print(header)
    print("-" * len(header))
    for name, r in med.items():
        spread = (max(rates[name]) - min(rates[name])) / r
        print(f"{name:<28}{r:>13,.0f}{r / eng:>10.2f}{r / env:>11.2f}{spread:>8.0%}")
    n = max(args.sizes)
    vg = VectorGame(n, rules)
    state = vg.memory_bytes() / n
    print(f"\nmemory per lane: {state:,.0f} bytes of state; observe() adds {OBS_SIZE * 4:,} bytes "
          f"(float32), legal_mask() {72} bytes")
    step_ratio = med[f"vector N={n}, mask+step"] / eng
    obs_ratio = med[f"vector N={n}, +observe"] / env
    print(f"N={n}: mask+step / reference engine = {step_ratio:.1f}x (target >= 10x: "
          f"{'met' if step_ratio >= 10 else 'NOT met'}); +observe / reference raw_env = {obs_ratio:.1f}x "
          f"(target >= 15x: {'met' if obs_ratio >= 15 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
