"""`make bench`, an official-SDK executor on ours and on the SDK's own server
(issue 64): a2a-samples' helloworld pattern (tests/interop/peers/sdk_agents.py
BenchEcho: a Task, a working status, an artifact, completed), the same
class served by `a2a-grpc serve --agent` and by the SDK's DefaultRequestHandler
(tests/interop/peers/sdk_server.py, its in-memory store), side by side in one
run. Ours runs in a virtualenv holding a2a-sdk 1.x and this checkout
(.interop/sdk-ours-venv), on its default store (SQLite) and on memory.

Its section of docs/benchmarks.md sits between its own markers: `make bench
ARGS="--only sdk-executor"` rewrites only that.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.interop.envs import SDK_PACKAGES
from tools.kits import ROOT, venv_with

from . import report
from .report import Row, Table, _f, med
from .servers import Server

EXECUTOR = "tests.interop.peers.sdk_agents:BenchEcho"
ROWS = [Row("SendMessage", "JSON-RPC", 32), Row("SendMessage", "gRPC", 32),
        Row("SendMessage", "REST", 32), Row("stream 100", "JSON-RPC", 4)]
SDK, MEMORY, SQLITE = "the SDK's server", "ours, memory", "ours, SQLite (default)"
BEGIN, END = "<!-- bench:sdk-executor -->", "<!-- /bench:sdk-executor -->"


async def run(rounds: int, seconds: float, folder: Path,
              progress: Callable[[str], None]) -> Table:
    from .measure import side_by_side

    progress("a virtualenv with a2a-sdk 1.x and this checkout (first run only)")
    python = venv_with("sdk-ours-venv", ("-e", str(ROOT), *SDK_PACKAGES))
    made = [Server("sdk", python, env={"A2A_SDK_EXECUTOR": EXECUTOR}, label=SDK),
            Server("ours", python=python, store="memory", label=MEMORY,
                   extra=["--agent", EXECUTOR]),
            Server("ours", python=python, store=f"sqlite:///{folder / 'ours.db'}",
                   label=SQLITE, extra=["--agent", EXECUTOR])]
    progress("starting the helloworld executor on the SDK's server and on ours, on CPU 0")
    return await side_by_side(made, ROWS, rounds, seconds)


def render(table: Table) -> str:
    lines = [BEGIN, "### An official-SDK executor: ours against the SDK's own server", "",
             "a2a-samples' helloworld pattern (a2a-sdk 1.3.0, sdk_agents.BenchEcho), "
             "unchanged, on each; medians; `ev`: events/s; p50 in ms.", "",
             f"| scenario | binding | conc. | {SDK} /s | {MEMORY} /s | x | {SQLITE} /s | x | "
             "p50 ms (SDK / memory / SQLite) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in ROWS:
        got = table.get(row, {})
        a, b, c = med(got.get(SDK)), med(got.get(MEMORY)), med(got.get(SQLITE))
        key = "first_event_ms" if row.scenario.startswith("stream") else "p50_ms"
        unit = " ev" if row.scenario.startswith("stream") else ""
        p50 = " / ".join(_f(med(got.get(x), key), 2) for x in (SDK, MEMORY, SQLITE))
        lines.append(f"| {row.scenario} | {row.binding} | {row.concurrency} | {_f(a)}{unit} | "
                     f"{_f(b)}{unit} | {_ratio(b, a)} | {_f(c)}{unit} | {_ratio(c, a)} | "
                     f"{p50} |")
    return "\n".join([*lines, "", END])


def _ratio(ours: float | None, theirs: float | None) -> str:
    return f"{ours / theirs:.1f}x" if ours and theirs else "n/a"


def write_docs(text: str) -> None:
    report.write_section(BEGIN, END, text)


async def section(rounds: int, seconds: float, folder: Path,
                  progress: Callable[[str], None]) -> str:
    """This module's section of docs/benchmarks.md, measured and rendered (wire.SECTIONS)."""
    return render(await run(rounds, seconds, folder, progress))
