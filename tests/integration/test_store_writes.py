"""How the durable stores write (SQLite and PostgreSQL, each the real thing):
group commit, the rule that a failed write leaves no hole in a task's log,
closing with writes in flight, and a database from before snapshots had a
table of their own (schema 4) read after its migration."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from a2a_grpc.core import lifecycle, states
from a2a_grpc.core.listing import TaskQuery
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.stores import Scope, StoreUnavailableError
from a2a_grpc.stores.postgres import PostgresTaskStore
from a2a_grpc.stores.sql_schema import MIGRATIONS, SCHEMA_VERSION
from a2a_grpc.stores.sqlite import SqliteTaskStore
from tests.stores import drop_schema, postgres_schema, postgres_url

ME = Scope("t1", "alice")
Durable = SqliteTaskStore | PostgresTaskStore


def working(i: int) -> pb.Task:
    t = pb.Task(id=f"task-{i:04d}", context_id="c", status=pb.TaskStatus(state=states.WORKING))
    t.status.timestamp.FromNanoseconds(1_700_000_000_000_000_000 + i)
    return t


def chunk(t: pb.Task, i: int) -> pb.StreamResponse:
    return pb.StreamResponse(artifact_update=pb.TaskArtifactUpdateEvent(
        task_id=t.id, context_id=t.context_id, append=i > 0,
        artifact=pb.Artifact(artifact_id="a", parts=[pb.Part(text=f"chunk {i}")])))


@pytest.fixture(params=["sqlite", "postgres"])
async def sql_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Durable]:
    schema = await postgres_schema() if request.param == "postgres" else ""
    store: Durable = (SqliteTaskStore(tmp_path / "w.db") if not schema
                           else PostgresTaskStore(postgres_url(schema)))
    await store.open()
    yield store
    await store.close()
    if schema:
        await drop_schema(schema)


async def test_appends_made_together_commit_together(sql_store: Durable) -> None:
    """200 appends of 50 tasks made without waiting: far fewer transactions,
    each task's events in order, every one there."""
    tasks = [working(i) for i in range(50)]
    before = sql_store.commits
    pending = []
    for t in tasks:
        pending.append(sql_store.append(ME, t, 1, pb.StreamResponse(task=t)))
    for i in range(3):  # a burst per task, applied in place as the runtime does
        for t in tasks:
            event = chunk(t, i)
            lifecycle.apply(t, event)
            pending.append(sql_store.append(ME, t, i + 2, event, derived=True))
    await asyncio.gather(*pending)
    transactions, writes = (a - b for a, b in zip(sql_store.commits, before, strict=True))
    assert writes == 200 and transactions < 10
    for t in tasks:
        got = await sql_store.get(ME, t.id)
        assert got is not None and got.task == t and got.seq == 4
        assert [s for s, _ in await sql_store.events(ME, t.id, 0, 9)] == [1, 2, 3, 4]


async def test_close_waits_for_writes_in_flight(tmp_path: Path) -> None:
    store = SqliteTaskStore(tmp_path / "c.db")
    await store.open()
    t = working(1)
    pending = [store.append(ME, t, 1, pb.StreamResponse(task=t))]
    for i in range(20):
        event = chunk(t, i)
        lifecycle.apply(t, event)
        pending.append(store.append(ME, t, i + 2, event, derived=True))
    await store.close()  # before anyone awaited them
    assert all(p.done() and p.exception() is None for p in pending)  # type: ignore[attr-defined]
    again = SqliteTaskStore(tmp_path / "c.db")
    await again.open()
    got = await again.get(ME, t.id)
    assert got is not None and got.task == t and got.seq == 21
    await again.close()


async def test_a_failed_write_leaves_no_hole(tmp_path: Path) -> None:
    """Writes made on top of one that failed fail too, until the writer starts
    again from the failed one: the log never has event 3 without event 2."""
    path = tmp_path / "h.db"
    store = SqliteTaskStore(path, busy_timeout_ms=50)
    await store.open()
    t = working(1)
    await store.append(ME, t, 1, pb.StreamResponse(task=t))
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # another process holds the database
    second, third = chunk(t, 0), chunk(t, 1)
    lifecycle.apply(t, second)
    two = store.append(ME, t, 2, second, derived=True)
    lifecycle.apply(t, third)
    three = store.append(ME, t, 3, third, derived=True)
    for write in (two, three):
        with pytest.raises(StoreUnavailableError):
            await write
    other.execute("ROLLBACK")
    other.close()
    with pytest.raises(StoreUnavailableError):  # on top of the failed 2: refused
        await store.append(ME, t, 3, third, derived=True)
    assert [s for s, _ in await store.events(ME, t.id, 0, 9)] == [1]
    await store.append(ME, t, 2, second, derived=True)  # the writer starts again at 2
    await store.append(ME, t, 3, third, derived=True)
    got = await store.get(ME, t.id)
    assert got is not None and got.task == t and got.seq == 3
    await store.close()


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_a_schema_4_store_is_migrated_and_read(kind: str, tmp_path: Path) -> None:
    t = working(7)
    t.history.add(message_id="m7", role=pb.ROLE_USER, parts=[pb.Part(text="hi")])
    rows = [
        ("INSERT INTO a2a_tasks (tenant, owner, id, context_id, state, status_ns, seq, body) "
         "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
         (ME.tenant, ME.owner, t.id, "c", int(states.WORKING),
          t.status.timestamp.ToNanoseconds(), 1, t.SerializeToString())),
        ("INSERT INTO a2a_events (tenant, task_id, seq, body) VALUES (?, ?, ?, ?)",
         (ME.tenant, t.id, 1, pb.StreamResponse(task=t).SerializeToString())),
        ("INSERT INTO a2a_counts (tenant, owner, state, n) VALUES (?, ?, ?, 1)",
         (ME.tenant, ME.owner, int(states.WORKING))),
        ("INSERT INTO a2a_schema (version) VALUES (4)", ()),
    ]
    schema = ""
    if kind == "sqlite":
        old = sqlite3.connect(tmp_path / "old.db", isolation_level=None)
        for statement in [s for m in MIGRATIONS[:4] for s in m if isinstance(s, str)]:
            old.execute(statement.format(blob="BLOB", serial="INTEGER PRIMARY KEY"))
        old.execute("CREATE TABLE a2a_schema (version INTEGER NOT NULL)")
        for sql, args in rows:
            old.execute(sql, args)
        old.close()
        store: Durable = SqliteTaskStore(tmp_path / "old.db")
    else:
        import asyncpg

        schema = await postgres_schema()
        conn = await asyncpg.connect(postgres_url(schema))
        for statement in [s for m in MIGRATIONS[:4] for s in m if isinstance(s, str)]:
            await conn.execute(statement.format(blob="BYTEA", serial="BIGSERIAL PRIMARY KEY"))
        await conn.execute("CREATE TABLE a2a_schema (version INTEGER NOT NULL)")
        for sql, args in rows:
            for n in range(1, len(args) + 1):
                sql = sql.replace("?", f"${n}", 1)
            await conn.execute(sql, *args)
        await conn.close()
        store = PostgresTaskStore(postgres_url(schema))
    try:
        await store.open()
        got = await store.get(ME, t.id)
        assert got is not None and got.task == t and got.seq == 1
        event = chunk(t, 0)
        lifecycle.apply(t, event)
        await store.append(ME, t, 2, event, derived=True)
        got = await store.get(ME, t.id)
        assert got is not None and got.task == t and got.seq == 2
        assert [s.task.id for _, s in await store.unsettled()] == [t.id]
        page, total = await store.list_tasks(TaskQuery(
            ME.tenant, ME.owner, "", states.UNSPECIFIED, None, 10, None, None, True))
        assert total == 1 and page == [t]
    finally:
        await store.close()
    if kind == "sqlite":
        db = sqlite3.connect(tmp_path / "old.db")
        assert db.execute("SELECT version FROM a2a_schema").fetchall() == [(SCHEMA_VERSION,)]
        rebuilt = dict(db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'"))
        assert rebuilt["a2a_messages"].endswith("WITHOUT ROWID")
        indexes = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert "a2a_messages_task" in indexes
        db.close()
    else:
        conn = await asyncpg.connect(postgres_url(schema))
        assert await conn.fetchval("SELECT version FROM a2a_schema") == SCHEMA_VERSION
        await conn.close()
        await drop_schema(schema)



async def test_message_ids_are_read_while_another_process_writes(tmp_path: Path) -> None:
    """A messageId lookup rides with the next group commit, on the writer's
    connection, before its transaction: another process holding the write
    lock does not hold it up, and a write queued with it fails alone."""
    path = tmp_path / "m.db"
    store = SqliteTaskStore(path, busy_timeout_ms=50)
    await store.open()
    t = working(1)
    await store.append(ME, t, 1, pb.StreamResponse(task=t), "m1")
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process is writing
    second = working(2)
    blocked = store.append(ME, second, 1, pb.StreamResponse(task=second), "m2")
    assert await store.task_for_message(ME, "m1") == t.id
    assert await store.task_for_message(ME, "nope") is None
    with pytest.raises(StoreUnavailableError):
        await blocked
    other.execute("ROLLBACK")
    other.close()
    await store.append(ME, second, 1, pb.StreamResponse(task=second), "m2")
    assert await store.task_for_message(ME, "m2") == second.id
    await store.close()
