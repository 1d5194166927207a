"""SIGKILL in the middle of group-committed bursts loses nothing anyone was told.

A real server on SQLite (and on PostgreSQL) streams four tasks of 3,000
chunks each, every event pushed to a webhook, while eight clients send
messages and wait for their answers. It is killed (SIGKILL) while all of
that is under way, and started again on the same store. Then:
- every chunk a stream delivered is in its task, in order;
- every notification the webhook got is the event the task's log holds
  under that sequence number;
- every send that was answered finds its task as it was answered.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated.a2a_pb2_grpc import A2AServiceStub
from tests.conftest import user_message
from tests.processes import reap, start_server, wait_serving
from tests.stores import durable_store_url
from tests.webhook import Webhook, start_webhook

STREAMS, CHUNKS, SENDERS = 4, 3000, 8


@pytest.fixture(params=["sqlite", "postgres"])
async def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    async with durable_store_url(request.param, tmp_path) as url:
        yield url


async def _start(store: str, keys: Path) -> tuple[object, grpc.aio.Channel, A2AServiceStub]:
    server = await start_server("serve", "--store", store, "--push-keys", str(keys),
                                "--allow-push-to", "127.0.0.1", "--allow-http-push",
                                "--grace", "1")
    channel = await wait_serving(server.grpc_port, server.proc)
    return server.proc, channel, A2AServiceStub(channel)


def _chunks(task: pb.Task) -> list[str]:
    return [p.text.rstrip(".") for a in task.artifacts for p in a.parts]


async def test_sigkill_mid_burst_loses_nothing_told(store_url: str, tmp_path: Path) -> None:
    hook: Webhook = await start_webhook()
    try:
        await _burst_kill_and_check(hook, store_url, tmp_path)
    finally:
        await hook.server.close()  # also when the burst times out


async def _burst_kill_and_check(hook: Webhook, store_url: str, tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    proc, channel, stub = await _start(store_url, keys)
    seen: list[list[pb.StreamResponse]] = [[] for _ in range(STREAMS)]
    answered: list[pb.Task] = []
    enough = asyncio.Event()
    killed = False

    def check_enough() -> None:
        if all(len(s) >= 300 for s in seen) and len(answered) >= 20 and len(hook.hits) >= 50:
            enough.set()

    async def stream(i: int) -> None:
        call: Any = stub.SendStreamingMessage(pb.SendMessageRequest(
            message=user_message(f"stream {CHUNKS} 256"),
            configuration=pb.SendMessageConfiguration(
                task_push_notification_config=pb.TaskPushNotificationConfig(
                    url=hook.url(f"/s{i}")))))
        while True:
            try:
                async for event in call:
                    seen[i].append(event)
                    check_enough()
                return
            except grpc.aio.AioRpcError as exc:
                # A reader that falls too far behind (this process is busy, or the
                # machine is) is cut, resumably: resume after the last event seen,
                # as a client does. The task's events are numbered from 1 on.
                if exc.code() != grpc.StatusCode.UNAVAILABLE or not seen[i] or killed:
                    raise
                call = stub.SubscribeToTask(
                    pb.SubscribeToTaskRequest(id=seen[i][0].task.id),
                    metadata=(("a2a-last-event-id", str(len(seen[i]))),))

    async def sender() -> None:
        while True:
            answered.append((await stub.SendMessage(pb.SendMessageRequest(
                message=user_message("hello")))).task)
            check_enough()

    work = [asyncio.create_task(stream(i)) for i in range(STREAMS)]
    work += [asyncio.create_task(sender()) for _ in range(SENDERS)]
    try:
        async with asyncio.timeout(60):
            await enough.wait()
        killed = True
        proc.send_signal(signal.SIGKILL)  # type: ignore[attr-defined]
        await asyncio.to_thread(proc.wait, 20)  # type: ignore[attr-defined]
        await asyncio.gather(*work, return_exceptions=True)  # cut off with the server
    finally:
        for w in work:
            w.cancel()
        await channel.close()
        reap(proc)  # type: ignore[arg-type]
    hits = list(hook.hits)
    assert all(seen) and answered and hits
    proc, channel, stub = await _start(store_url, keys)
    try:
        for events in seen:
            task_id = events[0].task.id
            stored = await stub.GetTask(pb.GetTaskRequest(id=task_id))
            told = [e.artifact_update.artifact.parts[0].text.rstrip(".")
                    for e in events if e.HasField("artifact_update")]
            assert _chunks(stored)[:len(told)] == told  # all there, in order
            assert told == [f"chunk {i}/{CHUNKS}" for i in range(1, len(told) + 1)]
        logs = {}
        for events in seen:
            task_id = events[0].task.id
            replay = stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task_id),
                                          metadata=(("a2a-last-event-id", "0"),))
            logs[task_id] = [e async for e in replay]  # the whole log, from event 1
        for hit in hits:  # each notification is the logged event under its number
            task_id, seq = hit.headers["Idempotency-Key"].rsplit(":", 1)
            assert logs[task_id][int(seq) - 1] == hit.event
        for task in answered:
            assert await stub.GetTask(pb.GetTaskRequest(id=task.id)) == task
    finally:
        await channel.close()
        proc.send_signal(signal.SIGTERM)  # type: ignore[attr-defined]
        await asyncio.to_thread(proc.wait, 20)  # type: ignore[attr-defined]
        reap(proc)  # type: ignore[arg-type]
