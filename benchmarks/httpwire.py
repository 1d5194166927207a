"""A minimal HTTP/1.1 client for the load generator: keep-alive, no SDK, little CPU.

aiohttp's client costs more CPU per request than a bare aiohttp server spends
answering it, so a load generator built on it measures itself. This one
writes prebuilt request bytes and parses only what a check needs: the status,
`Content-Length` bodies, and `Transfer-Encoding: chunked` bodies decoded into
SSE events. One connection carries one request at a time; concurrency is the
number of connections.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator


class HttpError(Exception):
    pass


class Connection(asyncio.Protocol):
    def __init__(self) -> None:
        self.buf = bytearray()
        self.transport: asyncio.WriteTransport | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._lost: BaseException | None = None

    @classmethod
    async def open(cls, host: str, port: int) -> Connection:
        loop = asyncio.get_running_loop()
        _, conn = await loop.create_connection(cls, host, port)
        return conn

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is no subclass

    def data_received(self, data: bytes) -> None:
        self.buf += data
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    def connection_lost(self, exc: BaseException | None) -> None:
        self._lost = exc or HttpError("connection closed by the server")
        w = self._waiter
        if w is not None and not w.done():
            w.set_exception(self._lost)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    async def _more(self) -> None:
        if self._lost is not None:
            raise self._lost
        self._waiter = asyncio.get_running_loop().create_future()
        await self._waiter

    async def _head(self) -> tuple[int, bytes]:
        while (end := self.buf.find(b"\r\n\r\n")) < 0:
            await self._more()
        head = bytes(self.buf[:end]).lower()
        del self.buf[: end + 4]
        return int(head[9:12]), head

    async def _exactly(self, n: int) -> bytes:
        while len(self.buf) < n:
            await self._more()
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    async def _chunk(self) -> bytes:
        """The next chunk of a chunked body; b"" at its end."""
        while (end := self.buf.find(b"\r\n")) < 0:
            await self._more()
        size = int(self.buf[:end].split(b";")[0], 16)
        del self.buf[: end + 2]
        data = await self._exactly(size + 2)
        return data[:-2]

    async def request(self, raw: bytes) -> tuple[int, bytes]:
        """Send one prebuilt request; the status and the whole body."""
        assert self.transport is not None
        self.transport.write(raw)
        status, head = await self._head()
        at = head.find(b"content-length:")
        if at >= 0:
            size = int(head[at + 15: head.find(b"\r\n", at) if b"\r\n" in head[at:] else None])
            return status, await self._exactly(size)
        if b"transfer-encoding: chunked" in head:
            parts = []
            while chunk := await self._chunk():
                parts.append(chunk)
            return status, b"".join(parts)
        return status, b""

    async def events(self, raw: bytes) -> AsyncIterator[bytes]:
        """Send a request answered with SSE; yield each event's `data:` payload."""
        assert self.transport is not None
        self.transport.write(raw)
        status, head = await self._head()
        if status != 200 or b"text/event-stream" not in head:
            raise HttpError(f"not an event stream: HTTP {status}")
        pending = b""
        while chunk := await self._chunk():
            pending += chunk
            if b"\r" in pending and not pending.endswith(b"\r"):
                pending = pending.replace(b"\r\n", b"\n")  # SSE lines may end in CRLF
            *complete, pending = pending.split(b"\n\n")
            for event in complete:
                for line in event.split(b"\n"):
                    if line.startswith(b"data:"):
                        yield line[5:].lstrip()


def post(path: str, body: bytes, host: str, headers: dict[str, str] | None = None) -> bytes:
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    return (f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n{extra}\r\n").encode() + body


def get(path: str, host: str, headers: dict[str, str] | None = None) -> bytes:
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    return f"GET {path} HTTP/1.1\r\nHost: {host}\r\n{extra}\r\n".encode()
