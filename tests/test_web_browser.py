"""smear-serve in a real headless browser (Debian's chromium + chromedriver, driven by Selenium): a whole game
under non-default rules against heuristic with a hint at every decision (keyboard and mouse, last trick,
the hand-end panel, a reload), the "End game" confirmation, two people at one table in two browser
sessions against two agents, and a recorded game stepped through in the replay viewer.

Without chromium the tests skip with the reason, unless ``SMEAR_REQUIRE_BROWSER=1`` (set by ``.ci/run``,
which installs it): then a missing browser is a failure. Screenshots go to a temporary folder, or to
``$SMEAR_SCREENSHOTS`` when set (``SMEAR_SCREENSHOTS=docs/img`` refreshes the ones in the docs).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from smear_env.actions import action_name
from smear_env.agents import make_agent
from smear_env.config import SmearRules
from smear_env.evaluation import play_game
from smear_env.play.cli import shipped_agent_path
from smear_env.record import save_records
from tests.play_helpers import serve_app

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
         "--window-size=1400,900")
HAVE_SHIPPED = shipped_agent_path() is not None


def _need_browser() -> None:
    missing = [n for n, p in (("chromium", CHROMIUM), ("chromedriver", CHROMEDRIVER)) if p is None]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("the selenium Python package")
    if missing:
        reason = (f"browser tests need {', '.join(missing)} (apt-get install chromium chromium-driver, or "
                  "make browser as root; pip install -e '.[dev]')")
        if os.environ.get("SMEAR_REQUIRE_BROWSER"):
            pytest.fail(reason + "; SMEAR_REQUIRE_BROWSER is set")
        pytest.skip(reason)


@pytest.fixture(scope="module")
def server():
    """smear-serve's app under uvicorn on a free loopback port, in a thread."""
    _need_browser()
    from smear_env.play.web import create_app

    agents = (["default"] if HAVE_SHIPPED else []) + ["heuristic", "random"]
    app = create_app(agents, hints=agents[:1] + ["pimc"])
    with serve_app(app) as port:
        yield f"http://127.0.0.1:{port}", app


def _driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for f in FLAGS:
        opts.add_argument(f)
    driver = webdriver.Chrome(options=opts, service=Service(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(30)
    return driver


@pytest.fixture(scope="module")
def browser():
    _need_browser()
    d = _driver()
    yield d
    d.quit()


@pytest.fixture(scope="module")
def browser2():
    _need_browser()
    d = _driver()
    yield d
    d.quit()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    where = os.environ.get("SMEAR_SCREENSHOTS")
    path = Path(where) if where else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _wait(driver, cond, timeout: float = 30.0):
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.05,
                         ignored_exceptions=[StaleElementReferenceException]).until(cond)


def _idle(driver) -> bool:
    return driver.execute_script("return !busy && state !== null")


def _visible(driver, css: str) -> bool:
    """Some element matching ``css`` is shown (one script call: no stale element between find and ask)."""
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].some((e) => e.getClientRects().length > 0);",
        css)


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


def _state(d):
    return d.execute_script("return state")


def _keys(d, text: str) -> None:
    from selenium.webdriver.common.by import By

    d.find_element(By.TAG_NAME, "body").send_keys(text)


def _typed(card: str, ten_as_t: bool = False) -> str:
    """What a person types for a card: ``10d`` (or ``td``), ``9c``, ``qh``."""
    rank = card[0]
    return ("t" if ten_as_t else "10") + card[1].lower() if rank == "T" else rank.lower() + card[1].lower()


def _seat_actions(table, seat: int) -> list[str]:
    return [action_name(a) for _, (actor, a, _, _) in table.log if actor == seat]


def _act(d, table, seat: int, typed: bool, k: int) -> list[str]:
    """One decision of ``seat`` on page ``d``, typed or clicked; returns the moves it should have made."""
    from selenium.webdriver.common.by import By

    st = _state(d)
    v = st["view"]
    names = [a["name"] for a in v["legal_actions"]]
    phase = v["phase"]
    if phase == "BIDDING":
        bids = [n for n in names if n.startswith("bid")]
        pick = bids[0] if bids and (k % 3 == 0 or "pass" not in names) else "pass"
        if typed:
            _keys(d, "p" if pick == "pass" else pick[-1])
        else:
            d.find_element(By.CSS_SELECTOR, f"#moves button.move[data-action='"
                                            f"{v['legal_actions'][names.index(pick)]['id']}']").click()
        return [pick]
    if phase == "TRUMP":
        pick = names[k % len(names)]
        if typed:
            _keys(d, pick[-1].lower())
        else:
            d.find_element(By.CSS_SELECTOR, f"#moves button.move[data-action='"
                                            f"{v['legal_actions'][names.index(pick)]['id']}']").click()
        return [pick]
    if phase == "DISCARD":
        need = v["kitty_size"] - len(v["discards"])
        cards = [n.split()[1] for n in names]
        cards.sort(key=lambda c: (c[0] != "7", c[0] != "T", c))  # 7s and tens first: "7h", "10d" typed
        picks = cards[:need]
        extra = cards[need] if len(cards) > need else None
        if typed:
            if extra:  # a card picked by mistake, taken back with Undo
                _keys(d, _typed(extra))
                _wait(d, lambda d: d.execute_script("return chosen.length") == 1)
                d.find_element(By.ID, "discard-undo").click()
                assert d.execute_script("return chosen.length") == 0
            for c in picks:
                _keys(d, _typed(c, ten_as_t=k % 2 == 1))
            _wait(d, lambda d: d.execute_script("return chosen.length") == need)
            assert "Discard" in d.find_element(By.ID, "discard-ok").text
            _keys(d, "\ue007")  # Enter: the one confirm
        else:
            def click(card: str) -> None:
                d.find_element(By.CSS_SELECTOR, f"#hand .card[data-card='{card}']").click()

            if extra:  # a card clicked twice is taken back
                click(extra)
                assert d.execute_script("return chosen") == [extra]
                click(extra)
                assert d.execute_script("return chosen") == []
            for c in picks:
                assert not d.find_element(By.ID, "discard-ok").is_enabled()
                click(c)
            if extra:  # one too many: refused with a word, the picks kept
                click(extra)
                assert "take one back" in d.find_element(By.ID, "error").text
                assert d.execute_script("return chosen") == picks
            d.find_element(By.ID, "discard-ok").click()
        return [f"discard {c}" for c in picks]
    assert phase == "PLAY"
    cards = [n.split()[1] for n in names]
    tens = [c for c in cards if c[0] == "T"]
    pick = tens[0] if tens else cards[k % len(cards)]
    if typed:
        _keys(d, _typed(pick, ten_as_t=k % 4 == 1))
    else:
        d.find_element(By.CSS_SELECTOR, f"#hand .card.legal[data-card='{pick}']").click()
    return [f"play {pick}"]


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
    _wait(d, lambda d: len(d.find_elements(By.CSS_SELECTOR, "select[name=right] option")) >= 2)
    _set_rule(d, "target_score", "11")
    _set_rule(d, "kitty_size", "1")
    _wait(d, lambda d: d.execute_script("return document.querySelector('select[name=partner]').value")
          == "heuristic")
    if HAVE_SHIPPED:
        _wait(d, lambda d: "kitty cards for the bidder: 1 (trained on: 3)"
              in d.find_element(By.ID, "agent-notes").text)
        opt = d.execute_script("const o = document.querySelector("
                               "'select[name=partner] option[value=default]'); return [o.disabled, o.title];")
        assert opt[0] is True and "trained on" in opt[1]
    for sel in ("partner", "left", "right"):
        Select(d.find_element(By.NAME, sel)).select_by_value("heuristic")
    d.find_element(By.NAME, "seed").send_keys("7")
    d.find_element(By.ID, "deal").click()
    _wait(d, lambda d: _visible(d, "#game") and _idle(d))
    assert not _visible(d, "#error"), d.find_element(By.ID, "error").text
    token = d.execute_script("return game.id")
    table = app.state.server.links[token][0]
    assert table.session.rules == SmearRules(target_score=11, kitty_size=1)
    assert table.session.names == ["human", "heuristic", "heuristic", "heuristic"]
    decisions = hand_end_shot = last_shot = hint_shot = reloaded = 0
    for _ in range(800):
        if d.find_elements(By.ID, "game-over"):
            break
        if _visible(d, "#next"):
            assert _visible(d, "#hand-end") and _in_viewport(d, "hand-end")
            panel = d.find_element(By.ID, "hand-end").text
            assert "High" in panel and "Score change" in panel and ("made" in panel or "went set" in panel)
            if not hand_end_shot:
                d.save_screenshot(str(shots / "web-hand-end.png"))
                hand_end_shot = 1
            d.find_element(By.TAG_NAME, "body").send_keys(Keys.ENTER)  # the next hand, from the keyboard
            _wait(d, lambda d: _idle(d) and not _visible(d, "#next"))
            continue
        legal = _legal(d)
        assert legal, "it is the person's turn, and the page offers no legal move"
        view = d.execute_script("return state.view")
        d.find_element(By.ID, "hint").click()
        _wait(d, lambda d: _visible(d, "#hint-table"))
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
            _wait(d, lambda d: _visible(d, "#game") and _idle(d))
            assert len(d.find_elements(By.CSS_SELECTOR, "#log div")) >= lines - 1
            reloaded = 1
            continue
        _act(d, table, 0, typed=decisions % 2 == 1, k=decisions)  # by keyboard (typed names) or mouse
        decisions += 1
        _wait(d, lambda d: _idle(d) and not _visible(d, "#hints"))
        assert not _visible(d, "#error"), d.find_element(By.ID, "error").text
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
    _wait(d, lambda d: len(d.find_elements(By.CSS_SELECTOR, "select[name=right] option")) >= 2)
    for sel in ("partner", "left", "right"):
        Select(d.find_element(By.NAME, sel)).select_by_value("random")
    d.find_element(By.NAME, "seed").send_keys("11")
    d.find_element(By.ID, "deal").click()
    _wait(d, lambda d: _visible(d, "#game") and _idle(d))
    table = app.state.server.links[d.execute_script("return game.id")][0]
    for k in range(30):  # to a card play with a choice, for the hint screenshot
        v = d.execute_script("return state.view")
        if v["phase"] == "PLAY" and len(v["legal_actions"]) >= 3 or not v["legal_actions"]:
            break
        _act(d, table, 0, typed=False, k=k + 1)
        _wait(d, lambda d: _idle(d))
    if d.execute_script("return state.view.legal_actions.length"):
        d.find_element(By.ID, "hint").click()
        _wait(d, lambda d: _visible(d, "#hint-table"))
        if HAVE_SHIPPED:
            assert "trained bot plays it" in d.find_element(By.ID, "hint-table").text
        d.save_screenshot(str(shots / "web-hint.png"))
    d.find_element(By.ID, "resign").click()
    assert _visible(d, "#confirm-end") and not d.find_elements(By.ID, "game-over")
    d.find_element(By.ID, "resign-no").click()
    assert not _visible(d, "#confirm-end") and _visible(d, "#resign")
    d.find_element(By.ID, "resign").click()
    d.find_element(By.ID, "resign-yes").click()
    _wait(d, lambda d: d.find_elements(By.ID, "game-over") and _idle(d))
    assert not d.find_elements(By.CSS_SELECTOR, "#moves button.move, #hand .card.legal")
    assert not _visible(d, "#resign")


def test_two_people_at_one_table_in_two_browsers_against_two_agents(server, browser, browser2):
    """Seat 1 deals with a friend as partner; the friend opens the private link in another browser; both
    pages follow each other's moves (polling) to the end of the game; each page holds only its own hand."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    url, app = server
    a, b = browser, browser2
    a.get(url + "/?speed=0&poll=150")
    _wait(a, lambda d: len(d.find_elements(By.CSS_SELECTOR, "select[name=right] option")) >= 2)
    _set_rule(a, "target_score", "5")
    time.sleep(0.3)
    Select(a.find_element(By.NAME, "partner")).select_by_value("human")
    Select(a.find_element(By.NAME, "left")).select_by_value("heuristic")
    Select(a.find_element(By.NAME, "right")).select_by_value("heuristic")
    a.find_element(By.NAME, "seed").send_keys("3")
    a.find_element(By.ID, "deal").click()
    _wait(a, lambda d: _visible(d, "#links") and _idle(d))
    link = a.find_element(By.CSS_SELECTOR, "#links input[data-seat='2']").get_attribute("value")
    spectator = a.find_element(By.CSS_SELECTOR, "#links input[data-seat='spectator']").get_attribute("value")
    assert link != spectator and "game=" in link
    b.get(link + "&speed=0&poll=150")
    _wait(b, lambda d: _visible(d, "#game") and _idle(d))
    table = app.state.server.links[a.execute_script("return game.id")][0]
    assert table.session.humans == [0, 2] and b.execute_script("return game.seat") == 2
    moves = {0: 0, 2: 0}
    for _ in range(1500):
        if a.find_elements(By.ID, "game-over") and b.find_elements(By.ID, "game-over"):
            break
        acted = False
        for seat, d in ((0, a), (2, b)):
            if not _idle(d):
                continue
            if d.execute_script("return state.view.legal_actions.length"):  # its turn: nothing moves now
                page_hand = set(d.execute_script("return state.view.hand"))
                assert page_hand == set(_hand_names(table.session.game, seat))
            try:  # the other page may have moved in between: then try again
                if _visible(d, "#next"):
                    d.find_element(By.ID, "next").click()
                    acted = True
                    break
                if _legal(d) and not d.find_elements(By.ID, "game-over"):
                    _act(d, table, seat, typed=False, k=moves[seat])
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
        _wait(d, lambda d: _idle(d))
        assert d.execute_script("return state.view.scores") == list(table.session.game.scores)


def _hand_names(game, seat):
    from smear_env.cards import CARD_NAMES, cards_of

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
    _wait(d, lambda d: _visible(d, "#viewer"))
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
        if _visible(d, "#probs"):
            saw_probs = True
        if _visible(d, "#trick .card.win"):  # a finished trick: its leader's and its winning card marked
            assert _visible(d, "#trick .card.lead") and "won by" in d.find_element(By.ID, "trick-note").text
            saw_marks = True
        if saw_probs and k >= 20:
            break
    if HAVE_SHIPPED:
        assert saw_probs, "the shipped agent's decisions show its action probabilities"
    assert saw_marks
    rows = d.find_elements(By.CSS_SELECTOR, "#scores tr[data-hand]")
    assert len(rows) == len(rec["hands"])
    body.send_keys(Keys.PAGE_DOWN)
    while not _visible(d, "#hand-end") and "step" in d.find_element(By.ID, "counter").text:
        i = int(d.find_element(By.ID, "counter").text.split()[1])
        if i >= n:
            break
        body.send_keys(Keys.ARROW_RIGHT)
    assert _visible(d, "#hand-end") and "Score change" in d.find_element(By.ID, "hand-end").text
    d.execute_script("document.getElementById('info').scrollIntoView()")
    d.save_screenshot(str(shots / "web-replay.png"))
    d.find_element(By.ID, "last").click()
    assert f"step {n} / {n}" in d.find_element(By.ID, "counter").text
