"""`make bench ARGS="--only cores"`: every core of a machine, as the rates
users get from it. For a machine with many (16 or more); on a small one it
runs the same code with what there is.

The servers, one after the other, each on cores of its own (0..N-1): ours as
one process and as `serve --workers N`, on the SQLite default; the official
JavaScript SDK as one process and under Node's cluster module with N workers
(in memory: not a peer on durability, but the figure users compare). The
load: M processes on the other cores (N..N+M-1), each with `--concurrency`
calls in flight and one connection per call (HTTP) or one channel (gRPC, as
a client holds one), their windows starting at one instant; every answer
checked, the rates summed. One command, well under 10 minutes with the
defaults.

    python -m benchmarks.cores --server-cores 8 --load-procs 8
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import drive
from .measure import first_task, make_call, progress
from .report import Row, _f
from .servers import ROOT, Server, js_modules

ROWS = [Row("SendMessage", "JSON-RPC", 32), Row("SendMessage", "gRPC", 32),
        Row("GetTask", "JSON-RPC", 32), Row("GetTask", "gRPC", 32)]


def plan(cores: int, server_cores: int | None, load_procs: int | None) -> tuple[int, int]:
    """(server cores, load processes): half the machine each by default, 8 at most."""
    servers = server_cores or max(1, min(8, cores // 2))
    loads = load_procs or max(1, min(8, cores - servers))
    return servers, loads


async def one_load(row: Row, http_port: int, grpc_port: int, task_id: str, seconds: float,
                   concurrency: int, start_at: float) -> drive.Result:
    """One load process's part: its connections made, then its window."""
    rpc = drive.Grpc(grpc_port)
    try:
        call = await make_call(row, drive.Http(http_port), rpc, task_id, [])
        return await drive.load(call, seconds, concurrency, start_at)
    finally:
        await rpc.close()


def _load_main(argv: list[str]) -> None:
    scenario, binding, http_port, grpc_port, task_id, seconds, concurrency, start_at = argv
    row = Row(scenario, binding, int(concurrency))
    result = asyncio.run(one_load(row, int(http_port), int(grpc_port), task_id,
                                  float(seconds), int(concurrency), float(start_at)))
    print(json.dumps({"rate": result.rate, "errors": result.errors,
                      "p99_ms": result.p99_ms, "cpu": result.loadgen_cpu}))


def run_row(row: Row, server: Server, task_id: str, cpus: list[int], seconds: float,
            concurrency: int) -> dict[str, float]:
    """The row from one load process per CPU in `cpus`, windows aligned: summed."""
    start_at = time.time() + 1.5 + 0.1 * len(cpus)  # after every process has connected
    procs = [subprocess.Popen(
        ["taskset", "-c", str(cpu), sys.executable, "-m", "benchmarks.cores", "--load",
         row.scenario, row.binding, str(server.http), str(server.grpc), task_id, str(seconds),
         str(concurrency), str(start_at)], cwd=ROOT, stdout=subprocess.PIPE) for cpu in cpus]
    results = []
    for proc in procs:
        out, _ = proc.communicate(timeout=seconds + 120)
        if proc.returncode != 0:
            raise RuntimeError(f"a load process of {row.title} failed ({proc.returncode})")
        results.append(json.loads(out))
    return {"rate": sum(r["rate"] for r in results),
            "errors": sum(r["errors"] for r in results),
            "p99_ms": max(r["p99_ms"] for r in results),
            "loadgen": max(r["cpu"] for r in results)}


def setups(n: int, folder: Path, node: bool) -> list[tuple[str, Server]]:
    ours = [("ours, 1 process", Server("ours", store=f"sqlite:///{folder / 'one.db'}",
                                       cpus=frozenset({0}))),
            (f"ours, {n} workers", Server("ours", store=f"sqlite:///{folder / 'many.db'}",
                                          extra=["--workers", str(n)],
                                          cpus=frozenset(range(n))))]
    if not node:
        return ours
    env = {"NODE_PATH": str(js_modules())}
    return [*ours, ("JS SDK, 1 process", Server("js", env=env, cpus=frozenset({0}))),
            (f"JS SDK, cluster of {n}", Server("js", env=env, cpus=frozenset(range(n)),
                                               workers=n))]


def main() -> None:
    if sys.argv[1:2] == ["--load"]:
        return _load_main(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server-cores", type=int, default=None)
    parser.add_argument("--load-procs", type=int, default=None)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--concurrency", type=int, default=32, help="calls in flight a process")
    parser.add_argument("--no-node", action="store_true", help="leave the JS SDK out")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    n, m = plan(cores, args.server_cores, args.load_procs)
    load_cpus = [(n + i) % cores for i in range(m)]
    node = not args.no_node and _has_node()
    progress(f"{cores} cores: servers on 0..{n - 1}, {m} load processes on {load_cpus}, "
             f"{args.concurrency} calls in flight each, {args.seconds:g} s windows")
    found: dict[str, dict[Row, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for label, server in setups(n, Path(folder), node):
            server.start()
            try:
                server.wait_ready()
                task_id = asyncio.run(first_task(server))
                for row in ROWS:
                    got = run_row(row, server, task_id, load_cpus, args.seconds,
                                  args.concurrency)
                    found.setdefault(label, {})[row] = got
                    progress(f"{label}: {row.title}: {got['rate']:,.0f}/s, errors "
                             f"{got['errors']:.0f}, p99 {got['p99_ms']:.1f} ms")
            finally:
                server.stop()
    print("\n".join(render(found, n, m, args.concurrency)))
    return None


def render(found: dict[str, dict[Row, dict[str, float]]], n: int, m: int,
           concurrency: int) -> list[str]:
    labels = list(found)
    lines = [f"Servers on {n} core(s), {m} load process(es) of {concurrency} calls in "
             "flight, windows aligned, rates summed; errors in brackets.", "",
             "| row | " + " | ".join(labels) + " | ours many / one | ours many / JS many |",
             "|---|" + "---|" * (len(labels) + 2)]
    for row in ROWS:
        cells = [f"{_f(found[lb][row]['rate'])} ({found[lb][row]['errors']:.0f})"
                 for lb in labels]
        rate = {lb: found[lb][row]["rate"] for lb in labels}
        ours = [lb for lb in labels if lb.startswith("ours")]
        js = [lb for lb in labels if lb.startswith("JS")]
        scale = f"{rate[ours[-1]] / rate[ours[0]]:.1f}x" if rate[ours[0]] else "-"
        versus = f"{rate[ours[-1]] / rate[js[-1]]:.2f}x" if js and rate[js[-1]] else "-"
        lines.append(f"| {row.title} | " + " | ".join(cells) + f" | {scale} | {versus} |")
    return lines


def _has_node() -> bool:
    try:
        js_modules()
    except (OSError, RuntimeError, subprocess.CalledProcessError):
        progress("the JS SDK's modules could not be installed (npm): its columns are left out")
        return False
    return True


if __name__ == "__main__":
    main()
