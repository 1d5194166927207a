"""Run by the official a2a-sdk's own virtualenv (never imported by our tests).

Usage: python sdk_card_client.py BASE_URL BINDING
Resolves the agent card at BASE_URL, lets the SDK pick BINDING from it, then
sends, streams and gets a task; prints one JSON object with what it saw.
"""

import asyncio
import json
import sys

import grpc
from a2a.client import ClientConfig, ClientFactory
from a2a.types import a2a_pb2 as pb
from sdk_common import kinds, msg, state


async def main(base, binding):
    def factory(streaming):
        return ClientFactory(ClientConfig(streaming=streaming,
                                          supported_protocol_bindings=[binding],
                                          grpc_channel_factory=grpc.aio.insecure_channel))

    unary = await factory(False).create_from_url(base)
    streaming = await factory(True).create_from_url(base)
    [ev] = [e async for e in unary.send_message(pb.SendMessageRequest(message=msg("hello")))]
    got = await unary.get_task(pb.GetTaskRequest(id=ev.task.id))
    events = [e async for e in streaming.send_message(pb.SendMessageRequest(
        message=msg("stream 2")))]
    print(json.dumps({"transport": type(unary._transport).__name__, "send": state(ev.task),
                      "get": got.artifacts[0].parts[0].text, "stream": kinds(events)}))
    await unary.close()
    await streaming.close()


asyncio.run(main(sys.argv[1], sys.argv[2]))
