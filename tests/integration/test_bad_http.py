"""Requests aiohttp cannot parse: a 400 for the client, nothing above DEBUG in
our log (one ERROR with a traceback per request let anyone flood it)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from tests.conftest import StackFactory


@pytest.mark.parametrize("raw", [
    b"GET /" + b"a" * 10_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",  # request line too long
    b"GET / HTTP/1.1\r\nHost: x\r\nX: " + b"b" * 10_000 + b"\r\n\r\n",  # header too long
    b"NOT HTTP AT ALL\r\n\r\n",
])
async def test_unparsable_requests_get_400_and_no_error_in_the_log(
        stack: StackFactory, caplog: pytest.LogCaptureFixture, raw: bytes) -> None:
    s = await stack()
    caplog.set_level(logging.INFO)
    reader, writer = await asyncio.open_connection("127.0.0.1", s.http.port)
    writer.write(raw)
    await writer.drain()
    answer = await reader.read(100)
    writer.close()
    await writer.wait_closed()
    assert answer.startswith(b"HTTP/1.") and b" 400 " in answer.split(b"\r\n")[0]
    async with s.session.get(s.base_url + "/.well-known/agent-card.json") as resp:
        assert resp.status == 200  # and the server goes on answering
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
