"""smear-serve in a real headless browser (Debian's chromium + chromedriver, driven by Selenium): a full hand
played through the page, then a recorded game stepped through in the replay viewer.

Without chromium the tests skip with the reason, unless ``SMEAR_REQUIRE_BROWSER=1`` (set by ``.ci/run``,
which installs it): then a missing browser is a failure. Screenshots go to a temporary folder, or to
``$SMEAR_SCREENSHOTS`` when set (``SMEAR_SCREENSHOTS=docs`` refreshes the ones in the README).
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

from smear_env.agents import make_agent
from smear_env.config import SmearRules
from smear_env.evaluation import play_game
from smear_env.play.cli import shipped_agent_path
from smear_env.record import save_records

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
         "--window-size=1200,1250")


def _need_browser() -> None:
    missing = [n for n, p in (("chromium", CHROMIUM), ("chromedriver", CHROMEDRIVER)) if p is None]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("the selenium Python package")
    if missing:
        reason = (f"browser tests need {', '.join(missing)} (apt-get install chromium chromium-driver; "
                  "pip install -e '.[dev]')")
        if os.environ.get("SMEAR_REQUIRE_BROWSER"):
            pytest.fail(reason + "; SMEAR_REQUIRE_BROWSER is set")
        pytest.skip(reason)


@pytest.fixture(scope="module")
def server():
    """smear-serve's app under uvicorn on a free loopback port, in a thread."""
    _need_browser()
    import uvicorn

    from smear_env.play.web import create_app

    agents = ["heuristic", "random"] + ([shipped_agent_path()] if shipped_agent_path() else [])
    app = create_app(agents)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(200):
        if srv.started:
            break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", app
    srv.should_exit = True
    thread.join(timeout=10)
    sock.close()


@pytest.fixture(scope="module")
def browser():
    _need_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for f in FLAGS:
        opts.add_argument(f)
    driver = webdriver.Chrome(options=opts, service=Service(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    where = os.environ.get("SMEAR_SCREENSHOTS")
    path = Path(where) if where else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _wait(driver, cond, timeout: float = 20.0):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(cond)


def _idle(driver) -> bool:
    return driver.execute_script("return !busy && state !== null")


def _visible(driver, css: str) -> bool:
    from selenium.webdriver.common.by import By

    return any(e.is_displayed() for e in driver.find_elements(By.CSS_SELECTOR, css))


def test_a_full_hand_through_the_page(server, browser, shots):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    url, app = server
    d = browser
    d.get(url + "/?speed=0")
    _wait(d, lambda d: len(d.find_elements(By.CSS_SELECTOR, "select[name=opponents] option")) >= 2)
    Select(d.find_element(By.NAME, "seat")).select_by_value("0")
    Select(d.find_element(By.NAME, "partner")).select_by_value("heuristic")
    Select(d.find_element(By.NAME, "opponents")).select_by_value("heuristic")
    target = d.find_element(By.NAME, "rule:target_score")
    target.clear()
    target.send_keys("3")
    d.find_element(By.NAME, "seed").send_keys("5")
    d.find_element(By.ID, "deal").click()
    _wait(d, lambda d: _visible(d, "#game") and _idle(d))
    game_id = d.execute_script("return game.id")
    assert len(game_id) >= 24  # secrets.token_urlsafe(18)
    moves = 0
    shot_taken = False
    for _ in range(80):
        if _visible(d, "#next") or d.find_elements(By.ID, "game-over"):
            break
        legal = d.find_elements(By.CSS_SELECTOR, "#hand .card.legal, #moves button.move")
        assert legal, "it is the person's turn, and the page offers no legal move"
        view = d.execute_script("return state.view")
        if not shot_taken and view["phase"] == "PLAY" and view["trick"] and len(view["hand"]) <= 4:
            d.save_screenshot(str(shots / "web-table.png"))
            shot_taken = True
        legal[-1].click()
        moves += 1
        _wait(d, lambda d: _idle(d))
        assert not _visible(d, "#error"), d.find_element(By.ID, "error").text
    assert moves >= 1
    result = d.find_element(By.ID, "result").text
    assert "Hand over" in result or "passed" in result
    # the page showed what the server holds: the seat view of the same game
    table = app.state.server.games[game_id]
    assert d.execute_script("return state.view.scores") == list(table.session.game.scores)
    if not shot_taken:
        d.save_screenshot(str(shots / "web-table.png"))
    # a game just played opens in the replay viewer once it is over
    if not d.find_elements(By.ID, "game-over"):
        d.find_element(By.ID, "resign").click()
        _wait(d, lambda d: d.find_elements(By.ID, "game-over"))
    d.find_element(By.CSS_SELECTOR, "#replay-link button").click()
    _wait(d, lambda d: _visible(d, "#viewer"))
    assert "step 0 /" in d.find_element(By.ID, "counter").text


def test_step_through_a_recorded_game_in_the_replay_viewer(server, browser, shots, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    url, _ = server
    ck = shipped_agent_path()
    specs = [ck, "heuristic", ck, "heuristic"] if ck else ["heuristic", "random", "heuristic", "random"]
    rules = SmearRules() if ck else SmearRules(target_score=5)
    agents = [make_agent(s, rules) for s in specs]
    rec, _ = play_game(agents, rules, seed=4, max_hands=3)
    path = tmp_path / "game.json"
    save_records(path, rec)
    d = browser
    d.get(url + "/replay")
    d.find_element(By.ID, "file").send_keys(str(path))
    _wait(d, lambda d: _visible(d, "#viewer"))
    n = int(d.find_element(By.ID, "counter").text.split("/")[1])
    assert n == sum(len(h["bids"]) + len(h.get("discards", [])) + ("trump" in h)
                    + sum(len(t["plays"]) for t in h.get("tricks", [])) + len(h.get("current_trick", []))
                    + 1 for h in rec["hands"]) - 1
    seats = d.find_elements(By.CSS_SELECTOR, "#felt .seat")
    assert [len(s.find_elements(By.CSS_SELECTOR, ".faceup .card")) for s in seats] == [6, 6, 6, 6]
    for _ in range(5):
        d.find_element(By.ID, "next").click()
    assert "step 5 /" in d.find_element(By.ID, "counter").text
    body = d.find_element(By.TAG_NAME, "body")
    saw_probs = False
    for k in range(6, min(n, 40) + 1):
        body.send_keys(Keys.ARROW_RIGHT)
        assert f"step {k} /" in d.find_element(By.ID, "counter").text
        if _visible(d, "#probs"):
            saw_probs = True
        if saw_probs and k >= 20:
            break
    if ck:
        assert saw_probs, "the shipped agent's decisions show its action probabilities"
    rows = d.find_elements(By.CSS_SELECTOR, "#scores tr[data-hand]")
    assert len(rows) == len(rec["hands"])
    d.save_screenshot(str(shots / "web-replay.png"))
    d.find_element(By.ID, "last").click()
    assert f"step {n} / {n}" in d.find_element(By.ID, "counter").text
