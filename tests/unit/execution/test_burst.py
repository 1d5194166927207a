"""A run's burst (execution/burst.py) over a real memory store: its events go
to the store as one write, a second user message never joins a burst that
records one already (a store's write records one message: the SQL stores'
rule), and a write the store refuses is handed back whole to be undone."""

from __future__ import annotations

from collections.abc import Awaitable

import pytest

from a2a_grpc.execution.burst import Burst
from a2a_grpc.execution.journal import Entry, Journal
from a2a_grpc.execution.run_state import RunState
from a2a_grpc.generated.a2a_pb2 import ROLE_USER, Message, StreamResponse, Task
from a2a_grpc.stores import Scope, TaskFencedError
from a2a_grpc.stores.memory import MemoryTaskStore

SCOPE = Scope("", "")


class Owner:
    """What a TaskActor is to its burst, writing to a real store."""

    def __init__(self, store: MemoryTaskStore) -> None:
        self.store = store
        self.task = Task(id="t", context_id="c")
        self.writes: list[list[int]] = []
        self.published: list[int] = []
        self.restored: list[tuple[list[int], BaseException]] = []

    def append(self, events: list[Entry]) -> Awaitable[None]:
        self.writes.append([e.seq for e in events])
        return self.store.append_many(SCOPE, self.task, events)

    async def publish(self, entries: list[Entry]) -> None:
        self.published += [e.seq for e in entries]

    def restore(self, lost: list[Entry], error: BaseException) -> None:
        self.restored.append(([e.seq for e in lost], error))

    def stop(self, runs: set[RunState]) -> None:
        pass


def recording(seq: int, message_id: str) -> Entry:
    """The event that records a user message: the task, whole, with it."""
    message = Message(message_id=message_id, role=ROLE_USER, task_id="t", context_id="c")
    message.parts.add().text = message_id
    event = StreamResponse(task=Task(id="t", context_id="c", history=[message]))
    return Entry(seq, event, message_id, False, None, None, None, message)


def status(seq: int) -> Entry:
    event = StreamResponse()
    event.status_update.task_id, event.status_update.context_id = "t", "c"
    return Entry(seq, event, None, True, lambda: None, None, None, None)


async def test_a_second_message_waits_for_the_burst_that_records_the_first() -> None:
    store = MemoryTaskStore()
    owner, burst = Owner(store), Burst(Journal(0))
    assert not burst.must_write(None) and not burst.must_write(Message(message_id="m1"))
    assert burst.take(recording(1, "m1"))  # begins a burst
    assert not burst.take(status(2))
    assert not burst.must_write(None)  # an agent's event joins it
    second = Message(message_id="m2")
    assert burst.must_write(second)  # another message does not
    await burst.through(owner, 2, None)
    assert not burst.must_write(second)  # written: the next burst may record it
    burst.take(recording(3, "m2"))
    await burst.through(owner, 3, None)
    assert owner.writes == [[1, 2], [3]] and owner.published == [1, 2, 3]
    assert await store.task_for_message(SCOPE, "m1") == "t"
    assert await store.task_for_message(SCOPE, "m2") == "t"
    assert [seq for seq, _ in await store.events(SCOPE, "t", 0, 3)] == [1, 2, 3]


async def test_a_write_the_store_refuses_is_undone_whole() -> None:
    store = MemoryTaskStore()
    owner, burst = Owner(store), Burst(Journal(0))
    burst.take(recording(1, "m1"))
    await burst.through(owner, 1, None)
    burst.take(recording(1, "m1 again"))  # event 1 again: the store's fence refuses it
    burst.take(status(2))
    with pytest.raises(TaskFencedError):
        burst.write(owner, None)
    assert owner.restored[0][0] == [1, 2] and isinstance(owner.restored[0][1], TaskFencedError)
    assert not burst.entries and not burst.must_write(Message(message_id="m3"))
    assert [seq for seq, _ in await store.events(SCOPE, "t", 0, 9)] == [1]  # nothing of it
    assert await store.task_for_message(SCOPE, "m1 again") is None
