"""What both HTTP bindings share: service parameters and error logging."""

from __future__ import annotations

import dataclasses
import logging
from functools import partial
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from a2a_grpc.core.call import CallContext
from a2a_grpc.core.errors import (
    A2AError,
    InternalError,
    ResourceExhaustedError,
    UnavailableError,
)

log = logging.getLogger("bridge")


# Where a request keeps its call's context: made once, read again by the
# response's extensions header (http_app.py). A RequestKey where aiohttp has
# them (3.13 on); a plain key before, which those versions take silently.
CALL: Any = (web.RequestKey("a2a_grpc.call", CallContext) if hasattr(web, "RequestKey")
             else "a2a_grpc.call")


def call_context(request: web.Request) -> CallContext:
    """Service parameters from headers; `A2A-Version` may also be a query
    parameter. Made once per request (a batch shares it)."""
    made: CallContext | None = request.get(CALL)
    if made is None:
        made = request[CALL] = _made(request)
    return made


async def name_activated(request: web.Request, response: web.StreamResponse) -> None:
    """The response names the extensions activated for the call (`A2A-Extensions`)."""
    ctx: CallContext | None = request.get(CALL)
    if ctx is not None and ctx.activated:
        response.headers["A2A-Extensions"] = ", ".join(sorted(ctx.activated))


def _made(request: web.Request) -> CallContext:
    headers = {k.lower(): v for k, v in request.headers.items()}
    peer = partial(peer_subject, request) if request.secure else None
    remote = partial(_remote, request)
    if not request.query_string:  # most calls have none: no query to parse
        return CallContext.from_headers(headers, lowered=True, peer=peer, remote=remote)
    for key, value in request.query.items():
        if key.lower() == "a2a-version":
            headers["a2a-version"] = value
    ctx = CallContext.from_headers(headers, lowered=True, peer=peer, remote=remote)
    return dataclasses.replace(ctx, query=dict(request.query))


def _remote(request: web.Request) -> str:
    return request.remote or ""


def peer_subject(request: web.Request) -> str | None:
    """The verified client certificate's common name (mutual TLS), if any."""
    cert = request.transport.get_extra_info("peercert") if request.transport else None
    for rdn in (cert or {}).get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                return str(value)
    return None


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
