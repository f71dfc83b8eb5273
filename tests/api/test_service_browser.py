"""The status page in a real browser: Debian's headless Chromium, driven through its
chromedriver (``scripts/service-test-deps.sh`` installs both). It loads ``/``, uses the lookup
box, saves a screenshot and checks what the page shows."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.support.service import LiveServer

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.skip("Debian's chromium and chromium-driver are not installed (make test-deps)")
    webdriver = pytest.importorskip("selenium.webdriver")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tmp_path_factory.mktemp("chromium-profile")
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1400,1800",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(CHROMEDRIVER))
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def _screenshot_dir(tmp_path: Path) -> Path:
    where = os.environ.get("OFFSETS_AUDITOR_SCREENSHOTS")
    path = Path(where) if where else tmp_path
    path.mkdir(parents=True, exist_ok=True)
    return path


def test_status_page_in_chromium(browser, live_server: LiveServer, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(live_server.url + "/")
    assert browser.title == "offsets-auditor"
    rows = browser.find_elements(By.CSS_SELECTOR, "#partitions tr.partition")
    assert len(rows) == 20
    first = rows[0].text
    assert "never" in first  # never-compacted partitions first
    charts = browser.find_elements(By.CSS_SELECTOR, "svg.map-chart")
    assert len(charts) >= 16 and all(c.size["width"] > 100 for c in charts)
    alerts = browser.find_element(By.ID, "alerts").text
    assert "OffsetsCleanerThreadDeath" in alerts and "OffsetsPartitionBlocked" in alerts
    assert (
        "log.cleaner.dedupe.buffer.size=1644816"
        in browser.find_element(By.ID, "recommendations").text
    )

    box = browser.find_element(By.ID, "group")
    box.clear()
    box.send_keys("usercenter")
    browser.find_element(By.ID, "lookup-button").click()
    WebDriverWait(browser, 15).until(
        expected_conditions.presence_of_element_located((By.ID, "lookup-result"))
    )
    answer = browser.find_element(By.ID, "lookup-result").text
    assert "Group usercenter" in answer
    assert "coordinated by __consumer_offsets-0 of 4" in answer
    assert browser.current_url.endswith("/?group=usercenter")
    shot = _screenshot_dir(tmp_path) / "status-page.png"
    assert browser.save_screenshot(str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000

    # an id with a slash, a space and a character outside the BMP, typed into the box
    box = browser.find_element(By.ID, "group")
    box.clear()
    box.send_keys("team a/consumer-\u00e9")
    browser.find_element(By.ID, "lookup-button").click()
    WebDriverWait(browser, 15).until(expected_conditions.url_contains("consumer"))
    from offsets_auditor.coordinator import coordinator_partition

    expected = coordinator_partition("team a/consumer-\u00e9", 4)
    text = browser.find_element(By.ID, "lookup-result").text
    assert f"coordinated by __consumer_offsets-{expected} of 4" in text
    assert "is not in this run's data" in text
