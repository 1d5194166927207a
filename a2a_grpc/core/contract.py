"""The A2A service as the bridge sees it: the eleven operations, shaped like
the gRPC service (same request and response messages, snake_case names).

`RequestHandler` implements it in process; `UpstreamService` implements it
over a gRPC channel to any A2A server (gateway mode). The bridge is written
against this Protocol only, so both go through the same code path.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable
from typing import Protocol

from google.protobuf.empty_pb2 import Empty

from a2a_grpc.core.call import CallContext
from a2a_grpc.core.stream import EventStream
from a2a_grpc.generated.a2a_pb2 import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    SendMessageRequest,
    SendMessageResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)


def python_name(rpc: str) -> str:
    """`SendMessage` -> `send_message`: the method implementing an RPC."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", rpc).lower()


class A2AService(Protocol):
    """Each operation returns an awaitable of its answer: an `async def`
    implements it, and so does a function handing back another's awaitable
    (core/layer.py)."""

    def send_message(
        self, req: SendMessageRequest, ctx: CallContext) -> Awaitable[SendMessageResponse]: ...

    def send_streaming_message(
        self, req: SendMessageRequest, ctx: CallContext) -> Awaitable[EventStream]: ...

    def get_task(self, req: GetTaskRequest, ctx: CallContext) -> Awaitable[Task]: ...

    def list_tasks(
        self, req: ListTasksRequest, ctx: CallContext) -> Awaitable[ListTasksResponse]: ...

    def cancel_task(self, req: CancelTaskRequest, ctx: CallContext) -> Awaitable[Task]: ...

    def subscribe_to_task(
        self, req: SubscribeToTaskRequest, ctx: CallContext) -> Awaitable[EventStream]: ...

    def create_task_push_notification_config(
        self, req: TaskPushNotificationConfig, ctx: CallContext
    ) -> Awaitable[TaskPushNotificationConfig]: ...

    def get_task_push_notification_config(
        self, req: GetTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> Awaitable[TaskPushNotificationConfig]: ...

    def list_task_push_notification_configs(
        self, req: ListTaskPushNotificationConfigsRequest, ctx: CallContext
    ) -> Awaitable[ListTaskPushNotificationConfigsResponse]: ...

    def get_extended_agent_card(
        self, req: GetExtendedAgentCardRequest, ctx: CallContext) -> Awaitable[AgentCard]: ...

    def delete_task_push_notification_config(
        self, req: DeleteTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> Awaitable[Empty]: ...
