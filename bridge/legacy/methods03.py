"""A2A 0.3 JSON-RPC methods, each a 1.0 RPC with its params and result translated
(which dialect serves a call: bridge/legacy/routing.py). `message.send` is the
spelling of the lifecycle pages in the seed documents."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from a2a_grpc.cards.card03 import with_v03_fields
from a2a_grpc.legacy import json03 as v03
from a2a_grpc.legacy.json03 import Json, as_object, invalid

VERSION = "0.3"


@dataclass(frozen=True, slots=True)
class LegacyMethod:
    rpc: str  # the 1.0 RPC that serves it
    params: Callable[[Json], Json]  # its params -> the 1.0 request, as ProtoJSON
    result: Callable[[Json], Any]  # the 1.0 response, as ProtoJSON -> its result
    version: str = VERSION  # the dialect it belongs to
    client_task_ids: bool = False  # a message may name a task it creates (first draft)
    # Streams whose events are rendered with state of their own (made per stream).
    per_stream: Callable[[], Callable[[Json], Any]] | None = None

    def renderer(self) -> Callable[[Json], Any]:
        return self.per_stream() if self.per_stream is not None else self.result


def _send(p: Json) -> Json:
    out: Json = {"message": v03.message_in(p.get("message"))}
    if p.get("configuration") is not None:
        out["configuration"] = v03.configuration_in(p["configuration"])
    if p.get("metadata") is not None:
        out["metadata"] = p["metadata"]
    return out


def _sent(r: Json) -> Json:
    return v03.task_out(r["task"]) if "task" in r else v03.message_out(r.get("message", {}))


def _task_id(p: Json) -> Json:
    if not isinstance(p.get("id"), str):
        raise invalid("id", "is the task's id (a string)")
    out: Json = {"id": p["id"]}
    if "historyLength" in p:
        out["historyLength"] = p["historyLength"]
    return out


def _config_set(p: Json) -> Json:
    config = v03.push_config_in(as_object(p.get("pushNotificationConfig"),
                                        "pushNotificationConfig"))
    task_id = p.get("taskId", "")
    return {"taskId": task_id, **config, "id": v03.config_id(config.get("id"), task_id)}


def _config_of(p: Json) -> Json:
    task_id = _task_id(p)["id"]
    return {"taskId": task_id, "id": v03.config_id(p.get("pushNotificationConfigId"), task_id)}


def _configs(r: Json) -> list[Json]:
    return [v03.push_config_out(c) for c in r.get("configs", [])]


def _card(r: Json) -> Json:
    with_v03_fields(r)  # served as the public card is: 1.0 fields with the 0.3 ones beside
    return r


_SEND = LegacyMethod("SendMessage", _send, _sent)
METHODS: dict[str, LegacyMethod] = {
    "message/send": _SEND,
    "message.send": _SEND,
    "message/stream": LegacyMethod("SendStreamingMessage", _send, v03.event_out),
    "tasks/get": LegacyMethod("GetTask", _task_id, v03.task_out),
    "tasks/cancel": LegacyMethod("CancelTask", lambda p: {"id": _task_id(p)["id"]},
                                 v03.task_out),
    "tasks/resubscribe": LegacyMethod("SubscribeToTask", lambda p: {"id": _task_id(p)["id"]},
                                      v03.event_out),
    "tasks/pushNotificationConfig/set": LegacyMethod(
        "CreateTaskPushNotificationConfig", _config_set, v03.push_config_out),
    "tasks/pushNotificationConfig/get": LegacyMethod(
        "GetTaskPushNotificationConfig", _config_of, v03.push_config_out),
    "tasks/pushNotificationConfig/list": LegacyMethod(
        "ListTaskPushNotificationConfigs", lambda p: {"taskId": _task_id(p)["id"]}, _configs),
    "tasks/pushNotificationConfig/delete": LegacyMethod(
        "DeleteTaskPushNotificationConfig", _config_of, lambda r: None),
    "agent/getAuthenticatedExtendedCard": LegacyMethod(
        "GetExtendedAgentCard", lambda p: {}, _card),
}
