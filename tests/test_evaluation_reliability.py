"""smear-eval faults (issue 12): agents' generators must not be a key to the deals (item 4), and user errors
at the command line end in one clear line, not a traceback (item 7)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from smear_env.agents.base import RandomAgent
from smear_env.core.config import SmearRules
from smear_env.evaluation import DealSequence, agent_rng, run_match
from smear_env.evaluation.cli import main

ROOT = Path(__file__).resolve().parents[1]


class _Spy(RandomAgent):
    seen: list[np.random.Generator] = []

    def start_game(self, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        _Spy.seen.append(rng)
        super().start_game(seat, rules, rng)


def test_item4_agent_generator_is_not_a_key_to_the_deals():
    """Item 4: the generator handed to an agent in start_game does not carry [seed, pair, game, seat]."""
    _Spy.seen = []
    run_match(_Spy, "random", games=2, rules=SmearRules(target_score=3), seed=7)
    assert len(_Spy.seen) == 4  # two seats of team A in each game of the pair
    entropies = set()
    for rng in _Spy.seen:
        seq = rng.bit_generator.seed_seq
        assert isinstance(seq.entropy, int) and seq.entropy >= 2**64  # a digest, not a list of small ints
        assert seq.spawn_key == ()
        entropies.add(seq.entropy)
    assert len(entropies) == 4  # one stream per seat and game
    # (before: entropy == [seed, 3, pair, game, seat], from which DealSequence(seed, pair) rebuilt every deal)
    # still deterministic
    assert agent_rng(7, 0, 0, 0).integers(2**62) == agent_rng(7, 0, 0, 0).integers(2**62)
    assert DealSequence(7, 0).deal(0) == DealSequence(7, 0).deal(0)


def _one_error_line(capsys, argv: list[str], code: int = 2) -> str:
    with pytest.raises(SystemExit) as ex:
        main(argv)
    assert ex.value.code == code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


def test_item7_bad_pimc_option_names_the_valid_ones(capsys):
    """Item 7: `smear-eval pimc:foo=1 random` is one error line naming the valid options."""
    line = _one_error_line(capsys, ["pimc:foo=1", "random"])
    assert "unknown option 'foo'" in line and "samples" in line and line.startswith("smear-eval: error:")


def test_item7_bad_pimc_value_names_the_type(capsys):
    """Item 7: `smear-eval pimc:samples=abc random` is one error line naming the expected type."""
    line = _one_error_line(capsys, ["pimc:samples=abc", "random"])
    assert "samples='abc'" in line and "int" in line


def test_item7_unwritable_records_path(capsys, tmp_path):
    """Item 7: an unwritable --records path is one error line, and no game is played."""
    for bad in (tmp_path / "missing" / "r.jsonl", tmp_path):
        line = _one_error_line(capsys, ["random", "random", "--games", "2", "--records", str(bad)])
        assert "--records" in line and str(bad) in line


def test_item7_unknown_anchor(capsys):
    """Item 7: `--anchor bogus` is one error line naming the agents."""
    line = _one_error_line(capsys, ["random", "heuristic", "pimc", "--anchor", "bogus"])
    assert "'bogus'" in line and "random, heuristic, pimc" in line


def test_item7_interrupt_keeps_records_with_one_line(capsys, tmp_path, monkeypatch):
    """Item 7: Ctrl-C ends smear-eval with one line (exit 130) and keeps the games already written."""
    import smear_env.evaluation.cli as cli

    real = cli.run_match

    def interrupted(*args, **kwargs):
        def progress(n: int) -> None:
            raise KeyboardInterrupt

        kwargs["progress"] = progress
        return real(*args, **kwargs)

    monkeypatch.setattr(cli, "run_match", interrupted)
    out = tmp_path / "r.jsonl"
    assert main(["heuristic", "random", "--games", "4", "--records", str(out)]) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"smear-eval: interrupted; 2 finished games are in {out}"]
    assert len(out.read_text().splitlines()) == 2


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the workers in /proc")
def test_item7_sigint_while_workers_start_gives_one_line(tmp_path):
    """Item 7: SIGINT to the process group as soon as the spawned workers exist, while they still import
    (before their initializer ignores Ctrl-C): exit 130, a short message, no worker traceback."""
    cmd = [sys.executable, "-m", "smear_env.evaluation.cli", "heuristic", "random", "--games", "4000",
           "--workers", "2", "--engine", "reference", "--records", str(tmp_path / "r.jsonl")]
    for _ in range(3):
        p = subprocess.Popen(cmd, cwd=ROOT, stderr=subprocess.PIPE, text=True, start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(_children(p.pid)) < 3:  # the resource tracker, 2 workers
            time.sleep(0.005)
        os.killpg(p.pid, signal.SIGINT)
        _, err = p.communicate(timeout=60)
        assert p.returncode == 130, err
        assert "Traceback" not in err and len(err.strip().splitlines()) <= 2, err


@pytest.mark.slow
def test_item7_sigint_with_workers_gives_one_line(tmp_path):
    """Item 7: SIGINT to `smear-eval --workers 2` (the whole process group, as Ctrl-C does): exit 130, a
    short message, records kept, no worker tracebacks."""
    out = tmp_path / "r.jsonl"
    # the reference engine: batched evaluation of 4,000 games can finish before the first record is seen
    cmd = [sys.executable, "-m", "smear_env.evaluation.cli", "heuristic", "random", "--games", "4000",
           "--workers", "2", "--engine", "reference", "--records", str(out)]
    p = subprocess.Popen(cmd, cwd=ROOT, stderr=subprocess.PIPE, text=True, start_new_session=True)
    t0 = time.monotonic()
    # the records go to a temporary file (r.jsonl.<random>.tmp) that replaces r.jsonl at the end: wait for
    # the first finished game there
    def written() -> bool:
        return any(f.stat().st_size > 0 for f in tmp_path.glob("r.jsonl.*.tmp"))

    while time.monotonic() - t0 < 120 and not written():
        time.sleep(0.2)
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 2, err
    assert out.read_text().count("\n") >= 1
