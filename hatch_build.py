"""Wheel build hook: the shipped agents (the top-level ``checkpoints/`` folder: checkpoint files and model
cards) go into the wheel as ``smear_env/checkpoints/``, where ``smear_env.agents.shipped`` finds them.

Only the standard wheel gets them: an editable install (a clone) reads ``checkpoints/`` where it is, so it
gets no copy that could go stale. ``tests/test_release_shipped.py`` checks that ``TARGET`` matches
``smear_env.agents.shipped.PACKAGE_DIR``.
"""

from __future__ import annotations

from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = "checkpoints"
TARGET = "smear_env/checkpoints"


class ShippedAgentsHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name == "wheel" and version == "standard":
            build_data["force_include"][SOURCE] = TARGET
