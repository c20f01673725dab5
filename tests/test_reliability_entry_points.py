"""Issue 50 (reliability of the entry points), the command-line side: run folders a killed write cannot
litter (item 7), one-line errors instead of tracebacks (item 8), smear-exploit's output folder, pimc's
option bounds and the illegal-move penalty of ``env()`` (item 9), consent before a config or a web form runs
a program (item 10), and the terminal game's ``quit`` between hands (issue 55).

Each test names the item it keeps fixed and failed before its fix.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from smear_env.agents.registry import CommandNotAllowed, check_commands_allowed, make_agent
from smear_env.core.config import SmearRules
from tests.run_helpers import TINY

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


def _one_line_error(err: str, prog: str) -> str:
    """The ``prog: error: ...`` line of ``err`` (argparse may print its usage first); no traceback."""
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.startswith(f"{prog}: error:")]
    assert len(lines) == 1, err
    return lines[0]


# ------------------------------------------------------------------------------------------- item 7
KILL_SCRIPT = """
import sys, numpy as np
from training.checkpoint import save_tensors
big = {"w": np.zeros(12_000_000, np.float32)}
print("ready", flush=True)
while True:
    save_tensors(sys.argv[1], big, {"step": 1})
"""


def test_item7_a_killed_checkpoint_write_leaves_only_the_projects_own_temporary_file(tmp_path: Path) -> None:
    """Issue 50 item 7: `kill -9` while checkpoints are being written leaves at most the project's own
    `<name>.<random>.tmp` (safetensors' `save_file` left its `.tmpXXXXXX`, 126 MB each, that nothing
    removed), and that file is what `clean_temporary_files` removes."""
    from training.checkpoint import is_temporary_file
    from training.run_folder import clean_temporary_files

    ckpt = tmp_path / "run" / "checkpoints"
    ckpt.mkdir(parents=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for delay in (0.3, 0.7, 1.1):
        proc = subprocess.Popen([PY, "-c", KILL_SCRIPT, str(ckpt / "latest.safetensors")], env=env,
                                stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            time.sleep(delay)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        left = sorted(p.name for p in ckpt.iterdir() if p.name != "latest.safetensors")
        assert not [n for n in left if n.startswith(".tmp")], left  # none of safetensors' own
        assert all(n.startswith("latest.safetensors.") and is_temporary_file(n) for n in left), left
        clean_temporary_files(tmp_path / "run")
        assert [p.name for p in ckpt.iterdir()] in ([], ["latest.safetensors"])


def test_item7_save_tensors_does_not_write_through_safetensors_own_temporary_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 50 item 7, deterministic: the checkpoint bytes go straight into the project's temporary file;
    safetensors' file writer (whose temporary file a kill leaves behind) is not used."""
    import safetensors.numpy
    from safetensors import safe_open

    from training.checkpoint import save_tensors

    class Killed(Exception):
        pass

    def killed(*args: object, **kwargs: object) -> None:
        raise Killed("killed inside safetensors' own writer")

    monkeypatch.setattr(safetensors.numpy, "save_file", killed)
    save_tensors(tmp_path / "x.safetensors", {"policy.w": np.arange(6, dtype=np.float32)}, {"step": 3})
    with safe_open(str(tmp_path / "x.safetensors"), framework="np") as f:
        assert json.loads(f.metadata()["smear"]) == {"step": 3}
        assert f.get_tensor("policy.w").tolist() == list(range(6))
    assert [p.name for p in tmp_path.iterdir()] == ["x.safetensors"]


def test_item7_overwrite_accepts_and_removes_leftover_temporary_files(tmp_path: Path) -> None:
    """Issue 50 item 7: a run folder holding the leftovers of killed writes (safetensors' `.tmpXXXXXX`,
    the project's `<name>.<random>.tmp` in checkpoints/ and next to train.log / win_rate.png) is not
    refused by --overwrite ("holds files smear-train did not write"); they are removed; a file smear-train
    never writes is still refused."""
    from training.config import ConfigError
    from training.run_folder import old_run_files
    from training.train import main

    run = tmp_path / "run"
    ckpt = run / "checkpoints"
    ckpt.mkdir(parents=True)
    stale = [ckpt / ".tmpAb12Cd", ckpt / "step_100.safetensors.k9x8j7ab.tmp",
             run / "win_rate.png.q1w2e3r4.tmp", run / "train.log.a1b2c3d4.tmp"]
    for p in stale:
        p.write_bytes(b"partial")
    assert set(stale) <= set(old_run_files(run))
    assert main([*TINY, "--set", "total_timesteps=100", "--set", "eval.opponents=[]", "--run-dir", str(run),
                 "--overwrite"]) == 0
    assert not any(p.exists() for p in stale)
    assert (ckpt / "latest.safetensors").is_file()
    (ckpt / "notes.tmp").write_text("mine")  # not a name smear-train writes
    with pytest.raises(ConfigError, match="did not write"):
        old_run_files(run)


def test_item7_resume_removes_safetensors_leftovers_too(tmp_path: Path) -> None:
    """Issue 50 item 7: what --resume cleans at start (clean_temporary_files) takes in safetensors'
    `.tmpXXXXXX` and the project's temporary files, and nothing else."""
    from training.run_folder import clean_temporary_files

    run = tmp_path / "run"
    ckpt = run / "checkpoints"
    ckpt.mkdir(parents=True)
    stale = [ckpt / ".tmpZZ9yy8", ckpt / "latest.safetensors.abcdefgh.tmp", run / "config.yaml.x7y6z5w4.tmp"]
    keep = [ckpt / "latest.safetensors", ckpt / "notes.tmp", ckpt / ".tmpfolder_name_too_long",
            run / "mine.txt", run / "other.json.abcd1234.tmp"]
    for p in stale + keep:
        p.write_bytes(b"x")
    assert sorted(clean_temporary_files(run)) == sorted(stale)
    assert all(p.exists() for p in keep) and not any(p.exists() for p in stale)


# ------------------------------------------------------------------------------------------- item 8
BOT_CONFIG = """
default:
  total_timesteps: 2_000
  time_limit: null
  n_envs: 8
  algorithm: {name: ppo, n_steps: 32, batch_size: 128, n_epochs: 1}
  network: {hidden_sizes: [8], shared_trunk: false, suit_canonical: false}
  selfplay:
    opponents: {"SPEC": 1.0}
  imitation: {teacher: null, batched: false}
  eval: {games: 2, opponents: []}
  output: {checkpoint_interval: 1_000, progress: false, tensorboard: false}
"""


def _bot_config(tmp_path: Path, spec: str) -> Path:
    cfg = tmp_path / "bot.yaml"
    cfg.write_text(BOT_CONFIG.replace("SPEC", spec.replace('"', '\\"')), encoding="utf-8")
    return cfg


def test_item8_a_bot_that_fails_at_trainer_start_is_one_line(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture) -> None:
    """Issue 50 item 8: a `cmd:` opponent that dies before reading its first message fails while the
    trainer is being built (it starts its first games), not only in the training loop: the race between
    the bot's exit and the first `start_game` write decided which. Both ways: one line, status 1."""
    from training.train import main

    cfg = _bot_config(tmp_path, "cmd:false")
    for i in range(3):
        assert main(["--config", str(cfg), "--run-dir", str(tmp_path / f"r{i}"), "--allow-commands"]) == 1
        line = _one_line_error(capsys.readouterr().err, "smear-train")
        assert "bot 'cmd:false'" in line and "exited" in line


def test_item8_a_bot_target_that_fails_is_one_line_in_smear_exploit(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture) -> None:
    """Issue 50 item 8 (the same race in smear-exploit): a `cmd:` target that dies at once was a BotError
    traceback from the trainer's first games."""
    from training.exploit import main

    assert main(["cmd:false", "--decisions", "10", "--out", str(tmp_path / "o")]) == 1
    line = _one_line_error(capsys.readouterr().err, "smear-exploit")
    assert "the target failed: bot 'cmd:false'" in line


def test_item8_smear_eval_bounds_are_one_line(capsys: pytest.CaptureFixture) -> None:
    """Issue 50 item 8: --games 10**20 (OverflowError), --max-hands 10**12 (a ValueError from the engine)
    and a seed past 2**64 are argparse errors naming the bound."""
    from smear_env.evaluation.cli import main

    for argv, text in ((["--games", "100000000000000000000"], "--games must be an even number from 2 to"),
                       (["--max-hands", "1000000000000"], "--max-hands must be from 1 to 16,777,215"),
                       (["--seed", str(2**64)], "--seed must be an integer 0 <= seed < 2**64"),
                       (["--workers", "100000"], "--workers must be from 1 to")):
        with pytest.raises(SystemExit) as exc:
            main(["random", "random", *argv])
        assert exc.value.code == 2
        assert text in _one_line_error(capsys.readouterr().err, "smear-eval")


@pytest.mark.parametrize("pause", ["-1", "nan", "inf", "1e9", "soon"])
def test_item8_smear_play_pause_is_checked_by_argparse(pause: str, capsys: pytest.CaptureFixture,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 50 item 8: `--pause -1` / `nan` failed at the first agent move (ValueError from time.sleep)."""
    from smear_env.play import cli
    from smear_env.play.cli import main

    def no_sleep(seconds: float) -> None:  # pragma: no cover - the game must not start
        raise AssertionError(f"slept {seconds}")

    monkeypatch.setattr(cli.time, "sleep", no_sleep)

    def no_input(prompt: str) -> str:  # pragma: no cover - the game must not start
        raise AssertionError("the game started")

    with pytest.raises(SystemExit) as exc:
        main([f"--pause={pause}", "--opponents", "random", "--partner", "random", "--no-record"],
             read_line=no_input)
    assert exc.value.code == 2
    assert "--pause" in _one_line_error(capsys.readouterr().err, "smear-play")


def test_item8_smear_play_record_is_checked_before_the_game(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture) -> None:
    """Issue 50 item 8: `--record /nonexistent/x.json` is refused before the game starts (it failed at save
    time, and the finished game was lost)."""
    from smear_env.play.cli import main

    def no_input(prompt: str) -> str:  # pragma: no cover - the game must not start
        raise AssertionError("the game started")

    for path, why in ((tmp_path / "missing" / "x.json", "does not exist"), (tmp_path, "is a folder")):
        with pytest.raises(SystemExit) as exc:
            main(["--record", str(path), "--opponents", "random", "--partner", "random"], read_line=no_input)
        assert exc.value.code == 2
        assert why in _one_line_error(capsys.readouterr().err, "smear-play")


def test_item8_a_save_that_fails_at_the_end_keeps_the_game_elsewhere(
        tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 50 item 8: when saving still fails at the end (the folder went away during the game), the
    record is written to the temporary folder and the message says where."""
    from smear_env.engine.record import load_records
    from smear_env.play.cli import main

    folder = tmp_path / "games"
    folder.mkdir()
    spare = tmp_path / "spare"
    spare.mkdir()
    monkeypatch.setenv("TMPDIR", str(spare))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)

    def quit_after_removing(prompt: str) -> str:
        folder.rmdir()
        return "quit"

    assert main(["--record", str(folder / "g.json"), "--opponents", "random", "--partner", "random",
                 "--seed", "1", "--hint", "random"], read_line=quit_after_removing) == 0
    out = " ".join(capsys.readouterr().out.split())
    saved = list(spare.glob("smear-game-*.json"))
    assert len(saved) == 1 and "Could not save the game to" in out
    assert str(saved[0]) in out.replace(" ", "") or saved[0].name in out
    assert load_records(saved[0])[0]["seed"] == 1


def test_issue55_quit_between_hands_quits(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """Issue 55: `quit` at "Press Enter for the next hand (or 'quit')" dealt the next hand."""
    from smear_env.play.cli import main

    prompts: list[str] = []

    def person(prompt: str) -> str:
        prompts.append(prompt)
        if prompt.startswith("Press Enter"):
            return "quit"
        return "1"  # the first legal move

    assert main(["--opponents", "random", "--partner", "random", "--seed", "2", "--hint", "random",
                 "--max-hands", "3", "--record", str(tmp_path / "g.json")], read_line=person) == 0
    assert prompts[-1].startswith("Press Enter"), prompts[-3:]
    assert sum(p.startswith("Press Enter") for p in prompts) == 1


def test_item8_exploit_plot_takes_a_one_pair_interval() -> None:
    """Issue 50 item 8: with 2 evaluation games (one duplicate pair) the margin interval is [None, None];
    the plot drew it and crashed (TypeError) after training, losing the summary."""
    from training.exploit import plot_curve

    point = {"decisions": 0, "win_rate": 0.0, "win_rate_ci95": [0.0, 0.658], "margin_per_hand": -3.9,
             "margin_per_hand_ci95": [None, None], "games": 2}
    result = {"curve": [point, dict(point, decisions=8000, margin_per_hand=-2.1)], "train_seconds": 3.0,
              "target": "heuristic"}
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        out = plot_curve(result, Path(d) / "curve.png")
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_item8_train_plot_skips_missing_intervals(tmp_path: Path) -> None:
    """Issue 50 item 8 (the same in smear-train's plot): an evaluation entry whose interval or win rate is
    null is drawn as a point or skipped, not a TypeError."""
    from training.plot import plot_run, read_curves

    log = tmp_path / "train.log"
    rows = [{"step": 0, "eval": {"opponent": "random", "win_rate": 0.5, "ci95": [None, None]}},
            {"step": 10, "eval": {"opponent": "random", "win_rate": None, "ci95": None}},
            {"step": 20, "eval": {"opponent": "random", "win_rate": 0.75, "ci95": [0.5, 0.9]}}]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert read_curves(log) == {"random": [(0, 0.5, 0.5, 0.5), (20, 0.75, 0.5, 0.9)]}
    assert plot_run(tmp_path).is_file()


# ------------------------------------------------------------------------------------------- item 9
def test_item8_exploit_game_counts_have_an_upper_bound(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Issue 50 item 8 (as smear-eval --games): `smear-exploit --eval-games 10**20` is one line before
    anything runs (it was an OverflowError traceback at the first evaluation)."""
    from training.exploit import main

    for opt in ("--eval-games", "--final-games"):
        assert main(["heuristic", "--decisions", "10", opt, "100000000000000000000", "--out",
                     str(tmp_path / "o")]) == 2
        line = _one_line_error(capsys.readouterr().err, "smear-exploit")
        assert f"{opt} must be at most 10,000,000" in line
    assert not (tmp_path / "o").exists()


def test_item9_exploit_refuses_an_earlier_run_unless_overwrite(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture) -> None:
    """Issue 50 item 9: `smear-exploit --out DIR` silently replaced an earlier run in DIR."""
    from training.exploit import check_out_folder, main

    out = tmp_path / "br"
    out.mkdir()
    (out / "curve.json").write_text("{}")
    assert main(["heuristic", "--decisions", "10", "--out", str(out)]) == 2
    line = _one_line_error(capsys.readouterr().err, "smear-exploit")
    assert "already holds a smear-exploit run" in line and "--overwrite" in line
    assert (out / "curve.json").read_text() == "{}"
    check_out_folder(out, overwrite=True)  # allowed with --overwrite
    check_out_folder(tmp_path / "new", overwrite=False)


@pytest.mark.parametrize("spec, text", [
    ("pimc:samples=1000000000", "samples must be an integer from 1 to 10,000"),
    ("pimc:bid_samples=99999999", "bid_samples must be an integer from 1 to 10,000"),
    ("pimc:trump_samples=10001", "trump_samples must be an integer from 1 to 10,000"),
    ("pimc:trump_candidates=5", "trump_candidates must be an integer from 0 to 4"),
    ("pimc:node_cap=1000000000000", "node_cap must be an integer from 1 to 100,000,000"),
    ("pimc:budget_ms=1e12", "budget_ms must be a number > 0 and <= 3,600,000"),
    ("pimc:samples=" + "9" * 5000, "the value of option 'samples' is 5,000 characters long (at most 4096)"),
])
def test_item9_pimc_options_have_upper_bounds(spec: str, text: str) -> None:
    """Issue 50 item 9: `pimc:samples` (and the other counts) had no upper bound: a typo was a search that
    never ends. The message names the option and the range, and stays short."""
    with pytest.raises(ValueError) as exc:
        make_agent(spec)
    assert text in str(exc.value) and len(str(exc.value)) < 300
    make_agent("pimc:samples=10000,trump_candidates=4,budget_ms=3600000")  # the bounds themselves are fine


def _illegal_game(after: int, seed: int) -> tuple[str, dict[str, float]]:
    """Play ``after`` random legal moves in ``env(reward="score")``, then an illegal one; the offender and
    every agent's final reward."""
    from smear_env import smear_v0

    e = smear_v0.env(reward="score")
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    n, offender, final = 0, "", {}
    for agent in e.agent_iter(max_iter=2000):
        obs, r, term, trunc, _ = e.last()
        if term or trunc:
            final[agent] = r
            e.step(None)
            continue
        mask = obs["action_mask"]
        if n == after:
            offender = agent
            action = int(np.flatnonzero(mask == 0)[0])
        else:
            action = int(rng.choice(np.flatnonzero(mask)))
        n += 1
        e.step(action)
    return offender, final


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("after, seed", [(0, 0), (5, 1), (21, 2), (40, 3)])
def test_item9_illegal_move_penalty_is_shared_by_partners(after: int, seed: int) -> None:
    """Issue 50 item 9: with env()'s illegal-move wrapper the offender got -1 and its partner 0, while
    partners always share a reward: now both get -1, the other team 0 (PettingZoo's classic envs give 0
    to the player that did not offend)."""
    from smear_env.envs.aec import AGENTS

    offender, final = _illegal_game(after, seed)
    i = AGENTS.index(offender)
    partner, others = AGENTS[(i + 2) % 4], [AGENTS[(i + 1) % 4], AGENTS[(i + 3) % 4]]
    assert final[offender] == final[partner] == -1.0
    assert final[others[0]] == final[others[1]]


# ------------------------------------------------------------------------------------------- item 10
def test_item10_a_config_does_not_run_programs_without_consent(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture) -> None:
    """Issue 50 item 10: a config naming `cmd:touch FILE` ran it as soon as training started. Without
    --allow-commands: refused with one line naming the spec and the flag; nothing runs, no run folder."""
    from training.train import main

    marker = tmp_path / "ran"
    cfg = _bot_config(tmp_path, f"cmd:touch {marker}")
    run = tmp_path / "run"
    assert main(["--config", str(cfg), "--run-dir", str(run)]) == 2
    line = _one_line_error(capsys.readouterr().err, "smear-train")
    assert "cmd:touch" in line and "--allow-commands" in line and "selfplay.opponents" in line
    time.sleep(0.2)
    assert not marker.exists() and not run.exists()
    # an evaluation opponent or a teacher from the file is refused the same way
    text = BOT_CONFIG.replace('"SPEC"', "random")
    for old, new in (("opponents: []", f'opponents: ["cmd:touch {marker}"]'),
                     ("teacher: null", f'teacher: "cmd:touch {marker}"')):
        cfg.write_text(text.replace(old, new), encoding="utf-8")
        code = main(["--config", str(cfg), "--run-dir", str(run)])
        err = capsys.readouterr().err
        assert code == 2 and "--allow-commands" in _one_line_error(err, "smear-train"), err
    time.sleep(0.2)
    assert not marker.exists() and not run.exists()


def test_item10_a_spec_typed_in_set_is_consent(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Issue 50 item 10: a `cmd:` spec the user types in `--set` on the command line needs no flag (as in
    smear-eval); the same spec from the file does."""
    from training.config import load_config
    from training.run_folder import check_commands

    cfg = load_config(_bot_config(tmp_path, "cmd:false"))
    with pytest.raises(CommandNotAllowed):
        check_commands(cfg, False, ["total_timesteps=10"])
    check_commands(cfg, False, ["selfplay.opponents={cmd:false: 1.0}"])
    check_commands(cfg, True, [])


def test_item10_registry_refuses_untrusted_command_specs(tmp_path: Path) -> None:
    """Issue 50 item 10: the one check (registry) refuses a `cmd:` spec from an untrusted origin before any
    program starts, naming the spec and how to allow it; other specs pass."""
    marker = tmp_path / "ran"
    with pytest.raises(CommandNotAllowed, match="cmd:touch") as exc:
        make_agent(f"cmd:touch {marker}", allow_commands=False)
    assert isinstance(exc.value, ValueError)
    with pytest.raises(CommandNotAllowed, match="--allow-commands"):
        check_commands_allowed(["random", f" cmd[timeout=3]:touch {marker}"], False, "config key 'x'")
    check_commands_allowed(["random", "heuristic", None], False)
    check_commands_allowed([f"cmd:touch {marker}"], True)
    assert make_agent("random", allow_commands=False).name == "random"
    time.sleep(0.2)
    assert not marker.exists()


def test_item10_web_server_runs_only_the_programs_it_was_given(tmp_path: Path) -> None:
    """Issue 50 item 10: the web server builds a `cmd:` agent only for a spec given on its command line
    (--agent); a spec reaching its resolver any other way is refused before a program starts."""
    from smear_env.play.web import Server

    marker = tmp_path / "ran"
    server = Server(["random", f"cmd:{PY} {ROOT / 'examples' / 'random_bot.py'}"])
    with pytest.raises(CommandNotAllowed):
        server.make_agent(f"cmd:touch {marker}", SmearRules())
    bot = server.make_agent(f"cmd:{PY} {ROOT / 'examples' / 'random_bot.py'}", SmearRules())
    bot.close()
    time.sleep(0.2)
    assert not marker.exists()
