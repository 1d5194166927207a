"""The first draft of A2A (0.1, the `tasks/*` methods of the protocol README in
the seed documents), each a 1.0 RPC with its params and result translated.

What the draft spells otherwise: `sessionId` for the context; messages with
only a role, parts and metadata (no messageId: one is made); parts with a
`type`; tasks without a `kind`; status events `{id, status, final}` and
artifact events `{id, artifact}` whose artifact carries its `index` (its place
in the task) with `append`/`lastChunk`; push configs `{id, pushNotificationConfig}`.
A client chooses the task id: `tasks/send` with an id that names no task
creates it. The draft let a client reopen a completed task; 1.0 does not, and
says so. States the draft did not have are sent as its nearest: rejected as
failed, auth-required as input-required. Without `historyLength` the draft
sends no history.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from a2a_grpc.bridge.legacy.methods03 import LegacyMethod
from a2a_grpc.core.ids import new_id
from a2a_grpc.legacy import json03 as v03
from a2a_grpc.legacy.json01 import artifact_out, message_out, status_out, task_out
from a2a_grpc.legacy.json03 import Json, as_object, invalid


def _task_id(p: Json) -> str:
    if not isinstance(p.get("id"), str) or not p["id"]:
        raise invalid("id", "is the task's id (a non-empty string)")
    return str(p["id"])


def _history(p: Json) -> Any:
    """The draft's default is no history; any value given is checked by the
    1.0 request's parser (InvalidParams for a wrong type)."""
    value = p.get("historyLength")
    return 0 if value is None else value


def message_in(raw: Any) -> Json:
    m = as_object(raw, "message")
    out = v03.message_in({**m, "messageId": m.get("messageId") or new_id()})
    return out


def _send(p: Json) -> Json:
    task_id = _task_id(p)
    message = {**message_in(p.get("message")), "taskId": task_id}
    if p.get("sessionId"):
        message["contextId"] = p["sessionId"]
    config: Json = {"historyLength": _history(p)}
    if p.get("pushNotification") is not None:
        config["taskPushNotificationConfig"] = {
            **v03.push_config_in(p["pushNotification"], "pushNotification"), "id": task_id}
    out: Json = {"message": message, "configuration": config}
    if p.get("metadata"):
        out["metadata"] = p["metadata"]
    return out


def _sent(r: Json) -> Json:
    if "task" in r:
        return task_out(r["task"])
    reply = r.get("message", {})  # a direct reply: the draft knew only tasks
    return {"id": reply.get("taskId", ""), "sessionId": reply.get("contextId", ""),
            "status": {"state": "completed", "message": message_out(reply)}}


def events_out() -> Callable[[Json], Json]:
    """One stream's events in the draft's shapes: the artifacts' places are
    counted per stream, in the order they first appear."""
    places: dict[str, int] = {}

    def render(e: Json) -> Json:
        if "task" in e:  # the stream's opening snapshot: its status, as an event
            for a in e["task"].get("artifacts", []):
                places.setdefault(a.get("artifactId", ""), len(places))
            return {"id": e["task"].get("id", ""), "status": status_out(e["task"]["status"]),
                    "final": False}
        if "message" in e:
            return {**_sent(e), "final": True}
        if "statusUpdate" in e:
            u = e["statusUpdate"]
            state = v03.STATE_NAMES.get(u.get("status", {}).get("state", ""))
            return {"id": u.get("taskId", ""), "status": status_out(u.get("status", {})),
                    "final": state in v03.SETTLED}
        u = e["artifactUpdate"]
        art = u.get("artifact", {})
        place = places.setdefault(art.get("artifactId", ""), len(places))
        return {"id": u.get("taskId", ""), "artifact": artifact_out(
            art, place, bool(u.get("append")), bool(u.get("lastChunk")))}

    return render


def _push_set(p: Json) -> Json:
    task_id = _task_id(p)
    config = v03.push_config_in(as_object(p.get("pushNotificationConfig"),
                                          "pushNotificationConfig"))
    return {"taskId": task_id, **config, "id": task_id}  # one config per task, as the draft had


def _push_out(c: Json) -> Json:
    inner = v03.push_config_out(c)["pushNotificationConfig"]
    inner.pop("id", None)  # the draft's configs have no id of their own: one per task
    return {"id": c.get("taskId", ""), "pushNotificationConfig": inner}


_SEND = LegacyMethod("SendMessage", _send, _sent, version="0.1", client_task_ids=True)
METHODS: dict[str, LegacyMethod] = {
    "tasks/send": _SEND,
    "tasks/sendSubscribe": LegacyMethod("SendStreamingMessage", _send, _sent, version="0.1",
                                        client_task_ids=True, per_stream=events_out),
    "tasks/get": LegacyMethod("GetTask", lambda p: {"id": _task_id(p),
                                                    "historyLength": _history(p)},
                              task_out, version="0.1"),
    "tasks/cancel": LegacyMethod("CancelTask", lambda p: {"id": _task_id(p)}, task_out,
                                 version="0.1"),
    "tasks/resubscribe": LegacyMethod("SubscribeToTask", lambda p: {"id": _task_id(p)},
                                      _sent, version="0.1", per_stream=events_out),
    "tasks/pushNotification/set": LegacyMethod("CreateTaskPushNotificationConfig", _push_set,
                                               _push_out, version="0.1"),
    "tasks/pushNotification/get": LegacyMethod(
        "GetTaskPushNotificationConfig", lambda p: {"taskId": _task_id(p), "id": _task_id(p)},
        _push_out, version="0.1"),
}
