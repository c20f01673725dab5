"""Expert iteration with rollout search: search improves a policy, the policy learns the search's choices.

Each round:

1. the rollout agent (:mod:`smear_env.agents.rollout`) built on the current policy plays ``games``
   duplicate games against ``opponent`` per worker (each worker its own deal seed), recording every decision
   it makes (``targets_<round>_<worker>.npz``);
2. :func:`training.distill.distill` fine-tunes the current policy on those choices and, with ``window`` W,
   on those of the ``W - 1`` rounds before (``round<round>.safetensors``); the result is the next round's
   policy.

From a checkpoint with advantage corrections (:mod:`training.advantage`), round 1 searches with the corrected
player, and its student is the network fine-tuned towards those choices: the corrections are not carried into
the rounds' checkpoints (:mod:`training.distill` says how).

The run folder keeps a ``log.jsonl`` line per round (the search agent's match against the opponent and the
distillation's figures) and the checkpoints; ``final.safetensors`` is the last round's. A pipeline runs it as
its ``expert_iteration`` stage (:mod:`training.stages.expert_iteration`); :func:`run_rounds` is the stage's
work.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from smear_env.agents.registry import rollout_from_spec
from smear_env.agents.shipped import checkpoint_file
from smear_env.core.config import SmearRules
from smear_env.evaluation import run_match
from smear_env.evaluation.batched import one_blas_thread

from .checkpoint import save_policy
from .distill import distill, distilled_metadata, load_targets, policy_from_checkpoint, save_targets
from .distributed.pool import open_pool
from .distributed.settings import RaySettings


def targets_path(run: Path, rnd: int, worker: int) -> Path:
    """The targets file of round ``rnd``'s worker ``worker`` in run folder ``run``."""
    return run / f"targets_{rnd}_{worker}.npz"


def search_spec(policy: str, opponent: str, samples: int, phases: str, options: str = "") -> str:
    """The rollout agent spec of a round (``options``: more ``key=value`` pairs, comma-joined)."""
    spec = f"rollout:base={policy},opponent={opponent},samples={samples},phases={phases}"
    return f"{spec},{options}" if options else spec


def generate(spec: str, opponent: str, games: int, seed: int, out: str) -> dict[str, Any]:
    """Play ``games`` duplicate games (seed ``seed``) of the rollout agent ``spec`` against ``opponent``,
    write its decisions to ``out``; the match's figures."""

    rules = SmearRules()
    agent = rollout_from_spec(spec, rules)
    agent.recorded = []
    t0 = time.monotonic()
    with one_blas_thread():
        summary = run_match(agent, opponent, games=games, rules=rules, seed=seed, engine="batched").summary()
    rows = save_targets(out, agent.recorded)
    return {"seed": seed, "games": games, "win_rate": summary["win_rate_a"],
            "win_rate_ci95": summary["win_rate_a_ci95"], "margin_per_hand": summary["margin_per_hand_a"],
            "rows": rows, "searched": agent.searched, "changed": agent.changed,
            "seconds": round(time.monotonic() - t0, 1)}


def search_shard(spec: str, opponent: str, games: int, seed: int) -> dict[str, Any]:
    """An expert-iteration round's share: ``games`` duplicate games of the rollout agent ``spec`` against
    ``opponent`` on seed ``seed``; ``{"match": figures without wall time, "targets": the recorded rows}``."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "targets.npz"
        match = generate(spec, opponent, games, seed, str(out))
        targets = load_targets([out])
    match.pop("seconds", None)
    return {"match": match, "targets": targets}


def done_rounds(run: Path) -> int:
    """How many rounds of run folder ``run`` are done: log lines whose checkpoints exist, in order."""
    n = 0
    if (run / "log.jsonl").is_file():
        for line in (run / "log.jsonl").read_text().splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                break
            if rec.get("round") != n + 1 or not (run / f"round{n + 1}.safetensors").is_file():
                break
            n += 1
    return n


def run_rounds(init: str, run: Path, *, rounds: int, games: int, workers: int, seed: int, opponent: str,
               samples: int, phases: str, search_options: str, epochs: int, lr: float, batch: int,
               window: int, changed_weight: float, min_gain: float | None, ray_address: str | None,
               resume: bool = False) -> Path:
    """The rounds of expert iteration from ``init`` (a checkpoint file or a shipped agent name) in run folder
    ``run`` (the options: :class:`training.stages.expert_iteration.Config`); ``resume``: keep the rounds
    already done. Returns the final checkpoint."""

    rollout_from_spec(search_spec(checkpoint_file(init), opponent, samples, phases,
                                  search_options)).close()  # a bad option fails here, not in a worker
    run.mkdir(parents=True, exist_ok=True)
    policy_path = checkpoint_file(init)
    torch.set_num_threads(1)
    first = 1
    if resume:
        first = done_rounds(run) + 1
        if first > 1:
            policy_path = str(run / f"round{first - 1}.safetensors")
            print(f"resumed after round {first - 1}", flush=True)
        log = run / "log.jsonl"
        lines = log.read_text().splitlines()[:first - 1] if log.exists() else []
        log.write_text("".join(ln + "\n" for ln in lines))
    elif (run / "log.jsonl").exists():
        (run / "log.jsonl").unlink()
    for rnd in range(first, rounds + 1):
        t0 = time.monotonic()
        spec = search_spec(policy_path, opponent, samples, phases, search_options)
        jobs = [(spec, opponent, games, seed + (rnd - 1) * workers + w, str(targets_path(run, rnd, w)))
                for w in range(workers)]
        with open_pool(RaySettings(address=ray_address or None, workers=workers)) as pool:
            if ray_address:  # the targets come back as arrays (no node needs this disk), written here
                parts = pool.map(search_shard, [job[:4] for job in jobs])
                for job, part in zip(jobs, parts, strict=True):
                    np.savez_compressed(job[4], **part["targets"])
                matches = [part["match"] for part in parts]
            else:
                matches = pool.map(generate, jobs)
        policy, meta = policy_from_checkpoint(policy_path)
        kept = range(max(1, rnd - window + 1), rnd + 1)
        data = load_targets([targets_path(run, r, w) for r in kept for w in range(workers)])
        res = distill(policy, data, epochs, lr, batch, seed=seed + rnd, changed_weight=changed_weight,
                      min_gain=min_gain)
        out = run / f"round{rnd}.safetensors"
        out_meta = distilled_metadata(meta, "expert_iteration", {
            "round": rnd, "init": init, "search": spec, "matches": matches, "window": window,
            "changed_weight": changed_weight, "min_gain": min_gain, **res})
        save_policy(out, policy.state_dict(), out_meta)
        line = {"round": rnd, "search": spec, "matches": matches, "distill": res,
                "seconds": round(time.monotonic() - t0, 1), "checkpoint": str(out)}
        with open(run / "log.jsonl", "a") as f:
            f.write(json.dumps(line) + "\n")
        print(json.dumps(line), flush=True)
        policy_path = str(out)
    shutil.copyfile(policy_path, run / "final.safetensors")
    return run / "final.safetensors"
