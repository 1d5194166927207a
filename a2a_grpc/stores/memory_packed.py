"""The in-memory store's task table, packed (memory_rows.py): what
`PlainTasks` keeps, in 0.45x its memory a task, for 6% more instructions a
send and 3% more a streamed event (docs/benchmarks.md, "Measured reasons").
`make bench` compares the memory store's growth per task with the official
SDK's in-memory store: packed, 0.46x the SDK's; plain, about the same."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from a2a_grpc.core import listing
from a2a_grpc.core.ids import nanos_of
from a2a_grpc.core.listing import SortKey, TaskQuery
from a2a_grpc.generated.a2a_pb2 import StreamResponse, Task
from a2a_grpc.stores.base import Appended, Scope, StoredTask
from a2a_grpc.stores.fence import fenced
from a2a_grpc.stores.memory_rows import FRAME, TERMINAL, Live, View, head, packed_task


class PackedTasks:
    def __init__(self) -> None:
        self._tasks: dict[Scope, dict[str, Live | bytes]] = {}

    def append(self, scope: Scope, task: Task, events: Sequence[Appended]) -> None:
        tasks = self._tasks.get(scope)
        if tasks is None:
            tasks = self._tasks[scope] = {}
        task_id, status = task.id, task.status
        old = tasks.get(task_id)
        first = events[0].seq
        if first > 1 or old is not None:  # one process: no takeover, so no epoch to check
            fenced(task_id, first, None if old is None else head(old))
        frames = bytearray()
        derived = True
        for appended in events:
            body = appended.event.SerializeToString()
            frames += FRAME.pack(appended.seq, len(body))
            frames += body
            derived = derived and appended.derived
        last = events[-1].seq
        state = status.state
        if derived and isinstance(old, Live) and state not in TERMINAL:
            # A streamed task grows with every chunk: log the events alone, and
            # fold them into the task when the task is read (or turns final).
            old.log += frames
            old.seq, old.status_ns, old.state = last, nanos_of(status.timestamp), state
        else:
            assert not isinstance(old, bytes)  # final: fenced above
            row = Live(task.SerializeToString(), last, nanos_of(status.timestamp),
                       task.context_id, state, old.log if old is not None else bytearray())
            row.log += frames
            row.folded = len(row.log)
            # An existing key keeps its string object; a new task's id string is
            # shared by the store's message index.
            tasks[task_id] = row.packed(task_id) if state in TERMINAL else row

    def get(self, scope: Scope, task_id: str) -> StoredTask | None:
        row = self._tasks.get(scope, {}).get(task_id)
        if row is None:
            return None
        if isinstance(row, Live):
            return StoredTask(Task.FromString(row.current()), row.seq)
        return packed_task(row, task_id)

    def events(self, scope: Scope, task_id: str, after: int,
               upto: int) -> list[tuple[int, StreamResponse]]:
        row = self._tasks.get(scope, {}).get(task_id)
        if row is None:
            return []
        return [(s, StreamResponse.FromString(b)) for s, b in View(row).events(task_id)
                if after < s <= upto]

    def list(self, query: TaskQuery) -> tuple[list[Task], int]:
        rows = self._tasks.get(Scope(query.tenant, query.owner), {})
        hits: list[tuple[SortKey, View]] = []
        for task_id, row in rows.items():
            ns, _, state = head(row)
            if ((query.status and state != query.status)
                    or (query.after_ns is not None and ns < query.after_ns)):
                continue
            view = View(row)
            if query.context_id and view.context_id != query.context_id:
                continue
            hits.append(((ns, task_id), view))
        hits.sort(key=lambda hit: hit[0], reverse=True)
        page = [(key, view) for key, view in hits if listing.after_cursor(query, key)]
        return [view.task(key[1]) for key, view in page[: query.page_size]], len(hits)

    def heads(self) -> Iterator[tuple[Scope, str, int, int]]:
        for scope, rows in self._tasks.items():
            for task_id, row in rows.items():
                ns, _, state = head(row)
                yield scope, task_id, ns, state

    def has(self, scope: Scope, task_id: str) -> bool:
        return task_id in self._tasks.get(scope, {})

    def taken(self, tenant: str, task_id: str) -> bool:
        """Does any owner in `tenant` have a task with this id?"""
        return any(task_id in tasks for scope, tasks in self._tasks.items()
                   if scope.tenant == tenant)

    def delete(self, scope: Scope, task_id: str) -> None:
        self._tasks.get(scope, {}).pop(task_id, None)
