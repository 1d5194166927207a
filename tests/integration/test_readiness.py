"""/healthz, /readyz and gRPC health on a real server, with its store and its
event bus reached through a TCP proxy the test can cut (a lost database or
Redis), then restore."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated.a2a_pb2_grpc import A2AServiceStub
from tests.processes import Server, reap, start_server
from tests.proxy import Proxy
from tests.redis_bus import bus_url, drop_prefix, redis_port, redis_prefix
from tests.stores import POSTGRES, drop_schema, postgres_schema

SERVING, NOT_SERVING = (health_pb2.HealthCheckResponse.SERVING,
                        health_pb2.HealthCheckResponse.NOT_SERVING)


async def readyz(http: aiohttp.ClientSession, server: Server) -> tuple[int, dict[str, Any]]:
    async with http.get(server.url + "/readyz") as resp:
        return resp.status, await resp.json()


async def until(check: Callable[[], Awaitable[bool]], what: str, seconds: float = 15) -> None:
    """Wait for a state another process reaches (polled: it can't tell us)."""
    deadline = asyncio.get_running_loop().time() + seconds
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, f"never {what}"
        await asyncio.sleep(0.2)


async def grpc_status(channel: grpc.aio.Channel) -> int:
    reply = await health_pb2_grpc.HealthStub(channel).Check(
        health_pb2.HealthCheckRequest(service="lf.a2a.v1.A2AService"), timeout=5)
    return int(reply.status)


async def test_alive_and_ready_on_the_defaults() -> None:
    server = await start_server("serve")
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(server.url + "/healthz") as resp:
                assert (resp.status, await resp.json()) == (200, {"status": "alive"})
            assert await readyz(http, server) == (200, {"ready": True, "store": "ok"})
    finally:
        reap(server.proc)


async def _lose_and_regain(server: Server, proxy: Proxy, part: str) -> None:
    async with aiohttp.ClientSession() as http, \
            grpc.aio.insecure_channel(server.target) as channel:
        status, body = await readyz(http, server)
        assert (status, body[part]) == (200, "ok")
        assert await grpc_status(channel) == SERVING
        proxy.drop_next = 10**6  # unreachable from now on
        proxy.cut()

        async def down() -> bool:
            status, body = await readyz(http, server)
            return status == 503 and body[part] != "ok" and body["ready"] is False

        await until(down, f"not ready without the {part}")
        await until(lambda: _is(grpc_status(channel), NOT_SERVING), "NOT_SERVING")
        if part == "bus":  # unary calls need the store only: they go on
            reply = await A2AServiceStub(channel).SendMessage(pb.SendMessageRequest(
                message=pb.Message(message_id=str(uuid.uuid4()), role=pb.ROLE_USER,
                                   parts=[pb.Part(text="hello")])),
                metadata=(("a2a-version", "1.0"),), timeout=10)
            assert reply.task.status.state == pb.TASK_STATE_COMPLETED
        proxy.drop_next = 0  # back

        async def up() -> bool:
            return (await readyz(http, server))[0] == 200

        await until(up, f"ready again with the {part}")
        await until(lambda: _is(grpc_status(channel), SERVING), "SERVING again")


async def _is(status: Awaitable[int], wanted: int) -> bool:
    return await status == wanted


async def test_not_ready_while_the_bus_is_unreachable() -> None:
    prefix = await redis_prefix()
    proxy = await Proxy(redis_port()).start()
    server = await start_server("serve", "--bus", bus_url(prefix, proxy.port))
    try:
        await _lose_and_regain(server, proxy, "bus")
    finally:
        reap(server.proc)
        await proxy.close()
        await drop_prefix(prefix)


async def test_not_ready_while_the_store_is_unreachable() -> None:
    schema = await postgres_schema()
    port = int(POSTGRES.rsplit(":", 1)[1].split("/")[0])
    proxy = await Proxy(port).start()
    url = POSTGRES.replace(f":{port}/", f":{proxy.port}/")
    server = await start_server("serve", "--store", f"{url}?search_path={schema}")
    try:
        await _lose_and_regain(server, proxy, "store")
    finally:
        reap(server.proc)
        await proxy.close()
        await drop_schema(schema)
