"""The handler's duties as one server among others, beside the A2A
operations, a part it holds: crash recovery, retention, what other replicas
ask of it, and following a task another replica runs."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator

from a2a_grpc.agent import AgentExecutor
from a2a_grpc.bus import EventBus
from a2a_grpc.core import states
from a2a_grpc.core.call import CallContext
from a2a_grpc.core.errors import A2AError
from a2a_grpc.core.stream import Numbered
from a2a_grpc.execution.actors import ActorRegistry
from a2a_grpc.execution.hosted import agent_for
from a2a_grpc.generated.a2a_pb2 import SendMessageRequest, SendMessageResponse
from a2a_grpc.handler.access import Access
from a2a_grpc.handler.follow import follow_task, open_tail
from a2a_grpc.handler.idempotency import Forwarded
from a2a_grpc.handler.intake import Intake
from a2a_grpc.observe.metrics import Metrics
from a2a_grpc.stores import Claim, Scope, TaskStore

RESTARTED = "The server restarted while this task was running; send the request again."
ORPHANED = "The replica running this task stopped; send the request again."
HAND_OFF_POLL = 0.5  # seconds between reads of a followed task's hand-off mark


class Housekeeping:
    def __init__(self, access: Access, executor: AgentExecutor, bus: EventBus,
                 actors: ActorRegistry, intake: Intake) -> None:
        self._access, self.executor, self.bus = access, executor, bus
        self.store: TaskStore = access.store
        self._actors, self._intake = actors, intake

    def observe(self, metrics: Metrics) -> None:
        """Report to `metrics`: store timings, events published, the streams'
        backlog, runs going on, tasks by state."""
        self.store.timings = metrics.store_timer
        locks = getattr(self.store, "write_locks", None)  # SQLite's, one a shard
        metrics.watch(published=lambda: self.bus.published, backlog=self.bus.backlog,
                      runs=self._actors.runs_going, count_states=self.store.count_states,
                      write_lock=None if locks is None else lambda: [
                          (lock.waited_ns, lock.held_ns, lock.held_cpu_ns) for lock in locks])

    async def recover(self, claim: Claim | None = None, why: str = RESTARTED) -> int:
        """After a restart: resume, or else fail with `why`, every task a run left
        SUBMITTED or WORKING (not those handed off); with `claim` (replicas),
        only those whose replica's lease expired (TaskStore.unsettled). Returns
        how many tasks it found."""
        found = await self.store.unsettled(claim)
        for scope, stored in found:
            async with self._actors.loaded(scope, stored.task.id) as actor:
                if actor.running():
                    continue
                actor.epoch = stored.epoch  # claimed just now: the fence's new epoch
                try:
                    resumable = agent_for(self.executor, scope.tenant).resumable
                except A2AError:  # an agent this server no longer hosts
                    await actor.finish(states.FAILED, f"{why} (no agent {scope.tenant!r} here)")
                    continue
                if resumable:
                    self._actors.start(actor, self.executor, None)
                else:
                    await actor.finish(states.FAILED, why)
        return len(found)

    async def on_control(self, kind: str, scope: tuple[str, str], task_id: str,
                         body: bytes) -> bool:
        """What another replica asks of a task a run of ours is on (bus.ask):
        "cancel" it, or take a follow-up "message" (a SendMessageRequest)."""
        where = Scope(*scope)
        if kind == "cancel":
            return await self._actors.cancel_running(where, task_id, self.executor)
        if kind != "message" or not self._actors.runs(where, task_id):
            return False
        started = await self._intake.start(SendMessageRequest.FromString(body),
                                           CallContext(user=where.owner, tenant=where.tenant),
                                           where)
        return not isinstance(started, Forwarded)

    async def purge(self, max_age_s: float) -> int:
        """Delete final tasks whose last status is older than `max_age_s`."""
        cutoff = time.time_ns() - int(max_age_s * 1e9)
        return await self.store.purge(cutoff)

    async def settled_elsewhere(self, scope: Scope, task_id: str, immediately: bool,
                                 ) -> SendMessageResponse:
        """A task no run of this process holds (another replica's, or a run that
        is over): as it stands, or (unless `immediately`) once an event settles
        it, as a blocking send of it is answered. A task its agent handed off is
        answered as it stands, as the send that handed it off was: its agent
        may settle it hours later. A hand-off leaves no event on the bus, so
        while the task is followed the store's mark is read every
        `HAND_OFF_POLL` seconds (a run on another replica may hand off then)."""
        if not immediately:
            tail = await open_tail(self.bus, self.store, scope, task_id)
            if tail.state in states.SETTLED or await self.store.handed_off(scope, task_id):
                await tail.stack.aclose()
            else:
                await self._until_settled(scope, task_id, follow_task(tail, None))
        return SendMessageResponse(task=await self._access.task(scope, task_id))

    async def _until_settled(self, scope: Scope, task_id: str,
                             events: AsyncGenerator[Numbered, None]) -> None:
        async def drain() -> None:
            async for _ in events:
                pass  # until an event settles it

        following = asyncio.ensure_future(drain())
        try:
            while not (await asyncio.wait({following}, timeout=HAND_OFF_POLL))[0]:
                if await self.store.handed_off(scope, task_id):
                    return
            following.result()  # its error, if any, is the caller's
        finally:
            following.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await following
            await events.aclose()
