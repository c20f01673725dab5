"""The learning-curves benchmark's table: the best trainer against MaskablePPO, point by point."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _module():
    path = ROOT / "benchmarks" / "learning_curves.py"
    spec = importlib.util.spec_from_file_location("learning_curves", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _curve(name: str, rates: list[float], per_s: float, width: float = 0.02) -> dict:
    return {"trainer": name, "curve": [
        {"cpu_s": 60.0 * (i + 1), "decisions": int(per_s * 60 * (i + 1)), "win_rate": r,
         "ci95": [r - width, r + width], "margin_per_hand": 0.0, "games": 2000} for i, r in enumerate(rates)]}


def test_ratios_compare_the_best_last_win_rate_with_the_reference():
    lc = _module()
    results = [_curve("vector_ppo", [0.30, 0.50], 10_000), _curve("dmc", [0.40, 0.45], 20_000),
               _curve("maskable_ppo", [0.01, 0.50], 1_000)]
    lines = lc.ratios(results)
    assert lines[1].startswith("vector_ppo (the highest last win rate) against maskable_ppo")
    rows = lines[-2:]
    assert rows[0] == "| 1.0 | 10.0x | 30.0x (30.0% vs 1.0%) | yes |"
    assert rows[1] == "| 2.0 | 10.0x | 1.0x (50.0% vs 50.0%) | no (the intervals overlap) |"
    assert "| CPU min |" in lc.table(results)


def test_no_ratio_lines_without_the_reference_or_a_zero_rate():
    lc = _module()
    assert lc.ratios([_curve("dmc", [0.4], 20_000)]) == []
    lines = lc.ratios([_curve("dmc", [0.4], 20_000), _curve("maskable_ppo", [0.0], 1_000)])
    assert "no ratio (0 wins) (40.0% vs 0.0%)" in lines[-1]


def test_rllib_ppo_runs_in_process_and_is_skipped_without_its_venv(tmp_path, monkeypatch, capsys):
    """rllib_ppo's config keeps sampling and learning in the trainer's process (so its CPU time is what the
    benchmark counts); without .venv-rllib it is skipped with a message naming the venv, never silently."""
    lc = _module()
    cfg = lc.trainer_config("rllib_ppo", 2.0, seed=5)
    assert (cfg.algorithm.name, cfg.ray.num_env_runners, cfg.ray.num_cpus, cfg.seed) == ("rllib_ppo", 0, 1, 5)
    assert cfg.total_timesteps == 2 * lc.DECISIONS_PER_CPU_MINUTE and cfg.time_limit is None
    assert lc.interpreter("dmc") is not None
    monkeypatch.setattr(lc, "RLLIB_PYTHON", tmp_path / "absent" / "python")
    assert lc.interpreter("rllib_ppo") is None
    rc = lc.main(["--trainers", "rllib_ppo", "--minutes", "0.1", "--points", "1", "--games", "2", "--out",
                  str(tmp_path / "out"), "--png", str(tmp_path / "x.png"), "--table", str(tmp_path / "x.md")])
    err = capsys.readouterr().err
    assert rc == 1 and "rllib_ppo: skipped:" in err and "make test-rllib" in err
    assert lc.main(["--trainers", "rllib_ppo,nope"]) == 2
