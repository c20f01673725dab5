"""The stages of a training pipeline, registered like the algorithms: a module each and one line in
:data:`STAGES`.

A config file lists its stages under ``stages:`` (a mapping, in order: id -> section); a section's ``kind``
picks the stage (default: the id itself), the other keys are the stage's (its :class:`StageConfig` model,
checked like every config section). ``smear-train`` (:mod:`training.pipeline`) runs them in order into one
run folder, ``RUN/stages/NN-id/``. A stage module defines:

* ``Config``: a :class:`StageConfig` subclass, its fields with their docstrings; ``inputs`` names the fields
  that take another stage's output (a stage id, or left out for the latest earlier output of that role),
  ``outputs`` the files the stage writes in its folder, by role (``policy``, ``winprob``, ``values``,
  ``result``);
* ``command(cfg, inputs, folder) -> list[str]``: the stage's arguments, recorded (``stage.json``) before it
  runs and compared when the pipeline is run again;
* ``run(args, folder, resume) -> int``: run it (``resume``: keep what an interrupted run of the same
  arguments finished), returning an exit status.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any, ClassVar

from ..algorithms.config_base import Section

STAGES: dict[str, str] = {
    "train": ".train",
    "expert_iteration": ".expert_iteration",
    "distill": ".distill",
    "winprob": ".winprob",
    "advantage": ".advantage",
    "evaluate": ".evaluate",
}
"""Stage kind -> its module (relative to this package)."""


class StageConfig(Section):
    """A stage's section of the ``stages:`` mapping."""

    inputs: ClassVar[dict[str, str]] = {}
    """Field -> the role of the earlier stage's output it takes (a stage id, or None for the latest one)."""
    outputs: ClassVar[dict[str, str]] = {}
    """Role -> the file the stage writes in its folder."""
    latest: ClassVar[tuple[str, ...]] = ()
    """The input fields that, left out, take the latest earlier output of their role (the others stay
    None)."""


def stage_module(kind: str) -> ModuleType:
    """The module of stage ``kind``; an unknown kind is a ValueError naming the registered ones."""
    if kind not in STAGES:
        raise ValueError(f"unknown stage kind {kind!r}; stage kinds: {', '.join(STAGES)}")
    return importlib.import_module(STAGES[kind], package=__name__)


def stage_configs() -> dict[str, type[StageConfig]]:
    """Stage kind -> its config model."""
    return {kind: stage_module(kind).Config for kind in STAGES}


def cli_args(cfg: StageConfig, skip: tuple[str, ...] = ()) -> list[str]:
    """``--flag value`` of every field of ``cfg`` but ``kind``, ``skip`` and None values (lists: one
    ``--flag v1 v2 ...``; floats as ``repr``)."""
    out: list[str] = []
    for name in type(cfg).model_fields:
        value: Any = getattr(cfg, name)
        if name == "kind" or name in skip or value is None:
            continue
        flag = "--" + name.replace("_", "-")
        out += [flag, *map(str, value)] if isinstance(value, list) else [flag, str(value)]
    return out
