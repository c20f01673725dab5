"""The web table as people meet it, in a real headless browser (Debian's chromium + chromedriver via
Selenium, as tests/test_web_browser.py): a whole game played by typed card names (``10d``, ``9c``, ``7h``:
exactly that card, checked against the server's log) and by clicks, with discards picked, undone and
confirmed once; two friends and a spectator in three windows (names, chat, an end-of-hand panel that
closes per page, a request to end the game, a friend who leaves and then only watches, who ended it said on
every page); the layout at 390x844 and 1400x900 checked by element bounding boxes (no overlap, nothing
off-screen sideways, the hint table right under the hand on a phone).

Without chromium the tests skip with the reason (``SMEAR_REQUIRE_BROWSER=1``: a failure). Screenshots go to a
temporary folder, or to ``$SMEAR_SCREENSHOTS`` (``SMEAR_SCREENSHOTS=docs/img`` refreshes the docs' ones).
"""

from __future__ import annotations

import time

import pytest

from tests.browser_helpers import (
    act,
    is_idle,
    is_visible,
    make_driver,
    need_browser,
    page_state,
    seat_actions,
    send_keys,
    typed_name,
    wait_for,
)
from tests.play_helpers import serve_app

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")


@pytest.fixture(scope="module")
def server():
    need_browser()
    from smear_env.play.web import create_app

    app = create_app(["heuristic", "random"], hints=["heuristic"])
    with serve_app(app) as port:
        yield f"http://127.0.0.1:{port}", app


@pytest.fixture(scope="module")
def drivers():
    need_browser()
    made = []

    def get(n: int):
        while len(made) < n:
            made.append(make_driver())
        return made[:n]

    yield get
    for d in made:
        d.quit()


def _deal(d, url: str, seed: int, rules: dict, partner: str = "random", name: str = "") -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    d.get(url + "/?speed=0&poll=150")
    wait_for(d, lambda d: len(d.find_elements(By.CSS_SELECTOR, "select[name=right] option")) >= 2)
    for key, value in rules.items():
        el = d.find_element(By.NAME, f"rule:{key}")
        if el.tag_name == "select":
            Select(el).select_by_value(value)
        else:
            el.clear()
            el.send_keys(value)
            d.execute_script("arguments[0].dispatchEvent(new Event('change'))", el)
    time.sleep(0.3)
    Select(d.find_element(By.NAME, "partner")).select_by_value(partner)
    for sel in ("left", "right"):
        Select(d.find_element(By.NAME, sel)).select_by_value("random")
    if name:
        d.find_element(By.NAME, "name").send_keys(name)
    d.find_element(By.NAME, "seed").send_keys(str(seed))
    d.find_element(By.ID, "deal").click()
    wait_for(d, lambda d: is_visible(d, "#game") and is_idle(d))


def test_a_whole_game_by_typed_card_names_and_by_clicks(server, drivers, shots):
    """Each typed card name plays exactly that card (``10d`` was read as move 1 and ``9c`` did nothing);
    greyed cards carry the rule, and a typed one shows it and changes nothing."""
    from selenium.webdriver.common.by import By

    url, app = server
    (d,) = drivers(1)
    _deal(d, url, seed=5, rules={"target_score": "6"})
    table = app.state.server.links[d.execute_script("return game.id")][0]
    typed_moves = clicked = illegal_tried = greyed = tens_typed = 0
    for k in range(600):
        if d.find_elements(By.ID, "game-over"):
            break
        wait_for(d, lambda d: is_idle(d))
        if is_visible(d, "#next"):
            d.find_element(By.ID, "next").click()
            wait_for(d, lambda d: is_idle(d) and not is_visible(d, "#hand-end"))
            continue
        st = page_state(d)
        if not st["view"]["legal_actions"]:
            time.sleep(0.05)
            continue
        why = st["unplayable"]
        for card, reason in why.items():  # greyed, with the rule on hover (title) and on tap
            el = d.find_element(By.CSS_SELECTOR, f"#hand .card.unplayable[data-card='{card}']")
            assert el.get_attribute("title") == reason
            greyed += 1
        if why and not illegal_tried:
            card = next(iter(why))
            d.find_element(By.CSS_SELECTOR, f"#hand .card.unplayable[data-card='{card}']").click()  # a tap
            reason = why[card]
            wait_for(d, lambda d, reason=reason: reason in d.find_element(By.ID, "error").text)
            before = len(table.log)
            send_keys(d, typed_name(card))
            wait_for(d, lambda d: is_visible(d, "#error"))
            text = d.find_element(By.ID, "error").text
            assert why[card] in text and "cannot be" in text, text
            assert len(table.log) == before  # nothing changed
            illegal_tried = 1
        typed = k % 2 == 0
        before = len(seat_actions(table, 0))
        want = act(d, table, 0, typed, k)
        end = before + len(want)
        wait_for(d, lambda d, end=end: is_idle(d) and len(seat_actions(table, 0)) >= end)
        got = seat_actions(table, 0)[before:end]
        assert got == want, (typed, want, got)
        assert not is_visible(d, "#error"), d.find_element(By.ID, "error").text
        typed_moves += typed
        clicked += not typed
        tens_typed += typed and any(w.split()[-1][0] == "T" for w in want if " " in w and w[0] in "pd")
    assert d.find_elements(By.ID, "game-over"), ("the game did not end", table.session.game.scores)
    assert table.session.game.winner is not None
    assert typed_moves > 8 and clicked > 8 and illegal_tried and greyed and tens_typed, (
        typed_moves, clicked, illegal_tried, greyed, tens_typed)
    kinds = {a.split()[0] for a in seat_actions(table, 0)}
    assert {"play", "discard", "trump"} <= kinds, kinds


def _fetch_status(d, path: str, body: dict) -> int:
    return d.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch(arguments[0], {method: 'POST', headers: {'Content-Type': 'application/json'},"
        " body: JSON.stringify(arguments[1])}).then((r) => done(r.status));", path, body)


def test_two_friends_and_a_spectator_in_three_windows(server, drivers, shots):
    """Names chosen when joining; the end-of-hand panel closes per page (another person's "Next hand" deals
    without closing it); chat is text only; a request to end needs the other person; a friend who leaves
    only watches (and can no longer end the game: 403); every page says who ended it."""
    from selenium.webdriver.common.by import By

    url, app = server
    a, b, c = drivers(3)
    _deal(a, url, seed=9, rules={"target_score": "21"}, partner="human", name="Ann")
    wait_for(a, lambda d: is_visible(d, "#links"))
    link = a.find_element(By.CSS_SELECTOR, "#links input[data-seat='2']").get_attribute("value")
    watch = a.find_element(By.CSS_SELECTOR, "#links input[data-seat='spectator']").get_attribute("value")
    assert a.find_elements(By.CSS_SELECTOR, "#links button.copy")
    token = a.execute_script("return game.id")
    table = app.state.server.links[token][0]
    b.get(link + "&speed=0&poll=150")
    wait_for(b, lambda d: is_visible(d, "#join") and is_idle(d))
    b.find_element(By.ID, "join-name").send_keys("Bo")
    b.find_element(By.ID, "join-ok").click()
    wait_for(b, lambda d: not is_visible(d, "#join"))
    assert table.named == {0: "Ann", 2: "Bo"}
    c.get(watch + "&speed=0&poll=150")
    wait_for(c, lambda d: is_visible(d, "#game") and is_idle(d))
    wait_for(a, lambda d: "Partner · Bo" in d.find_element(By.CSS_SELECTOR, "#felt .seat.top .name").text)
    # play hand 1 to its end, each friend on their own page
    pages = {0: a, 2: b}
    for k in range(300):
        if table.session.hand_over:
            break
        seat = table.session.to_act()
        if seat is None:
            time.sleep(0.05)
            continue
        d = pages[seat]
        wait_for(d, lambda d: is_idle(d) and d.execute_script("return state.view.legal_actions.length") > 0)
        n = len(table.log)
        act(d, table, seat, typed=k % 2 == 0, k=k)
        wait_for(d, lambda d, n=n: len(table.log) > n and is_idle(d))
    assert table.session.hand_over
    for d in (a, b, c):
        wait_for(d, lambda d: is_visible(d, "#hand-end") and is_visible(d, "#next"))
    a.find_element(By.ID, "next").click()  # Ann deals the next hand
    wait_for(a, lambda d: not is_visible(d, "#hand-end") and is_idle(d))
    for d in (b, c):  # Bo's and the spectator's panels stay open until each closes it
        wait_for(d, lambda d: d.execute_script("return state.hand_number") == 2)
        assert is_visible(d, "#hand-end") and "has been dealt" in d.find_element(By.ID, "hand-end").text
        assert d.find_element(By.ID, "next").text == "Close"
        d.find_element(By.ID, "next").click()
        assert not is_visible(d, "#hand-end")
    # chat: text, never markup
    b.find_element(By.ID, "chat-text").send_keys("<b>hi</b> Ann")
    b.find_element(By.CSS_SELECTOR, "#chat-form button").click()
    for d in (a, c):
        wait_for(d, lambda d: "Bo (seat 3): <b>hi</b> Ann" in d.find_element(By.ID, "chat").text)
        assert not d.find_elements(By.CSS_SELECTOR, "#chat b b, #chat div > b + b")
    # Ann asks to end; Bo keeps playing
    wait_for(a, lambda d: is_idle(d))
    a.find_element(By.ID, "resign").click()
    assert "Ask Bo to end the game?" in a.find_element(By.ID, "confirm-end").text
    a.find_element(By.ID, "resign-yes").click()
    wait_for(b, lambda d: "Ann asked to end" in d.find_element(By.ID, "end-request").text)
    wait_for(c, lambda d: "Ann asked to end" in d.find_element(By.ID, "end-request").text)
    assert not c.find_elements(By.ID, "agree-end")  # a spectator is told, not asked
    b.find_element(By.ID, "keep-playing").click()
    wait_for(a, lambda d: not is_visible(d, "#end-request"))
    assert not table.session.over
    # Bo leaves: his page watches; his old link can no longer end the game or deal
    wait_for(b, lambda d: is_idle(d))
    b.find_element(By.ID, "leave").click()  # asks first
    assert is_visible(b, "#confirm-leave") and not b.execute_script("return game.spectator")
    b.find_element(By.ID, "leave-yes").click()
    wait_for(b, lambda d: d.execute_script("return game.spectator") and is_idle(d))
    assert "You left seat 3" in b.find_element(By.ID, "notice").text
    assert not b.find_elements(By.CSS_SELECTOR, "#hand .card") and not is_visible(b, "#resign")
    assert "Watching" in b.find_element(By.ID, "info").text
    old = b.execute_script("return game.id")  # Bo's own link, the one he left with
    assert old != token
    for path in ("resign", "next"):
        assert _fetch_status(b, f"/api/games/{old}/{path}", {}) == 403
    assert not table.session.over
    wait_for(a, lambda d: "rule-based bot" in d.find_element(By.CSS_SELECTOR, "#felt .seat.top .name").text
          or "random bot" in d.find_element(By.CSS_SELECTOR, "#felt .seat.top .name").text)
    wait_for(a, lambda d: is_idle(d) and not is_visible(d, "#leave"))
    a.find_element(By.ID, "resign").click()
    assert "End the game now?" in a.find_element(By.ID, "confirm-end").text
    a.find_element(By.ID, "resign-yes").click()
    for d in (a, b, c):
        wait_for(d, lambda d: d.find_elements(By.ID, "game-over"))
        assert "ended by Ann (seat 1)" in d.find_element(By.ID, "result").text
    c.save_screenshot(str(shots / "web-ended-spectator.png"))


def _boxes(d, css: str) -> list[dict]:
    return d.execute_script(
        "return [...document.querySelectorAll(arguments[0])].filter((e) => e.getClientRects().length)"
        ".map((e) => { const r = e.getBoundingClientRect();"
        " return {what: (e.id || e.className || e.tagName) + ' ' + (e.textContent || '').trim().slice(0, 30),"
        " x: r.left, y: r.top + window.scrollY, r: r.right, b: r.bottom + window.scrollY}; });", css)


def _overlaps(boxes: list[dict]) -> list[tuple[str, str]]:
    out = []
    for i, p in enumerate(boxes):
        for q in boxes[i + 1:]:
            w = min(p["r"], q["r"]) - max(p["x"], q["x"])
            h = min(p["b"], q["b"]) - max(p["y"], q["y"])
            if w > 1 and h > 1:
                out.append((p["what"], q["what"]))
    return out


@pytest.mark.parametrize("width,height", [(390, 844), (1400, 900), (360, 740)])
def test_the_table_at_phone_and_desktop_sizes_has_no_overlap(server, drivers, shots, width, height):
    from selenium.webdriver.common.by import By

    url, app = server
    (d,) = drivers(1)
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
    try:
        _deal(d, url, seed=21, rules={}, partner="heuristic", name="Ann")
        table = app.state.server.links[d.execute_script("return game.id")][0]
        for k in range(200):  # to a card play with cards on the felt and a choice
            wait_for(d, lambda d: is_idle(d))
            if is_visible(d, "#next"):
                d.find_element(By.ID, "next").click()
                continue
            v = page_state(d)["view"]
            if v["phase"] == "PLAY" and len(v["trick"]) >= 2 and len(v["legal_actions"]) >= 2:
                break
            if v["legal_actions"]:
                act(d, table, 0, typed=False, k=k)
        d.find_element(By.ID, "hint").click()
        wait_for(d, lambda d: is_visible(d, "#hint-table"))
        rows = d.execute_script("return [...document.querySelectorAll('#hint-table tr[data-action]')]"
                                ".map((r) => [...r.cells].map((c) => c.textContent))")
        worth = [float(r[2].replace("−", "-")) for r in rows]
        assert worth == sorted(worth, reverse=True), rows  # sorted by the value shown
        for r, w in zip(rows, worth, strict=True):  # equal shown values are ties, and say so
            assert r[0].startswith("=") == (worth.count(w) > 1), rows
        assert any("★" in r[-1] for r in rows)  # the bots' choices are marked
        lead = d.find_element(By.CSS_SELECTOR, "#trick .card.lead")  # the leader's card is marked
        led = page_state(d)["view"]["trick"][0]["card"]
        assert "led" in lead.text and lead.get_attribute("data-card") == led
        felt = _boxes(d, "#felt .seat .name, #felt .seat .meta, #felt .seat .backs, #trick .card")
        assert len(felt) >= 8
        assert not _overlaps(felt), _overlaps(felt)
        below = _boxes(d, "#felt, #trick-note, #tally, #prompt, #hand, #moves, #hint-table")
        assert not _overlaps(below), _overlaps(below)
        assert not _overlaps(_boxes(d, "#hand .card"))
        wide = [b for b in _boxes(d, "header, header *, #game *, #side *") if b["r"] > width + 0.5]
        assert not wide, wide
        assert d.execute_script("return document.documentElement.scrollWidth") <= width, "sideways scroll"
        hand = _boxes(d, "#hand")[0]
        hints = _boxes(d, "#hint-table")[0]
        if width < 900:  # the hint table sits right under the hand, not below the move log
            assert 0 <= hints["y"] - hand["b"] < 260, (hand, hints)
        else:  # beside the table, in the first screen
            assert hints["b"] < height and hints["x"] > hand["r"] - 1
        assert d.execute_script(
            "const r = document.getElementById('hint-table').getBoundingClientRect();"
            "return r.top >= 0 && r.top < innerHeight;")
        name = {390: "web-phone.png", 1400: "web-desktop.png"}.get(width)
        if name:
            d.save_screenshot(str(shots / name))
    finally:
        d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_cards_move_onto_the_felt_unless_the_system_asks_for_reduced_motion(server, drivers):
    url, app = server
    (d,) = drivers(1)
    anim = ("const c = document.querySelector('#trick .card.from-left, #trick .card.from-right, "
            "#trick .card.from-top, #trick .card.from-bottom');"
            "return c && getComputedStyle(c).animationName;")
    for reduce, want in (("no-preference", {"from-left", "from-right", "from-top"}), ("reduce", {"none"})):
        d.execute_cdp_cmd("Emulation.setEmulatedMedia",
                          {"features": [{"name": "prefers-reduced-motion", "value": reduce}]})
        _deal(d, url, seed=21, rules={}, partner="heuristic")
        d.execute_script("drawTrick([{seat: 1, card: 'AS'}, {seat: 2, card: 'KS'}], null, null, 2)")
        assert d.execute_script(anim) in want, (reduce, d.execute_script(anim))
    d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
