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

Both hooks (core/layer.py) hand back `_admitted`'s coroutine rather than
awaiting it in a coroutine of their own: one coroutine less on every call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from prometheus_client import CollectorRegistry, Counter, Gauge

from a2a_grpc.core.call import CallContext
from a2a_grpc.core.contract import A2AService
from a2a_grpc.core.errors import ResourceExhaustedError, UnavailableError
from a2a_grpc.core.layer import Call, Layer
from a2a_grpc.core.stream import EventStream

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class AdmissionOptions:
    max_inflight: int = 0  # calls in progress at once in this process; 0: no bound


class Admission(Layer):
    def __init__(self, inner: A2AService, options: AdmissionOptions,
                 registry: CollectorRegistry | None = None) -> None:
        super().__init__(inner)
        self.limit = options.max_inflight
        self.inflight = 0
        self.refusing: str | None = None  # why every new call is refused (draining)
        # Made by `idle()` only: a call in progress costs no event to set and clear.
        self._idle: asyncio.Future[None] | None = None
        self.shed = Counter("a2a_shed", "Calls refused at once by the process: at capacity, or "
                            "draining", ["why"], registry=registry)
        Gauge("a2a_inflight", "Calls in progress (streams while they open)",
              registry=registry).set_function(lambda: self.inflight)

    def drain(self, why: str) -> None:
        """Refuse every new call from now on, saying `why`."""
        self.refusing = why

    async def idle(self) -> None:
        """Until no call is in progress (bound it with asyncio.timeout)."""
        if self.inflight:
            if self._idle is None or self._idle.done():
                self._idle = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._idle)

    def unary(self, rpc: str, req: Any, ctx: CallContext) -> Awaitable[Any]:
        return self._admitted(self.next[rpc], req, ctx)

    def stream(self, rpc: str, req: Any, ctx: CallContext) -> Awaitable[EventStream]:
        return self._admitted(self.next[rpc], req, ctx)

    def bound(self, rpc: str, streaming: bool) -> Call:
        return partial(self._admitted, self.next[rpc])  # what both hooks do

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
        try:
            return await call(req, ctx)
        finally:
            self.inflight -= 1
            if not self.inflight and self._idle is not None and not self._idle.done():
                self._idle.set_result(None)
