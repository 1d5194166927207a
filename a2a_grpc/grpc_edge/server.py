"""The gRPC server (health checking and reflection included)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2, reflection_pb2_grpc

from a2a_grpc.core.contract import A2AService
from a2a_grpc.core.ports import PortInUseError, unbindable
from a2a_grpc.core.published import published_pool, service_name
from a2a_grpc.generated import a2a_pb2
from a2a_grpc.generated import a2a_v03_pb2 as v03_pb2
from a2a_grpc.grpc_edge.servicer import A2AServicer, GenericOnly, add_to_server
from a2a_grpc.grpc_edge.servicer03 import SERVICE as V03_SERVICE
from a2a_grpc.grpc_edge.servicer03 import add_v03_to_server
from a2a_grpc.handler.request_handler import RequestHandler
from a2a_grpc.observe.metrics import Metrics
from a2a_grpc.observe.observed import ObservedService

log = logging.getLogger("a2a_grpc.server")
SERVICE_NAME = service_name(a2a_pb2.DESCRIPTOR.services_by_name["A2AService"])
V03_SERVICE_NAME = service_name(V03_SERVICE)
SERVED = ("", SERVICE_NAME, V03_SERVICE_NAME)  # what gRPC health reports on


class ServerTls(Protocol):
    """What TLS is to the gRPC server (app.tls.TlsFiles is one): credentials
    it asks for again at each handshake, so the files may be replaced."""

    def grpc_credentials(self) -> Any: ...


@dataclass(slots=True)
class GrpcServer:
    server: grpc.aio.Server
    port: int
    health: health.aio.HealthServicer

    async def stop(self, grace: float) -> None:
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace)

    async def serving(self, ready: bool) -> None:
        """What the health service says of every service here (health.Readiness)."""
        status = (health_pb2.HealthCheckResponse.SERVING if ready
                  else health_pb2.HealthCheckResponse.NOT_SERVING)
        for name in SERVED:
            await self.health.set(name, status)


def add_services(target: Any, handler: RequestHandler, service: A2AService | None = None,
                 metrics: Metrics | None = None,
                 observed: bool = False) -> health.aio.HealthServicer:
    """Add every gRPC service served here to `target` (a grpc.aio server, or
    a carrier's GrpcApp): A2A 1.0 and 0.3, health, reflection."""
    service = service or handler
    if metrics is not None or observed:
        service = ObservedService(service, "grpc", metrics)
    add_to_server(A2AServicer(service), target)
    add_v03_to_server(service, lambda: handler.card, target)  # A2A 0.3 clients
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, target)
    # Reflection describes the services as published (a2a_grpc.core.published).
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(reflection.aio.ReflectionServicer(
        (SERVICE_NAME, V03_SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME),
        pool=published_pool(a2a_pb2.DESCRIPTOR, v03_pb2.DESCRIPTOR, health_pb2.DESCRIPTOR,
                            reflection_pb2.DESCRIPTOR)), target)
    return health_servicer


async def start_grpc(handler: RequestHandler, host: str = "127.0.0.1", port: int = 0,
                     service: A2AService | None = None, tls: ServerTls | None = None,
                     metrics: Metrics | None = None, observed: bool = False,
                     shared: bool = False) -> GrpcServer:
    """Start serving `handler` on host:port (0 picks a free port); `service`:
    what the calls go to when not the handler itself (the authenticator);
    `tls`: serve TLS (and mTLS) with these files. `metrics` (or `observed`):
    each call is counted there and traced (observe.service). `shared`: a
    worker of `serve --workers`, listening beside the others (SO_REUSEPORT);
    otherwise no other process may listen on the port (core/ports.py)."""
    if why := unbindable(host, port, shared=shared):  # said here: gRPC core would log too
        raise PortInUseError(f"cannot listen on {host}:{port} ({why})")
    server = grpc.aio.server(options=None if shared else [("grpc.so_reuseport", 0)])
    health_servicer = add_services(GenericOnly(server), handler, service, metrics, observed)
    try:
        bound = (server.add_insecure_port(f"{host}:{port}") if tls is None
                 else server.add_secure_port(f"{host}:{port}", tls.grpc_credentials()))
    except RuntimeError:
        bound = 0
    if bound == 0:
        raise PortInUseError(
            f"cannot listen on {host}:{port}: the address is in use or not local")
    await server.start()
    started = GrpcServer(server, bound, health_servicer)
    await started.serving(True)
    return started
