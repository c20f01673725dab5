"""The training loop of ``smear-train``: the imitation warm start, the algorithm's ``iterate()`` until the
budget is spent, snapshots, evaluations and checkpoints into a run folder (:class:`training.run_folder.Run`).

Ctrl-C (or SIGTERM) saves a checkpoint before returning 130; during the warm start nothing is saved (it is
not resumable: run the same command again). An opponent, the trainer or a write that fails is one line (the
traceback goes to the run's ``error.log``), with the progress saved when it can be.
"""

from __future__ import annotations

import contextlib
import sys
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .algorithms import Trainer, make_trainer
from .algorithms.decision_stats import TrainLogAverager
from .checkpoint import write_text_atomic
from .config import ConfigError, TrainConfig, dump_yaml
from .run_folder import (
    Run,
    clean_temporary_files,
    init_from_checkpoint,
    newest_readable_checkpoint,
    remove_old_run,
    resume_from,
    step_checkpoints,
)

MAX_MESSAGE = 2000


def error(e: BaseException | str, status: int = 2) -> int:
    """Print ``smear-train: error: ...`` (cut to MAX_MESSAGE characters) and return ``status``."""
    text = str(e) if not isinstance(e, OSError) else f"{e.strerror or e}" + (f": {e.filename}" if e.filename
                                                                               else "")
    print(f"smear-train: error: {text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE - 3] + '...'}",
          file=sys.stderr)
    return status


def log_traceback(e: BaseException, folder: Path) -> str:
    """Append ``e``'s traceback to ``folder/error.log``; returns `` (traceback in PATH)`` ("" when it could
    not be written)."""
    try:
        with open(folder / "error.log", "a", encoding="utf-8") as f:
            f.write("".join(traceback.format_exception(e)) + "\n")
        return f" (traceback in {folder / 'error.log'})"
    except OSError:
        return ""


def failure_text(e: BaseException, run_dir: Path | None = None) -> str:
    """One line on why training stopped: an agent's own message, an OS error's reason and file, else the
    exception's type and message (its traceback appended to ``<run_dir>/error.log``)."""
    from smear_env.agents.protocol import BotError
    from smear_env.engine.game import IllegalActionError

    if isinstance(e, BotError | IllegalActionError):  # a bot's message ends with its stderr lines: one line
        return "an agent failed: " + " | ".join(ln.strip() for ln in str(e).splitlines() if ln.strip())
    if isinstance(e, OSError):
        return f"{e.strerror or e}" + (f": {e.filename}" if e.filename else "")
    if isinstance(e, ConfigError):
        return str(e)
    where = log_traceback(e, run_dir) if run_dir is not None else ""
    return f"{type(e).__name__}: {(str(e).splitlines() or [''])[0][:500]}{where}"


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@contextlib.contextmanager
def interrupt_signals() -> Iterator[None]:
    """Within the block, Ctrl-C and `kill` (SIGTERM) raise KeyboardInterrupt (SIGINT re-enabled for runs
    started in the background with `&`, which the shell starts with SIGINT ignored). Outside the main
    thread: nothing."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def win_text(evals: dict[str, float], fmt: str) -> str:
    """``"random 99%, heuristic 40%"`` from evaluation scalars."""
    wins = [(k.split("_vs_")[1], v) for k, v in evals.items() if k.startswith("eval/win_rate")]
    return ", ".join(f"{name} {v:{fmt}}" for name, v in wins)


def run_evaluation(trainer: Trainer, cfg: TrainConfig, run: Run, elapsed: float) -> dict[str, float]:
    from dataclasses import replace

    from smear_env.agents.protocol import BotError

    from .evaluation import evaluate_policy

    target = cfg.eval.target_score
    rules = cfg.rules if target is None else replace(cfg.rules, target_score=target)
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


def train(cfg: TrainConfig, run_dir: Path, resume: bool = False, command: str = "",
          overwrite: bool = False) -> int:
    """Train (or resume) into ``run_dir``; returns the exit status (130 when interrupted, 1 when an
    opponent, the trainer or a write failed: the progress is saved when it can be). ``overwrite``: remove
    the old run's checkpoints and logs in ``run_dir``, once everything has been checked."""
    import numpy as np
    import torch

    from smear_env.agents.protocol import BotError

    with interrupt_signals():
        torch.set_num_threads(cfg.torch_threads)
        torch.manual_seed(cfg.seed)
        for p in clean_temporary_files(run_dir):
            print(f"removed {p} (left by an interrupted save)", file=sys.stderr)
        loaded = newest_readable_checkpoint(run_dir / "checkpoints") if resume else None
        rng = np.random.default_rng(cfg.seed)
        try:
            trainer = make_trainer(cfg, rng)  # starts the first games: a cmd: opponent is started (may fail)
        except BotError as e:
            return error(f"could not start training: {failure_text(e)}", status=1)
        trainer.run_dir = run_dir  # type: ignore[attr-defined]  # rllib_ppo keeps RLlib's own state there
        try:
            return _train(trainer, cfg, run_dir, resume, command, loaded, overwrite)
        finally:
            if hasattr(trainer, "close"):  # rllib_ppo: stop its workers (and the Ray it started)
                trainer.close()


def _train(trainer: Trainer, cfg: TrainConfig, run_dir: Path, resume: bool, command: str, loaded: Any,
           overwrite: bool) -> int:
    elapsed_before = 0.0
    if loaded is not None:
        path, tensors, meta, skipped = loaded
        for line in skipped:
            print(f"warning: skipped unreadable checkpoint {line}", file=sys.stderr)
        elapsed_before = resume_from(trainer, path, cfg, (tensors, meta))
        print(f"resumed from {path} at step {trainer.step}", file=sys.stderr)
    if cfg.init_from and not resume and trainer.step == 0:
        src = trainer.init_source = init_from_checkpoint(trainer, cfg)  # type: ignore[attr-defined]
        print(f"started from {src['path']} (step {src['step']:,}, {src['elapsed_s']:.0f} s of training)",
              file=sys.stderr)
    # Only now (the config, the resume checkpoint and init_from all fit) is the run folder changed.
    if overwrite:
        remove_old_run(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(run_dir / "config.yaml", dump_yaml(cfg))
    with open(run_dir / "command.txt", "a", encoding="utf-8") as f:
        f.write(command + "\n")
    run, t0 = Run(run_dir, cfg), time.monotonic()

    def elapsed() -> float:
        """Training seconds of the run, earlier invocations included."""
        return elapsed_before + time.monotonic() - t0

    im, interrupted, failure, last_eval = cfg.imitation, False, None, {}
    if im.teacher and not resume and trainer.step == 0:
        from .algorithms.imitation import pretrain

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
            if cloned:  # saved below as step 0
                interrupted = isinstance(e, KeyboardInterrupt)
                failure = None if interrupted else e
            else:  # saving the random policy as step 0 would make --resume continue as plain RL from it
                run.close()
                if isinstance(e, KeyboardInterrupt):
                    print(f"interrupted during the imitation warm start: no checkpoint saved; run the same "
                          f"command again to start {run_dir} over", file=sys.stderr)
                    return 130
                return error(f"the imitation warm start failed: {failure_text(e, run_dir)}; no checkpoint "
                             f"saved; run the same command again to start {run_dir} over", status=1)
    out, snap, ev = cfg.output.checkpoint_interval, cfg.selfplay.snapshot_interval, cfg.eval.interval
    next_ckpt, next_snap = (trainer.step // out + 1) * out, (trainer.step // snap + 1) * snap
    next_eval = (trainer.step // ev + 1) * ev if ev > 0 else None

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    def desc() -> str:
        return "train" + (f" [win {win_text(last_eval, '.0%')}]" if last_eval else "")

    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), TextColumn("{task.fields[rate]}"),
                        disable=not cfg.output.progress, transient=False)
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
                metrics["perf/steps_per_s"] = sps = (trainer.step - s0) / max(1e-9, time.monotonic() - ts)
                run.scalars(metrics, trainer.step)
                averages.add(metrics)
                if trainer.step >= next_snap:
                    trainer.add_snapshot()
                    next_snap += snap * (1 + (trainer.step - next_snap) // snap)
                if next_eval is not None and trainer.step >= next_eval:
                    run.log_train(trainer.step, elapsed(), averages)
                    last_eval = run_evaluation(trainer, cfg, run, elapsed())
                    next_eval += ev * (1 + (trainer.step - next_eval) // ev)
                if trainer.step >= next_ckpt:
                    run.log_train(trainer.step, elapsed(), averages)
                    run.save(trainer, elapsed())
                    next_ckpt += out * (1 + (trainer.step - next_ckpt) // out)
                progress.update(task, completed=min(trainer.step, cfg.total_timesteps), description=desc(),
                                rate=f"{sps:,.0f} steps/s")
        except KeyboardInterrupt:
            interrupted = True
        except Exception as e:  # an opponent (a cmd: bot, an agent), the trainer or a write failed
            failure = e
    return _finish(trainer, cfg, run, elapsed(), averages, interrupted, failure)


def _finish(trainer: Trainer, cfg: TrainConfig, run: Run, total_s: float, averages: TrainLogAverager,
            interrupted: bool, failure: Exception | None) -> int:
    """The last checkpoint, the final evaluation and the win-rate plot; the exit status."""
    run_dir, resume_hint = run.dir, f"resume with --resume --run-dir {run.dir}"
    run.log_train(trainer.step, total_s, averages)
    try:
        path = run.save(trainer, total_s)
    except (KeyboardInterrupt, OSError) as e:  # a full disk; the earlier checkpoints are intact
        run.close()
        saved = step_checkpoints(run.ckpt_dir)
        kept = f"; the last checkpoint saved is {saved[-1][1]} ({resume_hint})" if saved else \
            "; no checkpoint was saved"
        why = "interrupted while saving" if isinstance(e, KeyboardInterrupt) else (
            f"cannot save the checkpoint at step {trainer.step}: {failure_text(e, run_dir)}")
        if failure is not None:
            why = f"{failure_text(failure, run_dir)}; then {why}"
        return error(why + kept, status=130 if isinstance(e, KeyboardInterrupt) else 1)
    if failure is not None or interrupted:
        run.close()
        if failure is not None:
            return error(f"training stopped at step {trainer.step}: {failure_text(failure, run_dir)}; the "
                         f"progress is saved in {path} ({resume_hint})", status=1)
        print(f"interrupted: saved {path} ({resume_hint})", file=sys.stderr)
        return 130
    try:
        last_eval = run_evaluation(trainer, cfg, run, total_s)
    except (KeyboardInterrupt, Exception) as e:
        run.close()
        if isinstance(e, KeyboardInterrupt):
            print(f"interrupted during the final evaluation: saved {path}", file=sys.stderr)
            return 130
        return error(f"the final evaluation failed: {failure_text(e, run_dir)}; the training is saved in "
                     f"{path}", status=1)
    run.close()
    from .plot import plot_run

    try:
        plot_run(run_dir)
    except (ValueError, OSError) as e:  # no evaluation entries (eval.opponents empty), or unwritable
        print(f"warning: no win-rate plot: {e}", file=sys.stderr)
    wins = win_text(last_eval, ".1%")
    print(f"done: {trainer.step} steps in {total_s:.0f}s; saved {path} and latest.safetensors"
          + (f"; greedy win rate vs {wins}" if wins else ""), file=sys.stderr)
    return 0
