"""Stage ``evaluate``: a duplicate match of a policy against an opponent (``smear-eval``), its summary kept as
``result.json``."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from smear_env.evaluation.cli import main as smear_eval

from . import StageConfig


class Config(StageConfig):
    """A duplicate match (smear_env.evaluation) of ``agent`` against ``opponent``."""

    kind: Literal["evaluate"] = "evaluate"
    """Stage kind."""
    agent: str | None = None
    """A stage id or an agent spec (None: the latest policy of the stages before)."""
    opponent: str = "heuristic"
    """Agent spec of the other team."""
    games: int = Field(2000, ge=2, le=10**8)
    """Games in total (even: half as many duplicate pairs)."""
    seed: int | None = Field(None, ge=0, le=2**62)
    """Seed of the deals (None: smear-eval's default)."""
    workers: int = Field(1, ge=1, le=256)
    """Worker processes (the results do not depend on them)."""

    inputs = {"agent": "policy"}
    latest = ("agent",)
    outputs = {"result": "result.json"}


def run(cfg: Config, inputs: dict[str, Any], folder: Path, resume: bool) -> int:
    seed = [] if cfg.seed is None else ["--seed", str(cfg.seed)]
    args = [inputs["agent"], cfg.opponent, "--games", str(cfg.games), *seed, "--workers", str(cfg.workers)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = smear_eval([*args, "--json"])
    if status != 0:
        return status
    result = json.loads(out.getvalue())
    (folder / "result.json").write_text(json.dumps(result, indent=1) + "\n")
    s = result.get("summary", result)
    lo, hi = s.get("win_rate_a_ci95", (None, None))
    print(f"{s.get('team_a')} vs {s.get('team_b')}: win rate {s.get('win_rate_a')} [{lo}, {hi}] over "
          f"{s.get('games')} games")
    return 0
