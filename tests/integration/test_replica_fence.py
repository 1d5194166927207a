"""A replica that lost its lease never writes the task again: hung past its
lease (SIGSTOP, then SIGCONT), or cut off from the store and back. Real
`serve` processes on PostgreSQL and Redis; the agent keeps emitting after
the survivor settled the task, and the task stays as the survivor left it:
in the store, on every replica's GetTask, on streams and in push deliveries."""

from __future__ import annotations

import asyncio
import signal
import uuid
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from tests.bindings import parse_sse
from tests.integration.test_replicas import HEADERS, Cluster, cluster, rpc, subscribe, what
from tests.processes import Server, start_server
from tests.proxy import Proxy
from tests.webhook import Webhook, start_webhook

__all__ = ["cluster"]  # the fixture, shared with test_replicas
FLAGS = ("--lease", "1", "--agent", "tests.agents:PacedAgent",
         "--allow-push-to", "127.0.0.1", "--allow-http-push")
ORPHANED = "The replica running this task stopped; send the request again."


async def start_tick(http: aiohttp.ClientSession, server: Server, hook: Webhook) -> str:
    """`tick 4 2` on `server` (WORKING, a note every 2 s, then the echo), pushed to
    the webhook; its id, once its first event is stored."""
    result = await rpc(http, server, "SendMessage", {
        "message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                    "parts": [{"text": "tick 4 2"}]},
        "configuration": {"returnImmediately": True,
                          "taskPushNotificationConfig": {"url": hook.url("/h")}}})
    return str(result["task"]["id"])


async def opened(http: aiohttp.ClientSession, server: Server, task_id: str) -> Any:
    """A SubscribeToTask stream, its first event (the task) read."""
    resp = await subscribe(http, server, task_id).__aenter__()
    assert resp.status == 200
    await asyncio.wait_for(resp.content.readuntil(b"\n\n"), 30)
    return resp


async def rest_of(resp: Any) -> list[str]:
    """What is left of a stream, to its end, in short."""
    try:
        events, _ = parse_sse((await asyncio.wait_for(resp.content.read(), 60)).decode())
    finally:
        resp.release()
    return [what(e.data) for e in events]


async def check_left_as_failed(http: aiohttp.ClientSession, servers: list[Server],
                               task_id: str, hook: Webhook) -> None:
    """The task as the survivor left it, everywhere, and nothing after it."""
    for server in servers:
        task = await rpc(http, server, "GetTask", {"id": task_id})
        assert task["status"]["state"] == "TASK_STATE_FAILED", server.url
        assert task["status"]["message"]["parts"][0]["text"] == ORPHANED
        assert not task.get("artifacts")  # the late echo was never written
        async with subscribe(http, server, task_id, last="0") as resp:
            logged, _ = parse_sse(await resp.text())
        shown = [what(e.data) for e in logged]
        assert shown[-1] == f"status TASK_STATE_FAILED {ORPHANED}", shown
        assert [int(e.id or 0) for e in logged] == list(range(1, len(logged) + 1))
        assert not any(s.startswith("artifact") for s in shown)
    failed = await hook_event(hook, "TASK_STATE_FAILED")
    late = [h for h in hook.at("/h") if h.at > failed
            or "COMPLETED" in h.body.decode() or "artifactUpdate" in h.body.decode()]
    assert late == []  # no notification of a refused event


async def hook_event(hook: Webhook, state: str) -> float:
    """When the webhook got the notification of `state` (waiting for it)."""
    async with asyncio.timeout(20), hook.arrived:
        await hook.arrived.wait_for(lambda: any(state in h.body.decode() for h in hook.at("/h")))
    return max(h.at for h in hook.at("/h") if state in h.body.decode())


async def test_a_replica_hung_past_its_lease_does_not_write_the_task_again(
        cluster: Cluster) -> None:
    hook = await start_webhook()
    hung, survivor = await cluster.start(*FLAGS), await cluster.start(*FLAGS)
    try:
        async with aiohttp.ClientSession() as http:
            task_id = await start_tick(http, hung, hook)
            on_hung, on_survivor = (await opened(http, hung, task_id),
                                    await opened(http, survivor, task_id))
            hung.signal_all(signal.SIGSTOP)  # and Envoy, on pyvoy
            try:  # the survivor takes the task over and fails it
                seen_on_survivor = await rest_of(on_survivor)
            finally:
                hung.signal_all(signal.SIGCONT)
            assert seen_on_survivor[-1] == f"status TASK_STATE_FAILED {ORPHANED}"
            # Awake, its agent goes on: its next event is refused, and it says so.
            await hung.logged(f"lost task {task_id}: another replica took it over")
            seen_on_hung = await rest_of(on_hung)  # follows the task as the survivor left it
            assert seen_on_hung[-1] == f"status TASK_STATE_FAILED {ORPHANED}", seen_on_hung
            assert not any(s.startswith("artifact") or "COMPLETED" in s for s in seen_on_hung)
            await check_left_as_failed(http, [hung, survivor], task_id, hook)
            # It goes on serving, and runs new tasks to their end.
            done = await rpc(http, hung, "SendMessage", {"message": {
                "messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "hi"}]}})
            assert done["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    finally:
        await hook.server.close()
    assert "Traceback" not in hung.log() + survivor.log()


async def test_a_replica_cut_off_from_the_store_does_not_write_the_task_again(
        cluster: Cluster) -> None:
    hook = await start_webhook()
    parts = urlsplit(cluster.store)
    proxy = await Proxy(parts.port or 5432).start()
    through = urlunsplit(parts._replace(netloc=f"{parts.username}@127.0.0.1:{proxy.port}"))
    cut_off = await start_server("serve", "--store", through, "--bus", cluster.bus, *FLAGS)
    cluster.servers.append(cut_off)
    survivor = await cluster.start(*FLAGS)
    try:
        async with aiohttp.ClientSession() as http:
            task_id = await start_tick(http, cut_off, hook)
            on_survivor = await opened(http, survivor, task_id)
            proxy.drop_next = 10**9  # PostgreSQL is gone for this replica: no new connection
            proxy.cut()  # and none of those it has
            try:
                seen_on_survivor = await rest_of(on_survivor)
            finally:
                proxy.drop_next = 0  # back
            assert seen_on_survivor[-1] == f"status TASK_STATE_FAILED {ORPHANED}"
            await cut_off.logged(f"lost task {task_id}")
            await check_left_as_failed(http, [cut_off, survivor], task_id, hook)
            done = await rpc(http, cut_off, "SendMessage", {"message": {
                "messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "hi"}]}})
            assert done["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    finally:
        await hook.server.close()
        await proxy.close()
    assert HEADERS  # (the replicas' tests' headers: A2A-Version 1.0 on every call)


async def test_a_task_canceled_elsewhere_while_its_replica_hung_stays_canceled(
        cluster: Cluster) -> None:
    """No takeover (a long lease): the hung replica does not answer the cancel, so
    the replica asked cancels the task itself; awake, the hung one's agent goes
    on, and its events are refused: the task is final."""
    flags = ("--lease", "60", "--agent", "tests.agents:PacedAgent")
    hung, other = await cluster.start(*flags), await cluster.start(*flags)
    async with aiohttp.ClientSession() as http:
        result = await rpc(http, hung, "SendMessage", {
            "message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                        "parts": [{"text": "tick 4 1"}]},
            "configuration": {"returnImmediately": True}})
        task_id = result["task"]["id"]
        hung.signal_all(signal.SIGSTOP)  # and Envoy, on pyvoy
        try:
            canceled = await rpc(http, other, "CancelTask", {"id": task_id})
        finally:
            hung.signal_all(signal.SIGCONT)
        assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
        await hung.logged(f"lost task {task_id}: it is canceled: a final task takes "
                                 "no more events")
        for server in (hung, other):
            assert (await rpc(http, server, "GetTask", {"id": task_id}))["status"]["state"] \
                == "TASK_STATE_CANCELED"
            async with subscribe(http, server, task_id, last="0") as resp:
                logged, _ = parse_sse(await resp.text())
            assert what(logged[-1].data) == "status TASK_STATE_CANCELED The task was canceled."
            assert [what(e.data) for e in logged].count(
                "status TASK_STATE_CANCELED The task was canceled.") == 1
    assert "Traceback" not in hung.log() + other.log()
