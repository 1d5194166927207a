"""A2A 0.3's HTTP+JSON binding: `/v1/...` beside 1.0's routes, on the same base URL.

The paths are 0.3's (its specification §3.5.6, and what the official 0.3
clients call); bodies and answers are ProtoJSON of 0.3's proto messages
(proto/a2a_v03.proto), served through V03Service like 0.3's gRPC service:
- POST /v1/message:send, POST /v1/message:stream (SSE of StreamResponse)
- GET /v1/tasks/{id}?historyLength=N, POST /v1/tasks/{id}:cancel,
  GET or POST /v1/tasks/{id}:subscribe (SSE)
- POST /v1/tasks/{id}/pushNotificationConfigs (a
  CreateTaskPushNotificationConfigRequest, or the bare config),
  GET /v1/tasks/{id}/pushNotificationConfigs (a JSON array, as 0.3's
  specification writes it), GET and DELETE .../pushNotificationConfigs/{configId}
- GET /v1/card: the card (extended where the agent has one) as JSON, with
  the 0.3 fields beside the 1.0 ones, as at /.well-known/agent-card.json.
Errors: `{"code", "message"}`, the code being the JSON-RPC one 0.3 defines,
with the HTTP status 0.3's servers (the official SDK's 0.3 line) answer it
with where that differs from 1.0's §5.4 table (legacy/http03.py); an error
once a stream has begun is its last event, the same object. A tenant named `v1` is not reachable by
1.0's `/{tenant}/...` routes: these paths take it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from google.protobuf.message import Message

from a2a_grpc.bridge import codec, sse
from a2a_grpc.bridge.calls import call_context, note, refusal_headers
from a2a_grpc.bridge.face import Answer, BodyTooLarge, Handler, Incoming, Response
from a2a_grpc.bridge.rest import query_fields
from a2a_grpc.cards.card03 import with_v03_fields
from a2a_grpc.core.errors import (
    InvalidRequestError,
    public,
    wire_of,
)
from a2a_grpc.generated import a2a_v03_pb2 as v03
from a2a_grpc.legacy import proto03
from a2a_grpc.legacy.http03 import status_of
from a2a_grpc.legacy.service03 import V03Service


def error_body(exc: BaseException) -> dict[str, Any]:
    err = public(exc)
    return {"code": wire_of(err).jsonrpc, "message": err.message}


def error_response(exc: BaseException, http_status: int | None = None) -> Answer:
    err = public(exc)
    status = http_status or status_of(err)
    return codec.json_response(error_body(err), "application/json", status, refusal_headers(exc))


class RestV03Endpoints:
    def __init__(self, service: V03Service, *, max_body: int, max_depth: int,
                 keepalive: float) -> None:
        self.v03 = service
        self.max_body = max_body
        self.max_depth = max_depth
        self.keepalive = keepalive

    def routes(self, prefix: str = "") -> list[tuple[str, str, Handler]]:
        base, task = f"{prefix}/v1", f"{prefix}/v1/tasks/{{id:[^/:]+}}"
        configs = f"{task}/pushNotificationConfigs"
        s = self.v03
        return [
            ("POST", f"{base}/message:send", self._unary(s.send_message, self._send)),
            ("POST", f"{base}/message:stream", self._stream(s.send_streaming_message, self._send)),
            ("GET", task, self._unary(s.get_task, self._get)),
            ("POST", f"{task}:cancel", self._unary(s.cancel_task, self._named(
                v03.CancelTaskRequest))),
            *((verb, f"{task}:subscribe", self._stream(s.task_subscription, self._named(
                v03.TaskSubscriptionRequest))) for verb in ("GET", "POST")),
            ("POST", configs, self._unary(s.create_task_push_notification_config, self._create)),
            ("GET", configs, self._unary(s.list_task_push_notification_config, self._list,
                                         render=lambda r: [codec.to_dict(c) for c in r.configs])),
            ("GET", f"{configs}/{{config:[^/]+}}", self._unary(
                s.get_task_push_notification_config,
                self._config(v03.GetTaskPushNotificationConfigRequest))),
            ("DELETE", f"{configs}/{{config:[^/]+}}", self._unary(
                s.delete_task_push_notification_config,
                self._config(v03.DeleteTaskPushNotificationConfigRequest))),
            ("GET", f"{base}/card", self._card),
        ]

    # -- requests, from path and body --

    async def _body(self, request: Incoming) -> Any:
        raw = await request.read()
        return codec.loads(raw, self.max_depth) if raw.strip() else {}

    async def _send(self, request: Incoming) -> Message:
        return codec.parse(await self._body(request), v03.SendMessageRequest, where="body")

    async def _get(self, request: Incoming) -> Message:
        req = codec.parse(query_fields(request, v03.GetTaskRequest), v03.GetTaskRequest,
                          where="query parameters")
        req.name = proto03.TASKS + request.match["id"]  # type: ignore[attr-defined]
        return req

    @staticmethod
    def _named(cls: type[Message]) -> Callable[[Incoming], Awaitable[Message]]:
        async def make(request: Incoming) -> Message:
            return cls(name=proto03.TASKS + request.match["id"])

        return make

    @staticmethod
    def _config(cls: type[Message]) -> Callable[[Incoming], Awaitable[Message]]:
        async def make(request: Incoming) -> Message:
            name = (f"{proto03.TASKS}{request.match['id']}{proto03.CONFIGS}"
                    f"{request.match['config']}")
            return cls(name=name)

        return make

    async def _create(self, request: Incoming) -> Message:
        body = await self._body(request)
        if isinstance(body, dict) and not {"config", "parent", "configId"} & body.keys():
            body = {"config": body}  # the bare config, as the proto's `body: "config"` has it
        req = codec.parse(body, v03.CreateTaskPushNotificationConfigRequest, where="body")
        req.parent = proto03.TASKS + request.match["id"]  # type: ignore[attr-defined]
        return req

    async def _list(self, request: Incoming) -> Message:
        return v03.ListTaskPushNotificationConfigRequest(
            parent=proto03.TASKS + request.match["id"])

    # -- answers --

    def _unary(self, call: Callable[..., Awaitable[Message]],
               make: Callable[[Incoming], Awaitable[Message]],
               render: Callable[[Any], Any] = codec.to_dict) -> Handler:
        async def handle(request: Incoming) -> Response:
            try:
                answer = await call(await make(request), call_context(request))
            except BodyTooLarge:
                return self._too_large()
            except Exception as exc:
                note(exc, f"REST 0.3 {request.path}")
                return error_response(exc)
            return codec.json_response(render(answer), "application/json")

        return handle

    def _stream(self, call: Callable[..., Awaitable[Any]],
                make: Callable[[Incoming], Awaitable[Message]]) -> Handler:
        async def handle(request: Incoming) -> Response:
            try:
                events = await call(await make(request), call_context(request))
            except BodyTooLarge:
                return self._too_large()
            except Exception as exc:
                note(exc, f"REST 0.3 {request.path}")
                return error_response(exc)
            return sse.stream(
                events, render=lambda ev, _: codec.to_dict(proto03.event_out(ev)),
                render_error=lambda exc: (_noted(exc, request), None),
                keepalive=self.keepalive)

        return handle

    async def _card(self, request: Incoming) -> Answer:
        try:
            card = await self.v03.agent_card(call_context(request))
        except Exception as exc:
            note(exc, "REST 0.3 card")
            return error_response(exc)
        data = codec.to_dict(card)
        with_v03_fields(data)
        return codec.json_response(data, "application/json")

    def _too_large(self) -> Answer:
        return error_response(InvalidRequestError(
            f"request body over {self.max_body} bytes; send less (e.g. files as URLs)"),
            http_status=413)


def _noted(exc: BaseException, request: Incoming) -> dict[str, Any]:
    note(exc, f"REST 0.3 {request.path} stream")
    return error_body(exc)
