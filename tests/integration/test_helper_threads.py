"""`serve --helper-threads`: the threads beside the event loop's (gRPC's, the
SQLite writer's) scheduled to give way to it, the loop's own untouched, and
the server serving every binding as before; `normal` changes nothing."""

from __future__ import annotations

import os
from pathlib import Path

import aiohttp
import pytest

from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated.a2a_pb2_grpc import A2AServiceStub
from tests.conftest import send_request
from tests.processes import reap, start_server, wait_serving


def schedules(pid: int) -> dict[int, tuple[int, int]]:
    """Each thread of `pid`: (scheduling policy, nice)."""
    found = {}
    for entry in os.listdir(f"/proc/{pid}/task"):
        tid = int(entry)
        try:
            found[tid] = (os.sched_getscheduler(tid), os.getpriority(os.PRIO_PROCESS, tid))
        except ProcessLookupError:
            continue
    return found


@pytest.mark.parametrize("policy", ["batch", "idle", "low", "normal"])
async def test_helper_threads_give_way_to_the_loop(policy: str, tmp_path: Path) -> None:
    server = await start_server("serve", "--store", f"sqlite:///{tmp_path}/tasks.db",
                                "--helper-threads", policy)
    try:
        channel = await wait_serving(server.grpc_port, server.proc)
        stub = A2AServiceStub(channel)
        for _ in range(20):  # every helper busy: gRPC's threads and the store's writer
            done = await stub.SendMessage(send_request("hi"))
            assert done.task.status.state == pb.TASK_STATE_COMPLETED
        async with aiohttp.ClientSession() as http:
            async with http.post(server.url + "/message:send", headers={"A2A-Version": "1.0"},
                                 json={"message": {"messageId": "m1", "role": "ROLE_USER",
                                                   "parts": [{"text": "hi"}]}}) as resp:
                assert resp.status == 200, await resp.text()
        await channel.close()
        seen = schedules(server.proc.pid)
        loop = seen.pop(server.proc.pid)
        assert loop == (os.SCHED_OTHER, 0)  # the loop's thread is left as it was
        assert len(seen) >= 3  # gRPC's poller and engine, the SQLite writer
        expected = {"batch": (os.SCHED_BATCH, 0), "idle": (os.SCHED_IDLE, 0),
                    "low": (os.SCHED_OTHER, 19),
                    "normal": (os.SCHED_OTHER, 0)}[policy]
        lowered = [tid for tid, each in seen.items() if each == expected]
        # Threads the loop's thread starts later (asyncio's default executor) are its own.
        assert len(lowered) >= 3, seen
        if policy == "normal":
            assert "--helper-threads" not in server.log()
        else:
            assert f"--helper-threads {policy}" in server.log()
    finally:
        reap(server.proc)
