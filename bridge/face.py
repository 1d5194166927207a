"""What the HTTP logic sees of a request, and what it answers, whatever web
server carries it: aiohttp (http_app.py, `serve`'s default) or any ASGI
server (asgi.py: uvicorn, hypercorn, mounted in FastAPI or Starlette).

The routes (routes.py) and every binding (jsonrpc.py, rest.py,
legacy/rest03.py, the card, the inspector) are written against these types
only; a face turns its server's request into an `Incoming` and writes back
the `Answer` or `Streamed` it gets. One copy of routing, decoding, errors,
SSE framing, keep-alives and resume, two thin faces.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import parse_qsl

from multidict import CIMultiDict, CIMultiDictProxy, MultiDict, MultiDictProxy, MultiMapping


class BodyTooLarge(Exception):
    """The request's body is over the face's limit (BridgeConfig.max_body_bytes)."""


class Refused(Exception):
    """A plain-text HTTP refusal, outside any A2A binding (the inspector's API)."""

    def __init__(self, status: int, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.text = text


class Incoming:
    """One HTTP request. `path` is the path within the app, `root` the prefix
    it is mounted under ("" at the root; an ASGI `root_path`); `match` is what
    the route's template took from the path."""

    __slots__ = (
        "_peer",
        "_query",
        "_read",
        "_remote",
        "headers",
        "match",
        "method",
        "path",
        "query_string",
        "root",
        "scheme",
        "secure",
        "state",
    )

    def __init__(self, method: str, path: str, headers: CIMultiDictProxy[str] | CIMultiDict[str],
                 read: Callable[[], Awaitable[bytes]], *, query_string: str = "",
                 query: MultiMapping[str] | None = None, root: str = "",
                 remote: str | Callable[[], str | None] | None = None, secure: bool = False,
                 scheme: str = "http", peer: Callable[[], str | None] | None = None) -> None:
        self.method = method
        self.path = path
        self.root = root
        self.headers = headers
        self.query_string = query_string
        self._query = query
        self.match: dict[str, str] = {}
        self._remote = remote  # the client's address, or what reads it when asked
        self.secure = secure
        self.scheme = scheme
        self.state: dict[str, Any] = {}  # per request: its call context (calls.py)
        self._read = read
        self._peer = peer

    async def read(self) -> bytes:
        """The whole body; BodyTooLarge past the limit."""
        return await self._read()

    @property
    def remote(self) -> str | None:
        """The client's address (most calls never ask: read when asked)."""
        remote = self._remote
        if callable(remote):
            remote = self._remote = remote()
        return remote

    @property
    def query(self) -> MultiMapping[str]:
        if self._query is None:
            self._query = MultiDictProxy(MultiDict(parse_qsl(self.query_string,
                                                             keep_blank_values=True)))
        return self._query

    def base_url(self) -> str:
        """Where the client reached the app: scheme, Host and the mount's path."""
        host = self.headers.get("Host") or "localhost"
        return f"{self.scheme}://{host}{self.root}"

    def peer_subject(self) -> str | None:
        """The verified client certificate's common name (mutual TLS), if any."""
        return None if self._peer is None else self._peer()

    # A call's context keeps the two readers below, and this request keeps the
    # context (`state`): readers that held the request would make every request
    # a reference cycle, its objects left for the cyclic collector to find.

    def remote_reader(self) -> Callable[[], str]:
        """What reads the client's address ("" if unknown) when called."""
        remote = self._remote
        if callable(remote):
            return lambda: remote() or ""
        address = remote or ""
        return lambda: address

    def peer_reader(self) -> Callable[[], str | None] | None:
        """What reads `peer_subject` when called (None: no certificate to read)."""
        return self._peer


@dataclass(slots=True)
class Answer:
    """A whole response. `close`: the connection is closed after it."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    close: bool = False


class Sink(Protocol):
    """Where a streamed body goes. `write` raises ConnectionResetError once the
    client has gone away."""

    async def write(self, data: bytes) -> None: ...

    def close_after(self) -> None:
        """Close the connection once the response ends (not kept alive)."""


@dataclass(slots=True)
class Streamed:
    """A response whose body `produce` writes as it comes (SSE). The face sends
    the status and headers, then runs `produce`, then ends the body."""

    produce: Callable[[Sink], Awaitable[None]]
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


Response = Answer | Streamed
Handler = Callable[[Incoming], Awaitable[Response]]


def text(status: int, body: str, headers: Mapping[str, str] | None = None) -> Answer:
    return Answer(status, body.encode(), {"Content-Type": "text/plain; charset=utf-8",
                                          **(headers or {})})


def json_answer(body: bytes, status: int = 200, content_type: str = "application/json",
                headers: Mapping[str, str] | None = None) -> Answer:
    return Answer(status, body, {"Content-Type": content_type, **(headers or {})})
