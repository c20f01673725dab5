"""Stage ``expert_iteration``: rounds of rollout search distilled into the policy
(:mod:`training.expert_iteration`); resumes after the last finished round."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from ..configs.base import Positive
from . import StageConfig


class Config(StageConfig):
    """Expert iteration: each round, the rollout search on the current policy plays ``games`` duplicate
    games per worker against ``opponent``, and its choices are distilled into the policy."""

    kind: Literal["expert_iteration"] = "expert_iteration"
    """Stage kind."""
    init: str | None = None
    """The policy of round 0: a stage id, a checkpoint file or a shipped agent (None: the latest policy of
    the stages before)."""
    rounds: int = Field(1, ge=1, le=1_000)
    """Rounds of search and distillation."""
    games: int = Field(1000, ge=1, le=10**7)
    """Duplicate games per worker and round."""
    workers: int = Field(2, ge=1, le=256)
    """Processes that play the games (each its own deal seed: the targets depend on it)."""
    seed: int = Field(0, ge=0, le=2**62)
    """Deal seed of round 1's worker 0 (then +1 each)."""
    opponent: str = "heuristic"
    """The table's other team, in the games and in the rollouts (a greedy checkpoint or the heuristic)."""
    samples: int = Field(32, ge=1, le=10_000)
    """Deals sampled per searched decision."""
    phases: str = "trump+discard+play"
    """Decision phases the search plays ('+'-joined of bid, trump, discard, play)."""
    search_options: str = ""
    """More options of the rollout spec, comma-joined key=value (smear_env.agents.rollout)."""
    search_winprob: str | None = None
    """The search values actions by this win-probability model (a winprob stage's id or a file; the rollout
    spec's winprob= option) instead of the hand's score difference."""
    epochs: int = Field(3, ge=1, le=1_000)
    """Distillation epochs per round."""
    lr: Positive = 3e-4
    """Distillation learning rate."""
    batch: int = Field(1024, ge=1, le=2**18)
    """Distillation minibatch."""
    window: int = Field(1, ge=1, le=1_000)
    """Distil on the targets of this many rounds: this one and the ones before it."""
    changed_weight: Positive = 1.0
    """Loss weight of the rows where the search changed the policy's action."""
    min_gain: float | None = None
    """Keep only the changes the search valued at least this much above the policy's action (None: all)."""
    ray_address: str | None = Field(None, min_length=1, max_length=256)
    """Play each worker's share of a round as a Ray task at this address ("auto": the cluster this machine
    belongs to, "local": a private Ray, "host:port"; None: local processes). The targets and the match
    figures equal the local ones for the same seeds (docs/ray.md)."""

    inputs = {"init": "policy", "search_winprob": "winprob"}
    latest = ("init",)
    outputs = {"policy": "final.safetensors"}


def run(cfg: Config, inputs: dict[str, Any], folder: Path, resume: bool) -> int:
    from ..expert_iteration import run_rounds  # lazy: heavy (torch)

    options = [cfg.search_options] if cfg.search_options else []
    if inputs.get("search_winprob"):
        options.append(f"winprob={inputs['search_winprob']}")
    rest = cfg.model_dump(exclude={"kind", "init", "search_options", "search_winprob"})
    run_rounds(inputs["init"], folder, **rest, search_options=",".join(options), resume=resume)
    return 0
