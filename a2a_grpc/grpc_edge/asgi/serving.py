"""gRPC as the app carried by another server answers it: what the assembly
holds in place of a grpc.aio server (grpc_edge/server.py's GrpcServer)."""

from __future__ import annotations

from grpc_health.v1 import health, health_pb2

from a2a_grpc.core.contract import A2AService
from a2a_grpc.grpc_edge.asgi.app import GrpcApp
from a2a_grpc.grpc_edge.server import SERVED, add_services
from a2a_grpc.handler.request_handler import RequestHandler
from a2a_grpc.observe.metrics import Metrics


class CarriedGrpc:
    """Every gRPC service, answered by `app` on the port of the server that
    carries it. `port`: a port of its own that server also listens on for
    gRPC (`serve --grpc-carrier pyvoy`: --grpc-port), which the card names;
    0: the card names the port it was asked on."""

    def __init__(self, app: GrpcApp, health_servicer: health.aio.HealthServicer) -> None:
        self.app = app
        self.health = health_servicer
        self.port = 0

    async def serving(self, ready: bool) -> None:
        """What the health service says of every service here (health.Readiness)."""
        status = (health_pb2.HealthCheckResponse.SERVING if ready
                  else health_pb2.HealthCheckResponse.NOT_SERVING)
        for name in SERVED:
            await self.health.set(name, status)

    async def stop(self, grace: float) -> None:
        """Watchers of health hear that it is shutting down; the calls
        themselves end with the carrying server."""
        await self.health.enter_graceful_shutdown()


async def carried_grpc(handler: RequestHandler, service: A2AService | None = None,
                       metrics: Metrics | None = None) -> CarriedGrpc:
    app = GrpcApp()
    made = CarriedGrpc(app, add_services(app, handler, service, metrics))
    await made.serving(True)
    return made
