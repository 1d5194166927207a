"""Liveness and readiness: `/healthz`, `/readyz`, and the gRPC health service.

- `/healthz`: the process answers (its event loop turns). Always 200.
- `/readyz`: the store answers a query and, when one is configured, the
  event bus answers a ping, each within `TIMEOUT_S`. 200 with what was
  checked, or 503 naming what is not reachable, so a load balancer sends no
  new calls to a replica that can't serve them.
- gRPC health (`grpc.health.v1`): SERVING while ready, NOT_SERVING while not;
  the same checks, run every `EVERY_S` by `Readiness.watch`.
- Once the server drains (`drain()`, on SIGTERM), it is not ready for good:
  503 `{"draining": ...}`, whatever the store and bus say.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from a2a_grpc.bus import EventBus
from a2a_grpc.stores import TaskStore

log = logging.getLogger("a2a_grpc.health")

TIMEOUT_S = 2.0
EVERY_S = 2.0


async def _answers(probe: Callable[[], Awaitable[bool]]) -> str:
    try:
        async with asyncio.timeout(TIMEOUT_S):
            return "ok" if await probe() else "unreachable"
    except TimeoutError:
        return f"no answer in {TIMEOUT_S:g} s"
    except Exception as exc:  # whatever the driver raises: not ready, and why
        return f"unreachable: {type(exc).__name__}"


class Readiness:
    def __init__(self, store: TaskStore, bus: EventBus | None = None) -> None:
        self.store, self.bus = store, bus
        self.ready = True  # as of the last check
        self.draining = False

    def drain(self) -> None:
        """Not ready from now on: the server is shutting down."""
        self.draining, self.ready = True, False

    async def check(self) -> dict[str, str]:
        """What was checked, and how it went ("ok" or why not)."""
        if self.draining:
            return {"draining": "this server is shutting down"}
        found = {"store": await _answers(self.store.ping)}
        if self.bus is not None:
            found["bus"] = await _answers(self.bus.ping)
        if self.draining:  # began while the store and bus were asked: the answer
            return {"draining": "this server is shutting down"}  # closes its connection
        ready = all(v == "ok" for v in found.values())
        if ready != self.ready:
            log.log(logging.INFO if ready else logging.WARNING, "%s: %s",
                    "ready again" if ready else "not ready", found)
        self.ready = ready
        return found

    async def probe(self) -> tuple[bool, dict[str, str]]:
        """For /readyz: a check now, and whether all was well."""
        found = await self.check()
        return self.ready, found

    async def watch(self, changed: Callable[[bool], Awaitable[None]]) -> None:
        """Check every EVERY_S, calling `changed(ready)` when readiness flips."""
        was = self.ready
        while True:
            await self.check()
            if self.ready != was:
                was = self.ready
                await changed(was)
            await asyncio.sleep(EVERY_S)
