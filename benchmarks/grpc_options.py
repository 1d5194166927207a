"""`make bench ARGS="--only grpc-options"` (issue 50): what grpc.aio itself
can give, on the ceiling and on ours, gRPC SendMessage and GetTask at 32
calls at a time, every server on CPU 0, alternating, medians.

Variants: the event loop (uvloop, the default of both, or asyncio's), grpc
core's polling engine (`GRPC_POLL_STRATEGY`: epoll1, the default, or poll),
server arguments (`grpc.optimization_target` throughput, HTTP/2 BDP probing
off, `grpc.max_concurrent_streams` 100), and a raw-bytes GetTask (the
ceiling answering its stored bytes without parsing or serialising them).

Its section of docs/benchmarks-history.md sits between its own markers (a
measurement that settled a question: the levers gave nothing repeatable).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from . import report
from .measure import rounds as measure_rounds
from .report import Row, Table, _f, med
from .servers import Server

ROWS = [Row("SendMessage", "gRPC", 32), Row("GetTask", "gRPC", 32)]
BEGIN, END = "<!-- bench:grpc-options -->", "<!-- /bench:grpc-options -->"
OPTIONS = [["grpc.optimization_target", "throughput"], ["grpc.http2.bdp_probe", 0],
           ["grpc.max_concurrent_streams", 100]]


def variants() -> list[Server]:
    ceiling = [
        Server("ceiling", label="ceiling"),
        Server("ceiling", label="ceiling, asyncio loop", env={"A2A_CEILING_LOOP": "asyncio"}),
        Server("ceiling", label="ceiling, poll engine", env={"GRPC_POLL_STRATEGY": "poll"}),
        Server("ceiling", label="ceiling, server arguments",
               env={"A2A_CEILING_GRPC_OPTIONS": json.dumps(OPTIONS)}),
        Server("ceiling", label="ceiling, raw-bytes GetTask", env={"A2A_CEILING_RAW": "1"}),
    ]
    ours = [
        Server("ours", label="ours"),
        Server("ours", label="ours, asyncio loop", extra=["--loop", "asyncio"]),
        Server("ours", label="ours, poll engine", env={"GRPC_POLL_STRATEGY": "poll"}),
    ]
    return ceiling + ours


async def run(rounds: int, seconds: float, progress: Callable[[str], None]) -> Table:
    servers = variants()
    progress(f"starting {len(servers)} gRPC variants (ceiling and ours) on CPU 0")
    for s in servers:
        s.start()
    try:
        for s in servers:
            s.wait_ready()
        return await measure_rounds(servers, ROWS, rounds, seconds)
    finally:
        for s in servers:
            s.stop()


def render(table: Table) -> str:
    lines = [BEGIN, "### grpc.aio's own levers", "",
             "gRPC, 32 calls at a time, memory store (ours) and the ceiling's dict; medians "
             "of one interleaved run; each variant against its own default.", "",
             "| variant | SendMessage /s | vs default | GetTask /s | vs default |",
             "|---|---|---|---|---|"]
    for s in variants():
        base = "ceiling" if s.name == "ceiling" else "ours"
        cells = []
        for row in ROWS:
            got = table.get(row, {})
            rate, ref = med(got.get(s.label)), med(got.get(base))
            cells += [_f(rate), f"{rate / ref:.2f}x" if ref and rate == rate else ""]
        lines.append(f"| {s.label} | " + " | ".join(cells) + " |")
    return "\n".join([*lines, "", END])


def write_docs(text: str) -> None:
    report.write_section(BEGIN, END, text, report.HISTORY)
