"""Run by a virtualenv holding the official a2a-sdk 0.3.x (never imported by our tests).

Usage: python sdk03_agent_client.py BASE_URL TRANSPORT   (JSONRPC, HTTP+JSON or GRPC)
Drives the executors of sdk03_agents.py (`Samples`), wherever they are
served (the SDK's own 0.3 server or ours), with the SDK's 0.3 client on
TRANSPORT, and prints one JSON object of what it saw, without ids or
timestamps: the test compares the two servers' objects.
"""

import asyncio
import json
import sys

import grpc
import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.types import Message, TaskIdParams, TaskQueryParams
from sdk03_agents import EXTENSION
from sdk03_common import kind, msg


def texts(parts):
    return [p.root.text for p in parts]


def task_seen(task):
    return {"state": task.status.state.value,
            "status": texts(task.status.message.parts) if task.status.message else [],
            "artifacts": [texts(a.parts) for a in task.artifacts or []]}


async def one(client, text, task_id=None, context_id=None, metadata=None):
    message = msg(text, task_id)
    message.context_id = context_id
    [ev] = [e async for e in client.send_message(message, request_metadata=metadata)]
    return ev if isinstance(ev, Message) else ev[0]


async def outcome(client, text):
    try:
        ev = await one(client, text)
    except Exception as exc:
        return {"error": type(exc).__name__}
    return task_seen(ev) if not isinstance(ev, Message) else {"message": texts(ev.parts)}


async def main(base, transport):
    seen = {}
    async with httpx.AsyncClient(timeout=30) as http:
        def config(streaming, extensions=()):
            return ClientConfig(streaming=streaming, supported_transports=[transport],
                                httpx_client=http, extensions=list(extensions),
                                grpc_channel_factory=grpc.aio.insecure_channel)

        unary = await ClientFactory.connect(base, config(False))
        streaming = await ClientFactory.connect(base, config(True))
        seen["hello"] = task_seen(await one(unary, "hello there"))
        seen["hello_stream"] = [kind(e) for e in [
            e async for e in streaming.send_message(msg("hello stream"))]]
        seen["submit_stream"] = [kind(e) for e in [
            e async for e in streaming.send_message(msg("submit"))]]
        seen["submit"] = task_seen(await one(unary, "submit"))
        asked = await one(unary, "ask")
        then = await one(unary, "Ada", task_id=asked.id)
        seen["ask"] = {"first": task_seen(asked), "then": task_seen(then),
                       "same_context": then.context_id == asked.context_id}
        first = await one(unary, "chat one")
        second = await one(unary, "chat two", context_id=first.context_id)
        seen["chat"] = [first.kind, texts(first.parts), texts(second.parts)]
        seen["count_stream"] = [kind(e) for e in [
            e async for e in streaming.send_message(msg("count 3"))]]
        seen["count"] = task_seen(await one(unary, "count 2"))
        extended = await ClientFactory.connect(base, config(False, [EXTENSION]))
        seen["whoami"] = task_seen(await one(extended, "whoami"))
        seen["done"] = task_seen(await one(unary, "done"))
        seen["refuse"] = await outcome(unary, "refuse")
        seen["raw"] = task_seen(await one(unary, "raw"))
        seen["raw_stream"] = [kind(e) for e in [
            e async for e in streaming.send_message(msg("raw"))]]
        stream = streaming.send_message(msg("slow"))
        got = []
        async with asyncio.timeout(30):
            async for e in stream:
                got.append(kind(e))
                if got[-1].startswith("status-update:working"):
                    task_id = e[0].id
                    break
            canceled = await unary.cancel_task(TaskIdParams(id=task_id))
        try:  # the SDK's 0.3 server may leave the stream open after a cancel
            async with asyncio.timeout(3):
                async for e in stream:
                    got.append(kind(e))
        except TimeoutError:
            got.append("(stream left open)")
        stored = await unary.get_task(TaskQueryParams(id=task_id))
        seen["cancel"] = {"state": canceled.status.state.value, "stream": got,
                          "stored": stored.status.state.value}
    print(json.dumps(seen))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
