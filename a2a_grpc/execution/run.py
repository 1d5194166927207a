"""One run of the agent: an `execute()` for one incoming message.

- `started` resolves on the run's first event (what `returnImmediately`
  waits for), `settled` when the task reaches a final or interrupted state,
  when the run hands the task off, or when the run ends.
- A run may hand its task off (`hand_off`): the task stays SUBMITTED or
  WORKING, marked in the store so a restart does not fail it, and whoever
  waits on the run gets the task as it stands.
- A follow-up message that arrives while a run is active is written to the
  history at once and waits in the actor's queue as a run of its own, not
  started. The active run may take it (`context.follow_ups`): its caller then
  follows the taker, settling at the task's next settled state or when the
  taker ends. What is left when the active run ends runs next, in order.
- A run whose actor lost the task (the store's fence refused a write: another
  replica took it over) stops where it is and settles with that
  TaskFencedError; the handler then answers with the task as it now stands,
  and the run's stream follows it (handler/streaming.py). Nothing more of the
  run is written, nor is the task failed: it is the other replica's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from a2a_grpc.agent import AgentExecutor, FollowUps, RequestContext, TaskEvents
from a2a_grpc.core import states
from a2a_grpc.core.errors import A2AError, InvalidAgentResponseError, public
from a2a_grpc.execution.hosted import agent_for
from a2a_grpc.execution.run_state import OnCreate, Outcome, RunState
from a2a_grpc.generated.a2a_pb2 import Message, StreamResponse, Task
from a2a_grpc.observe import tracing
from a2a_grpc.stores import MessageTakenError, TaskFencedError

if TYPE_CHECKING:
    from a2a_grpc.execution.actor import TaskActor

log = logging.getLogger("a2a_grpc.runtime")
STOPPED = "The agent stopped without finishing the task."
FAILED = "The agent failed while handling this message."


class Run:
    """One execute() of the agent for one incoming message."""

    def __init__(
        self, actor: TaskActor, executor: AgentExecutor, context: RequestContext | None,
        on_create: OnCreate | None = None,
    ) -> None:
        self.actor = actor
        self.executor = agent_for(executor, actor.scope.tenant)
        self.context = context  # None: resuming a task after a restart
        self.on_create = on_create  # called once the task this run creates is stored
        self.pending: Message | None = context.message if context is not None else None
        self.emitted = False
        self.replied = False
        self.cancelled = False
        self.handed_off = False
        self.interrupted = False  # stopped: its events could not be stored (`interrupt`)
        self.first_seq = 0  # sequence number of this run's first event
        self.lost: BaseException | None = None  # events of this run the store refused
        # Follow-ups this run took from the queue: their callers settle with it.
        self.followers: list[RunState] = []
        loop = asyncio.get_running_loop()
        self.started: asyncio.Future[BaseException | None] = loop.create_future()
        self.settled: asyncio.Future[Outcome] = loop.create_future()
        self.aio_task: asyncio.Task[None] | None = None  # None until it runs
        # Called once as the run settles (idempotency.SentMessages forgets it then):
        # at once, where a callback on `settled` would wait for a turn of the loop.
        self.on_settled: Callable[[], None] | None = None
        if context is not None:
            # The inbox gets the followers list, not the run: a run <-> inbox cycle
            # would leave every run to the cyclic GC (docs/benchmarks.md: its cost).
            context.follow_ups = _Inbox(actor, self.followers)

    def mark_started(self, error: BaseException | None = None) -> None:
        if not self.started.done():
            self.started.set_result(error)

    def settle(self, outcome: Outcome) -> None:
        """Answer whoever waits on this run (once), and on the follow-ups it took."""
        self.mark_started(outcome if isinstance(outcome, BaseException) else None)
        if not self.settled.done():
            self.settled.set_result(outcome)
            forget, self.on_settled = self.on_settled, None  # it refers to this run: no cycle
            if forget is not None:
                forget()
        if self.followers:
            followers = self.followers[:]
            self.followers.clear()  # the same list: the inbox appends to it
            for f in followers:
                f.settle(self.actor.response())

    def interrupt(self) -> None:
        """Stop the agent wherever it waits: its events could not be stored (and
        it is told so: `lost`). The run then fails the task, as if the agent had
        raised that error."""
        if self.aio_task is not None and not self.aio_task.done() and not self.interrupted:
            self.interrupted = True
            self.aio_task.cancel()

    async def hand_off(self) -> None:
        actor = self.actor
        if self.replied:
            raise InvalidAgentResponseError("a direct reply ends the run: nothing to hand off")
        if actor.task is None or self.pending is not None:  # create it / record the message
            await actor.emit(StreamResponse(task=Task(id=actor.task_id)), self)
        assert actor.task is not None
        if actor.task.status.state in states.SETTLED:
            return
        await actor.flush(self)
        self.handed_off = True
        await actor.mark_handed_off(True)
        self.settle(actor.response())

    async def main(self) -> None:
        events = TaskEvents(self.actor.sink(self), self.actor.task_id, self.actor.context_id,
                            self.actor.scope.tenant, self.actor.scope.owner)
        try:
            task = self.actor.task
            if task is not None and task.status.state in (states.SUBMITTED, states.WORKING):
                await self.actor.mark_handed_off(False)  # a run holds it again
            with tracing.child("a2a.agent.execute" if self.context else "a2a.agent.resume",
                               {"a2a.task_id": self.actor.task_id,
                                "a2a.context_id": self.actor.context_id}):
                tracing.remember(self.actor.task_id)  # what its push notifications continue
                if self.context is not None:
                    await self.executor.execute(self.context, events)
                else:
                    snap = self.actor.snapshot()
                    assert snap is not None
                    await self.executor.resume(snap[0], events)
            await self.actor.flush(self)  # the agent's last events are stored, or it failed
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if self.interrupted and self.actor.fenced is None and not self.cancelled and current:
                current.uncancel()  # stopped because its events could not be stored
                error, self.lost = self.lost, None
                log.error("agent stopped on task %s: its events could not be stored (%r)",
                          self.actor.task_id, error)
                await self._fail(FAILED)
            elif not self.cancelled and self.actor.fenced is None:
                raise  # the server is shutting down
            elif self.actor.fenced is not None and current:
                current.uncancel()  # stopped because the task is lost: handled below
        except MessageTakenError as exc:  # another replica's task: nothing of ours to write
            self.settle(exc)
        except Exception as exc:
            if self.actor.fenced is not None:
                pass  # lost the task: settled below
            elif not self.emitted and isinstance(exc, A2AError) and public(exc) is exc:
                self.settle(exc)  # refused before doing anything: the call fails
            else:
                log.exception("agent failed on task %s", self.actor.task_id)
                await self._fail(FAILED)
        else:
            task = self.actor.task
            if self.actor.fenced is None and not (self.replied or self.handed_off or (
                    task is not None and task.status.state in states.SETTLED)):
                await self._returned()  # the agent returned with the task unsettled
        finally:
            self.actor.runs.discard(self)
            if self.actor.fenced is not None:
                self.settle(self.actor.fenced)
            elif not self.cancelled and (not self.settled.done() or self.followers):
                self.settle(self.actor.response())  # (a copy of the task: only if needed)

    async def _returned(self) -> None:
        task = self.actor.task
        if self.executor.hand_off_on_return:
            try:
                await self.hand_off()
                return
            except Exception:
                if self.actor.fenced is not None:
                    return  # lost the task meanwhile: nothing to hand off
                log.exception("could not hand task %s off", self.actor.task_id)
        else:
            log.warning("the agent returned leaving task %s %s: marked FAILED. Call "
                        "events.hand_off() before returning to leave it running on purpose",
                        self.actor.task_id,
                        states.name(task.status.state) if task else "not yet created")
        await self._fail(STOPPED)

    async def _fail(self, text: str) -> None:
        try:
            if self.pending is not None:
                await self.actor.emit(StreamResponse(task=Task(id=self.actor.task_id)), self)
            await self.actor.finish(states.FAILED, text)
        except TaskFencedError:
            pass  # another replica's task now: it is not ours to fail (settled by main)
        except Exception as exc:  # the store itself failed: nothing more to write
            log.exception("could not mark task %s failed", self.actor.task_id)
            self.settle(exc)
            await self.actor.broken(exc)


class _Inbox(FollowUps):
    """The follow-ups of one run: it takes them from the actor's queue."""

    __slots__ = ("_actor", "_followers")

    def __init__(self, actor: TaskActor, followers: list[RunState]) -> None:
        self._actor, self._followers = actor, followers

    def take(self) -> Message | None:
        waiting = self._actor.waiting
        if not waiting:
            return None
        handle = waiting.popleft()
        self._followers.append(handle)  # its caller settles with this run
        assert handle.context is not None
        return handle.context.message

    async def __anext__(self) -> Message:
        while (message := self.take()) is None:
            await self._actor.arrival()
        return message


async def cancel(actor: TaskActor, executor: AgentExecutor) -> None:
    """CancelTask: let the agent stop, stop the actor's runs, mark the task CANCELED."""
    snap = actor.snapshot()
    if snap is not None:
        events = TaskEvents(actor.sink(None), actor.task_id, actor.context_id,
                            actor.scope.tenant, actor.scope.owner)
        try:
            await agent_for(executor, actor.scope.tenant).cancel(snap[0], events)
        except A2AError:
            raise
        except Exception:
            log.exception("agent cancel() failed for task %s", actor.task_id)
    stopping = [(r, r.aio_task) for r in actor.runs
                if r.aio_task is not None and not r.aio_task.done()]
    for r, aio_task in stopping:
        r.cancelled = True
        aio_task.cancel()
    await asyncio.gather(*(t for _, t in stopping), return_exceptions=True)
    await actor.finish(states.CANCELED, "The task was canceled.")
    for r, _ in stopping:
        r.settle(actor.response())
