"""Server-Sent Events over aiohttp, with keep-alives and clean hang-ups.

Each event is written as `id:` (when known) and `data:` lines. While the
source is quiet, a `: keep-alive` comment goes out every `keepalive` seconds,
so a client with a short read timeout (the official Python client waits 5 s)
never gives up on a live stream, and a client that has gone away is noticed
at the next write. The pending read of the source is never cancelled by a
keep-alive; the source is closed (unsubscribing) whatever ends the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from typing import Any

from aiohttp import web

from a2a_grpc.streams import EventStream
from generated.a2a_pb2 import StreamResponse

HEADERS = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",  # let proxies such as nginx pass events through at once
}


def frame(data: Any, *, event_id: int | None = None, event: str | None = None) -> bytes:
    lines = []
    if event_id is not None:
        lines.append(f"id: {event_id}")
    if event is not None:
        lines.append(f"event: {event}")
    lines.append("data: " + json.dumps(data, separators=(",", ":"), ensure_ascii=False))
    return ("\n".join(lines) + "\n\n").encode()


async def stream(
    request: web.Request,
    events: EventStream,
    render: Callable[[StreamResponse], Any],
    render_error: Callable[[BaseException], tuple[Any, str | None]],
    keepalive: float,
) -> web.StreamResponse:
    """Send `events` as SSE; an error after the start goes in-band, last."""
    response = web.StreamResponse(status=200, headers=HEADERS)
    counter = 0
    pending: asyncio.Future[StreamResponse] | None = None
    try:
        await response.prepare(request)
        while True:
            if pending is None:
                pending = asyncio.ensure_future(anext(events))
            done, _ = await asyncio.wait({pending}, timeout=keepalive)
            if not done:
                await response.write(b": keep-alive\n\n")
                continue
            try:
                event = pending.result()
            except StopAsyncIteration:
                break
            except Exception as exc:  # after the first byte, errors go in-band
                data, name = render_error(exc)
                await response.write(frame(data, event=name))
                break
            finally:
                if pending.done():
                    pending = None
            counter += 1
            seq = events.seq if events.numbered else counter
            await response.write(frame(render(event), event_id=seq))
    except ConnectionResetError:
        pass  # the client went away: nothing to tell it; the task goes on
    finally:
        if pending is not None and not pending.done():
            pending.cancel()
            with contextlib.suppress(BaseException):
                await pending
        await events.aclose()
    with contextlib.suppress(ConnectionResetError, RuntimeError):
        await response.write_eof()
    return response
