"""`ActorRegistry`: at most one TaskActor (one writer) per task in this process.

Actors are handed out with a user count and dropped when nobody uses them.
The registry starts runs, queues follow-ups behind the active run and starts
the next when one ends. Writers outside any run (a task continued later
through `task_events`) go through the same actor. An actor that lost its task
(`TaskActor.fenced`) is never handed out again: the next caller gets one read
afresh from the store.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import cast

from a2a_grpc.agent import AgentExecutor, RequestContext, TaskEvents
from a2a_grpc.bus import EventBus
from a2a_grpc.core import states
from a2a_grpc.core.errors import TaskNotFoundError
from a2a_grpc.execution import run as runs
from a2a_grpc.execution.actor import TaskActor
from a2a_grpc.execution.run import Run
from a2a_grpc.execution.run_state import OnCreate
from a2a_grpc.generated.a2a_pb2 import StreamResponse
from a2a_grpc.stores import Scope, TaskFencedError, TaskStore

log = logging.getLogger("a2a_grpc.runtime")


class ActorRegistry:
    def __init__(self, store: TaskStore, bus: EventBus,
                 after_commit: Callable[[], None] | None = None) -> None:
        self._store = store
        self._bus = bus
        self._after_commit = after_commit
        self._actors: dict[str, TaskActor] = {}
        self._closing = False  # shutting down: queued follow-ups start no run
        self._running: dict[str, int] = {}  # owner -> runs going on their tasks
        self.wait_creation = False  # replicas: see TaskActor.wait_creation
        self.counts_generations = False  # the A2A 1.1 preview: TaskActor.counts_generations

    def running(self, owner: str) -> int:
        """How many runs are going on `owner`'s tasks in this process."""
        return self._running.get(owner, 0)

    def running_tasks(self) -> list[str]:
        """Tasks a run of this process is on, and not lost to another writer."""
        return [task_id for task_id, actor in self._actors.items()
                if actor.running() and actor.fenced is None]

    def runs_going(self) -> int:
        """How many runs are going on in this process."""
        return sum(self._running.values())

    def live(self, task_id: str) -> bool:
        """Is there an actor for this task in this process right now?"""
        return task_id in self._actors

    def new(self, scope: Scope, task_id: str, context_id: str) -> TaskActor:
        actor = TaskActor(scope, task_id, context_id, None, 0, self._store, self._bus,
                          self._after_commit)
        actor.wait_creation = self.wait_creation
        actor.counts_generations = self.counts_generations
        self._actors[task_id] = actor
        return actor

    async def load(self, scope: Scope, task_id: str) -> TaskActor:
        """The live actor of an existing task, or one made from the store."""
        actor = self._actors.get(task_id)
        if actor is not None and actor.fenced is None:
            if actor.scope != scope or actor.task is None:
                raise TaskNotFoundError(f"task {task_id!r} not found")
            return actor
        stored = await self._store.get(scope, task_id)
        if stored is None:
            raise TaskNotFoundError(f"task {task_id!r} not found")
        actor = self._actors.get(task_id)  # another caller may have loaded it meanwhile
        if actor is None or actor.fenced is not None:
            actor = TaskActor(scope, task_id, stored.task.context_id, stored.task, stored.seq,
                              self._store, self._bus, self._after_commit, stored.epoch)
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
        """Run `executor` on `actor` now; the actor stays registered until it ends."""
        run = Run(actor, executor, context, on_create)
        self._launch(run)
        return run

    async def follow_up(self, actor: TaskActor, executor: AgentExecutor,
                        context: RequestContext, on_create: OnCreate | None = None) -> Run:
        """A message for a task a run is active on: recorded now, queued for the
        active run to take, or else run after it."""
        run = Run(actor, executor, context, on_create)
        actor.users += 1
        try:
            await actor.record(run)
            actor.queue(run)
            if not actor.runs:  # the active run ended while the message was written
                self._next(actor)
        finally:
            self.release(actor)
        return run

    def _launch(self, run: Run) -> None:
        actor = run.actor
        actor.runs.add(run)
        actor.users += 1
        owner = actor.scope.owner
        self._running[owner] = self._running.get(owner, 0) + 1
        run.aio_task = asyncio.create_task(run.main(), name=f"a2a-run-{actor.task_id}")
        run.aio_task.add_done_callback(lambda _: self._ended(actor))

    def _ended(self, actor: TaskActor) -> None:
        owner = actor.scope.owner
        left = self._running.get(owner, 1) - 1
        if left > 0:
            self._running[owner] = left
        else:
            self._running.pop(owner, None)
        self._next(actor)
        self.release(actor)

    def _next(self, actor: TaskActor) -> None:
        """Start the first queued follow-up, if no run is active. One whose task
        became final meanwhile is answered with the task (its message is in
        the history); it does not run."""
        while actor.waiting and not actor.runs:
            run = cast(Run, actor.waiting.popleft())  # the registry queues Runs only
            task = actor.task
            if actor.fenced is not None:
                run.settle(actor.fenced)  # the task is another replica's now
            elif self._closing or task is None or task.status.state in states.TERMINAL:
                run.settle(actor.response())
            else:
                self._launch(run)

    async def close(self) -> None:
        """Stop every run (server shutdown); queued follow-ups stay in the history."""
        self._closing = True
        tasks = [r.aio_task for a in self._actors.values() for r in a.runs
                 if r.aio_task is not None]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def runs(self, scope: Scope, task_id: str) -> bool:
        """Is a run of this process on the task?"""
        actor = self._actors.get(task_id)
        return (actor is not None and actor.scope == scope and actor.fenced is None
                and actor.running())

    async def cancel_running(self, scope: Scope, task_id: str, executor: AgentExecutor) -> bool:
        """Cancel the task if a run of this process is on it (another replica
        asked, bus.ask); False when none is."""
        actor = self._actors.get(task_id)
        if actor is None or actor.scope != scope or actor.fenced is not None or \
                not actor.running():
            return False
        actor.users += 1
        try:
            if actor.task is not None and actor.task.status.state not in states.TERMINAL:
                await runs.cancel(actor, executor)
                log.info("canceled task %s: another replica was asked to", task_id)
        except TaskFencedError:
            return False  # not ours any more (see TaskActor.fenced): its runs are stopped
        finally:
            self.release(actor)
        return True

    def release(self, actor: TaskActor) -> None:
        actor.users -= 1
        if (actor.users <= 0 and not actor.runs and not actor.waiting
                and self._actors.get(actor.task_id) is actor):
            del self._actors[actor.task_id]

    def outside(self, scope: Scope, task_id: str, context_id: str) -> TaskEvents:
        """TaskEvents for an existing task, used outside any run."""
        return TaskEvents(_Outside(self, scope, task_id), task_id, context_id,
                          scope.tenant, scope.owner)

    def __len__(self) -> int:
        return len(self._actors)


class _Outside:
    """The sink of a task continued outside any run (`task_events`): each event
    goes through the task's one actor, loaded for it."""

    __slots__ = ("_registry", "_scope", "_task_id")

    def __init__(self, registry: ActorRegistry, scope: Scope, task_id: str) -> None:
        self._registry, self._scope, self._task_id = registry, scope, task_id

    async def emit(self, event: StreamResponse) -> None:
        async with self._registry.loaded(self._scope, self._task_id) as actor:
            await actor.emit(event, None)

    async def hand_off(self) -> None:
        pass  # no caller waits on an outside writer
