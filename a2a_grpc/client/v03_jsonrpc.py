"""Calling an A2A 0.3 agent over JSON-RPC: 0.3's method names and its JSON
(`kind`, lower-case states), translated by legacy/json03 (see v03.py)."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format
from google.protobuf.empty_pb2 import Empty
from google.protobuf.message import Message

from a2a_grpc.client.transports import JsonRpcTransport
from a2a_grpc.client.v03 import translated, unsupported
from a2a_grpc.generated import a2a_pb2 as v1
from a2a_grpc.legacy import json03

__all__ = ["JSONRPC_METHODS", "JsonRpc03Transport"]

Json = dict[str, Any]
JSONRPC_METHODS = {
    "SendMessage": "message/send", "SendStreamingMessage": "message/stream",
    "GetTask": "tasks/get", "CancelTask": "tasks/cancel", "SubscribeToTask": "tasks/resubscribe",
    "CreateTaskPushNotificationConfig": "tasks/pushNotificationConfig/set",
    "GetTaskPushNotificationConfig": "tasks/pushNotificationConfig/get",
    "ListTaskPushNotificationConfigs": "tasks/pushNotificationConfig/list",
    "DeleteTaskPushNotificationConfig": "tasks/pushNotificationConfig/delete",
}


class JsonRpc03Transport(JsonRpcTransport):
    """0.3's JSON-RPC methods, with 0.3's JSON."""

    def _request(self, rpc: str, req: Message) -> tuple[str, Json]:
        if rpc not in JSONRPC_METHODS:
            raise unsupported(rpc)
        d: Json = json_format.MessageToDict(req)
        params: Json
        if rpc in ("SendMessage", "SendStreamingMessage"):
            params = {"message": json03.message_out(d.get("message", {}))}
            if "configuration" in d:
                params["configuration"] = json03.configuration_out(d["configuration"])
            if "metadata" in d:
                params["metadata"] = d["metadata"]
        elif rpc == "CreateTaskPushNotificationConfig":
            params = json03.push_config_out(d)
        elif rpc in ("GetTaskPushNotificationConfig", "DeleteTaskPushNotificationConfig"):
            params = {"id": d.get("taskId", ""), "pushNotificationConfigId": d.get("id", "")}
        elif rpc == "ListTaskPushNotificationConfigs":
            params = {"id": d.get("taskId", "")}
        else:
            params = {k: v for k, v in d.items() if k in ("id", "historyLength")}
        return JSONRPC_METHODS[rpc], params

    def _parse_answer(self, rpc: str, result: Any) -> Message:
        def convert() -> Message:
            if rpc == "SendMessage":
                return json_format.ParseDict(json03.event_in(result), v1.SendMessageResponse())
            if rpc in ("GetTask", "CancelTask"):
                return json_format.ParseDict(json03.task_in(result), v1.Task())
            if rpc == "ListTaskPushNotificationConfigs":
                return v1.ListTaskPushNotificationConfigsResponse(
                    configs=[_config_in(c) for c in result or []])
            if rpc == "DeleteTaskPushNotificationConfig":
                return Empty()
            return _config_in(result)
        return translated(convert)

    def _parse_event(self, result: Any) -> v1.StreamResponse:
        event = translated(
            lambda: json_format.ParseDict(json03.event_in(result), v1.StreamResponse()))
        assert isinstance(event, v1.StreamResponse)
        return event


def _config_in(c: Any) -> v1.TaskPushNotificationConfig:
    task_id = c.get("taskId", "")
    inner = json03.push_config_in(c.get("pushNotificationConfig", {}))
    config = json_format.ParseDict(inner, v1.TaskPushNotificationConfig())
    config.task_id, config.id = task_id, json03.config_id(config.id, task_id)
    return config
