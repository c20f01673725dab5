"""smear_env.play.choices: which agents may sit at a table with given rules, compared by meaning."""

from __future__ import annotations

import pytest

from smear_env.core.config import SmearRules
from smear_env.play import choices


@pytest.fixture
def trained(monkeypatch):
    """Make every checkpoint spec read as trained on the rules dict the test sets."""
    recorded: dict = {}
    monkeypatch.setattr(choices, "_trained_rules", lambda path: (recorded, None))
    monkeypatch.setattr(choices, "is_checkpoint", lambda spec: True)
    monkeypatch.setattr(choices, "_checkpoint_path", lambda spec: spec)
    return recorded


def test_a_checkpoint_recorded_before_an_option_existed_plays_that_options_default(trained):
    trained.update(SmearRules().to_dict())
    del trained["cap_defenders"]  # recorded by a version that predates the option
    assert choices.why_not("old.safetensors", SmearRules()) is None
    why = choices.why_not("old.safetensors", SmearRules(cap_defenders=True))
    assert why is not None and "defenders' score capped at the target: yes (trained on: no)" in why


def test_a_checkpoint_with_a_rule_option_this_version_does_not_know_is_not_offered(trained):
    trained.update({**SmearRules().to_dict(), "future_option": "x"})
    why = choices.why_not("new.safetensors", SmearRules())
    assert why is not None and "future option: unknown (trained on: x)" in why
