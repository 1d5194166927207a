"""A test's own RequestHandler served over pyvoy (`--grpc-carrier pyvoy`'s
carrier) instead of grpc.aio: `async with carried("module:factory") as port`.
The factory (a function returning the handler, or a GrpcApp of its own
services) is called in Envoy's embedded Python, in the app's lifespan; this
module is that app too."""

from __future__ import annotations

import importlib
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

FACTORY = "A2A_TEST_CARRIED_HANDLER"


def carriers() -> list[Any]:
    """grpc.aio, and pyvoy when its extra is installed: for `parametrize`."""
    import importlib.util

    no_pyvoy = importlib.util.find_spec("pyvoy") is None
    return ["grpc.aio", pytest.param("pyvoy", marks=pytest.mark.skipif(
        no_pyvoy, reason="the a2a-grpc[pyvoy] extra is not installed"))]


@asynccontextmanager
async def carried(factory: str) -> AsyncIterator[int]:
    """The port of the handler `factory` makes, served over pyvoy until the block ends."""
    pyvoy = pytest.importorskip("pyvoy", reason="the a2a-grpc[pyvoy] extra is not installed")
    server = pyvoy.PyvoyServer("tests.carried:app", lifespan=True, worker_threads=1,
                               env={FACTORY: factory}, stdout=None, stderr=None)
    async with server:
        yield server.listener_port


@asynccontextmanager
async def on_carrier(carrier: str, factory: str) -> AsyncIterator[int]:
    """The gRPC port of the handler `factory` makes: on grpc.aio in this
    process, or carried by pyvoy."""
    if carrier == "pyvoy":
        async with carried(factory) as port:
            yield port
        return
    from a2a_grpc.grpc_edge.server import start_grpc

    handler = _made(factory)
    server = await start_grpc(handler)
    try:
        yield server.port
    finally:
        await server.stop(0)
        await handler.close()


def _made(factory: str) -> Any:
    module, _, name = factory.partition(":")
    return getattr(importlib.import_module(module), name)()


class _App:
    def __init__(self) -> None:
        self.grpc: Any = None
        self.handler: Any = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await self.grpc(scope, receive, send)
            return
        from a2a_grpc.grpc_edge.asgi import GrpcApp, carried_grpc

        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                made = _made(os.environ[FACTORY])
                if isinstance(made, GrpcApp):
                    self.grpc = made
                else:
                    self.handler = made
                    self.grpc = (await carried_grpc(made)).app
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self.handler is not None:
                    await self.handler.close()
                await send({"type": "lifespan.shutdown.complete"})
                return


app = _App()
