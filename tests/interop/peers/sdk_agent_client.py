"""Run by a virtualenv holding the official a2a-sdk 1.x (never imported by our tests).

Usage: python sdk_agent_client.py BASE_URL BINDING   (JSONRPC, HTTP+JSON or GRPC)
Drives the executors of sdk_agents.py (`Samples`), wherever they are served
(the SDK's own server or ours), with the SDK's own client on BINDING, and
prints one JSON object of what it saw, with nothing that differs from run to
run (ids, timestamps): the test compares the two servers' objects.
"""

import asyncio
import json
import sys

import grpc
from a2a.client import ClientConfig, ClientFactory
from a2a.types import a2a_pb2 as pb
from sdk_common import error_of, kinds, msg, state


def texts(parts):
    return [p.text for p in parts]


def task_seen(task):
    return {"state": state(task),
            "status": texts(task.status.message.parts),
            "artifacts": [texts(a.parts) for a in task.artifacts],
            "history": [pb.Role.Name(m.role) for m in task.history]}


def channel(url):
    return grpc.aio.insecure_channel(url.removeprefix("grpc://"))


async def one(client, text, task_id="", context_id="", metadata=None):
    message = msg(text, task_id)
    message.context_id = context_id
    request = pb.SendMessageRequest(message=message)
    if metadata:
        request.metadata.update(metadata)
    [ev] = [e async for e in client.send_message(request)]
    return ev


async def main(base, binding):
    def factory(streaming):
        return ClientFactory(ClientConfig(streaming=streaming, grpc_channel_factory=channel,
                                          supported_protocol_bindings=[binding]))

    unary = await factory(False).create_from_url(base)
    streaming = await factory(True).create_from_url(base)
    seen = {}
    ev = await one(unary, "hello there")
    seen["hello"] = task_seen(ev.task)
    events = [e async for e in streaming.send_message(
        pb.SendMessageRequest(message=msg("hello stream")))]
    seen["hello_stream"] = kinds(events)
    asked = (await one(unary, "ask")).task
    answered = (await one(unary, "Ada", task_id=asked.id)).task
    seen["ask"] = {"first": task_seen(asked), "then": task_seen(answered),
                   "same_context": answered.context_id == asked.context_id}
    first = await one(unary, "chat one")
    second = await one(unary, "chat two", context_id=first.message.context_id)
    seen["chat"] = [first.WhichOneof("payload"), texts(first.message.parts),
                    texts(second.message.parts),
                    second.message.context_id == first.message.context_id]
    events = [e async for e in streaming.send_message(
        pb.SendMessageRequest(message=msg("count 3")))]
    seen["count_stream"] = {"kinds": kinds(events), "chunks": [
        [e.artifact_update.append, e.artifact_update.last_chunk,
         texts(e.artifact_update.artifact.parts)] for e in events
        if e.HasField("artifact_update")]}
    seen["count"] = task_seen((await one(unary, "count 2")).task)
    seen["whoami"] = task_seen((await one(unary, "whoami", metadata={"trace": "t1"})).task)
    seen["boom"] = await outcome(unary, "boom")
    seen["refuse"] = await outcome(unary, "refuse")
    seen["early"] = await outcome(unary, "early")
    seen["raw"] = task_seen((await one(unary, "raw")).task)
    seen["raw_stream"] = kinds([e async for e in streaming.send_message(
        pb.SendMessageRequest(message=msg("raw")))])
    seen["cancel"] = await cancel(unary, streaming)
    seen["submitted_stream"] = kinds([e async for e in streaming.send_message(
        pb.SendMessageRequest(message=msg("submitted")))])
    seen["stubborn"] = await stubborn(unary, streaming)
    seen["reject"] = task_seen((await one(unary, "reject")).task)
    print(json.dumps(seen))


async def outcome(client, text):
    """The task's state, or the error the send raised."""
    try:
        ev = await one(client, text)
    except Exception as exc:
        return {"error": type(exc).__name__}
    return {"state": state(ev.task), "artifacts": len(ev.task.artifacts)}


async def cancel(unary, streaming):
    stream = streaming.send_message(pb.SendMessageRequest(message=msg("slow")))
    got = []
    async with asyncio.timeout(30):
        async for e in stream:
            got.append(e)
            if e.HasField("status_update") or (e.HasField("task") and len(got) > 1):
                break
        task_id = got[0].task.id if got[0].HasField("task") else got[0].status_update.task_id
        canceled = await unary.cancel_task(pb.CancelTaskRequest(id=task_id))
        got.extend([e async for e in stream])
    again = await error_of(unary.cancel_task(pb.CancelTaskRequest(id=task_id)))
    return {"state": state(canceled), "stream": kinds(got),
            "stored": state(await unary.get_task(pb.GetTaskRequest(id=task_id))),
            "cancel_again": again}


async def stubborn(unary, streaming):
    """A cancel the executor refuses: the error the caller gets, and how the
    task ends (the stream read to its end)."""
    stream = streaming.send_message(pb.SendMessageRequest(message=msg("stubborn")))
    got = []
    async with asyncio.timeout(30):
        async for e in stream:
            got.append(e)
            if e.HasField("status_update"):
                break
        task_id = got[0].task.id
        refused = await error_of(unary.cancel_task(pb.CancelTaskRequest(id=task_id)))
        got.extend([e async for e in stream])
    return {"cancel": refused, "stream": kinds(got),
            "stored": state(await unary.get_task(pb.GetTaskRequest(id=task_id)))}


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
