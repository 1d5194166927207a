"""Push notification configs as the four config operations see them: stored per
task, ids assigned when absent, listed in pages (delivery is the sender's job)."""

from __future__ import annotations

import base64

from a2a_grpc.core.errors import FieldViolation, InvalidParamsError, TaskNotFoundError
from a2a_grpc.core.ids import new_id
from a2a_grpc.generated.a2a_pb2 import (
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    TaskPushNotificationConfig,
)
from a2a_grpc.push.secrets import SecretBox
from a2a_grpc.stores import PushStore, Scope


class PushConfigs:
    def __init__(self, store: PushStore, secrets: SecretBox | None = None) -> None:
        self._store = store
        self._secrets = secrets  # seals credentials before they are stored (secrets.py)

    async def save(self, scope: Scope, task_id: str, config: TaskPushNotificationConfig,
                   dialect: str = "") -> TaskPushNotificationConfig:
        """`dialect`: the A2A dialect the config was set in; its
        notifications are sent in that dialect's shape (sender.py)."""
        saved = TaskPushNotificationConfig()
        saved.CopyFrom(config)
        saved.task_id = task_id
        saved.tenant = scope.tenant
        saved.id = saved.id or new_id()  # the official server assigns one too
        stored = saved
        if self._secrets is not None and saved.authentication.credentials:
            stored = TaskPushNotificationConfig()
            stored.CopyFrom(saved)
            stored.authentication.credentials = self._secrets.seal(
                saved.authentication.credentials)
        await self._store.save_push_config(scope, stored, dialect)
        return saved  # as the caller sent it

    async def get(self, scope: Scope, task_id: str, config_id: str) -> TaskPushNotificationConfig:
        config = await self._store.get_push_config(scope, task_id, config_id)
        if config is None:
            raise TaskNotFoundError(
                f"push notification config {config_id!r} not found for task {task_id!r}",
                metadata={"taskId": task_id, "configId": config_id},
            )
        return config

    async def page(self, scope: Scope, req: ListTaskPushNotificationConfigsRequest
                   ) -> ListTaskPushNotificationConfigsResponse:
        configs = await self._store.list_push_configs(scope, req.task_id)
        start = _offset_of(req.page_token)
        end = len(configs) if req.page_size == 0 else start + req.page_size
        token = _offset_token(end) if end < len(configs) else ""
        return ListTaskPushNotificationConfigsResponse(
            configs=configs[start:end], next_page_token=token)

    async def delete(self, scope: Scope, task_id: str, config_id: str) -> None:
        await self._store.delete_push_config(scope, task_id, config_id)


def _offset_token(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode()


def _offset_of(token: str) -> int:
    if not token:
        return 0
    try:
        kind, _, value = base64.urlsafe_b64decode(token.encode()).decode().partition(":")
        offset = int(value)
        if kind != "o" or offset < 0:
            raise ValueError(token)
    except ValueError as exc:
        raise InvalidParamsError(
            "pageToken is not a token this server issued",
            violations=[FieldViolation("pageToken", "use nextPageToken from a previous page")],
        ) from exc
    return offset
