"""Issue 12 (reliability), training side: run-folder safety, resume, signals, config bounds and ranges.

Each test names the issue item it keeps fixed. One tiny run (module fixture) is copied for the resume tests.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from smear_env.agents.checkpoint import read_checkpoint
from tests.run_helpers import TINY, copy_run, folder_state, make_finished_run
from training.config import ConfigError, from_dict, load_config
from training.config_files import parse_override
from training.train import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_finished_run(tmp_path_factory, "reliability")


@pytest.fixture
def run_copy(finished_run: Path, tmp_path: Path) -> Path:
    return copy_run(finished_run, tmp_path)


# ------------------------------------------------------------------------------------------- items 1, 13
def test_failed_resume_leaves_run_folder_unchanged(run_copy: Path, capsys: pytest.CaptureFixture) -> None:
    """Issue 12 item 1 (and 13): `--resume --set rules.kitty_size=2` fails with a message that fits
    training (not "evaluation") and leaves config.yaml, command.txt and the checkpoints untouched, so a
    plain --resume still works."""
    before = folder_state(run_copy)
    assert main(["--run-dir", str(run_copy), "--resume", "--set", "rules.kitty_size=2"]) == 2
    err = capsys.readouterr().err
    assert "kitty_size=3 (this run's config: 2)" in err and "resume with the rule options" in err
    assert "evaluat" not in err and "Traceback" not in err
    assert folder_state(run_copy) == before
    assert load_config(run_copy / "config.yaml").rules.kitty_size == 3
    # a changed network does not fit the checkpoint either: a message, the folder untouched
    assert main(["--run-dir", str(run_copy), "--resume", "--set", "network.hidden_sizes=[8]"]) == 2
    assert "does not fit this run's config" in capsys.readouterr().err
    assert folder_state(run_copy) == before


def test_corrupt_checkpoints_on_resume_are_a_message_and_change_nothing(run_copy: Path,
                                                                       capsys: pytest.CaptureFixture) -> None:
    """Issue 12 items 1 and 7: every checkpoint corrupt -> `--resume` exits 2 naming them (no traceback),
    config.yaml and command.txt unchanged."""
    for p in (run_copy / "checkpoints").glob("*.safetensors"):
        p.write_bytes(b"garbage")
    before = folder_state(run_copy)
    assert main(["--run-dir", str(run_copy), "--resume"]) == 2
    err = capsys.readouterr().err
    assert "no readable checkpoint" in err and "latest.safetensors" in err and "Traceback" not in err
    assert folder_state(run_copy) == before


# ------------------------------------------------------------------------------------------- item 6
def test_resume_uses_newest_readable_checkpoint_and_cleans_temporary_files(
        run_copy: Path, capsys: pytest.CaptureFixture) -> None:
    """Issue 12 item 6: with `latest` missing (full disk) or corrupt, --resume continues from the newest
    intact step_N; the `.tmp` files of a killed save are removed on resume."""
    ckpt = run_copy / "checkpoints"
    steps = sorted(int(p.stem[5:]) for p in ckpt.glob("step_*.safetensors"))
    assert len(steps) >= 2
    newest = steps[-1]
    (ckpt / "latest.safetensors").unlink()
    (ckpt / f"step_{newest}.safetensors").write_bytes(b"truncated")  # the newest step_N is broken too
    stale = [ckpt / "latest.safetensors.x1y2.tmp", ckpt / f"step_{newest}.safetensors.abc.tmp"]
    for p in stale:
        p.write_bytes(b"partial write")
    assert main(["--run-dir", str(run_copy), "--resume", "--set", "total_timesteps=300"]) == 0
    err = capsys.readouterr().err
    assert f"resumed from {ckpt / f'step_{steps[-2]}.safetensors'} at step {steps[-2]}" in err
    assert f"skipped unreadable checkpoint step_{newest}.safetensors" in err
    assert not any(p.exists() for p in stale) and not list(ckpt.glob("*.tmp"))
    assert read_checkpoint(ckpt / "latest.safetensors")[1]["step"] >= 300


def test_overwrite_and_fresh_start_remove_temporary_files(tmp_path: Path) -> None:
    """Issue 12 item 6: a run folder holding only the .tmp files of a killed first save starts cleanly
    (they are removed), so they never pile up."""
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    stale = run / "checkpoints" / "step_100.safetensors.k9.tmp"
    stale.write_bytes(b"partial")
    assert main([*TINY, "--set", "total_timesteps=100", "--set", "eval.opponents=[]", "--run-dir", str(run),
                 "--overwrite"]) == 0
    assert not stale.exists() and (run / "checkpoints" / "latest.safetensors").is_file()


# ------------------------------------------------------------------------------------------- item 2
def test_ctrl_c_during_warm_start_saves_no_random_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture) -> None:
    """Issue 12 item 2: Ctrl-C during the imitation warm start saves no (random-init) step_0 that --resume
    would silently continue as plain RL; it says so, and --resume explains there is nothing to resume."""
    from training.algorithms import imitation

    def interrupted(*args: object, **kwargs: object) -> dict:
        raise KeyboardInterrupt

    monkeypatch.setattr(imitation, "pretrain", interrupted)
    run = tmp_path / "run"
    assert main([*TINY, "--set", "imitation.teacher=heuristic", "--run-dir", str(run)]) == 130
    assert "interrupted during the imitation warm start: no checkpoint saved" in capsys.readouterr().err
    assert not list((run / "checkpoints").glob("*.safetensors"))
    assert main(["--run-dir", str(run), "--resume"]) == 2
    assert "interrupted before its first checkpoint" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------- item 7
def test_unusable_run_folder_is_a_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture) -> None:
    """Issue 12 item 7: a run dir under a file, or one that cannot be created (read-only or missing
    path), gives `smear-train: error: ...` and a non-zero status, not a traceback."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main([*TINY, "--run-dir", str(blocker / "run")]) == 2
    err = capsys.readouterr().err
    assert "smear-train: error:" in err and "is a file, not a folder" in err

    def denied(self: Path, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "mkdir", denied)
    assert main([*TINY, "--run-dir", str(tmp_path / "ro" / "run")]) != 0
    err = capsys.readouterr().err
    assert err.startswith("smear-train: error: Permission denied") and "Traceback" not in err
    assert not (tmp_path / "ro").exists()


# ------------------------------------------------------------------------------------------- item 8
@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"algorithm": {"gamma": 7}}, "'algorithm.gamma': expected a number from 0 to 1, got 7.0"),
        ({"algorithm": {"clip_range": -3}}, "'algorithm.clip_range': expected a number > 0"),
        ({"algorithm": {"gae_lambda": -2}}, "'algorithm.gae_lambda': expected a number from 0 to 1"),
        ({"algorithm": {"learning_rate": float("nan")}}, "'algorithm.learning_rate': expected a finite"),
        ({"algorithm": {"learning_rate": 0}}, "'algorithm.learning_rate': expected a number > 0"),
        ({"algorithm": {"ent_coef": float("inf")}}, "'algorithm.ent_coef': expected a finite"),
        ({"output": {"keep_checkpoints": -3}}, "'output.keep_checkpoints': expected an integer >= 0"),
        ({"time_limit": -5}, "'time_limit': expected a number > 0 and <= 10_000_000 or null"),
        ({"seed": -1}, "'seed': expected an integer from 0 to 9_223_372_036_854_775_807"),
        ({"imitation": {"epsilon": 2}}, "'imitation.epsilon': expected a number from 0 to 1"),
        ({"eval": {"target_score": 2**30}}, "'eval.target_score': expected an integer from 1 to 1_048_576"),
        ({"selfplay": {"opponents": {"self": 1, "heuristc": 1}}},
         "'selfplay.opponents.heuristc': unknown agent spec 'heuristc'"),
        ({"selfplay": {"opponents": {"missing.safetensors": 1}}}, "'selfplay.opponents.missing.safetensors'"),
        ({"imitation": {"teacher": "nobody"}}, "'imitation.teacher': unknown agent spec 'nobody'"),
    ],
)
def test_config_values_are_range_checked(data: dict, message: str) -> None:
    """Issue 12 item 8: out-of-range, non-finite values and unknown agent names are config errors naming
    the key and the allowed values (before any run folder exists)."""
    with pytest.raises(ConfigError) as e:
        from_dict(data)
    assert message in str(e.value)


def test_bad_config_value_leaves_no_run_folder(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Issue 12 item 8: `--set algorithm.gamma=7` stops before the run folder is made."""
    run = tmp_path / "run"
    assert main([*TINY, "--set", "algorithm.gamma=7", "--run-dir", str(run)]) == 2
    assert "algorithm.gamma" in capsys.readouterr().err and not run.exists()


# ------------------------------------------------------------------------------------------- item 5
BOMB = """default:
  a: &a ["x","x","x","x","x","x","x","x","x"]
  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
  e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
  f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
  g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
  h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
  i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def test_yaml_alias_bomb_is_refused_quickly_with_a_short_message(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture) -> None:
    """Issue 12 item 5: a config with nested aliases (a 'billion laughs' file) is refused at once with a
    short message instead of expanding (seconds, hundreds of MB, a 312 MB error message)."""
    p = tmp_path / "bomb.yaml"
    p.write_text(BOMB)
    t0 = time.monotonic()
    assert main(["--config", str(p), "--run-dir", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert time.monotonic() - t0 < 5
    assert "YAML aliases (*a) are not allowed" in err and len(err) < 300
    assert not (tmp_path / "run").exists()
    with pytest.raises(ConfigError, match="YAML aliases"):
        parse_override("network.hidden_sizes=[*a]")


def test_config_parse_is_bounded_and_messages_short(tmp_path: Path) -> None:
    """Issue 12 item 5: deep nesting, oversized files, long bad values and long YAML error lines give
    short messages."""
    deep = tmp_path / "deep.yaml"
    deep.write_text("default:\n  seed: " + "[" * 200 + "]" * 200 + "\n")
    with pytest.raises(ConfigError, match="nested deeper than 20 levels") as e:
        load_config(deep)
    assert len(str(e.value)) < 300
    big = tmp_path / "big.yaml"
    big.write_text("default: {}\n#" + "x" * 2_000_000 + "\n")
    with pytest.raises(ConfigError, match="more than the 1,000,000 allowed"):
        load_config(big)
    long_value = tmp_path / "long.yaml"
    long_value.write_text("default:\n  seed: " + "y" * 100_000 + "\n")
    with pytest.raises(ConfigError, match="'seed': expected int") as e:
        load_config(long_value)
    assert len(str(e.value)) < 300
    broken = tmp_path / "broken.yaml"
    broken.write_text("default:\n  seed: [1, " + "2, " * 2_000 + "\n")
    with pytest.raises(ConfigError, match="is not valid YAML") as e:
        load_config(broken)
    assert len(str(e.value)) < 500
    with pytest.raises(ConfigError) as e:
        from_dict({"z" * 100_000: 1})
    assert len(str(e.value)) < 1500


# ------------------------------------------------------------------------------------------- item 13
def test_model_card_gives_the_machine_as_figures() -> None:
    """Issue 12 item 13: the model card describes the training machine by figures (cores, load average),
    nothing about who else used it."""
    card = (ROOT / "checkpoints" / "README.md").read_text(encoding="utf-8")
    hardware = next(line for line in card.splitlines() if line.startswith("| hardware |"))
    assert "vCPU" in hardware and "load average" in hardware
    for word in ("engineer", "other people", "colleague", "jobs running"):
        assert word not in card.lower()
