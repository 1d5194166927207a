"""The fence on appends (stores/fence.py), on every store: nothing is ever
appended after a final event, nor by a writer whose view of the task is
stale (a takeover since it read the task, or another writer's events)."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable

import pytest

from a2a_grpc.core import states
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.stores import Claim, MemoryTaskStore, TaskFencedError, TaskStore
from tests.integration.test_store_contract import ME, ev, query, task
from tests.stores import Maker

FINAL = sorted(states.TERMINAL)
LIVE = [states.SUBMITTED, states.WORKING, states.INPUT_REQUIRED]


def status(t: pb.Task, state: int) -> pb.StreamResponse:
    t.status.state = state  # type: ignore[assignment]
    return pb.StreamResponse(status_update=pb.TaskStatusUpdateEvent(
        task_id=t.id, context_id=t.context_id, status=t.status))


async def outcome(write: Awaitable[None] | None) -> BaseException | None:
    """What became of an append: None when committed, else its error."""
    try:
        await write  # type: ignore[misc]
    except TaskFencedError as exc:
        return exc
    return None


def append(store: TaskStore, t: pb.Task, seq: int, event: pb.StreamResponse,
           epoch: int = 0, notify: bool = False) -> Awaitable[None]:
    """`store.append`, its refusal made an awaitable that raises (a store may
    refuse in the call itself)."""
    try:
        return store.append(ME, t, seq, event, notify=notify, epoch=epoch)
    except TaskFencedError as exc:
        failed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        failed.set_exception(exc)
        return failed


async def test_a_final_task_refuses_every_later_event(store: TaskStore) -> None:
    t = task(1, states.WORKING)
    await store.append(ME, t, 1, ev(t))
    await store.save_push_config(ME, pb.TaskPushNotificationConfig(
        task_id=t.id, id="hook", url="https://x/y"))
    await store.append(ME, t, 2, status(t, states.FAILED), notify=True)
    queued = await store.due_deliveries(2**62, 10)
    for late in (status(t, states.COMPLETED), ev(t)):
        error = await outcome(append(store, t, 3, late, notify=True))
        assert isinstance(error, TaskFencedError) and not error.taken
        assert "failed: a final task takes no more events" in str(error)
    got = await store.get(ME, t.id)
    assert got is not None and got.seq == 2 and got.task.status.state == states.FAILED
    assert [s for s, _ in await store.events(ME, t.id, 0, 99)] == [1, 2]
    assert await store.due_deliveries(2**62, 10) == queued  # no notification of a refusal
    assert (await store.list_tasks(query(status=states.FAILED)))[1] == 1


async def test_the_log_grows_only_where_the_writer_left_it(store: TaskStore) -> None:
    t = task(1, states.WORKING)
    await store.append(ME, t, 1, ev(t))
    await store.append(ME, t, 2, status(t, states.WORKING))
    for seq in (2, 4, 1):  # the same event again, a gap, a new task's first event
        error = await outcome(append(store, t, seq, status(t, states.WORKING)))
        assert isinstance(error, TaskFencedError), seq
    missing = task(2, states.WORKING)
    error = await outcome(append(store, missing, 5, ev(missing)))
    assert isinstance(error, TaskFencedError) and "is not stored (deleted meanwhile" in str(error)
    await store.append(ME, t, 3, status(t, states.COMPLETED))
    assert [s for s, _ in await store.events(ME, t.id, 0, 99)] == [1, 2, 3]


async def test_writes_queued_together_stop_at_the_final_one(store: TaskStore) -> None:
    """Appends made without awaiting (one group commit in the SQL stores): those
    before the final event and the final one go in, those after it do not."""
    t = task(1, states.WORKING)
    await store.append(ME, t, 1, ev(t))
    writes = [append(store, t, 2, status(t, states.WORKING)),
              append(store, t, 3, status(t, states.COMPLETED)),
              append(store, t, 4, status(t, states.COMPLETED)),
              append(store, t, 5, ev(t))]
    outcomes = [await outcome(w) for w in writes]
    assert outcomes[:2] == [None, None]
    assert all(isinstance(o, TaskFencedError) for o in outcomes[2:])
    assert [s for s, _ in await store.events(ME, t.id, 0, 99)] == [1, 2, 3]


async def test_a_takeover_fences_off_the_writer_that_held_the_task(maker: Maker) -> None:
    """Replicas: a claim moves the task's epoch on; the replica that held it
    (hung past its lease) is refused from then on, the claimant is not."""
    store = await maker()
    if isinstance(store, MemoryTaskStore):
        pytest.skip("one process: the memory store has no other replica to take over from")
    t = task(1, states.WORKING)
    store.hold("hung", 0.001)
    await store.append(ME, t, 1, ev(t))
    await store.append(ME, t, 2, status(t, states.WORKING))
    now = time.time_ns() + 10**9
    [(_, claimed)] = await store.unsettled(Claim("survivor", now, now + 30 * 10**9))
    assert claimed.seq == 2 and claimed.epoch == 1
    error = await outcome(append(store, t, 3, status(t, states.COMPLETED), epoch=0))
    assert isinstance(error, TaskFencedError) and error.taken
    assert "another replica took it over" in str(error)
    failed = pb.Task()
    failed.CopyFrom(claimed.task)
    await store.append(ME, failed, 3, status(failed, states.FAILED), epoch=claimed.epoch)
    again = await outcome(append(store, t, 4, status(t, states.COMPLETED), epoch=0))
    assert isinstance(again, TaskFencedError)
    got = await store.get(ME, t.id)
    assert got is not None and got.task.status.state == states.FAILED and got.seq == 3
    # A replica never claims its own tasks: it renews them, or stops being a replica.
    store.hold("self", 0.001)
    mine = task(2, states.WORKING)
    await store.append(ME, mine, 1, ev(mine))
    assert await store.unsettled(Claim("self", now, now + 10**9)) == []


@pytest.mark.parametrize("seed", range(4))
async def test_no_log_ever_holds_an_event_after_a_final_one(store: TaskStore,
                                                             seed: int) -> None:
    """A property: whatever writers try (events after the end, repeated or
    skipped sequence numbers, bursts queued together), every task's log is
    1, 2, ... n with a final event at most at n, and the task reads as of n."""
    rng = random.Random(seed)
    tasks = [task(i, states.SUBMITTED) for i in range(6)]
    for t in tasks:
        await store.append(ME, t, 1, ev(t))
    last = {t.id: 1 for t in tasks}
    for _ in range(25):
        burst = []
        for t in rng.sample(tasks, 3):
            seq = last[t.id] + rng.choice([1, 1, 1, 0, 2])
            for _ in range(rng.randint(1, 3)):
                state = rng.choice(LIVE + FINAL if rng.random() < 0.3 else LIVE)
                copy = pb.Task()
                copy.CopyFrom(t)
                burst.append(append(store, copy, seq, status(copy, state)))
                seq += 1
        for write in burst:
            await outcome(write)
        for t in tasks:
            got = await store.get(ME, t.id)
            assert got is not None
            last[t.id] = got.seq
            t.CopyFrom(got.task)
    for t in tasks:
        logged = await store.events(ME, t.id, 0, 10**6)
        assert [s for s, _ in logged] == list(range(1, len(logged) + 1))
        ends = [s for s, e in logged
                if e.HasField("status_update") and e.status_update.status.state in FINAL]
        assert ends in ([], [len(logged)]), ends
        got = await store.get(ME, t.id)
        assert got is not None and got.seq == len(logged)

