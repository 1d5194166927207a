"""The EventQueue an SDK executor is handed, and how its events are applied:
as that generation's own request handler applies them, through our
TaskEvents (so the server's lifecycle, store, streams and push all apply).

Both generations:
- a Task is taken as the task this run works on; what it carries beyond
  our task (a status, artifacts) is applied as the events it stands for;
- events name our task and context (an empty id is filled in; another
  task's is refused with InvalidAgentResponseError);
- a Message on a task that already existed before the run becomes the
  task's status message (its state kept): A2A 1.0 has no Message answer
  once there is a task.

1.x (DefaultRequestHandler v2): a Message is the whole answer, or there is
a Task first; a status update before any Task, a Message after task
events, a second Message are refused (InvalidAgentResponseError, the task
failed). A second Task for the task is ignored. The 1.0.0 pre-releases
(1.0.0aN) created the task from a first status event, as 0.3 does, and so
does this for an executor of theirs.

0.3 (DefaultRequestHandler, TaskManager, EventConsumer): a status or
artifact event before any Task creates the task; consumption ends (later
events are dropped, as 0.3's closed queue drops them) at a `final` status,
at a Message, or at a Task in a settled state. A `final` status whose state
is not settled (working, say) ends the caller's wait there: the task is
handed off and stays as it is. A status without `final` ends nothing, even
input-required (TaskUpdater.requires_input's default). A Message after task events becomes the
task's status message.
"""

from __future__ import annotations

import logging
from typing import Any

from a2a_grpc.adapters.sdk.generations import Generation
from a2a_grpc.agent import RequestContext, TaskEvents
from a2a_grpc.core import states
from a2a_grpc.core.errors import InvalidAgentResponseError
from a2a_grpc.generated.a2a_pb2 import Message, StreamResponse, Task

log = logging.getLogger("a2a_grpc.adapters.sdk")


class Applier:
    """Applies one execute()'s (or cancel()'s) SDK events to our task."""

    def __init__(self, generation: Generation, events: TaskEvents,
                 context: RequestContext | None, known: Task | None, call: Any) -> None:
        self.generation = generation
        self.v1 = generation.name == "1.x"
        self.events = events
        self.context = context
        self.call = call  # the SDK's ServerCallContext: 0.3 activates extensions on it
        self.existed = known is not None  # the task was there before this run
        self.has_task = known is not None
        self.state = known.status.state if known is not None else states.SUBMITTED
        self.artifacts = {a.artifact_id for a in known.artifacts} if known else set()
        self.replied = False
        self.task_events = False  # this run sent events of a task
        self.closed = False

    async def take(self, sdk_event: Any) -> None:
        if self.closed:
            log.debug("task %s: %s after the stream's end, dropped as a2a-sdk 0.3 does",
                      self.events.task_id, type(sdk_event).__name__)
            return
        event = self.generation.event_in(sdk_event)
        self.activate()
        kind = event.WhichOneof("payload")
        if kind == "message":
            await self._message(event.message)
        elif kind == "task":
            await self._task(event.task)
        else:
            await self._update(event, kind, bool(getattr(sdk_event, "final", False)))

    def activate(self) -> None:
        """0.3's `add_activated_extension` (on the call context), named in the
        response as ours are."""
        activated = getattr(self.call, "activated_extensions", None)
        if activated and self.context is not None:
            for uri in list(activated):
                self.context.activate_extension(uri)

    async def _message(self, message: Message) -> None:
        if self.replied and self.v1:
            raise InvalidAgentResponseError("the executor sent a second Message: a Message "
                                            "is the whole answer")
        if self.has_task and (self.existed or not self.v1):
            # A Message on a task: its status message, the state kept.
            self._own(message)
            await self.events.status(self.state, message)
            self.closed = not self.v1
            return
        if self.task_events:
            raise InvalidAgentResponseError("the executor sent a Message after the task's "
                                            "events: a Message is the whole answer")
        self.replied = True
        await self.events.reply(message)
        self.closed = not self.v1

    async def _task(self, task: Task) -> None:
        self._check_ids(task.id, task.context_id, "Task")
        if self.has_task and self.v1:
            log.debug("task %s: a second Task event, ignored as a2a-sdk 1.x does", task.id)
            return
        if self.replied:
            raise InvalidAgentResponseError("the executor sent a Task after its Message")
        self.task_events = True
        if not self.has_task:
            await self.events.submit()
            self.has_task = True
        for artifact in task.artifacts:
            update = StreamResponse()
            update.artifact_update.artifact.CopyFrom(artifact)
            await self._emit(update, "artifact_update")
        state = task.status.state
        if (state not in (states.SUBMITTED, 0) and state != self.state) or task.status.HasField(
                "message"):
            update = StreamResponse()
            update.status_update.status.CopyFrom(task.status)
            await self._emit(update, "status_update")
        self.closed = not self.v1 and self.state in states.SETTLED

    async def _update(self, event: StreamResponse, kind: str, final: bool) -> None:
        if self.replied:
            raise InvalidAgentResponseError(f"the executor sent a {kind} after its Message")
        if kind == "status_update" and not self.has_task and self.generation.task_first:
            raise InvalidAgentResponseError(
                "the executor sent a TaskStatusUpdateEvent before any Task: a2a-sdk 1.x "
                "executors enqueue the Task first (a2a.helpers.new_task_from_user_message)")
        update = getattr(event, kind)
        self._check_ids(update.task_id, update.context_id, kind)
        if (kind == "status_update" and update.status.state == states.SUBMITTED
                and not self.has_task):
            # TaskUpdater.submit() before any Task (0.3): it creates the task.
            await self.events.submit()
        else:  # after a Task (1.x's TaskUpdater.submit()), streamed as the SDK's server does
            await self._emit(event, kind)
        self.task_events = self.has_task = True
        if final and not self.v1:  # 0.3 ends the stream at `final`, and only there
            self.closed = True
            if self.state not in states.SETTLED:
                await self.events.hand_off()  # 0.3's `final`: the caller's answer is now

    async def _emit(self, event: StreamResponse, kind: str) -> None:
        update = getattr(event, kind)
        update.task_id, update.context_id = self.events.task_id, self.events.context_id
        if kind == "status_update":
            if update.status.HasField("message"):
                self._own(update.status.message)
            self.state = update.status.state
        else:
            artifact_id = update.artifact.artifact_id
            if update.append and artifact_id not in self.artifacts and self.v1:
                raise InvalidAgentResponseError(
                    f"the executor appended to artifact {artifact_id!r}, which it never sent")
            self.artifacts.add(artifact_id)
        await self.events.emit(event)

    def _own(self, message: Message) -> None:
        """A message the executor built without ids (new_text_message) is this task's."""
        if not message.task_id:
            message.task_id = self.events.task_id
        if not message.context_id:
            message.context_id = self.events.context_id

    def _check_ids(self, task_id: str, context_id: str, what: str) -> None:
        if (task_id and task_id != self.events.task_id) or (
                context_id and context_id != self.events.context_id):
            raise InvalidAgentResponseError(
                f"the executor's {what} names task {task_id!r} in context {context_id!r}; "
                f"this request's are {self.events.task_id!r} and {self.events.context_id!r}")


_QUEUES: dict[type, type] = {}


def queue_for(generation: Generation, applier: Applier) -> Any:
    """An instance of the SDK's own EventQueue (a subclass), so that executors
    which check its type or wrap it work; enqueue_event applies the event."""
    base = generation.queue_class
    cls = _QUEUES.get(base)
    if cls is None:
        cls = _QUEUES[base] = _queue_class(base, generation.name == "0.3")
    return cls(applier)


def _queue_class(base: type, v03: bool) -> type:
    class AppliedQueue(base):  # type: ignore[misc]
        """An executor's queue: each event is applied to the task as it comes."""

        def __init__(self, applier: Applier) -> None:
            if v03:
                super().__init__()  # 0.3's queue state: tap(), close() work as there
            self._applier = applier

        async def enqueue_event(self, event: Any) -> None:
            await self._applier.take(event)
            for child in getattr(self, "_children", ()):  # 0.3's taps see the events too
                await child.enqueue_event(event)

    return AppliedQueue
