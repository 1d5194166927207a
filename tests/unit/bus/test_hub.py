"""The workers' hub (bus/hub.py) and two workers' buses on its Unix socket,
in one process: what crosses, what does not, and a hub that goes away."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from a2a_grpc.bus.hub import Hub
from a2a_grpc.bus.hub_client import HubEventBus
from a2a_grpc.bus.hub_wire import frame
from a2a_grpc.core.errors import UnavailableError
from a2a_grpc.generated.a2a_pb2 import StreamResponse, Task


def event(text: str) -> StreamResponse:
    return StreamResponse(task=Task(id=text))


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[tuple[Hub, str]]:
    made = Hub()
    path = str(tmp_path / "hub.sock")
    await made.start(Path(path))
    yield made, path
    await made.close()


async def worker(path: str, lost: list[int] | None = None) -> HubEventBus:
    told = [] if lost is None else lost
    bus = HubEventBus(path, lost=lambda: told.append(1))
    await bus.open()
    return bus


async def test_events_cross_only_while_another_worker_watches(hub: tuple[Hub, str]) -> None:
    one, two = await worker(hub[1]), await worker(hub[1])
    await one.publish("t", 1, event("before"))  # nobody watches: no frame at all
    assert "t" not in one._interest
    async with two.subscribe("t") as sub:
        assert "t" in one._interest  # told before the subscription was answered
        await one.publish("t", 2, event("a"))
        await one.publish_many("t", [])
        await one.publish("t", 3, event("b"))
        got = [await asyncio.wait_for(sub.next(), 5) for _ in range(2)]
        assert [(e.seq, e.payload.task.id) for e in got] == [(2, "a"), (3, "b")]
        await one.publish_error("t", RuntimeError("writer broke"))
        failed = await asyncio.wait_for(sub.next(), 5)
        assert isinstance(failed.error, UnavailableError)
    for _ in range(100):  # the hub says N once the last watcher left
        if "t" not in one._interest:
            break
        await asyncio.sleep(0.01)
    assert "t" not in one._interest
    await one.close()
    await two.close()


async def test_a_worker_starting_later_hears_what_is_watched(hub: tuple[Hub, str]) -> None:
    watcher = await worker(hub[1])
    async with watcher.subscribe("t") as sub:
        late = await worker(hub[1])  # say, one started again, taking over the task
        assert "t" in late._interest
        await late.publish("t", 7, event("x"))
        assert (await asyncio.wait_for(sub.next(), 5)).seq == 7
        await late.close()
    await watcher.close()


async def test_asks_are_answered_by_the_worker_that_runs_the_task(
        hub: tuple[Hub, str]) -> None:
    asker, runner, idle = [await worker(hub[1]) for _ in range(3)]
    assert not await asker.ask("cancel", ("", "alice"), "t")  # nobody answers yes
    asked: list[tuple[str, tuple[str, str], str, bytes]] = []

    async def runs(kind: str, scope: tuple[str, str], task_id: str, body: bytes) -> bool:
        asked.append((kind, scope, task_id, body))
        return task_id == "t"

    runner.answer(runs)
    assert await asker.ask("message", ("tenant", "alice"), "t", b"\x01\x02")
    assert asked == [("message", ("tenant", "alice"), "t", b"\x01\x02")]
    assert not await asker.ask("cancel", ("", "alice"), "other")
    for bus in (asker, runner, idle):
        await bus.close()


async def test_a_rate_is_counted_across_workers(hub: tuple[Hub, str]) -> None:
    one, two = await worker(hub[1]), await worker(hub[1])
    waits = [await w.take("caller", 1.0, 2.0) for w in (one, two, one)]
    assert waits[:2] == [0.0, 0.0] and waits[2] is not None and waits[2] > 0.5
    assert await two.take("someone else", 1.0, 2.0) == 0.0
    await one.close()
    await two.close()


async def test_without_the_hub_streams_end_and_the_worker_stops(
        hub: tuple[Hub, str]) -> None:
    lost: list[int] = []
    bus = await worker(hub[1], lost)
    async with bus.subscribe("t") as sub:
        await hub[0].close()
        failed = await asyncio.wait_for(sub.next(), 5)
        assert isinstance(failed.error, UnavailableError)
        assert "supervisor" in str(failed.error) and lost == [1]
        assert not await bus.ping()
        with pytest.raises(UnavailableError):
            await bus.ask("cancel", ("", ""), "t")
    await bus.close()


async def test_an_unreachable_hub_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="cannot reach the workers' hub"):
        await HubEventBus(str(tmp_path / "none.sock")).open()


async def test_a_worker_that_stops_reading_is_cut_off(hub: tuple[Hub, str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A hung worker: the hub holds at most BEHIND_BYTES for it, then closes
    its connection (that worker stops and is started again)."""
    monkeypatch.setattr("a2a_grpc.bus.hub.BEHIND_BYTES", 256 << 10)
    publisher = await worker(hub[1])
    reader, writer = await asyncio.open_unix_connection(hub[1])
    writer.write(frame(b"S", b"1", b"t"))  # subscribes, then reads nothing
    for _ in range(100):
        if "t" in publisher._interest:
            break
        await asyncio.sleep(0.01)
    big = StreamResponse(task=Task(id="x" * 10_000))
    for seq in range(1, 2001):  # 20 MB, far past what a socket buffers
        await publisher.publish("t", seq, big)
        if writer.transport.is_closing() or reader.at_eof():
            break
    got = 0
    async with asyncio.timeout(10):
        while chunk := await reader.read(1 << 20):
            got += len(chunk)
    assert got < 20_000_000  # cut off, not fed everything
    writer.close()
    await publisher.close()


async def test_the_others_hear_the_lease_holder_of_a_worker_gone(
        hub: tuple[Hub, str]) -> None:
    doomed, survivor = await worker(hub[1]), await worker(hub[1])
    heard: asyncio.Queue[str] = asyncio.Queue()

    async def gone(holder: str) -> None:
        await heard.put(holder)

    survivor.holds_as("survivor's", gone)
    doomed.holds_as("doomed's", gone)
    await doomed.close()
    assert await asyncio.wait_for(heard.get(), 5) == "doomed's"
    await survivor.close()
