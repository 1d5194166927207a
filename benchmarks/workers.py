"""`make bench ARGS="--only workers"` (issue 50): what `serve --workers N`
costs per call, counted in CPU time, on the SQLite default.

One process, 2 workers and 3 workers, every process of each on CPU 0 (the
supervisor's affinity is its workers'): on one core the rate cannot grow,
so what differs is the CPU time each call costs all processes together
(supervisor and hub included), and from it what N cores would serve, on
paper: N / (CPU seconds per call). This machine has two cores, and the load
generator needs one. JSON-RPC rows only: a gRPC channel is one connection,
so one worker.

Its section of docs/benchmarks.md sits between its own markers.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from . import drive, report
from .measure import first_task, measure
from .report import Row, _f
from .servers import Server

ROWS = [Row("SendMessage", "JSON-RPC", 32), Row("GetTask", "JSON-RPC", 32),
        Row("stream 100", "JSON-RPC", 4)]
SETUPS = (1, 2, 3)
BEGIN, END = "<!-- bench:workers -->", "<!-- /bench:workers -->"
Found = dict[Row, dict[int, list[tuple[float, float]]]]  # row: workers: [(rate, cpu s/call)]


def tree_cpu(pid: int) -> float:
    """CPU seconds used so far by `pid` and its children."""
    ticks, total = os.sysconf("SC_CLK_TCK"), 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(entry.name) == pid or int(fields[1]) == pid:
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total


async def run(rounds: int, seconds: float, folder: Path,
              progress: Callable[[str], None]) -> Found:
    servers = {n: Server("ours", store=f"sqlite:///{folder / f'w{n}.db'}", label=f"{n}",
                         extra=[] if n == 1 else ["--workers", str(n)]) for n in SETUPS}
    progress("starting ours as 1 process, 2 and 3 workers, all on CPU 0")
    for s in servers.values():
        s.start()
    found: Found = {}
    try:
        for s in servers.values():
            s.wait_ready()
        tasks = {n: await first_task(s) for n, s in servers.items()}
        rpc = drive.Grpc(servers[1].grpc)  # not used by JSON-RPC rows
        for r in range(rounds + 1):  # the first a warm-up
            for row in ROWS:
                for n, s in servers.items():
                    assert s.proc is not None
                    before = tree_cpu(s.proc.pid)
                    res = await measure(row, s, rpc, tasks[n], seconds if r else 0.5)
                    calls = res.rate * seconds / (103 if row.scenario.startswith("stream")
                                                  else 1)
                    per_call = (tree_cpu(s.proc.pid) - before) / max(calls, 1)
                    if r:
                        found.setdefault(row, {}).setdefault(n, []).append(
                            (res.rate, per_call))
                        progress(f"round {r}/{rounds} {row.title} {n} worker(s): "
                                 f"{res.rate:.0f}/s, {per_call * 1e6:.0f} µs CPU a call, "
                                 f"errors {res.errors}")
        await rpc.close()
    finally:
        for s in servers.values():
            s.stop()
    return found


def render(found: Found) -> str:
    lines = [BEGIN, "### Workers (issue 50): `serve --workers N`, counted", "",
             "SQLite, JSON-RPC; every process on one core; medians. CPU per call: the CPU "
             "time of all the server's processes (supervisor and hub included) over the "
             "calls served. On paper: N cores / that CPU time.", "",
             "| scenario | conc. | workers | /s on 1 core | CPU µs a call | vs 1 process | "
             "on paper, N cores /s |", "|---|---|---|---|---|---|---|"]
    for row in ROWS:
        got = found.get(row, {})
        base = sorted(p for _, p in got.get(1, []))[len(got.get(1, [])) // 2] \
            if got.get(1) else None
        for n in SETUPS:
            rates = [r for r, _ in got.get(n, [])]
            costs = sorted(p for _, p in got.get(n, []))
            if not costs:
                continue
            cost = costs[len(costs) // 2]
            events = 103 if row.scenario.startswith("stream") else 1
            unit = " ev" if events > 1 else ""
            ratio = f"{cost / base:.2f}x" if base else ""
            lines.append(f"| {row.scenario} | {row.concurrency} | {n} | "
                         f"{_f(sorted(rates)[len(rates) // 2])}{unit} | {cost * 1e6:,.0f} | "
                         f"{ratio} | {_f(n * events / cost)}{unit} |")
    return "\n".join([*lines, "", END])


def write_docs(text: str) -> None:
    report.write_section(BEGIN, END, text)
