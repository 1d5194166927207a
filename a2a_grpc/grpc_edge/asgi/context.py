"""What a servicer sees of a call carried over ASGI: the part of
grpc.aio's ServicerContext the servicers here use (metadata, peer, TLS
subject, initial and trailing metadata, abort, write, deadline), over
the ASGI `send` of the call's response."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

import grpc

from a2a_grpc.core.call import common_name
from a2a_grpc.grpc_edge.asgi import wire

Metadata = Sequence[tuple[str, str | bytes]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class Aborted(Exception):
    """`context.abort`: the call ends with this status (grpc.aio's AbortError)."""

    def __init__(self, code: int, details: str, trailing: Metadata | None) -> None:
        super().__init__(details)
        self.code = code
        self.details = details
        self.trailing = trailing


class ClientGone(Exception):
    """A write failed: the client went away (the server's OSError, such as
    pyvoy's ClientDisconnectedError)."""


class Context:
    __slots__ = ("_code", "_deadline", "_details", "_initial", "_metadata", "_scope",
                 "_send", "_serialize", "_trailing", "started")

    def __init__(self, scope: MutableMapping[str, Any], send: Send,
                 serialize: Callable[[Any], bytes] | None, deadline: float | None) -> None:
        self._scope = scope
        self._send = send
        self._serialize = serialize
        self._deadline = deadline
        self._metadata: tuple[tuple[str, str | bytes], ...] | None = None
        self._initial: list[wire.Header] = []
        self._trailing: Metadata | None = None
        self._code: int | None = None
        self._details = ""
        self.started = False

    # What the call brought.

    def invocation_metadata(self) -> tuple[tuple[str, str | bytes], ...]:
        if self._metadata is None:
            self._metadata = wire.metadata_of(self._scope.get("headers") or ())
        return self._metadata

    def peer(self) -> str:
        client = self._scope.get("client")
        if not client:
            return ""
        host, port = client[0], client[1]
        return f"ipv6:[{host}]:{port}" if ":" in host else f"ipv4:{host}:{port}"

    def auth_context(self) -> dict[str, list[bytes]]:
        """The verified client certificate's common name, from the ASGI TLS
        extension's `client_cert_name` (an RFC 4514 name)."""
        tls = (self._scope.get("extensions") or {}).get("tls") or {}
        name = common_name(tls.get("client_cert_name") or "")
        return {"x509_common_name": [name.encode()]} if name else {}

    def time_remaining(self) -> float | None:
        """Seconds to the call's deadline (the event loop's clock), if it has one."""
        if self._deadline is None:
            return None
        return max(0.0, self._deadline - asyncio.get_running_loop().time())

    # What the call answers.

    async def send_initial_metadata(self, metadata: Metadata) -> None:
        if self.started:
            raise grpc.aio.UsageError("initial metadata was already sent")
        self._initial.extend(wire.as_headers(metadata))
        await self.start()

    async def start(self) -> None:
        """The response's headers, with the initial metadata; sent once."""
        if self.started:
            return
        self.started = True
        await self._sent({"type": "http.response.start", "status": 200, "trailers": True,
                          "headers": [wire.CONTENT_TYPE, wire.ACCEPTED, *self._initial]})

    async def _sent(self, message: MutableMapping[str, Any]) -> None:
        try:
            await self._send(message)
        except OSError as exc:
            raise ClientGone(str(exc)) from exc

    async def write(self, message: Any) -> None:
        """One message of a streamed answer (what a servicer that does not
        `yield` writes with)."""
        data = message if self._serialize is None else self._serialize(message)
        if not self.started:
            await self.start()
        await self._sent({"type": "http.response.body", "body": wire.framed(data),
                          "more_body": True})

    async def abort(self, code: grpc.StatusCode, details: str = "",
                    trailing_metadata: Metadata = ()) -> None:
        raise Aborted(code.value[0], details, trailing_metadata)

    @property
    def failed(self) -> bool:
        """The servicer set a status other than OK: its answer, if any, is not sent."""
        return bool(self._code)

    def set_code(self, code: grpc.StatusCode) -> None:
        self._code = code.value[0]

    def set_details(self, details: str) -> None:
        self._details = details

    def set_trailing_metadata(self, metadata: Metadata) -> None:
        self._trailing = metadata

    async def finish(self, code: int | None = None, details: str = "",
                     trailing: Metadata | None = None, last: bytes = b"") -> None:
        """End the call: headers if none went yet, `last` (a unary call's
        answer, framed), then the status in the trailers."""
        if code is None:  # the servicer returned: what it set, else OK
            code, details, trailing = self._code or 0, self._details, self._trailing
        if not self.started:
            await self.start()
        await self._sent({"type": "http.response.body", "body": last, "more_body": False})
        await self._sent({"type": "http.response.trailers",
                          "headers": wire.status_trailers(code, details, trailing)})
