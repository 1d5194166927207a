"""The A2A 1.1 draft's task generations, as an opt-in preview (a part the
handler holds). Spec: a2aproject/A2A dev-1.1 §3.2.7 (#1810).

Who sees what is decided per call, by the version it asks for:
- A call made with `A2A-Version: 1.1` (accepted only when the server's
  preview is on; `CallContext.dialect` is then "1.1") reads `generation`
  on tasks and on both update events, may long-poll GetTask with
  `currentGeneration`, and may guard a follow-up with `ifGenerationMatch`.
- Any other call gets what a 1.0 server answers, byte for byte: the fields
  are cleared from what it reads (a copy of a stream's shared event, never
  the event itself) and ignored in what it sends.
The numbers themselves are kept by the lifecycle reducer (core/lifecycle.py)
on tasks created while the preview is on.

Long poll: GetTask waits until the task's generation passes the one given, or
it is final, or the wait ends (then it answers with the task as it stands,
which the spec allows). The wait is the server's default, or shorter or
longer as the caller prefers with `Prefer: wait=SECONDS` (RFC 7240; gRPC
metadata `prefer`), never longer than the server's maximum. It waits on the
task's events on the bus, so an event written by any replica ends it.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from functools import partial

from a2a_grpc.bus import EventBus
from a2a_grpc.bus.base import END
from a2a_grpc.core import states
from a2a_grpc.core.call import PREVIEW_VERSION, CallContext
from a2a_grpc.core.generation import as_1_0, generation_of
from a2a_grpc.core.stream import EventStream
from a2a_grpc.generated.a2a_pb2 import (
    GetTaskRequest,
    SendMessageRequest,
    StreamResponse,
    Task,
)
from a2a_grpc.handler.access import Access
from a2a_grpc.stores import Scope

_PREFER_WAIT = re.compile(r"(?:^|[,;\s])wait\s*=\s*\"?(\d+(?:\.\d+)?)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class PreviewOptions:
    """`wait`: how long a long-polling GetTask waits when the caller states no
    preference; `max_wait`: the most it waits whatever the caller prefers."""

    wait: float = 30.0
    max_wait: float = 60.0

    def __post_init__(self) -> None:
        if not 0 < self.wait <= self.max_wait:
            raise ValueError("the long-poll wait must be > 0 and at most its maximum "
                             f"(got {self.wait:g} s and {self.max_wait:g} s)")


def speaks(ctx: CallContext) -> bool:
    """Was the call made in A2A 1.1 (and so admitted by the preview)?"""
    return ctx.dialect == PREVIEW_VERSION


class Generations:
    def __init__(self, access: Access, bus: EventBus, options: PreviewOptions | None) -> None:
        self._access, self._bus = access, bus
        self.options = options  # None: the preview is off

    # -- what a call sends --

    @staticmethod
    def incoming(req: SendMessageRequest | GetTaskRequest, ctx: CallContext) -> None:
        """Drop the preview's request fields from a call not made in 1.1."""
        if speaks(ctx):
            return
        if isinstance(req, GetTaskRequest):
            if req.HasField("current_generation"):
                req.ClearField("current_generation")
        elif req.configuration.HasField("if_generation_match"):
            req.configuration.ClearField("if_generation_match")

    # -- what a call reads --

    @staticmethod
    def task(task: Task, ctx: CallContext) -> Task:
        """`task` (the caller's own copy) as the call's version shows it."""
        if task.generation and not speaks(ctx):
            task.generation = 0
        return task

    @staticmethod
    def stream(stream: EventStream, ctx: CallContext) -> EventStream:
        if not speaks(ctx):
            stream.view = partial(_as_1_0, stream)
        return stream

    # -- long poll --

    async def get(self, scope: Scope, req: GetTaskRequest, ctx: CallContext) -> Task:
        """GetTask: at once, or (1.1, `currentGeneration`) once the task moves on."""
        if not req.HasField("current_generation"):  # cleared unless the call speaks 1.1
            return await self._access.task(scope, req.id)
        assert self.options is not None  # a 1.1 call is refused when the preview is off
        after, loop = req.current_generation, asyncio.get_running_loop()
        deadline = loop.time() + self._wait(ctx, self.options)
        async with self._bus.subscribe(req.id) as sub:
            # Read after subscribing: an event committed meanwhile is in both.
            task = await self._access.task(scope, req.id)
            while _waits(task, after):
                try:
                    event = await asyncio.wait_for(sub.next(), deadline - loop.time())
                except TimeoutError:
                    break
                if event is END or event.error is not None or \
                        generation_of(event.payload) > after:
                    # Stored before published: the store has it now.
                    task = await self._access.task(scope, req.id)
                    if event is END or event.error is not None:
                        break
        return task

    @staticmethod
    def _wait(ctx: CallContext, options: PreviewOptions) -> float:
        found = _PREFER_WAIT.search(ctx.metadata.get("prefer", ""))
        wanted = float(found.group(1)) if found else options.wait
        return min(wanted, options.max_wait)


def _waits(task: Task, after: int) -> bool:
    """Is there a later generation to wait for? Not for a task that counts none
    (0: created before the preview was on) or a final one."""
    return 0 < task.generation <= after and task.status.state not in states.TERMINAL


def _as_1_0(stream: EventStream, event: StreamResponse) -> StreamResponse:
    """A stream's 1.0 view, until the stream shows its task uncounted: an
    uncounted task's events never carry a generation (core/lifecycle.py), so
    from there on its events need none taken away."""
    if event.HasField("task") and not event.task.generation:
        stream.view = None
        return event
    return as_1_0(event)
