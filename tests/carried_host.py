"""A host app carrying a mounted agent's gRPC on its own port (A2AApp with
`grpc="carried"`), behind the host's sign-in: an ASGI middleware that reads
a trusted `x-user` header (or gRPC metadata) into the scope, as a gateway's
authentication would. pyvoy serves it: `PyvoyServer("tests.carried_host:app")`."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from a2a_grpc.demos.demo import DemoAgent
from a2a_grpc.mount import A2AApp, Identity, ServeSettings, Store

Scope = MutableMapping[str, Any]


def identify(scope: Scope) -> Identity | None:
    user = scope.get("state", {}).get("user")
    return Identity(subject=user, scheme="host") if user else None


class SignIn:
    """The host's authentication: every request, gRPC included, passes here."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            for key, value in scope.get("headers") or ():
                if key == b"x-user":
                    scope.setdefault("state", {})["user"] = value.decode()
        await self.app(scope, receive, send)


a2a = A2AApp(DemoAgent(), ServeSettings(store=Store(url="memory")), grpc="carried",
             identify=identify)
app = SignIn(a2a)
