"""The ceiling: the least a correct A2A responder can do on this stack.

`python -m benchmarks.ceiling HTTP_PORT GRPC_PORT` answers SendMessage,
GetTask, ListTasks and SendStreamingMessage (JSON-RPC and REST on aiohttp,
gRPC on grpc.aio) with fixed, valid answers prepared at start, doing no work
at all: it parses each JSON-RPC body (it must, to echo the id) and writes a
stream one event per write, as a real stream goes out. What our server does
beyond this is its own cost.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import grpc
from aiohttp import web
from google.protobuf import json_format

from a2a_grpc.generated import a2a_pb2 as pb

TASK = pb.Task(id="t", context_id="c", status=pb.TaskStatus(state=pb.TASK_STATE_COMPLETED),
               artifacts=[pb.Artifact(artifact_id="a", parts=[pb.Part(text="echo: hello")])])
SEND = pb.SendMessageResponse(task=TASK)
PAGE = pb.ListTasksResponse(tasks=[TASK] * 50, page_size=50, total_size=1000,
                            next_page_token="x")
CHUNKS = 100


def _events() -> list[pb.StreamResponse]:
    working = pb.TaskStatusUpdateEvent(task_id="t", context_id="c",
                                       status=pb.TaskStatus(state=pb.TASK_STATE_WORKING))
    done = pb.TaskStatusUpdateEvent(task_id="t", context_id="c",
                                    status=pb.TaskStatus(state=pb.TASK_STATE_COMPLETED))
    out = [pb.StreamResponse(task=pb.Task(id="t", context_id="c", status=pb.TaskStatus(
        state=pb.TASK_STATE_SUBMITTED))), pb.StreamResponse(status_update=working)]
    for i in range(1, CHUNKS + 1):
        out.append(pb.StreamResponse(artifact_update=pb.TaskArtifactUpdateEvent(
            task_id="t", context_id="c", append=i > 1, last_chunk=i == CHUNKS,
            artifact=pb.Artifact(artifact_id="a", parts=[pb.Part(text=f"chunk {i}/{CHUNKS}")]))))
    return [*out, pb.StreamResponse(status_update=done)]


EVENTS = _events()
Handler = Callable[[web.Request], Coroutine[Any, Any, web.StreamResponse]]


def http_app() -> web.Application:
    as_json = {"SendMessage": json_format.MessageToDict(SEND),
               "GetTask": json_format.MessageToDict(TASK),
               "ListTasks": json_format.MessageToDict(PAGE)}
    sse = [json_format.MessageToDict(e) for e in EVENTS]

    async def stream(request: web.Request, wrap: Callable[[Any], Any]) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for i, event in enumerate(sse, 1):
            await resp.write(f"id: {i}\ndata: {json.dumps(wrap(event))}\n\n".encode())
        await resp.write_eof()
        return resp

    async def jsonrpc(request: web.Request) -> web.StreamResponse:
        body = json.loads(await request.read())
        if body["method"] == "SendStreamingMessage":
            return await stream(request, lambda e: {"jsonrpc": "2.0", "id": body["id"],
                                                    "result": e})
        return web.json_response({"jsonrpc": "2.0", "id": body["id"],
                                  "result": as_json[body["method"]]})

    def fixed(name: str) -> Handler:
        async def answer(request: web.Request) -> web.StreamResponse:
            await request.read()
            return web.json_response(as_json[name])
        return answer

    async def rest_stream(request: web.Request) -> web.StreamResponse:
        await request.read()
        return await stream(request, lambda e: e)

    app = web.Application()
    app.router.add_post("/", jsonrpc)
    app.router.add_post("/message:send", fixed("SendMessage"))
    app.router.add_post("/message:stream", rest_stream)
    app.router.add_get("/tasks/{id}", fixed("GetTask"))
    app.router.add_get("/tasks", fixed("ListTasks"))
    return app


def _fixed(answer: bytes) -> Callable[[bytes, object], Coroutine[Any, Any, bytes]]:
    async def handle(request: bytes, context: object) -> bytes:
        return answer
    return handle


async def _stream(request: bytes, context: object) -> AsyncIterator[bytes]:
    for event in STREAM_BYTES:
        yield event


STREAM_BYTES = [e.SerializeToString() for e in EVENTS]


async def main(http_port: int, grpc_port: int) -> None:
    runner = web.AppRunner(http_app(), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", http_port).start()
    unary = grpc.unary_unary_rpc_method_handler
    handlers = {
        "SendMessage": unary(_fixed(SEND.SerializeToString())),
        "GetTask": unary(_fixed(TASK.SerializeToString())),
        "ListTasks": unary(_fixed(PAGE.SerializeToString())),
        "SendStreamingMessage": grpc.unary_stream_rpc_method_handler(_stream),
    }
    server = grpc.aio.server()
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("lf.a2a.v1.A2AService", handlers),))
    server.add_insecure_port(f"127.0.0.1:{grpc_port}")
    await server.start()
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
