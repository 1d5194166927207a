"""The in-process event bus: every subscriber gets every event published after
it subscribed, in order; peek leaves an event queued, take and next remove it."""

from __future__ import annotations

import asyncio

from a2a_grpc.bus.local import LocalEventBus
from a2a_grpc.generated.a2a_pb2 import StreamResponse, Task


def event(n: int) -> StreamResponse:
    return StreamResponse(task=Task(id=f"t{n}"))


async def test_peek_take_and_next() -> None:
    bus = LocalEventBus()
    async with bus.subscribe("t") as sub:
        assert sub.peek() is None and sub.take() is None
        await bus.publish("t", 1, event(1))
        await bus.publish("t", 2, event(2))
        await bus.publish("other", 9, event(9))  # another task's: not ours
        head = sub.peek()
        assert head is not None and head.seq == 1 and sub.peek() is head  # still queued
        taken = sub.take()
        assert taken is head
        assert (await sub.next()).seq == 2
        assert sub.take() is None
        waiting = asyncio.create_task(sub.next())
        await asyncio.sleep(0)
        assert not waiting.done()
        await bus.publish("t", 3, event(3))
        assert (await asyncio.wait_for(waiting, 1)).payload.task.id == "t3"
    assert bus.subscriber_count("t") == 0


async def test_every_subscriber_gets_every_event_in_order() -> None:
    bus = LocalEventBus()
    async with bus.subscribe("t") as a, bus.subscribe("t") as b:
        assert bus.subscriber_count("t") == 2
        for n in range(1, 6):
            await bus.publish("t", n, event(n))
        await bus.publish_error("t", RuntimeError("store gone"))
        for sub in (a, b):
            seqs = [(await sub.next()).seq for _ in range(5)]
            assert seqs == [1, 2, 3, 4, 5]
            last = sub.take()
            assert last is not None and isinstance(last.error, RuntimeError)


class _Numbered:
    """An event with its number, as the runtime's journal entries carry them."""

    def __init__(self, seq: int) -> None:
        self.seq, self.event = seq, event(seq)


async def test_publish_many_is_publish_of_each_in_order() -> None:
    bus = LocalEventBus()
    await bus.publish_many("t", [_Numbered(1)])  # nobody subscribed: counted, kept nowhere
    async with bus.subscribe("t") as a, bus.subscribe("t") as b:
        await bus.publish_many("t", [_Numbered(n) for n in (2, 3, 4)])
        await bus.publish_many("other", [_Numbered(9)])
        for sub in (a, b):
            got = [(await sub.next()) for _ in range(3)]
            assert [(e.seq, e.payload.task.id) for e in got] == [(2, "t2"), (3, "t3"), (4, "t4")]
            assert sub.take() is None
    assert bus.published == 5
