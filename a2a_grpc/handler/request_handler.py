"""RequestHandler: the eleven A2A operations, once, for every transport.

Each method takes the generated request message and a CallContext and returns
the response type the proto declares. Streaming methods are coroutines that
validate, subscribe and wait for the first event, then return the iterator:
every error a client can cause is raised by the `await`, before a transport
has sent a header or an SSE byte. Transports (gRPC servicer, JSON-RPC, REST)
only decode, call and encode; every protocol rule is here or in `core`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from google.protobuf.empty_pb2 import Empty

from a2a_grpc.agent import AgentExecutor, TaskEvents
from a2a_grpc.bus import EventBus, LocalEventBus
from a2a_grpc.cards.card import extended_view
from a2a_grpc.core import lifecycle, listing, states
from a2a_grpc.core.call import CallContext
from a2a_grpc.core.errors import (
    ExtendedAgentCardNotConfiguredError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_grpc.core.stream import EventStream
from a2a_grpc.core.validate import validate
from a2a_grpc.execution import run as runs
from a2a_grpc.execution.actors import ActorRegistry
from a2a_grpc.execution.hosted import Hosted, agent_for
from a2a_grpc.generated.a2a_pb2 import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    SendMessageRequest,
    SendMessageResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)
from a2a_grpc.handler.access import Access
from a2a_grpc.handler.generations import Generations, PreviewOptions
from a2a_grpc.handler.housekeeping import RESTARTED, Housekeeping
from a2a_grpc.handler.intake import Intake
from a2a_grpc.handler.parameters import PREVIEW_VERSIONS, SUPPORTED_VERSIONS
from a2a_grpc.handler.push_configs import PushConfigCalls
from a2a_grpc.handler.sending import SendCalls
from a2a_grpc.handler.streaming import StreamCalls
from a2a_grpc.observe.metrics import Metrics
from a2a_grpc.push.configs import PushConfigs
from a2a_grpc.push.policy import PushPolicy
from a2a_grpc.push.secrets import SecretBox
from a2a_grpc.stores import (
    Claim,
    MemoryTaskStore,
    Scope,
    TaskStore,
)


class RequestHandler:
    """The A2A service over an agent, a task store and an event bus. It holds its
    parts and calls them: the checks every operation makes (`Access`), the
    streaming operations, the push config operations, and the housekeeping of
    a server among replicas."""

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
        interrupted_only: bool = False,
        replicated: bool = False,
        push_secrets: SecretBox | None = None,
        preview: PreviewOptions | None = None,
    ) -> None:
        self.executor = executor
        executor.bind(self)  # so the agent can continue tasks later (task_events)
        self.push_policy = push_policy or PushPolicy()  # which webhook URLs are allowed
        self.card = card
        # A hosted agent's card by its name (executor is a Hosted); `card` for the rest.
        self.cards: dict[str, AgentCard] = {}
        hosted = frozenset(getattr(executor, "agents", {})) if isinstance(executor, Hosted) \
            else frozenset()
        self.extended_card = extended_card
        self.store: TaskStore = store if store is not None else MemoryTaskStore()
        self.bus: EventBus = bus if bus is not None else LocalEventBus()
        self._push_wake: Callable[[], None] | None = None
        # With push on, every event also queues a delivery per config (the outbox).
        self._actors = ActorRegistry(self.store, self.bus, self._wake_sender
                                     if card.capabilities.push_notifications or hosted
                                     else None)
        self._actors.wait_creation = replicated  # other replicas share the store
        self._actors.counts_generations = preview is not None  # the A2A 1.1 preview
        # The A2A versions served to 1.x calls (the card lists each interface per version).
        self.versions = SUPPORTED_VERSIONS if preview is None else PREVIEW_VERSIONS
        self._access = Access(self.card_of, self.store, self.versions, hosted)
        self.generations = Generations(self._access, self.bus, preview)
        self._configs = PushConfigs(self.store, push_secrets)
        self._intake = Intake(executor, self._actors, self.store, self._configs,
                              self.push_policy, max_parts, interrupted_only, self.card_of)
        self._push = PushConfigCalls(self._access, self._configs, self.push_policy)
        self.housekeeping = Housekeeping(self._access, executor, self.bus, self._actors,
                                         self._intake)
        self._sends = SendCalls(self._access, self.generations, self._intake, self.store,
                                self.housekeeping.settled_elsewhere)
        self._streams = StreamCalls(self._access, self.bus, self.store, self._sends.start)
        if replicated:
            async def forward(req: SendMessageRequest, scope: Scope, task_id: str) -> bool:
                return await self.bus.ask("message", scope, task_id, req.SerializeToString())

            self._intake.forward = forward

    def card_of(self, tenant: str) -> AgentCard:
        """The card of the agent serving `tenant`'s calls, as served now."""
        return self.cards.get(tenant, self.card) if self.cards else self.card

    def attach_sender(self, wake: Callable[[], None]) -> None:
        """Let the push sender know at once when a delivery was queued."""
        self._push_wake = wake

    def _wake_sender(self) -> None:
        """After a commit's events are published: wake the sender if that (or an
        earlier) commit queued deliveries. Waking it after every commit cost a
        query of the outbox each time (docs/benchmarks.md)."""
        if self._push_wake is not None and self.store.take_queued():
            self._push_wake()

    def running(self, owner: str) -> int:
        """Agent runs going on `owner`'s tasks (for per-caller limits)."""
        return self._actors.running(owner)

    def running_tasks(self) -> list[str]:
        """Ids of the tasks a run of this process is on (the leases it renews)."""
        return self._actors.running_tasks()

    @property
    def live_tasks(self) -> int:
        """Tasks with agent work or a call in progress (0 when all is idle)."""
        return len(self._actors)

    async def close(self) -> None:
        """Stop all running agent work (server shutdown)."""
        await self._actors.close()

    # -- SendMessage (sending.py) --

    async def send_message(self, req: SendMessageRequest, ctx: CallContext) -> SendMessageResponse:
        return await self._sends.send_message(req, ctx)

    # -- tasks --

    async def get_task(self, req: GetTaskRequest, ctx: CallContext) -> Task:
        self._access.preflight(ctx)
        validate(req)
        limit = lifecycle.history_length_of(req)
        self.generations.incoming(req, ctx)  # a 1.1 call may long-poll
        task = await self.generations.get(self._access.scope(req.tenant, ctx), req, ctx)
        return self.generations.task(lifecycle.trim_history(task, limit), ctx)

    async def list_tasks(self, req: ListTasksRequest, ctx: CallContext) -> ListTasksResponse:
        self._access.preflight(ctx)
        validate(req)
        scope = self._access.scope(req.tenant, ctx)
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
            self.generations.task(task, ctx)
        token = listing.encode_cursor(listing.sort_key(tasks[-1])) if more else ""
        return ListTasksResponse(
            tasks=tasks, next_page_token=token, page_size=query.page_size, total_size=total
        )

    async def cancel_task(self, req: CancelTaskRequest, ctx: CallContext) -> Task:
        self._access.preflight(ctx)
        validate(req)
        async with self._actors.loaded(self._access.scope(req.tenant, ctx), req.id) as actor:
            snap = actor.snapshot()
            assert snap is not None
            state = snap[0].status.state
            if state in states.TERMINAL:  # §3.1.5: canceled ones included
                raise TaskNotCancelableError(
                    f"task {req.id} is {states.name(state)} and can no longer be canceled",
                    metadata={"taskId": req.id, "state": states.name(state)},
                )
            if actor.running() or not await self.bus.ask("cancel", actor.scope, req.id):
                await runs.cancel(actor, self.executor)
                final = actor.snapshot()
                assert final is not None
                return self.generations.task(final[0], ctx)
        # Another replica runs it, and canceled it: the store has it as it ended.
        return self.generations.task(
            await self._access.task(self._access.scope(req.tenant, ctx), req.id), ctx)

    async def task_events(self, task_id: str, *, tenant: str = "", owner: str = "") -> TaskEvents:
        """The events of an existing task, to continue it outside `execute()`:
        a webhook from another system, a job queue, a timer, hours later. They
        are stored, streamed and pushed like a run's. Raises TaskNotFoundError
        when (tenant, owner) has no such task."""
        found = await self.store.get(Scope(tenant, owner), task_id)
        if found is None:
            raise TaskNotFoundError(f"task {task_id!r} not found", metadata={"taskId": task_id})
        return self._actors.outside(Scope(tenant, owner), task_id, found.task.context_id)

    async def context_state(self, events: TaskEvents, name: str) -> bytes | None:
        return await self.store.context_state(Scope(events.tenant, events.owner),
                                              events.context_id, name)

    async def save_context_state(self, events: TaskEvents, name: str, body: bytes) -> None:
        await self.store.save_context_state(Scope(events.tenant, events.owner),
                                            events.context_id, name, body)

    # -- agent card --

    async def get_extended_agent_card(
        self, req: GetExtendedAgentCardRequest, ctx: CallContext
    ) -> AgentCard:
        self._access.preflight(ctx)
        card = self.card_of(ctx.tenant)
        if not card.capabilities.extended_agent_card:
            raise UnsupportedOperationError("this agent does not offer an extended agent card")
        own = self.extended_card  # a fixed one given to the handler wins over the agent's
        agent = agent_for(self.executor, ctx.tenant)
        if own is None and agent.offers_extended_card:
            own = await agent.extended_card(ctx)
        if own is None:
            raise ExtendedAgentCardNotConfiguredError()
        return extended_view(card, own, ctx.denied_skills)

    # -- the parts' operations --

    async def send_streaming_message(self, req: SendMessageRequest,
                                     ctx: CallContext) -> EventStream:
        return self.generations.stream(await self._streams.send_streaming_message(req, ctx), ctx)

    async def subscribe_to_task(self, req: SubscribeToTaskRequest,
                                ctx: CallContext) -> EventStream:
        return self.generations.stream(await self._streams.subscribe_to_task(req, ctx), ctx)

    async def create_task_push_notification_config(
        self, req: TaskPushNotificationConfig, ctx: CallContext
    ) -> TaskPushNotificationConfig:
        return await self._push.create_task_push_notification_config(req, ctx)

    async def get_task_push_notification_config(
        self, req: GetTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> TaskPushNotificationConfig:
        return await self._push.get_task_push_notification_config(req, ctx)

    async def list_task_push_notification_configs(
        self, req: ListTaskPushNotificationConfigsRequest, ctx: CallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        return await self._push.list_task_push_notification_configs(req, ctx)

    async def delete_task_push_notification_config(
        self, req: DeleteTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> Empty:
        return await self._push.delete_task_push_notification_config(req, ctx)

    # -- as one server among others (housekeeping.py) --

    def observe(self, metrics: Metrics) -> None:
        self.housekeeping.observe(metrics)

    async def recover(self, claim: Claim | None = None, why: str = RESTARTED) -> int:
        return await self.housekeeping.recover(claim, why)

    async def on_control(self, kind: str, scope: tuple[str, str], task_id: str,
                         body: bytes) -> bool:
        return await self.housekeeping.on_control(kind, scope, task_id, body)

    async def purge(self, max_age_s: float) -> int:
        return await self.housekeeping.purge(max_age_s)
