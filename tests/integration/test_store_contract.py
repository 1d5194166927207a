"""One contract, every store: memory, SQLite (a file) and PostgreSQL (the real server)."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import pytest

from a2a_grpc.core import lifecycle, listing, states
from a2a_grpc.core.listing import TaskQuery
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.stores import (
    AppendedEvent,
    Claim,
    MemoryTaskStore,
    Scope,
    StoreUnavailableError,
    TaskFencedError,
    TaskStore,
)
from a2a_grpc.stores.postgres import PostgresTaskStore
from a2a_grpc.stores.sql_schema import SCHEMA_VERSION
from a2a_grpc.stores.sqlite import SqliteTaskStore
from tests.stores import Maker

ME, YOU = Scope("t1", "alice"), Scope("t1", "bob")


def task(i: int, state: int = states.COMPLETED, ctx: str = "c", ts: int | None = None) -> pb.Task:
    t = pb.Task(id=f"task-{i:05d}", context_id=ctx,
                status=pb.TaskStatus(state=state))  # type: ignore[arg-type]
    t.status.timestamp.FromNanoseconds(ts if ts is not None else 1_700_000_000_000_000_000 + i)
    t.history.add(message_id=f"m{i}", role=pb.ROLE_USER, parts=[pb.Part(text=str(i))])
    return t


def ev(t: pb.Task) -> pb.StreamResponse:
    return pb.StreamResponse(task=t)


def query(**kw: object) -> TaskQuery:
    base = dict(tenant="t1", owner="alice", context_id="", status=0, after_ns=None,
                page_size=50, cursor=None, history_length=None, include_artifacts=False)
    base.update(kw)
    return TaskQuery(**base)  # type: ignore[arg-type]


async def test_tasks_and_their_log(store: TaskStore) -> None:
    t = task(1, states.SUBMITTED)
    await store.append(ME, t, 1, ev(t), "m1")
    t2 = pb.Task()
    t2.CopyFrom(t)
    t2.status.state = states.WORKING
    update = pb.StreamResponse(status_update=pb.TaskStatusUpdateEvent(
        task_id=t.id, context_id="c", status=pb.TaskStatus(state=states.WORKING)))
    await store.append(ME, t2, 2, update)
    got = await store.get(ME, t.id)
    assert got is not None and got.task == t2 and got.seq == 2
    assert await store.get(YOU, t.id) is None  # another owner sees nothing
    assert await store.get(Scope("t2", "alice"), t.id) is None  # nor another tenant
    assert [(s, e) for s, e in await store.events(ME, t.id, 0, 2)] == [(1, ev(t)), (2, update)]
    assert [s for s, _ in await store.events(ME, t.id, 1, 2)] == [2]
    assert await store.events(ME, t.id, 2, 5) == []
    assert await store.task_for_message(ME, "m1") == t.id
    assert await store.task_for_message(YOU, "m1") is None
    assert [(sc, s.task.id) for sc, s in await store.unsettled()] == [(ME, t.id)]


async def test_content_comes_back_byte_for_byte(store: TaskStore) -> None:
    """Ids that recur inside the content, non-ASCII ids, raw bytes (the memory
    store packs repeated ids), and a final task that refuses another event."""
    tid, cid = "tâche-\u00ff-\U0001f600", "ctx-\u0001"
    t = pb.Task(id=tid, context_id=cid, status=pb.TaskStatus(state=states.WORKING))
    t.status.timestamp.FromNanoseconds(1_700_000_000_000_000_000)
    raw = b"\xff\x01\xff" + tid.encode() + b"\xff\x00" + cid.encode() + b"\xff"
    t.artifacts.add(artifact_id=tid, parts=[pb.Part(raw=raw), pb.Part(text=tid + cid)])
    t.history.add(message_id=tid, context_id=cid, task_id=tid, role=pb.ROLE_USER,
                  parts=[pb.Part(text="\xff" + tid)])
    await store.append(ME, t, 1, ev(t), tid)
    done = pb.Task()
    done.CopyFrom(t)
    done.status.state = states.COMPLETED
    final = pb.StreamResponse(status_update=pb.TaskStatusUpdateEvent(
        task_id=tid, context_id=cid, status=done.status))
    await store.append(ME, done, 2, final)
    late = pb.StreamResponse(artifact_update=pb.TaskArtifactUpdateEvent(
        task_id=tid, context_id=cid, artifact=t.artifacts[0]))
    with pytest.raises(TaskFencedError, match="final task takes no more events"):
        await store.append(ME, done, 3, late)
    got = await store.get(ME, tid)
    assert got is not None and got.task == done and got.seq == 2
    assert await store.events(ME, tid, 0, 9) == [(1, ev(t)), (2, final)]
    assert await store.task_for_message(ME, tid) == tid
    page, total = await store.list_tasks(query(context_id=cid, include_artifacts=True))
    assert total == 1 and page[0].id == tid and page[0].artifacts[0].parts[0].raw == raw


async def test_a_burst_is_one_write_all_or_none(store: TaskStore) -> None:
    """`append_many`: each event of a burst logged under its number, the task as
    of the last, its message recorded; a burst the fence refuses (it does not
    follow the log's end) leaves nothing of itself."""
    t = task(1, states.SUBMITTED)
    events = [ev(pb.Task(id=t.id, context_id="c", status=t.status, history=t.history))]
    for state in (states.WORKING, states.COMPLETED):
        events.append(pb.StreamResponse(status_update=pb.TaskStatusUpdateEvent(
            task_id=t.id, context_id="c", status=pb.TaskStatus(state=state))))
    events.insert(2, pb.StreamResponse(artifact_update=pb.TaskArtifactUpdateEvent(
        task_id=t.id, context_id="c", artifact=pb.Artifact(
            artifact_id="a", parts=[pb.Part(text="out")]))))
    for event in events[1:3]:
        lifecycle.apply(t, event)
    await store.append_many(ME, t, [AppendedEvent(1, events[0], "m1", False),
                                    AppendedEvent(2, events[1], None, True),
                                    AppendedEvent(3, events[2], None, True)])
    got = await store.get(ME, t.id)
    assert got is not None and got.task == t and got.seq == 3
    assert [e for _, e in await store.events(ME, t.id, 0, 10)] == events[:3]
    assert await store.task_for_message(ME, "m1") == t.id
    done = pb.Task()
    done.CopyFrom(t)
    lifecycle.apply(done, events[3])
    with pytest.raises(TaskFencedError):  # begins at 3: the log ends there already
        await store.append_many(ME, done, [AppendedEvent(3, events[2], None, True),
                                           AppendedEvent(4, events[3], None, True)])
    got = await store.get(ME, t.id)
    assert got is not None and got.task == t and got.seq == 3
    await store.append_many(ME, done, [AppendedEvent(4, events[3], None, True)])
    got = await store.get(ME, t.id)
    assert got is not None and got.task == done and got.seq == 4
    assert [s for s, _ in await store.events(ME, t.id, 0, 10)] == [1, 2, 3, 4]


async def test_derived_events_fold_into_the_task(store: TaskStore) -> None:
    """`derived=True` (the runtime's updates, applied in place): the store may keep
    the event alone, but every read gives the task as the caller had it, in
    the middle of a stream and once it is final, and the caller's later
    changes to its object never reach the store."""
    t = task(1, states.SUBMITTED)
    await store.append(ME, t, 1, ev(t), "m1")
    chunk = pb.Artifact(artifact_id="a", name="chunks")
    events = [pb.StreamResponse(status_update=pb.TaskStatusUpdateEvent(
        task_id=t.id, context_id="c", status=pb.TaskStatus(state=states.WORKING)))]
    for i in range(6):
        art = pb.Artifact()
        art.CopyFrom(chunk)
        art.parts.add(text=f"chunk {i}")
        events.append(pb.StreamResponse(artifact_update=pb.TaskArtifactUpdateEvent(
            task_id=t.id, context_id="c", artifact=art, append=i > 0)))
    note = pb.TaskStatus(state=states.WORKING)
    note.message.CopyFrom(pb.Message(message_id="n", role=pb.ROLE_AGENT,
                                     parts=[pb.Part(text="halfway")]))
    events.insert(4, pb.StreamResponse(status_update=pb.TaskStatusUpdateEvent(
        task_id=t.id, context_id="c", status=note)))
    final = pb.TaskStatus(state=states.COMPLETED)
    final.timestamp.FromNanoseconds(1_800_000_000_000_000_000)
    events.append(pb.StreamResponse(status_update=pb.TaskStatusUpdateEvent(
        task_id=t.id, context_id="c", status=final)))
    for seq, event in enumerate(events, start=2):
        lifecycle.apply(t, event)
        await store.append(ME, t, seq, event, derived=True)
        expected = pb.Task()
        expected.CopyFrom(t)
        if seq % 3 == 0:  # read now and then: a fold in the middle, then more events
            got = await store.get(ME, t.id)
            assert got is not None and got.task == expected and got.seq == seq
    t.artifacts[0].parts.add(text="after the fact")  # the caller's object, not the store's
    got = await store.get(ME, t.id)
    assert got is not None and got.task == expected and got.seq == len(events) + 1
    assert len(got.task.artifacts[0].parts) == 6 and len(got.task.history) == 2
    logged = await store.events(ME, t.id, 1, 99)
    assert [e for _, e in logged] == events
    page, total = await store.list_tasks(query(status=states.COMPLETED, include_artifacts=True))
    assert total == 1 and page[0] == expected


async def test_list_pages_filters_and_totals(store: TaskStore) -> None:
    for i in range(25):
        state = states.WORKING if i % 5 == 0 else states.COMPLETED
        t = task(i, state, ctx="even" if i % 2 == 0 else "odd")
        await store.append(ME, t, 1, ev(t))
    other = task(99)
    await store.append(YOU, other, 1, ev(other))
    ids: list[str] = []
    cursor = None
    while True:
        page, total = await store.list_tasks(query(page_size=10, cursor=cursor))
        assert total == 25
        ids += [t.id for t in page]
        if len(page) < 10:
            break
        cursor = listing.sort_key(page[-1])
    assert ids == [f"task-{i:05d}" for i in reversed(range(25))]
    page, total = await store.list_tasks(query(status=states.WORKING))
    assert total == 5 and [t.id for t in page] == [f"task-{i:05d}" for i in (20, 15, 10, 5, 0)]
    page, total = await store.list_tasks(query(context_id="odd", status=states.COMPLETED))
    assert total == 10 and all(t.context_id == "odd" for t in page)  # 12 odd, 2 working
    page, total = await store.list_tasks(query(after_ns=1_700_000_000_000_000_000 + 20))
    assert total == 5 and [t.id for t in page][-1] == "task-00020"  # inclusive


async def test_counts_follow_state_changes(store: TaskStore) -> None:
    t = task(1, states.WORKING)
    await store.append(ME, t, 1, ev(t))
    assert (await store.list_tasks(query(status=states.WORKING)))[1] == 1
    t.status.state = states.COMPLETED
    await store.append(ME, t, 2, ev(t))
    assert (await store.list_tasks(query(status=states.WORKING)))[1] == 0
    assert (await store.list_tasks(query(status=states.COMPLETED)))[1] == 1
    assert (await store.list_tasks(query()))[1] == 1


async def test_equal_timestamps_page_by_id(store: TaskStore) -> None:
    for i in range(7):
        t = task(i, ts=1_800_000_000_000_000_000)
        await store.append(ME, t, 1, ev(t))
    seen: list[str] = []
    cursor = None
    for _ in range(4):
        page, _ = await store.list_tasks(query(page_size=2, cursor=cursor))
        seen += [t.id for t in page]
        if page:
            cursor = listing.sort_key(page[-1])
    assert seen == [f"task-{i:05d}" for i in reversed(range(7))]


async def test_purge_removes_old_final_tasks_only(store: TaskStore) -> None:
    old_done, old_running, new_done = task(1), task(2, states.WORKING), task(3, ts=2 * 10**18)
    for t in (old_done, old_running, new_done):
        await store.append(ME, t, 1, ev(t), f"msg-{t.id}")
    await store.save_push_config(ME, pb.TaskPushNotificationConfig(
        task_id=old_done.id, id="p", url="https://x/y"))
    assert await store.purge(before_ns=10**18 * 1.9) == 1  # type: ignore[arg-type]
    assert await store.get(ME, old_done.id) is None
    assert await store.events(ME, old_done.id, 0, 10) == []
    assert await store.task_for_message(ME, f"msg-{old_done.id}") is None
    assert await store.list_push_configs(ME, old_done.id) == []
    assert await store.get(ME, old_running.id) is not None
    assert await store.get(ME, new_done.id) is not None
    assert (await store.list_tasks(query()))[1] == 2


async def test_push_configs(store: TaskStore) -> None:
    for cid in ("b", "a", "c"):
        await store.save_push_config(ME, pb.TaskPushNotificationConfig(
            task_id="t", id=cid, url=f"https://x/{cid}"))
    await store.save_push_config(ME, pb.TaskPushNotificationConfig(
        task_id="t", id="a", url="https://x/a2"))  # replace keeps its place
    assert [c.id for c in await store.list_push_configs(ME, "t")] == ["b", "a", "c"]
    got = await store.get_push_config(ME, "t", "a")
    assert got is not None and got.url == "https://x/a2"
    assert await store.get_push_target(ME, "t", "a") == (got, "")
    await store.save_push_config(ME, got, "0.3")  # set again by a 0.3 client
    assert await store.get_push_target(ME, "t", "a") == (got, "0.3")
    assert await store.get_push_target(ME, "t", "zz") is None
    await store.delete_push_config(ME, "t", "a")
    await store.delete_push_config(ME, "t", "a")
    assert await store.get_push_config(ME, "t", "a") is None
    assert await store.list_push_configs(Scope("t2", "alice"), "t") == []


async def test_concurrent_writers(store: TaskStore) -> None:
    async def write(i: int) -> None:
        t = task(i, states.WORKING)
        for seq in range(1, 6):
            await store.append(ME, t, seq, ev(t))

    await asyncio.gather(*(write(i) for i in range(20)))
    assert (await store.list_tasks(query()))[1] == 20
    assert len(await store.events(ME, "task-00003", 0, 100)) == 5


async def test_handed_off_tasks_are_not_unsettled(maker: Maker) -> None:
    store = await maker()
    working = [task(i, states.WORKING) for i in range(3)]
    for t in working:
        await store.append(ME, t, 1, ev(t))
    await store.set_handed_off(ME, working[0].id, True)
    await store.set_handed_off(ME, working[1].id, True)
    await store.set_handed_off(ME, working[1].id, False)  # a run holds it again
    await store.set_handed_off(ME, "no-such-task", True)  # nothing to mark: no error
    left = sorted(s.task.id for _, s in await store.unsettled())
    assert left == sorted([working[1].id, working[2].id])
    marked = [await store.handed_off(ME, t.id) for t in working]
    assert marked == [True, False, False]
    assert not await store.handed_off(ME, "no-such-task")
    assert not await store.handed_off(YOU, working[0].id)  # another caller's view
    await store.close()
    reopened = await maker()  # the mark is kept with the task
    assert sorted(s.task.id for _, s in await reopened.unsettled()) == left


async def test_conversation_state_is_kept_by_name_per_caller(maker: Maker) -> None:
    store = await maker()
    assert await store.context_state(ME, "ctx-1", "history") is None
    await store.save_context_state(ME, "ctx-1", "history", b"\x00one")
    await store.save_context_state(ME, "ctx-1", "other", b"two")
    await store.save_context_state(ME, "ctx-1", "history", b"\x00three")  # replaced
    assert await store.context_state(ME, "ctx-1", "history") == b"\x00three"
    assert await store.context_state(ME, "ctx-1", "other") == b"two"
    assert await store.context_state(YOU, "ctx-1", "history") is None  # another caller's
    assert await store.context_state(ME, "ctx-2", "history") is None
    await store.close()
    reopened = await maker()  # kept where the store keeps tasks
    assert await reopened.context_state(ME, "ctx-1", "history") == b"\x00three"


async def test_data_survives_reopening(maker: Maker, request: pytest.FixtureRequest) -> None:
    first = await maker()
    t = task(1)
    await first.append(ME, t, 1, ev(t), "m1")
    await first.close()
    second = await maker()
    got = await second.get(ME, t.id)
    assert got is not None and got.task == t
    assert await second.task_for_message(ME, "m1") == t.id


async def test_sqlite_schema_version_and_lock_timeouts(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = SqliteTaskStore(path, busy_timeout_ms=100)
    await store.open()
    other = sqlite3.connect(path, isolation_level=None)
    assert other.execute("SELECT version FROM a2a_schema").fetchall() == [(SCHEMA_VERSION,)]
    other.execute("BEGIN EXCLUSIVE")  # another process holds the database
    t = task(1)
    with pytest.raises(StoreUnavailableError):
        await store.append(ME, t, 1, ev(t))
    other.execute("ROLLBACK")
    await store.append(ME, t, 1, ev(t))  # and works again once it lets go
    other.execute(f"UPDATE a2a_schema SET version = {SCHEMA_VERSION + 1}")
    other.close()
    await store.close()
    newer = SqliteTaskStore(path)
    with pytest.raises(RuntimeError, match="newer than this a2a-grpc"):
        await newer.open()
    await newer.close()


async def test_unreachable_postgres_says_so() -> None:
    store = PostgresTaskStore("postgresql://postgres@127.0.0.1:1/nothing")
    with pytest.raises(OSError, match="cannot connect to the PostgreSQL store"):
        await store.open()


async def test_outbox(store: TaskStore) -> None:
    t, other = task(1, states.WORKING), task(2, states.WORKING)
    await store.append(ME, t, 1, ev(t), notify=True)  # no configs yet: nothing queued
    assert store.take_queued() is False
    for cid in ("a", "b"):
        await store.save_push_config(ME, pb.TaskPushNotificationConfig(
            task_id=t.id, id=cid, url=f"https://x/{cid}"))
    await store.append(ME, other, 1, ev(other), notify=True)  # a task without configs
    assert store.take_queued() is False  # the sender is not woken for it
    for seq in (2, 3):
        await store.append(ME, t, seq, ev(t), notify=True)
    assert store.take_queued() is True
    assert store.take_queued() is False  # until the next commit that queues
    await store.append(ME, t, 4, ev(t))  # notify=False: push is off
    assert store.take_queued() is False
    far = 2**62
    due = await store.due_deliveries(far, 10)
    assert sorted((d.config_id, d.seq) for d in due) == [("a", 2), ("b", 2)]  # heads only
    assert await store.next_due() is not None
    a2 = next(d for d in due if d.config_id == "a")
    await store.reschedule(a2.id, 1, far - 10, "HTTP 500")
    due = await store.due_deliveries(far - 20, 10)
    assert [(d.config_id, d.seq) for d in due] == [("b", 2)]  # a's head waits, a's 3 too
    await store.delivered(due[0].id)
    due = await store.due_deliveries(far - 20, 10)
    assert [(d.config_id, d.seq) for d in due] == [("b", 3)]
    retried = await store.due_deliveries(far, 10)
    assert {(d.config_id, d.seq, d.attempts, d.last_error) for d in retried} >= {
        ("a", 2, 1, "HTTP 500")}
    await store.dead_letter(a2.id, 2, "HTTP 400")
    dead = await store.dead_letters()
    assert [(d.config_id, d.seq, d.attempts, d.last_error) for d in dead] == [
        ("a", 2, 2, "HTTP 400")]
    due = await store.due_deliveries(far, 10)  # a moves on past its dead letter
    assert sorted((d.config_id, d.seq) for d in due) == [("a", 3), ("b", 3)]
    await store.delete_push_config(ME, t.id, "a")  # stops a's pending deliveries
    due = await store.due_deliveries(far, 10)
    assert [(d.config_id, d.seq) for d in due] == [("b", 3)]
    assert len(await store.dead_letters()) == 1  # dead letters stay visible


async def test_claimed_deliveries_go_to_one_replica(store: TaskStore) -> None:
    t = task(1, states.WORKING)
    for cid in ("a", "b"):
        await store.save_push_config(ME, pb.TaskPushNotificationConfig(
            task_id=t.id, id=cid, url=f"https://x/{cid}"))
    for seq in (1, 2):
        await store.append(ME, t, seq, ev(t), notify=True)
    now = time.time_ns()
    first = await store.due_deliveries(now, 1, claim_until_ns=now + 10**9)
    second = await store.due_deliveries(now, 10, claim_until_ns=now + 10**9)
    assert [(d.config_id, d.seq) for d in first + second] in (
        [("a", 1), ("b", 1)], [("b", 1), ("a", 1)])  # each head once; 2 waits behind it
    assert await store.due_deliveries(now, 10, claim_until_ns=now + 10**9) == []
    # The claimant died: once its claim ends, the heads are due again, in order.
    again = await store.due_deliveries(now + 2 * 10**9, 10, claim_until_ns=now + 3 * 10**9)
    assert sorted((d.config_id, d.seq) for d in again) == [("a", 1), ("b", 1)]
    await store.delivered(again[0].id)
    after = await store.due_deliveries(now + 4 * 10**9, 10)
    assert sorted((d.config_id, d.seq) for d in after) == sorted(
        [(again[0].config_id, 2), (again[1].config_id, 1)])


async def test_a_claim_takes_only_tasks_whose_lease_ended(maker: Maker) -> None:
    """Replicas (--bus): each claims the running tasks of replicas that stopped
    renewing, never a live one's, and two never claim the same task."""
    store = await maker()
    if isinstance(store, MemoryTaskStore):
        pytest.skip("one process: the memory store has no other replica to take over from")
    now = time.time_ns()
    held = [task(i, states.WORKING) for i in range(3)]
    done = task(9)
    store.hold("alive", 60)
    await store.append(ME, held[0], 1, ev(held[0]))
    store.hold("gone", 1)  # its lease ends a second after the write
    for t in (held[1], held[2], done):
        await store.append(ME, t, 1, ev(t))
    await store.set_handed_off(ME, held[2].id, True)  # no run holds it: never taken

    later = now + 10 * 10**9
    claimed = await store.unsettled(Claim("survivor", later, later + 30 * 10**9))
    assert [(scope, s.task.id) for scope, s in claimed] == [(ME, held[1].id)]
    assert claimed[0][1].task == held[1]
    assert await store.unsettled(Claim("another", later, later + 30 * 10**9)) == []

    # Live replicas renew: their tasks stay theirs past the original leases.
    await store.renew("alive", now + 120 * 10**9)
    await store.renew("survivor", now + 120 * 10**9)
    assert await store.unsettled(Claim("another", now + 90 * 10**9, now + 99 * 10**9)) == []
    taken = await store.unsettled(Claim("another", now + 150 * 10**9, now + 160 * 10**9))
    assert sorted(s.task.id for _, s in taken) == sorted([held[0].id, held[1].id])


async def test_a_replica_renews_only_the_tasks_it_runs(maker: Maker) -> None:
    """A task its holder still holds but no longer runs (its run lost, its writes
    refused) runs out of lease like a stopped replica's, and is taken over."""
    store = await maker()
    if isinstance(store, MemoryTaskStore):
        pytest.skip("one process: the memory store has no other replica to take over from")
    now = time.time_ns()
    runs, lost = task(1, states.WORKING), task(2, states.WORKING)
    store.hold("alive", 5)
    for t in (runs, lost):
        await store.append(ME, t, 1, ev(t))
    await store.renew("alive", now + 120 * 10**9, [runs.id])
    taken = await store.unsettled(Claim("survivor", now + 60 * 10**9, now + 70 * 10**9))
    assert [s.task.id for _, s in taken] == [lost.id]
    await store.renew("alive", now + 240 * 10**9, [])  # runs nothing now: renews nothing
    taken = await store.unsettled(Claim("survivor", now + 130 * 10**9, now + 140 * 10**9))
    assert [s.task.id for _, s in taken] == [runs.id]


async def test_the_cards_last_modified_is_shared_and_moves_only_with_its_content(
        maker: Maker) -> None:
    one, two = await maker(), await maker()  # two replicas on one database
    assert await one.card_published("public", "d1", 1_000) == 1_000
    assert await two.card_published("public", "d1", 9_000) == 1_000  # same content: its time
    assert await two.card_published("public", "d2", 10_000) == 10_000  # new content: now
    assert await one.card_published("public", "d2", 11_000) == 10_000
    assert await one.card_published("extended", "d2", 12_000) == 12_000  # another card
    assert await one.card_published("public", "d1", 13_000) == 13_000  # back: changed again
