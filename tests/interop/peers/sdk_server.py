"""Run by the official a2a-sdk's own virtualenv: a reference A2A server built
with the SDK (JSON-RPC at /, REST at the root, card at the well-known path).

Usage: python sdk_server.py PORT
The agent echoes text as a task: working, one artifact `echo: T`, completed;
`stream N` sends N chunks.
"""

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
handler = DefaultRequestHandler(Echo(), InMemoryTaskStore(), card)
routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/"),
          *create_rest_routes(handler)]
uvicorn.run(Starlette(routes=routes), host="127.0.0.1", port=port, log_level="warning")
