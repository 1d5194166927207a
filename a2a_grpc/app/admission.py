"""What the process as a whole takes on: a bound on the calls in progress
(overload shedding), and none at all once it drains (graceful shutdown).

`Admission` wraps the service every edge calls, outside the per-caller
limits (limits.py) and authentication, so refusing costs next to nothing:
- Past `max_inflight` calls in progress (a stream counts while it opens),
  a new call is refused at once with ResourceExhaustedError (HTTP 429 with
  Retry-After, gRPC RESOURCE_EXHAUSTED with RetryInfo, JSON-RPC -32042):
  retryable, and the client backs off and retries (client/client.py). The
  work waits nowhere, so latency and memory stay those of `max_inflight`
  calls however many more arrive.
- `drain(why)`: every new call is refused with UnavailableError (HTTP 503,
  gRPC UNAVAILABLE), which clients retry, through a load balancer on another
  replica; `idle()` waits for the calls in progress to finish (serve.py
  runs the whole shutdown).

Each operation hands back `_admitted`'s coroutine rather than awaiting it in
a coroutine of its own: one coroutine less on every call (docs/benchmarks.md).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from google.protobuf.empty_pb2 import Empty
from prometheus_client import CollectorRegistry, Counter, Gauge

from a2a_grpc.core.context import CallContext
from a2a_grpc.core.contract import A2AService
from a2a_grpc.core.errors import ResourceExhaustedError, UnavailableError
from a2a_grpc.core.stream import EventStream
from a2a_grpc.generated import a2a_pb2 as pb

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class AdmissionOptions:
    max_inflight: int = 0  # calls in progress at once in this process; 0: no bound


class Admission:
    def __init__(self, inner: A2AService, options: AdmissionOptions,
                 registry: CollectorRegistry | None = None) -> None:
        self.inner, self.limit = inner, options.max_inflight
        self.inflight = 0
        self.refusing: str | None = None  # why every new call is refused (draining)
        self._idle = asyncio.Event()
        self._idle.set()
        self.shed = Counter("a2a_shed", "Calls refused at once by the process: at capacity, or "
                            "draining", ["why"], registry=registry)
        Gauge("a2a_inflight", "Calls in progress (streams while they open)",
              registry=registry).set_function(lambda: self.inflight)

    def drain(self, why: str) -> None:
        """Refuse every new call from now on, saying `why`."""
        self.refusing = why

    async def idle(self) -> None:
        """Until no call is in progress (bound it with asyncio.timeout)."""
        await self._idle.wait()

    async def _admitted(self, call: Callable[[R, CallContext], Awaitable[T]], req: R,
                        ctx: CallContext) -> T:
        if self.refusing is not None:
            self.shed.labels("draining").inc()
            raise UnavailableError(self.refusing)
        if self.limit and self.inflight >= self.limit:
            self.shed.labels("capacity").inc()
            raise ResourceExhaustedError(
                f"this server has {self.limit} calls in progress, as many as it takes: "
                "retry shortly (or on another replica)", retry_after=1)
        self.inflight += 1
        self._idle.clear()
        try:
            return await call(req, ctx)
        finally:
            self.inflight -= 1
            if not self.inflight:
                self._idle.set()

    def send_message(
        self, req: pb.SendMessageRequest, ctx: CallContext
    ) -> Coroutine[Any, Any, pb.SendMessageResponse]:
        return self._admitted(self.inner.send_message, req, ctx)

    def send_streaming_message(
        self, req: pb.SendMessageRequest, ctx: CallContext
    ) -> Coroutine[Any, Any, EventStream]:
        return self._admitted(self.inner.send_streaming_message, req, ctx)

    def subscribe_to_task(
        self, req: pb.SubscribeToTaskRequest, ctx: CallContext
    ) -> Coroutine[Any, Any, EventStream]:
        return self._admitted(self.inner.subscribe_to_task, req, ctx)

    def get_task(self, req: pb.GetTaskRequest, ctx: CallContext) -> Coroutine[Any, Any, pb.Task]:
        return self._admitted(self.inner.get_task, req, ctx)

    def list_tasks(
        self, req: pb.ListTasksRequest, ctx: CallContext
    ) -> Coroutine[Any, Any, pb.ListTasksResponse]:
        return self._admitted(self.inner.list_tasks, req, ctx)

    def cancel_task(
        self, req: pb.CancelTaskRequest, ctx: CallContext
    ) -> Coroutine[Any, Any, pb.Task]:
        return self._admitted(self.inner.cancel_task, req, ctx)

    def create_task_push_notification_config(
        self, req: pb.TaskPushNotificationConfig, ctx: CallContext
    ) -> Coroutine[Any, Any, pb.TaskPushNotificationConfig]:
        return self._admitted(self.inner.create_task_push_notification_config, req, ctx)

    def get_task_push_notification_config(
        self, req: pb.GetTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> Coroutine[Any, Any, pb.TaskPushNotificationConfig]:
        return self._admitted(self.inner.get_task_push_notification_config, req, ctx)

    def list_task_push_notification_configs(
        self, req: pb.ListTaskPushNotificationConfigsRequest, ctx: CallContext
    ) -> Coroutine[Any, Any, pb.ListTaskPushNotificationConfigsResponse]:
        return self._admitted(self.inner.list_task_push_notification_configs, req, ctx)

    def delete_task_push_notification_config(
        self, req: pb.DeleteTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> Coroutine[Any, Any, Empty]:
        return self._admitted(self.inner.delete_task_push_notification_config, req, ctx)

    def get_extended_agent_card(
        self, req: pb.GetExtendedAgentCardRequest, ctx: CallContext
    ) -> Coroutine[Any, Any, pb.AgentCard]:
        return self._admitted(self.inner.get_extended_agent_card, req, ctx)
