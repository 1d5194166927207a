"""Run by the official a2a-sdk's own virtualenv (never imported by our tests).

Usage: python quiet_client.py BASE_URL SECONDS
The 1.x client's counterpart of quiet03_client.py: on a task that stays
quiet for SECONDS, over JSON-RPC and HTTP+JSON at once, its streaming send
and its subscribe to a task sent without waiting (the SDK's own HTTP client
and timeouts). Prints, per binding and call, the events seen or the error.
"""

import asyncio
import json
import sys

from a2a.client import ClientConfig, ClientFactory
from a2a.types import a2a_pb2 as pb
from sdk_common import kinds, msg


async def collect(events):
    try:
        return kinds([e async for e in events])
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}


async def one_binding(base, binding, text):
    def factory(streaming):
        return ClientFactory(ClientConfig(streaming=streaming,
                                          supported_protocol_bindings=[binding]))

    unary = await factory(False).create_from_url(base)
    streaming = await factory(True).create_from_url(base)
    later = pb.SendMessageRequest(message=msg(text), configuration=pb.SendMessageConfiguration(
        return_immediately=True))
    [ev] = [e async for e in unary.send_message(later)]
    subscribed, streamed = await asyncio.gather(
        collect(streaming.subscribe(pb.SubscribeToTaskRequest(id=ev.task.id))),
        collect(streaming.send_message(pb.SendMessageRequest(message=msg(text)))))
    return {"subscribe": subscribed, "send_streaming": streamed}


async def main(base, seconds):
    text = f"quiet {seconds}"
    results = await asyncio.gather(*(one_binding(base, b, text)
                                     for b in ("JSONRPC", "HTTP+JSON")))
    print(json.dumps(dict(zip(("JSONRPC", "HTTP+JSON"), results, strict=True))))


asyncio.run(main(sys.argv[1], sys.argv[2]))
