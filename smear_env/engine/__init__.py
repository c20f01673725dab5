"""The game engines over the core: the single game (``Game``), the batched engine
(``VectorGame``) and its lane helpers, what a player may know (``PlayerView``), the observation
encoder and game records."""
