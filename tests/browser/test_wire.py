"""The inspector's debugging views in Chromium against a real `serve`: the wire
panel (a JSON-RPC pair, SSE frames, a REST body, a gRPC call), the card
check on a broken card, headers set on the page that a server with API keys
needs, and the agent's question on an INPUT_REQUIRED task."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from aiohttp import web

from tests.browser.pages import open_page, require_browser, send
from tests.processes import Server, reap, start_server

if TYPE_CHECKING:
    from playwright.async_api import Browser, Locator, Page

require_browser()


async def exchange(page: Page, label: str, binding: str) -> Locator:
    """The newest exchange of that inspector call, opened."""
    found = page.locator(f"#exchanges li.exchange[data-label={label}]"
                         f"[data-binding='{binding}']").first
    await found.wait_for()
    await found.locator("summary").click()
    return found


async def finished(page: Page, state: str) -> None:
    await page.wait_for_selector(f"#state[data-state={state}]")
    await page.wait_for_function("document.getElementById('send').disabled === false")


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_the_wire_shows_http_requests_answers_and_sse_frames(
        browser: Browser, server: Server, binding: str) -> None:
    steps = await open_page(browser, server, f"wire-{binding.replace('+', '-').lower()}")
    page = steps.page
    await page.select_option("#binding", binding)

    await send(page, "hello", streaming=False)
    await finished(page, "COMPLETED")
    pair = await exchange(page, "SendMessage", "HTTP")
    request = await pair.locator("pre.request").text_content() or ""
    response = await pair.locator("pre.response").text_content() or ""
    first, _, rest = request.partition("\n")
    sent = json.loads(rest.split("\n\n", 1)[1])
    if binding == "JSONRPC":
        assert first == f"POST {server.url}/"
        assert sent["jsonrpc"] == "2.0" and sent["method"] == "SendMessage"
        assert sent["params"]["message"]["parts"] == [{"text": "hello"}]
        answer = json.loads(response.split("\n\n", 1)[1])
        assert answer["id"] == sent["id"]
        assert answer["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    else:
        assert first == f"POST {server.url}/message:send"
        assert sent["message"]["parts"] == [{"text": "hello"}]
        answer = json.loads(response.split("\n\n", 1)[1])
        assert answer["task"]["artifacts"][0]["parts"] == [{"text": "echo: hello"}]
    assert "A2A-Version: 1.0" in request
    assert response.startswith("HTTP 200 OK\n")
    await steps.shot("pair")

    await send(page, "stream 3")
    await finished(page, "COMPLETED")
    stream = await exchange(page, "SendStreamingMessage", "HTTP")
    assert "Content-Type: text/event-stream" in (
        await stream.locator("pre.response").text_content() or "")
    frames = await stream.locator("li.frame pre").all_text_contents()
    events = [f for f in frames if "data:" in f]
    assert len(events) == 6  # the task, WORKING, three chunks, COMPLETED
    assert all(f.endswith("\n\n") for f in events)  # each frame as read, its blank line too
    assert [f"chunk {i}/3" in "".join(events) for i in (1, 2, 3)] == [True] * 3
    assert "TASK_STATE_COMPLETED" in events[-1]
    if binding == "JSONRPC":
        assert all('"jsonrpc":"2.0"' in f.replace(" ", "") for f in events)
    assert all(await stream.locator("li.frame .at").all_text_contents())
    await steps.shot("sse-frames")
    assert steps.errors == []


async def test_the_wire_shows_a_grpc_call(browser: Browser, server: Server) -> None:
    steps = await open_page(browser, server, "wire-grpc")
    page = steps.page
    await page.select_option("#binding", "GRPC")
    await send(page, "hello", streaming=False)
    await finished(page, "COMPLETED")
    call = await exchange(page, "SendMessage", "GRPC")
    request = await call.locator("pre.request").text_content() or ""
    response = await call.locator("pre.response").text_content() or ""
    assert request.startswith(f"/lf.a2a.v1.A2AService/SendMessage  @ 127.0.0.1:{server.grpc_port}")
    assert "a2a-version: 1.0" in request
    assert json.loads(request.split("\n\n", 1)[1])["message"]["parts"] == [{"text": "hello"}]
    assert '"text": "echo: hello"' in response
    assert response.rstrip().endswith("status: OK")
    await steps.shot("grpc-unary")

    await send(page, "stream 2")
    await finished(page, "COMPLETED")
    stream = await exchange(page, "SendStreamingMessage", "GRPC")
    messages = [json.loads(m) for m in await stream.locator("li.frame pre").all_text_contents()]
    assert [next(iter(m)) for m in messages] == ["task", "statusUpdate", "artifactUpdate",
                                                 "artifactUpdate", "statusUpdate"]
    # the client reads the call to its end: the status the server ended it with
    ended = await stream.locator("pre.response").text_content() or ""
    assert ended.rstrip().endswith("status: OK"), ended
    await steps.shot("grpc-stream")

    # the agent asks: the stream ends at INPUT_REQUIRED, and the server ended it OK
    await send(page, "ask")
    await finished(page, "INPUT_REQUIRED")
    asked = await exchange(page, "SendStreamingMessage", "GRPC")
    assert "→ OK ·" in (await asked.locator("summary").text_content() or "")
    assert "CANCELLED" not in (await asked.locator("pre.response").text_content() or "")
    await steps.shot("grpc-ask")

    # the page stops a stream of a task that goes on: that call was cancelled
    await send(page, "slow 30")
    await page.wait_for_selector("#state[data-state=WORKING]")
    await page.click("#stop")
    await page.wait_for_function("document.getElementById('send').disabled === false")
    stopped = await exchange(page, "SendStreamingMessage", "GRPC")
    assert "→ CANCELLED ·" in (await stopped.locator("summary").text_content() or "")
    assert "stopped by the page" in (await stopped.locator("pre.response").text_content() or "")
    assert await page.is_disabled("#stop")
    await steps.shot("grpc-stopped")
    assert steps.errors == []


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
async def broken_agent() -> AsyncIterator[str]:
    """An HTTP server whose card breaks the spec in several ways."""
    card = {
        "name": "broken", "version": "1",  # no description
        "supportedInterfaces": [{"url": f"127.0.0.1:{closed_port()}", "protocolBinding": "GRPC",
                                 "protocolVersion": "1.0"}],
        "capabilities": {}, "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "a", "name": "A", "description": "no tags"}],
        "securitySchemes": {"key": {"apiKeySecurityScheme": {"location": "header"}}},
        "securityRequirements": [{"schemes": {"bearer": {"list": []}}}],
    }
    async def serve_card(_: web.Request) -> web.Response:
        return web.json_response(card)

    app = web.Application()
    app.router.add_get("/.well-known/agent-card.json", serve_card)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def test_the_card_check_lists_findings(browser: Browser, server: Server,
                                             broken_agent: str) -> None:
    steps = await open_page(browser, server, "card-check", wait_for="#card-findings li")
    page = steps.page
    # our own card: every interface answers, nothing wrong
    ours = await page.locator("#card-findings li[data-level=error]").all_text_contents()
    assert ours == []  # the findings' words, should one ever appear
    answers = await page.locator("#card-findings li[data-level=info]").all_text_contents()
    assert len([a for a in answers if "answers A2A" in a]) == 3

    await page.fill("#target", broken_agent)
    await page.click("#connect")
    await page.wait_for_selector("#card-findings li[data-level=error]")
    errors = await page.locator("#card-findings li[data-level=error]").all_text_contents()
    await steps.shot("broken-card")
    expected = ["description required, missing", "skills[0].tags required, missing",
                "securitySchemes.key.apiKeySecurityScheme.name required, missing",
                "securityRequirements names the scheme 'bearer'",
                "supportedInterfaces[0] GRPC 127.0.0.1:"]
    for text in expected:
        assert any(text in e for e in errors), (text, errors)
    assert any("is not reachable" in e for e in errors)
    fetched = await exchange(page, "card", "HTTP")
    assert (await fetched.locator("pre.request").text_content() or "").startswith(
        f"GET {broken_agent}/.well-known/agent-card.json")
    assert steps.errors == []


@pytest.fixture
async def keyed_server(tmp_path: Path) -> AsyncIterator[Server]:
    keys = tmp_path / "keys.txt"
    keys.write_text("alice:alice-secret\n")
    started = await start_server("serve", "--api-keys", str(keys), "--grace", "0")
    try:
        yield started
    finally:
        reap(started.proc)


@pytest.mark.parametrize("binding", ["JSONRPC", "GRPC"])
async def test_a_call_succeeds_only_with_the_header_set_on_the_page(
        browser: Browser, keyed_server: Server, binding: str) -> None:
    steps = await open_page(browser, keyed_server, f"headers-{binding.lower()}",
                            wait_for="#card-findings li")
    page = steps.page
    refused = await page.locator("#card-findings li[data-level=warning]").all_text_contents()
    assert any("refuses these credentials" in r for r in refused)
    await page.select_option("#binding", binding)
    await send(page, "hello", streaming=False)
    await page.wait_for_selector("#error:has-text('UNAUTHENTICATED')")
    await steps.shot("refused")

    await page.click("#headers-box summary")
    await page.fill("#headers", "X-API-Key: alice-secret")
    assert await page.text_content("#headers-count") == "(1)"
    await send(page, "hello", streaming=False)
    await finished(page, "COMPLETED")
    assert await page.is_hidden("#error")
    call = await exchange(page, "SendMessage", "GRPC" if binding == "GRPC" else "HTTP")
    request = await call.locator("pre.request").text_content() or ""
    assert ("x-api-key: alice-secret" if binding == "GRPC" else "X-API-Key: alice-secret") \
        in request
    # the page keeps them for the tab: a reload still sends them
    await page.reload()
    await page.wait_for_selector("#card-findings li")
    assert await page.input_value("#headers") == "X-API-Key: alice-secret"
    assert await page.locator("#card-findings li[data-level=warning]").count() == 0
    await steps.shot("with-header")
    assert steps.errors == []


@pytest.mark.parametrize("streaming", [True, False], ids=["streaming", "blocking"])
async def test_the_agents_question_is_in_the_timeline(browser: Browser, server: Server,
                                                      streaming: bool) -> None:
    steps = await open_page(browser, server, f"question-{streaming}")
    page = steps.page
    await send(page, "ask", streaming=streaming)
    await finished(page, "INPUT_REQUIRED")
    assert await page.text_content("#timeline li.agent") == "agent: What is your answer?"
    await steps.shot("asked")
    await page.wait_for_selector("#detail-state[data-state=INPUT_REQUIRED]")
    await page.click("#follow-up")
    await send(page, "42", streaming=streaming)
    await finished(page, "COMPLETED")
    assert "answer: 42" in (await page.text_content("#timeline") or "")
    await steps.shot("answered")
    assert steps.errors == []
