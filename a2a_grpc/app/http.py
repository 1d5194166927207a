"""The HTTP side of `serve` and `bridge`: starting the bridge's aiohttp app,
the interfaces it gives the card, an operations-only port (/metrics and the
health checks, for deployments that expose gRPC alone), and what both
commands do around their servers (freezing start-up, waiting for a signal)."""

from __future__ import annotations

import asyncio
import gc
import signal
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from aiohttp import web

from a2a_grpc.app.health import Readiness
from a2a_grpc.app.tls import Reloader, TlsFiles
from a2a_grpc.bridge import BridgeConfig, create_app
from a2a_grpc.bridge.card import CardEndpoint
from a2a_grpc.bridge.http_app import CLOSING, add_operations_routes
from a2a_grpc.bridge.inspector.api import Inspector
from a2a_grpc.cards.card import Interface, advertised_host, host_port
from a2a_grpc.core.contract import A2AService
from a2a_grpc.core.ports import PortInUseError
from a2a_grpc.generated.a2a_pb2 import AgentCard
from a2a_grpc.observe.metrics import Metrics

LONGEST = 60 * 1024  # a request line or a header field


class Drains(Protocol):
    """What says the server is shutting down (health.Readiness, or `Draining`)."""

    @property
    def draining(self) -> bool: ...


@dataclass(slots=True)
class Draining:
    """The drain flag of a face that checks nothing else (the gateway)."""

    draining: bool = False


@dataclass(frozen=True, slots=True)
class HttpOptions:
    host: str = "127.0.0.1"
    port: int = 8080
    public_url: str | None = None  # what clients use, e.g. behind a proxy
    config: BridgeConfig = field(default_factory=BridgeConfig)
    tls: TlsFiles | None = None  # TLS on the HTTP port (and, in serve, the gRPC port)
    reuse_port: bool = False  # others listen on the port too (serve --workers)


async def start_http(service: A2AService, card: AgentCard, options: HttpOptions,
                     grace: float, jwks: dict[str, Any] | None = None,
                     metrics: Metrics | None = None,
                     readiness: Readiness | None = None,
                     inspector: Inspector | None = None,
                     hosted: Mapping[str, CardEndpoint] | None = None,
                     drains: Drains | None = None,
                     ) -> tuple[web.AppRunner, int]:
    """Start the bridge; returns its runner and the port it got. `hosted`: the
    cards of the agents of a server hosting several, by name. `drains` (else
    `readiness`): once it says so, every response closes its connection."""
    app = create_app(service, card, options.config, jwks, metrics,
                     None if readiness is None else readiness.probe, observed=True,
                     inspector=inspector, hosted=hosted)
    drains = drains or readiness
    if drains is not None:
        app[CLOSING] = lambda: drains.draining
    ssl_context = None
    if options.tls is not None:
        ssl_context = options.tls.ssl_context()
        reloader = Reloader(options.tls, ssl_context)
        reloader.start()
        app.on_cleanup.append(lambda _: reloader.stop())
    # A request line or header up to Envoy's limit (60 KiB, the pyvoy carrier's)
    # reaches the app, which answers in the spec's error shape; aiohttp's own
    # limit (8 KiB) answered a long task id's URL in plain text.
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=grace,
                           max_line_size=LONGEST, max_field_size=LONGEST)
    await runner.setup()
    site = web.TCPSite(runner, options.host, options.port, ssl_context=ssl_context,
                       reuse_port=options.reuse_port or None)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        raise PortInUseError(
            f"cannot listen on {options.host}:{options.port} ({exc.strerror})") from exc
    port: int = runner.addresses[0][1]
    return runner, port


async def linger(runner: web.AppRunner, deadline: float) -> int:
    """Wait until no HTTP connection is open, or the loop's clock reaches
    `deadline`; returns how many are still open. Each answer of a draining
    server closes its connection (`_closing_while`), so a connection still
    open is one its client may send on: closing it then could meet that
    request; until the deadline the server still answers it (refused,
    retryable). Polled: aiohttp tells no event when a connection closes."""
    loop = asyncio.get_running_loop()
    server = runner.server
    for _ in iter(lambda: server is None or not server.connections
                  or loop.time() >= deadline, True):
        await asyncio.sleep(0.05)
    return 0 if server is None else len(server.connections)


def http_interfaces(options: HttpOptions, port: int, name: str = "") -> list[Interface]:
    """The HTTP interfaces of the agent, or of the hosted agent `name` (under /name)."""
    scheme = "https" if options.tls is not None else "http"
    base = (options.public_url
            or f"{scheme}://{host_port(advertised_host(options.host), port)}").rstrip("/")
    if name:
        base += "/" + name
    return [Interface("JSONRPC", base + options.config.jsonrpc_path),
            Interface("HTTP+JSON", base + options.config.rest_prefix.rstrip("/"))]


# A first-generation collection every this many allocations, not CPython's 700:
# a busy server holds thousands of objects in flight (requests, writes waiting
# for their commit), and every collection walked them to find nothing, since
# the runtime leaves no cycles (tests/integration/test_no_cycles.py). An
# agent's cyclic garbage still goes, 10,000 objects later (docs/benchmarks.md).
FIRST_GENERATION = 10_000


def tune_collector() -> None:
    """What start-up made (modules, descriptors, the app) lives as long as the
    process: moved out of the collector's sight, so that full collections walk
    only what calls create (a measured cost: docs/benchmarks.md). Start-up's
    garbage is collected first, not frozen with it. Then young objects are
    collected less often (FIRST_GENERATION)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(FIRST_GENERATION, *gc.get_threshold()[1:])


async def wait_for_signal() -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()




async def start_operations(host: str, port: int, metrics: Metrics,
                           readiness: Readiness | None) -> web.AppRunner:
    """/metrics, /healthz and /readyz alone on host:port (`serve --metrics-port`)."""
    app = web.Application()
    add_operations_routes(app, metrics, None if readiness is None else readiness.probe)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError as exc:
        await runner.cleanup()
        raise PortInUseError(f"cannot listen on {host}:{port} for metrics "
                             f"({exc.strerror})") from exc
    return runner
