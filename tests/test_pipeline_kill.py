"""`kill -9` in every stage of a pipeline (issue 51): the tiny r90 pipeline run as smear-train processes, each
killed by SIGKILL in the middle of one stage (no handler runs, nothing is flushed or cleaned), then resumed
with ``--resume``; the run ends with the files of a run that was never killed."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_pipeline import DEFAULT, TINY, same_tensors

ROOT = Path(__file__).resolve().parents[1]

# Runs smear-train's main, with one library function replaced by a SIGKILL of the process on its N-th call
# unless the first argument is "-".
KILLER = """\
import importlib, os, signal, sys
if sys.argv[1] != "-":
    module, attr, nth = sys.argv[1], sys.argv[2], int(sys.argv[3])
    owner = importlib.import_module(module)
    *path, name = attr.split(".")
    for part in path:
        owner = getattr(owner, part)
    real, calls = getattr(owner, name), [0]
    def dies(*args, **kwargs):
        calls[0] += 1
        if calls[0] == nth:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)
    setattr(owner, name, dies)
    del sys.argv[1:4]
else:
    del sys.argv[1]
from training.train import main
sys.exit(main(sys.argv[1:]))
"""

# (stage folder, the function whose N-th call is the kill, N, what the resumed stage says it kept)
KILLS = [
    ("01-train", "training.run_folder", "Run.save", 3, "resumed from"),  # step 0 and one interval saved
    ("02-expert_iteration", "training.expert_iteration", "distill", 2, "resuming"),  # round 1 done
    ("03-winprob", "training.winprob", "fit", 1, "resuming"),  # its games played, the fit not begun
    ("04-advantage_random", "training.advantage", "collect_values", 1, "resuming"),
    ("05-advantage", "training.advantage", "fit_correction", 1, "values: kept"),  # values done
    ("06-evaluate", "training.stages.evaluate", "smear_eval", 1, "resuming"),
]


def _run(script: Path, args: list[str], kill: tuple[str, str, int] | None = None
         ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, str(script), *(map(str, kill) if kill else ["-"]), *args]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def _status(run: Path, folder: str) -> str | None:
    path = run / "stages" / folder / "stage.json"
    return json.loads(path.read_text())["status"] if path.is_file() else None


@pytest.mark.slow
def test_kill_9_in_every_stage_then_resume_gives_the_files_of_an_uninterrupted_run(tmp_path):
    """Each stage killed once and resumed. A training stage resumes from its last checkpoint with fresh games
    (games in flight are not saved), so the stages after it are compared with a copy of the run that went on
    from the resumed training stage without a kill."""
    pytest.importorskip("torch")
    script = tmp_path / "killer.py"
    script.write_text(KILLER)
    args = ["--config", str(DEFAULT), "--variant", "r90", *(a for s in TINY for a in ("--set", s))]
    killed, full = tmp_path / "killed", tmp_path / "full"
    for i, (folder, module, attr, nth, said) in enumerate(KILLS):
        again = ["--resume", "--run-dir", str(killed)]
        out = _run(script, [*args, "--run-dir", str(killed)] if i == 0 else again, (module, attr, nth))
        assert out.returncode == -9, (folder, out.returncode, out.stderr[-2000:])
        assert _status(killed, folder) == "started", folder  # killed inside this stage
        later = [f for f, *_ in KILLS[i + 1:] if (killed / "stages" / f).exists()]
        assert not later, (folder, later)
        resumed = _run(script, [*again, "--until-stage", folder[3:]])
        assert resumed.returncode == 0, (folder, resumed.stderr[-2000:])
        text = resumed.stdout + resumed.stderr
        assert said in text, (folder, said, text[-2000:])
        assert _status(killed, folder) == "done", folder
        if i == 0:
            step = re.search(r"resumed from \S+ at step (\d+)", text)
            assert step and 256 <= int(step[1]) < 512, text[-2000:]  # the interval saved before the kill
            shutil.copytree(killed, full)
            rest = _run(script, ["--resume", "--run-dir", str(full)])
            assert rest.returncode == 0, rest.stderr[-2000:]
            assert "01-train (train): done before" in rest.stderr, rest.stderr[-2000:]
    # nothing the kills left is in the way; every stage is kept on a last run
    last = _run(script, ["--resume", "--run-dir", str(killed)])
    assert last.returncode == 0 and last.stderr.count("done before") == len(KILLS), last.stderr[-2000:]
    assert not list(killed.rglob("*.tmp")), list(killed.rglob("*.tmp"))
    for name in ("02-expert_iteration/final.safetensors", "03-winprob/winprob.safetensors",
                 "05-advantage/final.safetensors"):
        assert same_tensors(full / "stages" / name, killed / "stages" / name), name
    results = [json.loads((r / "stages/06-evaluate/result.json").read_text().replace(str(r), "RUN"))
               for r in (killed, full)]
    for r in results:
        r.pop("seconds")
    assert results[0] == results[1]
