"""A ``smear-train`` run folder: writing it, resuming from it, and the checks that keep a run from overwriting
its inputs or a folder that is not a run's.

``config.yaml`` (the resolved config), ``command.txt``, ``train.log`` (evaluations and training means, JSON
lines), ``tb/`` (TensorBoard), ``win_rate.png``, ``error.log`` (tracebacks),
``checkpoints/step_N.safetensors`` and ``checkpoints/latest.safetensors`` (weights, optimizer, opponent pool,
step and RNG state; no pickle), ``rllib/`` (rllib_ppo's own state). Writes are atomic; temporary files of
an interrupted save (:func:`training.checkpoint.is_temporary_file`) are removed at every start.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from smear_env.core.actions import short_repr
from smear_env.evaluation.cli import same_file

from .algorithms import Trainer
from .checkpoint import is_temporary_file
from .config import MAX_DECISIONS, ConfigError, TrainConfig, dump_yaml, to_dict

RUN_OUTPUTS = ("config.yaml", "command.txt", "train.log", "win_rate.png", "error.log")
"""The files smear-train writes in a run folder (besides the folders in RUN_FOLDERS)."""
RUN_FOLDERS = ("checkpoints", "tb", "rllib")


class Run:
    """Run folder I/O: checkpoints, TensorBoard, train.log."""

    def __init__(self, run_dir: Path, cfg: TrainConfig) -> None:
        self.dir, self.cfg, self.ckpt_dir, self.writer = run_dir, cfg, run_dir / "checkpoints", None
        self.ckpt_dir.mkdir(parents=True, exist_ok=True)
        if cfg.output.tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(str(run_dir / "tb"))

    def scalars(self, values: dict[str, float], step: int) -> None:
        for k, v in values.items() if self.writer is not None else ():
            self.writer.add_scalar(k, v, step)

    def log_train(self, step: int, elapsed: float, averages: Any) -> None:
        """A ``train`` record: the means of the trainer's scalars since the last one."""
        values = averages.flush()
        if values:
            self.log({"step": step, "elapsed_s": round(elapsed, 1), "train": values})

    def log(self, record: dict[str, Any]) -> None:
        with open(self.dir / "train.log", "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    def save(self, trainer: Trainer, elapsed: float) -> Path:
        from .checkpoint import base_metadata, network_metadata, policy_tensors, save_tensors

        cfg = self.cfg
        meta = base_metadata(cfg.rules, network_metadata(cfg.network), cfg.algorithm.name, trainer.step,
                             to_dict(cfg))
        tensors, meta["state"] = trainer.state()
        meta["elapsed_s"] = round(elapsed, 1)
        if getattr(trainer, "init_source", None):
            meta["init_from"] = trainer.init_source  # the checkpoint the run started from (init_from)
        tensors = {**policy_tensors(trainer.policy_state()), **tensors}
        path = self.ckpt_dir / f"step_{trainer.step}.safetensors"
        save_tensors(path, tensors, meta)
        save_tensors(self.ckpt_dir / "latest.safetensors", tensors, meta)
        if cfg.output.keep_checkpoints > 0:
            for _, p in step_checkpoints(self.ckpt_dir)[:-cfg.output.keep_checkpoints]:
                p.unlink(missing_ok=True)
        return path

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def step_checkpoints(ckpt_dir: Path) -> list[tuple[int, Path]]:
    """(N, path) of the ``step_N.safetensors`` files of a checkpoint folder, by N."""
    return sorted((int(p.stem[5:]), p) for p in ckpt_dir.glob("step_*.safetensors") if p.stem[5:].isdigit())


def _step(meta: dict[str, Any]) -> int | None:
    """A checkpoint's step count, or None when it is not an integer from 0 to MAX_DECISIONS."""
    step = meta.get("step")
    ok = isinstance(step, int) and not isinstance(step, bool) and 0 <= step <= MAX_DECISIONS
    return step if ok else None


def newest_readable_checkpoint(ckpt_dir: Path) -> tuple[Path, dict[str, Any], dict[str, Any], list[str]]:
    """(path, tensors, metadata, skipped) of the newest checkpoint that reads: ``latest.safetensors``, or a
    ``step_N`` with a larger N when ``latest`` is missing, corrupt or older (``skipped``: a line per
    unreadable file passed over). ConfigError when none reads."""
    from smear_env.agents.checkpoint import CheckpointError, read_checkpoint

    skipped: list[str] = []

    def read(p: Path) -> tuple[Path, dict[str, Any], dict[str, Any]] | None:
        try:
            return (p, *read_checkpoint(p))
        except CheckpointError as e:
            skipped.append(f"{p.name}: {str(e)[:300]}")
            return None

    latest = ckpt_dir / "latest.safetensors"
    best = read(latest) if latest.is_file() else None
    floor = (_step(best[2]) or 0) if best is not None else -1
    best = next((b for b in (read(p) for n, p in step_checkpoints(ckpt_dir)[::-1] if n > floor) if b), best)
    if best is None and not skipped:
        raise ConfigError(f"--resume: no checkpoint in {str(ckpt_dir)!r} to resume from (a run interrupted "
                          "before its first checkpoint: run it again without --resume)")
    if best is None:
        raise ConfigError(f"--resume: no readable checkpoint in {str(ckpt_dir)!r}: " + "; ".join(skipped))
    return (*best, skipped)


def resume_from(trainer: Trainer, path: Path, cfg: TrainConfig,
                loaded: tuple[dict[str, Any], dict[str, Any]] | None = None) -> float:
    """Load the training state of checkpoint ``path`` (or of its ``loaded`` tensors and metadata) into
    ``trainer``; returns the training seconds it had run. A checkpoint that does not fit: ConfigError."""
    import torch

    from smear_env.agents.checkpoint import check_compatible, prefixed, read_checkpoint

    tensors, meta = loaded if loaded is not None else read_checkpoint(path)
    check_compatible(meta, path, cfg.rules, wanted="this run's config",
                     advice="resume with the rule options it was trained on, or start a new run")
    step = _step(meta)
    if step is None:
        raise ConfigError(f"--resume: checkpoint {str(path)!r} has no valid step count "
                          f"({short_repr(meta.get('step'))}; expected an integer from 0 to {MAX_DECISIONS})")
    t = {k: torch.from_numpy(v.copy()) for k, v in tensors.items()}
    try:
        trainer.load_state(prefixed(t, "policy."), t, meta.get("state") or {}, step)
    except (RuntimeError, KeyError, ValueError, TypeError, IndexError) as e:
        raise ConfigError(f"--resume: checkpoint {str(path)!r} does not fit this run's config (network or "
                          f"algorithm changed?): {type(e).__name__}: {str(e)[:300]}") from None
    if isinstance(meta.get("init_from"), dict):
        trainer.init_source = meta["init_from"]  # type: ignore[attr-defined]
    elapsed = meta.get("elapsed_s", 0.0)
    ok = isinstance(elapsed, int | float) and not isinstance(elapsed, bool) and 0 <= elapsed < 1e12
    return float(elapsed) if ok else 0.0  # a damaged figure only shortens the reported training time


def init_from_checkpoint(trainer: Trainer, cfg: TrainConfig) -> dict[str, Any]:
    """Load the policy weights of ``cfg.init_from`` (a path or a shipped agent name) into the trainer's
    policy; returns what the run's metadata records of it. A checkpoint that does not fit raises
    ConfigError naming what differs."""
    import torch

    from smear_env.agents.checkpoint import CheckpointError, check_compatible, prefixed, read_checkpoint
    from smear_env.agents.shipped import SHIPPED_AGENTS, shipped_path

    spec = str(cfg.init_from)
    path = shipped_path(spec) if spec in SHIPPED_AGENTS else Path(spec)
    if not path.is_file():
        raise ConfigError(f"config key 'init_from': {spec!r} is neither a checkpoint file nor a shipped "
                          f"agent ({', '.join(map(repr, SHIPPED_AGENTS))})")
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
    policy = trainer.warm_start_policy()
    try:
        policy.load_state_dict({
            k: torch.from_numpy(v.copy()) for k, v in prefixed(tensors, "policy.").items()})
    except RuntimeError as e:
        raise ConfigError(f"config key 'init_from': checkpoint {str(path)!r} does not fit "
                          f"network.shared_trunk={cfg.network.shared_trunk}: {str(e)[:300]}") from None
    trainer.after_warm_start()
    corrections = meta.get("corrections") or []
    if corrections:
        print(f"init_from: checkpoint {str(path)!r} has {len(corrections)} advantage correction(s); they are "
              "not weights of the trainable network, so training starts from its base policy without them",
              file=sys.stderr)
    return {"path": str(path), "step": int(meta.get("step", 0)),
            "elapsed_s": float(meta.get("elapsed_s", 0.0)), "algorithm": meta.get("algorithm"),
            "corrections_not_carried_over": len(corrections)}


# --------------------------------------------------------------------------------------------- safety
def temporary_files(run_dir: Path) -> list[Path]:
    """The temporary files interrupted saves left in ``checkpoints/`` and next to the run's own outputs
    (:func:`training.checkpoint.is_temporary_file`); nothing else is named."""
    found = [p for p in (run_dir / "checkpoints").iterdir()] if (run_dir / "checkpoints").is_dir() else []
    found += [p for p in run_dir.iterdir() if any(p.name.startswith(n + ".") for n in RUN_OUTPUTS)] \
        if run_dir.is_dir() else []
    return sorted(p for p in found if is_temporary_file(p.name) and p.is_file() and not p.is_symlink())


def clean_temporary_files(run_dir: Path) -> list[Path]:
    """Remove :func:`temporary_files` of ``run_dir``; returns them."""
    removed = temporary_files(run_dir)
    for p in removed:
        p.unlink(missing_ok=True)
    return removed


def old_run_files(run_dir: Path) -> list[Path]:
    """What --overwrite deletes: the checkpoints smear-train wrote (and temporary files), ``tb/`` (only
    TensorBoard event files in it), ``rllib/``, ``train.log``, ``win_rate.png`` and ``error.log``. A
    ``checkpoints/`` or ``tb/`` holding anything else (the repository's own ``checkpoints/`` with
    ``--run-dir .``) is a ConfigError: nothing is deleted."""
    ckpt, tb, out = run_dir / "checkpoints", run_dir / "tb", []
    if ckpt.is_dir():
        other = sorted(p.name for p in ckpt.iterdir() if not (p.is_file() and (
            p.name == "latest.safetensors" or is_temporary_file(p.name)
            or (p.name.startswith("step_") and p.name.endswith(".safetensors") and p.name[5:-12].isdigit()))))
        if other:
            raise ConfigError(f"--overwrite: {str(ckpt)!r} holds files smear-train did not write "
                              f"({short_repr(', '.join(other))}); is {str(run_dir)!r} a run folder? Nothing "
                              "was deleted")
        out += sorted(ckpt.iterdir())
    if tb.is_dir():
        if not all(p.is_dir() or p.name.startswith("events.out.tfevents.") for p in tb.rglob("*")):
            raise ConfigError(f"--overwrite: {str(tb)!r} holds files that are not TensorBoard events; is "
                              f"{str(run_dir)!r} a run folder? Nothing was deleted")
        out.append(tb)
    out += [run_dir / "rllib"] if (run_dir / "rllib").is_dir() else []
    out += [run_dir / n for n in ("train.log", "win_rate.png", "error.log") if (run_dir / n).is_file()]
    return out + [p for p in temporary_files(run_dir) if p.parent == run_dir]


def remove_old_run(run_dir: Path) -> None:
    """--overwrite: remove :func:`old_run_files` (config.yaml is rewritten, command.txt appended to)."""
    for p in old_run_files(run_dir):
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)


def _strings(data: Any, path: str = "") -> list[tuple[str, str]]:
    """(key path, text) of every string in a config's data; a mapping key is named by its mapping's path."""
    out: list[tuple[str, str]] = [(path, data)] if isinstance(data, str) else []
    for k, v in data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ():
        out += [(path, k)] if isinstance(k, str) else []
        out += _strings(v, f"{path}[{k}]" if isinstance(data, list) else f"{path}.{k}" if path else str(k))
    return out


def check_commands(cfg: Any, allow_commands: bool, typed: list[str] | None = None) -> None:
    """Refuse (CommandNotAllowed, a ValueError) a config (a TrainConfig, or a pipeline's data) whose agent
    specs run programs (``cmd:``, also inside split and search specs) unless ``--allow-commands`` was given or
    the spec was typed in a ``--set`` of this command (``typed``)."""
    from smear_env.agents.registry import check_commands_allowed, is_command_spec

    for key, text in _strings(to_dict(cfg) if isinstance(cfg, TrainConfig) else cfg):
        if is_command_spec(text) and not any(text.strip() in t for t in typed or []):
            check_commands_allowed([text], allow_commands, f"config key {key!r}",
                                   "run smear-train with --allow-commands")


def _within(path: Path, folder: Path) -> bool:
    """Whether ``path`` is (a link to) a file in ``folder`` or below it."""
    try:
        if path.resolve().is_relative_to(folder.resolve()):
            return True
    except OSError:
        return False
    return folder.is_dir() and any(same_file(path, p) for p in folder.rglob("*") if p.is_file())


def check_run_paths(cfg: TrainConfig, run_dir: Path, config_file: str | None) -> None:
    """Refuse (ConfigError) a run whose outputs would overwrite its inputs: the ``--config`` file is a file
    the run writes (``config.yaml`` holds the resolved config: the variants and comments of a hand-written
    file would be lost) or lies in its folders, a run file is a symbolic link, or a file the run reads
    (``init_from``, a checkpoint opponent or teacher) lies in the folders the run rewrites."""
    src = Path(config_file) if config_file is not None else None
    for name in RUN_OUTPUTS if src is not None else ():
        out = run_dir / name
        if same_file(src, out) and not (  # a resolved config smear-train wrote is rewritten unchanged
                name == "config.yaml" and out.read_text(errors="replace") == dump_yaml(cfg)):
            raise ConfigError(f"--config {str(src)!r} is the run folder's {name}, which smear-train writes "
                              "(config.yaml holds the resolved config: your variants and comments would be "
                              "lost); keep your config file outside the run folder or under another name, or "
                              "pick another --run-dir")
    for name in RUN_FOLDERS if src is not None else ():
        if _within(src, run_dir / name):
            raise ConfigError(f"--config {str(src)!r} lies in the run folder's {name}/, which smear-train "
                              "writes; keep your config file elsewhere")
    for name in RUN_OUTPUTS:
        if (run_dir / name).is_symlink():
            raise ConfigError(f"run folder file {str(run_dir / name)!r} is a symbolic link: smear-train does "
                              "not write through links (it could change any file); remove the link")
    specs = [("init_from", cfg.init_from), ("imitation.teacher", cfg.imitation.teacher)]
    specs += [(f"selfplay.opponents.{k}", k) for k in cfg.selfplay.opponents]
    specs += [("eval.opponents", k) for k in cfg.eval.opponents]
    for key, spec in specs:
        for name in RUN_FOLDERS if spec and not spec.startswith("cmd") and Path(spec).is_file() else ():
            if _within(Path(spec), run_dir / name):
                raise ConfigError(f"config key {key!r}: {spec!r} lies in the run folder's {name}/, which "
                                  f"this run rewrites (and --overwrite deletes); copy it out of "
                                  f"{str(run_dir)!r} first")


def check_writable(run_dir: Path) -> None:
    """ConfigError unless ``run_dir`` can hold a run: its first existing ancestor is a writable folder."""
    p = run_dir
    while not p.exists() and p.parent != p:
        p = p.parent
    if not p.is_dir():
        raise ConfigError(f"run folder {str(run_dir)!r}: {str(p)!r} is a file, not a folder")
    if not os.access(p, os.W_OK | os.X_OK):
        raise ConfigError(f"run folder {str(run_dir)!r}: {str(p)!r} is not writable")
