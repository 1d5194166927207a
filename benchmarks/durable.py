"""`make bench`, durable stores (issue 17): ours and the official SDK, each on
memory, SQLite and PostgreSQL, side by side in one run.

- ours: `a2a-grpc serve --store memory | sqlite:///FILE | postgresql://...`
  (SQLite is what `make run` and every new user gets);
- SDK: its reference server (tests/interop/peers/sdk_server.py) on its
  InMemoryTaskStore, or its DatabaseTaskStore (SQLAlchemy) on SQLite
  (aiosqlite, the driver's defaults) or PostgreSQL (asyncpg), as its
  documentation sets them up.

Same agent, same load generator (JSON-RPC): SendMessage at 1 and 32
concurrent, GetTask at 32, `stream 100` at 4 streams; then the growth curve:
one `stream N 1024` at a time (N chunks of 1 KiB into one artifact) for
N = 100, 1,000, 10,000, events/s per N and store. A growth stream that has
not ended after `--growth-limit` seconds is cut there: its rate is the events
it delivered by then, and that server is restarted (its agent would go on
working for nothing, on the CPU the next server is measured on).
PostgreSQL rows need the server on loopback (A2A_TEST_POSTGRES); without it
they are left out, and the report says so.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from . import drive, report
from .durable_report import Growth
from .servers import Server, start_all

POSTGRES = os.environ.get("A2A_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
STORES = ("memory", "SQLite", "PostgreSQL")
GROWTH = (100, 1_000, 10_000)
CHUNK = 1024
ROWS = [report.Row("SendMessage", "JSON-RPC", 1), report.Row("SendMessage", "JSON-RPC", 32),
        report.Row("GetTask", "JSON-RPC", 32), report.Row("stream 100", "JSON-RPC", 4)]


async def _schema(name: str) -> str | None:
    """A fresh PostgreSQL schema, or None when the server is unreachable."""
    try:
        import asyncpg

        conn = await asyncpg.connect(POSTGRES, timeout=5)
    except Exception:  # any failure to reach it: the caller reports the rows left out
        return None
    await conn.execute(f"CREATE SCHEMA {name}")
    await conn.close()
    return name


async def _drop(schemas: list[str]) -> None:
    import asyncpg

    conn = await asyncpg.connect(POSTGRES, timeout=5)
    for name in schemas:
        await conn.execute(f"DROP SCHEMA {name} CASCADE")
    await conn.close()


def _sqlalchemy_pg(url: str) -> str:
    return "postgresql+asyncpg://" + url.split("://", 1)[1]


async def servers(sdk_python: Path, workdir: Path) -> tuple[list[Server], list[str], str]:
    """The six servers (four without PostgreSQL), the schemas made, and a note."""
    made: list[Server] = [
        Server("ours", store="memory", label="ours memory"),
        Server("ours", store=f"sqlite:///{workdir / 'ours.db'}", label="ours SQLite"),
        Server("sdk", sdk_python, label="SDK memory"),
        Server("sdk", sdk_python, label="SDK SQLite",
               env={"A2A_SDK_STORE": f"sqlite+aiosqlite:///{workdir / 'sdk.db'}"}),
    ]
    tag = uuid.uuid4().hex[:8]
    ours_pg, sdk_pg = await _schema(f"bench_ours_{tag}"), await _schema(f"bench_sdk_{tag}")
    if ours_pg is None or sdk_pg is None:
        return made, [], f"PostgreSQL at {POSTGRES} is unreachable: its rows are left out."
    sep = "&" if "?" in POSTGRES else "?"
    made.insert(2, Server("ours", store=f"{POSTGRES}{sep}search_path={ours_pg}",
                          label="ours PostgreSQL"))
    made.append(Server("sdk", sdk_python, label="SDK PostgreSQL", env={
        "A2A_SDK_STORE": _sqlalchemy_pg(POSTGRES), "A2A_SDK_PG_SCHEMA": sdk_pg}))
    return made, [ours_pg, sdk_pg], ""


def growth_ok(n: int) -> Callable[[int, dict[str, object]], bool]:
    """Event `k` (from 0) of `stream N 1024`: the task, working, chunk i, completed."""
    def ok(k: int, event: dict[str, object]) -> bool:
        if 2 <= k <= n + 1:
            try:
                text = event["artifactUpdate"]["artifact"]["parts"][0]["text"]  # type: ignore[index]
            except (KeyError, IndexError, TypeError):
                return False
            return bool(len(text) == CHUNK and text.startswith(f"chunk {k - 1}/{n}."))
        return "task" in event or "statusUpdate" in event
    return ok


async def growth(server: Server, n: int, limit: float) -> Growth:
    http = drive.Http(server.http)
    conn = await http.connect()
    raw = http.rpc("SendStreamingMessage",
                   f'{{"message":{drive.message_json(f"stream {n} {CHUNK}")}}}')
    ok, count, errors, finished = growth_ok(n), 0, 0, False
    start = time.perf_counter()
    try:
        async with asyncio.timeout(limit):
            async for data in conn.events(raw):
                if not ok(count, json.loads(data)["result"]):
                    errors += 1
                count += 1
        finished = count == n + 3  # task, working, n chunks, completed
        errors += 0 if finished else 1
    except TimeoutError:
        pass
    finally:
        conn.close()
    return Growth(count / (time.perf_counter() - start), finished, errors)


async def run(sdk_python: Path, rounds: int, seconds: float, limit: float, workdir: Path,
              progress: Callable[[str], None]) -> tuple[report.Table, dict[tuple[str, int],
                                                                          list[Growth]], str]:
    from .measure import rounds as measure_rounds

    made, schemas, note = await servers(sdk_python, workdir)
    if note:
        progress(note)
    progress("starting " + ", ".join(s.label for s in made) + " on CPU 0")
    start_all(made)
    curve: dict[tuple[str, int], list[Growth]] = {}
    try:
        table = await measure_rounds(made, ROWS, rounds, seconds)
        for n in GROWTH:
            for r in range(rounds):
                for s in made:
                    if r and not all(g.finished for g in curve.get((s.label, n), [])):
                        continue  # cut at the limit once: once is enough
                    g = await growth(s, n, limit)
                    curve.setdefault((s.label, n), []).append(g)
                    progress(f"growth round {r + 1}/{rounds} stream {n} x 1 KiB {s.label}: "
                             f"{g.rate:,.0f} events/s"
                             + ("" if g.finished else f" (cut at {limit:g} s: restarting)"))
                    if not g.finished:
                        s.stop()
                        s.start()
                        s.wait_ready()
    finally:
        for s in made:
            s.stop()
        if schemas:
            await _drop(schemas)
    return table, curve, note
