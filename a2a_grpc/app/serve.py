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
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack

from opentelemetry import trace

from a2a_grpc.adapters import adopt
from a2a_grpc.agent import AgentExecutor
from a2a_grpc.app import process
from a2a_grpc.app.admission import Admission
from a2a_grpc.app.assembly import assemble
from a2a_grpc.app.gateway import gateway
from a2a_grpc.app.health import Readiness
from a2a_grpc.app.http import (
    http_interfaces,
    linger,
    start_http,
    start_operations,
    tune_collector,
    wait_for_signal,
)
from a2a_grpc.app.options import drain_notice, drain_words, http_options
from a2a_grpc.app.settings import ServeSettings
from a2a_grpc.app.threads import settle_helpers
from a2a_grpc.bridge import CARD
from a2a_grpc.bridge.card import CardEndpoint
from a2a_grpc.bridge.inspector.api import Inspector
from a2a_grpc.bus import EventBus
from a2a_grpc.cards.card import advertised_host, host_port
from a2a_grpc.cards.catalog import CATALOG_PATH
from a2a_grpc.core.ports import ensure_unserved
from a2a_grpc.grpc_edge.asgi import CarriedGrpc
from a2a_grpc.grpc_edge.server import GrpcServer
from a2a_grpc.handler.request_handler import RequestHandler
from a2a_grpc.observe import tracing

__all__ = ["gateway", "serve"]

log = logging.getLogger("a2a_grpc")


async def serve(agent: AgentExecutor, settings: ServeSettings) -> None:
    """Serve `agent` over gRPC and HTTP, as `settings` say, until SIGINT/SIGTERM.
    Spans are exported as the OTEL_* variables say (observe.tracing), or made
    with the tracer provider the embedding program set in OpenTelemetry's API.
    `agent` may also be an a2a-sdk executor or a framework's agent (adapters)."""
    agent = adopt(agent)
    net, stored = settings.network, settings.store
    http = http_options(net, settings.agent.card_format)
    worker = process.worker()
    if worker is not None:
        http = dataclasses.replace(http, reuse_port=True)
    else:  # before anything opens: another server there would split the calls
        ensure_unserved(net.host, net.http_port, net.grpc_port)
    notice = drain_notice(net, bool(stored.bus))
    async with AsyncExitStack() as cleanup:
        # Unwound in reverse on the way out, also when starting fails half-way.
        cleanup.callback(start_tracing())
        served = await assemble(agent, settings, cleanup, http.tls)
        assert isinstance(served.grpc, GrpcServer)  # serve's own: grpc.aio
        observe = served.observe
        hosted = {name: CardEndpoint(card, http.config.card_v03_fields)
                  for name, card in served.hosted.items()}
        runner, http_port = await start_http(
            served.admission, served.handler.card, http, net.grace, served.keys.jwks(),
            served.metrics, served.readiness,
            Inspector(observe.inspector_remote_targets) if observe.inspector else None,
            hosted)
        cleanup.push_async_callback(runner.cleanup)
        also = ""
        if observe.metrics_port is not None:
            operations = await start_operations(http.host, observe.metrics_port,
                                                served.metrics, served.readiness)
            cleanup.push_async_callback(operations.cleanup)
            also = f", metrics on {host_port(http.host, operations.addresses[0][1])}"
        # The cards name the real ports, known only now that both are bound.
        interfaces = [*served.grpc_interface(settings), *http_interfaces(http, http_port)]
        for name, endpoint in hosted.items():
            await served.publish([*served.grpc_interface(settings, name),
                                  *http_interfaces(http, http_port, name)], endpoint, name,
                                 interfaces[-1].url)
        card = (served.handler.card if hosted else
                await served.publish(interfaces, runner.app[CARD]))
        if hosted:
            runner.app[CARD].update(card)  # the inspector's own agent: the first hosted
        # Under --workers the supervisor says "listening" once all are ready, and
        # what every worker serves alike is said by the first.
        log.info("%s: gRPC on %s, %s on %s%s",
                 "listening" if worker is None else f"worker {worker} ready",
                 host_port(net.host, served.grpc.port), "HTTPS" if http.tls else "HTTP",
                 host_port(http.host, http_port), also)
        stops = "; Ctrl-C stops it" if worker is None else ""
        if hosted and worker in (None, 1):
            log.info("A2A agents %s, each under /NAME (its card at /NAME/.well-known/"
                     "agent-card.json), gRPC by the tenant NAME; listed at %s%s; tasks in %s%s",
                     ", ".join(hosted), interfaces[2].url, CATALOG_PATH, stored.shown, stops)
        elif worker in (None, 1):
            log.info("A2A agent %r: the card (/.well-known/agent-card.json) advertises %s; "
                     "tasks in %s%s", card.name,
                     ", ".join(f"{i.binding} {i.url}" for i in interfaces), stored.shown, stops)
        if observe.inspector and worker in (None, 1):
            log.info("the inspector: open %s/inspector in a browser", interfaces[2].url)
        if net.grpc_public_address is None and net.host.strip() in ("0.0.0.0", "::", ""):
            log.warning("listening on all addresses: the card names this machine as %s; "
                        "pass --public-url and --grpc-public-address with the names clients "
                        "use", advertised_host(net.host))
        tune_collector()
        if lowered := settle_helpers(net.helper_threads):
            log.info("--helper-threads %s: %d helper threads", net.helper_threads, lowered)
        process.notify("READY=1")
        await wait_for_signal()
        process.notify("STOPPING=1")
        await drain(served.admission, served.readiness, served.grpc, served.bus,
                    served.handler, notice, net.grace, lambda deadline: linger(runner, deadline),
                    replicated=bool(stored.bus))
    log.info("stopped")


async def drain(admission: Admission, readiness: Readiness,
                grpc_server: GrpcServer | CarriedGrpc,
                bus: EventBus, handler: RequestHandler, notice: float, grace: float,
                connections: Callable[[float], Awaitable[int]] | None = None, *,
                replicated: bool = False) -> None:
    """SIGTERM: not ready at once, calls still taken for `notice` s (a load
    balancer stops routing here meanwhile); then new calls refused, open
    streams ended for their clients to resume elsewhere, and up to `grace` s
    for the calls in progress and the running agents to finish, and for
    clients to let go of their HTTP connections (`connections(deadline)`:
    answered, each closing its connection, until none is left open). What is
    still running after that is left (a survivor takes it over, or the next
    start). `replicated`: other replicas (or workers) answer meanwhile."""
    log.info("shutting down: /readyz answers 503; calls are taken for %g s more, then "
             "refused; then up to %g s for calls and runs to finish", notice, grace)
    readiness.drain()
    await grpc_server.serving(False)
    await asyncio.sleep(notice)
    refused, resume = drain_words(replicated)
    admission.drain(refused)
    ended = bus.interrupt(resume)
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
