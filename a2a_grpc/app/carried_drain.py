"""SIGTERM's drain for `serve --grpc-carrier pyvoy`, across the two
processes: `serve`, which gets the signal, and Envoy, whose embedded
Python runs the app (no signal reaches it there). Two FIFOs in a folder of
their own: `serve` writes to `ask`, the app drains as `serve` would
(app/serve.py `drain`: /readyz 503, the notice, calls refused, streams
ended, the grace), then writes to `done`; `serve` then drains Envoy itself
and stops it. FIFOs rather than a request to the app's port: that port may
take only clients with a certificate (mutual TLS). Each end keeps its FIFO
open for reading and writes without waiting, so neither ever blocks."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

log = logging.getLogger("a2a_grpc")
FOLDER = "A2A_GRPC_CARRIED_DRAIN"  # where the FIFOs are, for the app
ASK, DONE = b"drain\n", b"done\n"


class Asker:
    """`serve`'s end: the FIFOs, made before Envoy starts."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="a2a-grpc-drain-"))
        for name in ("ask", "done"):
            os.mkfifo(self.folder / name, 0o600)
        self._done = os.open(self.folder / "done", os.O_RDWR | os.O_NONBLOCK)

    async def drain(self, within: float) -> bool:
        """Ask the app to drain; whether it said it had within `within` s."""
        try:
            _say(self.folder / "ask", ASK)  # ENXIO: the app is not listening
            async with asyncio.timeout(within):
                await _heard(self._done, DONE)
            return True
        except (TimeoutError, OSError) as exc:
            log.warning("the app did not say it had drained (%s): stopping it",
                        exc or f"not within {within:g} s")
            return False

    def close(self) -> None:
        os.close(self._done)
        shutil.rmtree(self.folder, ignore_errors=True)


def listen(drain: Callable[[], Awaitable[None]]) -> Callable[[], None]:
    """The app's end: `drain()` when `serve` asks, then say so (nothing if it
    was not started by `serve --grpc-carrier pyvoy`); returns what stops
    listening."""
    folder = os.environ.get(FOLDER)
    if not folder:
        return lambda: None
    fd = os.open(Path(folder) / "ask", os.O_RDWR | os.O_NONBLOCK)

    async def asked() -> None:
        await _heard(fd, ASK)
        try:
            await drain()
        finally:
            _say(Path(folder) / "done", DONE)

    waiting = asyncio.get_running_loop().create_task(asked(), name="a2a-carried-drain")

    def stop() -> None:
        waiting.cancel()
        os.close(fd)

    return stop


def _say(path: Path, what: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    try:
        os.write(fd, what)
    finally:
        os.close(fd)


async def _heard(fd: int, what: bytes) -> None:
    """Until `what` has been read from `fd` (a FIFO opened not to block)."""
    loop = asyncio.get_running_loop()
    heard = loop.create_future()
    got = bytearray()

    def readable() -> None:
        with contextlib.suppress(BlockingIOError):
            got.extend(os.read(fd, 64))
        if what in got and not heard.done():
            heard.set_result(None)

    loop.add_reader(fd, readable)
    try:
        await heard
    finally:
        loop.remove_reader(fd)
