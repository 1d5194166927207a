"""`make bench`, the HTTP faces (issue 49): the same agent and handler on
`serve`'s aiohttp face and on the ASGI face under uvicorn, alone and mounted
in a FastAPI app (benchmarks/asgi_server.py), side by side in one run, each
on the default store (SQLite, a file of its own). Same load generator,
every answer checked.

Its section of docs/benchmarks.md sits between its own markers, so `make
bench ARGS="--only faces"` rewrites only that.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from . import report
from .report import Row, Table, _f, _pct, med
from .servers import Server

ROWS = [Row("SendMessage", "JSON-RPC", 1), Row("SendMessage", "JSON-RPC", 32),
        Row("SendMessage", "REST", 32), Row("GetTask", "REST", 32),
        Row("stream 100", "JSON-RPC", 4)]
AIOHTTP, UVICORN, FASTAPI = "aiohttp (serve)", "ASGI, uvicorn", "ASGI, uvicorn, in FastAPI"
BEGIN, END = "<!-- bench:faces -->", "<!-- /bench:faces -->"


async def run(rounds: int, seconds: float, folder: Path,
              progress: Callable[[str], None]) -> Table:
    from .measure import side_by_side

    made = [Server("ours", store=f"sqlite:///{folder / 'aiohttp.db'}", label=AIOHTTP),
            Server("uvicorn", store=f"sqlite:///{folder / 'uvicorn.db'}", label=UVICORN),
            Server("fastapi", store=f"sqlite:///{folder / 'fastapi.db'}", label=FASTAPI)]
    progress("starting ours on aiohttp, on uvicorn, and mounted in FastAPI on uvicorn, "
             "on CPU 0")
    return await side_by_side(made, ROWS, rounds, seconds)


def render(table: Table) -> str:
    lines = [BEGIN, "### The HTTP faces: aiohttp and ASGI", "",
             "One agent, handler and store kind (SQLite), three faces; medians; `ev`: "
             "events/s; p50 in ms.", "",
             "| scenario | binding | conc. | aiohttp /s | uvicorn /s | uvicorn / aiohttp | "
             "in FastAPI /s | FastAPI / aiohttp | p50 ms (aiohttp / uvicorn / FastAPI) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in ROWS:
        got = table.get(row, {})
        a, b, c = med(got.get(AIOHTTP)), med(got.get(UVICORN)), med(got.get(FASTAPI))
        key = "first_event_ms" if row.scenario.startswith("stream") else "p50_ms"
        unit = " ev" if row.scenario.startswith("stream") else ""
        p50 = " / ".join(_f(med(got.get(x), key), 2) for x in (AIOHTTP, UVICORN, FASTAPI))
        lines.append(f"| {row.scenario} | {row.binding} | {row.concurrency} | {_f(a)}{unit} | "
                     f"{_f(b)}{unit} | {_pct(b, a)} | {_f(c)}{unit} | {_pct(c, a)} | {p50} |")
    return "\n".join([*lines, "", END])


def write_docs(text: str) -> None:
    report.write_section(BEGIN, END, text)


async def section(rounds: int, seconds: float, folder: Path,
                  progress: Callable[[str], None]) -> str:
    """This module's section of docs/benchmarks.md, measured and rendered (wire.SECTIONS)."""
    return render(await run(rounds, seconds, folder, progress))
