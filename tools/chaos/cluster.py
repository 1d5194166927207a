"""The system under chaos: three `serve` replicas on one PostgreSQL schema and
a Redis of the run's own (its own `redis-server` process on a free port, so
that it can be killed and restarted without touching anyone else's), and
the faults done to them.

Each replica keeps its ports across restarts, as a load balancer's backends
do. Faults: SIGKILL a replica and start it again; SIGSTOP one for longer
than its lease, then SIGCONT (it wakes up to find its tasks taken over, and
its writes fenced); kill Redis and start it again (its streams are gone:
nothing is kept on disk); terminate the replicas' PostgreSQL connections
(they reconnect); cut one replica off PostgreSQL, Redis or both, its packets
black-holed (partition.py) for longer than its lease, then heal.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from tools.chaos.partition import Blackhole

ROOT = Path(__file__).resolve().parents[2]
POSTGRES = os.environ.get("A2A_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Replica:
    name: str
    http_port: int
    grpc_port: int
    log: Path
    proc: subprocess.Popen[bytes] | None = None
    stopped: bool = False  # SIGSTOPped
    to_postgres: Blackhole | None = None  # its way to PostgreSQL and to Redis (partitions)
    to_redis: Blackhole | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"


@dataclass
class Cluster:
    lease: float
    logs: Path
    replicas: list[Replica] = field(default_factory=list)
    schema: str = ""
    redis_port: int = 0
    redis: subprocess.Popen[bytes] | None = None
    retention: str | None = None  # serve --retention (the soak's)

    def store_url(self, replica: Replica | None = None) -> str:
        """The schema's, its connections named after it (what cut_postgres cuts);
        a replica's goes through its partition proxy."""
        base = POSTGRES
        if replica is not None and replica.to_postgres is not None:
            parts = urlsplit(POSTGRES)
            user = parts.netloc.rpartition("@")[0]
            base = urlunsplit(parts._replace(
                netloc=f"{user}@127.0.0.1:{replica.to_postgres.port}" if user
                else f"127.0.0.1:{replica.to_postgres.port}"))
        sep = "&" if "?" in base else "?"
        return f"{base}{sep}search_path={self.schema}&application_name={self.schema}"

    def bus_url(self, replica: Replica | None = None) -> str:
        port = replica.to_redis.port if replica and replica.to_redis else self.redis_port
        return f"redis://127.0.0.1:{port}/0"

    async def start(self, count: int = 3) -> None:
        import asyncpg

        self.logs.mkdir(parents=True, exist_ok=True)
        self.schema = f"chaos_{uuid.uuid4().hex[:10]}"
        conn = await asyncpg.connect(POSTGRES, timeout=5)
        await conn.execute(f"CREATE SCHEMA {self.schema}")
        await conn.close()
        self.redis_port = free_port()
        self.start_redis()
        postgres_port = urlsplit(POSTGRES).port or 5432
        for i in range(count):
            replica = Replica(f"r{i}", free_port(), free_port(), self.logs / f"r{i}.log")
            replica.to_postgres = await Blackhole(postgres_port).start()
            replica.to_redis = await Blackhole(self.redis_port).start()
            self.replicas.append(replica)
            self.launch(replica)
        await asyncio.gather(*(self.ready(r) for r in self.replicas))

    def start_redis(self) -> None:
        with (self.logs / "redis.log").open("ab") as log:  # the child keeps its own copy
            self.redis = subprocess.Popen(
                ["redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1",
                 "--save", "", "--appendonly", "no"], stdout=log, stderr=subprocess.STDOUT)

    def launch(self, replica: Replica) -> None:
        with replica.log.open("ab") as log:  # the child keeps its own copy
            replica.proc = self._serve(replica, log)
        replica.stopped = False

    def _serve(self, replica: Replica, log: Any) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-m", "a2a_grpc", "serve", "--store", self.store_url(replica),
             "--bus", self.bus_url(replica), "--lease", str(self.lease),
             "--http-port", str(replica.http_port), "--grpc-port", str(replica.grpc_port),
             "--drain-notice", "0", "--grace", "1", "--no-inspector",
             "--allow-push-to", "127.0.0.1", "--allow-http-push", "--push-backoff", "0.5",
             *(("--retention", self.retention) if self.retention else ())],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})

    async def ready(self, replica: Replica, within: float = 30) -> None:
        import aiohttp

        deadline = time.monotonic() + within
        async with aiohttp.ClientSession() as http:
            while time.monotonic() < deadline:
                try:
                    async with http.get(replica.url + "/readyz") as resp:
                        if resp.status == 200:
                            return
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.1)
        raise RuntimeError(f"replica {replica.name} did not become ready (see {replica.log})")

    # -- faults --

    async def kill_and_restart(self, replica: Replica, down: float) -> None:
        assert replica.proc is not None
        replica.proc.kill()
        replica.proc.wait()
        await asyncio.sleep(down)
        self.launch(replica)
        await self.ready(replica)

    async def pause(self, replica: Replica, seconds: float) -> None:
        assert replica.proc is not None
        replica.proc.send_signal(signal.SIGSTOP)
        replica.stopped = True
        await asyncio.sleep(seconds)
        replica.proc.send_signal(signal.SIGCONT)
        replica.stopped = False

    async def partition(self, replica: Replica, what: str, seconds: float) -> None:
        """Black-hole `replica`'s traffic to "postgres", "redis" or "both" for
        `seconds`, then heal."""
        cut = [p for p, name in ((replica.to_postgres, "postgres"), (replica.to_redis, "redis"))
               if p is not None and what in (name, "both")]
        for proxy in cut:
            proxy.cut()
        try:
            await asyncio.sleep(seconds)
        finally:
            for proxy in cut:
                proxy.heal()

    async def restart_redis(self, down: float) -> None:
        assert self.redis is not None
        self.redis.kill()
        self.redis.wait()
        await asyncio.sleep(down)
        self.start_redis()

    async def cut_postgres(self) -> int:
        """Terminate the replicas' backends (they reconnect); how many."""
        import asyncpg

        conn = await asyncpg.connect(POSTGRES, timeout=5)
        try:
            rows = await conn.fetch(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = $1 AND pid <> pg_backend_pid()", self.schema)
        finally:
            await conn.close()
        return len(rows)

    # -- the end --

    async def stop(self, keep: bool = False) -> None:
        import asyncpg

        for replica in self.replicas:
            if replica.proc is not None and replica.proc.poll() is None:
                if replica.stopped:
                    replica.proc.send_signal(signal.SIGCONT)
                replica.proc.kill()
                replica.proc.wait()
            for proxy in (replica.to_postgres, replica.to_redis):
                if proxy is not None:
                    await proxy.close()
        if self.redis is not None and self.redis.poll() is None:
            self.redis.kill()
            self.redis.wait()
        if self.schema and not keep:
            conn = await asyncpg.connect(POSTGRES, timeout=5)
            await conn.execute(f"DROP SCHEMA {self.schema} CASCADE")
            await conn.close()
