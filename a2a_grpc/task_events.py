"""How an agent answers: `TaskEvents` builds the events of one task (status,
artifacts, a direct reply) and hands them, in order, to the server's sink.

The server supplies the sink (`EventSink`); an agent only calls the methods.
"""

from __future__ import annotations

from collections.abc import Iterable, MutableSequence, Sequence
from typing import Protocol

from google.protobuf.struct_pb2 import Struct

from a2a_grpc.core import states
from a2a_grpc.core.ids import new_id
from a2a_grpc.generated.a2a_pb2 import Message, Part, Role, StreamResponse, Task, TaskState

__all__ = ["Content", "EventSink", "TaskEvents"]


class EventSink(Protocol):
    async def emit(self, event: StreamResponse) -> None: ...

    async def hand_off(self) -> None: ...


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
