"""The aiohttp application: agent card, JSON-RPC and REST (1.0's, and 0.3's
under /v1) over one A2AService."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST

from a2a_grpc.bridge import card as card_module
from a2a_grpc.bridge.calls import name_activated, quiet_bad_requests
from a2a_grpc.bridge.inspector.api import Inspector
from a2a_grpc.bridge.jsonrpc import JsonRpcEndpoint
from a2a_grpc.bridge.legacy.rest03 import RestV03Endpoints
from a2a_grpc.bridge.rest import RestEndpoints, answer_unmatched
from a2a_grpc.cards.card03 import card_out
from a2a_grpc.core.contract import A2AService
from a2a_grpc.generated.a2a_pb2 import AgentCard
from a2a_grpc.legacy.service03 import V03Service
from a2a_grpc.observe.metrics import Metrics
from a2a_grpc.observe.observed import ObservedService

CARD = web.AppKey("card", card_module.CardEndpoint)


@dataclass(frozen=True, slots=True)
class BridgeConfig:
    jsonrpc_path: str = "/"  # the JSON-RPC endpoint (POST)
    rest_prefix: str = ""  # REST routes sit under this ("" = the root)
    max_body_bytes: int = 8 * 1024 * 1024
    max_json_depth: int = 32
    keepalive: float = 2.0  # seconds between SSE keep-alive comments on a quiet stream
    card_v03_fields: bool = True  # the card carries 0.3's top-level fields for 0.3 clients


JWKS_PATH = "/.well-known/jwks.json"


def create_app(
    service: A2AService, card: AgentCard, config: BridgeConfig | None = None,
    jwks: Mapping[str, Any] | None = None,
    metrics: Metrics | None = None,
    readiness: Callable[[], Awaitable[tuple[bool, dict[str, str]]]] | None = None,
    observed: bool = False,
    inspector: Inspector | None = None,
) -> web.Application:
    """`card` is served as is (see a2a_grpc.cards.card.public_card);
    `app[CARD].update(card)` replaces it later. The app's last route answers
    unknown paths and verbs (rest.answer_unmatched): a route added to the app
    afterwards works on a path of its own (`/hooks/in`), not as a variable
    path on the root (`/{name}`), which that last route would shadow.
    `metrics`: served at /metrics, and each call counted there; with it (or
    `observed`) each call is traced too (a2a_grpc.observe). `inspector`: the
    page at /inspector (bridge/inspector/)."""
    config = config or BridgeConfig()
    quiet_bad_requests()
    app = web.Application(client_max_size=config.max_body_bytes)
    app.on_response_prepare.append(name_activated)  # A2A-Extensions on every answer
    app[CARD] = card_module.CardEndpoint(card, v03_fields=config.card_v03_fields)
    app.router.add_get(card_module.PATH, app[CARD].get)
    app.router.add_get(card_module.OLD_PATH, app[CARD].get)
    if jwks is not None:  # the keys that sign push notifications
        body = json.dumps(jwks).encode()

        async def serve_jwks(_: web.Request) -> web.Response:
            return web.Response(body=body, content_type="application/json",
                                headers={"Cache-Control": "public, max-age=300"})

        app.router.add_get(JWKS_PATH, serve_jwks)
    add_operations_routes(app, metrics, readiness)

    def seen_by(binding: str) -> A2AService:
        if metrics is None and not observed:
            return service
        return ObservedService(service, binding, metrics)

    jsonrpc = JsonRpcEndpoint(seen_by("jsonrpc"), max_body=config.max_body_bytes,
                              max_depth=config.max_json_depth, keepalive=config.keepalive)
    app.router.add_post(config.jsonrpc_path, jsonrpc.handle)
    # 0.3's `/v1/...` first: 1.0's `/{tenant}/...` routes would take them.
    rest_service = seen_by("rest")
    v03 = RestV03Endpoints(V03Service(rest_service, lambda: app[CARD].card, card_out),
                           max_body=config.max_body_bytes, max_depth=config.max_json_depth,
                           keepalive=config.keepalive)
    app.router.add_routes(v03.routes(config.rest_prefix.rstrip("/")))
    rest = RestEndpoints(rest_service, max_body=config.max_body_bytes,
                         max_depth=config.max_json_depth, keepalive=config.keepalive)
    app.router.add_routes(rest.routes(config.rest_prefix.rstrip("/")))
    if inspector is not None:
        inspector.routes(app, lambda: app[CARD].card)
    answer_unmatched(app)  # last: unknown paths and verbs
    return app


def add_operations_routes(
    app: web.Application, metrics: Metrics | None,
    readiness: Callable[[], Awaitable[tuple[bool, dict[str, str]]]] | None,
) -> None:
    """/metrics (Prometheus text format), /healthz and /readyz (a2a_grpc.app.health)."""
    if metrics is not None:
        async def serve_metrics(_: web.Request) -> web.Response:
            return web.Response(body=await metrics.render(),
                                headers={"Content-Type": CONTENT_TYPE_LATEST})

        app.router.add_get("/metrics", serve_metrics)
    if readiness is not None:
        async def alive(_: web.Request) -> web.Response:
            return web.json_response({"status": "alive"})

        async def ready(_: web.Request) -> web.Response:
            ok, checked = await readiness()
            return web.json_response({"ready": ok, **checked}, status=200 if ok else 503)

        app.router.add_get("/healthz", alive)
        app.router.add_get("/readyz", ready)
