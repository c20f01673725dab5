"""smear-rl: a reference RL environment for Four Point Northeastern Wisconsin Smear.

``from smear_env import smear_v0`` gives the PettingZoo AEC environment (``smear_v0.env()``);
``smear_env.gym.single_seat.SmearSingleSeatEnv`` the single-agent Gymnasium view.

Importing this package does not import PettingZoo (of the package's modules only ``smear_env.envs.aec``
imports it), yet registers ``smear/smear_v0`` (and ``smear_v0``) in PettingZoo's registry (PettingZoo >=
1.27, ``pettingzoo.make("aec", "smear/smear_v0")``): at once when PettingZoo is already imported,
otherwise as soon as it is. Older PettingZoo without a registry is left alone.

In the same way it registers the single-seat Gymnasium env as ``smear_env/SmearSingleSeat-v0`` in
Gymnasium's registry (``gymnasium.make("smear_env/SmearSingleSeat-v0", opponents="heuristic")``; the
factory is :func:`smear_env.gym.single_seat.make_env`). Without importing ``smear_env`` first, Gymnasium's
module prefix does it: ``gymnasium.make("smear_env:smear_env/SmearSingleSeat-v0")``. Its vector entry point
is :func:`smear_env.gym.vector_env.make_vector_env` (``gymnasium.make_vec("smear_env/SmearSingleSeat-v0",
num_envs=N)``: N games on the batched engine, :class:`smear_env.gym.vector_env.SmearVectorEnv`).

The package's folders are its layers, lowest first: ``core`` (cards, actions, rule options and rules),
``engine`` (the single and the batched game, views, observations, records), ``tables`` (the game loop of
every front end), ``envs`` (the AEC env and the framework adapters) and ``gym`` (the Gymnasium envs), then
``agents``, ``evaluation`` and ``play``. The modules that sat at the package's root import from their old
paths for one more version (:data:`MOVED_MODULES`), each with a ``DeprecationWarning`` naming the new path.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from typing import Any

__version__ = "0.1.0"

ENV_IDS = ("smear/smear_v0", "smear_v0")
_ENTRY_POINT = "smear_env.envs.aec:env"
GYM_ENV_ID = "smear_env/SmearSingleSeat-v0"
_GYM_ENTRY_POINT = "smear_env.gym.single_seat:make_env"
_GYM_VECTOR_ENTRY_POINT = "smear_env.gym.vector_env:make_vector_env"


def register_pettingzoo(pettingzoo_module: Any | None = None) -> bool:
    """Register smear_v0 in PettingZoo's AEC registry; False when PettingZoo has no registry."""
    pz = pettingzoo_module if pettingzoo_module is not None else sys.modules.get("pettingzoo")
    if pz is None:
        import pettingzoo as pz
    register = getattr(pz, "register", None)
    registry = getattr(pz, "aec_registry", None)
    if register is None or registry is None:
        return False
    for env_id in ENV_IDS:
        normalized = env_id.replace("_v0", "-v0")
        if env_id not in registry and normalized not in registry:
            try:
                register("aec", env_id, entry_point=_ENTRY_POINT)
            except Exception:  # a registry of another shape: leave it alone
                return False
    return True


def register_gymnasium(gymnasium_module: Any | None = None) -> bool:
    """Register ``smear_env/SmearSingleSeat-v0`` in Gymnasium's registry (once); True when it is there."""
    gym = gymnasium_module if gymnasium_module is not None else sys.modules.get("gymnasium")
    if gym is None:
        import gymnasium as gym
    if GYM_ENV_ID not in gym.registry:
        gym.register(id=GYM_ENV_ID, entry_point=_GYM_ENTRY_POINT, vector_entry_point=_GYM_VECTOR_ENTRY_POINT)
    return True


_REGISTRARS = {"pettingzoo": register_pettingzoo, "gymnasium": register_gymnasium}


class _RegisterWhenImported(importlib.abc.MetaPathFinder):
    """Registers the environments right after ``pettingzoo`` / ``gymnasium`` is imported.

    Its ``find_spec`` hands back the framework's own spec with the loader's ``exec_module`` wrapped: the
    registration runs when a module is executed from that spec (an import), never on a lookup alone, so a
    probe such as ``importlib.util.find_spec("gymnasium")`` (TorchRL does it at import) changes nothing.
    The finder leaves ``sys.meta_path`` once every framework it waits for has been imported."""

    def __init__(self, pending: set[str]) -> None:
        self.pending = pending
        self._looking: set[str] = set()

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in self.pending or fullname in self._looking:
            return None
        self._looking.add(fullname)
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self._looking.discard(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader = spec.loader
        if getattr(loader, "_smear_env_registers", False):
            return spec
        original = loader.exec_module

        def exec_module(module: Any) -> None:
            original(module)
            self._imported(fullname, module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        loader._smear_env_registers = True  # type: ignore[attr-defined]
        return spec

    def _imported(self, fullname: str, module: Any) -> None:
        if fullname in self.pending:
            self.pending.discard(fullname)
            try:
                _REGISTRARS[fullname](module)
            except Exception:  # never break the import of the framework itself
                pass
        if not self.pending and self in sys.meta_path:
            sys.meta_path.remove(self)


_pending: set[str] = set()
for _name, _register in _REGISTRARS.items():
    if _name in sys.modules:
        try:
            _register(sys.modules[_name])
        except Exception:
            pass
    else:
        _pending.add(_name)
if _pending and not any(isinstance(f, _RegisterWhenImported) for f in sys.meta_path):
    sys.meta_path.insert(0, _RegisterWhenImported(_pending))


# The modules that moved from the root of the package into its layer folders: old name -> new name, both
# under ``smear_env.`` (a moved package's submodules follow it). Importing an old name gives the new module
# (the same object) with a DeprecationWarning naming the new path; the old names go in smear-rl 0.2.
MOVED_MODULES: dict[str, str] = {
    "cards": "core.cards", "actions": "core.actions", "config": "core.config", "phases": "core.phases",
    "rules": "core.rules", "seeding": "core.seeding", "jsonsafe": "core.jsonsafe",
    "game": "engine.game", "vector": "engine.vector", "observation": "engine.observation",
    "record": "engine.record", "recording": "engine.recording", "infoset": "engine.infoset",
    "seat_view": "engine.seat_view", "lane_deals": "engine.lane_deals", "lane_records": "engine.lane_records",
    "lane_observation": "engine.lane_observation", "worlds": "engine.worlds",
    "table": "tables.table", "batched_table": "tables.batched_table", "render": "tables.render",
    "stats": "tables.stats",
    "env": "envs.aec", "integrations": "envs.integrations",
    "single_seat": "gym.single_seat", "vector_env": "gym.vector_env",
}


def moved_name(fullname: str) -> str | None:
    """The new dotted name of a module imported by its old one (for ``game`` -> ``engine.game``, the
    submodule ``x`` of the old package gives ``x`` of the new one); None for a name that did not move."""
    head, _, rest = fullname.partition(".")
    if head != __name__ or not rest:
        return None
    old, _, sub = rest.partition(".")
    new = MOVED_MODULES.get(old)
    if new is None:
        return None
    return f"{__name__}.{new}" + (f".{sub}" if sub else "")


class _MovedModuleLoader(importlib.abc.Loader):
    """Loads an old module name as the module at its new name: the same module object, imported once."""

    def __init__(self, new_name: str) -> None:
        self.new_name = new_name
        self.spec: Any = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Any:
        warnings.warn(f"{spec.name} moved to {self.new_name}: import {self.new_name} (the old path goes in "
                      "smear-rl 0.2)", DeprecationWarning, stacklevel=2)
        module = importlib.import_module(self.new_name)
        self.spec = module.__spec__
        return module

    def exec_module(self, module: Any) -> None:
        # the import system has set the old name's spec on the module: give it its own back
        module.__spec__ = self.spec


class _MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds the old names of :data:`MOVED_MODULES` (and their submodules)."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        new = moved_name(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _MovedModuleLoader(new))


if not any(isinstance(f, _MovedModuleFinder) for f in sys.meta_path):
    # first: the path finder would load a moved package's submodule a second time under its old name
    sys.meta_path.insert(0, _MovedModuleFinder())
