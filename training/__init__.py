"""Training stack for smear-rl (the only package that imports torch).

* :mod:`training.configs` -- the typed configs below everything else here (what a section is made of, each
  algorithm's ``algorithm:`` keys, the algorithm registry); :mod:`training.config` -- the run config built
  on them (one docstring per field);
  :mod:`training.config_files`
  -- YAML files with a ``default:`` block and named variants, ``--set``, one-line errors, the JSON Schema;
* :mod:`training.train` -- the ``smear-train`` CLI; :mod:`training.loop` -- the training loop;
  :mod:`training.run_folder` -- run folders (checkpoints, TensorBoard, resume, the safety checks);
* :mod:`training.pipeline` and :mod:`training.stages` -- a config's stages (training, expert iteration, the
  win model, the advantage correction, evaluation) run into one run folder;
* :mod:`training.algorithms` -- ``ppo`` (native PyTorch PPO on the engine, all learner seats' experience),
  ``maskable_ppo`` (sb3-contrib MaskablePPO on the single-seat Gymnasium view), ``imitation`` (optional
  behaviour-cloning warm start);
* :mod:`training.selfplay` -- the opponent pool; :mod:`training.policy` -- the masked MLP policy;
* :mod:`training.checkpoint` -- safetensors checkpoints and ``load_agent(path, rules)``;
* :mod:`training.evaluation` -- fast batched duplicate evaluation used during training.
"""
