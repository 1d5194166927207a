"""The Redis Streams event bus (`--bus redis://`), on the Redis on loopback:
two bus objects stand for two replicas sharing one Redis."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from a2a_grpc.bus.redis import BLOCK_MS, RedisEventBus
from a2a_grpc.bus.redis_publish import IDLE_S, LINGER_S
from a2a_grpc.core.errors import TaskNotCancelableError, UnavailableError
from a2a_grpc.generated.a2a_pb2 import TASK_STATE_COMPLETED, TASK_STATE_WORKING, StreamResponse
from a2a_grpc.stores import StoreUnavailableError
from tests.processes import unused_port
from tests.proxy import Proxy
from tests.redis_bus import REDIS, bus_url, drop_prefix, redis_port, redis_prefix


@pytest.fixture
async def prefix() -> AsyncIterator[str]:
    name = await redis_prefix()
    yield name
    await drop_prefix(name)


@pytest.fixture
async def pair(prefix: str) -> AsyncIterator[tuple[RedisEventBus, RedisEventBus]]:
    a, b = RedisEventBus(bus_url(prefix)), RedisEventBus(bus_url(prefix))
    await a.open()
    await b.open()
    yield a, b
    await a.close()
    await b.close()


def status(n: int, state: int = TASK_STATE_WORKING) -> StreamResponse:
    event = StreamResponse()
    event.status_update.task_id = "t1"
    event.status_update.status.state = state  # type: ignore[assignment]
    event.status_update.status.message.parts.add().text = f"note {n}"
    return event


def note(event: StreamResponse) -> str:
    return event.status_update.status.message.parts[0].text


async def test_events_reach_a_subscriber_on_another_replica_in_order(pair: tuple[
        RedisEventBus, RedisEventBus]) -> None:
    a, b = pair
    async with b.subscribe("t1") as sub:
        assert (b.subscriber_count("t1"), a.subscriber_count("t1")) == (1, 0)
        for seq in range(1, 51):
            await a.publish("t1", seq, status(seq))
        got = [await asyncio.wait_for(sub.next(), 5) for _ in range(50)]
    assert [e.seq for e in got] == list(range(1, 51))
    assert [note(e.payload) for e in got] == [f"note {n}" for n in range(1, 51)]


class _Numbered:
    def __init__(self, seq: int) -> None:
        self.seq, self.event = seq, status(seq)


async def test_a_burst_published_at_once_arrives_as_its_events(pair: tuple[
        RedisEventBus, RedisEventBus]) -> None:
    a, b = pair
    async with b.subscribe("t1") as sub:
        await a.publish_many("t1", [_Numbered(seq) for seq in range(1, 6)])
        await a.publish_many("t1", [_Numbered(6)])
        got = [await asyncio.wait_for(sub.next(), 5) for _ in range(6)]
    assert [e.seq for e in got] == list(range(1, 7))
    assert [note(e.payload) for e in got] == [f"note {n}" for n in range(1, 7)]
    assert a.published == 6
    assert b.subscriber_count("t1") == 0


async def test_a_subscriber_gets_what_is_published_after_it_subscribed(pair: tuple[
        RedisEventBus, RedisEventBus]) -> None:
    a, b = pair
    for seq in (1, 2, 3):
        await a.publish("t1", seq, status(seq))
    await a.flush()  # they reached Redis (publish queues; a burst is one pipeline)
    async with b.subscribe("t1") as sub, a.subscribe("t1") as own:
        await a.publish("t1", 4, status(4))
        await a.publish("t1", 5, status(5))
        for s in (sub, own):  # the publisher's own process reads it from Redis too
            assert [(await asyncio.wait_for(s.next(), 5)).seq for _ in range(2)] == [4, 5]
        assert sub.peek() is None


async def test_a_gap_in_the_sequence_ends_the_stream_with_a_retryable_error(pair: tuple[
        RedisEventBus, RedisEventBus]) -> None:
    a, b = pair
    async with b.subscribe("t1") as sub:
        for seq in (1, 2, 5):  # 3 and 4 never reached the bus
            await a.publish("t1", seq, status(seq))
        assert [(await asyncio.wait_for(sub.next(), 5)).seq for _ in range(2)] == [1, 2]
        ended = await asyncio.wait_for(sub.next(), 5)
    assert isinstance(ended.error, UnavailableError)
    assert ended.error.metadata == {"taskId": "t1", "lastEventId": "2"}
    assert "events 3-4 did not reach the event bus" in str(ended.error)


async def test_an_error_ends_the_streams_of_every_replica(pair: tuple[
        RedisEventBus, RedisEventBus]) -> None:
    a, b = pair
    async with a.subscribe("t1") as here, b.subscribe("t1") as there:
        await a.publish("t1", 1, status(1))
        await a.publish_error("t1", StoreUnavailableError("the disk is full"))
        for sub in (here, there):
            assert (await asyncio.wait_for(sub.next(), 5)).seq == 1
            ended = await asyncio.wait_for(sub.next(), 5)
            assert isinstance(ended.error, UnavailableError)
            assert "the disk is full" in str(ended.error)


async def test_a_stream_expires_after_its_task_is_final(pair: tuple[
        RedisEventBus, RedisEventBus], prefix: str) -> None:
    a, _ = pair
    client = aioredis.Redis.from_url(REDIS)
    try:
        await a.publish("t1", 1, status(1))
        await a.flush()
        assert LINGER_S < await client.ttl(a.key("t1")) <= IDLE_S
        await a.publish("t1", 1, status(1))  # again: the ID is the sequence number
        await a.flush()
        assert await client.xlen(a.key("t1")) == 1
        await a.publish("t1", 2, status(2, TASK_STATE_COMPLETED))
        await a.flush()
        assert 0 < await client.ttl(a.key("t1")) <= LINGER_S
    finally:
        await client.aclose()


@pytest.fixture
async def proxied(prefix: str) -> AsyncIterator[tuple[RedisEventBus, RedisEventBus, Proxy]]:
    """A bus on Redis, and one reaching it through a proxy the test can cut."""
    proxy = await Proxy(redis_port()).start()
    a, b = RedisEventBus(bus_url(prefix)), RedisEventBus(bus_url(prefix, proxy.port))
    await a.open()
    await b.open()
    yield a, b, proxy
    await a.close()
    await b.close()
    await proxy.close()


async def test_a_connection_cut_once_loses_nothing(proxied: tuple[
        RedisEventBus, RedisEventBus, Proxy]) -> None:
    a, b, proxy = proxied
    async with b.subscribe("t1") as sub:
        await a.publish("t1", 1, status(1))
        assert (await asyncio.wait_for(sub.next(), 5)).seq == 1
        proxy.cut()  # the reader's XREAD is cut off; it asks again on a new connection
        for seq in (2, 3):
            await a.publish("t1", seq, status(seq))
        assert [(await asyncio.wait_for(sub.next(), 5)).seq for _ in range(2)] == [2, 3]


async def test_a_lost_redis_ends_the_stream_with_a_retryable_error(proxied: tuple[
        RedisEventBus, RedisEventBus, Proxy]) -> None:
    a, b, proxy = proxied
    async with b.subscribe("t1") as sub:
        await a.publish("t1", 1, status(1))
        assert (await asyncio.wait_for(sub.next(), 5)).seq == 1
        proxy.drop_next = 1000  # Redis stays unreachable through this bus
        proxy.cut()
        ended = await asyncio.wait_for(sub.next(), 10)
    assert isinstance(ended.error, UnavailableError)
    assert ended.error.metadata == {"taskId": "t1", "lastEventId": "1"}
    assert "resume it with SubscribeToTask" in str(ended.error)
    with pytest.raises(UnavailableError):
        async with b.subscribe("t1"):
            pass
    await b.publish("t1", 2, status(2))  # logged, not raised: the store has the event


async def test_an_idle_subscription_outlasts_the_blocking_read(pair: tuple[
        RedisEventBus, RedisEventBus]) -> None:
    """A read blocks 5 s and then asks again: an empty block is no failure, and
    the event published after it arrives."""
    a, b = pair
    async with b.subscribe("t1") as sub:
        await asyncio.sleep(BLOCK_MS / 1000 + 1)
        await a.publish("t1", 1, status(1))
        got = await asyncio.wait_for(sub.next(), 5)
    assert (got.seq, got.error) == (1, None)


async def test_an_unreachable_bus_is_refused_at_start() -> None:
    bus = RedisEventBus(f"redis://127.0.0.1:{unused_port()}/0?prefix=nowhere")
    with pytest.raises(OSError, match="cannot reach the event bus"):
        await bus.open()
    await bus.close()


async def test_a_replica_asked_to_act_answers_and_the_others_say_no(pair: tuple[
        RedisEventBus, RedisEventBus], prefix: str) -> None:
    a, b = pair
    asked: list[tuple[str, tuple[str, str], str]] = []

    async def runs_t1(kind: str, scope: tuple[str, str], task_id: str, body: bytes) -> bool:
        asked.append((kind, scope, task_id))
        return task_id == "t1"

    async def runs_nothing(kind: str, scope: tuple[str, str], task_id: str,
                           body: bytes) -> bool:
        if task_id == "t3":  # it runs t3, and its agent refuses to cancel it
            raise TaskNotCancelableError("t3 finishes what it started", metadata={"taskId": "t3"})
        return False

    a.answer(runs_t1)
    b.answer(runs_nothing)
    c = RedisEventBus(bus_url(prefix))
    await c.open()
    try:
        async def listening() -> bool:  # both listeners have subscribed
            client = aioredis.Redis.from_url(REDIS)
            try:
                counts = await client.pubsub_numsub(f"{prefix}:ctl")
            finally:
                await client.aclose()
            return bool(counts and counts[0][1] == 2)

        for _ in range(100):
            if await listening():
                break
            await asyncio.sleep(0.05)
        assert await c.ask("cancel", ("", "alice"), "t1") is True
        assert await c.ask("cancel", ("", "alice"), "t2") is False  # every answer was "no"
        # The refusal reaches the asker's caller as the running replica's caller would get it.
        with pytest.raises(TaskNotCancelableError, match="t3 finishes what it started") as refused:
            await c.ask("cancel", ("", "alice"), "t3")
        assert refused.value.metadata == {"taskId": "t3"}
        assert ("cancel", ("", "alice"), "t1") in asked
    finally:
        await c.close()
