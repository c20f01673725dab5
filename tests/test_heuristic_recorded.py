"""The heuristic's decisions against a recording: ``tests/heuristic_decisions.json`` holds the actions that a
separate, rule-by-rule per-seat implementation of the heuristic (``HeuristicAgent`` at commit a87c7e0)
chose for every lane of every step of seeded ``VectorGame`` runs under several rule options, driven by
random play, by the heuristic itself, and (``dealer_must_bid``) by passing. The batched agent and the
per-seat adapter (``act`` and ``act_view``) must choose the same actions on the same states."""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path

import numpy as np
import pytest

from smear_env.agents.heuristic import HeuristicAgent
from smear_env.agents.registry import make_batched_agent
from smear_env.core.config import SmearRules
from smear_env.engine.decoding import decode
from smear_env.engine.vector import VectorGame

FIXTURE = Path(__file__).with_name("heuristic_decisions.json")
LANES, STEPS = 32, 64


def _drive(rules: SmearRules, driver: str, seed: int, decide) -> np.ndarray:
    """(STEPS, LANES) uint8: ``decide(obs, mask)`` for every lane at every step of a seeded game run moved
    by ``driver`` ("random", "heuristic": the decisions themselves, "pass": pass when allowed)."""
    game = VectorGame(LANES, rules=rules, seed=seed)
    move = np.random.default_rng(seed)
    out = np.zeros((STEPS, LANES), dtype=np.uint8)
    for t in range(STEPS):
        obs, mask = game.observe(), game.legal_mask()
        out[t] = got = decide(obs, mask)
        if driver == "heuristic":
            game.step(got)
        elif driver == "pass":
            game.step(np.where(mask[:, 0], 0, game.random_actions(move)))
        else:
            game.step(game.random_actions(move))
    return out


def _encode(actions: np.ndarray) -> str:
    return base64.b64encode(zlib.compress(actions.tobytes(), 9)).decode()


def _decode(text: str) -> np.ndarray:
    return np.frombuffer(zlib.decompress(base64.b64decode(text)), dtype=np.uint8).reshape(STEPS, LANES)


def _cases() -> list[dict]:
    return json.loads(FIXTURE.read_text())["cases"]


def _batched_decide(rules: SmearRules):
    agent = make_batched_agent("heuristic", rules)
    for lane in range(LANES):
        agent.start_game(lane, lane % 4, rules, np.random.default_rng(lane))
    return lambda obs, mask: agent.act_batch(obs, mask, np.arange(LANES))


def _single_decide(rules: SmearRules, view: bool):
    agent = HeuristicAgent(SmearRules())
    agent.start_game(0, rules, np.random.default_rng(0))  # the rules of start_game count

    def decide(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if view:
            return np.array([agent.act_view(decode(obs[i], mask[i])) for i in range(len(obs))])
        return np.array([agent.act({"observation": obs[i], "action_mask": mask[i]}) for i in range(len(obs))])

    return decide


@pytest.mark.parametrize("case", range(len(_cases())))
@pytest.mark.parametrize("how", ["batched", "act", "act_view"])
def test_heuristic_decides_as_recorded(case: int, how: str) -> None:
    c = _cases()[case]
    rules = SmearRules(**c["rules"])
    decide = _batched_decide(rules) if how == "batched" else _single_decide(rules, view=how == "act_view")
    got = _drive(rules, c["driver"], c["seed"], decide)
    want = _decode(c["actions"])
    bad = np.argwhere(got != want)
    assert bad.size == 0, f"{c['rules']} {c['driver']}: (step, lane) {bad[:3].tolist()} got " \
                          f"{got[tuple(bad[0])]} want {want[tuple(bad[0])]}"


def test_recording_covers_every_kind_of_decision() -> None:
    """The recorded runs hold thousands of decisions with a choice, of every kind (the actions replayed)."""
    kinds: dict[str, int] = {}
    for c in _cases():
        want = iter(_decode(c["actions"]))

        def replay(obs: np.ndarray, mask: np.ndarray, want=want) -> np.ndarray:
            acts = next(want)
            for i in np.flatnonzero(mask.sum(axis=1) > 1).tolist():
                a = int(acts[i])
                k = ("bid" if a < 4 else "trump" if a < 8 else "discard" if a < 40
                     else "follow" if decode(obs[i], mask[i]).trick else "lead")
                kinds[k] = kinds.get(k, 0) + 1
            return acts

        _drive(SmearRules(**c["rules"]), c["driver"], c["seed"], replay)
    assert sum(kinds.values()) >= 15_000, kinds
    assert min(kinds.get(k, 0) for k in ("bid", "trump", "discard", "lead", "follow")) >= 200, kinds
