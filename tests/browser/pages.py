"""The inspector page in Debian's Chromium, headless, driven by Playwright:
the page, its console's errors, a screenshot per step (test-output/inspector/).
Without Chromium the browser tests skip; under CI=true that fails instead
(.ci/run installs it)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.processes import Server

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
OUTPUT = Path(__file__).resolve().parents[2] / "test-output" / "inspector"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

try:
    from playwright.async_api import Browser, ConsoleMessage, Error, Page
    PLAYWRIGHT = True
except ImportError:  # pragma: no cover - the dev extra installs it
    PLAYWRIGHT = False


def require_browser() -> None:
    """At the top of a browser test module: skip it (fail under CI) without one."""
    if PLAYWRIGHT and Path(CHROMIUM).exists():
        return
    why = ("Debian's chromium is not installed (apt-get install chromium)"
           if PLAYWRIGHT else "playwright is not installed")
    if os.environ.get("CI") == "true":
        raise RuntimeError(f"browser tests must run under CI: {why}")
    pytest.skip(why, allow_module_level=True)


class Steps:
    """The page, its console's errors, and a screenshot per step."""

    def __init__(self, page: Page, name: str) -> None:
        self.page = page
        self.errors: list[str] = []
        self.folder = OUTPUT / name
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder.mkdir(parents=True)
        self.count = 0
        page.on("console", self._console)
        page.on("pageerror", self._page_error)

    def _page_error(self, exc: Error) -> None:
        self.errors.append(f"page error: {exc}")

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(message.text)

    async def shot(self, step: str) -> None:
        self.count += 1
        await self.page.screenshot(path=self.folder / f"{self.count:02d}-{step}.png",
                                   full_page=True)


async def open_page(browser: Browser, server: Server, name: str,
                    wait_for: str = "#skills li") -> Steps:
    page = await browser.new_page(viewport={"width": 1300, "height": 900},
                                  accept_downloads=True)
    page.set_default_timeout(15_000)
    steps = Steps(page, name)
    await page.goto(server.url + "/inspector")
    await page.wait_for_selector(wait_for)
    return steps


async def send(page: Page, text: str, *, streaming: bool = True) -> None:
    await page.check("#mode-stream" if streaming else "#mode-block")
    await page.fill("#text", text)
    await page.click("#send")
