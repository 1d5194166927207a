"""The in-memory store's task table, plain: what the store contract asks of
tasks and their logs, with nothing else in the way. Read this to learn the
contract (stores/base.py says it; stores/fence.py is the rule on appends);
`PackedTasks` (memory_packed.py) keeps the same in less memory.

Each task is its serialized form as of its last event and its log of
serialized events: bytes, so nothing a caller holds aliases what is stored.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from a2a_grpc.core import listing
from a2a_grpc.core.ids import nanos_of
from a2a_grpc.core.listing import TaskQuery
from a2a_grpc.generated.a2a_pb2 import StreamResponse, Task
from a2a_grpc.stores.base import Appended, Scope, StoredTask
from a2a_grpc.stores.fence import Fence, refusal


@dataclass(slots=True)
class _Record:
    task: bytes  # the task as of its last event
    seq: int  # its last event's sequence number
    ns: int  # its status's time, what listing sorts by
    state: int
    context_id: str
    log: list[tuple[int, bytes]] = field(default_factory=list)  # (seq, event)


class PlainTasks:
    def __init__(self) -> None:
        self._tasks: dict[Scope, dict[str, _Record]] = {}

    def append(self, scope: Scope, task: Task, events: Sequence[Appended]) -> None:
        """Log `events` and keep `task` (the task after them); raises
        TaskFencedError where the fence refuses (one process: epoch 0)."""
        tasks = self._tasks.setdefault(scope, {})
        old = tasks.get(task.id)
        error = refusal(task.id, events[0].seq, 0,
                        None if old is None else Fence(old.seq, old.state, 0))
        if error is not None:
            raise error
        log = old.log if old is not None else []
        log += [(e.seq, e.event.SerializeToString()) for e in events]
        tasks[task.id] = _Record(task.SerializeToString(), events[-1].seq,
                                 nanos_of(task.status.timestamp), task.status.state,
                                 task.context_id, log)

    def get(self, scope: Scope, task_id: str) -> StoredTask | None:
        record = self._tasks.get(scope, {}).get(task_id)
        return None if record is None else StoredTask(Task.FromString(record.task), record.seq)

    def events(self, scope: Scope, task_id: str, after: int,
               upto: int) -> list[tuple[int, StreamResponse]]:
        record = self._tasks.get(scope, {}).get(task_id)
        log = record.log if record is not None else []
        return [(seq, StreamResponse.FromString(body)) for seq, body in log
                if after < seq <= upto]

    def list(self, query: TaskQuery) -> tuple[list[Task], int]:
        """The query's page, newest first (ties by id), and how many match."""
        records = self._tasks.get(Scope(query.tenant, query.owner), {})
        hits = sorted(((r.ns, task_id), r) for task_id, r in records.items()
                      if (not query.status or r.state == query.status)
                      and (query.after_ns is None or r.ns >= query.after_ns)
                      and (not query.context_id or r.context_id == query.context_id))
        hits.reverse()
        page = [r for key, r in hits if listing.after_cursor(query, key)][: query.page_size]
        return [Task.FromString(r.task) for r in page], len(hits)

    def heads(self) -> Iterator[tuple[Scope, str, int, int]]:
        """(scope, task id, status time, state) of every task."""
        for scope, records in self._tasks.items():
            for task_id, r in records.items():
                yield scope, task_id, r.ns, r.state

    def has(self, scope: Scope, task_id: str) -> bool:
        return task_id in self._tasks.get(scope, {})

    def taken(self, tenant: str, task_id: str) -> bool:
        """Does any owner in `tenant` have a task with this id?"""
        return any(task_id in tasks for scope, tasks in self._tasks.items()
                   if scope.tenant == tenant)

    def delete(self, scope: Scope, task_id: str) -> None:
        self._tasks.get(scope, {}).pop(task_id, None)
