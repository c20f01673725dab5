"""Advantage rounds: one step of policy improvement learned from exact action values in the true deal.

1. **values** -- the policy ``--init`` (seats 0 and 2) plays ``--opponent`` (1 and 3) on the batched collector
   (:class:`~training.collect.Collector`). At a random share of the team's decisions with more than one legal
   action (``--share``, per phase), every legal action is played once in the *true* deal, the rest of the
   hand by the same players (:func:`~smear_env.agents.rollout.values_in_deals`), and valued by the chance of
   winning the game after the hand (``--winprob``, :mod:`smear_env.agents.winprob`; without it the hand's
   score difference): the action's exact value in that deal. Across positions the deals follow the true
   distribution of the hidden cards given what the player saw, bids and plays included. An opponent that
   draws (``--opponent random``) draws from the round's seed; each continuation is then one sample.
2. **fit** -- a correction network (the policy's shape, its hidden layers initialised from the policy, the
   output layer from zeros) is regressed on ``A(s, a) = Q(s, a) - Q(s, pi(s))`` over the legal actions
   (:mod:`training.fit`). Held-out rows give, per margin, the mean true gain of the corrected choice over the
   policy's. The policy's checkpoint with this correction added (``--margin``, ``--max-logit-gap``,
   ``--score-range``: :class:`~smear_env.agents.checkpoint.Correction`) is ``<run-dir>/final.safetensors``.

    python -m training.advantage --init default --run-dir runs/adv --winprob runs/winprob_C.safetensors \\
        --positions 1000000 --workers 2 --seed 95101

``--more-values DIR ...`` fits on the values of other rounds' folders too (the same ``--init`` and
``--winprob``), so that one correction learns from positions against several opponents. A policy that already
has corrections gets one more. Each step's figures and the command are kept in ``<run-dir>/round.json`` and
in the written checkpoints' metadata (``advantage_rounds``). ``--steps`` picks the steps (default
``values,fit``); a later step reads what the earlier ones wrote in the run folder.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections.abc import Sequence
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
from smear_env.evaluation.batched import even_shares, one_blas_thread, worker_pool

from . import fit as fitter
from .checkpoint import save_tensors
from .collect import Collector
from .distill import policy_from_checkpoint

__all__ = ["PHASE_NAMES", "STEPS", "add_correction", "collect_values", "fit_correction", "fitted_score_range",
           "main", "one_step_gains"]

PHASE_NAMES = ("bid", "trump", "discard", "play")
"""Decision phases, in the engine's codes 0-3."""
STEPS = ("values", "fit")
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


def _values_job(job: dict[str, Any]) -> str:
    torch.set_num_threads(1)
    with one_blas_thread():
        data = collect_values(job["policy"], job["opponent"], job["positions"], job["seed"], job["share"],
                              job["winprob"], SmearRules.from_dict(job["rules"]),
                              log=(lambda m: print(f"[worker 0] {m}", flush=True)) if job["first"] else None)
    np.savez(job["out"], **data)
    return job["out"]


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


def more_values(run: Path, init: str, winprob: str | None) -> tuple[dict[str, Any], list[str]]:
    """(the values record, the values files) of another round's folder ``run`` whose values step valued the
    same policy ``init`` by the same objective ``winprob``; a folder without one, or of another policy or
    objective, is a ValueError naming it and the difference."""
    path = run / "round.json"
    rec = json.loads(path.read_text()).get("values") if path.exists() else None
    if not rec:
        raise ValueError(f"--more-values {str(run)!r}: no values step recorded in {str(path)!r}")
    checks = [("winprob", rec.get("winprob"), winprob)]
    if "policy_sha256" in rec:  # the file's content: a path may have been overwritten since
        checks.append(("policy file (sha256)", rec["policy_sha256"], file_sha256(init)))
    else:  # a record from before the hash was kept
        checks.append(("policy", rec.get("policy"), init))
    for what, got, want in checks:
        same = got == want or (what == "policy" and got is not None
                               and Path(got).resolve() == Path(want).resolve())
        if not same:
            raise ValueError(f"--more-values {str(run)!r}: its values step had {what} {got!r}, this round "
                             f"{want!r}; advantages are only comparable for the same policy and objective")
    files = [str(run / f"values_{i}.npz") for i in range(len(rec.get("seeds", [])))]
    missing = [f for f in files if not Path(f).exists()]
    if missing or not files:
        raise ValueError(f"--more-values {str(run)!r}: values files missing: {missing or 'none recorded'}")
    return rec, files


def _share(text: str) -> dict[str, float]:
    share = dict(DEFAULT_SHARE)
    for part in filter(None, text.split(",")):
        key, _, val = part.partition("=")
        if key not in share:
            raise argparse.ArgumentTypeError(f"--share: unknown phase {key!r}; phases: "
                                             f"{', '.join(PHASE_NAMES)}")
        try:
            share[key] = float(val)
        except ValueError:
            raise argparse.ArgumentTypeError(f"--share: {key}={val!r} is not a number") from None
        if not 0 <= share[key] <= 1:
            raise argparse.ArgumentTypeError(f"--share: {key} must be between 0 and 1, not {share[key]}")
    return share


def _steps(text: str) -> list[str]:
    steps = [s for s in text.split(",") if s]
    bad = [s for s in steps if s not in STEPS]
    if bad or not steps:
        raise argparse.ArgumentTypeError(f"--steps: {bad or text!r}; each must be one of {', '.join(STEPS)}")
    return steps


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m training.advantage", description=__doc__.split("\n\n")[0])
    ap.add_argument("--init", required=True, help="the policy to improve: a checkpoint file or shipped name")
    ap.add_argument("--run-dir", required=True, help="folder for the round's files")
    ap.add_argument("--opponent", default="heuristic",
                    help="agent spec of the other team (in the values step it may draw, e.g. random; the "
                         "labels step needs one that does not)")
    ap.add_argument("--more-values", nargs="+", default=[], metavar="RUN_DIR",
                    help="fit also on the values step of these run folders (the same --init and --winprob, "
                         "e.g. against another opponent)")
    ap.add_argument("--winprob", default=None,
                    help="win-probability file (python -m training.winprob): the objective; default the "
                         "hand's score difference")
    ap.add_argument("--positions", type=int, default=1_000_000, help="positions valued in step 1")
    ap.add_argument("--share", type=_share, default=dict(DEFAULT_SHARE),
                    help="share of the team's decisions valued per phase, e.g. bid=0.5,play=0.15")
    ap.add_argument("--workers", type=int, default=2, help="processes of step 1")
    ap.add_argument("--epochs", type=int, default=5, help="epochs of the fit (step 2)")
    ap.add_argument("--lr", type=float, default=3e-4, help="learning rate of the fit")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--margin", type=float, default=0.04,
                    help="the corrected policy changes an action only where the correction's best is this "
                         "much better (objective's units)")
    ap.add_argument("--max-logit-gap", type=float, default=3.0,
                    help="the correction may take only actions whose policy logit is at most this far below "
                         "the greedy one's (a trust region; inf: none)")
    ap.add_argument("--score-range", choices=("fitted", "everywhere"), default="fitted",
                    help="fitted (default): the correction applies only where both teams' scores lie within "
                         "those of the positions it was fitted on (elsewhere its values are an "
                         "extrapolation); everywhere: at every score")
    ap.add_argument("--steps", type=_steps, default=list(STEPS),
                    help=f"comma-separated steps to run, of {', '.join(STEPS)} (default: values,fit)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--resume", action="store_true", help="keep a values step of --run-dir done for the same "
                    "policy, opponent, objective, positions, share and seeds (its files intact) instead of "
                    "valuing again")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    for key in ("positions", "workers", "epochs", "batch"):
        if getattr(args, key) < 1:
            build_parser().error(f"--{key.replace('_', '-')} must be >= 1")
    if not args.margin >= 0 or not args.max_logit_gap >= 0:
        build_parser().error("--margin and --max-logit-gap must be >= 0")
    given = [a for a in (list(argv) if argv is not None else sys.argv[1:]) if a != "--resume"]
    return run(args, " ".join(["python -m training.advantage", *given]))


def values_done(record: dict[str, Any], init: str, args: argparse.Namespace, files: list[str]) -> bool:
    """Whether ``record`` (a round.json) holds the values step that ``args`` asks for, with its files."""
    rec = record.get("values") or {}
    want = {"policy_sha256": file_sha256(init), "opponent": args.opponent, "winprob": args.winprob,
            "positions": args.positions, "share": args.share,
            "seeds": [args.seed + i for i in range(len(files))]}
    return all(rec.get(k) == v for k, v in want.items()) and all(Path(f).is_file() for f in files)


def run(args: argparse.Namespace, command: str) -> int:
    """The steps of ``args`` (:func:`build_parser`'s) in ``args.run_dir``."""

    rules = SmearRules()
    run = Path(args.run_dir)
    run.mkdir(parents=True, exist_ok=True)
    init = checkpoint_file(args.init)
    record_path = run / "round.json"
    record: dict[str, Any] = json.loads(record_path.read_text()) if record_path.exists() else {}
    record["command"] = command
    values_files = [str(run / f"values_{i}.npz") for i in range(args.workers)]
    final_file = run / "final.safetensors"

    def log(msg: str) -> None:
        print(msg, flush=True)

    if "values" in args.steps and getattr(args, "resume", False) and values_done(record, init, args,
                                                                                  values_files):
        log(f"values: kept the {args.positions} positions of {values_files[0]}...")
    elif "values" in args.steps:
        t0 = time.monotonic()
        parts = even_shares(args.positions, args.workers)
        jobs = [{"policy": init, "opponent": args.opponent, "positions": parts[i], "seed": args.seed + i,
                 "share": args.share, "winprob": args.winprob, "rules": rules.to_dict(),
                 "out": values_files[i], "first": i == 0} for i in range(args.workers)]
        if args.workers == 1:
            _values_job(jobs[0])
        else:
            with worker_pool(args.workers) as pool:
                pool.map(_values_job, jobs)
        record["values"] = {"policy": init, "policy_sha256": file_sha256(init), "opponent": args.opponent,
                            "winprob": args.winprob,
                            "positions": args.positions, "share": args.share, "seeds":
                            [j["seed"] for j in jobs], "seconds": round(time.monotonic() - t0, 1)}
        log(f"values: {args.positions} positions in {record['values']['seconds']} s")
        record_path.write_text(json.dumps(record, indent=1))  # kept if a later step fails
    if "fit" in args.steps:
        t0 = time.monotonic()
        torch.set_num_threads(max(1, min(args.workers, os.cpu_count() or 1)))
        more = [more_values(Path(d), init, args.winprob) for d in args.more_values]
        files = values_files + [f for _, fs in more for f in fs]
        parts = [dict(np.load(f)) for f in files]
        data = {k: np.concatenate([p[k] for p in parts]) for k in ("obs", "mask", "value", "policy")}
        del parts
        tensors, network, fit = fit_correction(init, data, args.epochs, args.lr, args.batch, args.seed,
                                               log=log)
        box = fitted_score_range(data["obs"]) if args.score_range == "fitted" else None
        del data
        fit["seconds"] = round(time.monotonic() - t0, 1)
        fit.update(policy=init, objective=args.winprob or "hand score difference", opponent=args.opponent,
                   margin=args.margin, values=record.get("values"), command=record["command"])
        if more:
            fit["more_values"] = [{"run_dir": d, **rec} for d, (rec, _) in zip(args.more_values, more,
                                                                                       strict=True)]
        index = add_correction(init, tensors, network, args.margin, fit, final_file, args.max_logit_gap, box)
        record["fit"] = fit
        for row in fit["held_out_one_step_gains"]:
            log(f"held out, margin {row['margin']}: changed {100 * row['changed']:.2f}%, gain "
                f"{row['gain']:+.5f} ± {row['gain_se']:.5f} a decision")
        log(f"wrote {final_file}: {init} with correction {index} (margin {args.margin}, scores "
            f"{'everywhere' if box is None else box})")
    record_path.write_text(json.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
