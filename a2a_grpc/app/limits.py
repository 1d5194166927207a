"""Per-caller limits: requests per second, open streams, tasks in flight.

`LimitedService` wraps the service behind the authenticator, so it knows
who calls: a caller is its authenticated subject, or, when anonymous, its IP
address. Past a limit a call is refused with ResourceExhaustedError (HTTP
429 with Retry-After, gRPC RESOURCE_EXHAUSTED with RetryInfo, JSON-RPC
-32042) and `a2a_limit_refusals_total{limit=...}` counts it.

- rate: a token bucket per caller (`rate` per second, bursts of `burst`);
  every operation takes one token. With `shared` (replicas on Redis:
  bus/redis_limits.py) the bucket is in Redis, so the rate holds across
  replicas; while Redis is away, each process counts alone.
- streams: streams open at once per caller (SendStreamingMessage,
  SubscribeToTask); a stream counts until it ends or its client goes away.
- tasks: agent runs going at once for one caller's tasks: a message is
  refused while the caller has that many. Checked when the message arrives
  (messages arriving at the same moment may each pass). Anonymous callers
  share one count, as they share one task owner.

A fourth bound protects the server from a reader that stops reading: the
event bus keeps at most `--stream-backlog` events per stream (a2a_grpc/bus).
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry, Counter

from a2a_grpc.core.call import CallContext
from a2a_grpc.core.contract import A2AService
from a2a_grpc.core.errors import ResourceExhaustedError
from a2a_grpc.core.layer import Layer
from a2a_grpc.core.stream import EventStream, Numbered, Renderings

MAX_BUCKETS = 100_000  # callers remembered by the rate limit (the least recent go first)
STARTS_A_RUN = {"SendMessage", "SendStreamingMessage"}  # the calls the task limit counts


@dataclass(frozen=True, slots=True)
class LimitOptions:
    rate: float = 0.0  # requests per second per caller; 0: no limit
    burst: int = 0  # requests at once before the rate applies (default: 2 s worth, >= 1)
    streams: int = 0  # open streams per caller; 0: no limit
    tasks: int = 0  # agent runs going per caller; 0: no limit

    @property
    def any(self) -> bool:
        return bool(self.rate or self.streams or self.tasks)

    @property
    def bucket(self) -> float:
        """Requests a caller may make at once: `burst`, by default 2 s worth."""
        return float(self.burst or max(1, math.ceil(self.rate * 2)))


def caller(ctx: CallContext) -> str:
    """Whose calls count together: a user's, or an address's; on a server
    hosting several agents, per agent (`ctx.tenant`)."""
    who = ("user:" + ctx.user if ctx.user else
           "ip:" + (ctx.remote() if ctx.remote is not None else ""))
    return f"{ctx.tenant}/{who}" if ctx.tenant else who


class _Buckets:
    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst = rate, burst
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def take(self, key: str) -> float:
        """0 when a token was taken, else the seconds until one will be there."""
        now = time.monotonic()
        tokens, then = self._buckets.pop(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - then) * self.rate)
        wait = 0.0
        if tokens >= 1:
            tokens -= 1
        else:
            wait = (1 - tokens) / self.rate
        self._buckets[key] = (tokens, now)  # most recent last
        if len(self._buckets) > MAX_BUCKETS:
            self._buckets.popitem(last=False)
        return wait


class _Released:
    """A stream's events, releasing its slot once when it ends or is closed."""

    __slots__ = ("_inner", "_release")

    def __init__(self, inner: EventStream, release: Callable[[], None]) -> None:
        self._inner, self._release = inner, release

    async def __anext__(self) -> Numbered:
        try:
            event = await self._inner.__anext__()
        except BaseException:
            self._done()
            raise
        return self._inner.seq, event

    @property
    def renderings(self) -> Renderings | None:  # core/stream.py Sharing: the inner stream's
        return self._inner.shared()

    def _done(self) -> None:
        release, self._release = self._release, _nothing
        release()

    async def aclose(self) -> None:
        self._done()
        await self._inner.aclose()


def _nothing() -> None:
    pass


class LimitedService(Layer):
    def __init__(self, inner: A2AService, options: LimitOptions,
                 running: Callable[[str], int], registry: CollectorRegistry,
                 shared: Callable[[str], Awaitable[float | None]] | None = None) -> None:
        """`running(owner)`: how many agent runs the caller's tasks have going;
        `shared(caller)`: the rate across replicas (seconds to wait, 0 when a
        token was taken), or None when it cannot be asked."""
        super().__init__(inner)
        self.options, self._running, self._shared = options, running, shared
        self._buckets = _Buckets(options.rate, options.bucket) if options.rate else None
        self._streams: dict[str, int] = {}
        self.refusals = Counter("a2a_limit_refusals", "Calls refused by a per-caller limit",
                                ["limit"], registry=registry)

    async def _admit(self, ctx: CallContext) -> str:
        key = caller(ctx)
        if self._buckets is not None:
            wait = None if self._shared is None else await self._shared(key)
            if wait is None:
                wait = self._buckets.take(key)
            if wait:
                self.refusals.labels("rate").inc()
                raise ResourceExhaustedError(
                    f"more than {self.options.rate:g} requests per second: slow down",
                    retry_after=max(1, math.ceil(wait)))
        return key

    def _start(self, ctx: CallContext) -> None:
        limit = self.options.tasks
        if limit and self._running(ctx.user) >= limit:
            self.refusals.labels("tasks").inc()
            raise ResourceExhaustedError(f"{limit} tasks of yours are running already: "
                                         "wait for one to finish")

    async def _stream(self, key: str, opened: Callable[[], Awaitable[EventStream]]
                      ) -> EventStream:
        limit = self.options.streams
        if limit and self._streams.get(key, 0) >= limit:
            self.refusals.labels("streams").inc()
            raise ResourceExhaustedError(f"{limit} streams of yours are open already: "
                                         "close one first")
        self._streams[key] = self._streams.get(key, 0) + 1
        try:
            stream = await opened()
        except BaseException:
            self._release(key)
            raise
        if not limit:
            self._release(key)
            return stream
        released = _Released(stream, lambda: self._release(key))
        return EventStream(released, numbered=stream.numbered, ready=stream.ready,
                           announce=stream.announce, sharing=released)

    def _release(self, key: str) -> None:
        left = self._streams.get(key, 1) - 1
        if left > 0:
            self._streams[key] = left
        else:
            self._streams.pop(key, None)

    async def unary(self, rpc: str, req: Any, ctx: CallContext) -> Any:
        await self._admit(ctx)
        if rpc in STARTS_A_RUN:
            self._start(ctx)
        return await self.next[rpc](req, ctx)

    async def stream(self, rpc: str, req: Any, ctx: CallContext) -> EventStream:
        key = await self._admit(ctx)
        if rpc in STARTS_A_RUN:
            self._start(ctx)
        return await self._stream(key, lambda: self.next[rpc](req, ctx))
