"""Running agents: the one writer of each live task, and one run per message.

- `TaskActor` owns a task while anything acts on it. Every change goes
  through `emit`: under the actor's lock it applies the event with the
  lifecycle reducer (in place; undone if the store refuses), stores the
  result with the next sequence number, then publishes the event. Store
  first, bus second: a subscriber that reads a snapshot with sequence n and
  then skips live events <= n sees every event exactly once.
- A new task is created lazily by the run's first event, with the user's
  message as its first history entry. So an agent that answers with a direct
  Message (or raises an A2AError before doing anything) leaves no task.
- `Run` is one `execute()` call. Its `started` future resolves on its first
  event (what `returnImmediately` waits for), its `settled` future when the
  task reaches a final or interrupted state, or the run ends.
- `ActorRegistry` hands out actors with a user count, so a task has at most
  one actor (one writer) in this process.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any

from generated.a2a_pb2 import (
    Message,
    SendMessageResponse,
    StreamResponse,
    Task,
    TaskState,
)

from .agent import AgentExecutor, RequestContext, TaskEvents
from .bus import EventBus
from .core import ids, lifecycle, states
from .core.errors import A2AError, InvalidAgentResponseError, TaskNotFoundError, public
from .stores import Scope, TaskStore

log = logging.getLogger("a2a_grpc.runtime")

Outcome = SendMessageResponse | BaseException
OnCreate = Callable[[Task], Coroutine[Any, Any, None]]


class _Turn:
    """The actor's mutex: FIFO, like asyncio.Lock, but an uncontended `enter`
    is an attribute test instead of two coroutine calls (about 1 µs, paid on
    every event). `leave` hands the turn straight to the first waiter, so no
    newcomer can overtake those already waiting."""

    __slots__ = ("_waiters", "held")

    def __init__(self) -> None:
        self.held = False
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def wait(self) -> None:
        """Wait until `leave` hands the turn to this caller (call when `held`)."""
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self.leave()  # handed the turn, then cancelled before taking it: pass it on
            raise  # a cancelled waiter stays queued; `leave` skips it

    def leave(self) -> None:
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self.held = False


class TaskActor:
    def __init__(
        self, scope: Scope, task_id: str, context_id: str, task: Task | None, seq: int,
        store: TaskStore, bus: EventBus, after_commit: Callable[[], None] | None = None,
    ) -> None:
        self.scope = scope
        self.task_id = task_id
        self.context_id = context_id
        self.task = task  # None until the first event creates it
        self.seq = seq
        self.runs: set[Run] = set()
        self.users = 0
        self._store = store
        self._bus = bus
        self._after_commit = after_commit  # set when push notifications are on
        self._turn = _Turn()  # one event at a time

    def snapshot(self) -> tuple[Task, int] | None:
        if self.task is None:
            return None
        copy = Task()
        copy.CopyFrom(self.task)
        return copy, self.seq

    async def emit(self, event: StreamResponse, run: Run | None) -> None:
        turn = self._turn
        if turn.held:
            await turn.wait()
        else:
            turn.held = True
        try:
            kind = event.WhichOneof("payload")
            if run is not None and run.replied:
                raise InvalidAgentResponseError("a direct reply must be the run's last event")
            if kind == "message":
                await self._reply(event, run)
                return
            if run is not None and run.pending is not None:
                await self._take_message(run.pending, run)
            if kind != "task":  # a bare Task event (TaskEvents.submit) only creates
                if self.task is None:
                    raise InvalidAgentResponseError("no task to apply this event to")
                if kind == "status_update" and not event.status_update.status.HasField(
                    "timestamp"
                ):
                    ids.stamp(event.status_update.status.timestamp)
                # In place (raises before anything changes); undone if the store
                # refuses. A copy would cost more than the event on a streamed task.
                undo = lifecycle.apply(self.task, event)
                await self._commit(self.task, event, undo=undo)
            if run is not None:
                run.mark_started()
            if kind == "status_update" and self.task and self.task.status.state in states.SETTLED:
                for r in list(self.runs):
                    r.settle(self.response())
        finally:
            turn.leave()

    async def _reply(self, event: StreamResponse, run: Run | None) -> None:
        if run is None or run.emitted or self.task is not None:
            raise InvalidAgentResponseError(
                "a direct Message reply must be the only answer to a new message"
            )
        run.replied = True
        self.seq += 1
        run.first_seq = self.seq
        await self._bus.publish(self.task_id, self.seq, event)
        run.mark_started()
        run.settle(SendMessageResponse(message=event.message))

    async def _take_message(self, message: Message, run: Run) -> None:
        """Record the user's message: create the task, or add to its history."""
        if self.task is not None and self.task.status.state in states.TERMINAL:
            lifecycle.check_follow_up(self.task, message)  # raises: final tasks take none
        run.first_seq = self.seq + 1
        if self.task is None:
            task = Task(id=self.task_id, context_id=self.context_id)  # built in place: a
            task.status.state = states.SUBMITTED  # constructor copies what it is given
            ids.stamp(task.status.timestamp)
            task.history.append(message)
            await self._commit(task, None, message.message_id)
            run.pending = None  # recorded: never again, even if what follows fails
            if run.on_create is not None:
                await run.on_create(task)
        else:
            updated = Task()
            updated.CopyFrom(self.task)
            updated.history.append(message)
            await self._commit(updated, None, message.message_id)
            run.pending = None

    async def _commit(
        self, task: Task, event: StreamResponse | None, message_id: str | None = None,
        undo: lifecycle.Undo | None = None,
    ) -> None:
        """Store `task` as of the next event, then publish the event. `undo`: the
        event was applied to the task in place (`lifecycle.apply`); undone if
        the store refuses, and the store is told the task is derived."""
        seq = self.seq + 1
        if event is None:  # a new task or a user message: the event is the task itself
            event = StreamResponse()
            event.task.CopyFrom(task)
        notify = self._after_commit is not None
        try:
            await self._store.append(self.scope, task, seq, event, message_id, notify,
                                     derived=undo is not None)
        except BaseException:
            if undo is not None:
                undo()
            raise
        self.task, self.seq = task, seq
        await self._bus.publish(self.task_id, seq, event)
        if self._after_commit is not None:
            self._after_commit()

    def response(self) -> SendMessageResponse:
        response = SendMessageResponse()
        if self.task is not None:
            response.task.CopyFrom(self.task)  # one copy (the constructor would make two)
        return response

    async def finish(self, state: TaskState, text: str) -> None:
        """Force the task into final `state` unless it is already settled."""
        if self.task is None or self.task.status.state in states.TERMINAL:
            return  # no task was created (the call itself failed), or it is final
        events = TaskEvents(_Sink(self, None), self.task_id, self.context_id)
        await events.status(state, text)

    async def broken(self, error: BaseException) -> None:
        """The task can't be written any more: end its streams with `error`."""
        await self._bus.publish_error(self.task_id, error)

    def watched(self) -> bool:
        """Is a stream subscribed to this task's events?"""
        return self._bus.subscriber_count(self.task_id) > 0

    def busy(self) -> bool:
        """Is a run still working toward a final or interrupted state?"""
        return any(not r.settled.done() for r in self.runs)

    async def cancel(self, executor: AgentExecutor) -> None:
        """CancelTask: let the agent stop, stop what still runs, mark CANCELED."""
        snap = self.snapshot()
        if snap is not None:
            events = TaskEvents(_Sink(self, None), self.task_id, self.context_id)
            try:
                await executor.cancel(snap[0], events)
            except A2AError:
                raise
            except Exception:
                log.exception("agent cancel() failed for task %s", self.task_id)
        stopping = [r for r in self.runs if not r.aio_task.done()]
        for r in stopping:
            r.cancelled = True
            r.aio_task.cancel()
        await asyncio.gather(*(r.aio_task for r in stopping), return_exceptions=True)
        await self.finish(states.CANCELED, "The task was canceled.")
        for r in stopping:
            r.settle(self.response())


# An agent that emits without awaiting anything else yields to the loop after its
# first event if a stream waits for it (the first event goes out at once), then
# whenever it has held the loop for QUANTUM_S: it can't hold other calls for
# longer than that, and the events in between reach a stream together (one
# write for many on SSE, instead of a loop turn and a system call each).
QUANTUM_S = 0.00025
# While a streaming call waits for its first event, the quantum is 0: busy agents
# yield at each event, so the loop turns a new stream still needs (its run's start,
# its first event reaching the transport) don't each wait behind every other
# agent's quantum. Measured with 4 streams of 100 events: the first SSE event came
# 40% sooner, the first gRPC message 13%, events/s unchanged within noise. A call
# counts as starting until its transport asks for the second event, so after the
# first was written (see EventStream). One count per thread, so per event loop:
# every call on the loop shares it.


class _Starting(threading.local):
    count = 0


_starting = _Starting()


def hold_starting() -> Callable[[], None]:
    """Mark a call as waiting for its first event (see QUANTUM_S) until the
    returned function is called (once or more: only the first call counts)."""
    _starting.count += 1
    held = True

    def release() -> None:
        nonlocal held
        if held:
            held = False
            _starting.count -= 1
    return release


class _Sink:
    __slots__ = ("_actor", "_count", "_run", "_since")

    def __init__(self, actor: TaskActor, run: Run | None) -> None:
        self._actor, self._run = actor, run
        self._count = 0
        self._since = time.perf_counter()  # when this sink last gave the loop back

    async def emit(self, event: StreamResponse) -> None:
        if self._run is not None and self._run.cancelled:
            raise asyncio.CancelledError  # a canceled run writes nothing more
        await self._actor.emit(event, self._run)
        if self._run is not None:
            self._run.emitted = True
        # An agent that never awaits anything else would otherwise run to its end
        # before any stream sends its first event, and hold every other call meanwhile.
        self._count += 1
        if (_starting.count or time.perf_counter() - self._since >= QUANTUM_S
                or (self._count == 1 and self._actor.watched())):
            await asyncio.sleep(0)
            self._since = time.perf_counter()


class Run:
    """One execute() of the agent for one incoming message."""

    def __init__(
        self, actor: TaskActor, executor: AgentExecutor, context: RequestContext | None,
        on_create: OnCreate | None = None,
    ) -> None:
        self.actor = actor
        self.executor = executor
        self.context = context  # None: resuming a task after a restart
        self.on_create = on_create  # called once the task this run creates is stored
        self.pending: Message | None = context.message if context is not None else None
        self.emitted = False
        self.replied = False
        self.cancelled = False
        self.first_seq = 0  # sequence number of this run's first event
        loop = asyncio.get_running_loop()
        self.started: asyncio.Future[BaseException | None] = loop.create_future()
        self.settled: asyncio.Future[Outcome] = loop.create_future()
        self.aio_task: asyncio.Task[None]

    def mark_started(self, error: BaseException | None = None) -> None:
        if not self.started.done():
            self.started.set_result(error)

    def settle(self, outcome: Outcome) -> None:
        self.mark_started(outcome if isinstance(outcome, BaseException) else None)
        if not self.settled.done():
            self.settled.set_result(outcome)

    async def main(self) -> None:
        events = TaskEvents(_Sink(self.actor, self), self.actor.task_id, self.actor.context_id)
        try:
            if self.context is not None:
                await self.executor.execute(self.context, events)
            else:
                snap = self.actor.snapshot()
                assert snap is not None
                await self.executor.resume(snap[0], events)
        except asyncio.CancelledError:
            if not self.cancelled:
                raise  # the server is shutting down
        except Exception as exc:
            if not self.emitted and isinstance(exc, A2AError) and public(exc) is exc:
                self.settle(exc)  # refused before doing anything: the call fails
            else:
                log.exception("agent failed on task %s", self.actor.task_id)
                await self._fail("The agent failed while handling this message.")
        else:
            task = self.actor.task
            if not self.replied and (task is None or task.status.state not in states.SETTLED):
                await self._fail("The agent stopped without finishing the task.")
        finally:
            self.actor.runs.discard(self)
            if not self.cancelled:
                self.settle(self.actor.response())

    async def _fail(self, text: str) -> None:
        try:
            if self.pending is not None:
                await self.actor.emit(StreamResponse(task=Task(id=self.actor.task_id)), self)
            await self.actor.finish(states.FAILED, text)
        except Exception as exc:  # the store itself failed: nothing more to write
            log.exception("could not mark task %s failed", self.actor.task_id)
            self.settle(exc)
            await self.actor.broken(exc)


class ActorRegistry:
    """At most one TaskActor per task id in this process."""

    def __init__(self, store: TaskStore, bus: EventBus,
                 after_commit: Callable[[], None] | None = None) -> None:
        self._store = store
        self._bus = bus
        self._after_commit = after_commit
        self._actors: dict[str, TaskActor] = {}

    def new(self, scope: Scope, task_id: str, context_id: str) -> TaskActor:
        actor = TaskActor(scope, task_id, context_id, None, 0, self._store, self._bus,
                          self._after_commit)
        self._actors[task_id] = actor
        return actor

    async def load(self, scope: Scope, task_id: str) -> TaskActor:
        """The live actor of an existing task, or one made from the store."""
        actor = self._actors.get(task_id)
        if actor is not None:
            if actor.scope != scope or actor.task is None:
                raise TaskNotFoundError(f"task {task_id!r} not found")
            return actor
        stored = await self._store.get(scope, task_id)
        if stored is None:
            raise TaskNotFoundError(f"task {task_id!r} not found")
        actor = self._actors.get(task_id)  # another caller may have loaded it meanwhile
        if actor is None:
            actor = TaskActor(scope, task_id, stored.task.context_id, stored.task, stored.seq,
                              self._store, self._bus, self._after_commit)
            self._actors[task_id] = actor
        return actor

    @asynccontextmanager
    async def loaded(self, scope: Scope, task_id: str) -> AsyncIterator[TaskActor]:
        """`load`, holding the actor in the registry for the block's duration."""
        actor = await self.load(scope, task_id)
        actor.users += 1
        try:
            yield actor
        finally:
            self.release(actor)

    def start(
        self, actor: TaskActor, executor: AgentExecutor, context: RequestContext | None,
        on_create: OnCreate | None = None,
    ) -> Run:
        """Run `executor` on `actor`; the actor stays registered until it ends."""
        run = Run(actor, executor, context, on_create)
        actor.runs.add(run)
        actor.users += 1
        run.aio_task = asyncio.create_task(run.main(), name=f"a2a-run-{actor.task_id}")
        run.aio_task.add_done_callback(lambda _: self.release(actor))
        return run

    async def close(self) -> None:
        """Stop every run (server shutdown)."""
        tasks = [r.aio_task for a in self._actors.values() for r in a.runs]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def release(self, actor: TaskActor) -> None:
        actor.users -= 1
        if actor.users <= 0 and not actor.runs and self._actors.get(actor.task_id) is actor:
            del self._actors[actor.task_id]

    def __len__(self) -> int:
        return len(self._actors)
