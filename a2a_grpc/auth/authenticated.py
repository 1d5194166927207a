"""The authenticator stage: an A2AService that admits each call through the
Gate, then hands it, with its identity, to the service behind it. The gRPC
services (1.0 and 0.3) and the bridge (JSON-RPC, REST, 0.3 REST) all serve
this one object, so no binding can skip the check."""

from __future__ import annotations

from google.protobuf.empty_pb2 import Empty

from a2a_grpc.auth.gate import Gate
from a2a_grpc.core.context import CallContext
from a2a_grpc.core.contract import A2AService
from a2a_grpc.core.stream import EventStream
from a2a_grpc.generated import a2a_pb2 as pb


class AuthenticatedService:
    def __init__(self, inner: A2AService, gate: Gate) -> None:
        self.inner, self.gate = inner, gate

    async def send_message(self, req: pb.SendMessageRequest, ctx: CallContext
                           ) -> pb.SendMessageResponse:
        return await self.inner.send_message(req, await self.gate.admit(ctx))

    async def send_streaming_message(self, req: pb.SendMessageRequest, ctx: CallContext
                                     ) -> EventStream:
        return await self.inner.send_streaming_message(req, await self.gate.admit(ctx))

    async def get_task(self, req: pb.GetTaskRequest, ctx: CallContext) -> pb.Task:
        return await self.inner.get_task(req, await self.gate.admit(ctx))

    async def list_tasks(self, req: pb.ListTasksRequest, ctx: CallContext
                         ) -> pb.ListTasksResponse:
        return await self.inner.list_tasks(req, await self.gate.admit(ctx))

    async def cancel_task(self, req: pb.CancelTaskRequest, ctx: CallContext) -> pb.Task:
        return await self.inner.cancel_task(req, await self.gate.admit(ctx))

    async def subscribe_to_task(self, req: pb.SubscribeToTaskRequest, ctx: CallContext
                                ) -> EventStream:
        return await self.inner.subscribe_to_task(req, await self.gate.admit(ctx))

    async def create_task_push_notification_config(
        self, req: pb.TaskPushNotificationConfig, ctx: CallContext
    ) -> pb.TaskPushNotificationConfig:
        return await self.inner.create_task_push_notification_config(
            req, await self.gate.admit(ctx))

    async def get_task_push_notification_config(
        self, req: pb.GetTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> pb.TaskPushNotificationConfig:
        return await self.inner.get_task_push_notification_config(
            req, await self.gate.admit(ctx))

    async def list_task_push_notification_configs(
        self, req: pb.ListTaskPushNotificationConfigsRequest, ctx: CallContext
    ) -> pb.ListTaskPushNotificationConfigsResponse:
        return await self.inner.list_task_push_notification_configs(
            req, await self.gate.admit(ctx))

    async def get_extended_agent_card(self, req: pb.GetExtendedAgentCardRequest,
                                      ctx: CallContext) -> pb.AgentCard:
        return await self.inner.get_extended_agent_card(req, await self.gate.admit(ctx))

    async def delete_task_push_notification_config(
        self, req: pb.DeleteTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> Empty:
        return await self.inner.delete_task_push_notification_config(
            req, await self.gate.admit(ctx))
