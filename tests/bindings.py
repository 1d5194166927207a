"""One client interface over the three bindings, for parity tests.

Each binding sends the same generated request messages and returns the same
response messages, or raises `CallFailed` with what the binding reported:
the A2A error reason (from ErrorInfo), and the binding's own code. The JSON
clients are plain aiohttp: every byte on the wire is checked here, not by a
client library.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import grpc
from google.protobuf import json_format
from google.protobuf.message import Message

from a2a_grpc.core.methods import METHODS
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated.a2a_pb2_grpc import A2AServiceStub
from tests.grpc_errors import decode


class CallFailed(Exception):
    def __init__(self, reason: str, code: Any, message: str, body: Any = None) -> None:
        super().__init__(f"{reason} ({code}): {message}")
        self.reason, self.code, self.message, self.body = reason, code, message, body


@dataclass
class Event:
    id: str | None
    data: Any
    name: str | None = None


def parse_sse(text: str) -> tuple[list[Event], list[str]]:
    """Events and comment lines of an SSE body (W3C rules, enough for tests)."""
    events, comments = [], []
    data: list[str] = []
    ev_id = name = None
    for line in text.split("\n"):
        if line == "":
            if data:
                events.append(Event(ev_id, json.loads("\n".join(data)), name))
            data, ev_id, name = [], None, None
        elif line.startswith(":"):
            comments.append(line)
        else:
            key, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if key == "data":
                data.append(value)
            elif key == "id":
                ev_id = value
            elif key == "event":
                name = value
    return events, comments


def _reason(details: list[dict[str, Any]]) -> str:
    for d in details:
        if d.get("@type", "").endswith("google.rpc.ErrorInfo"):
            assert d["domain"] == "a2a-protocol.org"
            return str(d["reason"])
    return ""


@dataclass
class Binding:
    name: str
    headers: dict[str, str] = field(default_factory=dict)
    last_headers: dict[str, str] = field(default_factory=dict)  # of the last HTTP answer

    async def call(self, rpc: str, req: Message) -> Message:
        raise NotImplementedError

    async def stream(self, rpc: str, req: Message) -> list[pb.StreamResponse]:
        raise NotImplementedError


class GrpcBinding(Binding):
    def __init__(self, channel: grpc.aio.Channel, headers: Mapping[str, str] | None = None):
        super().__init__("grpc", dict(headers or {}))
        self.stub = A2AServiceStub(channel)

    def _md(self) -> list[tuple[str, str]]:
        return [(k.lower(), v) for k, v in self.headers.items()]

    async def call(self, rpc: str, req: Message) -> Message:
        try:
            result: Message = await getattr(self.stub, rpc)(req, metadata=self._md())
            return result
        except grpc.aio.AioRpcError as err:
            seen = decode(err)
            raise CallFailed(seen.reason, seen.code, seen.message) from None

    async def stream(self, rpc: str, req: Message) -> list[pb.StreamResponse]:
        out: list[pb.StreamResponse] = []
        try:
            async for event in getattr(self.stub, rpc)(req, metadata=self._md()):
                out.append(event)
        except grpc.aio.AioRpcError as err:
            seen = decode(err)
            raise CallFailed(seen.reason, seen.code, seen.message, out) from None
        return out


class JsonRpcBinding(Binding):
    def __init__(self, session: aiohttp.ClientSession, url: str,
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__("jsonrpc", dict(headers or {}))
        self.session, self.url, self._id = session, url, 0

    async def raw(self, payload: Any) -> aiohttp.ClientResponse:
        return await self.session.post(self.url, json=payload, headers=self.headers)

    async def _send(self, rpc: str, req: Message) -> tuple[aiohttp.ClientResponse, int]:
        self._id += 1
        id_ = self._id
        return await self.raw({"jsonrpc": "2.0", "id": id_, "method": rpc,
                               "params": json_format.MessageToDict(req)}), id_

    @staticmethod
    def _failed(error: dict[str, Any]) -> CallFailed:
        return CallFailed(_reason(error.get("data", [])), error["code"], error["message"], error)

    async def call(self, rpc: str, req: Message) -> Message:
        resp, id_ = await self._send(rpc, req)
        async with resp:
            # JSON-RPC errors are HTTP 200 too, but a refusal for credentials (401/403)
            self.last_headers = dict(resp.headers)
            assert resp.status in (200, 401, 403), await resp.text()
            body = await resp.json()
        assert body["jsonrpc"] == "2.0" and body["id"] == id_
        assert resp.status == 200 or body["error"]["code"] in (-32040, -32041)
        if "error" in body:
            raise self._failed(body["error"])
        return json_format.ParseDict(body["result"], METHODS[rpc].response())

    async def stream(self, rpc: str, req: Message) -> list[pb.StreamResponse]:
        resp, id_ = await self._send(rpc, req)
        async with resp:
            self.last_headers = dict(resp.headers)
            if resp.status in (401, 403):  # refused for its credentials: plain JSON
                raise self._failed((await resp.json())["error"])
            assert resp.status == 200
            if resp.content_type == "application/json":  # refused before the first event
                body = await resp.json()
                assert body["jsonrpc"] == "2.0" and body["id"] == id_ and "result" not in body
                raise self._failed(body["error"])
            assert resp.content_type == "text/event-stream"
            events, _ = parse_sse(await resp.text())
        out: list[pb.StreamResponse] = []
        for ev in events:
            assert ev.data["id"] == id_
            if "error" in ev.data:
                raise CallFailed(_reason(ev.data["error"]["data"]), ev.data["error"]["code"],
                                 ev.data["error"]["message"], out)
            out.append(json_format.ParseDict(ev.data["result"], pb.StreamResponse()))
        return out


class RestBinding(Binding):
    """Requests built from the proto's http rules, like any REST client would."""

    def __init__(self, session: aiohttp.ClientSession, base: str,
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__("rest", dict(headers or {}))
        self.session, self.base = session, base.rstrip("/")

    async def _send(self, rpc: str, req: Message) -> aiohttp.ClientResponse:
        route = METHODS[rpc].routes[0]
        data = json_format.MessageToDict(req)
        path = route.template
        tenant = data.pop("tenant", "")
        for name in route.path_fields:
            json_name = METHODS[rpc].request.DESCRIPTOR.fields_by_name[name].json_name
            value = data.pop(json_name, "")
            path = path.replace(f"{{{name}=*}}", value).replace(f"{{{name}}}", value)
        if tenant:
            path = f"/{tenant}{path}"
        url = self.base + path
        if route.verb in ("GET", "DELETE"):
            params = [(k, _query(v)) for k, vs in data.items()
                      for v in (vs if isinstance(vs, list) else [vs])]
            return await self.session.request(route.verb, url, params=params,
                                              headers=self.headers)
        return await self.session.request(route.verb, url, json=data, headers=self.headers)

    @staticmethod
    def _failed(status: int, body: dict[str, Any]) -> CallFailed:
        err = body["error"]
        assert err["code"] == status
        return CallFailed(_reason(err["details"]), status, err["message"], body)

    async def call(self, rpc: str, req: Message) -> Message:
        async with await self._send(rpc, req) as resp:
            self.last_headers = dict(resp.headers)
            body = await resp.json(content_type=None)
            if resp.status != 200:
                raise self._failed(resp.status, body)
            assert resp.content_type == "application/a2a+json"
        return json_format.ParseDict(body, METHODS[rpc].response())

    async def stream(self, rpc: str, req: Message) -> list[pb.StreamResponse]:
        async with await self._send(rpc, req) as resp:
            self.last_headers = dict(resp.headers)
            if resp.status != 200:
                raise self._failed(resp.status, await resp.json())
            assert resp.content_type == "text/event-stream"
            events, _ = parse_sse(await resp.text())
        out: list[pb.StreamResponse] = []
        for ev in events:
            if ev.name == "error":
                err = ev.data["error"]
                raise CallFailed(_reason(err["details"]), err["code"], err["message"], out)
            out.append(json_format.ParseDict(ev.data, pb.StreamResponse()))
        return out


def _query(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
