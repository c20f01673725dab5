"""Issue 20 (reliability), files and training side: failures during training keep the progress (item 7),
outputs never destroy inputs and writes are atomic (8), --overwrite checks before it deletes (9), the run
folder never overwrites the user's config (10), a full disk is one line (11), config upper bounds and file
parsing (16), and the small ones: tournaments with a repeated player, a closed stdout, SIGTERM at start-up.
Plus issue 25's quickstart: a decision budget, the same checkpoint tensors from the same seed.

Each test names the issue item it keeps fixed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from smear_env.agents.checkpoint import read_checkpoint
from smear_env.evaluation.cli import main as eval_main
from tests.run_helpers import QUICK, TINY, copy_run, folder_state, make_finished_run
from training.config import MAX_ROLLOUT, ConfigError, TrainConfig, from_dict, help_text, load_config
from training.config_files import bound_text
from training.train import main

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_finished_run(tmp_path_factory, "files")


@pytest.fixture
def run_copy(finished_run: Path, tmp_path: Path) -> Path:
    return copy_run(finished_run, tmp_path)


def _bot(tmp_path: Path, fail_after: int) -> str:
    """A cmd: bot that plays its first legal action, then exits with an error after ``fail_after`` answers."""
    path = tmp_path / "bot.py"
    path.write_text(textwrap.dedent(f"""
        import json, sys
        n = 0
        for line in sys.stdin:
            m = json.loads(line)
            if m["type"] != "act":
                continue
            n += 1
            if n > {fail_after}:
                sys.exit("bot broke down")
            print(json.dumps({{"action": m["view"]["legal_actions"][0]["id"]}}), flush=True)
    """))
    return f"cmd[timeout=5]:{PY} {path}"


# ------------------------------------------------------------------------------------------- item 7
def test_item7_failing_cmd_opponent_saves_progress_and_exits_with_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Issue 20 item 7: a `cmd:` opponent that dies mid-training: the progress is saved (as Ctrl-C does),
    the exit is one `smear-train: error:` line naming the bot (status 1, no traceback), and --resume works."""
    bot = _bot(tmp_path, fail_after=40)
    run = tmp_path / "run"
    rc = main([*TINY, "--set", "total_timesteps=100000", "--set", "eval.opponents=[]",
               "--set", f"selfplay.opponents={{self: 1, '{bot}': 1}}", "--run-dir", str(run)])
    err = capsys.readouterr().err
    assert rc == 1 and "Traceback" not in err
    line = [ln for ln in err.splitlines() if ln.startswith("smear-train: error:")]
    assert len(line) == 1 and "an agent failed" in line[0] and "bot broke down" in err
    assert "the progress is saved in" in line[0] and "--resume" in line[0]
    meta = read_checkpoint(run / "checkpoints" / "latest.safetensors")[1]
    assert 0 < meta["step"] < 100000
    assert main(["--run-dir", str(run), "--resume", "--set", "total_timesteps=1",
                 "--set", "selfplay.opponents={self: 1}", "--allow-commands"]) == 0


def test_item7_failing_teacher_bot_and_eval_bot_are_one_line(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture) -> None:
    """Issue 20 item 7: a `cmd:` teacher that dies during the warm start is one line (nothing to save: the
    warm start is not resumable), and an evaluation bot that dies is a one-line warning, the run goes on."""
    bot = _bot(tmp_path, fail_after=0)
    assert main([*TINY, "--set", f"imitation.teacher={bot}", "--run-dir", str(tmp_path / "a")]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "smear-train: error: the imitation warm start failed: an agent" in err
    assert "bot broke down; no checkpoint saved" in err
    assert main([*TINY, "--set", f"eval.opponents=[random, '{bot}']", "--run-dir", str(tmp_path / "b")]) == 0
    err = capsys.readouterr().err
    warning = [ln for ln in err.splitlines() if ln.startswith("warning: evaluation against")]
    assert len(warning) == 1 and "bot broke down" in warning[0] and "Traceback" not in err


def test_item7_any_exception_during_training_saves_and_keeps_the_traceback_in_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """Issue 20 item 7: an unexpected exception from an agent or the trainer after some updates saves the
    progress since the last checkpoint (the step reached, not the last checkpoint's), prints one line, and
    keeps the traceback in <run>/error.log."""
    from training.algorithms.ppo import PPOTrainer

    real = PPOTrainer.iterate
    calls = {"n": 0}

    def flaky(self: PPOTrainer) -> dict:
        calls["n"] += 1
        if calls["n"] == 3:
            raise ValueError("agent exploded")
        return real(self)

    monkeypatch.setattr(PPOTrainer, "iterate", flaky)
    run = tmp_path / "run"
    rc = main([*TINY, "--set", "total_timesteps=100000", "--set", "output.checkpoint_interval=100000",
               "--set", "eval.opponents=[]", "--run-dir", str(run)])
    err = capsys.readouterr().err
    assert rc == 1 and "Traceback" not in err
    assert "training stopped at step" in err and "ValueError: agent exploded" in err
    step = read_checkpoint(run / "checkpoints" / "latest.safetensors")[1]["step"]
    assert step > 0 and (run / "checkpoints" / f"step_{step}.safetensors").is_file()
    logged = (run / "error.log").read_text()
    assert "agent exploded" in logged and "Traceback" in logged


# ------------------------------------------------------------------------------------------- item 8
def test_item8_records_onto_the_evaluated_checkpoint_is_refused_and_leaves_it_intact(
        finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Issue 20 item 8: `smear-eval X.safetensors random --records X.safetensors` (or a link to X) is
    refused before anything is written; X keeps its bytes."""
    ckpt = tmp_path / "X.safetensors"
    shutil.copy(finished_run / "checkpoints" / "latest.safetensors", ckpt)
    before = ckpt.read_bytes()
    link = tmp_path / "link.safetensors"
    link.symlink_to(ckpt.name)
    hard = tmp_path / "hard.jsonl"
    os.link(ckpt, hard)
    for target in (ckpt, link, hard):
        with pytest.raises(SystemExit) as e:
            eval_main([str(ckpt), "random", "--games", "2", "--target-score", "5", "--records", str(target)])
        assert e.value.code == 2
        err = capsys.readouterr().err
        assert "is the checkpoint or program of agent" in err and "Traceback" not in err
        assert ckpt.read_bytes() == before
    assert read_checkpoint(ckpt)[1]["step"] > 0


def test_item8_records_onto_a_bot_program_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Issue 20 item 8 (beyond the list): `--records bot.py` for the bot `cmd:python bot.py` would replace
    the bot's own script; it is refused and the script keeps its bytes."""
    script = tmp_path / "bot.py"
    shutil.copy(ROOT / "examples" / "random_bot.py", script)
    before = script.read_bytes()
    with pytest.raises(SystemExit):
        eval_main([f"cmd:{PY} {script}", "random", "--games", "2", "--records", str(script)])
    assert "is the checkpoint or program of agent" in capsys.readouterr().err
    assert script.read_bytes() == before


def test_item9_resume_with_overwrite_is_refused(run_copy: Path, capsys: pytest.CaptureFixture) -> None:
    """Issue 20 item 9 (beyond the list): `--resume --overwrite` (contradictory) is a usage error that
    changes nothing."""
    before = folder_state(run_copy)
    with pytest.raises(SystemExit):
        main(["--run-dir", str(run_copy), "--resume", "--overwrite"])
    assert "give one of them" in capsys.readouterr().err and folder_state(run_copy) == before


def test_item8_records_go_to_a_temporary_file_that_replaces_the_old_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """Issue 20 item 8: while a match runs, an existing --records file keeps its old content (the games go
    to a temporary file in the same folder); at the end it is replaced whole."""
    from smear_env.evaluation import cli

    out = tmp_path / "games.jsonl"
    out.write_text("old\n")
    seen = []
    real = cli.run_match

    def spy(*args: object, **kwargs: object) -> object:
        rec = kwargs["records"]

        def records(r: dict) -> None:
            seen.append((out.read_text(), sorted(p.name for p in tmp_path.glob("games.jsonl.*.tmp"))))
            rec(r)

        kwargs["records"] = records
        return real(*args, **kwargs)

    monkeypatch.setattr(cli, "run_match", spy)
    args = ["heuristic", "random", "--games", "2", "--target-score", "5", "--records", str(out)]
    assert eval_main(args) == 0
    capsys.readouterr()
    assert len(seen) == 2 and all(text == "old\n" and len(tmps) == 1 for text, tmps in seen)
    lines = out.read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[0])["format"].startswith("smear-record")
    assert not list(tmp_path.glob("*.tmp"))


def test_item8_plot_refuses_its_input_as_output(finished_run: Path, tmp_path: Path) -> None:
    """Issue 20 item 8: `python -m training.plot RUN --out RUN/train.log` is refused; the log keeps its
    bytes. The plot itself is written atomically (no .tmp left)."""
    from training.plot import main as plot_main

    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    log = run / "train.log"
    before = log.read_bytes()
    assert plot_main([str(run), "--out", str(log)]) == 2
    assert log.read_bytes() == before
    assert plot_main([str(run)]) == 0 and (run / "win_rate.png").read_bytes()[:4] == b"\x89PNG"
    assert not list(run.glob("*.tmp"))


# ------------------------------------------------------------------------------------------- item 9
def test_item9_overwrite_with_a_config_that_fails_leaves_the_old_run(
        run_copy: Path, capsys: pytest.CaptureFixture) -> None:
    """Issue 20 item 9: `--overwrite` with an init_from whose network does not fit (found only when the
    trainer is built) exits 2 and the old run's checkpoints, train.log and TensorBoard logs are all there."""
    before = folder_state(run_copy)
    assert main([*TINY, "--set", "init_from=default", "--run-dir", str(run_copy), "--overwrite"]) == 2
    err = capsys.readouterr().err
    assert "config key 'init_from'" in err and "Traceback" not in err
    assert folder_state(run_copy) == before
    # and a valid --overwrite then does replace the run
    assert main([*TINY, "--set", "total_timesteps=100", "--set", "eval.opponents=[]", "--run-dir",
                 str(run_copy), "--overwrite"]) == 0
    assert read_checkpoint(run_copy / "checkpoints" / "latest.safetensors")[1]["step"] < 300
    assert not (run_copy / "train.log").exists() or "eval" not in (run_copy / "train.log").read_text()


def test_item9_overwrite_refuses_a_folder_that_is_not_a_run(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture) -> None:
    """Issue 20 item 9 (found beyond the list): `--run-dir . --overwrite` in the repository would have
    deleted its checkpoints/ of shipped agents; a checkpoints/ holding files smear-train did not write is
    refused and nothing is deleted."""
    run = tmp_path / "repo"
    (run / "checkpoints").mkdir(parents=True)
    (run / "checkpoints" / "smear_v0_default.safetensors").write_bytes(b"shipped")
    (run / "checkpoints" / "README.md").write_text("model card")
    before = folder_state(run)
    assert main([*TINY, "--run-dir", str(run), "--overwrite"]) == 2
    assert "holds files smear-train did not write" in capsys.readouterr().err
    assert folder_state(run) == before


def test_item9_an_input_inside_the_run_checkpoints_is_refused(run_copy: Path,
                                                             capsys: pytest.CaptureFixture) -> None:
    """Issue 20 item 9: `init_from` (or a checkpoint opponent) that lies in the checkpoints the run rotates
    and --overwrite deletes is refused before anything changes."""
    before = folder_state(run_copy)
    latest = run_copy / "checkpoints" / "latest.safetensors"
    for key in ("init_from", "selfplay.opponents"):
        value = str(latest) if key == "init_from" else f"{{self: 1, '{latest}': 1}}"
        assert main([*TINY, "--set", f"{key}={value}", "--run-dir", str(run_copy), "--overwrite"]) == 2
        assert "lies in the run folder's checkpoints/" in capsys.readouterr().err
    assert folder_state(run_copy) == before


# ------------------------------------------------------------------------------------------- item 10
def test_item10_config_file_in_the_run_folder_is_never_overwritten(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture) -> None:
    """Issue 20 item 10: `--config DIR/config.yaml --run-dir DIR` with a hand-written config (variants,
    comments) is refused with a message and the file is unchanged; a config file under another name in the
    same folder is fine (config.yaml gets the resolved config)."""
    run = tmp_path / "exp"
    run.mkdir()
    mine = run / "config.yaml"
    text = "# my experiment\n" + (ROOT / "configs" / "quickstart.yaml").read_text()
    mine.write_text(text)
    args = ["--variant", "tiny", "--set", "rules.target_score=5", "--set", "total_timesteps=100",
            "--set", "eval.opponents=[]"]
    assert main(["--config", str(mine), *args, "--run-dir", str(run)]) == 2
    err = capsys.readouterr().err
    assert "is the run folder's config.yaml" in err and "variants and comments would be lost" in err
    assert mine.read_text() == text and not (run / "checkpoints").exists()
    other = run / "experiment.yaml"
    mine.rename(other)
    assert main(["--config", str(other), *args, "--run-dir", str(run)]) == 0
    assert other.read_text() == text and load_config(run / "config.yaml").total_timesteps == 100


def test_item10_symlinked_run_files_are_not_written_through(run_copy: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture) -> None:
    """Issue 20 item 10 (beyond the list): a run folder whose command.txt or train.log is a link to another
    file (a run folder from elsewhere) is refused, so --resume cannot append to (or replace) that file."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (run_copy / "command.txt").unlink()
    (run_copy / "command.txt").symlink_to(victim)
    assert main(["--run-dir", str(run_copy), "--resume"]) == 2
    assert "is a symbolic link" in capsys.readouterr().err
    assert victim.read_text() == "precious\n"


# ------------------------------------------------------------------------------------------- item 11
@pytest.mark.parametrize("how", ["safetensors", "oserror"])
def test_item11_full_disk_is_one_line_and_earlier_checkpoints_survive(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, how: str) -> None:
    """Issue 20 item 11: a full disk while saving (safetensors raises SafetensorError, not OSError; or
    an OSError ENOSPC) is one `smear-train: error:` line naming the reason (status 1, no traceback); the
    earlier checkpoints are intact and no temporary file is left."""
    import errno

    from safetensors import SafetensorError

    from training import checkpoint

    real = checkpoint.write_bytes
    calls = {"n": 0}

    def writer(filename: str, data: bytes) -> None:
        calls["n"] += 1
        if calls["n"] > 2:  # step_100 and latest are written; then the disk is full
            Path(filename).write_bytes(b"partial")
            if how == "safetensors":
                raise SafetensorError("Error while serializing: I/O error: No space left on device "
                                      "(os error 28)")
            raise OSError(errno.ENOSPC, "No space left on device")
        real(filename, data)

    monkeypatch.setattr(checkpoint, "write_bytes", writer)
    run = tmp_path / "run"
    assert main([*TINY, "--set", "eval.opponents=[]", "--run-dir", str(run)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("smear-train: error:") == 1
    assert "No space left on device" in err and "the last checkpoint saved is" in err
    ckpt = run / "checkpoints"
    assert not list(ckpt.glob("*.tmp"))
    first = sorted(ckpt.glob("step_*.safetensors"))  # the first save, before the disk filled up
    assert len(first) == 1 and str(first[0]) in err
    step = read_checkpoint(first[0])[1]["step"]
    assert 0 < step < 300 and read_checkpoint(ckpt / "latest.safetensors")[1]["step"] == step


# ------------------------------------------------------------------------------------------- item 16
@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"n_envs": 10**9}, "'n_envs': expected an integer from 1 to 16384, got 1000000000"),
        ({"network": {"hidden_sizes": [64, 10**8]}},
         "'network.hidden_sizes[1]': expected an integer from 1 to 4096, got 100000000"),
        ({"network": {"hidden_sizes": [8] * 9}}, "'network.hidden_sizes': expected 1 to 8 items"),
        ({"network": {"hidden_sizes": []}}, "'network.hidden_sizes': expected 1 to 8 items"),
        ({"algorithm": {"n_steps": 10**9}}, "'algorithm.n_steps': expected an integer from 1 to 100000"),
        ({"algorithm": {"n_steps": 100_000}, "n_envs": 64},
         "one rollout of 100000 x 64 = 6,400,000 decisions"),
        ({"torch_threads": 100000}, "'torch_threads': expected an integer from 1 to 256"),
        ({"algorithm": {"batch_size": 10**7}}, "'algorithm.batch_size': expected an integer from 1 to 2621"),
        ({"imitation": {"batch_size": 10**7}}, "'imitation.batch_size': expected an integer from 1 to 2621"),
        ({"imitation": {"decisions": 10**9}},
         "'imitation.decisions': expected an integer from 1 to 5_000_000"),
        ({"imitation": {"workers": 10**5}}, "'imitation.workers': expected an integer from 1 to 256"),
        ({"eval": {"games": 10**8}}, "'eval.games': expected an integer from 1 to 100000"),
        ({"selfplay": {"pool_size": 10**6}}, "'selfplay.pool_size': expected an integer from 1 to 1000"),
        ({"total_timesteps": 10**13}, "'total_timesteps': expected an integer from 1 to 1_000_000_000_000"),
        ({"env": {"max_cycles": 10**9}}, "'env.max_cycles': expected an integer from 1 to 1_000_000"),
        ({"ray": {"num_env_runners": 10**6}}, "'ray.num_env_runners': expected an integer from 0 to 1024"),
        ({"time_limit": 1e300}, "'time_limit': expected a number > 0 and <= 10_000_000 or null"),
        ({"selfplay": {"opponents": {"self": 1e308, "random": 1e308}}},
         "'selfplay.opponents.self': expected a number from 0 to 1_000_000, got 1e+308"),
        ({"selfplay": {"opponents": {"self": float("nan")}}}, "'selfplay.opponents.self': expected a finite"),
        ({"env": {"score_scale": "1e400"}}, "'env.score_scale': expected a finite number, got inf"),
        ({"env": {"win_bonus": float("-inf")}}, "'env.win_bonus': expected a finite number"),
        ({"algorithm": {"target_kl": float("nan")}}, "'algorithm.target_kl': expected a finite number"),
        ({"time_limit": float("nan")}, "'time_limit': expected a finite number"),
    ],
)
def test_item16_config_upper_bounds_and_finite_numbers(data: dict, message: str) -> None:
    """Issue 20 item 16: sizes that would build tables until killed, allocate without end or start 10^5
    threads are config errors naming the key and the allowed range; nan / inf are refused for every number."""
    with pytest.raises(ConfigError) as e:
        from_dict(data)
    assert message in str(e.value)


def test_item16_bounds_come_from_one_table_shown_by_help_config() -> None:
    """Issue 20 item 16: every bound is declared on its field (the models' JSON Schema) and --help-config
    prints each one; the shipped configs are inside them (their rollouts too)."""
    text = help_text()
    for section, info in TrainConfig.model_fields.items():
        cls = info.annotation if hasattr(info.annotation, "model_json_schema") else TrainConfig
        schema = cls.model_json_schema()
        for key, node in schema["properties"].items():
            bounds = bound_text(node, schema.get("$defs", {}))
            if bounds:
                assert f"[{bounds}]" in text, (section, key)
    for name in ("quickstart", "default", "scratch", "rllib_ppo"):
        cfg = load_config(ROOT / "configs" / f"{name}.yaml")
        assert cfg.algorithm.n_steps * cfg.n_envs <= MAX_ROLLOUT


def test_item16_config_from_a_device_or_pipe_is_read_with_a_cap(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture) -> None:
    """Issue 20 item 16: `--config /dev/zero` stops after the size cap with a message (it read until memory
    ran out); a folder is a message too."""
    t0 = time.monotonic()
    assert main(["--config", "/dev/zero", "--run-dir", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert time.monotonic() - t0 < 10 and len(err) < 300
    assert "more than the 1,000,000 allowed bytes" in err
    assert main(["--config", str(tmp_path), "--run-dir", str(tmp_path / "run")]) == 2
    assert "it is a folder" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("default:\n  seed: 1\nsmall: {}\ndefault:\n  seed: 2\n",
         "line 4: duplicate key 'default' (first given at line 1)"),
        ("default:\n  n_envs: 8\n  algorithm: {name: ppo}\n  n_envs: 16\n",
         "line 4: duplicate key 'n_envs' (first given at line 2)"),
        ("default:\n  algorithm:\n    n_epochs: 1\n    n_epochs: 2\n",
         "line 4: duplicate key 'n_epochs' (first given at line 3)"),
        ("default: {seed: 1, seed: 2}\n", "line 1: duplicate key 'seed'"),
    ],
)
def test_item16_duplicate_yaml_keys_are_an_error_naming_key_and_line(tmp_path: Path, text: str,
                                                                    message: str) -> None:
    """Issue 20 item 16: a key given twice in a mapping (two `default:` blocks, a field twice) was merged
    silently (the last one won); now it is an error naming the key and both lines."""
    p = tmp_path / "dup.yaml"
    p.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_config(p)
    assert message in str(e.value) and str(p) in str(e.value)


def test_item16_duplicate_keys_in_a_set_value_are_an_error() -> None:
    """Issue 20 item 16: the same check for `--set` values (flow mappings)."""
    with pytest.raises(ConfigError, match="duplicate key 'self'"):
        load_config(QUICK, ["selfplay.opponents={self: 1, self: 2}"])


def test_damaged_elapsed_time_in_a_checkpoint_does_not_stop_resume(run_copy: Path,
                                                                    capsys: pytest.CaptureFixture) -> None:
    """Issue 20 (beyond the list): a checkpoint whose metadata elapsed_s is not a number (a string, nan)
    resumed with a ValueError traceback; it is only a reported figure, so the run resumes (counting 0 s)."""
    from training.checkpoint import save_tensors

    for p in (run_copy / "checkpoints").glob("*.safetensors"):
        tensors, meta = read_checkpoint(p)
        save_tensors(p, tensors, {**meta, "elapsed_s": "long"})
    assert main(["--run-dir", str(run_copy), "--resume", "--set", "total_timesteps=1"]) == 0
    err = capsys.readouterr().err
    assert "resumed from" in err and "Traceback" not in err
    # NaN is not JSON: the strict metadata reader refuses such a checkpoint, in one line naming why
    for p in (run_copy / "checkpoints").glob("*.safetensors"):
        tensors, meta = read_checkpoint(p)
        save_tensors(p, tensors, {**meta, "elapsed_s": float("nan")})
    assert main(["--run-dir", str(run_copy), "--resume", "--set", "total_timesteps=1"]) != 0
    err = capsys.readouterr().err
    assert "no readable checkpoint" in err and "NaN is not JSON" in err and "Traceback" not in err


# ------------------------------------------------------------------------------------------- small
def test_small_tournament_with_a_repeated_player_is_a_clear_error(capsys: pytest.CaptureFixture) -> None:
    """Issue 20 small: `smear-eval --tournament random random heuristic` (also with spaces around a name)
    says the player is given twice instead of a wrong pairing table."""
    for agents in (["random", "random", "heuristic"], ["random", " random ", "heuristic"]):
        with pytest.raises(SystemExit) as e:
            eval_main(["--tournament", *agents, "--games", "2"])
        assert e.value.code == 2
        err = capsys.readouterr().err
        assert "'random' given more than once" in err and "Traceback" not in err


def test_small_closed_stdout_is_quiet() -> None:
    """Issue 20 small: `smear-eval ... --json | head -1` (the reader gone before the output) ends with
    status 141 and no BrokenPipeError traceback."""
    cmd = [PY, "-m", "smear_env.evaluation.cli", "heuristic", "random", "--games", "2", "--target-score", "5",
           "--json"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, cwd=ROOT)
    assert p.stdout is not None and p.stderr is not None
    p.stdout.close()  # the reader goes away
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 141
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_small_interrupt_during_start_up_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture) -> None:
    """Issue 20 small: Ctrl-C / SIGTERM while smear-train starts up (building the trainer: torch imports,
    opponents) is one line and status 130 (it was a KeyboardInterrupt traceback); nothing is left behind."""
    import training.loop as tt

    def slow(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt("signal 15")

    monkeypatch.setattr(tt, "make_trainer", slow)
    run = tmp_path / "run"
    assert main([*TINY, "--run-dir", str(run)]) == 130
    err = capsys.readouterr().err
    assert err.strip() == "smear-train: interrupted before training started: nothing to save"
    assert not (run / "checkpoints").exists() or not list((run / "checkpoints").iterdir())


def test_small_sigterm_while_smear_train_starts_never_tracebacks(tmp_path: Path) -> None:
    """Issue 20 small: SIGTERM at several moments of smear-train's start-up (imports, config, trainer,
    first updates) ends with status 130 and one line (or -15 before Python runs its code), never a
    KeyboardInterrupt traceback."""
    cmd = [PY, "-m", "training.train", *TINY, "--set", "total_timesteps=1000000", "--run-dir",
           str(tmp_path / "run")]
    for delay in (0.5, 1.5, 3.0):
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV, cwd=ROOT)
        time.sleep(delay)
        p.send_signal(signal.SIGTERM)
        assert p.stderr is not None
        err = p.stderr.read().decode()
        rc = p.wait(timeout=60)
        # -2: seen once in ~8 runs, after the one-line message (an open start-up race: the process ends by
        # SIGINT after main() returned 130); the guarantee tested is one line and no traceback
        assert rc in (130, -15, -2) and "Traceback" not in err, (delay, rc, err)
        if rc in (130, -2):
            assert "smear-train: interrupted before training started" in err or "interrupted: saved" in err


def test_small_interrupt_while_smear_eval_starts_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture) -> None:
    """Issue 20 small: Ctrl-C / SIGTERM while smear-eval checks its agents is one line, status 130."""
    import smear_env.evaluation.cli as eval_cli

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt("signal 15")

    monkeypatch.setattr(eval_cli, "make_agent", interrupted)
    assert eval_main(["heuristic", "random", "--games", "2"]) == 130
    assert capsys.readouterr().err.strip() == "smear-eval: interrupted"


def test_small_sigterm_during_a_match_keeps_the_records(tmp_path: Path) -> None:
    """Issue 20 small: `kill` (SIGTERM) of smear-eval during a match (with --workers 2) ends like Ctrl-C:
    status 130, one line, and the finished games in --records (it was killed with nothing kept)."""
    out = tmp_path / "games.jsonl"
    cmd = [PY, "-m", "smear_env.evaluation.cli", "heuristic", "random", "--games", "20000", "--workers", "2",
           "--records", str(out)]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV, cwd=ROOT)
    deadline = time.monotonic() + 60
    while not (out.exists() or list(tmp_path.glob("games.jsonl.*.tmp"))) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)
    p.send_signal(signal.SIGTERM)
    assert p.stderr is not None
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 130, err
    assert "Traceback" not in err and "smear-eval: interrupted;" in err
    n = int(err.split("interrupted; ")[1].split()[0])
    assert len(out.read_text().splitlines()) == n and not list(tmp_path.glob("*.tmp"))


# ------------------------------------------------------------------------------------------- issue 25
def test_issue25_quickstart_budget_is_decisions_not_seconds() -> None:
    """Issue 25: the quickstart stops at a number of learner decisions (no time_limit), with a fixed
    torch thread count, so its result does not depend on the machine's speed."""
    cfg = load_config(QUICK)
    assert cfg.time_limit is None and cfg.torch_threads == 1
    assert 1_300_000 <= cfg.total_timesteps <= 1_700_000


def test_issue25_same_seed_same_checkpoint_tensors(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Issue 25: two runs of the quickstart recipe (warm start + vector_ppo, budgets cut down) with the same
    seed give byte-identical tensors and metadata but for the measured elapsed_s."""
    small = ["--config", QUICK, "--set", "total_timesteps=10000", "--set", "imitation.decisions=5000",
             "--set", "eval.opponents=[]", "--set", "output.progress=false",
             "--set", "output.tensorboard=false"]
    got = []
    for name in ("a", "b"):
        assert main([*small, "--run-dir", str(tmp_path / name)]) == 0
        got.append(read_checkpoint(tmp_path / name / "checkpoints" / "latest.safetensors"))
    capsys.readouterr()
    (ta, ma), (tb, mb) = got
    assert sorted(ta) == sorted(tb) and all(ta[k].tobytes() == tb[k].tobytes() for k in ta)
    ma.pop("elapsed_s")
    mb.pop("elapsed_s")
    assert json.dumps(ma, sort_keys=True) == json.dumps(mb, sort_keys=True)
