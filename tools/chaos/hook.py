"""The chaos run's webhook: records every push notification it gets (by its
Idempotency-Key, `<taskId>:<seq>`) and answers 200.

Each key's content must be the same every time it comes (a redelivery is
the same notification): a key whose body differs is a fault. For the aimed
kills, `hold_next()` makes the hook keep the next delivery unanswered and
say which replica process sent it (the owner of the connection's socket),
so the run can kill that replica while its delivery is in flight.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

from aiohttp import web


class Hook:
    def __init__(self) -> None:
        self.got: dict[str, list[int]] = defaultdict(list)  # task id -> seqs, as delivered
        self.finals: dict[str, str] = {}  # task id -> the final state a notification said
        self.bodies: dict[str, bytes] = {}  # Idempotency-Key -> the first body it came with
        self.changed: list[str] = []  # keys that came again with another body
        self._held: asyncio.Future[int | None] | None = None  # the held delivery's sender
        self._release = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/push", self._take)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}/push"

    def hold_next(self) -> asyncio.Future[int | None]:
        """The pid of the process whose delivery the hook now holds unanswered
        (None if it cannot tell), once one comes; `release()` lets it go."""
        self._release.clear()
        self._held = asyncio.get_running_loop().create_future()
        return self._held

    def release(self) -> None:
        self._release.set()

    async def _take(self, request: web.Request) -> web.Response:
        key = request.headers.get("Idempotency-Key", "")
        task_id, _, seq = key.rpartition(":")
        raw = await request.read()
        if key:
            first = self.bodies.setdefault(key, raw)
            if first != raw:
                self.changed.append(key)
        if task_id and seq.isdigit():
            self.got[task_id].append(int(seq))
            body: dict[str, Any] = json.loads(raw)
            state = body.get("statusUpdate", {}).get("status", {}).get("state", "")
            if state in ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED"):
                self.finals[task_id] = state
        held = self._held
        if held is not None and not held.done():
            peer = request.transport.get_extra_info("peername") if request.transport else None
            held.set_result(owner_of(peer[1]) if peer else None)
            await self._release.wait()  # its sender is killed meanwhile: this answer is lost
        return web.Response()

    async def stop(self) -> None:
        self._release.set()
        if self._runner is not None:
            await self._runner.cleanup()


def owner_of(port: int) -> int | None:
    """The pid of the process holding the loopback TCP socket bound to `port`."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(f"socket:[{fields[9]}]")
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.readlink(f"/proc/{pid}/fd/{fd}") in inodes:
                    return int(pid)
        except OSError:
            continue
    return None
