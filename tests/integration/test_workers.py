"""`serve --workers 3`: three processes on the same ports, supervised, on the
SQLite default and on PostgreSQL, the supervisor as their hub (no Redis).

The kernel gives each new connection to one worker. A client pinned to a
worker keeps one connection (`pinned`): it asked /metrics which worker it
reached (`a2a_worker_info`), so each test knows that a stream, a cancel or a
follow-up went to a worker other than the one running the task."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import grpc
import pytest

from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated import a2a_pb2_grpc
from tests.bindings import parse_sse
from tests.carried import carriers
from tests.integration.test_replicas import (
    HEADERS,
    delivered_by,
    start_task,
    state_of,
    subscribe,
    what,
)
from tests.processes import Server, all_gone, descendants, reap, start_server
from tests.redis_bus import bus_url, drop_prefix, redis_prefix
from tests.stores import durable_store_url
from tests.webhook import start_webhook

WORKER = re.compile(r'a2a_worker_info\{pid="(\d+)",worker="(\d+)"\} 1')


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    async with durable_store_url(request.param, tmp_path) as url:
        yield url


class Pinned:
    """An HTTP client on one kept-alive connection, to one worker."""

    def __init__(self, session: aiohttp.ClientSession, server: Server, worker: int,
                 pid: int) -> None:
        self.session, self.server, self.worker, self.pid = session, server, worker, pid

    async def rpc(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        async with self.session.post(self.server.url + "/", headers=HEADERS, json={
                "jsonrpc": "2.0", "id": 1, "method": method, "params": params}) as resp:
            body: dict[str, Any] = await resp.json()
        assert "result" in body, body
        return body["result"]  # type: ignore[no-any-return]


async def whose(session: aiohttp.ClientSession, server: Server) -> tuple[int, int]:
    async with session.get(server.url + "/metrics") as resp:
        found = WORKER.search(await resp.text())
    assert found, "a worker's /metrics names it"
    return int(found.group(2)), int(found.group(1))


@pytest.fixture
async def pinned() -> AsyncIterator[Any]:
    """`pin(server, n)`: a client on worker n (new connections until one lands there)."""
    sessions: list[aiohttp.ClientSession] = []

    async def pin(server: Server, worker: int) -> Pinned:
        for _ in range(300):
            session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1))
            sessions.append(session)
            number, pid = await whose(session, server)
            if number == worker:
                return Pinned(session, server, number, pid)
            await session.close()
        raise AssertionError(f"300 connections and none reached worker {worker}")

    yield pin
    for session in sessions:
        await session.close()


@pytest.fixture(params=carriers())
async def started(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """`start(store, *flags)`: `serve --workers 3` on each gRPC carrier."""
    servers: list[Server] = []

    async def start(store: str, *flags: str) -> Server:
        server = await start_server("serve", "--workers", "3", "--store", store,
                                    "--grpc-carrier", request.param, *flags)
        servers.append(server)
        return server

    yield start
    for server in servers:
        reap(server.proc)


async def test_a_stream_on_one_worker_follows_a_task_another_runs(
        store: str, started: Any, pinned: Any) -> None:
    server = await started(store)
    runner, watcher = await pinned(server, 1), await pinned(server, 2)
    task_id = await start_task(runner.session, server, "slow 2")
    async with subscribe(watcher.session, server, task_id) as resp:
        events, _ = parse_sse(await asyncio.wait_for(resp.text(), 30))
    async with subscribe(runner.session, server, task_id, last="1") as resp:
        logged, _ = parse_sse(await resp.text())
    live = events[1:]
    ids = [int(e.id or 0) for e in live]
    assert ids == list(range(ids[0], ids[-1] + 1))  # no gap, no duplicate
    assert [what(e.data) for e in live] == [what(e.data) for e in logged[-len(live):]]
    assert what(live[-1].data) == "status TASK_STATE_COMPLETED"
    assert "artifact echo: slow 2" in [what(e.data) for e in live]


async def test_streams_on_every_worker_see_every_event(
        store: str, started: Any, pinned: Any) -> None:
    """One task, a stream on each of the three workers at once: the same events."""
    server = await started(store)
    clients = [await pinned(server, n) for n in (1, 2, 3)]
    task_id = await start_task(clients[0].session, server, "slow 2")

    async def follow(client: Pinned) -> list[str]:
        async with subscribe(client.session, server, task_id) as resp:
            events, _ = parse_sse(await asyncio.wait_for(resp.text(), 30))
        return [what(e.data) for e in events[1:]]

    seen = await asyncio.gather(*(follow(c) for c in clients))
    for each in seen:
        assert each[-1] == "status TASK_STATE_COMPLETED"
    assert len({tuple(s[-3:]) for s in seen}) == 1


async def test_cancel_and_follow_ups_reach_the_worker_running_the_task(
        store: str, started: Any, pinned: Any) -> None:
    server = await started(store)
    runner, other = await pinned(server, 1), await pinned(server, 3)
    task_id = await start_task(runner.session, server, "slow 2")
    task = await runner.rpc("GetTask", {"id": task_id})
    answer = await other.rpc("SendMessage", {"message": {
        "messageId": str(uuid.uuid4()), "role": "ROLE_USER", "taskId": task_id,
        "contextId": task["contextId"], "parts": [{"text": "also this"}]}})
    assert answer["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    users = [m["parts"][0]["text"] for m in answer["task"]["history"]
             if m["role"] == "ROLE_USER"]
    assert users == ["slow 2", "also this"]

    long = await start_task(runner.session, server, "slow 60")
    canceled = await other.rpc("CancelTask", {"id": long})
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    assert (await state_of(runner.session, server, long))["state"] == "TASK_STATE_CANCELED"
    # Logged once the cancel is done, which the caller can see first.
    await server.logged(f"canceled task {long}: another replica was asked to")
    assert "ERROR" not in server.log()


async def test_a_cancel_the_running_worker_refuses_is_refused_on_every_worker(
        store: str, started: Any, pinned: Any) -> None:
    """The agent's cancel() refuses on the worker running the task: a CancelTask
    reaching another worker gets that refusal, and the task goes on there."""
    server = await started(store, "--agent", "tests.agents:StubbornDemo")
    runner, other = await pinned(server, 1), await pinned(server, 3)
    task_id = await start_task(runner.session, server, "slow 60")
    for client in (other, runner):
        async with client.session.post(server.url + "/", headers=HEADERS, json={
                "jsonrpc": "2.0", "id": 1, "method": "CancelTask",
                "params": {"id": task_id}}) as resp:
            answer = await resp.json()
        assert answer["error"]["code"] == -32002, answer  # TaskNotCancelableError
        assert "finishes what it started" in answer["error"]["message"], answer
    task = await other.rpc("GetTask", {"id": task_id})
    assert task["status"]["state"] == "TASK_STATE_WORKING", task
    assert "ERROR" not in server.log()


async def test_each_push_notification_goes_out_once(
        store: str, started: Any, pinned: Any) -> None:
    hook = await start_webhook()
    hook.delay = 0.1  # each delivery is in flight a while: the other workers poll meanwhile
    server = await started(store, "--allow-push-to", "127.0.0.1", "--allow-http-push")
    clients = [await pinned(server, n) for n in (1, 2, 3)]
    try:
        result = await clients[0].rpc("SendMessage", {
            "message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                        "parts": [{"text": "stream 10"}]},
            "configuration": {"taskPushNotificationConfig": {"url": hook.url("/h")}}})
        task_id = result["task"]["id"]
        await hook.wait_for("/h", 12)  # WORKING, 10 chunks, COMPLETED
        deadline = asyncio.get_running_loop().time() + 20
        while await _delivered(clients) < len(hook.hits):
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.1)
        keys = [h.headers["Idempotency-Key"] for h in hook.hits]
        assert keys == [f"{task_id}:{seq}" for seq in range(2, 14)]  # once each, in order
    finally:
        await hook.server.close()


async def _delivered(clients: list[Pinned]) -> int:
    """What the workers say they delivered, each asked on its own connection."""
    return sum([await delivered_by(c.session, c.server.url) for c in clients])


async def test_a_killed_worker_is_started_again_and_its_tasks_taken_over_at_once(
        store: str, started: Any, pinned: Any) -> None:
    """Its leases would run a minute: the hub tells the others it is gone."""
    server = await started(store, "--lease", "60")
    doomed, survivor = await pinned(server, 2), await pinned(server, 1)
    orphan = await start_task(doomed.session, server, "slow 60")
    os.kill(doomed.pid, signal.SIGKILL)
    deadline = asyncio.get_running_loop().time() + 15
    while (status := await state_of(survivor.session, server, orphan))["state"] == \
            "TASK_STATE_WORKING":
        assert asyncio.get_running_loop().time() < deadline, "the orphan was not taken over"
        await asyncio.sleep(0.2)
    assert status["state"] == "TASK_STATE_FAILED"
    assert "replica running this task stopped" in status["message"]["parts"][0]["text"]
    for _ in range(600):  # a new process in its place, once it says it is ready
        if server.log().count("worker 2 ready") == 2:
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("worker 2 was not started again:\n" + server.log())
    again = await pinned(server, 2)
    assert again.pid != doomed.pid
    assert f"worker 2 (pid {doomed.pid}) exited (killed by signal 9): starting it again" \
        in server.log()
    done = await again.rpc("SendMessage", {"message": {
        "messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "hi"}]}})
    assert done["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_a_worker_killed_while_it_commits_loses_no_acknowledged_send(
        store: str, started: Any, pinned: Any) -> None:
    """Eight clients keep worker 2's writer committing groups of sends; it is
    SIGKILLed in the middle of that. Every send it acknowledged is then found
    by the other workers, completed, and a retry of it is answered with the
    same task (idempotent), not run again."""
    server = await started(store)
    clients = [await pinned(server, 2) for _ in range(8)]
    acknowledged: dict[str, str] = {}  # messageId -> task id
    enough = asyncio.Event()

    async def keep_sending(client: Pinned) -> None:
        while True:
            message_id = str(uuid.uuid4())
            try:
                async with client.session.post(server.url + "/", headers=HEADERS, json={
                        "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
                            "message": {"messageId": message_id, "role": "ROLE_USER",
                                        "parts": [{"text": "hi"}]}}}) as resp:
                    body = await resp.json()
            except (TimeoutError, aiohttp.ClientError):
                return  # the worker is gone: what it answered is what counts
            if "result" not in body:
                return
            acknowledged[message_id] = body["result"]["task"]["id"]
            if len(acknowledged) >= 200:
                enough.set()

    sending = [asyncio.ensure_future(keep_sending(c)) for c in clients]
    await asyncio.wait_for(enough.wait(), 60)
    doomed = descendants(clients[0].pid)  # on pyvoy its Envoy, which dies with it
    os.kill(clients[0].pid, signal.SIGKILL)
    await asyncio.wait_for(asyncio.gather(*sending), 60)
    # Read once the supervisor has seen it exit: until then its listening socket
    # may still take a new connection, which the kernel resets as it closes.
    gone = f"worker 2 (pid {clients[0].pid}) exited (killed by signal 9)"
    for _ in range(600):
        if gone in server.log():
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("the supervisor did not see worker 2 exit:\n" + server.log())
    assert not await all_gone(doomed)  # and every listening socket of it closed
    async with aiohttp.ClientSession() as http:
        for task_id in acknowledged.values():
            got = await state_of(http, server, task_id)
            assert got["state"] == "TASK_STATE_COMPLETED", (task_id, got)
        for message_id, task_id in list(acknowledged.items())[-20:]:  # the latest, retried
            async with http.post(server.url + "/", headers=HEADERS, json={
                    "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
                        "message": {"messageId": message_id, "role": "ROLE_USER",
                                    "parts": [{"text": "hi"}]}}}) as resp:
                again = await resp.json()
            assert again["result"]["task"]["id"] == task_id, again


async def test_grpc_on_the_shared_port_and_a_clean_stop(store: str, started: Any) -> None:
    server = await started(store)
    async with grpc.aio.insecure_channel(server.target) as channel:
        stub = a2a_pb2_grpc.A2AServiceStub(channel)
        events = [e async for e in stub.SendStreamingMessage(pb.SendMessageRequest(
            message=pb.Message(message_id=str(uuid.uuid4()), role=pb.ROLE_USER,
                               parts=[pb.Part(text="stream 3")])))]
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    assert await server.stop() == 0
    log = server.log()
    assert log.count("drained:") == 3 and "every worker stopped" in log
    # what every worker serves alike is said once: the agent, the inspector, Ctrl-C
    assert (log.count("the inspector: open"), log.count("Ctrl-C stops")) == (1, 1), log


async def test_a_stopping_worker_takes_nothing_over_and_logs_no_error(
        store: str, started: Any, pinned: Any) -> None:
    """SIGTERM to the supervisor while worker 1 runs a task: the other two
    drain and exit at once, worker 1 hears they are gone while it drains, and
    takes none of their tasks over (its store may be closing); the clean stop
    logs no error."""
    server = await started(store)
    one = await pinned(server, 1)
    held = await one.rpc("SendMessage", {
        "message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                    "parts": [{"text": "slow 6"}]},
        "configuration": {"returnImmediately": True}})
    assert held["task"]["status"]["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
    assert await server.stop() == 0
    log = server.log()
    assert log.count("drained:") == 3 and "every worker stopped" in log
    # what every worker serves alike is said once: the agent, the inspector, Ctrl-C
    assert (log.count("the inspector: open"), log.count("Ctrl-C stops")) == (1, 1), log
    assert "left to the next start" in log
    assert "ERROR" not in log and "Traceback" not in log, log


@pytest.mark.parametrize("bus", ["hub", "redis"])
async def test_workers_stop_when_their_supervisor_is_killed(
        tmp_path: Path, started: Any, pinned: Any, bus: str) -> None:
    prefix = await redis_prefix() if bus == "redis" else ""
    flags = ("--bus", bus_url(prefix)) if prefix else ()
    try:
        server = await started(f"sqlite:///{tmp_path / 'tasks.db'}", "--drain-notice", "0",
                               *flags)
        pids = [(await pinned(server, n)).pid for n in (1, 2, 3)]
        server.proc.kill()
        assert not await all_gone(pids), "workers outlived their supervisor"
    finally:
        if prefix:
            await drop_prefix(prefix)


async def test_the_memory_store_is_refused() -> None:
    with pytest.raises(AssertionError, match="the workers share the store"):
        await start_server("serve", "--workers", "2", "--store", "memory")


async def test_workers_on_redis_use_it_instead_of_the_hub(tmp_path: Path, started: Any,
                                                          pinned: Any) -> None:
    prefix = await redis_prefix()
    try:
        server = await started(f"sqlite:///{tmp_path / 'tasks.db'}", "--bus", bus_url(prefix))
        runner, watcher = await pinned(server, 3), await pinned(server, 1)
        task_id = await start_task(runner.session, server, "slow 1")
        async with subscribe(watcher.session, server, task_id) as resp:
            events, _ = parse_sse(await asyncio.wait_for(resp.text(), 30))
        assert what(events[-1].data) == "status TASK_STATE_COMPLETED"
        ready = await watcher.session.get(server.url + "/readyz")
        assert (await ready.json())["bus"] == "ok"
    finally:
        await drop_prefix(prefix)


async def test_sighup_to_the_supervisor_reloads_every_worker(
        tmp_path: Path, started: Any, pinned: Any) -> None:
    """SIGHUP is passed on: each worker takes the API keys file as it now is."""
    keys = tmp_path / "keys.txt"
    keys.write_text("alice:key-one\n")
    server = await started(f"sqlite:///{tmp_path / 'tasks.db'}", "--api-keys", str(keys))
    clients = [await pinned(server, n) for n in (1, 2, 3)]

    async def statuses(key: str) -> list[int]:
        found = []
        for client in clients:
            async with client.session.post(server.url + "/", json={
                    "jsonrpc": "2.0", "id": 1, "method": "GetTask",
                    "params": {"id": str(uuid.uuid4())}},
                    headers={**HEADERS, "X-API-Key": key}) as resp:
                found.append(resp.status)
        return found

    assert await statuses("key-one") == [200] * 3  # admitted: TaskNotFound, in the body
    keys.write_text("bob:key-two\n")
    server.proc.send_signal(signal.SIGHUP)
    await server.logged("API keys reloaded", 3)
    assert await statuses("key-one") == [401] * 3
    assert await statuses("key-two") == [200] * 3
