"""A training pipeline: the stages a config file lists (:mod:`training.stages`), run in order into one run
folder.

    RUN/pipeline.yaml          the resolved config (its ``default:`` block: the file's, variant and --set
                               merged), the one ``--resume --run-dir RUN`` reads
    RUN/command.txt            every command line that ran the pipeline
    RUN/stages/NN-id/          a stage's folder: what it wrote, and stage.json

``stage.json`` records the stage's config (:func:`recorded_config`: its section, its input fields resolved
to the paths they take), its input files with their SHA-256, and once it has finished its output files with
theirs. Running the pipeline again (the same command, or ``--resume``) keeps a stage whose record matches --
the same config, the same inputs, its outputs intact -- and runs the others: a stage interrupted (Ctrl-C,
``kill -9``) is resumed where its own steps allow (a training stage from its latest checkpoint, expert
iteration after its last finished round, an advantage stage's values step kept), a stage whose config or
inputs changed is run afresh, and so is every stage after it whose inputs it
changes. ``--from-stage`` / ``--until-stage`` run a part (the stages before ``--from-stage`` must be done).
A stage set to null is left out (how a variant drops a stage of the ``default`` block; the order of the
stages is the ``default`` block's, a variant's new stages follow).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from .checkpoint import write_text_atomic
from .config import from_dict, to_dict
from .config_files import apply_overrides, deep_merge, did_you_mean, load_raw, validated
from .configs.base import ConfigError
from .loop import error, log_traceback
from .stages import STAGES, StageConfig, stage_module

PIPELINE_FILE = "pipeline.yaml"
STAGE_RECORD = "stage.json"


@dataclass
class Stage:
    """One stage of a loaded pipeline."""

    index: int
    id: str
    kind: str
    cfg: StageConfig | Any
    module: ModuleType

    @property
    def folder_name(self) -> str:
        return f"{self.index:02d}-{self.id}"


def load_data(path: str | Path, variant: str | None, overrides: list[str]) -> dict[str, Any]:
    """A config file's ``default`` block with ``variant`` and ``overrides`` merged (not validated)."""
    return apply_overrides(load_raw(path, variant), overrides)


def stages_of(data: dict[str, Any]) -> list[Stage]:
    """The validated stages of a config's merged ``default`` block (its top-level keys: the training
    stages' base)."""
    base = {k: v for k, v in data.items() if k != "stages"}
    from_dict(base)  # the top-level training keys are checked even when no stage trains
    raw = data.get("stages")
    if not isinstance(raw, dict) or not any(v is not None for v in raw.values()):
        raise ConfigError("config key 'stages': expected a mapping of stage id -> section, with at least one "
                          f"stage (stage kinds: {', '.join(STAGES)})")
    out = []
    for i, (sid, section) in enumerate(((k, v) for k, v in raw.items() if v is not None), 1):
        if not isinstance(sid, str) or not sid.replace("_", "").replace("-", "").isalnum():
            raise ConfigError(f"config key 'stages.{sid}': a stage id is letters, digits, '_' and '-'")
        if not isinstance(section, dict):
            raise ConfigError(f"config key 'stages.{sid}': expected a mapping (section), or null to leave "
                              "the stage out")
        kind = section.get("kind", sid)
        if kind not in STAGES:
            if "kind" not in section:
                raise did_you_mean(sid, "stages.", list(STAGES), "a stage id that is not a stage kind needs "
                                   f"'kind:', one of {', '.join(STAGES)}")
            raise ConfigError(f"config key 'stages.{sid}.kind': {kind!r} is not one of "
                              f"{', '.join(map(repr, STAGES))}")
        module = stage_module(kind)
        if kind == "train":
            try:
                cfg = from_dict(deep_merge(base, {k: v for k, v in section.items() if k != "kind"}))
            except ConfigError as e:
                raise ConfigError(f"stages.{sid}: {e}") from None
        else:
            cfg = validated(module.Config, {**section, "kind": kind}, f"stages.{sid}.")
        out.append(Stage(i, sid, kind, cfg, module))
    return out


def sha256(path: str | Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def plan(stages: list[Stage], run_dir: Path) -> list[dict[str, Any]]:
    """Each stage's folder, inputs (field -> path, or paths: an earlier stage's output, a file or an agent
    spec) and outputs (role -> path)."""
    made: list[tuple[str, str, str]] = []  # (role, stage id, path), in stage order
    out = []
    for st in stages:
        folder, config, inputs = run_dir / "stages" / st.folder_name, st.module.Config, {}
        for field, role in config.inputs.items():
            value, key = getattr(st.cfg, field), f"config key 'stages.{st.id}.{field}'"
            ids = {sid: p for r, sid, p in made if r == role}
            for v in value if isinstance(value, list) else [] if value is None else [value]:
                if v not in ids and v in {s.id for s in stages}:
                    raise ConfigError(f"{key}: stage {v!r} writes no {role} before stage {st.id!r}")
            if isinstance(value, list):
                for bad in (v for v in value if v not in ids):
                    raise ConfigError(f"{key}: {bad!r} is not an earlier stage that writes a {role}")
                inputs[field] = [ids[v] for v in value]
            elif value is not None:
                inputs[field] = ids.get(value, value)
            elif field in config.latest:
                if role not in {r for r, _, _ in made}:
                    raise ConfigError(f"{key}: no stage before {st.id!r} writes a {role}; give one (a file "
                                      "or an agent)")
                inputs[field] = [p for r, _, p in made if r == role][-1]
        outputs = {role: str(folder / name) for role, name in config.outputs.items()}
        if st.kind == "advantage" and "fit" not in st.cfg.steps:
            outputs.pop("policy")
        made += [(role, st.id, p) for role, p in outputs.items()]
        out.append({"folder": folder, "inputs": inputs, "outputs": outputs})
    return out


def recorded_config(cfg: Any, inputs: dict[str, Any]) -> dict[str, Any]:
    """What ``stage.json`` records of a stage's config: its section without ``kind``, each input field as
    the path (or paths) it takes (a training stage: its resolved training config), as JSON reads it back."""
    data = {k: v for k, v in to_dict(cfg).items() if k != "kind"}
    return json.loads(json.dumps({**data, **inputs}))


def _input_files(inputs: dict[str, Any]) -> dict[str, str]:
    files = [p for v in inputs.values() for p in (v if isinstance(v, list) else [v])]
    return {p: sha256(p) for p in files if Path(p).is_file()}


def _read_record(folder: Path) -> dict[str, Any] | None:
    """A stage's record; one a training stage of an earlier layout wrote (its config under ``args``) reads as
    today's."""
    try:
        rec = json.loads((folder / STAGE_RECORD).read_text())
    except (OSError, ValueError):
        return None
    if isinstance(rec, dict) and "config" not in rec and isinstance(rec.get("args"), dict):
        rec["config"] = rec.pop("args")
    return rec if isinstance(rec, dict) else None


def check_records(run_dir: Path, stages: list[Stage]) -> None:
    """Refuse (one ConfigError line saying what to do) stage folders whose ``stage.json`` records the
    command-line arguments of an earlier layout, which cannot be compared with a config."""
    old = [st.folder_name for st in stages
           if isinstance((_read_record(run_dir / "stages" / st.folder_name) or {}).get("args"), list)]
    if old:
        raise ConfigError(f"run folder {str(run_dir)!r}: the stage.json of stage(s) {', '.join(old)} holds "
                          "the command-line arguments of an earlier smear-train, not a config; delete those "
                          "stage folders to run them again, or run with --from-stage a later stage to take "
                          "them as they are")


def _outputs_intact(rec: dict[str, Any]) -> bool:
    outs = rec.get("outputs") or {}
    return bool(outs) and all(Path(o["path"]).is_file() and sha256(o["path"]) == o["sha256"]
                              for o in outs.values())


def check_run_dir(run_dir: Path, overwrite: bool) -> None:
    """Refuse a folder that holds something else than a pipeline run; ``overwrite``: remove the pipeline
    run it holds."""
    if not run_dir.exists():
        return
    if not run_dir.is_dir():
        raise ConfigError(f"run folder {str(run_dir)!r} is a file")
    names = {p.name for p in run_dir.iterdir()}
    if names and PIPELINE_FILE not in names:
        raise ConfigError(f"run folder {str(run_dir)!r} holds files that are not a pipeline run's "
                          f"({', '.join(sorted(names)[:6])}): a run of another layout cannot be continued by "
                          "a pipeline; pick another --run-dir")
    if overwrite and (run_dir / "stages").is_dir():
        shutil.rmtree(run_dir / "stages")


def run_pipeline(data: dict[str, Any], run_dir: Path, command: str, from_stage: str | None = None,
                 until_stage: str | None = None) -> int:
    """Run the stages of ``data`` (a merged ``default`` block) into ``run_dir``; returns the exit status."""
    stages = stages_of(data)
    plans = plan(stages, run_dir)
    ids = [s.id for s in stages]
    for flag, sid in (("--from-stage", from_stage), ("--until-stage", until_stage)):
        if sid is not None and sid not in ids:
            raise ConfigError(f"{flag} {sid!r}: not a stage of this config (stages: {', '.join(ids)})")
    first = ids.index(from_stage) if from_stage else 0
    last = ids.index(until_stage) if until_stage else len(ids) - 1
    check_records(run_dir, stages[first:last + 1])
    for st, p in list(zip(stages, plans, strict=True))[:first]:
        rec = _read_record(p["folder"])
        if not rec or rec.get("status") != "done" or not _outputs_intact(rec):
            raise ConfigError(f"--from-stage {from_stage!r}: stage {st.folder_name} before it is not done; "
                              "run the pipeline without --from-stage")
    run_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(run_dir / PIPELINE_FILE, yaml.safe_dump({"default": data}, sort_keys=False))
    with open(run_dir / "command.txt", "a", encoding="utf-8") as f:
        f.write(command + "\n")
    n = len(stages)
    for st, p in list(zip(stages, plans, strict=True))[first:last + 1]:
        folder, head = p["folder"], f"[{st.index}/{n}] {st.folder_name} ({st.kind})"
        config = recorded_config(st.cfg, p["inputs"])
        inputs = _input_files(p["inputs"])
        rec = _read_record(folder)
        same = rec is not None and rec.get("config") == config and rec.get("inputs") == inputs
        if same and rec.get("status") == "done" and _outputs_intact(rec):
            print(f"{head}: done before with this config and these inputs; kept", file=sys.stderr, flush=True)
            continue
        resume = same and rec.get("status") == "started"
        if folder.exists() and not resume:
            shutil.rmtree(folder)
        folder.mkdir(parents=True, exist_ok=True)
        record = {"id": st.id, "kind": st.kind, "config": config, "inputs": inputs, "status": "started"}
        write_text_atomic(folder / STAGE_RECORD, json.dumps(record, indent=1))
        print(f"{head}: {'resuming' if resume else 'running'}", file=sys.stderr, flush=True)
        t0 = time.monotonic()
        try:
            status = st.module.run(st.cfg, p["inputs"], folder, resume)
        except KeyboardInterrupt:
            status = 130
        except Exception as e:  # a bad input file, a full disk, a bug: one line (a traceback in error.log)
            text = (str(e).splitlines() or [""])[0][:500]
            status = error(f"stage {st.folder_name}: {type(e).__name__}: {text}{log_traceback(e, folder)}", 1)
        if status != 0:
            if status == 130:
                print(f"interrupted in stage {st.folder_name}: run the same command again to continue",
                      file=sys.stderr)
            return status
        outputs = {role: {"path": path, "sha256": sha256(path)} for role, path in p["outputs"].items()
                   if Path(path).is_file()}
        if not outputs:
            return error(f"stage {st.folder_name} wrote none of {list(p['outputs'].values())}", 1)
        record.update(status="done", outputs=outputs, seconds=round(time.monotonic() - t0, 1))
        write_text_atomic(folder / STAGE_RECORD, json.dumps(record, indent=1))
        print(f"{head}: done in {record['seconds']:.0f} s", file=sys.stderr, flush=True)
    return 0
