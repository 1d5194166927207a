"""Run by the official a2a-sdk 0.3 virtualenv: an A2A 0.3 server built with
that SDK, serving a 0.3 card (a top-level url, additionalInterfaces): JSON-RPC
at /jsonrpc/, HTTP+JSON under /rest/, gRPC (the 0.3 service), push configs
kept in memory.

Usage: python sdk03_server.py   (ports chosen by the system; printed as our
server logs them: "listening: gRPC on HOST:PORT, HTTP on HOST:PORT")
The agent: text `T` -> working, an artifact `echo: T`, completed; `slow S`
works S seconds (a status every second) before that; `ask` asks for input.
A2A_SDK_EXECUTOR=MODULE:ATTR serves that executor (a class, made with no
arguments) instead.
"""

import asyncio
import socket

import grpc
import uvicorn
from a2a.grpc import a2a_pb2_grpc
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AFastAPIApplication, A2ARESTFastAPIApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.tasks import InMemoryPushNotificationConfigStore, InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Part,
    TaskState,
    TextPart,
    TransportProtocol,
)
from a2a.utils import new_agent_text_message, new_task
from fastapi import FastAPI
from peer_executor import executor


class Echo(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        task = context.current_task
        if task is None:
            task = new_task(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        if text == "ask":
            await updater.update_status(
                TaskState.input_required,
                new_agent_text_message("What is your answer?", task.context_id, task.id),
                final=True)
            return
        await updater.start_work()
        if text.startswith("slow ") and text[5:].isdigit():
            for left in range(int(text[5:]), 0, -1):
                await asyncio.sleep(1)
                await updater.update_status(TaskState.working, new_agent_text_message(
                    f"{left - 1} s left", task.context_id, task.id))
        await updater.add_artifact([Part(root=TextPart(text=f"echo: {text}"))], name="echo")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        await TaskUpdater(event_queue, task.id, task.context_id).cancel()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def main():
    http_port, grpc_port = free_port(), free_port()
    base = f"http://127.0.0.1:{http_port}"
    card = AgentCard(
        name="SDK 0.3 reference agent", description="echoes", version="0.3",
        protocol_version="0.3.0", url=base + "/jsonrpc/",
        preferred_transport=TransportProtocol.jsonrpc,
        additional_interfaces=[
            AgentInterface(url=base + "/rest/", transport=TransportProtocol.http_json),
            AgentInterface(url=f"127.0.0.1:{grpc_port}", transport=TransportProtocol.grpc)],
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text"], default_output_modes=["text"],
        skills=[AgentSkill(id="echo", name="Echo", description="echoes", tags=["demo"])])
    handler = DefaultRequestHandler(agent_executor=executor(Echo), task_store=InMemoryTaskStore(),
                                    push_config_store=InMemoryPushNotificationConfigStore())
    app = FastAPI()

    @app.get("/.well-known/agent-card.json")
    def get_card():
        return card.model_dump(mode="json", by_alias=True, exclude_none=True)

    app.mount("/jsonrpc", A2AFastAPIApplication(card, handler).build())
    app.mount("/rest", A2ARESTFastAPIApplication(card, handler).build())
    server = grpc.aio.server()
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(card, handler), server)
    server.add_insecure_port(f"127.0.0.1:{grpc_port}")
    await server.start()
    http = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=http_port,
                                         log_level="warning"))
    serving = asyncio.create_task(http.serve())
    while not http.started:  # say so only once it answers
        await asyncio.sleep(0.05)
        if serving.done():
            raise SystemExit("the HTTP server did not start")
    print(f"listening: gRPC on 127.0.0.1:{grpc_port}, HTTP on 127.0.0.1:{http_port}",
          flush=True)
    try:
        await serving
    finally:
        await server.stop(1)


if __name__ == "__main__":
    asyncio.run(main())
