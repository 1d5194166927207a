"""gRPC carried by an HTTP/2 server other than grpc.aio: the same servicers
(A2A 1.0 and 0.3, health, reflection) answering the gRPC wire as an ASGI
application, for a server that sends trailers (pyvoy, Envoy's HTTP/2).
`serve --grpc-carrier pyvoy` runs it, with JSON-RPC and HTTP+JSON on the
same port (docs/grpc-carriers.md)."""

from a2a_grpc.grpc_edge.asgi.app import GrpcApp
from a2a_grpc.grpc_edge.asgi.serving import CarriedGrpc, carried_grpc

__all__ = ["CarriedGrpc", "GrpcApp", "carried_grpc"]
