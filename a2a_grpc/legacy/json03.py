"""A2A 0.3 JSON shapes, to and from 1.0 ProtoJSON (dicts on both sides).

0.3 (and the drafts before it that the seed documents show) differ from 1.0
in spelling, not in meaning, so one handler serves them all once the edge has
translated:
- a `kind` on messages, tasks, parts and events ("message", "task", "text",
  "file", "data", "status-update", "artifact-update"); parts written without
  one are read by the key they carry (`text`, `file`, `data`);
- lower-case roles ("user", "agent") and kebab-case states ("input-required");
- file parts `{"kind": "file", "file": {"bytes"|"uri", "mimeType", "name"}}`
  where 1.0 has `raw`/`url` with `mediaType` and `filename` (the seeds also
  spell them `fileWithBytes`/`fileWithUri` and `mediaType`);
- `final` on status updates (true once the task is final or interrupted);
- push configs nested as `{"taskId", "pushNotificationConfig": {...}}` with
  `authentication.schemes` (a list) where 1.0 has one `scheme`.
Bad input is InvalidParams naming the field, as for 1.0.
"""

from __future__ import annotations

from typing import Any

from a2a_grpc.core.errors import FieldViolation, InvalidParamsError

STATES = {"submitted": "TASK_STATE_SUBMITTED", "working": "TASK_STATE_WORKING",
          "input-required": "TASK_STATE_INPUT_REQUIRED", "completed": "TASK_STATE_COMPLETED",
          "canceled": "TASK_STATE_CANCELED", "failed": "TASK_STATE_FAILED",
          "rejected": "TASK_STATE_REJECTED", "auth-required": "TASK_STATE_AUTH_REQUIRED",
          "unknown": "TASK_STATE_UNSPECIFIED"}
STATE_NAMES = {v: k for k, v in STATES.items()}
SETTLED = {"input-required", "auth-required", "completed", "canceled", "failed", "rejected"}
ROLES = {"user": "ROLE_USER", "agent": "ROLE_AGENT"}
ROLE_NAMES = {v: k for k, v in ROLES.items()}
Json = dict[str, Any]


def config_id(given: str | None, task_id: str) -> str:
    """A 0.3 push config's id: the one given, else its task's. 0.3 servers name
    a config set without an id after its task, so that a `get` naming only
    the task finds it (on every 0.3 binding)."""
    return given or task_id


def invalid(where: str, why: str) -> InvalidParamsError:
    return InvalidParamsError(f"{where} {why}", violations=[FieldViolation(where, why)])


def as_object(value: Any, where: str) -> Json:
    if not isinstance(value, dict):
        raise invalid(where, "must be a JSON object")
    return value


def _copy(src: Json, dst: Json, *keys: str) -> None:
    for key in keys:
        if key in src:
            dst[key] = src[key]


# -- in: 0.3 (or a draft) -> 1.0 ProtoJSON --


def message_in(raw: Any, where: str = "message") -> Json:
    m = as_object(raw, where)
    role = m.get("role")
    out: Json = {"role": ROLES.get(role, role) if isinstance(role, str) else role}
    if isinstance(role, str) and role not in ROLES and role not in ROLE_NAMES:
        raise invalid(f"{where}.role", f"must be 'user' or 'agent', got {role!r}")
    _copy(m, out, "messageId", "contextId", "taskId", "referenceTaskIds", "metadata",
          "extensions")
    parts = m.get("parts")
    if not isinstance(parts, list):
        raise invalid(f"{where}.parts", "must be a list of parts")
    out["parts"] = [part_in(p, f"{where}.parts[{i}]") for i, p in enumerate(parts)]
    return out


def part_in(raw: Any, where: str) -> Json:
    p = as_object(raw, where)
    kind = p.get("kind", p.get("type"))  # `type`: the first draft's spelling
    if kind is None:  # no discriminator: read it by the key the part carries
        kind = next((k for k in ("text", "file", "data") if k in p), None)
    out: Json = {}
    _copy(p, out, "metadata")
    if kind == "text":
        if not isinstance(p.get("text"), str):
            raise invalid(f"{where}.text", "must be a string")
        out["text"] = p["text"]
    elif kind == "file":
        f = as_object(p.get("file"), f"{where}.file")
        # `fileWithBytes`: the lifecycle pages' spelling; `data`: the protocol README's.
        content = f.get("bytes", f.get("fileWithBytes", f.get("data")))
        uri = f.get("uri", f.get("fileWithUri"))
        if content is not None:
            out["raw"] = content
        elif uri is not None:
            out["url"] = uri
        else:
            raise invalid(f"{where}.file", "needs bytes (base64) or uri")
        media = f.get("mimeType", f.get("mediaType"))
        if media:
            out["mediaType"] = media
        if f.get("name"):
            out["filename"] = f["name"]
    elif kind == "data":
        if "data" not in p:
            raise invalid(f"{where}.data", "is required in a data part")
        out["data"] = p["data"]
    else:
        raise invalid(f"{where}.kind", f"must be text, file or data, got {kind!r}")
    return out


def configuration_in(raw: Any) -> Json:
    c = as_object(raw, "configuration")
    out: Json = {}
    _copy(c, out, "acceptedOutputModes", "historyLength")
    if c.get("blocking") is False:  # 0.3 waits unless told not to
        out["returnImmediately"] = True
    if c.get("pushNotificationConfig") is not None:
        out["taskPushNotificationConfig"] = push_config_in(
            c["pushNotificationConfig"], "configuration.pushNotificationConfig")
    return out


def push_config_in(raw: Any, where: str = "pushNotificationConfig") -> Json:
    p = as_object(raw, where)
    out: Json = {}
    _copy(p, out, "id", "url", "token")
    auth = p.get("authentication")
    if auth is not None:
        auth = as_object(auth, f"{where}.authentication")
        schemes = auth.get("schemes") or []
        if not isinstance(schemes, list) or not all(isinstance(s, str) for s in schemes):
            raise invalid(f"{where}.authentication.schemes", "must be a list of strings")
        out["authentication"] = {"scheme": schemes[0] if schemes else ""}
        _copy(auth, out["authentication"], "credentials")
    return out


def status_in(raw: Any, where: str = "status") -> Json:
    s = as_object(raw, where)
    state = s.get("state")
    if state not in STATES:
        raise invalid(f"{where}.state", f"must be a 0.3 task state, got {state!r}")
    out: Json = {"state": STATES[state]}
    if s.get("message") is not None:
        out["message"] = message_in(s["message"], f"{where}.message")
    _copy(s, out, "timestamp")
    return out


def artifact_in(raw: Any, where: str = "artifact") -> Json:
    a = as_object(raw, where)
    out: Json = {"artifactId": a.get("artifactId", ""),
                 "parts": [part_in(p, f"{where}.parts[{i}]")
                           for i, p in enumerate(a.get("parts") or [])]}
    _copy(a, out, "name", "description", "metadata", "extensions")
    return out


def task_in(raw: Any, where: str = "task") -> Json:
    t = as_object(raw, where)
    out: Json = {"id": t.get("id", ""), "contextId": t.get("contextId", ""),
                 "status": status_in(t.get("status", {}), f"{where}.status")}
    if t.get("artifacts"):
        out["artifacts"] = [artifact_in(a, f"{where}.artifacts[{i}]")
                            for i, a in enumerate(t["artifacts"])]
    if t.get("history"):
        out["history"] = [message_in(m, f"{where}.history[{i}]")
                          for i, m in enumerate(t["history"])]
    _copy(t, out, "metadata")
    return out


def event_in(raw: Any, where: str = "result") -> Json:
    """A 0.3 answer or stream event (by its `kind`) as a 1.0 StreamResponse."""
    e = as_object(raw, where)
    kind = e.get("kind")
    if kind == "task":
        return {"task": task_in(e, where)}
    if kind == "message":
        return {"message": message_in(e, where)}
    if kind not in ("status-update", "artifact-update"):
        raise invalid(f"{where}.kind", f"must be task, message, status-update or "
                      f"artifact-update, got {kind!r}")
    out: Json = {"taskId": e.get("taskId", ""), "contextId": e.get("contextId", "")}
    _copy(e, out, "metadata")
    if kind == "status-update":
        out["status"] = status_in(e.get("status", {}), f"{where}.status")
        return {"statusUpdate": out}
    out["artifact"] = artifact_in(e.get("artifact", {}), f"{where}.artifact")
    _copy(e, out, "append", "lastChunk")
    return {"artifactUpdate": out}


# -- out: 1.0 ProtoJSON -> 0.3 --


def message_out(m: Json) -> Json:
    out: Json = {"kind": "message", "role": ROLE_NAMES.get(m.get("role", ""), "agent"),
                 "messageId": m.get("messageId", ""),
                 "parts": [part_out(p) for p in m.get("parts", [])]}
    _copy(m, out, "contextId", "taskId", "referenceTaskIds", "metadata", "extensions")
    return out


def part_out(p: Json) -> Json:
    out: Json
    if "text" in p:
        out = {"kind": "text", "text": p["text"]}
    elif "raw" in p or "url" in p:
        f: Json = {"bytes": p["raw"]} if "raw" in p else {"uri": p["url"]}
        if p.get("mediaType"):
            f["mimeType"] = p["mediaType"]
        if p.get("filename"):
            f["name"] = p["filename"]
        out = {"kind": "file", "file": f}
    else:  # 0.3 data is an object: any other JSON value is wrapped
        data = p.get("data")
        out = {"kind": "data", "data": data if isinstance(data, dict) else {"value": data}}
    _copy(p, out, "metadata")
    return out


def status_out(s: Json) -> Json:
    out: Json = {"state": STATE_NAMES.get(s.get("state", ""), "unknown")}
    if "message" in s:
        out["message"] = message_out(s["message"])
    _copy(s, out, "timestamp")
    return out


def artifact_out(a: Json) -> Json:
    out: Json = {"artifactId": a.get("artifactId", ""),
                 "parts": [part_out(p) for p in a.get("parts", [])]}
    _copy(a, out, "name", "description", "metadata", "extensions")
    return out


def task_out(t: Json) -> Json:
    out: Json = {"kind": "task", "id": t.get("id", ""), "contextId": t.get("contextId", ""),
                 "status": status_out(t.get("status", {}))}
    if t.get("artifacts"):
        out["artifacts"] = [artifact_out(a) for a in t["artifacts"]]
    if "history" in t:
        out["history"] = [message_out(m) for m in t["history"]]
    _copy(t, out, "metadata")
    return out


def event_out(e: Json) -> Json:
    """A StreamResponse as the 0.3 event it carries."""
    if "task" in e:
        return task_out(e["task"])
    if "message" in e:
        return message_out(e["message"])
    if "statusUpdate" in e:
        u = e["statusUpdate"]
        status = status_out(u.get("status", {}))
        out: Json = {"kind": "status-update", "taskId": u.get("taskId", ""),
                     "contextId": u.get("contextId", ""), "status": status,
                     "final": status["state"] in SETTLED}
        _copy(u, out, "metadata")
        return out
    u = e["artifactUpdate"]
    out = {"kind": "artifact-update", "taskId": u.get("taskId", ""),
           "contextId": u.get("contextId", ""), "artifact": artifact_out(u.get("artifact", {})),
           "append": bool(u.get("append")), "lastChunk": bool(u.get("lastChunk"))}
    _copy(u, out, "metadata")
    return out


def push_config_out(c: Json) -> Json:
    inner: Json = {}
    _copy(c, inner, "id", "url", "token")
    if "authentication" in c:
        auth = c["authentication"]
        inner["authentication"] = {"schemes": [auth["scheme"]] if auth.get("scheme") else []}
        _copy(auth, inner["authentication"], "credentials")
    return {"taskId": c.get("taskId", ""), "pushNotificationConfig": inner}


def configuration_out(c: Json) -> Json:
    out: Json = {"blocking": not c.get("returnImmediately", False)}
    _copy(c, out, "acceptedOutputModes", "historyLength")
    if "taskPushNotificationConfig" in c:
        out["pushNotificationConfig"] = push_config_out(
            c["taskPushNotificationConfig"])["pushNotificationConfig"]
    return out
