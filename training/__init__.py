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
* :mod:`training.algorithms` -- the trainers, one module each: ``vector_ppo`` (PPO on the batched table),
  ``ppo`` (PPO on the table layer), ``dmc`` and ``dmc_ray`` (Deep Monte-Carlo, locally or on Ray),
  ``maskable_ppo`` (sb3-contrib MaskablePPO on the single-seat Gymnasium view), ``rllib_ppo`` (RLlib PPO),
  ``imitation`` (the behaviour-cloning warm start);
* :mod:`training.selfplay` -- the opponent pool; :mod:`training.policy` -- the masked MLP policy;
* :mod:`training.checkpoint` -- safetensors checkpoints (atomic writes, loading a policy's state);
* :mod:`training.evaluation` -- batched evaluation of the learner during training;
* :mod:`training.collect` and :mod:`training.fit` -- the one batched collector and the one supervised
  fitter of the stages (:mod:`training.expert_iteration`, :mod:`training.winprob`, :mod:`training.advantage`,
  :mod:`training.distill`);
* :mod:`training.exploit` -- ``smear-exploit``; :mod:`training.distributed` -- local or Ray worker pools.
"""
