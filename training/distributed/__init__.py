"""Stages past one machine: a worker pool over local processes or Ray (:mod:`.pool`, settings
:mod:`.settings`), the deterministic stages' shard functions (:mod:`.shards`); DMC's actors and learner on
Ray live in :mod:`training.algorithms.dmc_ray`."""
