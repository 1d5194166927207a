"""The HTTP face's route table, the same under either face (face.py): the
agent card, JSON-RPC, 1.0's REST and 0.3's under /v1, the signing keys,
the operations routes (/metrics, /healthz, /readyz) and the inspector."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from prometheus_client import CONTENT_TYPE_LATEST

from a2a_grpc.bridge import card as card_module
from a2a_grpc.bridge.calls import TENANT
from a2a_grpc.bridge.face import Answer, Handler, Incoming, Response, json_answer
from a2a_grpc.bridge.inspector.api import Inspector
from a2a_grpc.bridge.jsonrpc import JsonRpcEndpoint
from a2a_grpc.bridge.legacy.rest03 import RestV03Endpoints
from a2a_grpc.bridge.rest import RestEndpoints, error_response
from a2a_grpc.bridge.routes import Router
from a2a_grpc.cards.card03 import card_out
from a2a_grpc.cards.catalog import CATALOG_PATH, catalog
from a2a_grpc.cards.catalog import MEDIA_TYPE as CATALOG_TYPE
from a2a_grpc.core.contract import A2AService
from a2a_grpc.core.errors import MethodNotFoundError
from a2a_grpc.generated.a2a_pb2 import AgentCard
from a2a_grpc.legacy.service03 import V03Service
from a2a_grpc.observe.metrics import Metrics
from a2a_grpc.observe.observed import ObservedService

JWKS_PATH = "/.well-known/jwks.json"
Readiness = Callable[[], Awaitable[tuple[bool, dict[str, str]]]]


class CardSource(Protocol):
    """What serves the card: card.CardEndpoint, or one per base URL (app/mounted.py)."""

    @property
    def card(self) -> AgentCard: ...

    async def get(self, request: Incoming) -> Answer: ...


class HostedCard(CardSource, Protocol):
    """A hosted agent's card, with the time it has been served since."""

    @property
    def modified(self) -> datetime: ...


@dataclass(frozen=True, slots=True)
class BridgeConfig:
    jsonrpc_path: str = "/"  # the JSON-RPC endpoint (POST)
    rest_prefix: str = ""  # REST routes sit under this ("" = the root)
    max_body_bytes: int = 8 * 1024 * 1024
    max_json_depth: int = 32
    keepalive: float = 2.0  # seconds between SSE keep-alive comments on a quiet stream
    card_v03_fields: bool = True  # the card carries 0.3's top-level fields for 0.3 clients


def a2a_routes(
    service: A2AService, card: CardSource, config: BridgeConfig,
    jwks: Mapping[str, Any] | None = None, metrics: Metrics | None = None,
    readiness: Readiness | None = None, observed: bool = False,
    inspector: Inspector | None = None, hosted: Mapping[str, HostedCard] | None = None,
) -> Router:
    """`metrics`: served at /metrics, and each call counted there; with it (or
    `observed`) each call is traced too (a2a_grpc.observe). `hosted`: the
    cards of the agents a server hosting several serves, by name (each under
    /{name}, listed at /.well-known/ai-catalog.json); `card` is then the
    first's, for the inspector."""
    router = Router()
    if hosted:
        for name, each in hosted.items():
            router.add("GET", f"/{name}{card_module.PATH}", each.get)
            router.add("GET", f"/{name}{card_module.OLD_PATH}", each.get)
        router.add("GET", CATALOG_PATH, _catalog(hosted))
        router.add("GET", card_module.PATH, _see_catalog)
        router.add("GET", card_module.OLD_PATH, _see_catalog)
    else:
        router.add("GET", card_module.PATH, card.get)
        router.add("GET", card_module.OLD_PATH, card.get)
    if jwks is not None:  # the keys that sign push notifications
        body = json.dumps(jwks).encode()

        async def serve_jwks(_: Incoming) -> Answer:
            return json_answer(body, headers={"Cache-Control": "public, max-age=300"})

        router.add("GET", JWKS_PATH, serve_jwks)
    operations_routes(router, metrics, readiness)

    def seen_by(binding: str) -> A2AService:
        if metrics is None and not observed:
            return service
        return ObservedService(service, binding, metrics)

    limits: dict[str, Any] = {"max_body": config.max_body_bytes,
                              "max_depth": config.max_json_depth, "keepalive": config.keepalive}
    jsonrpc = JsonRpcEndpoint(seen_by("jsonrpc"), **limits).handle
    router.add("POST", config.jsonrpc_path, jsonrpc)
    prefix = config.rest_prefix.rstrip("/")
    rest_service = seen_by("rest")
    # 0.3's `/v1/...` first: 1.0's `/{tenant}/...` routes would take them.
    v03 = RestV03Endpoints(V03Service(rest_service, lambda: card.card, card_out), **limits)
    for verb, path, handler in v03.routes(prefix):
        router.add(verb, path, handler)
    for name, each in (hosted or {}).items():  # JSON-RPC and 0.3's REST under /{name}
        router.add("POST", f"/{name}{config.jsonrpc_path}", for_tenant(name, jsonrpc))
        v03 = RestV03Endpoints(V03Service(rest_service, _card_of(each), card_out), **limits)
        for verb, path, handler in v03.routes(f"/{name}{prefix}"):
            router.add(verb, path, for_tenant(name, handler))
    for verb, path, handler in RestEndpoints(rest_service, **limits).routes(prefix):
        router.add(verb, path, handler)
    if hosted:  # a name no agent has: answered as a call to an unknown agent
        router.add("POST", f"/{{tenant}}{config.jsonrpc_path}", _as_named(jsonrpc))
        unknown = _no_such_agent(hosted)
        v03 = RestV03Endpoints(V03Service(rest_service, lambda: card.card, card_out), **limits)
        for verb, path, handler in v03.routes(f"/{{tenant}}{prefix}"):
            router.add(verb, path, unknown if path.endswith("/v1/card") else _as_named(handler))
        router.add("GET", f"/{{tenant}}{card_module.PATH}", unknown)
        router.add("GET", f"/{{tenant}}{card_module.OLD_PATH}", unknown)
    if inspector is not None:
        inspector.routes(router, lambda: card.card)
    return router


def for_tenant(name: str, handler: Handler) -> Handler:
    """`handler`, for calls to the hosted agent `name` (calls.call_context)."""
    async def named(request: Incoming) -> Response:
        request.state[TENANT] = name
        return await handler(request)

    return named


def _as_named(handler: Handler) -> Handler:
    """`handler`, for calls to the agent the path's first segment names: one
    not hosted is refused by the tenancy layer as every unknown name is
    (InvalidParams listing the agents), in the binding's own words."""
    async def named(request: Incoming) -> Response:
        request.state[TENANT] = request.match["tenant"]
        return await handler(request)

    return named


def _no_such_agent(hosted: Mapping[str, HostedCard]) -> Handler:
    listed = ", ".join(sorted(hosted))

    async def not_hosted(request: Incoming) -> Response:
        return error_response(MethodNotFoundError(
            f"no agent named {request.match['tenant']!r} on this server; its agents are "
            f"{listed}: each one's card is at /NAME{card_module.PATH}, and {CATALOG_PATH} "
            "lists them"), http_status=404)

    return not_hosted


def _card_of(each: HostedCard) -> Callable[[], AgentCard]:
    return lambda: each.card


async def _see_catalog(request: Incoming) -> Response:
    return error_response(MethodNotFoundError(
        "this server hosts several agents: each one's card is at /NAME"
        f"{card_module.PATH}, and {CATALOG_PATH} lists them"), http_status=404)


def _catalog(hosted: Mapping[str, HostedCard]) -> Handler:
    async def serve_catalog(_: Incoming) -> Response:
        body = catalog((name, each.card, each.modified) for name, each in hosted.items())
        return json_answer(body, content_type=CATALOG_TYPE,
                           headers={"Cache-Control": "public, max-age=300"})

    return serve_catalog


def operations_routes(router: Router, metrics: Metrics | None,
                      readiness: Readiness | None) -> None:
    """/metrics (Prometheus text format), /healthz and /readyz (a2a_grpc.app.health)."""
    if metrics is not None:
        async def serve_metrics(_: Incoming) -> Answer:
            return Answer(200, await metrics.render(), {"Content-Type": CONTENT_TYPE_LATEST})

        router.add("GET", "/metrics", serve_metrics)
    if readiness is not None:
        async def alive(_: Incoming) -> Answer:
            return json_answer(b'{"status": "alive"}')

        async def ready(_: Incoming) -> Answer:
            ok, checked = await readiness()
            return json_answer(json.dumps({"ready": ok, **checked}).encode(),
                               200 if ok else 503)

        router.add("GET", "/healthz", alive)
        router.add("GET", "/readyz", ready)
