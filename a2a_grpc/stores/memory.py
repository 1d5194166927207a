"""In-memory task store: for tests and throwaway demos.

Tasks are kept as serialized bytes, so nothing a caller holds can alias what
is stored. Listing sorts the scope's tasks on each call: fine for thousands
of tasks; the SQL stores serve large volumes from an index.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from generated.a2a_pb2 import Task, TaskPushNotificationConfig

from ..core import listing
from ..core.listing import SortKey, TaskQuery
from .base import Scope, StoredTask


@dataclass(slots=True)
class _Row:
    blob: bytes
    seq: int
    key: SortKey
    context_id: str
    state: int


@dataclass(slots=True)
class MemoryTaskStore:
    _tasks: dict[Scope, dict[str, _Row]] = field(default_factory=dict)
    _push: dict[tuple[Scope, str], dict[str, bytes]] = field(default_factory=dict)

    async def save(self, scope: Scope, task: Task, seq: int) -> None:
        row = _Row(task.SerializeToString(), seq, listing.sort_key(task), task.context_id,
                   task.status.state)
        self._tasks.setdefault(scope, {})[task.id] = row

    async def get(self, scope: Scope, task_id: str) -> StoredTask | None:
        row = self._tasks.get(scope, {}).get(task_id)
        if row is None:
            return None
        return StoredTask(Task.FromString(row.blob), row.seq)

    async def list_tasks(self, query: TaskQuery) -> tuple[list[Task], int]:
        rows = self._tasks.get(Scope(query.tenant, query.owner), {}).values()
        hits = [r for r in rows if _matches(query, r)]
        hits.sort(key=lambda r: r.key, reverse=True)
        after = [r for r in hits if listing.after_cursor(query, r.key)]
        return [Task.FromString(r.blob) for r in after[: query.page_size]], len(hits)

    async def save_push_config(self, scope: Scope, config: TaskPushNotificationConfig) -> None:
        self._push.setdefault((scope, config.task_id), {})[config.id] = config.SerializeToString()

    async def get_push_config(
        self, scope: Scope, task_id: str, config_id: str
    ) -> TaskPushNotificationConfig | None:
        blob = self._push.get((scope, task_id), {}).get(config_id)
        return None if blob is None else TaskPushNotificationConfig.FromString(blob)

    async def list_push_configs(
        self, scope: Scope, task_id: str
    ) -> list[TaskPushNotificationConfig]:
        configs = self._push.get((scope, task_id), {}).values()
        return [TaskPushNotificationConfig.FromString(b) for b in configs]

    async def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> None:
        self._push.get((scope, task_id), {}).pop(config_id, None)


def _matches(query: TaskQuery, row: _Row) -> bool:
    if query.context_id and row.context_id != query.context_id:
        return False
    if query.status and row.state != query.status:
        return False
    return query.after_ns is None or row.key[0] >= query.after_ns
