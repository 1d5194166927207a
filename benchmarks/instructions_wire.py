"""Instructions per call of a whole server process, over the wire (issue 50):
ours (`a2a-grpc serve`, memory store, the default layers: metrics and
admission) and the ceiling (benchmarks/ceiling.py), each under
`valgrind --tool=callgrind`, serving a fixed load from the load generator
outside callgrind (benchmarks/drive.py, every answer checked).

    python -m benchmarks.instructions_wire [--servers ours,ceiling,ours-sqlite,ours-workers2]
        [--rows ...] [--against REV]

`--against REV`: ours at an earlier revision too, checked out beside this one
(benchmarks/revisions.py), and its ratio to ours. `ours-sqlite`: ours on the
default store (a fresh SQLite file), `ours-workers2`: `--workers 2` on it,
every process (supervisor and workers) counted: each against ours on the
memory store in one process.

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
import os
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
SLOWDOWN = 50  # how much slower a server runs under callgrind (the agents' quantum)
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


# Ours as users run it besides the memory store: the default store (SQLite, a
# fresh file) and `--workers 2` on it, every process counted together (the
# supervisor, both workers, the hub between them), against ours in one process.
VARIANTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "ours": ("memory", ()),
    "ours-sqlite": ("sqlite", ()),
    "ours-workers2": ("sqlite", ("--workers", "2")),
}


class Counted:
    """A server process under callgrind (with its children, for `--workers`),
    its counts dumped on demand."""

    def __init__(self, name: str, folder: Path, tree: Path = ROOT) -> None:
        store, extra = VARIANTS.get(name, ("memory", ()))
        if store == "sqlite":
            store = f"sqlite:///{folder / 'tasks.db'}"
        kind = "ceiling" if name == "ceiling" else "ours"
        # Under callgrind a server runs some 50 times slower: an agent's quantum
        # (execution/turns.py) is stretched as much, or every event would outlast
        # it and yield, which natively few do (as benchmarks/instructions.py does).
        self.server = Server(kind, http=free_port(), grpc=free_port(), tree=tree, store=store,
                             extra=list(extra), env={"A2A_GRPC_TIME_SCALE": str(SLOWDOWN)})
        self.folder = folder
        self.children = bool(extra)  # the workers are processes of their own
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={self.folder}/cg.%p",
             "--dump-instr=no", *(["--trace-children=yes"] if self.children else []),
             *self.server.command()],
            cwd=self.server.tree, env={**os.environ, **self.server.env},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.server.proc = self.proc
        self.server.wait_ready(timeout=600)

    def _control(self, flag: str) -> None:
        """callgrind_control on this process, or on every one under callgrind
        (its children: one server is counted at a time)."""
        assert self.proc is not None
        subprocess.run(["callgrind_control", flag, *([] if self.children else
                                                     [str(self.proc.pid)])],
                       check=True, capture_output=True)

    def dump(self) -> int:
        """Instructions since the last zeroing, all threads (all processes)."""
        assert self.proc is not None
        before = set(self.folder.glob("cg.*"))
        self._control("-d")
        deadline = time.monotonic() + 60
        wanted = 3 if self.children else 1  # the supervisor and its two workers
        while len(new := set(self.folder.glob("cg.*")) - before) < wanted:
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
        self._control("-z")

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
    """Ours, the ceiling and ours / ceiling; then each other server counted
    (ours on SQLite, under `--workers 2`, at revision `against`) and its
    ratio to ours on the memory store in one process."""
    others = [name for name in counts if name not in ("ours", "ceiling")]
    head = "| call | binding | ours | ceiling | ours / ceiling |" + "".join(
        f" {n} | {n} / ours |" for n in others)
    lines = [head, "|---|---|---|---|---|" + "---|---|" * len(others)]
    for row in counts.get("ours") or counts.get("ceiling") or {}:
        ours, ceiling = counts.get("ours", {}).get(row), counts.get("ceiling", {}).get(row)
        what = "per event of a stream 100" if row.scenario.startswith("stream") else row.scenario
        cells = [f"{ours or 0:,.0f}", f"{ceiling or 0:,.0f}",
                 f"{ours / ceiling:.2f}x" if ours and ceiling else "-"]
        for name in others:
            other = counts[name].get(row)
            cells += [f"{other or 0:,.0f}", f"{other / ours:.2f}x" if other and ours else "-"]
        lines.append(f"| {what} | {row.binding} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="make bench-instructions ARGS=--wire")
    parser.add_argument("--servers", default="ours,ceiling",
                        help="of ours, ceiling, " + ", ".join(n for n in VARIANTS if n != "ours")
                        + " (ours on SQLite; under --workers 2, all its processes)")
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
