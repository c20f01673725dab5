"""Stage ``winprob``: a win-probability model fitted on a policy's games (:mod:`training.winprob`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from . import StageConfig


class Config(StageConfig):
    """The chance of winning the game from each hand start's scores, fitted on ``team``'s games against
    ``opponent`` (the objective of the advantage stage)."""

    kind: Literal["winprob"] = "winprob"
    """Stage kind."""
    team: str | None = None
    """Agent of seats 0 and 2: a stage id or an agent spec (None: the latest policy of the stages before)."""
    opponent: str = "heuristic"
    """Agent spec of seats 1 and 3 (one that does not draw)."""
    games: int = Field(20000, ge=1, le=10**8)
    """Games played."""
    hidden: list[Annotated[int, Field(ge=1, le=4096)]] = Field([32, 32], min_length=1, max_length=8)
    """Hidden layer sizes of the model."""
    steps: int = Field(6000, ge=1, le=10**7)
    """Full-batch Adam steps of the fit."""
    seed: int = Field(0, ge=0, le=2**62)
    """Seed of the games (and of the fit)."""
    shards: int = Field(1, ge=1, le=1024)
    """Shares of the games, each on its own deal seed (the model depends on this, not on workers)."""
    workers: int = Field(1, ge=1, le=256)
    """Processes that play the shares."""

    inputs = {"team": "policy"}
    latest = ("team",)
    outputs = {"winprob": "winprob.safetensors"}


def run(cfg: Config, inputs: dict[str, Any], folder: Path, resume: bool) -> int:
    from ..winprob import fit_file  # lazy: heavy (torch)

    fit_file(inputs["team"], folder / "winprob.safetensors", **cfg.model_dump(exclude={"kind", "team"}))
    return 0
