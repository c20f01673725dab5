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
* ``run(cfg, inputs, folder, resume) -> int``: run it with its config and its resolved inputs (field ->
  path, or paths) into ``folder`` (``resume``: keep what an interrupted run of the same config and inputs
  finished), returning an exit status. The pipeline records the config and the inputs (``stage.json``)
  before the stage runs, and compares them when it is run again.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import ClassVar

from ..configs.base import Section

STAGES: dict[str, str] = {
    "train": ".train",
    "expert_iteration": ".expert_iteration",
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
