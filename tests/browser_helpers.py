"""Browser helpers shared by the smear-serve browser tests (tests/test_web_browser.py,
tests/test_web_table_browser.py): chromium and chromedriver found on the PATH, a headless driver, waits,
the page's state, and one decision of a seat made by typing or clicking."""

from __future__ import annotations

import os
import shutil

import pytest

from smear_env.core.actions import action_name

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
         "--window-size=1400,900")


def need_browser() -> None:
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


def make_driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for f in FLAGS:
        opts.add_argument(f)
    driver = webdriver.Chrome(options=opts, service=Service(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(30)
    return driver


def wait_for(driver, cond, timeout: float = 30.0):
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.05,
                         ignored_exceptions=[StaleElementReferenceException]).until(cond)


def is_idle(driver) -> bool:
    return driver.execute_script("return !busy && state !== null")


def is_visible(driver, css: str) -> bool:
    """Some element matching ``css`` is shown (one script call: no stale element between find and ask)."""
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].some((e) => e.getClientRects().length > 0);",
        css)


def page_state(d):
    return d.execute_script("return state")


def send_keys(d, text: str) -> None:
    from selenium.webdriver.common.by import By

    d.find_element(By.TAG_NAME, "body").send_keys(text)


def typed_name(card: str, ten_as_t: bool = False) -> str:
    """What a person types for a card: ``10d`` (or ``td``), ``9c``, ``qh``."""
    rank = card[0]
    return ("t" if ten_as_t else "10") + card[1].lower() if rank == "T" else rank.lower() + card[1].lower()


def seat_actions(table, seat: int) -> list[str]:
    return [action_name(a) for _, (actor, a, _, _) in table.log if actor == seat]


def act(d, table, seat: int, typed: bool, k: int) -> list[str]:
    """One decision of ``seat`` on page ``d``, typed or clicked; returns the moves it should have made."""
    from selenium.webdriver.common.by import By

    st = page_state(d)
    v = st["view"]
    names = [a["name"] for a in v["legal_actions"]]
    phase = v["phase"]
    if phase == "BIDDING":
        bids = [n for n in names if n.startswith("bid")]
        pick = bids[0] if bids and (k % 3 == 0 or "pass" not in names) else "pass"
        if typed:
            send_keys(d, "p" if pick == "pass" else pick[-1])
        else:
            d.find_element(By.CSS_SELECTOR, f"#moves button.move[data-action='"
                                            f"{v['legal_actions'][names.index(pick)]['id']}']").click()
        return [pick]
    if phase == "TRUMP":
        pick = names[k % len(names)]
        if typed:
            send_keys(d, pick[-1].lower())
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
                send_keys(d, typed_name(extra))
                wait_for(d, lambda d: d.execute_script("return chosen.length") == 1)
                d.find_element(By.ID, "discard-undo").click()
                assert d.execute_script("return chosen.length") == 0
            for c in picks:
                send_keys(d, typed_name(c, ten_as_t=k % 2 == 1))
            wait_for(d, lambda d: d.execute_script("return chosen.length") == need)
            assert "Discard" in d.find_element(By.ID, "discard-ok").text
            send_keys(d, "\ue007")  # Enter: the one confirm
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
        send_keys(d, typed_name(pick, ten_as_t=k % 4 == 1))
    else:
        d.find_element(By.CSS_SELECTOR, f"#hand .card.legal[data-card='{pick}']").click()
    return [f"play {pick}"]
