"""SIGTERM's drain and SIGHUP's reload for `serve --grpc-carrier pyvoy`,
across the two processes: `serve`, which gets the signals, and Envoy,
whose embedded Python runs the app (no signal reaches it there). Two FIFOs
in a folder of their own. SIGTERM: `serve` writes "drain" to `ask`, the
app drains as `serve` would (app/serve.py `drain`: /readyz 503, the notice,
calls refused, streams ended, the grace), then writes to `done`; `serve`
then drains Envoy itself and stops it. SIGHUP: `serve` writes "reload",
and the app reloads what SIGHUP reloads (app/hangup.py). FIFOs rather
than a request to the app's port: that port may take only clients with a
certificate (mutual TLS). Each end keeps its FIFO open for reading and
writes without waiting, so neither ever blocks. And when `serve` dies
without stopping Envoy (SIGKILL), Envoy dies with it at once (`follow`),
as the process killed would have: no orphan keeps the port."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import tempfile
from collections.abc import AsyncGenerator, Awaitable, Callable
from pathlib import Path

from a2a_grpc.app import process

log = logging.getLogger("a2a_grpc")
FOLDER = "A2A_GRPC_CARRIED_DRAIN"  # where the FIFOs are, for the app
ASK, DONE, RELOAD = b"drain\n", b"done\n", b"reload\n"


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

    def reload(self) -> None:
        """Ask the app to reload (SIGHUP's)."""
        try:
            _say(self.folder / "ask", RELOAD)
        except OSError as exc:  # ENXIO: the app is not listening (not started yet, or gone)
            log.warning("could not pass SIGHUP on to the app (%s)", exc)

    def close(self) -> None:
        os.close(self._done)
        shutil.rmtree(self.folder, ignore_errors=True)


def listen(drain: Callable[[], Awaitable[None]],
           reload: Callable[[], None]) -> Callable[[], None]:
    """The app's end: `reload()` each time `serve` asks; `drain()` when it
    asks that, then say so (nothing if the app was not started by `serve
    --grpc-carrier pyvoy`); returns what stops listening."""
    folder = os.environ.get(FOLDER)
    if not folder:
        return lambda: None
    fd = os.open(Path(folder) / "ask", os.O_RDWR | os.O_NONBLOCK)

    async def asked() -> None:
        async with contextlib.aclosing(_messages(fd)) as messages:
            async for message in messages:
                if message == RELOAD:
                    reload()
                elif message == ASK:
                    break
        try:
            await drain()
        finally:
            _say(Path(folder) / "done", DONE)

    waiting = asyncio.get_running_loop().create_task(asked(), name="a2a-carried-drain")

    def stop() -> None:
        waiting.cancel()
        os.close(fd)

    return stop


def follow(pid: int) -> Callable[[], None]:
    """SIGKILL this process (Envoy) as `pid` (its `serve`, its parent) exits;
    returns what stops following. The kernel's parent-death signal, set from
    the app's thread (it lasts as long as that thread does: the app's life),
    sends it as `serve` exits, whatever the app is doing; where that is
    missing, a pidfd on the loop; where both are (not Linux), nothing: Envoy
    then stops on its own, later, once its parent is gone."""
    if os.getppid() == pid and process.die_with_parent(pid, signal.SIGKILL):
        return lambda: None
    loop = asyncio.get_running_loop()
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:  # gone already
        os.kill(os.getpid(), signal.SIGKILL)
        return lambda: None
    except (OSError, AttributeError):
        return lambda: None
    loop.add_reader(fd, os.kill, os.getpid(), signal.SIGKILL)  # readable: it exited

    def stop() -> None:
        loop.remove_reader(fd)
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
    async with contextlib.aclosing(_messages(fd)) as messages:  # its reader removed on return
        async for message in messages:
            if message == what:
                return


async def _messages(fd: int) -> AsyncGenerator[bytes, None]:
    """Each line read from `fd`, with its newline, as it comes."""
    loop = asyncio.get_running_loop()
    came: asyncio.Queue[bytes] = asyncio.Queue()
    got = bytearray()

    def readable() -> None:
        with contextlib.suppress(BlockingIOError):
            got.extend(os.read(fd, 64))
        while (end := got.find(b"\n")) >= 0:
            came.put_nowait(bytes(got[:end + 1]))
            del got[:end + 1]

    loop.add_reader(fd, readable)
    try:
        while True:
            yield await came.get()
    finally:
        loop.remove_reader(fd)
