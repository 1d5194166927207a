"""Waiting for an ASGI client to hang up, for what both ASGI faces answer
(the HTTP bindings' streams, gRPC carried over ASGI).

Once a request's body has been read, uvicorn's and hypercorn's `receive`
waits until the client goes away (or the response is complete) and then
says `http.disconnect`. pyvoy's answers at once with an empty
`http.request` until then: asked again in a loop it took a whole core for
each open stream (docs/grpc-carriers.md). So it is asked again only every
POLL seconds."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

POLL = 0.5  # seconds between asks, where `receive` does not wait
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]


async def hung_up(receive: Receive) -> None:
    """Returns once `receive` says `http.disconnect`."""
    while True:
        if (await receive())["type"] == "http.disconnect":
            return
        await asyncio.sleep(POLL)  # nothing to wait on: pyvoy answered at once
