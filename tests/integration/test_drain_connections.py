"""A drain never closes an HTTP connection under a request: from SIGTERM on,
every response says `Connection: close` (a client's pool drops the
connection after it), and the server keeps answering, refused and
retryable, while a client still holds a connection it may send on.

The pieces of `serve` (admission, readiness, the HTTP face, the drain) on
real sockets, in process, so that the race is tried a hundred times: a
client that kept its connection alive after /readyz sends its next request
just as the drain begins."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import aiohttp
from aiohttp import web
from prometheus_client import CollectorRegistry

from a2a_grpc.app.admission import Admission, AdmissionOptions
from a2a_grpc.app.health import Readiness
from a2a_grpc.app.http import HttpOptions, linger, start_http
from a2a_grpc.app.serve import drain
from a2a_grpc.cards.card import card_for
from a2a_grpc.demos.demo import DemoAgent
from a2a_grpc.grpc_edge.server import start_grpc
from a2a_grpc.handler.request_handler import RequestHandler

REPETITIONS = 100
V10 = {"A2A-Version": "1.0"}


def send_body() -> dict[str, Any]:
    return {"message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                        "parts": [{"text": "hello"}]}}


async def test_a_kept_alive_connection_is_answered_through_the_drain() -> None:
    agent = DemoAgent()
    card = card_for(agent)
    handler = RequestHandler(agent, card)
    grpc_server = await start_grpc(handler)

    async def shut_down(admission: Admission, readiness: Readiness,
                        runner: web.AppRunner) -> None:
        """As `serve` does on SIGTERM: the drain (no notice), then the HTTP face closed."""
        await drain(admission, readiness, grpc_server, handler.bus, handler, 0.0, 2.0,
                    lambda deadline: linger(runner, deadline))
        await runner.cleanup()
    answers: dict[tuple[str, int], int] = {}
    try:
        for n in range(REPETITIONS):
            admission = Admission(handler, AdmissionOptions(), CollectorRegistry())
            readiness = Readiness(handler.store)
            runner, port = await start_http(admission, card, HttpOptions(port=0), grace=2.0,
                                            readiness=readiness)
            base = f"http://127.0.0.1:{port}"
            try:
                connector = aiohttp.TCPConnector(limit=1)  # one connection, kept alive
                async with aiohttp.ClientSession(connector=connector, headers=V10) as http:
                    async with http.get(base + "/readyz") as resp:
                        assert resp.status == 200 and resp.headers.get("Connection") != "close"
                    draining = asyncio.ensure_future(shut_down(admission, readiness, runner))
                    # The moment the request comes is what is tried, not a wait for
                    # something: from at once to 10 ms into the drain, the window in
                    # which a server that closed its idle connections would close this.
                    await asyncio.sleep((n % 21) * 0.0005)
                    # the next request, on the connection the pool kept, as the drain
                    # begins: every other one a /readyz (a balancer's probe), else a send
                    path = "/readyz" if n % 2 else "/message:send"
                    async with http.request("GET" if n % 2 else "POST", base + path,
                                            json=None if n % 2 else send_body()) as resp:
                        await resp.read()
                        status = resp.status
                        answers[path, status] = answers.get((path, status), 0) + 1
                        assert status in (200, 503), status
                        if status == 503:
                            assert resp.headers["Connection"] == "close"
                            assert path == "/readyz" or resp.headers["Retry-After"]
                await asyncio.wait_for(draining, 10)
                await grpc_server.serving(True)
            finally:
                await runner.cleanup()
    finally:
        await grpc_server.stop(0)
        await handler.close()
    assert sum(answers.values()) == REPETITIONS
    # the drain was met, not only dodged
    assert answers.get(("/readyz", 503)) and answers.get(("/message:send", 503)), answers
