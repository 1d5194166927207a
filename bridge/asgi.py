"""The ASGI face: the route table of endpoints.py for any ASGI server
(uvicorn, hypercorn) and under any ASGI app that mounts it (FastAPI,
Starlette), whose middleware then sees every call.

Paths are taken within the mount: `scope["path"]` less `root_path` where the
server or the mounting app kept the whole path (Starlette from 0.33,
uvicorn's --root-path), as is where they cut it. A streamed answer learns
that its client went away from the `http.disconnect` message (the next
write then raises ConnectionResetError, as aiohttp's does): ASGI servers
take writes after a hang-up silently.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from multidict import CIMultiDict, CIMultiDictProxy

from a2a_grpc.bridge.calls import IDENTITY
from a2a_grpc.bridge.face import Answer, BodyTooLarge, Incoming, Response
from a2a_grpc.bridge.routes import Router
from a2a_grpc.core.call import Identity, common_name
from a2a_grpc.core.hangup import hung_up

log = logging.getLogger("a2a_grpc")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Identify = Callable[[Scope], Identity | None]


def route_path(scope: Scope) -> str:
    path: str = scope.get("path") or "/"
    root: str = scope.get("root_path") or ""
    if root and path.startswith(root) and (len(path) == len(root) or path[len(root)] == "/"):
        path = path[len(root):]
    return path or "/"


def incoming(scope: Scope, receive: Receive, max_body: int,
             identify: Identify | None = None) -> Incoming:
    headers = CIMultiDictProxy(CIMultiDict(
        (k.decode("latin-1"), v.decode("latin-1")) for k, v in scope.get("headers") or ()))
    body: list[bytes] = []
    read_once: list[bytes] = []

    async def read() -> bytes:
        if read_once:
            return read_once[0]
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise ConnectionResetError("the client went away")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > max_body:
                raise BodyTooLarge
            body.append(chunk)
            if not message.get("more_body", False):
                break
        read_once.append(b"".join(body))
        return read_once[0]

    client = scope.get("client")
    tls = (scope.get("extensions") or {}).get("tls") or {}
    subject = common_name(tls.get("client_cert_name") or "")  # mutual TLS's client
    request = Incoming(scope["method"], route_path(scope), headers, read,
                       query_string=(scope.get("query_string") or b"").decode("latin-1"),
                       root=(scope.get("root_path") or "").rstrip("/"),
                       remote=client[0] if client else None,
                       secure=scope.get("scheme") in ("https", "wss"),
                       scheme=scope.get("scheme") or "http",
                       peer=None if subject is None else lambda: subject)
    if identify is not None:
        who = identify(scope)
        if who is not None:
            request.state[IDENTITY] = who
    return request


async def serve(router: Router, scope: Scope, receive: Receive, send: Send, *,
                max_body: int, identify: Identify | None = None,
                first: Callable[[Incoming], Awaitable[None]] | None = None) -> None:
    """Answer one `http` scope; `first`, when given, sees the request before
    it is answered."""
    request = incoming(scope, receive, max_body, identify)
    if first is not None:
        await first(request)
    await write(request, await router.answer(request), receive, send)


async def write(request: Incoming, answer: Response, receive: Receive, send: Send) -> None:
    head_only = request.method == "HEAD"
    if isinstance(answer, Answer):
        headers = _headers(answer.headers)
        if not any(k == b"content-length" for k, _ in headers):
            headers.append((b"content-length", str(len(answer.body)).encode()))
        await send({"type": "http.response.start", "status": answer.status, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if head_only else answer.body})
        return
    sink = _Sink(send)
    # Not cancelled when the answer ends: it ends with the `http.disconnect`
    # that `receive` gives once the response is complete (ASGI's word), and
    # pyvoy fails on a `receive` cancelled while it waits.
    watching = asyncio.create_task(sink.watch(receive), name="a2a-asgi-disconnect")
    _WATCHING.add(watching)
    watching.add_done_callback(_WATCHING.discard)
    try:
        await send({"type": "http.response.start", "status": answer.status,
                    "headers": _headers(answer.headers)})
    except OSError:
        sink.gone = True  # produce still runs: it closes what it streams
    await answer.produce(sink)
    with contextlib.suppress(OSError):
        if not sink.gone:
            await send({"type": "http.response.body", "body": b""})


_WATCHING: set[asyncio.Task[None]] = set()  # what the loop would otherwise hold weakly


def _headers(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]


class _Sink:
    __slots__ = ("gone", "send")

    def __init__(self, send: Send) -> None:
        self.send = send
        self.gone = False

    async def watch(self, receive: Receive) -> None:
        await hung_up(receive)
        self.gone = True

    async def write(self, data: bytes) -> None:
        if self.gone:
            raise ConnectionResetError("the client went away")
        try:
            await self.send({"type": "http.response.body", "body": data, "more_body": True})
        except OSError as exc:  # uvicorn's ClientDisconnected is one
            self.gone = True
            raise ConnectionResetError("the client went away") from exc

    def close_after(self) -> None:
        """ASGI has no word for it: the connection is the server's to keep."""


async def lifespan(receive: Receive, send: Send,
                   start: Callable[[], Awaitable[None]],
                   stop: Callable[[], Awaitable[None]],
                   said: Callable[[Exception], bool] = lambda exc: False) -> None:
    """An ASGI lifespan scope: `start` at its start (a failure said to the
    server, which then does not serve; logged, unless `said(exc)` has told
    it already), `stop` at its end."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            try:
                await start()
            except Exception as exc:
                if not said(exc):
                    log.exception("the A2A app could not start")
                await send({"type": "lifespan.startup.failed", "message": str(exc)})
                return
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await stop()
            await send({"type": "lifespan.shutdown.complete"})
            return
