"""The eleven operations written once, as an A2AService whose every call goes
through one of two hooks: `unary(rpc, req, ctx)` or `stream(rpc, req, ctx)`.

- `Operations` is for a service that answers by the RPC's name (the gateway's
  upstream over gRPC): it implements the two hooks.
- `Layer` is for one that stands in front of another (`inner`): by default
  each hook hands the call on, so a layer overrides only the hooks, or the
  operations, it changes. Admission, the per-caller limits, authentication
  and observation are layers; `layers(service)` lists a chain.

The operations are plain functions that hand back the hook's awaitable, not
coroutines awaiting it: no coroutine of their own on every call; and on an
instance each one it does not override is bound straight to its hook
(`functools.partial`, `_bind_hooks`), so a call costs no Python frame of its
own either (docs/benchmarks.md, "Measured reasons"). A new RPC is one
method here; a layer that does nothing for it does not change.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, cast

from google.protobuf.empty_pb2 import Empty

from a2a_grpc.core.call import CallContext
from a2a_grpc.core.contract import A2AService, python_name
from a2a_grpc.core.methods import METHODS
from a2a_grpc.core.stream import EventStream
from a2a_grpc.generated import a2a_pb2 as pb

Call = Callable[[Any, CallContext], Awaitable[Any]]


class Operations:
    """An A2AService whose operations call `unary` or `stream` by RPC name."""

    def _bind_hooks(self) -> None:
        """Each operation the class leaves as it is here, bound on this
        instance to what `bound` gives: the same call, one frame less."""
        for rpc, method in METHODS.items():
            if getattr(type(self), method.attr) is getattr(Operations, method.attr):
                setattr(self, method.attr, self.bound(rpc, method.streaming))

    def bound(self, rpc: str, streaming: bool) -> Call:
        """What an operation calls: its hook with the RPC's name. A layer whose
        hook only hands the call to a helper may give the helper itself."""
        return partial(self.stream if streaming else self.unary, rpc)

    def unary(self, rpc: str, req: Any, ctx: CallContext) -> Awaitable[Any]:
        raise NotImplementedError

    def stream(self, rpc: str, req: Any, ctx: CallContext) -> Awaitable[EventStream]:
        raise NotImplementedError

    def send_message(self, req: pb.SendMessageRequest, ctx: CallContext,
                     ) -> Awaitable[pb.SendMessageResponse]:
        return cast(Awaitable[pb.SendMessageResponse], self.unary("SendMessage", req, ctx))

    def send_streaming_message(self, req: pb.SendMessageRequest, ctx: CallContext,
                               ) -> Awaitable[EventStream]:
        return self.stream("SendStreamingMessage", req, ctx)

    def get_task(self, req: pb.GetTaskRequest, ctx: CallContext) -> Awaitable[pb.Task]:
        return cast(Awaitable[pb.Task], self.unary("GetTask", req, ctx))

    def list_tasks(self, req: pb.ListTasksRequest, ctx: CallContext,
                   ) -> Awaitable[pb.ListTasksResponse]:
        return cast(Awaitable[pb.ListTasksResponse], self.unary("ListTasks", req, ctx))

    def cancel_task(self, req: pb.CancelTaskRequest, ctx: CallContext) -> Awaitable[pb.Task]:
        return cast(Awaitable[pb.Task], self.unary("CancelTask", req, ctx))

    def subscribe_to_task(self, req: pb.SubscribeToTaskRequest, ctx: CallContext,
                          ) -> Awaitable[EventStream]:
        return self.stream("SubscribeToTask", req, ctx)

    def create_task_push_notification_config(
            self, req: pb.TaskPushNotificationConfig, ctx: CallContext,
    ) -> Awaitable[pb.TaskPushNotificationConfig]:
        return cast(Awaitable[pb.TaskPushNotificationConfig],
                    self.unary("CreateTaskPushNotificationConfig", req, ctx))

    def get_task_push_notification_config(
            self, req: pb.GetTaskPushNotificationConfigRequest, ctx: CallContext,
    ) -> Awaitable[pb.TaskPushNotificationConfig]:
        return cast(Awaitable[pb.TaskPushNotificationConfig],
                    self.unary("GetTaskPushNotificationConfig", req, ctx))

    def list_task_push_notification_configs(
            self, req: pb.ListTaskPushNotificationConfigsRequest, ctx: CallContext,
    ) -> Awaitable[pb.ListTaskPushNotificationConfigsResponse]:
        return cast(Awaitable[pb.ListTaskPushNotificationConfigsResponse],
                    self.unary("ListTaskPushNotificationConfigs", req, ctx))

    def get_extended_agent_card(self, req: pb.GetExtendedAgentCardRequest, ctx: CallContext,
                                ) -> Awaitable[pb.AgentCard]:
        return cast(Awaitable[pb.AgentCard], self.unary("GetExtendedAgentCard", req, ctx))

    def delete_task_push_notification_config(
            self, req: pb.DeleteTaskPushNotificationConfigRequest, ctx: CallContext,
    ) -> Awaitable[Empty]:
        return cast(Awaitable[Empty], self.unary("DeleteTaskPushNotificationConfig", req, ctx))


class Layer(Operations):
    """A service in front of `inner`: each call goes on to `inner` unchanged
    unless the layer's `unary` or `stream` does something with it first.
    `next[rpc]` is `inner`'s method for the RPC (looked up once)."""

    def __init__(self, inner: A2AService) -> None:
        self.inner = inner
        self.next: dict[str, Call] = {rpc: getattr(inner, python_name(rpc)) for rpc in METHODS}
        self._bind_hooks()

    def unary(self, rpc: str, req: Any, ctx: CallContext) -> Awaitable[Any]:
        return self.next[rpc](req, ctx)

    def stream(self, rpc: str, req: Any, ctx: CallContext) -> Awaitable[EventStream]:
        return cast(Awaitable[EventStream], self.next[rpc](req, ctx))


def layers(service: A2AService) -> list[type]:
    """The classes of a chain, outermost first, down to the service at its end."""
    chain: list[type] = []
    current: Any = service
    while current is not None:
        chain.append(type(current))
        current = getattr(current, "inner", None) if isinstance(current, Layer) else None
    return chain
