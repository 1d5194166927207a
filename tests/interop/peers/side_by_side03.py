"""Run in a virtualenv holding both our wheel and the official a2a-sdk 0.3.x,
whose gRPC types register A2A 0.3's package `a2a.v1` (ours serve 0.3 too).

Usage: python side_by_side03.py sdk-first|ours-first
Imports both in that order, serves our demo agent in this process, has the
0.3 SDK's client call it in A2A 0.3 on JSON-RPC, HTTP+JSON and gRPC, has our
client call an agent the 0.3 SDK serves in this process, and prints one JSON
object of what it saw.
"""

import asyncio
import importlib
import json
import sys
import uuid

# Imported in the order asked, before anything else imports either.
BOTH = ["a2a.grpc.a2a_pb2", "a2a_grpc.generated.a2a_v03_pb2"]
for module in BOTH if sys.argv[1] == "sdk-first" else BOTH[::-1]:
    importlib.import_module(module)

import grpc
import httpx
import uvicorn
from a2a.client import ClientConfig, ClientFactory
from a2a.grpc import a2a_pb2 as sdk_pb2
from a2a.grpc import a2a_pb2_grpc
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AFastAPIApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    Message,
    Part,
    Role,
    TextPart,
    TransportProtocol,
)
from a2a.utils import new_task
from fastapi import FastAPI
from ours_in_process import free_port, serve_ours

from a2a_grpc import types as ours
from a2a_grpc.client import A2AClient, ClientOptions
from a2a_grpc.generated import a2a_v03_pb2 as our_v03


class SdkEcho(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task or new_task(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        said = context.get_user_input()
        await updater.add_artifact([Part(root=TextPart(text=f"sdk 0.3: {said}"))])
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


async def serve_sdk():
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    card = AgentCard(name="SDK 0.3 agent", description="echoes", version="0.3",
                     protocol_version="0.3.0", url=base + "/jsonrpc/",
                     preferred_transport=TransportProtocol.jsonrpc,
                     capabilities=AgentCapabilities(streaming=True),
                     default_input_modes=["text/plain"], default_output_modes=["text/plain"],
                     skills=[AgentSkill(id="echo", name="Echo", description="echoes",
                                        tags=["demo"])])
    handler = DefaultRequestHandler(agent_executor=SdkEcho(), task_store=InMemoryTaskStore())
    app = FastAPI()

    @app.get("/.well-known/agent-card.json")
    def get_card():
        return card.model_dump(mode="json", by_alias=True, exclude_none=True)

    app.mount("/jsonrpc", A2AFastAPIApplication(card, handler).build())
    http = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    serving = asyncio.create_task(http.serve())
    while not http.started:
        await asyncio.sleep(0.02)
        if serving.done():
            raise SystemExit("the SDK's HTTP server did not start")
    return base, http, serving


async def sdk_calls_ours(base):
    seen = {}
    async with httpx.AsyncClient(timeout=30) as http:
        for transport in ("JSONRPC", "HTTP+JSON", "GRPC"):
            client = await ClientFactory.connect(base, ClientConfig(
                streaming=False, supported_transports=[transport], httpx_client=http,
                grpc_channel_factory=grpc.aio.insecure_channel))
            message = Message(role=Role.user, parts=[Part(root=TextPart(text="hello"))],
                              message_id=str(uuid.uuid4()))
            [(task, _)] = [e async for e in client.send_message(message)]
            seen[transport] = [task.status.state.value,
                               task.artifacts[0].parts[0].root.text]
    return seen


async def ours_calls_sdk(base):
    client = await A2AClient.connect(base, ClientOptions())
    try:
        sent = await client.send_message(ours.SendMessageRequest(message=ours.Message(
            message_id="ours-1", role=ours.ROLE_USER, parts=[ours.Part(text="hi")])))
        return [ours.TaskState.Name(sent.task.status.state),
                sent.task.artifacts[0].parts[0].text, client.interface.protocol_version]
    finally:
        await client.close()


async def main():
    card, our_grpc, our_http = await serve_ours(versions=("1.0", "0.3"))
    base = card.supported_interfaces[2].url
    sdk_base, sdk_http, serving = await serve_sdk()
    try:
        seen = {
            "packages": [our_v03.Task.DESCRIPTOR.full_name, sdk_pb2.Task.DESCRIPTOR.full_name],
            "bytes_equal": our_v03.Message(message_id="m").SerializeToString()
            == sdk_pb2.Message(message_id="m").SerializeToString(),
            "sdk_stub": a2a_pb2_grpc.A2AServiceStub.__name__,
            "sdk_calls_ours": await sdk_calls_ours(base),
            "ours_calls_sdk": await ours_calls_sdk(sdk_base),
        }
    finally:
        sdk_http.should_exit = True
        await serving
        await our_http.cleanup()
        await our_grpc.stop(0)
    print(json.dumps(seen))


asyncio.run(main())
