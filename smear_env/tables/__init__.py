"""The table layer: the one game loop between the engines and every front end (``Table``,
``Lockstep``, ``BatchedTable``), text rendering and the evaluation statistics."""
