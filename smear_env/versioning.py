"""The versions of smear-rl and the one table that ties the environment's layout to its version.

Four things carry a version, and each changes for its own reason (the policy, also in ``CHANGELOG.md`` and
the documentation's *Versions* page):

``PACKAGE_VERSION`` (``smear_env.__version__``, the wheel's version)
    Semantic versioning. The patch number for fixes that change no documented behaviour; the minor number
    for new features and for any change of the items below (a new env version, record or checkpoint
    format); the major number once 1.0 is out, for removals. Every release has a ``CHANGELOG.md`` entry.

``ENV_VERSION`` (``"smear_v0"``: the PettingZoo module ``smear_env.smear_v0`` and the registry id)
    Bumped (``smear_v1``, ...) whenever what an agent sees or does changes meaning: the observation layout
    (any term added, removed, resized, moved or re-encoded), the action ids, the ``state()`` layout, or the
    rewards and episode ends under the same options. Rule *options* with new defaults-preserving values do
    not bump it. A bump adds a line to :data:`ENV_HISTORY`, the env docstring's *Version history* and the
    changelog; checkpoints of the old version are then rejected by name.

Observation layout hash (``obs_layout_hash()``)
    A hash of the observation terms (names, sizes, kinds, order). Not chosen by hand: each
    :data:`ENV_HISTORY` line pins the hash of its env version, and ``tests/test_version_policy.py`` fails
    when the code's hash differs from the pinned one, i.e. when the layout changed without an env version
    bump. Checkpoints store it and are refused by a different layout.

``RECORD_FORMAT`` (``"smear-record/1"``, game records) and ``CHECKPOINT_FORMAT`` (``"smear-checkpoint/1"``)
    Bumped (``/2``) when a field is removed or changes meaning; adding an optional field keeps the number.
    Readers reject other numbers with an error naming both.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import __version__
from .agents.checkpoint import FORMAT as CHECKPOINT_FORMAT
from .core.actions import DISCARD_ACTION_BASE, NUM_ACTIONS, PLAY_ACTION_BASE, TRUMP_ACTION_BASE
from .engine.observation import ENV_VERSION, OBS_SIZE, obs_layout_hash
from .engine.record import FORMAT as RECORD_FORMAT

PACKAGE_VERSION = __version__


@dataclass(frozen=True)
class EnvVersion:
    """One released environment version and the layout it was released with."""

    env: str
    """The env version, e.g. ``"smear_v0"``."""
    package: str
    """The package version that introduced it."""
    obs_size: int
    obs_layout_hash: str
    """:func:`obs_layout_hash` of its observation layout."""
    actions: tuple[int, int, int, int]
    """(``TRUMP_ACTION_BASE``, ``DISCARD_ACTION_BASE``, ``PLAY_ACTION_BASE``, ``NUM_ACTIONS``)."""
    changes: str
    """What changed, one line (the env docstring's *Version history*)."""


# The one place that pins the layout to the env version. Append a line with every env version bump.
ENV_HISTORY: tuple[EnvVersion, ...] = (
    EnvVersion("smear_v0", "0.1.0", 493, "fd20e892b26932ae", (4, 8, 40, 72), "initial release."),
)


def current_actions() -> tuple[int, int, int, int]:
    """The action layout of this code, in :attr:`EnvVersion.actions` form."""
    return (TRUMP_ACTION_BASE, DISCARD_ACTION_BASE, PLAY_ACTION_BASE, NUM_ACTIONS)


def layout_mismatches() -> list[str]:
    """What differs between this code's layout and the pinned line of ``ENV_VERSION`` (empty when they
    agree); each item says which version bump is due."""
    pinned = {v.env: v for v in ENV_HISTORY}
    if ENV_VERSION not in pinned:
        return [f"ENV_VERSION {ENV_VERSION!r} has no line in ENV_HISTORY (smear_env/versioning.py)"]
    if ENV_HISTORY[-1].env != ENV_VERSION:
        return [f"ENV_VERSION {ENV_VERSION!r} is not the last line of ENV_HISTORY ({ENV_HISTORY[-1].env!r})"]
    line = pinned[ENV_VERSION]
    found = []
    bump = (
        f"bump the env version ({ENV_VERSION} -> the next _vN: a new ENV_HISTORY line in "
        "smear_env/versioning.py, the env docstring's Version history, CHANGELOG.md)"
    )
    if (OBS_SIZE, obs_layout_hash()) != (line.obs_size, line.obs_layout_hash):
        found.append(
            f"the observation layout changed (OBS_SIZE {OBS_SIZE}, hash {obs_layout_hash()}; {ENV_VERSION} "
            f"was released with {line.obs_size}, {line.obs_layout_hash}): {bump}"
        )
    if current_actions() != line.actions:
        found.append(
            f"the action layout changed ({current_actions()}; {ENV_VERSION} was released with "
            f"{line.actions}): {bump}"
        )
    return found


__all__ = [
    "CHECKPOINT_FORMAT",
    "ENV_HISTORY",
    "ENV_VERSION",
    "EnvVersion",
    "PACKAGE_VERSION",
    "RECORD_FORMAT",
    "current_actions",
    "layout_mismatches",
    "obs_layout_hash",
]
