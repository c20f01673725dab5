"""The lowest layer: cards, action ids, rule options (``SmearRules``), the rule functions on card
bitmasks, the game phases, seeding and JSON safety. Imports nothing else of smear_env."""
