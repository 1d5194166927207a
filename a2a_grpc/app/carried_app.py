"""The app pyvoy carries for `serve --grpc-carrier pyvoy` (app/carrier.py):
the `serve` command line (from the environment) read again here, in
Envoy's embedded Python, and served by A2AApp with gRPC answered on the
same port. The agent is made when the lifespan starts, in the app's event
loop (an async factory is awaited there)."""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable

from a2a_grpc.agent import AgentExecutor
from a2a_grpc.app import process
from a2a_grpc.app.carrier import CARRIED_ARGV
from a2a_grpc.app.loading import load_agent
from a2a_grpc.app.mounted import A2AApp
from a2a_grpc.app.settings import ServeSettings
from a2a_grpc.bridge import asgi
from a2a_grpc.demos.demo import DemoAgent
from a2a_grpc.observe import logs


class CarriedApp:
    """A2AApp, made at the lifespan's start from the settings `serve` was given."""

    def __init__(self, settings: ServeSettings) -> None:
        self.settings = settings
        self.app: A2AApp | None = None

    async def __call__(self, scope: asgi.Scope, receive: asgi.Receive,
                       send: asgi.Send) -> None:
        if self.app is None:
            if scope["type"] != "lifespan":
                raise RuntimeError("the carried app is made by its lifespan, which did not run")
            name = self.settings.agent.agent
            loaded: AgentExecutor | Awaitable[AgentExecutor] = (
                load_agent(name) if name else DemoAgent())
            agent = loaded if isinstance(loaded, AgentExecutor) else await loaded
            self.app = A2AApp(agent, self.settings, grpc="carried",
                              public_url=self.settings.network.public_url)
        await self.app(scope, receive, send)


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
