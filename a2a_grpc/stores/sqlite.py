"""SQLite task store (`--store sqlite:///PATH`), the embedded default.

Writes: one connection, owned by one worker thread: each transaction (all
its statements; with group commit, many appends) runs in that thread in a
single hop, so a batch costs one thread switch, not one per statement
(aiosqlite's model). WAL mode,
`synchronous=NORMAL` (a committed write survives a process crash; an OS
crash may lose the last second or so of transactions, those not yet copied
into the database by a checkpoint: sqlite_wal.py), and a busy timeout for
other processes holding the file.

Reads: a second connection, used on the event loop's own thread. In WAL mode
a reader never waits for the writer: it reads the last committed state,
without the executor, its futures and waking the loop that a read through
the worker thread costs (docs/benchmarks.md). The price: a read of pages
the OS has not cached waits for the disk on the loop. When the file is busy
in a way that makes even a reader wait (another process recovering it), the
read goes to the worker thread and its busy timeout.

The shared SQL (sql.py) is written as coroutines over `Tx`; here `Tx` never
suspends, so each unit of work is driven to completion inside the thread.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import sqlite3
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from a2a_grpc.stores.base import Claim, Scope
from a2a_grpc.stores.errors import StoreInUseError
from a2a_grpc.stores.sql import Row, SqlTaskStore, Tx
from a2a_grpc.stores.sql_batch import write_batch
from a2a_grpc.stores.sql_reads import EXPIRED, RUNNING
from a2a_grpc.stores.sqlite_lock import WriteLock
from a2a_grpc.stores.sqlite_wal import Checkpointer
from a2a_grpc.stores.writes import Refused, Rider, Write


class _SqliteTx:
    """Runs statements at once (inside the worker thread); never suspends."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    async def execute(self, sql: str, *args: Any) -> None:
        self._conn.execute(sql, args)

    async def executemany(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        self._conn.executemany(sql, rows)

    async def fetch(self, sql: str, *args: Any) -> list[Row]:
        return self._conn.execute(sql, args).fetchall()


def _transaction(conn: sqlite3.Connection, work: Callable[[Tx], Awaitable[Any]],
                 lock: WriteLock, checkpoints: Checkpointer) -> Any:
    with lock.held():  # our writers in turn (sqlite_lock.py), then SQLite's own lock
        checkpoints.before_transaction(conn)
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = _drive(work(_SqliteTx(conn)))  # type: ignore[arg-type]
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return result


def _drive(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that never suspends to its end, synchronously."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise RuntimeError("SQLite work must not await anything but its Tx")


# Checkpoints are the Checkpointer's (sqlite_wal.py), not the writer's. The WAL
# starts over every 10,000 pages (40 MiB) rather than SQLite's 1,000: a
# checkpoint copies each page once however often it was rewritten since, and
# the B-tree pages a commit touches (the tail of each index) are the same from
# one commit to the next (docs/benchmarks.md: what it gave, and that more gave
# nothing). The WAL file is cut back to 64 MiB after it starts over when it
# grew past that.
CHECKPOINTS = ("wal_autocheckpoint=0", f"journal_size_limit={64 << 20}")


class SqliteTaskStore(SqlTaskStore):
    blob_type = "BLOB"
    driver_errors = (sqlite3.Error, OSError)

    def __init__(self, path: str | Path, *, busy_timeout_ms: int = 5000,
                 snapshot_bytes: int = 64 * 1024) -> None:
        self._init_writes(snapshot_bytes)
        self.path = Path(path)
        self.busy_timeout_ms = busy_timeout_ms
        self._conn: sqlite3.Connection | None = None
        self._reader: sqlite3.Connection | None = None
        self._serving: int | None = None  # the lock file's descriptor (register_server)
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="a2a-sqlite")
        self.checkpoints = Checkpointer(self.path)
        self.write_lock = WriteLock(self.path)
        self.write_locks = [self.write_lock]  # one per shard (shards.py): metrics

    def __del__(self) -> None:
        self._thread.shutdown(wait=False)

    async def _in_thread(self, fn: Callable[[], Any]) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._thread, fn)

    async def open(self) -> None:
        def connect() -> None:
            if not self.path.parent.is_dir():  # a typo would serve an empty store
                raise FileNotFoundError(f"there is no folder {self.path.parent}: make it "
                                        "first, or name another")
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                   timeout=self.busy_timeout_ms / 1000)
            for pragma in ("journal_mode=WAL", "synchronous=NORMAL",
                           f"busy_timeout={self.busy_timeout_ms}", *CHECKPOINTS):
                conn.execute(f"PRAGMA {pragma}").fetchall()
            self._conn = conn
            self.write_lock.open()

        try:
            await self._in_thread(connect)
        except (sqlite3.Error, OSError) as exc:
            raise OSError(f"cannot open the SQLite store at {self.path}: {exc}") from exc
        await self._run(self._migrate)
        await self.checkpoints.open()
        reader = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                 timeout=0)
        reader.execute("PRAGMA query_only=1").fetchall()
        self._reader = reader

    async def register_server(self, alone: bool) -> None:
        """flock(2) on PATH.serving, exclusive when `alone`, else shared; the
        kernel lets it go when the process ends, however it ends."""
        lock = self.path.with_name(self.path.name + ".serving")
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, (fcntl.LOCK_EX if alone else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StoreInUseError(f"the SQLite store {self.path}", alone) from None
        self._serving = fd

    async def close(self) -> None:
        try:
            if self._conn is None:
                return
            await self._drain_writes()
            await self.checkpoints.close()
            if self._reader is not None:
                self._reader.close()
                self._reader = None

            def disconnect() -> None:
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None
                self.write_lock.close()

            await self._in_thread(disconnect)
        finally:  # the store is let go once nothing more of this server can reach it
            if self._serving is not None:
                os.close(self._serving)
                self._serving = None

    async def _run(self, work: Callable[[Tx], Awaitable[Any]]) -> Any:
        def transaction() -> Any:
            return _transaction(self._connection(), work, self.write_lock, self.checkpoints)

        result = await self._in_thread(transaction)
        self.checkpoints.committed()
        return result

    async def _commit_batch(self, batch: list[Write], riders: list[Rider]) -> Refused:
        """The batch's transaction, and before it, in the same hop, the reads
        riding with it (on the writer's connection, whose cache its own
        writes keep warm)."""
        answers: list[tuple[Any, BaseException | None]] = []

        def work() -> Refused:
            conn = self._connection()
            for read, _ in riders:
                try:
                    answers.append((read(conn), None))
                except sqlite3.Error as exc:
                    answers.append((None, exc))
            if not batch:
                return []
            queued, refused = _transaction(
                conn, lambda tx: write_batch(tx, batch, self._fences_of, self.lease),
                self.write_lock, self.checkpoints)
            if queued:
                self._queued = True  # read on the loop once this batch's events are out
            return refused  # type: ignore[no-any-return]

        try:
            refused = await self._in_thread(work)
            if batch:
                self.checkpoints.committed()
            return refused  # type: ignore[no-any-return]
        finally:
            for i, (_, answer) in enumerate(riders):
                value, error = answers[i] if i < len(answers) else (None, None)
                if answer.done():
                    continue
                if i >= len(answers) or error is not None:
                    answer.set_exception(self._failed(error or OSError("not read"), "reading"))
                else:
                    answer.set_result(value)

    async def task_for_message(self, scope: Scope, message_id: str,
                               claim: bool = False) -> str | None:
        """Read with the next group commit: a SendMessage reads this once, and a
        read on the loop's connection would find its cache emptied by the
        writer's last commit (docs/benchmarks.md: the two side by side)."""
        rows = await self._group.ride(lambda conn: conn.execute(
            "SELECT task_id FROM a2a_messages WHERE tenant = ? AND owner = ? AND message_id = ?",
            (scope.tenant, scope.owner, message_id)).fetchall())
        return str(rows[0][0]) if rows else None

    async def expired_leases(self, claim: Claim) -> bool:
        """Would `unsettled(claim)` take anything? A read, where the claim is a
        write that takes the file's lock (shards.py asks first)."""
        return bool(await self._query(
            "looking for expired leases", f"SELECT 1 FROM a2a_tasks WHERE {EXPIRED} LIMIT 1",
            *RUNNING, claim.now_ns, claim.holder))

    async def message_task_on_loop(self, scope: Scope, message_id: str) -> str | None:
        """`task_for_message` read on the loop's connection: for a shard this
        process seldom writes (shards.py), whose group commit is idle."""
        return await self._reads.task_for_message(scope, message_id)

    async def _read(self, sql: str, *args: Any) -> list[Row]:
        if self._reader is None:
            raise sqlite3.OperationalError("the store is not open")
        try:
            return self._reader.execute(sql, args).fetchall()
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode & 0xFF not in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                raise
        return await self._in_thread(  # type: ignore[no-any-return]
            lambda: self._connection().execute(sql, args).fetchall())

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise sqlite3.OperationalError("the store is not open")
        return self._conn
