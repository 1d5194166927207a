"""A2A 0.3's ten RPCs over any 1.0 A2AService: each request translated into
the 1.0 one (proto03), served by the one handler, and its answer translated
back. Used by 0.3's gRPC service (servicer03) and its HTTP+JSON binding
(bridge/legacy/rest03.py), so both are the same code path.

Streams are the 1.0 EventStream, unchanged: the caller renders each event
with `proto03.event_out` as it goes out.
"""

from __future__ import annotations

from collections.abc import Callable

from google.protobuf.empty_pb2 import Empty

from a2a_grpc.core.call import CallContext
from a2a_grpc.core.contract import A2AService
from a2a_grpc.core.errors import ExtendedAgentCardNotConfiguredError, UnsupportedOperationError
from a2a_grpc.core.stream import EventStream
from a2a_grpc.generated import a2a_pb2 as v1
from a2a_grpc.generated import a2a_v03_pb2 as v03
from a2a_grpc.legacy import proto03
from a2a_grpc.legacy.versions import as_dialect

DIALECT = "0.3"


class V03Service:
    def __init__(self, service: A2AService, card: Callable[[], v1.AgentCard],
                 card_out: Callable[[v1.AgentCard], v03.AgentCard]) -> None:
        """`card`: the public card as it stands (it names the real ports once bound);
        `card_out`: a card in 0.3's shape (cards/card03.py, given by the edge:
        cards/ sits above these translations)."""
        self.card_out = card_out
        self.service = service
        self.card = card

    @staticmethod
    def _ctx(ctx: CallContext) -> CallContext:
        return as_dialect(ctx, DIALECT)

    async def send_message(self, req: v03.SendMessageRequest, ctx: CallContext
                           ) -> v03.SendMessageResponse:
        sent = await self.service.send_message(proto03.send_in(req), self._ctx(ctx))
        return proto03.sent_out(sent)

    async def send_streaming_message(self, req: v03.SendMessageRequest, ctx: CallContext
                                     ) -> EventStream:
        return await self.service.send_streaming_message(proto03.send_in(req), self._ctx(ctx))

    async def get_task(self, req: v03.GetTaskRequest, ctx: CallContext) -> v03.Task:
        get = v1.GetTaskRequest(id=proto03.task_id_of(req.name))
        if req.history_length:  # proto3 can't tell 0 from unset: 0.3 servers read it as unset
            get.history_length = req.history_length
        return proto03.task_out(await self.service.get_task(get, self._ctx(ctx)))

    async def cancel_task(self, req: v03.CancelTaskRequest, ctx: CallContext) -> v03.Task:
        cancel = v1.CancelTaskRequest(id=proto03.task_id_of(req.name))
        return proto03.task_out(await self.service.cancel_task(cancel, self._ctx(ctx)))

    async def task_subscription(self, req: v03.TaskSubscriptionRequest, ctx: CallContext
                                ) -> EventStream:
        subscribe = v1.SubscribeToTaskRequest(id=proto03.task_id_of(req.name))
        return await self.service.subscribe_to_task(subscribe, self._ctx(ctx))

    async def create_task_push_notification_config(
        self, req: v03.CreateTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> v03.TaskPushNotificationConfig:
        task_id = proto03.task_id_of(req.parent, "parent")
        config = proto03.push_config_in(req.config.push_notification_config, task_id,
                                        req.config_id)
        made = await self.service.create_task_push_notification_config(config, self._ctx(ctx))
        return proto03.push_config_out(made)

    async def get_task_push_notification_config(
        self, req: v03.GetTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> v03.TaskPushNotificationConfig:
        task_id, config_id = proto03.config_name_of(req.name)
        got = await self.service.get_task_push_notification_config(
            v1.GetTaskPushNotificationConfigRequest(task_id=task_id, id=config_id),
            self._ctx(ctx))
        return proto03.push_config_out(got)

    async def list_task_push_notification_config(
        self, req: v03.ListTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> v03.ListTaskPushNotificationConfigResponse:
        listed = await self.service.list_task_push_notification_configs(
            v1.ListTaskPushNotificationConfigsRequest(
                task_id=proto03.task_id_of(req.parent, "parent"), page_size=req.page_size,
                page_token=req.page_token), self._ctx(ctx))
        out = v03.ListTaskPushNotificationConfigResponse(next_page_token=listed.next_page_token)
        out.configs.extend(proto03.push_config_out(c) for c in listed.configs)
        return out

    async def delete_task_push_notification_config(
        self, req: v03.DeleteTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> Empty:
        task_id, config_id = proto03.config_name_of(req.name)
        return await self.service.delete_task_push_notification_config(
            v1.DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=config_id),
            self._ctx(ctx))

    async def get_agent_card(self, req: v03.GetAgentCardRequest, ctx: CallContext
                             ) -> v03.AgentCard:
        return self.card_out(await self.agent_card(ctx))

    async def agent_card(self, ctx: CallContext) -> v1.AgentCard:
        """0.3's one card call: the extended card where the agent has one, else
        the public card (what 0.3 servers answer)."""
        try:
            return await self.service.get_extended_agent_card(
                v1.GetExtendedAgentCardRequest(), self._ctx(ctx))
        except (UnsupportedOperationError, ExtendedAgentCardNotConfiguredError):
            return self.card()
