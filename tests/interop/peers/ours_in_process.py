"""Our demo agent served in the process of a peer script that imports it
(side_by_side*.py), on free ports, as docs/agents.md embeds a server."""

import socket

from aiohttp import web

from a2a_grpc import Interface, RequestHandler, public_card, start_grpc
from a2a_grpc.bridge import create_app
from a2a_grpc.demos.demo import DemoAgent


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def serve_ours(versions=("1.0",)):
    """(the card, the gRPC server, the HTTP runner) of our demo agent."""
    grpc_port, http_port = free_port(), free_port()
    agent = DemoAgent()
    card = public_card(agent.card, [
        Interface("GRPC", f"127.0.0.1:{grpc_port}"),
        Interface("JSONRPC", f"http://127.0.0.1:{http_port}/"),
        Interface("HTTP+JSON", f"http://127.0.0.1:{http_port}"),
    ], versions=versions)
    handler = RequestHandler(agent, card)
    grpc_server = await start_grpc(handler, "127.0.0.1", grpc_port)
    runner = web.AppRunner(create_app(handler, card))
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", http_port).start()
    return card, grpc_server, runner
