"""Calling an A2A 0.3 agent: the client's transports for an interface whose
`protocolVersion` is 0.3 (a 0.3 card: legacy/card03.card_in).

The client speaks 1.0 to its caller whatever the agent speaks: each
transport here takes the same 1.0 request messages, asks in 0.3 and answers
with the 1.0 messages, translated by legacy/ (the server's own 0.3 layer,
used the other way round):
- JSON-RPC (v03_jsonrpc.py): 0.3's method names (`message/send`,
  `message/stream`, `tasks/get`, `tasks/cancel`, `tasks/resubscribe`,
  `tasks/pushNotificationConfig/*`) and its JSON (`kind`, lower-case states);
- HTTP+JSON: 0.3's `/v1/...` paths with ProtoJSON of 0.3's messages;
- gRPC: 0.3's service (`a2a.v1.A2AService`).
0.3 has no ListTasks (nor an extended card call here): UnsupportedOperation.
Errors come back as the A2A error types, by their 0.3 JSON-RPC code (JSON),
or by the gRPC status (0.3 servers send no ErrorInfo).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any

import aiohttp
import grpc
from google.protobuf import json_format
from google.protobuf.empty_pb2 import Empty
from google.protobuf.message import Message

from a2a_grpc.client.errors import (
    AgentUnreachableError,
    BadResponseError,
    from_details,
    from_jsonrpc,
    not_http,
)
from a2a_grpc.client.grpc_transport import GrpcTransport
from a2a_grpc.client.transports import (
    DROPPED,
    Headers,
    RestTransport,
    http_failure,
)
from a2a_grpc.core import errors
from a2a_grpc.core.errors import (
    A2AError,
    InvalidParamsError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_grpc.core.stream import EventStream, Numbered
from a2a_grpc.generated import a2a_pb2 as v1
from a2a_grpc.generated import a2a_v03_pb2 as v03
from a2a_grpc.generated.a2a_v03_pb2_grpc import A2AServiceStub as V03Stub
from a2a_grpc.legacy import proto03
from a2a_grpc.legacy.http03 import error_of


def unsupported(rpc: str) -> UnsupportedOperationError:
    return UnsupportedOperationError(f"{rpc} is not an operation of A2A 0.3, which this agent "
                                     "speaks")


def _name(req: Any) -> str:
    return f"{proto03.TASKS}{req.task_id}{proto03.CONFIGS}{req.id}"


# -- 0.3's protos (gRPC and HTTP+JSON) --

def request_03(rpc: str, req: Any) -> Message:
    """A 1.0 request as 0.3's proto has it."""
    if rpc in ("SendMessage", "SendStreamingMessage"):
        return proto03.send_out(req)
    if rpc == "GetTask":
        return v03.GetTaskRequest(name=proto03.TASKS + req.id, history_length=req.history_length)
    if rpc == "CancelTask":
        return v03.CancelTaskRequest(name=proto03.TASKS + req.id)
    if rpc == "SubscribeToTask":
        return v03.TaskSubscriptionRequest(name=proto03.TASKS + req.id)
    if rpc == "CreateTaskPushNotificationConfig":
        return v03.CreateTaskPushNotificationConfigRequest(
            parent=proto03.TASKS + req.task_id, config_id=req.id,
            config=proto03.push_config_out(req))
    if rpc in ("GetTaskPushNotificationConfig", "DeleteTaskPushNotificationConfig"):
        cls = (v03.GetTaskPushNotificationConfigRequest if rpc.startswith("Get")
               else v03.DeleteTaskPushNotificationConfigRequest)
        return cls(name=_name(req))
    if rpc == "ListTaskPushNotificationConfigs":
        return v03.ListTaskPushNotificationConfigRequest(parent=proto03.TASKS + req.task_id)
    raise unsupported(rpc)


def answer_of(rpc: str, answer: Any) -> Message:
    """A 0.3 server's proto answer as 1.0's."""
    if rpc == "SendMessage":
        return proto03.sent_of(answer)
    if rpc in ("GetTask", "CancelTask"):
        return proto03.task_in(answer)
    if rpc in ("CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig"):
        return proto03.push_config_of(answer)
    if rpc == "ListTaskPushNotificationConfigs":
        return v1.ListTaskPushNotificationConfigsResponse(
            configs=[proto03.push_config_of(c) for c in answer.configs])
    return Empty()


def translated(convert: Callable[[], Message]) -> Message:
    try:
        return convert()
    except (InvalidParamsError, ValueError, KeyError, TypeError) as exc:
        raise BadResponseError(f"the 0.3 agent's answer does not read as 0.3: {exc}") from None


class Grpc03Transport(GrpcTransport):
    """0.3's gRPC service, on the channel GrpcTransport makes."""

    def __init__(self, target: str, credentials: grpc.ChannelCredentials | None = None,
                 record: bool = False) -> None:
        super().__init__(target, credentials, record)
        self._v03 = V03Stub(self.channel)

    def _error(self, err: grpc.aio.AioRpcError) -> A2AError:
        # 0.3 servers send no ErrorInfo: the official SDK's details start with the
        # error's name ("TaskNotCancelableError: ..."), the same names as ours.
        details = err.details() or ""
        name, _, message = details.partition(": ")
        cls = getattr(errors, name, None) if name.endswith("Error") else None
        if isinstance(cls, type) and issubclass(cls, A2AError) and cls in errors.WIRE:
            return cls(message or None)
        code = err.code()
        if code == grpc.StatusCode.NOT_FOUND:
            return TaskNotFoundError(details or None)
        if code == grpc.StatusCode.UNIMPLEMENTED:
            return UnsupportedOperationError(details or None)
        return super()._error(err)

    async def call(self, rpc: str, req: Message, headers: Headers,
                   retry: bool = False) -> Message:
        method = {"ListTaskPushNotificationConfigs": "ListTaskPushNotificationConfig"}.get(
            rpc, rpc)
        request = request_03(rpc, req)  # UnsupportedOperation for what 0.3 has not
        await self._reconnected(retry)
        try:
            answer = await getattr(self._v03, method)(
                request, metadata=self._metadata(headers), wait_for_ready=retry)
        except grpc.aio.AioRpcError as err:
            raise self._error(err) from None
        return translated(lambda: answer_of(rpc, answer))

    async def stream(self, rpc: str, req: Message, headers: Headers,
                     retry: bool = False) -> EventStream:
        method = "TaskSubscription" if rpc == "SubscribeToTask" else rpc
        request = request_03(rpc, req)
        await self._reconnected(retry)
        call = getattr(self._v03, method)(request, metadata=self._metadata(headers),
                                          wait_for_ready=retry)
        try:
            first = await call.read()
        except grpc.aio.AioRpcError as err:
            raise self._error(err) from None
        return EventStream(self._events(call, first), numbered=False)

    async def _events(self, call: Any, first: Any) -> AsyncGenerator[Numbered, None]:
        try:
            event = first
            while event is not grpc.aio.EOF:
                yield None, translated(lambda e=event: proto03.event_of(e))  # type: ignore[misc]
                event = await call.read()
        except grpc.aio.AioRpcError as err:
            raise self._error(err) from None
        finally:
            call.cancel()


class Rest03Transport(RestTransport):
    """0.3's HTTP+JSON: `/v1/...` under the interface's URL, ProtoJSON of 0.3's messages."""

    def _route(self, rpc: str, req: Any) -> tuple[str, str, Message | None]:
        """(verb, path, body)."""
        task = f"/v1/tasks/{getattr(req, 'id', '')}"
        configs = f"/v1/tasks/{getattr(req, 'task_id', '')}/pushNotificationConfigs"
        routes: dict[str, tuple[str, str, Message | None]] = {
            "SendMessage": ("POST", "/v1/message:send", None),
            "SendStreamingMessage": ("POST", "/v1/message:stream", None),
            "GetTask": ("GET", task, None), "CancelTask": ("POST", f"{task}:cancel", None),
            "SubscribeToTask": ("GET", f"{task}:subscribe", None),
            "CreateTaskPushNotificationConfig": ("POST", configs, None),
            "GetTaskPushNotificationConfig": ("GET", f"{configs}/{getattr(req, 'id', '')}", None),
            "ListTaskPushNotificationConfigs": ("GET", configs, None),
            "DeleteTaskPushNotificationConfig": (
                "DELETE", f"{configs}/{getattr(req, 'id', '')}", None),
        }
        if rpc not in routes:
            raise unsupported(rpc)
        verb, path, _ = routes[rpc]
        return verb, path, request_03(rpc, req) if verb == "POST" else None

    async def _send(self, rpc: str, req: Message, headers: Headers,
                    accept: str) -> Any:
        verb, path, body = self._route(rpc, req)
        params = list(self.params.items())
        if isinstance(req, v1.GetTaskRequest) and req.HasField("history_length"):
            params.append(("historyLength", str(req.history_length)))
        kwargs: dict[str, Any] = {"headers": {**headers, "Accept": accept}, "params": params}
        if body is not None:
            kwargs["json"] = json_format.MessageToDict(body)
        url = self.base + path
        try:
            return await self.session.request(verb, url, **kwargs)
        except DROPPED as exc:
            raise AgentUnreachableError(f"cannot reach {url}: {exc}") from None
        except aiohttp.ClientResponseError as exc:
            raise not_http(url, exc) from None

    async def _raise(self, resp: Any) -> None:
        try:
            body = await resp.json(content_type=None)
        except ValueError:
            body = None
        finally:
            resp.release()
        if isinstance(body, dict) and isinstance(body.get("code"), int):
            raise from_jsonrpc(body)  # {"code", "message"}: JSON-RPC's code (as ours answer)
        err = body.get("error") if isinstance(body, dict) else None
        if isinstance(err, dict):  # 1.0's google.rpc.Status
            raise from_details(str(err.get("message", "")), err.get("details", []), "")
        message = str(body.get("message", "")) if isinstance(body, dict) else ""
        known = error_of(resp.status, message) if isinstance(body, dict) else None
        raise known or http_failure(resp.status, str(resp.url))  # {"message"}: by its status

    def _parse_answer(self, rpc: str, body: Any) -> Message:
        def convert() -> Message:
            if rpc == "ListTaskPushNotificationConfigs":
                items = body if isinstance(body, list) else body.get("configs", [])
                answer: Any = v03.ListTaskPushNotificationConfigResponse(configs=[
                    json_format.ParseDict(c, v03.TaskPushNotificationConfig(),
                                          ignore_unknown_fields=True) for c in items])
            else:
                answer = json_format.ParseDict(body or {}, _ANSWERS_03[rpc](),
                                               ignore_unknown_fields=True)
            return answer_of(rpc, answer)
        return translated(convert)

    def _parse_event(self, body: Any) -> v1.StreamResponse:
        if isinstance(body, dict) and isinstance(body.get("code"), int) and "kind" not in body:
            raise from_jsonrpc(body)  # 0.3: an error once the stream began is its last event

        def convert() -> Message:
            return proto03.event_of(json_format.ParseDict(body, v03.StreamResponse(),
                                                          ignore_unknown_fields=True))
        event = translated(convert)
        assert isinstance(event, v1.StreamResponse)
        return event


_ANSWERS_03: dict[str, type[Message]] = {
    "SendMessage": v03.SendMessageResponse, "GetTask": v03.Task, "CancelTask": v03.Task,
    "CreateTaskPushNotificationConfig": v03.TaskPushNotificationConfig,
    "GetTaskPushNotificationConfig": v03.TaskPushNotificationConfig,
    "DeleteTaskPushNotificationConfig": Empty,
}
