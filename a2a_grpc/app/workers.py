"""`serve --workers N`: N processes serving one agent on the same ports, and
this one supervising them.

- **The ports.** The supervisor binds the gRPC and HTTP ports first (port 0
  picks them here) with SO_REUSEPORT and holds them without listening; each
  worker listens on them too, and the kernel spreads new connections over
  the workers. A connection stays with the worker that accepted it. With
  `--grpc-carrier pyvoy` each worker is an Envoy of its own on both ports
  (Envoy listens with SO_REUSEPORT too), every binding on each.
- **One store, leases, fencing**: the workers are replicas (docs/replicas.md)
  of the SQLite file or the PostgreSQL database they share. `--store memory`
  is refused: each worker would have its own.
- **The bus.** With `--bus redis://...` the workers use Redis like any
  replica. Without it the supervisor is their hub (bus/hub.py, a Unix
  socket): one machine needs no broker, and the hub carries only the events
  of tasks a stream on another worker watches, plus cancels and follow-ups
  for a task another worker runs, and `--rate-limit`'s counts.
- **Supervision.** A worker that exits while the server is not stopping is
  started again (at once, or after a pause growing to 30 s while it keeps
  failing within 10 s of its start); the others take over its running tasks
  at once (bus/hub.py). SIGTERM/SIGINT drains every worker (each as `serve`
  does) and exits; SIGHUP is passed on (reloads). Workers get SIGTERM when
  the supervisor dies, even SIGKILLed (app/process.py). Readiness comes from the
  workers' "READY=1" (app/process.py), and is passed on in turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from a2a_grpc.app import process
from a2a_grpc.app.settings import ServeSettings
from a2a_grpc.bus.hub import Hub
from a2a_grpc.cards.card import host_port
from a2a_grpc.core.ports import claim
from a2a_grpc.stores import open_store

log = logging.getLogger("a2a_grpc.workers")

QUICK_FAILURE_S = 10.0  # a worker exiting sooner than this after its start backs off
MAX_PAUSE_S = 30.0


@dataclass(eq=False)
class _Worker:
    number: int
    proc: asyncio.subprocess.Process | None = None
    started: float = 0.0
    pause: float = 0.0
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    status: str = ""  # its last STATUS= (process.fail: why it cannot start)


class Supervisor:
    def __init__(self, argv: Sequence[str], settings: ServeSettings) -> None:
        self.argv, self.settings = list(argv), settings
        self.workers = [_Worker(n) for n in range(1, settings.network.workers + 1)]
        self.stopping = asyncio.Event()
        self.folder = Path(tempfile.mkdtemp(prefix="a2a-grpc-workers-"))
        self.hub: Hub | None = None
        self.bus = settings.store.bus
        self.ports = (0, 0)
        self.failure: tuple[str, int] | None = None  # why the workers could not start, as
        # one of them said it, and its exit code
        self.carried = settings.network.grpc_carrier == "pyvoy"
        self._notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)

    async def run(self) -> int:
        if self.settings.store.url == "memory":
            raise ValueError("--workers: the workers share the store: use the SQLite default "
                             "or PostgreSQL, not --store memory")
        # Created or migrated here once, not by N workers at once; a bad --store, or one
        # another server is on, stops here. Counted here for the workers until the end:
        # on the hub they are one server, alone on the store (another group of workers
        # would be on another hub); on Redis, replicas among any others on it.
        # The ports first: one in use stops it before any store file is made.
        net = self.settings.network
        held = claim(net.host, net.http_port, net.grpc_port)  # no other server's group
        try:
            self.ports = (held[0].getsockname()[1], held[1].getsockname()[1])
            store = await open_store(self.settings.store.url, shards=len(self.workers))
            try:
                await store.register_server(alone=not self.bus)
                code = await self._supervise()
            finally:
                await store.close()
        finally:
            for sock in held:
                sock.close()
        if self.failure:
            return process.fail(*self.failure)
        return code

    async def _supervise(self) -> int:
        net = self.settings.network
        loop = asyncio.get_running_loop()
        try:
            if not self.bus:
                self.hub = Hub()
                await self.hub.start(self.folder / "hub.sock")
                self.bus = f"hub://{self.folder / 'hub.sock'}"
            self._notify.bind(str(self.folder / "notify.sock"))
            self._notify.setblocking(False)
            loop.add_reader(self._notify.fileno(), self._heard)
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, self.stopping.set)
            loop.add_signal_handler(signal.SIGHUP, self._signal_all, signal.SIGHUP)
            for worker in self.workers:
                await self._start(worker)
            if not await self._all_ready():
                await self._stop_all()
                return 1
            log.info("listening: gRPC on %s, %s on %s%s, %d workers (pids %s); Ctrl-C "
                     "stops them", host_port(net.host, self.ports[1]),
                     "HTTPS" if net.tls_cert is not None else "HTTP",
                     host_port(net.host, self.ports[0]),
                     " (carried by pyvoy: every binding on both)" if self.carried else "",
                     len(self.workers),
                     ", ".join(str(w.proc.pid) for w in self.workers if w.proc))
            process.notify("READY=1")
            watching = [asyncio.create_task(self._watch(w)) for w in self.workers]
            await self.stopping.wait()
            process.notify("STOPPING=1")
            await self._stop_all()
            for each in watching:
                each.cancel()
            return 0
        finally:
            loop.remove_reader(self._notify.fileno())
            self._notify.close()
            if self.hub is not None:
                await self.hub.close()
            shutil.rmtree(self.folder, ignore_errors=True)

    async def _start(self, worker: _Worker) -> None:
        args = [*self.argv, "--http-port", str(self.ports[0]), "--grpc-port",
                str(self.ports[1]), "--bus", str(self.bus)]
        if self.settings.observability.metrics_port:  # one port each: P, P+1, ...
            args += ["--metrics-port",
                     str(self.settings.observability.metrics_port + worker.number - 1)]
        env = {**os.environ, process.WORKER: str(worker.number),
               process.SUPERVISOR: str(os.getpid()),
               "NOTIFY_SOCKET": str(self.folder / "notify.sock")}
        worker.ready.clear()
        worker.started = time.monotonic()
        worker.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "a2a_grpc", *args, env=env)
        log.info("worker %d started (pid %d)", worker.number, worker.proc.pid)

    def _heard(self) -> None:
        """A worker's sd_notify datagram: READY=1, or STATUS=why it cannot start
        (process.fail), with MAINPID=its pid."""
        with contextlib.suppress(BlockingIOError):
            while True:
                fields = dict(line.split("=", 1) for line in
                              self._notify.recv(4096).decode().splitlines() if "=" in line)
                for worker in self.workers:
                    if worker.proc is None or str(worker.proc.pid) != fields.get("MAINPID"):
                        continue
                    if fields.get("READY") == "1":
                        worker.ready.set()
                    worker.status = fields.get("STATUS", worker.status)

    async def _all_ready(self) -> bool:
        """Every worker's READY=1, or False when one exits first (its log says why)."""
        for worker in self.workers:
            assert worker.proc is not None
            ready = asyncio.create_task(worker.ready.wait())
            exited = asyncio.create_task(worker.proc.wait())
            stop = asyncio.create_task(self.stopping.wait())
            await asyncio.wait([ready, exited, stop], return_when=asyncio.FIRST_COMPLETED)
            for each in (ready, exited, stop):
                each.cancel()
            if not worker.ready.is_set():
                self._heard()  # its last word may be read after its exit
                if worker.proc.returncode is not None and worker.status:
                    # what each worker would say, said once
                    self.failure = (worker.status, worker.proc.returncode)
                elif worker.proc.returncode is not None:
                    log.error("worker %d exited (code %s) before it was ready: stopping",
                              worker.number, worker.proc.returncode)
                return False
        return True

    async def _watch(self, worker: _Worker) -> None:
        """Start `worker` again each time it exits, until the server stops."""
        while worker.proc is not None:
            code = await worker.proc.wait()
            if self.stopping.is_set():
                return
            quick = time.monotonic() - worker.started < QUICK_FAILURE_S
            worker.pause = min(max(worker.pause * 2, 1.0), MAX_PAUSE_S) if quick else 0.0
            log.warning("worker %d (pid %d) exited (%s): starting it again%s; the others "
                        "take over the tasks it was running", worker.number,
                        worker.proc.pid, _exit(code),
                        f" in {worker.pause:g} s" if worker.pause else "")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), worker.pause)
                return
            await self._start(worker)

    def _signal_all(self, sig: int) -> None:
        for worker in self.workers:
            if worker.proc is not None and worker.proc.returncode is None:
                worker.proc.send_signal(sig)

    async def _stop_all(self) -> None:
        """SIGTERM every worker and wait for their drains (then SIGKILL)."""
        net = self.settings.network
        self._signal_all(signal.SIGTERM)
        running = [w.proc for w in self.workers if w.proc is not None]
        limit = (net.drain_notice if net.drain_notice is not None else 3.0) + net.grace + 15
        try:
            async with asyncio.timeout(limit):
                for proc in running:
                    await proc.wait()
        except TimeoutError:
            log.warning("workers still running %g s after SIGTERM: killed", limit)
            self._signal_all(signal.SIGKILL)
        log.info("every worker stopped")


def _exit(code: int) -> str:
    return f"killed by signal {-code}" if code < 0 else f"code {code}"


async def supervise(argv: Sequence[str], settings: ServeSettings) -> int:
    """Run `serve` as `settings.network.workers` processes until SIGINT/SIGTERM;
    `argv`: serve's own command line, repeated for each worker."""
    return await Supervisor(argv, settings).run()
