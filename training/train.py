"""``smear-train``: train a Smear agent from a config file.

    smear-train --config configs/quickstart.yaml                 # run folder runs/quickstart
    smear-train --config configs/default.yaml --set total_timesteps=2_000_000 --set algorithm.ent_coef=0.02
    smear-train --config configs/default.yaml --variant small    # a named variant of the file
    smear-train --run-dir runs/default --resume                  # continue a stopped run
    smear-train --help-config                                    # every config field, default and doc
    smear-train --schema > smear-train.schema.json               # the JSON Schema of config files
    smear-train --config configs/default.yaml --variant r90 --run-dir runs/r90   # a pipeline of stages

A config file with ``stages:`` is a pipeline (:mod:`training.pipeline`): its stages run in order into
``RUN/stages/NN-id/``; running it again continues it (the stages done are kept), ``--from-stage`` and
``--until-stage`` run a part. A config without ``stages:`` trains one run in the run folder itself:

Run folder: ``config.yaml`` (the resolved config), ``command.txt``, ``train.log`` (evaluations, JSON
lines), ``tb/`` (TensorBoard: losses, bid statistics, win rates vs the baselines), ``win_rate.png`` (the
evaluations' win rates over training steps, :mod:`training.plot`),
``checkpoints/step_N.safetensors`` and ``checkpoints/latest.safetensors`` (written atomically; weights,
optimizer, opponent pool, step and RNG state -- no pickle). ``--resume`` continues from the newest readable
checkpoint (``latest.safetensors``, or a newer or intact ``step_N`` when ``latest`` is missing, older or
corrupt) with the run's ``config.yaml`` (``--set`` may still override fields, e.g. a larger
total_timesteps); ``config.yaml`` and ``command.txt`` are only rewritten once the checkpoint has loaded, so
a failed resume leaves the run folder as it was. Temporary files of an interrupted save
(:func:`training.checkpoint.is_temporary_file`) are removed at every start. Ctrl-C (or SIGTERM) saves a
checkpoint before exiting; during the imitation warm start nothing is saved (the warm start is not
resumable: run the same command again). Agent specs in a config that run programs (``cmd:``) need
``--allow-commands``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import shutil
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from smear_env.actions import short_repr as short
from smear_env.agents.checkpoint import CheckpointError, check_compatible, prefixed, read_checkpoint
from smear_env.agents.protocol import BotError
from smear_env.agents.registry import CommandNotAllowed, check_commands_allowed, is_command_spec
from smear_env.agents.shipped import SHIPPED_AGENTS, shipped_path
from smear_env.game import IllegalActionError

from .algorithms import Trainer, make_trainer
from .algorithms.decision_stats import TrainLogAverager
from .checkpoint import (
    base_metadata,
    is_temporary_file,
    network_metadata,
    policy_tensors,
    same_file,
    save_tensors,
    write_text_atomic,
)
from .config import (
    MAX_DECISIONS,
    ConfigError,
    TrainConfig,
    dump_yaml,
    help_text,
    load_config,
    schema,
    to_dict,
)
from .evaluation import evaluate_policy
from .plot import plot_run


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="smear-train", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Config files: YAML with a 'default:' block plus optional named "
                                        "variants. See --help-config.")
    ap.add_argument("--config", help="config file (YAML with a 'default:' block)")
    ap.add_argument("--variant", help="named variant of the config file, merged over its 'default' block")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                    help="override a config field (dotted key, YAML value), e.g. --set algorithm.n_epochs=8")
    ap.add_argument("--run-dir", help="run folder (default runs/<config file name>)")
    ap.add_argument("--resume", action="store_true",
                    help="continue the run in --run-dir from its latest checkpoint")
    ap.add_argument("--overwrite", action="store_true",
                    help="start afresh in a --run-dir that already holds a run (its checkpoints and logs are "
                         "deleted)")
    ap.add_argument("--allow-commands", action="store_true",
                    help="let the config file's 'cmd:' agent specs (opponents, teacher, evaluation "
                         "opponents) run their programs; without it such a config is refused (a config file "
                         "is data: allow programs only from a config you trust). A spec typed in --set needs "
                         "no flag")
    ap.add_argument("--help-config", action="store_true",
                    help="print every config field with its doc and exit")
    ap.add_argument("--schema", action="store_true",
                    help="print the JSON Schema of config files (for editors: docs/training.md) and exit")
    ap.add_argument("--from-stage", metavar="ID", help="pipeline: start at this stage (those before it done)")
    ap.add_argument("--until-stage", metavar="ID", help="pipeline: stop after this stage")
    return ap


class Run:
    """Run folder I/O: checkpoints, TensorBoard, evaluation log."""

    def __init__(self, run_dir: Path, cfg: TrainConfig) -> None:
        self.dir = run_dir
        self.cfg = cfg
        self.ckpt_dir = run_dir / "checkpoints"
        self.ckpt_dir.mkdir(parents=True, exist_ok=True)
        self.writer = None
        if cfg.output.tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter  # lazy: optional (ImportError guarded)

                self.writer = SummaryWriter(str(run_dir / "tb"))
            except ImportError:  # pragma: no cover - tensorboard is a dependency
                print("warning: tensorboard not installed; no TensorBoard logs", file=sys.stderr)

    def scalars(self, values: dict[str, float], step: int) -> None:
        if self.writer is not None:
            for k, v in values.items():
                self.writer.add_scalar(k, v, step)

    def log_train(self, step: int, elapsed: float, averages: Any) -> None:
        """A ``train`` record: the means of the trainer's scalars since the last one (losses, the
        per-decision-type diagnostics of :mod:`training.algorithms.decision_stats`, bids, speed)."""
        values = averages.flush()
        if values:
            self.log({"step": step, "elapsed_s": round(elapsed, 1), "train": values})

    def log(self, record: dict[str, Any]) -> None:
        with open(self.dir / "train.log", "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    def save(self, trainer: Trainer, elapsed: float) -> Path:
        cfg = self.cfg
        meta = base_metadata(cfg.rules, network_metadata(cfg.network), cfg.algorithm.name, trainer.step,
                             to_dict(cfg))
        tensors, state = trainer.state()
        meta["state"] = state
        meta["elapsed_s"] = round(elapsed, 1)
        src = getattr(trainer, "init_source", None)
        if src:
            meta["init_from"] = src  # the checkpoint the run started from (config key init_from)
        all_t = policy_tensors(trainer.policy_state())
        all_t.update(tensors)
        path = self.ckpt_dir / f"step_{trainer.step}.safetensors"
        save_tensors(path, all_t, meta)
        save_tensors(self.ckpt_dir / "latest.safetensors", all_t, meta)
        keep = cfg.output.keep_checkpoints
        if keep > 0:
            for _, p in step_checkpoints(self.ckpt_dir)[:-keep]:
                p.unlink(missing_ok=True)
        return path

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def step_checkpoints(ckpt_dir: Path) -> list[tuple[int, Path]]:
    """(N, path) of the ``step_N.safetensors`` files of a checkpoint folder, by N."""
    return sorted((int(p.stem[5:]), p) for p in ckpt_dir.glob("step_*.safetensors") if p.stem[5:].isdigit())


def init_from_checkpoint(trainer: Trainer, cfg: TrainConfig) -> dict[str, Any]:
    """Load the policy weights of ``cfg.init_from`` (a path or a shipped agent name) into the trainer's
    policy; returns what the run's metadata records of it. A checkpoint that does not fit raises
    ConfigError naming what differs."""
    import torch  # lazy: heavy (torch)

    spec = str(cfg.init_from)
    path = shipped_path(spec) if spec in SHIPPED_AGENTS else Path(spec)
    if not path.is_file():
        names = ", ".join(map(repr, SHIPPED_AGENTS))
        raise ConfigError(f"config key 'init_from': {spec!r} is neither a checkpoint file nor a shipped "
                          f"agent ({names})")
    try:
        tensors, meta = read_checkpoint(path)
        check_compatible(meta, path, cfg.rules, wanted="this run's config",
                         advice="start from a checkpoint trained on these rule options")
    except CheckpointError as e:
        raise ConfigError(f"config key 'init_from': {e}") from None
    net = meta.get("network") or {}
    want = {"hidden_sizes": list(cfg.network.hidden_sizes), "activation": cfg.network.activation,
            "suit_canonical": cfg.network.suit_canonical}
    have = {"hidden_sizes": list(net.get("hidden_sizes", [])), "activation": net.get("activation"),
            "suit_canonical": net.get("suit_canonical", False)}
    if have != want:
        raise ConfigError(f"config key 'init_from': checkpoint {str(path)!r} has network {have}, this run's "
                          f"config wants {want}")
    weights = {k: torch.from_numpy(v.copy()) for k, v in prefixed(tensors, "policy.").items()}
    policy = trainer.warm_start_policy()
    try:
        policy.load_state_dict(weights)
    except RuntimeError as e:
        raise ConfigError(f"config key 'init_from': checkpoint {str(path)!r} does not fit "
                          f"network.shared_trunk={cfg.network.shared_trunk}: {str(e)[:300]}") from None
    trainer.after_warm_start()
    corrections = meta.get("corrections") or []
    if corrections:
        print(f"init_from: checkpoint {str(path)!r} has {len(corrections)} advantage correction(s) "
              "(python -m training.advantage); they are not weights of the trainable network, so training "
              "starts from its base policy without them", file=sys.stderr)
    return {"path": str(path), "step": int(meta.get("step", 0)),
            "elapsed_s": float(meta.get("elapsed_s", 0.0)), "algorithm": meta.get("algorithm"),
            "corrections_not_carried_over": len(corrections)}


def resume_from(trainer: Trainer, path: Path, cfg: TrainConfig,
                loaded: tuple[dict[str, Any], dict[str, Any]] | None = None) -> float:
    """Load the training state of checkpoint ``path`` (or of its already ``loaded`` tensors and metadata)
    into ``trainer``; returns the training seconds it had run. A checkpoint that does not fit the run's
    config raises ConfigError."""
    import torch  # lazy: heavy (torch)

    tensors, meta = loaded if loaded is not None else read_checkpoint(path)
    check_compatible(meta, path, cfg.rules, wanted="this run's config",
                     advice="resume with the rule options it was trained on, or start a new run")
    step = _checkpoint_step(meta)
    if step is None:
        raise ConfigError(f"--resume: checkpoint {str(path)!r} has no valid step count "
                          f"({short_repr(meta.get('step'))}; expected an integer from 0 to {MAX_DECISIONS})")
    meta = {**meta, "step": step}
    t = {k: torch.from_numpy(v.copy()) for k, v in tensors.items()}
    try:
        trainer.load_state(prefixed(t, "policy."), t, meta.get("state") or {}, int(meta["step"]))
    except (RuntimeError, KeyError, ValueError, TypeError, IndexError) as e:
        raise ConfigError(
            f"--resume: checkpoint {str(path)!r} does not fit this run's config (network or algorithm "
            f"changed?): {type(e).__name__}: {str(e)[:300]}"
        ) from None
    if isinstance(meta.get("init_from"), dict):
        trainer.init_source = meta["init_from"]  # type: ignore[attr-defined]
    elapsed = meta.get("elapsed_s", 0.0)
    ok = isinstance(elapsed, int | float) and not isinstance(elapsed, bool) and 0 <= elapsed < 1e12
    return float(elapsed) if ok else 0.0  # a damaged figure only shortens the reported training time


def _checkpoint_step(meta: dict[str, Any]) -> int | None:
    """A checkpoint's step count, or None when it is not an integer from 0 to MAX_DECISIONS."""
    step = meta.get("step")
    if isinstance(step, int) and not isinstance(step, bool) and 0 <= step <= MAX_DECISIONS:
        return step
    return None


def temporary_files(run_dir: Path) -> list[Path]:
    """The temporary files interrupted saves left in a run folder: in ``checkpoints/`` (a checkpoint's, or
    safetensors' own ``.tmpXXXXXX``) and next to the run's own outputs (``train.log``, ``win_rate.png``
    ...); :func:`training.checkpoint.is_temporary_file`. Nothing else is named."""
    found = []
    ckpt_dir = run_dir / "checkpoints"
    if ckpt_dir.is_dir():
        found += [p for p in ckpt_dir.iterdir() if is_temporary_file(p.name) and p.is_file()
                  and not p.is_symlink()]
    if run_dir.is_dir():
        found += [p for p in run_dir.iterdir() if is_temporary_file(p.name) and p.is_file()
                  and not p.is_symlink() and any(p.name.startswith(n + ".") for n in RUN_OUTPUTS)]
    return sorted(found)


def clean_temporary_files(run_dir: Path) -> list[Path]:
    """Remove :func:`temporary_files` of ``run_dir``; returns them."""
    removed = []
    for p in temporary_files(run_dir):
        p.unlink(missing_ok=True)
        removed.append(p)
    return removed


def newest_readable_checkpoint(ckpt_dir: Path) -> tuple[Path, dict[str, Any], dict[str, Any], list[str]]:
    """(path, tensors, metadata, skipped) of the newest checkpoint of a run folder that reads: normally
    ``latest.safetensors``; a ``step_N`` file with a larger N when ``latest`` is missing, corrupt or
    older. ``skipped``: one line per unreadable file passed over. ConfigError when none reads."""

    skipped: list[str] = []

    def read(p: Path) -> tuple[dict[str, Any], dict[str, Any]] | None:
        try:
            return read_checkpoint(p)
        except CheckpointError as e:
            skipped.append(f"{p.name}: {str(e)[:300]}")
            return None

    steps = step_checkpoints(ckpt_dir)[::-1]
    best: tuple[Path, dict[str, Any], dict[str, Any]] | None = None
    latest = ckpt_dir / "latest.safetensors"
    if latest.is_file():
        got = read(latest)
        if got is not None:
            best = (latest, *got)
    best_step = (_checkpoint_step(best[2]) or 0) if best is not None else -1
    for n, p in steps:
        if n <= best_step:
            break
        got = read(p)
        if got is not None:
            best = (p, *got)
            break
    if best is None:
        if not skipped:
            raise ConfigError(
                f"--resume: no checkpoint in {str(ckpt_dir)!r} to resume from (a run interrupted before its "
                "first checkpoint: run it again without --resume)"
            )
        raise ConfigError(f"--resume: no readable checkpoint in {str(ckpt_dir)!r}: " + "; ".join(skipped))
    return (*best, skipped)


def win_text(evals: dict[str, float], fmt: str) -> str:
    """``"random 99%, heuristic 40%"`` from evaluation scalars."""
    items = [(k.split("_vs_")[1], v) for k, v in evals.items() if k.startswith("eval/win_rate")]
    return ", ".join(f"{name} {v:{fmt}}" for name, v in items)


def run_evaluation(trainer: Trainer, cfg: TrainConfig, run: Run, elapsed: float) -> dict[str, float]:
    rules = cfg.rules
    if cfg.eval.target_score is not None:
        rules = replace(cfg.rules, target_score=cfg.eval.target_score)
    out: dict[str, float] = {}
    for opp in cfg.eval.opponents:
        try:
            r = evaluate_policy(trainer.eval_policy(), opp, rules, games=cfg.eval.games, seed=cfg.seed + 777)
        except (ValueError, ImportError, BotError) as e:  # an unavailable spec, or a bot that failed
            text = " | ".join(ln.strip() for ln in str(e).splitlines() if ln.strip())
            print(f"warning: evaluation against {opp!r} skipped: {text}", file=sys.stderr)
            continue
        out[f"eval/win_rate_vs_{opp}"] = r["win_rate"]
        out[f"eval/margin_per_hand_vs_{opp}"] = r["margin_per_hand"]
        run.log({"step": trainer.step, "elapsed_s": round(elapsed, 1), "eval": r})
    run.scalars(out, trainer.step)
    return out


def short_repr(value: Any) -> str:
    return short(value)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def train(cfg: TrainConfig, run_dir: Path, resume: bool = False, command: str = "",
          overwrite: bool = False) -> int:
    """Train (or resume) into ``run_dir``; returns the exit status (130 when interrupted, 1 when an
    opponent, the trainer or a write failed: the progress is saved when it can be). ``overwrite``: remove
    the old run's checkpoints and logs in ``run_dir``, once everything has been checked."""
    with interrupt_signals():
        return _train(cfg, run_dir, resume, command, overwrite)


@contextlib.contextmanager
def interrupt_signals() -> Iterator[None]:
    """Within the block, Ctrl-C and `kill` (SIGTERM) raise KeyboardInterrupt, so training stops with a
    checkpoint and start-up stops with one line; SIGINT is also re-enabled for runs started in the
    background with `&`, which the shell starts with SIGINT ignored. Outside the main thread: nothing."""

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def _train(cfg: TrainConfig, run_dir: Path, resume: bool, command: str, overwrite: bool = False) -> int:
    import torch  # lazy: heavy (torch)

    torch.set_num_threads(cfg.torch_threads)
    torch.manual_seed(cfg.seed)
    ckpt_dir = run_dir / "checkpoints"
    for p in clean_temporary_files(run_dir):
        print(f"removed {p} (left by an interrupted save)", file=sys.stderr)
    loaded = newest_readable_checkpoint(ckpt_dir) if resume else None
    rng = np.random.default_rng(cfg.seed)

    try:
        trainer = make_trainer(cfg, rng)  # starts the first games: a cmd: opponent is started (and may fail)
    except BotError as e:
        return _error(f"could not start training: {failure_text(e)}", status=1)
    trainer.run_dir = run_dir  # type: ignore[attr-defined]  # rllib_ppo keeps RLlib's own state there
    try:
        return _train_loop(trainer, cfg, run_dir, resume, command, loaded, overwrite)
    finally:
        close = getattr(trainer, "close", None)  # rllib_ppo: stop its workers (and the Ray it started)
        if close is not None:
            close()


def _train_loop(trainer: Trainer, cfg: TrainConfig, run_dir: Path, resume: bool, command: str,
                loaded: Any, overwrite: bool = False) -> int:
    elapsed_before = 0.0
    if loaded is not None:
        path, tensors, meta, skipped = loaded
        for line in skipped:
            print(f"warning: skipped unreadable checkpoint {line}", file=sys.stderr)
        elapsed_before = resume_from(trainer, path, cfg, (tensors, meta))
        print(f"resumed from {path} at step {trainer.step}", file=sys.stderr)
    if cfg.init_from and not resume and trainer.step == 0:
        src = init_from_checkpoint(trainer, cfg)
        trainer.init_source = src  # type: ignore[attr-defined]  # written into every checkpoint's metadata
        print(f"started from {src['path']} (step {src['step']:,}, {src['elapsed_s']:.0f} s of training)",
              file=sys.stderr)
    # Only now (the config, the resume checkpoint and init_from all fit) is the run folder changed.
    if overwrite:
        remove_old_run(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(run_dir / "config.yaml", dump_yaml(cfg))
    with open(run_dir / "command.txt", "a", encoding="utf-8") as f:
        f.write(command + "\n")
    run = Run(run_dir, cfg)
    t0 = time.monotonic()

    def elapsed() -> float:
        """Training seconds of the run, earlier invocations included."""
        return elapsed_before + time.monotonic() - t0

    im = cfg.imitation
    interrupted = False
    failure: Exception | None = None
    last_eval: dict[str, float] = {}
    if im.teacher and not resume and trainer.step == 0:
        from .algorithms.imitation import pretrain  # lazy: heavy (torch)

        print(f"warm start: cloning {im.teacher!r} ({im.decisions} decisions, {im.epochs} epochs)",
              file=sys.stderr)
        cloned = False
        try:
            m = pretrain(trainer.warm_start_policy(), im.teacher, cfg.rules, im.decisions, im.epochs,
                         im.batch_size, im.learning_rate, cfg.seed, im.workers, im.epsilon, log=run.scalars,
                         score_scale=cfg.env.score_scale, batched=im.batched)
            trainer.after_warm_start()
            cloned = True
            run.log({"step": 0, "imitation": m})
            run.scalars(m, 0)
            last_eval = run_evaluation(trainer, cfg, run, elapsed())
            run.save(trainer, elapsed())  # checkpoints/step_0.safetensors: the cloned policy before RL
            wins = f"; greedy win rate vs {win_text(last_eval, '.1%')}" if last_eval else ""
            print(f"warm start done in {m['imitation/total_s']:.0f}s: accuracy {m['imitation/accuracy']:.1%}"
                  + wins, file=sys.stderr)
        except (KeyboardInterrupt, Exception) as e:
            if not cloned:
                # The policy is not cloned yet: saving it as step 0 would make --resume continue as plain RL
                # from a random policy. Nothing is saved; the same command starts the run again.
                run.close()
                if isinstance(e, KeyboardInterrupt):
                    print(f"interrupted during the imitation warm start: no checkpoint saved; run the same "
                          f"command again to start {run_dir} over", file=sys.stderr)
                    return 130
                return _error(f"the imitation warm start failed: {failure_text(e, run_dir)}; no checkpoint "
                              f"saved; run the same command again to start {run_dir} over", status=1)
            if isinstance(e, KeyboardInterrupt):
                interrupted = True  # cloned: saved below as step 0
            else:
                failure = e
    out = cfg.output
    next_ckpt = (trainer.step // out.checkpoint_interval + 1) * out.checkpoint_interval
    next_snap = (trainer.step // cfg.selfplay.snapshot_interval + 1) * cfg.selfplay.snapshot_interval
    ev_int = cfg.eval.interval
    next_eval = (trainer.step // ev_int + 1) * ev_int if ev_int > 0 else None

    def desc() -> str:
        return "train" + (f" [win {win_text(last_eval, '.0%')}]" if last_eval else "")

    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), TextColumn("{task.fields[rate]}"), disable=not out.progress,
                        transient=False)
    averages = TrainLogAverager()  # train.log's "train" records: the updates' means between two records
    with progress:
        task = progress.add_task(desc(), total=cfg.total_timesteps, completed=trainer.step, rate="")
        try:
            while not interrupted and failure is None and trainer.step < cfg.total_timesteps:
                if cfg.time_limit is not None and time.monotonic() - t0 >= cfg.time_limit:
                    print(f"time_limit {cfg.time_limit}s reached at step {trainer.step}", file=sys.stderr)
                    break
                s0, ts = trainer.step, time.monotonic()
                metrics = trainer.iterate()
                sps = (trainer.step - s0) / max(1e-9, time.monotonic() - ts)
                metrics["perf/steps_per_s"] = sps
                run.scalars(metrics, trainer.step)
                averages.add(metrics)
                if trainer.step >= next_snap:
                    trainer.add_snapshot()
                    next_snap += cfg.selfplay.snapshot_interval * (1 + (trainer.step - next_snap) //
                                                                   cfg.selfplay.snapshot_interval)
                if next_eval is not None and trainer.step >= next_eval:
                    run.log_train(trainer.step, elapsed(), averages)
                    last_eval = run_evaluation(trainer, cfg, run, elapsed())
                    while next_eval <= trainer.step:
                        next_eval += ev_int
                if trainer.step >= next_ckpt:
                    run.log_train(trainer.step, elapsed(), averages)
                    run.save(trainer, elapsed())
                    while next_ckpt <= trainer.step:
                        next_ckpt += out.checkpoint_interval
                progress.update(task, completed=min(trainer.step, cfg.total_timesteps), description=desc(),
                                rate=f"{sps:,.0f} steps/s")
        except KeyboardInterrupt:
            interrupted = True
        except Exception as e:  # an opponent (a cmd: bot, an agent), the trainer or a write failed
            failure = e
    total_s = elapsed()
    run.log_train(trainer.step, total_s, averages)
    try:
        path = run.save(trainer, total_s)
    except (KeyboardInterrupt, OSError) as e:  # a full disk; the earlier checkpoints are intact
        run.close()
        saved = step_checkpoints(run.ckpt_dir)
        kept = (f"; the last checkpoint saved is {saved[-1][1]} (resume with --resume --run-dir {run_dir})"
                if saved else "; no checkpoint was saved")
        why = "interrupted while saving" if isinstance(e, KeyboardInterrupt) else (
            f"cannot save the checkpoint at step {trainer.step}: {failure_text(e, run_dir)}")
        if failure is not None:
            why = f"{failure_text(failure, run_dir)}; then {why}"
        return _error(why + kept, status=130 if isinstance(e, KeyboardInterrupt) else 1)
    if failure is not None:
        run.close()
        return _error(f"training stopped at step {trainer.step}: {failure_text(failure, run_dir)}; the "
                      f"progress is saved in {path} (resume with --resume --run-dir {run_dir})", status=1)
    if interrupted:
        print(f"interrupted: saved {path} (resume with --resume --run-dir {run_dir})", file=sys.stderr)
        run.close()
        return 130
    try:
        last_eval = run_evaluation(trainer, cfg, run, total_s)
    except (KeyboardInterrupt, Exception) as e:
        run.close()
        if isinstance(e, KeyboardInterrupt):
            print(f"interrupted during the final evaluation: saved {path}", file=sys.stderr)
            return 130
        return _error(f"the final evaluation failed: {failure_text(e, run_dir)}; the training is saved in "
                      f"{path}", status=1)
    run.close()

    try:
        plot_run(run_dir)
    except (ValueError, OSError) as e:  # no evaluation entries (eval.opponents empty), or unwritable
        print(f"warning: no win-rate plot: {e}", file=sys.stderr)
    wins = win_text(last_eval, ".1%")
    print(f"done: {trainer.step} steps in {total_s:.0f}s; saved {path} and latest.safetensors"
          + (f"; greedy win rate vs {wins}" if wins else ""), file=sys.stderr)
    return 0


ERROR_LOG = "error.log"
"""Run-folder file that keeps the traceback of an unexpected error (the terminal gets one line)."""


def failure_text(e: BaseException, run_dir: Path | None = None) -> str:
    """One line on why training stopped: an opponent's own message (a ``cmd:`` bot names itself; an illegal
    action names the agent and its seat), an OS error's reason and file, else the exception's type and
    message, whose traceback is appended to ``<run_dir>/error.log``."""

    if isinstance(e, BotError | IllegalActionError):  # a bot's message ends with its stderr lines: one line
        return "an agent failed: " + " | ".join(ln.strip() for ln in str(e).splitlines() if ln.strip())
    if isinstance(e, OSError):
        return f"{e.strerror or e}" + (f": {e.filename}" if e.filename else "")
    if isinstance(e, ConfigError):
        return str(e)
    where = ""
    if run_dir is not None:
        try:
            with open(run_dir / ERROR_LOG, "a", encoding="utf-8") as f:
                f.write("".join(traceback.format_exception(e)) + "\n")
            where = f" (traceback in {run_dir / ERROR_LOG})"
        except OSError:
            pass
    text = str(e).splitlines()[0] if str(e) else ""
    return f"{type(e).__name__}: {text[:500]}{where}"


RUN_OUTPUTS = ("config.yaml", "command.txt", "train.log", "win_rate.png", ERROR_LOG)
"""The files smear-train writes in a run folder (besides the folders in RUN_FOLDERS)."""
RUN_FOLDERS = ("checkpoints", "tb", "rllib")
"""The folders smear-train writes in a run folder (``rllib``: rllib_ppo's own state)."""


def _is_run_checkpoint(p: Path) -> bool:
    name = p.name
    return (name == "latest.safetensors" or is_temporary_file(name)
            or (name.startswith("step_") and name.endswith(".safetensors") and name[5:-12].isdigit()))


def old_run_files(run_dir: Path) -> list[Path]:
    """What --overwrite deletes: the checkpoints smear-train wrote (``step_N``, ``latest``, the temporary
    files of interrupted saves, :func:`temporary_files`),
    ``tb/`` (only TensorBoard event files in it), ``rllib/`` (rllib_ppo's state), ``train.log``,
    ``win_rate.png`` and ``error.log``. A ``checkpoints/`` that holds anything else (the repository's
    own ``checkpoints/`` of shipped agents, with ``--run-dir .``) is a ConfigError: nothing is deleted."""
    ckpt = run_dir / "checkpoints"
    out: list[Path] = []
    if ckpt.is_dir():
        other = sorted(p.name for p in ckpt.iterdir() if not (p.is_file() and _is_run_checkpoint(p)))
        if other:
            raise ConfigError(
                f"--overwrite: {str(ckpt)!r} holds files smear-train did not write "
                f"({short_repr(', '.join(other))}); is {str(run_dir)!r} a run folder? Nothing was deleted"
            )
        out += sorted(ckpt.iterdir())
    tb = run_dir / "tb"
    if tb.is_dir():
        if all(p.is_dir() or p.name.startswith("events.out.tfevents.") for p in tb.rglob("*")):
            out.append(tb)
        else:
            raise ConfigError(f"--overwrite: {str(tb)!r} holds files that are not TensorBoard events; is "
                              f"{str(run_dir)!r} a run folder? Nothing was deleted")
    if (run_dir / "rllib").is_dir():
        out.append(run_dir / "rllib")
    out += [run_dir / n for n in ("train.log", "win_rate.png", ERROR_LOG) if (run_dir / n).is_file()]
    out += [p for p in temporary_files(run_dir) if p.parent == run_dir]
    return out


def remove_old_run(run_dir: Path) -> None:
    """--overwrite: remove :func:`old_run_files` (config.yaml is rewritten, command.txt appended to)."""
    for p in old_run_files(run_dir):
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)


def check_commands(cfg: TrainConfig, allow_commands: bool, typed: list[str] | None = None) -> None:
    """Refuse (CommandNotAllowed, a ValueError) a config whose agent specs run programs (``cmd:``) unless
    ``--allow-commands`` was given or the spec was typed in a ``--set`` of this command (``typed``): a spec
    from the config file needs consent (:func:`smear_env.agents.registry.check_commands_allowed`)."""

    specs = [("imitation.teacher", cfg.imitation.teacher)]
    specs += [("selfplay.opponents", k) for k in cfg.selfplay.opponents]
    specs += [("eval.opponents", k) for k in cfg.eval.opponents]
    for key, spec in specs:
        if isinstance(spec, str) and any(spec.strip() in t for t in typed or []):
            continue
        check_commands_allowed([spec], allow_commands, f"config key {key!r}",
                               "run smear-train with --allow-commands")


def _config_strings(data: Any, path: str = "") -> list[tuple[str, str]]:
    """(key path, text) of every string in a config's data, mapping keys included (opponents are keys)."""
    out: list[tuple[str, str]] = []
    if isinstance(data, dict):
        for k, v in data.items():
            key = f"{path}.{k}" if path else str(k)
            if isinstance(k, str):
                out.append((key, k))
            out += _config_strings(v, key)
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += _config_strings(v, f"{path}[{i}]")
    elif isinstance(data, str):
        out.append((path, data))
    return out


def check_pipeline_commands(data: Any, allow_commands: bool, typed: list[str] | None = None) -> None:
    """:func:`check_commands` for a pipeline config (its stages' sections hold agent specs in many keys):
    every string of the config that runs a program needs ``--allow-commands`` or a ``--set`` that typed it."""

    for key, text in _config_strings(data):
        if not is_command_spec(text) or any(text.strip() in t for t in typed or []):
            continue
        check_commands_allowed([text], allow_commands, f"config key {key!r}",
                               "run smear-train with --allow-commands")


def _agent_files(cfg: TrainConfig) -> list[tuple[str, Path]]:
    """(config key, file) of every file the run reads while it trains: ``init_from``, and agent specs that
    name files (checkpoint opponents, teachers, evaluation opponents)."""
    out: list[tuple[str, Path]] = []
    specs = [("init_from", cfg.init_from), ("imitation.teacher", cfg.imitation.teacher)]
    specs += [(f"selfplay.opponents.{k}", k) for k in cfg.selfplay.opponents]
    specs += [("eval.opponents", k) for k in cfg.eval.opponents]
    for key, spec in specs:
        if spec and not spec.startswith("cmd") and Path(spec).is_file():
            out.append((key, Path(spec)))
    return out


def _within(path: Path, folder: Path) -> bool:
    """Whether ``path`` is (a link to) a file in ``folder`` or below it."""
    try:
        if path.resolve().is_relative_to(folder.resolve()):
            return True
    except OSError:
        return False
    if folder.is_dir():
        return any(same_file(path, p) for p in folder.rglob("*") if p.is_file())
    return False


def check_run_paths(cfg: TrainConfig, run_dir: Path, config_file: str | None) -> None:
    """Refuse (ConfigError) a run whose outputs would overwrite its inputs: the ``--config`` file is one of
    the files the run folder gets (its ``config.yaml`` is rewritten with the resolved config: the variants
    and comments of a hand-written file would be lost), or a file the run reads (``init_from``, a checkpoint
    opponent or teacher) lies in the checkpoints that the run rotates and ``--overwrite`` deletes."""
    if config_file is not None:
        src = Path(config_file)
        for name in RUN_OUTPUTS:
            out = run_dir / name
            if same_file(src, out):
                resolved = name == "config.yaml" and out.read_text(errors="replace") == dump_yaml(cfg)
                if resolved:
                    continue  # a resolved config written by smear-train, rewritten unchanged
                raise ConfigError(
                    f"--config {str(src)!r} is the run folder's {name}, which smear-train writes "
                    "(config.yaml holds the resolved config: your variants and comments would be lost); "
                    "keep your config file outside the run folder or under another name, or pick another "
                    "--run-dir"
                )
        for name in RUN_FOLDERS:
            if _within(src, run_dir / name):
                raise ConfigError(f"--config {str(src)!r} lies in the run folder's {name}/, which "
                                  "smear-train writes; keep your config file elsewhere")
    for name in RUN_OUTPUTS:
        if (run_dir / name).is_symlink():
            raise ConfigError(f"run folder file {str(run_dir / name)!r} is a symbolic link: smear-train does "
                              "not write through links (it could change any file); remove the link")
    for key, path in _agent_files(cfg):
        for name in RUN_FOLDERS:
            if _within(path, run_dir / name):
                raise ConfigError(
                    f"config key {key!r}: {str(path)!r} lies in the run folder's {name}/, which this run "
                    f"rewrites (and --overwrite deletes); copy it out of {str(run_dir)!r} first"
                )


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.help_config:
        print(help_text())
        return 0
    if args.schema:
        from .stages import stage_configs  # lazy: import cycle (.importlinter)

        print(json.dumps(schema(stage_configs()), indent=1))
        return 0
    try:
        with interrupt_signals():
            return _main(ap, args, argv)
    except KeyboardInterrupt:  # Ctrl-C / SIGTERM before training started (after: train() saves and returns)
        print("smear-train: interrupted before training started: nothing to save", file=sys.stderr)
        return 130


def _main(ap: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str] | None) -> int:
    try:
        if args.resume and args.overwrite:
            ap.error("--resume continues a run and --overwrite starts it afresh: give one of them")
        status = _maybe_pipeline(args, argv)
        if status is not None:
            return status
        if args.from_stage or args.until_stage:
            ap.error("--from-stage and --until-stage are for a config with stages:")
        if args.resume:
            if not args.run_dir and not args.config:
                ap.error("--resume needs --run-dir (or --config, whose default run folder is used)")
            run_dir = Path(args.run_dir) if args.run_dir else Path("runs") / Path(args.config).stem
            saved = run_dir / "config.yaml"
            if not saved.is_file():
                raise ConfigError(f"--resume: {str(saved)!r} not found; is {str(run_dir)!r} a run folder?")
            cfg = load_config(saved, args.overrides, stored=True)  # written by smear-train, any version
            check_run_paths(cfg, run_dir, None)
        else:
            if not args.config:
                ap.error("--config is required (or --resume --run-dir DIR, or --help-config)")
            cfg = load_config(args.config, args.overrides, args.variant)
            name = Path(args.config).stem + (f"-{args.variant}" if args.variant else "")
            run_dir = Path(args.run_dir) if args.run_dir else Path("runs") / name
            check_run_paths(cfg, run_dir, args.config)
            ckpt_dir = run_dir / "checkpoints"
            if ckpt_dir.is_dir() and any(ckpt_dir.glob("*.safetensors")) and not args.overwrite:
                raise ConfigError(
                    f"run folder {str(run_dir)!r} already holds checkpoints: continue it with --resume, "
                    "start it afresh with --overwrite, or pick another --run-dir"
                )
            # --overwrite: the old run's checkpoints, logs and TensorBoard events are deleted by train(), once
            # the trainer is built and init_from has loaded (a config that fails leaves the old run as it was)
            if args.overwrite:
                old_run_files(run_dir)  # a folder that is not a run's is refused now
        check_commands(cfg, args.allow_commands, args.overrides)
        check_writable(run_dir)
    except (ConfigError, CheckpointError, CommandNotAllowed) as e:
        return _error(e)
    except OSError as e:
        return _error(f"{e.strerror or e}" + (f": {e.filename}" if e.filename else ""))
    prog = os.path.basename(sys.argv[0])
    prog = "python -m training.train" if prog in ("train.py", "__main__.py", "") else prog
    command = " ".join(shlex.quote(a) for a in [prog,
                                                  *(sys.argv[1:] if argv is None else argv)])
    try:
        return train(cfg, run_dir, resume=args.resume, command=command,
                     overwrite=bool(args.overwrite and not args.resume))
    except (ConfigError, CheckpointError) as e:
        return _error(e)
    except OSError as e:
        return _error(f"{e.strerror or e}" + (f": {e.filename}" if e.filename else ""), status=1)


def _maybe_pipeline(args: argparse.Namespace, argv: list[str] | None) -> int | None:
    """Run the pipeline when the config (or the resumed run folder) has ``stages:``; None otherwise."""
    from .pipeline import (  # lazy: import cycle (.importlinter)
        PIPELINE_FILE,
        check_run_dir,
        has_stages,
        load_data,
        run_pipeline,
    )

    if args.resume:
        if not args.run_dir or not (Path(args.run_dir) / PIPELINE_FILE).is_file():
            return None
        run_dir = Path(args.run_dir)
        data = load_data(run_dir / PIPELINE_FILE, None, args.overrides)
    elif args.config:
        data = load_data(args.config, args.variant, args.overrides)
        if not has_stages(data):
            return None
        name = Path(args.config).stem + (f"-{args.variant}" if args.variant else "")
        run_dir = Path(args.run_dir) if args.run_dir else Path("runs") / name
        check_run_dir(run_dir, args.overwrite)
    else:
        return None
    check_writable(run_dir)
    check_pipeline_commands(data, args.allow_commands, args.overrides)
    words = [os.path.basename(sys.argv[0]) or "smear-train", *(sys.argv[1:] if argv is None else argv)]
    return run_pipeline(data, run_dir, " ".join(shlex.quote(a) for a in words), args.from_stage,
                        args.until_stage)


MAX_MESSAGE = 2000


def _error(e: Exception | str, status: int = 2) -> int:
    """Print ``smear-train: error: ...`` (cut to MAX_MESSAGE characters) and return ``status``."""
    text = str(e)
    if len(text) > MAX_MESSAGE:
        text = text[:MAX_MESSAGE - 3] + "..."
    print(f"smear-train: error: {text}", file=sys.stderr)
    return status


def check_writable(run_dir: Path) -> None:
    """Raise OSError (or ConfigError) unless ``run_dir`` can hold a run: its first existing ancestor is a
    writable folder (nothing is created here)."""
    p = run_dir
    while not p.exists():
        if p.parent == p:
            break
        p = p.parent
    if not p.is_dir():
        raise ConfigError(f"run folder {str(run_dir)!r}: {str(p)!r} is a file, not a folder")
    if not os.access(p, os.W_OK | os.X_OK):
        raise ConfigError(f"run folder {str(run_dir)!r}: {str(p)!r} is not writable")


if __name__ == "__main__":
    sys.exit(main())
