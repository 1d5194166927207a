"""The ceiling: the least a correct A2A responder can do on this stack.

`python -m benchmarks.ceiling HTTP_PORT GRPC_PORT` answers SendMessage and
GetTask (JSON-RPC on aiohttp, gRPC on grpc.aio) with a fixed, valid answer,
doing no work at all. What our server does beyond this is its own cost.
"""

from __future__ import annotations

import asyncio
import json
import sys

import grpc
from aiohttp import web
from google.protobuf import json_format

from generated import a2a_pb2 as pb

TASK = pb.Task(id="t", context_id="c", status=pb.TaskStatus(state=pb.TASK_STATE_COMPLETED),
               artifacts=[pb.Artifact(artifact_id="a", parts=[pb.Part(text="echo: hello")])])
SEND = pb.SendMessageResponse(task=TASK)


async def main(http_port: int, grpc_port: int) -> None:
    send_json = json_format.MessageToDict(SEND)
    task_json = json_format.MessageToDict(TASK)

    async def jsonrpc(request: web.Request) -> web.Response:
        body = json.loads(await request.read())
        result = send_json if body["method"] == "SendMessage" else task_json
        return web.json_response({"jsonrpc": "2.0", "id": body["id"], "result": result})

    app = web.Application()
    app.router.add_post("/", jsonrpc)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", http_port).start()

    send_bytes, task_bytes = SEND.SerializeToString(), TASK.SerializeToString()
    handlers = {
        "SendMessage": grpc.unary_unary_rpc_method_handler(
            _fixed(send_bytes), request_deserializer=None, response_serializer=None),
        "GetTask": grpc.unary_unary_rpc_method_handler(
            _fixed(task_bytes), request_deserializer=None, response_serializer=None),
    }
    server = grpc.aio.server()
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("lf.a2a.v1.A2AService", handlers),))
    server.add_insecure_port(f"127.0.0.1:{grpc_port}")
    await server.start()
    await asyncio.Event().wait()


def _fixed(answer: bytes):  # type: ignore[no-untyped-def]
    async def handle(request: bytes, context: object) -> bytes:
        return answer

    return handle


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
