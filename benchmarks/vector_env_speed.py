"""Learner decisions per CPU second of the three ways to run N games of ``smear_env/SmearSingleSeat-v0`` in
one process, measured in one run, interleaved (each round times every configuration once, in turn):

* ``vector``: the vector entry point, ``gymnasium.make_vec(id, num_envs=N,
  vectorization_mode="vector_entry_point", opponents=...)`` (:class:`smear_env.gym.vector_env.SmearVectorEnv`:
  N games on the batched engine, NEXT_STEP autoreset);
* ``sync``: ``gymnasium.make_vec(id, num_envs=N, vectorization_mode="sync", opponents=...)`` (N single-seat
  envs in a ``SyncVectorEnv``);
* ``sb3``: Stable-Baselines3's ``DummyVecEnv`` of N ``gymnasium.make(id, opponents=...)`` envs, stepped the
  way MaskablePPO steps a VecEnv (``env_method("action_masks")``, then ``step``).

for N in ``--num-envs`` (default 64 and 1024) and opponents in ``--opponents`` (default ``random`` and
``heuristic``: the agent spec strings, so every configuration plays the same agents). A decision is one
learner decision (one env step of one game); the opponents' decisions in between are not counted. The
learner's actions are uniform over the legal ones (one seeded generator). Once every env is built, all
objects are frozen out of the garbage collector's walks (``gc.freeze``), and each measurement starts after a
collection. Printed: the median decisions per CPU second (this process's CPU time) and per wall second of each
configuration, and the ratios vector / sync and sync / sb3.

    PYTHONPATH=. python benchmarks/vector_env_speed.py --seconds 2 --rounds 3
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable

import numpy as np

ID = "smear_env/SmearSingleSeat-v0"
KINDS = ("vector", "sync", "sb3")


def _gym_stepper(env, rng: np.random.Generator) -> Callable[[], int]:
    from smear_env.engine.vector import random_actions

    _, info = env.reset(seed=int(rng.integers(2**31)))
    state = {"mask": info["action_mask"]}

    def step() -> int:
        _, _, _, _, info = env.step(random_actions(state["mask"], rng))
        state["mask"] = info["action_mask"]
        return env.num_envs

    return step


def _sb3_stepper(venv, rng: np.random.Generator) -> Callable[[], int]:
    from smear_env.engine.vector import random_actions

    venv.seed(int(rng.integers(2**31)))
    venv.reset()

    def step() -> int:
        masks = np.stack(venv.env_method("action_masks"))
        venv.step(random_actions(masks, rng))
        return venv.num_envs

    return step


def make(kind: str, n: int, opponents: str, rng: np.random.Generator) -> Callable[[], int]:
    import gymnasium

    import smear_env  # noqa: F401  (registers the id)

    if kind == "sb3":
        from stable_baselines3.common.vec_env import DummyVecEnv

        return _sb3_stepper(DummyVecEnv([lambda: gymnasium.make(ID, opponents=opponents)] * n), rng)
    mode = "vector_entry_point" if kind == "vector" else "sync"
    return _gym_stepper(gymnasium.make_vec(ID, num_envs=n, vectorization_mode=mode, opponents=opponents), rng)


def measure(step: Callable[[], int], seconds: float) -> tuple[float, float]:
    # A full collection first: every configuration's envs live in this process, so a generation-2 collection
    # (which walks all of them) would otherwise land in whichever window crosses the threshold; at N=1,024 one
    # such collection halved a window's figure (a 2 s window holds a handful of steps on a loaded machine).
    gc.collect()
    step()  # warm up
    n, c0, w0 = 0, time.process_time(), time.perf_counter()
    while time.perf_counter() - w0 < seconds:
        n += step()
    return n / (time.process_time() - c0), n / (time.perf_counter() - w0)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--num-envs", type=int, nargs="+", default=[64, 1024])
    ap.add_argument("--opponents", nargs="+", default=["random", "heuristic"])
    ap.add_argument("--seconds", type=float, default=2.0, help="wall seconds per measurement")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    configs = [(n, o, k) for n in args.num_envs for o in args.opponents for k in KINDS]
    steppers = {c: make(c[2], c[0], c[1], rng) for c in configs}
    for step in steppers.values():
        step()
    # Every configuration's envs live in this process: frozen, a collection in one configuration's window does
    # not walk the others' objects (without it, N=64's windows paid for the 2 x 1,024 single-seat envs).
    gc.collect()
    gc.freeze()
    rows: dict[tuple, list[tuple[float, float]]] = {c: [] for c in configs}
    with open("/proc/loadavg") as f:
        print(f"load average before: {f.read().split()[:3]}")
    for r in range(args.rounds):
        for c in configs:
            rows[c].append(measure(steppers[c], args.seconds))
        print(f"round {r + 1} done", flush=True)
    med = {c: (float(np.median([x[0] for x in v])), float(np.median([x[1] for x in v])))
           for c, v in rows.items()}
    print(f"\nlearner decisions, medians of {args.rounds} rounds")
    print(f"{'N':>5} {'opponents':<10} {'kind':<7} {'per CPU s':>11} {'per wall s':>11}")
    for (n, o, k), (cpu, wall) in med.items():
        print(f"{n:>5} {o:<10} {k:<7} {cpu:>11,.0f} {wall:>11,.0f}")
    print("\nratios per CPU second")
    for n in args.num_envs:
        for o in args.opponents:
            v, s, b = (med[n, o, k][0] for k in KINDS)
            print(f"  N={n:<5} {o:<10} vector/sync {v / s:5.2f}x   sync/sb3 {s / b:5.2f}x")
    with open("/proc/loadavg") as f:
        print(f"load average after: {f.read().split()[:3]}")
    return {f"{n}/{o}/{k}": v for (n, o, k), v in med.items()}


if __name__ == "__main__":
    main()
