"""The inspector page against a real `serve`: streaming, cancel, paging and a
download on each binding, errors, other agents (tests/browser/pages.py)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from tests.browser.pages import open_page, require_browser, send
from tests.processes import Server

if TYPE_CHECKING:
    from playwright.async_api import Browser, Route

require_browser()


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON", "GRPC"])
async def test_stream_cancel_page_and_download(browser: Browser, either: Server,
                                               binding: str) -> None:
    """On `serve`, and on the agent mounted under /a2a in a FastAPI app (uvicorn)."""
    server = either
    where = "mounted" if server.path else "serve"
    steps = await open_page(browser, server, f"{where}-{binding.replace('+', '-').lower()}")
    page = steps.page
    assert await page.text_content("#card-name") == "a2a-grpc demo agent"
    assert await page.text_content("#card-signature") == "not signed"
    assert "GRPC" in (await page.text_content("#interfaces") or "")
    if server.path:  # the host app's sign-in (X-User), which the mounted gRPC asks for too
        await page.click("#headers-box summary")
        await page.fill("#headers", "X-User: inspector")
    await page.select_option("#binding", binding)
    await steps.shot("card")

    # stream 5: five chunks of one artifact, in place, then COMPLETED
    await send(page, "stream 5")
    await page.wait_for_selector("#state[data-state=COMPLETED]")
    chunks = page.locator("#timeline li.artifact .chunk")
    assert await chunks.all_text_contents() == [f"chunk {i}/5" for i in range(1, 6)]
    assert await page.locator("#timeline li.artifact").count() == 1
    await steps.shot("stream-5")

    # slow: WORKING while it runs; the cancel button ends it
    await send(page, "slow 30")
    await page.wait_for_selector("#detail-state[data-state=WORKING]")
    await steps.shot("slow-working")
    await page.click("#cancel")
    await page.wait_for_selector("#detail-state[data-state=CANCELED]")
    await page.wait_for_selector("#state[data-state=CANCELED]")  # the stream saw it too
    assert await page.is_disabled("#cancel")
    await steps.shot("slow-canceled")

    # a file artifact, downloaded
    await send(page, "file notes.txt", streaming=False)
    link = page.locator("#artifacts a.file")
    await link.wait_for()
    async with page.expect_download() as download_info:
        await link.click()
    download = await download_info.value
    assert download.suggested_filename == "notes.txt"
    saved = steps.folder / "notes.txt"
    await download.save_as(saved)
    assert saved.read_text().splitlines()[0] == "line 1: made by the a2a-grpc demo agent"
    assert '"lines": 10' in (await page.text_content("#artifacts pre.data") or "")
    await steps.shot("file-downloaded")

    # the task list, two a page: three pages for five tasks
    for text in ("one", "two"):
        await send(page, text, streaming=False)
        await page.wait_for_selector("#state[data-state=COMPLETED]")
    await page.fill("#page-size", "2")
    await page.click("#refresh")
    await page.wait_for_function(
        "document.querySelectorAll('#task-list tr').length === 2 && "
        "document.getElementById('page-info').textContent.includes('5 tasks')")
    first = await page.locator("#task-list tr").evaluate_all("rs => rs.map(r => r.dataset.taskId)")
    await steps.shot("tasks-page-1")
    await page.click("#next")
    await page.wait_for_selector("#page-info:has-text('page 2')")
    second = await page.locator("#task-list tr").evaluate_all(
        "rs => rs.map(r => r.dataset.taskId)")
    assert len(second) == 2 and not set(first) & set(second)
    await page.click("#next")
    await page.wait_for_selector("#page-info:has-text('page 3')")
    assert await page.locator("#task-list tr").count() == 1
    assert await page.is_disabled("#next")
    await steps.shot("tasks-page-3")
    await page.click("#prev")
    await page.click("#prev")
    await page.wait_for_selector("#page-info:has-text('page 1')")
    assert await page.locator("#task-list tr").evaluate_all(
        "rs => rs.map(r => r.dataset.taskId)") == first
    # the state filter: the canceled task alone
    await page.select_option("#filter-state", "TASK_STATE_CANCELED")
    await page.wait_for_selector("#page-info:has-text('1 tasks')")
    await steps.shot("tasks-canceled")
    assert steps.errors == []


async def test_errors_are_shown_and_other_agents_are_reached(browser: Browser,
                                                             server: Server) -> None:
    steps = await open_page(browser, server, "errors-and-targets")
    page = steps.page
    # an unknown task, asked by hand in the follow-up field: the agent's error, shown
    await page.fill("#task-id", "no-such-task")
    await send(page, "hello", streaming=False)
    await page.wait_for_selector("#error:has-text('TASK_NOT_FOUND')")
    await steps.shot("task-not-found")
    # another agent by URL (this same server, by its address): its card
    await page.fill("#task-id", "")
    await page.fill("#target", server.url)
    await page.click("#connect")
    await page.wait_for_selector("#interfaces li")
    assert await page.is_hidden("#error")
    # an address where nothing listens: a clear error, no crash
    await page.fill("#target", "http://127.0.0.1:9")
    await page.click("#connect")
    await page.wait_for_selector("#error:has-text('cannot reach')")
    await steps.shot("unreachable")
    assert steps.errors == []


async def test_an_answer_that_comes_late_does_not_replace_the_task_opened_after_it(
        browser: Browser, server: Server) -> None:
    """Task A opened, then task B, while A's GetTask is held (a slow answer):
    when A's answer comes, the detail still shows B (the download test above
    once clicked a file link that such an answer had just removed)."""
    steps = await open_page(browser, server, "late-answer")
    page = steps.page
    for text in ("first", "second"):
        await send(page, text, streaming=False)
        await page.wait_for_selector("#state[data-state=COMPLETED]")
    await page.wait_for_function("document.querySelectorAll('#task-list tr').length === 2")
    first, second = [await row.get_attribute("data-task-id")
                     for row in await page.locator("#task-list tr").all()]
    held, release = asyncio.Event(), asyncio.Event()

    async def hold(route: Route) -> None:
        asked = route.request.post_data_json or {}
        if asked.get("method") == "GetTask" and (asked.get("params") or {}).get("id") == first:
            held.set()
            await release.wait()
        await route.continue_()

    await page.route("**/api/call", hold)
    answered = "document.querySelectorAll('#wire li.exchange[data-label=GetTask]').length"
    before = await page.evaluate(answered)
    await page.click(f"#task-list tr[data-task-id='{first}']")
    await asyncio.wait_for(held.wait(), 15)
    await page.click(f"#task-list tr[data-task-id='{second}']")
    await page.wait_for_selector(f"#detail-id:text-is('{second}')")
    release.set()
    await page.wait_for_function(f"{answered} === {before} + 2")  # A's answer is in, and B's
    assert await page.text_content("#detail-id") == second
    await steps.shot("late-answer-dropped")
    assert steps.errors == []
