"""An agent mounted under /a2a in a FastAPI app of your own (docs/mounting.md).

    pip install 'a2a-grpc' fastapi uvicorn
    uvicorn examples.mount_fastapi:app --port 8000

The host app keeps its own routes and middleware: `record` sees every
request, A2A's included, and marks every answer; `sign_in` stands for the
host's authentication (here, a trusted `X-User` header set by a gateway in
front), and `identify` hands who it admitted to the agent's call context,
so each user's tasks are that user's. gRPC is served on a port of its own,
which no middleware of the host's sees: `identify_grpc` is the host's
authentication for it (the same trusted `x-user`, as gRPC metadata), and a
gRPC call it does not admit is refused (UNAUTHENTICATED). The card is at
/a2a/.well-known/agent-card.json, and names the URLs it was reached by
(pass public_url= to name one). The settings are `serve`'s, from the
same A2A_GRPC_* environment variables (A2A_GRPC_STORE, A2A_GRPC_GRPC_PORT:
50051 by default, 0 picks a free one, ...); gRPC is started and stopped
by the host app's lifespan.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any

from fastapi import FastAPI, Request, Response

from a2a_grpc.demos.demo import DemoAgent
from a2a_grpc.mount import A2AApp, Identity


def identify(scope: MutableMapping[str, Any]) -> Identity | None:
    user = scope.get("state", {}).get("user")
    return Identity(subject=user, scheme="host") if user else None


def identify_grpc(metadata: Mapping[str, str]) -> Identity | None:
    user = metadata.get("x-user")
    return Identity(subject=user, scheme="host") if user else None


a2a = A2AApp(DemoAgent(), identify=identify, grpc=True, grpc_identify=identify_grpc)
app = FastAPI(lifespan=a2a.lifespan)
app.state.seen = []


@app.middleware("http")
async def record(request: Request,
                 call_next: Callable[[Request], Awaitable[Response]]) -> Response:
    app.state.seen.append(f"{request.method} {request.url.path}")
    response = await call_next(request)
    response.headers["X-Host-App"] = "seen"
    return response


@app.middleware("http")
async def sign_in(request: Request,
                  call_next: Callable[[Request], Awaitable[Response]]) -> Response:
    user = request.headers.get("X-User")
    if user:
        request.scope.setdefault("state", {})["user"] = user
    return await call_next(request)


@app.get("/seen")
async def seen() -> list[str]:
    """What the host's middleware saw (the tests read it)."""
    return list(app.state.seen)


app.mount("/a2a", a2a)
