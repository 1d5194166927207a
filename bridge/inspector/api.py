"""The inspector: a page at /inspector to look at an agent and talk to it.

The page (static files in bridge/inspector/, no build step, nothing from a
CDN) calls the agent through this server, with the A2A client of
a2a_grpc.client, so it can use any binding, gRPC included, and another
agent's URL needs no CORS from that agent:

- POST /inspector/api/card {target, headers}: the target's agent card, the
  findings of its check (bridge/inspector/cardcheck.py) and `wire`.
- POST /inspector/api/call {target, binding, headers, method, params}: one
  unary operation; answers {"result": ...} or {"error": {reason, message}},
  with `wire`.
- POST /inspector/api/stream (same body): a streaming operation as
  Server-Sent Events, one StreamResponse (proto JSON) per `data:`, closed by
  an `end` or an `error` event; `wire` events carry the exchanges as they go.

`wire` is every exchange the call made with the agent, raw, with timings
(a2a_grpc.client.wire): the HTTP request and response or SSE frames, the gRPC
method, metadata and messages. The page's headers go on every one of them.

`target` "" is this server. Other targets are reached only for a browser on
this machine (loopback, not through a proxy), unless `remote_targets`:
otherwise the page would let anyone who reaches it make this server call
any address (SSRF).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from google.protobuf import json_format
from google.protobuf.message import Message

from a2a_grpc.bridge.face import Answer, Incoming, Refused, Sink, Streamed
from a2a_grpc.bridge.inspector import cardcheck
from a2a_grpc.bridge.routes import Router
from a2a_grpc.client import A2AClient, ClientOptions, wire
from a2a_grpc.client.cards import fetch_card_json
from a2a_grpc.core.errors import WIRE, A2AError, wire_of
from a2a_grpc.generated import a2a_pb2 as pb

log = logging.getLogger("a2a_grpc.inspector")
STATIC = Path(__file__).parent  # index.html, its scripts and style.css beside it
FILES = {"app.js": "text/javascript", "card.js": "text/javascript", "wire.js": "text/javascript",
         "style.css": "text/css"}
LOOPBACK = frozenset({"127.0.0.1", "::1"})
CLIENTS = 16  # clients kept open (per target, binding and headers)

# method -> (its request message, the client's method, streams?)
METHODS: dict[str, tuple[type[Message], str, bool]] = {
    "SendMessage": (pb.SendMessageRequest, "send_message", False),
    "SendStreamingMessage": (pb.SendMessageRequest, "send_streaming_message", True),
    "GetTask": (pb.GetTaskRequest, "get_task", False),
    "ListTasks": (pb.ListTasksRequest, "list_tasks", False),
    "CancelTask": (pb.CancelTaskRequest, "cancel_task", False),
    "SubscribeToTask": (pb.SubscribeToTaskRequest, "subscribe_to_task", True),
    "ListTaskPushNotificationConfigs": (pb.ListTaskPushNotificationConfigsRequest,
                                        "list_task_push_notification_configs", False),
    "GetTaskPushNotificationConfig": (pb.GetTaskPushNotificationConfigRequest,
                                      "get_task_push_notification_config", False),
}


@dataclass(frozen=True, slots=True)
class Call:
    target: str
    binding: str
    headers: tuple[tuple[str, str], ...]
    method: str
    params: dict[str, Any]


class Inspector:
    def __init__(self, remote_targets: bool = False) -> None:
        self.own_card: Callable[[], pb.AgentCard] = pb.AgentCard
        self.remote_targets = remote_targets
        self._clients: OrderedDict[tuple[str, str, tuple[tuple[str, str], ...]], A2AClient] = \
            OrderedDict()
        self._session: aiohttp.ClientSession | None = None  # fetches cards, recording

    def routes(self, router: Router, own_card: Callable[[], pb.AgentCard]) -> None:
        """Serve the page and its API on `router`, whose card `own_card` gives."""
        self.own_card = own_card
        router.add("GET", "/inspector", self.page)
        router.add("GET", "/inspector/", self.page)
        router.add("GET", "/inspector/{name}", self.static)
        router.add("POST", "/inspector/api/card", self.card)
        router.add("POST", "/inspector/api/call", self.call)
        router.add("POST", "/inspector/api/stream", self.stream)
        router.on_close(self.close)

    async def page(self, request: Incoming) -> Answer:
        """The page, its links made under the path the app is mounted at."""
        page = (STATIC / "index.html").read_bytes().replace(
            b'<base href="/inspector/">', f'<base href="{request.root}/inspector/">'.encode())
        return Answer(200, page, {"Content-Type": "text/html; charset=utf-8",
                                  "Cache-Control": "no-cache"})

    async def static(self, request: Incoming) -> Answer:
        name = request.match["name"]
        if name not in FILES:
            raise Refused(404, f"no inspector file {name!r}")
        return Answer(200, (STATIC / name).read_bytes(), {"Content-Type": FILES[name],
                                                          "Cache-Control": "no-cache"})

    # -- the API the page calls --

    async def card(self, request: Incoming) -> Answer:
        call = await self._parse(request, need_method=False)
        headers = dict(call.headers)
        with wire.recording() as recorder:
            try:
                if not call.target:
                    raw: Any = json_format.MessageToDict(self.own_card())
                else:
                    raw = await fetch_card_json(self._cards(), call.target, headers)
                card = cardcheck.parse(raw)
                found = await cardcheck.findings(raw, card, headers,
                                                 call.target.startswith("https://"))
            except Exception as exc:
                return _json({"error": _error(exc), "wire": _wire(recorder)})
        return _json({"card": json_format.MessageToDict(card),
                                  "signatures": len(card.signatures),
                                  "findings": [f.json() for f in found],
                                  "wire": _wire(recorder)})

    async def call(self, request: Incoming) -> Answer:
        call = await self._parse(request)
        cls, attr, streams = METHODS[call.method]
        if streams:
            raise Refused(400, f"{call.method} streams: use /inspector/api/stream")
        req = _request(cls, call.params)  # bad params: 400, before any call
        with wire.recording() as recorder:
            try:
                client = await self._client(call)
                result = await getattr(client, attr)(req)
            except Exception as exc:
                return _json({"error": _error(exc), "wire": _wire(recorder)})
        return _json({"result": json_format.MessageToDict(result),
                                  "wire": _wire(recorder)})

    async def stream(self, request: Incoming) -> Streamed:
        call = await self._parse(request)
        cls, attr, streams = METHODS[call.method]
        if not streams:
            raise Refused(400, f"{call.method} does not stream: use /inspector/api/call")
        req = _request(cls, call.params)
        changed: dict[int, wire.Exchange] = {}
        sent: dict[int, int] = {}  # exchange id -> frames the page has

        async def produce(sink: Sink) -> None:
            async def flush() -> None:  # what changed on the wire, before the event it brought
                for exchange in changed.values():
                    update = exchange.json(frames_from=sent.get(exchange.id, 0))
                    sent[exchange.id] = len(exchange.frames)
                    await sink.write(f"event: wire\ndata: {json.dumps(update)}\n\n".encode())
                changed.clear()

            with wire.recording(lambda exchange: changed.setdefault(exchange.id, exchange)):
                try:
                    client = await self._client(call)
                    async for event in getattr(client, attr)(req):
                        await flush()
                        data = json.dumps(json_format.MessageToDict(event))
                        await sink.write(f"data: {data}\n\n".encode())
                    await flush()
                    await sink.write(b"event: end\ndata: {}\n\n")
                except (ConnectionResetError, aiohttp.ClientConnectionResetError):
                    pass  # the page went away
                except Exception as exc:
                    with contextlib.suppress(ConnectionResetError):
                        await flush()
                        await sink.write(
                            f"event: error\ndata: {json.dumps(_error(exc))}\n\n".encode())

        return Streamed(produce, 200, {"Content-Type": "text/event-stream",
                                       "Cache-Control": "no-cache"})

    # -- parts --

    async def _parse(self, request: Incoming, need_method: bool = True) -> Call:
        try:
            body = json.loads(await request.read())
            call = Call(str(body.get("target") or "").strip(),
                        str(body.get("binding") or "JSONRPC"),
                        tuple(sorted((str(k), str(v)) for k, v in
                                     (body.get("headers") or {}).items())),
                        str(body.get("method") or ""), dict(body.get("params") or {}))
        except (ValueError, AttributeError, TypeError) as exc:
            raise Refused(400, f"not an inspector request: {exc}") from None
        if need_method and call.method not in METHODS:
            raise Refused(400, f"unknown method {call.method!r}")
        if call.binding not in ("GRPC", "JSONRPC", "HTTP+JSON"):
            raise Refused(400, f"unknown binding {call.binding!r}")
        if call.target and not self.remote_targets and not _local(request):
            raise Refused(403, "the inspector calls other agents only for a browser on this "
                               "machine (serve --inspector-remote-targets)")
        return call

    async def _client(self, call: Call) -> A2AClient:
        key = (call.target, call.binding, call.headers)
        client = self._clients.get(key)
        if client is not None:
            self._clients.move_to_end(key)
            return client
        options = ClientOptions(prefer=[call.binding], headers=dict(call.headers), record=True)
        if call.target:
            client = await A2AClient.connect(call.target, options)
        else:
            client = A2AClient.from_card(self.own_card(), options)
        self._clients[key] = client
        if len(self._clients) > CLIENTS:
            await self._clients.popitem(last=False)[1].close()
        return client

    def _cards(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(trace_configs=[wire.trace_config()])
        return self._session

    async def close(self) -> None:
        while self._clients:
            await self._clients.popitem()[1].close()
        if self._session is not None:
            await self._session.close()


def _local(request: Incoming) -> bool:
    """A browser on this machine: a loopback peer that is not a proxy passing
    on someone else's request (a reverse proxy on this host is loopback too)."""
    forwarded = any(h in request.headers for h in ("Forwarded", "X-Forwarded-For",
                                                    "X-Real-IP"))
    return request.remote in LOOPBACK and not forwarded


def _request(cls: type[Message], params: dict[str, Any]) -> Message:
    try:
        return json_format.ParseDict(params, cls())
    except json_format.ParseError as exc:
        raise Refused(400, f"bad params for {cls.__name__}: {exc}") from None


def _json(data: Any) -> Answer:
    return Answer(200, json.dumps(data).encode(), {"Content-Type": "application/json"})


def _wire(recorder: wire.Recorder) -> list[dict[str, Any]]:
    return [exchange.json() for exchange in recorder.exchanges]


def _error(exc: BaseException) -> dict[str, str]:
    if isinstance(exc, A2AError):
        reason = wire_of(exc).reason if type(exc) in WIRE else type(exc).__name__
        return {"reason": reason, "message": exc.message}
    log.warning("inspector call failed", exc_info=exc)
    return {"reason": type(exc).__name__, "message": str(exc) or type(exc).__name__}
