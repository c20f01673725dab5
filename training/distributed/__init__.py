"""Stages past one machine: a worker pool over local processes or Ray (:mod:`.pool`, settings
:mod:`.settings`), mapping the stages' shard functions (``search_shard``, ``values_shard``,
``winprob.collect``); DMC's actors and learner on Ray live in :mod:`training.algorithms.dmc_ray`."""
