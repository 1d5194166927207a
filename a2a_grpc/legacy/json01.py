"""The first draft's JSON shapes (A2A 0.1, the protocol README in the seed
documents), from 1.0 ProtoJSON: `type` on parts, no `kind`; messages with only
a role, parts and metadata; `sessionId` for the context; artifacts carrying
their `index` with `append`/`lastChunk`. States the draft did not have are
sent as its nearest: rejected as failed, auth-required as input-required.
Used by the JSON-RPC edge and by push notifications a draft client set up.
"""

from __future__ import annotations

from a2a_grpc.legacy import json03 as v03
from a2a_grpc.legacy.json03 import Json

STATE_01 = {**v03.STATE_NAMES, "TASK_STATE_REJECTED": "failed",
            "TASK_STATE_AUTH_REQUIRED": "input-required"}


def part_out(p: Json) -> Json:
    part = v03.part_out(p)
    part["type"] = part.pop("kind")
    return part


def message_out(m: Json) -> Json:
    out: Json = {"role": v03.ROLE_NAMES.get(m.get("role", ""), "agent"),
                 "parts": [part_out(p) for p in m.get("parts", [])]}
    if "metadata" in m:
        out["metadata"] = m["metadata"]
    return out


def status_out(s: Json) -> Json:
    out: Json = {"state": STATE_01.get(s.get("state", ""), "unknown")}
    if "message" in s:
        out["message"] = message_out(s["message"])
    if "timestamp" in s:
        out["timestamp"] = s["timestamp"]
    return out


def artifact_out(a: Json, index: int, append: bool = False, last: bool = False) -> Json:
    out: Json = {"parts": [part_out(p) for p in a.get("parts", [])], "index": index,
                 "append": append, "lastChunk": last}
    for key in ("name", "description", "metadata"):
        if key in a:
            out[key] = a[key]
    return out


def task_out(t: Json) -> Json:
    out: Json = {"id": t.get("id", ""), "sessionId": t.get("contextId", ""),
                 "status": status_out(t.get("status", {}))}
    if t.get("artifacts"):
        out["artifacts"] = [artifact_out(a, i) for i, a in enumerate(t["artifacts"])]
    if t.get("history"):
        out["history"] = [message_out(m) for m in t["history"]]
    if "metadata" in t:
        out["metadata"] = t["metadata"]
    return out
