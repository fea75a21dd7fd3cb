"""Browser tests: Playwright driving Debian's chromium (never a downloaded browser) against a live
server. Without /usr/bin/chromium they skip, except where LEXRAG_REQUIRE_BROWSER demands it (CI)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture
def page(live_server, monkeypatch):
    """A fresh chromium page. Playwright starts and stops with each test, after the live server and
    database are up and before they are torn down: its sync API keeps an event loop in this thread
    while it runs, and Django refuses ORM calls under a running loop unless told otherwise (for
    the test's own fixtures), which must not outlast the test."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("LEXRAG_REQUIRE_BROWSER"):
            pytest.fail(f"no chromium at {CHROMIUM} but LEXRAG_REQUIRE_BROWSER demands browser tests")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.set_default_timeout(60_000)  # ingestion and the first model load are slow on 2 cores
        yield page
        browser.close()


@pytest.fixture
def screenshot(page):
    """screenshot(name): saved under LEXRAG_SCREENSHOTS (the README's docs/screenshots) when set."""
    directory = os.environ.get("LEXRAG_SCREENSHOTS")

    def take(name: str) -> None:
        if directory:
            Path(directory).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(directory) / f"{name}.png"), full_page=True)

    return take
