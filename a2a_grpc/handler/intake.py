"""Taking a message in (SendMessage, SendStreamingMessage): check it, pick or
load its task, and start the agent on it, or queue it behind the run active on
the task (spec §3.3, §3.4.3; the rule is lifecycle.route_follow_up)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from a2a_grpc.agent import AgentExecutor, RequestContext
from a2a_grpc.core import lifecycle, states
from a2a_grpc.core.call import CallContext
from a2a_grpc.core.errors import ContentTypeNotSupportedError, FieldViolation, InvalidParamsError
from a2a_grpc.core.generation import check_match
from a2a_grpc.core.media import input_modes, media_type_of
from a2a_grpc.core.validate import require, validate
from a2a_grpc.execution.actors import ActorRegistry
from a2a_grpc.execution.hosted import agent_for
from a2a_grpc.execution.run import Run
from a2a_grpc.execution.run_state import OnCreate
from a2a_grpc.generated.a2a_pb2 import AgentCard, Message, SendMessageRequest, Task
from a2a_grpc.handler.idempotency import Duplicate, Forwarded, SentMessages
from a2a_grpc.push.configs import PushConfigs
from a2a_grpc.push.policy import PushPolicy
from a2a_grpc.stores import Scope, TaskStore


class Intake:
    def __init__(self, executor: AgentExecutor, actors: ActorRegistry, store: TaskStore,
                 configs: PushConfigs, push_policy: PushPolicy, max_parts: int,
                 interrupted_only: bool, card: Callable[[str], AgentCard]) -> None:
        self.executor = executor
        self.card = card  # the tenant's card served now (its input modes)
        self._actors = actors
        self.store = store
        self._configs = configs
        self.push_policy = push_policy
        self.max_parts = max_parts  # per incoming message
        # The stricter reading of §3.3.3, as an option: a task takes a follow-up
        # message only when it asks for input or auth.
        self.interrupted_only = interrupted_only
        self._sent = SentMessages(store)  # idempotent sends
        # Replicas: hand a follow-up for a task another replica runs to it.
        self.forward: Callable[[SendMessageRequest, Scope, str], Awaitable[bool]] | None = None

    async def _unknown(self, scope: Scope, msg: Message) -> bool:
        """Does the client-chosen id in `msg` name no task yet (first draft)?"""
        if self._actors.live(msg.task_id) or await self.store.get(scope, msg.task_id):
            return False
        await _first_draft_id_check(self.store, scope, msg.task_id)
        return True

    async def start(
        self, req: SendMessageRequest, ctx: CallContext, scope: Scope,
        before: Callable[[str], Awaitable[None]] | None = None,
    ) -> Run | Duplicate | Forwarded:
        """Check the request, pick or load the task, and start the agent on it
        (or queue the message behind the run active on the task). A messageId
        this caller already sent gives its first run or task instead (§3.3.1:
        a retried send is safe).

        `before(task_id)` runs just before the checks that must be atomic with
        the start (a stream subscribes there, so it misses no event).
        """
        validate(req)
        # Each read of a protobuf field costs about a Python call: what is read more
        # than once is held in locals.
        message, config = req.message, req.configuration
        parts = len(message.parts)
        require(parts <= self.max_parts, "message.parts",
                f"has {parts} parts; at most {self.max_parts} are accepted")
        lifecycle.history_length_of(config)  # validates the value
        self._check_media_types(message, scope.tenant)
        on_create: OnCreate | None = None
        if config.HasField("task_push_notification_config"):
            push = config.task_push_notification_config
            self.push_policy.check_at_creation(
                push.url, "configuration.taskPushNotificationConfig.url")

            async def on_create(task: Task) -> None:
                await self._configs.save(scope, task.id, push, ctx.dialect)
        msg = Message()
        msg.CopyFrom(message)
        referenced = []
        refs = msg.reference_task_ids
        for ref in refs if refs else ():  # an empty upb container is iterated to IndexError
            found = await self.store.get(scope, ref)
            if found is not None:
                referenced.append(found.task)
        duplicate = await self._sent.seen(scope, msg)
        if duplicate is not None:
            return duplicate

        message_id, named = msg.message_id, msg.task_id
        chosen = named if ctx.client_task_ids and await self._unknown(scope, msg) else ""
        if not named or chosen:
            new = self.store.new_task_id
            task_id, context_id = chosen or new(), msg.context_id or new()
            if before is not None:
                await before(task_id)
            racing = self._sent.racing(scope, message_id, None)
            if racing is not None:
                return racing
            if not self._actors.live(task_id):  # else: created meanwhile, a follow-up
                msg.task_id, msg.context_id = task_id, context_id
                context = _request_context(req, msg, None, referenced, ctx)
                run = self._actors.start(self._actors.new(scope, task_id, context_id),
                                         self.executor, context, on_create)
                self._sent.track(scope, message_id, run)
                return run
        if before is not None and not chosen:
            await before(msg.task_id)
        async with self._actors.loaded(scope, msg.task_id) as actor:
            snap = actor.snapshot()
            assert snap is not None
            check_match(req, snap[0])  # ifGenerationMatch (A2A 1.1 preview)
            if (self.forward is not None and not actor.running()
                    and snap[0].status.state in (states.SUBMITTED, states.WORKING)
                    and await self.forward(req, scope, msg.task_id)):
                return Forwarded(msg.task_id)  # another replica runs it, and took it
            if self.forward is not None and actor.task is not None:
                check_match(req, actor.task)  # again: asking the others took a while
            wait = lifecycle.route_follow_up(snap[0], msg, running=actor.running(),
                                             interrupted_only=self.interrupted_only)
            msg.context_id = actor.context_id
            context = _request_context(req, msg, snap[0], referenced, ctx)
            racing = self._sent.racing(scope, message_id, actor.task_id)
            if racing is not None:
                return racing
            if wait:
                run = await self._actors.follow_up(actor, self.executor, context, on_create)
            else:
                run = self._actors.start(actor, self.executor, context, on_create)
            self._sent.track(scope, message_id, run)
            return run


    def _check_media_types(self, msg: Message, tenant: str) -> None:
        card = self.card(tenant)
        agent = agent_for(self.executor, tenant)
        for i, part in enumerate(msg.parts):
            media_type = media_type_of(part)
            if not agent.accepts(media_type, card):
                accepted = ", ".join(input_modes(card)) or "none"
                raise ContentTypeNotSupportedError(
                    f"message.parts[{i}]: content type {media_type} is incompatible with this "
                    f"agent's input modes ({accepted})",
                    metadata={"mediaType": media_type, "accepted": accepted})


async def _first_draft_id_check(store: TaskStore, scope: Scope, task_id: str) -> None:
    if await store.task_id_taken(scope.tenant, task_id):  # by another caller
        raise InvalidParamsError(
            f"task id {task_id!r} is taken; choose another id for a new task",
            violations=[FieldViolation("id", "already names a task")])


def _request_context(
    req: SendMessageRequest, msg: Message, task: Task | None, referenced: list[Task],
    ctx: CallContext,
) -> RequestContext:
    return RequestContext(
        message=msg, task_id=msg.task_id, context_id=msg.context_id, task=task,
        referenced_tasks=referenced, call=ctx, configuration=req.configuration,
        metadata=req.metadata,
    )
