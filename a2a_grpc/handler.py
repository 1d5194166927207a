"""RequestHandler: the eleven A2A operations, once, for every transport.

Each method takes the generated request message and a CallContext and returns
the response type the proto declares. Streaming methods are coroutines that
validate, subscribe and wait for the first event, then return the iterator:
every error a client can cause is raised by the `await`, before a transport
has sent a header or an SSE byte. Transports (gRPC servicer, JSON-RPC, REST)
only decode, call and encode; every protocol rule is here or in `core`.
"""

from __future__ import annotations

import base64
import dataclasses
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass

from google.protobuf.empty_pb2 import Empty

from generated.a2a_pb2 import (
    AgentCard,
    AgentExtension,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    SendMessageResponse,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)

from .agent import AgentExecutor, RequestContext
from .bus import EventBus, LocalEventBus, Subscription
from .bus.base import Event
from .context import CallContext
from .core import lifecycle, listing, states
from .core.errors import (
    ExtendedAgentCardNotConfiguredError,
    ExtensionSupportRequiredError,
    FieldViolation,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from .core.ids import new_id
from .core.validate import require, validate
from .push.policy import PushPolicy
from .runtime import ActorRegistry, OnCreate, Run, TaskActor, hold_starting
from .stores import MemoryTaskStore, Scope, TaskStore
from .streams import LAST_EVENT_ID, RESUMABLE_STREAMS_URI, EventStream, Numbered

SUPPORTED_VERSIONS = ("1.0",)
RESUMABLE_STREAMS = AgentExtension(
    uri=RESUMABLE_STREAMS_URI,
    description=(
        "Every task event has a sequence number (the SSE id:; on gRPC the first event's "
        "number is in the a2a-first-event-id header, sent when the call declares this "
        "extension in a2a-extensions; later ones count up by one). "
        "SubscribeToTask with Last-Event-ID (HTTP) or a2a-last-event-id (gRPC metadata) "
        "replays every event after that number, then continues live; on a task that "
        "has ended it replays and closes."),
)
RESTARTED = "The server restarted while this task was running; send the request again."
PushRequest = (
    TaskPushNotificationConfig
    | GetTaskPushNotificationConfigRequest
    | ListTaskPushNotificationConfigsRequest
    | DeleteTaskPushNotificationConfigRequest
)


class RequestHandler:
    """The A2A service over an agent, a task store and an event bus."""

    def __init__(
        self,
        executor: AgentExecutor,
        card: AgentCard,
        *,
        store: TaskStore | None = None,
        bus: EventBus | None = None,
        extended_card: AgentCard | None = None,
        max_parts: int = 1000,
        push_policy: PushPolicy | None = None,
    ) -> None:
        self.executor = executor
        self.max_parts = max_parts  # per incoming message
        self.push_policy = push_policy or PushPolicy()  # which webhook URLs are allowed
        self.card = card
        self.extended_card = extended_card
        self.store: TaskStore = store if store is not None else MemoryTaskStore()
        self.bus: EventBus = bus if bus is not None else LocalEventBus()
        self._push_wake: Callable[[], None] | None = None
        # With push on, every event also queues a delivery per config (the outbox).
        self._actors = ActorRegistry(self.store, self.bus, self._wake_sender
                                     if card.capabilities.push_notifications else None)
        if not any(x.uri == RESUMABLE_STREAMS.uri for x in card.capabilities.extensions):
            card.capabilities.extensions.append(RESUMABLE_STREAMS)
        # Read once: walking the card's protos on every call costs more than the call.
        self._required_extensions = tuple(
            x.uri for x in card.capabilities.extensions if x.required)
        # Runs whose message is being handled, by (scope, messageId): idempotent sends.
        self._inflight: dict[tuple[Scope, str], Run] = {}

    def attach_sender(self, wake: Callable[[], None]) -> None:
        """Let the push sender know at once when a delivery was queued."""
        self._push_wake = wake

    def _wake_sender(self) -> None:
        if self._push_wake is not None:
            self._push_wake()

    @property
    def live_tasks(self) -> int:
        """Tasks with agent work or a call in progress (0 when all is idle)."""
        return len(self._actors)

    async def close(self) -> None:
        """Stop all running agent work (server shutdown)."""
        await self._actors.close()

    async def recover(self) -> int:
        """After a restart: resume, or else fail, every task left SUBMITTED or
        WORKING. Assumes no other server is working on this store. Returns
        how many tasks it found."""
        found = await self.store.unsettled()
        for scope, stored in found:
            async with self._actors.loaded(scope, stored.task.id) as actor:
                if actor.busy():
                    continue
                if self.executor.resumable:
                    self._actors.start(actor, self.executor, None)
                else:
                    await actor.finish(states.FAILED, RESTARTED)
        return len(found)

    async def purge(self, max_age_s: float) -> int:
        """Delete final tasks whose last status is older than `max_age_s`."""
        cutoff = time.time_ns() - int(max_age_s * 1e9)
        return await self.store.purge(cutoff)

    # -- service parameters and capabilities (spec §3.2.6, §3.3.4, §3.6) --

    def _preflight(self, ctx: CallContext) -> None:
        version = ctx.version
        # No A2A-Version is served as 1.0 until the 0.3 compatibility layer exists.
        if version and version not in SUPPORTED_VERSIONS:
            major_minor = ".".join(version.split(".")[:2])
            if major_minor not in SUPPORTED_VERSIONS:
                raise VersionNotSupportedError(
                    f"A2A version {version!r} is not supported; this agent serves "
                    + ", ".join(SUPPORTED_VERSIONS),
                    metadata={"supportedVersions": ",".join(SUPPORTED_VERSIONS)},
                )
        for uri in self._required_extensions:
            if uri not in ctx.extensions:
                raise ExtensionSupportRequiredError(
                    f"this agent requires extension {uri}; declare it in A2A-Extensions",
                    metadata={"extension": uri},
                )

    def _require_streaming(self) -> None:
        if not self.card.capabilities.streaming:
            raise UnsupportedOperationError("this agent does not support streaming")

    def _require_push(self) -> None:
        if not self.card.capabilities.push_notifications:
            raise PushNotificationNotSupportedError(
                "this agent does not support push notifications"
            )

    @staticmethod
    def _scope(tenant: str, ctx: CallContext) -> Scope:
        return Scope(tenant or ctx.tenant, ctx.user)

    # -- SendMessage / SendStreamingMessage --

    async def _start(
        self, req: SendMessageRequest, ctx: CallContext,
        before: Callable[[str], Awaitable[None]] | None = None,
    ) -> tuple[TaskActor, Run] | _Duplicate:
        """Check the request, pick or load the task, and start the agent on it.
        A messageId this caller already sent gives its first run or task instead
        (§3.3.1: a retried send is safe).

        `before(task_id)` runs just before the checks that must be atomic with
        the start (a stream subscribes there, so it misses no event).
        """
        self._preflight(ctx)
        validate(req)
        require(len(req.message.parts) <= self.max_parts, "message.parts",
                f"has {len(req.message.parts)} parts; at most {self.max_parts} are accepted")
        lifecycle.history_length_of(req.configuration)  # validates the value
        push = req.configuration.task_push_notification_config
        if req.configuration.HasField("task_push_notification_config"):
            self._require_push()
            await self.push_policy.check(push.url, "configuration.taskPushNotificationConfig.url")
        scope = self._scope(req.tenant, ctx)
        msg = Message()
        msg.CopyFrom(req.message)
        referenced = []
        for ref in msg.reference_task_ids:
            found = await self.store.get(scope, ref)
            if found is not None:
                referenced.append(found.task)
        duplicate = await self._duplicate(scope, msg)
        if duplicate is not None:
            return duplicate

        on_create: OnCreate | None = None
        if req.configuration.HasField("task_push_notification_config"):
            async def on_create(task: Task) -> None:
                await self._save_push(scope, task.id, push)

        if not msg.task_id:
            task_id, context_id = new_id(), msg.context_id or new_id()
            msg.task_id, msg.context_id = task_id, context_id
            if before is not None:
                await before(task_id)
            context = self._request_context(req, msg, None, referenced, ctx)
            if (scope, msg.message_id) in self._inflight:  # sent twice at once
                return _Duplicate(self._inflight[(scope, msg.message_id)], None)
            actor = self._actors.new(scope, task_id, context_id)
            return actor, self._begin(scope, actor, context, on_create)
        if before is not None:
            await before(msg.task_id)
        async with self._actors.loaded(scope, msg.task_id) as actor:
            snap = actor.snapshot()
            assert snap is not None
            lifecycle.check_follow_up(snap[0], msg)
            if actor.busy() or snap[0].status.state not in states.INTERRUPTED:
                raise UnsupportedOperationError(
                    f"task {actor.task_id} is {states.name(snap[0].status.state)}; it takes a "
                    "new message only when it asks for input or auth. Wait, or cancel it"
                )
            msg.context_id = actor.context_id
            context = self._request_context(req, msg, snap[0], referenced, ctx)
            if (scope, msg.message_id) in self._inflight:  # sent twice at once
                return _Duplicate(self._inflight[(scope, msg.message_id)], actor.task_id)
            return actor, self._begin(scope, actor, context, on_create)

    def _begin(self, scope: Scope, actor: TaskActor, context: RequestContext,
               on_create: OnCreate | None) -> Run:
        run = self._actors.start(actor, self.executor, context, on_create)
        key = (scope, context.message.message_id)
        self._inflight[key] = run
        run.aio_task.add_done_callback(lambda _: self._inflight.pop(key, None))
        return run

    async def _duplicate(self, scope: Scope, msg: Message) -> _Duplicate | None:
        run = self._inflight.get((scope, msg.message_id))
        task_id = run.actor.task_id if run is not None else await self.store.task_for_message(
            scope, msg.message_id)
        if run is None and task_id is None:
            run = self._inflight.get((scope, msg.message_id))  # arrived during the await
            if run is None:
                return None
            task_id = run.actor.task_id
        if msg.task_id and task_id and msg.task_id != task_id and (
                run is None or not run.replied):
            raise InvalidParamsError(
                f"messageId {msg.message_id!r} was already used for task {task_id}; "
                "give every new message a new messageId",
                violations=[FieldViolation("message.messageId", "already used")])
        return _Duplicate(run, task_id)

    @staticmethod
    def _request_context(
        req: SendMessageRequest, msg: Message, task: Task | None, referenced: list[Task],
        ctx: CallContext,
    ) -> RequestContext:
        return RequestContext(
            message=msg, task_id=msg.task_id, context_id=msg.context_id, task=task,
            referenced_tasks=referenced, call=ctx, configuration=req.configuration,
            metadata=req.metadata,
        )

    async def send_message(self, req: SendMessageRequest, ctx: CallContext) -> SendMessageResponse:
        started = await self._start(req, ctx)
        if isinstance(started, _Duplicate) and started.run is None:
            assert started.task_id is not None
            task = await self._get(self._scope(req.tenant, ctx), started.task_id)
            outcome: SendMessageResponse | BaseException = SendMessageResponse(task=task)
        else:
            run = started.run if isinstance(started, _Duplicate) else started[1]
            assert run is not None
            outcome = await self._await_run(run, req.configuration.return_immediately)
        if isinstance(outcome, BaseException):
            raise outcome
        if outcome.HasField("task"):
            limit = lifecycle.history_length_of(req.configuration)
            lifecycle.trim_history(outcome.task, limit)
        return outcome

    @staticmethod
    async def _await_run(run: Run, immediately: bool) -> SendMessageResponse | BaseException:
        """What a send waits for: the first event, or the final/interrupted state."""
        if not immediately:
            return await run.settled
        error = await run.started
        if error is not None:
            return error
        return run.settled.result() if run.settled.done() else run.actor.response()

    async def send_streaming_message(
        self, req: SendMessageRequest, ctx: CallContext
    ) -> EventStream:
        self._require_streaming()
        stack = AsyncExitStack()
        subs: list[Subscription] = []

        async def subscribe(task_id: str) -> None:
            subs.append(await stack.enter_async_context(self.bus.subscribe(task_id)))

        # Busy agents yield at every event until this stream's first event is out.
        release = hold_starting()
        try:
            started = await self._start(req, ctx, subscribe)
            if isinstance(started, _Duplicate):
                release()
                await stack.aclose()
                stream = await self._duplicate_stream(started, self._scope(req.tenant, ctx))
                stream.announce = _announce(ctx)
                return stream
            run = started[1]
            error = await run.started
            if error is not None:
                raise error
        except BaseException:
            release()
            await stack.aclose()
            raise
        sub, first = subs[0], run.first_seq
        return EventStream(_Follow(stack, sub, first),
                           ready=lambda: _ready(sub.peek(), first - 1), announce=_announce(ctx),
                           first_sent=release)

    async def _duplicate_stream(self, dup: _Duplicate, scope: Scope) -> EventStream:
        """A retried stream: the task as it stands and what follows, or the reply."""
        if dup.run is not None:
            error = await dup.run.started
            if error is not None:
                raise error
            if dup.run.replied:
                reply = await dup.run.settled
                assert not isinstance(reply, BaseException)
                return EventStream(_one(dup.run.first_seq, StreamResponse(message=reply.message)))
        task_id = dup.task_id or (dup.run.actor.task_id if dup.run is not None else None)
        assert task_id is not None
        tail = await self._open_tail(scope, task_id)
        if tail.state in states.SETTLED:
            await tail.stack.aclose()
            return EventStream(_one(tail.seq, StreamResponse(task=tail.task)))
        return EventStream(self._tail(tail, None), ready=lambda: _ready(tail.sub.peek(), tail.seq))

    # -- tasks --

    async def get_task(self, req: GetTaskRequest, ctx: CallContext) -> Task:
        self._preflight(ctx)
        validate(req)
        limit = lifecycle.history_length_of(req)
        task = await self._get(self._scope(req.tenant, ctx), req.id)
        return lifecycle.trim_history(task, limit)

    async def _get(self, scope: Scope, task_id: str) -> Task:
        found = await self.store.get(scope, task_id)
        if found is None:
            raise TaskNotFoundError(f"task {task_id!r} not found", metadata={"taskId": task_id})
        return found.task

    async def list_tasks(self, req: ListTasksRequest, ctx: CallContext) -> ListTasksResponse:
        self._preflight(ctx)
        validate(req)
        scope = self._scope(req.tenant, ctx)
        query = listing.query_of(req, ctx.user)
        query = dataclasses.replace(query, tenant=scope.tenant)
        probe = dataclasses.replace(query, page_size=query.page_size + 1)
        tasks, total = await self.store.list_tasks(probe)
        more = len(tasks) > query.page_size
        tasks = tasks[: query.page_size]
        for task in tasks:
            if not query.include_artifacts:
                task.ClearField("artifacts")
            lifecycle.trim_history(task, query.history_length)
        token = listing.encode_cursor(listing.sort_key(tasks[-1])) if more else ""
        return ListTasksResponse(
            tasks=tasks, next_page_token=token, page_size=query.page_size, total_size=total
        )

    async def cancel_task(self, req: CancelTaskRequest, ctx: CallContext) -> Task:
        self._preflight(ctx)
        validate(req)
        async with self._actors.loaded(self._scope(req.tenant, ctx), req.id) as actor:
            snap = actor.snapshot()
            assert snap is not None
            state = snap[0].status.state
            if state == states.CANCELED:
                return snap[0]  # §3.3.1: cancel is idempotent
            if state in states.TERMINAL:
                raise TaskNotCancelableError(
                    f"task {req.id} is {states.name(state)} and can no longer be canceled",
                    metadata={"taskId": req.id, "state": states.name(state)},
                )
            await actor.cancel(self.executor)
            final = actor.snapshot()
            assert final is not None
            return final[0]

    async def subscribe_to_task(
        self, req: SubscribeToTaskRequest, ctx: CallContext
    ) -> EventStream:
        """The current Task, then live events. With a last event id (resumable
        streams extension), the Task, then every logged event after that id,
        then live events; a final task then replays and closes."""
        self._require_streaming()
        self._preflight(ctx)
        validate(req)
        last = _last_event_id(ctx)
        found = await self._open_tail(self._scope(req.tenant, ctx), req.id, resume=last)
        if last is None and found.state in states.TERMINAL:
            await found.stack.aclose()
            raise UnsupportedOperationError(
                f"task {req.id} is {states.name(found.state)}; a final task has no more "
                "events to subscribe to. Use GetTask to read it"
            )
        return EventStream(self._tail(found, last), ready=lambda: _ready(found.sub.peek(),
                           found.seq), announce=_announce(ctx))

    async def _open_tail(self, scope: Scope, task_id: str, resume: int | None = None) -> _Tail:
        """Subscribe, then read the snapshot: no event can fall between the two."""
        stack = AsyncExitStack()
        try:
            sub = await stack.enter_async_context(self.bus.subscribe(task_id))
            found = await self.store.get(scope, task_id)
            if found is None:
                raise TaskNotFoundError(f"task {task_id!r} not found", metadata={"taskId": task_id})
            replay = [] if resume is None else await self.store.events(
                scope, task_id, resume, found.seq)
        except BaseException:
            await stack.aclose()
            raise
        return _Tail(stack, sub, found.task, found.seq, replay)

    async def _tail(self, tail: _Tail, resume: int | None) -> AsyncGenerator[Numbered, None]:
        async with tail.stack:
            # §3.1.6: the current Task comes first. On a resume it carries no id,
            # so the client's last event id stays where it was until the replay.
            yield (tail.seq if resume is None else None), StreamResponse(task=tail.task)
            for seq, logged in tail.replay:
                yield seq, logged
            if tail.state in states.TERMINAL:
                return
            while True:
                event = await tail.sub.next()
                if event.error is not None:
                    raise event.error
                if event.seq <= tail.seq:
                    continue  # already part of the snapshot
                yield event.seq, event.payload
                if lifecycle.ends_stream(event.payload):
                    return

    # -- push notification configs (delivery is the push notifier's job) --

    async def _save_push(
        self, scope: Scope, task_id: str, config: TaskPushNotificationConfig
    ) -> TaskPushNotificationConfig:
        saved = TaskPushNotificationConfig()
        saved.CopyFrom(config)
        saved.task_id = task_id
        saved.tenant = scope.tenant
        saved.id = saved.id or new_id()
        await self.store.save_push_config(scope, saved)
        return saved

    async def _push_task(self, req: PushRequest, task_id: str, ctx: CallContext) -> Scope:
        """Common checks of the four config operations; returns the task's scope."""
        self._preflight(ctx)
        self._require_push()
        validate(req)
        require(bool(task_id), "taskId", "is required")
        scope = self._scope(req.tenant, ctx)
        await self._get(scope, task_id)  # TaskNotFound for a task the caller can't see
        return scope

    async def create_task_push_notification_config(
        self, req: TaskPushNotificationConfig, ctx: CallContext
    ) -> TaskPushNotificationConfig:
        scope = await self._push_task(req, req.task_id, ctx)
        await self.push_policy.check(req.url)
        return await self._save_push(scope, req.task_id, req)

    async def get_task_push_notification_config(
        self, req: GetTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> TaskPushNotificationConfig:
        scope = await self._push_task(req, req.task_id, ctx)
        config = await self.store.get_push_config(scope, req.task_id, req.id)
        if config is None:
            raise TaskNotFoundError(
                f"push notification config {req.id!r} not found for task {req.task_id!r}",
                metadata={"taskId": req.task_id, "configId": req.id},
            )
        return config

    async def list_task_push_notification_configs(
        self, req: ListTaskPushNotificationConfigsRequest, ctx: CallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        require(req.page_size >= 0, "pageSize", "must be >= 0")
        scope = await self._push_task(req, req.task_id, ctx)
        configs = await self.store.list_push_configs(scope, req.task_id)
        start = _offset_of(req.page_token)
        end = len(configs) if req.page_size == 0 else start + req.page_size
        token = _offset_token(end) if end < len(configs) else ""
        return ListTaskPushNotificationConfigsResponse(
            configs=configs[start:end], next_page_token=token
        )

    async def delete_task_push_notification_config(
        self, req: DeleteTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> Empty:
        scope = await self._push_task(req, req.task_id, ctx)
        await self.store.delete_push_config(scope, req.task_id, req.id)
        return Empty()

    # -- agent card --

    async def get_extended_agent_card(
        self, req: GetExtendedAgentCardRequest, ctx: CallContext
    ) -> AgentCard:
        self._preflight(ctx)
        if not self.card.capabilities.extended_agent_card:
            raise UnsupportedOperationError("this agent does not offer an extended agent card")
        if self.extended_card is None:
            raise ExtendedAgentCardNotConfiguredError()
        card = AgentCard()
        card.CopyFrom(self.extended_card)
        return card


@dataclass(slots=True)
class _Duplicate:
    """A send whose messageId was seen before: its run if still going, and task."""

    run: Run | None
    task_id: str | None


def _announce(ctx: CallContext) -> bool:
    """Does the caller want sequence numbers where they cost a message of their own?"""
    return RESUMABLE_STREAMS.uri in ctx.extensions


def _ready(head: Event | None, skip_upto: int) -> bool:
    """Will a stream's next read return at once? Only if the queued event is one
    it passes on (not one it skips as already sent), or an error."""
    return head is not None and (head.error is not None or head.seq > skip_upto)


class _Follow:
    """A new run's events, from its first on, until one ends the stream (then
    it unsubscribes). A class rather than an async generator: an event that
    is already queued is taken without awaiting anything, two coroutine
    layers less per event of a busy stream."""

    __slots__ = ("_done", "_first_seq", "_stack", "_sub")

    def __init__(self, stack: AsyncExitStack, sub: Subscription, first_seq: int) -> None:
        self._stack, self._sub, self._first_seq = stack, sub, first_seq
        self._done = False

    async def __anext__(self) -> Numbered:
        if not self._done:
            sub = self._sub
            while True:
                event = sub.take()
                if event is None:
                    event = await sub.next()
                if event.error is not None:
                    self._done = True
                    await self._stack.aclose()
                    raise event.error
                if event.seq >= self._first_seq:
                    break
            if lifecycle.ends_stream(event.payload):
                self._done = True
            return event.seq, event.payload
        await self._stack.aclose()  # after the last event: unsubscribe
        raise StopAsyncIteration

    async def aclose(self) -> None:
        self._done = True
        await self._stack.aclose()


async def _one(seq: int, event: StreamResponse) -> AsyncGenerator[Numbered, None]:
    yield seq, event


@dataclass(slots=True)
class _Tail:
    stack: AsyncExitStack
    sub: Subscription
    task: Task
    seq: int
    replay: list[tuple[int, StreamResponse]]

    @property
    def state(self) -> TaskState:
        return self.task.status.state


def _last_event_id(ctx: CallContext) -> int | None:
    """`Last-Event-ID` (HTTP) or `a2a-last-event-id` (gRPC metadata), if sent."""
    raw = ctx.metadata.get(LAST_EVENT_ID) or ctx.metadata.get("last-event-id")
    if raw is None or not raw.strip():
        return None
    try:
        value = int(raw.strip())
        if value < 0:
            raise ValueError(raw)
    except ValueError:
        raise InvalidParamsError(
            f"last event id must be a non-negative integer, got {raw!r}",
            violations=[FieldViolation("Last-Event-ID", "a sequence number from an SSE id:")],
        ) from None
    return value


def _offset_token(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode()


def _offset_of(token: str) -> int:
    if not token:
        return 0
    try:
        kind, _, value = base64.urlsafe_b64decode(token.encode()).decode().partition(":")
        offset = int(value)
        if kind != "o" or offset < 0:
            raise ValueError(token)
    except ValueError as exc:
        raise InvalidParamsError(
            "pageToken is not a token this server issued",
            violations=[FieldViolation("pageToken", "use nextPageToken from a previous page")],
        ) from exc
    return offset
