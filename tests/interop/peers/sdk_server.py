"""Run by the official a2a-sdk's own virtualenv: a reference A2A server built
with the SDK (JSON-RPC at /, REST at the root, card at the well-known path).

Usage: python sdk_server.py PORT [GRPC_PORT]   (with GRPC_PORT, gRPC too, via GrpcHandler)
Port 0 picks a free one; the ports bound are printed as our server logs them
("listening: gRPC on HOST:PORT, HTTP on HOST:PORT").
The agent echoes text as a task: working, one artifact `echo: T`, completed;
`stream N` sends N chunks; `slow S` works S seconds with a status every 2 s
(as our demo agent does); `stream N B` pads each chunk to B bytes. With
A2A_SEED_TASKS=N in the environment the store starts with N completed tasks
(benchmarks: ListTasks over a large store). A2A_SDK_STORE picks the SDK's
task store: unset, its InMemoryTaskStore; a SQLAlchemy URL
(`sqlite+aiosqlite:///PATH`, `postgresql+asyncpg://...`), its
DatabaseTaskStore on that database, as its documentation sets it up
(A2A_SDK_PG_SCHEMA: the PostgreSQL schema to use). A2A_SDK_EXECUTOR=MODULE:ATTR
serves that executor (a class, made with no arguments) instead of the echo.
"""

import asyncio
import os
import socket
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
from peer_executor import executor
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
        if text.startswith("slow ") and text[5:].isdigit():
            left = float(text[5:])
            while left > 0:
                await asyncio.sleep(min(2.0, left))
                left -= 2.0
                await updater.update_status(pb.TASK_STATE_WORKING, updater.new_agent_message(
                    [pb.Part(text=f"{max(left, 0):.0f} s left")]))
            await updater.add_artifact([pb.Part(text=f"echo: {text}")], name="echo")
        elif (text.startswith("stream ") and text[7:].replace(" ", "").isdigit()
              and len(text[7:].split()) <= 2):
            words = text[7:].split()
            n, size = int(words[0]), int(words[1]) if len(words) > 1 else 0
            for i in range(1, n + 1):
                await updater.add_artifact([pb.Part(text=f"chunk {i}/{n}".ljust(size, "."))],
                                           artifact_id="c",
                                           name="chunks", append=i > 1, last_chunk=i == n)
        else:
            await updater.add_artifact([pb.Part(text=f"echo: {text}")], name="echo")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()




def make_card(port, grpc_port):
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
    return card


def make_store():
    url = os.environ.get("A2A_SDK_STORE")
    if not url:
        return InMemoryTaskStore()
    from a2a.server.tasks import DatabaseTaskStore
    from sqlalchemy.ext.asyncio import create_async_engine

    schema = os.environ.get("A2A_SDK_PG_SCHEMA")
    args = {"server_settings": {"search_path": schema}} if schema else {}
    return DatabaseTaskStore(create_async_engine(url, connect_args=args))


store = make_store()


async def seed(n):
    from a2a.server.context import ServerCallContext

    context = ServerCallContext()
    for i in range(n):
        task = new_task(f"seed-{i:07d}", f"ctx-{i % 100}", pb.TASK_STATE_COMPLETED)
        task.status.timestamp.FromNanoseconds(1_700_000_000_000_000_000 + i * 1000)
        task.artifacts.add(artifact_id="a", parts=[pb.Part(text=f"result {i}")])
        await store.save(task, context)
async def main() -> None:
    if hasattr(store, "initialize"):
        await store.initialize()
    await seed(int(os.environ.get("A2A_SEED_TASKS", "0")))
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a benchmark restarts it
    sock.bind(("127.0.0.1", int(sys.argv[1])))  # bound here: the card needs the real port
    port = sock.getsockname()[1]
    sock.listen(128)  # connections wait in the backlog until uvicorn takes them
    grpc_server, grpc_port = None, None
    if len(sys.argv) > 2:
        import grpc
        from a2a.server.request_handlers import GrpcHandler
        from a2a.types import a2a_pb2_grpc

        grpc_server = grpc.aio.server()
        grpc_port = grpc_server.add_insecure_port(f"127.0.0.1:{sys.argv[2]}")
    handler = DefaultRequestHandler(executor(Echo), store, make_card(port, grpc_port))
    if grpc_server is not None:
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), grpc_server)
        await grpc_server.start()
    card = make_card(port, grpc_port)
    routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/"),
              *create_rest_routes(handler)]
    config = uvicorn.Config(Starlette(routes=routes), log_level="warning")
    print(f"listening: gRPC on 127.0.0.1:{grpc_port or 0}, HTTP on 127.0.0.1:{port}", flush=True)
    await uvicorn.Server(config).serve(sockets=[sock])
    if grpc_server is not None:
        await grpc_server.stop(0)


asyncio.run(main())
