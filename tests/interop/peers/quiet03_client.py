"""Run by the official a2a-sdk 0.3.x's own virtualenv (never imported by our tests).

Usage: python quiet03_client.py BASE_URL SECONDS
On a task that stays quiet for SECONDS (the test agent's `quiet S`: WORKING,
then nothing, then the echo), over JSON-RPC and HTTP+JSON at once: the 0.3
client's streaming send, and its resubscribe to a task sent without
blocking. Its httpx client waits 5 s for a read, as the SDK's default does,
so only keep-alives keep the streams alive. Prints, per transport and call,
the events seen or the error raised.
"""

import asyncio
import json
import sys

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.types import MessageSendConfiguration, TaskIdParams
from sdk03_common import kind, msg


async def collect(events):
    try:
        return [kind(e) async for e in events]
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}


async def one_transport(base, transport, text):
    async with httpx.AsyncClient(timeout=5) as http:
        def config(streaming):
            return ClientConfig(streaming=streaming, supported_transports=[transport],
                                httpx_client=http)

        unary = await ClientFactory.connect(base, config(False))
        streaming = await ClientFactory.connect(base, config(True))
        [(task, _)] = [e async for e in unary.send_message(
            msg(text), configuration=MessageSendConfiguration(blocking=False))]
        resubscribed, streamed = await asyncio.gather(
            collect(streaming.resubscribe(TaskIdParams(id=task.id))),
            collect(streaming.send_message(msg(text))))
        return {"resubscribe": resubscribed, "send_streaming": streamed}


async def main(base, seconds):
    text = f"quiet {seconds}"
    results = await asyncio.gather(*(one_transport(base, t, text)
                                     for t in ("JSONRPC", "HTTP+JSON")))
    print(json.dumps(dict(zip(("JSONRPC", "HTTP+JSON"), results, strict=True))))


asyncio.run(main(sys.argv[1], sys.argv[2]))
