"""The aiohttp face (`serve`'s): the route table of endpoints.py under one
aiohttp route, each request made an `Incoming` and each answer written back.

A route added to the app afterwards works on a path of its own (`/hooks/in`),
which aiohttp tries before the root; a variable path on the root (`/{name}`)
would be shadowed by ours."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aiohttp import web

from a2a_grpc.bridge import card as card_module
from a2a_grpc.bridge.calls import quiet_bad_requests
from a2a_grpc.bridge.endpoints import JWKS_PATH, BridgeConfig, a2a_routes, operations_routes
from a2a_grpc.bridge.face import (
    Answer,
    BodyTooLarge,
    Handler,
    Incoming,
    Refused,
    Response,
    Streamed,
    text,
)
from a2a_grpc.bridge.inspector.api import Inspector
from a2a_grpc.bridge.routes import Router, finished
from a2a_grpc.generated.a2a_pb2 import AgentCard
from a2a_grpc.observe.metrics import Metrics

__all__ = ["CARD", "JWKS_PATH", "BridgeConfig", "add_operations_routes", "create_app"]

CARD = web.AppKey("card", card_module.CardEndpoint)
ROUTER = web.AppKey("router", Router)
# Is the server draining? Then every answer closes its connection (app/http.py).
CLOSING: web.AppKey[Callable[[], bool]] = web.AppKey("closing")


def create_app(
    service: Any, card: AgentCard, config: BridgeConfig | None = None,
    jwks: Mapping[str, Any] | None = None,
    metrics: Metrics | None = None,
    readiness: Callable[[], Awaitable[tuple[bool, dict[str, str]]]] | None = None,
    observed: bool = False,
    inspector: Inspector | None = None,
    hosted: Mapping[str, card_module.CardEndpoint] | None = None,
) -> web.Application:
    """`card` is served as is (see a2a_grpc.cards.card.public_card);
    `app[CARD].update(card)` replaces it later. `metrics`: served at
    /metrics, each call counted and traced; `inspector`: the page at
    /inspector (bridge/inspector/)."""
    config = config or BridgeConfig()
    quiet_bad_requests()
    app = web.Application(client_max_size=config.max_body_bytes)
    app[CARD] = card_module.CardEndpoint(card, v03_fields=config.card_v03_fields)
    app[ROUTER] = a2a_routes(service, app[CARD], config, jwks, metrics, readiness, observed,
                             inspector, hosted)
    serve_router(app, app[ROUTER])
    return app


def add_operations_routes(
    app: web.Application, metrics: Metrics | None,
    readiness: Callable[[], Awaitable[tuple[bool, dict[str, str]]]] | None,
) -> None:
    """An app serving /metrics, /healthz and /readyz alone (`serve --metrics-port`)."""
    router = Router()
    operations_routes(router, metrics, readiness)
    serve_router(app, router)


def serve_router(app: web.Application, router: Router) -> None:
    """The router behind aiohttp's: its paths without a variable as aiohttp's own
    plain resources, each verb's handler answering at once (found by a dict, as
    `/` and `/message:send` are on every call), the rest behind one catch-all (a
    regular expression, and ours): docs/benchmarks.md, "Measured reasons"."""
    async def elsewhere(incoming: Incoming) -> set[str]:  # the app's routes ours lack
        assert isinstance(incoming, _Request)
        allowed: set[str] = set()
        for resource in app.router.resources():
            if resource not in mine:
                allowed |= (await resource.resolve(incoming.request))[1]
        return allowed

    closing: Callable[[], bool] | None = None  # what the server says once it starts

    async def started(_: web.Application) -> None:
        nonlocal closing
        closing = app.get(CLOSING)

    app.on_startup.append(started)

    async def handle(request: web.Request) -> web.StreamResponse:
        answer = await router.answer(_Request(request), elsewhere)
        return await write(request, answer, closing)

    def at_once(handler: Handler) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        # Router.answer's work without its lookup, in one coroutine (a coroutine
        # frame less than through write: docs/benchmarks.md, "Measured reasons").
        async def answer(request: web.Request) -> web.StreamResponse:
            incoming = _Request(request)
            try:
                response = finished(await handler(incoming), incoming)
            except Refused as exc:
                response = text(exc.status, exc.text)
            if isinstance(response, Answer):
                return whole(response, closing)
            return await streamed(request, response, closing)
        return answer

    mine = []
    for path, verbs in router.static_routes().items():
        resource = app.router.add_resource(path)
        for verb, handler in verbs.items():
            resource.add_route(verb, at_once(handler))
        resource.add_route("*", handle)  # another verb: 405 naming these, as ours says it
        mine.append(resource)
    mine.append(app.router.add_resource("/{tail:.*}"))
    mine[-1].add_route("*", handle)

    async def close(_: web.Application) -> None:
        await router.close()

    app.on_cleanup.append(close)


class _Request(Incoming):
    """An aiohttp request as the bindings see it: its body, client address and
    certificate read from aiohttp when asked (most calls ask for the body only)."""

    __slots__ = ("request",)

    def __init__(self, request: web.Request) -> None:
        super().__init__(request.method, request.path, request.headers, request.read,
                         query_string=request.query_string, secure=request.secure,
                         scheme=request.scheme)
        self.request = request

    async def read(self) -> bytes:
        try:
            return await self.request.read()
        except web.HTTPRequestEntityTooLarge:
            raise BodyTooLarge from None

    @property
    def remote(self) -> str | None:
        return self.request.remote

    def peer_subject(self) -> str | None:
        return _peer_subject(self.request)

    def remote_reader(self) -> Callable[[], str]:
        request = self.request  # not self: see Incoming.remote_reader
        return lambda: request.remote or ""

    def peer_reader(self) -> Callable[[], str | None] | None:
        request = self.request
        return lambda: _peer_subject(request)


async def write(request: web.Request, answer: Response,
                closing: Callable[[], bool] | None = None) -> web.StreamResponse:
    """`closing()`: the server drains, so the connection closes after this answer
    (a client's pool never keeps one that the server will close under it)."""
    if isinstance(answer, Answer):
        return whole(answer, closing)
    return await streamed(request, answer, closing)


def whole(answer: Answer, closing: Callable[[], bool] | None) -> web.Response:
    close = closing is not None and closing()
    headers = {**answer.headers, "Connection": "close"} if close else answer.headers
    response = web.Response(status=answer.status, body=answer.body or None, headers=headers)
    if answer.close or close:
        response.force_close()  # the header alone leaves aiohttp keeping the connection
    return response


async def streamed(request: web.Request, answer: Streamed,
                   closing: Callable[[], bool] | None) -> web.StreamResponse:
    close = closing is not None and closing()
    headers = {**answer.headers, "Connection": "close"} if close else answer.headers
    response = web.StreamResponse(status=answer.status, headers=headers)
    if close:
        response.force_close()
    sink = _Sink(response)
    try:
        await response.prepare(request)
    except (ConnectionResetError, RuntimeError):
        sink.gone = True  # produce still runs: it closes what it streams
    await answer.produce(sink)
    with contextlib.suppress(ConnectionResetError, RuntimeError):
        await response.write_eof()
    return response


class _Sink:
    __slots__ = ("gone", "response")

    def __init__(self, response: web.StreamResponse) -> None:
        self.response = response
        self.gone = False

    async def write(self, data: bytes) -> None:
        if self.gone:
            raise ConnectionResetError("the client went away")
        await self.response.write(data)

    def close_after(self) -> None:
        self.response.force_close()


def _peer_subject(request: web.Request) -> str | None:
    """The verified client certificate's common name (mutual TLS), if any."""
    cert = request.transport.get_extra_info("peercert") if request.transport else None
    for rdn in (cert or {}).get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                return str(value)
    return None
