"""The ceiling's gRPC side (benchmarks/ceiling.py says what it does and why)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from a2a_grpc.generated import a2a_pb2 as pb

from .ceiling_store import TASKS, VERSIONS, Refused

PAGE = 50


def _pb_task(message: pb.Message, state: pb.TaskState) -> pb.Task:
    if not message.message_id or message.role != pb.ROLE_USER or not message.parts:
        raise Refused(-32602, 400, "invalid message")
    task = pb.Task(id=str(uuid.uuid4()), context_id=message.context_id or str(uuid.uuid4()),
                   status=pb.TaskStatus(state=state, timestamp=_stamp()))
    kept = task.history.add()
    kept.CopyFrom(message)
    kept.task_id, kept.context_id = task.id, task.context_id
    return task


def _stamp() -> Timestamp:
    stamp = Timestamp()
    stamp.GetCurrentTime()
    return stamp


async def _versioned(context: grpc.aio.ServicerContext) -> None:
    version = dict(context.invocation_metadata() or ()).get("a2a-version")
    if version not in VERSIONS:
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, "version not supported")


async def grpc_send(request: pb.SendMessageRequest,
                    context: grpc.aio.ServicerContext) -> pb.SendMessageResponse:
    await _versioned(context)
    try:
        task = _pb_task(request.message, pb.TASK_STATE_COMPLETED)
    except Refused as e:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
    task.artifacts.add(artifact_id=str(uuid.uuid4()), name="echo").parts.add(
        text="echo: " + request.message.parts[0].text)
    TASKS.keep_pb(task.id, task.SerializeToString())
    return pb.SendMessageResponse(task=task)


async def grpc_get(request: pb.GetTaskRequest, context: grpc.aio.ServicerContext) -> pb.Task:
    await _versioned(context)
    task = TASKS.as_pb(request.id)
    if task is None:
        await context.abort(grpc.StatusCode.NOT_FOUND, "task not found")
        raise AssertionError  # abort raises
    if request.HasField("history_length"):
        del task.history[:max(0, len(task.history) - request.history_length)]
    return task


async def grpc_list(request: pb.ListTasksRequest,
                    context: grpc.aio.ServicerContext) -> pb.ListTasksResponse:
    await _versioned(context)
    ids = TASKS.newest(PAGE)
    return pb.ListTasksResponse(
        tasks=[t for t in map(TASKS.as_pb, ids) if t is not None],
        next_page_token=ids[-1], page_size=PAGE, total_size=len(TASKS))


async def grpc_stream(request: pb.SendMessageRequest,
                      context: grpc.aio.ServicerContext) -> AsyncIterator[pb.StreamResponse]:
    await _versioned(context)
    task = _pb_task(request.message, pb.TASK_STATE_SUBMITTED)
    TASKS.keep_pb(task.id, task.SerializeToString())
    yield pb.StreamResponse(task=task)
    task.status.CopyFrom(pb.TaskStatus(state=pb.TASK_STATE_WORKING, timestamp=_stamp()))
    yield pb.StreamResponse(status_update=pb.TaskStatusUpdateEvent(
        task_id=task.id, context_id=task.context_id, status=task.status))
    text = request.message.parts[0].text
    n = int(text[7:]) if text.startswith("stream ") and text[7:].isdigit() else 0
    artifact = task.artifacts.add(artifact_id=str(uuid.uuid4()), name="chunks")
    for i in range(1, n + 1):
        part = artifact.parts.add(text=f"chunk {i}/{n}")
        yield pb.StreamResponse(artifact_update=pb.TaskArtifactUpdateEvent(
            task_id=task.id, context_id=task.context_id, append=i > 1, last_chunk=i == n,
            artifact=pb.Artifact(artifact_id=artifact.artifact_id, name="chunks", parts=[part])))
    task.status.CopyFrom(pb.TaskStatus(state=pb.TASK_STATE_COMPLETED, timestamp=_stamp()))
    TASKS.keep_pb(task.id, task.SerializeToString())
    yield pb.StreamResponse(status_update=pb.TaskStatusUpdateEvent(
        task_id=task.id, context_id=task.context_id, status=task.status))


async def grpc_get_raw(request: pb.GetTaskRequest, context: grpc.aio.ServicerContext) -> bytes:
    """GetTask answering the task's stored bytes, unparsed (a raw-bytes handler)."""
    await _versioned(context)
    task = TASKS.pb_bytes(request.id)
    if task is None:
        await context.abort(grpc.StatusCode.NOT_FOUND, "task not found")
        raise AssertionError  # abort raises
    return task


def grpc_handlers(raw: bool = False) -> grpc.GenericRpcHandler:
    def unary(fn: Any, request: Any, response: Any) -> grpc.RpcMethodHandler:
        return grpc.unary_unary_rpc_method_handler(
            fn, request_deserializer=request.FromString,
            response_serializer=response.SerializeToString if response else None)
    return grpc.method_handlers_generic_handler("lf.a2a.v1.A2AService", {
        "SendMessage": unary(grpc_send, pb.SendMessageRequest, pb.SendMessageResponse),
        "GetTask": (unary(grpc_get_raw, pb.GetTaskRequest, None) if raw
                    else unary(grpc_get, pb.GetTaskRequest, pb.Task)),
        "ListTasks": unary(grpc_list, pb.ListTasksRequest, pb.ListTasksResponse),
        "SendStreamingMessage": grpc.unary_stream_rpc_method_handler(
            grpc_stream, request_deserializer=pb.SendMessageRequest.FromString,
            response_serializer=pb.StreamResponse.SerializeToString),
    })


