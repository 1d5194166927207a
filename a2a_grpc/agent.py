"""The API for plugging agent logic in: `AgentExecutor`, `RequestContext`, and
`TaskEvents` (task_events.py, importable from here too).

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

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Protocol

from google.protobuf.struct_pb2 import Struct

from a2a_grpc.core import media
from a2a_grpc.core.call import CallContext
from a2a_grpc.core.errors import PermissionDeniedError
from a2a_grpc.generated.a2a_pb2 import AgentCard, Message, SendMessageConfiguration, Task
from a2a_grpc.task_events import Content, EventSink, TaskEvents

__all__ = ["AgentExecutor", "Content", "EventSink", "FollowUps", "RequestContext",
           "TaskEvents", "TaskSource"]


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
