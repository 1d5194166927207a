"""The app pyvoy carries for `serve --grpc-carrier pyvoy` (pyvoy/serve.py):
the `serve` command line (from the environment) read again here, in
Envoy's embedded Python, and served by A2AApp with gRPC answered on the
same port. The agent is made when the lifespan starts, in the app's event
loop (an async factory is awaited there); `--metrics-port`'s server runs
in that loop too. SIGTERM and SIGHUP come from `serve` through FIFOs
(pyvoy/drain.py)."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path

from aiohttp import web

from a2a_grpc.agent import AgentExecutor
from a2a_grpc.app import process
from a2a_grpc.app.hangup import reload_all
from a2a_grpc.app.http import start_operations
from a2a_grpc.app.loading import load_agent, load_hosted, with_card
from a2a_grpc.app.mounted import A2AApp
from a2a_grpc.app.options import drain_notice
from a2a_grpc.app.serve import drain
from a2a_grpc.app.settings import ServeSettings
from a2a_grpc.bridge import asgi
from a2a_grpc.cards.card import host_port
from a2a_grpc.demos.demo import DemoAgent
from a2a_grpc.execution.hosted import Hosted
from a2a_grpc.observe import logs
from a2a_grpc.pyvoy.drain import FOLDER, follow, listen
from a2a_grpc.pyvoy.serve import CARRIED_ARGV, FAILED, PLAIN

log = logging.getLogger("a2a_grpc")


class CarriedApp:
    """A2AApp, made at the lifespan's start from the settings `serve` was given."""

    def __init__(self, settings: ServeSettings) -> None:
        self.settings = settings
        self.app: A2AApp | None = None

    async def __call__(self, scope: asgi.Scope, receive: asgi.Receive,
                       send: asgi.Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if self.app is None:
            raise RuntimeError("the carried app is made by its lifespan, which did not run")
        await self.app(scope, receive, send)

    async def _lifespan(self, receive: asgi.Receive, send: asgi.Send) -> None:
        unlisten: list[Callable[[], None]] = []

        operations: list[web.AppRunner] = []

        async def start() -> None:
            self.app = await self._made()
            await self.app.start()
            unlisten.append(listen(self.drain, reload_all))
            if serving := os.environ.get(process.WORKER_PID):  # started by `serve`
                unlisten.append(follow(int(serving)))
            port = self.settings.observability.metrics_port
            served = self.app.served
            if port is not None and served is not None:
                host = self.settings.network.host
                operations.append(await start_operations(host, port, served.metrics,
                                                         served.readiness))
                log.info("metrics on %s", host_port(host, operations[0].addresses[0][1]))

        async def stop() -> None:
            for each in unlisten:
                each()
            for runner in operations:
                await runner.cleanup()
            if self.app is not None:
                await self.app.stop()

        await asgi.lifespan(receive, send, start, stop, told)

    async def _made(self) -> A2AApp:
        name, hosted = self.settings.agent.agent, self.settings.agent.hosted
        if hosted:  # `--host-agent NAME=...`: several agents, each under /NAME
            agent: AgentExecutor = Hosted(await load_hosted(hosted))
        else:
            loaded = load_agent(name) if name else DemoAgent()
            agent = with_card(loaded if isinstance(loaded, AgentExecutor) else await loaded,
                              self.settings.agent.card)
        app = A2AApp(agent, self.settings, grpc="carried",
                     public_url=self.settings.network.public_url)
        if os.environ.get(process.WORKER_PID):  # `serve`'s Envoy: gRPC on --grpc-port too
            app.grpc_port = self.settings.network.grpc_port
        return app

    async def drain(self) -> None:
        """SIGTERM's drain, as `serve` does it on grpc.aio (`serve` asked)."""
        served = self.app.served if self.app is not None else None
        if served is None or served.grpc is None:
            return
        net = self.settings.network
        await drain(served.admission, served.readiness, served.grpc, served.bus,
                    served.handler, drain_notice(net, bool(self.settings.store.bus)), net.grace,
                    replicated=bool(self.settings.store.bus))


def told(exc: Exception) -> bool:
    """Why the app cannot start, for `serve` to say in its words (serve.py);
    True when that is all there is to say (no traceback to log)."""
    plain = isinstance(exc, PLAIN)
    text = str(exc) if plain else f"the app could not start: {type(exc).__name__}: {exc}"
    code = 2 if isinstance(exc, ValueError) else 1
    folder = os.environ.get(FOLDER)
    if folder:
        (Path(folder) / FAILED).write_text(f"{code}\n{text}")
    return plain and bool(folder)


def from_argv(argv: list[str]) -> ServeSettings:
    from a2a_grpc.app.cli import serve_settings  # the command line, read as `serve` reads it

    return serve_settings(argv)


def _made() -> CarriedApp:
    argv = json.loads(os.environ.get(CARRIED_ARGV) or '["serve"]')
    settings = from_argv(argv)
    logs.setup(settings.observability.log_level, settings.observability.log_format,
               process.worker())
    return CarriedApp(settings)


app = _made()
