"""What both HTTP bindings share: service parameters and error logging."""

from __future__ import annotations

import logging

from aiohttp import web

from a2a_grpc.context import CallContext
from a2a_grpc.core.errors import A2AError, InternalError

log = logging.getLogger("bridge")


def call_context(request: web.Request) -> CallContext:
    """Service parameters from headers; `A2A-Version` may also be a query parameter."""
    headers = {k.lower(): v for k, v in request.headers.items()}
    if request.query_string:  # most calls have none: no query to parse
        for key, value in request.query.items():
            if key.lower() == "a2a-version":
                headers["a2a-version"] = value
    return CallContext.from_headers(headers, lowered=True)


def note(exc: BaseException, where: str) -> None:
    """Log what a client will only see as an internal error."""
    if not isinstance(exc, A2AError) or isinstance(exc, InternalError):
        log.error("internal error in %s", where, exc_info=exc)
