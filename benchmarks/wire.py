"""`make bench`: our server side by side with the official SDK's, over the wire.

Servers (benchmarks/servers.py) run pinned to CPU 0; the load generator is
this process, pinned to CPU 1, speaking only the wire protocol (no SDK code:
benchmarks/drive.py). Rounds alternate ours / SDK / ceiling for every row;
tables give medians (min-max) and ratios; every answer is checked.

1. Throughput and latency: SendMessage on JSON-RPC, REST and gRPC at
   concurrency 1, 8, 32, 64 (the plot); GetTask at 32; `stream 100` at 4
   (events/s and time to first event).
2. ListTasks (a page of 50) at 1,000 and 100,000 stored tasks: ours on its
   default SQLite store (filled through the store API before it starts), the
   SDK with its InMemoryTaskStore seeded in its own process.
3. Memory (benchmarks/capacity.py): RSS growth for 10,000 tasks; 1,000
   concurrent open streams, each checked for every event it must get.
4. Durable stores (benchmarks/durable.py): ours and the SDK each on memory,
   SQLite and PostgreSQL; the per-event cost as a streamed task grows.
5. The sections (SECTIONS below), each a module of its own with its section
   of docs/benchmarks.md: the event bus (bus.py: one replica on PostgreSQL,
   with the in-process bus and with Redis), observability (observe.py: the
   default server without and with a span exporter), the HTTP faces
   (faces.py: aiohttp, and ASGI under uvicorn, alone and in FastAPI), an
   official-SDK executor on ours and on the SDK's own server
   (sdk_executor.py), workers (workers.py: `serve --workers N`, CPU time a
   call). `--only NAME` runs one.

Adding a section: a module here with `async def section(rounds, seconds,
folder, progress) -> str` (the section, rendered) and `write_docs(text)`
(report.write_section between its markers), and its name in SECTIONS.
Adding a row to the main table: `plan()`; a peer: servers.py.

Run: `make bench` (`ARGS="--rounds 1 --seconds 1"` for a quick look;
`--only stream` to run matching rows). Writes docs/benchmarks.md's results
section and docs/bench-wire.png unless `--no-docs`.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import tempfile
from pathlib import Path

from a2a_grpc.stores import Scope
from a2a_grpc.stores.sqlite import SqliteTaskStore
from tests.interop import envs

from . import capacity, report
from .measure import progress, rounds
from .servers import LOADGEN_CPU, Server, js_modules, pin, start_all
from .stores import fill  # the store benchmark's filler: one task per append

BINDINGS = ("JSON-RPC", "REST", "gRPC")
SWEEP = (1, 8, 32, 64)
STREAM_CONCURRENCY = 4
LIST_CONCURRENCY = 8
SCOPE = Scope("", "")


def plan() -> list[report.Row]:
    rows = [report.Row("SendMessage", b, c) for b in BINDINGS for c in SWEEP]
    rows += [report.Row("GetTask", b, 32) for b in BINDINGS]
    rows += [report.Row("stream 100", b, STREAM_CONCURRENCY) for b in BINDINGS]
    return rows


async def fill_sqlite(path: Path, count: int) -> None:
    store = SqliteTaskStore(str(path))
    await store.open()
    try:
        await fill(store, 0, count, 64)
    finally:
        await store.close()


async def list_phase(sdk_python: Path, n: int, seconds: float, big: int,
                     workdir: Path) -> report.Table:
    servers = [Server("ceiling")]
    for count in (1000, big):
        path = workdir / f"tasks-{count}.db"
        progress(f"filling {path.name}: {count} tasks through the SQLite store")
        await fill_sqlite(path, count)
        servers.append(Server("ours", store=f"sqlite:///{path}", label=f"ours {count}"))
        servers.append(Server("sdk", sdk_python, env={"A2A_SEED_TASKS": str(count)},
                              label=f"SDK {count}"))
    progress("starting the ListTasks servers (the SDK seeds its store first)")
    start_all(servers)
    try:
        return await rounds(servers, [report.Row("ListTasks", b, LIST_CONCURRENCY)
                                      for b in BINDINGS], n, seconds)
    finally:
        for s in servers:
            s.stop()


# The sections `make bench` runs after the main table, each its module (see above).
SECTIONS = ("bus", "observe", "faces", "sdk-executor", "workers")


def wanted(args: argparse.Namespace, title: str) -> bool:
    """A main row `--only` names (any of its comma-separated parts is in the title)."""
    return not args.only or any(part in title for part in args.only.split(","))


def phase(args: argparse.Namespace, name: str) -> bool:
    """A later phase `--only` names (a part of its name)."""
    return not args.only or any(part in name for part in args.only.split(","))


async def run(args: argparse.Namespace) -> report.Report:
    pin(LOADGEN_CPU)
    sdk_python = envs.sdk_python()
    out = report.Report(args.rounds, args.seconds)
    rows = [r for r in plan() if wanted(args, r.title)]
    if rows:
        servers = [Server("ours"), Server("sdk", sdk_python),
                   Server("js", env={"NODE_PATH": str(js_modules())}), Server("ceiling")]
        progress("starting ours, the Python SDK's, the JS SDK's and the ceiling server "
                 "on CPU 0")
        start_all(servers)
        try:
            out.main = await rounds(servers, rows, args.rounds, args.seconds)
        finally:
            for s in servers:
                s.stop()
    if phase(args, "ListTasks"):
        with tempfile.TemporaryDirectory() as tmp:
            out.listing = await list_phase(sdk_python, args.rounds, args.seconds,
                                           args.big, Path(tmp))
    if phase(args, "memory"):
        out.memory = await capacity.run(sdk_python, args.tasks, args.streams, progress)
    if phase(args, "durable"):
        from . import durable

        with tempfile.TemporaryDirectory() as tmp:
            out.durable, out.growth, out.durable_note = await durable.run(
                sdk_python, args.rounds, args.seconds, args.growth_limit, Path(tmp), progress)
        out.growth_limit = args.growth_limit
    for name in SECTIONS:
        if phase(args, name):
            module = importlib.import_module(f"benchmarks.{name.replace('-', '_')}")
            with tempfile.TemporaryDirectory() as tmp:
                out.sections[name] = await module.section(args.rounds, args.seconds,
                                                          Path(tmp), progress)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.5)
    parser.add_argument("--only", default="",
                        help="run only rows whose title contains this (or, comma-separated, "
                             "any of several)")
    parser.add_argument("--big", type=int, default=100_000, help="the large ListTasks store")
    parser.add_argument("--tasks", type=int, default=10_000, help="tasks for the RSS measure")
    parser.add_argument("--streams", type=int, default=1000, help="concurrent open streams")
    parser.add_argument("--growth-limit", type=float, default=60.0,
                        help="seconds a durable growth stream may take before it is cut")
    parser.add_argument("--no-docs", action="store_true", help="print only")
    args = parser.parse_args()
    try:
        import uvloop
        result = uvloop.run(run(args))
    except ImportError:
        result = asyncio.run(run(args))
    text = report.render(result) if result.measured() else ""
    print("\n\n".join(t for t in (text, *result.sections.values()) if t))
    if not args.no_docs:
        if result.measured():
            report.write_docs(result, text)
        for name, section in result.sections.items():
            importlib.import_module(f"benchmarks.{name.replace('-', '_')}").write_docs(section)

if __name__ == "__main__":
    main()
