"""An ASGI app in a real server process, as users run one: uvicorn or
hypercorn on a socket bound to port 0, the port said once the app's
lifespan has started (the line tests/processes.py reads).

    python -m tests.asgi_runner uvicorn|hypercorn MODULE:ATTR

The gRPC port in that line is the one the module's A2AApp bound (0 when
it has none, or serves no gRPC).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import signal
import socket
import sys
from typing import Any


def main(server: str, spec: str) -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    module, _, attr = spec.partition(":")
    app = getattr(importlib.import_module(module), attr)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    # Listening before the server starts: the lifespan (which the line below
    # waits for) runs before uvicorn takes the socket, and a connection made
    # meanwhile waits in the backlog instead of being refused.
    sock.listen(128)
    port = sock.getsockname()[1]

    async def announced(scope: Any, receive: Any, send: Any) -> None:
        async def told(message: Any) -> None:
            await send(message)
            if message["type"] == "lifespan.startup.complete":
                print(f"listening: gRPC on 127.0.0.1:{_grpc_port(module)}, "
                      f"HTTP on 127.0.0.1:{port}", file=sys.stderr, flush=True)

        await app(scope, receive, told if scope["type"] == "lifespan" else send)

    if server == "uvicorn":
        import uvicorn

        served = uvicorn.Config(announced, lifespan="on", log_level="warning",
                                timeout_graceful_shutdown=5)
        asyncio.run(uvicorn.Server(served).serve(sockets=[sock]))
        return
    from hypercorn.asyncio import serve
    from hypercorn.config import Config

    config = Config()
    config.bind = [f"fd://{sock.fileno()}"]
    config.graceful_timeout = 5

    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await serve(announced, config, shutdown_trigger=stop.wait)

    asyncio.run(run())


def _grpc_port(module: str) -> int:
    from a2a_grpc.mount import A2AApp

    for value in vars(sys.modules[module]).values():
        if isinstance(value, A2AApp) and value.served is not None and value.served.grpc:
            return value.served.grpc.port
    return 0


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
