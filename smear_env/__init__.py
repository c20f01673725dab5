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
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
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
