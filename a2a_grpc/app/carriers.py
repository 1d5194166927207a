"""What carries `serve`'s bindings over the network, chosen by
`--grpc-carrier`: a Carrier runs the server until a signal stops it and
says its exit code.

- `grpc.aio` (the default): grpc.aio on --grpc-port beside aiohttp on
  --http-port, in this process's event loop (app/serve.py).
- `pyvoy`: Envoy's HTTP/2 with the app inside it, every binding on both
  ports (a2a_grpc/pyvoy). Imported only when chosen: its extra may not be
  installed, and it sits above this layer (it runs this layer's app inside
  Envoy), so nothing here names it but by its module's name.

Under `serve --workers N` each worker runs the carrier the command names.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Awaitable, Coroutine, Sequence
from typing import Any, Protocol

from a2a_grpc.agent import AgentExecutor
from a2a_grpc.app.loading import load_agent, load_hosted, with_card
from a2a_grpc.app.serve import serve
from a2a_grpc.app.settings import ServeSettings
from a2a_grpc.demos.demo import DemoAgent
from a2a_grpc.execution.hosted import Hosted

CARRIERS = {"grpc.aio": "a2a_grpc.app.carriers:AioCarrier",
            "pyvoy": "a2a_grpc.pyvoy:PyvoyCarrier"}


class Carrier(Protocol):
    def run(self, argv: Sequence[str], settings: ServeSettings) -> int:
        """Serve until SIGTERM or SIGINT (drained), then the exit code. `argv`:
        serve's own command line (what a carrier running the app elsewhere
        reads again); process.StartFailure when it cannot start."""
        ...


def carrier(name: str) -> Carrier:
    module, _, attr = CARRIERS[name].partition(":")
    made: Carrier = getattr(importlib.import_module(module), attr)()
    return made


class AioCarrier:
    """grpc.aio and aiohttp in this process (app/serve.py)."""

    def run(self, argv: Sequence[str], settings: ServeSettings) -> int:
        agent = settings.agent
        if agent.hosted:
            run_loop(_serve_hosted(load_hosted(agent.hosted), settings), settings.network.loop)
        else:
            loaded = load_agent(agent.agent) if agent.agent else DemoAgent()
            run_loop(_serve_loaded(loaded, settings), settings.network.loop)
        return 0


async def _serve_loaded(loaded: AgentExecutor | Awaitable[AgentExecutor],
                        settings: ServeSettings) -> None:
    """`serve`, once an agent made by an async factory is made (in the loop)."""
    agent = loaded if isinstance(loaded, AgentExecutor) else await loaded
    await serve(with_card(agent, settings.agent.card), settings)


async def _serve_hosted(loaded: Awaitable[dict[str, AgentExecutor]],
                        settings: ServeSettings) -> None:
    """`serve --host-agent ...`: several agents on one server."""
    await serve(Hosted(await loaded), settings)


def run_loop(main: Coroutine[Any, Any, None], loop: str) -> None:
    """Run `main` on uvloop (measured faster: docs/benchmarks.md) or asyncio's loop."""
    if loop != "asyncio":
        try:
            import uvloop
        except ImportError:
            if loop == "uvloop":
                main.close()
                raise SystemExit("a2a-grpc: uvloop is not installed: pip install uvloop, "
                                 "or use --loop asyncio") from None
        else:
            logging.getLogger("a2a_grpc").info("event loop: uvloop")
            uvloop.run(main)
            return
    logging.getLogger("a2a_grpc").info("event loop: asyncio")
    asyncio.run(main)
