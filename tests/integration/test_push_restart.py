"""Pending notifications survive a crash: a real server on SQLite, SIGKILLed mid-retry."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import aiohttp

from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated.a2a_pb2_grpc import A2AServiceStub
from a2a_grpc.push.receiver import PushReceiver
from tests.conftest import user_message
from tests.processes import Server, reap, start_server, wait_serving
from tests.webhook import start_webhook


async def start(db: Path, keys: Path) -> Server:
    return await start_server("serve", "--store", f"sqlite:///{db}", "--push-keys", str(keys),
                              "--allow-push-to", "127.0.0.1", "--allow-http-push",
                              "--push-attempts", "100", "--push-backoff", "0.2", "--grace", "1")


async def test_pending_deliveries_resume_after_a_crash(tmp_path: Path) -> None:
    hook = await start_webhook()
    url = hook.url("/h")
    hook.answer("/h", *([503] * 1000))  # down until we say otherwise
    db, keys = tmp_path / "t.db", tmp_path / "keys"
    server = await start(db, keys)
    proc = server.proc
    try:
        channel = await wait_serving(server.grpc_port, proc)
        stub = A2AServiceStub(channel)
        task = (await stub.SendMessage(pb.SendMessageRequest(
            message=user_message("stream 2"), configuration=pb.SendMessageConfiguration(
                task_push_notification_config=pb.TaskPushNotificationConfig(url=url))))).task
        await hook.wait_for("/h", 2)  # failing, being retried
        await channel.close()
        proc.send_signal(signal.SIGKILL)
        await asyncio.to_thread(proc.wait, 20)
    finally:
        reap(proc)
    hook.script["/h"].clear()  # the receiver is back
    before = len(hook.hits)
    server = await start(db, keys)
    proc, base = server.proc, server.url
    try:
        for _ in range(200):
            keys_seen = [h.headers["Idempotency-Key"] for h in hook.hits[before:]]
            if len(set(keys_seen)) >= 4:
                break
            await asyncio.sleep(0.05)
        assert keys_seen == [f"{task.id}:{seq}" for seq in range(2, 6)]  # all, in order
        async with aiohttp.ClientSession() as session:
            async with session.get(base + "/.well-known/agent-card.json") as resp:
                card = await resp.json()
            signed = [x for x in card["capabilities"]["extensions"]
                      if x["uri"] == "urn:a2a-grpc:extension:signed-push:v1"]
            jwks_url = signed[0]["params"]["jwksUrl"]
            assert jwks_url == base + "/.well-known/jwks.json"
            receiver = PushReceiver(audience=url, jwks_url=jwks_url, issuer=base,
                                    session=session)
            last = hook.hits[-1]
            event = await receiver.verify(last.headers, last.body)
            async with session.get(base + "/metrics") as resp:
                metrics = await resp.text()
            assert 'a2a_push_notifications_total{outcome="delivered"} 4' in metrics
        assert event.status_update.status.state == pb.TASK_STATE_COMPLETED
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.to_thread(proc.wait, 20)
        reap(proc)
        await hook.server.close()


async def test_dead_letters_are_listed_by_the_cli(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    from a2a_grpc.stores import Scope
    from a2a_grpc.stores.sqlite import SqliteTaskStore
    from tests.processes import ROOT

    store = SqliteTaskStore(tmp_path / "t.db")
    await store.open()
    t = pb.Task(id="t1", context_id="c", status=pb.TaskStatus(state=pb.TASK_STATE_WORKING))
    scope = Scope("acme", "")
    await store.save_push_config(scope, pb.TaskPushNotificationConfig(
        task_id="t1", id="cfg", url="https://hooks.example.com/x"))
    await store.append(scope, t, 1, pb.StreamResponse(task=t), notify=True)
    [d] = await store.due_deliveries(2**62, 10)
    await store.dead_letter(d.id, 3, "HTTP 410")
    await store.close()
    command = [sys.executable, "-m", "a2a_grpc", "dead-letters", "--store",
               f"sqlite:///{tmp_path / 't.db'}"]
    done = await asyncio.to_thread(subprocess.run, command, cwd=ROOT, capture_output=True,
                                   text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line) for line in done.stdout.splitlines()] == [{
        "tenant": "acme", "owner": "", "taskId": "t1", "configId": "cfg", "event": 1,
        "attempts": 3, "error": "HTTP 410"}]
