"""`python -m benchmarks.against REV`: ours as checked out here against ours at
an earlier revision, in interleaved rounds: each server on CPU 0 in turn, this
load generator on CPU 1, every answer checked, medians (`--store memory` by
default, the rows `make bench` has; SendMessage over JSON-RPC at c=32 unless
told; `--server uvicorn|fastapi`: the ASGI face). Prints its table; a
request-path change is judged by it and by `make bench-instructions
ARGS="--wire --against REV"`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
from pathlib import Path

from . import drive
from .measure import first_task, measure, progress
from .report import Row, _f
from .revisions import checkout
from .servers import ROOT, Server

SCENARIOS = ("SendMessage", "GetTask", "stream 100")


async def run(trees: dict[str, Path], rows: list[Row], rounds: int, seconds: float,
              store: str, name: str = "ours") -> dict[tuple[str, Row], list[float]]:
    found: dict[tuple[str, Row], list[float]] = {}
    for r in range(rounds):
        for label, tree in trees.items():
            server = Server(name, store=store, label=label, tree=tree)
            server.start()
            try:
                server.wait_ready()
                task, rpc = await first_task(server), drive.Grpc(server.grpc)
                for row in rows:
                    await measure(row, server, rpc, task, 0.5)  # warm-up
                    res = await measure(row, server, rpc, task, seconds)
                    found.setdefault((label, row), []).append(res.rate)
                    progress(f"round {r + 1}/{rounds} {label} {row.title}: {res.rate:,.0f}/s, "
                             f"errors {res.errors}")
                await rpc.close()
            finally:
                server.stop()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.against", description=__doc__)
    parser.add_argument("rev", help="the earlier revision (a commit, tag or branch)")
    parser.add_argument("--rows", default="SendMessage JSON-RPC 32",
                        help="comma-separated 'SCENARIO BINDING CONCURRENCY'")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--store", default="memory")
    parser.add_argument("--server", default="ours", choices=("ours", "uvicorn", "fastapi"),
                        help="serve's aiohttp face (ours), or the ASGI face under uvicorn "
                             "or mounted in FastAPI (benchmarks/asgi_server.py)")
    args = parser.parse_args()
    rows = []
    for spec in args.rows.split(","):
        *scenario, binding, concurrency = spec.split()
        rows.append(Row(" ".join(scenario), binding, int(concurrency)))
        if rows[-1].scenario not in SCENARIOS:
            parser.error(f"{rows[-1].scenario!r}: one of {', '.join(SCENARIOS)}")
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {1})  # the servers have CPU 0
    with checkout(args.rev) as earlier:
        trees = {"here": ROOT, args.rev: earlier}
        found = asyncio.run(run(trees, rows, args.rounds, args.seconds, args.store,
                                args.server))
    print(f"| row | here /s | {args.rev} /s | here / {args.rev} |\n|---|---|---|---|")
    for row in rows:
        here, then = (statistics.median(found[(label, row)]) for label in trees)
        print(f"| {row.title} | {_f(here)} | {_f(then)} | {here / then:.2f}x |")


if __name__ == "__main__":
    main()
