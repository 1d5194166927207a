"""The gRPC edge: the grpc.aio server and servicer over the handler, and the
gRPC client of another A2A server that gateway mode serves (upstream.py)."""

from a2a_grpc.grpc_edge.server import GrpcServer, start_grpc

__all__ = ["GrpcServer", "start_grpc"]
