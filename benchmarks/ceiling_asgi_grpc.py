"""The ceiling's gRPC SendMessage and GetTask as an ASGI app: gRPC carried by
an HTTP/2 server other than grpc.aio (hypercorn, granian, pyvoy), for
benchmarks/carriers.py. The same work per call as ceiling_grpc.py (parse
and check, make and keep the task, answer it whole); the gRPC wire by hand:
a length-prefixed message each way, `grpc-status` (and `grpc-message`) in
the trailers (the ASGI `http.response.trailers` extension)."""

from __future__ import annotations

import struct
from typing import Any
from urllib.parse import quote

from a2a_grpc.generated import a2a_pb2 as pb

from .ceiling_grpc import _pb_task
from .ceiling_store import TASKS, VERSIONS, Refused

PREFIX = struct.Struct(">BI")  # compressed flag, length
SERVICE = "/lf.a2a.v1.A2AService/"
OK, INVALID_ARGUMENT, NOT_FOUND, UNIMPLEMENTED = 0, 3, 5, 12
Scope = dict[str, Any]


class Failed(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def send(body: bytes) -> bytes:
    request = pb.SendMessageRequest.FromString(body)
    try:
        task = _pb_task(request.message, pb.TASK_STATE_COMPLETED)
    except Refused as exc:
        raise Failed(INVALID_ARGUMENT, str(exc)) from None
    task.artifacts.add(artifact_id=task.id + "-a", name="echo").parts.add(
        text="echo: " + request.message.parts[0].text)
    TASKS.keep_pb(task.id, task.SerializeToString())
    return pb.SendMessageResponse(task=task).SerializeToString()


def get(body: bytes) -> bytes:
    request = pb.GetTaskRequest.FromString(body)
    task = TASKS.as_pb(request.id)
    if task is None:
        raise Failed(NOT_FOUND, "task not found")
    if request.HasField("history_length"):
        del task.history[:max(0, len(task.history) - request.history_length)]
    return task.SerializeToString()


METHODS = {SERVICE + "SendMessage": send, SERVICE + "GetTask": get}


async def app(scope: Scope, receive: Any, send_event: Any) -> None:
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send_event({"type": "lifespan.startup.complete"})
        await send_event({"type": "lifespan.shutdown.complete"})
        return
    chunks = []
    while True:
        event = await receive()
        chunks.append(event.get("body", b""))
        if not event.get("more_body"):
            break
    body = b"".join(chunks)
    headers = dict(scope["headers"])
    answer, code, message = b"", OK, ""
    try:
        method = METHODS.get(scope["path"])
        if method is None:
            raise Failed(UNIMPLEMENTED, "no such method")
        version = headers.get(b"a2a-version")
        if (version.decode() if version is not None else None) not in VERSIONS:
            raise Failed(UNIMPLEMENTED, "version not supported")
        flag, size = PREFIX.unpack_from(body)
        if flag or size != len(body) - PREFIX.size:
            raise Failed(INVALID_ARGUMENT, "a single uncompressed message is expected")
        out = method(body[PREFIX.size:])
        answer = PREFIX.pack(0, len(out)) + out
    except Failed as exc:
        code, message = exc.code, str(exc)
    await send_event({"type": "http.response.start", "status": 200, "trailers": True,
                      "headers": [(b"content-type", b"application/grpc")]})
    await send_event({"type": "http.response.body", "body": answer})
    trailers = [(b"grpc-status", str(code).encode())]
    if message:
        trailers.append((b"grpc-message", quote(message).encode()))
    await send_event({"type": "http.response.trailers", "headers": trailers})
