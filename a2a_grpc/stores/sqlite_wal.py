"""The SQLite store's checkpoints, beside its writer instead of in its way.

In WAL mode a commit appends the pages it changed to the WAL; a checkpoint
copies them into the database file (under `synchronous=NORMAL`, the only
time either file is synced), and the WAL starts again from its beginning
only at a write transaction that begins with all of it copied. SQLite's
automatic checkpoint runs inside the commit that crosses its threshold: that
commit, and every write queued behind it, waited for the whole copy (the
SQLite store's p99 at 32 concurrent sends was that wait: docs/benchmarks.md).
Here:

- the writer never checkpoints on its own (`wal_autocheckpoint=0`);
- a thread of its own, on a connection of its own, copies what has been
  committed (PASSIVE: it never blocks the writer nor a reader), `interval`
  seconds after a commit found none scheduled (or after the copy under way
  ends): whatever is committed reaches the database file, synced, within
  about that;
- once the WAL holds `restart_frames` frames, copies follow each other until
  one leaves at most `tail_frames` uncopied (those committed while it ran);
  the writer then copies that tail itself before its next transaction
  (`before_transaction`), and that transaction starts the WAL over.

A copy that fails (another process checkpointing the same file, say) is
logged and left to the next one: a checkpoint never loses anything, a late
one only leaves the WAL longer.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

log = logging.getLogger("a2a_grpc.store")

PASSIVE = "PRAGMA wal_checkpoint(PASSIVE)"


class Checkpointer:
    def __init__(self, path: Path, *, interval: float = 1.0, restart_frames: int = 10_000,
                 tail_frames: int = 500) -> None:
        self.path = path
        self.interval, self.restart_frames, self.tail_frames = (
            interval, restart_frames, tail_frames)
        self._thread: ThreadPoolExecutor | None = None  # from open to close
        self._conn: sqlite3.Connection | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._copying: asyncio.Task[None] | None = None  # held: the loop keeps tasks weakly
        self._dirty = False  # committed since the last copy began
        self._waiters: list[asyncio.Future[None]] = []  # for the next copy to begin and end
        self._closing = True  # until open
        # Set on the loop, read and cleared in the writer's thread (a flag: no lock).
        self.tail_due = False
        self.copies = self.restarts = 0  # copies made here; tails the writer copied

    async def open(self) -> None:
        def connect() -> None:
            self._conn = sqlite3.connect(self.path, isolation_level=None,
                                         check_same_thread=False, timeout=0)

        self._thread = ThreadPoolExecutor(max_workers=1,
                                          thread_name_prefix="a2a-sqlite-checkpoint")
        await asyncio.get_running_loop().run_in_executor(self._thread, connect)
        self._closing = False

    def committed(self) -> None:
        """On the loop, after each commit: a copy is due `interval` from now (or
        from the end of the copy under way)."""
        self._dirty = True
        self._schedule(self.interval)

    def next_copy(self) -> asyncio.Future[None]:
        """Done when a copy that begins after this call has ended."""
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        return waiter

    def _schedule(self, delay: float) -> None:
        if self._timer is None and self._copying is None and not self._closing:
            self._timer = asyncio.get_running_loop().call_later(delay, self._copy)

    def before_transaction(self, writer: sqlite3.Connection) -> None:
        """In the writer's thread, before it begins a transaction: copy the tail
        when the WAL is due to start over."""
        if not self.tail_due:
            return
        self.tail_due = False
        try:
            busy = writer.execute(PASSIVE).fetchone()[0]
        except sqlite3.Error as exc:  # the transaction goes on; the next copy tries again
            log.warning("could not checkpoint the SQLite store's WAL (%s)", exc)
            return
        if not busy:
            self.restarts += 1

    def _copy(self) -> None:
        self._timer, self._dirty = None, False
        waiters, self._waiters = self._waiters, []
        self._copying = asyncio.get_running_loop().create_task(
            self._copy_once(waiters), name="a2a-sqlite-checkpoint")

    async def _copy_once(self, waiters: list[asyncio.Future[None]]) -> None:
        again = False
        try:
            busy, frames, copied = await asyncio.get_running_loop().run_in_executor(
                self._thread, self._checkpoint)
            self.copies += 1
            if not busy and frames >= self.restart_frames:
                if frames - copied <= self.tail_frames:
                    self.tail_due = True
                else:
                    again = True  # what was committed meanwhile, before the writer's tail
        except (sqlite3.Error, OSError) as exc:
            log.warning("could not checkpoint the SQLite store's WAL (%s): the next "
                        "commit tries again", exc)
        finally:
            self._copying = None
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)
        if again:
            self._schedule(0)
        elif self._dirty:
            self._schedule(self.interval)

    def _checkpoint(self) -> tuple[int, int, int]:
        """(busy, frames in the WAL, frames copied so far), as SQLite reports them."""
        if self._conn is None:
            raise sqlite3.OperationalError("the checkpointer is closed")
        row = self._conn.execute(PASSIVE).fetchone()
        return int(row[0]), int(row[1]), int(row[2])

    async def close(self) -> None:
        """Stop copying and close the connection; the writer's close, after
        this, copies the rest (SQLite checkpoints when its last connection
        closes)."""
        self._closing = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._copying is not None:
            await asyncio.shield(self._copying)

        def disconnect() -> None:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

        if self._thread is not None:
            await asyncio.get_running_loop().run_in_executor(self._thread, disconnect)
            self._thread.shutdown(wait=False)
            self._thread = None
