"""Per-caller rate limits across replicas (`--rate-limit` with `--bus`): three
real `serve` processes on PostgreSQL and Redis let one caller about its rate
in all, not three times it; with Redis away, a process counts alone and
says so once."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from typing import Any

import aiohttp
import pytest

from a2a_grpc.bus.redis_limits import SharedRate
from tests.processes import reap, start_server, unused_port
from tests.redis_bus import bus_url, drop_prefix, redis_prefix
from tests.stores import drop_schema, postgres_schema, postgres_url

HEADERS = {"A2A-Version": "1.0"}
RATE, BURST, SECONDS = 20, 10, 3.0


def message() -> dict[str, Any]:
    return {"message": {"messageId": uuid.uuid4().hex, "role": "ROLE_USER",
                        "parts": [{"text": "hi"}]}}


async def test_a_caller_gets_its_rate_across_three_replicas_not_three_times_it() -> None:
    schema, prefix = await postgres_schema(), await redis_prefix()
    servers = []
    try:
        for _ in range(3):
            servers.append(await start_server(
                "serve", "--store", postgres_url(schema), "--bus", bus_url(prefix),
                "--rate-limit", str(RATE), "--rate-burst", str(BURST)))
        counts = {200: 0, 429: 0}
        async with aiohttp.ClientSession(headers=HEADERS) as http:
            deadline = time.monotonic() + SECONDS

            async def caller(n: int) -> None:
                turn = n
                while time.monotonic() < deadline:
                    server = servers[turn % 3]
                    turn += 1
                    async with http.post(server.url + "/message:send", json=message()) as resp:
                        counts[resp.status] = counts.get(resp.status, 0) + 1
                        if resp.status == 429:
                            assert resp.headers["Retry-After"]

            started = time.monotonic()
            await asyncio.gather(*(caller(n) for n in range(6)))
            took = time.monotonic() - started
    finally:
        for server in servers:
            reap(server.proc)
        await drop_prefix(prefix)
        await drop_schema(schema)
    allowed = BURST + RATE * took  # what one process alone would let through
    assert set(counts) == {200, 429}, counts
    assert counts[429] > counts[200]  # the caller asked far more often than its rate
    # About the rate in all (Redis's clock and the calls' timing give some slack),
    # far from the 3x that three separate counts would let through.
    assert 0.8 * allowed <= counts[200] <= 1.25 * allowed, (counts, allowed)


async def test_with_redis_away_a_process_counts_alone_and_says_so_once(
        caplog: pytest.LogCaptureFixture) -> None:
    shared = SharedRate(f"redis://127.0.0.1:{unused_port()}/0", rate=5, burst=2)
    try:
        with caplog.at_level(logging.INFO, logger="a2a_grpc.limits"):
            started = time.monotonic()
            answers = [await shared.take("ip:127.0.0.1") for _ in range(20)]
            took = time.monotonic() - started
    finally:
        await shared.close()
    assert answers == [None] * 20  # the caller counts locally (LimitedService's buckets)
    assert took < 1.0  # one refused connection, then the cooldown: no wait per call
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "this process alone" in warnings[0].getMessage()
