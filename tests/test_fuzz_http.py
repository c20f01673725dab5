"""Fuzz tier (issue 50): smear-serve's HTTP API under generated input (hypothesis, Starlette's TestClient).

Any request -- bodies of any JSON value or bytes, any media type, any query text, mutated game records --
gets a correct answer or a 4xx whose error is one line (no traceback, no server path); never a 500, and
never slower than a bound. Examples per test: ``SMEAR_FUZZ_EXAMPLES`` (default 25, the CI size; raise it for
a longer run, e.g. ``SMEAR_FUZZ_EXAMPLES=2000``).
"""

from __future__ import annotations

import copy
import json
import os
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from smear_env.agents import make_agent
from smear_env.core.config import SmearRules
from smear_env.evaluation import play_game
from smear_env.play.web import create_app

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
EXAMPLES = int(os.environ.get("SMEAR_FUZZ_EXAMPLES", "25"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large])
SLOW = 20.0
"""Seconds any one request may take (a loaded 2-core box; a hang or a quadratic check takes far longer)."""

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=12), inner, max_size=5),
    max_leaves=25,
)
fields = st.sampled_from(["seat", "humans", "partner", "opponents", "left", "right", "agents", "rules",
                          "seed", "action", "agent", "x"])
rule_keys = st.sampled_from(["target_score", "kitty_size", "high_low", "cap_defenders", "nope"])
bodies = st.one_of(
    json_values.map(lambda v: json.dumps(v).encode()),
    st.dictionaries(fields, json_values, max_size=4).map(lambda v: json.dumps(v).encode()),
    st.dictionaries(st.just("rules"), st.dictionaries(rule_keys, json_values, max_size=3), min_size=1)
    .map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=200),
    st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.sampled_from(['"' + '\\"' * 5000, "[" * 3000 + "]" * 3000, '{"a":' * 500 + "1" + "}" * 500,
                     "9" * 5000, '{"seed": ' + "9" * 5000 + "}", '{"action": 1e999}', "\ufeff{}"])
    .map(lambda t: t.encode()),
)
media = st.sampled_from(["application/json", "text/plain", "application/x-ndjson", "image/png", "",
                         "application/json; charset=latin-1", "APPLICATION/JSON"])
query_text = st.one_of(st.text(max_size=12), st.integers(-5, 10**6).map(str),
                       st.sampled_from(["²", "%C2%B2", "9" * 5000, "-0", "+1", " 1", "1_000", "0x10", "١"]))


def _check(r, started: float) -> None:
    assert time.perf_counter() - started < SLOW, "a request took too long"
    assert r.status_code < 500 or r.status_code == 503, (r.status_code, r.text[:300])
    body = r.json()
    if r.status_code >= 400:
        err = body["error"]
        assert isinstance(err, str) and "\n" not in err and "Traceback" not in err, err
        assert os.getcwd() not in err and len(err) < 2000, err


@pytest.fixture(scope="module")
def client():
    from starlette.testclient import TestClient

    app = create_app(["heuristic", "random"], hints=["heuristic"])
    with TestClient(app) as c:
        r = c.post("/api/games", json={"humans": [0, 2], "rules": {"target_score": 3}, "seed": 1})
        c.tokens = [v.split("=", 1)[1] for v in r.json()["links"]["seats"].values()]
        c.tokens.append(r.json()["links"]["spectator"].split("=", 1)[1])
        yield c


@FUZZ
@given(path=st.sampled_from(["/api/games", "/api/agents", "/api/replay", "actions", "next", "resign?",
                             "leave?"]),
       body=bodies, ctype=media, seat=st.integers(0, 2))
def test_any_body_on_any_post_route_is_an_answer_or_a_one_line_4xx(client, path, body, ctype, seat):
    if not path.startswith("/"):
        if path.endswith("?"):  # ending the shared game would make the rest of the run dull
            path = path[:-1]
            body = body if body.strip()[:1] not in (b"", b"{") else b"[1]"
        path = f"/api/games/{client.tokens[seat]}/{path}"
    headers = {"Content-Type": ctype} if ctype else {}
    t0 = time.perf_counter()
    _check(client.post(path, content=body, headers=headers), t0)


@FUZZ
@given(key=st.sampled_from(["since", "index", "hand_from", "x"]), value=query_text,
       route=st.sampled_from(["", "/hint", "/record", "/replay"]), seat=st.integers(0, 2))
def test_any_query_number_is_an_answer_or_a_one_line_4xx(client, key, value, route, seat):
    t0 = time.perf_counter()
    r = client.get(f"/api/games/{client.tokens[seat]}{route}", params={key: value})
    if r.status_code == 429:  # the hint budget: a one-line answer too
        pass
    _check(r, t0)


_REC: dict = {}


def _record() -> dict:
    if not _REC:
        rec, _ = play_game([make_agent("random") for _ in range(4)], SmearRules(target_score=5), seed=8,
                           max_hands=6)
        _REC.update(rec)
    return copy.deepcopy(_REC)


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*prefix, i))


@FUZZ
@given(data=st.data())
def test_a_mutated_record_upload_replays_or_is_a_one_line_4xx(client, data):
    rec = _record()
    paths = [p for p in _paths(rec) if p]
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        path = data.draw(st.sampled_from(paths), label="path")
        node = rec
        try:
            for k in path[:-1]:
                node = node[k]
            how = data.draw(st.sampled_from(["replace", "delete", "small int"]), label="how")
            if how == "delete":
                del node[path[-1]]
            elif how == "small int":
                node[path[-1]] = data.draw(st.integers(-3, 80))
            else:
                node[path[-1]] = data.draw(json_values, label="value")
        except (KeyError, IndexError, TypeError):
            continue
    index = data.draw(st.sampled_from(["0", "1", "²"]), label="index")
    hand_from = data.draw(st.sampled_from(["0", "1", "5", "60", "x"]), label="hand_from")
    lines = data.draw(st.booleans(), label="as JSON lines")
    body = (json.dumps(_record()) + "\n" + json.dumps(rec)) if lines else json.dumps(rec)
    t0 = time.perf_counter()
    r = client.post(f"/api/replay?index={index}&hand_from={hand_from}", content=body,
                    headers={"Content-Type": "application/json"})
    _check(r, t0)
    if r.status_code == 200:
        assert r.json()["hands_total"] == len((_record() if lines and index == "0" else rec)["hands"])
