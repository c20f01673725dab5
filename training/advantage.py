"""Advantage rounds: one step of policy improvement learned from exact action values in the true deal.

1. **values** -- the policy ``init`` (seats 0 and 2) plays ``opponent`` (1 and 3) on the batched collector
   (:class:`~training.collect.Collector`). At a random share of the team's decisions with more than one legal
   action (``share``, per phase), every legal action is played once in the *true* deal, the rest of the hand
   by the same players (:func:`~smear_env.agents.rollout.values_in_deals`), and valued by the chance of
   winning the game after the hand (``winprob``, :mod:`smear_env.agents.winprob`; without it the hand's
   score difference): the action's exact value in that deal. Across positions the deals follow the true
   distribution of the hidden cards given what the player saw, bids and plays included. An opponent that
   draws (``random``) draws from the round's seed; each continuation is then one sample.
2. **fit** -- a correction network (the policy's shape, its hidden layers initialised from the policy, the
   output layer from zeros) is regressed on ``A(s, a) = Q(s, a) - Q(s, pi(s))`` over the legal actions
   (:mod:`training.fit`). Held-out rows give, per margin, the mean true gain of the corrected choice over the
   policy's. The policy's checkpoint with this correction added (``margin``, ``max_logit_gap``,
   ``score_range``: :class:`~smear_env.agents.checkpoint.Correction`) is ``<run>/final.safetensors``.

``more_values`` fits on the values of other rounds' folders too (the same ``init`` and ``winprob``), so that
one correction learns from positions against several opponents. A policy that already has corrections gets
one more. Each step's figures are kept in ``<run>/round.json`` and in the written checkpoints' metadata
(``advantage_rounds``). ``steps`` picks the steps; a later step reads what the earlier ones wrote in the run
folder. A pipeline runs it as its ``advantage`` stage (:mod:`training.stages.advantage`); :func:`run_round`
is the stage's work. The values step's ``workers`` shares run on local processes or, with ``ray_address``, as
Ray tasks (:func:`values_shard`, :mod:`training.distributed`), with the same values for the same seeds.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from smear_env.agents.checkpoint import read_checkpoint
from smear_env.agents.registry import rollout_players
from smear_env.agents.rollout import true_deal, values_in_deals
from smear_env.agents.shipped import checkpoint_file
from smear_env.agents.winprob import load_winprob
from smear_env.core.config import SmearRules
from smear_env.engine.decoding import decode_batch
from smear_env.engine.observation import PHASE, SCORES
from smear_env.evaluation.batched import even_shares

from . import fit as fitter
from .checkpoint import save_tensors
from .collect import Collector
from .distill import policy_from_checkpoint
from .distributed.pool import open_pool
from .distributed.settings import RaySettings

__all__ = ["PHASE_NAMES", "add_correction", "collect_values", "fit_correction", "fitted_score_range",
           "one_step_gains", "run_round", "values_shard"]

PHASE_NAMES = ("bid", "trump", "discard", "play")
"""Decision phases, in the engine's codes 0-3."""
DEFAULT_SHARE = {"bid": 0.5, "trump": 1.0, "discard": 0.3, "play": 0.15}
"""The share of the team's decisions of each phase (more than one legal action) valued in step 1."""
MARGINS = (0.0, 0.005, 0.01, 0.02, 0.04, 0.06)
"""The margins of the held-out table of step 2."""
_CHUNK = 1024  # positions valued at once


def collect_values(policy: str, opponent: str, positions: int, seed: int, share: dict[str, float],
                   winprob: str | None, rules: SmearRules, lanes: int = 2048, log: Any = None
                   ) -> dict[str, np.ndarray]:
    """Step 1 in one process: ``positions`` rows ``obs`` (float16), ``mask``, ``value`` ((n, 72) float32
    exact values in the true deal, NaN where illegal) and ``policy`` (the policy's greedy action)."""

    # an opponent that draws (random) is allowed here: its draws come from this seed, and each action's
    # continuation is then one sample of them (still an unbiased value of the action against that opponent)
    players = rollout_players(policy, opponent, rules, rng=np.random.default_rng([seed, 1]))
    objective = None
    if winprob:
        objective = load_winprob(winprob, rules)
    probs = np.array([share[p] for p in PHASE_NAMES])
    rng = np.random.default_rng(seed)
    out: dict[str, list[np.ndarray]] = {"obs": [], "mask": [], "value": [], "policy": []}
    got = chunks = 0
    buf: list[tuple[np.ndarray, np.ndarray, Any, int]] = []  # (obs, mask, true deal, policy's action)
    t0 = time.monotonic()
    with Collector(lanes, rules, seed, *players) as col:
        vg = col.vg
        while got < positions:
            obs, mask, seat, actions = col.turn()
            phase = np.minimum(vg.phase.astype(np.int64), 3)
            pick = (((seat & 1) == 0) & (vg.phase <= 3) & (mask.sum(axis=1) > 1)
                    & (rng.random(lanes) < probs[phase]))
            buf += [(obs[i], mask[i], true_deal(vg, i), int(actions[i]))
                    for i in np.flatnonzero(pick).tolist()]
            if len(buf) >= _CHUNK or (buf and got + len(buf) >= positions):
                rows = buf[:positions - got]
                bo, bm = np.array([r[0] for r in rows]), np.array([r[1] for r in rows])
                v = values_in_deals(rules, decode_batch(bo, bm), bm, [r[2] for r in rows], col.team,
                                    col.opponent, rng, value=objective)
                out["obs"].append(bo.astype(np.float16))  # 0/1 features and small integers: exact
                out["mask"].append(bm)
                out["value"].append(v.astype(np.float32))
                out["policy"].append(np.array([r[3] for r in rows], dtype=np.int64))
                got += len(rows)
                buf = []
                chunks += 1
                if log is not None and chunks % 50 == 0:
                    log(f"values: {got} positions, {time.monotonic() - t0:.0f} s")
            col.step(actions)
    return {k: np.concatenate(v) for k, v in out.items()}


def _worker_log(msg: str) -> None:
    print(f"[worker 0] {msg}", flush=True)


def values_shard(policy: str, opponent: str, positions: int, seed: int, share: dict[str, float],
                 winprob: str | None, rules: dict[str, Any], out: str | None = None,
                 log: bool = False) -> dict[str, np.ndarray] | str:
    """One worker's share of the values step as a pool shard (:mod:`training.distributed`): the arrays of
    :func:`collect_values` (``rules`` as a dict), written to ``out`` (a local process; returns ``out``) or,
    without it, returned (a Ray task: no node needs the driver's disk for its output); its own seed makes
    them the same on any worker, local or on Ray. ``log``: progress lines on stdout."""
    data = collect_values(policy, opponent, positions, seed, share, winprob, SmearRules.from_dict(rules),
                          log=_worker_log if log else None)
    if out is None:
        return data
    np.savez(out, **data)
    return out


def one_step_gains(adv: np.ndarray, value: np.ndarray, mask: np.ndarray, policy: np.ndarray,
                   phase: np.ndarray, margins: Sequence[float] = MARGINS) -> list[dict[str, Any]]:
    """Per margin: the share of rows the correction changes and the mean true gain (``value`` of its choice
    minus that of the ``policy``'s action), overall and per phase, with standard errors."""
    r = np.arange(len(policy))
    a = np.where(mask, adv, -np.inf)
    best = np.argmax(a, axis=1)
    over = a[r, best] - a[r, policy]
    table = []
    for m in margins:
        choice = np.where(over > m, best, policy)
        gain = value[r, choice] - value[r, policy]
        row: dict[str, Any] = {"margin": float(m), "changed": float((choice != policy).mean()),
                               "gain": float(gain.mean()), "gain_se": float(gain.std() / np.sqrt(gain.size))}
        for k, name in enumerate(PHASE_NAMES):
            s = phase == k
            if s.any():
                row[name] = {"rows": int(s.sum()), "changed": float((choice != policy)[s].mean()),
                             "gain": float(gain[s].mean()),
                             "gain_se": float(gain[s].std() / np.sqrt(s.sum()))}
        table.append(row)
    return table


def fit_correction(policy_file: str, data: dict[str, np.ndarray], epochs: int, lr: float, batch: int,
                   seed: int, holdout: float = 0.03, log: Any = print) -> tuple[dict[str, torch.Tensor],
                                                                             dict[str, Any], dict[str, Any]]:
    """Step 2: (the correction's tensors, its ``network``, the fit's record with the held-out table)."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    net, meta = policy_from_checkpoint(policy_file, warn_corrections=False)  # only its trunk is used
    torch.nn.init.zeros_(net.pi_head.weight)
    torch.nn.init.zeros_(net.pi_head.bias)
    n = data["policy"].size
    obs = torch.from_numpy(data["obs"].astype(np.float32))
    mask_np = data["mask"].astype(bool)
    mask = torch.from_numpy(mask_np)
    value = np.nan_to_num(data["value"].astype(np.float32))
    target = torch.from_numpy(np.where(mask_np, value - value[np.arange(n), data["policy"]][:, None], 0)
                              .astype(np.float32))
    val, train = fitter.holdout(rng, n, holdout, at_least=1)

    def loss(idx: torch.Tensor) -> tuple[torch.Tensor, dict[str, float]]:
        m = mask[idx]
        err = torch.where(m, net.logits(obs[idx], m) - target[idx], 0.0)
        mse = (err * err).sum() / m.sum()
        return mse, {"total": mse.item() * idx.numel()}

    losses: list[float] = []

    def after_epoch(epoch: int, stats: dict[str, list[float]]) -> None:
        losses.append(sum(stats["total"]) / train.size)
        log(f"fit: epoch {epoch}: squared error {losses[-1]:.5f}")

    fitter.fit([*net.pi_body.parameters(), *net.pi_head.parameters()], loss, epochs, lr, train, batch, rng,
               module=net, after_epoch=after_epoch)
    net.eval()
    with torch.no_grad():
        adv = torch.cat([net.logits(obs[val[i:i + 8192]], mask[val[i:i + 8192]])
                         for i in range(0, val.size, 8192)]).numpy()
    err = np.where(mask_np[val], adv - target[val].numpy(), 0)
    phase = np.argmax(data["obs"][val, PHASE:PHASE + 4], axis=1)
    table = one_step_gains(adv, value[val], mask_np[val], data["policy"][val], phase)
    record = {"rows": int(n), "held_out_rows": int(val.size), "epochs": epochs, "lr": lr, "batch": batch,
              "seed": seed, "train_squared_error": losses,
              "held_out_squared_error": float((err ** 2).sum() / mask_np[val].sum()),
              "held_out_one_step_gains": table}
    state = net.state_dict()
    tensors = {k: v for k, v in state.items() if k == "obs_scale" or k.startswith(("pi_body.", "pi_head."))}
    network = {"hidden_sizes": list(meta["network"]["hidden_sizes"]),
               "activation": meta["network"].get("activation", "relu"),
               "suit_canonical": bool(meta["network"].get("suit_canonical", False))}
    return tensors, network, record


def fitted_score_range(obs: np.ndarray) -> dict[str, list[float]]:
    """The raw scores (the deciding team's, the other team's) of observations ``obs``, each as
    ``[min, max]``: the ``score_range`` of a correction fitted on them
    (:class:`~smear_env.agents.checkpoint.Correction`)."""
    own, other = obs[:, SCORES].astype(np.float64), obs[:, SCORES + 1].astype(np.float64)
    return {"own": [float(own.min()), float(own.max())], "other": [float(other.min()), float(other.max())]}


def add_correction(init: str, tensors: dict[str, torch.Tensor], network: dict[str, Any], margin: float,
                   record: dict[str, Any], out: str | Path, max_logit_gap: float = 3.0,
                   score_range: dict[str, list[float]] | None = None) -> int:
    """Write checkpoint ``init`` (its policy and its corrections, no training state) with one more
    correction (``tensors`` of :func:`fit_correction`, stored as float16, ``network``, ``margin``,
    ``max_logit_gap``, ``score_range``: where it applies, :func:`fitted_score_range`; ``None``: everywhere)
    to ``out``; ``record`` is appended to the metadata's ``advantage_rounds``. Returns the new correction's
    index."""

    old, meta = read_checkpoint(init)
    meta = {k: v for k, v in meta.items() if k not in ("state", "name", "model_card")}
    index = len(meta.get("corrections") or [])
    kept = {k: v for k, v in old.items() if k.startswith(("policy.", "correction."))}
    # float16 halves the file (the players compute in float32 from these values, so every player of the file
    # makes the same choices; a correction's outputs are differences of a few hundredths)
    kept.update({f"correction.{index}.{k}": np.asarray(v.detach().numpy() if hasattr(v, "detach") else v,
                                                        dtype=np.float16) for k, v in tensors.items()})
    spec = {**network, "margin": float(margin)}
    if np.isfinite(max_logit_gap):  # no entry: no trust region (JSON has no infinity)
        spec["max_logit_gap"] = float(max_logit_gap)
    if score_range is not None:
        spec["score_range"] = score_range
    meta["corrections"] = [*(meta.get("corrections") or []), spec]
    meta["advantage_rounds"] = [*(meta.get("advantage_rounds") or []), record]
    save_tensors(out, kept, meta)
    return index


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes (hex): which policy a values step valued, whatever its path."""

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def round_values(run: Path, init: str, winprob: str | None) -> tuple[dict[str, Any], list[str]]:
    """(the values record, the values files) of another round's folder ``run`` whose values step valued the
    same policy ``init`` by the same objective ``winprob``; a folder without one, or of another policy or
    objective, is a ValueError naming it and the difference."""
    path = run / "round.json"
    rec = json.loads(path.read_text()).get("values") if path.exists() else None
    if not rec:
        raise ValueError(f"more_values {str(run)!r}: no values step recorded in {str(path)!r}")
    checks = [("winprob", rec.get("winprob"), winprob)]
    if "policy_sha256" in rec:  # the file's content: a path may have been overwritten since
        checks.append(("policy file (sha256)", rec["policy_sha256"], file_sha256(init)))
    else:  # a record from before the hash was kept
        checks.append(("policy", rec.get("policy"), init))
    for what, got, want in checks:
        same = got == want or (what == "policy" and got is not None
                               and Path(got).resolve() == Path(want).resolve())
        if not same:
            raise ValueError(f"more_values {str(run)!r}: its values step had {what} {got!r}, this round "
                             f"{want!r}; advantages are only comparable for the same policy and objective")
    files = [str(run / f"values_{i}.npz") for i in range(len(rec.get("seeds", [])))]
    missing = [f for f in files if not Path(f).exists()]
    if missing or not files:
        raise ValueError(f"more_values {str(run)!r}: values files missing: {missing or 'none recorded'}")
    return rec, files


def run_round(init: str, run: Path, *, opponent: str, more_values: Sequence[str], winprob: str | None,
              positions: int, share: Mapping[str, float], workers: int, epochs: int, lr: float, batch: int,
              margin: float, max_logit_gap: float | None, score_range: str, steps: Sequence[str], seed: int,
              ray_address: str | None = None, resume: bool = False) -> None:
    """The ``steps`` of an advantage round of policy ``init`` (a checkpoint file or a shipped agent name) in
    run folder ``run`` (the options: :class:`training.stages.advantage.Config`; ``share``: the phases it
    names, the others :data:`DEFAULT_SHARE`; ``max_logit_gap`` None: no trust region; ``ray_address``: the
    values step's ``workers`` shares run as Ray tasks there, with the same files as on local processes).
    ``resume``: keep a values step done for the same policy, opponent, objective, positions, share and seeds
    (files intact)."""

    rules = SmearRules()
    run.mkdir(parents=True, exist_ok=True)
    init = checkpoint_file(init)
    share = {**DEFAULT_SHARE, **share}
    record_path = run / "round.json"
    record: dict[str, Any] = json.loads(record_path.read_text()) if record_path.exists() else {}
    values_files = [str(run / f"values_{i}.npz") for i in range(workers)]
    final_file = run / "final.safetensors"
    seeds = [seed + i for i in range(workers)]
    want = {"policy_sha256": file_sha256(init), "opponent": opponent, "winprob": winprob,
            "positions": positions, "share": share, "seeds": seeds}
    done = all((record.get("values") or {}).get(k) == v for k, v in want.items())

    def log(msg: str) -> None:
        print(msg, flush=True)

    if "values" in steps and resume and done and all(Path(f).is_file() for f in values_files):
        log(f"values: kept the {positions} positions of {values_files[0]}...")
    elif "values" in steps:
        t0 = time.monotonic()
        parts = even_shares(positions, workers)
        local = not ray_address  # local processes write their files; Ray tasks return arrays, written here
        jobs = [(init, opponent, parts[i], seeds[i], share, winprob, rules.to_dict(),
                 values_files[i] if local else None, local and i == 0) for i in range(workers)]
        with open_pool(RaySettings(address=ray_address or None, workers=workers)) as pool:
            got = pool.map(values_shard, jobs)
        if not local:
            for out, data in zip(values_files, got, strict=True):
                np.savez(out, **data)
        record["values"] = {"policy": init, **want, "seconds": round(time.monotonic() - t0, 1)}
        log(f"values: {positions} positions in {record['values']['seconds']} s")
        record_path.write_text(json.dumps(record, indent=1))  # kept if a later step fails
    if "fit" in steps:
        t0 = time.monotonic()
        torch.set_num_threads(max(1, min(workers, os.cpu_count() or 1)))
        more = [round_values(Path(d), init, winprob) for d in more_values]
        files = values_files + [f for _, fs in more for f in fs]
        parts = [dict(np.load(f)) for f in files]
        data = {k: np.concatenate([p[k] for p in parts]) for k in ("obs", "mask", "value", "policy")}
        del parts
        tensors, network, fit = fit_correction(init, data, epochs, lr, batch, seed, log=log)
        box = fitted_score_range(data["obs"]) if score_range == "fitted" else None
        del data
        fit["seconds"] = round(time.monotonic() - t0, 1)
        fit.update(policy=init, objective=winprob or "hand score difference", opponent=opponent,
                   margin=margin, values=record.get("values"))
        if more:
            fit["more_values"] = [{"run_dir": d, **rec} for d, (rec, _) in zip(more_values, more,
                                                                                       strict=True)]
        gap = float("inf") if max_logit_gap is None else max_logit_gap
        index = add_correction(init, tensors, network, margin, fit, final_file, gap, box)
        record["fit"] = fit
        for row in fit["held_out_one_step_gains"]:
            log(f"held out, margin {row['margin']}: changed {100 * row['changed']:.2f}%, gain "
                f"{row['gain']:+.5f} ± {row['gain_se']:.5f} a decision")
        log(f"wrote {final_file}: {init} with correction {index} (margin {margin}, scores "
            f"{'everywhere' if box is None else box})")
    record_path.write_text(json.dumps(record, indent=1))
