"""A port one server serves is that server's alone: a second `serve` on
either of its ports, on either carrier, with or without --workers, stops
with one line naming the port (exit status 1) and touches no store; and the
first server keeps every call (each on a connection of its own, so that
the kernel would have spread them over both had the second joined).
`--workers` shares its ports among its own workers only."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated import a2a_pb2_grpc
from tests.processes import Server, reap, start_server

MODES = {"grpc.aio": (), "pyvoy": ("--grpc-carrier", "pyvoy"),
         "workers": ("--workers", "2"),
         "workers-pyvoy": ("--workers", "2", "--grpc-carrier", "pyvoy")}
CALLS = 8


def needs(mode: tuple[str, ...]) -> None:
    if "pyvoy" in mode:
        pytest.importorskip("pyvoy", reason="the a2a-grpc[pyvoy] extra is not installed")


@pytest.fixture(params=list(MODES))
async def first(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Server]:
    mode = MODES[request.param]
    needs(mode)
    folder = tmp_path / "first"
    folder.mkdir()
    server = await start_server("serve", "--store", f"sqlite:///{folder / 'tasks.db'}", *mode,
                                cwd=folder)
    try:
        yield server
    finally:
        reap(server.proc)


async def each_on_its_own_connection(server: Server) -> list[int]:
    """Send CALLS messages, then get each task, each call on a new connection:
    the states the first server's store holds for them."""
    made = []
    for i in range(CALLS):
        async with grpc.aio.insecure_channel(server.target) as channel:
            answer = await a2a_pb2_grpc.A2AServiceStub(channel).SendMessage(
                pb.SendMessageRequest(message=pb.Message(
                    message_id=uuid.uuid4().hex, role=pb.ROLE_USER,
                    parts=[pb.Part(text=f"hello {i}")])))
            made.append(answer.task.id)
    states = []
    for task_id in made:
        async with grpc.aio.insecure_channel(server.target) as channel:
            got = await a2a_pb2_grpc.A2AServiceStub(channel).GetTask(pb.GetTaskRequest(id=task_id))
            states.append(got.status.state)
    return states


@pytest.mark.parametrize("which", ["grpc", "http"])
async def test_a_second_server_on_a_served_port_stops_and_touches_no_store(
        first: Server, tmp_path: Path, which: str) -> None:
    port = first.grpc_port if which == "grpc" else first.http_port
    for name, mode in MODES.items():
        if "pyvoy" in mode:
            try:
                needs(mode)
            except pytest.skip.Exception:
                continue
        second = tmp_path / f"second-{name}"
        second.mkdir()
        ports = (("--grpc-port", str(port), "--http-port", "0") if which == "grpc"
                 else ("--grpc-port", "0", "--http-port", str(port)))
        done = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "a2a_grpc", "serve", *ports,
             "--store", f"sqlite:///{second / 'tasks.db'}", *mode],
            cwd=second, capture_output=True, text=True, timeout=60)
        assert done.returncode == 1, (name, done.stderr)
        assert f"cannot listen on 127.0.0.1:{port}" in done.stderr, (name, done.stderr)
        assert "another process serves it" in done.stderr, (name, done.stderr)
        assert "Traceback" not in done.stderr and "usage:" not in done.stderr, done.stderr
        assert list(second.iterdir()) == [], name  # no store made
    assert first.proc.poll() is None
    assert await each_on_its_own_connection(first) == [pb.TASK_STATE_COMPLETED] * CALLS
