"""What `a2a-grpc serve` and `a2a-grpc bridge` run: servers, card, signals.

`serve`: one process serving an agent over gRPC and, through the bridge,
JSON-RPC and REST, with the agent card listing all three. `gateway`: the
bridge alone, in front of any A2A gRPC server. Both stop on SIGINT/SIGTERM:
health turns NOT_SERVING, calls and streams get `grace` seconds to finish,
then the rest is closed and the process exits 0.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import logging
import re
import signal
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web
from google.protobuf import json_format
from prometheus_client import CollectorRegistry, generate_latest

from bridge import CARD, BridgeConfig, create_app
from bridge.app import JWKS_PATH
from generated.a2a_pb2 import AgentCapabilities, AgentCard

from .agent import AgentExecutor
from .auth import AuthenticatedService, Gate
from .auth.config import AuthOptions, configure
from .bus import Backlog, open_bus
from .card_signing import sign as sign_card
from .cards import Interface, SignedPush, advertised_host, card_for, host_port, public_card
from .handler import RequestHandler
from .health import Readiness
from .limits import LimitedService, LimitOptions
from .push.policy import PushPolicy
from .push.sender import PushSender, SenderConfig
from .push.signing import HEADER as SIGNATURE_HEADER
from .push.signing import Signer, load_keys
from .replicas import Leases
from .server import PortInUseError, start_grpc
from .service import A2AService
from .stores import DEFAULT_URL, open_store
from .tls import Reloader, TlsFiles
from .upstream import UpstreamService

log = logging.getLogger("a2a_grpc")


@dataclass(frozen=True, slots=True)
class HttpOptions:
    host: str = "127.0.0.1"
    port: int = 8080
    public_url: str | None = None  # what clients use, e.g. behind a proxy
    config: BridgeConfig = field(default_factory=BridgeConfig)
    tls: TlsFiles | None = None  # TLS on the HTTP port (and, in serve, the gRPC port)


async def start_http(service: A2AService, card: AgentCard, options: HttpOptions,
                     grace: float, jwks: dict[str, Any] | None = None,
                     metrics: Callable[[], str] | None = None,
                     readiness: Readiness | None = None,
                     ) -> tuple[web.AppRunner, int]:
    """Start the bridge; returns its runner and the port it got."""
    app = create_app(service, card, options.config, jwks, metrics,
                     None if readiness is None else readiness.probe)
    ssl_context = None
    if options.tls is not None:
        ssl_context = options.tls.ssl_context()
        reloader = Reloader(options.tls, ssl_context)
        reloader.start()
        app.on_cleanup.append(lambda _: reloader.stop())
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=grace)
    await runner.setup()
    site = web.TCPSite(runner, options.host, options.port, ssl_context=ssl_context)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        raise PortInUseError(
            f"cannot listen on {options.host}:{options.port} ({exc.strerror})") from exc
    port: int = runner.addresses[0][1]
    return runner, port


def http_interfaces(options: HttpOptions, port: int) -> list[Interface]:
    scheme = "https" if options.tls is not None else "http"
    base = (options.public_url
            or f"{scheme}://{host_port(advertised_host(options.host), port)}").rstrip("/")
    return [Interface("JSONRPC", base + options.config.jsonrpc_path),
            Interface("HTTP+JSON", base + options.config.rest_prefix.rstrip("/"))]


def _freeze_startup() -> None:
    """What start-up made (modules, descriptors, the app) lives as long as the
    process: moved out of the collector's sight, so that full collections walk
    only what calls create (they were 1% of a SendMessage run's CPU). Start-up's
    garbage is collected first, not frozen with it."""
    gc.collect()
    gc.freeze()


async def _wait_for_signal() -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()


async def _retention(handler: RequestHandler, max_age_s: float) -> None:
    """Purge final tasks older than `max_age_s`, checking every max_age/10 (<= 60 s)."""
    while True:
        await asyncio.sleep(min(max_age_s / 10, 60.0))
        try:
            gone = await handler.purge(max_age_s)
        except Exception:
            log.exception("purging old tasks failed; will retry")
            continue
        if gone:
            log.info("purged %d final tasks older than %.0f s", gone, max_age_s)


@dataclass(frozen=True, slots=True)
class PushOptions:
    policy: PushPolicy = field(default_factory=PushPolicy)
    keys_dir: Path | None = None  # sign notifications with the keys found (or made) here
    sender: SenderConfig = field(default_factory=SenderConfig)


async def serve(agent: AgentExecutor, grpc_host: str, grpc_port: int, http: HttpOptions,
                grace: float = 5.0, store_url: str = DEFAULT_URL,
                retention_s: float | None = None, push: PushOptions | None = None, *,
                grpc_public: str | None = None, interrupted_only: bool = False,
                auth: AuthOptions | None = None, card_keys: Path | None = None,
                limits: LimitOptions | None = None, backlog: Backlog | None = None,
                bus_url: str | None = None, lease_s: float = 15.0) -> None:
    """Serve `agent` over gRPC and HTTP until SIGINT/SIGTERM. `grpc_public`:
    the gRPC address the card advertises (default: HOST:PORT as bound).
    `auth`: the schemes callers authenticate with (none: everyone is admitted).
    `card_keys`: sign the card (spec §8.4) with the newest key in this folder.
    `limits`: per caller; `backlog`: how far a stream's reader may fall behind;
    `bus_url`: share task events between replicas (bus.open_bus), whose running
    tasks are then leased for `lease_s` (replicas.py)."""
    push = push or PushOptions()
    card = card_for(agent)
    gate = Gate(card, configure(card, auth or AuthOptions()))  # before the store opens
    store = await open_store(store_url)
    try:
        bus = await open_bus(bus_url, backlog)
    except BaseException:
        await store.close()
        raise
    handler = RequestHandler(agent, card, store=store, bus=bus,
                             push_policy=push.policy, interrupted_only=interrupted_only,
                             replicated=bool(bus_url))
    registry = CollectorRegistry()
    service: A2AService = handler
    if limits is not None and limits.any:
        service = LimitedService(handler, limits, handler.running, registry)
    if not gate.open:
        service = AuthenticatedService(service, gate)
    async with AsyncExitStack() as cleanup:
        # Unwound in reverse on the way out, also when starting fails half-way.
        cleanup.push_async_callback(store.close)
        cleanup.push_async_callback(bus.close)
        cleanup.push_async_callback(handler.close)
        leases = Leases(handler, store, lease_s) if bus_url else None
        recovered = await handler.recover() if leases is None else await leases.recover()
        if leases is not None:
            renewing = asyncio.create_task(leases.run(), name="a2a-leases")
            cleanup.callback(renewing.cancel)
            bus.answer(handler.on_control)  # CancelTask from other replicas
        elif recovered:
            log.warning("%d task(s) were still running when the server last stopped: %s",
                        recovered, "resumed" if agent.resumable else "marked FAILED")
        keys = load_keys(push.keys_dir) if push.keys_dir is not None else []
        # The issuer is filled in below, once the public URL is known.
        signer = Signer(keys, issuer="") if keys else None
        sender = None
        if card.capabilities.push_notifications:
            config = push.sender if leases is None else dataclasses.replace(
                push.sender, claim=push.sender.timeout + 5)  # replicas share the outbox
            sender = PushSender(store, push.policy, signer, config)
            await sender.start()
            cleanup.push_async_callback(sender.stop)
            handler.attach_sender(sender.wake)
        grpc_server = await start_grpc(handler, grpc_host, grpc_port, service, http.tls)
        cleanup.push_async_callback(grpc_server.stop, grace)
        readiness = Readiness(store, bus if bus_url else None)
        watching = asyncio.create_task(readiness.watch(grpc_server.serving), name="a2a-ready")
        cleanup.callback(watching.cancel)
        card_signers = load_keys(card_keys, prefix="card") if card_keys is not None else []
        published = {k.kid: k.public_jwk for k in [*keys, *card_signers]}  # one JWKS for both
        push_metrics = sender.metrics if sender else (lambda: "")
        runner, http_port = await start_http(
            service, card, http, grace, {"keys": list(published.values())} if published else None,
            lambda: push_metrics() + generate_latest(registry).decode(), readiness)
        cleanup.push_async_callback(runner.cleanup)
        if retention_s:
            purger = asyncio.create_task(_retention(handler, retention_s))
            cleanup.callback(purger.cancel)
        # The card names the real ports, known only now that both are bound.
        interfaces = [
            Interface("GRPC", grpc_public or host_port(advertised_host(grpc_host),
                                                       grpc_server.port)),
            *http_interfaces(http, http_port)]
        base = interfaces[2].url
        signed = None
        if signer is not None:
            signer.issuer = base
            signed = SignedPush(base + JWKS_PATH, SIGNATURE_HEADER)
        handler.card = public_card(card, interfaces, signed)
        if card_signers:
            handler.card = sign_card(handler.card, card_signers[0], jku=base + JWKS_PATH)
        runner.app[CARD].update(handler.card)
        log.info("listening: gRPC on %s, HTTP on %s", host_port(grpc_host, grpc_server.port),
                 host_port(http.host, http_port))
        log.info("A2A agent %r: the card (/.well-known/agent-card.json) advertises %s; "
                 "tasks in %s; Ctrl-C stops it", card.name,
                 ", ".join(f"{i.binding} {i.url}" for i in interfaces), _redacted(store_url))
        if grpc_public is None and grpc_host.strip() in ("0.0.0.0", "::", ""):
            log.warning("listening on all addresses: the card names this machine as %s; "
                        "pass --public-url and --grpc-public-address with the names clients "
                        "use", advertised_host(grpc_host))
        _freeze_startup()
        await _wait_for_signal()
        log.info("shutting down: draining calls for up to %.0f s", grace)
    log.info("stopped")


def _redacted(url: str) -> str:
    """A store URL fit for a log line (no password)."""
    return re.sub(r"//([^:/@]+):[^@]*@", r"//\1:***@", url)


def gateway_card(upstream: str, card_file: Path | None) -> AgentCard:
    if card_file is not None:
        try:
            return json_format.Parse(card_file.read_text(), AgentCard(),
                                     ignore_unknown_fields=True)
        except (OSError, json_format.ParseError) as exc:
            raise ValueError(f"cannot read the agent card {card_file}: {exc}") from exc
    return AgentCard(
        name=f"A2A gateway to {upstream}",
        description=f"JSON-RPC and REST in front of the A2A gRPC server at {upstream}.",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"], default_output_modes=["text/plain"],
    )


async def gateway(upstream: str, http: HttpOptions, card_file: Path | None = None,
                  grace: float = 5.0, forward: tuple[str, ...] = ()) -> None:
    """Serve JSON-RPC, REST and a card in front of the gRPC server `upstream`,
    passing on the credentials in `forward` headers (beside the usual ones)."""
    base = gateway_card(upstream, card_file)
    service = UpstreamService(upstream, forward=forward)
    runner = None
    try:
        runner, port = await start_http(service, base, http, grace)
        # The upstream may number events its own way: no resumable-streams promise.
        runner.app[CARD].update(public_card(base, http_interfaces(http, port), resumable=False))
        log.info("listening: HTTP on %s", host_port(http.host, port))
        log.info("A2A gateway: JSON-RPC and REST on http://%s -> gRPC %s; Ctrl-C stops it",
                 host_port(http.host, port), upstream)
        _freeze_startup()
        await _wait_for_signal()
        log.info("shutting down: draining calls for up to %.0f s", grace)
    finally:
        if runner is not None:
            await runner.cleanup()
        await service.close()
        log.info("stopped")
