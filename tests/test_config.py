"""Rule options (RULES.md table): defaults, every allowed value, clear errors for bad ones."""

from __future__ import annotations

import dataclasses

import pytest

from smear_env.core.config import RuleOptionError, SmearRules

ALLOWED = {
    "kitty_size": [0, 1, 2, 3],
    "target_score": [1, 2, 15, 21, 100],
    "high_low": ["ace_seven", "in_play"],
    "game_point_tie": ["nobody", "bidder"],
    "all_pass": ["redeal", "dealer_must_bid"],
    "win_requires_bid": [False, True],
    "cap_defenders": [False, True],
}

BAD = [
    ("kitty_size", 4, "0, 1, 2, 3"),
    ("kitty_size", -1, "0, 1, 2, 3"),
    ("kitty_size", True, "0, 1, 2, 3"),  # bool is not an int here
    ("kitty_size", 3.0, "0, 1, 2, 3"),
    ("kitty_size", "3", "0, 1, 2, 3"),
    ("target_score", 0, "an integer from 1 to 1048576"),
    ("target_score", -15, "an integer from 1 to 1048576"),
    ("target_score", True, "an integer from 1 to 1048576"),
    ("target_score", 15.0, "an integer from 1 to 1048576"),
    ("target_score", "15", "an integer from 1 to 1048576"),
    ("high_low", "ace-seven", "'ace_seven', 'in_play'"),
    ("high_low", None, "'ace_seven', 'in_play'"),
    ("game_point_tie", "dealer", "'nobody', 'bidder'"),
    ("game_point_tie", 0, "'nobody', 'bidder'"),
    ("all_pass", "stuck", "'redeal', 'dealer_must_bid'"),
    ("win_requires_bid", 1, "True, False"),
    ("win_requires_bid", "true", "True, False"),
    ("win_requires_bid", None, "True, False"),
    ("cap_defenders", 0, "True, False"),
    ("cap_defenders", "no", "True, False"),
]


def test_defaults_match_the_options_table() -> None:
    assert SmearRules().to_dict() == {
        "kitty_size": 3, "target_score": 15, "high_low": "ace_seven", "game_point_tie": "nobody",
        "all_pass": "redeal", "win_requires_bid": False, "cap_defenders": False,
    }
    assert SmearRules.option_names() == tuple(ALLOWED)


@pytest.mark.parametrize(("name", "value"), [(n, v) for n, vs in ALLOWED.items() for v in vs])
def test_every_allowed_option_value_is_accepted(name: str, value: object) -> None:
    rules = SmearRules(**{name: value})
    assert getattr(rules, name) == value
    assert SmearRules.from_dict(rules.to_dict()) == rules


@pytest.mark.parametrize(("name", "value", "allowed"), BAD)
def test_bad_option_value_names_option_and_allowed_values(name: str, value: object, allowed: str) -> None:
    with pytest.raises(RuleOptionError) as e:
        SmearRules(**{name: value})
    msg = str(e.value)
    assert f"{name}={value!r}" in msg
    assert allowed in msg
    with pytest.raises(RuleOptionError):
        SmearRules.from_dict({name: value})


def test_rule_option_error_is_a_value_error() -> None:
    assert issubclass(RuleOptionError, ValueError)


def test_unknown_option_is_named_with_the_valid_ones() -> None:
    with pytest.raises(RuleOptionError, match=r"unknown rule option 'kitty'; valid options: kitty_size, "):
        SmearRules.from_dict({"kitty": 2})


def test_rules_are_frozen_and_hashable() -> None:
    r = SmearRules(kitty_size=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.kitty_size = 2  # type: ignore[misc]
    assert hash(r) == hash(SmearRules(kitty_size=1))
    assert r != SmearRules()
