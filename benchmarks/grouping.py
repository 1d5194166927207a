"""`python -m benchmarks.grouping`: how many sends share a SQLite transaction
(group commit, stores/writes.py) by carrier and binding, and what one costs.

Ours on the SQLite default, on grpc.aio and (when its extra is installed) on
pyvoy, pinned to CPU 0, this load generator on CPU 1; SendMessage at c=32 on
gRPC and JSON-RPC, every answer checked. Sends per transaction: the sends
made over the transactions the store committed meanwhile (its /metrics,
`a2a_store_seconds_count{op="commit"}`; a transaction that only reads, for
the sends' idempotency check, counts too). Server CPU a send: `serve`'s own
process (on pyvoy the work runs in Envoy, its child: not counted, `-`).
Prints its table (docs/benchmarks.md, "Why a gRPC send costs SQLite more").
"""

from __future__ import annotations

import argparse
import asyncio
import re
import subprocess
import sys
import tempfile
import urllib.request

from . import drive
from .measure import first_task, measure, progress
from .report import Row
from .servers import Server, pin

ROWS = [Row("SendMessage", "gRPC", 32), Row("SendMessage", "JSON-RPC", 32)]
COMMITS = re.compile(rb'a2a_store_seconds_count\{op="commit"\} ([0-9.e+]+)')


def transactions(port: int) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        found = COMMITS.search(answer.read())
    return float(found.group(1)) if found else float("nan")


async def carrier(name: str, extra: list[str], folder: str, seconds: float) -> list[str]:
    server = Server("ours", store=f"sqlite:///{folder}/{name}.db", label=name, extra=extra)
    if extra:
        server.grpc = server.http  # one port for every binding
    server.start()
    lines = []
    try:
        server.wait_ready(timeout=60)
        task, rpc = await first_task(server), drive.Grpc(server.grpc)
        for row in ROWS:
            await measure(row, server, rpc, task, 0.5)  # warm-up
            before, cpu = transactions(server.http), server.cpu_seconds()
            result = await measure(row, server, rpc, task, seconds)
            sends = result.rate * seconds
            spent = server.cpu_seconds() - cpu
            per_tx = sends / max(transactions(server.http) - before, 1)
            progress(f"{name} {row.binding}: {result.rate:,.0f}/s, {per_tx:.1f} a transaction, "
                     f"errors {result.errors}")
            lines.append(f"| {name} | {row.binding} | {result.rate:,.0f} | {per_tx:.1f} | "
                         + (f"{spent / sends * 1e6:,.0f} |" if not extra else "- |"))
        await rpc.close()
    finally:
        server.stop()
    return lines


def carriers() -> list[tuple[str, list[str]]]:
    made: list[tuple[str, list[str]]] = [("grpc.aio", [])]
    if subprocess.run([sys.executable, "-c", "import pyvoy"], capture_output=True).returncode:
        progress("pyvoy is not installed here (a2a-grpc[pyvoy]): grpc.aio alone")
    else:
        made.append(("pyvoy", ["--grpc-carrier", "pyvoy"]))
    return made


async def main(seconds: float, served: list[tuple[str, list[str]]]) -> None:
    pin(1)
    lines = ["| carrier | binding | sends /s | sends a transaction | server CPU a send, us |",
             "|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as folder:
        for name, extra in served:
            lines += await carrier(name, extra, folder, seconds)
    print("\n".join(lines))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m benchmarks.grouping", description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0)
    asyncio.run(main(parser.parse_args().seconds, carriers()))
