"""Training pipelines (issue 51): stages registered like algorithms, run into one run folder with their
inputs and outputs recorded; configs/default.yaml's r90 variant is `make default-90`'s chain of commands."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from training.config import ConfigError, from_dict, load_config, to_dict
from training.config_files import safe_load_bounded
from training.pipeline import load_data, plan, stages_of

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "configs" / "default.yaml"

# What each later stage of the r90 pipeline hands the library (R: the run folder): `make default-90`'s chain
# of commands as it was (expert iteration, the win model, two advantage rounds, an evaluation), its paths in
# RUN/stages/NN-id/, every option its command line left at the default written out.
def r90_calls(r: Path, tiny: bool = False) -> dict[str, tuple[tuple, dict]]:
    """Stage id -> (positional arguments, keyword arguments) of its library call; ``tiny``: with TINY's
    overrides."""
    st = r / "stages"
    trained = str(st / "01-train/checkpoints/latest.safetensors")
    exit_final = str(st / "02-expert_iteration/final.safetensors")
    wp = str(st / "03-winprob/winprob.safetensors")
    return {
        "expert_iteration": ((trained, st / "02-expert_iteration"), {
            "rounds": 2 if tiny else 4, "games": 2 if tiny else 400, "workers": 1 if tiny else 2,
            "seed": 96601,
            "opponent": "heuristic", "samples": 2 if tiny else 32, "phases": "trump+discard+play",
            "search_options": "", "epochs": 3, "lr": 3e-4, "batch": 1024, "window": 2, "changed_weight": 1.0,
            "min_gain": None, "ray_address": None, "resume": False}),
        "winprob": ((exit_final, st / "03-winprob/winprob.safetensors"), {
            "opponent": "heuristic", "games": 300 if tiny else 20000, "hidden": [32, 32],
            "steps": 30 if tiny else 6000, "seed": 93006, "shards": 2, "workers": 1 if tiny else 2}),
        "advantage_random": ((exit_final, st / "04-advantage_random"), {
            "opponent": "random", "more_values": [], "winprob": wp, "positions": 40 if tiny else 250_000,
            "share": {}, "workers": 1 if tiny else 2, "epochs": 5, "lr": 3e-4, "batch": 1024, "margin": 0.04,
            "max_logit_gap": 3.0, "score_range": "fitted", "steps": ["values"], "seed": 96302,
            "ray_address": None, "resume": False}),
        "advantage": ((exit_final, st / "05-advantage"), {
            "opponent": "heuristic", "more_values": [str(st / "04-advantage_random")], "winprob": wp,
            "positions": 60 if tiny else 1_000_000, "share": {}, "workers": 1 if tiny else 2,
            "epochs": 1 if tiny else 5, "lr": 3e-4, "batch": 1024, "margin": 0.04, "max_logit_gap": None,
            "score_range": "fitted", "steps": ["values", "fit"], "seed": 96202,
            "ray_address": None, "resume": False}),
        "evaluate": (([str(st / "05-advantage/final.safetensors"), "heuristic", "--games",
                       "4" if tiny else "2000", "--workers", "1" if tiny else "2", "--json"],), {}),
    }


# The chain's first command trained configs/default.yaml's default block with variant r90 merged, as it was.
R90_STAGE1 = {
    "total_timesteps": 24_000_000, "time_limit": None, "n_envs": 256, "seed": 12,
    "algorithm": {"name": "vector_ppo", "learning_rate": 3.0e-4, "anneal_lr": True, "n_steps": 32,
                  "batch_size": 2048, "n_epochs": 3, "gamma": 1.0, "gae_lambda": 0.95, "clip_range": 0.2,
                  "ent_coef": 0.003, "ent_coef_final": 0.0005, "overlap": True},
    "network": {"hidden_sizes": [256, 256], "activation": "relu", "shared_trunk": True,
                "suit_canonical": True},
    "env": {"episode": "hand", "reward": "score", "score_scale": 0.25},
    "selfplay": {"opponents": {"self": 0.3, "snapshot": 0.2, "heuristic": 0.4, "random": 0.1},
                 "snapshot_interval": 500_000, "pool_size": 10},
    "imitation": {"teacher": "heuristic", "decisions": 600_000, "epochs": 2, "batched": True},
    "eval": {"interval": 4_000_000, "games": 200, "opponents": ["random", "heuristic"]},
    "output": {"checkpoint_interval": 2_000_000, "keep_checkpoints": 0},
}


def test_r90_stages_get_exactly_the_arguments_of_the_makefile_chain(tmp_path, monkeypatch):
    """Each stage of the r90 pipeline calls the library with what `make default-90`'s command for it had
    (only the paths moved into RUN/stages/NN-id/), and its training stage trains the config the chain's
    smear-train line trained."""
    import training.loop
    import training.stages.evaluate
    from training import advantage, expert_iteration, winprob
    from training.pipeline import run_pipeline

    stages = stages_of(load_data(DEFAULT, "r90", []))
    assert [s.kind for s in stages] == ["train", "expert_iteration", "winprob", "advantage", "advantage",
                                        "evaluate"]
    calls: dict[str, tuple[tuple, dict]] = {}

    def fake(writes):
        def call(*args, **kwargs):
            paths = writes(*args, **kwargs)
            calls[paths[0].parent.name[3:]] = (args, kwargs)  # by stage id
            for path in paths:
                path.write_text("output")
            return paths[0]
        return call

    def trains(cfg, folder, **kw):
        calls["train"] = ((cfg,), {})
        (folder / "checkpoints").mkdir(parents=True)
        (folder / "checkpoints/latest.safetensors").write_text("weights")
        return 0

    def evaluates(argv):
        calls["evaluate"] = ((argv,), {})
        print(json.dumps({"summary": {"games": 2000}}))
        return 0

    monkeypatch.setattr(training.loop, "train", trains)
    monkeypatch.setattr(expert_iteration, "run_rounds", fake(lambda i, run, **k: [run / "final.safetensors"]))
    monkeypatch.setattr(winprob, "fit_file", fake(lambda team, out, **k: [out]))
    monkeypatch.setattr(advantage, "run_round", fake(lambda init, run, steps, **k: [
        run / "round.json", *([run / "final.safetensors"] if "fit" in steps else [])]))
    monkeypatch.setattr(training.stages.evaluate, "smear_eval", evaluates)
    assert run_pipeline(load_data(DEFAULT, "r90", []), tmp_path, "test") == 0
    assert calls.pop("train") == ((from_dict(R90_STAGE1),), {})
    assert calls == r90_calls(tmp_path)


def test_config_errors_of_a_pipeline_are_one_line_naming_the_key(tmp_path):
    cases = [
        ({"stages": {"trian": {}}}, "unknown config key 'stages.trian'; did you mean 'stages.train'?"),
        ({"stages": {"x": {"kind": "winprb"}}}, "'stages.x.kind': 'winprb' is not one of 'train', "),
        ({"stages": {"winprob": {"gmaes": 3}}}, "unknown config key 'stages.winprob.gmaes'; did you mean "
                                                 "'stages.winprob.games'?"),
        ({"stages": {"winprob": {"games": 0}}}, "'stages.winprob.games': expected an integer from 1 to"),
        ({"stages": {"evaluate": {}}}, "'stages.evaluate.agent': no stage before 'evaluate' writes a policy"),
        ({"stages": {"train": {}, "advantage": {"more_values": ["train"]}}},
         "'stages.advantage.more_values': stage 'train' writes no values before stage 'advantage'"),
        ({"stages": {"train": {"algorithm": {"n_epoch": 2}}}}, "stages.train: unknown config key "
                                                               "'algorithm.n_epoch'"),
        ({"stages": {}}, "config key 'stages': expected a mapping of stage id -> section"),
    ]
    for data, message in cases:
        with pytest.raises(ConfigError) as e:
            stages = stages_of(data)
            plan(stages, tmp_path)
        assert message in str(e.value) and "\n" not in str(e.value)


def test_a_single_stage_config_is_todays_run_and_a_pipeline_trains_its_top_level_keys():
    quick = load_data(ROOT / "configs" / "quickstart.yaml", None, [])
    assert "stages" not in quick
    stages = stages_of(load_data(DEFAULT, None, []))
    assert stages[0].cfg == load_config(DEFAULT)  # the top-level keys: the training stage's


def test_every_config_file_validates_against_the_schema(capsys):
    """`smear-train --schema` is the JSON Schema that every file in configs/ (every variant) validates
    against, and it catches what validation catches."""
    jsonschema = pytest.importorskip("jsonschema")
    from training.train import main

    assert main(["--schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    validator = jsonschema.Draft202012Validator(schema)
    files = sorted((ROOT / "configs").glob("*.yaml"))
    assert len(files) >= 5
    for path in files:
        doc = safe_load_bounded(path.read_text())
        errors = list(validator.iter_errors(doc))
        assert not errors, (path.name, errors[0].message)
    for bad in ({"default": {"n_envs": 0}}, {"default": {"algorithm": {"learning_rte": 1}}},
                {"default": {"stages": {"winprob": {"games": "many"}}}}, {"small": {}}):
        assert list(validator.iter_errors(bad)), bad


def test_a_run_folder_of_another_layout_is_refused(tmp_path, capsys):
    from training.train import main

    run = tmp_path / "r90"
    (run / "stage1" / "checkpoints").mkdir(parents=True)
    assert main(["--config", str(DEFAULT), "--variant", "r90", "--run-dir", str(run)]) == 2
    err = capsys.readouterr().err
    assert "holds files that are not a pipeline run's (stage1)" in err and len(err.splitlines()) == 1


TINY = ["n_envs=8", "total_timesteps=512", "algorithm.n_steps=32", "algorithm.batch_size=128",
        "network.hidden_sizes=[16]", "imitation.decisions=2000", "eval.opponents=[]", "output.progress=false",
        "output.tensorboard=false", "output.checkpoint_interval=256", "selfplay.snapshot_interval=256",
        "stages.expert_iteration.games=2", "stages.expert_iteration.rounds=2",
        "stages.expert_iteration.workers=1", "stages.expert_iteration.samples=2", "stages.winprob.games=300",
        "stages.winprob.steps=30", "stages.winprob.workers=1", "stages.advantage_random.positions=40",
        "stages.advantage_random.workers=1",
        "stages.advantage.positions=60", "stages.advantage.workers=1", "stages.advantage.epochs=1",
        "stages.evaluate.games=4", "stages.evaluate.workers=1"]


def _tensors(path: Path) -> dict[str, np.ndarray]:
    from smear_env.agents.checkpoint import read_checkpoint

    return read_checkpoint(path)[0]


def same_tensors(a: Path, b: Path) -> bool:
    """Whether two checkpoints hold the same tensors."""
    ta, tb = _tensors(a), _tensors(b)
    return ta.keys() == tb.keys() and all(np.array_equal(ta[k], tb[k]) for k in ta)


@pytest.mark.slow
def test_tiny_r90_runs_resumes_after_a_kill_and_equals_the_library_called_directly(tmp_path, capsys,
                                                                                     monkeypatch):
    """A tiny-budget r90 runs end to end; interrupted in expert iteration's second round and run again, it
    keeps the training stage and round 1 and ends with the same files; and smear-train on its first stage's
    config then the library's steps called directly with the chain of commands' arguments (r90_calls) write
    the same weights."""
    pytest.importorskip("torch")
    import training.expert_iteration as exit_module
    from training import advantage, winprob
    from training.train import main

    args = ["--config", str(DEFAULT), "--variant", "r90", *(a for s in TINY for a in ("--set", s))]
    full = tmp_path / "full"
    assert main([*args, "--run-dir", str(full)]) == 0, capsys.readouterr().err
    records = {p.parent.name: json.loads(p.read_text()) for p in full.glob("stages/*/stage.json")}
    assert sorted(records) == ["01-train", "02-expert_iteration", "03-winprob", "04-advantage_random",
                               "05-advantage", "06-evaluate"]
    assert all(r["status"] == "done" and r["outputs"] for r in records.values())
    assert json.loads((full / "stages/06-evaluate/result.json").read_text())["games"] == 4
    assert (full / "pipeline.yaml").is_file() and "--variant r90" in (full / "command.txt").read_text()

    # a kill in the middle stage: round 2 of expert iteration never finishes
    killed = tmp_path / "killed"
    calls = {"n": 0}
    real = exit_module.distill

    def dies_in_round_2(*a, **k):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(exit_module, "distill", dies_in_round_2)
    assert main([*args, "--run-dir", str(killed), "--until-stage", "winprob"]) == 130
    assert "interrupted in stage 02-expert_iteration" in capsys.readouterr().err
    monkeypatch.setattr(exit_module, "distill", real)
    assert main(["--resume", "--run-dir", str(killed), "--until-stage", "winprob"]) == 0
    err = capsys.readouterr().err
    assert "01-train (train): done before" in err
    assert "02-expert_iteration (expert_iteration): resuming" in err
    assert calls["n"] == 2  # the rerun kept round 1 (its own distillations are the real ones)
    assert (killed / "stages/03-winprob/winprob.safetensors").is_file()
    assert not (killed / "stages/04-advantage_random").exists()
    assert main(["--resume", "--run-dir", str(killed), "--from-stage", "advantage_random"]) == 0
    for name in ("01-train/checkpoints/latest.safetensors", "02-expert_iteration/final.safetensors",
                 "03-winprob/winprob.safetensors", "05-advantage/final.safetensors"):
        assert same_tensors(full / "stages" / name, killed / "stages" / name), name
    # run again: every stage is kept
    assert main(["--resume", "--run-dir", str(killed)]) == 0
    assert capsys.readouterr().err.count("done before") == 6
    # a run folder of the earlier layout: its training stage's record held its config under "args" (read as
    # today's: kept), the other stages' their command-line arguments (refused with what to do)
    for name, args in (("01-train", None), ("02-expert_iteration", ["--init", "x", "--rounds", "2"])):
        rec = json.loads((killed / "stages" / name / "stage.json").read_text())
        rec["args"] = rec.pop("config") if args is None else args
        (killed / "stages" / name / "stage.json").write_text(json.dumps(rec))
    assert main(["--resume", "--run-dir", str(killed)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "02-expert_iteration holds the command-line arguments" in err
    assert "delete those stage folders to run them again, or run with --from-stage a later stage" in err
    assert main(["--resume", "--run-dir", str(killed), "--from-stage", "winprob"]) == 0
    assert capsys.readouterr().err.count("done before") == 4
    assert main(["--resume", "--run-dir", str(killed), "--until-stage", "train"]) == 0
    assert "01-train (train): done before" in capsys.readouterr().err

    # the library called directly with what the chain of commands gave its steps (tiny budgets)
    chain = tmp_path / "chain"
    stage1 = stages_of(load_data(DEFAULT, "r90", TINY))[0].cfg
    chain.mkdir()
    (chain / "stage1.yaml").write_text(json.dumps({"default": to_dict(stage1)}))
    assert main(["--config", str(chain / "stage1.yaml"), "--run-dir", str(chain / "stages/01-train")]) == 0
    calls = r90_calls(chain, tiny=True)
    (chain / "stages/03-winprob").mkdir()
    for sid, step in (("expert_iteration", exit_module.run_rounds), ("winprob", winprob.fit_file),
                      ("advantage_random", advantage.run_round), ("advantage", advantage.run_round)):
        step(*calls[sid][0], **calls[sid][1])
    for name in ("01-train/checkpoints/latest.safetensors", "02-expert_iteration/final.safetensors",
                 "03-winprob/winprob.safetensors", "05-advantage/final.safetensors"):
        assert same_tensors(full / "stages" / name, chain / "stages" / name), name


def test_a_pipeline_keeps_what_is_done_and_redoes_what_changed(tmp_path, capsys):
    """A cheap pipeline (two evaluations): run, run again (kept), change one stage's arguments (that stage
    redone, the other kept), --until-stage, --from-stage with an earlier stage not done, --overwrite."""
    from training.train import main

    cfg = tmp_path / "evals.yaml"
    cfg.write_text("default:\n  stages:\n"
                   "    first: {kind: evaluate, agent: random, opponent: heuristic, games: 2}\n"
                   "    second: {kind: evaluate, agent: heuristic, opponent: random, games: 2}\n")
    run = tmp_path / "run"
    base = ["--config", str(cfg), "--run-dir", str(run)]
    assert main(base) == 0
    first = run / "stages" / "01-first"
    record = json.loads((first / "stage.json").read_text())
    assert record["status"] == "done" and record["config"] == {"agent": "random", "opponent": "heuristic",
                                                               "games": 2, "seed": None, "workers": 1}
    assert record["outputs"]["result"]["path"] == str(first / "result.json")
    capsys.readouterr()
    assert main(base) == 0
    assert capsys.readouterr().err.count("done before with this config and these inputs; kept") == 2
    assert main([*base, "--set", "stages.second.games=4"]) == 0
    err = capsys.readouterr().err
    assert "01-first (evaluate): done before" in err and "02-second (evaluate): running" in err
    assert json.loads((run / "stages/02-second/result.json").read_text())["games"] == 4
    assert (run / "command.txt").read_text().count("\n") == 3
    fresh = tmp_path / "fresh"
    assert main(["--config", str(cfg), "--run-dir", str(fresh), "--until-stage", "first"]) == 0
    assert not (fresh / "stages" / "02-second").exists()
    assert main(["--config", str(cfg), "--run-dir", str(tmp_path / "none"), "--from-stage", "second"]) == 2
    assert "--from-stage 'second': stage 01-first before it is not done" in capsys.readouterr().err
    assert main(["--resume", "--run-dir", str(fresh), "--from-stage", "second"]) == 0
    assert (fresh / "stages" / "02-second" / "result.json").is_file()
    assert main([*base, "--overwrite"]) == 0
    assert "01-first (evaluate): running" in capsys.readouterr().err


def test_stage_records_of_command_line_arguments_are_refused_with_what_to_do(tmp_path, capsys):
    """A pipeline run folder of the earlier layout, whose stage.json recorded a stage's command-line
    arguments: run again, it is refused with one line naming the stages and what to do, before any stage
    runs; with --from-stage past them it takes them as they are; a deleted one runs again."""
    from training.train import main

    cfg = tmp_path / "evals.yaml"
    cfg.write_text("default:\n  stages:\n"
                   "    first: {kind: evaluate, agent: random, opponent: heuristic, games: 2}\n"
                   "    second: {kind: evaluate, agent: heuristic, opponent: random, games: 2}\n")
    run = tmp_path / "run"
    base = ["--config", str(cfg), "--run-dir", str(run)]
    assert main(base) == 0
    record = run / "stages/01-first/stage.json"
    rec = json.loads(record.read_text())
    rec["args"] = ["random", "heuristic", "--games", "2", "--workers", "1"]
    del rec["config"]
    record.write_text(json.dumps(rec))
    capsys.readouterr()
    assert main(base) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "stage(s) 01-first holds the command-line arguments" in err
    assert "delete those stage folders to run them again, or run with --from-stage a later stage" in err
    assert json.loads(record.read_text()) == rec  # nothing ran
    assert main([*base, "--from-stage", "second"]) == 0
    assert "02-second (evaluate): done before" in capsys.readouterr().err
    shutil.rmtree(run / "stages/01-first")
    assert main(base) == 0
    assert "01-first (evaluate): running" in capsys.readouterr().err


def test_the_schema_file_in_configs_is_the_one_smear_train_prints(capsys):
    """configs/schema.json (what the shipped configs' `# yaml-language-server: $schema=schema.json` line
    points editors at) is `smear-train --schema`: regenerate it with
    `smear-train --schema > configs/schema.json` after changing a config field."""
    from training.train import main

    assert main(["--schema"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads((ROOT / "configs" / "schema.json").read_text())
    for path in sorted((ROOT / "configs").glob("*.yaml")):
        assert path.read_text().startswith("# yaml-language-server: $schema=schema.json\n"), path.name


def test_a_failing_stage_stops_the_pipeline_with_one_line(tmp_path, capsys):
    pytest.importorskip("torch")
    from training.train import main

    cfg = tmp_path / "bad.yaml"
    ckpt = ROOT / "checkpoints" / "smear_v0_default.safetensors"
    # a fit step without the values step: its values files are missing
    cfg.write_text(f"default:\n  stages:\n    advantage: {{init: {ckpt}, steps: [fit], workers: 1}}\n"
                   "    evaluate: {games: 2}\n")
    assert main(["--config", str(cfg), "--run-dir", str(tmp_path / "run")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("smear-train: error: stage 01-advantage: FileNotFoundError: ")
    assert "Traceback" not in "\n".join(err) and (tmp_path / "run/stages/01-advantage/error.log").is_file()
    assert not (tmp_path / "run/stages/02-evaluate").exists()


@pytest.mark.parametrize("spec", ["cmd:touch {marker}", "split:bid=cmd:touch {marker},play=heuristic",
                                  "rollout:base=cmd:touch {marker},samples=2"])
def test_a_pipeline_config_that_runs_a_program_needs_allow_commands(tmp_path, capsys, spec):
    """A program named anywhere in a pipeline's stages (an opponent, inside a split or a rollout spec) runs
    only with --allow-commands: without it smear-train stops with one line naming the key, before any stage
    and without starting the program."""
    from training.train import main

    marker = tmp_path / "ran"
    cfg = tmp_path / "p.yaml"
    text = spec.format(marker=marker)
    cfg.write_text(json.dumps({"default": {"stages": {"winprob": {"team": "heuristic", "opponent": text,
                                                                  "games": 4}}}}))
    assert main(["--config", str(cfg), "--run-dir", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "'default.stages.winprob.opponent'" not in err
    assert "config key 'stages.winprob.opponent'" in err and "--allow-commands" in err, err
    assert not marker.exists() and not (tmp_path / "run" / "stages").exists()
