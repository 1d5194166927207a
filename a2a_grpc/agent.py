"""The API for plugging agent logic in: `AgentExecutor`, `RequestContext`, `TaskEvents`.

An agent is a class with an async `execute(context, events)`. The context
says what arrived (the message, the task it continues, referenced tasks, the
caller); `events` is how the agent answers: either one direct `reply(...)`,
or task events (`working`, `artifact`, `complete`, `require_input`, ...).
The server owns ids, timestamps, storage, streaming and the lifecycle rules:
an illegal move (say, `working()` after `complete()`) raises
`IllegalTransitionError` in the agent and changes nothing.

A run may end with its task still SUBMITTED or WORKING, on purpose: it calls
`events.hand_off()` (the work goes on elsewhere). The caller then gets the
task as it stands, and the task is finished later through `events` (kept by
the agent) or through `self.tasks.task_events(...)`, from anywhere in the
process: a webhook, a job queue, a timer, hours later.

    class Echo(AgentExecutor):
        async def execute(self, context, events):
            await events.working()
            await events.artifact(f"echo: {context.text}")
            await events.complete()
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, MutableSequence, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from google.protobuf.struct_pb2 import Struct

from a2a_grpc.core import media, states
from a2a_grpc.core.call import CallContext
from a2a_grpc.core.errors import PermissionDeniedError
from a2a_grpc.core.ids import new_id
from a2a_grpc.generated.a2a_pb2 import (
    AgentCard,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    StreamResponse,
    Task,
    TaskState,
)


class FollowUps(AsyncIterator[Message]):
    """Messages the client sends on this task while this run is active, in the
    order they arrived (each is already in the task's history). What the run
    does not take is handed to a new run once this one ends. `async for` waits
    for the next; `take()` returns one only if it is already here."""

    def take(self) -> Message | None:
        return None

    async def __anext__(self) -> Message:
        raise StopAsyncIteration


NO_FOLLOW_UPS = FollowUps()  # stateless: one for every context made outside a run


@dataclass(slots=True)
class RequestContext:
    """Everything the agent is told about one incoming message."""

    message: Message
    task_id: str
    context_id: str
    # The task this message continues (a copy), None when it starts a new one.
    task: Task | None
    # Tasks named in message.referenceTaskIds that the caller may see.
    referenced_tasks: list[Task]
    call: CallContext
    configuration: SendMessageConfiguration = field(default_factory=SendMessageConfiguration)
    metadata: Struct = field(default_factory=Struct)
    # Follow-up messages on this task while the run is active (see FollowUps).
    follow_ups: FollowUps = NO_FOLLOW_UPS

    @property
    def text(self) -> str:
        """The message's text parts joined by newlines."""
        parts = self.message.parts
        if len(parts) == 1:  # most messages: no generator, no join
            return parts[0].text  # "" unless it is a text part
        return "\n".join(p.text for p in parts if p.WhichOneof("content") == "text")

    @property
    def requested_extensions(self) -> frozenset[str]:
        """The extension URIs the client asked for (`A2A-Extensions`)."""
        return self.call.extensions

    def activate_extension(self, uri: str) -> bool:
        """Say that this call uses extension `uri` (one the card declares): the
        response names it (before the first event, for a stream). Only one the
        client asked for is activated; returns whether it was."""
        if uri not in self.call.extensions:
            return False
        self.call.activated.add(uri)
        return True

    def require_skill(self, skill_id: str) -> None:
        """Refuse (PermissionDeniedError, before the first event: the call
        fails with it) when the card gives this skill securityRequirements
        the caller does not meet."""
        if skill_id in self.call.denied_skills:
            raise PermissionDeniedError(
                f"the credentials do not meet the security requirements of skill {skill_id!r}")


class AgentExecutor:
    """Subclass and implement `execute`; override `cancel` to stop cleanly.

    `execute` runs as its own asyncio task. Raising an A2AError before the
    first event fails the call with that error (e.g. ContentTypeNotSupported);
    any other exception fails the task (the traceback is logged, the client
    sees a generic message). Returning while the task is still SUBMITTED or
    WORKING fails it too, unless the run called `events.hand_off()` first, or
    the class sets `hand_off_on_return = True` (what agents written for the
    official SDKs expect: their `execute()` returns and the work goes on).

    `tasks` is set by the server that runs the agent: `tasks.task_events(...)`
    gives the events of an existing task outside `execute()`.
    """

    hand_off_on_return = False
    tasks: TaskSource | None = None

    def bind(self, tasks: TaskSource) -> None:
        """Called by the server that runs this agent."""
        self.tasks = tasks

    async def execute(self, context: RequestContext, events: TaskEvents) -> None:
        raise NotImplementedError

    async def cancel(self, task: Task, events: TaskEvents) -> None:
        """Called on CancelTask. The default does nothing: the server then
        stops `execute` (asyncio cancellation) and marks the task CANCELED.
        An override may emit its own final status instead."""

    async def resume(self, task: Task, events: TaskEvents) -> None:
        """Called after a restart for a task that was still working. Override it
        to pick the work up again (emit events as in `execute`); by default the
        server marks such tasks FAILED, saying it restarted."""
        raise NotImplementedError

    def accepts(self, media_type: str, card: AgentCard) -> bool:
        """May a message part of `media_type` reach `execute`? Asked for each
        part of each incoming message before the agent runs; False fails the
        send with ContentTypeNotSupportedError, naming the type and the modes
        accepted. By default: yes when the served `card` accepts it in its
        defaultInputModes or a skill's inputModes (wildcards such as image/*
        honoured: a2a_grpc.core.media), and always for an agent without a
        `card` of its own. Override with your own rule; return True to turn
        the check off."""
        if not isinstance(getattr(self, "card", None), AgentCard):
            return True
        return media.accepted(media_type, card)

    async def extended_card(self, call: CallContext) -> AgentCard | None:
        """Override to offer an extended agent card (GetExtendedAgentCard) to
        callers past the card's security requirements; `call.identity` says
        who asks, so the card may be tailored to them. Interfaces and security
        schemes left empty are the public card's; skills the caller may not
        use (`call.denied_skills`) are left out. None: nothing for this caller."""
        return None

    @property
    def offers_extended_card(self) -> bool:
        return type(self).extended_card is not AgentExecutor.extended_card

    @property
    def resumable(self) -> bool:
        return type(self).resume is not AgentExecutor.resume


class EventSink(Protocol):
    async def emit(self, event: StreamResponse) -> None: ...

    async def hand_off(self) -> None: ...


class TaskSource(Protocol):
    async def task_events(self, task_id: str, *, tenant: str = "",
                          owner: str = "") -> TaskEvents:
        """The events of an existing task, for use outside `execute()`; raises
        TaskNotFoundError when (tenant, owner) has no such task."""

    async def context_state(self, events: TaskEvents, name: str) -> bytes | None:
        """What the agent saved as `name` for the conversation (contextId) of
        `events`' task, in the server's store: it outlives a restart where the
        store does (SQLite, PostgreSQL)."""

    async def save_context_state(self, events: TaskEvents, name: str, body: bytes) -> None:
        """Keep `body` as `name` for the conversation of `events`' task."""


Content = str | Part | Iterable[Part]


def _add_parts(parts: MutableSequence[Part], content: Content) -> None:
    if isinstance(content, str):
        parts.add(text=content)  # type: ignore[attr-defined]  # a repeated message field
    elif isinstance(content, Part):
        parts.append(content)
    else:
        parts.extend(content)


class TaskEvents:
    """Builds the events of one task and hands them to the server, in order."""

    def __init__(self, sink: EventSink, task_id: str, context_id: str,
                 tenant: str = "", owner: str = "") -> None:
        self._sink = sink
        self.task_id = task_id
        self.context_id = context_id
        # Where the task lives: keep these three to reach it later (TaskSource).
        self.tenant = tenant
        self.owner = owner

    async def hand_off(self) -> None:
        """End this run's hold on the task on purpose, leaving it as it is
        (SUBMITTED or WORKING; created first if no event did yet): the blocking
        send answers with the task, the run's stream ends, subscribers keep
        following, and a restart does not fail it. Events sent later, through
        this object or `AgentExecutor.tasks`, continue it. On a task that is
        already final or interrupted it does nothing."""
        await self._sink.hand_off()

    async def emit(self, event: StreamResponse) -> None:
        """Send an event built whole (an adapter's: a2a_grpc.adapters); its
        task and context ids must be this task's. The methods below build
        them for you."""
        await self._sink.emit(event)

    def agent_message(self, content: Content, *, metadata: Struct | None = None) -> Message:
        """A ROLE_AGENT message for this task, with a fresh messageId."""
        msg = Message()
        self._fill_message(msg, content, metadata)
        return msg

    def _fill_message(self, msg: Message, content: Content, metadata: Struct | None) -> None:
        msg.message_id = new_id()
        msg.context_id = self.context_id
        msg.task_id = self.task_id
        msg.role = Role.ROLE_AGENT
        _add_parts(msg.parts, content)
        if metadata is not None:
            msg.metadata.CopyFrom(metadata)

    async def reply(self, content: Content | Message) -> None:
        """Answer with a direct Message instead of a task (new requests only)."""
        if not isinstance(content, Message):
            msg = self.agent_message(content)
        else:
            msg = Message()
            msg.CopyFrom(content)
            msg.role = Role.ROLE_AGENT
            msg.context_id = msg.context_id or self.context_id
            msg.message_id = msg.message_id or new_id()
        msg.ClearField("task_id")  # a direct reply belongs to no task
        await self._sink.emit(StreamResponse(message=msg))

    async def status(
        self, state: TaskState, content: Content | Message | None = None
    ) -> None:
        """Move the task to `state`, with an optional agent message."""
        # Built in place: each constructor given a message would copy it again.
        event = StreamResponse()
        update = event.status_update
        update.task_id, update.context_id = self.task_id, self.context_id
        update.status.state = state
        if isinstance(content, Message):
            update.status.message.CopyFrom(content)
        elif content is not None:
            self._fill_message(update.status.message, content, None)
        await self._sink.emit(event)

    async def submit(self) -> None:
        """Create the task now (SUBMITTED) without any other change."""
        await self._sink.emit(StreamResponse(task=Task(id=self.task_id)))

    async def working(self, content: Content | Message | None = None) -> None:
        await self.status(states.WORKING, content)

    async def complete(self, content: Content | Message | None = None) -> None:
        await self.status(states.COMPLETED, content)

    async def fail(self, content: Content | Message | None = None) -> None:
        await self.status(states.FAILED, content)

    async def reject(self, content: Content | Message | None = None) -> None:
        await self.status(states.REJECTED, content)

    async def cancel(self, content: Content | Message | None = None) -> None:
        await self.status(states.CANCELED, content)

    async def require_input(self, content: Content | Message | None = None) -> None:
        await self.status(states.INPUT_REQUIRED, content)

    async def require_auth(self, content: Content | Message | None = None) -> None:
        await self.status(states.AUTH_REQUIRED, content)

    async def artifact(
        self,
        content: Content,
        *,
        artifact_id: str | None = None,
        name: str = "",
        description: str = "",
        append: bool = False,
        last_chunk: bool = False,
        extensions: Sequence[str] = (),
        metadata: Struct | None = None,
    ) -> str:
        """Emit an artifact or a chunk of one; returns its artifactId.

        Stream an artifact in chunks with the same `artifact_id`: the first
        chunk with `append=False`, later ones with `append=True`, the last
        with `last_chunk=True`.
        """
        event = StreamResponse()
        update = event.artifact_update
        update.task_id, update.context_id = self.task_id, self.context_id
        update.append, update.last_chunk = append, last_chunk
        art = update.artifact
        art.artifact_id = artifact_id or new_id()
        if name:  # setting a field, even to its default, costs as much as a real value
            art.name = name
        if description:
            art.description = description
        _add_parts(art.parts, content)
        if extensions:  # extend() costs a microsecond even when given nothing
            art.extensions.extend(extensions)
        if metadata is not None:
            art.metadata.CopyFrom(metadata)
        await self._sink.emit(event)
        return art.artifact_id
