"""Task generations (the A2A 1.1 draft, dev-1.1 §3.2.7), the rules that need
no I/O: which generation an event carries, an event as a 1.0 peer gets it,
and `ifGenerationMatch`. The numbers are kept by lifecycle.py; who is shown
them is handler/generations.py."""

from __future__ import annotations

from a2a_grpc.core.errors import TaskGenerationMismatchError
from a2a_grpc.generated.a2a_pb2 import SendMessageRequest, StreamResponse, Task


def generation_of(event: StreamResponse) -> int:
    kind = event.WhichOneof("payload")
    if kind == "status_update":
        return event.status_update.generation
    if kind == "artifact_update":
        return event.artifact_update.generation
    if kind == "task":
        return event.task.generation
    return 0


def as_1_0(event: StreamResponse) -> StreamResponse:
    """`event` as a 1.0 server sends it: without generation (a copy if it had one;
    the event itself is shared by every stream of the task)."""
    if not generation_of(event):
        return event
    out = StreamResponse()
    out.CopyFrom(event)
    kind = out.WhichOneof("payload")
    if kind == "status_update":
        out.status_update.generation = 0
    elif kind == "artifact_update":
        out.artifact_update.generation = 0
    else:
        out.task.generation = 0
    return out


def check_match(req: SendMessageRequest, task: Task) -> None:
    """`ifGenerationMatch` against the task the message continues (§3.2.2)."""
    if not req.configuration.HasField("if_generation_match"):
        return
    expected = req.configuration.if_generation_match
    if expected != task.generation:
        raise TaskGenerationMismatchError(
            f"task generation mismatch: expected {expected} but task {task.id} is at "
            f"generation {task.generation}; read the task (GetTask) before sending again",
            metadata={"taskId": task.id, "expectedGeneration": str(expected),
                      "currentGeneration": str(task.generation)})
