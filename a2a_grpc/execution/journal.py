"""A task's writes between the store and the bus: a run's burst of events
goes to the store without waiting for its commit, and each event is
published (streams, push notifications) only once it is committed.

- The actor applies the events an agent emits without awaiting anything
  else, and hands them to the store as one write (burst.py); the store's
  pending write goes to the journal (`add`). A run's next event need not
  wait for it, and writes made meanwhile (of other tasks too) go to the
  store together (its group commit makes them one transaction).
- The journal takes the appends in order: once one is committed, its event
  is published; `through(seq)` waits until event `seq` is committed and
  published. Whatever must not be seen before it is durable waits on it:
  a run's settled answer, the answer to a non-blocking send, a hand-off.
- When an append fails, every event after the last committed one is undone
  (the actor's task and sequence number go back to the last committed
  event), each run whose events were lost learns it at its next event or at
  its end (`Run.lost`), and whoever waits gets the error. The actor is told
  the error too: a fenced append (TaskFencedError) means it lost the task.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, NamedTuple

from a2a_grpc.core.errors import UnavailableError
from a2a_grpc.generated.a2a_pb2 import Message, StreamResponse, Task

if TYPE_CHECKING:
    from a2a_grpc.execution.run_state import RunState

log = logging.getLogger("a2a_grpc.runtime")

# A run may have this many events on their way to the store before it waits
# for the older half of them: bounds what a fast agent holds in memory, and
# how far it runs ahead of its streams' readers.
MAX_IN_FLIGHT = 512


class Entry(NamedTuple):
    """One event of a write (what the store's `append_many` takes), and how to
    take it back if the write fails."""

    seq: int
    event: StreamResponse
    message_id: str | None  # of `message`
    derived: bool  # applied in place: `undo` takes it back
    undo: Callable[[], None] | None
    before: Task | None  # a whole new task (not derived): the one it replaced
    run: RunState | None
    message: Message | None  # the user's message this event records


class Pending(NamedTuple):
    seq: int  # its last event's
    entries: list[Entry]
    written: Awaitable[None]  # the store's append


Publish = Callable[[list[Entry]], Awaitable[None]]  # a write's events, in order
Restore = Callable[[list[Entry], BaseException], None]


class Journal:
    """Owned by one TaskActor, whose `publish` and `restore` (which puts the
    actor back at the last committed event: TaskActor._restore) it is given
    with the writes, and holds only while it has writes: an actor holding a
    journal holding the actor's methods is a reference cycle, and each would
    be left to the cyclic garbage collector (docs/benchmarks.md)."""

    __slots__ = ("_drainer", "_pending", "_publish", "_restore", "_waiters", "committed")

    def __init__(self, seq: int) -> None:
        self.committed = seq  # the last event committed and published
        self._publish: Publish | None = None
        self._restore: Restore | None = None
        self._pending: deque[Pending] = deque()
        self._waiters: deque[tuple[int, asyncio.Future[None]]] = deque()
        self._drainer: asyncio.Task[None] | None = None  # held: the loop keeps tasks weakly

    @property
    def idle(self) -> bool:
        return not self._pending

    def add(self, pending: Pending, publish: Publish, restore: Restore) -> None:
        self._pending.append(pending)
        if self._drainer is None:
            self._publish, self._restore = publish, restore
            self._drainer = asyncio.get_running_loop().create_task(self._drain(),
                                                                   name="a2a-journal")

    async def through(self, seq: int) -> bool:
        """Wait until event `seq` is committed and published; raises the store's
        error when it, or an event before it, could not be committed. True
        when this had to wait."""
        if seq <= self.committed:
            return False
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append((seq, waiter))
        await waiter
        return True

    async def _drain(self) -> None:
        try:
            while self._pending:
                last = self._pending[-1]
                # A store commits a task's appends in order: once the last is done,
                # so are those before it, and awaiting them does not suspend (one
                # wake-up for a burst instead of one per event).
                with contextlib.suppress(Exception):
                    await last.written
                while self._pending:
                    first = self._pending[0]
                    try:
                        await first.written
                    except BaseException as exc:
                        self._release()  # those before it were committed
                        self._lost(exc)
                        if not isinstance(exc, Exception):
                            raise
                        return
                    self._pending.popleft()
                    assert self._publish is not None  # set while draining
                    self.committed = first.seq
                    try:
                        await self._publish(first.entries)
                    except Exception:  # committed all the same: streams resume from the log
                        log.exception("could not publish events %d to %d",
                                      first.entries[0].seq, first.seq)
                    if first is last:
                        break
                self._release()
        finally:
            self._drainer = self._publish = self._restore = None

    def _release(self) -> None:
        waiters = self._waiters
        while waiters and waiters[0][0] <= self.committed:
            waiter = waiters.popleft()[1]
            if not waiter.done():
                waiter.set_result(None)

    def _lost(self, error: BaseException) -> None:
        pending = list(self._pending)
        self._pending.clear()
        for one in pending[1:]:  # failed with the first, or would: consume their outcome
            _consume(one.written)
        lost = [entry for one in pending for entry in one.entries]
        assert self._restore is not None  # set while draining
        self._restore(lost, error)
        tell_runs_of_loss(lost, error)
        while self._waiters:
            waiter = self._waiters.popleft()[1]
            if not waiter.done():
                waiter.set_exception(error)
        if isinstance(error, Exception) and not isinstance(error, UnavailableError):
            log.error("a task write failed: %r", error)


def tell_runs_of_loss(lost: list[Entry], error: BaseException,
                      skip: RunState | None = None) -> None:
    """Tell each run whose events were `lost` (but `skip`, told otherwise) at its
    next event or its end; a message they recorded is to be recorded again."""
    for entry in lost:
        run = entry.run
        if run is not None:
            if run.lost is None and run is not skip:
                run.lost = error
            if entry.message is not None:
                run.pending = entry.message  # not recorded after all


def _consume(written: Awaitable[None]) -> None:
    """Retrieve a discarded append's outcome, so asyncio reports no lost exception."""
    if isinstance(written, asyncio.Future):
        written.add_done_callback(lambda f: f.cancelled() or f.exception())
    elif isinstance(written, Coroutine):
        written.close()
