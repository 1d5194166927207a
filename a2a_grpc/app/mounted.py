"""An agent served as an ASGI application (a2a_grpc.mount.A2AApp): the
assembly `serve` runs (assembly.py), behind the ASGI face of the bridge.

Started by the ASGI lifespan: its own when a server runs it directly
(`uvicorn module:app`), the host app's when mounted (`FastAPI(lifespan=
a2a.lifespan)`; Starlette does not pass lifespan events to mounted apps).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import logging
import os
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AsyncExitStack
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from a2a_grpc.adapters import adopt
from a2a_grpc.agent import AgentExecutor
from a2a_grpc.app.assembly import Assembly, assemble
from a2a_grpc.app.loading import NAMES_ARE, bad_name
from a2a_grpc.app.options import drain_words, http_options
from a2a_grpc.app.settings import ServeSettings
from a2a_grpc.app.settings_load import load
from a2a_grpc.auth.host import HostIdentified, HostIdentify, ScopeIdentified, carried_as
from a2a_grpc.bridge import asgi
from a2a_grpc.bridge.card import CardEndpoint
from a2a_grpc.bridge.endpoints import BridgeConfig, a2a_routes
from a2a_grpc.bridge.face import Answer, Incoming
from a2a_grpc.bridge.inspector.api import Inspector
from a2a_grpc.bridge.routes import Router
from a2a_grpc.cards.card import Interface
from a2a_grpc.core.contract import A2AService
from a2a_grpc.execution.hosted import Hosted
from a2a_grpc.generated.a2a_pb2 import AgentCard
from a2a_grpc.grpc_edge.asgi import CarriedGrpc, GrpcApp

log = logging.getLogger("a2a_grpc")
BASES = 16  # cards kept, one per base URL clients reached the app by (no public_url)
NOT_STARTED = ("this A2A app has not been started: mounted in FastAPI or Starlette, pass its "
               "lifespan to the host app (FastAPI(lifespan=a2a.lifespan)), or enter "
               "`async with a2a.lifespan():` around it")


class A2AApp:
    """An ASGI application serving `agent`: JSON-RPC, HTTP+JSON, their SSE,
    the 0.3 and first-draft dialects and the agent card, as `serve` does
    over aiohttp. `grpc=True`: gRPC too, on a port of its own (the settings'),
    which the host app's middleware never sees: give `grpc_identify` for the
    host's authentication to gate it. `grpc="carried"`: gRPC answered by this
    app itself, on the port of the server that runs it, which must speak
    HTTP/2 and send trailers (pyvoy). By default no gRPC: no binding around
    the host app's authentication unless asked for.

    `agent`: one agent, or several by name (each under /NAME, its card at
    /NAME/.well-known/agent-card.json, listed at /.well-known/ai-catalog.json).
    `settings`: as `serve` takes them; by default read as `serve` reads
    them, without flags: the A2A_GRPC_* environment variables over the TOML
    file A2A_GRPC_CONFIG names, over the defaults.
    `public_url`: where clients reach the app, mount path included
    (`https://api.example.com/a2a`); the card names it. Without it, each card
    names the scheme, Host and mount path it was asked by.
    `identify(scope)`: who the host app's authentication admitted (an
    Identity), or None; a call it identifies (HTTP, or gRPC carried through
    the host) is admitted as that caller, without the card's own schemes,
    and its tasks are that subject's.
    `grpc_identify(metadata)`: the same for gRPC calls (their metadata, keys
    lower-cased); None refuses the call as unauthenticated (auth/host.py).
    """

    def __init__(self, agent: AgentExecutor | Mapping[str, AgentExecutor],
                 settings: ServeSettings | None = None, *,
                 public_url: str | None = None, grpc: bool | str = False,
                 identify: asgi.Identify | None = None,
                 grpc_identify: HostIdentify | None = None) -> None:
        # Several agents by name: each under /NAME, by the tenant NAME on gRPC, all
        # listed in the catalog (docs/hosting.md), as `serve --host-agent` hosts them.
        if isinstance(agent, Mapping):
            if bad := sorted(name for name in agent if bad_name(name)):
                raise ValueError(f"A2AApp: agents named {bad}: a name must be {NAMES_ARE}")
            agent = Hosted({name: adopt(each) for name, each in agent.items()})
        self.agent = adopt(agent)  # an a2a-sdk executor or a framework's agent too
        self.settings = settings or from_environment()
        self.public_url = public_url.rstrip("/") if public_url else None
        self.grpc = grpc
        self.identify = identify
        self.grpc_identify = grpc_identify
        if grpc is True and identify is not None and grpc_identify is None:
            log.warning("A2AApp: gRPC is served on a port of its own, which the host app's "
                        "authentication does not see (identify= is HTTP's): pass "
                        "grpc_identify= to gate it, or leave grpc off")
        self.http = http_options(self.settings.network, self.settings.agent.card_format)
        self.served: Assembly | None = None
        self._router: Router | None = None
        self._stack: AsyncExitStack | None = None
        self._cards: list[_Cards] | None = None  # the agent's, or each hosted agent's
        self._carried: GrpcApp | None = None
        # `grpc="carried"`: a port of its own the carrying server also takes gRPC
        # on, for the card to name (serve --grpc-carrier pyvoy: --grpc-port)
        self.grpc_port = 0

    @property
    def config(self) -> BridgeConfig:
        return self.http.config

    async def __call__(self, scope: asgi.Scope, receive: asgi.Receive,
                       send: asgi.Send) -> None:
        kind = scope["type"]
        if kind == "http":
            if self._router is None:
                request = asgi.incoming(scope, receive, 0)
                await asgi.write(request, Answer(503, NOT_STARTED.encode(), {
                    "Content-Type": "text/plain; charset=utf-8"}), receive, send)
                return
            carried = self._carried
            if carried is not None and _is_grpc(scope):
                if self.identify is None:
                    await carried(scope, receive, send)
                    return
                with carried_as(self.identify(scope)):  # as an HTTP call through the host
                    await carried(scope, receive, send)
                return
            cards = self._cards
            await asgi.serve(self._router, scope, receive, send,
                             max_body=self.config.max_body_bytes, identify=self.identify,
                             first=None if not cards or cards[0].bases else self._publish_first)
        elif kind == "lifespan":
            await self._lifespan(receive, send)
        else:  # a WebSocket: A2A has no binding on it
            await send({"type": "websocket.close", "code": 1003})

    def _grpc_gate(self) -> Callable[[A2AService], A2AService] | None:
        """The host's authentication in front of gRPC: `grpc_identify` on every
        gRPC call; else, for gRPC carried through the host, `identify`."""
        if self.grpc_identify is not None:
            return functools.partial(HostIdentified, identify=self.grpc_identify)
        if self.grpc == "carried" and self.identify is not None:
            return ScopeIdentified
        return None

    async def _publish_first(self, request: Incoming) -> None:
        """The first request names the base URL of the cards the agents' own
        calls see (the inspector's, an extended card's), when no public_url does."""
        for cards in self._cards or ():
            if not cards.bases:
                await cards.for_base(request.base_url())

    @contextlib.asynccontextmanager
    async def lifespan(self, _app: Any = None) -> AsyncIterator[None]:
        """Start the agent's server (store, bus, gRPC) and stop it after."""
        await self.start()
        try:
            yield
        finally:
            await self.stop()

    async def start(self) -> None:
        if self._router is not None:
            return
        stack = AsyncExitStack()
        try:
            # Copies of the app (uvicorn --workers) share the gRPC port only as
            # replicas, on one bus (docs/mounting.md).
            served = await assemble(self.agent, self.settings, stack, self.http.tls,
                                    grpc=self.grpc, grpc_shared=bool(self.settings.store.bus),
                                    grpc_gate=self._grpc_gate())
            if isinstance(served.grpc, CarriedGrpc):
                served.grpc.port = self.grpc_port
            v03 = self.config.card_v03_fields
            hosted = {name: _Cards(served, self, CardEndpoint(card, v03), name)
                      for name, card in served.hosted.items()}  # several agents, each /NAME
            every = list(hosted.values()) or [_Cards(served, self, CardEndpoint(served.card,
                                                                                v03))]
            observe = served.observe
            self._router = a2a_routes(
                served.admission, every[0], self.config, served.keys.jwks(), served.metrics,
                served.readiness.probe, observed=True,
                inspector=Inspector(observe.inspector_remote_targets)
                if observe.inspector else None, hosted=hosted or None)
            stack.push_async_callback(self._router.close)
            if self.public_url is not None:
                for cards in every:
                    await cards.for_base(self.public_url)
        except BaseException:
            await stack.aclose()
            raise
        self.served, self._stack, self._cards = served, stack, every
        if isinstance(served.grpc, CarriedGrpc):
            self._carried = served.grpc.app
        what = (f"A2A agents {', '.join(hosted)}, each under /NAME," if hosted
                else f"A2A agent {served.card.name!r}")
        log.info("%s served as an ASGI app%s%s; tasks in %s", what,
                 f" at {self.public_url}" if self.public_url else "",
                 "" if not served.grpc else f"; gRPC on port {served.grpc.port}"
                 if not self._carried else "; gRPC on the same port"
                 + (f" and on port {self.grpc_port}" if self.grpc_port else ""),
                 self.settings.store.shown)

    async def stop(self) -> None:
        """Refuse new calls, end open streams for their clients to resume, give
        calls and runs the settings' grace, then close."""
        served, stack = self.served, self._stack
        if served is None or stack is None:
            return
        refused, resume = drain_words(bool(self.settings.store.bus))
        served.readiness.drain()
        served.admission.drain(refused)
        served.bus.interrupt(resume)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.settings.network.grace):
                await served.admission.idle()
                for _ in iter(lambda: served.handler.live_tasks, 0):  # runs end on their own
                    await asyncio.sleep(0.05)
        self._router, self.served, self._stack, self._cards = None, None, None, None
        self._carried = None
        await stack.aclose()

    async def _lifespan(self, receive: asgi.Receive, send: asgi.Send) -> None:
        await asgi.lifespan(receive, send, self.start, self.stop)


def _is_grpc(scope: asgi.Scope) -> bool:
    for key, value in scope.get("headers") or ():
        if key == b"content-type":
            return bool(value.startswith(b"application/grpc"))
    return False


def from_environment(environ: Mapping[str, str] | None = None) -> ServeSettings:
    environ = os.environ if environ is None else environ
    config = environ.get("A2A_GRPC_CONFIG")
    return load(argparse.Namespace(), Path(config) if config else None, environ)


class _Cards:
    """An agent's card for each base URL the app is reached by (or the one
    public URL); `name`: a hosted agent's, under /NAME."""

    def __init__(self, served: Assembly, app: A2AApp, first: CardEndpoint,
                 name: str = "") -> None:
        self.served = served
        self.app = app
        self.first = first
        self.name = name
        self.bases: OrderedDict[str, CardEndpoint] = OrderedDict()

    @property
    def card(self) -> AgentCard:
        handler = self.served.handler
        return handler.cards.get(self.name, handler.card) if self.name else handler.card

    @property
    def modified(self) -> datetime:
        return self.first.modified

    async def for_base(self, base: str) -> CardEndpoint:
        endpoint = self.bases.get(base)
        if endpoint is not None:
            self.bases.move_to_end(base)
            return endpoint
        config = self.app.config
        endpoint = self.first if not self.bases else CardEndpoint(
            self.served.hosted.get(self.name, self.served.card), config.card_v03_fields)
        at = base + "/" + self.name if self.name else base
        rest = config.rest_prefix.rstrip("/")
        interfaces = [*self.served.grpc_interface(self.app.settings, self.name,
                                                  here=urlsplit(base).netloc),
                      Interface("JSONRPC", at + config.jsonrpc_path),
                      Interface("HTTP+JSON", at + rest)]
        await self.served.publish(interfaces, endpoint, self.name,
                                  base + rest if self.name else None)
        self.bases[base] = endpoint
        if len(self.bases) > BASES:
            self.bases.popitem(last=False)
        return endpoint

    async def get(self, request: Incoming) -> Answer:
        endpoint = await self.for_base(self.app.public_url or request.base_url())
        return await endpoint.get(request)
