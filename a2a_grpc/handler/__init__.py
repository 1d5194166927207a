"""The request handler: the eleven A2A operations, once, for every edge
(request_handler.py), and the parts it holds: streams, push configs,
housekeeping, intake, idempotency, service parameters."""

from a2a_grpc.handler.request_handler import RequestHandler

__all__ = ["RequestHandler"]
