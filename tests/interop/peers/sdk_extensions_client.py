"""Run by the official a2a-sdk's own virtualenv (never imported by our tests).

Usage: python sdk_extensions_client.py BASE_URL BINDING EXTENSION_URI
The SDK's client asks for the extension (service parameters, A2A-Extensions)
on a send and a streamed send; what the server answered as activated is read
where an SDK user reads it: an httpx response hook (the A2A-Extensions header
of the JSON-RPC and HTTP+JSON answers, SSE included) or a gRPC interceptor
(a2a-extensions in the initial metadata). The SDK has no API of its own for
it. Prints one JSON object.
"""

import asyncio
import json
import sys

import grpc
import httpx
from a2a.client import ClientCallContext, ClientConfig, ClientFactory
from a2a.client.service_parameters import ServiceParametersFactory, with_a2a_extensions
from a2a.types import a2a_pb2 as pb
from sdk_common import msg

SEEN = []


async def on_response(response):
    SEEN.append(response.headers.get("A2A-Extensions", ""))


# Two classes: grpc.aio files an interceptor under the first kind it is.
class UnaryMetadata(grpc.aio.UnaryUnaryClientInterceptor):
    async def intercept_unary_unary(self, continuation, details, request):
        call = await continuation(details, request)
        SEEN.append(dict(await call.initial_metadata()).get("a2a-extensions", ""))
        return call


class StreamMetadata(grpc.aio.UnaryStreamClientInterceptor):
    async def intercept_unary_stream(self, continuation, details, request):
        call = await continuation(details, request)
        SEEN.append(dict(await call.initial_metadata()).get("a2a-extensions", ""))
        return call


async def main(base, binding, uri):
    http = httpx.AsyncClient(event_hooks={"response": [on_response]}, timeout=30)
    seen = {}
    for streaming in (False, True):
        config = ClientConfig(
            streaming=streaming, supported_protocol_bindings=[binding], httpx_client=http,
            grpc_channel_factory=lambda url: grpc.aio.insecure_channel(
                url, interceptors=[UnaryMetadata(), StreamMetadata()]))
        client = await ClientFactory(config).create_from_url(base)
        SEEN.clear()
        asked = ClientCallContext(service_parameters=ServiceParametersFactory.create(
            [with_a2a_extensions([uri])]))
        events = [e async for e in client.send_message(
            pb.SendMessageRequest(message=msg("where to?")), context=asked)]
        last = events[-1]
        task = last.task if last.HasField("task") else None
        artifact = (task.artifacts[0] if task is not None else
                    next(e.artifact_update.artifact for e in events
                         if e.HasField("artifact_update")))
        hops = [v.string_value for v in artifact.metadata.fields["hops"].list_value.values]
        activated = [s for s in SEEN if s]
        seen["stream" if streaming else "send"] = {
            "activated": activated[-1] if activated else "", "hops": hops}
        await client.close()
    await http.aclose()
    print(json.dumps(seen))


asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
