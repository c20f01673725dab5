"""Issue 20 item 14 (and issue 21's dead option): ``pimc`` with its default options gives the same games for
the same seed whatever the machine's speed; the wall-clock budget is an explicit option."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from smear_env.agents import pimc as P
from smear_env.agents.heuristic import HeuristicAgent
from smear_env.agents.registry import make_agent
from smear_env.core.config import SmearRules
from smear_env.engine.game import HAND_OVER, Game
from smear_env.engine.observation import observe

RULES = SmearRules(target_score=1000)


def _play(hands: int, seed: int, **options) -> tuple[list[int], list[dict]]:
    """The actions of ``hands`` hands (PIMC in seats 0 and 2, the heuristic in 1 and 3) and the PIMC
    seats' generator states after them (the search's random draws: a search that stopped early leaves
    another state even where the heuristic's move was kept)."""
    agents = [P.PimcAgent(RULES, **options), HeuristicAgent(RULES), P.PimcAgent(RULES, **options),
              HeuristicAgent(RULES)]
    for i, a in enumerate(agents):
        a.start_game(i, RULES, np.random.default_rng([seed, i]))
    g = Game(RULES, seed=seed)
    out: list[int] = []
    done = 0
    for _ in range(200 * hands):  # bounded: a hand has at most ~40 decisions
        if g.phase == HAND_OVER:
            done += 1
            if done >= hands:
                break
            g.start_next_hand()
            continue
        a = agents[g.to_act].act(observe(g, g.to_act))
        out.append(a)
        g.apply(a)
    return out, [agents[0]._rng.bit_generator.state, agents[2]._rng.bit_generator.state]


class _SlowClock:
    """``time.perf_counter`` of a very slow (or very loaded) machine: one second passes per reading."""

    def __init__(self) -> None:
        self.t = itertools.count()

    def perf_counter(self) -> float:
        return float(next(self.t))


def test_default_pimc_games_do_not_depend_on_machine_speed(monkeypatch):
    fast = _play(2, seed=3)
    monkeypatch.setattr(P, "time", _SlowClock())
    slow = _play(2, seed=3)
    assert len(fast[0]) > 40 and fast == slow


def test_explicit_budget_still_stops_sampling_on_a_slow_machine(monkeypatch):
    seen: list[int] = []
    orig = P.PimcAgent._sample_loop

    def counting(self, min_samples=None, samples=None):
        n = 0
        for i in orig(self, min_samples, samples):
            n += 1
            yield i
        if samples is None:
            seen.append(n)

    monkeypatch.setattr(P.PimcAgent, "_sample_loop", counting)
    monkeypatch.setattr(P, "time", _SlowClock())
    _play(1, seed=4, budget_ms=40)
    assert seen and set(seen) == {P.MIN_SAMPLES}  # the timer, not the sample count, stopped each search
    seen.clear()
    _play(1, seed=4)
    assert seen and set(seen) == {P.SAMPLES}


def test_default_options_are_the_deterministic_ones():
    a = make_agent("pimc")
    assert a.budget_ms is None and a.samples == P.SAMPLES == 6


def test_dead_option_min_samples_multi_is_refused():
    with pytest.raises(TypeError, match="min_samples_multi"):
        P.PimcAgent(RULES, min_samples_multi=2)
    with pytest.raises(ValueError, match="unknown option 'min_samples_multi'"):
        make_agent("pimc:min_samples_multi=2")


@pytest.mark.parametrize(("option", "value"), [
    ("samples", True), ("samples", 1.5), ("samples", "3"), ("bid_samples", 0), ("trump_samples", None),
    ("min_samples", 0), ("budget_ms", float("nan")), ("budget_ms", float("inf")), ("budget_ms", True),
    ("bid_conf", float("nan")), ("bid_conf", 2.0), ("bid_threshold", float("inf")), ("trump_candidates", -1),
])
def test_bad_numeric_options_are_named(option, value):
    with pytest.raises(ValueError, match=option):
        P.PimcAgent(RULES, **{option: value})
