"""Stage ``advantage``: exact action values in the true deals, and a correction fitted on them
(:mod:`training.advantage`); a values step already done for the same arguments is kept on resume."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from ..configs.base import Fraction, NonNegative, Positive
from . import StageConfig


class Config(StageConfig):
    """One advantage round: ``values`` (every legal action of a share of the team's decisions played out in
    the true deal, valued by ``winprob``) and ``fit`` (a correction on the policy, written as
    ``final.safetensors``)."""

    kind: Literal["advantage"] = "advantage"
    """Stage kind."""
    init: str | None = None
    """The policy to improve: a stage id, a checkpoint file or a shipped agent (None: the latest policy of
    the stages before)."""
    opponent: str = "heuristic"
    """Agent spec of the other team (the values step may face one that draws)."""
    more_values: list[str] = []
    """Ids of earlier advantage stages whose values (the same init and winprob) the fit also uses."""
    winprob: str | None = None
    """The objective: a winprob stage's id or a win-probability file (None: the hand's score difference)."""
    positions: int = Field(1_000_000, ge=1, le=10**9)
    """Positions valued in the values step."""
    share: dict[Literal["bid", "trump", "discard", "play"], Fraction] = {}
    """Share of the team's decisions valued per phase (phases left out: bid 0.5, trump 1, discard 0.3,
    play 0.15)."""
    workers: int = Field(2, ge=1, le=256)
    """Processes of the values step (each its own seed: the values depend on it)."""
    epochs: int = Field(5, ge=1, le=1_000)
    """Epochs of the fit."""
    lr: Positive = 3e-4
    """Learning rate of the fit."""
    batch: int = Field(1024, ge=1, le=2**18)
    """Minibatch of the fit."""
    margin: NonNegative = 0.04
    """The corrected policy changes an action only where the correction's best is this much better."""
    max_logit_gap: NonNegative | None = 3.0
    """The correction may take only actions whose policy logit is at most this far below the greedy one's
    (None: any action)."""
    score_range: Literal["fitted", "everywhere"] = "fitted"
    """fitted: the correction applies only within the scores of the positions it was fitted on."""
    steps: list[Literal["values", "fit"]] = Field(["values", "fit"], min_length=1)
    """Steps to run, in order."""
    seed: int = Field(0, ge=0, le=2**62)
    """Seed of the values step's games (worker i: seed + i) and of the fit."""
    ray_address: str | None = Field(None, min_length=1, max_length=256)
    """Run each worker's share of the values step as a Ray task at this address ("auto": the cluster this
    machine belongs to, "local": a private Ray, "host:port"; None: local processes). The values equal the
    local ones for the same seeds (docs/ray.md)."""

    inputs = {"init": "policy", "winprob": "winprob", "more_values": "values"}
    latest = ("init",)
    outputs = {"values": "round.json", "policy": "final.safetensors"}


def run(cfg: Config, inputs: dict[str, Any], folder: Path, resume: bool) -> int:
    from ..advantage import run_round  # lazy: heavy (torch)

    more = [str(Path(p).parent) for p in inputs.get("more_values", [])]  # the folders of their round.json
    run_round(inputs["init"], folder, **cfg.model_dump(exclude={"kind", "init", "more_values", "winprob"}),
              more_values=more, winprob=inputs.get("winprob"), resume=resume)
    return 0
