"""Random masked stepping: the batched vector env against SB3's SubprocVecEnv of the single-seat env, per CPU
second (the CPU time of every process: this one and the SubprocVecEnv workers), in one run, interleaved.

    PYTHONPATH=. python benchmarks/vector_env_speed.py --seconds 5 --rounds 3

Each round times, for about ``--seconds`` of wall time each:

* ``SmearVectorEnv(N)`` (default N = 1024) with the default opponents (``opponents=None``: vectorised random,
  one generator) and with ``opponents="random"`` (``make_batched_agent("random")``: per-game generators,
  RandomAgent's exact draws);
* ``SubprocVecEnv`` of ``--workers`` (4) single-seat envs (``make_env("random")``), stepped the way
  MaskablePPO steps a VecEnv: ``env_method("action_masks")`` then ``step``.

A decision is one learner decision (one env step of one game); the opponents' decisions in between are not
counted. The learner's actions are uniform over the legal ones. Printed: decisions per CPU second and per wall
second for each, and the ratio per CPU second of the vector env over SubprocVecEnv.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

TICK = os.sysconf("SC_CLK_TCK")


def _proc_cpu(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def _cpu(pids: list[int]) -> float:
    return time.process_time() + sum(_proc_cpu(p) for p in pids)


def time_vector(env, seconds: float, rng: np.random.Generator) -> tuple[float, float]:
    from smear_env.vector import random_actions

    obs, info = env.reset(seed=int(rng.integers(2**31)))
    for _ in range(3):  # warm up
        obs, _, _, _, info = env.step(random_actions(info["action_mask"], rng))
    n, c0, w0 = 0, _cpu([]), time.perf_counter()
    while time.perf_counter() - w0 < seconds:
        obs, _, _, _, info = env.step(random_actions(info["action_mask"], rng))
        n += env.num_envs
    return n / (_cpu([]) - c0), n / (time.perf_counter() - w0)


def time_subproc(venv, seconds: float, rng: np.random.Generator) -> tuple[float, float]:
    from smear_env.vector import random_actions

    pids = [p.pid for p in venv.processes]
    venv.reset()
    n, c0, w0 = 0, _cpu(pids), time.perf_counter()
    while time.perf_counter() - w0 < seconds:
        masks = np.stack(venv.env_method("action_masks"))
        venv.step(random_actions(masks, rng))
        n += venv.num_envs
    return n / (_cpu(pids) - c0), n / (time.perf_counter() - w0)


def _single(i: int):
    from smear_env.single_seat import make_env

    def make():
        return make_env("random")

    return make


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--num-envs", type=int, default=1024)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=5.0, help="wall seconds per measurement")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    from stable_baselines3.common.vec_env import SubprocVecEnv

    from smear_env.vector_env import SmearVectorEnv

    rng = np.random.default_rng(0)
    fast = SmearVectorEnv(args.num_envs, seed=0)
    exact = SmearVectorEnv(args.num_envs, opponents="random", seed=0)
    sub = SubprocVecEnv([_single(i) for i in range(args.workers)])
    rows: dict[str, list[tuple[float, float]]] = {"vector": [], "vector_random_spec": [], "subproc": []}
    try:
        for r in range(args.rounds):
            rows["subproc"].append(time_subproc(sub, args.seconds, rng))
            rows["vector"].append(time_vector(fast, args.seconds, rng))
            rows["vector_random_spec"].append(time_vector(exact, args.seconds, rng))
            print(f"round {r + 1}: " + "; ".join(f"{k} {v[-1][0]:,.0f}/CPU s" for k, v in rows.items()),
                  flush=True)
    finally:
        sub.close()
    med = {k: (float(np.median([x[0] for x in v])), float(np.median([x[1] for x in v])))
           for k, v in rows.items()}
    labels = {"vector": f"SmearVectorEnv({args.num_envs}), opponents=None (vectorised random)",
              "vector_random_spec": f"SmearVectorEnv({args.num_envs}), opponents='random' (per-game rngs)",
              "subproc": f"SubprocVecEnv({args.workers}) of make_env('random')"}
    print(f"\nlearner decisions (medians of {args.rounds} rounds)")
    for k, (cpu, wall) in med.items():
        print(f"  {labels[k]:<68} {cpu:>10,.0f} per CPU s {wall:>10,.0f} per wall s")
    base = med["subproc"][0]
    print(f"ratio per CPU second: {med['vector'][0] / base:.0f}x (opponents=None), "
          f"{med['vector_random_spec'][0] / base:.0f}x (opponents='random')")


if __name__ == "__main__":
    main()
