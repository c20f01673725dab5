"""A tiny training run shared by the run-folder reliability tests (tests/test_reliability_*.py): the
arguments of a few-second `smear-train` run, fixtures for one finished run per test module and a fresh copy
of it per test, and a snapshot of a run folder's files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from training.train import main

ROOT = Path(__file__).resolve().parents[1]
QUICK = str(ROOT / "configs" / "quickstart.yaml")
TINY = ["--config", QUICK, "--variant", "tiny", "--set", "rules.target_score=5",
        "--set", "total_timesteps=300", "--set", "output.checkpoint_interval=100",
        "--set", "output.keep_checkpoints=0", "--set", "selfplay.snapshot_interval=300",
        "--set", "eval.games=2"]


def make_finished_run(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    run = tmp_path_factory.mktemp(name) / "run"
    assert main([*TINY, "--run-dir", str(run)]) == 0
    return run


def copy_run(finished_run: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "run"
    shutil.copytree(finished_run, dst)
    return dst


def folder_state(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}
