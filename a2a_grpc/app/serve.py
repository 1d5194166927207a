"""What `a2a-grpc serve` runs: one process serving an agent over gRPC and,
through the bridge, JSON-RPC and REST, with the agent card listing all
three (`a2a-grpc bridge`: gateway.py). It stops on SIGINT/SIGTERM: health
turns NOT_SERVING, calls and streams get `grace` seconds to finish, then
the rest is closed and the process exits 0.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack

from opentelemetry import trace

from a2a_grpc.agent import AgentExecutor
from a2a_grpc.app import keys as signing_keys
from a2a_grpc.app.admission import Admission
from a2a_grpc.app.chain import chain
from a2a_grpc.app.gateway import gateway
from a2a_grpc.app.hangup import on_hangup
from a2a_grpc.app.health import Readiness
from a2a_grpc.app.http import (
    http_interfaces,
    linger,
    start_http,
    start_operations,
    tune_collector,
    wait_for_signal,
)
from a2a_grpc.app.leases import Leases
from a2a_grpc.app.options import (
    admission_options,
    auth_options,
    drain_notice,
    http_options,
    limit_options,
    observe_options,
    preview_options,
    push_options,
)
from a2a_grpc.app.settings import ServeSettings
from a2a_grpc.auth import Gate
from a2a_grpc.auth.config import configure, reloader
from a2a_grpc.bridge import CARD
from a2a_grpc.bridge.http_app import JWKS_PATH
from a2a_grpc.bridge.inspector.api import Inspector
from a2a_grpc.bus import Backlog, EventBus, open_bus
from a2a_grpc.cards.card import (
    Interface,
    SignedPush,
    advertised_host,
    card_for,
    host_port,
    public_card,
)
from a2a_grpc.core import media
from a2a_grpc.core.contract import A2AService
from a2a_grpc.generated.a2a_pb2 import AgentCard
from a2a_grpc.grpc_edge.server import GrpcServer, start_grpc
from a2a_grpc.handler.request_handler import RequestHandler
from a2a_grpc.observe import tracing
from a2a_grpc.observe.metrics import Metrics
from a2a_grpc.push.digest import HEADER as SIGNATURE_HEADER
from a2a_grpc.push.sender import PushSender
from a2a_grpc.stores import open_store

__all__ = ["gateway", "serve"]

log = logging.getLogger("a2a_grpc")


def _warn_unknown_modes(card: AgentCard) -> None:
    """Say once, at start, which of the card's modes accept nothing: a user
    porting a card sees why its parts are refused before a client does."""
    unknown = media.unknown_modes(card)
    if unknown:
        log.warning("the agent card's modes %s are neither media types (type/subtype) nor "
                    "words this server reads (%s): parts are never accepted by them",
                    ", ".join(repr(m) for m in unknown), ", ".join(sorted(media.WORDS)))


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


async def serve(agent: AgentExecutor, settings: ServeSettings) -> None:
    """Serve `agent` over gRPC and HTTP, as `settings` say, until SIGINT/SIGTERM.
    Spans are exported as the OTEL_* variables say (observe.tracing), or made
    with the tracer provider the embedding program set in OpenTelemetry's API."""
    net, stored = settings.network, settings.store
    http = http_options(net, settings.agent.card_format)
    push = push_options(settings.push)
    limits, observe = limit_options(settings.limits), observe_options(settings.observability)
    preview = preview_options(settings.preview)
    admitting, notice = admission_options(settings.limits), drain_notice(net, bool(stored.bus))
    if stored.stream_backlog < 1:
        raise ValueError("--stream-backlog must be >= 1")
    backlog = Backlog(events=stored.stream_backlog)
    grpc_host, grpc_port, grace = net.host, net.grpc_port, net.grace
    store_url, bus_url, lease_s = stored.url, stored.bus, stored.lease
    grpc_public, card_keys = net.grpc_public_address, settings.security.card_keys
    interrupted_only = settings.agent.follow_ups == "interrupted"
    auth = auth_options(settings.security, net)
    card = card_for(agent)
    _warn_unknown_modes(card)
    if store_url == "memory" and getattr(agent, "keeps_conversations", False):
        log.warning("--store memory: the agent's conversations (%s) are kept in memory and "
                    "lost when the server restarts; the SQLite default or PostgreSQL keeps "
                    "them", type(agent).__name__)
    verifiers = configure(card, auth)  # before the store opens: a bad file stops it here
    gate = Gate(card, verifiers)
    keys = signing_keys.load(push.keys_dir, card_keys)
    store = await open_store(store_url)
    try:
        bus = await open_bus(bus_url, backlog)
    except BaseException:
        await store.close()
        raise
    handler = RequestHandler(agent, card, store=store, bus=bus,
                             push_policy=push.policy, interrupted_only=interrupted_only,
                             replicated=bool(bus_url), push_secrets=push.secrets,
                             preview=preview)
    metrics = Metrics()
    admission = chain(handler, gate, limits, admitting, metrics.registry)
    service: A2AService = admission
    async with AsyncExitStack() as cleanup:
        # Unwound in reverse on the way out, also when starting fails half-way.
        cleanup.callback(start_tracing())
        cleanup.callback(on_hangup(reloader(auth, verifiers)))
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
        signer = keys.signer()  # its issuer is filled in below, once the public URL is known
        sender = None
        if card.capabilities.push_notifications:
            config = push.sender if leases is None else dataclasses.replace(
                push.sender, claim=push.sender.timeout + 5)  # replicas share the outbox
            sender = PushSender(store, push.policy, signer, config, metrics, push.secrets)
            await sender.start()
            cleanup.push_async_callback(sender.stop)
            handler.attach_sender(sender.wake)
        handler.observe(metrics)
        grpc_server = await start_grpc(handler, grpc_host, grpc_port, service, http.tls, metrics)
        cleanup.push_async_callback(grpc_server.stop, grace)
        readiness = Readiness(store, bus if bus_url else None)
        watching = asyncio.create_task(readiness.watch(grpc_server.serving), name="a2a-ready")
        cleanup.callback(watching.cancel)
        runner, http_port = await start_http(
            service, card, http, grace, keys.jwks(),
            metrics, readiness,
            Inspector(observe.inspector_remote_targets) if observe.inspector else None)
        cleanup.push_async_callback(runner.cleanup)
        also = ""
        if observe.metrics_port is not None:
            operations = await start_operations(http.host, observe.metrics_port, metrics,
                                                readiness)
            cleanup.push_async_callback(operations.cleanup)
            also = f", metrics on {host_port(http.host, operations.addresses[0][1])}"
        if stored.retention:
            purger = asyncio.create_task(_retention(handler, stored.retention))
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
        handler.card = keys.sign_card(public_card(
            card, interfaces, signed, versions=handler.versions), base + JWKS_PATH)
        runner.app[CARD].update(handler.card)
        runner.app[CARD].since(await store.card_published("public", runner.app[CARD].digest,
                                                          time.time_ns()))
        log.info("listening: gRPC on %s, HTTP on %s%s", host_port(grpc_host, grpc_server.port),
                 host_port(http.host, http_port), also)
        log.info("A2A agent %r: the card (/.well-known/agent-card.json) advertises %s; "
                 "tasks in %s; Ctrl-C stops it", card.name,
                 ", ".join(f"{i.binding} {i.url}" for i in interfaces), _redacted(store_url))
        if observe.inspector:
            log.info("the inspector: open %s/inspector in a browser", base)
        if grpc_public is None and grpc_host.strip() in ("0.0.0.0", "::", ""):
            log.warning("listening on all addresses: the card names this machine as %s; "
                        "pass --public-url and --grpc-public-address with the names clients "
                        "use", advertised_host(grpc_host))
        tune_collector()
        await wait_for_signal()
        await drain(admission, readiness, grpc_server, bus, handler, notice, grace,
                    lambda deadline: linger(runner, deadline))
    log.info("stopped")


async def drain(admission: Admission, readiness: Readiness, grpc_server: GrpcServer,
                bus: EventBus, handler: RequestHandler, notice: float, grace: float,
                connections: Callable[[float], Awaitable[int]] | None = None) -> None:
    """SIGTERM: not ready at once, calls still taken for `notice` s (a load
    balancer stops routing here meanwhile); then new calls refused, open
    streams ended for their clients to resume elsewhere, and up to `grace` s
    for the calls in progress and the running agents to finish, and for
    clients to let go of their HTTP connections (`connections(deadline)`:
    answered, each closing its connection, until none is left open). What is
    still running after that is left (a survivor takes it over, or the next
    start)."""
    log.info("shutting down: /readyz answers 503; calls are taken for %g s more, then "
             "refused; then up to %g s for calls and runs to finish", notice, grace)
    readiness.drain()
    await grpc_server.serving(False)
    await asyncio.sleep(notice)
    admission.drain("this server is shutting down: retry, another replica will answer")
    ended = bus.interrupt("this server is shutting down: resume the stream (another replica "
                          "will answer)")
    deadline = asyncio.get_running_loop().time() + grace
    try:
        async with asyncio.timeout_at(deadline):
            await admission.idle()
            for _ in iter(lambda: handler.live_tasks, 0):  # runs end on their own: poll
                await asyncio.sleep(0.05)
    except TimeoutError:
        pass
    calls_done, left = not admission.inflight, handler.live_tasks
    still_open = 0 if connections is None else await connections(deadline)
    log.info("drained: %d stream(s) ended for their clients to resume; %s; %s%s", ended,
             "no call in progress" if calls_done else f"{admission.inflight} call(s) cut",
             f"{left} task(s) still running, left for another replica or the next start"
             if left else "every run finished",
             f"; {still_open} idle HTTP connection(s) closed" if still_open else "")


def start_tracing() -> Callable[[], None]:
    """Install the provider the OTEL_* variables ask for, else the one set in
    OpenTelemetry's API, if any; returns what stops it (flushing spans)."""
    provider = tracing.from_env()
    if provider is not None:
        exporting = provider
        tracing.install(exporting)

        def stop() -> None:
            tracing.install(None)
            exporting.shutdown()  # type: ignore[attr-defined]  # the SDK's provider

        return stop
    configured = trace.get_tracer_provider()
    if not isinstance(configured, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        tracing.install(configured)
        return lambda: tracing.install(None)
    return lambda: None


def _redacted(url: str) -> str:
    """A store URL fit for a log line (no password)."""
    return re.sub(r"//([^:/@]+):[^@]*@", r"//\1:***@", url)


