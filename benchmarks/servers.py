"""The servers a benchmark compares, each its own process on the server CPU.

- `ours`: `a2a-grpc serve` with the demo agent (memory store unless told).
- `sdk`: the official a2a-sdk's reference server (tests/interop/peers/
  sdk_server.py in the SDK's own virtualenv: Starlette + uvicorn for JSON-RPC
  and REST, its GrpcHandler on grpc.aio, InMemoryTaskStore, the same agent).
- `js`: the official JavaScript SDK's server (benchmarks/js_server.cjs:
  @a2a-js/sdk's DefaultRequestHandler and InMemoryTaskStore on Express and
  @grpc/grpc-js, Node from Debian, npm into .interop/bench-node; the same
  agent).
- `uvicorn`, `fastapi`: ours on the ASGI face (benchmarks/asgi_server.py).
- `ceiling`: benchmarks/ceiling.py, the thinnest correct server doing the same
  work per call (store the task, answer it whole with its history).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.processes import unused_port

ROOT = Path(__file__).resolve().parents[1]
JS_HOME = ROOT / ".interop" / "bench-node"
JS_PACKAGES = ("@a2a-js/sdk@1.3.0", "express@5.1.0", "@grpc/grpc-js@1.14.7",
               "@bufbuild/protobuf@2.17.0")


def js_modules() -> Path:
    """node_modules with the JS SDK's server and what it runs on (npm, first run only)."""
    stamp, wanted = JS_HOME / "installed.txt", " ".join(JS_PACKAGES)
    if stamp.exists() and stamp.read_text() == wanted:
        return JS_HOME / "node_modules"
    if shutil.which("node") is None or shutil.which("npm") is None:
        raise RuntimeError("the JS SDK peer needs Node.js: apt-get install nodejs npm")
    JS_HOME.mkdir(parents=True, exist_ok=True)
    print(f"installing {wanted} into {JS_HOME} (first run only)...", file=sys.stderr,
          flush=True)
    subprocess.run(["npm", "install", "--prefix", str(JS_HOME), "--no-audit", "--no-fund",
                    "--silent", *JS_PACKAGES], check=True, timeout=600)
    stamp.write_text(wanted)
    return JS_HOME / "node_modules"
SERVER_CPU = 0
LOADGEN_CPU = 1
_GIVEN: set[int] = set()  # ports handed to this run's servers so far


def free_port() -> int:
    """A port for one of this run's servers: free now, and never one handed to
    another of them. gRPC servers bind with SO_REUSEPORT, so two handed the
    same port would both listen on it, and the kernel would share each one's
    connections between them: a run once measured the SDK's gRPC server in
    the ceiling's rows that way (both rows near 370/s, and GetTask refused
    for the ceiling's task). `listeners` checks for that after the start."""
    while (port := unused_port()) in _GIVEN:
        pass
    _GIVEN.add(port)
    return port


def listeners(port: int) -> int:
    """How many sockets listen on `port` on this machine (IPv4 and IPv6)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                count += 1
    return count


def pin(cpu: int) -> None:
    """Run this process on one CPU (when the machine has it). Checked against
    the machine, not this process's affinity: a server started by a load
    generator already pinned elsewhere must still move to its own CPU."""
    if hasattr(os, "sched_setaffinity") and cpu < (os.cpu_count() or 1):
        os.sched_setaffinity(0, {cpu})


@dataclass
class Server:
    name: str  # ours | sdk | js | ceiling | uvicorn | fastapi
    sdk_python: Path | None = None
    store: str = "memory"
    env: dict[str, str] = field(default_factory=dict)
    label: str = ""
    extra: list[str] = field(default_factory=list)  # more `serve` flags (ours)
    cpus: frozenset[int] = frozenset()  # where it runs (none: SERVER_CPU alone)
    workers: int = 1  # the JS SDK's processes under node's cluster module ("js")
    tree: Path = ROOT  # the checkout ours runs from (benchmarks/against.py: an older one)
    python: Path | None = None  # the Python ours runs in (default: this one)
    http: int = field(default_factory=free_port)
    grpc: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    def __post_init__(self) -> None:
        self.label = self.label or self.name

    def command(self) -> list[str]:
        if self.name == "ours":
            return [str(self.python or sys.executable), "-m", "a2a_grpc", "serve",
                    "--store", self.store,
                    "--http-port", str(self.http), "--grpc-port", str(self.grpc),
                    "--log-level", "WARNING", *self.extra]
        if self.name == "sdk":
            assert self.sdk_python is not None
            return [str(self.sdk_python), str(ROOT / "tests/interop/peers/sdk_server.py"),
                    str(self.http), str(self.grpc)]
        if self.name == "js" and self.workers > 1:
            return ["node", str(ROOT / "benchmarks" / "js_cluster.cjs"), str(self.http),
                    str(self.grpc), str(self.workers)]
        if self.name == "js":
            return ["node", str(ROOT / "benchmarks" / "js_server.cjs"), str(self.http),
                    str(self.grpc)]
        if self.name in ("uvicorn", "fastapi"):
            return [sys.executable, "-m", "benchmarks.asgi_server", self.name, str(self.http),
                    str(self.grpc), self.store]
        return [sys.executable, "-m", "benchmarks.ceiling", str(self.http), str(self.grpc)]

    def start(self) -> None:
        self.proc = subprocess.Popen(
            self.command(), cwd=self.tree, env={**os.environ, **self.env},
            preexec_fn=lambda: pin(SERVER_CPU) if not self.cpus else os.sched_setaffinity(
                0, self.cpus),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Until both ports accept connections (a seeded SDK store takes a while)."""
        deadline = time.monotonic() + timeout
        for port in (self.http, self.grpc):
            while True:
                assert self.proc is not None
                if self.proc.poll() is not None:
                    err = self.proc.stderr.read().decode()[-2000:] if self.proc.stderr else ""
                    raise RuntimeError(f"{self.label} exited with {self.proc.returncode}: {err}")
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"{self.label} did not listen on {port}") from None
                    time.sleep(0.1)

    def rss(self) -> int:
        """Resident memory of the server process, bytes."""
        assert self.proc is not None
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS")

    def cpu_seconds(self) -> float:
        """CPU time the server process has used so far."""
        assert self.proc is not None
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_all(servers: list[Server]) -> None:
    for s in servers:
        s.start()
    for s in servers:
        s.wait_ready()
        # Servers and load generator on one CPU would halve every figure, silently.
        assert s.proc is not None
        if (os.cpu_count() or 1) > LOADGEN_CPU and hasattr(os, "sched_getaffinity"):
            where = os.sched_getaffinity(s.proc.pid)
            if where != {SERVER_CPU}:
                raise RuntimeError(f"{s.label} runs on CPUs {sorted(where)}, not {SERVER_CPU}")
        # Another process on one of its ports would take some of its calls, silently.
        for port in (s.http, s.grpc):
            if listeners(port) > 1:
                raise RuntimeError(f"{s.label}'s port {port} has another listener besides it: "
                                   "stop the other process, or run the benchmark again")
