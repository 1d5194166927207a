"""Run in a virtualenv holding both our wheel and the official a2a-sdk 1.x:
the two in one process, as a user who has the SDK in their dependency tree
(ADK, Strands, Microsoft's or CrewAI's A2A support) runs them.

Usage: python side_by_side.py sdk-first|ours-first
Imports both in that order, serves our demo agent and an SDK agent in this
process, has the SDK's client call ours on JSON-RPC, HTTP+JSON and gRPC and
our client call the SDK's on each binding it serves, asks our server's
reflection what it serves, and prints one JSON object of what it saw.
"""

import asyncio
import importlib
import json
import sys

# Imported in the order asked, before anything else imports either.
BOTH = ["a2a.types", "a2a_grpc.types"]
for module in BOTH if sys.argv[1] == "sdk-first" else BOTH[::-1]:
    importlib.import_module(module)

import grpc
import uvicorn
from a2a.client import ClientConfig, ClientFactory
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import a2a_pb2 as sdk
from a2a.types import a2a_pb2_grpc as sdk_grpc
from google.protobuf import struct_pb2, timestamp_pb2
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from ours_in_process import free_port, serve_ours
from starlette.applications import Starlette

from a2a_grpc import types as ours
from a2a_grpc.client import A2AClient, ClientOptions


class SdkEcho(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        if context.current_task is None:
            await event_queue.enqueue_event(sdk.Task(
                id=context.task_id, context_id=context.context_id,
                status=sdk.TaskStatus(state=sdk.TASK_STATE_SUBMITTED),
                history=[context.message]))
        await updater.start_work()
        await updater.add_artifact([sdk.Part(text=f"sdk: {context.get_user_input()}")])
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


async def serve_sdk():
    grpc_port, http_port = free_port(), free_port()
    base = f"http://127.0.0.1:{http_port}"
    card = sdk.AgentCard(
        name="SDK agent", description="echoes", version="1",
        capabilities=sdk.AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"], default_output_modes=["text/plain"],
        supported_interfaces=[
            sdk.AgentInterface(url=base + "/", protocol_binding="JSONRPC", protocol_version="1.0"),
            sdk.AgentInterface(url=base, protocol_binding="HTTP+JSON", protocol_version="1.0"),
            sdk.AgentInterface(url=f"127.0.0.1:{grpc_port}", protocol_binding="GRPC",
                               protocol_version="1.0")],
        skills=[sdk.AgentSkill(id="echo", name="Echo", description="echoes", tags=["demo"])])
    handler = DefaultRequestHandler(SdkEcho(), InMemoryTaskStore(), card)
    grpc_server = grpc.aio.server()
    grpc_server.add_insecure_port(f"127.0.0.1:{grpc_port}")
    sdk_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), grpc_server)
    await grpc_server.start()
    routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/"),
              *create_rest_routes(handler)]
    http = uvicorn.Server(uvicorn.Config(Starlette(routes=routes), host="127.0.0.1",
                                         port=http_port, log_level="warning"))
    serving = asyncio.create_task(http.serve())
    while not http.started:
        await asyncio.sleep(0.02)
        if serving.done():
            raise SystemExit("the SDK's HTTP server did not start")
    return base, grpc_server, http, serving


async def sdk_calls_ours(card):
    """The SDK's client, each binding our card lists: a blocking send of 'hello'."""
    seen = {}
    sdk_card = sdk.AgentCard.FromString(card.SerializeToString())  # as a client would read it
    for binding in ("JSONRPC", "HTTP+JSON", "GRPC"):
        client = ClientFactory(ClientConfig(
            streaming=False, supported_protocol_bindings=[binding],
            grpc_channel_factory=grpc.aio.insecure_channel)).create(sdk_card)
        request = sdk.SendMessageRequest(message=sdk.Message(
            message_id=f"sdk-{binding}", role=sdk.ROLE_USER, parts=[sdk.Part(text="hello")]))
        [event] = [e async for e in client.send_message(request)]
        task = event.task
        seen[binding] = [sdk.TaskState.Name(task.status.state), task.artifacts[0].parts[0].text,
                         type(client._transport).__name__]
        await client.close()
    return seen


async def ours_calls_sdk(base):
    """Our client, each binding the SDK's card lists."""
    seen = {}
    for binding in ("JSONRPC", "HTTP+JSON", "GRPC"):
        client = await A2AClient.connect(base, ClientOptions(prefer=[binding]))
        try:
            sent = await client.send_message(ours.SendMessageRequest(message=ours.Message(
                message_id=f"ours-{binding}", role=ours.ROLE_USER,
                parts=[ours.Part(text="hi")])))
            task = sent.task
            seen[binding] = [ours.TaskState.Name(task.status.state),
                             task.artifacts[0].parts[0].text, client.interface.protocol_binding]
        finally:
            await client.close()
    return seen


async def reflected(target):
    """What our server's reflection says it serves, and the package of its A2A file."""
    async with grpc.aio.insecure_channel(target) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)

        async def ask(request):
            async for answer in stub.ServerReflectionInfo(iter([request])):
                return answer

        services = await ask(reflection_pb2.ServerReflectionRequest(list_services=""))
        found = await ask(reflection_pb2.ServerReflectionRequest(
            file_containing_symbol="lf.a2a.v1.A2AService"))
    from google.protobuf import descriptor_pb2

    files = [descriptor_pb2.FileDescriptorProto.FromString(b)
             for b in found.file_descriptor_response.file_descriptor_proto]
    return {"services": sorted(s.name for s in services.list_services_response.service),
            "packages": sorted({f.package for f in files})}


def well_known_types():
    """A Struct and a Timestamp built as usual go into our messages and the SDK's."""
    meta = struct_pb2.Struct()
    meta.update({"k": "v", "n": 1})
    when = timestamp_pb2.Timestamp(seconds=1_700_000_000)
    mine = ours.Message(metadata=meta)
    mine.metadata.update({"more": True})
    status = ours.TaskStatus(timestamp=when)
    theirs = sdk.Message(metadata=meta)
    return {"ours": dict(mine.metadata), "status_seconds": status.timestamp.seconds,
            "sdk": dict(theirs.metadata),
            "same_struct_class": type(mine.metadata) is type(theirs.metadata) is struct_pb2.Struct,
            "bytes_equal": ours.Message(message_id="m", parts=[ours.Part(text="x")])
            .SerializeToString() == sdk.Message(message_id="m", parts=[sdk.Part(text="x")])
            .SerializeToString()}


async def main():
    card, our_grpc, our_http = await serve_ours()
    base, sdk_grpc_server, sdk_http, serving = await serve_sdk()
    try:
        seen = {
            "distinct_classes": ours.Task is not sdk.Task,
            "packages": [ours.Task.DESCRIPTOR.full_name, sdk.Task.DESCRIPTOR.full_name],
            "sdk_calls_ours": await sdk_calls_ours(card),
            "ours_calls_sdk": await ours_calls_sdk(base),
            "reflection": await reflected(card.supported_interfaces[0].url),
            "well_known": well_known_types(),
        }
    finally:
        sdk_http.should_exit = True
        await serving
        await sdk_grpc_server.stop(0)
        await our_http.cleanup()
        await our_grpc.stop(0)
    print(json.dumps(seen))


asyncio.run(main())
