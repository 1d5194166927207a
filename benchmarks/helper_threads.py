"""`python -m benchmarks.helper_threads`: `serve --helper-threads` normal,
batch, low and idle side by side, ours on one core (CPU 0), this load
generator on the other, gRPC and JSON-RPC, on `--store memory` and the SQLite
default, and SQLite's sends again beside a busy process on the server's core
(a Python loop that never waits: what a neighbour, or more workers than
cores, would be); interleaved rounds, medians. Rewrites its section of
docs/benchmarks-history.md, an answered question (`--no-docs`: print only).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from . import drive, report
from .measure import first_task, measure
from .report import Row, _f
from .servers import Server

ROWS = [Row("SendMessage", "gRPC", 32), Row("GetTask", "gRPC", 32),
        Row("SendMessage", "JSON-RPC", 32)]
POLICIES = ("normal", "batch", "low", "idle")
BUSY = "SQLite, beside a busy process"
STORES = ("memory", "SQLite", BUSY)
BEGIN, END = "<!-- bench:helper-threads -->", "<!-- /bench:helper-threads -->"
# On the server's core, never waiting (nice 0, as most processes are).
BUSY_LOOP = "import os\nos.sched_setaffinity(0, {0})\nwhile True: pass"
# (store, row, policy): [(rate, times the loop's thread was preempted a call)]
Found = dict[tuple[str, Row, str], list[tuple[float, float]]]


def busy_process() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", BUSY_LOOP])


def preempted(pid: int) -> int:
    """Involuntary context switches of `pid`'s main thread, the event loop's."""
    status = Path(f"/proc/{pid}/task/{pid}/status").read_text()
    return int(status.split("nonvoluntary_ctxt_switches:")[1].split()[0])


async def run(rounds: int, seconds: float, folder: Path,
              progress: Callable[[str], None]) -> Found:
    found: Found = {}
    for r in range(rounds):
        for store in STORES:
            for policy in POLICIES:
                url = "memory" if store == "memory" else f"sqlite:///{folder}/{r}-{store}-{policy}.db"
                server = Server("ours", store=url, label=policy,
                                extra=["--helper-threads", policy])
                busy = busy_process() if store == BUSY else None
                server.start()
                try:
                    server.wait_ready()
                    task, rpc = await first_task(server), drive.Grpc(server.grpc)
                    for row in ROWS if store != BUSY else ROWS[::2]:
                        await measure(row, server, rpc, task, 0.5)  # warm-up
                        assert server.proc is not None
                        before = preempted(server.proc.pid)
                        res = await measure(row, server, rpc, task, seconds)
                        switches = (preempted(server.proc.pid) - before) / max(
                            res.rate * seconds, 1)
                        found.setdefault((store, row, policy), []).append((res.rate, switches))
                        progress(f"round {r + 1}/{rounds} {store} {row.title} {policy}: "
                                 f"{res.rate:.0f}/s, errors {res.errors}")
                    await rpc.close()
                finally:
                    server.stop()
                    if busy is not None:
                        busy.kill()
                        busy.wait()
    return found


def render(found: Found, rounds: int) -> str:
    lines = [BEGIN, "### Helper threads: `serve --helper-threads`", "",
             f"Ours on one core, 32 calls in flight, medians of {rounds} interleaved rounds "
             "(`python -m benchmarks.helper_threads`).", "",
             "| store | call | binding | normal /s | batch /s | low /s | idle /s "
             "| batch / normal | loop preempted a call, normal / batch / low / idle |",
             "|---|---|---|---|---|---|---|---|---|"]
    for store in STORES:
        for row in ROWS if store != BUSY else ROWS[::2]:
            got = [found.get((store, row, p), [(0.0, 0.0)]) for p in POLICIES]
            rates = [statistics.median(r for r, _ in each) for each in got]
            switches = [statistics.median(s for _, s in each) for each in got]
            ratio = f"{rates[1] / rates[0]:.2f}x" if rates[0] else ""
            lines.append(f"| {store} | {row.scenario} | {row.binding} | "
                         + " | ".join(_f(x) for x in rates) + f" | {ratio} | "
                         + " / ".join(f"{s:.1f}" for s in switches) + " |")
    return "\n".join([*lines, END])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.5)
    parser.add_argument("--no-docs", action="store_true", help="print only")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {1})  # the server has CPU 0

    def progress(text: str) -> None:
        print(text, flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        work = run(args.rounds, args.seconds, Path(tmp), progress)
        try:  # the load generator on uvloop, as `make bench` runs it
            import uvloop
            found = uvloop.run(work)
        except ImportError:
            found = asyncio.run(work)
    text = render(found, args.rounds)
    print(text)
    if not args.no_docs:
        report.write_section(BEGIN, END, text, report.HISTORY)  # an answered question


if __name__ == "__main__":
    main()
