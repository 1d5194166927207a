"""Run by the official a2a-sdk's own virtualenv: a reference A2A server built
with the SDK (JSON-RPC at /, REST at the root, card at the well-known path).

Usage: python sdk_server.py PORT [GRPC_PORT]   (with GRPC_PORT, gRPC too, via GrpcHandler)
The agent echoes text as a task: working, one artifact `echo: T`, completed;
`stream N` sends N chunks.
"""

import asyncio
import sys

import uvicorn
from a2a.helpers import new_task
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import a2a_pb2 as pb
from starlette.applications import Starlette


class Echo(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        if context.current_task is None:  # the SDK wants the Task itself first
            await event_queue.enqueue_event(new_task(
                context.task_id, context.context_id, pb.TASK_STATE_SUBMITTED,
                history=[context.message]))
        await updater.start_work()
        if text.startswith("stream ") and text[7:].isdigit():
            n = int(text[7:])
            for i in range(1, n + 1):
                await updater.add_artifact([pb.Part(text=f"chunk {i}/{n}")], artifact_id="c",
                                           name="chunks", append=i > 1, last_chunk=i == n)
        else:
            await updater.add_artifact([pb.Part(text=f"echo: {text}")], name="echo")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


port = int(sys.argv[1])
grpc_port = int(sys.argv[2]) if len(sys.argv) > 2 else None
base = f"http://127.0.0.1:{port}"
card = pb.AgentCard(
    name="SDK reference agent", description="echoes", version="1.0",
    capabilities=pb.AgentCapabilities(streaming=True),
    default_input_modes=["text/plain"], default_output_modes=["text/plain"],
    supported_interfaces=[
        pb.AgentInterface(url=base + "/", protocol_binding="JSONRPC", protocol_version="1.0"),
        pb.AgentInterface(url=base, protocol_binding="HTTP+JSON", protocol_version="1.0"),
    ],
    skills=[pb.AgentSkill(id="echo", name="Echo", description="echoes", tags=["demo"])],
)
if grpc_port is not None:
    card.supported_interfaces.append(pb.AgentInterface(
        url=f"grpc://127.0.0.1:{grpc_port}", protocol_binding="GRPC", protocol_version="1.0"))
handler = DefaultRequestHandler(Echo(), InMemoryTaskStore(), card)
routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/"),
          *create_rest_routes(handler)]
app = Starlette(routes=routes)


async def main() -> None:
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    if grpc_port is None:
        await uvicorn.Server(config).serve()
        return
    import grpc
    from a2a.server.request_handlers import GrpcHandler
    from a2a.types import a2a_pb2_grpc

    server = grpc.aio.server()
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
    server.add_insecure_port(f"127.0.0.1:{grpc_port}")
    await server.start()
    await uvicorn.Server(config).serve()
    await server.stop(0)


asyncio.run(main())
