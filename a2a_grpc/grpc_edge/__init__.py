"""The gRPC edge: the grpc.aio server and servicer over the handler, and the
gRPC client of another A2A server that gateway mode serves (upstream.py).
The server is imported when first asked for: the client shares upstream.py
and the servicer's names, not the server."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from a2a_grpc.grpc_edge.server import GrpcServer, start_grpc

__all__ = ["GrpcServer", "start_grpc"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from a2a_grpc.grpc_edge import server

        return getattr(server, name)
    raise AttributeError(f"module 'a2a_grpc.grpc_edge' has no attribute {name!r}")
