"""Shared fixtures (build a game from a constructed deal and drive it by action names) and the test tiers."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from smear_env.core.actions import action_name, parse_action
from smear_env.core.config import SmearRules
from smear_env.engine.game import Game


def _make_game(
    hands: list[str], stock: str, dealer: int = 3, scores: tuple[int, int] = (0, 0), **options: object
) -> Game:
    """``hands``: four strings of 6 card names (seats 0..3); ``stock``: 8 names, kitty first (R9)."""
    rules = SmearRules.from_dict(dict(options))
    return Game.from_deal([h.split() for h in hands], stock.split(), dealer, rules, scores=scores, seed=0)


def _act(game: Game, *names: str) -> None:
    """Apply actions given by name (``"bid 2"``, ``"pass"``, ``"trump H"``, ``"discard TS"``, ``"play AH"``);
    a name holding several cards (``"play AH KH QH JH"``) plays them one after the other."""
    for name in names:
        verb, *rest = name.split()
        if verb in ("play", "discard") and len(rest) > 1:
            for c in rest:
                game.apply(parse_action(f"{verb} {c}"))
        else:
            game.apply(parse_action(name))


def _legal(game: Game) -> set[str]:
    return {action_name(a) for a in game.legal_actions()}


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the browser tests save screenshots: ``$SMEAR_SCREENSHOTS`` when set (``docs/img`` refreshes the
    docs' ones), else a temporary folder."""
    where = os.environ.get("SMEAR_SCREENSHOTS")
    path = Path(where) if where else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def make_game() -> Callable[..., Game]:
    return _make_game


@pytest.fixture
def act() -> Callable[..., None]:
    return _act


@pytest.fixture
def legal() -> Callable[[Game], set[str]]:
    return _legal


# ---------------------------------------------------------------------------------------------- test tiers
# `make test` runs the fast tier (-m "not slow"); `make test-all` (and CI) runs everything. A test is slow
# when it runs a training loop or a large statistical / random sweep. Tests in files of their own mark
# themselves with @pytest.mark.slow; these are marked here by name (file -> test functions, parametrized
# ones as a whole). A listed name its file no longer has is an error, so a renamed test cannot silently
# move to the fast tier.
SLOW_TESTS: dict[str, tuple[str, ...]] = {
    # training runs
    "test_training.py": (
        "test_smoke_train_resume_evaluate", "test_resume_restores_exact_training_state",
        "test_keyboard_interrupt_saves_checkpoint", "test_sigterm_saves_checkpoint",
        "test_existing_run_folder_needs_resume_or_overwrite", "test_policy_learns_legal_masked_actions",
        "test_other_episode_and_reward_modes_train", "test_maskable_ppo_smoke_and_resume",
        "test_imitation_warm_start_clones_teacher",
    ),
    "test_vector_ppo.py": (
        "test_vector_ppo_trains_resumes_and_plays_with_numpy",
        "test_init_from_starts_from_the_checkpoint_weights_and_records_it",
        "test_suit_canonical_network_is_suit_equivariant_and_numpy_plays_it",
    ),
    "test_algorithms_registry.py": ("test_every_registered_algorithm_implements_the_protocol",),
    "test_reliability_training.py": (
        "test_failed_resume_leaves_run_folder_unchanged",
        "test_corrupt_checkpoints_on_resume_are_a_message_and_change_nothing",
        "test_resume_uses_newest_readable_checkpoint_and_cleans_temporary_files",
        "test_overwrite_and_fresh_start_remove_temporary_files",
    ),
    # large statistical / random sweeps
    "test_properties.py": (
        "test_records_validate_and_replay_and_same_seed_same_game", "test_random_games_keep_every_invariant",
        "test_copy_is_independent_and_continues_identically",
        "test_bulk_random_games_under_every_option_combination", "test_truncated_records_validate_and_replay",
    ),
    "test_observation.py": ("test_decode_is_exact_inverse_on_random_states_r22_r23",),
    "test_play_seat_view.py": ("test_seat_view_is_valid_exact_and_private_over_many_states_r22_r23",),
    "test_reliability_env.py": ("test_fuzz_aec_envs_documented_errors_or_valid_state",),
    "test_heuristic.py": ("test_heuristic_beats_random_in_at_least_90_percent_of_duplicate_games",),
}


def slow_scale() -> float:
    """SMEAR_SLOW_SCALE (default 1): the one size knob of the slow tests (e.g. 10 runs them ten times
    larger); a value that is not a positive number is an error naming it."""
    raw = os.environ.get("SMEAR_SLOW_SCALE", "1")
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise pytest.UsageError(f"SMEAR_SLOW_SCALE={raw!r} is not a positive number (e.g. 1, 0.5, 10)")
    return value


@pytest.fixture
def scale() -> float:
    """:func:`slow_scale` as a fixture."""
    return slow_scale()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    checked: set[str] = set()
    for item in items:
        file = item.path.name
        names = SLOW_TESTS.get(file)
        if not names:
            continue
        module = getattr(item, "module", None)
        if file not in checked and module is not None:
            checked.add(file)
            missing = [n for n in names if not hasattr(module, n)]
            if missing:
                raise pytest.UsageError(f"tests/conftest.py SLOW_TESTS lists {missing}, which {file} lacks")
        if getattr(item, "originalname", item.name) in names:
            item.add_marker(pytest.mark.slow)
