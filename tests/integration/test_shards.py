"""The SQLite store in shards (stores/shards.py), as `serve --workers` uses it:
each store here is a worker of its own shard on the same files. What one
writes the others read and list; a messageId given to two of them at once
starts one task; deliveries, an older single file, and backup across the
shards. (tests/integration/test_workers.py runs the workers themselves.)"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from a2a_grpc.core import states
from a2a_grpc.core.listing import TaskQuery, sort_key
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.stores import Scope, TaskStore, open_store, shard_claims, store_for
from a2a_grpc.stores.shard_files import named_shard, shards_on_disk
from a2a_grpc.stores.shards import ShardedSqliteStore
from a2a_grpc.stores.sqlite import SqliteTaskStore

ME = Scope("", "alice")


def new_task(store: TaskStore, n: int,
             state: int = states.COMPLETED) -> pb.Task:
    t = pb.Task(id=store.new_task_id(), context_id="c", status=pb.TaskStatus(state=state))  # type: ignore[arg-type]
    t.status.timestamp.FromNanoseconds(1_700_000_000_000_000_000 + n * 1000)
    t.history.add(message_id=f"m-{t.id}", role=pb.ROLE_USER, parts=[pb.Part(text=str(n))])
    return t


def query(size: int, cursor: tuple[int, str] | None = None) -> TaskQuery:
    return TaskQuery(tenant="", owner="alice", context_id="", status=0, after_ns=None,  # type: ignore[arg-type]
                     page_size=size, cursor=cursor, history_length=None,
                     include_artifacts=False)


@pytest.fixture
async def workers(tmp_path: Path) -> AsyncIterator[list[ShardedSqliteStore]]:
    """Three workers' stores, as the supervisor of `serve --workers 3` leaves them."""
    url = f"sqlite:///{tmp_path / 'tasks.db'}"
    supervisor = await open_store(url, shards=3)
    await supervisor.close()
    opened = [await open_store(url, shard=k) for k in range(3)]
    assert all(isinstance(s, ShardedSqliteStore) for s in opened)
    yield opened  # type: ignore[misc]
    for store in opened:
        await store.close()


async def test_each_worker_writes_its_shard_and_reads_and_lists_all(
        workers: list[ShardedSqliteStore], tmp_path: Path) -> None:
    made: list[pb.Task] = []
    for n in range(12):
        store = workers[n % 3]
        t = new_task(store, n)
        assert named_shard(t.id, 3) == n % 3
        await store.append(ME, t, 1, pb.StreamResponse(task=t), f"m-{t.id}")
        made.append(t)
    for k in range(3):  # each task is in its worker's file, no other
        path = tmp_path / ("tasks.db" if k == 0 else f"tasks.db.shard-{k}")
        single = SqliteTaskStore(path)
        await single.open()
        assert (await single.list_tasks(query(100)))[1] == 4
        await single.close()
    newest = sorted(made, key=sort_key, reverse=True)
    for reader in workers:
        for t in made:
            found = await reader.get(ME, t.id)
            assert found is not None and found.task == t
            assert await reader.task_for_message(ME, f"m-{t.id}") == t.id
        pages, cursor = [], None
        while True:  # pages of 5, merged across the shards by the cursor
            page, total = await reader.list_tasks(query(5, cursor))
            assert total == 12
            pages += page
            if len(page) < 5:
                break
            cursor = sort_key(page[-1])
        assert [t.id for t in pages] == [t.id for t in newest]
        assert await reader.count_states() == {int(states.COMPLETED): 12}


def test_an_id_names_a_shard_only_by_two_hex_digits() -> None:
    assert [named_shard(key, 8) for key in ("x-05", "x-07", "x-00")] == [5, 7, 0]
    assert named_shard("x-0a", 16) == named_shard("x-0A", 16) == 10
    for key in ("x-08", "task-1", "x- 1", "x-+1", "x", "", "x-zz"):  # no shard of 8 named
        assert named_shard(key, 8) == 0, key


async def test_a_message_given_to_two_workers_at_once_starts_one_task(
        workers: list[ShardedSqliteStore]) -> None:
    first, second = workers[1], workers[2]
    assert await first.task_for_message(ME, "same", claim=True) is None  # first starts it
    looking = asyncio.ensure_future(second.task_for_message(ME, "same", claim=True))
    await asyncio.sleep(0.2)
    assert not looking.done()  # waits for the first worker's task to be recorded
    t = new_task(first, 1, states.SUBMITTED)
    await first.append(ME, t, 1, pb.StreamResponse(task=t), "same")
    assert await asyncio.wait_for(looking, 10) == t.id  # then finds it: no second task
    assert not first.claims.holds(ME, "same") and not second.claims.holds(ME, "same")


async def test_a_claim_nothing_records_is_let_go(
        workers: list[ShardedSqliteStore], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shard_claims, "HOLD_S", 0.3)
    assert await workers[0].task_for_message(ME, "direct", claim=True) is None
    # A send answered without a task records nothing: the other worker goes on.
    assert await asyncio.wait_for(workers[1].task_for_message(ME, "direct", claim=True),
                                  10) is None
    # A lookup that does not start a task claims nothing, and waits for nothing.
    assert await workers[2].task_for_message(ME, "direct") is None


async def test_deliveries_of_every_shard_carry_their_shard(
        workers: list[ShardedSqliteStore]) -> None:
    tasks = [new_task(workers[k], k, states.WORKING) for k in range(3)]
    for k, t in enumerate(tasks):
        await workers[k].save_push_config(ME, pb.TaskPushNotificationConfig(
            task_id=t.id, id="hook", url="https://x/hook"))
        await workers[k].append(ME, t, 1, pb.StreamResponse(task=t), notify=True)
    far = 2**62
    due = await workers[0].due_deliveries(far, 10)
    assert sorted(d.task_id for d in due) == sorted(t.id for t in tasks)
    assert len({d.id for d in due}) == 3
    assert await workers[2].next_due() is not None
    by_task = {d.task_id: d for d in due}
    await workers[0].delivered(by_task[tasks[1].id].id)
    await workers[1].dead_letter(by_task[tasks[2].id].id, 3, "HTTP 410")
    left = await workers[2].due_deliveries(far, 10)
    assert [d.task_id for d in left] == [tasks[0].id]
    assert [(d.task_id, d.last_error) for d in await workers[0].dead_letters()] == [
        (tasks[2].id, "HTTP 410")]


async def test_an_older_single_file_is_shard_zero(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'tasks.db'}"
    single = await open_store(url)
    assert isinstance(single, SqliteTaskStore)
    old = [new_task(single, n, states.WORKING) for n in range(4)]
    for t in old[:2]:  # ids that happen to end as a shard made later would name it
        t.id = t.id[:-2] + "01"
    for t in old:
        await single.append(ME, t, 1, pb.StreamResponse(task=t), f"m-{t.id}")
    await single.close()
    worker = await open_store(url, shards=2, shard=1)
    t = new_task(worker, 99)
    await worker.append(ME, t, 1, pb.StreamResponse(task=t))
    for each in old:
        found = await worker.get(ME, each.id)  # those named shard 1: looked for in all
        assert found is not None and found.task == each
        await worker.append(ME, each, 2, pb.StreamResponse(task=each))  # where it is
    assert await worker.task_for_message(ME, f"m-{old[0].id}") == old[0].id
    await worker.close()
    again = store_for(url)  # a single server on the store later: every shard
    assert isinstance(again, ShardedSqliteStore) and len(again.shards) == 2
    await again.open()
    assert (await again.list_tasks(query(100)))[1] == 5
    await again.close()


async def test_backup_copies_every_shard(workers: list[ShardedSqliteStore],
                                         tmp_path: Path) -> None:
    for k, store in enumerate(workers):
        t = new_task(store, k)
        await store.append(ME, t, 1, pb.StreamResponse(task=t))
    out = tmp_path / "copy" / "backup.db"
    out.parent.mkdir()
    (out.parent / "backup.db.shard-7").write_bytes(b"an older copy's shard")
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "a2a_grpc", "backup", "--store",
         f"sqlite:///{tmp_path / 'tasks.db'}", str(out)], capture_output=True, text=True,
        timeout=120)
    assert done.returncode == 0, done.stderr
    assert "3 tasks" in done.stdout and "2 shards" in done.stdout
    assert shards_on_disk(out) == 3 and not (out.parent / "backup.db.shard-7").exists()
    restored = await open_store(f"sqlite:///{out}")
    assert (await restored.list_tasks(query(100)))[1] == 3
    await restored.close()
