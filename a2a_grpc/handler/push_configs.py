"""The four push notification config operations (spec §3.5.x), a part the
handler holds: checks, then PushConfigs (delivery is the push sender's job).

`authentication.credentials` is write-only: Get and List answer without it
(the scheme stays, so a caller sees how deliveries authenticate), on every
binding and dialect, since all of them come here. The stored config keeps
it for delivery. This is A2A's fix for leaked webhook secrets (issue #1681,
pull request #1750: redaction on Get/List a MUST); Create still answers what
its caller just sent.
"""

from __future__ import annotations

from google.protobuf.empty_pb2 import Empty

from a2a_grpc.core.call import CallContext
from a2a_grpc.core.validate import require, validate
from a2a_grpc.generated.a2a_pb2 import (
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    TaskPushNotificationConfig,
)
from a2a_grpc.handler.access import Access
from a2a_grpc.push.configs import PushConfigs
from a2a_grpc.push.policy import PushPolicy
from a2a_grpc.stores import Scope

PushRequest = (
    TaskPushNotificationConfig
    | GetTaskPushNotificationConfigRequest
    | ListTaskPushNotificationConfigsRequest
    | DeleteTaskPushNotificationConfigRequest
)


class PushConfigCalls:
    def __init__(self, access: Access, configs: PushConfigs, policy: PushPolicy) -> None:
        self._access, self._configs, self.push_policy = access, configs, policy

    async def _push_task(self, req: PushRequest, task_id: str, ctx: CallContext) -> Scope:
        """Common checks of the four config operations; returns the task's scope."""
        access = self._access
        access.preflight(ctx)
        access.require_push(ctx)
        validate(req)
        require(bool(task_id), "taskId", "is required")
        scope = access.scope(req.tenant, ctx)
        await access.task(scope, task_id)  # TaskNotFound for a task the caller can't see
        return scope

    async def create_task_push_notification_config(
        self, req: TaskPushNotificationConfig, ctx: CallContext
    ) -> TaskPushNotificationConfig:
        scope = await self._push_task(req, req.task_id, ctx)
        self.push_policy.check_at_creation(req.url)
        return await self._configs.save(scope, req.task_id, req, ctx.dialect)

    async def get_task_push_notification_config(
        self, req: GetTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> TaskPushNotificationConfig:
        scope = await self._push_task(req, req.task_id, ctx)
        return redacted(await self._configs.get(scope, req.task_id, req.id))

    async def list_task_push_notification_configs(
        self, req: ListTaskPushNotificationConfigsRequest, ctx: CallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        require(req.page_size >= 0, "pageSize", "must be >= 0")
        scope = await self._push_task(req, req.task_id, ctx)
        listed = await self._configs.page(scope, req)
        for config in listed.configs:  # copies: the store's are untouched
            if config.HasField("authentication"):
                config.authentication.ClearField("credentials")
        return listed

    async def delete_task_push_notification_config(
        self, req: DeleteTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> Empty:
        scope = await self._push_task(req, req.task_id, ctx)
        await self._configs.delete(scope, req.task_id, req.id)
        return Empty()


def redacted(config: TaskPushNotificationConfig) -> TaskPushNotificationConfig:
    """The config as readers see it: without its credentials."""
    if config.authentication.credentials:
        shown = TaskPushNotificationConfig()
        shown.CopyFrom(config)
        shown.authentication.ClearField("credentials")
        return shown
    return config
