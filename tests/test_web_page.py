"""The web page of ``wh40k serve`` in headless Chromium (Debian's ``/usr/bin/chromium``, driven by
Playwright; ``.ci/chromium.sh`` installs it in CI): a real search as you type, a click, an attack,
and the numbers shown checked against the API's answer; a rule looked up by name.

Skips, saying why, where Chromium or Playwright is absent (``playwright install`` is never run:
it downloads a browser of its own)."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest

from tests.editions_db import editions_db
from tests.service_server import served

CHROMIUM = Path(os.environ.get("WH40K_CHROMIUM", "/usr/bin/chromium"))
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason=(
    f"no Chromium at {CHROMIUM}: install Debian's with `apt-get install -y chromium` (.ci/chromium.sh)"))


@pytest.fixture(scope="module")
def base_url():
    with served(editions_db()) as base:
        yield base


@pytest.fixture(scope="module")
def page(base_url):
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        try:
            page = browser.new_page()
            page.set_default_timeout(30_000)
            page.goto(base_url + "/")
            page.wait_for_selector("#info:has-text('editions 10, 11')")
            yield page
        finally:
            browser.close()


def shown_table(page, selector: str) -> list[list[str]]:
    return page.eval_on_selector_all(f"{selector} tbody tr",
                                     "rows => rows.map(r => [...r.cells].map(c => c.textContent))")


def test_search_as_you_type_click_resolve_and_the_numbers_are_the_apis(page, base_url):
    page.fill("#attacker", "")
    page.type("#attacker", "sisters", delay=20)
    page.wait_for_selector("#attacker-list li")
    offered = page.eval_on_selector_all("#attacker-list li", "items => items.map(i => i.textContent)")
    # datasheets of either edition
    assert "Battle Sisters Squad (edition 10, adepta-sororitas)" in offered
    assert "Battle Sisters Squad (edition 11, adepta-sororitas)" in offered
    page.click("#attacker-list li:has-text('Battle Sisters Squad (edition 10')")
    assert page.input_value("#attacker") == "Battle Sisters Squad"
    assert page.text_content("#attacker-chosen") == "10e/adepta-sororitas/battle-sisters-squad"

    page.type("#target", "ME", delay=20)
    page.wait_for_selector("#target-list li:has-text('MEQ: T4 Sv3+ W2 x10 INFANTRY')")
    page.click("#target-list li:has-text('MEQ')")
    page.check("#half_range")
    page.select_option("#edition", "10")
    page.click("#resolve")
    page.wait_for_selector("#result:not([hidden]) #stages tbody tr")

    answer = httpx.post(f"{base_url}/api/attack", json={
        "attacker": "10e/adepta-sororitas/battle-sisters-squad", "target": "MEQ", "phase": "shooting",
        "weapons": [], "half_range": True, "stationary": False, "charged": False, "cover": False,
        "overwatch": False, "hit_modifier": 0, "wound_modifier": 0, "critical_hit_on": 6, "edition": 10},
        timeout=60).json()
    stages = shown_table(page, "#stages")
    assert [row[0] for row in stages] == ["attacks", "hits", "wounds", "unsaved", "mortal_wounds", "damage",
                                          "models_destroyed"]
    assert [row[1] for row in stages] == [f"{answer[row[0]]['mean']:.4f}" for row in stages]
    killed = answer["models_destroyed"]["pmf"]
    table = shown_table(page, "#table-models_destroyed")
    assert [row[1] for row in table] == [f"{p:.4f}" for p in killed[:len(table)]]
    assert [row[2] for row in table] == [f"{min(1.0, sum(killed[k:])):.4f}" for k in range(len(table))]
    assert table[0] == ["0", f"{killed[0]:.4f}", "1.0000"]
    # the chart: one bar per k shown, its height P(exactly k)
    bars = page.eval_on_selector_all("#chart-models_destroyed svg rect.bar-exact",
                                     "bars => bars.map(b => [Number(b.dataset.k), Number(b.dataset.p)])")
    assert bars == [[k, killed[k]] for k in range(len(table))]
    assert page.locator("#chart-damage svg rect.bar-exact").count() >= 2
    assert page.locator("#chart-models_destroyed svg polyline.line-at-least").count() == 1
    assert page.text_content("#destroyed") == f"P(target unit destroyed) = {answer['target_destroyed']:.4f}"
    # the --explain steps with their rules
    steps = shown_table(page, "#explain")
    assert [row[3] for row in steps] == [e["summary"] for e in answer["explain"]]
    assert len(steps) == len(answer["explain"]) > 3


def test_an_inline_profile_is_offered_and_an_error_is_shown(page):
    page.fill("#target", "")
    page.type("#target", "T5 Sv4+ W3 x3", delay=10)
    page.wait_for_selector("#target-list li:has-text('inline profile: T5 Sv4+ W3 x3')")
    page.click("#target-list li:has-text('inline profile')")
    page.click("#resolve")
    page.wait_for_function("document.querySelector('#summary').textContent.includes('(T5 Sv4+ W3 x3)')")
    page.fill("#attacker", "Battle Sister Squad")
    page.click("#resolve")
    page.wait_for_selector("#error:has-text('no unit named')")
    assert page.text_content("#error") == (
        "no unit named 'Battle Sister Squad'; did you mean: Battle Sisters Squad, Sister Squad?")


def test_a_rule_by_name_with_its_sources(page, base_url):
    page.fill("#rule-name", "Lethal Hits")
    page.select_option("#rule-edition", "10")
    page.click("#rule-go")
    page.wait_for_selector("#rule-result:not([hidden])")
    rule = httpx.get(f"{base_url}/api/rule", params={"name": "Lethal Hits", "edition": 10}).json()
    assert page.text_content("#rule-title") == rule["title"]
    assert page.text_content("#rule-text") == rule["text"]
    assert page.text_content("#rule-where").startswith(
        f"edition 10, matched games, source {rule['source_id']}, {rule['locator']}")
    assert [row[0] for row in shown_table(page, "#rule-chain")] == [s["source_id"] for s in rule["chain"]]


def test_the_api_documentation_renders_from_this_server_alone(page, base_url):
    """Swagger UI (/docs) draws the operations with its files served by the server itself
    (fastapi-offline): every request the page makes goes to the server."""
    docs = page.context.browser.new_page()
    requested: list[str] = []
    docs.on("request", lambda request: requested.append(request.url))
    try:
        docs.goto(base_url + "/docs")
        docs.wait_for_selector(".opblock", timeout=30_000)
        assert docs.locator(".opblock").count() >= 9  # the operations of the API
    finally:
        docs.close()
    elsewhere = [u for u in requested if not (u.startswith(base_url + "/") or u.startswith(("data:", "blob:")))]
    assert requested and elsewhere == []
    assert f"{base_url}/openapi.json" in requested
