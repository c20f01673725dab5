"""``smear-train``: train a Smear agent from a config file.

    smear-train --config configs/quickstart.yaml                 # run folder runs/quickstart
    smear-train --config configs/default.yaml --set total_timesteps=2_000_000 --set algorithm.ent_coef=0.02
    smear-train --config configs/default.yaml --variant small    # a named variant of the file
    smear-train --run-dir runs/default --resume                  # continue a stopped run
    smear-train --help-config                                    # every config field, default and doc
    smear-train --schema > smear-train.schema.json               # the JSON Schema of config files
    smear-train --config configs/default.yaml --variant r90 --run-dir runs/r90   # a pipeline of stages

A config file with ``stages:`` is a pipeline (:mod:`training.pipeline`): its stages run in order into
``RUN/stages/NN-id/``; running it again continues it (the stages done are kept), ``--from-stage`` and
``--until-stage`` run a part. A config without ``stages:`` trains one run (:mod:`training.loop`) in the run
folder itself (:mod:`training.run_folder`). ``--resume`` continues from the newest readable checkpoint with
the run's ``config.yaml`` (``--set`` may still override fields, e.g. a larger total_timesteps); the run
folder is changed only once the checkpoint has loaded, so a failed resume leaves it as it was. Agent specs in
a config that run programs (``cmd:``) need ``--allow-commands``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path

from .config import ConfigError, help_text, load_config
from .loop import error, interrupt_signals, train
from .run_folder import check_commands, check_run_paths, check_writable, old_run_files


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="smear-train", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Config files: YAML with a 'default:' block plus optional named "
                                        "variants. See --help-config.")
    ap.add_argument("--config", help="config file (YAML with a 'default:' block)")
    ap.add_argument("--variant", help="named variant of the config file, merged over its 'default' block")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                    help="override a config field (dotted key, YAML value), e.g. --set algorithm.n_epochs=8")
    ap.add_argument("--run-dir", help="run folder (default runs/<config file name>)")
    ap.add_argument("--resume", action="store_true",
                    help="continue the run in --run-dir from its latest checkpoint")
    ap.add_argument("--overwrite", action="store_true",
                    help="start afresh in a --run-dir that already holds a run (its checkpoints and logs are "
                         "deleted)")
    ap.add_argument("--allow-commands", action="store_true",
                    help="let the config file's 'cmd:' agent specs (opponents, teacher, evaluation "
                         "opponents) run their programs; without it such a config is refused (a config file "
                         "is data: allow programs only from a config you trust). A spec typed in --set needs "
                         "no flag")
    ap.add_argument("--help-config", action="store_true",
                    help="print every config field with its doc and exit")
    ap.add_argument("--schema", action="store_true",
                    help="print the JSON Schema of config files (for editors: docs/training.md) and exit")
    ap.add_argument("--from-stage", metavar="ID", help="pipeline: start at this stage (those before it done)")
    ap.add_argument("--until-stage", metavar="ID", help="pipeline: stop after this stage")
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.help_config or args.schema:
        from .config import schema
        from .stages import stage_configs

        stages = stage_configs()
        print(help_text(stages) if args.help_config else json.dumps(schema(stages), indent=1))
        return 0
    prog = os.path.basename(sys.argv[0])
    prog = "python -m training.train" if prog in ("train.py", "__main__.py", "") else prog
    command = " ".join([prog, *map(shlex.quote, sys.argv[1:] if argv is None else argv)])
    try:
        with interrupt_signals():
            return _main(ap, args, command)
    except KeyboardInterrupt:  # Ctrl-C / SIGTERM before training started (after: train() saves and returns)
        print("smear-train: interrupted before training started: nothing to save", file=sys.stderr)
        return 130


def _main(ap: argparse.ArgumentParser, args: argparse.Namespace, command: str) -> int:
    from smear_env.agents.checkpoint import CheckpointError
    from smear_env.agents.registry import CommandNotAllowed

    from .pipeline import PIPELINE_FILE, check_run_dir, load_data, run_pipeline

    if args.resume and args.overwrite:
        ap.error("--resume continues a run and --overwrite starts it afresh: give one of them")
    name = Path(args.config or ".").stem + (f"-{args.variant}" if args.variant and not args.resume else "")
    run_dir = Path(args.run_dir) if args.run_dir else Path("runs") / name
    try:
        data = None
        if args.resume and args.run_dir and (run_dir / PIPELINE_FILE).is_file():
            data = load_data(run_dir / PIPELINE_FILE, None, args.overrides)
        elif args.config and not args.resume:
            data = load_data(args.config, args.variant, args.overrides)
            data = data if data.get("stages") is not None else None
            if data is not None:
                check_run_dir(run_dir, args.overwrite)
        if data is not None:  # a pipeline
            check_writable(run_dir)
            check_commands(data, args.allow_commands, args.overrides)
            return run_pipeline(data, run_dir, command, args.from_stage, args.until_stage)
        if args.from_stage or args.until_stage:
            ap.error("--from-stage and --until-stage are for a config with stages:")
        if args.resume:
            if not args.run_dir and not args.config:
                ap.error("--resume needs --run-dir (or --config, whose default run folder is used)")
            if not (run_dir / "config.yaml").is_file():
                raise ConfigError(f"--resume: {str(run_dir / 'config.yaml')!r} not found; is "
                                  f"{str(run_dir)!r} a run folder?")
            cfg = load_config(run_dir / "config.yaml", args.overrides)
            check_run_paths(cfg, run_dir, None)
        else:
            if not args.config:
                ap.error("--config is required (or --resume --run-dir DIR, or --help-config)")
            cfg = load_config(args.config, args.overrides, args.variant)
            check_run_paths(cfg, run_dir, args.config)
            if any((run_dir / "checkpoints").glob("*.safetensors")) and not args.overwrite:
                raise ConfigError(f"run folder {str(run_dir)!r} already holds checkpoints: continue it with "
                                  "--resume, start it afresh with --overwrite, or pick another --run-dir")
            if args.overwrite:  # a folder that is not a run's is refused now; train() deletes once all fits
                old_run_files(run_dir)
        check_commands(cfg, args.allow_commands, args.overrides)
        check_writable(run_dir)
    except (ConfigError, CheckpointError, CommandNotAllowed, OSError) as e:
        return error(e)
    try:
        return train(cfg, run_dir, resume=args.resume, command=command,
                     overwrite=bool(args.overwrite and not args.resume))
    except (ConfigError, CheckpointError, OSError) as e:
        return error(e, status=1 if isinstance(e, OSError) else 2)


if __name__ == "__main__":
    sys.exit(main())
