"""A TCP proxy on loopback that can refuse or cut connections: drops on demand."""

from __future__ import annotations

import asyncio
import contextlib


class Proxy:
    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.drop_next = 0  # close this many new connections at once
        self.connections = 0
        self._live: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None
        self.port = 0

    async def start(self) -> Proxy:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def cut(self) -> None:
        """Drop every open connection, as a network failure would."""
        for writer in list(self._live):
            with contextlib.suppress(Exception):
                writer.transport.abort()
        self._live.clear()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        if self.drop_next > 0:
            self.drop_next -= 1
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.transport.abort()
            return
        self._live.update((writer, up_writer))
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer),
                             return_exceptions=True)
        self._live.discard(writer)
        self._live.discard(up_writer)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    finally:
        with contextlib.suppress(Exception):
            writer.transport.abort()
