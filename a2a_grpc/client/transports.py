"""How the client reaches an agent: one transport per binding, same shape.

Each transport sends a generated request message for an RPC name and returns
the response message, or (streams) an EventStream whose `seq` follows the
agent's event numbers when it tells them (SSE `id:`, gRPC
`a2a-first-event-id`). Errors come back as the A2A error types, rebuilt from
the binding's own error form; a refused or dropped connection is
AgentUnreachableError. JSON-RPC and HTTP+JSON here; gRPC in grpc_transport.py.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncGenerator, Mapping
from typing import Any, Protocol

import aiohttp
from google.protobuf import json_format
from google.protobuf.message import Message

from a2a_grpc.client import activated, wire
from a2a_grpc.client.errors import (
    AgentUnreachableError,
    BadResponseError,
    from_details,
    from_jsonrpc,
    not_http,
)
from a2a_grpc.core.errors import A2AError
from a2a_grpc.core.methods import METHODS
from a2a_grpc.core.stream import EventStream, Numbered
from a2a_grpc.generated.a2a_pb2 import StreamResponse

Headers = Mapping[str, str]
DROPPED = (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, ConnectionError,
           TimeoutError)


class Transport(Protocol):
    binding: str

    async def call(self, rpc: str, req: Message, headers: Headers,
                   retry: bool = False) -> Message:
        """`retry`: this is a retry after a connection failure (gRPC then waits for
        the channel to reconnect instead of failing at once)."""

    async def stream(self, rpc: str, req: Message, headers: Headers,
                     retry: bool = False) -> EventStream: ...

    async def close(self) -> None: ...


def _parse(data: Any, cls: type[Message]) -> Message:
    try:
        return json_format.ParseDict(data, cls(), ignore_unknown_fields=True)
    except (json_format.ParseError, TypeError, AttributeError) as exc:
        raise BadResponseError(f"the agent's answer is not a {cls.__name__}: {exc}") from None


async def _sse(resp: aiohttp.ClientResponse) -> AsyncGenerator[tuple[str | None, str | None,
                                                                     str], None]:
    """(id, event name, data) of each SSE event; comments (keep-alives) skipped."""
    data: list[str] = []
    ev_id = name = None
    while True:
        raw = await resp.content.readline()
        if not raw:
            return
        wire.sse_line(resp, raw)
        line = raw.decode("utf-8").rstrip("\r\n")
        if line == "":
            if data:
                yield ev_id, name, "\n".join(data)
            data, ev_id, name = [], None, None
        elif not line.startswith(":"):
            key, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if key == "data":
                data.append(value)
            elif key == "id":
                ev_id = value
            elif key == "event":
                name = value


def http_failure(status: int, url: str) -> A2AError:
    if status in (502, 503, 504):
        return AgentUnreachableError(f"the agent at {url} is unavailable (HTTP {status})")
    return BadResponseError(f"HTTP {status} from {url}, not an A2A answer")


class JsonRpcTransport:
    binding = "JSONRPC"

    def __init__(self, session: aiohttp.ClientSession, url: str,
                 params: Mapping[str, str] | None = None) -> None:
        self.session, self.url = session, url
        self.params = dict(params or {})  # sent on every call (an API key in the query)
        self._ids = itertools.count(1)

    async def close(self) -> None:
        pass

    def _request(self, rpc: str, req: Message) -> tuple[str, Any]:
        """The method name and params to send (the 0.3 transport's are its own)."""
        return rpc, json_format.MessageToDict(req)

    def _parse_answer(self, rpc: str, result: Any) -> Message:
        return _parse(result, METHODS[rpc].response)

    def _parse_event(self, result: Any) -> StreamResponse:
        return _parse(result, StreamResponse)  # type: ignore[return-value]

    async def _post(self, rpc: str, req: Message, headers: Headers,
                    accept: str) -> tuple[aiohttp.ClientResponse, int]:
        id_ = next(self._ids)
        method, params = self._request(rpc, req)
        payload = {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}
        try:
            resp = await self.session.post(self.url, json=payload, params=self.params,
                                           headers={**headers, "Accept": accept})
        except DROPPED as exc:
            raise AgentUnreachableError(f"cannot reach {self.url}: {exc}") from None
        except aiohttp.ClientResponseError as exc:
            raise not_http(self.url, exc) from None
        activated.seen(resp.headers.get("A2A-Extensions"))
        if resp.status != 200:  # refused by HTTP too (credentials, a limit, shutting down):
            await self._refusal(resp)  # the JSON-RPC error is the body
        return resp, id_

    async def _refusal(self, resp: aiohttp.ClientResponse) -> None:
        try:
            body = await resp.json(content_type=None)
        except (ValueError, aiohttp.ContentTypeError):
            body = None
        except DROPPED as exc:
            raise AgentUnreachableError(f"the connection to {self.url} dropped: {exc}") from None
        finally:
            resp.release()
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            raise from_jsonrpc(body["error"])
        raise http_failure(resp.status, self.url)

    async def _answer(self, resp: aiohttp.ClientResponse) -> Any:
        try:
            body = await resp.json(content_type=None)
        except (ValueError, aiohttp.ContentTypeError):
            raise BadResponseError(f"{self.url} did not answer JSON") from None
        except DROPPED as exc:
            raise AgentUnreachableError(f"the connection to {self.url} dropped: {exc}") from None
        finally:
            resp.release()
        if not isinstance(body, dict):
            raise BadResponseError(f"{self.url} did not answer a JSON-RPC response")
        if "error" in body:
            raise from_jsonrpc(body["error"])
        return body.get("result")

    async def call(self, rpc: str, req: Message, headers: Headers,
                   retry: bool = False) -> Message:
        resp, _ = await self._post(rpc, req, headers, "application/json")
        return self._parse_answer(rpc, await self._answer(resp))

    async def stream(self, rpc: str, req: Message, headers: Headers,
                     retry: bool = False) -> EventStream:
        resp, _ = await self._post(rpc, req, headers, "text/event-stream")
        if resp.content_type != "text/event-stream":  # refused before the first event
            await self._answer(resp)
            raise BadResponseError(f"{self.url} answered a stream request without a stream")
        return EventStream(self._events(resp))

    async def _events(self, resp: aiohttp.ClientResponse) -> AsyncGenerator[Numbered, None]:
        try:
            async for ev_id, _, data in _sse(resp):
                body = json.loads(data)
                if "error" in body:
                    raise from_jsonrpc(body["error"])
                yield _seq(ev_id), self._parse_event(body.get("result"))
        except DROPPED as exc:
            raise AgentUnreachableError(f"the stream from {self.url} dropped: {exc}") from None
        finally:
            wire.http_done(resp)
            resp.release()


class RestTransport:
    binding = "HTTP+JSON"

    def __init__(self, session: aiohttp.ClientSession, base: str,
                 params: Mapping[str, str] | None = None) -> None:
        self.session, self.base = session, base.rstrip("/")
        self.params = dict(params or {})  # sent on every call (an API key in the query)

    async def close(self) -> None:
        pass

    async def _send(self, rpc: str, req: Message, headers: Headers,
                    accept: str) -> aiohttp.ClientResponse:
        method = METHODS[rpc]
        route = method.routes[0]
        data = json_format.MessageToDict(req)
        tenant = data.pop("tenant", "")
        path = route.template
        for name in route.path_fields:
            value = str(data.pop(method.request.DESCRIPTOR.fields_by_name[name].json_name, ""))
            path = path.replace(f"{{{name}=*}}", value).replace(f"{{{name}}}", value)
        url = self.base + (f"/{tenant}" if tenant else "") + path
        verb = "POST" if rpc == "SubscribeToTask" else route.verb  # what clients send (§11)
        kwargs: dict[str, Any] = {"headers": {**headers, "Accept": accept}}
        params = list(self.params.items())
        if verb in ("GET", "DELETE"):
            params += [(k, _query(v)) for k, vs in data.items()
                       for v in (vs if isinstance(vs, list) else [vs])]
        else:
            kwargs["json"] = data
        kwargs["params"] = params
        try:
            resp = await self.session.request(verb, url, **kwargs)
            activated.seen(resp.headers.get("A2A-Extensions"))
            return resp
        except DROPPED as exc:
            raise AgentUnreachableError(f"cannot reach {url}: {exc}") from None
        except aiohttp.ClientResponseError as exc:
            raise not_http(url, exc) from None

    async def _raise(self, resp: aiohttp.ClientResponse) -> None:
        try:
            body = await resp.json(content_type=None)
        except (ValueError, aiohttp.ContentTypeError):
            body = None
        finally:
            resp.release()
        err = body.get("error") if isinstance(body, dict) else None
        if not isinstance(err, dict):
            raise http_failure(resp.status, str(resp.url))
        raise from_details(str(err.get("message", "")), err.get("details", []),
                           "UNAVAILABLE" if resp.status == 503 else "")

    async def call(self, rpc: str, req: Message, headers: Headers,
                   retry: bool = False) -> Message:
        resp = await self._send(rpc, req, headers, "application/json")
        if not 200 <= resp.status < 300:  # some 0.3 servers answer a send 201 Created
            await self._raise(resp)
        try:
            body = await resp.json(content_type=None)
        except (ValueError, aiohttp.ContentTypeError):
            raise BadResponseError(f"{resp.url} did not answer JSON") from None
        except DROPPED as exc:
            raise AgentUnreachableError(f"the connection dropped: {exc}") from None
        finally:
            resp.release()
        return self._parse_answer(rpc, body)

    def _parse_answer(self, rpc: str, body: Any) -> Message:
        return _parse(body, METHODS[rpc].response)

    def _parse_event(self, body: Any) -> StreamResponse:
        return _parse(body, StreamResponse)  # type: ignore[return-value]

    async def stream(self, rpc: str, req: Message, headers: Headers,
                     retry: bool = False) -> EventStream:
        resp = await self._send(rpc, req, headers, "text/event-stream")
        if resp.status != 200:
            await self._raise(resp)
        return EventStream(self._events(resp))

    async def _events(self, resp: aiohttp.ClientResponse) -> AsyncGenerator[Numbered, None]:
        try:
            async for ev_id, name, data in _sse(resp):
                body = json.loads(data)
                if name == "error" and isinstance(body.get("error"), dict):
                    err = body["error"]
                    raise from_details(str(err.get("message", "")), err.get("details", []), "")
                yield _seq(ev_id), self._parse_event(body)
        except DROPPED as exc:
            raise AgentUnreachableError(f"the stream from {resp.url} dropped: {exc}") from None
        finally:
            wire.http_done(resp)
            resp.release()


def _seq(ev_id: str | None) -> int | None:
    return int(ev_id) if ev_id is not None and ev_id.strip().isdigit() else None


def _query(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
