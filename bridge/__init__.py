"""The HTTP face of a2a-grpc: JSON-RPC 2.0 + SSE, HTTP+JSON (REST) + SSE, agent card.

Written against `a2a_grpc.core.contract.A2AService`, so it serves the in-process
RequestHandler or, in gateway mode, any A2A gRPC server.
"""

from a2a_grpc.bridge.http_app import CARD, BridgeConfig, create_app

__all__ = ["CARD", "BridgeConfig", "create_app"]
