"""What both HTTP bindings share: service parameters and error logging."""

from __future__ import annotations

import dataclasses
import logging

from aiohttp.http_exceptions import HttpProcessingError

from a2a_grpc.bridge.face import Incoming
from a2a_grpc.core.call import CallContext
from a2a_grpc.core.errors import (
    A2AError,
    InternalError,
    ResourceExhaustedError,
    UnavailableError,
)

log = logging.getLogger("bridge")


CALL = "a2a_grpc.call"  # where a request keeps its call's context (Incoming.state)


def call_context(request: Incoming) -> CallContext:
    """Service parameters from headers; `A2A-Version` may also be a query
    parameter. Made once per request (a batch shares it), and read again for
    the response's extensions header (activated_header)."""
    made: CallContext | None = request.state.get(CALL)
    if made is None:
        made = request.state[CALL] = _made(request)
    return made


def activated_header(request: Incoming) -> str | None:
    """`A2A-Extensions` for the response: the extensions activated for the call."""
    ctx: CallContext | None = request.state.get(CALL)
    if ctx is not None and ctx.activated:
        return ", ".join(sorted(ctx.activated))
    return None


def _made(request: Incoming) -> CallContext:
    headers = {k.lower(): v for k, v in request.headers.items()}
    peer = request.peer_reader() if request.secure else None
    remote = request.remote_reader()
    identified = request.state.get(IDENTITY)
    if not request.query_string:  # most calls have none: no query to parse
        ctx = CallContext.from_headers(headers, lowered=True, peer=peer, remote=remote)
    else:
        for key, value in request.query.items():
            if key.lower() == "a2a-version":
                headers["a2a-version"] = value
        ctx = CallContext.from_headers(headers, lowered=True, peer=peer, remote=remote)
        ctx = dataclasses.replace(ctx, query=dict(request.query))
    if identified is not None:
        ctx = dataclasses.replace(ctx, identity=identified, user=identified.subject)
    tenant = request.state.get(TENANT)
    if tenant is not None:
        ctx = dataclasses.replace(ctx, tenant=tenant)
    return ctx


IDENTITY = "a2a_grpc.identity"  # who the host app admitted (asgi.py's `identify`)
TENANT = "a2a_grpc.tenant"  # the hosted agent a route is for (endpoints.for_tenant)


def refusal_headers(exc: BaseException) -> dict[str, str]:
    """`WWW-Authenticate` for an answer refusing a call without credentials;
    `Retry-After` for one refused by a limit, or by a server shutting down (which
    closes the connection too, so that the client's next call, reconnecting
    through its balancer, reaches another replica)."""
    if isinstance(exc, ResourceExhaustedError):
        return {"Retry-After": str(exc.retry_after)}
    if type(exc) is UnavailableError:
        return {"Retry-After": "1", "Connection": "close"}
    challenge = getattr(exc, "challenge", "")
    return {"WWW-Authenticate": challenge} if challenge else {}


def note(exc: BaseException, where: str) -> None:
    """Log what a client will only see as an internal error."""
    if not isinstance(exc, A2AError) or isinstance(exc, InternalError):
        log.error("internal error in %s", where, exc_info=exc)


class _BadRequestsAtDebug(logging.Filter):
    """aiohttp logs a request it cannot parse (an over-long line, a bad header) as
    an ERROR with a traceback, though the client got its 400 and nothing on our
    side failed: one such line per request lets anyone who reaches the port
    flood the log. Such records become one DEBUG line without the traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if not isinstance(exc, HttpProcessingError):
            return True
        if not logging.getLogger(record.name).isEnabledFor(logging.DEBUG):
            return False  # the level was checked for ERROR, before this filter
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        record.msg, record.args = "bad HTTP request refused (%s): %s", (
            exc.code, (exc.message or "").strip().splitlines()[0][:200] if exc.message else "")
        record.exc_info, record.exc_text = None, None
        return True


def quiet_bad_requests() -> None:
    """Install the filter above on aiohttp's server logger (once)."""
    server = logging.getLogger("aiohttp.server")
    if not any(isinstance(f, _BadRequestsAtDebug) for f in server.filters):
        server.addFilter(_BadRequestsAtDebug())
