"""Envoy as `serve --grpc-carrier pyvoy` runs it (pyvoy/serve.py): in a
process group of its own, with its output held until it has started.

- **Its own process group.** A terminal's Ctrl-C (and `timeout`'s or a
  service manager's signal to the group) reaches every process of the
  foreground group. Envoy stops at once on SIGINT or SIGTERM, so `serve`
  could not drain it: open streams were cut without their resumable error.
  Envoy therefore starts through a launcher that makes it the leader of a
  group of its own, and only `serve` hears the terminal; it drains Envoy and
  then stops it. pyvoy starts Envoy itself with no way to ask for this; the
  launcher is put where pyvoy looks for Envoy's binary while it starts.
- **Its output held until it has started.** Envoy's stderr is also the
  carried app's log. A start that fails (an agent that cannot be imported,
  a store that cannot be opened) would print pyvoy's traceback and Envoy's
  whole configuration; `serve` says why in one line instead
  (pyvoy/app.py: told), and passes the output on only once Envoy is up.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

LONG = 2000  # a line longer than this is Envoy's configuration: never worth showing


@contextlib.contextmanager
def envoy_apart(folder: Path) -> Iterator[None]:
    """While pyvoy starts Envoy: Envoy in a process group of its own."""
    try:
        import pyvoy._server as started_by
    except ImportError:
        yield
        return
    find = getattr(started_by, "get_envoy_path", None)
    if find is None:  # a pyvoy that finds Envoy otherwise: in our group, as before
        yield
        return
    launcher = folder / "envoy"
    launcher.write_text(f"#!{sys.executable} -IS\nimport os, sys\n"
                        "os.setpgid(0, 0)\n"
                        f"os.execv({str(find())!r}, [{str(find())!r}, *sys.argv[1:]])\n")
    launcher.chmod(0o700)
    setattr(started_by, "get_envoy_path", lambda: launcher)  # noqa: B010 (not exported)
    try:
        yield
    finally:
        setattr(started_by, "get_envoy_path", find)  # noqa: B010


class EnvoyOutput:
    """Envoy's stderr through a pipe of ours: held until `live()`, then passed on."""

    def __init__(self) -> None:
        self._read, self.fd = os.pipe()  # Envoy writes to `fd`
        self._held = bytearray()
        self._live = False
        self._copying: asyncio.Task[None] | None = None

    async def open(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                     os.fdopen(self._read, "rb", 0))
        self._copying = asyncio.ensure_future(self._copy(reader))

    def spawned(self) -> None:
        """Envoy has its end: ours closes, so its exit ends the copy."""
        with contextlib.suppress(OSError):
            os.close(self.fd)

    async def _copy(self, reader: asyncio.StreamReader) -> None:
        while chunk := await reader.read(65536):
            if self._live:
                self._write(chunk)
            else:
                self._held += chunk

    @staticmethod
    def _write(chunk: bytes) -> None:
        with contextlib.suppress(OSError):
            sys.stderr.buffer.write(chunk)
            sys.stderr.flush()

    def live(self) -> None:
        """Envoy is up: what it said so far, then the rest as it comes."""
        self._live = True
        self._write(bytes(self._held))
        self._held.clear()

    def failed(self) -> None:
        """Envoy did not start and the app did not say why: its output, less its
        configuration."""
        lines = bytes(self._held).splitlines(keepends=True)
        self._write(b"".join(line for line in lines if len(line) <= LONG))
        self._held.clear()

    async def close(self) -> None:
        self.spawned()
        if self._copying is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._copying, 2)

