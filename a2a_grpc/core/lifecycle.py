"""How events change a task, and which messages may reach which task.

Pure functions over the generated protos (spec §3.1, §3.4, §3.2.4); no I/O.

- `apply(task, event)` is the reducer: the only code that changes a stored
  task. It checks the event before touching the task, so a refused event
  leaves the task exactly as it was. It changes the task in place (a copy of
  a streamed task costs more than the event: the task grows with every
  chunk) and returns the task and an undo, for a change that could not be
  stored. `update(task, event)` is the same for a task that exists, without
  the Step tuple (the runtime's path on every event). `apply(None, event)` is
  a task's first event: a Task creates it (SUBMITTED unless it says
  otherwise; the new task is the event's own Task, not a copy, which would
  cost as much as making the task); a direct Message is an answer that
  creates no task, and it must be the only one (§3.1.1): once a task exists,
  a Message event is refused. Anything else cannot come first.
- Generations (the A2A 1.1 draft, §3.2.7): a task created with
  `counted=True` starts at generation 1, and every status or artifact update
  then adds 1 to the task and carries the new value, one per event. A task
  at 0 is not counted (created by a 1.0 server) and stays at 0, its events
  too. The rule is the data's, so replaying stored events gives the same
  numbers on every replica.
- `route_follow_up(task, message, running=...)` is §3.4.3 / §3.3.3 for a
  message that names a task: the context must match, a final task takes no
  more messages, and any other task takes it (agents MAY accept messages in
  non-terminal states): at once when no run is active on it, or after the
  active run (which may take it first). `interrupted_only` is the stricter
  reading, as an option: only a task waiting for input or auth takes one.
- `trim_history(task, n)` is §3.2.4: unset = all, 0 = none, n = the last n.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from google.protobuf.struct_pb2 import Struct

from a2a_grpc.core import states
from a2a_grpc.core.errors import (
    FieldViolation,
    InvalidAgentResponseError,
    InvalidParamsError,
    UnsupportedOperationError,
)
from a2a_grpc.generated.a2a_pb2 import (
    Artifact,
    Message,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
)


class IllegalTransitionError(InvalidAgentResponseError):
    """The agent tried to move a task where the lifecycle does not allow."""


Undo = Callable[[], None]


class Step(NamedTuple):
    task: Task | None  # None only after a direct reply: no task was created
    undo: Undo


def _nothing() -> None:
    pass


def apply(task: Task | None, event: StreamResponse, *, counted: bool = False) -> Step:
    """Apply one event to `task` (None: no task yet), in place; returns the
    task and what puts it back as it was (call it before any other change).
    `counted`: a task this event creates counts generations (see above).

    Raises InvalidAgentResponseError (and changes nothing) when the event does
    not belong to the task or is not allowed in its current state.
    """
    kind = event.WhichOneof("payload")
    if task is None:
        return Step(_first(event, kind, counted), _nothing)
    return Step(task, update(task, event, kind))


def _first(event: StreamResponse, kind: str | None, counted: bool) -> Task | None:
    if kind == "message":
        return None  # a direct reply: the whole answer, no task
    if kind != "task":
        raise InvalidAgentResponseError(
            f"a {kind or 'empty'} event cannot come first: a task starts with a Task "
            "(or the answer is one direct Message)")
    new = event.task  # the event's own Task, not a copy: the caller gives the event away
    if not new.id or not new.context_id:
        raise InvalidAgentResponseError("a new task needs its id and contextId")
    status = new.status
    state = status.state
    if state == states.UNSPECIFIED:
        status.state = states.SUBMITTED
    elif state in states.TERMINAL:
        raise IllegalTransitionError(f"task {new.id} cannot start in a final state")
    if counted:
        new.generation = 1
    elif new.generation:
        new.generation = 0  # whatever the agent wrote there
    return new


def update(task: Task, event: StreamResponse, kind: str | None) -> Undo:
    """`apply` to a task that exists: just the undo (what the runtime calls on
    every event of a live task, the Step tuple left out). `kind`: the event's
    payload, `WhichOneof("payload")`, which the caller has read."""
    if kind == "message":
        raise InvalidAgentResponseError(
            "a direct Message reply must be the only answer to a new message; "
            f"task {task.id} exists, so answer with task events")
    if kind == "status_update":
        # Each read of a protobuf field costs about as much as a Python call:
        # the messages read more than once are held in locals.
        update = event.status_update
        _check_ids(task, update.task_id, update.context_id)
        status, new = task.status, update.status
        current, target = status.state, new.state
        if not states.can_move(current, target):
            raise IllegalTransitionError(
                f"task {task.id}: {states.name(current)} -> {states.name(target)} "
                "is not a legal transition"
            )
        # The old status as bytes: cheaper to keep than a copy, and needed only
        # by an undo (a write the store refused).
        old = status.SerializeToString() if task.HasField("status") else None
        kept, generation = len(task.history), task.generation
        status.CopyFrom(new)
        if new.HasField("message"):
            task.history.append(new.message)
        if generation:
            task.generation = update.generation = generation + 1
        elif update.generation:
            update.generation = 0  # an uncounted task's events carry none

        def undo_status() -> None:
            if old is not None:
                task.status.ParseFromString(old)
            else:
                task.ClearField("status")
            del task.history[kept:]
            task.generation = generation
        return undo_status
    if kind == "artifact_update":
        art = event.artifact_update
        _check_ids(task, art.task_id, art.context_id)
        state = task.status.state
        if state in states.TERMINAL:
            raise IllegalTransitionError(
                f"task {task.id} is {states.name(state)}; a final task takes no more artifacts")
        undo = _merge_artifact(task, art)
        if task.generation or art.generation:  # (read here: a call less a chunk)
            return _counted(task, art, undo)
        return undo
    raise InvalidAgentResponseError(
        f"task {task.id}: a {kind or 'empty'} event cannot update a task"
    )


def _check_ids(task: Task, task_id: str, context_id: str) -> None:
    if task_id != task.id or context_id != task.context_id:
        raise InvalidAgentResponseError(
            f"event for task {task_id!r}/context {context_id!r} "
            f"does not belong to task {task.id!r}/context {task.context_id!r}"
        )


def _counted(task: Task, update: TaskArtifactUpdateEvent, undo: Undo) -> Undo:
    """An artifact update applied: the next generation, if the task counts."""
    generation = task.generation
    if not generation:
        if update.generation:
            update.generation = 0
        return undo
    task.generation = update.generation = generation + 1

    def undo_counted() -> None:
        task.generation = generation
        undo()
    return undo_counted


def _merge_artifact(task: Task, update: TaskArtifactUpdateEvent) -> Undo:
    new = update.artifact
    artifact_id, existing, artifacts = new.artifact_id, None, task.artifacts
    for candidate in artifacts if artifacts else ():  # (a loop over an empty upb container
        if candidate.artifact_id == artifact_id:      # raises and catches IndexError)
            existing = candidate
            break
    if update.append:
        if existing is None:
            raise InvalidAgentResponseError(
                f"task {task.id}: append to unknown artifact {new.artifact_id!r}"
            )
        return _append_chunk(existing, new)
    if existing is not None:  # same id, not an append: the new version wins
        old = Artifact()
        old.CopyFrom(existing)
        existing.CopyFrom(new)
        return lambda: existing.CopyFrom(old)
    count = len(artifacts)
    artifacts.append(new)

    def undo_new() -> None:
        del task.artifacts[count:]
    return undo_new


def _append_chunk(existing: Artifact, new: Artifact) -> Undo:
    # Every chunk of a stream comes here: each protobuf field is read once, and
    # extensions and metadata only when the chunk has some (mostly it has not).
    parts, new_parts = existing.parts, new.parts
    kept = len(parts)
    if len(new_parts) == 1:  # a chunk is mostly one part: append() costs less than extend()
        parts.append(new_parts[0])
    else:
        parts.extend(new_parts)
    extensions: int | None = None
    if new.extensions:  # extend() costs microseconds even when given nothing
        extensions = len(existing.extensions)
        existing.extensions.extend(x for x in new.extensions if x not in existing.extensions)
    metadata: Struct | None = None
    had_metadata = False
    if new.HasField("metadata"):
        had_metadata = existing.HasField("metadata")
        metadata = Struct()
        metadata.CopyFrom(existing.metadata)
        existing.metadata.MergeFrom(new.metadata)

    def undo_chunk() -> None:
        del existing.parts[kept:]
        if extensions is not None:
            del existing.extensions[extensions:]
        if metadata is not None:
            if had_metadata:
                existing.metadata.CopyFrom(metadata)
            else:
                existing.ClearField("metadata")
    return undo_chunk


def route_follow_up(task: Task, message: Message, *, running: bool,
                    interrupted_only: bool = False) -> bool:
    """May `message`, which names `task`, be delivered to it? True when it must
    wait for the run active on the task (§3.4.3), False when a run may start
    now. Raises InvalidParams (context mismatch) or UnsupportedOperation."""
    check_follow_up(task, message)
    if interrupted_only and task.status.state not in states.INTERRUPTED:
        raise UnsupportedOperationError(
            f"task {task.id} is {states.name(task.status.state)}; this agent takes a new "
            "message on a task only when the task asks for input or auth. Wait, or cancel it")
    return running


def check_follow_up(task: Task, message: Message) -> None:
    """The part of `route_follow_up` that holds whenever a message is recorded
    (§3.4.2): the context matches, and the task is not final."""
    if message.context_id and message.context_id != task.context_id:
        raise InvalidParamsError(
            f"message.contextId {message.context_id!r} does not match the "
            f"context {task.context_id!r} of task {task.id!r}",
            violations=[FieldViolation("message.contextId", "must match the task's contextId")],
        )
    if task.status.state in states.TERMINAL:
        raise UnsupportedOperationError(
            f"task {task.id} is {states.name(task.status.state)}: a final task accepts no "
            "more messages (A2A 1.0 reopens no task, though the first draft's tasks/send "
            "did); start a new task: no taskId, or with tasks/send a new id"
        )


def ends_stream(event: StreamResponse) -> bool:
    """§3.1.2: a stream ends after a Message, or a final or interrupted status."""
    kind = event.WhichOneof("payload")
    if kind == "message":
        return True
    if kind == "status_update":
        return event.status_update.status.state in states.SETTLED
    return kind == "task" and event.task.status.state in states.TERMINAL


def trim_history(task: Task, history_length: int | None) -> Task:
    """Keep the last `history_length` messages (None keeps all). In place."""
    if history_length is None:
        return task
    if history_length <= 0:
        task.ClearField("history")
    elif len(task.history) > history_length:
        del task.history[: len(task.history) - history_length]
    return task


def history_length_of(msg: object) -> int | None:
    """The optional `history_length` of a request or configuration, if set."""
    if msg is None or not msg.HasField("history_length"):  # type: ignore[attr-defined]
        return None
    value: int = msg.history_length  # type: ignore[attr-defined]
    if value < 0:
        raise InvalidParamsError(
            f"historyLength must be >= 0, got {value}",
            violations=[FieldViolation("historyLength", "must be a non-negative integer")],
        )
    return value
