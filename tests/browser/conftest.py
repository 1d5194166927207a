"""Fixtures of the browser tests: a real `serve` (the demo agent on SQLite) and
Debian's Chromium (tests/browser/pages.py says when it is missing)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.pages import ARGS, CHROMIUM, PLAYWRIGHT
from tests.processes import Server, mounted_app, reap, start_server


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    started = await start_server("serve", "--store", f"sqlite:///{tmp_path / 'tasks.db'}",
                                 "--grace", "0")
    try:
        yield started
    finally:
        reap(started.proc)


@pytest.fixture(params=["serve", "mounted"])
async def either(request: pytest.FixtureRequest, tmp_path: Path,
                 monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Server]:
    """`serve`, or the demo agent mounted under /a2a in a FastAPI app under
    uvicorn (examples/mount_fastapi.py)."""
    if request.param == "serve":
        started = await start_server("serve", "--store", f"sqlite:///{tmp_path / 'tasks.db'}",
                                     "--grace", "0")
    else:
        started = await mounted_app(tmp_path, monkeypatch, "uvicorn")
    try:
        yield started
    finally:
        reap(started.proc)


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    if not PLAYWRIGHT:
        pytest.skip("playwright is not installed")
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        launched = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield launched
        finally:
            await launched.close()
