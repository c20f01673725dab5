"""One meaning per name (issue 52): renamed names keep a deprecated alias; one check for every seed."""

from __future__ import annotations

import argparse
import importlib

import numpy as np
import pytest

from smear_env.agents.registry import parse_agent_options
from smear_env.core.rules import playable
from smear_env.core.seeding import SeedError, check_seed
from smear_env.engine.game import playable_led_card
from smear_env.engine.lane_deals import lane_deal
from smear_env.engine.vector import VectorGame
from smear_env.envs.aec import parse_env_options
from smear_env.evaluation.pairs import DealSequence
from smear_env.gym.vector_env import SmearVectorEnv
from smear_env.tables.arguments import check_run_arguments


@pytest.mark.parametrize(("module", "old", "new"), [
    ("smear_env.agents.registry", "parse_options", parse_agent_options),
    ("smear_env.envs.aec", "parse_options", parse_env_options),
    ("smear_env.engine.game", "playable", playable_led_card),
])
def test_a_renamed_public_name_is_a_deprecated_alias(module, old, new):
    mod = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=f"{module}.{old} is deprecated; use {new.__name__}"):
        assert getattr(mod, old) is new
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        mod.no_such_name  # noqa: B018


def test_playable_takes_the_led_suit_and_playable_led_card_the_led_card():
    hand = 0b1111 | 1 << 8 | 1 << 24  # clubs 7-T, 7 of diamonds, 7 of spades
    led_card = 8 + 5  # a diamond
    assert playable_led_card(hand, led_card, 3, False) == playable(hand, led_card >> 3, 3, False)
    assert playable_led_card(hand, led_card, 3, False) == (1 << 8) | (1 << 24)


@pytest.mark.parametrize("seed", [-1, 2**64, 1.5, True, "3", np.bool_(True)])
def test_every_seed_entry_refuses_the_same_seeds_with_one_error(seed):
    """The engine, its deals, the batched table's vector env, the duplicate deal sequences and the public
    entries all check seeds with smear_env.core.seeding.check_seed: a SeedError (a TypeError and a
    ValueError)."""
    entries = [lambda: check_seed(seed), lambda: check_seed(seed, allow_none=False),
               lambda: VectorGame(1, seed=seed), lambda: lane_deal(seed, 0, 0, 0),
               lambda: DealSequence(seed, 0), lambda: SmearVectorEnv(1, seed=seed)]
    for entry in entries:
        with pytest.raises(SeedError, match=r"seed must be an integer 0 <= seed < 2\*\*64"):
            entry()
    assert issubclass(SeedError, TypeError) and issubclass(SeedError, ValueError)


def test_none_is_a_seed_only_where_allowed():
    assert check_seed(None) is None and check_seed(np.uint64(2**64 - 1)) == 2**64 - 1
    with pytest.raises(SeedError, match=r"seed must be an integer 0 <= seed < 2\*\*64; got None"):
        check_seed(None, allow_none=False)
    with pytest.raises(SeedError, match="pair must be"):
        DealSequence(0, -1)


@pytest.mark.parametrize(("argv", "message"), [
    (["--seed", str(2**64)], "--seed must be an integer 0 <= seed < 2**64, not"),
    (["--seed", "-1"], "--seed must be an integer 0 <= seed < 2**64, not"),
    (["--max-hands", "0"], "--max-hands must be from 1 to 16,777,215, not 0"),
])
def test_check_run_arguments_is_one_usage_line(argv, message, capsys):
    ap = argparse.ArgumentParser(prog="x")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--max-hands", type=int, default=200)
    with pytest.raises(SystemExit) as e:
        check_run_arguments(ap.parse_args(argv), ap)
    assert e.value.code == 2 and message in capsys.readouterr().err
    check_run_arguments(ap.parse_args(["--seed", str(2**64 - 1)]), ap)  # the largest seed passes
