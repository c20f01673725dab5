"""Shipped agents by name: the checkpoints that come with smear-rl, each with its model card.

``make_agent("default")`` (and ``smear-eval default heuristic``) plays the checkpoint registered under
``default`` in :data:`SHIPPED_AGENTS`. To ship another agent, put its ``.safetensors`` file and its model
card in the repository's ``checkpoints/`` folder and add one :class:`ShippedAgent` line to the table.

Where the files are found (:func:`shipped_dir`):

* from an installed wheel: inside the package, ``smear_env/checkpoints/`` (the wheel build hook in
  ``hatch_build.py`` force-includes the repository's ``checkpoints/`` folder there, in the standard wheel
  only), read through :mod:`importlib.resources`;
* from a clone (editable install, or ``PYTHONPATH``): the repository's ``checkpoints/`` folder next to the
  ``smear_env`` package.

Shipped names are resolved before file paths; a file that happens to be called ``default`` is still an agent
spec as ``./default``.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

PACKAGE_DIR = "checkpoints"
"""Folder inside the ``smear_env`` package that holds the shipped files in a wheel."""


@dataclass(frozen=True)
class ShippedAgent:
    """One shipped agent: its spec name, its checkpoint file and model card (file names in
    ``checkpoints/``), and a one-line summary."""

    name: str
    file: str
    card: str
    summary: str


SHIPPED_AGENTS: dict[str, ShippedAgent] = {
    a.name: a
    for a in (
        ShippedAgent(
            "default",
            "smear_v0_default.safetensors",
            "README.md",
            "behaviour cloning of the heuristic and PPO on the batched engine with a suit-canonical network "
            "(configs/default.yaml, 1 hour on 2 cores), then three rounds of expert iteration (rollout "
            "search at trump, discards and play distilled into the policy, ~70 minutes) and two rounds with "
            "a game-aware search (the chance of winning the game as its objective, ~60 minutes), then one "
            "advantage correction (every legal action of 2M decisions valued in the true deal, a second "
            "network fitted to the advantages, ~25 minutes); default rules; 69.2% [68.6%, 69.9%] of 20,000 "
            "games vs heuristic, 63.5% [60.5%, 66.4%] vs pimc, 100% vs random",
        ),
        ShippedAgent(
            "scratch",
            "smear_v0_scratch.safetensors",
            "SCRATCH.md",
            "RL from scratch, no imitation: Deep Monte-Carlo (configs/dmc.yaml --variant bids, 1 hour on 2 "
            "cores); default rules; 61.45% [59.3%, 63.6%] of games vs heuristic, 100% vs random",
        ),
    )
}


def shipped_dir() -> Path:
    """The folder that holds the shipped checkpoint files: the package's copy in an installed wheel, else
    the repository's ``checkpoints/`` (a clone). ``FileNotFoundError`` when neither exists."""
    packaged = resources.files("smear_env").joinpath(PACKAGE_DIR)
    if packaged.is_dir():
        return Path(str(packaged))
    repo = Path(__file__).resolve().parents[2] / "checkpoints"
    if repo.is_dir():
        return repo
    raise FileNotFoundError(
        f"no shipped checkpoints: neither the package folder smear_env/{PACKAGE_DIR} (an installed wheel) "
        f"nor the repository folder {repo} (a clone) exists"
    )


def _entry(name: str) -> ShippedAgent:
    try:
        return SHIPPED_AGENTS[name]
    except KeyError:
        raise ValueError(
            f"unknown shipped agent {name!r}; shipped agents: {', '.join(map(repr, SHIPPED_AGENTS))}"
        ) from None


def shipped_path(name: str) -> Path:
    """The checkpoint file of the shipped agent ``name`` (``ValueError`` for an unknown name,
    ``FileNotFoundError`` when its file is missing)."""
    path = shipped_dir() / _entry(name).file
    if not path.is_file():
        raise FileNotFoundError(f"shipped agent {name!r}: its checkpoint file {str(path)!r} is missing")
    return path


def checkpoint_file(spec: str) -> str:
    """The checkpoint file a spec names: the shipped agent's file for a shipped name (:func:`shipped_path`),
    else ``spec`` itself (a path)."""
    return str(shipped_path(spec)) if spec in SHIPPED_AGENTS else spec


def model_card(name: str) -> str:
    """The model card (Markdown) of the shipped agent ``name``."""
    return (shipped_dir() / _entry(name).card).read_text(encoding="utf-8")


__all__ = ["PACKAGE_DIR", "SHIPPED_AGENTS", "ShippedAgent", "checkpoint_file", "model_card", "shipped_dir",
           "shipped_path"]
