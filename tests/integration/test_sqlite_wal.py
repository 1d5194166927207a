"""The SQLite store's checkpoints (stores/sqlite_wal.py), on real files: while
writes never stop, what is committed is copied into the database beside the
writer and the WAL starts over instead of growing without end; nothing
committed is lost, across a close and a reopen."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from pathlib import Path

from a2a_grpc.core import states
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.stores import Scope
from a2a_grpc.stores.sqlite import SqliteTaskStore

ME = Scope("t1", "alice")
ROUNDS, PER_ROUND = 80, 20


def task(i: int) -> pb.Task:
    t = pb.Task(id=f"task-{i:05d}", context_id="c", status=pb.TaskStatus(state=states.WORKING))
    t.status.timestamp.FromNanoseconds(1_700_000_000_000_000_000 + i)
    t.history.add(message_id=f"m-{i}", role=pb.ROLE_USER).parts.add(text="x" * 600)
    return t


async def write_without_pause(store: SqliteTaskStore) -> int:
    """ROUNDS commits of PER_ROUND new tasks, each begun as the one before ends;
    the size of the WAL file at the end."""
    for r in range(ROUNDS):
        for i in range(r * PER_ROUND, (r + 1) * PER_ROUND):
            written = store.append(ME, task(i), 1, pb.StreamResponse(task=task(i)))
        await written  # the round's last: a store commits a batch together
    return wal_size(store.path)


def wal_size(db: Path) -> int:
    return Path(f"{db}-wal").stat().st_size


async def test_the_wal_starts_over_while_writes_never_stop(tmp_path: Path) -> None:
    # Small figures, so that a short test crosses them many times.
    store = SqliteTaskStore(tmp_path / "copied.db")
    wal = store.checkpoints
    wal.interval, wal.restart_frames, wal.tail_frames = 0.001, 200, 100
    # The same writes with nothing copied: the WAL holds every page they wrote.
    control = SqliteTaskStore(tmp_path / "kept.db")
    control.checkpoints.interval = 3600.0
    await store.open()
    await control.open()
    try:
        size = await write_without_pause(store)
        kept = await write_without_pause(control)
        assert wal.copies > 0 and wal.restarts > 0
        assert control.checkpoints.copies == 0
        assert size < kept / 3, (size, kept)
    finally:
        await store.close()
        await control.close()
    again = SqliteTaskStore(tmp_path / "copied.db")
    await again.open()
    try:
        assert (await again.count_states()) == {states.WORKING: ROUNDS * PER_ROUND}
        for i in (0, ROUNDS * PER_ROUND // 2, ROUNDS * PER_ROUND - 1):
            found = await again.get(ME, f"task-{i:05d}")
            assert found is not None and found.task.history[0].message_id == f"m-{i}"
    finally:
        await again.close()


def tasks_in(path: Path) -> list[str]:
    """The task ids a database file holds (none before its schema is there)."""
    db = sqlite3.connect(path)
    try:
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'a2a_tasks'").fetchall():
            return []
        return [row[0] for row in db.execute("SELECT id FROM a2a_tasks")]
    finally:
        db.close()


async def test_a_commit_reaches_the_database_file_without_a_close(tmp_path: Path) -> None:
    """A copy follows a commit by about `interval` even when nothing more is
    written: the database file alone, without its WAL, has the task."""
    store = SqliteTaskStore(tmp_path / "one.db")
    store.checkpoints.interval = 0.01
    await store.open()
    try:
        copied = store.checkpoints.next_copy()
        await store.append(ME, task(1), 1, pb.StreamResponse(task=task(1)))
        await asyncio.wait_for(copied, 30)
        shutil.copyfile(tmp_path / "one.db", tmp_path / "alone.db")  # not its WAL
    finally:
        await store.close()
    assert tasks_in(tmp_path / "alone.db") == ["task-00001"]


async def test_without_a_copy_the_database_file_alone_lacks_the_task(tmp_path: Path) -> None:
    """The test above, with no copy made before the file is taken: the task is
    only in the WAL (so that test can fail)."""
    store = SqliteTaskStore(tmp_path / "one.db")
    store.checkpoints.interval = 3600.0
    await store.open()
    try:
        await store.append(ME, task(1), 1, pb.StreamResponse(task=task(1)))
        shutil.copyfile(tmp_path / "one.db", tmp_path / "alone.db")
    finally:
        await store.close()
    assert tasks_in(tmp_path / "alone.db") == []
