"""`make soak`: a steady load for a long time, and what it leaves behind.

    python -m tools.chaos.soak [--setup sqlite|replicas] [--minutes 30] [--rate 4]
                               [--retention 2m] [--doc]

`sqlite`: one `serve` on its default store (a SQLite file). `replicas`: the
chaos run's three replicas on PostgreSQL and Redis (cluster.py), no faults.
Both with `--retention`, which deletes final tasks older than that. The
load is the chaos run's (load.py). With PostgreSQL, the soak runs VACUUM on
its schema every minute, as autovacuum (on by default, off on some test
servers) would: deleted rows are reused, not the file shrunk. Every 10 s:
each process's RSS and open file descriptors, the store's size (the SQLite file with its WAL, or the
schema's tables), and Redis's keys and memory. `--doc` plots them
(docs/soak-SETUP.png, needs the [bench] extra) and writes the figures into
docs/reliability.md: the spread of each after the warm-up (the first fifth).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tools.chaos.cluster import POSTGRES, ROOT, Cluster, Replica, free_port
from tools.chaos.load import Load

LOGS = ROOT / ".chaos"
EVERY_S = 10.0


def proc_figures(pid: int) -> tuple[int, int]:
    """(RSS in KiB, open file descriptors) of a process."""
    rss = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
    return rss, len(os.listdir(f"/proc/{pid}/fd"))


async def store_bytes(setup: str, db: Path, schema: str) -> int:
    if setup == "sqlite":
        return sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))
    import asyncpg

    conn = await asyncpg.connect(POSTGRES, timeout=5)
    try:
        size = await conn.fetchval(
            "SELECT coalesce(sum(pg_total_relation_size(format('%I.%I', schemaname, "
            "tablename))), 0) FROM pg_tables WHERE schemaname = $1", schema)
    finally:
        await conn.close()
    return int(size)


async def vacuum(schema: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(POSTGRES, timeout=5)
    try:
        for (table,) in await conn.fetch(
                "SELECT tablename FROM pg_tables WHERE schemaname = $1", schema):
            await conn.execute(f'VACUUM "{schema}"."{table}"')
    finally:
        await conn.close()


async def redis_figures(port: int) -> tuple[int, int]:
    """(keys, used memory in bytes) of the run's Redis."""
    import redis.asyncio as aioredis

    client = aioredis.Redis(port=port)
    try:
        info = await client.info("memory")
        return int(await client.dbsize()), int(info["used_memory"])
    finally:
        await client.aclose()


async def sample(setup: str, pids: list[int], db: Path, schema: str, redis_port: int,
                 began: float) -> dict[str, Any]:
    figures = [proc_figures(pid) for pid in pids]
    row: dict[str, Any] = {"t": round(time.monotonic() - began, 1),
                           "rss_kib": [f[0] for f in figures], "fds": [f[1] for f in figures],
                           "store_bytes": await store_bytes(setup, db, schema)}
    if redis_port:
        row["redis_keys"], row["redis_bytes"] = await redis_figures(redis_port)
    return row


def _start_single(db: Path, retention: str) -> Replica:
    """One `serve` on a fresh SQLite file (the default store)."""
    db.parent.mkdir(parents=True, exist_ok=True)
    for old in db.parent.glob("tasks.db*"):
        old.unlink()
    single = Replica("single", free_port(), free_port(), db.parent / "single.log")
    with single.log.open("ab") as log:  # the child keeps its own copy
        single.proc = subprocess.Popen(
            [sys.executable, "-m", "a2a_grpc", "serve", "--store", f"sqlite:///{db}",
             "--retention", retention, "--http-port", str(single.http_port),
             "--grpc-port", str(single.grpc_port), "--no-inspector"],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    return single


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    LOGS.mkdir(parents=True, exist_ok=True)
    db = LOGS / "soak" / "tasks.db"
    cluster, single = None, None
    if args.setup == "replicas":
        cluster = Cluster(3.0, LOGS / "soak")
        cluster.retention = args.retention
        await cluster.start()
        replicas = cluster.replicas
    else:
        single = _start_single(db, args.retention)
        replicas = [single]
        await Cluster(3.0, LOGS).ready(single)
    pids = [r.proc.pid for r in replicas if r.proc is not None]
    samples: list[dict[str, Any]] = []
    try:
        load = Load([r.url for r in replicas], args.rate, seed=3)
        began = time.monotonic()
        job = asyncio.create_task(load.run(args.minutes * 60))
        while not job.done():
            samples.append(await sample(args.setup, pids, db, cluster.schema if cluster else "",
                                        cluster.redis_port if cluster else 0, began))
            last = samples[-1]
            print(f"soak {args.setup}: {last['t']:6.0f} s  rss {last['rss_kib']} KiB  fds "
                  f"{last['fds']}  store {last['store_bytes'] >> 10} KiB"
                  + (f"  redis {last['redis_keys']} keys" if cluster else ""), flush=True)
            await asyncio.wait({job}, timeout=EVERY_S)
            if cluster is not None and len(samples) % 6 == 0:
                try:
                    await vacuum(cluster.schema)
                except Exception as exc:  # the next minute's will do
                    print(f"soak: VACUUM failed ({exc})", flush=True)
        await job
        errors = [op.error for op in load.ops if op.error and not op.acked]
        print(f"soak {args.setup}: {len(load.ops)} operations, {len(errors)} not acknowledged",
              flush=True)
    finally:
        if cluster is not None:
            await cluster.stop()
        elif single is not None and single.proc is not None:
            single.proc.kill()
            single.proc.wait()
    (LOGS / f"soak-{args.setup}.json").write_text(json.dumps(samples))
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(prog="make soak")
    parser.add_argument("--setup", choices=("sqlite", "replicas"), default="sqlite")
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--rate", type=float, default=4)
    parser.add_argument("--retention", default="2m")
    parser.add_argument("--doc", action="store_true")
    args = parser.parse_args()
    samples = asyncio.run(run(args))
    if args.doc:
        from tools.chaos.soak_doc import write

        write(args.setup, args.minutes, args.rate, args.retention, samples)


if __name__ == "__main__":
    main()
