"""The multi-agent environment: the PettingZoo AEC env (``aec``, the module ``smear_env.smear_v0``
re-exports) and the framework adapters built on the engine and it (``integrations``: RLlib,
Tianshou, OpenSpiel)."""
