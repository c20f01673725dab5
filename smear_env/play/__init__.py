"""People at the table: ``smear-play`` (terminal, :mod:`smear_env.play.cli`), ``smear-serve`` (web table and
replay viewer, :mod:`smear_env.play.web`), and the game loop they share (:mod:`smear_env.play.session`).
Every seat is shown only its own view, :mod:`smear_env.engine.seat_view`."""
