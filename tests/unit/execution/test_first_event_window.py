"""A new stream counts as starting (busy agents yield at every event) from the
call until its transport asks for the second event: the first one is written
by then. Every way out releases the count exactly once."""

from __future__ import annotations

from a2a_grpc.agent import RequestContext, TaskEvents
from a2a_grpc.cards.card import card_for
from a2a_grpc.core import states
from a2a_grpc.core.call import CallContext
from a2a_grpc.core.errors import InvalidParamsError
from a2a_grpc.execution import turns as runtime
from a2a_grpc.handler.request_handler import RequestHandler
from tests.conftest import send_request
from tests.fakes import ScriptedAgent


async def script(ctx: RequestContext, ev: TaskEvents) -> None:
    if ctx.text == "refuse":
        raise InvalidParamsError("refused before any event")
    await ev.working()
    await ev.complete()


def handler() -> RequestHandler:
    agent = ScriptedAgent(script)
    return RequestHandler(agent, card_for(agent))


async def test_held_until_the_transport_asks_for_the_second_event() -> None:
    h, before = handler(), runtime._starting.count
    stream = await h.send_streaming_message(send_request("go"), CallContext())
    assert runtime._starting.count == before + 1
    await stream.__anext__()  # the first event, in the transport's hands, not yet written
    assert runtime._starting.count == before + 1
    await stream.__anext__()  # asking for more: the first one is out
    assert runtime._starting.count == before
    await stream.__anext__()
    await stream.aclose()
    assert runtime._starting.count == before
    await h.close()


async def test_released_when_the_stream_closes_early_or_the_call_fails() -> None:
    h, before = handler(), runtime._starting.count
    stream = await h.send_streaming_message(send_request("go"), CallContext())
    await stream.aclose()  # the client went away before any write
    assert runtime._starting.count == before
    try:
        await h.send_streaming_message(send_request("refuse"), CallContext())
        raise AssertionError("the call should fail")
    except InvalidParamsError:
        pass
    assert runtime._starting.count == before
    await h.close()


async def test_a_retried_stream_does_not_hold_the_count() -> None:
    h, before = handler(), runtime._starting.count
    req = send_request("go")
    first = await h.send_streaming_message(req, CallContext())
    assert [e async for e in first][-1].status_update.status.state == states.COMPLETED
    again = await h.send_streaming_message(req, CallContext())  # same messageId
    assert runtime._starting.count == before
    assert [e.task.status.state async for e in again] == [states.COMPLETED]  # the task as it is
    await h.close()
