"""smear-serve's API: only the requesting seat's view (privacy walk over many games), clear 4xx errors that
leave the game unchanged, unguessable ids, replays of records, a failing bot."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from smear_env.agents import make_agent
from smear_env.config import SmearRules
from smear_env.evaluation import play_game
from smear_env.play.cli import shipped_agent_path
from smear_env.play.web import build_parser, create_app
from tests.play_helpers import card_names_in, known_names

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")


@pytest.fixture
def client():
    from starlette.testclient import TestClient

    app = create_app(["heuristic", "random"])
    with TestClient(app) as c:
        c.app_state = app.state
        yield c


def _new(client, **body):
    r = client.post("/api/games", json={"opponents": "random", "partner": "heuristic",
                                        "rules": {"target_score": 3}, **body})
    assert r.status_code == 201, r.json()
    return r.json()


def _strip(state):
    return {k: v for k, v in state.items() if k != "events"}


def test_illegal_and_malformed_moves_are_4xx_naming_the_legal_moves_and_change_nothing(client):
    s = _new(client, seed=3)
    gid = s["game_id"]
    legal = s["view"]["legal_actions"]
    assert legal, "the person acts first or after the agents"
    before = _strip(client.get(f"/api/games/{gid}").json())
    bad = next(a for a in range(72) if a not in {x["id"] for x in legal})
    for body, status, text in [
        ({"action": bad}, 422, "is not legal now; legal actions: "),
        ({"action": "play ZZ"}, 400, "is not an action name"),
        ({"action": True}, 400, "must be an action id or name"),
        ({"move": 3}, 400, "a move is a JSON object"),
        ("{not json", 400, "not JSON"),
    ]:
        r = client.post(f"/api/games/{gid}/actions",
                        content=body if isinstance(body, str) else json.dumps(body))
        assert r.status_code == status and text in r.json()["error"], r.json()
        assert r.json()["legal_actions"] == legal
        assert _strip(client.get(f"/api/games/{gid}").json()) == before
    r = client.post(f"/api/games/{gid}/actions", json={"action": legal[0]["name"]})  # by name works
    assert r.status_code == 200
    assert client.get(f"/api/games/{gid}/record").status_code == 409  # every card: not before the end
    assert client.post(f"/api/games/{gid}/next").status_code == 409


def test_new_game_errors_and_unknown_ids(client):
    r = client.post("/api/games", json={"opponents": "cmd:rm -rf /"})
    assert r.status_code == 400 and "not offered by this server" in r.json()["error"]
    r = client.post("/api/games", json={"rules": {"kitty_size": 7}})
    assert r.status_code == 400 and "kitty_size" in r.json()["error"]
    r = client.post("/api/games", json={"seat": 4})
    assert r.status_code == 400 and "seat" in r.json()["error"]
    r = client.post("/api/games", json={"colour": "red"})
    assert r.status_code == 400 and "unknown field" in r.json()["error"]
    assert client.get("/api/games/nope").status_code == 404
    assert client.post("/api/games/nope/actions", json={"action": 0}).status_code == 404
    ids = {_new(client)["game_id"] for _ in range(5)}
    assert len(ids) == 5 and all(len(i) >= 24 for i in ids)


def test_every_api_response_shows_only_what_the_seat_may_know_r23(client):
    """Many games, every seat and kitty size: each response (views, events, hints) names no card the
    person's seat may not know at that moment."""
    rng = np.random.default_rng(0)
    tables = client.app_state.server.games
    responses = 0
    for g in range(6):
        seat = g % 4
        s = _new(client, seat=seat, seed=g, rules={"target_score": 3, "kitty_size": g % 4})
        gid = s["game_id"]
        game = tables[gid].session.game
        for _ in range(300):
            assert card_names_in(s) <= known_names(game, seat), (g, s["view"]["phase"])
            responses += 1
            if s["over"]:
                break
            if s["view"]["phase"] == "HAND_OVER":
                s = client.post(f"/api/games/{gid}/next").json()
                continue
            legal = s["view"]["legal_actions"]
            if rng.random() < 0.1:
                h = client.get(f"/api/games/{gid}/hint").json()
                assert card_names_in(h) <= known_names(game, seat)
            a = legal[int(rng.integers(len(legal)))]
            r = client.post(f"/api/games/{gid}/actions", json={"action": a["id"]})
            assert r.status_code == 200, r.json()
            s = r.json()
        assert s["over"]
        rec = client.get(f"/api/games/{gid}/record").json()  # now allowed: the game is over
        assert rec["format"] == "smear-record/1"
    assert responses > 100


def test_replay_of_an_uploaded_record_with_probabilities():
    from starlette.testclient import TestClient

    ck = shipped_agent_path()
    if ck is None:
        pytest.skip("the shipped checkpoint is not in this checkout")
    rules = SmearRules()
    rec, _ = play_game([make_agent(s, rules) for s in (ck, "heuristic", ck, "heuristic")], rules, seed=2,
                       max_hands=2)
    with TestClient(create_app([ck, "heuristic"])) as c:
        r = c.post("/api/replay", content=json.dumps(rec))
        assert r.status_code == 200
        data = r.json()
        frames = data["frames"]
        assert data["probabilities_for"] == [ck, ck]
        decisions = [f for f in frames if f.get("actor") in (0, 2)]
        assert decisions and all("probabilities" in f for f in decisions)
        assert all("probabilities" not in f for f in frames if f.get("actor") in (1, 3))
        assert frames[0]["hands"] == [sorted(h, key=lambda c: ("CDHS".index(c[1]), "789TJQKA".index(c[0])))
                                      for h in rec["hands"][0]["deal"]]
        assert frames[-1]["scores"] == rec["final_scores"]
        bad = json.loads(json.dumps(rec))
        bad["hands"][0]["bids"][0]["seat"] = (bad["hands"][0]["bids"][0]["seat"] + 1) % 4
        r = c.post("/api/replay", content=json.dumps(bad))
        assert r.status_code == 400 and "hand 0" in r.json()["error"]
        assert c.post("/api/replay", content=b"\xff\xfe").status_code == 400
        assert c.post("/api/replay?index=3", content=json.dumps(rec)).status_code == 400


def test_a_failing_bot_stops_the_served_game_by_name(tmp_path):
    from starlette.testclient import TestClient

    bot = tmp_path / "bot.py"
    bot.write_text("import sys\nfor line in sys.stdin:\n"
                   "    if '\"act\"' in line:\n        print('garbage', flush=True)\n")  # only to requests
    spec = f"cmd:{sys.executable} {bot}"
    with TestClient(create_app([spec, "heuristic"])) as c:
        s = c.post("/api/games", json={"seat": 0, "partner": "heuristic", "opponents": spec}).json()
        gid = s["game_id"]
        while not s["over"]:
            legal = s["view"]["legal_actions"]
            s = c.post(f"/api/games/{gid}/actions", json={"action": legal[0]["id"]}).json()
        assert spec in s["error"] and "not an action" in s["error"]
        assert c.get(f"/api/games/{gid}/record").status_code == 200


def test_smear_serve_binds_loopback_by_default():
    args = build_parser().parse_args([])
    assert args.host == "127.0.0.1"
