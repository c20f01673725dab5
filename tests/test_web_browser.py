"""smear-serve in a real headless browser (Debian's chromium + chromedriver, driven by Selenium): a whole game
under non-default rules against heuristic with a hint at every decision (keyboard and mouse, last trick,
the hand-end panel, a reload), the "End game" confirmation, two people at one table in two browser
sessions against two agents, and a recorded game stepped through in the replay viewer.

Without chromium the tests skip with the reason, unless ``SMEAR_REQUIRE_BROWSER=1`` (set by ``.ci/run``,
which installs it): then a missing browser is a failure. Screenshots go to a temporary folder, or to
``$SMEAR_SCREENSHOTS`` when set (``SMEAR_SCREENSHOTS=docs/img`` refreshes the ones in the docs).
"""

from __future__ import annotations

import time

import pytest

from smear_env.agents import make_agent
from smear_env.core.config import SmearRules
from smear_env.engine.record import save_records
from smear_env.evaluation import play_game
from smear_env.play.cli import shipped_agent_path
from tests.browser_helpers import (
    act,
    is_idle,
    is_visible,
    make_driver,
    need_browser,
    wait_for,
)
from tests.play_helpers import serve_app

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
HAVE_SHIPPED = shipped_agent_path() is not None


@pytest.fixture(scope="module")
def server():
    """smear-serve's app under uvicorn on a free loopback port, in a thread."""
    need_browser()
    from smear_env.play.web import create_app

    agents = (["default"] if HAVE_SHIPPED else []) + ["heuristic", "random"]
    app = create_app(agents, hints=agents[:1] + ["pimc"])
    with serve_app(app) as port:
        yield f"http://127.0.0.1:{port}", app


@pytest.fixture(scope="module")
def browser():
    need_browser()
    d = make_driver()
    yield d
    d.quit()


@pytest.fixture(scope="module")
def browser2():
    need_browser()
    d = make_driver()
    yield d
    d.quit()


def _in_viewport(driver, element_id: str) -> bool:
    return driver.execute_script(
        "const r = document.getElementById(arguments[0]).getBoundingClientRect();"
        "return r.top >= -1 && r.bottom <= window.innerHeight + 1 && r.height > 0;", element_id)


def _set_rule(d, name: str, value: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    el = d.find_element(By.NAME, f"rule:{name}")
    if el.tag_name == "select":
        Select(el).select_by_value(value)
    else:
        el.clear()
        el.send_keys(value)
        d.execute_script("arguments[0].dispatchEvent(new Event('change'))", el)


def _legal(d):
    from selenium.webdriver.common.by import By

    return d.find_elements(By.CSS_SELECTOR, "#hand .card.legal, #moves button.move")


def test_a_whole_game_with_target_11_and_kitty_1_against_heuristic_with_hints(server, browser, shots):
    """Non-default rules: the form falls back from the shipped agent to heuristic and says why; every
    decision gets a hint table (one row per legal move, with a worth); moves by mouse and by keyboard; the
    last trick on demand; the hand-end panel in view at 1400x900; a reload keeps the history."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    url, app = server
    d = browser
    d.get(url + "/?speed=0")
    wait_for(d, lambda d: len(d.find_elements(By.CSS_SELECTOR, "select[name=right] option")) >= 2)
    _set_rule(d, "target_score", "11")
    _set_rule(d, "kitty_size", "1")
    wait_for(d, lambda d: d.execute_script("return document.querySelector('select[name=partner]').value")
          == "heuristic")
    if HAVE_SHIPPED:
        wait_for(d, lambda d: "kitty cards for the bidder: 1 (trained on: 3)"
              in d.find_element(By.ID, "agent-notes").text)
        opt = d.execute_script("const o = document.querySelector("
                               "'select[name=partner] option[value=default]'); return [o.disabled, o.title];")
        assert opt[0] is True and "trained on" in opt[1]
    for sel in ("partner", "left", "right"):
        Select(d.find_element(By.NAME, sel)).select_by_value("heuristic")
    d.find_element(By.NAME, "seed").send_keys("7")
    d.find_element(By.ID, "deal").click()
    wait_for(d, lambda d: is_visible(d, "#game") and is_idle(d))
    assert not is_visible(d, "#error"), d.find_element(By.ID, "error").text
    token = d.execute_script("return game.id")
    table = app.state.server.links[token][0]
    assert table.session.rules == SmearRules(target_score=11, kitty_size=1)
    assert table.session.names == ["human", "heuristic", "heuristic", "heuristic"]
    decisions = hand_end_shot = last_shot = hint_shot = reloaded = 0
    for _ in range(800):
        if d.find_elements(By.ID, "game-over"):
            break
        if is_visible(d, "#next"):
            assert is_visible(d, "#hand-end") and _in_viewport(d, "hand-end")
            panel = d.find_element(By.ID, "hand-end").text
            assert "High" in panel and "Score change" in panel and ("made" in panel or "went set" in panel)
            if not hand_end_shot:
                d.save_screenshot(str(shots / "web-hand-end.png"))
                hand_end_shot = 1
            d.find_element(By.TAG_NAME, "body").send_keys(Keys.ENTER)  # the next hand, from the keyboard
            wait_for(d, lambda d: is_idle(d) and not is_visible(d, "#next"))
            continue
        legal = _legal(d)
        assert legal, "it is the person's turn, and the page offers no legal move"
        view = d.execute_script("return state.view")
        d.find_element(By.ID, "hint").click()
        wait_for(d, lambda d: is_visible(d, "#hint-table"))
        rows = d.find_elements(By.CSS_SELECTOR, "#hint-table tr[data-action]")
        assert len(rows) == len(view["legal_actions"]), "one hint row per legal move"
        assert "worth" in d.find_element(By.ID, "hint-table").text
        if not hint_shot and view["phase"] == "PLAY" and len(rows) >= 3:
            d.save_screenshot(str(shots / "web-hint-other-rules.png"))
            hint_shot = 1
        if not last_shot and view["phase"] == "PLAY" and len(view["hand"]) <= 4 and not view["trick"]:
            d.find_element(By.ID, "last-trick").click()
            assert "Last trick:" in d.find_element(By.ID, "trick-note").text
            assert "won by" in d.find_element(By.ID, "trick-note").text
            d.save_screenshot(str(shots / "web-last-trick.png"))
            d.find_element(By.ID, "last-trick").click()
            last_shot = 1
        if not reloaded and decisions == 12:  # the history comes back from the server after a reload
            lines = len(d.find_elements(By.CSS_SELECTOR, "#log div"))
            d.refresh()
            wait_for(d, lambda d: is_visible(d, "#game") and is_idle(d))
            assert len(d.find_elements(By.CSS_SELECTOR, "#log div")) >= lines - 1
            reloaded = 1
            continue
        act(d, table, 0, typed=decisions % 2 == 1, k=decisions)  # by keyboard (typed names) or mouse
        decisions += 1
        wait_for(d, lambda d: is_idle(d) and not is_visible(d, "#hints"))
        assert not is_visible(d, "#error"), d.find_element(By.ID, "error").text
    assert d.find_elements(By.ID, "game-over"), "the game did not end in 800 steps"
    assert table.session.game.winner is not None and max(table.session.game.scores) >= 11
    assert decisions > 20 and hand_end_shot and hint_shot and reloaded
    assert not d.find_elements(By.CSS_SELECTOR, "#moves button.move")  # no bid buttons after the end
    assert d.execute_script("return state.view.scores") == list(table.session.game.scores)


def test_end_game_asks_first_and_then_removes_the_bid_buttons(server, browser, shots):
    """Under the default rules the hint table also shows the shipped agent's probability per move; "End
    game" asks first, and after it no move is offered."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    url, app = server
    d = browser
    d.get(url + "/?speed=0")
    wait_for(d, lambda d: len(d.find_elements(By.CSS_SELECTOR, "select[name=right] option")) >= 2)
    for sel in ("partner", "left", "right"):
        Select(d.find_element(By.NAME, sel)).select_by_value("random")
    d.find_element(By.NAME, "seed").send_keys("11")
    d.find_element(By.ID, "deal").click()
    wait_for(d, lambda d: is_visible(d, "#game") and is_idle(d))
    table = app.state.server.links[d.execute_script("return game.id")][0]
    for k in range(30):  # to a card play with a choice, for the hint screenshot
        v = d.execute_script("return state.view")
        if v["phase"] == "PLAY" and len(v["legal_actions"]) >= 3 or not v["legal_actions"]:
            break
        act(d, table, 0, typed=False, k=k + 1)
        wait_for(d, lambda d: is_idle(d))
    if d.execute_script("return state.view.legal_actions.length"):
        d.find_element(By.ID, "hint").click()
        wait_for(d, lambda d: is_visible(d, "#hint-table"))
        if HAVE_SHIPPED:
            assert "trained bot plays it" in d.find_element(By.ID, "hint-table").text
        d.save_screenshot(str(shots / "web-hint.png"))
    d.find_element(By.ID, "resign").click()
    assert is_visible(d, "#confirm-end") and not d.find_elements(By.ID, "game-over")
    d.find_element(By.ID, "resign-no").click()
    assert not is_visible(d, "#confirm-end") and is_visible(d, "#resign")
    d.find_element(By.ID, "resign").click()
    d.find_element(By.ID, "resign-yes").click()
    wait_for(d, lambda d: d.find_elements(By.ID, "game-over") and is_idle(d))
    assert not d.find_elements(By.CSS_SELECTOR, "#moves button.move, #hand .card.legal")
    assert not is_visible(d, "#resign")


def test_two_people_at_one_table_in_two_browsers_against_two_agents(server, browser, browser2):
    """Seat 1 deals with a friend as partner; the friend opens the private link in another browser; both
    pages follow each other's moves (polling) to the end of the game; each page holds only its own hand."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    url, app = server
    a, b = browser, browser2
    a.get(url + "/?speed=0&poll=150")
    wait_for(a, lambda d: len(d.find_elements(By.CSS_SELECTOR, "select[name=right] option")) >= 2)
    _set_rule(a, "target_score", "5")
    time.sleep(0.3)
    Select(a.find_element(By.NAME, "partner")).select_by_value("human")
    Select(a.find_element(By.NAME, "left")).select_by_value("heuristic")
    Select(a.find_element(By.NAME, "right")).select_by_value("heuristic")
    a.find_element(By.NAME, "seed").send_keys("3")
    a.find_element(By.ID, "deal").click()
    wait_for(a, lambda d: is_visible(d, "#links") and is_idle(d))
    link = a.find_element(By.CSS_SELECTOR, "#links input[data-seat='2']").get_attribute("value")
    spectator = a.find_element(By.CSS_SELECTOR, "#links input[data-seat='spectator']").get_attribute("value")
    assert link != spectator and "game=" in link
    b.get(link + "&speed=0&poll=150")
    wait_for(b, lambda d: is_visible(d, "#game") and is_idle(d))
    table = app.state.server.links[a.execute_script("return game.id")][0]
    assert table.session.humans == [0, 2] and b.execute_script("return game.seat") == 2
    moves = {0: 0, 2: 0}
    for _ in range(1500):
        if a.find_elements(By.ID, "game-over") and b.find_elements(By.ID, "game-over"):
            break
        acted = False
        for seat, d in ((0, a), (2, b)):
            if not is_idle(d):
                continue
            if d.execute_script("return state.view.legal_actions.length"):  # its turn: nothing moves now
                page_hand = set(d.execute_script("return state.view.hand"))
                assert page_hand == set(_hand_names(table.session.game, seat))
            try:  # the other page may have moved in between: then try again
                if is_visible(d, "#next"):
                    d.find_element(By.ID, "next").click()
                    acted = True
                    break
                if _legal(d) and not d.find_elements(By.ID, "game-over"):
                    act(d, table, seat, typed=False, k=moves[seat])
                    moves[seat] += 1
                    acted = True
                    break
            except WebDriverException:
                continue
        if not acted:
            time.sleep(0.05)
    assert a.find_elements(By.ID, "game-over") and b.find_elements(By.ID, "game-over")
    assert moves[0] > 5 and moves[2] > 5
    assert table.session.game.winner is not None
    for d in (a, b):
        wait_for(d, lambda d: is_idle(d))
        assert d.execute_script("return state.view.scores") == list(table.session.game.scores)


def _hand_names(game, seat):
    from smear_env.core.cards import CARD_NAMES, cards_of

    return [CARD_NAMES[c] for c in cards_of(game.hands[seat])]


def test_step_through_a_recorded_game_in_the_replay_viewer(server, browser, shots, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    url, _ = server
    specs = ["default", "heuristic", "default", "heuristic"] if HAVE_SHIPPED else ["heuristic", "random"] * 2
    rules = SmearRules() if HAVE_SHIPPED else SmearRules(target_score=5)
    agents = [make_agent(s, rules) for s in specs]
    rec, _ = play_game(agents, rules, seed=4, max_hands=3)
    rec["players"] = specs
    path = tmp_path / "game.json"
    save_records(path, rec)
    d = browser
    d.get(url + "/replay")
    Select(d.find_element(By.ID, "view-seat")).select_by_value("1")
    d.find_element(By.ID, "file").send_keys(str(path))
    wait_for(d, lambda d: is_visible(d, "#viewer"))
    n = int(d.find_element(By.ID, "counter").text.split("/")[1])
    assert n == sum(len(h["bids"]) + len(h.get("discards", [])) + ("trump" in h)
                    + sum(len(t["plays"]) for t in h.get("tricks", [])) + len(h.get("current_trick", []))
                    + 1 for h in rec["hands"]) - 1
    # the viewing seat (seat 2 on the page, index 1) sits at the bottom
    assert "seat 2 (" in d.find_element(By.CSS_SELECTOR, "#felt .seat.bottom .name").text
    seats = d.find_elements(By.CSS_SELECTOR, "#felt .seat")
    assert [len(s.find_elements(By.CSS_SELECTOR, ".faceup .card")) for s in seats] == [6, 6, 6, 6]
    table_text = d.find_element(By.ID, "scores").text
    assert "Team A" in table_text and "Team B" in table_text and " by seat " in table_text
    assert "- -" not in table_text and "– -" not in table_text  # negative scores use a real minus sign
    for _ in range(5):
        d.find_element(By.ID, "next").click()
    assert "step 5 /" in d.find_element(By.ID, "counter").text
    body = d.find_element(By.TAG_NAME, "body")
    saw_probs = saw_marks = False
    for k in range(6, min(n, 40) + 1):
        body.send_keys(Keys.ARROW_RIGHT)
        assert f"step {k} /" in d.find_element(By.ID, "counter").text
        if is_visible(d, "#probs"):
            saw_probs = True
        if is_visible(d, "#trick .card.win"):  # a finished trick: its leader's and its winning card marked
            assert is_visible(d, "#trick .card.lead") and "won by" in d.find_element(By.ID, "trick-note").text
            saw_marks = True
        if saw_probs and k >= 20:
            break
    if HAVE_SHIPPED:
        assert saw_probs, "the shipped agent's decisions show its action probabilities"
    assert saw_marks
    rows = d.find_elements(By.CSS_SELECTOR, "#scores tr[data-hand]")
    assert len(rows) == len(rec["hands"])
    body.send_keys(Keys.PAGE_DOWN)
    while not is_visible(d, "#hand-end") and "step" in d.find_element(By.ID, "counter").text:
        i = int(d.find_element(By.ID, "counter").text.split()[1])
        if i >= n:
            break
        body.send_keys(Keys.ARROW_RIGHT)
    assert is_visible(d, "#hand-end") and "Score change" in d.find_element(By.ID, "hand-end").text
    d.execute_script("document.getElementById('info').scrollIntoView()")
    d.save_screenshot(str(shots / "web-replay.png"))
    d.find_element(By.ID, "last").click()
    assert f"step {n} / {n}" in d.find_element(By.ID, "counter").text
