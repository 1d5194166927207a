"""Replicas of one agent sharing PostgreSQL and Redis (`--bus redis://`): a
stream opened on one replica follows a task that another runs, and a stream
whose replica dies resumes on another without a gap. Real `serve` processes,
the PostgreSQL and the Redis on loopback (a fresh schema and key prefix each)."""

from __future__ import annotations

import asyncio
import re
import signal
import uuid
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from a2a_grpc.client import A2AClient, ClientOptions
from a2a_grpc.generated import a2a_pb2 as pb
from tests.bindings import parse_sse
from tests.carried import carriers
from tests.processes import Server, reap, start_server
from tests.proxy import Proxy
from tests.redis_bus import bus_url, drop_prefix, redis_prefix
from tests.stores import drop_schema, postgres_schema, postgres_url
from tests.webhook import start_webhook

HEADERS = {"A2A-Version": "1.0"}


class Cluster:
    """Replicas on one fresh PostgreSQL schema and Redis key prefix, their gRPC
    carried by `carrier` (serve --grpc-carrier)."""

    def __init__(self, store: str, bus: str, carrier: str = "grpc.aio") -> None:
        self.store, self.bus, self.carrier = store, bus, carrier
        self.servers: list[Server] = []

    async def start(self, *flags: str) -> Server:
        server = await start_server("serve", "--store", self.store, "--bus", self.bus,
                                    "--grpc-carrier", self.carrier, *flags)
        self.servers.append(server)
        return server


@pytest.fixture(params=carriers())
async def cluster(request: pytest.FixtureRequest) -> AsyncIterator[Cluster]:
    schema, prefix = await postgres_schema(), await redis_prefix()
    made = Cluster(postgres_url(schema), bus_url(prefix), request.param)
    try:
        yield made
    finally:
        for server in made.servers:
            reap(server.proc)
        await drop_prefix(prefix)
        await drop_schema(schema)


@pytest.fixture
async def replicas(cluster: Cluster) -> list[Server]:
    """Two replicas, both started before any task exists."""
    return [await cluster.start(), await cluster.start()]


async def rpc(http: aiohttp.ClientSession, server: Server, method: str,
              params: dict[str, Any]) -> dict[str, Any]:
    async with http.post(server.url + "/", headers=HEADERS, json={
            "jsonrpc": "2.0", "id": 1, "method": method, "params": params}) as resp:
        body: dict[str, Any] = await resp.json()
    assert "result" in body, body
    return body["result"]  # type: ignore[no-any-return]


async def start_task(http: aiohttp.ClientSession, server: Server, text: str) -> str:
    """SendMessage `text` without waiting for the task to end; its id."""
    result = await rpc(http, server, "SendMessage", {
        "message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                    "parts": [{"text": text}]},
        "configuration": {"returnImmediately": True}})
    return str(result["task"]["id"])


def subscribe(http: aiohttp.ClientSession, server: Server, task_id: str,
              last: str | None = None) -> Any:
    headers = {**HEADERS, **({"Last-Event-ID": last} if last else {})}
    return http.post(server.url + "/", headers=headers, json={
        "jsonrpc": "2.0", "id": 2, "method": "SubscribeToTask", "params": {"id": task_id}})


def what(data: dict[str, Any]) -> str:
    """An event, in short: its kind and its state or text."""
    result: dict[str, Any] = data["result"]
    if "statusUpdate" in result:
        status = result["statusUpdate"]["status"]
        text = status.get("message", {}).get("parts", [{}])[0].get("text", "")
        return f"status {status['state']} {text}".strip()
    if "artifactUpdate" in result:
        return "artifact " + str(result["artifactUpdate"]["artifact"]["parts"][0]["text"])
    return "task " + str(result["task"]["status"]["state"])


async def test_a_stream_on_one_replica_follows_a_task_another_runs(
        replicas: list[Server]) -> None:
    runner, watcher = replicas
    async with aiohttp.ClientSession() as http:
        task_id = await start_task(http, runner, "slow 2")
        async with subscribe(http, watcher, task_id) as resp:
            assert resp.status == 200
            events, _ = parse_sse(await asyncio.wait_for(resp.text(), 30))
        # The log, read back by the replica that ran it (a final task replays).
        async with subscribe(http, runner, task_id, last="1") as resp:
            logged, _ = parse_sse(await resp.text())
    live = events[1:]
    assert "task" in events[0].data["result"]  # the task as it stood, first
    ids = [int(e.id or 0) for e in live]
    assert ids == list(range(ids[0], ids[-1] + 1))
    assert [what(e.data) for e in live] == [what(e.data) for e in logged[-len(live):]]
    assert what(live[-1].data) == "status TASK_STATE_COMPLETED"
    assert "artifact echo: slow 2" in [what(e.data) for e in live]


async def test_a_stream_whose_replica_dies_resumes_on_another(
        replicas: list[Server]) -> None:
    runner, watcher = replicas
    async with aiohttp.ClientSession() as http:
        task_id = await start_task(http, runner, "slow 4")
        async with subscribe(http, watcher, task_id) as resp:
            head = b"".join([await asyncio.wait_for(resp.content.readuntil(b"\n\n"), 30)
                             for _ in range(2)])
            watcher.proc.kill()  # SIGKILL, its stream mid-way
            watcher.proc.wait()
        seen, _ = parse_sse(head.decode())
        last = seen[-1].id
        assert last is not None
        async with subscribe(http, runner, task_id, last=last) as resp:
            rest, _ = parse_sse(await asyncio.wait_for(resp.text(), 30))
        async with subscribe(http, runner, task_id, last="1") as resp:
            logged, _ = parse_sse(await resp.text())
    assert not any("task" in e.data["result"] for e in rest)  # a replay: no snapshot
    ids = [int(e.id or 0) for e in [seen[-1], *rest]]
    assert ids == list(range(ids[0], ids[0] + len(ids)))  # no gap, no duplicate at the seam
    assert [what(e.data) for e in [seen[-1], *rest]] == \
        [what(e.data) for e in logged if int(e.id or 0) >= ids[0]]
    assert what(rest[-1].data) == "status TASK_STATE_COMPLETED"


async def state_of(http: aiohttp.ClientSession, server: Server, task_id: str) -> dict[str, Any]:
    status: dict[str, Any] = (await rpc(http, server, "GetTask", {"id": task_id}))["status"]
    return status


async def test_a_survivor_takes_over_the_tasks_of_a_killed_replica(cluster: Cluster) -> None:
    doomed, survivor = await cluster.start("--lease", "1.5"), await cluster.start("--lease", "1.5")
    async with aiohttp.ClientSession() as http:
        orphan = await start_task(http, doomed, "slow 60")
        kept = await start_task(http, survivor, "slow 60")
        doomed.proc.kill()  # SIGKILL: it renews nothing more
        deadline = asyncio.get_running_loop().time() + 20
        while (status := await state_of(http, survivor, orphan))["state"] == "TASK_STATE_WORKING":
            assert asyncio.get_running_loop().time() < deadline, "the orphan was not taken over"
            await asyncio.sleep(0.2)
        assert status["state"] == "TASK_STATE_FAILED"
        assert "replica running this task stopped" in status["message"]["parts"][0]["text"]
        # A replica starting now claims expired leases only: the survivor's task runs on.
        await cluster.start("--lease", "1.5")
        assert (await state_of(http, survivor, kept))["state"] == "TASK_STATE_WORKING"
        await rpc(http, survivor, "CancelTask", {"id": kept})
        assert (await state_of(http, survivor, kept))["state"] == "TASK_STATE_CANCELED"


async def delivered(http: aiohttp.ClientSession, servers: list[Server]) -> int:
    """Push notifications the replicas say they delivered, all told."""
    total = 0
    for server in servers:
        total += await delivered_by(http, server.url)
    return total


async def delivered_by(http: aiohttp.ClientSession, url: str) -> int:
    """Push notifications the process `http` reaches at `url` says it delivered."""
    async with http.get(url + "/metrics") as resp:
        found = re.search(r'a2a_push_notifications_total\{outcome="delivered"\} (\d+)',
                          await resp.text())
    return int(found.group(1)) if found else 0


async def test_each_push_notification_goes_out_once_from_three_replicas(
        cluster: Cluster) -> None:
    hook = await start_webhook()
    hook.delay = 0.1  # each delivery is in flight a while: the others poll meanwhile
    flags = ("--allow-push-to", "127.0.0.1", "--allow-http-push")
    servers = [await cluster.start(*flags) for _ in range(3)]
    try:
        async with aiohttp.ClientSession() as http:
            result = await rpc(http, servers[0], "SendMessage", {
                "message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                            "parts": [{"text": "stream 10"}]},
                "configuration": {"taskPushNotificationConfig": {"url": hook.url("/h")}}})
            task_id = result["task"]["id"]
            await hook.wait_for("/h", 12)  # WORKING, 10 chunks, COMPLETED
            deadline = asyncio.get_running_loop().time() + 20
            # Until every request the receiver got is one a replica counted as done.
            while await delivered(http, servers) < len(hook.hits):
                assert asyncio.get_running_loop().time() < deadline
                await asyncio.sleep(0.1)
        keys = [h.headers["Idempotency-Key"] for h in hook.hits]
        assert keys == [f"{task_id}:{seq}" for seq in range(2, 14)]  # once each, in order
    finally:
        await hook.server.close()


async def test_cancel_on_one_replica_stops_the_run_on_another(
        replicas: list[Server], cluster: Cluster) -> None:
    runner, _ = replicas
    other = await cluster.start()  # a third: the task is not its, nor was it ever
    async with aiohttp.ClientSession() as http:
        task_id = await start_task(http, runner, "slow 60")
        canceled = await rpc(http, other, "CancelTask", {"id": task_id})
        assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
        assert (await state_of(http, runner, task_id))["state"] == "TASK_STATE_CANCELED"
        async with http.post(other.url + "/", headers=HEADERS, json={
                "jsonrpc": "2.0", "id": 3, "method": "CancelTask",
                "params": {"id": task_id}}) as resp:
            again = await resp.json()
    assert again["error"]["code"] == -32002  # TaskNotCancelable: it is final
    # The run itself was stopped where it ran (not overwritten by the other replica).
    # (Logged once the cancel is done, which the caller can see first.)
    await runner.logged(f"canceled task {task_id}: another replica was asked to")
    assert "ERROR" not in runner.log() + other.log()


async def test_an_answer_to_a_question_may_reach_another_replica(
        replicas: list[Server]) -> None:
    asker, answerer = replicas
    async with aiohttp.ClientSession() as http:
        first = await rpc(http, asker, "SendMessage", {"message": {
            "messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "ask"}]}})
        task = first["task"]
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        done = await rpc(http, answerer, "SendMessage", {"message": {
            "messageId": str(uuid.uuid4()), "role": "ROLE_USER", "taskId": task["id"],
            "contextId": task["contextId"], "parts": [{"text": "blue"}]}})
        assert done["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        again = await rpc(http, asker, "GetTask", {"id": task["id"]})
    assert again["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [m["parts"][0]["text"] for m in again["history"] if m["role"] == "ROLE_USER"] == [
        "ask", "blue"]


async def test_a_streamed_send_gets_every_event_through_redis(replicas: list[Server]) -> None:
    """The replica that runs the task streams it from Redis too: the run ends
    long before its last events come back from there."""
    runner = replicas[0]
    async with aiohttp.ClientSession() as http:
        for _ in range(3):
            async with http.post(runner.url + "/", headers=HEADERS, json={
                    "jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {
                        "message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                                    "parts": [{"text": "stream 30"}]}}}) as resp:
                events, _ = parse_sse(await asyncio.wait_for(resp.text(), 30))
            shown = [what(e.data) for e in events]
            assert shown[0] == "task TASK_STATE_SUBMITTED"
            assert shown[2:-1] == [f"artifact chunk {i}/30" for i in range(1, 31)]
            assert shown[-1] == "status TASK_STATE_COMPLETED"


async def test_one_message_id_sent_to_two_replicas_at_once_makes_one_task(
        replicas: list[Server]) -> None:
    async with aiohttp.ClientSession() as http:
        for _ in range(5):
            message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                       "parts": [{"text": "hello"}]}
            first, second = await asyncio.gather(*(
                rpc(http, server, "SendMessage", {"message": message}) for server in replicas))
            assert first["task"]["id"] == second["task"]["id"]
            assert {first["task"]["status"]["state"], second["task"]["status"]["state"]} == {
                "TASK_STATE_COMPLETED"}
    logs = replicas[0].log() + replicas[1].log()
    assert "recorded by another server first" in logs  # the race did happen, and was lost
    assert "ERROR" not in logs


async def test_a_follow_up_sent_to_another_replica_reaches_the_run(
        replicas: list[Server]) -> None:
    """As on one server: the message joins the running task's history, and the
    blocking send answers once the task settles."""
    runner, other = replicas
    async with aiohttp.ClientSession() as http:
        task_id = await start_task(http, runner, "slow 2")
        task = await rpc(http, runner, "GetTask", {"id": task_id})
        answer = await rpc(http, other, "SendMessage", {"message": {
            "messageId": str(uuid.uuid4()), "role": "ROLE_USER", "taskId": task_id,
            "contextId": task["contextId"], "parts": [{"text": "also this"}]}})
    done = answer["task"]
    assert done["id"] == task_id and done["status"]["state"] == "TASK_STATE_COMPLETED"
    users = [m["parts"][0]["text"] for m in done["history"] if m["role"] == "ROLE_USER"]
    assert users == ["slow 2", "also this"]
    assert [a["parts"][0]["text"] for a in done["artifacts"]] == ["echo: slow 2"]
    assert "ERROR" not in runner.log() + other.log()


async def test_a_stream_cut_on_one_replica_resumes_on_another_after_the_task_ended(
        replicas: list[Server]) -> None:
    """Cut after event 2 on one replica; the task ends; resumed on the other with
    that id: each later event once, in order, the one final state last."""
    runner, other = replicas
    async with aiohttp.ClientSession() as http:
        task_id = await start_task(http, runner, "slow 2")
        async with subscribe(http, runner, task_id) as resp:
            head = await asyncio.wait_for(resp.content.readuntil(b"\n\n"), 30)
        [snapshot], _ = parse_sse(head.decode())  # the task as it stood: the cut comes after it
        async with subscribe(http, other, task_id) as resp:  # until it ends, elsewhere
            await asyncio.wait_for(resp.text(), 30)
        async with subscribe(http, other, task_id, last=snapshot.id) as resp:
            rest, _ = parse_sse(await asyncio.wait_for(resp.text(), 30))
        async with subscribe(http, runner, task_id, last="0") as resp:
            logged, _ = parse_sse(await resp.text())
    last = int(snapshot.id or 0)
    assert [int(e.id or 0) for e in rest] == list(range(last + 1, len(logged) + 1))
    assert [what(e.data) for e in rest] == [what(e.data) for e in logged[last:]]
    assert [what(e.data) for e in rest].count("status TASK_STATE_COMPLETED") == 1
    assert what(rest[-1].data) == "status TASK_STATE_COMPLETED"
    assert not any("task" in e.data["result"] for e in rest)


async def test_replicas_serve_one_card_with_one_last_modified(cluster: Cluster) -> None:
    """Behind one address (the same public URLs) replicas publish the same card;
    its Last-Modified comes from the store they share, so a client's
    If-Modified-Since is answered 304 by whichever replica it reaches."""
    public = ("--public-url", "http://a2a.example:8080",
              "--grpc-public-address", "a2a.example:50051")
    first = await cluster.start(*public)
    async with aiohttp.ClientSession() as http:
        async with http.get(first.url + "/.well-known/agent-card.json") as resp:
            modified, etag = resp.headers["Last-Modified"], resp.headers["ETag"]
        second = await cluster.start(*public)
        async with http.get(second.url + "/.well-known/agent-card.json",
                            headers={"If-Modified-Since": modified}) as resp:
            assert resp.status == 304
            assert (resp.headers["Last-Modified"], resp.headers["ETag"]) == (modified, etag)


async def test_the_1_1_preview_across_replicas(cluster: Cluster) -> None:
    """A2A 1.1 draft: a GetTask long-polling on one replica answers when the run on
    another moves the task on (through Redis), and a follow-up sent to the
    replica that does not run the task is checked against its generation."""
    runner, poller = [await cluster.start("--a2a-1.1-preview") for _ in range(2)]
    v11 = {"A2A-Version": "1.1"}
    async with aiohttp.ClientSession() as http:
        task_id = await start_task(http, runner, "slow 3")
        async with http.get(f"{poller.url}/tasks/{task_id}", headers=v11) as resp:
            now = int((await resp.json())["generation"])
        assert now >= 2  # created, WORKING
        async with asyncio.timeout(20), http.get(  # the wait (30 s) outlasts the run (3 s)
                f"{poller.url}/tasks/{task_id}", params={"currentGeneration": str(now)},
                headers=v11) as resp:
            later = await resp.json()
        assert resp.status == 200 and int(later["generation"]) > now
        async with http.post(poller.url + "/message:send", headers=v11, json={
                "message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                            "taskId": task_id, "parts": [{"text": "more"}]},
                "configuration": {"ifGenerationMatch": "1"}}) as resp:
            refused = await resp.json()
        assert resp.status == 409, refused
        assert refused["error"]["details"][0]["reason"] == "TASK_GENERATION_MISMATCH"


async def test_a_stream_moves_to_another_replica_when_its_replica_drains(
        cluster: Cluster) -> None:
    """SIGTERM on the replica a stream is on: the balancer (a proxy here) stops
    sending it calls, the replica ends the stream with a retryable error after
    its notice, and our client resumes through the balancer on the other
    replica with Last-Event-ID. The run finishes on the draining replica
    within its grace; every event reaches the client once, in order."""
    balancer = await Proxy(0).start()
    url = f"http://127.0.0.1:{balancer.port}"
    draining = await cluster.start("--public-url", url, "--drain-notice", "1", "--grace", "20")
    other = await cluster.start("--public-url", url)
    balancer.target_port = draining.http_port
    texts: list[str] = []
    try:
        async with await A2AClient.connect(url, ClientOptions(prefer=["JSONRPC"])) as client:
            async for event in client.stream_text("slow 6"):
                if event.HasField("status_update") and \
                        event.status_update.status.HasField("message"):
                    texts.append(event.status_update.status.message.parts[0].text)
                    if len(texts) == 1:  # the run is going: stop the replica it is on
                        draining.proc.send_signal(signal.SIGTERM)
                        balancer.target_port = other.http_port  # /readyz said 503
                last = event
            task = await client.get_task(pb.GetTaskRequest(id=last.status_update.task_id))
    finally:
        await balancer.close()
    assert last.status_update.status.state == pb.TASK_STATE_COMPLETED
    said = [m.parts[0].text for m in task.history if m.role == pb.ROLE_AGENT]
    assert texts == said  # each status once, in order: none lost, none repeated
    assert len(said) >= 3
    assert await asyncio.wait_for(asyncio.to_thread(draining.proc.wait), 30) == 0
    assert "drained: 1 stream(s) ended" in draining.log()
    assert "every run finished" in draining.log()
