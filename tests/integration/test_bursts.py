"""A run's burst goes to the store as one write, and nothing waits for it.

The events an agent emits without awaiting anything else are one write
(`append_many`): on the memory store and on SQLite (its group commit counts
the writes it commits). An agent that awaits something else between its
events has what it emitted before written, published and streamed while it
waits; an agent that emits many events in a row has them written in
bounded writes, every one logged in order.

An agent that holds the loop past its quantum gives it back (turns.py) and
its burst is written there: the tests lift the quantum, so that a slow
machine does not split what they count.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from pathlib import Path

import pytest

from a2a_grpc.agent import RequestContext, TaskEvents
from a2a_grpc.cards.card import card_for
from a2a_grpc.core.call import CallContext
from a2a_grpc.demos.demo import DemoAgent, demo_card
from a2a_grpc.execution import turns
from a2a_grpc.execution.burst import MAX_BURST
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.handler.request_handler import RequestHandler
from a2a_grpc.stores import Appended, MemoryTaskStore, Scope
from a2a_grpc.stores.sqlite import SqliteTaskStore
from tests.conftest import send_request
from tests.fakes import Gate, ScriptedAgent

ANYONE = Scope("", "")
CTX = CallContext.from_headers({"a2a-version": "1.0"})


@pytest.fixture(autouse=True)
def no_quantum(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(turns, "QUANTUM_S", 3600.0)


class CountingStore(MemoryTaskStore):
    """The memory store, noting the sequence numbers of each write it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[list[int]] = []

    def append_many(self, scope: Scope, task: pb.Task, events: Sequence[Appended],
                    notify: bool = False, epoch: int = 0) -> Awaitable[None]:
        self.writes.append([e.seq for e in events])
        return MemoryTaskStore.append_many(self, scope, task, events, notify, epoch)


async def test_a_send_is_one_write() -> None:
    store = CountingStore()
    handler = RequestHandler(DemoAgent(), demo_card(), store=store)
    answer = await handler.send_message(send_request("hello"), CTX)
    assert answer.task.status.state == pb.TASK_STATE_COMPLETED
    assert store.writes == [[1, 2, 3, 4]]  # the task, working, the artifact, completed
    logged = await store.events(ANYONE, answer.task.id, 0, 10)
    assert [seq for seq, _ in logged] == [1, 2, 3, 4]
    await handler.close()


async def test_a_long_burst_is_written_in_bounded_writes() -> None:
    n = 3 * MAX_BURST

    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        await ev.working()
        for i in range(n):  # never awaits anything but its events
            await ev.artifact(f"{i} ", artifact_id="a", append=i > 0)
        await ev.complete()

    store = CountingStore()
    agent = ScriptedAgent(script)
    handler = RequestHandler(agent, card_for(agent), store=store)
    answer = await handler.send_message(send_request("go"), CTX)
    assert "".join(p.text for p in answer.task.artifacts[0].parts) == "".join(
        f"{i} " for i in range(n))
    assert all(len(w) <= MAX_BURST for w in store.writes)
    assert [s for w in store.writes for s in w] == list(range(1, n + 4))
    stored = await store.get(ANYONE, answer.task.id)
    assert stored is not None and stored.task == answer.task and stored.seq == n + 3
    await handler.close()


async def test_what_an_agent_emitted_is_out_while_it_waits() -> None:
    gate = Gate()

    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        await ev.working("first")
        await ev.artifact("part one", artifact_id="a")
        await gate.wait()  # awaits something else: what came before is written now
        await ev.complete()

    store = CountingStore()
    agent = ScriptedAgent(script)
    handler = RequestHandler(agent, card_for(agent), store=store)
    stream = await handler.send_streaming_message(send_request("go"), CTX)
    seen = [await anext(stream) for _ in range(3)]  # the task, working, the artifact
    assert seen[2].artifact_update.artifact.parts[0].text == "part one"
    await asyncio.wait_for(gate.reached.wait(), 5)
    stored = await store.get(ANYONE, seen[0].task.id)
    assert stored is not None and stored.seq == 3
    assert stored.task.artifacts[0].parts[0].text == "part one"
    gate.open()
    last = [e async for e in stream][-1]
    assert last.status_update.status.state == pb.TASK_STATE_COMPLETED
    assert [s for w in store.writes for s in w] == [1, 2, 3, 4]
    await handler.close()


async def test_sends_on_sqlite_are_one_write_each(tmp_path: Path) -> None:
    store = SqliteTaskStore(tmp_path / "tasks.db")
    await store.open()
    handler = RequestHandler(DemoAgent(), demo_card(), store=store)
    try:
        answers = await asyncio.gather(*(handler.send_message(send_request("hello"), CTX)
                                         for _ in range(20)))
        _, writes = store.commits
        assert writes == 20  # four events each, one write
        for answer in answers:
            stored = await store.get(ANYONE, answer.task.id)
            assert stored is not None and stored.task == answer.task and stored.seq == 4
            logged = await store.events(ANYONE, answer.task.id, 0, 10)
            assert [e for _, e in logged][-1].status_update.status.state == (
                pb.TASK_STATE_COMPLETED)
    finally:
        await handler.close()
        await store.close()


class RefusingStore(CountingStore):
    """Refuses, at once, the first full burst it is given after the task's first
    (a full disk)."""

    refused = False

    def append_many(self, scope: Scope, task: pb.Task, events: Sequence[Appended],
                    notify: bool = False, epoch: int = 0) -> Awaitable[None]:
        if len(events) == MAX_BURST and events[0].seq > 1 and not self.refused:
            self.refused = True
            raise OSError("No space left on device")
        return super().append_many(scope, task, events, notify, epoch)


async def test_a_full_burst_refused_leaves_no_trace() -> None:
    """The write a full burst makes is refused: every event of it is undone,
    the one that filled it included, and the FAILED task written next holds
    exactly what its log holds."""
    n = MAX_BURST + 40
    first = 8  # events 1 to 10 (the task, working, 8 chunks): a burst of their own

    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        await ev.working()  # event 2; chunk i is event i + 3
        for i in range(n):
            if i == first:
                await asyncio.sleep(0)  # the loop turns: events 1 to 10 are written
            if i == first + MAX_BURST:  # the event after a full burst: a new artifact
                await ev.artifact("other", artifact_id="b")
            else:
                await ev.artifact(f"{i} ", artifact_id="a", append=i > 0)
        await ev.complete()

    store = RefusingStore()
    agent = ScriptedAgent(script)
    handler = RequestHandler(agent, card_for(agent), store=store)
    answer = (await handler.send_message(send_request("go"), CTX)).task
    assert store.refused and answer.status.state == pb.TASK_STATE_FAILED
    stored = await store.get(ANYONE, answer.id)
    assert stored is not None and stored.task == answer
    logged = await store.events(ANYONE, answer.id, 0, 10 * n)
    assert [seq for seq, _ in logged] == list(range(1, stored.seq + 1))
    chunks = [e.artifact_update.artifact.parts[0].text for _, e in logged
              if e.HasField("artifact_update")]
    assert [p.text for a in answer.artifacts for p in a.parts] == chunks
    assert "b" not in [a.artifact_id for a in answer.artifacts]  # never logged
    await handler.close()
