"""`make bench`, the event bus (issue 18): what `--bus redis://` costs one replica.

The same server twice, side by side in one run: `serve --store postgresql://...`
with the in-process bus, and with `--bus redis://...` (every event added to
its task's Redis stream, every stream read back from Redis). Same agent,
same load generator (JSON-RPC): SendMessage at 1 and 32 concurrent, `stream
100` at 4 streams (with the median time to a stream's first event).

Its section of docs/benchmarks.md sits between its own markers, so `make
bench ARGS="--only bus"` rewrites only that. Needs the PostgreSQL and the
Redis on loopback (A2A_TEST_POSTGRES, A2A_TEST_REDIS); without them the
section says so.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path

from tests.redis_bus import drop_prefix

from . import report
from .durable import POSTGRES, _drop, _schema
from .report import Row, Table, _f, _pct, med
from .servers import Server

REDIS = os.environ.get("A2A_TEST_REDIS", "redis://127.0.0.1:6379/0")
ROWS = [Row("SendMessage", "JSON-RPC", 1), Row("SendMessage", "JSON-RPC", 32),
        Row("stream 100", "JSON-RPC", 4)]
LOCAL, SHARED = "in-process bus", "Redis bus"
BEGIN, END = "<!-- bench:bus -->", "<!-- /bench:bus -->"


async def _redis_ok() -> bool:
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(REDIS)
    try:
        return bool(await client.ping())
    except Exception:  # any failure to reach it: the section says so
        return False
    finally:
        await client.aclose()


async def run(rounds: int, seconds: float, progress: Callable[[str], None]) -> tuple[Table, str]:
    from .measure import side_by_side

    tag = uuid.uuid4().hex[:8]
    local, shared = await _schema(f"bench_bus_a_{tag}"), await _schema(f"bench_bus_b_{tag}")
    if local is None or shared is None or not await _redis_ok():
        return {}, f"PostgreSQL at {POSTGRES} or Redis at {REDIS} is unreachable: not measured."
    sep = "&" if "?" in POSTGRES else "?"
    prefix = f"bench{tag}"
    made = [Server("ours", store=f"{POSTGRES}{sep}search_path={local}", label=LOCAL),
            Server("ours", store=f"{POSTGRES}{sep}search_path={shared}", label=SHARED,
                   extra=["--bus", f"{REDIS}?prefix={prefix}"])]
    progress("starting ours on PostgreSQL, with the in-process bus and with Redis, on CPU 0")
    try:
        return await side_by_side(made, ROWS, rounds, seconds), ""
    finally:
        await _drop([local, shared])
        await drop_prefix(prefix)


def render(table: Table, note: str) -> str:
    lines = [BEGIN, "### The event bus: one replica, in-process bus against Redis", ""]
    if note:
        return "\n".join([*lines, note, "", END])
    lines += ["Both on PostgreSQL; JSON-RPC, medians; `ev`: events/s. For a stream, p50 is "
              "the time to its first event.", "",
              "| scenario | conc. | in-process /s | Redis /s | Redis / in-process | "
              "p50 ms (in-process / Redis) |", "|---|---|---|---|---|---|"]
    for row in ROWS:
        got = table.get(row, {})
        a, b = med(got.get(LOCAL)), med(got.get(SHARED))
        key = "first_event_ms" if row.scenario.startswith("stream") else "p50_ms"
        unit = " ev" if row.scenario.startswith("stream") else ""
        lines.append(f"| {row.scenario} | {row.concurrency} | {_f(a)}{unit} | {_f(b)}{unit} | "
                     f"{_pct(b, a)} | {_f(med(got.get(LOCAL), key), 2)} / "
                     f"{_f(med(got.get(SHARED), key), 2)} |")
    return "\n".join([*lines, "", END])


def write_docs(text: str) -> None:
    report.write_section(BEGIN, END, text)


async def section(rounds: int, seconds: float, folder: Path,
                  progress: Callable[[str], None]) -> str:
    """This module's section of docs/benchmarks.md, measured and rendered (wire.SECTIONS)."""
    return render(*await run(rounds, seconds, progress))
