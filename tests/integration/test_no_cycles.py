"""A finished call leaves no reference cycle of ours behind, in the handler
and over the wire (the faces keep a request's call context beside it).

Each object in a cycle outlives its call until the cyclic garbage collector
finds it, and every collection walks all the young objects: a task actor that
held its journal holding the actor's methods made each send leave a dozen
such objects (docs/benchmarks.md: 2% of a send). Sends (blocking and not),
a stream and a follow-up, on the memory store and on SQLite (whose writes go
through the journal), are run with the collector off and told to keep what
it finds, so that anything of ours it would have freed is counted.
"""

from __future__ import annotations

import asyncio
import gc
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from multidict import CIMultiDict

from a2a_grpc.bridge.calls import call_context
from a2a_grpc.bridge.face import Incoming
from a2a_grpc.core.call import CallContext
from a2a_grpc.demos.demo import DemoAgent, demo_card
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.handler.request_handler import RequestHandler
from tests.conftest import StackFactory, send_request
from tests.stores import store_maker

CTX = CallContext.from_headers({"a2a-version": "1.0"})


@pytest.fixture
def garbage() -> Iterator[list[object]]:
    """What the cyclic collector would have freed while the test ran."""
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield gc.garbage
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def ours(found: list[object]) -> Counter[str]:
    """Objects of ours, and the aiohttp requests our face answered."""
    return Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in found
                   if type(o).__module__.startswith(("a2a_grpc", "aiohttp.web_request")))


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_calls_leave_no_cycles(kind: str, tmp_path: Path,
                                     garbage: list[object]) -> None:
    async with store_maker(kind, tmp_path) as make:
        handler = RequestHandler(DemoAgent(), demo_card(), store=await make())
        await handler.send_message(send_request("warm up"), CTX)
        gc.collect()
        gc.garbage.clear()  # what start-up left: not the calls' doing

        for _ in range(20):
            answer = await handler.send_message(send_request("hello"), CTX)
            assert answer.task.status.state == pb.TASK_STATE_COMPLETED
        task = (await handler.send_message(send_request("ask"), CTX)).task
        assert task.status.state == pb.TASK_STATE_INPUT_REQUIRED
        follow = send_request("42", task_id=task.id, context_id=task.context_id)
        assert (await handler.send_message(follow, CTX)).task.status.state == \
            pb.TASK_STATE_COMPLETED
        quick = send_request("hello")
        quick.configuration.return_immediately = True
        await handler.send_message(quick, CTX)
        events = [e async for e in await handler.send_streaming_message(
            send_request("stream 5"), CTX)]
        assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
        # The runs end on their own (a stream's last event may come first): closing
        # would cancel them, and a cancellation's traceback is a cycle of its own.
        await asyncio.gather(*(t for t in asyncio.all_tasks()
                               if t.get_name().startswith("a2a-run-")))
        await handler.close()

    gc.collect()
    assert not ours(garbage), f"left to the cyclic collector: {ours(garbage)}"


@pytest.mark.parametrize("binding", ["jsonrpc", "rest", "grpc"])
async def test_calls_over_the_wire_leave_no_cycles(binding: str, stack: StackFactory,
                                                   garbage: list[object]) -> None:
    """A request whose call context held the request itself (to read the client's
    address when asked) made every call's objects, aiohttp's request among them,
    a cycle: counted as it was, about 3% of a JSON-RPC send's instructions."""
    s = await stack(observed=True)
    client = s.binding(binding, {"A2A-Extensions": "urn:example:none"})
    await client.call("SendMessage", send_request("warm up"))
    gc.collect()
    gc.garbage.clear()

    for _ in range(10):
        answer = await client.call("SendMessage", send_request("hello"))
        assert answer.task.status.state == pb.TASK_STATE_COMPLETED  # type: ignore[attr-defined]
        got = await client.call("GetTask", pb.GetTaskRequest(id=answer.task.id))  # type: ignore[attr-defined]
        assert got.status.state == pb.TASK_STATE_COMPLETED  # type: ignore[attr-defined]
    events = await client.stream("SendStreamingMessage", send_request("stream 5"))
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED

    gc.collect()
    assert not ours(garbage), f"left to the cyclic collector: {ours(garbage)}"


def test_an_asgi_request_and_its_call_context_make_no_cycle(garbage: list[object]) -> None:
    """The ASGI face's requests (an address given as it is, not read when asked)."""
    async def read() -> bytes:
        return b"{}"

    request = Incoming("POST", "/", CIMultiDict({"A2A-Version": "1.0"}), read,
                       remote="192.0.2.7", secure=True, peer=lambda: "client")
    ctx = call_context(request)
    assert ctx.remote is not None and ctx.remote() == "192.0.2.7"
    assert ctx.peer is not None and ctx.peer() == "client"
    del request, ctx
    gc.collect()
    assert not ours(garbage), f"left to the cyclic collector: {ours(garbage)}"
