"""The settings of where a stage's work runs: local processes or a Ray cluster (:class:`RaySettings`).

One block, the same in every stage's config (``ray:``): ``address`` (``None``: local processes; ``"local"``:
a private Ray started on this machine for the stage; ``"auto"``: the cluster this machine joined with
``ray start``; ``"host:port"``: that cluster), ``workers`` (local processes, or Ray tasks / DMC actors in
flight), ``resources`` (what one Ray task or actor asks for, e.g. ``{"CPU": 1}``), ``max_retries`` (Ray
re-runs a task whose node died this many times), ``max_restarts`` (Ray restarts a DMC actor whose process
or node died this many times; ``-1``: always) and ``max_staleness`` (DMC: the learner trains on a batch
collected with weights at most this many updates old, and drops older ones).

Imports nothing heavy (no ray, no torch): a config can be checked anywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any


class SettingsError(ValueError):
    """A bad ``ray:`` setting; its message is one line naming the setting and the allowed values."""


@dataclass(frozen=True)
class RaySettings:
    """Where a stage's work runs (see the module docstring). Validated on construction."""

    address: str | None = None
    workers: int = 1
    resources: Mapping[str, float] = field(default_factory=lambda: {"CPU": 1.0})
    max_retries: int = 3
    max_restarts: int = -1
    max_staleness: int = 1

    def __post_init__(self) -> None:
        if self.address is not None and (not isinstance(self.address, str) or not self.address.strip()):
            raise SettingsError(f"ray.address must be null, 'local', 'auto' or 'host:port', "
                                f"not {self.address!r}")
        for key, low in (("workers", 1), ("max_retries", 0), ("max_restarts", -1), ("max_staleness", 0)):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise SettingsError(f"ray.{key} must be an integer >= {low}, not {v!r}")
        if not isinstance(self.resources, Mapping) or not self.resources:
            raise SettingsError(f"ray.resources must be a non-empty mapping of resource name to amount "
                                f"(e.g. {{CPU: 1}}), not {self.resources!r}")
        for k, v in self.resources.items():
            if not isinstance(k, str) or isinstance(v, bool) or not isinstance(v, int | float) or not v > 0:
                raise SettingsError(f"ray.resources[{k!r}] must be a number > 0, not {v!r}")
        object.__setattr__(self, "resources", {k: float(v) for k, v in self.resources.items()})

    @property
    def backend(self) -> str:
        """``"local"`` (processes on this machine) when ``address`` is None, else ``"ray"``."""
        return "local" if self.address is None else "ray"

    @property
    def num_cpus(self) -> float:
        """The CPUs one Ray task or actor asks for (``resources["CPU"]``, 0 when not named)."""
        return float(self.resources.get("CPU", 0.0))

    @property
    def custom_resources(self) -> dict[str, float]:
        """The resources of one task besides CPU and GPU (Ray's ``resources=`` argument)."""
        return {k: v for k, v in self.resources.items() if k not in ("CPU", "GPU")}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> RaySettings:
        """The settings of a config's ``ray:`` block (None: the defaults); an unknown key is a one-line
        :class:`SettingsError` naming it and the allowed keys."""
        if d is None:
            return cls()
        if not isinstance(d, Mapping):
            raise SettingsError(f"ray must be a mapping of settings, not {d!r}")
        allowed = [f.name for f in fields(cls)]
        for k in d:
            if k not in allowed:
                raise SettingsError(f"ray.{k} is not a setting; allowed: {', '.join(allowed)}")
        return cls(**dict(d))
