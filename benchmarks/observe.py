"""`make bench`, observability (issue 19): what tracing costs on the hot path.

The same server twice, side by side in one run, on the default store
(SQLite, each its own file): `serve` as it starts by default (metrics
counted, no tracer: OTEL_* unset), and with spans exported over OTLP/HTTP
(OTEL_EXPORTER_OTLP_ENDPOINT) to a receiver that answers 200 and counts
what it got (benchmarks/otlp_sink.py, on the load generator's CPU). Same
agent, same load generator (JSON-RPC): SendMessage at 1 and 32 concurrent,
`stream 100` at 4 streams. A third server samples 10% of traces
(OTEL_TRACES_SAMPLER=parentbased_traceidratio), as a busy deployment would.

Its section of docs/benchmarks.md sits between its own markers, so `make
bench ARGS="--only observe"` rewrites only that.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import aiohttp

from . import report
from .report import Row, Table, _f, _pct, med
from .servers import ROOT, Server

ROWS = [Row("SendMessage", "JSON-RPC", 1), Row("SendMessage", "JSON-RPC", 32),
        Row("stream 100", "JSON-RPC", 4)]
OFF, ON, SAMPLED = "tracing off", "tracing on (OTLP)", "tracing on, 10% sampled"
BEGIN, END = "<!-- bench:observe -->", "<!-- /bench:observe -->"


async def run(rounds: int, seconds: float, folder: Path,
              progress: Callable[[str], None]) -> tuple[Table, str]:
    from .measure import side_by_side

    sink, port = await asyncio.to_thread(_start_sink)
    try:
        exporting = {"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}",
                     "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
                     "OTEL_SERVICE_NAME": "a2a-grpc-bench"}
        made = [Server("ours", store=f"sqlite:///{folder / 'off.db'}", label=OFF),
                Server("ours", store=f"sqlite:///{folder / 'on.db'}", label=ON, env=exporting),
                Server("ours", store=f"sqlite:///{folder / 'sampled.db'}", label=SAMPLED,
                       env={**exporting, "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
                            "OTEL_TRACES_SAMPLER_ARG": "0.1"})]
        progress("starting ours on SQLite, without a span exporter, with one, and with one "
                 "sampling 10% of traces, on CPU 0")
        # (each exporter flushes its last spans as its server stops)
        table = await side_by_side(made, ROWS, rounds, seconds)
        async with aiohttp.ClientSession() as session, \
                session.get(f"http://127.0.0.1:{port}/count") as resp:
            got = await resp.json()
        note = (f"The receiver got {got['requests']} exports ({got['bytes'] / 1e6:.1f} MB "
                "of spans).")
        return table, note
    finally:
        sink.terminate()
        sink.wait(10)


def _start_sink() -> tuple[subprocess.Popen[str], int]:
    sink = subprocess.Popen([sys.executable, "-m", "benchmarks.otlp_sink"], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    assert sink.stdout is not None
    return sink, int(sink.stdout.readline())


def render(table: Table, note: str) -> str:
    lines = [BEGIN, "### Observability: what tracing costs", "",
             "Both on SQLite (the default store), metrics counted in both; JSON-RPC, medians; "
             "`ev`: events/s. " + note, "",
             "| scenario | conc. | off /s | on /s | on / off | 10% sampled /s | sampled / off | "
             "p50 ms (off / on / sampled) |", "|---|---|---|---|---|---|---|---|"]
    for row in ROWS:
        got = table.get(row, {})
        a, b, c = med(got.get(OFF)), med(got.get(ON)), med(got.get(SAMPLED))
        key = "first_event_ms" if row.scenario.startswith("stream") else "p50_ms"
        unit = " ev" if row.scenario.startswith("stream") else ""
        p50 = " / ".join(_f(med(got.get(x), key), 2) for x in (OFF, ON, SAMPLED))
        lines.append(f"| {row.scenario} | {row.concurrency} | {_f(a)}{unit} | {_f(b)}{unit} | "
                     f"{_pct(b, a)} | {_f(c)}{unit} | {_pct(c, a)} | {p50} |")
    return "\n".join([*lines, "", END])


def write_docs(text: str) -> None:
    report.write_section(BEGIN, END, text)


async def section(rounds: int, seconds: float, folder: Path,
                  progress: Callable[[str], None]) -> str:
    """This module's section of docs/benchmarks.md, measured and rendered (wire.SECTIONS)."""
    return render(*await run(rounds, seconds, folder, progress))
