"""The streaming operations, a part the handler holds: SendStreamingMessage and
SubscribeToTask (and a retried stream's answer). Every error a client can
cause is raised before the stream is returned (see request_handler.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack

from a2a_grpc.bus import EventBus, Subscription
from a2a_grpc.core import states
from a2a_grpc.core.call import CallContext
from a2a_grpc.core.errors import UnsupportedOperationError
from a2a_grpc.core.stream import EventStream
from a2a_grpc.core.validate import validate
from a2a_grpc.execution.run import Run
from a2a_grpc.execution.turns import hold_starting
from a2a_grpc.generated.a2a_pb2 import (
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
)
from a2a_grpc.handler.access import Access
from a2a_grpc.handler.activation import Activations
from a2a_grpc.handler.follow import Follow, follow_task, one, open_tail, ready
from a2a_grpc.handler.idempotency import Duplicate, Forwarded
from a2a_grpc.handler.parameters import announces, last_event_id
from a2a_grpc.stores import Scope, TaskFencedError, TaskStore

# Starts (or finds) the run a message goes to; `before(task_id)` is awaited
# once the task id is known, before the run's first event (intake.Intake.start).
Start = Callable[[SendMessageRequest, CallContext, Callable[[str], Awaitable[None]] | None],
                 Awaitable["Run | Duplicate | Forwarded"]]


class StreamCalls:
    def __init__(self, access: Access, bus: EventBus, store: TaskStore, start: Start) -> None:
        self._access, self.bus, self.store, self._start = access, bus, store, start
        self.activations = Activations(store)

    async def send_streaming_message(
        self, req: SendMessageRequest, ctx: CallContext
    ) -> EventStream:
        self._access.require_streaming(ctx)
        stack = AsyncExitStack()
        subs: list[Subscription] = []

        async def subscribe(task_id: str) -> None:
            subs.append(await stack.enter_async_context(self.bus.subscribe(task_id)))

        # Busy agents yield at every event until this stream's first event is out.
        release = hold_starting()
        try:
            started = await self._start(req, ctx, subscribe)
            if isinstance(started, Forwarded):  # another replica runs the task
                started = Duplicate(None, started.task_id)
            if isinstance(started, Duplicate):
                release()
                await stack.aclose()
                scope = self._access.scope(req.tenant, ctx)
                stream, context_id = await self._duplicate_stream(started, scope)
                if context_id is not None:  # a task, not a direct reply
                    await self.activations.recall(scope, context_id, req.message.message_id,
                                                  ctx, started.run)
                stream.announce = announces(ctx)
                return stream
            run = started
            error = await run.started
            if error is not None:
                raise error
            if ctx.activated and not run.replied:  # the agent's, before its first event
                await self.activations.keep(self._access.scope(req.tenant, ctx),
                                            run.actor.context_id, req.message.message_id, ctx)
        except BaseException:
            release()
            await stack.aclose()
            raise
        sub, first = subs[0], run.first_seq
        # The run's stream ends after its last event when the run lets go of the
        # task without settling it (a hand-off); subscribers follow on. A run that
        # lost the task to another replica lets go too, but its stream follows
        # the task on, as that replica writes it, to its end.
        run.settled.add_done_callback(
            lambda done: None if isinstance(done.result(), TaskFencedError) else sub.end())
        follow = Follow(stack, sub, first)
        return EventStream(follow, ready=lambda: ready(sub.peek(), first - 1),
                           announce=announces(ctx), first_sent=release, sharing=follow)

    async def _duplicate_stream(self, dup: Duplicate,
                                scope: Scope) -> tuple[EventStream, str | None]:
        """A retried stream: the task as it stands and what follows, or the
        reply; and the task's contextId (None for a reply)."""
        if dup.run is not None:
            error = await dup.run.started
            if error is not None:
                raise error
            if dup.run.replied:
                reply = await dup.run.settled
                assert not isinstance(reply, BaseException)
                return EventStream(one(dup.run.first_seq,
                                       StreamResponse(message=reply.message))), None
        task_id = dup.task_id or (dup.run.actor.task_id if dup.run is not None else None)
        assert task_id is not None
        tail = await open_tail(self.bus, self.store, scope, task_id)
        context_id = tail.task.context_id
        # A handed-off task: its first stream ended at the hand-off, and so does this one.
        if tail.state in states.SETTLED or await self.store.handed_off(scope, task_id):
            await tail.stack.aclose()
            return EventStream(one(tail.seq, StreamResponse(task=tail.task))), context_id
        return EventStream(follow_task(tail, None), ready=lambda: ready(tail.sub.peek(), tail.seq),
                           sharing=tail), context_id

    async def subscribe_to_task(
        self, req: SubscribeToTaskRequest, ctx: CallContext
    ) -> EventStream:
        """The current Task, then live events. With a last event id (resumable
        streams extension): every logged event after that id, then live
        events, and no Task ahead of them (streams.follow_task); a final task
        replays and closes."""
        self._access.require_streaming(ctx)
        self._access.preflight(ctx)
        validate(req)
        last = last_event_id(ctx)
        scope = self._access.scope(req.tenant, ctx)
        found = await open_tail(self.bus, self.store, scope, req.id, last)
        if last is None and found.state in states.TERMINAL:
            await found.stack.aclose()
            raise UnsupportedOperationError(
                f"task {req.id} is {states.name(found.state)}; a final task has no more "
                "events to subscribe to. Use GetTask to read it"
            )
        return EventStream(follow_task(found, last), ready=lambda: ready(found.sub.peek(),
                           found.seq), announce=announces(ctx), sharing=found)
