"""Memory under load: what tasks and open streams cost a server, and whether
every stream still gets its events. Each measure starts fresh servers.

- RSS growth for N tasks: resident memory before and after N SendMessage
  calls (JSON-RPC, 32 at a time), after a warm-up.
- N concurrent open streams: N clients each send `slow 4` (working, a status
  every 2 s, the echo, completed) and hold the stream open; once every
  stream has its first event, the server's RSS is read; then every stream
  must end COMPLETED after both status notes and the echoed artifact.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from a2a_grpc.generated import a2a_pb2 as pb

from . import drive
from .servers import Server, start_all

SLOW = "slow 4"
MB = 1024 * 1024


@dataclass
class Memory:
    label: str  # e.g. "RSS growth, 10000 tasks"
    ours: float
    sdk: float
    unit: str
    detail: str  # errors, streams delivered, ...


def _slow_ok(states: list[str], texts: list[str]) -> bool:
    notes = [t for t in texts if t.endswith("s left")]
    return (bool(states) and states[-1] == "TASK_STATE_COMPLETED" and len(notes) >= 2
            and f"echo: {SLOW}" in texts)


def _json_ok(events: list[dict[str, object]]) -> bool:
    states, texts = [], []
    for e in events:
        update = e.get("statusUpdate")
        if isinstance(update, dict):
            status = update.get("status", {})
            states.append(status.get("state", ""))
            for part in status.get("message", {}).get("parts", []):
                texts.append(part.get("text", ""))
        art = e.get("artifactUpdate")
        if isinstance(art, dict):
            texts += [p.get("text", "") for p in art["artifact"].get("parts", [])]
    return _slow_ok(states, texts)


def _pb_ok(events: list[pb.StreamResponse]) -> bool:
    states, texts = [], []
    for e in events:
        if e.HasField("status_update"):
            states.append(pb.TaskState.Name(e.status_update.status.state))
            texts += [p.text for p in e.status_update.status.message.parts]
        if e.HasField("artifact_update"):
            texts += [p.text for p in e.artifact_update.artifact.parts]
    return _slow_ok(states, texts)


async def rss_after_tasks(server: Server, n: int) -> tuple[float, int]:
    """(bytes of RSS growth per task, errors)."""
    http = drive.Http(server.http)
    await drive.load(http.jsonrpc_send, 1.0, 8)  # warm-up: code paths, buffers
    before = server.rss()
    conns = [await http.jsonrpc_send() for _ in range(32)]
    errors = 0
    queue = iter(range(n))

    async def worker(call: drive.Call) -> None:
        nonlocal errors
        for _ in queue:
            if not await call():
                errors += 1

    await asyncio.gather(*(worker(c) for c in conns))
    return (server.rss() - before) / n, errors


async def open_streams(server: Server, n: int, binding: str) -> tuple[float, int]:
    """(bytes of RSS per open stream, streams that got every event)."""
    http, rpc = drive.Http(server.http), drive.Grpc(server.grpc)
    before = server.rss()
    opened = 0
    all_open = asyncio.Event()

    def first(_: float) -> None:
        nonlocal opened
        opened += 1
        if opened == n:
            all_open.set()

    class Firsts(list[float]):
        def append(self, value: float) -> None:
            first(value)

    firsts = Firsts()
    if binding == "gRPC":
        calls = [await rpc.stream(SLOW, firsts, _pb_ok) for _ in range(n)]
    else:
        calls = [await http.stream("jsonrpc", SLOW, firsts, _json_ok) for _ in range(n)]
    running = [asyncio.ensure_future(c()) for c in calls]
    try:
        await asyncio.wait_for(all_open.wait(), 30)
        held = float(server.rss())
    except TimeoutError:
        held = float("nan")
    results = await asyncio.gather(*running, return_exceptions=True)
    await rpc.close()
    return (held - before) / n, sum(1 for r in results if r is True)


async def _measure(server: Server, what: str, tasks: int, streams: int,
                   progress: Callable[[str], None]) -> tuple[float, int]:
    start_all([server])
    try:
        began = time.perf_counter()
        if what == "tasks":
            found = await rss_after_tasks(server, tasks)
        else:
            found = await open_streams(server, streams, what)
        progress(f"memory {what} {server.label}: {found[0] / 1024:.1f} KiB each, "
                 f"{found[1]} ({time.perf_counter() - began:.0f} s)")
        return found
    finally:
        server.stop()


async def run(sdk_python: Path, tasks: int, streams: int,
              progress: Callable[[str], None]) -> list[Memory]:
    out: list[Memory] = []
    sdk = await _measure(Server("sdk", sdk_python), "tasks", tasks, streams, progress)
    with tempfile.TemporaryDirectory() as tmp:
        for store, label in (("memory", "memory store"),
                             (f"sqlite:///{tmp}/tasks.db", "SQLite, the default store")):
            ours = await _measure(Server("ours", store=store), "tasks", tasks, streams, progress)
            out.append(Memory(f"RSS growth per task, {tasks} tasks (ours: {label})",
                              ours[0] / 1024, sdk[0] / 1024, "KiB",
                              f"errors: ours {ours[1]}, SDK {sdk[1]}"))
    for binding in ("JSON-RPC", "gRPC"):
        ours = await _measure(Server("ours"), binding, tasks, streams, progress)
        theirs = await _measure(Server("sdk", sdk_python), binding, tasks, streams, progress)
        out.append(Memory(f"RSS per open stream, {streams} {binding} streams", ours[0] / 1024,
                          theirs[0] / 1024, "KiB",
                          f"streams that got every event: ours {ours[1]}/{streams}, "
                          f"SDK {theirs[1]}/{streams}"))
    return out
