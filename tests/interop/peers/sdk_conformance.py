"""Run by the official a2a-sdk's own virtualenv (`make tck`): the SDK's server
with the conformance-suite agent profile, as every SDK's conformance agent
has it and as a2a_grpc.demos.conformance does for ours: a new message makes a task
SUBMITTED (held for RESUBSCRIBE_TIMEOUT_MS when its messageId starts with
test-subscribe-message-id or test-resubscribe-message-id), then WORKING, and
execute() returns; a follow-up moves it to WORKING again.

Usage: python sdk_conformance.py HTTP_PORT GRPC_PORT
With SDK_VERSIONLESS_AS_1_0=1, HTTP calls without A2A-Version are read as 1.0.
The card advertises http://localhost:HTTP_PORT and grpc://localhost:GRPC_PORT.
"""

import asyncio
import os
import sys

import httpx
import uvicorn
from a2a.helpers import new_task
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import a2a_pb2 as pb
from a2a.types import a2a_pb2_grpc
from starlette.applications import Starlette

HOLD = ("test-subscribe-message-id", "test-resubscribe-message-id")


class FireAndForget(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        if context.current_task is None:
            await event_queue.enqueue_event(new_task(
                context.task_id, context.context_id, pb.TASK_STATE_SUBMITTED,
                history=[context.message]))
            if context.message.message_id.startswith(HOLD):
                await asyncio.sleep(int(os.environ.get("RESUBSCRIBE_TIMEOUT_MS", "3000")) / 1000)
        await updater.start_work()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def versionless_as_1_0(app):
    """The suite sends no A2A-Version, which the SDK reads as 0.3 (spec §3.6.2)
    and refuses: this ASGI wrapper adds `A2A-Version: 1.0` where it is missing,
    which is how our server reads such a call, for a like-for-like column."""
    async def wrapped(scope, receive, send):
        if scope["type"] == "http" and not any(k == b"a2a-version" for k, _ in scope["headers"]):
            scope = dict(scope, headers=[*scope["headers"], (b"a2a-version", b"1.0")])
        await app(scope, receive, send)
    return wrapped


async def main() -> None:
    http_port, grpc_port = int(sys.argv[1]), int(sys.argv[2])
    base = f"http://localhost:{http_port}"
    card = pb.AgentCard(
        name="SDK conformance agent", description="fire and forget", version="1.0.0",
        capabilities=pb.AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"], default_output_modes=["text/plain"],
        supported_interfaces=[
            pb.AgentInterface(url=f"grpc://localhost:{grpc_port}", protocol_binding="GRPC",
                              protocol_version="1.0"),
            pb.AgentInterface(url=base + "/", protocol_binding="JSONRPC", protocol_version="1.0"),
            pb.AgentInterface(url=base, protocol_binding="HTTP+JSON", protocol_version="1.0"),
        ],
        skills=[pb.AgentSkill(id="hand-off", name="Hand off", description="works",
                              tags=["conformance"])],
    )
    configs = InMemoryPushNotificationConfigStore()
    handler = DefaultRequestHandler(
        FireAndForget(), InMemoryTaskStore(), card, push_config_store=configs,
        push_sender=BasePushNotificationSender(httpx.AsyncClient(), configs))
    server = __import__("grpc").aio.server()
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
    server.add_insecure_port(f"127.0.0.1:{grpc_port}")
    await server.start()
    routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/"),
              *create_rest_routes(handler)]
    app = Starlette(routes=routes)
    if os.environ.get("SDK_VERSIONLESS_AS_1_0") == "1":
        app = versionless_as_1_0(app)
    config = uvicorn.Config(app, host="127.0.0.1", port=http_port, log_level="warning")
    await uvicorn.Server(config).serve()
    await server.stop(0)


asyncio.run(main())
