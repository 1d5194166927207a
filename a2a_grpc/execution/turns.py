"""When a task's writers take turns, and when agents give the event loop back.

- `Turn` is a task actor's mutex: one event at a time, FIFO.
- `QUANTUM_S` and `hold_starting()`: how long an agent that emits without
  awaiting anything else may hold the loop, and the shorter window while a
  new stream waits for its first event (see the comments below); `Sink`,
  where a run's events go, is where that is applied.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from a2a_grpc.generated.a2a_pb2 import StreamResponse

if TYPE_CHECKING:
    from a2a_grpc.execution.run_state import RunState


class Turn:
    """The actor's mutex: FIFO, like asyncio.Lock, but an uncontended `enter`
    is an attribute test instead of two coroutine calls (paid on every
    event). `leave` hands the turn straight to the first waiter, so no
    newcomer can overtake those already waiting."""

    __slots__ = ("_waiters", "held")

    def __init__(self) -> None:
        self.held = False
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def enter(self) -> None:
        """Take the turn, waiting for it if someone holds it."""
        if self.held:
            await self.wait()
        else:
            self.held = True

    async def wait(self) -> None:
        """Wait until `leave` hands the turn to this caller (call when `held`)."""
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self.leave()  # handed the turn, then cancelled before taking it: pass it on
            raise  # a cancelled waiter stays queued; `leave` skips it

    def leave(self) -> None:
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self.held = False


# An agent that emits without awaiting anything else yields to the loop after its
# first event if a stream waits for it (the first event goes out at once), then
# whenever it has held the loop for QUANTUM_S: it can't hold other calls for
# longer than that, and the events in between reach a stream together (one
# write for many on SSE, instead of a loop turn and a system call each).
# A2A_GRPC_TIME_SCALE: how many times slower than natively this process runs,
# for a measurement under callgrind (some 50 times slower): the quantum is
# stretched as much, so the agents yield as often per event as they do natively
# (benchmarks/instructions_wire.py sets it; nothing else should).
QUANTUM_S = 0.00025 * float(os.environ.get("A2A_GRPC_TIME_SCALE") or 1)
# While a streaming call waits for its first event, the quantum is 0: busy agents
# yield at each event, so the loop turns a new stream still needs (its run's start,
# its first event reaching the transport) don't each wait behind every other
# agent's quantum (docs/benchmarks.md has what it changed). A call
# counts as starting until its transport asks for the second event, so after the
# first was written (see EventStream). One count per thread, so per event loop:
# every call on the loop shares it.


class _Starting(threading.local):
    count = 0


# How many calls on this thread's loop wait for their first event (read on
# every event by the runtime's sink, hence an attribute, not a function).
starting = _Starting()
_starting = starting


def hold_starting() -> Callable[[], None]:
    """Mark a call as waiting for its first event (see QUANTUM_S) until the
    returned function is called (once or more: only the first call counts)."""
    _starting.count += 1
    held = True

    def release() -> None:
        nonlocal held
        if held:
            held = False
            _starting.count -= 1
    return release


class Writer(Protocol):
    """The task's actor, as a sink sees it."""

    async def emit(self, event: StreamResponse, run: RunState | None) -> bool: ...

    async def release(self, run: RunState | None) -> None: ...

    def watched(self) -> bool: ...


class Sink:
    """Where a run's (or an outside writer's) TaskEvents go."""

    __slots__ = ("_actor", "_count", "_run", "_since")

    def __init__(self, actor: Writer, run: RunState | None) -> None:
        self._actor, self._run = actor, run
        self._count = 0
        self._since = time.perf_counter()  # when this sink last gave the loop back

    async def emit(self, event: StreamResponse) -> None:
        if self._run is not None and self._run.cancelled:
            raise asyncio.CancelledError  # a canceled run writes nothing more
        if await self._actor.emit(event, self._run):
            self._since = time.perf_counter()  # it gave the loop back while it waited
        if self._run is not None:
            self._run.emitted = True
        # An agent that never awaits anything else would otherwise run to its end
        # before any stream sends its first event, and hold every other call meanwhile.
        self._count += 1
        if (starting.count or time.perf_counter() - self._since >= QUANTUM_S
                or (self._count == 1 and self._actor.watched())):
            await self._actor.release(self._run)  # the events so far go out now
            await asyncio.sleep(0)
            self._since = time.perf_counter()

    async def hand_off(self) -> None:
        if self._run is not None:
            await self._run.hand_off()
