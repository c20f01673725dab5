"""The engine written once against the commit before it: the AEC env's steps per CPU second, the batched
engine's decisions per CPU second and ``smear-eval``'s games per second, interleaved in one run.

    nice -n 10 .venv/bin/python benchmarks/engine_once.py [--base e6ea9d6] [--rounds 5] [--seconds 2]
        [--lanes 64 1024] [--eval-games 2000] [--json out.json]

The base commit's ``smear_env`` and ``training`` are extracted (``git archive``) into a temporary folder;
every measurement runs in a fresh subprocess whose ``PYTHONPATH`` is either that folder ("base") or this
checkout ("head"), alternating base, head, base, head... within each round, so both see the same machine
load. Rows:

- ``aec``: the PettingZoo AEC loop of ``smear_v0.env()`` (wrapped as users get it): ``agent_iter``,
  ``last``, a random legal action from a seeded generator and the action mask, ``step``; ``reset`` when a
  game ends. Agent steps per CPU second (``time.process_time``).
- ``vector N=...``: ``VectorGame(N)``: ``legal_mask()``, ``random_actions(rng)``, ``step``, ``observe()``
  every step. Decisions (lanes x steps) per CPU second.
- ``smear-eval``: ``smear-eval heuristic random --games G --seed S --json`` (the batched evaluator, one
  worker) as a subprocess: games per wall second and per CPU second of the process.

``--one-lane`` instead times, in this checkout only, the design the engine did not take: the single game
as a one-lane ``VectorGame`` (``legal_mask``, ``random_actions``, ``step``, ``observe`` of one lane) next to
``Game`` (``legal_actions``, ``apply``, ``encode_game``; ``start_next_hand`` / a new game as needed), both in
decisions per CPU second, interleaved over the rounds.

A row's figure is the median over rounds; the ratio is head / base. The load average before and after
the run is printed (the machine is shared: CPU seconds are the figures to compare).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


# ------------------------------------------------------------------------------------------ workers
def aec_rate(seconds: float, seed: int) -> float:
    import numpy as np

    from smear_env import smear_v0

    env = smear_v0.env()
    rng = np.random.default_rng(seed)
    steps = games = 0
    env.reset(seed=seed)
    t0 = time.process_time()
    while True:
        for _agent in env.agent_iter():
            obs, _r, term, trunc, _info = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(legal.size)]))
            steps += 1
        games += 1
        if time.process_time() - t0 >= seconds:
            break
        env.reset(seed=seed + games)
    return steps / (time.process_time() - t0)


def engine_module(name: str) -> Any:
    """The engine module ``name`` of the tree on the path: ``smear_env.engine.<name>``, or in a tree from
    before the layer folders, the module of that name at the package's root (the base of a comparison)."""
    try:
        return importlib.import_module(f"smear_env.engine.{name}")
    except ModuleNotFoundError:
        return importlib.import_module(f"smear_env.{name}")


def vector_rate(seconds: float, seed: int, lanes: int) -> float:
    import numpy as np

    vg = engine_module("vector").VectorGame(lanes, seed=seed)
    rng = np.random.default_rng(seed)
    decisions = 0
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        for _ in range(10):
            vg.legal_mask()
            vg.step(vg.random_actions(rng))
            vg.observe()
        decisions += 10 * lanes
    return decisions / (time.process_time() - t0)


def game_rate(seconds: float, seed: int) -> float:
    import numpy as np

    from smear_env.engine.game import GAME_OVER, HAND_OVER, Game
    from smear_env.engine.observation import encode_game

    rng = np.random.default_rng(seed)
    g = Game(seed=seed)
    decisions = games = 0
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        for _ in range(100):
            if g.phase == GAME_OVER:
                games += 1
                g = Game(seed=seed + games)
            elif g.phase == HAND_OVER:
                g.start_next_hand()
            legal = g.legal_actions()
            g.apply(legal[int(rng.integers(len(legal)))])
            if g.phase < HAND_OVER:
                encode_game(g, g.to_act)
            decisions += 1
    return decisions / (time.process_time() - t0)


def one_lane(rounds: int, seconds: float, seed: int) -> int:
    rates: dict[str, list[float]] = {"Game": [], "VectorGame(1)": []}
    for _ in range(rounds):
        rates["Game"].append(game_rate(seconds, seed))
        rates["VectorGame(1)"].append(vector_rate(seconds, seed, 1))
    load = os.getloadavg()
    print(f"one game, decisions per CPU second, median of {rounds} rounds (load {load[0]:.2f}):")
    for name, v in rates.items():
        print(f"  {name:14} {statistics.median(v):10.0f}   {' '.join(f'{x:.0f}' for x in v)}")
    return 0


def worker(args: argparse.Namespace) -> None:
    if args.worker == "aec":
        rate = aec_rate(args.seconds, args.seed)
    else:
        rate = vector_rate(args.seconds, args.seed, args.worker_lanes)
    print(json.dumps({"rate": rate}))


# ------------------------------------------------------------------------------------------ driver
def run_worker(tree: Path, kind: str, seconds: float, seed: int, lanes: int = 0) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", kind, "--seconds", str(seconds),
           "--seed", str(seed), "--worker-lanes", str(lanes)]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True, cwd=tree).stdout
    return float(json.loads(out.strip().splitlines()[-1])["rate"])


def run_eval(tree: Path, games: int, seed: int) -> tuple[float, float]:
    """(games per wall second, games per CPU second) of one smear-eval run on ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    code = "import sys; from smear_env.evaluation.cli import main; sys.exit(main())"
    cmd = [sys.executable, "-c", code, "heuristic", "random", "--games", str(games), "--seed", str(seed),
           "--json", "--workers", "1"]
    t = os.times()
    c0 = t.children_user + t.children_system
    w0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, capture_output=True, text=True, cwd=tree)
    wall = time.perf_counter() - w0
    t = os.times()
    cpu = t.children_user + t.children_system - c0
    return games / wall, games / cpu


def extract(commit: str, into: Path) -> None:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "smear_env", "training"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base", default="e6ea9d6", help="commit to compare against (default e6ea9d6)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--seconds", type=float, default=2.0, help="CPU seconds per aec / vector measurement")
    p.add_argument("--lanes", type=int, nargs="+", default=[64, 1024])
    p.add_argument("--eval-games", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path, help="also write the figures to this file")
    p.add_argument("--one-lane", action="store_true",
                   help="time Game against a one-lane VectorGame in this checkout instead")
    p.add_argument("--worker", choices=["aec", "vector"], help=argparse.SUPPRESS)
    p.add_argument("--worker-lanes", type=int, default=0, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker(args)
        return 0
    if args.one_lane:
        return one_lane(args.rounds, args.seconds, args.seed)
    load0 = os.getloadavg()
    rows: dict[str, dict[str, list[float]]] = {}

    def add(row: str, tree: str, value: float) -> None:
        rows.setdefault(row, {"base": [], "head": []})[tree].append(value)

    with tempfile.TemporaryDirectory(prefix="engine-once-base-") as tmp:
        base = Path(tmp)
        extract(args.base, base)
        trees = {"base": base, "head": ROOT}
        for r in range(args.rounds):
            order = ("base", "head") if r % 2 == 0 else ("head", "base")
            for name in order:
                add("aec steps/CPU s", name, run_worker(trees[name], "aec", args.seconds, args.seed))
            for n in args.lanes:
                for name in order:
                    add(f"vector N={n} decisions/CPU s", name,
                        run_worker(trees[name], "vector", args.seconds, args.seed, n))
            for name in order:
                wall, cpu = run_eval(trees[name], args.eval_games, args.seed)
                add("smear-eval games/wall s", name, wall)
                add("smear-eval games/CPU s", name, cpu)
            print(f"round {r + 1}/{args.rounds} done, load {os.getloadavg()[0]:.2f}", file=sys.stderr)
    load1 = os.getloadavg()
    out = {"base": args.base, "rounds": args.rounds, "load_before": load0, "load_after": load1, "rows": {}}
    print(f"base {args.base} vs head; median of {args.rounds} interleaved rounds; "
          f"load average {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f} before, "
          f"{load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f} after")
    print(f"{'row':34} {'base':>12} {'head':>12} {'head/base':>10}   (per-round ratios)")
    for row, v in rows.items():
        b, h = statistics.median(v["base"]), statistics.median(v["head"])
        per_round = [f"{y / x:.3f}" for x, y in zip(v["base"], v["head"], strict=True)]
        print(f"{row:34} {b:12.0f} {h:12.0f} {h / b:10.3f}   ({' '.join(per_round)})")
        out["rows"][row] = {"base": v["base"], "head": v["head"], "ratio_of_medians": h / b}
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
