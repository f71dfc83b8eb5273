"""The status page in a real browser: Debian's headless Chromium, driven through its
chromedriver (``scripts/service-test-deps.sh`` installs both), at 1400 and 1024 px and a
phone's 390 px. It checks what a person sees: the first problem above the fold, critical
before warning, no bar green on a partition that does not compact, the quiet partitions
folded away with their counts, log dirs on one line, nothing wider than the screen; it uses
the lookup box and saves screenshots (``OFFSETS_AUDITOR_SCREENSHOTS=DIR`` keeps them: the
ones in ``docs/screenshots/`` come from here, through ``scripts/screenshots.sh``)."""

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


@pytest.fixture(scope="module")
def phone(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Chromium as a phone: a 390 x 844 viewport (mobile emulation; a headless window is
    never narrower than 500 px)."""
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.skip("Debian's chromium and chromium-driver are not installed (make test-deps)")
    webdriver = pytest.importorskip("selenium.webdriver")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tmp_path_factory.mktemp("chromium-phone")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.add_experimental_option(
        "mobileEmulation", {"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 1}}
    )
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(CHROMEDRIVER))
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def _screenshot_dir(tmp_path: Path) -> Path:
    where = os.environ.get("OFFSETS_AUDITOR_SCREENSHOTS")
    path = Path(where) if where else tmp_path
    path.mkdir(parents=True, exist_ok=True)
    return path


def _viewport(browser, width: int, height: int) -> None:  # type: ignore[no-untyped-def]
    browser.set_window_size(width, height)
    inner = browser.execute_script("return [window.innerWidth, window.innerHeight]")
    if inner != [width, height]:  # the window's frame: size the viewport itself
        browser.set_window_size(2 * width - inner[0], 2 * height - inner[1])


def _what_a_person_sees(browser) -> dict:  # type: ignore[no-untyped-def]
    """Positions, sizes and visibility of what the page leads with, measured in the page."""
    return browser.execute_script(
        """
        const box = e => e.getBoundingClientRect();
        const cards = [...document.querySelectorAll('#problems .card.problem')];
        const paths = [...document.querySelectorAll('#problems .path')];
        const line = parseFloat(getComputedStyle(document.body).lineHeight);
        return {
          innerWidth: window.innerWidth, innerHeight: window.innerHeight,
          scrollWidth: document.documentElement.scrollWidth,
          widest: Math.max(...[...document.body.querySelectorAll('*')].map(e => box(e).right)),
          kinds: cards.map(c => c.dataset.kind),
          titles: cards.map(c => c.querySelector('h3').innerText),
          firstTop: cards.length ? box(cards[0]).top : null,
          firstBottom: cards.length ? box(cards[0].querySelector('h3')).bottom : null,
          bars: cards.map(c => { const r = c.querySelectorAll('svg.map-chart rect')[1];
                                 return r ? r.getAttribute('fill') : null; }),
          never: cards.map(c => !!c.querySelector('.never')),
          pathLines: paths.map(p => box(p).height / line),
          folded: [...document.querySelectorAll('#others details')].map(d => ({
            open: d.open, summary: d.querySelector('summary').innerText,
            shown: [...d.querySelectorAll('li')].filter(li => li.checkVisibility()).length})),
        };
        """
    )


@pytest.mark.parametrize("width,height", [(1400, 900), (1024, 768)], ids=["1400px", "1024px"])
def test_status_page_leads_with_what_is_wrong(  # type: ignore[no-untyped-def]
    browser, live_server: LiveServer, tmp_path: Path, width: int, height: int
) -> None:
    from selenium.webdriver.common.by import By

    _viewport(browser, width, height)
    browser.get(live_server.url + "/")
    assert browser.title == "offsets-auditor"
    seen = _what_a_person_sees(browser)
    assert (seen["innerWidth"], seen["innerHeight"]) == (width, height)
    # nothing wider than the screen (the table used to overflow to 1,134 px at 1024)
    assert seen["scrollWidth"] <= width and seen["widest"] <= width + 0.5
    # problems first, critical before warning, and the first one above the fold
    kinds = seen["kinds"]
    assert kinds[0] == "critical" and kinds == sorted(kinds, key=["critical", "warning"].index)
    assert kinds.count("critical") == 3 and "warning" in kinds
    assert seen["firstTop"] > 0 and seen["firstBottom"] < height
    assert browser.find_elements(By.CSS_SELECTOR, "#problems .card.problem")[0].is_displayed()
    titles = seen["titles"]
    assert any("__consumer_offsets-2: its cleaner thread dies on it" in t for t in titles)
    blocked = next(i for i, t in enumerate(titles) if "no cleaner thread is left" in t)
    # the blocked (critical) partition's dirty section fits the map, but it is never green
    assert seen["bars"][blocked] == "#b00020"
    assert "#2e7d32" not in [b for b, k in zip(seen["bars"], kinds, strict=True) if k]
    # log dirs on one line (they wrapped every 13 characters: rows six lines tall)
    assert seen["pathLines"] and max(seen["pathLines"]) < 1.5
    # the quiet partitions folded away, with their counts
    folded = {f["summary"].split(" (")[0]: f for f in seen["folded"]}
    assert set(folded) == {"Healthy", "Nothing to clean", "Empty"}
    assert all(not f["open"] and f["shown"] == 0 for f in folded.values()), folded
    assert folded["Nothing to clean"]["summary"] != "Nothing to clean (0)"
    # "never compacted" only where it matters: never on a partition of one active segment
    page = browser.find_element(By.TAG_NAME, "body").text
    assert page.count("never compacted") == sum(seen["never"])
    # each alert says its setting once
    for alert in browser.find_elements(By.CSS_SELECTOR, "#alerts .card"):
        assert alert.text.count("log.cleaner.dedupe.buffer.size=") <= 1, alert.text
    recommendations = browser.find_element(By.ID, "recommendations").text
    assert "log.cleaner.dedupe.buffer.size=1644816 at least" in recommendations
    assert "with room for a day's growth" in recommendations and "of broker heap" in recommendations
    shot = _screenshot_dir(tmp_path) / f"status-{width}.png"
    assert browser.save_screenshot(str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


def test_status_page_on_a_phone(phone, live_server: LiveServer, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    phone.get(live_server.url + "/")
    seen = _what_a_person_sees(phone)
    assert seen["innerWidth"] == 390
    assert seen["scrollWidth"] <= 390 and seen["widest"] <= 390.5  # no sideways scrolling
    assert seen["kinds"][0] == "critical" and seen["firstBottom"] < seen["innerHeight"]
    shot = _screenshot_dir(tmp_path) / "status-phone.png"
    assert phone.save_screenshot(str(shot))


def test_the_lookup_box_in_chromium(browser, live_server: LiveServer, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    _viewport(browser, 1024, 768)
    browser.get(live_server.url + "/")
    box = browser.find_element(By.ID, "group")
    box.clear()
    box.send_keys("usercenter")
    browser.find_element(By.ID, "lookup-button").click()
    WebDriverWait(browser, 15).until(
        expected_conditions.presence_of_element_located((By.ID, "lookup-result"))
    )
    answer = browser.find_element(By.ID, "lookup-result")
    assert "Group usercenter" in answer.text
    assert "coordinated by __consumer_offsets-0 of 4" in answer.text
    assert "broker None" not in answer.text
    assert "never compacted" not in answer.text  # 0 B, or only an active segment: no matter
    assert browser.current_url.endswith("/?group=usercenter")
    assert answer.location["y"] < 768  # the answer is what the person sees first
    shot = _screenshot_dir(tmp_path) / "lookup-1024.png"
    assert browser.save_screenshot(str(shot))

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
    assert "no offsets of it in the served data" in text

    # the empty id: said as such, and no sentence ends on a dangling "but"
    browser.get(live_server.url + "/?group=")
    text = browser.find_element(By.ID, "lookup-result").text
    assert "the empty group id" in text and "(Java hashCode 0)" in text
    assert not [line for line in text.splitlines() if line.rstrip().endswith(("but", "but,"))]


def test_docs_render_offline_in_chromium(browser, live_server: LiveServer) -> None:  # type: ignore[no-untyped-def]
    """/docs was blank without a CDN: Swagger UI came from one. This machine reaches none."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(live_server.url + "/docs")
    WebDriverWait(browser, 30).until(
        lambda b: len(b.find_elements(By.CSS_SELECTOR, ".opblock-summary-path")) > 10
    )
    paths = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".opblock-summary-path")]
    assert any("coordinator-partition" in p for p in paths)
