"""The task store contract. Implementations: memory (here), SQL (later).

A store keeps each task as one serialized proto plus what ListTasks filters
and sorts on, under a `Scope` (tenant, owner): a task outside the caller's
scope is indistinguishable from a missing one (spec §13.1: never reveal the
existence of what a caller may not see). Each task carries the sequence
number of the last event applied to it, so a subscriber can line a snapshot
up with the live events that follow it.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

from generated.a2a_pb2 import Task, TaskPushNotificationConfig

from ..core.listing import TaskQuery


class Scope(NamedTuple):
    tenant: str
    owner: str


class StoredTask(NamedTuple):
    task: Task  # a fresh copy: the caller may change it freely
    seq: int


class TaskStore(Protocol):
    async def save(self, scope: Scope, task: Task, seq: int) -> None:
        """Insert or replace `task` with the sequence number of its last event."""

    async def get(self, scope: Scope, task_id: str) -> StoredTask | None:
        """The task, or None when it does not exist in `scope`."""

    async def list_tasks(self, query: TaskQuery) -> tuple[list[Task], int]:
        """One page of matching tasks, newest status first, and the total count."""

    async def save_push_config(self, scope: Scope, config: TaskPushNotificationConfig) -> None:
        """Insert or replace a config, keyed by (task_id, id)."""

    async def get_push_config(
        self, scope: Scope, task_id: str, config_id: str
    ) -> TaskPushNotificationConfig | None: ...

    async def list_push_configs(
        self, scope: Scope, task_id: str
    ) -> list[TaskPushNotificationConfig]:
        """All configs of a task, in creation order."""

    async def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> None:
        """Remove a config; removing a missing one is not an error."""
