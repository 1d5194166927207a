"""Our server as a separate process, the way users run it."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def spawn(*args: str) -> subprocess.Popen[str]:
    """`python -m a2a_grpc ARGS`; a `serve` without --store keeps its tasks in memory
    (tests must not leave a2a-grpc.db files in the working tree)."""
    if args and args[0] == "serve" and "--store" not in args:
        args = (*args, "--store", "memory")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "a2a_grpc", *args], cwd=ROOT, env=env,
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
            raise AssertionError(proc.stdout.read() if proc.stdout else "server exited")
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
                raise AssertionError(proc.stdout.read() if proc.stdout else "exited")
            try:
                async with session.get(url + "/.well-known/agent-card.json") as resp:
                    if resp.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    raise AssertionError(f"{url} did not answer in 30 s")
