"""SSE on the wire: ids, keep-alives, in-band errors, clients that vanish."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from email.utils import format_datetime, parsedate_to_datetime

import aiohttp
import pytest

from a2a_grpc.agent import RequestContext, TaskEvents
from a2a_grpc.bridge import BridgeConfig
from a2a_grpc.execution import turns as runtime
from a2a_grpc.generated import a2a_pb2 as pb
from tests.bindings import parse_sse
from tests.conftest import StackFactory, send_request, user_message
from tests.fakes import FullDiskStore, Gate, ScriptedAgent

MSG = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "stream 3"}]}
RPC = {"jsonrpc": "2.0", "id": 7, "method": "SendStreamingMessage", "params": {"message": MSG}}


async def read_all(resp: aiohttp.ClientResponse) -> str:
    return await resp.text()


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_event_ids_are_the_task_log_sequence(stack: StackFactory, binding: str) -> None:
    s = await stack()
    if binding == "jsonrpc":
        resp = await s.session.post(s.base_url + "/", json=RPC)
    else:
        resp = await s.session.post(s.base_url + "/message:stream", json={"message": MSG})
    async with resp:
        assert resp.headers["Content-Type"].startswith("text/event-stream")
        assert resp.headers["Cache-Control"] == "no-cache"
        events, _ = parse_sse(await resp.text())
    assert [e.id for e in events] == ["1", "2", "3", "4", "5", "6"]
    if binding == "jsonrpc":
        assert all(e.data["jsonrpc"] == "2.0" and e.data["id"] == 7 for e in events)


async def test_subscribe_ids_continue_the_log(stack: StackFactory) -> None:
    s = await stack()
    asked = (await s.binding("grpc").call("SendMessage", send_request("ask"))).task  # type: ignore[attr-defined]
    async with s.session.get(f"{s.base_url}/tasks/{asked.id}:subscribe") as resp:
        first = await resp.content.readuntil(b"\n\n")
        # The snapshot carries the sequence number of the last event it includes.
        assert first.startswith(b"id: 2\n")
        await s.binding("grpc").call("SendMessage", send_request("yes", task_id=asked.id))
        events, _ = parse_sse(first.decode() + await resp.text())
    assert [e.id for e in events] == ["2", "3", "4", "5", "6"]
    assert events[-1].data["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_quiet_streams_get_keepalives(stack: StackFactory, binding: str) -> None:
    gate = Gate()

    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        await ev.working()
        await gate.wait()
        await ev.complete()

    s = await stack(ScriptedAgent(script), config=BridgeConfig(keepalive=0.1))
    url, body = (s.base_url + "/", RPC) if binding == "jsonrpc" else (
        s.base_url + "/message:stream", {"message": MSG})
    timeout = aiohttp.ClientTimeout(sock_read=1)  # far shorter than the quiet spell
    async with s.session.post(url, json=body, timeout=timeout) as resp:
        await asyncio.sleep(0.6)
        gate.open()
        text = await resp.text()
    events, comments = parse_sse(text)
    assert len(comments) >= 3 and all(c == ": keep-alive" for c in comments)
    assert len(events) == 3
    # A comment line alone: a blank line after it would end an (empty) event for
    # parsers that keep the last event id (httpx-sse, under the official clients).
    assert ": keep-alive\n\n" not in text and "\n\n\n" not in text
    blocks = [b for b in text.split("\n\n") if b]
    assert all("data: " in b for b in blocks)  # every event that ends has data


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_errors_after_the_start_are_the_last_event(stack: StackFactory,
                                                        binding: str) -> None:
    gate = Gate()

    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        await ev.working()
        await gate.wait()
        await ev.complete()

    store = FullDiskStore()
    s = await stack(ScriptedAgent(script), store=store)

    url, body = (s.base_url + "/", RPC) if binding == "jsonrpc" else (
        s.base_url + "/message:stream", {"message": MSG})
    async with s.session.post(url, json=body) as resp:
        await resp.content.readuntil(b"\n\n")
        await resp.content.readuntil(b"\n\n")
        store.writes_fail = True
        gate.open()
        events, _ = parse_sse(await resp.text())
    last = events[-1]
    if binding == "jsonrpc":
        assert last.data["id"] == 7 and last.data["error"]["code"] == -32603
        assert last.data["error"]["message"] == "Internal error"
    else:
        assert last.name == "error"
        assert last.data["error"]["status"] == "INTERNAL"


async def test_a_vanished_client_does_not_block_the_task_or_other_streams(
    stack: StackFactory,
) -> None:
    gate = Gate()

    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        await ev.working()
        await gate.wait()
        for i in range(50):
            await ev.artifact(f"part {i}", artifact_id="a", append=i > 0)
        await ev.complete()

    s = await stack(ScriptedAgent(script), config=BridgeConfig(keepalive=0.05))
    task = (await s.binding("grpc").call("SendMessage", pb.SendMessageRequest(
        message=user_message("go"),
        configuration=pb.SendMessageConfiguration(return_immediately=True)))).task  # type: ignore[attr-defined]
    leaving = aiohttp.ClientSession()
    resp = await leaving.get(f"{s.base_url}/tasks/{task.id}:subscribe")
    await resp.content.readuntil(b"\n\n")
    staying = asyncio.ensure_future(
        s.binding("rest").stream("SubscribeToTask", pb.SubscribeToTaskRequest(id=task.id)))
    await asyncio.sleep(0.1)
    resp.close()
    await leaving.close()  # the first client is gone, mid-stream
    gate.open()
    events = await asyncio.wait_for(staying, 10)
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    assert len([e for e in events if e.HasField("artifact_update")]) == 50
    for _ in range(100):
        if s.handler.bus.subscriber_count(task.id) == 0:
            break
        await asyncio.sleep(0.02)
    assert s.handler.bus.subscriber_count(task.id) == 0


async def test_card(stack: StackFactory) -> None:
    s = await stack()
    async with s.session.get(s.base_url + "/.well-known/agent-card.json") as resp:
        assert resp.status == 200 and resp.content_type == "application/json"
        etag = resp.headers["ETag"]
        assert "max-age" in resp.headers["Cache-Control"]
        card = json.loads(await resp.text())
    assert card["name"] == "a2a-grpc demo agent"
    assert card["capabilities"]["streaming"] is True
    async with s.session.get(s.base_url + "/.well-known/agent-card.json",
                             headers={"If-None-Match": etag}) as resp:
        assert resp.status == 304 and resp.headers["ETag"] == etag
    async with s.session.get(s.base_url + "/.well-known/agent-card.json",
                             headers={"If-None-Match": '"stale"'}) as resp:
        assert resp.status == 200


async def test_first_event_goes_out_while_the_agent_still_works(stack: StackFactory) -> None:
    """An agent that emits without awaiting anything else does not run to its end
    before its stream sends the first event. It gives the loop back every
    quantum (execution/turns.py, about a hundred chunks here); the client
    shares that loop, so it reads the first event a quantum or two into the
    run, never near its end (half of it allows ten quanta)."""
    produced = 0
    chunks = 2000

    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        nonlocal produced
        await ev.working()
        for i in range(chunks):
            produced += 1
            await ev.artifact(f"chunk {i}", artifact_id="a", append=i > 0)
        await ev.complete()

    s = await stack(ScriptedAgent(script))
    async with s.session.post(s.base_url + "/message:stream", json={"message": MSG}) as resp:
        await resp.content.readuntil(b"\n\n")
        at_first_event = produced
        events, _ = parse_sse(await resp.text())
    assert at_first_event < chunks // 2, (
        f"{at_first_event} of {chunks} chunks were made before the first event")
    assert len(events) == chunks + 2  # every chunk still arrives, then COMPLETED
    assert events[-1].data["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_a_long_silent_agent_does_not_hold_other_calls(stack: StackFactory) -> None:
    """No stream watches this task, yet other requests are served while it runs."""
    done_at_answer: list[int] = []
    produced = 0
    begun = asyncio.Event()

    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        nonlocal produced
        await ev.working()
        begun.set()
        for i in range(3000):
            produced += 1
            await ev.artifact(f"chunk {i}", artifact_id="a", append=i > 0)
        await ev.complete()

    s = await stack(ScriptedAgent(script))
    rest = s.binding("rest")
    long = asyncio.create_task(rest.call("SendMessage", send_request("go")))
    await begun.wait()
    async with s.session.get(s.base_url + "/.well-known/agent-card.json") as resp:
        assert resp.status == 200
        done_at_answer.append(produced)
    result = await long
    assert result.task.status.state == pb.TASK_STATE_COMPLETED  # type: ignore[attr-defined]
    assert done_at_answer[0] < 3000, "the card was served only after the agent had finished"


async def test_busy_agents_yield_at_each_event_while_a_stream_starts(stack: StackFactory) -> None:
    """While a stream waits for its first event, an agent that never awaits
    gives the loop back after every event, not only after its time quantum:
    the new stream's few loop turns don't each wait behind it."""
    ticks = 0
    turned: list[bool] = []  # per busy event made while a stream was starting
    gate = Gate()

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        if ctx.text == "late":
            await gate.wait()  # its stream stays starting until the gate opens
            await ev.complete()
            return
        await ev.working()
        for i in range(20_000):
            before = ticks
            await ev.artifact(f"chunk {i}", artifact_id="a", append=i > 0)
            if runtime._starting.count:  # unchanged unless the loop turned
                turned.append(ticks != before)
                if len(turned) == 300:
                    gate.open()
            elif turned:
                break  # the late stream has its first event
        await ev.complete()

    s = await stack(ScriptedAgent(script))
    ticking = asyncio.create_task(ticker())
    try:
        busy = asyncio.create_task(s.binding("rest").call("SendMessage", send_request("go")))
        late = {"message": {**MSG, "messageId": "late", "parts": [{"text": "late"}]}}
        async with s.session.post(s.base_url + "/message:stream", json=late) as resp:
            events, _ = parse_sse(await resp.text())
        result = await busy
    finally:
        ticking.cancel()
    assert events[-1].data["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert result.task.status.state == pb.TASK_STATE_COMPLETED  # type: ignore[attr-defined]
    assert len(turned) >= 300, "the late stream was never seen starting"
    assert all(turned), f"{turned.count(False)} busy events kept the loop from a starting stream"


async def test_card_last_modified_and_if_modified_since(stack: StackFactory) -> None:
    s = await stack()
    url = s.base_url + "/.well-known/agent-card.json"
    async with s.session.get(url) as resp:
        modified, etag = resp.headers["Last-Modified"], resp.headers["ETag"]
    when = parsedate_to_datetime(modified)
    later = format_datetime(when + timedelta(seconds=1), usegmt=True)
    earlier = format_datetime(when - timedelta(seconds=1), usegmt=True)
    cases = [({"If-Modified-Since": modified}, 304), ({"If-Modified-Since": later}, 304),
             ({"If-Modified-Since": earlier}, 200), ({"If-Modified-Since": "yesterday"}, 200),
             # If-None-Match wins when both are there (RFC 9110 §13.2.2)
             ({"If-None-Match": '"stale"', "If-Modified-Since": later}, 200),
             ({"If-None-Match": etag, "If-Modified-Since": earlier}, 304)]
    for headers, status in cases:
        async with s.session.get(url, headers=headers) as resp:
            assert resp.status == status, headers
            assert resp.headers["Last-Modified"] == modified
