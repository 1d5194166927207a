"""Instructions per call of a whole server process, over the wire (issue 50):
ours (`a2a-grpc serve`, memory store, the default layers: metrics and
admission) and the ceiling (benchmarks/ceiling.py), each under
`valgrind --tool=callgrind`, serving a fixed load from the load generator
outside callgrind (benchmarks/drive.py, every answer checked).

    python -m benchmarks.instructions_wire [--servers ours,ceiling] [--rows ...]
        [--against REV]

`--against REV`: ours at an earlier revision too, checked out beside this one
(benchmarks/revisions.py), and ours' ratio to it.

For each row the counters are zeroed (`callgrind_control -z`), a small and
then a larger number of calls made, the counts dumped after each
(`callgrind_control -d`), and the difference divided by the difference in
calls: what is fixed per phase (the dump itself, timers ticking) cancels
out. Every thread of the process is counted (grpc's included); the kernel's
work is not. Rows: SendMessage, GetTask and a `stream 100`'s events on
JSON-RPC, HTTP+JSON and gRPC, 8 calls at a time (streams: 4). Under
callgrind a server runs some 50 times slower: the run takes several minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import drive, report
from .measure import first_task, make_call, progress
from .revisions import checkout
from .servers import ROOT, Server, free_port

CALLS = {"SendMessage": (40, 200), "GetTask": (40, 200), "stream 100": (4, 20)}
CONCURRENCY = {"SendMessage": 8, "GetTask": 8, "stream 100": 4}
PER = {"SendMessage": 1, "GetTask": 1, "stream 100": 103}  # a `stream 100` is 103 events
ROWS = [report.Row(s, b, CONCURRENCY[s]) for s in CALLS for b in ("JSON-RPC", "REST", "gRPC")]
TOTALS = re.compile(rb"^(?:totals|summary): (\d+)", re.M)


async def count(make: drive.MakeCall, n: int, concurrency: int) -> None:
    """Exactly `n` calls, `concurrency` at a time, every answer checked."""
    calls = [await make() for _ in range(concurrency)]
    left = n

    async def worker(call: drive.Call) -> None:
        nonlocal left
        while left > 0:
            left -= 1
            if not await call():
                raise RuntimeError("a wrong answer under callgrind")

    await asyncio.gather(*(worker(c) for c in calls))


class Counted:
    """A server process under callgrind, its counts dumped on demand."""

    def __init__(self, name: str, folder: Path, tree: Path = ROOT) -> None:
        self.server = Server(name, http=free_port(), grpc=free_port(), tree=tree)
        self.folder = folder
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={self.folder}/cg.%p",
             "--dump-instr=no", *self.server.command()],
            cwd=self.server.tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.server.proc = self.proc
        self.server.wait_ready(timeout=600)

    def dump(self) -> int:
        """Instructions since the last zeroing, all threads."""
        assert self.proc is not None
        before = set(self.folder.glob("cg.*"))
        subprocess.run(["callgrind_control", "-d", str(self.proc.pid)], check=True,
                       capture_output=True)
        deadline = time.monotonic() + 60
        while not (new := set(self.folder.glob("cg.*")) - before):
            if time.monotonic() > deadline:
                raise RuntimeError("callgrind wrote no dump")
            time.sleep(0.1)
        time.sleep(0.5)  # written whole
        total = 0
        for path in new:
            found = TOTALS.search(path.read_bytes())
            total += int(found.group(1)) if found else 0
            path.unlink()
        return total

    def zero(self) -> None:
        assert self.proc is not None
        subprocess.run(["callgrind_control", "-z", str(self.proc.pid)], check=True,
                       capture_output=True)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


async def per_call(counted: Counted, row: report.Row, task_id: str) -> float:
    rpc = drive.Grpc(counted.server.grpc)
    try:
        http = drive.Http(counted.server.http)
        make = await make_call(row, http, rpc, task_id, [])
        small, large = CALLS[row.scenario]
        await count(make, small, row.concurrency)  # warm: connections, caches
        counts = []
        for n in (small, large):
            counted.zero()
            await count(make, n, row.concurrency)
            counts.append(await asyncio.to_thread(counted.dump))
        return (counts[1] - counts[0]) / ((large - small) * PER[row.scenario])
    finally:
        await rpc.close()


async def run(names: list[str], rows: list[report.Row],
              trees: dict[str, Path] | None = None) -> dict[str, dict[report.Row, float]]:
    """`trees`: names of ours at other revisions, and their checkouts."""
    out: dict[str, dict[report.Row, float]] = {}
    for name in names:
        with tempfile.TemporaryDirectory() as tmp:
            tree = (trees or {}).get(name)
            counted = Counted("ours" if tree else name, Path(tmp), tree or ROOT)
            progress(f"starting {name} under callgrind (a minute or more)")
            counted.start()
            try:
                task_id = await first_task(counted.server)
                out[name] = {}
                for row in rows:
                    out[name][row] = await per_call(counted, row, task_id)
                    progress(f"{name}: {row.title}: {out[name][row]:,.0f} instructions")
            finally:
                counted.stop()
    return out


def render(counts: dict[str, dict[report.Row, float]], against: str = "") -> str:
    """`against`: a column of ours at that revision, and ours' ratio to it."""
    more = f" {against} | ours / {against} |" if against else ""
    lines = ["| call | binding | ours | ceiling | ours / ceiling |" + more,
             "|---|---|---|---|---|" + "---|---|" * bool(against)]
    for row in counts.get("ours") or counts.get("ceiling") or {}:
        ours, ceiling = counts.get("ours", {}).get(row), counts.get("ceiling", {}).get(row)
        cells = [ours or 0, ceiling or 0] + ([counts[against].get(row) or 0] if against else [])
        ratios = [f"{ours / other:.2f}x" if ours and other else "-" for other in cells[1:]]
        what = "per event of a stream 100" if row.scenario.startswith("stream") else row.scenario
        lines.append(f"| {what} | {row.binding} | {cells[0]:,.0f} | {cells[1]:,.0f} | {ratios[0]} |"
                     + (f" {cells[2]:,.0f} | {ratios[1]} |" if against else ""))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="make bench-instructions ARGS=--wire")
    parser.add_argument("--servers", default="ours,ceiling")
    parser.add_argument("--rows", default="", help="only rows whose title has one of these")
    parser.add_argument("--against", default="", metavar="REV",
                        help="also ours at an earlier revision (a commit, tag or branch)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("make bench-instructions needs valgrind (apt-get install valgrind)")
    rows = [r for r in ROWS if not args.rows or any(p in r.title for p in args.rows.split(","))]
    names = args.servers.split(",")
    if not args.against:
        print(render(asyncio.run(run(names, rows))))
        return
    with checkout(args.against) as tree:
        counts = asyncio.run(run([*names, args.against], rows, {args.against: tree}))
    print(render(counts, args.against))


if __name__ == "__main__":
    main()
