"""Server-Sent Events, with keep-alives and clean hang-ups, on either face
(face.py: a `Streamed` answer whose body is written to the face's Sink).

Each event is written as `id:` (when known) and `data:` lines. While the
source is quiet, a `: keep-alive` comment line goes out every `keepalive`
seconds, so a client with a short read timeout (the official Python client
waits 5 s) never gives up on a live stream, and a client that has gone away
is noticed at the next write. The source is closed (unsubscribing) whatever
ends the stream.

The keep-alive is a comment line and nothing more: no blank line after it.
A blank line ends an event, and a parser that keeps the last event id (as the
SSE rules say; httpx-sse does, under the official Python clients) turns a
blank line after a comment into an event with empty data, which those
clients then fail to parse as JSON. A comment line alone is skipped by every
parser, and the event after it is read as usual.

Why a ticker and not a timeout per read: the read of the source must never
be cancelled by a keep-alive (that would close the subscription), and
guarding each read with its own task and timer cost more than the rest of
the event's path. One ticker task per stream sleeps, writes a comment only
when nothing was written for `keepalive` seconds, and, if that write finds
the client gone, cancels the loop that reads the source.

Events that are already waiting when one is read (the source says so with
`ready()`) are rendered and written together: one write, one system call,
for a burst of events instead of one each. The first event is written
alone, at once: the run holds back for it until the stream asks for the
second (core/stream.py `first_sent`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from a2a_grpc.bridge import codec
from a2a_grpc.bridge.face import Sink, Streamed
from a2a_grpc.core.errors import UnavailableError
from a2a_grpc.core.stream import EventStream, Renderings
from a2a_grpc.generated.a2a_pb2 import StreamResponse

HEADERS = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",  # let proxies such as nginx pass events through at once
}
KEEPALIVE = b": keep-alive\n"  # a comment line, no blank line: see above


def frame(data: Any, *, event_id: int | None = None, event: str | None = None) -> bytes:
    if event is None and event_id is not None:  # every event of a stream but an error
        return b"id: %d\ndata: %b\n\n" % (event_id, codec.dumps(data))
    head = "" if event_id is None else f"id: {event_id}\n"
    if event is not None:
        head += f"event: {event}\n"
    return b"".join((head.encode(), b"data: ", codec.dumps(data), b"\n\n"))


class _Ticker:
    """Keep-alives for one stream while its reader waits for events."""

    def __init__(self, sink: Sink, every: float) -> None:
        self.sink = sink
        self.every = every
        self.wrote = asyncio.get_running_loop().time()
        self.hung_up = False
        self._reader = asyncio.current_task()
        self._task = asyncio.create_task(self._run(), name="a2a-sse-keepalive")

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(max(self.wrote + self.every - loop.time(), 0.0))
            if loop.time() - self.wrote < self.every:
                continue  # an event went out meanwhile
            try:
                await self.sink.write(KEEPALIVE)
            except (ConnectionResetError, RuntimeError):
                self.hung_up = True  # the client went away: stop reading for it
                if self._reader is not None:
                    self._reader.cancel()
                return
            self.wrote = loop.time()

    async def stop(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


async def _flush(sink: Sink, frames: list[bytes]) -> None:
    if frames:
        data = frames[0] if len(frames) == 1 else b"".join(frames)
        frames.clear()
        await sink.write(data)


def stream(
    events: EventStream,
    render: Callable[[StreamResponse, Renderings | None], Any],
    render_error: Callable[[BaseException], tuple[Any, str | None]],
    keepalive: float,
) -> Streamed:
    """Send `events` as SSE; an error after the start goes in-band, last.
    `render` is given each event and, when other streams carry the same
    event, where its printing is kept for them (codec.printed_event)."""

    async def produce(sink: Sink) -> None:
        loop = asyncio.get_running_loop()
        ticker: _Ticker | None = None
        counter = 0
        frames: list[bytes] = []  # rendered, not yet written
        shared = events.shared
        try:
            ticker = _Ticker(sink, keepalive)
            async for event in events:
                counter += 1
                seq = events.seq if events.numbered else counter
                frames.append(frame(render(event, shared()), event_id=seq))
                # The first event goes out before the second is read (which tells
                # the run its stream has started: EventStream.first_sent); after
                # it, whatever is here when the next read may wait.
                if counter == 1 or not events.ready():
                    await _flush(sink, frames)
                    ticker.wrote = loop.time()
            await _flush(sink, frames)
        except asyncio.CancelledError:
            if ticker is None or not ticker.hung_up:
                raise  # the server is stopping, not the client
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
        except ConnectionResetError:
            pass  # the client went away: nothing to tell it; the task goes on
        except Exception as exc:  # after the first byte, errors go in-band
            data, name = render_error(exc)
            frames.append(frame(data, event=name))
            if type(exc) is UnavailableError:  # resume elsewhere: not on this connection
                sink.close_after()
            with contextlib.suppress(ConnectionResetError):
                await _flush(sink, frames)
        finally:
            if ticker is not None:
                await ticker.stop()
            await events.aclose()

    return Streamed(produce, 200, dict(HEADERS))


def one_error(data: Any) -> Streamed:
    """A stream refused before its first event, as a stream of that one error."""
    async def produce(sink: Sink) -> None:
        with contextlib.suppress(ConnectionResetError):
            await sink.write(frame(data))

    return Streamed(produce, 200, dict(HEADERS))
