"""Steps per second of the full AEC loop on smear_v0 and on PettingZoo's classic card/board games.

The loop is the same for every environment: ``agent_iter``, ``last``, a random legal action drawn from a
seeded ``numpy.random.Generator`` using the action mask, ``step`` (``None`` for finished agents), and
``reset`` when an episode ends; every environment is wrapped as its ``env()`` returns it.

Environments that cannot be imported here (``gin_rummy_v4`` was removed in PettingZoo 1.27; PettingZoo's
``connect_four_v3`` needs pygame) are timed by this same script in a subprocess with a separate venv
``.venv-bench`` (created on demand: pettingzoo 1.26.1, rlcard, pygame, pinned below); the table marks them.

    nice -n 10 .venv/bin/python benchmarks/env_speed.py [--seconds 3] [--profile]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BENCH_VENV = ROOT / ".venv-bench"
BENCH_PINS = ["pettingzoo==1.26.1", "rlcard==1.2.0", "numpy==2.4.6", "gymnasium==1.4.0", "pygame==2.6.1"]
ENVS = {
    "smear_v0": "smear_env.smear_v0",
    "connect_four_v3": "pettingzoo.classic.connect_four_v3",
    "leduc_holdem_v4": "pettingzoo.classic.leduc_holdem_v4",
    "texas_holdem_v4": "pettingzoo.classic.texas_holdem_v4",
    "gin_rummy_v4": "pettingzoo.classic.gin_rummy_v4",
}


def run_loop(env, seconds: float, seed: int = 0) -> tuple[int, float, int]:
    """(agent steps, elapsed seconds, episodes) of random masked play for about ``seconds``."""
    rng = np.random.default_rng(seed)
    steps = episodes = 0
    start = time.perf_counter()
    deadline = start + seconds
    env.reset(seed=seed)
    while True:
        for _agent in env.agent_iter():
            obs, _reward, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            mask = (
                obs["action_mask"] if isinstance(obs, dict) and "action_mask" in obs else info["action_mask"]
            )
            legal = np.flatnonzero(mask)
            env.step(int(legal[rng.integers(legal.size)]))
            steps += 1
        episodes += 1
        if time.perf_counter() >= deadline:
            break
        env.reset()
    return steps, time.perf_counter() - start, episodes


def measure(name: str, seconds: float) -> dict:
    module = importlib.import_module(ENVS[name])
    env = module.env()
    run_loop(env, min(0.3, seconds), seed=1)  # warm-up
    steps, elapsed, episodes = run_loop(env, seconds, seed=0)
    import pettingzoo

    return {
        "env": name,
        "steps": steps,
        "seconds": elapsed,
        "episodes": episodes,
        "steps_per_s": steps / elapsed,
        "pettingzoo": pettingzoo.__version__,
    }


def importable(name: str) -> bool:
    try:
        importlib.import_module(ENVS[name])
        return True
    except ImportError:
        return False


def ensure_bench_venv() -> Path:
    py = BENCH_VENV / "bin" / "python"
    if not py.exists():
        print(f"creating {BENCH_VENV} ({', '.join(BENCH_PINS)}) ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(BENCH_VENV)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", *BENCH_PINS], check=True)
    return py


def measure_in_bench_venv(name: str, seconds: float) -> dict:
    py = ensure_bench_venv()
    out = subprocess.run(
        [str(py), str(Path(__file__).resolve()), "--worker", name, "--seconds", str(seconds)],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["note"] = f"subprocess, .venv-bench (pettingzoo {result['pettingzoo']})"
    return result


def profile(seconds: float) -> None:
    import cProfile
    import pstats

    from smear_env import smear_v0

    env = smear_v0.env()
    prof = cProfile.Profile()
    prof.enable()
    run_loop(env, seconds)
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(20)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="timed seconds per environment")
    parser.add_argument("--worker", choices=sorted(ENVS), help=argparse.SUPPRESS)
    parser.add_argument("--profile", action="store_true", help="cProfile the smear_v0 loop instead")
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(measure(args.worker, args.seconds)))
        return 0
    if args.profile:
        profile(args.seconds)
        return 0
    sys.path.insert(0, str(ROOT))
    results = []
    for name in ENVS:
        if importable(name):
            r = measure(name, args.seconds)
            r["note"] = "in process"
        else:
            r = measure_in_bench_venv(name, args.seconds)
        results.append(r)
    smear = results[0]["steps_per_s"]
    others = [r for r in results[1:]]
    fastest = max(others, key=lambda r: r["steps_per_s"])
    print(f"{'environment':<18}{'steps/s':>11}{'smear/x':>9}  {'episodes':>8}  note")
    for r in results:
        ratio = smear / r["steps_per_s"]
        print(f"{r['env']:<18}{r['steps_per_s']:>11,.0f}{ratio:>9.2f}  {r['episodes']:>8}  {r['note']}")
    target = 3.0
    ok = smear >= target * fastest["steps_per_s"]
    print(
        f"\nsmear_v0 / fastest other ({fastest['env']}): {smear / fastest['steps_per_s']:.2f}x "
        f"(target >= {target:.0f}x: {'met' if ok else 'NOT met'})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
