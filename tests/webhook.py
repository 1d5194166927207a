"""A real webhook receiver on loopback that records what it gets and answers
with statuses the test scripts."""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field

from aiohttp import web
from aiohttp.test_utils import TestServer
from google.protobuf import json_format

from a2a_grpc.generated.a2a_pb2 import StreamResponse


@dataclass
class Hit:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float

    @property
    def event(self) -> StreamResponse:
        return json_format.Parse(self.body, StreamResponse())


@dataclass
class Webhook:
    server: TestServer
    hits: list[Hit] = field(default_factory=list)
    # per path: statuses to answer next (then 200), with optional Retry-After
    script: dict[str, deque[tuple[int, str | None]]] = field(
        default_factory=lambda: defaultdict(deque))
    arrived: asyncio.Condition = field(default_factory=asyncio.Condition)
    delay: float = 0.0  # seconds each request takes to answer (a slow receiver)

    def url(self, path: str) -> str:
        return str(self.server.make_url(path))

    def answer(self, path: str, *statuses: int, retry_after: str | None = None) -> None:
        self.script[path].extend((s, retry_after) for s in statuses)

    def at(self, path: str) -> list[Hit]:
        return [h for h in self.hits if h.path == path]

    async def wait_for(self, path: str, count: int) -> list[Hit]:
        """Wait (10 s at most) until `count` requests reached `path`."""
        async with asyncio.timeout(10), self.arrived:
            await self.arrived.wait_for(lambda: len(self.at(path)) >= count)
        return self.at(path)


async def start_webhook() -> Webhook:
    hook: Webhook | None = None

    async def handle(request: web.Request) -> web.Response:
        assert hook is not None
        hit = Hit(request.path, dict(request.headers), await request.read(), time.monotonic())
        async with hook.arrived:
            hook.hits.append(hit)
            hook.arrived.notify_all()
        if hook.delay:
            await asyncio.sleep(hook.delay)
        queue = hook.script[request.path]
        status, retry_after = queue.popleft() if queue else (200, None)
        headers = {"Retry-After": retry_after} if retry_after else {}
        return web.Response(status=status, headers=headers)

    app = web.Application()
    app.router.add_post("/{tail:.*}", handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    hook = Webhook(server)
    return hook
