"""Our server as a separate process, the way users run it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

ROOT = Path(__file__).resolve().parents[1]


def unused_port() -> int:
    """A port nothing listens on right now, for tests that need a refused
    connection (never for a server to bind: let it bind port 0 instead)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


# What `serve` and `bridge` log once bound: the ports they really got.
LISTENING = re.compile(r"listening: (?:gRPC on \S+:(\d+), )?HTTPS? on \S+:(\d+)")


@dataclass
class Server:
    """`a2a-grpc serve|bridge` in a process of its own, bound to ports it chose."""

    proc: subprocess.Popen[str]
    grpc_port: int
    http_port: int
    output: list[str] = field(default_factory=list)  # its log, drained as it comes
    drainer: threading.Thread | None = None
    path: str = ""  # where the agent is mounted on the HTTP port ("/a2a"), if not at the root

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}{self.path}"

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def log(self) -> str:
        """What it logged; once it has exited, all of it."""
        if self.proc.poll() is not None and self.drainer is not None:
            self.drainer.join(10)
        return "".join(self.output)

    async def logged(self, text: str, count: int = 1) -> None:
        """Until its log holds `text` `count` times (30 s at most): a log line
        is the only sign of some things (a reload), so it is polled."""
        deadline = asyncio.get_running_loop().time() + 30
        while self.log().count(text) < count:
            assert asyncio.get_running_loop().time() < deadline, \
                f"never logged {text!r} {count} time(s):\n{self.log()}"
            await asyncio.sleep(0.05)

    def family(self) -> list[int]:
        """Its pid and its descendants' (serve --grpc-carrier pyvoy runs Envoy as
        its child): what a test freezes to hang the server."""
        return [self.proc.pid, *descendants(self.proc.pid)]

    def signal_all(self, sig: int) -> None:
        for pid in self.family():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)

    async def stop(self) -> int:
        """SIGTERM, and its exit code (15 s at most)."""
        self.proc.terminate()
        return await asyncio.to_thread(self.proc.wait, 15)


def descendants(pid: int) -> list[int]:
    """The processes `pid` started, and theirs, as they are now."""
    found, i = [pid], 0
    while i < len(found):
        for task in Path(f"/proc/{found[i]}/task").glob("*"):
            with contextlib.suppress(OSError):  # ended meanwhile
                found += [int(p) for p in (task / "children").read_text().split()]
        i += 1
    return found[1:]


def alive(pid: int) -> bool:
    """Whether any thread of `pid` still runs. A process whose main thread has
    ended shows as a zombie while its other threads still hold its sockets (Envoy
    has one a worker), and one nobody has reaped yet is a zombie too: neither
    holds anything once every thread is a zombie or gone."""
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            if (task / "stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X"):
                return True
    return False


async def all_gone(pids: Sequence[int], seconds: float = 10) -> list[int]:
    """Wait for every one of `pids` to end (`seconds` at most); those that did not."""
    for _ in range(int(seconds / 0.05)):  # nothing to wait on: they are not our children
        if not any(alive(pid) for pid in pids):
            break
        await asyncio.sleep(0.05)
    return [pid for pid in pids if alive(pid)]


async def start_server(*args: str, cwd: Path = ROOT, program: Sequence[str] = (),
                       path: str = "", group: bool = False) -> Server:
    """Spawn `a2a-grpc ARGS` on port 0 (unless ARGS name ports) and wait for the
    line that says which ports it bound: no other process can take them first.
    `program`: what runs (default `python -m a2a_grpc`), in `cwd`; `path`: where
    it serves the agent on its HTTP port (Server.url); `group`: in a process group
    of its own, as a shell starts a command (os.killpg then plays a terminal's Ctrl-C)."""
    if args and args[0] == "serve" and "--grpc-port" not in args:
        args = (*args, "--grpc-port", "0")
    if "--http-port" not in args:
        args = (*args, "--http-port", "0")
    proc = spawn(*args, cwd=cwd, program=program, group=group)
    output: list[str] = []
    bound: list[int] = []
    ready = threading.Event()

    def drain() -> None:  # read the log as it comes, so the pipe never fills up
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                output.append(line)
                found = LISTENING.search(line)
                if found and not bound:
                    bound.extend(int(g or 0) for g in found.groups())
                    ready.set()
        except (ValueError, OSError):
            pass  # closed by reap()
        ready.set()

    drainer = threading.Thread(target=drain, daemon=True)
    drainer.start()
    started = time.monotonic()
    await asyncio.to_thread(ready.wait, 30)
    if not bound:
        code = proc.poll()
        reap(proc)
        how = "still running" if code is None else f"exit code {code}"
        raise AssertionError(f"the server did not start ({how} after "
                             f"{time.monotonic() - started:.1f} s):\n" + "".join(output))
    return Server(proc, bound[0], bound[1], output, drainer, path)


async def mounted_app(folder: Path, monkeypatch: Any, server: str = "uvicorn",
                      **settings: str) -> Server:
    """examples/mount_fastapi.py under `server` (uvicorn or hypercorn), on
    SQLite in `folder`, its gRPC on a free port: the agent at Server.url.
    `settings`: more A2A_GRPC_* variables (allow_push_to="127.0.0.1/32")."""
    monkeypatch.setenv("A2A_GRPC_STORE", f"sqlite:///{folder / 'tasks.db'}")
    monkeypatch.setenv("A2A_GRPC_GRPC_PORT", "0")
    for name, value in settings.items():
        monkeypatch.setenv("A2A_GRPC_" + name.upper(), value)
    return await start_server(program=(sys.executable, "-m", "tests.asgi_runner", server,
                                       "examples.mount_fastapi:app"), path="/a2a")


def spawn(*args: str, cwd: Path = ROOT, program: Sequence[str] = (),
          group: bool = False) -> subprocess.Popen[str]:
    """`python -m a2a_grpc ARGS` (or `program ARGS`) in `cwd`; a `serve` without
    --store in the repository keeps its tasks in memory (tests must not leave
    a2a-grpc.db files in the working tree)."""
    if args and args[0] == "serve" and "--store" not in args and cwd == ROOT:
        args = (*args, "--store", "memory")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    command = [*(program or (sys.executable, "-m", "a2a_grpc")), *args]
    return subprocess.Popen(command, cwd=cwd, env=env, process_group=0 if group else None,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def reap(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


async def wait_serving(port: int, proc: subprocess.Popen[str]) -> grpc.aio.Channel:
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    health = health_pb2_grpc.HealthStub(channel)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            await channel.close()
            raise AssertionError(f"server exited with {proc.returncode}")
        try:
            resp = await health.Check(health_pb2.HealthCheckRequest(), timeout=1)
            if resp.status == health_pb2.HealthCheckResponse.SERVING:
                return channel
        except grpc.aio.AioRpcError:
            await asyncio.sleep(0.1)
    await channel.close()
    raise AssertionError("server did not become healthy in 30 s")


async def wait_http(url: str, proc: subprocess.Popen[str]) -> None:
    import aiohttp

    deadline = time.monotonic() + 30
    async with aiohttp.ClientSession() as session:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise AssertionError(f"server exited with {proc.returncode}")
            try:
                async with session.get(url + "/.well-known/agent-card.json") as resp:
                    if resp.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    raise AssertionError(f"{url} did not answer in 30 s")
