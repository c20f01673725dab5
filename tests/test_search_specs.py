"""The search agents (``rollout:``, ``split:``) are specs of the one agent registry: smear-eval, the web table
(smear-serve), the protocol bot and the ladder take them, a per-seat seating plays exactly the batched
agent's games, and a bad spec is a one-line error naming it and the valid options."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from smear_env.agents import make_agent
from smear_env.agents.batched import OneSeatAgent
from smear_env.agents.composite import CompositeAgent, parse_split_spec, row_phases
from smear_env.agents.registry import can_vectorise, make_batched_agent, make_composite
from smear_env.agents.rollout import RolloutAgent
from smear_env.core.config import SmearRules
from smear_env.engine.game import BIDDING, DISCARD, PLAY, TRUMP
from smear_env.engine.vector import VectorGame
from smear_env.evaluation.cli import main as eval_main
from smear_env.evaluation.duplicate import run_match
from smear_env.evaluation.ladder import is_slow

ROLLOUT = "rollout:base=default,opponent=heuristic,samples=2,phases=trump+play"
SPLIT = "split:bid=default,play=heuristic"


def test_smear_eval_plays_a_rollout_spec_against_the_heuristic(capsys):
    assert eval_main([ROLLOUT, "heuristic", "--games", "4", "--seed", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["games"] == 4 and out["team_a"] == ROLLOUT


def test_search_specs_build_batched_agents_and_per_seat_agents():
    rules = SmearRules()
    r = make_batched_agent(ROLLOUT, rules)
    s = make_batched_agent(SPLIT, rules)
    assert isinstance(r, RolloutAgent) and r.samples == 2 and r.phases == ("trump", "play")
    assert isinstance(s, CompositeAgent) and s.name == SPLIT
    for spec in (ROLLOUT, SPLIT):
        agent = make_agent(spec, rules)
        assert isinstance(agent, OneSeatAgent) and agent.name == spec
        agent.close()
    assert can_vectorise(ROLLOUT) and can_vectorise(SPLIT)
    assert not can_vectorise("split:bid=pimc,play=heuristic") and not can_vectorise("split:bid=x")
    assert is_slow(ROLLOUT) and is_slow("split:bid=pimc,play=heuristic") and not is_slow(SPLIT)


@pytest.mark.parametrize("spec", [ROLLOUT, "split:bid=heuristic,play=default"])
def test_the_per_seat_agent_plays_the_batched_agents_games(spec):
    """The reference evaluator seats make_agent's per-seat agent (OneSeatAgent), the batched one the
    batched agent: the same games, to the last hand."""
    rules = SmearRules(target_score=5)
    if spec.startswith("rollout:"):
        spec = spec.replace("base=default", "base=heuristic")  # (default plays only the default rules)
    else:
        spec = "split:bid=heuristic,play=random"
    ref = run_match(spec, "heuristic", games=2, rules=rules, seed=11, engine="reference").summary()
    bat = run_match(spec, "heuristic", games=2, rules=rules, seed=11, engine="batched").summary()
    for key in ("win_rate_a", "margin_per_hand_a", "hands_played"):
        assert ref[key] == bat[key], key


@pytest.mark.parametrize(("spec", "words"), [
    ("rollout:samples=0", ["'rollout:samples=0'", "samples must be an integer >= 1", "valid options"]),
    ("rollout:sample=3", ["unknown option(s) ['sample']", "valid options: base"]),
    ("rollout:phases=bid+deal", ["phases ['bid', 'deal']", "'trump'"]),
    ("rollout:base=nope", ["'rollout:base=nope'", "unknown agent spec 'nope'"]),
    ("rollout:base=random", ["must not draw"]),
    ("rollout:margin=x", ["margin must be a number >= 0"]),
    ("split:bid=default", ["'split:bid=default'", "split:bid=<agent spec>,play=<agent spec>"]),
    ("split:bid=default,play=nope", ["unknown agent spec 'nope'"]),
])
def test_a_bad_search_spec_is_a_one_line_error_naming_it(spec, words, capsys):
    with pytest.raises(SystemExit) as e:
        eval_main([spec, "heuristic", "--games", "2"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "Traceback" not in err
    for w in words:
        assert w in err, (w, err)


def test_split_without_a_colon_is_an_unknown_spec_not_a_loop():
    with pytest.raises(ValueError, match="unknown agent spec 'split'.*'rollout:key=value"):
        make_agent("split")


def test_the_web_table_seats_a_rollout_spec():
    from starlette.testclient import TestClient

    from smear_env.play.web import create_app

    app = create_app([ROLLOUT, "heuristic"])
    with TestClient(app) as client:
        ids = [o["id"] for o in client.get("/api/config").json()["agents"]]
        spec_id = next(i for i in ids if i != "heuristic")
        r = client.post("/api/games", json={"opponents": spec_id, "partner": "heuristic", "seed": 2})
        assert r.status_code == 201, r.json()
        s = r.json()
        gid = s["game_id"]
        for _ in range(40):  # play the lowest legal action until the hand is over
            if s["over"] or s["view"]["phase"] == "HAND_OVER" or not s["view"]["legal_actions"]:
                break
            s = client.post(f"/api/games/{gid}/actions",
                            json={"action": min(a["id"] for a in s["view"]["legal_actions"])}).json()
        assert s["view"]["phase"] == "HAND_OVER" or s["over"]


def test_the_protocol_bot_serves_a_split_spec():
    from smear_env.agents.serve import serve_agent
    from smear_env.engine.game import Game
    from smear_env.engine.seat_view import seat_view_of

    rules = SmearRules()
    game = Game(rules, seed=4)
    seat = game.to_act
    lines = [json.dumps({"type": "start_game", "rules": rules.to_dict(), "seat": seat, "seed": 1}),
             json.dumps({"type": "act", "id": 7, "view": seat_view_of(game, seat)}),
             json.dumps({"type": "quit"})]
    out = io.StringIO()
    serve_agent(SPLIT, io.StringIO("\n".join(lines) + "\n"), out)
    answer = json.loads(out.getvalue())
    assert answer["id"] == 7 and answer["action"] in game.legal_actions()


def test_the_ladder_rates_search_specs_and_plays_them_the_smaller_count():
    from smear_env.evaluation import ladder as L

    players = L.split_players("heuristic,split:bid=heuristic,play=random,"
                              "rollout:base=heuristic,samples=2,phases=play")
    assert players == ["heuristic", "split:bid=heuristic,play=random",
                       "rollout:base=heuristic,samples=2,phases=play"]
    doc = L.run_ladder(players, games=4, slow_games=2, seed=1, n_boot=10, log=lambda _l: None)
    games = {(m["a"], m["b"]): m["games"] for m in doc["matches"]}
    assert games[("heuristic", "split:bid=heuristic,play=random")] == 4
    assert games[("heuristic", "rollout:base=heuristic,samples=2,phases=play")] == 2
    assert {r["player"] for r in doc["ratings"]} == set(players)


def test_a_split_half_may_be_a_search_with_options_of_its_own(capsys):
    spec = "split:bid=rollout:base=heuristic,samples=2,phases=bid,play=heuristic"
    agent = make_batched_agent(spec, SmearRules())
    assert isinstance(agent.bid, RolloutAgent) and agent.bid.samples == 2 and agent.bid.phases == ("bid",)
    assert can_vectorise(spec)
    assert eval_main([spec, "heuristic", "--games", "2", "--seed", "5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["team_a"] == spec


def test_the_web_table_says_a_search_of_default_plays_only_default_rules():
    from smear_env.play.choices import why_not

    assert why_not(ROLLOUT, SmearRules()) is None and why_not(SPLIT, SmearRules()) is None
    short = SmearRules(target_score=3)
    assert "plays only the rules it was trained on" in why_not(ROLLOUT, short)
    assert why_not(SPLIT, short).startswith(f"{SPLIT}: default plays only")
    assert why_not("rollout:base=heuristic,samples=2", short) is None


def test_an_openspiel_spec_without_openspiel_is_one_line():
    """Without open_spiel installed, an ``openspiel:`` spec is a one-line error saying how to install it."""
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("open_spiel is installed here")
    with pytest.raises(ValueError, match=r"OpenSpiel is not installed .*smear-rl\[openspiel\]") as e:
        make_agent("openspiel:ismcts", SmearRules())
    assert "\n" not in str(e.value)


class _Last:
    """A batched stub: the last legal action (a bid of 4, so hands are played); remembers the phases of
    the rows it was asked about."""

    vectorised = True

    def __init__(self, name: str) -> None:
        self.name = name
        self.phases: list[int] = []
        self.started: list[int] = []

    def start_game(self, slot, seat, rules, rng):
        self.started.append(slot)

    def act_batch(self, obs, mask, slots):
        self.phases += row_phases(obs).tolist()
        return (mask.shape[1] - 1 - np.argmax(mask[:, ::-1], axis=1)).astype(np.int64)

    def close(self):
        pass


def test_composite_sends_bid_and_trump_rows_to_one_agent_and_discard_and_play_rows_to_the_other():
    bid, play = _Last("b"), _Last("p")
    agent = CompositeAgent(bid, play)
    rules = SmearRules()
    vg = VectorGame(32, rules, seed=3)
    rng = np.random.default_rng(0)
    for slot in range(32):
        agent.start_game(slot, 0, rules, rng)
    assert bid.started == play.started == list(range(32))
    for _ in range(120):
        a = agent.act_batch(vg.observe(), vg.legal_mask(), np.arange(32))
        vg.step(a)
    assert set(bid.phases) == {BIDDING, TRUMP}
    assert set(play.phases) == {DISCARD, PLAY}
    assert agent.name == "split:bid=b,play=p"


def test_split_spec_parses_both_halves_and_rejects_bad_ones():
    assert parse_split_spec("split:bid=scratch,play=heuristic") == ("scratch", "heuristic")
    assert parse_split_spec("split:play=heuristic, bid=random") == ("random", "heuristic")
    assert parse_split_spec("split:bid=pimc:samples=2,bid_samples=8,play=rollout:base=default,samples=4") == (
        "pimc:samples=2,bid_samples=8", "rollout:base=default,samples=4")
    for bad in ("split:bid=scratch", "split:bid=a,bid=b", "split:bid=,play=x", "bid=a,play=b",
                "split:x=c,bid=a,play=b", "split:bid=a,play=b,"):
        with pytest.raises(ValueError, match="bad composite spec"):
            parse_split_spec(bad)
    with pytest.raises(ValueError, match="unknown agent spec 'nope'"):
        make_composite("nope", "heuristic")


def test_heuristic_bidding_with_heuristic_play_is_the_heuristic():
    """split:bid=heuristic,play=heuristic plays the heuristic's games exactly (the same summary, bids and
    contracts included, but for the team's name and the wall time)."""
    split, plain = (run_match(team, "random", 16, seed=4, engine="batched").summary()
                    for team in ("split:bid=heuristic,play=heuristic", "heuristic"))
    for s in (split, plain):
        del s["team_a"], s["teams"]["a"]["agent"], s["seconds"]
    assert split == plain
