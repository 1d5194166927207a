"""A2A 0.3's protobuf messages (generated/a2a_v03_pb2, package a2a.v1) to and
from 1.0's (generated/a2a_pb2, package lf.a2a.v1), for 0.3's gRPC service
and its HTTP+JSON binding (ProtoJSON of these same messages).

What differs besides names: a message's parts are its `content`; a file part
is `{file_with_uri | file_with_bytes, mime_type, name}` where 1.0 has
`url | raw` with `media_type` and `filename`; a data part holds an object
(other JSON values are wrapped as `{"value": ...}` on the way out); resource
names (`tasks/{id}`, `tasks/{id}/pushNotificationConfigs/{config}`) where 1.0
has ids; `blocking` where 1.0 has `return_immediately`; push authentication
with a list of `schemes` where 1.0 has one; `final` on status updates.
Enum numbers are the same in both; only CANCELED is spelled CANCELLED in 0.3.

`file_with_bytes` holds the content's base64 text, not the content: that is
what the official 0.3 SDK writes and reads there (its JSON field is a base64
string, and it puts that string's bytes in the proto field), so its peers
must too. Read back, bytes that are not base64 are taken as the content
itself (a peer that reads the field as the proto declares it).
"""

from __future__ import annotations

import base64
import binascii

from google.protobuf.struct_pb2 import Struct

from a2a_grpc.core.states import SETTLED
from a2a_grpc.generated import a2a_pb2 as v1
from a2a_grpc.generated import a2a_v03_pb2 as v03
from a2a_grpc.legacy import json03
from a2a_grpc.legacy.json03 import invalid

TASKS = "tasks/"
CONFIGS = "/pushNotificationConfigs/"


def task_id_of(name: str, where: str = "name") -> str:
    """`tasks/{id}` -> id (a bare id is taken as it is)."""
    task_id = name.removeprefix(TASKS)
    if not task_id or "/" in task_id:
        raise invalid(where, f"must be tasks/{{id}}, got {name!r}")
    return task_id


def config_name_of(name: str, where: str = "name") -> tuple[str, str]:
    """`tasks/{id}/pushNotificationConfigs/{config}` -> (task id, config id)."""
    task, sep, config = name.removeprefix(TASKS).partition(CONFIGS)
    if not sep or not task or not config or "/" in task or "/" in config:
        raise invalid(where, f"must be tasks/{{id}}/pushNotificationConfigs/{{configId}}, "
                          f"got {name!r}")
    return task, config


# -- in: 0.3 -> 1.0 --


def part_in(p: v03.Part) -> v1.Part:
    out = v1.Part()
    kind = p.WhichOneof("part")
    if kind == "text":
        out.text = p.text
    elif kind == "file":
        f = p.file
        if f.WhichOneof("file") == "file_with_bytes":
            out.raw = _content(f.file_with_bytes)
        else:
            out.url = f.file_with_uri
        out.media_type, out.filename = f.mime_type, f.name
    elif kind == "data":
        out.data.struct_value.CopyFrom(p.data.data)
    if p.HasField("metadata"):
        out.metadata.CopyFrom(p.metadata)
    return out


def _content(field: bytes) -> bytes:
    try:
        return base64.b64decode(field, validate=True)
    except (binascii.Error, ValueError):
        return field


def message_in(m: v03.Message) -> v1.Message:
    out = v1.Message(message_id=m.message_id, context_id=m.context_id, task_id=m.task_id,
                     role=m.role, extensions=m.extensions)  # type: ignore[arg-type]
    out.parts.extend(part_in(p) for p in m.content)
    if m.HasField("metadata"):
        out.metadata.CopyFrom(m.metadata)
    return out


def push_config_in(c: v03.PushNotificationConfig, task_id: str, config_id: str = ""
                   ) -> v1.TaskPushNotificationConfig:
    """Named as json03.config_id says, like on 0.3's JSON-RPC binding."""
    out = v1.TaskPushNotificationConfig(task_id=task_id,
                                        id=json03.config_id(config_id or c.id, task_id),
                                        url=c.url, token=c.token)
    if c.HasField("authentication"):
        schemes = c.authentication.schemes
        out.authentication.scheme = schemes[0] if schemes else ""
        out.authentication.credentials = c.authentication.credentials
    return out


def status_in(s: v03.TaskStatus) -> v1.TaskStatus:
    out = v1.TaskStatus(state=s.state)  # type: ignore[arg-type]  # same numbers
    if s.HasField("update"):
        out.message.CopyFrom(message_in(s.update))
    if s.HasField("timestamp"):
        out.timestamp.CopyFrom(s.timestamp)
    return out


def artifact_in(a: v03.Artifact) -> v1.Artifact:
    out = v1.Artifact(artifact_id=a.artifact_id, name=a.name, description=a.description,
                      extensions=a.extensions)
    out.parts.extend(part_in(p) for p in a.parts)
    if a.HasField("metadata"):
        out.metadata.CopyFrom(a.metadata)
    return out


def task_in(t: v03.Task) -> v1.Task:
    out = v1.Task(id=t.id, context_id=t.context_id, status=status_in(t.status))
    out.artifacts.extend(artifact_in(a) for a in t.artifacts)
    out.history.extend(message_in(m) for m in t.history)
    if t.HasField("metadata"):
        out.metadata.CopyFrom(t.metadata)
    return out


def sent_of(r: v03.SendMessageResponse) -> v1.SendMessageResponse:
    """A 0.3 server's answer to a send (what a client reads)."""
    if r.HasField("msg"):
        return v1.SendMessageResponse(message=message_in(r.msg))
    return v1.SendMessageResponse(task=task_in(r.task))


def event_of(e: v03.StreamResponse) -> v1.StreamResponse:
    """A 0.3 server's stream event (what a client reads)."""
    kind = e.WhichOneof("payload")
    if kind == "task":
        return v1.StreamResponse(task=task_in(e.task))
    if kind == "msg":
        return v1.StreamResponse(message=message_in(e.msg))
    out = v1.StreamResponse()
    if kind == "status_update":
        u = e.status_update
        out.status_update.task_id, out.status_update.context_id = u.task_id, u.context_id
        out.status_update.status.CopyFrom(status_in(u.status))
        if u.HasField("metadata"):
            out.status_update.metadata.CopyFrom(u.metadata)
    elif kind == "artifact_update":
        a, to = e.artifact_update, out.artifact_update
        to.task_id, to.context_id, to.append, to.last_chunk = (
            a.task_id, a.context_id, a.append, a.last_chunk)
        to.artifact.CopyFrom(artifact_in(a.artifact))
        if a.HasField("metadata"):
            to.metadata.CopyFrom(a.metadata)
    return out


def push_config_of(c: v03.TaskPushNotificationConfig) -> v1.TaskPushNotificationConfig:
    """A 0.3 server's push config (what a client reads)."""
    task_id, config_id = config_name_of(c.name)
    return push_config_in(c.push_notification_config, task_id, config_id)


def send_in(r: v03.SendMessageRequest) -> v1.SendMessageRequest:
    out = v1.SendMessageRequest(message=message_in(r.request))
    if r.HasField("configuration"):
        c, to = r.configuration, out.configuration
        to.accepted_output_modes.extend(c.accepted_output_modes)
        if c.history_length:  # proto3 can't tell 0 from unset: 0.3 servers read it as unset
            to.history_length = c.history_length
        to.return_immediately = not c.blocking
        if c.HasField("push_notification"):
            to.task_push_notification_config.CopyFrom(
                push_config_in(c.push_notification, r.request.task_id))
            to.task_push_notification_config.ClearField("task_id")
            if not c.push_notification.id:
                to.task_push_notification_config.ClearField("id")
    if r.HasField("metadata"):
        out.metadata.CopyFrom(r.metadata)
    return out


# -- out: 1.0 -> 0.3 --


def part_out(p: v1.Part) -> v03.Part:
    out = v03.Part()
    kind = p.WhichOneof("content")
    if kind == "text":
        out.text = p.text
    elif kind in ("raw", "url"):
        if kind == "raw":
            out.file.file_with_bytes = base64.b64encode(p.raw)  # see the module's doc
        else:
            out.file.file_with_uri = p.url
        out.file.mime_type, out.file.name = p.media_type, p.filename
    elif kind == "data":
        if p.data.WhichOneof("kind") == "struct_value":
            out.data.data.CopyFrom(p.data.struct_value)
        else:
            out.data.data.CopyFrom(Struct(fields={"value": p.data}))
    if p.HasField("metadata"):
        out.metadata.CopyFrom(p.metadata)
    return out


def message_out(m: v1.Message) -> v03.Message:
    out = v03.Message(message_id=m.message_id, context_id=m.context_id, task_id=m.task_id,
                      role=m.role, extensions=m.extensions)  # type: ignore[arg-type]
    out.content.extend(part_out(p) for p in m.parts)
    if m.HasField("metadata"):
        out.metadata.CopyFrom(m.metadata)
    return out


def status_out(s: v1.TaskStatus) -> v03.TaskStatus:
    out = v03.TaskStatus(state=s.state)  # type: ignore[arg-type]  # same numbers
    if s.HasField("message"):
        out.update.CopyFrom(message_out(s.message))
    if s.HasField("timestamp"):
        out.timestamp.CopyFrom(s.timestamp)
    return out


def artifact_out(a: v1.Artifact) -> v03.Artifact:
    out = v03.Artifact(artifact_id=a.artifact_id, name=a.name, description=a.description,
                       extensions=a.extensions)
    out.parts.extend(part_out(p) for p in a.parts)
    if a.HasField("metadata"):
        out.metadata.CopyFrom(a.metadata)
    return out


def task_out(t: v1.Task) -> v03.Task:
    out = v03.Task(id=t.id, context_id=t.context_id, status=status_out(t.status))
    out.artifacts.extend(artifact_out(a) for a in t.artifacts)
    out.history.extend(message_out(m) for m in t.history)
    if t.HasField("metadata"):
        out.metadata.CopyFrom(t.metadata)
    return out


def sent_out(r: v1.SendMessageResponse) -> v03.SendMessageResponse:
    if r.HasField("message"):
        return v03.SendMessageResponse(msg=message_out(r.message))
    return v03.SendMessageResponse(task=task_out(r.task))


def event_out(e: v1.StreamResponse) -> v03.StreamResponse:
    kind = e.WhichOneof("payload")
    if kind == "task":
        return v03.StreamResponse(task=task_out(e.task))
    if kind == "message":
        return v03.StreamResponse(msg=message_out(e.message))
    if kind == "status_update":
        u = e.status_update
        final = u.status.state in SETTLED
        out = v03.StreamResponse(status_update=v03.TaskStatusUpdateEvent(
            task_id=u.task_id, context_id=u.context_id, status=status_out(u.status),
            final=final))
        if u.HasField("metadata"):
            out.status_update.metadata.CopyFrom(u.metadata)
        return out
    a = e.artifact_update
    out = v03.StreamResponse(artifact_update=v03.TaskArtifactUpdateEvent(
        task_id=a.task_id, context_id=a.context_id, artifact=artifact_out(a.artifact),
        append=a.append, last_chunk=a.last_chunk))
    if a.HasField("metadata"):
        out.artifact_update.metadata.CopyFrom(a.metadata)
    return out


def push_config_out(c: v1.TaskPushNotificationConfig) -> v03.TaskPushNotificationConfig:
    inner = v03.PushNotificationConfig(id=c.id, url=c.url, token=c.token)
    if c.HasField("authentication"):
        auth = c.authentication
        inner.authentication.schemes.extend([auth.scheme] if auth.scheme else [])
        inner.authentication.credentials = auth.credentials
    return v03.TaskPushNotificationConfig(name=f"{TASKS}{c.task_id}{CONFIGS}{c.id}",
                                          push_notification_config=inner)


def send_out(r: v1.SendMessageRequest) -> v03.SendMessageRequest:
    """A 1.0 send as a client asks a 0.3 server."""
    out = v03.SendMessageRequest(request=message_out(r.message))
    c, to = r.configuration, out.configuration
    to.accepted_output_modes.extend(c.accepted_output_modes)
    if c.HasField("history_length"):
        to.history_length = c.history_length
    to.blocking = not c.return_immediately
    if c.HasField("task_push_notification_config"):
        push = c.task_push_notification_config
        to.push_notification.CopyFrom(push_config_out(push).push_notification_config)
    if r.HasField("metadata"):
        out.metadata.CopyFrom(r.metadata)
    return out
