"""The ceiling's store, and its tasks from one form to the other (by hand, for
the fields it makes).

A task made on HTTP is kept as JSON, one made on gRPC as protobuf; the first
read on the other binding converts it and keeps that form too, until the
task is written again.
"""

from __future__ import annotations

import itertools
from typing import Any

import orjson
from google.protobuf.timestamp_pb2 import Timestamp

from a2a_grpc.generated import a2a_pb2 as pb

ROLES = {"ROLE_USER": pb.ROLE_USER, "ROLE_AGENT": pb.ROLE_AGENT}
ROLE_NAMES = {v: k for k, v in ROLES.items()}


def _parts(parts: list[dict[str, Any]]) -> list[pb.Part]:
    return [pb.Part(text=p.get("text", "")) for p in parts]


def pb_of(task: dict[str, Any]) -> pb.Task:
    stamp = Timestamp()
    stamp.FromJsonString(task["status"]["timestamp"])
    return pb.Task(
        id=task["id"], context_id=task["contextId"],
        status=pb.TaskStatus(state=task["status"]["state"], timestamp=stamp),
        artifacts=[pb.Artifact(artifact_id=a["artifactId"], name=a.get("name", ""),
                               parts=_parts(a["parts"])) for a in task.get("artifacts", ())],
        history=[pb.Message(message_id=m["messageId"], context_id=m.get("contextId", ""),
                            task_id=m.get("taskId", ""), role=ROLES[m["role"]],
                            parts=_parts(m["parts"])) for m in task.get("history", ())])


def dict_of(task: pb.Task) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": task.id, "contextId": task.context_id,
        "status": {"state": pb.TaskState.Name(task.status.state),
                   "timestamp": task.status.timestamp.ToJsonString()}}
    if task.artifacts:
        out["artifacts"] = [{"artifactId": a.artifact_id, "name": a.name,
                             "parts": [{"text": p.text} for p in a.parts]}
                            for a in task.artifacts]
    if task.history:
        out["history"] = [{"messageId": m.message_id, "contextId": m.context_id,
                           "taskId": m.task_id, "role": ROLE_NAMES[m.role],
                           "parts": [{"text": p.text} for p in m.parts]} for m in task.history]
    return out


class Tasks:
    """Tasks by id, serialised: JSON or protobuf bytes, and the other form once asked for."""

    def __init__(self) -> None:
        self.json: dict[str, bytes] = {}
        self.pb: dict[str, bytes] = {}
        self.order: dict[str, None] = {}  # ids, oldest first

    def keep_json(self, task_id: str, data: bytes) -> None:
        self.json[task_id] = data
        self.pb.pop(task_id, None)
        self.order.setdefault(task_id)

    def keep_pb(self, task_id: str, data: bytes) -> None:
        self.pb[task_id] = data
        self.json.pop(task_id, None)
        self.order.setdefault(task_id)

    def as_json(self, task_id: str) -> bytes | None:
        data = self.json.get(task_id)
        if data is None and (other := self.pb.get(task_id)) is not None:
            data = self.json[task_id] = orjson.dumps(dict_of(pb.Task.FromString(other)))
        return data

    def pb_bytes(self, task_id: str) -> bytes | None:
        data = self.pb.get(task_id)
        if data is None and (other := self.json.get(task_id)) is not None:
            data = self.pb[task_id] = pb_of(orjson.loads(other)).SerializeToString()
        return data

    def as_pb(self, task_id: str) -> pb.Task | None:
        data = self.pb_bytes(task_id)
        return None if data is None else pb.Task.FromString(data)

    def newest(self, count: int) -> list[str]:
        """Ids of the last `count` tasks made, newest first."""
        return list(itertools.islice(reversed(self.order), count))

    def __len__(self) -> int:
        return len(self.order)


TASKS = Tasks()  # the ceiling's one store
VERSIONS = (None, "1.0")  # the A2A-Version values it serves


class Refused(Exception):
    """A call refused: its JSON-RPC code, HTTP status and message."""

    def __init__(self, code: int, status: int, text: str) -> None:
        super().__init__(text)
        self.code, self.status = code, status
