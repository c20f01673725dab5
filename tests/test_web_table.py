"""The web table's people (smear-serve's API, no browser): a seat that left only watches and can no longer end
the game or deal; ending needs every seated person's agreement and every page says who ended it; names chosen
per seat; a small chat (bounded, rate-limited, per seat); unplayable cards with the rule that forbids them;
rule options explained where they bite (R8 dealer stuck, R19, R20)."""

from __future__ import annotations

import numpy as np
import pytest

from smear_env.core.actions import PASS_ACTION, action_name, bid_action
from smear_env.core.config import SmearRules
from smear_env.engine.game import Game
from smear_env.play.explain import rule_notes
from smear_env.play.web import routes as web
from tests.play_helpers import web_client

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")


@pytest.fixture
def client():
    with web_client(["heuristic", "random"]) as c:
        yield c


def _game(client, humans, **body):
    r = client.post("/api/games", json={"humans": humans, "opponents": "random",
                                        "rules": {"target_score": 5}, "seed": 3, **body})
    assert r.status_code == 201, r.json()
    s = r.json()
    toks = {int(k): v.split("game=")[1] for k, v in s["links"]["seats"].items()}
    return s, toks, s["links"]["spectator"].split("game=")[1], client.app_state.server.links[s["game_id"]][0]


def test_a_seat_that_left_can_no_longer_end_the_game_deal_move_or_chat(client):
    """Issue 50 item 5: /leave, then /resign with the old token was a 200 that ended the game for everyone."""
    _, toks, _, table = _game(client, [0, 1, 2])
    r = client.post(f"/api/games/{toks[1]}/leave", json={})
    assert r.status_code == 200
    st = r.json()  # the leaver's page now watches, as a spectator's
    assert st["spectator"] is True and st["seat"] is None and st["left_seat"] == 1
    assert st["view"]["hand"] == [] and st["view"]["legal_actions"] == []
    for path, body in (("resign", {}), ("next", {}), ("actions", {"action": 0}), ("name", {"name": "Zed"}),
                       ("chat", {"text": "hi"}), ("resign", {"agree": False})):
        r = client.post(f"/api/games/{toks[1]}/{path}", json=body)
        assert r.status_code == 403 and "you left seat 2" in r.json()["error"], (path, r.json())
    assert client.post(f"/api/games/{toks[1]}/leave", json={}).status_code == 409
    assert not table.session.over and table.session.humans == [0, 2]
    g = client.get(f"/api/games/{toks[1]}").json()
    assert g["spectator"] and g["left_seat"] == 1 and g["view"]["hand"] == []


def test_ending_needs_every_seated_person_and_every_page_says_who_ended_it(client):
    s, toks, spec, table = _game(client, [0, 2], names={"0": "Ann"})
    client.post(f"/api/games/{toks[2]}/name", json={"name": "Bo"})
    r = client.post(f"/api/games/{toks[0]}/resign", json={})
    assert r.status_code == 200 and not r.json()["over"] and r.json()["end_votes"] == [0]
    assert client.get(f"/api/games/{toks[2]}").json()["end_votes"] == [0]  # Bo's page is asked
    r = client.post(f"/api/games/{toks[2]}/resign", json={"agree": False})  # Bo keeps playing
    assert r.json()["end_votes"] == [] and not r.json()["over"]
    client.post(f"/api/games/{toks[2]}/resign", json={"agree": True})
    r = client.post(f"/api/games/{toks[0]}/resign")
    assert r.json()["over"] and r.json()["ended_by"] == [0, 2]
    for tok in (toks[0], toks[2], spec):
        st = client.get(f"/api/games/{tok}").json()
        assert st["over"] and st["ended"] == "the game was ended by Ann (seat 1) and Bo (seat 3)", st["ended"]
    view = table.session.view(0)
    if view["legal_actions"]:
        r = client.post(f"/api/games/{toks[0]}/actions", json={"action": view["legal_actions"][0]["id"]})
        assert r.status_code == 409 and "ended by Ann (seat 1) and Bo (seat 3)" in r.json()["error"]
    assert client.post(f"/api/games/{toks[0]}/next").status_code == 409
    assert client.get(f"/api/games/{toks[0]}/record").json()["players"][::2] == ["Ann", "Bo"]
    assert client.post(f"/api/games/{toks[0]}/resign", json={"agree": "yes"}).status_code == 400


def test_a_person_alone_ends_at_once_and_a_leaver_completes_the_others_agreement(client):
    _, toks, _, table = _game(client, [0])
    assert client.post(f"/api/games/{toks[0]}/leave", json={}).status_code == 409  # the last person
    assert client.post(f"/api/games/{toks[0]}/resign").json()["ended_by"] == [0]
    _, toks, _, table = _game(client, [0, 1, 2])
    client.post(f"/api/games/{toks[0]}/resign")
    client.post(f"/api/games/{toks[2]}/resign")
    assert not table.session.over
    r = client.post(f"/api/games/{toks[1]}/leave", json={})
    assert table.session.over and r.json()["ended_by"] == [0, 2]


def test_names_are_chosen_per_seat_and_checked(client):
    s, toks, _, table = _game(client, [0, 3], names={"0": "  Ann   Lee "})
    assert s["players"][0] == "Ann Lee" and s["named"] == ["Ann Lee", None, None, None] and s["host"] == 0
    for bad in ("", " ", "x" * 21, "a\x00b", "heuristic", 7, None):
        r = client.post(f"/api/games/{toks[3]}/name", json={"name": bad})
        assert r.status_code == 400 and "name" in r.json()["error"], bad
    r = client.post(f"/api/games/{toks[3]}/name", json={"name": "Dee"})
    assert r.status_code == 200 and r.json()["named"][3] == "Dee" and table.session.names[3] == "Dee"
    r = client.post("/api/games", json={"humans": [0], "names": {"1": "X"}})
    assert r.status_code == 400 and "not a human seat" in r.json()["error"]


def test_chat_is_bounded_per_seat_rate_limited_and_kept_short(client, monkeypatch):
    _, toks, spec, table = _game(client, [0, 2])
    r = client.post(f"/api/games/{toks[0]}/chat", json={"text": " <b>hi</b>\n there "})
    assert r.status_code == 200
    (m,) = r.json()["chat"]
    assert m == {"n": 0, "seat": 0, "name": "human (seat 1)", "text": "<b>hi</b> there"}  # text: pages escape
    assert client.post(f"/api/games/{spec}/chat", json={"text": "hi"}).status_code == 403
    for bad in ({"text": ""}, {"text": "x" * 301}, {"text": 5}, {"msg": "x"}):
        assert client.post(f"/api/games/{toks[2]}/chat", json=bad).status_code == 400
    for i in range(4):
        assert client.post(f"/api/games/{toks[0]}/chat", json={"text": f"m{i}"}).status_code == 200
    r = client.post(f"/api/games/{toks[0]}/chat", json={"text": "one too many"})
    assert r.status_code == 429 and "at most 5 messages in 10 seconds" in r.json()["error"]
    assert client.post(f"/api/games/{toks[2]}/chat", json={"text": "mine"}).status_code == 200  # per seat
    st = client.get(f"/api/games/{spec}?chat=3").json()
    assert [m["text"] for m in st["chat"]] == ["m2", "m3", "mine"] and st["chat_count"] == 6
    for bad in ("²", "-1", "x", "9" * 40):
        assert client.get(f"/api/games/{spec}?chat={bad}").status_code == 400
    monkeypatch.setattr(web, "CHAT_BURST", (1000, 10.0))
    for i in range(150):
        client.post(f"/api/games/{toks[2]}/chat", json={"text": f"n{i}"})
    st = client.get(f"/api/games/{toks[0]}").json()
    assert len(st["chat"]) == web.MAX_CHAT_KEPT and st["chat"][-1]["text"] == "n149"


def test_each_unplayable_card_comes_with_the_rule_that_forbids_it(client):
    _, toks, _, table = _game(client, [0], partner="random")
    seen = 0
    st = client.get(f"/api/games/{toks[0]}").json()
    for _ in range(200):
        if st["over"]:
            break
        v = st["view"]
        if v["phase"] == "HAND_OVER":
            st = client.post(f"/api/games/{toks[0]}/next").json()
            continue
        legal = {a["name"].split()[-1] for a in v["legal_actions"]}
        if v["phase"] in ("PLAY", "DISCARD"):
            assert set(st["unplayable"]) == set(v["hand"]) - legal
            for card, why in st["unplayable"].items():
                assert why.endswith(("(R10)", "(R11)", "(R12)")), why
                seen += 1
                r = client.post(f"/api/games/{toks[0]}/actions", json={"action": f"play {card}"
                                if v["phase"] == "PLAY" else f"discard {card}"})
                assert r.status_code == 422 and r.json()["why"] == why
        else:
            assert st["unplayable"] == {}
        move = {"action": v["legal_actions"][-1]["id"]}
        st = client.post(f"/api/games/{toks[0]}/actions", json=move).json()
    assert seen > 3


def test_rule_notes_say_where_a_rule_option_bites():
    g = Game(SmearRules(all_pass="dealer_must_bid"), seed=1, dealer=3)
    for _ in range(3):
        assert not [n for n in rule_notes(g) if n["rule"] == "R8"]
        g.apply(PASS_ACTION)
    (note,) = rule_notes(g)
    assert note["rule"] == "R8" and "dealer may not pass" in note["text"]
    assert PASS_ACTION not in g.legal_actions() and action_name(bid_action(2)) == "bid 2"
    g = Game(SmearRules(win_requires_bid=True, target_score=5), seed=1, dealer=0, scores=(6, 2))
    (note,) = rule_notes(g)
    assert note == {"rule": "R19", "team": 0, "text": "{team} reached 6 of 5 but wins only in a hand it bids "
                    "and makes (rule: win only on your own bid): play goes on."}
    assert rule_notes(Game(SmearRules(target_score=5), seed=1, dealer=0, scores=(6, 2))) == []


def test_a_capped_defender_hand_says_how_many_points_did_not_count():
    from smear_env.agents import make_agent
    from smear_env.tables.table import agent_action

    rules = SmearRules(cap_defenders=True, target_score=4)
    found = 0
    for seed in range(60):
        g = Game(rules, seed=seed, dealer=0, scores=(3, 3))
        agents = [make_agent("random", rules) for _ in range(4)]
        for s, a in enumerate(agents):
            a.start_game(s, rules, np.random.default_rng(seed * 4 + s))
        while g.phase < 4:
            g.apply(agent_action(agents[g.to_act], g, g.to_act))
        if g.hand_thrown_in or g.bidder is None:
            continue
        d = 1 - (g.bidder & 1)
        won = sum(1 for k in ("high", "low", "jack", "game") if g.hand_result["points"][k] == d)
        notes = [n for n in rule_notes(g) if n["rule"] == "R20"]
        if won > 1:  # 3 + won > 4: the defenders' points past the target do not count
            (n,) = notes
            assert n["team"] == d and f"{won - 1} of their {won} point(s)" in n["text"]
            found += 1
        else:
            assert notes == []
    assert found >= 3


def test_a_discard_hint_names_the_cards_valued_with_it(client):
    """A discard's worth is that of the whole set (the card and the heuristic's rest): the hint says which."""
    from smear_env.agents.pimc import greedy_discards
    from smear_env.core.actions import DISCARD_ACTION_BASE
    from smear_env.core.cards import CARD_NAMES, cards_of
    from smear_env.play.hints import Hinter

    rules = SmearRules(target_score=5)
    for seed in range(60):
        g = Game(rules, seed=seed, dealer=3)
        g.apply(bid_action(2))
        for _ in range(3):
            g.apply(PASS_ACTION)
        g.apply(g.legal_actions()[0])  # trump
        if len(g.legal_actions()) >= 4:
            break
    h = Hinter(["heuristic"], rules, seed=0, value_scale=0.34).hint(g, g.to_act, np.random.default_rng(1))
    hand = g.hands[g.to_act]
    for m in h["moves"]:
        c = m["id"] - DISCARD_ACTION_BASE
        want = [CARD_NAMES[x] for x in cards_of(greedy_discards(hand & ~(1 << c), g.trump, 2))]
        assert m["with"] == want and CARD_NAMES[c] not in m["with"] and len(m["with"]) == 2


def test_the_how_to_play_page_holds_every_rule_and_is_linked_from_the_table(client):
    import re
    from pathlib import Path

    page = client.get("/static/rules.html")
    assert page.status_code == 200 and "How to play" in page.text
    rules_md = (Path(__file__).resolve().parents[1] / "docs" / "RULES.md").read_text()
    ids = re.findall(r"\*\*(R\d+) ([^*]+?)\.?\*\*", rules_md)
    assert len(ids) >= 21
    for rid, title in ids:
        title = re.sub(r"`([^`]*)`", r"<code>\1</code>", title)
        assert f"<strong>{rid} {title}" in page.text, (rid, title)
    assert 'href="/static/rules.html"' in client.get("/").text
