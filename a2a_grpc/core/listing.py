"""ListTasks semantics (spec §3.1.4), shared by every task store.

- Order: newest status timestamp first; ties broken by task id, descending,
  so the order is total and a cursor is stable.
- Cursor pagination: the page token encodes the (timestamp, id) of the last
  task of the page; the next page starts strictly after it. A task that
  changes between pages moves in the order but is never served twice on the
  same side of the cursor.
- `nextPageToken` is always present and empty on the last page.
- Page size: 1..100, 50 when unset (the proto's comment).
- Artifacts are left out unless `includeArtifacts` is true.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

from a2a_grpc.core.errors import FieldViolation, InvalidParamsError
from a2a_grpc.core.ids import nanos_of
from a2a_grpc.core.lifecycle import history_length_of
from a2a_grpc.generated.a2a_pb2 import ListTasksRequest, Task, TaskState

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 100

SortKey = tuple[int, str]  # (status timestamp in ns, task id)


@dataclass(frozen=True, slots=True)
class TaskQuery:
    """A validated ListTasks request, ready for a store."""

    tenant: str
    owner: str
    context_id: str
    status: TaskState
    after_ns: int | None  # status timestamp >= this
    page_size: int
    cursor: SortKey | None  # serve tasks strictly after this key
    history_length: int | None
    include_artifacts: bool


def sort_key(task: Task) -> SortKey:
    return (nanos_of(task.status.timestamp), task.id)


def encode_cursor(key: SortKey) -> str:
    raw = json.dumps([key[0], key[1]], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(token: str) -> SortKey:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        ts, task_id = json.loads(raw)
        if not isinstance(ts, int) or not isinstance(task_id, str):
            raise ValueError(token)
    except (ValueError, TypeError, binascii.Error) as exc:
        raise InvalidParamsError(
            "pageToken is not a token this server issued",
            violations=[FieldViolation("pageToken", "use nextPageToken from a previous page")],
        ) from exc
    return (ts, task_id)


def query_of(request: ListTasksRequest, owner: str) -> TaskQuery:
    """Validate a ListTasks request (InvalidParamsError on bad values)."""
    size = DEFAULT_PAGE_SIZE
    if request.HasField("page_size"):
        size = request.page_size
        if not 1 <= size <= MAX_PAGE_SIZE:
            raise InvalidParamsError(
                f"pageSize must be between 1 and {MAX_PAGE_SIZE}, got {size}",
                violations=[FieldViolation("pageSize", f"must be 1..{MAX_PAGE_SIZE}")],
            )
    if request.status not in TaskState.values():
        raise InvalidParamsError(
            f"status {request.status} is not a TaskState",
            violations=[FieldViolation("status", "unknown task state")],
        )
    after = None
    if request.HasField("status_timestamp_after"):
        after = request.status_timestamp_after.ToNanoseconds()
    return TaskQuery(
        tenant=request.tenant,
        owner=owner,
        context_id=request.context_id,
        status=request.status,
        after_ns=after,
        page_size=size,
        cursor=decode_cursor(request.page_token) if request.page_token else None,
        history_length=history_length_of(request),
        include_artifacts=request.include_artifacts,
    )


def after_cursor(query: TaskQuery, key: SortKey) -> bool:
    """Does a task with `key` come after the cursor in newest-first order?"""
    return query.cursor is None or key < query.cursor
