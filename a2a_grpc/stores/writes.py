"""How the durable stores write: one record per append, snapshots now and
then, and group commit.

- `Write` is everything an append stores, taken from the caller's objects
  when `append` is called (the caller keeps changing them); `write_of`
  makes one for the events of an `append_many` (a run's burst).
- `SnapshotPolicy` decides when a task's snapshot is rewritten: when the task
  comes whole (a new task, a user message), when it is final, and when the
  events logged since the last snapshot add up to as many bytes as the
  snapshot itself (at least `min_bytes`). Between
  snapshots an event costs its own row, whatever the size of the task; the
  snapshots of a task that grows cost, all told, about as much as the
  growth (doubling, like a growing array), and a read folds at most a
  snapshot's worth of events.
- `GroupCommit` queues the writes and commits whatever has queued while the
  previous transaction was in flight in one transaction: one commit for
  many writes, each caller released once its own write is committed.
"""

from __future__ import annotations

import asyncio
import logging
import struct
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, NamedTuple, TypeVar

from a2a_grpc.core import states
from a2a_grpc.core.ids import nanos_of
from a2a_grpc.generated.a2a_pb2 import Task
from a2a_grpc.stores.base import Appended, Scope
from a2a_grpc.stores.errors import StoreUnavailableError, TaskFencedError

log = logging.getLogger("a2a_grpc.store")

TERMINAL = frozenset(int(s) for s in states.TERMINAL)
FRAME = struct.Struct("<qI")  # in a row of several events: seq, length, then the event
T = TypeVar("T")
Timings = Callable[[str, float], None]


async def timed(timings: Timings | None, op: str, work: Awaitable[T]) -> T:
    """Await `work`, telling `timings` how long it took (TaskStore.timings)."""
    if timings is None:
        return await work
    started = time.perf_counter()
    try:
        return await work
    finally:
        timings(op, time.perf_counter() - started)


class Write(NamedTuple):
    scope: Scope
    task_id: str
    context_id: str
    seq: int  # the (last) event's sequence number
    event: bytes  # the event; several (`n` > 1): framed as a row of the log holds them
    state: int  # the task's state after the event
    status_ns: int  # its status timestamp (ListTasks sorts on it)
    listed: bool  # state or status timestamp may have changed: the task's row is written
    snapshot: bytes | None  # the task as of `seq`, when its snapshot is rewritten
    message_id: str | None
    notify: bool
    epoch: int  # the task's epoch when the writer read it (the fence)
    size: int = 1  # events in this write: seq - size + 1 to seq (`append_many`)

    @property
    def first(self) -> int:
        """The sequence number of the write's first event."""
        return self.seq - self.size + 1


def write_of(scope: Scope, task: Task, events: Sequence[Appended], notify: bool, epoch: int,
             policy: SnapshotPolicy) -> Write:
    """The `Write` of an `append_many`: its events as one row of the log, and
    one snapshot (as of the last event, the only one there is a task for) if
    any of them makes one due."""
    status = task.status
    state = int(status.state)
    key = (scope.tenant, task.id)
    due = listed = False
    message_id = None
    bodies = []
    for appended in events:
        event, derived = appended.event, appended.derived
        body = event.SerializeToString()
        bodies.append(body)
        due = policy.due(key, derived, state, len(body)) or due
        listed = listed or not derived or event.HasField("status_update")
        message_id = appended.message_id or message_id
    if len(bodies) == 1:
        body = bodies[0]
    else:
        body = b"".join(b for appended, one in zip(events, bodies, strict=True)
                        for b in (FRAME.pack(appended.seq, len(one)), one))
    snapshot = None
    if due:
        snapshot = task.SerializeToString()
        policy.taken(key, state, len(snapshot))
    return Write(scope, task.id, task.context_id, events[-1].seq, body, state,
                 nanos_of(status.timestamp), listed, snapshot, message_id, notify, epoch,
                 len(events))


class SnapshotPolicy:
    """When to rewrite a task's snapshot. What it remembers only saves work: a
    task it does not know (forgotten, or written by another process) gets a
    snapshot at its next event."""

    def __init__(self, min_bytes: int = 64 * 1024, tasks: int = 10_000) -> None:
        self.min_bytes = min_bytes
        self._tasks = tasks
        # (tenant, task id) -> [the snapshot's size, bytes logged since]
        self._known: dict[tuple[str, str], list[int]] = {}

    def due(self, key: tuple[str, str], derived: bool, state: int, event_size: int) -> bool:
        known = self._known.get(key)
        if not derived or known is None or state in TERMINAL:
            return True
        known[1] += event_size
        return known[1] >= max(self.min_bytes, known[0])

    def taken(self, key: tuple[str, str], state: int, size: int) -> None:
        """A snapshot of `size` bytes was written as of the latest event."""
        if state in TERMINAL:  # a final task rarely takes another event
            self._known.pop(key, None)
            return
        if key not in self._known and len(self._known) >= self._tasks:
            del self._known[next(iter(self._known))]  # the oldest entry
        self._known[key] = [size, 0]


Rider = tuple[Callable[[Any], Any], "asyncio.Future[Any]"]  # a read, and who waits for it
Refused = list[tuple[Write, BaseException]]  # writes the fence refused, and why (fence.py)
Batch = Callable[[list[Write], list[Rider]], Awaitable[Refused]]


class GroupCommit:
    """Writes queued while a transaction is in flight go together in the next.

    `commit(batch)` writes a batch in one transaction, less the writes the
    fence refuses (it returns those). When it fails, each
    write is retried alone, so one bad write does not fail the others. Once a
    task's write failed, its later writes fail with it (they were made on top
    of it: committing them would leave a hole in its log) until the writer
    starts again from the failed one (a write with its sequence number or
    lower). `driver_errors` become StoreUnavailableError."""

    def __init__(self, commit: Batch, fail: Callable[[BaseException, Write], BaseException],
                 driver_errors: tuple[type[BaseException], ...], max_batch: int = 1000) -> None:
        self._commit, self._fail, self._driver_errors = commit, fail, driver_errors
        self._max = max_batch
        self._queue: list[tuple[Write, asyncio.Future[None]]] = []
        self._flushing: asyncio.Task[None] | None = None
        self._riders: list[Rider] = []
        self.transactions = self.writes = 0  # committed so far (a batch retried alone: each)
        # (scope, task id) -> (the sequence number that failed, the error)
        self._failed: dict[tuple[Scope, str], tuple[int, BaseException]] = {}

    def submit(self, write: Write) -> asyncio.Future[None]:
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        if self._failed:
            failed = self._failed.get((write.scope, write.task_id))
            if failed is not None:
                if write.first > failed[0]:
                    done.set_exception(failed[1])
                    return done
                del self._failed[(write.scope, write.task_id)]  # the writer starts again
        self._queue.append((write, done))
        if self._flushing is None:
            self._flushing = loop.create_task(self._flush(), name="a2a-group-commit")
        return done

    def ride(self, read: Callable[[Any], Any]) -> asyncio.Future[Any]:
        """Run `read` with the next batch (before its transaction), as `commit`
        runs riders: on the writer's connection, in the same hop."""
        loop = asyncio.get_running_loop()
        answer = loop.create_future()
        self._riders.append((read, answer))
        if self._flushing is None:
            self._flushing = loop.create_task(self._flush(), name="a2a-group-commit")
        return answer

    async def drain(self) -> None:
        """Wait until everything submitted so far is committed (or failed)."""
        while self._flushing is not None:
            await asyncio.shield(self._flushing)

    async def _flush(self) -> None:
        try:
            while self._queue or self._riders:
                batch, self._queue = self._queue[: self._max], self._queue[self._max:]
                riders, self._riders = self._riders, []
                await self._write(batch, riders)
        finally:
            self._flushing = None

    async def _write(self, batch: list[tuple[Write, asyncio.Future[None]]],
                     riders: list[Rider]) -> None:
        if self._failed:  # queued before an earlier write of their task failed
            batch = [one for one in batch if not self._refused(one)]
        if not batch:
            if riders:
                await self._commit([], riders)
            return
        try:
            refused = await self._commit([w for w, _ in batch], riders)
            self.transactions, self.writes = self.transactions + 1, self.writes + len(batch)
        except self._driver_errors as exc:
            if len(batch) == 1:
                self._refuse(batch[0], self._fail(exc, batch[0][0]))
                return
            log.warning("a group commit of %d writes failed (%s): retrying each alone",
                        len(batch), exc)
            for one in batch:
                if self._refused(one):
                    continue
                try:
                    fenced = await self._commit([one[0]], [])
                except self._driver_errors as alone:
                    self._refuse(one, self._fail(alone, one[0]))
                else:
                    self.transactions, self.writes = self.transactions + 1, self.writes + 1
                    self._settle_fenced([one], fenced)
            return
        except Exception:  # a bug, or an error of the driver not listed: as if the store failed
            log.exception("a group commit of %d writes failed", len(batch))
            error = StoreUnavailableError()
            for one in batch:  # the later writes of their tasks fail with them (no holes)
                self._refuse(one, error)
            _settle(riders, error)
        except BaseException as exc:  # cancelled: nobody is left waiting forever
            _settle(batch, exc)
            _settle(riders, exc)
            raise
        self._settle_fenced(batch, refused)

    def _settle_fenced(self, batch: list[tuple[Write, asyncio.Future[None]]],
                       refused: Refused) -> None:
        """Release a committed batch's writers: those the fence refused with its error."""
        if refused:
            why = {id(w): error for w, error in refused}
            for error in {id(e): e for e in why.values()}.values():
                log.info("refused a write of %s", error)
            for one in batch:
                refusal = why.get(id(one[0]))
                if refusal is not None:
                    _settle([one], refusal)
        _settle(batch, None)

    def _refuse(self, one: tuple[Write, asyncio.Future[None]], error: BaseException) -> None:
        if isinstance(error, TaskFencedError):
            # Not a hole: the store has the task whole, and checks each later write
            # on its own (a writer that read the task afresh is let in).
            _settle([one], error)
            return
        if len(self._failed) >= 10_000:
            del self._failed[next(iter(self._failed))]
        self._failed[(one[0].scope, one[0].task_id)] = (one[0].first, error)
        _settle([one], error)

    def _refused(self, one: tuple[Write, asyncio.Future[None]]) -> bool:
        """Fail `one` if an earlier write of its task failed."""
        failed = self._failed.get((one[0].scope, one[0].task_id))
        if failed is None or one[0].first <= failed[0]:
            return False
        _settle([one], failed[1])
        return True


def _settle(batch: list[tuple[Any, asyncio.Future[Any]]], error: BaseException | None) -> None:
    for _, done in batch:
        if done.done():
            continue
        if error is None:
            done.set_result(None)
        elif isinstance(error, asyncio.CancelledError):
            done.cancel()
        else:
            done.set_exception(error)
