"""The ceiling: the thinnest correct A2A server on our stacks, doing the same work per call.

`python -m benchmarks.ceiling HTTP_PORT GRPC_PORT` serves SendMessage,
GetTask, ListTasks and SendStreamingMessage on JSON-RPC and REST (aiohttp)
and gRPC (grpc.aio), on uvloop with orjson and with the garbage collector set as
our server runs (app/http.py, tune_collector). It does per
call what any correct server must, and nothing more, so that "ours /
ceiling" reads as "how much of the stack's limit we keep":

- SendMessage: parse the request, check the message (messageId, role, parts)
  and the A2A-Version, make a task (new task, context and artifact ids, a
  timestamp), put the message in its history with those ids, the echo
  artifact, COMPLETED; keep the task (serialised, keyed by id) and answer
  the whole task;
- GetTask: look the task up, honour historyLength, answer it;
- ListTasks: the newest page of 50 from its store (A2A_SEED_TASKS tasks made
  at start, as the SDK's server seeds its own);
- `stream N`: the task, WORKING, N chunks each appended to the task's
  artifact, COMPLETED, each event rendered and written as it happens; the
  store written at the start and the end.

No durability, no push, no auth, no cancellation, no resumption: what ours
does beyond this is its own cost. The load generator checks its answers as
strictly as ours (benchmarks/drive.py). Only text parts are handled.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import grpc
import orjson
from aiohttp import web

from a2a_grpc.app.http import tune_collector

from .ceiling_grpc import grpc_handlers
from .ceiling_store import TASKS, VERSIONS, Refused

Json = dict[str, Any]
PAGE = 50


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _checked(message: Any) -> str:
    """The message's text; Refused unless it is a valid user message."""
    if (not isinstance(message, dict) or not isinstance(message.get("messageId"), str)
            or not message["messageId"] or message.get("role") != "ROLE_USER"
            or not isinstance(message.get("parts"), list) or not message["parts"]):
        raise Refused(-32602, 400, "invalid message")
    text = message["parts"][0].get("text")
    return text if isinstance(text, str) else ""


def new_task(message: Json, state: str) -> Json:
    task_id, context_id = str(uuid.uuid4()), message.get("contextId") or str(uuid.uuid4())
    message = {**message, "taskId": task_id, "contextId": context_id}
    return {"id": task_id, "contextId": context_id,
            "status": {"state": state, "timestamp": _now()}, "history": [message]}


def keep_json(task: Json) -> bytes:
    data = orjson.dumps(task)
    TASKS.keep_json(task["id"], data)
    return data


def send(params: Json) -> bytes:
    text = _checked(params.get("message"))
    task = new_task(params["message"], "TASK_STATE_COMPLETED")
    task["artifacts"] = [{"artifactId": str(uuid.uuid4()), "name": "echo",
                          "parts": [{"text": f"echo: {text}"}]}]
    return b'{"task":' + keep_json(task) + b"}"


def get(task_id: Any, history_length: Any = None) -> bytes:
    kept = TASKS.as_json(task_id) if isinstance(task_id, str) else None
    if kept is None:
        raise Refused(-32001, 404, "task not found")
    if history_length is None:
        return kept
    task, length = orjson.loads(kept), int(history_length)
    task["history"] = task.get("history", [])[-length:] if length else []
    return orjson.dumps(task)


def list_page() -> bytes:
    ids = TASKS.newest(PAGE)
    tasks = b",".join(get(i) for i in ids)
    return (b'{"tasks":[' + tasks + b'],"nextPageToken":"' + ids[-1].encode()
            + b'","pageSize":50,"totalSize":' + str(len(TASKS)).encode() + b"}")


def stream_events(params: Json) -> Iterator[Json]:
    text = _checked(params.get("message"))
    task = new_task(params["message"], "TASK_STATE_SUBMITTED")
    keep_json(task)
    yield {"task": task}
    ids = {"taskId": task["id"], "contextId": task["contextId"]}
    task["status"] = {"state": "TASK_STATE_WORKING", "timestamp": _now()}
    yield {"statusUpdate": {**ids, "status": task["status"]}}
    n = int(text[7:]) if text.startswith("stream ") and text[7:].isdigit() else 0
    parts: list[Json] = []
    artifact = {"artifactId": str(uuid.uuid4()), "name": "chunks", "parts": parts}
    task["artifacts"] = [artifact]
    for i in range(1, n + 1):
        part = {"text": f"chunk {i}/{n}"}
        parts.append(part)
        event = {**ids, "artifact": {"artifactId": artifact["artifactId"], "name": "chunks",
                                     "parts": [part]}}
        if i > 1:
            event["append"] = True
        if i == n:
            event["lastChunk"] = True
        yield {"artifactUpdate": event}
    task["status"] = {"state": "TASK_STATE_COMPLETED", "timestamp": _now()}
    keep_json(task)
    yield {"statusUpdate": {**ids, "status": task["status"]}}


async def sse(request: web.Request, events: Iterator[Json],
              wrap: Callable[[bytes], bytes]) -> web.StreamResponse:
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                       "Cache-Control": "no-cache"})
    await resp.prepare(request)
    for i, event in enumerate(events, 1):
        await resp.write(b"id: %d\ndata: %s\n\n" % (i, wrap(orjson.dumps(event))))
    await resp.write_eof()
    return resp


def _answer(data: bytes, status: int = 200) -> web.Response:
    return web.Response(body=data, status=status, content_type="application/json")


async def jsonrpc(request: web.Request) -> web.StreamResponse:
    try:
        body = orjson.loads(await request.read())
    except orjson.JSONDecodeError:
        return _answer(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}')
    rid = orjson.dumps(body.get("id")) if isinstance(body, dict) else b"null"
    try:
        if not isinstance(body, dict) or body.get("jsonrpc") != "2.0":
            raise Refused(-32600, 400, "invalid request")
        if request.headers.get("A2A-Version") not in VERSIONS:
            raise Refused(-32009, 400, "version not supported")
        method, params = body.get("method"), body.get("params")
        if not isinstance(params, dict):
            raise Refused(-32602, 400, "invalid params")
        if method == "SendMessage":
            result = send(params)
        elif method == "GetTask":
            result = get(params.get("id"), params.get("historyLength"))
        elif method == "ListTasks":
            result = list_page()
        elif method == "SendStreamingMessage":
            head = b'{"jsonrpc":"2.0","id":' + rid + b',"result":'
            return await sse(request, stream_events(params), lambda e: head + e + b"}")
        else:
            raise Refused(-32601, 400, "method not found")
    except Refused as e:
        return _answer(b'{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}'
                       % (rid, e.code, orjson.dumps(str(e))))
    return _answer(b'{"jsonrpc":"2.0","id":' + rid + b',"result":' + result + b"}")


def rest(call: Callable[[web.Request], Any]) -> Callable[[web.Request], Any]:
    async def handle(request: web.Request) -> web.StreamResponse:
        try:
            if request.headers.get("A2A-Version") not in VERSIONS:
                raise Refused(-32009, 400, "version not supported")
            result = await call(request)
        except (Refused, orjson.JSONDecodeError) as e:
            status = e.status if isinstance(e, Refused) else 400
            return _answer(b'{"error":{"message":%s}}' % orjson.dumps(str(e)), status)
        return result if isinstance(result, web.StreamResponse) else _answer(result)
    return handle


async def rest_send(request: web.Request) -> bytes:
    return send(orjson.loads(await request.read()))


async def rest_stream(request: web.Request) -> web.StreamResponse:
    return await sse(request, stream_events(orjson.loads(await request.read())), lambda e: e)


async def rest_get(request: web.Request) -> bytes:
    return get(request.match_info["id"], request.query.get("historyLength"))


async def rest_list(request: web.Request) -> bytes:
    return list_page()


def http_app() -> web.Application:
    app = web.Application()
    app.router.add_post("/", jsonrpc)
    app.router.add_post("/message:send", rest(rest_send))
    app.router.add_post("/message:stream", rest(rest_stream))
    app.router.add_get("/tasks/{id}", rest(rest_get))
    app.router.add_get("/tasks", rest(rest_list))
    return app


def seed(count: int) -> None:
    for i in range(count):
        send({"message": {"messageId": f"seed-{i}", "role": "ROLE_USER",
                          "parts": [{"text": "hello"}]}})


async def main(http_port: int, grpc_port: int) -> None:
    seed(int(os.environ.get("A2A_SEED_TASKS", "1000")))
    runner = web.AppRunner(http_app(), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", http_port).start()
    # Variants grpc.aio's levers were measured with (docs/benchmarks-history.md, at
    # 2ffcfd9): its arguments (a JSON list of [name, value]) and GetTask answering the
    # stored bytes as they are.
    server = grpc.aio.server(options=[tuple(o) for o in json.loads(
        os.environ.get("A2A_CEILING_GRPC_OPTIONS", "[]"))])
    server.add_generic_rpc_handlers((grpc_handlers(os.environ.get("A2A_CEILING_RAW") == "1"),))
    server.add_insecure_port(f"127.0.0.1:{grpc_port}")
    await server.start()
    tune_collector()  # the collector as ours has it: a process setting, not work per call
    await asyncio.Event().wait()


if __name__ == "__main__":
    if os.environ.get("A2A_CEILING_LOOP") == "asyncio":
        asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
    else:
        import uvloop

        uvloop.run(main(int(sys.argv[1]), int(sys.argv[2])))
