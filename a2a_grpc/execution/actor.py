"""Running agents: the one writer of each live task, and one run per message.

- `TaskActor` owns a task while anything acts on it. Every change goes
  through `emit`: under the actor's lock it applies the event with the
  lifecycle reducer (in place; undone if the store refuses) and takes it,
  with the next sequence number, into the run's burst, which goes to the
  store as one write (burst.py); the journal (journal.py) publishes it once
  it is committed. Store first, bus second: a subscriber that reads a
  snapshot with sequence n and then skips live events <= n sees every event
  exactly once. Only an event that settles the task, and what answers a
  caller, waits for its commit.
- A new task is created lazily by the run's first event, with the user's
  message as its first history entry. So an agent that answers with a direct
  Message (or raises an A2AError before doing anything) leaves no task.
- At most one run (`run.Run`, one `execute()`) is active on a task; a
  follow-up message that arrives meanwhile is recorded and queued, and runs
  next unless the active run takes it (see run.py).
- `actors.ActorRegistry` hands out actors, at most one per task.
- An actor whose append the store's fence refuses (TaskFencedError: another
  replica took the task over, or wrote it meanwhile) has lost the task for
  good (`fenced`): its runs are stopped, every later event is refused, and
  the registry reads the task afresh for whoever comes next.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable

from a2a_grpc.agent import TaskEvents
from a2a_grpc.bus import EventBus
from a2a_grpc.core import ids, lifecycle, states
from a2a_grpc.core.errors import InvalidAgentResponseError
from a2a_grpc.execution.burst import Burst
from a2a_grpc.execution.journal import MAX_IN_FLIGHT, Entry, Journal, tell_runs_of_loss
from a2a_grpc.execution.run_state import OnCreate, Outcome, RunState
from a2a_grpc.execution.turns import Sink, Turn
from a2a_grpc.generated.a2a_pb2 import (
    Message,
    SendMessageResponse,
    StreamResponse,
    Task,
    TaskState,
)
from a2a_grpc.observe import tracing
from a2a_grpc.stores import Scope, TaskFencedError, TaskStore

log = logging.getLogger("a2a_grpc.runtime")

__all__ = ["OnCreate", "Outcome", "TaskActor"]


class TaskActor:
    # Replicas: a new task's first write is committed before its agent goes on, so
    # that of the same messageId sent to two replicas at once only one agent
    # works past its first event (the other's write is refused: MessageTakenError).
    wait_creation = False
    # The A2A 1.1 preview: a task this actor creates counts generations
    # (lifecycle.py); its later events are counted whatever this says.
    counts_generations = False

    def __init__(
        self, scope: Scope, task_id: str, context_id: str, task: Task | None, seq: int,
        store: TaskStore, bus: EventBus, after_commit: Callable[[], None] | None = None,
        epoch: int = 0,
    ) -> None:
        self.scope = scope
        self.task_id = task_id
        self.context_id = context_id
        self.task = task  # None until the first event creates it
        self.seq = seq
        self.epoch = epoch  # the task's epoch when it was read: what the store's fence checks
        self.fenced: TaskFencedError | None = None  # set once the fence refused a write
        self.runs: set[RunState] = set()  # at most one whose execute() has not returned
        self.waiting: deque[RunState] = deque()  # follow-ups recorded, not yet run or taken
        self.users = 0
        self._store = store
        self._bus = bus
        self._after_commit = after_commit  # set when push notifications are on
        self._turn = Turn()  # one event at a time
        self._arrival: asyncio.Future[None] | None = None  # a run waits for a follow-up
        self._journal = Journal(seq)
        self._burst = Burst(self._journal)

    def snapshot(self) -> tuple[Task, int] | None:
        if self.task is None:
            return None
        copy = Task()
        copy.CopyFrom(self.task)
        return copy, self.seq

    async def emit(self, event: StreamResponse, run: RunState | None) -> bool:
        """Apply and store `event`; True when this waited (for the task's turn, or
        for the event's commit) and so gave the loop to others meanwhile."""
        turn = self._turn
        waited = turn.held
        if waited:  # Turn.enter(), inlined: a coroutine call less on every event
            await turn.wait()
        else:
            turn.held = True
        try:
            if self.fenced is not None:
                raise self.fenced
            if run is not None and run.lost is not None:  # its earlier events were not stored
                error, run.lost = run.lost, None
                raise error
            kind = event.WhichOneof("payload")
            if run is not None and run.replied:
                raise InvalidAgentResponseError("a direct reply must be the run's last event")
            if kind == "message":
                await self._reply(event, run)
                return waited
            if run is not None and run.pending is not None:
                await self._take_message(run.pending, run)
            settles = False
            if kind != "task" or self.task is None:  # a bare Task on a task: nothing to do
                if kind == "status_update":
                    status = event.status_update.status
                    if not status.HasField("timestamp"):
                        ids.stamp(status.timestamp)
                    settles = status.state in states.SETTLED
                # In place (raises before anything changes); undone if the store
                # refuses. A copy would cost more than the event on a streamed task.
                task = self.task
                if task is None:  # created by this event (a Task): stored whole
                    created = lifecycle.apply(None, event,
                                              counted=self.counts_generations).task
                    assert created is not None  # only a Message makes none, handled above
                    await self._commit(created, None, run=run)
                else:
                    undo = lifecycle.update(task, event, kind)
                    waited = await self._commit(task, event, undo=undo, run=run,
                                                wait=run is None or settles) or waited
            if run is not None:
                run.mark_started()
            if settles:  # the task is now as the event says (a status is never first)
                for r in list(self.runs):
                    r.settle(self.response())
        finally:
            turn.leave()
        return waited

    async def record(self, run: RunState) -> None:
        """Write a follow-up's message into the history now; it waits for a run."""
        turn = self._turn
        await turn.enter()
        try:
            assert run.pending is not None
            await self._take_message(run.pending, run)
        finally:
            turn.leave()
        run.mark_started()

    def queue(self, run: RunState) -> None:
        self.waiting.append(run)
        if self._arrival is not None and not self._arrival.done():
            self._arrival.set_result(None)

    async def arrival(self) -> None:
        """Wait until a follow-up is queued."""
        self._arrival = asyncio.get_running_loop().create_future()
        try:
            await self._arrival
        finally:
            self._arrival = None

    async def mark_handed_off(self, handed_off: bool) -> None:
        await self._committed(None)  # after the task's events, not before
        await self._store.set_handed_off(self.scope, self.task_id, handed_off)

    async def flush(self, run: RunState) -> None:
        """Wait until every event so far is committed; raise the store's error
        if any of `run`'s could not be."""
        try:
            await self._committed(run)
        except Exception as exc:
            if run.lost is exc:
                run.lost = None
            raise
        if run.lost is not None:
            error, run.lost = run.lost, None
            raise error

    async def committed_response(self) -> SendMessageResponse:
        """The task as it stands, once that is committed."""
        response = self.response()
        await self._committed(None)
        return response

    def sink(self, run: RunState | None) -> Sink:
        return Sink(self, run)

    async def _reply(self, event: StreamResponse, run: RunState | None) -> None:
        if run is None:
            raise InvalidAgentResponseError("only a run answering a new message can reply")
        lifecycle.apply(self.task, event)  # raises once there is a task
        run.replied = True
        self.seq += 1  # no task, so nothing is stored, nor waits to be
        run.first_seq = self._journal.committed = self.seq
        await self._bus.publish(self.task_id, self.seq, event)
        run.mark_started()
        run.settle(SendMessageResponse(message=event.message))

    async def _take_message(self, message: Message, run: RunState) -> None:
        """Record the user's message: create the task, or add to its history."""
        if self.task is not None:
            lifecycle.check_follow_up(self.task, message)  # e.g. final by now: refused
        run.first_seq = self.seq + 1
        if self.task is None:
            first = StreamResponse()  # built in place: a constructor copies what it is given
            new = first.task
            new.id, new.context_id = self.task_id, self.context_id
            ids.stamp(new.status.timestamp)
            new.history.append(message)
            task = lifecycle.apply(None, first, counted=self.counts_generations).task
            assert task is not None
            # Only a push config saved with the task waits for it: the agent's first
            # events usually go to the store with it (put back if it is lost).
            await self._commit(task, None, message, run=run,
                               wait=run.on_create is not None or self.wait_creation)
            run.pending = None  # recorded: never again, even if what follows fails
            if run.on_create is not None:
                await run.on_create(task)
        else:
            updated = Task()
            updated.CopyFrom(self.task)
            updated.history.append(message)
            await self._commit(updated, None, message, run=run)
            run.pending = None

    async def _commit(
        self, task: Task, event: StreamResponse | None, message: Message | None = None,
        undo: lifecycle.Undo | None = None, run: RunState | None = None, wait: bool = True,
    ) -> bool:
        """Take `task` as of the next event into the burst (burst.py), published
        once it is committed. `undo`: the event was applied to the task in
        place (`lifecycle.apply`); undone if the store refuses, and the store
        is told the task is derived. `wait`: write the burst and return only
        once the event is published. True when this waited for a commit."""
        seq = self.seq + 1
        if event is None:  # a new task or a user message: the event is the task itself
            event = StreamResponse()
            event.task.CopyFrom(task)
        burst = self._burst
        if message is not None and burst.must_write(message):  # (an event records none)
            burst.write(self, run)
        if burst.take(Entry(seq, event, message.message_id if message else None,
                            undo is not None, undo, None if undo else self.task, run, message)):
            asyncio.get_running_loop().call_soon(burst.write_later, self)
        self.task, self.seq = task, seq
        if not wait:
            if seq - self._journal.committed >= MAX_IN_FLIGHT:  # far ahead of its store
                burst.write(self, run)
                return await self._journal.through(seq - MAX_IN_FLIGHT // 2)
            if burst.full():
                burst.write(self, run)
            return False
        try:
            if tracing.tracer() is not None:
                with tracing.child("a2a.store.commit", {"a2a.task_id": self.task_id,
                                                        "a2a.event.seq": seq}):
                    return await burst.through(self, seq, run)
            return await burst.through(self, seq, run)
        except Exception as exc:
            if run is not None and run.lost is exc:
                run.lost = None  # told here
            raise

    async def release(self, run: RunState | None) -> None:
        """Write the burst now, before a run gives the loop back: a stream then
        sends its events in this turn of the loop."""
        if self._burst.entries:
            turn = self._turn
            await turn.enter()
            try:
                await self._burst.through(self, self.seq, run, published=False)
            finally:
                turn.leave()

    async def _committed(self, run: RunState | None) -> None:
        """Wait until every event so far is committed and published (outside the
        turn: the burst goes through the journal, which publishes in order)."""
        if self._burst.entries:
            self._burst.write(self, run)
        await self._journal.through(self.seq)

    # -- the actor as its burst sees it (burst.Owner) --

    def append(self, events: list[Entry]) -> Awaitable[None]:
        assert self.task is not None  # made by the burst's first event, if not before
        return self._store.append_many(self.scope, self.task, events,
                                       self._after_commit is not None, self.epoch)

    async def publish(self, entries: list[Entry]) -> None:
        await self._bus.publish_many(self.task_id, entries)
        if self._after_commit is not None:  # the push sender: once a write, not once an event
            self._after_commit()

    def restore(self, lost: list[Entry], error: BaseException) -> None:
        """Back to before `lost` (in order), which were not stored, nor will the
        burst made on top of them be."""
        if burst := self._burst.drop():
            lost = lost + burst
            tell_runs_of_loss(burst, error)
        task = self.task
        for entry in reversed(lost):
            if entry.undo is not None:
                entry.undo()
            else:
                task = entry.before
        self.task, self.seq = task, lost[0].seq - 1
        if isinstance(error, TaskFencedError):
            self._lose(error)

    def stop(self, runs: set[RunState]) -> None:
        if self.fenced is None:  # (a fenced actor stopped its runs already)
            for run in runs:
                run.interrupt()

    def _lose(self, error: TaskFencedError) -> None:
        """The store refused a write of ours: the task is no longer ours to write.
        Stop the runs on it (they settle with `error`; see run.py)."""
        if self.fenced is not None:
            return
        self.fenced = error
        log.warning("lost task %s: %s. Its run stops; this replica follows the task as "
                    "it now stands", self.task_id, error.why)
        current = asyncio.current_task()
        for run in self.runs:
            if run.aio_task is not None and run.aio_task is not current:
                run.aio_task.cancel()

    def response(self) -> SendMessageResponse:
        response = SendMessageResponse()
        if self.task is not None:
            response.task.CopyFrom(self.task)  # one copy (the constructor would make two)
        return response

    async def finish(self, state: TaskState, text: str) -> None:
        """Force the task into final `state` unless it is already settled."""
        if self.task is None or self.task.status.state in states.TERMINAL:
            return  # no task was created (the call itself failed), or it is final
        events = TaskEvents(Sink(self, None), self.task_id, self.context_id)
        await events.status(state, text)

    def running(self) -> bool:
        """Is a run's execute() still going on this task?"""
        return bool(self.runs)

    async def broken(self, error: BaseException) -> None:
        """The task can't be written any more: end its streams with `error`."""
        await self._bus.publish_error(self.task_id, error)

    def watched(self) -> bool:
        """Is a stream subscribed to this task's events?"""
        return self._bus.subscriber_count(self.task_id) > 0
