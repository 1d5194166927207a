"""Nothing is shown before it is committed, whatever the store's commits take.

The store here is the real in-memory one behind a queue that commits each
append a few loop turns after it is made, in order, as a durable store's
group commit does (`HeldStore`): the runtime does not wait for a chunk's
commit, so an agent runs ahead of its store. Every event a stream delivers,
every answer, must already be committed when it is seen; when a commit
fails in the middle of a burst, nothing from that write on is ever shown.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Sequence

import pytest

from a2a_grpc.cards.card import card_for
from a2a_grpc.core.call import CallContext
from a2a_grpc.demos.demo import DemoAgent
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.handler.request_handler import RequestHandler
from a2a_grpc.stores import Appended, AppendedEvent, MemoryTaskStore, Scope
from tests.conftest import send_request

Held = tuple[Scope, pb.Task, list[AppendedEvent], bool, "asyncio.Future[None]"]


class HeldStore(MemoryTaskStore):
    """The memory store, committing appends in order, a few loop turns late.
    `fail_from`: the sequence number whose commit fails (a full disk), and with
    it every later write of that task until the runtime writes that number
    again (what GroupCommit does: no holes)."""

    def __init__(self, fail_from: int = 0) -> None:
        super().__init__()
        self.committed: dict[str, int] = {}
        self.fail_from = fail_from
        self._failed: dict[str, int] = {}
        self._queue: deque[Held] = deque()
        self._committer: asyncio.Task[None] | None = None

    def append_many(self, scope: Scope, task: pb.Task, events: Sequence[Appended],
                    notify: bool = False, epoch: int = 0) -> asyncio.Future[None]:
        task_copy = pb.Task()
        task_copy.CopyFrom(task)  # taken now: the caller goes on changing its objects
        copies = []
        for appended in events:
            event = pb.StreamResponse()
            event.CopyFrom(appended.event)
            copies.append(AppendedEvent(appended.seq, event, appended.message_id, False))
        done = asyncio.get_running_loop().create_future()
        self._queue.append((scope, task_copy, copies, notify, done))
        if self._committer is None or self._committer.done():
            self._committer = asyncio.get_running_loop().create_task(self._commit())
        return done

    async def _commit(self) -> None:
        while self._queue:
            for _ in range(3):  # a transaction in flight
                await asyncio.sleep(0)
            batch = list(self._queue)
            self._queue.clear()
            for scope, task, events, notify, done in batch:
                first, last = events[0].seq, events[-1].seq
                failed = self._failed.get(task.id)
                if failed is not None and first <= failed:
                    del self._failed[task.id]  # written again from the failed one on
                elif failed is not None or first <= self.fail_from <= last:
                    self._failed.setdefault(task.id, first)
                    self.fail_from = 0
                    done.set_exception(OSError("No space left on device"))
                    continue
                MemoryTaskStore.append_many(self, scope, task, events, notify)
                self.committed[task.id] = last
                done.set_result(None)


@pytest.fixture
def agent() -> DemoAgent:
    return DemoAgent()


async def test_a_stream_delivers_only_committed_events(agent: DemoAgent) -> None:
    store = HeldStore()
    handler = RequestHandler(agent, card_for(agent), store=store)
    stream = await handler.send_streaming_message(send_request("stream 300"), CallContext())
    seen, task_id = 0, ""
    async for event in stream:
        task_id = task_id or event.task.id  # the first event is the task
        assert stream.seq is not None and store.committed[task_id] >= stream.seq
        seen += 1
    assert seen == 303
    await handler.close()


async def test_answers_are_committed_when_given(agent: DemoAgent) -> None:
    store = HeldStore()
    handler = RequestHandler(agent, card_for(agent), store=store)
    done = (await handler.send_message(send_request("stream 100"), CallContext())).task
    stored = await store.get(Scope("", ""), done.id)
    assert stored is not None and stored.task == done  # the settled answer: all committed
    early = (await handler.send_message(pb.SendMessageRequest(
        message=send_request("stream 100").message,
        configuration=pb.SendMessageConfiguration(return_immediately=True)), CallContext())).task
    stored = await store.get(Scope("", ""), early.id)
    assert stored is not None
    told = [p.text for a in early.artifacts for p in a.parts]
    assert [p.text for a in stored.task.artifacts for p in a.parts][:len(told)] == told
    await handler.close()


async def test_a_commit_failing_mid_burst_shows_nothing_after_it(agent: DemoAgent) -> None:
    store = HeldStore(fail_from=40)  # the write of chunk 38 (task, working, then chunks)
    handler = RequestHandler(agent, card_for(agent), store=store)
    stream = await handler.send_streaming_message(send_request("stream 300"), CallContext())
    seqs, last = [], None
    async for event in stream:
        seqs.append(stream.seq)
        last = event
    # The events before the failed write (it began at or before event 40), then
    # the FAILED status in the place of the write's first event.
    n = len(seqs)
    assert seqs == list(range(1, n + 1)) and 3 < n <= 40
    assert last is not None and last.status_update.status.state == pb.TASK_STATE_FAILED
    stored = await store.get(Scope("", ""), last.status_update.task_id)
    assert stored is not None and stored.seq == n
    assert [p.text for p in stored.task.artifacts[0].parts] == [
        f"chunk {i}/300" for i in range(1, n - 2)]
    await handler.close()
