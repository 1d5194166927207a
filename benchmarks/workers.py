"""`make bench ARGS="--only workers"` (issue 50): what `serve --workers N`
costs per call, counted in CPU time, on the SQLite default and on
PostgreSQL (left out, and said so, when it is unreachable).

One process, 2 workers and 3 workers, every process of each on CPU 0 (the
supervisor's affinity is its workers'): on one core the rate cannot grow,
so what differs is the CPU time each call costs all processes together
(supervisor and hub included), and from it what N cores would serve, on
paper: N / (CPU seconds per call). This machine has two cores, and the load
generator needs one. JSON-RPC rows only: a gRPC channel is one connection,
so one worker. On SQLite, 8 workers (8 shards) are run for the writes too:
their serial section (the write lock's CPU time on the most held file)
against one process's CPU per call bounds what 8 and 16 cores can give.

Its section of docs/benchmarks.md sits between its own markers.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Callable
from pathlib import Path

import aiohttp

from . import drive, report
from .durable import POSTGRES, _drop, _schema
from .measure import first_task, measure
from .report import Row, _f
from .servers import Server

ROWS = [Row("SendMessage", "JSON-RPC", 32), Row("GetTask", "JSON-RPC", 32),
        Row("stream 100", "JSON-RPC", 4)]
SETUPS = (1, 2, 3)
STORES = ("SQLite", "PostgreSQL")
BEGIN, END = "<!-- bench:workers -->", "<!-- /bench:workers -->"
Setup = tuple[str, int]  # (store, workers)
# row: setup: [(rate, cpu s/call, write lock held s/call)]
Found = dict[Row, dict[Setup, list[tuple[float, float, float]]]]
WORKER = re.compile(r'a2a_worker_info\{pid="(\d+)",worker="(\d+)"')
HELD = re.compile(
    r'a2a_store_write_lock_seconds_total\{phase="held_cpu",shard="(\d+)"\} (\S+)')
SERIAL_SETUP = 8  # workers (and shards) whose serial section is measured too, SQLite


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


async def lock_held(server: Server, workers: int) -> dict[str, float]:
    """CPU seconds spent so far holding each SQLite file's write lock by the
    processes that share it (each shard has its own: stores/shards.py): with
    workers, by the workers other than the file's own (worker K writes shard
    K-1), for only they wait for one another there; one process on its one
    file counts all its writes, the serial section of workers sharing that
    file. A new connection per scrape, until each worker has answered one;
    none on a store without a lock. CPU time, not wall time: these workers
    share one core, and a holder preempted would count the others' time."""
    seen: dict[str, dict[str, float]] = {}
    connector = aiohttp.TCPConnector(force_close=True)
    async with aiohttp.ClientSession(connector=connector) as http:
        for _ in range(50 * workers):
            async with http.get(f"http://127.0.0.1:{server.http}/metrics") as resp:
                text = await resp.text()
            worker = WORKER.search(text)
            number = int(worker.group(2)) if worker else 0
            seen[str(number)] = {shard: float(s) for shard, s in HELD.findall(text)
                                 if not number or int(shard) != number - 1}
            if len(seen) >= workers:
                break
    files = {shard for held in seen.values() for shard in held}
    return {f: sum(held.get(f, 0.0) for held in seen.values()) for f in files}


def serial_since(before: dict[str, float], after: dict[str, float]) -> float:
    """The serial section since `before`: the most shared file's."""
    return max((held - before.get(f, 0.0) for f, held in after.items()), default=0.0)


async def run(rounds: int, seconds: float, folder: Path,
              progress: Callable[[str], None]) -> tuple[Found, str]:
    """The rows on each store, and a note (PostgreSQL unreachable)."""
    found: Found = {}
    schemas: list[str] = []
    note = ""
    try:
        for store in STORES:
            urls = {n: f"sqlite:///{folder / f'w{n}.db'}" for n in (*SETUPS, SERIAL_SETUP)}
            if store == "PostgreSQL":
                tag = uuid.uuid4().hex[:8]
                made = [await _schema(f"bench_workers_{n}_{tag}") for n in SETUPS]
                schemas += [m for m in made if m is not None]
                if None in made:
                    note = f"PostgreSQL at {POSTGRES} is unreachable: its rows are left out."
                    progress(note)
                    break
                sep = "&" if "?" in POSTGRES else "?"
                urls = {n: f"{POSTGRES}{sep}search_path={m}"
                        for n, m in zip(SETUPS, made, strict=True)}
            await _store(store, urls, rounds, seconds, found, progress)
    finally:
        if schemas:
            await _drop(schemas)
    return found, note


async def _store(store: str, urls: dict[int, str], rounds: int, seconds: float,
                 found: Found, progress: Callable[[str], None]) -> None:
    setups = (*SETUPS, SERIAL_SETUP) if store == "SQLite" else SETUPS
    servers = {n: Server("ours", store=urls[n], label=f"{n}",
                         extra=[] if n == 1 else ["--workers", str(n)]) for n in setups}
    progress(f"starting ours on {store} as 1 process and "
             f"{', '.join(str(n) for n in setups[1:])} workers, all on CPU 0")
    for s in servers.values():
        s.start()
    try:
        for s in servers.values():
            s.wait_ready()
        tasks = {n: await first_task(s) for n, s in servers.items()}
        rpc = drive.Grpc(servers[1].grpc)  # not used by JSON-RPC rows
        for r in range(rounds + 1):  # the first a warm-up
            for row in ROWS:
                for n, s in servers.items():
                    if n not in SETUPS and row.scenario == "GetTask":
                        continue  # the serial section's setup: a read holds no write lock
                    assert s.proc is not None
                    held = await lock_held(s, n)
                    before = tree_cpu(s.proc.pid)
                    res = await measure(row, s, rpc, tasks[n], seconds if r else 0.5)
                    calls = max(res.rate * seconds / (103 if row.scenario.startswith("stream")
                                                      else 1), 1)
                    per_call = (tree_cpu(s.proc.pid) - before) / calls
                    serial = serial_since(held, await lock_held(s, n)) / calls
                    if r:
                        found.setdefault(row, {}).setdefault((store, n), []).append(
                            (res.rate, per_call, serial))
                        progress(f"round {r}/{rounds} {row.title} {store} {n} worker(s): "
                                 f"{res.rate:.0f}/s, {per_call * 1e6:.0f} µs CPU a call, "
                                 f"{serial * 1e6:.0f} µs holding the write lock, "
                                 f"errors {res.errors}")
        await rpc.close()
    finally:
        for s in servers.values():
            s.stop()


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def render(found: Found, note: str = "") -> str:
    """One row per scenario and store: CPU per call with 1, 2, 3 workers."""
    counts = "/".join(str(n) for n in SETUPS)
    lines = [BEGIN, "### Workers: `serve --workers N`, counted", "",
             "JSON-RPC; every process on one core; medians. CPU per call: the CPU "
             "time of all the server's processes (supervisor and hub included) over the "
             "calls served, against one process on the same store. On paper: N cores / "
             "that CPU time.", *(["", note] if note else []), "",
             f"| scenario | conc. | store | /s on 1 core, {counts} workers | CPU µs a call | "
             f"vs 1 process | on paper, {SETUPS[-1]} cores /s |", "|---|---|---|---|---|---|---|"]
    for row in ROWS:
        got = found.get(row, {})
        events = 103 if row.scenario.startswith("stream") else 1
        unit = " ev" if events > 1 else ""
        for store in STORES:
            measured = {n: got[(store, n)] for n in SETUPS if got.get((store, n))}
            if not measured:
                continue
            cost = {n: _median([p for _, p, _ in m]) for n, m in measured.items()}
            base = cost.get(1)
            rates = " / ".join(_f(_median([r for r, _, _ in m])) for m in measured.values())
            ratios = " / ".join(f"{c / base:.2f}x" for c in cost.values()) if base else ""
            last = max(cost)
            lines.append(f"| {row.scenario} | {row.concurrency} | {store} | {rates}{unit} | "
                         + " / ".join(f"{c * 1e6:,.0f}" for c in cost.values())
                         + f" | {ratios} | {_f(last * events / cost[last])}{unit} |")
    return "\n".join([*lines, "", *serial_table(found), "", END])


def amdahl(serial: float, cost: float, cores: int) -> float:
    """What `cores` processes serve against one, when `serial` of a call's
    `cost` (seconds) can be spent by only one process at a time."""
    share = min(serial / cost, 1.0) if cost else 1.0
    return 1 / (share + (1 - share) / cores)


def serial_table(found: Found) -> list[str]:
    """The serial section of a call (SQLite: the write lock of the most held
    file held, summed over the processes) against what a call costs one
    process, with one process and with SERIAL_SETUP workers, and the bound
    Amdahl's law sets for 8 and 16 cores from each."""
    lines = ["Serial section: the CPU time a call's writes held a SQLite file's write lock "
             "that other processes wait for (one at a time can hold it), on the most "
             "shared file, against the CPU a call costs one process; the bound for N cores "
             "is 1 / (s + (1 - s) / N), s their ratio. One process: all its writes to its "
             "one file, what workers sharing one file would wait on. 8 workers: each "
             "writes a shard of its own, and what the others write to a worker's shard "
             "(lease renewals, the outbox's claims, continued tasks) is what they share.",
             "",
             "| scenario | store | workers | write lock held µs a call | CPU µs a call | "
             "serial share | bound, 8 cores | bound, 16 cores |",
             "|---|---|---|---|---|---|---|---|"]
    for row in ROWS:
        if row.scenario == "GetTask":
            continue  # a read: it holds no write lock
        got = found.get(row, {})
        if not got.get(("SQLite", 1)):
            continue
        cost = _median([p for _, p, _ in got[("SQLite", 1)]])
        for n in (1, SERIAL_SETUP):
            if not (measured := got.get(("SQLite", n))):
                continue
            held = _median([h for _, _, h in measured])
            store = "SQLite"
            unit = " (a stream)" if row.scenario.startswith("stream") else ""
            lines.append(f"| {row.scenario}{unit} | {store} | {n} | {held * 1e6:,.1f} | "
                         f"{cost * 1e6:,.0f} | {held / cost:.1%} | "
                         f"{amdahl(held, cost, 8):.1f}x | {amdahl(held, cost, 16):.1f}x |")
    return lines


def write_docs(text: str) -> None:
    report.write_section(BEGIN, END, text)


async def section(rounds: int, seconds: float, folder: Path,
                  progress: Callable[[str], None]) -> str:
    """This module's section of docs/benchmarks.md, measured and rendered (wire.SECTIONS)."""
    return render(*await run(rounds, seconds, folder, progress))
