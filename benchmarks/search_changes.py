"""How much of what a search changed is real? The changes in expert-iteration targets, valued afresh.

A rollout search keeps the policy's action unless another looks better over its sampled deals; the action it
picks is the best of several noisy estimates, so its own estimate of a change's gain is biased upwards (the
winner's curse). This script takes the targets files of a round (a pipeline's ``expert_iteration`` stage,
files recorded with the search's values ``q``), finds the *changes* (searched rows whose target is not the
``--policy``'s greedy action), and values the two actions of each change again on ``--samples`` deals drawn
afresh (:func:`~smear_env.agents.rollout.rollout_values`: independent of the deals that chose it, both
actions in the same deals), with the same players and objective as the search. Per phase it prints the
changes, the mean gain the search saw, the mean gain on the fresh deals (unbiased, with its standard error)
and the share of changes whose fresh gain is positive.

The objective is the chance of winning the game with ``--winprob`` (as the game-aware search), the hand's
score difference without.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/search_changes.py runs/exit_win4/targets_1_*.npz
--policy default --winprob runs/winprob_C.safetensors --samples 128 --workers 2``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

import numpy as np

from smear_env.evaluation.batched import one_blas_thread, worker_pool

PHASE_NAMES = ("bid", "trump", "discard", "play")


def changes(files: list[str], policy: str) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """(the targets, the rows the search changed, the policy's greedy action of every row)."""
    from smear_env.agents.shipped import checkpoint_file
    from training.distill import load_targets, policy_from_checkpoint, search_changes

    data = load_targets(files)
    # the changes distillation would teach: against the network it fine-tunes (a corrected checkpoint's
    # network alone, as training.distill counts them)
    network = policy_from_checkpoint(checkpoint_file(policy), warn_corrections=False)[0]
    changed, start = search_changes(network, data)
    return data, np.flatnonzero(changed), start


def revalue(job: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]
            ) -> np.ndarray:
    """(n, 2): the fresh values of the changed action and of the policy's action of each row."""
    import torch

    from smear_env.agents.registry import rollout_players
    from smear_env.agents.rollout import rollout_values
    from smear_env.core.config import SmearRules
    from smear_env.engine.decoding import decode_batch

    obs, mask, changed, kept, seeds, opt = job
    torch.set_num_threads(1)
    rules = SmearRules()
    team, opp = rollout_players(opt["policy"], opt["opponent"], rules)
    objective = None
    if opt["winprob"]:
        from smear_env.agents.winprob import load_winprob

        objective = load_winprob(opt["winprob"], rules)
    out = np.zeros((len(obs), 2))
    with one_blas_thread():
        for b in range(0, len(obs), 128):
            sl = slice(b, b + 128)
            n = len(obs[sl])
            two = np.zeros((n, mask.shape[1]), dtype=bool)
            two[np.arange(n), changed[sl]] = True
            two[np.arange(n), kept[sl]] = True
            rngs = [np.random.default_rng([opt["seed"], int(s)]) for s in seeds[sl]]
            q = rollout_values(rules, decode_batch(obs[sl], mask[sl]), two, team, opp, opt["samples"], rngs,
                               value=objective)
            out[sl, 0] = q[np.arange(n), changed[sl]]
            out[sl, 1] = q[np.arange(n), kept[sl]]
    for a in (team, opp):
        a.close()
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("targets", nargs="+", help="targets files of one round (with the search's q)")
    ap.add_argument("--policy", default="default", help="the policy the search improved (its base)")
    ap.add_argument("--opponent", default="heuristic", help="the other team of the rollouts")
    ap.add_argument("--winprob", default=None, help="the win-probability file of the search, if it had one")
    ap.add_argument("--samples", type=int, default=128)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=777)
    ap.add_argument("--json", default=None, help="also write the figures here")
    args = ap.parse_args(argv)
    if args.samples < 1 or args.workers < 1:
        ap.error("--samples and --workers must be >= 1")
    from smear_env.engine.observation import PHASE

    t0 = time.monotonic()
    data, rows, start = changes(args.targets, args.policy)
    if "q" not in data:
        ap.error("these targets files hold no search values (q): record them again")
    obs = data["obs"][rows].astype(np.float32)
    mask = data["mask"][rows]
    changed, kept = data["action"][rows], start[rows]
    seen = data["q"][rows, changed] - data["q"][rows, kept]
    opt = {"policy": args.policy, "opponent": args.opponent, "winprob": args.winprob, "samples": args.samples,
           "seed": args.seed}
    parts = np.array_split(np.arange(rows.size), args.workers)
    jobs = [(obs[p], mask[p], changed[p], kept[p], rows[p], opt) for p in parts]
    if args.workers > 1:
        with worker_pool(args.workers) as pool:
            values = np.concatenate(pool.map(revalue, jobs))
    else:
        values = revalue(jobs[0])
    fresh = values[:, 0] - values[:, 1]
    phase = np.argmax(obs[:, PHASE:PHASE + 4], axis=1)
    result: dict[str, Any] = {"targets": args.targets, "policy": args.policy, "opponent": args.opponent,
                              "winprob": args.winprob, "samples": args.samples, "seed": args.seed,
                              "rows": int(data["action"].size), "searched": int(data["searched"].sum()),
                              "phases": {}}
    print(f"{result['rows']} rows, {result['searched']} searched, {rows.size} changed; fresh deals: "
          f"{args.samples} a change; load average {os.getloadavg()[0]:.1f}")
    print("| phase | changes | mean gain the search saw | mean gain on fresh deals [± 1 s.e.] | "
          "fresh gain > 0 | sum of fresh gains |")
    print("|---|---|---|---|---|---|")
    for code, name in [*enumerate(PHASE_NAMES), (None, "all")]:
        m = np.ones(rows.size, dtype=bool) if code is None else phase == code
        if not m.any():
            continue
        se = float(fresh[m].std(ddof=1) / np.sqrt(m.sum())) if m.sum() > 1 else float("nan")
        row = {"changes": int(m.sum()), "seen_gain": float(seen[m].mean()),
               "fresh_gain": float(fresh[m].mean()), "fresh_gain_se": se,
               "fresh_positive": float((fresh[m] > 0).mean()), "fresh_gain_sum": float(fresh[m].sum())}
        result["phases"][name] = row
        print(f"| {name} | {row['changes']} | {row['seen_gain']:+.4f} | {row['fresh_gain']:+.4f} "
              f"[± {se:.4f}] | {100 * row['fresh_positive']:.1f}% | {row['fresh_gain_sum']:+.1f} |")
    result["seconds"] = round(time.monotonic() - t0, 1)
    print(f"{result['seconds']} s", file=sys.stderr)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
    return result


if __name__ == "__main__":
    main()
