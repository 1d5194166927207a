"""Partitions for the chaos run: a TCP proxy of the run's own between one
replica and PostgreSQL, and one between it and Redis. While cut, a proxy
forwards nothing and answers nothing, in either direction, and keeps every
socket open: the replica's connections hang as a black-holed network's do
(no reset tells it anything) until its own timeouts, or the heal, end the
wait. New connections made meanwhile are accepted and then hang too. Healed,
the bytes held back flow on, as they would once a network comes back.

Only loopback: the proxies listen on 127.0.0.1 and reach the run's own Redis
and the test PostgreSQL there.
"""

from __future__ import annotations

import asyncio
import contextlib


class Blackhole:
    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = 0
        self._open = asyncio.Event()
        self._open.set()
        self._server: asyncio.Server | None = None
        self._live: set[asyncio.StreamWriter] = set()

    async def start(self) -> Blackhole:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def cut(self) -> None:
        self._open.clear()

    def heal(self) -> None:
        self._open.set()

    async def close(self) -> None:
        self.heal()
        for writer in list(self._live):
            with contextlib.suppress(Exception):
                writer.transport.abort()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._live.add(writer)
        try:
            await self._open.wait()
            try:
                up_reader, up_writer = await asyncio.open_connection("127.0.0.1",
                                                                     self.target_port)
            except OSError:
                writer.transport.abort()
                return
            self._live.add(up_writer)
            await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer),
                                 return_exceptions=True)
            self._live.discard(up_writer)
        finally:
            self._live.discard(writer)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                await self._open.wait()  # cut: held here, neither sent nor refused
                writer.write(data)
                await writer.drain()
        finally:
            with contextlib.suppress(Exception):
                writer.close()
